#include "core/regex.h"

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
  pcre2_match_context* context = nullptr;
  std::string pattern;
  ~Code() {
    pcre2_match_context_free(context);
    pcre2_code_free(code);
  }
};

struct Regex::Match {
  pcre2_match_data* data;
  explicit Match(const pcre2_code* code) : data(pcre2_match_data_create_from_pattern(code, nullptr)) {
    if (data == nullptr) throw Error(ErrorCode::kOutOfMemory, "cannot allocate regex match data");
  }
  ~Match() { pcre2_match_data_free(data); }
  const PCRE2_SIZE* ovector() const { return pcre2_get_ovector_pointer(data); }
};

namespace {

// Backtracking steps and heap (KiB) one match may use: far above what a real
// tokenizer or module-name pattern needs, far below a hang.
constexpr uint32_t kMatchLimit = 5'000'000;
constexpr uint32_t kHeapLimitKiB = 64 * 1024;

std::string pcre2_message(int code) {
  PCRE2_UCHAR message[256];
  pcre2_get_error_message(code, message, sizeof(message));
  return reinterpret_cast<const char*>(message);
}

}  // namespace

Regex::Regex(const std::string& original, Dialect dialect, const std::string& what) : code_(std::make_unique<Code>()) {
  if (original.size() > kMaxPatternBytes)
    throw LoadError(what + " of " + std::to_string(original.size()) + " bytes exceeds the limit of " +
                    std::to_string(kMaxPatternBytes));
  code_->pattern = original;
  const std::string pattern = dialect == Dialect::kOniguruma ? translate_pattern(original) : original;
  int error = 0;
  PCRE2_SIZE offset = 0;
  code_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), PCRE2_UTF | PCRE2_UCP,
                              &error, &offset, nullptr);
  if (code_->code == nullptr)
    throw LoadError(what + " does not compile at offset " + std::to_string(offset) + ": " + pcre2_message(error) +
                    " (pattern: " + original.substr(0, 200) + ")");
  pcre2_jit_compile(code_->code, PCRE2_JIT_COMPLETE);  // optional speed-up; matching works without it
  code_->context = pcre2_match_context_create(nullptr);
  if (code_->context == nullptr) throw Error(ErrorCode::kOutOfMemory, "cannot allocate a regex match context");
  pcre2_set_match_limit(code_->context, kMatchLimit);
  pcre2_set_heap_limit(code_->context, kHeapLimitKiB);
}

Regex::~Regex() = default;

bool Regex::match_at(std::string_view text, size_t start, uint32_t options, Match& match) const {
  const int rc = pcre2_match(code_->code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), start,
                             options | PCRE2_NO_UTF_CHECK, match.data, code_->context);
  if (rc == PCRE2_ERROR_NOMATCH) return false;
  if (rc >= 0) return true;
  // Past the match limit, the heap limit or the JIT stack: the input (with
  // this pattern) is too costly. The pattern came from a file, the text from
  // a caller; the message names both.
  throw InvalidInput("regex matching stopped: " + pcre2_message(rc) + " (pattern: " + code_->pattern.substr(0, 200) +
                     ", input of " + std::to_string(text.size()) + " bytes)");
}

void Regex::for_each_match(std::string_view text, const std::function<void(size_t, size_t)>& fn) const {
  Match match(code_->code);
  size_t start = 0;
  while (start < text.size()) {
    if (!match_at(text, start, 0, match)) return;
    const size_t begin = match.ovector()[0], end = match.ovector()[1];
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

bool Regex::matches_whole(std::string_view text) const {
  Match match(code_->code);
  return match_at(text, 0, PCRE2_ANCHORED | PCRE2_ENDANCHORED, match);
}

std::optional<std::string> Regex::find_group(std::string_view text, int group) const {
  uint32_t groups = 0;
  pcre2_pattern_info(code_->code, PCRE2_INFO_CAPTURECOUNT, &groups);
  Match match(code_->code);
  if (group < 0 || static_cast<uint32_t>(group) > groups || !match_at(text, 0, 0, match)) return std::nullopt;
  const PCRE2_SIZE* ovector = match.ovector();
  const PCRE2_SIZE begin = ovector[2 * group], end = ovector[2 * group + 1];
  if (begin == PCRE2_UNSET) return std::nullopt;
  return std::string(text.substr(begin, end - begin));
}

}  // namespace semroute
