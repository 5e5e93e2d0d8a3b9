// The safetensors format: an 8-byte little-endian header length N, N bytes of
// JSON describing every tensor, then one contiguous byte buffer. The parser
// validates the whole header before any tensor byte is touched; it knows
// nothing of libtorch, so it can be fuzzed on its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace semroute {

class OpenFile;

enum class DType : uint8_t {
  kBool, kU8, kI8, kI16, kU16, kI32, kU32, kI64, kU64,
  kF16, kBF16, kF32, kF64, kF8E4M3, kF8E5M2,
};

size_t dtype_size(DType dtype);
const char* dtype_name(DType dtype);  // the safetensors spelling, e.g. "BF16"
std::optional<DType> parse_dtype(const std::string& name);

struct TensorInfo {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  size_t begin = 0;  // byte offsets relative to the start of the data buffer
  size_t end = 0;

  int64_t numel() const;
  size_t nbytes() const { return end - begin; }
};

struct SafetensorsHeader {
  std::vector<TensorInfo> tensors;  // sorted by data offset
  std::map<std::string, std::string> metadata;
  size_t data_offset = 0;           // where the data buffer starts in the file
};

// Largest header accepted (the reference implementation's limit).
constexpr size_t kMaxSafetensorsHeader = 100'000'000;

// Parses and validates a complete safetensors image of `size` bytes. Every
// problem throws LoadError naming `source` and the offending tensor.
SafetensorsHeader parse_safetensors(const uint8_t* data, size_t size, const std::string& source);

// A validated safetensors file: the header is read and checked at open, each
// tensor's bytes when read() asks for them.
class SafetensorsFile {
 public:
  static std::shared_ptr<const SafetensorsFile> open(const std::string& path);
  ~SafetensorsFile();

  const std::string& path() const;
  const SafetensorsHeader& header() const { return header_; }
  const std::vector<TensorInfo>& tensors() const { return header_.tensors; }
  const TensorInfo* find(const std::string& name) const;
  // Reads the tensor's info.nbytes() bytes into `out` (thread-safe). Throws
  // LoadError when the file has shrunk since it was opened.
  void read(const TensorInfo& info, void* out) const;

 private:
  SafetensorsFile(std::unique_ptr<const OpenFile> file, SafetensorsHeader header);

  std::unique_ptr<const OpenFile> file_;
  SafetensorsHeader header_;
  std::unordered_map<std::string, size_t> by_name_;
};

}  // namespace semroute
