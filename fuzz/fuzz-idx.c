/* ridge_idx_read on arbitrary bytes: plain IDX, and gzip'd IDX (detected from the magic, so
 * gzip seeds reach the inflate path). The cap keeps hostile-but-valid headers from asking for
 * more than the fuzzer's memory limit; the reader must refuse, never crash or over-read. */
#include "fuzz.h"
#include "ridge/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_file f;
    fuzz_file_open(&f, data, size);
    ridge_idx idx;
    if (ridge_idx_read(f.path, (size_t)64 << 20, &idx) == RIDGE_OK) {
        /* every element must be readable: touch the last byte */
        size_t bytes = idx.count * ridge_idx_type_size(idx.type);
        if (bytes && ((volatile unsigned char *)idx.data)[bytes - 1] == 0x5a) (void)0;
        ridge_idx_free(&idx);
    }
    fuzz_file_close(&f);
    return 0;
}
