/* llm.c's files: checkpoint, token shards, tokenizer, MT19937 and the data loader. Every file
 * is written by the test itself (in a temporary directory), then corrupted field by field. */
#include <stdint.h>
#include <unistd.h>

#include "test.h"

static char dir[64];

static const char *tmp(const char *name)
{
    static char buf[4][160];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static void write_raw(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(p, 1, n, f) == n);
    if (f) fclose(f);
}

static unsigned char *read_raw(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = malloc(*n + 16);
    if (fread(p, 1, *n, f) != *n) *n = 0;
    fclose(f);
    return p;
}

/* Expects `st` to be a failure of kind `want` whose message contains `needle`. */
#define CHECK_FAILS(call, want, needle)                                                        \
    do {                                                                                       \
        ridge_status s_ = (call);                                                              \
        CHECKF(s_ == (want) && strstr(ridge_last_error(), needle), "got %s: '%s', want '%s'",  \
               ridge_status_str(s_), ridge_last_error(), needle);                              \
    } while (0)

static void test_config(void)
{
    ridge_gpt2_config c = ridge_gpt2_config_depth(12);
    size_t sizes[16], n;
    CHECK_OK(ridge_gpt2_param_sizes(&c, sizes, &n));
    CHECK(n == 124475904u); /* llm.c prints this for gpt2_124M.bin */
    CHECK(sizes[0] == 50304u * 768 && sizes[4] == 12u * 3 * 768 * 768 && sizes[15] == 768);
    CHECK(strcmp(ridge_gpt2_param_name(6), "attprojw") == 0);
    ridge_gpt2_config b = c;
    b.channels = 770;
    CHECK_FAILS(ridge_gpt2_param_sizes(&b, sizes, &n), RIDGE_EINVAL, "num_heads");
    b = c, b.padded_vocab_size = 100;
    CHECK_FAILS(ridge_gpt2_config_check(&b), RIDGE_EINVAL, "padded_vocab_size");
    b = c, b.num_layers = 0;
    CHECK_FAILS(ridge_gpt2_config_check(&b), RIDGE_EINVAL, "num_layers");
    b = c, b.num_layers = 1 << 30;
    CHECK_FAILS(ridge_gpt2_config_check(&b), RIDGE_EINVAL, "too large");
    b = c, b.vocab_size = 70000, b.padded_vocab_size = 70016;
    CHECK_FAILS(ridge_gpt2_config_check(&b), RIDGE_EINVAL, "vocab_size");
}

