// LoRA adapters against PEFT: merged and unmerged, ModernBERT classification
// and Qwen3 embeddings; PEFT's targeting rules; adapters that do not fit.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "core/checkpoint.h"
#include "adapters/lora_adapter.h"
#include "adapters/lora_config.h"
#include "adapters/merge_adapter.h"
#include "reference.h"
#include "tasks/embedder.h"
#include "tasks/sequence_classifier.h"
#include "test_util.h"

namespace semroute {
namespace {

std::shared_ptr<const SequenceClassifier> seqcls_with_adapter(bool merge) {
  TaskOptions options;
  options.tokenizer = test::data_dir() / "tokenizers/modernbert/tokenizer.json";
  options.adapter = test::data_dir() / "modernbert_seqcls_lora";
  options.merge_adapter = merge;
  return SequenceClassifier::load(test::data_dir() / "modernbert_seqcls_cls", options);
}

TEST(Lora, ModernBertClassifierEqualsPeftMergedAndUnmerged) {
  const auto merged = seqcls_with_adapter(true), unmerged = seqcls_with_adapter(false);
  TaskOptions plain_options;
  plain_options.tokenizer = test::data_dir() / "tokenizers/modernbert/tokenizer.json";
  const auto plain = SequenceClassifier::load(test::data_dir() / "modernbert_seqcls_cls", plain_options);
  for (const auto& c : test::load_reference(test::data_dir() / "modernbert_seqcls_lora" / "reference.json")) {
    test::expect_matches(c, "logits", merged->logits(c.inputs));
    test::expect_matches(c, "logits", unmerged->logits(c.inputs));
    // The adapter matters: without it the logits are elsewhere.
    EXPECT_GT((plain->logits(c.inputs) - c.expected("logits")).abs().max().item<double>(), 1e-2);
  }
}

TEST(Lora, Qwen3EmbeddingsEqualPeftMergedAndUnmerged) {
  for (const bool merge : {true, false}) {
    EmbedderOptions options;
    options.require_tokenizer = false;
    options.adapter = test::data_dir() / "qwen3_lora";
    options.merge_adapter = merge;
    const auto embedder = Embedder::load(test::data_dir() / "qwen3_embedding", options);
    for (const auto& c : test::load_reference(test::data_dir() / "qwen3_lora" / "reference.json")) {
      test::expect_matches(c, "embedding", embedder->embed_inputs(c.inputs, embedder->defaults()));
      if (merge) test::expect_matches(c, "last_hidden_state", embedder->encoder().forward(c.inputs));
    }
  }
}

TEST(Lora, MergedCheckpointsLoadAsPlainModels) {
  // merge_and_unload output: a normal config.json and weights, plus lora_config.json.
  test::TempDir dir;
  merge_adapter(test::data_dir() / "modernbert_seqcls_cls", test::data_dir() / "modernbert_seqcls_lora", dir / "m");
  EXPECT_TRUE(std::filesystem::exists(dir / "m" / "lora_config.json"));
  TaskOptions options;
  options.tokenizer = test::data_dir() / "tokenizers/modernbert/tokenizer.json";
  const auto merged = SequenceClassifier::load(dir / "m", options);
  for (const auto& c : test::load_reference(test::data_dir() / "modernbert_seqcls_lora" / "reference.json"))
    test::expect_matches(c, "logits", merged->logits(c.inputs));

  // An adapter with its own head over a masked-LM base: the task config and head come along.
  const auto fixture = test::data_dir() / "multitask_lora";
  merge_adapter(fixture / "base", fixture / "intent", dir / "intent");
  const auto intent = SequenceClassifier::load(dir / "intent", options);
  EXPECT_EQ(intent->labels(), (std::vector<std::string>{"math", "law", "biology", "other"}));
  for (const auto& c : test::load_reference(fixture / "base" / "reference.json"))
    test::expect_matches(c, "intent.merged_logits", intent->logits(c.inputs));
}

LoraConfig config_from(const std::string& json) {
  test::TempDir dir;
  test::write_file(dir / "adapter_config.json", json);
  return LoraConfig::load(dir / "adapter_config.json");
}

TEST(LoraConfig, TargetsLikePeft) {
  const auto suffix = config_from(R"({"r": 4, "lora_alpha": 8, "target_modules": ["Wo", "Wqkv"]})");
  EXPECT_TRUE(suffix.targets("model.layers.0.attn.Wo"));
  EXPECT_TRUE(suffix.targets("model.layers.0.mlp.Wo"));  // "Wo" matches as a dotted suffix anywhere
  EXPECT_TRUE(suffix.targets("Wqkv"));
  EXPECT_FALSE(suffix.targets("model.layers.0.attn.XWo"));
  EXPECT_DOUBLE_EQ(suffix.scaling_of("model.layers.0.attn.Wo"), 2.0);

  const auto layers = config_from(R"({"r": 4, "lora_alpha": 8, "target_modules": ["Wo"],
      "layers_to_transform": [2, 3], "layers_pattern": "layers", "modules_to_save": ["head", "classifier"]})");
  EXPECT_TRUE(layers.targets("model.layers.2.attn.Wo"));
  EXPECT_FALSE(layers.targets("model.layers.1.attn.Wo"));
  EXPECT_FALSE(layers.targets("layers.2.attn.Wo"));  // PEFT needs a dot before "layers"
  EXPECT_TRUE(layers.saves("head.dense"));
  EXPECT_TRUE(layers.saves("classifier"));

