#include "router/router.h"

#include <algorithm>
#include <cstdio>

#include "core/file_input.h"
#include "core/parallel.h"
#include "hallucination/answer_stream.h"
#include "router/builtin_signals.h"
#include "router/semantic_cache.h"
#include "semroute/error.h"
#include "tokenizers/tokenizer.h"
#include "tokenizers/unicode.h"

namespace semroute {
namespace {

using Clock = std::chrono::steady_clock;

// A request holds at most one text of Tokenizer::kMaxInputBytes, plus the rest.
constexpr size_t kMaxRequestBytes = Tokenizer::kMaxInputBytes + (size_t{16} << 20);

// A JSON body (a request, or an answer to cache): size and nesting checked
// before parsing; errors name `what`.
RequestJson parse_body(std::string_view json, const std::string& what) {
  if (json.size() > kMaxRequestBytes)
    throw Error(ErrorCode::kTooLong, what + ": " + std::to_string(json.size()) + " bytes exceeds the limit of " +
                                         std::to_string(kMaxRequestBytes));
  try {
    check_json_nesting(json, what);
  } catch (const LoadError& e) {
    throw Error(ErrorCode::kInvalidArgument, e.what());
  }
  try {
    return RequestJson::parse(json.begin(), json.end());
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorCode::kInvalidArgument, what + ": not valid JSON (" + e.what() + ")");
  }
}

void check_text(const std::string& text) {
  if (text.empty()) throw Error(ErrorCode::kInvalidArgument, "chat request: the user message is empty");
  if (text.size() > Tokenizer::kMaxInputBytes)
    throw Error(ErrorCode::kTooLong, "chat request: the user message is " + std::to_string(text.size()) +
                                         " bytes, above the limit of " + std::to_string(Tokenizer::kMaxInputBytes));
  const size_t bad = unicode::find_invalid_utf8(text);
  if (bad != std::string::npos)
    throw Error(ErrorCode::kInvalidUtf8, "chat request: the user message is not valid UTF-8 (byte " +
                                             std::to_string(bad) + ")");
}

// What a blocked request gets instead of an answer: a chat completion whose
// message is the reason (finish_reason "content_filter").
RequestJson blocked_response(const std::string& reason) {
  return RequestJson{{"id", "semroute-blocked"},
                     {"object", "chat.completion"},
                     {"model", "semroute"},
                     {"choices", RequestJson::array({RequestJson{
                                     {"index", 0},
                                     {"message", RequestJson{{"role", "assistant"}, {"content", reason}}},
                                     {"finish_reason", "content_filter"}}})},
                     {"usage", RequestJson{{"prompt_tokens", 0}, {"completion_tokens", 0}, {"total_tokens", 0}}}};
}

std::vector<SignalTrace> signal_traces(const SignalSet& signals, SignalBoard& board) {
  std::map<std::string, SignalBoard::Computed> computed = board.release();
  std::vector<SignalTrace> traces;
  traces.reserve(signals.size());
  for (const auto& [name, signal] : signals) {
    SignalTrace t;
    t.name = name;
    const auto it = computed.find(name);
    if (it != computed.end()) {
      t.computed = true;
      t.latency = it->second.latency;
      t.values = std::move(it->second.values);
    }
    traces.push_back(std::move(t));
  }
  return traces;
}

std::string milliseconds(std::chrono::microseconds us) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f ms", static_cast<double>(us.count()) / 1000.0);
  return text;
}

}  // namespace

Router::Router(SignalSet signals, DecisionEngine engine, std::vector<std::string> auto_models, RouterParts parts)
    : signals_(std::move(signals)), engine_(std::move(engine)), auto_models_(std::move(auto_models)),
      parts_(std::move(parts)) {
  if (!parts_.parallel) return;
  std::vector<std::string> referenced;
  for (const auto& d : engine_.decisions()) d.when->signals(referenced);
  std::sort(referenced.begin(), referenced.end());
  referenced.erase(std::unique(referenced.begin(), referenced.end()), referenced.end());
  for (const auto& name : referenced)
    if (signals_.at(name)->cost() >= kCostModel) prefetched_.push_back(name);
}

