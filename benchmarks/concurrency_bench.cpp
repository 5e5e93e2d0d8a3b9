// Concurrent clients through the C API, each sending one prompt per call (a
// router's goroutines), with and without dynamic batching: throughput and
// p50 / p99 latency, and the ratios that matter, measured in one run.
//
//   semroute_concurrency_bench [--preset modernbert-base] [--clients 1,8,32] [--tokens 64]
//                              [--max-batch 16] [--max-wait-us 2000] [--seconds 5] [--dtype float32]
//
// Without batching every client runs its own forward (libtorch's threads per
// call); with it, calls are coalesced on one compute lane.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "core/cpu_features.h"
#include "core/runtime.h"
#include "models/random_model.h"
#include "semroute/semroute.h"

namespace {

using namespace semroute::bench;

struct Flags {
  std::string preset = "modernbert-base", dtype = "float32";
  std::vector<int64_t> clients = {1, 8, 32};
  int64_t tokens = 64, max_batch = 16, max_wait_us = 2000;
  double seconds = 5;
};

Flags parse(int argc, char** argv) {
  Flags f;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--preset") f.preset = value;
    if (flag == "--dtype") f.dtype = value;
    if (flag == "--clients") f.clients = parse_list(value);
    if (flag == "--tokens") f.tokens = std::stoll(value);
    if (flag == "--max-batch") f.max_batch = std::stoll(value);
    if (flag == "--max-wait-us") f.max_wait_us = std::stoll(value);
    if (flag == "--seconds") f.seconds = std::stod(value);
  }
  return f;
}

semroute_model* load(const std::filesystem::path& dir, const Flags& f, bool batching) {
  semroute_model_params params = semroute_model_default_params();
  params.dtype = f.dtype.c_str();
  params.max_batch = batching ? static_cast<uint32_t>(f.max_batch) : 0;
  params.max_wait_us = static_cast<uint32_t>(f.max_wait_us);
  semroute_model* model = nullptr;
  if (semroute_status* status = semroute_model_load(dir.c_str(), &params, &model)) {
    std::fprintf(stderr, "load: %s\n", semroute_status_message(status));
    std::exit(1);
  }
  return model;
}

struct Result {
  double per_second = 0, p50_ms = 0, p99_ms = 0;
};

// `clients` threads call classify back to back for `seconds`.
Result run(const semroute_model* model, int64_t clients, const std::vector<std::string>& texts, double seconds) {
  std::vector<std::vector<double>> latencies(clients);
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  const auto start = Clock::now();
  for (int64_t c = 0; c < clients; ++c)
    threads.emplace_back([&, c] {
      for (size_t i = c; !stop.load(); i += clients) {
        const std::string& text = texts[i % texts.size()];
        const auto t = Clock::now();
        semroute_classifications* out = nullptr;
        semroute_status_free(semroute_classify(model, text.data(), text.size(), &out));
        semroute_classifications_free(out);
        latencies[c].push_back(seconds_since(t) * 1e3);
      }
    });
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& t : threads) t.join();
  const double elapsed = seconds_since(start);
  std::vector<double> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  Result r;
  r.per_second = static_cast<double>(all.size()) / elapsed;
  r.p50_ms = all[all.size() / 2];
  r.p99_ms = all[std::min(all.size() - 1, all.size() * 99 / 100)];
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const Flags f = parse(argc, argv);
  semroute::ensure_runtime_initialized();
  const auto dir = std::filesystem::temp_directory_path() / ("semroute-bench-" + f.preset);
  write_classification_model(f.preset, dir);
  // Distinct prompts of --tokens tokens (common words are one token each, plus CLS and SEP).
  const std::vector<std::string> words = {"the", "model", "routes", "a", "question", "to", "math", "law",
                                          "and", "science", "of", "every", "day", "with", "care", "in"};
  std::vector<std::string> texts;
  for (size_t i = 0; i < 64; ++i) {
    std::string text;
    for (int64_t w = 0; w < f.tokens - 2; ++w) text += (w ? " " : "") + words[(i * 7 + w * 3 + w / 5) % words.size()];
    texts.push_back(text);
  }
  semroute_model* plain = load(dir, f, false);
  semroute_model* batched = load(dir, f, true);
  std::printf("%s; preset %s, %s, %d threads, ~%lld tokens per prompt, max_batch %lld, max_wait %lld us\n",
              semroute::cpu_features().describe().c_str(), f.preset.c_str(), f.dtype.c_str(),
              semroute::compute_threads(), static_cast<long long>(f.tokens), static_cast<long long>(f.max_batch),
              static_cast<long long>(f.max_wait_us));
  const Result single = run(plain, 1, texts, f.seconds);
  std::printf("%8s %10s %10s %10s | %10s %10s %10s | %10s %14s\n", "clients", "req/s", "p50 ms", "p99 ms",
              "req/s B", "p50 ms B", "p99 ms B", "B / plain", "p99 B / bound");
  for (int64_t clients : f.clients) {
    const Result a = run(plain, clients, texts, f.seconds), b = run(batched, clients, texts, f.seconds);
    // The target: p99 with batching within 2x a single request plus max_wait.
    const double bound = 2 * single.p50_ms + f.max_wait_us / 1e3;
    std::printf("%8lld %10.1f %10.1f %10.1f | %10.1f %10.1f %10.1f | %10.2f %14.2f\n", static_cast<long long>(clients),
                a.per_second, a.p50_ms, a.p99_ms, b.per_second, b.p50_ms, b.p99_ms, b.per_second / a.per_second,
                b.p99_ms / bound);
    std::fflush(stdout);
  }
  semroute_model_free(batched);
  semroute_model_free(plain);
  return 0;
}
