/* The owned-instance interface of the vLLM Semantic Router's native library:
 * the 31 candle_instance_* functions, with the prototypes its Go code
 * declares. Every function but candle_instance_free_string returns a
 * library-owned JSON text, {"value": ...} or {"error": "<code>: <message>"},
 * freed with candle_instance_free_string (never NULL). Handles are numbers
 * from 1; 0 is never valid. tests/compat checks the library exports these. */
#ifndef SEMROUTE_CANDLE_INSTANCE_H
#define SEMROUTE_CANDLE_INSTANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- loaders: options JSON in, a handle out */
char* candle_instance_load_backbone(const char* options);
char* candle_instance_load_sequence(const char* options);
char* candle_instance_load_label_scores(const char* options);
char* candle_instance_load_token(const char* options);
char* candle_instance_load_nli(const char* options);
char* candle_instance_load_hallucination(const char* options);
char* candle_instance_load_embedding(const char* options);
char* candle_instance_load_guard(const char* options);
char* candle_instance_load_generative(const char* options);
char* candle_instance_load_pair_scorer(const char* options, const char* selection);

/* ---- handles */
char* candle_instance_clone(uint64_t handle);
char* candle_instance_close(uint64_t handle);
char* candle_instance_info(uint64_t handle);
char* candle_instance_bind_head(uint64_t handle, const char* head_path, const char* task);
char* candle_instance_embedding_descriptor(uint64_t handle, size_t layer, size_t dimension);

/* ---- inference */
char* candle_instance_sequence(uint64_t handle, const char* text);
char* candle_instance_score(uint64_t handle, const char* text);
char* candle_instance_classify_windows(uint64_t handle, const char* text, size_t size, size_t overlap);
char* candle_instance_score_windows(uint64_t handle, const char* text, size_t size, size_t overlap);
char* candle_instance_tokens(uint64_t handle, const char* text);
char* candle_instance_token_windows(uint64_t handle, const char* text, size_t size, size_t overlap);
char* candle_instance_nli(uint64_t handle, const char* premise, const char* hypothesis);
char* candle_instance_hallucination(uint64_t handle, const char* context, const char* question, const char* answer,
                                    float threshold);
char* candle_instance_embedding(uint64_t handle, const char* text, size_t dimension, size_t layer);
char* candle_instance_image(uint64_t handle, const uint8_t* bytes, size_t length, size_t dimension);
char* candle_instance_audio(uint64_t handle, const float* samples, size_t length, size_t mel_bins, size_t frames,
                            size_t dimension);
char* candle_instance_text_windows(unsigned long long handle, const char* text, size_t max_tokens);
char* candle_instance_guard(uint64_t handle, const char* text, const char* mode);
char* candle_instance_generative(uint64_t handle, const char* text, const char* adapter, const char* categories,
                                 bool multi_token);
char* candle_instance_score_pairs(uint64_t handle, const char* pairs);

/* ---- strings */
void candle_instance_free_string(char* text);

#ifdef __cplusplus
}
#endif

#endif /* SEMROUTE_CANDLE_INSTANCE_H */
