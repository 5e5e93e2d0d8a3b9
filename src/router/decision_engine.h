// Routing decisions: each a name, a priority, a condition tree and an action
// (router/request_rewrite.h), plus a default. Strategies:
//   priority   — decisions in order of priority (then of the file); the first
//                whose condition holds wins and the rest are never evaluated
//                (nor the signals only they need);
//   confidence — every decision is evaluated; among those that hold, the one
//                whose held comparisons are surest wins (the least confident
//                of its comparisons: a classifier's probability for the
//                label compared, 1 for exact facts); ties go to priority.
#pragma once

#include <string>
#include <vector>

#include "router/condition.h"
#include "router/request_rewrite.h"

namespace semroute {

enum class Strategy { kPriority, kConfidence };

struct Decision {
  std::string name;
  int priority = 0;
  ConditionPtr when;  // never null
  Action action;
};

// What the engine evaluated for one request.
struct DecisionTrace {
  std::string name;
  bool evaluated = false;  // false: skipped (a decision before it already won)
  bool matched = false;
  double confidence = 0;
  std::vector<Condition::Held> held;  // the comparisons that made it match
};

struct DecisionOutcome {
  const Decision* decision = nullptr;  // null: the default action
  double confidence = 1;
  std::vector<DecisionTrace> trace;    // in evaluation order
};

class DecisionEngine {
 public:
  // `decisions` in file order; they are evaluated by priority (descending).
  DecisionEngine(std::vector<Decision> decisions, Action default_action, Strategy strategy);

  DecisionOutcome decide(SignalBoard& board) const;
  const Action& default_action() const { return default_action_; }
  const std::vector<Decision>& decisions() const { return decisions_; }
  Strategy strategy() const { return strategy_; }

 private:
  std::vector<Decision> decisions_;  // by priority
  Action default_action_;
  Strategy strategy_;
};

}  // namespace semroute
