// `semroute calibrate MODEL_DIR`: a model `semroute train` saved, scored
// again through the inference path on its run's validation, test and
// out-of-source rows (rebuilt from training_summary.json's options), with
// its temperature fitted and saved, and its alarm threshold picked on
// validation. `semroute train` runs the same at its end.
#include <ATen/TensorOperators.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/tensor.h>

#include <cmath>
#include <fstream>
#include <map>
#include <numeric>

#include "core/config_reader.h"
#include "semroute/error.h"
#include "tasks/sequence_classifier.h"
#include "tasks/token_classifier.h"
#include "training/metrics.h"
#include "training/trainer.h"
#include "training_run.h"

namespace semroute::cli {
namespace {

namespace fs = std::filesystem;
using namespace semroute::training;

const char* kCalibrateUsage =
    "usage: semroute calibrate MODEL_DIR [--data FILES] [--alarm-label LABEL] [--max-false-alarms F]\n"
    "         [--entity-threshold P] [--json]\n"
    "Scores a model `semroute train` saved (its training_summary.json names the data and split) on its\n"
    "validation, test and out-of-source rows, by source. Sequence tasks: fits the temperature on\n"
    "validation and saves it (config.json, or labels.json for an adapter); with --alarm-label, picks the\n"
    "threshold on that label's probability that keeps validation false alarms within --max-false-alarms\n"
    "(0.05). Token tasks: entities scoring >= --entity-threshold, by default the one of 0.50, 0.55, ... 0.95\n"
    "with the best validation span F1. Writes MODEL_DIR/evaluation.json.\n"
    "--data replaces the run's data files (the same files, elsewhere).";

// The parts of a run to score, in report order.
struct Part {
  const char* name;
  const std::vector<Example>* rows;
};

std::vector<Part> parts_of(const TrainingData& data) {
  return {{"validation", &data.parts.valid}, {"test", &data.parts.test}, {"out_of_source", &data.out_of_source}};
}

std::string source_of(const Example& e) {
  const auto it = e.fields.find("source");
  return it == e.fields.end() ? "(no source)" : it->second;
}

// Row indices of `rows` by source, then all of them under "all".
std::map<std::string, std::vector<size_t>> groups(const std::vector<Example>& rows) {
  std::map<std::string, std::vector<size_t>> out;
  for (size_t i = 0; i < rows.size(); ++i) {
    out[source_of(rows[i])].push_back(i);
    out["all"].push_back(i);
  }
  return out;
}

// The model as the run saved it: a full model, or an adapter on the base
// its adapter_config.json names (relative to the adapter); its labels must
// be the ones its run's data gives.
template <typename Classifier>
std::shared_ptr<const Classifier> load_model(const fs::path& dir, bool adapter, const std::vector<std::string>& labels) {
  TaskOptions options;
  fs::path model_dir = dir;
  if (adapter) {
    const ConfigReader config = ConfigReader::from_file(dir / "adapter_config.json");
    model_dir = dir / config.get_string("base_model_name_or_path", "");
    options.adapter = dir;
  }
  auto model = Classifier::load(model_dir, options);
  if (model->labels() != labels)
    throw InvalidInput("the model's labels are not the ones its run's data gives (other data files than it was trained on?)");
  return model;
}

// The temperature travels with the model: in config.json, or for an adapter
// in its task file (task_config.json where it has one: the loader reads that first).
void save_temperature(const fs::path& dir, bool adapter, double t) {
  const fs::path path =
      !adapter ? dir / "config.json" : fs::exists(dir / "task_config.json") ? dir / "task_config.json" : dir / "labels.json";
  nlohmann::json config = ConfigReader::from_file(path).json();
  config["semroute_temperature"] = t;
  std::ofstream(path) << config.dump(2) << "\n";
}

// Which gold classes are the alarm's.
std::vector<bool> is_alarm(const std::vector<int64_t>& gold, int64_t alarm_id) {
  std::vector<bool> out;
  for (const int64_t g : gold) out.push_back(g == alarm_id);
  return out;
}

std::vector<std::string_view> texts_of(const std::vector<Example>& rows) {
  std::vector<std::string_view> texts;
  for (const Example& e : rows) texts.push_back(e.text);
  return texts;
}

// Logits the softmax gave these probabilities at temperature `t` (up to a
// constant per row, which the softmax ignores).
at::Tensor logits_of(const std::vector<Classification>& results, double t) {
  const auto labels = static_cast<int64_t>(results.front().probabilities.size());
  at::Tensor probs = at::empty({static_cast<int64_t>(results.size()), labels});
  for (size_t i = 0; i < results.size(); ++i)
    std::copy(results[i].probabilities.begin(), results[i].probabilities.end(),
              probs.data_ptr<float>() + static_cast<int64_t>(i) * labels);
  return probs.clamp_min(1e-30).log() * t;
}

// A label whose probability raises an alarm at a threshold (id -1: none).
struct Alarm {
  int64_t id = -1;
  double threshold = 0;
};

std::vector<double> alarm_scores(const at::Tensor& logits, double t, const Alarm& alarm) {
  const at::Tensor p = at::softmax(logits / t, -1).select(1, alarm.id).contiguous();
  return std::vector<double>(p.data_ptr<float>(), p.data_ptr<float>() + p.numel());
}

// Some rows of a part (one source's): accuracy, calibration error and NLL
// before and after the temperature, and the alarm's recall and false alarms.
nlohmann::json sequence_scores(const at::Tensor& part_logits, const std::vector<int64_t>& part_gold,
                               const std::vector<size_t>& rows, const std::vector<std::string>& labels, double t,
                               const Alarm& alarm) {
  const at::Tensor logits =
      part_logits.index_select(0, at::tensor(std::vector<int64_t>(rows.begin(), rows.end()), at::kLong));
  const at::Tensor predicted = logits.argmax(1).contiguous();
  std::vector<int64_t> gold;
  for (const size_t i : rows) gold.push_back(part_gold[i]);
  const std::vector<int64_t> classes(predicted.data_ptr<int64_t>(), predicted.data_ptr<int64_t>() + predicted.numel());
  const Calibration raw = calibration(logits, gold), scaled = calibration(logits, gold, t);
  nlohmann::json scores = {{"examples", rows.size()}, {"accuracy", class_metrics(gold, classes, labels).accuracy},
                           {"ece", raw.ece}, {"ece_scaled", scaled.ece}, {"nll", raw.nll}, {"nll_scaled", scaled.nll}};
  if (alarm.id >= 0)
    scores["alarm"] = alarm_rates(alarm_scores(logits, t, alarm), is_alarm(gold, alarm.id), alarm.threshold).to_json();
  return scores;
}

nlohmann::json calibrate_sequence(const fs::path& dir, const Options& args, const TrainingData& data, bool adapter) {
  const auto classifier = load_model<SequenceClassifier>(dir, adapter, data.labels);
  const std::string alarm_label = args.get("alarm-label");
  const double budget = args.number("max-false-alarms", 0.05);
  Alarm alarm;
  alarm.id = std::find(data.labels.begin(), data.labels.end(), alarm_label) - data.labels.begin();
  if (alarm.id == static_cast<int64_t>(data.labels.size())) {
    if (!alarm_label.empty()) throw InvalidInput("--alarm-label '" + alarm_label + "' is not one of the model's labels");
    alarm.id = -1;
  }

  // Every part's logits (as the served probabilities give them) and gold classes.
  std::map<std::string, at::Tensor> logits;
  std::map<std::string, std::vector<int64_t>> gold;
  for (const Part& part : parts_of(data)) {
    if (part.rows->empty()) continue;
    logits[part.name] = logits_of(classifier->classify(texts_of(*part.rows)), classifier->task().head.temperature());
    for (const Example& e : *part.rows)
      gold[part.name].push_back(std::find(data.labels.begin(), data.labels.end(), e.label) - data.labels.begin());
  }
  if (!logits.count("validation")) throw InvalidInput("the run has no validation rows to calibrate on");
  const double t = std::round(fit_temperature(logits["validation"], gold["validation"]) * 1e4) / 1e4;  // as saved
  nlohmann::json report = {{"task", "sequence"}, {"temperature", t}, {"fitted_on", "validation"}};
  if (alarm.id >= 0) {
    alarm.threshold =
        pick_threshold(alarm_scores(logits["validation"], t, alarm), is_alarm(gold["validation"], alarm.id), budget)
            .threshold;
    report["alarm"] = {{"label", alarm_label}, {"threshold", alarm.threshold}, {"max_false_alarm_rate", budget},
                       {"picked_on", "validation"}};
  }
  for (const Part& part : parts_of(data))
    if (logits.count(part.name))
      for (const auto& [source, rows] : groups(*part.rows))
        report["parts"][part.name][source] =
            sequence_scores(logits[part.name], gold[part.name], rows, data.labels, t, alarm);
  save_temperature(dir, adapter, t);
  return report;
}

// The span scores of `rows` (indices into the part's examples) with the
// entities scoring at least `threshold`.
EntityReport entity_scores(const std::vector<Example>& examples, const std::vector<TokenClassification>& results,
                           const std::vector<size_t>& rows, double threshold) {
  std::vector<std::vector<LabeledSpan>> gold, found;
  for (const size_t i : rows) {
    gold.push_back(examples[i].spans);
    found.emplace_back();
    for (const EntitySpan& e : results[i].entities)
      if (e.score >= threshold) found.back().push_back({e.begin, e.end, e.type});
  }
  return entity_report(gold, found);
}

// The entity threshold with the best span F1 on validation, of 0.50, 0.55,
// … 0.95 (the lowest on a tie).
double pick_entity_threshold(const std::vector<Example>& valid, const std::vector<TokenClassification>& results) {
  std::vector<size_t> all(valid.size());
  std::iota(all.begin(), all.end(), size_t{0});
  double best = 0.5, best_f1 = -1;
  for (int step = 10; step <= 19; ++step) {
    const double t = step / 20.0;
    const double f1 = entity_scores(valid, results, all, t).f1;
    if (f1 > best_f1) best = t, best_f1 = f1;
  }
  return best;
}

nlohmann::json calibrate_token(const fs::path& dir, const Options& args, const TrainingData& data, bool adapter) {
  const auto classifier = load_model<TokenClassifier>(dir, adapter, data.labels);
  std::map<std::string, std::vector<TokenClassification>> results;
  for (const Part& part : parts_of(data))
    if (!part.rows->empty()) results[part.name] = classifier->classify(texts_of(*part.rows));
  const bool given = args.values.count("entity-threshold") > 0, pick = !given && !data.parts.valid.empty();
  const double threshold = pick ? pick_entity_threshold(data.parts.valid, results["validation"])
                                : args.number("entity-threshold", 0.5);
  nlohmann::json report = {{"task", "token"}, {"entity_threshold", threshold},
                           {"entity_threshold_rule", given ? "given" : pick ? "best validation span F1" : "default"},
                           {"entity_aggregation", entity_aggregation_name(classifier->task().head.entity_aggregation())}};
  for (const Part& part : parts_of(data)) {
    if (part.rows->empty()) continue;
    for (const auto& [source, rows] : groups(*part.rows))
      report["parts"][part.name][source] = entity_scores(*part.rows, results[part.name], rows, threshold).to_json();
  }
  return report;
}

}  // namespace

void print_calibration_report(const nlohmann::json& report) {
  if (report.contains("temperature")) std::printf("temperature %.4f (fitted on validation)\n", report["temperature"].get<double>());
  if (report.contains("entity_threshold"))
    std::printf("entity threshold %.2f (%s)\n", report["entity_threshold"].get<double>(),
                report.value("entity_threshold_rule", "given").c_str());
  if (report.contains("alarm"))
    std::printf("alarm '%s' at %.3f (validation false alarms <= %.3f)\n", report["alarm"]["label"].get<std::string>().c_str(),
                report["alarm"]["threshold"].get<double>(), report["alarm"]["max_false_alarm_rate"].get<double>());
  const bool token = report["task"] == "token";
  std::printf("%-14s %-28s %8s %9s %9s %9s\n", "part", "source", "examples", token ? "span F1" : "accuracy",
              token ? "all types" : "recall", token ? "extra/txt" : "false al.");
  for (const auto& [part, sources] : report["parts"].items())
    for (const auto& [source, s] : sources.items()) {
      const auto number = [&](const nlohmann::json& j, const char* key) { return j.contains(key) ? j[key].get<double>() : NAN; };
      const nlohmann::json alarm = s.value("alarm", nlohmann::json::object());
      std::printf("%-14s %-28s %8lld", part.c_str(), source.c_str(),
                  static_cast<long long>(s.value(token ? "texts" : "examples", 0)));
      for (const double v : {number(s, token ? "f1" : "accuracy"), token ? number(s, "all_types_found") : number(alarm, "recall"),
                             token ? number(s, "extra_types_per_text") : number(alarm, "false_alarm_rate")})
        std::isnan(v) ? std::printf(" %9s", "-") : std::printf(" %9.4f", v);
      std::printf("\n");
    }
}

nlohmann::json calibrate_saved_model(const fs::path& dir, const Options& train_args, const TrainingData& data) {
  const Objective kind = parse_task(train_args.get("task"));
  const bool adapter = train_args.integer("lora", 0) > 0;
  nlohmann::json report;
  if (kind == Objective::kSequence) report = calibrate_sequence(dir, train_args, data, adapter);
  else if (kind == Objective::kToken) report = calibrate_token(dir, train_args, data, adapter);
  else return nullptr;  // a masked LM has nothing to calibrate
  std::ofstream(dir / "evaluation.json") << report.dump(2) << "\n";
  return report;
}

int run_calibrate(const std::vector<std::string>& argv) {
  if (std::find(argv.begin(), argv.end(), "--help") != argv.end()) {
    std::printf("%s\n", kCalibrateUsage);
    return 0;
  }
  const Options args =
      parse_options(argv, kCalibrateUsage, {"data", "alarm-label", "max-false-alarms", "entity-threshold"});
  if (args.positional.size() != 1) throw InvalidInput(kCalibrateUsage);
  const fs::path dir = args.positional[0];
  Options train_args = saved_run_options(dir);
  for (const auto& [key, value] : args.values) train_args.values[key] = value;  // this call's choices win
  const Objective kind = parse_task(train_args.get("task"));
  const TrainingData data = prepare_training_data(train_args, kind);
  const nlohmann::json report = calibrate_saved_model(dir, train_args, data);
  if (report.is_null()) throw InvalidInput("a masked-LM model has no classes to calibrate");
  if (args.json) {
    std::printf("%s\n", report.dump(2).c_str());
    return 0;
  }
  print_calibration_report(report);
  std::printf("wrote %s\n", (dir / "evaluation.json").c_str());
  return 0;
}

}  // namespace semroute::cli
