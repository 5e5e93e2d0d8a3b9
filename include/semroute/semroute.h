/* semroute: the stable C API.
 *
 * One model handle serves one task: sequence classification (intent, domain,
 * jailbreak, NLI …), token classification (PII spans) or sentence embeddings.
 *
 * Conventions (they hold for every function in this header):
 * - names are semroute_<object>_<verb>; handles and result objects are opaque;
 * - fallible calls return a semroute_status* (NULL = success) holding a
 *   stable numeric code and a message; release it with semroute_status_free();
 * - ownership words: "borrowed" = valid until the named owner is freed;
 *   "caller-owned" = release with the named free function; "caller buffer" =
 *   the caller allocates, the library writes into it;
 * - every free function accepts NULL;
 * - text is passed as (pointer, length) in bytes, UTF-8, and may contain NUL;
 *   a NULL pointer is allowed when the length is 0; a batch is one byte buffer
 *   plus count + 1 offsets: text i is bytes [offsets[i], offsets[i + 1]);
 * - the library never keeps a caller pointer after a call returns;
 * - structs grow only at their end and begin with uint32_t struct_size. A
 *   struct the caller passes (params, engine tasks) is read up to the
 *   caller's struct_size (fields it lacks keep their defaults; an array of
 *   them is strided by it). A struct the library returns is reached only
 *   through a pointer (arrays of them are arrays of pointers), and its
 *   struct_size says which fields the library filled: an older caller reads
 *   the fields it knows, whatever the library adds after them;
 * - no C++ exception and no abort ever crosses this boundary; a NULL handle or
 *   a NULL required pointer gives SEMROUTE_ERR_INVALID_ARGUMENT.
 *
 * Thread-safety: a loaded model is immutable. Every function may be called
 * concurrently from any number of threads, on the same handle or on different
 * ones, except the *_free functions: a handle or result must not be freed
 * while another call is using it. Status and result objects are not shared
 * by the library; give each thread its own.
 */
#ifndef SEMROUTE_H
#define SEMROUTE_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define SEMROUTE_API __declspec(dllexport)
#else
#define SEMROUTE_API __attribute__((visibility("default")))
#endif

#if defined(__GNUC__) || defined(__clang__)
#define SEMROUTE_MUST_USE __attribute__((warn_unused_result))
#else
#define SEMROUTE_MUST_USE
#endif

/* Equals the SONAME major of libsemroute.so. */
#define SEMROUTE_ABI_VERSION 0

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- version */

/* Library version, e.g. "0.1.0". Static storage; never free it. */
SEMROUTE_API const char* semroute_version(void);

/* ABI version of the loaded library; compare with SEMROUTE_ABI_VERSION. */
SEMROUTE_API int semroute_abi_version(void);

/* ----------------------------------------------------------------- status */

/* Stable codes: never renumbered, only appended. */
typedef enum semroute_code {
  SEMROUTE_OK = 0,
  SEMROUTE_ERR_INVALID_ARGUMENT = 1, /* a caller passed something unusable */
  SEMROUTE_ERR_NOT_FOUND = 2,        /* a file, tensor or label does not exist */
  SEMROUTE_ERR_INVALID_MODEL = 3,    /* a model file is malformed or inconsistent */
  SEMROUTE_ERR_UNSUPPORTED = 4,      /* valid, but not something this build or model does */
  SEMROUTE_ERR_INVALID_UTF8 = 5,     /* input text is not valid UTF-8 */
  SEMROUTE_ERR_TOO_LONG = 6,         /* input exceeds a configured or hard limit */
  SEMROUTE_ERR_OUT_OF_MEMORY = 7,
  SEMROUTE_ERR_INTERNAL = 8          /* a bug: please report it */
} semroute_code;

typedef struct semroute_status semroute_status;

/* The status's code; SEMROUTE_OK for NULL. */
SEMROUTE_API semroute_code semroute_status_code(const semroute_status* status);

/* The status's message, borrowed from the status; "" for NULL. */
SEMROUTE_API const char* semroute_status_message(const semroute_status* status);

/* Short stable name of a code, e.g. "invalid_utf8". Static storage. */
SEMROUTE_API const char* semroute_code_name(semroute_code code);

SEMROUTE_API void semroute_status_free(semroute_status* status);

/* ------------------------------------------------------------------ model */

typedef enum semroute_task {
  SEMROUTE_TASK_AUTO = 0, /* from config.json "architectures": …For{Sequence,Token}Classification, else embedding */
  SEMROUTE_TASK_SEQUENCE_CLASSIFICATION = 1,
  SEMROUTE_TASK_TOKEN_CLASSIFICATION = 2,
  SEMROUTE_TASK_EMBEDDING = 3,
  /* The encoder alone, no head (a backbone): task heads are bound to it with
   * semroute_model_bind_head. Its directory needs no tokenizer.json. */
  SEMROUTE_TASK_ENCODER = 4,
  /* A cross-encoder scoring (query, document) pairs for reranking (a
   * "Matryoshka" pair scorer: matryoshka_config.json, classification_heads.
   * safetensors, config.json "representation_contract"); params layer and
   * dimension pick the trained exit (0 = all layers, the full width). */
  SEMROUTE_TASK_PAIR_SCORING = 5
} semroute_task;

/* Which tokens survive when an input is longer than max_length. */
typedef enum semroute_truncation {
  SEMROUTE_KEEP_START = 0, /* drop the tail (the usual choice) */
  SEMROUTE_KEEP_END = 1,   /* drop the head */
  SEMROUTE_KEEP_BOTH = 2   /* keep head and tail, drop the middle */
} semroute_truncation;

/* What an input longer than max_length gets. */
typedef enum semroute_overflow {
  SEMROUTE_OVERFLOW_TRUNCATE = 0, /* cut as semroute_truncation says (the default) */
  SEMROUTE_OVERFLOW_REJECT = 1    /* refused with SEMROUTE_ERR_TOO_LONG: nothing is answered on a part */
} semroute_overflow;

