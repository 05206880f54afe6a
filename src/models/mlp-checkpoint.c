/* MLP checkpoints, ridge's own format (docs/FORMATS.md):
 *
 *   offset  field (little-endian)
 *   0       magic "RIDGEMLP" (8 bytes)
 *   8       u32 version (1)            12  u32 header bytes (256)
 *   16      u32 nlayers                20  u32 sizes[17] (unused ones 0)
 *   88      u32 activation             92  f32 dropout
 *   96      f32 input mean             100 f32 input std
 *   104     u32 optimizer              108 u32 schedule
 *   112     f32 lr, momentum, beta1, beta2, eps, weight decay, min lr fraction
 *   140     u64 warm-up steps          148 u64 schedule steps
 *   156     u64 seed                   164 u64 step
 *   172     u32 epochs done            176 u64 nparams
 *   184     u64 nstate                 192 u32 batch
 *   196..255 zero
 *   256     f32 params[nparams], f32 state[nstate]
 *   end     u32 CRC-32 of every byte before it
 *
 * The parameter block is written as it is in memory (views 64-byte aligned, padding zero),
 * so nparams must equal what the sizes give. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/internal.h"
#include "models/mlp-internal.h"

#define HEADER_BYTES 256
#define VERSION 1

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void putf(unsigned char *p, float f)
{
    uint32_t v;
    memcpy(&v, &f, 4);
    put32(p, v);
}
static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t get64(const unsigned char *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }
static float getf(const unsigned char *p)
{
    uint32_t v = get32(p);
    float f;
    memcpy(&f, &v, 4);
    return f;
}

/* Re-raises the last error with the file name in front (copied: it is the same buffer). */
static ridge_status with_path(ridge_status st, const char *path)
{
    char why[512];
    snprintf(why, sizeof why, "%s", ridge_last_error());
    return ridge_error(st, "%s: %s", path, why);
}

