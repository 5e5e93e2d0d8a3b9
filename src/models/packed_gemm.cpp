#include "models/packed_gemm.h"

#include <ATen/Parallel.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/zeros.h>

#include <dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>

#include "core/cpu_features.h"
#include "core/free_cpus.h"
#include "core/weight_memory.h"
#include "core/log.h"
#include "core/runtime.h"
#include "core/sanitized.h"
#include "kernels/f32_gemm.h"
#include "kernels/int8_gemm.h"
#include "models/int8_rows.h"
#include "models/parallel_chunks.h"
#include "models/workspace.h"
#include "semroute/error.h"

namespace semroute {
namespace {

using dnnl::memory;
using Type = memory::data_type;

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine = [] {
#if defined(__SANITIZE_THREAD__)
    // oneDNN hands cached primitives from one thread to another through
    // synchronization ThreadSanitizer cannot see (libdnnl is not
    // instrumented); ours are published under our own mutex instead.
    dnnl::set_primitive_cache_capacity(0);
#endif
    return dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return engine;
}

std::optional<Type> data_type_of(c10::ScalarType type) {
  if (type == at::kFloat) return Type::f32;
  if (type == at::kBFloat16) return Type::bf16;
  return std::nullopt;
}

// One matmul problem: x [rows, in] (src) times the packed weight -> [rows, out] (dst).
struct Problem {
  int64_t in = 0, out = 0;
  Type src = Type::f32, weight = Type::f32, dst = Type::f32;
  bool bias = false;
  bool operator<(const Problem& o) const {
    return std::tie(in, out, src, weight, dst, bias) < std::tie(o.in, o.out, o.src, o.weight, o.dst, o.bias);
  }
};

// rows = DNNL_RUNTIME_DIM_VAL describes a primitive that takes any row count at run time.
dnnl::matmul::primitive_desc describe(const Problem& p, int64_t rows, const memory::desc& weights) {
  const memory::desc src({rows, p.in}, p.src, memory::format_tag::ab), dst({rows, p.out}, p.dst, memory::format_tag::ab);
  dnnl::primitive_attr attr;
  // Scratch memory per call, not the library's shared one: calls may run concurrently.
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  const memory::desc bias({1, p.out}, p.dst, memory::format_tag::ab);
  const auto desc = p.bias ? dnnl::matmul::desc(src, weights, bias, dst) : dnnl::matmul::desc(src, weights, dst);
  return dnnl::matmul::primitive_desc(desc, attr, cpu_engine());
}

constexpr int64_t kAnyRows = DNNL_RUNTIME_DIM_VAL;

std::vector<int64_t> make_row_ladder() {
  std::vector<int64_t> rows;
  for (int64_t r = 1; r <= 32; ++r) rows.push_back(r);
  for (int64_t r = 36; r <= 64; r += 4) rows.push_back(r);
  for (int64_t low = 64; low < 4096; low *= 2)
    for (int64_t step = low / (low < 512 ? 8 : 4), r = low + step; r <= 2 * low; r += step) rows.push_back(r);
  return rows;
}

// The primitives of one problem, made once and shared by every layer of that
// shape. Where oneDNN's implementation takes the row count at run time at no
// cost (its GEMM-based kernels, used on AVX2), one primitive serves every
// count; where it specializes its kernels per count (brgemm on AVX-512, up
// to 35 % faster than its run-time-count variant at small counts), there is
// one per rung of the ladder.
class Primitives {
 public:
  struct Rung {
    int64_t rows;  // kAnyRows for the run-time-count primitive
    dnnl::matmul matmul;
    size_t scratch_bytes;
  };

  explicit Primitives(const Problem& p) {
    const memory::desc any({p.in, p.out}, p.weight, memory::format_tag::any);
    const auto any_rows = describe(p, kAnyRows, any);
    if (std::string(any_rows.impl_info_str()).rfind("gemm", 0) == 0) {
      weights_ = any_rows.weights_desc();
      rungs_.push_back(rung(any_rows, kAnyRows));
      return;
    }
    // oneDNN chooses the weight layout per problem; the one it picks for 64
    // rows must serve every rung (a rung it refuses is left out).
    weights_ = describe(p, 64, any).weights_desc();
    for (int64_t rows : PackedGemm::row_ladder()) {
      try {
        rungs_.push_back(rung(describe(p, rows, weights_), rows));
      } catch (const dnnl::error&) {
      }
    }
    if (rungs_.empty()) throw dnnl::error(dnnl_unimplemented, "no matmul for any row count");
  }

