// Router::load: the YAML vocabulary of router/router.h.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>

#include "classifiers/intent_index.h"
#include "classifiers/unified_classifier.h"
#include "classifiers/yaml_input.h"
#include "router/compression_config.h"
#include "compression/prompt_compressor.h"
#include "core/device.h"
#include "hallucination/hallucination_detector.h"
#include "models/core_model.h"
#include "router/builtin_signals.h"
#include "router/router.h"
#include "router/redis_cache.h"
#include "router/semantic_cache.h"
#include "tasks/embedder.h"
#include "semroute/error.h"
#include "tasks/sequence_classifier.h"
#include "tasks/token_classifier.h"
#include "tokenizers/tokenizer.h"

namespace semroute {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kReasoningEfforts = {"minimal", "low", "medium", "high"};

bool is_name(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
  });
}

// Loads each model once, whatever the number of signals using it.
class ModelCache {
 public:
  explicit ModelCache(TaskOptions options) : options_(std::move(options)) {}
  std::shared_ptr<const SequenceClassifier> sequence(const fs::path& dir) {
    auto& slot = sequences_[fs::weakly_canonical(dir).string()];
    if (!slot) slot = SequenceClassifier::load(dir, options_);
    return slot;
  }
  std::shared_ptr<const TokenClassifier> token(const fs::path& dir) {
    auto& slot = tokens_[fs::weakly_canonical(dir).string()];
    if (!slot) slot = TokenClassifier::load(dir, options_);
    return slot;
  }
  std::shared_ptr<const Embedder> embedder(const fs::path& dir) {
    auto& slot = embedders_[fs::weakly_canonical(dir).string()];
    if (!slot) slot = Embedder::load(dir, EmbedderOptions(options_));
    return slot;
  }

 private:
  TaskOptions options_;
  std::map<std::string, std::shared_ptr<const SequenceClassifier>> sequences_;
  std::map<std::string, std::shared_ptr<const TokenClassifier>> tokens_;
  std::map<std::string, std::shared_ptr<const Embedder>> embedders_;
};

double threshold(const YamlFields& f, const YAML::Node& node, const std::string& field, double fallback) {
  if (!node["threshold"]) return fallback;
  return f.number(node["threshold"], field + ".threshold", 0, 1);
}

bool flag(const YamlFields& f, const YAML::Node& node, const char* key, const std::string& field) {
  return node[key] ? f.scalar<bool>(node[key], field + "." + key, "true or false") : false;
}

std::shared_ptr<const Signal> parse_signal_kind(const YamlFields& f, const std::string& name, const YAML::Node& node,
                                                ModelCache& models);

// A signal, on the prompt's skeleton (`compressed: true`, any kind), with
// its time budget (`timeout_ms`, any kind).
std::shared_ptr<const Signal> parse_signal(const YamlFields& f, const std::string& name, const YAML::Node& node,
                                           ModelCache& models, bool has_compression) {
  if (!node.IsMap() || (!node["timeout_ms"] && !node["compressed"])) return parse_signal_kind(f, name, node, models);
  const std::string field = "signals." + name;
  YAML::Node rest = YAML::Clone(node);
  rest.remove("timeout_ms");
  rest.remove("compressed");
  std::shared_ptr<const Signal> signal = parse_signal_kind(f, name, rest, models);
  if (flag(f, node, "compressed", field)) {
    if (!has_compression) f.fail(field + ".compressed", "the config has no 'compression:' section");
    signal = on_skeleton(std::move(signal));
  }
  if (!node["timeout_ms"]) return signal;
  const auto budget = f.scalar<int64_t>(node["timeout_ms"], field + ".timeout_ms", "milliseconds");
  if (budget <= 0 || budget > 600000) f.fail(field + ".timeout_ms", "must lie in [1, 600000]");
  return with_budget(std::move(signal), std::chrono::milliseconds(budget));
}

