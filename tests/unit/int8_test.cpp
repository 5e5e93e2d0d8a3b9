// dtype int8 (dynamic quantization of every encoder linear layer) against
// the fp32 Hugging Face references of every fixture: hidden-state and
// embedding cosine, logit error, top-1 agreement and probability change,
// for each backend and for LoRA adapters merged (quantized after merging)
// and unmerged (deltas in fp32). Bounds hold with 7-bit activations too
// (CPUs without VNNI), which the AVX2 run of the suite checks. These tiny
// random models (hidden size 32-64) are harder on 8 bits than real ones:
// each output sums few products, so rounding errors average out less;
// real-size numbers are in docs/speed.md (benchmarks/int8_accuracy).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdio>

#include "models/model_factory.h"
#include "reference.h"
#include "tasks/embedder.h"
#include "tasks/sequence_classifier.h"
#include "tasks/token_classifier.h"
#include "test_util.h"

namespace semroute {
namespace {

LoadOptions int8_load() {
  LoadOptions load;
  load.int8 = true;
  return load;
}

// Cosine of the outputs (over unpadded positions) and max abs error.
test::Agreement check(const test::ReferenceCase& c, const std::string& output, const at::Tensor& actual,
                      const std::string& what, double min_cosine) {
  const test::Agreement a = test::compare(actual, c.expected(output), c.inputs.attention_mask);
  std::printf("    int8 %s %s/%s: max abs error %.3g, cosine %.6f\n", what.c_str(), c.name.c_str(), output.c_str(),
              a.max_abs_error, a.cosine);
  EXPECT_GT(a.cosine, min_cosine) << what << " " << c.name << "/" << output;
  return a;
}

// Logits [..., labels]: probabilities within `max_dp`, and the same top-1
// label wherever the reference's is not a near tie (its lead over the
// runner-up > 2 · max_dp, so that rounding within the bound cannot flip it).
void check_logits(const test::ReferenceCase& c, const at::Tensor& logits, const std::string& what, double max_dp) {
  check(c, "logits", logits, what, 0.98);
  const at::Tensor expected = c.expected("logits");
  at::Tensor keep = at::ones(logits.sizes().vec(), at::kBool).select(-1, 0);
  if (logits.dim() == 3) keep = c.inputs.attention_mask.ne(0);
  const double dp = (logits.softmax(-1) - expected.softmax(-1)).abs().amax(-1).masked_select(keep).max().item<double>();
  const at::Tensor top2 = std::get<0>(expected.softmax(-1).topk(2, -1));
  const at::Tensor clear = keep.logical_and((top2.select(-1, 0) - top2.select(-1, 1)).gt(2 * max_dp));
  const at::Tensor same = logits.argmax(-1).eq(expected.argmax(-1)).masked_select(clear);
  const at::Tensor all_same = logits.argmax(-1).eq(expected.argmax(-1)).masked_select(keep);
  std::printf("    int8 %s %s: top-1 agreement %lld/%lld (%lld/%lld without near ties), max |dp| %.4f\n", what.c_str(),
              c.name.c_str(), static_cast<long long>(all_same.sum().item<int64_t>()),
              static_cast<long long>(all_same.numel()), static_cast<long long>(same.sum().item<int64_t>()),
              static_cast<long long>(same.numel()), dp);
  EXPECT_TRUE(same.all().item<bool>()) << what << " " << c.name;
  EXPECT_LT(dp, max_dp) << what << " " << c.name;
}

TEST(Int8, EncodersStayCloseToTheReference) {
  for (const std::string name : {"modernbert_base", "bert_embedding", "qwen3_embedding", "embeddinggemma"}) {
    const auto model = load_core_model(test::data_dir() / name, int8_load());
    for (const auto& c : test::load_reference(test::data_dir() / name / "reference.json"))
      check(c, "last_hidden_state", model->forward(c.inputs), name, 0.99);
  }
}

TEST(Int8, EmbeddingsStayCloseToTheReference) {
  for (const std::string name : {"bert_embedding", "qwen3_embedding", "embeddinggemma"}) {
    EmbedderOptions options;
    options.load = int8_load();
    options.require_tokenizer = false;
    const auto embedder = Embedder::load(test::data_dir() / name, options);
    for (const auto& c : test::load_reference(test::data_dir() / name / "reference.json"))
      check(c, "embedding", embedder->embed_inputs(c.inputs, embedder->defaults()), name, 0.99);
  }
}

TaskOptions int8_task(const std::filesystem::path& tokenizer) {
  TaskOptions options;
  options.load = int8_load();
  options.tokenizer = tokenizer;
  return options;
}

TEST(Int8, ClassifiersKeepTheirAnswers) {
  const auto modernbert = test::data_dir() / "tokenizers/modernbert/tokenizer.json";
  for (const std::string name : {"modernbert_seqcls_cls", "modernbert_seqcls_mean", "bert_seqcls"}) {
    const auto classifier = SequenceClassifier::load(test::data_dir() / name, int8_task(modernbert));
    for (const auto& c : test::load_reference(test::data_dir() / name / "reference.json"))
      check_logits(c, classifier->logits(c.inputs), name, 0.05);
  }
  for (const std::string name : {"modernbert_tokcls", "bert_tokcls"}) {
    const auto classifier = TokenClassifier::load(test::data_dir() / name, int8_task(modernbert));
    for (const auto& c : test::load_reference(test::data_dir() / name / "reference.json"))
      check_logits(c, classifier->logits(c.inputs), name, 0.05);
  }
}

TEST(Int8, LoraAdaptersMergedAndUnmerged) {
  for (const bool merge : {true, false}) {
    TaskOptions options = int8_task(test::data_dir() / "tokenizers/modernbert/tokenizer.json");
    options.adapter = test::data_dir() / "modernbert_seqcls_lora";
    options.merge_adapter = merge;
    const auto classifier = SequenceClassifier::load(test::data_dir() / "modernbert_seqcls_cls", options);
    for (const auto& c : test::load_reference(test::data_dir() / "modernbert_seqcls_lora" / "reference.json"))
      // Merged, W + ΔW is quantized; this fixture's random ΔW (scale alpha / r = 4)
      // outweighs W, and with 7-bit activations (no VNNI) |dp| reaches 0.075.
      check_logits(c, classifier->logits(c.inputs), merge ? "lora merged" : "lora unmerged", merge ? 0.1 : 0.05);

    EmbedderOptions embed_options;
    embed_options.load = int8_load();
    embed_options.require_tokenizer = false;
    embed_options.adapter = test::data_dir() / "qwen3_lora";
    embed_options.merge_adapter = merge;
    const auto embedder = Embedder::load(test::data_dir() / "qwen3_embedding", embed_options);
    for (const auto& c : test::load_reference(test::data_dir() / "qwen3_lora" / "reference.json"))
      check(c, "embedding", embedder->embed_inputs(c.inputs, embedder->defaults()),
            merge ? "qwen3 lora merged" : "qwen3 lora unmerged", 0.99);
  }
}

// The int8 path is really taken: outputs differ from fp32 (by little).
TEST(Int8, IsNotFloat32) {
  const auto dir = test::data_dir() / "modernbert_base";
  const auto int8 = load_core_model(dir, int8_load()), fp32 = load_core_model(dir);
  EXPECT_EQ(int8->precision_name(), "int8");
  const auto c = test::load_reference(dir / "reference.json").front();
  const double error = test::compare(int8->forward(c.inputs), fp32->forward(c.inputs), c.inputs.attention_mask).max_abs_error;
  EXPECT_GT(error, 1e-5);
}

}  // namespace
}  // namespace semroute
