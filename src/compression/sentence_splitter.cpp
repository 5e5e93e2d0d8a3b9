#include "compression/sentence_splitter.h"

#include <algorithm>
#include <array>
#include <string>

namespace semroute {
namespace {

bool is_lower(unsigned char c) { return c >= 'a' && c <= 'z'; }
bool is_alpha(unsigned char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

// Abbreviations whose period does not end a sentence (lowercase, no period).
// Common words ("no", "art", "min") are left out: they end sentences more often.
constexpr std::array<std::string_view, 38> kAbbreviations = {
    "mr",   "mrs",  "ms",   "dr",  "prof", "sr",  "jr",  "st",  "vs",  "vol",  "fig", "approx", "inc",
    "ltd",  "corp", "dept", "jan", "feb",  "mar", "apr", "jun", "jul", "aug",  "sep", "sept",   "oct",
    "nov",  "dec",  "mt",   "gen", "gov",  "sen", "rev", "capt", "lt", "sgt",  "pp",  "cf"};

bool starts_with(std::string_view text, size_t pos, std::string_view what) {
  return text.size() - std::min(pos, text.size()) >= what.size() && text.compare(pos, what.size(), what) == 0;
}

// Length of the first of `candidates` found at `pos`, 0 if none.
template <size_t N>
size_t match_any(std::string_view text, size_t pos, const std::array<std::string_view, N>& candidates) {
  for (const auto c : candidates)
    if (starts_with(text, pos, c)) return c.size();
  return 0;
}

constexpr std::array<std::string_view, 4> kTerminators = {".", "!", "?", "\u2026"};
constexpr std::array<std::string_view, 3> kCjkTerminators = {"\u3002", "\uff01", "\uff1f"};
constexpr std::array<std::string_view, 12> kClosers = {"\"", "'", ")", "]", "}", "\u201d", "\u2019",
                                                       "\u00bb", "\u300d", "\u300f", "\uff09", "*"};

// Bytes that may start a newline, a terminator or a CJK terminator: the scan
// skips every other byte without looking further.
constexpr std::array<bool, 256> kMayEnd = [] {
  std::array<bool, 256> table{};
  for (const unsigned char c : {'\n', '.', '!', '?', '\xE2', '\xE3', '\xEF'}) table[c] = true;
  return table;
}();

bool is_fence(std::string_view text, size_t pos) { return starts_with(text, pos, "```") || starts_with(text, pos, "~~~"); }

size_t trim_end(std::string_view text, size_t begin, size_t end) {
  while (end > begin + 1 && is_ascii_space(text[end - 1])) --end;
  return end;
}

// A unit that reached the size limit: cut at its last newline, else its last
// whitespace, in its second half; else at a character boundary.
size_t cut(std::string_view text, size_t begin, size_t limit) {
  const size_t half = begin + (limit - begin) / 2;
  for (const bool newline_only : {true, false}) {
    for (size_t p = limit; p > half; --p) {
      const char c = text[p - 1];
      if (newline_only ? c == '\n' : is_ascii_space(c)) return trim_end(text, begin, p - 1);
    }
  }
  size_t p = limit;
  while (p > begin + 1 && (static_cast<unsigned char>(text[p]) & 0xC0) == 0x80) --p;
  return p;
}

// The first byte after `pos` that is not whitespace (newlines too when
// `lines`), or nullopt when the text stops before one (and may go on) within
// the look-ahead. Past the look-ahead: text.size().
std::optional<size_t> next_word(std::string_view text, size_t pos, bool lines, bool at_end) {
  size_t k = pos;
  const size_t stop = std::min(text.size(), pos + kSplitterLookahead);
  while (k < stop) {
    const char c = text[k];
    if (!is_ascii_space(c) || (!lines && c == '\n')) return k;
    ++k;
  }
  if (k == text.size() && !at_end && k < pos + kSplitterLookahead) return std::nullopt;
  return text.size();
}

// Whether the newline at `nl` ends the unit (nullopt: the text stops too early to tell).
std::optional<bool> newline_ends(std::string_view text, size_t begin, size_t nl, bool at_end) {
  const auto k = next_word(text, nl + 1, false, at_end);
  if (!k) return std::nullopt;
  if (*k >= text.size() || text[*k] == '\n' || is_fence(text, *k)) return true;
  size_t prev = nl;
  while (prev > begin && is_ascii_space(text[prev - 1])) --prev;
  const auto last = static_cast<unsigned char>(text[prev - 1]);
  const bool open_line = is_alpha(last) || is_digit(last) || last == ',' || last == '-' || last >= 0x80;
  return !(open_line && is_lower(static_cast<unsigned char>(text[*k])));
}

// Whether the lone period at `dot` follows an abbreviation, an initial or a
// dotted form (e.g., U.S.), looking no further back than `begin`.
bool after_abbreviation(std::string_view text, size_t begin, size_t dot) {
  size_t w = dot;
  while (w > begin && (is_alpha(static_cast<unsigned char>(text[w - 1])) || text[w - 1] == '.')) --w;
  const std::string_view word = text.substr(w, dot - w);
  if (word.empty()) return false;
  if (word.find('.') != std::string_view::npos || word.size() == 1) return true;
  std::string lower(word);
  for (char& c : lower) c = static_cast<char>(c | 0x20);
  return std::find(kAbbreviations.begin(), kAbbreviations.end(), lower) != kAbbreviations.end();
}

// A fenced code block from `begin` to the end of its closing fence line.
std::optional<size_t> fence_end(std::string_view text, size_t begin, size_t limit, bool at_end) {
  const std::string_view fence = text.substr(begin, 3);
  for (size_t p = text.find('\n', begin + 3); p != std::string_view::npos; p = text.find('\n', p + 1)) {
    if (p >= limit) return cut(text, begin, limit);
    size_t k = p + 1;
    while (k < text.size() && k < p + 5 && (text[k] == ' ' || text[k] == '\t')) ++k;
    if (text.size() - k < 3) break;  // too early to tell
    if (text.compare(k, 3, fence) != 0) continue;
    const size_t line_end = text.find('\n', k);
    if (line_end == std::string_view::npos) break;
    if (line_end > limit) return cut(text, begin, limit);
    return trim_end(text, begin, line_end);
  }
  if (text.size() > limit) return cut(text, begin, limit);
  if (!at_end) return std::nullopt;
  return trim_end(text, begin, text.size());
}

}  // namespace

size_t skip_whitespace(std::string_view text, size_t pos) {
  while (pos < text.size() && is_ascii_space(text[pos])) ++pos;
  return pos;
}

std::optional<size_t> find_unit_end(std::string_view text, size_t begin, bool at_end, const SplitterOptions& options) {
  const size_t limit = begin + std::max<size_t>(options.max_unit_bytes, 16);
  // A multi-byte mark may be cut by the end of what has arrived: wait for it.
  const auto partial = [&](size_t pos) {
    return !at_end && pos < text.size() && pos + 3 > text.size() && static_cast<unsigned char>(text[pos]) >= 0x80;
  };
  if (is_fence(text, begin)) return fence_end(text, begin, limit, at_end);
  for (size_t i = begin; i < text.size();) {
    const size_t stop = std::min(text.size(), limit);
    while (i < stop && !kMayEnd[static_cast<unsigned char>(text[i])]) ++i;
    if (i >= text.size()) break;
    if (i >= limit) return cut(text, begin, limit);
    if (text[i] == '\n') {
      const auto ends = newline_ends(text, begin, i, at_end);
      if (!ends) return std::nullopt;
      if (*ends) return trim_end(text, begin, i);
      ++i;
      continue;
    }
    if (partial(i)) return std::nullopt;
    if (const size_t n = match_any(text, i, kCjkTerminators)) {
      size_t j = i + n;
      while (const size_t m = match_any(text, j, kClosers)) j += m;
      if ((j >= text.size() && !at_end) || partial(j)) return std::nullopt;
      return j;
    }
    const size_t n = match_any(text, i, kTerminators);
    if (n == 0) {
      ++i;
      continue;
    }
    // A run of terminators and closing marks: "?!", "...", ".)", ".\"".
    size_t j = i + n;
    bool dots_only = text[i] == '.' || n == 3;  // "…" is 3 bytes
    size_t terminators = 1;
    for (;;) {
      if (partial(j)) return std::nullopt;
      if (const size_t m = match_any(text, j, kTerminators)) {
        dots_only = dots_only && (text[j] == '.' || m == 3);
        ++terminators;
        j += m;
      } else if (const size_t m2 = match_any(text, j, kClosers)) {
        j += m2;
      } else {
        break;
      }
    }
    if (j >= text.size()) {
      if (!at_end) return std::nullopt;
      return j;
    }
    if (!is_ascii_space(text[j])) {  // 3.14, file.txt, "?!x"
      i = j;
      continue;
    }
    if (dots_only) {
      if (terminators == 1 && text[i] == '.' && after_abbreviation(text, begin, i)) {
        i = j;
        continue;
      }
      const auto k = next_word(text, j, true, at_end);
      if (!k) return std::nullopt;
      if (*k < text.size() && is_lower(static_cast<unsigned char>(text[*k]))) {
        i = j;
        continue;
      }
    }
    return j;
  }
  if (!at_end) return std::nullopt;
  return trim_end(text, begin, text.size());
}

std::vector<Span> split_units(std::string_view text, const SplitterOptions& options) {
  std::vector<Span> units;
  for (size_t begin = skip_whitespace(text, 0); begin < text.size();) {
    const size_t end = *find_unit_end(text, begin, true, options);
    units.push_back({static_cast<uint32_t>(begin), static_cast<uint32_t>(end)});
    begin = skip_whitespace(text, end);
  }
  return units;
}

}  // namespace semroute
