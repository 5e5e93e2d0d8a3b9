// The encoder's GEMMs against the machine's measured ceilings, at 1 and N
// threads: ModernBERT-base's four linear shapes, 22 layers of distinct
// weights each (so the weights stream from memory as in a forward, not from
// cache), through PackedGemm as the models call it (int8 with its quantize
// pass; each shape on the engine PackedGemm chose, SEMROUTE_F32_GEMM /
// SEMROUTE_INT8_GEMM pin one). Few rows are bound by the weight stream (GB/s
// against the read bandwidth), many rows by the multiply-add rate (GOPS
// against the int8 / fp32 peak). First our int8 and fp32 kernels alone (their
// weights from memory, then one layer's from cache: the difference is what the
// weight stream costs), then both precisions as the models run them.
//
//   semroute_kernel_bench [--threads 2] [--lengths 16,64,256,512]
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench_util.h"
#include "core/cpu_features.h"
#include "core/runtime.h"
#include "kernels/f32_gemm.h"
#include "kernels/int8_gemm.h"
#include "machine_ceilings.h"
#include "models/packed_gemm.h"

namespace {

using namespace semroute::bench;

struct Shape {
  int64_t in, out;
};
constexpr int kLayers = 22;
const std::vector<Shape> kShapes = {{768, 2304}, {768, 768}, {768, 2304}, {1152, 768}};  // Wqkv, Wo, Wi, mlp.Wo

struct Measured {
  double seconds = 0, weight_bytes = 0, ops = 0;
};

Measured measure(const std::vector<std::vector<std::unique_ptr<semroute::PackedGemm>>>& layers, int64_t rows,
                 double bytes_per_weight) {
  Measured m;
  for (size_t s = 0; s < kShapes.size(); ++s) {
    const at::Tensor x = at::randn({rows, kShapes[s].in});
    const auto& weights = layers[s];
    const double seconds = median_seconds([&] {
      for (const auto& w : weights) (*w)(x);
    });
    m.seconds += seconds / kLayers;
    m.weight_bytes += static_cast<double>(kShapes[s].in * kShapes[s].out) * bytes_per_weight;
    m.ops += 2.0 * static_cast<double>(rows * kShapes[s].in * kShapes[s].out);
  }
  return m;
}

// One kernel alone, without PackedGemm's per-call work (int8: its quantize
// pass): inputs made once, panels spread over threads. `make(shape)` gives
// one layer's packed weight, `run(weight, y)` multiplies with it. `layers`
// distinct weights of each shape: kLayers stream them from memory as a
// forward does; 1 keeps one layer's (5 MB in int8, 20 in fp32) in cache
// where the last level holds it, so the two differ by what the weight
// stream costs.
template <class Make, class Run>
Measured measure_kernel(int64_t rows, int layers, double bytes_per_weight, const Make& make, const Run& run) {
  Measured m;
  for (const Shape& shape : kShapes) {
    std::vector<decltype(make(shape))> weights;
    for (int l = 0; l < layers; ++l) weights.push_back(make(shape));
    at::Tensor y = at::empty({rows, shape.out});
    const double seconds = median_seconds([&] {
      for (int l = 0; l < kLayers; ++l) run(*weights[static_cast<size_t>(l % layers)], y);
    });
    m.seconds += seconds / kLayers;
    m.weight_bytes += static_cast<double>(shape.in * shape.out) * bytes_per_weight;
    m.ops += 2.0 * static_cast<double>(rows * shape.in * shape.out);
  }
  return m;
}

Measured measure_int8_kernel(int64_t rows, int layers) {
  using semroute::kernels::PackedInt8Weight;
  const int64_t widest = 1152;
  const at::Tensor a = at::randint(0, semroute::PackedGemm::activation_levels() + 1, {rows, widest}, at::kByte);
  const std::vector<float> scale(2304, 0.01f), row_scale(static_cast<size_t>(rows), 0.01f);
  const std::vector<int32_t> row_zero(static_cast<size_t>(rows), 3);
  const auto make = [&](const Shape& shape) {
    const at::Tensor w = at::randint(-127, 128, {shape.out, shape.in}, at::kChar);
    return std::make_unique<PackedInt8Weight>(w.data_ptr<int8_t>(), shape.out, shape.in, scale.data(),
                                              semroute::kernels::best_int8_path());
  };
  return measure_kernel(rows, layers, 1.0, make, [&](const PackedInt8Weight& weight, at::Tensor& y) {
    semroute::kernels::Int8Output out;
    out.row_scale = row_scale.data();
    out.row_zero = row_zero.data();
    out.y = y.data_ptr<float>();
    out.y_stride = weight.n();
    at::parallel_for(0, weight.panels(), 1, [&](int64_t first, int64_t last) {
      weight.multiply(a.data_ptr<uint8_t>(), widest, rows, first, last, out);
    });
  });
}

Measured measure_f32_kernel(int64_t rows, int layers) {
  using semroute::kernels::PackedF32Weight;
  const int64_t widest = 1152;
  const at::Tensor a = at::randn({rows, widest});
  const auto make = [&](const Shape& shape) {
    const at::Tensor w = at::randn({shape.out, shape.in});
    return std::make_unique<PackedF32Weight>(w.data_ptr<float>(), shape.out, shape.in,
                                             semroute::kernels::best_f32_path());
  };
  return measure_kernel(rows, layers, 4.0, make, [&](const PackedF32Weight& weight, at::Tensor& y) {
    semroute::kernels::F32Output out;
    out.y = y.data_ptr<float>();
    out.y_stride = weight.n();
    at::parallel_for(0, weight.panels(), 1, [&](int64_t first, int64_t last) {
      weight.multiply(a.data_ptr<float>(), widest, rows, first, last, out);
    });
  });
}

}  // namespace

