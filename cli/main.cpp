// semroute: command-line access to the library (inspect, run, check models).
// Built as the module libsemroute_cli.so that the `semroute` launcher
// (launcher.cpp) loads for every command but `version`.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "cli.h"
#include "semroute/error.h"
#include "semroute/version.h"

namespace {

const char* kUsage = R"(usage: semroute <command> [options]

commands:
  info MODEL_DIR [--json]
      Open and validate a Hugging Face model directory (config.json, every
      tensor of the safetensors weights, and the tensors its backend needs)
      and describe it.
  forward MODEL_DIR CASES.json [--adapter DIR] [--json]
      Run the model on the token ids of each case (the format of a fixture's
      reference.json: cases[] with input_ids, attention_mask, optional
      token_type_ids) and print every output it can produce.
  tokenize MODEL_DIR TEXT [--pair TEXT] [--no-special] [--max-length N] [--json]
      Token ids, tokens and byte offsets of TEXT with the model's tokenizer
      (tokenizer.json, or a SentencePiece tokenizer.model). MODEL_DIR may
      also be a tokenizer.json file.
  classify MODEL_DIR TEXT... [--pair TEXT] [--max-length N] [--truncation start|end|both] [--adapter DIR] [--json]
      Sequence classification: label, confidence and every probability.
      With --pair, each TEXT is a premise and the pair text its hypothesis.
  tokens MODEL_DIR TEXT... [--max-length N] [--adapter DIR] [--json]
      Token classification: entity spans (type, byte range, text, score).
      Both: --overflow reject refuses a text longer than the limit (exit 1)
      instead of truncating it; --json gives each text's "input" (tokens in,
      tokens read, truncated), counted to its end with --count-input-tokens.
      --windows [--window-size N] [--overlap N] [--max-document-tokens N]: a long
      document window by window (never cut), as JSON; for tokens, one result
      over the whole document with its windows' token ranges.
      --head DIR: the task head of the checkpoint in DIR on MODEL_DIR's encoder
      (a backbone: the encoder alone, or any checkpoint of the same architecture
      and width); DIR gives the labels, head shape and, if it has one, the tokenizer.
  embed MODEL_DIR TEXT... [--pooling mean|cls|last] [--dim N] [--layer K] [--no-normalize] [--json]
      Sentence embeddings (Matryoshka dimension N, early exit after layer K)
      and the cosine similarity of every pair of texts.
  similarity MODEL_DIR TEXT_A TEXT_B [--dim N] [--json]
      Cosine similarity of two texts' embeddings.
  rerank MODEL_DIR QUERY DOCUMENT... [--layer N] [--dim N] [--json]
      The documents ranked by a cross-encoder pair scorer (a raw relevance
      logit each, highest first); --layer / --dim pick a trained exit.
  intents MODEL_DIR INTENTS.yaml TEXT... [--json]
      Match texts against few-shot intents (name + example sentences) by
      k-nearest neighbours; the YAML may set k, threshold, aggregation.
  unified CONFIG.yaml TEXT... [--tasks a,b] [--accuracy] [--json]
      The unified classifier: every configured task (intent, PII, security …)
      answered by its fine-tuned model or the LoRA multi-task engine, with the
      path chosen, why, and its latency.
  route CONFIG.yaml REQUEST.json [--meta KEY=VALUE]... [--json]
      The router: an OpenAI chat-completions request (a file, or - for
      stdin) through the config's decisions: the decision, the rewritten
      request, headers, and which signals ran (and which were skipped).
  compress FILE|- [--max-tokens N] [--tokenizer PATH] [--head R] [--tail R] [--stop-words yes|no] [--json]
      Reduce a long prompt to a skeleton within N tokens (start and end kept,
      stop words dropped between, the most informative sentences kept), with
      the byte ranges of the original it kept (--json).
  check-answer DETECTOR_DIR --context FILE [ANSWER|-] [--question TEXT] [--nli DIR] [--stop-at SEVERITY] [--json]
      Check an LLM answer against its context as it streams in (an OpenAI SSE
      stream or plain text on stdin): each sentence judged when complete, its
      unsupported spans and their NLI label. Exit code 3 when any is found.
  merge-adapter BASE_DIR ADAPTER_DIR OUT_DIR
      Fold a PEFT LoRA adapter into its base (merge_and_unload): a plain model
      directory with the adapter's head and labels, marked by lora_config.json.
  make-model PRESET OUT_DIR [--labels a,b] [--token-labels O,B-X,I-X] [--pair-scorer | --vela2 READOUT]
             [--tokenizer FILE] [--seed N]
      Write a ModernBERT checkpoint with random weights (presets:
      modernbert-base, mmbert-base, mmbert-small, medium, small, tiny) for tests and benchmarks;
      --vela2 cosine|mlp|both: a Vela 2.0 package on it (--max-length N, --tokenizer needed);
      --decision2: a Decision 2.0 package (a tiny Qwen3 backbone; PRESET is ignored).
  train --task sequence|token|mlm --data FILE.jsonl --out DIR (--base DIR | --preset P --tokenizer FILE) …
      Fine-tune a model (or train one from scratch, or a PEFT LoRA adapter
      with --lora R) on JSONL rows of text + label, or text + spans (byte
      offsets); held-out split, early stopping, scores against a naive-Bayes
      baseline. `semroute train --help` lists every option.
  calibrate MODEL_DIR [--alarm-label LABEL] [--max-false-alarms F]
      Score a model `semroute train` saved on its validation, test and
      held-out-source rows by source; fit and save its temperature; pick an
      alarm threshold on validation (train runs this at its end).
  average --out DIR MODEL_DIR MODEL_DIR [MODEL_DIR...]
      The mean of models (or adapters) trained from the same start on the
      same split (e.g. differing in --order-seed): one model, steadier than
      a single run, at the cost of one; calibrated as by calibrate.
  trim-vocab --tokenizer FILE --data A.jsonl[,B.jsonl] --size N --out FILE
      Cut a BPE tokenizer.json down to the N tokens the texts use most.
  serve CONFIG.yaml [--listen HOST:PORT] [--unix-socket PATH]
      The models, unified classifiers and routers of CONFIG.yaml over HTTP
      (a sidecar; docs/serve.md). SIGTERM drains, SIGHUP reloads routers.
  serve --models FILE.json --uds PATH [--max-request-bytes N] [--max-bundle-tasks N] …
      The vLLM Semantic Router's model runtime, as the router starts one
      (its models file; docs/runtime.md).
  decide MODEL_DIR (REQUEST.json | - | --input REQUESTS.jsonl | --questions Q.json (--state TEXT | --input STATES))
      A Vela 2.0 decision model's answers to typed questions about a state
      (docs/decisions.md).
  runtime (MODEL_DIR | --models FILE.json) PATH [REQUEST.json | -]
      One request of the runtime contract in process (/v1/classify,
      /v1/embeddings, /v1/rerank, /v1/bundle, /v1/models, /health): its JSON answer.
  version
      Print the library version.

