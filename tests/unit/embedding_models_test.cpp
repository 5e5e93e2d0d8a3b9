// Qwen3-Embedding and EmbeddingGemma against Hugging Face (fp32, eager; the
// Gemma pipeline through its sentence-transformers modules), BERT/MiniLM
// embeddings, batch invariance, and blocked attention on long inputs.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "reference.h"
#include "tasks/embedder.h"
#include "test_util.h"

namespace semroute {
namespace {

std::shared_ptr<const Embedder> fixture_embedder(const std::string& name) {
  EmbedderOptions options;
  options.require_tokenizer = false;
  return Embedder::load(test::data_dir() / name, options);
}

void check_fixture(const std::string& name, const std::vector<std::string>& outputs) {
  const auto embedder = fixture_embedder(name);
  for (const auto& c : test::load_reference(test::data_dir() / name / "reference.json")) {
    const auto steps = embedder->embed_steps(c.inputs, embedder->defaults());
    test::expect_matches(c, "last_hidden_state", embedder->encoder().forward(c.inputs));
    for (const auto& output : outputs) test::expect_matches(c, output, steps.at(output));
  }
}

TEST(Qwen3Embedding, MatchesHuggingFaceWithLeftAndRightPadding) {
  check_fixture("qwen3_embedding", {"last_token_pooled", "embedding"});
}

TEST(EmbeddingGemma, MatchesHuggingFaceThroughTheSentenceTransformersModules) {
  check_fixture("embeddinggemma", {"mean_pooled", "dense1", "dense2", "embedding"});
  const auto embedder = fixture_embedder("embeddinggemma");
  for (const auto& c : test::load_reference(test::data_dir() / "embeddinggemma" / "reference.json")) {
    for (const int64_t dim : {32, 16}) {
      EmbeddingOptions options = embedder->defaults();
      options.dimension = dim;
      const auto& m = c.outputs.at("matryoshka_renormalized").at(std::to_string(dim));
      std::vector<float> data = m.at("data").get<std::vector<float>>();
      const at::Tensor expected = at::from_blob(data.data(), m.at("shape").get<std::vector<int64_t>>()).clone();
      const at::Tensor actual = embedder->embed_inputs(c.inputs, options);
      EXPECT_LT((actual - expected).abs().max().item<double>(), 1e-4) << c.name << " dim " << dim;
    }
  }
}

TEST(MiniLmEmbedding, MatchesHuggingFace) { check_fixture("bert_embedding", {"mean_pooled", "embedding"}); }

// Each row alone equals the row inside a mixed-length batch.
void check_batch_invariance(const std::string& name) {
  const auto embedder = fixture_embedder(name);
  const auto cases = test::load_reference(test::data_dir() / name / "reference.json");
  const ModelInputs& batch = cases.back().inputs;
  const at::Tensor together = embedder->embed_inputs(batch, embedder->defaults());
  for (int64_t row = 0; row < batch.input_ids.size(0); ++row) {
    const at::Tensor keep = batch.attention_mask[row].ne(0);
    const at::Tensor ids = batch.input_ids[row].masked_select(keep).unsqueeze(0);
    const at::Tensor alone = embedder->embed_inputs({ids, at::ones_like(ids), {}}, embedder->defaults());
    EXPECT_LT((alone[0] - together[row]).abs().max().item<double>(), 1e-5) << name << " row " << row;
  }
}

TEST(EmbeddingModels, AreBatchInvariant) {
  check_batch_invariance("qwen3_embedding");
  check_batch_invariance("embeddinggemma");
}

// Many times the sliding window (Gemma, 5) and longer than the block: the
// blocked causal (Qwen3) and bidirectional windowed (Gemma) paths equal the
// one-shot computation.
TEST(EmbeddingModels, BlockedAttentionEqualsTheOneShotReference) {
  for (const std::string name : {"qwen3_embedding", "embeddinggemma"}) {
    const auto embedder = fixture_embedder(name);
    const at::Tensor ids = at::randint(3, 250, {2, 100}, at::kLong);
    at::Tensor mask = at::ones({2, 100}, at::kLong);
    mask[1].narrow(0, 70, 30).zero_();
    ForwardOptions reference, blocked;
    reference.attention_block = 1 << 20;
    blocked.attention_block = 9;
    const at::Tensor a = embedder->encoder().forward({ids, mask, {}}, reference);
    const at::Tensor b = embedder->encoder().forward({ids, mask, {}}, blocked);
    const double error = (a - b).abs().masked_select(mask.unsqueeze(-1).to(at::kBool)).max().item<double>();
    std::printf("    %s blocked vs one-shot, 100 tokens: max abs error %.3g\n", name.c_str(), error);
    EXPECT_LT(error, 1e-4) << name;
  }
}

}  // namespace
}  // namespace semroute