typedef enum semroute_pooling {
  SEMROUTE_POOLING_DEFAULT = 0, /* what the model folder says (sentence-transformers modules, Qwen3: last token) */
  SEMROUTE_POOLING_MEAN = 1,
  SEMROUTE_POOLING_CLS = 2,
  SEMROUTE_POOLING_LAST_TOKEN = 3
} semroute_pooling;

/* Load parameters. Start from semroute_model_default_params(); struct_size
 * lets the struct grow: the library reads only the fields a caller's header
 * knew of. Strings are NUL-terminated and copied during the load. */
typedef struct semroute_model_params {
  uint32_t struct_size;  /* sizeof(semroute_model_params) */
  int32_t task;          /* semroute_task */
  const char* device;    /* "cpu", "cuda", "cuda:1"; NULL = "cpu" */
  const char* dtype;     /* "float32", "bfloat16", "float16", "int8" (linear layers quantized),
                            "auto" (bf16 where the CPU's GEMM is native, else float32); NULL = "float32" */
  int32_t threads;       /* > 0: set the process-wide compute thread count; 0 = keep
                            (initially SEMROUTE_NUM_THREADS or every usable CPU) */
  uint32_t max_length;   /* longest input in tokens, special tokens included; 0 = the model's limit */
  int32_t truncation;    /* semroute_truncation */
  const char* tokenizer; /* tokenizer.json (or its directory) when not beside the model; NULL = beside */
  /* Embedding models only. */
  int32_t pooling;       /* semroute_pooling */
  int32_t normalize;     /* 1 = L2-normalize (default), 0 = raw pooled vectors */
  uint32_t dimension;    /* Matryoshka: keep the first N values (re-normalized); 0 = all (pair scorers too) */
  uint32_t layer;        /* early exit after this many layers; 0 = all (pair scorers too) */
  const char* prompt;    /* put before every text, e.g. "Instruct: …\nQuery: "; NULL = none */
  /* LoRA. */
  const char* adapter;   /* a PEFT LoRA adapter directory for the model; NULL = none */
  int32_t merge_adapter; /* 1 = fold it into the weights at load (default), 0 = add it at run time */
  /* Dynamic batching: concurrent calls on this handle are coalesced into one
   * forward of up to max_batch texts, collected for at most max_wait_us after
   * the first arrives; answers equal unbatched ones (to float rounding). Batched forwards of all
   * handles take turns on one process-wide compute lane; calls holding a text of more than
   * ~1,024 tokens (~4 KB) compute one call at a time on a second, low-priority lane, so that
   * short calls do not wait behind their forwards. max_batch <= 1 = off. */
  uint32_t max_batch;
  uint32_t max_wait_us;
  /* Input policy (appended). */
  int32_t overflow;           /* semroute_overflow */
  int32_t count_input_tokens; /* 1 = read a truncated text to its end so that
                                 semroute_input_usage.input_tokens counts it whole;
                                 0 (default) = read only what is kept (a long text
                                 costs what max_length costs; input_tokens is then 0) */
} semroute_model_params;

/* Defaults: auto task, CPU, float32, model limits, keep start, normalized. */
SEMROUTE_API semroute_model_params semroute_model_default_params(void);

typedef struct semroute_model semroute_model;

/* Loads a model directory (config.json, *.safetensors, tokenizer.json).
 * params may be NULL (defaults). On success *out_model is caller-owned
 * (semroute_model_free); on failure it is set to NULL. */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_model_load(const char* path,
                                                                    const semroute_model_params* params,
                                                                    semroute_model** out_model);

/* A task head bound to the encoder of `source` (loaded for ENCODER, SEQUENCE
 * or TOKEN classification), sharing its weights in memory: nothing of the
 * encoder is loaded again. head_dir is a task checkpoint of the same
 * architecture and width: its config.json gives the labels, problem_type and
 * head shape (e.g. ModernBERT's classifier_pooling), its weights the head's
 * tensors (a head alone, or a whole checkpoint whose encoder tensors are not
 * read). params (NULL = defaults): task picks SEQUENCE or TOKEN
 * classification (AUTO: head_dir's "architectures"); the tokenizer is
 * params->tokenizer, else head_dir's tokenizer.json, else the source's;
 * max_length, truncation, overflow, count_input_tokens and batching apply to
 * the new model; device and dtype are the source's. The new model and its
 * source are freed independently (the encoder lives until the last model
 * using it is freed). Thread-safe with calls on the source. */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_model_bind_head(const semroute_model* source,
                                                                         const char* head_dir,
                                                                         const semroute_model_params* params,
                                                                         semroute_model** out_model);

/* 1 when a and b run on the same encoder weights in memory (one was bound to
 * the other, or both to a third); 0 otherwise or when either is NULL. */
SEMROUTE_API int semroute_model_shares_encoder(const semroute_model* a, const semroute_model* b);

/* Exclusive: no other call may be using the model. */
SEMROUTE_API void semroute_model_free(semroute_model* model);

/* Model facts. These never fail; for a NULL model they return 0 or "". */
SEMROUTE_API semroute_task semroute_model_task(const semroute_model* model);
/* config.json "model_type", e.g. "modernbert". Borrowed from the model. */
SEMROUTE_API const char* semroute_model_type(const semroute_model* model);
/* First config.json "architectures" entry or "". Borrowed from the model. */
SEMROUTE_API const char* semroute_model_architecture(const semroute_model* model);
SEMROUTE_API size_t semroute_model_hidden_size(const semroute_model* model);
/* Longest input in tokens (the configured max_length or the model's limit). */
SEMROUTE_API size_t semroute_model_max_length(const semroute_model* model);
/* Classifiers: number of labels; 0 for an embedding model. */
SEMROUTE_API size_t semroute_model_num_labels(const semroute_model* model);
/* Label i (id2label), borrowed from the model; NULL when out of range. */
SEMROUTE_API const char* semroute_model_label(const semroute_model* model, size_t i);
/* Sequence classifiers: 1 when labels are scored independently (a sigmoid
 * each, not summing to 1): config.json problem_type
 * "multi_label_classification", or a single label; 0 for a softmax over the
 * labels and for every other task. */
