/* The reference convolution: plain loops over every output element and every tap, fp64
 * accumulation, any layout (through conv_view), groups, stride, dilation and asymmetric
 * padding. It is the definition of correct: every other algorithm is tested against it. */
#include "conv/conv.h"

void conv_forward_ref(const ridge_conv2d_desc *d, int64_t oh, int64_t ow, const float *x,
                      const float *w, float *y, const float *bias, int act, const float *res)
{
    conv_view xv = conv_view_make(d->layout, d->c_in, d->h, d->w);
    conv_view yv = conv_view_make(d->layout, d->c_out, oh, ow);
    const int64_t cig = d->c_in / d->groups, cog = d->c_out / d->groups;
    for (int64_t n = 0; n < d->n; n++)
        for (int64_t co = 0; co < d->c_out; co++) {
            const int64_t g = co / cog;
            const ptrdiff_t yc = n * yv.sn + conv_view_chan(&yv, co);
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    double acc = bias ? bias[co] : 0.0;
                    for (int64_t ci = 0; ci < cig; ci++) {
                        const ptrdiff_t xc = n * xv.sn + conv_view_chan(&xv, g * cig + ci);
                        const float *wc = w + (co * cig + ci) * d->r * d->s;
                        for (int64_t r = 0; r < d->r; r++) {
                            int64_t ih = i * d->stride_h - d->pad_top + r * d->dil_h;
                            if (ih < 0 || ih >= d->h) continue;
                            for (int64_t s = 0; s < d->s; s++) {
                                int64_t iw = j * d->stride_w - d->pad_left + s * d->dil_w;
                                if (iw < 0 || iw >= d->w) continue;
                                acc += (double)x[xc + ih * xv.sh + iw * xv.sw] *
                                       (double)wc[r * d->s + s];
                            }
                        }
                    }
                    const ptrdiff_t o = yc + i * yv.sh + j * yv.sw;
                    if (res) acc += res[o];
                    if (act == RIDGE_CONV_ACT_RELU && !(acc > 0.0)) acc = 0.0;
                    y[o] = (float)acc;
                }
        }
    conv_zero_channel_padding(y, d->layout, d->n, d->c_out, oh, ow);
}
