// The semantic cache on Redis, shared by router replicas. Debian's Redis has
// no vector search, so each replica mirrors the embeddings in its own int8
// index and Redis holds the truth:
//
//   <prefix>seq            INCR: entry ids
//   <prefix>log            sorted set id -> id: what a replica has not seen yet
//   <prefix>clock          INCR: the replicas' shared clock of uses
//   <prefix>lru            sorted set id -> last use: capacity eviction
//   <prefix>e:<id>         hash {partition, vec (float32 bytes), response, created}
//                          with EXPIRE = ttl
//
// A lookup first pulls the entries added since the last one (any replica's),
// searches the mirror, and reads the answer of the best match; an entry gone
// from Redis (expired, evicted by another replica) leaves the mirror then.
// A store writes the hash, the log and the LRU, and evicts the least recently
// used past the capacity. A lookup that cannot reach Redis is a miss (the
// request goes to the model, with a warning in the log); a store that cannot
// is an error.
#pragma once

#include <memory>
#include <string>

#include "router/semantic_cache.h"

namespace semroute {

struct RedisOptions {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string prefix = "semroute:cache:";
  int timeout_ms = 200;  // per command
};

// Throws Error (kUnsupported when this build has no hiredis, kNotFound when
// the server cannot be reached at first).
std::unique_ptr<SemanticCache> make_redis_cache(int64_t dimension, CacheOptions options, RedisOptions redis);

}  // namespace semroute