  const memory::desc& weights_desc() const { return weights_; }
  // The most rows one call takes.
  int64_t chunk_rows() const {
    return rungs_.back().rows == kAnyRows ? std::numeric_limits<int64_t>::max() : rungs_.back().rows;
  }
  // The rung for `rows` <= chunk_rows().
  const Rung& rung_for(int64_t rows) const {
    if (rungs_.front().rows == kAnyRows) return rungs_.front();
    return *std::lower_bound(rungs_.begin(), rungs_.end(), rows,
                             [](const Rung& r, int64_t n) { return r.rows < n; });
  }
  // The rows the buffers of `rows` input rows need (padded to rungs).
  int64_t padded_rows(int64_t rows) const {
    if (rungs_.front().rows == kAnyRows) return rows;
    const int64_t chunk = chunk_rows();
    return rows / chunk * chunk + (rows % chunk == 0 ? 0 : rung_for(rows % chunk).rows);
  }

 private:
  static Rung rung(const dnnl::matmul::primitive_desc& pd, int64_t rows) {
    return Rung{rows, dnnl::matmul(pd), pd.scratchpad_desc().get_size()};
  }

  memory::desc weights_;
  std::vector<Rung> rungs_;  // ascending rows
};

// Process-wide: layers (and models) of one shape share their primitives; the
// entry goes when the last packed weight using it does.
std::shared_ptr<const Primitives> primitives_for(const Problem& p) {
  static std::mutex mutex;
  static std::map<Problem, std::weak_ptr<const Primitives>> known;
  const std::lock_guard<std::mutex> lock(mutex);
  if (auto found = known[p].lock()) return found;
  auto made = std::make_shared<const Primitives>(p);
  known[p] = made;
  for (auto it = known.begin(); it != known.end();) it = it->second.expired() ? known.erase(it) : std::next(it);
  return made;
}

// int32 accumulators hold sum(255 · 127) over `in` products, twice (the zero
// point's share is subtracted in int32), for in <= 32768.
constexpr int64_t kMaxInt8Inputs = 32768;

// Reorders a row-major [out, in] weight (Wᵀ [in, out] with strides (1, in))
// into `layout`, in memory `pages` comes to own.
memory reorder_weight(const at::Tensor& dense, Type type, const memory::desc& layout, std::shared_ptr<void>& pages) {
  const auto& engine = cpu_engine();
  const int64_t in = dense.size(1), out = dense.size(0);
  memory plain(memory::desc({in, out}, type, memory::dims{1, in}), engine, dense.data_ptr());
  pages = allocate_weight_memory(layout.get_size());
  memory packed(layout, engine, pages.get());
  dnnl::stream stream(engine);
  dnnl::reorder(plain, packed).execute(stream, plain, packed);
  stream.wait();
  return packed;
}

// Rows an int8 product quantizes, multiplies and scales back at a time: its
// temporaries stay within a few MB per thread (256 rows × 4 bytes × the
// widest output) whatever the input's length; integer sums do not depend on
// it. (512 rows was 5 % faster at 2048 rows, for twice the memory.)
constexpr int64_t kInt8BlockRows = 256;

}  // namespace

struct PackedGemm::State {
  Problem problem;
  c10::ScalarType dtype = at::kFloat;    // of inputs and outputs
  c10::ScalarType compute = at::kFloat;  // of the packed weight and the product (kChar: int8)
  std::shared_ptr<const Primitives> primitives;
  memory weight;              // in weight_pages
  std::shared_ptr<void> weight_pages;
  memory bias;                // [1, out] for float products; empty without bias
  at::Tensor int8_bias;       // fp32 [out], added after scaling (int8)
  at::Tensor weight_scale;    // fp32 [out] (int8)
  at::Tensor weight_sum;      // int32 [out]: sum of each channel's int8 weights (int8)
  // int8 on our kernel (kernels/int8_gemm.h) rather than oneDNN's, where it measured faster.
  std::shared_ptr<const kernels::PackedInt8Weight> own_int8;
  // fp32 on our kernel (kernels/f32_gemm.h) rather than oneDNN's, where it measured faster.
  std::shared_ptr<const kernels::PackedF32Weight> own_f32;
  at::Tensor f32_bias;        // fp32 [out] (own fp32 kernel)
  int activation_levels = 255;  // of the int8 engine in use

