// The router's batch entry points over intent, PII and security at once:
// init_lora_unified_classifier / classify_batch_with_lora and
// init_unified_classifier_c / classify_unified_batch. The three tasks are
// either PEFT adapters over one base (semroute's multi-task engine: one
// shared pass) or three fine-tuned model directories.
#include <sys/stat.h>

#include <algorithm>
#include <cctype>

#include "models.h"

using namespace candle;

namespace {

enum Task { kIntent = 0, kPii = 1, kSecurity = 2 };
const char* const kTaskNames[] = {"intent", "pii", "security"};
const semroute_task kTaskKinds[] = {SEMROUTE_TASK_SEQUENCE_CLASSIFICATION, SEMROUTE_TASK_TOKEN_CLASSIFICATION,
                                    SEMROUTE_TASK_SEQUENCE_CLASSIFICATION};

struct TextAnswer {
  std::string intent;
  float intent_confidence = 0;
  std::vector<float> intent_probabilities;
  std::vector<std::string> pii_types;  // distinct, in order of appearance
  float pii_confidence = 0;            // mean score of the entities (0 without)
  std::string security;
  float security_confidence = 0;
};

// Security labels that mean "no threat" (any other label is one).
bool is_benign(std::string label) {
  std::transform(label.begin(), label.end(), label.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* b : {"benign", "safe", "no_threat", "no_jailbreak", "none", "normal", "legitimate", "label_0"})
    if (label == b) return true;
  return false;
}

void add_entities(TextAnswer& a, const std::vector<semroute::Entity>& entities) {
  float sum = 0;
  for (const auto& e : entities) {
    if (std::find(a.pii_types.begin(), a.pii_types.end(), e.type) == a.pii_types.end()) a.pii_types.push_back(e.type);
    sum += e.score;
  }
  a.pii_confidence = entities.empty() ? 0.0f : sum / static_cast<float>(entities.size());
}

using Engine = semroute::detail::Owned<semroute_engine, semroute_engine_free>;
using TaskResults = semroute::detail::Owned<semroute_task_results, semroute_task_results_free>;

class ThreeTasks {
 public:
  // Three adapter directories over `base`, or three model directories.
  static std::unique_ptr<ThreeTasks> load(const std::string& base, const std::string (&dirs)[3]) {
    auto t = std::make_unique<ThreeTasks>();
    int adapters = 0;
    for (const auto& d : dirs) adapters += is_adapter(d) ? 1 : 0;
    if (adapters == 3) {
      t->load_engine(base, dirs);
    } else if (adapters == 0) {
      for (int i = 0; i < 3; ++i) t->models_[i] = load_classifier(dirs[i].c_str(), kTaskKinds[i]);
    } else {
      throw Failure("give three PEFT adapter directories or three model directories, not a mix");
    }
    return t;
  }

  std::vector<TextAnswer> classify(const std::vector<std::string_view>& texts) const {
    if (texts.empty()) throw Failure("no texts");
    return engine_ ? classify_engine(texts) : classify_models(texts);
  }

  static bool is_adapter(const std::string& dir) {
    struct stat st {};
    return ::stat((dir + "/adapter_config.json").c_str(), &st) == 0;
  }

 private:
  void load_engine(const std::string& base, const std::string (&dirs)[3]) {
    semroute_engine_task tasks[3];
    for (int i = 0; i < 3; ++i)
      tasks[i] = {sizeof(semroute_engine_task), kTaskNames[i], dirs[i].c_str(), kTaskKinds[i]};
    const semroute_model_params params = classifier_params(base, SEMROUTE_TASK_AUTO);
    semroute_engine* raw = nullptr;
    semroute::detail::check(semroute_engine_load(base.c_str(), tasks, 3, &params, &raw));
    engine_.reset(raw);
  }