std::shared_ptr<const Signal> parse_signal_kind(const YamlFields& f, const std::string& name, const YAML::Node& node,
                                                ModelCache& models) {
  const std::string field = "signals." + name;
  if (!is_name(name)) f.fail(field, "a signal's name is letters, digits, '_' and '-'");
  if (!node.IsMap()) f.fail(field, "expected a map with a kind");
  if (!node["kind"]) f.fail(field + ".kind", "missing (classifier, entities, keywords, intents, unified, length, script or metadata)");
  const auto kind = f.scalar<std::string>(node["kind"], field + ".kind", "a kind");
  if (kind == "classifier") {
    f.only(node, field, {"kind", "model", "positive_labels", "threshold"});
    if (!node["model"]) f.fail(field + ".model", "missing");
    std::vector<std::string> positive;
    if (node["positive_labels"]) positive = f.strings(node["positive_labels"], field + ".positive_labels");
    return classifier_signal(name, models.sequence(f.path(node["model"], field + ".model")), positive,
                             threshold(f, node, field, 0.5));
  }
  if (kind == "entities") {
    f.only(node, field, {"kind", "model", "threshold"});
    if (!node["model"]) f.fail(field + ".model", "missing");
    return entities_signal(name, models.token(f.path(node["model"], field + ".model")), threshold(f, node, field, 0.5));
  }
  if (kind == "keywords") {
    f.only(node, field, {"kind", "keywords", "regex", "case_sensitive"});
    if (!node["keywords"]) f.fail(field + ".keywords", "missing");
    return keywords_signal(name, f.strings(node["keywords"], field + ".keywords"), flag(f, node, "regex", field),
                           flag(f, node, "case_sensitive", field));
  }
  if (kind == "intents") {
    f.only(node, field, {"kind", "model", "intents", "file", "k", "threshold", "aggregation"});
    if (!node["model"]) f.fail(field + ".model", "missing (an embedding model)");
    IntentSet set;
    if (node["file"] && node["intents"]) f.fail(field, "intents inline or in a file, not both");
    if (node["file"]) {
      set = IntentSet::from_yaml(f.path(node["file"], field + ".file"));
    } else {
      const YAML::Node& intents = node["intents"];
      if (!intents || !intents.IsMap()) f.fail(field + ".intents", "expected a map of intent names to example texts");
      for (const auto& item : intents) {
        const auto intent = f.key(item.first, field + ".intents");
        set.intents.push_back({intent, f.strings(item.second, field + ".intents." + intent)});
      }
    }
    if (node["k"]) set.options.k = f.scalar<int64_t>(node["k"], field + ".k", "a positive integer");
    if (set.options.k < 1 || set.options.k > 10000) f.fail(field + ".k", "must lie in [1, 10000]");
    if (node["threshold"]) set.options.threshold = static_cast<float>(threshold(f, node, field, 0));
    if (node["aggregation"]) {
      try {
        set.options.aggregation = parse_aggregation(f.scalar<std::string>(node["aggregation"], field + ".aggregation", "max, mean or vote"));
      } catch (const InvalidInput& e) {
        f.fail(field + ".aggregation", e.what());
      }
    }
    try {
      return intents_signal(name, models.embedder(f.path(node["model"], field + ".model")), set);
    } catch (const InvalidInput& e) {
      f.fail(field + ".intents", e.what());
    }
  }
  if (kind == "unified") {
    f.only(node, field, {"kind", "config"});
    if (!node["config"]) f.fail(field + ".config", "missing (a unified classifier's YAML)");
    return unified_signal(name, UnifiedClassifier::load(UnifiedConfig::from_yaml(f.path(node["config"], field + ".config"))));
  }
  if (kind == "length") {
    f.only(node, field, {"kind", "tokenizer"});
    std::shared_ptr<const Tokenizer> tokenizer;
    if (node["tokenizer"]) tokenizer = load_tokenizer(f.path(node["tokenizer"], field + ".tokenizer"));
    return length_signal(name, tokenizer);
  }
  if (kind == "script") {
    f.only(node, field, {"kind"});
    return script_signal(name);
  }
  if (kind == "metadata") {
    f.only(node, field, {"kind"});
    return metadata_signal(name);
  }
  f.fail(field + ".kind", "'" + kind + "' is not one of classifier, entities, keywords, intents, unified, length, script, metadata");
}

const std::set<std::string> kActionKeys = {"model",   "system_prompt", "system_prompt_mode", "reasoning_effort",
                                           "max_tokens", "headers", "block", "cache", "check_answer"};

// What the config has besides signals and decisions, for checking actions.
struct Sections {
  bool cache = false, hallucination = false;
};

