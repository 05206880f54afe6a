/* The frame every ridge checkpoint shares (MLP, CNN, int8 MLP, int8 CNN; docs/FORMATS.md):
 *
 *   0   magic (8 bytes)   8   u32 version   12  u32 header bytes (the format's fixed size)
 *   16  the format's fields, then zero bytes up to the header's end
 *   header bytes          the body
 *   end                   u32 CRC-32 of every byte before it
 *
 * Little-endian throughout; bodies holding float arrays are written as they are in memory, so
 * big-endian hosts are refused. One reader validates the frame (magic, version, header size,
 * reserved bytes, the file's length against what the header implies, the CRC) and one writer
 * saves it atomically (ridge_file_write_atomic), so each format only checks its own fields. */
#ifndef RIDGE_MODELS_CHECKPOINT_H
#define RIDGE_MODELS_CHECKPOINT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "ridge/nn.h"

typedef struct ckpt_format {
    const char *magic;     /* 8 characters */
    const char *what;      /* "CNN checkpoint": named in messages */
    uint32_t version;
    uint32_t header_bytes;
    uint32_t fields_end;   /* header bytes [fields_end, header_bytes) must be zero, except
                            * [text_at, header_bytes) when text_at is not 0 */
    uint32_t text_at;      /* a NUL-terminated string fills [text_at, header_bytes) */
} ckpt_format;

static inline void ckpt_put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static inline void ckpt_put64(unsigned char *p, uint64_t v)
{
    ckpt_put32(p, (uint32_t)v), ckpt_put32(p + 4, (uint32_t)(v >> 32));
}
static inline void ckpt_putf(unsigned char *p, float f)
{
    uint32_t v;
    memcpy(&v, &f, 4);
    ckpt_put32(p, v);
}
static inline uint32_t ckpt_get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t ckpt_get64(const unsigned char *p)
{
    return ckpt_get32(p) | (uint64_t)ckpt_get32(p + 4) << 32;
}
static inline float ckpt_getf(const unsigned char *p)
{
    uint32_t v = ckpt_get32(p);
    float f;
    memcpy(&f, &v, 4);
    return f;
}

/* Zeroes h (fmt->header_bytes) and writes the magic, version and header size. */
void ckpt_header_init(const ckpt_format *fmt, unsigned char *h);

/* h, then the parts, then the CRC-32 of all of them, to path through a temporary file and a
 * rename. who names the caller in messages. */
ridge_status ckpt_write(const char *path, const char *who, const ckpt_format *fmt,
                        const unsigned char *h, const ridge_file_part *parts, size_t nparts);

/* Opens path and reads its header into h (fmt->header_bytes), checking the magic, version,
 * header size and reserved bytes; *size is the file's length. On success *f is positioned
 * after the header (the caller closes it); on failure it is closed and NULL. */
ridge_status ckpt_open(const char *path, const ckpt_format *fmt, unsigned char *h, FILE **f,
                       uint64_t *size);

/* The file's length against what its header implies (body bytes + header + CRC). */
ridge_status ckpt_check_size(const char *path, const ckpt_format *fmt, uint64_t size,
                             uint64_t body_bytes);

/* Reads the body into the parts (in order) and the CRC, and checks the CRC over the header and
 * the parts. */
typedef struct ckpt_part {
    void *data;
    size_t bytes;
} ckpt_part;
ridge_status ckpt_read_body(FILE *f, const char *path, const ckpt_format *fmt,
                            const unsigned char *h, const ckpt_part *parts, size_t nparts);

/* Re-raises the last error as st with the file name in front. */
ridge_status ckpt_with_path(ridge_status st, const char *path);

/* The optimizer block of the MLP and CNN headers (52 bytes): u32 kind, u32 schedule, f32 lr,
 * momentum, beta1, beta2, eps, weight decay, min lr fraction, u64 warm-up, u64 total. */
#define CKPT_OPTIM_BYTES 52
void ckpt_put_optim(unsigned char *p, const ridge_optim_config *o);
void ckpt_get_optim(const unsigned char *p, ridge_optim_config *o);

#endif /* RIDGE_MODELS_CHECKPOINT_H */
