/* The scalar references of the lowp family: plain loops in k order, no blocking, no vectors.
 * They are the definitions the kernels are tested against, and the ISA = ref path.
 * int8: exact, in uint32 arithmetic (wrap-around modulo 2^32, defined in C, the same as the
 * vector adds); bf16: fp32 sums in k order. */
#include "lowp/lowp-internal.h"

void ridge_qgemm__ref(size_t m, size_t n, size_t k, ridge_lowp_type a_type, const void *a,
                      size_t lda, int32_t za, const int8_t *b, size_t b_rs, size_t b_cs,
                      void *c, size_t ldc, const ridge_requant *rq)
{
    const size_t esz = rq->out == RIDGE_LOWP_U8 || rq->out == RIDGE_LOWP_S8 ? 1 : 4;
    for (size_t i = 0; i < m; i++) {
        for (size_t j = 0; j < n; j++) {
            uint32_t acc = 0;
            for (size_t p = 0; p < k; p++) {
                int32_t x = a_type == RIDGE_LOWP_U8 ? ((const uint8_t *)a)[i * lda + p]
                                                    : ((const int8_t *)a)[i * lda + p];
                acc += (uint32_t)((x - za) * (int32_t)b[p * b_rs + j * b_cs]);
            }
            if (rq->bias) acc += (uint32_t)rq->bias[j];
            qgemm_finish_scalar(rq, j, (int32_t)acc, (char *)c + (i * ldc + j) * esz);
        }
    }
}

void ridge_bf16_gemm__ref(size_t m, size_t n, size_t k, const uint16_t *a, size_t lda,
                          const uint16_t *b, size_t b_rs, size_t b_cs, float beta, float *c,
                          size_t ldc)
{
    for (size_t i = 0; i < m; i++) {
        for (size_t j = 0; j < n; j++) {
            float acc = 0.0f;
            for (size_t p = 0; p < k; p++)
                acc += lowp_bf16_to_f32(a[i * lda + p]) * lowp_bf16_to_f32(b[p * b_rs + j * b_cs]);
            if (beta != 0.0f) acc += beta * c[i * ldc + j];
            c[i * ldc + j] = acc;
        }
    }
}

uint16_t ridge_bf16_from_f32(float x) { return lowp_f32_to_bf16(x); }
float ridge_bf16_to_f32_1(uint16_t h) { return lowp_bf16_to_f32(h); }

void ridge_f32_to_bf16(size_t n, const float *src, uint16_t *dst)
{
    for (size_t i = 0; i < n; i++) dst[i] = lowp_f32_to_bf16(src[i]);
}

void ridge_bf16_to_f32(size_t n, const uint16_t *src, float *dst)
{
    for (size_t i = 0; i < n; i++) dst[i] = lowp_bf16_to_f32(src[i]);
}
