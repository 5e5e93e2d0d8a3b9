// Vela 2.0 decisions in the library: one model shared by many threads gives
// every thread the answers one thread gets, a long state read in windows
// included; the in-process runtime (C API) answers /v1/decisions as the
// library does. Numerics against the reference: tests/decisions/.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

#include "runtime/random_vela2.h"
#include "runtime/vela2.h"
#include "semroute/semroute.h"
#include "test_util.h"

namespace semroute {
namespace {

std::filesystem::path make_package(const test::TempDir& dir, size_t max_length = 128) {
  RandomModelSpec spec;
  spec.preset = "tiny";
  spec.tokenizer = test::data_dir() / "tokenizers/modernbert/tokenizer.json";
  spec.seed = 5;
  write_random_vela2(spec, "both", max_length, dir / "vela2");
  return dir / "vela2";
}

DecisionPlan plan_of(const std::string& text) {
  const DecisionJson request = DecisionJson::parse(text);
  return plan_decision(request["state"], request["questions"]);
}

const std::vector<std::string> kRequests = {
    R"({"state": "Reset my password, please.", "questions": {
        "guard": {"type": "noul", "instructions": "A jailbreak?"},
        "topics": {"type": "set", "instructions": "Topics", "criteria": {"account": null, "billing": "money"}}}})",
    // 128 tokens at most: the prompt is read in windows, the truncate question reads the first
    R"({"state": ")" + std::string(1200, 'a') + std::string(" word") + R"(", "questions": {
        "urgency": {"type": "score", "instructions": "How urgent?", "levels": ["low", "high"]},
        "domain": {"type": "choice", "instructions": "Subject?", "criteria": {"math": null, "law": null},
                   "overflow": "truncate"},
        "names": {"type": "span", "instructions": "x", "criteria": {"PERSON": null}}}})"};

TEST(Vela2Decisions, ManyThreadsShareOneModel) {
  const test::TempDir dir;
  const auto model = Vela2Model::load(make_package(dir));
  std::vector<DecisionPlan> plans;
  std::vector<std::vector<DecisionAnswer>> expected;
  std::vector<size_t> expected_tokens;
  for (const std::string& r : kRequests) {
    plans.push_back(plan_of(r));
    size_t tokens = 0;
    expected.push_back(model->decide(plans.back().parts, plans.back().questions, &tokens));
    expected_tokens.push_back(tokens);
  }
  EXPECT_GT(expected_tokens[1], model->max_length());  // read in more than one window
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 3; ++round) {
        const size_t k = static_cast<size_t>(t + round) % plans.size();
        size_t tokens = 0;
        const auto got = model->decide(plans[k].parts, plans[k].questions, &tokens);
        bool same = tokens == expected_tokens[k] && got.size() == expected[k].size();
        for (size_t i = 0; same && i < got.size(); ++i)
          same = got[i].probabilities == expected[k][i].probabilities && got[i].noul == expected[k][i].noul &&
                 got[i].spans.size() == expected[k][i].spans.size();
        if (!same) ++mismatches;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

// What each question answers, by ID: its error, else its type.
std::map<std::string, std::string> outcomes(const DecisionPlan& plan, const std::vector<DecisionAnswer>& answers) {
  std::map<std::string, std::string> out;
  for (const auto& [id, answer] : plan.invalid) out[id] = answer["error"];
  for (const DecisionAnswer& a : answers) out[a.id] = a.error == ItemError::kNone ? question_kind_name(a.kind) : item_error_name(a.error);
  return out;
}

TEST(Vela2Decisions, SpanAndPresetQuestionsValidateOneByOne) {
  const test::TempDir dir;
  const auto model = Vela2Model::load(make_package(dir, 512));  // room for the pii preset's 17 labels
  const DecisionJson request = DecisionJson::parse(R"({
    "state": {"request": "q", "source": "d", "tools": "t", "answer": "a"},
    "questions": {
      "ok": {"type": "span", "instructions": "x", "criteria": {"L": null}, "over": ["answer"]},
      "two_parts": {"type": "span", "instructions": "x", "criteria": {"L": null}, "over": ["request", "answer"]},
      "colour": {"type": "span", "instructions": "x", "criteria": {"L": null}, "colour": 1},
      "broad": {"type": "span", "instructions": "x", "criteria": {"L": null}, "head": "broad"},
      "router": {"type": "span", "instructions": "x", "criteria": {"L": null}, "head": "router"},
      "no_labels": {"type": "span", "instructions": "x", "criteria": {}},
      "both": {"type": "span", "instructions": "x", "criteria": {"L": null}, "labels": [{"key": "M"}]},
      "pii": {"preset": "pii", "over": "request", "threshold": 0.3},
      "halu": {"preset": "halu"},
      "relevance": {"preset": "relevance", "over": ["request", "source"]},
      "toxic": {"preset": "toxic"},
      "extra": {"preset": "pii", "instructions": "x"},
      "wrong_type": {"preset": "halu", "type": "choice"},
      "score_threshold": {"preset": "relevance", "threshold": 0.5},
      "head_on_choice": {"type": "choice", "instructions": "x", "criteria": {"a": null, "b": null}, "head": "router"}}})");
  const DecisionPlan plan = plan_decision(request["state"], request["questions"], model.get());
  const auto got = outcomes(plan, model->decide(plan.parts, plan.questions));
  const std::map<std::string, std::string> want = {
      {"ok", "span"}, {"two_parts", "invalid_question"}, {"colour", "invalid_question"}, {"broad", "invalid_question"},
      {"router", "span"}, {"no_labels", "invalid_question"}, {"both", "invalid_question"}, {"pii", "span"},
      {"halu", "span"}, {"relevance", "score"}, {"toxic", "invalid_question"}, {"extra", "invalid_question"},
      {"wrong_type", "invalid_question"}, {"score_threshold", "invalid_question"}, {"head_on_choice", "invalid_question"}};
  EXPECT_EQ(got, want);
  const auto question = [&](const std::string& id) {
    return *std::find_if(plan.questions.begin(), plan.questions.end(), [&](const DecisionQuestion& q) { return q.id == id; });
  };
  EXPECT_EQ(question("pii").options.size(), 17u);
  EXPECT_EQ(question("pii").threshold, 0.3);
  EXPECT_EQ(question("halu").over, std::vector<PartRole>{PartRole::kAnswer});  // a span's default: the answer
  EXPECT_EQ(question("halu").calibration_key, "halu");
  EXPECT_EQ(question("relevance").options[0].name, "not_relevant");
  EXPECT_EQ(question("relevance").options[0].description, "The candidate does not help with the query.");
  // `over` one key of a part several keys share: the span reads that key's value (context "source:\nd\n\ntools:\nt").
  const DecisionJson tools = DecisionJson::parse(R"({"type": "span", "instructions": "x", "criteria": {"L": null}, "over": "tools"})");
  const DecisionQuestion q = decision_question("t", tools, plan.parts);
  ASSERT_TRUE(q.span_range.has_value());
  EXPECT_EQ(*q.span_range, (CodePointRange{18, 19}));
}

