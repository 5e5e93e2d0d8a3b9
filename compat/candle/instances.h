// The owned-instance interface's shared parts: the error envelope and its
// seven codes, the load options, the registry of handles (several handles,
// clones and bound heads, may share one loaded model: its resource_id), and
// the transport every entry point runs in.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "semroute/semroute.hpp"

namespace candle::instances {

using nlohmann::json;

// An answer {"error": "<code>: <message>"}; code is one of configuration,
// capability, input_limit, result_invalid, execution, closed, load.
struct InstanceError : std::runtime_error {
  InstanceError(std::string code, const std::string& message)
      : std::runtime_error(message), code(std::move(code)) {}
  std::string code;
};

// What a loader is asked for (upstream's options JSON; unknown fields ignored).
struct Options {
  std::string model_path;
  std::string model_type;  // "" = config.json's, else "modernbert"
  std::string device;
  std::string precision;
  size_t max_input_tokens = 0;           // 0 = the task's default
  size_t document_max_input_tokens = 0;  // 0 = max_input_tokens
  std::string overflow;                  // "" = the task's default

  static Options parse(const char* options_json);
};

// One loaded model and what Info says of it. Immutable; shared by every
// handle to it, and by the calls in flight (a closed handle's model lives
// until its last call returns).
struct Instance {
  uint64_t resource_id = 0;
  std::string task;
  std::string model_type;
  bool modern = false;  // the ModernBERT family: heads bind to it, windows
  size_t architectural_max_tokens = 512;
  size_t max_input_tokens = 512;
  size_t document_max_input_tokens = 512;
  std::string overflow = "truncate";
  std::vector<std::string> labels;
  size_t special_tokens = 0;  // the tokenizer's, around one text
  size_t pair_layer = 0;      // pair scorers: the exit (resolved: never 0)
  size_t pair_dimension = 0;
  size_t layers = 0;          // the encoder's
  json identity;              // mmBERT embeddings: what the files were at load (descriptor)
  std::shared_ptr<const semroute::Model> model;

  json info() const;
  // The handle's instance for a call that needs `task`, else capability.
  void require_task(const char* wanted) const;
};

// The identity of an mmBERT embedding model's files, taken at load: SHA-256
// of its effective config, its tokenizer and every weights file (no paths:
// a moved directory keeps its identity).
json runtime_identity(const std::string& dir, const json& config, const Instance& inst);
// The descriptor of that identity at an exit (layer, dimension; 0 = the defaults).
json embedding_descriptor(const Instance& inst, size_t layer, size_t dimension);

// Fresh numbers for handles and resources, from 1.
uint64_t next_id();
uint64_t register_instance(std::shared_ptr<const Instance> instance);
// The instance behind `handle`, or InstanceError closed.
std::shared_ptr<const Instance> find_instance(uint64_t handle);
void close_instance(uint64_t handle);

// Loads `options` for `task` (backbone, sequence, label_scores, token, nli,
// hallucination, embedding, pair_scores; `selection` is the pair scorer's
// {"layer", "dimension"} JSON).
std::shared_ptr<Instance> load_instance(const Options& options, const std::string& task,
                                        const char* selection = nullptr);
// A head from head_dir for `task` on the encoder of `source`.
std::shared_ptr<Instance> bind_instance_head(const Instance& source, const std::string& head_dir,
                                             const std::string& task);

// A NUL-terminated argument: present and valid UTF-8 (configuration error otherwise).
std::string_view text_arg(const char* text);

// Runs body; its value becomes {"value": ...}, what it throws {"error": ...}
// (`fallback` is the code of an error without one: load or execution).
template <class Body>
char* respond(const char* fallback, Body&& body) noexcept;

// The JSON text as a malloc'd string (freed by candle_instance_free_string).
char* envelope(const json& answer) noexcept;
json error_of_current_exception(const char* fallback) noexcept;

template <class Body>
char* respond(const char* fallback, Body&& body) noexcept {
  try {
    return envelope(json{{"value", body()}});
  } catch (...) {
    return envelope(error_of_current_exception(fallback));
  }
}

// Shorthands for the two fallbacks.
template <class Body>
char* load_response(Body&& body) noexcept {
  return respond("load", [&] { return json(register_instance(body())); });
}
template <class Body>
char* call_response(Body&& body) noexcept {
  return respond("execution", std::forward<Body>(body));
}

// {"input_tokens", "processed_tokens", "truncated"}.
json input_json(const semroute::Usage& usage);

}  // namespace candle::instances
