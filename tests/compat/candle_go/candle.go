// Package candlecompat calls libcandle_semantic_router.so, semroute's
// drop-in for the vLLM Semantic Router's native library, exactly as the
// router's Go code does: its cgo preamble declares the library's C types and
// prototypes as the router declares them and links with the router's flags
// (-lcandle_semantic_router -ldl -lm; the directory comes from CGO_LDFLAGS).
// The tests compare every answer with semroute's own Go package.
package candlecompat

/*
#cgo LDFLAGS: -lcandle_semantic_router -ldl -lm
#include <stdlib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// ---- sequence classification ----
typedef struct { int class; float confidence; char* label; } ClassificationResult;
// confidence comes first here, unlike ClassificationResult.
typedef struct { float confidence; int class; char* label; float* probabilities; int num_classes; } ClassificationResultWithProbs;
typedef struct { int class; float confidence; } ModernBertClassificationResult;
typedef struct { int class; float confidence; float* probabilities; int num_classes; } ModernBertClassificationResultWithProbs;

// ---- token classification (two identical layouts) ----
typedef struct { char* entity_type; int start; int end; char* text; float confidence; } ModernBertTokenEntity;
typedef struct { ModernBertTokenEntity* entities; int num_entities; } ModernBertTokenClassificationResult;
typedef struct { char* entity_type; int start; int end; char* text; float confidence; } BertTokenEntity;
typedef struct { BertTokenEntity* entities; int num_entities; } BertTokenClassificationResult;

// ---- BERT similarity model ----
typedef struct { int index; float score; } SimilarityResult;
typedef struct { int* token_ids; int token_count; char** tokens; bool error; } TokenizationResult;

// ---- embeddings ----
// model_type: 0 qwen3, 1 gemma, 2 mmbert, 3 multimodal, -1 BERT similarity / error.
typedef struct { float* data; int length; bool error; int model_type; int sequence_length; float processing_time_ms; } EmbeddingResult;
typedef struct { float similarity; int model_type; float processing_time_ms; bool error; } EmbeddingSimilarityResult;
typedef struct { int index; float similarity; } SimilarityMatch;
typedef struct { SimilarityMatch* matches; int num_matches; int model_type; float processing_time_ms; bool error; } BatchSimilarityResult;
typedef struct { char* model_name; bool is_loaded; int max_sequence_length; int default_dimension; char* model_path; } EmbeddingModelInfo;
typedef struct { EmbeddingModelInfo* models; int num_models; bool error; } EmbeddingModelsInfoResult;
// modality: 0 text, 1 image, 2 audio, -1 error.
typedef struct { float* data; int length; bool error; int modality; float processing_time_ms; } MultiModalEmbeddingResult;

// ---- hallucination / NLI ----
typedef enum { NLI_ENTAILMENT = 0, NLI_NEUTRAL = 1, NLI_CONTRADICTION = 2, NLI_ERROR = -1 } NLILabel;
typedef struct { char* text; int start; int end; float confidence; char* label; } HallucinationSpan;
typedef struct { bool has_hallucination; float confidence; HallucinationSpan* spans; int num_spans; bool error; char* error_message; } HallucinationDetectionResult;
typedef struct { NLILabel label; float confidence; float entailment_prob; float neutral_prob; float contradiction_prob; bool error; char* error_message; } NLIResult;
typedef struct { char* text; int start; int end; float hallucination_confidence; NLILabel nli_label; float nli_confidence; int severity; char* explanation; } EnhancedHallucinationSpan;
typedef struct { bool has_hallucination; float confidence; EnhancedHallucinationSpan* spans; int num_spans; bool error; char* error_message; } EnhancedHallucinationDetectionResult;

// ---- LoRA parallel engine ----
typedef struct { char* category; float confidence; } LoRAIntentResult;
typedef struct { bool has_pii; char** pii_types; int num_pii_types; float confidence; } LoRAPIIResult;
typedef struct { bool is_jailbreak; char* threat_type; float confidence; } LoRASecurityResult;
typedef struct { LoRAIntentResult* intent_results; LoRAPIIResult* pii_results; LoRASecurityResult* security_results; int batch_size; float avg_confidence; } LoRABatchResult;

// ---- the unified classifier the router calls through its own cgo ----
typedef struct { char* category; float confidence; float* probabilities; int num_probabilities; } CIntentResult;
typedef struct { bool has_pii; char** pii_types; int num_pii_types; float confidence; } CPIIResult;
typedef struct { bool is_jailbreak; char* threat_type; float confidence; } CSecurityResult;
typedef struct { CIntentResult* intent_results; CPIIResult* pii_results; CSecurityResult* security_results; int batch_size; bool error; char* error_message; } UnifiedBatchResult;

// ---- generative classifiers (not used by the router) ----
typedef struct { int class_id; float confidence; char* category_name; float* probabilities; int num_categories; bool error; char* error_message; } GenerativeClassificationResult;
typedef struct { char* raw_output; bool error; char* error_message; } GuardResult;

// ---- input validation helpers ----
typedef struct { bool is_valid; int error_code; char* error_message; char* suggestions; } ValidationResult;

// ---- sequence and token classification
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
ModernBertClassificationResultWithProbs classify_feedback_text_with_probabilities(const char* text);
ModernBertClassificationResultWithProbs classify_mmbert_32k_feedback_with_probabilities(const char* text);
ModernBertClassificationResult classify_mmbert_32k_feedback(const char* text);
ModernBertTokenClassificationResult classify_mmbert_32k_pii_tokens(const char* text);
ModernBertClassificationResult classify_mmbert_32k_modality(const char* text);

// ---- embeddings
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

// ---- Qwen3 generative classifier and guard
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

// ---- model slots
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

// ---- frees
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

// ---- allocation bookkeeping
uint8_t* safe_alloc_traditional(size_t size);
uint8_t* safe_alloc_lora(size_t size);
bool safe_free(uint8_t* ptr);
bool get_memory_safety_status(void);
size_t get_lora_memory_usage(void);
void cleanup_dual_path_memory(void);

// ---- MLP model selector (handles are opaque)
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

// ---- BERT similarity model
EmbeddingResult get_text_embedding(const char* text, int max_length);
float calculate_similarity(const char* text1, const char* text2, int max_length);
SimilarityResult find_most_similar(const char* query, const char** candidates, int num_candidates, int max_length);
TokenizationResult tokenize_text(const char* text, int max_length);

// ---- input validation
ValidationResult validate_text_input(const char* text, int path_type);
ValidationResult validate_batch_input(const char** texts, int texts_count, int path_type);
ValidationResult validate_model_path(const char* model_path, int path_type);
ValidationResult validate_confidence_threshold(float confidence, int path_type);
ValidationResult validate_memory_parameters(size_t size, size_t alignment);
void free_validation_result(ValidationResult result);

*/
import "C"