  std::vector<TextAnswer> classify_models(const std::vector<std::string_view>& texts) const {
    std::vector<TextAnswer> out(texts.size());
    const auto intents = models_[kIntent]->classify(texts);
    const auto pii = models_[kPii]->classify_tokens(texts);
    const auto security = models_[kSecurity]->classify(texts);
    for (size_t i = 0; i < texts.size(); ++i) {
      out[i].intent = intents[i].label;
      out[i].intent_confidence = intents[i].confidence;
      out[i].intent_probabilities = intents[i].probabilities;
      add_entities(out[i], pii[i].entities);
      out[i].security = security[i].label;
      out[i].security_confidence = security[i].confidence;
    }
    return out;
  }

  std::vector<TextAnswer> classify_engine(const std::vector<std::string_view>& texts) const {
    const semroute::detail::Batch batch(texts);
    semroute_task_results* raw = nullptr;
    semroute::detail::check(semroute_engine_classify(engine_.get(), batch.bytes.data(), batch.offsets.data(),
                                                     texts.size(), nullptr, nullptr, 0, &raw));
    const TaskResults results(raw);
    std::vector<TextAnswer> out(texts.size());
    for (size_t i = 0; i < texts.size(); ++i) {
      size_t n = 0;
      const semroute_task_answer* const* answers = semroute_task_results_answers(raw, i, &n);
      for (size_t j = 0; j < n; ++j) answer_into(out[i], *answers[j]);
    }
    return out;
  }

  static void answer_into(TextAnswer& out, const semroute_task_answer& a) {
    if (a.error != nullptr) throw Failure(std::string(a.task) + ": " + a.error);
    const std::string_view task = a.task;
    if (task == kTaskNames[kIntent]) {
      out.intent = a.label;
      out.intent_confidence = a.confidence;
      out.intent_probabilities.assign(a.probabilities, a.probabilities + a.num_labels);
    } else if (task == kTaskNames[kPii]) {
      std::vector<semroute::Entity> entities;
      for (size_t k = 0; k < a.num_entities; ++k) {
        const semroute_entity& e = *a.entities[k];
        entities.push_back({e.type, e.begin, e.end, std::string(e.text, e.text_length), e.score});
      }
      add_entities(out, entities);
    } else if (task == kTaskNames[kSecurity]) {
      out.security = a.label;
      out.security_confidence = a.confidence;
    }
  }

  Engine engine_;
  std::unique_ptr<Model> models_[3];
};

Slot<ThreeTasks> g_lora_engine, g_unified;

char** string_array(const std::vector<std::string>& strings) {
  char** out = zeroed_array<char*>(strings.size());
  for (size_t i = 0; i < strings.size(); ++i) out[i] = copy_string(strings[i]);
  return out;
}

// Fills the per-task arrays shared by both result layouts.
template <class IntentT, class PiiT, class SecurityT, class Result>
void fill_tasks(Result& r, const std::vector<TextAnswer>& answers) {
  const size_t n = answers.size();
  r.intent_results = zeroed_array<IntentT>(n);
  r.pii_results = zeroed_array<PiiT>(n);
  r.security_results = zeroed_array<SecurityT>(n);
  r.batch_size = static_cast<int>(n);
  for (size_t i = 0; i < n; ++i) {
    const TextAnswer& a = answers[i];
    r.intent_results[i].category = copy_string(a.intent);
    r.intent_results[i].confidence = a.intent_confidence;
    r.pii_results[i] = {!a.pii_types.empty(), string_array(a.pii_types), static_cast<int>(a.pii_types.size()),
                        a.pii_confidence};
    const bool threat = !is_benign(a.security);
    r.security_results[i] = {threat, copy_string(threat ? a.security : "none"), a.security_confidence};
  }
}

template <class Result>
void free_tasks(const Result& r) {
  for (int i = 0; i < r.batch_size; ++i) {
    if (r.intent_results) std::free(r.intent_results[i].category);
    if (r.pii_results) free_strings(r.pii_results[i].pii_types, r.pii_results[i].num_pii_types);
    if (r.security_results) std::free(r.security_results[i].threat_type);
  }
  std::free(r.intent_results);
  std::free(r.pii_results);
  std::free(r.security_results);
}

std::string path_arg(const char* path, const char* what) { return directory_arg(path, what); }

}  // namespace

