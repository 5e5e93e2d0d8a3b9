// A whole file mapped into memory, read-only from the file's point of view.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace semroute {

class MappedFile {
 public:
  // Maps `path`; throws LoadError (kNotFound if it does not exist).
  static std::shared_ptr<const MappedFile> open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  MappedFile(std::string path, uint8_t* data, size_t size)
      : path_(std::move(path)), data_(data), size_(size) {}

  std::string path_;
  uint8_t* data_;
  size_t size_;
};

}  // namespace semroute
