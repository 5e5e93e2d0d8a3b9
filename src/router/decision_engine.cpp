#include "router/decision_engine.h"

#include <algorithm>

namespace semroute {

DecisionEngine::DecisionEngine(std::vector<Decision> decisions, Action default_action, Strategy strategy)
    : decisions_(std::move(decisions)), default_action_(std::move(default_action)), strategy_(strategy) {
  std::stable_sort(decisions_.begin(), decisions_.end(),
                   [](const Decision& a, const Decision& b) { return a.priority > b.priority; });
}

DecisionOutcome DecisionEngine::decide(SignalBoard& board) const {
  DecisionOutcome outcome;
  outcome.trace.reserve(decisions_.size());
  for (const auto& decision : decisions_) {
    DecisionTrace t;
    t.name = decision.name;
    const bool settled = strategy_ == Strategy::kPriority && outcome.decision != nullptr;
    if (!settled) {
      t.evaluated = true;
      t.matched = decision.when->holds(board, t.held);
      t.confidence = 1;
      for (const auto& h : t.held) t.confidence = std::min(t.confidence, h.confidence);
      if (t.matched && (outcome.decision == nullptr || t.confidence > outcome.confidence)) {
        outcome.decision = &decision;
        outcome.confidence = t.confidence;
      }
    }
    outcome.trace.push_back(std::move(t));
  }
  if (outcome.decision == nullptr) outcome.confidence = 1;
  return outcome;
}

}  // namespace semroute
