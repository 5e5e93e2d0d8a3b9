// Helpers shared by the model benchmarks: timing, argument lists, and the
// machine's fp32 GEMM rate that every "floor" is measured against.
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/autograd/profiler_legacy.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <cstdint>
#include <sstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/cpu_features.h"
#include "models/packed_gemm.h"
#include "models/random_model.h"

namespace semroute::bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

inline std::vector<int64_t> parse_list(const std::string& csv) {
  std::vector<int64_t> out;
  std::stringstream in(csv);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::stoll(item));
  return out;
}

// Flags every model benchmark takes: --preset, --threads, --lengths,
// --batches, --dtype.
struct BenchArgs {
  std::string preset;
  int threads = 2;
  std::vector<int64_t> lengths;
  std::vector<int64_t> batches = {1, 8};
  std::string dtype = "float32";
  std::string profile;  // when set, one run per row is traced to <profile>-<tokens>x<batch>.json
};

inline BenchArgs parse_bench_args(int argc, char** argv, BenchArgs args) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--preset") args.preset = value;
    if (flag == "--threads") args.threads = std::stoi(value);
    if (flag == "--lengths") args.lengths = parse_list(value);
    if (flag == "--batches") args.batches = parse_list(value);
    if (flag == "--dtype") args.dtype = value;
    if (flag == "--profile") args.profile = value;
  }
  return args;
}

// The machine's fp32 GEMM rate in GFLOP/s: the best of ten [512 x 768] x
// [768 x 2304] products (a fused QKV / GeGLU input shape) through both the
// BLAS libtorch calls and the packed oneDNN GEMM the models use, whichever is
// faster, so the floor never credits us for picking the better library.
// Re-measured beside each row: shared hosts drift.
inline double peak_gemm_gflops() {
  const at::Tensor x = at::randn({512, 768}), w = at::randn({2304, 768});
  const auto packed = semroute::PackedGemm::pack(w, at::Tensor());
  const auto best_of_ten = [](auto product) {
    product();
    double best = 1e30;
    for (int i = 0; i < 10; ++i) {
      const auto start = Clock::now();
      product();
      best = std::min(best, seconds_since(start));
    }
    return best;
  };
  double best = best_of_ten([&] { at::linear(x, w); });
  if (packed != nullptr) best = std::min(best, best_of_ten([&] { (*packed)(x); }));
  return 2.0 * 512 * 768 * 2304 / best / 1e9;
}

// A random-weight ModernBERT sequence classifier of `preset` size with the
// real tokenizer in `dir` (written once, kept between runs).
inline void write_classification_model(const std::string& preset, const std::filesystem::path& dir) {
  if (std::filesystem::exists(dir / "model.safetensors")) return;
  semroute::RandomModelSpec spec;
  spec.preset = preset;
  spec.labels = {"math", "law", "biology", "other"};
  spec.tokenizer = std::filesystem::path(SEMROUTE_SOURCE_DIR) / "tests/data/tokenizers/modernbert/tokenizer.json";
  semroute::write_random_modernbert(spec, dir);
}

// Median seconds of `run` over at least 3 and at most 20 runs (~3 s budget),
// after one warm-up.
template <typename Fn>
double median_seconds(Fn run) {
  run();
  std::vector<double> times;
  const auto budget = Clock::now();
  while (times.size() < 3 || (times.size() < 20 && seconds_since(budget) < 3.0)) {
    const auto start = Clock::now();
    run();
    times.push_back(seconds_since(start));
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Runs `run` once under the libtorch profiler, writing a chrome://tracing
// file named <prefix>-<tokens>x<batch>.json (no-op without a prefix).
template <typename Fn>
void trace_once(const std::string& prefix, int64_t tokens, int64_t batch, Fn run) {
  if (prefix.empty()) return;
  torch::autograd::profiler::RecordProfile record(prefix + "-" + std::to_string(tokens) + "x" + std::to_string(batch) +
                                                  ".json");
  run();
}

// The model's linear layers replayed alone: `layers` copies of each [in ->
// out] shape with distinct weights (so they stream from memory as the
// model's do), through the packed GEMM the model uses. Its time is what the
// GEMMs alone cost at a given size on this machine; ours / replay is the
// price of everything else (attention, norms, activations, glue).
class GemmReplay {
 public:
  GemmReplay(const std::vector<std::pair<int64_t, int64_t>>& shapes, int64_t layers, c10::ScalarType dtype,
             bool int8 = false)
      : dtype_(dtype) {
    for (int64_t layer = 0; layer < layers; ++layer)
      for (const auto& [in, out] : shapes)
        weights_.push_back(semroute::PackedGemm::pack(at::randn({out, in}).to(dtype), {}, int8));
  }
  double median_seconds_for(int64_t rows) const {
    std::vector<at::Tensor> inputs;
    for (const auto& w : weights_) inputs.push_back(at::randn({rows, w->in_features()}).to(dtype_));
    return median_seconds([&] {
      for (size_t i = 0; i < weights_.size(); ++i) (*weights_[i])(inputs[i]);
    });
  }

 private:
  std::vector<std::unique_ptr<semroute::PackedGemm>> weights_;
  c10::ScalarType dtype_;
};

}  // namespace semroute::bench