Action parse_action(const YamlFields& f, const YAML::Node& node, const std::string& field, Sections sections) {
  Action a;
  const bool has_cache = sections.cache;
  if (node["check_answer"]) {
    a.check_answer = f.scalar<bool>(node["check_answer"], field + ".check_answer", "true or false");
    if (a.check_answer && !sections.hallucination)
      f.fail(field + ".check_answer", "the config has no 'hallucination:' section");
    if (a.check_answer && node["block"]) f.fail(field + ".check_answer", "a blocked request has no answer to check");
  }
  if (node["cache"]) {
    a.cache = f.scalar<bool>(node["cache"], field + ".cache", "true or false");
    if (a.cache && !has_cache) f.fail(field + ".cache", "the config has no 'cache:' section");
    if (a.cache && node["block"]) f.fail(field + ".cache", "a blocked request has no answer to cache");
  }
  if (node["model"]) a.model = f.scalar<std::string>(node["model"], field + ".model", "a model name");
  if (node["system_prompt"])
    a.system_prompt = f.scalar<std::string>(node["system_prompt"], field + ".system_prompt", "a string");
  if (node["system_prompt_mode"]) {
    const auto mode = f.scalar<std::string>(node["system_prompt_mode"], field + ".system_prompt_mode", "a mode");
    if (mode == "insert") {
      a.system_prompt_mode = SystemPromptMode::kInsert;
    } else if (mode == "replace") {
      a.system_prompt_mode = SystemPromptMode::kReplace;
    } else if (mode == "prepend") {
      a.system_prompt_mode = SystemPromptMode::kPrepend;
    } else {
      f.fail(field + ".system_prompt_mode", "'" + mode + "' is not one of insert, replace, prepend");
    }
  }
  if (node["reasoning_effort"]) {
    a.reasoning_effort = f.scalar<std::string>(node["reasoning_effort"], field + ".reasoning_effort", "an effort");
    if (std::find(kReasoningEfforts.begin(), kReasoningEfforts.end(), a.reasoning_effort) == kReasoningEfforts.end())
      f.fail(field + ".reasoning_effort", "'" + a.reasoning_effort + "' is not one of minimal, low, medium, high");
  }
  if (node["max_tokens"]) {
    a.max_tokens = f.scalar<int64_t>(node["max_tokens"], field + ".max_tokens", "a positive integer");
    if (*a.max_tokens <= 0) f.fail(field + ".max_tokens", "must be positive");
  }
  if (node["headers"]) {
    if (!node["headers"].IsMap()) f.fail(field + ".headers", "expected a map of header names to values");
    for (const auto& h : node["headers"]) {
      const auto name = f.key(h.first, field + ".headers");
      if (!is_name(name)) f.fail(field + ".headers." + name, "a header name is letters, digits, '_' and '-'");
      const auto value = f.scalar<std::string>(h.second, field + ".headers." + name, "a string");
      if (value.find_first_of("\r\n") != std::string::npos || value.find('\0') != std::string::npos)
        f.fail(field + ".headers." + name, "a header value cannot hold line breaks");
      a.headers[name] = value;
    }
  }
  if (node["block"]) {
    a.block = true;
    a.block_reason = f.scalar<std::string>(node["block"], field + ".block", "the reason given to the caller");
    if (a.block_reason.empty()) f.fail(field + ".block", "give the reason the caller will see");
    if (!a.model.empty() || !a.system_prompt.empty())
      f.fail(field + ".block", "a blocked request goes to no model: drop model and system_prompt");
  }
  return a;
}

std::vector<Decision> parse_decisions(const YamlFields& f, const YAML::Node& node, ConditionCompiler& compiler,
                                      Sections sections) {
  if (!node) return {};
  if (!node.IsSequence()) f.fail("decisions", "expected a list");
  std::vector<Decision> decisions;
  std::set<std::string> names;
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string field = "decisions[" + std::to_string(i) + "]";
    const YAML::Node& d = node[i];
    if (!d.IsMap()) f.fail(field, "expected a map");
    std::set<std::string> known = kActionKeys;
    known.insert({"name", "priority", "when", "description"});
    f.only(d, field, known);
    Decision decision;
    if (!d["name"]) f.fail(field + ".name", "missing");
    decision.name = f.scalar<std::string>(d["name"], field + ".name", "a name");
    if (!is_name(decision.name) || decision.name == "default")
      f.fail(field + ".name", "'" + decision.name + "': letters, digits, '_' and '-', and not 'default'");
    if (!names.insert(decision.name).second) f.fail(field + ".name", "'" + decision.name + "' is used twice");
    if (d["priority"]) decision.priority = f.scalar<int>(d["priority"], field + ".priority", "an integer");
    if (!d["when"]) f.fail(field + ".when", "missing (a condition)");
    decision.when = compiler.compile(d["when"], field + ".when");
    decision.action = parse_action(f, d, field, sections);
    decisions.push_back(std::move(decision));
  }
  return decisions;
}

