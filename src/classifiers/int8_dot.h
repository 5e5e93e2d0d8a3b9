// Integer dot products of int8 codes for the vector index's scan, one per
// instruction set; the index picks the best the CPU has at run time.
#pragma once

#include <cstdint>

namespace semroute {

int32_t dot_i8_scalar(const int8_t* a, const int8_t* b, int64_t n);
int32_t dot_i8_avx2(const int8_t* a, const int8_t* b, int64_t n);  // needs AVX2

// AVX-512 VNNI multiplies unsigned by signed bytes, 64 per instruction: the
// query is passed shifted to unsigned (code + 128), and the row's code sum
// takes the shift back out: Σ (q + 128)·x = Σ q·x + 128·Σ x.
int32_t dot_u8s8_vnni(const uint8_t* query, const int8_t* row, int64_t n, int32_t row_sum);  // needs AVX-512 VNNI

bool has_avx2();
bool has_vnni();

using DotI8 = int32_t (*)(const int8_t*, const int8_t*, int64_t);
// AVX2 when available, else scalar.
DotI8 dot_i8();

}  // namespace semroute