// Computes the prefetched signals at once on TBB's threads (the caller takes
// part; TBB's threads persist, and with them each one's OpenMP team, where a
// thread per signal would start both anew on every request). Each signal gets
// its own copy of the input: the embeddings memo is not shared between threads.
void Router::prefetch(const RouteInput& input, SignalBoard& board) const {
  std::vector<SignalBoard::Computed> computed(prefetched_.size());
  parallel_for_each(prefetched_.size(), [&](size_t i) {
    const RouteInput copy = input.copy();
    const auto start = Clock::now();
    computed[i].values = signals_.at(prefetched_[i])->compute(copy);
    computed[i].latency = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
  });
  for (size_t i = 0; i < prefetched_.size(); ++i) board.put(prefetched_[i], std::move(computed[i]));
}

RouteResult Router::route_json(std::string_view request_json, const std::map<std::string, std::string>& metadata,
                               const RouteOptions& options) const {
  return route(parse_body(request_json, "chat request"), metadata, options);
}

RouteResult Router::route(const RequestJson& request, const std::map<std::string, std::string>& metadata,
                          const RouteOptions& options) const {
  const auto start = Clock::now();
  RouteInput input{request_text(request), metadata, {}};
  check_text(input.text);
  input.compressor = parts_.compressor.get();
  SignalBoard board(signals_, input, options.checkpoint);
  if (!prefetched_.empty()) {
    if (options.checkpoint) options.checkpoint();
    if (input.compressor) input.compressed();  // once, before the threads share it
    prefetch(input, board);
  }
  if (options.all_signals)
    for (const auto& [name, signal] : signals_) board.compute(name);
  DecisionOutcome outcome = engine_.decide(board);
  const Action& action = outcome.decision ? outcome.decision->action : engine_.default_action();

  RouteResult result;
  result.decision = outcome.decision ? outcome.decision->name : "default";
  result.confidence = outcome.confidence;
  result.request = request;
  result.headers = action.headers;
  result.headers["x-semroute-decision"] = result.decision;
  if (action.block) {
    result.blocked = true;
    result.block_reason = action.block_reason;
    result.response = blocked_response(action.block_reason);
    result.headers["x-semroute-blocked"] = "true";
  } else {
    apply_action(action, auto_models_, result.request);
    if (action.cache && parts_.cache.store) {
      if (options.checkpoint) options.checkpoint();
      look_up_answer(input, result);
    }
    if (action.check_answer && parts_.detector) {
      result.check_answer = true;
      result.headers["x-semroute-check-answer"] = "true";
    }
  }
  result.decisions = std::move(outcome.trace);
  result.signals = signal_traces(signals_, board);
  result.latency = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
  return result;
}

// Serves the decision's cached answer for a similar prompt, or keeps what
// store_answer needs to cache the model's.
void Router::look_up_answer(const RouteInput& input, RouteResult& result) const {
  const auto embedding = prompt_embedding(input, *parts_.cache.embedder);
  const auto hit = parts_.cache.store->lookup(result.decision, *embedding);
  // (A shared store may hold what another writer put there: an answer that
  // does not parse is a miss.)
  RequestJson answer;
  if (hit) {
    try {
      answer = parse_body(hit->response, "cached answer");
    } catch (const Error&) {
    }
  }
  if (hit && answer.is_object()) {
    result.cache_hit = true;
    result.cache_similarity = hit->similarity;
    result.response = std::move(answer);
    result.headers["x-semroute-cache"] = "hit";
  } else {
    result.cache_partition = result.decision;
    result.cache_embedding = embedding;
    result.headers["x-semroute-cache"] = "miss";
  }
}

bool Router::store_answer(const RouteResult& route, std::string_view response_json) const {
  if (!parts_.cache.store || !route.cache_embedding) return false;
  const RequestJson response = parse_body(response_json, "answer");
  if (!response.is_object()) throw Error(ErrorCode::kInvalidArgument, "answer: not a JSON object");
  return parts_.cache.store->store(route.cache_partition, *route.cache_embedding, response.dump());
}

