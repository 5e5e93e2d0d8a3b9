// Vela 2.0 decisions in the library: one model shared by many threads gives
// every thread the answers one thread gets, a long state read in windows
// included; the in-process runtime (C API) answers /v1/decisions as the
// library does. Numerics against the reference: tests/decisions/.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "runtime/random_vela2.h"
#include "runtime/vela2.h"
#include "semroute/semroute.h"
#include "test_util.h"

namespace semroute {
namespace {

std::filesystem::path make_package(const test::TempDir& dir) {
  RandomModelSpec spec;
  spec.preset = "tiny";
  spec.tokenizer = test::data_dir() / "tokenizers/modernbert/tokenizer.json";
  spec.seed = 5;
  write_random_vela2(spec, "both", 128, dir / "vela2");
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
                   "overflow": "truncate"}}})"};

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
          same = got[i].probabilities == expected[k][i].probabilities && got[i].noul == expected[k][i].noul;
        if (!same) ++mismatches;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
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