  // Runs the product for `rows` rows (a multiple of chunks), src and dst
  // holding primitives->padded_rows(rows) rows.
  void multiply(int64_t rows, const void* src, void* dst) const;
  at::Tensor multiply_float(const at::Tensor& a) const;
  at::Tensor multiply_int8(const at::Tensor& a) const;
  // The two passes of a product on our int8 kernel (ProductPasses).
  ProductPasses own_int8_passes(const GemmInput& a, const at::Tensor& residual) const;
  at::Tensor multiply_own_f32(const at::Tensor& a, const at::Tensor& residual) const;
  // The product of `a` [rows, in] (fp32 for int8, else the compute dtype),
  // with `residual` added when it is defined (in the epilogue where the
  // kernel has one): [rows, out].
  at::Tensor product(const at::Tensor& a, const at::Tensor& residual) const;
  void pack_float(const at::Tensor& weight, const at::Tensor& bias, Type type);
  void pack_onednn_float(const at::Tensor& weight, const at::Tensor& bias, Type type);
  void pack_own_f32(const at::Tensor& weight, const at::Tensor& bias);
  void pack_int8(const at::Tensor& weight, const at::Tensor& bias);
  void pack_onednn_int8(const at::Tensor& q);
  void pack_own_int8(const at::Tensor& q);
  // Packs a weight [out, in] with `own` or `onednn` (each fills a state),
  // whichever engine is forced, known for this shape, or measures faster now.
  void pack_faster(int64_t out, int64_t in, const std::function<void(State&)>& own,
                   const std::function<void(State&)>& onednn);
};

void PackedGemm::State::multiply(int64_t rows, const void* src, void* dst) const {
  const Problem& p = problem;
  const auto& engine = cpu_engine();
  const size_t src_row = p.in * memory::data_type_size(p.src), dst_row = p.out * memory::data_type_size(p.dst);
  const int64_t chunk = primitives->chunk_rows();
  for (int64_t done = 0; done < rows; done += chunk) {
    const auto& rung = primitives->rung_for(std::min(chunk, rows - done));
    const int64_t n = rung.rows == kAnyRows ? rows - done : rung.rows;
    void* scratch = Workspace::of_this_thread().get<uint8_t>(Workspace::kScratchpad, rung.scratch_bytes);
    auto* in = const_cast<char*>(static_cast<const char*>(src)) + done * src_row;
    auto* out = static_cast<char*>(dst) + done * dst_row;
    memory a({{n, p.in}, p.src, memory::format_tag::ab}, engine, in);
    memory c({{n, p.out}, p.dst, memory::format_tag::ab}, engine, out);
    memory pad({{static_cast<int64_t>(rung.scratch_bytes)}, Type::u8, memory::format_tag::a}, engine, scratch);
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, weight}, {DNNL_ARG_DST, c}, {DNNL_ARG_SCRATCHPAD, pad}};
    if (bias) args.emplace(DNNL_ARG_BIAS, bias);
    dnnl::stream stream(engine);
    rung.matmul.execute(stream, args);
    stream.wait();
  }
}

at::Tensor PackedGemm::State::multiply_float(const at::Tensor& a) const {
  const int64_t rows = a.size(0), padded = primitives->padded_rows(rows);
  at::Tensor src = a;
  if (padded != rows) {
    src = at::zeros({padded, problem.in}, a.options());
    src.narrow(0, 0, rows).copy_(a);
  }
  at::Tensor y = at::empty({padded, problem.out}, a.options());
  multiply(rows, src.data_ptr(), y.data_ptr());
  return y.narrow(0, 0, rows);
}

at::Tensor PackedGemm::State::multiply_int8(const at::Tensor& a) const {
  const int64_t rows = a.size(0), in = problem.in, out = problem.out;
  at::Tensor y = at::empty({rows, out}, at::kFloat);
  Workspace& ws = Workspace::of_this_thread();
  for (int64_t begin = 0; begin < rows; begin += kInt8BlockRows) {
    const int64_t n = std::min(kInt8BlockRows, rows - begin), padded = primitives->padded_rows(n);
    auto* q = ws.get<uint8_t>(Workspace::kQuantized, padded * in);
    auto* scale = ws.get<float>(Workspace::kScales, n);
    auto* zero = ws.get<int32_t>(Workspace::kZeroPoints, n);
    auto* acc = ws.get<int32_t>(Workspace::kSums, padded * out);
    int8::quantize_rows(a.data_ptr<float>() + begin * in, in, n, in, activation_levels, q, in, scale, zero);
    std::memset(q + n * in, 0, (padded - n) * in);
    multiply(n, q, acc);
    int8::dequantize_rows(acc, n, out, scale, zero, weight_scale.data_ptr<float>(), weight_sum.data_ptr<int32_t>(),
                          int8_bias.defined() ? int8_bias.data_ptr<float>() : nullptr, y.data_ptr<float>() + begin * out);
  }
  return y;
}

