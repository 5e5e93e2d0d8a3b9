// make_redis_cache in a build without hiredis.
#include "router/redis_cache.h"
#include "semroute/error.h"

namespace semroute {

std::unique_ptr<SemanticCache> make_redis_cache(int64_t, CacheOptions, RedisOptions) {
  throw Error(ErrorCode::kUnsupported, "semantic cache: this build has no Redis client (install libhiredis-dev and rebuild)");
}

}  // namespace semroute
