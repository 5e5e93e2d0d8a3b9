// tokenizer.json pre-tokenizers: ByteLevel, Split, BertPreTokenizer,
// Whitespace, WhitespaceSplit, Metaspace, Digits, Punctuation, Sequence.
// A pre-tokenizer splits pieces of text into smaller pieces (the "words" the
// model sees), keeping their alignment to the original input.
#pragma once

#include <array>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "tokenizers/aligned_text.h"

namespace semroute {

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Replaces every piece by its sub-pieces (empty pieces are dropped).
  virtual void split(std::vector<AlignedText>& pieces) const = 0;
};

std::unique_ptr<PreTokenizer> make_pre_tokenizer(const nlohmann::json& spec);

// GPT-2's byte-to-unicode table: byte b is written as the code point
// byte_to_unicode()[b] in byte-level vocabularies.
const std::array<char32_t, 256>& byte_to_unicode();

}  // namespace semroute
