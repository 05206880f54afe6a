/* Hostile input: regression tests for what the fuzzers (fuzz/) found, and resource limits:
 * a small file whose header claims a huge size is refused before anything that size is
 * allocated. Each hostile read runs in a child process whose address space is capped
 * (RLIMIT_AS, current use + 256 MiB; not under sanitizers, which reserve terabytes of
 * shadow), so a reader that allocated first would fail with RIDGE_ENOMEM (or die) instead of
 * the format error the test requires; the child's peak RSS is checked too. See
 * docs/RELIABILITY.md. */
#include <signal.h>
#include <stdint.h>
#include <string.h>
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
static char pathbuf[1024];

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

static ridge_status read_qmlp(const char *p)
{
    ridge_ctx *ctx = NULL;
    ridge_qmlp *q = NULL;
    ridge_status st = ridge_ctx_create(NULL, &ctx);
    if (!st) st = ridge_qmlp_load(ctx, p, &q);
    ridge_qmlp_destroy(q);
    ridge_ctx_destroy(ctx);
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

    /* Finding 4 (review): the size check computed L * 12 * C * C in 64 bits, which wraps:
     * L = 2^30, C = 2^16 gives 12 * 2^62 = 0 (mod 2^64) and passed; so did the parameter count
     * built from it. Configs whose products wrap to small values must be refused. */
    const ridge_gpt2_config wrap[] = {{1, 1, 1, 1 << 30, 1, 1 << 16},
                                      {1, 1, 1, 1 << 28, 1, 1 << 17},
                                      {1, 1, 1, INT32_MAX, 1, 1 << 20}};
    for (size_t i = 0; i < sizeof wrap / sizeof *wrap; i++)
        CHECKF(ridge_gpt2_config_check(&wrap[i]) == RIDGE_EINVAL, "L=%d C=%d accepted",
               wrap[i].num_layers, wrap[i].channels);
    const ridge_gpt2_config xl = ridge_gpt2_config_depth(48);
    CHECK_OK(ridge_gpt2_config_check(&xl));
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

/* Finding 5 (review): ridge_qmlp_load allocated the size the header implies (up to 16 layers
 * of 2^20 x 2^20 int8 weights: 16 TiB) before comparing it with the file's length. */
static void test_qmlp_hostile_header(void)
{
    /* the shared checkpoint frame (docs/FORMATS.md): a 256-byte header, then 64 bytes */
    unsigned char h[256 + 64] = "RIDGEQ8M";
    put32(h + 8, 2), put32(h + 12, 256);
    put32(h + 16, RIDGE_MLP_MAX_LAYERS);
    for (int l = 0; l <= RIDGE_MLP_MAX_LAYERS; l++) put32(h + 20 + 4 * l, RIDGE_MLP_MAX_WIDTH);
    put32(h + 88, (uint32_t)RIDGE_EPI_RELU);
    float one = 1;
    memcpy(h + 96, &one, 4); /* mean 0, std 1 */
    write_bytes(tpath("qmlp"), h, sizeof h);
    hostile("int8 MLP: 16 layers of 2^20 x 2^20 in 320 bytes", read_qmlp, tpath("qmlp"),
            want_format);
}

/* Finding 7 (fuzz-qmlp-checkpoint, within its first second): ridge_qmlp_load checked each
 * scale (positive, finite) but not the requantization scale in_scale x w_scale / out_scale
 * they imply, which can underflow to 0 or overflow to inf: the model loaded and every forward
 * pass then failed. Now the load refuses it. */
static void test_qmlp_scales(void)
{
    ridge_ctx *ctx = NULL;
    CHECK_OK(ridge_ctx_create(NULL, &ctx));
    ridge_mlp_config mc = {0};
    mc.nlayers = 2, mc.sizes[0] = 4, mc.sizes[1] = 3, mc.sizes[2] = 2;
    mc.act = RIDGE_EPI_RELU, mc.in_std = 1;
    ridge_optim_config o;
    ridge_optim_config_init(&o);
    ridge_mlp *m = NULL;
    ridge_qmlp *q = NULL;
    const uint8_t calib[12] = {0, 255, 7, 99, 3, 3, 3, 3, 200, 1, 50, 128}, img[4] = {1, 2, 3, 4};
    const float *logits;
    CHECK_OK(ridge_mlp_create(&mc, &o, 2, 1, &m));
    CHECK_OK(ridge_qmlp_quantize(ctx, m, calib, 3, &q));
    CHECK_OK(ridge_qmlp_save(q, tpath("qmlp")));
    ridge_qmlp_destroy(q);
    ridge_mlp_destroy(m);
    static unsigned char b[4096];
    size_t n = read_bytes(tpath("qmlp"), b, sizeof b);
    CHECK(n > 100 && n < sizeof b);
    q = NULL;
    CHECK_OK(ridge_qmlp_load(ctx, tpath("qmlp"), &q)); /* as saved: loads and runs */
    if (q) CHECK_OK(ridge_qmlp_forward(ctx, q, img, 1, &logits));
    ridge_qmlp_destroy(q);
    /* after the 256-byte header, layer 0: in_scale, in_zp, out_scale, out_zp, w_scale[out] */
    const size_t at = 256;
    const float tiny = 1e-30f, huge = 1e30f;
    const float patch[2][2] = {{tiny, tiny}, {huge, huge}}; /* in_scale, w_scale[0] */
    for (int i = 0; i < 2; i++) {
        unsigned char c[sizeof b];
        memcpy(c, b, n);
        memcpy(c + at, &patch[i][0], 4);
        memcpy(c + at + 16, &patch[i][1], 4);
        fix_crc(c, n);
        write_bytes(tpath("qmlp"), c, n);
        q = NULL;
        ridge_status st = ridge_qmlp_load(ctx, tpath("qmlp"), &q);
        CHECKF(st == RIDGE_EFORMAT, "scales %g x %g: status %d", patch[i][0], patch[i][1], st);
        ridge_qmlp_destroy(q);
    }
    ridge_ctx_destroy(ctx);
}

/* Finding 6 (fuzz-roofline, first input tried): ridge_roofline_to_json wrote measured_at
 * unescaped, so a profile whose timestamp held a quote or a control character (accepted by
 * the loader, as JSON escapes) was saved as a file that no longer loads. */
static void test_roofline_round_trip(void)
{
    static const char text[] =
        "{\"format\": \"ridge-roofline\", \"version\": 3, \"cpu\": \"A\\\"B\\u0001\\\\\",\n"
        " \"threads\": 1, \"l1d\": 32768, \"l2\": 524288, \"l3_usable\": 0, \"quick\": true,\n"
        " \"seconds\": 1, \"measured_at\": \"x\\n\\\"y\", \"points\": [{\"threads\": 1,\n"
        " \"peak\": {\"f32-ref\": 10, \"f32-avx2\": null, \"f32-avx512\": null, \"i8-dot\": null,\n"
        " \"bf16-dot\": null}, \"read\": {\"L1\": 100, \"L2\": 50, \"L3\": 20, \"DRAM\": 10},\n"
        " \"copy\": 9, \"triad\": 9}]}";
    ridge_roofline r, back;
    CHECK_OK(ridge_roofline_from_json(text, &r));
    char json[4096];
    CHECK(ridge_roofline_to_json(&r, json, sizeof json) < sizeof json);
    CHECKF(ridge_roofline_from_json(json, &back) == RIDGE_OK, "%s\n%s", ridge_last_error(), json);
    CHECK(strcmp(back.cpu, "A\"B\\") == 0);        /* the control character dropped */
    CHECK(strcmp(back.measured_at, "x\"y") == 0);
}

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

/* ---- atomic writes ----------------------------------------------------------------------- */

static int exists(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0;
}

/* A process id that no longer exists: a child that has exited and been reaped. */
static pid_t dead_pid(void)
{
    pid_t pid = fork();
    if (pid == 0) _exit(0);
    waitpid(pid, NULL, 0);
    return pid;
}

/* Stale temporary files: a writer killed mid-write leaves PATH.tmp.PID; the next write of PATH
 * removes those whose process is gone, and nothing else: not a live process's, not a name
 * that merely resembles the pattern, not a symlink or a directory. */
static void test_stale_temps(void)
{
    int pipefd[2];
    CHECK(pipe(pipefd) == 0);
    pid_t live = fork();
    if (live == 0) { /* lives until the parent closes the pipe */
        char c;
        close(pipefd[1]);
        while (read(pipefd[0], &c, 1) > 0) {}
        _exit(0);
    }
    close(pipefd[0]);
    pid_t dead[3] = {dead_pid(), dead_pid(), dead_pid()};
    char removed[64], kept[8][64];
    snprintf(removed, sizeof removed, "tok.tmp.%d", (int)dead[0]);
    snprintf(kept[0], 64, "tok.tmp.%d", (int)live);    /* a live writer's */
    snprintf(kept[1], 64, "tok.tmp.0%d", (int)dead[0]); /* not our spelling of a pid */
    snprintf(kept[2], 64, "tok.tmp.%dx", (int)dead[0]);
    snprintf(kept[3], 64, "tok.tmp");                   /* no pid */
    snprintf(kept[4], 64, "tokX.tmp.%d", (int)dead[0]); /* another file's */
    snprintf(kept[5], 64, "Xtok.tmp.%d", (int)dead[0]);
    snprintf(kept[6], 64, "tok.tmp.%d", (int)dead[1]);  /* a symlink */
    snprintf(kept[7], 64, "tok.tmp.%d", (int)dead[2]);  /* a directory */
    const char junk[] = "half-written";
    write_bytes(tpath(removed), junk, sizeof junk);
    for (int i = 0; i < 6; i++) write_bytes(tpath(kept[i]), junk, sizeof junk);
    char target[1024];
    snprintf(target, sizeof target, "%s", tpath(kept[0]));
    CHECK(symlink(target, tpath(kept[6])) == 0);
    CHECK(mkdir(tpath(kept[7]), 0700) == 0);

    uint16_t tok[4] = {1, 2, 3, 4};
    CHECK_OK(ridge_llmc_tokens_write(tpath("tok"), tok, 4));
    CHECKF(!exists(tpath(removed)), "%s (dead writer) was not removed", removed);
    for (int i = 0; i < 8; i++) CHECKF(exists(tpath(kept[i])), "%s was removed", kept[i]);
    char mine[64];
    snprintf(mine, sizeof mine, "tok.tmp.%d", (int)getpid());
    CHECK(!exists(tpath(mine)));
    uint16_t *back = NULL;
    size_t n = 0;
    CHECK_OK(ridge_llmc_tokens_read(tpath("tok"), 0, &back, &n));
    CHECK(n == 4 && back && back[3] == 4);
    ridge_free(back);

    close(pipefd[1]);
    waitpid(live, NULL, 0);
    rmdir(tpath(kept[7]));
    for (int i = 0; i < 7; i++) unlink(tpath(kept[i]));
    unlink(tpath("tok"));
}

/* Every writer: a write that fails part-way (RLIMIT_FSIZE, SIGXFSZ ignored, so write(2) gets
 * EFBIG as on a full disk) returns RIDGE_EIO, leaves the previous file byte for byte and no
 * temporary file. Each write runs in a child, which has the limit. */
enum { W_IDX, W_IDX_GZ, W_MODEL, W_TOKENS, W_TOKENIZER, W_STATE, W_COUNT };
static const char *const writer_name[W_COUNT] = {"idx", "idx.gz", "model", "tokens", "tokenizer",
                                                 "state"};

/* Writes W's file at `path`, `big` (about 1 MiB) or small; returns the status. */
static ridge_status write_one(int w, const char *path, int big)
{
    static float data[1 << 18];
    for (size_t i = 0; i < sizeof data / sizeof *data; i++)
        data[i] = (float)((i * 2654435761u) >> 7); /* poorly compressible, for gzip */
    size_t n = big ? sizeof data / sizeof *data : 64;
    switch (w) {
    case W_IDX:
    case W_IDX_GZ: {
        ridge_idx idx = {RIDGE_IDX_F32, 1, {n}, n, data};
        return ridge_idx_write(path, &idx, w == W_IDX_GZ);
    }
    case W_MODEL: {
        ridge_gpt2_config c = {big ? 1024 : 8, 64, 64, 1, 1, big ? 64 : 8};
        size_t np;
        ridge_status st = ridge_gpt2_param_sizes(&c, NULL, &np);
        if (st || np > sizeof data / sizeof *data) return RIDGE_EINVAL;
        return ridge_llmc_model_write(path, &c, data);
    }
    case W_TOKENS: return ridge_llmc_tokens_write(path, (const uint16_t *)data, 2 * n);
    case W_TOKENIZER: {
        static const uint8_t *pieces[65536];
        static uint8_t lens[65536];
        uint32_t V = big ? 65536 : 4;
        for (uint32_t i = 0; i < V; i++) pieces[i] = (const uint8_t *)data + 4 * i, lens[i] = 16;
        return ridge_llmc_tokenizer_write(path, V, 0, pieces, lens);
    }
    default: {
        ridge_llmc_loader *ld = NULL;
        ridge_status st = ridge_llmc_loader_create(tpath("shard*.bin"), 1, 4, 50257, 1, &ld);
        if (!st) st = ridge_llmc_state_write(path, 1, 9, ld, data, data, n / 2);
        ridge_llmc_loader_destroy(ld);
        return st;
    }
    }
}

static void test_writers_fail_cleanly(void)
{
    uint16_t tok[64] = {0};
    CHECK_OK(ridge_llmc_tokens_write(tpath("shard0.bin"), tok, 64));
    static unsigned char before[1 << 16], after[1 << 16];
    for (int w = 0; w < W_COUNT; w++) {
        if (w == W_IDX_GZ && !ridge_io_has_zlib()) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s", tpath(writer_name[w]));
        CHECKF(write_one(w, path, 0) == RIDGE_OK, "%s: %s", writer_name[w], ridge_last_error());
        size_t nb = read_bytes(path, before, sizeof before);
        CHECK(nb > 0 && nb < sizeof before);
        pid_t pid = fork();
        if (pid == 0) {
            signal(SIGXFSZ, SIG_IGN);
            struct rlimit rl = {nb + 4096, nb + 4096};
            setrlimit(RLIMIT_FSIZE, &rl);
            ridge_status st = write_one(w, path, 1);
            if (st != RIDGE_EIO) fprintf(stderr, "%s: %d %s\n", writer_name[w], st, ridge_last_error());
            _exit(st == RIDGE_EIO ? 0 : 1);
        }
        int status = -1;
        waitpid(pid, &status, 0);
        CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0,
               "%s: a failed write did not return RIDGE_EIO", writer_name[w]);
        size_t na = read_bytes(path, after, sizeof after);
        CHECKF(na == nb && memcmp(before, after, nb) == 0, "%s: the previous file changed",
               writer_name[w]);
        char tmp[1100];
        snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)pid);
        CHECKF(!exists(tmp), "%s: the temporary file was left", writer_name[w]);
        unlink(path);
    }
    unlink(tpath("shard0.bin"));
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
    test_qmlp_hostile_header();
    test_qmlp_scales();
    test_roofline_round_trip();
    test_stale_temps();
    test_writers_fail_cleanly();
    const char *names[] = {"tokens", "tokenizer", "model", "idx", "idx.gz", "mlp", "cnn", "shard0.bin",
                           "shard1.bin", "state", "qmlp"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) unlink(tpath(names[i]));
    rmdir(dir);
    return test_finish("test-reliability");
}
