/* int8 GEMM for AVX-VNNI (Alder Lake and later, Zen 5): the AVX2 kernel's 6 x 16 int32 tile
 * with k in groups of 4 bytes, one vpdpbusd per 32 multiply-adds (u8 A x s8 B into int32,
 * no intermediate saturation; 15 of 16 ymm registers). Cannot run on the Zen 3 this was
 * written on: tests SKIP it there, and the AVX2 kernel's tests validate the shared template.
 * All logic is in qgemm-template.h; this file is only the mapping. */
#include <immintrin.h>

#define Q_MR 6
#define Q_NV 2
#define Q_KG 4
#define Q_ELEM_BITS 8
#define Q_UKERNEL ridge_u8s8_gemm_ukernel_6x16c4__avxvnni
#define Q_TABLE ridge_lowp_u8s8_avxvnni
#define Q_NAME "u8s8-gemm-6x16c4-avxvnni"

#include "lowp/lowp-avx2.h"
#define VI_DOT(acc, a, b) _mm256_dpbusd_avx_epi32(acc, a, b)

#include "lowp/qgemm-template.h"