namespace {

// Rows one task of our kernels takes when an input has more of them than
// that, so that inputs with fewer panels than threads still spread (a
// multiple of every path's tile height: 8, 6 and 4).
constexpr int64_t kTaskRows = 96;

const float* optional_data(const at::Tensor& t) { return t.defined() ? t.data_ptr<float>() : nullptr; }

// Points `out` at `bias` and `residual` (undefined: none) and `y`, rows of `n` floats.
void set_output(kernels::GemmOutput& out, const at::Tensor& bias, const at::Tensor& residual, at::Tensor& y, int64_t n) {
  out.bias = optional_data(bias);
  out.residual = optional_data(residual);
  out.residual_stride = residual.defined() ? n : 0;
  out.y = y.data_ptr<float>();
  out.y_stride = n;
}

// The output of `out` from row `row` on.
kernels::GemmOutput from_row(kernels::GemmOutput out, int64_t row) {
  out.y += row * out.y_stride;
  if (out.residual != nullptr) out.residual += row * out.residual_stride;
  return out;
}
kernels::Int8Output from_row(kernels::Int8Output out, int64_t row) {
  static_cast<kernels::GemmOutput&>(out) = from_row(static_cast<const kernels::GemmOutput&>(out), row);
  out.row_scale += row;
  out.row_zero += row;
  return out;
}

// The (panel, row block) tasks of one of our kernels, spread over libtorch's
// threads panel by panel in chunks taken on demand (models/parallel_chunks.h);
// a run of blocks of one panel is one call, the panel's weights staying in
// cache while the rows stream past them. `a` has rows of `stride` elements.
template <class Weight, class Input, class Output>
class PanelTasks {
 public:
  PanelTasks(const Weight& w, const Input* a, int64_t stride, int64_t rows, const Output& out,
             std::shared_ptr<const PanelFinish> finish = nullptr)
      : w_(w), a_(a), stride_(stride), rows_(rows), out_(out), finish_(std::move(finish)),
        block_(rows <= kTaskRows ? rows : kTaskRows), blocks_((rows + block_ - 1) / block_) {}
  // One block (up to 96 rows: bound by streaming the weights): long runs of
  // consecutive panels, which the prefetchers follow; more: finer chunks. At
  // least two tasks a claim (but the last): measured paired on 2 vCPUs, a
  // 16-token int8 forward 1.8 % faster than with claims of single panels.
  ChunkSplit split() const {
    const int64_t count = w_.panels() * blocks_;
    return {count, chunk_for(count, blocks_ > 1 ? 8 : 2), 2};
  }
  void operator()(int64_t begin, int64_t end) const {
    for (int64_t task = begin; task < end;) {
      const int64_t panel = task / blocks_, first = task % blocks_, last = std::min(blocks_, first + end - task);
      const int64_t row = first * block_, count = std::min(rows_, last * block_) - row;
      w_.multiply(a_ + row * stride_, stride_, count, panel, panel + 1, from_row(out_, row));
      if (finish_ && *finish_) {
        const int64_t column = panel * w_.panel_width();
        (*finish_)(row, count, column, std::min(w_.panel_width(), w_.n() - column));
      }
      task += last - first;
    }
  }

 private:
  const Weight& w_;
  const Input* a_;
  const int64_t stride_, rows_;
  const Output out_;
  const std::shared_ptr<const PanelFinish> finish_;
  const int64_t block_, blocks_;
};

// Runs a product's two passes in one region: its output.
at::Tensor run_passes(const ProductPasses& product) {
  parallel_passes({product.quantize, product.multiply});
  return product.y;
}

// The fewest rows a thread claims to quantize before an int8 product (but
// the last): a longer input's share ends in claims of this size.
constexpr int64_t kQuantizeRows = 32;

}  // namespace

ProductPasses PackedGemm::State::own_int8_passes(const GemmInput& a, const at::Tensor& residual) const {
  const kernels::PackedInt8Weight& w = *own_int8;
  const int64_t rows = a.made() ? a.rows : a.tensor.size(0), stride = w.padded_k(), in = problem.in;
  // The quantized rows, their scales and zero points, in one block the passes keep.
  const int64_t scales_at = (rows * stride + 63) / 64 * 64, zeros_at = scales_at + rows * 4;
  const at::Tensor buffer = at::empty({zeros_at + rows * 4}, at::kByte);
  auto* q = buffer.data_ptr<uint8_t>();
  auto* scale = reinterpret_cast<float*>(q + scales_at);
  auto* zero = reinterpret_cast<int32_t*>(q + zeros_at);
  ProductPasses product;
  product.y = at::empty({rows, problem.out}, at::kFloat);
  kernels::Int8Output out;
  set_output(out, int8_bias, residual, product.y, problem.out);
  out.row_scale = scale;
  out.row_zero = zero;
  // The rows in a share for each thread: a claim per row took 2 % of a
  // 16-token forward (cross-core traffic on the counters).
  const int64_t threads = std::max(at::get_num_threads(), 1);
  const int64_t share = (rows + threads - 1) / threads;
  const int levels = activation_levels;
  product.quantize = {{rows, share, std::min(share, kQuantizeRows)}, [a, buffer, q, scale, zero, in, stride, levels](
                                                                        int64_t begin, int64_t end) {
                       if (a.made())
                         int8::quantize_made_rows_between(a.make, begin, end, in, levels, q, stride, scale, zero);
                       else
                         int8::quantize_rows_between(a.tensor.data_ptr<float>(), in, begin, end, in, levels, q, stride,
                                                     scale, zero);
                     }};
  const auto tasks = std::make_shared<const PanelTasks<kernels::PackedInt8Weight, uint8_t, kernels::Int8Output>>(
      w, q, stride, rows, out, product.finish);
  product.multiply = {tasks->split(), [tasks, buffer, residual, y = product.y](int64_t begin, int64_t end) {
                       (*tasks)(begin, end);
                     }};
  return product;
}

