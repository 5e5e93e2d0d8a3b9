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

#include "lora/lora_adapter.h"
#include "models/layers.h"

namespace semroute {

class LoraDeltas : public LinearDeltas {
 public:
  // One entry per row group, nullptr for a group without adapter.
  explicit LoraDeltas(std::vector<std::shared_ptr<const LoraAdapter>> groups);

  at::Tensor add(const std::string& module, const at::Tensor& x, const at::Tensor& y) const override;

  size_t groups() const { return groups_.size(); }

 private:
  struct Stacked {
    at::Tensor a_t;  // [groups, in, r_max], zeros for groups without the module
    at::Tensor b_t;  // [groups, r_max, out]
  };
  std::vector<std::shared_ptr<const LoraAdapter>> groups_;
  std::unordered_map<std::string, Stacked> stacked_;  // several groups only
};

}  // namespace semroute
