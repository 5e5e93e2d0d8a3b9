// Decision 2.0 (Kai-0.6B: a dense Qwen3 backbone under a candidate head),
// docs/decisions.md. Each question is one prompt, rendered as the packages
// render it and tokenized segment by segment:
//   "Context:\n" state "\n\nTask type: " type "\nQuestion:\n" instructions "\nOptions:"
//   ("\n<option>\n" {"description":…,"key":…} "\n</option>")*
//   "\n\nSelect the single option best supported by the context and instructions.\nDecision:"
// (text as given, anything else as canonical JSON). The backbone reads it
// causally; the head scores each option at its segment's last token
// against the prompt's last token:
//   logit = (K LN_c(h_o)) · (Q LN_q(h_q)) / sqrt(d) + w · GELU(M_c LN_c(h_o) + b_c + M_q LN_q(h_q)).
// Answers are a softmax at the type's calibrated temperature (a Score's
// logits first shifted by the package's score bias for its level count);
// confidence is 1 - entropy / ln(options).
//
// The package is verified before anything reads it: its pointer
// config.json, MODEL_MANIFEST.json (every file's SHA-256, nothing more or
// less, the identity over the checkpoint files, tensor counts), the
// decision_config.json contract, the calibration and score bias bound to
// that identity.
#pragma once

#include <filesystem>
#include <map>
#include <memory>

#include "models/core_model.h"
#include "runtime/decision_model.h"
#include "runtime/package.h"
#include "tokenizers/tokenizer.h"

namespace semroute {

// Whether `dir` holds a Decision 2.0 package (its config.json is the
// vllm-sr-decision pointer, format 2).
bool is_decision2_package(const std::filesystem::path& dir);

// The prompt of one question, as segments: the prefix (state, type,
// instructions), each option's, and the suffix.
struct Decision2Prompt {
  std::string prefix;
  std::vector<std::string> options;
  std::string suffix;
};
Decision2Prompt decision2_prompt(const DecisionJson& state, const DecisionQuestion& question);

// A question's answer from its option logits: a Score's shifted by
// `score_bias` (its level count's offsets, when the package has them), then a
// softmax at `temperature`; invalid_model_output for a non-finite logit.
DecisionAnswer decision2_answer(const DecisionQuestion& question, std::vector<double> logits, double temperature,
                                const std::vector<double>* score_bias = nullptr);

// Every file of a Decision 2.0 package by its relative POSIX path, with its
// SHA-256, as the packages inventory themselves (the manifest included; a
// link refused); and the checkpoint identity over them: the SHA-256 of the
// canonical JSON of the decision, head and tokenizer files' digests and the
// backbone's (InvalidInput without backbone weights).
std::map<std::string, std::string> decision2_inventory(const std::filesystem::path& dir);
std::string decision2_identity(const std::map<std::string, std::string>& files);

// A Vela 2.0 or Decision 2.0 package (nullptr when `dir` is neither).
std::shared_ptr<const DecisionModel> load_decision_model(const std::filesystem::path& dir, const LoadOptions& options = {});

class Decision2Model final : public DecisionModel {
 public:
  // LoadError (kInvalidModel) naming what fails the package's checks.
  static std::shared_ptr<const Decision2Model> load(const std::filesystem::path& dir, const LoadOptions& options = {});
  ~Decision2Model() override;

  const char* family() const override { return "decision2"; }
  std::vector<std::string> question_types() const override { return {"choice", "noul", "score"}; }
  const DecisionJson& presets() const override { return presets_; }
  nlohmann::json limits() const override;
  bool has_scan_budget() const override { return false; }
  void check_question(const std::string& id, const DecisionJson& question) const override;
  std::vector<std::vector<DecisionAnswer>> decide_all(
      const std::vector<DecisionCase>& cases, std::vector<size_t>* input_tokens = nullptr,
      const DecideOptions& options = {},
      const std::function<void(const std::function<void()>&)>& on_lane = nullptr) const override;

  // The manifest's model name, the identity and the files it covers.
  const std::string& model_name() const { return model_name_; }
  const PackageIdentity& identity() const { return identity_; }
  size_t max_length() const { return max_length_; }

 private:
  DecisionAnswer answer(const DecisionQuestion& question, const std::vector<double>& logits) const;
  struct Head;
  struct Row;
  Decision2Model() = default;
  std::vector<float> option_logits(const at::Tensor& hidden, const Row& row) const;

  std::shared_ptr<const CoreModel> backbone_;
  std::shared_ptr<const Tokenizer> tokenizer_;
  std::unique_ptr<const Head> head_;
  int64_t pad_ = 0;
  size_t max_length_ = 0;
  std::map<std::string, double> temperature_;          // choice, noul, score
  std::map<size_t, std::vector<double>> score_bias_;   // by level count
  std::string model_name_;
  PackageIdentity identity_;
  DecisionJson presets_ = DecisionJson::object();
};

}  // namespace semroute
