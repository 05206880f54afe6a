/* ridge_mlp_load on arbitrary bytes, its trailing CRC-32 rewritten (fuzz_file_open_crc). */
#include "fuzz.h"
#include "ridge/mlp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_file f;
    fuzz_file_open_crc(&f, data, size);
    ridge_mlp *m = NULL;
    if (ridge_mlp_load(f.path, &m) == RIDGE_OK) ridge_mlp_destroy(m);
    fuzz_file_close(&f);
    return 0;
}
