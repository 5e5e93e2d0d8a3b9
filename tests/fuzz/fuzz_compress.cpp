// Fuzz target: any byte string through prompt compression, with the
// ModernBERT tokenizer and with the word count, at a budget taken from the
// first byte. Invalid UTF-8 must be refused with an error; otherwise the
// skeleton fits its budget and is its kept ranges joined, and the sentence
// units found in pieces (as a stream reads them) equal those of the whole.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "compression/prompt_compressor.h"
#include "compression/sentence_splitter.h"
#include "fuzz_util.h"
#include "semroute/error.h"
#include "tokenizers/tokenizer.h"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_compress: %s\n", what);
  std::abort();
}

std::vector<semroute::Span> streamed_units(std::string_view text, size_t step, const semroute::SplitterOptions& o) {
  std::vector<semroute::Span> out;
  size_t begin = 0, seen = 0;
  for (;;) {
    const bool at_end = seen == text.size();
    const std::string_view visible = text.substr(0, seen);
    begin = semroute::skip_whitespace(visible, begin);
    if (begin < visible.size()) {
      if (const auto end = semroute::find_unit_end(visible, begin, at_end, o)) {
        out.push_back({static_cast<uint32_t>(begin), static_cast<uint32_t>(*end)});
        begin = *end;
        continue;
      }
    }
    if (at_end) return out;
    seen = std::min(text.size(), seen + step);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  semroute::fuzz::signal_handlers_on_own_stack();
  if (size == 0) return 0;
  static const auto tokenizer = semroute::load_tokenizer(SEMROUTE_TEST_DATA "/tokenizers/modernbert/tokenizer.json");
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  semroute::CompressOptions options;
  options.max_tokens = 1 + data[0] % 64;
  options.max_unit_bytes = 16 + data[0] % 48;
  options.drop_stop_words = (data[0] & 0x80) != 0;
  for (const bool with_tokenizer : {true, false}) {
    const semroute::PromptCompressor compressor(options, with_tokenizer ? tokenizer : nullptr);
    try {
      const semroute::CompressedText c = compressor.compress(text);
      if (c.tokens > options.max_tokens) fail("over the budget");
      if (semroute::join_kept(text, c.kept) != c.text) fail("the ranges do not give the skeleton");
      for (const auto& r : c.kept)
        if (r.begin > r.end || r.end > text.size()) fail("a range outside the text");
    } catch (const semroute::Error&) {
    }
  }
  const semroute::SplitterOptions splitter{options.max_unit_bytes};
  const auto whole = semroute::split_units(text, splitter);
  const auto pieces = streamed_units(text, 1 + data[0] % 7, splitter);
  if (whole.size() != pieces.size()) fail("streamed units differ in number");
  for (size_t i = 0; i < whole.size(); ++i)
    if (whole[i].begin != pieces[i].begin || whole[i].end != pieces[i].end) fail("a streamed unit differs");
  return 0;
}
