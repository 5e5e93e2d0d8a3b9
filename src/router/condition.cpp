#include "router/condition.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <sstream>

#include "semroute/error.h"

namespace semroute {
namespace {

using Clock = std::chrono::steady_clock;

enum class Op { kTrue, kEq, kNe, kLt, kLe, kGt, kGe, kIn, kNotIn, kContains, kNotContains };

struct OpName {
  Op op;
  const char* text;
};
// Longest spellings first, so that "<=" is not read as "<".
constexpr OpName kOps[] = {{Op::kNotContains, "not contains"}, {Op::kNotIn, "not in"}, {Op::kContains, "contains"},
                           {Op::kEq, "=="}, {Op::kNe, "!="}, {Op::kLe, "<="}, {Op::kGe, ">="},
                           {Op::kLt, "<"}, {Op::kGt, ">"}, {Op::kIn, "in"}};

std::string trim(const std::string& s) {
  const auto begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return {};
  return s.substr(begin, s.find_last_not_of(" \t") - begin + 1);
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

std::string unquote(const std::string& s) {
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front())
    return s.substr(1, s.size() - 2);
  return s;
}

// A comparison's right-hand side: one word / number / quoted string, or a
// [list] of them.
struct Operand {
  bool is_list = false;
  std::vector<std::string> items;
};

Operand parse_operand(const std::string& text, const std::string& where) {
  Operand operand;
  const std::string t = trim(text);
  if (t.empty()) throw LoadError(where + ": a comparison needs a value after its operator");
  if (t.front() == '[') {
    if (t.back() != ']') throw LoadError(where + ": a list must end with ']'");
    operand.is_list = true;
    std::stringstream items(t.substr(1, t.size() - 2));
    for (std::string item; std::getline(items, item, ',');) {
      item = unquote(trim(item));
      if (item.empty()) throw LoadError(where + ": an empty item in the list");
      operand.items.push_back(item);
    }
    if (operand.items.empty()) throw LoadError(where + ": an empty list");
    return operand;
  }
  operand.items.push_back(unquote(t));
  return operand;
}

class Comparison final : public Condition {
 public:
  Comparison(std::string text, std::shared_ptr<const Signal> signal, std::string field, FieldSpec spec, Op op,
             Operand operand)
      : text_(std::move(text)), signal_(std::move(signal)), field_(std::move(field)), spec_(std::move(spec)), op_(op),
        operand_(std::move(operand)) {}

