// The multi-task engine on every backend: two random LoRA adapters with their
// own heads (modules_to_save) over a ModernBERT, BERT, Qwen3 and Gemma3 base.
// Each task's logits through the shared pass equal the same adapter applied
// alone, merged and unmerged; the shared prefix runs once (counted). Qwen3
// also against PEFT's own numbers (the qwen3_lora fixture).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/checkpoint.h"
#include "tasks/multitask_engine.h"
#include "adapters/random_adapter.h"
#include "reference.h"
#include "tasks/sequence_classifier.h"
#include "test_util.h"

namespace semroute {
namespace {

struct BackendCase {
  std::string base;  // fixture directory
  std::vector<std::string> targets;
  std::string classifier;
  bool classifier_bias;
  bool modernbert_head;
};

std::string name_of(const testing::TestParamInfo<BackendCase>& info) { return info.param.base; }
void PrintTo(const BackendCase& b, std::ostream* out) { *out << b.base; }

class EngineOnEveryBackend : public testing::TestWithParam<BackendCase> {};

TEST_P(EngineOnEveryBackend, SharedPassEqualsEachAdapterAlone) {
  const BackendCase& b = GetParam();
  const auto base = test::data_dir() / b.base;
  test::TempDir dir;
  const std::vector<std::vector<int64_t>> layers = {{2, 3}, {3}};
  std::vector<EngineTaskSpec> specs;
  for (size_t t = 0; t < layers.size(); ++t) {
    RandomAdapterSpec spec;
    spec.r = 4;
    spec.layers = layers[t];
    spec.targets = b.targets;
    spec.labels = {"a", "b", "c"};
    spec.seed = t + 11;
    spec.classifier = b.classifier;
    spec.classifier_bias = b.classifier_bias;
    spec.modernbert_head = b.modernbert_head;
    const auto path = dir / ("task" + std::to_string(t));
    write_random_adapter(base, spec, path);
    specs.push_back({"task" + std::to_string(t), path, std::nullopt, {}, std::nullopt});
  }
  EngineOptions options;
  options.require_tokenizer = false;
  const auto engine = MultiTaskEngine::load(base, specs, options);
  EXPECT_EQ(engine->tasks()[0].first_layer, 2);

  const auto tokenizer = test::data_dir() / "tokenizers/modernbert/tokenizer.json";  // unused: ids are given
  std::vector<std::shared_ptr<const SequenceClassifier>> alone;
  for (const bool merge : {false, true})
    for (const auto& spec : specs) {
      TaskOptions task_options;
      task_options.tokenizer = tokenizer;
      task_options.adapter = spec.adapter;
      task_options.merge_adapter = merge;
      alone.push_back(SequenceClassifier::load(base, task_options));
    }
  for (const auto& c : test::load_reference(base / "reference.json")) {
    EngineStats stats;
    const auto together = engine->logits(c.inputs, {0, 1}, &stats);
    EXPECT_EQ(stats.layer_passes, 2 + 2 + 2) << "layers 0-1 once, layer 2 for base + task0, layer 3 for both tasks";
    for (size_t t = 0; t < specs.size(); ++t) {
      for (size_t m = 0; m < 2; ++m) {
        const at::Tensor expected = alone[m * specs.size() + t]->logits(c.inputs);
        const auto agreement = test::compare(together[t], expected, c.inputs.attention_mask);
        EXPECT_LT(agreement.max_abs_error, 1e-4) << c.name << " task" << t << (m ? " merged" : " unmerged");
        EXPECT_GT(agreement.cosine, 0.99999);
      }
      // The adapter matters: its hidden states are not the base's.
      const at::Tensor plain = engine->encoder().forward(c.inputs);
      EXPECT_GT(test::compare(engine->hidden_states(c.inputs, {t})[0], plain, c.inputs.attention_mask).max_abs_error,
                1e-3);
      // Alone in the engine, too.
      const auto single = engine->logits(c.inputs, {t});
      EXPECT_LT(test::compare(single[0], together[t], c.inputs.attention_mask).max_abs_error, 1e-5);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, EngineOnEveryBackend,
    testing::Values(BackendCase{"modernbert_base", {"Wqkv", "Wo", "Wi"}, "classifier", true, true},
                    BackendCase{"bert_seqcls", {"query", "value", "dense"}, "classifier", true, false},
                    BackendCase{"qwen3_embedding", {"q_proj", "v_proj", "down_proj"}, "score", false, false},
                    BackendCase{"embeddinggemma", {"q_proj", "o_proj", "up_proj"}, "score", false, false}),
    name_of);

// PEFT's qwen3_lora adapter (no head of its own) given a `score` head in
// modules_to_save, as PEFT saves a SEQ_CLS adapter: the engine's hidden
// states under it equal PEFT's.
TEST(EngineOnQwen3, HiddenStatesEqualPeft) {
  const auto fixture = test::data_dir() / "qwen3_lora";
  test::TempDir dir;
  const Checkpoint lora = Checkpoint::open_weights_in(fixture, "adapter_model");
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  for (const auto& name : lora.names()) tensors.emplace_back(name, lora.tensor(name));
  at::manual_seed(3);
  tensors.emplace_back("base_model.model.score.weight", at::randn({2, 64}));
  save_safetensors(dir / "adapter_model.safetensors", tensors);
  auto config = nlohmann::json::parse(std::ifstream(fixture / "adapter_config.json"));
  config["modules_to_save"] = {"classifier", "score"};  // PEFT's default for SEQ_CLS
  config["task_type"] = "SEQ_CLS";
  std::ofstream(dir / "adapter_config.json") << config.dump();

  EngineOptions options;
  options.require_tokenizer = false;
  const auto engine = MultiTaskEngine::load(test::data_dir() / "qwen3_embedding",
                                            {{"peft", dir.path(), std::nullopt, {"x", "y"}, std::nullopt}}, options);
  for (const auto& c : test::load_reference(fixture / "reference.json"))
    test::expect_matches(c, "last_hidden_state", engine->hidden_states(c.inputs, {0})[0]);
}

}  // namespace
}  // namespace semroute
