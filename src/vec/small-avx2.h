/* Short spans on AVX2 (included by vec-avx2.c before vec-template.h, which uses these where
 * RV_SMALL is defined): sums of 1..16 elements and int32 min/max of 8..16, written so that a
 * 10-element call is a straight run of instructions.
 *
 * Why not the template's short paths: a 10-element call is as cheap as a plain loop only if
 * almost nothing but the loads and adds is left (docs/PERFORMANCE.md, vec, session 4). So:
 *   - float sums and int32 min/max use 128-bit registers only: no vzeroupper on the way out
 *     (it is needed after any 256-bit instruction, since the caller may run SSE code, and it
 *     and the 128-bit extract of the reduction were ~10% of a 10-element max_i32 call);
 *   - no branch on the size: every vector is a masked load (vmaskmov) whose mask is a compare
 *     of n against the lane indices; it reads nothing of the lanes that are off (addresses
 *     past the end are formed as integers, so no C pointer beyond the array exists);
 *   - float sums: exactly the lane scheme of include/ridge/vec.h (element i in lane i, the
 *     lanes folded j + j+8, j + j+4, j + j+2, j + j+1 in that operand order), leaving out the
 *     additions of the empty (+0) lanes: those change only the sign of a zero, and the scheme's
 *     sum is never -0 (its lanes start at +0), so one + 0 at the end gives the same bits;
 *   - int64 sums: the wrapped sum is exact when every element is in [-2^59, 2^59) (16 of them
 *     cannot leave int64), tested with one OR per vector; other spans take the exact path.
 * No include guard (included once, by vec-avx2.c). */
#include <immintrin.h>
#include <stdint.h>

#define RV_SMALL 16 /* the spans these handle: n in 1..RV_SMALL */

/* p + k elements as an address; may lie past the end of the array (masked loads only) */
#define SM_AT(p, k) ((const void *)((uintptr_t)(p) + (k) * sizeof *(p)))

/* int64 lane j set where base + j < n */
static inline __m256i sm_mask4q(__m256i nv, long long base)
{
    return _mm256_cmpgt_epi64(nv, _mm256_setr_epi64x(base, base + 1, base + 2, base + 3));
}

/* doubles: 4-lane vectors a0..a3 = elements 0-3, 4-7, 8-11, 12-15; lanes (a0 + a2) + (a1 + a3),
 * then j + j+2, j + j+1 (the scheme's fold for n <= 16) */
#define SM_SUM_F64(LOAD, LOADM)                                                                    \
    __m256i nv = _mm256_set1_epi64x((long long)n);                                                 \
    __m256d a0, a1, a2 = LOADM(8, sm_mask4q(nv, 8)), a3 = LOADM(12, sm_mask4q(nv, 12));            \
    if (__builtin_expect(n >= 8, 1)) a0 = LOAD(0), a1 = LOAD(4);                                   \
    else a0 = LOADM(0, sm_mask4q(nv, 0)), a1 = LOADM(4, sm_mask4q(nv, 4));                         \
    __m256d s = _mm256_add_pd(_mm256_add_pd(a0, a2), _mm256_add_pd(a1, a3));                       \
    __m128d h = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));               \
    h = _mm_add_sd(h, _mm_unpackhi_pd(h, h));                                                      \
    return _mm_cvtsd_f64(_mm_add_sd(h, _mm_setzero_pd()))

static inline double small_sum_f64(const double *x, size_t n)
{
#define LD(k) _mm256_loadu_pd(x + (k))
#define LDM(k, m) _mm256_maskload_pd(SM_AT(x, k), (m))
    SM_SUM_F64(LD, LDM);
#undef LD
#undef LDM
}

static inline double small_dot_f64(const double *x, const double *y, size_t n)
{
#define LDM(k, m)                                                                                  \
    _mm256_mul_pd(_mm256_maskload_pd(SM_AT(x, k), (m)), _mm256_maskload_pd(SM_AT(y, k), (m)))
#define LD(k) _mm256_mul_pd(_mm256_loadu_pd(x + (k)), _mm256_loadu_pd(y + (k)))
    SM_SUM_F64(LD, LDM);
#undef LD
#undef LDM
}

