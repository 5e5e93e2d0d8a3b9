// Hallucination detection: which parts of an LLM's answer the request's
// ground truth (retrieved context, tool results) does not support, judged a
// sentence at a time so that a streamed answer can be checked as it arrives
// (answer_stream.h).
//
// Two models, both Hugging Face checkpoints:
//  - a token classifier in the LettuceDetect style (labels: supported /
//    hallucinated, the second label, or the one named like "hallucinated",
//    counts) reads the context, the question and the answer and scores each
//    answer token;
//  - optionally an NLI sequence classifier (labels containing "entail",
//    "neutral", "contradict") explains each span found.
//
// The rules (each pinned by a unit test):
//  - Input template. `lettucedetect` (default; what LettuceDetect's models
//    were trained on): the pair (prompt, answer) where the prompt is its QA
//    template around the question and "passage 1: <context window>" (its
//    summary template when there is no question). `halugate` (the vLLM
//    Semantic Router's): one text "<context window> Question: <question>
//    [SEP] <answer>". The answer part is the sentence judged, after up to
//    answer_context_bytes of the answer before it (so pronouns resolve);
//    only the sentence's tokens are scored.
//  - Truncation and windows. The answer part is never truncated: the
//    earlier answer goes first, then the context window shrinks. The
//    context is cut into windows of whole tokens that fit beside the
//    template, question and answer_tokens of answer, overlapping by
//    window_overlap tokens. Each sentence is read against the
//    `context_windows` windows sharing the most (idf-weighted) words with
//    it (0: all), in one batch; a token's score is its lowest
//    P(hallucinated) over them: supported by any window is supported.
//  - Spans. Consecutive sentence tokens scoring >= threshold form a span; a
//    token below it ends the span (no gap is bridged); tokens without
//    characters are skipped. Spans are trimmed of whitespace; a span's score
//    is its highest token score. Spans of fewer than min_span_words words
//    or scoring below min_span_score are dropped.
//  - NLI. Premise: the window that matched the sentence best; hypothesis:
//    the sentence holding the span (a span alone, "42 million", is not a
//    claim NLI can judge). Severity: contradiction 4, neutral 2 (a
//    fabrication), entailment 1; one less when the NLI label's probability
//    is below nli_confidence; a span whose entailment probability reaches
//    nli_entailment_threshold is dropped (nli_filter). Without an NLI model:
//    3 when the span's score is above 0.8, else 2.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tasks/task_model.h"

namespace semroute {

class TokenClassifier;
class SequenceClassifier;

enum class DetectorTemplate { kLettuceDetect, kHaluGate };

struct DetectorOptions {
  DetectorTemplate input_template = DetectorTemplate::kLettuceDetect;
  double threshold = 0.5;           // a token is unsupported from this P(hallucinated) on
  size_t min_span_words = 1;
  double min_span_score = 0;
  size_t context_windows = 2;       // windows read per sentence; 0: every window
  size_t window_overlap = 32;       // tokens neighbouring windows share
  size_t answer_tokens = 192;       // room kept in each input for the answer part
  size_t answer_context_bytes = 512;
  size_t max_sentence_bytes = 1024; // longer sentences are judged in pieces (sentence_splitter.h)
  bool nli_filter = true;
  double nli_entailment_threshold = 0.75;
  double nli_confidence = 0.7;
};

struct NliJudgement {
  std::string label;  // entailment, neutral, contradiction ("" without an NLI model)
  double entailment = 0, neutral = 0, contradiction = 0;
};

struct HallucinationSpan {
  uint64_t begin = 0, end = 0;  // bytes of the answer
  std::string text;
  double score = 0;             // highest P(hallucinated) of its tokens
  NliJudgement nli;
  int severity = 0;             // 0 (low) .. 4 (critical)
};

// One sentence of the answer, judged.
struct SentenceCheck {
  uint64_t begin = 0, end = 0;  // bytes of the answer
  std::string text;             // those bytes
  std::vector<HallucinationSpan> spans;
  double max_score = 0;         // highest token score of the sentence
  std::chrono::microseconds latency{0};
};

// Severity's name: low, low-medium, medium, high, critical.
const char* severity_name(int severity);
// The severity a name or number 1-4 gives; "never" or "" is 0 (no stop).
// Throws InvalidInput.
int severity_named(std::string_view name);
// "lettucedetect" or "halugate". Throws InvalidInput.
DetectorTemplate detector_template_named(std::string_view name);

// The ground truth pinned for one request: the context cut into windows of
// whole tokens (tokenized once), and each window's words for matching
// sentences to windows. Immutable once pinned.
struct GroundTruth {
  std::string context, question;
  std::vector<Span> tokens;  // byte ranges of the context's tokens, on whole characters
  struct Window {
    size_t first = 0, end = 0;    // its tokens
    std::vector<uint64_t> words;  // word hashes (stop_words.h), distinct, sorted
  };
  std::vector<Window> windows;
  std::unordered_map<uint64_t, double> idf;  // of each word over the windows

