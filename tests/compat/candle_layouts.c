/* Every type of compat/candle/candle_types.h against the layouts the vLLM
 * Semantic Router's Go code was compiled with (sizes and byte offsets on
 * LP64, from ../shared/compat/candle_binding_abi.md, section 4). Compiled as
 * strict C99 and run by ctest: prints one line per mismatch, exits non-zero
 * on any. */
#include <stddef.h>
#include <stdio.h>

#include "candle_types.h"

static int failures = 0;
static int checks = 0;

#define CHECK_SIZE(type, expected)                                                              \
  do {                                                                                          \
    ++checks;                                                                                   \
    if (sizeof(type) != (expected)) {                                                           \
      printf("sizeof(%s) = %zu, expected %d\n", #type, sizeof(type), (int)(expected));          \
      ++failures;                                                                               \
    }                                                                                           \
  } while (0)
#define CHECK_OFFSET(type, field, expected)                                                     \
  do {                                                                                          \
    ++checks;                                                                                   \
    if (offsetof(type, field) != (expected)) {                                                  \
      printf("offsetof(%s, %s) = %zu, expected %d\n", #type, #field, offsetof(type, field),    \
             (int)(expected));                                                                  \
      ++failures;                                                                               \
    }                                                                                           \
  } while (0)

int main(void) {
  CHECK_SIZE(bool, 1);
  CHECK_SIZE(TextWindowsResult, 16);
  CHECK_OFFSET(TextWindowsResult, offsets, 0);
  CHECK_OFFSET(TextWindowsResult, window_count, 8);
  CHECK_OFFSET(TextWindowsResult, error, 12);
  CHECK_SIZE(ClassificationResult, 16);
  CHECK_OFFSET(ClassificationResult, class, 0);
  CHECK_OFFSET(ClassificationResult, confidence, 4);
  CHECK_OFFSET(ClassificationResult, label, 8);
  CHECK_SIZE(ClassificationResultWithProbs, 32);
  CHECK_OFFSET(ClassificationResultWithProbs, confidence, 0);
  CHECK_OFFSET(ClassificationResultWithProbs, class, 4);
  CHECK_OFFSET(ClassificationResultWithProbs, label, 8);
  CHECK_OFFSET(ClassificationResultWithProbs, probabilities, 16);
  CHECK_OFFSET(ClassificationResultWithProbs, num_classes, 24);
  CHECK_SIZE(ModernBertClassificationResult, 8);
  CHECK_OFFSET(ModernBertClassificationResult, class, 0);
  CHECK_OFFSET(ModernBertClassificationResult, confidence, 4);
  CHECK_SIZE(ModernBertClassificationResultWithProbs, 24);
  CHECK_OFFSET(ModernBertClassificationResultWithProbs, class, 0);
  CHECK_OFFSET(ModernBertClassificationResultWithProbs, confidence, 4);
  CHECK_OFFSET(ModernBertClassificationResultWithProbs, probabilities, 8);
  CHECK_OFFSET(ModernBertClassificationResultWithProbs, num_classes, 16);
  CHECK_SIZE(ModernBertTokenEntity, 32);
  CHECK_OFFSET(ModernBertTokenEntity, entity_type, 0);
  CHECK_OFFSET(ModernBertTokenEntity, start, 8);
  CHECK_OFFSET(ModernBertTokenEntity, end, 12);
  CHECK_OFFSET(ModernBertTokenEntity, text, 16);
  CHECK_OFFSET(ModernBertTokenEntity, confidence, 24);
  CHECK_SIZE(ModernBertTokenClassificationResult, 16);
  CHECK_OFFSET(ModernBertTokenClassificationResult, entities, 0);
  CHECK_OFFSET(ModernBertTokenClassificationResult, num_entities, 8);
  CHECK_SIZE(BertTokenEntity, 32);
  CHECK_OFFSET(BertTokenEntity, entity_type, 0);
  CHECK_OFFSET(BertTokenEntity, start, 8);
  CHECK_OFFSET(BertTokenEntity, end, 12);
  CHECK_OFFSET(BertTokenEntity, text, 16);
  CHECK_OFFSET(BertTokenEntity, confidence, 24);
  CHECK_SIZE(BertTokenClassificationResult, 16);
  CHECK_OFFSET(BertTokenClassificationResult, entities, 0);
  CHECK_OFFSET(BertTokenClassificationResult, num_entities, 8);
  CHECK_SIZE(SimilarityResult, 8);
  CHECK_OFFSET(SimilarityResult, index, 0);
  CHECK_OFFSET(SimilarityResult, score, 4);
  CHECK_SIZE(TokenizationResult, 32);
  CHECK_OFFSET(TokenizationResult, token_ids, 0);
  CHECK_OFFSET(TokenizationResult, token_count, 8);
  CHECK_OFFSET(TokenizationResult, tokens, 16);
  CHECK_OFFSET(TokenizationResult, error, 24);
  CHECK_SIZE(EmbeddingResult, 32);
  CHECK_OFFSET(EmbeddingResult, data, 0);
  CHECK_OFFSET(EmbeddingResult, length, 8);
  CHECK_OFFSET(EmbeddingResult, error, 12);
  CHECK_OFFSET(EmbeddingResult, model_type, 16);
  CHECK_OFFSET(EmbeddingResult, sequence_length, 20);
  CHECK_OFFSET(EmbeddingResult, processing_time_ms, 24);
  CHECK_SIZE(EmbeddingSimilarityResult, 16);
  CHECK_OFFSET(EmbeddingSimilarityResult, similarity, 0);
  CHECK_OFFSET(EmbeddingSimilarityResult, model_type, 4);
  CHECK_OFFSET(EmbeddingSimilarityResult, processing_time_ms, 8);
  CHECK_OFFSET(EmbeddingSimilarityResult, error, 12);
  CHECK_SIZE(SimilarityMatch, 8);
  CHECK_OFFSET(SimilarityMatch, index, 0);
  CHECK_OFFSET(SimilarityMatch, similarity, 4);
  CHECK_SIZE(BatchSimilarityResult, 24);
  CHECK_OFFSET(BatchSimilarityResult, matches, 0);
  CHECK_OFFSET(BatchSimilarityResult, num_matches, 8);
  CHECK_OFFSET(BatchSimilarityResult, model_type, 12);
  CHECK_OFFSET(BatchSimilarityResult, processing_time_ms, 16);
  CHECK_OFFSET(BatchSimilarityResult, error, 20);
  CHECK_SIZE(EmbeddingModelInfo, 32);
  CHECK_OFFSET(EmbeddingModelInfo, model_name, 0);
  CHECK_OFFSET(EmbeddingModelInfo, is_loaded, 8);
  CHECK_OFFSET(EmbeddingModelInfo, max_sequence_length, 12);
  CHECK_OFFSET(EmbeddingModelInfo, default_dimension, 16);
  CHECK_OFFSET(EmbeddingModelInfo, model_path, 24);
  CHECK_SIZE(EmbeddingModelsInfoResult, 16);
  CHECK_OFFSET(EmbeddingModelsInfoResult, models, 0);
  CHECK_OFFSET(EmbeddingModelsInfoResult, num_models, 8);
  CHECK_OFFSET(EmbeddingModelsInfoResult, error, 12);
  CHECK_SIZE(MultiModalEmbeddingResult, 24);
  CHECK_OFFSET(MultiModalEmbeddingResult, data, 0);
  CHECK_OFFSET(MultiModalEmbeddingResult, length, 8);
  CHECK_OFFSET(MultiModalEmbeddingResult, error, 12);
  CHECK_OFFSET(MultiModalEmbeddingResult, modality, 16);
  CHECK_OFFSET(MultiModalEmbeddingResult, processing_time_ms, 20);
  CHECK_SIZE(NLILabel, 4);
  CHECK_SIZE(HallucinationSpan, 32);
  CHECK_OFFSET(HallucinationSpan, text, 0);
  CHECK_OFFSET(HallucinationSpan, start, 8);
  CHECK_OFFSET(HallucinationSpan, end, 12);
  CHECK_OFFSET(HallucinationSpan, confidence, 16);
  CHECK_OFFSET(HallucinationSpan, label, 24);
  CHECK_SIZE(HallucinationDetectionResult, 32);
  CHECK_OFFSET(HallucinationDetectionResult, has_hallucination, 0);
  CHECK_OFFSET(HallucinationDetectionResult, confidence, 4);
  CHECK_OFFSET(HallucinationDetectionResult, spans, 8);
  CHECK_OFFSET(HallucinationDetectionResult, num_spans, 16);
  CHECK_OFFSET(HallucinationDetectionResult, error, 20);
  CHECK_OFFSET(HallucinationDetectionResult, error_message, 24);
  CHECK_SIZE(NLIResult, 32);
  CHECK_OFFSET(NLIResult, label, 0);
  CHECK_OFFSET(NLIResult, confidence, 4);
  CHECK_OFFSET(NLIResult, entailment_prob, 8);
  CHECK_OFFSET(NLIResult, neutral_prob, 12);
  CHECK_OFFSET(NLIResult, contradiction_prob, 16);
  CHECK_OFFSET(NLIResult, error, 20);
  CHECK_OFFSET(NLIResult, error_message, 24);
  CHECK_SIZE(EnhancedHallucinationSpan, 40);
  CHECK_OFFSET(EnhancedHallucinationSpan, text, 0);
  CHECK_OFFSET(EnhancedHallucinationSpan, start, 8);
  CHECK_OFFSET(EnhancedHallucinationSpan, end, 12);
  CHECK_OFFSET(EnhancedHallucinationSpan, hallucination_confidence, 16);
  CHECK_OFFSET(EnhancedHallucinationSpan, nli_label, 20);
  CHECK_OFFSET(EnhancedHallucinationSpan, nli_confidence, 24);
  CHECK_OFFSET(EnhancedHallucinationSpan, severity, 28);
  CHECK_OFFSET(EnhancedHallucinationSpan, explanation, 32);
  CHECK_SIZE(EnhancedHallucinationDetectionResult, 32);
  CHECK_OFFSET(EnhancedHallucinationDetectionResult, has_hallucination, 0);
  CHECK_OFFSET(EnhancedHallucinationDetectionResult, confidence, 4);
  CHECK_OFFSET(EnhancedHallucinationDetectionResult, spans, 8);
  CHECK_OFFSET(EnhancedHallucinationDetectionResult, num_spans, 16);
  CHECK_OFFSET(EnhancedHallucinationDetectionResult, error, 20);
  CHECK_OFFSET(EnhancedHallucinationDetectionResult, error_message, 24);
  CHECK_SIZE(LoRAIntentResult, 16);
  CHECK_OFFSET(LoRAIntentResult, category, 0);
  CHECK_OFFSET(LoRAIntentResult, confidence, 8);
  CHECK_SIZE(LoRAPIIResult, 24);
  CHECK_OFFSET(LoRAPIIResult, has_pii, 0);
  CHECK_OFFSET(LoRAPIIResult, pii_types, 8);
  CHECK_OFFSET(LoRAPIIResult, num_pii_types, 16);
  CHECK_OFFSET(LoRAPIIResult, confidence, 20);
  CHECK_SIZE(LoRASecurityResult, 24);
  CHECK_OFFSET(LoRASecurityResult, is_jailbreak, 0);
  CHECK_OFFSET(LoRASecurityResult, threat_type, 8);
  CHECK_OFFSET(LoRASecurityResult, confidence, 16);
  CHECK_SIZE(LoRABatchResult, 32);
  CHECK_OFFSET(LoRABatchResult, intent_results, 0);
  CHECK_OFFSET(LoRABatchResult, pii_results, 8);
  CHECK_OFFSET(LoRABatchResult, security_results, 16);
  CHECK_OFFSET(LoRABatchResult, batch_size, 24);
  CHECK_OFFSET(LoRABatchResult, avg_confidence, 28);
  CHECK_SIZE(CIntentResult, 32);
  CHECK_OFFSET(CIntentResult, category, 0);
  CHECK_OFFSET(CIntentResult, confidence, 8);
  CHECK_OFFSET(CIntentResult, probabilities, 16);
  CHECK_OFFSET(CIntentResult, num_probabilities, 24);
  CHECK_SIZE(CPIIResult, 24);
  CHECK_OFFSET(CPIIResult, has_pii, 0);
  CHECK_OFFSET(CPIIResult, pii_types, 8);
  CHECK_OFFSET(CPIIResult, num_pii_types, 16);
  CHECK_OFFSET(CPIIResult, confidence, 20);
  CHECK_SIZE(CSecurityResult, 24);
  CHECK_OFFSET(CSecurityResult, is_jailbreak, 0);
  CHECK_OFFSET(CSecurityResult, threat_type, 8);
  CHECK_OFFSET(CSecurityResult, confidence, 16);
  CHECK_SIZE(UnifiedBatchResult, 40);
  CHECK_OFFSET(UnifiedBatchResult, intent_results, 0);
  CHECK_OFFSET(UnifiedBatchResult, pii_results, 8);
  CHECK_OFFSET(UnifiedBatchResult, security_results, 16);
  CHECK_OFFSET(UnifiedBatchResult, batch_size, 24);
  CHECK_OFFSET(UnifiedBatchResult, error, 28);
  CHECK_OFFSET(UnifiedBatchResult, error_message, 32);
  CHECK_SIZE(GenerativeClassificationResult, 40);
  CHECK_OFFSET(GenerativeClassificationResult, class_id, 0);
  CHECK_OFFSET(GenerativeClassificationResult, confidence, 4);
  CHECK_OFFSET(GenerativeClassificationResult, category_name, 8);
  CHECK_OFFSET(GenerativeClassificationResult, probabilities, 16);
  CHECK_OFFSET(GenerativeClassificationResult, num_categories, 24);
  CHECK_OFFSET(GenerativeClassificationResult, error, 28);
  CHECK_OFFSET(GenerativeClassificationResult, error_message, 32);
  CHECK_SIZE(GuardResult, 24);
  CHECK_OFFSET(GuardResult, raw_output, 0);
  CHECK_OFFSET(GuardResult, error, 8);
  CHECK_OFFSET(GuardResult, error_message, 16);
  CHECK_SIZE(ValidationResult, 24);
  CHECK_OFFSET(ValidationResult, is_valid, 0);
  CHECK_OFFSET(ValidationResult, error_code, 4);
  CHECK_OFFSET(ValidationResult, error_message, 8);
  CHECK_OFFSET(ValidationResult, suggestions, 16);
  printf("%d layout checks, %d failed\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
