// The multi-task engine and the unified classifier through the C API: both
// answer with semroute_task_results (one answer per text and task).
#include <chrono>

#include "handles.h"
#include "semroute/error.h"

using namespace semroute::capi;
using semroute::InvalidInput;

namespace {

std::vector<std::string> task_names(const char* tasks, const uint64_t* offsets, size_t count) {
  std::vector<std::string> names;
  for (const auto view : batch_views(tasks, offsets, count, "tasks")) names.emplace_back(view);
  return names;
}

// C views over `items`, which must not move afterwards.
semroute_task_results* task_results(std::vector<semroute::UnifiedResult> items) {
  auto results = std::make_unique<semroute_task_results>();
  results->items = std::move(items);
  for (const auto& text : results->items)
    for (const auto& a : text.answers) {
      auto& entities = results->entities.add();
      for (const auto& e : a.entities) entities.push_back(entity_of(e));
    }
  results->entities.seal();
  size_t next = 0;
  for (const auto& text : results->items) {
    auto& answers = results->answers.add();
    for (const auto& a : text.answers) {
      size_t num_entities = 0;
      const semroute_entity* const* entities = results->entities.at(next++, &num_entities);
      const auto& c = a.classification;
      const bool sequence = a.kind == semroute::TaskKind::kSequence;
      answers.push_back({sizeof(semroute_task_answer), a.task.c_str(),
                         sequence ? SEMROUTE_TASK_SEQUENCE_CLASSIFICATION : SEMROUTE_TASK_TOKEN_CLASSIFICATION,
                         a.path == semroute::PathKind::kLora ? SEMROUTE_PATH_LORA : SEMROUTE_PATH_TRADITIONAL,
                         a.reason.c_str(), a.latency_ms, a.error.empty() ? nullptr : a.error.c_str(),
                         static_cast<int32_t>(c.class_id), sequence && a.error.empty() ? c.label.c_str() : nullptr,
                         c.confidence, c.probabilities.empty() ? nullptr : c.probabilities.data(),
                         c.probabilities.size(), a.risk, a.flagged ? 1 : 0, entities, num_entities,
                         a.error.empty() ? SEMROUTE_OK : static_cast<int32_t>(a.error_code)});
    }
  }
  results->answers.seal();
  return results.release();
}

// The engine's per-task results as per-text answers.
std::vector<semroute::UnifiedResult> engine_answers(const std::vector<semroute::TaskResult>& tasks, size_t texts,
                                                    double ms) {
  std::vector<semroute::UnifiedResult> out(texts);
  for (const auto& t : tasks)
    for (size_t i = 0; i < texts; ++i) {
      semroute::TaskAnswer a;
      a.task = t.task;
      a.kind = t.kind;
      a.path = semroute::PathKind::kLora;
      a.reason = "multi-task engine";
      a.latency_ms = ms;
      if (t.kind == semroute::TaskKind::kSequence) a.classification = t.sequences[i];
      if (t.kind == semroute::TaskKind::kToken) a.entities = t.tokens[i].entities;
      out[i].answers.push_back(std::move(a));
    }
  return out;
}

// The engine's answers for `names` on `texts`, timed.
std::vector<semroute::UnifiedResult> engine_answers_for(const semroute::MultiTaskEngine& engine,
                                                        const std::vector<std::string_view>& texts,
                                                        const std::vector<std::string>& names) {
  const auto start = std::chrono::steady_clock::now();
  const auto results = engine.classify(texts, names);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return engine_answers(results, texts.size(), ms);
}

// The stride of the caller's task array: its struct_size.
size_t task_stride(const semroute_engine_task* tasks) {
  // The first struct_size-versioned semroute_engine_task is the smallest an array may hold.
  constexpr size_t kFirstVersionSize = sizeof(semroute_engine_task);
  const size_t stride = caller_struct(tasks, semroute_engine_task{}, "tasks[0]").struct_size;
  if (stride < kFirstVersionSize)
    throw InvalidInput("tasks[0].struct_size is " + std::to_string(stride) + ", set it to sizeof(semroute_engine_task)");
  return stride;
}

// Task i of the caller's array.
semroute::EngineTaskSpec engine_task(const semroute_engine_task* tasks, size_t stride, size_t i) {
  const std::string where = "tasks[" + std::to_string(i) + "]";
  const auto* at = reinterpret_cast<const char*>(tasks) + i * stride;
  const semroute_engine_task t =
      caller_struct(at, semroute_engine_task{sizeof(semroute_engine_task), nullptr, nullptr, SEMROUTE_TASK_AUTO},
                    where.c_str());
  require(t.name, (where + ".name").c_str());
  require(t.adapter, (where + ".adapter").c_str());
  semroute::EngineTaskSpec spec{t.name, t.adapter, std::nullopt, {}, std::nullopt};
  if (t.task_kind == SEMROUTE_TASK_SEQUENCE_CLASSIFICATION) {
    spec.kind = semroute::TaskKind::kSequence;
  } else if (t.task_kind == SEMROUTE_TASK_TOKEN_CLASSIFICATION) {
    spec.kind = semroute::TaskKind::kToken;
  } else if (t.task_kind != SEMROUTE_TASK_AUTO) {
    throw InvalidInput(where + ".task_kind must be auto, sequence or token classification");
  }
  return spec;
}

}  // namespace