  void check(const std::string& where) {
    const auto fail = [&](const std::string& why) {
      throw LoadError(where + ": '" + text_ + "': " + field_text() + " is " + type_text() + "; " + why);
    };
    switch (spec_.type) {
      case FieldType::kBool:
        if (op_ == Op::kTrue) return;
        if (op_ != Op::kEq && op_ != Op::kNe) fail("compare it with == or != (true / false), or name it alone");
        if (operand_.is_list || (operand_.items[0] != "true" && operand_.items[0] != "false"))
          fail("the value must be true or false");
        expected_truth_ = operand_.items[0] == "true";
        return;
      case FieldType::kNumber: {
        if (op_ == Op::kTrue || op_ == Op::kIn || op_ == Op::kNotIn || op_ == Op::kContains || op_ == Op::kNotContains)
          fail("compare it with == != < <= > >=");
        if (operand_.is_list) fail("the value must be a number");
        size_t used = 0;
        try {
          number_ = std::stod(operand_.items[0], &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != operand_.items[0].size() || !std::isfinite(number_))
          fail("'" + operand_.items[0] + "' is not a finite number");
        return;
      }
      case FieldType::kLabel:
        if (op_ == Op::kEq || op_ == Op::kNe) {
          if (operand_.is_list) fail("use 'in' to compare with a list");
        } else if (op_ == Op::kIn || op_ == Op::kNotIn) {
          if (!operand_.is_list) fail("'in' takes a list: [a, b]");
        } else {
          fail("compare it with == != in [..] not in [..]");
        }
        check_labels(fail);
        return;
      case FieldType::kLabelSet:
        if (op_ != Op::kContains && op_ != Op::kNotContains) fail("test it with contains X, contains [X, Y] (any)");
        check_labels(fail);
        return;
    }
  }

  bool holds(SignalBoard& board, std::vector<Held>& held) const override {
    const FieldValue& v = board.get(signal_->name(), field_);
    const bool result = evaluate(v);
    if (result) held.push_back({text_, spec_.type == FieldType::kLabel && op_ != Op::kNe && op_ != Op::kNotIn
                                           ? v.confidence
                                           : 1.0});
    return result;
  }

  int pending_cost(const SignalBoard& board) const override {
    return board.computed(signal_->name()) ? 0 : signal_->cost();
  }
  void signals(std::vector<std::string>& out) const override { out.push_back(signal_->name()); }

 private:
  bool evaluate(const FieldValue& v) const {
    const auto listed = [&](const std::string& label) {
      return std::find(operand_.items.begin(), operand_.items.end(), label) != operand_.items.end();
    };
    switch (spec_.type) {
      case FieldType::kBool:
        return op_ == Op::kTrue ? v.truth : (v.truth == expected_truth_) == (op_ == Op::kEq);
      case FieldType::kNumber:
        switch (op_) {
          case Op::kEq: return v.number == number_;
          case Op::kNe: return v.number != number_;
          case Op::kLt: return v.number < number_;
          case Op::kLe: return v.number <= number_;
          case Op::kGt: return v.number > number_;
          case Op::kGe: return v.number >= number_;
          default: return false;
        }
      case FieldType::kLabel: {
        const bool in = listed(v.label);
        return op_ == Op::kEq || op_ == Op::kIn ? in : !in;
      }
      case FieldType::kLabelSet: {
        const bool any = std::any_of(v.labels.begin(), v.labels.end(), listed);
        return op_ == Op::kContains ? any : !any;
      }
    }
    return false;
  }

  template <typename Fail>
  void check_labels(const Fail& fail) const {
    if (spec_.labels.empty()) return;
    for (const auto& item : operand_.items)
      if (std::find(spec_.labels.begin(), spec_.labels.end(), item) == spec_.labels.end())
        fail("'" + item + "' is not one of its labels (" + join(spec_.labels) + ")");
  }

  std::string field_text() const { return field_.empty() ? signal_->name() : signal_->name() + "." + field_; }
  std::string type_text() const {
    switch (spec_.type) {
      case FieldType::kBool: return "a boolean";
      case FieldType::kNumber: return "a number";
      case FieldType::kLabel: return "a label";
      case FieldType::kLabelSet: return "a set of labels";
    }
    return "";
  }

  std::string text_;
  std::shared_ptr<const Signal> signal_;
  std::string field_;
  FieldSpec spec_;
  Op op_;
  Operand operand_;
  bool expected_truth_ = true;
  double number_ = 0;
};

// all / any: children run cheapest first (a computed signal costs nothing),
// and stop at the first that decides.
class Group final : public Condition {
 public:
  Group(bool all, std::vector<ConditionPtr> children) : all_(all), children_(std::move(children)) {}

