#include "tokenizers/hf_tokenizer.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/file_input.h"
#include "semroute/error.h"
#include "tokenizers/added_vocabulary.h"
#include "tokenizers/decoders.h"
#include "tokenizers/models.h"
#include "tokenizers/normalizers.h"
#include "tokenizers/post_processors.h"
#include "tokenizers/pre_tokenizers.h"

namespace semroute {
namespace {

using nlohmann::json;

class HfTokenizer final : public Tokenizer {
 public:
  explicit HfTokenizer(const json& spec)
      : added_(spec.value("added_tokens", json::array())),
        normalizer_(make_normalizer(spec.value("normalizer", json()))),
        pre_tokenizer_(make_pre_tokenizer(spec.value("pre_tokenizer", json()))),
        model_(make_tokenizer_model(spec.at("model"))),
        decoder_(make_decoder(spec.value("decoder", json()))) {
    for (const auto& token : added_.tokens()) model_->register_token(token.id, token.content);
    post_processor_ = make_post_processor(spec.value("post_processor", json()));
    if (post_processor_)
      for (const int32_t id : post_processor_->special_ids())
        if (model_->id_to_token(id).empty())
          throw LoadError("post_processor adds token id " + std::to_string(id) + ", which is not in the vocabulary");
    choose_padding(spec.value("padding", json()));
  }

  std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const override {
    std::vector<std::string> tokens;
    tokens.reserve(ids.size());
    for (int32_t id : ids) {
      if (skip_special_tokens && added_.is_special(id)) continue;
      const std::string& token = model_->id_to_token(id);
      if (token.empty()) throw InvalidInput("token id " + std::to_string(id) + " is not in the vocabulary");
      tokens.push_back(token);
    }
    if (!decoder_) {
      std::string joined;
      for (const auto& t : tokens) joined += (joined.empty() ? "" : " ") + t;
      return joined;
    }
    decoder_->decode(tokens);
    std::string out;
    for (const auto& t : tokens) out += t;
    return out;
  }

  std::optional<int32_t> token_to_id(std::string_view token) const override { return model_->token_to_id(token); }
  std::string id_to_token(int32_t id) const override { return model_->id_to_token(id); }
  size_t vocab_size() const override { return model_->vocab_size(); }

 protected:
  Encoding encode_text(std::string_view text) const override {
    Encoding out;
    for (const TextSegment& raw : added_.split(text, false)) {
      if (raw.added_id >= 0) {
        push_added(out, raw.added_id, Span{static_cast<uint32_t>(raw.begin), static_cast<uint32_t>(raw.end)});
        continue;
      }
      AlignedText normalized = AlignedText::original(text.substr(raw.begin, raw.end - raw.begin), raw.begin);
      if (normalizer_) normalizer_->normalize(normalized);
      for (const TextSegment& seg : added_.split(normalized.text(), true)) {
        if (seg.added_id >= 0) {
          push_added(out, seg.added_id, normalized.original_span(seg.begin, seg.end));
        } else {
          encode_words(normalized.slice(seg.begin, seg.end), out);
        }
      }
    }
    return out;
  }

 private:
  void push_added(Encoding& out, int32_t id, Span span) const {
    out.push(id, model_->id_to_token(id), span, 0, 0, added_.is_special(id));
  }

  void encode_words(AlignedText text, Encoding& out) const {
    std::vector<AlignedText> words;
    words.push_back(std::move(text));
    if (pre_tokenizer_) pre_tokenizer_->split(words);
    std::vector<ModelToken> tokens;
    for (const auto& word : words) {
      tokens.clear();
      model_->tokenize(word.text(), tokens);
      for (const auto& t : tokens)
        out.push(t.id, model_->id_to_token(t.id), word.original_span(t.begin, t.end), 0, 0, false);
    }
  }

  void choose_padding(const json& padding) {
    if (padding.is_object()) {
      pad_id_ = padding.value("pad_id", 0);
      pad_token_ = padding.value("pad_token", std::string());
      return;
    }
    for (const char* name : {"[PAD]", "<pad>", "<|pad|>", "<|padding|>", "<|endoftext|>"}) {
      if (const auto id = model_->token_to_id(name)) {
        pad_id_ = *id;
        pad_token_ = name;
        return;
      }
    }
  }

  AddedVocabulary added_;
  std::unique_ptr<Normalizer> normalizer_;
  std::unique_ptr<PreTokenizer> pre_tokenizer_;
  std::unique_ptr<TokenizerModel> model_;
  std::unique_ptr<Decoder> decoder_;
};

}  // namespace

std::shared_ptr<const Tokenizer> load_hf_tokenizer(const std::filesystem::path& tokenizer_json,
                                                   const std::vector<std::string>& dropped) {
  json parsed = read_json_file(tokenizer_json, kMaxTokenizerFileBytes);
  try {
    if (!dropped.empty() && parsed.contains("added_tokens") && parsed["added_tokens"].is_array()) {
      json kept = json::array();
      for (const json& token : parsed["added_tokens"])
        if (std::find(dropped.begin(), dropped.end(), token.value("content", "")) == dropped.end()) kept.push_back(token);
      parsed["added_tokens"] = std::move(kept);
    }
    return std::make_shared<HfTokenizer>(std::move(parsed));
  } catch (const json::exception& e) {
    throw LoadError(tokenizer_json.string() + ": malformed tokenizer.json (" + e.what() + ")");
  } catch (const LoadError& e) {
    throw LoadError(tokenizer_json.string() + ": " + e.what(), e.code());
  } catch (const Unsupported& e) {
    throw Unsupported(tokenizer_json.string() + ": " + e.what());
  }
}

}  // namespace semroute
