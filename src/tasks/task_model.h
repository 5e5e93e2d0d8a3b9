// What every task pipeline holds: a tokenizer, an encoder, a head, labels,
// and the input policy (maximum length and which tokens survive truncation).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "models/core_model.h"
#include "models/model_factory.h"
#include "tasks/task_head.h"
#include "tasks/text_batch.h"
#include "tokenizers/tokenizer.h"

namespace semroute {

// What every pipeline (classifiers, embedder, multi-task engine) is loaded
// with: device and dtype, the input policy, where the tokenizer is. Filled
// once by each surface (C API, CLI, YAML) and handed down.
// The input policy (tasks/text_batch.h): longer inputs are truncated as it
// says or refused, never silently capped elsewhere.
struct PipelineOptions : InputPolicy {
  LoadOptions load;
  // Tokenizer location when not beside the model (a directory or tokenizer.json).
  std::filesystem::path tokenizer;
};

struct TaskOptions : PipelineOptions {
  TaskOptions() = default;
  explicit TaskOptions(PipelineOptions pipeline) : PipelineOptions(std::move(pipeline)) {}
  // A PEFT LoRA adapter directory for the model: merged into its weights at
  // load (no run-time cost), or kept beside them and added at run time.
  // Its saved head (modules_to_save) and labels replace the model's.
  std::filesystem::path adapter;
  bool merge_adapter = true;
};

class LoraAdapter;

// The task head of `model`, module by module as PEFT composes it: from the
// adapter where it saved the module (modules_to_save), else from the base
// checkpoint (through `patch`, i.e. a merged adapter). Pooling: `pooling`, else what the adapter's task files say, else
// the model config's.
TaskHead load_task_head(const CoreModel& model, TaskKind kind, const ModelSource& base, const LoraAdapter* adapter,
                        const WeightMap::Patch& patch = nullptr, std::optional<Pooling> pooling = std::nullopt);

// An encoder without a head, and the tokenizer that feeds it (null when its
// directory has none): what task heads are bound to. Shared, never copied:
// every head bound to it runs on the same weights in memory.
struct Backbone {
  std::shared_ptr<const CoreModel> encoder;
  std::shared_ptr<const Tokenizer> tokenizer;

  // The encoder of a model directory (a full task checkpoint, or the encoder
  // tensors alone); its task head, if any, is not loaded.
  static Backbone load(const std::filesystem::path& dir, const PipelineOptions& options);
};

struct TaskModel {
  std::shared_ptr<const Tokenizer> tokenizer;
  std::shared_ptr<const CoreModel> encoder;
  TaskHead head;
  std::vector<std::string> labels;
  std::string problem_type;  // config.json's, of the checkpoint the head comes from
  EncodeOptions encode;
  std::shared_ptr<const LinearDeltas> deltas;  // an unmerged adapter, or null

  Backbone backbone() const { return {encoder, tokenizer}; }

  ForwardOptions forward_options() const {
    ForwardOptions f;
    f.deltas = deltas.get();
    return f;
  }

  // Loads a fine-tuned task checkpoint (e.g. *ForSequenceClassification).
  static TaskModel load(const std::filesystem::path& dir, TaskKind kind, const TaskOptions& options);

  // The head of the task checkpoint in `head_dir` on `backbone`'s encoder
  // (shared: nothing of the encoder is loaded again). head_dir holds a
  // config.json of the same architecture and width (its labels, problem_type
  // and head shape, e.g. ModernBERT's classifier_pooling, are the head's own)
  // and weights with the head's tensors (encoder tensors, if any, are not
  // read). The tokenizer: options.tokenizer, else head_dir's, else the
  // backbone's. A max_length over the encoder's limit is refused.
  static TaskModel bind(const Backbone& backbone, const std::filesystem::path& head_dir, TaskKind kind,
                        const PipelineOptions& options);
};

}  // namespace semroute
