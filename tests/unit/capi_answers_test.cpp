// The C API of prompt compression and hallucination detection: defaults,
// results, streams, statuses for bad input, NULL-safe frees.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "semroute/semroute.h"
#include "semroute/semroute.hpp"
#include "test_util.h"

namespace {

using semroute::test::repo_dir;

// The code of `status` (freed), SEMROUTE_OK for NULL.
semroute_code code_of(semroute_status* status, std::string* message = nullptr) {
  const semroute_code code = semroute_status_code(status);
  if (message != nullptr && status != nullptr) *message = semroute_status_message(status);
  semroute_status_free(status);
  return code;
}

TEST(CApiCompress, CompressesWithinTheBudgetAndMapsBack) {
  semroute_compress_params params = semroute_compress_default_params();
  EXPECT_EQ(params.max_tokens, 512u);
  params.max_tokens = 40;
  const std::string tokenizer = (repo_dir() / "models/domain").string();
  params.tokenizer = tokenizer.c_str();
  params.languages = "en,de";
  semroute_compressor* compressor = nullptr;
  ASSERT_EQ(code_of(semroute_compressor_new(&params, &compressor)), SEMROUTE_OK);
  std::string text = "Please read the notes below.\n";
  for (int i = 0; i < 50; ++i) text += "This line is only here to fill the page. ";
  text += "Lakehurst saw the Hindenburg burn in 1937. ";
  for (int i = 0; i < 50; ++i) text += "This line is only here to fill the page. ";
  text += "\nWhat happened?";
  semroute_compressed* out = nullptr;
  ASSERT_EQ(code_of(semroute_compress(compressor, text.data(), text.size(), &out)), SEMROUTE_OK);
  size_t length = 0;
  const char* skeleton_text = semroute_compressed_text(out, &length);
  const std::string skeleton(skeleton_text, length);
  EXPECT_EQ(semroute_compressed_reduced(out), 1);
  EXPECT_LE(semroute_compressed_tokens(out), 40u);
  EXPECT_STREQ(semroute_compressed_language(out), "en");
  EXPECT_NE(skeleton.find("Hindenburg burn 1937"), std::string::npos) << skeleton;
  size_t count = 0;
  const uint64_t* ranges = semroute_compressed_ranges(out, &count);
  ASSERT_GT(count, 0u);
  std::string joined;
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) {
      const std::string gap = text.substr(ranges[2 * i - 1], ranges[2 * i] - ranges[2 * i - 1]);
      if (!gap.empty()) joined += gap.find('\n') != std::string::npos ? "\n" : " ";
    }
    joined += text.substr(ranges[2 * i], ranges[2 * i + 1] - ranges[2 * i]);
  }
  EXPECT_EQ(joined, skeleton);
  semroute_compressed_free(out);

  std::string message;
  EXPECT_EQ(code_of(semroute_compress(compressor, "bad \xff", 5, &out), &message), SEMROUTE_ERR_INVALID_UTF8);
  EXPECT_EQ(out, nullptr);
  EXPECT_EQ(code_of(semroute_compress(compressor, nullptr, 3, &out)), SEMROUTE_ERR_INVALID_ARGUMENT);
  semroute_compressor_free(compressor);

  params.languages = "xx";
  EXPECT_EQ(code_of(semroute_compressor_new(&params, &compressor), &message), SEMROUTE_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message.find("'xx'"), std::string::npos);
  params = semroute_compress_default_params();
  params.struct_size = 1000;
  EXPECT_EQ(code_of(semroute_compressor_new(&params, &compressor)), SEMROUTE_ERR_INVALID_ARGUMENT);
  // NULL params: the defaults; a short text comes back whole.
  ASSERT_EQ(code_of(semroute_compressor_new(nullptr, &compressor)), SEMROUTE_OK);
  ASSERT_EQ(code_of(semroute_compress(compressor, "Short.", 6, &out)), SEMROUTE_OK);
  EXPECT_STREQ(semroute_compressed_text(out, nullptr), "Short.");
  EXPECT_EQ(semroute_compressed_reduced(out), 0);
  semroute_compressed_free(out);
  semroute_compressor_free(compressor);
  semroute_compressor_free(nullptr);
  semroute_compressed_free(nullptr);
}

class CApiHalluc : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new semroute::test::TempDir();
    semroute::test::write_hallucination_models(dir_->path());
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string path(const char* name) { return (*dir_ / name).string(); }
  static semroute::test::TempDir* dir_;
};
semroute::test::TempDir* CApiHalluc::dir_ = nullptr;

