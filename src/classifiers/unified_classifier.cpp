#include "classifiers/unified_classifier.h"

#include <chrono>

#include "semroute/error.h"

namespace semroute {
namespace {

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

// A moving average that starts at the first measurement.
void record(double& average, double ms) { average = average < 0 ? ms : 0.8 * average + 0.2 * ms; }

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// Runs `load`, prefixing any error with the config field it came from.
template <class F>
auto for_field(const std::string& field, F&& load) {
  try {
    return load();
  } catch (const Error& e) {
    throw Error(e.code(), field + ": " + e.what());
  }
}

}  // namespace

const char* path_name(PathKind path) { return path == PathKind::kLora ? "lora" : "traditional"; }

std::shared_ptr<const UnifiedClassifier> UnifiedClassifier::load(const UnifiedConfig& config,
                                                                 UnifiedOptions options) {
  std::shared_ptr<UnifiedClassifier> u(new UnifiedClassifier());
  u->config_ = config;
  u->options_ = std::move(options);
  const TaskOptions model_options{config.pipeline};
  std::vector<EngineTaskSpec> specs;
  for (const auto& t : config.tasks) {
    Task task{t, nullptr, nullptr, !t.adapter.empty(), {}, {}};
    const std::string field = "tasks." + t.name + ".model";
    if (!t.model.empty() && t.kind == TaskKind::kSequence)
      task.sequence = for_field(field, [&] { return SequenceClassifier::load(t.model, model_options); });
    if (!t.model.empty() && t.kind == TaskKind::kToken)
      task.token = for_field(field, [&] { return TokenClassifier::load(t.model, model_options); });
    if (task.lora) specs.push_back({t.name, t.adapter, t.kind, t.labels, std::nullopt});
    u->tasks_.push_back(std::move(task));
  }
  if (!specs.empty()) {
    const EngineOptions engine_options{config.pipeline};
    u->engine_ = for_field("base_model", [&] { return MultiTaskEngine::load(config.base_model, specs, engine_options); });
  }
  for (auto& task : u->tasks_) {
    const std::string field = "tasks." + task.config.name;
    if (task.sequence) task.labels = task.sequence->labels();
    if (task.token) task.labels = task.token->labels();
    if (task.lora) {
      const auto& engine_labels = u->engine_->tasks()[u->engine_->task_index(task.config.name)].labels;
      if (!task.labels.empty() && task.labels != engine_labels)
        throw LoadError(field + ": the model's labels (" + join(task.labels) + ") differ from the adapter's (" +
                        join(engine_labels) + ")");
      task.labels = engine_labels;
    }
    for (const auto& positive : task.config.positive_labels) {
      const auto it = std::find(task.labels.begin(), task.labels.end(), positive);
      if (it == task.labels.end())
        throw LoadError(field + ".positive_labels: '" + positive + "' is not a label (labels: " + join(task.labels) + ")");
      task.positive.push_back(static_cast<size_t>(it - task.labels.begin()));
    }
  }
  u->latency_.traditional_ms.assign(u->tasks_.size(), -1);
  return u;
}

const std::vector<std::string>& UnifiedClassifier::labels(const std::string& task) const {
  for (const auto& t : tasks_)
    if (t.config.name == task) return t.labels;
  throw Error(ErrorCode::kNotFound, "no task '" + task + "'");
}

std::vector<UnifiedClassifier::Plan> UnifiedClassifier::plan(const std::vector<size_t>& ids,
                                                             const UnifiedRequest& request) const {
  std::vector<Plan> plans;
  for (size_t id : ids) {
    const Task& t = tasks_[id];
    Plan p{id, PathKind::kLora, ""};
    if (!t.has(PathKind::kLora)) {
      p = {id, PathKind::kTraditional, "only the fine-tuned model is loaded"};
    } else if (!t.has(PathKind::kTraditional)) {
      p.reason = "only the LoRA adapter is loaded";
    } else if (config_.policy == PathPolicy::kAlwaysLora) {
      p.reason = "policy always_lora";
    } else if (config_.policy == PathPolicy::kAlwaysTraditional) {
      p = {id, PathKind::kTraditional, "policy always_traditional"};
    } else if (request.prefer_accuracy) {
      p = {id, PathKind::kTraditional, "accuracy requested: the fine-tuned model"};
    } else if (ids.size() == 1) {
      p = {id, PathKind::kTraditional, "a single task: its fine-tuned model"};
    } else {
      p.reason = std::to_string(ids.size()) + " tasks: one shared pass through the multi-task engine";
    }
    plans.push_back(std::move(p));
  }
  if (config_.policy == PathPolicy::kAuto && config_.latency_budget_ms > 0) apply_budget(plans);
  return plans;
}

void UnifiedClassifier::apply_budget(std::vector<Plan>& plans) const {
  Latency measured;
  {
    std::lock_guard<std::mutex> lock(latency_mutex_);
    measured = latency_;
  }
  // Only tasks with both paths can move; compare what they cost either way.
  double lora_ms = measured.engine_ms, traditional_ms = 0;
  bool on_lora = false, movable = false;
  for (const auto& p : plans) {
    const Task& t = tasks_[p.task];
    if (!t.has(PathKind::kLora) || !t.has(PathKind::kTraditional)) continue;
    movable = true;
    on_lora = p.path == PathKind::kLora;
    const double ms = measured.traditional_ms[p.task];
    traditional_ms = ms < 0 || traditional_ms < 0 ? -1 : traditional_ms + ms;
  }
  if (!movable || lora_ms < 0 || traditional_ms < 0) return;  // not measured yet
  const double current = on_lora ? lora_ms : traditional_ms, other = on_lora ? traditional_ms : lora_ms;
  if (current <= config_.latency_budget_ms || other > config_.latency_budget_ms) return;
  const PathKind to = on_lora ? PathKind::kTraditional : PathKind::kLora;
  char reason[160];
  std::snprintf(reason, sizeof reason, "latency budget %.1f ms: %s path ~%.1f ms, %s path ~%.1f ms",
                config_.latency_budget_ms, path_name(on_lora ? PathKind::kLora : PathKind::kTraditional), current,
                path_name(to), other);
  for (auto& p : plans) {
    const Task& t = tasks_[p.task];
    if (t.has(PathKind::kLora) && t.has(PathKind::kTraditional)) p = {p.task, to, reason};
  }
}

void UnifiedClassifier::fill(TaskAnswer& answer, const Task& task, const Classification* c,
                             const TokenClassification* t) const {
  if (c != nullptr) {
    answer.classification = *c;
    answer.risk = 0;
    for (size_t i : task.positive) answer.risk += c->probabilities.at(i);
    answer.flagged = !task.positive.empty() && answer.risk >= task.config.threshold;
  }
  if (t != nullptr) answer.entities = t->entities;
}

std::vector<UnifiedResult> UnifiedClassifier::classify(const std::vector<std::string_view>& texts,
                                                       const UnifiedRequest& request) const {
  std::vector<size_t> ids;
  for (const auto& name : request.tasks) {
    const auto it = std::find_if(tasks_.begin(), tasks_.end(), [&](const Task& t) { return t.config.name == name; });
    if (it == tasks_.end()) {
      std::vector<std::string> known;
      for (const auto& t : tasks_) known.push_back(t.config.name);
      throw Error(ErrorCode::kNotFound, "no task '" + name + "' (tasks: " + join(known) + ")");
    }
    ids.push_back(static_cast<size_t>(it - tasks_.begin()));
  }
  if (request.tasks.empty())
    for (size_t i = 0; i < tasks_.size(); ++i) ids.push_back(i);
  std::vector<Plan> plans = plan(ids, request);

  std::vector<UnifiedResult> results(texts.size());
  for (auto& r : results) r.answers.resize(plans.size());
  const auto answer = [&](size_t k, size_t text) -> TaskAnswer& { return results[text].answers[k]; };
  const auto settle = [&](size_t k, PathKind path, const std::string& reason, double ms, const std::string& error) {
    for (size_t i = 0; i < texts.size(); ++i) {
      TaskAnswer& a = answer(k, i);
      a.task = tasks_[plans[k].task].config.name;
      a.kind = tasks_[plans[k].task].config.kind;
      a.path = path;
      a.reason = reason;
      a.latency_ms = ms;
      a.error = error;
    }
  };

  // Runs plan k on its fine-tuned model; the error message on failure.
  const auto run_traditional = [&](size_t k, const std::string& reason) -> std::string {
    const Task& t = tasks_[plans[k].task];
    try {
      if (options_.before_path) options_.before_path(t.config.name, PathKind::kTraditional);
      const auto start = std::chrono::steady_clock::now();
      std::vector<Classification> seq;
      std::vector<TokenClassification> tok;
      if (t.sequence) seq = t.sequence->classify(texts);
      if (t.token) tok = t.token->classify(texts);
      const double ms = elapsed_ms(start);
      settle(k, PathKind::kTraditional, reason, ms, "");
      for (size_t i = 0; i < texts.size(); ++i)
        fill(answer(k, i), t, t.sequence ? &seq[i] : nullptr, t.token ? &tok[i] : nullptr);
      std::lock_guard<std::mutex> lock(latency_mutex_);
      record(latency_.traditional_ms[plans[k].task], ms);
      return "";
    } catch (const std::exception& e) {
      return e.what();
    }
  };

  // Runs plans `ks` together through the engine; returns those that failed.
  const auto run_engine = [&](const std::vector<size_t>& ks, const std::vector<std::string>& reasons) {
    std::vector<std::pair<size_t, std::string>> failed;
    std::vector<size_t> runnable;
    std::vector<std::string> names, runnable_reasons;
    const auto start = std::chrono::steady_clock::now();
    for (size_t j = 0; j < ks.size(); ++j) {
      const std::string& name = tasks_[plans[ks[j]].task].config.name;
      try {
        if (options_.before_path) options_.before_path(name, PathKind::kLora);
        runnable.push_back(ks[j]);
        runnable_reasons.push_back(reasons[j]);
        names.push_back(name);
      } catch (const std::exception& e) {
        failed.emplace_back(ks[j], e.what());
      }
    }
    if (runnable.empty()) return failed;
    try {
      const auto out = engine_->classify(texts, names);
      const double ms = elapsed_ms(start);
      for (size_t j = 0; j < runnable.size(); ++j) {
        settle(runnable[j], PathKind::kLora, runnable_reasons[j], ms, "");
        const Task& t = tasks_[plans[runnable[j]].task];
        for (size_t i = 0; i < texts.size(); ++i)
          fill(answer(runnable[j], i), t, out[j].kind == TaskKind::kSequence ? &out[j].sequences[i] : nullptr,
               out[j].kind == TaskKind::kToken ? &out[j].tokens[i] : nullptr);
      }
      std::lock_guard<std::mutex> lock(latency_mutex_);
      record(latency_.engine_ms, ms);
    } catch (const std::exception& e) {
      for (size_t k : runnable) failed.emplace_back(k, e.what());
    }
    return failed;
  };

  // Traditional paths first; their failures join the engine call.
  std::vector<size_t> engine_plans;
  std::vector<std::string> engine_reasons;
  for (size_t k = 0; k < plans.size(); ++k) {
    if (plans[k].path == PathKind::kLora) {
      engine_plans.push_back(k);
      engine_reasons.push_back(plans[k].reason);
      continue;
    }
    const std::string error = run_traditional(k, plans[k].reason);
    if (error.empty()) continue;
    if (tasks_[plans[k].task].has(PathKind::kLora)) {
      engine_plans.push_back(k);
      engine_reasons.push_back(plans[k].reason + "; the fine-tuned model failed (" + error + "), fell back to LoRA");
    } else {
      settle(k, PathKind::kTraditional, plans[k].reason, 0, error);
    }
  }
  if (!engine_plans.empty()) {
    for (const auto& [k, error] : run_engine(engine_plans, engine_reasons)) {
      const bool fell_back_already = plans[k].path == PathKind::kTraditional;
      if (!fell_back_already && tasks_[plans[k].task].has(PathKind::kTraditional)) {
        const std::string traditional_error =
            run_traditional(k, plans[k].reason + "; LoRA failed (" + error + "), fell back to the fine-tuned model");
        if (traditional_error.empty()) continue;
        settle(k, PathKind::kTraditional, plans[k].reason, 0, error + "; then: " + traditional_error);
      } else {
        settle(k, PathKind::kLora, plans[k].reason, 0, error);
      }
    }
  }
  return results;
}

}  // namespace semroute
