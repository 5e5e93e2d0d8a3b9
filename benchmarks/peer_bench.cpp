// semroute side of the peer benchmark (benchmarks/peers/): one sequence
// classifier directory, one precision, batch 1. Same command line and JSON
// lines as peers/ort_bench.mjs, so the driver treats both engines alike:
//
//   semroute_peer_bench --model DIR [--dtype float32|int8] [--threads 2] logits --ids 1,2,3
//   semroute_peer_bench --model DIR ... time --lengths 16,64 [--reps 20] [--warmup 3] [--budget S]
//   semroute_peer_bench --model DIR ... serve
//       (stdin lines "time LENGTH REPS WARMUP [BUDGET_S]", one JSON line back each; "quit")
//
// Repetitions stop early once at least 5 ran and they took --budget seconds.
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "bench_util.h"
#include "core/cpu_features.h"
#include "core/runtime.h"
#include "models/packed_gemm.h"
#include "semroute/error.h"
#include "tasks/sequence_classifier.h"

namespace {

using namespace semroute::bench;

struct Args {
  std::string model, dtype = "float32", mode;
  int threads = 2, reps = 20, warmup = 3;
  double budget = 1e30;
  std::vector<int64_t> lengths = {16, 64, 256, 512}, ids;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw semroute::InvalidInput(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--model") a.model = value();
    else if (flag == "--dtype") a.dtype = value();
    else if (flag == "--threads") a.threads = std::stoi(value());
    else if (flag == "--reps") a.reps = std::stoi(value());
    else if (flag == "--warmup") a.warmup = std::stoi(value());
    else if (flag == "--budget") a.budget = std::stod(value());
    else if (flag == "--lengths") a.lengths = parse_list(value());
    else if (flag == "--ids") a.ids = parse_list(value());
    else if (flag.rfind("--", 0) != 0 && a.mode.empty()) a.mode = flag;
    else throw semroute::InvalidInput("unknown argument " + flag);
  }
  if (a.model.empty() || (a.mode != "logits" && a.mode != "time" && a.mode != "serve"))
    throw semroute::InvalidInput(
        "usage: semroute_peer_bench --model DIR [--dtype float32|int8] [--threads N] logits --ids ... | time "
        "--lengths ... | serve");
  return a;
}

// The ids ort_bench.mjs makes for a length (same LCG, same range), so both
// engines time the same input.
std::vector<int64_t> bench_ids(int64_t length) {
  std::vector<int64_t> ids(static_cast<size_t>(length));
  uint64_t x = static_cast<uint64_t>(length);
  for (auto& id : ids) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    id = 1000 + static_cast<int64_t>((x >> 33) % 49000);
  }
  return ids;
}

semroute::ModelInputs inputs(const std::vector<int64_t>& ids) {
  const auto n = static_cast<int64_t>(ids.size());
  semroute::ModelInputs in;
  in.input_ids = at::tensor(ids, at::kLong).reshape({1, n});
  in.attention_mask = at::ones({1, n}, at::kLong);
  return in;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

void time_length(const semroute::SequenceClassifier& classifier, const std::string& dtype, int64_t length, int reps,
                 int warmup, double budget) {
  const auto in = inputs(bench_ids(length));
  for (int i = 0; i < warmup; ++i) classifier.logits(in);
  std::vector<double> ms;
  double total = 0;
  while (static_cast<int>(ms.size()) < reps && (ms.size() < 5 || total < budget * 1e3)) {
    const auto start = Clock::now();
    classifier.logits(in);
    ms.push_back(seconds_since(start) * 1e3);
    total += ms.back();
  }
  std::sort(ms.begin(), ms.end());
  std::printf("{\"engine\":\"semroute\",\"dtype\":\"%s\",\"length\":%lld,\"reps\":%zu,\"median_ms\":%.6f,\"min_ms\":%.6f}\n",
              dtype.c_str(), static_cast<long long>(length), ms.size(), ms.empty() ? 0.0 : ms[ms.size() / 2],
              ms.empty() ? 0.0 : ms.front());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args args = parse(argc, argv);
    semroute::ensure_runtime_initialized();
    semroute::set_compute_threads(args.threads);
    c10::InferenceMode guard;
    semroute::TaskOptions options;
    options.load = semroute::parse_load_options("cpu", args.dtype);
    const auto classifier = semroute::SequenceClassifier::load(args.model, options);

    if (args.mode == "logits") {
      const at::Tensor logits = classifier->logits(inputs(args.ids)).to(at::kFloat).contiguous();
      std::string out = "{\"engine\":\"semroute\",\"logits\":[";
      for (int64_t i = 0; i < logits.numel(); ++i) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%s%.9g", i ? "," : "", logits.data_ptr<float>()[i]);
        out += buf;
      }
      std::printf("%s]}\n", out.c_str());
    } else if (args.mode == "time") {
      for (int64_t length : args.lengths)
        time_length(*classifier, args.dtype, length, args.reps, args.warmup, args.budget);
    } else {
      std::printf("{\"engine\":\"semroute\",\"ready\":true,\"cpu\":%s,\"threads\":%d,\"int8_activation_levels\":%d}\n",
                  json_string(semroute::cpu_features().describe()).c_str(), semroute::compute_threads(),
                  semroute::PackedGemm::activation_levels());
      std::fflush(stdout);
      for (std::string line; std::getline(std::cin, line);) {
        std::istringstream words(line);
        std::string cmd;
        long long length = 0;
        int reps = 0, warmup = 0;
        double budget = 1e30;
        words >> cmd >> length >> reps >> warmup;
        if (!(words >> budget)) budget = 1e30;
        if (cmd == "quit") break;
        if (cmd != "time" || length <= 0) throw semroute::InvalidInput("unknown command: " + line);
        time_length(*classifier, args.dtype, length, reps, warmup, budget);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "semroute_peer_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
