// UTF-8 and Unicode character properties for the tokenizers (properties and
// normalization come from utf8proc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace semroute::unicode {

// True for the second to fourth bytes of a UTF-8 character.
inline bool is_continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Decodes the code point at text[pos] (text must be valid UTF-8) and returns
// its byte length through `length`.
char32_t decode(std::string_view text, size_t pos, size_t* length);
void append_utf8(std::string& out, char32_t cp);
size_t utf8_length(char32_t cp);

// Offset of the first invalid byte, or npos when `text` is valid UTF-8
// (no overlongs, no surrogates, nothing above U+10FFFF).
size_t find_invalid_utf8(std::string_view text);

// UTF-8 arriving in pieces, a character possibly split between two: each
// piece is judged as it comes, so a bad byte is blamed on the piece that
// holds it (an overlong or surrogate start as soon as no ending could mend it).
class Utf8Pieces {
 public:
  // Offset in `piece` of the first byte no continuation can make valid, or npos.
  size_t feed(std::string_view piece);
  // Whether everything fed ends on a whole character.
  bool complete() const { return unfinished_.empty(); }

 private:
  std::string unfinished_;  // the start of a character the last piece ended in
};

bool is_whitespace(char32_t cp);   // the Unicode White_Space property
bool is_control(char32_t cp);      // HF BERT's definition: categories Cc/Cf/Co except \t \n \r
bool is_punctuation(char32_t cp);  // ASCII symbol ranges or any P* category
bool is_cjk(char32_t cp);          // CJK Unified Ideographs blocks (BERT's list)
bool is_mark_nonspacing(char32_t cp);
bool is_word_character(char32_t cp);  // letters, marks and numbers (L*, M*, N*)
bool is_letter_or_number(char32_t cp);  // L*, N* (Python's str.isalnum, as a regex's \w less '_')
char32_t to_lower(char32_t cp);

// True if NFC composition may join this code point with the one before it.
bool may_compose_with_previous(char32_t cp);
// True if the code point is its own NFC/NFD form and combines with nothing.
bool is_normalization_stable(char32_t cp);

enum class NormalForm { kNFC, kNFD, kNFKC, kNFKD };
// Normalizes a short UTF-8 string.
std::string normalize(std::string_view text, NormalForm form);

}  // namespace semroute::unicode
