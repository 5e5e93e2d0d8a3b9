// Texts (or text pairs) tokenized into one right-padded batch of model inputs,
// keeping the encodings for their offsets.
#pragma once

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

// Encoding options for `model`: max_length 0 means the model's limit; a
// larger one than the limit is refused (InvalidInput).
EncodeOptions encode_options_for(const CoreModel& model, size_t max_length, Keep truncation);

// Throws InvalidInput for an empty batch.
TextBatch make_text_batch(const Tokenizer& tokenizer, const std::vector<std::string_view>& texts,
                          const EncodeOptions& options, c10::Device device);
// Right-pads already encoded texts into one batch.
TextBatch batch_from_encodings(std::vector<Encoding> encodings, const Tokenizer& tokenizer, c10::Device device);
TextBatch make_pair_batch(const Tokenizer& tokenizer, const std::vector<TextPair>& pairs,
                          const EncodeOptions& options, c10::Device device);

}  // namespace semroute
