// core/file_input and core/regex: the defences every loader relies on.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>

#include "core/file_input.h"
#include "core/regex.h"
#include "test_util.h"

namespace semroute::test {
namespace {

namespace fs = std::filesystem;

TEST(FileInput, RefusesWhatIsNotARegularFileWithoutBlocking) {
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  expect_error([&] { read_file(dir / "fifo"); }, ErrorCode::kInvalidModel, "not a regular file");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  expect_error([&] { read_file(dir.path()); }, ErrorCode::kInvalidModel, "not a regular file");
  expect_error([&] { read_file("/dev/zero"); }, ErrorCode::kInvalidModel, "not a regular file");
  expect_error([&] { read_file(dir / "missing"); }, ErrorCode::kNotFound, "cannot open");
  expect_error([&] { OpenFile((dir / "fifo").string()); }, ErrorCode::kInvalidModel, "not a regular file");
}

TEST(FileInput, ChecksTheSizeBeforeReading) {
  TempDir dir;
  write_file(dir / "big.json", std::string(2000, ' '));
  EXPECT_EQ(read_file(dir / "big.json", 2000).size(), 2000u);
  expect_error([&] { read_file(dir / "big.json", 1999); }, ErrorCode::kInvalidModel, "exceeds the limit of 1999");
}

TEST(FileInput, CapsJsonNesting) {
  const std::string ok = std::string(kMaxNestingDepth, '[') + std::string(kMaxNestingDepth, ']');
  EXPECT_NO_THROW(parse_json(ok, "ok"));
  const std::string deep = "[" + ok + "]";
  expect_error([&] { parse_json(deep, "deep.json"); }, ErrorCode::kInvalidModel, "deep.json: JSON nested deeper than 64");
  // Brackets inside strings (escaped quotes too) do not count.
  EXPECT_NO_THROW(parse_json(R"({"a": "[[[[\"[[[[)" + std::string(100, '[') + R"("})", "strings"));
  expect_error([&] { parse_json("{\"a\": ", "cut.json"); }, ErrorCode::kInvalidModel, "cut.json: not valid JSON");
}

TEST(FileInput, KeepsNamedFilesInsideTheFolder) {
  TempDir dir;
  fs::create_directories(dir / "model/sub");
  write_file(dir / "model/sub/config.json", "{}");
  write_file(dir / "secret.json", "{}");
  const fs::path model = dir / "model";
  EXPECT_EQ(file_in_dir(model, "sub/config.json"), model / "sub/config.json");
  for (const char* name : {"../secret.json", "/etc/passwd", "sub/../../secret.json", ""})
    expect_error([&] { file_in_dir(model, name); }, ErrorCode::kInvalidModel, "not a path inside the folder");
  fs::create_symlink("../secret.json", model / "link.json");
  expect_error([&] { file_in_dir(model, "link.json"); }, ErrorCode::kInvalidModel, "outside the folder");
  fs::create_symlink("sub/config.json", model / "inside.json");
  EXPECT_NO_THROW(file_in_dir(model, "inside.json"));
  // The Hugging Face cache: snapshots/<rev>/file -> ../../blobs/<hash>.
  const fs::path repo = dir / "models--org--name";
  fs::create_directories(repo / "snapshots/abc");
  fs::create_directories(repo / "blobs");
  write_file(repo / "blobs/0123", "{}");
  fs::create_symlink("../../blobs/0123", repo / "snapshots/abc/config.json");
  EXPECT_NO_THROW(file_in_dir(repo / "snapshots/abc", "config.json"));
}

TEST(Regex, StopsCatastrophicPatternsWithAClearError) {
  const Regex bomb("(a|aa)+$");
  const std::string text = std::string(5000, 'a') + "b";
  const auto start = std::chrono::steady_clock::now();
  expect_error([&] { bomb.for_each_match(text, [](size_t, size_t) {}); }, ErrorCode::kInvalidArgument,
               "regex matching stopped");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  expect_error([] { Regex(std::string(Regex::kMaxPatternBytes + 1, 'a')); }, ErrorCode::kInvalidModel, "exceeds the limit");
  expect_error([] { Regex(std::string(20000, '(') + "a" + std::string(20000, ')')); }, ErrorCode::kInvalidModel,
               "does not compile");
}

TEST(Regex, MatchesWholeNamesAndFindsGroups) {
  const Regex target("(.*\\.)?(q_proj|v_proj)");
  EXPECT_TRUE(target.matches_whole("model.layers.0.self_attn.q_proj"));
  EXPECT_FALSE(target.matches_whole("model.layers.0.self_attn.q_proj.lora"));
  EXPECT_EQ(Regex("^.*\\.layers\\.(\\d+)\\.").find_group("model.layers.12.attn", 1), "12");
  EXPECT_FALSE(Regex("x(\\d+)").find_group("abc", 1).has_value());
  EXPECT_FALSE(Regex("abc").find_group("abc", 1).has_value());  // no such group
}

}  // namespace
}  // namespace semroute::test
