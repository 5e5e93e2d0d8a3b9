// Configuration of the DualPathUnifiedClassifier, from YAML:
//
//   base_model: models/modernbert-base     # the LoRA path's shared base
//   tokenizer: models/modernbert-base      # optional (default: beside each model)
//   max_length: 512                        # optional, tokens
//   truncation: start | end | both         # optional, which tokens survive
//   device: cpu                            # optional; dtype: float32 | int8 | auto … too
//   policy: auto | always_lora | always_traditional
//   latency_budget_ms: 20                  # optional (auto policy)
//   max_batch: 16                          # optional: coalesce concurrent calls (and
//   max_wait_us: 2000                      #   wait at most this long for a batch)
//   tasks:
//     intent:   {kind: sequence, model: models/intent, adapter: adapters/intent}
//     pii:      {kind: token, adapter: adapters/pii, threshold: 0.7}
//     security: {kind: sequence, model: models/jailbreak, adapter: adapters/security,
//                positive_labels: [jailbreak], threshold: 0.5}
//
// `threshold`: a sequence task flags a text whose risk (the summed probability
// of its positive labels) reaches it (default 0.5); a token task keeps only
// the entities scoring at least it (default: every entity).
// Each task needs a traditional `model` (a fine-tuned checkpoint), an
// `adapter` (over base_model), or both. Relative paths are relative to the
// YAML file. Errors name the field ("tasks.security.positive_labels: …").
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "models/core_model.h"
#include "tasks/batcher.h"
#include "tasks/task_head.h"
#include "tasks/task_model.h"
#include "tokenizers/tokenizer.h"

namespace semroute {

enum class PathPolicy { kAuto, kAlwaysLora, kAlwaysTraditional };

struct UnifiedTaskConfig {
  std::string name;
  TaskKind kind = TaskKind::kSequence;
  std::filesystem::path model;                // the traditional path, or empty
  std::filesystem::path adapter;              // the LoRA path, or empty
  std::vector<std::string> labels;            // overrides the adapter's labels
  std::vector<std::string> positive_labels;   // sequence tasks: labels whose probability is the risk
  std::optional<double> threshold;            // see above: flags a risk, or drops weak entities
};

struct UnifiedConfig {
  std::filesystem::path base_model;
  PipelineOptions pipeline;  // tokenizer, max_length, truncation, device, dtype
  PathPolicy policy = PathPolicy::kAuto;
  double latency_budget_ms = 0;  // 0: none
  BatchingOptions batching;      // max_batch, max_wait_us: concurrent calls coalesced (tasks/batcher.h)
  std::vector<UnifiedTaskConfig> tasks;

  static UnifiedConfig from_yaml(const std::filesystem::path& path);
};

const char* policy_name(PathPolicy policy);

}  // namespace semroute
