#include "runtime/decision2.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <regex>
#include <set>

#include "core/checkpoint.h"
#include "core/config_reader.h"
#include "core/file_input.h"
#include "core/sha256.h"
#include "models/model_factory.h"
#include "runtime/forwards.h"
#include "semroute/error.h"
#include "runtime/vela2.h"
#include "tokenizers/hf_tokenizer.h"

namespace semroute {
namespace fs = std::filesystem;
namespace {

constexpr const char* kSuffix = "\n\nSelect the single option best supported by the context and instructions.\nDecision:";
constexpr const char* kPromptVersion = "decision2-segmented-options-global-query-v1";
constexpr const char* kQwen3Architecture = "qwen3-text-endpoints-global-query-shared-bilinear-mlp";
constexpr const char* kQwen35Architecture = "qwen3.5-text-endpoints-global-query-shared-bilinear-mlp";
constexpr const char* kManifest = "MODEL_MANIFEST.json";


[[noreturn]] void refuse(const fs::path& dir, const std::string& why) {
  throw LoadError(dir.string() + ": " + why, ErrorCode::kInvalidModel);
}

// Every regular file under `dir` by its relative POSIX path, as the
// packages inventory themselves (the Hugging Face cache, Python caches and a
// root .gitattributes left out); a link is refused.
std::map<std::string, fs::path> package_files(const fs::path& dir) {
  std::map<std::string, fs::path> out;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    const std::string name = fs::relative(it->path(), dir).generic_string();
    if (it->is_symlink()) refuse(dir, "package contains a link: " + name);
    if (name.rfind(".cache/huggingface", 0) == 0) {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file() || name == ".gitattributes") continue;
    if (it->path().extension() == ".pyc" && it->path().parent_path().filename() == "__pycache__") continue;
    out[name] = it->path();
  }
  return out;
}

}  // namespace

std::map<std::string, std::string> decision2_inventory(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& [name, path] : package_files(dir)) out[name] = sha256_of_file(path);
  return out;
}

std::string decision2_identity(const std::map<std::string, std::string>& sha) {
  static const std::set<std::string> kRootFiles = {
      "decision_config.json", "decision_head.safetensors", "tokenizer.json",   "tokenizer_config.json",
      "special_tokens_map.json", "added_tokens.json",      "vocab.json",       "merges.txt",
      "tokenizer.model",      "chat_template.jinja"};
  static const std::set<std::string> kSuffixes = {".json", ".safetensors", ".bin", ".model", ".txt"};
  nlohmann::json files = nlohmann::json::object();
  bool weights = false;
  for (const auto& [name, digest] : sha) {
    const fs::path path(name);
    const bool nested = name.rfind("backbone/", 0) == 0 || name.rfind("adapter/", 0) == 0;
    if (nested ? kSuffixes.count(path.extension().string()) == 0 : kRootFiles.count(name) == 0) continue;
    files[name] = digest;
    weights = weights || (name.rfind("backbone/", 0) == 0 &&
                          (path.extension() == ".safetensors" || path.extension() == ".bin"));
  }
  if (!weights) throw InvalidInput("checkpoint is missing backbone weight files");
  return sha256_hex(files.dump());
}

namespace {

// Values in a safetensors file, from its header.
int64_t tensor_values(const fs::path& file) {
  const Checkpoint c = Checkpoint::open(file);
  int64_t n = 0;
  for (const std::string& name : c.names()) n += c.find(name)->numel();
  return n;
}

const nlohmann::json& field(const nlohmann::json& j, const char* key, const fs::path& dir, const std::string& where) {
  if (!j.is_object() || !j.contains(key)) refuse(dir, where + ": " + key + " is missing");
  return j[key];
}

// Calibrated temperatures (1.0 each without a calibration).
std::map<std::string, double> read_temperatures(const fs::path& dir, const nlohmann::json& manifest,
                                                const std::string& identity, size_t max_length) {
  std::map<std::string, double> t = {{"choice", 1.0}, {"noul", 1.0}, {"score", 1.0}};
  const nlohmann::json entry = manifest.value("calibration", nlohmann::json());
  if (entry.is_null() || (entry.is_object() && entry.empty())) return t;
  const nlohmann::json calibration = read_json_file(file_in_dir(dir, field(entry, "file", dir, "calibration").get<std::string>()));
  if (calibration.value("calibration_version", "") != "decision2-per-type-temperature/1")
    refuse(dir, "calibration: calibration_version must be decision2-per-type-temperature/1");
  if (calibration.value("model_sha256", "") != identity) refuse(dir, "calibration belongs to another model");
  const nlohmann::json length = calibration.value("inference", nlohmann::json::object()).value("max_length", nlohmann::json());
  if (!length.is_null() && length != max_length) refuse(dir, "calibration: inference.max_length differs from the manifest");
  const nlohmann::json by_type = calibration.value("temperature_by_type", nlohmann::json());
  if (!by_type.is_object() || by_type.size() != 3) refuse(dir, "calibration: temperature_by_type: {choice, noul, score}");
  for (auto& [type, value] : t) {
    const nlohmann::json v = by_type.value(type, nlohmann::json());
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0.05 || v.get<double>() > 20.0)
      refuse(dir, "calibration temperature for " + type + " is out of range");
    value = v.get<double>();
  }
  return t;
}

