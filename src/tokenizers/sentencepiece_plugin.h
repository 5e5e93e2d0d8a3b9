/* The C interface of the SentencePiece plugin (libsemroute_sentencepiece.so).
 * Debian's libsentencepiece embeds its own protobuf, which clashes with
 * libtorch's when both live in one symbol namespace; the plugin is therefore
 * loaded with dlopen(RTLD_LOCAL | RTLD_DEEPBIND) and reached only through
 * these functions. */
#ifndef SEMROUTE_SENTENCEPIECE_PLUGIN_H
#define SEMROUTE_SENTENCEPIECE_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct srspm_model srspm_model;

/* A model from the bytes of a .model file (the caller reads the file, so
 * every file check of the library applies); NULL on failure, with a message
 * written to `error` (always terminated). */
srspm_model* srspm_load(const char* data, size_t size, char* error, size_t error_size);
void srspm_free(srspm_model* model);

/* Encodes `text`; writes up to `capacity` ids and byte offsets and returns the
 * number of pieces (call again with a larger buffer if it exceeds capacity),
 * or -1 on error. */
int64_t srspm_encode(const srspm_model* model, const char* text, size_t length, int32_t* ids, uint32_t* begins,
                     uint32_t* ends, size_t capacity);
/* Decodes ids into `out`; returns the byte length needed (may exceed size), -1 on error. */
int64_t srspm_decode(const srspm_model* model, const int32_t* ids, size_t count, char* out, size_t size);
/* Piece of an id, copied into `out`; returns the length needed, -1 if out of range. */
int64_t srspm_id_to_piece(const srspm_model* model, int32_t id, char* out, size_t size);
/* Id of a piece, or -1. */
int32_t srspm_piece_to_id(const srspm_model* model, const char* piece, size_t length);
int32_t srspm_vocab_size(const srspm_model* model);
/* Special ids (-1 when the model has none). which: 0 unk, 1 bos, 2 eos, 3 pad. */
int32_t srspm_special_id(const srspm_model* model, int which);
int srspm_is_control(const srspm_model* model, int32_t id);

#ifdef __cplusplus
}
#endif

#endif
