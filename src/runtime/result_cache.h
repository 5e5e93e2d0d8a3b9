// The runtime's result cache: answers of items already computed, keyed by
// what decides them (the model's identity, the head or representation asked,
// the options that shape the answer, the input itself), bounded in entries
// and in bytes, least recently used out first. A router asks the same
// prompts again and again (retries, one prompt through several decision
// stages); a hit costs a SHA-256 of the input instead of a forward.
// Only answers without an item error are kept (a deadline_exceeded is not an
// answer). Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "runtime/task_heads.h"

namespace semroute {

// A classify item's answer, or an embedding's full-width vector.
using CachedResult = std::variant<ClassifyAnswer, std::vector<float>>;

// Builds a key: each part is length-prefixed, so ("ab", "c") and ("a", "bc") differ.
class CacheKey {
 public:
  CacheKey& add(std::string_view part);
  CacheKey& add(double number);
  // The SHA-256 of the parts.
  std::string digest() const;

 private:
  std::string bytes_;
};

struct ResultCacheStats {
  uint64_t hits = 0, misses = 0;
  size_t entries = 0, bytes = 0;
};

class ResultCache {
 public:
  // At most max_entries answers of at most max_bytes together (an answer
  // over a sixteenth of max_bytes is not kept); 0 entries: nothing is kept.
  explicit ResultCache(size_t max_entries, size_t max_bytes = size_t{64} << 20);

  std::optional<CachedResult> find(const std::string& key) const;
  void insert(const std::string& key, CachedResult result);
  ResultCacheStats stats() const;
  bool enabled() const { return max_entries_ > 0; }

 private:
  struct Entry {
    std::string key;
    CachedResult result;
    size_t bytes;
  };
  const size_t max_entries_, max_bytes_;
  mutable std::mutex mutex_;
  mutable std::list<Entry> order_;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
  size_t bytes_ = 0;
  mutable uint64_t hits_ = 0, misses_ = 0;
};

}  // namespace semroute
