// The int8 micro-kernel for the avx2 path (flags: src/CMakeLists.txt).
#define SEMROUTE_BITS 256
#define SEMROUTE_VNNI 0
#define SEMROUTE_ENTRY int8_panels_avx2
#include "kernels/int8_panels.inc"
