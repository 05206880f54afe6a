/* The public SGEMM entry points: argument validation, the mapping of transposes to strides,
 * and dispatch to the path that suits the shape and the context's ISA. */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "gemm/gemm-internal.h"

/* ---- validation ------------------------------------------------------------------------------ */

/* Sizes above this are a negative int converted to size_t, or absurd. */
#define GEMM_SIZE_MAX (SIZE_MAX / 2)

static ridge_status check_size(const char *fn, const char *what, size_t v)
{
    if (v > GEMM_SIZE_MAX)
        return ridge_error(RIDGE_EINVAL, "%s: %s (%zu) is negative or too large", fn, what, v);
    return RIDGE_OK;
}

/* A stored rows x cols matrix with leading dimension ld: checks ld >= max(1, cols), that its
 * extent (rows - 1) * ld + cols (in floats, returned) fits in bytes, and that ptr is set when
 * `used`. */
static ridge_status check_matrix(const char *fn, const char *name, const void *ptr, int used,
                                 size_t rows, size_t cols, const char *cols_name, size_t ld,
                                 const char *ld_name, size_t *extent)
{
    *extent = 0;
    ridge_status st = check_size(fn, ld_name, ld);
    if (st) return st;
    if (ld < cols || ld == 0)
        return ridge_error(RIDGE_EINVAL, "%s: %s (%zu) < %s (%zu) (must be >= max(1, %s))", fn,
                           ld_name, ld, cols_name, cols, cols_name);
    if (rows && cols) {
        size_t span;
        if (__builtin_mul_overflow(rows - 1, ld, &span) ||
            __builtin_add_overflow(span, cols, extent) || *extent > GEMM_SIZE_MAX / sizeof(float))
            return ridge_error(RIDGE_EINVAL, "%s: %s spans more than the address space (%zu rows, %s %zu)",
                               fn, name, rows, ld_name, ld);
    }
    if (used && !ptr) return ridge_error(RIDGE_EINVAL, "%s: %s is NULL", fn, name);
    return RIDGE_OK;
}

/* `batch` matrices `stride` floats apart, each spanning `extent`. */
static ridge_status check_batch(const char *fn, const char *name, size_t batch, size_t stride,
                                size_t extent)
{
    ridge_status st = check_size(fn, "batch stride", stride);
    if (st || batch <= 1 || extent == 0) return st;
    size_t span, total;
    if (__builtin_mul_overflow(batch - 1, stride, &span) ||
        __builtin_add_overflow(span, extent, &total) || total > GEMM_SIZE_MAX / sizeof(float))
        return ridge_error(RIDGE_EINVAL, "%s: the %zu %s matrices span more than the address space",
                           fn, batch, name);
    return RIDGE_OK;
}

static ridge_status check_trans(const char *fn, const char *name, ridge_trans t)
{
    if (t != RIDGE_NO_TRANS && t != RIDGE_TRANS)
        return ridge_error(RIDGE_EINVAL, "%s: %s (%d) is neither RIDGE_NO_TRANS nor RIDGE_TRANS",
                           fn, name, (int)t);
    return RIDGE_OK;
}

static ridge_status check_epilogue(const char *fn, const ridge_epilogue *e, size_t batch,
                                   size_t m, size_t n)
{
    if (e->bias_kind != RIDGE_BIAS_NONE && e->bias_kind != RIDGE_BIAS_COL &&
        e->bias_kind != RIDGE_BIAS_ROW)
        return ridge_error(RIDGE_EINVAL, "%s: epilogue bias_kind (%d) is unknown", fn,
                           (int)e->bias_kind);
    if (e->bias_kind != RIDGE_BIAS_NONE && !e->bias && m && n)
        return ridge_error(RIDGE_EINVAL, "%s: epilogue bias is NULL but bias_kind is %s", fn,
                           e->bias_kind == RIDGE_BIAS_COL ? "COL" : "ROW");
    if (e->bias_kind == RIDGE_BIAS_NONE && e->bias)
        return ridge_error(RIDGE_EINVAL, "%s: epilogue bias is set but bias_kind is NONE", fn);
    if ((unsigned)e->act > RIDGE_EPI_TANH)
        return ridge_error(RIDGE_EINVAL, "%s: epilogue act (%d) is unknown", fn, (int)e->act);
    if (e->residual) {
        size_t ext;
        ridge_status st = check_matrix(fn, "residual", e->residual, 1, m, n, "n", e->ldr,
                                       "ldr", &ext);
        if (!st) st = check_batch(fn, "residual", batch, e->residual_stride, ext);
        if (st) return st;
    }
    return RIDGE_OK;
}

/* ---- blocking -------------------------------------------------------------------------------- */

static size_t test_kc, test_mc, test_nc;

void ridge_gemm_set_blocking_for_tests(size_t kc, size_t mc, size_t nc)
{
    test_kc = kc, test_mc = mc, test_nc = nc;
}

/* B read in place rather than packed: row-major B and A with at most max_m rows (the
 * kernel's inplace_b_max_m), since packing costs a pass over B from L3 or DRAM
 * (gemm-internal.h). But not when B's rows are a multiple of 4 KiB apart (N = 1024, 2048,
 * 3072...) and A has 64 rows or more: the rows of a micro-panel then all fall into one L1 set
 * (4 KiB is one way of L1 on every x86 core ridge meets), which holds 8-12 lines, so the lines
 * fetched ahead evict each other before the kernel reads them. Packed on Zen 5
 * (scripts/gemm-ab.c, 1 thread, NN): 256 x 3072 x 768 1.33x, 256 x 2048 x 768 1.41x,
 * 64 x 4096 x 512 1.11x; N = 768, 1280, 1536 and 2304 (rows over 2-4 sets) gained nothing
 * (0.92-1.00x), and with 32 rows or fewer packing did not pay (32 x 1024 x 784 0.68x). */
/* Rows rs floats apart fall into the same L1 sets: a multiple of 4 KiB */
static int rows_alias(size_t rs) { return rs * sizeof(float) % 4096 == 0; }

static int b_in_place(const gemm_problem *p, size_t max_m)
{
    return p->b_cs == 1 && p->m <= max_m && !(rows_alias(p->b_rs) && p->m >= 64);
}

/* The tile and thread-split rules measured on Intel cores only */
static int cpu_is_intel(const ridge_ctx *ctx)
{
    return ridge_cpu_vendor_is_intel(ridge_ctx_cpu(ctx)->vendor);
}

