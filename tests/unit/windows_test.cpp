// Windowed classification of documents longer than a model reads at once:
// the window plan (the facts the router's native interface states), each
// window against a forward of the same tokens alone, byte ranges, refusals.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tasks/sequence_classifier.h"
#include "tasks/text_batch.h"
#include "test_util.h"

namespace semroute {
namespace {

std::vector<std::pair<size_t, size_t>> plan(size_t content, size_t specials, size_t size, size_t overlap) {
  std::vector<std::pair<size_t, size_t>> out;
  for (const auto& w : plan_windows(content, specials, size, overlap)) out.emplace_back(w.begin, w.end);
  return out;
}

TEST(Windows, PlanStartsAtZeroEndsAtTheEndAndSharesTheOverlap) {
  using Ranges = std::vector<std::pair<size_t, size_t>>;
  EXPECT_EQ(plan(22, 2, 8, 2), (Ranges{{0, 6}, {4, 10}, {8, 14}, {12, 18}, {16, 22}}));
  EXPECT_EQ(plan(65534, 2, 32768, 128), (Ranges{{0, 32766}, {32638, 65404}, {65276, 65534}}));
  EXPECT_EQ(plan(5, 2, 8, 0), (Ranges{{0, 5}}));  // fits: one window
  EXPECT_EQ(plan(0, 2, 8, 0), (Ranges{{0, 0}}));  // an empty document: one empty window
  EXPECT_EQ(plan(12, 0, 4, 0), (Ranges{{0, 4}, {4, 8}, {8, 12}}));
  test::expect_error([] { plan(10, 2, 2, 0); }, ErrorCode::kInvalidArgument, "holds no text after the model's 2");
  test::expect_error([] { plan(10, 2, 8, 6); }, ErrorCode::kInvalidArgument, "must be smaller than a window's text (6");
}

class WindowedClassifier : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { classifier_ = SequenceClassifier::load(test::repo_dir() / "models" / "domain"); }
  static void TearDownTestSuite() { classifier_.reset(); }
  static std::shared_ptr<const SequenceClassifier> classifier_;
};
std::shared_ptr<const SequenceClassifier> WindowedClassifier::classifier_;

TEST_F(WindowedClassifier, EachWindowEqualsItsTokensAlone) {
  std::string document;
  for (int i = 0; i < 40; ++i)
    document += i % 2 ? "The court ruled on the contract dispute. " : "Enzymes fold proteins in the cell — été. ";
  WindowOptions options;
  options.size = 48;
  options.overlap = 8;
  const DocumentClassification result = classifier_->classify_windows(document, options);
  const Tokenizer& tokenizer = *classifier_->task().tokenizer;
  EncodeOptions plain;
  plain.add_special_tokens = false;
  const Encoding text = tokenizer.encode(document, plain);
  EXPECT_EQ(result.content_tokens, text.size());
  ASSERT_GT(result.windows.size(), 3u);
  EXPECT_EQ(result.windows.front().tokens.begin, 0u);
  EXPECT_EQ(result.windows.back().tokens.end, text.size());
  double worst = 0;
  for (const auto& w : result.windows) {
    const Encoding alone = tokenizer.with_special_tokens(slice(text, w.tokens));
    EXPECT_LE(alone.size(), options.size);
    ModelInputs in;
    in.input_ids = at::tensor(std::vector<int64_t>(alone.ids.begin(), alone.ids.end())).unsqueeze(0);
    in.attention_mask = at::ones_like(in.input_ids);
    const at::Tensor expected = at::softmax(classifier_->logits(in)[0].to(at::kFloat), -1);
    const at::Tensor got = at::tensor(w.classification.probabilities);
    worst = std::max(worst, (got - expected).abs().max().item<double>());
    EXPECT_EQ(w.classification.input.processed_tokens, alone.size());
    EXPECT_FALSE(w.classification.input.truncated);
    // The bytes it covers are its tokens' text.
    EXPECT_EQ(w.byte_begin, text.offsets[w.tokens.begin].begin);
    EXPECT_EQ(w.byte_end, text.offsets[w.tokens.end - 1].end);
    EXPECT_LE(w.byte_end, document.size());
  }
  std::printf("    windows vs each window's tokens alone: max abs error %.3g over %zu windows\n", worst,
              result.windows.size());
  EXPECT_LT(worst, 1e-5);
}

TEST_F(WindowedClassifier, ADocumentThatFitsIsOneWindowEqualToClassify) {
  const std::string text = "Can my landlord keep the deposit after I moved out?";
  const auto windows = classifier_->classify_windows(text, {});
  ASSERT_EQ(windows.windows.size(), 1u);
  const Classification whole = classifier_->classify({text}).at(0);
  EXPECT_EQ(windows.windows[0].classification.class_id, whole.class_id);
  for (size_t k = 0; k < whole.probabilities.size(); ++k)
    EXPECT_NEAR(windows.windows[0].classification.probabilities[k], whole.probabilities[k], 1e-6);
  EXPECT_EQ(windows.windows[0].byte_begin, 0u);
  EXPECT_EQ(windows.windows[0].byte_end, text.size());  // every token of it
}

TEST_F(WindowedClassifier, RefusesWhatItCannotWindow) {
  WindowOptions options;
  options.size = 100000;
  test::expect_error([&] { classifier_->classify_windows("text", options); }, ErrorCode::kTooLong,
                     "longer than the model's max_length");
  options = {};
  options.max_document_tokens = 3;
  test::expect_error([&] { classifier_->classify_windows("one two three four five", options); }, ErrorCode::kTooLong,
                     "more than max_document_tokens (3): windows never cut a document");
  options = {};
  options.size = 8;
  options.overlap = 6;
  test::expect_error([&] { classifier_->classify_windows("text", options); }, ErrorCode::kInvalidArgument,
                     "must be smaller than a window's text");
  test::expect_error([&] { classifier_->classify_windows("bad \xff byte", {}); }, ErrorCode::kInvalidUtf8, "UTF-8");
}

}  // namespace
}  // namespace semroute
