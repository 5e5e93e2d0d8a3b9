#include <sstream>
#include <ATen/ops/contiguous.h>  // IWYU pragma: keep
#include <ATen/ops/to.h>          // IWYU pragma: keep

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "cli.h"
#include "core/file_input.h"
#include "core/device.h"
#include "tasks/text_batch.h"
#include "semroute/error.h"

namespace semroute::cli {

std::string Options::get(const std::string& key, const std::string& fallback) const {
  const auto it = values.find(key);
  return it == values.end() ? fallback : it->second;
}

double Options::number(const std::string& key, double fallback) const {
  const auto it = values.find(key);
  if (it == values.end()) return fallback;
  char* end = nullptr;
  const double v = std::strtod(it->second.c_str(), &end);
  if (end == it->second.c_str() || *end != '\0' || !std::isfinite(v))
    throw InvalidInput("--" + key + " needs a number, got '" + it->second + "'");
  return v;
}

int64_t Options::integer(const std::string& key, int64_t fallback) const {
  const double v = number(key, static_cast<double>(fallback));
  if (v != std::floor(v) || v < 0 || v > 9e15) throw InvalidInput("--" + key + " needs a whole number >= 0");
  return static_cast<int64_t>(v);
}

Options parse_options(const std::vector<std::string>& argv, const std::string& usage,
                      const std::vector<std::string>& keys) {
  Options args;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (arg == "--") {
      args.positional.insert(args.positional.end(), argv.begin() + static_cast<std::ptrdiff_t>(i) + 1, argv.end());
      break;
    }
    if (arg == "--json") {
      args.json = true;
      continue;
    }
    if (arg.size() < 2 || arg.rfind("--", 0) != 0) {
      args.positional.push_back(arg);
      continue;
    }
    const std::string key = arg.substr(2);
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      throw InvalidInput("unexpected argument '" + arg + "'\n" + usage);
    if (i + 1 >= argv.size()) throw InvalidInput(arg + " needs a value");
    args.values[key] = argv[++i];
  }
  return args;
}

void read_input_chunks(const std::string& source, size_t limit,
                       const std::function<void(std::string_view)>& on_chunk) {
  if (source != "-") {
    on_chunk(read_file(source, limit));
    return;
  }
  char buffer[1 << 16];
  size_t total = 0;
  for (;;) {
    const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (n == 0) return;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(ErrorCode::kNotFound, "cannot read stdin");
    }
    total += static_cast<size_t>(n);
    if (total > limit)
      throw Error(ErrorCode::kTooLong, "the input on stdin exceeds " + std::to_string(limit) + " bytes");
    on_chunk(std::string_view(buffer, static_cast<size_t>(n)));
  }
}

std::string read_input(const std::string& source, size_t limit) {
  std::string text;
  read_input_chunks(source, limit, [&](std::string_view chunk) { text.append(chunk); });
  return text;
}

