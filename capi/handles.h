// What the C API's opaque types are, and the one guard every entry point runs
// its body in: exceptions become status objects, never cross the boundary.
#pragma once

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/runtime.h"
#include "semroute/error.h"
#include "semroute/semroute.h"
#include "classifiers/unified_classifier.h"
#include "hallucination/answer_stream.h"
#include "tasks/batcher.h"
#include "tasks/multitask_engine.h"
#include "tasks/embedder.h"
#include "tasks/pair_scorer.h"
#include "tasks/sequence_classifier.h"
#include "tasks/token_classifier.h"

struct semroute_status {
  semroute_code code;
  std::string message;
};

// A loaded model: exactly one of the three pipelines (or, for an encoder
// alone, the backbone) is set, by task.
struct semroute_model {
  semroute_task task = SEMROUTE_TASK_AUTO;
  std::string model_type;
  std::string architecture;
  std::shared_ptr<const semroute::SequenceClassifier> sequence;
  std::shared_ptr<const semroute::TokenClassifier> token;
  std::shared_ptr<const semroute::Embedder> embedder;
  std::shared_ptr<const semroute::PairScorer> pair_scorer;
  semroute::Backbone backbone;          // SEMROUTE_TASK_ENCODER
  semroute::EncodeOptions backbone_encode;
  // With dynamic batching (max_batch > 1), the pipeline's calls go through one of these.
  std::unique_ptr<const semroute::Batcher<semroute::Classification>> sequence_batcher;
  std::unique_ptr<const semroute::Batcher<semroute::TokenClassification>> token_batcher;
  std::unique_ptr<const semroute::Batcher<std::vector<float>>> embed_batcher;

  std::vector<semroute::Classification> classify(const std::vector<std::string_view>& texts) const;
  std::vector<semroute::TokenClassification> classify_tokens(const std::vector<std::string_view>& texts) const;
  // Embeddings with the handle's defaults, row after row.
  std::vector<float> embed_rows(const std::vector<std::string_view>& texts) const;

  const semroute::Tokenizer& tokenizer() const;
  // The encoder (and tokenizer) heads can be bound to; InvalidInput for an embedding model.
  semroute::Backbone bindable_backbone() const;
  const semroute::EncodeOptions& encode_options() const;
  const std::vector<std::string>& labels() const;
};

struct semroute_tokens {
  semroute::Encoding encoding;
  std::vector<uint64_t> offsets;  // begin, end per token
};

struct semroute_classifications {
  std::vector<semroute::Classification> items;
  std::vector<semroute_input_usage> inputs;  // C views of items[i].input
};

namespace semroute::capi {

inline semroute_input_usage input_usage_of(const InputUsage& u) {
  return {sizeof(semroute_input_usage), u.input_tokens, u.processed_tokens, u.truncated ? 1 : 0};
}

// Lists of C structs handed out as arrays of pointers (the header's rule, so
// that structs can grow): add every list, then seal() builds the pointers.
template <class T>
struct CLists {
  std::vector<std::vector<T>> structs;
  std::vector<std::vector<const T*>> pointers;

  std::vector<T>& add() { return structs.emplace_back(); }
  void seal() {
    for (const auto& list : structs) {
      auto& p = pointers.emplace_back();
      for (const auto& item : list) p.push_back(&item);
    }
  }
  // List i as (pointers, count); NULL and 0 when out of range or empty.
  const T* const* at(size_t i, size_t* out_count) const {
    const bool valid = i < pointers.size() && !pointers[i].empty();
    if (out_count != nullptr) *out_count = valid ? pointers[i].size() : 0;
    return valid ? pointers[i].data() : nullptr;
  }
};

}  // namespace semroute::capi

struct semroute_embeddings {
  std::vector<float> rows;  // count x dimension
  size_t dimension = 0;
  std::vector<semroute_input_usage> inputs;
};

struct semroute_pair_scores {
  std::vector<semroute::ScoredPair> items;
  std::vector<semroute_input_usage> inputs;  // C views of items[i].input
};

struct semroute_windows {
  semroute::DocumentClassification document;
  std::vector<semroute_window> views;  // C views of document.windows, which must not move
};

struct semroute_token_results {
  std::vector<semroute::TokenClassification> items;
  // C views of items (pointers into its strings: built once items is final).
  semroute::capi::CLists<semroute_entity> entities;
  semroute::capi::CLists<semroute_token_label> tokens;
  std::vector<semroute_input_usage> inputs;
  std::vector<uint64_t> windows;  // token windows: begin, end per window
  uint64_t content_tokens = 0;
};