SEMROUTE_API int semroute_model_multi_label(const semroute_model* model);
/* Embedding models: floats per embedding (after Matryoshka); 0 otherwise. */
SEMROUTE_API size_t semroute_model_embedding_dim(const semroute_model* model);

/* --------------------------------------------------------------- tokenize */

typedef struct semroute_tokens semroute_tokens;

/* Tokenizes as the model does (max_length and truncation applied), with or
 * without the special tokens. *out_tokens is caller-owned (semroute_tokens_free). */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_tokenize(const semroute_model* model, const char* text,
                                                                  size_t length, int add_special_tokens,
                                                                  semroute_tokens** out_tokens);
/* As semroute_tokenize, but the whole text: max_length neither cuts nor
 * refuses it (what a caller needs to fit an input into the model's budget,
 * or to window it). */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_tokenize_whole(const semroute_model* model, const char* text,
                                                                        size_t length, int add_special_tokens,
                                                                        semroute_tokens** out_tokens);

SEMROUTE_API size_t semroute_tokens_count(const semroute_tokens* tokens);
/* count token ids, borrowed from tokens. */
SEMROUTE_API const int32_t* semroute_tokens_ids(const semroute_tokens* tokens);
/* 2 * count byte offsets into the text: begin0, end0, begin1, end1 … ({0, 0}
 * for special tokens). Borrowed from tokens. */
SEMROUTE_API const uint64_t* semroute_tokens_offsets(const semroute_tokens* tokens);
/* Token string i (vocabulary form), borrowed from tokens; NULL when out of range. */
SEMROUTE_API const char* semroute_tokens_token(const semroute_tokens* tokens, size_t i);
SEMROUTE_API void semroute_tokens_free(semroute_tokens* tokens);

/* ----------------------------------------------- sequence classification */

typedef struct semroute_classifications semroute_classifications;

/* Classifies one text. *out is caller-owned (semroute_classifications_free). */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_classify(const semroute_model* model, const char* text,
                                                                  size_t length, semroute_classifications** out);

/* Classifies count texts in one batch (texts + count + 1 offsets). */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_classify_batch(const semroute_model* model,
                                                                        const char* texts, const uint64_t* offsets,
                                                                        size_t count,
                                                                        semroute_classifications** out);

/* Classifies count (first, second) pairs with the tokenizer's pair template
 * (NLI premise / hypothesis, fact checks). */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_classify_pairs(
    const semroute_model* model, const char* firsts, const uint64_t* first_offsets, const char* seconds,
    const uint64_t* second_offsets, size_t count, semroute_classifications** out);

SEMROUTE_API size_t semroute_classifications_count(const semroute_classifications* results);
/* Winning class of text i; -1 when out of range. */
SEMROUTE_API int32_t semroute_classifications_class_id(const semroute_classifications* results, size_t i);
/* Its label, borrowed from results; NULL when out of range. */
SEMROUTE_API const char* semroute_classifications_label(const semroute_classifications* results, size_t i);
/* Its probability; 0 when out of range. */
SEMROUTE_API float semroute_classifications_confidence(const semroute_classifications* results, size_t i);
/* The score of every label, in label order: a softmax, or independent
 * sigmoids for a multi-label model (semroute_model_multi_label). *out_count
 * floats borrowed from results; NULL (and 0) when out of range. out_count
 * may be NULL. */
SEMROUTE_API const float* semroute_classifications_probabilities(const semroute_classifications* results, size_t i,
                                                                 size_t* out_count);
/* What input i was, borrowed from results; NULL when out of range. */
typedef struct semroute_input_usage {
  uint32_t struct_size;    /* sizeof(semroute_input_usage) in the library that filled it */
  uint64_t input_tokens;   /* the input's tokens, special tokens included, before truncation
                              (0: truncated and not counted to its end, see count_input_tokens) */
  uint64_t processed_tokens; /* the tokens the model read */
  int32_t truncated;       /* 1 when the input was cut to max_length */
} semroute_input_usage;
SEMROUTE_API const semroute_input_usage* semroute_classifications_input(const semroute_classifications* results,
                                                                        size_t i);
SEMROUTE_API void semroute_classifications_free(semroute_classifications* results);

/* ------------------------------------------------- windowed documents */

/* A document longer than the model reads at once, classified window by
 * window: windows of `size` tokens (special tokens included; 0 = the model's
 * max_length), consecutive ones sharing `overlap` text tokens, the first at
 * the document's start and the last at its end. The document is never cut:
 * one of more than max_document_tokens text tokens (0 = no limit) is refused
 * with SEMROUTE_ERR_TOO_LONG. Start from semroute_window_default_options(). */
typedef struct semroute_window_options {
  uint32_t struct_size; /* sizeof(semroute_window_options) */
  uint32_t size;
  uint32_t overlap;
  uint64_t max_document_tokens;
} semroute_window_options;

SEMROUTE_API semroute_window_options semroute_window_default_options(void);

/* One window: its text tokens [token_begin, token_end) in the document's
 * (special tokens excluded), the UTF-8 bytes [begin, end) they cover, and its
 * classification (scores as semroute_classifications_probabilities). */
