#include "tasks/multitask_engine.h"

#include <ATen/ops/cat.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "core/parallel.h"
#include "adapters/lora_deltas.h"
#include "models/model_factory.h"
#include "semroute/error.h"
#include "tasks/text_batch.h"

namespace semroute {
namespace {

TaskKind kind_of(const EngineTaskSpec& spec, const AdapterTask& task) {
  if (spec.kind) return *spec.kind;
  if (task.task_type == "SEQ_CLS") return TaskKind::kSequence;
  if (task.task_type == "TOKEN_CLS") return TaskKind::kToken;
  throw LoadError(spec.adapter.string() + ": task type unknown (task_type '" + task.task_type +
                  "'); say whether task '" + spec.name + "' is sequence or token classification");
}

// Adapters by directory: tasks naming the same adapter share one copy.
using LoadedAdapters = std::map<std::filesystem::path, std::shared_ptr<const LoraAdapter>>;

MultiTaskEngine::Task load_task(const EngineTaskSpec& spec, const CoreModel& encoder, const ModelSource& base,
                                at::TensorOptions options, LoadedAdapters& loaded) {
  std::error_code ec;
  const std::filesystem::path key = std::filesystem::weakly_canonical(spec.adapter, ec);
  auto& adapter = loaded[ec ? spec.adapter : key];
  if (!adapter) adapter = LoraAdapter::load(spec.adapter, base.checkpoint, options);
  const AdapterTask& info = adapter->task();
  const TaskKind kind = kind_of(spec, info);
  TaskHead head = load_task_head(encoder, kind, base, adapter.get(), nullptr, spec.pooling);
  std::vector<std::string> labels = !spec.labels.empty() ? spec.labels : info.labels;
  if (labels.empty())
    for (int64_t i = 0; i < head.num_labels(); ++i) labels.push_back("LABEL_" + std::to_string(i));
  if (static_cast<int64_t>(labels.size()) != head.num_labels())
    throw LoadError("task '" + spec.name + "': " + std::to_string(labels.size()) + " labels but the classifier has " +
                    std::to_string(head.num_labels()));
  const int64_t first = std::max<int64_t>(adapter->first_layer(), 0);
  return {spec.name, kind, adapter, std::move(head), std::move(labels), first};
}

}  // namespace

std::shared_ptr<const MultiTaskEngine> MultiTaskEngine::load(const std::filesystem::path& base,
                                                             const std::vector<EngineTaskSpec>& tasks,
                                                             const EngineOptions& options) {
  if (tasks.empty()) throw InvalidInput("a multi-task engine needs at least one task");
  if (tasks.size() > kMaxEngineTasks)
    throw InvalidInput(std::to_string(tasks.size()) + " tasks for one engine; at most " +
                       std::to_string(kMaxEngineTasks));
  std::shared_ptr<MultiTaskEngine> engine(new MultiTaskEngine());
  const ModelSource source = open_model_source(base);
  engine->encoder_ = load_core_model(source, options.load);
  const auto tensor_options = at::TensorOptions().dtype(options.load.dtype).device(options.load.device);
  LoadedAdapters adapters;
  for (const auto& spec : tasks) {
    for (const auto& t : engine->tasks_)
      if (t.name == spec.name) throw InvalidInput("task '" + spec.name + "' is listed twice");
    engine->tasks_.push_back(load_task(spec, *engine->encoder_, source, tensor_options, adapters));
  }
  engine->stack_adapters();
  const std::filesystem::path tokenizer = options.tokenizer.empty() ? base : options.tokenizer;
  if (options.require_tokenizer || std::filesystem::exists(tokenizer / "tokenizer.json"))
    engine->tokenizer_ = load_tokenizer(tokenizer);
  engine->encode_ = encode_options_for(*engine->encoder_, options);
  return engine;
}

size_t MultiTaskEngine::task_index(const std::string& name) const {
  std::string known;
  for (size_t i = 0; i < tasks_.size(); ++i) {
    if (tasks_[i].name == name) return i;
    known += (i ? ", " : "") + tasks_[i].name;
  }
  throw Error(ErrorCode::kNotFound, "no task '" + name + "' (tasks: " + known + ")");
}

at::Tensor MultiTaskEngine::head_logits(const Task& task, const at::Tensor& hidden,
                                        const at::Tensor& attention_mask) const {
  return task.kind == TaskKind::kSequence ? task.head.sequence_logits(hidden, attention_mask)
                                          : task.head.token_logits(hidden);
}

void MultiTaskEngine::stack_adapters() {
  std::vector<size_t> order(tasks_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return tasks_[a].first_layer < tasks_[b].first_layer; });
  std::vector<std::shared_ptr<const LoraAdapter>> slots = {nullptr};
  slot_of_task_.assign(tasks_.size(), 0);
  for (size_t t : order) {
    slot_of_task_[t] = static_cast<int64_t>(slots.size());
    slots.push_back(tasks_[t].adapter);
  }
  stacked_ = std::make_unique<const LoraDeltas>(std::move(slots));
}

