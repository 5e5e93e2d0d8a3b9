// Turning per-token hidden states [batch, seq, hidden] into one vector per
// sequence. Padding (attention_mask == 0) never contributes.
#pragma once

#include <ATen/core/Tensor.h>

#include "models/task_conventions.h"  // Pooling

namespace semroute {

// The first token's state.
at::Tensor cls_pool(const at::Tensor& hidden);
// Average over real tokens; an all-padding row yields zeros.
at::Tensor mean_pool(const at::Tensor& hidden, const at::Tensor& attention_mask);
// The state of each row's last real token (left or right padding).
at::Tensor last_token_pool(const at::Tensor& hidden, const at::Tensor& attention_mask);

at::Tensor pool(Pooling pooling, const at::Tensor& hidden, const at::Tensor& attention_mask);

}  // namespace semroute
