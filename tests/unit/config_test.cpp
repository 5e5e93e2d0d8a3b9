// config.json parsing: typed configs with Hugging Face defaults, strict types,
// labels, layer kinds and RoPE forms.
#include <gtest/gtest.h>

#include "core/model_config.h"
#include "models/configs.h"
#include "test_util.h"

namespace semroute {
namespace {

using nlohmann::json;
using test::expect_error;

ConfigReader reader(const json& j) { return ConfigReader(j, "config.json"); }

TEST(ModelConfig, ReadsFixtureConfigs) {
  const auto c = ModelConfig::parse(read_model_config(test::data_dir() / "modernbert_seqcls_cls"));
  EXPECT_EQ(c.model_type, "modernbert");
  EXPECT_EQ(c.architecture(), "ModernBertForSequenceClassification");
  EXPECT_EQ(c.hidden_size, 64);
  EXPECT_EQ(c.id2label, (std::vector<std::string>{"neg", "neu", "pos"}));
  EXPECT_EQ(c.label2id.at("pos"), 2);
  EXPECT_EQ(c.label_id("neu"), 1);
  EXPECT_EQ(c.pad_token_id, 0);
  expect_error([&] { c.label_id("happy"); }, ErrorCode::kNotFound, "known: neg, neu, pos");
}

TEST(ModelConfig, DefaultsToTwoLabelsLikeHuggingFace) {
  const auto c = ModelConfig::parse(reader({{"model_type", "bert"}}));
  EXPECT_EQ(c.id2label, (std::vector<std::string>{"LABEL_0", "LABEL_1"}));
  EXPECT_EQ(ModelConfig::parse(reader({{"num_labels", 3}})).num_labels(), 3u);
}

TEST(ModelConfig, RejectsWrongTypes) {
  expect_error([] { ModelConfig::parse(reader({{"hidden_size", "768"}})); }, ErrorCode::kInvalidModel,
               "\"hidden_size\" must be an integer");
  expect_error([] { ModelConfig::parse(reader({{"hidden_size", 7.5}})); }, ErrorCode::kInvalidModel, "an integer");
  expect_error([] { ModelConfig::parse(reader({{"architectures", "Bert"}})); }, ErrorCode::kInvalidModel,
               "list of strings");
  expect_error([] { ModelConfig::parse(reader({{"id2label", {{"zero", "a"}}}})); }, ErrorCode::kInvalidModel,
               "not a non-negative integer");
  expect_error([] { ModelConfig::parse(reader({{"id2label", {{"0", "a"}, {"2", "c"}}}})); }, ErrorCode::kInvalidModel,
               "missing 1");
  expect_error([] { ModelConfig::parse(reader({{"id2label", {{"0", 5}}}})); }, ErrorCode::kInvalidModel,
               "must be a string");
  expect_error([] { reader(json::array()); }, ErrorCode::kInvalidModel, "expected a JSON object");
}

TEST(ModelConfig, ToleratesExtraKeysNullsAndIntegralFloats) {
  const auto c = ModelConfig::parse(
      reader({{"hidden_size", 768.0}, {"pad_token_id", nullptr}, {"eos_token_id", {7, 8}}, {"whatever", {1, 2}}}));
  EXPECT_EQ(c.hidden_size, 768);
  EXPECT_FALSE(c.pad_token_id.has_value());
  EXPECT_EQ(c.eos_token_id, 7);
}

TEST(ModelConfig, ReportsMissingAndMalformedFiles) {
  test::TempDir dir;
  expect_error([&] { read_model_config(dir.path()); }, ErrorCode::kNotFound, "no config.json");
  test::write_file(dir / "config.json", "{\"a\":");
  expect_error([&] { read_model_config(dir.path()); }, ErrorCode::kInvalidModel, "not valid JSON");
}

TEST(ModernBertConfig, MatchesTheFixtureAndHfDefaults) {
  const auto c = ModernBertConfig::parse(read_model_config(test::data_dir() / "modernbert_base"));
  EXPECT_EQ(c.layer_types, (std::vector<std::string>{kFullAttention, kSlidingAttention, kSlidingAttention, kFullAttention}));
  EXPECT_EQ(c.local_attention, 8);
  EXPECT_DOUBLE_EQ(c.global_rope.theta, 160000.0);
  EXPECT_DOUBLE_EQ(c.local_rope.theta, 10000.0);
  EXPECT_EQ(c.head_dim(), 16);

  const auto d = ModernBertConfig::parse(reader({{"model_type", "modernbert"}}));
  EXPECT_EQ(d.base.hidden_size, 768);
  EXPECT_EQ(d.base.num_hidden_layers, 22);
  EXPECT_EQ(d.base.vocab_size, 50368);
  EXPECT_EQ(d.base.max_position_embeddings, 8192);
  EXPECT_EQ(d.base.pad_token_id, 50283);
  EXPECT_EQ(d.local_attention, 128);
  EXPECT_EQ(d.classifier_pooling, "cls");
  EXPECT_TRUE(d.is_global(0) && d.is_global(3) && d.is_global(21) && !d.is_global(1));
  expect_error([] { ModernBertConfig::parse(reader({{"classifier_pooling", "max"}})); }, ErrorCode::kInvalidModel,
               "classifier_pooling");
}

TEST(ModernBertConfig, ReadsNestedRopeParametersAndYarn) {
  const auto c = ModernBertConfig::parse(reader(
      {{"rope_parameters",
        {{"full_attention", {{"rope_type", "yarn"}, {"rope_theta", 160000.0}, {"factor", 4.0},
                             {"original_max_position_embeddings", 8192}}},
         {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 20000.0}}}}}}));
  EXPECT_EQ(c.global_rope.scaling.type, "yarn");
  EXPECT_DOUBLE_EQ(c.global_rope.scaling.factor, 4.0);
  EXPECT_EQ(c.global_rope.scaling.original_max_position_embeddings, 8192);
  EXPECT_DOUBLE_EQ(c.global_rope.scaling.beta_fast, 32.0);
  EXPECT_DOUBLE_EQ(c.local_rope.theta, 20000.0);
  EXPECT_EQ(c.local_rope.scaling.type, "default");

