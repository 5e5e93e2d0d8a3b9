// The training loop: AdamW with linear warm-up and decay, length-bucketed
// shuffled batches, gradient clipping, a held-out evaluation after every
// epoch with early stopping on it (the best epoch's weights are kept), and
// the naive-Bayes baseline scored on the same held-out examples. Seeded:
// the same data, options and thread count give the same weights.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <nlohmann/json.hpp>
#include <vector>

#include "training/metrics.h"
#include "training/trainable_modernbert.h"
#include "training/training_data.h"

namespace semroute::training {

struct TrainOptions {
  int64_t epochs = 5;
  int64_t batch_size = 16;
  double learning_rate = 1e-4;
  double weight_decay = 0.01;
  double warmup_fraction = 0.06;
  double dropout = 0.1;
  double max_grad_norm = 1.0;
  int64_t patience = 2;           // epochs without a better held-out score before stopping
  double mask_probability = 0.3;  // masked LM (ModernBERT's rate)
  int64_t max_steps = 0;          // > 0: stop after this many steps (smoke tests)
  uint64_t seed = 1;
  // Non-empty: checkpoints go there (training/checkpoint.h), at the end of
  // every epoch and every `checkpoint_every` steps (0: epochs only), and a
  // run finding one of its own there goes on from it.
  std::string checkpoint_dir;
  int64_t checkpoint_every = 0;
};

struct Progress {
  int64_t epoch = 0, epochs = 0;
  int64_t step = 0, steps = 0;  // within the whole run
  double loss = 0;              // running mean over the epoch
  double accuracy = 0;          // running, on the training batches
  double seconds = 0;           // since training started
};

struct EpochReport {
  int64_t epoch = 0;
  double train_loss = 0;
  Metrics valid;
  double seconds = 0;
};

struct TrainReport {
  std::vector<EpochReport> epochs;
  int64_t best_epoch = 0;
  int64_t steps = 0;
  bool stopped_early = false;
  double seconds = 0;
  int64_t resumed_at_step = -1;  // the step a checkpoint resumed the run from; -1: none
  nlohmann::json to_json() const;
  static TrainReport from_json(const nlohmann::json& j);  // to_json's inverse
};

// Held-out evaluation of the model (loss and metrics) for its task;
// `classes`, when given, receives each sequence's predicted class in order.
Metrics evaluate(const TrainableModernBert& model, const std::vector<Encoded>& examples,
                 const std::vector<std::string>& labels, int64_t batch_size, int32_t pad_id, int32_t mask_id = 0,
                 std::vector<int64_t>* classes = nullptr);

// Sequence tasks: the logits of every example, in order ([examples,
// classes], fp32, no dropout).
at::Tensor sequence_logits(const TrainableModernBert& model, const std::vector<Encoded>& examples, int64_t batch_size,
                           int32_t pad_id);

// How far a classifier's confidence is from its accuracy: the expected
// calibration error of softmax(logits / temperature) (15 equal-width bins of
// the top probability, weighted by their share of examples) and its mean
// negative log-likelihood.
struct Calibration {
  double ece = 0, nll = 0;
};
Calibration calibration(const at::Tensor& logits, const std::vector<int64_t>& gold, double temperature = 1);
// Temperature scaling: the temperature in [e^-3, e^3] that minimizes the
// negative log-likelihood of softmax(logits / t) on `gold` (golden-section
// search over log t; the likelihood is unimodal in it).
double fit_temperature(const at::Tensor& logits, const std::vector<int64_t>& gold);

// The baseline fitted on `train`, scored on `test` (`classes` as above).
Metrics baseline(Objective kind, const std::vector<Encoded>& train, const std::vector<Encoded>& test,
                 const std::vector<std::string>& labels, std::vector<int64_t>* classes = nullptr);

// Trains `model` in place; `valid` may be empty (no early stopping). The
// masked-LM task needs `mask_id`.
TrainReport train(TrainableModernBert& model, const std::vector<Encoded>& train_set, const std::vector<Encoded>& valid,
                  const std::vector<std::string>& labels, const TrainOptions& options, int32_t pad_id,
                  int32_t mask_id, const std::function<void(const Progress&)>& progress);

}  // namespace semroute::training
