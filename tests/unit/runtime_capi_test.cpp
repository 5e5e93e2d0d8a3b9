// The model runtime contract through the C API (and its C++ wrapper): the
// same answers as the classes it serves (1e-6), every path's reply a JSON
// answer with its status, failed models reported, misuse as status codes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <thread>

#include "semroute/semroute.h"
#include "semroute/semroute.hpp"
#include "tasks/embedder.h"
#include "tasks/sequence_classifier.h"
#include "tasks/token_classifier.h"
#include "test_util.h"

namespace semroute {
namespace {

const std::filesystem::path kModels = test::repo_dir() / "models";

nlohmann::json body_of(const RuntimeReply& r) { return nlohmann::json::parse(r.body); }

class RuntimeCApi : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    runtime_ = new RuntimeClient(RuntimeClient::make());
    runtime_->add_model("domain", (kModels / "domain").string());
    runtime_->add_model("pii", (kModels / "pii").string());
    semroute_model_params embedding = semroute_model_default_params();
    embedding.task = SEMROUTE_TASK_EMBEDDING;
    runtime_->add_model("encoder", (kModels / "multitask/base").string(), embedding);
  }
  static void TearDownTestSuite() { delete runtime_; }
  static RuntimeClient* runtime_;
};
RuntimeClient* RuntimeCApi::runtime_ = nullptr;

TEST_F(RuntimeCApi, ClassifyEqualsTheClassifier) {
  const std::vector<std::string_view> texts = {"What is the derivative of x^2 + 3x?", "Ünïcödé — 日本語"};
  const auto want = SequenceClassifier::load(kModels / "domain")->classify(texts);
  const RuntimeReply reply = runtime_->call("/v1/classify", R"({"model": "domain", "input": ["What is the derivative of x^2 + 3x?", "Ünïcödé — 日本語"]})");
  ASSERT_EQ(reply.status, 200) << reply.body;
  const auto got = body_of(reply)["results"];
  for (size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ(got[i]["label"], want[i].label);
    for (size_t k = 0; k < want[i].probabilities.size(); ++k)
      EXPECT_NEAR(got[i]["probabilities"][k].get<double>(), want[i].probabilities[k], 1e-6);
  }
  EXPECT_NE(reply.server_timing.find("forward;dur="), std::string::npos) << reply.server_timing;
}

