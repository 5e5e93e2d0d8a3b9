#include "core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "semroute/error.h"

namespace semroute {

std::shared_ptr<const MappedFile> MappedFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    throw LoadError(path + ": cannot open: " + std::strerror(err),
                    err == ENOENT ? ErrorCode::kNotFound : ErrorCode::kInvalidModel);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw LoadError(path + ": not a regular file");
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void* data = nullptr;
  if (size > 0) {
    // MAP_PRIVATE + PROT_WRITE: tensors viewing the mapping may be written by
    // mistake without faulting; writes stay private to this process.
    data = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (data == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      throw LoadError(path + ": cannot map: " + std::strerror(err));
    }
  }
  ::close(fd);
  return std::shared_ptr<const MappedFile>(
      new MappedFile(path, static_cast<uint8_t*>(data), size));
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

}  // namespace semroute
