#include "router/redis_cache.h"

#include <hiredis.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "classifiers/vector_index.h"
#include "core/log.h"
#include "semroute/error.h"

namespace semroute {
namespace {

using Clock = std::chrono::steady_clock;

struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyFree>;

struct ContextFree {
  void operator()(redisContext* c) const { redisFree(c); }
};

// One connection, reopened after a failure; commands throw Error.
class Connection {
 public:
  explicit Connection(RedisOptions options) : options_(std::move(options)) {}

  // A command with binary-safe arguments.
  Reply run(const std::vector<std::string>& args) {
    if (!context_) connect();
    std::vector<const char*> argv;
    std::vector<size_t> lengths;
    for (const auto& a : args) {
      argv.push_back(a.data());
      lengths.push_back(a.size());
    }
    auto* reply = static_cast<redisReply*>(
        redisCommandArgv(context_.get(), static_cast<int>(args.size()), argv.data(), lengths.data()));
    if (reply == nullptr) {
      const std::string why = context_->errstr;
      context_.reset();  // reconnect next time
      throw Error(ErrorCode::kNotFound, where() + ": " + why);
    }
    Reply owned(reply);
    if (reply->type == REDIS_REPLY_ERROR) throw Error(ErrorCode::kInternal, where() + ": " + std::string(reply->str, reply->len));
    return owned;
  }

  void connect() {
    const timeval timeout{options_.timeout_ms / 1000, (options_.timeout_ms % 1000) * 1000};
    std::unique_ptr<redisContext, ContextFree> c(redisConnectWithTimeout(options_.host.c_str(), options_.port, timeout));
    if (!c) throw Error(ErrorCode::kOutOfMemory, where() + ": cannot allocate a connection");
    if (c->err) throw Error(ErrorCode::kNotFound, where() + ": " + c->errstr);
    redisSetTimeout(c.get(), timeout);
    context_ = std::move(c);
  }

  std::string where() const { return "redis " + options_.host + ":" + std::to_string(options_.port); }

 private:
  RedisOptions options_;
  std::unique_ptr<redisContext, ContextFree> context_;
};

int64_t as_integer(const Reply& r) { return r->type == REDIS_REPLY_INTEGER ? r->integer : 0; }

class RedisCache final : public SemanticCache {
 public:
  RedisCache(int64_t dimension, CacheOptions options, RedisOptions redis)
      : dimension_(dimension), options_(std::move(options)), prefix_(redis.prefix), connection_(std::move(redis)) {
    check_cache_options(dimension, options_);
    connection_.connect();
  }

  std::optional<CacheHit> lookup(const std::string& partition, const std::vector<float>& embedding) override {
    check(embedding);
    const std::lock_guard<std::mutex> lock(mutex_);
    try {
      sync();
      // The best mirrored entries first; one gone from Redis leaves the mirror.
      while (true) {
        const auto best = best_match(partition, embedding);
        if (!best || best->similarity < options_.threshold) return std::nullopt;
        const Reply r = connection_.run({"HGET", key(best->id), "response"});
        if (r->type == REDIS_REPLY_STRING) {
          touch(best->id);
          return CacheHit{std::string(r->str, r->len), best->similarity};
        }
        forget(best->id);
      }
    } catch (const Error& e) {
      warn_once(e.what());
      return std::nullopt;
    }
  }

  // (The shared store's total is Redis's own to bound: its maxmemory and an
  // eviction policy; one answer is bounded here.)
  bool store(const std::string& partition, const std::vector<float>& embedding, const std::string& response) override {
    check(embedding);
    if (cache_entry_bytes(embedding, response) > options_.max_bytes) return false;
    const std::lock_guard<std::mutex> lock(mutex_);
    const int64_t id = as_integer(connection_.run({"INCR", prefix_ + "seq"}));
    const std::string bytes(reinterpret_cast<const char*>(embedding.data()), embedding.size() * sizeof(float));
    connection_.run({"HSET", key(id), "partition", partition, "vec", bytes, "response", response});
    if (options_.ttl.count() > 0) connection_.run({"EXPIRE", key(id), std::to_string(options_.ttl.count())});
    connection_.run({"ZADD", prefix_ + "log", std::to_string(id), std::to_string(id)});
    touch(id);
    const int64_t count = as_integer(connection_.run({"ZCARD", prefix_ + "lru"}));
    if (count > static_cast<int64_t>(options_.capacity)) {
      const Reply evicted =
          connection_.run({"ZPOPMIN", prefix_ + "lru", std::to_string(count - static_cast<int64_t>(options_.capacity))});
      for (size_t i = 0; evicted->type == REDIS_REPLY_ARRAY && i + 1 < evicted->elements; i += 2) {
        const std::string old(evicted->element[i]->str, evicted->element[i]->len);
        connection_.run({"DEL", prefix_ + "e:" + old});
        connection_.run({"ZREM", prefix_ + "log", old});
      }
    }
    sync();  // our own entry, and any other replica's since the last look
    return true;
  }