const std::string kContext = "The Eiffel Tower is in Paris. It was completed in 1889.";
const std::string kAnswer = "It was finished in 1889. It is made of cheese!";

TEST_F(CApiHalluc, DetectsAndStreams) {
  semroute_halluc_params params = semroute_halluc_default_params();
  const std::string nli = path("nli_contradiction");
  params.nli_model = nli.c_str();
  semroute_halluc* detector = nullptr;
  ASSERT_EQ(code_of(semroute_halluc_load(path("flags_all").c_str(), &params, &detector)), SEMROUTE_OK);

  semroute_halluc_result* result = nullptr;
  ASSERT_EQ(code_of(semroute_halluc_detect(detector, kContext.data(), kContext.size(), "", 0, kAnswer.data(),
                                           kAnswer.size(), &result)),
            SEMROUTE_OK);
  ASSERT_EQ(semroute_halluc_result_count(result), 2u);
  const semroute_halluc_sentence* second = semroute_halluc_result_sentence(result, 1);
  EXPECT_EQ(second->struct_size, sizeof(semroute_halluc_sentence));
  EXPECT_EQ(kAnswer.substr(second->begin, second->end - second->begin), "It is made of cheese!");
  EXPECT_EQ(second->event, SEMROUTE_HALLUC_WARN);
  ASSERT_EQ(second->span_count, 1u);
  EXPECT_STREQ(second->spans[0]->nli_label, "contradiction");
  EXPECT_EQ(second->spans[0]->severity, 4);
  EXPECT_EQ(semroute_halluc_result_sentence(result, 2), nullptr);
  semroute_halluc_result_free(result);

  // The same answer as an SSE stream, cut mid-line, stopping at severity 4.
  semroute_halluc_stream* stream = nullptr;
  ASSERT_EQ(code_of(semroute_halluc_stream_open(detector, kContext.data(), kContext.size(), "", 0, 1, 4, &stream)),
            SEMROUTE_OK);
  semroute_halluc_free(detector);  // the stream keeps it alive
  const std::string sse =
      ": hello\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"It was finished \"}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{\"content\":\"in 1889. It is\"}}]}\n\n";
  ASSERT_EQ(code_of(semroute_halluc_stream_feed(stream, sse.data(), 20, &result)), SEMROUTE_OK);
  EXPECT_EQ(semroute_halluc_result_count(result), 0u);
  semroute_halluc_result_free(result);
  ASSERT_EQ(code_of(semroute_halluc_stream_feed(stream, sse.data() + 20, sse.size() - 20, &result)), SEMROUTE_OK);
  ASSERT_EQ(semroute_halluc_result_count(result), 1u);  // the first sentence is complete
  EXPECT_EQ(semroute_halluc_result_sentence(result, 0)->event, SEMROUTE_HALLUC_STOP);
  semroute_halluc_result_free(result);
  std::string message;
  EXPECT_EQ(code_of(semroute_halluc_stream_feed(stream, "data: x\n\n", 9, &result), &message),
            SEMROUTE_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message.find("stopped"), std::string::npos);
  semroute_halluc_stream_free(stream);

  semroute_halluc_free(nullptr);
  semroute_halluc_stream_free(nullptr);
  semroute_halluc_result_free(nullptr);
}

