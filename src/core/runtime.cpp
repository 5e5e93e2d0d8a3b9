#include "core/runtime.h"

#include "core/free_cpus.h"
#include "core/tensor_cache.h"

#include <omp.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/rand.h>
#include <link.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "core/log.h"

namespace semroute {
namespace {

// Path of the first loaded object whose name mentions libblas / openblas.
std::string loaded_blas_library() {
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        const char* name = info->dlpi_name;
        if (name == nullptr || (std::strstr(name, "libblas") == nullptr && std::strstr(name, "openblas") == nullptr))
          return 0;
        char resolved[PATH_MAX];
        *static_cast<std::string*>(out) = realpath(name, resolved) != nullptr ? resolved : name;
        return 1;
      },
      &found);
  return found;
}

double time_gemm_gflops() {
  constexpr int64_t n = 256;
  const at::Tensor a = at::rand({n, n});
  const at::Tensor b = at::rand({n, n});
  at::mm(a, b);  // warm-up: thread pool start, packing buffers
  double best = 1e30;
  for (int i = 0; i < 5; ++i) {
    const auto start = std::chrono::steady_clock::now();
    at::mm(a, b);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return 2.0 * n * n * n / best / 1e9;
}

}  // namespace

int usable_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return 1;
}

namespace {
std::atomic<int> configured_threads{0};  // 0: not set yet
// Held while libtorch's thread count is set: at::set_num_threads (which its
// per-thread first-use setup calls) rebuilds a process-wide thread pool, and
// two threads doing it at once corrupt the heap.
std::mutex thread_count_mutex;
thread_local bool this_thread_initialized = false;
}  // namespace

void set_compute_threads(int n) {
  std::lock_guard<std::mutex> lock(thread_count_mutex);
  configured_threads = n > 0 ? n : usable_cpus();
  at::set_num_threads(configured_threads);
  this_thread_initialized = true;
}

void prepare_calling_thread() {
  if (this_thread_initialized) return;
  std::lock_guard<std::mutex> lock(thread_count_mutex);
  at::internal::lazy_init_num_threads();
  this_thread_initialized = true;
}

// The configured count, not the calling thread's team size: a thread that
// follows the free CPUs (core/free_cpus.h) may run with fewer.
int compute_threads() {
  const int n = configured_threads;
  return n > 0 ? n : at::get_num_threads();
}

void compute_serially_on_this_thread() {
  prepare_calling_thread();  // else the first parallel op sets the process-wide count again
  limit_this_thread_team(1);
}

void release_openmp_team() { omp_pause_resource_all(omp_pause_soft); }

BlasReport check_blas(bool timed) {
  BlasReport report;
  report.library = loaded_blas_library();
  // Debian installs the reference BLAS under .../blas/, OpenBLAS under .../openblas-*/.
  report.reference_blas = report.library.find("/blas/") != std::string::npos &&
                          report.library.find("openblas") == std::string::npos;
  // A known library is judged by its name, at no cost to the caller; an
  // unknown one by a timed product (~1 ms). The reference BLAS runs
  // ~2.5 GFLOP/s; OpenBLAS ~50-100 even on a busy core.
  const bool known = report.reference_blas || report.library.find("openblas") != std::string::npos;
  if (!known || timed) report.gflops = time_gemm_gflops();
  report.slow = report.reference_blas || (report.gflops > 0 && report.gflops < 5.0);
  return report;
}

void ensure_runtime_initialized() {
  static std::once_flag once;
  std::call_once(once, [] {
    install_tensor_cache();
    const char* threads = std::getenv("SEMROUTE_NUM_THREADS");
    set_compute_threads(threads != nullptr ? std::atoi(threads) : 0);
    const char* skip = std::getenv("SEMROUTE_SKIP_BLAS_CHECK");
    if (skip != nullptr && std::strcmp(skip, "1") == 0) return;
    const BlasReport blas = check_blas();
    log_at(LogLevel::kDebug, "BLAS {} at {:.1f} GFLOP/s, {} threads", blas.library, blas.gflops, compute_threads());
    if (blas.reference_blas)
      log_at(LogLevel::kWarning,
             "libtorch is using the reference BLAS ({}; {:.1f} GFLOP/s): inference will be ~40x slower than it "
             "should. Install OpenBLAS: apt-get install libopenblas0-openmp",
             blas.library, blas.gflops);
    else if (blas.slow)
      log_at(LogLevel::kWarning, "matrix products run at only {:.1f} GFLOP/s with {} (is the machine overloaded?)",
             blas.gflops, blas.library.empty() ? "an unknown BLAS" : blas.library);
  });
}

}  // namespace semroute