// Score offsets by level count (none without a score bias).
std::map<size_t, std::vector<double>> read_score_bias(const fs::path& dir, const nlohmann::json& manifest,
                                                      const std::map<std::string, std::string>& sha,
                                                      const std::string& identity) {
  std::map<size_t, std::vector<double>> out;
  const nlohmann::json entry = manifest.value("score_bias", nlohmann::json());
  if (entry.is_null()) return out;
  const std::string file = field(entry, "file", dir, "score_bias").get<std::string>();
  const auto digest = sha.find(file);
  if (digest == sha.end() || digest->second != field(entry, "sha256", dir, "score_bias"))
    refuse(dir, "score_bias: " + file + " is not the file the manifest names");
  const nlohmann::json bias = read_json_file(file_in_dir(dir, file));
  if (!bias.is_object() || bias.size() != 4 || bias.value("format", "") != "dev2-score-bias-v1" ||
      bias.value("model_sha256", "") != identity || !bias.value("fit", nlohmann::json()).is_object())
    refuse(dir, "score_bias: {format: dev2-score-bias-v1, model_sha256 of this model, offsets, fit}");
  const nlohmann::json& offsets = bias["offsets"];
  if (!offsets.is_object() || offsets.empty()) refuse(dir, "score_bias: offsets must be a non-empty object");
  for (const auto& [key, values] : offsets.items()) {
    if (!std::regex_match(key, std::regex("[1-9][0-9]{0,2}"))) refuse(dir, "score_bias: offsets key " + key);
    const size_t levels = std::stoul(key);
    if (levels < 2 || levels > 255 || !values.is_array() || values.size() != levels)
      refuse(dir, "score_bias: offsets." + key + " must list " + key + " numbers");
    for (const auto& v : values) {
      if (!v.is_number() || !std::isfinite(v.get<double>())) refuse(dir, "score_bias: offsets." + key + ": numbers");
      out[levels].push_back(v.get<double>());
    }
  }
  if (field(entry, "offsets", dir, "score_bias") != offsets) refuse(dir, "score_bias: the manifest's offsets differ");
  return out;
}

void check_decision_config(const fs::path& dir, const nlohmann::json& c) {
  if (!c.is_object()) refuse(dir, "decision_config.json: an object");
  if (c.value("prompt_version", "") != kPromptVersion) refuse(dir, "unsupported prompt version");
  const std::string architecture = c.value("architecture", "");
  if (architecture == kQwen35Architecture) refuse(dir, "the Qwen3.5 backbone is not served yet (docs/decisions.md)");
  if (architecture != kQwen3Architecture) refuse(dir, "unsupported architecture " + architecture);
  if (c.contains("head_variant") && c["head_variant"] != "shared") refuse(dir, "head_variant: shared");
  if ((c.contains("dec_residual") && !c["dec_residual"].is_null()) || c.value("readout", "") == "label_token")
    refuse(dir, "residual and label-token readouts are not supported yet");
  const nlohmann::json format = c.value("checkpoint_format", nlohmann::json());
  if (!format.is_null() && format != "full") refuse(dir, "checkpoint_format: full (adapters are not served yet)");
  if (!c.value("head_dim", nlohmann::json()).is_number_integer() || c["head_dim"].get<int64_t>() < 1)
    refuse(dir, "head_dim: a positive integer");
}

// The confidence of a distribution: 1 - entropy / ln(n).
double confidence_of(const std::vector<double>& p) {
  double entropy = 0;
  for (const double v : p)
    if (v > 0) entropy -= v * std::log(v);
  return std::clamp(1.0 - entropy / std::log(static_cast<double>(p.size())), 0.0, 1.0);
}

}  // namespace

