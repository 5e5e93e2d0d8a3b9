#include "models/configs.h"

#include <algorithm>
#include <climits>
#include <cmath>

#include "semroute/error.h"

namespace semroute {
namespace {

ModelConfig sized(std::string type, int64_t vocab, int64_t hidden, int64_t layers, int64_t heads, int64_t inter,
                  int64_t positions) {
  ModelConfig c;
  c.model_type = std::move(type);
  c.vocab_size = vocab;
  c.hidden_size = hidden;
  c.num_hidden_layers = layers;
  c.num_attention_heads = heads;
  c.intermediate_size = inter;
  c.max_position_embeddings = positions;
  return c;
}

constexpr int64_t kNoBound = INT64_MAX;

void require_positive(const ConfigReader& r, const char* key, int64_t value, int64_t max = kNoBound) {
  if (value <= 0) throw LoadError(r.source() + ": \"" + key + "\" must be positive, got " + std::to_string(value));
  if (value > max)
    throw LoadError(r.source() + ": \"" + key + "\" is " + std::to_string(value) + ", above the supported " +
                    std::to_string(max));
}

// eps, θ, scales: a zero, negative or non-finite value turns every answer into NaN.
double positive_finite(const ConfigReader& r, const char* key, double value) {
  if (!(value > 0) || !std::isfinite(value))
    throw LoadError(r.source() + ": \"" + key + "\" must be a positive finite number, got " + std::to_string(value));
  return value;
}

void check_sizes(const ConfigReader& r, const ModelConfig& c) {
  require_positive(r, "vocab_size", c.vocab_size, ModelConfig::kMaxVocab);
  require_positive(r, "hidden_size", c.hidden_size, ModelConfig::kMaxHidden);
  require_positive(r, "num_hidden_layers", c.num_hidden_layers, ModelConfig::kMaxLayers);
  require_positive(r, "num_attention_heads", c.num_attention_heads, c.hidden_size);
  require_positive(r, "intermediate_size", c.intermediate_size, ModelConfig::kMaxIntermediate);
  require_positive(r, "max_position_embeddings", c.max_position_embeddings, ModelConfig::kMaxPositions);
}

void check_divisible_heads(const ConfigReader& r, const ModelConfig& c) {
  if (c.hidden_size % c.num_attention_heads != 0)
    throw LoadError(r.source() + ": hidden_size " + std::to_string(c.hidden_size) +
                    " is not a multiple of num_attention_heads " + std::to_string(c.num_attention_heads));
}

void check_kv_heads(const ConfigReader& r, int64_t heads, int64_t kv_heads) {
  require_positive(r, "num_key_value_heads", kv_heads, heads);
  if (heads % kv_heads != 0)
    throw LoadError(r.source() + ": num_attention_heads " + std::to_string(heads) +
                    " is not a multiple of num_key_value_heads " + std::to_string(kv_heads));
}

RopeScaling parse_rope_scaling(const ConfigReader& s, RopeScaling scaling = {}) {
  // "type" is the legacy spelling of "rope_type".
  scaling.type = s.get_string("rope_type", s.get_string("type", scaling.type));
  scaling.factor = s.get_double("factor", scaling.factor);
  if (auto v = s.get_optional_int("original_max_position_embeddings")) scaling.original_max_position_embeddings = v;
  if (auto v = s.get_optional_double("attention_factor")) scaling.attention_factor = v;
  if (auto v = s.get_optional_double("mscale")) scaling.mscale = v;
  if (auto v = s.get_optional_double("mscale_all_dim")) scaling.mscale_all_dim = v;
  // HF reads these with `or`: 0 or null means the default.
  if (const double v = s.get_double("beta_fast", 0); v != 0) scaling.beta_fast = v;
  if (const double v = s.get_double("beta_slow", 0); v != 0) scaling.beta_slow = v;
  scaling.truncate = s.get_bool("truncate", scaling.truncate);
  if (positive_finite(s, "factor", scaling.factor) > 1e6)
    throw LoadError(s.source() + ": rope \"factor\" " + std::to_string(scaling.factor) + " is above the supported 1e6");
  positive_finite(s, "beta_fast", scaling.beta_fast);
  positive_finite(s, "beta_slow", scaling.beta_slow);
  if (scaling.original_max_position_embeddings)
    require_positive(s, "original_max_position_embeddings", *scaling.original_max_position_embeddings,
                     ModelConfig::kMaxPositions);
  if (scaling.attention_factor) positive_finite(s, "attention_factor", *scaling.attention_factor);
  for (const auto& [key, value] : {std::pair{"mscale", scaling.mscale}, std::pair{"mscale_all_dim", scaling.mscale_all_dim}})
    if (value && !std::isfinite(*value)) throw LoadError(s.source() + ": \"" + key + "\" must be finite");
  return scaling;
}

RopeParams parse_rope_entry(const ConfigReader& entry, RopeParams params) {
  params.theta = positive_finite(entry, "rope_theta", entry.get_double("rope_theta", params.theta));
  params.scaling = parse_rope_scaling(entry, params.scaling);
  return params;
}

// The newer nested form: {"full_attention": {...}, "sliding_attention": {...}}.
bool is_nested_rope(const ConfigReader& rope) {
  return rope.has(kFullAttention) || rope.has(kSlidingAttention);
}

// Per-layer "full_attention" / "sliding_attention": from layer_types when
// given, else `sliding(i)` decides.
template <typename IsSliding>
std::vector<std::string> parse_layer_types(const ConfigReader& r, int64_t layers, IsSliding sliding) {
  std::vector<std::string> types = r.get_strings("layer_types");
  if (types.empty()) {
    for (int64_t i = 0; i < layers; ++i) types.push_back(sliding(i) ? kSlidingAttention : kFullAttention);
    return types;
  }
  if (static_cast<int64_t>(types.size()) != layers)
    throw LoadError(r.source() + ": layer_types has " + std::to_string(types.size()) + " entries for " +
                    std::to_string(layers) + " layers");
  for (const auto& t : types)
    if (t != kFullAttention && t != kSlidingAttention)
      throw Unsupported(r.source() + ": layer type '" + t + "' is not supported");
  return types;
}

}  // namespace

ModernBertConfig ModernBertConfig::parse(const ConfigReader& r) {
  ModernBertConfig c;
  c.base = ModelConfig::parse(r, sized("modernbert", 50368, 768, 22, 12, 1152, 8192));
  if (!r.json().contains("pad_token_id")) c.base.pad_token_id = 50283;
  check_sizes(r, c.base);
  check_divisible_heads(r, c.base);
  c.global_attn_every_n_layers = r.get_int("global_attn_every_n_layers", c.global_attn_every_n_layers);
  c.local_attention = r.get_int("local_attention", c.local_attention);
  require_positive(r, "global_attn_every_n_layers", c.global_attn_every_n_layers);
  require_positive(r, "local_attention", c.local_attention);
  c.norm_eps = positive_finite(r, "norm_eps", r.get_double("norm_eps", c.norm_eps));
  c.norm_bias = r.get_bool("norm_bias", c.norm_bias);
  c.attention_bias = r.get_bool("attention_bias", c.attention_bias);
  c.mlp_bias = r.get_bool("mlp_bias", c.mlp_bias);
  c.classifier_bias = r.get_bool("classifier_bias", c.classifier_bias);
  c.hidden_activation = r.get_string("hidden_activation", c.hidden_activation);
  c.classifier_activation = r.get_string("classifier_activation", c.classifier_activation);
  c.classifier_pooling = r.get_string("classifier_pooling", c.classifier_pooling);
  if (c.classifier_pooling != "cls" && c.classifier_pooling != "mean")
    throw LoadError(r.source() + ": classifier_pooling must be \"cls\" or \"mean\", got \"" + c.classifier_pooling + "\"");

  // Legacy keys first; a legacy rope_scaling applies to both layer kinds.
  c.global_rope.theta = positive_finite(r, "global_rope_theta", r.get_double("global_rope_theta", c.global_rope.theta));
  // An explicit null local_rope_theta means "same as global" in HF's modeling code.
  const bool local_null = r.json().contains("local_rope_theta") && !r.has("local_rope_theta");
  c.local_rope.theta = local_null ? c.global_rope.theta
                                  : positive_finite(r, "local_rope_theta", r.get_double("local_rope_theta", c.local_rope.theta));
  if (r.has("rope_scaling")) {
    c.global_rope.scaling = parse_rope_scaling(r.get_object("rope_scaling"));
    c.local_rope.scaling = c.global_rope.scaling;
  }
  const ConfigReader rope = r.get_object("rope_parameters");
  if (is_nested_rope(rope)) {
    c.global_rope = parse_rope_entry(rope.get_object(kFullAttention), c.global_rope);
    c.local_rope = parse_rope_entry(rope.get_object(kSlidingAttention), c.local_rope);
  }
  const int64_t every = c.global_attn_every_n_layers;
  c.layer_types = parse_layer_types(r, c.base.num_hidden_layers, [every](int64_t i) { return i % every != 0; });
  return c;
}

Qwen3Config Qwen3Config::parse(const ConfigReader& r) {
  Qwen3Config c;
  c.base = ModelConfig::parse(r, sized("qwen3", 151936, 4096, 32, 32, 22016, 32768));
  check_sizes(r, c.base);
  c.num_key_value_heads = r.get_int("num_key_value_heads", c.base.num_attention_heads);
  check_kv_heads(r, c.base.num_attention_heads, c.num_key_value_heads);
  c.head_dim = r.get_int("head_dim", c.head_dim);
  require_positive(r, "head_dim", c.head_dim, ModelConfig::kMaxHeadDim);
  c.hidden_act = r.get_string("hidden_act", c.hidden_act);
  c.rms_norm_eps = positive_finite(r, "rms_norm_eps", r.get_double("rms_norm_eps", c.rms_norm_eps));
  c.attention_bias = r.get_bool("attention_bias", c.attention_bias);
  c.tie_word_embeddings = r.get_bool("tie_word_embeddings", c.tie_word_embeddings);
  c.rope.theta = positive_finite(r, "rope_theta", r.get_double("rope_theta", c.rope.theta));
  if (r.has("rope_scaling")) c.rope.scaling = parse_rope_scaling(r.get_object("rope_scaling"));
  if (r.has("rope_parameters")) c.rope = parse_rope_entry(r.get_object("rope_parameters"), c.rope);
  if (r.get_bool("use_sliding_window", false)) {
    c.sliding_window = r.get_int("sliding_window", 4096);
    require_positive(r, "sliding_window", *c.sliding_window);
  }
  c.max_window_layers = r.get_int("max_window_layers", c.max_window_layers);
  const bool windowed = c.sliding_window.has_value();
  const int64_t first_windowed = c.max_window_layers;
  c.layer_types = parse_layer_types(r, c.base.num_hidden_layers,
                              [&](int64_t i) { return windowed && i >= first_windowed; });
  return c;
}

Gemma3TextConfig Gemma3TextConfig::parse(const ConfigReader& r) {
  Gemma3TextConfig c;
  ModelConfig defaults = sized("gemma3_text", 262208, 2304, 26, 8, 9216, 131072);
  defaults.pad_token_id = 0;
  defaults.eos_token_id = 1;
  defaults.bos_token_id = 2;
  c.base = ModelConfig::parse(r, defaults);
  check_sizes(r, c.base);
  c.num_key_value_heads = r.get_int("num_key_value_heads", c.num_key_value_heads);
  check_kv_heads(r, c.base.num_attention_heads, c.num_key_value_heads);
  c.head_dim = r.get_int("head_dim", c.head_dim);
  require_positive(r, "head_dim", c.head_dim, ModelConfig::kMaxHeadDim);
  c.hidden_activation = r.get_string("hidden_activation", c.hidden_activation);
  c.rms_norm_eps = positive_finite(r, "rms_norm_eps", r.get_double("rms_norm_eps", c.rms_norm_eps));
  c.attention_bias = r.get_bool("attention_bias", c.attention_bias);
  c.query_pre_attn_scalar =
      positive_finite(r, "query_pre_attn_scalar", r.get_double("query_pre_attn_scalar", c.query_pre_attn_scalar));
  c.attn_logit_softcapping = r.get_optional_double("attn_logit_softcapping");
  c.final_logit_softcapping = r.get_optional_double("final_logit_softcapping");
  if (c.attn_logit_softcapping) positive_finite(r, "attn_logit_softcapping", *c.attn_logit_softcapping);
  if (c.final_logit_softcapping) positive_finite(r, "final_logit_softcapping", *c.final_logit_softcapping);
  c.use_bidirectional_attention = r.get_bool("use_bidirectional_attention", false);
  c.sliding_window = r.get_int("sliding_window", c.sliding_window);
  require_positive(r, "sliding_window", c.sliding_window);
  if (c.use_bidirectional_attention) c.sliding_window = c.sliding_window / 2 + 1;

  // Scaling applies to global layers only; local layers use plain RoPE.
  c.global_rope.theta = positive_finite(r, "rope_theta", r.get_double("rope_theta", c.global_rope.theta));
  c.local_rope.theta = positive_finite(r, "rope_local_base_freq", r.get_double("rope_local_base_freq", c.local_rope.theta));
  if (r.has("rope_scaling")) c.global_rope.scaling = parse_rope_scaling(r.get_object("rope_scaling"));
  const ConfigReader rope = r.get_object("rope_parameters");
  if (is_nested_rope(rope)) {
    c.global_rope = parse_rope_entry(rope.get_object(kFullAttention), c.global_rope);
    c.local_rope = parse_rope_entry(rope.get_object(kSlidingAttention), c.local_rope);
  }
  const int64_t pattern = r.get_int("sliding_window_pattern", r.get_int("_sliding_window_pattern", 6));
  require_positive(r, "sliding_window_pattern", pattern);
  c.layer_types = parse_layer_types(r, c.base.num_hidden_layers, [pattern](int64_t i) { return (i + 1) % pattern != 0; });
  return c;
}

BertConfig BertConfig::parse(const ConfigReader& r) {
  BertConfig c;
  ModelConfig defaults = sized("bert", 30522, 768, 12, 12, 3072, 512);
  defaults.pad_token_id = 0;
  c.base = ModelConfig::parse(r, defaults);
  check_sizes(r, c.base);
  check_divisible_heads(r, c.base);
  c.hidden_act = r.get_string("hidden_act", c.hidden_act);
  c.type_vocab_size = r.get_int("type_vocab_size", c.type_vocab_size);
  require_positive(r, "type_vocab_size", c.type_vocab_size, ModelConfig::kMaxVocab);
  c.layer_norm_eps = positive_finite(r, "layer_norm_eps", r.get_double("layer_norm_eps", c.layer_norm_eps));
  c.position_embedding_type = r.get_string("position_embedding_type", c.position_embedding_type);
  if (c.position_embedding_type != "absolute")
    throw Unsupported(r.source() + ": position_embedding_type '" + c.position_embedding_type + "' is not supported");
  return c;
}

}  // namespace semroute
