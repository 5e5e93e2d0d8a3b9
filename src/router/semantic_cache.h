// A semantic cache of LLM answers: a prompt's embedding is looked up among
// the embeddings of prompts already answered, and an answer is served when
// one is at least `threshold` similar (cosine). Entries live `ttl`; past
// `capacity` the least recently used goes. Answers are kept per partition
// (the router uses the decision's name: a cached answer is only served for
// the same kind of request it was made for).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace semroute {

struct CacheOptions {
  float threshold = 0.92f;               // cosine similarity for a hit
  std::chrono::seconds ttl{3600};        // 0: entries never expire
  size_t capacity = 10000;               // entries, over every partition
  // The clock (tests move it); steady_clock::now by default.
  std::function<std::chrono::steady_clock::time_point()> now;
  // Bytes of answers and embeddings over every partition: past it the least
  // recently used go; an answer that alone would pass it is not stored.
  size_t max_bytes = size_t{256} << 20;
};

struct CacheHit {
  std::string response;
  float similarity = 0;
};

class SemanticCache {
 public:
  virtual ~SemanticCache() = default;
  // The best live entry of `partition` ("" looks in every partition) at least
  // threshold-similar to `embedding`. Thread-safe.
  virtual std::optional<CacheHit> lookup(const std::string& partition, const std::vector<float>& embedding) = 0;
  // Stores `response` for `embedding`; an entry of the partition as similar
  // as a hit is replaced rather than joined by a near-duplicate. False when
  // the entry alone is larger than max_bytes (not stored). Thread-safe.
  virtual bool store(const std::string& partition, const std::vector<float>& embedding, const std::string& response) = 0;
  // Live entries.
  virtual size_t size() const = 0;
  virtual const CacheOptions& options() const = 0;
};

// What every cache refuses, with InvalidInput: a non-positive dimension, a
// threshold outside (0, 1], no capacity or byte budget, a negative TTL; an embedding of
// another dimension, zero or non-finite.
void check_cache_options(int64_t dimension, const CacheOptions& options);
void check_cache_embedding(int64_t dimension, const std::vector<float>& embedding);
// What an entry counts against max_bytes: its answer and its embedding.
size_t cache_entry_bytes(const std::vector<float>& embedding, const std::string& response);

// In this process: the embeddings in int8 vector indexes (one per partition,
// exact rescoring of the best candidates), a lock around each call.
std::unique_ptr<SemanticCache> make_memory_cache(int64_t dimension, CacheOptions options);

}  // namespace semroute
