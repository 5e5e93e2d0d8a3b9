// Vela 2.0 0.3B, the vLLM Semantic Router's default decision model
// (docs/decisions.md): one ModernBERT encoder reads every question of a
// request and the state it asks about as one marker sequence,
//   <bos> ([Q] question ([O] option)* [ABS]?)* [SEP_SCHEMA] ([SEG_role] part)* <eos>
// with the markers inserted by ID (the tokenizer is loaded without them, so
// no text can produce one), and a marker head reads each option at its [O]
// (and [ABS]) against its question's [Q] and the mean of the parts the
// question reads:
//   logit = cos(W_o LN(h[O]) + W_q LN(h[Q]), W_p LN(mean h[pool])) / tau
//           (+ MLP(h[O]) for the mlp and both readouts).
// A Span question adds only its labels, each as [E] label, before
// [SEP_SCHEMA] (one span per sequence: the first shares the sequence of the
// other questions, each further one reads a sequence of its own), and the
// head scores each word of the part it reads (at the word's first token)
// against each label:
//   logit = cos(W_t LN(h[word]) + b_t, W_e LN(h[E]) + b_e) / tau_span.
// Answers follow the package's calibration.json: Choice and Score are a
// softmax over the options at the type's temperature, Noul is P(yes) of a
// two-option Choice, Set labels and span words are sigmoids against a
// threshold (a span's by the PII length rule, sparse gate and presets of
// the calibration); labelled words are joined into spans as the packages
// join them (vela2_words.h). Immutable after load; decide() may be called
// from many threads at once.
#pragma once

#include <ATen/core/Tensor.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/core_model.h"
#include "runtime/decision_model.h"
#include "tokenizers/tokenizer.h"

namespace semroute {

// The eight markers of a Vela 2.0 sequence, in config.json's marker_ids order.
inline const std::vector<std::string> kVela2Markers = {"[Q]",        "[O]",          "[ABS]", "[SEP_SCHEMA]",
                                                       "[SEG_user]", "[SEG_answer]", "[E]",   "[SEG_context]"};

// What a question may list: Choice 2..255 options (Set and Span 1..255 labels), Score 2..10 levels.
inline constexpr size_t kMinOptions = 2, kMaxOptions = 255, kMinLevels = 2, kMaxLevels = 10;

// DecisionJson of a request's text, nesting bounded; InvalidInput when it is
// not a JSON object.
DecisionJson parse_decision_request(std::string_view text);

// A System One state (a string, or an object of typed parts) as parts in
// user, context, answer order: keys request/user/prompt are the user part,
// answer/response the answer part, every other key context; a part fed by
// several keys, or by an unknown one, is "key:\n<value>" blocks joined by a
// blank line. InvalidInput for an empty state or part.
std::vector<StatePart> decision_state(const DecisionJson& state);

// One question of a request ({type, instructions, criteria | choices |
// levels | labels, over, threshold, overflow, require_full_input, head} or
// {preset, type, over, threshold, overflow} naming one of `presets`);
// InvalidInput (the question's invalid_question) naming what is wrong.
DecisionQuestion decision_question(const std::string& id, const DecisionJson& question,
                                   const std::vector<StatePart>& state, const DecisionJson& presets = {});

// One state's questions, validated: the state's parts, every question ID as
// asked, the questions that validate (in that order) and each other one's
// answer ({"type", "error": "invalid_question", "message"}).
struct DecisionPlan {
  DecisionJson state;  // as given
  std::vector<StatePart> parts;
  std::vector<std::string> ids;
  std::vector<DecisionQuestion> questions;
  std::map<std::string, DecisionJson> invalid;
};
// `model` (when given) checks each question by its family's rules first and
// lends its presets. InvalidInput (the request's error) for a state that
// gives no part, or questions that are not a non-empty object of non-blank IDs.
DecisionPlan plan_decision(const DecisionJson& state, const DecisionJson& questions, const DecisionModel* model = nullptr);
// The answers of `plan`'s questions, in order (decide_all of one case).
std::vector<DecisionAnswer> decide_plan(const DecisionModel& model, const DecisionPlan& plan,
                                        size_t* input_tokens = nullptr, const DecideOptions& options = {});
// Every question of `plan` answered `error` (deadline_exceeded, unavailable).
std::vector<DecisionAnswer> failed_answers(const DecisionPlan& plan, ItemError error);
// {"answers", "spans", "sets", "thresholds"} (the last three only with Span
// or Set questions): every question's answer in the order asked, a Set's as
// <id>.<label> Noul answers, a Span's as a Noul answer (its top word
// probability) and its spans; `answers` are plan.questions' in order.
DecisionJson decision_answers(const DecisionPlan& plan, const std::vector<DecisionAnswer>& answers);

// Whether `dir` holds a Vela 2.0 package (config.json's model_type is
// vela2-unified).
bool is_vela2_package(const std::filesystem::path& dir);

class Vela2Model final : public DecisionModel {
 public:
  // LoadError for a config that is not a Vela 2.0 0.3B package's (format 1,
  // model_type vela2-unified, the eight marker_ids), a head tensor missing
  // or mis-shaped, or a calibration without temperatures.
  static std::shared_ptr<const Vela2Model> load(const std::filesystem::path& dir, const LoadOptions& options = {});
  ~Vela2Model() override;

