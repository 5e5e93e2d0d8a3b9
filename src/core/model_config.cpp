#include "core/model_config.h"

#include "core/file_input.h"
#include "semroute/error.h"

namespace semroute {
namespace {

std::optional<int64_t> token_id(const ConfigReader& r, const std::string& key) {
  const auto& j = r.json();
  const auto it = j.find(key);
  // eos_token_id may be a list (generation configs); the first is the primary one.
  if (it != j.end() && it->is_array()) {
    if (it->empty()) return std::nullopt;
    if (!it->front().is_number_integer()) throw LoadError(r.source() + ": \"" + key + "\" must hold integers");
    return it->front().get<int64_t>();
  }
  return r.get_optional_int(key);
}

std::vector<std::string> parse_id2label(const ConfigReader& r) {
  const auto& j = r.json();
  const auto it = j.find("id2label");
  if (it == j.end() || it->is_null()) {
    const int64_t n = r.get_int("num_labels", 2);
    if (n < 0 || n > ModelConfig::kMaxLabels)
      throw LoadError(r.source() + ": \"num_labels\" must be in [0, " + std::to_string(ModelConfig::kMaxLabels) + "]");
    std::vector<std::string> labels;
    for (int64_t i = 0; i < n; ++i) labels.push_back("LABEL_" + std::to_string(i));
    return labels;
  }
  if (!it->is_object()) throw LoadError(r.source() + ": \"id2label\" must be an object");
  if (it->size() > static_cast<size_t>(ModelConfig::kMaxLabels))
    throw LoadError(r.source() + ": id2label has more than " + std::to_string(ModelConfig::kMaxLabels) + " labels");
  std::map<int64_t, std::string> by_id;
  for (const auto& [key, value] : it->items()) {
    size_t used = 0;
    int64_t id = -1;
    try {
      id = std::stoll(key, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != key.size() || id < 0)
      throw LoadError(r.source() + ": id2label key '" + key + "' is not a non-negative integer");
    if (!value.is_string()) throw LoadError(r.source() + ": id2label[" + key + "] must be a string");
    if (!by_id.emplace(id, value.get<std::string>()).second)
      throw LoadError(r.source() + ": id2label repeats id " + std::to_string(id));
  }
  std::vector<std::string> labels;
  for (const auto& [id, label] : by_id) {
    if (id != static_cast<int64_t>(labels.size()))
      throw LoadError(r.source() + ": id2label ids must be 0.." + std::to_string(by_id.size() - 1) + ", missing " +
                      std::to_string(labels.size()));
    labels.push_back(label);
  }
  return labels;
}

std::map<std::string, int64_t> parse_label2id(const ConfigReader& r, const std::vector<std::string>& id2label) {
  std::map<std::string, int64_t> label2id;
  const auto& j = r.json();
  const auto it = j.find("label2id");
  if (it == j.end() || it->is_null()) {
    for (size_t i = 0; i < id2label.size(); ++i) label2id.emplace(id2label[i], static_cast<int64_t>(i));
    return label2id;
  }
  if (!it->is_object()) throw LoadError(r.source() + ": \"label2id\" must be an object");
  for (const auto& [label, id] : it->items()) {
    if (!id.is_number_integer()) throw LoadError(r.source() + ": label2id[" + label + "] must be an integer");
    label2id[label] = id.get<int64_t>();
  }
  return label2id;
}

}  // namespace

ModelConfig ModelConfig::parse(const ConfigReader& r, const ModelConfig& defaults) {
  ModelConfig c;
  c.model_type = r.get_string("model_type", defaults.model_type);
  c.architectures = r.get_strings("architectures");
  c.vocab_size = r.get_int("vocab_size", defaults.vocab_size);
  c.hidden_size = r.get_int("hidden_size", defaults.hidden_size);
  c.num_hidden_layers = r.get_int("num_hidden_layers", defaults.num_hidden_layers);
  c.num_attention_heads = r.get_int("num_attention_heads", defaults.num_attention_heads);
  c.intermediate_size = r.get_int("intermediate_size", defaults.intermediate_size);
  c.max_position_embeddings = r.get_int("max_position_embeddings", defaults.max_position_embeddings);
  const auto id_or_default = [&](const char* key, std::optional<int64_t> fallback) {
    return r.json().contains(key) ? token_id(r, key) : fallback;
  };
  c.pad_token_id = id_or_default("pad_token_id", defaults.pad_token_id);
  c.bos_token_id = id_or_default("bos_token_id", defaults.bos_token_id);
  c.eos_token_id = id_or_default("eos_token_id", defaults.eos_token_id);
  c.torch_dtype = r.has("torch_dtype") ? r.get_string("torch_dtype", "") : r.get_string("dtype", "");
  c.problem_type = r.get_string("problem_type", "");
  c.id2label = parse_id2label(r);
  c.label2id = parse_label2id(r, c.id2label);
  return c;
}

int64_t ModelConfig::label_id(const std::string& label) const {
  for (size_t i = 0; i < id2label.size(); ++i)
    if (id2label[i] == label) return static_cast<int64_t>(i);
  std::string known;
  for (const auto& l : id2label) known += (known.empty() ? "" : ", ") + l;
  throw InvalidInput("unknown label '" + label + "' (known: " + known + ")", ErrorCode::kNotFound);
}

ConfigReader read_model_config(const std::filesystem::path& dir) {
  const auto path = file_in_dir(dir, "config.json");
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw LoadError(dir.string() + ": no config.json (is this a Hugging Face model directory?)", ErrorCode::kNotFound);
  return ConfigReader::from_file(path);
}

double read_temperature(const ConfigReader& config) {
  const double t = config.get_double("semroute_temperature", 1);
  if (!(t >= 0.01 && t <= 100))
    throw LoadError(config.source() + ": semroute_temperature must be a number in [0.01, 100]");
  return t;
}

std::optional<EntityAggregation> parse_entity_aggregation(const std::string& name) {
  if (name == "token") return EntityAggregation::kToken;
  if (name == "word") return EntityAggregation::kWord;
  return std::nullopt;
}

const char* entity_aggregation_name(EntityAggregation aggregation) {
  return aggregation == EntityAggregation::kWord ? "word" : "token";
}

EntityAggregation read_entity_aggregation(const ConfigReader& config) {
  const auto aggregation = parse_entity_aggregation(config.get_string("semroute_entity_aggregation", "token"));
  if (!aggregation) throw LoadError(config.source() + ": semroute_entity_aggregation must be \"token\" or \"word\"");
  return *aggregation;
}

nlohmann::json label_maps(const std::vector<std::string>& labels) {
  nlohmann::json id2label = nlohmann::json::object(), label2id = nlohmann::json::object();
  for (size_t i = 0; i < labels.size(); ++i) {
    id2label[std::to_string(i)] = labels[i];
    label2id[labels[i]] = i;
  }
  return {{"id2label", id2label}, {"label2id", label2id}};
}

}  // namespace semroute
