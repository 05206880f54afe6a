/* The reference backward passes: the forward reference's loops (conv-ref.c) transposed, fp64
 * accumulation, any layout (through conv_view), groups, stride, dilation and asymmetric
 * padding. dx scatters every forward product back to its input element, dw gathers it per
 * weight; the fast algorithms (conv-backward.c) and the finite-difference tests check
 * against these. */
#include "conv/conv-backward.h"

/* Visits every (n, co, oh, ow, ci, r, s) term of the forward sum whose input is inside the
 * tensor: fn(ctx, x offset, y offset, weight index). */
#define CONV_TERMS(d, xv, yv, oh_, ow_, BODY)                                                  \
    do {                                                                                       \
        const int64_t cig_ = (d)->c_in / (d)->groups, cog_ = (d)->c_out / (d)->groups;         \
        for (int64_t n = 0; n < (d)->n; n++)                                                   \
            for (int64_t co = 0; co < (d)->c_out; co++) {                                      \
                const int64_t g_ = co / cog_;                                                  \
                for (int64_t i = 0; i < (oh_); i++)                                            \
                    for (int64_t j = 0; j < (ow_); j++) {                                      \
                        const ptrdiff_t yo = n * (yv).sn + conv_view_chan(&(yv), co) +         \
                                             i * (yv).sh + j * (yv).sw;                        \
                        for (int64_t ci = 0; ci < cig_; ci++) {                                \
                            const ptrdiff_t xc =                                               \
                                n * (xv).sn + conv_view_chan(&(xv), g_ * cig_ + ci);           \
                            for (int64_t r = 0; r < (d)->r; r++) {                             \
                                int64_t ih = i * (d)->stride_h - (d)->pad_top + r * (d)->dil_h; \
                                if (ih < 0 || ih >= (d)->h) continue;                          \
                                for (int64_t s = 0; s < (d)->s; s++) {                         \
                                    int64_t iw =                                               \
                                        j * (d)->stride_w - (d)->pad_left + s * (d)->dil_w;    \
                                    if (iw < 0 || iw >= (d)->w) continue;                      \
                                    const ptrdiff_t xo = xc + ih * (xv).sh + iw * (xv).sw;     \
                                    const int64_t wi = ((co * cig_ + ci) * (d)->r + r) *       \
                                                       (d)->s + s;                             \
                                    BODY;                                                      \
                                }                                                              \
                            }                                                                  \
                        }                                                                      \
                    }                                                                          \
            }                                                                                  \
    } while (0)

ridge_status conv_backward_data_ref(const ridge_conv2d_desc *d, int64_t oh, int64_t ow,
                                    float *dx, const float *dy, const float *w)
{
    conv_view xv = conv_view_make(d->layout, d->c_in, d->h, d->w);
    conv_view yv = conv_view_make(d->layout, d->c_out, oh, ow);
    size_t xn = ridge_tensor_elems(d->layout, d->n, d->c_in, d->h, d->w);
    double *acc = ridge_calloc(xn, sizeof(double));
    if (!acc) return ridge_error(RIDGE_ENOMEM, "conv2d_backward_data_ref: out of memory");
    CONV_TERMS(d, xv, yv, oh, ow, acc[xo] += (double)dy[yo] * (double)w[wi]);
    for (size_t i = 0; i < xn; i++) dx[i] = (float)acc[i];
    ridge_free(acc);
    conv_zero_channel_padding(dx, d->layout, d->n, d->c_in, d->h, d->w);
    return RIDGE_OK;
}

ridge_status conv_backward_weights_ref(const ridge_conv2d_desc *d, int64_t oh, int64_t ow,
                                       float *dw, float *db, const float *x, const float *dy)
{
    conv_view xv = conv_view_make(d->layout, d->c_in, d->h, d->w);
    conv_view yv = conv_view_make(d->layout, d->c_out, oh, ow);
    size_t wn = (size_t)(d->c_out * (d->c_in / d->groups) * d->r * d->s);
    double *acc = ridge_calloc(wn + (size_t)d->c_out, sizeof(double));
    if (!acc) return ridge_error(RIDGE_ENOMEM, "conv2d_backward_weights_ref: out of memory");
    double *bacc = acc + wn;
    CONV_TERMS(d, xv, yv, oh, ow, acc[wi] += (double)dy[yo] * (double)x[xo]);
    for (int64_t n = 0; n < d->n; n++)
        for (int64_t co = 0; co < d->c_out; co++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++)
                    bacc[co] += dy[n * yv.sn + conv_view_chan(&yv, co) + i * yv.sh + j * yv.sw];
    for (size_t i = 0; i < wn; i++) dw[i] = (float)acc[i];
    if (db)
        for (int64_t co = 0; co < d->c_out; co++) db[co] = (float)bacc[co];
    ridge_free(acc);
    return RIDGE_OK;
}
