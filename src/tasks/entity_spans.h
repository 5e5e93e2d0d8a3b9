// Turning per-token labels into entity spans (PII: EMAIL, PERSON, …).
//
// Rules (BIO / IOB2, with BIOES and plain labels accepted):
//   - "O" (or any label the caller marks as outside) ends the current span;
//   - "B-X" (and "S-X") always starts a new span of type X;
//   - "I-X" (and "E-X") continues the current span if it has type X; a stray
//     "I-X" (after O, at the start, or after another type) starts a new span;
//   - a label without prefix ("EMAIL") behaves like "I-EMAIL": consecutive
//     tokens with the same plain label form one span;
//   - special and padding tokens are skipped and end the current span;
//   - a byte-level token that starts inside a UTF-8 character (the tail of a
//     character split across tokens) follows the token before it: it extends
//     the open span, or stays outside, whatever its own label, so spans never
//     overlap or split a character;
//   - word by word (EntityAggregation::kWord, for models trained with one
//     label per word), every token that continues a word
//     (Encoding::continues_word) follows the token before it the same way:
//     a word takes its first token's label, so "Sz"+"eg"+"edy" is never cut
//     into three spans of different types.
// A span's byte range runs from its first token's start to its last token's
// end, widened to whole UTF-8 characters and trimmed of surrounding
// whitespace; its score is the mean of the label probabilities of the tokens
// that decided it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/model_config.h"
#include "tokenizers/tokenizer.h"

namespace semroute {

struct TokenLabel {
  int64_t label_id;
  float probability;
};

struct EntitySpan {
  std::string type;  // "EMAIL" for B-EMAIL / I-EMAIL
  size_t begin = 0;  // byte offsets into the original text
  size_t end = 0;
  std::string text;
  float score = 0;
};

std::vector<EntitySpan> aggregate_entities(std::string_view text, const Encoding& encoding,
                                           const std::vector<TokenLabel>& tokens,
                                           const std::vector<std::string>& labels,
                                           EntityAggregation aggregation = EntityAggregation::kToken);

}  // namespace semroute
