// Process-wide compute settings: libtorch's intra-op thread count (it starts at
// 1 on Debian's build) and a check that the BLAS behind libtorch is a fast one
// (the reference BLAS Debian selects by default is ~40x slower than OpenBLAS).
#pragma once

#include <string>

namespace semroute {

// Applied once, lazily, before the first model loads: the tensor cache
// (core/tensor_cache.h), thread count from
// SEMROUTE_NUM_THREADS or the CPUs this process may run on, then the BLAS check
// (skipped when SEMROUTE_SKIP_BLAS_CHECK=1), which logs a warning if slow.
void ensure_runtime_initialized();

// Gives the calling thread the process-wide compute thread count: callers'
// threads (a Go program's especially) may never have run libtorch work.
void prepare_calling_thread();

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
