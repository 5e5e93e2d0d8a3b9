// Shared pieces of the semroute command-line tool.
#pragma once

#include <ATen/core/Tensor.h>

#include <nlohmann/json.hpp>

#include "models/core_model.h"
#include "tasks/task_model.h"
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace semroute::cli {

struct Args {
  std::vector<std::string> positional;
  bool json = false;
  std::string adapter;  // --adapter DIR
  std::string head;     // --head DIR: a head bound to the model's encoder
  bool unmerged = false;  // --unmerged: keep the adapter beside the weights
  bool pair_scorer = false;  // make-model --pair-scorer
  std::string vela2;         // make-model --vela2 READOUT (cosine, mlp, both)
  bool decision2 = false;    // make-model --decision2
  std::string tasks;      // --tasks a,b
  bool accuracy = false;  // --accuracy
  std::string pair;     // --pair TEXT
  bool no_special = false;  // --no-special
  size_t max_length = 0;    // --max-length N
  std::string labels;        // --labels a,b,c
  std::string token_labels;  // --token-labels O,B-X,I-X
  std::string tokenizer;     // --tokenizer PATH
  uint64_t seed = 1;         // --seed N
  std::string truncation;    // --truncation start|end|both
  std::string overflow;      // --overflow truncate|reject
  bool count_input_tokens = false;  // --count-input-tokens
  bool windows = false;             // --windows: classify long documents window by window
  size_t window_size = 0;           // --window-size N (0: the model's max_length)
  size_t overlap = 0;               // --overlap N
  size_t max_document_tokens = 0;   // --max-document-tokens N (0: no limit)
  std::string pooling;       // --pooling mean|cls|last
  int64_t dimension = 0;     // --dim N
  int64_t layer = 0;         // --layer K
  bool no_normalize = false; // --no-normalize
  std::string prompt;        // --prompt TEXT
  std::string device;        // --device cpu|cuda|cuda:N|auto
  std::string dtype;         // --dtype float32|float16|bfloat16|auto
  std::string input;         // --input FILE ("-": stdin)
  std::map<std::string, std::string> metadata;  // --meta KEY=VALUE (route)
};

// Parses flags common to all subcommands; throws InvalidInput on unknown ones.
Args parse_args(int argc, char** argv, int first);

// Device and dtype from --device / --dtype (CPU and float32 by default).
LoadOptions load_options(const Args& args);
// The one conversion of the flags into pipeline options: device, dtype,
// --max-length, --truncation, --tokenizer, --adapter, --unmerged.
TaskOptions task_options(const Args& args);

// {shape, data} with data flat and row-major, as in the fixtures' reference.json.
nlohmann::json tensor_json(const at::Tensor& t);

int run_info(const Args& args);
int run_forward(const Args& args);
int run_tokenize(const Args& args);
int run_make_model(const Args& args);
int run_classify(const Args& args);
int run_tokens(const Args& args);
int run_embed(const Args& args);
int run_route(const Args& args);
int run_similarity(const Args& args);
int run_rerank(const Args& args);
int run_intents(const Args& args);
int run_merge_adapter(const Args& args);
int run_unified(const Args& args);
// Their own options (see train.cpp): the arguments after the command.
int run_train(const std::vector<std::string>& argv);
int run_calibrate(const std::vector<std::string>& argv);
int run_average(const std::vector<std::string>& argv);
int run_trim_vocab(const std::vector<std::string>& argv);
int run_serve(const std::vector<std::string>& argv);
int run_runtime(const std::vector<std::string>& argv);
int run_decide(const std::vector<std::string>& argv);
int run_compress(const std::vector<std::string>& argv);
int run_check_answer(const std::vector<std::string>& argv);

// One JSON answer per text, in order (classify, tokens, embed, unified).
using TextAnswerer = std::function<std::vector<nlohmann::json>(const std::vector<std::string_view>&)>;
// Whether the texts come from --input FILE or a lone "-" (stdin) at
// positional[first_text] instead of the command line.
bool reads_input(const Args& args, size_t first_text);
// Answers the texts of --input / stdin (one per line, or JSONL with "text")
// in batches, printing one JSON line per text ({"line": N, …} or
// {"line": N, "error": …}). Exit code 0, or 1 when any line failed.
int stream_texts(const Args& args, const TextAnswerer& answer);

// The arguments of commands with options of their own (train, trim-vocab,
// compress, check-answer): --key VALUE for the keys given, --json, the rest
// positional. An unknown --option is InvalidInput with `usage`.
struct Options {
  std::map<std::string, std::string> values;
  std::vector<std::string> positional;
  bool json = false;
  std::string get(const std::string& key, const std::string& fallback = "") const;
  bool has(const std::string& key) const { return values.count(key) != 0; }
  double number(const std::string& key, double fallback) const;
  int64_t integer(const std::string& key, int64_t fallback) const;  // whole and >= 0
};
Options parse_options(const std::vector<std::string>& argv, const std::string& usage,
                      const std::vector<std::string>& keys);

// `source` ("-": stdin) as it arrives, chunk by chunk (stdin in the pieces
// read(2) returns), at most `limit` bytes in all (kTooLong past it).
void read_input_chunks(const std::string& source, size_t limit, const std::function<void(std::string_view)>& on_chunk);
// All of `source` ("-": stdin), at most `limit` bytes.
std::string read_input(const std::string& source, size_t limit);

// "a,b,c" -> {"a", "b", "c"} (empty items dropped).
std::vector<std::string> split_list(const std::string& csv);

}  // namespace semroute::cli
