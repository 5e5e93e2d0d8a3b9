#include "tokenizers/unicode.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "semroute/error.h"

namespace semroute::unicode {

char32_t decode(std::string_view text, size_t pos, size_t* length) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data()) + pos;
  if (s[0] < 0x80) {
    *length = 1;
    return s[0];
  }
  if (s[0] < 0xE0) {
    *length = 2;
    return ((s[0] & 0x1Fu) << 6) | (s[1] & 0x3Fu);
  }
  if (s[0] < 0xF0) {
    *length = 3;
    return ((s[0] & 0x0Fu) << 12) | ((s[1] & 0x3Fu) << 6) | (s[2] & 0x3Fu);
  }
  *length = 4;
  return ((s[0] & 0x07u) << 18) | ((s[1] & 0x3Fu) << 12) | ((s[2] & 0x3Fu) << 6) | (s[3] & 0x3Fu);
}

size_t utf8_length(char32_t cp) { return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4; }

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

size_t find_invalid_utf8(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    char32_t min;
    if ((c & 0xE0) == 0xC0) {
      len = 2, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, min = 0x10000;
    } else {
      return i;
    }
    if (i + len > n) return i;
    for (size_t k = 1; k < len; ++k)
      if ((s[i + k] & 0xC0) != 0x80) return i;
    size_t used;
    const char32_t cp = decode(text, i, &used);
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return std::string_view::npos;
}

namespace {

// The byte length a lead byte announces (1 for anything else: it is judged as it is).
size_t announced_length(char lead) {
  const auto c = static_cast<unsigned char>(lead);
  return c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
}

// Whether `start` (shorter than its lead byte says) begins a valid character:
// some ending makes it one. The second byte's lowest legal values differ by
// lead byte (E0 needs A0, F0 needs 90), so each is tried.
bool begins_a_character(std::string_view start) {
  const size_t length = announced_length(start[0]);
  if (length == 1 || start.size() >= length) return false;
  for (const char second : {'\x80', '\x90', '\xA0'}) {
    std::string whole(start);
    if (whole.size() == 1) whole += second;
    whole.resize(length, '\x80');
    if (find_invalid_utf8(whole) == std::string_view::npos) return true;
  }
  return false;
}

}  // namespace

size_t Utf8Pieces::feed(std::string_view piece) {
  size_t finished = 0;  // bytes of `piece` that end the character the last piece began
  if (!unfinished_.empty()) {
    finished = std::min(piece.size(), announced_length(unfinished_[0]) - unfinished_.size());
    unfinished_.append(piece.substr(0, finished));
    if (begins_a_character(unfinished_)) return std::string_view::npos;  // still unfinished
    if (find_invalid_utf8(unfinished_) != std::string_view::npos) return 0;
    unfinished_.clear();
  }
  const std::string_view rest = piece.substr(finished);
  const size_t bad = find_invalid_utf8(rest);
  if (bad == std::string_view::npos) return bad;
  if (rest.size() - bad < 4 && begins_a_character(rest.substr(bad))) {
    unfinished_ = rest.substr(bad);
    return std::string_view::npos;
  }
  return finished + bad;
}

namespace {
utf8proc_category_t category(char32_t cp) { return utf8proc_category(static_cast<utf8proc_int32_t>(cp)); }
bool is_mark(utf8proc_category_t c) {
  return c == UTF8PROC_CATEGORY_MN || c == UTF8PROC_CATEGORY_MC || c == UTF8PROC_CATEGORY_ME;
}
}  // namespace

bool is_whitespace(char32_t cp) {
  // Unicode White_Space, as Rust's char::is_whitespace (HF tokenizers) uses.
  if ((cp >= 0x09 && cp <= 0x0D) || cp == ' ' || cp == 0x85 || cp == 0x2028 || cp == 0x2029) return true;
  return cp >= 0xA0 && category(cp) == UTF8PROC_CATEGORY_ZS;
}

bool is_control(char32_t cp) {
  if (cp == '\t' || cp == '\n' || cp == '\r') return false;
  switch (category(cp)) {
    // Unassigned code points (Cn) are kept, as HF tokenizers does (checked
    // against its output); surrogates cannot occur in valid UTF-8.
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CO: return true;
    default: return false;
  }
}

bool is_punctuation(char32_t cp) {
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126))
    return true;
  switch (category(cp)) {
    case UTF8PROC_CATEGORY_PC:
    case UTF8PROC_CATEGORY_PD:
    case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PI:
    case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO: return true;
    default: return false;
  }
}

bool is_cjk(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
         (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

bool is_mark_nonspacing(char32_t cp) { return category(cp) == UTF8PROC_CATEGORY_MN; }

bool is_word_character(char32_t cp) {
  switch (category(cp)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO: return true;
    default: return false;
  }
}

bool is_letter_or_number(char32_t cp) { return is_word_character(cp) && !is_mark(category(cp)); }

char32_t to_lower(char32_t cp) { return static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp))); }

bool may_compose_with_previous(char32_t cp) {
  if (cp < 0x300) return false;
  if ((cp >= 0x1161 && cp <= 0x1175) || (cp >= 0x11A8 && cp <= 0x11C2)) return true;  // Hangul V / T jamo
  const utf8proc_property_t* p = utf8proc_get_property(static_cast<utf8proc_int32_t>(cp));
  return p->combining_class != 0 || (p->comb_index != UINT16_MAX && p->comb_index >= 0x8000);
}

bool is_normalization_stable(char32_t cp) {
  if (cp < 0xC0) return true;
  if (cp >= 0xAC00 && cp <= 0xD7A3) return false;  // precomposed Hangul decomposes under NFD
  const utf8proc_property_t* p = utf8proc_get_property(static_cast<utf8proc_int32_t>(cp));
  return p->decomp_seqindex == UINT16_MAX && p->combining_class == 0 && !may_compose_with_previous(cp);
}

std::string normalize(std::string_view text, NormalForm form) {
  int options = UTF8PROC_STABLE;
  switch (form) {
    case NormalForm::kNFC: options |= UTF8PROC_COMPOSE; break;
    case NormalForm::kNFD: options |= UTF8PROC_DECOMPOSE; break;
    case NormalForm::kNFKC: options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT; break;
    case NormalForm::kNFKD: options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT; break;
  }
  utf8proc_uint8_t* out = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                          static_cast<utf8proc_ssize_t>(text.size()), &out,
                                          static_cast<utf8proc_option_t>(options));
  if (n < 0) throw InvalidInput(std::string("Unicode normalization failed: ") + utf8proc_errmsg(n), ErrorCode::kInvalidUtf8);
  std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owner(out, &std::free);
  return std::string(reinterpret_cast<const char*>(out), static_cast<size_t>(n));
}

}  // namespace semroute::unicode