/* The micro-kernel of an ISA for product p (NULL: a large product with B packed); nr32: only
 * the tiles of 32 columns, which read the panels of a plan. AVX-512 has three tiles
 * (f32-gemm-avx512.c). On Intel cores: 6 x 64 for 256 rows or more with B packed (squares
 * 1.04-1.08x 14 x 32, the GPT-2 dW shapes 1.05-1.17x, the 256-row GPT-2 shapes whose B is
 * packed 0.97-1.09x on 1 thread and 1.02-1.08x on 2; with B read in place 0.96-0.97x), else
 * 14 x 32 for 48 rows or more (1.07-1.14x 8 x 32; with fewer rows its short edge tiles cost
 * more than the taller tile saves: 32 x 128 x 784 NN ran 0.87x, 48 rows 1.03-1.06x, 64 rows
 * 1.08-1.10x), else 8 x 32. Elsewhere (AMD's Zen 4 and Zen 5) 8 x 32 where B is packed, which
 * no other tile beat on the large shapes there, but 6 x 64 in three cases:
 * - a short reduction (k <= SHORT_K_MAX, or k <= SHORT_K_ROWS_MAX with A's rows contiguous in
 *   k), where a tile's fixed cost (zeroing, storing, the k loop's entry) is a large share and
 *   6 x 64 has half as many tiles;
 * - fewer than 48 rows with B in place where 6-row tiles pad m less than 8-row ones (m = 2-6,
 *   9-12, 17, 18...), where each row of B (a few lines) feeds more FMAs;
 * - 48 rows or more with B in place, whose rows are ldb apart: each k step of a tile reads B
 *   from another row, and 6 x 64 issues 24 FMAs per row it reads where 8 x 32 issues 16, with
 *   6 loads of A per 24 FMAs instead of 8 per 16. (Why that pays was not isolated; the gap
 *   grew when this VM's host was busy, 8 x 32 falling to 145-170 GFLOP/s where 6 x 64 held
 *   170-195.)
 * On Zen 5 (scripts/gemm-ab-small.c, warm, 1 thread; 2 threads in brackets): 64 x 128 x 10
 * NN 1.12x (1.13x), 64 x 128 x 32 1.09x, 256 x 3072 x 16 1.13x (1.14x), 1024 x 1024 x 16
 * 1.14x (0.96-1.01x), 5 x 768 x 768 1.16x (1.36x), 10 x 128 x 784 1.36x (1.34x), 12 x 768
 * x 768 1.15x, 18 x 768 x 768 1.21x (1.22x), 42 x 768 x 768 (2 threads) 1.07x; 10 x 128 x 64
 * TN 1.13x and 12 x 768 x 256 TN 1.20x (ridge_gemm_set_tile_for_tests). Not where 8-row tiles
 * fit (8 x 3072 x 768 NN 0.80x, 8 x 128 x 784 TN 0.79x, 32 x 128 x 784 0.95x), nor for A^T
 * with k 64 (128 x 784 x 64 TN 0.95x, 512 x 256 x 64 TN 0.97-1.03x), nor with B packed and k
 * past 128 (256 x 768 x 768 NT 0.99x, 256 x 3072 x 768 NT 0.97x, 256 x 768 x 3072 NT 0.97x).
 * From 48 rows in place and for k 64-128 (session 29, the same probe, rounds rotating the
 * tiles' order, 6 x 64 over 8 x 32): 64 x 3136 x 64 NN 1.05-1.14x (2 threads 0.99x), 48 x
 * 3136 x 64 1.06-1.12x, 64 x 3136 x 576 1.02-1.11x (1.15x), 256 x 768 x 768 1.02-1.09x
 * (1.10x), 256 x 768 x 3072 1.18x (1.19x), 256 x 2304 x 768 1.16x, 256 x 50304 x 768 1.06x,
 * 100 x 1000 x 500 1.03-1.09x, 64 x 128 x 784 1.07x (1.04x), 128 x 64 x 784 1.12x, 256 x 768
 * x 768 TN 1.08x; 1024 x 1024 x 64 NN 1.03-1.04x, 1024 x 1024 x 128 1.03x, 3136 x 64 x 64
 * 1.02x, 256 x 768 x 128 NT 1.03x, 1024 x 1024 x 64 NT 1.04x, 512 x 512 x 96 NT 1.045x.
 * The 32-column tiles pack B alike, so one plan serves both, and every tile sums each
 * element's k products in the same order: the bits do not depend on the tile.
 * Not 6 x 64 where its panels pad n more than 32-column ones do (n mod 64 in 1..32): 14 x 32
 * there ran 256 x 96 x 784 NT 1.46x, 256 x 160 x 768 NT 1.29x, 1024 x 96 x 1024 NN 1.18x,
 * 256 x 784 x 784 NT 1.02x (scripts/gemm-ab-small.c, 1 thread, Intel Xeon). But 6 x 64 for
 * fewer than 48 rows with B read in place, against 8 x 32: 3 x 512 x 784 NN 1.33x, 5 x 768 x
 * 768 1.20x, 16 x 3072 x 768 1.07-1.13x, 47 x 768 x 768 1.12x, 32 x 128 x 784 1.03-1.05x, 32
 * x 768 x 768 1.00x (2 threads 1.01-1.03x); with B packed it lost (16 x 512 x 200 NT 0.89x,
 * 32 x 768 x 128 NT 0.95x). From 48 to 79 rows in place, against 14 x 32, it won where its
 * row tiles pad m less (64 x 3136 x 64 1.02x, from a cold L2 1.065x; 64 x 3136 x 576 1.02-
 * 1.04x; 48, 60, 72 x 768 x 768 1.03-1.06x) and lost where 14 x 32's do (56 and 70 x 768 x
 * 768 0.95x, 0.96x); from 80 rows on it did not win (96 0.98x, 128 0.95x). */
/* Columns that padding n to a multiple of nr adds */
static size_t pad_to(size_t n, size_t nr) { return (n + nr - 1) / nr * nr - n; }
#define TALL_TILE_MIN_M 48
#define SHORT_K_MAX 32
#define SHORT_K_ROWS_MAX 128
#define WIDE_TILE_MIN_M 256
#define WIDE_IN_PLACE_MAX_M 80
static int test_tile;

void ridge_gemm_set_tile_for_tests(int mr) { test_tile = mr; }

static const gemm_kernel *select_kernel(const ridge_ctx *ctx, ridge_isa isa,
                                        const gemm_problem *p, int nr32)
{
    switch (isa) {
    case RIDGE_ISA_AVX512: {
        const gemm_kernel *wide = &ridge_gemm_kernel_6x64_avx512;
        const gemm_kernel *tall = &ridge_gemm_kernel_14x32_avx512;
        const gemm_kernel *base = &ridge_gemm_kernel_8x32_avx512;
        if (test_tile) return test_tile == 6 && !nr32 ? wide : test_tile == 14 ? tall : base;
        const size_t m = p ? p->m : SIZE_MAX;
        const int pads_less = !(p && pad_to(p->n, 64) > pad_to(p->n, 32));
        const int in_place = p && b_in_place(p, wide->inplace_b_max_m);
        if (!cpu_is_intel(ctx)) {
            /* B in place: from 48 rows, or fewer where 6-row tiles pad m less than 8-row ones */
            const int rows = in_place && (m >= TALL_TILE_MIN_M || pad_to(m, 6) < pad_to(m, 8));
            const int short_k = p && (p->k <= SHORT_K_MAX ||
                                      (p->k <= SHORT_K_ROWS_MAX && p->a_cs == 1));
            return !nr32 && pads_less && (rows || short_k) ? wide : base;
        }
        const int wide_rows = m >= WIDE_TILE_MIN_M ? !in_place
                              : m < TALL_TILE_MIN_M ? in_place
                              : m < WIDE_IN_PLACE_MAX_M && in_place && pad_to(m, 6) < pad_to(m, 14);
        if (!nr32 && pads_less && wide_rows) return wide;
        return m >= TALL_TILE_MIN_M ? tall : base;
    }
    case RIDGE_ISA_AVX2: return &ridge_gemm_kernel_avx2;
    default: return NULL;
    }
}

/* KC: the depth of a block, the same for every block of a product, and as deep as the
 * kernel's C tile wants: each block ends with a read-modify-write of the MR x NR tile of C,
 * whose rows (ldc apart, often a multiple of 4 KiB) crowd into a few L1 sets, so a deeper
 * block pays for it over more FMAs. At most KC_MAX, and the k range split evenly (K = 784:
 * two blocks of 392, not 768 + 16). The B micro-panel (KC x NR) then streams from L2 rather
 * than staying in L1; on Zen 4 that costs nothing measurable, the C updates did: at 2048^3,
 * KC 768 ran 1.05-1.07x KC 256 with the AVX-512 kernel (1.03x with the AVX2 one, against
 * its previous 384), 1.02-1.06x on the GPT-2 and conv shapes (scripts/gemm-ab.c). The
 * blocks fix the summation order, so they depend on the shape only (k, and whether B is
 * packed), never on the thread count: results do not depend on it. */
#define KC_MAX 768
/* B read in place: blocks of at most 512. Its micro-panel is KC rows ldb apart, re-read from
 * L2 by every tile of the MC rows; shallower blocks ran faster on Zen 5 (scripts/gemm-ab.c, 1
 * thread): 256 x 768 x 50304 NN 1.035-1.07x, 256 x 768 x 2304 NN 1.045x, while the packed
 * shapes moved within 1% (2048^3 0.99x, 1024^3 1.01x, the GPT-2 NT rows 1.00x). */
#define KC_MAX_IN_PLACE 512
static size_t blocking_kc(size_t k, size_t kc_max)
{
    if (test_kc) return test_kc;
    size_t blocks = RIDGE_MAX((k + kc_max - 1) / kc_max, 1);
    size_t kc = (k + blocks - 1) / blocks;
    return RIDGE_MAX((kc + 7) & ~(size_t)7, 8u);
}

/* MC: the packed A block (MC x KC) takes 3/10 of the private L2, leaving room for the B
 * panels streaming through it and for C (102 rows on Zen 3; smaller blocks measured better
 * than half of L2). When B is packed and all of A's rows fit in 2/5 of the L2 (273 rows at
 * KC 768 in 2 MiB; 136 in Zen's 1 MiB), one block of all of them: each B panel is then packed
 * just before its tiles into one panel-sized buffer that stays in cache (driver_block),
 * instead of into the KC x NC block, whose lines (6 MiB at KC 768) each cost a read before
 * the write, went out to L3 and were read back from there by the second block of rows. On an
 * Intel Xeon (2 MiB L2; scripts/gemm-ab.c, 1 thread): the GPT-2 NT shapes with 256 rows
 * 1.07-1.16x, 768 x 3072 x 256 TN 1.10x, 256 x 3072 x 768 NN (B aliased, so packed) 1.08x; on
 * 2 threads 1.03-1.17x. With a single k block, up to 4/5 of the L2: on Zen 5 (1 MiB) that
 * takes the GPT-2 shapes' 256 x 768 A blocks (768 KiB), 1 thread 256 x 768 x 768 NT 1.06x,
 * 256 x 2304 x 768 NT 1.05x, 256 x 3072 x 768 NT 1.02x, NN 1.03x, 256 x 50304 x 768 NT 1.02x,
 * 768 x 3072 x 256 TN 1.01x, 384 x 4096 x 512 NT 1.03x (2 threads 1.01-1.05x); with several
 * k blocks, whose later blocks read C back, it lost (256 x 768 x 2304 NN 0.985x, 256 x 768 x
 * 50304 NN 0.995x, MC forced to 256). Not measured on Intel, where 4/5 of 2 MiB takes up to
 * 512 rows at KC 768. */
