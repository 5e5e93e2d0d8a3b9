#include "tasks/task_model.h"

#include "core/model_config.h"

#include "adapters/lora_adapter.h"
#include "adapters/lora_deltas.h"
#include "models/model_factory.h"
#include "tasks/text_batch.h"
#include "semroute/error.h"

namespace semroute {
TaskHead load_task_head(const CoreModel& model, TaskKind kind, const ModelSource& base, const LoraAdapter* adapter,
                        const WeightMap::Patch& patch, std::optional<Pooling> pooling) {
  const auto options = at::TensorOptions().dtype(model.dtype()).device(model.device());
  WeightMap weights(base.checkpoint, {""}, options);
  if (patch) weights.set_patch(patch);
  if (adapter != nullptr) adapter->overlay_saved_modules(weights);
  if (!pooling && adapter != nullptr && !adapter->task().pooling.empty()) pooling = parse_pooling(adapter->task().pooling);
  TaskHead head = TaskHead::load(model, base.config, kind, weights, pooling);
  if (adapter != nullptr) {  // the adapter's head: its calibration and decoding
    head.set_temperature(adapter->task().temperature);
    head.set_entity_aggregation(adapter->task().entity_aggregation);
  }
  return head;
}

TaskModel TaskModel::load(const std::filesystem::path& dir, TaskKind kind, const TaskOptions& options) {
  const ModelSource source = open_model_source(dir);
  const auto adapter = options.adapter.empty()
                           ? nullptr
                           : load_adapter_for(options.adapter, source.checkpoint, options.load, options.merge_adapter);
  const auto patch = options.merge_adapter ? merge_patch(adapter) : nullptr;
  TaskModel task;
  task.encoder = load_core_model(source, options.load, nullptr, patch);
  task.head = load_task_head(*task.encoder, kind, source, adapter.get(), patch);
  task.labels = adapter && !adapter->task().labels.empty() ? adapter->task().labels : task.encoder->config().id2label;
  task.problem_type = task.encoder->config().problem_type;
  if (adapter && !options.merge_adapter)
    task.deltas = std::make_shared<LoraDeltas>(std::vector<std::shared_ptr<const LoraAdapter>>{adapter});
  if (static_cast<int64_t>(task.labels.size()) != task.head.num_labels())
    throw LoadError(dir.string() + ": config.json names " + std::to_string(task.labels.size()) +
                    " labels but the classifier has " + std::to_string(task.head.num_labels()));
  task.tokenizer = load_tokenizer(options.tokenizer.empty() ? dir : options.tokenizer);
  task.encode = encode_options_for(*task.encoder, options);
  return task;
}

namespace {

// tokenizer.json, or a SentencePiece tokenizer.model (load_tokenizer reads either).
bool has_tokenizer(const std::filesystem::path& dir) {
  return std::filesystem::exists(dir / "tokenizer.json") || std::filesystem::exists(dir / "tokenizer.model");
}

// The head's checkpoint must be of the encoder's architecture and width:
// its head reads the encoder's hidden states.
void check_head_fits(const CoreModel& encoder, const ModelSource& head, const ModelConfig& head_config) {
  const Backend* backend = find_backend(head.config);
  if (backend != &encoder.backend())
    throw LoadError(head.dir.string() + ": a head for " + (backend ? backend->name : head_config.model_type) +
                    " models cannot be bound to a " + encoder.backend_name() + " encoder");
  if (head_config.hidden_size != encoder.hidden_size())
    throw LoadError(head.dir.string() + ": the head reads hidden states of width " +
                    std::to_string(head_config.hidden_size) + ", the encoder gives " +
                    std::to_string(encoder.hidden_size()));
}

}  // namespace

Backbone Backbone::load(const std::filesystem::path& dir, const PipelineOptions& options) {
  Backbone backbone;
  backbone.encoder = load_core_model(open_model_source(dir), options.load);
  const std::filesystem::path tokenizer = options.tokenizer.empty() ? dir : options.tokenizer;
  if (!options.tokenizer.empty() || has_tokenizer(dir)) backbone.tokenizer = load_tokenizer(tokenizer);
  return backbone;
}

TaskModel TaskModel::bind(const Backbone& backbone, const std::filesystem::path& head_dir, TaskKind kind,
                          const PipelineOptions& options) {
  if (!backbone.encoder) throw InvalidInput("no encoder to bind a head to");
  const ModelSource source = open_model_source(head_dir);
  const ModelConfig config = ModelConfig::parse(source.config);
  check_head_fits(*backbone.encoder, source, config);
  const std::optional<TaskKind> trained_for = task_kind_of(config.architecture());
  if (trained_for && *trained_for != kind)
    throw LoadError(head_dir.string() + ": a " + config.architecture() + " head is not a " +
                    (kind == TaskKind::kSequence ? "sequence" : "token") + " classification head");
  TaskModel task;
  task.encoder = backbone.encoder;
  task.head = load_task_head(*task.encoder, kind, source, nullptr);
  task.labels = config.id2label;
  task.problem_type = config.problem_type;
  if (static_cast<int64_t>(task.labels.size()) != task.head.num_labels())
    throw LoadError(head_dir.string() + ": config.json names " + std::to_string(task.labels.size()) +
                    " labels but the classifier has " + std::to_string(task.head.num_labels()));
  if (!options.tokenizer.empty())
    task.tokenizer = load_tokenizer(options.tokenizer);
  else if (has_tokenizer(head_dir))
    task.tokenizer = load_tokenizer(head_dir);
  else
    task.tokenizer = backbone.tokenizer;
  if (!task.tokenizer)
    throw LoadError(head_dir.string() + ": no tokenizer beside the head, and the backbone has none");
  task.encode = encode_options_for(*task.encoder, options);
  return task;
}

}  // namespace semroute