typedef struct semroute_window {
  uint32_t struct_size; /* sizeof(semroute_window) in the library that filled it */
  uint64_t token_begin;
  uint64_t token_end;
  uint64_t begin;
  uint64_t end;
  int32_t class_id;
  const char* label; /* NUL-terminated */
  float confidence;
  const float* probabilities; /* num_labels floats, in label order */
  size_t num_labels;
} semroute_window;

typedef struct semroute_windows semroute_windows;

/* options may be NULL (defaults). *out is caller-owned (semroute_windows_free). */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_classify_windows(const semroute_model* model,
                                                                          const char* text, size_t length,
                                                                          const semroute_window_options* options,
                                                                          semroute_windows** out);
SEMROUTE_API size_t semroute_windows_count(const semroute_windows* windows);
/* Window i, borrowed from windows; NULL when out of range. */
SEMROUTE_API const semroute_window* semroute_windows_window(const semroute_windows* windows, size_t i);
/* The document's text tokens (special tokens excluded). */
SEMROUTE_API uint64_t semroute_windows_content_tokens(const semroute_windows* windows);
SEMROUTE_API void semroute_windows_free(semroute_windows* windows);

/* -------------------------------------------------- token classification */

/* An entity span (B-X / I-X tokens merged; docs/models.md gives the rules). */
typedef struct semroute_entity {
  uint32_t struct_size; /* sizeof(semroute_entity) in the library that filled it */
  const char* type;  /* "EMAIL" for B-EMAIL / I-EMAIL; NUL-terminated */
  uint64_t begin;    /* byte offsets into the input text, on UTF-8 boundaries */
  uint64_t end;
  const char* text;  /* the span's bytes, NUL-terminated (may contain NUL: use text_length) */
  size_t text_length;
  float score;       /* mean of the span's token probabilities */
} semroute_entity;

/* One token's prediction (special tokens excluded). */
typedef struct semroute_token_label {
  uint32_t struct_size; /* sizeof(semroute_token_label) in the library that filled it */
  int32_t token_id;
  int32_t label_id;
  const char* label; /* NUL-terminated */
  uint64_t begin;    /* byte offsets into the input text */
  uint64_t end;
  float probability;
} semroute_token_label;

typedef struct semroute_token_results semroute_token_results;

/* Token-classifies one text. *out is caller-owned (semroute_token_results_free). */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_token_classify(const semroute_model* model, const char* text,
                                                                        size_t length, semroute_token_results** out);

SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_token_classify_batch(const semroute_model* model,
                                                                              const char* texts,
                                                                              const uint64_t* offsets, size_t count,
                                                                              semroute_token_results** out);

SEMROUTE_API size_t semroute_token_results_count(const semroute_token_results* results);
/* Entities of text i: *out_count pointers to structs (and their strings)
 * borrowed from results; NULL (and 0) when there are none or i is out of range. */
SEMROUTE_API const semroute_entity* const* semroute_token_results_entities(const semroute_token_results* results, size_t i,
                                                                    size_t* out_count);
/* Per-token predictions of text i, borrowed from results, as above. */
SEMROUTE_API const semroute_token_label* const* semroute_token_results_tokens(const semroute_token_results* results,
                                                                       size_t i, size_t* out_count);
/* A long document token-classified window by window (windows as
 * semroute_classify_windows; never cut): one result, every text token once
 * (from the window where it has the most context on both sides) and entities
 * decoded over the whole document, with byte offsets into it. options may be
 * NULL. *out is caller-owned (semroute_token_results_free). */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_token_classify_windows(
    const semroute_model* model, const char* text, size_t length, const semroute_window_options* options,
    semroute_token_results** out);
/* The windows of a semroute_token_classify_windows result: *out_count
 * windows as (token_begin, token_end) pairs laid flat, in the document's text
 * tokens; *out_content_tokens (may be NULL) the document's text tokens.
 * Borrowed from results; NULL and 0 for a result of another call. */
SEMROUTE_API const uint64_t* semroute_token_results_windows(const semroute_token_results* results,
                                                            size_t* out_count, uint64_t* out_content_tokens);

/* What text i was (semroute_input_usage), borrowed from results; NULL when out of range. */
SEMROUTE_API const semroute_input_usage* semroute_token_results_input(const semroute_token_results* results, size_t i);
SEMROUTE_API void semroute_token_results_free(semroute_token_results* results);

/* ------------------------------------------------------------- embedding */

/* Embeds one text into out (caller buffer of capacity floats, at least
 * semroute_model_embedding_dim()). */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_embed(const semroute_model* model, const char* text,
                                                               size_t length, float* out, size_t capacity);

/* Embeds count texts into out, row after row (caller buffer of capacity floats,
 * at least count * semroute_model_embedding_dim()). */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_embed_batch(const semroute_model* model, const char* texts,
                                                                     const uint64_t* offsets, size_t count,
                                                                     float* out, size_t capacity);

/* Per-call embedding options: the "2D Matryoshka" (layer, dimension) pair of
 * one call, over what the model was loaded with. Start from
 * semroute_embed_default_options(). */
typedef struct semroute_embed_options {
  uint32_t struct_size; /* sizeof(semroute_embed_options) */
  uint32_t layer;       /* early exit after this many layers; 0 = the model's setting */
  uint32_t dimension;   /* keep the first N values (re-normalized); 0 = the model's setting */
} semroute_embed_options;

/* Defaults: the model's own layer and dimension. */
SEMROUTE_API semroute_embed_options semroute_embed_default_options(void);

/* semroute_embed_batch with per-call options (NULL: the model's settings).
 * Writes the width of each row to *out_dimension (may be NULL). */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_embed_batch_with(
    const semroute_model* model, const char* texts, const uint64_t* offsets, size_t count,
    const semroute_embed_options* options, float* out, size_t capacity, size_t* out_dimension);

typedef struct semroute_embeddings semroute_embeddings;