static size_t blocking_mc(const gemm_kernel *K, const ridge_cpu *cpu, size_t kc, size_t m,
                          size_t k, int pack_b)
{
    size_t mr = (size_t)K->mr;
    size_t l2 = cpu->l2 ? cpu->l2 : 262144;
    size_t mc = test_mc ? test_mc : l2 * 3 / 10 / (kc * sizeof(float));
    /* B packed and all of A's rows within 2/5 of the L2 (4/5 with one k block): one block
     * of rows (driver_init) */
    const size_t m_pad = (m + mr - 1) / mr * mr;
    const size_t share = k <= kc ? l2 * 4 / 5 : l2 * 2 / 5;
    if (pack_b && !test_mc && m_pad * kc * sizeof(float) <= share) mc = RIDGE_MAX(mc, m_pad);
    return RIDGE_MAX(mc / mr, 1) * mr;
}

/* NC: the packed B block (KC x NC) takes three times the private L2, and at most half of this
 * thread's share of the usable L3. A block sized from the whole L3 (6-12 MiB here) ran slower:
 * it is streamed once per MC rows, and a shared L3 (other cores, other tenants of a VM) keeps
 * less of it, and it outgrows the L2 TLB's reach. On Zen 3, NC 1024 instead of 4096-8192
 * (scripts/gemm-ab.c): 4096^3 1.09x, 2048^3 1.04x, 256x50304x768 NT 1.17x, 256x3072x768 NT
 * 1.09x; NC 512, 768 and 1536 were slower than 1024. */
static size_t blocking_nc(const gemm_kernel *K, const ridge_cpu *cpu, size_t kc, int threads)
{
    size_t nr = (size_t)K->nr;
    size_t l2 = cpu->l2 ? cpu->l2 : 262144;
    size_t l3 = cpu->l3_usable ? cpu->l3_usable : 4u << 20;
    size_t nc = RIDGE_MIN(3 * l2, l3 / 2 / (size_t)threads) / (kc * sizeof(float));
    nc = test_nc ? test_nc : RIDGE_MIN(nc, 8192u);
    return RIDGE_MAX(nc / nr, 1) * nr;
}

/* A read in place by the micro-kernel instead of packed, where C has few columns: packing A
 * is a pass over it per k block (for A in rows, a third of its loads feed the transposes),
 * which only the column panels that reuse the packed block repay. In place, each tile
 * broadcasts from A's MR rows (NN, NT: MR row streams contiguous in k) or from one line per
 * k step (TN, TT: MR adjacent floats of each row of A^T); with few panels that won, with many
 * the packed panel's single stream did (Intel Xeon, scripts/gemm-ab-small.c and gemm-ab.c, 1
 * thread, A in place over packed):
 * - rows contiguous in k, up to 4 panels: 32 x 128 x 784 NN 1.08x (2 threads 1.22x, from a
 *   cold L2 1.09x), 64 x 128 x 784 1.12x, 256 x 64 x 256 NN (attention's A V) 1.16x, 256 x
 *   128 x 784 NT 1.11x, 32 x 256 x 784 1.04x; 96 and 200 x 128 x 784 (14 x 32) 1.05x; the AVX2
 *   tile 1.09-1.12x; past that, 32 x 512 x 784 1.01x, 200 x 256 x 784 (8 panels of 32)
 *   0.98x, 256 x 768 x 768 0.92x, 64 x 3136 x 64 0.90x;
 * - A^T, up to two panels (64 columns on the 32-column tiles): 576 x 64 x 3136 TN (a
 *   convolution's weight gradient, where packing A^T took 39% of the time) 1.20x, 2 threads
 *   1.15x, 200 x 64 x 784 1.29x, 96 x 64 x 1000 1.29x; at 128 columns 0.96-1.07x, at 256
 *   0.91-0.97x. Not with the AVX2 tile, whose 16 columns give each line of A^T 6 FMAs, not 24:
 *   0.98-1.04x. With the 6 x 64 tile, its two panels are 128 columns (Zen 5, session 29, A^T in
 *   place over packed, 1 thread): 10 x 128 x 64 TN (a 10-class layer's weight gradient) 1.16x (2
 *   threads 1.16x), 5 x 128 x 64 1.16x, 12 x 128 x 64 1.10x, 10 x 128 x 256 1.12x, 18 x 128 x 128
 *   1.11x, 128 x 128 x 784 1.16x, 256 x 128 x 256 1.15x; 8 x 32 at 128 columns lost there (16 x
 *   128 x 64 0.88x, 32 x 128 x 64 0.94x). */
#define A_DIRECT_MAX_PANELS 4
#define A_DIRECT_T_MAX_PANELS 2
static int test_a_direct;

void ridge_gemm_set_a_direct_for_tests(int mode) { test_a_direct = mode; }

static int a_direct(const gemm_problem *p, const gemm_kernel *K)
{
    if (!p->a_cs || test_a_direct < 0) return 0; /* a_cs 0 tells the kernel "packed" */
    if (test_a_direct > 0) return 1;
    if (p->a_cs == 1) return p->n <= A_DIRECT_MAX_PANELS * (size_t)K->nr;
    return K->nr >= 32 && p->n <= A_DIRECT_T_MAX_PANELS * (size_t)K->nr;
}

/* Up to this many floats of B per k block (256 KiB), a product whose A and B are both read in
 * place runs the kernel's own loop over its tiles, once per k block (gemm_kernel.block): B's
 * panel is in L1 or L2 after its first tile, so the tiles need no share of the next panel to
 * prefetch, and the driver no work per tile. On Zen 5 (scripts/gemm-ab-small.c, warm, 1
 * thread, over the five loops): 64 x 128 x 10 NN 1.12x, 64 x 32 x 10 1.20x, 64 x 256 x 64
 * 1.11x, 128 x 128 x 128 1.07x, 64 x 128 x 128 TN 1.13x, 40 x 64 x 400 TN 1.09x, 256 x 64 x
 * 256 1.04x, 10 x 128 x 64 TN 1.00-1.02x; with B past 256 KiB in one block 0.99-1.03x (64 x
 * 256 x 512, 32 x 256 x 512); 2 threads 1.00-1.07x; the AVX2 tile 1.00-1.02x. With k in
 * several blocks: 32 x 128 x 784 NN 1.03-1.06x (2 threads 1.05-1.07x), 8 x 128 x 784
 * 1.10-1.24x, 24 x 64 x 2000 1.13x, 128 x 64 x 784 1.01-1.02x (2 threads 1.04x), 64 x 128 x
 * 1024 TN 1.03x (2 threads 1.03-1.06x); AVX2 0.99-1.04x. */
#define GEMM_BLOCK_MAX_B 65536

/* ---- the packed path: five loops around the micro-kernel ------------------------------------- */

typedef struct gemm_driver {
    const gemm_problem *p;
    const gemm_kernel *K;
    size_t kc, mc, nc;
    int pack_b;          /* 0: B is read in place (unit column stride) */
    int panel_b;         /* B packed one panel at a time into one panel's buffer (one ic block) */
    int a_direct;        /* A read in place by the micro-kernel, not packed (a_direct()) */
    int no_aliased_pf;   /* no prefetch of B's next panel for packing when its rows alias */
    int block;           /* A and B in place, B's k blocks small: gemm_kernel.block */
    const float *bplan;  /* prepacked B (k blocks of kc rows, each npad columns), or NULL */
    size_t plan_npad;
    float *scratch;      /* per thread: A block, then B block (or panel) */
    size_t per_thread;   /* floats */
} gemm_driver;

/* t (bias_kind and ldr set from p) at the tile of row i, column j */
static void tile_params(const gemm_problem *p, size_t i, size_t j, gemm_tile_params *t)
{
    gemm_tile_at(t, p->epi.bias, p->epi.residual, i, j);
}

/* C = acc or C + acc for a k block with t's beta and last: nothing else to apply. */
static int tile_plain(const gemm_problem *p, const gemm_tile_params *t)
{
    return p->alpha == 1.0f && (t->beta == 0.0f || t->beta == 1.0f) &&
           (!t->last || (p->epi.bias_kind == RIDGE_BIAS_NONE && p->epi.act == RIDGE_EPI_NONE &&
                         !p->epi.residual));
}

/* The lines of a region (rows x len floats, rows rs apart) shared among the nt tiles of a
 * panel, each prefetching its share over its kc steps; worked out once per panel, so that a
 * tile costs no division unless its share is the short last one (a small product's tiles
 * are a few hundred cycles). */
typedef struct prefetch_plan {
    const float *base;
    size_t rs, len, lpr, total, per, step, kc;
} prefetch_plan;

static prefetch_plan prefetch_split(const float *base, size_t rows, size_t len, size_t rs,
                                    size_t nt, size_t kc)
{
    prefetch_plan pp = {.base = base};
    if (!base) return pp;
    pp.rs = rs, pp.len = len, pp.kc = kc;
    pp.lpr = (len + GEMM_LINE_FLOATS - 1) / GEMM_LINE_FLOATS, pp.total = rows * pp.lpr;
    pp.per = (pp.total + nt - 1) / nt;
    pp.step = RIDGE_MAX(kc / RIDGE_MAX(pp.per, 1), 1);
    return pp;
}

