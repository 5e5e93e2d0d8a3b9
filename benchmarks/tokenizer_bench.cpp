// Tokenizer throughput: tokens per second on English prose and on mixed
// multilingual text, single-threaded and for a batch spread over all cores.
//   build/benchmarks/semroute_tokenizer_bench [--benchmark_filter=qwen3]
// Tokenizer files: tests/data/tokenizers/, tests/data/external/ (run
// scripts/fetch-tokenizers.sh first).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tokenizers/tokenizer.h"

namespace {

namespace fs = std::filesystem;

const fs::path kData = SEMROUTE_TEST_DATA;

const std::map<std::string, fs::path>& files() {
  static const std::map<std::string, fs::path> f = {
      {"bert", kData / "tokenizers/bert/tokenizer.json"},
      {"modernbert", kData / "tokenizers/modernbert/tokenizer.json"},
      {"qwen3", kData / "external/qwen3/tokenizer.json"},
      {"gemma3", kData / "external/gemma3/tokenizer.json"},
  };
  return f;
}

const semroute::Tokenizer& tokenizer(const std::string& name) {
  static std::map<std::string, std::shared_ptr<const semroute::Tokenizer>> cache;
  auto& t = cache[name];
  if (!t) t = semroute::load_tokenizer(files().at(name));
  return *t;
}

std::string english(size_t bytes) {
  const std::string paragraph =
      "Semantic routers classify every prompt before it reaches a language model. They decide which model should "
      "answer, whether the request is safe, and whether a cached answer already exists. Because this happens on "
      "every request, the classification must be fast: a few milliseconds at most, including tokenization. ";
  std::string text;
  while (text.size() < bytes) text += paragraph;
  return text.substr(0, bytes);
}

std::string mixed(size_t bytes) {
  const std::string paragraph =
      "Route this request: «Quelle est la capitale de l'Australie ?» — Столица Австралии — Канберра. "
      "日本語の質問にも答えてください。 한국어도 지원합니다. Emoji 😀👍🏽 and code: for (int i = 0; i < n; ++i) sum += x[i]; ";
  std::string text;
  while (text.size() < bytes) text += paragraph;
  return text;
}

void encode_single(benchmark::State& state, const std::string& name, const std::string& text) {
  const auto& tok = tokenizer(name);
  size_t tokens = 0;
  for (auto _ : state) {
    const auto e = tok.encode(text);
    tokens += e.size();
    benchmark::DoNotOptimize(e.ids.data());
  }
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
  state.counters["MB/s"] = benchmark::Counter(static_cast<double>(text.size() * state.iterations()) / 1e6,
                                              benchmark::Counter::kIsRate);
}

void encode_batch(benchmark::State& state, const std::string& name) {
  const auto& tok = tokenizer(name);
  const std::string text = english(1024);
  const std::vector<std::string_view> batch(64, text);
  size_t tokens = 0;
  for (auto _ : state) {
    const auto encodings = tok.encode_batch(batch);
    for (const auto& e : encodings) tokens += e.size();
  }
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
}

void register_all() {
  for (const auto& [name, path] : files()) {
    if (!fs::exists(path)) continue;
    benchmark::RegisterBenchmark(("english_4KB/" + name).c_str(), encode_single, name, english(4096))
        ->Unit(benchmark::kMicrosecond)->UseRealTime();
    benchmark::RegisterBenchmark(("mixed_4KB/" + name).c_str(), encode_single, name, mixed(4096))
        ->Unit(benchmark::kMicrosecond)->UseRealTime();
    benchmark::RegisterBenchmark(("prompt_64_tokens/" + name).c_str(), encode_single, name, english(300))
        ->Unit(benchmark::kMicrosecond)->UseRealTime();
    benchmark::RegisterBenchmark(("batch64x1KB_all_cores/" + name).c_str(), encode_batch, name)
        ->Unit(benchmark::kMillisecond)->UseRealTime();
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
