// What `semroute train` and `semroute calibrate` share: a training run's
// data, rebuilt from its options (so a saved model can be scored again on
// exactly its validation, test and held-out rows), and the calibration and
// scoring of the model it saved.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli.h"
#include "training/training_data.h"

namespace semroute::cli {

training::Objective parse_task(const std::string& task);

// Every row of the --data files less the rows --hold-out / --hold-out-share
// take (into `held_out`, when given) (cli/training_run.cpp).
std::vector<training::Example> read_data(const Options& args, training::Objective kind, uint64_t seed,
                                         std::vector<training::Example>* held_out = nullptr);

struct TrainingData {
  std::vector<std::string> labels;
  training::Split parts;                          // train (with any --final-sentences), valid, test
  std::vector<training::Example> out_of_source;  // the rows --hold-out / --hold-out-share took
};
// The --data rows less the held-out sources, labels renamed (--map-labels),
// split by --seed, --valid, --test, with any --final-sentences.
TrainingData prepare_training_data(const Options& args, training::Objective kind);

// The options of the run that saved `dir`, from its training_summary.json
// (which `summary`, when given, receives whole); refused if it has none.
Options saved_run_options(const std::filesystem::path& dir, nlohmann::json* summary = nullptr);

// Scores the model `semroute train` saved in `dir` through the inference
// path, on its run's validation, test and out-of-source rows, by source
// (cli/calibrate.cpp). Sequence tasks: the temperature fitted on validation
// (saved as semroute_temperature in config.json, or labels.json for an
// adapter), calibration error before and after, and with an alarm label
// (--alarm-label) the threshold that keeps validation false alarms within
// --max-false-alarms, with recall and false alarms at it. Token tasks:
// entities at the score --entity-threshold (0.5), span F1 and the entity
// types found per text. Writes `dir`/evaluation.json and returns it.
nlohmann::json calibrate_saved_model(const std::filesystem::path& dir, const Options& train_args,
                                     const TrainingData& data);
// One line per part and source: the headline numbers of such a report.
void print_calibration_report(const nlohmann::json& report);

}  // namespace semroute::cli