at::Tensor PackedGemm::State::multiply_own_f32(const at::Tensor& a, const at::Tensor& residual) const {
  at::Tensor y = at::empty({a.size(0), problem.out}, at::kFloat);
  kernels::F32Output out;
  set_output(out, f32_bias, residual, y, problem.out);
  const PanelTasks tasks(*own_f32, a.data_ptr<float>(), problem.in, a.size(0), out);
  const ChunkSplit split = tasks.split();
  parallel_chunks(split.count, split.chunk, tasks, split.floor);
  return y;
}

at::Tensor PackedGemm::State::product(const at::Tensor& a, const at::Tensor& residual) const {
  if (own_int8) return run_passes(own_int8_passes(GemmInput(a), residual));
  if (own_f32) return multiply_own_f32(a, residual);
  const at::Tensor y = compute == at::kChar ? multiply_int8(a) : multiply_float(a);
  return residual.defined() ? y.add_(residual) : y;
}

PackedGemm::PackedGemm(std::unique_ptr<State> state) : state_(std::move(state)) {}
PackedGemm::~PackedGemm() = default;

bool PackedGemm::native_bf16() {
  // Both must agree: the CPU (under our cap) and the oneDNN in this process
  // (under its own, ONEDNN_MAX_CPU_ISA). AVX-512 without BF16 instructions
  // runs oneDNN's bf16 ~3x slower than fp32.
  static const bool native = cpu_features().native_bf16_gemm() &&
                             (static_cast<int>(dnnl::get_effective_cpu_isa()) & dnnl_cpu_isa_avx512_core_bf16) ==
                                 dnnl_cpu_isa_avx512_core_bf16;
  return native;
}

int PackedGemm::activation_levels() { return kernels::activation_levels(kernels::best_int8_path()); }

namespace {

// oneDNN's int8 GEMM sums pairs of products in 16 bits unless it has VNNI.
int onednn_activation_levels() {
  static const int levels = [] {
    const int isa = static_cast<int>(dnnl::get_effective_cpu_isa());
    const bool vnni = (isa & dnnl_cpu_isa_avx512_core_vnni) == dnnl_cpu_isa_avx512_core_vnni ||
                      (isa & dnnl_cpu_isa_avx2_vnni) == dnnl_cpu_isa_avx2_vnni;
    return vnni ? 255 : 127;
  }();
  return levels;
}

}  // namespace

bool PackedGemm::enabled() {
  static const bool on = [] {
    const char* value = std::getenv("SEMROUTE_PACKED_GEMM");
    return value == nullptr || std::string(value) != "0";
  }();
  return on;
}

const std::vector<int64_t>& PackedGemm::row_ladder() {
  static const std::vector<int64_t> ladder = make_row_ladder();
  return ladder;
}

