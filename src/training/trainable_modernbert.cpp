#include "training/trainable_modernbert.h"

#include <c10/core/GradMode.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/ATen.h>

#include <cmath>

#include "core/checkpoint.h"
#include "core/config_reader.h"
#include "core/cpu_features.h"
#include "models/layers.h"
#include "semroute/error.h"

namespace semroute::training {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

std::string leaf_module(const std::string& module) { return module.substr(module.rfind('.') + 1); }

// Normal(0, std) truncated at ±2 std, as Hugging Face initializes ModernBERT.
at::Tensor trunc_normal(at::IntArrayRef shape, double std, at::Generator& gen) {
  at::Tensor t = at::empty(shape, at::kFloat).normal_(0, std, gen);
  for (int round = 0; round < 64; ++round) {
    const at::Tensor outside = t.abs() > 2 * std;
    const int64_t n = outside.sum().item<int64_t>();
    if (n == 0) break;
    t.masked_scatter_(outside, at::empty({n}, at::kFloat).normal_(0, std, gen));
  }
  return t;
}

at::Tensor differentiable(Activation activation, const at::Tensor& x) {
  switch (activation) {
    case Activation::kGeluErf: return at::gelu(x);
    case Activation::kGeluTanh: return at::gelu(x, "tanh");
    case Activation::kRelu: return at::relu(x);
    case Activation::kSilu: return at::silu(x);
  }
  return x;
}

// HF's rotate_half RoPE tables for positions 0..T-1: cos, sin [T, head_dim].
std::pair<at::Tensor, at::Tensor> rope_tables(double theta, int64_t head_dim, int64_t length, c10::Device device) {
  const at::Tensor inv_freq =
      1.0 / at::pow(theta, at::arange(0, head_dim, 2, at::kDouble) / static_cast<double>(head_dim));
  const at::Tensor freqs = at::outer(at::arange(length, at::kDouble), inv_freq);
  const at::Tensor emb = at::cat({freqs, freqs}, -1);
  return {emb.cos().to(device, at::kFloat), emb.sin().to(device, at::kFloat)};
}

at::Tensor rotate(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const auto halves = x.chunk(2, -1);
  return x * cos + at::cat({-halves[1], halves[0]}, -1) * sin;
}

}  // namespace

TrainableModernBert::TrainableModernBert(nlohmann::json config, Objective kind, uint64_t seed)
    : config_json_(std::move(config)),
      config_(ModernBertConfig::parse(ConfigReader(config_json_, "config.json"))),
      kind_(kind) {
  const auto& c = config_;
  if (c.global_rope.scaling.type != "default" || c.local_rope.scaling.type != "default")
    throw Unsupported("training a ModernBERT with rope_scaling is not supported");
  if (c.norm_bias || c.attention_bias || c.mlp_bias)
    throw Unsupported("training supports ModernBERT without norm, attention or MLP biases (as published)");
  const int64_t h = c.base.hidden_size, inter = c.base.intermediate_size, layers = c.base.num_hidden_layers;
  const double range = config_json_.value("initializer_range", 0.02);
  const double out_std = range / std::sqrt(2.0 * static_cast<double>(layers));
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const auto add = [&](const std::string& name, at::Tensor t) { weights_[name] = t.requires_grad_(true); };
  const auto ones = [&](const std::string& name) { add(name, at::ones({h})); };
  add("model.embeddings.tok_embeddings.weight", trunc_normal({c.base.vocab_size, h}, range, gen));
  ones("model.embeddings.norm.weight");
  for (int64_t i = 0; i < layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    if (i != 0) ones(p + "attn_norm.weight");
    add(p + "attn.Wqkv.weight", trunc_normal({3 * h, h}, range, gen));
    add(p + "attn.Wo.weight", trunc_normal({h, h}, out_std, gen));
    ones(p + "mlp_norm.weight");
    add(p + "mlp.Wi.weight", trunc_normal({2 * inter, h}, range, gen));
    add(p + "mlp.Wo.weight", trunc_normal({h, inter}, out_std, gen));
  }
  ones("model.final_norm.weight");
  add("head.dense.weight", trunc_normal({h, h}, out_std, gen));
  if (c.classifier_bias) add("head.dense.bias", at::zeros({h}));
  ones("head.norm.weight");
  if (kind == Objective::kMaskedLm) {
    add("decoder.bias", at::zeros({c.base.vocab_size}));  // decoder.weight is tied to the embeddings
  } else {
    const auto labels = static_cast<int64_t>(c.base.num_labels());
    add("classifier.weight", trunc_normal({labels, h}, 1.0 / std::sqrt(static_cast<double>(h)), gen));
    add("classifier.bias", at::zeros({labels}));
  }
}

