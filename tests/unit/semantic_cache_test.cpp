// The semantic cache: hits by similarity, partitions, TTL on a clock the test
// moves, LRU eviction at capacity, replacement of near-duplicates, and many
// threads at once (run under TSan by scripts/test-tsan.sh).
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <thread>

#include "router/semantic_cache.h"
#include "cache_test_util.h"
#include "test_util.h"

namespace semroute::test {
namespace {

using Clock = std::chrono::steady_clock;

struct FakeClock {
  Clock::time_point now = Clock::time_point{} + std::chrono::hours(1);
  CacheOptions options(size_t capacity = 100, std::chrono::seconds ttl = std::chrono::seconds(60)) {
    CacheOptions o;
    o.threshold = 0.9f;
    o.capacity = capacity;
    o.ttl = ttl;
    o.now = [this] { return now; };
    return o;
  }
};

TEST(SemanticCache, HitsAboveTheThresholdOnly) {
  FakeClock clock;
  const auto cache = make_memory_cache(8, clock.options());
  EXPECT_FALSE(cache->lookup("", direction(0)));  // empty
  cache->store("math", direction(0), "four");
  const auto hit = cache->lookup("math", direction(0, 0.3));  // cos 0.3 = 0.955
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->response, "four");
  EXPECT_NEAR(hit->similarity, std::cos(0.3), 1e-5);
  EXPECT_FALSE(cache->lookup("math", direction(0, 0.5)));  // cos 0.5 = 0.878 < 0.9
  EXPECT_FALSE(cache->lookup("math", direction(3)));
  EXPECT_FALSE(cache->lookup("law", direction(0)));  // another partition
  EXPECT_TRUE(cache->lookup("", direction(0)));       // any partition
}

TEST(SemanticCache, EntriesExpireAfterTheirTtl) {
  FakeClock clock;
  const auto cache = make_memory_cache(8, clock.options());
  cache->store("p", direction(0), "old");
  clock.now += std::chrono::seconds(59);
  EXPECT_TRUE(cache->lookup("p", direction(0)));
  cache->store("p", direction(2), "newer");
  clock.now += std::chrono::seconds(1);  // the first is 60 s old
  EXPECT_FALSE(cache->lookup("p", direction(0)));
  EXPECT_EQ(cache->size(), 1u);  // evicted when found expired
  EXPECT_TRUE(cache->lookup("p", direction(2)));
  clock.now += std::chrono::hours(10);
  EXPECT_FALSE(cache->lookup("p", direction(2)));
  EXPECT_EQ(cache->size(), 0u);
}

TEST(SemanticCache, TheLeastRecentlyUsedGoesAtCapacity) {
  FakeClock clock;
  const auto cache = make_memory_cache(8, clock.options(3));
  cache->store("p", direction(0), "a");
  cache->store("q", direction(1), "b");
  cache->store("p", direction(2), "c");
  EXPECT_TRUE(cache->lookup("p", direction(0)));  // a is now the most recent; b the least
  cache->store("p", direction(3), "d");
  EXPECT_EQ(cache->size(), 3u);
  EXPECT_FALSE(cache->lookup("q", direction(1)));
  EXPECT_TRUE(cache->lookup("p", direction(0)));
  EXPECT_TRUE(cache->lookup("p", direction(2)));
  EXPECT_TRUE(cache->lookup("p", direction(3)));
  // Freed rows are reused: storing more keeps the size at the capacity.
  for (int i = 0; i < 8; ++i) cache->store("p", direction(i, 0.6), "e" + std::to_string(i));
  EXPECT_EQ(cache->size(), 3u);
  EXPECT_EQ(answer(cache->lookup("p", direction(7, 0.6))), "e7");
}

// Answers and embeddings count against max_bytes: past it the least
// recently used go; an answer that alone would pass it is not stored.
TEST(SemanticCache, TheLeastRecentlyUsedGoPastMaxBytes) {
  FakeClock clock;
  CacheOptions options = clock.options();
  const size_t entry = cache_entry_bytes(direction(0), std::string(1000, 'x'));  // 1000 + 8 floats
  options.max_bytes = 3 * entry;
  const auto cache = make_memory_cache(8, options);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(cache->store("p", direction(i), std::string(1000, 'a' + i)));
  EXPECT_TRUE(cache->lookup("p", direction(0)));  // 0 is now the most recent; 1 the least
  EXPECT_TRUE(cache->store("p", direction(3), std::string(1000, 'd')));
  EXPECT_EQ(cache->size(), 3u);
  EXPECT_FALSE(cache->lookup("p", direction(1)));
  EXPECT_TRUE(cache->store("p", direction(4), std::string(2 * 1000 + 32, 'e')));  // as big as two: two go
  EXPECT_EQ(cache->size(), 2u);
  EXPECT_FALSE(cache->store("p", direction(5), std::string(3 * entry, 'f')));  // larger than the whole budget
  EXPECT_EQ(cache->size(), 2u);
  EXPECT_TRUE(cache->lookup("p", direction(4)));
  // A replaced answer's new size counts: growing it evicts the others.
  EXPECT_TRUE(cache->store("p", direction(4, 0.1), std::string(3 * entry - 64, 'g')));
  EXPECT_EQ(cache->size(), 1u);
  EXPECT_EQ(answer(cache->lookup("p", direction(4))).size(), 3 * entry - 64);
}

TEST(SemanticCache, ANearDuplicateReplacesTheEntry) {
  FakeClock clock;
  const auto cache = make_memory_cache(8, clock.options());
  cache->store("p", direction(0), "first");
  cache->store("p", direction(0, 0.1), "second");
  EXPECT_EQ(cache->size(), 1u);
  EXPECT_EQ(answer(cache->lookup("p", direction(0))), "second");
}

TEST(SemanticCache, RefusesBadInput) {
  FakeClock clock;
  const auto cache = make_memory_cache(8, clock.options());
  expect_error([&] { cache->store("p", std::vector<float>(7, 1.0f), "x"); }, ErrorCode::kInvalidArgument,
               "an embedding of 7 values, the cache holds 8");
  expect_error([&] { cache->lookup("p", std::vector<float>(8, 0.0f)); }, ErrorCode::kInvalidArgument,
               "zero or non-finite");
  expect_error([&] { cache->store("p", std::vector<float>(8, NAN), "x"); }, ErrorCode::kInvalidArgument,
               "zero or non-finite");
  EXPECT_EQ(cache->size(), 0u);
  CacheOptions bad = clock.options();
  bad.threshold = 1.5f;
  expect_error([&] { make_memory_cache(8, bad); }, ErrorCode::kInvalidArgument, "threshold");
  expect_error([&] { make_memory_cache(8, clock.options(0)); }, ErrorCode::kInvalidArgument, "capacity");
}

TEST(SemanticCache, ManyThreadsAtOnce) {
  const auto cache = make_memory_cache(8, CacheOptions{0.9f, std::chrono::seconds(0), 64, {}});
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const int axis = (t + i) % 8;
        cache->store("p" + std::to_string(t % 2), direction(axis), std::to_string(axis));
        const auto hit = cache->lookup("p" + std::to_string(t % 2), direction(axis));
        if (hit && hit->response != std::to_string(axis)) ++wrong;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong, 0);
  EXPECT_LE(cache->size(), 16u);  // 8 directions x 2 partitions
}

}  // namespace
}  // namespace semroute::test