  // The legacy rope_scaling block applies to both layer kinds.
  const auto legacy = ModernBertConfig::parse(reader({{"rope_scaling", {{"type", "yarn"}, {"factor", 2.0}}}}));
  EXPECT_EQ(legacy.global_rope.scaling.type, "yarn");
  EXPECT_EQ(legacy.local_rope.scaling.type, "yarn");
}

TEST(Qwen3Config, MatchesTheFixtureAndHfDefaults) {
  const auto c = Qwen3Config::parse(read_model_config(test::data_dir() / "qwen3_embedding"));
  EXPECT_EQ(c.num_key_value_heads, 2);
  EXPECT_EQ(c.head_dim, 24);
  EXPECT_FALSE(c.sliding_window.has_value());
  EXPECT_EQ(c.layer_types.size(), 4u);

  const auto d = Qwen3Config::parse(reader({{"num_attention_heads", 16}, {"use_sliding_window", true},
                                            {"sliding_window", 64}, {"max_window_layers", 2}, {"num_hidden_layers", 4}}));
  EXPECT_EQ(d.num_key_value_heads, 16);  // defaults to the query heads
  EXPECT_EQ(d.sliding_window, 64);
  EXPECT_EQ(d.layer_types, (std::vector<std::string>{kFullAttention, kFullAttention, kSlidingAttention, kSlidingAttention}));
  expect_error([] { Qwen3Config::parse(reader({{"num_attention_heads", 16}, {"num_key_value_heads", 3}})); },
               ErrorCode::kInvalidModel, "not a multiple of num_key_value_heads");
}

TEST(Gemma3TextConfig, AppliesTheBidirectionalWindowRule) {
  const auto c = Gemma3TextConfig::parse(read_model_config(test::data_dir() / "embeddinggemma"));
  EXPECT_TRUE(c.use_bidirectional_attention);
  EXPECT_EQ(c.sliding_window, 5);  // 8 // 2 + 1: attend iff |q-k| < 5
  EXPECT_DOUBLE_EQ(c.query_pre_attn_scalar, 20);
  EXPECT_EQ(c.layer_types[0], kSlidingAttention);
  EXPECT_EQ(c.layer_types[1], kFullAttention);

  const auto real = Gemma3TextConfig::parse(reader({{"sliding_window", 512}, {"use_bidirectional_attention", true},
                                                   {"num_hidden_layers", 24}}));
  EXPECT_EQ(real.sliding_window, 257);
  EXPECT_EQ(real.layer_types[5], kFullAttention);  // 5 sliding : 1 full
  EXPECT_EQ(real.layer_types[4], kSlidingAttention);
  expect_error([] { Gemma3TextConfig::parse(reader({{"num_hidden_layers", 2}, {"layer_types", {"full_attention"}}})); },
               ErrorCode::kInvalidModel, "layer_types has 1 entries for 2 layers");
}

TEST(BertConfig, MatchesTheFixtureAndHfDefaults) {
  const auto c = BertConfig::parse(read_model_config(test::data_dir() / "bert_seqcls"));
  EXPECT_EQ(c.base.num_labels(), 3u);
  const auto d = BertConfig::parse(reader(json::object()));
  EXPECT_EQ(d.base.vocab_size, 30522);
  EXPECT_DOUBLE_EQ(d.layer_norm_eps, 1e-12);
  EXPECT_EQ(d.type_vocab_size, 2);
  expect_error([] { BertConfig::parse(reader({{"position_embedding_type", "relative_key"}})); },
               ErrorCode::kUnsupported, "relative_key");
}

}  // namespace
}  // namespace semroute
