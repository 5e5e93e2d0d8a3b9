#include "runtime/task_heads.h"

#include "runtime/forwards.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/file_input.h"
#include "core/model_config.h"
#include "core/sha256.h"
#include "semroute/error.h"
#include "tasks/entity_spans.h"
#include "tasks/sequence_classifier.h"
#include "tasks/task_head.h"
#include "tasks/token_classifier.h"

namespace semroute {
namespace {

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

bool passes(double value, double threshold, bool strictly_greater) {
  return strictly_greater ? value > threshold : value >= threshold;
}

[[noreturn]] void bad_operating_point(const std::filesystem::path& file, const std::string& why) {
  throw LoadError(file.string() + ": " + why, ErrorCode::kInvalidModel);
}

OperatingPoint read_operating_point(const nlohmann::json& op, const std::vector<std::string>& labels, size_t limit,
                                    const std::filesystem::path& file, std::optional<HeadWindow>& window) {
  OperatingPoint point;
  if (op.value("score_type", "") != "independent_sigmoid")
    bad_operating_point(file, "score_type must be \"independent_sigmoid\"");
  const std::string comparison = op.value("comparison", "");
  if (comparison != "score >= threshold" && comparison != "score > threshold")
    bad_operating_point(file, "comparison must be \"score >= threshold\" or \"score > threshold\"");
  point.strictly_greater = comparison == "score > threshold";
  if (!op.contains("labels") || op["labels"] != nlohmann::json(labels))
    bad_operating_point(file, "its labels differ from the classifier's (the same labels, in order)");
  const auto thresholds = op.find("thresholds");
  if (thresholds == op.end() || !thresholds->is_array() || thresholds->size() != labels.size())
    bad_operating_point(file, "thresholds: one number per label");
  for (const auto& t : *thresholds) {
    if (!t.is_number() || !std::isfinite(t.get<double>())) bad_operating_point(file, "thresholds: finite numbers");
    point.thresholds.push_back(t.get<double>());
  }
  const nlohmann::json policy = op.value("input_policy", nlohmann::json::object());
  if (!policy.is_object()) bad_operating_point(file, "input_policy: an object");
  const auto count = [&](const char* key) {
    const auto it = policy.find(key);
    if (it == policy.end() || !it->is_number_unsigned() || it->get<uint64_t>() > limit)
      bad_operating_point(file, std::string("input_policy.") + key + ": a token count within the model's " +
                                    std::to_string(limit));
    return static_cast<size_t>(it->get<uint64_t>());
  };
  if (policy.value("strategy", "") == "overlapping_content_windows")
    window = HeadWindow{count("window_tokens_including_special_tokens"), count("overlap_content_tokens")};
  if (policy.contains("max_document_tokens_including_special_tokens"))
    point.document_tokens = count("max_document_tokens_including_special_tokens");
  return point;
}

// The names a template's {fields} hold ("{{" and "}}" are literal braces).
std::vector<std::string> template_fields(const std::string& text) {
  std::vector<std::string> fields;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "{{") == 0 || text.compare(i, 2, "}}") == 0) {
      ++i;
    } else if (text[i] == '{') {
      const size_t close = text.find('}', i);
      if (close == std::string::npos) return {"{"};
      fields.push_back(text.substr(i + 1, close - i - 1));
      i = close;
    }
  }
  return fields;
}

// The template with {question} and {context} filled in.
std::string render_prompt(const std::string& text, std::string_view question, std::string_view context) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "{{") == 0 || text.compare(i, 2, "}}") == 0) {
      out += text[i++];
    } else if (text.compare(i, 10, "{question}") == 0) {
      out += question;
      i += 9;
    } else if (text.compare(i, 9, "{context}") == 0) {
      out += context;
      i += 8;
    } else {
      out += text[i];
    }
  }
  return out;
}

