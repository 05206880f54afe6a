/* llm.c checkpoints: ridge_llmc_model_read on arbitrary bytes, header first, then (when the
 * header is accepted and small) the parameters too. */
#include "fuzz.h"
#include "ridge/llmc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_file f;
    fuzz_file_open(&f, data, size);
    ridge_gpt2_config cfg;
    size_t sizes[RIDGE_GPT2_NUM_TENSORS], total;
    if (ridge_llmc_model_read(f.path, &cfg, NULL, 0) == RIDGE_OK &&
        ridge_gpt2_param_sizes(&cfg, sizes, &total) == RIDGE_OK && total <= ((size_t)1 << 22)) {
        float *p = malloc(total * sizeof *p + 1);
        if (!p) abort();
        (void)ridge_llmc_model_read(f.path, &cfg, p, total);
        free(p);
    }
    fuzz_file_close(&f);
    return 0;
}
