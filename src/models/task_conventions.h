// How Hugging Face's task classes use an architecture, as data a backend
// declares in the registry: the head its …ForSequenceClassification /
// …ForTokenClassification puts on the encoder, and how its embedding models
// pool and what they append. src/tasks builds heads and embedders from these
// and never names a backend.
#pragma once

#include <optional>
#include <string>

#include "models/layers.h"

namespace semroute {

enum class TaskKind { kSequence, kToken };

enum class Pooling { kCls, kMean, kLastToken };

// "cls", "mean", "last" / "lasttoken" (also the sentence-transformers
// pooling_mode_* spellings); throws InvalidInput otherwise.
Pooling parse_pooling(const std::string& name);

// pool (sequence tasks) → dense → activation | tanh → norm → classifier.
// Names are those of the task checkpoint ("head.dense", "bert.pooler.dense").
struct HeadLayout {
  Pooling pooling = Pooling::kCls;  // sequence tasks only
  std::string dense;                // "" = none
  bool dense_bias = true;
  std::optional<Activation> activation;  // after dense
  bool tanh = false;                     // after dense (BERT's pooler)
  std::string norm;                      // LayerNorm, "" = none
  double norm_eps = 1e-5;
  bool norm_bias = true;
  std::string classifier = "classifier";
  bool classifier_bias = true;
  // A checkpoint holding neither the dense nor the norm tensors puts the
  // classifier straight on the pooled states (compact heads trained without
  // the transform), instead of failing to load.
  bool transform_optional = false;
};

struct EmbeddingConvention {
  Pooling pooling = Pooling::kMean;  // when no sentence-transformers Pooling module says otherwise
  std::string appended_token;        // appended to every text when the tokenizer has it ("<|endoftext|>")
};

}  // namespace semroute
