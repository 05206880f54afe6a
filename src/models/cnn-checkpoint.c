/* CNN checkpoints, ridge's own format (docs/FORMATS.md), built like the MLP's:
 *
 *   offset  field (little-endian)
 *   0       magic "RIDGECNN" (8 bytes)
 *   8       u32 version (1)            12  u32 header bytes (512)
 *   16      u32 in_h, in_w, in_c       28  f32 input mean, input std
 *   36      f32 bn eps, bn momentum    44  u32 optimizer, schedule
 *   52      f32 lr, momentum, beta1, beta2, eps, weight decay, min lr fraction
 *   80      u64 warm-up steps          88  u64 schedule steps
 *   96      u64 seed                   104 u64 step
 *   112     u32 epochs done            116 u32 batch
 *   120     u64 nparams                128 u64 nbuffers (running statistics)
 *   136     u64 nstate
 *   144..255 zero
 *   256     the architecture string, NUL-padded to 512 (at most 239 bytes + NUL)
 *   512     f32 params[nparams], f32 buffers[nbuffers], f32 state[nstate]
 *   end     u32 CRC-32 of every byte before it
 *
 * The blocks are written as they are in memory (views 64-byte aligned, padding zero), so
 * their sizes must equal what the architecture gives. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/internal.h"
#include "models/cnn-internal.h"

#define HEADER_BYTES 512
#define ARCH_AT 256
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

static uint32_t body_crc(const unsigned char *h, const ridge_cnn *m)
{
    uint32_t crc = ridge_crc32(0, h, HEADER_BYTES);
    crc = ridge_crc32(crc, m->params, m->nparams * sizeof(float));
    crc = ridge_crc32(crc, m->buffers, m->nbuffers * sizeof(float));
    if (m->nstate) crc = ridge_crc32(crc, m->state, m->nstate * sizeof(float));
    return crc;
}

ridge_status ridge_cnn_save(const ridge_cnn *m, const char *path)
{
    if (!m || !path) return ridge_error(RIDGE_EINVAL, "cnn_save: NULL argument");
    if (!little_endian())
        return ridge_error(RIDGE_EUNSUPPORTED, "cnn_save: big-endian hosts are not supported");
    const ridge_cnn_config *c = &m->cfg;
    const ridge_optim_config *o = &m->opt;
    unsigned char h[HEADER_BYTES] = {0};
    ridge_status st = ridge_cnn_arch_format(c, (char *)h + ARCH_AT, RIDGE_CNN_ARCH_MAX);
    if (st) return st;
    memcpy(h, "RIDGECNN", 8);
    put32(h + 8, VERSION);
    put32(h + 12, HEADER_BYTES);
    put32(h + 16, (uint32_t)c->in_h);
    put32(h + 20, (uint32_t)c->in_w);
    put32(h + 24, (uint32_t)c->in_c);
    putf(h + 28, c->in_mean);
    putf(h + 32, c->in_std);
    putf(h + 36, c->bn_eps);
    putf(h + 40, c->bn_momentum);
    put32(h + 44, (uint32_t)o->kind);
    put32(h + 48, (uint32_t)o->schedule);
    const float fs[7] = {o->lr, o->momentum, o->beta1, o->beta2, o->eps, o->weight_decay,
                         o->min_lr_frac};
    for (int i = 0; i < 7; i++) putf(h + 52 + 4 * i, fs[i]);
    put64(h + 80, o->warmup);
    put64(h + 88, o->total);
    put64(h + 96, m->seed);
    put64(h + 104, m->step);
    put32(h + 112, m->epoch);
    put32(h + 116, (uint32_t)m->batch);
    put64(h + 120, m->nparams);
    put64(h + 128, m->nbuffers);
    put64(h + 136, m->nstate);
    unsigned char tail[4];
    put32(tail, body_crc(h, m));

    const ridge_file_part parts[] = {{h, sizeof h},
                                     {m->params, m->nparams * sizeof(float)},
                                     {m->buffers, m->nbuffers * sizeof(float)},
                                     {m->state, m->nstate * sizeof(float)},
                                     {tail, sizeof tail}};
    return ridge_file_write_atomic(path, "cnn_save", parts, sizeof parts / sizeof parts[0]);
}

ridge_status ridge_cnn_load(const char *path, ridge_cnn **out)
{
    if (!out || !path) return ridge_error(RIDGE_EINVAL, "cnn_load: NULL argument");
    *out = NULL;
    if (!little_endian())
        return ridge_error(RIDGE_EUNSUPPORTED, "cnn_load: big-endian hosts are not supported");
    FILE *f = fopen(path, "rb");
    if (!f) return ridge_error(RIDGE_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    unsigned char h[HEADER_BYTES];
    ridge_status st = RIDGE_OK;
    ridge_cnn *m = NULL;
    if (fstat(fileno(f), &sb) != 0 || fread(h, 1, sizeof h, f) != sizeof h) {
        st = ridge_error(RIDGE_EFORMAT, "%s: truncated: shorter than the %d-byte header", path,
                         HEADER_BYTES);
        goto done;
    }
    if (memcmp(h, "RIDGECNN", 8) != 0) {
        st = ridge_error(RIDGE_EFORMAT, "%s: bad magic: not a ridge CNN checkpoint", path);
        goto done;
    }
    if (get32(h + 8) != VERSION || get32(h + 12) != HEADER_BYTES) {
        st = ridge_error(RIDGE_EFORMAT, "%s: version %u (header %u bytes); this ridge reads "
                         "version %d", path, get32(h + 8), get32(h + 12), VERSION);
        goto done;
    }
    for (int i = 144; i < ARCH_AT; i++)
        if (h[i]) {
            st = ridge_error(RIDGE_EFORMAT, "%s: reserved header byte %d is not zero", path, i);
            goto done;
        }
    if (!memchr(h + ARCH_AT, 0, RIDGE_CNN_ARCH_MAX)) {
        st = ridge_error(RIDGE_EFORMAT, "%s: architecture string is not terminated", path);
        goto done;
    }
    ridge_cnn_config c;
    ridge_cnn_config_init(&c);
    c.in_h = get32(h + 16), c.in_w = get32(h + 20), c.in_c = get32(h + 24);
    c.in_mean = getf(h + 28), c.in_std = getf(h + 32);
    c.bn_eps = getf(h + 36), c.bn_momentum = getf(h + 40);
    if (ridge_cnn_arch_parse((const char *)h + ARCH_AT, &c) || ridge_cnn_config_check(&c)) {
        st = with_path(RIDGE_EFORMAT, path);
        goto done;
    }
    ridge_optim_config o;
    ridge_optim_config_init(&o);
    o.kind = (ridge_optim_kind)get32(h + 44);
    o.schedule = (ridge_lr_kind)get32(h + 48);
    float *fs[7] = {&o.lr, &o.momentum, &o.beta1, &o.beta2, &o.eps, &o.weight_decay,
                    &o.min_lr_frac};
    for (int i = 0; i < 7; i++) *fs[i] = getf(h + 52 + 4 * i);
    o.warmup = get64(h + 80);
    o.total = get64(h + 88);
    if (ridge_optim_config_check(&o)) {
        st = with_path(RIDGE_EFORMAT, path);
        goto done;
    }
    size_t poffs[2 * RIDGE_CNN_MAX_LAYERS], roffs[2 * RIDGE_CNN_MAX_LAYERS], np, nr;
    if (cnn_layout(&c, poffs, &np, roffs, &nr) || get64(h + 120) != np || get64(h + 128) != nr ||
        get64(h + 136) != ridge_optim_state_per_param(&o) * np) {
        st = ridge_error(RIDGE_EFORMAT, "%s: nparams %llu / nbuffers %llu / nstate %llu do not "
                         "match the architecture", path, (unsigned long long)get64(h + 120),
                         (unsigned long long)get64(h + 128), (unsigned long long)get64(h + 136));
        goto done;
    }
    const uint64_t want = HEADER_BYTES + 4 * (np + nr + get64(h + 136)) + 4;
    if ((uint64_t)sb.st_size != want) {
        st = ridge_error(RIDGE_EFORMAT, "%s: %s: %lld bytes, the header implies %llu", path,
                         (uint64_t)sb.st_size < want ? "truncated" : "trailing bytes",
                         (long long)sb.st_size, (unsigned long long)want);
        goto done;
    }
    if ((st = ridge_cnn_create(&c, &o, get32(h + 116), get64(h + 96), &m))) {
        st = with_path(st == RIDGE_ENOMEM ? st : RIDGE_EFORMAT, path);
        goto done;
    }
    m->step = get64(h + 104);
    m->epoch = get32(h + 112);
    unsigned char tail[4];
    if (fread(m->params, sizeof(float), m->nparams, f) != m->nparams ||
        fread(m->buffers, sizeof(float), m->nbuffers, f) != m->nbuffers ||
        (m->nstate && fread(m->state, sizeof(float), m->nstate, f) != m->nstate) ||
        fread(tail, 1, 4, f) != 4) {
        st = ridge_error(RIDGE_EIO, "%s: read failed: %s", path, strerror(errno));
        goto done;
    }
    uint32_t crc = body_crc(h, m);
    if (crc != get32(tail)) {
        st = ridge_error(RIDGE_EFORMAT, "%s: CRC mismatch (stored %08x, computed %08x): the "
                         "file is corrupted", path, get32(tail), crc);
        goto done;
    }
done:
    fclose(f);
    if (st) ridge_cnn_destroy(m);
    else *out = m;
    return st;
}
