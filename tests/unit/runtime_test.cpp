// The compute runtime: thread count and the BLAS check.
#include <gtest/gtest.h>

#include "core/cpu_features.h"
#include "core/device.h"
#include "core/free_cpus.h"
#include "core/runtime.h"
#include "core/tensor_cache.h"
#include "test_util.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/ones.h>
#include <c10/core/InferenceMode.h>

namespace semroute {
namespace {

TEST(Runtime, SetsTheThreadCountExplicitly) {
  const int before = compute_threads();
  set_compute_threads(1);
  EXPECT_EQ(compute_threads(), 1);
  set_compute_threads(0);
  EXPECT_EQ(compute_threads(), usable_cpus());
  // Later tests in this process keep the count they started with (the
  // ThreadSanitizer run needs one thread: libgomp is not instrumented).
  set_compute_threads(before);
}

// /proc/stat as Linux writes it (user nice system idle iowait irq softirq
// steal guest guest_nice), two CPUs and the aggregate line, which is skipped.
constexpr const char* kProcStat =
    "cpu  300 0 100 900 0 0 0 0 0 0\n"
    "cpu0 200 0 50 400 0 0 0 0 0 0\n"
    "cpu1 100 0 50 500 0 0 0 0 0 0\n"
    "intr 12345 0 0\n";

TEST(FreeCpus, ReadsTheTicksOfTheProcessesCpusOnly) {
  const CpuTicks both = cpu_ticks(kProcStat, {0, 1});
  EXPECT_EQ(both.busy, 400u);
  EXPECT_EQ(both.all, 1300u);
  const CpuTicks one = cpu_ticks(kProcStat, {1});
  EXPECT_EQ(one.busy, 150u);
  EXPECT_EQ(one.all, 650u);
  EXPECT_EQ(cpu_ticks(kProcStat, {7}).all, 0u);
  EXPECT_EQ(cpu_ticks("garbage", {0}).all, 0u);
}

TEST(FreeCpus, ReadsTheProcessTimeAfterItsName) {
  // A name with spaces and a ')' of its own; utime 1200, stime 34.
  EXPECT_EQ(process_ticks("4242 (semroute (x) y) R 1 2 3 4 5 6 7 8 9 10 1200 34 0 0 20 0 3 0"), 1234u);
  EXPECT_EQ(process_ticks("no name here"), 0u);
  EXPECT_EQ(process_ticks(""), 0u);
}

TEST(FreeCpus, LeavesTheCoresOthersKeepBusy) {
  const CpuTicks before{0, 0};
  // 100 ticks a CPU on two CPUs: this process 100, another process 100 (one core).
  EXPECT_EQ(free_cpus_between(before, {200, 200}, 0, 100, 2), 1);
  // Only this process: both free.
  EXPECT_EQ(free_cpus_between(before, {180, 200}, 0, 180, 2), 2);
  // A neighbour at a third of a core rounds to none; both cores busy by others leaves one (never zero).
  EXPECT_EQ(free_cpus_between(before, {33, 200}, 0, 0, 2), 2);
  EXPECT_EQ(free_cpus_between(before, {200, 200}, 0, 0, 2), 1);
  // No time passed, or counters that went backwards: every CPU.
  EXPECT_EQ(free_cpus_between({50, 200}, {50, 200}, 0, 0, 4), 4);
  // Own time over the busy ticks (rounding between the two files): nobody else.
  EXPECT_EQ(free_cpus_between(before, {100, 400}, 0, 130, 4), 4);
}

TEST(FreeCpus, ACoreCountedBusyStaysSoUntilItsLoadFallsWellBelow) {
  const CpuTicks before{0, 0};
  // A neighbour at 0.45 of a core (sharing it with one of ours): busy if it was, free if it was not.
  EXPECT_EQ(free_cpus_between(before, {145, 200}, 0, 100, 2, 1), 1);
  EXPECT_EQ(free_cpus_between(before, {145, 200}, 0, 100, 2, 0), 2);
  // Below a quarter of a core it is free again.
  EXPECT_EQ(free_cpus_between(before, {120, 200}, 0, 100, 2, 1), 2);
  // Of two cores counted busy on four CPUs, 1.4 cores keep both, 1.2 one.
  EXPECT_EQ(free_cpus_between(before, {140, 400}, 0, 0, 4, 2), 2);
  EXPECT_EQ(free_cpus_between(before, {120, 400}, 0, 0, 4, 2), 3);
}

TEST(FreeCpus, AnswersWithinTheUsableCpus) {
  const int n = free_cpus();
  EXPECT_GE(n, 1);
  EXPECT_LE(n, usable_cpus());
}

TEST(TensorCache, ReusesFreedBlocksOfASizeClass) {
  ensure_runtime_initialized();
  const TensorCacheStats before = tensor_cache_stats();
  if (!before.installed) GTEST_SKIP() << "the cache is off (AddressSanitizer, or SEMROUTE_TENSOR_CACHE_MB=0)";
  // Tests sharing a process (scripts/test-shards.sh) may have filled it: a freed block then goes back to the system.
  if (before.idle_bytes + 2'000'000 > before.cap_bytes) GTEST_SKIP() << "the cache already holds its cap";
  c10::InferenceMode guard;
  const void* first = nullptr;
  size_t idle_while_in_use = 0;  // it may have been served from a block freed by earlier work
  {
    const at::Tensor a = at::ones({300'000});  // 1.2 MB
    first = a.data_ptr();
    idle_while_in_use = tensor_cache_stats().idle_bytes;
    EXPECT_EQ(a.sum().item<float>(), 300'000.0f);
  }
  EXPECT_GE(tensor_cache_stats().idle_bytes, idle_while_in_use + 1'200'000);
  // A little longer, same size class: the same block, and no stale state visible through the API.
  const at::Tensor b = at::ones({310'000});
  EXPECT_EQ(b.data_ptr(), first);
  EXPECT_EQ(b.sum().item<float>(), 310'000.0f);
  EXPECT_GT(tensor_cache_stats().reused, before.reused);
  // Small tensors are not cached (malloc serves them without faults).
  const size_t fresh = tensor_cache_stats().fresh;
  for (int i = 0; i < 10; ++i) at::empty({100});
  EXPECT_EQ(tensor_cache_stats().fresh, fresh);
}

TEST(Runtime, FindsAFastBlas) {
  const BlasReport blas = check_blas(true);
  EXPECT_FALSE(blas.library.empty());
  EXPECT_GT(blas.gflops, 0.0);
  // Known by name, it is not timed: the check costs the caller nothing.
  EXPECT_EQ(check_blas().gflops, 0.0) << blas.library;
  // The install script selects OpenBLAS; the reference BLAS would make every model ~40x slower.
  EXPECT_FALSE(blas.reference_blas) << "libtorch is using the reference BLAS: " << blas.library;
}

TEST(Device, ParsesNamesAndRefusesWhatThisBuildLacks) {
  EXPECT_TRUE(parse_device("cpu").is_cpu());
  EXPECT_EQ(parse_precision("bf16", parse_device("cpu")).dtype, c10::kBFloat16);
  // auto: bf16 only where AMX makes it faster than fp32, never the emulated one, never int8.
  const Precision automatic = parse_precision("auto", parse_device("cpu"));
  EXPECT_EQ(automatic.dtype, cpu_features().amx_bf16 ? c10::kBFloat16 : c10::kFloat);
  EXPECT_FALSE(automatic.int8);
  const Precision int8 = parse_precision("int8", parse_device("cpu"));
  EXPECT_TRUE(int8.int8);
  EXPECT_EQ(int8.dtype, c10::kFloat);
  EXPECT_EQ(precision_name(int8), "int8");
  test::expect_error([] { parse_device("tpu"); }, ErrorCode::kInvalidArgument, "unknown device");
  test::expect_error([] { parse_precision("fp8", parse_device("cpu")); }, ErrorCode::kInvalidArgument, "unknown dtype");
  if (!cuda_available()) test::expect_error([] { parse_device("cuda:0"); }, ErrorCode::kUnsupported, "no CUDA");
}

}  // namespace
}  // namespace semroute
