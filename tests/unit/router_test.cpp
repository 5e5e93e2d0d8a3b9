// The router's decision layer on signals whose values and calls the test
// controls: condition compilation errors (each naming its YAML path), truth
// tables, short-circuiting that skips model calls (counted), strategies, and
// the rewriting of chat requests.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <atomic>
#include <functional>

#include "router/condition.h"
#include "router/decision_engine.h"
#include "router/request_rewrite.h"
#include "test_util.h"

namespace semroute::test {
namespace {

// A signal with fixed field specs whose values come from a function of the
// input, counting its computations.
class FakeSignal final : public Signal {
 public:
  FakeSignal(std::string name, int cost, std::map<std::string, FieldSpec> specs,
             std::function<SignalValues(const RouteInput&)> values)
      : Signal(std::move(name)), cost_(cost), specs_(std::move(specs)), values_(std::move(values)) {}

  int cost() const override { return cost_; }
  std::optional<FieldSpec> field(const std::string& field) const override {
    const auto it = specs_.find(field);
    if (it == specs_.end()) return std::nullopt;
    return it->second;
  }
  SignalValues compute(const RouteInput& input) const override {
    ++calls;
    return values_(input);
  }
  std::string describe_fields() const override { return "fields of a test signal"; }

  mutable std::atomic<int> calls{0};

 private:
  int cost_;
  std::map<std::string, FieldSpec> specs_;
  std::function<SignalValues(const RouteInput&)> values_;
};

const std::vector<std::string> kDomains = {"math", "law", "biology", "other"};

// domain (a model: cost 10) answers "math" (0.8) when the text says "math",
// else "law" (0.6); urgent (a keyword list: cost 0) is true when the text
// holds "urgent"; pii (a model) finds EMAIL when the text holds '@';
// risk is a number from the metadata.
struct Signals {
  std::shared_ptr<FakeSignal> domain = std::make_shared<FakeSignal>(
      "domain", 10,
      std::map<std::string, FieldSpec>{{"", {FieldType::kLabel, kDomains}}, {"confidence", {FieldType::kNumber, {}}}},
      [](const RouteInput& in) {
        const bool math = in.text.find("math") != std::string::npos;
        return SignalValues{{"", FieldValue::of_label(math ? "math" : "law", math ? 0.8 : 0.6)},
                            {"confidence", FieldValue::of_number(math ? 0.8 : 0.6)}};
      });
  std::shared_ptr<FakeSignal> urgent = std::make_shared<FakeSignal>(
      "urgent", 0, std::map<std::string, FieldSpec>{{"", {FieldType::kBool, {}}}}, [](const RouteInput& in) {
        return SignalValues{{"", FieldValue::boolean(in.text.find("urgent") != std::string::npos)}};
      });
  std::shared_ptr<FakeSignal> pii = std::make_shared<FakeSignal>(
      "pii", 10, std::map<std::string, FieldSpec>{{"", {FieldType::kLabelSet, {"EMAIL", "PHONE"}}}},
      [](const RouteInput& in) {
        std::vector<std::string> found;
        if (in.text.find('@') != std::string::npos) found.push_back("EMAIL");
        return SignalValues{{"", FieldValue::of_labels(found)}};
      });
  std::shared_ptr<FakeSignal> meta = std::make_shared<FakeSignal>(
      "meta", 0, std::map<std::string, FieldSpec>{{"role", {FieldType::kLabel, {}}}, {"risk", {FieldType::kNumber, {}}}},
      [](const RouteInput& in) {
        SignalValues v;
        if (in.metadata.count("role")) v["role"] = FieldValue::of_label(in.metadata.at("role"));
        if (in.metadata.count("risk")) v["risk"] = FieldValue::of_number(std::stod(in.metadata.at("risk")));
        return v;
      });
  SignalSet set{{"domain", domain}, {"urgent", urgent}, {"pii", pii}, {"meta", meta}};

