#include "runtime/random_vela2.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/ATen.h>

#include <cmath>
#include <fstream>

#include "core/checkpoint.h"
#include "core/file_input.h"
#include "core/sha256.h"
#include "runtime/decision2.h"
#include "runtime/vela2.h"
#include "tokenizers/unicode.h"
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

// A byte-level BPE tokenizer (GPT-2's byte alphabet, Qwen's pre-tokenizer
// settings) with a few merges of common English pairs and <|endoftext|>:
// every text tokenizes, and segments tokenized apart differ from the whole.
nlohmann::ordered_json byte_level_tokenizer(int64_t* vocab_size) {
  std::vector<std::string> byte_char(256);
  int extra = 0;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    unicode::append_utf8(byte_char[static_cast<size_t>(b)], static_cast<char32_t>(printable ? b : 256 + extra++));
  }
  nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
  for (int b = 0; b < 256; ++b) vocab[byte_char[static_cast<size_t>(b)]] = b;
  const std::string space = byte_char[' '], newline = byte_char['\n'];
  const std::vector<std::pair<std::string, std::string>> merges = {
      {space, "t"}, {"h", "e"}, {space + "t", "he"}, {"i", "n"}, {"e", "r"}, {"o", "n"}, {space, "a"}, {"r", "e"},
      {"a", "t"}, {space, "o"}, {"e", "n"}, {space, "s"}, {"o", "r"}, {"i", "s"}, {space, "w"}, {"e", "s"},
      {newline, newline}, {"\"", ":"}, {"o", "p"}, {"op", "t"}, {"opt", "i"}, {"opti", "on"}, {"e", "y"}, {"k", "ey"}};
  nlohmann::ordered_json merge_list = nlohmann::ordered_json::array();
  int64_t next = 256;
  for (const auto& [a, b] : merges) {
    merge_list.push_back(a + " " + b);
    if (!vocab.contains(a + b)) vocab[a + b] = next++;
  }
  const int64_t eos = next++;
  *vocab_size = next;
  const nlohmann::ordered_json byte_level = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false},
                                             {"use_regex", true}};
  return {{"version", "1.0"},
          {"truncation", nullptr},
          {"padding", nullptr},
          {"added_tokens", {{{"id", eos}, {"content", "<|endoftext|>"}, {"single_word", false}, {"lstrip", false},
                             {"rstrip", false}, {"normalized", false}, {"special", true}}}},
          {"normalizer", nullptr},
          {"pre_tokenizer", byte_level},
          {"post_processor", nullptr},
          {"decoder", byte_level},
          {"model", {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"continuing_subword_prefix", nullptr},
                     {"end_of_word_suffix", nullptr}, {"fuse_unk", false}, {"byte_fallback", false},
                     {"ignore_merges", false}, {"vocab", vocab}, {"merges", merge_list}}}};
}

// The ten candidate-head tensors (docs/decisions.md), N(0, 0.2^2), norms near 1.
std::vector<std::pair<std::string, at::Tensor>> random_candidate_head(int64_t hidden, int64_t d, uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const auto normal = [&](std::vector<int64_t> shape) {
    return at::randn(shape, gen, at::TensorOptions().dtype(at::kFloat)) * 0.2;
  };
  return {{"candidate_norm.weight", 1 + normal({hidden})}, {"candidate_norm.bias", normal({hidden})},
          {"query_norm.weight", 1 + normal({hidden})},     {"query_norm.bias", normal({hidden})},
          {"key.weight", normal({d, hidden})},             {"query.weight", normal({d, hidden})},
          {"candidate_mlp.weight", normal({d, hidden})},   {"candidate_mlp.bias", normal({d})},
          {"query_mlp.weight", normal({d, hidden})},       {"scalar.weight", normal({1, d})}};
}

int64_t values_in(const std::vector<std::pair<std::string, at::Tensor>>& tensors) {
  int64_t n = 0;
  for (const auto& [name, t] : tensors) n += t.numel();
  return n;
}

}  // namespace

