#include "runtime/task_heads.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/model_config.h"
#include "semroute/error.h"
#include "tasks/entity_spans.h"
#include "tasks/sequence_classifier.h"
#include "tasks/task_head.h"
#include "tasks/token_classifier.h"

namespace semroute {
namespace {

// Encodings per turn on the compute lane: a request with many items or
// windows yields the lane between pieces, and its deadline is checked there.
constexpr size_t kEncodingsPerPiece = 32;

std::optional<TaskKind> kind_of_model(const std::filesystem::path& dir) {
  for (const auto& a : read_model_config(dir).get_strings("architectures"))
    if (const auto kind = task_kind_of(a)) return kind;
  return std::nullopt;
}

bool all_finite(const at::Tensor& t) { return at::isfinite(t).all().item<bool>(); }

std::vector<float> to_vector(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

}  // namespace

const char* head_kind_name(HeadKind kind) {
  switch (kind) {
    case HeadKind::kSequence: return "sequence";
    case HeadKind::kScores: return "scores";
    case HeadKind::kToken: return "token";
  }
  return "sequence";
}

// One item made ready for its forwards: the framed encodings the model reads
// and, for texts, the content tokens they were cut from.
struct TaskHeads::Plan {
  ItemError error = ItemError::kNone;
  bool windowed = false;
  Encoding content;                // text tokens without special tokens (texts only)
  std::vector<TokenRange> ranges;  // each window's content tokens
  std::vector<Encoding> encodings;  // as the model reads them
  InputFacts input;
};

std::shared_ptr<const TaskHeads> TaskHeads::load(const std::filesystem::path& dir, std::optional<TaskKind> kind,
                                                 const TaskHeadsOptions& options) {
  if (!kind) kind = kind_of_model(dir);
  if (!kind)
    throw LoadError(dir.string() + ": config.json names no *ForSequenceClassification or *ForTokenClassification",
                    ErrorCode::kInvalidModel);
  std::shared_ptr<TaskHeads> heads(new TaskHeads());
  HeadInfo& head = heads->head_;
  head.name = "default";
  if (*kind == TaskKind::kToken) {
    heads->token_ = TokenClassifier::load(dir, options.task);
    head.kind = HeadKind::kToken;
    head.inputs = {"text"};
    head.reduction = "span_union";
  } else {
    heads->sequence_ = SequenceClassifier::load(dir, options.task);
    head.kind = heads->sequence_->scoring() == Scoring::kSigmoid ? HeadKind::kScores : HeadKind::kSequence;
    head.inputs = {"text", "pair"};
    head.reduction = "max";
  }
  head.labels = heads->task().labels;
  heads->max_input_tokens_ = heads->task().encode.max_length;
  if (options.batching.enabled()) {
    const TaskHeads* self = heads.get();
    heads->batcher_ = std::make_unique<Batcher<at::Tensor, const Encoding*>>(
        [self](const std::vector<const Encoding*>& encodings) { return self->forward(encodings); }, options.batching);
  }
  return heads;
}

TaskHeads::~TaskHeads() = default;

const TaskModel& TaskHeads::task() const { return sequence_ ? sequence_->task() : token_->task(); }

std::vector<at::Tensor> TaskHeads::forward(const std::vector<const Encoding*>& encodings) const {
  // Identical encodings (the same text twice, in one request or in concurrent
  // ones batched together) are computed once.
  std::map<std::vector<int32_t>, size_t> first_of;
  std::vector<size_t> unique_of(encodings.size());
  std::vector<const Encoding*> unique;
  for (size_t i = 0; i < encodings.size(); ++i) {
    const auto [it, inserted] = first_of.emplace(encodings[i]->ids, unique.size());
    if (inserted) unique.push_back(encodings[i]);
    unique_of[i] = it->second;
  }
  const TaskModel& t = task();
  std::vector<at::Tensor> rows;
  size_t begin = 0;
  while (begin < unique.size()) {
    size_t end = begin, longest = 0;
    while (end < unique.size()) {
      const size_t next_longest = std::max(longest, unique[end]->size());
      if (end > begin && static_cast<int64_t>((end - begin + 1) * next_longest) > kBatchTokenBudget) break;
      longest = next_longest;
      ++end;
    }
    std::vector<Encoding> chunk;
    for (size_t i = begin; i < end; ++i) chunk.push_back(*unique[i]);
    const TextBatch batch = batch_from_encodings(std::move(chunk), *t.tokenizer, t.encoder->device());
    const at::Tensor logits =
        (sequence_ ? sequence_->logits(batch.inputs) : token_->logits(batch.inputs)).to(at::kFloat).cpu();
    for (size_t b = 0; b < batch.encodings.size(); ++b) {
      at::Tensor row = logits[static_cast<int64_t>(b)];
      if (token_) row = row.narrow(0, 0, static_cast<int64_t>(batch.encodings[b].size()));
      rows.push_back(row.clone());
    }
    begin = end;
  }
  std::vector<at::Tensor> out;
  out.reserve(encodings.size());
  for (size_t i = 0; i < encodings.size(); ++i) out.push_back(rows[unique_of[i]]);
  return out;
}

// The logits of `encodings`, a piece at a time (each its own turn on the
// lane, batched with concurrent requests where a batcher is on); stops at the
// first piece the deadline did not let start: the answer is shorter then.
std::vector<at::Tensor> TaskHeads::forward_pieces(const std::vector<const Encoding*>& encodings,
                                                  const RequestControl& control) const {
  std::vector<at::Tensor> out;
  for (size_t begin = 0; begin < encodings.size(); begin += kEncodingsPerPiece) {
    const std::vector<const Encoding*> piece(
        encodings.begin() + static_cast<std::ptrdiff_t>(begin),
        encodings.begin() + static_cast<std::ptrdiff_t>(std::min(encodings.size(), begin + kEncodingsPerPiece)));
    std::vector<at::Tensor> logits;
    try {
      control.check();
      if (batcher_) {
        Batcher<at::Tensor, const Encoding*>::Timing timing;
        logits = (*batcher_)(piece, control.deadline(), &timing);
        control.add_time(&WorkTimes::queue, timing.queued);
        control.add_time(&WorkTimes::forward, timing.computed);
      } else {
        logits = control.on_lane([&] { return forward(piece); });
      }
    } catch (const DeadlinePassed&) {
      return out;
    }
    for (auto& l : logits) out.push_back(std::move(l));
  }
  return out;
}

TaskHeads::Plan TaskHeads::plan(const ClassifyItem& item, const ClassifyRequest& request) const {
  const TaskModel& t = task();
  const Tokenizer& tokenizer = *t.tokenizer;
  const size_t budget = request.max_tokens > 0 ? request.max_tokens : max_input_tokens_;
  const OverflowPolicy policy = request.overflow.value_or(head_.overflow);
  Plan p;
  if (item.pair) {  // pairs read whole or cut, never in windows
    if (token_ || policy == OverflowPolicy::kWindow) {
      p.error = ItemError::kInvalidInput;
      return p;
    }
    EncodeOptions options;
    options.max_length = budget;
    Encoding e = tokenizer.encode_pair(item.text, item.text_pair, options);
    p.input.tokens = std::max(e.input_tokens, e.size() + (e.truncated ? 1 : 0));
    p.input.tokens_lower_bound = e.truncated && e.input_tokens == 0;
    if (e.truncated && policy == OverflowPolicy::kReject) {
      p.error = ItemError::kMaxLengthExceeded;
      return p;
    }
    p.input.truncated = e.truncated;
    p.input.processed_tokens = e.size();
    p.encodings.push_back(std::move(e));
    return p;
  }
  const size_t specials = tokenizer.special_tokens();
  const size_t content_budget = budget - specials;  // classify() checked budget > specials
  EncodeOptions bounded;  // read one token past the budget: enough to know it is over
  bounded.add_special_tokens = false;
  bounded.max_length = content_budget + 1;
  p.content = tokenizer.encode(item.text, bounded);
  const size_t read = p.content.size();
  const bool over = read > content_budget;
  p.input.tokens = read + specials;
  p.input.tokens_lower_bound = p.content.truncated;
  if (over && policy == OverflowPolicy::kReject) {
    p.error = ItemError::kMaxLengthExceeded;
    return p;
  }
  if (policy == OverflowPolicy::kWindow) {
    if (over) {
      p.error = ItemError::kScanBudgetExceeded;
      return p;
    }
    const HeadWindow w = request.window.value_or(head_.window.value_or(HeadWindow{}));
    p.windowed = true;
    p.ranges = plan_windows(read, specials, w.tokens, w.overlap);
    p.input.windows = p.ranges.size();
  } else {
    if (over) {
      p.content.truncate(content_budget, Keep::kStart);
      p.input.truncated = true;
    }
    p.ranges = {TokenRange{0, p.content.size()}};
  }
  p.input.processed_tokens = p.content.size() + specials;
  for (const TokenRange& r : p.ranges) p.encodings.push_back(tokenizer.with_special_tokens(slice(p.content, r)));
  return p;
}

ClassifyAnswer TaskHeads::answer(const ClassifyItem& item, const Plan& plan, const std::vector<at::Tensor>& logits,
                                 const ClassifyRequest& request) const {
  ClassifyAnswer a;
  a.input = plan.input;
  for (const at::Tensor& l : logits) {
    if (!all_finite(l)) {
      a.error = ItemError::kInvalidModelOutput;
      return a;
    }
  }
  const auto& labels = head_.labels;
  if (!token_) {
    at::Tensor best;
    for (size_t w = 0; w < logits.size(); ++w) {
      const at::Tensor scores = head_.kind == HeadKind::kScores ? at::sigmoid(logits[w]) : at::softmax(logits[w], -1);
      best = w == 0 ? scores : at::maximum(best, scores);
      if (plan.windowed) a.windows.push_back({plan.ranges[w].begin, plan.ranges[w].end, to_vector(scores)});
    }
    if (head_.kind == HeadKind::kScores) {
      a.scores = to_vector(best);
    } else {
      a.probabilities = to_vector(best);
      const auto top = std::max_element(a.probabilities.begin(), a.probabilities.end());  // the first on ties
      a.label = labels.at(static_cast<size_t>(top - a.probabilities.begin()));
    }
    return a;
  }
  // Token head: each content token from the window where it has the most context.
  const size_t n = plan.content.size();
  const size_t num_labels = labels.size();
  std::vector<TokenLabel> chosen(n, TokenLabel{0, 0});
  std::vector<std::vector<float>> rows(request.return_tokens ? n : 0);
  std::vector<int64_t> context(n, -1);
  for (size_t w = 0; w < logits.size(); ++w) {
    const at::Tensor probs = at::softmax(logits[w], -1).contiguous();
    const float* p = probs.data_ptr<float>();
    const Encoding& e = plan.encodings[w];
    const TokenRange r = plan.ranges[w];
    const auto width = static_cast<int64_t>(r.end - r.begin);
    int64_t k = 0;
    for (size_t i = 0; i < e.size(); ++i) {
      if (e.special_tokens_mask[i] || !e.attention_mask[i]) continue;
      const int64_t margin = std::min(k, width - 1 - k);
      const size_t token = r.begin + static_cast<size_t>(k++);
      if (margin <= context[token]) continue;
      context[token] = margin;
      const float* row = p + i * num_labels;
      const auto best = static_cast<int64_t>(std::max_element(row, row + num_labels) - row);  // the first on ties
      chosen[token] = {best, row[best]};
      if (request.return_tokens) rows[token].assign(row, row + num_labels);
    }
    if (plan.windowed) a.windows.push_back({r.begin, r.end, {}});
  }
  const double threshold = request.threshold.value_or(head_.default_threshold.value_or(0.0));
  CodePoints points(item.text);
  for (const EntitySpan& s :
       aggregate_entities(item.text, plan.content, chosen, labels, task().head.entity_aggregation())) {
    if (s.score < threshold) continue;
    const size_t start = points.at(s.begin);
    a.spans.push_back({s.type, start, points.at(s.end), s.text, s.score});
  }
  if (request.return_tokens) {
    CodePoints token_points(item.text);
    for (size_t t = 0; t < n; ++t) {
      const size_t start = token_points.at(plan.content.offsets[t].begin);
      a.tokens.push_back({start, token_points.at(plan.content.offsets[t].end), std::move(rows[t])});
    }
  }
  return a;
}

std::vector<ClassifyAnswer> TaskHeads::classify(const std::vector<ClassifyItem>& items, const ClassifyRequest& request,
                                                const RequestControl& control) const {
  const size_t budget = request.max_tokens > 0 ? request.max_tokens : max_input_tokens_;
  const size_t specials = task().tokenizer->special_tokens();
  if (budget > max_input_tokens_)
    throw InvalidInput("options.max_tokens: " + std::to_string(budget) + " is over the model's limit of " +
                       std::to_string(max_input_tokens_) + " tokens");
  if (budget <= specials)
    throw InvalidInput("options.max_tokens: " + std::to_string(budget) + " leaves no room for text beside the " +
                       std::to_string(specials) + " special tokens");
  if (request.overflow.value_or(head_.overflow) == OverflowPolicy::kWindow) {
    const std::optional<HeadWindow> w = request.window ? request.window : head_.window;
    if (!w) throw InvalidInput("options.overflow window: options.window is required (this head declares none)");
    if (w->tokens > budget)
      throw InvalidInput("options.window.tokens: " + std::to_string(w->tokens) + " is more than max_tokens (" +
                         std::to_string(budget) + ")");
    if (w->tokens <= specials || w->overlap >= w->tokens - specials)
      throw InvalidInput("options.window: a window of " + std::to_string(w->tokens) + " tokens holds " +
                         std::to_string(w->tokens > specials ? w->tokens - specials : 0) +
                         " of text; the overlap must be smaller");
  }
  if (request.threshold && !(*request.threshold >= 0 && *request.threshold <= 1))
    throw InvalidInput("options.threshold: a number in [0, 1]");

  auto phase_start = RequestControl::Clock::now();
  std::vector<Plan> plans(items.size());
  std::vector<const Encoding*> encodings;
  for (size_t i = 0; i < items.size(); ++i) {
    try {
      plans[i] = plan(items[i], request);
    } catch (const Error& e) {  // invalid UTF-8 (from the C API; JSON has none), a tokenizer's refusal
      plans[i] = Plan{};
      plans[i].error = e.code() == ErrorCode::kTooLong ? ItemError::kMaxLengthExceeded : ItemError::kInvalidInput;
    }
    if (plans[i].error == ItemError::kNone)
      for (const Encoding& e : plans[i].encodings) encodings.push_back(&e);
  }
  control.add_time(&WorkTimes::tokenize, phase_start);
  const std::vector<at::Tensor> logits = forward_pieces(encodings, control);
  phase_start = RequestControl::Clock::now();
  std::vector<ClassifyAnswer> answers(items.size());
  size_t next = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    const Plan& p = plans[i];
    if (p.error != ItemError::kNone) {
      answers[i].error = p.error;
      answers[i].input = p.input;
      continue;
    }
    const size_t count = p.encodings.size();
    if (next + count > logits.size()) {  // its forwards did not start before the deadline
      answers[i].error = ItemError::kDeadlineExceeded;
      next += count;
      continue;
    }
    const std::vector<at::Tensor> own(logits.begin() + static_cast<std::ptrdiff_t>(next),
                                      logits.begin() + static_cast<std::ptrdiff_t>(next + count));
    next += count;
    answers[i] = answer(items[i], p, own, request);
  }
  control.add_time(&WorkTimes::post, phase_start);
  return answers;
}

}  // namespace semroute
