/* Public shape validation of GEMM and convolution. Sizes come from the input as raw 64-bit
 * words, so values near SIZE_MAX and products that overflow are common. The harness computes
 * what each buffer would need (with overflow checks of its own):
 *   - if a need overflows, the call gets 1-float buffers: the library must refuse it (any
 *     access past the buffer is an ASan report, i.e. a finding);
 *   - if every need is small, the call runs on exact-size buffers (ASan checks the bounds);
 *   - otherwise (huge but representable) the call is skipped: it could not be allocated. */
#include "fuzz.h"
#include "ridge/conv.h"
#include "ridge/core.h"
#include "ridge/gemm.h"

#define SMALL ((size_t)1 << 16) /* floats per buffer the harness allocates */

static ridge_ctx *ctx;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    ridge_ctx_options o;
    ridge_ctx_options_init(&o);
    o.threads = 1;
    if (ridge_ctx_create(&o, &ctx)) abort();
    return 0;
}

/* Elements a rows x cols matrix with leading dimension ld spans; SIZE_MAX if it overflows. */
static size_t span(size_t rows, size_t cols, size_t ld)
{
    if (!rows || !cols) return 0;
    size_t r;
    if (__builtin_mul_overflow(rows - 1, ld, &r) || __builtin_add_overflow(r, cols, &r))
        return SIZE_MAX;
    return r;
}

/* A size from 8 input bytes, mostly small: the top bit of the first byte picks a raw word. */
static size_t take_size(const uint8_t **p, size_t *n)
{
    uint64_t v = fuzz_take(p, n, 8);
    return (v & 1) ? (size_t)(v >> 1 | (uint64_t)1 << 63) - (size_t)(v >> 56 & 0x7f)
                   : (size_t)(v >> 1 & 0x3f);
}

static float *buffer(size_t need)
{
    float *b = malloc((need ? need : 1) * sizeof(float));
    if (!b) abort();
    for (size_t i = 0; i < need; i++) b[i] = (float)(i % 7) - 3;
    return b;
}

static void fuzz_gemm(const uint8_t *p, size_t n)
{
    int ta = (int)fuzz_take(&p, &n, 1), tb = ta >> 1 & 1;
    ta &= 1;
    size_t m = take_size(&p, &n), nn = take_size(&p, &n), k = take_size(&p, &n);
    size_t lda = take_size(&p, &n), ldb = take_size(&p, &n), ldc = take_size(&p, &n);
    size_t na = ta ? span(k, m, lda) : span(m, k, lda);
    size_t nb = tb ? span(nn, k, ldb) : span(k, nn, ldb);
    size_t nc = span(m, nn, ldc);
    static float dummy[1];
    if (na == SIZE_MAX || nb == SIZE_MAX || nc == SIZE_MAX) {
        (void)ridge_sgemm(ctx, ta ? RIDGE_TRANS : RIDGE_NO_TRANS, tb ? RIDGE_TRANS : RIDGE_NO_TRANS,
                          m, nn, k, 1.0f, dummy, lda, dummy, ldb, 0.5f, dummy, ldc);
        return;
    }
    if (na > SMALL || nb > SMALL || nc > SMALL) return;
    float *a = buffer(na), *b = buffer(nb), *c = buffer(nc);
    (void)ridge_sgemm(ctx, ta ? RIDGE_TRANS : RIDGE_NO_TRANS, tb ? RIDGE_TRANS : RIDGE_NO_TRANS, m,
                      nn, k, 1.0f, a, lda, b, ldb, 0.5f, c, ldc);
    free(a), free(b), free(c);
}

static void fuzz_conv(const uint8_t *p, size_t n)
{
    ridge_conv2d_desc d;
    ridge_conv2d_desc_init(&d);
    int64_t *f[] = {&d.n, &d.c_in, &d.h, &d.w, &d.c_out, &d.r, &d.s, &d.stride_h, &d.stride_w,
                    &d.dil_h, &d.dil_w, &d.pad_top, &d.pad_bottom, &d.pad_left, &d.pad_right,
                    &d.groups};
    for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
        uint64_t v = fuzz_take(&p, &n, 2);
        /* mostly small values; a set top bit makes the field a raw 64-bit word instead */
        *f[i] = (v & 0x8000) ? (int64_t)(fuzz_take(&p, &n, 8)) : (int64_t)(v & 0x1f);
    }
    d.layout = (ridge_layout)(fuzz_take(&p, &n, 1) % 4); /* 3 is not a layout */
    int algo = (int)(fuzz_take(&p, &n, 1) % (RIDGE_CONV_ALGO_COUNT + 1)) - 1;
    int64_t oh, ow;
    (void)ridge_conv2d_flops(&d);
    for (int l = 0; l < 3; l++) (void)ridge_tensor_elems((ridge_layout)l, d.n, d.c_in, d.h, d.w);
    if (ridge_conv2d_desc_check(&d, &oh, &ow) != RIDGE_OK) return;
    size_t nx = ridge_tensor_elems(d.layout, d.n, d.c_in, d.h, d.w);
    size_t ny = ridge_tensor_elems(d.layout, d.n, d.c_out, oh, ow);
    size_t nw = ridge_tensor_elems(RIDGE_NCHW, d.c_out, d.c_in / d.groups, d.r, d.s);
    if (!nx || !ny || !nw) abort(); /* a checked descriptor whose tensors overflow */
    if (nx > SMALL || ny > SMALL || nw > SMALL || ridge_conv2d_flops(&d) > 2e6) return;
    float *x = buffer(nx), *w = buffer(nw), *y = buffer(ny);
    float *bias = buffer((size_t)d.c_out);
    ridge_conv2d_plan_options o;
    ridge_conv2d_plan_options_init(&o);
    o.algo = (ridge_conv_algo)algo;
    ridge_conv2d_plan *plan = NULL;
    if (ridge_conv2d_plan_create(ctx, &d, w, &o, &plan) == RIDGE_OK) {
        (void)ridge_conv2d_forward(ctx, plan, x, y, bias, NULL, NULL);
        ridge_conv2d_plan_destroy(plan);
    }
    free(x), free(w), free(y), free(bias);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size) return 0;
    if (data[0] & 1) fuzz_gemm(data + 1, size - 1);
    else fuzz_conv(data + 1, size - 1);
    return 0;
}
