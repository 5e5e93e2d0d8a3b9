// Throughput side of the peer benchmark (benchmarks/peers/): N callers, each
// in a closed loop sending one prompt at a time, lengths drawn from a fixed
// mix, against one engine in this process for a fixed time. One JSON line:
// requests per second, p50 / p99 latency (all requests, and the short ones
// apart), the peak resident memory, and the CPU time this process and all
// others took while it ran (in cores: what a busy neighbour kept).
//
//   semroute_peer_throughput --engine semroute --model DIR [--dtype float32|int8]
//                            [--max-batch 16] [--max-wait-us 1000]
//   semroute_peer_throughput --engine ort --onnx M.onnx --ort-lib libonnxruntime.so.1
//   common: [--callers 8] [--seconds 30] [--threads 2] [--mix mixed|LENGTH] [--seed 1]
//
// semroute runs through its C API (texts in, the batcher on), as a router
// links it; ONNX Runtime through its C API (ids in), one InferenceSession
// whose Run every caller thread calls, intra-op threads --threads (the
// default ORT picks on a machine of that many cores). A caller's lengths are
// the same sequence for both engines (seeded per caller).
#include <dlfcn.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench_stats.h"
#include "semroute/semroute.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Flags {
  std::string engine, model, onnx, ort_lib, dtype = "float32", mix = "mixed";
  int callers = 8, threads = 2, max_batch = 16, max_wait_us = 1000;
  double seconds = 30;
  uint64_t seed = 1;
};

Flags parse(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
    const std::string value = argv[i + 1];
    if (flag == "--engine") f.engine = value;
    else if (flag == "--model") f.model = value;
    else if (flag == "--onnx") f.onnx = value;
    else if (flag == "--ort-lib") f.ort_lib = value;
    else if (flag == "--dtype") f.dtype = value;
    else if (flag == "--mix") f.mix = value;
    else if (flag == "--callers") f.callers = std::stoi(value);
    else if (flag == "--threads") f.threads = std::stoi(value);
    else if (flag == "--max-batch") f.max_batch = std::stoi(value);
    else if (flag == "--max-wait-us") f.max_wait_us = std::stoi(value);
    else if (flag == "--seconds") f.seconds = std::stod(value);
    else if (flag == "--seed") f.seed = std::stoull(value);
    else throw std::invalid_argument("unknown flag " + flag);
  }
  if (f.engine == "semroute" ? f.model.empty() : f.engine != "ort" || f.onnx.empty() || f.ort_lib.empty())
    throw std::invalid_argument("usage: --engine semroute --model DIR | --engine ort --onnx M.onnx --ort-lib LIB");
  return f;
}

// The mix: 97 % of prompts 16-512 tokens, 3 % 2,048-8,192, log-uniform in
// each range (short chat prompts, a few documents); or one fixed length.
class Lengths {
 public:
  Lengths(const std::string& mix, uint64_t seed) : fixed_(mix == "mixed" ? 0 : std::stoll(mix)), rng_(seed) {}
  int64_t next() {
    if (fixed_ > 0) return fixed_;
    const bool long_prompt = std::uniform_real_distribution<double>(0, 1)(rng_) < 0.03;
    const double lo = long_prompt ? 2048 : 16, hi = long_prompt ? 8192 : 512;
    return std::llround(lo * std::pow(hi / lo, std::uniform_real_distribution<double>(0, 1)(rng_)));
  }

 private:
  int64_t fixed_;
  std::mt19937_64 rng_;
};

// ---------------------------------------------------------------- semroute

void check(semroute_status* status) {
  if (status == nullptr) return;
  const std::string message = semroute_status_message(status);
  semroute_status_free(status);
  throw std::runtime_error("semroute: " + message);
}

// A text of exactly `length` tokens, special tokens included: words the
// tokenizer keeps whole, drawn per request (the count is checked once).
std::string text_of(int64_t length, std::mt19937_64& rng) {
  static const char* const words[] = {" the", " of", " and", " to", " in", " is", " that", " for", " on", " with"};
  std::string text = "the";
  for (int64_t i = 3; i < length; ++i) text += words[rng() % 10];
  return text;
}

