// SentencePiece `.model` files, through the sentencepiece library loaded as an
// isolated plugin (its bundled protobuf must not meet libtorch's).
#pragma once

#include <filesystem>
#include <memory>

#include "tokenizers/tokenizer.h"

namespace semroute {

// Throws Unsupported when the plugin is not available (e.g. sanitizer
// builds), LoadError when the model file is bad.
std::shared_ptr<const Tokenizer> load_sentencepiece_tokenizer(const std::filesystem::path& model_file);

}  // namespace semroute
