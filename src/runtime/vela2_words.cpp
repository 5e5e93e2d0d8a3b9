#include "runtime/vela2_words.h"

#include <algorithm>
#include <initializer_list>

#include "tokenizers/unicode.h"

namespace semroute {
namespace {

bool in(char32_t c, std::initializer_list<char32_t> set) { return std::find(set.begin(), set.end(), c) != set.end(); }

// Python's str.isspace(), which the packages' patterns use.
bool is_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

// The packages' CJK set, code point for code point.
bool is_cjk(char32_t c) {
  return (c >= 0x2E80 && c <= 0x2FFF) || (c >= 0x3000 && c <= 0x303F) || (c >= 0x3040 && c <= 0x30FF) ||
         (c >= 0x3100 && c <= 0x31FF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) ||
         (c >= 0xA000 && c <= 0xA4CF) || (c >= 0xAC00 && c <= 0xD7AF) || (c >= 0x8C48 && c <= 0xFAFF) ||
         (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFFEF);
}

// A regex word character (\w): a letter, a number or '_'.
bool is_word(char32_t c) { return c == '_' || unicode::is_letter_or_number(c); }

// [a-z] under case-insensitive matching: ASCII letters and the four code
// points that fold to one (İ ı ſ K).
bool is_letter_ci(char32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == 0x130 || c == 0x131 || c == 0x17F || c == 0x212A;
}
bool is_digit(char32_t c) { return c >= '0' && c <= '9'; }

// Whether `prefix` (lower-case ASCII) starts at `at`; case-insensitively, ſ also matching s.
bool starts_with(const std::u32string& text, size_t at, const char* prefix, bool any_case) {
  for (size_t k = 0; prefix[k] != 0; ++k) {
    if (at + k >= text.size()) return false;
    const char32_t c = text[at + k], p = static_cast<char32_t>(prefix[k]);
    const bool letter = p >= 'a' && p <= 'z';
    if (c != p && !(any_case && letter && (c == p - 32 || (p == 's' && c == 0x17F)))) return false;
  }
  return true;
}

size_t url_prefix(const std::u32string& text, size_t at, bool any_case) {
  for (const char* prefix : {"https://", "http://", "www."})
    if (starts_with(text, at, prefix, any_case)) return std::char_traits<char>::length(prefix);
  return 0;
}

// A URL at `at` (prefix, then a run of `inside` characters less a tail of
// `trail` ones, keeping one): its end, or `at` when there is none.
template <class Inside, class Trail>
size_t url_end(const std::u32string& text, size_t at, bool any_case, Inside inside, Trail trail) {
  const size_t prefix = url_prefix(text, at, any_case);
  if (prefix == 0) return at;
  size_t end = at + prefix;
  while (end < text.size() && inside(text[end])) ++end;
  if (end == at + prefix) return at;
  while (end > at + prefix + 1 && trail(text[end - 1])) --end;
  return end;
}

size_t email_end(const std::u32string& text, size_t at) {
  size_t i = at;
  while (i < text.size() && (is_letter_ci(text[i]) || is_digit(text[i]) || in(text[i], {'.', '_', '%', '+', '-'}))) ++i;
  if (i == at || i >= text.size() || text[i] != '@') return at;
  const size_t domain = i + 1;
  size_t run = domain;
  while (run < text.size() && (is_letter_ci(text[run]) || is_digit(text[run]) || in(text[run], {'.', '-'}))) ++run;
  // Backtracking from the longest domain: the last '.' followed by two letters.
  for (size_t dot = run; dot-- > domain + 1;) {
    if (text[dot] != '.' || dot + 2 >= run + 1 || dot + 2 > text.size()) continue;
    size_t end = dot + 1;
    while (end < text.size() && is_letter_ci(text[end])) ++end;
    if (end - dot - 1 >= 2) return end;
  }
  return at;
}

size_t handle_end(const std::u32string& text, size_t at) {
  if (text[at] != '@') return at;
  size_t i = at + 1;
  while (i < text.size() && (is_letter_ci(text[i]) || is_digit(text[i]) || text[i] == '_')) ++i;
  return i > at + 1 ? i : at;
}

size_t compound_end(const std::u32string& text, size_t at) {
  const auto plain = [&](size_t i) { return i < text.size() && is_word(text[i]) && !is_cjk(text[i]); };
  if (!plain(at)) return at;
  size_t i = at;
  while (plain(i)) ++i;
  while (i + 1 < text.size() && (text[i] == '-' || text[i] == '_') && plain(i + 1)) {
    ++i;
    while (plain(i)) ++i;
  }
  return i;
}

// Scans `text` with `match` (an end past `at`, or `at`); any other non-space character alone.
template <class Match>
std::vector<CodePointRange> scan(const std::u32string& text, Match match) {
  std::vector<CodePointRange> out;
  for (size_t at = 0; at < text.size();) {
    size_t end = match(at);
    if (end == at && !is_space(text[at])) end = at + 1;
    if (end > at) out.emplace_back(at, end);
    at = std::max(end, at + 1);
  }
  return out;
}

}  // namespace

std::u32string code_points(const std::string& text) {
  std::u32string out;
  for (size_t pos = 0; pos < text.size();) {
    size_t length = 0;
    out.push_back(unicode::decode(text, pos, &length));
    pos += std::max<size_t>(length, 1);
  }
  return out;
}

std::vector<size_t> code_point_starts(const std::string& text) {
  std::vector<size_t> starts;
  for (size_t pos = 0; pos < text.size();) {
    starts.push_back(pos);
    size_t length = 0;
    unicode::decode(text, pos, &length);
    pos += std::max<size_t>(length, 1);
  }
  starts.push_back(text.size());
  return starts;
}

std::vector<CodePointRange> token_code_points(const std::vector<size_t>& starts,
                                              const std::vector<std::pair<size_t, size_t>>& byte_ranges) {
  // The code point holding byte b: the last start at or before it.
  const auto holding = [&](size_t b) {
    return static_cast<size_t>(std::upper_bound(starts.begin(), starts.end() - 1, b) - starts.begin()) - 1;
  };
  std::vector<CodePointRange> out;
  out.reserve(byte_ranges.size());
  for (const auto& [begin, end] : byte_ranges) {
    const size_t first = begin < starts.back() ? holding(begin) : starts.size() - 1;
    out.emplace_back(first, end > begin ? holding(end - 1) + 1 : first);
  }
  return out;
}

std::string utf8_of(const std::u32string& text, size_t begin, size_t end) {
  std::string out;
  for (size_t i = begin; i < end && i < text.size(); ++i) unicode::append_utf8(out, text[i]);
  return out;
}

std::vector<CodePointRange> split_words(const std::u32string& text) {
  static constexpr char32_t kTrail[] = {'.', ',', ';', ':', '!', '?', ')', ']', '}', '>', '"', '\'', 0x201D, 0x2019, 0xBB};
  const auto trail = [](char32_t c) { return std::find(std::begin(kTrail), std::end(kTrail), c) != std::end(kTrail); };
  return scan(text, [&](size_t at) {
    size_t end = url_end(text, at, true, [](char32_t c) { return !is_space(c) && !is_cjk(c); }, trail);
    if (end == at) end = email_end(text, at);
    if (end == at) end = handle_end(text, at);
    if (end == at && is_cjk(text[at])) end = at + 1;
    if (end == at) end = compound_end(text, at);
    return end;
  });
}

std::vector<CodePointRange> split_units(const std::u32string& text) {
  return scan(text, [&](size_t at) {
    size_t end = url_end(
        text, at, false,
        [](char32_t c) {
          return !is_space(c) && !is_cjk(c) && !in(c, {']', ')', '}', '>', 0x300C, 0x300D, 0x300E, 0x300F, '"', '\'',
                                                        0x201C, 0x201D});
        },
        [](char32_t c) { return in(c, {'.', ',', ';', ':', '!', '?'}); });
    if (end == at)
      while (end < text.size() && ((is_word(text[end]) && !is_cjk(text[end])) || in(text[end], {'@', '.', '_', '-', '+'})))
        ++end;
    return end;
  });
}

TokenWords words_of(const std::u32string& text, const std::vector<CodePointRange>& tokens) {
  TokenWords out;
  if (tokens.empty()) return out;
  size_t token = 0, reach = 0;  // reach: the largest end of the non-empty tokens before `token`
  bool reached = false;
  for (const CodePointRange& word : split_words(text)) {
    while (token < tokens.size() && !(reached && reach > word.first)) {
      if (tokens[token].second > tokens[token].first) {
        reach = std::max(reach, tokens[token].second);
        reached = true;
        if (reach > word.first) break;
      }
      ++token;
    }
    if (token >= tokens.size()) break;
    if (tokens[token].first < word.second) {
      out.words.push_back(word);
      out.first_token.push_back(token);
    }
  }
  return out;
}

CodePointRange trim_span(const std::u32string& text, size_t begin, size_t end) {
  static constexpr char32_t kEdge[] = {'[', ']', '(', ')', '{', '}', '<', '>', 0x300C, 0x300D, 0x300E, 0x300F, 0x3010,
                                       0x3011, 0x300A, 0x300B, 0x3008, 0x3009, '"', '\'', 0x201C, 0x201D, 0x2018,
                                       0x2019, 0xAB, 0xBB, 0x2039, 0x203A};
  const auto edge = [](char32_t c) {
    return is_space(c) || std::find(std::begin(kEdge), std::end(kEdge), c) != std::end(kEdge);
  };
  while (begin < end && edge(text[begin])) ++begin;
  while (end > begin && edge(text[end - 1])) --end;
  if (url_prefix(text, begin, true) == 0) return {begin, end};
  for (size_t i = begin; i < end; ++i)
    if (is_cjk(text[i])) end = i;
  while (end > begin && (edge(text[end - 1]) || in(text[end - 1], {'.', ',', ';', ':', '!', '?', ')'}))) --end;
  return {begin, end};
}

}  // namespace semroute
