// Helpers shared by the semantic cache tests (in memory and on Redis).
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "router/semantic_cache.h"

namespace semroute::test {

// A unit vector of dimension 8 pointing mostly along axis `axis`, turned by
// `angle` radians towards axis (axis + 1) % 8.
inline std::vector<float> direction(int axis, double angle = 0) {
  std::vector<float> v(8, 0.0f);
  v[static_cast<size_t>(axis)] = static_cast<float>(std::cos(angle));
  v[static_cast<size_t>((axis + 1) % 8)] = static_cast<float>(std::sin(angle));
  return v;
}

// The answer found, or "" for a miss.
inline std::string answer(const std::optional<CacheHit>& hit) { return hit ? hit->response : ""; }

}  // namespace semroute::test
