#include "adapters/lora_deltas.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/baddbmm.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/zeros.h>

#include <algorithm>
#include <numeric>

#include "semroute/error.h"

namespace semroute {
namespace {

// Every module any group adapts, with each group's module (or null).
std::unordered_map<std::string, std::vector<const LoraModule*>> modules_by_group(
    const std::vector<std::shared_ptr<const LoraAdapter>>& groups) {
  std::unordered_map<std::string, std::vector<const LoraModule*>> modules;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (!groups[g]) continue;
    for (const auto& [name, m] : groups[g]->modules()) {
      auto& slot = modules[name];
      slot.resize(groups.size(), nullptr);
      slot[g] = &m;
    }
  }
  return modules;
}

}  // namespace

LoraDeltas::LoraDeltas(std::vector<std::shared_ptr<const LoraAdapter>> groups)
    : adapters_(std::make_shared<const Adapters>(std::move(groups))) {
  const Adapters& adapters = *adapters_;
  if (adapters.empty()) throw InvalidInput("LoraDeltas needs at least one group");
  slots_.resize(adapters.size());
  std::iota(slots_.begin(), slots_.end(), int64_t{0});
  first_slot_ = 0;
  if (adapters.size() == 1) return;
  // Ranks padded with zeros (exact).
  auto stacks = std::make_shared<Stacks>();
  const auto count = static_cast<int64_t>(adapters.size());
  for (const auto& [name, per_group] : modules_by_group(adapters)) {
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
    stacks->emplace(name, std::move(s));
  }
  stacks_ = std::move(stacks);
}

LoraDeltas LoraDeltas::select(const std::vector<int64_t>& groups) const {
  if (groups.empty()) throw InvalidInput("a LoRA selection needs at least one group");
  LoraDeltas view;
  view.adapters_ = adapters_;
  view.stacks_ = stacks_;
  for (int64_t g : groups) {
    if (g < 0 || g >= static_cast<int64_t>(slots_.size())) throw InternalError("LoRA group index out of range");
    view.slots_.push_back(slots_[static_cast<size_t>(g)]);
  }
  bool consecutive = true;
  for (size_t i = 1; i < view.slots_.size(); ++i) consecutive = consecutive && view.slots_[i] == view.slots_[i - 1] + 1;
  if (consecutive) {
    view.first_slot_ = view.slots_.front();
  } else {
    view.slot_index_ = at::tensor(view.slots_, at::TensorOptions().dtype(at::kLong));
  }
  return view;
}

at::Tensor LoraDeltas::slots_of(const at::Tensor& stacked) const {
  if (first_slot_ >= 0) return stacked.narrow(0, first_slot_, static_cast<int64_t>(slots_.size()));
  return stacked.index_select(0, slot_index_.to(stacked.device()));
}

at::Tensor LoraDeltas::add(const std::string& module, const at::Tensor& x, const at::Tensor& y) const {
  if (slots_.size() == 1) {
    const auto& adapter = (*adapters_)[static_cast<size_t>(slots_.front())];
    const LoraModule* m = adapter ? adapter->find(module) : nullptr;
    return m == nullptr ? y : y + at::linear(at::linear(x, m->a), m->b);
  }
  const auto it = stacks_->find(module);
  if (it == stacks_->end()) return y;
  const auto count = static_cast<int64_t>(slots_.size());
  if (x.size(0) % count != 0) throw InternalError("LoRA group rows do not divide the batch");
  const at::Tensor xg = x.reshape({count, -1, x.size(-1)});
  const at::Tensor yg = y.reshape({count, -1, y.size(-1)});
  return at::baddbmm(yg, at::bmm(xg, slots_of(it->second.a_t)), slots_of(it->second.b_t)).reshape(y.sizes());
}

}  // namespace semroute
