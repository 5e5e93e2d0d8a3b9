// The units a text reads in — sentences, lines of code or JSON, list items,
// fenced code blocks — as byte ranges, found left to right with bounded
// look-ahead. A unit's end depends only on the bytes from its start to a
// little past its end, so a stream cut anywhere yields the same units as the
// whole text (answer_stream.h relies on it).
//
// Rules, in order, from a unit's first non-space byte:
//  - a unit that opens with ``` or ~~~ runs to the line that closes the fence;
//  - a newline ends the unit, unless the text is hard-wrapped prose (the line
//    ends in a letter, digit, comma or hyphen and the next one starts with a
//    lowercase ASCII letter); a blank line or a fence always ends it;
//  - `.`, `!`, `?`, `…` (with closing quotes and brackets after them) followed
//    by whitespace end a sentence; a lone `.` does not when the word before it
//    is an abbreviation (Dr, e.g., U.S., a single letter …) or the next word
//    starts in lowercase; `3.14` and `file.txt` are not ends (no whitespace);
//  - `。`, `！`, `？` end a sentence at once (no space follows them);
//  - a unit longer than max_unit_bytes is cut at its last whitespace before
//    the limit (in its second half), else at a UTF-8 character boundary.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "tokenizers/aligned_text.h"

namespace semroute {

struct SplitterOptions {
  size_t max_unit_bytes = 2048;
};

// ASCII whitespace: what separates units and words here.
inline bool is_ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
// A UTF-8 continuation byte: a cut before it would split a character.
inline bool is_utf8_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// How far past a unit's end the rules may look (the next word's first
// letter after a run of spaces); beyond it the unit simply ends.
constexpr size_t kSplitterLookahead = 256;

// The end (exclusive, trailing whitespace excluded) of the unit that starts at
// `begin`, a non-space byte of `text`. nullopt when `text` stops too early to
// know and more may follow (`at_end` false); at the end of the text the rest
// is one unit.
std::optional<size_t> find_unit_end(std::string_view text, size_t begin, bool at_end, const SplitterOptions& options);

// The first byte at or after `pos` that is not ASCII whitespace (text.size() if none).
size_t skip_whitespace(std::string_view text, size_t pos);

// Every unit of `text` (valid UTF-8; not checked here).
std::vector<Span> split_units(std::string_view text, const SplitterOptions& options = {});

}  // namespace semroute