std::vector<at::Tensor> MultiTaskEngine::logits(const ModelInputs& inputs, const std::vector<size_t>& tasks,
                                                EngineStats* stats) const {
  const std::vector<at::Tensor> hidden = hidden_states(inputs, tasks, stats);
  c10::InferenceMode guard;
  std::vector<at::Tensor> out;
  for (size_t i = 0; i < tasks.size(); ++i) out.push_back(head_logits(tasks_[tasks[i]], hidden[i], inputs.attention_mask));
  return out;
}

std::vector<at::Tensor> MultiTaskEngine::hidden_states(const ModelInputs& inputs, const std::vector<size_t>& tasks,
                                                       EngineStats* stats) const {
  if (tasks.empty()) return {};
  for (size_t t : tasks)
    if (t >= tasks_.size()) throw InvalidInput("task index " + std::to_string(t) + " out of range");
  c10::InferenceMode guard;
  // Each requested task once, in the order they join the stack.
  std::vector<size_t> order(tasks);
  std::sort(order.begin(), order.end());
  order.erase(std::unique(order.begin(), order.end()), order.end());
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return slot_of_task_[a] < slot_of_task_[b]; });

  const CoreModel& encoder = *encoder_;
  int64_t passes = 0;
  LayerState state = encoder.embed(inputs);
  const int64_t total = encoder.num_layers();
  const int64_t prefix = std::min(tasks_[order.front()].first_layer, total);
  encoder.run_layers(state, 0, prefix, nullptr);  // the shared prefix, once
  passes += prefix;

  // Row groups of the stacked state, as slots of stacked_ (0: the bare base).
  // The stack changes only where a task joins: run the layers between those
  // points in one call each.
  std::vector<int64_t> members = {0};
  size_t next = 0;
  for (int64_t layer = prefix; layer < total;) {
    for (; next < order.size() && tasks_[order[next]].first_layer <= layer; ++next) {
      members.push_back(slot_of_task_[order[next]]);
      state.hidden = at::cat({state.hidden, state.group(0)});
      ++state.groups;
    }
    if (next == order.size() && members.front() == 0) {
      state.hidden = state.hidden.narrow(0, state.tokens(), (state.groups - 1) * state.tokens());
      --state.groups;
      members.erase(members.begin());
    }
    const LoraDeltas deltas = stacked_->select(members);
    const int64_t until = next < order.size() ? std::min(tasks_[order[next]].first_layer, total) : total;
    encoder.run_layers(state, layer, until, &deltas);
    passes += state.groups * (until - layer);
    layer = until;
  }

  std::vector<at::Tensor> out;
  for (size_t t : tasks) {
    const auto group = std::find(members.begin(), members.end(), slot_of_task_[t]) - members.begin();
    out.push_back(encoder.finish(state, group));
  }
  if (stats != nullptr) stats->layer_passes += passes;
  return out;
}

std::vector<TaskResult> MultiTaskEngine::classify(const std::vector<std::string_view>& texts,
                                                  const std::vector<std::string>& tasks, EngineStats* stats) const {
  if (!tokenizer_) throw InvalidInput("this engine was loaded without a tokenizer: give it token ids");
  std::vector<size_t> indices;
  if (tasks.empty()) {
    indices.resize(tasks_.size());
    std::iota(indices.begin(), indices.end(), size_t{0});
  } else {
    for (const auto& name : tasks) indices.push_back(task_index(name));
  }
  std::vector<TaskResult> results;
  if (texts.empty()) {
    for (size_t t : indices) results.push_back({tasks_[t].name, tasks_[t].kind, {}, {}});
    return results;
  }
  for (size_t t : indices) results.push_back({tasks_[t].name, tasks_[t].kind, {}, {}});
  const auto encode = [&](size_t first, size_t last) {
    return tokenizer_->encode_batch({texts.begin() + first, texts.begin() + last}, encode_);
  };
  for_each_budgeted_batch(texts.size(), encode, *tokenizer_, encoder_->device(), [&](const TextBatch& batch, size_t first) {
    const std::vector<std::string_view> part(texts.begin() + first, texts.begin() + first + batch.encodings.size());
    const auto logits_per_task = logits(batch.inputs, indices, stats);
    // The split of the cores: the forward and the heads above ran on libtorch's
    // intra-op threads (all of them); what is left per task (labels from
    // probabilities, span aggregation with byte offsets) is small serial work,
    // spread over TBB's workers only after the forward is done, so the two
    // pools are never busy at the same time.
    parallel_for_each(indices.size(), [&](size_t i) {
      const Task& task = tasks_[indices[i]];
      TaskResult& r = results[i];
      if (task.kind == TaskKind::kSequence) {
        auto classifications = to_classifications(logits_per_task[i], task.labels);
        for (size_t b = 0; b < classifications.size(); ++b) {
          classifications[b].input = usage_of(batch.encodings[b]);
          r.sequences.push_back(std::move(classifications[b]));
        }
      } else {
        for (auto& c :
             to_token_classifications(logits_per_task[i], batch, part, task.labels, task.head.entity_aggregation()))
          r.tokens.push_back(std::move(c));
      }
    });
  });
  return results;
}

}  // namespace semroute
