/* The 149 legacy functions of the vLLM Semantic Router's native library
 * (libcandle_semantic_router.so): the 138 of its 2026-08-22 snapshot and the
 * 11 added since (the last section), with the prototypes its Go code declares
 * (where the Go declaration and the original definition disagree, the Go
 * side's). semroute's drop-in defines every one; tests/compat checks that
 * the library exports exactly these names. */
#ifndef SEMROUTE_CANDLE_API_H
#define SEMROUTE_CANDLE_API_H

#include "candle_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- sequence and token classification */
bool init_generic_classifier(const char* model_id, int num_classes, bool use_cpu);
ClassificationResult classify_text(const char* text);
ClassificationResultWithProbs classify_text_with_probabilities(const char* text);
ClassificationResult classify_pii_text(const char* text);
ClassificationResult classify_jailbreak_text(const char* text);
ModernBertClassificationResultWithProbs classify_jailbreak_text_with_probabilities(const char* text);
UnifiedBatchResult classify_unified_batch(const char** texts, int num_texts);
BertTokenClassificationResult classify_bert_pii_tokens(const char* text, const char* id2label_json);
BertTokenClassificationResult classify_candle_bert_tokens_with_labels(const char* text, const char* id2label_json);
BertTokenClassificationResult classify_candle_bert_tokens(const char* text);
ClassificationResult classify_candle_bert_text(const char* text);
ClassificationResult classify_bert_text(const char* text);
LoRABatchResult classify_batch_with_lora(const char** texts, int num_texts);
ModernBertClassificationResult classify_modernbert_text(const char* text);
ModernBertClassificationResultWithProbs classify_modernbert_text_with_probabilities(const char* text);
ModernBertClassificationResult classify_modernbert_pii_text(const char* text);
ModernBertClassificationResult classify_modernbert_jailbreak_text(const char* text);
ModernBertClassificationResultWithProbs classify_modernbert_jailbreak_text_with_probabilities(const char* text);
ClassificationResult classify_deberta_jailbreak_text(const char* text);
ModernBertClassificationResult classify_fact_check_text(const char* text);
ModernBertClassificationResult classify_feedback_text(const char* text);
ModernBertTokenClassificationResult classify_modernbert_pii_tokens(const char* text, const char* model_config_path);
HallucinationDetectionResult detect_hallucinations(const char* context, const char* question, const char* answer,
                                                   float threshold);
NLIResult classify_nli(const char* premise, const char* hypothesis);
EnhancedHallucinationDetectionResult detect_hallucinations_with_nli(const char* context, const char* question,
                                                                    const char* answer, float threshold);
ModernBertClassificationResult classify_mmbert_32k_intent(const char* text);
ModernBertClassificationResult classify_mmbert_32k_factcheck(const char* text);
ModernBertClassificationResult classify_mmbert_32k_jailbreak(const char* text);
ModernBertClassificationResultWithProbs classify_mmbert_32k_jailbreak_with_probabilities(const char* text);
ModernBertClassificationResult classify_mmbert_32k_feedback(const char* text);
ModernBertTokenClassificationResult classify_mmbert_32k_pii_tokens(const char* text);
ModernBertClassificationResult classify_mmbert_32k_modality(const char* text);

/* ---- embeddings */
bool init_mmbert_embedding_model(const char* model_path, bool use_cpu);
bool init_embedding_models_with_mmbert(const char* qwen3_model_path, const char* gemma_model_path,
                                       const char* mmbert_model_path, bool use_cpu);
bool init_embedding_models(const char* qwen3_model_path, const char* gemma_model_path, bool use_cpu);
int get_embedding_smart(const char* text, float quality_priority, float latency_priority, EmbeddingResult* result);
int get_embedding_with_dim(const char* text, float quality_priority, float latency_priority, int target_dim,
                           EmbeddingResult* result);
int get_embedding_with_model_type(const char* text, const char* model_type, int target_dim, EmbeddingResult* result);
int get_embedding_2d_matryoshka(const char* text, const char* model_type, int target_layer, int target_dim,
                                EmbeddingResult* result);
int calculate_embedding_similarity(const char* text1, const char* text2, const char* model_type, int target_dim,
                                   EmbeddingSimilarityResult* result);
int calculate_similarity_batch(const char* query, const char** candidates, int num_candidates, int top_k,
                               const char* model_type, int target_dim, BatchSimilarityResult* result);
