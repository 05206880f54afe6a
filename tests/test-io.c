/* IDX and MNIST-format reading: round trips (plain and gzip'd, every byte order-sensitive
 * type) and every kind of bad file the reader must refuse, with a message naming the field. */
#include <stdint.h>
#include <unistd.h>

#include "test.h"
#include "ridge/io.h"

#ifdef RIDGE_HAVE_ZLIB
#include <zlib.h>
#endif

static char tmpdir[256];

static const char *tmp(const char *name)
{
    static char buf[512];
    snprintf(buf, sizeof buf, "%s/%s", tmpdir, name);
    return buf;
}

static void write_raw(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(p, 1, n, f) == n);
    if (f) fclose(f);
}

static void write_gz(const char *path, const void *p, size_t n)
{
#ifdef RIDGE_HAVE_ZLIB
    gzFile g = gzopen(path, "wb");
    CHECK(g && gzwrite(g, p, (unsigned)n) == (int)n);
    if (g) gzclose(g);
#else
    (void)path, (void)p, (void)n;
#endif
}

/* An IDX header: magic {0,0,type,ndim} and big-endian dims. Returns its length. */
static size_t header(unsigned char *h, int type, int ndim, const uint32_t *dims)
{
    h[0] = h[1] = 0;
    h[2] = (unsigned char)type;
    h[3] = (unsigned char)ndim;
    for (int d = 0; d < ndim; d++)
        for (int b = 0; b < 4; b++) h[4 + 4 * d + b] = (unsigned char)(dims[d] >> (24 - 8 * b));
    return 4 + 4 * (size_t)ndim;
}

/* Expects ridge_idx_read to fail with `want` and a message containing `needle`. */
static void expect_fail(const char *path, size_t max, ridge_status want, const char *needle)
{
    ridge_idx x;
    ridge_status st = ridge_idx_read(path, max, &x);
    CHECKF(st == want, "%s: got %s (%s), want %s", path, ridge_status_str(st),
           ridge_last_error(), ridge_status_str(want));
    if (getenv("RIDGE_TEST_VERBOSE")) printf("  %s\n", ridge_last_error());
    CHECKF(strstr(ridge_last_error(), needle) != NULL, "%s: message '%s' lacks '%s'", path,
           ridge_last_error(), needle);
    CHECK(x.data == NULL && x.count == 0);
}

static void test_round_trip(void)
{
    const int types[] = {RIDGE_IDX_U8, RIDGE_IDX_I8, RIDGE_IDX_I16,
                         RIDGE_IDX_I32, RIDGE_IDX_F32, RIDGE_IDX_F64};
    for (int gz = 0; gz <= ridge_io_has_zlib(); gz++)
        for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
            size_t es = ridge_idx_type_size(types[t]);
            ridge_idx w = {.type = types[t], .ndim = 3, .dims = {3, 5, 7}, .count = 105};
            w.data = ridge_malloc(105 * es);
            for (size_t i = 0; i < 105 * es; i++) ((unsigned char *)w.data)[i] = (unsigned char)(i * 37 + t);
            const char *p = tmp(gz ? "rt.idx.gz" : "rt.idx");
            CHECK_OK(ridge_idx_write(p, &w, gz));
            ridge_idx r;
            CHECK_OK(ridge_idx_read(p, 0, &r));
            CHECK(r.type == w.type && r.ndim == 3 && r.dims[0] == 3 && r.dims[1] == 5 &&
                  r.dims[2] == 7 && r.count == 105);
            CHECK(r.data && !memcmp(r.data, w.data, 105 * es));
            ridge_idx_free(&r);
            ridge_idx_free(&w);
        }
    /* byte order on disk is big-endian */
    unsigned char f[4 + 4 + 4];
    uint32_t d1[] = {1};
    size_t h = header(f, RIDGE_IDX_I32, 1, d1);
    f[h] = 0x01, f[h + 1] = 0x02, f[h + 2] = 0x03, f[h + 3] = 0x04;
    write_raw(tmp("be.idx"), f, sizeof f);
    ridge_idx r;
    CHECK_OK(ridge_idx_read(tmp("be.idx"), 0, &r));
    CHECK(r.data && *(int32_t *)r.data == 0x01020304);
    ridge_idx_free(&r);
}

