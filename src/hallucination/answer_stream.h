// An LLM's answer checked as it streams: fed chunks of an OpenAI SSE stream
// (or plain text deltas), an AnswerStream finds each sentence as soon as it
// is complete (sentence_splitter.h: the same sentences whatever the
// chunking), judges it against the request's pinned ground truth, and
// returns an event per sentence: ok, warn (with its unsupported spans) or
// stop (a span at least as severe as stop_severity: the caller ends the
// stream). Memory stays bounded for any stream length: the unfinished
// sentence (at most max_sentence_bytes + a short look-ahead), the end of
// the answer before it (answer_context_bytes) and one SSE event.
//
// detect() is the same over a whole answer, so a streamed answer and the
// one-shot check agree exactly.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hallucination/hallucination_detector.h"
#include "hallucination/sse_reader.h"
#include "tokenizers/unicode.h"

namespace semroute {

enum class StreamFormat { kText, kSse };

struct StreamOptions {
  StreamFormat format = StreamFormat::kText;
  int stop_severity = 0;  // a span of this severity or more stops the stream; 0: never
  size_t max_event_bytes = size_t{1} << 20;
};

enum class StreamEventKind { kOk, kWarn, kStop };
const char* stream_event_name(StreamEventKind kind);  // ok, warn, stop

// ok without spans, warn with spans, stop when a span reaches stop_severity (> 0).
StreamEventKind event_kind(const SentenceCheck& check, int stop_severity);

struct StreamEvent {
  StreamEventKind kind = StreamEventKind::kOk;
  SentenceCheck check;
};

// How each sentence's check runs: `judge()` wherever the caller wants it
// (the server: on its compute lane, after checking the request's deadline; it
// may throw to stop, which ends the stream). Empty: inline.
using CheckRunner = std::function<SentenceCheck(const std::function<SentenceCheck()>& judge)>;

class AnswerStream {
 public:
  AnswerStream(std::shared_ptr<const HallucinationDetector> detector, std::shared_ptr<const GroundTruth> truth,
               StreamOptions options = {});

  // Events for the sentences `chunk` completes. After an error (malformed
  // SSE, invalid UTF-8) or a stop, every later call throws InvalidInput.
  // Not thread-safe: one stream, one caller at a time.
  std::vector<StreamEvent> feed(std::string_view chunk, const CheckRunner& run = {});
  // The end of the answer: its last sentence is judged. (An SSE stream's
  // [DONE] ends it too; finish() then has nothing left.)
  std::vector<StreamEvent> finish(const CheckRunner& run = {});

  bool stopped() const { return stopped_; }
  uint64_t answer_bytes() const { return pending_base_ + pending_.size(); }
  // What the stream holds: the unfinished sentence, the answer context, an SSE event.
  size_t buffered_bytes() const { return pending_.size() + before_.size() + sse_.buffered_bytes(); }

 private:
  std::vector<StreamEvent> take_sentences(bool at_end, const CheckRunner& run);
  void remember(std::string_view text);
  void guard() const;

  std::shared_ptr<const HallucinationDetector> detector_;
  std::shared_ptr<const GroundTruth> truth_;
  StreamOptions options_;
  SseReader sse_;
  unicode::Utf8Pieces utf8_;   // every chunk's bytes checked as they come
  uint64_t stream_bytes_ = 0;  // bytes fed so far
  std::string pending_;        // the answer from pending_base_ on
  uint64_t pending_base_ = 0;
  std::string before_;         // the end of the answer before pending_
  bool stopped_ = false, failed_ = false, finished_ = false;
};

struct DetectionResult {
  std::vector<SentenceCheck> sentences;
  bool hallucinated = false;  // some sentence has a span
  double max_score = 0;
};

// Checks a whole answer (as AnswerStream over plain text).
DetectionResult detect(const std::shared_ptr<const HallucinationDetector>& detector, std::string_view context,
                       std::string_view question, std::string_view answer);

}  // namespace semroute