extern "C" {

size_t semroute_task_results_count(const semroute_task_results* results) {
  return results != nullptr ? results->items.size() : 0;
}

const semroute_task_answer* const* semroute_task_results_answers(const semroute_task_results* results, size_t i,
                                                                 size_t* out_count) {
  if (results == nullptr) return CLists<semroute_task_answer>().at(0, out_count);
  return results->answers.at(i, out_count);
}

void semroute_task_results_free(semroute_task_results* results) { delete results; }

semroute_status* semroute_engine_load(const char* base, const semroute_engine_task* tasks, size_t count,
                                      const semroute_model_params* params, semroute_engine** out_engine) {
  if (out_engine != nullptr) *out_engine = nullptr;
  return guarded_load([&] {
    require(base, "base");
    require(out_engine, "out_engine");
    if (count > 0) require(tasks, "tasks");
    const semroute_model_params p = effective_params(params);
    const semroute::EngineOptions options{pipeline_options_of(p)};
    const semroute::BatchingOptions batching{p.max_batch, p.max_wait_us};
    semroute::check_batching(batching);
    std::vector<semroute::EngineTaskSpec> specs;
    const size_t stride = count > 0 ? task_stride(tasks) : 0;
    for (size_t i = 0; i < count; ++i) specs.push_back(engine_task(tasks, stride, i));
    auto handle = std::make_unique<semroute_engine>();
    handle->engine = semroute::MultiTaskEngine::load(base, specs, options);
    if (batching.enabled()) {
      handle->batcher = std::make_unique<semroute::KeyedBatcher<std::vector<std::string>, semroute::UnifiedResult>>(
          [engine = handle->engine](const std::vector<std::string>& names, const std::vector<std::string_view>& texts) {
            return engine_answers_for(*engine, texts, names);
          },
          batching);
    }
    *out_engine = handle.release();
  });
}

void semroute_engine_free(semroute_engine* engine) { delete engine; }

semroute_status* semroute_engine_classify(const semroute_engine* engine, const char* texts, const uint64_t* offsets,
                                          size_t count, const char* tasks, const uint64_t* task_offsets,
                                          size_t task_count, semroute_task_results** out) {
  if (out != nullptr) *out = nullptr;
  return guarded([&] {
    require(engine, "engine");
    require(out, "out");
    const auto views = batch_views(texts, offsets, count, "texts");
    const auto names = task_names(tasks, task_offsets, task_count);
    *out = task_results(engine->batcher && !views.empty() ? (*engine->batcher)(names, views)
                                                          : engine_answers_for(*engine->engine, views, names));
  });
}

semroute_status* semroute_unified_load(const char* config_path, semroute_unified** out_unified) {
  if (out_unified != nullptr) *out_unified = nullptr;
  return guarded_load([&] {
    require(config_path, "config_path");
    require(out_unified, "out_unified");
    const auto config = semroute::UnifiedConfig::from_yaml(config_path);
    auto handle = std::make_unique<semroute_unified>();
    handle->unified = semroute::UnifiedClassifier::load(config);
    if (config.batching.enabled()) {
      using Key = std::pair<std::vector<std::string>, bool>;
      handle->batcher = std::make_unique<semroute::KeyedBatcher<Key, semroute::UnifiedResult>>(
          [unified = handle->unified](const Key& key, const std::vector<std::string_view>& texts) {
            return unified->classify(texts, semroute::UnifiedRequest{key.first, key.second});
          },
          config.batching);
    }
    *out_unified = handle.release();
  });
}

void semroute_unified_free(semroute_unified* unified) { delete unified; }

semroute_status* semroute_unified_classify(const semroute_unified* unified, const char* texts,
                                           const uint64_t* offsets, size_t count, const char* tasks,
                                           const uint64_t* task_offsets, size_t task_count, int prefer_accuracy,
                                           semroute_task_results** out) {
  if (out != nullptr) *out = nullptr;
  return guarded([&] {
    require(unified, "unified");
    require(out, "out");
    const auto views = batch_views(texts, offsets, count, "texts");
    semroute::UnifiedRequest request{task_names(tasks, task_offsets, task_count), prefer_accuracy != 0};
    if (views.empty()) {
      *out = task_results({});
    } else if (unified->batcher) {
      *out = task_results((*unified->batcher)({request.tasks, request.prefer_accuracy}, views));
    } else {
      *out = task_results(unified->unified->classify(views, request));
    }
  });
}

}  // extern "C"
