#include "tokenizers/tokenizer.h"

#include <algorithm>
#include <fstream>

#include "core/file_input.h"
#include "core/parallel.h"
#include "semroute/error.h"
#include "tokenizers/hf_tokenizer.h"
#include "tokenizers/post_processors.h"
#include "tokenizers/sentencepiece_tokenizer.h"
#include "tokenizers/unicode.h"

namespace semroute {
namespace fs = std::filesystem;

void Encoding::push(int32_t id, std::string token, Span offset, int8_t sequence, int32_t type_id, bool special) {
  ids.push_back(id);
  tokens.push_back(std::move(token));
  offsets.push_back(offset);
  sequence_ids.push_back(sequence);
  type_ids.push_back(type_id);
  special_tokens_mask.push_back(special ? 1 : 0);
  attention_mask.push_back(1);
}

namespace {

template <typename T>
void keep(std::vector<T>& v, size_t n, Keep which) {
  if (v.size() <= n) return;
  switch (which) {
    case Keep::kStart: v.resize(n); break;
    case Keep::kEnd: v.erase(v.begin(), v.end() - static_cast<long>(n)); break;
    case Keep::kStartAndEnd: {
      const size_t head = (n + 1) / 2, tail = n - head;
      v.erase(v.begin() + static_cast<long>(head), v.end() - static_cast<long>(tail));
      break;
    }
  }
}

template <typename T>
void pad_vector(std::vector<T>& v, size_t length, const T& value, bool left) {
  if (v.size() >= length) return;
  v.insert(left ? v.begin() : v.end(), length - v.size(), value);
}

void check_text(std::string_view text) {
  if (text.size() > Tokenizer::kMaxInputBytes)
    throw InvalidInput("text of " + std::to_string(text.size()) + " bytes exceeds the tokenizer limit of " +
                           std::to_string(Tokenizer::kMaxInputBytes) + " bytes",
                       ErrorCode::kTooLong);
  const size_t bad = unicode::find_invalid_utf8(text);
  if (bad != std::string_view::npos)
    throw InvalidInput("text is not valid UTF-8 (first invalid byte at offset " + std::to_string(bad) + ")",
                       ErrorCode::kInvalidUtf8);
}

// Truncation without tokenizing the whole text. A long text is tokenized in a
// window at the kept end (cut at whitespace where there is some); tokens far
// enough from the cut are those of the whole text, so the window is accepted
// once `need` tokens lie at least a quarter of a window from the cut, and
// doubled otherwise. Memory follows the window, not the text.
constexpr size_t kMinWindowBytes = 16 * 1024, kWindowBytesPerToken = 32;

size_t first_window(size_t need) { return std::max(kMinWindowBytes, need * kWindowBytesPerToken); }

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

// A cut near `at` (moving toward `toward_start` ? the start : the end), on a
// character boundary, preferably just after whitespace.
size_t cut_near(std::string_view text, size_t at, size_t reach, bool toward_start) {
  for (size_t step = 0; step < reach; ++step) {
    const size_t i = toward_start ? at - step : at + step;
    if (i == 0 || i >= text.size()) break;
    if (is_space(text[i - 1]) && !is_space(text[i])) return i;
  }
  while (at < text.size() && unicode::is_continuation_byte(text[at])) ++at;
  return at;
}

void shift_offsets(Encoding& e, size_t by) {
  for (auto& span : e.offsets) {
    span.begin += static_cast<uint32_t>(by);
    span.end += static_cast<uint32_t>(by);
  }
}

}  // namespace

std::optional<Encoding> Tokenizer::encode_window(std::string_view text, size_t need, bool at_start) const {
  for (size_t window = first_window(need); window * 2 < text.size(); window *= 2) {
    const size_t guard = window / 4;
    if (at_start) {
      const size_t cut = cut_near(text, window, guard, true);
      Encoding e = encode_text(text.substr(0, cut));
      if (e.size() >= need && e.offsets[need - 1].end + guard <= cut) return e;
    } else {
      const size_t cut = cut_near(text, text.size() - window, guard, false);
      Encoding e = encode_text(text.substr(cut));
      shift_offsets(e, cut);
      if (e.size() >= need && e.offsets[e.size() - need].begin >= cut + guard) return e;
    }
  }
  return std::nullopt;  // no window short of the whole text holds `need` tokens
}

Encoding Tokenizer::encode_truncated(std::string_view text, const EncodeOptions& options, bool& complete) const {
  const size_t need = options.max_length;
  complete = true;
  if (need == 0 || options.count_input_tokens || text.size() <= 2 * first_window(need)) return encode_text(text);
  const bool keep_start = options.truncation != Keep::kEnd, keep_end = options.truncation != Keep::kStart;
  std::optional<Encoding> head = keep_start ? encode_window(text, need, true) : std::nullopt;
  std::optional<Encoding> tail = keep_end ? encode_window(text, need, false) : std::nullopt;
  if ((keep_start && !head) || (keep_end && !tail)) return encode_text(text);
  complete = false;
  if (!keep_end) return std::move(*head);
  if (!keep_start) return std::move(*tail);
  // Both ends: `finish` keeps the first half of the budget and the last half.
  head->truncate((need + 1) / 2, Keep::kStart);
  for (size_t i = tail->size() - std::min(tail->size(), need / 2); i < tail->size(); ++i)
    head->push(tail->ids[i], tail->tokens[i], tail->offsets[i], tail->sequence_ids[i], tail->type_ids[i],
               tail->special_tokens_mask[i] != 0);
  return std::move(*head);
}

void Encoding::truncate(size_t n, Keep which) {
  keep(ids, n, which);
  keep(type_ids, n, which);
  keep(tokens, n, which);
  keep(offsets, n, which);
  keep(sequence_ids, n, which);
  keep(special_tokens_mask, n, which);
  keep(attention_mask, n, which);
}

void Encoding::pad(size_t length, int32_t pad_id, const std::string& pad_token, bool left) {
  pad_vector(ids, length, pad_id, left);
  pad_vector(type_ids, length, 0, left);
  pad_vector(tokens, length, pad_token, left);
  pad_vector(offsets, length, Span{}, left);
  pad_vector<int8_t>(sequence_ids, length, -1, left);
  pad_vector<uint8_t>(special_tokens_mask, length, 1, left);
  pad_vector<uint8_t>(attention_mask, length, 0, left);
}

bool Encoding::continues_word(std::string_view text, size_t i) const {
  if (i == 0 || i >= size() || sequence_ids[i] != 0 || sequence_ids[i - 1] != 0 || special_tokens_mask[i] ||
      special_tokens_mask[i - 1])
    return false;
  const size_t at = offsets[i].begin;
  if (offsets[i - 1].end != at || at == 0 || at >= text.size() || offsets[i].end <= at) return false;
  if (unicode::is_continuation_byte(text[at])) return true;
  size_t before = at - 1, length = 0;
  while (before > 0 && unicode::is_continuation_byte(text[before])) --before;
  return unicode::is_word_character(unicode::decode(text, before, &length)) &&
         unicode::is_word_character(unicode::decode(text, at, &length));
}

Tokenizer::~Tokenizer() = default;

Encoding Tokenizer::finish(Encoding first, std::optional<Encoding> second, const EncodeOptions& options,
                           bool complete) const {
  const bool pair = second.has_value();
  const size_t specials = options.add_special_tokens && post_processor_ ? post_processor_->added_tokens(pair) : 0;
  const size_t content = first.size() + (pair ? second->size() : 0);
  // A text not read to its end was longer than the windows read (and they
  // were already cut to max_length).
  const bool truncated = options.max_length > 0 && (!complete || content + specials > options.max_length);
  if (truncated && options.overflow == Overflow::kReject)
    throw InvalidInput("the input has " + (complete ? std::to_string(content + specials) + " tokens, more than"
                                                    : std::string("more tokens than")) +
                           " the limit of " + std::to_string(options.max_length) + " (overflow: reject)",
                       ErrorCode::kTooLong);
  if (truncated) {
    const size_t budget = options.max_length > specials ? options.max_length - specials : 0;
    const Keep left = options.truncation;
    if (!pair) {
      first.truncate(budget, left);
    } else {
      // Longest first: trim the longer text one token at a time.
      size_t a = first.size(), b = second->size();
      while (a + b > budget) (a >= b ? a : b)--;
      first.truncate(a, left);
      second->truncate(b, left);
    }
  }
  Encoding out = post_processor_ ? post_processor_->process(std::move(first), std::move(second), options.add_special_tokens)
                                 : join_plain(std::move(first), std::move(second));
  out.input_tokens = complete ? content + specials : 0;
  out.truncated = truncated;
  return out;
}

Encoding Tokenizer::encode(std::string_view text, const EncodeOptions& options) const {
  check_text(text);
  bool complete = true;
  Encoding tokens = encode_truncated(text, options, complete);
  return finish(std::move(tokens), std::nullopt, options, complete);
}

Encoding Tokenizer::encode_pair(std::string_view first, std::string_view second, const EncodeOptions& options) const {
  check_text(first);
  check_text(second);
  bool first_complete = true, second_complete = true;
  Encoding a = encode_truncated(first, options, first_complete);
  Encoding b = encode_truncated(second, options, second_complete);
  return finish(std::move(a), std::move(b), options, first_complete && second_complete);
}

size_t Tokenizer::special_tokens(bool pair) const { return post_processor_ ? post_processor_->added_tokens(pair) : 0; }

Encoding Tokenizer::with_special_tokens(Encoding content, std::optional<Encoding> second) const {
  const bool pair = second.has_value();
  const size_t read = content.size() + (pair ? second->size() : 0);
  Encoding out = post_processor_ ? post_processor_->process(std::move(content), std::move(second), true)
                                 : join_plain(std::move(content), std::move(second));
  out.input_tokens = read + special_tokens(pair);
  return out;
}

Overflow parse_overflow(const std::string& name) {
  if (name == "truncate") return Overflow::kTruncate;
  if (name == "reject") return Overflow::kReject;
  throw InvalidInput("overflow '" + name + "' is neither truncate nor reject");
}

std::vector<Encoding> Tokenizer::encode_batch(const std::vector<std::string_view>& texts, const EncodeOptions& options,
                                              const PaddingOptions& padding) const {
  std::vector<Encoding> out(texts.size());
  // Small batches are cheaper on the calling thread than handed to the pool.
  if (texts.size() < 4) {
    for (size_t i = 0; i < texts.size(); ++i) out[i] = encode(texts[i], options);
  } else {
    parallel_for_each(texts.size(), [&](size_t i) { out[i] = encode(texts[i], options); });
  }
  size_t length = padding.length;
  if (length == 0)
    for (const auto& e : out) length = std::max(length, e.size());
  if (padding.multiple_of > 1 && length % padding.multiple_of != 0)
    length += padding.multiple_of - length % padding.multiple_of;
  for (auto& e : out) e.pad(length, pad_id_, pad_token_, padding.side == Side::kLeft);
  return out;
}

std::shared_ptr<const Tokenizer> load_tokenizer(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    if (fs::exists(path / "tokenizer.json")) return load_hf_tokenizer(file_in_dir(path, "tokenizer.json"));
    if (fs::exists(path / "tokenizer.model")) return load_sentencepiece_tokenizer(file_in_dir(path, "tokenizer.model"));
    throw LoadError(path.string() + ": no tokenizer.json or tokenizer.model", ErrorCode::kNotFound);
  }
  if (path.extension() == ".model") return load_sentencepiece_tokenizer(path);
  return load_hf_tokenizer(path);
}

}  // namespace semroute
