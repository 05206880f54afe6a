/* ridge_qcnn_load (the int8 CNN checkpoint) on arbitrary bytes, its trailing CRC-32 rewritten
 * (fuzz_file_open_crc); a model that loads runs one forward pass on a zero image, so the
 * architecture, scales, zero points and biases it accepted are used by the int8 kernels. */
#include "fuzz.h"
#include "ridge/quant.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ridge_ctx *ctx;
    if (!ctx) {
        ridge_ctx_options o;
        ridge_ctx_options_init(&o);
        o.threads = 1;
        if (ridge_ctx_create(&o, &ctx) != RIDGE_OK) abort();
    }
    fuzz_file f;
    fuzz_file_open_crc(&f, data, size);
    ridge_qcnn *q = NULL;
    if (ridge_qcnn_load(ctx, f.path, &q) == RIDGE_OK) {
        const ridge_cnn_config *c = ridge_qcnn_config(q);
        uint8_t *img = calloc((size_t)c->in_h * (size_t)c->in_w * (size_t)c->in_c, 1);
        const float *logits;
        if (!img) abort();
        if (ridge_qcnn_forward(ctx, q, img, 1, &logits) != RIDGE_OK) {
            fprintf(stderr, "fuzz-qcnn: a loaded model does not run: %s\n", ridge_last_error());
            abort();
        }
        free(img);
        ridge_qcnn_destroy(q);
    }
    fuzz_file_close(&f);
    return 0;
}