extern "C" {

// The architecture string is ignored (semroute reads config.json).
bool init_lora_unified_classifier(const char* intent_model_path, const char* pii_model_path,
                                  const char* security_model_path, const char*, bool) {
  return init_slot("init_lora_unified_classifier", g_lora_engine, WhenSet::kTrue, [&] {
    const std::string dirs[3] = {path_arg(intent_model_path, "intent model"), path_arg(pii_model_path, "pii model"),
                                 path_arg(security_model_path, "security model")};
    const std::string base = ThreeTasks::is_adapter(dirs[0]) ? adapter_base(dirs[0]) : std::string();
    return ThreeTasks::load(base, dirs);
  });
}

LoRABatchResult classify_batch_with_lora(const char** texts, int num_texts) {
  LoRABatchResult failed{};
  return guarded("classify_batch_with_lora", failed, [&] {
    const auto answers = g_lora_engine.require("the LoRA classifier").classify(texts_arg(texts, num_texts, "texts"));
    LoRABatchResult r{};
    fill_tasks<LoRAIntentResult, LoRAPIIResult, LoRASecurityResult>(r, answers);
    float sum = 0;
    for (const auto& a : answers) sum += a.intent_confidence + a.pii_confidence + a.security_confidence;
    r.avg_confidence = sum / static_cast<float>(3 * answers.size());
    return r;
  });
}

void free_lora_batch_result(LoRABatchResult result) {
  if (result.batch_size > 0) free_tasks(result);
}

// The heads are PEFT adapter directories over modernbert_path, or three
// fine-tuned model directories; the label arrays are ignored (the models'
// own id2label names the classes).
bool init_unified_classifier_c(const char* modernbert_path, const char* intent_head_path, const char* pii_head_path,
                               const char* security_head_path, const char**, int, const char**, int, const char**, int,
                               bool) {
  return init_slot("init_unified_classifier_c", g_unified, WhenSet::kFalse, [&] {
    const std::string base = path_arg(modernbert_path, "modernbert_path");
    const std::string dirs[3] = {path_arg(intent_head_path, "intent head"), path_arg(pii_head_path, "pii head"),
                                 path_arg(security_head_path, "security head")};
    return ThreeTasks::load(base, dirs);
  });
}

// error_message is static text (callers never free it); the log has details.
UnifiedBatchResult classify_unified_batch(const char** texts, int num_texts) {
  UnifiedBatchResult failed{};
  failed.error = true;
  failed.error_message = const_cast<char*>("unified classification failed (details on stderr)");
  return guarded("classify_unified_batch", failed, [&] {
    const ThreeTasks* unified = g_unified.get();
    if (unified == nullptr) {
      UnifiedBatchResult r = failed;
      r.error_message = const_cast<char*>("Unified classifier not initialized");
      return r;
    }
    const auto answers = unified->classify(texts_arg(texts, num_texts, "texts"));
    UnifiedBatchResult r{};
    fill_tasks<CIntentResult, CPIIResult, CSecurityResult>(r, answers);
    for (size_t i = 0; i < answers.size(); ++i) {
      r.intent_results[i].probabilities = copy_array(answers[i].intent_probabilities);
      r.intent_results[i].num_probabilities = static_cast<int>(answers[i].intent_probabilities.size());
    }
    return r;
  });
}

void free_unified_batch_result(UnifiedBatchResult result) {
  if (result.batch_size <= 0) return;
  for (int i = 0; result.intent_results != nullptr && i < result.batch_size; ++i)
    std::free(result.intent_results[i].probabilities);
  free_tasks(result);
}

}  // extern "C"
