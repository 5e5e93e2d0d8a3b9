// What a model's files tell inference beyond Hugging Face's keys, on every
// path (classifier, adapter, merged adapter), a bad value being a load error:
// semroute_temperature (sequence logits are divided by it) and
// semroute_entity_aggregation (token labels read word by word).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "adapters/merge_adapter.h"
#include "reference.h"
#include "tasks/sequence_classifier.h"
#include "tasks/token_classifier.h"
#include "test_util.h"

namespace semroute {
namespace {

namespace fs = std::filesystem;

TaskOptions fixture_options() {
  TaskOptions options;  // the fixtures have ids, not text: any tokenizer lets them load
  options.tokenizer = test::data_dir() / "tokenizers/modernbert/tokenizer.json";
  return options;
}

TEST(Temperature, DividesTheLogitsOfAClassifier) {
  test::TempDir dir;
  const fs::path fixture = test::data_dir() / "modernbert_seqcls_mean";
  const auto hot = SequenceClassifier::load(test::copy_with_json_key(fixture, dir / "t2", "config.json", "semroute_temperature", 2.5),
                                            fixture_options());
  EXPECT_DOUBLE_EQ(hot->task().head.temperature(), 2.5);
  for (const auto& c : test::load_reference(fixture / "reference.json")) {
    const at::Tensor expected = c.expected("logits") / 2.5;
    const at::Tensor actual = hot->logits(c.inputs);
    const test::Agreement a = test::compare(actual, expected, at::Tensor());
    std::printf("    %s logits at temperature 2.5 vs HF logits / 2.5: max abs error %.3g, cosine %.6f\n",
                c.name.c_str(), a.max_abs_error, a.cosine);
    EXPECT_LT(a.max_abs_error, 1e-4);
    const auto results = to_classifications(actual, hot->labels());
    const at::Tensor p = at::softmax(expected, -1);
    for (size_t b = 0; b < results.size(); ++b)
      EXPECT_NEAR(results[b].confidence, p[static_cast<int64_t>(b)].max().item<float>(), 1e-5);
  }
  EXPECT_DOUBLE_EQ(SequenceClassifier::load(fixture, fixture_options())->task().head.temperature(), 1.0);
  for (const nlohmann::json& bad : {nlohmann::json(0), nlohmann::json(-1), nlohmann::json(1000), nlohmann::json("hot")}) {
    const fs::path out = test::copy_with_json_key(fixture, dir / ("bad" + bad.dump()), "config.json", "semroute_temperature", bad);
    test::expect_error([&] { SequenceClassifier::load(out, fixture_options()); }, ErrorCode::kInvalidModel,
                       "semroute_temperature");
  }
}

TEST(Temperature, TravelsWithAnAdapterAndItsMergedModel) {
  test::TempDir dir;
  const fs::path fixture = test::data_dir() / "multitask_lora";
  const fs::path adapter =
      test::copy_with_json_key(fixture / "intent", dir / "intent", "task_config.json", "semroute_temperature", 4.0);
  TaskOptions plain = fixture_options(), scaled = fixture_options();
  plain.adapter = fixture / "intent";
  scaled.adapter = adapter;
  const auto before = SequenceClassifier::load(fixture / "base", plain);
  const auto after = SequenceClassifier::load(fixture / "base", scaled);
  merge_adapter(fixture / "base", adapter, dir / "merged");
  const auto merged = SequenceClassifier::load(dir / "merged", fixture_options());
  EXPECT_DOUBLE_EQ(merged->task().head.temperature(), 4.0);
  for (const auto& c : test::load_reference(fixture / "base" / "reference.json")) {
    const at::Tensor expected = before->logits(c.inputs) / 4.0;
    EXPECT_LT((after->logits(c.inputs) - expected).abs().max().item<double>(), 1e-5) << c.name;
    EXPECT_LT((merged->logits(c.inputs) - expected).abs().max().item<double>(), 1e-4) << c.name;
  }
}

// True when no span starts or ends inside a word of `text` (ASCII here).
bool whole_words(const std::string& text, const std::vector<EntitySpan>& spans) {
  const auto word = [&](size_t i) { return i < text.size() && std::isalnum(static_cast<unsigned char>(text[i])); };
  for (const EntitySpan& s : spans)
    if ((s.begin > 0 && word(s.begin - 1) && word(s.begin)) || (word(s.end - 1) && word(s.end))) return false;
  return true;
}

TEST(EntityAggregation, WordByWordWhereTheModelSaysSo) {
  test::TempDir dir;
  const fs::path fixture = test::data_dir() / "modernbert_tokcls";
  EXPECT_EQ(TokenClassifier::load(fixture, fixture_options())->task().head.entity_aggregation(),
            EntityAggregation::kToken);
  TaskOptions tiny = fixture_options();  // the fixture's 256 ids, read from text
  tiny.tokenizer = test::data_dir() / "tokenizers/tiny256/tokenizer.json";
  const auto words = TokenClassifier::load(
      test::copy_with_json_key(fixture, dir / "word", "config.json", "semroute_entity_aggregation", "word"), tiny);
  EXPECT_EQ(words->task().head.entity_aggregation(), EntityAggregation::kWord);
  // A random little model: the labels of a word's pieces disagree, so its
  // spans token by token cut words; word by word they never do.
  const std::string text = "Maxwell Szegedy wrote to Kovacic about Tamworth and Szczebrzeszyn yesterday";
  EXPECT_FALSE(whole_words(text, TokenClassifier::load(fixture, tiny)->classify({text}).front().entities));
  const auto spans = words->classify({text}).front().entities;
  EXPECT_FALSE(spans.empty());
  EXPECT_TRUE(whole_words(text, spans));
  for (const nlohmann::json& bad : {nlohmann::json("sentence"), nlohmann::json(1)}) {
    const fs::path out =
        test::copy_with_json_key(fixture, dir / ("bad" + bad.dump()), "config.json", "semroute_entity_aggregation", bad);
    test::expect_error([&] { TokenClassifier::load(out, fixture_options()); }, ErrorCode::kInvalidModel,
                       "semroute_entity_aggregation");
  }
  // An adapter's task file says it for the adapter's head, and its merged model keeps it.
  const fs::path base = test::data_dir() / "multitask_lora";
  TaskOptions with_adapter = fixture_options();
  with_adapter.adapter = test::copy_with_json_key(base / "pii", dir / "pii", "task_config.json",
                                                  "semroute_entity_aggregation", "word");
  EXPECT_EQ(TokenClassifier::load(base / "base", with_adapter)->task().head.entity_aggregation(), EntityAggregation::kWord);
  merge_adapter(base / "base", with_adapter.adapter, dir / "merged");
  EXPECT_EQ(TokenClassifier::load(dir / "merged", fixture_options())->task().head.entity_aggregation(),
            EntityAggregation::kWord);
}

}  // namespace
}  // namespace semroute
