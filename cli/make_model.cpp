// `semroute make-model`: writes a ModernBERT checkpoint with random weights in
// the Hugging Face layout (config.json + model.safetensors, optionally a
// tokenizer.json), at real model sizes for benchmarks or tiny for tests.
#include <ATen/TensorOperators.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/zeros.h>
#include <ATen/core/Generator.h>
#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli.h"
#include "core/checkpoint.h"
#include "semroute/error.h"

namespace semroute::cli {
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

std::vector<std::string> split_labels(const std::string& csv) {
  std::vector<std::string> labels;
  std::stringstream in(csv);
  for (std::string label; std::getline(in, label, ',');)
    if (!label.empty()) labels.push_back(label);
  return labels;
}

}  // namespace

int run_make_model(const Args& args) {
  if (args.positional.size() != 2)
    throw InvalidInput("usage: semroute make-model PRESET OUT_DIR [--labels a,b,c] [--token-labels O,B-X,I-X] "
                       "[--tokenizer FILE] [--seed N]");
  const Preset p = preset(args.positional[0]);
  const fs::path out = args.positional[1];
  const bool token_task = !args.token_labels.empty();
  std::vector<std::string> labels = split_labels(token_task ? args.token_labels : args.labels);
  if (labels.empty()) labels = {"negative", "positive"};
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
  auto gen = at::make_generator<at::CPUGeneratorImpl>(args.seed);
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

  if (!args.tokenizer.empty()) fs::copy_file(args.tokenizer, out / "tokenizer.json", fs::copy_options::overwrite_existing);
  std::printf("wrote %s (%s, %zu labels)\n", out.string().c_str(), args.positional[0].c_str(), labels.size());
  return 0;
}

}  // namespace semroute::cli
