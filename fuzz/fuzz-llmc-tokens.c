/* llm.c token shards: ridge_llmc_tokens_info and ridge_llmc_tokens_read (with and without a
 * vocabulary check) on arbitrary bytes. */
#include "fuzz.h"
#include "ridge/core.h"
#include "ridge/llmc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_file f;
    fuzz_file_open(&f, data, size);
    size_t n;
    (void)ridge_llmc_tokens_info(f.path, &n);
    uint16_t *tok = NULL;
    if (ridge_llmc_tokens_read(f.path, size & 1 ? 50257 : 0, &tok, &n) == RIDGE_OK) {
        if (n && tok[n - 1] == 0xffff) (void)0; /* the last id must be readable */
        ridge_free(tok);
    }
    fuzz_file_close(&f);
    return 0;
}