RouterCache parse_cache(const YamlFields& f, const YAML::Node& node, ModelCache& models) {
  if (!node.IsMap()) f.fail("cache", "expected a map");
  f.only(node, "cache", {"embedding_model", "threshold", "ttl_seconds", "capacity", "max_bytes", "backend", "redis"});
  if (!node["embedding_model"]) f.fail("cache.embedding_model", "missing (a model folder that embeds prompts)");
  CacheOptions cache;
  cache.threshold = 0.95f;
  if (node["threshold"]) {
    cache.threshold = static_cast<float>(f.number(node["threshold"], "cache.threshold", 0, 1));
    if (cache.threshold <= 0) f.fail("cache.threshold", "must lie in (0, 1]");
  }
  if (node["ttl_seconds"]) {
    const auto ttl = f.scalar<int64_t>(node["ttl_seconds"], "cache.ttl_seconds", "seconds");
    if (ttl < 0) f.fail("cache.ttl_seconds", "must not be negative (0: no expiry)");
    cache.ttl = std::chrono::seconds(ttl);
  }
  if (node["capacity"]) {
    const auto capacity = f.scalar<int64_t>(node["capacity"], "cache.capacity", "a number of entries");
    if (capacity <= 0 || capacity > (int64_t{1} << 26)) f.fail("cache.capacity", "must lie in [1, 2^26]");
    cache.capacity = static_cast<size_t>(capacity);
  }
  if (node["max_bytes"])
    cache.max_bytes = static_cast<size_t>(f.number(node["max_bytes"], "cache.max_bytes", 1024, 1099511627776.0));
  const std::string backend =
      node["backend"] ? f.scalar<std::string>(node["backend"], "cache.backend", "memory or redis") : "memory";
  if (backend != "memory" && backend != "redis") f.fail("cache.backend", "'" + backend + "' is neither memory nor redis");
  if (node["redis"] && backend != "redis") f.fail("cache.redis", "only with backend: redis");
  RouterCache out;
  out.embedder = models.embedder(f.path(node["embedding_model"], "cache.embedding_model"));
  if (backend == "memory") {
    out.store = make_memory_cache(out.embedder->dimension(), cache);
    return out;
  }
  RedisOptions redis;
  if (const YAML::Node r = node["redis"]) {
    if (!r.IsMap()) f.fail("cache.redis", "expected a map (host, port, prefix, timeout_ms)");
    f.only(r, "cache.redis", {"host", "port", "prefix", "timeout_ms"});
    if (r["host"]) redis.host = f.scalar<std::string>(r["host"], "cache.redis.host", "a host name");
    if (r["port"]) redis.port = f.scalar<int>(r["port"], "cache.redis.port", "a port");
    if (r["prefix"]) redis.prefix = f.scalar<std::string>(r["prefix"], "cache.redis.prefix", "a key prefix");
    if (r["timeout_ms"]) redis.timeout_ms = f.scalar<int>(r["timeout_ms"], "cache.redis.timeout_ms", "milliseconds");
    if (redis.port <= 0 || redis.port > 65535) f.fail("cache.redis.port", "must lie in [1, 65535]");
    if (redis.timeout_ms <= 0 || redis.timeout_ms > 60000) f.fail("cache.redis.timeout_ms", "must lie in [1, 60000]");
  }
  try {
    out.store = make_redis_cache(out.embedder->dimension(), cache, redis);
  } catch (const LoadError&) {
    throw;
  } catch (const Error& e) {
    throw LoadError(std::string("cache.redis: ") + e.what(), e.code());
  }
  return out;
}

std::shared_ptr<const HallucinationDetector> parse_hallucination(const YamlFields& f, const YAML::Node& node,
                                                                 const TaskOptions& options, int& stop_severity) {
  if (!node.IsMap()) f.fail("hallucination", "expected a map");
  f.only(node, "hallucination", {"model", "nli", "template", "threshold", "context_windows", "stop_severity"});
  if (!node["model"]) f.fail("hallucination.model", "missing (a token classifier: supported / hallucinated)");
  DetectorOptions o;
  if (node["template"]) {
    const auto t = f.scalar<std::string>(node["template"], "hallucination.template", "lettucedetect or halugate");
    if (t == "halugate") {
      o.input_template = DetectorTemplate::kHaluGate;
    } else if (t != "lettucedetect") {
      f.fail("hallucination.template", "'" + t + "' is neither lettucedetect nor halugate");
    }
  }
  if (node["threshold"]) {
    o.threshold = threshold(f, node, "hallucination", 0.5);
    if (o.threshold <= 0) f.fail("hallucination.threshold", "must lie in (0, 1]");
  }
  if (node["context_windows"]) {
    const auto n = f.scalar<int64_t>(node["context_windows"], "hallucination.context_windows", "a count");
    if (n < 0 || n > 1000) f.fail("hallucination.context_windows", "must lie in [0, 1000] (0: all)");
    o.context_windows = static_cast<size_t>(n);
  }
  if (node["stop_severity"]) {
    stop_severity = f.scalar<int>(node["stop_severity"], "hallucination.stop_severity", "0 to 4");
    if (stop_severity < 0 || stop_severity > 4) f.fail("hallucination.stop_severity", "must lie in [0, 4] (0: never)");
  }
  const fs::path nli = node["nli"] ? f.path(node["nli"], "hallucination.nli") : fs::path();
  return HallucinationDetector::load(f.path(node["model"], "hallucination.model"), nli, o, options);
}

