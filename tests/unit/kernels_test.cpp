// The CPU kernels against the eager libtorch computations they replace:
// the fused attention kernel vs one-shot attention (every pattern, GQA,
// softcap, odd lengths and block sizes, bf16) and the packed oneDNN GEMM vs
// at::linear (row counts, bias, bf16, threads).
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/cpu_features.h"
#include "core/free_cpus.h"
#include "core/runtime.h"
#include "core/sanitized.h"
#include "kernels/bf16_gemm.h"
#include "models/attention.h"
#include "models/attention_cpu.h"
#include "models/int8_rows.h"
#include "models/packed_gemm.h"
#include "models/layers.h"
#include "models/parallel_chunks.h"
#include "models/rope.h"
#include "models/vector_math.h"
#include "test_util.h"

namespace semroute {
namespace {

double max_abs_error(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(at::kFloat) - b.to(at::kFloat)).abs().max().item<double>();
}

struct AttentionCase {
  std::string name;
  int64_t length, heads, kv_heads, dim;
  AttentionPattern pattern;
  int64_t block;
  double softcap;
};

TEST(AttentionKernel, EqualsTheOneShotReference) {
  c10::InferenceMode guard;
  at::manual_seed(7);
  const std::vector<AttentionCase> cases = {
      {"full", 97, 4, 4, 16, {-1, false}, 0, 0},
      {"window 5", 97, 4, 4, 16, {5, false}, 0, 0},
      {"window 5, block 7", 97, 4, 4, 16, {5, false}, 7, 0},
      {"window wider than the text", 20, 2, 2, 8, {64, false}, 3, 0},
      {"causal", 97, 4, 4, 16, {-1, true}, 0, 0},
      {"causal, block 16", 97, 4, 4, 16, {-1, true}, 16, 0},
      {"causal window", 97, 4, 4, 16, {9, true}, 11, 0},
      {"grouped-query 8/2", 61, 8, 2, 32, {-1, true}, 0, 0},
      {"multi-query 3/1, window", 61, 3, 1, 64, {12, false}, 10, 0},
      {"softcap", 45, 2, 2, 16, {-1, false}, 8, 5.0},
      {"one token", 1, 2, 2, 16, {-1, true}, 0, 0},
      // Blocks of up to 128 keys take the small-block loops (dims of 16s;
      // tiles of 6 rows and 2 vectors, with their tails).
      {"short, dim 64", 13, 2, 2, 64, {-1, false}, 0, 0},
      {"128 keys, dim 48", 128, 3, 3, 48, {-1, false}, 0, 0},
      {"129 keys, dim 48", 129, 3, 3, 48, {-1, false}, 0, 0},
      {"short, softcap", 20, 2, 2, 16, {-1, false}, 0, 5.0},
      {"short, causal grouped-query 4/2", 32, 4, 2, 32, {-1, true}, 0, 0},
      {"long, window 64", 700, 2, 2, 32, {64, false}, 0, 0},
  };
  for (const auto& c : cases) {
    // Token-major [2, L, H, D], as the projections give them.
    const at::Tensor q = at::randn({2, c.length, c.heads, c.dim}) * 2;
    const at::Tensor k = at::randn({2, c.length, c.kv_heads, c.dim}) * 2;
    const at::Tensor v = at::randn({2, c.length, c.kv_heads, c.dim});
    const double scale = 1.0 / std::sqrt(static_cast<double>(c.dim));
    const at::Tensor reference =
        blocked_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), scale, c.pattern, 1 << 20, c.softcap)
            .transpose(1, 2)
            .reshape({2, c.length, c.heads * c.dim});
    const at::Tensor fused = attention_cpu(q, k, v, {}, {}, scale, c.pattern, c.block, c.softcap);
    const double error = max_abs_error(fused, reference);
    std::printf("    %s: max abs error %.3g\n", c.name.c_str(), error);
    EXPECT_LT(error, 1e-5) << c.name;
    // And through blocked_attention's own dispatch (head-major in and out).
    const at::Tensor dispatched =
        blocked_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), scale, c.pattern, 0, c.softcap);
    EXPECT_LT(max_abs_error(dispatched.transpose(1, 2).reshape({2, c.length, -1}), reference), 1e-5) << c.name;
  }
}

TEST(AttentionKernel, AppliesRopeLikeTheEagerPath) {
  c10::InferenceMode guard;
  at::manual_seed(5);
  const int64_t length = 70, dim = 16;
  // Strided views of one fused projection, as ModernBERT's Wqkv gives them.
  const at::Tensor qkv = at::randn({1, length, 3 * 4 * dim});
  const auto parts = qkv.chunk(3, -1);
  const at::Tensor q = parts[0].view({1, length, 4, dim}), k = parts[1].view({1, length, 4, dim});
  const at::Tensor v = parts[2].view({1, length, 4, dim});
  const at::Tensor angles = at::arange(length, at::kFloat).unsqueeze(1) * at::rand({dim / 2});
  const at::Tensor cos = at::cat({angles.cos(), angles.cos()}, -1), sin = at::cat({angles.sin(), angles.sin()}, -1);
  // Query blocks of 16 and 64 tokens (keys rotated once, before the tasks)
  // and one block for the whole sequence (each task rotates its own keys).
  for (const AttentionPattern pattern : {AttentionPattern{10, false}, AttentionPattern{-1, false}}) {
    const at::Tensor reference = blocked_attention(RotaryEmbedding::apply(q.transpose(1, 2), cos, sin),
                                                   RotaryEmbedding::apply(k.transpose(1, 2), cos, sin),
                                                   v.transpose(1, 2), 0.25, pattern, 1 << 20)
                                     .transpose(1, 2)
                                     .reshape({1, length, -1});
    for (int64_t block : {16, 64, 128}) {
      const double error = max_abs_error(attention_cpu(q, k, v, cos, sin, 0.25, pattern, block, 0), reference);
      std::printf("    RoPE inside the kernel vs eager (window %lld, query block %lld): max abs error %.3g\n",
                  static_cast<long long>(pattern.window), static_cast<long long>(block), error);
      EXPECT_LT(error, 1e-5) << "window " << pattern.window << ", block " << block;
    }
  }
}

TEST(Rope, RotatedRowsEqualTheEagerFormula) {
  c10::InferenceMode guard;
  at::manual_seed(6);
  // dim 64: whole vectors; 40: halves of 20, a vector and a scalar tail.
  for (const int64_t dim : {64, 40}) {
    const int64_t heads = 3, length = 30, stride = 5 * dim;
    const at::Tensor angles = at::arange(length, at::kFloat).unsqueeze(1) * at::rand({dim / 2});
    const at::Tensor cos = at::cat({angles.cos(), angles.cos()}, -1), sin = at::cat({angles.sin(), angles.sin()}, -1);
    // Rows of 5 heads: the first 3 rotated, the other 2 left as they are.
    const at::Tensor x = at::randn({length, stride});
    const at::Tensor heads_of = x.narrow(1, 0, heads * dim).view({length, heads, dim}).transpose(0, 1);
    const at::Tensor expected =
        RotaryEmbedding::apply(heads_of, cos, sin).transpose(0, 1).reshape({length, heads * dim});
    // In place, in blocks of rows from their own positions; and into rows of their own.
    at::Tensor in_place = x.clone(), apart = at::empty({length, heads * dim});
    for (const auto& [row, rows] : std::vector<std::pair<int64_t, int64_t>>{{0, 7}, {7, 16}, {23, 7}}) {
      float* at_row = in_place.data_ptr<float>() + row * stride;
      rotate_rows(at_row, stride, rows, row, cos.data_ptr<float>(), sin.data_ptr<float>(), dim, heads, at_row, stride);
    }
    rotate_rows(x.data_ptr<float>(), stride, length, 0, cos.data_ptr<float>(), sin.data_ptr<float>(), dim, heads,
                apart.data_ptr<float>(), heads * dim);
    const double error = std::max(max_abs_error(in_place.narrow(1, 0, heads * dim), expected),
                                  max_abs_error(apart, expected));
    std::printf("    RoPE of rows, in place and apart, dim %lld, vs the eager formula: max abs error %.3g\n",
                static_cast<long long>(dim), error);
    EXPECT_LT(error, 1e-5) << "dim " << dim;
    EXPECT_TRUE(at::equal(in_place.narrow(1, heads * dim, 2 * dim), x.narrow(1, heads * dim, 2 * dim)));
  }
}

