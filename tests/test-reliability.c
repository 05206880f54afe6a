/* Hostile input: regression tests for what the fuzzers (fuzz/) found, and resource limits:
 * a small file whose header claims a huge size is refused before anything that size is
 * allocated. Each hostile read runs in a child process whose address space is capped
 * (RLIMIT_AS, current use + 256 MiB; not under sanitizers, which reserve terabytes of
 * shadow), so a reader that allocated first would fail with RIDGE_ENOMEM (or die) instead of
 * the format error the test requires; the child's peak RSS is checked too. See
 * docs/RELIABILITY.md. */
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ridge/io.h"
#include "test.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

static char dir[64];
static char pathbuf[256];

static const char *tpath(const char *name)
{
    snprintf(pathbuf, sizeof pathbuf, "%s/%s", dir, name);
    return pathbuf;
}

static void write_bytes(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(p, 1, n, f) == n);
    if (f) fclose(f);
}

static size_t read_bytes(const char *path, unsigned char *p, size_t cap)
{
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(p, 1, cap, f) : 0;
    if (f) fclose(f);
    return n;
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* Rewrites a ridge checkpoint's trailing CRC-32 after a patch (as fuzz/ does). */
static void fix_crc(unsigned char *p, size_t n) { put32(p + n - 4, ridge_crc32(0, p, n - 4)); }

static long rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static long vm_bytes(void)
{
    long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f && fscanf(f, "%ld", &pages) != 1) pages = 0;
    if (f) fclose(f);
    return pages * sysconf(_SC_PAGESIZE);
}

/* Runs read(path) in a capped child; checks it fails with one of the statuses in `want` (a
 * 0-terminated list) and that the child's RSS grew by less than 64 MiB. */
typedef ridge_status (*reader_fn)(const char *path);

static void hostile(const char *what, reader_fn read, const char *path, const ridge_status *want)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (!SANITIZED) {
            struct rlimit rl = {(rlim_t)vm_bytes() + (256 << 20), (rlim_t)vm_bytes() + (256 << 20)};
            setrlimit(RLIMIT_AS, &rl);
        }
        long before = rss_kib();
        ridge_status st = read(path);
        if (st) fprintf(stderr, "  %s: %s (expected)\n", what, ridge_last_error());
        _exit(rss_kib() - before > 64 * 1024 ? 100 : (int)st);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECKF(WIFEXITED(status), "%s: the reader died (signal %d)", what, WTERMSIG(status));
    if (!WIFEXITED(status)) return;
    int rc = WEXITSTATUS(status), ok = 0;
    for (const ridge_status *w = want; *w; w++) ok |= rc == (int)*w;
    CHECKF(ok, "%s: status %d (%s)", what, rc,
           rc == 100 ? "peak RSS grew by over 64 MiB" : ridge_status_str((ridge_status)rc));
}

static const ridge_status want_format[] = {RIDGE_EFORMAT, RIDGE_EOVERFLOW, 0};

/* ---- readers as reader_fn --------------------------------------------------------------- */

static ridge_status read_idx(const char *p)
{
    ridge_idx x;
    ridge_status st = ridge_idx_read(p, 0, &x);
    ridge_idx_free(&x);
    return st;
}
static ridge_status read_tokens(const char *p)
{
    uint16_t *t = NULL;
    size_t n;
    ridge_status st = ridge_llmc_tokens_read(p, 0, &t, &n);
    ridge_free(t);
    return st;
}
static ridge_status read_tokenizer(const char *p)
{
    ridge_llmc_tokenizer *t = NULL;
    ridge_status st = ridge_llmc_tokenizer_read(p, &t);
    ridge_llmc_tokenizer_destroy(t);
    return st;
}
static ridge_status read_model(const char *p)
{
    ridge_gpt2_config c;
    return ridge_llmc_model_read(p, &c, NULL, 0);
}
static ridge_status read_mlp(const char *p)
{
    ridge_mlp *m = NULL;
    ridge_status st = ridge_mlp_load(p, &m);
    ridge_mlp_destroy(m);
    return st;
}
static ridge_status read_cnn(const char *p)
{
    ridge_cnn *m = NULL;
    ridge_status st = ridge_cnn_load(p, &m);
    ridge_cnn_destroy(m);
    return st;
}

