/* llm.c's random numbers and data loader (include/ridge/llmc.h), reproduced so that ridge
 * trains on exactly the batches llm.c's train_gpt2.c would, in the same order.
 *
 * MT19937 is the standard generator of Matsumoto and Nishimura (1998), seeded with
 * init_genrand and tempered as in the paper; PyTorch and llm.c draw from it the same way, so
 * a seed gives the same stream in all three.
 *
 * The loader (one process): a batch is sample s of the current shard, the B*T+1 tokens
 * starting at token s*B*T; a shard has floor((ntok-1)/(B*T)) samples. Shuffling permutes the
 * shard order at every reset (new epoch) and the sample order of every shard when it is
 * loaded, each by a Fisher-Yates pass from the end (j = u32 % (i+1)). The sequential loader
 * walks shards and samples in order. A loaded shard is held in memory whole, its ids checked
 * against the vocabulary once.
 */
#include <glob.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "ridge/llmc.h"

/* ---- MT19937 ---------------------------------------------------------------------------- */

enum { MT_N = 624, MT_M = 397 };

void ridge_mt19937_seed(ridge_mt19937 *rng, uint32_t seed)
{
    rng->state[0] = seed;
    for (uint32_t i = 1; i < MT_N; i++)
        rng->state[i] = 1812433253u * (rng->state[i - 1] ^ (rng->state[i - 1] >> 30)) + i;
    rng->left = 1; /* the first draw regenerates the state */
    rng->next = 0;
}

static void mt_twist(ridge_mt19937 *rng)
{
    uint32_t *s = rng->state;
    for (int i = 0; i < MT_N; i++) {
        uint32_t y = (s[i] & 0x80000000u) | (s[(i + 1) % MT_N] & 0x7fffffffu);
        s[i] = s[(i + MT_M) % MT_N] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
    }
    rng->left = MT_N;
    rng->next = 0;
}