static void test_bad_files(void)
{
    unsigned char buf[4096];
    uint32_t dims[9] = {2, 3, 4, 1, 1, 1, 1, 1, 1};
    size_t h = header(buf, RIDGE_IDX_U8, 3, dims);
    memset(buf + h, 7, 24);

    expect_fail(tmp("missing.idx"), 0, RIDGE_EIO, "missing.idx");
    write_raw(tmp("empty.idx"), buf, 0);
    expect_fail(tmp("empty.idx"), 0, RIDGE_EFORMAT, "magic");
    write_raw(tmp("short.idx"), buf, h + 23); /* one data byte short */
    expect_fail(tmp("short.idx"), 0, RIDGE_EFORMAT, "truncated");
    write_raw(tmp("hdr.idx"), buf, 9); /* cut inside the dimensions */
    expect_fail(tmp("hdr.idx"), 0, RIDGE_EFORMAT, "truncated");
    write_raw(tmp("long.idx"), buf, h + 25);
    expect_fail(tmp("long.idx"), 0, RIDGE_EFORMAT, "after the data");

    buf[0] = 0x12;
    write_raw(tmp("magic.idx"), buf, h + 24);
    expect_fail(tmp("magic.idx"), 0, RIDGE_EFORMAT, "bad magic");
    buf[0] = 0;
    buf[2] = 0x0A;
    write_raw(tmp("type.idx"), buf, h + 24);
    expect_fail(tmp("type.idx"), 0, RIDGE_EFORMAT, "element type 0x0a");
    buf[2] = RIDGE_IDX_U8;
    buf[3] = 0;
    write_raw(tmp("ndim0.idx"), buf, h + 24);
    expect_fail(tmp("ndim0.idx"), 0, RIDGE_EFORMAT, "number of dimensions is 0");
    buf[3] = 9;
    write_raw(tmp("ndim9.idx"), buf, h + 24);
    expect_fail(tmp("ndim9.idx"), 0, RIDGE_EFORMAT, "number of dimensions is 9");

    uint32_t zero[] = {2, 0, 4};
    h = header(buf, RIDGE_IDX_U8, 3, zero);
    write_raw(tmp("dim0.idx"), buf, h);
    expect_fail(tmp("dim0.idx"), 0, RIDGE_EFORMAT, "dimension 1 is 0");
    uint32_t neg[] = {2, 3, 0x80000000u};
    h = header(buf, RIDGE_IDX_U8, 3, neg);
    write_raw(tmp("dimneg.idx"), buf, h);
    expect_fail(tmp("dimneg.idx"), 0, RIDGE_EFORMAT, "dimension 2 is 2147483648");
    uint32_t big[] = {0x7fffffff, 0x7fffffff, 0x7fffffff};
    h = header(buf, RIDGE_IDX_F64, 3, big);
    write_raw(tmp("ovf.idx"), buf, h);
    expect_fail(tmp("ovf.idx"), 0, RIDGE_EOVERFLOW, "overflows");
    uint32_t huge[] = {60000, 28, 28};
    h = header(buf, RIDGE_IDX_U8, 3, huge);
    write_raw(tmp("cap.idx"), buf, h);
    expect_fail(tmp("cap.idx"), 1000, RIDGE_EOVERFLOW, "limit");
    /* an absurd header in a small plain file: refused on length, before allocating */
    expect_fail(tmp("cap.idx"), 0, RIDGE_EFORMAT, "truncated");

    if (!ridge_io_has_zlib()) {
        SKIP("gzip cases: built without zlib");
        return;
    }
    /* gzip'd: a header promising 47 MB with no data fails on the trailer's length */
    write_gz(tmp("absurd.gz"), buf, h);
    expect_fail(tmp("absurd.gz"), 0, RIDGE_EFORMAT, "gzip stream records");
    /* a valid gzip file cut short */
    ridge_idx w = {.type = RIDGE_IDX_U8, .ndim = 3, .dims = {50, 40, 30}, .count = 60000};
    w.data = ridge_malloc(60000);
    for (size_t i = 0; i < 60000; i++) ((uint8_t *)w.data)[i] = (uint8_t)(i * 2654435761u >> 13);
    CHECK_OK(ridge_idx_write(tmp("ok.gz"), &w, 1));
    ridge_idx_free(&w);
    FILE *f = fopen(tmp("ok.gz"), "rb");
    static unsigned char gzbuf[1 << 17];
    size_t n = f ? fread(gzbuf, 1, sizeof gzbuf, f) : 0;
    if (f) fclose(f);
    CHECK(n > 100 && n < sizeof gzbuf);
    write_raw(tmp("cut.gz"), gzbuf, n / 2);
    expect_fail(tmp("cut.gz"), 0, RIDGE_EFORMAT, "cut.gz");
    /* corrupt deflate data (flip bytes in the middle), the trailer intact */
    for (size_t i = n / 3; i < n / 3 + 16; i++) gzbuf[i] ^= 0x5a;
    write_raw(tmp("flip.gz"), gzbuf, n);
    expect_fail(tmp("flip.gz"), 0, RIDGE_EFORMAT, "flip.gz");
}