  size_t size() const override {
    const std::lock_guard<std::mutex> lock(mutex_);
    try {
      return static_cast<size_t>(as_integer(connection_.run({"ZCARD", prefix_ + "lru"})));
    } catch (const Error&) {
      return 0;
    }
  }
  const CacheOptions& options() const override { return options_; }

 private:
  struct Partition {
    explicit Partition(int64_t dimension) : index(dimension) {}
    VectorIndex index;
    std::vector<int64_t> ids;  // by row
    std::vector<int64_t> free_rows;
  };
  struct Best {
    int64_t id;
    float similarity;
  };

  void check(const std::vector<float>& embedding) const { check_cache_embedding(dimension_, embedding); }

  std::string key(int64_t id) const { return prefix_ + "e:" + std::to_string(id); }

  // Marks `id` used now. The time is a counter in Redis, shared by replicas
  // whatever their clocks (milliseconds tied, and the eviction order with them).
  void touch(int64_t id) {
    const int64_t now = as_integer(connection_.run({"INCR", prefix_ + "clock"}));
    connection_.run({"ZADD", prefix_ + "lru", std::to_string(now), std::to_string(id)});
  }

  // Mirrors the entries logged since the last sync.
  void sync() {
    const Reply ids = connection_.run({"ZRANGEBYSCORE", prefix_ + "log", "(" + std::to_string(last_seen_), "+inf"});
    if (ids->type != REDIS_REPLY_ARRAY) return;
    for (size_t i = 0; i < ids->elements; ++i) {
      const std::string text(ids->element[i]->str, ids->element[i]->len);
      char* end = nullptr;
      const long long id = std::strtoll(text.c_str(), &end, 10);
      if (end == text.c_str() || *end != '\0' || id <= 0) continue;  // not ours
      last_seen_ = std::max<int64_t>(last_seen_, id);
      const Reply fields = connection_.run({"HMGET", key(id), "partition", "vec"});
      if (fields->type != REDIS_REPLY_ARRAY || fields->elements != 2 || fields->element[0]->type != REDIS_REPLY_STRING ||
          fields->element[1]->type != REDIS_REPLY_STRING)
        continue;  // expired or evicted already
      const redisReply* vec = fields->element[1];
      if (vec->len != static_cast<size_t>(dimension_) * sizeof(float)) continue;  // another model's entry
      std::vector<float> embedding(static_cast<size_t>(dimension_));
      std::memcpy(embedding.data(), vec->str, vec->len);
      mirror(std::string(fields->element[0]->str, fields->element[0]->len), id, embedding);
    }
  }

  void mirror(const std::string& partition, int64_t id, const std::vector<float>& embedding) {
    auto it = partitions_.find(partition);
    if (it == partitions_.end()) it = partitions_.emplace(partition, Partition(dimension_)).first;
    Partition& p = it->second;
    int64_t row;
    try {
      if (!p.free_rows.empty()) {
        row = p.free_rows.back();
        p.index.replace(row, embedding.data(), dimension_);
        p.free_rows.pop_back();
        p.ids[static_cast<size_t>(row)] = id;
      } else {
        row = p.index.add(embedding.data(), dimension_);
        p.ids.push_back(id);
      }
    } catch (const InvalidInput&) {
      return;  // a zero or non-finite vector: not servable
    }
    where_[id] = {&p, row};
  }

  std::optional<Best> best_match(const std::string& partition, const std::vector<float>& embedding) {
    std::optional<Best> best;
    for (auto& [name, p] : partitions_) {
      if ((!partition.empty() && name != partition) || p.index.live() == 0) continue;
      const auto top = p.index.search(embedding.data(), dimension_, 1);
      if (!best || top[0].score > best->similarity) best = Best{p.ids[static_cast<size_t>(top[0].row)], top[0].score};
    }
    return best;
  }

  void forget(int64_t id) {
    const auto it = where_.find(id);
    if (it == where_.end()) return;
    auto [p, row] = it->second;
    p->index.erase(row);
    p->free_rows.push_back(row);
    where_.erase(it);
    connection_.run({"ZREM", prefix_ + "log", std::to_string(id)});
  }

  void warn_once(const std::string& why) {
    const auto now = Clock::now();
    if (now - last_warning_ < std::chrono::seconds(10)) return;
    last_warning_ = now;
    log_message(LogLevel::kWarning, "semantic cache: a lookup failed, served as a miss: " + why);
  }

  const int64_t dimension_;
  CacheOptions options_;
  const std::string prefix_;
  mutable std::mutex mutex_;
  mutable Connection connection_;
  std::map<std::string, Partition> partitions_;
  std::map<int64_t, std::pair<Partition*, int64_t>> where_;  // id -> (partition, row)
  int64_t last_seen_ = 0;
  Clock::time_point last_warning_{};
};

}  // namespace

std::unique_ptr<SemanticCache> make_redis_cache(int64_t dimension, CacheOptions options, RedisOptions redis) {
  return std::make_unique<RedisCache>(dimension, std::move(options), std::move(redis));
}

}  // namespace semroute
