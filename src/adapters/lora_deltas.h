// LoRA applied unmerged: y = W·x + B·(A·x) per adapted module, for a batch
// whose rows are split into equal groups, each with its own adapter (or none).
// With one group this is a single adapter over a shared base; with several it
// is the multi-task engine's stacked execution: one GEMM against the base
// weight for all groups (done by the Linear), then every group's low-rank
// delta in two batched matmuls.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "adapters/lora_adapter.h"
#include "models/layers.h"

namespace semroute {

class LoraDeltas : public LinearDeltas {
 public:
  // One entry per row group, nullptr for a group without adapter. The
  // stacked tensors of all groups are built here, once.
  explicit LoraDeltas(std::vector<std::shared_ptr<const LoraAdapter>> groups);

  // The deltas for a stack of some of these groups (indices, in stack
  // order), sharing the stacked tensors: a view of them when the indices are
  // consecutive, else a gather of the (small) LoRA tensors per call.
  LoraDeltas select(const std::vector<int64_t>& groups) const;

  at::Tensor add(const std::string& module, const at::Tensor& x, const at::Tensor& y) const override;

  size_t groups() const { return slots_.size(); }

 private:
  struct Stacked {
    at::Tensor a_t;  // [all groups, in, r_max], zeros for groups without the module
    at::Tensor b_t;  // [all groups, r_max, out]
  };
  using Stacks = std::unordered_map<std::string, Stacked>;
  LoraDeltas() = default;
  // This view's slice of a stack.
  at::Tensor slots_of(const at::Tensor& stacked) const;

  using Adapters = std::vector<std::shared_ptr<const LoraAdapter>>;
  std::shared_ptr<const Adapters> adapters_;                   // every group, shared by views
  std::shared_ptr<const Stacks> stacks_;                       // several groups only
  std::vector<int64_t> slots_;                                 // this view's groups
  int64_t first_slot_ = -1;                                    // when slots_ are consecutive
  at::Tensor slot_index_;                                      // otherwise
};

}  // namespace semroute
