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
 * their sizes must equal what the architecture gives. The frame (magic, version, header size,
 * reserved bytes, length, CRC) is models/checkpoint.h's, shared with the other checkpoints. */
#include "models/checkpoint.h"
#include "models/cnn-internal.h"

static const ckpt_format cnn_format = {"RIDGECNN", "CNN checkpoint", 1, 512, 144, 256};

ridge_status ridge_cnn_save(const ridge_cnn *m, const char *path)
{
    if (!m || !path) return ridge_error(RIDGE_EINVAL, "cnn_save: NULL argument");
    const ridge_cnn_config *c = &m->cfg;
    unsigned char h[512];
    ckpt_header_init(&cnn_format, h);
    ridge_status st = ridge_cnn_arch_format(c, (char *)h + 256, RIDGE_CNN_ARCH_MAX);
    if (st) return st;
    ckpt_put32(h + 16, (uint32_t)c->in_h);
    ckpt_put32(h + 20, (uint32_t)c->in_w);
    ckpt_put32(h + 24, (uint32_t)c->in_c);
    ckpt_putf(h + 28, c->in_mean);
    ckpt_putf(h + 32, c->in_std);
    ckpt_putf(h + 36, c->bn_eps);
    ckpt_putf(h + 40, c->bn_momentum);
    ckpt_put_optim(h + 44, &m->opt);
    ckpt_put64(h + 96, m->seed);
    ckpt_put64(h + 104, m->step);
    ckpt_put32(h + 112, m->epoch);
    ckpt_put32(h + 116, (uint32_t)m->batch);
    ckpt_put64(h + 120, m->nparams);
    ckpt_put64(h + 128, m->nbuffers);
    ckpt_put64(h + 136, m->nstate);
    const ridge_file_part parts[] = {{m->params, m->nparams * sizeof(float)},
                                     {m->buffers, m->nbuffers * sizeof(float)},
                                     {m->state, m->nstate * sizeof(float)}};
    return ckpt_write(path, "cnn_save", &cnn_format, h, parts, 3);
}

ridge_status ridge_cnn_load(const char *path, ridge_cnn **out)
{
    if (!out || !path) return ridge_error(RIDGE_EINVAL, "cnn_load: NULL argument");
    *out = NULL;
    unsigned char h[512];
    FILE *f;
    uint64_t fsize;
    ridge_status st = ckpt_open(path, &cnn_format, h, &f, &fsize);
    if (st) return st;
    ridge_cnn *m = NULL;
    ridge_cnn_config c;
    ridge_cnn_config_init(&c);
    c.in_h = ckpt_get32(h + 16), c.in_w = ckpt_get32(h + 20), c.in_c = ckpt_get32(h + 24);
    c.in_mean = ckpt_getf(h + 28), c.in_std = ckpt_getf(h + 32);
    c.bn_eps = ckpt_getf(h + 36), c.bn_momentum = ckpt_getf(h + 40);
    ridge_optim_config o;
    ckpt_get_optim(h + 44, &o);
    if (ridge_cnn_arch_parse((const char *)h + 256, &c) || ridge_cnn_config_check(&c) ||
        ridge_optim_config_check(&o)) {
        st = ckpt_with_path(RIDGE_EFORMAT, path);
        goto done;
    }
    size_t poffs[2 * RIDGE_CNN_MAX_LAYERS], roffs[2 * RIDGE_CNN_MAX_LAYERS], np, nr;
    const uint64_t nstate = ckpt_get64(h + 136);
    if (cnn_layout(&c, poffs, &np, roffs, &nr) || ckpt_get64(h + 120) != np ||
        ckpt_get64(h + 128) != nr || nstate != ridge_optim_state_per_param(&o) * np) {
        st = ridge_error(RIDGE_EFORMAT, "%s: nparams %llu / nbuffers %llu / nstate %llu do not "
                         "match the architecture", path, (unsigned long long)ckpt_get64(h + 120),
                         (unsigned long long)ckpt_get64(h + 128), (unsigned long long)nstate);
        goto done;
    }
    if ((st = ckpt_check_size(path, &cnn_format, fsize, 4 * (np + nr + nstate)))) goto done;
    if ((st = ridge_cnn_create(&c, &o, ckpt_get32(h + 116), ckpt_get64(h + 96), &m))) {
        st = ckpt_with_path(st == RIDGE_ENOMEM ? st : RIDGE_EFORMAT, path);
        goto done;
    }
    m->step = ckpt_get64(h + 104);
    m->epoch = ckpt_get32(h + 112);
    const ckpt_part parts[] = {{m->params, m->nparams * sizeof(float)},
                               {m->buffers, m->nbuffers * sizeof(float)},
                               {m->state, m->nstate * sizeof(float)}};
    st = ckpt_read_body(f, path, &cnn_format, h, parts, 3);
done:
    fclose(f);
    if (st) ridge_cnn_destroy(m);
    else *out = m;
    return st;
}