  bool holds(SignalBoard& board, std::vector<Held>& held) const override {
    std::vector<std::pair<int, const Condition*>> order;
    order.reserve(children_.size());
    for (const auto& child : children_) order.emplace_back(child->pending_cost(board), child.get());
    std::stable_sort(order.begin(), order.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    const size_t mark = held.size();
    for (const auto& [cost, child] : order) {
      const size_t before = held.size();
      const bool h = child->holds(board, held);
      if (!h) held.resize(before);
      if (h != all_) {
        if (all_) held.resize(mark);
        return !all_;
      }
    }
    if (!all_) held.resize(mark);
    return all_;
  }

  int pending_cost(const SignalBoard& board) const override {
    int cost = 0;
    for (const auto& child : children_) cost += child->pending_cost(board);
    return cost;
  }
  void signals(std::vector<std::string>& out) const override {
    for (const auto& child : children_) child->signals(out);
  }

 private:
  bool all_;
  std::vector<ConditionPtr> children_;
};

class Negation final : public Condition {
 public:
  explicit Negation(ConditionPtr child) : child_(std::move(child)) {}
  // What held inside a negation did not make it hold: nothing to report.
  bool holds(SignalBoard& board, std::vector<Held>& /*held*/) const override {
    std::vector<Held> inner;
    return !child_->holds(board, inner);
  }
  int pending_cost(const SignalBoard& board) const override { return child_->pending_cost(board); }
  void signals(std::vector<std::string>& out) const override { child_->signals(out); }

 private:
  ConditionPtr child_;
};

// Splits "field op value" at its operator (a word operator needs spaces
// around it, so a field named "intent" is not read as "in").
ConditionPtr parse_comparison(const std::string& text, const SignalSet& signals, const std::string& where) {
  const std::string t = trim(text);
  if (t.empty()) throw LoadError(where + ": an empty condition");
  const size_t field_end = t.find_first_of(" \t=!<>");
  const std::string path = t.substr(0, field_end);
  const std::string rest = field_end == std::string::npos ? "" : trim(t.substr(field_end));
  Op op = Op::kTrue;
  std::string value;
  if (!rest.empty()) {
    bool found = false;
    for (const auto& [candidate, spelling] : kOps) {
      const std::string s = spelling;
      const bool word = std::isalpha(static_cast<unsigned char>(s[0])) != 0;
      if (rest.compare(0, s.size(), s) != 0) continue;
      if (word && rest.size() > s.size() && rest[s.size()] != ' ' && rest[s.size()] != '\t' && rest[s.size()] != '[')
        continue;
      op = candidate;
      value = rest.substr(s.size());
      found = true;
      break;
    }
    if (!found)
      throw LoadError(where + ": '" + t + "': expected an operator (== != < <= > >= in, not in, contains, not contains)" +
                      " after '" + path + "'");
  }
  const auto dot = path.find('.');
  const std::string signal_name = path.substr(0, dot);
  const std::string field = dot == std::string::npos ? "" : path.substr(dot + 1);
  const auto it = signals.find(signal_name);
  if (it == signals.end()) {
    std::vector<std::string> known;
    for (const auto& [name, signal] : signals) known.push_back(name);
    throw LoadError(where + ": '" + t + "': unknown signal '" + signal_name + "' (signals: " + join(known) + ")");
  }
  const auto spec = it->second->field(field);
  if (!spec)
    throw LoadError(where + ": '" + t + "': signal '" + signal_name + "' has no field '" + field + "' (" +
                    it->second->describe_fields() + ")");
  Operand operand;
  if (op != Op::kTrue) operand = parse_operand(value, where + ": '" + t + "'");
  auto comparison = std::make_shared<Comparison>(t, it->second, field, *spec, op, std::move(operand));
  comparison->check(where);
  return comparison;
}

}  // namespace

struct ConditionCompiler::State {
  const SignalSet& signals;
  YAML::Node named;
  std::map<std::string, ConditionPtr> compiled;
  std::vector<std::string> in_progress;  // the chain of refs being compiled

