// Embedding latency at real model sizes (random weights) against the
// machine's fp32 GEMM floor measured beside each row (see
// classification_bench.cpp for the floor's definition).
//
//   semroute_embedding_bench [--preset qwen3-embedding-0.6b|embeddinggemma-300m|minilm-l6]
//                            [--threads 2] [--lengths 16,64,256,512] [--batches 1,8]
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "core/checkpoint.h"
#include "bench_util.h"
#include "core/runtime.h"
#include "models/bert.h"
#include "models/gemma3.h"
#include "models/qwen3.h"
#include "models/random_model.h"
#include "tasks/embedder.h"

namespace {

using namespace semroute::bench;

// Linear parameters of the encoder: every 2-D weight but the embedding tables.
double linear_params(const std::filesystem::path& dir) {
  const auto checkpoint = semroute::Checkpoint::open(dir);
  double n = 0;
  for (const auto& name : checkpoint.names()) {
    const auto* info = checkpoint.find(name);
    if (info->shape.size() == 2 && name.find("embed") == std::string::npos) n += static_cast<double>(info->numel());
  }
  return n;
}

// QKᵀ and PV FLOPs of one sequence: keys each query sees, per layer.
double attention_flops(const semroute::CoreModel& model, int64_t length) {
  double total = 0;
  const auto add = [&](double keys, double width) { total += 2.0 * 2.0 * length * keys * width; };
  if (const auto* q = dynamic_cast<const semroute::Qwen3Encoder*>(&model)) {
    const auto& c = q->qwen3_config();
    for (int64_t i = 0; i < c.base.num_hidden_layers; ++i) add((length + 1) / 2.0, c.base.num_attention_heads * c.head_dim);
  } else if (const auto* g = dynamic_cast<const semroute::Gemma3Encoder*>(&model)) {
    const auto& c = g->gemma3_config();
    for (const auto& type : c.layer_types)
      add(type == semroute::kSlidingAttention ? std::min<double>(length, 2.0 * c.sliding_window - 1) : length,
          c.base.num_attention_heads * c.head_dim);
  } else {
    for (int64_t i = 0; i < model.config().num_hidden_layers; ++i) add(length, model.hidden_size());
  }
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  BenchArgs defaults;
  defaults.preset = "qwen3-embedding-0.6b";
  defaults.lengths = {16, 64, 256, 512};
  const BenchArgs args = parse_bench_args(argc, argv, defaults);
  const std::string& preset = args.preset;
  const int threads = args.threads;
  const std::vector<int64_t>&lengths = args.lengths, &batches = args.batches;
  semroute::ensure_runtime_initialized();
  semroute::set_compute_threads(threads);
  const auto dir = std::filesystem::temp_directory_path() / ("semroute-bench-" + preset);
  if (!std::filesystem::exists(dir / "model.safetensors")) {
    semroute::RandomModelSpec spec;
    spec.preset = preset;
    semroute::write_random_embedding_model(spec, dir);
  }
  auto start = Clock::now();
  semroute::EmbedderOptions options;
  options.require_tokenizer = false;
  const auto embedder = semroute::Embedder::load(dir, options);
  const double load_s = seconds_since(start);
  const double params = linear_params(dir);
  std::printf("%s; preset %s, %d threads, load %.2f s, %.1f M linear parameters\n",
              semroute::cpu_features().describe().c_str(), preset.c_str(), threads, load_s, params / 1e6);
  std::printf("%6s %6s %10s %10s %8s %12s %10s\n", "tokens", "batch", "ms", "floor ms", "ratio", "tokens/s", "GFLOP/s");
  c10::InferenceMode guard;
  for (int64_t batch : batches) {
    for (int64_t length : lengths) {
      if (batch * length > 4096) continue;
      semroute::ModelInputs in;
      in.input_ids = at::randint(10, 30000, {batch, length}, at::kLong);
      in.attention_mask = at::ones({batch, length}, at::kLong);
      const double ms = median_seconds([&] { embedder->embed_inputs(in, embedder->defaults()); }) * 1e3;
      const double peak = peak_gemm_gflops();
      const double flops = batch * (2.0 * params * length + attention_flops(embedder->encoder(), length));
      const double floor_ms = flops / (peak * 1e9) * 1e3;
      std::printf("%6lld %6lld %10.1f %10.1f %8.2f %12.0f %10.1f\n", static_cast<long long>(length),
                  static_cast<long long>(batch), ms, floor_ms, ms / floor_ms, batch * length / (ms / 1e3), peak);
      std::fflush(stdout);
    }
  }
  return 0;
}
