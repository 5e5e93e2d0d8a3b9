// Fuzz target: any byte string through the ModernBERT (byte-level BPE) and
// BERT (WordPiece) pipelines, single and as a pair, then decoded. Invalid
// UTF-8 must be refused with an error; nothing may crash or read out of
// bounds, and every offset must lie inside the input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "semroute/error.h"
#include "tokenizers/tokenizer.h"

namespace {

const semroute::Tokenizer& tokenizer(int which) {
  static const auto modernbert = semroute::load_tokenizer(SEMROUTE_TEST_DATA "/tokenizers/modernbert/tokenizer.json");
  static const auto bert = semroute::load_tokenizer(SEMROUTE_TEST_DATA "/tokenizers/bert/tokenizer.json");
  return which == 0 ? *modernbert : *bert;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (int which = 0; which < 2; ++which) {
    try {
      const auto& tok = tokenizer(which);
      const semroute::Encoding e = tok.encode(text);
      for (const auto& o : e.offsets)
        if (o.begin > o.end || o.end > size) std::abort();
      tok.decode(e.ids);
      tok.encode_pair(text.substr(0, size / 2), text.substr(size / 2));
    } catch (const semroute::Error&) {
    }
  }
  return 0;
}
