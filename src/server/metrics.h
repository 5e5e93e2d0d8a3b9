// What `semroute serve` exposes at /metrics, in Prometheus' text format:
// requests and errors by endpoint and status, latency histograms, batch
// sizes, in-flight requests per model. Thread-safe; counters only grow.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "runtime/result_cache.h"

namespace semroute {

class Metrics {
 public:
  // Upper bounds of the latency buckets, in seconds (Prometheus' `le`).
  static constexpr std::array<double, 12> kLatencyBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                             0.05,   0.1,   0.25,   0.5,   1.0,  5.0};

  void record(const std::string& endpoint, int status, double seconds);
  void record_cache(bool hit);
  // Items a 200 answered with an error of their own (the runtime contract's
  // item errors: deadline_exceeded, max_length_exceeded, …).
  void record_item_errors(const std::string& endpoint, const std::map<std::string, size_t>& errors);
  // The in-flight gauge of a model ("queue depth").
  void set_in_flight(const std::string& model, int64_t value);
  void set_model_bytes(const std::string& model, int64_t bytes);
  // The contract's result cache (runtime/result_cache.h).
  void set_result_cache(const ResultCacheStats& stats);

  std::string prometheus_text() const;

 private:
  struct Histogram {
    std::array<uint64_t, kLatencyBuckets.size()> buckets{};
    uint64_t count = 0;
    double sum = 0;
  };
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;  // (endpoint, status) -> count
  std::map<std::string, Histogram> latency_;                   // endpoint -> histogram
  std::map<std::string, int64_t> in_flight_, model_bytes_;
  uint64_t cache_hits_ = 0, cache_misses_ = 0;
  ResultCacheStats result_cache_;
  std::map<std::pair<std::string, std::string>, uint64_t> item_errors_;  // (endpoint, error) -> count
};

}  // namespace semroute
