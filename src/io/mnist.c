/* MNIST-format datasets: an images IDX file (u8, n x rows x cols) and a labels IDX file
 * (u8, n) per split, found in a directory under the names MNIST and Fashion-MNIST use. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/internal.h"
#include "ridge/io.h"

/* Finds dir/<split>-<kind>-idx<d>-ubyte[.gz] (or the original '.idx' spelling). */
static ridge_status find_file(const char *dir, const char *split, const char *kind, int d,
                              char *path, size_t cap)
{
    static const char *const patterns[] = {"%s/%s-%s-idx%d-ubyte.gz", "%s/%s-%s-idx%d-ubyte",
                                           "%s/%s-%s.idx%d-ubyte", "%s/%s-%s.idx%d-ubyte.gz"};
    for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++) {
        int n = snprintf(path, cap, patterns[i], dir, split, kind, d);
        if (n < 0 || (size_t)n >= cap)
            return ridge_error(RIDGE_EINVAL, "mnist: directory name too long: %s", dir);
        if (access(path, F_OK) == 0) return RIDGE_OK;
    }
    return ridge_error(RIDGE_EIO,
                       "%s: no %s %s file (looked for %s-%s-idx%d-ubyte.gz and "
                       "%s-%s-idx%d-ubyte); pass --data DIR",
                       dir, split, kind, split, kind, d, split, kind, d);
}

ridge_status ridge_mnist_load(const char *dir, const char *split, ridge_mnist *out)
{
    if (!out) return ridge_error(RIDGE_EINVAL, "mnist_load: out is NULL");
    memset(out, 0, sizeof *out);
    if (!dir || !split) return ridge_error(RIDGE_EINVAL, "mnist_load: dir or split is NULL");
    char ipath[4096], lpath[4096];
    ridge_status st = find_file(dir, split, "images", 3, ipath, sizeof ipath);
    if (st) return st;
    st = find_file(dir, split, "labels", 1, lpath, sizeof lpath);
    if (st) return st;

    ridge_idx img, lab;
    st = ridge_idx_read(ipath, 0, &img);
    if (st) return st;
    st = ridge_idx_read(lpath, 0, &lab);
    if (st) goto err_img;
    if (img.type != RIDGE_IDX_U8 || img.ndim != 3) {
        st = ridge_error(RIDGE_EFORMAT,
                         "%s: expected unsigned bytes with 3 dimensions (n, rows, cols), found "
                         "type 0x%02x with %d",
                         ipath, img.type, img.ndim);
        goto err_lab;
    }
    if (lab.type != RIDGE_IDX_U8 || lab.ndim != 1) {
        st = ridge_error(RIDGE_EFORMAT,
                         "%s: expected unsigned bytes with 1 dimension, found type 0x%02x with %d",
                         lpath, lab.type, lab.ndim);
        goto err_lab;
    }
    if (lab.dims[0] != img.dims[0]) {
        st = ridge_error(RIDGE_EFORMAT, "%s has %zu labels but %s has %zu images", lpath,
                         lab.dims[0], ipath, img.dims[0]);
        goto err_lab;
    }
    uint8_t maxl = 0;
    for (size_t i = 0; i < lab.count; i++) maxl = RIDGE_MAX(maxl, ((uint8_t *)lab.data)[i]);
    out->n = img.dims[0];
    out->rows = img.dims[1];
    out->cols = img.dims[2];
    out->classes = maxl + 1;
    out->images = img.data;
    out->labels = lab.data;
    return RIDGE_OK;

err_lab:
    ridge_idx_free(&lab);
err_img:
    ridge_idx_free(&img);
    return st;
}

void ridge_mnist_free(ridge_mnist *m)
{
    if (!m) return;
    ridge_free(m->images);
    ridge_free(m->labels);
    memset(m, 0, sizeof *m);
}