options:
  --json           machine-readable output with stable keys (see docs/cli.md)
  --tokenizer P    tokenizer.json (or its directory) when not beside the model
  --device D       cpu (default), cuda, cuda:N or auto
  --dtype T        float32 (default), bfloat16, float16 or auto
  --adapter DIR    a PEFT LoRA adapter for the model (classify, tokens, embed, forward),
                   merged into the weights at load; --unmerged keeps it beside them
  --input FILE     tokenize / classify / tokens / embed / unified: read the texts from FILE
                   (or stdin for "-", also accepted in place of the texts), one per
                   line or JSONL objects with a "text" field; answers are printed as
                   JSONL, one object per text with its "line" (or an "error")
  --               end of the options: every later argument is a text, even "-x"
  -h, --help  this help

exit codes: 0 success; 1 an error (model, input, or any --input line that
failed: see its "error" line); 2 bad usage (unknown option, missing argument);
3 check-answer found unsupported spans.
Errors go to stderr.
)";

}  // namespace

extern "C" __attribute__((visibility("default"))) int semroute_cli_main(int argc, char** argv) {
  using namespace semroute;
  if (argc < 2 || std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  try {
    const std::vector<std::string> rest(argv + 2, argv + argc);
    if (command == "train") return cli::run_train(rest);
    if (command == "calibrate") return cli::run_calibrate(rest);
    if (command == "average") return cli::run_average(rest);
    if (command == "trim-vocab") return cli::run_trim_vocab(rest);
    if (command == "serve") return cli::run_serve(rest);
    if (command == "runtime") return cli::run_runtime(rest);
    if (command == "decide") return cli::run_decide(rest);
    if (command == "compress") return cli::run_compress(rest);
    if (command == "check-answer") return cli::run_check_answer(rest);
    const cli::Args args = cli::parse_args(argc, argv, 2);
    if (command == "info") return cli::run_info(args);
    if (command == "forward") return cli::run_forward(args);
    if (command == "tokenize") return cli::run_tokenize(args);
    if (command == "classify") return cli::run_classify(args);
    if (command == "tokens") return cli::run_tokens(args);
    if (command == "embed") return cli::run_embed(args);
    if (command == "similarity") return cli::run_similarity(args);
    if (command == "rerank") return cli::run_rerank(args);
    if (command == "intents") return cli::run_intents(args);
    if (command == "make-model") return cli::run_make_model(args);
    if (command == "merge-adapter") return cli::run_merge_adapter(args);
    if (command == "unified") return cli::run_unified(args);
    if (command == "route") return cli::run_route(args);
    if (command == "version") {
      std::printf("semroute %s\n", SEMROUTE_VERSION_STRING);
      return 0;
    }
    std::fprintf(stderr, "semroute: unknown command '%s'\n\n%s", command.c_str(), kUsage);
    return 2;
  } catch (const InvalidInput& e) {
    std::fprintf(stderr, "semroute %s: %s\n", command.c_str(), e.what());
    return e.code() == ErrorCode::kInvalidArgument ? 2 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "semroute %s: %s\n", command.c_str(), e.what());
    return 1;
  }
}
