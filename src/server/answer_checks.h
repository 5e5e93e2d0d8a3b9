// /v1/check-answer: an LLM's answer judged sentence by sentence against the
// request's context by a served hallucination detector
// (hallucination/answer_stream.h), in two forms:
//  - one request: {"detector", "context", "question"?, "answer" (text) or
//    "stream" (an OpenAI SSE stream's bytes), "stop_at"?} in; server-sent
//    events out, one per sentence (ok, warn, stop) and a final `done`;
//  - a stream living across requests, for a gateway that checks the answer
//    while the LLM sends it and cuts it at a `stop`:
//      POST   /v1/check-answer/streams      {detector, context, question?, format: sse|text, stop_at?}
//             -> 201 {"stream": ID}
//      POST   /v1/check-answer/streams/ID   the answer's next bytes -> {"events": [...], "stopped"}
//      DELETE /v1/check-answer/streams/ID   -> the last sentence's events and the summary; the stream ends
// A stream is fed by one request at a time (409 while another feeds it);
// streams not fed for stream_idle_ms (a feed counts until it ends) are
// dropped; at most max_streams live, holding at most max_stream_bytes of
// pinned contexts (429 beyond). The context is pinned (tokenized) once, when
// the stream opens.
//
// Every request that judges sentences holds a slot of its detector's queue
// (max_queue), runs each sentence's forwards as its own turn on the compute
// lane after checking the request's deadline and cancellation, and may read
// at most max_check_windows context windows in all (413-like too_long
// beyond); a feed stopped by any of these ends its stream.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "hallucination/answer_stream.h"
#include "server/reply.h"
#include "runtime/request_control.h"
#include "server/serve_config.h"

namespace semroute {

class AnswerChecks {
 public:
  // Loads every detector the config names (LoadError naming the field).
  AnswerChecks(const std::map<std::string, ServedDetectorConfig>& detectors, const ServeLimits& limits);
  ~AnswerChecks();

  Reply check(const nlohmann::json& request, const RequestControl& control) const;
  Reply open(const nlohmann::json& request) const;
  Reply feed(const std::string& id, std::string_view chunk, const RequestControl& control) const;
  Reply finish(const std::string& id, const RequestControl& control) const;

  std::vector<std::string> names() const;

  struct Detector;  // a loaded detector and its queue

 private:
  struct Stream;
  class Feeding;
  std::shared_ptr<Stream> open_stream(const nlohmann::json& request, StreamFormat format) const;
  Reply judge(const std::shared_ptr<Stream>& stream, const RequestControl& control, bool at_end,
              std::string_view chunk) const;
  using StreamTable = std::map<std::string, std::shared_ptr<Stream>>;
  void drop_idle(std::chrono::steady_clock::time_point now) const;  // with mutex_ held
  StreamTable::iterator forget(StreamTable::iterator it) const;     // likewise

  std::map<std::string, std::shared_ptr<Detector>> detectors_;
  size_t max_streams_, max_stream_bytes_, max_queue_, max_windows_;
  std::chrono::milliseconds idle_;
  mutable std::mutex mutex_;
  mutable StreamTable streams_;
  mutable size_t stream_bytes_ = 0;  // of the streams in the table
};

}  // namespace semroute
