/* The checkpoint frame shared by every ridge model format (models/checkpoint.h). */
#include <errno.h>
#include <sys/stat.h>

#include "models/checkpoint.h"

static int little_endian(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

void ckpt_header_init(const ckpt_format *fmt, unsigned char *h)
{
    memset(h, 0, fmt->header_bytes);
    memcpy(h, fmt->magic, 8);
    ckpt_put32(h + 8, fmt->version);
    ckpt_put32(h + 12, fmt->header_bytes);
}

ridge_status ckpt_write(const char *path, const char *who, const ckpt_format *fmt,
                        const unsigned char *h, const ridge_file_part *parts, size_t nparts)
{
    if (!little_endian())
        return ridge_error(RIDGE_EUNSUPPORTED, "%s: big-endian hosts are not supported", who);
    enum { MAX_PARTS = 8 };
    if (nparts > MAX_PARTS) return ridge_error(RIDGE_EINVAL, "%s: too many parts", who);
    ridge_file_part all[MAX_PARTS + 2];
    uint32_t crc = ridge_crc32(0, h, fmt->header_bytes);
    all[0] = (ridge_file_part){h, fmt->header_bytes};
    for (size_t i = 0; i < nparts; i++) {
        if (parts[i].bytes) crc = ridge_crc32(crc, parts[i].data, parts[i].bytes);
        all[i + 1] = parts[i];
    }
    unsigned char tail[4];
    ckpt_put32(tail, crc);
    all[nparts + 1] = (ridge_file_part){tail, sizeof tail};
    return ridge_file_write_atomic(path, who, all, nparts + 2);
}

ridge_status ckpt_with_path(ridge_status st, const char *path)
{
    char why[512];
    snprintf(why, sizeof why, "%s", ridge_last_error());
    return ridge_error(st, "%s: %s", path, why);
}

static ridge_status check_header(const char *path, const ckpt_format *fmt, const unsigned char *h)
{
    if (memcmp(h, fmt->magic, 8) != 0)
        return ridge_error(RIDGE_EFORMAT, "%s: bad magic: not a ridge %s (magic %.8s)", path,
                           fmt->what, fmt->magic);
    if (ckpt_get32(h + 8) != fmt->version || ckpt_get32(h + 12) != fmt->header_bytes)
        return ridge_error(RIDGE_EFORMAT, "%s: version %u (header %u bytes); this ridge reads "
                           "version %u (header %u bytes)", path, ckpt_get32(h + 8),
                           ckpt_get32(h + 12), fmt->version, fmt->header_bytes);
    const uint32_t end = fmt->text_at ? fmt->text_at : fmt->header_bytes;
    for (uint32_t i = fmt->fields_end; i < end; i++)
        if (h[i]) return ridge_error(RIDGE_EFORMAT, "%s: reserved header byte %u is not zero", path, i);
    if (fmt->text_at && !memchr(h + fmt->text_at, 0, fmt->header_bytes - fmt->text_at))
        return ridge_error(RIDGE_EFORMAT, "%s: the header's string is not terminated", path);
    return RIDGE_OK;
}

ridge_status ckpt_open(const char *path, const ckpt_format *fmt, unsigned char *h, FILE **out,
                       uint64_t *size)
{
    *out = NULL;
    if (!little_endian())
        return ridge_error(RIDGE_EUNSUPPORTED, "%s: big-endian hosts are not supported", path);
    FILE *f = fopen(path, "rb");
    if (!f) return ridge_error(RIDGE_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb = {0};
    ridge_status st;
    if (fstat(fileno(f), &sb) != 0 || fread(h, 1, fmt->header_bytes, f) != fmt->header_bytes) {
        /* a shorter file with another magic is more usefully called that */
        st = sb.st_size >= 8 && memcmp(h, fmt->magic, 8) != 0
                 ? check_header(path, fmt, h)
                 : ridge_error(RIDGE_EFORMAT, "%s: truncated: shorter than the %u-byte header",
                               path, fmt->header_bytes);
    } else {
        st = check_header(path, fmt, h);
    }
    if (st) {
        fclose(f);
        return st;
    }
    *size = (uint64_t)sb.st_size;
    *out = f;
    return RIDGE_OK;
}

ridge_status ckpt_check_size(const char *path, const ckpt_format *fmt, uint64_t size,
                             uint64_t body_bytes)
{
    const uint64_t want = fmt->header_bytes + body_bytes + 4;
    if (body_bytes > (UINT64_C(1) << 60) || size != want)
        return ridge_error(RIDGE_EFORMAT, "%s: %s: %llu bytes, the header implies %llu", path,
                           size < want ? "truncated" : "trailing bytes", (unsigned long long)size,
                           (unsigned long long)want);
    return RIDGE_OK;
}

ridge_status ckpt_read_body(FILE *f, const char *path, const ckpt_format *fmt,
                            const unsigned char *h, const ckpt_part *parts, size_t nparts)
{
    uint32_t crc = ridge_crc32(0, h, fmt->header_bytes);
    for (size_t i = 0; i < nparts; i++) {
        if (!parts[i].bytes) continue;
        if (fread(parts[i].data, 1, parts[i].bytes, f) != parts[i].bytes)
            return ridge_error(RIDGE_EIO, "%s: read failed: %s", path, strerror(errno));
        crc = ridge_crc32(crc, parts[i].data, parts[i].bytes);
    }
    unsigned char tail[4];
    if (fread(tail, 1, 4, f) != 4)
        return ridge_error(RIDGE_EIO, "%s: read failed: %s", path, strerror(errno));
    if (crc != ckpt_get32(tail))
        return ridge_error(RIDGE_EFORMAT, "%s: CRC mismatch (stored %08x, computed %08x): the "
                           "file is corrupted", path, ckpt_get32(tail), crc);
    return RIDGE_OK;
}

void ckpt_put_optim(unsigned char *p, const ridge_optim_config *o)
{
    ckpt_put32(p, (uint32_t)o->kind);
    ckpt_put32(p + 4, (uint32_t)o->schedule);
    const float fs[7] = {o->lr, o->momentum, o->beta1, o->beta2, o->eps, o->weight_decay,
                         o->min_lr_frac};
    for (int i = 0; i < 7; i++) ckpt_putf(p + 8 + 4 * i, fs[i]);
    ckpt_put64(p + 36, o->warmup);
    ckpt_put64(p + 44, o->total);
}

void ckpt_get_optim(const unsigned char *p, ridge_optim_config *o)
{
    ridge_optim_config_init(o);
    o->kind = (ridge_optim_kind)ckpt_get32(p);
    o->schedule = (ridge_lr_kind)ckpt_get32(p + 4);
    float *fs[7] = {&o->lr, &o->momentum, &o->beta1, &o->beta2, &o->eps, &o->weight_decay,
                    &o->min_lr_frac};
    for (int i = 0; i < 7; i++) *fs[i] = ckpt_getf(p + 8 + 4 * i);
    o->warmup = ckpt_get64(p + 36);
    o->total = ckpt_get64(p + 44);
}
