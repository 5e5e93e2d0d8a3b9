// Encoders that run their layers a range at a time on a saved state, so a
// caller can compute a shared prefix of layers once and continue from it
// several ways (the multi-task engine in src/lora). Rows of the state are
// packed tokens; `groups` copies of the batch may be stacked one after
// another, each continuing with its own low-rank deltas.
#pragma once

#include <ATen/core/Tensor.h>

#include "models/core_model.h"
#include "models/layers.h"
#include "models/packed_sequences.h"

namespace semroute {

struct LayerState {
  PackedSequences packed;  // the layout of one group
  at::Tensor hidden;       // [groups * tokens, hidden_size]
  int64_t groups = 1;

  int64_t tokens() const { return hidden.size(0) / groups; }
  // Rows of group g.
  at::Tensor group(int64_t g) const { return hidden.narrow(0, g * tokens(), tokens()); }
};

class LayeredEncoder {
 public:
  virtual ~LayeredEncoder() = default;
  virtual int64_t num_layers() const = 0;
  // The input of layer 0 (one group).
  virtual LayerState embed(const ModelInputs& inputs) const = 0;
  // Runs layers [begin, end) on every group; `deltas` (may be null) knows the groups.
  virtual void run_layers(LayerState& state, int64_t begin, int64_t end, const LinearDeltas* deltas,
                          int64_t attention_block = 0) const = 0;
  // Group g after the final norm, [batch, seq, hidden] with zeros at padding.
  virtual at::Tensor finish(const LayerState& state, int64_t group) const = 0;
};

}  // namespace semroute
