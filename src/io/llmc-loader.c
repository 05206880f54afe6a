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
#include <errno.h>
#include <glob.h>
#include <stdio.h>
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
    size_t rank, nranks; /* this process's share of a global batch of nranks*B*T tokens */
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

/* Loads the shard at position ld->shard of the order and (if shuffling) permutes its samples
 * (unless `order` is given: then it is checked and taken as the sample order). */
static ridge_status load_shard_order(ridge_llmc_loader *ld, const int *order, size_t norder)
{
    size_t idx = ld->shuffle ? (size_t)ld->shard_order[ld->shard] : ld->shard;
    ridge_free(ld->tokens);
    free(ld->sample_order);
    ld->tokens = NULL;
    ld->sample_order = NULL;
    size_t ntok;
    ridge_status st = ridge_llmc_tokens_read(ld->paths[idx], ld->vocab_size, &ld->tokens, &ntok);
    if (st) return st;
    ld->nsamples = (ntok - 1) / (ld->nranks * ld->B * ld->T);
    if (ld->nsamples == 0)
        return ridge_error(RIDGE_EFORMAT,
                           "token shard %s: %zu tokens, fewer than B*T+1 = %zu (all ranks)",
                           ld->paths[idx], ntok, ld->nranks * ld->B * ld->T + 1);
    ld->sample = 0;
    if (order && norder != ld->nsamples)
        return ridge_error(RIDGE_EFORMAT, "state: %zu sample indices for shard %s of %zu samples",
                           norder, ld->paths[idx], ld->nsamples);
    if (ld->shuffle) {
        if (ld->nsamples > INT32_MAX)
            return ridge_error(RIDGE_EOVERFLOW, "token shard %s: too many samples",
                               ld->paths[idx]);
        ld->sample_order = malloc(ld->nsamples * sizeof *ld->sample_order);
        if (!ld->sample_order) return ridge_error(RIDGE_ENOMEM, "data loader: out of memory");
        if (order) {
            memcpy(ld->sample_order, order, ld->nsamples * sizeof *order);
        } else {
            for (size_t i = 0; i < ld->nsamples; i++) ld->sample_order[i] = (int)i;
            permute(ld->sample_order, ld->nsamples, &ld->rng);
        }
    }
    return RIDGE_OK;
}

static ridge_status load_shard(ridge_llmc_loader *ld)
{
    return load_shard_order(ld, NULL, 0);
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
    const uint16_t *src = ld->tokens + (s * ld->nranks + ld->rank) * ld->B * ld->T;
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
    return ridge_llmc_loader_create_rank(pattern, B, T, vocab_size, shuffle, 0, 1, out);
}

