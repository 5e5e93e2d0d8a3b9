#include "server/serve_config.h"

#include <yaml-cpp/yaml.h>

#include "classifiers/yaml_input.h"
#include "router/compression_config.h"
#include "semroute/error.h"
#include "tasks/text_batch.h"

namespace semroute {
namespace {

// Names requests use: short, printable, no path separators.
void check_name(const YamlFields& f, const std::string& field, const std::string& name) {
  const bool ok = !name.empty() && name.size() <= 64 &&
                  name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") ==
                      std::string::npos;
  if (!ok) f.fail(field, "'" + name + "': a name is 1-64 letters, digits, '_', '.' or '-'");
}

// The load and input options of a served model.
void parse_pipeline(const YamlFields& f, const YAML::Node& node, const std::string& field, PipelineOptions& o) {
  const auto text = [&](const char* key, const char* fallback) {
    return node[key] ? f.scalar<std::string>(node[key], field + "." + key, "a name") : std::string(fallback);
  };
  try {
    o.load = parse_load_options(text("device", "cpu"), text("dtype", "float32"));
    o.truncation = parse_truncation(text("truncation", "start"));
    o.overflow = parse_overflow(text("overflow", "truncate"));
  } catch (const Error& e) {
    f.fail(field, e.what());
  }
  if (node["max_length"])
    o.max_length = static_cast<size_t>(f.number(node["max_length"], field + ".max_length", 1, 1 << 20));
  if (node["tokenizer"]) o.tokenizer = f.path(node["tokenizer"], field + ".tokenizer");
}

ServedModelConfig parse_model(const YamlFields& f, const std::string& field, const YAML::Node& node) {
  if (node.IsScalar()) {
    ServedModelConfig m;
    m.path = f.path(node, field);
    return m;
  }
  if (!node.IsMap()) f.fail(field, "expected a path or a map");
  f.only(node, field, {"path", "task", "device", "dtype", "max_length", "truncation", "overflow", "tokenizer",
                       "max_batch", "max_wait_us", "layers", "dimensions", "heads"});
  if (!node["path"]) f.fail(field + ".path", "missing (a model directory)");
  ServedModelConfig m;
  m.path = f.path(node["path"], field + ".path");
  const std::string task = node["task"] ? f.scalar<std::string>(node["task"], field + ".task", "a task") : "auto";
  if (task == "sequence") {
    m.kind = TaskKind::kSequence;
  } else if (task == "token") {
    m.kind = TaskKind::kToken;
  } else if (task == "embedding") {
    m.embedding = true;
  } else if (task == "rerank") {
    m.rerank = true;
  } else if (task != "auto") {
    f.fail(field + ".task", "'" + task + "' is not auto, sequence, token, embedding or rerank");
  }
  parse_pipeline(f, node, field, m.options);
  if (node["max_batch"]) m.batching.max_batch = static_cast<int64_t>(f.number(node["max_batch"], field + ".max_batch", 0, 4096));
  if (node["max_wait_us"])
    m.batching.max_wait_us = static_cast<int64_t>(f.number(node["max_wait_us"], field + ".max_wait_us", 0, 1e6));
  for (const char* key : {"layers", "dimensions"}) {  // an embedding model's declared exits and widths
    const YAML::Node list = node[key];
    if (!list) continue;
    if (!m.embedding) f.fail(field + "." + key, "only for task: embedding");
    if (!list.IsSequence() || list.size() > 64) f.fail(field + "." + key, "expected a list of at most 64 integers");
    auto& out = std::string(key) == "layers" ? m.layers : m.dimensions;
    for (size_t i = 0; i < list.size(); ++i)
      out.push_back(static_cast<int64_t>(f.number(list[i], field + "." + key, 1, 65536)));
  }
  if (const YAML::Node heads = node["heads"]) {  // task checkpoints whose heads run on the encoder at `path`
    if (m.embedding || m.rerank || m.kind) f.fail(field + ".heads", "the heads name their own tasks: leave out task");
    if (!heads.IsMap() || heads.size() == 0 || heads.size() > kMaxBoundHeads)
      f.fail(field + ".heads", "expected a map of 1-" + std::to_string(kMaxBoundHeads) + " head names to task directories");
    for (const auto& entry : heads) {
      const std::string name = f.scalar<std::string>(entry.first, field + ".heads", "a head name");
      const std::string where = field + ".heads." + name;
      HeadSource source{name, {}, std::nullopt};
      if (entry.second.IsMap()) {
        f.only(entry.second, where, {"path", "task"});
        if (!entry.second["path"]) f.fail(where + ".path", "missing (a task directory)");
        source.dir = f.path(entry.second["path"], where + ".path");
        if (const YAML::Node task = entry.second["task"]) {
          const std::string kind = f.scalar<std::string>(task, where + ".task", "sequence or token");
          if (kind != "sequence" && kind != "token") f.fail(where + ".task", "sequence or token");
          source.kind = kind == "token" ? TaskKind::kToken : TaskKind::kSequence;
        }
      } else {
        source.dir = f.path(entry.second, where);
      }
      m.heads.push_back(std::move(source));
    }
  }
  return m;
}

ServedDetectorConfig parse_detector(const YamlFields& f, const std::string& field, const YAML::Node& node) {
  if (node.IsScalar()) return ServedDetectorConfig{f.path(node, field), {}, {}, {}};
  if (!node.IsMap()) f.fail(field, "expected a path or a map");
  f.only(node, field, {"path", "nli", "template", "threshold", "windows", "device", "dtype", "max_length", "tokenizer"});
  if (!node["path"]) f.fail(field + ".path", "missing (a token classifier directory)");
  ServedDetectorConfig d;
  d.path = f.path(node["path"], field + ".path");
  if (node["nli"]) d.nli = f.path(node["nli"], field + ".nli");
  if (node["template"]) {
    try {
      d.options.input_template = detector_template_named(f.scalar<std::string>(node["template"], field + ".template", "a name"));
    } catch (const InvalidInput& e) {
      f.fail(field + ".template", e.what());
    }
  }
  if (node["threshold"]) d.options.threshold = f.number(node["threshold"], field + ".threshold", 0, 1);
  if (node["windows"]) d.options.context_windows = static_cast<size_t>(f.number(node["windows"], field + ".windows", 0, 1024));
  parse_pipeline(f, node, field, d.pipeline);
  return d;
}

// {name: value} sections, each value read by `parse`.
template <class Value, class Parse>
std::map<std::string, Value> named(const YamlFields& f, const YAML::Node& root, const char* section, Parse parse) {
  std::map<std::string, Value> out;
  const YAML::Node node = root[section];
  if (!node) return out;
  if (!node.IsMap()) f.fail(section, "expected a map of names");
  for (const auto& item : node) {
    const std::string name = f.key(item.first, section);
    check_name(f, section, name);
    out.emplace(name, parse(std::string(section) + "." + name, item.second));
  }
  return out;
}

void parse_limits(const YamlFields& f, const YAML::Node& node, ServeLimits& l) {
  if (!node) return;
  if (!node.IsMap()) f.fail("limits", "expected a map");
  f.only(node, "limits",
         {"max_body_bytes", "max_queue", "max_connections", "header_timeout_ms", "body_timeout_ms", "request_timeout_ms",
          "max_streams", "max_stream_bytes", "stream_idle_ms", "max_check_windows", "max_bundle_tasks", "result_cache_entries"});
  const auto count = [&](const char* key, double low, double high) {
    return f.number(node[key], std::string("limits.") + key, low, high);
  };
  if (node["max_body_bytes"]) l.max_body_bytes = static_cast<size_t>(count("max_body_bytes", 1024, 256.0 * (1 << 20)));
  if (node["max_queue"]) l.max_queue = static_cast<size_t>(count("max_queue", 1, 1e6));
  if (node["max_connections"]) l.max_connections = static_cast<size_t>(count("max_connections", 1, 1e6));
  if (node["header_timeout_ms"]) l.header_timeout_ms = static_cast<int64_t>(count("header_timeout_ms", 1, 3.6e6));
  if (node["body_timeout_ms"]) l.body_timeout_ms = static_cast<int64_t>(count("body_timeout_ms", 1, 3.6e6));
  if (node["request_timeout_ms"]) l.request_timeout_ms = static_cast<int64_t>(count("request_timeout_ms", 1, 3.6e6));
  if (node["max_streams"]) l.max_streams = static_cast<size_t>(count("max_streams", 1, 1e6));
  if (node["stream_idle_ms"]) l.stream_idle_ms = static_cast<int64_t>(count("stream_idle_ms", 1, 3.6e6));
  if (node["max_stream_bytes"])
    l.max_stream_bytes = static_cast<size_t>(count("max_stream_bytes", 1 << 16, 1099511627776.0));
  if (node["max_check_windows"]) l.max_check_windows = static_cast<size_t>(count("max_check_windows", 1, 1e7));
  if (node["max_bundle_tasks"]) l.max_bundle_tasks = static_cast<size_t>(count("max_bundle_tasks", 1, 65536));
  if (node["result_cache_entries"])
    l.result_cache_entries = static_cast<size_t>(count("result_cache_entries", 0, 1 << 24));
}

ServeConfig parse(const YamlFields& f, const YAML::Node& root, const std::filesystem::path& file) {
  if (!root.IsMap()) f.fail("(top level)", "expected a map");
  f.only(root, "", {"listen", "unix_socket", "socket_mode", "auth_token_env", "limits", "models",
                    "unified", "routers", "compressors", "detectors"});
  ServeConfig c;
  c.file = file;
  if (root["listen"]) c.listen = f.scalar<std::string>(root["listen"], "listen", "host:port");
  if (root["unix_socket"]) c.unix_socket = f.path(root["unix_socket"], "unix_socket");
  if (c.listen.empty() && c.unix_socket.empty()) c.listen = "127.0.0.1:8080";  // loopback unless told otherwise
  if (!c.listen.empty() && c.listen.rfind(':') == std::string::npos) f.fail("listen", "expected host:port");
  if (root["socket_mode"]) {
    const std::string mode = f.scalar<std::string>(root["socket_mode"], "socket_mode", "octal permissions");
    if (mode.empty() || mode.size() > 4 || mode.find_first_not_of("01234567") != std::string::npos)
      f.fail("socket_mode", "'" + mode + "' is not octal permissions such as 0660");
    c.socket_mode = static_cast<unsigned>(std::stoul(mode, nullptr, 8));
  }
  if (root["auth_token_env"]) c.auth_token_env = f.scalar<std::string>(root["auth_token_env"], "auth_token_env", "a name");
  parse_limits(f, root["limits"], c.limits);
  c.models = named<ServedModelConfig>(f, root, "models",
                                      [&](const std::string& field, const YAML::Node& n) { return parse_model(f, field, n); });
  const auto path = [&](const std::string& field, const YAML::Node& n) { return f.path(n, field); };
  c.unified = named<std::filesystem::path>(f, root, "unified", path);
  c.routers = named<std::filesystem::path>(f, root, "routers", path);
  c.compressors = named<std::shared_ptr<const PromptCompressor>>(
      f, root, "compressors", [&](const std::string& field, const YAML::Node& n) { return parse_compression(f, n, field); });
  c.detectors = named<ServedDetectorConfig>(
      f, root, "detectors", [&](const std::string& field, const YAML::Node& n) { return parse_detector(f, field, n); });
  if (c.models.empty() && c.unified.empty() && c.routers.empty() && c.compressors.empty() && c.detectors.empty())
    f.fail("(top level)", "nothing to serve: give models, unified, routers, compressors or detectors");
  return c;
}

}  // namespace

ServeConfig ServeConfig::from_yaml(const std::filesystem::path& file) {
  try {
    return parse(YamlFields(file), load_yaml_file(file), file);
  } catch (const YAML::Exception& e) {
    throw LoadError(file.string() + ": " + e.what());
  }
}

}  // namespace semroute
