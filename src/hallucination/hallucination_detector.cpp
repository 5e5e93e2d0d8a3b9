#include "hallucination/hallucination_detector.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <unordered_map>

#include "compression/sentence_splitter.h"
#include "compression/stop_words.h"
#include "semroute/error.h"
#include "tasks/sequence_classifier.h"
#include "tasks/text_batch.h"
#include "tasks/token_classifier.h"
#include "tokenizers/unicode.h"

namespace semroute {

size_t GroundTruth::memory_bytes() const {
  size_t bytes = context.size() + question.size() + tokens.size() * sizeof(Span) + windows.size() * sizeof(Window);
  for (const auto& w : windows) bytes += w.words.size() * sizeof(uint64_t);
  return bytes + idf.size() * (sizeof(uint64_t) + sizeof(double) + 2 * sizeof(void*));  // a hash node each
}

std::string_view GroundTruth::text(size_t w, size_t drop) const {
  const Window& win = windows[w];
  const size_t last = std::max(win.first + 1, win.end - std::min(drop, win.end - win.first)) - 1;
  return std::string_view(context).substr(tokens[win.first].begin, tokens[last].end - tokens[win.first].begin);
}

namespace {


std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Index of the first label whose name contains `part`, or -1.
int64_t label_containing(const std::vector<std::string>& labels, const std::string& part) {
  for (size_t i = 0; i < labels.size(); ++i)
    if (lower(labels[i]).find(part) != std::string::npos) return static_cast<int64_t>(i);
  return -1;
}

std::vector<uint64_t> distinct_words(std::string_view text) {
  std::vector<Word> words;
  scan_words(text, 0, words);
  std::vector<uint64_t> out;
  out.reserve(words.size());
  for (const Word& w : words) out.push_back(w.hash);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void check_text(std::string_view text, const char* what) {
  if (text.size() > Tokenizer::kMaxInputBytes)
    throw InvalidInput(std::string(what) + " has " + std::to_string(text.size()) + " bytes, more than the limit of " +
                           std::to_string(Tokenizer::kMaxInputBytes),
                       ErrorCode::kTooLong);
  if (const size_t bad = unicode::find_invalid_utf8(text); bad != std::string_view::npos)
    throw InvalidInput(std::string(what) + ": invalid UTF-8 at byte " + std::to_string(bad), ErrorCode::kInvalidUtf8);
}

void check_options(const DetectorOptions& o) {
  if (!(o.threshold > 0 && o.threshold <= 1)) throw InvalidInput("hallucination: threshold must lie in (0, 1]");
  if (o.answer_tokens < 8) throw InvalidInput("hallucination: answer_tokens must be at least 8");
  if (o.max_sentence_bytes < 16) throw InvalidInput("hallucination: max_sentence_bytes must be at least 16");
  if (!(o.nli_entailment_threshold >= 0 && o.nli_entailment_threshold <= 1) ||
      !(o.nli_confidence >= 0 && o.nli_confidence <= 1))
    throw InvalidInput("hallucination: NLI thresholds must lie in [0, 1]");
}

EncodeOptions whole(bool special = true) {
  EncodeOptions o;
  o.add_special_tokens = special;
  return o;
}

}  // namespace

const char* severity_name(int severity) {
  static const char* const names[] = {"low", "low-medium", "medium", "high", "critical"};
  return names[std::clamp(severity, 0, 4)];
}

int severity_named(std::string_view name) {
  if (name.empty() || name == "never") return 0;
  for (int s = 1; s <= 4; ++s)
    if (name == severity_name(s) || name == std::to_string(s)) return s;
  throw InvalidInput("stop at must be never, 1-4 or low-medium, medium, high, critical (got '" + std::string(name) +
                     "')");
}

DetectorTemplate detector_template_named(std::string_view name) {
  if (name == "lettucedetect") return DetectorTemplate::kLettuceDetect;
  if (name == "halugate") return DetectorTemplate::kHaluGate;
  throw InvalidInput("the template must be lettucedetect or halugate (got '" + std::string(name) + "')");
}

std::pair<std::string, std::string> detector_input(DetectorTemplate input_template, std::string_view window,
                                                   std::string_view question, std::string_view answer_part) {
  std::string first;
  if (input_template == DetectorTemplate::kHaluGate) {
    first.append(window);
    if (!question.empty()) first.append(" Question: ").append(question);
    first.append(" [SEP] ").append(answer_part);
    return {first, ""};
  }
  if (question.empty()) {
    first.append("Summarize the following text:\n").append(window).append("\noutput:");
  } else {
    first.append("Briefly answer the following question:\n")
        .append(question)
        .append("\nBear in mind that your response should be strictly based on the following 1 passages:\npassage 1: ")
        .append(window)
        .append("\nIn case the passages do not contain the necessary information to answer the question, please "
                "reply with: \"Unable to answer based on given passages.\"\noutput:");
  }
  return {first, std::string(answer_part)};
}

std::vector<TokenScore> lowest_scores(const std::vector<std::vector<TokenScore>>& per_input) {
  std::map<std::pair<uint32_t, uint32_t>, float> lowest;
  for (const auto& scores : per_input)
    for (const TokenScore& t : scores) {
      const auto [it, fresh] = lowest.emplace(std::make_pair(t.begin, t.end), t.score);
      if (!fresh) it->second = std::min(it->second, t.score);
    }
  std::vector<TokenScore> out;
  out.reserve(lowest.size());
  for (const auto& [range, score] : lowest) out.push_back({range.first, range.second, score});
  return out;
}

std::vector<HallucinationSpan> spans_from_scores(std::string_view answer_part, size_t sentence_begin,
                                                 const std::vector<TokenScore>& scores, uint64_t offset,
                                                 const DetectorOptions& options) {
  struct Open {
    size_t begin, end;
    double score;
  };
  std::vector<Open> found;
  bool open = false;
  for (const TokenScore& t : scores) {
    if (t.end <= sentence_begin || t.begin >= t.end || t.end > answer_part.size()) continue;
    if (t.score >= options.threshold) {
      const size_t begin = std::max<size_t>(t.begin, sentence_begin);
      if (open) {
        found.back().end = std::max<size_t>(found.back().end, t.end);
        found.back().score = std::max<double>(found.back().score, t.score);
      } else {
        found.push_back({begin, t.end, t.score});
        open = true;
      }
    } else {
      open = false;
    }
  }
  std::vector<HallucinationSpan> spans;
  for (Open f : found) {
    while (f.begin < f.end && is_ascii_space(answer_part[f.begin])) ++f.begin;
    while (f.end > f.begin && is_ascii_space(answer_part[f.end - 1])) --f.end;
    while (f.begin < f.end && is_utf8_continuation(answer_part[f.begin])) ++f.begin;  // whole characters only
    while (f.end < answer_part.size() && is_utf8_continuation(answer_part[f.end])) ++f.end;
    if (f.begin >= f.end || f.score < options.min_span_score) continue;
    const std::string_view text = answer_part.substr(f.begin, f.end - f.begin);
    size_t words = 0;
    for (size_t i = 0; i < text.size(); ++i)
      words += !is_ascii_space(text[i]) && (i == 0 || is_ascii_space(text[i - 1]));
    if (words < options.min_span_words) continue;
    HallucinationSpan s;
    s.begin = offset + (f.begin - sentence_begin);
    s.end = offset + (f.end - sentence_begin);
    s.text = std::string(text);
    s.score = f.score;
    spans.push_back(std::move(s));
  }
  return spans;
}

std::vector<size_t> matching_windows(const GroundTruth& truth, std::string_view sentence, size_t count) {
  std::vector<size_t> order(truth.windows.size());
  std::iota(order.begin(), order.end(), 0);
  if (order.size() <= 1) return order;
  const auto words = distinct_words(sentence);
  std::vector<double> shared(truth.windows.size(), 0);
  for (size_t w = 0; w < truth.windows.size(); ++w)
    for (const uint64_t h : words)
      if (std::binary_search(truth.windows[w].words.begin(), truth.windows[w].words.end(), h))
        shared[w] += truth.idf.at(h);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return shared[a] > shared[b]; });
  if (count > 0 && order.size() > count) order.resize(count);
  return order;
}

