#include "core/safetensors.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "core/file_input.h"
#include "semroute/error.h"

namespace semroute {
namespace {

using json = nlohmann::json;

struct DTypeEntry {
  DType dtype;
  const char* name;
  size_t size;
};

constexpr DTypeEntry kDTypes[] = {
    {DType::kBool, "BOOL", 1}, {DType::kU8, "U8", 1},       {DType::kI8, "I8", 1},
    {DType::kI16, "I16", 2},   {DType::kU16, "U16", 2},     {DType::kI32, "I32", 4},
    {DType::kU32, "U32", 4},   {DType::kI64, "I64", 8},     {DType::kU64, "U64", 8},
    {DType::kF16, "F16", 2},   {DType::kBF16, "BF16", 2},   {DType::kF32, "F32", 4},
    {DType::kF64, "F64", 8},   {DType::kF8E4M3, "F8_E4M3", 1}, {DType::kF8E5M2, "F8_E5M2", 1},
};

const DTypeEntry& entry(DType dtype) {
  for (const auto& e : kDTypes)
    if (e.dtype == dtype) return e;
  throw InternalError("unknown DType value");
}

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw LoadError(source + ": invalid safetensors file: " + what);
}

uint64_t read_u64_le(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Parses the JSON header, refusing duplicate top-level keys (nlohmann would
// silently keep the last one, which is how polyglot files hide tensors).
json parse_header_json(const char* begin, size_t size, const std::string& source) {
  std::set<std::string> keys;
  std::string duplicate;
  auto on_event = [&](int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::key && depth == 1 && duplicate.empty() &&
        !keys.insert(parsed.get<std::string>()).second) {
      duplicate = parsed.get<std::string>();
    }
    return true;
  };
  json header;
  check_json_nesting(std::string_view(begin, size), source);
  try {
    header = json::parse(begin, begin + size, on_event);
  } catch (const json::exception& e) {
    fail(source, std::string("header is not valid JSON (") + e.what() + ")");
  }
  if (!duplicate.empty()) fail(source, "duplicate key '" + duplicate + "' in header");
  if (!header.is_object()) fail(source, "header is not a JSON object");
  return header;
}

uint64_t as_unsigned(const json& v, const std::string& source, const std::string& what) {
  if (!v.is_number_unsigned()) fail(source, what + " must be a non-negative integer");
  return v.get<uint64_t>();
}

TensorInfo parse_tensor(const std::string& name, const json& j, const std::string& source) {
  const std::string where = "tensor '" + name + "'";
  if (!j.is_object()) fail(source, where + " is not an object");
  TensorInfo info;
  info.name = name;

  const auto dtype_it = j.find("dtype");
  if (dtype_it == j.end() || !dtype_it->is_string()) fail(source, where + " has no dtype string");
  const auto dtype = parse_dtype(dtype_it->get<std::string>());
  if (!dtype) fail(source, where + " has unknown dtype '" + dtype_it->get<std::string>() + "'");
  info.dtype = *dtype;

  const auto shape_it = j.find("shape");
  if (shape_it == j.end() || !shape_it->is_array()) fail(source, where + " has no shape array");
  if (shape_it->size() > 32) fail(source, where + " has more than 32 dimensions");
  uint64_t numel = 1;
  for (const auto& d : *shape_it) {
    const uint64_t dim = as_unsigned(d, source, where + " shape entry");
    if (dim > static_cast<uint64_t>(INT64_MAX)) fail(source, where + " has a dimension that overflows");
    if (__builtin_mul_overflow(numel, dim, &numel))
      fail(source, where + ": overflow computing the element count from its shape");
    info.shape.push_back(static_cast<int64_t>(dim));
  }
  uint64_t nbytes = 0;
  if (__builtin_mul_overflow(numel, static_cast<uint64_t>(dtype_size(info.dtype)), &nbytes))
    fail(source, where + ": overflow computing its byte size");

  const auto offsets_it = j.find("data_offsets");
  if (offsets_it == j.end() || !offsets_it->is_array() || offsets_it->size() != 2)
    fail(source, where + " has no [begin, end] data_offsets");
  const uint64_t begin = as_unsigned((*offsets_it)[0], source, where + " data_offsets");
  const uint64_t end = as_unsigned((*offsets_it)[1], source, where + " data_offsets");
  if (end < begin) fail(source, where + " has data_offsets with end before begin");
  if (end - begin != nbytes)
    fail(source, where + " spans " + std::to_string(end - begin) + " bytes but its shape and dtype need " +
                     std::to_string(nbytes));
  info.begin = static_cast<size_t>(begin);
  info.end = static_cast<size_t>(end);
  return info;
}

std::map<std::string, std::string> parse_metadata(const json& j, const std::string& source) {
  if (!j.is_object()) fail(source, "__metadata__ must be an object of strings");
  std::map<std::string, std::string> metadata;
  for (const auto& [key, value] : j.items()) {
    if (!value.is_string()) fail(source, "__metadata__ value '" + key + "' is not a string");
    metadata[key] = value.get<std::string>();
  }
  return metadata;
}

// Tensors must tile the data buffer exactly: no gaps, no overlaps, nothing after.
void check_layout(std::vector<TensorInfo>& tensors, size_t buffer_size, const std::string& source) {
  std::stable_sort(tensors.begin(), tensors.end(), [](const TensorInfo& a, const TensorInfo& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  size_t expected = 0;
  for (const auto& t : tensors) {
    if (t.begin > expected) fail(source, "gap in the data buffer before tensor '" + t.name + "'");
    if (t.begin < expected) fail(source, "tensor '" + t.name + "' overlaps the previous tensor");
    if (t.end > buffer_size)
      fail(source, "tensor '" + t.name + "' ends at byte " + std::to_string(t.end) +
                       ", beyond the data buffer of " + std::to_string(buffer_size) + " bytes");
    expected = t.end;
  }
  if (expected != buffer_size)
    fail(source, "the data buffer has " + std::to_string(buffer_size - expected) +
                     " trailing bytes that no tensor covers");
}

// The JSON header's length from the first 8 bytes of a file of `size` bytes.
size_t header_length(const uint8_t* data, size_t size, const std::string& source) {
  if (size < 8) fail(source, "file is " + std::to_string(size) + " bytes, shorter than the 8-byte header length");
  const uint64_t header_len = read_u64_le(data);
  if (header_len > kMaxSafetensorsHeader)
    fail(source, "header length " + std::to_string(header_len) + " exceeds the limit of " +
                     std::to_string(kMaxSafetensorsHeader) + " bytes");
  if (header_len > size - 8)
    fail(source, "header length " + std::to_string(header_len) + " is larger than the file (" +
                     std::to_string(size) + " bytes)");
  return static_cast<size_t>(header_len);
}

// Parses the header's JSON (`header_len` bytes) of a file of `size` bytes.
SafetensorsHeader parse_header(const uint8_t* json_bytes, size_t header_len, size_t size, const std::string& source) {
  if (header_len == 0 || json_bytes[0] != '{') fail(source, "header does not start with '{'");
  const json header = parse_header_json(reinterpret_cast<const char*>(json_bytes), header_len, source);
  SafetensorsHeader result;
  result.data_offset = 8 + header_len;
  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") {
      result.metadata = parse_metadata(value, source);
    } else {
      result.tensors.push_back(parse_tensor(name, value, source));
    }
  }
  check_layout(result.tensors, size - result.data_offset, source);
  return result;
}

}  // namespace

size_t dtype_size(DType dtype) { return entry(dtype).size; }
const char* dtype_name(DType dtype) { return entry(dtype).name; }

std::optional<DType> parse_dtype(const std::string& name) {
  for (const auto& e : kDTypes)
    if (name == e.name) return e.dtype;
  return std::nullopt;
}

int64_t TensorInfo::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

SafetensorsHeader parse_safetensors(const uint8_t* data, size_t size, const std::string& source) {
  const size_t header_len = header_length(data, size, source);
  return parse_header(data + 8, header_len, size, source);
}

SafetensorsFile::SafetensorsFile(std::unique_ptr<const OpenFile> file, SafetensorsHeader header)
    : file_(std::move(file)), header_(std::move(header)) {
  for (size_t i = 0; i < header_.tensors.size(); ++i) by_name_.emplace(header_.tensors[i].name, i);
}

SafetensorsFile::~SafetensorsFile() = default;

std::shared_ptr<const SafetensorsFile> SafetensorsFile::open(const std::string& path) {
  auto file = std::make_unique<const OpenFile>(path);
  uint8_t length[8] = {};
  if (file->size() >= 8) file->read_at(0, length, 8);
  const size_t header_len = header_length(length, file->size(), path);
  std::vector<uint8_t> json_bytes(header_len);
  file->read_at(8, json_bytes.data(), header_len);
  auto header = parse_header(json_bytes.data(), header_len, file->size(), path);
  return std::shared_ptr<const SafetensorsFile>(new SafetensorsFile(std::move(file), std::move(header)));
}

const std::string& SafetensorsFile::path() const { return file_->path(); }

const TensorInfo* SafetensorsFile::find(const std::string& name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &header_.tensors[it->second];
}

void SafetensorsFile::read(const TensorInfo& info, void* out) const {
  file_->read_at(header_.data_offset + info.begin, out, info.nbytes());
}

}  // namespace semroute
