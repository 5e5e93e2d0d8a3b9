// The machine's measured ceilings that kernel speeds are stated against:
// the rate of the int8, fp32 and bf16 multiply-add instructions our kernels
// use (register-only loops, every thread at once) and the memory bandwidth a
// stream of reads gets (what a product of few rows is bound by: the weight
// streams once). Inline assembly, so that what is timed is exactly the
// instruction and not what a compiler made of a loop.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/cpu_features.h"

namespace semroute::bench {

namespace ceilings_detail {

// 24 independent accumulators per iteration: latency is hidden, the loop
// runs at the instruction's throughput.
#define SEMROUTE_CEILING_LOOP(registers, body)                                                      \
  __asm__ volatile("1:\n .irp r," registers "\n" body "\n.endr\n dec %0\n jnz 1b\n" : "+r"(iterations) : : "cc")
#define SEMROUTE_24 "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23"
#define SEMROUTE_12 "0,1,2,3,4,5,6,7,8,9,10,11"

inline void vnni512(int64_t iterations) { SEMROUTE_CEILING_LOOP(SEMROUTE_24, "vpdpbusd %%zmm30, %%zmm31, %%zmm\\r"); }
inline void vnni256(int64_t iterations) { SEMROUTE_CEILING_LOOP(SEMROUTE_12, "%{vex%} vpdpbusd %%ymm14, %%ymm15, %%ymm\\r"); }
// Without VNNI a 4-byte dot product is vpmaddubsw + vpmaddwd + vpaddd: 6
// chains (accumulators ymm0-5, temporaries ymm6-11; inputs ymm12-13, ones ymm14).
inline void maddubs256(int64_t iterations) {
#define SEMROUTE_CHAIN(acc, tmp)                                                                             \
  "vpmaddubsw %%ymm13, %%ymm12, %%ymm" #tmp "\n vpmaddwd %%ymm14, %%ymm" #tmp ", %%ymm" #tmp "\n vpaddd %%ymm" #tmp \
  ", %%ymm" #acc ", %%ymm" #acc "\n"
  __asm__ volatile("1:\n" SEMROUTE_CHAIN(0, 6) SEMROUTE_CHAIN(1, 7) SEMROUTE_CHAIN(2, 8) SEMROUTE_CHAIN(3, 9)
                       SEMROUTE_CHAIN(4, 10) SEMROUTE_CHAIN(5, 11) "dec %0\n jnz 1b\n"
                   : "+r"(iterations) : : "cc");
#undef SEMROUTE_CHAIN
}
inline void fma512(int64_t iterations) { SEMROUTE_CEILING_LOOP(SEMROUTE_24, "vfmadd231ps %%zmm30, %%zmm31, %%zmm\\r"); }
inline void fma256(int64_t iterations) { SEMROUTE_CEILING_LOOP(SEMROUTE_12, "vfmadd231ps %%ymm14, %%ymm15, %%ymm\\r"); }
inline void bf16_512(int64_t iterations) { SEMROUTE_CEILING_LOOP(SEMROUTE_24, "vdpbf16ps %%zmm30, %%zmm31, %%zmm\\r"); }
#undef SEMROUTE_24
#undef SEMROUTE_12
#undef SEMROUTE_CEILING_LOOP

// Runs `loop` on `threads` threads at once; returns the best of three of
// `ops_per_iteration` x iterations / seconds, summed over threads.
template <class Loop>
double rate(Loop loop, double ops_per_iteration, int threads) {
  const int64_t iterations = 4'000'000;
  double best = 0;
  for (int round = 0; round < 3; ++round) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> team;
    for (int t = 0; t < threads; ++t) team.emplace_back([&] { loop(iterations); });
    for (auto& t : team) t.join();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, ops_per_iteration * static_cast<double>(iterations) * threads / seconds);
  }
  return best;
}

}  // namespace ceilings_detail

struct Ceiling {
  double rate = 0;  // ops/s (int8: multiply-adds x 2), or bytes/s
  std::string what;
};

// int8 multiply-add peak of the widest int8 instruction this CPU runs
// (under SEMROUTE_MAX_CPU_ISA), as our kernel uses it.
inline Ceiling int8_peak(int threads) {
  using namespace ceilings_detail;
  const CpuFeatures& cpu = cpu_features();
  if (cpu.avx512_vnni) return {rate(vnni512, 24.0 * 64 * 2, threads), "vpdpbusd zmm"};
  if (cpu.avx_vnni) return {rate(vnni256, 12.0 * 32 * 2, threads), "vpdpbusd ymm (AVX-VNNI)"};
  if (cpu.avx2) return {rate(maddubs256, 6.0 * 32 * 2, threads), "vpmaddubsw + vpmaddwd + vpaddd ymm"};
  return {0, "no vector int8"};
}

inline Ceiling fp32_peak(int threads) {
  using namespace ceilings_detail;
  const CpuFeatures& cpu = cpu_features();
  if (cpu.avx512) return {rate(fma512, 24.0 * 16 * 2, threads), "vfmadd231ps zmm"};
  if (cpu.avx2) return {rate(fma256, 12.0 * 8 * 2, threads), "vfmadd231ps ymm"};
  return {0, "no FMA"};
}

// The bf16 dot-product peak (AVX-512 BF16: what the attention's bf16
// products use); 0 where the CPU has none.
inline Ceiling bf16_peak(int threads) {
  using namespace ceilings_detail;
  if (cpu_features().avx512_bf16) return {rate(bf16_512, 24.0 * 32 * 2, threads), "vdpbf16ps zmm"};
  return {0, "no bf16 dot product"};
}

// Bytes/s of `threads` threads each summing its own part of a 512 MB
// buffer (far past the caches), best of three.
inline Ceiling read_bandwidth(int threads) {
  const size_t bytes = size_t{512} << 20, words = bytes / sizeof(uint64_t);
  std::unique_ptr<uint64_t[]> data(new uint64_t[words]);
  std::vector<std::thread> fill;
  for (int t = 0; t < threads; ++t)
    fill.emplace_back([&, t] {
      const size_t begin = words * t / threads, end = words * (t + 1) / threads;
      for (size_t i = begin; i < end; ++i) data[i] = i;  // first touch by the reading thread
    });
  for (auto& t : fill) t.join();
  double best = 0;
  std::vector<uint64_t> sinks(static_cast<size_t>(threads));
  for (int round = 0; round < 3; ++round) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> team;
    for (int t = 0; t < threads; ++t)
      team.emplace_back([&, t] {
        const size_t begin = words * t / threads, end = words * (t + 1) / threads;
        uint64_t lanes[8] = {};
        for (size_t i = begin; i + 8 <= end; i += 8)
          for (int l = 0; l < 8; ++l) lanes[l] ^= data[i + l];
        uint64_t sink = 0;
        for (uint64_t l : lanes) sink ^= l;
        sinks[static_cast<size_t>(t)] = sink;
      });
    for (auto& t : team) t.join();
    best = std::max(best, static_cast<double>(bytes) /
                              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return {best, "read stream, 512 MB"};
}

}  // namespace semroute::bench