TEST(AttentionKernel, PackedSequencesOfMixedLengthsEqualEachAlone) {
  // One call over a packed batch (lengths 1, 37, 130, 5) against each
  // sequence on its own, with RoPE at each sequence's own positions, a
  // window, and grouped-query heads.
  c10::InferenceMode guard;
  at::manual_seed(11);
  const std::vector<int64_t> lengths = {1, 37, 130, 5};
  const int64_t tokens = 173, heads = 4, kv_heads = 2, dim = 16;
  const at::Tensor q = at::randn({tokens, heads, dim}), k = at::randn({tokens, kv_heads, dim});
  const at::Tensor v = at::randn({tokens, kv_heads, dim});
  const at::Tensor angles = at::arange(130, at::kFloat).unsqueeze(1) * at::rand({dim / 2});
  const at::Tensor cos = at::cat({angles.cos(), angles.cos()}, -1), sin = at::cat({angles.sin(), angles.sin()}, -1);
  for (const AttentionPattern pattern : {AttentionPattern{-1, false}, AttentionPattern{9, false}, AttentionPattern{-1, true}}) {
    const at::Tensor packed = attention_cpu_packed(q, k, v, lengths, cos, sin, 0.25, pattern, 0, 0);
    int64_t offset = 0;
    double worst = 0;
    for (int64_t length : lengths) {
      const auto part = [&](const at::Tensor& x) { return x.narrow(0, offset, length).unsqueeze(0); };
      const at::Tensor alone = attention_cpu(part(q), part(k), part(v), cos.narrow(0, 0, length),
                                             sin.narrow(0, 0, length), 0.25, pattern, 0, 0);
      worst = std::max(worst, max_abs_error(packed.narrow(0, offset, length), alone.squeeze(0)));
      offset += length;
    }
    EXPECT_LT(worst, 1e-6) << "window " << pattern.window << ", causal " << pattern.causal;
  }
}

// The attention planned as passes (to run in a region after the product
// that writes q, k and v) gives exactly what the call gives, the inputs
// written only after the plan: short sequences, keys that several query
// blocks share (rotated by a pass first), and bf16 products (packed by it).
// Where the call would copy its inputs first (strided or non-fp32), there
// are no passes.
TEST(AttentionKernel, AsPassesEqualsTheCall) {
  c10::InferenceMode guard;
  at::manual_seed(14);
  const ScopedTeam team(2);
  const int64_t heads = 4, kv_heads = 2, dim = 16;
  const at::Tensor angles = at::arange(300, at::kFloat).unsqueeze(1) * at::rand({dim / 2});
  const at::Tensor cos = at::cat({angles.cos(), angles.cos()}, -1), sin = at::cat({angles.sin(), angles.sin()}, -1);
  const auto check = [&](const std::vector<int64_t>& lengths, AttentionPattern pattern, bool bf16, size_t passes) {
    const int64_t tokens = std::accumulate(lengths.begin(), lengths.end(), int64_t{0});
    const std::string what = std::to_string(tokens) + " tokens, window " + std::to_string(pattern.window) +
                             ", causal " + std::to_string(pattern.causal) + (bf16 ? ", bf16" : "");
    const at::Tensor q_data = at::randn({tokens, heads, dim}), k_data = at::randn({tokens, kv_heads, dim});
    const at::Tensor v_data = at::randn({tokens, kv_heads, dim});
    const at::Tensor called = attention_cpu_packed(q_data, k_data, v_data, lengths, cos, sin, 0.25, pattern, 0, 0, bf16);
    at::Tensor q = at::empty_like(q_data), k = at::empty_like(k_data), v = at::empty_like(v_data);
    auto planned = attention_cpu_packed_pass(q, k, v, lengths, cos, sin, 0.25, pattern, 0, 0, bf16);
    ASSERT_TRUE(planned.has_value()) << what;
    EXPECT_EQ(planned->passes.size(), passes) << what;
    q.copy_(q_data);
    k.copy_(k_data);
    v.copy_(v_data);
    parallel_passes(std::move(planned->passes));
    EXPECT_TRUE(at::equal(planned->out, called)) << what;
  };
  for (const AttentionPattern pattern : {AttentionPattern{-1, false}, AttentionPattern{9, false}, AttentionPattern{-1, true}}) {
    check({1, 37, 20, 5}, pattern, false, 1);  // a task per (sequence, head): each rotates its own keys
    check({300, 7}, pattern, false, 2);        // query blocks of 300 tokens share their keys
    if (kernels::bf16_dot_here()) check({150, 3, 140}, pattern, true, 2);
  }
  const std::vector<int64_t> lengths = {1, 37, 20, 5};
  const at::Tensor q_data = at::randn({63, heads, dim}), k_data = at::randn({63, kv_heads, dim});
  const at::Tensor v_data = at::randn({63, kv_heads, dim});
  EXPECT_FALSE(attention_cpu_packed_pass(q_data.to(at::kBFloat16), k_data, v_data, lengths, cos, sin, 0.25,
                                         AttentionPattern{-1, false}, 0, 0)
                   .has_value());
  const at::Tensor strided = q_data.transpose(1, 2).contiguous().transpose(1, 2);  // dims heads apart
  EXPECT_FALSE(attention_cpu_packed_pass(strided, k_data, v_data, lengths, cos, sin, 0.25, AttentionPattern{-1, false},
                                         0, 0)
                   .has_value());
}

// q, k and v handed to the attention by panels as a product writes them
// (rotated and packed there, by parts of rows that split sequences, bf16
// panels of keys and pairs of values): the same answer as the call.
TEST(AttentionKernel, ArrivingByPanelsEqualsTheCall) {
  c10::InferenceMode guard;
  at::manual_seed(15);
  const ScopedTeam team(2);
  const int64_t heads = 4, kv_heads = 2, dim = 16, width = (heads + 2 * kv_heads) * dim;
  const at::Tensor angles = at::arange(300, at::kFloat).unsqueeze(1) * at::rand({dim / 2});
  const at::Tensor cos = at::cat({angles.cos(), angles.cos()}, -1), sin = at::cat({angles.sin(), angles.sin()}, -1);
  const auto check = [&](const std::vector<int64_t>& lengths, AttentionPattern pattern, bool bf16, int64_t panel) {
    const int64_t tokens = std::accumulate(lengths.begin(), lengths.end(), int64_t{0});
    const std::string what = std::to_string(tokens) + " tokens, window " + std::to_string(pattern.window) +
                             (bf16 ? ", bf16" : "") + ", panels of " + std::to_string(panel);
    const at::Tensor data = at::randn({tokens, width});
    const auto parts_of = [&](const at::Tensor& qkv) {
      return std::vector<at::Tensor>{qkv.narrow(1, 0, heads * dim).view({tokens, heads, dim}),
                                     qkv.narrow(1, heads * dim, kv_heads * dim).view({tokens, kv_heads, dim}),
                                     qkv.narrow(1, (heads + kv_heads) * dim, kv_heads * dim).view({tokens, kv_heads, dim})};
    };
    const auto whole = parts_of(data);
    const at::Tensor called = attention_cpu_packed(whole[0], whole[1], whole[2], lengths, cos, sin, 0.25, pattern, 0, 0, bf16);
    const at::Tensor qkv = at::empty({tokens, width});
    const auto parts = parts_of(qkv);
    auto planned = attention_cpu_packed_pass(parts[0], parts[1], parts[2], lengths, cos, sin, 0.25, pattern, 0, 0, bf16,
                                             panel);
    ASSERT_TRUE(planned.has_value()) << what;
    ASSERT_TRUE(static_cast<bool>(planned->arrive)) << what;
    EXPECT_EQ(planned->passes.size(), 1u) << what << ": nothing left to prepare";
    // Blocks of 7 rows (keys' panels and values' pairs split between them),
    // last panel first, as threads might hand them over.
    qkv.copy_(data);
    for (int64_t column = width - panel; column >= 0; column -= panel)
      for (int64_t row = 0; row < tokens; row += 7) planned->arrive(row, std::min<int64_t>(7, tokens - row), column, panel);
    parallel_passes(std::move(planned->passes));
    const double error = max_abs_error(planned->out, called);
    EXPECT_TRUE(at::equal(planned->out, called)) << what << ": max abs error " << error;
  };
  for (const AttentionPattern pattern : {AttentionPattern{-1, false}, AttentionPattern{9, false}}) {
    check({1, 37, 20, 5}, pattern, false, dim);
    check({300, 7}, pattern, false, 2 * dim);
    if (kernels::bf16_dot_here()) check({150, 3, 141}, pattern, true, 4 * dim);
  }
  // Panels that split a head, or q, k and v apart: no arrival.
  const at::Tensor qkv = at::randn({63, width});
  const auto q = qkv.narrow(1, 0, heads * dim).view({63, heads, dim});
  const auto k = qkv.narrow(1, heads * dim, kv_heads * dim).view({63, kv_heads, dim});
  const auto v = qkv.narrow(1, (heads + kv_heads) * dim, kv_heads * dim).view({63, kv_heads, dim});
  const std::vector<int64_t> lengths = {63};
  const AttentionPattern all{-1, false};
  EXPECT_FALSE(static_cast<bool>(attention_cpu_packed_pass(q, k, v, lengths, cos, sin, 0.25, all, 0, 0, false, dim / 2)->arrive));
  EXPECT_FALSE(static_cast<bool>(attention_cpu_packed_pass(q, v, k, lengths, cos, sin, 0.25, all, 0, 0, false, dim)->arrive));
  EXPECT_FALSE(static_cast<bool>(attention_cpu_packed_pass(q, k, v, lengths, cos, sin, 0.25, all, 0, 0, false, 0)->arrive));
}

