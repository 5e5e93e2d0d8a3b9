// The CPU kernel behind blocked_attention (see attention.h for the contract).
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <vector>

#include "models/attention.h"
#include "models/packed_gemm.h"
#include "models/parallel_chunks.h"

namespace semroute {

// Attention over token-major projections: q [sequences, length, heads, dim],
// k and v [sequences, length, kv_heads, dim] (views straight from the
// projections do: only the last dimension must be contiguous), any floating
// dtype (computed in fp32, returned in q's dtype). With cos/sin ([≥ length,
// dim]) RoPE is applied to q and k first. Returns [sequences, length,
// heads * dim]. `block` > 0 forces the query block size.
at::Tensor attention_cpu(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& cos,
                         const at::Tensor& sin, double scale, AttentionPattern pattern, int64_t block, double softcap);

// The same over packed sequences of any lengths: q [tokens, heads, dim], k
// and v [tokens, kv_heads, dim], sequence i the next lengths[i] tokens, RoPE
// at each token's position in its sequence. One call (one parallel region)
// for a whole batch. Returns [tokens, heads * dim]. With `bf16_products`
// (only where kernels::bf16_dot_here()), q·k and p·v take bf16 inputs with
// fp32 sums (kernels/bf16_gemm.h): twice the rate, for int8 models; for a
// batch whose longest sequence has 128 tokens or more (below, packing costs
// what it saves).
at::Tensor attention_cpu_packed(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                const std::vector<int64_t>& lengths, const at::Tensor& cos, const at::Tensor& sin,
                                double scale, AttentionPattern pattern, int64_t block, double softcap,
                                bool bf16_products = false);

// One attention_cpu_packed call as passes of a region that runs others too
// (parallel_passes): keys that several query blocks share rotated and bf16
// keys and values packed where needed, then the tasks. `out` ([tokens,
// heads * dim], fp32) holds the answer once the passes have run. Where
// `arrive` is set, it must be handed every panel of q, k and v as a pass
// before these writes it (PanelFinish: columns of [q | k | v]): it rotates
// and packs them there, while they are in cache, and these passes do not.
struct AttentionPass {
  at::Tensor out;
  std::vector<ParallelPass> passes;
  PanelFinish arrive;
};
// attention_cpu_packed planned as such passes, which read q, k and v only as
// they run (they may be the output of a pass before them); none where the
// call would read them first: inputs that are not fp32 with a contiguous
// last dimension (copied). `arriving_panel` > 0: q, k and v are columns of
// one tensor, side by side, that a pass before writes by panels of that
// many columns; the call sets `arrive` where those hold whole heads.
std::optional<AttentionPass> attention_cpu_packed_pass(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                                       const std::vector<int64_t>& lengths, const at::Tensor& cos,
                                                       const at::Tensor& sin, double scale, AttentionPattern pattern,
                                                       int64_t block, double softcap, bool bf16_products = false,
                                                       int64_t arriving_panel = 0);

// Queries per task: 64, fewer when a task's scores would outgrow L2 (1 MB).
int64_t attention_query_block(int64_t keys);

}  // namespace semroute