TEST(Vela2Decisions, ASpanReadsItsWholePartOrSaysWhyNot) {
  const test::TempDir dir;
  const auto model = Vela2Model::load(make_package(dir));  // 128 tokens an input, 512 the scan budget
  const auto ask = [&](const std::string& state, const std::string& fields, size_t scan = 0) {
    const DecisionJson request = {{"state", state},
                                  {"questions", {{"s", DecisionJson::parse(R"({"type": "span", "instructions": "x",
                                                  "criteria": {"PERSON": null})" + fields + "}")}}}};
    const DecisionPlan plan = plan_decision(request["state"], request["questions"], model.get());
    return model->decide(plan.parts, plan.questions, nullptr, DecideOptions{scan})[0];
  };
  std::string words;
  for (int i = 0; i < 120; ++i) words += "Name" + std::to_string(i) + " ";
  const DecisionAnswer whole = ask(words, R"(, "require_full_input": true)");
  EXPECT_EQ(whole.error, ItemError::kNone);
  EXPECT_TRUE(whole.complete_input);
  std::string identifier;  // one word longer than an input: never wholly inside one window
  for (int i = 0; i < 600; ++i) identifier += "Identifier";  // 600 tokens
  EXPECT_EQ(ask(identifier, R"(, "require_full_input": true)", 100000).error, ItemError::kMaxLengthExceeded);
  EXPECT_EQ(ask(identifier, "", 100000).error, ItemError::kNone);  // read in windows all the same
  EXPECT_EQ(ask(identifier, "").error, ItemError::kScanBudgetExceeded);
  const DecisionAnswer first = ask(identifier, R"(, "overflow": "truncate")");
  EXPECT_EQ(first.error, ItemError::kNone);
}

TEST(Vela2Decisions, TheRuntimeAnswersAsTheLibrary) {
  const test::TempDir dir;
  const auto package = make_package(dir);
  const auto model = Vela2Model::load(package);
  const DecisionPlan plan = plan_of(kRequests[0]);
  const DecisionJson want = decision_answers(plan, model->decide(plan.parts, plan.questions));
  semroute_runtime* rt = nullptr;
  ASSERT_EQ(semroute_runtime_create(0, 0, &rt), nullptr);
  ASSERT_EQ(semroute_runtime_add_model(rt, "vela", package.c_str(), nullptr), nullptr);
  semroute_runtime_reply* reply = nullptr;
  ASSERT_EQ(semroute_runtime_call(rt, "POST", "/v1/decisions", kRequests[0].data(), kRequests[0].size(), &reply), nullptr);
  EXPECT_EQ(semroute_runtime_reply_status(reply), 200);
  size_t length = 0;
  const char* body = semroute_runtime_reply_body(reply, &length);
  const DecisionJson got = DecisionJson::parse(std::string(body, length));
  EXPECT_EQ(got["answers"], want["answers"]);
  EXPECT_EQ(got["sets"], want["sets"]);
  semroute_runtime_reply_free(reply);
  semroute_runtime_free(rt);
}

}  // namespace
}  // namespace semroute
