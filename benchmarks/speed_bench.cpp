// One run, one CPU: the same random-weight classifier loaded in every
// precision this CPU runs natively (float32, int8, and bfloat16 where its
// GEMM is native), compared per length against float32 and against the GEMM
// floor of its own precision; the first call at a new length against the
// steady state; load time and resident memory per precision.
//
//   semroute_speed_bench [--preset modernbert-base] [--threads 2] [--lengths 16,64,256,512,2048]
//                        [--first-calls 200]
//
// "gemm ms" replays the model's linear layers alone in that precision
// (GemmReplay): "vs gemm" is what everything but the GEMMs adds.
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "bench_util.h"
#include "core/cpu_features.h"
#include "core/runtime.h"
#include "models/modernbert.h"
#include "models/packed_gemm.h"
#include "tasks/sequence_classifier.h"

namespace {

using namespace semroute::bench;

double rss_mb() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return 0;
}

semroute::ModelInputs inputs(int64_t length) {
  semroute::ModelInputs in;
  in.input_ids = at::randint(1000, 50000, {1, length}, at::kLong);
  in.attention_mask = at::ones({1, length}, at::kLong);
  return in;
}

struct Loaded {
  std::string name;
  std::shared_ptr<const semroute::SequenceClassifier> classifier;
  semroute::LoadOptions load;
};

// The first call at each of `count` distinct lengths (1-512, random order)
// against a second call at that length.
void first_calls(const Loaded& m, int64_t count) {
  if (count <= 0) return;
  std::vector<int64_t> lengths(512);
  for (int64_t i = 0; i < 512; ++i) lengths[i] = i + 1;
  std::shuffle(lengths.begin(), lengths.end(), std::mt19937(7));
  lengths.resize(std::min<int64_t>(count, 512));
  std::vector<double> ratios;
  double first_total = 0, steady_total = 0;
  for (int64_t length : lengths) {
    const auto in = inputs(length);
    auto start = Clock::now();
    m.classifier->logits(in);
    const double first = seconds_since(start);
    start = Clock::now();
    m.classifier->logits(in);
    const double steady = seconds_since(start);
    ratios.push_back(first / steady);
    first_total += first;
    steady_total += steady;
  }
  std::sort(ratios.begin(), ratios.end());
  std::printf("%-9s first call / steady state over %zu new lengths: total %.3f, median %.3f, p90 %.3f, worst %.3f\n",
              m.name.c_str(), lengths.size(), first_total / steady_total, ratios[ratios.size() / 2],
              ratios[ratios.size() * 9 / 10], ratios.back());
}

}  // namespace

int main(int argc, char** argv) {
  BenchArgs defaults;
  defaults.preset = "modernbert-base";
  defaults.lengths = {16, 64, 256, 512, 2048};
  const BenchArgs args = parse_bench_args(argc, argv, defaults);
  int64_t first_call_count = 200;
  for (int i = 1; i + 1 < argc; i += 2)
    if (std::string(argv[i]) == "--first-calls") first_call_count = std::stoll(argv[i + 1]);
  semroute::ensure_runtime_initialized();
  semroute::set_compute_threads(args.threads);
  const auto dir = std::filesystem::temp_directory_path() / ("semroute-bench-" + args.preset);
  write_classification_model(args.preset, dir);
  std::printf("%s; preset %s, %d threads; int8 activations %d levels\n", semroute::cpu_features().describe().c_str(),
              args.preset.c_str(), args.threads, semroute::PackedGemm::activation_levels());

  std::vector<std::string> precisions = {"float32", "int8"};
  if (semroute::PackedGemm::native_bf16()) precisions.push_back("bfloat16");
  c10::InferenceMode guard;
  std::vector<Loaded> models;
  for (const auto& name : precisions) {
    const double rss_before = rss_mb();
    const auto start = Clock::now();
    semroute::TaskOptions options;
    options.load = semroute::parse_load_options("cpu", name);
    Loaded m{name, semroute::SequenceClassifier::load(dir, options), options.load};
    std::printf("%-9s load %.2f s, resident memory +%.0f MB\n", name.c_str(), seconds_since(start),
                rss_mb() - rss_before);
    first_calls(m, first_call_count);
    models.push_back(std::move(m));
  }

  const auto& config =
      dynamic_cast<const semroute::ModernBertEncoder&>(*models.front().classifier->task().encoder).modernbert_config();
  const int64_t h = config.base.hidden_size, inter = config.base.intermediate_size;
  std::printf("%6s %-9s %9s %10s %9s %9s\n", "tokens", "dtype", "ms", "x float32", "gemm ms", "vs gemm");
  for (int64_t length : args.lengths) {
    const auto in = inputs(length);
    double fp32_ms = 0;
    for (const auto& m : models) {
      const double ms = median_seconds([&] { m.classifier->logits(in); }) * 1e3;
      if (m.name == "float32") fp32_ms = ms;
      const GemmReplay replay({{h, 3 * h}, {h, h}, {h, 2 * inter}, {inter, h}}, config.base.num_hidden_layers,
                              m.load.dtype, m.load.int8);
      const double gemm_ms = replay.median_seconds_for(length) * 1e3;
      std::printf("%6lld %-9s %9.1f %10.2f %9.1f %9.2f\n", static_cast<long long>(length), m.name.c_str(), ms,
                  fp32_ms / ms, gemm_ms, ms / gemm_ms);
      std::fflush(stdout);
    }
  }
  return 0;
}
