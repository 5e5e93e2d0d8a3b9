// Conditions of routing decisions, compiled from YAML to a tree at load and
// evaluated with short-circuiting that also skips model calls: a signal is
// computed only when a comparison still undecided needs it, and the branches
// whose signals are cheapest (or already computed) go first.
//
//   "domain == math"                  label comparisons: == != in [..] not in [..]
//   "jailbreak.risk >= 0.8"           numbers: == != < <= > >=
//   "pii contains EMAIL"              label sets: contains X, contains [X, Y] (any),
//                                     not contains …
//   "urgent" / "cache.hit == false"   booleans (a bare field means "is true")
//   {all: [..]} {any: [..]} {not: ..} {ref: name}   (a named condition)
//
// Every error names the YAML path ("decisions[2].when.any[1]: …").
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "router/signal.h"

namespace YAML {
class Node;
}

namespace semroute {

// The signals computed for one request, each at most once, with their
// latency: what a route's trace reports.
class SignalBoard {
 public:
  // `checkpoint`, if set, runs before each signal is computed and may throw
  // to abandon the route (a server's deadline or cancellation).
  SignalBoard(const SignalSet& signals, const RouteInput& input, std::function<void()> checkpoint = {})
      : signals_(signals), input_(input), checkpoint_(std::move(checkpoint)) {}

  struct Computed {
    SignalValues values;
    std::chrono::microseconds latency{0};
  };

  // The field, computing its signal on first use. Throws what the signal throws.
  const FieldValue& get(const std::string& signal, const std::string& field);
  // Computes the signal unless it has been.
  Computed& compute(const std::string& signal);
  // Records what a signal computed elsewhere (a parallel prefetch).
  void put(const std::string& signal, Computed computed) { computed_[signal] = std::move(computed); }
  bool computed(const std::string& signal) const { return computed_.count(signal) != 0; }
  const std::map<std::string, Computed>& all_computed() const { return computed_; }
  // Hands what was computed over (for the trace); the board is spent.
  std::map<std::string, Computed> release() { return std::move(computed_); }

 private:
  const SignalSet& signals_;
  const RouteInput& input_;
  std::function<void()> checkpoint_;
  std::map<std::string, Computed> computed_;
};

class Condition {
 public:
  virtual ~Condition() = default;
  // Whether it holds; comparisons that held are appended to `held` (their
  // text and confidence), for traces and the confidence of a decision.
  struct Held {
    std::string text;
    double confidence;
  };
  virtual bool holds(SignalBoard& board, std::vector<Held>& held) const = 0;
  // What evaluating it would still cost: the costs of its signals not yet
  // computed.
  virtual int pending_cost(const SignalBoard& board) const = 0;
  // Signals it may need.
  virtual void signals(std::vector<std::string>& out) const = 0;
};

using ConditionPtr = std::shared_ptr<const Condition>;

// Compiles conditions against the signals that exist; `named` are the
// reusable conditions ({ref: name}), compiled on first reference (cycles are
// an error).
class ConditionCompiler {
 public:
  ConditionCompiler(const SignalSet& signals, const YAML::Node& named_conditions);
  ~ConditionCompiler();
  // Throws LoadError naming `path`.
  ConditionPtr compile(const YAML::Node& node, const std::string& path);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Compiles one comparison ("jailbreak.risk >= 0.8") on its own (tests, CLI).
ConditionPtr compile_comparison(const std::string& text, const SignalSet& signals, const std::string& path);

}  // namespace semroute
