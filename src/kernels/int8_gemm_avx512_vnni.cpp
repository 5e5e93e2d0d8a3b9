// The int8 micro-kernel for the avx512_vnni path (flags: src/CMakeLists.txt).
#define SEMROUTE_BITS 512
#define SEMROUTE_VNNI 1
#define SEMROUTE_ENTRY int8_panels_avx512_vnni
#include "kernels/int8_panels.inc"