/* semroute_embed_batch_with as a result object that also says what each text
 * was (semroute_input_usage: tokens in, tokens read, truncated), count >= 1.
 * *out is caller-owned (semroute_embeddings_free). */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_embed_batch_result(const semroute_model* model,
                                                                            const char* texts,
                                                                            const uint64_t* offsets, size_t count,
                                                                            const semroute_embed_options* options,
                                                                            semroute_embeddings** out);
SEMROUTE_API size_t semroute_embeddings_count(const semroute_embeddings* embeddings);
/* Floats per embedding. */
SEMROUTE_API size_t semroute_embeddings_dimension(const semroute_embeddings* embeddings);
/* Embedding i (dimension floats), borrowed from embeddings; NULL when out of range. */
SEMROUTE_API const float* semroute_embeddings_vector(const semroute_embeddings* embeddings, size_t i);
/* What text i was, borrowed from embeddings; NULL when out of range. */
SEMROUTE_API const semroute_input_usage* semroute_embeddings_input(const semroute_embeddings* embeddings, size_t i);
SEMROUTE_API void semroute_embeddings_free(semroute_embeddings* embeddings);

/* Cosine similarity of two texts' embeddings, written to *out_similarity. */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_similarity(const semroute_model* model, const char* a,
                                                                    size_t a_length, const char* b, size_t b_length,
                                                                    float* out_similarity);

/* The k candidates most similar to the query, best first (ties: lower index
 * first). Writes min(k, count) entries into out_indices and out_scores
 * (caller buffers of k entries each) and that number into *out_found. */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_top_k(const semroute_model* model, const char* query,
                                                               size_t query_length, const char* candidates,
                                                               const uint64_t* offsets, size_t count, size_t k,
                                                               size_t* out_indices, float* out_scores,
                                                               size_t* out_found);

/* ------------------------------------------------------- pair scoring */

typedef struct semroute_pair_scores semroute_pair_scores;

/* One raw relevance logit per (queries[i], documents[i]) pair, read together
 * with the tokenizer's pair template (higher = more relevant; not a
 * probability). Batches as semroute_classify_batch; count >= 1. A pair longer
 * than max_length is cut or refused as the model's overflow says. *out is
 * caller-owned (semroute_pair_scores_free). Pair scoring models only. */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_score_pairs(const semroute_model* model, const char* queries,
                                                                     const uint64_t* query_offsets,
                                                                     const char* documents,
                                                                     const uint64_t* document_offsets, size_t count,
                                                                     semroute_pair_scores** out);
SEMROUTE_API size_t semroute_pair_scores_count(const semroute_pair_scores* scores);
/* Score i; NAN when out of range. */
SEMROUTE_API float semroute_pair_scores_score(const semroute_pair_scores* scores, size_t i);
/* What pair i was, borrowed from scores; NULL when out of range. */
SEMROUTE_API const semroute_input_usage* semroute_pair_scores_input(const semroute_pair_scores* scores, size_t i);
SEMROUTE_API void semroute_pair_scores_free(semroute_pair_scores* scores);

/* The k documents most relevant to the query by the pair scorer, best first
 * (ties: lower index first), as semroute_top_k writes them. */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_rerank(const semroute_model* model, const char* query,
                                                                size_t query_length, const char* documents,
                                                                const uint64_t* offsets, size_t count, size_t k,
                                                                size_t* out_indices, float* out_scores,
                                                                size_t* out_found);

/* ------------------------------------------- multi-task LoRA and unified */

typedef enum semroute_path {
  SEMROUTE_PATH_TRADITIONAL = 0, /* a separately fine-tuned model */
  SEMROUTE_PATH_LORA = 1         /* the multi-task engine (adapters over a shared base) */
} semroute_path;

/* One task's answer for one text. Strings are NUL-terminated. */
typedef struct semroute_task_answer {
  uint32_t struct_size;   /* sizeof(semroute_task_answer) in the library that filled it */
  const char* task;
  int32_t task_kind;      /* SEMROUTE_TASK_SEQUENCE_CLASSIFICATION or SEMROUTE_TASK_TOKEN_CLASSIFICATION */
  int32_t path;           /* semroute_path that produced the answer */
  const char* reason;     /* why that path (and any fallback) */
  double latency_ms;      /* duration of the call that produced it */
  const char* error;      /* NULL when answered; else why every path failed (the fields below are empty) */
  /* Sequence tasks. */
  int32_t class_id;
  const char* label;
  float confidence;
  const float* probabilities; /* num_labels floats, in label order */
  size_t num_labels;
  float risk;             /* total probability of the task's positive labels (0 without any) */
  int32_t flagged;        /* 1 when risk >= the task's threshold */
  /* Token tasks. */
  const semroute_entity* const* entities;
  size_t num_entities;
  /* Appended fields (read them only when struct_size covers them). */
  int32_t error_code;     /* the semroute_code of error; SEMROUTE_OK when answered */
} semroute_task_answer;

typedef struct semroute_task_results semroute_task_results;

SEMROUTE_API size_t semroute_task_results_count(const semroute_task_results* results);
/* The answers for text i, one per requested task in request order: *out_count
 * pointers to structs borrowed from results; NULL (and 0) when i is out of range. */
SEMROUTE_API const semroute_task_answer* const* semroute_task_results_answers(const semroute_task_results* results, size_t i,
                                                                       size_t* out_count);
SEMROUTE_API void semroute_task_results_free(semroute_task_results* results);

/* The multi-task engine: one base model and several task adapters, run in one
 * shared pass (layers below the first adapted layer once for all tasks). */
typedef struct semroute_engine semroute_engine;

typedef struct semroute_engine_task {
  uint32_t struct_size; /* sizeof(semroute_engine_task); the array is strided by tasks[0].struct_size */
  const char* name;    /* the task's name in requests and answers */
  const char* adapter; /* its PEFT adapter directory (with its head in modules_to_save) */
  int32_t task_kind;   /* SEMROUTE_TASK_AUTO (from the adapter's task_type), _SEQUENCE_ or _TOKEN_CLASSIFICATION */
} semroute_engine_task;

