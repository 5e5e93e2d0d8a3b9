// The flat vector index (hand-made vectors) and few-shot intents end to end
// on a tiny random ModernBERT with the real tokenizer.
#include <chrono>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "classifiers/int8_dot.h"
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

TEST(VectorIndex, QuantizedScanGivesTheExactTopK) {
  // Random rows plus clusters of near-duplicates (scores within 1e-4 of each
  // other, far below the int8 error): the result must equal a float32 scan.
  std::mt19937 rng(11);
  std::normal_distribution<float> normal;
  const int64_t dim = 96, rows = 4000, k = 10;
  VectorIndex index(dim);
  std::vector<std::vector<float>> unit;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<float> v(dim);
    for (auto& x : v) x = normal(rng);
    if (r % 8 != 0) {
      const auto& prev = unit.back();
      for (int64_t i = 0; i < dim; ++i) v[i] = prev[i] + 1e-4f * normal(rng);
    }
    index.add(v.data(), dim);
    float norm = 0;
    for (float x : v) norm += x * x;
    for (auto& x : v) x /= std::sqrt(norm);
    unit.push_back(v);
  }
  int64_t rescored_total = 0;
  for (int query = 0; query < 40; ++query) {
    std::vector<float> q(dim);
    for (int64_t i = 0; i < dim; ++i) q[i] = query % 2 ? normal(rng) : unit[static_cast<size_t>(query * 97)][i] + 0.01f * normal(rng);
    std::vector<std::pair<double, int64_t>> exact;
    double qn = 0;
    for (float x : q) qn += double(x) * x;
    for (int64_t r = 0; r < rows; ++r) {
      double dot = 0;
      for (int64_t i = 0; i < dim; ++i) dot += double(unit[r][i]) * q[i];
      exact.emplace_back(dot / std::sqrt(qn), r);
    }
    std::sort(exact.begin(), exact.end(), [](auto& a, auto& b) { return a.first > b.first; });
    int64_t rescored = 0;
    const auto got = index.search(q.data(), dim, k, &rescored);
    rescored_total += rescored;
    ASSERT_EQ(got.size(), static_cast<size_t>(k));
    for (int64_t i = 0; i < k; ++i) {
      EXPECT_NEAR(got[i].score, exact[i].first, 2e-6) << "query " << query << " rank " << i;
      // Equal scores up to float rounding may swap; the row must be a true top-k row.
      double true_score = 0;
      for (int64_t j = 0; j < dim; ++j) true_score += double(unit[got[i].row][j]) * q[j];
      EXPECT_GE(true_score / std::sqrt(qn), exact[k - 1].first - 2e-6);
    }
  }
  // The int8 bound prunes: only a small share of the rows is rescored.
  EXPECT_LT(rescored_total / 40, rows / 4);
}

TEST(VectorIndex, Int8KernelsAgreeWithTheScalarOne) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> byte(-127, 127);
  for (const int64_t n : {1, 15, 16, 63, 64, 65, 768, 1000}) {
    std::vector<int8_t> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
    for (auto& x : a) x = static_cast<int8_t>(byte(rng));
    for (auto& x : b) x = static_cast<int8_t>(byte(rng));
    a[0] = b[0] = -127;  // extremes
    const int32_t expected = dot_i8_scalar(a.data(), b.data(), n);
    if (has_avx2()) {
      EXPECT_EQ(dot_i8_avx2(a.data(), b.data(), n), expected) << n;
    }
    if (has_vnni()) {
      std::vector<uint8_t> shifted(a.size());
      for (size_t i = 0; i < a.size(); ++i) shifted[i] = static_cast<uint8_t>(a[i] + 128);
      const int32_t sum = std::accumulate(b.begin(), b.end(), int32_t{0});
      EXPECT_EQ(dot_u8s8_vnni(shifted.data(), b.data(), n, sum), expected) << n;
    }
  }
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

// Aliases of one long string: a 1 MB file that would expand to 8 GB of
// examples is refused by the reader, before anything is copied.
TEST(YamlInput, RefusesAliasesExpandingToGigabytes) {
  test::TempDir dir;
  std::string text = "s: &s \"" + std::string(20000, 'x') + "\"\nintents:\n  - name: x\n    examples: [*s";
  for (int i = 1; i < 400000; ++i) text += ",*s";
  test::write_file(dir / "bomb.yaml", text + "]\n");
  const auto start = std::chrono::steady_clock::now();
  test::expect_error([&] { IntentSet::from_yaml(dir / "bomb.yaml"); }, ErrorCode::kInvalidModel, "expand to more than");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

}  // namespace
}  // namespace semroute
