// Training data for `semroute train`: JSONL rows of `text` + `label`
// (sequence classification), `text` + `spans` (token classification, byte
// offsets), or `text` alone (masked-LM pretraining); a seeded held-out split;
// and the token ids and per-token targets the trainer consumes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "tokenizers/tokenizer.h"

namespace semroute::training {

enum class Objective { kSequence, kToken, kMaskedLm };

struct LabeledSpan {
  size_t begin = 0;  // UTF-8 byte offsets into the text, end exclusive
  size_t end = 0;
  std::string label;
};

struct Example {
  std::string text;
  std::string label;               // sequence task
  std::vector<LabeledSpan> spans;  // token task
};

// Reads one JSONL file; every malformed line is an InvalidInput naming the
// file and line. Rows must carry what `kind` needs (label or spans).
std::vector<Example> read_jsonl(const std::filesystem::path& path, Objective kind);

// FNV-1a over `bytes` bytes, continuing from `h`: stable across platforms
// and runs (the split's text hash, a checkpoint's data fingerprint).
constexpr uint64_t kFnv1aStart = 1469598103934665603ull;
uint64_t fnv1a(const void* data, size_t bytes, uint64_t h = kFnv1aStart);

// Where an example goes: a text is held out iff its seeded hash falls in the
// held-out fractions, so the split depends on the text alone (not on file
// order) and every run and tool with the same seed agrees on it.
enum class Part { kTrain, kValid, kTest };
Part part_of(const std::string& text, uint64_t seed, double valid_fraction, double test_fraction);

struct Split {
  std::vector<Example> train, valid, test;
};
Split split(std::vector<Example> examples, uint64_t seed, double valid_fraction, double test_fraction);

// The class names: sequence labels sorted, or "O" then B-/I- of every span
// type sorted (BIO).
std::vector<std::string> label_set(const std::vector<Example>& examples, Objective kind);

// A tokenized example: ids (with special tokens) and, per token, the target
// class (-100 where no loss is taken: special tokens, masked-LM positions
// left alone) or, for sequences, one target in `label`.
struct Encoded {
  std::vector<int64_t> ids;
  std::vector<int64_t> targets;  // token task
  int64_t label = -100;          // sequence task
  size_t text_bytes = 0;
};

constexpr int64_t kIgnore = -100;

// Sequence and token targets from the examples (labels index `labels`).
// Spans become BIO: the first token overlapping a span is B-X, the rest I-X.
std::vector<Encoded> encode(const Tokenizer& tokenizer, const std::vector<Example>& examples, Objective kind,
                            const std::vector<std::string>& labels, size_t max_length);

// Extra training rows against length shortcuts (a sequence task whose
// classes differ in length, jailbreaks being long): for every example of more
// than 2 x `min_tokens` text tokens, `per_example` windows of a random length
// (`min_tokens` up to the example's length) at a random place, between the
// example's own special tokens, with its label. Seeded.
std::vector<Encoded> random_windows(const std::vector<Encoded>& examples, int64_t per_example, size_t min_tokens,
                                    uint64_t seed);

}  // namespace semroute::training
