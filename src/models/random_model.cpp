#include "models/random_model.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/TensorOperators.h>
#include <ATen/core/Generator.h>
#include <ATen/ops/full.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/zeros.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/checkpoint.h"
#include "core/model_config.h"
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
  if (name == "medium") return {50368, 384, 6, 6, 768, 128, 8192, 160000.0};
  if (name == "small") return {50368, 256, 4, 4, 512, 128, 8192, 160000.0};
  if (name == "tiny") return {50368, 32, 4, 2, 48, 8, 40000, 160000.0};
  throw InvalidInput("unknown preset '" + name + "' (modernbert-base, mmbert-base, mmbert-small, medium, small, tiny)");
}

}  // namespace

nlohmann::json modernbert_preset_config(const std::string& name) {
  const Preset p = preset(name);
  return {
      {"model_type", "modernbert"}, {"vocab_size", p.vocab}, {"hidden_size", p.hidden},
      {"num_hidden_layers", p.layers}, {"num_attention_heads", p.heads}, {"intermediate_size", p.intermediate},
      {"local_attention", p.window}, {"global_attn_every_n_layers", 3}, {"max_position_embeddings", p.positions},
      {"global_rope_theta", p.global_theta}, {"local_rope_theta", 10000.0}, {"norm_eps", 1e-5},
      {"hidden_activation", "gelu"}, {"classifier_pooling", "mean"}, {"classifier_activation", "gelu"},
      {"pad_token_id", 50283}, {"bos_token_id", 50281}, {"eos_token_id", 50282}, {"cls_token_id", 50281},
      {"sep_token_id", 50282}, {"torch_dtype", "float32"},
  };
}

void write_random_modernbert(const RandomModelSpec& spec, const fs::path& out) {
  const Preset p = preset(spec.preset);
  const bool token_task = spec.token_task;
  const std::vector<std::string>& labels = spec.labels;
  if (labels.empty()) throw InvalidInput("a random model needs at least one label");
  fs::create_directories(out);
  nlohmann::json config = modernbert_preset_config(spec.preset);
  config["architectures"] = {token_task ? "ModernBertForTokenClassification" : "ModernBertForSequenceClassification"};
  config.update(label_maps(labels));
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
  at::Tensor bias = at::zeros({static_cast<int64_t>(labels.size())});
  if (!spec.label_bias.empty()) {
    if (spec.label_bias.size() != labels.size()) throw InvalidInput("label_bias: one value per label");
    bias = at::tensor(spec.label_bias);
  }
  tensors.emplace_back("classifier.bias", bias);
  save_safetensors(out / "model.safetensors", tensors);

  if (!spec.tokenizer.empty())
    fs::copy_file(spec.tokenizer, out / "tokenizer.json", fs::copy_options::overwrite_existing);
}

void write_random_pair_scorer(const RandomModelSpec& spec, const fs::path& out) {
  write_random_modernbert(spec, out);  // its sequence head stays unread
  const Preset p = preset(spec.preset);
  nlohmann::json config = modernbert_preset_config(spec.preset);
  config["architectures"] = {"ModernBertModel"};
  config["representation_contract"] = {{"version", 1},
                                       {"pooling", "cls"},
                                       {"intermediate_normalization", "final_norm"},
                                       {"final_normalization", "final_norm"},
                                       {"head_dtype", "float32"}};
  std::ofstream(out / "config.json") << config.dump(2) << "\n";
  const std::vector<std::pair<int64_t, int64_t>> exits = {{1, p.hidden / 2}, {p.layers, p.hidden}};
  nlohmann::json layers = nlohmann::json::array(), dims = nlohmann::json::array();
  auto gen = at::make_generator<at::CPUGeneratorImpl>(spec.seed + 1);
  std::vector<std::pair<std::string, at::Tensor>> heads;
  for (const auto& [layer, dim] : exits) {
    layers.push_back(layer);
    dims.push_back(dim);
    const std::string prefix = std::to_string(layer) + "." + std::to_string(dim) + ".";
    const auto options = at::TensorOptions().dtype(at::kFloat);
    heads.emplace_back(prefix + "0.weight", at::randn({16, dim}, gen, options) / std::sqrt(static_cast<double>(dim)));
    heads.emplace_back(prefix + "0.bias", at::zeros({16}));
    heads.emplace_back(prefix + "3.weight", at::randn({1, 16}, gen, options) / 4.0);
    heads.emplace_back(prefix + "3.bias", at::zeros({1}));
  }
  std::ofstream(out / "matryoshka_config.json")
      << nlohmann::json{{"layer_indices", layers}, {"dim_indices", dims}}.dump(2) << "\n";
  save_safetensors(out / "classification_heads.safetensors", heads);
}

