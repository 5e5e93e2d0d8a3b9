#include "runtime/forwards.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <map>

namespace semroute {
namespace {

// Encodings per turn on the compute lane: a request with many items or
// windows yields the lane between pieces, and its deadline is checked there.
constexpr size_t kEncodingsPerPiece = 32;

}  // namespace

std::vector<at::Tensor> forward_each(const std::vector<const Encoding*>& encodings, const Tokenizer& tokenizer,
                                     c10::Device device, const BatchAnswers& answers) {
  std::map<std::pair<std::vector<int32_t>, std::vector<int32_t>>, size_t> first_of;
  std::vector<size_t> unique_of(encodings.size());
  std::vector<const Encoding*> unique;
  for (size_t i = 0; i < encodings.size(); ++i) {
    const auto [it, inserted] = first_of.emplace(std::make_pair(encodings[i]->ids, encodings[i]->type_ids), unique.size());
    if (inserted) unique.push_back(encodings[i]);
    unique_of[i] = it->second;
  }
  std::vector<at::Tensor> computed;
  size_t begin = 0;
  while (begin < unique.size()) {
    size_t end = begin, longest = 0;
    while (end < unique.size()) {  // as many as fit the padded-token budget (one at least)
      const size_t next_longest = std::max(longest, unique[end]->size());
      if (end > begin && static_cast<int64_t>((end - begin + 1) * next_longest) > kBatchTokenBudget) break;
      longest = next_longest;
      ++end;
    }
    std::vector<Encoding> chunk;
    for (size_t i = begin; i < end; ++i) chunk.push_back(*unique[i]);
    for (at::Tensor& t : answers(batch_from_encodings(std::move(chunk), tokenizer, device))) computed.push_back(std::move(t));
    begin = end;
  }
  std::vector<at::Tensor> result;
  result.reserve(encodings.size());
  for (size_t i = 0; i < encodings.size(); ++i) result.push_back(computed[unique_of[i]]);
  return result;
}

std::vector<at::Tensor> forward_rows(const std::vector<const Encoding*>& encodings, const Tokenizer& tokenizer,
                                     c10::Device device, const BatchRows& rows, bool per_token) {
  return forward_each(encodings, tokenizer, device, [&](const TextBatch& batch) {
    const at::Tensor out = rows(batch).to(at::kFloat).cpu();
    std::vector<at::Tensor> each;
    for (size_t b = 0; b < batch.encodings.size(); ++b) {
      at::Tensor row = out[static_cast<int64_t>(b)];
      if (per_token) row = row.narrow(0, 0, static_cast<int64_t>(batch.encodings[b].size()));
      each.push_back(row.clone());
    }
    return each;
  });
}

std::vector<at::Tensor> forward_pieces(const std::vector<const Encoding*>& encodings, const RequestControl& control,
                                       const EncodingBatcher* batcher, const Forward& forward) {
  std::vector<at::Tensor> out;
  for (size_t begin = 0; begin < encodings.size(); begin += kEncodingsPerPiece) {
    const std::vector<const Encoding*> piece(
        encodings.begin() + static_cast<std::ptrdiff_t>(begin),
        encodings.begin() + static_cast<std::ptrdiff_t>(std::min(encodings.size(), begin + kEncodingsPerPiece)));
    std::vector<at::Tensor> rows;
    try {
      control.check();
      if (batcher != nullptr) {
        EncodingBatcher::Timing timing;
        rows = (*batcher)(piece, control.deadline(), &timing);
        control.add_time(&WorkTimes::queue, timing.queued);
        control.add_time(&WorkTimes::forward, timing.computed);
      } else {
        rows = control.on_lane([&] { return forward(piece); });
      }
    } catch (const DeadlinePassed&) {
      return out;
    }
    for (auto& r : rows) out.push_back(std::move(r));
  }
  return out;
}

void forward_padded(const CoreModel& model, const std::vector<const std::vector<int64_t>*>& rows, int64_t pad,
                    const std::function<void(size_t, const at::Tensor&)>& read) {
  constexpr size_t kMaxRows = 32, kMaxPaddedTokens = 16384;
  std::vector<size_t> order(rows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rows[a]->size() < rows[b]->size(); });
  c10::InferenceMode guard;
  for (size_t begin = 0; begin < order.size();) {
    size_t end = begin + 1;
    while (end < order.size() && end - begin < kMaxRows && rows[order[end]]->size() * (end - begin + 1) <= kMaxPaddedTokens)
      ++end;
    const auto count = static_cast<int64_t>(end - begin);
    const auto width = static_cast<int64_t>(rows[order[end - 1]]->size());
    at::Tensor ids = at::full({count, width}, pad, at::kLong), mask = at::zeros({count, width}, at::kLong);
    for (int64_t r = 0; r < count; ++r) {
      const std::vector<int64_t>& row = *rows[order[begin + static_cast<size_t>(r)]];
      ids[r].narrow(0, 0, static_cast<int64_t>(row.size())).copy_(at::tensor(row, at::kLong));
      mask[r].narrow(0, 0, static_cast<int64_t>(row.size())).fill_(1);
    }
    ModelInputs inputs;
    inputs.input_ids = ids.to(model.device());
    inputs.attention_mask = mask.to(model.device());
    const at::Tensor hidden = model.forward(inputs, {}).to(at::kFloat).cpu();
    for (int64_t r = 0; r < count; ++r) read(order[begin + static_cast<size_t>(r)], hidden[r]);
    begin = end;
  }
}

}  // namespace semroute