static void test_checkpoint(void)
{
    ridge_gpt2_config c = {16, 10, 12, 2, 2, 8}, r;
    size_t n;
    CHECK_OK(ridge_gpt2_param_sizes(&c, NULL, &n));
    CHECK(n == 12 * 8 + 16 * 8 + 2 * (12 * 64 + 13 * 8) + 2 * 8);
    float *p = malloc(n * sizeof *p), *q = malloc(n * sizeof *q);
    for (size_t i = 0; i < n; i++) p[i] = (float)i * 0.25f - 3.0f;
    const char *path = tmp("model.bin");
    CHECK_OK(ridge_llmc_model_write(path, &c, p));
    CHECK(access(tmp("model.bin.tmp"), F_OK) != 0); /* the temporary was renamed */
    size_t len;
    unsigned char *raw = read_raw(path, &len);
    CHECK(raw && len == 1024 + 4 * n);
    int32_t h[8];
    memcpy(h, raw, sizeof h);
    CHECK(h[0] == 20240326 && h[1] == 3 && h[2] == 16 && h[3] == 10 && h[4] == 2 && h[5] == 2 &&
          h[6] == 8 && h[7] == 12);
    CHECK(memcmp(raw + 1024, p, 4 * n) == 0);
    CHECK_OK(ridge_llmc_model_read(path, &r, NULL, 0));
    CHECK(memcmp(&r, &c, sizeof c) == 0);
    CHECK_OK(ridge_llmc_model_read(path, &r, q, n));
    CHECK(memcmp(p, q, n * sizeof *p) == 0);
    CHECK_FAILS(ridge_llmc_model_read(path, &r, q, n - 1), RIDGE_EINVAL, "buffer");

    /* corruptions, each naming what is wrong */
    const char *bad = tmp("bad.bin");
    int32_t *hw = (int32_t *)raw;
    hw[0] = 20240520;
    write_raw(bad, raw, len);
    CHECK_FAILS(ridge_llmc_model_read(bad, &r, NULL, 0), RIDGE_EFORMAT, "magic");
    hw[0] = 20240326, hw[1] = 5;
    write_raw(bad, raw, len);
    CHECK_FAILS(ridge_llmc_model_read(bad, &r, NULL, 0), RIDGE_EFORMAT, "version");
    hw[1] = 3, hw[6] = -8;
    write_raw(bad, raw, len);
    CHECK_FAILS(ridge_llmc_model_read(bad, &r, NULL, 0), RIDGE_EFORMAT, "channels");
    hw[6] = 7;
    write_raw(bad, raw, len);
    CHECK_FAILS(ridge_llmc_model_read(bad, &r, NULL, 0), RIDGE_EFORMAT, "num_heads");
    hw[6] = 8, hw[7] = 9; /* Vp < V */
    write_raw(bad, raw, len);
    CHECK_FAILS(ridge_llmc_model_read(bad, &r, NULL, 0), RIDGE_EFORMAT, "padded_vocab_size");
    hw[7] = 12, hw[4] = 1 << 20; /* a huge model in a small file: refused, nothing allocated */
    write_raw(bad, raw, len);
    CHECK_FAILS(ridge_llmc_model_read(bad, &r, NULL, 0), RIDGE_EFORMAT, "");
    hw[4] = 2;
    write_raw(bad, raw, len - 4);
    CHECK_FAILS(ridge_llmc_model_read(bad, &r, NULL, 0), RIDGE_EFORMAT, "truncated");
    write_raw(bad, raw, len + 4);
    CHECK_FAILS(ridge_llmc_model_read(bad, &r, NULL, 0), RIDGE_EFORMAT, "trailing");
    write_raw(bad, raw, 100);
    CHECK_FAILS(ridge_llmc_model_read(bad, &r, NULL, 0), RIDGE_EFORMAT, "header");
    CHECK_FAILS(ridge_llmc_model_read(tmp("missing.bin"), &r, NULL, 0), RIDGE_EIO, "missing");
    CHECK_FAILS(ridge_llmc_model_write(tmp("nodir/x.bin"), &c, p), RIDGE_EIO, "cannot create");
    free(raw);
    free(p);
    free(q);
}

static void test_tokens(void)
{
    uint16_t t[100];
    for (int i = 0; i < 100; i++) t[i] = (uint16_t)(i * 7 % 50);
    const char *path = tmp("tok.bin");
    CHECK_OK(ridge_llmc_tokens_write(path, t, 100));
    size_t n = 0, len;
    CHECK_OK(ridge_llmc_tokens_info(path, &n));
    CHECK(n == 100);
    uint16_t *r = NULL;
    CHECK_OK(ridge_llmc_tokens_read(path, 50, &r, &n));
    CHECK(r && n == 100 && memcmp(r, t, sizeof t) == 0);
    ridge_free(r);
    CHECK_FAILS(ridge_llmc_tokens_read(path, 49, &r, &n), RIDGE_EFORMAT, "token 7 has id 49");
    CHECK(r == NULL);

    unsigned char *raw = read_raw(path, &len);
    CHECK(raw && len == 1024 + 200);
    int32_t *h = (int32_t *)raw;
    CHECK(h[0] == 20240520 && h[1] == 1 && h[2] == 100 && h[3] == 0);
    const char *bad = tmp("badtok.bin");
    h[0] = 1;
    write_raw(bad, raw, len);
    CHECK_FAILS(ridge_llmc_tokens_info(bad, &n), RIDGE_EFORMAT, "magic");
    h[0] = 20240520, h[1] = 7;
    write_raw(bad, raw, len);
    CHECK_FAILS(ridge_llmc_tokens_info(bad, &n), RIDGE_EFORMAT, "version");
    h[1] = 1, h[2] = 101;
    write_raw(bad, raw, len);
    CHECK_FAILS(ridge_llmc_tokens_info(bad, &n), RIDGE_EFORMAT, "truncated");
    h[2] = 0;
    write_raw(bad, raw, len);
    CHECK_FAILS(ridge_llmc_tokens_read(bad, 0, &r, &n), RIDGE_EFORMAT, "ntok");
    h[2] = 99;
    write_raw(bad, raw, len);
    CHECK_FAILS(ridge_llmc_tokens_read(bad, 0, &r, &n), RIDGE_EFORMAT, "trailing");
    CHECK_FAILS(ridge_llmc_tokens_write(bad, t, 0), RIDGE_EINVAL, "tokens");
    free(raw);
}

