// What a program pays to start answering: dlopen of libsemroute.so (with
// libtorch's own start-up), the model load, the first and the second answer,
// and resident memory against the checkpoint's size. Links nothing of ours:
// the library is opened at run time, as a Go program's cgo loader would.
//
//   semroute_startup_bench LIBSEMROUTE.so MODEL_DIR [embedding|auto] [TOKENIZER]
//
// scripts/bench-startup.sh runs it on ModernBERT-base- and Qwen3-0.6B-sized checkpoints.
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "semroute/semroute.h"

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// VmRSS or VmHWM from /proc/self/status, in MB.
double status_mb(const std::string& key) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind(key + ":", 0) == 0) return std::stod(line.substr(key.size() + 1)) / 1024.0;
  return 0;
}

std::string cpu_line() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string model, flags;
  for (std::string line; std::getline(cpuinfo, line);) {
    if (model.empty() && line.rfind("model name", 0) == 0) model = line.substr(line.find(':') + 2);
    if (flags.empty() && line.rfind("flags", 0) == 0) flags = line + " ";
  }
  std::string isa = "baseline";
  for (const char* f : {"avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16"})
    if (flags.find(std::string(" ") + f + " ") != std::string::npos) isa = f;
  return model + " (widest: " + isa + ")";
}

template <class Fn>
Fn symbol(void* lib, const char* name) {
  void* s = dlsym(lib, name);
  if (s == nullptr) {
    std::fprintf(stderr, "%s: %s\n", name, dlerror());
    std::exit(1);
  }
  return reinterpret_cast<Fn>(s);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s LIBSEMROUTE.so MODEL_DIR [embedding|auto] [TOKENIZER]\n", argv[0]);
    return 2;
  }
  const bool embedding = argc > 3 && std::string(argv[3]) == "embedding";
  const double rss_start = status_mb("VmRSS");
  auto start = Clock::now();
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  const double dlopen_ms = ms_since(start);
  const double rss_library = status_mb("VmRSS");

  auto params_of = symbol<semroute_model_params (*)()>(lib, "semroute_model_default_params");
  auto load = symbol<semroute_status* (*)(const char*, const semroute_model_params*, semroute_model**)>(
      lib, "semroute_model_load");
  auto message = symbol<const char* (*)(const semroute_status*)>(lib, "semroute_status_message");
  auto classify = symbol<semroute_status* (*)(const semroute_model*, const char*, size_t, semroute_classifications**)>(
      lib, "semroute_classify");
  auto free_results = symbol<void (*)(semroute_classifications*)>(lib, "semroute_classifications_free");
  auto dim_of = symbol<size_t (*)(const semroute_model*)>(lib, "semroute_model_embedding_dim");
  auto embed = symbol<semroute_status* (*)(const semroute_model*, const char*, size_t, float*, size_t)>(
      lib, "semroute_embed");
  auto free_model = symbol<void (*)(semroute_model*)>(lib, "semroute_model_free");

  semroute_model_params params = params_of();
  if (embedding) params.task = SEMROUTE_TASK_EMBEDDING;
  if (argc > 4) params.tokenizer = argv[4];
  semroute_model* model = nullptr;
  start = Clock::now();
  if (semroute_status* status = load(argv[2], &params, &model)) {
    std::fprintf(stderr, "load: %s\n", message(status));
    return 1;
  }
  const double load_ms = ms_since(start);
  const std::string text = "Which model should answer a question about the derivative of x squared?";
  std::vector<float> row;
  const auto answer = [&] {
    const auto t = Clock::now();
    if (embedding) {
      row.resize(dim_of(model));
      if (semroute_status* status = embed(model, text.data(), text.size(), row.data(), row.size())) {
        std::fprintf(stderr, "embed: %s\n", message(status));
        std::exit(1);
      }
    } else {
      semroute_classifications* out = nullptr;
      if (semroute_status* status = classify(model, text.data(), text.size(), &out)) {
        std::fprintf(stderr, "classify: %s\n", message(status));
        std::exit(1);
      }
      free_results(out);
    }
    return ms_since(t);
  };
  const double first_ms = answer(), second_ms = answer();
  double file_mb = 0;
  for (const auto& entry : std::filesystem::directory_iterator(argv[2]))
    if (entry.path().extension() == ".safetensors") file_mb += static_cast<double>(entry.file_size()) / 1048576.0;
  std::printf("%s\n%s: dlopen %.0f ms (library RSS %.0f MB); load %.0f ms; first answer %.1f ms, second %.1f ms "
              "(first / second %.2f); dlopen to first answer %.0f ms; weights on disk %.0f MB, resident after the "
              "first answer %.0f MB (peak %.0f MB)\n",
              cpu_line().c_str(), argv[2], dlopen_ms, rss_library - rss_start, load_ms, first_ms, second_ms,
              first_ms / second_ms, dlopen_ms + load_ms + first_ms, file_mb, status_mb("VmRSS"), status_mb("VmHWM"));
  free_model(model);
  return 0;
}
