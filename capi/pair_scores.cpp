// Scoring (query, document) pairs with a cross-encoder, and reranking.

#include <algorithm>
#include <cmath>
#include <numeric>

#include "handles.h"
#include "semroute/error.h"

using namespace semroute::capi;

namespace {

const semroute::PairScorer& scorer_of(const semroute_model* model, const char* call) {
  return *model_for(model, SEMROUTE_TASK_PAIR_SCORING, call).pair_scorer;
}

}  // namespace

extern "C" {

semroute_status* semroute_score_pairs(const semroute_model* model, const char* queries, const uint64_t* query_offsets,
                                      const char* documents, const uint64_t* document_offsets, size_t count,
                                      semroute_pair_scores** out) {
  if (out != nullptr) *out = nullptr;
  return guarded([&] {
    const auto& scorer = scorer_of(model, "semroute_score_pairs");
    require(out, "out");
    const auto pairs = pair_views(queries, query_offsets, documents, document_offsets, count, "queries", "documents");
    auto results = std::make_unique<semroute_pair_scores>();
    results->items = scorer.score(pairs);
    for (const auto& item : results->items) results->inputs.push_back(input_usage_of(item.input));
    *out = results.release();
  });
}

size_t semroute_pair_scores_count(const semroute_pair_scores* scores) {
  return scores != nullptr ? scores->items.size() : 0;
}

float semroute_pair_scores_score(const semroute_pair_scores* scores, size_t i) {
  return scores != nullptr && i < scores->items.size() ? scores->items[i].score : NAN;
}

const semroute_input_usage* semroute_pair_scores_input(const semroute_pair_scores* scores, size_t i) {
  return scores != nullptr && i < scores->inputs.size() ? &scores->inputs[i] : nullptr;
}

void semroute_pair_scores_free(semroute_pair_scores* scores) { delete scores; }

semroute_status* semroute_rerank(const semroute_model* model, const char* query, size_t query_length,
                                 const char* documents, const uint64_t* offsets, size_t count, size_t k,
                                 size_t* out_indices, float* out_scores, size_t* out_found) {
  if (out_found != nullptr) *out_found = 0;
  return guarded([&] {
    const auto& scorer = scorer_of(model, "semroute_rerank");
    const size_t found = ranked_count(k, count, out_indices, out_scores, out_found);
    const std::string_view q = text_view(query, query_length, "query");
    if (count == 0) return;
    std::vector<semroute::TextPair> pairs;
    for (const auto d : batch_views(documents, offsets, count, "documents")) pairs.emplace_back(q, d);
    const auto scores = scorer.score(pairs);
    std::vector<size_t> order(count);
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return scores[a].score > scores[b].score; });
    for (size_t i = 0; i < found; ++i) {
      out_indices[i] = order[i];
      out_scores[i] = scores[order[i]].score;
    }
    *out_found = found;
  });
}

}  // extern "C"
