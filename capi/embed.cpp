// Embeddings into caller buffers, the cosine similarity of two texts, and the
// top-k candidates for a query.
#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "handles.h"
#include "semroute/error.h"

using namespace semroute::capi;
using semroute::InvalidInput;

namespace {

const semroute::Embedder& embedder_of(const semroute_model* model, const char* call) {
  return *model_for(model, SEMROUTE_TASK_EMBEDDING, call).embedder;
}

// [texts, dim] float32, contiguous on the CPU.
at::Tensor embed(const semroute::Embedder& embedder, const std::vector<std::string_view>& texts) {
  if (texts.empty()) return at::empty({0, embedder.dimension()}, at::kFloat);
  return embedder.embed(texts).contiguous();
}

void copy_rows(const at::Tensor& rows, float* out, size_t capacity) {
  const size_t needed = static_cast<size_t>(rows.numel());
  if (needed == 0) return;
  require(out, "out");
  if (capacity < needed)
    throw InvalidInput("output buffer holds " + std::to_string(capacity) + " floats; " + std::to_string(needed) +
                       " are needed");
  std::memcpy(out, rows.data_ptr<float>(), needed * sizeof(float));
}

// Cosine similarities of one row against every row of `candidates`.
at::Tensor cosine(const at::Tensor& query, const at::Tensor& candidates) {
  const at::Tensor q = query / query.norm().clamp_min(1e-12);
  const at::Tensor c = candidates / candidates.norm(2, {1}, true).clamp_min(1e-12);
  return at::mv(c, q);
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
    const auto& embedder = embedder_of(model, "semroute_embed");
    copy_rows(embed(embedder, batch_views(texts, offsets, count, "texts")), out, capacity);
  });
}

semroute_status* semroute_similarity(const semroute_model* model, const char* a, size_t a_length, const char* b,
                                     size_t b_length, float* out_similarity) {
  return guarded([&] {
    const auto& embedder = embedder_of(model, "semroute_similarity");
    require(out_similarity, "out_similarity");
    const at::Tensor e = embed(embedder, {text_view(a, a_length, "a"), text_view(b, b_length, "b")});
    *out_similarity = cosine(e[0], e.narrow(0, 1, 1)).item<float>();
  });
}

semroute_status* semroute_top_k(const semroute_model* model, const char* query, size_t query_length,
                                const char* candidates, const uint64_t* offsets, size_t count, size_t k,
                                size_t* out_indices, float* out_scores, size_t* out_found) {
  if (out_found != nullptr) *out_found = 0;
  return guarded([&] {
    const auto& embedder = embedder_of(model, "semroute_top_k");
    require(out_found, "out_found");
    const size_t found = std::min(k, count);
    if (found > 0) {
      require(out_indices, "out_indices");
      require(out_scores, "out_scores");
    }
    std::vector<std::string_view> texts = batch_views(candidates, offsets, count, "candidates");
    texts.insert(texts.begin(), text_view(query, query_length, "query"));
    const at::Tensor e = embed(embedder, texts);
    const at::Tensor scores = cosine(e[0], e.narrow(0, 1, static_cast<int64_t>(count))).contiguous();
    const float* s = scores.data_ptr<float>();
    std::vector<size_t> order(count);
    std::iota(order.begin(), order.end(), size_t{0});
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(found), order.end(),
                      [s](size_t x, size_t y) { return s[x] > s[y] || (s[x] == s[y] && x < y); });
    for (size_t i = 0; i < found; ++i) {
      out_indices[i] = order[i];
      out_scores[i] = s[order[i]];
    }
    *out_found = found;
  });
}

}  // extern "C"
