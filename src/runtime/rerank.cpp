#include "runtime/rerank.h"

#include <ATen/ATen.h>

#include <cmath>

#include "semroute/error.h"
#include "tokenizers/unicode.h"

namespace semroute {

bool is_blank(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    size_t length = 1;
    if (!unicode::is_whitespace(unicode::decode(text, i, &length))) return false;
    i += length;
  }
  return true;
}

std::shared_ptr<const RerankModel> RerankModel::load(const std::filesystem::path& dir, const PairScorerOptions& options,
                                                     const BatchingOptions& batching) {
  std::shared_ptr<RerankModel> m(new RerankModel());
  m->scorer_ = PairScorer::load(dir, options);
  if (batching.enabled()) {
    for (const PairExit exit : m->scorer_->exits()) {
      const RerankModel* self = m.get();
      m->batchers_.emplace(exit, std::make_unique<EncodingBatcher>(
                                     [self, exit](const std::vector<const Encoding*>& encodings) {
                                       return self->forward(exit, encodings);
                                     },
                                     batching, encoding_tokens));
    }
  }
  return m;
}

RerankModel::~RerankModel() = default;

std::vector<at::Tensor> RerankModel::forward(PairExit exit, const std::vector<const Encoding*>& encodings) const {
  return forward_rows(encodings, scorer_->tokenizer(), scorer_->encoder()->device(),
                      [&](const TextBatch& batch) { return scorer_->logits(batch.inputs, exit); }, false);
}

std::vector<RerankAnswer> RerankModel::rerank(std::string_view query, const std::vector<std::string_view>& documents,
                                              const RerankRequest& request, const RequestControl& control) const {
  const PairExit exit = request.exit.layer > 0 ? request.exit : scorer_->default_exit();
  bool trained = false;
  for (const PairExit e : scorer_->exits()) trained = trained || e == exit;
  if (!trained)
    throw InvalidInput("layer " + std::to_string(exit.layer) + " and dimensions " + std::to_string(exit.dimension) +
                       " are not a trained pair scorer of this model");
  if (is_blank(query)) throw InvalidInput("\"query\": a text that is not blank");
  const size_t budget = request.max_tokens > 0 ? request.max_tokens : max_input_tokens();
  if (budget > max_input_tokens())
    throw InvalidInput("options.max_tokens: " + std::to_string(budget) + " is over the model's limit of " +
                       std::to_string(max_input_tokens()) + " tokens");
  const Tokenizer& tokenizer = scorer_->tokenizer();
  const size_t specials = tokenizer.special_tokens(true);
  if (budget <= specials) throw InvalidInput("options.max_tokens: no room for text beside the special tokens");
  const auto tokenize_start = RequestControl::Clock::now();
  const size_t room = budget - specials;
  EncodeOptions bounded;
  bounded.add_special_tokens = false;
  bounded.max_length = room + 1;
  const Encoding q = tokenizer.encode(query, bounded);
  std::vector<RerankAnswer> answers(documents.size());
  std::vector<Encoding> pairs(documents.size());
  std::vector<size_t> owners;
  std::vector<const Encoding*> todo;
  for (size_t i = 0; i < documents.size(); ++i) {
    RerankAnswer& a = answers[i];
    if (is_blank(documents[i])) {
      a.error = ItemError::kInvalidInput;
      continue;
    }
    if (q.size() > room) {
      a.error = ItemError::kMaxLengthExceeded;
      continue;
    }
    bounded.max_length = room - q.size() + 1;
    Encoding d = tokenizer.encode(documents[i], bounded);
    const size_t tokens = q.size() + d.size() + specials;
    a.input = {tokens, tokens, false, d.truncated, 0};
    if (tokens > budget) {
      a.error = ItemError::kMaxLengthExceeded;
      continue;
    }
    pairs[i] = tokenizer.with_special_tokens(q, std::move(d));
    owners.push_back(i);
    todo.push_back(&pairs[i]);
  }
  control.add_time(&WorkTimes::tokenize, tokenize_start);
  const auto found = batchers_.find(exit);
  const std::vector<at::Tensor> logits = forward_pieces(todo, control, found == batchers_.end() ? nullptr : found->second.get(),
                                                        [&](const auto& piece) { return forward(exit, piece); });
  for (size_t k = 0; k < todo.size(); ++k) {
    RerankAnswer& a = answers[owners[k]];
    if (k >= logits.size()) {
      a.error = ItemError::kDeadlineExceeded;
      continue;
    }
    a.logit = logits[k].item<float>();
    if (!std::isfinite(a.logit)) a.error = ItemError::kInvalidModelOutput;
  }
  return answers;
}

}  // namespace semroute
