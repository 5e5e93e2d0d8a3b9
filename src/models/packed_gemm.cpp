#include "models/packed_gemm.h"

#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>

#include <dnnl.hpp>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>

#include "core/cpu_features.h"
#include "core/log.h"
#include "semroute/error.h"

namespace semroute {
namespace {

using dnnl::memory;

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine = [] {
#if defined(__SANITIZE_THREAD__)
    // oneDNN hands cached primitives from one thread to another through
    // synchronization ThreadSanitizer cannot see (libdnnl is not
    // instrumented). Without the cache each call builds its own primitive,
    // and what TSan reports is about our code.
    dnnl::set_primitive_cache_capacity(0);
#endif
    return dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return engine;
}

std::optional<memory::data_type> data_type_of(c10::ScalarType type) {
  if (type == at::kFloat) return memory::data_type::f32;
  if (type == at::kBFloat16) return memory::data_type::bf16;
  return std::nullopt;
}

// oneDNN chooses the weight layout per problem; the one it picks for this
// many rows is checked at load to serve every row count.
constexpr int64_t kPackRows = 64;

}  // namespace

struct PackedGemm::State {
  int64_t in = 0, out = 0;
  c10::ScalarType dtype = at::kFloat;    // of inputs and outputs
  c10::ScalarType compute = at::kFloat;  // of the packed weight and the product
  memory::data_type type = memory::data_type::f32;
  memory::desc weight_desc;  // the packed layout of Wᵀ [in, out]
  memory weight;
  memory bias;  // [1, out], empty without bias