  ConditionPtr compile(const YAML::Node& node, const std::string& path);
  ConditionPtr reference(const YAML::Node& node, const std::string& path);
  // (A scan, not named[name]: yaml-cpp's operator[] inserts what it misses.)
  std::optional<YAML::Node> named_condition(const std::string& name) const {
    if (!named.IsMap()) return std::nullopt;
    for (const auto& entry : named)
      if (entry.first.Scalar() == name) return entry.second;
    return std::nullopt;
  }
};

ConditionPtr ConditionCompiler::State::compile(const YAML::Node& node, const std::string& path) {
  if (node.IsScalar()) return parse_comparison(node.Scalar(), signals, path);
  if (!node.IsMap() || node.size() != 1)
    throw LoadError(path + ": a condition is a comparison (\"domain == math\") or a map with one key: all, any, not "
                           "or ref");
  const auto entry = *node.begin();
  if (!entry.first.IsScalar()) throw LoadError(path + ": a condition's key is all, any, not or ref, not a list or a map");
  const std::string key = entry.first.Scalar();
  const YAML::Node& value = entry.second;
  const std::string here = path + "." + key;
  if (key == "all" || key == "any") {
    if (!value.IsSequence()) throw LoadError(here + ": must be a list of conditions");
    if (value.size() == 0) throw LoadError(here + ": an empty group (it would hold " +
                                           (key == "all" ? std::string("always") : std::string("never")) + ")");
    std::vector<ConditionPtr> children;
    for (size_t i = 0; i < value.size(); ++i) children.push_back(compile(value[i], here + "[" + std::to_string(i) + "]"));
    return std::make_shared<Group>(key == "all", std::move(children));
  }
  if (key == "not") return std::make_shared<Negation>(compile(value, here));
  if (key == "ref") return reference(value, here);
  throw LoadError(path + ": unknown condition '" + key + "' (all, any, not, ref, or a comparison string)");
}

ConditionPtr ConditionCompiler::State::reference(const YAML::Node& value, const std::string& path) {
  if (!value.IsScalar()) throw LoadError(path + ": must name a condition of 'conditions'");
  const std::string name = value.Scalar();
  if (const auto it = compiled.find(name); it != compiled.end()) return it->second;
  if (std::find(in_progress.begin(), in_progress.end(), name) != in_progress.end()) {
    std::string chain;
    for (const auto& n : in_progress) chain += n + " -> ";
    throw LoadError(path + ": named conditions form a cycle: " + chain + name);
  }
  const std::optional<YAML::Node> definition = named_condition(name);
  if (!definition) throw LoadError(path + ": no condition named '" + name + "' under 'conditions'");
  in_progress.push_back(name);
  ConditionPtr condition = compile(*definition, "conditions." + name);
  in_progress.pop_back();
  compiled.emplace(name, condition);
  return condition;
}

ConditionCompiler::ConditionCompiler(const SignalSet& signals, const YAML::Node& named_conditions)
    : state_(new State{signals, named_conditions, {}, {}}) {
  if (named_conditions && !named_conditions.IsNull() && !named_conditions.IsMap())
    throw LoadError("conditions: must map names to conditions");
}

ConditionCompiler::~ConditionCompiler() = default;

ConditionPtr ConditionCompiler::compile(const YAML::Node& node, const std::string& path) {
  return state_->compile(node, path);
}

ConditionPtr compile_comparison(const std::string& text, const SignalSet& signals, const std::string& path) {
  return parse_comparison(text, signals, path);
}

SignalBoard::Computed& SignalBoard::compute(const std::string& signal) {
  auto it = computed_.find(signal);
  if (it == computed_.end()) {
    if (checkpoint_) checkpoint_();
    const auto start = Clock::now();
    SignalValues values = signals_.at(signal)->compute(input_);
    const auto latency = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
    it = computed_.emplace(signal, Computed{std::move(values), latency}).first;
  }
  return it->second;
}

const FieldValue& SignalBoard::get(const std::string& signal, const std::string& field) {
  Computed& computed = compute(signal);
  const auto value = computed.values.find(field);
  if (value != computed.values.end()) return value->second;
  // A field the signal has but did not report (a metadata key the caller did
  // not send) has its type's empty value: false, 0, "", no labels.
  const auto spec = signals_.at(signal)->field(field);
  if (!spec) throw InternalError("signal '" + signal + "' has no field '" + field + "'");
  FieldValue empty;
  empty.type = spec->type;
  return computed.values.emplace(field, empty).first->second;
}

}  // namespace semroute
