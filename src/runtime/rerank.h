// A pair scorer served under the model runtime's contract (/v1/rerank):
// documents scored against a query at one of the model's trained exits. The
// query is tokenized once and read within the budget; each document within
// what the query leaves (read only that far), so a document over it fails
// alone (max_length_exceeded) and a blank one is invalid_input. Immutable
// after load; rerank() may be called from many threads at once.
#pragma once

#include <map>
#include <memory>
#include <string_view>
#include <vector>

#include "runtime/forwards.h"
#include "runtime/item_results.h"
#include "runtime/request_control.h"
#include "tasks/pair_scorer.h"

namespace semroute {

struct RerankRequest {
  PairExit exit;          // {0, 0}: the model's default
  size_t max_tokens = 0;  // per pair, special tokens included; 0: the model's limit
};

struct RerankAnswer {
  ItemError error = ItemError::kNone;
  double logit = 0;  // raw; the relevance score is its sigmoid
  InputFacts input;
};

class RerankModel {
 public:
  static std::shared_ptr<const RerankModel> load(const std::filesystem::path& dir, const PairScorerOptions& options,
                                                 const BatchingOptions& batching);
  ~RerankModel();

  const PairScorer& scorer() const { return *scorer_; }
  size_t max_input_tokens() const { return scorer_->encode_options().max_length; }

  // InvalidInput for a blank query, an exit without a trained head, or
  // max_tokens over the limit; one answer per document, in order.
  std::vector<RerankAnswer> rerank(std::string_view query, const std::vector<std::string_view>& documents,
                                   const RerankRequest& request, const RequestControl& control) const;

 private:
  RerankModel() = default;
  std::vector<at::Tensor> forward(PairExit exit, const std::vector<const Encoding*>& encodings) const;

  std::shared_ptr<const PairScorer> scorer_;
  std::map<PairExit, std::unique_ptr<EncodingBatcher>> batchers_;
};

// Whether `text` holds nothing but Unicode white space.
bool is_blank(std::string_view text);

}  // namespace semroute
