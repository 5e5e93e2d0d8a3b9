// The flat vector index (hand-made vectors) and few-shot intents end to end
// on a tiny random ModernBERT with the real tokenizer.
#include <gtest/gtest.h>

#include <cmath>

#include "classifiers/intent_index.h"
#include "models/random_model.h"
#include "test_util.h"

namespace semroute {
namespace {

TEST(VectorIndex, ReturnsExactTopKWithTiesInInsertionOrder) {
  VectorIndex index(2);
  const float a[] = {1, 0}, b[] = {0, 1}, c[] = {1, 1}, d[] = {2, 0};
  for (const float* v : {a, b, c, d}) index.add(v, 2);
  const float q[] = {1, 0};
  const auto top = index.search(q, 2, 3);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].row, 0);  // a and d tie at 1.0: insertion order
  EXPECT_EQ(top[1].row, 3);
  EXPECT_EQ(top[2].row, 2);
  EXPECT_NEAR(top[2].score, std::sqrt(0.5f), 1e-6);
  EXPECT_EQ(index.search(q, 2, 100).size(), 4u);  // k clamped to the size
}

TEST(VectorIndex, RefusesBadVectorsAndHandlesEmptyIndexes) {
  VectorIndex index(3);
  const float q[] = {1, 2, 3}, zero[] = {0, 0, 0};
  EXPECT_TRUE(index.search(q, 3, 5).empty());
  test::expect_error([&] { index.add(q, 2); }, ErrorCode::kInvalidArgument, "does not match the index dimension 3");
  test::expect_error([&] { index.add(zero, 3); }, ErrorCode::kInvalidArgument, "zero");
  index.add(q, 3);
  test::expect_error([&] { index.search(q, 4, 1); }, ErrorCode::kInvalidArgument, "dimension");
}

class Intents : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    RandomModelSpec spec;
    spec.tokenizer = test::data_dir() / "tokenizers/modernbert/tokenizer.json";
    write_random_modernbert(spec, dir_->path());
  }
  static void TearDownTestSuite() { delete dir_; }
  static test::TempDir* dir_;
};
test::TempDir* Intents::dir_ = nullptr;

TEST_F(Intents, MatchTheirOwnExamplesFromYaml) {
  const auto set = IntentSet::from_yaml(test::data_dir() / "intents/router.yaml");
  EXPECT_EQ(set.options.k, 3);
  const IntentIndex index(Embedder::load(dir_->path()), set);
  EXPECT_EQ(index.example_count(), 7);
  for (const auto& intent : set.intents)
    for (const auto& example : intent.examples) {
      const IntentMatch m = index.match(example);
      EXPECT_EQ(m.intent, intent.name) << example;
      EXPECT_NEAR(m.score, 1.0f, 1e-4);
      EXPECT_GE(m.margin, 0.0f);
    }
}

TEST_F(Intents, ApplyTheThresholdAndAggregation) {
  IntentSet set = IntentSet::from_yaml(test::data_dir() / "intents/router.yaml");
  set.options.threshold = 1.5f;  // unreachable for a cosine
  const IntentIndex strict(Embedder::load(dir_->path()), set);
  const IntentMatch none = strict.match("Solve 3x + 5 = 20 for x.");
  EXPECT_EQ(none.intent, "");
  EXPECT_FALSE(none.scores.empty());
  set.options = IntentOptions{};
  set.options.aggregation = Aggregation::kVote;
  set.options.k = 7;
  const IntentIndex voting(Embedder::load(dir_->path()), set);
  const IntentMatch m = voting.match("anything at all");
  EXPECT_EQ(m.scores.size(), 3u);  // every intent is in the top 7
  EXPECT_NEAR(m.scores[0].second, 3.0f / 7.0f, 1e-6);  // math has 3 of the 7 examples
}

TEST_F(Intents, RefuseBadDefinitions) {
  test::TempDir dir;
  test::write_file(dir / "bad.yaml", "intents: [{name: a, examples: []}]");
  const auto embedder = Embedder::load(dir_->path());
  test::expect_error([&] { IntentIndex(embedder, IntentSet::from_yaml(dir / "bad.yaml")); },
                     ErrorCode::kInvalidArgument, "has no examples");
  test::write_file(dir / "dup.yaml", "intents: [{name: a, examples: [x]}, {name: a, examples: [y]}]");
  test::expect_error([&] { IntentIndex(embedder, IntentSet::from_yaml(dir / "dup.yaml")); },
                     ErrorCode::kInvalidArgument, "defined twice");
  test::write_file(dir / "broken.yaml", "intents: [ {name: ");
  test::expect_error([&] { IntentSet::from_yaml(dir / "broken.yaml"); }, ErrorCode::kInvalidModel, "broken.yaml");
  test::expect_error([&] { IntentIndex(embedder, IntentSet{}); }, ErrorCode::kInvalidArgument, "at least one intent");
}

}  // namespace
}  // namespace semroute
