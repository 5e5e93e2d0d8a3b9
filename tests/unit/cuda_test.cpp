// The GPU path: every fixture of the CPU tests run on CUDA against the same
// Hugging Face outputs (float32 to 1e-4; float16 and bfloat16 by cosine and
// argmax), and the text pipelines on the GPU against the CPU's answers,
// long inputs through the sliding-window attention included. Built as its
// own program (semroute_cuda_tests) so a CUDA libtorch needs only the
// library and this file; every test skips where libtorch sees no GPU.
#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <c10/core/GradMode.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "core/device.h"
#include "models/random_model.h"
#include "reference.h"
#include "tasks/embedder.h"
#include "tasks/multitask_engine.h"
#include "tasks/sequence_classifier.h"
#include "tasks/token_classifier.h"
#include "test_util.h"
#include "tokenizers/tokenizer.h"
#include "training/export.h"
#include "training/trainer.h"

namespace semroute {
namespace {

#define SKIP_WITHOUT_CUDA() \
  if (!cuda_available()) GTEST_SKIP() << "libtorch sees no CUDA device"

const std::filesystem::path kBertTokenizer = test::data_dir() / "tokenizers/bert/tokenizer.json";
const std::filesystem::path kModernBertTokenizer = test::data_dir() / "tokenizers/modernbert/tokenizer.json";

ModelInputs on_device(const ModelInputs& in, c10::Device device) {
  ModelInputs out;
  out.input_ids = in.input_ids.to(device);
  out.attention_mask = in.attention_mask.to(device);
  if (in.token_type_ids.defined()) out.token_type_ids = in.token_type_ids.to(device);
  return out;
}

LoadOptions gpu(c10::ScalarType dtype) {
  LoadOptions options;
  options.device = parse_device("cuda");
  options.dtype = dtype;
  return options;
}

// float32 on the GPU is held to the CPU tests' bound; half precisions keep
// 8 (bf16) or 11 (fp16) significant bits, so they are held to the direction
// of the output and, for logits, to the same winning class.
void expect_close(const test::ReferenceCase& c, const std::string& output, const at::Tensor& actual,
                  c10::ScalarType dtype, bool logits) {
  // Hidden states and logits stay on the GPU; embeddings come back to the host.
  if (logits || output == "last_hidden_state") {
    ASSERT_TRUE(actual.is_cuda()) << output << " came back on the CPU";
  }
  if (dtype == c10::kFloat) return test::expect_matches(c, output, actual);
  const at::Tensor got = actual.to(at::kFloat).cpu();
  const at::Tensor expected = c.expected(output);
  ASSERT_EQ(got.sizes(), expected.sizes()) << output;
  const test::Agreement a = test::compare(got, expected, c.inputs.attention_mask);
  std::printf("    %s %s/%s: max abs error %.3g, cosine %.6f\n", dtype_display_name(dtype).c_str(), c.name.c_str(),
              output.c_str(), a.max_abs_error, a.cosine);
  EXPECT_GT(a.cosine, dtype == c10::kHalf ? 0.9995 : 0.995) << c.name << "/" << output;
  EXPECT_TRUE(got.isfinite().all().item<bool>()) << output;
  if (!logits) return;
  // Rows (and, for tokens, positions) where the reference's top two classes
  // are apart by more than the precision's noise must keep the same winner.
  const at::Tensor top2 = std::get<0>(expected.topk(2, -1));
  const at::Tensor decided = (top2.select(-1, 0) - top2.select(-1, 1)) > 0.05;
  const at::Tensor same = got.argmax(-1).eq(expected.argmax(-1));
  at::Tensor keep = decided;
  if (keep.dim() == 2) keep = keep.logical_and(c.inputs.attention_mask.ne(0));
  EXPECT_TRUE(same.masked_select(keep).all().item<bool>()) << c.name << "/" << output << ": a class changed";
}

const std::vector<c10::ScalarType> kDtypes = {c10::kFloat, c10::kHalf, c10::kBFloat16};

TEST(Cuda, DeviceNamesAndDefaults) {
  SKIP_WITHOUT_CUDA();
  EXPECT_TRUE(parse_device("auto").is_cuda());
  EXPECT_TRUE(parse_device("cuda").is_cuda());
  EXPECT_EQ(parse_device("cuda:0").index(), 0);
  EXPECT_EQ(parse_precision("auto", parse_device("cuda")).dtype, c10::kHalf);
  test::expect_error([] { parse_precision("int8", parse_device("cuda")); }, ErrorCode::kUnsupported, "CPU only");
  const std::string beyond = "cuda:" + std::to_string(at::getNumGPUs());
  test::expect_error([&] { parse_device(beyond); }, ErrorCode::kInvalidArgument, "CUDA device");
}

// Each fixture (with the tokenizer its vocabulary comes from) in every dtype:
// its logits against Hugging Face's.
template <typename Classifier>
void check_classifiers(const std::vector<std::pair<std::string, std::filesystem::path>>& fixtures) {
  for (const auto& [name, tokenizer] : fixtures) {
    for (const auto dtype : kDtypes) {
      TaskOptions options;
      options.load = gpu(dtype);
      options.tokenizer = tokenizer;
      const auto classifier = Classifier::load(test::data_dir() / name, options);
      for (const auto& c : test::load_reference(test::data_dir() / name / "reference.json"))
        expect_close(c, "logits", classifier->logits(on_device(c.inputs, options.load.device)), dtype, true);
    }
  }
}

TEST(Cuda, SequenceClassifiersMatchHuggingFace) {
  SKIP_WITHOUT_CUDA();
  check_classifiers<SequenceClassifier>({{"bert_seqcls", kBertTokenizer},
                                         {"modernbert_seqcls_cls", kModernBertTokenizer},
                                         {"modernbert_seqcls_mean", kModernBertTokenizer}});
}

TEST(Cuda, TokenClassifiersMatchHuggingFace) {
  SKIP_WITHOUT_CUDA();
  check_classifiers<TokenClassifier>({{"bert_tokcls", kBertTokenizer}, {"modernbert_tokcls", kModernBertTokenizer}});
}

TEST(Cuda, EmbeddersMatchHuggingFace) {
  SKIP_WITHOUT_CUDA();
  const std::vector<std::pair<std::string, std::vector<std::string>>> fixtures = {
      {"bert_embedding", {"mean_pooled", "embedding"}},
      {"qwen3_embedding", {"last_token_pooled", "embedding"}},
      {"embeddinggemma", {"mean_pooled", "dense1", "dense2", "embedding"}}};
  for (const auto& [name, outputs] : fixtures) {
    for (const auto dtype : kDtypes) {
      EmbedderOptions options;
      options.load = gpu(dtype);
      options.require_tokenizer = false;
      const auto embedder = Embedder::load(test::data_dir() / name, options);
      for (const auto& c : test::load_reference(test::data_dir() / name / "reference.json")) {
        const ModelInputs inputs = on_device(c.inputs, options.load.device);
        expect_close(c, "last_hidden_state", embedder->encoder().forward(inputs), dtype, false);
        const auto steps = embedder->embed_steps(inputs, embedder->defaults());
        for (const auto& output : outputs) expect_close(c, output, steps.at(output), dtype, false);
      }
    }
  }
}

TEST(Cuda, LoraAdaptersMergedAndUnmergedMatchPeft) {
  SKIP_WITHOUT_CUDA();
  for (const bool merge : {true, false}) {
    for (const auto dtype : kDtypes) {
      TaskOptions classifier_options;
      classifier_options.load = gpu(dtype);
      classifier_options.tokenizer = kModernBertTokenizer;
      classifier_options.adapter = test::data_dir() / "modernbert_seqcls_lora";
      classifier_options.merge_adapter = merge;
      const auto classifier = SequenceClassifier::load(test::data_dir() / "modernbert_seqcls_cls", classifier_options);
      for (const auto& c : test::load_reference(test::data_dir() / "modernbert_seqcls_lora" / "reference.json"))
        expect_close(c, "logits", classifier->logits(on_device(c.inputs, classifier_options.load.device)), dtype, true);

      EmbedderOptions embedder_options;
      embedder_options.load = gpu(dtype);
      embedder_options.require_tokenizer = false;
      embedder_options.adapter = test::data_dir() / "qwen3_lora";
      embedder_options.merge_adapter = merge;
      const auto embedder = Embedder::load(test::data_dir() / "qwen3_embedding", embedder_options);
      for (const auto& c : test::load_reference(test::data_dir() / "qwen3_lora" / "reference.json")) {
        const ModelInputs inputs = on_device(c.inputs, embedder_options.load.device);
        expect_close(c, "embedding", embedder->embed_inputs(inputs, embedder->defaults()), dtype, false);
      }
    }
  }
}

TEST(Cuda, MultiTaskEngineMatchesPeft) {
  SKIP_WITHOUT_CUDA();
  const std::filesystem::path fixture = test::data_dir() / "multitask_lora";
  for (const auto dtype : kDtypes) {
    EngineOptions options;
    options.load = gpu(dtype);
    options.require_tokenizer = false;
    const auto engine = MultiTaskEngine::load(fixture / "base",
                                              {{"intent", fixture / "intent", {}, {}, {}},
                                               {"pii", fixture / "pii", {}, {}, {}},
                                               {"security", fixture / "security", {}, {}, {}}},
                                              options);
    const std::vector<std::string> names = {"intent", "pii", "security"};
    for (const auto& c : test::load_reference(fixture / "base" / "reference.json")) {
      const auto logits = engine->logits(on_device(c.inputs, options.load.device), {0, 1, 2});
      for (size_t t = 0; t < names.size(); ++t) expect_close(c, names[t] + ".logits", logits[t], dtype, true);
    }
  }
}

// Texts in, answers out: the GPU's probabilities and entities equal the CPU's,
// for short texts in one padded batch and for texts hundreds of times the
// sliding window (ModernBERT's local attention on the GPU's fused kernel,
// the CPU's blocked one).
class CudaPipelines : public test::IntentAndPiiModels {};

std::vector<std::string> pipeline_texts() {
  std::string long_text;
  for (int i = 0; i < 300; ++i) long_text += "Integrate x squared from zero to " + std::to_string(i) + ". ";
  return {"What is the derivative of sin(x)?", "Email me at jane.doe@example.com, Jane Doe.", "", "ok",
          long_text, long_text.substr(0, 997) + " Contact john@example.org."};
}

std::vector<std::string_view> views(const std::vector<std::string>& texts) { return {texts.begin(), texts.end()}; }

TEST_F(CudaPipelines, SequenceClassificationEqualsTheCpu) {
  SKIP_WITHOUT_CUDA();
  const auto texts = pipeline_texts();
  const auto cpu = SequenceClassifier::load(path("intent"))->classify(views(texts));
  for (const auto dtype : kDtypes) {
    TaskOptions options;
    options.load = gpu(dtype);
    const auto gpu_answers = SequenceClassifier::load(path("intent"), options)->classify(views(texts));
    ASSERT_EQ(gpu_answers.size(), cpu.size());
    const double bound = dtype == c10::kFloat ? 1e-4 : dtype == c10::kHalf ? 5e-3 : 3e-2;
    for (size_t i = 0; i < cpu.size(); ++i) {
      EXPECT_EQ(gpu_answers[i].input.processed_tokens, cpu[i].input.processed_tokens) << "text " << i;
      double worst = 0;
      for (size_t k = 0; k < cpu[i].probabilities.size(); ++k)
        worst = std::max(worst, double(std::abs(gpu_answers[i].probabilities[k] - cpu[i].probabilities[k])));
      std::printf("    %s text %zu (%zu tokens): max probability difference %.3g\n",
                  dtype_display_name(dtype).c_str(), i, cpu[i].input.processed_tokens, worst);
      EXPECT_LE(worst, bound) << "text " << i;
    }
  }
}

TEST_F(CudaPipelines, TokenClassificationEqualsTheCpu) {
  SKIP_WITHOUT_CUDA();
  const auto texts = pipeline_texts();
  const auto cpu = TokenClassifier::load(path("pii"))->classify(views(texts));
  TaskOptions options;
  options.load = gpu(c10::kFloat);
  const auto gpu_answers = TokenClassifier::load(path("pii"), options)->classify(views(texts));
  ASSERT_EQ(gpu_answers.size(), cpu.size());
  for (size_t i = 0; i < cpu.size(); ++i) {
    ASSERT_EQ(gpu_answers[i].tokens.size(), cpu[i].tokens.size()) << "text " << i;
    ASSERT_EQ(gpu_answers[i].entities.size(), cpu[i].entities.size()) << "text " << i;
    for (size_t e = 0; e < cpu[i].entities.size(); ++e) {
      EXPECT_EQ(gpu_answers[i].entities[e].type, cpu[i].entities[e].type);
      EXPECT_EQ(gpu_answers[i].entities[e].begin, cpu[i].entities[e].begin);
      EXPECT_EQ(gpu_answers[i].entities[e].end, cpu[i].entities[e].end);
      EXPECT_NEAR(gpu_answers[i].entities[e].score, cpu[i].entities[e].score, 1e-4);
    }
  }
}

TEST_F(CudaPipelines, LongInputsEqualTheCpuOnTheEncoder) {
  SKIP_WITHOUT_CUDA();
  // 6,000 tokens: 750 sliding windows of 8 on the tiny preset.
  const at::Tensor ids = at::randint(5, 50000, {2, 6000}, at::kLong);
  at::Tensor mask = at::ones({2, 6000}, at::kLong);
  mask[1].narrow(0, 4000, 2000).zero_();
  const ModelInputs inputs{ids, mask, {}};
  const auto cpu = SequenceClassifier::load(path("intent"));
  TaskOptions options;
  options.load = gpu(c10::kFloat);
  const auto gpu_model = SequenceClassifier::load(path("intent"), options);
  const at::Tensor expected = cpu->task().encoder->forward(inputs);
  const at::Tensor actual = gpu_model->task().encoder->forward(on_device(inputs, options.load.device)).cpu();
  const test::Agreement a = test::compare(actual, expected, mask);
  std::printf("    6,000-token encoder, GPU against CPU: max abs error %.3g, cosine %.7f\n", a.max_abs_error, a.cosine);
  EXPECT_LT(a.max_abs_error, 1e-3);
  EXPECT_GT(a.cosine, 0.99999);
}

// Every example in one right-padded batch.
struct PaddedBatch {
  at::Tensor ids, mask;
};
PaddedBatch stacked(const std::vector<training::Encoded>& examples, int32_t pad_id) {
  size_t length = 0;
  for (const auto& e : examples) length = std::max(length, e.ids.size());
  PaddedBatch b{at::full({static_cast<int64_t>(examples.size()), static_cast<int64_t>(length)}, pad_id, at::kLong),
          at::zeros({static_cast<int64_t>(examples.size()), static_cast<int64_t>(length)}, at::kLong)};
  for (size_t i = 0; i < examples.size(); ++i) {
    const auto n = static_cast<int64_t>(examples[i].ids.size());
    b.ids[static_cast<int64_t>(i)].narrow(0, 0, n).copy_(at::tensor(examples[i].ids));
    b.mask[static_cast<int64_t>(i)].narrow(0, 0, n).fill_(1);
  }
  return b;
}

// Two classes a bag of words separates, the tiny preset, 12 steps of AdamW
// without dropout: only summation order (and the compute type) may differ
// between devices.
struct ToyTraining {
  std::vector<training::Example> examples;
  std::vector<std::string> labels;
  std::vector<training::Encoded> encoded;
  nlohmann::json config = modernbert_preset_config("tiny");
  training::TrainOptions options;
  std::shared_ptr<const Tokenizer> tokenizer = load_tokenizer(kModernBertTokenizer);

