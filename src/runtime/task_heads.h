// A task model served under the model runtime's contract (docs/runtime.md):
// its head (sequence: a softmax over labels; scores: a sigmoid per label;
// token: BIO spans) run over texts or text pairs with the contract's input
// rules, each item answered or failed on its own.
//
// Inputs: each text is tokenized once without special tokens and only as far
// as its budget needs (a 5 MiB text under a 512-token budget reads ~513
// tokens), then framed with the tokenizer's special tokens:
//   reject    more than `max_tokens` (special tokens included): max_length_exceeded;
//   truncate  the first content tokens that fit (truncated: true);
//   window    windows of `window.tokens` sharing `window.overlap` content tokens,
//             the last ending at the content's end; a document of more than
//             `max_tokens` (its scan budget) is not read at all: scan_budget_exceeded.
// Sequence and scores heads take each label's maximum over the windows (every
// window listed); a token head labels each content token from the window
// that gives it the most context on its shorter side (the earlier on a tie),
// then decodes spans once over the document.
//
// Forwards: the windows of every item (and, with batching, of concurrent
// requests) run as packed batches on the compute lane; identical windows are
// computed once. Immutable after load; classify() may be called from many
// threads at once.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/forwards.h"
#include "runtime/item_results.h"
#include "runtime/request_control.h"
#include "tasks/batcher.h"
#include "tasks/task_model.h"

namespace semroute {

class SequenceClassifier;
class TokenClassifier;

enum class HeadKind { kSequence, kScores, kToken };
const char* head_kind_name(HeadKind kind);

struct HeadWindow {
  size_t tokens = 0;   // special tokens included
  size_t overlap = 0;  // content tokens
};

// A scores head's packaged operating point (operating_point.json, score_type
// "independent_sigmoid"): a threshold per label, and the windows and
// document budget it was calibrated under, which become the head's defaults.
struct OperatingPoint {
  std::vector<double> thresholds;
  bool strictly_greater = false;  // "score > threshold"; else "score >= threshold"
  size_t document_tokens = 0;     // the default max_tokens (0: the model's limit)
  std::string sha256;             // of the file
};

// A grounded head's policy (operating_point.json with "input_pair"): the
// model reads (prompt, answer) with the prompt made from a template of
// {question} and {context}; a span is a run of answer tokens whose positive
// label passes the threshold.
struct GroundingPolicy {
  std::string prompt_template;
  double threshold = 0.5;
  bool strictly_greater = true;
  size_t max_input_tokens = 0;
  size_t positive = 1;  // the label that is not "supported"
};

// What a head is (the contract's HeadCard).
struct HeadInfo {
  std::string name;
  HeadKind kind = HeadKind::kSequence;
  std::vector<std::string> labels;
  std::vector<std::string> inputs;  // "text", "pair" or "grounded"
  OverflowPolicy overflow = OverflowPolicy::kReject;
  std::optional<HeadWindow> window;
  std::optional<double> default_threshold;  // token heads: spans below it are dropped
  std::string reduction;                    // "max" (sequence, scores), "span_union" (token), "" (grounded)
  std::optional<OperatingPoint> operating_point;
  std::optional<GroundingPolicy> grounding;
};

// One item: a text, a pair read with the tokenizer's pair template, or an
// answer to check against its context and question (grounded heads).
struct ClassifyItem {
  enum class Form { kText, kPair, kGrounded };
  Form form = Form::kText;
  std::string_view text;       // kText, kPair
  std::string_view text_pair;  // kPair
  std::string_view context, question, answer;  // kGrounded
};

// The per-request options; unset fields take the head's.
struct ClassifyRequest {
  std::optional<OverflowPolicy> overflow;
  size_t max_tokens = 0;  // 0: the model's limit
  std::optional<HeadWindow> window;
  std::optional<double> threshold;
  bool return_tokens = false;
};

struct LabelledSpan {
  std::string label;
  size_t start = 0, end = 0;  // code points into the item's text, end exclusive
  std::string text;
  double probability = 0;
};

struct TokenProbabilities {
  size_t start = 0, end = 0;  // code points
  std::vector<float> probabilities;
};

struct WindowResult {
  size_t start = 0, end = 0;  // content tokens, end exclusive
  std::vector<float> values;  // probabilities (sequence) or scores (scores); empty for token heads
};

struct ClassifyAnswer {
  ItemError error = ItemError::kNone;
  std::string label;                 // sequence
  std::vector<float> probabilities;  // sequence
  std::vector<float> scores;         // scores
  std::vector<std::string> selected;  // scores with an operating point: the labels that pass
  std::vector<LabelledSpan> spans;   // token
  std::vector<TokenProbabilities> tokens;  // token, with return_tokens
  std::vector<WindowResult> windows;       // windowed inputs
  InputFacts input;
};

struct TaskHeadsOptions {
  TaskOptions task;
  BatchingOptions batching{16, 0};  // max_batch <= 1: each request's forwards run alone
};

class TaskHeads {
 public:
  // A *ForSequenceClassification or *ForTokenClassification directory
  // (config.json's architectures; `kind` overrides it), with its
  // operating_point.json if it has one (a scores head's thresholds and
  // windows, or a token head's grounding policy). LoadError for an operating
  // point on a softmax head, or one whose labels differ from the head's.
  static std::shared_ptr<const TaskHeads> load(const std::filesystem::path& dir, std::optional<TaskKind> kind,
                                               const TaskHeadsOptions& options);
  ~TaskHeads();

  const HeadInfo& head() const { return head_; }
  // The longest input the model reads at once, special tokens included.
  size_t max_input_tokens() const { return max_input_tokens_; }

  // InvalidInput (the request's fault, answered as a whole) for options the
  // head cannot take: max_tokens over the limit, a window without tokens or
  // wider than max_tokens, an overlap not smaller than a window's content.
  // Items failing on their own carry their ItemError. `control` is checked
  // before each forward: items not started by the deadline answer
  // deadline_exceeded; a cancelled request throws RequestCancelled.
  std::vector<ClassifyAnswer> classify(const std::vector<ClassifyItem>& items, const ClassifyRequest& request,
                                       const RequestControl& control) const;

  // The classifiers behind it (one is null), for surfaces outside the contract.
  const std::shared_ptr<const SequenceClassifier>& sequence() const { return sequence_; }
  const std::shared_ptr<const TokenClassifier>& token() const { return token_; }
  const TaskModel& task() const;

 private:
  TaskHeads() = default;
  struct Plan;
  // Logits of each encoding (sequence: [labels]; token: [tokens, labels]), float32 on CPU.
  std::vector<at::Tensor> forward(const std::vector<const Encoding*>& encodings) const;
  Plan plan(const ClassifyItem& item, const ClassifyRequest& request) const;
  Plan plan_grounded(const ClassifyItem& item, size_t budget, OverflowPolicy policy) const;
  void answer_grounded(const ClassifyItem& item, const Plan& plan, const at::Tensor& logits,
                       const ClassifyRequest& request, ClassifyAnswer& a) const;
  ClassifyAnswer answer(const ClassifyItem& item, const Plan& plan, const std::vector<at::Tensor>& logits,
                        const ClassifyRequest& request) const;

  std::shared_ptr<const SequenceClassifier> sequence_;
  std::shared_ptr<const TokenClassifier> token_;
  HeadInfo head_;
  size_t max_input_tokens_ = 0;
  size_t default_tokens_ = 0;  // a request's max_tokens when it names none
  std::unique_ptr<EncodingBatcher> batcher_;
};

}  // namespace semroute
