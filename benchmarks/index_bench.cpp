// KNN search latency: one query against N stored 768-dim vectors (exact,
// single thread), the router's few-shot intent and semantic-cache lookup.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "classifiers/vector_index.h"

namespace {

void search(benchmark::State& state) {
  const int64_t n = state.range(0), dim = 768;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  semroute::VectorIndex index(dim);
  std::vector<float> v(dim);
  for (int64_t i = 0; i < n; ++i) {
    for (auto& x : v) x = normal(rng);
    index.add(v.data(), dim);
  }
  for (auto& x : v) x = normal(rng);
  for (auto _ : state) benchmark::DoNotOptimize(index.search(v.data(), dim, 5));
  state.counters["vectors/s"] = benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(search)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
