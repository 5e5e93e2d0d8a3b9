// Helpers shared by the unit tests: fixture paths, temporary directories and
// hand-made (possibly malformed) safetensors images.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "core/sanitized.h"
#include "semroute/error.h"

namespace semroute::test {

inline std::filesystem::path data_dir() { return SEMROUTE_TEST_DATA; }
// The source tree (models/, examples/).
inline std::filesystem::path repo_dir() { return data_dir().parent_path().parent_path(); }

// Sanitizer builds run several times slower and keep freed memory in
// quarantine: time and memory bounds are scaled or skipped there.
constexpr bool kSanitized = kSanitizedBuild;
constexpr double kSlowdown = kSanitized ? 10.0 : 1.0;

// Sets an environment variable (unsets it for "") for its lifetime, then
// puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  bool was_set_;
  std::string before_;
};

// A fresh directory removed at scope exit.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

void write_file(const std::filesystem::path& path, const std::string& bytes);

// 8-byte little-endian length + header text + data bytes.
std::string safetensors_image(const std::string& header, const std::string& data);

// A valid image holding float32 tensors; each entry is {name, shape, values}.
struct F32Tensor {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> values;
};
std::string safetensors_f32(const std::vector<F32Tensor>& tensors);

// Runs `fn`, expects a semroute::Error with `code` whose message contains `needle`.
template <typename Fn>
void expect_error(Fn&& fn, ErrorCode code, const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "expected an error containing '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(static_cast<int>(e.code()), static_cast<int>(code)) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << "message: " << e.what();
  }
}

// A copy of the model directory `source` at `out` whose JSON file `file`
// has `key` set to `value` (copied: the loader refuses links that leave
// their folder).
std::filesystem::path copy_with_json_key(const std::filesystem::path& source, const std::filesystem::path& out,
                                         const std::string& file, const std::string& key, const nlohmann::json& value);

// Tiny random ModernBERT checkpoints with the real tokenizer: dir/intent
// (sequence classifier: math, law, other) and dir/pii (token classifier:
// O, B-/I-EMAIL, B-/I-PERSON).
void write_intent_and_pii_models(const std::filesystem::path& dir);

// A copy of the model directory `source` at `out` whose JSON file `file`
// has `key` set to `value` (copied: the loader refuses links that leave
// their folder).
std::filesystem::path copy_with_json_key(const std::filesystem::path& source, const std::filesystem::path& out,
                                         const std::string& file, const std::string& key, const nlohmann::json& value);

// Tiny random ModernBERT checkpoints for hallucination detection, their heads
// steered by a classifier bias: dir/flags_all and dir/flags_none (token
// classifiers SUPPORTED / HALLUCINATED that flag every token or none),
// dir/random (unsteered), dir/nli_contradiction and dir/nli_entailment (NLI
// sequence classifiers entailment / neutral / contradiction, one label sure).
void write_hallucination_models(const std::filesystem::path& dir);

// A test suite over those two models, written once per suite: path("intent"), path("pii").
class IntentAndPiiModels : public ::testing::Test {
 protected:
  static void SetUpTestSuite();
  static void TearDownTestSuite();
  static std::string path(const char* name);

 private:
  static TempDir* dir_;
};

}  // namespace semroute::test
