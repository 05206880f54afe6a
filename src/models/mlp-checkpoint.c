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
 * so nparams must equal what the sizes give. The frame (magic, version, header size, reserved
 * bytes, length, CRC) is models/checkpoint.h's, shared with the other ridge checkpoints. */
#include "models/checkpoint.h"
#include "models/mlp-internal.h"

static const ckpt_format mlp_format = {"RIDGEMLP", "MLP checkpoint", 1, 256, 196, 0};

ridge_status ridge_mlp_save(const ridge_mlp *m, const char *path)
{
    if (!m || !path) return ridge_error(RIDGE_EINVAL, "mlp_save: NULL argument");
    const ridge_mlp_config *c = &m->cfg;
    unsigned char h[256];
    ckpt_header_init(&mlp_format, h);
    ckpt_put32(h + 16, (uint32_t)c->nlayers);
    for (int l = 0; l <= c->nlayers; l++) ckpt_put32(h + 20 + 4 * l, (uint32_t)c->sizes[l]);
    ckpt_put32(h + 88, (uint32_t)c->act);
    ckpt_putf(h + 92, c->dropout);
    ckpt_putf(h + 96, c->in_mean);
    ckpt_putf(h + 100, c->in_std);
    ckpt_put_optim(h + 104, &m->opt);
    ckpt_put64(h + 156, m->seed);
    ckpt_put64(h + 164, m->step);
    ckpt_put32(h + 172, m->epoch);
    ckpt_put64(h + 176, m->nparams);
    ckpt_put64(h + 184, m->nstate);
    ckpt_put32(h + 192, (uint32_t)m->batch);
    const ridge_file_part parts[] = {{m->params, m->nparams * sizeof(float)},
                                     {m->state, m->nstate * sizeof(float)}};
    return ckpt_write(path, "mlp_save", &mlp_format, h, parts, 2);
}

ridge_status ridge_mlp_load(const char *path, ridge_mlp **out)
{
    if (!out || !path) return ridge_error(RIDGE_EINVAL, "mlp_load: NULL argument");
    *out = NULL;
    unsigned char h[256];
    FILE *f;
    uint64_t fsize;
    ridge_status st = ckpt_open(path, &mlp_format, h, &f, &fsize);
    if (st) return st;
    ridge_mlp *m = NULL;
    ridge_mlp_config c = {0};
    uint32_t nl = ckpt_get32(h + 16);
    if (nl < 1 || nl > RIDGE_MLP_MAX_LAYERS) {
        st = ridge_error(RIDGE_EFORMAT, "%s: nlayers is %u, expected 1..%d", path, nl,
                         RIDGE_MLP_MAX_LAYERS);
        goto done;
    }
    c.nlayers = (int)nl;
    for (int l = 0; l <= RIDGE_MLP_MAX_LAYERS; l++) {
        uint32_t v = ckpt_get32(h + 20 + 4 * l);
        if (l <= c.nlayers ? (v < 1 || v > RIDGE_MLP_MAX_WIDTH) : v != 0) {
            st = ridge_error(RIDGE_EFORMAT, "%s: layer size %d is %u", path, l, v);
            goto done;
        }
        c.sizes[l] = v;
    }
    c.act = (ridge_epi_act)ckpt_get32(h + 88);
    c.dropout = ckpt_getf(h + 92);
    c.in_mean = ckpt_getf(h + 96);
    c.in_std = ckpt_getf(h + 100);
    ridge_optim_config o;
    ckpt_get_optim(h + 104, &o);
    if (ridge_mlp_config_check(&c) || ridge_optim_config_check(&o)) {
        st = ckpt_with_path(RIDGE_EFORMAT, path);
        goto done;
    }
    /* the sizes, the stored counts and the file's length must agree before allocating */
    size_t sizes[2 * RIDGE_MLP_MAX_LAYERS], offs[2 * RIDGE_MLP_MAX_LAYERS], np;
    const uint64_t nstate = ckpt_get64(h + 184);
    if (mlp_layout(&c, sizes, offs, &np) || ckpt_get64(h + 176) != np ||
        nstate != ridge_optim_state_per_param(&o) * np) {
        st = ridge_error(RIDGE_EFORMAT, "%s: nparams %llu / nstate %llu do not match the "
                         "architecture", path, (unsigned long long)ckpt_get64(h + 176),
                         (unsigned long long)nstate);
        goto done;
    }
    if ((st = ckpt_check_size(path, &mlp_format, fsize, 4 * (np + nstate)))) goto done; /* np <= 2^45 */
    if ((st = ridge_mlp_create(&c, &o, ckpt_get32(h + 192), ckpt_get64(h + 156), &m))) {
        st = ckpt_with_path(st == RIDGE_ENOMEM ? st : RIDGE_EFORMAT, path);
        goto done;
    }
    m->step = ckpt_get64(h + 164);
    m->epoch = ckpt_get32(h + 172);
    const ckpt_part parts[] = {{m->params, m->nparams * sizeof(float)},
                               {m->state, m->nstate * sizeof(float)}};
    st = ckpt_read_body(f, path, &mlp_format, h, parts, 2);
done:
    fclose(f);
    if (st) ridge_mlp_destroy(m);
    else *out = m;
    return st;
}
