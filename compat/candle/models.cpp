#include "models.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/file_input.h"

namespace candle {
namespace {

// Through semroute's untrusted-file checks (regular file, size, nesting).
nlohmann::json read_json(const std::string& file) {
  try {
    return semroute::read_json_file(file);
  } catch (const std::exception& e) {
    throw Failure(e.what());
  }
}

// The model's position limit from config.json; 0 when it does not say.
size_t max_positions(const std::string& dir) {
  try {
    const nlohmann::json config = read_json(dir + "/config.json");
    const auto it = config.find("max_position_embeddings");
    if (it != config.end() && it->is_number_unsigned()) return it->get<size_t>();
  } catch (const std::exception&) {
    // semroute's load reports what is wrong with the directory.
  }
  return 0;
}

}  // namespace

semroute_model_params params_for(semroute_task task, size_t max_length) {
  semroute_model_params params = semroute_model_default_params();
  params.task = task;
  params.max_length = static_cast<uint32_t>(max_length);
  return params;
}

// `cap` tokens, or the model's limit when shorter (0: the model's limit).
semroute_model_params capped_params(const std::string& dir, semroute_task task, size_t cap) {
  const size_t limit = cap > 0 ? max_positions(dir) : 0;
  return params_for(task, limit > 0 ? std::min(limit, cap) : cap);
}

semroute_model_params classifier_params(const std::string& dir, semroute_task task) {
  return capped_params(dir, task, kClassificationTokens);
}

std::unique_ptr<Model> load_model(const char* path, semroute_task task, size_t max_length) {
  const std::string dir = directory_arg(path, "model path");
  return std::make_unique<Model>(Model::load(dir, capped_params(dir, task, max_length)));
}

std::unique_ptr<Model> load_classifier(const char* path, semroute_task task) {
  return load_model(path, task, kClassificationTokens);
}

std::string adapter_base(const std::string& adapter_dir) {
  const nlohmann::json config = read_json(adapter_dir + "/adapter_config.json");
  const std::string base = config.value("base_model_name_or_path", "");
  if (base.empty()) throw Failure(adapter_dir + "/adapter_config.json names no base_model_name_or_path");
  return base[0] == '/' ? base : adapter_dir + "/" + base;
}

ModernBertClassificationResult short_result(const semroute::Prediction& p) {
  ModernBertClassificationResult r{};
  r.class_ = p.class_id;
  r.confidence = p.confidence;
  return r;
}

ModernBertClassificationResultWithProbs result_with_probs(const semroute::Prediction& p) {
  ModernBertClassificationResultWithProbs r{};
  r.probabilities = copy_array(p.probabilities);
  r.num_classes = static_cast<int>(p.probabilities.size());
  r.class_ = p.class_id;
  r.confidence = p.confidence;
  return r;
}

bool is_mmbert_config(const char* config_path, bool require_32k) noexcept {
  try {
    const nlohmann::json c = read_json(std::string(text_arg(config_path, "config_path")));
    const bool mmbert = c.value("model_type", "") == "modernbert" && c.value("vocab_size", 0) >= 200000;
    return mmbert && (!require_32k || c.value("max_position_embeddings", 0) >= 32768);
  } catch (...) {
    return false;
  }
}

}  // namespace candle
