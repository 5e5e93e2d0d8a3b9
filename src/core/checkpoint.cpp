#include "core/checkpoint.h"

#include <ATen/ops/from_blob.h>
#include <c10/core/ScalarType.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/file_input.h"
#include "core/weight_memory.h"
#include "semroute/error.h"

namespace semroute {
namespace fs = std::filesystem;
namespace {

using json = nlohmann::json;

// An uninitialized tensor of `nbytes` (core/weight_memory.h).
at::Tensor empty_weight(at::IntArrayRef shape, const at::TensorOptions& options, size_t nbytes) {
  std::shared_ptr<void> pages = allocate_weight_memory(nbytes);
  void* data = pages.get();
  return at::from_blob(data, shape, [pages = std::move(pages)](void*) {}, options);
}

DType from_scalar_type(c10::ScalarType t) {
  switch (t) {
    case c10::ScalarType::Bool: return DType::kBool;
    case c10::ScalarType::Byte: return DType::kU8;
    case c10::ScalarType::Char: return DType::kI8;
    case c10::ScalarType::Short: return DType::kI16;
    case c10::ScalarType::Int: return DType::kI32;
    case c10::ScalarType::Long: return DType::kI64;
    case c10::ScalarType::Half: return DType::kF16;
    case c10::ScalarType::BFloat16: return DType::kBF16;
    case c10::ScalarType::Float: return DType::kF32;
    case c10::ScalarType::Double: return DType::kF64;
    default: throw Unsupported(std::string("cannot save tensors of type ") + c10::toString(t));
  }
}

}  // namespace

void save_safetensors(const fs::path& path, const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::vector<at::Tensor> data;
  size_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    at::Tensor t = tensor.cpu().contiguous();
    const size_t bytes = static_cast<size_t>(t.numel()) * t.element_size();
    header[name] = {{"dtype", dtype_name(from_scalar_type(t.scalar_type()))},
                    {"shape", t.sizes().vec()},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
    data.push_back(std::move(t));
  }
  std::string text = header.dump();
  while ((8 + text.size()) % 8 != 0) text += ' ';
  std::ofstream out(path, std::ios::binary);
  if (!out) throw InvalidInput(path.string() + ": cannot write", ErrorCode::kNotFound);
  const uint64_t n = text.size();
  char length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  out.write(length, 8);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  for (const auto& t : data)
    out.write(static_cast<const char*>(t.data_ptr()), static_cast<std::streamsize>(t.numel() * t.element_size()));
  if (!out) throw InvalidInput(path.string() + ": write failed");
}

c10::ScalarType to_scalar_type(DType dtype) {
  switch (dtype) {
    case DType::kBool: return c10::ScalarType::Bool;
    case DType::kU8: return c10::ScalarType::Byte;
    case DType::kI8: return c10::ScalarType::Char;
    case DType::kI16: return c10::ScalarType::Short;
    case DType::kI32: return c10::ScalarType::Int;
    case DType::kI64: return c10::ScalarType::Long;
    case DType::kF16: return c10::ScalarType::Half;
    case DType::kBF16: return c10::ScalarType::BFloat16;
    case DType::kF32: return c10::ScalarType::Float;
    case DType::kF64: return c10::ScalarType::Double;
    default: break;
  }
  throw Unsupported(std::string("tensors of dtype ") + dtype_name(dtype) + " are not supported by this libtorch");
}

void Checkpoint::add_file(std::shared_ptr<const SafetensorsFile> file) {
  for (const auto& info : file->tensors()) {
    const auto [it, inserted] = entries_.emplace(info.name, Entry{file, &info});
    if (!inserted)
      throw LoadError("tensor '" + info.name + "' appears in both " + it->second.file->path() + " and " +
                      file->path());
  }
  file_paths_.push_back(file->path());
}

Checkpoint Checkpoint::open_weights_in(const fs::path& dir, const std::string& stem) {
  Checkpoint checkpoint;
  const fs::path index = file_in_dir(dir, stem + ".safetensors.index.json");
  const fs::path single = file_in_dir(dir, stem + ".safetensors");
  if (fs::exists(index)) {
    const json j = read_json_file(index);
    const auto map_it = j.find("weight_map");
    if (!j.is_object() || map_it == j.end() || !map_it->is_object())
      throw LoadError(index.string() + ": has no \"weight_map\" object");
    std::vector<std::string> shard_names;
    for (const auto& [tensor, shard] : map_it->items()) {
      if (!shard.is_string()) throw LoadError(index.string() + ": weight_map entry '" + tensor + "' is not a string");
      file_in_dir(dir, shard.get<std::string>());  // shard names must stay in the folder
      shard_names.push_back(shard.get<std::string>());
    }
    std::sort(shard_names.begin(), shard_names.end());
    shard_names.erase(std::unique(shard_names.begin(), shard_names.end()), shard_names.end());
    for (const auto& shard : shard_names) checkpoint.add_file(SafetensorsFile::open(file_in_dir(dir, shard).string()));
    for (const auto& [tensor, shard] : map_it->items()) {
      const TensorInfo* info = checkpoint.find(tensor);
      if (info == nullptr || fs::path(checkpoint.entries_.at(tensor).file->path()).filename() != shard.get<std::string>())
        throw LoadError(index.string() + ": maps tensor '" + tensor + "' to " + shard.get<std::string>() +
                        ", which does not contain it");
    }
  } else if (fs::exists(single)) {
    checkpoint.add_file(SafetensorsFile::open(single.string()));
  } else {
    std::string hint;
    if (fs::exists(dir / "pytorch_model.bin"))
      hint = " (only pytorch_model.bin is present: convert it to safetensors)";
    throw LoadError(dir.string() + ": no " + stem + ".safetensors or " + stem + ".safetensors.index.json" + hint,
                    ErrorCode::kNotFound);
  }
  return checkpoint;
}

Checkpoint Checkpoint::open(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return open_weights_in(path, "model");
  if (!fs::exists(path, ec)) throw LoadError(path.string() + ": does not exist", ErrorCode::kNotFound);
  Checkpoint checkpoint;
  checkpoint.add_file(SafetensorsFile::open(path.string()));
  return checkpoint;
}

std::vector<std::string> Checkpoint::names() const {
  std::vector<std::string> names;
  names.reserve(entries_.size());
  for (const auto& [name, entry] : entries_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

const TensorInfo* Checkpoint::find(const std::string& name) const {
  const auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : it->second.info;
}

at::Tensor Checkpoint::tensor(const std::string& name) const {
  const auto it = entries_.find(name);
  if (it == entries_.end()) throw LoadError("tensor '" + name + "' not found in the checkpoint", ErrorCode::kNotFound);
  const TensorInfo& info = *it->second.info;
  const auto options = at::TensorOptions().dtype(to_scalar_type(info.dtype));
  at::Tensor tensor = empty_weight(info.shape, options, info.nbytes());
  if (info.nbytes() > 0) it->second.file->read(info, tensor.data_ptr());
  return tensor;
}

}  // namespace semroute
