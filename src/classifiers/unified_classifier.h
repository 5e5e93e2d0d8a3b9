// DualPathUnifiedClassifier: the router's questions (intent, PII, security,
// and any further named classification task) answered in one call, each by
// one of two paths:
//   traditional  a separately fine-tuned full model for that task;
//   lora         the multi-task engine (task adapters over one shared base).
// Policy (per call, per task):
//   always_lora / always_traditional   that path when loaded, else the other;
//   auto   the only loaded path; else the fine-tuned model when the caller
//          asks for accuracy or a single task is asked; else the engine (one
//          shared pass for several tasks); then, with a latency budget, the
//          other path when the measured latency of the chosen one exceeds the
//          budget and the other's does not.
// A path that fails falls back, per task, to the other one. Every answer says
// which path produced it, why, and how long that took. Immutable after load
// except for the latency measurements (mutex); classify() is thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "classifiers/unified_config.h"
#include "core/error_report.h"
#include "semroute/error.h"
#include "tasks/multitask_engine.h"
#include "tasks/sequence_classifier.h"
#include "tasks/token_classifier.h"

namespace semroute {

enum class PathKind { kTraditional, kLora };
const char* path_name(PathKind path);

struct UnifiedRequest {
  std::vector<std::string> tasks;  // empty: every configured task
  bool prefer_accuracy = false;    // auto policy: the fine-tuned models where loaded
};

struct TaskAnswer {
  std::string task;
  TaskKind kind = TaskKind::kSequence;
  PathKind path = PathKind::kTraditional;
  std::string reason;       // why this path (and any fallback)
  double latency_ms = 0;    // duration of the call that produced the answer
  std::string error;        // set when every available path failed
  ErrorCode error_code = ErrorCode::kInternal;  // the last failure's stable code (when error is set)
  // Sequence tasks.
  Classification classification;
  float risk = 0;        // total probability of the positive labels (0 without any)
  bool flagged = false;  // risk >= threshold
  // Token tasks: the entities scoring at least the task's threshold.
  std::vector<EntitySpan> entities;
};

// One per text: every requested task's answer, in request order.
struct UnifiedResult {
  std::vector<TaskAnswer> answers;
};

// Why a path could not answer a task, with the stable code of the error.
using PathFailure = ErrorReport;

struct UnifiedOptions {
  // Called before a path runs a task; throwing makes that path fail for it
  // (tests inject failures with it; also a place for metrics).
  std::function<void(const std::string& task, PathKind path)> before_path;
  // The clock latencies are measured with, in milliseconds; empty: the steady
  // clock. Tests make the latency budget deterministic with it.
  std::function<double()> clock_ms;
};

class UnifiedClassifier {
 public:
  static std::shared_ptr<const UnifiedClassifier> load(const UnifiedConfig& config, UnifiedOptions options = {});

  std::vector<UnifiedResult> classify(const std::vector<std::string_view>& texts,
                                      const UnifiedRequest& request = {}) const;

  const UnifiedConfig& config() const { return config_; }
  // Labels of a task (from whichever path is loaded).
  const std::vector<std::string>& labels(const std::string& task) const;

 private:
  struct Task {
    UnifiedTaskConfig config;
    std::shared_ptr<const SequenceClassifier> sequence;  // traditional, sequence tasks
    std::shared_ptr<const TokenClassifier> token;        // traditional, token tasks
    bool lora = false;                                   // the engine serves it
    std::vector<std::string> labels;
    std::vector<size_t> positive;  // indices of positive_labels
    bool has(PathKind path) const { return path == PathKind::kLora ? lora : (sequence || token); }
  };
  struct Plan {
    size_t task;
    PathKind path;
    std::string reason;
  };
  struct Latency {
    double engine_ms = -1;                  // last engine calls (moving average), -1 = unmeasured
    std::vector<double> traditional_ms;     // per task
  };

  // One classify() call: its texts, its plans (one per requested task) and
  // the answers being filled, plans[k] answering answers[k] of every text.
  struct Call {
    const std::vector<std::string_view>& texts;
    std::vector<Plan> plans;
    std::vector<UnifiedResult> results;
    TaskAnswer& answer(size_t k, size_t text) { return results[text].answers[k]; }
  };

  UnifiedClassifier() = default;
  std::vector<size_t> requested_tasks(const UnifiedRequest& request) const;
  std::vector<Plan> plan(const std::vector<size_t>& tasks, const UnifiedRequest& request) const;
  void apply_budget(std::vector<Plan>& plans) const;
  // Plan k on its fine-tuned model; the failure, if any (then nothing is filled).
  double now_ms() const;
  std::optional<PathFailure> run_traditional(Call& call, size_t k, const std::string& reason) const;
  // Plans `ks` together through the engine; the plans that failed.
  std::vector<std::pair<size_t, PathFailure>> run_engine(Call& call, const std::vector<size_t>& ks,
                                                     const std::vector<std::string>& reasons) const;
  // Marks plan k's answers as produced by `path` (or failed with `failure`).
  void settle(Call& call, size_t k, PathKind path, const std::string& reason, double ms,
              const std::optional<PathFailure>& failure = std::nullopt) const;
  void fill(TaskAnswer& answer, const Task& task, const Classification* c, const TokenClassification* t) const;

  UnifiedConfig config_;
  UnifiedOptions options_;
  std::vector<Task> tasks_;
  std::shared_ptr<const MultiTaskEngine> engine_;
  mutable std::mutex latency_mutex_;
  mutable Latency latency_;
};

}  // namespace semroute
