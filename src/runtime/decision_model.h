// A decision model: typed questions about a state, answered by one family
// (Vela 2.0: runtime/vela2.h; Decision 2.0: runtime/decision2.h). The
// questions are validated by plan_decision (vela2.h), with the family's own
// rules first (check_question); the answers are read by decision_answers.
// Implementations are immutable after load: decide_all may be called from
// many threads at once.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/item_results.h"
#include "runtime/vela2_spans.h"

namespace semroute {

// Requests keep the order of their keys: questions are read in the order
// they are asked, options in the order they are listed.
using DecisionJson = nlohmann::ordered_json;

// JSON as the decision packages write it into their inputs: canonical (keys
// sorted, no spaces, UTF-8 as it is); content_text: a string as it is.
inline std::string canonical_json(const DecisionJson& value) { return nlohmann::json(value).dump(); }
inline std::string content_text(const DecisionJson& value) {
  return value.is_string() ? value.get<std::string>() : canonical_json(value);
}

enum class QuestionKind { kChoice, kNoul, kScore, kSet, kSpan };
const char* question_kind_name(QuestionKind kind);

enum class PartRole { kUser, kContext, kAnswer };
const char* part_role_name(PartRole role);

// A state part: what a question reads (user request, context, answer).
struct StatePart {
  PartRole role = PartRole::kUser;
  std::string text;
  std::vector<std::string> keys;       // the state's keys that fed it (a question's `over` may name one)
  std::vector<CodePointRange> ranges;  // each key's value in `text`
};

struct DecisionOption {
  std::string name;
  std::string description;  // "" when none
  DecisionJson value;       // the description as given (null when none; a Score level: the level)
};

struct DecisionQuestion {
  std::string id;
  QuestionKind kind = QuestionKind::kChoice;
  std::string instructions;
  DecisionJson instructions_value;  // as given (text, an object or an array)
  // Choice, Set and Span: the criteria in order; Score: the levels (names);
  // Noul: its no and yes options.
  std::vector<DecisionOption> options;
  std::vector<PartRole> over;       // the parts it reads; empty: every part
  std::optional<double> threshold;  // Set, Span
  // overflow: truncate (a part longer than one input: its first tokens) or
  // window (the default); require_full_input: every part read whole.
  bool truncate = false;
  bool require_full_input = false;
  // Span: the calibration's name for it (its preset, else its ID), and the
  // range of the one state key `over` names when the part holds several.
  std::string calibration_key;
  std::optional<CodePointRange> span_range;
};

struct DecisionAnswer {
  std::string id;
  QuestionKind kind = QuestionKind::kChoice;
  ItemError error = ItemError::kNone;
  std::string choice;                                         // Choice
  double confidence = 0;                                      // Choice and Score
  std::optional<double> abstain_probability;                  // Choice (Vela 2.0)
  std::vector<std::pair<std::string, double>> probabilities;  // Choice, Set: by name; Score: "0".."n-1"
  std::vector<std::string> legend;                            // Score: each level's text, "0".."n-1"
  double noul = 0;                                            // Noul: P(yes); Span: the top word probability
  double score = 0;                                           // Score: the expected level index
  std::vector<std::string> selected;                          // Set: the labels over the threshold
  double threshold = 0;                                       // Set, Span
  std::vector<DecisionSpan> spans;                            // Span
  bool complete_input = false;  // a require_full_input question that read every part whole
};

struct DecideOptions {
  // The most tokens of one part a question reads in windows (0: the
  // model's scan budget); a longer part fails the questions that read it
  // whole with scan_budget_exceeded. Families without windows ignore it.
  size_t scan_tokens = 0;
};

// One state's questions, for decide_all.
struct DecisionCase {
  const DecisionJson* state;  // as the request gave it
  const std::vector<StatePart>* parts;
  const std::vector<DecisionQuestion>* questions;
};

class DecisionModel {
 public:
  virtual ~DecisionModel() = default;
  // The card: its family, the question types it answers, its presets (by
  // name, as questions) and its limits.
  virtual const char* family() const = 0;
  virtual std::vector<std::string> question_types() const = 0;
  virtual const DecisionJson& presets() const = 0;
  virtual nlohmann::json limits() const = 0;
  // Whether options.max_tokens (a scan budget) means anything to it.
  virtual bool has_scan_budget() const = 0;
  // The family's own rules for a question, before the shared ones:
  // InvalidInput (the question's invalid_question) naming what is wrong.
  virtual void check_question(const std::string& id, const DecisionJson& question) const = 0;
  // Several states' questions at once, each case answered as it would be
  // alone, in order. `on_lane`, when given, runs the forwards (the caller's
  // compute lane and deadline); `input_tokens` receives each case's tokens.
  virtual std::vector<std::vector<DecisionAnswer>> decide_all(
      const std::vector<DecisionCase>& cases, std::vector<size_t>* input_tokens = nullptr,
      const DecideOptions& options = {},
      const std::function<void(const std::function<void()>&)>& on_lane = nullptr) const = 0;
};

}  // namespace semroute
