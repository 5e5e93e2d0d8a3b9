#include "server/metrics.h"

#include <fmt/format.h>

namespace semroute {
namespace {

// A Prometheus label value: backslash, quote and newline escaped (names come
// from the config's fixed set, but nothing reaching the text is trusted).
std::string label(std::string_view value) {
  std::string out;
  for (const char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

void Metrics::record(const std::string& endpoint, int status, double seconds) {
  const std::lock_guard<std::mutex> lock(mutex_);
  ++requests_[{endpoint, status}];
  Histogram& h = latency_[endpoint];
  for (size_t i = 0; i < kLatencyBuckets.size(); ++i)
    if (seconds <= kLatencyBuckets[i]) ++h.buckets[i];
  ++h.count;
  h.sum += seconds;
}

void Metrics::record_cache(bool hit) {
  const std::lock_guard<std::mutex> lock(mutex_);
  ++(hit ? cache_hits_ : cache_misses_);
}

void Metrics::record_item_errors(const std::string& endpoint, const std::map<std::string, size_t>& errors) {
  const std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [error, n] : errors) item_errors_[{endpoint, error}] += n;
}

void Metrics::set_in_flight(const std::string& model, int64_t value) {
  const std::lock_guard<std::mutex> lock(mutex_);
  in_flight_[model] = value;
}

void Metrics::set_model_bytes(const std::string& model, int64_t bytes) {
  const std::lock_guard<std::mutex> lock(mutex_);
  model_bytes_[model] = bytes;
}

void Metrics::set_result_cache(const ResultCacheStats& stats) {
  const std::lock_guard<std::mutex> lock(mutex_);
  result_cache_ = stats;
}

std::string Metrics::prometheus_text() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  out += "# HELP semroute_requests_total Requests by endpoint and HTTP status.\n"
         "# TYPE semroute_requests_total counter\n";
  for (const auto& [key, n] : requests_)
    out += fmt::format("semroute_requests_total{{endpoint=\"{}\",status=\"{}\"}} {}\n", label(key.first), key.second, n);
  out += "# HELP semroute_request_seconds Request latency by endpoint.\n"
         "# TYPE semroute_request_seconds histogram\n";
  for (const auto& [endpoint, h] : latency_) {
    const std::string endpoint_label = label(endpoint);
    for (size_t i = 0; i < kLatencyBuckets.size(); ++i)
      out += fmt::format("semroute_request_seconds_bucket{{endpoint=\"{}\",le=\"{}\"}} {}\n", endpoint_label,
                         kLatencyBuckets[i], h.buckets[i]);
    out += fmt::format("semroute_request_seconds_bucket{{endpoint=\"{}\",le=\"+Inf\"}} {}\n", endpoint_label, h.count);
    out += fmt::format("semroute_request_seconds_sum{{endpoint=\"{}\"}} {}\n", endpoint_label, h.sum);
    out += fmt::format("semroute_request_seconds_count{{endpoint=\"{}\"}} {}\n", endpoint_label, h.count);
  }
  out += "# HELP semroute_item_errors_total Items answered with their own error, by endpoint and error.\n"
         "# TYPE semroute_item_errors_total counter\n";
  for (const auto& [key, n] : item_errors_)
    out += fmt::format("semroute_item_errors_total{{endpoint=\"{}\",error=\"{}\"}} {}\n", label(key.first),
                       label(key.second), n);
  out += "# HELP semroute_in_flight Requests being answered or waiting, by model.\n"
         "# TYPE semroute_in_flight gauge\n";
  for (const auto& [model, n] : in_flight_) out += fmt::format("semroute_in_flight{{model=\"{}\"}} {}\n", label(model), n);
  out += "# HELP semroute_model_bytes Weights in memory, by model.\n# TYPE semroute_model_bytes gauge\n";
  for (const auto& [model, n] : model_bytes_) out += fmt::format("semroute_model_bytes{{model=\"{}\"}} {}\n", label(model), n);
  out += "# HELP semroute_cache_total Semantic cache lookups by outcome.\n# TYPE semroute_cache_total counter\n";
  out += fmt::format("semroute_cache_total{{outcome=\"hit\"}} {}\nsemroute_cache_total{{outcome=\"miss\"}} {}\n",
                     cache_hits_, cache_misses_);
  out += "# HELP semroute_result_cache_total Result cache lookups of the contract's items, by outcome.\n"
         "# TYPE semroute_result_cache_total counter\n";
  out += fmt::format("semroute_result_cache_total{{outcome=\"hit\"}} {}\nsemroute_result_cache_total{{outcome=\"miss\"}} {}\n",
                     result_cache_.hits, result_cache_.misses);
  out += "# HELP semroute_result_cache_entries Answers the result cache holds.\n# TYPE semroute_result_cache_entries gauge\n";
  out += fmt::format("semroute_result_cache_entries {}\n", result_cache_.entries);
  out += "# HELP semroute_result_cache_bytes What they hold in memory.\n# TYPE semroute_result_cache_bytes gauge\n";
  out += fmt::format("semroute_result_cache_bytes {}\n", result_cache_.bytes);
  return out;
}

}  // namespace semroute
