// `semroute train`'s pieces: the autograd ModernBERT against Hugging Face's
// outputs, training that lowers the loss, checkpoints and adapters that our
// loaders read back to the same answers, BIO targets, metrics, the baseline
// and vocabulary trimming.
#include <c10/core/GradMode.h>
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>

#include "core/config_reader.h"
#include "core/cpu_features.h"
#include "models/random_model.h"
#include "reference.h"
#include "tasks/sequence_classifier.h"
#include "tasks/token_classifier.h"
#include "test_util.h"
#include "tokenizers/tokenizer.h"
#include "training/export.h"
#include "training/metrics.h"
#include "training/naive_bayes.h"
#include "training/trainer.h"
#include "training/vocab_trim.h"

namespace semroute::training {
namespace {

namespace fs = std::filesystem;
using test::data_dir;

const fs::path kTokenizer = data_dir() / "tokenizers/modernbert/tokenizer.json";

TrainableModernBert fixture_model(const std::string& name, Objective kind) {
  const fs::path dir = data_dir() / name;
  TrainableModernBert model(ConfigReader::from_file(dir / "config.json").json(), kind, 1);
  EXPECT_TRUE(model.load(dir).empty());
  return model;
}

// The training forward is Hugging Face's: logits of every reference case
// (single and right-padded batches) within 1e-4.
TEST(TrainableModernBert, MatchesHuggingFaceLogits) {
  const std::pair<const char*, Objective> fixtures[] = {{"modernbert_seqcls_mean", Objective::kSequence},
                                                        {"modernbert_seqcls_cls", Objective::kSequence},
                                                        {"modernbert_tokcls", Objective::kToken}};
  for (const auto& [name, kind] : fixtures) {
    SCOPED_TRACE(name);
    const TrainableModernBert model = fixture_model(name, kind);
    for (const auto& c : test::load_reference(data_dir() / name / "reference.json")) {
      c10::NoGradGuard no_grad;
      const at::Tensor logits = model.logits(c.inputs.input_ids, c.inputs.attention_mask, false);
      test::expect_matches(c, "logits", logits);
    }
  }
}

// Mixed precision (bfloat16 products, the rest float32) keeps the reference
// logits to bfloat16's rounding (8 bits of mantissa: ~0.4 % per product),
// and its gradients point where float32's do.
TEST(TrainableModernBert, ComputesInBfloat16NearFloat32) {
  TrainableModernBert model = fixture_model("modernbert_seqcls_mean", Objective::kSequence);
  EXPECT_THROW(model.set_compute_dtype(at::kHalf), InvalidInput);
  if (!cpu_features().native_bf16_gemm()) {
    EXPECT_THROW(model.set_compute_dtype(at::kBFloat16), InvalidInput);
    GTEST_SKIP() << cpu_features().describe() << " has no bfloat16 GEMMs: refused, as it should be";
  }
  const auto cases = test::load_reference(data_dir() / "modernbert_seqcls_mean" / "reference.json");
  ASSERT_FALSE(cases.empty());
  std::vector<at::Tensor> gradients[2];
  for (const at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
    model.set_compute_dtype(dtype);
    for (const auto& c : cases) {
      c10::NoGradGuard no_grad;
      const test::Agreement a =
          test::compare(model.logits(c.inputs.input_ids, c.inputs.attention_mask, false), c.expected("logits"), c.inputs.attention_mask);
      SCOPED_TRACE(c.name);
      std::printf("    %s/logits in %s: max abs error %.3g, cosine %.9f\n", c.name.c_str(),
                  dtype == at::kFloat ? "float32" : "bfloat16", a.max_abs_error, a.cosine);
      EXPECT_LT(a.max_abs_error, dtype == at::kFloat ? 1e-4 : 0.05) << "max abs error";
      EXPECT_GT(a.cosine, dtype == at::kFloat ? 0.999999 : 0.999) << "cosine";
    }
    const auto& c = cases.back();
    const at::Tensor loss = model.logits(c.inputs.input_ids, c.inputs.attention_mask, false).logsumexp(-1).sum();
    const auto [no_decay, decay] = model.trainable();
    for (const at::Tensor& t : decay) const_cast<at::Tensor&>(t).mutable_grad() = at::Tensor();
    loss.backward();
    for (const at::Tensor& t : decay) gradients[dtype == at::kFloat ? 0 : 1].push_back(t.grad().flatten().clone());
    EXPECT_EQ(loss.scalar_type(), at::kFloat);
  }
  const at::Tensor full = at::cat(gradients[0]), mixed = at::cat(gradients[1]);
  const double cosine = at::cosine_similarity(full, mixed, 0).item<double>();
  std::printf("    gradients, bfloat16 vs float32: cosine %.6f\n", cosine);
  EXPECT_GT(cosine, 0.99) << "cosine of the float32 and bfloat16 gradients";
  EXPECT_EQ(mixed.scalar_type(), at::kFloat) << "the weights and their gradients stay float32";
}

// Two classes a bag of words separates; the texts are ours.
std::vector<Example> toy_sequences() {
  const char* math[] = {"solve the integral of x", "what is the derivative of a cubic", "factor this polynomial",
                        "compute the limit of the series", "find the roots of the quadratic equation"};
  const char* law[] = {"is this contract binding", "can my landlord keep the deposit", "how do I file a lawsuit",
                       "what does the statute of limitations mean", "who inherits without a will"};
  std::vector<Example> out;
  for (int round = 0; round < 4; ++round)
    for (int i = 0; i < 5; ++i) {
      out.push_back({std::string(math[i]) + (round ? " please" : ""), "math", {}, {}});
      out.push_back({std::string(law[i]) + (round ? " please" : ""), "law", {}, {}});
    }
  return out;
}

nlohmann::json tiny_config(const std::vector<std::string>& labels) {
  nlohmann::json config = modernbert_preset_config("tiny");
  for (size_t i = 0; i < labels.size(); ++i) config["id2label"][std::to_string(i)] = labels[i];
  return config;
}

TrainOptions quick(int64_t steps) {
  TrainOptions o;
  o.epochs = 100;
  o.max_steps = steps;
  o.batch_size = 8;
  o.learning_rate = 3e-3;
  o.dropout = 0;
  o.patience = 1000;
  return o;
}

// 60 quick steps on the toy sequences halve the loss and get every one right.
void expect_learns(TrainableModernBert& model, const std::vector<Encoded>& encoded,
                   const std::vector<std::string>& labels, int32_t pad_id) {
  const double before = evaluate(model, encoded, labels, 8, pad_id).loss;
  const TrainReport report = train(model, encoded, {}, labels, quick(60), pad_id, -1, {});
  const Metrics after = evaluate(model, encoded, labels, 8, pad_id);
  EXPECT_EQ(report.steps, 60);
  EXPECT_LT(after.loss, before * 0.5) << "before " << before << " after " << after.loss;
  EXPECT_EQ(after.accuracy, 1.0);
}

TEST(Trainer, LowersTheLossAndSavesWhatTheClassifierReadsBack) {
  const auto tokenizer = load_tokenizer(kTokenizer);
  const auto examples = toy_sequences();
  const auto labels = label_set(examples, Objective::kSequence);
  ASSERT_EQ(labels, (std::vector<std::string>{"law", "math"}));
  const auto encoded = encode(*tokenizer, examples, Objective::kSequence, labels, 64);
  TrainableModernBert model(tiny_config(labels), Objective::kSequence, 7);
  expect_learns(model, encoded, labels, tokenizer->pad_id());

  // The directory loads in the inference engine with the same probabilities.
  test::TempDir dir;
  save_model(model, dir.path(), kTokenizer, at::kFloat);
  const auto classifier = SequenceClassifier::load(dir.path());
  EXPECT_EQ(classifier->labels(), labels);
  std::vector<std::string_view> texts;
  for (const Example& e : examples) texts.push_back(e.text);
  const auto answers = classifier->classify(texts);
  double worst = 0;
  for (size_t i = 0; i < examples.size(); ++i) {
    const at::Tensor ids = at::tensor(encoded[i].ids).unsqueeze(0);
    c10::NoGradGuard no_grad;
    const at::Tensor p = at::softmax(model.logits(ids, at::ones_like(ids), false), -1)[0];
    for (size_t c = 0; c < labels.size(); ++c)
      worst = std::max(worst, std::abs(p[static_cast<int64_t>(c)].item<double>() - answers[i].probabilities[c]));
  }
  EXPECT_LT(worst, 1e-5) << "max abs error of the probabilities, trainer vs inference engine";
}

TEST(Trainer, LearnsInBfloat16) {
  const auto tokenizer = load_tokenizer(kTokenizer);
  const auto examples = toy_sequences();
  const auto labels = label_set(examples, Objective::kSequence);
  const auto encoded = encode(*tokenizer, examples, Objective::kSequence, labels, 64);
  TrainableModernBert model(tiny_config(labels), Objective::kSequence, 7);
  if (!cpu_features().native_bf16_gemm()) GTEST_SKIP() << cpu_features().describe() << " has no bfloat16 GEMMs";
  model.set_compute_dtype(at::kBFloat16);
  expect_learns(model, encoded, labels, tokenizer->pad_id());
  for (const auto& [name, tensor] : model.weights()) EXPECT_EQ(tensor.scalar_type(), at::kFloat) << name;
}

TEST(Trainer, IsReproducibleForASeed) {
  const auto tokenizer = load_tokenizer(kTokenizer);
  const auto examples = toy_sequences();
  const auto labels = label_set(examples, Objective::kSequence);
  const auto encoded = encode(*tokenizer, examples, Objective::kSequence, labels, 64);
  std::vector<at::Tensor> runs[2];
  for (auto& run : runs) {
    TrainableModernBert model(tiny_config(labels), Objective::kSequence, 3);
    TrainOptions options = quick(10);
    options.dropout = 0.1;
    train(model, encoded, {}, labels, options, tokenizer->pad_id(), -1, {});
    run = model.snapshot();
  }
  for (size_t i = 0; i < runs[0].size(); ++i) EXPECT_TRUE(at::equal(runs[0][i], runs[1][i])) << i;
}

// A run killed mid-epoch goes on from its last checkpoint to the weights and
// report of a run that never stopped: batch order, dropout and AdamW's
// moments all continue where they were. Checkpoints of another run, and
// unreadable ones, are refused.
TEST(Trainer, ResumesFromACheckpointToTheSameWeights) {
  const auto tokenizer = load_tokenizer(kTokenizer);
  const auto examples = toy_sequences();
  const auto labels = label_set(examples, Objective::kSequence);
  const auto encoded = encode(*tokenizer, examples, Objective::kSequence, labels, 64);
  TrainOptions options = quick(0);
  options.epochs = 5;
  options.dropout = 0.1;
  options.checkpoint_every = 2;
  const auto run = [&](const TrainOptions& o, const std::function<void(const Progress&)>& progress) {
    TrainableModernBert model(tiny_config(labels), Objective::kSequence, 3);
    const TrainReport report = train(model, encoded, encoded, labels, o, tokenizer->pad_id(), -1, progress);
    return std::make_pair(model.snapshot(), report);
  };
  TrainOptions plain = options;
  plain.checkpoint_dir.clear();
  const auto [weights, report] = run(plain, {});
  ASSERT_GT(report.steps, 8) << "the toy set must take more than two checkpoints";

  test::TempDir dir;
  options.checkpoint_dir = dir.path().string();
  struct Killed {};
  EXPECT_THROW(run(options, [](const Progress& p) { if (p.step == 7) throw Killed{}; }), Killed);
  ASSERT_TRUE(fs::exists(dir / "checkpoint.pt"));
  const auto [resumed, resumed_report] = run(options, {});
  EXPECT_EQ(resumed_report.resumed_at_step, 6);
  EXPECT_EQ(resumed_report.steps, report.steps);
  EXPECT_EQ(resumed_report.best_epoch, report.best_epoch);
  ASSERT_EQ(resumed_report.epochs.size(), report.epochs.size());
  for (size_t e = 0; e < report.epochs.size(); ++e)
    EXPECT_DOUBLE_EQ(resumed_report.epochs[e].train_loss, report.epochs[e].train_loss) << "epoch " << e + 1;
  ASSERT_EQ(resumed.size(), weights.size());
  for (size_t i = 0; i < weights.size(); ++i) EXPECT_TRUE(at::equal(resumed[i], weights[i])) << "weight " << i;

  TrainOptions other = options;
  other.learning_rate *= 2;
  test::expect_error([&] { run(other, {}); }, ErrorCode::kInvalidArgument, "is of another run");
  test::write_file(dir / "checkpoint.pt", "not a checkpoint");
  test::expect_error([&] { run(options, {}); }, ErrorCode::kInvalidModel, "unreadable checkpoint");
}

// Temperature scaling: labels drawn from softmax(z / 2) for logits z make a
// classifier overconfident by a factor of 2; the fit finds ~2 and the
// expected calibration error falls.
TEST(Calibration, FitsTheTemperatureOfOverconfidentLogits) {
  at::manual_seed(9);
  const at::Tensor z = at::randn({4000, 5}) * 4;
  const at::Tensor drawn = at::multinomial(at::softmax(z / 2, -1), 1).squeeze(1);
  const std::vector<int64_t> gold(drawn.data_ptr<int64_t>(), drawn.data_ptr<int64_t>() + drawn.numel());
  const double t = fit_temperature(z, gold);
  EXPECT_NEAR(t, 2.0, 0.2);
  const Calibration raw = calibration(z, gold), scaled = calibration(z, gold, t);
  EXPECT_GT(raw.ece, 0.1) << "overconfident logits must show a calibration error";
  EXPECT_LT(scaled.ece, 0.03);
  EXPECT_LT(scaled.nll, raw.nll);
  // Perfect confidence on always-right answers: no error.
  const at::Tensor sure = at::eye(3) * 50;
  EXPECT_LT(calibration(sure, {0, 1, 2}).ece, 1e-9);
  EXPECT_DOUBLE_EQ(fit_temperature(z, {}), 1.0);
}

// A LoRA adapter trained on a base is read by our loader merged and unmerged,
// with the trainer's answers.
TEST(Trainer, SavesAPeftAdapterOurLoaderReadsMergedAndUnmerged) {
  test::TempDir dir;
  const auto tokenizer = load_tokenizer(kTokenizer);
  const auto examples = toy_sequences();
  const auto labels = label_set(examples, Objective::kSequence);
  const auto encoded = encode(*tokenizer, examples, Objective::kSequence, labels, 64);
  {
    TrainableModernBert base(tiny_config(labels), Objective::kSequence, 11);
    save_model(base, dir / "base", kTokenizer, at::kFloat);
  }
  TrainableModernBert model(tiny_config(labels), Objective::kSequence, 5);
  EXPECT_EQ(model.load(dir / "base").size(), 0u);
  LoraSpec spec;
  spec.r = 4;
  spec.alpha = 8;
  model.add_lora(spec, 2);
  const double before = evaluate(model, encoded, labels, 8, tokenizer->pad_id()).loss;
  train(model, encoded, {}, labels, quick(40), tokenizer->pad_id(), -1, {});
  EXPECT_LT(evaluate(model, encoded, labels, 8, tokenizer->pad_id()).loss, before);
  save_adapter(model, dir / "adapter", (dir / "base").string(), kTokenizer);
  // The base weights did not move: only A, B and the head trained.
  const Checkpoint saved = Checkpoint::open(dir / "base");
  EXPECT_TRUE(at::equal(saved.tensor("model.layers.1.attn.Wqkv.weight"),
                        model.weights().at("model.layers.1.attn.Wqkv.weight").detach()));

  std::vector<std::string_view> texts = {examples[0].text, examples[1].text};
  c10::NoGradGuard no_grad;
  for (const bool merged : {true, false}) {
    SCOPED_TRACE(merged ? "merged" : "unmerged");
    TaskOptions options;
    options.adapter = dir / "adapter";
    options.merge_adapter = merged;
    const auto answers = SequenceClassifier::load(dir / "base", options)->classify(texts);
    for (size_t i = 0; i < texts.size(); ++i) {
      const at::Tensor ids = at::tensor(encoded[i].ids).unsqueeze(0);
      const at::Tensor p = at::softmax(model.logits(ids, at::ones_like(ids), false), -1)[0];
      for (size_t c = 0; c < labels.size(); ++c)
        EXPECT_NEAR(p[static_cast<int64_t>(c)].item<double>(), answers[i].probabilities[c], 1e-5);
    }
  }
}

TEST(TrainingData, SpansBecomeBioTargetsOnTokens) {
  const auto tokenizer = load_tokenizer(kTokenizer);
  const std::string text = "Mail Ann Lee at ann@example.com";
  const std::vector<Example> examples = {{text, "", {{5, 12, "PERSON"}, {16, 31, "EMAIL"}}, {}}};
  const auto labels = label_set(examples, Objective::kToken);
  ASSERT_EQ(labels, (std::vector<std::string>{"O", "B-EMAIL", "I-EMAIL", "B-PERSON", "I-PERSON"}));
  const auto encoded = encode(*tokenizer, examples, Objective::kToken, labels, 0);
  const Encoding tokens = tokenizer->encode(text);
  std::vector<std::string> tags;
  for (size_t t = 0; t < tokens.size(); ++t)
    tags.push_back(encoded[0].targets[t] == kIgnore ? "-" : labels[static_cast<size_t>(encoded[0].targets[t])]);
  // [CLS] Mail ĠAnn ĠLee Ġat Ġann @ example . com [SEP]
  EXPECT_EQ(tags.front(), "-");
  EXPECT_EQ(tags.back(), "-");
  EXPECT_EQ(tags[1], "O");
  EXPECT_EQ(tags[2], "B-PERSON");
  EXPECT_EQ(tags[3], "I-PERSON");
  EXPECT_EQ(tags[4], "O");
  EXPECT_EQ(tags[5], "B-EMAIL");
  for (size_t t = 6; t + 1 < tags.size(); ++t) EXPECT_EQ(tags[t], "I-EMAIL") << tokens.tokens[t];
}

TEST(TrainingData, RejectsMalformedRowsWithTheirLine) {
  test::TempDir dir;
  const auto expect_error = [&](const std::string& body, Objective kind, const std::string& message) {
    test::write_file(dir / "d.jsonl", body);
    try {
      read_jsonl(dir / "d.jsonl", kind);
      ADD_FAILURE() << "accepted: " << body;
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  };
  expect_error("{\"text\": \"a\", \"label\": \"x\"}\n{oops\n", Objective::kSequence, "d.jsonl:2: not a JSON object");
  expect_error("{\"text\": \"a\"}\n", Objective::kSequence, "\"label\" must be");
  expect_error("{\"text\": \"abc\", \"spans\": [{\"start\": 2, \"end\": 9, \"label\": \"X\"}]}", Objective::kToken,
               "outside the text");
  expect_error("{\"text\": \"abcdef\", \"spans\": [{\"start\": 0, \"end\": 3, \"label\": \"X\"}, "
               "{\"start\": 2, \"end\": 4, \"label\": \"Y\"}]}",
               Objective::kToken, "spans overlap");
  expect_error("\n\n", Objective::kSequence, "no examples");
}

TEST(TrainingData, TheSplitDependsOnTheTextAndSeedOnly) {
  std::vector<Example> examples;
  for (int i = 0; i < 2000; ++i) examples.push_back({"text " + std::to_string(i), "a", {}, {}});
  const Split a = split(examples, 1, 0.1, 0.1);
  std::vector<Example> reversed(examples.rbegin(), examples.rend());
  const Split b = split(reversed, 1, 0.1, 0.1);
  EXPECT_EQ(a.test.size(), b.test.size());
  EXPECT_NEAR(static_cast<double>(a.test.size()), 200, 60);
  EXPECT_NEAR(static_cast<double>(a.valid.size()), 200, 60);
  for (const Example& e : a.test) EXPECT_EQ(part_of(e.text, 1, 0.1, 0.1), Part::kTest);
  EXPECT_NE(split(examples, 2, 0.1, 0.1).test.front().text, a.test.front().text);
}

TEST(TrainingData, KeepsTheRowsFieldsAndHoldsOutWholeSources) {
  test::TempDir dir;
  std::string rows;
  for (int i = 0; i < 200; ++i)
    rows += "{\"text\": \"t" + std::to_string(i) + "\", \"label\": \"a\", \"source\": \"" +
            (i % 4 == 0 ? "xstest" : "other") + "\", \"template_id\": " + std::to_string(i % 20) +
            ", \"extra\": [1]}\n";
  test::write_file(dir / "d.jsonl", rows);
  std::vector<Example> examples = read_jsonl(dir / "d.jsonl", Objective::kSequence);
  EXPECT_EQ(examples[0].fields.at("source"), "xstest");
  EXPECT_EQ(examples[3].fields.at("template_id"), "3");
  EXPECT_EQ(examples[0].fields.count("extra"), 0u) << "only strings and integers are kept";

  HoldOut by_source;
  by_source.equal = {{"source", "xstest"}};
  std::vector<Example> kept = examples;
  const std::vector<Example> held = take_held_out(kept, by_source);
  EXPECT_EQ(held.size(), 50u);
  EXPECT_EQ(kept.size(), 150u);
  for (const Example& e : held) EXPECT_EQ(e.fields.at("source"), "xstest");
  EXPECT_EQ(kept.front().text, "t1") << "order kept";

  // A share of a field's values: every row of a held-out template goes, the
  // others stay; the same seed holds out the same templates.
  HoldOut by_template;
  by_template.share = {{"template_id", 0.3}};
  kept = examples;
  const std::vector<Example> templates = take_held_out(kept, by_template);
  std::set<std::string> held_ids, kept_ids;
  for (const Example& e : templates) held_ids.insert(e.fields.at("template_id"));
  for (const Example& e : kept) kept_ids.insert(e.fields.at("template_id"));
  EXPECT_FALSE(held_ids.empty());
  EXPECT_LT(held_ids.size(), 20u);
  for (const std::string& id : held_ids) EXPECT_EQ(kept_ids.count(id), 0u) << "template " << id << " on both sides";
  EXPECT_EQ(templates.size(), held_ids.size() * 10);
  std::vector<Example> again = examples;
  EXPECT_EQ(take_held_out(again, by_template).size(), templates.size());
  EXPECT_TRUE(take_held_out(again, HoldOut{}).empty());
}

TEST(TrainingData, FinalSentencesMakeShortQuestions) {
  const std::vector<Example> long_items = {
      {"A gas is heated at constant volume. What happens to its pressure?", "physics", {}, {{"source", "s"}}},
      {"Which one?", "math", {}, {}},                                              // one sentence: none
      {"Statement 1 | Groups are sets.\nStatement 2 | Rings add.", "math", {}, {}},  // a line break ends one
      {"It rains. Why?", "other", {}, {}},                                         // too short a final sentence
      {"Values of e.g. 3.5 are here without a break", "math", {}, {}}};
  const std::vector<Example> short_items = final_sentences(long_items, 2);
  ASSERT_EQ(short_items.size(), 2u);
  EXPECT_EQ(short_items[0].text, "What happens to its pressure?");
  EXPECT_EQ(short_items[0].label, "physics");
  EXPECT_EQ(short_items[0].fields.at("source"), "s");
  EXPECT_EQ(short_items[1].text, "Statement 2 | Rings add.");
  EXPECT_EQ(final_sentences(long_items, 5).size(), 2u) << "five words each";
  EXPECT_TRUE(final_sentences(long_items, 6).empty());
}

TEST(Metrics, PicksTheAlarmThresholdWithinTheFalseAlarmBudget) {
  // 100 negatives scoring 0.00 .. 0.99, 10 positives scoring 0.90 .. 0.99.
  std::vector<double> scores;
  std::vector<bool> positive;
  for (int i = 0; i < 100; ++i) scores.push_back(i / 100.0), positive.push_back(false);
  for (int i = 0; i < 10; ++i) scores.push_back((90 + i) / 100.0), positive.push_back(true);
  const AlarmRates five = pick_threshold(scores, positive, 0.05);
  EXPECT_NEAR(five.false_alarm_rate, 0.05, 1e-9) << "5 negatives (0.95 .. 0.99) may raise it";
  EXPECT_NEAR(five.recall, 0.5, 1e-9);
  EXPECT_GT(five.threshold, 0.94);
  EXPECT_LE(five.threshold, 0.95);
  const AlarmRates none = pick_threshold(scores, positive, 0);
  EXPECT_EQ(none.false_alarm_rate, 0);
  EXPECT_EQ(none.recall, 0) << "no positive scores above every negative";
  const AlarmRates all = pick_threshold(scores, positive, 1);
  EXPECT_EQ(all.recall, 1);
  EXPECT_NEAR(all.threshold, 0.9, 0.0011) << "raised to the lowest positive score";
  EXPECT_NEAR(all.false_alarm_rate, 0.1, 1e-9);
  const AlarmRates at = alarm_rates(scores, positive, 0.95);
  EXPECT_EQ(at.positives, 10);
  EXPECT_EQ(at.negatives, 100);
  EXPECT_NEAR(at.recall, 0.5, 1e-9);
  EXPECT_NEAR(at.false_alarm_rate, 0.05, 1e-9);
}

TEST(Metrics, ReportEntitySpansAndTheTypesFoundPerText) {
  const std::vector<std::vector<LabeledSpan>> gold = {
      {{0, 5, "PERSON"}, {10, 20, "EMAIL"}}, {{3, 8, "PHONE"}}, {}};
  const std::vector<std::vector<LabeledSpan>> found = {
      {{0, 5, "PERSON"}, {10, 19, "EMAIL"}, {30, 33, "GPE"}}, {{3, 8, "PHONE"}}, {{1, 2, "DATE"}}};
  const EntityReport r = entity_report(gold, found);
  EXPECT_EQ(r.texts, 3);
  EXPECT_NEAR(r.precision, 2.0 / 5, 1e-9);
  EXPECT_NEAR(r.recall, 2.0 / 3, 1e-9);
  EXPECT_NEAR(r.all_types_found, 1.0, 1e-9) << "EMAIL was found as a type, if not its exact bytes";
  EXPECT_NEAR(r.extra_types_per_text, 2.0 / 3, 1e-9) << "GPE in the first text, DATE in the third";
  EXPECT_NEAR(r.texts_with_extra_types, 2.0 / 3, 1e-9);
}

TEST(Metrics, CountEntitiesByExactSpan) {
  const std::vector<std::string> labels = {"O", "B-P", "I-P", "B-E", "I-E"};
  // gold: [P P] O [E]; predicted: [P] [P] O [E] -> 1 of 3 predicted right, 1 of 2 gold found
  const std::vector<std::vector<int64_t>> gold = {{kIgnore, 1, 2, 0, 3, kIgnore}};
  const std::vector<std::vector<int64_t>> predicted = {{0, 1, 1, 0, 3, 0}};
  const Metrics m = entity_metrics(gold, predicted, labels);
  EXPECT_NEAR(m.micro_f1, 2 * (1.0 / 3) * 0.5 / (1.0 / 3 + 0.5), 1e-9);
  EXPECT_NEAR(m.accuracy, 3.0 / 4, 1e-9);
  ASSERT_EQ(m.classes.size(), 2u);
  EXPECT_EQ(m.classes[0].name, "E");
  EXPECT_EQ(m.classes[0].f1, 1.0);
  EXPECT_EQ(m.classes[1].precision, 0.0);

  const Metrics c = class_metrics({0, 0, 1, 1}, {0, 1, 1, 1}, {"a", "b"});
  EXPECT_EQ(c.accuracy, 0.75);
  EXPECT_NEAR(c.macro_f1, (2.0 / 3 + 0.8) / 2, 1e-9);
}

TEST(NaiveBayes, LearnsWordsAndNeighbours) {
  NaiveBayes sequences(Objective::kSequence, 2);
  std::vector<Encoded> train_set(4);
  train_set[0].ids = {1, 5, 5}, train_set[0].label = 0;
  train_set[1].ids = {1, 5, 6}, train_set[1].label = 0;
  train_set[2].ids = {1, 7, 7}, train_set[2].label = 1;
  train_set[3].ids = {1, 8, 7}, train_set[3].label = 1;
  sequences.fit(train_set);
  Encoded probe;
  probe.ids = {1, 7};
  EXPECT_EQ(sequences.predict(probe), std::vector<int64_t>{1});
  probe.ids = {5};
  EXPECT_EQ(sequences.predict(probe), std::vector<int64_t>{0});

  NaiveBayes tokens(Objective::kToken, 2);
  Encoded entity, plain;
  entity.ids = {3, 9}, entity.targets = {0, 1};  // 9 after 3 is an entity, after 4 it is not
  plain.ids = {4, 9}, plain.targets = {0, 0};
  tokens.fit({entity, entity, entity, plain, plain, plain});
  probe.ids = {3, 9};
  EXPECT_EQ(tokens.predict(probe), (std::vector<int64_t>{0, 1}));
  probe.ids = {4, 9};
  EXPECT_EQ(tokens.predict(probe), (std::vector<int64_t>{0, 0}));
}

TEST(VocabTrim, KeepsEveryTextEncodableAndRenumbersSpecials) {
  test::TempDir dir;
  const std::vector<std::string> corpus = {"the router routes prompts", "routing prompts to the right model",
                                           "the the the router"};
  TrimReport report;
  const nlohmann::json trimmed = trim_vocabulary(kTokenizer, corpus, 270, &report);
  std::ofstream(dir / "tokenizer.json") << trimmed.dump();
  EXPECT_GE(report.kept, 270u);  // the single characters, the most used tokens and their merge parts
  EXPECT_LT(report.kept, 290u);
  const auto original = load_tokenizer(kTokenizer);
  const auto small = load_tokenizer(dir / "tokenizer.json");
  EXPECT_LT(small->vocab_size(), 400u);
  // Frequent words keep their tokens; any other text still encodes losslessly.
  EXPECT_EQ(small->encode("the router").tokens, original->encode("the router").tokens);
  for (const std::string text : {"Zoë emailed 42 €", "completely unseen vocabulary!"}) {
    const Encoding e = small->encode(text);
    for (const int32_t id : e.ids) EXPECT_LT(static_cast<size_t>(id), small->vocab_size());
    EXPECT_EQ(small->decode(e.ids), text);
    EXPECT_EQ(e.ids.front(), *small->token_to_id("[CLS]"));
    EXPECT_EQ(e.ids.back(), *small->token_to_id("[SEP]"));
  }
}

}  // namespace
}  // namespace semroute::training
