/* The pieces of post-training quantization both quantized models use (quant-internal.h). */
#include <math.h>

#include "quant/quant-internal.h"

void quant_weights_per_row(const float *w, size_t rows, size_t cols, int8_t *q, float *scale)
{
    for (size_t o = 0; o < rows; o++) {
        const float *r = w + o * cols;
        double amax = 0;
        for (size_t i = 0; i < cols; i++) amax = RIDGE_MAX(amax, fabs((double)r[i]));
        const float s = amax > 0 ? (float)(amax / 127.0) : 1.0f;
        scale[o] = s;
        for (size_t i = 0; i < cols; i++) {
            double v = nearbyint((double)r[i] / s);
            q[o * cols + i] = (int8_t)(v > 127 ? 127 : v < -127 ? -127 : v);
        }
    }
}

void quant_range_u8(double lo, double hi, float *scale, int32_t *zp)
{
    lo = RIDGE_MIN(lo, 0.0), hi = RIDGE_MAX(hi, 0.0);
    const double range = hi - lo;
    *scale = range > 0 ? (float)(range / 255.0) : 1.0f;
    const double z = nearbyint(-lo / *scale);
    *zp = (int32_t)(z < 0 ? 0 : z > 255 ? 255 : z);
}

int32_t quant_bias(double b, double s)
{
    const double q = nearbyint(b / s);
    return (int32_t)(q > INT32_MAX ? INT32_MAX : q < INT32_MIN ? INT32_MIN : q);
}

ridge_status quant_score(const float *logits, const uint8_t *labels, size_t B, size_t C,
                         size_t first, double *loss_sum, size_t *right)
{
    for (size_t i = 0; i < B; i++) {
        const float *z = logits + i * C;
        const size_t y = labels[i];
        if (y >= C)
            return ridge_error(RIDGE_EINVAL, "label %zu of image %zu >= %zu classes", y,
                               first + i, C);
        size_t best = 0;
        double zmax = z[0], s = 0;
        for (size_t c = 1; c < C; c++) {
            if (z[c] > z[best]) best = c;
            zmax = RIDGE_MAX(zmax, (double)z[c]);
        }
        for (size_t c = 0; c < C; c++) s += exp((double)z[c] - zmax);
        *loss_sum += log(s) + zmax - (double)z[y];
        *right += best == y;
    }
    return RIDGE_OK;
}