static ridge_status read_qcnn(const char *p)
{
    ridge_ctx *ctx = NULL;
    ridge_ctx_options o;
    ridge_ctx_options_init(&o);
    o.threads = 1;
    ridge_status st = ridge_ctx_create(&o, &ctx);
    ridge_qcnn *q = NULL;
    if (!st) st = ridge_qcnn_load(ctx, p, &q);
    ridge_qcnn_destroy(q);
    ridge_ctx_destroy(ctx);
    return st;
}

/* ---- llm.c files: 1 KiB headers claiming 2^31 - 1 of everything -------------------------- */

static void test_llmc_hostile_headers(void)
{
    int32_t h[256 + 8] = {0};
    h[0] = RIDGE_LLMC_TOKENS_MAGIC, h[1] = RIDGE_LLMC_TOKENS_VERSION, h[2] = INT32_MAX;
    write_bytes(tpath("tokens"), h, sizeof h); /* 1024 + 32 bytes for 2^31 - 1 tokens */
    hostile("tokens: 2^31-1 tokens in 1 KiB", read_tokens, tpath("tokens"), want_format);

    memset(h, 0, sizeof h);
    h[0] = RIDGE_LLMC_TOKENIZER_MAGIC, h[1] = RIDGE_LLMC_TOKENIZER_VERSION;
    h[2] = 65536, h[3] = 0;
    write_bytes(tpath("tokenizer"), h, sizeof h);
    hostile("tokenizer: 65536 tokens in 1 KiB", read_tokenizer, tpath("tokenizer"), want_format);
    h[2] = INT32_MAX;
    write_bytes(tpath("tokenizer"), h, sizeof h);
    hostile("tokenizer: 2^31-1 tokens", read_tokenizer, tpath("tokenizer"), want_format);

    /* GPT-2 XL-sized (1.5 G parameters) and absurd (L = 2^20) configs in 1 KiB */
    const int32_t cfgs[2][6] = {{1024, 50257, 48, 25, 1600, 50304},
                                {1 << 20, 50257, 1 << 20, 1, 1 << 20, 50304}};
    for (int i = 0; i < 2; i++) {
        memset(h, 0, sizeof h);
        h[0] = RIDGE_LLMC_MODEL_MAGIC, h[1] = RIDGE_LLMC_MODEL_VERSION;
        for (int j = 0; j < 6; j++) h[2 + j] = cfgs[i][j];
        write_bytes(tpath("model"), h, sizeof h);
        hostile("checkpoint: huge config in 1 KiB", read_model, tpath("model"), want_format);
    }
}

/* ---- IDX: 4 GiB promised by 16- to 40-byte files, plain and gzip'd ----------------------- */

static void test_idx_hostile_headers(void)
{
    /* u8, 2 dims of 65536 = 4 GiB (the default cap), and 8 dims of 2^31 - 1 (overflows) */
    const unsigned char four_gib[12] = {0, 0, 8, 2, 0, 1, 0, 0, 0, 1, 0, 0};
    write_bytes(tpath("idx"), four_gib, sizeof four_gib);
    hostile("idx: 4 GiB header in 12 bytes", read_idx, tpath("idx"), want_format);
    unsigned char huge[4 + 32] = {0, 0, 0x0e, 8};
    for (int d = 0; d < 8; d++) put32(huge + 4 + 4 * d, 0xffffff7fu); /* big-endian 2^31-1 */
    write_bytes(tpath("idx"), huge, sizeof huge);
    hostile("idx: 8 dims of 2^31-1", read_idx, tpath("idx"), want_format);
    if (ridge_io_has_zlib()) {
        /* a real gzip'd file of 1 MiB whose trailer is patched to claim 4 GiB: the
         * stream's recorded length and deflate's ratio bound refuse it before allocating */
        static uint8_t px[1 << 20];
        ridge_idx x = {RIDGE_IDX_U8, 2, {1024, 1024}, 1 << 20, px};
        CHECK_OK(ridge_idx_write(tpath("idx.gz"), &x, 1));
        unsigned char gz[1 << 16];
        size_t n = read_bytes(tpath("idx.gz"), gz, sizeof gz);
        CHECK(n > 18 && n < sizeof gz);
        /* ISIZE (the stream's recorded length) claims 4 GiB */
        put32(gz + n - 4, 0xfffffffcu);
        write_bytes(tpath("idx.gz"), gz, n);
        hostile("idx.gz: ISIZE 4 GiB in a 1 KiB stream", read_idx, tpath("idx.gz"),
                want_format);
    } else {
        SKIP("gzip'd IDX: no zlib");
    }
}