// An answer checked as it streams (a detector's, or a routed request's).
struct semroute_halluc_stream {
  std::unique_ptr<semroute::AnswerStream> stream;
};

struct semroute_engine {
  std::shared_ptr<const semroute::MultiTaskEngine> engine;
  // With dynamic batching: calls asking for the same tasks are coalesced.
  std::unique_ptr<const semroute::KeyedBatcher<std::vector<std::string>, semroute::UnifiedResult>> batcher;
};

struct semroute_unified {
  std::shared_ptr<const semroute::UnifiedClassifier> unified;
  // With dynamic batching (max_batch in the YAML): per (tasks, prefer_accuracy).
  std::unique_ptr<const semroute::KeyedBatcher<std::pair<std::vector<std::string>, bool>, semroute::UnifiedResult>>
      batcher;
};

struct semroute_task_results {
  std::vector<semroute::UnifiedResult> items;
  // C views of items, built once items is final.
  semroute::capi::CLists<semroute_entity> entities;      // per (text, answer)
  semroute::capi::CLists<semroute_task_answer> answers;  // per text
};

namespace semroute::capi {

// A status for `code` and `message`; a static out-of-memory status when even
// that allocation fails.
semroute_status* make_status(semroute_code code, std::string_view message) noexcept;

// A status describing the exception being handled.
semroute_status* status_of_current_exception() noexcept;

// Runs `body`; returns NULL on success, else a status describing what it threw.
template <class Body>
semroute_status* guarded(Body&& body) noexcept {
  try {
    body();
    return nullptr;
  } catch (...) {
    return status_of_current_exception();
  }
}

// guarded() for the functions that load: the OpenMP team loading started on
// the caller's thread is freed when done, so it does not sit idle and
// throttle the teams of the threads that then compute (core/runtime.h).
template <class Body>
semroute_status* guarded_load(Body&& body) noexcept {
  struct Release {
    ~Release() { release_openmp_team(); }
  };
  return guarded([&] {
    const Release release;
    body();
  });
}

// The caller's struct at `given` over `defaults`, reading only the fields its
// header knew of (a smaller struct_size comes from an older header); a
// struct_size larger than ours or too small for the field is InvalidInput.
template <class T>
T caller_struct(const void* given, T defaults, const char* what) {
  uint32_t size = 0;
  std::memcpy(&size, given, sizeof size);
  if (size < sizeof(uint32_t) || size > sizeof(T))
    throw InvalidInput(std::string(what) + ".struct_size is " + std::to_string(size) +
                       ": set it to sizeof the struct (the *_default_params() functions do)");
  std::memcpy(&defaults, given, size);
  return defaults;
}

// The caller's params over the defaults (NULL: the defaults).
semroute_model_params effective_params(const semroute_model_params* given);
// Converts the C entity of `e` (strings borrowed from it).
semroute_entity entity_of(const semroute::EntitySpan& e);
// Device and dtype of `p`; applies its thread count.
LoadOptions load_options_of(const semroute_model_params& p);
// The one conversion of params into what the pipelines load with.
PipelineOptions pipeline_options_of(const semroute_model_params& p);
TaskOptions task_options_of(const semroute_model_params& p);
std::string string_or(const char* s, const char* fallback);

// Throws InvalidInput naming `what` when `p` is NULL.
void require(const void* p, const char* what);

// The model, or InvalidInput when NULL or not loaded for `task`.
const semroute_model& model_for(const semroute_model* model, semroute_task task, const char* call);

// The number of best matches a ranking call (semroute_top_k, semroute_rerank)
// writes, min(k, count), after checking its output buffers.
inline size_t ranked_count(size_t k, size_t count, const size_t* out_indices, const float* out_scores,
                           const size_t* out_found) {
  require(out_found, "out_found");
  const size_t found = std::min(k, count);
  if (found > 0) {
    require(out_indices, "out_indices");
    require(out_scores, "out_scores");
  }
  return found;
}

// One text as a view; NULL is allowed only with length 0.
std::string_view text_view(const char* text, size_t length, const char* what);

// A batch (buffer + count + 1 nondecreasing offsets) as views; at most
// kMaxBatchTexts texts per call.
inline constexpr size_t kMaxBatchTexts = size_t{1} << 20;
std::vector<std::string_view> batch_views(const char* texts, const uint64_t* offsets, size_t count,
                                          const char* what);
// Two batches of `count` texts, named in errors as given, as (first[i], second[i]) pairs.
std::vector<TextPair> pair_views(const char* firsts, const uint64_t* first_offsets, const char* seconds,
                                 const uint64_t* second_offsets, size_t count, const char* first_name,
                                 const char* second_name);

}  // namespace semroute::capi