  // The matmul for `rows` input rows against the packed weight (or, while
  // packing, against whatever layout oneDNN prefers).
  dnnl::matmul::primitive_desc describe(int64_t rows, const memory::desc& weights) const {
    const memory::desc src({rows, in}, type, memory::format_tag::ab), dst({rows, out}, type, memory::format_tag::ab);
    dnnl::primitive_attr attr;
    // Scratch memory per call, not the library's shared one: calls may run concurrently.
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const auto desc = bias ? dnnl::matmul::desc(src, weights, bias.get_desc(), dst) : dnnl::matmul::desc(src, weights, dst);
    return dnnl::matmul::primitive_desc(desc, attr, cpu_engine());
  }
};

PackedGemm::PackedGemm(std::unique_ptr<State> state) : state_(std::move(state)) {}
PackedGemm::~PackedGemm() = default;

bool PackedGemm::native_bf16() {
  // Both must agree: the CPU (under our cap) and the oneDNN in this process
  // (under its own, ONEDNN_MAX_CPU_ISA).
  static const bool native = cpu_features().native_bf16_gemm() &&
                             dnnl::get_effective_cpu_isa() >= dnnl::cpu_isa::avx512_core;
  return native;
}

bool PackedGemm::enabled() {
  static const bool on = [] {
    const char* value = std::getenv("SEMROUTE_PACKED_GEMM");
    return value == nullptr || std::string(value) != "0";
  }();
  return on;
}

namespace {

// Where the CPU has no bf16 GEMM, a bf16 weight is packed as fp32.
bool widen_bf16(c10::ScalarType type) {
  if (type != at::kBFloat16 || PackedGemm::native_bf16()) return false;
  static std::once_flag warned;
  std::call_once(warned, [] {
    log_at(LogLevel::kWarning,
           "{} has no native bf16 GEMM: bf16 weights are widened to fp32 at load (libtorch's emulated bf16 is "
           "slower than fp32), so bf16 saves no time or memory here; prefer float32 on this CPU",
           cpu_features().describe());
  });
  return true;
}

}  // namespace

std::unique_ptr<PackedGemm> PackedGemm::pack(const at::Tensor& given_weight, const at::Tensor& given_bias) {
  if (!enabled() || !given_weight.defined() || !given_weight.device().is_cpu() || given_weight.dim() != 2)
    return nullptr;
  if (given_bias.defined() && given_bias.scalar_type() != given_weight.scalar_type()) return nullptr;
  const bool widen = widen_bf16(given_weight.scalar_type());
  const at::Tensor weight = widen ? given_weight.to(at::kFloat) : given_weight;
  const at::Tensor bias = widen && given_bias.defined() ? given_bias.to(at::kFloat) : given_bias;
  const auto type = data_type_of(weight.scalar_type());
  if (!type) return nullptr;
  auto state = std::make_unique<State>();
  state->in = weight.size(1);
  state->out = weight.size(0);
  state->dtype = given_weight.scalar_type();
  state->compute = weight.scalar_type();
  state->type = *type;
  try {
    const auto& engine = cpu_engine();
    if (bias.defined()) {
      state->bias = memory(memory::desc({1, state->out}, *type, memory::format_tag::ab), engine);
      std::memcpy(state->bias.get_data_handle(), bias.contiguous().data_ptr(), bias.nbytes());
    }
    const memory::desc any({state->in, state->out}, *type, memory::format_tag::any);
    state->weight_desc = state->describe(kPackRows, any).weights_desc();
    // W is [out, in] row-major, i.e. Wᵀ [in, out] with strides (1, in).
    const at::Tensor dense = weight.contiguous();
    memory plain(memory::desc({state->in, state->out}, *type, memory::dims{1, state->in}), engine, dense.data_ptr());
    state->weight = memory(state->weight_desc, engine);
    dnnl::stream stream(engine);
    dnnl::reorder(plain, state->weight).execute(stream, plain, state->weight);
    stream.wait();
    for (int64_t rows : {int64_t{1}, int64_t{7}, int64_t{4096}}) state->describe(rows, state->weight_desc);
  } catch (const dnnl::error&) {
    return nullptr;  // no implementation for this shape or CPU: stay dense
  }
  return std::unique_ptr<PackedGemm>(new PackedGemm(std::move(state)));
}

int64_t PackedGemm::in_features() const { return state_->in; }
int64_t PackedGemm::out_features() const { return state_->out; }
c10::ScalarType PackedGemm::compute_dtype() const { return state_->compute; }

at::Tensor PackedGemm::operator()(const at::Tensor& x) const {
  const State& s = *state_;
  if (x.size(-1) != s.in) throw InternalError("packed linear: input has " + std::to_string(x.size(-1)) +
                                              " features, the weight expects " + std::to_string(s.in));
  const at::Tensor a = x.reshape({-1, s.in}).to(s.compute).contiguous();
  std::vector<int64_t> sizes = x.sizes().vec();
  sizes.back() = s.out;
  at::Tensor y = at::empty({a.size(0), s.out}, a.options());
  if (a.size(0) == 0) return y.to(s.dtype).view(sizes);
  // oneDNN runs on this thread's OpenMP team: give it libtorch's thread count.
  at::internal::lazy_init_num_threads();
  try {
    const auto desc = s.describe(a.size(0), s.weight_desc);
    const at::Tensor scratch = at::empty({static_cast<int64_t>(desc.scratchpad_desc().get_size())}, at::kByte);
    const auto& engine = cpu_engine();
    memory src(desc.src_desc(), engine, a.data_ptr()), dst(desc.dst_desc(), engine, y.data_ptr()),
        pad(desc.scratchpad_desc(), engine, scratch.data_ptr());
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, s.weight}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, pad}};
    if (s.bias) args.emplace(DNNL_ARG_BIAS, s.bias);
    dnnl::stream stream(engine);
    // Primitives come from oneDNN's process-wide cache after the first call per row count.
    dnnl::matmul(desc).execute(stream, args);
    stream.wait();
  } catch (const dnnl::error& e) {
    throw InternalError(std::string("oneDNN matmul failed: ") + e.what());
  }
  return y.to(s.dtype).view(sizes);
}

}  // namespace semroute
