// The CPU attention kernel: one task per (sequence, head, query block), each
// rotating its queries and keys (RoPE), computing the block's scores against
// only the keys its pattern reaches, the softmax and the product with V in
// buffers that stay in cache, and writing its rows straight into the
// token-major output. Nothing S×S, no masks, no transposes, no per-block
// tensor ops: the eager path in attention.cpp spent more time in those than
// in the arithmetic.
#include "models/attention_cpu.h"

#include <ATen/Parallel.h>
#include <ATen/ops/addmm.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/from_blob.h>

#include <dnnl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/bf16_gemm.h"
#include "models/parallel_chunks.h"
#include "models/rope.h"
#include "models/vector_math.h"
#include "models/workspace.h"
#include "semroute/error.h"

namespace semroute {
namespace {

// Score floats one task keeps (1 MB): small enough for L2.
constexpr int64_t kTaskScores = 256 * 1024;

// The most keys a block takes our own small-block loops for (above, sgemm).
constexpr int64_t kSmallBlockKeys = 128;

// The shortest longest sequence of a batch that takes bf16 products.
constexpr int64_t kBf16MinTokens = 128;

// Softmax of scores[lo, hi) in place but for the division by the sum, which
// it returns: the caller divides the row's product with V instead (dim
// floats, not `width`); the rest of the row becomes 0.
template <typename V>
inline float unnormalized_softmax_body(float* row, int64_t width, int64_t lo, int64_t hi) {
  const float sum = vec::exp_and_sum<V>(row + lo, hi - lo, vec::max<V>(row + lo, hi - lo));
  std::fill(row, row + lo, 0.0f);
  std::fill(row + hi, row + width, 0.0f);
  return sum;
}
SEMROUTE_ISA_DISPATCH_VECTOR(float, unnormalized_softmax, unnormalized_softmax_body,
                             (float* row, int64_t width, int64_t lo, int64_t hi), (row, width, lo, hi))

// The same for bf16 products: the exps go straight to the bf16 row `out` of
// kernels::bf16_padded_k(width) (a degree-3 exp, exact enough for bf16: one
// pass where the float row was written, read back and converted), rounded
// by the CPU's own conversion: bf16 products run only on CPUs with AVX-512
// BF16 (kernels::bf16_dot_here), so this one variant serves them all.
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512bf16,avx2,fma"), flatten)) float
unnormalized_softmax_to_bf16(const float* row, int64_t width, int64_t lo, int64_t hi, uint16_t* out) {
  using V = vec::Floats16;
  const float sum = vec::exp_and_sum_to_bf16<V, true>(row + lo, hi - lo, vec::max<V>(row + lo, hi - lo), out + lo);
  std::fill(out, out + lo, uint16_t{0});
  std::fill(out + hi, out + kernels::bf16_padded_k(width), uint16_t{0});
  return sum;
}

// Scores and context of a block with few keys in our own loops, where
// oneDNN's sgemm costs more per call than the arithmetic (a 16-token head:
// 65 kFLOP). With register tiles (below), up to 128 keys: ModernBERT-base
// int8, 2 threads, AVX-512, a 64-token layer's attention 70-88 µs a thread
// against 93-112 with sgemm, 100 tokens 208 against 250; at 256 keys (AVX2)
// sgemm's blocking wins by 5-10 %. Keys
// (rows of `k`, stride `k_stride`) are transposed into `kt` (dim x padded
// keys), so that a register holds one score per key; scores[r] is written
// at r · padded. `dim` a multiple of the widest vector (16).
inline int64_t small_block_padded(int64_t keys) { return (keys + 15) / 16 * 16; }

// The product both steps are: out[i] = factor[i · factor_step] · Σₜ
// a[i][t] · b[t] over `depth`, for `rows` rows of `a` (`a_stride` apart) and
// `columns` columns of b (rows `b_stride` apart; a multiple of the vector).
// Tiles of R rows x J vectors stay in registers over `depth`: 6 x 2 is 12
// sums, with the 2 loaded and a broadcast 15 registers (AVX2 has 16), and
// enough independent sums to keep both FMA pipes busy.
constexpr int kTileRows = 6, kTileVectors = 2;

struct SmallProduct {
  const float* a;
  int64_t a_stride, rows;
  const float* b;
  int64_t b_stride, depth, columns;
  const float* factor;
  int64_t factor_step;
  float* out;
  int64_t out_stride;
};

template <typename V, int R, int J>
inline void small_product_tile(const SmallProduct& p, int64_t row, int64_t column) {
  constexpr int64_t kLanes = sizeof(V) / sizeof(float);
  const float* a = p.a + row * p.a_stride;
  const float* b = p.b + column;
  V acc[R][J] = {};
  for (int64_t t = 0; t < p.depth; ++t) {
    V w[J];
    for (int j = 0; j < J; ++j) w[j] = vec::load<V>(b + t * p.b_stride + j * kLanes);
    for (int i = 0; i < R; ++i) {
      const float ai = a[i * p.a_stride + t];
      for (int j = 0; j < J; ++j) acc[i][j] += ai * w[j];
    }
  }
  for (int i = 0; i < R; ++i) {
    const float factor = p.factor[(row + i) * p.factor_step];
    for (int j = 0; j < J; ++j) vec::store(p.out + (row + i) * p.out_stride + column + j * kLanes, acc[i][j] * factor);
  }
}

// The rows' tiles: R = rows (1..kTileRows) fixed at compile time.
template <typename V, int R>
inline void small_product_rows(const SmallProduct& p, int64_t row) {
  constexpr int64_t kLanes = sizeof(V) / sizeof(float);
  int64_t column = 0;
  for (; column + kTileVectors * kLanes <= p.columns; column += kTileVectors * kLanes)
    small_product_tile<V, R, kTileVectors>(p, row, column);
  for (; column < p.columns; column += kLanes) small_product_tile<V, R, 1>(p, row, column);
}

template <typename V>
inline void small_product(const SmallProduct& p) {
  for (int64_t row = 0; row < p.rows; row += kTileRows) {
    switch (std::min<int64_t>(kTileRows, p.rows - row)) {
      case 1: small_product_rows<V, 1>(p, row); break;
      case 2: small_product_rows<V, 2>(p, row); break;
      case 3: small_product_rows<V, 3>(p, row); break;
      case 4: small_product_rows<V, 4>(p, row); break;
      case 5: small_product_rows<V, 5>(p, row); break;
      default: small_product_rows<V, kTileRows>(p, row);
    }
  }
}

template <typename V>
inline void small_block_scores_body(const float* q, int64_t q_stride, int64_t rows, const float* k, int64_t k_stride,
                                    int64_t keys, int64_t dim, float scale, float* kt, float* scores) {
  const int64_t padded = small_block_padded(keys);
  // Key by key (its dims contiguous): a scalar loop over the keys of each
  // dim spent ~70 % of this function in its loop overhead.
  for (int64_t j = 0; j < keys; ++j) {
    const float* key = k + j * k_stride;
#pragma GCC unroll 16
    for (int64_t d = 0; d < dim; ++d) kt[d * padded + j] = key[d];
  }
  for (int64_t d = 0; d < dim; ++d) std::fill(kt + d * padded + keys, kt + (d + 1) * padded, 0.0f);
  small_product<V>({q, q_stride, rows, kt, padded, dim, padded, &scale, 0, scores, padded});
}
SEMROUTE_ISA_DISPATCH_VECTOR(void, small_block_scores, small_block_scores_body,
                             (const float* q, int64_t q_stride, int64_t rows, const float* k, int64_t k_stride,
                              int64_t keys, int64_t dim, float scale, float* kt, float* scores),
                             (q, q_stride, rows, k, k_stride, keys, dim, scale, kt, scores))

// context[r] = inverse_sums[r] · Σⱼ p[r][j] · v[j] for the block's rows
// (p at r · padded, v rows `v_stride` apart, context rows `out_stride`).
template <typename V>
inline void small_block_context_body(const float* p, int64_t rows, int64_t keys, const float* v, int64_t v_stride,
                                     int64_t dim, const float* inverse_sums, float* context, int64_t out_stride) {
  small_product<V>({p, small_block_padded(keys), rows, v, v_stride, keys, dim, inverse_sums, 1, context, out_stride});
}
SEMROUTE_ISA_DISPATCH_VECTOR(void, small_block_context, small_block_context_body,
                             (const float* p, int64_t rows, int64_t keys, const float* v, int64_t v_stride,
                              int64_t dim, const float* inverse_sums, float* context, int64_t out_stride),
                             (p, rows, keys, v, v_stride, dim, inverse_sums, context, out_stride))

// A [tokens, heads, dim] fp32 view whose rows can be handed to sgemm (unit
// stride in the last dimension); the tokens of every sequence laid end to end.
struct TokenMajor {
  at::Tensor data;
  const float* base;
  int64_t token_stride, head_stride;

