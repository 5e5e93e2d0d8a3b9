// tokenizer.json normalizers: NFC/NFD/NFKC/NFKD, Lowercase, StripAccents,
// Replace, Prepend, Strip, BertNormalizer, Sequence. Each keeps the alignment
// of every output byte to the original input.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>

#include "tokenizers/aligned_text.h"

namespace semroute {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual void normalize(AlignedText& text) const = 0;
};

// Builds the normalizer described by a tokenizer.json "normalizer" object
// (nullptr for JSON null). Throws Unsupported for unknown types.
std::unique_ptr<Normalizer> make_normalizer(const nlohmann::json& spec);

}  // namespace semroute