void free_batch_similarity_result(BatchSimilarityResult* result);
int get_embedding_models_info(EmbeddingModelsInfoResult* result);
void free_embedding_models_info(EmbeddingModelsInfoResult* result);
bool init_embedding_models_batched(const char* qwen3_model_path, int max_batch_size, unsigned long long max_wait_ms,
                                   bool use_cpu);
int get_embedding_batched(const char* text, const char* model_type, int target_dim, EmbeddingResult* result);
bool init_multimodal_embedding_model(const char* model_path, bool use_cpu);
int multimodal_encode_text(const char* text, int target_dim, MultiModalEmbeddingResult* result);
int multimodal_encode_image_from_bytes(const unsigned char* bytes_ptr, size_t bytes_len, int target_dim,
                                       MultiModalEmbeddingResult* result);
int multimodal_encode_image(const float* pixel_data, int height, int width, int target_dim,
                            MultiModalEmbeddingResult* result);
int multimodal_encode_audio(const float* mel_data, int n_mels, int time_frames, int target_dim,
                            MultiModalEmbeddingResult* result);
void free_multimodal_embedding(float* data, int length);
void shutdown_embedding_batched(void);

/* ---- Qwen3 generative classifier and guard */
void free_generative_classification_result(GenerativeClassificationResult* result);
void free_categories(char** categories, int num_categories);
int init_qwen3_multi_lora_classifier(const char* base_model_path);
int load_qwen3_lora_adapter(const char* adapter_name, const char* adapter_path);
int classify_with_qwen3_adapter(const char* text, const char* adapter_name, GenerativeClassificationResult* result);
int get_qwen3_loaded_adapters(char*** adapters_out, int* num_adapters);
int classify_zero_shot_qwen3(const char* text, const char** categories, int num_categories,
                             GenerativeClassificationResult* result);
int is_qwen3_multi_lora_initialized(void);
void free_guard_result(GuardResult* result);
int init_qwen3_guard(const char* model_path);
int classify_with_qwen3_guard(const char* text, const char* mode, GuardResult* result);
int is_qwen3_guard_initialized(void);

/* ---- model slots */
bool init_similarity_model(const char* model_id, bool use_cpu);
bool is_similarity_model_initialized(void);
bool init_classifier(const char* model_id, int num_classes, bool use_cpu);
bool init_pii_classifier(const char* model_id, int num_classes, bool use_cpu);
bool init_jailbreak_classifier(const char* model_id, int num_classes, bool use_cpu);
bool init_modernbert_classifier(const char* model_id, bool use_cpu);
bool init_modernbert_pii_classifier(const char* model_id, bool use_cpu);
bool init_modernbert_pii_token_classifier(const char* model_id, bool use_cpu);
bool init_modernbert_jailbreak_classifier(const char* model_id, bool use_cpu);
bool init_mmbert_classifier(const char* model_id, bool use_cpu);
bool init_mmbert_classifier_auto(const char* model_id, bool use_cpu);
bool init_mmbert_token_classifier(const char* model_id, bool use_cpu);
bool is_mmbert_model(const char* config_path);
bool init_mmbert_32k_intent_classifier(const char* model_id, bool use_cpu);
bool init_mmbert_32k_factcheck_classifier(const char* model_id, bool use_cpu);
bool init_mmbert_32k_jailbreak_classifier(const char* model_id, bool use_cpu);
bool init_mmbert_32k_feedback_classifier(const char* model_id, bool use_cpu);
bool init_mmbert_32k_pii_classifier(const char* model_id, bool use_cpu);
bool init_mmbert_32k_modality_classifier(const char* model_id, bool use_cpu);
bool is_mmbert_32k_model(const char* config_path);
bool init_fact_check_classifier(const char* model_id, bool use_cpu);
bool init_feedback_detector(const char* model_id, bool use_cpu);
bool init_deberta_jailbreak_classifier(const char* model_id, bool use_cpu);
bool init_unified_classifier_c(const char* modernbert_path, const char* intent_head_path, const char* pii_head_path,
                               const char* security_head_path, const char** intent_labels, int intent_labels_count,
                               const char** pii_labels, int pii_labels_count, const char** security_labels,
                               int security_labels_count, bool use_cpu);
