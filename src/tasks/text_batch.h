// Texts (or text pairs) tokenized into one right-padded batch of model inputs,
// keeping the encodings for their offsets.
#pragma once

#include <algorithm>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

#include "models/core_model.h"
#include "tokenizers/tokenizer.h"

namespace semroute {

struct TextBatch {
  std::vector<Encoding> encodings;
  ModelInputs inputs;
};

using TextPair = std::pair<std::string_view, std::string_view>;

// "start" (keep the start), "end" or "both"; InvalidInput otherwise.
Keep parse_truncation(const std::string& name);

// What a pipeline does with its inputs: the longest in tokens (special
// tokens included; 0 = the model's limit), what a longer one gets (cut as
// `truncation` says, or refused), and whether a cut text is still counted
// to its end (Encoding::input_tokens).
struct InputPolicy {
  size_t max_length = 0;
  Keep truncation = Keep::kStart;
  Overflow overflow = Overflow::kTruncate;
  bool count_input_tokens = false;
};

// Encoding options for `model`: a max_length larger than the model's limit
// is refused (InvalidInput).
EncodeOptions encode_options_for(const CoreModel& model, const InputPolicy& policy);

// What one input was, for the caller's accounting: tokens in (special tokens
// included; 0 when a truncated text was not counted to its end), tokens the
// model read, and whether the input was cut.
struct InputUsage {
  size_t input_tokens = 0;
  size_t processed_tokens = 0;
  bool truncated = false;
};
InputUsage usage_of(const Encoding& encoding);

// Throws InvalidInput for an empty batch.
TextBatch make_text_batch(const Tokenizer& tokenizer, const std::vector<std::string_view>& texts,
                          const EncodeOptions& options, c10::Device device);
// Right-pads already encoded texts into one batch.
TextBatch batch_from_encodings(std::vector<Encoding> encodings, const Tokenizer& tokenizer, c10::Device device);
TextBatch make_pair_batch(const Tokenizer& tokenizer, const std::vector<TextPair>& pairs,
                          const EncodeOptions& options, c10::Device device);

// The most padded tokens (texts x longest) one forward takes: a longer list
// runs as consecutive batches, so that memory follows this budget and not
// the list (one batch of 4,000 texts of 4 KB once held 6.8 GB). The backends
// compute on unpadded tokens, so splitting costs no arithmetic.
inline constexpr int64_t kBatchTokenBudget = 16384;

// Windows over a document longer than a model reads at once.
struct TokenRange {
  size_t begin = 0;  // content tokens (special tokens excluded), [begin, end)
  size_t end = 0;
};
// Windows of `size` tokens, the template's `specials` included (so size -
// specials of text each), consecutive ones sharing `overlap` text tokens,
// over a document of `content` text tokens: the first starts at 0, the last
// ends at `content` (one empty window for an empty document). InvalidInput
// when a window holds no text or the overlap is not smaller than its text.
std::vector<TokenRange> plan_windows(size_t content, size_t specials, size_t size, size_t overlap);
// Tokens [begin, end) of an encoding (its accounting reset).
Encoding slice(const Encoding& encoding, TokenRange range);

// Which window labels each text token of a document read in windows: the
// one where the token has the most context (the larger its distance to the
// nearer edge of the window; the earlier window on a tie).
class MostContext {
 public:
  explicit MostContext(size_t tokens) : context_(tokens, -1) {}
  // take(token, i) for each text token of `encoding`, the document's window
  // `range` (i: its position in the encoding), that this window gives more
  // context than the windows offered before.
  template <class Take>
  void offer(const Encoding& encoding, TokenRange range, Take&& take) {
    const auto width = static_cast<int64_t>(range.end - range.begin);
    int64_t k = 0;  // the window's text token
    for (size_t i = 0; i < encoding.size(); ++i) {
      if (encoding.special_tokens_mask[i] || !encoding.attention_mask[i]) continue;
      const int64_t margin = std::min(k, width - 1 - k);
      const size_t token = range.begin + static_cast<size_t>(k++);
      if (margin <= context_[token]) continue;
      context_[token] = margin;
      take(token, i);
    }
  }

 private:
  std::vector<int64_t> context_;
};

// A document longer than a model reads at once, taken window by window.
struct WindowOptions {
  size_t size = 0;                 // tokens per window, special tokens included; 0 = the model's max_length
  size_t overlap = 0;              // text tokens shared by consecutive windows
  size_t max_document_tokens = 0;  // a longer document is refused (TOO_LONG), never cut; 0 = no limit
};
// Encodes items [first, last) of a list.
using EncodeRange = std::function<std::vector<Encoding>(size_t first, size_t last)>;

// A document tokenized once (without special tokens) and its windows.
struct WindowedDocument {
  Encoding text;
  std::vector<TokenRange> windows;
  // Window i as the model reads it: its tokens with the template's special tokens.
  Encoding window(const Tokenizer& tokenizer, size_t i) const;
  // Windows [first, last) so, for for_each_budgeted_batch (this document must outlive it).
  EncodeRange encoder(const Tokenizer& tokenizer) const;
};
// InvalidInput (kTooLong) for a window longer than `max_length` or a document
// over options.max_document_tokens.
WindowedDocument plan_document(const Tokenizer& tokenizer, std::string_view document, const WindowOptions& options,
                               size_t max_length);

// Runs `run(batch, first)` over consecutive batches of `count` items, in
// order, each within `budget` padded tokens (an item longer than the budget
// runs alone). Items are encoded a group at a time, as the batches need them.
void for_each_budgeted_batch(size_t count, const EncodeRange& encode, const Tokenizer& tokenizer, c10::Device device,
                             const std::function<void(const TextBatch& batch, size_t first)>& run,
                             int64_t budget = kBatchTokenBudget);

}  // namespace semroute