HallucinationDetector::HallucinationDetector(std::shared_ptr<const TokenClassifier> tokens,
                                             std::shared_ptr<const SequenceClassifier> nli, DetectorOptions options)
    : tokens_(std::move(tokens)), nli_(std::move(nli)), options_(std::move(options)) {}

HallucinationDetector::~HallucinationDetector() = default;

std::shared_ptr<const HallucinationDetector> HallucinationDetector::load(const std::filesystem::path& detector_dir,
                                                                         const std::filesystem::path& nli_dir,
                                                                         const DetectorOptions& options,
                                                                         const PipelineOptions& pipeline) {
  check_options(options);
  auto tokens = TokenClassifier::load(detector_dir, TaskOptions(pipeline));
  std::shared_ptr<const SequenceClassifier> nli;
  if (!nli_dir.empty()) nli = SequenceClassifier::load(nli_dir, TaskOptions(pipeline));
  std::shared_ptr<HallucinationDetector> d(new HallucinationDetector(tokens, nli, options));
  const auto& labels = tokens->labels();
  d->hallucinated_label_ = label_containing(labels, "halluc");
  if (d->hallucinated_label_ < 0 && labels.size() == 2) d->hallucinated_label_ = 1;
  if (d->hallucinated_label_ < 0)
    throw LoadError(detector_dir.string() + ": a hallucination detector needs a label named like 'hallucinated' "
                    "(or two labels, the second meaning hallucinated)");
  if (nli) {
    const char* parts[3] = {"entail", "neutral", "contradict"};
    for (int i = 0; i < 3; ++i) {
      d->nli_labels_[i] = label_containing(nli->labels(), parts[i]);
      if (d->nli_labels_[i] < 0)
        throw LoadError(nli_dir.string() + ": an NLI model needs labels named entailment, neutral and contradiction");
    }
  }
  return d;
}

