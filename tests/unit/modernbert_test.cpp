// ModernBERT against Hugging Face (fp32, eager): encoder, sequence and token
// classification; batch invariance; the blocked long-input path against the
// one-shot reference; bounded memory on very long inputs.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <c10/core/CPUAllocator.h>
#include <torch/csrc/api/include/torch/version.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <functional>

#include "models/model_factory.h"
#include "models/modernbert.h"
#include "reference.h"
#include "tasks/pooling.h"
#include "tasks/task_head.h"
#include "test_util.h"

namespace semroute {
namespace {

struct TaskFixture {
  std::shared_ptr<const CoreModel> model;
  std::optional<TaskHead> head;
};

TaskFixture load_fixture(const std::string& name) {
  const ModelSource source = open_model_source(test::data_dir() / name);
  TaskFixture f{load_core_model(source, {}), std::nullopt};
  if (const auto kind = task_kind_of(f.model->config().architecture())) {
    WeightMap weights(source.checkpoint, {""}, at::TensorOptions());
    f.head = TaskHead::load(*f.model, source.config, *kind, weights);
  }
  return f;
}

TEST(ModernBert, EncoderMatchesHuggingFace) {
  const auto f = load_fixture("modernbert_base");
  EXPECT_STREQ(f.model->backend_name(), "modernbert");
  for (const auto& c : test::load_reference(test::data_dir() / "modernbert_base" / "reference.json")) {
    const at::Tensor hidden = f.model->forward(c.inputs);
    test::expect_matches(c, "last_hidden_state", hidden);
    test::expect_matches(c, "cls_pooled", cls_pool(hidden));
    test::expect_matches(c, "mean_pooled", mean_pool(hidden, c.inputs.attention_mask));
  }
}

TEST(ModernBert, SequenceClassificationMatchesHuggingFace) {
  for (const std::string name : {"modernbert_seqcls_cls", "modernbert_seqcls_mean"}) {
    const auto f = load_fixture(name);
    ASSERT_TRUE(f.head.has_value());
    for (const auto& c : test::load_reference(test::data_dir() / name / "reference.json")) {
      const at::Tensor logits = f.head->sequence_logits(f.model->forward(c.inputs), c.inputs.attention_mask);
      test::expect_matches(c, "logits", logits);
      test::expect_matches(c, "probs", at::softmax(logits, -1));
    }
  }
}

TEST(ModernBert, TokenClassificationMatchesHuggingFace) {
  const auto f = load_fixture("modernbert_tokcls");
  for (const auto& c : test::load_reference(test::data_dir() / "modernbert_tokcls" / "reference.json")) {
    const at::Tensor logits = f.head->token_logits(f.model->forward(c.inputs));
    test::expect_matches(c, "logits", logits);
  }
}

// A row's result must not depend on what else is in the batch.
TEST(ModernBert, ResultsAreBatchInvariant) {
  const auto f = load_fixture("modernbert_base");
  const auto cases = test::load_reference(test::data_dir() / "modernbert_base" / "reference.json");
  const ModelInputs& batch = cases[1].inputs;  // lengths 24, 15, 6, right padded
  const at::Tensor together = f.model->forward(batch);
  for (int64_t row = 0; row < batch.input_ids.size(0); ++row) {
    const int64_t length = batch.attention_mask[row].sum().item<int64_t>();
    ModelInputs alone{batch.input_ids[row].narrow(0, 0, length).unsqueeze(0),
                      batch.attention_mask[row].narrow(0, 0, length).unsqueeze(0), {}};
    const at::Tensor single = f.model->forward(alone)[0];
    EXPECT_LT((single - together[row].narrow(0, 0, length)).abs().max().item<double>(), 1e-5) << "row " << row;
    // Reversed order: the same row at another position.
    const at::Tensor reversed = f.model->forward({batch.input_ids.flip(0), batch.attention_mask.flip(0), {}});
    const int64_t other = batch.input_ids.size(0) - 1 - row;
    EXPECT_LT((reversed[other].narrow(0, 0, length) - single).abs().max().item<double>(), 1e-5) << "row " << row;
  }
}

// Left padding gives the unpadded result too (positions restart at each text).
TEST(ModernBert, LeftPaddingMatchesUnpadded) {
  const auto f = load_fixture("modernbert_base");
  const at::Tensor ids = at::randint(5, 200, {1, 10}, at::kLong);
  const at::Tensor alone = f.model->forward({ids, at::ones_like(ids), {}})[0];
  const at::Tensor padded_ids = at::cat({at::zeros({1, 4}, at::kLong), ids}, 1);
  const at::Tensor mask = at::cat({at::zeros({1, 4}, at::kLong), at::ones_like(ids)}, 1);
  const at::Tensor padded = f.model->forward({padded_ids, mask, {}})[0].narrow(0, 4, 10);
  EXPECT_LT((padded - alone).abs().max().item<double>(), 1e-5);
}

// Much longer than the window (8) and than the block: blocked windowed and
// global attention must equal the one-shot computation with a full mask.
TEST(ModernBert, BlockedAttentionEqualsTheOneShotReference) {
  const auto f = load_fixture("modernbert_base");
  const int64_t length = 120;  // the fixture allows 128 positions
  const at::Tensor ids = at::randint(5, 250, {2, length}, at::kLong);
  at::Tensor mask = at::ones({2, length}, at::kLong);
  mask[1].narrow(0, 90, length - 90).zero_();
  ForwardOptions reference, blocked;
  reference.attention_block = 1 << 20;
  blocked.attention_block = 7;
  const at::Tensor a = f.model->forward({ids, mask, {}}, reference);
  const at::Tensor b = f.model->forward({ids, mask, {}}, blocked);
  const double error = (a - b).abs().masked_select(mask.unsqueeze(-1).to(at::kBool)).max().item<double>();
  std::printf("    blocked vs one-shot attention, %lld tokens: max abs error %.3g\n",
              static_cast<long long>(length), error);
  EXPECT_LT(error, 1e-4);
}

TEST(ModernBert, EarlyExitStopsAfterTheRequestedLayer) {
  const auto f = load_fixture("modernbert_base");
  const at::Tensor ids = at::randint(5, 250, {1, 12}, at::kLong);
  ForwardOptions two;
  two.layers = 2;
  const at::Tensor full = f.model->forward({ids, at::ones_like(ids), {}});
  const at::Tensor early = f.model->forward({ids, at::ones_like(ids), {}}, two);
  EXPECT_EQ(early.sizes(), full.sizes());
  EXPECT_GT((early - full).abs().max().item<double>(), 1e-3);
  two.layers = 9;
  test::expect_error([&] { f.model->forward({ids, at::ones_like(ids), {}}, two); }, ErrorCode::kInvalidArgument,
                     "has 4 layers");
}

size_t rss_bytes() {
  std::ifstream status("/proc/self/statm");
  size_t pages = 0, resident = 0;
  status >> pages >> resident;
  return resident * 4096;
}

// A tiny ModernBERT with 32K positions: 3 layers, the last one global.
std::filesystem::path write_long_model(const std::filesystem::path& dir) {
  std::ofstream(dir / "config.json") << R"({"model_type": "modernbert", "vocab_size": 64, "hidden_size": 32,
    "num_hidden_layers": 3, "num_attention_heads": 2, "intermediate_size": 48, "local_attention": 128,
    "layer_types": ["sliding_attention", "sliding_attention", "full_attention"], "max_position_embeddings": 32768})";
  std::vector<std::pair<std::string, at::Tensor>> tensors = {
      {"embeddings.tok_embeddings.weight", at::randn({64, 32})}, {"embeddings.norm.weight", at::ones({32})},
      {"final_norm.weight", at::ones({32})}};
  for (int i = 0; i < 3; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    if (i) tensors.emplace_back(p + "attn_norm.weight", at::ones({32}));
    tensors.emplace_back(p + "attn.Wqkv.weight", at::randn({96, 32}) * 0.2);
    tensors.emplace_back(p + "attn.Wo.weight", at::randn({32, 32}) * 0.2);
    tensors.emplace_back(p + "mlp_norm.weight", at::ones({32}));
    tensors.emplace_back(p + "mlp.Wi.weight", at::randn({96, 32}) * 0.2);
    tensors.emplace_back(p + "mlp.Wo.weight", at::randn({32, 48}) * 0.2);
  }
  save_safetensors(dir / "model.safetensors", tensors);
  return dir;
}

