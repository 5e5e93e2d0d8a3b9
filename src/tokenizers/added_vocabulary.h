// Tokens declared in tokenizer.json's added_tokens ([CLS], <|endoftext|>, …),
// found in the text before the model runs: leftmost-longest matches, with
// the lstrip / rstrip / single_word rules. Tokens with normalized=false are
// matched in the raw text, the others in the normalized text.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tokenizers/aligned_text.h"

namespace semroute {

struct AddedToken {
  int32_t id = 0;
  std::string content;
  bool single_word = false, lstrip = false, rstrip = false, normalized = false, special = false;
};

// A piece of text: either an added token (id >= 0) or text for the pipeline.
struct TextSegment {
  int32_t added_id = -1;
  size_t begin = 0, end = 0;  // bytes of the text that was split
};

class AddedVocabulary {
 public:
  explicit AddedVocabulary(const nlohmann::json& added_tokens);

  const std::vector<AddedToken>& tokens() const { return tokens_; }
  bool is_special(int32_t id) const;
  // Splits `text` at the added tokens of the given kind (normalized or not).
  std::vector<TextSegment> split(std::string_view text, bool normalized) const;

 private:
  struct Trie {
    struct Node {
      std::vector<std::pair<unsigned char, int>> children;  // sorted by byte
      int token = -1;                                       // index in tokens_
    };
    std::vector<Node> nodes{Node{}};
    bool first_byte[256] = {};
    void insert(const std::string& s, int token);
    int child(int node, unsigned char c) const;
  };
  // Longest token matching at `pos`, as an index into tokens_ (-1 if none).
  int longest_at(const Trie& trie, std::string_view text, size_t pos, size_t* end) const;

  std::vector<AddedToken> tokens_;
  Trie raw_, normalized_;
  std::vector<int32_t> special_ids_;  // sorted
};

}  // namespace semroute