namespace {

// Seconds of the fastest of `runs` runs of `product` (the load-time
// measurements: engine choice, the bf16 warning).
template <class Product>
double best_of(int runs, const Product& product) {
  double best = 1e30;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    product();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

// The calling thread's CPU time for product(): its cost when it runs on
// this thread alone, whatever else the machine runs.
template <class Product>
double thread_seconds(const Product& product) {
  const auto now = [] {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
  };
  const double start = now();
  product();
  return now() - start;
}

// How much slower libtorch's emulated bf16 product is than fp32 here, on a
// [64 x 768] x [768 x 768] product (best of three each, ~50 ms in all), as
// words for a log line.
std::string emulated_bf16_cost() try {
  const at::Tensor x = at::randn({64, 768}), w = at::randn({768, 768});
  const at::Tensor xb = x.to(at::kBFloat16), wb = w.to(at::kBFloat16);
  const double ratio = best_of(3, [&] { at::linear(xb, wb); }) / best_of(3, [&] { at::linear(x, w); });
  return fmt::format("an emulated bf16 product measures {:.1f}x the time of fp32 here", ratio);
} catch (const std::exception&) {
  return "libtorch's bf16 product does not run at all under this ISA";
}

// Where the CPU has no bf16 GEMM, a bf16 weight is packed as fp32.
bool widen_bf16(c10::ScalarType type) {
  if (type != at::kBFloat16 || PackedGemm::native_bf16()) return false;
  static std::once_flag warned;
  std::call_once(warned, [] {
    log_at(LogLevel::kWarning,
           "{} has no native bf16 GEMM and {}: bf16 weights are widened to fp32 at load, so bf16 saves no time "
           "or memory here; prefer float32 or auto on this CPU",
           cpu_features().describe(), emulated_bf16_cost());
  });
  return true;
}

}  // namespace

void PackedGemm::State::pack_onednn_float(const at::Tensor& weight, const at::Tensor& bias, Type type) {
  problem = Problem{weight.size(1), weight.size(0), type, type, type, bias.defined()};
  primitives = primitives_for(problem);
  if (bias.defined()) {
    this->bias = memory(memory::desc({1, problem.out}, type, memory::format_tag::ab), cpu_engine());
    std::memcpy(this->bias.get_data_handle(), bias.contiguous().data_ptr(), bias.nbytes());
  }
  this->weight = reorder_weight(weight.contiguous(), type, primitives->weights_desc(), weight_pages);
}

void PackedGemm::State::pack_own_f32(const at::Tensor& weight, const at::Tensor& bias) {
  const at::Tensor w = weight.contiguous();
  problem = Problem{w.size(1), w.size(0), Type::f32, Type::f32, Type::f32, bias.defined()};
  own_f32 = std::make_shared<const kernels::PackedF32Weight>(w.data_ptr<float>(), w.size(0), w.size(1),
                                                             kernels::best_f32_path());
  if (bias.defined()) f32_bias = bias.contiguous();
}

// bf16 runs on oneDNN; fp32 on the engine that measures faster for the shape.
void PackedGemm::State::pack_float(const at::Tensor& weight, const at::Tensor& bias, Type type) {
  if (type != Type::f32) return pack_onednn_float(weight, bias, type);
  pack_faster(weight.size(0), weight.size(1), [&](State& s) { s.pack_own_f32(weight, bias); },
              [&](State& s) { s.pack_onednn_float(weight, bias, type); });
}

void PackedGemm::State::pack_onednn_int8(const at::Tensor& q) {
  problem = Problem{q.size(1), q.size(0), Type::u8, Type::s8, Type::s32, false};
  primitives = primitives_for(problem);
  weight_sum = q.sum(1, false, at::kInt).contiguous();
  weight = reorder_weight(q, Type::s8, primitives->weights_desc(), weight_pages);
  activation_levels = onednn_activation_levels();
}

void PackedGemm::State::pack_own_int8(const at::Tensor& q) {
  problem = Problem{q.size(1), q.size(0), Type::u8, Type::s8, Type::s32, false};
  const kernels::Int8Path path = kernels::best_int8_path();
  own_int8 = std::make_shared<const kernels::PackedInt8Weight>(q.data_ptr<int8_t>(), q.size(0), q.size(1),
                                                               weight_scale.data_ptr<float>(), path);
  activation_levels = kernels::activation_levels(path);
}

namespace {

enum class Engine { kOwn, kOneDnn };

// SEMROUTE_INT8_GEMM / SEMROUTE_F32_GEMM = own | onednn forces an engine
// (for comparisons); "measure" (and unset) runs each shape on the one that
// measures faster. In a sanitizer's build every load of our kernels is
// checked and none of oneDNN's, so a timing there measures the
// instrumentation: unset, fp32 runs on our kernel (oneDNN's fp32 product
// would also make answers under load differ in the last bits: its sums
// follow the team size; oneDNN's int8 ones do not).
std::optional<Engine> configured_engine(bool int8) {
  const char* variable = int8 ? "SEMROUTE_INT8_GEMM" : "SEMROUTE_F32_GEMM";
  const std::optional<Engine> unset = kSanitizedBuild && !int8 ? std::optional(Engine::kOwn) : std::nullopt;
  const char* value = std::getenv(variable);
  if (value == nullptr || std::string(value).empty()) return unset;
  if (std::string(value) == "measure") return std::nullopt;
  if (std::string(value) == "own") return Engine::kOwn;
  if (std::string(value) == "onednn") return Engine::kOneDnn;
  static std::once_flag warned[2];
  std::call_once(warned[int8], [&] {
    log_at(LogLevel::kWarning, "{}='{}' is not one of own, onednn, measure: ignored", variable, value);
  });
  return unset;
}

// The engine measured for each (int8, out, in), once per process, on the
// first weight of that shape.
struct MeasuredEngines {
  std::mutex mutex;
  std::map<std::tuple<bool, int64_t, int64_t>, Engine> engines;
  static MeasuredEngines& get() {
    static MeasuredEngines measured;
    return measured;
  }
};

}  // namespace

// Measured on a prompt's rows (16) and a long input's (256) in the CPU time
// of one thread, the engines taking turns, best of five each: wall time
// counts the slices other processes take, and a team's is its slowest
// thread's, which runs a slice late at every barrier when another process
// is busy (measured beside a parallel build: 8 ms for a 10 µs product,
// either engine, at random, so a shape's engine was a coin toss). Each
// engine's regret is its worst slowdown against the faster one over the two
// lengths; oneDNN takes the shape only when our kernel's regret exceeds
// oneDNN's by more than 10 %. A kernel a little faster for prompts
// but far slower for long inputs thus loses the shape (AVX2's int8 at
// 768 x 768: 8 % faster at 16 rows, 30 % slower at 256), and close calls
// keep our kernel: load-time timings of sub-millisecond products are noisy,
// and the two engines round differently, so a coin toss would make two
// processes on one machine answer in the last bits differently
// (SEMROUTE_*_GEMM pins either engine).
constexpr double kOneDnnMargin = 1.1;

void PackedGemm::State::pack_faster(int64_t out, int64_t in, const std::function<void(State&)>& own,
                                    const std::function<void(State&)>& onednn) {
  const bool int8 = compute == at::kChar;
  const auto key = std::make_tuple(int8, out, in);
  std::optional<Engine> engine = configured_engine(int8);
  auto& measured = MeasuredEngines::get();
  if (!engine) {
    const std::lock_guard<std::mutex> lock(measured.mutex);
    const auto found = measured.engines.find(key);
    if (found != measured.engines.end()) engine = found->second;
  }
  if (engine == Engine::kOneDnn) return onednn(*this);
  own(*this);
  if (engine) return;

  State other;
  other.dtype = dtype;
  other.compute = compute;
  other.weight_scale = weight_scale;
  other.int8_bias = int8_bias;
  onednn(other);
  double own_regret = 1, onednn_regret = 1;
  std::string times;
  const ScopedTeam serial(1);
  for (int64_t rows : {16, 256}) {
    const at::Tensor x = at::randn({rows, in});
    const auto own_product = [&] { product(x, at::Tensor()); };
    const auto onednn_product = [&] { other.product(x, at::Tensor()); };
    own_product();  // warm: pages, caches
    onednn_product();
    double ours = 1e30, theirs = 1e30;
    for (int round = 0; round < 5; ++round) {
      ours = std::min(ours, thread_seconds(own_product));
      theirs = std::min(theirs, thread_seconds(onednn_product));
    }
    own_regret = std::max(own_regret, ours / theirs);
    onednn_regret = std::max(onednn_regret, theirs / ours);
    times += fmt::format("{}{} rows {:.3f} vs {:.3f} ms", times.empty() ? "" : ", ", rows, ours * 1e3, theirs * 1e3);
  }
  const Engine faster = own_regret > kOneDnnMargin * onednn_regret ? Engine::kOneDnn : Engine::kOwn;
  log_at(LogLevel::kDebug, "{} GEMM {} x {}: own kernel vs oneDNN: {}: {}", int8 ? "int8" : "fp32", out, in, times, faster == Engine::kOwn ? "own" : "oneDNN");
  {
    const std::lock_guard<std::mutex> lock(measured.mutex);
    measured.engines.emplace(key, faster);
  }
  if (faster == Engine::kOneDnn) *this = std::move(other);
}

// Symmetric per output channel: w ≈ weight_scale[n] · q[n][k], q in [-127, 127].
void PackedGemm::State::pack_int8(const at::Tensor& weight, const at::Tensor& bias) {
  const at::Tensor w = weight.to(at::kFloat).contiguous();
  at::Tensor scale = w.abs().amax(1) / 127.0;
  scale.masked_fill_(scale == 0, 1.0);
  const at::Tensor q = (w / scale.unsqueeze(1)).round().clamp(-127, 127).to(at::kChar).contiguous();
  weight_scale = scale.contiguous();
  if (bias.defined()) int8_bias = bias.to(at::kFloat).contiguous();
  pack_faster(q.size(0), q.size(1), [&](State& s) { s.pack_own_int8(q); }, [&](State& s) { s.pack_onednn_int8(q); });
}

std::unique_ptr<PackedGemm> PackedGemm::pack(const at::Tensor& given_weight, const at::Tensor& given_bias, bool int8) {
  if (!enabled() || !given_weight.defined() || !given_weight.device().is_cpu() || given_weight.dim() != 2)
    return nullptr;
  if (given_bias.defined() && given_bias.scalar_type() != given_weight.scalar_type()) return nullptr;
  const auto type = data_type_of(given_weight.scalar_type());
  if (!type) return nullptr;
  auto state = std::make_unique<State>();
  state->dtype = given_weight.scalar_type();
  try {
    if (int8 && given_weight.size(1) <= kMaxInt8Inputs) {
      state->compute = at::kChar;
      state->pack_int8(given_weight, given_bias);
    } else {
      const bool widen = widen_bf16(given_weight.scalar_type());
      state->compute = widen ? at::kFloat : given_weight.scalar_type();
      state->pack_float(widen ? given_weight.to(at::kFloat) : given_weight,
                 widen && given_bias.defined() ? given_bias.to(at::kFloat) : given_bias, widen ? Type::f32 : *type);
    }
  } catch (const dnnl::error&) {
    return nullptr;  // no implementation for this shape or CPU: stay dense
  }
  return std::unique_ptr<PackedGemm>(new PackedGemm(std::move(state)));
}

int64_t PackedGemm::in_features() const { return state_->problem.in; }
int64_t PackedGemm::out_features() const { return state_->problem.out; }
c10::ScalarType PackedGemm::compute_dtype() const { return state_->compute; }

at::Tensor PackedGemm::operator()(const at::Tensor& x) const { return run(x, at::Tensor()); }

at::Tensor PackedGemm::add_to(const at::Tensor& residual, const at::Tensor& x) const { return run(x, residual); }

at::Tensor GemmInput::materialize() const {
  if (!made()) return tensor;
  at::Tensor out = at::empty({rows, width}, at::kFloat);
  float* o = out.data_ptr<float>();
  at::parallel_for(0, rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(width, 1)),
                   [&](int64_t begin, int64_t end) { make(begin, end, o + begin * width); });
  return out;
}

