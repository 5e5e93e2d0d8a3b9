// `semroute train`: fine-tune (or train from scratch) a ModernBERT sequence
// classifier, token classifier or masked LM on JSONL, fully or as a LoRA
// adapter; and `semroute trim-vocab`, the tokenizer for a model from scratch.
#include <unistd.h>

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <functional>

#include "cli.h"
#include "training_run.h"
#include "core/config_reader.h"
#include "core/cpu_features.h"
#include "core/device.h"
#include "core/runtime.h"
#include "core/tensor_cache.h"
#include "core/model_config.h"
#include "models/random_model.h"
#include "semroute/error.h"
#include "training/export.h"
#include "training/trainer.h"
#include "training/vocab_trim.h"

namespace semroute::cli {

namespace fs = std::filesystem;
using namespace semroute::training;

namespace {

const char* kTrainUsage =
    "usage: semroute train --task sequence|token|mlm --data FILE.jsonl --out DIR\n"
    "         (--base MODEL_DIR | --preset small|medium|tiny|modernbert-base --tokenizer tokenizer.json)\n"
    "         [--lora R [--lora-alpha A] [--lora-targets Wqkv,Wo,Wi]] [--epochs N] [--batch-size N]\n"
    "         [--lr X] [--max-length N] [--dropout P] [--patience N] [--valid F] [--test F] [--seed N]\n"
    "         [--order-seed N] [--max-steps N] [--pooling mean|cls] [--save-dtype float32|float16|bfloat16]\n"
    "         [--random-windows N] [--final-sentences MIN_WORDS] [--map-labels OLD=NEW,...]\n"
    "         [--hold-out FIELD=VALUE,...] [--hold-out-share FIELD=FRACTION,...]\n"
    "         [--checkpoint-dir DIR [--checkpoint-every N]] [--alarm-label LABEL [--max-false-alarms F]]\n"
    "         [--entity-threshold P] [--entity-aggregation word|token] [--device cpu|cuda|cuda:N]\n"
    "         [--compute-dtype float32|bfloat16] [--json]\n"
    "--data takes several files (comma-separated); a text is held out (--valid, --test fractions)\n"
    "by a hash of its text and --seed, so runs with the same seed agree on the split.\n"
    "--hold-out source=xstest keeps every row whose field equals the value out of training (and out of\n"
    "--valid/--test): it is scored apart, as out-of-source data; --hold-out-share template_id=0.1 holds out\n"
    "a seeded tenth of the field's values. --final-sentences N adds the last sentence (N+ words) of every\n"
    "multi-sentence training text as a short example with its label.\n"
    "--order-seed N draws the example order, dropout and masking (by default --seed): runs that differ\n"
    "only in it share the split and the starting weights, and can be averaged (`semroute average`).\n"
    "--entity-aggregation (token tasks): the saved model's spans are read word by word (a word takes its\n"
    "first token's label; the default) or token by token.\n"
    "At the end the saved model is scored as `semroute calibrate` does (evaluation.json): the temperature\n"
    "fitted on validation is saved with it; --alarm-label picks the threshold on validation, and so is a\n"
    "token task's entity threshold unless --entity-threshold gives it.\n"
    "--checkpoint-dir: a checkpoint after every epoch (and every N steps); run the same command again\n"
    "after a stop and training goes on from the last one, to the same weights (on the CPU; a GPU run resumes\n"
    "on a GPU, its dropout draws anew).\n"
    "--device cuda trains on the GPU of a CUDA libtorch; the model is scored and saved as on the CPU.\n"
    "--compute-dtype bfloat16: mixed precision, the matrix products in bfloat16 (1.1-1.4x faster on a CPU with\n"
    "AVX-512 BF16 or AMX, refused on one without), weights, gradients and the rest in float32.";

c10::ScalarType parse_storage(const std::string& name) {
  if (name == "float32") return at::kFloat;
  if (name == "float16") return at::kHalf;
  if (name == "bfloat16") return at::kBFloat16;
  throw InvalidInput("--save-dtype must be float32, float16 or bfloat16");
}

// A training step frees and asks again for gigabytes of activations; kept
// for the next step they spare the kernel zeroing fresh pages (pretraining
// in bfloat16: 1.19x faster; float32 gains less). At most 8 GB idle, or a
// quarter of the memory.
size_t training_tensor_cache_bytes() {
  const auto memory = static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return std::min(size_t{8} << 30, memory / 4);
}

c10::ScalarType compute_dtype_option(const std::string& name) {
  if (name == "float32") return at::kFloat;
  if (name == "bfloat16") return at::kBFloat16;
  throw InvalidInput("--compute-dtype must be float32 or bfloat16");
}

// --entity-aggregation: how the token model's spans are read, saved with it
// (semroute_entity_aggregation). Word by word by default: every token trains
// on its label, and a word then follows its first token; on the default PII
// data that beats token by token in and out of distribution (models/README.md).
EntityAggregation entity_aggregation_option(const Options& args, Objective kind) {
  if (!args.values.count("entity-aggregation")) return EntityAggregation::kWord;
  if (kind != Objective::kToken) throw InvalidInput("--entity-aggregation applies to token tasks");
  const auto aggregation = parse_entity_aggregation(args.get("entity-aggregation"));
  if (!aggregation) throw InvalidInput("--entity-aggregation must be word or token");
  return *aggregation;
}

int32_t token_id(const Tokenizer& tokenizer, std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (const auto id = tokenizer.token_to_id(name)) return *id;
  return -1;
}

// The config the model starts from: the base's, or a preset's sized to the tokenizer.
nlohmann::json start_config(const Options& args, const Tokenizer& tokenizer) {
  const std::string base = args.get("base");
  nlohmann::json config;
  if (!base.empty()) {
    config = ConfigReader::from_file(fs::path(base) / "config.json").json();
  } else {
    config = modernbert_preset_config(args.get("preset", "small"));
    const int32_t cls = token_id(tokenizer, {"[CLS]", "<s>"}), sep = token_id(tokenizer, {"[SEP]", "</s>"});
    if (cls < 0 || sep < 0) throw InvalidInput("the tokenizer has no [CLS]/<s> or [SEP]/</s> token");
    config["vocab_size"] = tokenizer.vocab_size();
    config["pad_token_id"] = tokenizer.pad_id();
    config["cls_token_id"] = config["bos_token_id"] = cls;
    config["sep_token_id"] = config["eos_token_id"] = sep;
    // A model from scratch has seen no position beyond its training length:
    // every loader truncates there.
    config["max_position_embeddings"] = args.integer("max-length", 256);
  }
  if (args.values.count("pooling")) config["classifier_pooling"] = args.get("pooling");
  const double dropout = args.number("dropout", 0.1);
  for (const char* key : {"embedding_dropout", "attention_dropout", "mlp_dropout", "classifier_dropout"})
    config[key] = dropout;
  return config;
}

std::string duration(double seconds) {
  const auto s = static_cast<long>(seconds);
  char text[32];
  if (s >= 3600) std::snprintf(text, sizeof text, "%ldh%02ldm", s / 3600, s / 60 % 60);
  else std::snprintf(text, sizeof text, "%ldm%02lds", s / 60, s % 60);
  return text;
}

// A progress bar on a terminal; elsewhere one plain line per 5 % of steps.
std::function<void(const Progress&)> progress_printer() {
  const bool terminal = isatty(STDERR_FILENO) != 0;
  auto last_reported = std::make_shared<int64_t>(-1);
  return [terminal, last_reported](const Progress& p) {
    const double done = static_cast<double>(p.step) / static_cast<double>(std::max<int64_t>(1, p.steps));
    const double eta = p.step ? p.seconds / static_cast<double>(p.step) * static_cast<double>(p.steps - p.step) : 0;
    const auto percent = static_cast<int64_t>(done * 100);
    if (terminal) {
      const int width = 30, filled = static_cast<int>(done * width);
      std::fprintf(stderr, "\repoch %lld/%lld [%s%s] %3lld%% loss %.4f acc %.3f ETA %s ",
                   static_cast<long long>(p.epoch), static_cast<long long>(p.epochs), std::string(filled, '#').c_str(),
                   std::string(width - filled, '.').c_str(), static_cast<long long>(percent), p.loss, p.accuracy,
                   duration(eta).c_str());
      if (p.step == p.steps) std::fputc('\n', stderr);
    } else if (percent / 5 != *last_reported / 5 || p.step == p.steps) {
      *last_reported = percent;
      std::fprintf(stderr, "step %lld/%lld epoch %lld loss %.4f acc %.3f elapsed %s eta %s\n",
                   static_cast<long long>(p.step), static_cast<long long>(p.steps), static_cast<long long>(p.epoch),
                   p.loss, p.accuracy, duration(p.seconds).c_str(), duration(eta).c_str());
    }
    std::fflush(stderr);
  };
}

void print_scores(const char* title, const Metrics& model, const Metrics* baseline, Objective kind) {
  const bool token = kind == Objective::kToken;
  std::printf("%s (%lld %s)\n", title, static_cast<long long>(model.count), token ? "tokens" : "examples");
  if (kind == Objective::kMaskedLm) {
    std::printf("  masked-token accuracy %.4f  loss %.4f\n", model.accuracy, model.loss);
    return;
  }
  const char* headline = token ? "entity F1" : "accuracy";
  const double value = token ? model.micro_f1 : model.accuracy;
  std::printf("  %-12s model %.4f", headline, value);
  if (baseline) std::printf("   naive Bayes %.4f", token ? baseline->micro_f1 : baseline->accuracy);
  std::printf("\n  %-12s model %.4f", "macro F1", model.macro_f1);
  if (baseline) std::printf("   naive Bayes %.4f", baseline->macro_f1);
  std::printf("\n  %-24s %9s %9s %9s %8s\n", token ? "entity type" : "class", "precision", "recall", "F1", "support");
  for (const ClassScore& c : model.classes)
    std::printf("  %-24s %9.4f %9.4f %9.4f %8lld\n", c.name.c_str(), c.precision, c.recall, c.f1,
                static_cast<long long>(c.support));
}

}  // namespace

int run_train(const std::vector<std::string>& argv) {
  if (std::find(argv.begin(), argv.end(), "--help") != argv.end()) {
    std::printf("%s\n", kTrainUsage);
    return 0;
  }
  const Options args = parse_options(
      argv, kTrainUsage, {"task", "data", "out", "base", "preset", "tokenizer", "lora", "lora-alpha", "lora-targets", "epochs",
             "batch-size", "lr", "max-length", "dropout", "patience", "valid", "test", "seed", "max-steps", "pooling",
             "save-dtype", "random-windows", "final-sentences", "map-labels", "hold-out", "hold-out-share",
             "checkpoint-dir", "checkpoint-every", "alarm-label", "max-false-alarms", "entity-threshold", "device",
             "entity-aggregation", "compute-dtype", "order-seed"});
  install_tensor_cache(training_tensor_cache_bytes());  // before anything starts the runtime
  const std::string out = args.get("out"), base = args.get("base");
  if (args.get("task").empty() || args.get("data").empty() || out.empty() || !args.positional.empty())
    throw InvalidInput(kTrainUsage);
  if (!base.empty() && args.values.count("preset")) throw InvalidInput("--base and --preset exclude each other");
  const Objective kind = parse_task(args.get("task"));
  const c10::Device device = parse_device(args.get("device", "cpu"));  // before the data: a bad name fails at once
  const c10::ScalarType compute_dtype = compute_dtype_option(args.get("compute-dtype", "float32"));
  check_compute_dtype(compute_dtype, device);
  ensure_runtime_initialized();  // the thread count printed below is the one training gets
  const uint64_t seed = static_cast<uint64_t>(args.integer("seed", 1));
  const fs::path tokenizer_path = args.get("tokenizer", base.empty() ? "" : (fs::path(base) / "tokenizer.json").string());
  if (tokenizer_path.empty()) throw InvalidInput("training from a preset needs --tokenizer");
  const auto tokenizer = load_tokenizer(tokenizer_path);

  TrainingData data = prepare_training_data(args, kind);
  const std::vector<std::string>& labels = data.labels;
  Split& parts = data.parts;
  const std::vector<Example>& out_of_source = data.out_of_source;

  nlohmann::json config = start_config(args, *tokenizer);
  if (kind != Objective::kMaskedLm) config.update(label_maps(labels));
  const EntityAggregation aggregation = entity_aggregation_option(args, kind);
  if (kind == Objective::kToken) config["semroute_entity_aggregation"] = entity_aggregation_name(aggregation);
  TrainableModernBert model(config, kind, seed);
  std::vector<std::string> fresh;
  if (!base.empty()) fresh = model.load(base);
  LoraSpec lora;
  lora.r = args.integer("lora", 0);
  lora.alpha = args.number("lora-alpha", 2.0 * static_cast<double>(lora.r));
  if (args.values.count("lora-targets")) lora.targets = split_list(args.get("lora-targets"));
  if (lora.r > 0 && base.empty()) throw InvalidInput("a LoRA adapter needs --base");
  model.add_lora(lora, seed + 1);
  model.to(device);
  model.set_compute_dtype(compute_dtype);

  const size_t max_length = static_cast<size_t>(args.integer("max-length", 256));
  auto train_set = encode(*tokenizer, parts.train, kind, labels, max_length);
  if (const int64_t windows = args.integer("random-windows", 0); windows > 0) {
    if (kind != Objective::kSequence) throw InvalidInput("--random-windows applies to sequence tasks");
    const auto extra = random_windows(train_set, windows, 8, seed + 2);
    train_set.insert(train_set.end(), extra.begin(), extra.end());
  }
  const auto valid_set = encode(*tokenizer, parts.valid, kind, labels, max_length);
  const auto test_set = encode(*tokenizer, parts.test, kind, labels, max_length);
  const auto source_set = encode(*tokenizer, out_of_source, kind, labels, max_length);
  const std::string where = device.is_cpu() ? std::to_string(at::get_num_threads()) + " threads" : device.str();
  if (!args.json)
    std::printf("training %s on %zu examples (%zu validation, %zu test, %zu out of source), %zu labels, %s%s\n",
                args.get("task").c_str(), train_set.size(), valid_set.size(), test_set.size(), source_set.size(),
                labels.size(), where.c_str(), lora.r > 0 ? ", LoRA" : "");

  TrainOptions options;
  options.epochs = args.integer("epochs", 5);
  options.batch_size = args.integer("batch-size", 16);
  options.learning_rate = args.number("lr", base.empty() ? 5e-4 : (lora.r > 0 ? 5e-4 : 5e-5));
  options.dropout = args.number("dropout", 0.1);
  options.patience = args.integer("patience", 2);
  options.max_steps = args.integer("max-steps", 0);
  options.seed = static_cast<uint64_t>(args.integer("order-seed", static_cast<int64_t>(seed)));
  options.checkpoint_dir = args.get("checkpoint-dir");
  options.checkpoint_every = args.integer("checkpoint-every", 0);
  if (options.checkpoint_every < 0) throw InvalidInput("--checkpoint-every must not be negative");
  if (options.checkpoint_every > 0 && options.checkpoint_dir.empty())
    throw InvalidInput("--checkpoint-every needs --checkpoint-dir");
  const int32_t pad_id = tokenizer->pad_id();
  const int32_t mask_id = token_id(*tokenizer, {"[MASK]", "<mask>"});
  if (kind == Objective::kMaskedLm && mask_id < 0) throw InvalidInput("masked-LM training needs a [MASK] token");
  const TrainReport report = train(model, train_set, valid_set, labels, options, pad_id, mask_id,
                                   progress_printer());

  std::vector<int64_t> model_classes, bayes_classes;
  const Metrics test = evaluate(model, test_set, labels, options.batch_size, pad_id, mask_id, &model_classes);
  std::optional<Metrics> bayes;
  if (kind != Objective::kMaskedLm && !test_set.empty())
    bayes = baseline(kind, train_set, test_set, labels, &bayes_classes);
  if (lora.r > 0) {
    // PEFT's hint where the base lives: relative, so the pair can move together.
    save_adapter(model, out, fs::relative(fs::absolute(base), fs::absolute(out)).string(), tokenizer_path);
  } else {
    save_model(model, out, tokenizer_path, parse_storage(args.get("save-dtype", "float32")));
  }

  nlohmann::json summary = {{"task", args.get("task")}, {"labels", labels},
                              {"adapter", lora.r > 0}, {"fresh_weights", fresh},
                              {"examples", {{"train", train_set.size()}, {"valid", valid_set.size()},
                                            {"test", test_set.size()}}},
                              {"training", report.to_json()}, {"test", test.to_json()}};
  summary["baseline"] = bayes ? bayes->to_json() : nlohmann::json();
  if (!source_set.empty() && kind != Objective::kMaskedLm)
    summary["out_of_source"] = evaluate(model, source_set, labels, options.batch_size, pad_id, mask_id).to_json();
  if (kind == Objective::kSequence) {  // classes that differ in length show here (jailbreaks are long)
    std::vector<int64_t> gold;
    std::vector<size_t> bytes;
    for (const Encoded& e : test_set) gold.push_back(e.label), bytes.push_back(e.text_bytes);
    const std::vector<size_t> edges = {300, 1000};
    summary["test_by_length"] = {{"model", scores_by_length(gold, model_classes, bytes, labels, edges)},
                                 {"baseline", scores_by_length(gold, bayes_classes, bytes, labels, edges)}};
  }
  // Through the inference path, as it will be served: temperature, alarm
  // threshold, scores by source in and out of distribution (evaluation.json).
  if (kind != Objective::kMaskedLm && !valid_set.empty()) summary["evaluation"] = calibrate_saved_model(out, args, data);
  summary["options"] = args.values;
  // Where it trained: the weights' last bits, and the minutes, follow from it.
  summary["machine"] = {{"cpu", cpu_features().describe()}, {"threads", at::get_num_threads()},
                        {"device", device.str()}};
  std::ofstream(fs::path(out) / "training_summary.json") << summary.dump(2) << "\n";
  if (args.json) {
    std::printf("%s\n", summary.dump(2).c_str());
    return 0;
  }
  for (const EpochReport& e : report.epochs)
    std::printf("epoch %lld: train loss %.4f, validation loss %.4f, %s %.4f (%s)\n",
                static_cast<long long>(e.epoch), e.train_loss, e.valid.loss,
                kind == Objective::kToken ? "entity F1" : "macro F1",
                kind == Objective::kToken ? e.valid.micro_f1 : e.valid.macro_f1, duration(e.seconds).c_str());
  std::printf("best epoch %lld%s; %lld steps in %s\n", static_cast<long long>(report.best_epoch),
              report.stopped_early ? " (stopped early)" : "", static_cast<long long>(report.steps),
              duration(report.seconds).c_str());
  if (!test_set.empty()) print_scores("held-out test", test, bayes ? &*bayes : nullptr, kind);
  std::printf("wrote %s%s\n", out.c_str(), lora.r > 0 ? " (PEFT LoRA adapter)" : "");
  return 0;
}

int run_trim_vocab(const std::vector<std::string>& argv) {
  const char* usage =
      "usage: semroute trim-vocab --tokenizer tokenizer.json --data A.jsonl[,B.jsonl…] --size N --out FILE "
      "[--seed N --valid F --test F --hold-out FIELD=VALUE,... --hold-out-share FIELD=F,...\n"
      " (the texts train would hold out are not counted)]";
  const Options args = parse_options(argv, usage, {"tokenizer", "data", "size", "out", "seed", "valid", "test",
                                                   "hold-out", "hold-out-share"});
  if (args.get("tokenizer").empty() || args.get("data").empty() || args.get("out").empty() ||
      !args.positional.empty())
    throw InvalidInput(usage);
  std::vector<std::string> corpus;
  const auto seed = static_cast<uint64_t>(args.integer("seed", 1));
  for (Example& e : read_data(args, Objective::kMaskedLm, seed))  // held-out texts do not shape the vocabulary
    if (part_of(e.text, seed, args.number("valid", 0.1), args.number("test", 0.1)) == Part::kTrain)
      corpus.push_back(std::move(e.text));
  TrimReport report;
  const nlohmann::json trimmed =
      trim_vocabulary(args.get("tokenizer"), corpus, static_cast<size_t>(args.integer("size", 8192)), &report);
  std::ofstream(args.get("out")) << trimmed.dump() << "\n";
  double after = 0;
  const auto tokenizer = load_tokenizer(args.get("out"));
  EncodeOptions options;
  options.add_special_tokens = false;
  for (const std::string& text : corpus) after += static_cast<double>(tokenizer->encode(text, options).size());
  after /= static_cast<double>(corpus.size());
  std::printf("kept %zu of %zu tokens and %zu merges; %.1f tokens per text before, %.1f after; wrote %s\n",
              report.kept, report.original_size, report.merges_kept, report.tokens_per_text, after,
              args.get("out").c_str());
  return 0;
}

}  // namespace semroute::cli