// bf16 products (int8 models on AVX-512 BF16): against the fp32 kernel on
// packed sequences of mixed lengths, with RoPE, windows, causal masks, GQA,
// query blocks that start keys mid-panel, and a sequence of 1100 tokens
// (rows of keys not a multiple of the panels); the error is that of 8-bit
// mantissas in q, k, p and v, with fp32 sums.
TEST(AttentionKernel, Bf16ProductsStayCloseToFloat32) {
  if (!kernels::bf16_dot_here()) GTEST_SKIP() << "no AVX-512 BF16 on " << cpu_features().describe();
  c10::InferenceMode guard;
  at::manual_seed(12);
  const std::vector<int64_t> lengths = {1, 37, 130, 5, 64, 1100};
  const int64_t tokens = 1337, heads = 4, kv_heads = 2, dim = 64;
  const at::Tensor q = at::randn({tokens, heads, dim}) * 2, k = at::randn({tokens, kv_heads, dim});
  const at::Tensor v = at::randn({tokens, kv_heads, dim});
  const at::Tensor angles = at::arange(1100, at::kFloat).unsqueeze(1) * at::rand({dim / 2});
  const at::Tensor cos = at::cat({angles.cos(), angles.cos()}, -1), sin = at::cat({angles.sin(), angles.sin()}, -1);
  for (const AttentionPattern pattern :
       {AttentionPattern{-1, false}, AttentionPattern{9, false}, AttentionPattern{40, false}, AttentionPattern{-1, true}})
    for (int64_t block : {0, 16, 48}) {
      const double scale = 1.0 / 8;
      const at::Tensor exact = attention_cpu_packed(q, k, v, lengths, cos, sin, scale, pattern, block, 0);
      const at::Tensor bf16 = attention_cpu_packed(q, k, v, lengths, cos, sin, scale, pattern, block, 0, true);
      const double error = max_abs_error(bf16, exact);
      const double cosine = at::cosine_similarity(bf16.flatten(), exact.flatten(), 0).item<double>();
      EXPECT_GT(error, 0) << "the bf16 path did not run";
      EXPECT_LT(error, 3e-2) << "window " << pattern.window << ", causal " << pattern.causal << ", block " << block;
      EXPECT_GT(cosine, 0.9999) << "window " << pattern.window << ", block " << block;
    }
}

TEST(AttentionKernel, Bfloat16InputsAreComputedInFloat32) {
  c10::InferenceMode guard;
  at::manual_seed(3);
  const at::Tensor q = at::randn({1, 50, 4, 32}), k = at::randn({1, 50, 4, 32}), v = at::randn({1, 50, 4, 32});
  const AttentionPattern window{6, false};
  const at::Tensor exact = attention_cpu(q, k, v, {}, {}, 0.2, window, 0, 0);
  const at::Tensor reduced = attention_cpu(q.to(at::kBFloat16), k.to(at::kBFloat16), v.to(at::kBFloat16), {}, {}, 0.2,
                                           window, 0, 0);
  EXPECT_EQ(reduced.scalar_type(), at::kBFloat16);
  const double error = max_abs_error(reduced, exact);
  std::printf("    bf16 vs fp32 attention: max abs error %.3g\n", error);
  EXPECT_LT(error, 0.05);
}

TEST(AttentionKernel, ExtremeScoresStayFinite) {
  c10::InferenceMode guard;
  const at::Tensor q = at::full({1, 8, 1, 4}, 100.0), k = at::full({1, 8, 1, 4}, 100.0);
  const at::Tensor v = at::randn({1, 8, 1, 4});
  const at::Tensor out = attention_cpu(q, k, v, {}, {}, 1.0, AttentionPattern{}, 0, 0);
  EXPECT_TRUE(out.isfinite().all().item<bool>());
  EXPECT_LT(max_abs_error(out, v.mean(1, true).expand_as(v).reshape({1, 8, 4})), 1e-5);  // equal scores: mean of v
}

TEST(PackedGemm, EqualsLinearForEveryRowCount) {
  c10::InferenceMode guard;
  at::manual_seed(11);
  const at::Tensor w = at::randn({96, 80}), b = at::randn({96});
  const auto with_bias = PackedGemm::pack(w, b), without = PackedGemm::pack(w, at::Tensor());
  ASSERT_NE(with_bias, nullptr);
  ASSERT_NE(without, nullptr);
  EXPECT_EQ(with_bias->in_features(), 80);
  EXPECT_EQ(with_bias->out_features(), 96);
  for (int64_t rows : {0, 1, 3, 16, 64, 65, 300}) {
    const at::Tensor x = at::randn({rows, 80});
    const double error = rows == 0 ? 0.0 : max_abs_error((*with_bias)(x), at::linear(x, w, b));
    EXPECT_LT(error, 1e-4) << rows << " rows";
    EXPECT_EQ((*without)(x).sizes(), at::linear(x, w).sizes());
    if (rows > 0) {
      EXPECT_LT(max_abs_error((*without)(x), at::linear(x, w)), 1e-4) << rows << " rows";
    }
  }
  // Leading dimensions are kept, non-contiguous inputs are fine.
  const at::Tensor x3 = at::randn({2, 5, 160}).narrow(-1, 0, 80);
  EXPECT_EQ((*with_bias)(x3).sizes(), (std::vector<int64_t>{2, 5, 96}));
  EXPECT_LT(max_abs_error((*with_bias)(x3), at::linear(x3, w, b)), 1e-4);
}

TEST(CpuFeatures, CapsFollowTheSwitches) {
  CpuFeatures wide;
  wide.model_name = "test CPU";
  wide.avx2 = wide.avx_vnni = wide.avx512 = wide.avx512_vnni = wide.avx512_bf16 = wide.amx_bf16 = wide.amx_int8 = true;
  const CpuFeatures avx2 = capped(wide, "avx2");
  EXPECT_TRUE(avx2.avx2);
  EXPECT_FALSE(avx2.avx512 || avx2.avx512_vnni || avx2.avx512_bf16 || avx2.amx_bf16 || avx2.native_bf16_gemm());
  EXPECT_FALSE(avx2.avx_vnni);  // as an AVX2-only EPYC (and oneDNN's AVX2 level)
  EXPECT_EQ(avx2.isa(), "avx2");
  const CpuFeatures avx2_vnni = capped(wide, "avx2_vnni");
  EXPECT_TRUE(avx2_vnni.avx2 && avx2_vnni.avx_vnni && !avx2_vnni.avx512);
  EXPECT_EQ(avx2_vnni.isa(), "avx2_vnni");
  const CpuFeatures avx512 = capped(wide, "avx512");
  EXPECT_TRUE(avx512.avx512 && avx512.avx512_bf16 && avx512.native_bf16_gemm());
  EXPECT_FALSE(avx512.amx_bf16 || avx512.amx_int8);
  EXPECT_EQ(capped(wide, "baseline").isa(), "baseline");
  EXPECT_EQ(capped(wide, "native").isa(), "avx512_core_amx");
  EXPECT_EQ(capped(wide, "bogus").isa(), "avx512_core_amx");  // ignored, with a warning
  // Unset, our cap follows oneDNN's.
  EXPECT_EQ(cap_of_onednn_isa("AVX2"), "avx2");
  EXPECT_EQ(cap_of_onednn_isa("avx2_vnni"), "avx2_vnni");
  EXPECT_EQ(cap_of_onednn_isa("AVX512_CORE_BF16"), "avx512");
  EXPECT_EQ(cap_of_onednn_isa("AVX512_CORE_AMX"), "");
  EXPECT_EQ(cap_of_onednn_isa("ALL"), "");
  EXPECT_EQ(cap_of_onednn_isa("SSE41"), "baseline");
  // The process honours whichever switch is set (scripts/test-avx2.sh sets them).
  const char* ours = std::getenv("SEMROUTE_MAX_CPU_ISA");
  const char* onednn = std::getenv("ONEDNN_MAX_CPU_ISA");
  const std::string cap = ours != nullptr ? ours : onednn != nullptr ? cap_of_onednn_isa(onednn) : "";
  if (cap == "avx2") {
    EXPECT_FALSE(cpu_features().avx512 || cpu_features().avx_vnni) << cpu_features().describe();
  }
}

TEST(PackedGemm, Refusals) {
  c10::InferenceMode guard;
  const at::Tensor w = at::randn({64, 48});
  EXPECT_EQ(PackedGemm::pack(w.to(at::kDouble), at::Tensor()), nullptr);  // not packable: stays dense
  EXPECT_EQ(PackedGemm::pack(w, at::randn({64}, at::kDouble)), nullptr);
  const auto packed = PackedGemm::pack(w, at::Tensor());
  ASSERT_NE(packed, nullptr);
  EXPECT_THROW((*packed)(at::randn({3, 47})), std::exception);
}