/* Tile q's share (none without a region) */
static gemm_prefetch prefetch_share(const prefetch_plan *pp, size_t q)
{
    gemm_prefetch f = {0};
    const size_t first = q * pp->per;
    if (!pp->base || first >= pp->total) return f;
    f.row = pp->base + first / pp->lpr * pp->rs;
    f.off = first % pp->lpr * GEMM_LINE_FLOATS;
    f.rs = pp->rs, f.len = pp->len;
    f.lines = RIDGE_MIN(pp->per, pp->total - first);
    f.step = f.lines == pp->per ? pp->step : RIDGE_MAX(pp->kc / f.lines, 1);
    return f;
}

/* C[i0:i1, j0:j1], one thread's contiguous block (micro-tile aligned). Loop order (BLIS):
 * jc over NC columns (B block in L3), pc over KC, ic over MC rows (pack A, in L2, unless
 * a_direct: then the tiles read it in place), jr over NR
 * (B micro-panel), ir over MR (the micro-kernel). A packed B block is packed a panel at a
 * time in the first ic block, just before its first tiles; those tiles prefetch the next
 * panel's source lines, so its packing reads L2 instead of waiting on L3 or DRAM (B read in
 * place gets the same prefetch in every ic block). With one ic block (panel_b) each panel is
 * packed into the same panel-sized buffer. */
static void driver_block(void *arg, size_t i0, size_t i1, size_t j0, size_t j1, int ith)
{
    const gemm_driver *d = arg;
    const gemm_problem *p = d->p;
    const gemm_kernel *K = d->K;
    const size_t MR = (size_t)K->mr, NR = (size_t)K->nr;
    /* A block (none with a_direct), then B's; no scratch at all when neither is packed */
    float *ap = d->per_thread ? d->scratch + (size_t)ith * d->per_thread : NULL;
    float *bp = ap && !d->a_direct ? ap + (d->mc + MR) * d->kc : ap;
    gemm_tile_params t = {.alpha = p->alpha, .bias_kind = p->epi.bias_kind, .act = p->epi.act,
                          .ldr = p->epi.ldr};
    for (size_t jc = j0; jc < j1; jc += d->nc) {
        size_t nc = RIDGE_MIN(d->nc, j1 - jc);
        for (size_t pc = 0; pc < p->k; pc += d->kc) {
            size_t kc = RIDGE_MIN(d->kc, p->k - pc);
            const float *bsrc = p->b + pc * p->b_rs + jc * p->b_cs, *bblk;
            size_t b_rs, b_step; /* rows apart; floats between two NR panels per column */
            int padded = 1;
            if (d->bplan) {
                bblk = d->bplan + pc * d->plan_npad + jc * kc;
                b_rs = NR, b_step = kc;
            } else if (d->pack_b) {
                bblk = bp;
                b_rs = NR, b_step = d->panel_b ? 0 : kc;
            } else {
                bblk = bsrc;
                b_rs = p->b_rs, b_step = 1, padded = 0;
            }
            t.beta = pc == 0 ? p->beta : 1.0f;
            t.last = pc + kc >= p->k;
            t.plain = tile_plain(p, &t);
            if (d->block) { /* the whole block of C (nc is all of it) by the kernel's loop */
                tile_params(p, i0, jc, &t);
                K->block(i1 - i0, nc, kc, p->a + i0 * p->a_rs + pc * p->a_cs, p->a_rs, p->a_cs,
                         bsrc, p->b_rs, p->c + i0 * p->ldc + jc, p->ldc, &t);
                continue;
            }
            for (size_t ic = i0; ic < i1; ic += d->mc) {
                size_t mc = RIDGE_MIN(d->mc, i1 - ic);
                const int pack_now = d->pack_b && ic == i0;
                if (!d->a_direct)
                    K->pack_a(mc, kc, p->a + ic * p->a_rs + pc * p->a_cs, p->a_rs, p->a_cs, ap);
                for (size_t jr = 0; jr < nc; jr += NR) {
                    size_t nr = RIDGE_MIN(NR, nc - jr);
                    const float *bpanel = bblk + jr * b_step;
                    if (pack_now)
                        K->pack_b(kc, nr, bsrc + jr * p->b_cs, p->b_rs, p->b_cs, bp + jr * b_step);
                    /* the next panel's source: kc rows of its columns (B row-major), or its
                     * columns' rows of kc floats (B^T row-major) */
                    const float *nx = NULL;
                    size_t nx_rows = 0, nx_len = 0, nx_rs = 0;
                    if (jr + NR < nc && (!padded || pack_now)) {
                        const size_t nx_nr = RIDGE_MIN(NR, nc - jr - NR);
                        nx = bsrc + (jr + NR) * p->b_cs;
                        if (p->b_cs == 1) nx_rows = kc, nx_len = nx_nr, nx_rs = p->b_rs;
                        else if (p->b_rs == 1) nx_rows = nx_nr, nx_len = kc, nx_rs = p->b_cs;
                        else nx = NULL;
                        /* On Intel not for packing rows a multiple of 4 KiB apart: their
                         * lines fall into a few L1 sets, where they evict each other and the
                         * tiles' own lines before the packing comes (Intel Xeon, without it:
                         * 256 x 3072 x 768 NN 1.07x, 2 threads 1.05x; 256 x 1024 x 1024 NT
                         * 1.03x). On Zen 5 the prefetch paid there too (with it: 256 x 3072 x
                         * 768 NN 1.05x, 256 x 768 x 3072 NT 1.02x). B read in place keeps it
                         * (0.80x without, where its rows do not alias). */
                        if (pack_now && d->no_aliased_pf && rows_alias(nx_rs)) nx = NULL;
                    }
                    const prefetch_plan pp =
                        prefetch_split(nx, nx_rows, nx_len, nx_rs, (mc + MR - 1) / MR, kc);
                    for (size_t ir = 0, q = 0; ir < mc; ir += MR, q++) {
                        size_t i = ic + ir, j = jc + jr;
                        tile_params(p, i, j, &t);
                        t.pf = prefetch_share(&pp, q);
                        const float *ai = d->a_direct ? p->a + i * p->a_rs + pc * p->a_cs
                                                      : ap + ir * kc;
                        K->ukernel(kc, ai, p->a_rs, d->a_direct ? p->a_cs : 0, bpanel, b_rs,
                                   padded, p->c + i * p->ldc + j, p->ldc, RIDGE_MIN(MR, mc - ir),
                                   nr, &t);
                    }
                }
            }
        }
    }
}

/* ---- splitting among threads ------------------------------------------------------------------ */

/* Below this many FLOPs per thread, waking another thread costs more than it saves. */
#define GEMM_MIN_FLOP_PER_THREAD 2e6
/* m == 1: the bytes of B per thread below which a second thread costs more than it saves. At
 * 128 KiB (2026-12-01, an earlier VM), 1 x 128 x 784 (401 KB) NT went from 56 to 95 GFLOP/s
 * on 2 threads; on the Zen 5 VM (a fork-join round trip of ~1 us, bench pool) 2 threads took
 * 2.9-3.1 us against 2.7-2.8 on 1 (NN 3.1-3.3 against 2.3-2.8), while 1 x 256 x 784 (802 KB)
 * still gained from them (1.0-1.4x; scripts/gemm-ab-small.c, 2 threads, session 31). */
#define GEMV_MIN_BYTES_PER_THREAD 262144.0

/* m == 1 with a row-major B (gemv_n): the k rows are summed in segments, each from zero, and
 * the segments' sums added in order: by one gemv_n call on one thread, or, when threads share
 * the segments, from rows of partial sums by gemv_sum, with the same bits. The count depends
 * on the shape only, so the bits do not depend on the thread count: a power of two, about one
 * segment per GEMV_MIN_BYTES_PER_THREAD of B, at most GEMV_SEG_MAX. Each thread's segments
 * are a contiguous share of B that stays in its core's L2 from call to call (halves of every
 * row instead, by columns, ran 0.8x on 1 x 128 x 784). */
#define GEMV_SEG_MAX 8
static size_t gemv_segments(const gemm_problem *p)
{
    if (p->m != 1 || p->b_cs != 1) return 1;
    const double bytes = (double)p->n * (double)p->k * sizeof(float);
    size_t s = 1;
    /* at least 8 rows a segment, none empty (ridge_partition's grain in gemv_n) */
    while (2 * s <= GEMV_SEG_MAX && 16 * s <= p->k && 2 * s * GEMV_MIN_BYTES_PER_THREAD <= bytes)
        s *= 2;
    return s;
}

static int useful_threads(const ridge_ctx *ctx, const gemm_problem *p)
{
    int t = ridge_ctx_threads(ctx);
    if (t == 1) return 1;
    double flop = 2.0 * (double)p->m * (double)p->n * (double)(p->k ? p->k : 1);
    double most = test_kc ? t : flop / GEMM_MIN_FLOP_PER_THREAD; /* tests: split everything */
    /* m == 1 with B^T: each thread reads whole rows of B^T at cache speed, so split by bytes
     * (a large layer's weights then stay half in each core's L2). Row-major B: by its k
     * segments (gemv_segments). */
    if (p->m == 1 && p->b_cs != 1 && !test_kc)
        most = (double)p->n * (double)p->k * sizeof(float) / GEMV_MIN_BYTES_PER_THREAD;
    if (p->m == 1 && p->b_cs == 1) most = (double)gemv_segments(p);
    return most < 1 ? 1 : most < t ? (int)most : t;
}