Args parse_args(int argc, char** argv, int first) {
  Args args;
  for (int i = first; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") {  // the rest are texts, even when they start with '-'
      args.positional.insert(args.positional.end(), argv + i + 1, argv + argc);
      break;
    }
    if (arg == "--json") {
      args.json = true;
    } else if (arg == "--adapter") {
      if (i + 1 >= argc) throw InvalidInput("--adapter needs a directory");
      args.adapter = argv[++i];
    } else if (arg == "--head") {
      if (i + 1 >= argc) throw InvalidInput("--head needs a directory");
      args.head = argv[++i];
    } else if (arg == "--pair") {
      if (i + 1 >= argc) throw InvalidInput("--pair needs a text");
      args.pair = argv[++i];
    } else if (arg == "--labels" || arg == "--token-labels" || arg == "--tokenizer" || arg == "--seed" ||
               arg == "--truncation" || arg == "--overflow") {
      if (i + 1 >= argc) throw InvalidInput(arg + " needs a value");
      const std::string value = argv[++i];
      if (arg == "--labels") args.labels = value;
      if (arg == "--token-labels") args.token_labels = value;
      if (arg == "--tokenizer") args.tokenizer = value;
      if (arg == "--seed") args.seed = std::strtoull(value.c_str(), nullptr, 10);
      if (arg == "--truncation") args.truncation = value;
      if (arg == "--overflow") args.overflow = value;
    } else if (arg == "--device" || arg == "--dtype") {
      if (i + 1 >= argc) throw InvalidInput(arg + " needs a value");
      (arg == "--device" ? args.device : args.dtype) = argv[++i];
    } else if (arg == "--prompt") {
      if (i + 1 >= argc) throw InvalidInput("--prompt needs a text");
      args.prompt = argv[++i];
    } else if (arg == "--pooling" || arg == "--dim" || arg == "--layer") {
      if (i + 1 >= argc) throw InvalidInput(arg + " needs a value");
      const std::string value = argv[++i];
      if (arg == "--pooling") args.pooling = value;
      if (arg == "--dim") args.dimension = std::atoll(value.c_str());
      if (arg == "--layer") args.layer = std::atoll(value.c_str());
    } else if (arg == "--count-input-tokens") {
      args.count_input_tokens = true;
    } else if (arg == "--windows") {
      args.windows = true;
    } else if (arg == "--window-size" || arg == "--overlap" || arg == "--max-document-tokens") {
      if (i + 1 >= argc) throw InvalidInput(arg + " needs a number");
      const long long n = std::atoll(argv[++i]);
      if (n < 0) throw InvalidInput(arg + " must be >= 0");
      (arg == "--window-size" ? args.window_size : arg == "--overlap" ? args.overlap : args.max_document_tokens) =
          static_cast<size_t>(n);
      args.windows = true;
    } else if (arg == "--no-normalize") {
      args.no_normalize = true;
    } else if (arg == "--unmerged") {
      args.unmerged = true;
    } else if (arg == "--pair-scorer") {
      args.pair_scorer = true;
    } else if (arg == "--decision2") {
      args.decision2 = true;
    } else if (arg == "--vela2") {
      if (i + 1 >= argc) throw InvalidInput("--vela2 needs a readout (cosine, mlp or both)");
      args.vela2 = argv[++i];
    } else if (arg == "--accuracy") {
      args.accuracy = true;
    } else if (arg == "--tasks") {
      if (i + 1 >= argc) throw InvalidInput("--tasks needs a comma-separated list");
      args.tasks = argv[++i];
    } else if (arg == "--meta") {
      if (i + 1 >= argc || std::strchr(argv[i + 1], '=') == nullptr) throw InvalidInput("--meta needs KEY=VALUE");
      const std::string item = argv[++i];
      args.metadata[item.substr(0, item.find('='))] = item.substr(item.find('=') + 1);
    } else if (arg == "--input") {
      if (i + 1 >= argc) throw InvalidInput("--input needs a file (or - for stdin)");
      args.input = argv[++i];
    } else if (arg == "--no-special") {
      args.no_special = true;
    } else if (arg == "--max-length") {
      if (i + 1 >= argc) throw InvalidInput("--max-length needs a number");
      const long long n = std::atoll(argv[++i]);
      if (n <= 0) throw InvalidInput("--max-length must be a positive number");
      args.max_length = static_cast<size_t>(n);
    } else if (arg.size() > 1 && arg[0] == '-') {
      throw InvalidInput("unknown option '" + arg + "' (see semroute --help; put -- before a text that starts with -)");
    } else {
      args.positional.push_back(arg);
    }
  }
  return args;
}

std::vector<std::string> split_list(const std::string& csv) {
  std::vector<std::string> items;
  std::stringstream in(csv);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

LoadOptions load_options(const Args& args) {
  return parse_load_options(args.device.empty() ? "cpu" : args.device, args.dtype.empty() ? "float32" : args.dtype);
}

TaskOptions task_options(const Args& args) {
  TaskOptions options;
  options.load = load_options(args);
  options.max_length = args.max_length;
  if (!args.truncation.empty()) options.truncation = parse_truncation(args.truncation);
  if (!args.overflow.empty()) options.overflow = parse_overflow(args.overflow);
  options.count_input_tokens = args.count_input_tokens;
  options.tokenizer = args.tokenizer;
  options.adapter = args.adapter;
  options.merge_adapter = !args.unmerged;
  return options;
}

nlohmann::json tensor_json(const at::Tensor& t) {
  const at::Tensor values = t.to(c10::kFloat).contiguous();
  const float* data = values.data_ptr<float>();
  return {{"shape", t.sizes().vec()}, {"data", std::vector<float>(data, data + values.numel())}};
}

}  // namespace semroute::cli