GroundingPolicy read_grounding(const nlohmann::json& op, const std::vector<std::string>& labels,
                               const std::filesystem::path& file) {
  GroundingPolicy g;
  const auto pair = op.find("input_pair");
  if (!pair->is_array() || pair->size() != 2 || !(*pair)[0].is_string() || (*pair)[1] != "answer")
    bad_operating_point(file, "input_pair: [a prompt template, \"answer\"]");
  g.prompt_template = (*pair)[0].get<std::string>();
  std::vector<std::string> fields = template_fields(g.prompt_template);
  std::sort(fields.begin(), fields.end());
  fields.erase(std::unique(fields.begin(), fields.end()), fields.end());
  if (fields != std::vector<std::string>{"context", "question"})
    bad_operating_point(file, "the prompt template must name exactly {question} and {context}");
  nlohmann::json label2id = nlohmann::json::object();
  for (size_t i = 0; i < labels.size(); ++i) label2id[labels[i]] = i;
  if (op.value("label2id", nlohmann::json::object()) != label2id)
    bad_operating_point(file, "label2id differs from the classifier's labels");
  const nlohmann::json offsets = op.value("answer_offsets", nlohmann::json());
  if (!offsets.is_null() && offsets != "Unicode code points")
    bad_operating_point(file, "answer_offsets: \"Unicode code points\"");
  const std::string comparison = op.value("threshold_comparison", "strictly_greater");
  if (comparison != "strictly_greater" && comparison != "greater_or_equal")
    bad_operating_point(file, "threshold_comparison: strictly_greater or greater_or_equal");
  g.strictly_greater = comparison == "strictly_greater";
  const auto threshold = op.find("token_threshold");
  if (threshold == op.end() || !threshold->is_number() || !(threshold->get<double>() >= 0) ||
      threshold->get<double>() > 1)
    bad_operating_point(file, "token_threshold: a number in [0, 1]");
  g.threshold = threshold->get<double>();
  const auto max_tokens = op.find("max_input_tokens");
  if (max_tokens == op.end() || !max_tokens->is_number_unsigned() || max_tokens->get<uint64_t>() < 4)
    bad_operating_point(file, "max_input_tokens: a token count");
  g.max_input_tokens = static_cast<size_t>(max_tokens->get<uint64_t>());
  std::vector<size_t> positive;
  for (size_t i = 0; i < labels.size(); ++i)
    if (labels[i] != "supported") positive.push_back(i);
  if (labels.size() != 2 || positive.size() != 1)
    bad_operating_point(file, "a grounded head has two labels: \"supported\" and one other");
  g.positive = positive[0];
  return g;
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

TaskHeads::Head TaskHeads::load_head(const std::filesystem::path& dir,
                                     std::shared_ptr<const SequenceClassifier> sequence,
                                     std::shared_ptr<const TokenClassifier> token) {
  Head h;
  h.sequence = std::move(sequence);
  h.token = std::move(token);
  HeadInfo& head = h.info;
  head.name = "default";
  if (h.token) {
    head.kind = HeadKind::kToken;
    head.inputs = {"text"};
    head.reduction = "span_union";
  } else {
    head.kind = h.sequence->scoring() == Scoring::kSigmoid ? HeadKind::kScores : HeadKind::kSequence;
    head.inputs = {"text", "pair"};
    head.reduction = "max";
  }
  head.labels = h.task().labels;
  h.max_input_tokens = h.task().encode.max_length;
  const std::filesystem::path op_file = dir / "operating_point.json";
  if (std::filesystem::exists(op_file)) {
    const std::string text = read_file(op_file);
    const nlohmann::json op = parse_json(text, op_file.string());
    if (!op.is_object()) bad_operating_point(op_file, "expected a JSON object");
    if (head.kind == HeadKind::kSequence) bad_operating_point(op_file, "a softmax sequence head has no operating point");
    if (head.kind == HeadKind::kScores) {
      head.operating_point = read_operating_point(op, head.labels, h.max_input_tokens, op_file, head.window);
      head.operating_point->sha256 = sha256_hex(text);
      if (head.window) head.overflow = OverflowPolicy::kWindow;
      h.default_tokens = head.operating_point->document_tokens;
    } else if (op.contains("input_pair")) {
      head.grounding = read_grounding(op, head.labels, op_file);
      head.inputs = {"grounded"};
      head.reduction = "";
      head.default_threshold = head.grounding->threshold;
      h.max_input_tokens = std::min(h.max_input_tokens, head.grounding->max_input_tokens);
    } else {
      bad_operating_point(op_file, "a token head's operating point is a grounding policy (input_pair)");
    }
  }
  if (h.default_tokens == 0) h.default_tokens = h.max_input_tokens;
  return h;
}

std::shared_ptr<const TaskHeads> TaskHeads::load(const std::filesystem::path& dir, std::optional<TaskKind> kind,
                                                 const TaskHeadsOptions& options) {
  if (!kind) kind = kind_of_model(dir);
  if (!kind)
    throw LoadError(dir.string() + ": config.json names no *ForSequenceClassification or *ForTokenClassification",
                    ErrorCode::kInvalidModel);
  std::shared_ptr<TaskHeads> heads(new TaskHeads());
  if (*kind == TaskKind::kToken)
    heads->heads_.push_back(load_head(dir, nullptr, TokenClassifier::load(dir, options.task)));
  else
    heads->heads_.push_back(load_head(dir, SequenceClassifier::load(dir, options.task), nullptr));
  heads->start_batching(options.batching);
  return heads;
}

std::shared_ptr<const TaskHeads> TaskHeads::load_bound(const std::filesystem::path& backbone_dir,
                                                       const std::vector<HeadSource>& sources,
                                                       const TaskHeadsOptions& options) {
  if (sources.empty()) throw LoadError(backbone_dir.string() + ": no heads to bind", ErrorCode::kInvalidModel);
  if (sources.size() > kMaxBoundHeads)
    throw LoadError(backbone_dir.string() + ": at most " + std::to_string(kMaxBoundHeads) + " heads on one backbone",
                    ErrorCode::kInvalidModel);
  PipelineOptions pipeline = options.task;
  if (pipeline.tokenizer.empty()) pipeline.tokenizer = backbone_dir;  // every head reads the backbone's tokens
  const Backbone backbone = Backbone::load(backbone_dir, pipeline);
  std::shared_ptr<TaskHeads> heads(new TaskHeads());
  for (const HeadSource& source : sources) {
    if (source.name.empty() || heads->head_index(source.name))
      throw LoadError(backbone_dir.string() + ": head \"" + source.name + "\" is unnamed or named twice",
                      ErrorCode::kInvalidModel);
    const std::optional<TaskKind> kind = source.kind ? source.kind : kind_of_model(source.dir);
    if (!kind)
      throw LoadError(source.dir.string() + ": config.json names no *ForSequenceClassification or *ForTokenClassification",
                      ErrorCode::kInvalidModel);
    Head h = *kind == TaskKind::kToken
                 ? load_head(source.dir, nullptr, TokenClassifier::bind(backbone, source.dir, pipeline))
                 : load_head(source.dir, SequenceClassifier::bind(backbone, source.dir, pipeline), nullptr);
    h.info.name = source.name;
    heads->heads_.push_back(std::move(h));
  }
  heads->start_batching(options.batching);
  return heads;
}

void TaskHeads::start_batching(const BatchingOptions& batching) {
  if (!batching.enabled()) return;
  batcher_ = std::make_unique<EncodingBatcher>(
      [this](const std::vector<const Encoding*>& encodings) { return forward(encodings); }, batching,
      encoding_tokens);
}

TaskHeads::~TaskHeads() = default;

const TaskModel& TaskHeads::Head::task() const { return sequence ? sequence->task() : token->task(); }

int64_t TaskHeads::Head::logits_size(int64_t tokens) const {
  const auto labels = static_cast<int64_t>(info.labels.size());
  return token ? tokens * labels : labels;
}

std::vector<const HeadInfo*> TaskHeads::heads() const {
  std::vector<const HeadInfo*> out;
  for (const Head& h : heads_) out.push_back(&h.info);
  return out;
}

std::optional<size_t> TaskHeads::head_index(std::string_view name) const {
  for (size_t h = 0; h < heads_.size(); ++h)
    if (heads_[h].info.name == name) return h;
  return std::nullopt;
}

// The encoder runs once per batch (its weights and any unmerged adapter are
// the primary head's, which every bound head shares); each head reads its
// hidden states.
std::vector<at::Tensor> TaskHeads::forward(const std::vector<const Encoding*>& encodings) const {
  const TaskModel& t = task();
  return forward_each(encodings, *t.tokenizer, t.encoder->device(), [&](const TextBatch& batch) {
    c10::InferenceMode guard;
    const at::Tensor hidden = t.encoder->forward(batch.inputs, t.forward_options());
    std::vector<at::Tensor> logits;
    for (const Head& h : heads_) {
      const TaskHead& head = h.task().head;
      logits.push_back((h.token ? head.token_logits(hidden) : head.sequence_logits(hidden, batch.inputs.attention_mask))
                           .to(at::kFloat)
                           .cpu());
    }
    std::vector<at::Tensor> each;
    for (size_t b = 0; b < batch.encodings.size(); ++b) {
      const auto row = static_cast<int64_t>(b);
      const auto tokens = static_cast<int64_t>(batch.encodings[b].size());
      std::vector<at::Tensor> parts;
      for (size_t h = 0; h < heads_.size(); ++h)
        parts.push_back(heads_[h].token ? logits[h][row].narrow(0, 0, tokens).reshape({-1}) : logits[h][row]);
      each.push_back(at::cat(parts));
    }
    return each;
  });
}

at::Tensor TaskHeads::logits_of(const at::Tensor& answer, const Encoding& encoding, size_t h) const {
  const auto tokens = static_cast<int64_t>(encoding.size());
  int64_t offset = 0;
  for (size_t g = 0; g < h; ++g) offset += heads_[g].logits_size(tokens);
  const at::Tensor flat = answer.narrow(0, offset, heads_[h].logits_size(tokens));
  return heads_[h].token ? flat.view({tokens, static_cast<int64_t>(heads_[h].info.labels.size())}) : flat;
}

TaskHeads::Plan TaskHeads::plan(const Head& head, const ClassifyItem& item, const ClassifyRequest& request) const {
  const TaskModel& t = task();
  const Tokenizer& tokenizer = *t.tokenizer;
  const size_t budget = request.max_tokens > 0 ? request.max_tokens : head.default_tokens;
  const OverflowPolicy policy = request.overflow.value_or(head.info.overflow);
  Plan p;
  if (head.info.grounding || item.form == ClassifyItem::Form::kGrounded) {
    if (!head.info.grounding || item.form != ClassifyItem::Form::kGrounded) {  // each head reads its own form
      p.error = ItemError::kInvalidInput;
      return p;
    }
    return plan_grounded(head, item, budget, policy);
  }
  if (item.form == ClassifyItem::Form::kPair) {  // pairs read whole or cut, never in windows
    if (head.token || policy == OverflowPolicy::kWindow) {
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
    const HeadWindow w = request.window.value_or(head.info.window.value_or(HeadWindow{}));
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

// (prompt, answer), each read only as far as the budget needs, framed as
// the tokenizer frames pairs; over the budget: rejected, or (truncate) the
// prompt's first tokens kept with the whole answer.
TaskHeads::Plan TaskHeads::plan_grounded(const Head& head, const ClassifyItem& item, size_t budget, OverflowPolicy policy) const {
  const Tokenizer& tokenizer = *task().tokenizer;
  Plan p;
  if (item.answer.empty()) {
    p.error = ItemError::kInvalidInput;
    return p;
  }
  EncodeOptions bounded;
  bounded.add_special_tokens = false;
  bounded.max_length = budget + 1;
  Encoding prompt = tokenizer.encode(render_prompt(head.info.grounding->prompt_template, item.question, item.context),
                                     bounded);
  p.content = tokenizer.encode(item.answer, bounded);  // the answer's tokens: its spans' offsets
  const size_t specials = tokenizer.special_tokens(true);
  const size_t tokens = prompt.size() + p.content.size() + specials;
  p.input.tokens = tokens;
  p.input.tokens_lower_bound = prompt.truncated || p.content.truncated;
  p.input.processed_tokens = tokens;
  if (tokens > budget) {
    const size_t fixed = p.content.size() + specials;
    if (policy != OverflowPolicy::kTruncate || p.content.truncated || fixed > budget) {
      p.error = ItemError::kMaxLengthExceeded;
      return p;
    }
    prompt.truncate(budget - fixed, Keep::kStart);
    p.input.truncated = true;
    p.input.processed_tokens = budget;
  }
  p.ranges = {TokenRange{0, p.content.size()}};
  p.encodings.push_back(tokenizer.with_special_tokens(std::move(prompt), p.content));
  return p;
}

// Spans of the answer its context does not support: runs of answer tokens
// whose positive label passes the threshold (a token without a source span
// neither extends nor ends a run), each as likely as its likeliest token.
void TaskHeads::answer_grounded(const Head& head, const ClassifyItem& item, const Plan& plan, const at::Tensor& logits,
                                const ClassifyRequest& request, ClassifyAnswer& a) const {
  const GroundingPolicy& g = *head.info.grounding;
  const size_t num_labels = head.info.labels.size();
  const at::Tensor probs = at::softmax(logits, -1).contiguous();
  const float* p = probs.data_ptr<float>();
  const Encoding& e = plan.encodings.front();
  const double threshold = request.threshold.value_or(g.threshold);
  CodePoints points(item.answer);
  std::optional<LabelledSpan> run;
  const auto close = [&] {
    if (!run) return;
    run->text = std::string(item.answer.substr(run->start, run->end - run->start));  // bytes until converted below
    a.spans.push_back(*run);
    run.reset();
  };
  for (size_t i = 0; i < e.size(); ++i) {
    if (e.sequence_ids[i] != 1 || e.special_tokens_mask[i]) continue;
    const Span offset = e.offsets[i];
    const float* row = p + i * num_labels;
    if (request.return_tokens) {
      const size_t start = points.at(offset.begin);
      a.tokens.push_back({start, points.at(offset.end), std::vector<float>(row, row + num_labels)});
    }
    if (offset.end <= offset.begin) continue;
    const double positive = row[g.positive];
    if (passes(positive, threshold, g.strictly_greater)) {
      if (!run) {
        run = LabelledSpan{head.info.labels[g.positive], offset.begin, offset.end, "", positive};
      } else {
        run->end = std::max<size_t>(run->end, offset.end);
        run->probability = std::max(run->probability, positive);
      }
    } else {
      close();
    }
  }
  close();
  CodePoints span_points(item.answer);
  for (LabelledSpan& s : a.spans) {  // byte offsets to code points
    s.start = span_points.at(s.start);
    s.end = span_points.at(s.end);
  }
}

ClassifyAnswer TaskHeads::answer(const Head& head, const ClassifyItem& item, const Plan& plan, const std::vector<at::Tensor>& logits,
                                 const ClassifyRequest& request) const {
  ClassifyAnswer a;
  a.input = plan.input;
  for (const at::Tensor& l : logits) {
    if (!all_finite(l)) {
      a.error = ItemError::kInvalidModelOutput;
      return a;
    }
  }
  const auto& labels = head.info.labels;
  if (head.info.grounding) {
    answer_grounded(head, item, plan, logits.front(), request, a);
    return a;
  }
  if (!head.token) {
    at::Tensor best;
    for (size_t w = 0; w < logits.size(); ++w) {
      const at::Tensor scores = head.info.kind == HeadKind::kScores ? at::sigmoid(logits[w]) : at::softmax(logits[w], -1);
      best = w == 0 ? scores : at::maximum(best, scores);
      if (plan.windowed) a.windows.push_back({plan.ranges[w].begin, plan.ranges[w].end, to_vector(scores)});
    }
    if (head.info.kind == HeadKind::kScores) {
      a.scores = to_vector(best);
      if (const auto& op = head.info.operating_point)
        for (size_t k = 0; k < labels.size(); ++k)
          if (passes(a.scores[k], op->thresholds[k], op->strictly_greater)) a.selected.push_back(labels[k]);
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
  MostContext most_context(n);
  for (size_t w = 0; w < logits.size(); ++w) {
    const at::Tensor probs = at::softmax(logits[w], -1).contiguous();
    const float* p = probs.data_ptr<float>();
    const TokenRange r = plan.ranges[w];
    most_context.offer(plan.encodings[w], r, [&](size_t token, size_t i) {
      const float* row = p + i * num_labels;
      const auto best = static_cast<int64_t>(std::max_element(row, row + num_labels) - row);  // the first on ties
      chosen[token] = {best, row[best]};
      if (request.return_tokens) rows[token].assign(row, row + num_labels);
    });
    if (plan.windowed) a.windows.push_back({r.begin, r.end, {}});
  }
  const double threshold = request.threshold.value_or(head.info.default_threshold.value_or(0.0));
  CodePoints points(item.text);
  for (const EntitySpan& s :
       aggregate_entities(item.text, plan.content, chosen, labels, head.task().head.entity_aggregation())) {
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

void TaskHeads::check(size_t h, const ClassifyRequest& request) const {
  if (h >= heads_.size()) throw InvalidInput("no head " + std::to_string(h));
  const Head& head = heads_[h];
  const HeadInfo& info = head.info;
  const size_t budget = request.max_tokens > 0 ? request.max_tokens : head.default_tokens;
  const size_t specials = task().tokenizer->special_tokens(info.grounding.has_value());
  if (budget > head.max_input_tokens)
    throw InvalidInput("options.max_tokens: " + std::to_string(budget) + " is over the model's limit of " +
                       std::to_string(head.max_input_tokens) + " tokens");
  if (budget <= specials)
    throw InvalidInput("options.max_tokens: " + std::to_string(budget) + " leaves no room for text beside the " +
                       std::to_string(specials) + " special tokens");
  if (info.grounding && request.overflow == OverflowPolicy::kWindow)
    throw InvalidInput("options.overflow: grounded inputs are not read in windows");
  if (request.overflow.value_or(info.overflow) == OverflowPolicy::kWindow) {
    const std::optional<HeadWindow> w = request.window ? request.window : info.window;
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
}

std::vector<ClassifyAnswer> TaskHeads::classify(const std::vector<ClassifyItem>& items, const ClassifyRequest& request,
                                                const RequestControl& control, size_t head) const {
  return std::move(classify_each({HeadCall{head, &items, request}}, control).front());
}

std::vector<std::vector<ClassifyAnswer>> TaskHeads::classify_each(const std::vector<HeadCall>& calls,
                                                                  const RequestControl& control) const {
  for (const HeadCall& call : calls) check(call.head, call.request);
  auto phase_start = RequestControl::Clock::now();
  std::vector<std::vector<Plan>> plans(calls.size());
  std::vector<const Encoding*> encodings;
  for (size_t c = 0; c < calls.size(); ++c) {
    const Head& head = heads_[calls[c].head];
    const std::vector<ClassifyItem>& items = *calls[c].items;
    plans[c].resize(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
      Plan& p = plans[c][i];
      try {
        p = plan(head, items[i], calls[c].request);
      } catch (const Error& e) {  // invalid UTF-8 (from the C API; JSON has none), a tokenizer's refusal
        p = Plan{};
        p.error = e.code() == ErrorCode::kTooLong ? ItemError::kMaxLengthExceeded : ItemError::kInvalidInput;
      }
      if (p.error == ItemError::kNone)
        for (const Encoding& e : p.encodings) encodings.push_back(&e);
    }
  }
  control.add_time(&WorkTimes::tokenize, phase_start);
  const std::vector<at::Tensor> logits =
      forward_pieces(encodings, control, batcher_.get(), [this](const auto& piece) { return forward(piece); });
  phase_start = RequestControl::Clock::now();
  std::vector<std::vector<ClassifyAnswer>> answers(calls.size());
  size_t next = 0;
  for (size_t c = 0; c < calls.size(); ++c) {
    const Head& head = heads_[calls[c].head];
    answers[c].resize(plans[c].size());
    for (size_t i = 0; i < plans[c].size(); ++i) {
      const Plan& p = plans[c][i];
      ClassifyAnswer& a = answers[c][i];
      if (p.error != ItemError::kNone) {
        a.error = p.error;
        a.input = p.input;
        continue;
      }
      const size_t count = p.encodings.size();
      if (next + count > logits.size()) {  // its forwards did not start before the deadline
        a.error = ItemError::kDeadlineExceeded;
        next += count;
        continue;
      }
      std::vector<at::Tensor> own;
      for (size_t w = 0; w < count; ++w) own.push_back(logits_of(logits[next + w], p.encodings[w], calls[c].head));
      next += count;
      a = answer(head, (*calls[c].items)[i], p, own, calls[c].request);
    }
  }
  control.add_time(&WorkTimes::post, phase_start);
  return answers;
}

}  // namespace semroute