namespace {

// Weights named and shaped as the checkpoint's, of order-1 activations.
class RandomWeights {
 public:
  explicit RandomWeights(uint64_t seed) : gen_(at::make_generator<at::CPUGeneratorImpl>(seed)) {}
  void linear(const std::string& name, int64_t rows, int64_t cols, bool bias = false) {
    tensors_.emplace_back(name + ".weight", at::randn({rows, cols}, gen_, at::TensorOptions()) /
                                                 std::sqrt(static_cast<double>(cols)));
    if (bias) tensors_.emplace_back(name + ".bias", at::zeros({rows}));
  }
  void table(const std::string& name, int64_t rows, int64_t cols) {
    tensors_.emplace_back(name, at::randn({rows, cols}, gen_, at::TensorOptions()) * 0.5);
  }
  void norm(const std::string& name, int64_t dim, float value, bool bias = false) {
    tensors_.emplace_back(name + ".weight", at::full({dim}, value));
    if (bias) tensors_.emplace_back(name + ".bias", at::zeros({dim}));
  }
  void save(const fs::path& path) { save_safetensors(path, tensors_); }

 private:
  at::Generator gen_;
  std::vector<std::pair<std::string, at::Tensor>> tensors_;
};

void write_json(const fs::path& path, const nlohmann::json& j) { std::ofstream(path) << j.dump(2) << "\n"; }

constexpr int64_t kVocab = 32000;

// A Llama-family layer's projections (see GatedProjections); `norm` is the
// stored q/k norm weight (1 for Qwen3, 0 for Gemma's (1 + w) form).
void gated_projections(RandomWeights& w, const std::string& p, int64_t h, int64_t heads, int64_t kv, int64_t hd,
                       int64_t inter, float norm) {
  w.norm(p + "self_attn.q_norm", hd, norm);
  w.norm(p + "self_attn.k_norm", hd, norm);
  w.linear(p + "self_attn.q_proj", heads * hd, h);
  w.linear(p + "self_attn.k_proj", kv * hd, h);
  w.linear(p + "self_attn.v_proj", kv * hd, h);
  w.linear(p + "self_attn.o_proj", h, heads * hd);
  w.linear(p + "mlp.gate_proj", inter, h);
  w.linear(p + "mlp.up_proj", inter, h);
  w.linear(p + "mlp.down_proj", h, inter);
}

struct Qwen3Size {
  int64_t hidden, layers, heads, kv, head_dim, inter, vocab, positions;
  const char* architecture;
};

void qwen3(RandomWeights& w, const Qwen3Size& s, const fs::path& out) {
  write_json(out / "config.json",
             {{"architectures", {s.architecture}}, {"model_type", "qwen3"}, {"vocab_size", s.vocab},
              {"hidden_size", s.hidden}, {"num_hidden_layers", s.layers}, {"num_attention_heads", s.heads},
              {"num_key_value_heads", s.kv}, {"head_dim", s.head_dim}, {"intermediate_size", s.inter},
              {"max_position_embeddings", s.positions}, {"rope_theta", 1000000.0}, {"rms_norm_eps", 1e-6},
              {"hidden_act", "silu"}, {"attention_bias", false}, {"tie_word_embeddings", true}});
  w.table("embed_tokens.weight", s.vocab, s.hidden);
  for (int64_t i = 0; i < s.layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    w.norm(p + "input_layernorm", s.hidden, 1.0f);
    w.norm(p + "post_attention_layernorm", s.hidden, 1.0f);
    gated_projections(w, p, s.hidden, s.heads, s.kv, s.head_dim, s.inter, 1.0f);
  }
  w.norm("norm", s.hidden, 1.0f);
}

void embeddinggemma(RandomWeights& w, const fs::path& out, uint64_t seed) {
  const int64_t h = 768, layers = 24, heads = 3, kv = 1, hd = 256, inter = 1152;
  nlohmann::json types = nlohmann::json::array();
  for (int64_t i = 0; i < layers; ++i) types.push_back((i + 1) % 6 == 0 ? "full_attention" : "sliding_attention");
  write_json(out / "config.json",
             {{"architectures", {"Gemma3TextModel"}}, {"model_type", "gemma3_text"}, {"vocab_size", kVocab},
              {"hidden_size", h}, {"num_hidden_layers", layers}, {"num_attention_heads", heads},
              {"num_key_value_heads", kv}, {"head_dim", hd}, {"intermediate_size", inter},
              {"max_position_embeddings", 2048}, {"rope_theta", 1000000.0}, {"rope_local_base_freq", 10000.0},
              {"query_pre_attn_scalar", 256}, {"sliding_window", 512}, {"layer_types", types},
              {"use_bidirectional_attention", true}, {"rms_norm_eps", 1e-6}, {"hidden_activation", "gelu_pytorch_tanh"}});
  w.table("embed_tokens.weight", kVocab, h);
  for (int64_t i = 0; i < layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    for (const char* n : {"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                          "post_feedforward_layernorm"})
      w.norm(p + n, h, 0.0f);  // Gemma stores (scale − 1)
    gated_projections(w, p, h, heads, kv, hd, inter, 0.0f);
  }
  w.norm("norm", h, 0.0f);
  // sentence-transformers: mean pooling, Dense 768->3072->768, Normalize.
  write_json(out / "modules.json",
             {{{"idx", 0}, {"name", "0"}, {"path", ""}, {"type", "sentence_transformers.models.Transformer"}},
              {{"idx", 1}, {"name", "1"}, {"path", "1_Pooling"}, {"type", "sentence_transformers.models.Pooling"}},
              {{"idx", 2}, {"name", "2"}, {"path", "2_Dense"}, {"type", "sentence_transformers.models.Dense"}},
              {{"idx", 3}, {"name", "3"}, {"path", "3_Dense"}, {"type", "sentence_transformers.models.Dense"}},
              {{"idx", 4}, {"name", "4"}, {"path", "4_Normalize"}, {"type", "sentence_transformers.models.Normalize"}}});
  fs::create_directories(out / "1_Pooling");
  write_json(out / "1_Pooling/config.json", {{"word_embedding_dimension", h}, {"pooling_mode_mean_tokens", true}});
  const std::pair<int64_t, int64_t> dense[] = {{h, 3072}, {3072, h}};
  for (int i = 0; i < 2; ++i) {
    const fs::path dir = out / (std::to_string(i + 2) + "_Dense");
    fs::create_directories(dir);
    write_json(dir / "config.json", {{"in_features", dense[i].first}, {"out_features", dense[i].second},
                                     {"bias", false}, {"activation_function", "torch.nn.modules.linear.Identity"}});
    RandomWeights d(seed + 1 + static_cast<uint64_t>(i));
    d.linear("linear", dense[i].second, dense[i].first);
    d.save(dir / "model.safetensors");
  }
}

void minilm(RandomWeights& w, const fs::path& out) {
  const int64_t h = 384, layers = 6, heads = 12, inter = 1536;
  write_json(out / "config.json",
             {{"architectures", {"BertModel"}}, {"model_type", "bert"}, {"vocab_size", 30522}, {"hidden_size", h},
              {"num_hidden_layers", layers}, {"num_attention_heads", heads}, {"intermediate_size", inter},
              {"max_position_embeddings", 512}, {"hidden_act", "gelu"}, {"layer_norm_eps", 1e-12}});
  w.table("embeddings.word_embeddings.weight", 30522, h);
  w.table("embeddings.position_embeddings.weight", 512, h);
  w.table("embeddings.token_type_embeddings.weight", 2, h);
  w.norm("embeddings.LayerNorm", h, 1.0f, true);
  for (int64_t i = 0; i < layers; ++i) {
    const std::string p = "encoder.layer." + std::to_string(i) + ".";
    for (const char* n : {"attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"})
      w.linear(p + n, h, h, true);
    w.norm(p + "attention.output.LayerNorm", h, 1.0f, true);
    w.linear(p + "intermediate.dense", inter, h, true);
    w.linear(p + "output.dense", h, inter, true);
    w.norm(p + "output.LayerNorm", h, 1.0f, true);
  }
}

}  // namespace

void write_random_qwen3_backbone(int64_t vocab, uint64_t seed, const fs::path& out) {
  fs::create_directories(out);
  RandomWeights weights(seed);
  qwen3(weights, {64, 2, 4, 2, 16, 128, vocab, 4096, "Qwen3Model"}, out);
  weights.save(out / "model.safetensors");
}

void write_random_embedding_model(const RandomModelSpec& spec, const fs::path& out) {
  fs::create_directories(out);
  RandomWeights weights(spec.seed);
  if (spec.preset == "qwen3-embedding-0.6b") {
    qwen3(weights, {1024, 28, 16, 8, 128, 3072, kVocab, 32768, "Qwen3ForCausalLM"}, out);
  } else if (spec.preset == "embeddinggemma-300m") {
    embeddinggemma(weights, out, spec.seed);
  } else if (spec.preset == "minilm-l6") {
    minilm(weights, out);
  } else {
    throw InvalidInput("unknown embedding preset '" + spec.preset +
                       "' (qwen3-embedding-0.6b, embeddinggemma-300m, minilm-l6)");
  }
  weights.save(out / "model.safetensors");
  if (!spec.tokenizer.empty())
    fs::copy_file(spec.tokenizer, out / "tokenizer.json", fs::copy_options::overwrite_existing);
}

}  // namespace semroute
