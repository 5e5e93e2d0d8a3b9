#include "runtime/result_cache.h"

#include <cstring>

#include "core/sha256.h"

namespace semroute {
namespace {

size_t floats_bytes(const std::vector<float>& v) { return v.size() * sizeof(float); }

// What an answer holds in memory, roughly: its containers' contents.
size_t bytes_of(const CachedResult& result) {
  if (const auto* vector = std::get_if<std::vector<float>>(&result)) return sizeof(*vector) + floats_bytes(*vector);
  const ClassifyAnswer& a = std::get<ClassifyAnswer>(result);
  size_t bytes = sizeof(a) + a.label.size() + floats_bytes(a.probabilities) + floats_bytes(a.scores);
  for (const auto& s : a.selected) bytes += sizeof(s) + s.size();
  for (const auto& s : a.spans) bytes += sizeof(s) + s.label.size() + s.text.size();
  for (const auto& t : a.tokens) bytes += sizeof(t) + floats_bytes(t.probabilities);
  for (const auto& w : a.windows) bytes += sizeof(w) + floats_bytes(w.values);
  return bytes;
}

}  // namespace

CacheKey& CacheKey::add(std::string_view part) {
  const uint64_t size = part.size();
  bytes_.append(reinterpret_cast<const char*>(&size), sizeof(size));
  bytes_.append(part);
  return *this;
}

CacheKey& CacheKey::add(double number) {
  char raw[sizeof(number)];
  std::memcpy(raw, &number, sizeof(number));
  return add(std::string_view(raw, sizeof(raw)));
}

std::string CacheKey::digest() const { return sha256_hex(bytes_); }

ResultCache::ResultCache(size_t max_entries, size_t max_bytes) : max_entries_(max_entries), max_bytes_(max_bytes) {}

std::optional<CachedResult> ResultCache::find(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = index_.find(key);
  if (it == index_.end()) {
    ++misses_;
    return std::nullopt;
  }
  ++hits_;
  order_.splice(order_.begin(), order_, it->second);
  return it->second->result;
}

void ResultCache::insert(const std::string& key, CachedResult result) {
  const size_t bytes = bytes_of(result) + 2 * key.size();
  if (max_entries_ == 0 || bytes > max_bytes_ / 16) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (index_.count(key) != 0) return;  // a concurrent request computed it too
  order_.push_front(Entry{key, std::move(result), bytes});
  index_.emplace(key, order_.begin());
  bytes_ += bytes;
  while (index_.size() > max_entries_ || bytes_ > max_bytes_) {
    bytes_ -= order_.back().bytes;
    index_.erase(order_.back().key);
    order_.pop_back();
  }
}

ResultCacheStats ResultCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return {hits_, misses_, index_.size(), bytes_};
}

}  // namespace semroute