typedef struct split2d {
    size_t m, n, g0, g1;
    int p0, p1;
    ridge_range2d_fn fn;
    void *arg;
} split2d;

static void split2d_task(void *arg, int ith, int nth)
{
    const split2d *s = arg;
    size_t b0, e0, b1, e1;
    ridge_partition(s->m, s->g0, ith / s->p1, s->p0, &b0, &e0);
    ridge_partition(s->n, s->g1, ith % s->p1, s->p1, &b1, &e1);
    if (b0 < e0 && b1 < e1) s->fn(s->arg, b0, e0, b1, e1, ith);
}

/* Runs fn on nth contiguous blocks of the m x n output, a p0 x p1 grid on multiples of g0 x
 * g1 (micro-tiles). The grid maximizes the smaller block's area over perimeter, i.e. the
 * FLOPs per element packed: each thread packs the A rows and B columns (if b_packed) of its
 * own block. */
static void gemm_split_2d(ridge_ctx *ctx, int nth, size_t m, size_t n, size_t g0, size_t g1,
                          int b_packed, ridge_range2d_fn fn, void *arg)
{
    size_t u0 = (m + g0 - 1) / g0, u1 = (n + g1 - 1) / g1;
    split2d s = {m, n, g0, g1, 1, 1, fn, arg};
    /* B read in place is not packed: only A is, by every thread for its own rows. On AMD
     * cores rows are split first while each thread keeps at least 128 (Zen 4: 256 x 768 x 2304
     * and 512 x 768 x 768 at 2 threads 1.02-1.03x; with fewer, each thread would stream all of
     * B for a few row tiles, 64 x 3136 x 64 0.83x). On the Intel Xeon the columns, each thread
     * reading half of B, ran faster (`bench gemm --peers --threads 2 --filter dx`, against
     * oneDNN: qkv dx 0.94 against 0.88 by rows, lm_head dx 0.94 against 0.88). */
    const int rows_first = !b_packed && m >= 128 * (size_t)nth && !cpu_is_intel(ctx);
    double best = -1;
    for (int p0 = 1; p0 <= nth; p0++) {
        if (nth % p0 || (size_t)p0 > u0 || (size_t)(nth / p0) > u1) continue;
        double bm = (double)((u0 + p0 - 1) / p0 * g0), bn = (double)((u1 + nth / p0 - 1) / (nth / p0) * g1);
        double score = rows_first ? bn : bm * bn / (bm + bn);
        if (score > best) best = score, s.p0 = p0, s.p1 = nth / p0;
    }
    if (best < 0) { /* nth does not factor onto the tiles: fall back to the longer side */
        if (u0 >= u1) s.p0 = (int)RIDGE_MIN(u0, (size_t)nth), s.p1 = 1;
        else s.p1 = (int)RIDGE_MIN(u1, (size_t)nth), s.p0 = 1;
    }
    if (s.p0 * s.p1 == 1) fn(arg, 0, m, 0, n, 0);
    else ridge_parallel_run(ctx, s.p0 * s.p1, split2d_task, &s);
}

/* ---- the matrix-vector path (m == 1) --------------------------------------------------------- */

typedef struct gemv_job {
    const gemm_problem *p;
    const gemm_kernel *K;
    const float *a; /* contiguous copy of op(A) for gemv_t */
    gemm_tile_params t;
    size_t segs;    /* gemv_segments; > 1: partial sums in part, segs rows of n */
    float *part;
} gemv_job;

/* The partial sums of this thread's share of the k segments. */
static void gemv_segment_task(void *arg, int ith, int nth)
{
    const gemv_job *g = arg;
    const gemm_problem *p = g->p;
    size_t s0, s1;
    ridge_partition(g->segs, 1, ith, nth, &s0, &s1);
    for (size_t s = s0; s < s1; s++)
        g->K->gemv_n(p->k, p->a, p->a_cs, p->b, p->b_rs, g->segs, s, s + 1, g->part + s * p->n, 0,
                     p->n, NULL);
}

/* Columns [j0, j1) of the single row (i0, i1 are 0, 1). */
static void gemv_range(void *arg, size_t i0, size_t i1, size_t j0, size_t j1, int ith)
{
    const gemv_job *g = arg;
    const gemm_problem *p = g->p;
    if (p->b_cs == 1)
        g->K->gemv_n(p->k, p->a, p->a_cs, p->b, p->b_rs, g->segs, 0, g->segs, p->c, j0, j1, &g->t);
    else g->K->gemv_t(p->k, g->a, p->b, p->b_cs, p->c, j0, j1, &g->t);
}

/* ---- dispatch -------------------------------------------------------------------------------- */

typedef struct ref_job {
    const gemm_problem *p;
} ref_job;

static void ref_block(void *arg, size_t i0, size_t i1, size_t j0, size_t j1, int ith)
{
    const ref_job *j = arg;
    ridge_f32_gemm__ref(j->p, i0, i1, j0, j1);
}

/* B from a plan: its panels, KC and padded width; bplan NULL when there is no plan. */
typedef struct plan_b {
    const float *bplan;
    size_t kc, npad;
} plan_b;

enum { PATH_REF, PATH_GEMV, PATH_DOT, PATH_LOOPS };

/* The dot kernel (gemm_kernel.dot) for A B^T with at most DOT_MAX_M rows and a reduction of
 * at least DOT_MIN_K: packing B^T transposes it (8 x 8 blocks; 21% of 32 x 128 x 784 NT), and
 * with few rows of A too few tiles read each packed panel to pay for that. On an Intel Xeon
 * (scripts/gemm-ab-small.c, 1 thread, before/after): 8 x 512 x 784 2.02x, 16 x 128 x 784
 * 1.58x, 32 x 128 x 784 1.28x, 32 x 768 x 768 1.12x, 40 x 768 x 768 1.09x, 48 x 128 x 784
 * 1.13x, 48 x 768 x 768 0.99x; 2 threads 1.22-2.06x. With 64 rows it lost where B^T outgrows
 * the L2 (64 x 768 x 768 0.94x, 64 x 2304 x 768 0.91x); with k 128 or 192 the reduction
 * across lanes costs more than the packing (0.73x, 0.87x; k 256 1.03x).
 * And with any number of rows when B^T has fewer rows than the 32-column tiles (a
 * classifier's last layer), which the loops pad to 32 columns and pack element by element:
 * 64 x 10 x 128 3.7x, 256 x 10 x 784 5.9x, 4096 x 10 x 784 3.9x (1.32x of B^T's rows as the
 * outer loop there), 3136 x 16 x 64 1.6x, 64 x 24 x 128 1.56x, 64 x 31 x 256 1.20x (64 x 32 x
 * 128 0.79x), from k 32 on (k 16 0.98x). With session 23's cheaper sums across lanes
 * (f32-gemm-avx512.c), also up to 63 columns where the 32-column panels pad n by 8 or more,
 * from k 128: 256 x 48 x 784 1.57x, 3136 x 48 x 576 1.16x, 3136 x 40 x 128 1.26x, 64 x 33 x
 * 128 2.3x, 8192 x 48 x 128 1.03x; not 3136 x 63 x 128 (0.79x), nor k 128 with few rows
 * (32 x 2304 x 128 0.85x). */
#define DOT_MAX_M 48
#define DOT_MIN_K 256
/* Since then, also up to 96 rows when B^T is at most 512 KiB (in the L2 of the cores ridge
 * meets) and k at least 512: 64 x 128 x 784 1.13x (2 threads 1.23x), 64 x 160 x 784 1.13x,
 * 100 x 64 x 2048 1.12x, 96 x 128 x 784 1.07x, 80 x 128 x 784 1.07x; not with k 256 (128 x
 * 256 x 256 0.87x), 128 rows (128 x 96 x 1000 0.97x, 128 x 128 x 1024 1.00x) or a larger B^T
 * (96 x 512 x 512 0.97x, 64 x 768 x 768 0.97x). A constant, not the L2's size: the path must
 * depend on the shape alone. */
#define DOT_MID_MAX_M 96
#define DOT_MID_MIN_K 512
#define DOT_MID_MAX_B (128 * 1024) /* floats */
#define DOT_NARROW_N 32
#define DOT_NARROW_MIN_K 32
#define DOT_WIDER_MIN_K 128

/* A B^T with so few columns that the dot kernel pays with any number of rows */
static int dot_narrow(const gemm_problem *p)
{
    return (p->n < DOT_NARROW_N && p->k >= DOT_NARROW_MIN_K) ||
           (p->n < 2 * DOT_NARROW_N && p->k >= DOT_WIDER_MIN_K && pad_to(p->n, 32) >= 8);
}

/* The path is chosen by shape and ISA only, so the bits never depend on the thread count: the
 * reference for ISA ref (and for "no product", a memory pass), the matrix-vector kernels for
 * m == 1, the dot kernel for A B^T with few rows or few columns, else the five loops. */