std::vector<std::string> TrainableModernBert::load(const std::filesystem::path& dir) {
  const Checkpoint checkpoint = Checkpoint::open(dir);
  std::map<std::string, std::string> names;  // our name -> the checkpoint's
  for (const std::string& name : checkpoint.names()) {
    const bool encoder = starts_with(name, "embeddings.") || starts_with(name, "layers.") ||
                         starts_with(name, "final_norm.");
    names[encoder ? "model." + name : name] = name;
  }
  std::vector<std::string> fresh, problems;
  c10::NoGradGuard no_grad;
  for (auto& [name, tensor] : weights_) {
    const auto it = names.find(name);
    const bool encoder = starts_with(name, "model.");
    at::Tensor stored = it == names.end() ? at::Tensor() : checkpoint.tensor(it->second);
    if (stored.defined() && stored.sizes() == tensor.sizes()) {
      tensor.copy_(stored.to(at::kFloat));
    } else if (encoder) {
      problems.push_back(name + (stored.defined() ? " has another shape" : " is missing"));
    } else {
      fresh.push_back(name);  // a new head (other labels, or none in the base)
    }
  }
  if (!problems.empty()) {
    std::string message = dir.string() + ": the checkpoint does not match its config:";
    for (const auto& p : problems) message += "\n  " + p;
    throw LoadError(message);
  }
  return fresh;
}

void TrainableModernBert::add_lora(const LoraSpec& spec, uint64_t seed) {
  if (spec.r <= 0) return;
  lora_spec_ = spec;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  for (auto& [name, tensor] : weights_) {
    const bool in_head = !starts_with(name, "model.");
    tensor.requires_grad_(in_head);
    const std::string suffix = ".weight";
    if (in_head || tensor.dim() != 2 || !starts_with(name, "model.layers.")) continue;
    const std::string module = name.substr(0, name.size() - suffix.size());
    if (std::find(spec.targets.begin(), spec.targets.end(), leaf_module(module)) == spec.targets.end()) continue;
    // PEFT: A ~ kaiming_uniform(a=√5) = U(±1/√in), B = 0 (the adapter starts as a no-op).
    const double bound = 1.0 / std::sqrt(static_cast<double>(tensor.size(1)));
    at::Tensor a = at::empty({spec.r, tensor.size(1)}, at::kFloat).uniform_(-bound, bound, gen);
    lora_[module] = {a.requires_grad_(true), at::zeros({tensor.size(0), spec.r}).requires_grad_(true)};
  }
  if (lora_.empty()) throw InvalidInput("no linear layer matches the LoRA targets");
}

void TrainableModernBert::to(c10::Device device) {
  if (device == device_) return;
  const auto move = [&](at::Tensor& t) { t = t.detach().to(device).requires_grad_(t.requires_grad()); };
  for (auto& [name, tensor] : weights_) move(tensor);
  for (auto& [module, pair] : lora_) move(pair.first), move(pair.second);
  device_ = device;
}

at::Tensor TrainableModernBert::w(const std::string& name) const {
  const auto it = weights_.find(name);
  return it == weights_.end() ? at::Tensor() : it->second;
}

void check_compute_dtype(at::ScalarType dtype, c10::Device device) {
  if (dtype != at::kFloat && dtype != at::kBFloat16) throw InvalidInput("training computes in float32 or bfloat16");
  // Without bfloat16 instructions oneDNN emulates the products, slower than
  // float32 (and under an AVX2 cap it has none at all).
  if (dtype == at::kBFloat16 && device.is_cpu() && !cpu_features().native_bf16_gemm())
    throw InvalidInput("bfloat16 products need a CPU with AVX-512 BF16 or AMX, or a GPU; " +
                       cpu_features().describe() + " has none (float32 is the faster choice there)");
}

void TrainableModernBert::set_compute_dtype(at::ScalarType dtype) {
  check_compute_dtype(dtype, device_);
  compute_dtype_ = dtype;
}

at::Tensor TrainableModernBert::affine(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) const {
  if (compute_dtype_ == at::kFloat) return at::linear(x, weight, bias);
  // The bias is added in float32: bfloat16 keeps 8 bits of a sum's mantissa.
  const at::Tensor y = at::linear(x.to(compute_dtype_), weight.to(compute_dtype_)).to(at::kFloat);
  return bias.defined() ? y + bias : y;
}

at::Tensor TrainableModernBert::product(const at::Tensor& a, const at::Tensor& b) const {
  if (compute_dtype_ == at::kFloat) return at::matmul(a, b);
  return at::matmul(a.to(compute_dtype_), b.to(compute_dtype_)).to(at::kFloat);
}

at::Tensor TrainableModernBert::linear(const std::string& module, const at::Tensor& x, bool train) const {
  at::Tensor y = affine(x, w(module + ".weight"), w(module + ".bias"));
  const auto it = lora_.find(module);
  if (it == lora_.end()) return y;
  const double scale = lora_spec_.alpha / static_cast<double>(lora_spec_.r);
  const at::Tensor down = affine(at::dropout(x, dropout_, train), it->second.first, {});
  return y + affine(down, it->second.second, {}) * scale;
}