  const auto generic = config_from(R"({"r": 4, "target_modules": ["Wo"], "layers_to_transform": 3})");
  EXPECT_TRUE(generic.targets("model.layers.3.mlp.Wo"));
  EXPECT_FALSE(generic.targets("model.layers.2.mlp.Wo"));

  const auto regex = config_from(R"({"r": 8, "lora_alpha": 16, "target_modules": ".*\\.(q|v)_proj",
      "rank_pattern": {"q_proj": 2}, "alpha_pattern": {"layers.0.self_attn.v_proj": 4}, "use_rslora": true})");
  EXPECT_TRUE(regex.targets("layers.0.self_attn.q_proj"));
  EXPECT_FALSE(regex.targets("layers.0.self_attn.k_proj"));
  EXPECT_EQ(regex.rank_of("layers.0.self_attn.q_proj"), 2);
  EXPECT_EQ(regex.rank_of("layers.0.self_attn.v_proj"), 8);
  EXPECT_DOUBLE_EQ(regex.scaling_of("layers.0.self_attn.q_proj"), 16 / std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(regex.scaling_of("layers.0.self_attn.v_proj"), 4 / std::sqrt(8.0));
  EXPECT_DOUBLE_EQ(regex.scaling_of("layers.1.self_attn.v_proj"), 16 / std::sqrt(8.0));
}

TEST(LoraConfig, RefusesWhatItCannotDo) {
  const auto refused = [](const std::string& json, const std::string& needle) {
    test::expect_error([&] { config_from(json); }, ErrorCode::kUnsupported, needle);
  };
  refused(R"({"r": 4, "target_modules": ["Wo"], "use_dora": true})", "DoRA");
  refused(R"({"r": 4, "target_modules": ["Wo"], "bias": "all"})", "bias");
  refused(R"({"r": 4, "target_modules": ["Wo"], "peft_type": "IA3"})", "IA3");
  refused(R"({"r": 4, "target_modules": ["Wo"], "layer_replication": [[0, 2]]})", "layer_replication");
  test::expect_error([] { config_from(R"({"r": 4})"); }, ErrorCode::kInvalidModel, "target_modules");
  test::expect_error([] { config_from(R"({"r": 0, "target_modules": ["Wo"]})"); }, ErrorCode::kInvalidModel, "'r'");
  test::expect_error([] { config_from(R"({"r": 4, "target_modules": ["Wo"], "layers_pattern": "layers"})"); },
                     ErrorCode::kInvalidModel, "layers_to_transform");
  test::expect_error([] { config_from("[1, 2]"); }, ErrorCode::kInvalidModel, "object");
}

// Copies the seqcls adapter with its config replaced or tensors renamed.
class BrokenAdapter : public ::testing::Test {
 protected:
  std::filesystem::path write(const std::string& config, const std::vector<std::pair<std::string, at::Tensor>>& extra,
                              const std::string& drop = "") {
    const auto source = test::data_dir() / "modernbert_seqcls_lora";
    std::vector<std::pair<std::string, at::Tensor>> tensors;
    const auto checkpoint = Checkpoint::open(source / "adapter_model.safetensors");
    for (const auto& name : checkpoint.names())
      if (drop.empty() || name.find(drop) == std::string::npos) tensors.emplace_back(name, checkpoint.tensor(name));
    tensors.insert(tensors.end(), extra.begin(), extra.end());
    save_safetensors(dir_ / "adapter_model.safetensors", tensors);
    test::write_file(dir_ / "adapter_config.json", config);
    return dir_.path();
  }
  void expect_refused(const std::filesystem::path& adapter, const std::string& needle) {
    const auto base = Checkpoint::open(test::data_dir() / "modernbert_seqcls_cls");
    test::expect_error([&] { LoraAdapter::load(adapter, base, at::kFloat); }, ErrorCode::kInvalidModel, needle);
  }
  test::TempDir dir_;
};

constexpr const char* kConfig = R"({"r": 4, "lora_alpha": 16, "target_modules": ["Wi", "Wo", "Wqkv"]})";

TEST_F(BrokenAdapter, UnknownTensorsAreNamed) {
  expect_refused(write(kConfig, {{"base_model.model.extra.weight", at::zeros({2})}}), "base_model.model.extra.weight");
}

TEST_F(BrokenAdapter, ModulesMissingFromTheBaseAreNamed) {
  expect_refused(write(kConfig, {{"base_model.model.model.layers.9.attn.Wo.lora_A.weight", at::zeros({4, 64})},
                                 {"base_model.model.model.layers.9.attn.Wo.lora_B.weight", at::zeros({64, 4})}}),
                 "model.layers.9.attn.Wo: the base checkpoint has no linear layer");
}

TEST_F(BrokenAdapter, ShapesMustFit) {
  const std::string config = R"({"r": 4, "lora_alpha": 16, "target_modules": ["Wi", "Wo", "Wqkv"],
                                 "rank_pattern": {"model.layers.0.attn.Wo": 8}})";
  expect_refused(write(config, {}), "do not fit rank 8");
}

TEST_F(BrokenAdapter, UntargetedAndUncoveredModulesAreNamed) {
  expect_refused(write(R"({"r": 4, "lora_alpha": 16, "target_modules": ["Wi", "Wqkv"]})", {}),
                 "does not target it");
  expect_refused(write(kConfig, {}, "layers.1.mlp.Wi"), "targets modules without LoRA weights:\n  model.layers.1.mlp.Wi");
}

}  // namespace
}  // namespace semroute
