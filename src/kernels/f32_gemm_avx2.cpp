// The fp32 micro-kernel for the avx2 path (flags: src/CMakeLists.txt).
#define SEMROUTE_BITS 256
#define SEMROUTE_ENTRY f32_panels_avx2
#include "kernels/f32_panels.inc"