class SemrouteEngine {
 public:
  explicit SemrouteEngine(const Flags& f) {
    semroute_model_params params = semroute_model_default_params();
    params.dtype = f.dtype.c_str();
    params.threads = f.threads;
    params.max_batch = static_cast<uint32_t>(f.max_batch);
    params.max_wait_us = static_cast<uint32_t>(f.max_wait_us);
    check(semroute_model_load(f.model.c_str(), &params, &model_));
    std::mt19937_64 rng(1);
    for (int64_t length : {16, 512, 8192}) {
      const std::string text = text_of(length, rng);
      semroute_tokens* tokens = nullptr;
      check(semroute_tokenize_whole(model_, text.data(), text.size(), 1, &tokens));
      const auto count = static_cast<int64_t>(semroute_tokens_count(tokens));
      semroute_tokens_free(tokens);
      if (count != length)
        throw std::runtime_error("a text meant as " + std::to_string(length) + " tokens has " + std::to_string(count));
    }
  }
  ~SemrouteEngine() { semroute_model_free(model_); }
  SemrouteEngine(const SemrouteEngine&) = delete;
  SemrouteEngine& operator=(const SemrouteEngine&) = delete;

  void operator()(int64_t length, std::mt19937_64& rng) const {
    const std::string text = text_of(length, rng);
    semroute_classifications* out = nullptr;
    check(semroute_classify(model_, text.data(), text.size(), &out));
    semroute_classifications_free(out);
  }

 private:
  semroute_model* model_ = nullptr;
};

// ------------------------------------------------------------ ONNX Runtime

// The ONNX Runtime C API entries called here, by their slot in its OrtApi
// function table (the table only grows: a slot keeps its entry across
// releases), from the libonnxruntime.so that onnxruntime-node ships; API
// version 13 is what these slots need. Debian packages no ONNX Runtime, so
// there is no header to include.
namespace ort {
struct Status;
struct Env;
struct Session;
struct SessionOptions;
struct MemoryInfo;
struct Value;
enum Slot : size_t {
  kGetErrorMessage = 2, kCreateEnv = 3, kCreateSession = 7, kRun = 9, kCreateSessionOptions = 10,
  kSetIntraOpNumThreads = 24, kCreateTensorWithDataAsOrtValue = 49, kCreateCpuMemoryInfo = 69, kReleaseEnv = 92,
  kReleaseStatus = 93, kReleaseMemoryInfo = 94, kReleaseSession = 95, kReleaseValue = 96, kReleaseSessionOptions = 100,
};
constexpr uint32_t kApiVersion = 13;
constexpr int kLogWarning = 2, kArenaAllocator = 1, kMemTypeDefault = 0, kInt64 = 7;

struct ApiBase {
  const void* const* (*get_api)(uint32_t version);
  const char* (*version)();
};

class Api {
 public:
  explicit Api(const std::string& library) {
    handle_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) throw std::runtime_error(std::string("cannot load ONNX Runtime: ") + dlerror());
    const auto base_of = reinterpret_cast<const ApiBase* (*)()>(dlsym(handle_, "OrtGetApiBase"));
    if (base_of == nullptr) throw std::runtime_error(library + " has no OrtGetApiBase");
    table_ = base_of()->get_api(kApiVersion);
    if (table_ == nullptr) throw std::runtime_error(library + " does not offer C API version 13");
  }
  template <class Fn>
  Fn* fn(Slot slot) const {
    return reinterpret_cast<Fn*>(const_cast<void*>(table_[slot]));
  }
  // Throws the status's message (and releases it) when the call failed.
  void check(Status* status) const {
    if (status == nullptr) return;
    const std::string message = fn<const char*(const Status*)>(kGetErrorMessage)(status);
    fn<void(Status*)>(kReleaseStatus)(status);
    throw std::runtime_error("ONNX Runtime: " + message);
  }

 private:
  void* handle_ = nullptr;  // never closed: ONNX Runtime's threads outlive main's locals
  const void* const* table_ = nullptr;
};
}  // namespace ort

