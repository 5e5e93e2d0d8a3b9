#include "tasks/task_model.h"

#include "adapters/lora_adapter.h"
#include "adapters/lora_deltas.h"
#include "models/model_factory.h"
#include "tasks/text_batch.h"
#include "semroute/error.h"

namespace semroute {
TaskHead load_task_head(const CoreModel& model, TaskKind kind, const Checkpoint& base, const LoraAdapter* adapter,
                        const WeightMap::Patch& patch, std::optional<Pooling> pooling) {
  const auto options = at::TensorOptions().dtype(model.dtype()).device(model.device());
  WeightMap weights(base, {""}, options);
  if (patch) weights.set_patch(patch);
  if (adapter != nullptr) adapter->overlay_saved_modules(weights);
  if (!pooling && adapter != nullptr && !adapter->task().pooling.empty()) pooling = parse_pooling(adapter->task().pooling);
  return TaskHead::load(model, kind, weights, pooling);
}

TaskModel TaskModel::load(const std::filesystem::path& dir, TaskKind kind, const TaskOptions& options) {
  const ModelSource source = open_model_source(dir);
  const auto adapter = options.adapter.empty()
                           ? nullptr
                           : load_adapter_for(options.adapter, source.checkpoint, options.load, options.merge_adapter);
  const auto patch = options.merge_adapter ? merge_patch(adapter) : nullptr;
  TaskModel task;
  task.encoder = load_core_model(source, options.load, nullptr, patch);
  task.head = load_task_head(*task.encoder, kind, source.checkpoint, adapter.get(), patch);
  task.labels = adapter && !adapter->task().labels.empty() ? adapter->task().labels : task.encoder->config().id2label;
  if (adapter && !options.merge_adapter)
    task.deltas = std::make_shared<LoraDeltas>(std::vector<std::shared_ptr<const LoraAdapter>>{adapter});
  if (static_cast<int64_t>(task.labels.size()) != task.head.num_labels())
    throw LoadError(dir.string() + ": config.json names " + std::to_string(task.labels.size()) +
                    " labels but the classifier has " + std::to_string(task.head.num_labels()));
  task.tokenizer = load_tokenizer(options.tokenizer.empty() ? dir : options.tokenizer);
  task.encode = encode_options_for(*task.encoder, options);
  return task;
}

}  // namespace semroute
