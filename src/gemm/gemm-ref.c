/* The reference SGEMM: for each element of C, a float dot product over k in order, then the
 * scalar epilogue. No blocking, no vectors: it is the definition the fast paths are tested
 * against (through a double-accumulating checker in tests/test-gemm.c) and the ISA = ref
 * path. */
#include "gemm/gemm-internal.h"

void ridge_f32_gemm__ref(const gemm_problem *p, size_t i0, size_t i1, size_t j0, size_t j1)
{
    for (size_t i = i0; i < i1; i++) {
        for (size_t j = j0; j < j1; j++) {
            float acc = 0.0f;
            if (p->k) { /* a and b may be NULL otherwise */
                const float *a = p->a + i * p->a_rs, *b = p->b + j * p->b_cs;
                for (size_t q = 0; q < p->k; q++) acc += a[q * p->a_cs] * b[q * p->b_rs];
            }
            /* Read-then-write of the same element: residual == c is allowed. */
            p->c[i * p->ldc + j] = gemm_finish_scalar(p, i, j, acc);
        }
    }
}
