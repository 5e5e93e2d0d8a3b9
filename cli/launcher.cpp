// The `semroute` executable: answers `version` at once and loads the
// commands (libsemroute_cli.so, beside it or in ../lib/semroute) for
// everything else. Loading libtorch alone takes ~0.7 s of static
// initialization, which a version query or a shell completion should not pay.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>

#include "semroute/version.h"

namespace {

std::filesystem::path executable_dir() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path(".") : self.parent_path();
}

}  // namespace

#if defined(SEMROUTE_CLI_LINKED)
extern "C" int semroute_cli_main(int argc, char** argv);
#endif

int main(int argc, char** argv) {
  if (argc == 2 && (std::strcmp(argv[1], "version") == 0 || std::strcmp(argv[1], "--version") == 0)) {
    std::printf("semroute %s\n", SEMROUTE_VERSION_STRING);
    return 0;
  }
#if defined(SEMROUTE_CLI_LINKED)
  return semroute_cli_main(argc, argv);  // sanitizer builds (cli/CMakeLists.txt)
#else
  const auto dir = executable_dir();
  std::string tried;
  for (const auto& path : {dir / "libsemroute_cli.so", dir / ".." / "lib" / "semroute" / "libsemroute_cli.so"}) {
    void* module = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (module == nullptr) {
      tried += std::string("\n  ") + dlerror();
      continue;
    }
    using Main = int (*)(int, char**);
    const auto run = reinterpret_cast<Main>(dlsym(module, "semroute_cli_main"));
    if (run == nullptr) {
      std::fprintf(stderr, "semroute: %s has no semroute_cli_main\n", path.c_str());
      return 1;
    }
    return run(argc, argv);
  }
  std::fprintf(stderr, "semroute: cannot load the commands module libsemroute_cli.so:%s\n", tried.c_str());
  return 1;
#endif
}