static void write_split(const char *dir, const char *split, uint32_t nimg, uint32_t nlab,
                        int gz)
{
    static unsigned char buf[4 + 12 + 64 * 4 * 4];
    char path[512];
    uint32_t d[] = {nimg, 4, 4};
    size_t h = header(buf, RIDGE_IDX_U8, 3, d);
    for (size_t i = 0; i < nimg * 16u; i++) buf[h + i] = (unsigned char)i;
    snprintf(path, sizeof path, "%s/%s-images-idx3-ubyte%s", dir, split, gz ? ".gz" : "");
    (gz ? write_gz : write_raw)(path, buf, h + nimg * 16u);
    uint32_t dl[] = {nlab};
    h = header(buf, RIDGE_IDX_U8, 1, dl);
    for (size_t i = 0; i < nlab; i++) buf[h + i] = (unsigned char)(i % 3);
    snprintf(path, sizeof path, "%s/%s-labels-idx1-ubyte%s", dir, split, gz ? ".gz" : "");
    (gz ? write_gz : write_raw)(path, buf, h + nlab);
}

static void test_mnist(void)
{
    ridge_mnist m;
    write_split(tmpdir, "train", 10, 10, ridge_io_has_zlib());
    CHECK_OK(ridge_mnist_load(tmpdir, "train", &m));
    CHECK(m.n == 10 && m.rows == 4 && m.cols == 4 && m.classes == 3);
    CHECK(m.images && m.images[17] == 17 && m.labels && m.labels[4] == 1);
    ridge_mnist_free(&m);

    write_split(tmpdir, "t10k", 10, 9, 0);
    ridge_status st = ridge_mnist_load(tmpdir, "t10k", &m);
    CHECKF(st == RIDGE_EFORMAT && strstr(ridge_last_error(), "9 labels") &&
               strstr(ridge_last_error(), "10 images"),
           "%s", ridge_last_error());
    CHECK(m.images == NULL && m.labels == NULL);

    st = ridge_mnist_load(tmpdir, "nosuch", &m);
    CHECKF(st == RIDGE_EIO && strstr(ridge_last_error(), "nosuch-images-idx3-ubyte"), "%s",
           ridge_last_error());
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ridge-test-io-%d", (int)getpid());
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", tmpdir);
    if (system(cmd) != 0) return 1;
    test_round_trip();
    test_bad_files();
    test_mnist();
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0) return 1;
    return test_finish("test-io");
}
