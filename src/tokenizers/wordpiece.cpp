// WordPiece (BERT): greedy longest-match-first over the word, continuation
// pieces carrying the `##` prefix; a word with an unmatchable remainder, or
// longer than max_input_chars_per_word characters, becomes the unk token.
#include <algorithm>

#include "semroute/error.h"
#include "tokenizers/models.h"
#include "tokenizers/unicode.h"

namespace semroute {
namespace {

using nlohmann::json;

class WordPieceModel final : public TokenizerModel {
 public:
  explicit WordPieceModel(const json& spec) {
    load_vocab(spec.at("vocab"));
    prefix_ = spec.value("continuing_subword_prefix", std::string("##"));
    if (prefix_.size() > 64) throw LoadError("tokenizer.json: WordPiece continuing_subword_prefix is longer than 64 bytes");
    const json max_chars = spec.value("max_input_chars_per_word", json(100));
    if (!max_chars.is_number_unsigned() || max_chars.get<uint64_t>() == 0 || max_chars.get<uint64_t>() > kMaxWordChars)
      throw LoadError("tokenizer.json: WordPiece max_input_chars_per_word must be an integer in [1, " +
                      std::to_string(kMaxWordChars) + "], got " + max_chars.dump());
    max_chars_ = max_chars.get<size_t>();
    const std::string unk = spec.value("unk_token", std::string("[UNK]"));
    const auto id = token_to_id(unk);
    if (!id) throw LoadError("tokenizer.json: WordPiece unk_token '" + unk + "' is not in the vocabulary");
    unk_id_ = *id;
  }

  void tokenize(std::string_view word, std::vector<ModelToken>& out) const override {
    if (word.empty()) return;
    const auto whole = [&] { out.push_back({unk_id_, 0, static_cast<uint32_t>(word.size())}); };
    size_t chars = 0;
    for (size_t i = 0; i < word.size(); ++chars) {
      size_t len;
      unicode::decode(word, i, &len);
      i += len;
    }
    if (chars > max_chars_) return whole();

    const size_t first = out.size();
    std::string candidate;
    for (size_t start = 0; start < word.size();) {
      // No piece is longer than the longest vocabulary entry: start there
      // (on a character boundary), so a long word costs linear time.
      size_t end = std::min(word.size(), start + longest_token_bytes());
      while (end > start && end < word.size() && unicode::is_continuation_byte(word[end])) --end;
      std::optional<int32_t> found;
      while (end > start) {
        candidate.assign(start > 0 ? prefix_ : "");
        candidate.append(word.substr(start, end - start));
        if ((found = token_to_id(candidate))) break;
        // Step back one whole character.
        do --end;
        while (end > start && unicode::is_continuation_byte(word[end]));
      }
      if (!found) {
        out.resize(first);
        return whole();
      }
      out.push_back({*found, static_cast<uint32_t>(start), static_cast<uint32_t>(end)});
      start = end;
    }
  }

 private:
  static constexpr size_t kMaxWordChars = size_t{1} << 20;
  std::string prefix_;
  size_t max_chars_ = 100;
  int32_t unk_id_ = 0;
};

}  // namespace

std::unique_ptr<TokenizerModel> make_wordpiece_model(const json& spec) {
  return std::make_unique<WordPieceModel>(spec);
}

}  // namespace semroute