  ToyTraining() {
    using namespace training;
    const char* texts[][2] = {{"solve the integral of x", "math"},    {"factor this polynomial", "math"},
                              {"find the roots of the quadratic", "math"}, {"is this contract binding", "law"},
                              {"how do I file a lawsuit", "law"},     {"who inherits without a will", "law"}};
    for (int round = 0; round < 4; ++round)
      for (const auto& [text, label] : texts) examples.push_back({std::string(text) + (round ? " now" : ""), label, {}, {}});
    labels = label_set(examples, Objective::kSequence);
    encoded = encode(*tokenizer, examples, Objective::kSequence, labels, 64);
    for (size_t i = 0; i < labels.size(); ++i) config["id2label"][std::to_string(i)] = labels[i];
    options.epochs = 4, options.batch_size = 8, options.learning_rate = 3e-3, options.dropout = 0, options.patience = 100;
  }

  // Trains on `device` (checkpoints in `checkpoints` when given; the progress
  // callback throws at step `kill_at` to stop the run as a kill would).
  training::TrainableModernBert run(c10::Device device, const std::string& checkpoints = "", int64_t kill_at = -1,
                                    at::ScalarType compute = at::kFloat) const {
    using namespace training;
    TrainableModernBert model(config, Objective::kSequence, 5);
    model.to(device);
    model.set_compute_dtype(compute);
    TrainOptions o = options;
    o.checkpoint_dir = checkpoints, o.checkpoint_every = checkpoints.empty() ? 0 : 2;
    struct Killed {};
    try {
      train(model, encoded, encoded, labels, o, tokenizer->pad_id(), -1,
            [&](const Progress& p) { if (p.step == kill_at) throw Killed{}; });
    } catch (const Killed&) {
    }
    return model;
  }

