// Text -> token ids with byte offsets into the original text, and back.
// A Tokenizer is immutable after loading; every method is const and safe to
// call from any number of threads at once.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizers/aligned_text.h"

namespace semroute {

class PostProcessor;

enum class Side { kRight, kLeft };

// Which tokens survive truncation: the start of the text (drop the end), the
// end (drop the start), or both ends (drop the middle; the start gets the
// extra token when the budget is odd).
enum class Keep { kStart, kEnd, kStartAndEnd };

// What an input longer than max_length gets: truncated (see Keep), or
// refused (InvalidInput, kTooLong) so that nothing is answered on a part.
enum class Overflow { kTruncate, kReject };

struct Encoding {
  std::vector<int32_t> ids;
  std::vector<int32_t> type_ids;
  std::vector<std::string> tokens;
  // Byte range of each token in the text it came from ({0, 0} for added
  // special tokens); sequence_ids says which text (0 = first, 1 = second of a
  // pair, -1 = a special token).
  std::vector<Span> offsets;
  std::vector<int8_t> sequence_ids;
  std::vector<uint8_t> special_tokens_mask;
  std::vector<uint8_t> attention_mask;
  // The input's accounting: its length in tokens (special tokens included)
  // before truncation, and whether truncation cut it. input_tokens is 0 when
  // a long text was truncated without being read to its end (see
  // EncodeOptions::count_input_tokens).
  size_t input_tokens = 0;
  bool truncated = false;

  size_t size() const { return ids.size(); }
  void push(int32_t id, std::string token, Span offset, int8_t sequence, int32_t type_id, bool special);
  // Keeps `n` tokens (see Keep).
  void truncate(size_t n, Keep keep);
  // Pads to `length` with `pad_id` (on the left when `left`); mask 0 there.
  void pad(size_t length, int32_t pad_id, const std::string& pad_token, bool left);
  // True when token `i` goes on the word of the token before it: both of
  // `text` (the first sequence, as encoded), touching, and joined by word
  // characters (letters, marks, digits) or inside one UTF-8 character.
  // "Szegedy" as "Sz"+"eg"+"edy" is one word; "Lang," is two, and so are
  // "the" and "Ġcat" (a leading space starts a word).
  bool continues_word(std::string_view text, size_t i) const;
};

struct EncodeOptions {
  bool add_special_tokens = true;
  size_t max_length = 0;  // 0: no truncation. Counts special tokens.
  Keep truncation = Keep::kStart;
  Overflow overflow = Overflow::kTruncate;
  // Tokenize a text past max_length to its end, so that input_tokens counts
  // it whole; otherwise only the part that truncation keeps is read (a long
  // text costs what max_length costs).
  bool count_input_tokens = false;
};

// "truncate" or "reject"; InvalidInput otherwise.
Overflow parse_overflow(const std::string& name);

struct PaddingOptions {
  size_t length = 0;  // 0: pad to the longest encoding of the batch
  Side side = Side::kRight;
  size_t multiple_of = 0;
};

class Tokenizer {
 public:
  virtual ~Tokenizer();

  // Throws InvalidInput (kInvalidUtf8) for invalid UTF-8 and kTooLong above
  // the hard input limit (kMaxInputBytes).
  Encoding encode(std::string_view text, const EncodeOptions& options = {}) const;
  // A pair (NLI premise + hypothesis); truncation is longest-first.
  Encoding encode_pair(std::string_view first, std::string_view second, const EncodeOptions& options = {}) const;
  // Encodes every text (in parallel for large batches) and pads them to a
  // common length.
  std::vector<Encoding> encode_batch(const std::vector<std::string_view>& texts, const EncodeOptions& options = {},
                                     const PaddingOptions& padding = {}) const;

  // Special tokens the template adds to one text (or a pair).
  size_t special_tokens(bool pair = false) const;
  // `content` (tokens of one text, encoded without special tokens, e.g. a
  // window of a longer one) with the template's special tokens added; with
  // `second`, the pair template's.
  Encoding with_special_tokens(Encoding content, std::optional<Encoding> second = std::nullopt) const;

  virtual std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens = true) const = 0;
  virtual std::optional<int32_t> token_to_id(std::string_view token) const = 0;
  virtual std::string id_to_token(int32_t id) const = 0;
  virtual size_t vocab_size() const = 0;
  // The padding id: the file's padding settings, else a pad token it defines, else 0.
  int32_t pad_id() const { return pad_id_; }
  const std::string& pad_token() const { return pad_token_; }

  static constexpr size_t kMaxInputBytes = 64u << 20;

 protected:
  Tokenizer() = default;
  // Tokens of one text, without special tokens.
  virtual Encoding encode_text(std::string_view text) const = 0;
  std::shared_ptr<const PostProcessor> post_processor_;
  int32_t pad_id_ = 0;
  std::string pad_token_;

 private:
  // encode_text, tokenizing only as much of a long text as truncation keeps.
  // `complete` says whether the text was read to its end.
  Encoding encode_truncated(std::string_view text, const EncodeOptions& options, bool& complete) const;
  std::optional<Encoding> encode_window(std::string_view text, size_t need, bool at_start) const;
  Encoding finish(Encoding first, std::optional<Encoding> second, const EncodeOptions& options, bool complete) const;
};

// Loads `tokenizer.json` (a file, or a model directory holding one; a
// directory with only `tokenizer.model` uses SentencePiece).
std::shared_ptr<const Tokenizer> load_tokenizer(const std::filesystem::path& path);

}  // namespace semroute
