#include "core/weight_map.h"

#include <ATen/ops/to.h>  // IWYU pragma: keep

#include <sstream>

#include "semroute/error.h"

namespace semroute {
namespace {

std::string shape_string(at::IntArrayRef shape) {
  std::ostringstream out;
  out << '[';
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << ']';
  return out.str();
}

}  // namespace

WeightMap::WeightMap(const Checkpoint& checkpoint, std::vector<std::string> prefixes, at::TensorOptions options)
    : checkpoint_(checkpoint), prefixes_(std::move(prefixes)), options_(options) {
  if (prefixes_.empty()) prefixes_.push_back("");
}

void WeightMap::set_overlay(const Checkpoint& overlay, std::string prefix) {
  overlay_ = &overlay;
  overlay_prefix_ = std::move(prefix);
  overlay_modules_.clear();
  for (const auto& key : overlay.names()) {
    const auto dot = key.rfind('.');
    if (key.compare(0, overlay_prefix_.size(), overlay_prefix_) == 0 && dot != std::string::npos &&
        dot > overlay_prefix_.size())
      overlay_modules_.insert(key.substr(overlay_prefix_.size(), dot - overlay_prefix_.size()));
  }
}

std::string WeightMap::resolve(const std::string& name) const {
  for (const auto& prefix : prefixes_) {
    std::string full = prefix + name;
    if (checkpoint_.find(full) != nullptr) return full;
  }
  return {};
}

// Records a problem when the checkpoint's tensor `full` has a shape other
// than `shape` (checked before its bytes are read).
bool WeightMap::shape_matches(const Checkpoint& checkpoint, const std::string& full, at::IntArrayRef shape) {
  const TensorInfo* info = checkpoint.find(full);
  if (shape.empty() || at::IntArrayRef(info->shape) == shape) return true;
  problems_.push_back("tensor '" + full + "' has shape " + shape_string(info->shape) + ", expected " +
                      shape_string(shape));
  return false;
}

// Tensors come from Checkpoint::tensor() in memory of their own: the model
// keeps them (converted to its dtype) and nothing else of the file.
at::Tensor WeightMap::fetch(const std::string& name, at::IntArrayRef shape, bool required) {
  const auto dot = name.rfind('.');
  if (overlay_ != nullptr && dot != std::string::npos && overlay_modules_.count(name.substr(0, dot)) != 0) {
    const std::string full = overlay_prefix_ + name;
    if (overlay_->find(full) == nullptr) {
      if (required) problems_.push_back("missing tensor '" + full + "' (its module is in the adapter)");
      return {};
    }
    if (!shape_matches(*overlay_, full, shape)) return {};
    const at::Tensor t = overlay_->tensor(full);
    return t.is_floating_point() ? t.to(options_) : t.to(options_.device());
  }
  const std::string full = resolve(name);
  if (full.empty()) {
    if (required) problems_.push_back("missing tensor '" + name + "'");
    return {};
  }
  used_.insert(full);
  if (!shape_matches(checkpoint_, full, shape)) return {};
  at::Tensor t = checkpoint_.tensor(full);
  if (!t.is_floating_point()) {
    problems_.push_back("tensor '" + full + "' holds " + c10::toString(t.scalar_type()) +
                        " values; model weights must be floating point");
    return {};
  }
  if (patch_) t = patch_(full, t);
  return t.to(options_);
}

at::Tensor WeightMap::get(const std::string& name, at::IntArrayRef shape) { return fetch(name, shape, true); }

at::Tensor WeightMap::get_optional(const std::string& name, at::IntArrayRef shape) {
  return fetch(name, shape, false);
}

void WeightMap::check() const {
  if (problems_.empty()) return;
  std::string message = "checkpoint does not match the model (" + std::to_string(problems_.size()) + " problem" +
                        (problems_.size() > 1 ? "s" : "") + "):";
  for (const auto& p : problems_) message += "\n  " + p;
  const auto& files = checkpoint_.files();
  if (!files.empty()) message += "\n  in " + files.front() + (files.size() > 1 ? " (and other shards)" : "");
  throw LoadError(message);
}

std::vector<std::string> WeightMap::unused() const {
  std::vector<std::string> names;
  for (auto& name : checkpoint_.names())
    if (used_.count(name) == 0) names.push_back(name);
  return names;
}

}  // namespace semroute