  // softmax of the model's logits on every example, on the CPU.
  at::Tensor probabilities(const training::TrainableModernBert& model) const {
    const PaddedBatch all = stacked(encoded, tokenizer->pad_id());
    c10::NoGradGuard no_grad;
    const c10::Device d = model.device();
    return at::softmax(model.logits(all.ids.to(d), all.mask.to(d), false), -1).cpu();
  }
};

// `semroute train --device cuda`: the same steps on the GPU follow the CPU's
// (float32, no dropout: only summation order differs), a GPU checkpoint
// resumes on the GPU to the weights of an unbroken run, and the saved model
// answers on the CPU as the trainer does.
TEST(CudaTraining, FollowsTheCpuAndSavesWhatTheCpuReads) {
  SKIP_WITHOUT_CUDA();
  using namespace training;
  const ToyTraining toy;
  const TrainableModernBert cpu = toy.run(c10::kCPU);
  const TrainableModernBert gpu = toy.run(parse_device("cuda"));
  const auto gpu_weights = gpu.snapshot();
  for (const at::Tensor& w : gpu_weights) ASSERT_TRUE(w.is_cuda()) << "a weight left the GPU";
  // The two runs' probabilities on every example (AdamW normalizes each step,
  // so single weights may drift by a step where a gradient is near zero).
  const at::Tensor p_cpu = toy.probabilities(cpu), p_gpu = toy.probabilities(gpu);
  const double worst = (p_gpu - p_cpu).abs().max().item<double>();
  std::printf("    12 steps of AdamW, GPU against CPU: max probability difference %.3g\n", worst);
  EXPECT_LT(worst, 1e-3);
  EXPECT_TRUE(p_gpu.argmax(-1).equal(p_cpu.argmax(-1)));

  test::TempDir checkpoints;
  toy.run(parse_device("cuda"), checkpoints.path().string(), 7);
  const auto resumed = toy.run(parse_device("cuda"), checkpoints.path().string()).snapshot();
  double resume_gap = 0;
  for (size_t i = 0; i < resumed.size(); ++i)
    resume_gap = std::max(resume_gap, (resumed[i] - gpu_weights[i]).abs().max().item<double>());
  EXPECT_LT(resume_gap, 1e-4) << "a GPU run resumed from its checkpoint";

  test::TempDir saved;
  save_model(gpu, saved.path(), kModernBertTokenizer, at::kFloat);
  std::vector<std::string_view> views;
  for (const Example& e : toy.examples) views.push_back(e.text);
  const auto answers = SequenceClassifier::load(saved.path())->classify(views);
  for (size_t i = 0; i < toy.examples.size(); ++i)
    for (size_t c = 0; c < toy.labels.size(); ++c)
      EXPECT_NEAR(p_gpu[static_cast<int64_t>(i)][static_cast<int64_t>(c)].item<double>(), answers[i].probabilities[c], 1e-5);
}

// `--device cuda --compute-dtype bfloat16`: the products in bfloat16 on the
// GPU, the weights float32 there, the answers those of float32 on the CPU
// to bfloat16's rounding.
TEST(CudaTraining, MixedPrecisionFollowsFloat32) {
  SKIP_WITHOUT_CUDA();
  const ToyTraining toy;
  const training::TrainableModernBert mixed = toy.run(parse_device("cuda"), "", -1, at::kBFloat16);
  for (const at::Tensor& w : mixed.snapshot()) ASSERT_EQ(w.scalar_type(), at::kFloat) << "a weight left float32";
  const at::Tensor p_cpu = toy.probabilities(toy.run(c10::kCPU)), p_mixed = toy.probabilities(mixed);
  const double worst = (p_mixed - p_cpu).abs().max().item<double>();
  std::printf("    12 steps of AdamW, GPU bfloat16 against CPU float32: max probability difference %.3g\n", worst);
  EXPECT_LT(worst, 0.05);
  EXPECT_TRUE(p_mixed.argmax(-1).equal(p_cpu.argmax(-1)));
}

}  // namespace
}  // namespace semroute
