// Helpers shared by the fuzz targets.
#pragma once

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace semroute::fuzz {

// For targets that run a model: oneDNN's JIT kernels may point the stack
// pointer into a heap buffer for a while, and libFuzzer's SIGALRM (its
// per-input timeout check) arriving then runs its handler on that "stack",
// which ASan reports as a heap overflow. Every installed handler that can
// runs on a stack of its own instead. Call it from LLVMFuzzerTestOneInput:
// libFuzzer installs its handlers after LLVMFuzzerInitialize.
inline void signal_handlers_on_own_stack() {
  static const bool done = [] {
    constexpr size_t kSize = size_t{1} << 20;  // the handlers print stack traces
    void* memory = mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) std::abort();
    stack_t stack{};
    stack.ss_sp = memory;
    stack.ss_size = kSize;
    if (sigaltstack(&stack, nullptr) != 0) std::abort();
    for (int signal : {SIGALRM, SIGUSR1, SIGUSR2, SIGINT, SIGTERM, SIGXFSZ}) {
      struct sigaction action {};
      if (sigaction(signal, nullptr, &action) != 0) std::abort();
      if (action.sa_handler == SIG_DFL || action.sa_handler == SIG_IGN) continue;
      action.sa_flags |= SA_ONSTACK;
      if (sigaction(signal, &action, nullptr) != 0) std::abort();
    }
    return true;
  }();
  (void)done;
}

// For fuzz targets whose loaders take a path: the input written to one
// private temporary file, so the whole loading path (file checks included)
// is what gets fuzzed.
// The path of this process's input file, rewritten with `data` at each call
// and removed when the process exits.
inline const std::string& write_input(const uint8_t* data, size_t size, const char* suffix) {
  struct InputFile {
    std::string path;
    ~InputFile() { std::remove(path.c_str()); }
  };
  static const InputFile file{std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
                              "/semroute-fuzz-" + std::to_string(getpid()) + suffix};
  const std::string& path = file.path;
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path;
}

}  // namespace semroute::fuzz
