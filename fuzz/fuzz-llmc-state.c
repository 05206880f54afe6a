/* llm.c training state files: ridge_llmc_state_read on arbitrary bytes, into a shuffling
 * loader over two small shards made once (B 1, T 4) and 8 parameters' moments. Afterwards the
 * loader must still deliver batches (the MT19937 state and positions read must be usable). */
#include "fuzz.h"
#include "ridge/llmc.h"

enum { NP = 8 };
static ridge_llmc_loader *ld;
static char dir[] = "/tmp/ridge-fuzz-state.XXXXXX";

static void cleanup(void)
{
    char path[128];
    for (int s = 0; s < 2; s++) {
        snprintf(path, sizeof path, "%s/shard%d.bin", dir, s);
        unlink(path);
    }
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    if (!mkdtemp(dir)) abort();
    atexit(cleanup);
    uint16_t tok[64];
    for (int i = 0; i < 64; i++) tok[i] = (uint16_t)(i % 50);
    char path[128];
    for (int s = 0; s < 2; s++) {
        snprintf(path, sizeof path, "%s/shard%d.bin", dir, s);
        if (ridge_llmc_tokens_write(path, tok, 33 + 31 * (size_t)s)) abort();
    }
    snprintf(path, sizeof path, "%s/shard*.bin", dir);
    if (ridge_llmc_loader_create(path, 1, 4, 50257, 1, &ld)) abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_file f;
    fuzz_file_open(&f, data, size);
    float m[NP], v[NP];
    int step;
    uint64_t rng;
    if (ridge_llmc_state_read(f.path, &step, &rng, ld, m, v, NP) == RIDGE_OK) {
        const int *in, *tg;
        for (int i = 0; i < 40; i++)
            if (ridge_llmc_loader_next(ld, &in, &tg)) abort();
    }
    if (ridge_llmc_loader_reset(ld)) abort();
    fuzz_file_close(&f);
    return 0;
}
