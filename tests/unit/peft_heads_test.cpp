// Heads of PEFT classification adapters, composed module by module as PEFT
// does: with task_type SEQ_CLS PEFT saves only modules_to_save = ["classifier",
// "score"], so the rest of the head (ModernBERT's head.dense / head.norm,
// BERT's pooler) comes from the base. The adapters here are PEFT's own
// modernbert_seqcls_lora fixture, and B = 0 adapters (PEFT's initialisation,
// so PEFT's output is the base model's, i.e. Hugging Face's reference), each
// given a saved classifier W' = 2W, b' = b + 1: the expected logits are then
// 2(ref - b) + b + 1, computed from the references alone.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/checkpoint.h"
#include "reference.h"
#include "tasks/sequence_classifier.h"
#include "test_util.h"

namespace semroute {
namespace {

using Tensors = std::vector<std::pair<std::string, at::Tensor>>;

// The classifier of `base` as an adapter would save it, changed: W' = 2W, b' = b + 1.
void add_saved_classifier(const Checkpoint& base, const std::string& prefix, Tensors& tensors) {
  tensors.emplace_back("base_model.model.classifier.weight", base.tensor(prefix + "classifier.weight") * 2);
  tensors.emplace_back("base_model.model.classifier.bias", base.tensor(prefix + "classifier.bias") + 1);
}

void write_adapter(const std::filesystem::path& dir, const Tensors& tensors, nlohmann::json config) {
  std::filesystem::create_directories(dir);
  save_safetensors(dir / "adapter_model.safetensors", tensors);
  config["peft_type"] = "LORA";
  config["task_type"] = "SEQ_CLS";
  config["modules_to_save"] = {"classifier", "score"};  // PEFT's default for SEQ_CLS
  std::ofstream(dir / "adapter_config.json") << config.dump();
}

// Zero-B LoRA (PEFT's init) on every 2-D weight of `base` whose leaf is a target.
Tensors zero_b_lora(const Checkpoint& base, const std::vector<std::string>& targets, int64_t r) {
  Tensors tensors;
  at::manual_seed(5);
  for (const auto& name : base.names()) {
    const auto leaf_end = name.rfind(".weight");
    if (leaf_end == std::string::npos || base.find(name)->shape.size() != 2) continue;
    const std::string module = name.substr(0, leaf_end);
    const std::string leaf = module.substr(module.rfind('.') + 1);
    if (std::find(targets.begin(), targets.end(), leaf) == targets.end()) continue;
    const auto& shape = base.find(name)->shape;
    tensors.emplace_back("base_model.model." + module + ".lora_A.weight", at::randn({r, shape[1]}));
    tensors.emplace_back("base_model.model." + module + ".lora_B.weight", at::zeros({shape[0], r}));
  }
  return tensors;
}

void expect_composed_head(const std::filesystem::path& base_dir, const std::filesystem::path& adapter,
                          const std::filesystem::path& reference, const std::string& classifier_prefix) {
  const Checkpoint base = Checkpoint::open(base_dir);
  const at::Tensor b = base.tensor(classifier_prefix + "classifier.bias");
  for (const bool merge : {false, true}) {
    TaskOptions options;
    options.tokenizer = test::data_dir() / "tokenizers/modernbert/tokenizer.json";  // ids are given
    options.adapter = adapter;
    options.merge_adapter = merge;
    const auto model = SequenceClassifier::load(base_dir, options);
    for (const auto& c : test::load_reference(reference)) {
      const at::Tensor expected = (c.expected("logits") - b) * 2 + b + 1;
      const auto agreement = test::compare(model->logits(c.inputs), expected, c.inputs.attention_mask);
      EXPECT_LT(agreement.max_abs_error, 1e-4) << adapter << (merge ? " merged " : " unmerged ") << c.name;
      EXPECT_GT(agreement.cosine, 0.99999);
    }
  }
}

// Zero-B adapters on each target set, with a saved classifier: Hugging Face's
// reference of the base, transformed.
void expect_zero_b_adapters_compose(const std::filesystem::path& base_dir,
                                    const std::vector<std::vector<std::string>>& target_sets) {
  const Checkpoint base = Checkpoint::open(base_dir);
  test::TempDir dir;
  for (const auto& targets : target_sets) {
    Tensors zero = zero_b_lora(base, targets, 2);
    add_saved_classifier(base, "", zero);
    const auto path = dir / ("zero_" + targets.front());
    write_adapter(path, zero, {{"r", 2}, {"lora_alpha", 4}, {"target_modules", targets}});
    expect_composed_head(base_dir, path, base_dir / "reference.json", "");
  }
}

TEST(PeftHeads, ModernBertAdapterWithOnlyTheClassifierSaved) {
  const auto fixture = test::data_dir() / "modernbert_seqcls_lora";
  const auto base_dir = test::data_dir() / "modernbert_seqcls_cls";
  test::TempDir dir;
  const Checkpoint lora = Checkpoint::open_weights_in(fixture, "adapter_model");
  Tensors tensors;
  for (const auto& name : lora.names()) tensors.emplace_back(name, lora.tensor(name));
  add_saved_classifier(Checkpoint::open(base_dir), "", tensors);
  write_adapter(dir / "peft", tensors, nlohmann::json::parse(std::ifstream(fixture / "adapter_config.json")));
  // PEFT's LoRA on Wqkv, Wo and Wi: head.dense / head.norm from the base.
  expect_composed_head(base_dir, dir / "peft", fixture / "reference.json", "");

  // Zero-B adapters: one on Wqkv + Wi, one on Wo.
  expect_zero_b_adapters_compose(base_dir, {{"Wqkv", "Wi"}, {"Wo"}});
}

TEST(PeftHeads, BertAdapterTakesThePoolerFromTheBase) {
  expect_zero_b_adapters_compose(test::data_dir() / "bert_seqcls", {{"query", "value", "dense"}, {"key"}});
}

TEST(PeftHeads, AModuleIsTakenWholeFromTheAdapter) {
  // An adapter that saved classifier.weight but not its bias is refused,
  // never mixed with the base's bias.
  const auto base_dir = test::data_dir() / "bert_seqcls";
  const Checkpoint base = Checkpoint::open(base_dir);
  test::TempDir dir;
  Tensors tensors = zero_b_lora(base, {"query"}, 2);
  tensors.emplace_back("base_model.model.classifier.weight", base.tensor("classifier.weight"));
  write_adapter(dir / "a", tensors, {{"r", 2}, {"lora_alpha", 4}, {"target_modules", {"query"}}});
  TaskOptions options;
  options.tokenizer = test::data_dir() / "tokenizers/modernbert/tokenizer.json";
  options.adapter = dir / "a";
  test::expect_error([&] { SequenceClassifier::load(base_dir, options); }, ErrorCode::kInvalidModel,
                     "classifier.bias' (its module is in the adapter)");
}

}  // namespace
}  // namespace semroute