static void test_tokenizer(void)
{
    const char *words[] = {"a", "bc", "\xe2\x82\xac", " the", "<|endoftext|>"};
    const uint8_t *pieces[5];
    uint8_t lens[5];
    for (int i = 0; i < 5; i++) pieces[i] = (const uint8_t *)words[i], lens[i] = (uint8_t)strlen(words[i]);
    const char *path = tmp("tokenizer.bin");
    CHECK_OK(ridge_llmc_tokenizer_write(path, 5, 4, pieces, lens));
    ridge_llmc_tokenizer *tok = NULL;
    CHECK_OK(ridge_llmc_tokenizer_read(path, &tok));
    if (tok) {
        CHECK(ridge_llmc_tokenizer_vocab_size(tok) == 5 && ridge_llmc_tokenizer_eot(tok) == 4);
        for (uint32_t i = 0; i < 5; i++) {
            size_t l = 0;
            const uint8_t *d = ridge_llmc_tokenizer_decode(tok, i, &l);
            CHECK(d && l == lens[i] && memcmp(d, words[i], l) == 0);
        }
        CHECK(ridge_llmc_tokenizer_decode(tok, 5, NULL) == NULL);
        ridge_llmc_tokenizer_destroy(tok);
    }
    size_t len;
    unsigned char *raw = read_raw(path, &len);
    CHECK(raw && len == 1024 + 5 + 1 + 2 + 3 + 4 + 13);
    int32_t *h = (int32_t *)raw;
    CHECK(h[0] == 20240328 && h[1] == 2 && h[2] == 5 && h[3] == 4);
    const char *bad = tmp("badtokz.bin");
    h[3] = 5;
    write_raw(bad, raw, len);
    CHECK_FAILS(ridge_llmc_tokenizer_read(bad, &tok), RIDGE_EFORMAT, "eot_token");
    h[3] = 4, h[1] = 1; /* version 1 implies GPT-2's 50257 */
    write_raw(bad, raw, len);
    CHECK_FAILS(ridge_llmc_tokenizer_read(bad, &tok), RIDGE_EFORMAT, "50257");
    h[1] = 3;
    write_raw(bad, raw, len);
    CHECK_FAILS(ridge_llmc_tokenizer_read(bad, &tok), RIDGE_EFORMAT, "version");
    h[1] = 2, h[2] = 1000000; /* more tokens than the body can hold */
    write_raw(bad, raw, len);
    CHECK_FAILS(ridge_llmc_tokenizer_read(bad, &tok), RIDGE_EFORMAT, "vocab_size");
    h[2] = 5;
    write_raw(bad, raw, len - 3);
    CHECK_FAILS(ridge_llmc_tokenizer_read(bad, &tok), RIDGE_EFORMAT, "token 4");
    write_raw(bad, raw, len + 1);
    CHECK_FAILS(ridge_llmc_tokenizer_read(bad, &tok), RIDGE_EFORMAT, "trailing");
    raw[1024 + 2] = 0; /* token 1's length byte */
    write_raw(bad, raw, len);
    CHECK_FAILS(ridge_llmc_tokenizer_read(bad, &tok), RIDGE_EFORMAT, "token 1: length byte is 0");
    CHECK(tok == NULL);
    lens[2] = 0;
    CHECK_FAILS(ridge_llmc_tokenizer_write(bad, 5, 4, pieces, lens), RIDGE_EINVAL, "token 2");
    free(raw);
}

