/* ridge/io.h: reading MNIST-style IDX files (plain or gzip'd) and MNIST-format datasets.
 *
 * These functions live in libridge_io, not in libridge: reading gzip needs zlib, and the core
 * library depends only on libc, libm and pthreads. Link ridge::ridge_io (CMake) or
 * -lridge_io -lridge -lz. Built without zlib, plain IDX files still work and a gzip'd file
 * fails with RIDGE_EUNSUPPORTED.
 *
 * Every reader validates before it allocates: the magic, the element type, the number of
 * dimensions, every dimension, and the size the header promises against the file's length
 * (for gzip, against the stream's recorded length and the largest size deflate can expand
 * the file to). Failures name the file and the field.
 */
#ifndef RIDGE_IO_H
#define RIDGE_IO_H

#include <stddef.h>
#include <stdint.h>

#include "ridge/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- IDX --------------------------------------------------------------------------------- */

#define RIDGE_IDX_MAX_DIMS 8

/* The element types IDX defines (the third byte of the magic). */
typedef enum ridge_idx_type {
    RIDGE_IDX_U8 = 0x08,
    RIDGE_IDX_I8 = 0x09,
    RIDGE_IDX_I16 = 0x0B,
    RIDGE_IDX_I32 = 0x0C,
    RIDGE_IDX_F32 = 0x0D,
    RIDGE_IDX_F64 = 0x0E,
} ridge_idx_type;

typedef struct ridge_idx {
    ridge_idx_type type;
    int ndim;                           /* 1..RIDGE_IDX_MAX_DIMS */
    size_t dims[RIDGE_IDX_MAX_DIMS];    /* each 1..2^31-1 */
    size_t count;                       /* product of dims */
    void *data;                         /* count elements, host byte order; ridge_malloc'd */
} ridge_idx;

/* Bytes per element of an IDX type; 0 if `type` is not one. */
size_t ridge_idx_type_size(int type);

/* Reads an IDX file, plain or gzip'd (detected from its first bytes). max_bytes caps the data
 * it will allocate (0: 4 GiB). On success fills *out (free with ridge_idx_free); on failure
 * *out is zeroed and the status is RIDGE_EIO (cannot open/read), RIDGE_EFORMAT (bad magic,
 * type, dims, truncated, trailing bytes, corrupt gzip), RIDGE_EOVERFLOW (sizes overflow or
 * exceed max_bytes), RIDGE_EUNSUPPORTED (gzip without zlib) or RIDGE_ENOMEM. */
ridge_status ridge_idx_read(const char *path, size_t max_bytes, ridge_idx *out);

/* Writes an IDX file (gzip'd if `gzip`, which needs zlib). data is in host byte order. The
 * write is atomic (PATH.tmp.PID, fsync, rename: docs/RELIABILITY.md); RIDGE_EIO on failure,
 * with PATH left as it was. */
ridge_status ridge_idx_write(const char *path, const ridge_idx *idx, int gzip);

void ridge_idx_free(ridge_idx *idx); /* frees data and zeroes *idx; NULL is a no-op */

/* Whether this libridge_io was built with zlib (can read gzip'd files). */
int ridge_io_has_zlib(void);

/* ---- MNIST-format datasets ----------------------------------------------------------------- */

typedef struct ridge_mnist {
    size_t n;             /* number of images = number of labels */
    size_t rows, cols;    /* image size (28 x 28 for MNIST and Fashion-MNIST) */
    int classes;          /* largest label + 1 */
    uint8_t *images;      /* (n, rows * cols), 0..255 */
    uint8_t *labels;      /* (n) */
} ridge_mnist;

/* Loads split `split` ("train" or "t10k") from `dir`: the files <split>-images-idx3-ubyte and
 * <split>-labels-idx1-ubyte, each optionally with a .gz suffix (the original MNIST names with
 * '.' before idx are accepted too). Checks the images are u8 with 3 dims, the labels u8 with
 * 1 dim and as many labels as images. Free with ridge_mnist_free. */
ridge_status ridge_mnist_load(const char *dir, const char *split, ridge_mnist *out);
void ridge_mnist_free(ridge_mnist *m); /* NULL is a no-op */

#ifdef __cplusplus
}
#endif
#endif /* RIDGE_IO_H */
