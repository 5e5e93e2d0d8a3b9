// Signals of a router config (router/router_config.h):
//
//   kind        value ("")                  other fields
//   classifier  the top label               confidence, <label> (its probability); with
//                                           positive_labels: risk (their summed probability),
//                                           flagged (risk >= threshold)
//   entities    the entity types found      count (entities scoring >= threshold)
//   keywords    whether any keyword occurs  count (how many distinct ones), matches (which)
//   length      characters (code points)    bytes, tokens (with a tokenizer's model)
//   script      the dominant script         latin, cyrillic, greek, arabic, hebrew,
//                                           devanagari, han, kana, hangul, thai, other, none
//   meta        —                           any key of the caller's metadata (a label;
//                                           "" when the caller did not send it)
//   cache       whether the semantic cache  similarity (of the closest cached prompt)
//               holds a similar prompt      (built in when the config has a cache)
//   intents     the best intent ("none"     score, margin (over the runner-up),
//               below the threshold)        <intent> (its score, when in the top k)
//   unified     —                           <task> (a label, or a set of entity types),
//                                           <task>.confidence / .risk / .flagged /
//                                           .<label> / .count: every task in one call
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "router/signal.h"

namespace semroute {

class Embedder;
struct IntentSet;
class SemanticCache;
class SequenceClassifier;
class TokenClassifier;
class Tokenizer;
class UnifiedClassifier;

// Relative costs: no model, then a model forward pass.
inline constexpr int kCostNoModel = 0;
inline constexpr int kCostTokenizer = 1;
inline constexpr int kCostModel = 10;

std::shared_ptr<const Signal> classifier_signal(const std::string& name, std::shared_ptr<const SequenceClassifier> model,
                                                std::vector<std::string> positive_labels, double threshold);
std::shared_ptr<const Signal> entities_signal(const std::string& name, std::shared_ptr<const TokenClassifier> model,
                                              double threshold);
// `patterns` are PCRE2 regular expressions when `regex`, else literal
// keywords matched as whole words. Throws LoadError naming `name`.
std::shared_ptr<const Signal> keywords_signal(const std::string& name, const std::vector<std::string>& patterns,
                                              bool regex, bool case_sensitive);
// `tokenizer` may be null (then no `tokens` field).
std::shared_ptr<const Signal> length_signal(const std::string& name, std::shared_ptr<const Tokenizer> tokenizer);
std::shared_ptr<const Signal> script_signal(const std::string& name);
std::shared_ptr<const Signal> metadata_signal(const std::string& name);
// Looks the text's embedding up in every partition of `cache`.
std::shared_ptr<const Signal> cache_signal(const std::string& name, std::shared_ptr<const Embedder> embedder,
                                           std::shared_ptr<SemanticCache> cache);

// The tasks of a unified classifier (its YAML), answered in one call: the
// LoRA tasks share one multi-task engine pass over their base.
std::shared_ptr<const Signal> unified_signal(const std::string& name, std::shared_ptr<const UnifiedClassifier> unified);

// Few-shot intents, or named anchors (an anchor is an intent whose examples
// are its texts): k-nearest neighbours over the examples' embeddings.
std::shared_ptr<const Signal> intents_signal(const std::string& name, std::shared_ptr<const Embedder> embedder,
                                             const IntentSet& set);

// `signal` with a time budget: past it, the request goes on without the
// signal (its fields read empty: false, 0, no label) and `<signal>.timed_out`
// is true; the computation finishes in the background and is dropped. While
// 16 computations of the signal still run past their budgets, it is not
// started again (a stalled model cannot pile up threads).
std::shared_ptr<const Signal> with_budget(std::shared_ptr<const Signal> signal, std::chrono::milliseconds budget);

// `signal` computed on the prompt's skeleton (RouteInput::compressed) instead
// of the whole prompt: the router's `compressed: true`.
std::shared_ptr<const Signal> on_skeleton(std::shared_ptr<const Signal> signal);

// The router's prompt compression as a signal: whether the prompt was
// compressed (the signal itself), `tokens` of the skeleton, `ratio` of its
// bytes to the prompt's.
std::shared_ptr<const Signal> compression_signal(const std::string& name);

// The text's embedding by `embedder` (RouteInput::embeddings), computed on first use.
std::shared_ptr<const std::vector<float>> prompt_embedding(const RouteInput& input, const Embedder& embedder);

}  // namespace semroute
