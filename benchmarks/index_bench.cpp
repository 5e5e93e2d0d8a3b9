// KNN search latency: one query against N stored 768-dim vectors, the
// router's few-shot intent and semantic-cache lookup. `search` is the index
// (int8 scan + exact float32 rescoring of the rows that can still win);
// `float32_scan` is the plain baseline (one float32 matrix-vector product
// through BLAS, then a partial sort), measured in the same run. Both exact,
// one thread.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "classifiers/vector_index.h"

namespace {

constexpr int64_t kDim = 768;

struct Data {
  std::vector<float> rows, query;
};

Data make_data(int64_t n) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  Data d{std::vector<float>(static_cast<size_t>(n * kDim)), std::vector<float>(kDim)};
  for (auto& x : d.rows) x = normal(rng);
  for (auto& x : d.query) x = normal(rng);
  return d;
}

void search(benchmark::State& state) {
  at::set_num_threads(1);
  const int64_t n = state.range(0);
  const Data d = make_data(n);
  semroute::VectorIndex index(kDim);
  for (int64_t i = 0; i < n; ++i) index.add(d.rows.data() + i * kDim, kDim);
  int64_t rescored = 0;
  for (auto _ : state) benchmark::DoNotOptimize(index.search(d.query.data(), kDim, 5, &rescored));
  state.counters["rescored"] = static_cast<double>(rescored);
  state.counters["vectors/s"] = benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}

void float32_scan(benchmark::State& state) {
  at::set_num_threads(1);
  const int64_t n = state.range(0);
  Data d = make_data(n);
  const at::Tensor rows = at::from_blob(d.rows.data(), {n, kDim});
  const at::Tensor unit = rows / rows.norm(2, {1}, true);
  const at::Tensor query = at::from_blob(d.query.data(), {kDim});
  for (auto _ : state) {
    const at::Tensor scores = at::mv(unit, query);
    const float* s = scores.data_ptr<float>();
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + 5, order.end(), [s](int64_t a, int64_t b) { return s[a] > s[b]; });
    benchmark::DoNotOptimize(order.data());
  }
  state.counters["vectors/s"] = benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(search)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMicrosecond);
BENCHMARK(float32_scan)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