  explicit TokenMajor(const at::Tensor& x) : data(x.to(at::kFloat)) {
    if (data.stride(-1) != 1) data = data.contiguous();
    base = data.data_ptr<float>();
    token_stride = data.stride(0);
    head_stride = data.stride(1);
  }
  const float* row(int64_t token, int64_t head) const { return base + token * token_stride + head * head_stride; }
  // The same row to write, in a tensor the call made itself.
  float* row_to_write(int64_t token, int64_t head) const { return data.data_ptr<float>() + (row(token, head) - base); }
};

// C[m, n] = alpha · A[m, k] · op(B) through oneDNN; where it answers
// "unimplemented" (oneDNN 2.6 does on some AMX machines whose OS has not
// enabled AMX for the process), through libtorch's BLAS on views of the same
// memory.
void sgemm(char trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
           int64_t ldb, float* c, int64_t ldc) {
  const dnnl_status_t status = dnnl_sgemm('N', trans_b, m, n, k, alpha, a, lda, b, ldb, 0.0f, c, ldc);
  if (status == dnnl_success) return;
  if (status != dnnl_unimplemented)
    throw InternalError("oneDNN sgemm failed in attention (status " + std::to_string(static_cast<int>(status)) + ")");
  const auto view = [](const float* data, int64_t rows, int64_t cols, int64_t ld) {
    return at::from_blob(const_cast<float*>(data), {rows, cols}, {ld, 1}, at::kFloat);
  };
  const at::Tensor op_b = trans_b == 'T' ? view(b, n, k, ldb).t() : view(b, k, n, ldb);
  at::Tensor out = view(c, m, n, ldc);
  at::addmm_out(out, out, view(a, m, k, lda), op_b, /*beta=*/0, alpha);
}

// Where each sequence starts: sequence i holds tokens [offsets[i], offsets[i] + lengths[i]).
std::vector<int64_t> offsets_of(const std::vector<int64_t>& lengths) {
  std::vector<int64_t> offsets;
  int64_t offset = 0;
  for (int64_t length : lengths) {
    offsets.push_back(offset);
    offset += length;
  }
  return offsets;
}

// Rows x[r] (row stride `stride`) of one head at positions first + r,
// rotated (RoPE) into `buffer` (rows x dim): its data.
const float* rotate_into(Workspace::Slot slot, const float* x, int64_t stride, int64_t rows, int64_t first,
                         const at::Tensor& cos, const at::Tensor& sin, int64_t dim) {
  float* buffer = Workspace::of_this_thread().get<float>(slot, static_cast<size_t>(rows * dim));
  rotate_rows(x, stride, rows, first, cos.data_ptr<float>(), sin.data_ptr<float>(), dim, 1, buffer, dim);
  return buffer;
}

// For bf16 products: every sequence's keys and values, per kv head, packed
// once before the tasks (kernels/bf16_gemm.h): keys as B (panels of 16 keys x
// pairs of dims), values as Vᵀ (panels of 16 dims x pairs of keys), each
// from the sequence's first key, so that a task starting at a multiple of 16
// keys reads its range in place. Laid out when planned, packed by pack().
class KeysAndValues {
 public:
  static constexpr int64_t kPanel = 16;
  KeysAndValues() = default;
  KeysAndValues(const std::vector<int64_t>& lengths, int64_t kv_heads, int64_t dim) : dim_(dim) {
    int64_t total = 0;
    for (int64_t length : lengths) {
      Sequence s;
      s.key_size = static_cast<int64_t>(kernels::bf16_panels_size(length, dim));
      s.value_size = static_cast<int64_t>(kernels::bf16_panels_size(dim, length));
      s.keys = total;
      s.values = total + kv_heads * s.key_size;
      total = s.values + kv_heads * s.value_size;
      s.value_panel = kernels::bf16_padded_k(length) * kPanel;
      sequences_.push_back(s);
    }
    // Not zeroed: pack() writes every element, the padding too. From
    // libtorch's allocator (the tensor cache), which keeps blocks between
    // layers, where a vector took fresh pages and zeroed them each time
    // (at 256 tokens ~40 µs a layer, on the thread that plans).
    data_ = at::empty({total}, at::kBFloat16);
  }
  // Packs the keys, or the values, of sequence i's kv head, which holds
  // tokens [first, first + length) of k or v: its tokens [from, to) only
  // (parts packed at once make the whole).
  void pack_keys(int64_t i, int64_t head, int64_t first, int64_t length, int64_t from, int64_t to,
                 const TokenMajor& k) const {
    const Sequence& s = sequences_[static_cast<size_t>(i)];
    kernels::pack_bf16_panel_part(k.row(first, head), k.token_stride, 1, length, dim_, from, to, 0, dim_,
                                  data() + s.keys + head * s.key_size);
  }
  void pack_values(int64_t i, int64_t head, int64_t first, int64_t length, int64_t from, int64_t to,
                   const TokenMajor& v) const {
    const Sequence& s = sequences_[static_cast<size_t>(i)];
    kernels::pack_bf16_panel_part(v.row(first, head), 1, v.token_stride, dim_, length, 0, dim_, from, to,
                                  data() + s.values + head * s.value_size);
  }
  // Keys from `first` (a multiple of kPanel) of sequence i's kv head.
  const uint16_t* keys(int64_t i, int64_t head, int64_t first) const {
    const Sequence& s = sequences_[static_cast<size_t>(i)];
    return data() + s.keys + head * s.key_size + first * kernels::bf16_padded_k(dim_);
  }
  // Values (as Vᵀ) from key `first` (even), panels value_panel(i) apart.
  const uint16_t* values(int64_t i, int64_t head, int64_t first) const {
    const Sequence& s = sequences_[static_cast<size_t>(i)];
    return data() + s.values + head * s.value_size + first * kPanel;
  }
  int64_t value_panel(int64_t i) const { return sequences_[static_cast<size_t>(i)].value_panel; }