  int model_calls() const { return domain->calls + pii->calls; }
};

ConditionPtr compile(const Signals& s, const std::string& yaml, const std::string& named = "") {
  ConditionCompiler compiler(s.set, named.empty() ? YAML::Node() : YAML::Load(named));
  return compiler.compile(YAML::Load(yaml), "when");
}

bool holds(const Signals& s, const ConditionPtr& c, const std::string& text,
           std::map<std::string, std::string> metadata = {}) {
  const RouteInput input{text, std::move(metadata)};
  SignalBoard board(s.set, input);
  std::vector<Condition::Held> held;
  return c->holds(board, held);
}

void expect_compile_error(const std::string& yaml, const std::string& fragment, const std::string& named = "") {
  Signals s;
  expect_error([&] { compile(s, yaml, named); }, ErrorCode::kInvalidModel, fragment);
}

TEST(RouterConditions, CompilationErrorsNameThePathAndTheProblem) {
  expect_compile_error("\"topic == math\"", "when: 'topic == math': unknown signal 'topic' (signals: domain, meta, pii, urgent)");
  expect_compile_error("\"domain.score > 1\"", "signal 'domain' has no field 'score'");
  expect_compile_error("\"domain > 1\"", "domain is a label; compare it with == != in [..] not in [..]");
  expect_compile_error("\"domain == maths\"", "'maths' is not one of its labels (math, law, biology, other)");
  expect_compile_error("\"domain in [math, poetry]\"", "'poetry' is not one of its labels");
  expect_compile_error("\"domain in math\"", "'in' takes a list");
  expect_compile_error("\"domain == [math]\"", "use 'in' to compare with a list");
  expect_compile_error("\"domain.confidence >= high\"", "'high' is not a finite number");
  expect_compile_error("\"domain.confidence contains 1\"", "domain.confidence is a number; compare it with");
  expect_compile_error("\"pii == EMAIL\"", "pii is a set of labels; test it with contains");
  expect_compile_error("\"pii contains SSN\"", "'SSN' is not one of its labels (EMAIL, PHONE)");
  expect_compile_error("\"urgent == yes\"", "the value must be true or false");
  expect_compile_error("\"domain\"", "domain is a label; compare it with");
  expect_compile_error("\"domain ==\"", "a comparison needs a value after its operator");
  expect_compile_error("\"domain ~ math\"", "expected an operator");
  expect_compile_error("\"domain in [math, ]\"", "an empty item in the list");
  expect_compile_error("\"\"", "when: an empty condition");
  expect_compile_error("{all: []}", "when.all: an empty group (it would hold always)");
  expect_compile_error("{any: []}", "when.any: an empty group (it would hold never)");
  expect_compile_error("{any: [urgent, {all: [urgent, \"pii contains FAX\"]}]}", "when.any[1].all[1]: 'pii contains FAX'");
  expect_compile_error("{all: urgent}", "when.all: must be a list of conditions");
  expect_compile_error("{either: [urgent]}", "when: unknown condition 'either'");
  expect_compile_error("{all: [urgent], any: [urgent]}", "a map with one key");
  expect_compile_error("[urgent]", "a map with one key");
  expect_compile_error("{ref: missing}", "when.ref: no condition named 'missing'");
  expect_compile_error("{ref: a}", "named conditions form a cycle: a -> b -> a", "{a: {ref: b}, b: {not: {ref: a}}}");
  expect_compile_error("{ref: a}", "cycle: a -> a", "{a: {any: [urgent, {ref: a}]}}");
  expect_compile_error("{ref: a}", "conditions.a.not: 'domain == poetry'", "{a: {not: \"domain == poetry\"}}");
}

TEST(RouterConditions, TruthTablesOfAllAnyNot) {
  Signals s;
  // urgent ↔ text holds "urgent"; pii contains EMAIL ↔ text holds '@'.
  const auto all = compile(s, "{all: [urgent, \"pii contains EMAIL\"]}");
  const auto any = compile(s, "{any: [urgent, \"pii contains EMAIL\"]}");
  const auto none = compile(s, "{not: {any: [urgent, \"pii contains EMAIL\"]}}");
  const auto nested = compile(s, "{any: [{all: [urgent, {not: \"pii contains EMAIL\"}]}, {all: [{not: urgent}, \"pii contains EMAIL\"]}]}");
  for (const bool a : {false, true}) {
    for (const bool b : {false, true}) {
      const std::string text = std::string(a ? "urgent " : "") + (b ? "me@x.org" : "hello");
      SCOPED_TRACE(text);
      EXPECT_EQ(holds(s, all, text), a && b);
      EXPECT_EQ(holds(s, any, text), a || b);
      EXPECT_EQ(holds(s, none, text), !(a || b));
      EXPECT_EQ(holds(s, nested, text), a != b);  // exclusive or
    }
  }
}

TEST(RouterConditions, ComparisonsOfEveryType) {
  Signals s;
  EXPECT_TRUE(holds(s, compile(s, "\"domain == math\""), "math homework"));
  EXPECT_FALSE(holds(s, compile(s, "\"domain != math\""), "math homework"));
  EXPECT_TRUE(holds(s, compile(s, "\"domain in [law, biology]\""), "a contract"));
  EXPECT_TRUE(holds(s, compile(s, "\"domain not in [math]\""), "a contract"));
  EXPECT_TRUE(holds(s, compile(s, "\"domain.confidence >= 0.8\""), "math"));
  EXPECT_FALSE(holds(s, compile(s, "\"domain.confidence > 0.8\""), "math"));
  EXPECT_TRUE(holds(s, compile(s, "\"domain.confidence < 0.7\""), "law"));
  EXPECT_TRUE(holds(s, compile(s, "\"pii contains [PHONE, EMAIL]\""), "a@b"));
  EXPECT_TRUE(holds(s, compile(s, "\"pii not contains EMAIL\""), "nothing"));
  EXPECT_TRUE(holds(s, compile(s, "\"urgent == false\""), "calm"));
  EXPECT_TRUE(holds(s, compile(s, "\"urgent != false\""), "urgent"));
  EXPECT_TRUE(holds(s, compile(s, "\"meta.role == admin\""), "x", {{"role", "admin"}}));
  EXPECT_TRUE(holds(s, compile(s, "\"meta.role in ['admin', \\\"ops\\\"]\""), "x", {{"role", "ops"}}));
  // A metadata key the caller did not send is empty, never an error.
  EXPECT_FALSE(holds(s, compile(s, "\"meta.role == admin\""), "x"));
  EXPECT_TRUE(holds(s, compile(s, "\"meta.risk <= -0.5\""), "x", {{"risk", "-1"}}));
  EXPECT_TRUE(holds(s, compile(s, "\"meta.risk == 0\""), "x"));
}

TEST(RouterConditions, ShortCircuitSkipsModelCalls) {
  Signals s;
  // Cheapest first: the keyword is false, so the model is never asked.
  const auto c = compile(s, "{all: [\"domain == math\", urgent]}");
  EXPECT_FALSE(holds(s, c, "math, no hurry"));
  EXPECT_EQ(s.model_calls(), 0);
  EXPECT_EQ(s.urgent->calls, 1);
  // any: a cheap true branch decides.
  EXPECT_TRUE(holds(s, compile(s, "{any: [\"pii contains EMAIL\", \"domain == math\", urgent]}"), "urgent"));
  EXPECT_EQ(s.model_calls(), 0);
  // When the model is needed, it runs once however often it is compared.
  EXPECT_TRUE(holds(s, compile(s, "{all: [\"domain == math\", \"domain.confidence > 0.5\", {not: \"domain == law\"}]}"),
                    "math"));
  EXPECT_EQ(s.domain->calls, 1);
}

Action action_named(const std::string& model) {
  Action a;
  a.model = model;
  return a;
}

TEST(RouterDecisions, PriorityStrategyStopsAtTheFirstMatchAndSkipsTheRest) {
  Signals s;
  std::vector<Decision> decisions;
  decisions.push_back({"math", 10, compile(s, "\"domain == math\""), action_named("math-model")});
  decisions.push_back({"urgent", 20, compile(s, "urgent"), action_named("fast-model")});
  decisions.push_back({"private", 5, compile(s, "\"pii contains EMAIL\""), action_named("local-model")});
  const DecisionEngine engine(std::move(decisions), action_named("general"), Strategy::kPriority);

  const RouteInput urgent_math{"urgent math me@x.org", {}};
  SignalBoard board(s.set, urgent_math);
  const DecisionOutcome outcome = engine.decide(board);
  ASSERT_NE(outcome.decision, nullptr);
  EXPECT_EQ(outcome.decision->name, "urgent");
  EXPECT_EQ(s.model_calls(), 0);  // the keyword decided; neither model ran
  ASSERT_EQ(outcome.trace.size(), 3u);
  EXPECT_EQ(outcome.trace[0].name, "urgent");
  EXPECT_TRUE(outcome.trace[0].matched);
  EXPECT_FALSE(outcome.trace[1].evaluated);
  EXPECT_FALSE(outcome.trace[2].evaluated);
  EXPECT_FALSE(board.computed("domain"));

  const RouteInput plain{"a contract", {}};
  SignalBoard board2(s.set, plain);
  const DecisionOutcome fallback = engine.decide(board2);
  EXPECT_EQ(fallback.decision, nullptr);  // the default
  EXPECT_EQ(s.domain->calls, 1);
  EXPECT_EQ(s.pii->calls, 1);
}

TEST(RouterDecisions, ConfidenceStrategyPicksTheSurestMatch) {
  Signals s;
  std::vector<Decision> decisions;
  decisions.push_back({"law", 100, compile(s, "{any: [\"domain == law\", urgent]}"), action_named("law-model")});
  decisions.push_back({"math", 1, compile(s, "\"domain == math\""), action_named("math-model")});
  decisions.push_back({"fact", 1, compile(s, "\"domain.confidence > 0.1\""), action_named("any-model")});
  const DecisionEngine engine(std::move(decisions), action_named("general"), Strategy::kConfidence);
  const RouteInput input{"math", {}};
  SignalBoard board(s.set, input);
  const DecisionOutcome outcome = engine.decide(board);
  // "fact" holds with confidence 1 (a number comparison), "math" with 0.8.
  ASSERT_NE(outcome.decision, nullptr);
  EXPECT_EQ(outcome.decision->name, "fact");
  EXPECT_DOUBLE_EQ(outcome.confidence, 1.0);
  for (const auto& t : outcome.trace) EXPECT_TRUE(t.evaluated);
  EXPECT_EQ(outcome.trace[1].name, "math");
  EXPECT_DOUBLE_EQ(outcome.trace[1].confidence, 0.8);
  EXPECT_FALSE(outcome.trace[0].matched);
}

RequestJson chat(const std::string& json) { return RequestJson::parse(json); }

TEST(RouterRequests, TheTextIsTheLastUserMessage) {
  EXPECT_EQ(request_text(chat(R"({"messages":[{"role":"user","content":"first"},{"role":"assistant","content":"x"},
                                    {"role":"user","content":"second"}]})")),
            "second");
  EXPECT_EQ(request_text(chat(R"({"messages":[{"role":"user","content":[{"type":"text","text":"a"},
                                    {"type":"image_url","image_url":{"url":"u"}},{"type":"text","text":"b"}]}]})")),
            "a\nb");
  EXPECT_EQ(request_text(chat(R"({"prompt":"complete me"})")), "complete me");
  expect_error([] { request_text(chat(R"({"messages":[{"role":"system","content":"s"}]})")); },
               ErrorCode::kInvalidArgument, "no user message");
  expect_error([] { request_text(chat(R"({"messages":{"role":"user"}})")); }, ErrorCode::kInvalidArgument,
               "\"messages\" is not a list");
  expect_error([] { request_text(chat(R"({"messages":[{"role":"user","content":5}]})")); },
               ErrorCode::kInvalidArgument, "messages[0].content is neither");
  expect_error([] { request_text(chat(R"([1, 2])")); }, ErrorCode::kInvalidArgument, "not a JSON object");
}

