// Cross-encoder pair scoring (reranking): the scores upstream's tests pin on
// its fixture (2·GELU(1) + 2 at the full exit, GELU(1) + 1 at a narrower
// one), a trained encoder's exits against the computation written out, the
// loader's refusals, and the C / C++ API with reranking.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/checkpoint.h"
#include "semroute/semroute.hpp"
#include "tasks/pair_scorer.h"
#include "tasks/pooling.h"
#include "test_util.h"

namespace semroute {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

void write_json(const fs::path& path, const json& j) { test::write_file(path, j.dump()); }

json contract() {
  return {{"version", 1}, {"pooling", "cls"}, {"intermediate_normalization", "final_norm"},
          {"final_normalization", "final_norm"}, {"head_dtype", "float32"}};
}

at::Tensor ones(std::vector<int64_t> shape) { return at::ones(shape); }

// Upstream's pair fixture: a 1-layer ModernBERT of width 4 with every weight
// 1 (names without "model."), a WordLevel tokenizer with a BERT pair
// template, and heads at (1, 4) and (1, 2) whose first layer is zero.
fs::path upstream_fixture(const test::TempDir& dir) {
  const fs::path out = dir / "pairs";
  fs::create_directories(out);
  write_json(out / "config.json",
             {{"model_type", "modernbert"}, {"architectures", {"ModernBertModel"}}, {"vocab_size", 8},
              {"hidden_size", 4}, {"num_hidden_layers", 1}, {"num_attention_heads", 1}, {"intermediate_size", 8},
              {"max_position_embeddings", 512}, {"pad_token_id", 0}, {"global_attn_every_n_layers", 1},
              {"global_rope_theta", 10000.0}, {"local_rope_theta", 10000.0}, {"local_attention", 16},
              {"representation_contract", contract()}});
  json vocab;
  const char* words[] = {"[PAD]", "[UNK]", "hello", "world", "safe", "unsafe", "é", "猫"};
  for (int i = 0; i < 8; ++i) vocab[words[i]] = i;
  write_json(out / "tokenizer.json",
             {{"pre_tokenizer", {{"type", "Whitespace"}}},
              {"post_processor", {{"type", "BertProcessing"}, {"sep", {"[PAD]", 0}}, {"cls", {"[UNK]", 1}}}},
              {"model", {{"type", "WordLevel"}, {"vocab", vocab}, {"unk_token", "[UNK]"}}}});
  write_json(out / "matryoshka_config.json", {{"layer_indices", {1}}, {"dim_indices", {2, 4}}, {"hidden_size", 4},
                                              {"num_layers", 1}, {"pooling", "cls"}, {"has_final_norm", true}});
  save_safetensors(out / "model.safetensors",
                   {{"embeddings.tok_embeddings.weight", ones({8, 4})}, {"embeddings.norm.weight", ones({4})},
                    {"final_norm.weight", ones({4})}, {"layers.0.attn.Wqkv.weight", ones({12, 4})},
                    {"layers.0.attn.Wo.weight", ones({4, 4})}, {"layers.0.mlp.Wi.weight", ones({16, 4})},
                    {"layers.0.mlp.Wo.weight", ones({4, 8})}, {"layers.0.mlp_norm.weight", ones({4})}});
  save_safetensors(out / "classification_heads.safetensors",
                   {{"1.4.0.weight", at::zeros({2, 4})}, {"1.4.0.bias", ones({2})}, {"1.4.3.weight", ones({1, 2})},
                    {"1.4.3.bias", at::full({1}, 2.0)}, {"1.2.0.weight", at::zeros({1, 2})},
                    {"1.2.0.bias", ones({1})}, {"1.2.3.weight", ones({1, 1})}, {"1.2.3.bias", ones({1})}});
  return out;
}

double gelu(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }

TEST(PairScorer, UpstreamFixtureScores) {
  test::TempDir dir;
  const fs::path fixture = upstream_fixture(dir);
  PairScorerOptions options;
  options.max_length = 7;
  options.overflow = Overflow::kReject;
  const auto full = PairScorer::load(fixture, options);
  EXPECT_EQ(full->layer(), 1);
  EXPECT_EQ(full->dimension(), 4);
  const auto scores = full->score({{"hello world", "safe unsafe"}});
  EXPECT_NEAR(scores[0].score, 2 * gelu(1) + 2, 1e-6);  // 3.682689492
  EXPECT_EQ(scores[0].input.input_tokens, 7u);
  EXPECT_EQ(scores[0].input.processed_tokens, 7u);
  EXPECT_FALSE(scores[0].input.truncated);
  test::expect_error([&] { full->score({{"hello world", "safe unsafe é"}}); }, ErrorCode::kTooLong, "");
  test::expect_error([&] { full->score({}); }, ErrorCode::kInvalidArgument, "no pairs");
  options.dimension = 2;
  EXPECT_NEAR(PairScorer::load(fixture, options)->score({{"hello", "world"}})[0].score, gelu(1) + 1, 1e-6);
  options.dimension = 3;
  test::expect_error([&] { PairScorer::load(fixture, options); }, ErrorCode::kInvalidModel,
                     "no head was trained for the exit at layer 1, dimension 3");
}

TEST(PairScorer, RefusesARepresentationItCannotReproduce) {
  test::TempDir dir;
  const fs::path fixture = upstream_fixture(dir);
  json config = json::parse(std::ifstream(fixture / "config.json"));
  config["representation_contract"]["final_normalization"] = "none";
  write_json(fixture / "config.json", config);
  test::expect_error([&] { PairScorer::load(fixture, {}); }, ErrorCode::kUnsupported, "final norm");
  config.erase("representation_contract");
  write_json(fixture / "config.json", config);
  test::expect_error([&] { PairScorer::load(fixture, {}); }, ErrorCode::kInvalidModel, "no representation_contract");
}

// A trained encoder (the default domain model's) with random heads at two exits:
// each score equals the head over the CLS state at that exit, written out.
TEST(PairScorer, EachExitReadsItsLayerAndWidth) {
  test::TempDir dir;
  const fs::path source = test::repo_dir() / "models" / "domain";
  const fs::path out = dir / "scorer";
  fs::create_directories(out);
  fs::copy_file(source / "model.safetensors", out / "model.safetensors");
  fs::copy_file(source / "tokenizer.json", out / "tokenizer.json");
  json config = json::parse(std::ifstream(source / "config.json"));
  config["representation_contract"] = contract();
  write_json(out / "config.json", config);
  const int64_t layers = config["num_hidden_layers"], hidden = config["hidden_size"];
  write_json(out / "matryoshka_config.json", {{"layer_indices", {1, layers}}, {"dim_indices", {8, hidden}}});
  at::manual_seed(3);
  std::vector<std::pair<std::string, at::Tensor>> heads;
  for (const auto& [layer, dim] : std::vector<std::pair<int64_t, int64_t>>{{1, 8}, {layers, hidden}}) {
    const std::string p = std::to_string(layer) + "." + std::to_string(dim) + ".";
    heads.emplace_back(p + "0.weight", at::randn({5, dim}));
    heads.emplace_back(p + "0.bias", at::randn({5}));
    heads.emplace_back(p + "3.weight", at::randn({1, 5}));
    heads.emplace_back(p + "3.bias", at::randn({1}));
  }
  save_safetensors(out / "classification_heads.safetensors", heads);
  const Checkpoint head_weights = Checkpoint::open_weights_in(out, "classification_heads");
  const std::vector<TextPair> pairs = {{"How do I reset my password?", "Open settings and choose reset."},
                                       {"Where is Lisbon?", "Lisbon is the capital of Portugal."}};
  for (const auto& [layer, dim] : std::vector<std::pair<int64_t, int64_t>>{{1, 8}, {layers, hidden}}) {
    PairScorerOptions options;
    options.layer = layer;
    options.dimension = dim;
    const auto scorer = PairScorer::load(out, options);
    const auto scores = scorer->score(pairs);
    const std::string p = std::to_string(layer) + "." + std::to_string(dim) + ".";
    for (size_t i = 0; i < pairs.size(); ++i) {
      const Encoding e = scorer->tokenizer().encode_pair(pairs[i].first, pairs[i].second, scorer->encode_options());
      ModelInputs in;
      in.input_ids = at::tensor(std::vector<int64_t>(e.ids.begin(), e.ids.end())).unsqueeze(0);
      in.attention_mask = at::ones_like(in.input_ids);
      ForwardOptions forward;
      forward.layers = layer;
      const at::Tensor cls = scorer->encoder()->forward(in, forward).select(1, 0).narrow(1, 0, dim);
      const at::Tensor h = at::gelu(at::addmm(head_weights.tensor(p + "0.bias"), cls, head_weights.tensor(p + "0.weight").t()));
      const double expected =
          at::addmm(head_weights.tensor(p + "3.bias"), h, head_weights.tensor(p + "3.weight").t()).item<double>();
      std::printf("    exit (%lld, %lld) pair %zu: %.6f, written out %.6f\n", static_cast<long long>(layer),
                  static_cast<long long>(dim), i, scores[i].score, expected);
      // Relative: raw logits reach ~40 at the deep exit, where fp32 rounding
      // of the batched and single forwards differs by ~1e-5 absolute.
      EXPECT_NEAR(scores[i].score, expected, 1e-5 * std::max(1.0, std::abs(expected)));
    }
  }
}

TEST(PairScorer, CApiScoresAndReranks) {
  test::TempDir dir;
  const fs::path fixture = upstream_fixture(dir);
  semroute_model_params params = semroute_model_default_params();
  params.task = SEMROUTE_TASK_PAIR_SCORING;
  const Model model = Model::load(fixture.string(), params);
  EXPECT_EQ(model.task(), SEMROUTE_TASK_PAIR_SCORING);
  const auto scores = model.score_pairs({"hello", "world"}, {"safe", "unsafe é"});
  ASSERT_EQ(scores.size(), 2u);
  EXPECT_NEAR(scores[0].score, 2 * gelu(1) + 2, 1e-6);
  EXPECT_EQ(scores[1].input.input_tokens, 6u);
  const auto best = model.rerank("hello", {"safe", "world", "猫"}, 2);
  ASSERT_EQ(best.size(), 2u);
  EXPECT_EQ(best[0].index, 0u);  // equal scores: lower index first
  EXPECT_EQ(best[1].index, 1u);
  EXPECT_TRUE(model.rerank("hello", {}, 3).empty());
  // Bad calls are statuses.
  const auto code_of = [](semroute_status* s) {
    const semroute_code code = semroute_status_code(s);
    semroute_status_free(s);
    return code;
  };
  const uint64_t offsets[2] = {0, 5};
  semroute_pair_scores* raw = nullptr;
  EXPECT_EQ(code_of(semroute_score_pairs(nullptr, "hello", offsets, "world", offsets, 1, &raw)),
            SEMROUTE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(code_of(semroute_score_pairs(model.get(), "hello", offsets, "world", nullptr, 1, &raw)),
            SEMROUTE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(code_of(semroute_score_pairs(model.get(), "hello", offsets, "world", offsets, 1, nullptr)),
            SEMROUTE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(code_of(semroute_score_pairs(model.get(), "hel\xff\xfe", offsets, "world", offsets, 1, &raw)),
            SEMROUTE_ERR_INVALID_UTF8);
  EXPECT_EQ(code_of(semroute_score_pairs(model.get(), nullptr, nullptr, nullptr, nullptr, 0, &raw)),
            SEMROUTE_ERR_INVALID_ARGUMENT);  // no pairs
  EXPECT_EQ(raw, nullptr);
  size_t found = 7;
  EXPECT_EQ(code_of(semroute_rerank(model.get(), "q", 1, "world", offsets, 1, 1, nullptr, nullptr, &found)),
            SEMROUTE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(found, 0u);
  semroute_model_params plain = semroute_model_default_params();
  plain.task = SEMROUTE_TASK_ENCODER;
  const Model encoder = Model::load(fixture.string(), plain);
  EXPECT_EQ(code_of(semroute_score_pairs(encoder.get(), "hello", offsets, "world", offsets, 1, &raw)),
            SEMROUTE_ERR_INVALID_ARGUMENT);  // not a pair scorer
  EXPECT_TRUE(std::isnan(semroute_pair_scores_score(nullptr, 0)));
  EXPECT_EQ(semroute_pair_scores_input(nullptr, 0), nullptr);
  try {
    model.classify("hello");
    FAIL() << "a pair scorer does not classify";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace semroute
