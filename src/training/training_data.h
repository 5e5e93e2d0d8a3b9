// Training data for `semroute train`: JSONL rows of `text` + `label`
// (sequence classification), `text` + `spans` (token classification, byte
// offsets), or `text` alone (masked-LM pretraining); a seeded held-out split;
// and the token ids and per-token targets the trainer consumes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
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
  // The row's other string and integer fields (source, id, kind, …), as
  // text: hold-out rules and per-source scores read them.
  std::map<std::string, std::string> fields;
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

// Rules that keep whole sources out of training, for an out-of-source
// evaluation: a row is held out when a field equals a value
// (`source` = `xstest`), or when a field's value falls in a seeded share of
// that field's values (`template_id`, 0.1: a tenth of the templates, unseen).
struct HoldOut {
  std::vector<std::pair<std::string, std::string>> equal;
  std::vector<std::pair<std::string, double>> share;
  uint64_t seed = 1;
  bool empty() const { return equal.empty() && share.empty(); }
  bool matches(const Example& example) const;
};
// Moves the rows `rules` match out of `examples` (order kept) and returns them.
std::vector<Example> take_held_out(std::vector<Example>& examples, const HoldOut& rules);

// Short questions from long items: the final sentence of every example of
// two or more sentences (ended by . ? ! before a capital, or a line break), when it has at
// least `min_words` words, as a new example with the same label and fields.
std::vector<Example> final_sentences(const std::vector<Example>& examples, size_t min_words);

struct Split {
  std::vector<Example> train, valid, test;
};
Split split(std::vector<Example> examples, uint64_t seed, double valid_fraction, double test_fraction);

// The class names: sequence labels sorted, or "O" then B-/I- of every span
// type sorted (BIO).
std::vector<std::string> label_set(const std::vector<Example>& examples, Objective kind);
// The class names of two sets together (training rows and held-out ones).
std::vector<std::string> label_set(const std::vector<Example>& a, const std::vector<Example>& b, Objective kind);

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
