// `semroute compress` (prompt compression) and `semroute check-answer`
// (hallucination detection over a streamed answer).
#include <chrono>
#include <cstdio>

#include "cli.h"
#include "compression/prompt_compressor.h"
#include "core/file_input.h"
#include "hallucination/answer_stream.h"
#include "semroute/error.h"
#include "server/answer_json.h"
#include "tokenizers/tokenizer.h"

namespace semroute::cli {
namespace {

using Clock = std::chrono::steady_clock;

const char* kCompressUsage =
    "usage: semroute compress FILE|- [--max-tokens N] [--tokenizer PATH] [--head R] [--tail R]\n"
    "                         [--stop-words yes|no] [--languages en,de] [--json]\n"
    "  Prints the skeleton of a long prompt within N tokens (default 512) of the tokenizer's\n"
    "  (or words and punctuation marks without one); a summary goes to stderr.";

const char* kCheckUsage =
    "usage: semroute check-answer DETECTOR_DIR --context FILE [ANSWER_FILE|-] [--question TEXT] [--nli DIR]\n"
    "                             [--format auto|sse|text] [--stop-at SEVERITY] [--template lettucedetect|halugate]\n"
    "                             [--threshold P] [--windows N] [--max-length N] [--dtype T] [--json]\n"
    "  Reads an LLM answer (stdin by default) as it arrives, an OpenAI SSE stream or plain text, and judges each\n"
    "  sentence against the context as soon as it is complete. Exit code 3 when a sentence has unsupported spans.";

void print_sentence(const StreamEvent& e, bool json) {
  if (json) {
    std::printf("%s\n", stream_event_json(e).dump().c_str());
  } else {
    std::printf("%-5s [%llu, %llu) %.3f %6.2f ms  %s\n", stream_event_name(e.kind),
                static_cast<unsigned long long>(e.check.begin), static_cast<unsigned long long>(e.check.end),
                e.check.max_score, e.check.latency.count() / 1000.0, nlohmann::json(e.check.text).dump().c_str());
    for (const auto& s : e.check.spans) {
      std::printf("      span [%llu, %llu) %.3f %s %s", static_cast<unsigned long long>(s.begin),
                  static_cast<unsigned long long>(s.end), s.score, severity_name(s.severity),
                  nlohmann::json(s.text).dump().c_str());
      if (!s.nli.label.empty())
        std::printf("  nli %s (e %.2f n %.2f c %.2f)", s.nli.label.c_str(), s.nli.entailment, s.nli.neutral,
                    s.nli.contradiction);
      std::printf("\n");
    }
  }
  std::fflush(stdout);
}

// SSE when the stream's first bytes are an SSE field or comment.
bool looks_like_sse(std::string_view start) {
  const size_t at = start.find_first_not_of(" \t\r\n");
  if (at == std::string_view::npos) return false;
  const std::string_view s = start.substr(at);
  for (const std::string_view field : {"data:", "event:", "id:", "retry:", ":"})
    if (s.substr(0, field.size()) == field) return true;
  return false;
}

// Bad data in the stream is an error of the input (exit code 1), not of the
// command line (InvalidInput's exit code 2).
template <class Fn>
auto as_input_error(Fn&& fn) {
  try {
    return fn();
  } catch (const InvalidInput& e) {
    throw Error(e.code(), e.what());
  }
}

}  // namespace

int run_compress(const std::vector<std::string>& argv) {
  const Options args = parse_options(argv, kCompressUsage,
                                     {"max-tokens", "tokenizer", "head", "tail", "stop-words", "languages"});
  if (args.positional.size() != 1) throw InvalidInput(kCompressUsage);
  CompressOptions options;
  options.max_tokens = static_cast<size_t>(args.integer("max-tokens", 512));
  options.head_ratio = args.number("head", options.head_ratio);
  options.tail_ratio = args.number("tail", options.tail_ratio);
  const std::string stop_words = args.get("stop-words", "yes");
  if (stop_words != "yes" && stop_words != "no") throw InvalidInput("--stop-words must be yes or no");
  options.drop_stop_words = stop_words == "yes";
  options.languages = split_list(args.get("languages"));
  const std::string tokenizer = args.get("tokenizer");
  const PromptCompressor compressor(options, tokenizer.empty() ? nullptr : load_tokenizer(tokenizer));
  const std::string text = read_input(args.positional[0], Tokenizer::kMaxInputBytes);
  const auto start = Clock::now();
  const CompressedText c = compressor.compress(text);
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  if (args.json) {
    nlohmann::json out = compressed_json(c, text.size());
    out["milliseconds"] = ms;
    std::printf("%s\n", out.dump().c_str());
  } else {
    std::printf("%s\n", c.text.c_str());
    std::fprintf(stderr, "%s %zu bytes to %zu tokens (%zu bytes) in %.2f ms: %zu of %zu units kept%s%s\n",
                 c.compressed ? "compressed" : "kept whole:", text.size(), c.tokens, c.text.size(), ms, c.units_kept,
                 c.units, c.language.empty() ? "" : ", stop words: ", c.language.c_str());
  }
  return 0;
}

int run_check_answer(const std::vector<std::string>& argv) {
  const Options args = parse_options(argv, kCheckUsage,
                                     {"context", "question", "nli", "format", "stop-at", "template", "threshold",
                                      "windows", "max-length", "dtype", "device"});
  if (args.positional.empty() || args.positional.size() > 2 || !args.has("context")) throw InvalidInput(kCheckUsage);
  DetectorOptions options;
  options.input_template = detector_template_named(args.get("template", "lettucedetect"));
  options.threshold = args.number("threshold", options.threshold);
  options.context_windows = static_cast<size_t>(args.integer("windows", static_cast<int64_t>(options.context_windows)));
  PipelineOptions pipeline;
  pipeline.load = parse_load_options(args.get("device", "cpu"), args.get("dtype", "float32"));
  pipeline.max_length = static_cast<size_t>(args.integer("max-length", 0));
  const auto detector = HallucinationDetector::load(args.positional[0], args.get("nli"), options, pipeline);
  const std::string context = read_file(args.get("context"), Tokenizer::kMaxInputBytes);
  StreamOptions stream_options;
  stream_options.stop_severity = severity_named(args.get("stop-at"));
  const std::string format = args.get("format", "auto");
  if (format != "auto" && format != "sse" && format != "text") throw InvalidInput("--format must be auto, sse or text");
  const auto truth = detector->pin(context, args.get("question"));

  std::unique_ptr<AnswerStream> stream;
  std::string head;  // bytes read before the format is known (auto)
  size_t sentences = 0, flagged = 0;
  double max_score = 0, total_ms = 0;
  const auto report = [&](const std::vector<StreamEvent>& events) {
    for (const auto& e : events) {
      print_sentence(e, args.json);
      ++sentences;
      flagged += e.kind != StreamEventKind::kOk;
      max_score = std::max(max_score, e.check.max_score);
      total_ms += e.check.latency.count() / 1000.0;
    }
  };
  const auto open = [&](bool sse) {
    stream_options.format = sse ? StreamFormat::kSse : StreamFormat::kText;
    stream = std::make_unique<AnswerStream>(detector, truth, stream_options);
  };
  read_input_chunks(args.positional.size() == 2 ? args.positional[1] : "-", size_t{1} << 30, [&](std::string_view chunk) {
    if (stream && stream->stopped()) return;
    if (!stream) {
      head.append(chunk);
      if (format == "auto" && head.find_first_not_of(" \t\r\n") == std::string::npos) return;
      open(format == "sse" || (format == "auto" && looks_like_sse(head)));
      chunk = head;
    }
    report(as_input_error([&] { return stream->feed(chunk); }));
    head.clear();
  });
  if (!stream) open(format == "sse");
  if (!stream->stopped()) report(as_input_error([&] { return stream->finish(); }));
  if (!args.json)
    std::fprintf(stderr, "%zu sentences, %zu with unsupported spans%s; max score %.3f; %.2f ms per sentence\n",
                 sentences, flagged, stream->stopped() ? " (stopped)" : "", max_score,
                 sentences ? total_ms / static_cast<double>(sentences) : 0.0);
  return flagged ? 3 : 0;
}

}  // namespace semroute::cli
