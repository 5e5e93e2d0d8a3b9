#include "models/random_model.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/TensorOperators.h>
#include <ATen/core/Generator.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/zeros.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/checkpoint.h"
#include "semroute/error.h"

namespace semroute {
namespace {

namespace fs = std::filesystem;

struct Preset {
  int64_t vocab, hidden, layers, heads, intermediate, window, positions;
  double global_theta;
};

Preset preset(const std::string& name) {
  if (name == "modernbert-base") return {50368, 768, 22, 12, 1152, 128, 8192, 160000.0};
  if (name == "mmbert-base") return {256000, 768, 22, 12, 1152, 128, 8192, 160000.0};
  if (name == "mmbert-small") return {256000, 384, 22, 6, 1152, 128, 8192, 160000.0};
  if (name == "tiny") return {50368, 32, 4, 2, 48, 8, 40000, 160000.0};
  throw InvalidInput("unknown preset '" + name + "' (modernbert-base, mmbert-base, mmbert-small, tiny)");
}

}  // namespace

void write_random_modernbert(const RandomModelSpec& spec, const fs::path& out) {
  const Preset p = preset(spec.preset);
  const bool token_task = spec.token_task;
  const std::vector<std::string>& labels = spec.labels;
  if (labels.empty()) throw InvalidInput("a random model needs at least one label");
  fs::create_directories(out);
  nlohmann::json id2label, label2id;
  for (size_t i = 0; i < labels.size(); ++i) {
    id2label[std::to_string(i)] = labels[i];
    label2id[labels[i]] = i;
  }
  const nlohmann::json config = {
      {"architectures", {token_task ? "ModernBertForTokenClassification" : "ModernBertForSequenceClassification"}},
      {"model_type", "modernbert"}, {"vocab_size", p.vocab}, {"hidden_size", p.hidden},
      {"num_hidden_layers", p.layers}, {"num_attention_heads", p.heads}, {"intermediate_size", p.intermediate},
      {"local_attention", p.window}, {"global_attn_every_n_layers", 3}, {"max_position_embeddings", p.positions},
      {"global_rope_theta", p.global_theta}, {"local_rope_theta", 10000.0}, {"norm_eps", 1e-5},
      {"hidden_activation", "gelu"}, {"classifier_pooling", "mean"}, {"classifier_activation", "gelu"},
      {"pad_token_id", 50283}, {"bos_token_id", 50281}, {"eos_token_id", 50282}, {"cls_token_id", 50281},
      {"sep_token_id", 50282}, {"id2label", id2label}, {"label2id", label2id}, {"torch_dtype", "float32"},
  };
  std::ofstream(out / "config.json") << config.dump(2) << "\n";

  // Weights scaled so activations stay of order 1 through every layer.
  auto gen = at::make_generator<at::CPUGeneratorImpl>(spec.seed);
  const auto linear = [&](int64_t rows, int64_t cols) {
    return at::randn({rows, cols}, gen, at::TensorOptions().dtype(at::kFloat)) / std::sqrt(static_cast<double>(cols));
  };
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  tensors.emplace_back("model.embeddings.tok_embeddings.weight",
                       at::randn({p.vocab, p.hidden}, gen, at::TensorOptions().dtype(at::kFloat)));
  tensors.emplace_back("model.embeddings.norm.weight", at::ones({p.hidden}));
  for (int64_t i = 0; i < p.layers; ++i) {
    const std::string prefix = "model.layers." + std::to_string(i) + ".";
    if (i != 0) tensors.emplace_back(prefix + "attn_norm.weight", at::ones({p.hidden}));
    tensors.emplace_back(prefix + "attn.Wqkv.weight", linear(3 * p.hidden, p.hidden));
    tensors.emplace_back(prefix + "attn.Wo.weight", linear(p.hidden, p.hidden));
    tensors.emplace_back(prefix + "mlp_norm.weight", at::ones({p.hidden}));
    tensors.emplace_back(prefix + "mlp.Wi.weight", linear(2 * p.intermediate, p.hidden));
    tensors.emplace_back(prefix + "mlp.Wo.weight", linear(p.hidden, p.intermediate));
  }
  tensors.emplace_back("model.final_norm.weight", at::ones({p.hidden}));
  tensors.emplace_back("head.dense.weight", linear(p.hidden, p.hidden));
  tensors.emplace_back("head.norm.weight", at::ones({p.hidden}));
  tensors.emplace_back("classifier.weight", linear(static_cast<int64_t>(labels.size()), p.hidden));
  tensors.emplace_back("classifier.bias", at::zeros({static_cast<int64_t>(labels.size())}));
  save_safetensors(out / "model.safetensors", tensors);

  if (!spec.tokenizer.empty())
    fs::copy_file(spec.tokenizer, out / "tokenizer.json", fs::copy_options::overwrite_existing);
}

}  // namespace semroute
