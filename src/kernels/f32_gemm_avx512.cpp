// The fp32 micro-kernel for the avx512 path (flags: src/CMakeLists.txt).
#define SEMROUTE_BITS 512
#define SEMROUTE_ENTRY f32_panels_avx512
#include "kernels/f32_panels.inc"
