// The backend factory: selection from config.json and clear load errors.
#include <gtest/gtest.h>

#include <filesystem>

#include "models/model_factory.h"
#include "test_util.h"

namespace semroute {
namespace {

namespace fs = std::filesystem;

TEST(ModelFactory, PicksTheBackendFromModelTypeThenArchitectures) {
  EXPECT_EQ(find_backend(ConfigReader({{"model_type", "bert"}}, "c"))->name, "bert");
  // No guessing from "architectures": transformers needs model_type too.
  EXPECT_EQ(find_backend(ConfigReader({{"architectures", {"BertForTokenClassification"}}}, "c")), nullptr);
  EXPECT_EQ(find_backend(ConfigReader({{"model_type", "llama"}, {"architectures", {"BertModel"}}}, "c")), nullptr);
}

TEST(ModelFactory, ExplainsWhatIsWrongWithADirectory) {
  test::TempDir dir;
  test::expect_error([&] { load_core_model(dir / "absent"); }, ErrorCode::kNotFound, "not a model directory");
  test::expect_error([&] { load_core_model(dir.path()); }, ErrorCode::kNotFound, "no config.json");

  fs::copy_file(test::data_dir() / "bert_embedding" / "config.json", dir / "config.json");
  test::expect_error([&] { load_core_model(dir.path()); }, ErrorCode::kNotFound, "no model.safetensors");

  test::write_file(dir / "model.safetensors", test::safetensors_f32({{"embeddings.word_embeddings.weight", {1}, {0}}}));
  test::expect_error([&] { load_core_model(dir.path()); }, ErrorCode::kInvalidModel,
                     "tensor 'embeddings.word_embeddings.weight' has shape [1], expected [256, 64]");
  test::expect_error([&] { load_core_model(dir.path()); }, ErrorCode::kInvalidModel,
                     "missing tensor 'encoder.layer.3.output.LayerNorm.bias'");

  test::write_file(dir / "config.json", R"({"model_type": "llama"})");
  test::expect_error([&] { load_core_model(dir.path()); }, ErrorCode::kUnsupported, "'llama' is not supported");
  test::write_file(dir / "config.json", R"({"model_type": "bert", "hidden_size": "big"})");
  test::expect_error([&] { load_core_model(dir.path()); }, ErrorCode::kInvalidModel, "\"hidden_size\" must be an integer");
}

}  // namespace
}  // namespace semroute
