/* llm.c tokenizer files: ridge_llmc_tokenizer_read on arbitrary bytes, then every piece
 * decoded (and one id past the end, which must give NULL). */
#include "fuzz.h"
#include "ridge/llmc.h"

static volatile unsigned sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_file f;
    fuzz_file_open(&f, data, size);
    ridge_llmc_tokenizer *t = NULL;
    if (ridge_llmc_tokenizer_read(f.path, &t) == RIDGE_OK) {
        uint32_t V = ridge_llmc_tokenizer_vocab_size(t);
        unsigned sum = 0;
        for (uint32_t i = 0; i < V; i++) {
            size_t len = 0;
            const uint8_t *p = ridge_llmc_tokenizer_decode(t, i, &len);
            if (!p || len < 1) abort();
            for (size_t j = 0; j < len; j++) sum += p[j];
        }
        size_t len;
        if (ridge_llmc_tokenizer_decode(t, V, &len)) abort();
        (void)ridge_llmc_tokenizer_eot(t);
        sink = sum; /* keeps the reads */
        ridge_llmc_tokenizer_destroy(t);
    }
    fuzz_file_close(&f);
    return 0;
}