ridge_status ridge_llmc_loader_create_rank(const char *pattern, size_t B, size_t T,
                                           int vocab_size, int shuffle, int rank, int nranks,
                                           ridge_llmc_loader **out)
{
    if (!out) return ridge_error(RIDGE_EINVAL, "data loader: out is NULL");
    *out = NULL;
    if (!pattern) return ridge_error(RIDGE_EINVAL, "data loader: pattern is NULL");
    if (B == 0 || T == 0 || B > INT32_MAX / T)
        return ridge_error(RIDGE_EINVAL, "data loader: B = %zu, T = %zu out of range", B, T);
    if (nranks < 1 || rank < 0 || rank >= nranks || (size_t)nranks > INT32_MAX / (B * T))
        return ridge_error(RIDGE_EINVAL, "data loader: rank %d of %d out of range", rank, nranks);
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
    ld->rank = (size_t)rank, ld->nranks = (size_t)nranks;
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
        if (ntok < ld->nranks * B * T + 1) {
            st = ridge_error(RIDGE_EFORMAT,
                             "token shard %s: header[2] ntok = %zu, fewer than B*T+1 = %zu "
                             "(B=%zu over %d rank(s), T=%zu)",
                             ld->paths[i], ntok, ld->nranks * B * T + 1, ld->nranks * B, nranks,
                             T);
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

/* ---- training state --------------------------------------------------------------------- */

/* llm.c's mt19937_state struct as it lies in memory on x86-64 and in its state files. */
typedef struct llmc_mt_state {
    uint64_t seed;
    int32_t left;
    uint32_t next;
    uint32_t state[624];
    uint32_t matrix_a[2];
} llmc_mt_state;
_Static_assert(sizeof(llmc_mt_state) == 2520, "llm.c's mt19937_state is 2520 bytes");

/* Whether a (n) holds each of 0..n-1 once. */
static int is_permutation(const int *a, size_t n)
{
    unsigned char *seen = calloc(n ? n : 1, 1);
    int ok = seen != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        ok = a[i] >= 0 && (size_t)a[i] < n && !seen[a[i]];
        if (ok) seen[a[i]] = 1;
    }
    free(seen);
    return ok;
}

ridge_status ridge_llmc_state_write(const char *path, int step, uint64_t sample_rng,
                                    const ridge_llmc_loader *ld, const float *m, const float *v,
                                    size_t nparams)
{
    if (!path || !ld || !m || !v || step < 0)
        return ridge_error(RIDGE_EINVAL, "state: NULL argument or negative step");
    if (!ld->tokens) return ridge_error(RIDGE_EINVAL, "state %s: the loader holds no shard", path);
    int32_t h[256] = {RIDGE_LLMC_STATE_MAGIC, 1, 1, 0, 0, ld->shuffle};
    h[10] = step;
    uint64_t pos[2] = {ld->shard, ld->sample};
    memcpy(&h[20], &sample_rng, 8);
    memcpy(&h[22], &sample_rng, 8);
    memcpy(&h[30], pos, sizeof pos);
    ridge_file_atomic a;
    ridge_status st = ridge_file_atomic_open(&a, path, "state");
    if (st) return st;
    ridge_file_atomic_write(&a, h, sizeof h); /* errors are sticky: commit reports them */
    ridge_file_atomic_write(&a, m, 4 * nparams);
    ridge_file_atomic_write(&a, v, 4 * nparams);
    if (ld->shuffle) {
        uint64_t ns = ld->nshards, nsam = ld->nsamples;
        llmc_mt_state mt = {42, ld->rng.left, (uint32_t)ld->rng.next, {0}, {0, 0x9908b0dfu}};
        memcpy(mt.state, ld->rng.state, sizeof mt.state);
        ridge_file_atomic_write(&a, &ns, 8);
        ridge_file_atomic_write(&a, ld->shard_order, 4 * ns);
        ridge_file_atomic_write(&a, &nsam, 8);
        ridge_file_atomic_write(&a, ld->sample_order, 4 * nsam);
        ridge_file_atomic_write(&a, &mt, sizeof mt);
    }
    return ridge_file_atomic_commit(&a);
}

ridge_status ridge_llmc_state_read(const char *path, int *step, uint64_t *sample_rng,
                                   ridge_llmc_loader *ld, float *m, float *v, size_t nparams)
{
    if (!path || !step || !sample_rng || !ld || !m || !v)
        return ridge_error(RIDGE_EINVAL, "state: NULL argument");
    FILE *f = fopen(path, "rb");
    if (!f) return ridge_error(RIDGE_EIO, "state %s: cannot open: %s", path, strerror(errno));
    ridge_status st = RIDGE_OK;
    int32_t h[256];
    int *shards = NULL, *samples = NULL;
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
    rewind(f);
    uint64_t pos[2], ns = 0, nsam = 0;
    llmc_mt_state mt;
    uint64_t base = 1024 + 8 * (uint64_t)nparams;
#define BAD(...)                                                                              \
    do {                                                                                      \
        st = ridge_error(RIDGE_EFORMAT, __VA_ARGS__);                                         \
        goto out;                                                                             \
    } while (0)
    if (size < 1024 || fread(h, sizeof h, 1, f) != 1) BAD("state %s: shorter than its header", path);
    if (h[0] != RIDGE_LLMC_STATE_MAGIC)
        BAD("state %s: header[0] magic = %d, expected %d", path, h[0], RIDGE_LLMC_STATE_MAGIC);
    if (h[1] != 1) BAD("state %s: header[1] version = %d, expected 1", path, h[1]);
    if (h[2] != 1 || h[3] != 0)
        BAD("state %s: header[2..3] = %d processes, rank %d; ridge trains in one process", path,
            h[2], h[3]);
    if (h[4] != 0) BAD("state %s: header[4] use_master_weights = %d, expected 0", path, h[4]);
    if (h[5] != ld->shuffle)
        BAD("state %s: header[5] should_shuffle = %d, the loader's is %d", path, h[5], ld->shuffle);
    if (h[10] < 0) BAD("state %s: header[10] step = %d", path, h[10]);
    memcpy(pos, &h[30], sizeof pos);
    if (pos[0] >= ld->nshards)
        BAD("state %s: header[30] shard = %llu, the loader has %zu shards", path,
            (unsigned long long)pos[0], ld->nshards);
    if ((uint64_t)size < base + (ld->shuffle ? 16 + sizeof mt : 0))
        BAD("state %s: %ld bytes, too short for %zu parameters' moments", path, size, nparams);
    if (fread(m, 4, nparams, f) != nparams || fread(v, 4, nparams, f) != nparams)
        BAD("state %s: short read", path);
    if (ld->shuffle) {
        if (fread(&ns, 8, 1, f) != 1 || ns != ld->nshards)
            BAD("state %s: %llu shards, the loader has %zu", path, (unsigned long long)ns,
                ld->nshards);
        shards = malloc(ns * sizeof *shards);
        if (!shards || fread(shards, 4, ns, f) != ns || !is_permutation(shards, ns))
            BAD("state %s: the shard order is not a permutation of %llu", path,
                (unsigned long long)ns);
        if (fread(&nsam, 8, 1, f) != 1 || nsam > (uint64_t)size ||
            (uint64_t)size != base + 8 + 4 * ns + 8 + 4 * nsam + sizeof mt)
            BAD("state %s: %ld bytes do not match its shard and sample counts", path, size);
        samples = malloc((nsam ? nsam : 1) * sizeof *samples);
        if (!samples || fread(samples, 4, nsam, f) != nsam || !is_permutation(samples, nsam))
            BAD("state %s: the sample order is not a permutation of %llu", path,
                (unsigned long long)nsam);
        /* a generator seeded and not drawn from has left 1, next 0; after the first twist
         * left + next is always 625 (next <= 624 is read only after left reaches 1). Any
         * other pair would index past state[] (found reviewing the fuzz-llmc-state target). */
        if (fread(&mt, sizeof mt, 1, f) != 1 || mt.left < 1 || mt.left > 624 || mt.next > 624 ||
            !((mt.left == 1 && mt.next == 0) || (uint32_t)mt.left + mt.next == 625) ||
            mt.matrix_a[1] != 0x9908b0dfu)
            BAD("state %s: bad MT19937 state", path);
    } else if ((uint64_t)size != base) {
        BAD("state %s: %ld bytes, expected %llu", path, size, (unsigned long long)base);
    }
    /* the loader: shard order, then the shard at the saved position with its sample order */
    if (ld->shuffle) {
        memcpy(ld->shard_order, shards, ns * sizeof *shards);
        memcpy(ld->rng.state, mt.state, sizeof mt.state);
        ld->rng.left = mt.left;
        ld->rng.next = (int)mt.next;
    }
    ld->shard = (size_t)pos[0];
    if ((st = load_shard_order(ld, samples, (size_t)nsam))) goto out;
    if (pos[1] > ld->nsamples)
        BAD("state %s: header[32] sample = %llu, the shard has %zu", path,
            (unsigned long long)pos[1], ld->nsamples);
    ld->sample = (size_t)pos[1];
    *step = h[10];
    memcpy(sample_rng, &h[20], 8);
#undef BAD
out:
    fclose(f);
    free(shards);
    free(samples);
    return st;
}
