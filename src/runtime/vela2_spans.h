// How a Vela 2.0 Span question's word probabilities become its answer
// (docs/decisions.md): the threshold the package's calibration sets for it
// (the question's own; else the PII length rule or buckets, raised by the
// sparse gate when few words stand out; else the calibration's span
// thresholds), and the labelled spans, decoded as the packages decode them:
// a word takes its best label when that label's probability passes the
// threshold (compared in float32, as the packages compare), words of one
// unit (an e-mail address, a phone number) vote for one label and fill the
// gaps between them, and runs of words with one label make a span, trimmed
// of brackets and quotes, whose probability is its words' mean.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "runtime/vela2_words.h"

namespace semroute {

// A labelled span of the part a Span question read (code points, end exclusive).
struct DecisionSpan {
  std::string label;
  size_t start = 0, end = 0;
  std::string text;
  double probability = 0;
};

// Word probabilities: words.size() rows of labels.size() columns.
struct WordProbabilities {
  const std::u32string* text = nullptr;
  std::vector<CodePointRange> words;
  std::vector<std::string> labels;
  std::vector<double> p;
  double at(size_t word, size_t label) const { return p[word * labels.size() + label]; }
};

// The spans whose words pass `threshold`, in text order.
std::vector<DecisionSpan> decode_spans(const WordProbabilities& words, double threshold);

// The threshold applied and the calibration rule that gave it ("given",
// "pii:length", "pii:<bucket>", "halu", "toxic", "span:<key>", "span:*";
// "+sparse" when the sparse gate raised it).
struct SpanThreshold {
  double value = 0.5;
  std::string rule;
};

// The threshold of a span question named `key` (its preset, else its ID)
// over a part of `part_tokens` tokens. std::out_of_range when the
// calibration lacks what its rule needs (the package's fault).
SpanThreshold span_threshold(const nlohmann::ordered_json& calibration, const std::string& key,
                             const WordProbabilities& words, size_t part_tokens, std::optional<double> given);

}  // namespace semroute