at::Tensor TrainableModernBert::encode(const at::Tensor& ids, const at::Tensor& mask, bool train) const {
  const auto& c = config_;
  const int64_t batch = ids.size(0), length = ids.size(1), h = c.base.hidden_size;
  const int64_t heads = c.base.num_attention_heads, hd = c.head_dim();
  const double eps = c.norm_eps;
  const auto norm = [&](const at::Tensor& x, const std::string& name) {
    return at::layer_norm(x, {h}, w(name + ".weight"), {}, eps);
  };
  at::Tensor x = at::embedding(w("model.embeddings.tok_embeddings.weight"), ids);
  x = at::dropout(norm(x, "model.embeddings.norm"), dropout_, train);

  // Additive masks: padding keys for every layer, plus the window for local
  // ones. Finite: a padding query far from every real key must not turn its
  // row (and, through 0 x NaN, the real rows reading it) into NaN.
  constexpr double kMasked = -1e9;
  const auto floats = at::TensorOptions(ids.device()).dtype(at::kFloat);
  const at::Tensor keys = at::zeros({batch, 1, 1, length}, floats).masked_fill(mask.view({batch, 1, 1, length}) == 0,
                                                                         kMasked);
  const at::Tensor positions = at::arange(length, at::TensorOptions(ids.device()).dtype(at::kLong));
  const at::Tensor far = (positions.view({-1, 1}) - positions.view({1, -1})).abs() > c.local_attention / 2;
  const at::Tensor local = keys + at::zeros({length, length}, floats).masked_fill(far, kMasked);
  const auto global_rope = rope_tables(c.global_rope.theta, hd, length, ids.device());
  const auto local_rope = rope_tables(c.local_rope.theta, hd, length, ids.device());
  const Activation act = parse_activation(c.hidden_activation);
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));

  for (int64_t i = 0; i < c.base.num_hidden_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    const bool global = c.is_global(i);
    const auto& [cos, sin] = global ? global_rope : local_rope;
    const at::Tensor normed = i == 0 ? x : norm(x, p + "attn_norm");
    const auto qkv = linear(p + "attn.Wqkv", normed, train).view({batch, length, 3, heads, hd}).permute({2, 0, 3, 1, 4});
    const at::Tensor q = rotate(qkv[0], cos, sin), k = rotate(qkv[1], cos, sin);
    const at::Tensor scores = product(q, k.transpose(-1, -2)) * scale + (global ? keys : local);
    const at::Tensor context = product(at::softmax(scores, -1), qkv[2]).transpose(1, 2).reshape({batch, length, h});
    x = x + at::dropout(linear(p + "attn.Wo", context, train), dropout_, train);
    const auto input_gate = linear(p + "mlp.Wi", norm(x, p + "mlp_norm"), train).chunk(2, -1);
    const at::Tensor mlp = at::dropout(differentiable(act, input_gate[0]) * input_gate[1], dropout_, train);
    x = x + linear(p + "mlp.Wo", mlp, train);
  }
  return norm(x, "model.final_norm");
}

at::Tensor TrainableModernBert::head(const at::Tensor& x, bool train) const {
  const at::Tensor dense = linear("head.dense", x, train);
  return at::layer_norm(differentiable(parse_activation(config_.classifier_activation), dense), {config_.base.hidden_size},
                        w("head.norm.weight"), {}, config_.norm_eps);
}

at::Tensor TrainableModernBert::logits(const at::Tensor& ids, const at::Tensor& mask, bool train,
                                       const at::Tensor& targets) const {
  const at::Tensor hidden = encode(ids, mask, train);
  if (kind_ == Objective::kMaskedLm) {
    const at::Tensor picked = hidden.index({targets != kIgnore});
    return affine(head(picked, train), w("model.embeddings.tok_embeddings.weight"), w("decoder.bias"));
  }
  at::Tensor features = hidden;
  if (kind_ == Objective::kSequence) {
    if (config_.classifier_pooling == "mean") {
      const at::Tensor m = mask.unsqueeze(-1).to(at::kFloat);
      features = (hidden * m).sum(1) / m.sum(1);
    } else {
      features = hidden.select(1, 0);
    }
  }
  return linear("classifier", at::dropout(head(features, train), dropout_, train), train);
}

std::pair<std::vector<at::Tensor>, std::vector<at::Tensor>> TrainableModernBert::trainable() const {
  std::vector<at::Tensor> no_decay, decay;
  for (const auto& [name, tensor] : weights_) {
    if (!tensor.requires_grad()) continue;
    const bool norm_or_bias = tensor.dim() == 1;
    (norm_or_bias ? no_decay : decay).push_back(tensor);
  }
  for (const auto& [module, pair] : lora_) {
    decay.push_back(pair.first);
    decay.push_back(pair.second);
  }
  return {no_decay, decay};
}

std::vector<at::Tensor> TrainableModernBert::snapshot() const {
  std::vector<at::Tensor> copies;
  const auto [no_decay, decay] = trainable();
  for (const auto* group : {&no_decay, &decay})
    for (const at::Tensor& t : *group) copies.push_back(t.detach().clone());
  return copies;
}

void TrainableModernBert::restore(const std::vector<at::Tensor>& snapshot) {
  c10::NoGradGuard no_grad;
  const auto [no_decay, decay] = trainable();
  size_t i = 0;
  for (const auto* group : {&no_decay, &decay})
    for (const at::Tensor& t : *group) const_cast<at::Tensor&>(t).copy_(snapshot.at(i++));
}

}  // namespace semroute::training
