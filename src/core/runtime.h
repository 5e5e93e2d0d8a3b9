// Process-wide compute settings: libtorch's intra-op thread count (it starts at
// 1 on Debian's build) and a check that the BLAS behind libtorch is a fast one
// (the reference BLAS Debian selects by default is ~40x slower than OpenBLAS).
#pragma once

#include <exception>
#include <optional>
#include <string>
#include <type_traits>

namespace semroute {

// Applied once, lazily, before the first model loads: the tensor cache
// (core/tensor_cache.h), thread count from
// SEMROUTE_NUM_THREADS or the CPUs this process may run on, then the BLAS check
// (skipped when SEMROUTE_SKIP_BLAS_CHECK=1), which logs a warning if slow.
void ensure_runtime_initialized();

// Gives the calling thread the process-wide compute thread count: callers'
// threads (a Go program's especially) may never have run libtorch work.
// libtorch's per-thread first-use setup, once a thread and one thread at a
// time (it rebuilds a process-wide thread pool): call it before libtorch's
// first parallel op on a thread, which would otherwise run that unguarded.
void prepare_calling_thread();

// Keeps the calling thread's own tensor work (a server's connection threads:
// a head's softmax over a few logits) on that thread: no OpenMP team of its
// own beside the compute lane's (see release_openmp_team). Its first tensor
// work still re-creates libtorch's thread pools once: threads that call it
// should be long-lived.
void compute_serially_on_this_thread();

// Frees the calling thread's OpenMP team (omp_pause_resource_all). libgomp
// keeps an idle team for every thread that ever ran parallel work, and once
// the teams' threads outnumber the CPUs it throttles every team's spin-wait,
// so each parallel region wakes its workers through the kernel: a small
// model's call measured 0.82 ms on a thread of its own and 1.3-1.5 ms with
// the loading thread's team left idle (2 CPUs). Loaders call it when done;
// a thread that computes again gets a new team (once, ~0.1 ms).
void release_openmp_team();

// fn's result (or its exception, rethrown) through `execute`, which runs a
// void() job somewhere and returns once it is done.
template <class Fn, class Execute>
auto run_via(Fn&& fn, Execute&& execute) -> decltype(fn()) {
  using Result = decltype(fn());
  std::exception_ptr error;
  const auto guard = [&](auto&& body) {
    try {
      body();
    } catch (...) {
      error = std::current_exception();
    }
  };
  if constexpr (std::is_void_v<Result>) {
    execute([&] { guard(fn); });
    if (error) std::rethrow_exception(error);
  } else {
    std::optional<Result> result;
    execute([&] { guard([&] { result.emplace(fn()); }); });
    if (error) std::rethrow_exception(error);
    return std::move(*result);
  }
}

// Sets libtorch's intra-op threads; n <= 0 means "all usable CPUs".
void set_compute_threads(int n);
int compute_threads();
int usable_cpus();

struct BlasReport {
  std::string library;  // resolved path of the loaded libblas, or "" if unknown
  double gflops = 0;    // fp32 GEMM rate measured on one 256^3 product (0: not timed)
  bool reference_blas = false;  // the netlib reference implementation is loaded
  bool slow = false;            // reference BLAS or a rate below 5 GFLOP/s
};

// Inspects the loaded BLAS; times a small GEMM (~1 ms with OpenBLAS) only
// when the library is not known by name, or when `timed`.
BlasReport check_blas(bool timed = false);

}  // namespace semroute
