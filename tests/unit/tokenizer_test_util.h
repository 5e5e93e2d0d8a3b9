// The four real tokenizers the parity and behaviour tests run on.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "test_util.h"
#include "tokenizers/tokenizer.h"

namespace semroute::test {

struct NamedTokenizer {
  std::string name;
  std::filesystem::path file;
};

inline std::vector<NamedTokenizer> real_tokenizers() {
  return {
      {"modernbert", data_dir() / "tokenizers/modernbert/tokenizer.json"},
      {"bert", data_dir() / "tokenizers/bert/tokenizer.json"},
      {"qwen3", data_dir() / "external/qwen3/tokenizer.json"},
      {"gemma3", data_dir() / "external/gemma3/tokenizer.json"},
  };
}

// Loaded once per process (the Gemma3 file alone is 33 MB).
std::shared_ptr<const Tokenizer> real_tokenizer(const std::string& name);

}  // namespace semroute::test
