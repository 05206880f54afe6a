/* ridge_idx_read on gzip'd IDX files whose *decompressed* content is the fuzz input: the
 * fuzzer mutates IDX headers behind a valid gzip wrapper (fuzz-idx mutates the wrapper). */
#include <zlib.h>

#include "fuzz.h"
#include "ridge/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) abort();
    size_t cap = deflateBound(&z, size) + 64;
    unsigned char *gz = malloc(cap);
    if (!gz) abort();
    z.next_in = (unsigned char *)data, z.avail_in = (uInt)size;
    z.next_out = gz, z.avail_out = (uInt)cap;
    if (deflate(&z, Z_FINISH) != Z_STREAM_END) abort();
    size_t gzn = cap - z.avail_out;
    deflateEnd(&z);

    fuzz_file f;
    fuzz_file_open(&f, gz, gzn);
    free(gz);
    ridge_idx idx;
    if (ridge_idx_read(f.path, (size_t)64 << 20, &idx) == RIDGE_OK) ridge_idx_free(&idx);
    fuzz_file_close(&f);
    return 0;
}
