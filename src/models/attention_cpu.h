// The CPU kernel behind blocked_attention (see attention.h for the contract).
#pragma once

#include <ATen/core/Tensor.h>

#include "models/attention.h"

namespace semroute {

// q [..., heads, length, dim], k and v [..., kv_heads, length, dim], any
// floating dtype (computed in fp32, returned in q's dtype). `block` > 0
// forces the query block size.
at::Tensor attention_cpu(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, double scale,
                         AttentionPattern pattern, int64_t block, double softcap);

// Queries per task: as many as keep a task's scores within L2 (16..128).
int64_t attention_query_block(int64_t keys);

}  // namespace semroute
