#include "tokenizers/aligned_text.h"

#include "semroute/error.h"
#include "tokenizers/unicode.h"

namespace semroute {

AlignedText AlignedText::original(std::string_view text, size_t base) {
  AlignedText t;
  t.text_.assign(text);
  t.align_.resize(text.size());
  for (size_t i = 0; i < text.size(); ++i)
    t.align_[i] = Span{static_cast<uint32_t>(base + i), static_cast<uint32_t>(base + i + 1)};
  return t;
}

Span AlignedText::original_span(size_t begin, size_t end) const {
  if (begin >= end || begin >= align_.size()) {
    const uint32_t at = begin < align_.size() ? align_[begin].begin : (align_.empty() ? 0 : align_.back().end);
    return Span{at, at};
  }
  uint32_t lo = align_[begin].begin, hi = align_[begin].end;
  for (size_t i = begin + 1; i < end; ++i) {
    if (align_[i].begin < lo) lo = align_[i].begin;
    if (align_[i].end > hi) hi = align_[i].end;
  }
  return Span{lo, hi};
}

AlignedText AlignedText::slice(size_t begin, size_t end) const {
  AlignedText t;
  t.text_.assign(text_, begin, end - begin);
  t.align_.assign(align_.begin() + static_cast<long>(begin), align_.begin() + static_cast<long>(end));
  return t;
}

void AlignedText::check_growth() const {
  if (align_.empty()) return;
  const size_t first = align_.front().begin, last = align_.back().end;
  const size_t covered = last > first ? last - first : 0;
  if (text_.size() > kMaxGrowth * covered + kGrowthSlack)
    throw InvalidInput("the tokenizer's normalizers expand " + std::to_string(covered) + " bytes of text to more than " +
                           std::to_string(text_.size()) + " bytes",
                       ErrorCode::kTooLong);
}

void AlignedText::append(std::string_view bytes, Span from) {
  text_.append(bytes);
  for (size_t i = 0; i < bytes.size(); ++i) align_.push_back(from);  // faster than a fill-insert for 1-4 bytes
  check_growth();
}

void AlignedText::append(const AlignedText& other) {
  text_ += other.text_;
  align_.insert(align_.end(), other.align_.begin(), other.align_.end());
  check_growth();
}

void AlignedText::map_chars(const std::function<void(char32_t, std::string&)>& fn) {
  AlignedText out;
  out.text_.reserve(text_.size());
  out.align_.reserve(text_.size());
  std::string buffer;
  for (size_t i = 0; i < text_.size();) {
    size_t len;
    const char32_t cp = unicode::decode(text_, i, &len);
    buffer.clear();
    fn(cp, buffer);
    out.append(buffer, original_span(i, i + len));
    i += len;
  }
  *this = std::move(out);
}

void AlignedText::replace_range(size_t begin, size_t end, std::string_view replacement) {
  const Span span = original_span(begin, end);
  text_.replace(begin, end - begin, replacement);
  align_.erase(align_.begin() + static_cast<long>(begin), align_.begin() + static_cast<long>(end));
  align_.insert(align_.begin() + static_cast<long>(begin), replacement.size(), span);
  check_growth();
}

}  // namespace semroute