TEST(PackedGemm, Bfloat16NativeOrWidened) {
  c10::InferenceMode guard;
  const at::Tensor w = at::randn({64, 48}), b = at::randn({64}).to(at::kBFloat16);
  const auto packed = PackedGemm::pack(w.to(at::kBFloat16), b);
  ASSERT_NE(packed, nullptr);
  // bf16 GEMMs run natively only on AVX-512; elsewhere the weight is widened.
  EXPECT_EQ(packed->compute_dtype(), PackedGemm::native_bf16() ? at::kBFloat16 : at::kFloat)
      << cpu_features().describe();
  if (!cpu_features().native_bf16_gemm()) {
    EXPECT_FALSE(PackedGemm::native_bf16());
  }
  const at::Tensor x = at::randn({10, 48});
  const at::Tensor y = (*packed)(x.to(at::kBFloat16));
  EXPECT_EQ(y.scalar_type(), at::kBFloat16);
  EXPECT_LT(max_abs_error(y.to(at::kFloat), at::linear(x, w, b.to(at::kFloat))), 0.3);
  EXPECT_EQ((*packed)(at::randn({0, 48}).to(at::kBFloat16)).scalar_type(), at::kBFloat16);
}

// Packs with SEMROUTE_F32_GEMM (SEMROUTE_INT8_GEMM when int8) set to
// `engine` (own | onednn | measure), or unset when it is "default".
std::unique_ptr<PackedGemm> pack_on(const std::string& engine, const at::Tensor& w, const at::Tensor& b,
                                    bool int8 = false) {
  const test::ScopedEnv pinned(int8 ? "SEMROUTE_INT8_GEMM" : "SEMROUTE_F32_GEMM", engine == "default" ? "" : engine);
  return PackedGemm::pack(w, b, int8);
}

// fp32 runs on our kernel or oneDNN's, whichever measured faster for the
// shape (ours in a sanitizer's build): each engine, and the default, equal libtorch's linear for
// row counts across the kernel's tiles and task blocks, with and without bias
// and with a residual added in the epilogue (in place too).
TEST(PackedGemm, Float32OnEitherEngineEqualsLinear) {
  c10::InferenceMode guard;
  at::manual_seed(13);
  const at::Tensor w = at::randn({100, 72}), b = at::randn({100});
  for (const char* engine : {"default", "own", "onednn", "measure"}) {
    const auto with_bias = pack_on(engine, w, b), without = pack_on(engine, w, at::Tensor());
    ASSERT_NE(with_bias, nullptr);
    ASSERT_NE(without, nullptr);
    EXPECT_EQ(with_bias->compute_dtype(), at::kFloat);
    for (int64_t rows : {1, 7, 8, 9, 16, 17, 95, 96, 97, 250}) {
      const at::Tensor x = at::randn({rows, 72}), residual = at::randn({rows, 100});
      const std::string what = std::string(engine) + ", " + std::to_string(rows) + " rows";
      EXPECT_LT(max_abs_error((*with_bias)(x), at::linear(x, w, b)), 1e-4) << what;
      EXPECT_LT(max_abs_error((*without)(x), at::linear(x, w)), 1e-4) << what;
      EXPECT_LT(max_abs_error(with_bias->add_to(residual, x), at::linear(x, w, b) + residual), 1e-4) << what;
    }
  }
}

// A forward's team follows the CPUs other processes leave free, so a
// product's last bits must not follow the team size: on our kernels and
// oneDNN's int8 product they do not, on the shapes a library would split
// over the sum (few columns, one row) too. oneDNN's fp32 product does split
// (up to 6e-6 apart at one row of 768 x 1152): it serves a shape only where
// it measures clearly faster (packed_gemm.h), never by default in a
// sanitizer's build, where the default fp32 product must not follow the team
// either (it did: oneDNN measured faster on most shapes there).
TEST(PackedGemm, ProductsDoNotFollowTheTeamSize) {
  c10::InferenceMode guard;
  at::manual_seed(17);
  ensure_runtime_initialized();
  struct Engine {
    const char* name;
    bool int8;
  };
  std::vector<Engine> engines{{"own", false}, {"own", true}, {"onednn", true}};
  if (kSanitizedBuild) engines.push_back({"default", false});
  for (const Engine& engine : engines) {
    for (const auto& [out, in] : std::vector<std::pair<int64_t, int64_t>>{{2, 64}, {14, 768}, {64, 96}, {768, 768}}) {
      const auto packed = pack_on(engine.name, at::randn({out, in}) * 0.05, at::randn({out}), engine.int8);
      ASSERT_NE(packed, nullptr);
      for (int64_t rows : {1, 5, 20, 64, 200}) {
        const at::Tensor x = at::randn({rows, in}), residual = at::randn({rows, out});
        at::Tensor alone, pair;
        {
          const ScopedTeam team(1);
          alone = packed->add_to(residual, x);
        }
        {
          const ScopedTeam team(2);
          pair = packed->add_to(residual, x);
        }
        EXPECT_TRUE(at::equal(alone, pair)) << engine.name << (engine.int8 ? " int8 " : " fp32 ") << out << " x " << in
                                            << ", " << rows << " rows: " << max_abs_error(alone, pair);
      }
    }
  }
}

// One head in one query block (4096 rows) is one task, run where it is
// called: its products must not take the team either (oneDNN's sgemm on two
// threads answered 1.8e-7 apart at 200 tokens).
TEST(AttentionKernel, DoesNotFollowTheTeamSize) {
  c10::InferenceMode guard;
  at::manual_seed(19);
  ensure_runtime_initialized();
  for (const auto& [length, heads] : std::vector<std::pair<int64_t, int64_t>>{{24, 1}, {200, 1}, {1000, 1}, {40, 4}}) {
    const at::Tensor q = at::randn({1, length, heads, 64}), k = at::randn({1, length, heads, 64}),
                     v = at::randn({1, length, heads, 64});
    at::Tensor alone, pair;
    {
      const ScopedTeam team(1);
      alone = attention_cpu(q, k, v, {}, {}, 0.125, AttentionPattern{}, 4096, 0);
    }
    {
      const ScopedTeam team(2);
      pair = attention_cpu(q, k, v, {}, {}, 0.125, AttentionPattern{}, 4096, 0);
    }
    EXPECT_TRUE(at::equal(alone, pair)) << length << " tokens, " << heads << " heads: " << max_abs_error(alone, pair);
  }
}

TEST(PackedGemm, SharedBetweenThreads) {
  c10::InferenceMode guard;
  const at::Tensor w = at::randn({128, 64}), x = at::randn({33, 64});
  const at::Tensor expected = at::linear(x, w);
  for (const char* engine : {"own", "onednn"}) {
    const auto packed = pack_on(engine, w, at::Tensor());
    ASSERT_NE(packed, nullptr);
    std::vector<std::thread> threads;
    std::vector<double> errors(6, 1.0);
    for (size_t t = 0; t < errors.size(); ++t) {
      threads.emplace_back([&, t] {
        c10::InferenceMode inner;
        double worst = 0;
        for (int i = 0; i < 50; ++i) worst = std::max(worst, max_abs_error((*packed)(x), expected));
        errors[t] = worst;
      });
    }
    for (auto& thread : threads) thread.join();
    for (double error : errors) EXPECT_LT(error, 1e-4) << engine;
  }
}

}  // namespace
}  // namespace semroute

