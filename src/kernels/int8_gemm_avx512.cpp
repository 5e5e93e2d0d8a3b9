// The int8 micro-kernel for the avx512 path (flags: src/CMakeLists.txt).
#define SEMROUTE_BITS 512
#define SEMROUTE_VNNI 0
#define SEMROUTE_ENTRY int8_panels_avx512
#include "kernels/int8_panels.inc"