struct Decision2Model::Head {
  at::Tensor candidate_norm_weight, candidate_norm_bias, query_norm_weight, query_norm_bias;
  at::Tensor key, query, candidate_mlp, candidate_mlp_bias, query_mlp, scalar;
  double scale = 1;  // sqrt(head_dim)
};

// One question's prompt as tokens: each option's last token and the query (the last).
struct Decision2Model::Row {
  std::vector<int64_t> ids;
  std::vector<size_t> endpoints;
  size_t case_index = 0, question = 0;
};

Decision2Model::~Decision2Model() = default;

bool is_decision2_package(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_regular_file(dir / "config.json", ec)) return false;
  const nlohmann::json c = read_json_file(dir / "config.json");
  return c.is_object() && c.value("decision_format", nlohmann::json()) == "vllm-sr-decision" &&
         c.value("format_version", nlohmann::json()) == 2 && c.value("package_schema", nlohmann::json()) == "dev2-package/1";
}

Decision2Prompt decision2_prompt(const DecisionJson& state, const DecisionQuestion& q) {
  Decision2Prompt p;
  p.prefix = "Context:\n" + content_text(state) + "\n\nTask type: " + question_kind_name(q.kind) + "\nQuestion:\n" +
             content_text(q.instructions_value.is_null() ? DecisionJson(q.instructions) : q.instructions_value) + "\nOptions:";
  for (size_t k = 0; k < q.options.size(); ++k) {
    const DecisionOption& o = q.options[k];
    DecisionJson key = o.name, description = o.value;
    if (q.kind == QuestionKind::kNoul) {
      key = k == 0 ? "false" : "true";
      if (description.is_null()) description = k == 0 ? "No" : "Yes";
    } else if (q.kind == QuestionKind::kScore) {
      key = std::to_string(k);
    }
    p.options.push_back("\n<option>\n" + canonical_json({{"description", description}, {"key", key}}) + "\n</option>");
  }
  p.suffix = kSuffix;
  return p;
}

