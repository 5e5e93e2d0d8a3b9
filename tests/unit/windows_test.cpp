// Windowed classification of documents longer than a model reads at once:
// the window plan (the facts the router's native interface states), each
// window against a forward of the same tokens alone, byte ranges, refusals.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "semroute/semroute.hpp"
#include "tasks/sequence_classifier.h"
#include "tasks/token_classifier.h"
#include "tasks/text_batch.h"
#include "test_util.h"

namespace semroute {
namespace {

std::vector<std::pair<size_t, size_t>> plan(size_t content, size_t specials, size_t size, size_t overlap) {
  std::vector<std::pair<size_t, size_t>> out;
  for (const auto& w : plan_windows(content, specials, size, overlap)) out.emplace_back(w.begin, w.end);
  return out;
}

WindowOptions windows_of(size_t size, size_t overlap) {
  WindowOptions options;
  options.size = size;
  options.overlap = overlap;
  return options;
}

// The document's text tokens, as the windows take them.
Encoding text_tokens(const Tokenizer& tokenizer, const std::string& document) {
  EncodeOptions plain;
  plain.add_special_tokens = false;
  return tokenizer.encode(document, plain);
}

// One window's tokens as a batch of one.
ModelInputs inputs_of(const Encoding& e) {
  ModelInputs in;
  in.input_ids = at::tensor(std::vector<int64_t>(e.ids.begin(), e.ids.end())).unsqueeze(0);
  in.attention_mask = at::ones_like(in.input_ids);
  return in;
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
  const WindowOptions options = windows_of(48, 8);
  const DocumentClassification result = classifier_->classify_windows(document, options);
  const Tokenizer& tokenizer = *classifier_->task().tokenizer;
  const Encoding text = text_tokens(tokenizer, document);
  EXPECT_EQ(result.content_tokens, text.size());
  ASSERT_GT(result.windows.size(), 3u);
  EXPECT_EQ(result.windows.front().tokens.begin, 0u);
  EXPECT_EQ(result.windows.back().tokens.end, text.size());
  double worst = 0;
  for (const auto& w : result.windows) {
    const Encoding alone = tokenizer.with_special_tokens(slice(text, w.tokens));
    EXPECT_LE(alone.size(), options.size);
    const at::Tensor expected = at::softmax(classifier_->logits(inputs_of(alone))[0].to(at::kFloat), -1);
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

TEST(TokenWindows, ADocumentThatFitsEqualsClassify) {
  const auto pii = TokenClassifier::load(test::repo_dir() / "models" / "pii");
  const std::string text = "Write to john.smith@example.com or call Jane Doe at 555-0100.";
  const DocumentTokens windows = pii->classify_windows(text, {});
  const TokenClassification whole = pii->classify({text}).at(0);
  ASSERT_EQ(windows.windows.size(), 1u);
  ASSERT_EQ(windows.result.tokens.size(), whole.tokens.size());
  for (size_t i = 0; i < whole.tokens.size(); ++i) {
    EXPECT_EQ(windows.result.tokens[i].label_id, whole.tokens[i].label_id) << i;
    EXPECT_NEAR(windows.result.tokens[i].probability, whole.tokens[i].probability, 1e-5) << i;
  }
  ASSERT_EQ(windows.result.entities.size(), whole.entities.size());
  for (size_t i = 0; i < whole.entities.size(); ++i) {
    EXPECT_EQ(windows.result.entities[i].type, whole.entities[i].type);
    EXPECT_EQ(windows.result.entities[i].begin, whole.entities[i].begin);
    EXPECT_EQ(windows.result.entities[i].end, whole.entities[i].end);
  }
  EXPECT_FALSE(windows.result.input.truncated);
  EXPECT_EQ(windows.result.input.processed_tokens, whole.input.processed_tokens);
}

TEST(TokenWindows, EachTokenComesFromTheWindowWhereItHasTheMostContext) {
  const auto pii = TokenClassifier::load(test::repo_dir() / "models" / "pii");
  std::string document;
  for (int i = 0; i < 12; ++i)
    document += "Contact person" + std::to_string(i) + "@example.com or Mary Major about invoice " + std::to_string(i) + ". ";
  const DocumentTokens got = pii->classify_windows(document, windows_of(40, 12));
  const Tokenizer& tokenizer = *pii->task().tokenizer;
  const Encoding text = text_tokens(tokenizer, document);
  ASSERT_EQ(got.content_tokens, text.size());
  ASSERT_EQ(got.result.tokens.size(), text.size());
  ASSERT_GT(got.windows.size(), 3u);
  // The expected label of each token: from each window run alone.
  std::vector<int64_t> best_margin(text.size(), -1), expected(text.size(), -1);
  for (const TokenRange& r : got.windows) {
    const Encoding alone = tokenizer.with_special_tokens(slice(text, r));
    const at::Tensor labels = pii->logits(inputs_of(alone))[0].argmax(-1);
    int64_t k = 0;
    for (size_t i = 0; i < alone.size(); ++i) {
      if (alone.special_tokens_mask[i]) continue;
      const int64_t margin = std::min(k, static_cast<int64_t>(r.end - r.begin) - 1 - k);
      const size_t token = r.begin + static_cast<size_t>(k++);
      if (margin > best_margin[token]) {
        best_margin[token] = margin;
        expected[token] = labels[static_cast<int64_t>(i)].item<int64_t>();
      }
    }
  }
  for (size_t t = 0; t < text.size(); ++t) EXPECT_EQ(got.result.tokens[t].label_id, expected[t]) << "token " << t;
  for (const auto& e : got.result.entities) EXPECT_EQ(e.text, document.substr(e.begin, e.end - e.begin));
  EXPECT_FALSE(got.result.entities.empty());
}

// The C API (through the C++ client) gives the same document and its windows.
TEST(TokenWindows, TheCApiGivesTheWindowsTokensAndEntities) {
  const std::string dir = (test::repo_dir() / "models" / "pii").string();
  std::string document;
  for (int i = 0; i < 6; ++i) document += "Write to person" + std::to_string(i) + "@example.com about invoice 12. ";
  const DocumentTokens expected = TokenClassifier::load(dir)->classify_windows(document, windows_of(32, 8));
  const DocumentTokenPredictions got = Model::load(dir).classify_token_windows(document, 32, 8);
  EXPECT_EQ(got.content_tokens, expected.content_tokens);
  ASSERT_EQ(got.windows.size(), expected.windows.size());
  for (size_t i = 0; i < got.windows.size(); ++i) {
    EXPECT_EQ(got.windows[i].first, expected.windows[i].begin);
    EXPECT_EQ(got.windows[i].second, expected.windows[i].end);
  }
  ASSERT_EQ(got.result.tokens.size(), expected.result.tokens.size());
  for (size_t t = 0; t < got.result.tokens.size(); ++t)
    EXPECT_EQ(got.result.tokens[t].label_id, expected.result.tokens[t].label_id);
  ASSERT_EQ(got.result.entities.size(), expected.result.entities.size());
  // A result of another call has no windows.
  semroute_token_results* plain = nullptr;
  const Model model = Model::load(dir);
  ASSERT_EQ(semroute_token_classify(model.get(), document.data(), document.size(), &plain), nullptr);
  size_t count = 7;
  uint64_t content = 7;
  EXPECT_EQ(semroute_token_results_windows(plain, &count, &content), nullptr);
  EXPECT_EQ(count, 0u);
  EXPECT_EQ(content, 0u);
  semroute_token_results_free(plain);
  EXPECT_EQ(semroute_token_results_windows(nullptr, nullptr, nullptr), nullptr);
}

}  // namespace
}  // namespace semroute