TEST_F(CApiHalluc, BadInputGetsAStatus) {
  semroute_halluc* detector = nullptr;
  ASSERT_EQ(code_of(semroute_halluc_load(path("flags_none").c_str(), nullptr, &detector)), SEMROUTE_OK);
  semroute_halluc_result* result = nullptr;
  EXPECT_EQ(code_of(semroute_halluc_detect(detector, "", 0, "", 0, "x", 1, &result)), SEMROUTE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(code_of(semroute_halluc_detect(detector, "c", 1, "", 0, "\xc3", 1, &result)), SEMROUTE_ERR_INVALID_UTF8);
  EXPECT_EQ(result, nullptr);
  semroute_halluc_stream* stream = nullptr;
  ASSERT_EQ(code_of(semroute_halluc_stream_open(detector, "c", 1, "", 0, 1, 0, &stream)), SEMROUTE_OK);
  EXPECT_EQ(code_of(semroute_halluc_stream_feed(stream, "data: {]\n\n", 10, &result)), SEMROUTE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(code_of(semroute_halluc_stream_finish(stream, &result)), SEMROUTE_ERR_INVALID_ARGUMENT);  // failed before
  semroute_halluc_stream_free(stream);
  semroute_halluc_free(detector);

  semroute_halluc_params params = semroute_halluc_default_params();
  params.input_template = "gpt";
  std::string message;
  EXPECT_EQ(code_of(semroute_halluc_load(path("flags_none").c_str(), &params, &detector), &message),
            SEMROUTE_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message.find("lettucedetect or halugate"), std::string::npos);
  params = semroute_halluc_default_params();
  params.nli_model = "/nonexistent";
  EXPECT_EQ(code_of(semroute_halluc_load(path("flags_none").c_str(), &params, &detector)), SEMROUTE_ERR_NOT_FOUND);
  EXPECT_EQ(detector, nullptr);
}

TEST_F(CApiHalluc, RoutedRequestsOpenAnswerChecks) {
  const std::string yaml = (*dir_ / "router.yaml").string();
  semroute::test::write_file(yaml, "hallucination: {model: " + path("flags_none") + "}\n"
                                   "decisions: [{name: rag, when: \"length > 0\", check_answer: true}]\n");
  semroute_router* router = nullptr;
  ASSERT_EQ(code_of(semroute_router_load(yaml.c_str(), &router)), SEMROUTE_OK);
  const std::string request = R"({"model": "auto", "messages": [{"role": "user", "content": "When was it built?"},
      {"role": "tool", "tool_call_id": "a", "content": "It was completed in 1889."}]})";
  semroute_route* route = nullptr;
  ASSERT_EQ(code_of(semroute_router_route(router, request.data(), request.size(), nullptr, 0, &route)), SEMROUTE_OK);
  EXPECT_EQ(semroute_route_check_answer(route), 1);
  semroute_halluc_stream* stream = nullptr;
  ASSERT_EQ(code_of(semroute_router_check_answer(router, route, nullptr, 0, 0, &stream)), SEMROUTE_OK);
  semroute_halluc_result* result = nullptr;
  ASSERT_EQ(code_of(semroute_halluc_stream_feed(stream, "In 1889. ", 9, &result)), SEMROUTE_OK);
  semroute_halluc_result_free(result);
  ASSERT_EQ(code_of(semroute_halluc_stream_finish(stream, &result)), SEMROUTE_OK);
  ASSERT_EQ(semroute_halluc_result_count(result), 1u);
  EXPECT_EQ(semroute_halluc_result_sentence(result, 0)->event, SEMROUTE_HALLUC_OK);
  semroute_halluc_result_free(result);
  semroute_halluc_stream_free(stream);
  EXPECT_EQ(semroute_route_check_answer(nullptr), 0);
  EXPECT_EQ(code_of(semroute_router_check_answer(router, nullptr, nullptr, 0, 0, &stream)),
            SEMROUTE_ERR_INVALID_ARGUMENT);
  semroute_route_free(route);
  semroute_router_free(router);
}

TEST_F(CApiHalluc, TheCppClientWrapsCompressionAndChecks) {
  auto params = semroute::CompressorClient::default_params();
  params.max_tokens = 5;
  const auto compressor = semroute::CompressorClient::make(params);
  const std::string text = "First sentence here. " + std::string(200, 'x') + " Last one.";
  const semroute::PromptSkeleton skeleton = compressor.compress(text);
  EXPECT_TRUE(skeleton.reduced);
  EXPECT_LE(skeleton.tokens, 5u);
  ASSERT_FALSE(skeleton.ranges.empty());
  EXPECT_EQ(text.substr(skeleton.ranges[0].first, 5), "First");
  EXPECT_THROW(compressor.compress("\xff"), semroute::Error);

  const auto checker = semroute::AnswerChecker::load(path("flags_all"));
  const auto whole = checker.detect(kContext, "", kAnswer);
  ASSERT_EQ(whole.size(), 2u);
  EXPECT_EQ(whole[1].event, SEMROUTE_HALLUC_WARN);
  ASSERT_EQ(whole[1].spans.size(), 1u);
  EXPECT_EQ(whole[1].spans[0].severity, 3);
  auto stream = checker.open_stream(kContext, "", false, 3);
  const auto events = stream.feed(kAnswer);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].event, SEMROUTE_HALLUC_STOP);
  EXPECT_THROW(stream.feed("more"), semroute::Error);
  try {
    semroute::AnswerChecker::load("/nonexistent");
    ADD_FAILURE() << "loaded a missing directory";
  } catch (const semroute::Error& e) {
    EXPECT_EQ(e.code(), semroute::ErrorCode::kNotFound);
  }
}

}  // namespace
