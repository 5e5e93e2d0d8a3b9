#include "tasks/text_batch.h"

#include <ATen/ops/empty.h>

#include "semroute/error.h"

namespace semroute {

Keep parse_truncation(const std::string& name) {
  if (name == "start") return Keep::kStart;
  if (name == "end") return Keep::kEnd;
  if (name == "both") return Keep::kStartAndEnd;
  throw InvalidInput("truncation '" + name + "' is not start, end or both");
}

EncodeOptions encode_options_for(const CoreModel& model, const InputPolicy& policy) {
  const auto limit = static_cast<size_t>(model.max_length());
  if (policy.max_length > limit)
    throw InvalidInput("max_length " + std::to_string(policy.max_length) + " exceeds the model's limit of " +
                       std::to_string(limit));
  EncodeOptions options;
  options.max_length = policy.max_length ? policy.max_length : limit;
  options.truncation = policy.truncation;
  options.overflow = policy.overflow;
  options.count_input_tokens = policy.count_input_tokens;
  return options;
}

std::vector<TokenRange> plan_windows(size_t content, size_t specials, size_t size, size_t overlap) {
  if (size <= specials)
    throw InvalidInput("a window of " + std::to_string(size) + " tokens holds no text after the model's " +
                       std::to_string(specials) + " special tokens");
  const size_t text = size - specials;
  if (overlap >= text)
    throw InvalidInput("the overlap (" + std::to_string(overlap) + " tokens) must be smaller than a window's text (" +
                       std::to_string(text) + " tokens)");
  std::vector<TokenRange> windows{{0, std::min(text, content)}};
  while (windows.back().end < content) {
    const size_t begin = windows.back().begin + (text - overlap);
    windows.push_back({begin, std::min(content, begin + text)});
  }
  return windows;
}

Encoding slice(const Encoding& e, TokenRange range) {
  Encoding out;
  for (size_t i = range.begin; i < range.end; ++i)
    out.push(e.ids[i], e.tokens[i], e.offsets[i], e.sequence_ids[i], e.type_ids[i], e.special_tokens_mask[i] != 0);
  return out;
}

Encoding WindowedDocument::window(const Tokenizer& tokenizer, size_t i) const {
  return tokenizer.with_special_tokens(slice(text, windows.at(i)));
}

EncodeRange WindowedDocument::encoder(const Tokenizer& tokenizer) const {
  return [this, &tokenizer](size_t first, size_t last) {
    std::vector<Encoding> out;
    for (size_t i = first; i < last; ++i) out.push_back(window(tokenizer, i));
    return out;
  };
}

WindowedDocument plan_document(const Tokenizer& tokenizer, std::string_view document, const WindowOptions& options,
                               size_t max_length) {
  const size_t size = options.size ? options.size : max_length;
  if (size > max_length)
    throw InvalidInput("a window of " + std::to_string(size) + " tokens is longer than the model's max_length of " +
                           std::to_string(max_length),
                       ErrorCode::kTooLong);
  EncodeOptions whole;
  whole.add_special_tokens = false;
  WindowedDocument d;
  d.text = tokenizer.encode(document, whole);
  if (options.max_document_tokens > 0 && d.text.size() > options.max_document_tokens)
    throw InvalidInput("the document has " + std::to_string(d.text.size()) + " tokens, more than max_document_tokens (" +
                           std::to_string(options.max_document_tokens) + "): windows never cut a document",
                       ErrorCode::kTooLong);
  d.windows = plan_windows(d.text.size(), tokenizer.special_tokens(), size, options.overlap);
  return d;
}

InputUsage usage_of(const Encoding& encoding) {
  InputUsage usage;
  usage.input_tokens = encoding.input_tokens;
  for (uint8_t m : encoding.attention_mask) usage.processed_tokens += m;
  usage.truncated = encoding.truncated;
  return usage;
}
namespace {

TextBatch to_inputs(std::vector<Encoding> encodings, c10::Device device) {
  const int64_t batch = static_cast<int64_t>(encodings.size());
  const int64_t seq = encodings.empty() ? 0 : static_cast<int64_t>(encodings[0].size());
  at::Tensor ids = at::empty({batch, seq}, at::kLong), mask = at::empty({batch, seq}, at::kLong),
             types = at::empty({batch, seq}, at::kLong);
  int64_t* id = ids.data_ptr<int64_t>();
  int64_t* m = mask.data_ptr<int64_t>();
  int64_t* t = types.data_ptr<int64_t>();
  for (const auto& e : encodings)
    for (size_t i = 0; i < e.size(); ++i) {
      *id++ = e.ids[i];
      *m++ = e.attention_mask[i];
      *t++ = e.type_ids[i];
    }
  TextBatch batch_out;
  batch_out.encodings = std::move(encodings);
  batch_out.inputs.input_ids = ids.to(device);
  batch_out.inputs.attention_mask = mask.to(device);
  batch_out.inputs.token_type_ids = types.to(device);
  return batch_out;
}

void pad_all(std::vector<Encoding>& encodings, const Tokenizer& tokenizer) {
  size_t length = 0;
  for (const auto& e : encodings) length = std::max(length, e.size());
  for (auto& e : encodings) e.pad(length, tokenizer.pad_id(), tokenizer.pad_token(), false);
}

}  // namespace

TextBatch make_text_batch(const Tokenizer& tokenizer, const std::vector<std::string_view>& texts,
                          const EncodeOptions& options, c10::Device device) {
  if (texts.empty()) throw InvalidInput("the batch holds no text");
  return to_inputs(tokenizer.encode_batch(texts, options), device);
}

TextBatch make_pair_batch(const Tokenizer& tokenizer, const std::vector<TextPair>& pairs,
                          const EncodeOptions& options, c10::Device device) {
  if (pairs.empty()) throw InvalidInput("the batch holds no text pair");
  std::vector<Encoding> encodings;
  encodings.reserve(pairs.size());
  for (const auto& [first, second] : pairs) encodings.push_back(tokenizer.encode_pair(first, second, options));
  return batch_from_encodings(std::move(encodings), tokenizer, device);
}

TextBatch batch_from_encodings(std::vector<Encoding> encodings, const Tokenizer& tokenizer, c10::Device device) {
  if (encodings.empty()) throw InvalidInput("the batch holds no text");
  pad_all(encodings, tokenizer);
  return to_inputs(std::move(encodings), device);
}

void for_each_budgeted_batch(size_t count, const EncodeRange& encode, const Tokenizer& tokenizer, c10::Device device,
                             const std::function<void(const TextBatch& batch, size_t first)>& run, int64_t budget) {
  constexpr size_t kEncodeGroup = 64;  // texts tokenized together (the tokenizer spreads them over threads)
  std::vector<Encoding> pending;       // encoded, the next items after the batch
  std::vector<Encoding> batch;         // items [first, first + batch.size())
  size_t first = 0, longest = 0;
  const auto flush = [&] {
    if (batch.empty()) return;
    const size_t size = batch.size();
    run(batch_from_encodings(std::move(batch), tokenizer, device), first);
    first += size;
    batch.clear();
    longest = 0;
  };
  size_t taken = 0;  // of pending
  while (first + batch.size() < count) {
    if (taken == pending.size()) {
      const size_t begin = first + batch.size(), end = std::min(count, begin + kEncodeGroup);
      pending = encode(begin, end);
      if (pending.size() != end - begin) throw InternalError("encoder returned the wrong number of encodings");
      taken = 0;
    }
    Encoding& e = pending[taken];
    const size_t grown = std::max(longest, e.size());
    if (!batch.empty() && static_cast<int64_t>(grown * (batch.size() + 1)) > budget) flush();
    longest = std::max(longest, e.size());
    batch.push_back(std::move(e));
    ++taken;
  }
  flush();
}

}  // namespace semroute