 private:
  struct Sequence {
    int64_t keys, values, key_size, value_size, value_panel;  // offsets and sizes in data_ (uint16_t)
  };
  int64_t dim_ = 0;
  std::vector<Sequence> sequences_;
  uint16_t* data() const { return reinterpret_cast<uint16_t*>(data_.data_ptr<at::BFloat16>()); }
  at::Tensor data_;  // bf16 values as their bits
};

// One task: a block of queries of one head of one sequence.
struct Task {
  int64_t sequence, head, q0, q1;
};

}  // namespace

int64_t attention_query_block(int64_t keys) {
  // 64 measured best on AVX-512 for window 64 and for 512-2048 global keys.
  return std::clamp<int64_t>(kTaskScores / std::max<int64_t>(keys, 1), 16, 64) / 16 * 16;
}

namespace {

// One call's tasks and what they read, kept while they run (a pass may run
// them after the call that planned it has returned).
struct AttentionWork {
  std::vector<int64_t> lengths, offsets;
  std::vector<Task> tasks;
  at::Tensor cos, sin, out;  // out: [tokens, heads * dim] fp32
  // k: the keys the tasks read; given_k: the call's, where prepare() rotates
  // them into k first.
  std::optional<TokenMajor> q, k, v, given_k;
  KeysAndValues packed;
  // Where q, k and v arrive by panels (arrive): rotated in place and packed
  // there, the queries to bf16 rows [heads, tokens, padded dim] (bits).
  bool arriving = false;
  at::Tensor bf16_queries;
  double scale = 1, softcap = 0;
  AttentionPattern pattern;
  bool rotary = false, keys_in_task = false, bf16_products = false;
  int64_t dim = 0, group = 1, out_stride = 0, heads = 1, kv_heads = 1, tokens = 0;

