// Reading the files a user hands us (model folders, tokenizers, adapters,
// YAML) without trusting them: only regular files are opened, and without
// blocking (a FIFO or a device is refused, never waited on); sizes are capped
// before anything is read; JSON nesting is capped before it can recurse; a
// file a folder names must stay inside that folder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace semroute {

// Size caps, checked with fstat before a byte is read.
inline constexpr size_t kMaxConfigFileBytes = size_t{16} << 20;     // config.json, adapter_config.json, YAML, …
inline constexpr size_t kMaxTokenizerFileBytes = size_t{128} << 20;  // tokenizer.json (Gemma's is 33 MB)
// Deepest JSON / YAML nesting accepted (real files nest fewer than 10 levels).
inline constexpr int kMaxNestingDepth = 64;

// The bytes of a regular file of at most `max_bytes`. Throws LoadError
// (kNotFound when it does not exist).
std::string read_file(const std::filesystem::path& path, size_t max_bytes = kMaxConfigFileBytes);

// Throws LoadError when JSON text nests deeper than kMaxNestingDepth (a linear
// scan; the parser and every later copy of the value recurse per level).
void check_json_nesting(std::string_view text, const std::string& source);

// check_json_nesting + nlohmann::json::parse; errors name `source`.
nlohmann::json parse_json(std::string_view text, const std::string& source);

// A request's body as a JSON object, size and nesting bounded: InvalidInput
// (the client's error, not a broken file's) for a NUL byte, JSON that does
// not parse or is not an object. Its keys keep their order (questions are
// answered in the order asked).
nlohmann::ordered_json parse_request_body(std::string_view body);

// read_file + parse_json; errors name the file.
nlohmann::json read_json_file(const std::filesystem::path& path, size_t max_bytes = kMaxConfigFileBytes);

// `dir / name` for a file a model folder refers to by name (a shard, a
// sentence-transformers module, config.json itself): `name` must be relative
// without "..", and the file, after symlinks, must lie inside `dir` — or, for
// the Hugging Face cache layout (snapshots/<rev>/file -> ../../blobs/<hash>),
// in the repository's blobs folder. Throws LoadError.
std::filesystem::path file_in_dir(const std::filesystem::path& dir, const std::string& name);

// A regular file held open for reads at given offsets (a model's weights:
// each tensor is read into memory of its own when a model asks for it, so a
// load never holds the file and the model side by side, and a file that
// shrinks or is rewritten on disk gives an error, never a fault).
class OpenFile {
 public:
  // Throws LoadError (kNotFound if it does not exist).
  explicit OpenFile(const std::string& path, size_t max_bytes = SIZE_MAX);
  ~OpenFile();
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;

  size_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // Reads exactly `n` bytes at `offset` (thread-safe); a file that has
  // shrunk meanwhile throws LoadError.
  void read_at(size_t offset, void* out, size_t n) const;

 private:
  std::string path_;
  int fd_ = -1;
  size_t size_ = 0;
};

}  // namespace semroute
