// Decision 2.0's prompts and answers, on the vectors its packages' own tests
// assert: the prompt's exact bytes (canonical JSON, Noul defaults, Score
// indices), the softmax at the type's temperature, the first of equal
// choices, 1 - entropy / ln(n) as confidence, the score bias by level count,
// and invalid_model_output for a non-finite logit. The model end to end
// against a reference: tests/decisions/decision2_test.py.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/decision2.h"
#include "runtime/golden.h"
#include "runtime/random_vela2.h"
#include "runtime/vela2.h"
#include "test_util.h"

namespace semroute {
namespace {

DecisionQuestion question_of(const std::string& text) {
  const std::vector<StatePart> state = decision_state(DecisionJson("x"));
  return decision_question("q", DecisionJson::parse(text), state);
}

TEST(Decision2Prompts, SegmentsAreTheScoredPromptsBytes) {
  const DecisionQuestion q = question_of(R"({"type": "choice", "instructions": "Pick one", "criteria": {"x": null, "y": [1]}})");
  const Decision2Prompt p = decision2_prompt(DecisionJson::parse(R"({"b": 1, "a": "é"})"), q);
  EXPECT_EQ(p.prefix, "Context:\n{\"a\":\"é\",\"b\":1}\n\nTask type: choice\nQuestion:\nPick one\nOptions:");
  ASSERT_EQ(p.options.size(), 2u);
  EXPECT_EQ(p.options[0], "\n<option>\n{\"description\":null,\"key\":\"x\"}\n</option>");
  EXPECT_EQ(p.options[1], "\n<option>\n{\"description\":[1],\"key\":\"y\"}\n</option>");
  EXPECT_EQ(p.suffix, "\n\nSelect the single option best supported by the context and instructions.\nDecision:");
}

TEST(Decision2Prompts, NoulDefaultsAndScoreIndices) {
  const auto options = [](const std::string& text) {
    return decision2_prompt(DecisionJson("s"), question_of(text)).options;
  };
  const auto noul = options(R"({"type": "noul", "instructions": "x", "criteria": {"true": "Definitely"}})");
  EXPECT_EQ(noul[0], "\n<option>\n{\"description\":\"No\",\"key\":\"false\"}\n</option>");
  EXPECT_EQ(noul[1], "\n<option>\n{\"description\":\"Definitely\",\"key\":\"true\"}\n</option>");
  const auto score = options(R"({"type": "score", "instructions": "x", "levels": ["a", {"b": 1}]})");
  EXPECT_EQ(score[1], "\n<option>\n{\"description\":{\"b\":1},\"key\":\"1\"}\n</option>");
  const Decision2Prompt floats = decision2_prompt(DecisionJson::parse(R"({"f": [1.0, 1e-05, 1e16, 1.5]})"),
                                                  question_of(R"({"type": "noul", "instructions": {"q": 1}})"));
  EXPECT_EQ(floats.prefix, "Context:\n{\"f\":[1.0,1e-05,1e+16,1.5]}\n\nTask type: noul\nQuestion:\n{\"q\":1}\nOptions:");
}

TEST(Decision2Answers, ChoiceSoftmaxAndEntropyConfidence) {
  const DecisionQuestion q = question_of(R"({"type": "choice", "instructions": "x", "criteria": {"a": null, "b": null}})");
  const DecisionAnswer a = decision2_answer(q, {2, 0}, 1.0);
  EXPECT_EQ(a.choice, "a");
  const double p = 1 / (1 + std::exp(-2.0));
  EXPECT_NEAR(a.probabilities[0].second, p, 1e-15);
  EXPECT_NEAR(a.confidence, 1 + (p * std::log(p) + (1 - p) * std::log(1 - p)) / std::log(2.0), 1e-12);
  EXPECT_FALSE(a.abstain_probability.has_value());
  const DecisionAnswer half = decision2_answer(q, {1, 0}, 1.0), doubled = decision2_answer(q, {2, 0}, 2.0);
  EXPECT_NEAR(half.probabilities[0].second, doubled.probabilities[0].second, 1e-15);
  const DecisionQuestion three = question_of(R"({"type": "choice", "instructions": "x", "criteria": {"x": 1, "y": 2, "z": 3}})");
  const DecisionAnswer tie = decision2_answer(three, {1, 1, 0}, 1.0);
  EXPECT_EQ(tie.choice, "x");
  EXPECT_EQ(tie.probabilities[0].second, tie.probabilities[1].second);
}

TEST(Decision2Answers, NoulScoreAndScoreBias) {
  const DecisionAnswer noul = decision2_answer(question_of(R"({"type": "noul", "instructions": "x"})"), {0, 1}, 1.0);
  EXPECT_EQ(noul.noul, 1 / (1 + std::exp(-1.0)));
  EXPECT_TRUE(noul.probabilities.empty());
  const DecisionQuestion levels =
      question_of(R"({"type": "score", "instructions": "x", "levels": ["low", {"k": 1}, "high"]})");
  const DecisionAnswer flat = decision2_answer(levels, {0, 0, 0}, 1.0);
  EXPECT_NEAR(flat.score, 1.0, 1e-12);
  EXPECT_NEAR(flat.confidence, 0.0, 1e-12);
  EXPECT_EQ(flat.legend, (std::vector<std::string>{"low", "{\"k\":1}", "high"}));
  const std::vector<double> bias = {0.1, 0, -0.1};
  const DecisionAnswer biased = decision2_answer(levels, {1, 1, 1}, 1.0, &bias);
  const DecisionAnswer shifted = decision2_answer(levels, {1.1, 1.0, 0.9}, 1.0);
  EXPECT_NEAR(biased.score, shifted.score, 1e-15);
  const DecisionAnswer choice_not_biased = decision2_answer(
      question_of(R"({"type": "choice", "instructions": "x", "criteria": {"a": 1, "b": 2, "c": 3}})"), {1, 1, 1}, 1.0, &bias);
  EXPECT_NEAR(choice_not_biased.probabilities[0].second, 1.0 / 3, 1e-15);
}

TEST(Decision2Answers, NonFiniteLogitsAreInvalidModelOutput) {
  const DecisionQuestion q = question_of(R"({"type": "choice", "instructions": "x", "criteria": {"a": null, "b": null}})");
  EXPECT_EQ(decision2_answer(q, {NAN, 0}, 1.0).error, ItemError::kInvalidModelOutput);
  EXPECT_EQ(decision2_answer(q, {INFINITY, 0}, 1.0).error, ItemError::kInvalidModelOutput);
  EXPECT_EQ(decision2_answer(q, {0}, 1.0).error, ItemError::kInvalidModelOutput);
}

// Kai-0.6B's published answers are checked against the same keys the golden
// request gives any Decision 2.0 package (a real Kai is then "matched").
TEST(Decision2Golden, PublishedAnswersHaveTheGoldenRequestsKeys) {
  const test::TempDir dir;
  write_random_decision2(3, 512, dir / "kai");
  const auto model = Decision2Model::load(dir / "kai");
  const GoldenValues got = golden_values(*model);
  const auto kai = published_golden_answers("bb806f31a14d4532a1b5e00984442128f47f46cbbc68e57e7623327c81cfb983", "cpu");
  ASSERT_TRUE(kai.has_value());
  std::vector<std::string> want_keys, got_keys;
  for (const auto& [key, value] : *kai) want_keys.push_back(key);
  for (const auto& [key, value] : got) got_keys.push_back(key);
  EXPECT_EQ(got_keys, want_keys);
  EXPECT_FALSE(published_golden_answers(model->identity().model_sha256, "cpu").has_value());
  EXPECT_FALSE(published_golden_answers("bb806f31a14d4532a1b5e00984442128f47f46cbbc68e57e7623327c81cfb983", "cuda"));
  // A random package's golden answers are not Kai's: compared with them, the check fails.
  EXPECT_EQ(golden_check([&] { return golden_values(*model); }, kai, "cpu").status, "failed");
}

}  // namespace
}  // namespace semroute
