// The multi-task engine's cost model, measured: one base (ModernBERT-base
// size, random weights) and T task adapters (rank r on the top k of L
// layers, or on all layers), against one single-task pass and against T
// separate merged models run one after another.
//
//   semroute_multitask_bench [--threads 2] [--lengths 64] [--batches 1,8]
//
// Expected engine / single-pass ratio with adapters on the top k layers:
// (L − k)/L + T·k/L. With adapters on every layer nothing is shared below
// them; what remains is streaming each base weight once for all T groups.
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <cstdio>
#include <filesystem>

#include "bench_util.h"
#include "core/runtime.h"
#include "tasks/multitask_engine.h"
#include "adapters/random_adapter.h"
#include "models/random_model.h"
#include "tasks/sequence_classifier.h"

namespace {

using namespace semroute;
using namespace semroute::bench;

constexpr int kTasks = 3;
constexpr int64_t kRank = 16, kTopLayers = 4;

std::vector<EngineTaskSpec> write_adapters(const std::filesystem::path& base, const std::filesystem::path& dir,
                                           const std::vector<int64_t>& layers) {
  std::vector<EngineTaskSpec> specs;
  for (int t = 0; t < kTasks; ++t) {
    RandomAdapterSpec spec;
    spec.r = kRank;
    spec.layers = layers;
    spec.seed = static_cast<uint64_t>(t + 1);
    const auto path = dir / ("task" + std::to_string(t));
    if (!std::filesystem::exists(path / "adapter_config.json")) write_random_adapter(base, spec, path);
    specs.push_back({"task" + std::to_string(t), path, std::nullopt, {}, std::nullopt});
  }
  return specs;
}

std::vector<std::shared_ptr<const SequenceClassifier>> merged_models(const std::filesystem::path& base,
                                                                     const std::vector<EngineTaskSpec>& specs) {
  std::vector<std::shared_ptr<const SequenceClassifier>> models;
  for (const auto& s : specs) {
    TaskOptions options;
    options.adapter = s.adapter;
    options.tokenizer = base;  // unused: the benchmark feeds token ids
    models.push_back(SequenceClassifier::load(base, options));
  }
  return models;
}

}  // namespace

int main(int argc, char** argv) {
  BenchArgs defaults;
  defaults.preset = "modernbert-base";
  defaults.lengths = {64};
  const BenchArgs args = parse_bench_args(argc, argv, defaults);
  ensure_runtime_initialized();
  set_compute_threads(args.threads);
  const auto dir = std::filesystem::temp_directory_path() / "semroute-bench-multitask";
  const auto base = dir / "base";
  if (!std::filesystem::exists(base / "model.safetensors")) {
    RandomModelSpec spec;
    spec.preset = args.preset;
    spec.tokenizer = std::filesystem::path(SEMROUTE_SOURCE_DIR) / "tests/data/tokenizers/modernbert/tokenizer.json";
    write_random_modernbert(spec, base);
  }
  TaskOptions plain_options;
  const auto single = SequenceClassifier::load(base, plain_options);
  const int64_t layers = single->task().encoder->config().num_hidden_layers;
  std::vector<int64_t> top;
  for (int64_t i = layers - kTopLayers; i < layers; ++i) top.push_back(i);
  const auto top_specs = write_adapters(base, dir / "top", top);
  const auto all_specs = write_adapters(base, dir / "all", {});
  EngineOptions engine_options;
  const auto top_engine = MultiTaskEngine::load(base, top_specs, engine_options);
  const auto all_engine = MultiTaskEngine::load(base, all_specs, engine_options);
  const auto top_merged = merged_models(base, top_specs), all_merged = merged_models(base, all_specs);
  const std::vector<size_t> every = {0, 1, 2};

  std::printf("%s; %s, %d threads, %d tasks, r=%lld; top: adapters on layers %lld-%lld of %lld\n",
              semroute::cpu_features().describe().c_str(), args.preset.c_str(), args.threads, kTasks, static_cast<long long>(kRank), static_cast<long long>(layers - kTopLayers),
              static_cast<long long>(layers - 1), static_cast<long long>(layers));
  std::printf("%6s %5s %9s | %9s %7s %9s %9s | %9s %7s %9s\n", "tokens", "batch", "single", "top:eng", "/single",
              "expected", "/separate", "all:eng", "/single", "/separate");
  c10::InferenceMode guard;
  for (const int64_t batch : args.batches)
    for (const int64_t length : args.lengths) {
      const ModelInputs in{at::randint(5, 30000, {batch, length}, at::kLong), at::ones({batch, length}, at::kLong), {}};
      const double t1 = median_seconds([&] { single->logits(in); });
      const double top_engine_s = median_seconds([&] { top_engine->logits(in, every); });
      const double top_separate = median_seconds([&] {
        for (const auto& m : top_merged) m->logits(in);
      });
      const double all_engine_s = median_seconds([&] { all_engine->logits(in, every); });
      const double all_separate = median_seconds([&] {
        for (const auto& m : all_merged) m->logits(in);
      });
      const double expected = static_cast<double>(layers - kTopLayers) / static_cast<double>(layers) +
                              kTasks * static_cast<double>(kTopLayers) / static_cast<double>(layers);
      std::printf("%6lld %5lld %7.1fms | %7.1fms %7.2f %9.2f %9.2f | %7.1fms %7.2f %9.2f\n",
                  static_cast<long long>(length), static_cast<long long>(batch), t1 * 1e3, top_engine_s * 1e3,
                  top_engine_s / t1, expected, top_engine_s / top_separate, all_engine_s * 1e3, all_engine_s / t1,
                  all_engine_s / all_separate);
    }
  return 0;
}