  // Keys that several query blocks share are rotated, and bf16 keys and
  // values packed, once before the tasks: a pass over (sequence, kv head);
  // none where they were as they arrived.
  bool needs_preparing() const { return !arriving && (given_k.has_value() || bf16_products); }
  ChunkSplit prepare_split() const {
    const auto count = static_cast<int64_t>(lengths.size()) * kv_heads;
    return {count, chunk_for(count, 4), 1};
  }
  // (sequence, kv head) pairs [begin, end), on this thread.
  void prepare(int64_t begin, int64_t end);

  // Tasks differ in cost (a window clipped at a sequence's ends, sequences
  // of mixed lengths): threads take them on demand.
  ChunkSplit split() const {
    const auto count = static_cast<int64_t>(tasks.size());
    return {count, chunk_for(count, 8), 1};
  }
  // Tasks [begin, end), on this thread.
  void run(int64_t begin, int64_t end) const;

  // Rows [row, row + rows) of columns [column, column + width) of [q | k |
  // v], just written: RoPE on q's and k's, and bf16 packing.
  void arrive(int64_t row, int64_t rows, int64_t column, int64_t width) const;
  uint16_t* bf16_query_rows(int64_t head, int64_t token) const {
    return reinterpret_cast<uint16_t*>(bf16_queries.data_ptr<at::BFloat16>()) +
           (head * tokens + token) * kernels::bf16_padded_k(dim);
  }
};

// Whether q, k and v are the columns of one tensor side by side, each head's
// `dim` floats contiguous: what arrives by panels of it.
bool side_by_side(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  const int64_t dim = q.size(2);
  const auto heads_packed = [&](const at::Tensor& x) {
    return x.scalar_type() == at::kFloat && x.stride(2) == 1 && x.stride(1) == dim && x.stride(0) == q.stride(0);
  };
  return heads_packed(q) && heads_packed(k) && heads_packed(v) &&
         k.data_ptr<float>() == q.data_ptr<float>() + q.size(1) * dim &&
         v.data_ptr<float>() == k.data_ptr<float>() + k.size(1) * dim;
}

// The tasks of attention_cpu_packed. Without `may_read`, none (null) where
// setting them up would read q, k or v (copying a strided or non-fp32
// input): for passes planned before the pass that writes them.
std::shared_ptr<AttentionWork> plan_attention(const at::Tensor& q_in, const at::Tensor& k_in, const at::Tensor& v_in,
                                              const std::vector<int64_t>& lengths, const at::Tensor& cos_in,
                                              const at::Tensor& sin_in, double scale, AttentionPattern pattern,
                                              int64_t forced_block, double softcap, bool bf16_products,
                                              bool may_read, int64_t arriving_panel = 0) {
  if (bf16_products && !kernels::bf16_dot_here()) throw InternalError("bf16 attention products on a CPU without them");
  // Below 128 tokens packing the keys and values costs what the faster
  // products save (ModernBERT-base int8, 2 threads: 16 tokens 7 % slower,
  // 64 even, 256 3 % and 512 7 % faster).
  if (lengths.empty() || *std::max_element(lengths.begin(), lengths.end()) < kBf16MinTokens) bf16_products = false;
  const auto plain = [](const at::Tensor& x) { return x.scalar_type() == at::kFloat && x.stride(-1) == 1; };
  if (!may_read && (!plain(q_in) || !plain(k_in) || !plain(v_in))) return nullptr;
  auto work = std::make_shared<AttentionWork>();
  AttentionWork& w = *work;
  const int64_t tokens = q_in.size(0), heads = q_in.size(1), dim = q_in.size(2), kv_heads = k_in.size(1);
  w.out = at::empty({tokens, heads * dim}, q_in.options().dtype(at::kFloat));
  if (w.out.numel() == 0) return work;
  w.lengths = lengths;
  w.offsets = offsets_of(w.lengths);
  // Arriving by panels of whole heads, q and k are rotated there, not by the tasks.
  w.arriving = arriving_panel > 0 && arriving_panel % dim == 0 && side_by_side(q_in, k_in, v_in);
  w.rotary = cos_in.defined() && !w.arriving;
  // Every block of every head of every sequence is a task: one parallel
  // region for the whole batch, whatever its mix of lengths.
  bool one_block_each = true;  // every (sequence, head) is a single task
  for (size_t i = 0; i < lengths.size(); ++i) {
    const int64_t length = lengths[i], window = pattern.window >= length - 1 ? -1 : pattern.window;
    const int64_t block = forced_block > 0 ? forced_block : attention_query_block(window >= 0 ? 2 * window + 1 : length);
    one_block_each = one_block_each && block >= length;
    for (int64_t head = 0; head < heads; ++head)
      for (int64_t q0 = 0; q0 < length; q0 += block)
        w.tasks.push_back({static_cast<int64_t>(i), head, q0, std::min(length, q0 + block)});
  }
  // RoPE: each task rotates its own queries into its buffer (no pass and no
  // tensor of their own), and its keys too when it is the only task reading
  // them; where query blocks share keys, the keys are rotated once, before
  // the tasks (a task per block would rotate every key it reads again: 8
  // times per head at 512 global keys), into [kv_heads, tokens, dim] rows.
  w.keys_in_task = w.rotary && one_block_each;
  const bool rotate_keys_first = w.rotary && (!w.keys_in_task || bf16_products);
  w.cos = cos_in.defined() ? cos_in.to(at::kFloat).contiguous() : at::Tensor();
  w.sin = cos_in.defined() ? sin_in.to(at::kFloat).contiguous() : at::Tensor();
  w.q.emplace(q_in);
  w.v.emplace(v_in);
  if (rotate_keys_first) {
    w.given_k.emplace(k_in);
    w.k.emplace(at::empty({kv_heads, tokens, dim}, w.out.options()).permute({1, 0, 2}));
  } else {
    w.k.emplace(k_in);
  }
  if (bf16_products) w.packed = KeysAndValues(w.lengths, kv_heads, dim);
  if (bf16_products && w.arriving)
    w.bf16_queries = at::empty({heads * tokens * kernels::bf16_padded_k(dim)}, at::kBFloat16);
  w.heads = heads;
  w.tokens = tokens;
  w.kv_heads = kv_heads;
  w.scale = scale;
  w.softcap = softcap;
  w.pattern = pattern;
  w.bf16_products = bf16_products;
  w.dim = dim;
  w.group = heads / kv_heads;
  w.out_stride = heads * dim;
  return work;
}

void AttentionWork::prepare(int64_t begin, int64_t end) {
  for (int64_t p = begin; p < end; ++p) {
    const int64_t i = p / kv_heads, head = p % kv_heads;
    const int64_t first = offsets[static_cast<size_t>(i)], length = lengths[static_cast<size_t>(i)];
    if (given_k)
      rotate_rows(given_k->row(first, head), given_k->token_stride, length, 0, cos.data_ptr<float>(),
                  sin.data_ptr<float>(), dim, 1, k->row_to_write(first, head), k->token_stride);
    if (bf16_products) {
      packed.pack_keys(i, head, first, length, 0, length, *k);
      packed.pack_values(i, head, first, length, 0, length, *v);
    }
  }
}

void AttentionWork::arrive(int64_t row, int64_t rows, int64_t column, int64_t width) const {
  const int64_t q_columns = heads * dim, k_columns = kv_heads * dim, end = row + rows;
  // The first sequence these rows reach.
  const auto first_sequence =
      static_cast<size_t>(std::upper_bound(offsets.begin(), offsets.end(), row) - offsets.begin() - 1);
  for (int64_t c = column; c < column + width; c += dim) {
    const bool is_q = c < q_columns, is_k = !is_q && c < q_columns + k_columns;
    const int64_t head = (is_q ? c : is_k ? c - q_columns : c - q_columns - k_columns) / dim;
    const TokenMajor& x = is_q ? *q : is_k ? *k : *v;
    for (size_t i = first_sequence; i < lengths.size() && offsets[i] < end; ++i) {
      const int64_t first = offsets[i], length = lengths[i];
      const int64_t from = std::max(row, first) - first, to = std::min(end, first + length) - first;
      if (from >= to) continue;
      float* start = x.row_to_write(first + from, head);
      if (!is_q && !is_k) {
        if (bf16_products) packed.pack_values(static_cast<int64_t>(i), head, first, length, from, to, x);
        continue;
      }
      if (cos.defined())
        rotate_rows(start, x.token_stride, to - from, from, cos.data_ptr<float>(), sin.data_ptr<float>(), dim, 1, start,
                    x.token_stride);
      if (!bf16_products) continue;
      if (is_q)
        kernels::bf16_rows(start, x.token_stride, to - from, dim, bf16_query_rows(head, first + from));
      else
        packed.pack_keys(static_cast<int64_t>(i), head, first, length, from, to, x);
    }
  }
}

void AttentionWork::run(int64_t begin, int64_t end) const {
  Workspace& workspace = Workspace::of_this_thread();  // a task's temporaries, kept between calls
  for (int64_t t = begin; t < end; ++t) {
    const Task& task = tasks[static_cast<size_t>(t)];
    const int64_t length = lengths[static_cast<size_t>(task.sequence)];
    const int64_t first = offsets[static_cast<size_t>(task.sequence)];
    const int64_t window = pattern.window >= length - 1 ? -1 : pattern.window;
    const int64_t q0 = task.q0, q1 = task.q1, rows = q1 - q0, kv_head = task.head / group;
    int64_t k0 = window >= 0 ? std::max<int64_t>(0, q0 - window) : 0;
    // bf16 keys are packed in panels of 16 from the sequence's first: start at one.
    if (bf16_products) k0 = k0 / KeysAndValues::kPanel * KeysAndValues::kPanel;
    int64_t k1 = window >= 0 ? std::min(length, q1 + window) : length;
    if (pattern.causal) k1 = std::min(k1, q1);
    const int64_t keys = k1 - k0;
    const bool small = !bf16_products && keys <= kSmallBlockKeys && dim % 16 == 0;
    const int64_t score_stride = small ? small_block_padded(keys) : keys;
    float* scores = workspace.get<float>(Workspace::kScores, static_cast<size_t>(rows * score_stride));
    float* inverse_sums = workspace.get<float>(Workspace::kInverseSums, static_cast<size_t>(rows));
    const float* qp = q->row(first + q0, task.head);
    int64_t q_stride = q->token_stride;
    uint16_t* bf16_rows = nullptr;
    if (rotary) {
      qp = rotate_into(Workspace::kRotatedQueries, qp, q_stride, rows, q0, cos, sin, dim);
      q_stride = dim;
    }
    if (bf16_products) {
      bf16_rows = workspace.get<uint16_t>(Workspace::kBf16Rows,
                                          static_cast<size_t>(rows * kernels::bf16_padded_k(std::max(dim, keys))));
      const uint16_t* queries = bf16_rows;
      if (arriving)
        queries = bf16_query_rows(task.head, first + q0);
      else
        kernels::bf16_rows(qp, q_stride, rows, dim, bf16_rows);
      kernels::bf16_gemm(queries, rows, packed.keys(task.sequence, kv_head, k0), keys, dim, static_cast<float>(scale),
                         scores, keys);
    } else if (small) {
      const float* kp = k->row(first + k0, kv_head);
      int64_t k_stride = k->token_stride;
      if (keys_in_task) {
        kp = rotate_into(Workspace::kRotatedKeys, kp, k_stride, keys, k0, cos, sin, dim);
        k_stride = dim;
      }
      float* transposed_k = workspace.get<float>(Workspace::kTransposedKeys, static_cast<size_t>(dim * score_stride));
      small_block_scores(qp, q_stride, rows, kp, k_stride, keys, dim, static_cast<float>(scale), transposed_k, scores);
    } else if (keys_in_task) {
      const float* kp = rotate_into(Workspace::kRotatedKeys, k->row(first + k0, kv_head), k->token_stride, keys, k0, cos, sin, dim);
      sgemm('T', rows, keys, dim, static_cast<float>(scale), qp, q_stride, kp, dim, scores, keys);
    } else {
      sgemm('T', rows, keys, dim, static_cast<float>(scale), qp, q_stride, k->row(first + k0, kv_head), k->token_stride,
            scores, keys);
    }
    for (int64_t r = 0; r < rows; ++r) {
      float* row = scores + r * score_stride;
      const int64_t query = q0 + r;
      int64_t lo = 0, hi = keys;
      if (window >= 0) {
        lo = std::max<int64_t>(0, query - window - k0);
        hi = std::min<int64_t>(keys, query + window + 1 - k0);
      }
      if (pattern.causal) hi = std::min<int64_t>(hi, query + 1 - k0);
      if (softcap > 0)
        for (int64_t j = lo; j < hi; ++j) row[j] = static_cast<float>(softcap * std::tanh(row[j] / softcap));
      // (bf16_rows held this task's queries: their product is done.)
      inverse_sums[r] =
          1.0f / (bf16_products ? unnormalized_softmax_to_bf16(row, keys, lo, hi,
                                                               bf16_rows + r * kernels::bf16_padded_k(keys))
                                : unnormalized_softmax(row, keys, lo, hi));
    }
    float* context = out.data_ptr<float>() + (first + q0) * out_stride + task.head * dim;
    if (small) {
      small_block_context(scores, rows, keys, v->row(first + k0, kv_head), v->token_stride, dim,
                          inverse_sums, context, out_stride);
      continue;
    }
    if (bf16_products) {  // each row divided by its sum as it is stored
      kernels::bf16_gemm(bf16_rows, rows, packed.values(task.sequence, kv_head, k0), dim, keys, 1.0f, context,
                         out_stride, packed.value_panel(task.sequence), inverse_sums);
      continue;
    }
    sgemm('N', rows, dim, keys, 1.0f, scores, keys, v->row(first + k0, kv_head), v->token_stride, context, out_stride);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t d = 0; d < dim; ++d) context[r * out_stride + d] *= inverse_sums[r];
  }
}

// The work's passes: its keys and values prepared where needed, then its tasks.
std::vector<ParallelPass> passes_of(const std::shared_ptr<AttentionWork>& work) {
  std::vector<ParallelPass> passes;
  if (work->needs_preparing())
    passes.push_back({work->prepare_split(), [work](int64_t begin, int64_t end) { work->prepare(begin, end); }});
  passes.push_back({work->split(), [work](int64_t begin, int64_t end) { work->run(begin, end); }});
  return passes;
}

}  // namespace

