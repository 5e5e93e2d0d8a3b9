#include "classifiers/unified_config.h"

#include <yaml-cpp/yaml.h>

#include "classifiers/yaml_input.h"

#include <set>

#include "core/device.h"
#include "tasks/multitask_engine.h"
#include "tasks/text_batch.h"
#include "semroute/error.h"

namespace semroute {
namespace {

constexpr double kMaxLatencyBudgetMs = 3'600'000;  // an hour: anything longer is a typo

UnifiedTaskConfig parse_task(const YamlFields& f, const std::string& name, const YAML::Node& node) {
  const std::string field = "tasks." + name;
  if (!node.IsMap()) f.fail(field, "expected a map");
  f.only(node, field, {"kind", "model", "adapter", "labels", "positive_labels", "threshold"});
  UnifiedTaskConfig t;
  t.name = name;
  if (!node["kind"]) f.fail(field + ".kind", "missing (sequence or token)");
  const std::string kind = f.scalar<std::string>(node["kind"], field + ".kind", "sequence or token");
  if (kind == "sequence") {
    t.kind = TaskKind::kSequence;
  } else if (kind == "token") {
    t.kind = TaskKind::kToken;
  } else {
    f.fail(field + ".kind", "'" + kind + "' is neither sequence nor token");
  }
  if (node["model"]) t.model = f.path(node["model"], field + ".model");
  if (node["adapter"]) t.adapter = f.path(node["adapter"], field + ".adapter");
  if (t.model.empty() && t.adapter.empty()) f.fail(field, "needs a model, an adapter, or both");
  if (node["labels"]) t.labels = f.strings(node["labels"], field + ".labels");
  if (node["positive_labels"]) {
    if (t.kind != TaskKind::kSequence) f.fail(field + ".positive_labels", "only sequence tasks have positive labels");
    t.positive_labels = f.strings(node["positive_labels"], field + ".positive_labels");
  }
  if (node["threshold"]) {
    t.threshold = f.number(node["threshold"], field + ".threshold", 0, 1);
  }
  return t;
}


UnifiedConfig parse_config(const YamlFields& f, const YAML::Node& root) {
  if (!root.IsMap()) f.fail("(top level)", "expected a map");
  f.only(root, "", {"base_model", "tokenizer", "max_length", "truncation", "device", "dtype", "policy",
                    "latency_budget_ms", "max_batch", "max_wait_us", "tasks"});
  UnifiedConfig c;
  if (root["base_model"]) c.base_model = f.path(root["base_model"], "base_model");
  if (root["tokenizer"]) c.pipeline.tokenizer = f.path(root["tokenizer"], "tokenizer");
  if (root["max_length"]) c.pipeline.max_length = f.scalar<size_t>(root["max_length"], "max_length", "a token count");
  if (root["truncation"]) {
    const auto t = f.scalar<std::string>(root["truncation"], "truncation", "start, end or both");
    try {
      c.pipeline.truncation = parse_truncation(t);
    } catch (const Error& e) {
      f.fail("truncation", e.what());
    }
  }

  const std::string device = root["device"] ? f.scalar<std::string>(root["device"], "device", "a device") : "cpu";
  const std::string dtype = root["dtype"] ? f.scalar<std::string>(root["dtype"], "dtype", "a dtype") : "float32";
  try {
    c.pipeline.load = parse_load_options(device, dtype);
  } catch (const Error& e) {
    f.fail(root["dtype"] ? "device/dtype" : "device", e.what());
  }
  if (root["policy"]) {
    const auto p = f.scalar<std::string>(root["policy"], "policy", "auto, always_lora or always_traditional");
    if (p == "auto") {
      c.policy = PathPolicy::kAuto;
    } else if (p == "always_lora") {
      c.policy = PathPolicy::kAlwaysLora;
    } else if (p == "always_traditional") {
      c.policy = PathPolicy::kAlwaysTraditional;
    } else {
      f.fail("policy", "'" + p + "' is not auto, always_lora or always_traditional");
    }
  }
  if (root["latency_budget_ms"]) {
    c.latency_budget_ms = f.number(root["latency_budget_ms"], "latency_budget_ms", 0, kMaxLatencyBudgetMs);
  }
  for (const auto& [key, value] : {std::pair{"max_batch", &c.batching.max_batch},
                                   std::pair{"max_wait_us", &c.batching.max_wait_us}})
    if (root[key]) *value = f.scalar<int64_t>(root[key], key, "a count");
  try {
    check_batching(c.batching);
  } catch (const Error& e) {
    f.fail("max_batch/max_wait_us", e.what());
  }
  const YAML::Node tasks = root["tasks"];
  if (!tasks || !tasks.IsMap() || tasks.size() == 0) f.fail("tasks", "expected a map of one or more tasks");
  if (tasks.size() > kMaxEngineTasks)
    f.fail("tasks", std::to_string(tasks.size()) + " tasks; at most " + std::to_string(kMaxEngineTasks));
  for (const auto& item : tasks) {
    const auto name = f.key(item.first, "tasks");
    c.tasks.push_back(parse_task(f, name, item.second));
    if (!c.tasks.back().adapter.empty() && c.base_model.empty())
      f.fail("tasks." + name + ".adapter", "an adapter needs base_model");
  }
  return c;
}

}  // namespace

const char* policy_name(PathPolicy policy) {
  switch (policy) {
    case PathPolicy::kAlwaysLora: return "always_lora";
    case PathPolicy::kAlwaysTraditional: return "always_traditional";
    case PathPolicy::kAuto: break;
  }
  return "auto";
}

UnifiedConfig UnifiedConfig::from_yaml(const std::filesystem::path& file) {
  try {
    return parse_config(YamlFields(file), load_yaml_file(file));
  } catch (const YAML::Exception& e) {  // syntax, or a key that is not a string
    throw LoadError(file.string() + ": " + e.what());
  }
}

}  // namespace semroute