at::Tensor PackedGemm::operator()(const GemmInput& x) const { return run(x, at::Tensor()); }

at::Tensor PackedGemm::add_to(const at::Tensor& residual, const GemmInput& x) const { return run(x, residual); }

namespace {

// An input of `width` features and a residual (when defined) of `sizes`, for
// a product of `problem`: an internal error otherwise.
void check_shapes(const Problem& problem, int64_t width, const at::Tensor& residual, at::IntArrayRef sizes) {
  if (width != problem.in)
    throw InternalError("packed linear: input has " + std::to_string(width) + " features, the weight expects " +
                        std::to_string(problem.in));
  if (residual.defined() && residual.sizes() != sizes)
    throw InternalError("packed linear: the residual's shape differs from the output's");
}

}  // namespace

int64_t PackedGemm::panel_columns() const {
  const State& s = *state_;
  return s.own_int8 && s.dtype == at::kFloat ? s.own_int8->panel_width() : 0;
}

std::optional<ProductPasses> PackedGemm::passes(const GemmInput& x, const at::Tensor& residual) const {
  const State& s = *state_;
  const auto plain_rows = [](const at::Tensor& t) {
    return t.device().is_cpu() && t.scalar_type() == at::kFloat && t.dim() == 2 && t.is_contiguous();
  };
  if (!s.own_int8 || s.dtype != at::kFloat || (!x.made() && !plain_rows(x.tensor))) return std::nullopt;
  const int64_t rows = x.made() ? x.rows : x.tensor.size(0), width = x.made() ? x.width : x.tensor.size(1);
  if (rows <= 0 || (residual.defined() && !plain_rows(residual))) return std::nullopt;
  check_shapes(s.problem, width, residual, {rows, s.problem.out});
  prepare_calling_thread();
  return s.own_int8_passes(x, residual);
}

