// Sequence and token classifiers: one process-wide slot per upstream model
// kind (BERT, ModernBERT, mmBERT, mmBERT-32K; intent, PII, jailbreak,
// fact-check, feedback, modality), each a semroute model loaded from a local
// directory, answering with upstream's result structs and sentinels.
#include <sys/stat.h>

#include "models.h"

using namespace candle;

namespace {

using Classifier = Slot<Model>;

// BERT family (upstream: plain BERT or LoRA-trained BERT; semroute loads both
// from their directories, merged LoRA models and PEFT adapters alike).
Classifier g_bert_classifier, g_bert_pii, g_bert_jailbreak, g_bert_token, g_candle_bert, g_candle_bert_token;
// ModernBERT family.
Classifier g_modernbert, g_modernbert_pii, g_modernbert_jailbreak, g_modernbert_token, g_fact_check, g_feedback;
// mmBERT and mmBERT-32K.
Classifier g_mmbert, g_mmbert_token, g_32k_intent, g_32k_factcheck, g_32k_jailbreak, g_32k_feedback, g_32k_pii,
    g_32k_modality;

constexpr semroute_task kSequence = SEMROUTE_TASK_SEQUENCE_CLASSIFICATION;
constexpr semroute_task kTokens = SEMROUTE_TASK_TOKEN_CLASSIFICATION;

bool init(const char* function, Classifier& slot, WhenSet when_set, const char* path, semroute_task task) noexcept {
  return init_slot(function, slot, when_set, [&] { return load_classifier(path, task); });
}

// The *_with_context inits: `limit` tokens (0: the 512-token classification
// cap); a limit beyond the model's positions fails the load.
bool init_with_context(const char* function, Classifier& slot, const char* path, semroute_task task,
                       size_t limit) noexcept {
  return init_slot(function, slot, WhenSet::kFalse, [&] {
    if (limit == 0) return load_classifier(path, task);
    const std::string dir = directory_arg(path, "model path");
    return std::make_unique<Model>(Model::load(dir, params_for(task, limit)));
  });
}

// Upstream's BERT inits refuse fewer than two classes; the count itself comes
// from the model's id2label.
bool init_bert(const char* function, Classifier& slot, WhenSet when_set, const char* path, int num_classes,
               semroute_task task) noexcept {
  if (num_classes < 2) {
    log_line(function, "num_classes must be at least 2");
    return false;
  }
  return init(function, slot, when_set, path, task);
}

// The first set slot of `slots` (upstream's LoRA-then-traditional fallbacks).
const Model& first_set(std::initializer_list<const Classifier*> slots, const char* what) {
  for (const Classifier* s : slots)
    if (s->is_set()) return *s->get();
  throw Failure(std::string(what) + " is not initialised");
}

semroute::Prediction predict(const Model& model, const char* text) { return model.classify(text_arg(text, "text")); }

ModernBertClassificationResult classify_short(const char* function, const Classifier& slot, const char* text) {
  return guarded(function, ModernBertClassificationResult{-1, 0.0f},
                 [&] { return short_result(predict(slot.require(function), text)); });
}

ModernBertClassificationResultWithProbs classify_with_probs(const char* function, const Model* model,
                                                            const char* text) {
  return guarded(function, ModernBertClassificationResultWithProbs{-1, 0.0f, nullptr, 0}, [&] {
    if (model == nullptr) throw Failure("the classifier is not initialised");
    return result_with_probs(predict(*model, text));
  });
}

// ClassificationResult's label: borrowed from the process-wide model (never
// freed, as upstream's callers never free it).
ClassificationResult classify_labelled(const char* function, const Model* model, const char* text) {
  return guarded(function, ClassificationResult{-1, 0.0f, nullptr}, [&] {
    if (model == nullptr) throw Failure("the classifier is not initialised");
    const semroute::Prediction p = predict(*model, text);
    return ClassificationResult{p.class_id, p.confidence, const_cast<char*>(semroute_model_label(model->get(), p.class_id))};
  });
}

template <class Result, class Entity>
Result entities_of(const Model& model, const char* text) {
  const auto entities = model.classify_tokens(text_arg(text, "text")).entities;
  Result r{};
  r.entities = entity_array<Entity>(entities);
  r.num_entities = static_cast<int>(entities.size());
  return r;
}

ModernBertTokenClassificationResult modernbert_tokens(const char* function, const Classifier& slot,
                                                      const char* text) {
  return guarded(function, ModernBertTokenClassificationResult{nullptr, 0}, [&] {
    return entities_of<ModernBertTokenClassificationResult, ModernBertTokenEntity>(slot.require(function), text);
  });
}

BertTokenClassificationResult bert_tokens(const char* function, std::initializer_list<const Classifier*> slots,
                                          const char* text) {
  return guarded(function, BertTokenClassificationResult{nullptr, 0}, [&] {
    return entities_of<BertTokenClassificationResult, BertTokenEntity>(first_set(slots, "the token classifier"), text);
  });
}

bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

extern "C" {

// ---- BERT sequence classifiers
bool init_classifier(const char* model_id, int num_classes, bool) {
  return init_bert("init_classifier", g_bert_classifier, WhenSet::kFalse, model_id, num_classes, kSequence);
}
bool init_generic_classifier(const char* model_id, int num_classes, bool) {
  return init_bert("init_generic_classifier", g_bert_classifier, WhenSet::kFalse, model_id, num_classes, kSequence);
}
ClassificationResult classify_text(const char* text) {
  return classify_labelled("classify_text", g_bert_classifier.get(), text);
}
ClassificationResultWithProbs classify_text_with_probabilities(const char* text) {
  const auto r = classify_with_probs("classify_text_with_probabilities", g_bert_classifier.get(), text);
  const char* label = r.class_ >= 0 ? semroute_model_label(g_bert_classifier.get()->get(), r.class_) : nullptr;
  return ClassificationResultWithProbs{r.confidence, r.class_, const_cast<char*>(label), r.probabilities,
                                       r.num_classes};
}
bool init_pii_classifier(const char* model_id, int num_classes, bool) {
  return init_bert("init_pii_classifier", g_bert_pii, WhenSet::kFalse, model_id, num_classes, kSequence);
}
ClassificationResult classify_pii_text(const char* text) {
  return classify_labelled("classify_pii_text", g_bert_pii.get(), text);
}
// Upstream answers true for an already-set LoRA model (lora_config.json)
// and false for a plain BERT one.
bool init_jailbreak_classifier(const char* model_id, int num_classes, bool) {
  const bool lora = model_id != nullptr && (is_file(std::string(model_id) + "/lora_config.json") ||
                                            is_file(std::string(model_id) + "/adapter_config.json"));
  return init_bert("init_jailbreak_classifier", g_bert_jailbreak, lora ? WhenSet::kTrue : WhenSet::kFalse, model_id,
                   num_classes, kSequence);
}
ClassificationResult classify_jailbreak_text(const char* text) {
  return classify_labelled("classify_jailbreak_text", g_bert_jailbreak.get(), text);
}
ModernBertClassificationResultWithProbs classify_jailbreak_text_with_probabilities(const char* text) {
  return classify_with_probs("classify_jailbreak_text_with_probabilities", g_bert_jailbreak.get(), text);
}
bool init_candle_bert_classifier(const char* model_path, int num_classes, bool) {
  return init_bert("init_candle_bert_classifier", g_candle_bert, WhenSet::kFalse, model_path, num_classes, kSequence);
}
ClassificationResult classify_candle_bert_text(const char* text) {
  return classify_labelled("classify_candle_bert_text", g_candle_bert.get(), text);
}
ClassificationResult classify_bert_text(const char* text) {
  return classify_labelled("classify_bert_text", g_candle_bert.get(), text);
}

// ---- BERT token classifiers
bool init_candle_bert_token_classifier(const char* model_path, int num_classes, bool) {
  return init_bert("init_candle_bert_token_classifier", g_candle_bert_token, WhenSet::kTrue, model_path, num_classes,
                   kTokens);
}
// Upstream loads and discards this model; here it serves classify_bert_pii_tokens.
bool init_bert_token_classifier(const char* model_path, int num_classes, bool) {
  return init_bert("init_bert_token_classifier", g_bert_token, WhenSet::kTrue, model_path, num_classes, kTokens);
}
BertTokenClassificationResult classify_bert_pii_tokens(const char* text, const char*) {
  return bert_tokens("classify_bert_pii_tokens", {&g_bert_token}, text);
}
BertTokenClassificationResult classify_candle_bert_tokens(const char* text) {
  return bert_tokens("classify_candle_bert_tokens", {&g_candle_bert_token, &g_modernbert_token}, text);
}
BertTokenClassificationResult classify_candle_bert_tokens_with_labels(const char* text, const char*) {
  return bert_tokens("classify_candle_bert_tokens_with_labels", {&g_candle_bert_token}, text);
}

// ---- ModernBERT
bool init_modernbert_classifier(const char* model_id, bool) {
  return init("init_modernbert_classifier", g_modernbert, WhenSet::kFalse, model_id, kSequence);
}
ModernBertClassificationResult classify_modernbert_text(const char* text) {
  return classify_short("classify_modernbert_text", g_modernbert, text);
}
ModernBertClassificationResultWithProbs classify_modernbert_text_with_probabilities(const char* text) {
  return classify_with_probs("classify_modernbert_text_with_probabilities", g_modernbert.get(), text);
}
bool init_modernbert_pii_classifier(const char* model_id, bool) {
  return init("init_modernbert_pii_classifier", g_modernbert_pii, WhenSet::kFalse, model_id, kSequence);
}
ModernBertClassificationResult classify_modernbert_pii_text(const char* text) {
  return classify_short("classify_modernbert_pii_text", g_modernbert_pii, text);
}
bool init_modernbert_jailbreak_classifier(const char* model_id, bool) {
  return init("init_modernbert_jailbreak_classifier", g_modernbert_jailbreak, WhenSet::kFalse, model_id, kSequence);
}
ModernBertClassificationResult classify_modernbert_jailbreak_text(const char* text) {
  return classify_short("classify_modernbert_jailbreak_text", g_modernbert_jailbreak, text);
}
ModernBertClassificationResultWithProbs classify_modernbert_jailbreak_text_with_probabilities(const char* text) {
  return classify_with_probs("classify_modernbert_jailbreak_text_with_probabilities", g_modernbert_jailbreak.get(),
                             text);
}
bool init_modernbert_pii_token_classifier(const char* model_id, bool) {
  return init("init_modernbert_pii_token_classifier", g_modernbert_token, WhenSet::kFalse, model_id, kTokens);
}
// Upstream reads id2label from config_path on every call and answers -1
// entities when it cannot; the model's own labels name the entities here.
ModernBertTokenClassificationResult classify_modernbert_pii_tokens(const char* text, const char* model_config_path) {
  if (model_config_path != nullptr && !is_file(model_config_path)) {
    log_line("classify_modernbert_pii_tokens", std::string("cannot read ") + model_config_path);
    return {nullptr, -1};
  }
  return modernbert_tokens("classify_modernbert_pii_tokens", g_modernbert_token, text);
}
bool init_fact_check_classifier(const char* model_id, bool) {
  return init("init_fact_check_classifier", g_fact_check, WhenSet::kTrue, model_id, kSequence);
}
ModernBertClassificationResult classify_fact_check_text(const char* text) {
  return classify_short("classify_fact_check_text", g_fact_check, text);
}
bool init_feedback_detector(const char* model_id, bool) {
  return init("init_feedback_detector", g_feedback, WhenSet::kTrue, model_id, kSequence);
}
ModernBertClassificationResult classify_feedback_text(const char* text) {
  return classify_short("classify_feedback_text", g_feedback, text);
}

// ---- mmBERT (no upstream classify_* reads these two slots)
bool init_mmbert_classifier(const char* model_id, bool) {
  return init("init_mmbert_classifier", g_mmbert, WhenSet::kFalse, model_id, kSequence);
}
bool init_mmbert_classifier_auto(const char* model_id, bool) {
  return init("init_mmbert_classifier_auto", g_mmbert, WhenSet::kFalse, model_id, kSequence);
}
bool init_mmbert_token_classifier(const char* model_id, bool) {
  return init("init_mmbert_token_classifier", g_mmbert_token, WhenSet::kFalse, model_id, kTokens);
}
bool is_mmbert_model(const char* config_path) { return is_mmbert_config(config_path, false); }
bool is_mmbert_32k_model(const char* config_path) { return is_mmbert_config(config_path, true); }

// ---- mmBERT-32K (the router's defaults)
bool init_mmbert_32k_intent_classifier(const char* model_id, bool) {
  return init("init_mmbert_32k_intent_classifier", g_32k_intent, WhenSet::kFalse, model_id, kSequence);
}
ModernBertClassificationResult classify_mmbert_32k_intent(const char* text) {
  return classify_short("classify_mmbert_32k_intent", g_32k_intent, text);
}
bool init_mmbert_32k_factcheck_classifier(const char* model_id, bool) {
  return init("init_mmbert_32k_factcheck_classifier", g_32k_factcheck, WhenSet::kFalse, model_id, kSequence);
}
ModernBertClassificationResult classify_mmbert_32k_factcheck(const char* text) {
  return classify_short("classify_mmbert_32k_factcheck", g_32k_factcheck, text);
}
bool init_mmbert_32k_jailbreak_classifier(const char* model_id, bool) {
  return init("init_mmbert_32k_jailbreak_classifier", g_32k_jailbreak, WhenSet::kFalse, model_id, kSequence);
}
ModernBertClassificationResult classify_mmbert_32k_jailbreak(const char* text) {
  return classify_short("classify_mmbert_32k_jailbreak", g_32k_jailbreak, text);
}
ModernBertClassificationResultWithProbs classify_mmbert_32k_jailbreak_with_probabilities(const char* text) {
  return classify_with_probs("classify_mmbert_32k_jailbreak_with_probabilities", g_32k_jailbreak.get(), text);
}
bool init_mmbert_32k_feedback_classifier(const char* model_id, bool) {
  return init("init_mmbert_32k_feedback_classifier", g_32k_feedback, WhenSet::kFalse, model_id, kSequence);
}
ModernBertClassificationResult classify_mmbert_32k_feedback(const char* text) {
  return classify_short("classify_mmbert_32k_feedback", g_32k_feedback, text);
}
bool init_mmbert_32k_pii_classifier(const char* model_id, bool) {
  return init("init_mmbert_32k_pii_classifier", g_32k_pii, WhenSet::kFalse, model_id, kTokens);
}
ModernBertTokenClassificationResult classify_mmbert_32k_pii_tokens(const char* text) {
  return modernbert_tokens("classify_mmbert_32k_pii_tokens", g_32k_pii, text);
}
bool init_mmbert_32k_modality_classifier(const char* model_id, bool) {
  return init("init_mmbert_32k_modality_classifier", g_32k_modality, WhenSet::kFalse, model_id, kSequence);
}
ModernBertClassificationResult classify_mmbert_32k_modality(const char* text) {
  return classify_short("classify_mmbert_32k_modality", g_32k_modality, text);
}

// ---- added after the 2026-08-22 snapshot
ModernBertClassificationResultWithProbs classify_feedback_text_with_probabilities(const char* text) {
  return classify_with_probs("classify_feedback_text_with_probabilities", g_feedback.get(), text);
}
ModernBertClassificationResultWithProbs classify_mmbert_32k_feedback_with_probabilities(const char* text) {
  return classify_with_probs("classify_mmbert_32k_feedback_with_probabilities", g_32k_feedback.get(), text);
}
bool init_mmbert_32k_intent_classifier_with_context(const char* model_id, bool, size_t limit) {
  return init_with_context("init_mmbert_32k_intent_classifier_with_context", g_32k_intent, model_id, kSequence, limit);
}
bool init_mmbert_32k_factcheck_classifier_with_context(const char* model_id, bool, size_t limit) {
  return init_with_context("init_mmbert_32k_factcheck_classifier_with_context", g_32k_factcheck, model_id, kSequence,
                           limit);
}
bool init_mmbert_32k_jailbreak_classifier_with_context(const char* model_id, bool, size_t limit) {
  return init_with_context("init_mmbert_32k_jailbreak_classifier_with_context", g_32k_jailbreak, model_id, kSequence,
                           limit);
}
bool init_mmbert_32k_feedback_classifier_with_context(const char* model_id, bool, size_t limit) {
  return init_with_context("init_mmbert_32k_feedback_classifier_with_context", g_32k_feedback, model_id, kSequence,
                           limit);
}
bool init_mmbert_32k_pii_classifier_with_context(const char* model_id, bool, size_t limit) {
  return init_with_context("init_mmbert_32k_pii_classifier_with_context", g_32k_pii, model_id, kTokens, limit);
}
bool init_mmbert_32k_modality_classifier_with_context(const char* model_id, bool, size_t limit) {
  return init_with_context("init_mmbert_32k_modality_classifier_with_context", g_32k_modality, model_id, kSequence,
                           limit);
}

// ---- frees of these results
void free_probabilities(float* probabilities, int) { std::free(probabilities); }
void free_modernbert_probabilities(float* probabilities, int) { std::free(probabilities); }
void free_modernbert_token_result(ModernBertTokenClassificationResult result) {
  free_entity_array(result.entities, result.num_entities);
}
void free_bert_token_classification_result(BertTokenClassificationResult result) {
  free_entity_array(result.entities, result.num_entities);
}

}  // extern "C"
