#include "server/answer_checks.h"

#include <algorithm>

#include "semroute/error.h"
#include "server/answer_json.h"
#include "tasks/batcher.h"

namespace semroute {

// One answer being checked: its AnswerStream and what it decided so far.
struct AnswerChecks::Stream {
  std::mutex feeding;  // one request feeds it at a time
  AnswerStream answer;
  std::chrono::steady_clock::time_point last_used;  // guarded by AnswerChecks::mutex_
  size_t sentences = 0, flagged = 0;
  double max_score = 0;

  explicit Stream(AnswerStream a) : answer(std::move(a)) {}

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

}  // namespace

AnswerChecks::AnswerChecks(const std::map<std::string, ServedDetectorConfig>& detectors, const ServeLimits& limits)
    : max_streams_(limits.max_streams), idle_(limits.stream_idle_ms) {
  for (const auto& [name, d] : detectors) {
    try {
      detectors_.emplace(name, HallucinationDetector::load(d.path, d.nli, d.options, d.pipeline));
    } catch (const Error& e) {
      throw LoadError("detectors." + name + ": " + e.what(), e.code());
    }
  }
}

AnswerChecks::~AnswerChecks() = default;

std::vector<std::string> AnswerChecks::names() const {
  std::vector<std::string> out;
  for (const auto& [name, d] : detectors_) out.push_back(name);
  return out;
}

namespace {

// An AnswerStream over the request's detector and context, as `format` says.
AnswerStream open_answer(const std::map<std::string, std::shared_ptr<const HallucinationDetector>>& detectors,
                         const nlohmann::json& request, StreamFormat format) {
  const std::string name = optional_string(request, "detector");
  const auto it = detectors.find(name);
  if (it == detectors.end()) throw Error(ErrorCode::kNotFound, "no detector '" + name + "'");
  if (request.find("context") == request.end()) throw InvalidInput("\"context\": missing (the answer's ground truth)");
  StreamOptions options;
  options.format = format;
  options.stop_severity = severity_named(optional_string(request, "stop_at"));
  return AnswerStream(it->second, it->second->pin(optional_string(request, "context"), optional_string(request, "question")),
                      options);
}

}  // namespace

Reply AnswerChecks::check(const nlohmann::json& request) const {
  const bool sse = request.contains("stream");
  if (sse == request.contains("answer"))
    throw InvalidInput("give exactly one of \"answer\" (text) and \"stream\" (SSE bytes)");
  Stream stream(open_answer(detectors_, request, sse ? StreamFormat::kSse : StreamFormat::kText));
  Reply reply;
  reply.content_type = "text/event-stream";
  const auto send = [&](const std::vector<StreamEvent>& events) {
    for (const auto& event : stream.take(events)) reply.body += server_sent_event(event["event"], event);
  };
  compute_lane().run([&] {  // the detector's forwards, on the process's compute lane
    send(stream.answer.feed(optional_string(request, sse ? "stream" : "answer")));
    if (!stream.answer.stopped()) send(stream.answer.finish());
  });
  reply.body += server_sent_event("done", stream.summary());
  return reply;
}

Reply AnswerChecks::open(const nlohmann::json& request) const {
  const std::string format = request.contains("format") ? optional_string(request, "format") : "sse";
  if (format != "sse" && format != "text") throw InvalidInput("\"format\": sse or text");
  auto stream = std::make_shared<Stream>(
      open_answer(detectors_, request, format == "sse" ? StreamFormat::kSse : StreamFormat::kText));
  const auto now = std::chrono::steady_clock::now();
  stream->last_used = now;
  std::string id = random_id();
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    drop_idle(now);
    if (streams_.size() >= max_streams_)
      return busy_reply("too_many_streams", std::to_string(max_streams_) + " answer streams are open; retry shortly");
    streams_.emplace(id, std::move(stream));
  }
  return json_reply({{"stream", id}, {"idle_timeout_ms", idle_.count()}}, 201);
}

std::shared_ptr<AnswerChecks::Stream> AnswerChecks::stream(const std::string& id) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  drop_idle(now);
  const auto it = streams_.find(id);
  if (it == streams_.end()) throw Error(ErrorCode::kNotFound, "no answer stream '" + id + "' (ended, or idle too long)");
  it->second->last_used = now;
  return it->second;
}

void AnswerChecks::drop_idle(std::chrono::steady_clock::time_point now) const {
  for (auto it = streams_.begin(); it != streams_.end();)
    it = now - it->second->last_used > idle_ ? streams_.erase(it) : std::next(it);
}

Reply AnswerChecks::feed(const std::string& id, std::string_view chunk) const {
  const auto s = stream(id);
  const std::unique_lock<std::mutex> feeding(s->feeding, std::try_to_lock);
  if (!feeding.owns_lock()) return error_reply(409, "stream_busy", "another request is feeding answer stream '" + id + "'");
  try {
    nlohmann::json events = compute_lane().run([&] { return s->take(s->answer.feed(chunk)); });
    return json_reply({{"events", std::move(events)}, {"stopped", s->answer.stopped()}});
  } catch (const Error&) {
    const std::lock_guard<std::mutex> lock(mutex_);
    streams_.erase(id);  // a malformed stream cannot go on
    throw;
  }
}

Reply AnswerChecks::finish(const std::string& id) const {
  const auto s = stream(id);
  const std::unique_lock<std::mutex> feeding(s->feeding, std::try_to_lock);
  if (!feeding.owns_lock()) return error_reply(409, "stream_busy", "another request is feeding answer stream '" + id + "'");
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    streams_.erase(id);
  }
  nlohmann::json events =
      s->answer.stopped() ? nlohmann::json::array() : compute_lane().run([&] { return s->take(s->answer.finish()); });
  return json_reply({{"events", std::move(events)}, {"summary", s->summary()}});
}

}  // namespace semroute
