// How the runtime's models run their forwards: encodings (tokenized on the
// callers' threads) packed into batches within the token budget, identical
// ones computed once, a piece at a time on the compute lane, batched with
// concurrent requests where a batcher is on.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <vector>

#include "models/core_model.h"
#include "runtime/request_control.h"
#include "tasks/batcher.h"
#include "tasks/text_batch.h"

namespace semroute {

using EncodingBatcher = Batcher<at::Tensor, const Encoding*>;
// An encoding's tokens: the batchers' cost (long inputs batch apart).
inline int64_t encoding_tokens(const Encoding* const& encoding) {
  return static_cast<int64_t>(encoding->ids.size());
}
// A model's rows ([batch, …]) for one batch of encodings.
using BatchRows = std::function<at::Tensor(const TextBatch& batch)>;
// A model's answer for each encoding of one batch (float32 on the CPU).
using BatchAnswers = std::function<std::vector<at::Tensor>(const TextBatch& batch)>;
using Forward = std::function<std::vector<at::Tensor>(const std::vector<const Encoding*>&)>;

// One tensor per encoding, of answers(batch) for batches of encodings within
// the token budget; identical encodings are computed once.
std::vector<at::Tensor> forward_each(const std::vector<const Encoding*>& encodings, const Tokenizer& tokenizer,
                                     c10::Device device, const BatchAnswers& answers);

// One float32 CPU tensor per encoding: its row of rows(batch), cut to the
// encoding's length when `per_token` ([tokens, …] per encoding).
std::vector<at::Tensor> forward_rows(const std::vector<const Encoding*>& encodings, const Tokenizer& tokenizer,
                                     c10::Device device, const BatchRows& rows, bool per_token);

// forward(encodings) a piece of at most 32 at a time, each its own turn on
// the lane (through `batcher` when it is not null), the request's control
// checked before each and its queue and forward times recorded. Stops at the
// first piece its deadline did not let start: the answer is then shorter
// than `encodings` (the rest: deadline_exceeded). RequestCancelled passes.
std::vector<at::Tensor> forward_pieces(const std::vector<const Encoding*>& encodings, const RequestControl& control,
                                       const EncodingBatcher* batcher, const Forward& forward);

// Rows of token ids (decision sequences) through `model` in right-padded
// batches by length, as the decision packages batch them: at most 32 rows
// and 16,384 padded tokens a batch. `read(i, hidden)` gets row i's last
// hidden states ([width, hidden], float32 on the CPU; past the row's length,
// padding).
void forward_padded(const CoreModel& model, const std::vector<const std::vector<int64_t>*>& rows, int64_t pad,
                    const std::function<void(size_t, const at::Tensor&)>& read);

}  // namespace semroute
