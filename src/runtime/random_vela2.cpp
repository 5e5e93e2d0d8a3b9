#include "runtime/random_vela2.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/ATen.h>

#include <cmath>
#include <fstream>

#include "core/checkpoint.h"
#include "core/file_input.h"
#include "runtime/vela2.h"
#include "semroute/error.h"

namespace semroute {
namespace fs = std::filesystem;
namespace {

constexpr int64_t kProjection = 16;
constexpr int64_t kMarkersBelowVocabEnd = 68;  // 50300 in ModernBERT's 50368: its unused added-token slots

void write_json(const fs::path& path, const nlohmann::ordered_json& j) { std::ofstream(path) << j.dump(2) << "\n"; }

// The marker head (docs/decisions.md), of order-1 logits.
std::vector<std::pair<std::string, at::Tensor>> random_head(int64_t hidden, const std::string& readout, uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const auto normal = [&](std::vector<int64_t> shape, double scale) {
    return at::randn(shape, gen, at::TensorOptions().dtype(at::kFloat)) * scale;
  };
  std::vector<std::pair<std::string, at::Tensor>> head = {
      {"norm.weight", 1 + normal({hidden}, 0.1)},
      {"norm.bias", normal({hidden}, 0.1)},
      {"log_tau", at::full({}, std::log(0.07))},
      {"log_tau_span", at::full({}, std::log(0.1))}};
  for (const char* name : {"w_o", "w_q", "w_p", "w_t", "w_e"}) {
    head.emplace_back(std::string(name) + ".weight", normal({kProjection, hidden}, 0.3));
    head.emplace_back(std::string(name) + ".bias", normal({kProjection}, 0.3));
  }
  if (readout != "cosine") {
    head.emplace_back("cls_mlp.0.weight", normal({2 * hidden, hidden}, 1 / std::sqrt(static_cast<double>(hidden))));
    head.emplace_back("cls_mlp.0.bias", normal({2 * hidden}, 0.1));
    head.emplace_back("cls_mlp.3.weight", normal({1, 2 * hidden}, 1 / std::sqrt(2.0 * static_cast<double>(hidden))));
    head.emplace_back("cls_mlp.3.bias", normal({1}, 0.1));
  }
  return head;
}

// The tokenizer with the added tokens at the marker ids named as the markers
// (added if the file has none there).
void write_tokenizer(const fs::path& source, const std::vector<int64_t>& ids, const fs::path& out) {
  nlohmann::json tokenizer = read_json_file(source);
  nlohmann::json& added = tokenizer["added_tokens"];
  if (!added.is_array()) added = nlohmann::json::array();
  for (size_t i = 0; i < ids.size(); ++i) {
    bool found = false;
    for (auto& token : added)
      if (token.value("id", int64_t{-1}) == ids[i]) {
        token["content"] = kVela2Markers[i];
        found = true;
      }
    if (!found)
      added.push_back({{"id", ids[i]}, {"content", kVela2Markers[i]}, {"single_word", false}, {"lstrip", false},
                       {"rstrip", false}, {"normalized", false}, {"special", true}});
  }
  write_json(out, tokenizer);
}

// The calibration of the packages' own tests: per-type temperatures,
// thresholds, the PII rule (the 17 types, the length rule, the sparse gate)
// and the three presets.
nlohmann::ordered_json random_calibration() {
  static const char* kPiiTypes[] = {"AGE", "CREDIT_CARD", "DATE_TIME", "DOMAIN_NAME", "EMAIL_ADDRESS", "GPE",
                                    "IBAN_CODE", "IP_ADDRESS", "NRP", "ORGANIZATION", "PERSON", "PHONE_NUMBER",
                                    "STREET_ADDRESS", "TITLE", "US_DRIVER_LICENSE", "US_SSN", "ZIP_CODE"};
  nlohmann::ordered_json labels = nlohmann::ordered_json::object();
  nlohmann::ordered_json types = nlohmann::ordered_json::array();
  for (const std::string type : kPiiTypes) {
    std::string description = type;
    for (char& c : description) c = c == '_' ? ' ' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    labels[type] = description;
    types.push_back(type);
  }
  nlohmann::ordered_json relevance = {{"not_relevant", "The candidate does not help with the query."},
                                      {"partially_relevant", "The candidate partly helps."},
                                      {"highly_relevant", "The candidate directly helps with the query."}};
  return nlohmann::ordered_json{{"temperature", {{"choice", 1.3}, {"score", 1.1}, {"set", 1.05}, {"span", 0.4}}},
          {"thresholds", {{"set:*", 0.3}, {"span:toxic", 0.1}, {"span:halu", 0.55}, {"span:*", 0.5}}},
          {"pii_types", types},
          {"pii_length_rule", {{"anchors", {{{"n_tokens", 21}, {"threshold", 0.75}},
                                            {{"n_tokens", 126}, {"threshold", 0.05}},
                                            {{"n_tokens", 1022}, {"threshold", 0.005919}}}}}},
          {"pii_sparse_gate", {{"K", 3}, {"t_sparse", 0.1}, {"probe_threshold", 0.5}}},
          {"pii_schema", nlohmann::ordered_json{{"text", "Which spans are personal information?"}, {"labels", labels}}},
          {"halu_schema", nlohmann::ordered_json{{"text", "Which spans of the answer are not supported by the context?"},
                                                 {"labels", {{"unsupported", "a claim not supported by the context"}}}}},
          {"relevance_schema", nlohmann::ordered_json{{"text", "How relevant is this candidate to the query?"},
                                                      {"levels", relevance},
                                                      {"values", {{"not_relevant", 0}, {"partially_relevant", 1},
                                                                  {"highly_relevant", 2}}}}}};
}

}  // namespace

void write_random_vela2(const RandomModelSpec& spec, const std::string& readout, size_t max_length,
                        const fs::path& dir) {
  if (readout != "cosine" && readout != "mlp" && readout != "both") throw InvalidInput("readout: cosine, mlp or both");
  if (spec.tokenizer.empty()) throw InvalidInput("a Vela 2.0 package needs a tokenizer (--tokenizer FILE)");
  const fs::path encoder_dir = dir / ".encoder";
  RandomModelSpec encoder_spec = spec;
  encoder_spec.tokenizer.clear();
  write_random_modernbert(encoder_spec, encoder_dir);
  nlohmann::json encoder = read_json_file(encoder_dir / "config.json");
  for (const char* key : {"id2label", "label2id", "classifier_pooling", "classifier_activation"}) encoder.erase(key);
  encoder["architectures"] = {"ModernBertModel"};
  const Checkpoint weights = Checkpoint::open(encoder_dir);
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  for (const std::string& name : weights.names())
    if (name.rfind("model.", 0) == 0) tensors.emplace_back("encoder." + name.substr(6), weights.tensor(name));
  const int64_t hidden = encoder["hidden_size"].get<int64_t>();
  for (auto& t : random_head(hidden, readout, spec.seed + 7)) tensors.push_back(std::move(t));
  save_safetensors(dir / "model.safetensors", tensors);
  fs::remove_all(encoder_dir);

  const int64_t positions = std::min<int64_t>(8192, encoder["max_position_embeddings"].get<int64_t>());
  const int64_t first_marker = encoder["vocab_size"].get<int64_t>() - kMarkersBelowVocabEnd;
  std::vector<int64_t> marker_ids;
  nlohmann::json markers = nlohmann::json::object();
  for (size_t i = 0; i < kVela2Markers.size(); ++i) {
    marker_ids.push_back(first_marker + static_cast<int64_t>(i));
    markers[kVela2Markers[i]] = marker_ids.back();
  }
  write_json(dir / "config.json", {{"format_version", 1},
                                   {"model_type", "vela2-unified"},
                                   {"marker_ids", markers},
                                   {"bos_token_id", encoder["bos_token_id"]},
                                   {"eos_token_id", encoder["eos_token_id"]},
                                   {"pad_token_id", encoder["pad_token_id"]},
                                   {"max_length", max_length > 0 ? static_cast<int64_t>(max_length) : positions},
                                   {"window_overlap", 64},
                                   {"encoder_config", encoder},
                                   {"proj_dim", kProjection},
                                   {"readout", readout}});
  write_json(dir / "calibration.json", random_calibration());
  write_tokenizer(spec.tokenizer, marker_ids, dir / "tokenizer.json");
}

}  // namespace semroute