import (
	"unsafe"
)

// Class is a sequence classification as the router reads it.
type Class struct {
	Class      int
	Confidence float32
	Probs      []float32
	Label      string
}

// Entity is a token-classifier entity.
type Entity struct {
	Type       string
	Start, End int
	Text       string
	Confidence float32
}

// Embedding is an EmbeddingResult copied out.
type Embedding struct {
	Values         []float32
	ModelType      int
	SequenceLength int
}

func cstr(s string) *C.char { return C.CString(s) }

func free(p *C.char) { C.free(unsafe.Pointer(p)) }

// cText passes a Go string as the router does (C.CString), or NULL for nil.
func withText(text *string, fn func(*C.char)) {
	if text == nil {
		fn(nil)
		return
	}
	p := cstr(*text)
	defer free(p)
	fn(p)
}

func floats(p *C.float, n C.int) []float32 {
	if p == nil || n <= 0 {
		return nil
	}
	return append([]float32(nil), unsafe.Slice((*float32)(unsafe.Pointer(p)), int(n))...)
}

// InitPath calls one of the `bool init_*(const char*, bool)` functions.
func InitPath(name, path string) bool {
	p := cstr(path)
	defer free(p)
	switch name {
	case "init_modernbert_classifier":
		return bool(C.init_modernbert_classifier(p, true))
	case "init_modernbert_jailbreak_classifier":
		return bool(C.init_modernbert_jailbreak_classifier(p, true))
	case "init_modernbert_pii_classifier":
		return bool(C.init_modernbert_pii_classifier(p, true))
	case "init_modernbert_pii_token_classifier":
		return bool(C.init_modernbert_pii_token_classifier(p, true))
	case "init_fact_check_classifier":
		return bool(C.init_fact_check_classifier(p, true))
	case "init_feedback_detector":
		return bool(C.init_feedback_detector(p, true))
	case "init_mmbert_32k_intent_classifier":
		return bool(C.init_mmbert_32k_intent_classifier(p, false))
	case "init_mmbert_32k_factcheck_classifier":
		return bool(C.init_mmbert_32k_factcheck_classifier(p, false))
	case "init_mmbert_32k_jailbreak_classifier":
		return bool(C.init_mmbert_32k_jailbreak_classifier(p, false))
	case "init_mmbert_32k_feedback_classifier":
		return bool(C.init_mmbert_32k_feedback_classifier(p, false))
	case "init_mmbert_32k_modality_classifier":
		return bool(C.init_mmbert_32k_modality_classifier(p, false))
	case "init_mmbert_32k_pii_classifier":
		return bool(C.init_mmbert_32k_pii_classifier(p, false))
	case "init_hallucination_model":
		return bool(C.init_hallucination_model(p, true))
	case "init_nli_model":
		return bool(C.init_nli_model(p, true))
	case "init_similarity_model":
		return bool(C.init_similarity_model(p, true))
	case "init_multimodal_embedding_model":
		return bool(C.init_multimodal_embedding_model(p, true))
	case "init_deberta_jailbreak_classifier":
		return bool(C.init_deberta_jailbreak_classifier(p, true))
	case "init_generic_classifier":
		return bool(C.init_generic_classifier(p, 2, true))
	case "init_candle_bert_token_classifier":
		return bool(C.init_candle_bert_token_classifier(p, 2, true))
	}
	panic("unknown init " + name)
}

