/* Small pieces the layers and models share: the RNG, the counter hash, CRC-32, parameter
 * table layout, and gathering mini-batches. */
#include <pthread.h>
#include <string.h>

#include "core/internal.h"
#include "ridge/nn.h"

uint64_t ridge_hash64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

void ridge_rng_seed(ridge_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) {
        seed += 0x9e3779b97f4a7c15ull;
        r->s[i] = ridge_hash64(seed);
    }
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t ridge_rng_next(ridge_rng *r)
{
    uint64_t *s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

float ridge_rng_uniform(ridge_rng *r) { return (float)(ridge_rng_next(r) >> 40) * 0x1p-24f; }

uint32_t ridge_rng_below(ridge_rng *r, uint32_t n)
{
    /* Lemire's multiply-and-reject: unbiased without a division in the common case */
    uint64_t m = (uint64_t)(uint32_t)(ridge_rng_next(r) >> 32) * n;
    if ((uint32_t)m < n) {
        uint32_t t = (uint32_t)-n % n;
        while ((uint32_t)m < t) m = (uint64_t)(uint32_t)(ridge_rng_next(r) >> 32) * n;
    }
    return (uint32_t)(m >> 32);
}

void ridge_rng_permutation(ridge_rng *r, uint32_t *perm, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) perm[i] = i;
    for (uint32_t i = n; i > 1; i--) {
        uint32_t j = ridge_rng_below(r, i);
        uint32_t t = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = t;
    }
}

ridge_status ridge_params_layout(const size_t *sizes, size_t count, size_t *offsets,
                                 size_t *total)
{
    if (!sizes || !offsets || !total) return ridge_error(RIDGE_EINVAL, "params_layout: NULL");
    const size_t align = RIDGE_ALIGN / sizeof(float);
    size_t off = 0;
    for (size_t i = 0; i < count; i++) {
        offsets[i] = off;
        if (__builtin_add_overflow(off, sizes[i], &off) ||
            __builtin_add_overflow(off, align - 1, &off) || off > SIZE_MAX / sizeof(float))
            return ridge_error(RIDGE_EOVERFLOW, "params_layout: view %zu overflows", i);
        off &= ~(align - 1);
    }
    *total = off;
    return RIDGE_OK;
}

void ridge_batch_u8(float *x, int32_t *y, const uint8_t *data, const uint8_t *labels,
                    const uint32_t *perm, size_t start, size_t B, size_t D, float mean, float std)
{
    /* out = in * scale + shift, with scale = 1 / (255 std), shift = -mean / std */
    const float scale = 1.0f / (255.0f * std), shift = -mean / std;
    for (size_t b = 0; b < B; b++) {
        size_t row = perm ? perm[start + b] : start + b;
        const uint8_t *src = data + row * D;
        float *dst = x + b * D;
        for (size_t d = 0; d < D; d++) dst[d] = (float)src[d] * scale + shift;
        if (y) y[b] = labels[row];
    }
}

/* CRC-32, reflected polynomial 0xEDB88320, slicing by one byte with a table built once. */
static uint32_t crc_table[256];
static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
}

uint32_t ridge_crc32(uint32_t crc, const void *data, size_t n)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, crc_init);
    const unsigned char *p = data;
    crc = ~crc;
    for (size_t i = 0; i < n; i++) crc = crc_table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}