at::Tensor attention_cpu_packed(const at::Tensor& q_in, const at::Tensor& k_in, const at::Tensor& v_in,
                                const std::vector<int64_t>& lengths, const at::Tensor& cos_in, const at::Tensor& sin_in,
                                double scale, AttentionPattern pattern, int64_t forced_block, double softcap,
                                bool bf16_products) {
  const auto work = plan_attention(q_in, k_in, v_in, lengths, cos_in, sin_in, scale, pattern, forced_block, softcap,
                                   bf16_products, true);
  parallel_passes(passes_of(work));
  return work->out.to(q_in.scalar_type());
}

std::optional<AttentionPass> attention_cpu_packed_pass(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                                       const std::vector<int64_t>& lengths, const at::Tensor& cos,
                                                       const at::Tensor& sin, double scale, AttentionPattern pattern,
                                                       int64_t block, double softcap, bool bf16_products,
                                                       int64_t arriving_panel) {
  const auto work =
      plan_attention(q, k, v, lengths, cos, sin, scale, pattern, block, softcap, bf16_products, false, arriving_panel);
  if (!work) return std::nullopt;
  AttentionPass pass{work->out, passes_of(work), {}};
  if (work->arriving)
    pass.arrive = [work](int64_t row, int64_t rows, int64_t column, int64_t width) {
      work->arrive(row, rows, column, width);
    };
  return pass;
}

at::Tensor attention_cpu(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& cos,
                         const at::Tensor& sin, double scale, AttentionPattern pattern, int64_t block, double softcap) {
  const int64_t sequences = q.size(0), length = q.size(1);
  const std::vector<int64_t> lengths(static_cast<size_t>(sequences), length);
  return attention_cpu_packed(q.flatten(0, 1), k.flatten(0, 1), v.flatten(0, 1), lengths, cos, sin, scale, pattern,
                              block, softcap)
      .view({sequences, length, -1});
}

}  // namespace semroute