std::unique_ptr<AnswerStream> Router::check_answer(const RouteResult& route, std::string_view context, bool sse) const {
  if (!parts_.detector) throw InvalidInput("the router config has no 'hallucination:' section");
  const std::string truth = context.empty() ? request_ground_truth(route.request) : std::string(context);
  if (truth.find_first_not_of(" \t\r\n") == std::string::npos)
    throw InvalidInput("no ground truth to check the answer against: the request has no tool messages and no context "
                       "was given");
  StreamOptions options;
  options.format = sse ? StreamFormat::kSse : StreamFormat::kText;
  options.stop_severity = parts_.stop_severity;
  return std::make_unique<AnswerStream>(parts_.detector, parts_.detector->pin(truth, request_text(route.request)),
                                        options);
}

RequestJson RouteResult::to_json() const {
  RequestJson out{{"decision", decision}, {"confidence", confidence}};
  const auto model = request.find("model");
  out["model"] = model != request.end() ? *model : RequestJson();
  out["blocked"] = blocked;
  if (blocked) out["reason"] = block_reason;
  if (cache_embedding || cache_hit) out["cache"] = cache_hit ? "hit" : "miss";
  if (cache_hit) out["cache_similarity"] = cache_similarity;
  if (check_answer) out["check_answer"] = true;
  if (blocked || cache_hit) out["response"] = response;
  out["request"] = request;
  out["headers"] = headers;
  RequestJson decisions_json = RequestJson::array();
  for (const auto& d : decisions) {
    RequestJson held = RequestJson::array();
    for (const auto& h : d.held) held.push_back(h.text);
    decisions_json.push_back({{"name", d.name}, {"evaluated", d.evaluated}, {"matched", d.matched},
                              {"confidence", d.confidence}, {"held", held}});
  }
  RequestJson signals_json = RequestJson::array();
  for (const auto& s : signals) {
    RequestJson entry{{"name", s.name}, {"computed", s.computed}};
    if (s.computed) {
      RequestJson values = RequestJson::object();
      for (const auto& [field, value] : s.values) values[field] = value.to_string();
      entry["values"] = std::move(values);
      entry["latency_us"] = s.latency.count();
    }
    signals_json.push_back(entry);
  }
  out["trace"] = {{"decisions", decisions_json}, {"signals", signals_json}, {"latency_us", latency.count()}};
  return out;
}

std::string RouteResult::to_text() const {
  char confidence_text[32];
  std::snprintf(confidence_text, sizeof confidence_text, "%.2f", confidence);
  std::string out = "decision: " + decision + " (confidence " + confidence_text + ")\n";
  if (blocked) {
    out += "blocked: " + block_reason + "\n";
  } else if (cache_hit) {
    out += "answered from the cache (similarity " + std::to_string(cache_similarity) + ")\n";
  } else {
    const auto model = request.find("model");
    out += "model: " + (model != request.end() && model->is_string() ? model->get<std::string>() : "(unset)") + "\n";
  }
  out += "signals:\n";
  for (const auto& s : signals) {
    if (!s.computed) {
      out += "  " + s.name + ": skipped\n";
      continue;
    }
    out += "  " + s.name + " (" + milliseconds(s.latency) + "):";
    for (const auto& [field, value] : s.values) out += " " + (field.empty() ? "" : field + "=") + value.to_string();
    out += "\n";
  }
  out += "decisions:\n";
  for (const auto& d : decisions) {
    out += "  " + d.name + ": " + (!d.evaluated ? "not evaluated" : d.matched ? "matched" : "no");
    for (size_t i = 0; i < d.held.size(); ++i) out += (i ? "; " : " (") + d.held[i].text;
    out += d.held.empty() ? "\n" : ")\n";
  }
  for (const auto& [name, value] : headers) out += "header " + name + ": " + value + "\n";
  out += "latency: " + milliseconds(latency) + "\n";
  return out;
}

}  // namespace semroute
