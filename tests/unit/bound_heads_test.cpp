// Task heads bound at run time to an encoder already loaded (a backbone):
// the heads share the encoder's weights, keep their own labels, scoring and
// pooling, and answer as Hugging Face's model of the same checkpoint does;
// through the C++ API, the C API and the binder's refusals.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/checkpoint.h"
#include "reference.h"
#include "semroute/semroute.h"
#include "tasks/sequence_classifier.h"
#include "tasks/token_classifier.h"
#include "test_util.h"

namespace semroute {
namespace {

namespace fs = std::filesystem;

bool is_head_tensor(const std::string& name) { return name.rfind("model.", 0) != 0; }

// `source`'s tensors for which keep(name) holds, written to `out`/model.safetensors.
void write_tensors(const fs::path& source, const fs::path& out, bool (*keep)(const std::string&)) {
  const Checkpoint checkpoint = Checkpoint::open(source);
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  for (const auto& name : checkpoint.names())
    if (keep(name)) tensors.emplace_back(name, checkpoint.tensor(name));
  fs::create_directories(out);
  save_safetensors(out / "model.safetensors", tensors);
}

// The encoder of `source` alone: its config.json and the model.* tensors (no head, no tokenizer).
fs::path backbone_dir(const fs::path& source, const fs::path& out) {
  write_tensors(source, out, [](const std::string& name) { return !is_head_tensor(name); });
  fs::copy_file(source / "config.json", out / "config.json");
  return out;
}

// The head of `source` alone: its config.json and the head's tensors.
fs::path head_dir(const fs::path& source, const fs::path& out) {
  write_tensors(source, out, &is_head_tensor);
  fs::copy_file(source / "config.json", out / "config.json");
  return out;
}

PipelineOptions with_modernbert_tokenizer() {
  PipelineOptions options;  // the fixtures have ids, not text: any tokenizer lets them load
  options.tokenizer = test::data_dir() / "tokenizers" / "modernbert" / "tokenizer.json";
  return options;
}

// The two fixtures share every weight and differ only in classifier_pooling
// (cls / mean): two heads on one encoder must each pool as their own config says.
TEST(BoundHeads, HeadsOnOneEncoderMatchHuggingFaceWithTheirOwnPooling) {
  test::TempDir dir;
  const Backbone backbone =
      Backbone::load(backbone_dir(test::data_dir() / "modernbert_seqcls_cls", dir / "backbone"), {});
  EXPECT_EQ(backbone.tokenizer, nullptr);  // the directory has none
  for (const std::string fixture : {"modernbert_seqcls_cls", "modernbert_seqcls_mean"}) {
    const fs::path head = head_dir(test::data_dir() / fixture, dir / fixture);
    const auto classifier = SequenceClassifier::bind(backbone, head, with_modernbert_tokenizer());
    EXPECT_EQ(classifier->task().encoder, backbone.encoder);  // shared, not loaded again
    EXPECT_EQ(classifier->labels().size(), 3u);
    for (const auto& c : test::load_reference(test::data_dir() / fixture / "reference.json")) {
      const test::Agreement a = test::compare(classifier->logits(c.inputs), c.expected("logits"), at::Tensor());
      std::printf("    %s bound to a shared encoder, %s/logits: max abs error %.3g, cosine %.6f\n", fixture.c_str(),
                  c.name.c_str(), a.max_abs_error, a.cosine);
      EXPECT_LT(a.max_abs_error, 1e-4);
      EXPECT_GT(a.cosine, 0.99999);
    }
  }
}

TEST(BoundHeads, TokenHeadMatchesHuggingFace) {
  test::TempDir dir;
  const fs::path fixture = test::data_dir() / "modernbert_tokcls";
  const Backbone backbone = Backbone::load(backbone_dir(fixture, dir / "backbone"), {});
  const auto classifier = TokenClassifier::bind(backbone, head_dir(fixture, dir / "head"), with_modernbert_tokenizer());
  for (const auto& c : test::load_reference(fixture / "reference.json")) {
    const test::Agreement a = test::compare(classifier->logits(c.inputs), c.expected("logits"), c.inputs.attention_mask);
    std::printf("    token head bound, %s/logits: max abs error %.3g, cosine %.6f\n", c.name.c_str(), a.max_abs_error,
                a.cosine);
    EXPECT_LT(a.max_abs_error, 1e-4);
  }
}

bool is_classifier_tensor(const std::string& name) { return name.rfind("classifier.", 0) == 0; }

// A ModernBERT checkpoint with a classifier and no head.dense / head.norm:
// the classifier reads the pooled states directly.
TEST(BoundHeads, AClassifierWithoutTheTransformReadsThePooledStates) {
  test::TempDir dir;
  const fs::path fixture = test::data_dir() / "modernbert_seqcls_cls";
  const Backbone backbone = Backbone::load(fixture, {});
  const fs::path head = dir / "classifier_only";
  write_tensors(fixture, head, &is_classifier_tensor);
  fs::copy_file(fixture / "config.json", head / "config.json");
  const auto classifier = SequenceClassifier::bind(backbone, head, with_modernbert_tokenizer());
  const Checkpoint weights = Checkpoint::open(fixture);
  const at::Tensor w = weights.tensor("classifier.weight"), b = weights.tensor("classifier.bias");
  for (const auto& c : test::load_reference(fixture / "reference.json")) {
    const at::Tensor cls = backbone.encoder->forward(c.inputs).select(1, 0);  // classifier_pooling cls
    const at::Tensor expected = at::addmm(b, cls, w.t());
    const double error = (classifier->logits(c.inputs) - expected).abs().max().item<double>();
    EXPECT_LT(error, 1e-5) << c.name;
  }
}

TEST(BoundHeads, TheBinderRefusesHeadsThatDoNotFit) {
  test::TempDir dir;
  const Backbone backbone = Backbone::load(test::data_dir() / "modernbert_seqcls_cls", {});
  // A BERT head reads BERT's hidden states.
  test::expect_error([&] { SequenceClassifier::bind(backbone, test::data_dir() / "bert_seqcls", {}); },
                     ErrorCode::kInvalidModel, "cannot be bound to a modernbert encoder");
  // A ModernBERT head of another width.
  const fs::path wide = head_dir(test::data_dir() / "modernbert_seqcls_cls", dir / "wide");
  nlohmann::json config = nlohmann::json::parse(std::ifstream(wide / "config.json"));
  config["hidden_size"] = config["hidden_size"].get<int>() * 2;
  test::write_file(wide / "config.json", config.dump());
  test::expect_error([&] { SequenceClassifier::bind(backbone, wide, with_modernbert_tokenizer()); },
                     ErrorCode::kInvalidModel, "hidden states of width");
  // A head trained for another task.
  test::expect_error([&] { TokenClassifier::bind(backbone, test::data_dir() / "modernbert_seqcls_cls", {}); },
                     ErrorCode::kInvalidModel, "ModernBertForSequenceClassification head is not a token");
  // No tokenizer anywhere.
  test::expect_error(
      [&] { SequenceClassifier::bind(backbone, head_dir(test::data_dir() / "modernbert_seqcls_cls", dir / "h"), {}); },
      ErrorCode::kInvalidModel, "no tokenizer beside the head");
}

// ---------------------------------------------------------------- C API

void expect_status(semroute_status* status, semroute_code code, const char* needle) {
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(semroute_status_code(status), code);
  EXPECT_NE(std::string(semroute_status_message(status)).find(needle), std::string::npos)
      << semroute_status_message(status);
  semroute_status_free(status);
}

struct ModelDeleter {
  void operator()(semroute_model* m) const { semroute_model_free(m); }
};
using ModelPtr = std::unique_ptr<semroute_model, ModelDeleter>;

ModelPtr load(const fs::path& dir, semroute_task task) {
  semroute_model_params p = semroute_model_default_params();
  p.task = task;
  semroute_model* m = nullptr;
  semroute_status* s = semroute_model_load(dir.c_str(), &p, &m);
  EXPECT_EQ(s, nullptr) << semroute_status_message(s);
  semroute_status_free(s);
  return ModelPtr(m);
}

ModelPtr bind(const semroute_model* source, const fs::path& head, semroute_task task = SEMROUTE_TASK_AUTO) {
  semroute_model_params p = semroute_model_default_params();
  p.task = task;
  semroute_model* m = nullptr;
  semroute_status* s = semroute_model_bind_head(source, head.c_str(), &p, &m);
  EXPECT_EQ(s, nullptr) << semroute_status_message(s);
  semroute_status_free(s);
  return ModelPtr(m);
}

std::vector<float> scores(const semroute_model* model, const std::string& text) {
  semroute_classifications* results = nullptr;
  semroute_status* s = semroute_classify(model, text.data(), text.size(), &results);
  EXPECT_EQ(s, nullptr) << semroute_status_message(s);
  semroute_status_free(s);
  size_t count = 0;
  const float* p = semroute_classifications_probabilities(results, 0, &count);
  std::vector<float> out(p, p + count);
  semroute_classifications_free(results);
  return out;
}

TEST(BoundHeads, CApiHeadsOutliveTheirSourceAndAnswerAsTheWholeModel) {
  const fs::path domain = test::repo_dir() / "models" / "domain";
  const std::string text = "What is the derivative of x squared?";
  const ModelPtr whole = load(domain, SEMROUTE_TASK_AUTO);
  ModelPtr encoder = load(domain, SEMROUTE_TASK_ENCODER);
  EXPECT_EQ(semroute_model_task(encoder.get()), SEMROUTE_TASK_ENCODER);
  EXPECT_EQ(semroute_model_num_labels(encoder.get()), 0u);
  EXPECT_EQ(semroute_model_hidden_size(encoder.get()), semroute_model_hidden_size(whole.get()));
  const ModelPtr head = bind(encoder.get(), domain);
  const ModelPtr again = bind(head.get(), domain);  // bound to a bound head: the same encoder
  EXPECT_EQ(semroute_model_shares_encoder(head.get(), encoder.get()), 1);
  EXPECT_EQ(semroute_model_shares_encoder(again.get(), encoder.get()), 1);
  EXPECT_EQ(semroute_model_shares_encoder(whole.get(), encoder.get()), 0);
  EXPECT_EQ(semroute_model_shares_encoder(nullptr, nullptr), 0);
  EXPECT_EQ(semroute_model_task(head.get()), SEMROUTE_TASK_SEQUENCE_CLASSIFICATION);
  EXPECT_EQ(semroute_model_num_labels(head.get()), semroute_model_num_labels(whole.get()));
  encoder.reset();  // the heads keep the encoder alive
  EXPECT_EQ(scores(head.get(), text), scores(whole.get(), text));
  EXPECT_EQ(scores(again.get(), text), scores(whole.get(), text));

  // A token head on the PII model's encoder equals the PII model.
  const fs::path pii = test::repo_dir() / "models" / "pii";
  const ModelPtr pii_whole = load(pii, SEMROUTE_TASK_AUTO);
  const ModelPtr pii_encoder = load(pii, SEMROUTE_TASK_ENCODER);
  const ModelPtr pii_head = bind(pii_encoder.get(), pii);
  ASSERT_EQ(semroute_model_task(pii_head.get()), SEMROUTE_TASK_TOKEN_CLASSIFICATION);
  const std::string email = "Write to jane.doe@example.com before Friday";
  semroute_token_results *a = nullptr, *b = nullptr;
  ASSERT_EQ(semroute_token_classify(pii_head.get(), email.data(), email.size(), &a), nullptr);
  ASSERT_EQ(semroute_token_classify(pii_whole.get(), email.data(), email.size(), &b), nullptr);
  size_t na = 0, nb = 0;
  const semroute_token_label* const* ta = semroute_token_results_tokens(a, 0, &na);
  const semroute_token_label* const* tb = semroute_token_results_tokens(b, 0, &nb);
  ASSERT_EQ(na, nb);
  for (size_t i = 0; i < na; ++i) {
    EXPECT_STREQ(ta[i]->label, tb[i]->label);
    EXPECT_EQ(ta[i]->probability, tb[i]->probability);
  }
  semroute_token_results_free(a);
  semroute_token_results_free(b);
}

TEST(BoundHeads, CApiRefusals) {
  const fs::path domain = test::repo_dir() / "models" / "domain";
  const ModelPtr encoder = load(domain, SEMROUTE_TASK_ENCODER);
  const std::string text = "hello";
  semroute_classifications* results = nullptr;
  expect_status(semroute_classify(encoder.get(), text.data(), text.size(), &results),
                      SEMROUTE_ERR_INVALID_ARGUMENT, "was loaded for encoder");
  semroute_model* out = nullptr;
  semroute_model_params p = semroute_model_default_params();
  p.task = SEMROUTE_TASK_EMBEDDING;
  expect_status(semroute_model_bind_head(encoder.get(), domain.c_str(), &p, &out), SEMROUTE_ERR_INVALID_ARGUMENT,
                      "not embedding");
  EXPECT_EQ(out, nullptr);
  expect_status(semroute_model_bind_head(nullptr, domain.c_str(), nullptr, &out), SEMROUTE_ERR_INVALID_ARGUMENT,
                      "source");
  const std::string bert = (test::data_dir() / "bert_seqcls").string();
  expect_status(semroute_model_bind_head(encoder.get(), bert.c_str(), nullptr, &out),
                      SEMROUTE_ERR_INVALID_MODEL, "cannot be bound");
  const ModelPtr embedder = load(domain, SEMROUTE_TASK_EMBEDDING);
  expect_status(semroute_model_bind_head(embedder.get(), bert.c_str(), nullptr, &out),
                      SEMROUTE_ERR_INVALID_ARGUMENT, "not an embedding model");
}

}  // namespace
}  // namespace semroute