// A made input goes to our int8 kernel as it is made (a float32 residual
// added in its epilogue); to the others as a tensor.
at::Tensor PackedGemm::run(const GemmInput& x, const at::Tensor& residual) const {
  const State& s = *state_;
  const bool fused = x.made() && s.own_int8 && s.dtype == at::kFloat && x.rows > 0 &&
                     (!residual.defined() || (residual.scalar_type() == at::kFloat && residual.dim() == 2));
  if (!fused) return run(x.materialize(), residual);
  check_shapes(s.problem, x.width, residual, {x.rows, s.problem.out});
  prepare_calling_thread();
  return run_passes(s.own_int8_passes(x, residual.defined() ? residual.contiguous() : residual));
}

at::Tensor PackedGemm::run(const at::Tensor& x, const at::Tensor& residual) const {
  const State& s = *state_;
  const int64_t width = x.size(-1);  // (throws for a 0-d x, before sizes.back())
  std::vector<int64_t> sizes = x.sizes().vec();
  sizes.back() = s.problem.out;
  check_shapes(s.problem, width, residual, sizes);
  const bool int8 = s.compute == at::kChar;
  const at::Tensor a = x.reshape({-1, s.problem.in}).to(int8 ? at::kFloat : s.compute).contiguous();
  if (a.size(0) == 0) return residual.defined() ? residual.clone() : at::empty(sizes, x.options());
  // oneDNN runs on this thread's OpenMP team: give it libtorch's thread count.
  prepare_calling_thread();
  try {
    // Our kernels add a float32 residual in their epilogue; otherwise it is added after.
    const bool fuse = residual.defined() && residual.scalar_type() == at::kFloat && (s.own_int8 || s.own_f32);
    const at::Tensor y = s.product(a, fuse ? residual.reshape({-1, s.problem.out}).contiguous() : at::Tensor());
    const at::Tensor out = y.to(s.dtype).view(sizes);
    return residual.defined() && !fuse ? out.add_(residual) : out;
  } catch (const dnnl::error& e) {
    throw InternalError(std::string("oneDNN matmul failed: ") + e.what());
  }
}

}  // namespace semroute
