#include "training_run.h"

#include <cstdlib>
#include <map>
#include <utility>

#include "core/config_reader.h"
#include "semroute/error.h"

namespace semroute::cli {

using namespace semroute::training;

namespace {

// --OPTION KEY=VALUE,… as pairs (--map-labels, --hold-out, --hold-out-share).
std::vector<std::pair<std::string, std::string>> key_values(const Options& args, const std::string& option) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const std::string& pair : split_list(args.get(option))) {
    const size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == pair.size())
      throw InvalidInput("--" + option + " takes KEY=VALUE,…");
    pairs.emplace_back(pair.substr(0, eq), pair.substr(eq + 1));
  }
  return pairs;
}

HoldOut hold_out_rules(const Options& args, uint64_t seed) {
  HoldOut rules;
  rules.seed = seed;
  rules.equal = key_values(args, "hold-out");
  for (const auto& [field, value] : key_values(args, "hold-out-share")) {
    char* end = nullptr;
    const double fraction = std::strtod(value.c_str(), &end);
    if (*end != '\0' || !(fraction > 0 && fraction < 1))
      throw InvalidInput("--hold-out-share takes FIELD=FRACTION with a fraction in (0, 1)");
    rules.share.emplace_back(field, fraction);
  }
  return rules;
}

}  // namespace

Objective parse_task(const std::string& task) {
  if (task == "sequence") return Objective::kSequence;
  if (task == "token") return Objective::kToken;
  if (task == "mlm") return Objective::kMaskedLm;
  throw InvalidInput("--task must be sequence, token or mlm");
}

std::vector<Example> read_data(const Options& args, Objective kind, uint64_t seed, std::vector<Example>* held_out) {
  std::vector<Example> examples;
  for (const std::string& file : split_list(args.get("data"))) {
    auto rows = read_jsonl(file, kind);
    examples.insert(examples.end(), std::make_move_iterator(rows.begin()), std::make_move_iterator(rows.end()));
  }
  const HoldOut rules = hold_out_rules(args, seed);
  std::vector<Example> taken = take_held_out(examples, rules);
  if (!rules.empty() && taken.empty()) throw InvalidInput("--hold-out / --hold-out-share matched no row");
  if (held_out) *held_out = std::move(taken);
  return examples;
}

TrainingData prepare_training_data(const Options& args, Objective kind) {
  const auto seed = static_cast<uint64_t>(args.integer("seed", 1));
  TrainingData data;
  std::vector<Example> examples = read_data(args, kind, seed, &data.out_of_source);
  // --map-labels OLD=NEW,… merges label names across files (spans too).
  const auto pairs = key_values(args, "map-labels");
  const std::map<std::string, std::string> renames(pairs.begin(), pairs.end());
  const auto rename = [&](std::string& label) {
    const auto it = renames.find(label);
    if (it != renames.end()) label = it->second;
  };
  for (auto* rows : {&examples, &data.out_of_source})
    for (Example& e : *rows) {
      rename(e.label);
      for (LabeledSpan& span : e.spans) rename(span.label);
    }
  data.labels = label_set(examples, data.out_of_source, kind);  // held-out sources name labels too
  if (kind != Objective::kMaskedLm && data.labels.size() < 2) throw InvalidInput("training needs at least two labels");
  data.parts = split(std::move(examples), seed, args.number("valid", 0.1), args.number("test", 0.1));
  if (const int64_t min_words = args.integer("final-sentences", 0); min_words > 0) {
    if (kind != Objective::kSequence) throw InvalidInput("--final-sentences applies to sequence tasks");
    const auto extra = final_sentences(data.parts.train, static_cast<size_t>(min_words));
    data.parts.train.insert(data.parts.train.end(), extra.begin(), extra.end());
  }
  return data;
}

Options saved_run_options(const std::filesystem::path& dir, nlohmann::json* summary) {
  const std::filesystem::path file = dir / "training_summary.json";
  nlohmann::json json = ConfigReader::from_file(file).json();
  const auto stored = json.find("options");
  if (stored == json.end() || !stored->is_object())
    throw InvalidInput(file.string() + " has no \"options\" (not saved by semroute train?)");
  Options options;
  for (const auto& [key, value] : stored->items())
    if (value.is_string()) options.values[key] = value.get<std::string>();
  if (summary != nullptr) *summary = std::move(json);
  return options;
}

}  // namespace semroute::cli
