// The owned-instance interface: transport, registry, options, loaders and
// handle management. Each loader is a thin conversion onto semroute's C API
// (through its C++ client): a task maps onto a semroute task, the budget onto
// max_length, overflow onto the input policy, a bound head onto
// semroute_model_bind_head.
#include "instances.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "candle_instance.h"
#include "core/file_input.h"

namespace candle::instances {
namespace {

// ------------------------------------------------------------ transport

const char* code_of(semroute::ErrorCode code, const char* fallback) {
  switch (code) {
    case semroute::ErrorCode::kInvalidArgument:
    case semroute::ErrorCode::kInvalidUtf8: return "configuration";
    case semroute::ErrorCode::kTooLong: return "input_limit";
    case semroute::ErrorCode::kUnsupported: return "capability";
    case semroute::ErrorCode::kNotFound:
    case semroute::ErrorCode::kInvalidModel: return std::strcmp(fallback, "load") == 0 ? "load" : "execution";
    default: return fallback;
  }
}

}  // namespace

json error_of_current_exception(const char* fallback) noexcept {
  try {
    try {
      throw;
    } catch (const InstanceError& e) {
      return {{"error", e.code + ": " + e.what()}};
    } catch (const semroute::Error& e) {
      return {{"error", std::string(code_of(e.code(), fallback)) + ": " + e.what()}};
    } catch (const std::exception& e) {
      return {{"error", std::string(fallback) + ": " + e.what()}};
    } catch (...) {
      return {{"error", "execution: native inference panicked"}};
    }
  } catch (...) {
    return {{"error", "execution: native inference panicked"}};
  }
}

char* envelope(const json& answer) noexcept {
  try {
    const std::string text = answer.dump(-1, ' ', false, json::error_handler_t::replace);
    char* out = static_cast<char*>(std::malloc(text.size() + 1));
    if (out != nullptr) std::memcpy(out, text.c_str(), text.size() + 1);
    return out;
  } catch (...) {
    return nullptr;
  }
}

std::string_view text_arg(const char* text) {
  if (text == nullptr) throw InstanceError("configuration", "null string argument");
  return text;  // UTF-8 is checked by semroute where the text is read
}

json input_json(const semroute::Usage& usage) {
  return {{"input_tokens", usage.input_tokens},
          {"processed_tokens", usage.processed_tokens},
          {"truncated", usage.truncated}};
}

// ------------------------------------------------------------- registry

namespace {

std::atomic<uint64_t> g_next_id{1};
std::mutex g_mutex;
std::unordered_map<uint64_t, std::shared_ptr<const Instance>>& registry() {
  static auto* handles = new std::unordered_map<uint64_t, std::shared_ptr<const Instance>>();  // never destroyed
  return *handles;
}

}  // namespace

uint64_t next_id() { return g_next_id.fetch_add(1); }

uint64_t register_instance(std::shared_ptr<const Instance> instance) {
  const uint64_t handle = next_id();
  std::lock_guard<std::mutex> lock(g_mutex);
  registry().emplace(handle, std::move(instance));
  return handle;
}

std::shared_ptr<const Instance> find_instance(uint64_t handle) {
  std::lock_guard<std::mutex> lock(g_mutex);
  const auto it = registry().find(handle);
  if (it == registry().end()) throw InstanceError("closed", "native instance is closed or invalid");
  return it->second;
}

void close_instance(uint64_t handle) {
  std::shared_ptr<const Instance> released;  // freed outside the lock
  std::lock_guard<std::mutex> lock(g_mutex);
  const auto it = registry().find(handle);
  if (it == registry().end()) return;
  released = std::move(it->second);
  registry().erase(it);
}

// --------------------------------------------------------------- options

namespace {

std::string string_field(const json& j, const char* name) {
  const auto it = j.find(name);
  if (it == j.end() || it->is_null()) return "";
  if (!it->is_string()) throw InstanceError("configuration", std::string(name) + " must be a string");
  return it->get<std::string>();
}

size_t count_field(const json& j, const char* name) {
  const auto it = j.find(name);
  if (it == j.end() || it->is_null()) return 0;
  if (!it->is_number_unsigned()) throw InstanceError("configuration", std::string(name) + " must be an unsigned integer");
  return it->get<size_t>();
}

}  // namespace

Options Options::parse(const char* options_json) {
  const json j = json::parse(text_arg(options_json), nullptr, false);
  if (!j.is_object()) throw InstanceError("configuration", "options must be a JSON object");
  Options o;
  o.model_path = string_field(j, "model_path");
  if (o.model_path.empty()) throw InstanceError("load", "options name no model_path");
  o.model_type = string_field(j, "model_type");
  o.device = string_field(j, "device");
  o.precision = string_field(j, "precision");
  o.max_input_tokens = count_field(j, "max_input_tokens");
  o.document_max_input_tokens = count_field(j, "document_max_input_tokens");
  o.overflow = string_field(j, "overflow");
  if (j.contains("adapters") && !j["adapters"].empty())
    throw InstanceError("configuration", "adapters are accepted by generative loaders only");
  return o;
}

// --------------------------------------------------------------- loaders

namespace {

const char* const kModern[] = {"modernbert", "mmbert", "mmbert32k", "mmbert-32k"};
const char* const kEmbeddingTypes[] = {"bert",  "qwen3",      "gemma",           "gemma3",
                                       "mmbert", "modernbert", "mmbert_embedding", "mmbert32k", "mmbert-32k"};

template <size_t N>
bool one_of(const std::string& s, const char* const (&names)[N]) {
  return std::any_of(std::begin(names), std::end(names), [&](const char* n) { return s == n; });
}

json read_config(const std::string& dir) {
  try {
    return semroute::read_json_file(dir + "/config.json");
  } catch (const std::exception& e) {
    throw InstanceError("load", e.what());
  }
}

size_t positions_of(const json& config) {
  for (const char* key : {"max_position_embeddings", "text_max_position_embeddings"}) {
    const auto it = config.find(key);
    if (it != config.end() && it->is_number_unsigned() && it->get<size_t>() > 0) return it->get<size_t>();
  }
  return 512;
}

semroute_task semroute_task_of(const std::string& task) {
  if (task == "backbone") return SEMROUTE_TASK_ENCODER;
  if (task == "token" || task == "hallucination") return SEMROUTE_TASK_TOKEN_CLASSIFICATION;
  if (task == "embedding") return SEMROUTE_TASK_EMBEDDING;
  if (task == "pair_scores") return SEMROUTE_TASK_PAIR_SCORING;
  return SEMROUTE_TASK_SEQUENCE_CLASSIFICATION;
}

// The task × model type matrix semroute serves (the README lists the rest).
void check_model_type(const std::string& task, const std::string& type) {
  const bool modern = one_of(type, kModern);
  const bool ok = task == "embedding" ? one_of(type, kEmbeddingTypes)
                  : (task == "sequence" || task == "token") ? modern || type == "bert"
                                                             : modern;
  if (!ok) throw InstanceError("capability", "model type does not implement requested task");
}

void check_device(const Options& o) {
  if (!o.device.empty() && o.device != "cpu")
    throw InstanceError("capability", "requested Candle device is unavailable: " + o.device);
  if (!o.precision.empty() && o.precision != "fp32" && o.precision != "float32")
    throw InstanceError("capability", "precision " + o.precision + " differs from the effective precision float32");
}

void check_problem_type(const json& config, const std::string& task) {
  const std::string problem = config.contains("problem_type") && config["problem_type"].is_string()
                                  ? config["problem_type"].get<std::string>()
                                  : "";
  if (task == "label_scores" && problem != "multi_label_classification")
    throw InstanceError("configuration", "label_scores needs problem_type multi_label_classification, not '" +
                                             problem + "'");
  if ((task == "sequence" || task == "nli") && !problem.empty() && problem != "single_label_classification")
    throw InstanceError("configuration", "problem_type '" + problem + "' is not a categorical classifier");
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Labels as upstream reports them for the task.
std::vector<std::string> labels_for(const std::string& task, const json& config, std::vector<std::string> labels) {
  if (task == "nli" && labels.size() != 3)
    throw InstanceError("capability", "an NLI model needs 3 labels, this one has " + std::to_string(labels.size()));
  if (task == "hallucination") {
    if (labels.size() != 2) throw InstanceError("capability", "a hallucination model needs a 2-class head");
    if (!config.contains("id2label")) return {"SUPPORTED", "HALLUCINATED"};
    if (lower(labels[0]) != "supported" || lower(labels[1]) != "hallucinated")
      throw InstanceError("capability", "hallucination labels must read SUPPORTED, HALLUCINATED");
  }
  if (task == "backbone" || task == "pair_scores") return {};
  return labels;
}

size_t special_tokens_of(const semroute::Model& model) { return model.tokenize("", true).ids.size(); }

semroute_model_params params_of(const Instance& inst, semroute_task task) {
  semroute_model_params p = semroute_model_default_params();
  p.task = task;
  p.max_length = static_cast<uint32_t>(inst.max_input_tokens);
  p.overflow = inst.overflow == "reject" ? SEMROUTE_OVERFLOW_REJECT : SEMROUTE_OVERFLOW_TRUNCATE;
  p.count_input_tokens = 1;
  p.layer = static_cast<uint32_t>(inst.pair_layer);
  p.dimension = static_cast<uint32_t>(inst.pair_dimension);
  return p;
}

// The budgets of `o` for `task` on this model (upstream's defaults and limits).
void set_budgets(Instance& inst, const Options& o) {
  const bool whole_limit = inst.task == "embedding" || inst.task == "pair_scores";  // not capped at 512 by default
  const size_t limit = inst.modern || whole_limit ? inst.architectural_max_tokens
                                                  : std::min<size_t>(inst.architectural_max_tokens, 512);
  if (o.max_input_tokens > limit)
    throw InstanceError("capability", "input budget exceeds the task limit (" + std::to_string(limit) + ")");
  inst.max_input_tokens =
      o.max_input_tokens > 0 ? o.max_input_tokens : whole_limit ? limit : std::min<size_t>(limit, 512);
  inst.document_max_input_tokens = inst.max_input_tokens;
  if (o.document_max_input_tokens > 0) {
    const bool windowed = inst.task == "backbone" || inst.task == "sequence" || inst.task == "label_scores" ||
                          inst.task == "token";
    if (!inst.modern || !windowed)
      throw InstanceError("capability", "document_max_input_tokens is for ModernBERT-family window tasks");
    if (o.document_max_input_tokens < inst.max_input_tokens)
      throw InstanceError("capability", "document_max_input_tokens is smaller than max_input_tokens");
    inst.document_max_input_tokens = o.document_max_input_tokens;
  }
  if (inst.task == "pair_scores") inst.overflow = "reject";
  if (o.overflow.empty()) return;
  if (o.overflow != "truncate" && o.overflow != "reject")
    throw InstanceError("configuration", "overflow must be truncate or reject, not '" + o.overflow + "'");
  if (inst.task == "pair_scores" && o.overflow != "reject")
    throw InstanceError("capability", "a pair scorer reads every pair whole: overflow must be reject");
  inst.overflow = o.overflow;
}

// A pair scorer's exit: {"layer", "dimension"}, 0 = all layers, the full width.
void set_pair_exit(Instance& inst, const char* selection, const json& config) {
  const json s = json::parse(text_arg(selection), nullptr, false);
  if (!s.is_object()) throw InstanceError("configuration", "the selection must be a JSON object");
  const auto field = [&](const char* name, const char* config_key) -> size_t {
    const auto it = s.find(name);
    if (it != s.end() && !it->is_null() && !it->is_number_integer())
      throw InstanceError("configuration", std::string("selection.") + name + " must be an integer");
    const int64_t v = it != s.end() && !it->is_null() ? it->get<int64_t>() : 0;
    if (v < 0) throw InstanceError("configuration", std::string("selection.") + name + " is negative");
    return v > 0 ? static_cast<size_t>(v) : config.value(config_key, size_t{0});
  };
  inst.pair_layer = field("layer", "num_hidden_layers");
  inst.pair_dimension = field("dimension", "hidden_size");
}

void check_special_tokens(const Instance& inst) {
  if (inst.max_input_tokens < inst.special_tokens)
    throw InstanceError("capability", "input budget " + std::to_string(inst.max_input_tokens) +
                                          " is smaller than the tokenizer's " + std::to_string(inst.special_tokens) +
                                          " special tokens");
}

}  // namespace

std::shared_ptr<Instance> load_instance(const Options& o, const std::string& task, const char* selection) {
  check_device(o);
  const json config = read_config(o.model_path);
  auto inst = std::make_shared<Instance>();
  inst->task = task;
  inst->model_type = !o.model_type.empty() ? o.model_type : config.value("model_type", std::string("modernbert"));
  check_model_type(task, inst->model_type);
  inst->modern = one_of(inst->model_type, kModern);
  inst->architectural_max_tokens = positions_of(config);
  set_budgets(*inst, o);
  if (task == "pair_scores") set_pair_exit(*inst, selection, config);
  check_problem_type(config, task);
  inst->model = std::make_shared<const semroute::Model>(
      semroute::Model::load(o.model_path, params_of(*inst, semroute_task_of(task))));
  inst->labels = task == "pair_scores" ? std::vector<std::string>() : labels_for(task, config, inst->model->labels());
  if (task != "backbone") inst->special_tokens = special_tokens_of(*inst->model);
  check_special_tokens(*inst);
  inst->layers = config.value("num_hidden_layers", size_t{0});
  if (task == "embedding" && (inst->model_type == "mmbert_embedding" || one_of(inst->model_type, kModern)))
    inst->identity = runtime_identity(o.model_path, config, *inst);
  inst->resource_id = next_id();
  return inst;
}

std::shared_ptr<Instance> bind_instance_head(const Instance& source, const std::string& head_dir,
                                             const std::string& task) {
  if (!source.modern || !(source.task == "backbone" || source.task == "sequence" || source.task == "token"))
    throw InstanceError("capability", "only ModernBERT backbones support explicit head binding");
  if (task != "sequence" && task != "token" && task != "label_scores")
    throw InstanceError("configuration", "a head binds as sequence, token or label_scores, not '" + task + "'");
  const json config = read_config(head_dir);
  check_problem_type(config, task);
  auto inst = std::make_shared<Instance>(source);
  inst->task = task;
  inst->model = std::make_shared<const semroute::Model>(
      source.model->bind_head(head_dir, params_of(*inst, semroute_task_of(task))));
  inst->labels = labels_for(task, config, inst->model->labels());
  inst->special_tokens = special_tokens_of(*inst->model);
  check_special_tokens(*inst);
  return inst;
}

json Instance::info() const {
  // Embeddings: the one width semroute's model gives (Matryoshka prefixes are
  // asked per call); both shapes upstream's Go generations read.
  const json dimensions = task == "embedding" ? json::array({model->embedding_dim()}) : json::array();
  json out = {{"resource_id", resource_id},
          {"task", task},
          {"model_type", model_type},
          {"device", "cpu"},
          {"precision", "float32"},
          {"architectural_max_tokens", architectural_max_tokens},
          {"max_input_tokens", max_input_tokens},
          {"document_max_input_tokens", document_max_input_tokens},
          {"overflow", overflow},
          {"labels", labels},
          {"modalities", task == "embedding" ? json::array({"text"}) : json::array()},
          {"available_dimensions", dimensions},
          {"native_dimension", task == "embedding" ? model->embedding_dim() : 0},
          {"supported_dimensions", dimensions}};
  if (task == "pair_scores") out["pair_scorer"] = {{"layer", pair_layer}, {"dimension", pair_dimension}};
  return out;
}

void Instance::require_task(const char* wanted) const {
  if (task != wanted) throw InstanceError("capability", std::string("wrong task handle: ") + task + ", not " + wanted);
}

}  // namespace candle::instances

using namespace candle::instances;

namespace {

char* load(const char* options, const char* task) noexcept {
  return load_response([&] { return load_instance(Options::parse(options), task); });
}

// Loaders of what semroute does not run: their options are still checked.
char* refuse_load(const char* options, const char* what) noexcept {
  return respond("load", [&]() -> json {
    const Options o = Options::parse(options);
    check_device(o);
    throw InstanceError("capability", std::string(what) + " is not implemented by semroute");
  });
}

}  // namespace

extern "C" {

char* candle_instance_load_backbone(const char* options) { return load(options, "backbone"); }
char* candle_instance_load_sequence(const char* options) { return load(options, "sequence"); }
char* candle_instance_load_label_scores(const char* options) { return load(options, "label_scores"); }
char* candle_instance_load_token(const char* options) { return load(options, "token"); }
char* candle_instance_load_nli(const char* options) { return load(options, "nli"); }
char* candle_instance_load_hallucination(const char* options) { return load(options, "hallucination"); }
char* candle_instance_load_embedding(const char* options) { return load(options, "embedding"); }
char* candle_instance_load_guard(const char* options) { return refuse_load(options, "Qwen3Guard generation"); }
char* candle_instance_load_generative(const char* options) {
  return refuse_load(options, "generative (Qwen3 multi-LoRA) classification");
}

char* candle_instance_clone(uint64_t handle) {
  return call_response([&] { return json(register_instance(find_instance(handle))); });
}

char* candle_instance_close(uint64_t handle) {
  return call_response([&] {
    close_instance(handle);
    return json(nullptr);
  });
}

char* candle_instance_info(uint64_t handle) {
  return call_response([&] { return find_instance(handle)->info(); });
}

char* candle_instance_bind_head(uint64_t handle, const char* head_path, const char* task) {
  return respond("load", [&] {
    const auto source = find_instance(handle);
    return json(register_instance(bind_instance_head(*source, std::string(text_arg(head_path)),
                                                     std::string(text_arg(task)))));
  });
}

void candle_instance_free_string(char* text) { std::free(text); }

}  // extern "C"
