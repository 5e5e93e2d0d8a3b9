// The router: a YAML config of signals, decisions and a default action;
// route() takes an OpenAI chat-completions request (and the caller's
// metadata), computes only the signals the decisions still need, and answers
// with the decision, the rewritten request, headers and a trace.
//
//   auto_models: [auto]          # request models the router may replace (default [auto])
//   strategy: priority           # or confidence (router/decision_engine.h)
//   device: cpu                  # optional; dtype: float32 | int8 | auto | bfloat16
//   signals:                     # see router/builtin_signals.h for kinds and fields
//     domain:    {kind: classifier, model: models/domain}
//     jailbreak: {kind: classifier, model: models/jailbreak, positive_labels: [jailbreak], threshold: 0.5}
//     pii:       {kind: entities, model: models/pii, threshold: 0.5}
//     urgent:    {kind: keywords, keywords: [urgent, asap]}    # regex: true, case_sensitive: true
//     length:    {kind: length, tokenizer: models/domain}       # built in without tokens
//   conditions:                  # named, reusable: {ref: name}
//     private: "pii contains [EMAIL, PHONE_NUMBER]"
//   decisions:
//     - name: block_jailbreak
//       priority: 100
//       when: jailbreak.flagged
//       block: the request looks like a jailbreak attempt
//     - name: math
//       priority: 10
//       when: {all: ["domain == math", "domain.confidence >= 0.5"]}
//       model: math-expert
//       system_prompt: You are a mathematician.
//       system_prompt_mode: insert      # replace | prepend
//       reasoning_effort: high
//       max_tokens: 4096                # a cap
//       headers: {x-route-tier: expert}
//   default: {model: general}
//   parallel: false              # true: start every model signal at once
//   (any signal may set timeout_ms: past it the request goes on without it)
//   cache:                       # optional: a semantic cache of answers
//     embedding_model: models/multitask/base
//     threshold: 0.95            # cosine for a hit
//     ttl_seconds: 3600
//     capacity: 10000
//   (and `cache: true` in the decisions whose answers may be cached)
//   compression:                 # optional: long prompts reduced to a skeleton
//     max_tokens: 512            # for the signals marked `compressed: true`
//     tokenizer: models/domain   # counts the budget (else words and marks)
//   hallucination:               # optional: answers checked against tool results
//     model: models/halluc       # a token classifier (supported / hallucinated)
//     nli: models/nli            # optional NLI model explaining each span
//     stop_severity: 4           # 0: never stop a stream
//   (and `check_answer: true` in the decisions whose answers are checked)
//
// `length`, `script` and `meta` exist without being declared. Paths are
// relative to the YAML file; every error names the file and the field.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "router/decision_engine.h"
#include "router/request_rewrite.h"
#include "router/signal.h"

namespace semroute {

class AnswerStream;
class Embedder;
class HallucinationDetector;
class PromptCompressor;
class SemanticCache;
struct StreamOptions;

// The router's semantic cache and the model that embeds prompts for it.
struct RouterCache {
  std::shared_ptr<const Embedder> embedder;
  std::shared_ptr<SemanticCache> store;
};

struct SignalTrace {
  std::string name;
  bool computed = false;                    // false: no condition needed it
  SignalValues values;                       // formatted only when a trace is asked for
  std::chrono::microseconds latency{0};
};

struct RouteResult {
  std::string decision;  // the decision's name, or "default"
  double confidence = 1;
  bool blocked = false;
  std::string block_reason;
  bool cache_hit = false;  // the response is a cached answer
  float cache_similarity = 0;
  RequestJson request;   // rewritten (unchanged when blocked)
  RequestJson response;  // when blocked or a cache hit: the answer to return instead of calling a model
  std::map<std::string, std::string> headers;
  std::vector<DecisionTrace> decisions;
  std::vector<SignalTrace> signals;
  std::chrono::microseconds latency{0};
  bool check_answer = false;  // the decision asks for the answer to be checked (Router::check_answer)
  // For Router::store_answer after a cache miss (null otherwise).
  std::string cache_partition;
  std::shared_ptr<const std::vector<float>> cache_embedding;

  // {"decision", "confidence", "model", "blocked", "reason", "request",
  //  "response", "headers", "trace": {"decisions": [...], "signals": [...]}}
  RequestJson to_json() const;
  // A readable trace for people (the CLI).
  std::string to_text() const;
};

// The router's optional parts beside signals and decisions.
struct RouterParts {
  RouterCache cache;
  // `compression:`: signals marked `compressed` read the prompt's skeleton.
  std::shared_ptr<const PromptCompressor> compressor;
  // `hallucination:`: checks the answers of decisions with `check_answer: true`.
  std::shared_ptr<const HallucinationDetector> detector;
  int stop_severity = 0;
  bool parallel = false;
};

struct RouteOptions {
  // Compute every signal before deciding (to see them all in the trace, or
  // to measure what lazy evaluation saves); the decision is the same.
  bool all_signals = false;
  // Runs before each signal is computed and before the cache's lookup; it may
  // throw to abandon the route (the server's deadline and cancellation).
  std::function<void()> checkpoint;
};

class Router {
 public:
  // Throws LoadError naming the file and the field.
  static std::shared_ptr<const Router> load(const std::filesystem::path& yaml);
  // `parallel`: the model signals the decisions may need all start at once
  // (lower latency, more compute); otherwise they run lazily, one by one.
  Router(SignalSet signals, DecisionEngine engine, std::vector<std::string> auto_models, RouterParts parts = {});

  // Thread-safe. Throws Error: kInvalidArgument for a request that is not a
  // chat request, kInvalidUtf8 / kTooLong for its text, what signals throw.
  RouteResult route(const RequestJson& request, const std::map<std::string, std::string>& metadata = {},
                    const RouteOptions& options = {}) const;
  // Parses `request_json` first (size and nesting checked).
  RouteResult route_json(std::string_view request_json, const std::map<std::string, std::string>& metadata = {},
                         const RouteOptions& options = {}) const;

  // After a cache miss of a decision with `cache: true`, stores the answer
  // the model gave (a chat.completion JSON object) for similar prompts.
  // Returns false when the route has nothing to store or the answer is
  // larger than the cache's max_bytes. Thread-safe.
  bool store_answer(const RouteResult& route, std::string_view response_json) const;

  // A stream that checks the model's answer to a routed request as it
  // arrives (hallucination/answer_stream.h), against `context` or, when
  // empty, the request's tool messages; the question is the prompt. sse:
  // the answer comes as the raw SSE stream. InvalidInput when the config has
  // no `hallucination:` section or there is no ground truth. Thread-safe.
  std::unique_ptr<AnswerStream> check_answer(const RouteResult& route, std::string_view context, bool sse) const;
  const HallucinationDetector* detector() const { return parts_.detector.get(); }

  const SignalSet& signals() const { return signals_; }
  const DecisionEngine& engine() const { return engine_; }

 private:
  void look_up_answer(const RouteInput& input, RouteResult& result) const;
  void prefetch(const RouteInput& input, SignalBoard& board) const;

  SignalSet signals_;
  DecisionEngine engine_;
  std::vector<std::string> auto_models_;
  RouterParts parts_;
  std::vector<std::string> prefetched_;  // with `parallel`: the model signals decisions refer to
};

}  // namespace semroute
