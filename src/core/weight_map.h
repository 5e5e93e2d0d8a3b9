// Resolves the tensor names a backend asks for against the names a real
// checkpoint uses (bare, `model.`, `bert.`, `_orig_mod.` …), converts them to
// the model's dtype and device, and collects every problem so that a load
// fails once with the complete list of missing and mis-shaped tensors.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "core/checkpoint.h"

namespace semroute {

class WeightMap {
 public:
  // `prefixes` are tried in order; "" means the bare name.
  WeightMap(const Checkpoint& checkpoint, std::vector<std::string> prefixes, at::TensorOptions options);

  // The tensor for `name` (floating tensors converted to the model dtype).
  // A missing tensor or a shape other than `shape` (when given) is recorded
  // and an undefined tensor returned; call check() before using the model.
  at::Tensor get(const std::string& name, at::IntArrayRef shape = {});
  // Like get(), but absence is not an error.
  at::Tensor get_optional(const std::string& name, at::IntArrayRef shape = {});
  bool has(const std::string& name) const { return !resolve(name).empty(); }
  // The checkpoint name `name` resolves to, or "" when absent.
  std::string resolved(const std::string& name) const { return resolve(name); }

  // A transformation of every tensor fetched (by its checkpoint name), applied
  // before the dtype conversion: how a LoRA adapter is merged at load.
  using Patch = std::function<at::Tensor(const std::string& name, const at::Tensor& tensor)>;
  void set_patch(Patch patch) { patch_ = std::move(patch); }

  // Modules that `overlay` holds (under `prefix`) come from it, whole: a
  // module's tensors are all the overlay's or all the checkpoint's. This is
  // how PEFT composes a head from an adapter's modules_to_save (say only
  // `classifier`) and the base model (the rest of the head). The patch
  // applies to the checkpoint's tensors only.
  void set_overlay(const Checkpoint& overlay, std::string prefix);

  // Whether linear layers built from these weights quantize them to int8
  // (dynamic quantization, LoadOptions::int8); task heads load their own.
  void set_int8_linears(bool on) { int8_linears_ = on; }
  bool int8_linears() const { return int8_linears_; }

  // Throws LoadError listing every missing or mis-shaped tensor.
  void check() const;
  // Checkpoint tensors nobody asked for (sorted).
  std::vector<std::string> unused() const;

 private:
  std::string resolve(const std::string& name) const;
  at::Tensor fetch(const std::string& name, at::IntArrayRef shape, bool required);
  bool shape_matches(const Checkpoint& checkpoint, const std::string& full, at::IntArrayRef shape);

  const Checkpoint& checkpoint_;
  std::vector<std::string> prefixes_;
  at::TensorOptions options_;
  std::set<std::string> used_;
  std::vector<std::string> problems_;
  Patch patch_;
  const Checkpoint* overlay_ = nullptr;
  std::string overlay_prefix_;
  std::set<std::string> overlay_modules_;  // modules the overlay holds
  bool int8_linears_ = false;
};

}  // namespace semroute
