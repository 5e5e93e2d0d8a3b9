#include "tasks/task_model.h"

#include "lora/lora_adapter.h"
#include "lora/lora_deltas.h"
#include "models/model_factory.h"
#include "tasks/text_batch.h"
#include "semroute/error.h"

namespace semroute {
namespace {

// The adapter of `options`, if any: float32 on the CPU when it will be merged
// (the merge is computed in float32), else in the model's dtype and device.
std::shared_ptr<const LoraAdapter> load_adapter(const TaskOptions& options, const Checkpoint& base) {
  if (options.adapter.empty()) return nullptr;
  const auto tensor_options = options.merge_adapter
                                  ? at::TensorOptions().dtype(at::kFloat)
                                  : at::TensorOptions().dtype(options.load.dtype).device(options.load.device);
  return LoraAdapter::load(options.adapter, base, tensor_options);
}

WeightMap::Patch merge_patch(const std::shared_ptr<const LoraAdapter>& adapter, bool merge) {
  if (!adapter || !merge) return nullptr;
  return [adapter](const std::string& name, const at::Tensor& t) { return adapter->merge(name, t); };
}

}  // namespace

TaskModel TaskModel::load(const std::filesystem::path& dir, TaskKind kind, const TaskOptions& options) {
  const ModelSource source = open_model_source(dir);
  const auto adapter = load_adapter(options, source.checkpoint);
  const auto patch = merge_patch(adapter, options.merge_adapter);
  TaskModel task;
  task.encoder = load_core_model(source, options.load, nullptr, patch);
  const auto tensor_options = at::TensorOptions().dtype(options.load.dtype).device(options.load.device);
  const bool adapter_head = adapter && adapter->has_saved_modules();
  WeightMap head_weights = adapter_head ? adapter->saved_modules(tensor_options)
                                        : WeightMap(source.checkpoint, {""}, tensor_options);
  if (patch && !adapter_head) head_weights.set_patch(patch);
  std::optional<Pooling> pooling;
  if (adapter && !adapter->task().pooling.empty()) pooling = parse_pooling(adapter->task().pooling);
  task.head = TaskHead::load(*task.encoder, kind, head_weights, pooling);
  task.labels = adapter && !adapter->task().labels.empty() ? adapter->task().labels : task.encoder->config().id2label;
  if (adapter && !options.merge_adapter)
    task.deltas = std::make_shared<LoraDeltas>(std::vector<std::shared_ptr<const LoraAdapter>>{adapter});
  if (static_cast<int64_t>(task.labels.size()) != task.head.num_labels())
    throw LoadError(dir.string() + ": config.json names " + std::to_string(task.labels.size()) +
                    " labels but the classifier has " + std::to_string(task.head.num_labels()));
  task.tokenizer = load_tokenizer(options.tokenizer.empty() ? dir : options.tokenizer);
  task.encode = encode_options_for(*task.encoder, options.max_length, options.truncation);
  return task;
}

}  // namespace semroute
