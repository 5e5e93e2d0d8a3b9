#include "tokenizers/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "semroute/error.h"

namespace semroute {

namespace {

// tokenizer.json patterns are written for Oniguruma, whose \s is Unicode
// White_Space. PCRE2's \s (with UCP) lacks one of those characters, U+0085,
// so it is added explicitly: \s -> [\s\x{85}], \S -> [^\s\x{85}], and
// inside a class \s -> \s\x{85}.
std::string translate_pattern(const std::string& pattern) {
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char next = pattern[++i];
      if (next == 's') {
        out += in_class ? "\\s\\x{85}" : "[\\s\\x{85}]";
      } else if (next == 'S' && !in_class) {
        out += "[^\\s\\x{85}]";
      } else {
        out += c;
        out += next;
      }
      continue;
    }
    if (c == '[' && !in_class) {
      in_class = true;
      out += c;
      // A ']' right after '[' or '[^' is a literal member, not the end.
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') out += pattern[++i];
      continue;
    }
    if (c == ']' && in_class) in_class = false;
    out += c;
  }
  return out;
}

}  // namespace

struct Regex::Code {
  pcre2_code* code = nullptr;
  ~Code() { pcre2_code_free(code); }
};

Regex::Regex(const std::string& original) : code_(std::make_unique<Code>()) {
  const std::string pattern = translate_pattern(original);
  int error = 0;
  PCRE2_SIZE offset = 0;
  code_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), PCRE2_UTF | PCRE2_UCP,
                              &error, &offset, nullptr);
  if (code_->code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof(message));
    throw LoadError("tokenizer regex does not compile at offset " + std::to_string(offset) + ": " +
                    reinterpret_cast<const char*>(message) + " (pattern: " + original + ")");
  }
  pcre2_jit_compile(code_->code, PCRE2_JIT_COMPLETE);  // optional speed-up; matching works without it
}

Regex::~Regex() = default;

void Regex::for_each_match(std::string_view text, const std::function<void(size_t, size_t)>& fn) const {
  struct MatchData {
    pcre2_match_data* data;
    ~MatchData() { pcre2_match_data_free(data); }
  } match{pcre2_match_data_create_from_pattern(code_->code, nullptr)};
  if (match.data == nullptr) throw Error(ErrorCode::kOutOfMemory, "cannot allocate regex match data");
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t start = 0;
  while (start < text.size()) {
    const int rc = pcre2_match(code_->code, subject, text.size(), start, PCRE2_NO_UTF_CHECK, match.data, nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) return;
    if (rc < 0) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(rc, message, sizeof(message));
      throw InternalError(std::string("regex match failed: ") + reinterpret_cast<const char*>(message));
    }
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.data);
    const size_t begin = ovector[0], end = ovector[1];
    if (end > begin) {
      fn(begin, end);
      start = end;
    } else {
      // Empty match: step over one whole character.
      size_t next = begin + 1;
      while (next < text.size() && (static_cast<unsigned char>(text[next]) & 0xC0) == 0x80) ++next;
      start = next;
    }
  }
}

}  // namespace semroute
