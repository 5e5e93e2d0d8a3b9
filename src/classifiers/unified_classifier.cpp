#include "classifiers/unified_classifier.h"

#include <chrono>

#include "semroute/error.h"

namespace semroute {
namespace {

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
    answer.flagged = !task.positive.empty() && answer.risk >= task.config.threshold.value_or(0.5);
  }
  if (t != nullptr)
    for (const EntitySpan& e : t->entities)
      if (e.score >= task.config.threshold.value_or(0)) answer.entities.push_back(e);
}

std::vector<size_t> UnifiedClassifier::requested_tasks(const UnifiedRequest& request) const {
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
  return ids;
}

void UnifiedClassifier::settle(Call& call, size_t k, PathKind path, const std::string& reason, double ms,
                               const std::optional<PathFailure>& failure) const {
  const Task& task = tasks_[call.plans[k].task];
  for (size_t i = 0; i < call.texts.size(); ++i) {
    TaskAnswer& a = call.answer(k, i);
    a.task = task.config.name;
    a.kind = task.config.kind;
    a.path = path;
    a.reason = reason;
    a.latency_ms = ms;
    a.error = failure ? failure->message : "";
    a.error_code = failure ? failure->code : ErrorCode::kInternal;
  }
}

double UnifiedClassifier::now_ms() const {
  if (options_.clock_ms) return options_.clock_ms();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::optional<PathFailure> UnifiedClassifier::run_traditional(Call& call, size_t k,
                                                                             const std::string& reason) const {
  const Task& t = tasks_[call.plans[k].task];
  try {
    const double start = now_ms();
    if (options_.before_path) options_.before_path(t.config.name, PathKind::kTraditional);
    std::vector<Classification> seq;
    std::vector<TokenClassification> tok;
    if (t.sequence) seq = t.sequence->classify(call.texts);
    if (t.token) tok = t.token->classify(call.texts);
    const double ms = now_ms() - start;
    settle(call, k, PathKind::kTraditional, reason, ms);
    for (size_t i = 0; i < call.texts.size(); ++i)
      fill(call.answer(k, i), t, t.sequence ? &seq[i] : nullptr, t.token ? &tok[i] : nullptr);
    std::lock_guard<std::mutex> lock(latency_mutex_);
    record(latency_.traditional_ms[call.plans[k].task], ms);
    return std::nullopt;
  } catch (...) {
    return report_current_exception();
  }
}

std::vector<std::pair<size_t, PathFailure>> UnifiedClassifier::run_engine(
    Call& call, const std::vector<size_t>& ks, const std::vector<std::string>& reasons) const {
  std::vector<std::pair<size_t, PathFailure>> failed;
  std::vector<size_t> runnable;
  std::vector<std::string> names, runnable_reasons;
  const double start = now_ms();
  for (size_t j = 0; j < ks.size(); ++j) {
    const std::string& name = tasks_[call.plans[ks[j]].task].config.name;
    try {
      if (options_.before_path) options_.before_path(name, PathKind::kLora);
      runnable.push_back(ks[j]);
      runnable_reasons.push_back(reasons[j]);
      names.push_back(name);
    } catch (...) {
      failed.emplace_back(ks[j], report_current_exception());
    }
  }
  if (runnable.empty()) return failed;
  try {
    const auto out = engine_->classify(call.texts, names);
    const double ms = now_ms() - start;
    for (size_t j = 0; j < runnable.size(); ++j) {
      settle(call, runnable[j], PathKind::kLora, runnable_reasons[j], ms);
      const Task& t = tasks_[call.plans[runnable[j]].task];
      for (size_t i = 0; i < call.texts.size(); ++i)
        fill(call.answer(runnable[j], i), t, out[j].kind == TaskKind::kSequence ? &out[j].sequences[i] : nullptr,
             out[j].kind == TaskKind::kToken ? &out[j].tokens[i] : nullptr);
    }
    std::lock_guard<std::mutex> lock(latency_mutex_);
    record(latency_.engine_ms, ms);
  } catch (...) {
    const PathFailure failure = report_current_exception();
    for (size_t k : runnable) failed.emplace_back(k, failure);
  }
  return failed;
}

// Every fine-tuned plan runs first (its failures join the engine call when
// the task has an adapter); then one engine call for all LoRA plans, whose
// failures fall back to the fine-tuned model where there is one.
std::vector<UnifiedResult> UnifiedClassifier::classify(const std::vector<std::string_view>& texts,
                                                       const UnifiedRequest& request) const {
  Call call{texts, plan(requested_tasks(request), request), std::vector<UnifiedResult>(texts.size())};
  for (auto& r : call.results) r.answers.resize(call.plans.size());

  std::vector<size_t> engine_plans;
  std::vector<std::string> engine_reasons;
  for (size_t k = 0; k < call.plans.size(); ++k) {
    const Plan& p = call.plans[k];
    if (p.path == PathKind::kLora) {
      engine_plans.push_back(k);
      engine_reasons.push_back(p.reason);
      continue;
    }
    const auto failure = run_traditional(call, k, p.reason);
    if (!failure) continue;
    if (tasks_[p.task].has(PathKind::kLora)) {
      engine_plans.push_back(k);
      engine_reasons.push_back(p.reason + "; the fine-tuned model failed (" + failure->message +
                               "), fell back to LoRA");
    } else {
      settle(call, k, PathKind::kTraditional, p.reason, 0, failure);
    }
  }
  if (engine_plans.empty()) return std::move(call.results);
  for (const auto& [k, failure] : run_engine(call, engine_plans, engine_reasons)) {
    const Plan& p = call.plans[k];
    const bool fell_back_already = p.path == PathKind::kTraditional;
    if (fell_back_already || !tasks_[p.task].has(PathKind::kTraditional)) {
      settle(call, k, PathKind::kLora, p.reason, 0, failure);
      continue;
    }
    const auto second = run_traditional(call, k, p.reason + "; LoRA failed (" + failure.message +
                                                     "), fell back to the fine-tuned model");
    if (second)
      settle(call, k, PathKind::kTraditional, p.reason, 0,
             PathFailure{second->code, failure.message + "; then: " + second->message});
  }
  return std::move(call.results);
}

}  // namespace semroute