std::shared_ptr<const Router> parse_router(const YamlFields& f, const YAML::Node& root) {
  if (!root.IsMap()) f.fail("(top)", "expected a map");
  f.only(root, "", {"auto_models", "strategy", "device", "dtype", "signals", "conditions", "decisions", "default",
                    "cache", "parallel", "compression", "hallucination"});
  std::vector<std::string> auto_models = {"auto"};
  if (root["auto_models"]) auto_models = f.strings(root["auto_models"], "auto_models");
  Strategy strategy = Strategy::kPriority;
  if (root["strategy"]) {
    const auto s = f.scalar<std::string>(root["strategy"], "strategy", "priority or confidence");
    if (s == "confidence") {
      strategy = Strategy::kConfidence;
    } else if (s != "priority") {
      f.fail("strategy", "'" + s + "' is neither priority nor confidence");
    }
  }
  TaskOptions options;
  try {
    options.load = parse_load_options(root["device"] ? f.scalar<std::string>(root["device"], "device", "a device") : "cpu",
                                      root["dtype"] ? f.scalar<std::string>(root["dtype"], "dtype", "a dtype") : "float32");
  } catch (const LoadError&) {
    throw;
  } catch (const Error& e) {
    f.fail("device / dtype", e.what());
  }
  ModelCache models(options);
  RouterParts parts;
  if (root["compression"]) parts.compressor = parse_compression(f, root["compression"], "compression");
  if (root["hallucination"]) parts.detector = parse_hallucination(f, root["hallucination"], options, parts.stop_severity);
  SignalSet signals;
  if (root["signals"]) {
    if (!root["signals"].IsMap()) f.fail("signals", "expected a map of names to signals");
    for (const auto& s : root["signals"]) {
      const auto name = f.key(s.first, "signals");
      signals[name] = parse_signal(f, name, s.second, models, parts.compressor != nullptr);
    }
  }
  if (parts.compressor && !signals.count("compression")) signals["compression"] = compression_signal("compression");
  if (!signals.count("length")) signals["length"] = length_signal("length", nullptr);
  if (!signals.count("script")) signals["script"] = script_signal("script");
  if (!signals.count("meta")) signals["meta"] = metadata_signal("meta");
  if (root["cache"]) {
    parts.cache = parse_cache(f, root["cache"], models);
    if (!signals.count("cache")) signals["cache"] = cache_signal("cache", parts.cache.embedder, parts.cache.store);
  }

  ConditionCompiler compiler(signals, root["conditions"]);
  const Sections sections{parts.cache.store != nullptr, parts.detector != nullptr};
  std::vector<Decision> decisions = parse_decisions(f, root["decisions"], compiler, sections);
  Action fallback;
  if (root["default"]) {
    if (!root["default"].IsMap()) f.fail("default", "expected a map (an action)");
    f.only(root["default"], "default", kActionKeys);
    fallback = parse_action(f, root["default"], "default", sections);
  }
  parts.parallel = root["parallel"] ? f.scalar<bool>(root["parallel"], "parallel", "true or false") : false;
  return std::make_shared<Router>(std::move(signals), DecisionEngine(std::move(decisions), fallback, strategy),
                                  std::move(auto_models), std::move(parts));
}

}  // namespace

std::shared_ptr<const Router> Router::load(const fs::path& yaml) {
  const YamlFields fields(yaml);
  const YAML::Node root = load_yaml_file(yaml);
  try {
    return parse_router(fields, root);
  } catch (const YAML::Exception& e) {  // a conversion no check above foresaw: still the file's fault
    throw LoadError(yaml.string() + ": " + e.what());
  } catch (const LoadError& e) {
    // Condition errors name their YAML path; name the file too.
    const std::string message = e.what();
    if (message.rfind(yaml.string(), 0) == 0) throw;
    throw LoadError(yaml.string() + ": " + message, e.code());
  }
}

}  // namespace semroute