/* ---- ridge checkpoints ------------------------------------------------------------------- */

static size_t small_mlp(unsigned char *buf, size_t cap)
{
    ridge_mlp_config c = {0};
    c.nlayers = 1, c.sizes[0] = 3, c.sizes[1] = 2, c.in_std = 1;
    ridge_optim_config o;
    ridge_optim_config_init(&o);
    ridge_mlp *m = NULL;
    CHECK_OK(ridge_mlp_create(&c, &o, 4, 1, &m));
    CHECK_OK(ridge_mlp_save(m, tpath("mlp")));
    ridge_mlp_destroy(m);
    return read_bytes(tpath("mlp"), buf, cap);
}

static size_t small_cnn(unsigned char *buf, size_t cap)
{
    ridge_cnn_config c;
    ridge_cnn_config_init(&c);
    c.in_h = c.in_w = 6;
    CHECK_OK(ridge_cnn_arch_parse("conv3x3-2,bn,relu,maxpool2,dense-3", &c));
    ridge_optim_config o;
    ridge_optim_config_init(&o);
    ridge_cnn *m = NULL;
    CHECK_OK(ridge_cnn_create(&c, &o, 2, 1, &m));
    CHECK_OK(ridge_cnn_save(m, tpath("cnn")));
    ridge_cnn_destroy(m);
    return read_bytes(tpath("cnn"), buf, cap);
}

static void test_checkpoint_hostile_headers(void)
{
    unsigned char b[8192];
    size_t n = small_mlp(b, sizeof b);
    CHECK(n > 260 && n < sizeof b);
    CHECK(read_mlp(tpath("mlp")) == RIDGE_OK);
    /* layer sizes 2^20 x 2^20 (2^40 parameters) in a few hundred bytes */
    put32(b + 20, 1 << 20), put32(b + 24, 1 << 20);
    fix_crc(b, n);
    write_bytes(tpath("mlp"), b, n);
    hostile("mlp: 2^40 parameters in 300 bytes", read_mlp, tpath("mlp"), want_format);

    n = small_cnn(b, sizeof b);
    CHECK(n > 260 && n < sizeof b);
    CHECK(read_cnn(tpath("cnn")) == RIDGE_OK);
    /* fuzz finding 1 (fuzz-cnn-checkpoint): in_w = 0xfffffb06, in_c = 0xfffffffe; the input
     * size check multiplied them as int64 and overflowed (UBSan: signed overflow in
     * ridge_cnn_config_check) before comparing */
    unsigned char c1[8192];
    memcpy(c1, b, n);
    put32(c1 + 20, 0xfffffb06u), put32(c1 + 24, 0xfffffffeu);
    fix_crc(c1, n);
    write_bytes(tpath("cnn"), c1, n);
    hostile("cnn: input 6 x 2^32-1274 x 2^32-2", read_cnn, tpath("cnn"), want_format);
    /* a 2^24 x 2^24 x 2^24 input: the product passes int64 */
    memcpy(c1, b, n);
    put32(c1 + 16, 1 << 24), put32(c1 + 20, 1 << 24), put32(c1 + 24, 1 << 24);
    fix_crc(c1, n);
    write_bytes(tpath("cnn"), c1, n);
    hostile("cnn: input 2^24 x 2^24 x 2^24", read_cnn, tpath("cnn"), want_format);
    /* the int8 CNN: a 10^12-weight architecture in the header of a small file */
    ridge_cnn *m = NULL;
    ridge_qcnn *q = NULL;
    ridge_ctx *ctx = test_ctx(1, RIDGE_ISA_AUTO);
    uint8_t img[36 * 4];
    for (size_t i = 0; i < sizeof img; i++) img[i] = (uint8_t)(i * 7);
    small_cnn(b, sizeof b); /* the valid one again */
    if (!ctx || ridge_cnn_load(tpath("cnn"), &m) || ridge_qcnn_quantize(ctx, m, img, 4, &q) ||
        ridge_qcnn_save(q, tpath("qcnn"))) {
        CHECKF(0, "int8 CNN: %s", ridge_last_error());
    } else {
        n = read_bytes(tpath("qcnn"), b, sizeof b);
        CHECK(n > 512 && n < sizeof b && read_qcnn(tpath("qcnn")) == RIDGE_OK);
        memset(b + 256, 0, 256);
        strcpy((char *)b + 256, "conv3x3-1000000,dense-1000000");
        fix_crc(b, n);
        write_bytes(tpath("qcnn"), b, n);
        hostile("qcnn: 10^12 weights in 1 KiB", read_qcnn, tpath("qcnn"), want_format);
    }
    ridge_qcnn_destroy(q);
    ridge_cnn_destroy(m);
    ridge_ctx_destroy(ctx);
    /* layers whose weight counts overflow: refused by the parser or the check */
    ridge_cnn_config c;
    ridge_cnn_config_init(&c);
    CHECK(ridge_cnn_arch_parse("conv9x9-2147483647,conv9x9-2147483647,dense-10", &c) ||
          ridge_cnn_config_check(&c) == RIDGE_EINVAL);
}