static int choose_path(const gemm_problem *p, const gemm_kernel *K, const plan_b *pb)
{
    if (!K || p->k == 0) return PATH_REF;
    if (p->m == 1 && !pb->bplan) return PATH_GEMV;
    if (K->dot && !pb->bplan && p->a_cs == 1 && p->b_rs == 1 &&
        ((p->m <= DOT_MAX_M && p->k >= DOT_MIN_K) ||
         (p->m <= DOT_MID_MAX_M && p->k >= DOT_MID_MIN_K && p->n * p->k <= DOT_MID_MAX_B) ||
         dot_narrow(p)))
        return PATH_DOT;
    return PATH_LOOPS;
}

/* C[i0:i1, j0:j1] by the dot kernel. Few rows: down the rows of A for each group of B^T's
 * rows, which stay in L1 while A's rows (in L2) stream past them. Few columns: across all of
 * B^T (in L2) for each group of A's rows, so that A is read once. */
static void dot_block(void *arg, size_t i0, size_t i1, size_t j0, size_t j1, int ith)
{
    const gemm_driver *d = arg;
    const gemm_problem *p = d->p;
    gemm_tile_params t = {.alpha = p->alpha, .beta = p->beta, .last = 1,
                          .bias_kind = p->epi.bias_kind, .act = p->epi.act, .ldr = p->epi.ldr};
    t.plain = tile_plain(p, &t);
    const int rows_outer = dot_narrow(p) && p->m > DOT_MAX_M;
    const size_t ni = (i1 - i0 + GEMM_DOT_MR - 1) / GEMM_DOT_MR;
    const size_t nj = (j1 - j0 + GEMM_DOT_NR - 1) / GEMM_DOT_NR;
    for (size_t q = 0; q < ni * nj; q++) {
        const size_t i = i0 + (rows_outer ? q / nj : q % ni) * GEMM_DOT_MR;
        const size_t j = j0 + (rows_outer ? q % nj : q / ni) * GEMM_DOT_NR;
        tile_params(p, i, j, &t);
        d->K->dot(p->k, p->a + i * p->a_rs, p->a_rs, p->b + j * p->b_cs, p->b_cs,
                  p->c + i * p->ldc + j, p->ldc, RIDGE_MIN(GEMM_DOT_MR, i1 - i),
                  RIDGE_MIN(GEMM_DOT_NR, j1 - j), &t);
    }
}

/* The blocks, the B strategy and the scratch per thread (floats) for the five loops. */
static void driver_init(gemm_driver *d, const gemm_problem *p, const gemm_kernel *K,
                        const ridge_cpu *cpu, int threads, const plan_b *pb)
{
    *d = (gemm_driver){.p = p, .K = K, .bplan = pb->bplan, .plan_npad = pb->npad};
    d->pack_b = !pb->bplan && !b_in_place(p, (size_t)K->inplace_b_max_m);
    d->a_direct = a_direct(p, K);
    d->kc = pb->bplan ? pb->kc : blocking_kc(p->k, d->pack_b ? KC_MAX : KC_MAX_IN_PLACE);
    if (d->a_direct && !d->pack_b && !d->bplan && d->kc * p->n <= GEMM_BLOCK_MAX_B && !test_kc) {
        d->block = 1, d->mc = p->m, d->nc = p->n;
        return;
    }
    d->mc = blocking_mc(K, cpu, d->kc, p->m, p->k, d->pack_b);
    d->nc = blocking_nc(K, cpu, d->kc, threads);
    d->panel_b = d->pack_b && d->mc >= p->m;
    d->no_aliased_pf = ridge_cpu_vendor_is_intel(cpu->vendor);
    size_t mc_alloc = d->a_direct ? 0 : d->mc + (size_t)K->mr, nc_alloc = d->nc + (size_t)K->nr;
    size_t b_alloc = d->panel_b ? (size_t)K->nr : d->pack_b ? nc_alloc : 0;
    d->per_thread = (mc_alloc + b_alloc) * d->kc;
    d->per_thread = (d->per_thread + 15) & ~(size_t)15; /* 64-byte aligned blocks */
}

/* Scratch floats per thread that run_product needs. */
static size_t product_scratch(const gemm_problem *p, const gemm_kernel *K, const ridge_cpu *cpu,
                              int threads, const plan_b *pb)
{
    switch (choose_path(p, K, pb)) {
    case PATH_GEMV: {
        if (p->b_cs == 1) /* partial sums, when the threads split the segments */
            return threads > 1 ? (gemv_segments(p) * p->n + (size_t)threads - 1) / (size_t)threads
                               : 0;
        return p->a_cs != 1 ? (p->k + 15) & ~(size_t)15 : 0;
    }
    case PATH_LOOPS: {
        gemm_driver d;
        driver_init(&d, p, K, cpu, threads, pb);
        return d.per_thread;
    }
    }
    return 0;
}

/* Computes one validated product on `threads` threads of ctx, or, with threads == 1, on the
 * calling thread alone without touching the pool (then it may run inside a pool task).
 * `scratch` holds threads * product_scratch() floats (NULL: taken from the context). */
static ridge_status run_product(ridge_ctx *ctx, int threads, const gemm_problem *p,
                                const gemm_kernel *K, const plan_b *pb, float *scratch)
{
    if (p->m == 0 || p->n == 0) return RIDGE_OK;
    const ridge_cpu *cpu = ridge_ctx_cpu(ctx);
    int path = choose_path(p, K, pb);
    /* the five loops' blocks, worked out once (their divisions are a tenth of a small call) */
    gemm_problem q = *p;
    gemm_driver d;
    if (path == PATH_LOOPS) driver_init(&d, &q, K, cpu, threads, pb);
    size_t need = (path == PATH_LOOPS ? d.per_thread : product_scratch(p, K, cpu, threads, pb)) *
                  (size_t)threads * sizeof(float);
    if (!scratch && need && ridge_ctx_scratch(ctx, need, (void **)&scratch))
        return ridge_error(RIDGE_ENOMEM, "sgemm: out of memory for %zu bytes of packing buffers",
                           need);
    if (path == PATH_REF) {
        ref_job j = {p};
        if (threads == 1) ref_block(&j, 0, p->m, 0, p->n, 0);
        else gemm_split_2d(ctx, threads, p->m, p->n, 8, 64, 1, ref_block, &j);
        return RIDGE_OK;
    }
    if (path == PATH_GEMV) {
        gemv_job g = {.p = p, .K = K, .a = p->a,
                      .t = {.alpha = p->alpha, .beta = p->beta, .last = 1,
                            .bias_kind = p->epi.bias_kind, .bias = p->epi.bias,
                            .act = p->epi.act, .res = p->epi.residual, .ldr = p->epi.ldr},
                      .segs = gemv_segments(p)};
        if (p->b_cs != 1 && p->a_cs != 1) { /* gemv_t wants a contiguous */
            for (size_t i = 0; i < p->k; i++) scratch[i] = p->a[i * p->a_cs];
            g.a = scratch;
        }
        if (threads == 1) {
            gemv_range(&g, 0, 1, 0, p->n, 0);
        } else if (p->b_cs == 1) { /* the threads take whole k segments */
            g.part = scratch;
            int nth = (size_t)threads < g.segs ? threads : (int)g.segs;
            ridge_parallel_run(ctx, nth, gemv_segment_task, &g);
            K->gemv_sum(g.part, g.segs, p->n, p->c, 0, p->n, &g.t);
        } else { /* gemv_t: the threads take columns */
            gemm_split_2d(ctx, threads, 1, p->n, 1, 16, 1, gemv_range, &g);
        }
        return RIDGE_OK;
    }
    if (path == PATH_DOT) {
        gemm_driver dot = {.p = p, .K = K};
        if (threads == 1) dot_block(&dot, 0, p->m, 0, p->n, 0);
        else gemm_split_2d(ctx, threads, p->m, p->n, GEMM_DOT_MR, GEMM_DOT_NR, 1, dot_block, &dot);
        return RIDGE_OK;
    }
    d.scratch = scratch;
    /* A residual in C is read in the last k block, after the first overwrote C: keep a copy. */
    float *res_copy = NULL;
    if (q.epi.residual == q.c && q.k > d.kc) {
        res_copy = ridge_malloc(q.m * q.n * sizeof(float));
        if (!res_copy) return ridge_error(RIDGE_ENOMEM, "sgemm: out of memory for the residual");
        for (size_t i = 0; i < q.m; i++)
            memcpy(res_copy + i * q.n, q.c + i * q.ldc, q.n * sizeof(float));
        q.epi.residual = res_copy;
        q.epi.ldr = q.n;
    }
    if (threads == 1) driver_block(&d, 0, q.m, 0, q.n, 0);
    else gemm_split_2d(ctx, threads, q.m, q.n, (size_t)K->mr, (size_t)K->nr, d.pack_b || d.bplan,
                       driver_block, &d);
    ridge_free(res_copy);
    return RIDGE_OK;
}

