/* ridge_mlp_load on arbitrary bytes. The last four bytes of a checkpoint are a CRC-32 of the
 * rest; the harness always rewrites it so that mutations reach the
 * header checks, the allocation and the parameter read instead of stopping at the CRC. */
#include "fuzz.h"
#include "ridge/mlp.h"
#include "ridge/nn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char *buf = malloc(size ? size : 1);
    if (!buf) abort();
    memcpy(buf, data, size);
    if (size >= 4) {
        uint32_t crc = ridge_crc32(0, buf, size - 4);
        for (int i = 0; i < 4; i++) buf[size - 4 + i] = (unsigned char)(crc >> (8 * i));
    }
    fuzz_file f;
    fuzz_file_open(&f, buf, size);
    free(buf);
    ridge_mlp *m = NULL;
    if (ridge_mlp_load(f.path, &m) == RIDGE_OK) ridge_mlp_destroy(m);
    fuzz_file_close(&f);
    return 0;
}