uint32_t ridge_mt19937_u32(ridge_mt19937 *rng)
{
    if (--rng->left <= 0) mt_twist(rng);
    uint32_t y = rng->state[rng->next++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

float ridge_mt19937_f32(ridge_mt19937 *rng)
{
    return (float)(ridge_mt19937_u32(rng) & 0xffffffu) * (1.0f / 16777216.0f);
}

/* ---- the loader ------------------------------------------------------------------------- */

struct ridge_llmc_loader {
    size_t B, T;
    int vocab_size, shuffle;
    size_t nshards, num_tokens;
    char **paths;
    int *shard_order;  /* (nshards) shuffled shard order */
    size_t shard;      /* position in the shard order */
    size_t sample;     /* the next sample's position within the shard */
    size_t nsamples;   /* samples in the loaded shard */
    int *sample_order; /* (nsamples) shuffled sample order, or NULL */
    uint16_t *tokens;  /* the loaded shard */
    int *inputs, *targets; /* (B*T) the current batch */
    ridge_mt19937 rng;
};

static void permute(int *a, size_t n, ridge_mt19937 *rng)
{
    for (size_t i = n; i-- > 1;) {
        size_t j = ridge_mt19937_u32(rng) % (uint32_t)(i + 1);
        int t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

/* Loads the shard at position ld->shard of the order and (if shuffling) permutes its samples. */
static ridge_status load_shard(ridge_llmc_loader *ld)
{
    size_t idx = ld->shuffle ? (size_t)ld->shard_order[ld->shard] : ld->shard;
    ridge_free(ld->tokens);
    free(ld->sample_order);
    ld->tokens = NULL;
    ld->sample_order = NULL;
    size_t ntok;
    ridge_status st = ridge_llmc_tokens_read(ld->paths[idx], ld->vocab_size, &ld->tokens, &ntok);
    if (st) return st;
    ld->nsamples = (ntok - 1) / (ld->B * ld->T);
    if (ld->nsamples == 0)
        return ridge_error(RIDGE_EFORMAT, "token shard %s: %zu tokens, fewer than B*T+1 = %zu",
                           ld->paths[idx], ntok, ld->B * ld->T + 1);
    ld->sample = 0;
    if (ld->shuffle) {
        if (ld->nsamples > INT32_MAX)
            return ridge_error(RIDGE_EOVERFLOW, "token shard %s: too many samples",
                               ld->paths[idx]);
        ld->sample_order = malloc(ld->nsamples * sizeof *ld->sample_order);
        if (!ld->sample_order) return ridge_error(RIDGE_ENOMEM, "data loader: out of memory");
        for (size_t i = 0; i < ld->nsamples; i++) ld->sample_order[i] = (int)i;
        permute(ld->sample_order, ld->nsamples, &ld->rng);
    }
    return RIDGE_OK;
}

ridge_status ridge_llmc_loader_reset(ridge_llmc_loader *ld)
{
    if (!ld) return ridge_error(RIDGE_EINVAL, "data loader: NULL");
    ld->shard = 0;
    if (ld->shuffle) permute(ld->shard_order, ld->nshards, &ld->rng);
    return load_shard(ld);
}

ridge_status ridge_llmc_loader_next(ridge_llmc_loader *ld, const int **inputs,
                                    const int **targets)
{
    if (!ld || !inputs || !targets) return ridge_error(RIDGE_EINVAL, "data loader: NULL");
    ridge_status st = RIDGE_OK;
    if (!ld->tokens) st = ridge_llmc_loader_reset(ld); /* a failed load is retried */
    else if (ld->sample >= ld->nsamples) /* past the shard's last sample: the next shard */
        st = ld->shard + 1 >= ld->nshards ? ridge_llmc_loader_reset(ld) /* a new epoch */
                                          : (ld->shard++, load_shard(ld));
    if (st) return st;
    size_t s = ld->shuffle ? (size_t)ld->sample_order[ld->sample] : ld->sample;
    ld->sample++;
    const uint16_t *src = ld->tokens + s * ld->B * ld->T;
    for (size_t i = 0; i < ld->B * ld->T; i++) {
        ld->inputs[i] = src[i];
        ld->targets[i] = src[i + 1];
    }
    *inputs = ld->inputs;
    *targets = ld->targets;
    return RIDGE_OK;
}

ridge_status ridge_llmc_loader_create(const char *pattern, size_t B, size_t T, int vocab_size,
                                      int shuffle, ridge_llmc_loader **out)
{
    if (!out) return ridge_error(RIDGE_EINVAL, "data loader: out is NULL");
    *out = NULL;
    if (!pattern) return ridge_error(RIDGE_EINVAL, "data loader: pattern is NULL");
    if (B == 0 || T == 0 || B > INT32_MAX / T)
        return ridge_error(RIDGE_EINVAL, "data loader: B = %zu, T = %zu out of range", B, T);
    glob_t g;
    int gs = glob(pattern, 0, NULL, &g);
    if (gs != 0) {
        if (gs != GLOB_NOMATCH) globfree(&g);
        return ridge_error(RIDGE_EIO, "data loader: no file matches '%s'", pattern);
    }
    ridge_llmc_loader *ld = calloc(1, sizeof *ld);
    ridge_status st = RIDGE_OK;
    if (!ld) {
        globfree(&g);
        return ridge_error(RIDGE_ENOMEM, "data loader: out of memory");
    }
    ld->B = B, ld->T = T, ld->vocab_size = vocab_size, ld->shuffle = shuffle != 0;
    ld->nshards = g.gl_pathc;
    ld->paths = calloc(ld->nshards, sizeof *ld->paths);
    ld->shard_order = malloc(ld->nshards * sizeof *ld->shard_order);
    ld->inputs = malloc(B * T * sizeof *ld->inputs);
    ld->targets = malloc(B * T * sizeof *ld->targets);
    if (!ld->paths || !ld->shard_order || !ld->inputs || !ld->targets) {
        st = ridge_error(RIDGE_ENOMEM, "data loader: out of memory");
        goto fail;
    }
    for (size_t i = 0; i < ld->nshards; i++) {
        ld->shard_order[i] = (int)i;
        if (!(ld->paths[i] = strdup(g.gl_pathv[i]))) {
            st = ridge_error(RIDGE_ENOMEM, "data loader: out of memory");
            goto fail;
        }
        size_t ntok;
        if ((st = ridge_llmc_tokens_info(ld->paths[i], &ntok))) goto fail;
        if (ntok < B * T + 1) {
            st = ridge_error(RIDGE_EFORMAT,
                             "token shard %s: header[2] ntok = %zu, fewer than B*T+1 = %zu "
                             "(B=%zu, T=%zu)",
                             ld->paths[i], ntok, B * T + 1, B, T);
            goto fail;
        }
        ld->num_tokens += ntok;
    }
    globfree(&g);
    if (shuffle) ridge_mt19937_seed(&ld->rng, 42);
    if ((st = ridge_llmc_loader_reset(ld))) {
        ridge_llmc_loader_destroy(ld);
        return st;
    }
    *out = ld;
    return RIDGE_OK;
fail:
    globfree(&g);
    ridge_llmc_loader_destroy(ld);
    return st;
}

void ridge_llmc_loader_destroy(ridge_llmc_loader *ld)
{
    if (!ld) return;
    for (size_t i = 0; ld->paths && i < ld->nshards; i++) free(ld->paths[i]);
    free(ld->paths);
    free(ld->shard_order);
    free(ld->sample_order);
    ridge_free(ld->tokens);
    free(ld->inputs);
    free(ld->targets);
    free(ld);
}

size_t ridge_llmc_loader_num_tokens(const ridge_llmc_loader *ld)
{
    return ld->num_tokens;
}

size_t ridge_llmc_loader_num_shards(const ridge_llmc_loader *ld)
{
    return ld->nshards;
}