/* int64, n in 1..16: 1 and the sum in *out if every element is in [-2^59, 2^59), else 0 */
static inline int small_sum_i64(const int64_t *x, size_t n, int64_t *out)
{
    __m256i nv = _mm256_set1_epi64x((long long)n), a0, a1;
    const __m256i bias = _mm256_set1_epi64x((long long)1 << 59);
    __m256i a2 = _mm256_maskload_epi64(SM_AT(x, 8), sm_mask4q(nv, 8));
    __m256i a3 = _mm256_maskload_epi64(SM_AT(x, 12), sm_mask4q(nv, 12));
    if (__builtin_expect(n >= 8, 1)) {
        a0 = _mm256_loadu_si256((const __m256i *)x);
        a1 = _mm256_loadu_si256((const __m256i *)(x + 4));
    } else {
        a0 = _mm256_maskload_epi64(SM_AT(x, 0), sm_mask4q(nv, 0));
        a1 = _mm256_maskload_epi64(SM_AT(x, 4), sm_mask4q(nv, 4));
    }
    __m256i s = _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3));
    __m256i t = _mm256_or_si256(
        _mm256_or_si256(_mm256_add_epi64(a0, bias), _mm256_add_epi64(a1, bias)),
        _mm256_or_si256(_mm256_add_epi64(a2, bias), _mm256_add_epi64(a3, bias)));
    /* x + 2^59 in [0, 2^60): its top 4 bits are 0 */
    t = _mm256_srli_epi64(t, 60);
    if (!_mm256_testz_si256(t, t)) return 0;
    __m128i h = _mm_add_epi64(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    *out = _mm_cvtsi128_si64(_mm_add_epi64(h, _mm_unpackhi_epi64(h, h)));
    return 1;
}

/* int32, n in 8..16 (exact): elements 0-7 sign-extended to 64-bit lanes as they are loaded,
 * the masked 8..15 widened in-lane (unpacked with their signs: no lane-crossing shuffle) */
static inline int64_t small_sum_i32(const int32_t *x, size_t n)
{
    __m256i b = _mm256_maskload_epi32((const int *)(x + 8), ridge_avx2_tail_mask(n - 8));
    __m256i sb = _mm256_srai_epi32(b, 31);
    __m256i s = _mm256_add_epi64(
        _mm256_add_epi64(_mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)x)),
                         _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)(x + 4)))),
        _mm256_add_epi64(_mm256_unpacklo_epi32(b, sb), _mm256_unpackhi_epi32(b, sb)));
    __m128i h = _mm_add_epi64(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    return _mm_cvtsi128_si64(_mm_add_epi64(h, _mm_unpackhi_epi64(h, h)));
}

/* int32 min / max of n in 8..16: four overlapping 4-lane loads (min/max are idempotent) */
#define SM_MINMAX_I32(name, op)                                                                    \
    static inline int32_t name(const int32_t *x, size_t n)                                        \
    {                                                                                              \
        __m128i a = _mm_loadu_si128((const __m128i *)x);                                           \
        __m128i b = _mm_loadu_si128((const __m128i *)(x + 4));                                     \
        __m128i c = _mm_loadu_si128((const __m128i *)(x + n - 8));                                 \
        __m128i d = _mm_loadu_si128((const __m128i *)(x + n - 4));                                 \
        a = op(op(a, b), op(c, d));                                                                \
        a = op(a, _mm_shuffle_epi32(a, 0x4e));                                                     \
        return _mm_cvtsi128_si32(op(a, _mm_shuffle_epi32(a, 0xb1)));                               \
    }
SM_MINMAX_I32(small_min_i32, _mm_min_epi32)
SM_MINMAX_I32(small_max_i32, _mm_max_epi32)
#undef SM_MINMAX_I32