std::shared_ptr<const Decision2Model> Decision2Model::load(const fs::path& dir, const LoadOptions& options) {
  if (!is_decision2_package(dir)) refuse(dir, "config.json is not a Decision 2.0 package pointer");
  const nlohmann::json pointer = read_json_file(dir / "config.json");
  const std::string manifest_text = read_file(file_in_dir(dir, kManifest));
  const nlohmann::json manifest = parse_json(manifest_text, (dir / kManifest).string());
  if (!manifest.is_object() || manifest.value("schema", "") != "dev2-package-manifest/1" ||
      !manifest.value("files_sha256", nlohmann::json()).is_object() || !manifest.value("profile", nlohmann::json()).is_string())
    refuse(dir, "unknown or malformed Decision 2.0 package manifest");
  const std::string profile = manifest["profile"];
  if (profile == "kai-native" || profile == "qwen-adapter" || profile == "encoder-marker")
    refuse(dir, "package profile '" + profile + "' is not served by the decision2 family yet");
  if (profile != "qwen-full") refuse(dir, "unknown or malformed Decision 2.0 package manifest");
  std::shared_ptr<Decision2Model> m(new Decision2Model());
  // Every file as the manifest lists it, nothing more or less.
  std::map<std::string, std::string> listed;
  for (const auto& [name, digest] : manifest["files_sha256"].items()) {
    if (name == kManifest || !digest.is_string() || !std::regex_match(digest.get<std::string>(), std::regex("[0-9a-f]{64}")))
      refuse(dir, "unknown or malformed Decision 2.0 package manifest");
    listed[name] = digest;
  }
  std::vector<std::string> missing, extra, changed;
  std::map<std::string, std::string> sha = decision2_inventory(dir);
  sha.erase(kManifest);
  for (const auto& [name, digest] : sha) {
    const auto it = listed.find(name);
    if (it == listed.end()) extra.push_back(name);
    else if (it->second != digest) changed.push_back(name);
  }
  for (const auto& [name, digest] : listed)
    if (sha.count(name) == 0) missing.push_back(name);
  if (!missing.empty() || !extra.empty() || !changed.empty()) {
    const auto list = [](const std::vector<std::string>& names) {
      std::string s;
      for (size_t i = 0; i < names.size() && i < 5; ++i) s += (i ? ", " : "") + names[i];
      return "[" + s + "]";
    };
    refuse(dir, "package files differ from MODEL_MANIFEST.json (missing " + list(missing) + ", extra " + list(extra) +
                    ", changed " + list(changed) + ")");
  }
  m->model_name_ = manifest.value("model_name", "");
  if (m->model_name_.empty() || pointer.value("model_name", "") != m->model_name_)
    refuse(dir, "pointer and manifest name different models");
  const nlohmann::json max_length = manifest.value("max_input_tokens", nlohmann::json());
  if (!max_length.is_number_integer() || max_length.get<int64_t>() < 16) refuse(dir, "max_input_tokens: an integer of at least 16");
  m->max_length_ = max_length.get<size_t>();
  std::string identity;
  try {
    identity = decision2_identity(sha);
  } catch (const InvalidInput& e) {
    refuse(dir, e.what());
  }
  if (manifest.value("identity", nlohmann::json::object()).value("model_sha256", "") != identity)
    refuse(dir, "model identity differs from the scored checkpoint in MODEL_MANIFEST.json");
  m->identity_.files = sha;
  m->identity_.model_sha256 = identity;
  m->identity_.manifest_sha256 = sha256_hex(manifest_text);
  // Tensor counts, from the files' headers.
  const nlohmann::json& parameters = field(manifest, "parameters", dir, "MODEL_MANIFEST.json");
  const nlohmann::json& groups = field(parameters, "packaged_files", dir, "parameters");
  nlohmann::json counted = nlohmann::json::object();
  for (const auto& [group, files] : groups.items()) {
    int64_t n = 0;
    for (const auto& file : files) n += tensor_values(file_in_dir(dir, file.get<std::string>()));
    counted[group] = n;
  }
  if (counted != field(parameters, "packaged", dir, "parameters")) refuse(dir, "packaged tensor counts differ from the manifest");
  const nlohmann::json decision_config = read_json_file(file_in_dir(dir, "decision_config.json"));
  check_decision_config(dir, decision_config);
  const nlohmann::json backbone_config = read_json_file(file_in_dir(dir / "backbone", "config.json"));
  if (backbone_config.value("model_type", "") != "qwen3")
    refuse(dir, "backbone config model_type differs from decision_config (qwen3)");
  // The backbone: every tensor a parameter, every parameter a tensor.
  ModelSource source{dir / "backbone", ConfigReader(backbone_config, (dir / "backbone/config.json").string()),
                     Checkpoint::open(dir / "backbone")};
  std::vector<std::string> unused;
  m->backbone_ = load_core_model(source, options, &unused);
  if (!unused.empty()) refuse(dir, "backbone tensor " + unused.front() + " is no parameter of a Qwen3 model");
  // The head: exactly its ten tensors.
  const Checkpoint head_file = Checkpoint::open(file_in_dir(dir, "decision_head.safetensors"));
  const auto hidden = backbone_config.value("hidden_size", int64_t{0});
  const int64_t d = decision_config["head_dim"].get<int64_t>();
  const auto tensor = [&](const std::string& name, std::vector<int64_t> shape) {
    if (head_file.find(name) == nullptr) refuse(dir, "decision_head.safetensors has no " + name);
    at::Tensor t = head_file.tensor(name).to(at::kFloat).contiguous();
    if (t.sizes().vec() != shape) refuse(dir, name + " has shape " + c10::str(t.sizes()) + ", expected " + c10::str(shape));
    return t;
  };
  if (head_file.size() != 10) refuse(dir, "decision_head.safetensors must hold exactly the ten head tensors");
  auto head = std::make_unique<Head>();
  head->candidate_norm_weight = tensor("candidate_norm.weight", {hidden});
  head->candidate_norm_bias = tensor("candidate_norm.bias", {hidden});
  head->query_norm_weight = tensor("query_norm.weight", {hidden});
  head->query_norm_bias = tensor("query_norm.bias", {hidden});
  head->key = tensor("key.weight", {d, hidden});
  head->query = tensor("query.weight", {d, hidden});
  head->candidate_mlp = tensor("candidate_mlp.weight", {d, hidden});
  head->candidate_mlp_bias = tensor("candidate_mlp.bias", {d});
  head->query_mlp = tensor("query_mlp.weight", {d, hidden});
  head->scalar = tensor("scalar.weight", {1, d});
  head->scale = std::sqrt(static_cast<double>(d));
  m->head_ = std::move(head);
  const int64_t loaded = counted.value("backbone", int64_t{0}) + tensor_values(file_in_dir(dir, "decision_head.safetensors"));
  if (parameters.value("loaded", nlohmann::json()) != loaded)
    refuse(dir, "loaded " + std::to_string(loaded) + " parameters; the manifest declares " + parameters.value("loaded", nlohmann::json()).dump());
  m->identity_.parameters = loaded;
  m->temperature_ = read_temperatures(dir, manifest, identity, m->max_length_);
  m->score_bias_ = read_score_bias(dir, manifest, sha, identity);
  m->tokenizer_ = load_hf_tokenizer(file_in_dir(dir, "tokenizer.json"));
  const nlohmann::json tokenizer_config =
      fs::exists(dir / "tokenizer_config.json") ? read_json_file(dir / "tokenizer_config.json") : nlohmann::json::object();
  std::optional<int32_t> pad;
  for (const char* key : {"pad_token", "eos_token"}) {
    const nlohmann::json t = tokenizer_config.value(key, nlohmann::json());
    const std::string name = t.is_string() ? t.get<std::string>() : t.is_object() ? t.value("content", "") : "";
    if (!pad && !name.empty()) pad = m->tokenizer_->token_to_id(name);
  }
  if (!pad) refuse(dir, "tokenizer_config.json names no pad_token or eos_token of the vocabulary");
  m->pad_ = *pad;
  return m;
}

