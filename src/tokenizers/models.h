// Tokenization models: BPE (byte-level or with byte fallback), WordPiece and WordLevel.
// A model turns one pre-tokenized word into token ids with byte ranges
// inside that word. Models are immutable and safe to share between threads.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace semroute {

struct ModelToken {
  int32_t id;
  uint32_t begin;  // byte range inside the word
  uint32_t end;
};

class TokenizerModel {
 public:
  virtual ~TokenizerModel() = default;
  // Appends the tokens of `word` to `out`.
  virtual void tokenize(std::string_view word, std::vector<ModelToken>& out) const = 0;

  std::optional<int32_t> token_to_id(std::string_view token) const;
  // "" for ids outside the model's vocabulary.
  const std::string& id_to_token(int32_t id) const;
  size_t vocab_size() const { return id_to_token_.size(); }
  // Adds tokens defined outside the model (added_tokens) to the id <-> token maps.
  void register_token(int32_t id, const std::string& token);
  // Ids may leave gaps, but stay below 2 × the vocabulary + kIdSlack (an id
  // of 2^30 in a vocabulary of 300 would size the id table from the file).
  static constexpr size_t kIdSlack = 65536;

 protected:
  void load_vocab(const nlohmann::json& vocab);
  size_t longest_token_bytes() const { return longest_token_bytes_; }

  std::unordered_map<std::string, int32_t> token_to_id_;
  std::vector<std::string> id_to_token_;
  size_t longest_token_bytes_ = 0;
  size_t id_limit_ = kIdSlack;  // ids must stay below: 2 × the vocabulary + kIdSlack
};

// A token id from tokenizer.json: a non-negative integer that fits int32
// (1.5, -1 or 2^32 + 5 are LoadErrors naming `what`).
int32_t parse_token_id(const nlohmann::json& value, const std::string& what);

// Builds the model of a tokenizer.json "model" object.
std::unique_ptr<TokenizerModel> make_tokenizer_model(const nlohmann::json& spec);

}  // namespace semroute