/* Loads `base` and `count` task adapters. params (may be NULL) supplies the
 * device, dtype, threads, max_length, truncation and tokenizer. *out_engine
 * is caller-owned (semroute_engine_free). */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_engine_load(const char* base,
                                                                     const semroute_engine_task* tasks, size_t count,
                                                                     const semroute_model_params* params,
                                                                     semroute_engine** out_engine);
SEMROUTE_API void semroute_engine_free(semroute_engine* engine);

/* Classifies count texts for task_count tasks named in one buffer + offsets
 * (task_count 0: every task). *out is caller-owned (semroute_task_results_free). */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_engine_classify(
    const semroute_engine* engine, const char* texts, const uint64_t* offsets, size_t count, const char* tasks,
    const uint64_t* task_offsets, size_t task_count, semroute_task_results** out);

/* The DualPathUnifiedClassifier, configured by a YAML file (docs/multitask.md):
 * per task a fine-tuned model, a LoRA adapter, or both, a path policy, a
 * latency budget, positive labels. */
typedef struct semroute_unified semroute_unified;

SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_unified_load(const char* config_path,
                                                                      semroute_unified** out_unified);
SEMROUTE_API void semroute_unified_free(semroute_unified* unified);

/* Classifies count texts for the named tasks (task_count 0: every task);
 * prefer_accuracy = 1 asks the auto policy for the fine-tuned models. */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_unified_classify(
    const semroute_unified* unified, const char* texts, const uint64_t* offsets, size_t count, const char* tasks,
    const uint64_t* task_offsets, size_t task_count, int prefer_accuracy, semroute_task_results** out);

/* The router (docs/router.md): a YAML config of signals,
 * decisions with conditions, and actions. Routing an OpenAI chat-completions
 * request computes only the signals the decisions still need and answers
 * with the decision, the rewritten request, headers and a trace. */
typedef struct semroute_router semroute_router;
typedef struct semroute_route semroute_route;

SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_router_load(const char* config_path,
                                                                     semroute_router** out_router);
SEMROUTE_API void semroute_router_free(semroute_router* router);

/* request_json: request_len bytes of a chat-completions request (or a
 * completions one with a "prompt"); metadata_json: a JSON object of string
 * values the conditions see as meta.<key> (user role, headers …), or NULL.
 * Thread-safe. */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_router_route(const semroute_router* router,
                                                                      const char* request_json, size_t request_len,
                                                                      const char* metadata_json, size_t metadata_len,
                                                                      semroute_route** out_route);
/* The decision's name ("default" when none matched). */
SEMROUTE_API const char* semroute_route_decision(const semroute_route* route);
SEMROUTE_API double semroute_route_confidence(const semroute_route* route);
/* 1 when the decision blocks the request: return semroute_route_response_json
 * to the caller instead of calling a model. */
SEMROUTE_API int semroute_route_blocked(const semroute_route* route);
/* The request's "model" after routing ("" when it has none). */
SEMROUTE_API const char* semroute_route_model(const semroute_route* route);
/* The rewritten request (every field the decision does not own unchanged). */
SEMROUTE_API const char* semroute_route_request_json(const semroute_route* route);
/* 1 when the answer comes from the semantic cache (semroute_route_response_json). */
SEMROUTE_API int semroute_route_cache_hit(const semroute_route* route);
/* The answer to return instead of calling a model: when blocked, a
 * chat.completion whose message is the reason; on a cache hit, the cached
 * answer. NULL otherwise. */
SEMROUTE_API const char* semroute_route_response_json(const semroute_route* route);
/* Headers for the upstream request (x-semroute-decision and the decision's). */
SEMROUTE_API size_t semroute_route_header_count(const semroute_route* route);
SEMROUTE_API const char* semroute_route_header_name(const semroute_route* route, size_t i);
SEMROUTE_API const char* semroute_route_header_value(const semroute_route* route, size_t i);
/* Everything, with the trace (decisions evaluated, signals computed with their
 * values and latency, signals skipped), as JSON. */
SEMROUTE_API const char* semroute_route_json(const semroute_route* route);
SEMROUTE_API void semroute_route_free(semroute_route* route);

/* After a cache miss of a decision with `cache: true`: stores the model's
 * answer (a chat.completion JSON object, answer_len bytes) for similar
 * prompts. *out_stored (may be NULL) is 1 when stored, 0 when the route had
 * nothing to store (no cache, a hit, a blocked request). Thread-safe. */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_router_store_answer(const semroute_router* router,
                                                                             const semroute_route* route,
                                                                             const char* answer_json, size_t answer_len,
                                                                             int* out_stored);

/* ------------------------------------------------- the model runtime contract */

/* The vLLM Semantic Router's model runtime contract, in process
 * (docs/runtime.md): the same JSON requests and answers `semroute serve`
 * gives on the same paths — POST /v1/classify, /v1/embeddings, /v1/rerank,
 * /v1/bundle, /v1/decisions; GET /v1/models, /health, /health/live — with
 * per-item errors, windows, operating points, grounded spans, pair-scorer
 * exits, package identity and golden checks. */
typedef struct semroute_runtime semroute_runtime;
typedef struct semroute_runtime_reply semroute_runtime_reply;

/* An empty runtime: at most max_bundle_tasks tasks per bundle (0 = 64) and
 * max_queue requests in flight per model (0 = 64; 429 overloaded beyond).
 * It keeps the answers of up to 16384 items (keyed by model identity, head,
 * options and input) and answers them again without a forward. */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_runtime_create(uint32_t max_bundle_tasks, uint32_t max_queue,
                                                                        semroute_runtime** out_runtime);
