#include "core/cpu_features.h"

#include <cpuid.h>

#include <cctype>
#include <cstdlib>
#include <fstream>

#include "core/log.h"

namespace semroute {
namespace {

bool bit(unsigned value, int n) { return ((value >> n) & 1u) != 0; }

std::string model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    const auto begin = line.find_first_not_of(' ', colon + 1);
    return begin == std::string::npos ? "" : line.substr(begin);
  }
  return "unknown CPU";
}

CpuFeatures detect() {
  CpuFeatures f;
  f.model_name = model_name();
  // __builtin_cpu_supports also checks that the OS saves the wide registers.
  f.avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  f.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) {
    f.avx512_vnni = f.avx512 && bit(ecx, 11);
    f.amx_bf16 = f.avx512 && bit(edx, 22) && bit(edx, 24);
    f.amx_int8 = f.avx512 && bit(edx, 25) && bit(edx, 24);
  }
  if (__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) {
    f.avx_vnni = f.avx2 && bit(eax, 4);
    f.avx512_bf16 = f.avx512 && bit(eax, 5);
  }
  return f;
}

}  // namespace

CpuFeatures capped(CpuFeatures f, const std::string& cap) {
  if (cap.empty() || cap == "native") return f;
  f.cap = cap;
  if (cap == "avx512") {
    f.amx_bf16 = f.amx_int8 = false;
  } else if (cap == "avx2" || cap == "avx2_vnni") {
    // As oneDNN's AVX2 level: AVX-VNNI is a level above it (AVX2_VNNI).
    f.avx_vnni = f.avx_vnni && cap == "avx2_vnni";
    f.avx512 = f.avx512_vnni = f.avx512_bf16 = f.amx_bf16 = f.amx_int8 = false;
  } else if (cap == "baseline") {
    CpuFeatures none;
    none.model_name = f.model_name;
    none.cap = cap;
    f = none;
  } else {
    log_at(LogLevel::kWarning, "SEMROUTE_MAX_CPU_ISA='{}' is not one of avx2, avx2_vnni, avx512, baseline, native: ignored", cap);
    f.cap.clear();
  }
  return f;
}

std::string CpuFeatures::isa() const {
  if (amx_bf16) return "avx512_core_amx";
  if (avx512_bf16) return "avx512_core_bf16";
  if (avx512_vnni) return "avx512_core_vnni";
  if (avx512) return "avx512_core";
  if (avx2) return avx_vnni ? "avx2_vnni" : "avx2";
  return "baseline";
}

std::string CpuFeatures::describe() const {
  return model_name + " (" + isa() + (cap.empty() ? "" : ", capped by SEMROUTE_MAX_CPU_ISA=" + cap) + ")";
}

std::string cap_of_onednn_isa(const std::string& onednn_isa) {
  std::string isa;
  for (char c : onednn_isa) isa += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const auto starts = [&](const char* prefix) { return isa.rfind(prefix, 0) == 0; };
  if (isa.empty() || isa == "ALL" || starts("AVX512_CORE_AMX")) return "";
  if (starts("AVX512") || starts("AVX10")) return "avx512";
  if (starts("AVX2_VNNI")) return "avx2_vnni";
  if (starts("AVX2")) return "avx2";
  return "baseline";  // SSE41, AVX
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = [] {
    const char* ours = std::getenv("SEMROUTE_MAX_CPU_ISA");
    const char* onednn = std::getenv("ONEDNN_MAX_CPU_ISA");
    return capped(detect(), ours != nullptr ? ours : onednn != nullptr ? cap_of_onednn_isa(onednn) : "");
  }();
  return features;
}

}  // namespace semroute
