// Checkpoints of a training run, so that a run on a small machine can stop
// (a session ends, the process is killed) and go on later where it stopped,
// with the same weights at the end as a run that never stopped: the model's
// weights, the best epoch's, AdamW's moments, every random generator the
// loop draws from (batch order, masks, dropout), the position in the epoch
// and the report so far. One file, written to a temporary name and renamed,
// so a kill while saving leaves the previous checkpoint whole.
#pragma once

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <torch/optim/optimizer.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "training/trainable_modernbert.h"
#include "training/trainer.h"

namespace semroute::training {

// Where the loop is: what it needs besides the model and the optimizer.
struct LoopState {
  int64_t epoch = 1;  // the epoch to run (or running)
  int64_t batch = 0;  // batches of that epoch already done
  int64_t step = 0, stale = 0;
  double best_score = -INFINITY;
  std::vector<at::Tensor> best;  // the best epoch's weights (empty before one)
  double loss_sum = 0;           // of the epoch so far
  int64_t batches = 0, correct = 0, scored = 0;
  std::string epoch_rng;  // the batch-order generator's state at the epoch's start
  bool finished = false;
  TrainReport report;
};

// Writes `dir`/checkpoint.pt. `fingerprint` names the run (options, data
// sizes, model shape): a checkpoint of another run is refused at load.
void save_checkpoint(const std::string& dir, const std::string& fingerprint, const TrainableModernBert& model,
                     torch::optim::Optimizer& optimizer, const LoopState& state, const at::Generator& masks);

// Restores model, optimizer, state and generators from `dir`/checkpoint.pt;
// false (nothing changed) when there is none. InvalidInput when it belongs
// to another run; kInvalidModel when it is unreadable.
bool load_checkpoint(const std::string& dir, const std::string& fingerprint, TrainableModernBert& model,
                     torch::optim::Optimizer& optimizer, LoopState& state, at::Generator& masks);

}  // namespace semroute::training
