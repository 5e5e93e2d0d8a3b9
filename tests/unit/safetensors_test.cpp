// The safetensors parser and the Checkpoint on top of it: real fixture files
// load exactly; every malformed file is refused with a clear message.
#include <ATen/ops/allclose.h>
#include <ATen/ops/tensor.h>
#include <gtest/gtest.h>

#include "core/checkpoint.h"
#include "core/safetensors.h"
#include "test_util.h"

namespace semroute {
namespace {

using test::expect_error;
using test::safetensors_image;

void expect_invalid(const std::string& header, const std::string& data, const std::string& needle) {
  const std::string image = safetensors_image(header, data);
  expect_error([&] { parse_safetensors(reinterpret_cast<const uint8_t*>(image.data()), image.size(), "x.safetensors"); },
               ErrorCode::kInvalidModel, needle);
}

const std::string k8 = std::string(8, '\0');

TEST(Safetensors, ParsesAValidImage) {
  const std::string image = safetensors_image(
      R"({"__metadata__":{"format":"pt"},"b":{"dtype":"BF16","shape":[2],"data_offsets":[8,12]},)"
      R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
      std::string(12, '\0'));
  const auto h = parse_safetensors(reinterpret_cast<const uint8_t*>(image.data()), image.size(), "x");
  ASSERT_EQ(h.tensors.size(), 2u);
  EXPECT_EQ(h.tensors[0].name, "a");  // sorted by offset
  EXPECT_EQ(h.tensors[1].dtype, DType::kBF16);
  EXPECT_EQ(h.metadata.at("format"), "pt");
}

TEST(Safetensors, AcceptsEmptyAndScalarTensors) {
  const std::string image = safetensors_image(
      R"({"e":{"dtype":"F32","shape":[0,3],"data_offsets":[0,0]},"s":{"dtype":"I64","shape":[],"data_offsets":[0,8]}})",
      k8);
  const auto h = parse_safetensors(reinterpret_cast<const uint8_t*>(image.data()), image.size(), "x");
  EXPECT_EQ(h.tensors.size(), 2u);
}

TEST(Safetensors, RejectsTruncatedFiles) {
  const std::string tiny = "abc";
  expect_error([&] { parse_safetensors(reinterpret_cast<const uint8_t*>(tiny.data()), tiny.size(), "t.st"); },
               ErrorCode::kInvalidModel, "shorter than the 8-byte header length");
  const std::string full =
      safetensors_image(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", std::string(16, '\0'));
  const std::string cut = full.substr(0, full.size() - 4);
  expect_error([&] { parse_safetensors(reinterpret_cast<const uint8_t*>(cut.data()), cut.size(), "t.st"); },
               ErrorCode::kInvalidModel, "beyond the data buffer");
}

TEST(Safetensors, RejectsHeaderLengthBeyondFile) {
  std::string image = safetensors_image("{}", "");
  image[0] = static_cast<char>(0xff);
  expect_error([&] { parse_safetensors(reinterpret_cast<const uint8_t*>(image.data()), image.size(), "h.st"); },
               ErrorCode::kInvalidModel, "larger than the file");
  std::string huge(8, static_cast<char>(0xff));
  expect_error([&] { parse_safetensors(reinterpret_cast<const uint8_t*>(huge.data()), huge.size(), "h.st"); },
               ErrorCode::kInvalidModel, "exceeds the limit");
}

TEST(Safetensors, RejectsBadJson) {
  expect_invalid("{not json", "", "not valid JSON");
  expect_invalid("[1,2]", "", "does not start with '{'");
  expect_invalid(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                 k8, "duplicate key 'a'");
  expect_invalid("{\"a\":\"\xff\xfe\"}", "", "not valid JSON");
  expect_invalid(R"({"a":5})", "", "tensor 'a' is not an object");
}

TEST(Safetensors, RejectsUnknownDtypeAndBadFields) {
  expect_invalid(R"({"a":{"dtype":"F128","shape":[1],"data_offsets":[0,16]}})", std::string(16, '\0'),
                 "unknown dtype 'F128'");
  expect_invalid(R"({"a":{"shape":[1],"data_offsets":[0,4]}})", "1234", "no dtype");
  expect_invalid(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", "1234", "non-negative integer");
  expect_invalid(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", "1234", "data_offsets");
  expect_invalid(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})", "1234", "end before begin");
  expect_invalid(R"({"__metadata__":{"k":1}})", "", "__metadata__ value 'k' is not a string");
}

TEST(Safetensors, RejectsShapeSizeMismatchAndOverflow) {
  expect_invalid(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", k8, "need 12");
  expect_invalid(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", k8, "overflow");
}

TEST(Safetensors, RejectsOffsetsOutOfRangeOverlapsGapsAndTrailingBytes) {
  expect_invalid(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", k8, "beyond the data buffer");
  expect_invalid(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                 std::string(12, '\0'), "overlaps");
  expect_invalid(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", k8, "gap");
  expect_invalid(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", k8, "trailing bytes");
}

TEST(Checkpoint, LoadsEveryFixtureTensor) {
  const auto cp = Checkpoint::open(test::data_dir() / "modernbert_base");
  EXPECT_EQ(cp.size(), 26u);
  for (const auto& name : cp.names()) {
    const at::Tensor t = cp.tensor(name);
    EXPECT_EQ(t.scalar_type(), c10::kFloat) << name;
    EXPECT_EQ(t.sizes().vec(), cp.find(name)->shape) << name;
  }
  EXPECT_EQ(cp.tensor("layers.0.attn.Wqkv.weight").sizes(), at::IntArrayRef({192, 64}));
  EXPECT_EQ(cp.tensor("layers.2.mlp.Wo.weight").sizes(), at::IntArrayRef({64, 96}));
  EXPECT_EQ(cp.find("layers.0.attn_norm.weight"), nullptr);  // layer 0 has no attn_norm
  // Spot values read independently from the file bytes.
  const at::Tensor emb = cp.tensor("embeddings.tok_embeddings.weight");
  EXPECT_FLOAT_EQ(emb[0][0].item<float>(), 0.3668263554573059f);
  EXPECT_FLOAT_EQ(emb[0][2].item<float>(), 0.019035402685403824f);
  EXPECT_FLOAT_EQ(cp.tensor("final_norm.weight")[1].item<float>(), 1.156987190246582f);
}

TEST(Checkpoint, ReadsEachTensorIntoMemoryOfItsOwn) {
  test::TempDir dir;
  test::write_file(dir / "model.safetensors", test::safetensors_f32({{"w", {2, 2}, {1, 2, 3, 4}}, {"b", {2}, {5, 6}}}));
  at::Tensor w;
  {
    const auto cp = Checkpoint::open(dir.path());
    w = cp.tensor("w");
    const at::Tensor again = cp.tensor("w");
    EXPECT_NE(w.data_ptr(), again.data_ptr());  // nothing shared: a model keeps only what it converted
  }
  EXPECT_TRUE(at::allclose(w, at::tensor({1.f, 2.f, 3.f, 4.f}).view({2, 2})));
}

TEST(Checkpoint, AFileThatShrinksDuringTheLoadIsAnErrorNotAFault) {
  test::TempDir dir;
  test::write_file(dir / "model.safetensors", test::safetensors_f32({{"w", {2, 2}, {1, 2, 3, 4}}, {"b", {2}, {5, 6}}}));
  const auto cp = Checkpoint::open(dir.path());
  EXPECT_FLOAT_EQ(cp.tensor("w")[1][1].item<float>(), 4.0f);
  std::filesystem::resize_file(dir / "model.safetensors", 60);
  expect_error([&] { cp.tensor("b"); }, ErrorCode::kInvalidModel, "shrank while it was being read");
}

TEST(Checkpoint, CopiesMisalignedTensors) {
  // Header padded so that the data buffer starts at an odd offset.
  const std::string data = std::string("\x00\x00\x80\x3f\x00\x00\x00\x40", 8);  // 1.0f, 2.0f
  const std::string header = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}} )";
  ASSERT_NE((8 + header.size()) % 4, 0u);
  test::TempDir dir;
  test::write_file(dir / "model.safetensors", safetensors_image(header, data));
  const auto cp = Checkpoint::open(dir.path());
  const at::Tensor w = cp.tensor("w");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(w.data_ptr()) % 4, 0u);
  EXPECT_FLOAT_EQ(w[1].item<float>(), 2.0f);
}

TEST(Checkpoint, ConvertsDtypesAndRefusesUnsupportedOnes) {
  // bf16 1.0 = 0x3f80, 2.0 = 0x4000 (little-endian)
  const std::string header = R"({"h":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]},"f8":{"dtype":"F8_E4M3","shape":[4],"data_offsets":[4,8]}})";
  test::TempDir dir;
  test::write_file(dir / "w.safetensors", safetensors_image(header, std::string("\x80\x3f\x00\x40\x00\x00\x00\x00", 8)));
  const auto cp = Checkpoint::open(dir / "w.safetensors");
  EXPECT_FLOAT_EQ(cp.tensor("h").to(c10::kFloat)[1].item<float>(), 2.0f);
  expect_error([&] { cp.tensor("f8"); }, ErrorCode::kUnsupported, "F8_E4M3");
  expect_error([&] { cp.tensor("nope"); }, ErrorCode::kNotFound, "'nope' not found");
}

TEST(Checkpoint, ReadsShardedCheckpoints) {
  test::TempDir dir;
  test::write_file(dir / "model-00001-of-00002.safetensors", test::safetensors_f32({{"a", {2}, {1, 2}}}));
  test::write_file(dir / "model-00002-of-00002.safetensors", test::safetensors_f32({{"b", {1}, {3}}}));
  test::write_file(dir / "model.safetensors.index.json",
                   R"({"metadata":{"total_size":12},"weight_map":{"a":"model-00001-of-00002.safetensors","b":"model-00002-of-00002.safetensors"}})");
  const auto cp = Checkpoint::open(dir.path());
  EXPECT_EQ(cp.size(), 2u);
  EXPECT_EQ(cp.files().size(), 2u);
  EXPECT_FLOAT_EQ(cp.tensor("b")[0].item<float>(), 3.0f);
}

TEST(Checkpoint, RejectsBadShardIndexes) {
  test::TempDir dir;
  test::write_file(dir / "s1.safetensors", test::safetensors_f32({{"a", {1}, {1}}}));
  test::write_file(dir / "s2.safetensors", test::safetensors_f32({{"a", {1}, {2}}}));
  const auto index = dir / "model.safetensors.index.json";

  test::write_file(index, R"({"weight_map":{"a":"../s1.safetensors"}})");
  expect_error([&] { Checkpoint::open(dir.path()); }, ErrorCode::kInvalidModel, "not a path inside the folder");
  test::write_file(index, R"({"weight_map":{"a":"s1.safetensors","b":"s1.safetensors"}})");
  expect_error([&] { Checkpoint::open(dir.path()); }, ErrorCode::kInvalidModel, "which does not contain it");
  test::write_file(index, R"({"weight_map":{"a":"s1.safetensors","x":"s2.safetensors"}})");
  expect_error([&] { Checkpoint::open(dir.path()); }, ErrorCode::kInvalidModel, "appears in both");
  test::write_file(index, R"({"weight_map":{"a":"missing.safetensors"}})");
  expect_error([&] { Checkpoint::open(dir.path()); }, ErrorCode::kNotFound, "missing.safetensors");
  test::write_file(index, R"({"nothing":1})");
  expect_error([&] { Checkpoint::open(dir.path()); }, ErrorCode::kInvalidModel, "weight_map");
}

TEST(Checkpoint, ExplainsMissingWeights) {
  test::TempDir dir;
  expect_error([&] { Checkpoint::open(dir.path()); }, ErrorCode::kNotFound, "no model.safetensors");
  test::write_file(dir / "pytorch_model.bin", "x");
  expect_error([&] { Checkpoint::open(dir.path()); }, ErrorCode::kNotFound, "convert it to safetensors");
  test::write_file(dir / "model.safetensors", "");
  expect_error([&] { Checkpoint::open(dir.path()); }, ErrorCode::kInvalidModel, "shorter than");
}

}  // namespace
}  // namespace semroute