static int little_endian(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

ridge_status ridge_mlp_save(const ridge_mlp *m, const char *path)
{
    if (!m || !path) return ridge_error(RIDGE_EINVAL, "mlp_save: NULL argument");
    if (!little_endian())
        return ridge_error(RIDGE_EUNSUPPORTED, "mlp_save: big-endian hosts are not supported");
    const ridge_mlp_config *c = &m->cfg;
    const ridge_optim_config *o = &m->opt;
    unsigned char h[HEADER_BYTES] = {0};
    memcpy(h, "RIDGEMLP", 8);
    put32(h + 8, VERSION);
    put32(h + 12, HEADER_BYTES);
    put32(h + 16, (uint32_t)c->nlayers);
    for (int l = 0; l <= c->nlayers; l++) put32(h + 20 + 4 * l, (uint32_t)c->sizes[l]);
    put32(h + 88, (uint32_t)c->act);
    putf(h + 92, c->dropout);
    putf(h + 96, c->in_mean);
    putf(h + 100, c->in_std);
    put32(h + 104, (uint32_t)o->kind);
    put32(h + 108, (uint32_t)o->schedule);
    const float fs[7] = {o->lr, o->momentum, o->beta1, o->beta2, o->eps, o->weight_decay,
                         o->min_lr_frac};
    for (int i = 0; i < 7; i++) putf(h + 112 + 4 * i, fs[i]);
    put64(h + 140, o->warmup);
    put64(h + 148, o->total);
    put64(h + 156, m->seed);
    put64(h + 164, m->step);
    put32(h + 172, m->epoch);
    put64(h + 176, m->nparams);
    put64(h + 184, m->nstate);
    put32(h + 192, (uint32_t)m->batch);

    uint32_t crc = ridge_crc32(0, h, sizeof h);
    crc = ridge_crc32(crc, m->params, m->nparams * sizeof(float));
    if (m->nstate) crc = ridge_crc32(crc, m->state, m->nstate * sizeof(float));
    unsigned char tail[4];
    put32(tail, crc);

    const ridge_file_part parts[] = {{h, sizeof h},
                                     {m->params, m->nparams * sizeof(float)},
                                     {m->state, m->nstate * sizeof(float)},
                                     {tail, sizeof tail}};
    return ridge_file_write_atomic(path, "mlp_save", parts, sizeof parts / sizeof parts[0]);
}

ridge_status ridge_mlp_load(const char *path, ridge_mlp **out)
{
    if (!out || !path) return ridge_error(RIDGE_EINVAL, "mlp_load: NULL argument");
    *out = NULL;
    if (!little_endian())
        return ridge_error(RIDGE_EUNSUPPORTED, "mlp_load: big-endian hosts are not supported");
    FILE *f = fopen(path, "rb");
    if (!f) return ridge_error(RIDGE_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    unsigned char h[HEADER_BYTES];
    ridge_status st = RIDGE_OK;
    ridge_mlp *m = NULL;
    if (fstat(fileno(f), &sb) != 0 || fread(h, 1, sizeof h, f) != sizeof h) {
        st = ridge_error(RIDGE_EFORMAT, "%s: truncated: shorter than the %d-byte header", path,
                         HEADER_BYTES);
        goto done;
    }
    if (memcmp(h, "RIDGEMLP", 8) != 0) {
        st = ridge_error(RIDGE_EFORMAT, "%s: bad magic: not a ridge MLP checkpoint", path);
        goto done;
    }
    if (get32(h + 8) != VERSION || get32(h + 12) != HEADER_BYTES) {
        st = ridge_error(RIDGE_EFORMAT, "%s: version %u (header %u bytes); this ridge reads "
                         "version %d", path, get32(h + 8), get32(h + 12), VERSION);
        goto done;
    }
    for (int i = 196; i < HEADER_BYTES; i++)
        if (h[i]) {
            st = ridge_error(RIDGE_EFORMAT, "%s: reserved header byte %d is not zero", path, i);
            goto done;
        }
    ridge_mlp_config c = {0};
    uint32_t nl = get32(h + 16);
    if (nl < 1 || nl > RIDGE_MLP_MAX_LAYERS) {
        st = ridge_error(RIDGE_EFORMAT, "%s: nlayers is %u, expected 1..%d", path, nl,
                         RIDGE_MLP_MAX_LAYERS);
        goto done;
    }
    c.nlayers = (int)nl;
    for (int l = 0; l <= RIDGE_MLP_MAX_LAYERS; l++) {
        uint32_t v = get32(h + 20 + 4 * l);
        if (l <= c.nlayers ? (v < 1 || v > RIDGE_MLP_MAX_WIDTH) : v != 0) {
            st = ridge_error(RIDGE_EFORMAT, "%s: layer size %d is %u", path, l, v);
            goto done;
        }
        c.sizes[l] = v;
    }
    c.act = (ridge_epi_act)get32(h + 88);
    c.dropout = getf(h + 92);
    c.in_mean = getf(h + 96);
    c.in_std = getf(h + 100);
    if (ridge_mlp_config_check(&c)) {
        st = with_path(RIDGE_EFORMAT, path);
        goto done;
    }
    ridge_optim_config o;
    ridge_optim_config_init(&o);
    o.kind = (ridge_optim_kind)get32(h + 104);
    o.schedule = (ridge_lr_kind)get32(h + 108);
    float *fs[7] = {&o.lr, &o.momentum, &o.beta1, &o.beta2, &o.eps, &o.weight_decay,
                    &o.min_lr_frac};
    for (int i = 0; i < 7; i++) *fs[i] = getf(h + 112 + 4 * i);
    o.warmup = get64(h + 140);
    o.total = get64(h + 148);
    if (ridge_optim_config_check(&o)) {
        st = with_path(RIDGE_EFORMAT, path);
        goto done;
    }
    /* the sizes, the stored counts and the file's length must agree before allocating */
    size_t sizes[2 * RIDGE_MLP_MAX_LAYERS], offs[2 * RIDGE_MLP_MAX_LAYERS], np;
    if (mlp_layout(&c, sizes, offs, &np) || get64(h + 176) != np ||
        get64(h + 184) != ridge_optim_state_per_param(&o) * np) {
        st = ridge_error(RIDGE_EFORMAT, "%s: nparams %llu / nstate %llu do not match the "
                         "architecture", path, (unsigned long long)get64(h + 176),
                         (unsigned long long)get64(h + 184));
        goto done;
    }
    const uint64_t want = HEADER_BYTES + 4 * (np + get64(h + 184)) + 4; /* np <= 2^45 */
    if ((uint64_t)sb.st_size != want) {
        st = ridge_error(RIDGE_EFORMAT, "%s: %s: %lld bytes, the header implies %llu", path,
                         (uint64_t)sb.st_size < want ? "truncated" : "trailing bytes",
                         (long long)sb.st_size, (unsigned long long)want);
        goto done;
    }
    uint32_t batch = get32(h + 192);
    if ((st = ridge_mlp_create(&c, &o, batch, get64(h + 156), &m))) {
        st = with_path(st == RIDGE_ENOMEM ? st : RIDGE_EFORMAT, path);
        goto done;
    }
    m->step = get64(h + 164);
    m->epoch = get32(h + 172);
    unsigned char tail[4];
    if (fread(m->params, sizeof(float), m->nparams, f) != m->nparams ||
        (m->nstate && fread(m->state, sizeof(float), m->nstate, f) != m->nstate) ||
        fread(tail, 1, 4, f) != 4) {
        st = ridge_error(RIDGE_EIO, "%s: read failed: %s", path, strerror(errno));
        goto done;
    }
    uint32_t crc = ridge_crc32(0, h, sizeof h);
    crc = ridge_crc32(crc, m->params, m->nparams * sizeof(float));
    if (m->nstate) crc = ridge_crc32(crc, m->state, m->nstate * sizeof(float));
    if (crc != get32(tail)) {
        st = ridge_error(RIDGE_EFORMAT, "%s: CRC mismatch (stored %08x, computed %08x): the "
                         "file is corrupted", path, get32(tail), crc);
        goto done;
    }
done:
    fclose(f);
    if (st) ridge_mlp_destroy(m);
    else *out = m;
    return st;
}
