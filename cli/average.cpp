// `semroute average --out DIR MODEL_DIR MODEL_DIR...`: the element-wise mean
// of models `semroute train` fine-tuned from the same weights on the same
// split, differing only in the order they read the examples (--order-seed)
// or in how long and how fast they learned (a uniform "model soup",
// Wortsman et al. 2022, arXiv:2203.05482). Fine-tuned from one start, such
// models lie in one basin of the loss, and their mean is a model that
// scores above the members' average (docs/training.md has the measurements),
// at the size and speed of one.
#include <unistd.h>

#include <fstream>
#include <set>

#include "adapters/merge_adapter.h"
#include "core/checkpoint.h"
#include "core/config_reader.h"
#include "semroute/error.h"
#include "tokenizers/tokenizer.h"
#include "training/trainer.h"
#include "training_run.h"

namespace semroute::cli {
namespace {

namespace fs = std::filesystem;

const char* kAverageUsage =
    "usage: semroute average --out DIR MODEL_DIR MODEL_DIR [MODEL_DIR...] [--json]\n"
    "Averages the weights of models (or LoRA adapters) `semroute train` saved from the same start\n"
    "(--base or --preset, --seed, --lora) on the same data and split: runs that differ in --order-seed,\n"
    "--lr, --epochs, --dropout and the like. The mean is one model of the same size and speed, written to\n"
    "DIR with the first model's config and tokenizer, then calibrated and scored as `semroute calibrate`\n"
    "does (temperature, thresholds, evaluation.json).";

// Options that may differ between the members: how each run learned, not
// where it started or which rows it saw.
const std::set<std::string> kFreeOptions = {"out", "order-seed", "checkpoint-dir", "checkpoint-every", "lr",
                                            "epochs", "dropout", "patience", "batch-size", "max-steps", "device",
                                            "compute-dtype", "save-dtype", "alarm-label", "max-false-alarms",
                                            "entity-threshold"};

// A member's options less those it may choose freely, its paths made
// absolute (the same files, named from elsewhere, are the same start).
nlohmann::json fixed_options(const nlohmann::json& summary) {
  nlohmann::json options = summary["options"];
  for (const std::string& key : kFreeOptions) options.erase(key);
  for (const char* key : {"base", "data", "tokenizer"}) {
    if (!options.contains(key) || !options[key].is_string()) continue;
    std::string paths;
    for (const std::string& path : split_list(options[key].get<std::string>()))
      paths += (paths.empty() ? "" : ",") + fs::weakly_canonical(path).string();
    options[key] = paths;
  }
  return options;
}

std::string weights_stem(const fs::path& dir) {
  if (fs::exists(dir / "adapter_model.safetensors")) return "adapter_model";
  if (fs::exists(dir / "model.safetensors")) return "model";
  throw InvalidInput(dir.string() + " holds neither model.safetensors nor adapter_model.safetensors");
}

// Refuses members that did not start from the same weights on the same
// rows: their mean would be no model at all.
void check_members(const std::vector<fs::path>& dirs, const std::vector<nlohmann::json>& summaries) {
  const nlohmann::json first = fixed_options(summaries[0]);
  const std::string stem = weights_stem(dirs[0]);
  for (size_t i = 1; i < dirs.size(); ++i) {
    nlohmann::json other = fixed_options(summaries[i]);
    for (const auto& [key, value] : first.items())  // a key only one of the two has counts too
      if (!other.contains(key)) other[key] = nullptr;
    for (const auto& [key, value] : other.items())
      if (first.value(key, nlohmann::json()) != value)
        throw InvalidInput(dirs[i].string() + " differs from " + dirs[0].string() + " in --" + key +
                           ": only runs from the same start on the same split can be averaged");
    if (weights_stem(dirs[i]) != stem) throw InvalidInput("cannot average a full model with a LoRA adapter");
  }
}

// The mean of every tensor, in float32, stored in the first member's dtype.
std::vector<std::pair<std::string, at::Tensor>> mean_weights(const std::vector<fs::path>& dirs, const std::string& stem) {
  std::vector<Checkpoint> members;
  for (const fs::path& dir : dirs) members.push_back(Checkpoint::open_weights_in(dir, stem));
  const std::vector<std::string> names = members[0].names();
  for (size_t i = 1; i < members.size(); ++i)
    if (members[i].names() != names) throw InvalidInput(dirs[i].string() + " holds other tensors than " + dirs[0].string());
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (const std::string& name : names) {
    const at::Tensor first = members[0].tensor(name);
    at::Tensor sum = first.to(at::kFloat);
    for (size_t i = 1; i < members.size(); ++i) {
      const at::Tensor t = members[i].tensor(name);
      if (t.sizes() != first.sizes())
        throw InvalidInput(name + " has another shape in " + dirs[i].string() + " than in " + dirs[0].string());
      sum.add_(t.to(at::kFloat));
    }
    out.emplace_back(name, sum.div_(static_cast<double>(members.size())).to(first.scalar_type()));
  }
  return out;
}

// The first member's files beside its weights (config, tokenizer, labels,
// adapter config), not its scores or card.
void copy_companions(const fs::path& from, const fs::path& to, const std::string& stem) {
  for (const auto& entry : fs::directory_iterator(from)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || name == stem + ".safetensors" || name == "evaluation.json" ||
        name == "training_summary.json" || name == "MODEL_CARD.md")
      continue;
    fs::copy_file(entry.path(), to / name, fs::copy_options::overwrite_existing);
  }
  // An adapter names its base relative to itself (PEFT's hint): from `to`.
  const fs::path adapter_config = to / "adapter_config.json";
  if (!fs::exists(adapter_config)) return;
  nlohmann::json config = ConfigReader::from_file(adapter_config).json();
  const fs::path base = config.value("base_model_name_or_path", "");
  if (base.empty() || base.is_absolute()) return;
  config["base_model_name_or_path"] = fs::relative(fs::absolute(from / base), fs::absolute(to)).string();
  std::ofstream(adapter_config) << config.dump(2) << "\n";
}

// The base an adapter directory names (relative to itself).
fs::path base_of_adapter(const fs::path& dir) {
  return dir / ConfigReader::from_file(dir / "adapter_config.json").get_string("base_model_name_or_path", "");
}

// The trainer's scores of the mean on the run's test and out-of-source
// rows, as `semroute train` reports its own model's (an adapter is scored
// merged into its base).
void rescore(nlohmann::json& summary, const fs::path& dir, const Options& train_args, const TrainingData& data,
             training::Objective kind) {
  const bool adapter = fs::exists(dir / "adapter_model.safetensors");
  struct Scratch {  // the merged adapter, gone however this ends
    fs::path path = fs::temp_directory_path() / ("semroute-average-" + std::to_string(::getpid()));
    ~Scratch() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  } merged;
  if (adapter) merge_adapter(base_of_adapter(dir), dir, merged.path);
  const fs::path model_dir = adapter ? merged.path : dir;
  training::TrainableModernBert model(ConfigReader::from_file(model_dir / "config.json").json(), kind, 1);
  model.load(model_dir);
  const auto tokenizer = load_tokenizer(dir / "tokenizer.json");
  const auto max_length = static_cast<size_t>(train_args.integer("max-length", 256));
  const int64_t batch = train_args.integer("batch-size", 16);
  const auto score = [&](const std::vector<training::Example>& rows) {
    return training::evaluate(model, training::encode(*tokenizer, rows, kind, data.labels, max_length), data.labels,
                              batch, tokenizer->pad_id())
        .to_json();
  };
  summary["test"] = score(data.parts.test);
  if (!data.out_of_source.empty()) summary["out_of_source"] = score(data.out_of_source);
  summary.erase("test_by_length");  // the members' own
}

}  // namespace