/* Adds the model directory `path` under `name` (1-64 of [A-Za-z0-9_.-]): a
 * task model, a sentence-transformers embedder or a pair scorer, as its
 * files say (params->task may name the kind; device, dtype, threads,
 * max_length, max_batch, max_wait_us as semroute_model_load; params may be
 * NULL). Its files are hashed first and checked against a SHA256SUMS
 * manifest, and its golden answers (golden_answers.json) at load: a model
 * that fails either is added as failed — not ready, its card and /health
 * saying why — which is not an error here. Errors: a directory that cannot
 * be read, a name already taken. Not to be called while calls run. */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_runtime_add_model(semroute_runtime* runtime, const char* name,
                                                                           const char* path,
                                                                           const semroute_model_params* params);
/* Adds one task model of `count` heads (1-64) bound to the encoder and
 * tokenizer at `backbone_path`: head_names[i] (as a request's "head" names
 * it; the first is the primary) is the head of the task checkpoint at
 * head_paths[i] (sequence or token classification as its config.json says;
 * its operating_point.json as for a package). One forward serves every
 * head: a bundle asking three heads about one text costs about one forward.
 * params as semroute_runtime_add_model (its task is ignored). */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_runtime_add_heads(semroute_runtime* runtime, const char* name,
                                                                           const char* backbone_path, size_t count,
                                                                           const char* const* head_names,
                                                                           const char* const* head_paths,
                                                                           const semroute_model_params* params);
/* One request: method "GET" or "POST", path as above, body (body_len bytes
 * of JSON; NULL for GET). Every answer, request errors included, is a reply
 * with its HTTP status; a status object only for misuse (a NULL runtime,
 * method or path). Thread-safe. */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_runtime_call(const semroute_runtime* runtime,
                                                                      const char* method, const char* path,
                                                                      const char* body, size_t body_len,
                                                                      semroute_runtime_reply** out_reply);
SEMROUTE_API int semroute_runtime_reply_status(const semroute_runtime_reply* reply);
/* The JSON answer (NUL-terminated; *length, when given, its bytes). */
SEMROUTE_API const char* semroute_runtime_reply_body(const semroute_runtime_reply* reply, size_t* length);
/* Server-Timing: "parse;dur=…, tokenize;dur=…, queue;dur=…, forward;dur=…,
 * post;dur=…, serialize;dur=…, total;dur=…" (ms); "" for GET paths. */
SEMROUTE_API const char* semroute_runtime_reply_server_timing(const semroute_runtime_reply* reply);
SEMROUTE_API void semroute_runtime_reply_free(semroute_runtime_reply* reply);
SEMROUTE_API void semroute_runtime_free(semroute_runtime* runtime);

/* ------------------------------------------------------ prompt compression */

/* A long prompt reduced to a "semantic skeleton" within a token budget, for
 * classifying it fast (the full prompt still goes to the LLM): the start and
 * end of the text kept, stop words dropped in between, the most informative
 * sentences kept (docs/compression.md). No model. */
typedef struct semroute_compress_params {
  uint32_t struct_size;      /* sizeof(semroute_compress_params) */
  uint32_t max_tokens;       /* the budget; default 512 */
  double head_ratio;         /* share of the budget for the text's start; default 0.2 */
  double tail_ratio;         /* and for its end; default 0.2 */
  int32_t drop_stop_words;   /* 1 (default) or 0 */
  const char* languages;     /* stop-word lists to choose from, comma-separated ("en,de"); NULL = every list shipped */
  const char* tokenizer;     /* tokenizer.json or a model directory: the budget counts its tokens;
                                NULL = words, punctuation marks and CJK characters */
} semroute_compress_params;

SEMROUTE_API semroute_compress_params semroute_compress_default_params(void);

typedef struct semroute_compressor semroute_compressor;
typedef struct semroute_compressed semroute_compressed;

/* params may be NULL (the defaults). *out is caller-owned (semroute_compressor_free). */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_compressor_new(const semroute_compress_params* params,
                                                                        semroute_compressor** out);
SEMROUTE_API void semroute_compressor_free(semroute_compressor* compressor);

/* Compresses length bytes of UTF-8 text. Thread-safe. *out is caller-owned
 * (semroute_compressed_free). */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_compress(const semroute_compressor* compressor,
                                                                  const char* text, size_t length,
                                                                  semroute_compressed** out);
/* The skeleton (the whole text when it fits the budget), borrowed; its length in *out_length (may be NULL). */
SEMROUTE_API const char* semroute_compressed_text(const semroute_compressed* compressed, size_t* out_length);
/* 1 when the text was reduced, 0 when it fit. */
SEMROUTE_API int semroute_compressed_reduced(const semroute_compressed* compressed);
/* Tokens of the skeleton, as the budget counts them. */
SEMROUTE_API size_t semroute_compressed_tokens(const semroute_compressed* compressed);
/* The stop-word list used ("en", …; "" for none), borrowed. */
SEMROUTE_API const char* semroute_compressed_language(const semroute_compressed* compressed);
/* The kept byte ranges of the original, in order: 2 * count values (begin,
 * end, begin, end …), borrowed. The skeleton is these ranges joined by "\n"
 * where the original held a newline between them, else by " ". */
SEMROUTE_API const uint64_t* semroute_compressed_ranges(const semroute_compressed* compressed, size_t* out_count);
SEMROUTE_API void semroute_compressed_free(semroute_compressed* compressed);

/* ------------------------------------------------- hallucination detection */

/* Which parts of an LLM's answer the request's ground truth (retrieved
 * context, tool results) does not support, judged sentence by sentence: a
 * LettuceDetect-style token classifier finds unsupported spans, an optional
 * NLI model explains each (docs/hallucination.md). */