bool init_bert_token_classifier(const char* model_path, int num_classes, bool use_cpu);
bool init_candle_bert_classifier(const char* model_path, int num_classes, bool use_cpu);
bool init_candle_bert_token_classifier(const char* model_path, int num_classes, bool use_cpu);
bool init_lora_unified_classifier(const char* intent_model_path, const char* pii_model_path,
                                  const char* security_model_path, const char* architecture, bool use_cpu);
bool init_hallucination_model(const char* model_path, bool use_cpu);
bool init_nli_model(const char* model_path, bool use_cpu);
bool is_nli_model_initialized(void);

/* ---- frees */
void free_tokenization_result(TokenizationResult result);
void free_cstring(char* s);
void free_embedding(float* data, int length);
void free_probabilities(float* probabilities, int num_classes);
void free_unified_batch_result(UnifiedBatchResult result);
void free_bert_token_classification_result(BertTokenClassificationResult result);
void free_lora_batch_result(LoRABatchResult result);
void free_modernbert_probabilities(float* probabilities, int num_classes);
void free_modernbert_token_result(ModernBertTokenClassificationResult result);
void free_c_string_array(char** array, int length);
void free_c_int_array(int* array, int length);
void free_c_float_array(float* array, int length);
void free_hallucination_detection_result(HallucinationDetectionResult result);
void free_nli_result(NLIResult result);
void free_enhanced_hallucination_detection_result(EnhancedHallucinationDetectionResult result);

/* ---- allocation bookkeeping */
uint8_t* safe_alloc_traditional(size_t size);
uint8_t* safe_alloc_lora(size_t size);
bool safe_free(uint8_t* ptr);
bool get_memory_safety_status(void);
size_t get_lora_memory_usage(void);
void cleanup_dual_path_memory(void);

/* ---- MLP model selector (handles are opaque) */
void* candle_mlp_new(void);
void* candle_mlp_new_with_device(int device_type);
void* candle_mlp_new_with_device_and_dtype(int device_type, int dtype);
void candle_mlp_free(void* handle);
char* candle_mlp_select(void* handle, double* query, size_t query_len);
int candle_mlp_is_trained(void* handle);
char* candle_mlp_to_json(void* handle);
void* candle_mlp_from_json(char* json);
void* candle_mlp_from_json_with_device(char* json, int device_type);
void* candle_mlp_from_json_with_device_and_dtype(char* json, int device_type, int dtype);
void candle_mlp_free_string(char* ptr);

/* ---- BERT similarity model */
EmbeddingResult get_text_embedding(const char* text, int max_length);
float calculate_similarity(const char* text1, const char* text2, int max_length);
SimilarityResult find_most_similar(const char* query, const char** candidates, int num_candidates, int max_length);
TokenizationResult tokenize_text(const char* text, int max_length);

/* ---- input validation */
ValidationResult validate_text_input(const char* text, int path_type);
ValidationResult validate_batch_input(const char** texts, int texts_count, int path_type);
ValidationResult validate_model_path(const char* model_path, int path_type);
ValidationResult validate_confidence_threshold(float confidence, int path_type);
ValidationResult validate_memory_parameters(size_t size, size_t alignment);
void free_validation_result(ValidationResult result);

/* ---- added after the 2026-08-22 snapshot */
int embedding_text_exceeds_window(const char* text, const char* model_type);
TextWindowsResult get_text_windows(const char* text, int max_length);
void free_text_windows(TextWindowsResult result);
ModernBertClassificationResultWithProbs classify_feedback_text_with_probabilities(const char* text);
ModernBertClassificationResultWithProbs classify_mmbert_32k_feedback_with_probabilities(const char* text);
bool init_mmbert_32k_intent_classifier_with_context(const char* model_id, bool use_cpu, size_t limit);
bool init_mmbert_32k_factcheck_classifier_with_context(const char* model_id, bool use_cpu, size_t limit);
bool init_mmbert_32k_jailbreak_classifier_with_context(const char* model_id, bool use_cpu, size_t limit);
bool init_mmbert_32k_feedback_classifier_with_context(const char* model_id, bool use_cpu, size_t limit);
bool init_mmbert_32k_pii_classifier_with_context(const char* model_id, bool use_cpu, size_t limit);
bool init_mmbert_32k_modality_classifier_with_context(const char* model_id, bool use_cpu, size_t limit);

#ifdef __cplusplus
}
#endif

#endif /* SEMROUTE_CANDLE_API_H */
