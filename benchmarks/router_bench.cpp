// The router's own cost, on the default models (models/): one run, one CPU.
//
//  1. Overhead beyond the model calls: a 20-decision config, every request's
//     route time minus the time its signals took (parsing the request,
//     evaluating conditions, rewriting, the trace), against the 50 µs target.
//  2. What lazy evaluation saves on a mixed workload: the same requests routed
//     lazily and with every signal computed up front (RouteOptions::all_signals):
//     model calls and time, same decisions.
//  3. Lazy against parallel (`parallel: true`: every model signal the
//     decisions refer to starts at once): latency and throughput at 1 and 8
//     closed-loop clients.
//  4. Semantic cache lookups at 10k and 100k entries (dimension 256 and 768)
//     against a float32 scan of the same vectors (libtorch's matrix-vector
//     product).
//
//   semroute_router_bench [--requests 400] [--threads 2]
#include <algorithm>
#include <cmath>
#include <random>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <ATen/ATen.h>

#include "bench_util.h"
#include "core/cpu_features.h"
#include "core/runtime.h"
#include "router/router.h"
#include "router/semantic_cache.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Twenty decisions: safety first, then cheap rules, then the domain model.
std::string config(const fs::path& models) {
  const std::string m = models.string();
  std::string yaml = "signals:\n";
  yaml += "  domain: {kind: classifier, model: " + m + "/domain}\n";
  yaml += "  jailbreak: {kind: classifier, model: " + m + "/jailbreak, positive_labels: [jailbreak]}\n";
  yaml += "  pii: {kind: entities, model: " + m + "/pii}\n";
  yaml += "  urgent: {kind: keywords, keywords: [urgent, asap, immediately]}\n";
  yaml += "  code: {kind: keywords, regex: true, keywords: ['```', '\\bdef\\s+\\w+\\(', '#include']}\n";
  yaml += "  greeting: {kind: keywords, keywords: [hello, hi, thanks, 'thank you']}\n";
  yaml += "decisions:\n";
  yaml += "  - {name: jailbreak, priority: 100, when: \"jailbreak.risk >= 0.8\", block: refused}\n";
  yaml += "  - {name: vip, priority: 95, when: \"meta.tier == gold\", model: big}\n";
  yaml += "  - {name: greeting, priority: 90, when: {all: [greeting, \"length < 40\"]}, model: tiny}\n";
  yaml += "  - {name: code, priority: 85, when: code, model: coder}\n";
  yaml += "  - {name: urgent, priority: 80, when: urgent, model: fast, max_tokens: 512}\n";
  yaml += "  - {name: long, priority: 75, when: \"length > 4000\", model: long}\n";
  yaml += "  - {name: private, priority: 70, when: \"pii contains [CREDIT_CARD, US_SSN, EMAIL_ADDRESS]\", model: local}\n";
  const char* domains[] = {"math",    "physics", "chemistry", "biology", "computer science", "engineering", "law",
                           "health",  "business", "economics", "history", "philosophy",      "psychology"};
  int priority = 60;
  for (const char* d : domains) {
    std::string name = d;
    std::replace(name.begin(), name.end(), ' ', '_');
    yaml += "  - {name: " + name + ", priority: " + std::to_string(priority--) + ", when: {all: [\"domain == '" + d +
            "'\", \"domain.confidence >= 0.4\"]}, model: " + name + "-llm, system_prompt: You are an expert.}\n";
  }
  yaml += "default: {model: general}\n";
  return yaml;
}

// A mixed workload of our own texts: greetings, code, urgent notes, personal
// data, subject questions.
std::vector<std::string> workload(size_t n) {
  const std::vector<std::string> texts = {
      "hello there!",
      "thanks, that helped",
      "Why does this crash?\n```c\nint *p = 0; *p = 1;\n```",
      "def add(a, b): return a + c  -- what is wrong?",
      "URGENT: the payment service is down, what do I check first?",
      "Please reply asap: is the meeting moved?",
      "My card number is 4111 1111 1111 1111, can you store it?",
      "Send the invoice to jane.doe@example.com please.",
      "What is the integral of sin(x) from 0 to pi?",
      "How many ways can 5 people sit in a row?",
      "What does the second law of thermodynamics say about entropy?",
      "Which enzyme unwinds DNA during replication?",
      "Is a verbal contract legally binding?",
      "What causes inflation to rise when interest rates are low?",
      "Explain how a hash table handles collisions.",
      "Who was the first emperor of Rome?"};
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.push_back(texts[(i * 7) % texts.size()]);
  return out;
}

