#include "hallucination/answer_stream.h"

#include "compression/sentence_splitter.h"
#include "semroute/error.h"
#include "tokenizers/unicode.h"

namespace semroute {

const char* stream_event_name(StreamEventKind kind) {
  switch (kind) {
    case StreamEventKind::kOk: return "ok";
    case StreamEventKind::kWarn: return "warn";
    case StreamEventKind::kStop: return "stop";
  }
  return "ok";
}

StreamEventKind event_kind(const SentenceCheck& check, int stop_severity) {
  StreamEventKind kind = StreamEventKind::kOk;
  for (const auto& span : check.spans) {
    if (stop_severity > 0 && span.severity >= stop_severity) return StreamEventKind::kStop;
    kind = StreamEventKind::kWarn;
  }
  return kind;
}

AnswerStream::AnswerStream(std::shared_ptr<const HallucinationDetector> detector,
                           std::shared_ptr<const GroundTruth> truth, StreamOptions options)
    : detector_(std::move(detector)), truth_(std::move(truth)), options_(options), sse_(options.max_event_bytes) {
  if (!detector_ || !truth_) throw InvalidInput("answer stream: a detector and a pinned ground truth are required");
}

void AnswerStream::guard() const {
  if (failed_) throw InvalidInput("answer stream: an earlier chunk failed; open a new stream");
  if (stopped_) throw InvalidInput("answer stream: the stream was stopped");
  if (finished_) throw InvalidInput("answer stream: the stream is finished");
}

std::vector<StreamEvent> AnswerStream::feed(std::string_view chunk, const CheckRunner& run) {
  guard();
  try {
    if (const size_t bad = utf8_.feed(chunk); bad != std::string_view::npos)
      throw InvalidInput("answer stream: invalid UTF-8 at byte " + std::to_string(bad) + " of this chunk (byte " +
                             std::to_string(stream_bytes_ + bad) + " of the stream)",
                         ErrorCode::kInvalidUtf8);
    stream_bytes_ += chunk.size();
    if (options_.format == StreamFormat::kSse) {
      sse_.feed(chunk, pending_);
      finished_ = sse_.done();  // [DONE]: the answer is complete
    } else {
      pending_.append(chunk);
    }
    return take_sentences(finished_, run);
  } catch (...) {
    failed_ = true;
    throw;
  }
}

std::vector<StreamEvent> AnswerStream::finish(const CheckRunner& run) {
  if (finished_ && !failed_ && !stopped_) return {};  // [DONE] already ended it
  guard();
  try {
    if (!utf8_.complete())
      throw InvalidInput("answer stream: the stream ends inside a UTF-8 character", ErrorCode::kInvalidUtf8);
    if (options_.format == StreamFormat::kSse) sse_.finish(pending_);
    finished_ = true;
    return take_sentences(true, run);
  } catch (...) {
    failed_ = true;
    throw;
  }
}

// Keeps the last answer_context_bytes of the answer seen, from a character's start.
void AnswerStream::remember(std::string_view text) {
  before_.append(text);
  const size_t keep = detector_->options().answer_context_bytes;
  if (before_.size() <= keep) return;
  size_t cut = before_.size() - keep;
  while (cut < before_.size() && unicode::is_continuation_byte(before_[cut])) ++cut;
  before_.erase(0, cut);
}

std::vector<StreamEvent> AnswerStream::take_sentences(bool at_end, const CheckRunner& run) {
  const SplitterOptions splitter{detector_->options().max_sentence_bytes};
  std::vector<StreamEvent> events;
  for (;;) {
    const size_t begin = skip_whitespace(pending_, 0);
    const auto end = begin < pending_.size() ? find_unit_end(pending_, begin, at_end, splitter) : std::nullopt;
    if (!end) {  // keep what is unfinished (and no more than it)
      remember(std::string_view(pending_).substr(0, begin));
      pending_.erase(0, begin);
      pending_base_ += begin;
      break;
    }
    const std::string_view sentence = std::string_view(pending_).substr(begin, *end - begin);
    if (const size_t bad = unicode::find_invalid_utf8(sentence); bad != std::string_view::npos)
      throw InvalidInput("answer stream: invalid UTF-8 at byte " + std::to_string(pending_base_ + begin + bad) +
                             " of the answer",
                         ErrorCode::kInvalidUtf8);
    remember(std::string_view(pending_).substr(0, begin));
    StreamEvent event;
    const auto judge = [&] { return detector_->check(*truth_, before_, sentence, pending_base_ + begin); };
    event.check = run ? run(judge) : judge();
    event.kind = event_kind(event.check, options_.stop_severity);
    remember(sentence);
    pending_.erase(0, *end);
    pending_base_ += *end;
    const bool stop = event.kind == StreamEventKind::kStop;
    events.push_back(std::move(event));
    if (stop) {
      stopped_ = true;
      break;
    }
  }
  return events;
}

DetectionResult detect(const std::shared_ptr<const HallucinationDetector>& detector, std::string_view context,
                       std::string_view question, std::string_view answer) {
  if (const size_t bad = unicode::find_invalid_utf8(answer); bad != std::string_view::npos)
    throw InvalidInput("answer: invalid UTF-8 at byte " + std::to_string(bad), ErrorCode::kInvalidUtf8);
  AnswerStream stream(detector, detector->pin(context, question));
  DetectionResult result;
  const auto collect = [&](std::vector<StreamEvent> events) {
    for (auto& e : events) {
      result.hallucinated = result.hallucinated || !e.check.spans.empty();
      result.max_score = std::max(result.max_score, e.check.max_score);
      result.sentences.push_back(std::move(e.check));
    }
  };
  collect(stream.feed(answer));
  collect(stream.finish());
  return result;
}

}  // namespace semroute
