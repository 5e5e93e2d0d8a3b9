// For fuzz targets whose loaders take a path: the input written to one
// private temporary file, so the whole loading path (file checks included)
// is what gets fuzzed.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace semroute::fuzz {

// The path of this process's input file, rewritten with `data` at each call.
inline const std::string& write_input(const uint8_t* data, size_t size, const char* suffix) {
  static const std::string path = [suffix] {
    std::string p = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/semroute-fuzz-" +
                    std::to_string(getpid()) + suffix;
    return p;
  }();
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path;
}

}  // namespace semroute::fuzz