namespace semroute {
namespace {

TEST(VectorMath, MatchesTheStandardLibrary) {
  double exp_error = 0, erf_error = 0, tanh_error = 0, silu_error = 0;
  for (float x = -87.0f; x <= 0.0f; x += 0.0137f)
    exp_error = std::max<double>(exp_error, std::abs(vec::exp_nonpositive(x) - std::exp(x)) / std::exp(x));
  for (float x = -12.0f; x <= 12.0f; x += 0.00123f) {
    erf_error = std::max<double>(erf_error, std::abs(vec::erf(x) - std::erf(x)));
    tanh_error = std::max<double>(tanh_error, std::abs(vec::tanh(x) - std::tanh(x)));
    silu_error = std::max<double>(silu_error, std::abs(vec::silu(x) - x / (1 + std::exp(-x))) / std::max(1.0f, std::abs(x)));
  }
  std::printf("    exp relative %.3g, erf %.3g, tanh %.3g, silu %.3g\n", exp_error, erf_error, tanh_error, silu_error);
  EXPECT_LT(exp_error, 1e-6);
  EXPECT_LT(erf_error, 5e-7);
  EXPECT_LT(tanh_error, 5e-7);
  EXPECT_LT(silu_error, 5e-7);
  EXPECT_EQ(vec::exp_nonpositive(-1000.0f), std::exp(-87.0f));  // clamped, never 0/denormal garbage
}

// The softmax's reductions: every length, so that each path (steps of four
// vectors, single vectors, the scalar tail, their lane folds) is taken, for
// both vector widths; the maximum anywhere in the row.
template <typename V>
void expect_exact_max_and_close_exp_sum(const std::vector<float>& x) {
  for (size_t n = 1; n <= x.size(); ++n)
    for (size_t peak : {size_t{0}, n / 2, n - 1}) {
      std::vector<float> row(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(n));
      row[peak] = 9.0f;
      ASSERT_EQ(vec::max<V>(row.data(), static_cast<int64_t>(n)), 9.0f) << "n " << n << ", peak at " << peak;
      double expected = 0;
      for (float v : row) expected += std::exp(static_cast<double>(v) - 9.0);
      const float sum = vec::exp_and_sum<V>(row.data(), static_cast<int64_t>(n), 9.0f);
      ASSERT_NEAR(sum, expected, 2e-6 * expected) << "n " << n;
      ASSERT_NEAR(row[peak], 1.0f, 1e-6f);
    }
}

TEST(VectorMath, MaxAndExpSumOverEveryLength) {
  at::manual_seed(3);
  const at::Tensor values = at::randn({150}) * 3;
  const std::vector<float> x(values.data_ptr<float>(), values.data_ptr<float>() + values.numel());
  expect_exact_max_and_close_exp_sum<vec::Floats8>(x);
  expect_exact_max_and_close_exp_sum<vec::Floats16>(x);
  EXPECT_EQ(vec::lane_sum(vec::Floats16{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}), 136.0f);
  EXPECT_EQ(vec::lane_max(vec::Floats8{-3, 7, 1, -9, 2, 6.5f, 0, 5}), 7.0f);
  EXPECT_EQ(vec::lane_min(vec::Floats8{-3, 7, 1, -9, 2, 6.5f, 0, 5}), -9.0f);
}

// A quantized row's range (its lane folds): every width across the vector
// tails, the extreme anywhere; a row holding NaN or infinity gets a NaN scale.
TEST(Int8Rows, RangeAndNonFiniteRowsAtEveryWidth) {
  for (int64_t k = 1; k <= 70; ++k)
    for (int64_t at : {int64_t{0}, k / 2, k - 1}) {
      std::vector<float> x(static_cast<size_t>(2 * k), 0.5f);
      x[static_cast<size_t>(at)] = -3.0f;                       // row 0: range [-3, 0.5]
      x[static_cast<size_t>(k + at)] = std::numeric_limits<float>::infinity();  // row 1: not finite
      std::vector<uint8_t> q(static_cast<size_t>(2 * k));
      float scale[2];
      int32_t zero[2];
      int8::quantize_rows(x.data(), k, 2, k, 255, q.data(), k, scale, zero);
      const float high = k > 1 ? 0.5f : 0.0f;  // the range always holds 0
      ASSERT_FLOAT_EQ(scale[0], (high + 3.0f) / 255) << "k " << k << ", extreme at " << at;
      ASSERT_EQ(q[static_cast<size_t>(at)], 0) << "k " << k;
      ASSERT_TRUE(std::isnan(scale[1])) << "k " << k << ", infinity at " << at;
    }
}

// The coarse exp for bf16 consumers stays far below a bf16 rounding (2^-9),
// and its rounding to bf16 is libtorch's (nearest, ties to even), lane by
// lane as in the tail, NaN included.
TEST(VectorMath, ExpForBf16AndItsRounding) {
  c10::InferenceMode guard;
  double error = 0;
  for (float x = -87.0f; x <= 0.0f; x += 0.0137f)
    error = std::max<double>(error, std::abs(vec::exp_nonpositive_for_bf16(x) - std::exp(x)) / std::exp(x));
  std::printf("    exp for bf16: relative %.3g\n", error);
  EXPECT_LT(error, 1e-4);
  at::manual_seed(13);
  at::Tensor x = -at::rand({37}) * 30;
  x[5] = 0.0f;
  x[36] = -std::numeric_limits<float>::infinity();
  std::vector<float> shifted(37);
  for (int64_t j = 0; j < 37; ++j) shifted[j] = x[j].item<float>() + 1.0f;
  shifted[20] = std::numeric_limits<float>::quiet_NaN();
  std::vector<uint16_t> out(37);
  const float sum = vec::exp_and_sum_to_bf16<vec::Floats16>(shifted.data(), 37, 1.0f, out.data());
  double expected_sum = 0;
  for (int64_t j = 0; j < 37; ++j) {
    const float e = vec::exp_nonpositive_for_bf16(shifted[j] - 1.0f);
    expected_sum += e;
    const uint16_t want = at::tensor({e}).to(at::kBFloat16).view(at::kShort).item<int16_t>();
    if (j == 20) {
      EXPECT_EQ(out[j] & 0x7F80, 0x7F80) << "a NaN stays a NaN";
      EXPECT_NE(out[j] & 0x7F, 0) << "a NaN stays a NaN";
    } else {
      EXPECT_EQ(out[j], want) << j;
    }
  }
  EXPECT_TRUE(std::isnan(sum));
  EXPECT_TRUE(std::isnan(expected_sum));
  // Ties go to even; a value just past the tie goes up.
  EXPECT_EQ(vec::bf16_bits(1.0f + 1.0f / 256), 0x3F80);
  EXPECT_EQ(vec::bf16_bits(1.0f + 3.0f / 256), 0x3F82);
  EXPECT_EQ(vec::bf16_bits(1.0f + 1.0f / 256 + 1.0f / 65536), 0x3F81);
}

// The CPU's own bf16 conversion (what the attention softmax stores with)
// rounds every normal value and zero as store_bf16 does, ties included, and
// keeps a NaN a NaN.
TEST(VectorMath, NativeBf16RoundingEqualsOurs) {
  if (!kernels::bf16_dot_here()) GTEST_SKIP() << "no AVX-512 BF16 on " << cpu_features().describe();
  at::manual_seed(17);
  const at::Tensor values = at::randn({4096}) * at::pow(2.0, at::randint(-60, 60, {4096}).to(at::kFloat));
  std::vector<float> x(values.data_ptr<float>(), values.data_ptr<float>() + 4096);
  x[0] = 0.0f;
  x[1] = 1.0f + 1.0f / 256;  // a tie: to even (down)
  x[2] = 1.0f + 3.0f / 256;  // a tie: to even (up)
  x[3] = -(1.0f + 1.0f / 256 + 1.0f / 65536);
  x[4] = std::numeric_limits<float>::max();
  x[5] = std::numeric_limits<float>::quiet_NaN();
  int64_t compared = 0;
  for (size_t j = 0; j < x.size(); j += 16) {
    vec::Floats16 v;
    std::memcpy(&v, x.data() + j, sizeof v);
    uint16_t native[16], ours[16];
    vec::store_bf16_native(native, v);
    vec::store_bf16(ours, v);
    for (size_t l = 0; l < 16; ++l) {
      const float value = x[j + l];
      if (std::isnan(value)) {
        EXPECT_EQ(native[l] & 0x7F80, 0x7F80) << "a NaN stays a NaN";
        EXPECT_NE(native[l] & 0x7F, 0) << "a NaN stays a NaN";
      } else if (value == 0 || std::fpclassify(value) == FP_NORMAL) {
        EXPECT_EQ(native[l], ours[l]) << value;
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 4000);
}

// The exp the attention softmax runs on AVX-512 (its own rounding and
// scaling instructions) equals the portable one to float rounding, NaN and
// the clamp included.
TEST(VectorMath, NativeExpForBf16EqualsThePortableOne) {
  if (!cpu_features().avx512) GTEST_SKIP() << "no AVX-512 on " << cpu_features().describe();
  std::vector<float> x;
  for (float v = -100.0f; v <= 0.0f; v += 0.00731f) x.push_back(v);
  x.push_back(0.0f);
  x.push_back(-std::numeric_limits<float>::infinity());
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  while (x.size() % 16 != 0) x.push_back(-1.0f);
  double worst = 0;
  for (size_t j = 0; j < x.size(); j += 16) {
    vec::Floats16 v, e;
    std::memcpy(&v, x.data() + j, sizeof v);
    vec::exp_nonpositive_for_bf16_native(v, &e);
    for (size_t l = 0; l < 16; ++l) {
      const float want = vec::exp_nonpositive_for_bf16(x[j + l]);
      if (std::isnan(x[j + l])) {
        EXPECT_TRUE(std::isnan(e[l]));
      } else {
        worst = std::max<double>(worst, std::abs(e[l] - want) / want);
      }
    }
  }
  std::printf("    native vs portable exp for bf16: relative %.3g\n", worst);
  EXPECT_LT(worst, 1e-6);
}

TEST(GatedActivation, EqualsLibtorch) {
  c10::InferenceMode guard;
  at::manual_seed(2);
  const at::Tensor both = at::randn({37, 2 * 300}) * 4;
  const auto parts = both.chunk(2, -1);  // strided rows, as a fused Wi output gives them
  for (Activation a : {Activation::kGeluErf, Activation::kGeluTanh, Activation::kRelu, Activation::kSilu}) {
    const at::Tensor eager = a == Activation::kGeluErf    ? at::gelu(parts[0])
                             : a == Activation::kGeluTanh ? at::gelu(parts[0], "tanh")
                             : a == Activation::kRelu     ? at::relu(parts[0])
                                                          : at::silu(parts[0]);
    EXPECT_LT(max_abs_error(activate(a, parts[0]), eager), 5e-6);
    EXPECT_LT(max_abs_error(gated_activation(a, parts[0], parts[1]), eager * parts[1]), 2e-5);
    // bf16 and other shapes take libtorch's path.
    // bf16 runs through the fp32 kernel, rounded once.
    const at::Tensor bf16 = gated_activation(a, parts[0].to(at::kBFloat16), parts[1].to(at::kBFloat16));
    EXPECT_EQ(bf16.scalar_type(), at::kBFloat16);
    const at::Tensor expected = activate(a, parts[0].to(at::kBFloat16).to(at::kFloat)) *
                                parts[1].to(at::kBFloat16).to(at::kFloat);
    EXPECT_LT(max_abs_error(bf16.to(at::kFloat), expected), 0.01 * expected.abs().max().item<double>());
    EXPECT_LT(max_abs_error(activate(a, both.view({37, 2, 300})), activate(a, both).view({37, 2, 300})), 5e-6);
  }
}

}  // namespace
}  // namespace semroute

namespace semroute {
namespace {

TEST(RmsNormKernel, EqualsTheEagerFormula) {
  c10::InferenceMode guard;
  at::manual_seed(4);
  for (int64_t dim : {7, 64, 100}) {
    const at::Tensor x = at::randn({3, 5, dim}) * 3, w = at::randn({dim});
    const at::Tensor expected = w * (x * at::rsqrt(x.pow(2).mean(-1, true) + 1e-6));
    const RmsNorm norm = RmsNorm::from(w, 1e-6, false);
    EXPECT_LT(max_abs_error(norm(x), expected), 2e-5) << dim;
    // Strided rows (a view of a wider projection) give the same result.
    const at::Tensor wide = at::cat({x, x}, -1);
    EXPECT_LT(max_abs_error(norm(wide.narrow(-1, 0, dim)), expected), 2e-5) << dim;
  }
}

// Against libtorch's layer_norm in double precision: dims with and without
// vector tails, with and without bias, rows far from zero (the variance is
// taken from centred values, not E[x²] − E[x]², which would cancel).
TEST(LayerNormKernel, EqualsLibtorchInDouble) {
  c10::InferenceMode guard;
  at::manual_seed(6);
  for (int64_t dim : {1, 7, 64, 100, 768})
    for (const bool bias : {false, true})
      for (const double offset : {0.0, 1000.0}) {
        const at::Tensor x = at::randn({3, 5, dim}) * 3 + offset, w = at::randn({dim});
        const at::Tensor b = bias ? at::randn({dim}) : at::Tensor();
        const at::Tensor expected = at::layer_norm(x.to(at::kDouble), {dim}, w.to(at::kDouble),
                                                   bias ? b.to(at::kDouble) : at::Tensor(), 1e-5);
        const LayerNorm norm = LayerNorm::from(w, b, 1e-5);
        const std::string what = std::to_string(dim) + (bias ? " bias" : "") + " offset " + std::to_string(offset);
        const double tolerance = offset > 0 ? 2e-3 : 2e-5;  // fp32 inputs near 1000 carry 6e-5 of rounding
        EXPECT_LT(max_abs_error(norm(x).to(at::kDouble), expected), tolerance) << what;
        EXPECT_LT(max_abs_error(norm(at::cat({x, x}, -1).narrow(-1, 0, dim)).to(at::kDouble), expected), tolerance)
            << what << " (strided rows)";
        // A bf16 model's norm (bf16 weights) takes libtorch's path.
        const LayerNorm bf16 = LayerNorm::from(w.to(at::kBFloat16), bias ? b.to(at::kBFloat16) : at::Tensor(), 1e-5);
        EXPECT_EQ(bf16(x.to(at::kBFloat16)).scalar_type(), at::kBFloat16);
      }
}

}  // namespace
}  // namespace semroute

namespace semroute {
namespace {

// Every item once, in chunks of at most `chunk` that shrink as the work runs
// out, down to single items at the end (a late thread waits for no long one).
TEST(ParallelChunks, CoverEveryItemOnceInShrinkingChunks) {
  for (int64_t count : {1, 7, 24, 1000}) {
    for (int64_t chunk : {1, 6, 100}) {
      std::mutex mutex;
      std::vector<std::pair<int64_t, int64_t>> taken;
      parallel_chunks(count, chunk, [&](int64_t begin, int64_t end) {
        std::lock_guard<std::mutex> lock(mutex);
        taken.emplace_back(begin, end);
      });
      std::sort(taken.begin(), taken.end());
      const std::string what = std::to_string(count) + " items, chunks of " + std::to_string(chunk);
      ASSERT_FALSE(taken.empty()) << what;
      EXPECT_EQ(taken.front().first, 0) << what;
      EXPECT_EQ(taken.back().second, count) << what;
      for (size_t i = 0; i < taken.size(); ++i) {
        const int64_t size = taken[i].second - taken[i].first;
        EXPECT_GE(size, 1) << what;
        EXPECT_LE(size, chunk) << what;
        if (i > 0) {
          EXPECT_EQ(taken[i].first, taken[i - 1].second) << what;
          EXPECT_LE(size, taken[i - 1].second - taken[i - 1].first) << what;
        }
      }
      EXPECT_EQ(taken.back().second - taken.back().first, 1) << what;
    }
  }
  // Two threads, 24 items in chunks of at most 6: 6, 4, 3, 2, 2, then single items.
  EXPECT_EQ(next_chunk(24, 6, 2), 6);
  EXPECT_EQ(next_chunk(18, 6, 2), 4);
  EXPECT_EQ(next_chunk(3, 6, 2), 1);
}

// Claims stop shrinking at the floor (but the last, which takes what is left).
TEST(ParallelChunks, ChunksStopShrinkingAtTheFloor) {
  const ScopedTeam team(2);
  EXPECT_EQ(next_chunk(24, 6, 2, 2), 6);
  EXPECT_EQ(next_chunk(3, 6, 2, 2), 2);
  EXPECT_EQ(next_chunk(1, 6, 2, 2), 1);
  EXPECT_EQ(next_chunk(10, 3, 2, 5), 3);  // a floor above the chunk: the chunk
  std::mutex mutex;
  std::vector<int64_t> sizes;
  parallel_chunks(
      100, 10,
      [&](int64_t begin, int64_t end) {
        std::lock_guard<std::mutex> lock(mutex);
        sizes.push_back(end - begin);
      },
      4);
  int64_t total = 0, below_floor = 0;
  for (int64_t size : sizes) {
    total += size;
    below_floor += size < 4;
  }
  EXPECT_EQ(total, 100);
  EXPECT_LE(below_floor, 1);
}

// The second pass starts only when every item of the first has finished, on
// whichever thread; each item of each pass runs once. The first pass is made
// slow (a sleep) so that a thread not waiting would start the second early.
TEST(ParallelChunks, SecondPassStartsAfterTheWholeFirst) {
  const ScopedTeam team(2);
  for (int64_t first_count : {1, 2, 16, 64}) {
    for (int64_t second_count : {1, 5, 36}) {
      std::vector<std::atomic<int>> first_runs(static_cast<size_t>(first_count));
      std::vector<std::atomic<int>> second_runs(static_cast<size_t>(second_count));
      std::atomic<int64_t> first_done{0}, early{0};
      parallel_passes({{{first_count, std::max<int64_t>(1, first_count / 2), 1},
                        [&](int64_t begin, int64_t end) {
                          std::this_thread::sleep_for(std::chrono::milliseconds(2));
                          for (int64_t i = begin; i < end; ++i) first_runs[static_cast<size_t>(i)]++;
                          first_done += end - begin;
                        }},
                       {{second_count, 2, 1}, [&](int64_t begin, int64_t end) {
                          if (first_done.load() != first_count) early++;
                          for (int64_t i = begin; i < end; ++i) second_runs[static_cast<size_t>(i)]++;
                        }}});
      const std::string what = std::to_string(first_count) + " then " + std::to_string(second_count);
      EXPECT_EQ(early.load(), 0) << what;
      for (const auto& runs : first_runs) EXPECT_EQ(runs.load(), 1) << what;
      for (const auto& runs : second_runs) EXPECT_EQ(runs.load(), 1) << what;
    }
  }
}

// An exception in the first pass reaches the caller; the other threads stop
// waiting for the item that never finished (a hang here would time out).
TEST(ParallelChunks, FirstPassExceptionIsRethrownWithoutAHang) {
  const ScopedTeam team(2);
  std::atomic<int> second_runs{0};
  EXPECT_THROW(parallel_passes({{{8, 1, 1},
                                 [&](int64_t begin, int64_t) {
                                   if (begin == 0) throw std::runtime_error("first pass failed");
                                   std::this_thread::sleep_for(std::chrono::milliseconds(1));
                                 }},
                                {{8, 1, 1}, [&](int64_t, int64_t) { second_runs++; }}}),
               std::runtime_error);
  EXPECT_EQ(second_runs.load(), 0);
}

// Called inside a parallel region, both passes run on the calling thread.
TEST(ParallelChunks, BothPassesRunInsideAParallelRegion) {
  const ScopedTeam team(2);
  std::atomic<int64_t> first_items{0}, second_items{0};
  at::parallel_for(0, 2, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      parallel_passes({{{10, 3, 1}, [&](int64_t b, int64_t e) { first_items += e - b; }},
                       {{7, 2, 1}, [&](int64_t b, int64_t e) {
                          EXPECT_GE(first_items.load(), 10);
                          second_items += e - b;
                        }}});
  });
  EXPECT_EQ(first_items.load(), 20);
  EXPECT_EQ(second_items.load(), 14);
}

// `next` runs once a batch, on the calling thread, before the caller takes
// a chunk of that batch and while the other thread starts on it: it waits
// (bounded) for an item another thread finished. Each item runs once, a
// batch only after the whole one before, whose passes are gone by then.
TEST(ParallelChunks, NextBatchIsPlannedOnTheCallerWhileTheTeamRuns) {
  const ScopedTeam team(2);
  const std::thread::id caller = std::this_thread::get_id();
  constexpr int kBatches = 3;
  std::atomic<int64_t> done[kBatches] = {};
  std::atomic<int> planned{0}, caller_early{0}, not_on_caller{0}, team_unseen{0}, kept{0}, early{0};
  std::weak_ptr<int> held_by[kBatches];  // something each batch's passes hold
  const auto batch = [&](int k) {
    auto held = std::make_shared<int>(k);
    held_by[k] = held;
    return PassBatch{{{64, 4, 1}, [&, k, held](int64_t begin, int64_t end) {
                        if (k > 0 && done[k - 1].load() != 64) early++;
                        if (std::this_thread::get_id() == caller && planned.load() <= k) caller_early++;
                        done[k] += end - begin;
                      }}};
  };
  parallel_pass_batches(batch(0), [&]() -> std::optional<PassBatch> {
    const int k = planned++;  // the batch running now
    if (std::this_thread::get_id() != caller) not_on_caller++;
    if (k > 0 && !held_by[k - 1].expired()) kept++;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (done[k].load() == 0 && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
    if (done[k].load() == 0) team_unseen++;
    if (k + 1 == kBatches) return std::nullopt;
    return batch(k + 1);
  });
  EXPECT_EQ(planned.load(), kBatches);
  for (const auto& items : done) EXPECT_EQ(items.load(), 64);
  EXPECT_EQ(early.load(), 0);
  EXPECT_EQ(caller_early.load(), 0);
  EXPECT_EQ(not_on_caller.load(), 0);
  EXPECT_EQ(team_unseen.load(), 0);
  EXPECT_EQ(kept.load(), 0) << "a batch's passes outlived the start of the batch after";
}

// The team's threads follow the batches from the first while the caller
// plans more (their list grows, and moves, as the region runs): a thread that
// starts late must still find them. Many regions of many quick batches.
TEST(ParallelChunks, ThreadsThatStartLateFindEveryBatch) {
  const ScopedTeam team(2);
  constexpr int kRegions = 400, kBatches = 40;
  for (int region = 0; region < kRegions; ++region) {
    std::atomic<int64_t> items{0};
    int planned = 0;
    const auto batch = [&] { return PassBatch{{{4, 1, 1}, [&](int64_t begin, int64_t end) { items += end - begin; }}}; };
    parallel_pass_batches(batch(), [&]() -> std::optional<PassBatch> {
      if (++planned == kBatches) return std::nullopt;
      return batch();
    });
    ASSERT_EQ(items.load(), 4 * kBatches) << "region " << region;
  }
}

// With one thread, or inside a parallel region, the batches run in turn on
// the calling thread; an exception `next` throws reaches the caller and the
// other threads stop waiting (a hang here would time out).
TEST(ParallelChunks, BatchesRunAloneAndAPlanningExceptionIsRethrown) {
  for (int threads : {1, 2}) {
    const ScopedTeam team(threads);
    std::atomic<int64_t> items{0};
    const PassBatch batch{{{10, 3, 1}, [&](int64_t begin, int64_t end) { items += end - begin; }}};
    const auto twice = [&] {
      return [&, left = 1]() mutable -> std::optional<PassBatch> {
        if (left-- == 0) return std::nullopt;
        return batch;
      };
    };
    parallel_pass_batches(batch, twice());
    EXPECT_EQ(items.load(), 20);
    at::parallel_for(0, 2, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) parallel_pass_batches(batch, twice());
    });
    EXPECT_EQ(items.load(), 60) << threads << " threads";
    // The first batch's items last until `next` has thrown, and 1 ms more.
    std::atomic<bool> thrown{false};
    const auto after_the_throw = [&](int64_t, int64_t) {
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (!thrown.load() && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    };
    EXPECT_THROW(parallel_pass_batches({{{8, 1, 1}, after_the_throw}, batch[0]},
                                       [&]() -> std::optional<PassBatch> {
                                         thrown = true;
                                         throw std::runtime_error("planning failed");
                                       }),
                 std::runtime_error);
    EXPECT_EQ(items.load(), 60) << "a pass ran after planning had failed";
  }
}

TEST(PackedGemm, RowLadderIsBoundedAndAscending) {
  const auto& ladder = PackedGemm::row_ladder();
  ASSERT_FALSE(ladder.empty());
  EXPECT_EQ(ladder.front(), 1);
  EXPECT_EQ(ladder.back(), 4096);
  EXPECT_LT(ladder.size(), 80u);
  for (size_t i = 1; i < ladder.size(); ++i) {
    EXPECT_LT(ladder[i - 1], ladder[i]);
    // A padded input never does more than 1/8 (1/4 past 512 rows) extra work.
    if (ladder[i - 1] >= 32) {
      EXPECT_LE(ladder[i] - ladder[i - 1], ladder[i - 1] / (ladder[i - 1] < 512 ? 8 : 4));
    }
  }
}

// Row counts on and between the rungs and past the longest one (chunks).
TEST(PackedGemm, EveryRowCountOnAndBetweenRungs) {
  c10::InferenceMode guard;
  at::manual_seed(5);
  const at::Tensor w = at::randn({40, 24}), b = at::randn({40});
  const auto packed = PackedGemm::pack(w, b);
  ASSERT_NE(packed, nullptr);
  for (int64_t rows : {2, 17, 63, 65, 513, 4095, 4096, 4097, 9000}) {
    const at::Tensor x = at::randn({rows, 24});
    EXPECT_LT(max_abs_error((*packed)(x), at::linear(x, w, b)), 1e-4) << rows << " rows";
  }
}

// Dynamic int8: per-channel weights, per-row activations; the error is that
// of 8-bit (7-bit without VNNI) rounding, relative to the rows' ranges.
TEST(PackedGemm, Int8CloseToFloat) {
  c10::InferenceMode guard;
  at::manual_seed(7);
  const at::Tensor w = at::randn({96, 256}) * 0.05, b = at::randn({96});
  const auto packed = PackedGemm::pack(w, b, true);
  ASSERT_NE(packed, nullptr);
  EXPECT_TRUE(packed->quantized());
  // Skewed rows (as after GELU), a zero row and a constant row.
  at::Tensor x = at::gelu(at::randn({70, 256}) * 2);
  x[3].zero_();
  x[4].fill_(0.5);
  for (int64_t rows : {1, 9, 70}) {
    const at::Tensor xs = x.narrow(0, 0, rows);
    const at::Tensor y = (*packed)(xs), expected = at::linear(xs, w, b);
    EXPECT_EQ(y.scalar_type(), at::kFloat);
    // Relative to the largest output: ~1/255 of a row's range per activation.
    const double error = max_abs_error(y, expected) / expected.abs().max().item<double>();
    const double cosine = at::cosine_similarity(y.flatten(), expected.flatten(), 0).item<double>();
    std::printf("    int8 (%d levels) vs fp32, %lld rows: max abs error %.3g of the largest output, cosine %.6f\n",
                PackedGemm::activation_levels(), static_cast<long long>(rows), error, cosine);
    EXPECT_LT(error, PackedGemm::activation_levels() == 255 ? 0.015 : 0.03);
    EXPECT_GT(cosine, 0.9999);
  }
  EXPECT_LT(max_abs_error((*packed)(x[3].unsqueeze(0)), b.unsqueeze(0)), 1e-6);  // a zero row is exact
  // A NaN or infinite input gives a NaN row, never a finite guess.
  at::Tensor broken = x.narrow(0, 0, 3).clone();
  broken[1][5] = std::numeric_limits<float>::infinity();
  broken[2][7] = std::numeric_limits<float>::quiet_NaN();
  const at::Tensor out = (*packed)(broken);
  EXPECT_TRUE(out[0].isfinite().all().item<bool>());
  EXPECT_FALSE(out[1].isfinite().any().item<bool>());
  EXPECT_FALSE(out[2].isfinite().any().item<bool>());
}

TEST(PackedGemm, Int8LongInputsEqualTheirRowsAlone) {
  // Long inputs run in blocks of rows (bounded temporaries, tasks of rows x
  // panels); integer sums do not depend on the blocking, so every row equals
  // the row computed alone. 150 outputs: two whole panels and a part.
  c10::InferenceMode guard;
  at::manual_seed(11);
  const at::Tensor w = at::randn({150, 64}), b = at::randn({150}), x = at::randn({600, 64});
  const auto packed = PackedGemm::pack(w, b, true);
  ASSERT_NE(packed, nullptr);
  const at::Tensor all = (*packed)(x);
  for (int64_t row : {0, 95, 96, 97, 255, 256, 257, 511, 512, 599})
    EXPECT_TRUE(at::equal(all[row], (*packed)(x[row].unsqueeze(0))[0])) << "row " << row;
  EXPECT_LT(max_abs_error(all, at::linear(x, w, b)) / all.abs().max().item<double>(), 0.03);
}

TEST(PackedGemm, Int8WithoutBiasAndFromBfloat16) {
  c10::InferenceMode guard;
  const at::Tensor w = at::randn({33, 17}), x = at::randn({5, 17});
  const auto packed = PackedGemm::pack(w, at::Tensor(), true);
  ASSERT_NE(packed, nullptr);
  const at::Tensor expected = at::linear(x, w);
  EXPECT_LT(max_abs_error((*packed)(x), expected) / expected.abs().max().item<double>(), 0.03);
  const auto from_bf16 = PackedGemm::pack(w.to(at::kBFloat16), at::Tensor(), true);
  ASSERT_NE(from_bf16, nullptr);
  EXPECT_EQ((*from_bf16)(x.to(at::kBFloat16)).scalar_type(), at::kBFloat16);
}

}  // namespace
}  // namespace semroute

namespace semroute {
namespace {

// A norm or a gated activation handed to a product as a pass (GemmInput,
// quantized as it is made on the int8 path) gives exactly what its tensor
// gives: the same row kernels make the same floats, quantized alike. Row
// counts around the 8 rows made at a time and the tasks of threads; with and
// without a residual; a NaN row stays NaN.
TEST(PackedGemm, MadeInputsEqualTheirTensors) {
  c10::InferenceMode guard;
  at::manual_seed(12);
  const at::Tensor w = at::randn({150, 200}) * 0.05, b = at::randn({150});
  const LayerNorm norm = LayerNorm::from(at::randn({200}), at::Tensor(), 1e-5);
  for (const bool int8 : {true, false}) {
    const auto packed = PackedGemm::pack(w, b, int8);
    ASSERT_NE(packed, nullptr);
    for (int64_t rows : {1, 7, 8, 9, 81, 600}) {
      const std::string what = (int8 ? "int8, " : "fp32, ") + std::to_string(rows) + " rows";
      at::Tensor x = at::randn({rows, 200}) * 3;
      const at::Tensor both = at::randn({rows, 400}), residual = at::randn({rows, 150});
      const auto parts = both.chunk(2, -1);
      EXPECT_TRUE(at::equal((*packed)(norm.rows(x)), (*packed)(norm(x)))) << what;
      EXPECT_TRUE(at::equal(packed->add_to(residual, norm.rows(x)), packed->add_to(residual, norm(x)))) << what;
      const GemmInput gated = gated_activation_rows(Activation::kGeluErf, parts[0], parts[1]);
      EXPECT_TRUE(gated.made()) << what;
      EXPECT_TRUE(at::equal((*packed)(gated), (*packed)(gated_activation(Activation::kGeluErf, parts[0], parts[1]))))
          << what;
      x[rows / 2][3] = std::numeric_limits<float>::quiet_NaN();
      const at::Tensor broken = (*packed)(norm.rows(x));
      EXPECT_FALSE(broken[rows / 2].isfinite().any().item<bool>()) << what;
      if (rows > 1) {
        EXPECT_TRUE(broken[rows / 2 == 0 ? 1 : 0].isfinite().all().item<bool>()) << what;
      }
    }
  }
  // Inputs a row kernel does not take (bf16, 3-D) arrive as tensors.
  EXPECT_FALSE(norm.rows(at::randn({2, 3, 200})).made());
}

// Products planned as passes and run in one region (a transformer layer's
// tail: h = x + Wo·a, then h + W2·act(W1·norm(h))), each reading what the
// pass before wrote, give exactly what the products give one at a time: the
// same kernels on the same rows. Where a product is not on our int8 kernel,
// or a LoRA delta applies, there are no passes.
TEST(PackedGemm, ProductsAsPassesOfOneRegionEqualProductsAlone) {
  c10::InferenceMode guard;
  at::manual_seed(13);
  const ScopedTeam team(2);
  const int64_t width = 96, inner = 160;
  // Our int8 kernel alone has passes; left to a timing, a shape may go to
  // oneDNN (in a sanitizer's build, as the instrumentation weighs it).
  const auto on_our_kernel = [](const at::Tensor& w, const at::Tensor& b, const char* name) {
    const test::ScopedEnv own("SEMROUTE_INT8_GEMM", "own");
    return Linear::from(w, b, name, true);
  };
  const Linear wo = on_our_kernel(at::randn({width, width}) * 0.1, at::randn({width}), "wo");
  const Linear wi = on_our_kernel(at::randn({2 * inner, width}) * 0.1, at::randn({2 * inner}), "wi");
  const Linear w2 = on_our_kernel(at::randn({width, inner}) * 0.1, at::Tensor(), "w2");
  const LayerNorm norm = LayerNorm::from(at::randn({width}), at::Tensor(), 1e-5);
  for (int64_t rows : {1, 3, 16, 64, 200}) {
    const std::string what = std::to_string(rows) + " rows";
    const at::Tensor x = at::randn({rows, width}), a = at::randn({rows, width});
    const at::Tensor h = wo.add_to(x, a);
    const auto gate = wi(norm.rows(h)).chunk(2, -1);
    const at::Tensor alone = w2.add_to(h, gated_activation_rows(Activation::kGeluErf, gate[0], gate[1]));

    const auto output = wo.passes(GemmInput(a), x);
    ASSERT_TRUE(output.has_value()) << what;
    ASSERT_TRUE(norm.rows_made_for(output->y)) << what;
    const auto input_gate = wi.passes(norm.rows(output->y), at::Tensor());
    ASSERT_TRUE(input_gate.has_value()) << what;
    const auto parts = input_gate->y.chunk(2, -1);
    ASSERT_TRUE(gated_activation_fuses(parts[0], parts[1])) << what;
    const auto mlp = w2.passes(gated_activation_rows(Activation::kGeluErf, parts[0], parts[1]), output->y);
    ASSERT_TRUE(mlp.has_value()) << what;
    parallel_passes({output->quantize, output->multiply, input_gate->quantize, input_gate->multiply, mlp->quantize,
                     mlp->multiply});
    EXPECT_TRUE(at::equal(output->y, h)) << what;
    EXPECT_TRUE(at::equal(mlp->y, alone)) << what << ": max abs difference "
                                          << (mlp->y - alone).abs().max().item<float>();
  }
  const Linear fp32 = Linear::from(at::randn({width, width}), at::Tensor(), "fp32", false);
  EXPECT_FALSE(fp32.passes(GemmInput(at::randn({4, width})), at::Tensor()).has_value());
  struct NoDelta : LinearDeltas {
    at::Tensor add(const std::string&, const at::Tensor&, const at::Tensor& y) const override { return y; }
  } delta;
  EXPECT_FALSE(wo.passes(GemmInput(at::randn({4, width})), at::Tensor(), &delta).has_value());
  EXPECT_FALSE(wo.passes(GemmInput(at::randn({width, 4}).t()), at::Tensor()).has_value());  // not contiguous
  EXPECT_FALSE(wo.passes(GemmInput(at::randn({0, width})), at::Tensor()).has_value());
}

TEST(PackedGemm, PanelFinishSeesEachPanelOnceAfterItIsWritten) {
  c10::InferenceMode guard;
  at::manual_seed(14);
  const ScopedTeam team(2);
  const int64_t width = 96, out = 200;  // the last panel partly valid on either path
  const test::ScopedEnv own("SEMROUTE_INT8_GEMM", "own");
  const Linear product = Linear::from(at::randn({out, width}) * 0.1, at::randn({out}), "product", true);
  const int64_t panel = product.panel_columns();
  ASSERT_GT(panel, 0);
  for (int64_t rows : {1, 16, 100, 300}) {  // one block of rows, several
    const std::string what = std::to_string(rows) + " rows";
    const at::Tensor a = at::randn({rows, width});
    const at::Tensor alone = product(a);
    std::mutex lock;
    int64_t seen = 0;
    // Each element doubled, after the product wrote it: twice `alone` only if
    // every panel is handed over once, whole, and after it was written.
    const auto passes = product.passes(GemmInput(a), at::Tensor());
    ASSERT_TRUE(passes.has_value()) << what;
    float* y = passes->y.data_ptr<float>();
    *passes->finish = [&](int64_t row, int64_t count, int64_t column, int64_t columns) {
      EXPECT_EQ(column % panel, 0);
      EXPECT_EQ(columns, std::min(panel, out - column));
      for (int64_t r = row; r < row + count; ++r)
        for (int64_t c = column; c < column + columns; ++c) y[r * out + c] *= 2;
      const std::lock_guard<std::mutex> held(lock);
      seen += count * columns;
    };
    parallel_passes({passes->quantize, passes->multiply});
    EXPECT_EQ(seen, rows * out) << what;
    EXPECT_TRUE(at::equal(passes->y, alone * 2)) << what;
  }
}

}  // namespace
}  // namespace semroute
