#include "tasks/task_model.h"

#include "models/model_factory.h"
#include "semroute/error.h"

namespace semroute {

TaskModel TaskModel::load(const std::filesystem::path& dir, TaskKind kind, const TaskOptions& options) {
  const ModelSource source = open_model_source(dir);
  TaskModel task;
  task.encoder = load_core_model(source, options.load);
  WeightMap head_weights(source.checkpoint, {""},
                         at::TensorOptions().dtype(options.load.dtype).device(options.load.device));
  task.head = TaskHead::load(*task.encoder, kind, head_weights);
  task.labels = task.encoder->config().id2label;
  if (static_cast<int64_t>(task.labels.size()) != task.head.num_labels())
    throw LoadError(dir.string() + ": config.json names " + std::to_string(task.labels.size()) +
                    " labels but the classifier has " + std::to_string(task.head.num_labels()));
  task.tokenizer = load_tokenizer(options.tokenizer.empty() ? dir : options.tokenizer);
  const size_t model_limit = static_cast<size_t>(task.encoder->max_length());
  if (options.max_length > model_limit)
    throw InvalidInput("max_length " + std::to_string(options.max_length) + " exceeds the model's limit of " +
                       std::to_string(model_limit));
  task.encode.max_length = options.max_length ? options.max_length : model_limit;
  task.encode.truncation = options.truncation;
  return task;
}

}  // namespace semroute
