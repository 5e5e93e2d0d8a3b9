// The multi-task engine: one base encoder and T task adapters (LoRA, each with
// its own sequence- or token-classification head), executed together:
//   - the layers below the first layer any requested adapter touches run once
//     for all tasks;
//   - from there every task is a group of rows in one stacked batch, so each
//     base weight is streamed once per layer for all tasks (one GEMM), and
//     each group adds its own low-rank delta (two batched matmuls); a task
//     joins the stack at its first adapted layer, the unadapted rows leave it
//     once no task needs them;
//   - heads run per task.
// Cost, with adapters on the top k of L layers: (L − k)/L + T·k/L of one
// full pass. Immutable after load; classify() is safe from many threads.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "adapters/lora_adapter.h"
#include "adapters/lora_deltas.h"
#include "models/core_model.h"
#include "tasks/sequence_classifier.h"
#include "tasks/task_head.h"
#include "tasks/task_model.h"
#include "tasks/token_classifier.h"

namespace semroute {

struct EngineTaskSpec {
  std::string name;
  std::filesystem::path adapter;
  // Overrides of what the adapter folder says (adapter_config.json task_type,
  // task_config.json / labels.json).
  std::optional<TaskKind> kind;
  std::vector<std::string> labels;
  std::optional<Pooling> pooling;
};

struct EngineOptions : PipelineOptions {
  EngineOptions() = default;
  explicit EngineOptions(PipelineOptions pipeline) : PipelineOptions(std::move(pipeline)) {}
  bool require_tokenizer = true;  // false: only logits() (token ids in) works
};

// What one call executed: a layer pass is one layer over one group of rows.
struct EngineStats {
  int64_t layer_passes = 0;
};

struct TaskResult {
  std::string task;
  TaskKind kind = TaskKind::kSequence;
  std::vector<Classification> sequences;    // sequence tasks: one per text
  std::vector<TokenClassification> tokens;  // token tasks: one per text
};

// Tasks one engine (and one unified classifier) may carry: each stacks a
// branch into every forward, so a config listing thousands is refused.
inline constexpr size_t kMaxEngineTasks = 64;

class MultiTaskEngine {
 public:
  struct Task {
    std::string name;
    TaskKind kind;
    std::shared_ptr<const LoraAdapter> adapter;
    TaskHead head;
    std::vector<std::string> labels;
    int64_t first_layer;  // below it, the task equals the base model
  };

  static std::shared_ptr<const MultiTaskEngine> load(const std::filesystem::path& base,
                                                     const std::vector<EngineTaskSpec>& tasks,
                                                     const EngineOptions& options = {});

  // Results for `tasks` (names; empty = all), in that order, one shared pass.
  std::vector<TaskResult> classify(const std::vector<std::string_view>& texts,
                                   const std::vector<std::string>& tasks = {}, EngineStats* stats = nullptr) const;
  // Logits of each of `tasks` (indices into this->tasks()) for tokenized inputs:
  // [batch, labels] for sequence tasks, [batch, seq, labels] for token tasks.
  std::vector<at::Tensor> logits(const ModelInputs& inputs, const std::vector<size_t>& tasks,
                                 EngineStats* stats = nullptr) const;
  // The encoder's last hidden state under each task's adapter, [batch, seq,
  // hidden] (zeros at padding): what the heads above read.
  std::vector<at::Tensor> hidden_states(const ModelInputs& inputs, const std::vector<size_t>& tasks,
                                        EngineStats* stats = nullptr) const;

  const std::vector<Task>& tasks() const { return tasks_; }
  // Throws Error(kNotFound) naming the known tasks.
  size_t task_index(const std::string& name) const;
  const CoreModel& encoder() const { return *encoder_; }

 private:
  MultiTaskEngine() = default;
  void stack_adapters();
  at::Tensor head_logits(const Task& task, const at::Tensor& hidden, const at::Tensor& attention_mask) const;

  std::shared_ptr<const CoreModel> encoder_;
  // Every task's LoRA tensors stacked once, at load: slot 0 is the bare base,
  // then the tasks in the order they join the stack (by first adapted layer).
  std::unique_ptr<const LoraDeltas> stacked_;
  std::vector<int64_t> slot_of_task_;
  std::shared_ptr<const Tokenizer> tokenizer_;
  EncodeOptions encode_;
  std::vector<Task> tasks_;
};

}  // namespace semroute
