// Texts for classify / tokens / embed / unified from a file or stdin:
// `--input FILE` or a single `-`. One text per line, or JSONL objects with a
// "text" field; answers stream out as JSONL, one object per text, in batches
// (bounded memory for any number of lines).
#include <cstdio>
#include <fstream>
#include <iostream>

#include "cli.h"
#include "core/file_input.h"
#include "semroute/error.h"
#include "tokenizers/tokenizer.h"

namespace semroute::cli {
namespace {

constexpr size_t kBatchTexts = 32;
constexpr size_t kBatchBytes = size_t{8} << 20;

struct Line {
  size_t number = 0;
  std::string text;
  std::string error;  // why the line has no text
};

// Reads one line (without its '\n' or '\r\n'), keeping at most `cap` bytes.
bool read_line(std::streambuf& in, std::string& line, size_t cap, bool& too_long) {
  line.clear();
  too_long = false;
  int c = in.sbumpc();
  if (c == EOF) return false;
  for (; c != EOF && c != '\n'; c = in.sbumpc()) {
    if (line.size() < cap) line.push_back(static_cast<char>(c));
    else too_long = true;
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return true;
}

Line parse_line(size_t number, std::string&& raw, bool too_long) {
  Line line{number, {}, {}};
  if (too_long) {
    line.error = "longer than " + std::to_string(Tokenizer::kMaxInputBytes) + " bytes";
  } else if (!raw.empty() && raw.front() == '{') {
    try {
      const nlohmann::json j = parse_json(raw, "line " + std::to_string(number));
      const auto it = j.find("text");
      if (it == j.end() || !it->is_string()) line.error = "a JSON line needs a \"text\" string";
      else line.text = it->get<std::string>();
    } catch (const Error& e) {
      line.error = e.what();
    }
  } else {
    line.text = std::move(raw);
  }
  return line;
}

void print_line(const nlohmann::json& j) {
  const std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fputc('\n', stdout);
}

nlohmann::json error_line(const Line& line, const std::string& message) {
  return {{"line", line.number}, {"error", message}};
}

// Answers a batch; if the batch fails, each text alone, so one bad line
// gets its own error line and the others their answers. Returns the failures.
size_t answer_batch(const std::vector<Line>& batch, const TextAnswerer& answer) {
  std::vector<std::string_view> texts;
  for (const auto& line : batch) texts.push_back(line.text);
  try {
    const std::vector<nlohmann::json> answers = answer(texts);
    for (size_t i = 0; i < batch.size(); ++i) {
      nlohmann::json j = answers.at(i);
      j["line"] = batch[i].number;
      print_line(j);
    }
    return 0;
  } catch (const Error&) {
    if (batch.size() == 1) throw;
  }
  size_t failures = 0;
  for (const auto& line : batch) {
    try {
      answer_batch({line}, answer);
    } catch (const Error& e) {
      print_line(error_line(line, e.what()));
      ++failures;
    }
  }
  return failures;
}

}  // namespace

bool reads_input(const Args& args, size_t first_text) {
  return !args.input.empty() || (args.positional.size() == first_text + 1 && args.positional[first_text] == "-");
}

int stream_texts(const Args& args, const TextAnswerer& answer) {
  const std::string source = args.input.empty() ? "-" : args.input;
  std::ifstream file;
  if (source != "-") {
    file.open(source, std::ios::binary);
    if (!file) throw InvalidInput(source + ": cannot open", ErrorCode::kNotFound);
  }
  std::streambuf& in = source == "-" ? *std::cin.rdbuf() : *file.rdbuf();
  size_t failures = 0, number = 0, bytes = 0;
  std::vector<Line> batch;
  std::string raw;
  bool too_long = false;
  const auto flush = [&] {
    if (!batch.empty()) failures += answer_batch(batch, answer);
    batch.clear();
    bytes = 0;
    std::fflush(stdout);
  };
  while (read_line(in, raw, Tokenizer::kMaxInputBytes, too_long)) {
    Line line = parse_line(++number, std::move(raw), too_long);
    if (!line.error.empty()) {
      flush();  // keep the output in input order
      print_line(error_line(line, line.error));
      ++failures;
      continue;
    }
    bytes += line.text.size();
    batch.push_back(std::move(line));
    if (batch.size() == kBatchTexts || bytes >= kBatchBytes) flush();
  }
  flush();
  return failures == 0 ? 0 : 1;
}

}  // namespace semroute::cli
