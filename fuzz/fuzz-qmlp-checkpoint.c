/* ridge_qmlp_load (the int8 MLP checkpoint) on arbitrary bytes, its trailing CRC-32
 * rewritten (fuzz_file_open_crc); a model that loads runs one forward pass on a zero image,
 * so the scales, zero points and biases it accepted are used by the int8 GEMM plans. */
#include "fuzz.h"
#include "ridge/quant.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ridge_ctx *ctx;
    if (!ctx && ridge_ctx_create(NULL, &ctx) != RIDGE_OK) abort();
    fuzz_file f;
    fuzz_file_open_crc(&f, data, size);
    ridge_qmlp *q = NULL;
    if (ridge_qmlp_load(ctx, f.path, &q) == RIDGE_OK) {
        const ridge_mlp_config *c = ridge_qmlp_config(q);
        uint8_t *img = calloc(c->sizes[0], 1);
        const float *logits;
        if (!img) abort();
        if (ridge_qmlp_forward(ctx, q, img, 1, &logits) != RIDGE_OK) {
            fprintf(stderr, "fuzz-qmlp: a loaded model does not run: %s\n", ridge_last_error());
            abort();
        }
        free(img);
        ridge_qmlp_destroy(q);
    }
    fuzz_file_close(&f);
    return 0;
}