// 32K tokens on a tiny config: memory grows by activations only (tokens ×
// hidden), never by a 32K × 32K mask or score matrix (4 GB in fp32). The
// sliding layers run at 32K; the global layer (quadratic compute) at 8K.
TEST(ModernBert, LongInputsRunInBoundedMemory) {
  test::TempDir dir;
  const auto model = load_core_model(write_long_model(dir.path()));
  const size_t before = rss_bytes();
  ForwardOptions sliding_only;
  sliding_only.layers = 2;
  const at::Tensor ids = at::randint(0, 64, {1, 32768}, at::kLong);
  const at::Tensor out = model->forward({ids, at::ones_like(ids), {}}, sliding_only);
  const at::Tensor ids8k = ids.narrow(1, 0, 8192);
  const at::Tensor out8k = model->forward({ids8k, at::ones_like(ids8k), {}});
  const size_t growth = rss_bytes() > before ? rss_bytes() - before : 0;
  std::printf("    32768 tokens (sliding layers) and 8192 (all layers): RSS grew by %.1f MB\n", growth / 1e6);
  EXPECT_TRUE(out.isfinite().all().item<bool>());
  EXPECT_TRUE(out8k.isfinite().all().item<bool>());
  if (!test::kSanitized) {  // ASan's quarantine holds freed blocks
    EXPECT_LT(growth, 256u << 20);
  }
}

