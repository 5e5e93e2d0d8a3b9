#include "core/file_input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "semroute/error.h"

namespace semroute {
namespace fs = std::filesystem;
namespace {

// Whether `path` is `root` or below it (both canonical).
bool is_within(const fs::path& path, const fs::path& root) {
  auto p = path.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++p)
    if (p == path.end() || *p != *r) return false;
  return true;
}

}  // namespace

OpenFile::OpenFile(const std::string& path, size_t max_bytes) : path_(path) {
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

OpenFile::~OpenFile() { ::close(fd_); }

void OpenFile::read_at(size_t offset, void* out, size_t n) const {
  auto* bytes = static_cast<uint8_t*>(out);
  size_t done = 0;
  while (done < n) {
    const ssize_t got = ::pread(fd_, bytes + done, n - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw LoadError(path_ + ": read failed: " + std::strerror(errno));
    if (got == 0) throw LoadError(path_ + ": the file shrank while it was being read");
    done += static_cast<size_t>(got);
  }
}

std::string read_file(const fs::path& path, size_t max_bytes) {
  const OpenFile file(path.string(), max_bytes);
  std::string bytes(file.size(), '\0');
  file.read_at(0, bytes.data(), bytes.size());
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

nlohmann::ordered_json parse_request_body(std::string_view body) {
  if (const size_t nul = body.find('\0'); nul != std::string_view::npos)
    throw InvalidInput("the request body holds a NUL byte at " + std::to_string(nul) + " (JSON has none)");
  nlohmann::ordered_json request;
  try {
    check_json_nesting(body, "the request body");
    request = nlohmann::ordered_json::parse(body.begin(), body.end());  // UTF-8 and surrogate pairs checked
  } catch (const nlohmann::json::exception& e) {
    throw InvalidInput(std::string("the request body: not valid JSON (") + e.what() + ")");
  } catch (const Error& e) {
    throw InvalidInput(e.what());
  }
  if (!request.is_object()) throw InvalidInput("the request body must be a JSON object");
  return request;
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

}  // namespace semroute
