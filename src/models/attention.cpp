#include "models/attention.h"

#include "models/attention_cpu.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/tanh.h>
#include <ATen/ops/zeros_like.h>
#include <torch/csrc/api/include/torch/version.h>
#if TORCH_VERSION_MAJOR >= 2
#include <ATen/ops/scaled_dot_product_attention.h>
#define SEMROUTE_HAVE_SDPA 1
#endif

#include <algorithm>
#include <limits>
#include <optional>
#include <vector>

namespace semroute {
namespace {

// Score bytes one query block may use; bounds memory for any length.
constexpr int64_t kBlockScoreBudget = 16 << 20;

at::Tensor softmax_rows(const at::Tensor& scores, c10::ScalarType out) {
  const bool reduced = out == c10::kHalf || out == c10::kBFloat16;
  return reduced ? at::softmax(scores, -1, c10::kFloat).to(out) : at::softmax(scores, -1);
}

// Mask between queries [q0, q1) and keys [k0, k1) (true = masked out), or an
// undefined tensor when the pattern hides nothing there.
at::Tensor pattern_mask(int64_t q0, int64_t q1, int64_t k0, int64_t k1, AttentionPattern pattern, c10::Device device) {
  const bool window_hides = pattern.window >= 0 && (q1 - 1 - k0 > pattern.window || k1 - 1 - q0 > pattern.window);
  const bool causal_hides = pattern.causal && k1 - 1 > q0;
  if (!window_hides && !causal_hides) return {};
  const at::Tensor qi = at::arange(q0, q1, at::TensorOptions().dtype(at::kLong).device(device)).unsqueeze(1);
  const at::Tensor kj = at::arange(k0, k1, at::TensorOptions().dtype(at::kLong).device(device)).unsqueeze(0);
  const at::Tensor distance = qi - kj;
  at::Tensor masked = pattern.window >= 0 ? distance.abs() > pattern.window : at::zeros_like(distance, at::kBool);
  if (pattern.causal) masked = masked.logical_or(distance < 0);
  return masked;
}

// Repeats grouped key/value heads to the query head count.
at::Tensor expand_heads(const at::Tensor& kv, int64_t heads) {
  const int64_t kv_heads = kv.size(-3);
  if (kv_heads == heads) return kv;
  std::vector<int64_t> expanded = kv.sizes().vec();
  expanded.insert(expanded.end() - 2, heads / kv_heads);
  std::vector<int64_t> merged = kv.sizes().vec();
  merged[merged.size() - 3] = heads;
  return kv.unsqueeze(-3).expand(expanded).reshape(merged);
}

at::Tensor attend_block(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& masked,
                        double scale, double softcap) {
#ifdef SEMROUTE_HAVE_SDPA
  // libtorch >= 2: fused (flash / memory-efficient) kernels where available.
  if (softcap <= 0 && (q.is_cuda() || !masked.defined())) {
    // No mask is nullopt: an undefined tensor would count as one.
    const std::optional<at::Tensor> allowed =
        masked.defined() ? std::optional<at::Tensor>(masked.logical_not()) : std::nullopt;
    return at::scaled_dot_product_attention(q, k, v, allowed, 0.0, false, scale);
  }
#endif
  at::Tensor scores = at::matmul(q, k.transpose(-2, -1)) * scale;
  if (softcap > 0) scores = at::tanh(scores / softcap) * softcap;
  if (masked.defined()) scores = scores.masked_fill(masked, -std::numeric_limits<float>::infinity());
  return at::matmul(softmax_rows(scores, v.scalar_type()), v);
}

}  // namespace

at::Tensor blocked_attention(const at::Tensor& q, const at::Tensor& k_in, const at::Tensor& v_in, double scale,
                             AttentionPattern pattern, int64_t block, double softcap) {
  const int64_t length = q.size(-2);
  if (pattern.window >= length - 1) pattern.window = -1;  // the window covers everything
  if (q.device().is_cpu() && block < length) {
    // The kernel works token-major: [n, H, L, D] -> [n, L, H, D] views and back.
    const auto token_major = [](const at::Tensor& x) { return x.flatten(0, -4).transpose(1, 2); };
    const at::Tensor out = attention_cpu(token_major(q), token_major(k_in), token_major(v_in), {}, {}, scale, pattern,
                                         block, softcap);
    std::vector<int64_t> sizes = q.sizes().vec();
    std::swap(sizes[sizes.size() - 3], sizes[sizes.size() - 2]);
    return out.view(sizes).transpose(-3, -2);
  }
  const at::Tensor k = expand_heads(k_in, q.size(-3)), v = expand_heads(v_in, q.size(-3));
  const bool windowed = pattern.window >= 0;
  const int64_t keys = windowed ? std::min<int64_t>(length, 2 * pattern.window + 1) : length;
  if (block <= 0) {
    const int64_t rows = q.numel() / (q.size(-1) * length);  // batch × heads
    block = std::max<int64_t>(16, kBlockScoreBudget / (4 * rows * std::max<int64_t>(keys, 1)));
    // A windowed block sees block + 2·window keys: blocks about one window
    // long keep the wasted band work near 1.5x instead of growing with length.
    if (windowed) block = std::min(block, std::max<int64_t>(32, pattern.window));
  }
  if (block >= length) return attend_block(q, k, v, pattern_mask(0, length, 0, length, pattern, q.device()), scale, softcap);
  std::vector<at::Tensor> outputs;
  for (int64_t q0 = 0; q0 < length; q0 += block) {
    const int64_t q1 = std::min(length, q0 + block);
    const int64_t k0 = windowed ? std::max<int64_t>(0, q0 - pattern.window) : 0;
    const int64_t k1 = pattern.causal ? q1 : (windowed ? std::min(length, q1 + pattern.window) : length);
    const at::Tensor masked = pattern_mask(q0, q1, k0, k1, pattern, q.device());
    outputs.push_back(attend_block(q.narrow(-2, q0, q1 - q0), k.narrow(-2, k0, k1 - k0), v.narrow(-2, k0, k1 - k0),
                                   masked, scale, softcap));
  }
  return at::cat(outputs, -2);
}

at::Tensor split_heads(const at::Tensor& x, int64_t heads) {
  return x.view({x.size(0), x.size(1), heads, -1}).transpose(1, 2);
}

at::Tensor merge_heads(const at::Tensor& x) {
  return x.transpose(1, 2).reshape({x.size(0), x.size(2), -1});
}

}  // namespace semroute
