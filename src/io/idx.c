/* IDX files (the MNIST format), plain or gzip'd.
 *
 * Layout: a 4-byte magic {0, 0, type, ndim}, ndim big-endian uint32 dimensions, then the
 * elements in big-endian order, row-major. The reader checks everything it can before it
 * allocates: type and ndim from the magic, each dimension (1..2^31-1), the product and byte
 * count for overflow, and the total against the file: a plain file must be exactly header +
 * data long; for a gzip file the stream's trailer records its uncompressed length mod 2^32
 * (ISIZE), which must match, and deflate cannot expand data more than 1032:1, so a header
 * promising more than that many bytes per compressed byte is refused before allocating.
 * After reading, the stream must end exactly where the data does.
 *
 * zlib is optional (RIDGE_HAVE_ZLIB); without it plain files use stdio and gzip is refused.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/internal.h"
#include "ridge/io.h"

#ifdef RIDGE_HAVE_ZLIB
#include <zlib.h>
#endif

#define IDX_DEFAULT_MAX ((size_t)4 << 30)
#define DEFLATE_MAX_RATIO 1032u

int ridge_io_has_zlib(void)
{
#ifdef RIDGE_HAVE_ZLIB
    return 1;
#else
    return 0;
#endif
}

size_t ridge_idx_type_size(int type)
{
    switch (type) {
    case RIDGE_IDX_U8:
    case RIDGE_IDX_I8: return 1;
    case RIDGE_IDX_I16: return 2;
    case RIDGE_IDX_I32:
    case RIDGE_IDX_F32: return 4;
    case RIDGE_IDX_F64: return 8;
    default: return 0;
    }
}

/* ---- a byte source: zlib's gzFile (reads plain files too) or stdio ----------------------- */

typedef struct source {
#ifdef RIDGE_HAVE_ZLIB
    gzFile gz;
#else
    FILE *f;
#endif
} source;

static int source_open(source *s, const char *path)
{
#ifdef RIDGE_HAVE_ZLIB
    s->gz = gzopen(path, "rb");
    return s->gz != NULL;
#else
    s->f = fopen(path, "rb");
    return s->f != NULL;
#endif
}

/* Reads up to n bytes; returns how many were read, or -1 on an error (corrupt gzip data). */
static int64_t source_read(source *s, void *buf, size_t n)
{
    size_t done = 0;
    while (done < n) {
        size_t chunk = RIDGE_MIN(n - done, (size_t)1 << 30);
#ifdef RIDGE_HAVE_ZLIB
        int r = gzread(s->gz, (char *)buf + done, (unsigned)chunk);
        if (r < 0) return -1;
#else
        size_t r = fread((char *)buf + done, 1, chunk, s->f);
        if (r < chunk && ferror(s->f)) return -1;
#endif
        if (r == 0) break;
        done += (size_t)r;
    }
    return (int64_t)done;
}

static const char *source_error(source *s, const char *path)
{
#ifdef RIDGE_HAVE_ZLIB
    int code;
    const char *m = gzerror(s->gz, &code);
    size_t n = strlen(path); /* zlib prefixes "path: "; the caller names the file already */
    if (!strncmp(m, path, n) && !strncmp(m + n, ": ", 2)) m += n + 2;
    return code == Z_ERRNO ? strerror(errno) : m;
#else
    (void)s, (void)path;
    return strerror(errno);
#endif
}

static void source_close(source *s)
{
#ifdef RIDGE_HAVE_ZLIB
    if (s->gz) gzclose(s->gz);
#else
    if (s->f) fclose(s->f);
#endif
}

