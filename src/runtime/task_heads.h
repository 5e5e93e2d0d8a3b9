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
// Heads: a task package is one head ("default"); heads bound to one backbone
// (load_bound) are one model whose forward runs the encoder once and every
// head over it, so asking three heads about one text costs one forward.
//
// Forwards: the windows of every item (and, with batching, of concurrent
// requests, whichever head they ask) run as packed batches on the compute
// lane; identical windows are computed once. Immutable after load;
// classify() may be called from many threads at once.
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

// A head bound to a backbone: the task checkpoint its head comes from.
struct HeadSource {
  std::string name;
  std::filesystem::path dir;
  std::optional<TaskKind> kind;  // unset: from its config.json
};

// Heads one backbone may carry: each adds its logits to every forward.
inline constexpr size_t kMaxBoundHeads = 64;

// One head's items and options, in a call that asks several (classify_each).
struct HeadCall {
  size_t head = 0;
  const std::vector<ClassifyItem>* items = nullptr;
  ClassifyRequest request;
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
  // The heads of `heads` (each a task checkpoint with its operating point,
  // as load() reads one) bound to the encoder and tokenizer of `backbone`:
  // one model, the first head its primary. LoadError for no heads, more than
  // kMaxBoundHeads, a name given twice, or a head the encoder cannot carry.
  static std::shared_ptr<const TaskHeads> load_bound(const std::filesystem::path& backbone,
                                                     const std::vector<HeadSource>& heads,
                                                     const TaskHeadsOptions& options);
  ~TaskHeads();

  // The primary head, and every head.
  const HeadInfo& head() const { return heads_.front().info; }
  std::vector<const HeadInfo*> heads() const;
  std::optional<size_t> head_index(std::string_view name) const;
  // The longest input the primary head reads at once, special tokens included.
  size_t max_input_tokens() const { return heads_.front().max_input_tokens; }

  // InvalidInput (the request's fault, answered as a whole) for options the
  // head cannot take: max_tokens over the limit, a window without tokens or
  // wider than max_tokens, an overlap not smaller than a window's content.
  // Items failing on their own carry their ItemError. `control` is checked
  // before each forward: items not started by the deadline answer
  // deadline_exceeded; a cancelled request throws RequestCancelled.
  std::vector<ClassifyAnswer> classify(const std::vector<ClassifyItem>& items, const ClassifyRequest& request,
                                       const RequestControl& control, size_t head = 0) const;
  // What classify() checks of the options first: InvalidInput as above.
  void check(size_t head, const ClassifyRequest& request) const;
  // Several heads' calls (a bundle's tasks) in one packed forward: answers
  // per call, in order. InvalidInput for the first call whose options its
  // head cannot take.
  std::vector<std::vector<ClassifyAnswer>> classify_each(const std::vector<HeadCall>& calls,
                                                         const RequestControl& control) const;

  // The primary head's classifier (one is null), for surfaces outside the contract.
  const std::shared_ptr<const SequenceClassifier>& sequence() const { return heads_.front().sequence; }
  const std::shared_ptr<const TokenClassifier>& token() const { return heads_.front().token; }
  const TaskModel& task() const { return heads_.front().task(); }

 private:
  struct Head {
    HeadInfo info;
    std::shared_ptr<const SequenceClassifier> sequence;
    std::shared_ptr<const TokenClassifier> token;
    size_t max_input_tokens = 0;
    size_t default_tokens = 0;  // a request's max_tokens when it names none
    const TaskModel& task() const;
    // Its logits' length in an encoding's answer of `tokens` tokens.
    int64_t logits_size(int64_t tokens) const;
  };
  struct Plan;
  TaskHeads() = default;
  static Head load_head(const std::filesystem::path& dir, std::shared_ptr<const SequenceClassifier> sequence,
                        std::shared_ptr<const TokenClassifier> token);
  void start_batching(const BatchingOptions& batching);
  // Each encoding's logits of every head, one after another, flat, float32 on the CPU.
  std::vector<at::Tensor> forward(const std::vector<const Encoding*>& encodings) const;
  // Head h's logits in an encoding's answer (sequence: [labels]; token: [tokens, labels]).
  at::Tensor logits_of(const at::Tensor& answer, const Encoding& encoding, size_t h) const;
  Plan plan(const Head& head, const ClassifyItem& item, const ClassifyRequest& request) const;
  Plan plan_grounded(const Head& head, const ClassifyItem& item, size_t budget, OverflowPolicy policy) const;
  void answer_grounded(const Head& head, const ClassifyItem& item, const Plan& plan, const at::Tensor& logits,
                       const ClassifyRequest& request, ClassifyAnswer& a) const;
  ClassifyAnswer answer(const Head& head, const ClassifyItem& item, const Plan& plan,
                        const std::vector<at::Tensor>& logits, const ClassifyRequest& request) const;

  std::vector<Head> heads_;
  std::unique_ptr<EncodingBatcher> batcher_;
};

}  // namespace semroute
