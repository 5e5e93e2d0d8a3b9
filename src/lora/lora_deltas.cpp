#include "lora/lora_deltas.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/baddbmm.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/zeros.h>

#include <algorithm>

#include "semroute/error.h"

namespace semroute {

LoraDeltas::LoraDeltas(std::vector<std::shared_ptr<const LoraAdapter>> groups) : groups_(std::move(groups)) {
  if (groups_.empty()) throw InvalidInput("LoraDeltas needs at least one group");
  if (groups_.size() == 1) return;
  // Every module any group adapts, stacked; ranks padded with zeros (exact).
  std::unordered_map<std::string, std::vector<const LoraModule*>> modules;
  for (size_t g = 0; g < groups_.size(); ++g) {
    if (!groups_[g]) continue;
    for (const auto& [name, m] : groups_[g]->modules()) {
      auto& slot = modules[name];
      slot.resize(groups_.size(), nullptr);
      slot[g] = &m;
    }
  }
  const auto count = static_cast<int64_t>(groups_.size());
  for (const auto& [name, per_group] : modules) {
    const LoraModule* any = *std::find_if(per_group.begin(), per_group.end(), [](auto* m) { return m != nullptr; });
    int64_t rank = 0;
    for (const auto* m : per_group)
      if (m != nullptr) rank = std::max(rank, m->a.size(0));
    const int64_t in = any->a.size(1), out = any->b.size(0);
    Stacked s{at::zeros({count, in, rank}, any->a.options()), at::zeros({count, rank, out}, any->b.options())};
    for (int64_t g = 0; g < count; ++g) {
      const LoraModule* m = per_group[static_cast<size_t>(g)];
      if (m == nullptr) continue;
      const int64_t r = m->a.size(0);
      s.a_t[g].narrow(1, 0, r).copy_(m->a.t());
      s.b_t[g].narrow(0, 0, r).copy_(m->b.t());
    }
    stacked_.emplace(name, std::move(s));
  }
}

at::Tensor LoraDeltas::add(const std::string& module, const at::Tensor& x, const at::Tensor& y) const {
  if (groups_.size() == 1) {
    const LoraModule* m = groups_[0] ? groups_[0]->find(module) : nullptr;
    return m == nullptr ? y : y + at::linear(at::linear(x, m->a), m->b);
  }
  const auto it = stacked_.find(module);
  if (it == stacked_.end()) return y;
  const auto count = static_cast<int64_t>(groups_.size());
  if (x.size(0) % count != 0) throw InternalError("LoRA group rows do not divide the batch");
  const at::Tensor xg = x.reshape({count, -1, x.size(-1)});
  const at::Tensor yg = y.reshape({count, -1, y.size(-1)});
  return at::baddbmm(yg, at::bmm(xg, it->second.a_t), it->second.b_t).reshape(y.sizes());
}

}  // namespace semroute