/* ---- reading ------------------------------------------------------------------------------- */

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Converts `count` elements of `size` bytes between big-endian and host order, in place. */
static void swap_bytes(void *data, size_t count, size_t size)
{
    const uint16_t one = 1;
    if (size == 1 || *(const unsigned char *)&one == 0) return; /* big-endian host */
    unsigned char *p = data;
    for (size_t i = 0; i < count; i++, p += size)
        for (size_t a = 0, b = size - 1; a < b; a++, b--) {
            unsigned char t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

/* The first two bytes and, for gzip, the trailer's ISIZE (uncompressed length mod 2^32). */
static ridge_status sniff(const char *path, uint64_t *file_bytes, int *gzip, uint32_t *isize)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return ridge_error(RIDGE_EIO, "%s: cannot open: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode)) return ridge_error(RIDGE_EIO, "%s: not a regular file", path);
    *file_bytes = (uint64_t)st.st_size;
    FILE *f = fopen(path, "rb");
    if (!f) return ridge_error(RIDGE_EIO, "%s: cannot open: %s", path, strerror(errno));
    unsigned char head[2] = {0, 0}, tail[4];
    *gzip = fread(head, 1, 2, f) == 2 && head[0] == 0x1f && head[1] == 0x8b;
    *isize = 0;
    if (*gzip) {
        if (st.st_size < 18 || fseek(f, -4, SEEK_END) != 0 || fread(tail, 1, 4, f) != 4) {
            fclose(f);
            return ridge_error(RIDGE_EFORMAT, "%s: truncated gzip file (%lld bytes)", path,
                               (long long)st.st_size);
        }
        *isize = (uint32_t)tail[0] | (uint32_t)tail[1] << 8 | (uint32_t)tail[2] << 16 |
                 (uint32_t)tail[3] << 24;
    }
    fclose(f);
    return RIDGE_OK;
}

ridge_status ridge_idx_read(const char *path, size_t max_bytes, ridge_idx *out)
{
    if (!out) return ridge_error(RIDGE_EINVAL, "idx_read: out is NULL");
    memset(out, 0, sizeof *out);
    if (!path) return ridge_error(RIDGE_EINVAL, "idx_read: path is NULL");
    if (max_bytes == 0) max_bytes = IDX_DEFAULT_MAX;

    uint64_t file_bytes = 0;
    int gzip = 0;
    uint32_t isize = 0;
    ridge_status st = sniff(path, &file_bytes, &gzip, &isize);
    if (st) return st;
#ifndef RIDGE_HAVE_ZLIB
    if (gzip)
        return ridge_error(RIDGE_EUNSUPPORTED,
                           "%s: gzip'd, and this build has no zlib (gunzip it first)", path);
#endif

    source src;
    if (!source_open(&src, path))
        return ridge_error(RIDGE_EIO, "%s: cannot open: %s", path, strerror(errno));

    unsigned char magic[4];
    int64_t r = source_read(&src, magic, 4);
    if (r < 0) {
        st = ridge_error(RIDGE_EFORMAT, "%s: corrupt: %s", path, source_error(&src, path));
        goto err_close;
    }
    if (r < 4) {
        st = ridge_error(RIDGE_EFORMAT, "%s: truncated: %lld bytes, shorter than the 4-byte magic",
                         path, (long long)r);
        goto err_close;
    }
    if (magic[0] != 0 || magic[1] != 0) {
        st = ridge_error(RIDGE_EFORMAT,
                         "%s: bad magic %02x %02x %02x %02x: not an IDX file (it must start "
                         "with two zero bytes)",
                         path, magic[0], magic[1], magic[2], magic[3]);
        goto err_close;
    }
    size_t esize = ridge_idx_type_size(magic[2]);
    if (!esize) {
        st = ridge_error(RIDGE_EFORMAT,
                         "%s: magic: unknown element type 0x%02x (IDX types: 08 u8, 09 i8, "
                         "0B i16, 0C i32, 0D f32, 0E f64)",
                         path, magic[2]);
        goto err_close;
    }
    int ndim = magic[3];
    if (ndim < 1 || ndim > RIDGE_IDX_MAX_DIMS) {
        st = ridge_error(RIDGE_EFORMAT, "%s: magic: number of dimensions is %d, expected 1..%d",
                         path, ndim, RIDGE_IDX_MAX_DIMS);
        goto err_close;
    }
    unsigned char dimbuf[4 * RIDGE_IDX_MAX_DIMS];
    r = source_read(&src, dimbuf, 4 * (size_t)ndim);
    if (r != 4 * ndim) {
        st = r < 0 ? ridge_error(RIDGE_EFORMAT, "%s: corrupt: %s", path, source_error(&src, path))
                   : ridge_error(RIDGE_EFORMAT,
                                 "%s: truncated: the header has %d dimensions but the file "
                                 "ends after %lld of their %d bytes",
                                 path, ndim, (long long)r, 4 * ndim);
        goto err_close;
    }
    size_t count = 1;
    for (int d = 0; d < ndim; d++) {
        uint32_t v = be32(dimbuf + 4 * d);
        if (v == 0 || v > INT32_MAX) {
            st = ridge_error(RIDGE_EFORMAT, "%s: dimension %d is %u, expected 1..%d", path, d,
                             v, INT32_MAX);
            goto err_close;
        }
        out->dims[d] = v;
        if (__builtin_mul_overflow(count, (size_t)v, &count)) {
            st = ridge_error(RIDGE_EOVERFLOW, "%s: the dimensions' product overflows size_t",
                             path);
            goto err_close;
        }
    }
    size_t bytes;
    if (__builtin_mul_overflow(count, esize, &bytes) || bytes > max_bytes) {
        st = ridge_error(RIDGE_EOVERFLOW,
                         "%s: the header asks for %zu elements of %zu bytes, over the %zu-byte "
                         "limit",
                         path, count, esize, max_bytes);
        goto err_close;
    }
    uint64_t total = 4 + 4 * (uint64_t)ndim + bytes; /* bytes <= max_bytes: no overflow */
    if (!gzip && total != file_bytes) {
        st = total > file_bytes
                 ? ridge_error(RIDGE_EFORMAT,
                               "%s: truncated: the header promises %zu data bytes, the file "
                               "holds %llu",
                               path, bytes, (unsigned long long)(file_bytes - (total - bytes)))
                 : ridge_error(RIDGE_EFORMAT, "%s: %llu unexpected bytes after the data", path,
                               (unsigned long long)(file_bytes - total));
        goto err_close;
    }
    if (gzip && (total / DEFLATE_MAX_RATIO > file_bytes || (uint32_t)total != isize)) {
        st = ridge_error(RIDGE_EFORMAT,
                         "%s: the header promises %llu bytes but the gzip stream records %u "
                         "(mod 2^32) from %llu compressed bytes: truncated or corrupt",
                         path, (unsigned long long)total, isize,
                         (unsigned long long)file_bytes);
        goto err_close;
    }

    out->data = ridge_malloc(bytes);
    if (!out->data) {
        st = ridge_error(RIDGE_ENOMEM, "%s: cannot allocate %zu bytes", path, bytes);
        goto err_close;
    }
    r = source_read(&src, out->data, bytes);
    if (r < 0) {
        st = ridge_error(RIDGE_EFORMAT, "%s: corrupt: %s", path, source_error(&src, path));
        goto err_free;
    }
    if ((size_t)r != bytes) {
        st = ridge_error(RIDGE_EFORMAT,
                         "%s: truncated: the header promises %zu data bytes, the file holds %lld",
                         path, bytes, (long long)r);
        goto err_free;
    }
    unsigned char extra;
    r = source_read(&src, &extra, 1);
    if (r != 0) {
        st = r < 0 ? ridge_error(RIDGE_EFORMAT, "%s: corrupt: %s", path, source_error(&src, path))
                   : ridge_error(RIDGE_EFORMAT, "%s: unexpected bytes after the data", path);
        goto err_free;
    }
    source_close(&src);
    swap_bytes(out->data, count, esize);
    out->type = (ridge_idx_type)magic[2];
    out->ndim = ndim;
    out->count = count;
    return RIDGE_OK;

err_free:
    ridge_free(out->data);
err_close:
    source_close(&src);
    memset(out, 0, sizeof *out);
    return st;
}

void ridge_idx_free(ridge_idx *idx)
{
    if (!idx) return;
    ridge_free(idx->data);
    memset(idx, 0, sizeof *idx);
}

/* ---- writing ------------------------------------------------------------------------------- */

/* n bytes to the gzip stream when there is one, else to the file; 1 while nothing failed. */
static int put(ridge_file_atomic *a, void *gz, const void *p, size_t n)
{
    (void)gz; /* without zlib there is never a stream */
#ifdef RIDGE_HAVE_ZLIB
    if (gz) {
        errno = 0;
        if (gzwrite((gzFile)gz, p, (unsigned)n) == (int)n) return 1;
        if (!a->err) a->err = errno ? errno : EIO;
        return 0;
    }
#endif
    return ridge_file_atomic_write(a, p, n);
}

ridge_status ridge_idx_write(const char *path, const ridge_idx *idx, int gzip)
{
    if (!path || !idx || !idx->data)
        return ridge_error(RIDGE_EINVAL, "idx_write: path, idx or its data is NULL");
    size_t esize = ridge_idx_type_size(idx->type);
    if (!esize) return ridge_error(RIDGE_EINVAL, "idx_write: unknown type 0x%02x", idx->type);
    if (idx->ndim < 1 || idx->ndim > RIDGE_IDX_MAX_DIMS)
        return ridge_error(RIDGE_EINVAL, "idx_write: ndim %d not in 1..%d", idx->ndim,
                           RIDGE_IDX_MAX_DIMS);
#ifndef RIDGE_HAVE_ZLIB
    if (gzip)
        return ridge_error(RIDGE_EUNSUPPORTED, "%s: cannot write gzip: built without zlib", path);
#endif
    size_t count = 1;
    unsigned char head[4 + 4 * RIDGE_IDX_MAX_DIMS] = {0, 0, (unsigned char)idx->type,
                                                     (unsigned char)idx->ndim};
    for (int d = 0; d < idx->ndim; d++) {
        size_t v = idx->dims[d];
        if (v == 0 || v > INT32_MAX)
            return ridge_error(RIDGE_EINVAL, "idx_write: dimension %d is %zu", d, v);
        count *= v; /* cannot overflow further than the caller's own buffer */
        for (int b = 0; b < 4; b++) head[4 + 4 * d + b] = (unsigned char)(v >> (24 - 8 * b));
    }
    if (count != idx->count)
        return ridge_error(RIDGE_EINVAL, "idx_write: count %zu is not the dims' product %zu",
                           idx->count, count);
    size_t hbytes = 4 + 4 * (size_t)idx->ndim;
    ridge_file_atomic a;
    ridge_status st = ridge_file_atomic_open(&a, path, "idx_write");
    if (st) return st;
    void *gz = NULL;
#ifdef RIDGE_HAVE_ZLIB
    if (gzip) { /* zlib writes to its own descriptor of the temporary file; commit fsyncs it */
        errno = 0;
        int fd = dup(fileno(a.f));
        if (fd < 0 || !(gz = gzdopen(fd, "wb"))) {
            if (fd >= 0) close(fd);
            a.err = errno ? errno : ENOMEM;
        }
    }
#endif
    /* big-endian copies of the data, a chunk at a time: never a second copy of it all */
    unsigned char buf[1 << 15];
    const unsigned char *src = idx->data;
    size_t per = sizeof buf / esize;
    int ok = !a.err && put(&a, gz, head, hbytes);
    for (size_t i = 0; ok && i < count; i += per) {
        size_t k = RIDGE_MIN(per, count - i);
        memcpy(buf, src + i * esize, k * esize);
        swap_bytes(buf, k, esize);
        ok = put(&a, gz, buf, k * esize);
    }
#ifdef RIDGE_HAVE_ZLIB
    errno = 0;
    if (gz && gzclose(gz) != Z_OK && !a.err) a.err = errno ? errno : EIO;
#endif
    return ridge_file_atomic_commit(&a);
}
