// tokenizer.json decoders: token strings back to text (ByteLevel, WordPiece,
// Metaspace, Replace, ByteFallback, Fuse, Strip, Sequence).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace semroute {

class Decoder {
 public:
  virtual ~Decoder() = default;
  // Rewrites the token strings; the decoded text is their concatenation.
  virtual void decode(std::vector<std::string>& tokens) const = 0;
};

// nullptr for JSON null (tokens are then joined with spaces).
std::unique_ptr<Decoder> make_decoder(const nlohmann::json& spec);

}  // namespace semroute
