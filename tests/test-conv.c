/* Convolution forward: every algorithm x layout x ISA present x 1 and 2 threads x epilogue,
 * against the fp64 reference, over a grid of edge shapes; the reference against a hand
 * computation and against itself across layouts; bad descriptors refused with a message;
 * plan explanation and tuning; batch-norm folding.
 *
 * Error measure: for each output, |y - ref| / (conv(|x|, |w|) + |bias| + |residual|), the
 * error relative to the sum of magnitudes (what floating-point summation error scales with),
 * in units of FLT_EPSILON. Tolerances per algorithm (units of eps, K = c_in/groups * r * s):
 *   direct, im2col, pointwise, depthwise: K + 4  (the worst-case bound of a K-term fp32 sum)
 *   winograd-2x3: 16 (K + 4)   winograd-4x3: 128 (K + 4)   (the transforms' growth)
 *   fft: 2 log2(64^2) (K + 4) = 24 (K + 4): an FFT's roundoff is normwise, about eps per
 *        butterfly stage (log2(T^2) of them for a T x T tile, T <= 64) relative to the whole
 *        tile's magnitude, forward and inverse (the 2), rather than per term of the window
 * The measured maxima are printed (-v) and quoted in docs/PERFORMANCE.md.
 *
 * Usage: test-conv [-v | -vv] [--shard K/N]. With --shard, only every Nth part of the suite
 * (a shape in its three layouts, or one of the other groups), starting at part K, runs:
 * tests/conv.cmake registers N such runs, so that the sanitizer builds run them side by side
 * and none comes near ctest's time limit. */
#include <float.h>
#include <math.h>
#include <unistd.h>

#include "conv/conv.h"
#include "test.h"

static int verbose;
static int shard_k, shard_n = 1, part_no;

/* whether this run takes the next part of the suite (--shard) */
static int my_part(void)
{
    return part_no++ % shard_n == shard_k;
}

typedef struct shape {
    const char *name;
    int64_t n, ci, h, w, co, r, s, sh, sw, dh, dw, pt, pb, pl, pr, g;
} shape;

