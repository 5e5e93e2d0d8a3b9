// The part of a Hugging Face `config.json` every architecture shares, parsed
// with PretrainedConfig's defaults. Architecture-specific fields live in the
// typed configs of src/models/configs.h.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/config_reader.h"

namespace semroute {

struct ModelConfig {
  // Bounds on what a config.json may claim, checked before anything is sized
  // from it (real models stay far below: Gemma 3's vocabulary is 262 144).
  static constexpr int64_t kMaxVocab = int64_t{1} << 22;
  static constexpr int64_t kMaxHidden = int64_t{1} << 16;
  static constexpr int64_t kMaxLayers = 1024;
  static constexpr int64_t kMaxIntermediate = int64_t{1} << 18;
  static constexpr int64_t kMaxPositions = int64_t{1} << 20;
  static constexpr int64_t kMaxHeadDim = 4096;
  static constexpr int64_t kMaxLabels = int64_t{1} << 16;

  std::string model_type;
  std::vector<std::string> architectures;
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t num_hidden_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t intermediate_size = 0;
  int64_t max_position_embeddings = 0;
  std::optional<int64_t> pad_token_id;
  std::optional<int64_t> bos_token_id;
  std::optional<int64_t> eos_token_id;  // first id when config.json holds a list
  std::string torch_dtype;              // as written ("float32", "bfloat16", …), may be empty
  std::string problem_type;

  // id2label[i] is the name of class i. HF writes string keys ("0", "1", …);
  // they must be the integers 0..n-1. Without id2label, num_labels (default 2)
  // yields "LABEL_0", "LABEL_1", … as HF does.
  std::vector<std::string> id2label;
  std::map<std::string, int64_t> label2id;

  size_t num_labels() const { return id2label.size(); }
  // The first entry of `architectures`, or "" when absent.
  std::string architecture() const { return architectures.empty() ? std::string() : architectures.front(); }
  // Index of `label` or throws InvalidInput naming the known labels.
  int64_t label_id(const std::string& label) const;

  // Unset keys take their value from `defaults` (an architecture's HF defaults).
  static ModelConfig parse(const ConfigReader& reader, const ModelConfig& defaults);
  static ModelConfig parse(const ConfigReader& reader) { return parse(reader, ModelConfig()); }
};

// Reads `<dir>/config.json` (kNotFound if absent).
ConfigReader read_model_config(const std::filesystem::path& dir);

// The "semroute_temperature" of a config.json or an adapter's labels.json
// (tasks/task_head.h): 1 when absent; LoadError unless a number in [0.01, 100].
double read_temperature(const ConfigReader& config);

// How a token classifier's per-token labels become entity spans
// (tasks/entity_spans.h): token by token, or word by word (a word takes the
// label of its first token, Hugging Face's aggregation_strategy="first"),
// for models trained with one label per word.
enum class EntityAggregation { kToken, kWord };
std::optional<EntityAggregation> parse_entity_aggregation(const std::string& name);  // "token" / "word"
const char* entity_aggregation_name(EntityAggregation aggregation);
// The "semroute_entity_aggregation" of a config.json or an adapter's
// labels.json: token when absent; LoadError unless "token" or "word".
EntityAggregation read_entity_aggregation(const ConfigReader& config);

// {"id2label": {"0": …}, "label2id": {…: 0}}, as config.json writes a label list.
nlohmann::json label_maps(const std::vector<std::string>& labels);

}  // namespace semroute
