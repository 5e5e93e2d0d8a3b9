// The Hugging Face tokenizer.json pipeline: added tokens -> normalizer ->
// pre-tokenizer -> model -> post-processor, and the decoder for the way back.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tokenizers/tokenizer.h"

namespace semroute {

// Throws LoadError naming the file for anything malformed, Unsupported for
// pipeline components this library does not implement. `dropped`: added
// tokens left out (a model that inserts them by ID, so that no text can
// produce them: Vela 2.0's markers).
std::shared_ptr<const Tokenizer> load_hf_tokenizer(const std::filesystem::path& tokenizer_json,
                                                   const std::vector<std::string>& dropped = {});

}  // namespace semroute