TEST_F(RuntimeCApi, SpansAreCodePointsAndEmbeddingsEqualTheEmbedder) {
  const std::string text = "Ünï: call David Kim at 212-555-0187";
  const auto entities = TokenClassifier::load(kModels / "pii")->classify({text})[0].entities;
  const auto spans = body_of(runtime_->call("/v1/classify", nlohmann::json({{"model", "pii"}, {"input", text}}).dump()))
                         ["results"][0]["spans"];
  ASSERT_EQ(spans.size(), entities.size());
  ASSERT_FALSE(spans.empty());
  // The code points before a byte offset: the bytes that start one ("Ünï" is 3 in 5 bytes).
  const auto code_points = [&](size_t bytes) {
    return static_cast<size_t>(std::count_if(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(bytes),
                                             [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
  };
  for (size_t i = 0; i < spans.size(); ++i) {
    EXPECT_EQ(spans[i]["label"], entities[i].type);
    EXPECT_EQ(spans[i]["start"].get<size_t>(), code_points(entities[i].begin));
    EXPECT_EQ(spans[i]["end"].get<size_t>(), code_points(entities[i].end));
  }
  EXPECT_GT(entities.back().begin, code_points(entities.back().begin));  // a span after "Ünï" differs
  const std::vector<float> want = Embedder::load(kModels / "multitask/base")->embed_rows({"solve for x"});
  const auto got = body_of(runtime_->call("/v1/embeddings", R"({"model": "encoder", "input": "solve for x"})"))
                       ["data"][0]["embedding"];
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) EXPECT_NEAR(got[k].get<double>(), want[k], 1e-6);
}

TEST_F(RuntimeCApi, EveryReplyIsAnAnswerWithItsStatus) {
  const auto models = body_of(runtime_->call("/v1/models"));
  EXPECT_EQ(models["api_version"], "2.3.0");
  EXPECT_EQ(models["data"].size(), 3u);
  EXPECT_EQ(runtime_->call("/health").status, 200);
  const auto code = [](const RuntimeReply& r) { return body_of(r)["error"]["code"].get<std::string>(); };
  EXPECT_EQ(code(runtime_->call("/v1/classify", R"({"model": "nope", "input": "x"})")), "model_not_found");
  EXPECT_EQ(code(runtime_->call("/v1/classify", "{not json")), "invalid_request");
  EXPECT_EQ(code(runtime_->call("/v1/rerank", R"({"model": "domain", "query": "q", "documents": ["d"]})")),
            "unsupported_surface");
  EXPECT_EQ(runtime_->call("/v1/nowhere", "{}").status, 404);
  const RuntimeReply long_one = runtime_->call("/v1/classify", nlohmann::json({{"model", "domain"},
                                                                                {"input", std::string(20000, 'a')}}).dump());
  EXPECT_EQ(body_of(long_one)["results"][0]["error"], "max_length_exceeded");
}

TEST_F(RuntimeCApi, CallsFromManyThreadsAgree) {
  const std::string request = R"({"model": "domain", "input": "What is 2 + 2?"})";
  const std::string want = body_of(runtime_->call("/v1/classify", request))["results"].dump();
  std::vector<std::thread> threads;
  std::atomic<int> same{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) same += body_of(runtime_->call("/v1/classify", request))["results"].dump() == want;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(same.load(), 40);
}

// Heads bound to one backbone (add_heads): each answers as the tasks
// layer's classifier bound to the same encoder (1e-5), a bundle of both
// heads equals each alone, and the card lists them in order.
TEST(RuntimeCApiHeads, HeadsOnOneBackboneAnswerAsTheBoundClassifiers) {
  RuntimeClient runtime = RuntimeClient::make();
  const std::string base = (kModels / "multitask/base").string();
  runtime.add_heads("guard", base, {{"topic", (kModels / "domain").string()}, {"pii", (kModels / "pii").string()}});
  const Backbone backbone = Backbone::load(base, {});
  const std::string text = "What is the derivative of x^2 + 3x? Ask David Kim.";
  const Classification want = SequenceClassifier::bind(backbone, kModels / "domain")->classify({text})[0];
  const auto entities = TokenClassifier::bind(backbone, kModels / "pii")->classify({text})[0].entities;

  const nlohmann::json topic = {{"model", "guard"}, {"head", "topic"}, {"input", text}};
  const nlohmann::json pii = {{"model", "guard"}, {"head", "pii"}, {"input", text}};
  const RuntimeReply reply = runtime.call("/v1/classify", topic.dump());
  ASSERT_EQ(reply.status, 200) << reply.body;
  const nlohmann::json got = body_of(reply)["results"][0];
  EXPECT_EQ(got["label"], want.label);
  for (size_t k = 0; k < want.probabilities.size(); ++k)
    EXPECT_NEAR(got["probabilities"][k].get<double>(), want.probabilities[k], 1e-5);
  const nlohmann::json spans = body_of(runtime.call("/v1/classify", pii.dump()))["results"][0]["spans"];
  EXPECT_EQ(spans.size(), entities.size()) << spans;

  const nlohmann::json bundle = {{"tasks", {{{"id", "a"}, {"classify", topic}}, {{"id", "b"}, {"classify", pii}}}}};
  const nlohmann::json results = body_of(runtime.call("/v1/bundle", bundle.dump()))["results"];
  EXPECT_EQ(results[0]["classify"], body_of(runtime.call("/v1/classify", topic.dump())));
  EXPECT_EQ(results[1]["classify"]["results"][0]["spans"], spans);
  const nlohmann::json heads = body_of(runtime.call("/v1/models"))["data"][0]["heads"];
  ASSERT_EQ(heads.size(), 2u);
  EXPECT_EQ(heads[0]["name"], "topic");
  EXPECT_EQ(heads[1]["kind"], "token");
  EXPECT_EQ(runtime.call("/v1/classify", R"({"model": "guard", "head": "nope", "input": "x"})").status, 400);

  // Refusals: no heads, a name given twice.
  semroute_runtime* raw = nullptr;
  ASSERT_EQ(semroute_runtime_create(0, 0, &raw), nullptr);
  const char* names[] = {"a", "a"};
  const std::string domain = (kModels / "domain").string(), pii_dir = (kModels / "pii").string();
  const char* dirs[] = {domain.c_str(), pii_dir.c_str()};
  for (const size_t count : {size_t{0}, size_t{2}}) {
    semroute_status* status = semroute_runtime_add_heads(raw, "x", base.c_str(), count, names, dirs, nullptr);
    EXPECT_NE(status, nullptr) << count;
    semroute_status_free(status);
  }
  semroute_runtime_free(raw);
}

TEST(RuntimeCApiMisuse, StatusCodesNeverCrashes) {
  semroute_runtime* runtime = nullptr;
  ASSERT_EQ(semroute_runtime_create(0, 0, &runtime), nullptr);
  semroute_runtime_reply* reply = nullptr;
  const auto code_of = [](semroute_status* s) {
    const semroute_code c = semroute_status_code(s);
    semroute_status_free(s);
    return c;
  };
  EXPECT_EQ(code_of(semroute_runtime_call(nullptr, "GET", "/health", nullptr, 0, &reply)), SEMROUTE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(code_of(semroute_runtime_call(runtime, nullptr, "/health", nullptr, 0, &reply)), SEMROUTE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(code_of(semroute_runtime_call(runtime, "POST", "/v1/classify", nullptr, 5, &reply)), SEMROUTE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(code_of(semroute_runtime_add_model(runtime, "../x", (kModels / "domain").c_str(), nullptr)),
            SEMROUTE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(code_of(semroute_runtime_add_model(runtime, "x", "/nowhere/at/all", nullptr)), SEMROUTE_ERR_NOT_FOUND);
  ASSERT_EQ(semroute_runtime_add_model(runtime, "domain", (kModels / "domain").c_str(), nullptr), nullptr);
  EXPECT_EQ(code_of(semroute_runtime_add_model(runtime, "domain", (kModels / "domain").c_str(), nullptr)),
            SEMROUTE_ERR_INVALID_ARGUMENT);  // the name is taken
  ASSERT_EQ(semroute_runtime_call(runtime, "GET", "/health", nullptr, 0, &reply), nullptr);
  EXPECT_EQ(semroute_runtime_reply_status(reply), 200);
  semroute_runtime_reply_free(reply);
  semroute_runtime_free(runtime);
}

// A model whose file differs from its manifest is added, failed: not ready,
// answered 503 not_ready, /health 503 with the reason.
TEST(RuntimeCApiPackages, AFileThatDiffersFromItsManifestFailsTheModel) {
  test::TempDir dir;
  std::filesystem::copy(kModels / "domain", dir / "domain");
  test::write_file(dir / "domain/SHA256SUMS",
                   std::string(64, '0') + "  config.json\n");  // not its digest
  RuntimeClient runtime = RuntimeClient::make();
  runtime.add_model("domain", (dir / "domain").string());
  const RuntimeReply health = runtime.call("/health");
  EXPECT_EQ(health.status, 503);
  EXPECT_NE(health.body.find("its manifest says"), std::string::npos) << health.body;
  const RuntimeReply answer = runtime.call("/v1/classify", R"({"model": "domain", "input": "x"})");
  EXPECT_EQ(answer.status, 503);
  EXPECT_EQ(body_of(answer)["error"]["code"], "not_ready");
}

}  // namespace
}  // namespace semroute
