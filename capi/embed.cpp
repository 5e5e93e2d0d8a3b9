// Embeddings into caller buffers, the cosine similarity of two texts, and the
// top-k candidates for a query.
#include <algorithm>
#include <cstring>

#include "classifiers/vector_index.h"
#include "handles.h"
#include "semroute/error.h"

using namespace semroute::capi;
using semroute::InvalidInput;

namespace {

const semroute::Embedder& embedder_of(const semroute_model* model, const char* call) {
  return *model_for(model, SEMROUTE_TASK_EMBEDDING, call).embedder;
}

void copy_rows(const std::vector<float>& rows, float* out, size_t capacity) {
  const size_t needed = rows.size();
  if (needed == 0) return;
  require(out, "out");
  if (capacity < needed)
    throw InvalidInput("output buffer holds " + std::to_string(capacity) + " floats; " + std::to_string(needed) +
                       " are needed");
  std::memcpy(out, rows.data(), needed * sizeof(float));
}

// The model's embedding options with the caller's per-call ones (NULL: none).
semroute::EmbeddingOptions options_of(const semroute::Embedder& embedder, const semroute_embed_options* options) {
  semroute::EmbeddingOptions chosen = embedder.defaults();
  if (options != nullptr) {
    const auto given = caller_struct(options, semroute_embed_default_options(), "options");
    if (given.layer > 0) chosen.layer = given.layer;
    if (given.dimension > 0) chosen.dimension = given.dimension;
  }
  return chosen;
}

}  // namespace

extern "C" {

semroute_status* semroute_embed(const semroute_model* model, const char* text, size_t length, float* out,
                                size_t capacity) {
  const uint64_t offsets[2] = {0, length};
  return semroute_embed_batch(model, text, offsets, 1, out, capacity);
}

semroute_status* semroute_embed_batch(const semroute_model* model, const char* texts, const uint64_t* offsets,
                                      size_t count, float* out, size_t capacity) {
  return guarded([&] {
    embedder_of(model, "semroute_embed");
    copy_rows(model->embed_rows(batch_views(texts, offsets, count, "texts")), out, capacity);
  });
}

semroute_embed_options semroute_embed_default_options(void) {
  semroute_embed_options o{};
  o.struct_size = sizeof o;
  return o;
}

semroute_status* semroute_embed_batch_with(const semroute_model* model, const char* texts, const uint64_t* offsets,
                                           size_t count, const semroute_embed_options* options, float* out,
                                           size_t capacity, size_t* out_dimension) {
  if (out_dimension != nullptr) *out_dimension = 0;
  return guarded([&] {
    const auto& embedder = embedder_of(model, "semroute_embed_batch_with");
    const std::vector<float> rows =
        embedder.embed_rows(batch_views(texts, offsets, count, "texts"), options_of(embedder, options));
    copy_rows(rows, out, capacity);
    if (out_dimension != nullptr && count > 0) *out_dimension = rows.size() / count;
  });
}

semroute_status* semroute_embed_batch_result(const semroute_model* model, const char* texts, const uint64_t* offsets,
                                             size_t count, const semroute_embed_options* options,
                                             semroute_embeddings** out) {
  if (out != nullptr) *out = nullptr;
  return guarded([&] {
    const auto& embedder = embedder_of(model, "semroute_embed_batch_result");
    require(out, "out");
    std::vector<semroute::InputUsage> usage;
    const at::Tensor rows =
        embedder.embed(batch_views(texts, offsets, count, "texts"), options_of(embedder, options), &usage).contiguous();
    auto result = std::make_unique<semroute_embeddings>();
    result->dimension = static_cast<size_t>(rows.size(1));
    result->rows.assign(rows.data_ptr<float>(), rows.data_ptr<float>() + rows.numel());
    for (const auto& u : usage) result->inputs.push_back(input_usage_of(u));
    *out = result.release();
  });
}

size_t semroute_embeddings_count(const semroute_embeddings* embeddings) {
  return embeddings != nullptr ? embeddings->inputs.size() : 0;
}

size_t semroute_embeddings_dimension(const semroute_embeddings* embeddings) {
  return embeddings != nullptr ? embeddings->dimension : 0;
}

const float* semroute_embeddings_vector(const semroute_embeddings* embeddings, size_t i) {
  if (embeddings == nullptr || i >= embeddings->inputs.size()) return nullptr;
  return embeddings->rows.data() + i * embeddings->dimension;
}

const semroute_input_usage* semroute_embeddings_input(const semroute_embeddings* embeddings, size_t i) {
  return embeddings != nullptr && i < embeddings->inputs.size() ? &embeddings->inputs[i] : nullptr;
}

void semroute_embeddings_free(semroute_embeddings* embeddings) { delete embeddings; }

semroute_status* semroute_similarity(const semroute_model* model, const char* a, size_t a_length, const char* b,
                                     size_t b_length, float* out_similarity) {
  return guarded([&] {
    const auto& embedder = embedder_of(model, "semroute_similarity");
    require(out_similarity, "out_similarity");
    const std::vector<float> e = model->embed_rows({text_view(a, a_length, "a"), text_view(b, b_length, "b")});
    const int64_t dim = embedder.dimension();
    *out_similarity = semroute::cosine_similarity(e.data(), e.data() + dim, dim);
  });
}

semroute_status* semroute_top_k(const semroute_model* model, const char* query, size_t query_length,
                                const char* candidates, const uint64_t* offsets, size_t count, size_t k,
                                size_t* out_indices, float* out_scores, size_t* out_found) {
  if (out_found != nullptr) *out_found = 0;
  return guarded([&] {
    const auto& embedder = embedder_of(model, "semroute_top_k");
    const size_t found = ranked_count(k, count, out_indices, out_scores, out_found);
    std::vector<std::string_view> texts = batch_views(candidates, offsets, count, "candidates");
    texts.insert(texts.begin(), text_view(query, query_length, "query"));
    const std::vector<float> e = model->embed_rows(texts);
    const int64_t dim = embedder.dimension();
    semroute::VectorIndex index(dim);
    for (size_t i = 1; i <= count; ++i) index.add(e.data() + i * static_cast<size_t>(dim), dim);
    const auto best = index.search(e.data(), dim, static_cast<int64_t>(found));
    for (size_t i = 0; i < found; ++i) {
      out_indices[i] = static_cast<size_t>(best[i].row);
      out_scores[i] = best[i].score;
    }
    *out_found = found;
  });
}

}  // extern "C"
