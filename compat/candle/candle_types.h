/* The C types of the vLLM Semantic Router's native library (its Go package's
 * cgo preamble), exactly as that Go code compiles against them: field order,
 * field types (bool is C _Bool, int is 32-bit) and so the by-value return
 * convention. semroute's drop-in library (compat/candle) implements the
 * functions that take and return them; tests/compat checks every layout
 * against the published inventory (sizes and offsets on LP64).
 * C99; no semroute or libtorch type appears here. */
#ifndef SEMROUTE_CANDLE_TYPES_H
#define SEMROUTE_CANDLE_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
/* `class` is a C++ keyword: C++ code (the library's implementation) names
 * the field class_; the layout is the same. */
#define SEMROUTE_CANDLE_CLASS class_
#else
#define SEMROUTE_CANDLE_CLASS class
#endif

/* ---- sequence classification ---- */
typedef struct { int SEMROUTE_CANDLE_CLASS; float confidence; char* label; } ClassificationResult;
/* confidence comes first here, unlike ClassificationResult. */
typedef struct { float confidence; int SEMROUTE_CANDLE_CLASS; char* label; float* probabilities; int num_classes; } ClassificationResultWithProbs;
typedef struct { int SEMROUTE_CANDLE_CLASS; float confidence; } ModernBertClassificationResult;
typedef struct { int SEMROUTE_CANDLE_CLASS; float confidence; float* probabilities; int num_classes; } ModernBertClassificationResultWithProbs;

/* ---- token classification (two identical layouts) ---- */
typedef struct { char* entity_type; int start; int end; char* text; float confidence; } ModernBertTokenEntity;
typedef struct { ModernBertTokenEntity* entities; int num_entities; } ModernBertTokenClassificationResult;
typedef struct { char* entity_type; int start; int end; char* text; float confidence; } BertTokenEntity;
typedef struct { BertTokenEntity* entities; int num_entities; } BertTokenClassificationResult;

/* ---- BERT similarity model ---- */
typedef struct { int index; float score; } SimilarityResult;
typedef struct { int* token_ids; int token_count; char** tokens; bool error; } TokenizationResult;

/* ---- embeddings ---- */
/* model_type: 0 qwen3, 1 gemma, 2 mmbert, 3 multimodal, -1 BERT similarity / error. */
typedef struct { float* data; int length; bool error; int model_type; int sequence_length; float processing_time_ms; } EmbeddingResult;
typedef struct { float similarity; int model_type; float processing_time_ms; bool error; } EmbeddingSimilarityResult;
typedef struct { int index; float similarity; } SimilarityMatch;
typedef struct { SimilarityMatch* matches; int num_matches; int model_type; float processing_time_ms; bool error; } BatchSimilarityResult;
typedef struct { char* model_name; bool is_loaded; int max_sequence_length; int default_dimension; char* model_path; } EmbeddingModelInfo;
typedef struct { EmbeddingModelInfo* models; int num_models; bool error; } EmbeddingModelsInfoResult;
/* modality: 0 text, 1 image, 2 audio, -1 error. */
typedef struct { float* data; int length; bool error; int modality; float processing_time_ms; } MultiModalEmbeddingResult;

/* ---- hallucination / NLI ---- */
typedef enum { NLI_ENTAILMENT = 0, NLI_NEUTRAL = 1, NLI_CONTRADICTION = 2, NLI_ERROR = -1 } NLILabel;
typedef struct { char* text; int start; int end; float confidence; char* label; } HallucinationSpan;
typedef struct { bool has_hallucination; float confidence; HallucinationSpan* spans; int num_spans; bool error; char* error_message; } HallucinationDetectionResult;
typedef struct { NLILabel label; float confidence; float entailment_prob; float neutral_prob; float contradiction_prob; bool error; char* error_message; } NLIResult;
typedef struct { char* text; int start; int end; float hallucination_confidence; NLILabel nli_label; float nli_confidence; int severity; char* explanation; } EnhancedHallucinationSpan;
typedef struct { bool has_hallucination; float confidence; EnhancedHallucinationSpan* spans; int num_spans; bool error; char* error_message; } EnhancedHallucinationDetectionResult;

/* ---- LoRA parallel engine ---- */
typedef struct { char* category; float confidence; } LoRAIntentResult;
typedef struct { bool has_pii; char** pii_types; int num_pii_types; float confidence; } LoRAPIIResult;
typedef struct { bool is_jailbreak; char* threat_type; float confidence; } LoRASecurityResult;
typedef struct { LoRAIntentResult* intent_results; LoRAPIIResult* pii_results; LoRASecurityResult* security_results; int batch_size; float avg_confidence; } LoRABatchResult;

/* ---- the unified classifier the router calls through its own cgo ---- */
typedef struct { char* category; float confidence; float* probabilities; int num_probabilities; } CIntentResult;
typedef struct { bool has_pii; char** pii_types; int num_pii_types; float confidence; } CPIIResult;
typedef struct { bool is_jailbreak; char* threat_type; float confidence; } CSecurityResult;
typedef struct { CIntentResult* intent_results; CPIIResult* pii_results; CSecurityResult* security_results; int batch_size; bool error; char* error_message; } UnifiedBatchResult;

/* ---- generative classifiers (not used by the router) ---- */
typedef struct { int class_id; float confidence; char* category_name; float* probabilities; int num_categories; bool error; char* error_message; } GenerativeClassificationResult;
typedef struct { char* raw_output; bool error; char* error_message; } GuardResult;

/* ---- text windows (added after the 2026-08-22 snapshot) ---- */
typedef struct { int* offsets; int window_count; bool error; } TextWindowsResult;

/* ---- input validation helpers ---- */
typedef struct { bool is_valid; int error_code; char* error_message; char* suggestions; } ValidationResult;

#ifdef __cplusplus
}
#endif

#endif /* SEMROUTE_CANDLE_TYPES_H */