static const shape shapes[] = {
    /* name             n  ci  h   w   co  r  s  sh sw dh dw pt pb pl pr g */
    {"1x1",             1, 5,  7,  3,  19, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},
    {"1x1-c33",         2, 33, 5,  4,  35, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},
    {"1x1-stride2",     1, 8,  9,  7,  10, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1},
    {"3x3-pad1",        1, 16, 9,  11, 17, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {"3x3-c64",         1, 64, 12, 14, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {"3x3-nopad",       1, 6,  8,  9,  20, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1},
    {"3x3-asym",        1, 7,  8,  6,  9,  3, 3, 1, 1, 1, 1, 0, 2, 1, 0, 1},
    {"3x3-batch3",      3, 3,  5,  7,  24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {"3x3-stride2",     1, 9,  11, 10, 13, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1},
    {"3x3-stride3",     1, 4,  10, 11, 6,  3, 3, 3, 3, 1, 1, 1, 0, 2, 1, 1},
    {"3x3-dil2",        1, 8,  10, 10, 8,  3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1},
    {"5x5-stride2",     1, 3,  13, 12, 8,  5, 5, 2, 2, 1, 1, 2, 2, 2, 2, 1},
    {"5x5-on-3x3",      1, 4,  3,  3,  5,  5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 1},
    {"3x3-on-1x1",      1, 6,  1,  1,  7,  3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {"3x3-on-2x3",      2, 5,  2,  3,  9,  3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {"7x7-first",       1, 3,  17, 19, 16, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3, 1},
    {"3x3-groups2",     1, 8,  7,  7,  12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2},
    {"3x3-groups4",     1, 12, 6,  5,  8,  3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4},
    {"dw-c19",          1, 19, 11, 5,  19, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 19},
    {"dw-c32-stride2",  1, 32, 9,  9,  32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 32},
    {"dw-5x5-batch3",   3, 20, 7,  8,  20, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 20},
    {"dw-mult2",        1, 6,  6,  6,  12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 6},
    {"dw-wide-c5",      1, 5,  6,  75, 5,  3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 5},
    {"dw-wide-c17",     2, 17, 4,  37, 17, 3, 3, 1, 1, 1, 1, 0, 1, 1, 0, 17},
    {"dw-dil2-5x5",     1, 9,  9,  45, 9,  5, 5, 1, 1, 2, 2, 3, 4, 4, 1, 9},
    /* the 3x3 blocks of 12, 4 and 1 pixels at stride 2, and border pixels with 1 or 2 taps */
    {"dw-c24-s2-w35",   1, 24, 7,  35, 24, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 24},
    {"dw-c40-w31-pr2",  2, 40, 6,  31, 40, 3, 3, 1, 1, 1, 1, 1, 0, 0, 2, 40},
    /* whole rows with their border pixels in the 14-pixel blocks (edge_l / edge_r): 15 and
     * 30 pixels (first, middle, last block), 14 (one block) and 2 (too short: borders
     * peeled), stride 2 with a right border, a tail channel past the last vector */
    {"dw-c16-w15",      1, 16, 5,  15, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 16},
    {"dw-c24-w30",      2, 24, 5,  30, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 24},
    {"dw-c8-w14",       1, 8,  4,  14, 8,  3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 8},
    {"dw-c8-w2",        1, 8,  3,  2,  8,  3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 8},
    {"dw-c9-w29-s2",    1, 9,  6,  29, 9,  3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 9},
    /* rows of 7 to 14 pixels with border pixels: one block of 7, two overlapping blocks of 7
     * over two images with a channel tail (AVX-512), one block of 14 at stride 2; one border
     * pixel, the left at stride 2 (14 and 7 pixels) and the right (padding on the right only) */
    {"dw-c48-w7",       1, 48, 5,  7,  48, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 48},
    /* rows of 2 to 6 pixels in one block: 4 x 4, 3 and 6 wide with one border pixel, 7 -> 4
     * and 8 -> 4 at stride 2 (both border pixels, the left one only) */
    {"dw-c32-w4",       2, 32, 4,  4,  32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 32},
    {"dw-c16-w3-pl1",   1, 16, 3,  3,  16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 16},
    {"dw-c40-w6-pr1",   1, 40, 6,  6,  40, 3, 3, 1, 1, 1, 1, 1, 1, 0, 1, 40},
    {"dw-c64-w7-s2",    1, 64, 7,  7,  64, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 64},
    {"dw-c48-w8-s2",    1, 48, 8,  8,  48, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 48},
    {"dw-c40-w10",      2, 40, 4,  10, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 40},
    {"dw-c32-w27-s2",   1, 32, 5,  27, 32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 32},
    {"dw-c32-w28-s2",   1, 32, 5,  28, 32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 32},
    {"dw-c48-w14-s2",   1, 48, 6,  14, 48, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 48},
    {"dw-c16-w15-pr1",  1, 16, 4,  15, 16, 3, 3, 1, 1, 1, 1, 1, 1, 0, 1, 16},
    {"dw-c32-w8-pr1",   1, 32, 4,  8,  32, 3, 3, 1, 1, 1, 1, 1, 1, 0, 1, 32},
    /* pixels 4 KiB apart, so copied to the depthwise ring (dw_ring): rows of 7 over two images
     * (each ring row reused by three output rows, the image changing under the same ring
     * rows), and one image without padding above, with padding on the left only, 2048 channels */
    {"dw-c1024-ring",   2, 1024, 5, 7, 1024, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1024},
    {"dw-c2048-asym",   1, 2048, 4, 6, 2048, 3, 3, 1, 1, 1, 1, 0, 1, 1, 0, 2048},
    /* 384 channels or more: the ring one slab of channels at a time. 420 channels in slabs of
     * 144, the last 132 (a vector's tail), 8 rows per thread on 2; stride 2 (14 output rows);
     * uneven padding at stride 2; 384 channels over one short image (on 2 threads no ring);
     * 4 images of 4 rows (on 2 threads blocks of 8 rows, taller than an image: walked
     * forwards; the others' first block backwards) */
    {"dw-c420-slabs",   2, 420, 8, 9,  420, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 420},
    {"dw-c512-s2-slabs", 1, 512, 27, 11, 512, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 512},
    {"dw-c400-s2-asym", 1, 400, 16, 10, 400, 3, 3, 2, 2, 1, 1, 0, 1, 1, 0, 400},
    {"dw-c384-short",   1, 384, 5, 14, 384, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 384},
    {"dw-c400-b4-blocks", 4, 400, 4, 9, 400, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 400},
    /* channels that crowd into few L1 sets (dw_few_sets: C a multiple of 256 on a 12-way
     * L1): the ring in slabs of 48 (5 of 48 and the last of 16) over rows of 28, two images;
     * slabs of 32 over rows of 40 */
    {"dw-c256-w28-sets", 2, 256, 5, 28, 256, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 256},
    {"dw-c256-w40-sets", 1, 256, 4, 40, 256, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 256},
    /* stride 2 over channels 512 bytes or more apart, in place (dw_row_3x3_cwide): 8 output
     * columns (two overlapping blocks of 7, both borders), 7 (one block with both borders)
     * over 3 blocks of 64 channels, two images of 15 columns (blocks at 0, 7 and 8); pixels
     * 4 KiB apart, which take the column-walking blocks (9 columns: blocks at 0 and 2) */
    {"dw-c128-s2-w15",  1, 128, 9, 15, 128, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 128},
    {"dw-c192-s2-w13",  1, 192, 7, 13, 192, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 192},
    {"dw-c256-s2-b2",   2, 256, 8, 29, 256, 3, 3, 2, 2, 1, 1, 1, 0, 1, 1, 256},
    {"dw-c1024-s2-w17", 1, 1024, 5, 17, 1024, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1024},
    /* rows wider than L1 / 4 (depthwise_range's rule): 8 interior rows in one kernel call;
     * stride 2 over two images with channels past the last vector, a call of 3 rows */
    {"dw-c64-w80-rows", 1, 64, 10, 80, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 64},
    {"dw-c50-w90-s2",   2, 50, 9,  90, 50, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 50},
    {"prime-13x7",      1, 11, 13, 7,  23, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* the streamed paths (16-channel blocks per group): direct over 48 channels, and 32 in
     * groups of 8 (so not streamed); depthwise at stride 2 over two images, and c = 144 in
     * two channel tiles (128 + 16) */
    {"3x3-co48",        2, 7,  8,  10, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {"3x3-co32-g4",     1, 8,  6,  7,  32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4},
    {"dw-c32-w45-s2",   2, 32, 5,  45, 32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 32},
    {"dw-c144-w31",     1, 144, 4, 31, 144, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 144},
    /* depthwise windows 4 to 7 wide (dw_row_wide): rows of DW_P pixels and more, rows of
     * DW_P / 2 to DW_P - 1 (one block of 7, or two overlapping), of 4 to 6 (one block),
     * shorter rows (blocks of 1), an image narrower than the window, stride 2, uneven
     * padding, padding of 6 (windows with one column inside), channels past the last vector,
     * a causal 1x4 (padding on the left only), a 6x6 window */
    {"dw-7x7-on-7",     2, 48, 7,  7,  48, 7, 7, 1, 1, 1, 1, 3, 3, 3, 3, 48},
    {"dw-5x5-s2-w17",   1, 20, 9,  17, 20, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, 20},
    {"dw-5x5-w6",       2, 32, 6,  6,  32, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 32},
    {"dw-7x7-w5",       1, 16, 5,  5,  16, 7, 7, 1, 1, 1, 1, 3, 3, 3, 3, 16},
    {"dw-7x7-w4-c17",   1, 17, 4,  4,  17, 7, 7, 1, 1, 1, 1, 3, 3, 3, 3, 17},
    {"dw-5x5-s2-w9",    1, 48, 9,  9,  48, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, 48},
    /* channels in few L1 sets: through a ring of 7 rows in slabs of 96, 96 and 64 over two
     * images; of 5 rows in slabs of 80 (the last of 32) */
    {"dw-7x7-c256-ring", 2, 256, 7, 7, 256, 7, 7, 1, 1, 1, 1, 3, 3, 3, 3, 256},
    {"dw-5x5-c512-ring", 1, 512, 9, 12, 512, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 512},
    {"dw-5x5-w40",      1, 20, 6,  40, 20, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 20},
    {"dw-7x7-w31",      2, 48, 5,  31, 48, 7, 7, 1, 1, 1, 1, 3, 3, 3, 3, 48},
    {"dw-7x7-s2-w45",   1, 32, 9,  45, 32, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3, 32},
    {"dw-5x5-s2-asym",  1, 16, 7,  33, 16, 5, 5, 2, 2, 1, 1, 1, 2, 0, 3, 16},
    {"dw-7x7-w9",       1, 17, 4,  9,  17, 7, 7, 1, 1, 1, 1, 3, 3, 3, 3, 17},
    {"dw-5x5-w3",       1, 16, 3,  3,  16, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 16},
    {"dw-7x7-pad6",     1, 16, 8,  20, 16, 7, 7, 1, 1, 1, 1, 0, 0, 6, 6, 16},
    {"dw-1x4-causal",   2, 24, 3,  40, 24, 1, 4, 1, 1, 1, 1, 0, 0, 3, 0, 24},
    {"dw-6x6-s2",       1, 16, 10, 30, 16, 6, 6, 2, 2, 1, 1, 2, 3, 2, 3, 16},
    /* ... rows of more than a quarter of L1 (12 KiB), which go down up to 8 rows a call:
     * a channel tail, stride 2, a window row cut by the bottom border mid-group */
    {"dw-5x5-rows",     1, 24, 13, 160, 24, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 24},
    {"dw-7x7-s2-rows",  1, 16, 21, 400, 16, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3, 16},
    /* pointwise with groups (each group's channels one run, read without a table), and
     * with groups of 12 that straddle NCHW16c's blocks (they are not) */
    {"1x1-groups2",     2, 8,  5,  6,  12, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2},
    {"1x1-groups3-c36", 1, 36, 4,  5,  9,  1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 3},
    /* small pointwise layers split in micro-tile units of pixels (pointwise_units): 3 images
     * of 25 pixels, so a thread's share ends inside an image and the next starts there */
    {"1x1-b3-units",    3, 20, 5,  5,  40, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},
    /* AVX-512 runs two 32-channel blocks of a group as one 6 x 64 tile: three and a part
     * blocks (a pair, then a pair whose second block is partial), groups of three blocks (a
     * pair and a single; no pair across groups), the strided 7x7 first layer */
    {"3x3-co100",       1, 5,  7,  13, 100, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {"1x1-g2-co140",    1, 10, 5,  9,  140, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2},
    {"7x7-first-co72",  2, 3,  15, 21, 72, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3, 1},
    /* c_in = 1 (reductions of <= 9 steps: AVX-512 keeps the weights in registers), rows of
     * 4-pixel groups and 1..3 left over, alone and in pairs of channel blocks */
    {"3x3-c1-co40",     2, 1,  9,  30, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {"3x3-c1-co64-s2",  1, 1,  11, 23, 64, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1},
    /* border pixels along a row in tiles (direct, NHWC and NCHW16c's single block): 5 per
     * side in rows cut by the border and in a run of two whole rows; 1-row images, 7 per
     * side (a tile and one more); dilation; groups, stride 2 and uneven padding; corner
     * windows with one tap inside */
    {"11x11-pad5",      1, 9,  12, 14, 20, 11, 11, 1, 1, 1, 1, 5, 5, 5, 5, 1},
    {"1x15-rows",       2, 12, 1,  40, 33, 1, 15, 1, 1, 1, 1, 0, 0, 7, 7, 1},
    {"5x5-dil2-pad4",   1, 6,  9,  16, 10, 5, 5, 1, 1, 2, 2, 4, 4, 4, 4, 1},
    {"7x7-s2-g2-asym",  1, 8,  11, 20, 12, 7, 7, 2, 2, 1, 1, 3, 2, 4, 1, 2},
    {"3x3-pad2",        1, 5,  4,  6,  7,  3, 3, 1, 1, 1, 1, 2, 2, 2, 2, 1},
};

static float frand(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static void fill(float *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) p[i] = frand(&seed);
}

static ridge_conv2d_desc desc_of(const shape *s, ridge_layout l)
{
    ridge_conv2d_desc d;
    ridge_conv2d_desc_init(&d);
    d.n = s->n, d.c_in = s->ci, d.h = s->h, d.w = s->w, d.c_out = s->co, d.r = s->r, d.s = s->s;
    d.stride_h = s->sh, d.stride_w = s->sw, d.dil_h = s->dh, d.dil_w = s->dw;
    d.pad_top = s->pt, d.pad_bottom = s->pb, d.pad_left = s->pl, d.pad_right = s->pr;
    d.groups = s->g, d.layout = l;
    return d;
}

static double tol_eps(ridge_conv_algo a, double K)
{
    double base = K + 4;
    if (a == RIDGE_CONV_WINOGRAD_2X3) return 16 * base;
    if (a == RIDGE_CONV_WINOGRAD_4X3) return 128 * base;
    if (a == RIDGE_CONV_FFT) return 24 * base;
    return base;
}

#define GUARD 64

static double worst[RIDGE_CONV_ALGO_COUNT]; /* max error seen, units of eps */

/* Runs one shape in one layout through every algorithm (only < 0) or algorithm `only`, with
 * the FFT's tile size fft_tile (0: the plan's choice), every ISA and thread count. */
static void test_shape_algo(const shape *s, ridge_layout l, ridge_ctx *const *ctxs, int nctx,
                            int only, int fft_tile)
{
    ridge_conv2d_desc d = desc_of(s, l);
    int64_t oh, ow;
    CHECK_OK(ridge_conv2d_desc_check(&d, &oh, &ow));
    size_t xn = ridge_tensor_elems(l, d.n, d.c_in, d.h, d.w);
    size_t yn = ridge_tensor_elems(l, d.n, d.c_out, oh, ow);
    size_t wn = (size_t)(d.c_out * (d.c_in / d.groups) * d.r * d.s);
    size_t xn0 = (size_t)(d.n * d.c_in * d.h * d.w), yn0 = (size_t)(d.n * d.c_out * oh * ow);
    float *x0 = malloc(xn0 * 4), *x = malloc(xn * 4), *w = malloc(wn * 4),
          *bias = malloc(d.c_out * 4);
    float *res0 = malloc(yn0 * 4), *res = malloc(yn * 4), *y = ridge_malloc((yn + GUARD) * 4);
    float *ref[4], *mag[2];
    float *xa = malloc(xn * 4), *wa = malloc(wn * 4), *ba = malloc(d.c_out * 4),
          *ra = malloc(yn * 4);
    for (int e = 0; e < 4; e++) ref[e] = malloc(yn * 4);
    for (int e = 0; e < 2; e++) mag[e] = malloc(yn * 4);
    fill(x0, xn0, 1), fill(w, wn, 2), fill(bias, (size_t)d.c_out, 3), fill(res0, yn0, 4);
    ridge_ctx *c0 = ctxs[0];
    CHECK_OK(ridge_layout_reorder(c0, x, l, x0, RIDGE_NCHW, d.n, d.c_in, d.h, d.w));
    CHECK_OK(ridge_layout_reorder(c0, res, l, res0, RIDGE_NCHW, d.n, d.c_out, oh, ow));
    for (size_t i = 0; i < xn; i++) xa[i] = fabsf(x[i]);
    for (size_t i = 0; i < wn; i++) wa[i] = fabsf(w[i]);
    for (int64_t i = 0; i < d.c_out; i++) ba[i] = fabsf(bias[i]);
    for (size_t i = 0; i < yn; i++) ra[i] = fabsf(res[i]);
    /* epilogue 0: none; 1: bias + residual + ReLU; 2: bias + ReLU; 3: bias + residual (the
     * error scale of 1-3 is mag[1], with every term's magnitude) */
    ridge_conv2d_epilogue ep1 = {RIDGE_CONV_ACT_RELU, res}, epa = {RIDGE_CONV_ACT_NONE, ra};
    ridge_conv2d_epilogue ep2 = {RIDGE_CONV_ACT_RELU, NULL}, ep3 = {RIDGE_CONV_ACT_NONE, res};
    CHECK_OK(ridge_conv2d_forward_ref(&d, x, w, ref[0], NULL, NULL));
    CHECK_OK(ridge_conv2d_forward_ref(&d, x, w, ref[1], bias, &ep1));
    CHECK_OK(ridge_conv2d_forward_ref(&d, x, w, ref[2], bias, &ep2));
    CHECK_OK(ridge_conv2d_forward_ref(&d, x, w, ref[3], bias, &ep3));
    CHECK_OK(ridge_conv2d_forward_ref(&d, xa, wa, mag[0], NULL, NULL));
    CHECK_OK(ridge_conv2d_forward_ref(&d, xa, wa, mag[1], ba, &epa));
    const double K = (double)(d.c_in / d.groups * d.r * d.s);

    for (int ci = 0; ci < nctx; ci++) {
        ridge_ctx *ctx = ctxs[ci];
        /* sm 1: direct and depthwise once more with their streamed stores forced (y is
         * 64-byte aligned); sm 2: NHWC 3x3 depthwise in the prefetched mode, which the plan
         * picks only past a quarter of the L3 (conv_stream_choice) */
        const int pf = l == RIDGE_NHWC && d.r == 3 && d.s == 3 && d.c_out % 16 == 0;
        for (int a = RIDGE_CONV_DIRECT; a < RIDGE_CONV_ALGO_COUNT; a++)
            for (int sm = 0; sm < 1 + (a == RIDGE_CONV_DIRECT || a == RIDGE_CONV_DEPTHWISE) +
                                      (a == RIDGE_CONV_DEPTHWISE && pf);
                 sm++) {
                if (only >= 0 && a != only) continue;
                ridge_conv2d_plan_options o = {.algo = (ridge_conv_algo)a, .fft_tile = fft_tile,
                                               .stream = sm == 1 ? 1 : -1};
                ridge_conv2d_plan *p = NULL;
                ridge_status st = ridge_conv2d_plan_create(ctx, &d, w, &o, &p);
                const ridge_conv2d_candidate *cand = NULL;
                if (st == RIDGE_EUNSUPPORTED) {
                    CHECK(p == NULL && strstr(ridge_last_error(), "does not apply"));
                    continue;
                }
                CHECKF(st == RIDGE_OK, "%s %s %s: %s", s->name, ridge_layout_name(l),
                       ridge_conv_algo_name((ridge_conv_algo)a), ridge_last_error());
                if (st) continue;
                if (sm == 2) p->stores = CONV_STORES_PREFETCHED;
                cand = ridge_conv2d_plan_candidates(p);
                CHECK(cand[a].applies && ridge_conv2d_plan_algo(p) == a);
                size_t wsb = ridge_conv2d_workspace_size(p, ridge_ctx_threads(ctx));
                void *ws = ridge_malloc(wsb);
                /* run e3 -> epilogue e: 0 -> 0, 1 -> 1 (residual aliasing y for odd algorithms),
                 * 2 -> 1 with the residual aliasing y, for depthwise (whose 3x3 rows recompute
                 * overlapped pixels unless the residual is y), 3 -> 2, 4 -> 3 (the kernels
                 * specialize their stores on ReLU and residual) */
                for (int e3 = 0; e3 < 5; e3++) {
                    if (e3 == 2 && a != RIDGE_CONV_DEPTHWISE) continue;
                    const int e = e3 == 0 ? 0 : e3 <= 2 ? 1 : e3 - 1;
                    const int alias = e3 == 2 || (e3 == 1 && a % 2);
                    for (size_t i = 0; i < yn + GUARD; i++)
                        y[i] = NAN;                         /* unread outputs stay NaN-free */
                    if (alias) memcpy(y, res, yn * 4);      /* residual aliasing y */
                    ridge_conv2d_epilogue ep = {e == 3 ? RIDGE_CONV_ACT_NONE : RIDGE_CONV_ACT_RELU,
                                                e == 2 ? NULL : alias ? y : res};
                    CHECK_OK(ridge_conv2d_forward(ctx, p, x, y, e ? bias : NULL, e ? &ep : NULL,
                                                  (a + e3) % 2 ? ws : NULL));
                    double maxerr = 0;
                    size_t bad = 0, at = 0;
                    for (size_t i = 0; i < yn; i++) {
                        double err = fabs((double)y[i] - ref[e][i]);
                        double scale = (double)mag[e ? 1 : 0][i] * FLT_EPSILON;
                        double u = scale > 0 ? err / scale : (err > 0 ? INFINITY : 0);
                        if (!(u <= maxerr)) maxerr = u, at = i;
                        if (!(u <= tol_eps((ridge_conv_algo)a, K))) bad++;
                    }
                    if (maxerr > worst[a]) worst[a] = maxerr;
                    CHECKF(bad == 0,
                           "%s %s %s%s %s %d threads ep%d fft_tile %d: %zu bad, max %.1f eps "
                           "at %zu (y %g ref %g)",
                           s->name, ridge_layout_name(l), ridge_conv_algo_name((ridge_conv_algo)a),
                           sm == 1 ? " streamed" : sm ? " prefetched" : "",
                           ridge_isa_name(ridge_ctx_isa(ctx)), ridge_ctx_threads(ctx), e, fft_tile,
                           bad, maxerr, at, y[at], ref[e][at]);
                    if (a == RIDGE_CONV_FFT && verbose > 1)
                        printf("fft %s %s T=%d: %.2f eps\n", s->name, ridge_layout_name(l),
                               fft_tile, maxerr);
                    int guard_ok = 1;
                    for (size_t i = yn; i < yn + GUARD; i++) guard_ok &= isnan(y[i]);
                    CHECKF(guard_ok, "%s %s %s: wrote past the output", s->name,
                           ridge_layout_name(l), ridge_conv_algo_name((ridge_conv_algo)a));
                }
                ridge_free(ws);
                ridge_conv2d_plan_destroy(p);
            }
    }
    free(x0), free(x), free(w), free(bias), free(res0), free(res), ridge_free(y);
    free(xa), free(wa), free(ba), free(ra);
    for (int e = 0; e < 4; e++) free(ref[e]);
    for (int e = 0; e < 2; e++) free(mag[e]);
}

static void test_shape(const shape *s, ridge_layout l, ridge_ctx *const *ctxs, int nctx)
{
    test_shape_algo(s, l, ctxs, nctx, -1, 0);
}

/* FFT over its own edge grid: 1x1 images, prime sizes and channel counts, c = 1, kernels 3
 * to 11, no padding and "same" padding (asymmetric for even extents), dilation, a batch, and
 * every tile size that fits, in every layout. */
static void test_fft(ridge_ctx *const *ctxs, int nctx)
{
    static const struct {
        int64_t n, ci, h, w, co, dil;
    } g[] = {{1, 1, 1, 1, 1, 1},   {1, 3, 13, 7, 5, 1}, {2, 1, 17, 19, 1, 1},
             {1, 7, 29, 31, 11, 1}, {1, 2, 23, 11, 3, 2}, {3, 5, 19, 21, 6, 1}};
    char name[64];
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++)
        for (int k = 3; k <= 11; k += 2)
            for (int same = 0; same < 2; same++) {
                int64_t ext = g[i].dil * (k - 1) + 1;
                shape s = {name, g[i].n, g[i].ci, g[i].h, g[i].w, g[i].co, k, k, 1, 1,
                           g[i].dil, g[i].dil, 0, 0, 0, 0, 1};
                if (same) {
                    s.pt = s.pl = (ext - 1) / 2;
                    s.pb = s.pr = ext - 1 - s.pt;
                }
                if (ext > g[i].h + s.pt + s.pb || ext > g[i].w + s.pl + s.pr) continue;
                snprintf(name, sizeof name, "fft-%lldx%lld-c%lld-%lld-k%d-dil%lld-%s",
                         (long long)g[i].h, (long long)g[i].w, (long long)g[i].ci,
                         (long long)g[i].co, k, (long long)g[i].dil, same ? "same" : "valid");
                /* the plan's tile in every layout, ISA and thread count; every other tile
                 * that fits in one layout on the last (widest ISA, 2 threads) context */
                for (int l = 0; l < 3; l++)
                    test_shape_algo(&s, (ridge_layout)l, ctxs, nctx, RIDGE_CONV_FFT, 0);
                for (int T = 8; T <= 64; T *= 2)
                    if (T >= ext)
                        test_shape_algo(&s, (ridge_layout)(i % 3), ctxs + nctx - 1, 1,
                                        RIDGE_CONV_FFT, T);
            }
    /* kernels of one row or one column (the plan's tile 1 x TW or TH x 1, up to 512 long),
     * dilated, valid and "same", images of one row and of a few */
    static const struct {
        int64_t n, ci, h, w, co, dil;
    } l1[] = {{1, 3, 1, 300, 5, 1}, {2, 17, 3, 200, 4, 1}, {1, 2, 2, 700, 3, 2}};
    static const int lens[] = {5, 31, 63, 129, 300};
    for (size_t i = 0; i < sizeof l1 / sizeof l1[0]; i++)
        for (int col = 0; col < 2; col++)
            for (size_t q = 0; q < sizeof lens / sizeof lens[0]; q++)
                for (int same = 0; same < 2; same++) {
                    int64_t ext = l1[i].dil * (lens[q] - 1) + 1, h = l1[i].h, w = l1[i].w;
                    if (col) h = l1[i].w, w = l1[i].h; /* the column case: the image turned */
                    shape s = {name, l1[i].n, l1[i].ci, h, w, l1[i].co, col ? lens[q] : 1,
                               col ? 1 : lens[q], 1, 1, l1[i].dil, l1[i].dil, 0, 0, 0, 0, 1};
                    int64_t *lo = col ? &s.pt : &s.pl, *hi = col ? &s.pb : &s.pr;
                    if (same) *lo = (ext - 1) / 2, *hi = ext - 1 - *lo;
                    if (ext > (col ? h : w) + *lo + *hi) continue;
                    snprintf(name, sizeof name, "fft-1d-%lldx%lld-c%lld-%lld-k%lldx%lld-dil%lld-%s",
                             (long long)h, (long long)w, (long long)s.ci, (long long)s.co,
                             (long long)s.r, (long long)s.s, (long long)s.dh,
                             same ? "same" : "valid");
                    for (int l = 0; l < 3; l++)
                        test_shape_algo(&s, (ridge_layout)l, ctxs, nctx, RIDGE_CONV_FFT, 0);
                }
}

/* The reference against a computation by hand, and against itself across layouts. */
static void test_reference(ridge_ctx *ctx)
{
    /* 1 x 1 x 3 x 3 input 1..9, 2x2 kernel [1 2; 3 4], pad 1 right/bottom only, stride 2 */
    ridge_conv2d_desc d;
    ridge_conv2d_desc_init(&d);
    d.n = 1, d.c_in = 1, d.h = 3, d.w = 3, d.c_out = 1, d.r = 2, d.s = 2;
    d.stride_h = d.stride_w = 2, d.pad_bottom = d.pad_right = 1;
    float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w[4] = {1, 2, 3, 4}, y[4], b = 0.5f;
    int64_t oh, ow;
    CHECK_OK(ridge_conv2d_desc_check(&d, &oh, &ow));
    CHECK(oh == 2 && ow == 2);
    CHECK_OK(ridge_conv2d_forward_ref(&d, x, w, y, &b, NULL));
    /* (0,0): 1+4+12+20 = 37; (0,1): 3+0+18+0 = 21; (1,0): 7+16 = 23; (1,1): 9 */
    CHECK(y[0] == 37.5f && y[1] == 21.5f && y[2] == 23.5f && y[3] == 9.5f);

    const shape *s = &shapes[17]; /* groups 4 */
    ridge_conv2d_desc dn = desc_of(s, RIDGE_NCHW);
    CHECK_OK(ridge_conv2d_desc_check(&dn, &oh, &ow));
    size_t xn = (size_t)(s->n * s->ci * s->h * s->w), yn = (size_t)(s->n * s->co * oh * ow);
    size_t wn = (size_t)(s->co * s->ci / s->g * 9);
    float *xs = malloc(xn * 4), *ws = malloc(wn * 4), *yr = malloc(yn * 4);
    fill(xs, xn, 7), fill(ws, wn, 8);
    CHECK_OK(ridge_conv2d_forward_ref(&dn, xs, ws, yr, NULL, NULL));
    for (int l = 1; l < 3; l++) {
        ridge_conv2d_desc dl = desc_of(s, (ridge_layout)l);
        size_t xl = ridge_tensor_elems((ridge_layout)l, s->n, s->ci, s->h, s->w);
        size_t yl = ridge_tensor_elems((ridge_layout)l, s->n, s->co, oh, ow);
        float *xt = malloc(xl * 4), *yt = malloc(yl * 4), *yb = malloc(yn * 4);
        CHECK_OK(ridge_layout_reorder(ctx, xt, (ridge_layout)l, xs, RIDGE_NCHW, s->n, s->ci, s->h,
                                      s->w));
        CHECK_OK(ridge_conv2d_forward_ref(&dl, xt, ws, yt, NULL, NULL));
        CHECK_OK(
            ridge_layout_reorder(ctx, yb, RIDGE_NCHW, yt, (ridge_layout)l, s->n, s->co, oh, ow));
        CHECKF(!memcmp(yb, yr, yn * 4), "reference differs between nchw and %s",
               ridge_layout_name((ridge_layout)l));
        if (l == RIDGE_NCHW16C) { /* padded channels written as zero */
            int zero = 1;
            for (size_t i = 0; i < yl; i++)
                if ((i % 16) >= (size_t)s->co) zero &= yt[i] == 0.0f;
            CHECK(zero);
        }
        free(xt), free(yt), free(yb);
    }
    free(xs), free(ws), free(yr);
}

static void expect_bad(ridge_ctx *ctx, ridge_conv2d_desc d, ridge_conv_algo a, ridge_status want,
                       const char *needle)
{
    static float w[4096];
    ridge_conv2d_plan_options o = {.algo = a};
    ridge_conv2d_plan *p = (ridge_conv2d_plan *)&o; /* must be reset to NULL */
    ridge_status st = ridge_conv2d_plan_create(ctx, &d, w, &o, &p);
    CHECKF(st == want && p == NULL && strstr(ridge_last_error(), needle),
           "want %s '%s', got %s '%s'", ridge_status_str(want), needle, ridge_status_str(st),
           ridge_last_error());
}

static void test_bad(ridge_ctx *ctx)
{
    ridge_conv2d_desc g = desc_of(&shapes[3], RIDGE_NHWC), d;
    d = g, d.n = 0;
    expect_bad(ctx, d, RIDGE_CONV_AUTO, RIDGE_EINVAL, "n = 0");
    d = g, d.c_in = -3;
    expect_bad(ctx, d, RIDGE_CONV_AUTO, RIDGE_EINVAL, "c_in = -3");
    d = g, d.stride_w = 0;
    expect_bad(ctx, d, RIDGE_CONV_AUTO, RIDGE_EINVAL, "stride_w");
    d = g, d.pad_left = -1;
    expect_bad(ctx, d, RIDGE_CONV_AUTO, RIDGE_EINVAL, "pad_left");
    d = g, d.groups = 3;
    expect_bad(ctx, d, RIDGE_CONV_AUTO, RIDGE_EINVAL, "groups = 3 must divide");
    d = g, d.r = 12, d.pad_top = d.pad_bottom = 1;
    expect_bad(ctx, d, RIDGE_CONV_AUTO, RIDGE_EINVAL, "output would be empty");
    d = g, d.layout = (ridge_layout)7;
    expect_bad(ctx, d, RIDGE_CONV_AUTO, RIDGE_EINVAL, "layout");
    d = g, d.h = (int64_t)1 << 40;
    expect_bad(ctx, d, RIDGE_CONV_AUTO, RIDGE_EOVERFLOW, "too large");
    d = g, d.n = d.c_in = d.c_out = d.h = d.w = ((int64_t)1 << 31) - 1;
    expect_bad(ctx, d, RIDGE_CONV_AUTO, RIDGE_EOVERFLOW, "");
    d = desc_of(&shapes[11], RIDGE_NHWC); /* 5x5 */
    expect_bad(ctx, d, RIDGE_CONV_WINOGRAD_4X3, RIDGE_EUNSUPPORTED, "needs a 3x3 kernel");
    d = desc_of(&shapes[8], RIDGE_NHWC); /* stride 2 */
    expect_bad(ctx, d, RIDGE_CONV_WINOGRAD_2X3, RIDGE_EUNSUPPORTED, "stride 1");
    expect_bad(ctx, d, RIDGE_CONV_POINTWISE, RIDGE_EUNSUPPORTED, "1x1");
    expect_bad(ctx, d, RIDGE_CONV_DEPTHWISE, RIDGE_EUNSUPPORTED, "groups = c_in = c_out");
    expect_bad(ctx, d, (ridge_conv_algo)42, RIDGE_EINVAL, "not a ridge_conv_algo");
    expect_bad(ctx, d, RIDGE_CONV_FFT, RIDGE_EUNSUPPORTED, "needs stride 1, groups 1");
    {
        static float wz[4096];
        ridge_conv2d_desc f = desc_of(&shapes[11], RIDGE_NHWC); /* 5x5 stride 2 */
        f.stride_h = f.stride_w = 1;
        ridge_conv2d_plan_options o = {.algo = RIDGE_CONV_FFT, .fft_tile = 12};
        ridge_conv2d_plan *q = NULL;
        CHECK(ridge_conv2d_plan_create(ctx, &f, wz, &o, &q) == RIDGE_EINVAL && !q &&
              strstr(ridge_last_error(), "fft_tile = 12"));
        f.r = f.s = 11, f.pad_top = f.pad_bottom = f.pad_left = f.pad_right = 5, o.fft_tile = 8;
        CHECK(ridge_conv2d_plan_create(ctx, &f, wz, &o, &q) == RIDGE_EINVAL && !q);
        o.fft_tile = 16;
        CHECK_OK(ridge_conv2d_plan_create(ctx, &f, wz, &o, &q));
        CHECK(q && strstr(ridge_conv2d_plan_explain(q), "16x16 tiles"));
        ridge_conv2d_plan_destroy(q);
        q = NULL;
        o.stream = 2;
        CHECK(ridge_conv2d_plan_create(ctx, &f, wz, &o, &q) == RIDGE_EINVAL && !q &&
              strstr(ridge_last_error(), "stream = 2"));
    }
    ridge_conv2d_plan *p = NULL;
    CHECK(ridge_conv2d_plan_create(ctx, &d, NULL, NULL, &p) == RIDGE_EINVAL && !p);
    CHECK(ridge_conv2d_plan_create(ctx, NULL, (float[1]){0}, NULL, &p) == RIDGE_EINVAL && !p);
    CHECK_OK(ridge_conv2d_plan_create(ctx, &d, (float[4096]){0}, NULL, &p));
    float v[8];
    CHECK(ridge_conv2d_forward(ctx, p, NULL, v, NULL, NULL, NULL) == RIDGE_EINVAL);
    ridge_conv2d_epilogue ep = {(ridge_conv_act)9, NULL};
    CHECK(ridge_conv2d_forward(ctx, p, v, v, NULL, &ep, NULL) == RIDGE_EINVAL);
    ridge_conv2d_plan_destroy(p);
    ridge_conv2d_plan_destroy(NULL);
    ridge_conv_algo a;
    ridge_layout l;
    CHECK(ridge_conv_algo_parse("winograd-4x3", &a) == RIDGE_OK && a == RIDGE_CONV_WINOGRAD_4X3);
    CHECK(ridge_conv_algo_parse("fft", &a) == RIDGE_OK && a == RIDGE_CONV_FFT);
    CHECK(ridge_conv_algo_parse("fftw", &a) == RIDGE_EINVAL);
    CHECK(ridge_layout_parse("nchw16c", &l) == RIDGE_OK && l == RIDGE_NCHW16C);
    CHECK(ridge_layout_parse("nchw8c", &l) == RIDGE_EINVAL);
    CHECK(ridge_tensor_elems(RIDGE_NCHW16C, 2, 17, 3, 5) == 2 * 32 * 15);
    CHECK(ridge_tensor_elems(RIDGE_NHWC, 0, 17, 3, 5) == 0);
}

/* AUTO's explanation, and tuning. */
static void test_plan(ridge_ctx *ctx)
{
    ridge_conv2d_desc d = desc_of(&shapes[4], RIDGE_NHWC); /* 3x3 64 -> 40 */
    size_t wn = (size_t)(d.c_out * d.c_in * 9);
    float *w = calloc(wn, 4);
    ridge_conv2d_plan *p = NULL;
    CHECK_OK(ridge_conv2d_plan_create(ctx, &d, w, NULL, &p));
    if (p) {
        const char *e = ridge_conv2d_plan_explain(p);
        const ridge_conv2d_candidate *c = ridge_conv2d_plan_candidates(p);
        ridge_conv_algo a = ridge_conv2d_plan_algo(p);
        CHECK(a != RIDGE_CONV_REF && c[a].applies && strstr(e, "pick: ") &&
              strstr(e, ridge_conv_algo_name(a)));
        CHECK(!c[RIDGE_CONV_POINTWISE].applies && c[RIDGE_CONV_WINOGRAD_4X3].applies);
        for (int i = 0; i < RIDGE_CONV_ALGO_COUNT; i++)
            CHECK(!c[i].applies || c[i].predicted_s > 0);
        if (verbose) puts(e);
        ridge_conv2d_plan_destroy(p);
    }
    ridge_conv2d_plan_options o;
    /* the explanation says how y is written: depthwise C = 32, forced each way, and by size
     * (x + y = 3.2 MB against the depthwise limit, whichever way that goes here) */
    d = desc_of(&shapes[4], RIDGE_NHWC);
    d.c_in = d.c_out = d.groups = 32, d.h = d.w = 112;
    ridge_conv2d_plan_options_init(&o);
    o.algo = RIDGE_CONV_DEPTHWISE;
    const char *want[3] = {"stores: through the cache (opts.stream = -1)",
                           "(x + y = 3.2 MB, ",
                           "stores: non-temporal, past the cache, when y is 64-byte aligned "
                           "(opts.stream = 1)"};
    for (o.stream = -1; o.stream <= 1; o.stream++) {
        CHECK_OK(ridge_conv2d_plan_create(ctx, &d, w, &o, &p));
        if (!p) continue;
        CHECKF(strstr(ridge_conv2d_plan_explain(p), want[o.stream + 1]) != NULL, "%s",
               ridge_conv2d_plan_explain(p));
        ridge_conv2d_plan_destroy(p);
    }
    /* a 5x5 window's kernel has no streamed stores: forced, it prefetches its input */
    d.r = d.s = 5, d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 2;
    o.stream = 1;
    CHECK_OK(ridge_conv2d_plan_create(ctx, &d, w, &o, &p));
    if (p) {
        CHECKF(strstr(ridge_conv2d_plan_explain(p),
                      "stores: through the cache, the input prefetched (opts.stream = 1)"),
               "%s", ridge_conv2d_plan_explain(p));
        ridge_conv2d_plan_destroy(p);
    }
    free(w);
}

/* The depthwise threads' claims (conv-algos.c, claim_from_shares), played in one thread so
 * that a thread runs out of work while the others' shares are started: every item claimed
 * exactly once, and the thread that is done first takes items from the started shares. */
static void test_shares(void)
{
    const size_t ns[] = {1, 2, 7, 28, 56, 113};
    const int nths[] = {2, 3, 5, 16};
    size_t helped_total = 0;
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
        for (size_t b = 0; b < sizeof nths / sizeof nths[0]; b++)
            for (int mode = 0; mode < 4; mode++) {
                const size_t n = ns[a], share = (n + (size_t)nths[b] - 1) / (size_t)nths[b];
                const size_t chunk = mode % 2 ? RIDGE_MAX(share / 2, 1) : 1;
                const int apart = mode / 2, first = (int)(n % 2);
                size_t helped = 0;
                const long bad =
                    conv_shares_check_for_tests(n, nths[b], chunk, apart, first, &helped);
                CHECKF(bad == 0, "depthwise shares: n %zu, %d threads, chunk %zu, apart %d: %ld "
                       "items not claimed exactly once", n, nths[b], chunk, apart, bad);
                /* a share of more than one chunk has items left after its thread's first claim */
                if (share > chunk && (size_t)nths[b] <= n)
                    CHECKF(helped > 0, "depthwise shares: n %zu, %d threads, chunk %zu: the thread "
                           "done first took nothing from the started shares", n, nths[b], chunk);
                helped_total += helped;
            }
    if (verbose) printf("depthwise shares: %zu items taken by helpers\n", helped_total);
}

/* The threads a depthwise layer runs on (dw_threads): one for a layer whose x + y is under
 * twice DW_MIN_BYTES_PER_THREAD, every thread of ctx past it; the pool's "pool.task" records
 * say how many ran. */
static void test_depthwise_threads(ridge_ctx *ctx)
{
    if (ridge_ctx_threads(ctx) < 2) return;
    conv_set_dw_min_bytes_for_tests(-1);
    const int64_t hws[2] = {14, 28}; /* C 64: x + y 100 KB and 400 KB */
    for (int i = 0; i < 2; i++) {
        ridge_conv2d_desc d;
        ridge_conv2d_desc_init(&d);
        d.layout = RIDGE_NHWC, d.n = 1, d.c_in = d.c_out = d.groups = 64, d.h = d.w = hws[i];
        d.r = d.s = 3, d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
        const size_t n = (size_t)(64 * hws[i] * hws[i]);
        float *w = malloc(64 * 9 * 4), *x = malloc(n * 4), *y = malloc(n * 4);
        fill(w, 64 * 9, 21), fill(x, n, 22);
        ridge_conv2d_plan_options o;
        ridge_conv2d_plan_options_init(&o);
        o.algo = RIDGE_CONV_DEPTHWISE;
        ridge_conv2d_plan *p = NULL;
        CHECK_OK(ridge_conv2d_plan_create(ctx, &d, w, &o, &p));
        CHECK_OK(ridge_profile_start(ctx, 256));
        CHECK_OK(ridge_conv2d_forward(ctx, p, x, y, NULL, NULL, NULL));
        ridge_profile_stop(ctx);
        const ridge_prof_record *rec;
        const size_t nrec = ridge_profile_records(ctx, &rec);
        int most = 0; /* the highest thread index that ran a task, plus one */
        for (size_t k = 0; k < nrec; k++)
            if (!strcmp(rec[k].op, "pool.task") && rec[k].thread >= most) most = rec[k].thread + 1;
        CHECKF(i == 0 ? most <= 1 : most == ridge_ctx_threads(ctx),
               "depthwise C 64 %lld x %lld: %d threads ran, want %s", (long long)hws[i],
               (long long)hws[i], most, i == 0 ? "1" : "all");
        ridge_conv2d_plan_destroy(p);
        free(w), free(x), free(y);
    }
    conv_set_dw_min_bytes_for_tests(0);
}

/* The depthwise ring's rule (dw_ring, dw_few_sets), seen through the per-thread workspace the
 * plan asks for (the ring's rows; in place none): NHWC 3x3 at stride 1 over channels that fall
 * into few L1 sets (and 5x5 to 7x7 windows over them) takes it where its slab would hold 32
 * channels or more; 128 channels (8 sets), rows too wide for 2 vectors of slab, and stride 2
 * where the AVX-512 kernel's blocks take one tap at a time (dw_s2_by_tap) read in place. */
static void test_depthwise_ring_rule(ridge_ctx *ctx)
{
    const size_t ways = ridge_cpu_get()->l1d / 4096;
    const int by_tap = ridge_ctx_isa(ctx) == RIDGE_ISA_AVX512;
    const struct {
        int64_t c, w, stride, k;
        int ring;
    } cases[] = {
        {256, 28, 1, 3, ways * 4 < 62}, /* 4 sets */
        {512, 20, 1, 3, ways * 2 < 62}, /* 2 sets */
        {1024, 28, 1, 3, 1},            /* 1 set (whole rows before: C 1024) */
        {128, 56, 1, 3, ways * 8 < 62}, /* 8 sets */
        {256, 28, 2, 3, 0},             /* stride 2, no ring for 256 channels */
        {256, 56, 1, 3, 0},             /* a slab of 16 */
        {512, 14, 2, 3, !by_tap},       /* 7 outputs a row */
        {512, 12, 2, 3, 1},             /* 6 outputs a row: too few for the blocks */
        {1024, 14, 2, 3, 1},            /* pixels 4 KiB apart: the blocks walk columns */
        {1024, 7, 1, 7, 1},             /* 7x7, 1 set */
        {512, 14, 1, 5, ways * 2 < 62}, /* 5x5, 2 sets */
        {128, 14, 1, 7, ways * 8 < 62}, /* 7x7, 8 sets */
        {768, 14, 2, 5, 0},             /* 5x5 at stride 2 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ridge_conv2d_desc d;
        ridge_conv2d_desc_init(&d);
        d.layout = RIDGE_NHWC, d.n = 1, d.c_in = d.c_out = d.groups = cases[i].c;
        d.h = 6, d.w = cases[i].w, d.r = d.s = cases[i].k;
        d.stride_h = d.stride_w = cases[i].stride;
        d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = cases[i].k / 2;
        float *w = calloc((size_t)(d.r * d.s * d.c_in), sizeof(float));
        ridge_conv2d_plan_options o;
        ridge_conv2d_plan_options_init(&o);
        o.algo = RIDGE_CONV_DEPTHWISE;
        ridge_conv2d_plan *p = NULL;
        CHECK_OK(ridge_conv2d_plan_create(ctx, &d, w, &o, &p));
        const size_t ws = p ? conv_algo_ws_per_thread(p, RIDGE_CONV_DEPTHWISE) : 0;
        CHECKF((ws > 0) == (cases[i].ring != 0),
               "depthwise %lldx%lld C %lld width %lld stride %lld: workspace %zu bytes, want %s",
               (long long)cases[i].k, (long long)cases[i].k, (long long)cases[i].c,
               (long long)cases[i].w, (long long)cases[i].stride, ws,
               cases[i].ring ? "a ring" : "none");
        ridge_conv2d_plan_destroy(p);
        free(w);
    }
}

/* Depthwise 3x3 with x + y between a quarter and 3/8 of the usable L3 stores through the
 * cache and prefetches its input (CONV_STORES_PREFETCHED): the plan says so, and the results
 * match the fp64 reference as the other paths' do. */
static void test_depthwise_prefetched(ridge_ctx *ctx)
{
    const double per_image = 2.0 * 64 * 56 * 56 * sizeof(float);
    const double l3 = (double)ridge_cpu_get()->l3_usable;
    const int64_t n = (int64_t)(l3 * 3 / 8 / per_image);
    if (n < 1 || n > 64 || (double)n * per_image <= l3 / 4) {
        SKIP("depthwise, input prefetched: no batch of 64 x 56 x 56 images between a quarter "
             "and 3/8 of this L3 (%.0f MB)", l3 / 1e6);
        return;
    }
    ridge_conv2d_desc d;
    ridge_conv2d_desc_init(&d);
    d.n = n, d.c_in = d.c_out = d.groups = 64, d.h = d.w = 56, d.r = d.s = 3;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
    d.layout = RIDGE_NHWC;
    const size_t xn = (size_t)n * 64 * 56 * 56;
    float *x = malloc(xn * 4), *w = malloc(64 * 9 * 4), *bias = malloc(64 * 4);
    float *y = ridge_malloc(xn * 4), *ref = malloc(xn * 4), *mag = malloc(xn * 4),
          *xa = malloc(xn * 4), *wa = malloc(64 * 9 * 4), *ba = malloc(64 * 4);
    fill(x, xn, 5), fill(w, 64 * 9, 6), fill(bias, 64, 7);
    for (size_t i = 0; i < xn; i++) xa[i] = fabsf(x[i]);
    for (int i = 0; i < 64 * 9; i++) wa[i] = fabsf(w[i]);
    for (int i = 0; i < 64; i++) ba[i] = fabsf(bias[i]);
    ridge_conv2d_epilogue ep = {RIDGE_CONV_ACT_RELU, NULL}, epa = {RIDGE_CONV_ACT_NONE, NULL};
    CHECK_OK(ridge_conv2d_forward_ref(&d, x, w, ref, bias, &ep));
    CHECK_OK(ridge_conv2d_forward_ref(&d, xa, wa, mag, ba, &epa));
    ridge_conv2d_plan_options o;
    ridge_conv2d_plan_options_init(&o);
    o.algo = RIDGE_CONV_DEPTHWISE;
    ridge_conv2d_plan *p = NULL;
    CHECK_OK(ridge_conv2d_plan_create(ctx, &d, w, &o, &p));
    if (p) {
        CHECKF(strstr(ridge_conv2d_plan_explain(p), "stores: through the cache, the input "
                                                    "prefetched") != NULL,
               "%s", ridge_conv2d_plan_explain(p));
        CHECK_OK(ridge_conv2d_forward(ctx, p, x, y, bias, &ep, NULL));
        size_t bad = 0;
        for (size_t i = 0; i < xn; i++)
            bad += !(fabs((double)y[i] - ref[i]) <=
                     tol_eps(RIDGE_CONV_DEPTHWISE, 9) * (double)mag[i] * FLT_EPSILON);
        CHECKF(bad == 0, "depthwise, input prefetched, batch %lld: %zu outputs off",
               (long long)n, bad);
        ridge_conv2d_plan_destroy(p);
    }
    free(x), free(w), free(bias), ridge_free(y), free(ref), free(mag), free(xa), free(wa), free(ba);
}

/* The text of a whole small file, or "" when it cannot be read. */
static const char *slurp(const char *path)
{
    static char buf[8192];
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = 0;
    return buf;
}

static void spit(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (f) fputs(text, f), fclose(f);
}

/* One tuned plan: its explanation must contain `want`; returns the algorithm picked. */
static ridge_conv_algo tuned(ridge_ctx *ctx, const ridge_conv2d_desc *d, const float *w, int tune,
                             const char *want)
{
    ridge_conv2d_plan_options o;
    ridge_conv2d_plan_options_init(&o);
    o.tune = tune;
    ridge_conv2d_plan *p = NULL;
    ridge_conv_algo a = RIDGE_CONV_AUTO;
    CHECK_OK(ridge_conv2d_plan_create(ctx, d, w, &o, &p));
    if (!p) return a;
    const ridge_conv2d_candidate *c = ridge_conv2d_plan_candidates(p);
    a = ridge_conv2d_plan_algo(p);
    for (int i = RIDGE_CONV_DIRECT; i < RIDGE_CONV_ALGO_COUNT; i++) {
        CHECK(!c[i].applies || c[i].measured_s > 0);
        CHECK(!c[i].applies || c[i].measured_s >= c[a].measured_s);
    }
    const char *e = ridge_conv2d_plan_explain(p);
    CHECKF(strstr(e, "fastest measured") && strstr(e, want), "want '%s' in:\n%s", want, e);
    ridge_conv2d_plan_destroy(p);
    return a;
}

/* Tuning: timed once, then reused from this process and, after it forgets, from the file
 * beside the roofline profile (in a temporary XDG_CACHE_HOME); re-timed on request; a file
 * that is not ours is left alone, bad lines are skipped and dropped. */
static void test_tune(ridge_ctx *ctx)
{
    ridge_conv2d_desc d = desc_of(&shapes[4], RIDGE_NHWC); /* 3x3 64 -> 40 */
    size_t wn = (size_t)(d.c_out * d.c_in * 9);
    float *w = calloc(wn, 4);
    char dir[] = "/tmp/ridge-test-tune-XXXXXX", path[4200], text[8192];
    const char *old_xdg = getenv("XDG_CACHE_HOME");
    char *saved_xdg = old_xdg ? strdup(old_xdg) : NULL;
    if (!w || !mkdtemp(dir)) {
        CHECKF(0, "test_tune: no temporary directory");
        free(w);
        free(saved_xdg);
        return;
    }
    setenv("XDG_CACHE_HOME", dir, 1);
    CHECK_OK(ridge_cache_file_path("conv-tune", ridge_ctx_cpu(ctx)->brand, ".txt", path,
                                   sizeof path));
    CHECK(strncmp(path, dir, strlen(dir)) == 0);
    conv_tune_forget();

    ridge_conv_algo a = tuned(ctx, &d, w, 1, "saved to ");
    snprintf(text, sizeof text, "%s", slurp(path));
    CHECKF(!strncmp(text, "ridge-conv-tune 1\n#", 19), "%s", text);
    conv_tune_entry e;
    const char *line = text; /* the third line: after the first line and the column names */
    for (int i = 0; i < 2 && line; i++) line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL;
    if (!line) line = "";
    CHECKF(conv_tune_parse_line(line, &e) && e.algo == a && e.threads == ridge_ctx_threads(ctx) &&
               e.d.c_in == d.c_in && e.d.c_out == d.c_out && e.d.layout == d.layout,
           "%s", line);
    CHECK(tuned(ctx, &d, w, 1, "cached in this process") == a);
    conv_tune_forget();
    char want[4300];
    snprintf(want, sizeof want, "cached in %s", path);
    CHECK(tuned(ctx, &d, w, 1, want) == a);
    /* a context whose conv_tune is 1 tunes the plans made without options */
    ridge_ctx_options co;
    ridge_ctx_options_init(&co);
    co.threads = ridge_ctx_threads(ctx), co.isa = ridge_ctx_isa(ctx), co.conv_tune = 1;
    ridge_ctx *tctx = NULL;
    CHECK_OK(ridge_ctx_create(&co, &tctx));
    ridge_conv2d_plan *tp = NULL;
    if (tctx) CHECK_OK(ridge_conv2d_plan_create(tctx, &d, w, NULL, &tp));
    CHECKF(tp && ridge_conv2d_plan_algo(tp) == a &&
               strstr(ridge_conv2d_plan_explain(tp), "fastest measured (") &&
               strstr(ridge_conv2d_plan_explain(tp), "cached in this process"),
           "%s", tp ? ridge_conv2d_plan_explain(tp) : "no plan");
    ridge_conv2d_plan_destroy(tp);
    ridge_ctx_destroy(tctx);
    tuned(ctx, &d, w, 2, "saved to "); /* timed again, the line replaced */
    int lines = 0;
    for (const char *t = slurp(path); (t = strchr(t, '\n')); t++) lines++;
    CHECKF(lines == 3, "%d lines:\n%s", lines, slurp(path));

    /* another shape appends; a line for a third shape with a bad field is dropped */
    ridge_conv2d_desc d2 = d;
    d2.h = d2.w = 9;
    tuned(ctx, &d2, w, 1, "saved to ");
    snprintf(text, sizeof text, "%sjunk line\navx512 1 1 -5 9 9 40 3 3 1 1 1 1 1 1 1 1 1 nhwc "
             "direct 1 - - - 1 1 1\n", slurp(path));
    spit(path, text);
    conv_tune_forget();
    snprintf(want, sizeof want, "cached in %s", path);
    tuned(ctx, &d2, w, 1, want); /* the junk does not hide the good lines */
    ridge_conv2d_desc d3 = d;
    d3.h = d3.w = 7;
    tuned(ctx, &d3, w, 1, "saved to ");
    snprintf(text, sizeof text, "%s", slurp(path));
    lines = 0;
    for (const char *t = text; (t = strchr(t, '\n')); t++) lines++;
    CHECKF(lines == 5 && !strstr(text, "junk") && !strstr(text, "-5"), "%s", text);

    /* a file that is not ours: timed, not saved, left as it was */
    spit(path, "my notes\n");
    conv_tune_forget();
    tuned(ctx, &d, w, 1, "not saved: ");
    CHECK(!strcmp(slurp(path), "my notes\n"));
    /* nowhere to save: still tuned */
    unsetenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    char *saved_home = home ? strdup(home) : NULL;
    unsetenv("HOME");
    conv_tune_forget();
    tuned(ctx, &d, w, 1, "not saved: conv-tune: neither XDG_CACHE_HOME nor HOME is set");
    if (saved_home) setenv("HOME", saved_home, 1);
    free(saved_home);

    ridge_conv2d_plan_options o;
    ridge_conv2d_plan_options_init(&o);
    ridge_conv2d_plan *p = NULL;
    for (int t = -1; t <= 3; t += 4) {
        o.tune = t;
        CHECK(ridge_conv2d_plan_create(ctx, &d, w, &o, &p) == RIDGE_EINVAL && !p);
        CHECK(strstr(ridge_last_error(), "tune") != NULL);
    }

    /* the line parser: a round trip, then each way a line can be wrong */
    memset(&e, 0, sizeof e);
    e.d = d, e.isa = RIDGE_ISA_AVX2, e.threads = 3, e.algo = RIDGE_CONV_WINOGRAD_2X3;
    e.measured[RIDGE_CONV_DIRECT] = 2e-3, e.measured[RIDGE_CONV_WINOGRAD_2X3] = 1.5e-3;
    char l[512];
    CHECK(conv_tune_format_line(&e, l, sizeof l) < sizeof l);
    conv_tune_entry back;
    CHECKF(conv_tune_parse_line(l, &back) && back.algo == e.algo && back.isa == e.isa &&
               back.threads == 3 && back.d.h == d.h && back.d.pad_left == d.pad_left &&
               fabs(back.measured[RIDGE_CONV_DIRECT] - 2e-3) < 1e-9 &&
               back.measured[RIDGE_CONV_IM2COL] == 0,
           "%s", l);
    const char *bad[] = {
        "",
        "avx512 1 1 64 12 14 40 3 3 1 1 1 1 1 1 1 1 1 nhwc direct 1 - - - 2 2",       /* short */
        "avx512 1 1 64 12 14 40 3 3 1 1 1 1 1 1 1 1 1 nhwc direct 1 - - - 2 2 2 2", /* long */
        "avx999 1 1 64 12 14 40 3 3 1 1 1 1 1 1 1 1 1 nhwc direct 1 - - - 2 2 2",
        "auto 1 1 64 12 14 40 3 3 1 1 1 1 1 1 1 1 1 nhwc direct 1 - - - 2 2 2",
        "avx512 0 1 64 12 14 40 3 3 1 1 1 1 1 1 1 1 1 nhwc direct 1 - - - 2 2 2",
        "avx512 1 1 64 12 14 40 3 3 1 1 1 1 1 1 1 1 7 nhwc direct 1 - - - 2 2 2", /* groups */
        "avx512 1 1 64 2 2 40 9 9 1 1 1 1 0 0 0 0 1 nhwc direct 1 - - - 2 2 2",   /* oh < 1 */
        "avx512 1 1 64 12 14 40 3 3 1 1 1 1 1 1 1 1 1 nhwc direct 1 - - - 2 2 2x",
        "avx512 1 1 64 12 14 40 3 3 1 1 1 1 1 1 1 1 1 nhwc direct 1 - - - 2 2 nan",
        "avx512 1 1 64 12 14 40 3 3 1 1 1 1 1 1 1 1 1 nhwc direct 1 - - - 2 2 -2",
        "avx512 1 1 64 12 14 40 3 3 1 1 1 1 1 1 1 1 1 nhwc direct 3 - - - 2 2 2", /* not fastest */
        "avx512 1 1 64 12 14 40 3 3 1 1 1 1 1 1 1 1 1 nhwc direct - - - - 2 2 2", /* not timed */
        "avx512 1 1 64 12 14 40 3 3 1 1 1 1 1 1 1 1 1 nhwc ref 1 - - - 2 2 2",
        "avx512 1 1 64 12 14 40 3 3 1 1 1 1 1 1 1 1 1 nhwc auto 1 - - - 2 2 2",
        "avx512 1 1 64 12 14 40 3 3 1 1 1 1 1 1 1 1 1 nhwc8 direct 1 - - - 2 2 2",
        "avx512 1 1 99999999999999999999 12 14 40 3 3 1 1 1 1 1 1 1 1 1 nhwc direct 1 - - - 2 2 2",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECKF(!conv_tune_parse_line(bad[i], &back), "accepted: %s", bad[i]);
    CHECK(conv_tune_parse_line(
        "avx512 1 1 64 12 14 40 3 3 1 1 1 1 1 1 1 1 1 nhwc direct 1 - - - 2 2 2", &back));

    if (saved_xdg) setenv("XDG_CACHE_HOME", saved_xdg, 1);
    else unsetenv("XDG_CACHE_HOME");
    free(saved_xdg);
    conv_tune_forget();
    remove(path);
    snprintf(path, sizeof path, "%s/ridge", dir);
    rmdir(path);
    rmdir(dir);
    free(w);
}

static void test_fold_bn(ridge_ctx *ctx)
{
    ridge_conv2d_desc d = desc_of(&shapes[3], RIDGE_NHWC);
    int64_t oh, ow;
    CHECK_OK(ridge_conv2d_desc_check(&d, &oh, &ow));
    size_t wn = (size_t)(d.c_out * d.c_in * 9), xn = (size_t)(d.h * d.w * d.c_in);
    size_t yn = (size_t)(oh * ow * d.c_out);
    float *w = malloc(wn * 4), *x = malloc(xn * 4), *y = malloc(yn * 4), *yf = malloc(yn * 4);
    float b[17], gm[17], bt[17], mu[17], var[17];
    fill(w, wn, 11), fill(x, xn, 12), fill(b, 17, 13), fill(gm, 17, 14), fill(bt, 17, 15);
    fill(mu, 17, 16), fill(var, 17, 17);
    for (int i = 0; i < 17; i++) var[i] = fabsf(var[i]) + 0.1f;
    CHECK_OK(ridge_conv2d_forward_ref(&d, x, w, y, b, NULL));
    for (size_t i = 0; i < yn; i++) { /* BN on top, in double */
        int c = (int)(i % 17);
        y[i] = (float)(((double)y[i] - mu[c]) / sqrt((double)var[c] + 1e-5) * gm[c] + bt[c]);
    }
    CHECK_OK(ridge_conv2d_fold_bn(17, 16 * 9, w, b, gm, bt, mu, var, 1e-5f));
    ridge_conv2d_plan *p = NULL;
    CHECK_OK(ridge_conv2d_plan_create(ctx, &d, w, NULL, &p));
    CHECK_OK(ridge_profile_start(ctx, 256));
    CHECK_OK(ridge_conv2d_forward(ctx, p, x, yf, b, NULL, NULL));
    ridge_profile_stop(ctx);
    const ridge_prof_record *rec;
    size_t nrec = ridge_profile_records(ctx, &rec), found = 0;
    for (size_t i = 0; i < nrec; i++)
        found += !strcmp(rec[i].op, "conv2d") &&
                 !strcmp(rec[i].algo, ridge_conv_algo_name(ridge_conv2d_plan_algo(p))) &&
                 rec[i].flops == ridge_conv2d_flops(&d);
    CHECK(found == 1); /* the profiler sees the forward, with its algorithm and FLOPs */
    double maxd = 0;
    for (size_t i = 0; i < yn; i++) maxd = fmax(maxd, fabs((double)yf[i] - y[i]));
    CHECKF(maxd < 1e-4, "fold_bn: max difference %g", maxd);
    var[3] = -1.0f;
    CHECK(ridge_conv2d_fold_bn(17, 16 * 9, w, b, gm, bt, mu, var, 1e-5f) == RIDGE_EINVAL);
    ridge_conv2d_plan_destroy(p);
    free(w), free(x), free(y), free(yf);
}

/* 2 threads give the bits of 1 thread for algorithm `algo` on each shape, run many times so
 * that the threads' shares vary. */
static void check_split(ridge_ctx *c1, ridge_ctx *c2, ridge_conv_algo algo, const shape *shapes,
                        size_t count)
{
    for (size_t s = 0; s < count; s++) {
        const ridge_conv2d_desc d = desc_of(&shapes[s], RIDGE_NHWC);
        int64_t oh, ow;
        CHECK_OK(ridge_conv2d_desc_check(&d, &oh, &ow));
        size_t xn = (size_t)(d.n * d.c_in * d.h * d.w), yn = (size_t)(d.n * d.c_out * oh * ow);
        size_t wn = (size_t)(d.c_out * d.c_in * d.r * d.s);
        float *x = malloc(xn * 4), *w = malloc(wn * 4), *y1 = malloc(yn * 4), *y2 = malloc(yn * 4);
        fill(x, xn, 11), fill(w, wn, 12);
        ridge_conv2d_plan_options o = {.algo = algo};
        ridge_conv2d_plan *p1 = NULL, *p2 = NULL;
        CHECK_OK(ridge_conv2d_plan_create(c1, &d, w, &o, &p1));
        CHECK_OK(ridge_conv2d_plan_create(c2, &d, w, &o, &p2));
        if (p1 && p2) {
            CHECK_OK(ridge_conv2d_forward(c1, p1, x, y1, NULL, NULL, NULL));
            int differ = 0;
            for (int rep = 0; rep < 40 && !differ; rep++) {
                CHECK_OK(ridge_conv2d_forward(c2, p2, x, y2, NULL, NULL, NULL));
                differ = memcmp(y1, y2, yn * 4) != 0;
            }
            CHECKF(!differ, "%s %s: 2 threads differ from 1", ridge_conv_algo_name(algo),
                   shapes[s].name);
        }
        ridge_conv2d_plan_destroy(p1);
        ridge_conv2d_plan_destroy(p2);
        free(x), free(w), free(y1), free(y2);
    }
}

/* Direct on 2 threads gives the bits of 1 thread: the rows of a layer of 20 MFLOP or more
 * per thread are handed out at run time, so a thread's share may start anywhere, and the
 * border columns of its first rows go as shorter vertical runs than on 1 thread. Winograd's
 * tiles are handed out at run time too, in blocks whose sizes depend on who claims them, and
 * so are depthwise's rows. */
static void test_direct_split(ridge_ctx *c1, ridge_ctx *c2)
{
    static const shape split_shapes[] = {/* 59, 59, 95, 68 and 71 MFLOP */
        /* name          n  ci  h    w    co  r  s  sh sw dh dw pt pb pl pr g */
        {"3x3-40",       2, 16, 40,  40,  64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
        {"7x7-s2-112",   1, 3,  112, 112, 64, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3, 1},
        {"5x5-61",       2, 8,  61,  61,  32, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 1},
        /* runs of one or two rows take their border columns along the rows (direct_edges),
         * where 1 thread's runs of six go down the columns */
        {"7x7-30-g2",    1, 32, 30,  30,  48, 7, 7, 1, 1, 1, 1, 3, 3, 3, 3, 2},
        {"11x11-24",     1, 16, 24,  24,  32, 11, 11, 1, 1, 1, 1, 5, 5, 5, 5, 1},
        /* fewer rows than two a thread: each row in column segments (direct_segments);
         * reductions of 9 steps (c_in = 1, 1x9), groups, stride and dilation, rows cut by
         * the top and bottom borders, channel blocks in pairs (40 = 32 + 8) */
        {"1x5-row",      1, 32, 1,   3001, 32, 1, 5, 1, 1, 1, 1, 0, 0, 2, 2, 1},
        {"1x9-c1",       1, 1,  1,  20000, 32, 1, 9, 1, 1, 1, 1, 0, 0, 4, 4, 1},
        {"1x7-g2",       1, 32, 1,   1500, 64, 1, 7, 1, 1, 1, 1, 0, 0, 3, 3, 2},
        {"1x3-s2-d2",    1, 48, 1,   4001, 40, 1, 3, 1, 2, 1, 2, 0, 0, 2, 2, 1},
        {"3x3-h2",       1, 16, 2,   2000, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}};
    static const shape wino_shapes[] = {
        /* name          n  ci  h    w    co  r  s  sh sw dh dw pt pb pl pr g */
        {"fmnist-b8",    8, 32, 14,  14,  64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
        {"odd-b3",       3, 19, 13,  17,  40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
        {"one-image",    1, 32, 14,  14,  64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}};
    check_split(c1, c2, RIDGE_CONV_DIRECT, split_shapes, sizeof split_shapes / sizeof split_shapes[0]);
    check_split(c1, c2, RIDGE_CONV_WINOGRAD_2X3, wino_shapes, 3);
    check_split(c1, c2, RIDGE_CONV_WINOGRAD_4X3, wino_shapes, 3);
    static const shape dw_shapes[] = {
        /* name          n  ci  h    w    co  r  s  sh sw dh dw pt pb pl pr g */
        {"dw-32-112",    1, 32, 112, 112, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 32},
        {"dw-48-s2-b3",  3, 48, 29,  31,  48, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 48},
        /* fewer rows than two a thread: each row in column segments (depthwise_segments);
         * 3x3 on one and two rows (rows cut by both borders), a causal 1x4, stride 2 */
        {"dw-3x3-h1",    1, 32, 1,   3000, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 32},
        {"dw-1x4-causal", 1, 48, 1,  4000, 48, 1, 4, 1, 1, 1, 1, 0, 0, 3, 0, 48},
        {"dw-1x3-c20",   1, 20, 1,   2999, 20, 1, 3, 1, 1, 1, 1, 0, 0, 1, 1, 20},
        {"dw-3x3-s2-h2", 1, 16, 2,   5001, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 16},
        {"dw-1x7-row",   1, 24, 1,   3000, 24, 1, 7, 1, 1, 1, 1, 0, 0, 3, 3, 24}};
    check_split(c1, c2, RIDGE_CONV_DEPTHWISE, dw_shapes, sizeof dw_shapes / sizeof dw_shapes[0]);
}

/* Winograd with fewer tile blocks than threads and U past 4 MiB (264 -> 256 channels on a
 * 6 x 7 image): on 2 threads the threads share each block step by step (smaller layers give
 * each thread its own tiles, which the shape grid covers). */
static void test_winograd_shared(ridge_ctx *const *ctxs, int nctx)
{
    static const shape big = {"wino-shared-264-256", 1, 264, 6, 7, 256, 3, 3, 1, 1, 1, 1,
                              1, 1, 1, 1, 1};
    const ridge_layout ls[] = {RIDGE_NHWC, RIDGE_NCHW16C};
    for (int l = 0; l < 2; l++) {
        test_shape_algo(&big, ls[l], ctxs, nctx, RIDGE_CONV_WINOGRAD_2X3, 0);
        test_shape_algo(&big, ls[l], ctxs, nctx, RIDGE_CONV_WINOGRAD_4X3, 0);
    }
}

/* The fused depthwise-separable block against the two references one after the other. */
static void test_separable(ridge_ctx *ctx)
{
    const struct {
        int64_t n, c, h, w, st, co;
    } g[] = {{2, 19, 9, 11, 1, 24}, {1, 32, 13, 12, 2, 40}, {1, 8, 1, 3, 1, 5},
             {1, 16, 5, 31, 1, 8},
             /* images taller than the workspace's strip (conv_separable_strip_rows): units
              * of rows spread over the threads, the last one short; a strip of one row */
             {2, 64, 40, 40, 1, 64}, {3, 96, 45, 33, 1, 20}, {1, 64, 5, 1100, 1, 8}};
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
        ridge_conv2d_desc dd, pd;
        ridge_conv2d_desc_init(&dd);
        dd.n = g[i].n, dd.c_in = dd.c_out = dd.groups = g[i].c, dd.h = g[i].h, dd.w = g[i].w;
        dd.r = dd.s = 3, dd.stride_h = dd.stride_w = g[i].st, dd.layout = RIDGE_NHWC;
        dd.pad_top = dd.pad_bottom = dd.pad_left = dd.pad_right = 1;
        int64_t oh, ow;
        CHECK_OK(ridge_conv2d_desc_check(&dd, &oh, &ow));
        ridge_conv2d_desc_init(&pd);
        pd.n = dd.n, pd.c_in = dd.c_out, pd.h = oh, pd.w = ow, pd.c_out = g[i].co;
        pd.r = pd.s = 1, pd.layout = RIDGE_NHWC;
        size_t xn = (size_t)(dd.n * dd.c_in * dd.h * dd.w),
               mn = (size_t)(dd.n * dd.c_out * oh * ow);
        size_t yn = (size_t)(pd.n * pd.c_out * oh * ow);
        float *x = malloc(xn * 4), *wd = malloc((size_t)dd.c_out * 9 * 4),
              *bd = malloc(dd.c_out * 4);
        float *wp = malloc((size_t)(pd.c_out * pd.c_in) * 4), *bp = malloc(pd.c_out * 4);
        /* y aligned (ridge_malloc: 64 bytes), so that the streamed stores can run */
        float *mid = malloc(mn * 4), *want = malloc(yn * 4), *y = ridge_malloc(yn * 4),
              *res = malloc(yn * 4);
        fill(x, xn, 31), fill(wd, (size_t)dd.c_out * 9, 32), fill(bd, (size_t)dd.c_out, 33);
        fill(wp, (size_t)(pd.c_out * pd.c_in), 34), fill(bp, (size_t)pd.c_out, 35),
            fill(res, yn, 36);
        ridge_conv2d_epilogue e1 = {RIDGE_CONV_ACT_RELU, NULL}, e2 = {RIDGE_CONV_ACT_RELU, res};
        CHECK_OK(ridge_conv2d_forward_ref(&dd, x, wd, mid, bd, &e1));
        CHECK_OK(ridge_conv2d_forward_ref(&pd, mid, wp, want, bp, &e2));
        /* stream 1: the plans' store choices past the cache (x prefetched by the depthwise
         * step, y streamed by the pointwise one, where the channels allow) */
        for (int stream = 0; stream < 2; stream++) {
            ridge_conv2d_plan_options od = {.algo = RIDGE_CONV_DEPTHWISE, .stream = stream};
            ridge_conv2d_plan_options op = {.algo = RIDGE_CONV_POINTWISE, .stream = stream};
            ridge_conv2d_plan *dp = NULL, *pp = NULL;
            CHECK_OK(ridge_conv2d_plan_create(ctx, &dd, wd, &od, &dp));
            CHECK_OK(ridge_conv2d_plan_create(ctx, &pd, wp, &op, &pp));
            if (dp && pp) {
                memset(y, 0, yn * 4);
                CHECK_OK(ridge_conv2d_separable_forward(ctx, dp, pp, x, y, bd, &e1, bp, &e2,
                                                        NULL));
                double e = 0;
                for (size_t k = 0; k < yn; k++) e = fmax(e, fabs((double)y[k] - want[k]));
                CHECKF(e < 1e-4, "separable %zu, stream %d: max error %g", i, stream, e);
                CHECK(ridge_conv2d_separable_forward(ctx, pp, dp, x, y, NULL, NULL, NULL, NULL,
                                                     NULL) == RIDGE_EUNSUPPORTED);
                CHECK(ridge_conv2d_separable_forward(ctx, dp, dp, x, y, NULL, NULL, NULL, NULL,
                                                     NULL) == RIDGE_EUNSUPPORTED);
            }
            ridge_conv2d_plan_destroy(dp), ridge_conv2d_plan_destroy(pp);
        }
        free(x), free(wd), free(bd), free(wp), free(bp), free(mid), free(want), free(res);
        ridge_free(y);
    }
}

/* Index of logical element (n, c, y, x) in layout l, from the layouts' definitions */
static size_t layout_at(ridge_layout l, int64_t C, int64_t H, int64_t W, int64_t n, int64_t c,
                        int64_t y, int64_t x)
{
    if (l == RIDGE_NHWC) return (size_t)(((n * H + y) * W + x) * C + c);
    if (l == RIDGE_NCHW16C)
        return (size_t)((((n * ((C + 15) / 16) + c / 16) * H + y) * W + x) * 16 + c % 16);
    return (size_t)(((n * C + c) * H + y) * W + x);
}

/* ridge_layout_reorder between every pair of layouts (the same one too) on shapes with
 * channels below, at and past a block of 16 and of the 8 x 8 transposes, single pixels and
 * rows, against the index formulas: every element where it belongs, padded channels of an
 * NCHW16c destination 0 (the destination starts as NaN), every ISA and thread count. */
static void test_reorder(ridge_ctx **ctxs, int nctx)
{
    const int64_t g[][4] = {{1, 1, 1, 1},  {1, 3, 5, 7},   {2, 8, 8, 8},   {1, 15, 3, 11},
                            {2, 16, 9, 2}, {1, 17, 13, 1}, {1, 33, 1, 17}, {3, 64, 6, 7},
                            {1, 5, 40, 41}, {1, 200, 4, 5}};
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
        const int64_t n = g[i][0], C = g[i][1], H = g[i][2], W = g[i][3];
        const size_t big = ridge_tensor_elems(RIDGE_NCHW16C, n, C, H, W);
        float *src = malloc(big * 4), *dst = malloc(big * 4);
        for (int sl = 0; sl < 3; sl++)
            for (int dl = 0; dl < 3; dl++)
                for (int k = 0; k < nctx; k++) {
                    const size_t sn = ridge_tensor_elems((ridge_layout)sl, n, C, H, W);
                    const size_t dn = ridge_tensor_elems((ridge_layout)dl, n, C, H, W);
                    for (size_t e = 0; e < sn; e++) src[e] = (float)e + 0.5f;
                    for (size_t e = 0; e < dn; e++) dst[e] = NAN;
                    CHECK_OK(ridge_layout_reorder(ctxs[k], dst, (ridge_layout)dl, src,
                                                  (ridge_layout)sl, n, C, H, W));
                    size_t bad = 0;
                    const int64_t cp = dl == RIDGE_NCHW16C ? (C + 15) / 16 * 16 : C;
                    for (int64_t b = 0; b < n; b++)
                        for (int64_t c = 0; c < cp; c++)
                            for (int64_t y = 0; y < H; y++)
                                for (int64_t x = 0; x < W; x++) {
                                    float want =
                                        c < C ? src[layout_at((ridge_layout)sl, C, H, W, b, c, y, x)]
                                              : 0.0f;
                                    bad += !(dst[layout_at((ridge_layout)dl, C, H, W, b, c, y, x)] ==
                                             want);
                                }
                    CHECKF(bad == 0, "reorder %s -> %s, %lld x %lld x %lld x %lld, %s, %d threads: "
                           "%zu elements wrong", ridge_layout_name((ridge_layout)sl),
                           ridge_layout_name((ridge_layout)dl), (long long)n, (long long)C,
                           (long long)H, (long long)W, ridge_isa_name(ridge_ctx_isa(ctxs[k])),
                           ridge_ctx_threads(ctxs[k]), bad);
                }
        free(src), free(dst);
    }
    float f[4];
    CHECK(ridge_layout_reorder(ctxs[0], NULL, RIDGE_NHWC, f, RIDGE_NCHW, 1, 1, 1, 1) ==
          RIDGE_EINVAL);
    CHECK(ridge_layout_reorder(ctxs[0], f, (ridge_layout)3, f + 2, RIDGE_NCHW, 1, 1, 1, 1) ==
          RIDGE_EINVAL);
    CHECK(ridge_layout_reorder(ctxs[0], f, RIDGE_NHWC, f + 2, RIDGE_NCHW, 1, 0, 1, 1) ==
          RIDGE_EINVAL);
}

/* Pools x (d in NCHW, filled from seed) in every layout and context against plain loops in
 * double, and checks that every context gives the bits of the first (the builds take each
 * window's taps in one order); returns the number of failed checks. */
static int check_pool(ridge_ctx **ctxs, int nctx, ridge_pool2d_desc d, unsigned seed,
                      const char *what)
{
    const int kind = d.kind == RIDGE_POOL_AVG, failed = test_failed;
    int64_t oh, ow;
    CHECK_OK(ridge_pool2d_desc_check(&d, &oh, &ow));
    size_t xn = (size_t)(d.n * d.c * d.h * d.w), yn = (size_t)(d.n * d.c * oh * ow);
    float *x = malloc(xn * 4), *want = malloc(yn * 4), *y0 = malloc(yn * 4), *y1 = malloc(yn * 4);
    fill(x, xn, seed);
    for (int64_t nc = 0; nc < d.n * d.c; nc++)
        for (int64_t a = 0; a < oh; a++)
            for (int64_t b = 0; b < ow; b++) {
                double acc = kind ? 0.0 : -INFINITY;
                int cnt = 0;
                for (int64_t r = 0; r < d.r; r++)
                    for (int64_t s = 0; s < d.s; s++) {
                        int64_t ih = a * d.stride_h - d.pad_top + r;
                        int64_t iw = b * d.stride_w - d.pad_left + s;
                        if (ih < 0 || ih >= d.h || iw < 0 || iw >= d.w) continue;
                        double v = x[(nc * d.h + ih) * d.w + iw];
                        acc = kind ? acc + v : fmax(acc, v);
                        cnt++;
                    }
                want[(nc * oh + a) * ow + b] =
                    (float)(kind ? acc / (d.count_pad ? d.r * d.s : cnt) : acc);
            }
    for (int l = 0; l < 3; l++)
        for (int q = 0; q < nctx; q++) {
            ridge_ctx *ctx = ctxs[q];
            d.layout = (ridge_layout)l;
            size_t xl = ridge_tensor_elems(d.layout, d.n, d.c, d.h, d.w);
            size_t yl = ridge_tensor_elems(d.layout, d.n, d.c, oh, ow);
            float *xt = malloc(xl * 4), *yt = malloc(yl * 4);
            CHECK_OK(ridge_layout_reorder(ctx, xt, d.layout, x, RIDGE_NCHW, d.n, d.c, d.h, d.w));
            CHECK_OK(ridge_pool2d_forward(ctx, &d, xt, yt));
            float *y = q ? y1 : y0;
            CHECK_OK(ridge_layout_reorder(ctx, y, RIDGE_NCHW, yt, d.layout, d.n, d.c, oh, ow));
            double e = 0;
            for (size_t k = 0; k < yn; k++) e = fmax(e, fabs((double)y[k] - want[k]));
            CHECKF(e <= 1e-6, "pool %s kind %d count_pad %d %s, %s, %d threads: max error %g",
                   what, kind, d.count_pad, ridge_layout_name(d.layout),
                   ridge_isa_name(ridge_ctx_isa(ctx)), ridge_ctx_threads(ctx), e);
            CHECKF(q == 0 || memcmp(y0, y1, yn * 4) == 0, "pool %s kind %d %s: %s, %d threads "
                   "differs in its bits from %s, %d threads", what, kind,
                   ridge_layout_name(d.layout), ridge_isa_name(ridge_ctx_isa(ctx)),
                   ridge_ctx_threads(ctx), ridge_isa_name(ridge_ctx_isa(ctxs[0])),
                   ridge_ctx_threads(ctxs[0]));
            free(xt), free(yt);
        }
    free(x), free(want), free(y0), free(y1);
    return test_failed - failed;
}

/* Pooling in every layout against plain NCHW loops, every ISA and thread count. */
static void test_pool(ridge_ctx **ctxs, int nctx)
{
    const struct {
        int64_t n, c, h, w, r, s, st, pt, pb, pl, pr;
    } g[] = {{1, 3, 7, 9, 2, 2, 2, 0, 1, 0, 1}, {2, 19, 6, 5, 3, 3, 1, 1, 1, 1, 1},
             {1, 70, 5, 5, 3, 2, 2, 1, 2, 0, 1}, {1, 16, 1, 1, 1, 1, 1, 0, 0, 0, 0},
             /* rows of 17, 36 and 36 output pixels: blocks of pixels inside, borders apart */
             {1, 16, 9, 33, 3, 3, 2, 1, 1, 1, 1}, {2, 33, 4, 37, 2, 2, 1, 0, 0, 0, 0},
             {1, 3, 5, 71, 3, 3, 2, 1, 1, 1, 1},
             /* windows of whole rows (one run in NCHW): a global average, rows padded */
             {2, 5, 7, 7, 7, 7, 1, 0, 0, 0, 0}, {1, 4, 5, 3, 3, 3, 1, 1, 1, 0, 0}};
    char what[32];
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++)
        for (int kind = 0; kind < 2; kind++)
            for (int cp = 0; cp < 2; cp++) {
                ridge_pool2d_desc d = {g[i].n, g[i].c, g[i].h, g[i].w, g[i].r, g[i].s, g[i].st,
                                       g[i].st, g[i].pt, g[i].pb, g[i].pl, g[i].pr,
                                       (ridge_pool_kind)kind, cp, RIDGE_NCHW};
                snprintf(what, sizeof what, "%zu", i);
                check_pool(ctxs, nctx, d, 21 + (unsigned)i, what);
            }
    /* random descriptors: rows up to 70 wide, windows up to 4 x 8, strides 1-3 each way, any
     * padding below the window (every vector width's spans, overlaps and borders) */
    unsigned long long rs = 0x9e3779b97f4a7c15ull;
    int failures = 0;
    for (int i = 0; i < 120 && failures < 3; i++) {
        int64_t v[12];
        for (int k = 0; k < 12; k++) {
            rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
            v[k] = (int64_t)(rs >> 33);
        }
        const int64_t r = 1 + v[4] % 4, s = 1 + v[5] % 8;
        ridge_pool2d_desc d = {1 + v[0] % 2, 1 + v[1] % 18, 1 + v[2] % 20, 1 + v[3] % 70, r, s,
                               1 + v[6] % 3, 1 + v[7] % 3, v[8] % r, v[9] % r, v[10] % s,
                               v[11] % s, (ridge_pool_kind)(i % 2), (i / 2) % 2, RIDGE_NCHW};
        if (ridge_pool2d_desc_check(&d, NULL, NULL)) continue; /* window past the padded input */
        snprintf(what, sizeof what, "random %d", i);
        failures += check_pool(ctxs, nctx, d, 100 + (unsigned)i, what) > 0;
    }
    ridge_pool2d_desc bad = {1, 4, 5, 5, 2, 2, 2, 2, 2, 0, 0, 0, RIDGE_POOL_MAX, 0, RIDGE_NHWC};
    CHECK(ridge_pool2d_desc_check(&bad, NULL, NULL) == RIDGE_EINVAL &&
          strstr(ridge_last_error(), "smaller than"));
    bad.pad_top = 0, bad.c = 0;
    CHECK(ridge_pool2d_desc_check(&bad, NULL, NULL) == RIDGE_EINVAL &&
          strstr(ridge_last_error(), "pool2d: c = 0"));
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        int n = 0;
        if (!strcmp(argv[i], "-v")) verbose = 1;
        else if (!strcmp(argv[i], "-vv")) verbose = 2;
        else if (!strcmp(argv[i], "--shard") && i + 1 < argc &&
                 sscanf(argv[i + 1], "%d/%d%n", &shard_k, &shard_n, &n) == 2 && !argv[i + 1][n] &&
                 shard_n >= 1 && shard_k >= 0 && shard_k < shard_n)
            i++;
        else {
            fprintf(stderr, "usage: test-conv [-v | -vv] [--shard K/N], 0 <= K < N\n");
            return 2;
        }
    }
    ridge_ctx *ctxs[6];
    int nctx = 0;
    const ridge_isa isas[] = {RIDGE_ISA_REF, RIDGE_ISA_AVX2, RIDGE_ISA_AVX512};
    for (int i = 0; i < 3; i++)
        for (int t = 1; t <= 2; t++) {
            ridge_ctx *c = test_ctx(t, isas[i]);
            if (c) ctxs[nctx++] = c;
            else if (test_failed) return test_finish("test-conv");
        }
    /* every depthwise layer split among the threads, however small (dw_threads), so that the
     * 2-thread contexts run the threaded paths on the small shapes below */
    conv_set_dw_min_bytes_for_tests(0);
    if (my_part()) test_reference(ctxs[0]);
    if (my_part()) test_bad(ctxs[nctx - 1]);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        if (my_part())
            for (int l = 0; l < 3; l++) test_shape(&shapes[s], (ridge_layout)l, ctxs, nctx);
    if (my_part()) test_fft(ctxs, nctx);
    if (my_part()) test_winograd_shared(ctxs, nctx);
    if (my_part()) test_plan(ctxs[nctx - 1]);
    if (my_part()) test_shares();
    if (my_part()) test_depthwise_threads(ctxs[nctx - 1]);
    if (my_part()) test_depthwise_ring_rule(ctxs[nctx - 1]);
    if (my_part()) test_depthwise_prefetched(ctxs[nctx - 1]);
    if (my_part()) test_tune(ctxs[nctx - 1]);
    if (my_part()) test_fold_bn(ctxs[nctx - 1]);
    if (my_part()) test_reorder(ctxs, nctx);
    if (my_part()) test_pool(ctxs, nctx);
    if (my_part())
        for (int i = 0; i < nctx; i++) test_separable(ctxs[i]);
    /* the widest ISA, 1 and 2 threads */
    if (my_part()) test_direct_split(ctxs[nctx - 2], ctxs[nctx - 1]);
    printf("max error vs the fp64 reference, units of eps x sum of magnitudes:\n");
    for (int a = RIDGE_CONV_DIRECT; a < RIDGE_CONV_ALGO_COUNT; a++)
        printf("  %-13s %.2f\n", ridge_conv_algo_name((ridge_conv_algo)a), worst[a]);
    for (int i = 0; i < nctx; i++) ridge_ctx_destroy(ctxs[i]);
    return test_finish("test-conv");
}
