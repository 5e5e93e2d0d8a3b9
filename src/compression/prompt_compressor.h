// Prompt compression: a long prompt reduced to a "semantic skeleton" within a
// token budget, so that a routing decision does not wait for a forward pass
// over 200K tokens (the full request still goes to the LLM). Deterministic,
// no model. The funnel:
//
//  1. Structural pruning: the text is split into units (sentence_splitter.h);
//     the first units fill head_ratio of the budget and the last ones
//     tail_ratio (the unit at the edge is cut at a word), untouched.
//  2. Lexical filtering: in the units between, stop words are dropped (the
//     shipped list that best fits the text, or those named); a unit keeps
//     its runs of other words with the punctuation inside them.
//  3. Information scoring: each middle unit scores the self-information of
//     its distinct content words, -log2(count in the text / content words of
//     the text), summed and divided by (its content words + 2): dense units
//     of rare words (names, numbers, terms) score high, filler and repeated
//     boilerplate low. The best units fill the rest of the budget; what is
//     kept is put back in the text's order.
//
// The skeleton is the kept byte ranges joined by "\n" where the text between
// them held a newline, else by " " — so every kept byte maps back to the
// original. Its token count, with the tokenizer given (no special tokens),
// is checked on the skeleton itself and never exceeds the budget.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "compression/sentence_splitter.h"
#include "tokenizers/aligned_text.h"

namespace semroute {

class Tokenizer;
struct StopWordList;

struct CompressOptions {
  size_t max_tokens = 512;   // the budget
  double head_ratio = 0.2;   // of the budget, for the start of the text
  double tail_ratio = 0.2;   // and for its end
  bool drop_stop_words = true;
  std::vector<std::string> languages;  // stop-word lists to choose from; empty: all shipped
  size_t max_unit_bytes = 2048;        // longer units are cut (sentence_splitter.h)
};

struct CompressedText {
  std::string text;        // the skeleton; the whole text when it fits the budget
  std::vector<Span> kept;  // byte ranges of the original, in order
  bool compressed = false;
  size_t tokens = 0;       // of `text`, counted as the budget is
  std::string language;    // the stop-word list used; "" for none
  size_t units = 0;        // units of the original
  size_t units_kept = 0;   // units with a part in the skeleton
};

// `original` with `kept` joined as the skeleton is (see above).
std::string join_kept(std::string_view original, const std::vector<Span>& kept);

class PromptCompressor {
 public:
  // Without a tokenizer, tokens are counted as words, punctuation marks and
  // CJK characters (about what a BPE tokenizer gives English text, fewer
  // for rare words). InvalidInput for a zero budget, ratios outside [0, 1]
  // or summing above 1, an unknown language.
  explicit PromptCompressor(CompressOptions options, std::shared_ptr<const Tokenizer> tokenizer = nullptr);

  // InvalidInput (kInvalidUtf8) for invalid UTF-8, kTooLong above
  // Tokenizer::kMaxInputBytes. Thread-safe.
  CompressedText compress(std::string_view text) const;

  const CompressOptions& options() const { return options_; }
  const Tokenizer* tokenizer() const { return tokenizer_.get(); }

 private:
  CompressOptions options_;
  std::shared_ptr<const Tokenizer> tokenizer_;
  std::vector<const StopWordList*> languages_;
};

}  // namespace semroute
