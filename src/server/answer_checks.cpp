#include "server/answer_checks.h"

#include <algorithm>

#include "semroute/error.h"
#include "server/answer_json.h"
#include "tasks/batcher.h"

namespace semroute {

struct AnswerChecks::Detector {
  std::shared_ptr<const HallucinationDetector> model;
  std::atomic<int64_t> in_flight{0};  // requests judging sentences with it
};

// One answer being checked: its AnswerStream and what it decided so far.
struct AnswerChecks::Stream {
  std::shared_ptr<Detector> detector;
  size_t windows_per_sentence;  // the context windows each sentence's check reads
  size_t bytes = 0;             // its pinned context's memory (counted against max_stream_bytes)
  AnswerStream answer;
  bool busy = false;                                // a request feeds it; guarded by AnswerChecks::mutex_
  std::chrono::steady_clock::time_point last_used;  // when its last feed ended; likewise
  size_t sentences = 0, flagged = 0;
  double max_score = 0;

  Stream(std::shared_ptr<Detector> d, size_t windows, size_t memory, AnswerStream a)
      : detector(std::move(d)), windows_per_sentence(windows), bytes(memory), answer(std::move(a)) {}

  nlohmann::json take(const std::vector<StreamEvent>& events) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& e : events) {
      ++sentences;
      flagged += e.kind != StreamEventKind::kOk;
      max_score = std::max(max_score, e.check.max_score);
      out.push_back(stream_event_json(e));
    }
    return out;
  }
  nlohmann::json summary() const {
    return {{"sentences", sentences}, {"flagged", flagged}, {"stopped", answer.stopped()}, {"max_score", max_score}};
  }
};

// A stream taken by one request for its feed: 404 when there is none, busy()
// while another request feeds it; on release it counts as used now.
class AnswerChecks::Feeding {
 public:
  Feeding(const AnswerChecks& checks, const std::string& id) : checks_(checks), id_(id) {
    const std::lock_guard<std::mutex> lock(checks_.mutex_);
    checks_.drop_idle(std::chrono::steady_clock::now());
    const auto it = checks_.streams_.find(id);
    if (it == checks_.streams_.end()) throw Error(ErrorCode::kNotFound, "no answer stream '" + id + "' (ended, or idle too long)");
    stream_ = it->second;
    if (stream_->busy) return;
    stream_->busy = owner_ = true;
  }
  ~Feeding() {
    if (!owner_) return;
    const std::lock_guard<std::mutex> lock(checks_.mutex_);
    stream_->busy = false;
    stream_->last_used = std::chrono::steady_clock::now();
  }
  Feeding(const Feeding&) = delete;
  Feeding& operator=(const Feeding&) = delete;

  bool busy() const { return !owner_; }
  const std::shared_ptr<Stream>& stream() const { return stream_; }
  // The stream leaves the table (finished, or it cannot go on).
  void end() const {
    const std::lock_guard<std::mutex> lock(checks_.mutex_);
    if (const auto it = checks_.streams_.find(id_); it != checks_.streams_.end()) checks_.forget(it);
  }

 private:
  const AnswerChecks& checks_;
  std::string id_;
  std::shared_ptr<Stream> stream_;
  bool owner_ = false;
};

namespace {

std::string optional_string(const nlohmann::json& request, const char* key) {
  const auto it = request.find(key);
  if (it == request.end() || it->is_null()) return "";
  if (!it->is_string()) throw InvalidInput(std::string("\"") + key + "\": expected a string");
  return it->get<std::string>();
}

std::string server_sent_event(const std::string& name, const nlohmann::json& data) {
  return "event: " + name + "\ndata: " + data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n\n";
}

Reply stream_busy(const std::string& id) {
  return error_reply(409, "stream_busy", "another request is feeding answer stream '" + id + "'");
}

// How a request's sentences are judged: its control checked and its budget of
// context windows charged before each, the forwards on the compute lane.
CheckRunner budgeted_runner(const RequestControl& control, size_t windows_per_sentence, size_t max_windows,
                            size_t& windows_read) {
  return [&control, windows_per_sentence, max_windows, &windows_read](const std::function<SentenceCheck()>& judge) {
    windows_read += windows_per_sentence;
    if (windows_read > max_windows)
      throw Error(ErrorCode::kTooLong, "the answer check would read more than " + std::to_string(max_windows) +
                                           " context windows (limits.max_check_windows: sentences x " +
                                           std::to_string(windows_per_sentence) + " windows each)");
    return control.on_lane(judge);
  };
}

}  // namespace

AnswerChecks::AnswerChecks(const std::map<std::string, ServedDetectorConfig>& detectors, const ServeLimits& limits)
    : max_streams_(limits.max_streams), max_stream_bytes_(limits.max_stream_bytes), max_queue_(limits.max_queue),
      max_windows_(limits.max_check_windows), idle_(limits.stream_idle_ms) {
  for (const auto& [name, d] : detectors) {
    auto served = std::make_shared<Detector>();
    try {
      served->model = HallucinationDetector::load(d.path, d.nli, d.options, d.pipeline);
    } catch (const Error& e) {
      throw LoadError("detectors." + name + ": " + e.what(), e.code());
    }
    detectors_.emplace(name, std::move(served));
  }
}

AnswerChecks::~AnswerChecks() = default;

std::vector<std::string> AnswerChecks::names() const {
  std::vector<std::string> out;
  for (const auto& [name, d] : detectors_) out.push_back(name);
  return out;
}

