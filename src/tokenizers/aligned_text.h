// Text derived from an original input that remembers, for each of its bytes,
// the range of original bytes it came from (what Hugging Face calls a
// NormalizedString). Normalizers and pre-tokenizers transform it; token
// offsets are read back through it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace semroute {

// A half-open byte range [begin, end) of the original input.
struct Span {
  uint32_t begin = 0;
  uint32_t end = 0;
};

class AlignedText {
 public:
  AlignedText() = default;
  // `text` unchanged, its bytes at original offsets base, base+1, …
  static AlignedText original(std::string_view text, size_t base = 0);

  const std::string& text() const { return text_; }
  bool empty() const { return text_.empty(); }
  size_t size() const { return text_.size(); }

  // The original range covered by bytes [begin, end) of this text.
  Span original_span(size_t begin, size_t end) const;
  AlignedText slice(size_t begin, size_t end) const;

  void append(std::string_view bytes, Span from);
  void reserve(size_t bytes) {
    text_.reserve(bytes);
    align_.reserve(bytes);
  }
  void append(const AlignedText& other);

  // Rebuilds the text character by character: `fn(cp, out)` appends the
  // replacement of code point `cp` (possibly nothing) to `out`; the new bytes
  // map to the original span of that character.
  void map_chars(const std::function<void(char32_t, std::string&)>& fn);
  // Replaces bytes [begin, end) by `replacement`, mapped to their span.
  void replace_range(size_t begin, size_t end, std::string_view replacement);

 private:
  // Normalizers may expand text (NFKD, Metaspace's "▁", CJK spacing), but a
  // chain of Replace rules must not multiply it: beyond kMaxGrowth times the
  // original bytes covered (plus kGrowthSlack) is an error.
  static constexpr size_t kMaxGrowth = 16, kGrowthSlack = 4096;
  void check_growth() const;

  std::string text_;
  std::vector<Span> align_;  // one per byte of text_
};

}  // namespace semroute