// Counts the bytes of libtorch's CPU tensors alive at once, while installed
// above whatever allocator the process has (the tensor cache, say).
class PeakTensorBytes final : public c10::Allocator {
 public:
  // The most bytes alive at once while fn() ran (those alive before excluded).
  static size_t during(const std::function<void()>& fn) {
    static PeakTensorBytes counter;  // tensors it made may outlive the call
    counter.base_ = c10::GetCPUAllocator();
    counter.live_ = counter.peak_ = 0;
    c10::SetCPUAllocator(&counter, kPriority);
    fn();
    c10::SetCPUAllocator(counter.base_, kPriority);
    return static_cast<size_t>(counter.peak_.load());
  }

#if TORCH_VERSION_MAJOR >= 2  // allocate() lost its const; copy_data() is new
  c10::DataPtr allocate(size_t bytes) override { return counted(bytes); }
  void copy_data(void* dest, const void* src, std::size_t count) const override { std::memcpy(dest, src, count); }
#else
  c10::DataPtr allocate(size_t bytes) const override { return counted(bytes); }
#endif

 private:
  // Above every allocator the library installs; the base goes back at this
  // priority, so one installed later would be refused: loading a model
  // installs the tensor cache (ensure_runtime_initialized) before any count.
  static constexpr uint8_t kPriority = 100;
  struct Block {
    c10::DataPtr data;
    int64_t bytes;
    const PeakTensorBytes* counter;
  };

  c10::DataPtr counted(size_t bytes) const {
    auto* block = new Block{base_->allocate(bytes), static_cast<int64_t>(bytes), this};
    const int64_t live = live_ += block->bytes;
    for (int64_t peak = peak_.load(); live > peak && !peak_.compare_exchange_weak(peak, live);) {
    }
    return {block->data.get(), block, &release, block->data.device()};
  }
  static void release(void* context) {
    auto* block = static_cast<Block*>(context);
    block->counter->live_ -= block->bytes;
    delete block;
  }

  c10::Allocator* base_ = nullptr;
  mutable std::atomic<int64_t> live_{0}, peak_{0};
};

// Long int8 forwards plan each layer once the one before has ended, so a
// layer's activations (its products' outputs, the attention's packed keys
// and values) are alive one layer at a time: three layers at 2,048 tokens
// hold what the first one alone does (planned ahead: 1.9 times as much).
TEST(ModernBert, LongInt8ForwardsHoldOneLayerAtATime) {
  test::TempDir dir;
  LoadOptions int8;
  int8.int8 = true;
  const auto model = load_core_model(write_long_model(dir.path()), int8);
  const at::Tensor ids = at::randint(0, 64, {1, 2048}, at::kLong);
  ForwardOptions first_layer;
  first_layer.layers = 1;
  at::Tensor one, all;
  const size_t one_layer = PeakTensorBytes::during([&] { one = model->forward({ids, at::ones_like(ids), {}}, first_layer); });
  const size_t three_layers = PeakTensorBytes::during([&] { all = model->forward({ids, at::ones_like(ids), {}}); });
  std::printf("    2048 tokens int8: tensors alive at most %.2f MB (first layer), %.2f MB (all three)\n",
              one_layer / 1e6, three_layers / 1e6);
  EXPECT_TRUE(all.isfinite().all().item<bool>());
  EXPECT_GT(one_layer, size_t{0});
  EXPECT_LT(three_layers, one_layer * 5 / 4);
}

}  // namespace
}  // namespace semroute

namespace semroute {
namespace {

// bfloat16 weights and activations (8-bit mantissa): the same predictions,
// logits within a few hundredths of fp32.
TEST(ModernBert, Bfloat16StaysCloseToTheReference) {
  const ModelSource source = open_model_source(test::data_dir() / "modernbert_seqcls_cls");
  LoadOptions bf16;
  bf16.dtype = at::kBFloat16;
  const auto model = load_core_model(source, bf16);
  WeightMap weights(source.checkpoint, {""}, at::TensorOptions().dtype(at::kBFloat16));
  const TaskHead head = TaskHead::load(*model, source.config, TaskKind::kSequence, weights);
  for (const auto& c : test::load_reference(test::data_dir() / "modernbert_seqcls_cls" / "reference.json")) {
    const at::Tensor logits = head.sequence_logits(model->forward(c.inputs), c.inputs.attention_mask).to(at::kFloat);
    const test::Agreement a = test::compare(logits, c.expected("logits"), c.inputs.attention_mask);
    std::printf("    bf16 %s/logits: max abs error %.3g, cosine %.6f\n", c.name.c_str(), a.max_abs_error, a.cosine);
    // bf16 keeps 8 significant bits (0.4 %); over a handful of logits the
    // cosine moves by ~1e-3 with the order of the roundings.
    EXPECT_LT(a.max_abs_error, 0.1);
    EXPECT_GT(a.cosine, 0.998);
    EXPECT_TRUE(logits.argmax(-1).equal(c.expected("logits").argmax(-1)));
  }
}

}  // namespace
}  // namespace semroute