  const char* family() const override { return "vela2"; }
  std::vector<std::string> question_types() const override { return {"choice", "noul", "score", "set", "span"}; }
  // The questions the package defines (calibration.json's pii, halu and
  // relevance schemas, those it has), by name, as questions.
  const DecisionJson& presets() const override { return presets_; }
  nlohmann::json limits() const override;
  bool has_scan_budget() const override { return true; }
  void check_question(const std::string&, const DecisionJson&) const override {}

  // The answers of `questions` about `parts`, in order. The questions are
  // read in rows (the non-span questions with the first span; each further
  // span alone), each row one sequence with the whole state, fitted to
  // max_length (the part no question reads shrinks first, to 64 tokens then
  // to 1, then the read parts in state order; questions that alone do not
  // fit answer max_length_exceeded). When a read part had to be cut — the
  // span's part, or the one part every question of the row reads — it is
  // read in windows of what was kept (overlap min(window_overlap, kept /
  // 4)): Choice, Noul and Score logits averaged over the windows, Set logits
  // their maximum, a word's logits averaged over the windows holding it; an
  // overflow: truncate question reads the first window only. `input_tokens`
  // (when given) receives the tokens of every sequence read.
  std::vector<DecisionAnswer> decide(const std::vector<StatePart>& parts, const std::vector<DecisionQuestion>& questions,
                                     size_t* input_tokens = nullptr, const DecideOptions& options = {}) const;
  // Several states' questions at once (a request's `states`): every case's
  // sequences share padded forwards (by length, at most 32 rows and 16,384
  // padded tokens each), each case answered as decide() answers it alone.
  // `on_lane`, when given, runs the forwards (the caller's compute lane and
  // deadline); tokenizing and reading the answers stay on the calling thread.
  std::vector<std::vector<DecisionAnswer>> decide_all(
      const std::vector<DecisionCase>& cases, std::vector<size_t>* input_tokens = nullptr,
      const DecideOptions& options = {},
      const std::function<void(const std::function<void()>&)>& on_lane = nullptr) const override;

  size_t max_length() const { return max_length_; }
  // The scan budget (the card's limits.max_scan_tokens) and what a truncate
  // question reads (limits.truncate_tokens): four inputs and one on a CPU.
  size_t max_scan_tokens() const { return 4 * max_length_; }
  size_t truncate_tokens() const { return max_length_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }

 private:
  struct Head;
  struct Placed;
  struct Compiled;
  struct EncodedPart;
  struct Sequence;
  struct Row;
  struct CasePlan;
  Vela2Model() = default;
  EncodedPart encode_part(const std::string& text, size_t cap, bool with_words) const;
  CasePlan plan_case(const std::vector<StatePart>& parts, const std::vector<DecisionQuestion>& questions,
                     const DecideOptions& options) const;
  Row plan_row(CasePlan& plan, const std::vector<StatePart>& parts, const std::vector<DecisionQuestion>& questions,
               const std::vector<Compiled>& all, const std::vector<size_t>& indices, size_t scan) const;
  Sequence assemble(const std::vector<const Compiled*>& compiled, const std::vector<PartRole>& roles,
                    const std::vector<std::vector<int64_t>>& parts, const std::vector<size_t>& kept,
                    const std::vector<size_t>& begins, const std::vector<EncodedPart>& encoded) const;
  // Each sequence's logits per question (a span's: its words by its labels), from batched forwards.
  std::vector<std::vector<std::vector<float>>> read_all(const std::vector<const Sequence*>& sequences) const;
  std::vector<DecisionAnswer> finish_case(const CasePlan& plan, const std::vector<DecisionQuestion>& questions,
                                          const std::vector<std::vector<std::vector<float>>>& logits) const;
  std::vector<float> option_logits(const at::Tensor& hidden, const Placed& placed) const;
  std::vector<float> word_logits(const at::Tensor& hidden, const Placed& placed) const;
  DecisionAnswer answer(const DecisionQuestion& question, const std::vector<float>& logits) const;
  DecisionAnswer answer_span(const DecisionQuestion& question, const EncodedPart& part, const Row& row, size_t j,
                             const std::vector<std::vector<std::vector<float>>>& logits, size_t first,
                             size_t reads) const;

  std::shared_ptr<const CoreModel> encoder_;
  std::shared_ptr<const Tokenizer> tokenizer_;
  std::unique_ptr<const Head> head_;
  std::vector<int64_t> markers_;  // [Q] [O] [ABS] [SEP_SCHEMA] [SEG_user] [SEG_answer] [E] [SEG_context]
  int64_t bos_ = 0, eos_ = 0, pad_ = 0;
  size_t max_length_ = 0, window_overlap_ = 64;
  std::string readout_;
  DecisionJson calibration_;
  DecisionJson presets_;
};

}  // namespace semroute