void write_random_decision2(uint64_t seed, size_t max_length, const fs::path& dir) {
  constexpr int64_t kHeadDim = 32;
  fs::remove_all(dir);
  fs::create_directories(dir);
  int64_t vocab = 0;
  write_json(dir / "tokenizer.json", byte_level_tokenizer(&vocab));
  write_json(dir / "tokenizer_config.json", {{"pad_token", "<|endoftext|>"}, {"eos_token", "<|endoftext|>"}});
  write_random_qwen3_backbone(vocab, seed, dir / "backbone");
  const nlohmann::json backbone = read_json_file(dir / "backbone/config.json");
  const auto head = random_candidate_head(backbone["hidden_size"].get<int64_t>(), kHeadDim, seed + 2);
  save_safetensors(dir / "decision_head.safetensors", head);
  write_json(dir / "decision_config.json",
             {{"prompt_version", "decision2-segmented-options-global-query-v1"},
              {"architecture", "qwen3-text-endpoints-global-query-shared-bilinear-mlp"}, {"backbone_model_type", "qwen3"},
              {"head_variant", "shared"}, {"head_dim", kHeadDim}, {"max_options", 255}, {"parameter_dtype", "float32"},
              {"head_compute_dtype", "float32"}, {"attention", "sdpa"}});
  std::ofstream(dir / "README.md") << "A Decision 2.0 package with random weights, for tests (semroute make-model --decision2).\n";
  const std::map<std::string, std::string> checkpoint = decision2_inventory(dir);
  const std::string identity = decision2_identity(checkpoint);
  write_json(dir / "calibration.json", {{"calibration_version", "decision2-per-type-temperature/1"},
                                        {"model_sha256", identity},
                                        {"inference", {{"max_length", max_length}}},
                                        {"temperature_by_type", {{"choice", 1.3}, {"noul", 0.9}, {"score", 1.1}}}});
  const nlohmann::ordered_json offsets = {{"3", {0.05, -0.02, 0.01}}, {"5", {0.04, 0.2, 0.08, -0.15, -0.17}}};
  write_json(dir / "score_bias.json",
             {{"format", "dev2-score-bias-v1"}, {"model_sha256", identity}, {"offsets", offsets}, {"fit", {{"source", "random"}}}});
  const std::string name = "Decision-2.0-Tiny-Qwen3";
  write_json(dir / "config.json", {{"decision_format", "vllm-sr-decision"}, {"format_version", 2},
                                   {"package_schema", "dev2-package/1"}, {"runtime_family", "decision2-qwen-full"},
                                   {"manifest", "MODEL_MANIFEST.json"}, {"model_name", name},
                                   {"max_input_tokens", max_length}});
  const std::map<std::string, std::string> files = decision2_inventory(dir);
  const int64_t backbone_values = values_in([&] {
    std::vector<std::pair<std::string, at::Tensor>> t;
    const Checkpoint c = Checkpoint::open(dir / "backbone");
    for (const std::string& n : c.names()) t.emplace_back(n, c.tensor(n));
    return t;
  }());
  write_json(dir / "MODEL_MANIFEST.json",
             {{"schema", "dev2-package-manifest/1"},
              {"profile", "qwen-full"},
              {"kind", "random"},
              {"model_name", name},
              {"max_input_tokens", max_length},
              {"files_sha256", files},
              {"identity", {{"model_sha256", identity}}},
              {"parameters", {{"packaged_files", {{"head", {"decision_head.safetensors"}}, {"residual", nlohmann::json::array()},
                                                  {"backbone", {"backbone/model.safetensors"}}}},
                              {"packaged", {{"head", values_in(head)}, {"residual", 0}, {"backbone", backbone_values}}},
                              {"loaded", values_in(head) + backbone_values}}},
              {"licence", {{"spdx", "apache-2.0"}}},
              {"calibration", {{"file", "calibration.json"}}},
              {"score_bias", {{"file", "score_bias.json"}, {"sha256", files.at("score_bias.json")}, {"offsets", offsets}}}});
}

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