std::shared_ptr<const DecisionModel> load_decision_model(const fs::path& dir, const LoadOptions& options) {
  if (is_vela2_package(dir)) return Vela2Model::load(dir, options);
  if (is_decision2_package(dir)) return Decision2Model::load(dir, options);
  return nullptr;
}

nlohmann::json Decision2Model::limits() const {
  return {{"max_input_tokens", max_length_}, {"min_options", kMinOptions}, {"max_options", kMaxOptions},
          {"min_levels", kMinLevels},        {"max_levels", kMaxLevels}};
}

void Decision2Model::check_question(const std::string& id, const DecisionJson& question) const {
  const auto invalid = [&](const std::string& why) { throw InvalidInput("question \"" + id + "\": " + why); };
  if (!question.is_object()) invalid("expected an object");
  const DecisionJson type = question.value("type", DecisionJson());
  if (type != "choice" && type != "noul" && type != "score") invalid("type must be one of ['choice', 'noul', 'score']");
  std::set<std::string> allowed = {"type", "instructions", "criteria", "require_full_input"};
  allowed.insert(type == "score" ? "levels" : "choices");
  std::string unknown;
  for (const auto& [key, value] : question.items())
    if (allowed.count(key) == 0) unknown += (unknown.empty() ? "'" : ", '") + key + "'";
  if (!unknown.empty()) invalid(type.get<std::string>() + " questions do not take [" + unknown + "]");
}

DecisionAnswer decision2_answer(const DecisionQuestion& q, std::vector<double> logits, double temperature,
                                const std::vector<double>* score_bias) {
  DecisionAnswer a;
  a.id = q.id;
  a.kind = q.kind;
  const size_t n = q.options.size();
  if (q.kind == QuestionKind::kScore && score_bias != nullptr && score_bias->size() == logits.size())
    for (size_t k = 0; k < logits.size(); ++k) logits[k] += (*score_bias)[k];
  if (!std::isfinite(temperature) || temperature <= 0 || n < 2 || n > kMaxOptions || logits.size() != n ||
      !std::all_of(logits.begin(), logits.end(), [](double v) { return std::isfinite(v); })) {
    a.error = ItemError::kInvalidModelOutput;
    return a;
  }
  std::vector<double> p(n);
  double top = -INFINITY, sum = 0;
  for (const double v : logits) top = std::max(top, v / temperature);
  for (size_t k = 0; k < n; ++k) sum += p[k] = std::exp(logits[k] / temperature - top);
  for (double& v : p) v /= sum;
  switch (q.kind) {
    case QuestionKind::kNoul: a.noul = p[1]; return a;
    case QuestionKind::kChoice:
      a.choice = q.options[static_cast<size_t>(std::max_element(p.begin(), p.end()) - p.begin())].name;
      for (size_t k = 0; k < n; ++k) a.probabilities.emplace_back(q.options[k].name, p[k]);
      break;
    default:
      for (size_t k = 0; k < n; ++k) {
        a.score += static_cast<double>(k) * p[k];
        a.probabilities.emplace_back(std::to_string(k), p[k]);
        a.legend.push_back(q.options[k].name);
      }
  }
  a.confidence = confidence_of(p);
  return a;
}

