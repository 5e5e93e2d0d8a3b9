// Multi-label classifiers (config.json problem_type
// "multi_label_classification"): each label scored by its own sigmoid, as
// Hugging Face's text-classification pipeline scores them, through the C++
// API, the C API and the loader's refusals.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "reference.h"
#include "semroute/semroute.h"
#include "tasks/sequence_classifier.h"
#include "test_util.h"

namespace semroute {
namespace {

namespace fs = std::filesystem;

// A copy of a classifier directory whose config.json says `problem_type`.
fs::path with_problem_type(const fs::path& source, const test::TempDir& dir, const std::string& problem_type) {
  return test::copy_with_json_key(source, dir / ("as_" + problem_type), "config.json", "problem_type", problem_type);
}

TEST(MultiLabel, ScoringFollowsTheConfigAsHuggingFaceDoes) {
  EXPECT_EQ(scoring_for("", 3), Scoring::kSoftmax);
  EXPECT_EQ(scoring_for("single_label_classification", 3), Scoring::kSoftmax);
  EXPECT_EQ(scoring_for("single_label_classification", 1), Scoring::kSoftmax);
  EXPECT_EQ(scoring_for("multi_label_classification", 3), Scoring::kSigmoid);
  EXPECT_EQ(scoring_for("", 1), Scoring::kSigmoid);  // one output: a sigmoid, never a constant 1
  test::expect_error([] { scoring_for("regression", 1); }, ErrorCode::kInvalidModel, "regression head");
  test::expect_error([] { scoring_for("ranking", 2); }, ErrorCode::kInvalidModel, "'ranking' is not one of");
}

TEST(MultiLabel, ScoresAreSigmoidsOfTheReferenceLogits) {
  // The fixture's Hugging Face logits through a sigmoid each: what the
  // pipeline returns for a multi-label head.
  const fs::path fixture = test::data_dir() / "modernbert_seqcls_cls";
  TaskOptions options;  // the fixture has ids, not text: any tokenizer lets it load
  options.tokenizer = test::data_dir() / "tokenizers" / "modernbert" / "tokenizer.json";
  const auto classifier = SequenceClassifier::load(fixture, options);
  for (const auto& c : test::load_reference(fixture / "reference.json")) {
    const at::Tensor expected = at::sigmoid(c.expected("logits"));
    const auto results = to_classifications(classifier->logits(c.inputs), classifier->labels(), Scoring::kSigmoid);
    ASSERT_EQ(static_cast<int64_t>(results.size()), expected.size(0));
    for (size_t b = 0; b < results.size(); ++b) {
      const at::Tensor row = expected[static_cast<int64_t>(b)];
      const at::Tensor actual = at::tensor(results[b].probabilities);
      const test::Agreement a = test::compare(actual, row, at::Tensor());
      std::printf("    %s[%zu] sigmoid scores vs HF logits: max abs error %.3g, cosine %.6f\n", c.name.c_str(), b,
                  a.max_abs_error, a.cosine);
      EXPECT_LT(a.max_abs_error, 1e-5);
      EXPECT_EQ(results[b].class_id, row.argmax().item<int64_t>());
      EXPECT_FLOAT_EQ(results[b].confidence, results[b].probabilities[static_cast<size_t>(results[b].class_id)]);
    }
  }
}

TEST(MultiLabel, TheLoaderReadsProblemType) {
  test::TempDir dir;
  const fs::path domain = test::repo_dir() / "models" / "domain";
  const auto single = SequenceClassifier::load(domain);
  const auto multi = SequenceClassifier::load(with_problem_type(domain, dir, "multi_label_classification"));
  EXPECT_EQ(single->scoring(), Scoring::kSoftmax);
  EXPECT_EQ(multi->scoring(), Scoring::kSigmoid);
  const std::vector<std::string_view> texts = {"What is the derivative of x squared?",
                                               "Can my landlord keep the deposit?"};
  const auto softmaxed = single->classify(texts), sigmoided = multi->classify(texts);
  for (size_t i = 0; i < texts.size(); ++i) {
    const Encoding encoded = single->task().tokenizer->encode(texts[i], single->task().encode);
    ModelInputs in;
    in.input_ids = at::tensor(std::vector<int64_t>(encoded.ids.begin(), encoded.ids.end())).unsqueeze(0);
    in.attention_mask = at::ones_like(in.input_ids);
    const at::Tensor expected = at::sigmoid(single->logits(in)[0].to(at::kFloat));
    const double error = (at::tensor(sigmoided[i].probabilities) - expected).abs().max().item<double>();
    EXPECT_LT(error, 1e-5) << texts[i];
    double sum = 0;
    for (float p : softmaxed[i].probabilities) sum += p;
    EXPECT_NEAR(sum, 1.0, 1e-5);
    EXPECT_EQ(sigmoided[i].class_id, softmaxed[i].class_id);  // both monotone in the logits
  }
  test::expect_error([&] { SequenceClassifier::load(with_problem_type(domain, dir, "regression")); },
                     ErrorCode::kInvalidModel, "as_regression: config.json problem_type 'regression'");
}

TEST(MultiLabel, TheCApiSaysWhichScoresItGives) {
  test::TempDir dir;
  const fs::path domain = test::repo_dir() / "models" / "domain";
  const std::string multi_dir = with_problem_type(domain, dir, "multi_label_classification").string();
  semroute_model *single = nullptr, *multi = nullptr;
  ASSERT_EQ(semroute_model_load(domain.c_str(), nullptr, &single), nullptr);
  ASSERT_EQ(semroute_model_load(multi_dir.c_str(), nullptr, &multi), nullptr);
  EXPECT_EQ(semroute_model_multi_label(single), 0);
  EXPECT_EQ(semroute_model_multi_label(multi), 1);
  EXPECT_EQ(semroute_model_multi_label(nullptr), 0);
  const std::string text = "Is it legal to record a phone call?";
  semroute_classifications* results = nullptr;
  ASSERT_EQ(semroute_classify(multi, text.data(), text.size(), &results), nullptr);
  size_t count = 0;
  const float* scores = semroute_classifications_probabilities(results, 0, &count);
  const auto expected = SequenceClassifier::load(multi_dir)->classify({text});
  ASSERT_EQ(count, expected[0].probabilities.size());
  for (size_t k = 0; k < count; ++k) EXPECT_NEAR(scores[k], expected[0].probabilities[k], 1e-6);
  semroute_classifications_free(results);
  semroute_model_free(multi);
  semroute_model_free(single);
}

}  // namespace
}  // namespace semroute