// Classify calls one of the single-text sequence classifiers.
func Classify(name string, text *string) (c Class) {
	withText(text, func(p *C.char) {
		var r C.ModernBertClassificationResult
		switch name {
		case "classify_modernbert_text":
			r = C.classify_modernbert_text(p)
		case "classify_modernbert_pii_text":
			r = C.classify_modernbert_pii_text(p)
		case "classify_modernbert_jailbreak_text":
			r = C.classify_modernbert_jailbreak_text(p)
		case "classify_fact_check_text":
			r = C.classify_fact_check_text(p)
		case "classify_feedback_text":
			r = C.classify_feedback_text(p)
		case "classify_mmbert_32k_intent":
			r = C.classify_mmbert_32k_intent(p)
		case "classify_mmbert_32k_factcheck":
			r = C.classify_mmbert_32k_factcheck(p)
		case "classify_mmbert_32k_jailbreak":
			r = C.classify_mmbert_32k_jailbreak(p)
		case "classify_mmbert_32k_feedback":
			r = C.classify_mmbert_32k_feedback(p)
		case "classify_mmbert_32k_modality":
			r = C.classify_mmbert_32k_modality(p)
		default:
			panic("unknown classifier " + name)
		}
		c = Class{Class: int(r.class), Confidence: float32(r.confidence)}
	})
	return c
}

// ClassifyWithProbs calls one of the *_with_probabilities functions and frees
// the probabilities as the router does.
func ClassifyWithProbs(name string, text *string) (c Class) {
	withText(text, func(p *C.char) {
		var r C.ModernBertClassificationResultWithProbs
		switch name {
		case "classify_modernbert_text_with_probabilities":
			r = C.classify_modernbert_text_with_probabilities(p)
		case "classify_modernbert_jailbreak_text_with_probabilities":
			r = C.classify_modernbert_jailbreak_text_with_probabilities(p)
		case "classify_mmbert_32k_jailbreak_with_probabilities":
			r = C.classify_mmbert_32k_jailbreak_with_probabilities(p)
		case "classify_jailbreak_text_with_probabilities":
			r = C.classify_jailbreak_text_with_probabilities(p)
		case "classify_feedback_text_with_probabilities":
			r = C.classify_feedback_text_with_probabilities(p)
		case "classify_mmbert_32k_feedback_with_probabilities":
			r = C.classify_mmbert_32k_feedback_with_probabilities(p)
		default:
			panic("unknown classifier " + name)
		}
		c = Class{Class: int(r.class), Confidence: float32(r.confidence), Probs: floats(r.probabilities, r.num_classes)}
		C.free_modernbert_probabilities(r.probabilities, r.num_classes)
	})
	return c
}