semroute::RequestJson request(const std::string& text) {
  return semroute::RequestJson{{"model", "auto"}, {"messages", {{{"role", "user"}, {"content", text}}}}};
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

struct Run {
  double seconds = 0;
  size_t model_calls = 0;
  std::vector<double> overhead_us;
  std::vector<std::string> decisions;
};

Run run(const semroute::Router& router, const std::vector<std::string>& texts, bool all_signals) {
  Run r;
  semroute::RouteOptions options;
  options.all_signals = all_signals;
  const auto start = Clock::now();
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::map<std::string, std::string> meta = {{"tier", i % 10 == 0 ? "gold" : "free"}};
    const auto t0 = Clock::now();
    const semroute::RouteResult result = router.route(request(texts[i]), meta, options);
    const double total_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    double signals_us = 0;
    for (const auto& s : result.signals) {
      if (!s.computed) continue;
      signals_us += static_cast<double>(s.latency.count());
      if (s.name == "domain" || s.name == "jailbreak" || s.name == "pii") ++r.model_calls;
    }
    r.overhead_us.push_back(total_us - signals_us);
    r.decisions.push_back(result.decision);
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

struct Load {
  double requests_per_second = 0;
  double p50_ms = 0, p99_ms = 0;
};

// `clients` threads route `texts` between them, each one request after another.
Load closed_loop(const semroute::Router& router, const std::vector<std::string>& texts, size_t clients) {
  std::vector<std::vector<double>> latencies(clients);
  const auto start = Clock::now();
  std::vector<std::thread> threads;
  for (size_t c = 0; c < clients; ++c)
    threads.emplace_back([&, c] {
      for (size_t i = c; i < texts.size(); i += clients) {
        const auto t0 = Clock::now();
        router.route(request(texts[i]), {{"tier", "free"}});
        latencies[c].push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      }
    });
  for (auto& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::vector<double> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  return {static_cast<double>(texts.size()) / seconds, percentile(all, 0.5), percentile(all, 0.99)};
}

void lazy_against_parallel(const semroute::Router& lazy, const semroute::Router& parallel,
                           const std::vector<std::string>& texts) {
  for (const size_t clients : {size_t{1}, size_t{8}}) {
    const Load a = closed_loop(lazy, texts, clients), b = closed_loop(parallel, texts, clients);
    std::printf("%zu client(s): lazy %.0f req/s (p50 %.2f ms, p99 %.2f ms); parallel %.0f req/s (p50 %.2f ms, p99 "
                "%.2f ms): parallel's p50 %.2fx lazy's, p99 %.2fx, throughput %.2fx\n",
                clients, a.requests_per_second, a.p50_ms, a.p99_ms, b.requests_per_second, b.p50_ms, b.p99_ms,
                b.p50_ms / a.p50_ms, b.p99_ms / a.p99_ms, b.requests_per_second / a.requests_per_second);
  }
}

// Unit vectors with a fixed seed.
std::vector<std::vector<float>> random_units(size_t count, int64_t dim, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<std::vector<float>> out(count, std::vector<float>(static_cast<size_t>(dim)));
  for (auto& v : out) {
    double norm = 0;
    for (auto& x : v) norm += (x = normal(rng)) * x;
    for (auto& x : v) x /= static_cast<float>(std::sqrt(norm));
  }
  return out;
}

void cache_lookups(size_t entries, int64_t dim) {
  semroute::CacheOptions options;
  options.capacity = entries;
  options.ttl = std::chrono::seconds(0);
  const auto cache = semroute::make_memory_cache(dim, options);
  const auto stored = random_units(entries, dim, 1);
  for (size_t i = 0; i < entries; ++i) cache->store("p", stored[i], "answer");
  const auto queries = random_units(50, dim, 2);
  const double cache_s = semroute::bench::median_seconds([&] {
    for (const auto& q : queries) cache->lookup("p", q);
  }) / static_cast<double>(queries.size());
  // The baseline: libtorch's float32 matrix-vector product over the same
  // vectors (BLAS), then the best score.
  std::vector<float> flat;
  for (const auto& v : stored) flat.insert(flat.end(), v.begin(), v.end());
  const at::Tensor matrix = at::from_blob(flat.data(), {static_cast<int64_t>(entries), dim}).clone();
  std::vector<at::Tensor> query_tensors;
  for (const auto& q : queries) query_tensors.push_back(at::from_blob(const_cast<float*>(q.data()), {dim}).clone());
  float sink = 0;
  const double scan_s = semroute::bench::median_seconds([&] {
    for (const auto& q : query_tensors) sink += at::mv(matrix, q).max().item<float>();
  }) / static_cast<double>(queries.size());
  std::printf("cache lookup, %6zu entries x %3lld: %8.1f us (float32 BLAS scan %8.1f us: %.2fx its speed)%s\n", entries,
              static_cast<long long>(dim), cache_s * 1e6, scan_s * 1e6, scan_s / cache_s, sink > 1e30f ? "!" : "");
}

}  // namespace

int main(int argc, char** argv) {
  size_t count = 400;
  int threads = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--requests") count = std::stoul(argv[i + 1]);
    if (std::string(argv[i]) == "--threads") threads = std::stoi(argv[i + 1]);
  }
  semroute::ensure_runtime_initialized();
  semroute::set_compute_threads(threads);
  const fs::path models = fs::path(SEMROUTE_SOURCE_DIR) / "models";
  const fs::path dir = fs::temp_directory_path() / "semroute-router-bench";
  fs::create_directories(dir);
  std::ofstream(dir / "router.yaml") << config(models);
  const auto router = semroute::Router::load(dir / "router.yaml");
  const auto texts = workload(count);
  std::printf("%s; %d threads; %zu requests, %zu decisions\n", semroute::cpu_features().describe().c_str(), threads,
              texts.size(), router->engine().decisions().size());

  run(*router, workload(16), false);  // warm-up
  const Run lazy = run(*router, texts, false);
  const Run eager = run(*router, texts, true);
  const bool same = lazy.decisions == eager.decisions;

  const double mean = [&] {
    double sum = 0;
    for (double v : lazy.overhead_us) sum += v;
    return sum / static_cast<double>(lazy.overhead_us.size());
  }();
  std::printf("overhead beyond the signals: mean %.1f us, p50 %.1f us, p99 %.1f us (target 50 us: %.2fx of it)\n", mean,
              percentile(lazy.overhead_us, 0.5), percentile(lazy.overhead_us, 0.99), mean / 50.0);
  std::printf("lazy:  %.2f ms per request, %.2f model calls per request\n", lazy.seconds * 1e3 / texts.size(),
              static_cast<double>(lazy.model_calls) / texts.size());
  std::printf("eager: %.2f ms per request, %.2f model calls per request\n", eager.seconds * 1e3 / texts.size(),
              static_cast<double>(eager.model_calls) / texts.size());
  std::printf("lazy evaluation: %.2fx the throughput, %.0f %% of the model calls; same decisions: %s\n",
              eager.seconds / lazy.seconds, 100.0 * lazy.model_calls / eager.model_calls, same ? "yes" : "NO");
  std::ofstream(dir / "parallel.yaml") << config(models) << "parallel: true\n";
  const auto parallel = semroute::Router::load(dir / "parallel.yaml");
  run(*parallel, workload(16), false);  // warm-up
  lazy_against_parallel(*router, *parallel, texts);
  for (const int64_t dim : {256, 768})
    for (const size_t entries : {size_t{10000}, size_t{100000}}) cache_lookups(entries, dim);
  return same ? 0 : 1;
}
