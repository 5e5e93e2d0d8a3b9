// A cross-encoder that scores (query, document) pairs for reranking: the
// pair read together through the encoder, the representation taken at one of
// its trained exits (a depth and a Matryoshka width), and a small MLP head
// giving one raw relevance logit per pair (higher = more relevant).
//
// The directory (a "Matryoshka cross-encoder"):
//   config.json               the encoder's, with "representation_contract":
//                             {"version": 1, "pooling": "cls" | "mean",
//                              "intermediate_normalization": "final_norm",
//                              "final_normalization": "final_norm", "head_dtype": "float32"}
//   matryoshka_config.json    {"layer_indices": [...], "dim_indices": [...], ...}: the trained exits
//   model.safetensors         the encoder
//   classification_heads.safetensors
//                             per exit "{layer}.{dim}.0" Linear(dim -> h), GELU (erf),
//                             "{layer}.{dim}.3" Linear(h -> 1)
//   tokenizer.json            with a pair template
// Immutable after load; score() may be called from many threads at once.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <vector>

#include "models/layers.h"
#include "tasks/task_model.h"
#include "tasks/text_batch.h"

namespace semroute {

struct PairScorerOptions : PipelineOptions {
  // The default exit: layers run (0 = all) and the representation's leading
  // values kept (0 = the hidden size). It must be one the heads were trained for.
  int64_t layer = 0;
  int64_t dimension = 0;
};

struct ScoredPair {
  float score = 0;  // the raw logit
  InputUsage input;
};

// One trained exit: the layers run and the representation's leading values kept.
struct PairExit {
  int64_t layer = 0;
  int64_t dimension = 0;
  bool operator<(const PairExit& o) const { return layer != o.layer ? layer < o.layer : dimension < o.dimension; }
  bool operator==(const PairExit& o) const { return layer == o.layer && dimension == o.dimension; }
};

class PairScorer {
 public:
  // Loads every exit the heads file holds; the default one is the options'
  // (else the last layer at full width) and must be trained.
  static std::shared_ptr<const PairScorer> load(const std::filesystem::path& dir, const PairScorerOptions& options);

  // One score per (query, document) pair at the default exit, in order. A
  // pair longer than the model's max_length is cut or refused as the input
  // policy says.
  std::vector<ScoredPair> score(const std::vector<TextPair>& pairs) const;
  // Raw logits [batch] of already tokenized pairs at `exit` (InvalidInput
  // for an exit without a trained head).
  at::Tensor logits(const ModelInputs& inputs, PairExit exit) const;

  // The trained exits: layer ascending, then width descending.
  const std::vector<PairExit>& exits() const { return exits_; }
  PairExit default_exit() const { return default_; }
  int64_t layer() const { return default_.layer; }
  int64_t dimension() const { return default_.dimension; }
  const Tokenizer& tokenizer() const { return *encoder_.tokenizer; }
  const std::shared_ptr<const CoreModel>& encoder() const { return encoder_.encoder; }
  const EncodeOptions& encode_options() const { return encode_; }

 private:
  PairScorer() = default;

  struct Head {
    Linear hidden;  // dimension -> h, then GELU (erf)
    Linear output;  // h -> 1
  };
  Backbone encoder_;
  Pooling pooling_ = Pooling::kCls;
  std::map<PairExit, Head> heads_;
  std::vector<PairExit> exits_;
  PairExit default_;
  EncodeOptions encode_;
};

}  // namespace semroute