/* A batch of same-shape products (i-th: a + i sa, b + i sb, c + i sc, residual + i sr). */
typedef struct batch_job {
    ridge_ctx *ctx;
    gemm_problem p; /* item 0 */
    size_t batch, sa, sb, sc, sr;
    const gemm_kernel *K;
    float *scratch;
    size_t per_item; /* scratch floats per thread */
    _Atomic int status;
} batch_job;

static void batch_item(const batch_job *j, size_t i, gemm_problem *p)
{
    *p = j->p;
    if (p->k) p->a += i * j->sa, p->b += i * j->sb;
    if (p->c) p->c += i * j->sc; /* NULL only for an empty product */
    if (p->epi.residual) p->epi.residual += i * j->sr;
}

/* Small products: each thread runs whole items of its contiguous share of the batch. */
static void batch_task(void *arg, int ith, int nth)
{
    batch_job *j = arg;
    size_t b, e;
    ridge_partition(j->batch, 1, ith, nth, &b, &e);
    static const plan_b none = {0};
    for (size_t i = b; i < e; i++) {
        gemm_problem p;
        batch_item(j, i, &p);
        float *scratch = j->per_item ? j->scratch + (size_t)ith * j->per_item : NULL;
        ridge_status st = run_product(j->ctx, 1, &p, j->K, &none, scratch);
        if (st) atomic_store(&j->status, (int)st);
    }
}

/* Computes `batch` products: one after the other on all useful threads when each is large
 * enough to split, else whole products in parallel (attention's many small heads). */
static ridge_status run_batch(ridge_ctx *ctx, batch_job *j)
{
    static const plan_b none = {0};
    const gemm_problem *p = &j->p;
    int per = useful_threads(ctx, p), all = ridge_ctx_threads(ctx);
    if (j->batch > 1 && per < all && p->m && p->n) {
        int nth = j->batch < (size_t)all ? (int)j->batch : all;
        j->ctx = ctx;
        j->per_item = product_scratch(p, j->K, ridge_ctx_cpu(ctx), 1, &none);
        size_t need = j->per_item * (size_t)nth * sizeof(float);
        if (need && ridge_ctx_scratch(ctx, need, (void **)&j->scratch))
            return ridge_error(RIDGE_ENOMEM, "sgemm: out of memory for %zu bytes of packing buffers",
                               need);
        atomic_init(&j->status, RIDGE_OK);
        ridge_parallel_run(ctx, nth, batch_task, j);
        return (ridge_status)atomic_load(&j->status);
    }
    for (size_t i = 0; i < j->batch; i++) {
        gemm_problem q;
        batch_item(j, i, &q);
        ridge_status st = run_product(ctx, per, &q, j->K, &none, NULL);
        if (st) return st;
    }
    return RIDGE_OK;
}

/* Fills the transpose-independent part of a problem. */
static void set_a(gemm_problem *p, ridge_trans t, const float *a, size_t lda)
{
    p->a = a;
    p->a_rs = t == RIDGE_NO_TRANS ? lda : 1;
    p->a_cs = t == RIDGE_NO_TRANS ? 1 : lda;
}

static void set_b(gemm_problem *p, ridge_trans t, const float *b, size_t ldb)
{
    p->b = b;
    p->b_rs = t == RIDGE_NO_TRANS ? ldb : 1;
    p->b_cs = t == RIDGE_NO_TRANS ? 1 : ldb;
}

/* Validates everything but B, shared by the plain calls and the plan. */
static ridge_status check_common(const char *fn, ridge_ctx *ctx, ridge_trans trans_a,
                                 size_t batch, size_t m, size_t n, size_t k, float alpha,
                                 const float *a, size_t lda, size_t stride_a, float *c,
                                 size_t ldc, size_t stride_c, const ridge_epilogue *epi)
{
    if (!ctx) return ridge_error(RIDGE_EINVAL, "%s: ctx is NULL", fn);
    ridge_status st;
    if ((st = check_trans(fn, "trans_a", trans_a)) || (st = check_size(fn, "batch", batch)) ||
        (st = check_size(fn, "m", m)) || (st = check_size(fn, "n", n)) ||
        (st = check_size(fn, "k", k)))
        return st;
    int product = m && n && k && alpha != 0.0f && batch;
    size_t ext;
    if (trans_a == RIDGE_NO_TRANS) st = check_matrix(fn, "a", a, product, m, k, "k", lda, "lda", &ext);
    else st = check_matrix(fn, "a", a, product, k, m, "m", lda, "lda", &ext);
    if (!st) st = check_batch(fn, "a", batch, stride_a, ext);
    if (!st) st = check_matrix(fn, "c", c, m && n && batch, m, n, "n", ldc, "ldc", &ext);
    if (!st) st = check_batch(fn, "c", batch, stride_c, ext);
    if (!st && epi) st = check_epilogue(fn, epi, batch, m, n);
    if (!st && epi && epi->residual == c && c && (epi->ldr != ldc || epi->residual_stride != stride_c))
        return ridge_error(RIDGE_EINVAL, "%s: residual is c but ldr (%zu) != ldc (%zu) or its "
                           "stride differs: in place, it must be the same matrix", fn, epi->ldr, ldc);
    return st;
}

static ridge_status check_b(const char *fn, ridge_trans trans_b, size_t batch, size_t m,
                            size_t n, size_t k, float alpha, const float *b, size_t ldb,
                            size_t stride_b)
{
    ridge_status st = check_trans(fn, "trans_b", trans_b);
    if (st) return st;
    int product = m && n && k && alpha != 0.0f && batch;
    size_t ext;
    if (trans_b == RIDGE_NO_TRANS) st = check_matrix(fn, "b", b, product, k, n, "n", ldb, "ldb", &ext);
    else st = check_matrix(fn, "b", b, product, n, k, "k", ldb, "ldb", &ext);
    if (!st) st = check_batch(fn, "b", batch, stride_b, ext);
    return st;
}

/* Compulsory bytes of `batch` products (m x k) (k x n) -> (m x n): A, B read once, C written
 * once, and read too when beta != 0. For the profiler. */
static double gemm_bytes(size_t batch, size_t m, size_t n, size_t k, float beta)
{
    double c = (double)m * n * (beta != 0.0f ? 2 : 1);
    return 4.0 * batch * ((double)m * k + (double)k * n + c);
}

/* The kernel a product without a plan runs, for the profiler. */
static const char *kernel_name(const gemm_problem *p, const gemm_kernel *K)
{
    static const plan_b none = {0};
    if (!K) return "f32-gemm-ref";
    return choose_path(p, K, &none) == PATH_DOT ? K->dot_name : K->name;
}

static ridge_status sgemm_common(const char *fn, ridge_ctx *ctx, ridge_trans trans_a,
                                 ridge_trans trans_b, size_t batch, size_t m, size_t n, size_t k,
                                 float alpha, const float *a, size_t lda, size_t stride_a,
                                 const float *b, size_t ldb, size_t stride_b, float beta,
                                 float *c, size_t ldc, size_t stride_c, const ridge_epilogue *epi)
{
    ridge_status st = check_common(fn, ctx, trans_a, batch, m, n, k, alpha, a, lda, stride_a,
                                   c, ldc, stride_c, epi);
    if (!st) st = check_b(fn, trans_b, batch, m, n, k, alpha, b, ldb, stride_b);
    if (st) return st;
    /* every field set by hand: a zeroing initializer became a `rep stos` of the whole job,
     * a tenth of a call of a few hundred nanoseconds */
    batch_job j;
    j.p.m = m, j.p.n = n, j.p.k = alpha != 0.0f ? k : 0, j.p.alpha = alpha, j.p.beta = beta;
    j.p.c = c, j.p.ldc = ldc;
    j.p.epi = epi ? *epi : (ridge_epilogue){0};
    j.batch = batch, j.sa = stride_a, j.sb = stride_b, j.sc = stride_c;
    j.sr = epi ? epi->residual_stride : 0;
    j.ctx = NULL, j.scratch = NULL, j.per_item = 0;
    set_a(&j.p, trans_a, j.p.k ? a : NULL, lda);
    set_b(&j.p, trans_b, j.p.k ? b : NULL, ldb);
    j.K = select_kernel(ctx, ridge_ctx_isa(ctx), &j.p, 0);
    uint64_t t0 = RIDGE_PROF_START(ctx);
    st = run_batch(ctx, &j);
    double bytes = gemm_bytes(batch, m, n, k, beta);
    RIDGE_PROF_END(ctx, t0, fn, kernel_name(&j.p, j.K), 2.0 * batch * m * n * k, bytes,
                   bytes, "%zux%zux%zu %c%c", m, n, k, trans_a ? 'T' : 'N', trans_b ? 'T' : 'N');
    return st;
}

ridge_status ridge_sgemm(ridge_ctx *ctx, ridge_trans trans_a, ridge_trans trans_b, size_t m,
                         size_t n, size_t k, float alpha, const float *a, size_t lda,
                         const float *b, size_t ldb, float beta, float *c, size_t ldc)
{
    return sgemm_common("sgemm", ctx, trans_a, trans_b, 1, m, n, k, alpha, a, lda, 0, b, ldb,
                        0, beta, c, ldc, 0, NULL);
}

