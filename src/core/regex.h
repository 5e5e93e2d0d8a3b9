// Regular expressions from files we do not trust (tokenizer.json patterns,
// adapter target_modules / rank_pattern), on PCRE2 with UTF, Unicode
// properties and JIT. Compilation and matching are bounded: the pattern's
// length and nesting are capped (PCRE2 does not recurse on the C stack), and
// every match runs under a match limit and a heap-depth limit, so a
// catastrophic pattern fails with a clear error instead of hanging.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace semroute {

class Regex {
 public:
  enum class Dialect {
    kPcre,       // Perl / Python `re` syntax
    kOniguruma,  // tokenizer.json: \s is Unicode White_Space (U+0085 included)
  };
  static constexpr size_t kMaxPatternBytes = 64 * 1024;

  // Throws LoadError (naming `what`, e.g. "tokenizer regex") if the pattern
  // is too long or does not compile.
  explicit Regex(const std::string& pattern, Dialect dialect = Dialect::kPcre, const std::string& what = "regex");
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Calls fn(begin, end) for every non-overlapping, non-empty match, left to
  // right. `text` must be valid UTF-8. Safe to call from many threads.
  // Throws InvalidInput when a match exceeds the limits.
  void for_each_match(std::string_view text, const std::function<void(size_t, size_t)>& fn) const;
  // Whether the whole of `text` matches.
  bool matches_whole(std::string_view text) const;
  // Capture group `group` of the first match, if there is a match and the
  // pattern has that group.
  std::optional<std::string> find_group(std::string_view text, int group) const;

 private:
  struct Code;
  struct Match;
  // pcre2_match from `start`; true on a match, false on none; throws past a limit.
  bool match_at(std::string_view text, size_t start, uint32_t options, Match& match) const;
  std::unique_ptr<Code> code_;
};

}  // namespace semroute