int main(int argc, char** argv) {
  BenchArgs defaults;
  defaults.lengths = {16, 64, 256, 512};
  const BenchArgs args = parse_bench_args(argc, argv, defaults);
  semroute::ensure_runtime_initialized();
  c10::InferenceMode guard;
  std::printf("%s; int8 kernel path %s, %d activation levels\n", semroute::cpu_features().describe().c_str(),
              semroute::kernels::to_string(semroute::kernels::best_int8_path()), semroute::PackedGemm::activation_levels());

  std::vector<int> thread_counts = {1};
  if (args.threads > 1) thread_counts.push_back(args.threads);

  semroute::set_compute_threads(args.threads);
  for (const bool int8 : {true, false}) {
    std::printf("\n%s kernel alone (%s), %d threads\n", int8 ? "int8" : "fp32",
                int8 ? "no quantize pass" : semroute::kernels::to_string(semroute::kernels::best_f32_path()),
                args.threads);
    const Ceiling bandwidth = read_bandwidth(args.threads), peak = int8 ? int8_peak(args.threads) : fp32_peak(args.threads);
    std::printf("%5s %9s %8s %9s %9s %9s %13s %9s\n", "rows", "ms/layer", "GB/s", "of read", "GOPS",
                int8 ? "of int8" : "of fp32", "cached ms/l", "of peak");
    for (int64_t rows : args.lengths) {
      const auto measure_alone = [&](int layers) {
        return int8 ? measure_int8_kernel(rows, layers) : measure_f32_kernel(rows, layers);
      };
      const Measured m = measure_alone(kLayers), cached = measure_alone(1);
      std::printf("%5lld %9.3f %8.1f %8.0f%% %9.0f %8.0f%% %13.3f %8.0f%%\n", static_cast<long long>(rows),
                  m.seconds * 1e3, m.weight_bytes / m.seconds / 1e9, 100 * m.weight_bytes / m.seconds / bandwidth.rate,
                  m.ops / m.seconds / 1e9, 100 * m.ops / m.seconds / peak.rate, cached.seconds * 1e3,
                  100 * cached.ops / cached.seconds / peak.rate);
    }
  }
  for (const bool int8 : {true, false}) {
    std::vector<std::vector<std::unique_ptr<semroute::PackedGemm>>> layers(kShapes.size());
    for (size_t s = 0; s < kShapes.size(); ++s)
      for (int l = 0; l < kLayers; ++l)
        layers[s].push_back(semroute::PackedGemm::pack(at::randn({kShapes[s].out, kShapes[s].in}) * 0.05,
                                                       at::randn({kShapes[s].out}), int8));
    std::printf("\n%s: one layer's 4 GEMMs (ModernBERT-base), median of repeated sweeps over 22 layers\n",
                int8 ? "int8" : "fp32");
    std::printf("%7s %5s %9s %8s %9s %9s %9s %9s\n", "threads", "rows", "ms/layer", "GB/s", "of read", "GOPS",
                int8 ? "of int8" : "of fp32", "x 1 thr");
    std::vector<double> single_thread;  // seconds per length at 1 thread
    for (int threads : thread_counts) {
      semroute::set_compute_threads(threads);
      const Ceiling bandwidth = read_bandwidth(threads);
      const Ceiling peak = int8 ? int8_peak(threads) : fp32_peak(threads);
      std::printf("  ceilings at %d threads: read %.1f GB/s (%s), %s %.0f GOPS (%s)\n", threads, bandwidth.rate / 1e9,
                  bandwidth.what.c_str(), int8 ? "int8" : "fp32", peak.rate / 1e9, peak.what.c_str());
      if (!int8) {
        const Ceiling bf16 = bf16_peak(threads);  // the long inputs' floor (docs/speed.md)
        if (bf16.rate > 0)
          std::printf("  bf16 at %d threads: %.0f GFLOPS (%s)\n", threads, bf16.rate / 1e9, bf16.what.c_str());
      }
      for (size_t i = 0; i < args.lengths.size(); ++i) {
        const Measured m = measure(layers, args.lengths[i], int8 ? 1.0 : 4.0);
        if (threads == 1) single_thread.push_back(m.seconds);
        std::printf("%7d %5lld %9.3f %8.1f %8.0f%% %9.0f %8.0f%% %9.2f\n", threads,
                    static_cast<long long>(args.lengths[i]), m.seconds * 1e3, m.weight_bytes / m.seconds / 1e9,
                    100 * m.weight_bytes / m.seconds / bandwidth.rate, m.ops / m.seconds / 1e9,
                    100 * m.ops / m.seconds / peak.rate, single_thread[i] / m.seconds);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