/* ---- llm.c training state ------------------------------------------------------------------ */

/* Finding 2 (reviewing fuzz-llmc-state): the MT19937 state read back was checked field by
 * field (1 <= left <= 624, next <= 624) but not as a pair; left 624 with next 600 let the
 * next draws index state[600 + 623]. The pair must be (1, 0) or sum to 625. */
static void test_llmc_state_mt(void)
{
    uint16_t tok[64];
    for (int i = 0; i < 64; i++) tok[i] = (uint16_t)(i % 50);
    CHECK_OK(ridge_llmc_tokens_write(tpath("shard0.bin"), tok, 33));
    CHECK_OK(ridge_llmc_tokens_write(tpath("shard1.bin"), tok, 64));
    ridge_llmc_loader *ld = NULL;
    CHECK_OK(ridge_llmc_loader_create(tpath("shard*.bin"), 1, 4, 50257, 1, &ld));
    if (!ld) return;
    float m[4] = {1, 2, 3, 4}, v[4] = {5, 6, 7, 8};
    const int *in, *tg;
    int step;
    uint64_t rng;
    for (int draws = 0; draws < 2; draws++) {
        if (draws) CHECK_OK(ridge_llmc_loader_next(ld, &in, &tg));
        CHECK_OK(ridge_llmc_state_write(tpath("state"), 1, 9, ld, m, v, 4));
        CHECK_OK(ridge_llmc_state_read(tpath("state"), &step, &rng, ld, m, v, 4));
        CHECK_OK(ridge_llmc_loader_next(ld, &in, &tg));
        static unsigned char b[1 << 14];
        size_t n = read_bytes(tpath("state"), b, sizeof b);
        CHECK(n > 2520 && n < sizeof b);
        unsigned char *mt = b + n - 2520; /* u64 seed, i32 left, u32 next, state, matrix_a */
        const uint32_t bad[][2] = {{624, 600}, {2, 624}, {1, 1}, {624, 0}};
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
            put32(mt + 8, bad[i][0]), put32(mt + 12, bad[i][1]);
            write_bytes(tpath("state"), b, n);
            CHECKF(ridge_llmc_state_read(tpath("state"), &step, &rng, ld, m, v, 4) ==
                       RIDGE_EFORMAT, "left %u next %u accepted", bad[i][0], bad[i][1]);
            CHECK_OK(ridge_llmc_loader_reset(ld));
        }
    }
    ridge_llmc_loader_destroy(ld);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/ridge-reliability.XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_llmc_hostile_headers();
    test_idx_hostile_headers();
    test_checkpoint_hostile_headers();
    test_llmc_state_mt();
    const char *names[] = {"tokens", "tokenizer", "model", "idx", "idx.gz", "mlp", "cnn", "shard0.bin",
                           "shard1.bin", "state"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) unlink(tpath(names[i]));
    rmdir(dir);
    return test_finish("test-reliability");
}
