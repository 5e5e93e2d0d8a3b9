#include "core/file_input.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "semroute/error.h"

namespace semroute {
namespace fs = std::filesystem;
namespace {

// An open descriptor of a regular file, closed on scope exit.
class RegularFile {
 public:
  RegularFile(const std::string& path, size_t max_bytes) : path_(path) {
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd_ < 0) {
      const int err = errno;
      throw LoadError(path + ": cannot open: " + std::strerror(err),
                      err == ENOENT || err == ENOTDIR ? ErrorCode::kNotFound : ErrorCode::kInvalidModel);
    }
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd_);
      throw LoadError(path + ": not a regular file (a directory, FIFO, socket or device)");
    }
    size_ = static_cast<size_t>(st.st_size);
    if (size_ > max_bytes) {
      ::close(fd_);
      throw LoadError(path + ": " + std::to_string(size_) + " bytes exceeds the limit of " + std::to_string(max_bytes) +
                      " bytes for this kind of file");
    }
  }
  ~RegularFile() { ::close(fd_); }
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  size_t size() const { return size_; }

  // Reads exactly size() bytes; a file that shrinks meanwhile is an error.
  void read_all(uint8_t* out) const {
    size_t done = 0;
    while (done < size_) {
      const ssize_t n = ::pread(fd_, out + done, size_ - done, static_cast<off_t>(done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw LoadError(path_ + ": read failed: " + std::strerror(errno));
      if (n == 0) throw LoadError(path_ + ": the file shrank while it was being read");
      done += static_cast<size_t>(n);
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
  size_t size_ = 0;
};

// Whether `path` is `root` or below it (both canonical).
bool is_within(const fs::path& path, const fs::path& root) {
  auto p = path.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++p)
    if (p == path.end() || *p != *r) return false;
  return true;
}

}  // namespace

std::string read_file(const fs::path& path, size_t max_bytes) {
  const RegularFile file(path.string(), max_bytes);
  std::string bytes(file.size(), '\0');
  file.read_all(reinterpret_cast<uint8_t*>(bytes.data()));
  return bytes;
}

void check_json_nesting(std::string_view text, const std::string& source) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxNestingDepth)
        throw LoadError(source + ": JSON nested deeper than " + std::to_string(kMaxNestingDepth) + " levels");
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
}

nlohmann::json parse_json(std::string_view text, const std::string& source) {
  check_json_nesting(text, source);
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    throw LoadError(source + ": not valid JSON (" + e.what() + ")");
  }
}

nlohmann::json read_json_file(const fs::path& path, size_t max_bytes) {
  return parse_json(read_file(path, max_bytes), path.string());
}

fs::path file_in_dir(const fs::path& dir, const std::string& name) {
  const fs::path relative(name);
  const bool climbs = std::any_of(relative.begin(), relative.end(), [](const fs::path& part) { return part == ".."; });
  if (name.empty() || relative.is_absolute() || climbs || name.find('\0') != std::string::npos)
    throw LoadError(dir.string() + ": refers to '" + name + "', which is not a path inside the folder");
  const fs::path path = dir / relative;
  std::error_code ec;
  const fs::path real = fs::weakly_canonical(path, ec);
  const fs::path root = fs::weakly_canonical(dir, ec);
  if (ec || is_within(real, root)) return path;  // (an unreadable path fails when it is opened)
  const fs::path repo = root.parent_path().parent_path();
  if (root.parent_path().filename() == "snapshots" && is_within(real, repo / "blobs")) return path;
  throw LoadError(path.string() + ": links to " + real.string() + ", outside the folder " + dir.string());
}

std::shared_ptr<const FileBytes> FileBytes::read(const std::string& path) {
  const RegularFile file(path, SIZE_MAX);
  uint8_t* data = nullptr;
  if (file.size() > 0) {
    // Anonymous pages: page-aligned for zero-copy tensor views, returned to the
    // system whole when the last view goes.
    void* pages = ::mmap(nullptr, file.size(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pages == MAP_FAILED) throw Error(ErrorCode::kOutOfMemory, path + ": cannot allocate " + std::to_string(file.size()) + " bytes");
    data = static_cast<uint8_t*>(pages);
    // Huge pages where the kernel allows them: 512x fewer page faults while
    // the file is read in (the larger part of a load on virtual machines).
    ::madvise(pages, file.size(), MADV_HUGEPAGE);
    try {
      file.read_all(data);
    } catch (...) {
      ::munmap(pages, file.size());
      throw;
    }
  }
  return std::shared_ptr<const FileBytes>(new FileBytes(path, data, file.size()));
}

FileBytes::~FileBytes() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

}  // namespace semroute