// One InferenceSession, every caller's thread calling Run on it; ids as
// ort_bench.mjs makes them (random, in [1000, 50000)).
class OrtEngine {
 public:
  explicit OrtEngine(const Flags& f) : api_(f.ort_lib) {
    api_.check(api_.fn<ort::Status*(int, const char*, ort::Env**)>(ort::kCreateEnv)(ort::kLogWarning, "peer", &env_));
    ort::SessionOptions* options = nullptr;
    api_.check(api_.fn<ort::Status*(ort::SessionOptions**)>(ort::kCreateSessionOptions)(&options));
    api_.check(api_.fn<ort::Status*(ort::SessionOptions*, int)>(ort::kSetIntraOpNumThreads)(options, f.threads));
    ort::Status* status = api_.fn<ort::Status*(const ort::Env*, const char*, const ort::SessionOptions*,
                                                ort::Session**)>(ort::kCreateSession)(env_, f.onnx.c_str(), options,
                                                                                      &session_);
    api_.fn<void(ort::SessionOptions*)>(ort::kReleaseSessionOptions)(options);
    api_.check(status);
    api_.check(api_.fn<ort::Status*(int, int, ort::MemoryInfo**)>(ort::kCreateCpuMemoryInfo)(
        ort::kArenaAllocator, ort::kMemTypeDefault, &memory_));
  }
  ~OrtEngine() {
    api_.fn<void(ort::MemoryInfo*)>(ort::kReleaseMemoryInfo)(memory_);
    api_.fn<void(ort::Session*)>(ort::kReleaseSession)(session_);
    api_.fn<void(ort::Env*)>(ort::kReleaseEnv)(env_);
  }
  OrtEngine(const OrtEngine&) = delete;
  OrtEngine& operator=(const OrtEngine&) = delete;

  void operator()(int64_t length, std::mt19937_64& rng) const {
    std::vector<int64_t> ids(static_cast<size_t>(length)), mask(static_cast<size_t>(length), 1);
    for (auto& id : ids) id = 1000 + static_cast<int64_t>(rng() % 49000);
    ort::Value* inputs[2] = {tensor(ids), tensor(mask)};
    ort::Value* logits = nullptr;
    static const char* const input_names[] = {"input_ids", "attention_mask"};
    static const char* const output_names[] = {"logits"};
    ort::Status* status =
        api_.fn<ort::Status*(ort::Session*, const void*, const char* const*, const ort::Value* const*, size_t,
                             const char* const*, size_t, ort::Value**)>(ort::kRun)(
            session_, nullptr, input_names, inputs, 2, output_names, 1, &logits);
    for (ort::Value* v : {inputs[0], inputs[1], logits}) api_.fn<void(ort::Value*)>(ort::kReleaseValue)(v);
    api_.check(status);
  }

 private:
  ort::Value* tensor(std::vector<int64_t>& data) const {
    const int64_t shape[2] = {1, static_cast<int64_t>(data.size())};
    ort::Value* value = nullptr;
    api_.check(api_.fn<ort::Status*(const ort::MemoryInfo*, void*, size_t, const int64_t*, size_t, int,
                                    ort::Value**)>(ort::kCreateTensorWithDataAsOrtValue)(
        memory_, data.data(), data.size() * sizeof(int64_t), shape, 2, ort::kInt64, &value));
    return value;
  }

  ort::Api api_;
  ort::Env* env_ = nullptr;
  ort::Session* session_ = nullptr;
  ort::MemoryInfo* memory_ = nullptr;
};

}  // namespace

