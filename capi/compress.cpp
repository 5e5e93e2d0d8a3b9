// Prompt compression through the C API (src/compression/).
#include <sstream>

#include "compression/prompt_compressor.h"
#include "handles.h"
#include "tokenizers/tokenizer.h"

using namespace semroute::capi;

struct semroute_compressor {
  std::shared_ptr<const semroute::PromptCompressor> compressor;
};

struct semroute_compressed {
  semroute::CompressedText result;
  std::vector<uint64_t> ranges;  // begin, end, …
};

namespace {

std::vector<std::string> split_commas(const char* list) {
  std::vector<std::string> out;
  if (list == nullptr) return out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace

extern "C" {

semroute_compress_params semroute_compress_default_params(void) {
  const semroute::CompressOptions d;
  return {sizeof(semroute_compress_params), static_cast<uint32_t>(d.max_tokens), d.head_ratio, d.tail_ratio,
          d.drop_stop_words ? 1 : 0, nullptr, nullptr};
}

semroute_status* semroute_compressor_new(const semroute_compress_params* params, semroute_compressor** out) {
  if (out != nullptr) *out = nullptr;
  return guarded([&] {
    require(out, "out");
    const semroute_compress_params p = params ? caller_struct(params, semroute_compress_default_params(),
                                                              "semroute_compress_params")
                                              : semroute_compress_default_params();
    semroute::CompressOptions options;
    options.max_tokens = p.max_tokens;
    options.head_ratio = p.head_ratio;
    options.tail_ratio = p.tail_ratio;
    options.drop_stop_words = p.drop_stop_words != 0;
    options.languages = split_commas(p.languages);
    std::shared_ptr<const semroute::Tokenizer> tokenizer;
    if (p.tokenizer != nullptr) tokenizer = semroute::load_tokenizer(p.tokenizer);
    auto handle = std::make_unique<semroute_compressor>();
    handle->compressor = std::make_shared<const semroute::PromptCompressor>(std::move(options), std::move(tokenizer));
    *out = handle.release();
  });
}

void semroute_compressor_free(semroute_compressor* compressor) { delete compressor; }

semroute_status* semroute_compress(const semroute_compressor* compressor, const char* text, size_t length,
                                   semroute_compressed** out) {
  if (out != nullptr) *out = nullptr;
  return guarded([&] {
    require(compressor, "compressor");
    require(out, "out");
    auto result = std::make_unique<semroute_compressed>();
    result->result = compressor->compressor->compress(text_view(text, length, "text"));
    for (const auto& r : result->result.kept) {
      result->ranges.push_back(r.begin);
      result->ranges.push_back(r.end);
    }
    *out = result.release();
  });
}

const char* semroute_compressed_text(const semroute_compressed* compressed, size_t* out_length) {
  if (out_length != nullptr) *out_length = compressed ? compressed->result.text.size() : 0;
  return compressed ? compressed->result.text.c_str() : nullptr;
}

int semroute_compressed_reduced(const semroute_compressed* compressed) {
  return compressed && compressed->result.compressed ? 1 : 0;
}

size_t semroute_compressed_tokens(const semroute_compressed* compressed) {
  return compressed ? compressed->result.tokens : 0;
}

const char* semroute_compressed_language(const semroute_compressed* compressed) {
  return compressed ? compressed->result.language.c_str() : nullptr;
}

const uint64_t* semroute_compressed_ranges(const semroute_compressed* compressed, size_t* out_count) {
  const bool any = compressed && !compressed->ranges.empty();
  if (out_count != nullptr) *out_count = any ? compressed->ranges.size() / 2 : 0;
  return any ? compressed->ranges.data() : nullptr;
}

void semroute_compressed_free(semroute_compressed* compressed) { delete compressed; }

}  // extern "C"