TEST(RouterRequests, ActionsRewriteOnlyTheFieldsTheyOwn) {
  Action a;
  a.model = "math-model";
  a.system_prompt = "You are a mathematician.";
  a.reasoning_effort = "high";
  a.max_tokens = 1000;
  const std::vector<std::string> automatic = {"auto"};

  RequestJson r = chat(R"({"model":"auto","messages":[{"role":"user","content":"2+2"}],"temperature":0.2,"x_custom":{"k":[1]}})");
  apply_action(a, automatic, r);
  EXPECT_EQ(r.dump(), R"({"model":"math-model","messages":[{"role":"system","content":"You are a mathematician."},)"
                      R"({"role":"user","content":"2+2"}],"temperature":0.2,"x_custom":{"k":[1]},)"
                      R"("reasoning_effort":"high","max_tokens":1000})");

  // An explicit model stands; a lower max_tokens stands; insert keeps the caller's system prompt.
  r = chat(R"({"model":"gpt-x","max_tokens":10,"messages":[{"role":"system","content":"mine"},{"role":"user","content":"q"}]})");
  apply_action(a, automatic, r);
  EXPECT_EQ(r["model"], "gpt-x");
  EXPECT_EQ(r["max_tokens"], 10);
  EXPECT_EQ(r["messages"][0]["content"], "mine");

  a.system_prompt_mode = SystemPromptMode::kReplace;
  r = chat(R"({"max_completion_tokens":5000,"messages":[{"role":"system","content":"mine"},{"role":"user","content":"q"}]})");
  apply_action(a, automatic, r);
  EXPECT_EQ(r["model"], "math-model");  // absent counts as automatic
  EXPECT_EQ(r["messages"][0]["content"], "You are a mathematician.");
  EXPECT_EQ(r["max_completion_tokens"], 1000);
  EXPECT_FALSE(r.contains("max_tokens"));

  a.system_prompt_mode = SystemPromptMode::kPrepend;
  r = chat(R"({"messages":[{"role":"system","content":"mine"},{"role":"user","content":"q"}]})");
  apply_action(a, automatic, r);
  EXPECT_EQ(r["messages"][0]["content"], "You are a mathematician.\n\nmine");
  r = chat(R"({"messages":[{"role":"system","content":[{"type":"text","text":"mine"}]},{"role":"user","content":"q"}]})");
  apply_action(a, automatic, r);
  EXPECT_EQ(r["messages"][0]["content"][0]["text"], "You are a mathematician.");
  EXPECT_EQ(r["messages"][0]["content"][1]["text"], "mine");
}

}  // namespace
}  // namespace semroute::test