DecisionAnswer Decision2Model::answer(const DecisionQuestion& q, const std::vector<double>& logits) const {
  const auto bias = score_bias_.find(q.options.size());
  return decision2_answer(q, logits, temperature_.at(question_kind_name(q.kind)),
                          bias == score_bias_.end() ? nullptr : &bias->second);
}

std::vector<float> Decision2Model::option_logits(const at::Tensor& hidden, const Row& row) const {
  const Head& h = *head_;
  const std::vector<int64_t> positions(row.endpoints.begin(), row.endpoints.end());
  const at::Tensor c = at::layer_norm(hidden.index_select(0, at::tensor(positions, at::kLong)), {hidden.size(1)},
                                      h.candidate_norm_weight, h.candidate_norm_bias, 1e-5);
  const at::Tensor q = at::layer_norm(hidden[static_cast<int64_t>(row.ids.size() - 1)], {hidden.size(1)},
                                      h.query_norm_weight, h.query_norm_bias, 1e-5);
  const at::Tensor bilinear = at::mv(at::linear(c, h.key), at::linear(q, h.query)) / h.scale;
  const at::Tensor inner = at::gelu(at::linear(c, h.candidate_mlp, h.candidate_mlp_bias) + at::linear(q, h.query_mlp));
  const at::Tensor logits = (bilinear + at::linear(inner, h.scalar).squeeze(1)).contiguous();
  return std::vector<float>(logits.data_ptr<float>(), logits.data_ptr<float>() + logits.numel());
}

std::vector<std::vector<DecisionAnswer>> Decision2Model::decide_all(
    const std::vector<DecisionCase>& cases, std::vector<size_t>* input_tokens, const DecideOptions&,
    const std::function<void(const std::function<void()>&)>& on_lane) const {
  std::vector<std::vector<DecisionAnswer>> out(cases.size());
  std::vector<Row> rows;
  if (input_tokens != nullptr) input_tokens->assign(cases.size(), 0);
  EncodeOptions encode;
  encode.add_special_tokens = false;
  encode.max_length = max_length_ + 1;  // enough to know a segment does not fit
  const auto tokens = [&](const std::string& text, std::vector<int64_t>& ids) {
    const Encoding e = tokenizer_->encode(text, encode);
    ids.insert(ids.end(), e.ids.begin(), e.ids.end());
    return e.ids.size();
  };
  for (size_t k = 0; k < cases.size(); ++k) {
    const std::vector<DecisionQuestion>& questions = *cases[k].questions;
    out[k].resize(questions.size());
    for (size_t i = 0; i < questions.size(); ++i) {
      out[k][i].id = questions[i].id;
      out[k][i].kind = questions[i].kind;
      const Decision2Prompt prompt = decision2_prompt(*cases[k].state, questions[i]);
      Row row{{}, {}, k, i};
      bool fits = tokens(prompt.prefix, row.ids) <= max_length_;  // each segment tokenized on its own
      for (const std::string& option : prompt.options) {
        fits = fits && row.ids.size() <= max_length_ && tokens(option, row.ids) > 0;
        row.endpoints.push_back(row.ids.size() - 1);
      }
      fits = fits && row.ids.size() <= max_length_ && tokens(prompt.suffix, row.ids) > 0 && row.ids.size() <= max_length_;
      if (!fits) {
        out[k][i].error = ItemError::kMaxLengthExceeded;
        continue;
      }
      if (input_tokens != nullptr) (*input_tokens)[k] += row.ids.size();
      rows.push_back(std::move(row));
    }
  }
  std::vector<std::vector<float>> logits(rows.size());
  const auto forwards = [&] {
    std::vector<const std::vector<int64_t>*> ids;
    for (const Row& row : rows) ids.push_back(&row.ids);
    forward_padded(*backbone_, ids, pad_, [&](size_t i, const at::Tensor& hidden) { logits[i] = option_logits(hidden, rows[i]); });
  };
  if (on_lane) on_lane(forwards);
  else forwards();
  for (size_t r = 0; r < rows.size(); ++r) {
    const DecisionQuestion& q = (*cases[rows[r].case_index].questions)[rows[r].question];
    DecisionAnswer& a = out[rows[r].case_index][rows[r].question];
    a = answer(q, std::vector<double>(logits[r].begin(), logits[r].end()));
    a.complete_input = q.require_full_input;  // a prompt is always read whole
  }
  return out;
}

}  // namespace semroute
