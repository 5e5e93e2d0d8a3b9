// What the CPU can really run, read once with cpuid, so that every kernel
// picks its path from the machine and not from the build. A cap for testing
// the narrower paths on a wider host: SEMROUTE_MAX_CPU_ISA=avx2 (AVX2 + FMA
// without AVX-VNNI, as an AVX2-only EPYC; "avx2_vnni" keeps AVX-VNNI;
// "avx512", AVX-512 without AMX; "baseline", none of them). Unset, it follows
// oneDNN's ONEDNN_MAX_CPU_ISA, so that capping oneDNN (and ATen with
// ATEN_CPU_CAPABILITY) holds every path of the process to the same ISA.
#pragma once

#include <string>

namespace semroute {

struct CpuFeatures {
  std::string model_name;  // "AMD EPYC 9R14", from /proc/cpuinfo
  bool avx2 = false;       // with FMA
  bool avx512 = false;     // AVX-512 F, BW, DQ and VL (oneDNN's avx512_core)
  bool avx512_vnni = false;
  bool avx512_bf16 = false;
  bool avx_vnni = false;   // VNNI on 256-bit registers
  bool amx_bf16 = false;
  bool amx_int8 = false;
  std::string cap;         // the SEMROUTE_MAX_CPU_ISA in force, or ""

  // bf16 GEMMs run natively with AVX-512 BF16 or AMX (oneDNN emulates them on
  // plain AVX-512, ~3x slower than fp32, and has none on AVX2).
  bool native_bf16_gemm() const { return avx512_bf16 || amx_bf16; }
  // "avx512_core_amx", "avx512_core_bf16", "avx512_core_vnni", "avx512_core", "avx2", "baseline".
  std::string isa() const;
  // "AMD EPYC 9R14 (avx512_core_bf16)": for logs and benchmark tables.
  std::string describe() const;
};

// The features of this CPU under the cap (computed once, thread-safe).
const CpuFeatures& cpu_features();

// Parses a cap and applies it to `features` (exposed for tests).
CpuFeatures capped(CpuFeatures features, const std::string& cap);
// Our cap for a value of ONEDNN_MAX_CPU_ISA ("AVX2" -> "avx2",
// "AVX512_CORE_BF16" -> "avx512", "ALL" or AMX -> "", …).
std::string cap_of_onednn_isa(const std::string& onednn_isa);

}  // namespace semroute