// GenericWithProbs calls classify_text_with_probabilities (confidence first).
func GenericWithProbs(text string) Class {
	p := cstr(text)
	defer free(p)
	r := C.classify_text_with_probabilities(p)
	c := Class{Class: int(r.class), Confidence: float32(r.confidence), Probs: floats(r.probabilities, r.num_classes)}
	if r.label != nil {
		c.Label = C.GoString(r.label)
	}
	C.free_probabilities(r.probabilities, r.num_classes)
	return c
}

func entitiesOf(p unsafe.Pointer, n C.int) []Entity {
	if p == nil || n <= 0 {
		return nil
	}
	items := unsafe.Slice((*C.ModernBertTokenEntity)(p), int(n))
	out := make([]Entity, len(items))
	for i, e := range items {
		out[i] = Entity{C.GoString(e.entity_type), int(e.start), int(e.end), C.GoString(e.text), float32(e.confidence)}
	}
	return out
}

// PIITokens calls classify_mmbert_32k_pii_tokens; n is num_entities.
func PIITokens(text *string) (out []Entity, n int) {
	withText(text, func(p *C.char) {
		r := C.classify_mmbert_32k_pii_tokens(p)
		out, n = entitiesOf(unsafe.Pointer(r.entities), r.num_entities), int(r.num_entities)
		C.free_modernbert_token_result(r)
	})
	return
}

// CandleBertTokens calls classify_candle_bert_tokens (the router's PII fallback chain).
func CandleBertTokens(text string) ([]Entity, int) {
	p := cstr(text)
	defer free(p)
	r := C.classify_candle_bert_tokens(p)
	defer C.free_bert_token_classification_result(r)
	return entitiesOf(unsafe.Pointer(r.entities), r.num_entities), int(r.num_entities)
}

// ModernBertPIITokens calls classify_modernbert_pii_tokens with a config path.
func ModernBertPIITokens(text, config string) ([]Entity, int) {
	p, c := cstr(text), cstr(config)
	defer free(p)
	defer free(c)
	r := C.classify_modernbert_pii_tokens(p, c)
	defer C.free_modernbert_token_result(r)
	return entitiesOf(unsafe.Pointer(r.entities), r.num_entities), int(r.num_entities)
}

// InitEmbeddingModels calls init_embedding_models_with_mmbert.
func InitEmbeddingModels(qwen3, gemma, mmbert string) bool {
	q, g, m := cstr(qwen3), cstr(gemma), cstr(mmbert)
	defer free(q)
	defer free(g)
	defer free(m)
	return bool(C.init_embedding_models_with_mmbert(q, g, m, true))
}

func embeddingOf(r *C.EmbeddingResult) (Embedding, bool) {
	e := Embedding{floats(r.data, r.length), int(r.model_type), int(r.sequence_length)}
	failed := bool(r.error)
	C.free_embedding(r.data, r.length)
	return e, failed
}

// Embed2D calls get_embedding_2d_matryoshka; rc is its return code.
func Embed2D(text, modelType string, layer, dim int) (e Embedding, rc int, failed bool) {
	t, m := cstr(text), cstr(modelType)
	defer free(t)
	defer free(m)
	var r C.EmbeddingResult
	rc = int(C.get_embedding_2d_matryoshka(t, m, C.int(layer), C.int(dim), &r))
	e, failed = embeddingOf(&r)
	return
}

// EmbedWithDim calls get_embedding_with_dim (the auto-routed embedding).
func EmbedWithDim(text string, quality, latency float32, dim int) (Embedding, int) {
	t := cstr(text)
	defer free(t)
	var r C.EmbeddingResult
	rc := int(C.get_embedding_with_dim(t, C.float(quality), C.float(latency), C.int(dim), &r))
	e, _ := embeddingOf(&r)
	return e, rc
}

// EmbedBatched calls get_embedding_batched.
func EmbedBatched(text string, dim int) (Embedding, int) {
	t, m := cstr(text), cstr("qwen3")
	defer free(t)
	defer free(m)
	var r C.EmbeddingResult
	rc := int(C.get_embedding_batched(t, m, C.int(dim), &r))
	e, _ := embeddingOf(&r)
	return e, rc
}

// InitBatched calls init_embedding_models_batched.
func InitBatched(path string, maxBatch int, waitMs uint64) bool {
	p := cstr(path)
	defer free(p)
	return bool(C.init_embedding_models_batched(p, C.int(maxBatch), C.ulonglong(waitMs), true))
}