static void test_mt19937(void)
{
    ridge_mt19937 r;
    ridge_mt19937_seed(&r, 137);
    const uint32_t want[5] = {4053805790u, 2173880614u, 380293709u, 1237255315u, 2986595568u};
    for (int i = 0; i < 5; i++) CHECK(ridge_mt19937_u32(&r) == want[i]);
    /* past one full state regeneration: numpy.random.RandomState(137), draw 1000 */
    for (int i = 5; i < 999; i++) ridge_mt19937_u32(&r);
    uint32_t v = ridge_mt19937_u32(&r);
    CHECKF(v == 3961992935u, "draw 1000 = %u", v);
    ridge_mt19937_seed(&r, 137);
    float f = ridge_mt19937_f32(&r);
    CHECK(f == (float)(4053805790u & 0xffffff) / 16777216.0f);
}

/* Shards whose token at position p of shard k is 100k + p, so a batch's first input names it. */
static void test_loader(void)
{
    const size_t B = 2, T = 4;
    const int nsamp[3] = {5, 3, 4};
    for (int k = 0; k < 3; k++) {
        uint16_t t[64];
        size_t n = (size_t)nsamp[k] * B * T + 1 + (k == 1 ? 2 : 0); /* shard 1 has a tail */
        for (size_t p = 0; p < n; p++) t[p] = (uint16_t)(100 * k + p);
        char name[32];
        snprintf(name, sizeof name, "shard_%d.bin", k);
        CHECK_OK(ridge_llmc_tokens_write(tmp(name), t, n));
    }
    ridge_llmc_loader *ld = NULL;
    const int *in, *tg;
    /* sequential: shards in name order, samples in order, then around again */
    CHECK_OK(ridge_llmc_loader_create(tmp("shard_*.bin"), B, T, 300, 0, &ld));
    if (ld) {
        CHECK(ridge_llmc_loader_num_shards(ld) == 3 && ridge_llmc_loader_num_tokens(ld) == 41 + 27 + 33);
        int ok = 1;
        for (int e = 0; e < 2; e++)
            for (int k = 0; k < 3; k++)
                for (int s = 0; s < nsamp[k]; s++) {
                    CHECK_OK(ridge_llmc_loader_next(ld, &in, &tg));
                    for (size_t i = 0; i < B * T; i++)
                        ok &= in[i] == 100 * k + 8 * s + (int)i && tg[i] == in[i] + 1;
                }
        CHECK(ok);
        CHECK_OK(ridge_llmc_loader_next(ld, &in, &tg));
        CHECK_OK(ridge_llmc_loader_reset(ld));
        CHECK_OK(ridge_llmc_loader_next(ld, &in, &tg));
        CHECK(in[0] == 0);
        ridge_llmc_loader_destroy(ld);
    }
    /* shuffled: the order llm.c's loader gives, computed independently with numpy's MT19937:
     *   rs = numpy.random.RandomState(42); draw = lambda: int(rs.randint(0, 2**32, dtype=uint64))
     *   perm(a): for i in n-1..1: j = draw() % (i+1); swap a[i], a[j]
     *   shards = [0,1,2]; per epoch: perm(shards); for k in shards: o = range(nsamp[k]); perm(o)
     */
    const int want[24] = {216, 224, 208, 200, 108, 100, 116, 8,  0,   24,  16,  32,
                          0,   16,  8,   24,  32,  208, 216, 200, 224, 116, 100, 108};
    CHECK_OK(ridge_llmc_loader_create(tmp("shard_*.bin"), B, T, 300, 1, &ld));
    if (ld) {
        for (int i = 0; i < 24; i++) {
            CHECK_OK(ridge_llmc_loader_next(ld, &in, &tg));
            CHECKF(in[0] == want[i], "batch %d starts at %d, want %d", i, in[0], want[i]);
        }
        ridge_llmc_loader_destroy(ld);
    }
    /* training state: save mid-epoch, draw on, restore into a fresh loader: the same batches */
    CHECK_OK(ridge_llmc_loader_create(tmp("shard_*.bin"), B, T, 300, 1, &ld));
    ridge_llmc_loader *ld2 = NULL;
    CHECK_OK(ridge_llmc_loader_create(tmp("shard_*.bin"), B, T, 300, 1, &ld2));
    if (ld && ld2) {
        float m[5] = {1, 2, 3, 4, 5}, v[5] = {6, 7, 8, 9, 10}, m2[6], v2[6];
        for (int i = 0; i < 7; i++) CHECK_OK(ridge_llmc_loader_next(ld, &in, &tg));
        CHECK_OK(ridge_llmc_state_write(tmp("state.bin"), 7, 12345, ld, m, v, 5));
        int step = 0;
        uint64_t srng = 0;
        CHECK_OK(ridge_llmc_state_read(tmp("state.bin"), &step, &srng, ld2, m2, v2, 5));
        CHECK(step == 7 && srng == 12345 && !memcmp(m, m2, sizeof m) && !memcmp(v, v2, sizeof v));
        int same = 1;
        for (int i = 7; i < 30; i++) {
            const int *in2, *tg2;
            CHECK_OK(ridge_llmc_loader_next(ld, &in, &tg));
            CHECK_OK(ridge_llmc_loader_next(ld2, &in2, &tg2));
            same &= in[0] == in2[0] && (i >= 24 || in[0] == want[i]);
        }
        CHECK(same);
        /* corruptions */
        size_t len;
        unsigned char *raw = read_raw(tmp("state.bin"), &len);
        write_raw(tmp("badstate.bin"), raw, len - 1);
        CHECK_FAILS(ridge_llmc_state_read(tmp("badstate.bin"), &step, &srng, ld2, m2, v2, 5),
                    RIDGE_EFORMAT, "bytes");
        CHECK_FAILS(ridge_llmc_state_read(tmp("state.bin"), &step, &srng, ld2, m2, v2, 6),
                    RIDGE_EFORMAT, "");
        raw[1024 + 40 + 8] = 7; /* shard order [7, ...] */
        write_raw(tmp("badstate.bin"), raw, len);
        CHECK_FAILS(ridge_llmc_state_read(tmp("badstate.bin"), &step, &srng, ld2, m2, v2, 5),
                    RIDGE_EFORMAT, "shard order");
        free(raw);
    }
    ridge_llmc_loader_destroy(ld);
    ridge_llmc_loader_destroy(ld2);
    ld = NULL;

    /* refusals */
    CHECK_FAILS(ridge_llmc_loader_create(tmp("nothing_*.bin"), B, T, 300, 1, &ld), RIDGE_EIO,
                "nothing_");
    CHECK_FAILS(ridge_llmc_loader_create(tmp("shard_*.bin"), 4, 8, 300, 1, &ld), RIDGE_EFORMAT,
                "fewer than B*T+1");
    CHECK_FAILS(ridge_llmc_loader_create(tmp("shard_*.bin"), B, T, 20, 0, &ld), RIDGE_EFORMAT,
                "outside the vocabulary");
    CHECK(ld == NULL);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/ridge-test-llmc-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_config();
    test_checkpoint();
    test_tokens();
    test_tokenizer();
    test_mt19937();
    test_loader();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return test_finish("test-llmc");
}