int run_average(const std::vector<std::string>& argv) {
  if (std::find(argv.begin(), argv.end(), "--help") != argv.end()) {
    std::printf("%s\n", kAverageUsage);
    return 0;
  }
  const Options args = parse_options(argv, kAverageUsage, {"out"});
  const fs::path out = args.get("out");
  if (out.empty() || args.positional.size() < 2) throw InvalidInput(kAverageUsage);
  const std::vector<fs::path> dirs(args.positional.begin(), args.positional.end());
  std::vector<nlohmann::json> summaries(dirs.size());
  std::vector<Options> runs;  // the members' options, as `semroute calibrate` rebuilds their rows
  for (size_t i = 0; i < dirs.size(); ++i) {
    runs.push_back(saved_run_options(dirs[i], &summaries[i]));  // a clear error for a missing or foreign directory
    if (fs::exists(out) && fs::equivalent(dirs[i], out)) throw InvalidInput("--out must not be one of the models");
  }
  check_members(dirs, summaries);
  const Options& train_args = runs[0];
  const training::Objective kind = parse_task(train_args.get("task"));
  if (kind == training::Objective::kMaskedLm)  // trained from scratch, two runs end in different basins
    throw InvalidInput("masked-LM encoders are not averaged: only models fine-tuned from one start are");

  const std::string stem = weights_stem(dirs[0]);
  fs::create_directories(out);
  save_safetensors(out / (stem + ".safetensors"), mean_weights(dirs, stem));
  copy_companions(dirs[0], out, stem);

  // The first member's summary, its training replaced by every member's.
  nlohmann::json summary = summaries[0];
  summary["options"]["out"] = out.string();
  summary["training"] = {{"averaged_from", nlohmann::json::array()}};
  for (size_t i = 0; i < dirs.size(); ++i)
    summary["training"]["averaged_from"].push_back({{"model", dirs[i].string()}, {"options", summaries[i]["options"]},
                                                    {"training", summaries[i]["training"]},
                                                    {"test", summaries[i]["test"]}});
  const TrainingData data = prepare_training_data(train_args, kind);
  rescore(summary, out, train_args, data, kind);
  summary["evaluation"] = calibrate_saved_model(out, train_args, data);
  std::ofstream(out / "training_summary.json") << summary.dump(2) << "\n";
  if (args.json) {
    std::printf("%s\n", summary["evaluation"].dump(2).c_str());
    return 0;
  }
  print_calibration_report(summary["evaluation"]);
  std::printf("averaged %zu models into %s\n", dirs.size(), out.c_str());
  return 0;
}

}  // namespace semroute::cli
