// Embeddings: pooling against the reference, normalization, Matryoshka
// truncation with re-normalization, early exit, and bad dimensions.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "reference.h"
#include "tasks/embedder.h"
#include "test_util.h"

namespace semroute {
namespace {

std::shared_ptr<const Embedder> modernbert_embedder() {
  EmbedderOptions options;
  options.tokenizer = test::data_dir() / "tokenizers/modernbert/tokenizer.json";
  return Embedder::load(test::data_dir() / "modernbert_base", options);
}

TEST(Embedder, PoolsLikeTheReference) {
  const auto embedder = modernbert_embedder();
  for (const auto& c : test::load_reference(test::data_dir() / "modernbert_base" / "reference.json")) {
    EmbeddingOptions raw;
    raw.normalize = false;
    test::expect_matches(c, "mean_pooled", embedder->embed_inputs(c.inputs, raw));
    raw.pooling = Pooling::kCls;
    test::expect_matches(c, "cls_pooled", embedder->embed_inputs(c.inputs, raw));
    const at::Tensor unit = embedder->embed_inputs(c.inputs, EmbeddingOptions{});
    const at::Tensor expected = c.expected("mean_pooled");
    EXPECT_LT((unit - expected / expected.norm(2, {1}, true)).abs().max().item<double>(), 1e-5);
    EXPECT_LT((unit.norm(2, {1}) - 1).abs().max().item<double>(), 1e-5);
  }
}

TEST(Embedder, MatryoshkaTruncatesAndRenormalizes) {
  const auto embedder = modernbert_embedder();
  const auto c = test::load_reference(test::data_dir() / "modernbert_base" / "reference.json")[1];
  const at::Tensor full = embedder->embed_inputs(c.inputs, EmbeddingOptions{});
  EmbeddingOptions small;
  small.dimension = 16;
  const at::Tensor cut = embedder->embed_inputs(c.inputs, small);
  ASSERT_EQ(cut.size(1), 16);
  const at::Tensor prefix = full.narrow(1, 0, 16);
  EXPECT_LT((cut - prefix / prefix.norm(2, {1}, true)).abs().max().item<double>(), 1e-6);
  small.dimension = 65;
  test::expect_error([&] { embedder->embed_inputs(c.inputs, small); }, ErrorCode::kInvalidArgument, "exceeds");
}

TEST(Embedder, EarlyExitUsesTheFirstLayersOnly) {
  const auto embedder = modernbert_embedder();
  const auto c = test::load_reference(test::data_dir() / "modernbert_base" / "reference.json")[0];
  EmbeddingOptions early;
  early.layer = 2;
  early.normalize = false;
  ForwardOptions two;
  two.layers = 2;
  const at::Tensor expected = mean_pool(embedder->encoder().forward(c.inputs, two), c.inputs.attention_mask);
  EXPECT_LT((embedder->embed_inputs(c.inputs, early) - expected).abs().max().item<double>(), 1e-6);
}

}  // namespace
}  // namespace semroute
