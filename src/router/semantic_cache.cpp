#include "router/semantic_cache.h"

#include <cmath>
#include <list>
#include <map>
#include <mutex>

#include "classifiers/vector_index.h"
#include "semroute/error.h"

namespace semroute {
namespace {

using Clock = std::chrono::steady_clock;

class MemoryCache final : public SemanticCache {
 public:
  MemoryCache(int64_t dimension, CacheOptions options) : dimension_(dimension), options_(std::move(options)) {
    check_cache_options(dimension, options_);
    if (!options_.now) options_.now = [] { return Clock::now(); };
  }

  std::optional<CacheHit> lookup(const std::string& partition, const std::vector<float>& embedding) override {
    check(embedding);
    const std::lock_guard<std::mutex> lock(mutex_);
    std::optional<Found> best;
    for (auto& [name, p] : partitions_) {
      if (!partition.empty() && name != partition) continue;
      const auto found = best_live(p, embedding);
      if (found && (!best || found->similarity > best->similarity)) best = found;
    }
    if (!best || best->similarity < options_.threshold) return std::nullopt;
    Entry& e = best->partition->entries[static_cast<size_t>(best->row)];
    lru_.splice(lru_.begin(), lru_, e.lru);  // most recently used
    return CacheHit{e.response, best->similarity};
  }

  bool store(const std::string& partition, const std::vector<float>& embedding, const std::string& response) override {
    check(embedding);
    const size_t bytes = cache_entry_bytes(embedding, response);
    if (bytes > options_.max_bytes) return false;
    const std::lock_guard<std::mutex> lock(mutex_);
    auto it = partitions_.find(partition);
    if (it == partitions_.end()) it = partitions_.emplace(partition, Partition(dimension_)).first;
    Partition& p = it->second;
    const auto found = best_live(p, embedding);
    if (found && found->similarity >= options_.threshold) {
      Entry& e = p.entries[static_cast<size_t>(found->row)];
      p.index.replace(found->row, embedding.data(), dimension_);
      bytes_ += bytes - e.bytes;
      e.response = response;
      e.bytes = bytes;
      e.created = options_.now();
      lru_.splice(lru_.begin(), lru_, e.lru);
      make_room(0);
      return true;
    }
    if (live_ >= options_.capacity) evict(lru_.back().first, lru_.back().second);
    make_room(bytes);
    int64_t row;
    if (!p.free_rows.empty()) {
      row = p.free_rows.back();
      p.index.replace(row, embedding.data(), dimension_);
      p.free_rows.pop_back();
    } else {
      row = p.index.add(embedding.data(), dimension_);
      p.entries.emplace_back();
    }
    Entry& e = p.entries[static_cast<size_t>(row)];
    e.response = response;
    e.bytes = bytes;
    e.created = options_.now();
    e.lru = lru_.emplace(lru_.begin(), &p, row);
    ++live_;
    bytes_ += bytes;
    return true;
  }

  size_t size() const override {
    const std::lock_guard<std::mutex> lock(mutex_);
    return live_;
  }
  const CacheOptions& options() const override { return options_; }

 private:
  struct Partition;
  using LruList = std::list<std::pair<Partition*, int64_t>>;
  struct Entry {
    std::string response;
    size_t bytes = 0;  // cache_entry_bytes
    Clock::time_point created;
    LruList::iterator lru;
  };
  struct Partition {
    explicit Partition(int64_t dimension) : index(dimension) {}
    VectorIndex index;
    std::vector<Entry> entries;  // by row
    std::vector<int64_t> free_rows;
  };
  struct Found {
    Partition* partition;
    int64_t row;
    float similarity;
  };

  void check(const std::vector<float>& embedding) const { check_cache_embedding(dimension_, embedding); }

  bool expired(const Entry& e) const {
    return options_.ttl.count() > 0 && options_.now() - e.created >= options_.ttl;
  }

  // The most similar entry of `p` that has not expired; expired ones found on
  // the way are evicted.
  std::optional<Found> best_live(Partition& p, const std::vector<float>& embedding) {
    while (p.index.live() > 0) {
      const auto top = p.index.search(embedding.data(), dimension_, 1);
      const Entry& e = p.entries[static_cast<size_t>(top[0].row)];
      if (!expired(e)) return Found{&p, top[0].row, top[0].score};
      evict(&p, top[0].row);
    }
    return std::nullopt;
  }

  // Evicts the least recently used until `incoming` more bytes fit (the
  // most recent entry, just stored or replaced, stays).
  void make_room(size_t incoming) {
    while (bytes_ + incoming > options_.max_bytes && lru_.size() > (incoming == 0 ? 1 : 0))
      evict(lru_.back().first, lru_.back().second);
  }

  void evict(Partition* p, int64_t row) {
    Entry& e = p->entries[static_cast<size_t>(row)];
    bytes_ -= e.bytes;
    e.bytes = 0;
    lru_.erase(e.lru);
    e.response.clear();
    e.response.shrink_to_fit();
    p->index.erase(row);
    p->free_rows.push_back(row);
    --live_;
  }

  const int64_t dimension_;
  CacheOptions options_;
  mutable std::mutex mutex_;
  std::map<std::string, Partition> partitions_;
  LruList lru_;  // most recently used first
  size_t live_ = 0;
  size_t bytes_ = 0;  // of the live entries
};

}  // namespace

void check_cache_options(int64_t dimension, const CacheOptions& options) {
  if (dimension <= 0) throw InvalidInput("semantic cache: the dimension must be positive");
  if (!(options.threshold > 0 && options.threshold <= 1))
    throw InvalidInput("semantic cache: the threshold must lie in (0, 1]");
  if (options.capacity == 0) throw InvalidInput("semantic cache: the capacity must be positive");
  if (options.max_bytes == 0) throw InvalidInput("semantic cache: max_bytes must be positive");
  if (options.ttl.count() < 0) throw InvalidInput("semantic cache: the ttl must not be negative");
}

void check_cache_embedding(int64_t dimension, const std::vector<float>& embedding) {
  if (static_cast<int64_t>(embedding.size()) != dimension)
    throw InvalidInput("semantic cache: an embedding of " + std::to_string(embedding.size()) +
                       " values, the cache holds " + std::to_string(dimension));
  double norm = 0;
  for (const float x : embedding) norm += static_cast<double>(x) * x;
  if (!(norm > 0) || !std::isfinite(norm)) throw InvalidInput("semantic cache: a zero or non-finite vector");
}

std::unique_ptr<SemanticCache> make_memory_cache(int64_t dimension, CacheOptions options) {
  return std::make_unique<MemoryCache>(dimension, std::move(options));
}

size_t cache_entry_bytes(const std::vector<float>& embedding, const std::string& response) {
  return response.size() + embedding.size() * sizeof(float);
}

}  // namespace semroute