// A stream over the request's detector and context, as `format` says.
std::shared_ptr<AnswerChecks::Stream> AnswerChecks::open_stream(const nlohmann::json& request,
                                                                StreamFormat format) const {
  const std::string name = optional_string(request, "detector");
  const auto it = detectors_.find(name);
  if (it == detectors_.end()) throw Error(ErrorCode::kNotFound, "no detector '" + name + "'");
  if (request.find("context") == request.end()) throw InvalidInput("\"context\": missing (the answer's ground truth)");
  const HallucinationDetector& model = *it->second->model;
  StreamOptions options;
  options.format = format;
  options.stop_severity = severity_named(optional_string(request, "stop_at"));
  auto truth = model.pin(optional_string(request, "context"), optional_string(request, "question"));
  const size_t read = model.options().context_windows;
  const size_t windows = read == 0 ? truth->windows.size() : std::min(read, truth->windows.size());
  const size_t bytes = truth->memory_bytes();
  return std::make_shared<Stream>(it->second, std::max<size_t>(windows, 1), bytes,
                                  AnswerStream(it->second->model, std::move(truth), options));
}

Reply AnswerChecks::check(const nlohmann::json& request, const RequestControl& control) const {
  const bool sse = request.contains("stream");
  if (sse == request.contains("answer"))
    throw InvalidInput("give exactly one of \"answer\" (text) and \"stream\" (SSE bytes)");
  const auto stream = open_stream(request, sse ? StreamFormat::kSse : StreamFormat::kText);
  const QueueSlot slot(stream->detector->in_flight, max_queue_);
  if (slot.full()) return busy_reply("queue_full", "detector '" + optional_string(request, "detector") + "' has a full queue; retry shortly");
  size_t windows_read = 0;
  const CheckRunner run = budgeted_runner(control, stream->windows_per_sentence, max_windows_, windows_read);
  Reply reply;
  reply.content_type = "text/event-stream";
  const auto send = [&](const std::vector<StreamEvent>& events) {
    for (const auto& event : stream->take(events)) reply.body += server_sent_event(event["event"], event);
  };
  send(stream->answer.feed(optional_string(request, sse ? "stream" : "answer"), run));
  if (!stream->answer.stopped()) send(stream->answer.finish(run));
  reply.body += server_sent_event("done", stream->summary());
  return reply;
}

Reply AnswerChecks::open(const nlohmann::json& request) const {
  const std::string format = request.contains("format") ? optional_string(request, "format") : "sse";
  if (format != "sse" && format != "text") throw InvalidInput("\"format\": sse or text");
  auto stream = open_stream(request, format == "sse" ? StreamFormat::kSse : StreamFormat::kText);
  const auto now = std::chrono::steady_clock::now();
  stream->last_used = now;
  std::string id = random_id();
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    drop_idle(now);
    if (streams_.size() >= max_streams_)
      return busy_reply("too_many_streams", std::to_string(max_streams_) + " answer streams are open; retry shortly");
    if (stream_bytes_ + stream->bytes > max_stream_bytes_)
      return busy_reply("too_many_streams", "open answer streams hold " + std::to_string(stream_bytes_) +
                                                " bytes of context; this one would pass " +
                                                std::to_string(max_stream_bytes_) + " (limits.max_stream_bytes)");
    stream_bytes_ += stream->bytes;
    streams_.emplace(id, std::move(stream));
  }
  return json_reply({{"stream", id}, {"idle_timeout_ms", idle_.count()}}, 201);
}

void AnswerChecks::drop_idle(std::chrono::steady_clock::time_point now) const {
  for (auto it = streams_.begin(); it != streams_.end();)
    it = !it->second->busy && now - it->second->last_used > idle_ ? forget(it) : std::next(it);
}

AnswerChecks::StreamTable::iterator AnswerChecks::forget(StreamTable::iterator it) const {
  stream_bytes_ -= it->second->bytes;
  return streams_.erase(it);
}

// The events `chunk` completes (or, at_end, the last sentence's), judged for
// the request that holds the stream; any failure ends the stream.
Reply AnswerChecks::judge(const std::shared_ptr<Stream>& stream, const RequestControl& control, bool at_end,
                          std::string_view chunk) const {
  const QueueSlot slot(stream->detector->in_flight, max_queue_);
  if (slot.full()) return busy_reply("queue_full", "the stream's detector has a full queue; retry shortly");
  size_t windows_read = 0;
  const CheckRunner run = budgeted_runner(control, stream->windows_per_sentence, max_windows_, windows_read);
  if (at_end) {
    nlohmann::json events = stream->answer.stopped() ? nlohmann::json::array() : stream->take(stream->answer.finish(run));
    return json_reply({{"events", std::move(events)}, {"summary", stream->summary()}});
  }
  nlohmann::json events = stream->take(stream->answer.feed(chunk, run));
  return json_reply({{"events", std::move(events)}, {"stopped", stream->answer.stopped()}});
}

Reply AnswerChecks::feed(const std::string& id, std::string_view chunk, const RequestControl& control) const {
  const Feeding feeding(*this, id);
  if (feeding.busy()) return stream_busy(id);
  try {
    return judge(feeding.stream(), control, false, chunk);
  } catch (...) {
    feeding.end();  // a stream that failed mid-chunk cannot go on
    throw;
  }
}

Reply AnswerChecks::finish(const std::string& id, const RequestControl& control) const {
  const Feeding feeding(*this, id);
  if (feeding.busy()) return stream_busy(id);
  Reply reply;
  try {
    reply = judge(feeding.stream(), control, true, {});
  } catch (...) {
    feeding.end();
    throw;
  }
  if (reply.status != 429) feeding.end();  // a full queue: the client may ask again
  return reply;
}

}  // namespace semroute
