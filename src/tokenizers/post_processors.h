// tokenizer.json post-processors: how special tokens wrap one text or a pair
// (TemplateProcessing, BertProcessing, RobertaProcessing; ByteLevel adds none).
#pragma once

#include <memory>
#include <unordered_map>
#include <nlohmann/json.hpp>
#include <optional>

#include "tokenizers/tokenizer.h"

namespace semroute {

class TokenizerModel;

class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  // Number of special tokens added to one text (or a pair).
  virtual size_t added_tokens(bool pair) const = 0;
  // Joins the encodings, adding special tokens when asked.
  virtual Encoding process(Encoding first, std::optional<Encoding> second, bool add_special_tokens) const = 0;
  // The ids of the special tokens it may add.
  virtual std::vector<int32_t> special_ids() const { return {}; }
};

// nullptr for JSON null.
std::unique_ptr<PostProcessor> make_post_processor(const nlohmann::json& spec);

// Concatenation without special tokens: type id 0 for the first text, 1 for the second.
Encoding join_plain(Encoding first, std::optional<Encoding> second);

}  // namespace semroute