typedef struct semroute_halluc_params {
  uint32_t struct_size;            /* sizeof(semroute_halluc_params) */
  const char* nli_model;           /* an NLI sequence classifier directory; NULL = none */
  const char* input_template;      /* "lettucedetect" (default) or "halugate" */
  double threshold;                /* a token is unsupported from this probability on; default 0.5 */
  uint32_t min_span_words;         /* default 1 */
  double min_span_score;           /* default 0 */
  uint32_t context_windows;        /* context windows read per sentence, best matches first; default 2; 0 = all */
  uint32_t window_overlap;         /* tokens neighbouring windows share; default 32 */
  uint32_t answer_tokens;          /* room for the answer in each input; default 192 */
  uint32_t answer_context_bytes;   /* answer before a sentence given with it; default 512 */
  uint32_t max_sentence_bytes;     /* longer sentences are judged in pieces; default 1024 */
  int32_t nli_filter;              /* 1 (default): drop spans of sentences the NLI model finds entailed */
  double nli_entailment_threshold; /* default 0.75 */
  double nli_confidence;           /* below it a span's severity drops one step; default 0.7 */
  const semroute_model_params* model; /* device, dtype, threads, max_length … for both models; NULL = defaults */
} semroute_halluc_params;

SEMROUTE_API semroute_halluc_params semroute_halluc_default_params(void);

typedef enum semroute_halluc_event {
  SEMROUTE_HALLUC_OK = 0,   /* the sentence is supported */
  SEMROUTE_HALLUC_WARN = 1, /* it has unsupported spans */
  SEMROUTE_HALLUC_STOP = 2  /* a span reached the stream's stop severity: end the stream */
} semroute_halluc_event;

typedef struct semroute_halluc_span {
  uint32_t struct_size;  /* sizeof(semroute_halluc_span) in the library that filled it */
  uint64_t begin;        /* bytes of the answer */
  uint64_t end;
  double score;          /* highest token probability of being unsupported */
  const char* nli_label; /* "entailment", "neutral", "contradiction"; "" without an NLI model */
  double entailment, neutral, contradiction;
  int32_t severity;      /* 0 low, 1 low-medium, 2 medium, 3 high, 4 critical */
} semroute_halluc_span;

typedef struct semroute_halluc_sentence {
  uint32_t struct_size;  /* sizeof(semroute_halluc_sentence) in the library that filled it */
  uint64_t begin;        /* bytes of the answer */
  uint64_t end;
  int32_t event;         /* semroute_halluc_event */
  double max_score;      /* highest token score of the sentence */
  double latency_ms;     /* time to judge it */
  size_t span_count;
  const semroute_halluc_span* const* spans;
} semroute_halluc_sentence;

typedef struct semroute_halluc semroute_halluc;
typedef struct semroute_halluc_stream semroute_halluc_stream;
typedef struct semroute_halluc_result semroute_halluc_result;

/* detector_model: a token classifier directory (labels supported /
 * hallucinated). params may be NULL. *out is caller-owned (semroute_halluc_free). */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_halluc_load(const char* detector_model,
                                                                     const semroute_halluc_params* params,
                                                                     semroute_halluc** out);
SEMROUTE_API void semroute_halluc_free(semroute_halluc* detector);

/* Checks a whole answer against context (and the question, may be empty).
 * Thread-safe. *out is caller-owned (semroute_halluc_result_free). */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_halluc_detect(const semroute_halluc* detector,
                                                                       const char* context, size_t context_len,
                                                                       const char* question, size_t question_len,
                                                                       const char* answer, size_t answer_len,
                                                                       semroute_halluc_result** out);

/* A stream of answer chunks checked as they arrive: sse = 1 reads the raw
 * bytes of an OpenAI SSE stream (data: lines, comments, [DONE]), sse = 0
 * plain text deltas. stop_severity > 0: a span at least that severe gives a
 * STOP event and ends the stream. The stream keeps the detector alive; one
 * caller at a time per stream. *out is caller-owned (semroute_halluc_stream_free). */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_halluc_stream_open(const semroute_halluc* detector,
                                                                            const char* context, size_t context_len,
                                                                            const char* question, size_t question_len,
                                                                            int sse, int stop_severity,
                                                                            semroute_halluc_stream** out);
/* The sentences the chunk completes, judged. A malformed chunk fails the
 * stream: later calls fail too. */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_halluc_stream_feed(semroute_halluc_stream* stream,
                                                                            const char* chunk, size_t length,
                                                                            semroute_halluc_result** out);
/* The end of the answer: its last sentence, judged. */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_halluc_stream_finish(semroute_halluc_stream* stream,
                                                                              semroute_halluc_result** out);
SEMROUTE_API void semroute_halluc_stream_free(semroute_halluc_stream* stream);

SEMROUTE_API size_t semroute_halluc_result_count(const semroute_halluc_result* result);
/* Sentence i, borrowed from result; NULL out of range. */
SEMROUTE_API const semroute_halluc_sentence* semroute_halluc_result_sentence(const semroute_halluc_result* result,
                                                                             size_t i);
SEMROUTE_API void semroute_halluc_result_free(semroute_halluc_result* result);

/* 1 when the route's decision asks for its answer to be checked
 * (`check_answer: true` with a `hallucination:` section in the config). */
SEMROUTE_API int semroute_route_check_answer(const semroute_route* route);
/* A stream checking the model's answer to a routed request (feed it with
 * semroute_halluc_stream_feed) against context, or when context_len is 0
 * against the request's tool messages; the question is the prompt; the
 * config's stop_severity applies. Thread-safe. *out is caller-owned
 * (semroute_halluc_stream_free). */
SEMROUTE_API SEMROUTE_MUST_USE semroute_status* semroute_router_check_answer(const semroute_router* router,
                                                                             const semroute_route* route,
                                                                             const char* context, size_t context_len,
                                                                             int sse, semroute_halluc_stream** out);

#ifdef __cplusplus
}
#endif

#endif /* SEMROUTE_H */
