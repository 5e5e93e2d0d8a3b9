// The int8 micro-kernel for the avx_vnni path (flags: src/CMakeLists.txt).
#define SEMROUTE_BITS 256
#define SEMROUTE_VNNI 1
#define SEMROUTE_ENTRY int8_panels_avx_vnni
#include "kernels/int8_panels.inc"