  // Bytes of window `w` without its last `drop` tokens (one token at least).
  std::string_view text(size_t w, size_t drop = 0) const;
  // About what it holds in memory: texts, token spans, window words, idf.
  size_t memory_bytes() const;
};

// The `count` windows (0: all) sharing the most idf-weighted words with
// `sentence`, best first; ties keep the context's order.
std::vector<size_t> matching_windows(const GroundTruth& truth, std::string_view sentence, size_t count);

class HallucinationDetector {
 public:
  // `nli_dir` may be empty. Throws LoadError for a token model without a
  // hallucinated label or an NLI model without the three NLI labels.
  static std::shared_ptr<const HallucinationDetector> load(const std::filesystem::path& detector_dir,
                                                           const std::filesystem::path& nli_dir,
                                                           const DetectorOptions& options = {},
                                                           const PipelineOptions& pipeline = {});

  // InvalidInput for an empty context or invalid UTF-8; kTooLong above the
  // input limit. Thread-safe, as is everything here.
  std::shared_ptr<const GroundTruth> pin(std::string_view context, std::string_view question) const;

  // Judges `sentence`, which sits at byte `offset` of the answer, after
  // `answer_before` (the end of the answer before it).
  SentenceCheck check(const GroundTruth& truth, std::string_view answer_before, std::string_view sentence,
                      uint64_t offset) const;

  const DetectorOptions& options() const { return options_; }
  bool has_nli() const { return nli_ != nullptr; }
  ~HallucinationDetector();

 private:
  HallucinationDetector(std::shared_ptr<const TokenClassifier> tokens, std::shared_ptr<const SequenceClassifier> nli,
                        DetectorOptions options);
  void explain(const GroundTruth& truth, size_t best_window, std::string_view sentence,
               std::vector<HallucinationSpan>& spans) const;

  std::shared_ptr<const TokenClassifier> tokens_;
  std::shared_ptr<const SequenceClassifier> nli_;
  DetectorOptions options_;
  int64_t hallucinated_label_ = 1;
  int64_t nli_labels_[3] = {0, 1, 2};  // entailment, neutral, contradiction
};

// --- the rules, exposed for tests ------------------------------------------

// One answer token of one input: bytes of the answer part, P(hallucinated).
struct TokenScore {
  uint32_t begin = 0, end = 0;
  float score = 0;
};

// Lowest score per token over inputs (tokens matched by their bytes).
std::vector<TokenScore> lowest_scores(const std::vector<std::vector<TokenScore>>& per_input);

// Spans of `answer_part` from its token scores, for the tokens inside
// [sentence_begin, end of answer_part); offsets shifted by `offset` -
// sentence_begin (the answer's coordinates).
std::vector<HallucinationSpan> spans_from_scores(std::string_view answer_part, size_t sentence_begin,
                                                 const std::vector<TokenScore>& scores, uint64_t offset,
                                                 const DetectorOptions& options);

// The token model's input text(s) for a window, a question and an answer
// part: {prompt, answer part} (lettucedetect) or {single text, ""} (halugate).
std::pair<std::string, std::string> detector_input(DetectorTemplate input_template, std::string_view window,
                                                   std::string_view question, std::string_view answer_part);

}  // namespace semroute