std::shared_ptr<const GroundTruth> HallucinationDetector::pin(std::string_view context, std::string_view question) const {
  check_text(context, "the context");
  check_text(question, "the question");
  if (context.find_first_not_of(" \t\r\n") == std::string_view::npos)
    throw InvalidInput("hallucination: the context is empty: there is nothing to check an answer against");
  auto truth = std::make_shared<GroundTruth>();
  truth->context = std::string(context);
  truth->question = std::string(question);
  const Tokenizer& tokenizer = *tokens_->task().tokenizer;
  const size_t max_length = tokens_->task().encode.max_length;

  // Room for the context: what the template and question take, and the answer's share, come first.
  const auto [first, second] = detector_input(options_.input_template, "", question, ".");
  const size_t overhead = second.empty() ? tokenizer.encode(first, whole()).size()
                                         : tokenizer.encode_pair(first, second, whole()).size();
  if (overhead + options_.answer_tokens + 16 > max_length)
    throw InvalidInput("hallucination: the question and the answer's " + std::to_string(options_.answer_tokens) +
                           " tokens leave no room for context in the model's " + std::to_string(max_length) +
                           " tokens",
                       ErrorCode::kTooLong);
  const size_t window_tokens = max_length - overhead - options_.answer_tokens;
  const size_t overlap = std::min(options_.window_overlap, window_tokens / 2);

  for (const Span& s : tokenizer.encode(truth->context, whole(false)).offsets)
    if (s.end > s.begin) truth->tokens.push_back(s);
  if (truth->tokens.empty()) throw InvalidInput("hallucination: the context has no tokens");
  // Byte-level tokens may split a character: windows begin and end on whole ones.
  for (Span& s : truth->tokens) {
    while (s.begin > 0 && is_utf8_continuation(truth->context[s.begin])) --s.begin;
    while (s.end < truth->context.size() && is_utf8_continuation(truth->context[s.end])) ++s.end;
  }
  for (size_t start = 0;;) {
    GroundTruth::Window w;
    w.first = start;
    w.end = std::min(truth->tokens.size(), start + window_tokens);
    truth->windows.push_back(std::move(w));
    if (truth->windows.back().end == truth->tokens.size()) break;
    start = truth->windows.back().end - overlap;
  }
  std::unordered_map<uint64_t, size_t> df;
  for (size_t w = 0; w < truth->windows.size(); ++w) {
    truth->windows[w].words = distinct_words(truth->text(w));
    for (const uint64_t h : truth->windows[w].words) ++df[h];
  }
  const double n = static_cast<double>(truth->windows.size());
  for (const auto& [h, count] : df) truth->idf[h] = std::log((1 + n) / (1 + static_cast<double>(count))) + 1;
  return truth;
}