func cStrings(texts []string) (**C.char, func()) {
	arr := C.malloc(C.size_t(len(texts)+1) * C.size_t(unsafe.Sizeof(uintptr(0))))
	items := unsafe.Slice((**C.char)(arr), len(texts)+1)
	for i, t := range texts {
		items[i] = cstr(t)
	}
	return (**C.char)(arr), func() {
		for i := range texts {
			free(items[i])
		}
		C.free(arr)
	}
}

// Match is a BatchSimilarityResult entry.
type Match struct {
	Index      int
	Similarity float32
}

// SimilarityBatch calls calculate_similarity_batch.
func SimilarityBatch(query string, candidates []string, topK int, modelType string) ([]Match, int, int) {
	q, m := cstr(query), cstr(modelType)
	defer free(q)
	defer free(m)
	arr, release := cStrings(candidates)
	defer release()
	var r C.BatchSimilarityResult
	rc := int(C.calculate_similarity_batch(q, arr, C.int(len(candidates)), C.int(topK), m, 0, &r))
	var out []Match
	if r.matches != nil {
		for _, x := range unsafe.Slice(r.matches, int(r.num_matches)) {
			out = append(out, Match{int(x.index), float32(x.similarity)})
		}
	}
	modelType2 := int(r.model_type)
	C.free_batch_similarity_result(&r)
	return out, modelType2, rc
}

// EmbeddingSimilarity calls calculate_embedding_similarity.
func EmbeddingSimilarity(a, b, modelType string) (float32, int) {
	x, y, m := cstr(a), cstr(b), cstr(modelType)
	defer free(x)
	defer free(y)
	defer free(m)
	var r C.EmbeddingSimilarityResult
	rc := int(C.calculate_embedding_similarity(x, y, m, 0, &r))
	return float32(r.similarity), rc
}

// ModelsInfo calls get_embedding_models_info: name -> (loaded, dimension).
func ModelsInfo() (map[string][2]int, int) {
	var r C.EmbeddingModelsInfoResult
	rc := int(C.get_embedding_models_info(&r))
	out := map[string][2]int{}
	if r.models != nil {
		for _, m := range unsafe.Slice(r.models, int(r.num_models)) {
			loaded := 0
			if m.is_loaded {
				loaded = 1
			}
			out[C.GoString(m.model_name)] = [2]int{loaded, int(m.default_dimension)}
		}
	}
	C.free_embedding_models_info(&r)
	return out, rc
}

// TextEmbedding calls get_text_embedding (the BERT similarity model).
func TextEmbedding(text string, maxLength int) ([]float32, bool) {
	t := cstr(text)
	defer free(t)
	r := C.get_text_embedding(t, C.int(maxLength))
	e, failed := embeddingOf(&r)
	return e.Values, failed
}

// MostSimilar calls find_most_similar (the router's 8-byte result view).
func MostSimilar(query string, candidates []string) (int, float32) {
	q := cstr(query)
	defer free(q)
	arr, release := cStrings(candidates)
	defer release()
	r := C.find_most_similar(q, arr, C.int(len(candidates)), 0)
	return int(r.index), float32(r.score)
}

// Similarity calls calculate_similarity.
func Similarity(a, b string) float32 {
	x, y := cstr(a), cstr(b)
	defer free(x)
	defer free(y)
	return float32(C.calculate_similarity(x, y, 0))
}

// Tokenize calls tokenize_text.
func Tokenize(text string, maxLength int) ([]int32, []string, bool) {
	t := cstr(text)
	defer free(t)
	r := C.tokenize_text(t, C.int(maxLength))
	defer C.free_tokenization_result(r)
	var ids []int32
	var tokens []string
	if r.token_ids != nil {
		for i, id := range unsafe.Slice(r.token_ids, int(r.token_count)) {
			ids = append(ids, int32(id))
			tokens = append(tokens, C.GoString(unsafe.Slice(r.tokens, int(r.token_count))[i]))
		}
	}
	return ids, tokens, bool(r.error)
}

// NLI is an NLIResult copied out.
type NLI struct {
	Label                              int
	Confidence                         float32
	Entailment, Neutral, Contradiction float32
	Error                              string
}

// ClassifyNLI calls classify_nli.
func ClassifyNLI(premise, hypothesis string) NLI {
	p, h := cstr(premise), cstr(hypothesis)
	defer free(p)
	defer free(h)
	r := C.classify_nli(p, h)
	defer C.free_nli_result(r)
	n := NLI{int(r.label), float32(r.confidence), float32(r.entailment_prob), float32(r.neutral_prob),
		float32(r.contradiction_prob), ""}
	if r.error {
		n.Error = C.GoString(r.error_message)
	}
	return n
}

