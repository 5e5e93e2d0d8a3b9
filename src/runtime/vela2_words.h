// The words a Vela 2.0 Span question reads (docs/decisions.md): a part's
// text split as the packages split it — URLs, e-mail addresses and @handles
// whole, each CJK character alone, hyphen/underscore compounds whole, any
// other non-space character alone — with every offset in code points; the
// "units" that hold words together when spans are decoded (an e-mail, a
// phone number, "U.S.A."); each word's first sub-word token; and the
// trimming of a span's edges (brackets, quotes, a URL's trailing dots).
// The character sets are the packages' own, quirks included (their "CJK"
// range U+8C48-FAFF also covers Hangul, surrogates and private use), since
// answers must match what the published models were trained on.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace semroute {

// A range [begin, end) of code points.
using CodePointRange = std::pair<size_t, size_t>;

// `text` decoded to code points (invalid UTF-8 bytes as U+FFFD).
std::u32string code_points(const std::string& text);

// Each code point's first byte in `text` (as code_points() decodes it), and
// text.size() at the end: code point i is bytes [starts[i], starts[i + 1]).
std::vector<size_t> code_point_starts(const std::string& text);

// Tokens' byte ranges as code point ranges: a token that covers part of a
// character covers all of it.
std::vector<CodePointRange> token_code_points(const std::vector<size_t>& starts,
                                              const std::vector<std::pair<size_t, size_t>>& byte_ranges);

// Code points [begin, end) of `text` as UTF-8.
std::string utf8_of(const std::u32string& text, size_t begin, size_t end);

// The words of `text`, in order.
std::vector<CodePointRange> split_words(const std::u32string& text);

// The units of `text`, in order.
std::vector<CodePointRange> split_units(const std::u32string& text);

// Words with their first sub-word token: for a word [a, b), the first token
// (in token order, empty tokens skipped) whose end, or an earlier token's,
// passes a; a word whose such token starts at or after b is dropped.
struct TokenWords {
  std::vector<CodePointRange> words;
  std::vector<size_t> first_token;
};
TokenWords words_of(const std::u32string& text, const std::vector<CodePointRange>& tokens);

// [begin, end) without surrounding whitespace, brackets and quotes; a URL
// also loses what follows a CJK character and its trailing punctuation.
CodePointRange trim_span(const std::u32string& text, size_t begin, size_t end);

}  // namespace semroute
