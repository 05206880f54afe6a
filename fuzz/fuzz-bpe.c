/* GPT-2 BPE (include/ridge/bpe.h), two modes chosen by the first input byte:
 *   even: the rest is text, encoded with the tiny test vocabulary (tests/data/bpe-tiny) and,
 *         when installed, the real GPT-2 one; decoding must give the text back exactly, and
 *         encoding cut at every ridge_bpe_split_point must give the same ids;
 *   odd:  the rest is "ENCODER_JSON \0 VOCAB_BPE": the two loaders on hostile files; a
 *         vocabulary they accept must round-trip a fixed text and its own tokens. */
#include "fuzz.h"
#include "ridge/bpe.h"

static ridge_bpe *tiny, *real;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    if (ridge_bpe_load(RIDGE_BPE_TINY_DIR "/encoder.json", RIDGE_BPE_TINY_DIR "/vocab.bpe",
                       &tiny)) {
        fprintf(stderr, "fuzz-bpe: %s\n", ridge_last_error());
        abort();
    }
    if (ridge_bpe_load_dir(NULL, &real)) real = NULL; /* not installed: the tiny one only */
    return 0;
}

static void round_trip(const ridge_bpe *b, const uint8_t *text, size_t n)
{
    uint32_t *ids = malloc((n + 1) * sizeof *ids), *cut = malloc((n + 1) * sizeof *cut);
    uint8_t *back = malloc(n + 1);
    size_t k = 0, m = 0, len = 0;
    if (!ids || !cut || !back) abort();
    if (ridge_bpe_encode(b, text, n, ids, &k) || k > n) abort();
    if (ridge_bpe_decode(b, ids, k, back, n + 1, &len) || len != n || memcmp(back, text, n))
        abort();
    for (size_t at = 0, end; at < n; at = end) {
        end = ridge_bpe_split_point(text, n, at + 1);
        size_t q;
        if (end <= at || end > n || ridge_bpe_encode(b, text + at, end - at, cut + m, &q)) abort();
        m += q;
    }
    if (m != k || memcmp(ids, cut, k * sizeof *ids)) abort();
    free(ids);
    free(cut);
    free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    if (!(data[0] & 1)) {
        if (!ridge_bpe_can_encode()) return 0; /* built without PCRE2: nothing to encode */
        round_trip(tiny, p, n);
        if (real) round_trip(real, p, n);
        return 0;
    }
    const uint8_t *z = memchr(p, 0, n);
    size_t jn = z ? (size_t)(z - p) : n;
    fuzz_file j, v;
    fuzz_file_open(&j, p, jn);
    fuzz_file_open(&v, z ? z + 1 : p, z ? n - jn - 1 : 0);
    ridge_bpe *b = NULL;
    if (ridge_bpe_load(j.path, v.path, &b) == RIDGE_OK) {
        static const char text[] = "hello the world, it's 42 \xff\xc3\xa9\n\n";
        if (ridge_bpe_can_encode()) round_trip(b, (const uint8_t *)text, sizeof text - 1);
        uint32_t V = ridge_bpe_vocab_size(b);
        for (uint32_t i = 0; i < V; i++) {
            size_t len;
            const uint8_t *t = ridge_bpe_token(b, i, &len);
            if (!t || len < 1 || len > 255) abort();
        }
        ridge_bpe_destroy(b);
    }
    fuzz_file_close(&j);
    fuzz_file_close(&v);
    return 0;
}
