// Unicode regular expressions (PCRE2 with UTF, Unicode properties and JIT) for
// the patterns tokenizer.json files carry (\p{L}, \p{N}, lookaheads, (?i:…)).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace semroute {

class Regex {
 public:
  // Throws LoadError if the pattern does not compile.
  explicit Regex(const std::string& pattern);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Calls fn(begin, end) for every non-overlapping, non-empty match, left to
  // right. `text` must be valid UTF-8. Safe to call from many threads.
  void for_each_match(std::string_view text, const std::function<void(size_t, size_t)>& fn) const;

 private:
  struct Code;
  std::unique_ptr<Code> code_;
};

}  // namespace semroute
