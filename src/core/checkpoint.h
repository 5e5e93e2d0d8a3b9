// A model's weights: one safetensors file or a sharded set described by
// `model.safetensors.index.json`, exposed as libtorch tensors.
#pragma once

#include <ATen/core/Tensor.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/safetensors.h"

namespace semroute {

class Checkpoint {
 public:
  // `path` is a model directory (holding `model.safetensors` or
  // `model.safetensors.index.json`) or a single `.safetensors` file.
  static Checkpoint open(const std::filesystem::path& path);
  // Opens one named weights file in `dir` if present (e.g. a sentence-transformers
  // module's `model.safetensors`); the sharded index is tried first.
  static Checkpoint open_weights_in(const std::filesystem::path& dir, const std::string& stem);

  size_t size() const { return entries_.size(); }
  std::vector<std::string> names() const;  // sorted
  const TensorInfo* find(const std::string& name) const;
  const std::vector<std::string>& files() const { return file_paths_; }

  // The tensor, read from its file into memory of its own (each call reads
  // again). Throws LoadError (kNotFound) if absent, Unsupported for dtypes
  // libtorch lacks.
  at::Tensor tensor(const std::string& name) const;

 private:
  struct Entry {
    std::shared_ptr<const SafetensorsFile> file;
    const TensorInfo* info;
  };
  void add_file(std::shared_ptr<const SafetensorsFile> file);

  std::vector<std::string> file_paths_;
  std::unordered_map<std::string, Entry> entries_;
};

// Maps a safetensors dtype to libtorch's, or throws Unsupported.
c10::ScalarType to_scalar_type(DType dtype);

// Writes tensors (contiguous copies, any supported dtype) as a safetensors
// file: 8-byte-aligned data, tensors in the given order.
void save_safetensors(const std::filesystem::path& path,
                      const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata = {{"format", "pt"}});

}  // namespace semroute