// Span is a hallucinated span (enhanced fields zero for the plain call).
type Span struct {
	Text        string
	Start, End  int
	Confidence  float32
	Label       string
	NLILabel    int
	Severity    int
	Explanation string
}

// Detection is a hallucination detection result.
type Detection struct {
	HasHallucination bool
	Confidence       float32
	Spans            []Span
	Error            string
}

// DetectHallucinations calls detect_hallucinations or its NLI variant.
func DetectHallucinations(context, question, answer string, threshold float32, withNLI bool) Detection {
	c, q, a := cstr(context), cstr(question), cstr(answer)
	defer free(c)
	defer free(q)
	defer free(a)
	var d Detection
	if withNLI {
		r := C.detect_hallucinations_with_nli(c, q, a, C.float(threshold))
		defer C.free_enhanced_hallucination_detection_result(r)
		d = Detection{HasHallucination: bool(r.has_hallucination), Confidence: float32(r.confidence)}
		if r.error {
			d.Error = C.GoString(r.error_message)
		}
		if r.spans != nil {
			for _, s := range unsafe.Slice(r.spans, int(r.num_spans)) {
				d.Spans = append(d.Spans, Span{C.GoString(s.text), int(s.start), int(s.end),
					float32(s.hallucination_confidence), "", int(s.nli_label), int(s.severity), C.GoString(s.explanation)})
			}
		}
		return d
	}
	r := C.detect_hallucinations(c, q, a, C.float(threshold))
	defer C.free_hallucination_detection_result(r)
	d = Detection{HasHallucination: bool(r.has_hallucination), Confidence: float32(r.confidence)}
	if r.error {
		d.Error = C.GoString(r.error_message)
	}
	if r.spans != nil {
		for _, s := range unsafe.Slice(r.spans, int(r.num_spans)) {
			d.Spans = append(d.Spans, Span{Text: C.GoString(s.text), Start: int(s.start), End: int(s.end),
				Confidence: float32(s.confidence), Label: C.GoString(s.label)})
		}
	}
	return d
}

// TaskResult is one text's answer of the LoRA / unified batch calls.
type TaskResult struct {
	Intent             string
	IntentConfidence   float32
	IntentProbs        []float32
	HasPII             bool
	PIITypes           []string
	IsJailbreak        bool
	ThreatType         string
	SecurityConfidence float32
}

func goStrings(p **C.char, n C.int) []string {
	if p == nil || n <= 0 {
		return nil
	}
	var out []string
	for _, s := range unsafe.Slice(p, int(n)) {
		out = append(out, C.GoString(s))
	}
	return out
}

// InitLoRA calls init_lora_unified_classifier.
func InitLoRA(intent, pii, security string) bool {
	i, p, s, a := cstr(intent), cstr(pii), cstr(security), cstr("modernbert")
	defer free(i)
	defer free(p)
	defer free(s)
	defer free(a)
	return bool(C.init_lora_unified_classifier(i, p, s, a, true))
}

// ClassifyLoRA calls classify_batch_with_lora; batch is batch_size.
func ClassifyLoRA(texts []string) (out []TaskResult, batch int) {
	arr, release := cStrings(texts)
	defer release()
	r := C.classify_batch_with_lora(arr, C.int(len(texts)))
	defer C.free_lora_batch_result(r)
	batch = int(r.batch_size)
	for i := 0; i < batch; i++ {
		in := unsafe.Slice(r.intent_results, batch)[i]
		pi := unsafe.Slice(r.pii_results, batch)[i]
		se := unsafe.Slice(r.security_results, batch)[i]
		out = append(out, TaskResult{C.GoString(in.category), float32(in.confidence), nil, bool(pi.has_pii),
			goStrings(pi.pii_types, pi.num_pii_types), bool(se.is_jailbreak), C.GoString(se.threat_type),
			float32(se.confidence)})
	}
	return
}

