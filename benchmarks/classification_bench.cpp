// Sequence classification latency at real model sizes (random weights),
// against the machine's fp32 GEMM floor measured in the same run.
//
//   semroute_classification_bench [--preset modernbert-base] [--threads 2]
//                                 [--lengths 16,64,256,512,2048] [--batches 1,8] [--dtype float32|bfloat16]
//                                 [--profile PREFIX]
//
// floor(ms) = model FLOPs / peak GEMM rate, where FLOPs count every linear
// layer (2 per multiply-add) plus QKᵀ and PV with the keys each query really
// sees (the window on local layers), and the peak is the best of a few
// [512 x 768] x [768 x 2304] products (the shape of a fused QKV / GeGLU input)
// through BLAS or the packed oneDNN GEMM, whichever is faster. "gemm ms"
// replays the model's linear layers alone at the same size (GemmReplay):
// "vs gemm" is what everything but the GEMMs adds.
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "bench_util.h"
#include "core/device.h"
#include "core/runtime.h"
#include "models/modernbert.h"
#include "models/model_factory.h"
#include "models/random_model.h"
#include "tasks/sequence_classifier.h"

namespace {

using namespace semroute::bench;

// Forward FLOPs of one sequence of `length` tokens.
double model_flops(const semroute::ModernBertConfig& c, int64_t length) {
  const double h = static_cast<double>(c.base.hidden_size), inter = static_cast<double>(c.base.intermediate_size);
  const double linear_per_token = 2.0 * (3 * h * h + h * h + 2 * inter * h + inter * h);
  double flops = linear_per_token * length * c.base.num_hidden_layers;
  for (int64_t i = 0; i < c.base.num_hidden_layers; ++i) {
    double keys = static_cast<double>(length);
    if (!c.is_global(i)) keys = std::min<double>(length, c.local_attention + 1);
    flops += 2.0 * 2.0 * length * keys * h;  // QKᵀ and PV
  }
  return flops + 2.0 * h * h;  // head
}

}  // namespace

int main(int argc, char** argv) {
  BenchArgs defaults;
  defaults.preset = "modernbert-base";
  defaults.lengths = {16, 64, 256, 512, 2048};
  const BenchArgs args = parse_bench_args(argc, argv, defaults);
  const std::string &preset = args.preset, &dtype = args.dtype;
  const int threads = args.threads;
  const std::vector<int64_t>&lengths = args.lengths, &batches = args.batches;
  semroute::ensure_runtime_initialized();
  semroute::set_compute_threads(threads);
  const auto dir = std::filesystem::temp_directory_path() / ("semroute-bench-" + preset);
  write_classification_model(preset, dir);
  auto start = Clock::now();
  semroute::TaskOptions options;
  options.load = semroute::parse_load_options("cpu", dtype);
  const auto classifier = semroute::SequenceClassifier::load(dir, options);
  const double load_s = seconds_since(start);
  const auto& config = dynamic_cast<const semroute::ModernBertEncoder&>(*classifier->task().encoder).modernbert_config();
  const double peak = peak_gemm_gflops();
  std::printf("%s; preset %s, %s, %d threads, load %.2f s, peak fp32 GEMM %.1f GFLOP/s (floor = fp32 FLOPs / this)\n",
              semroute::cpu_features().describe().c_str(), preset.c_str(), dtype.c_str(), threads, load_s, peak);
  const int64_t h = config.base.hidden_size, inter = config.base.intermediate_size;
  const GemmReplay replay({{h, 3 * h}, {h, h}, {h, 2 * inter}, {inter, h}}, config.base.num_hidden_layers,
                          options.load.dtype, options.load.int8);
  std::printf("%6s %6s %10s %10s %8s %10s %8s %12s %10s\n", "tokens", "batch", "ms", "floor ms", "ratio", "gemm ms",
              "vs gemm", "tokens/s", "GFLOP/s");
  c10::InferenceMode guard;
  for (int64_t batch : batches) {
    for (int64_t length : lengths) {
      if (batch * length > 8192) continue;  // keep the run short
      semroute::ModelInputs in;
      in.input_ids = at::randint(1000, 50000, {batch, length}, at::kLong);
      in.attention_mask = at::ones({batch, length}, at::kLong);
      const double ms = median_seconds([&] { classifier->logits(in); }) * 1e3;
      trace_once(args.profile, length, batch, [&] { classifier->logits(in); });
      // The machine's speed drifts (shared hosts): re-measure the peak next to each row.
      const double row_peak = std::max(peak_gemm_gflops(), 0.0);
      const double floor_ms = batch * model_flops(config, length) / (row_peak * 1e9) * 1e3;
      const double gemm_ms = replay.median_seconds_for(batch * length) * 1e3;
      std::printf("%6lld %6lld %10.1f %10.1f %8.2f %10.1f %8.2f %12.0f %10.1f\n", static_cast<long long>(length),
                  static_cast<long long>(batch), ms, floor_ms, ms / floor_ms, gemm_ms, ms / gemm_ms,
                  batch * length / (ms / 1e3), row_peak);
      std::fflush(stdout);
    }
  }
  return 0;
}