ridge_status ridge_sgemm_ex(ridge_ctx *ctx, ridge_trans trans_a, ridge_trans trans_b, size_t m,
                            size_t n, size_t k, float alpha, const float *a, size_t lda,
                            const float *b, size_t ldb, float beta, float *c, size_t ldc,
                            const ridge_epilogue *epi)
{
    return sgemm_common("sgemm_ex", ctx, trans_a, trans_b, 1, m, n, k, alpha, a, lda, 0, b,
                        ldb, 0, beta, c, ldc, 0, epi);
}

ridge_status ridge_sgemm_batched(ridge_ctx *ctx, ridge_trans trans_a, ridge_trans trans_b,
                                 size_t batch, size_t m, size_t n, size_t k, float alpha,
                                 const float *a, size_t lda, size_t stride_a, const float *b,
                                 size_t ldb, size_t stride_b, float beta, float *c, size_t ldc,
                                 size_t stride_c, const ridge_epilogue *epi)
{
    return sgemm_common("sgemm_batched", ctx, trans_a, trans_b, batch, m, n, k, alpha, a, lda,
                        stride_a, b, ldb, stride_b, beta, c, ldc, stride_c, epi);
}

/* ---- prepacked B ----------------------------------------------------------------------------- */

struct ridge_sgemm_plan {
    ridge_trans trans_b;
    size_t n, k;
    ridge_isa isa;        /* the creating context's: execute picks this ISA's tile for m */
    const gemm_kernel *K; /* the packing kernel; NULL: ISA ref, packed is op(B) row-major */
    size_t kc, npad;      /* k blocks of kc rows, each npad (n rounded up to NR) columns */
    float *packed;
};

static void plan_pack(ridge_sgemm_plan *plan, const float *b, size_t ldb)
{
    size_t rs = plan->trans_b == RIDGE_NO_TRANS ? ldb : 1;
    size_t cs = plan->trans_b == RIDGE_NO_TRANS ? 1 : ldb;
    if (!plan->K) {
        for (size_t p = 0; p < plan->k; p++)
            for (size_t j = 0; j < plan->n; j++) plan->packed[p * plan->n + j] = b[p * rs + j * cs];
        return;
    }
    for (size_t pc = 0; pc < plan->k; pc += plan->kc)
        plan->K->pack_b(RIDGE_MIN(plan->kc, plan->k - pc), plan->n, b + pc * rs, rs, cs,
                        plan->packed + pc * plan->npad);
}

ridge_status ridge_sgemm_plan_create(ridge_ctx *ctx, ridge_trans trans_b, size_t n, size_t k,
                                     const float *b, size_t ldb, ridge_sgemm_plan **out)
{
    const char *fn = "sgemm_plan_create";
    if (!out) return ridge_error(RIDGE_EINVAL, "%s: out is NULL", fn);
    *out = NULL;
    if (!ctx) return ridge_error(RIDGE_EINVAL, "%s: ctx is NULL", fn);
    ridge_status st;
    if ((st = check_size(fn, "n", n)) || (st = check_size(fn, "k", k)) ||
        (st = check_b(fn, trans_b, 1, 1, n, k, 1.0f, b, ldb, 0)))
        return st;
    ridge_sgemm_plan *plan = ridge_calloc(1, sizeof *plan);
    if (!plan) return ridge_error(RIDGE_ENOMEM, "%s: out of memory", fn);
    plan->trans_b = trans_b;
    plan->n = n;
    plan->k = k;
    plan->isa = ridge_ctx_isa(ctx);
    plan->K = select_kernel(ctx, plan->isa, NULL, 1); /* packs B for every 32-column tile */
    plan->npad = n;
    if (plan->K) {
        plan->kc = blocking_kc(k, KC_MAX);
        plan->npad = (n + (size_t)plan->K->nr - 1) / (size_t)plan->K->nr * (size_t)plan->K->nr;
    }
    if (n && k) {
        size_t bytes;
        if (ridge_size_mul(plan->npad, k, "plan", &bytes) ||
            ridge_size_mul(bytes, sizeof(float), "plan", &bytes) ||
            !(plan->packed = ridge_malloc(bytes))) {
            ridge_free(plan);
            return ridge_error(RIDGE_ENOMEM, "%s: out of memory for %zu x %zu floats", fn, k, n);
        }
        plan_pack(plan, b, ldb);
    }
    *out = plan;
    return RIDGE_OK;
}

ridge_status ridge_sgemm_plan_update(ridge_ctx *ctx, ridge_sgemm_plan *plan, const float *b,
                                     size_t ldb)
{
    const char *fn = "sgemm_plan_update";
    if (!ctx || !plan)
        return ridge_error(RIDGE_EINVAL, "%s: %s is NULL", fn, ctx ? "plan" : "ctx");
    ridge_status st = check_b(fn, plan->trans_b, 1, 1, plan->n, plan->k, 1.0f, b, ldb, 0);
    if (st) return st;
    if (plan->packed) plan_pack(plan, b, ldb);
    return RIDGE_OK;
}

void ridge_sgemm_plan_destroy(ridge_sgemm_plan *plan)
{
    if (!plan) return;
    ridge_free(plan->packed);
    ridge_free(plan);
}

ridge_status ridge_sgemm_plan_execute(ridge_ctx *ctx, const ridge_sgemm_plan *plan,
                                      ridge_trans trans_a, size_t m, float alpha,
                                      const float *a, size_t lda, float beta, float *c,
                                      size_t ldc, const ridge_epilogue *epi)
{
    const char *fn = "sgemm_plan_execute";
    if (!plan) return ridge_error(RIDGE_EINVAL, "%s: plan is NULL", fn);
    ridge_status st = check_common(fn, ctx, trans_a, 1, m, plan->n, plan->k, alpha, a, lda, 0,
                                   c, ldc, 0, epi);
    if (st) return st;
    gemm_problem p = {.m = m, .n = plan->n, .k = alpha != 0.0f ? plan->k : 0, .alpha = alpha,
                      .beta = beta, .c = c, .ldc = ldc};
    if (epi) p.epi = *epi;
    set_a(&p, trans_a, p.k ? a : NULL, lda);
    set_b(&p, RIDGE_NO_TRANS, p.k ? plan->packed : NULL, plan->n);
    plan_b pb = {plan->K && p.k ? plan->packed : NULL, plan->kc, plan->npad};
    uint64_t t0 = RIDGE_PROF_START(ctx);
    const gemm_kernel *K = select_kernel(ctx, plan->isa, &p, 1);
    st = run_product(ctx, useful_threads(ctx, &p), &p, K, &pb, NULL);
    double bytes = gemm_bytes(1, m, plan->n, plan->k, beta);
    RIDGE_PROF_END(ctx, t0, fn, K ? K->name : "f32-gemm-ref",
                   2.0 * m * plan->n * plan->k, bytes, bytes, "%zux%zux%zu %cN", m, plan->n,
                   plan->k, trans_a ? 'T' : 'N');
    return st;
}

/* ---- introspection --------------------------------------------------------------------------- */

const char *ridge_gemm_describe(const ridge_ctx *ctx)
{
    const gemm_kernel *K = ctx ? select_kernel(ctx, ridge_ctx_isa(ctx), NULL, 0) : NULL;
#define GEMM_STR_(x) #x
#define GEMM_STR(x) GEMM_STR_(x)
#define GEMM_DOT_STR                                                                              \
    "f32-gemm-dot-4x6-avx512 (A B^T with " GEMM_STR(DOT_MAX_M) " rows or fewer and k "       \
    GEMM_STR(DOT_MIN_K) " or more, or " GEMM_STR(DOT_MID_MAX_M) " or fewer, k "                \
    GEMM_STR(DOT_MID_MIN_K) " or more and B^T of 512 KiB or less, or fewer than "              \
    GEMM_STR(DOT_NARROW_N) " columns and k " GEMM_STR(DOT_NARROW_MIN_K) " or more, or 33-56 "   \
    "columns and k " GEMM_STR(DOT_WIDER_MIN_K) " or more)"
    if (K == &ridge_gemm_kernel_6x64_avx512 && !test_tile)
        return "f32-gemm-6x64-avx512 (" GEMM_STR(WIDE_TILE_MIN_M) " rows or more with B packed, "
               "fewer than " GEMM_STR(TALL_TILE_MIN_M) " with B in place, or fewer than "
               GEMM_STR(WIDE_IN_PLACE_MAX_M) " where it pads m less), "
               "f32-gemm-14x32-avx512 (" GEMM_STR(TALL_TILE_MIN_M) " or more), "
               "f32-gemm-8x32-avx512, " GEMM_DOT_STR;
    if (K == &ridge_gemm_kernel_8x32_avx512)
        return "f32-gemm-8x32-avx512, f32-gemm-6x64-avx512 (where its panels pad n no more: "
               "k " GEMM_STR(SHORT_K_MAX) " or less, or " GEMM_STR(SHORT_K_ROWS_MAX)
               " or less with A not transposed, or B in place with " GEMM_STR(TALL_TILE_MIN_M)
               " rows or more, or fewer where it pads m less), " GEMM_DOT_STR;
#undef GEMM_DOT_STR
#undef GEMM_STR
#undef GEMM_STR_
    return K ? K->name : "f32-gemm-ref";
}