namespace {

// The answer as the model reads it with a sentence: the answer before the
// sentence and the sentence, or the sentence alone when both exceed the
// room; `overflow`: tokens of it beyond the room (the window gives them up).
struct AnswerPart {
  std::string text;
  size_t sentence_begin = 0;
  size_t overflow = 0;
};

AnswerPart answer_part(const Tokenizer& tokenizer, std::string_view before, std::string_view sentence, size_t room) {
  AnswerPart part{std::string(before) + std::string(sentence), before.size(), 0};
  size_t tokens = tokenizer.encode(part.text, whole(false)).size();
  if (tokens > room && !before.empty()) {
    part = AnswerPart{std::string(sentence), 0, 0};
    tokens = tokenizer.encode(part.text, whole(false)).size();
  }
  part.overflow = tokens > room ? tokens - room : 0;
  return part;
}

// The token model's inputs, one per window; a window gives up tokens until
// its input fits the model (the answer part never does).
struct Inputs {
  std::vector<Encoding> encodings;
  std::vector<size_t> answer_starts;  // halugate: where the answer part starts in the single text
};

Inputs encode_inputs(const Tokenizer& tokenizer, DetectorTemplate input_template, const GroundTruth& truth,
                     const std::vector<size_t>& windows, const AnswerPart& part, size_t max_length) {
  Inputs inputs;
  for (const size_t w : windows) {
    const size_t window_size = truth.windows[w].end - truth.windows[w].first;
    for (size_t drop = part.overflow;; drop += 8) {
      const auto [first, second] = detector_input(input_template, truth.text(w, drop), truth.question, part.text);
      Encoding e = second.empty() ? tokenizer.encode(first, whole()) : tokenizer.encode_pair(first, second, whole());
      if (e.size() <= max_length || drop >= window_size) {
        if (e.size() > max_length) e.truncate(max_length, Keep::kEnd);  // the answer stays
        inputs.encodings.push_back(std::move(e));
        inputs.answer_starts.push_back(first.size() - part.text.size());
        break;
      }
    }
  }
  return inputs;
}

// Each input's answer tokens with their P(hallucinated), in bytes of the answer part.
std::vector<std::vector<TokenScore>> answer_scores(const TextBatch& batch, const at::Tensor& probabilities,
                                                   const std::vector<size_t>& answer_starts, bool pair) {
  std::vector<std::vector<TokenScore>> per_input(batch.encodings.size());
  for (size_t i = 0; i < batch.encodings.size(); ++i) {
    const Encoding& e = batch.encodings[i];
    const float* p = probabilities[static_cast<int64_t>(i)].data_ptr<float>();
    const size_t a0 = answer_starts[i];
    for (size_t t = 0; t < e.size(); ++t) {
      if (!e.attention_mask[t] || e.special_tokens_mask[t]) continue;
      const Span o = e.offsets[t];
      if (pair) {
        if (e.sequence_ids[t] == 1) per_input[i].push_back({o.begin, o.end, p[t]});
      } else if (o.end > a0 && o.begin + 1 >= a0) {  // a token may carry the space before the answer
        per_input[i].push_back({static_cast<uint32_t>(std::max<size_t>(o.begin, a0) - a0),
                                static_cast<uint32_t>(o.end - a0), p[t]});
      }
    }
  }
  return per_input;
}

}  // namespace

SentenceCheck HallucinationDetector::check(const GroundTruth& truth, std::string_view answer_before,
                                           std::string_view sentence, uint64_t offset) const {
  const auto start = std::chrono::steady_clock::now();
  const TaskModel& task = tokens_->task();
  const AnswerPart part = answer_part(*task.tokenizer, answer_before, sentence, options_.answer_tokens);
  const std::vector<size_t> windows = matching_windows(truth, sentence, options_.context_windows);
  const Inputs inputs =
      encode_inputs(*task.tokenizer, options_.input_template, truth, windows, part, task.encode.max_length);
  const TextBatch batch = batch_from_encodings(inputs.encodings, *task.tokenizer, task.encoder->device());
  const at::Tensor probabilities =
      tokens_->logits(batch.inputs).to(at::kFloat).softmax(-1).select(-1, hallucinated_label_).contiguous().cpu();
  const std::vector<TokenScore> scores = lowest_scores(answer_scores(
      batch, probabilities, inputs.answer_starts, options_.input_template == DetectorTemplate::kLettuceDetect));

  SentenceCheck out;
  out.begin = offset;
  out.end = offset + sentence.size();
  out.text = std::string(sentence);
  for (const TokenScore& t : scores)
    if (t.end > part.sentence_begin) out.max_score = std::max<double>(out.max_score, t.score);
  out.spans = spans_from_scores(part.text, part.sentence_begin, scores, offset, options_);
  if (!out.spans.empty()) explain(truth, windows.front(), sentence, out.spans);
  out.latency = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);
  return out;
}

void HallucinationDetector::explain(const GroundTruth& truth, size_t best_window, std::string_view sentence,
                                    std::vector<HallucinationSpan>& spans) const {
  if (!nli_) {
    for (auto& s : spans) s.severity = s.score > 0.8 ? 3 : 2;
    return;
  }
  const Classification c = nli_->classify_pairs({{truth.text(best_window), sentence}}).at(0);
  NliJudgement j;
  j.entailment = c.probabilities[static_cast<size_t>(nli_labels_[0])];
  j.neutral = c.probabilities[static_cast<size_t>(nli_labels_[1])];
  j.contradiction = c.probabilities[static_cast<size_t>(nli_labels_[2])];
  const double best = std::max({j.entailment, j.neutral, j.contradiction});
  int severity = 2;
  if (best == j.contradiction) {
    j.label = "contradiction";
    severity = 4;
  } else if (best == j.neutral) {
    j.label = "neutral";
  } else {
    j.label = "entailment";
    severity = 1;
  }
  if (best < options_.nli_confidence) severity = std::max(0, severity - 1);
  if (options_.nli_filter && j.entailment >= options_.nli_entailment_threshold) {
    spans.clear();
    return;
  }
  for (auto& s : spans) {
    s.nli = j;
    s.severity = severity;
  }
}

}  // namespace semroute