namespace {

using semroute::bench::percentile;

struct Run {
  std::vector<double> ms, short_ms;  // every request's latency; those of 512 tokens or less
  int64_t tokens = 0;
  double seconds = 0;
  double own_cores = 0, others_cores = 0;  // CPU time over the run, in cores: this process, every other
};

// CPU time so far: this process's, and the whole machine's busy time
// (/proc/stat: user, nice, system, irq and softirq; not idle, I/O wait or
// the time the hypervisor gave other machines), in seconds.
struct CpuTimes {
  double own = 0, machine = 0;
};

CpuTimes cpu_times() {
  CpuTimes t;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  t.own = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
          static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
  if (FILE* stat = std::fopen("/proc/stat", "r")) {
    unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0;
    if (std::fscanf(stat, "cpu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &system, &idle, &iowait, &irq,
                    &softirq) == 7)
      t.machine = static_cast<double>(user + nice + system + irq + softirq) / static_cast<double>(sysconf(_SC_CLK_TCK));
    std::fclose(stat);
  }
  return t;
}

// Every caller sends prompts until `seconds` have passed; the run ends with
// the last answer (prompts in flight finish and count).
template <class Answer>
Run drive(const Flags& f, const Answer& answer) {
  std::vector<Run> runs(static_cast<size_t>(f.callers));
  std::vector<std::thread> callers;
  std::mutex failure_mutex;
  std::string failure;
  const CpuTimes cpu_at_start = cpu_times();
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(f.seconds));
  for (int c = 0; c < f.callers; ++c) {
    callers.emplace_back([&, c] {
      Run& run = runs[static_cast<size_t>(c)];
      Lengths lengths(f.mix, f.seed * 1000 + static_cast<uint64_t>(c));
      std::mt19937_64 words(f.seed * 7919 + static_cast<uint64_t>(c));
      try {
        while (Clock::now() < end) {
          const int64_t length = lengths.next();
          const auto sent = Clock::now();
          answer(length, words);
          const double ms = std::chrono::duration<double, std::milli>(Clock::now() - sent).count();
          run.ms.push_back(ms);
          if (length <= 512) run.short_ms.push_back(ms);
          run.tokens += length;
        }
      } catch (const std::exception& e) {
        const std::lock_guard<std::mutex> lock(failure_mutex);
        failure = e.what();
      }
    });
  }
  for (auto& t : callers) t.join();
  if (!failure.empty()) throw std::runtime_error(failure);
  Run all;
  all.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const CpuTimes cpu_at_end = cpu_times();
  all.own_cores = (cpu_at_end.own - cpu_at_start.own) / all.seconds;
  all.others_cores = std::max(0.0, (cpu_at_end.machine - cpu_at_start.machine) / all.seconds - all.own_cores);
  for (const Run& run : runs) {
    all.ms.insert(all.ms.end(), run.ms.begin(), run.ms.end());
    all.short_ms.insert(all.short_ms.end(), run.short_ms.begin(), run.short_ms.end());
    all.tokens += run.tokens;
  }
  return all;
}

double peak_rss_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

void report(const Flags& f, const Run& run) {
  const auto n = static_cast<double>(run.ms.size());
  std::printf(
      "{\"engine\":\"%s\",\"dtype\":\"%s\",\"callers\":%d,\"threads\":%d,\"mix\":\"%s\",\"requests\":%zu,"
      "\"seconds\":%.3f,\"requests_per_s\":%.4f,\"tokens_per_s\":%.1f,\"p50_ms\":%.3f,\"p99_ms\":%.3f,"
      "\"short_requests\":%zu,\"short_p50_ms\":%.3f,\"short_p99_ms\":%.3f,\"peak_rss_mb\":%.1f,"
      "\"own_cores\":%.3f,\"others_cores\":%.3f}\n",
      f.engine.c_str(), f.dtype.c_str(), f.callers, f.threads, f.mix.c_str(), run.ms.size(), run.seconds,
      n / run.seconds, static_cast<double>(run.tokens) / run.seconds, percentile(run.ms, 0.5),
      percentile(run.ms, 0.99), run.short_ms.size(), percentile(run.short_ms, 0.5), percentile(run.short_ms, 0.99),
      peak_rss_mb(), run.own_cores, run.others_cores);
  std::fflush(stdout);
}

// A few calls before the clock starts, one at a time and then from every
// caller at once: first-call costs (packing, thread pools, the threads an
// engine starts for concurrent calls) are not what a running service pays.
template <class Answer>
void warm_up(const Flags& f, const Answer& answer) {
  std::mt19937_64 rng(0);
  for (int64_t length : {16, 64, 512}) answer(length, rng);
  std::vector<std::thread> callers;
  for (int c = 0; c < f.callers; ++c)
    callers.emplace_back([&answer, c] {
      std::mt19937_64 words(static_cast<uint64_t>(c) + 1);
      try {
        for (int i = 0; i < 2; ++i) answer(64, words);
      } catch (const std::exception&) {  // the measured run reports it
      }
    });
  for (auto& t : callers) t.join();
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Flags f = parse(argc, argv);
    if (f.engine == "semroute") {
      const SemrouteEngine engine(f);
      warm_up(f, engine);
      report(f, drive(f, engine));
    } else {
      const OrtEngine engine(f);
      warm_up(f, engine);
      report(f, drive(f, engine));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "semroute_peer_throughput: %s\n", e.what());
    return 1;
  }
  return 0;
}
