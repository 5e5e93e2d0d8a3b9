// A byte-level BPE tokenizer.json cut down to the tokens a corpus uses most.
// A small model trained from scratch needs no 50 000-row embedding table for
// text it never sees; trimming keeps every single-character token (so any
// text still encodes, without unknown tokens), the special added tokens, the
// most frequent tokens and every token their merges pass through, and only
// the merges among kept tokens, so the trimmed tokenizer never produces a
// token it dropped. Ids are renumbered densely (post-processor ids follow).
#pragma once

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace semroute::training {

struct TrimReport {
  size_t original_size = 0, kept = 0, merges_kept = 0;
  double tokens_per_text = 0;  // over the corpus, with the original tokenizer
};

// `tokenizer_json` must hold a BPE model; `size` counts vocabulary tokens
// (special added tokens come on top). Throws InvalidInput otherwise.
nlohmann::json trim_vocabulary(const std::filesystem::path& tokenizer_json, const std::vector<std::string>& corpus,
                               size_t size, TrimReport* report = nullptr);

}  // namespace semroute::training
