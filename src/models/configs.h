// Typed configurations of the supported architectures, parsed from config.json
// with the defaults of the corresponding Hugging Face config classes (4.57),
// including the newer `rope_parameters` / `layer_types` forms.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/config_reader.h"
#include "core/model_config.h"

namespace semroute {

// rope_scaling / rope_parameters. `type` is "default", "linear", "yarn", …;
// backends refuse the types they do not implement.
struct RopeScaling {
  std::string type = "default";
  double factor = 1.0;
  std::optional<int64_t> original_max_position_embeddings;
  std::optional<double> attention_factor;
  std::optional<double> mscale;
  std::optional<double> mscale_all_dim;
  double beta_fast = 32.0;
  double beta_slow = 1.0;
  bool truncate = true;
};

struct RopeParams {
  double theta = 10000.0;
  RopeScaling scaling;
};

inline constexpr const char* kFullAttention = "full_attention";
inline constexpr const char* kSlidingAttention = "sliding_attention";

struct ModernBertConfig {
  ModelConfig base;
  int64_t global_attn_every_n_layers = 3;
  int64_t local_attention = 128;  // window width; a local layer attends iff |q-k| <= local_attention / 2
  RopeParams global_rope{160000.0, {}};
  RopeParams local_rope{10000.0, {}};
  double norm_eps = 1e-5;
  bool norm_bias = false;
  bool attention_bias = false;
  bool mlp_bias = false;
  bool classifier_bias = false;
  std::string hidden_activation = "gelu";
  std::string classifier_activation = "gelu";
  std::string classifier_pooling = "cls";  // "cls" or "mean"
  std::vector<std::string> layer_types;   // one per layer

  int64_t head_dim() const { return base.hidden_size / base.num_attention_heads; }
  bool is_global(int64_t layer) const { return layer_types.at(static_cast<size_t>(layer)) == kFullAttention; }

  static ModernBertConfig parse(const ConfigReader& reader);
};

struct Qwen3Config {
  ModelConfig base;
  int64_t num_key_value_heads = 32;
  int64_t head_dim = 128;
  std::string hidden_act = "silu";
  double rms_norm_eps = 1e-6;
  RopeParams rope{10000.0, {}};
  bool attention_bias = false;
  std::optional<int64_t> sliding_window;  // set only when use_sliding_window is true
  int64_t max_window_layers = 28;
  bool tie_word_embeddings = false;
  std::vector<std::string> layer_types;

  static Qwen3Config parse(const ConfigReader& reader);
};

struct Gemma3TextConfig {
  ModelConfig base;
  int64_t num_key_value_heads = 4;
  int64_t head_dim = 256;
  std::string hidden_activation = "gelu_pytorch_tanh";
  double rms_norm_eps = 1e-6;
  RopeParams global_rope{1000000.0, {}};
  RopeParams local_rope{10000.0, {}};  // rope_local_base_freq; never scaled
  double query_pre_attn_scalar = 256;
  // Effective window. Causal: attend iff 0 <= q-k < sliding_window. With
  // use_bidirectional_attention the config value w becomes w // 2 + 1 and a
  // sliding layer attends iff |q-k| < sliding_window.
  int64_t sliding_window = 4096;
  bool use_bidirectional_attention = false;
  bool attention_bias = false;
  std::optional<double> attn_logit_softcapping;
  std::optional<double> final_logit_softcapping;
  std::vector<std::string> layer_types;

  static Gemma3TextConfig parse(const ConfigReader& reader);
};

struct BertConfig {
  ModelConfig base;
  std::string hidden_act = "gelu";
  int64_t type_vocab_size = 2;
  double layer_norm_eps = 1e-12;
  std::string position_embedding_type = "absolute";

  static BertConfig parse(const ConfigReader& reader);
};

}  // namespace semroute
