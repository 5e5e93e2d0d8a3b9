// Statistics the benchmarks report, without libtorch (the C API benchmarks
// include it too).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace semroute::bench {

// The q-quantile (0 <= q <= 1) of v by the nearest rank below; 0 for no values.
inline double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

}  // namespace semroute::bench