// InitUnified calls init_unified_classifier_c (labels as the router passes them).
func InitUnified(base, intent, pii, security string, labels []string) bool {
	b, i, p, s := cstr(base), cstr(intent), cstr(pii), cstr(security)
	defer free(b)
	defer free(i)
	defer free(p)
	defer free(s)
	arr, release := cStrings(labels)
	defer release()
	n := C.int(len(labels))
	return bool(C.init_unified_classifier_c(b, i, p, s, arr, n, arr, n, arr, n, false))
}

// ClassifyUnified calls classify_unified_batch.
func ClassifyUnified(texts []string) (out []TaskResult, errMessage string) {
	arr, release := cStrings(texts)
	defer release()
	r := C.classify_unified_batch(arr, C.int(len(texts)))
	defer C.free_unified_batch_result(r)
	if r.error {
		return nil, C.GoString(r.error_message)
	}
	n := int(r.batch_size)
	for i := 0; i < n; i++ {
		in := unsafe.Slice(r.intent_results, n)[i]
		pi := unsafe.Slice(r.pii_results, n)[i]
		se := unsafe.Slice(r.security_results, n)[i]
		out = append(out, TaskResult{C.GoString(in.category), float32(in.confidence),
			floats(in.probabilities, in.num_probabilities), bool(pi.has_pii), goStrings(pi.pii_types, pi.num_pii_types),
			bool(se.is_jailbreak), C.GoString(se.threat_type), float32(se.confidence)})
	}
	return
}

// MLP is an MLP selector handle.
type MLP struct{ h unsafe.Pointer }

// MLPFromJSON calls candle_mlp_from_json_with_device_and_dtype (nil handle on failure).
func MLPFromJSON(json string, dtype int) *MLP {
	j := cstr(json)
	defer free(j)
	h := C.candle_mlp_from_json_with_device_and_dtype(j, 0, C.int(dtype))
	if h == nil {
		return nil
	}
	return &MLP{h}
}

// NewMLP calls candle_mlp_new.
func NewMLP() *MLP { return &MLP{C.candle_mlp_new()} }

// Close frees the handle.
func (m *MLP) Close() { C.candle_mlp_free(m.h) }

// Trained calls candle_mlp_is_trained.
func (m *MLP) Trained() bool { return C.candle_mlp_is_trained(m.h) == 1 }

// Select calls candle_mlp_select ("" and false when it returns NULL).
func (m *MLP) Select(query []float64) (string, bool) {
	var p *C.double
	if len(query) > 0 {
		p = (*C.double)(unsafe.Pointer(&query[0]))
	}
	r := C.candle_mlp_select(m.h, p, C.size_t(len(query)))
	if r == nil {
		return "", false
	}
	defer C.candle_mlp_free_string(r)
	return C.GoString(r), true
}

// JSON calls candle_mlp_to_json.
func (m *MLP) JSON() string {
	r := C.candle_mlp_to_json(m.h)
	defer C.candle_mlp_free_string(r)
	return C.GoString(r)
}

// Unsupported calls the failure-value functions: each must fail cleanly.
func Unsupported() map[string]bool {
	t := cstr("hello")
	defer free(t)
	var mm C.MultiModalEmbeddingResult
	var gen C.GenerativeClassificationResult
	var guard C.GuardResult
	out := map[string]bool{
		"multimodal_encode_text":           C.multimodal_encode_text(t, 0, &mm) == -1 && bool(mm.error) && mm.modality == -1,
		"classify_deberta_jailbreak_text":  C.classify_deberta_jailbreak_text(t).class == -1,
		"init_qwen3_multi_lora_classifier": C.init_qwen3_multi_lora_classifier(t) == -1,
		"classify_with_qwen3_adapter":      C.classify_with_qwen3_adapter(t, t, &gen) == -1 && bool(gen.error),
		"is_qwen3_multi_lora_initialized":  C.is_qwen3_multi_lora_initialized() == 0,
		"classify_with_qwen3_guard":        C.classify_with_qwen3_guard(t, t, &guard) == -1 && bool(guard.error),
		"is_qwen3_guard_initialized":       C.is_qwen3_guard_initialized() == 0,
	}
	C.free_generative_classification_result(&gen)
	C.free_guard_result(&guard)
	return out
}

// ValidateText calls validate_text_input: (is_valid, error_code).
func ValidateText(text *string) (bool, int) {
	var valid bool
	var code int
	withText(text, func(p *C.char) {
		r := C.validate_text_input(p, 0)
		valid, code = bool(r.is_valid), int(r.error_code)
		C.free_validation_result(r)
	})
	return valid, code
}
