// Hallucination detection on a stream, measured in one run:
//  1. How long a completed sentence waits for its judgement, with a
//     ModernBERT-base-sized detector (random weights, the real sizes) and
//     one the size of the default models, in fp32 and int8, reading 1 or 2
//     context windows per sentence: p50 / p90 per sentence, against one
//     forward pass of the model over what a judgement reads (the ratio is
//     the number of inputs read, plus what the judgement costs beyond them).
//  2. The SSE reader's throughput (MB/s) on an OpenAI stream of small deltas.
//
//   semroute_hallucination_bench [--sentences 40]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <ATen/Parallel.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "bench_stats.h"
#include "core/cpu_features.h"
#include "hallucination/answer_stream.h"
#include "hallucination/sse_reader.h"
#include "models/random_model.h"
#include "tasks/text_batch.h"
#include "tasks/token_classifier.h"

namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;
using semroute::bench::percentile;
const fs::path kRepo = SEMROUTE_SOURCE_DIR;

double ms_since(Clock::time_point start) { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }

// A context of about 450 tokens and an answer of `n` sentences, ours.
std::string context() {
  std::string c;
  for (int i = 0; i < 12; ++i)
    c += "The plant in site " + std::to_string(i) + " produced " + std::to_string(1000 + 37 * i) +
         " units in March, with " + std::to_string(3 + i % 5) + " shifts and a defect rate of 0." +
         std::to_string(10 + i) + " percent. ";
  return c;
}

std::string answer(int n) {
  std::string a;
  for (int i = 0; i < n; ++i)
    a += "Site " + std::to_string(i % 12) + " made " + std::to_string(1000 + 41 * i) + " units with " +
         std::to_string(3 + i % 4) + " shifts in March. ";
  return a;
}

struct Setting {
  std::string dtype;
  size_t windows;
  size_t max_length;
};

void judgement_latency(const fs::path& dir, const std::string& preset, int sentences) {
  const std::string question = "How did the sites do in March?";
  for (const Setting& setting : std::vector<Setting>{{"float32", 1, 512}, {"float32", 2, 512}, {"int8", 1, 512},
                                                     {"int8", 2, 512}, {"int8", 1, 256}}) {
    semroute::PipelineOptions pipeline;
    pipeline.load = semroute::parse_load_options("cpu", setting.dtype);
    pipeline.max_length = setting.max_length;
    semroute::DetectorOptions options;
    options.context_windows = setting.windows;
    if (setting.max_length <= 256) {  // the latency setting: less answer context and room
      options.answer_tokens = 64;
      options.answer_context_bytes = 0;
    }
    const auto detector = semroute::HallucinationDetector::load(dir, "", options, pipeline);
    const auto truth = detector->pin(context(), question);
    semroute::AnswerStream stream(detector, truth);
    std::vector<double> waits;
    const std::string text = answer(sentences + 2);
    const size_t first = text.find(". ") + 2;
    stream.feed(text.substr(0, first));  // warm-up: the first sentence
    size_t last_begin = 0, last_end = first - 1;
    for (size_t pos = first; pos < text.size();) {
      const size_t end = std::min(text.size(), text.find(". ", pos) + 2);
      const auto start = Clock::now();
      stream.feed(text.substr(pos, end - pos));  // completes the sentence before it
      waits.push_back(ms_since(start));
      last_begin = pos;
      last_end = end - 1;
      pos = end;
    }
    // One forward of the same model over what a judgement reads: the
    // template with the best window, the question and the answer part.
    const auto model = semroute::TokenClassifier::load(dir, semroute::TaskOptions(pipeline));
    const std::string before = text.substr(last_begin > options.answer_context_bytes ? last_begin - options.answer_context_bytes : 0,
                                           std::min(last_begin, options.answer_context_bytes));
    const auto [prompt, part] = semroute::detector_input(options.input_template, truth->text(0), question,
                                                         before + text.substr(last_begin, last_end - last_begin));
    auto enc = model->task().tokenizer->encode_pair(prompt, part);
    if (enc.size() > setting.max_length) enc.truncate(setting.max_length, semroute::Keep::kEnd);
    const auto batch = semroute::batch_from_encodings({enc}, *model->task().tokenizer, c10::Device("cpu"));
    model->logits(batch.inputs);
    std::vector<double> forwards;
    for (int i = 0; i < 10; ++i) {
      const auto start = Clock::now();
      model->logits(batch.inputs);
      forwards.push_back(ms_since(start));
    }
    const double forward = percentile(forwards, 0.5);
    std::printf("| %s | %s | %zu | %zu | %zu | %.1f ms | %.1f ms | %.1f ms | %.2fx |\n", preset.c_str(),
                setting.dtype.c_str(), setting.max_length, setting.windows, enc.size(), percentile(waits, 0.5),
                percentile(waits, 0.9), forward, percentile(waits, 0.5) / forward);
  }
}

void sse_throughput() {
  std::string stream;
  const std::string text = answer(20000);
  for (size_t i = 0; i < text.size(); i += 6) {
    stream += "data: " +
              nlohmann::json{{"choices", {{{"index", 0}, {"delta", {{"content", text.substr(i, 6)}}}}}}}.dump() +
              "\n\n";
  }
  double best = 1e30;
  for (int r = 0; r < 3; ++r) {
    semroute::SseReader reader;
    std::string out;
    const auto start = Clock::now();
    for (size_t i = 0; i < stream.size(); i += 1400) reader.feed(std::string_view(stream).substr(i, 1400), out);
    best = std::min(best, ms_since(start));
  }
  std::printf("\nSSE reader: %.1f MB of events (6-byte deltas) in %.1f ms: %.0f MB/s\n", stream.size() / 1e6, best,
              stream.size() / 1e3 / best);
}

}  // namespace

int main(int argc, char** argv) {
  int sentences = 40;
  for (int i = 1; i + 1 < argc; i += 2)
    if (std::string(argv[i]) == "--sentences") sentences = std::stoi(argv[i + 1]);
  const fs::path dir = fs::temp_directory_path() / ("semroute-halluc-bench-" + std::to_string(::getpid()));
  std::printf("%s; %d compute threads\n", semroute::cpu_features().describe().c_str(),
              static_cast<int>(std::thread::hardware_concurrency()));
  std::printf("| model | dtype | max length | windows | tokens read | judgement p50 | p90 | one forward | ratio |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (const std::string preset : {"small", "modernbert-base"}) {
    semroute::RandomModelSpec spec;
    spec.preset = preset;
    spec.token_task = true;
    spec.labels = {"SUPPORTED", "HALLUCINATED"};
    spec.tokenizer = kRepo / "tests/data/tokenizers/modernbert/tokenizer.json";
    write_random_modernbert(spec, dir / preset);
    judgement_latency(dir / preset, preset, sentences);
  }
  sse_throughput();
  fs::remove_all(dir);
  return 0;
}
