/* llm.c's GPT-2 files: checkpoint, token shards, tokenizer (include/ridge/llmc.h).
 *
 * Reading follows one pattern: open, take the file's length, read and check the 1024-byte
 * header field by field, check the length the header implies against the real one (so a
 * truncated or padded file is refused before anything is allocated), then read the body.
 * Values are little-endian int32/fp32/uint16 on disk; ridge targets little-endian x86-64, so
 * they are read and written as native values (checked at compile time below).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/internal.h"
#include "ridge/llmc.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "llm.c files are little-endian");

/* ---- config ----------------------------------------------------------------------------- */

static const char *const param_names[RIDGE_GPT2_NUM_TENSORS] = {
    "wte", "wpe",  "ln1w", "ln1b", "qkvw",    "qkvb",    "attprojw", "attprojb",
    "ln2w", "ln2b", "fcw",  "fcb",  "fcprojw", "fcprojb", "lnfw",     "lnfb"};

const char *ridge_gpt2_param_name(int i)
{
    return i >= 0 && i < RIDGE_GPT2_NUM_TENSORS ? param_names[i] : "?";
}

ridge_gpt2_config ridge_gpt2_config_depth(int depth)
{
    ridge_gpt2_config c = {1024, 50257, 50304, depth, depth, 64 * depth};
    /* GPT-2's published sizes (and llm.c's -e dN descriptors) */
    if (depth == 24) c.channels = 1024, c.num_heads = 16;
    if (depth == 36) c.channels = 1280, c.num_heads = 20;
    if (depth == 48) c.channels = 1600, c.num_heads = 25;
    return c;
}

ridge_status ridge_gpt2_config_check(const ridge_gpt2_config *c)
{
    if (!c) return ridge_error(RIDGE_EINVAL, "gpt2 config: NULL");
    const struct { const char *name; int v; } f[] = {
        {"max_seq_len", c->max_seq_len}, {"vocab_size", c->vocab_size},
        {"padded_vocab_size", c->padded_vocab_size}, {"num_layers", c->num_layers},
        {"num_heads", c->num_heads}, {"channels", c->channels}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (f[i].v <= 0)
            return ridge_error(RIDGE_EINVAL, "gpt2 config: %s = %d, must be positive", f[i].name,
                               f[i].v);
    if (c->vocab_size > 65536)
        return ridge_error(RIDGE_EINVAL,
                           "gpt2 config: vocab_size = %d, token shards hold uint16 ids (<= 65536)",
                           c->vocab_size);
    if (c->padded_vocab_size < c->vocab_size)
        return ridge_error(RIDGE_EINVAL, "gpt2 config: padded_vocab_size = %d < vocab_size = %d",
                           c->padded_vocab_size, c->vocab_size);
    if (c->channels % c->num_heads)
        return ridge_error(RIDGE_EINVAL,
                           "gpt2 config: channels = %d is not a multiple of num_heads = %d",
                           c->channels, c->num_heads);
    /* every size below is a product of at most four ints: check it fits comfortably. Each
     * product of two ints fits in 64 bits; L * 12 * C * C (up to 2^74) is compared by
     * division, since a wrapped product could pass (L = 2^30, C = 2^16 gives 12 * 2^62,
     * 0 mod 2^64: docs/RELIABILITY.md, finding 4). */
    const uint64_t lim = (uint64_t)1 << 40;
    uint64_t C = (uint64_t)c->channels, L = (uint64_t)c->num_layers;
    if ((uint64_t)c->padded_vocab_size * C > lim || (uint64_t)c->max_seq_len * C > lim ||
        C * C > lim || L * 12 > lim / (C * C))
        return ridge_error(RIDGE_EINVAL, "gpt2 config: %d layers x %d channels is too large",
                           c->num_layers, c->channels);
    return RIDGE_OK;
}

ridge_status ridge_gpt2_param_sizes(const ridge_gpt2_config *c,
                                    size_t s[RIDGE_GPT2_NUM_TENSORS], size_t *total)
{
    ridge_status st = ridge_gpt2_config_check(c);
    if (st) return st;
    size_t Vp = (size_t)c->padded_vocab_size, C = (size_t)c->channels;
    size_t L = (size_t)c->num_layers, maxT = (size_t)c->max_seq_len;
    size_t sizes[RIDGE_GPT2_NUM_TENSORS] = {
        Vp * C,    maxT * C, L * C,         L * C, L * 3 * C * C, L * 3 * C,
        L * C * C, L * C,    L * C,         L * C, L * 4 * C * C, L * 4 * C,
        L * C * 4 * C,       L * C,         C,     C};
    size_t n = 0;
    for (int i = 0; i < RIDGE_GPT2_NUM_TENSORS; i++) {
        if (s) s[i] = sizes[i];
        n += sizes[i];
    }
    if (total) *total = n;
    return RIDGE_OK;
}

/* ---- file helpers ----------------------------------------------------------------------- */

/* Opens `path` for reading and returns its length in *size. */
static ridge_status open_read(const char *what, const char *path, FILE **out, uint64_t *size)
{
    *out = NULL;
    if (!path) return ridge_error(RIDGE_EINVAL, "%s: path is NULL", what);
    FILE *f = fopen(path, "rb");
    if (!f) return ridge_error(RIDGE_EIO, "%s %s: cannot open: %s", what, path, strerror(errno));
    long len = -1;
    if (fseek(f, 0, SEEK_END) == 0) len = ftell(f);
    if (len < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return ridge_error(RIDGE_EIO, "%s %s: cannot seek (not a regular file?)", what, path);
    }
    *out = f;
    *size = (uint64_t)len;
    return RIDGE_OK;
}

/* Reads the 256 x int32 header; the file must be at least that long. */
static ridge_status read_header(const char *what, const char *path, FILE *f, uint64_t size,
                                int32_t h[256])
{
    if (size < RIDGE_LLMC_HEADER_BYTES)
        return ridge_error(RIDGE_EFORMAT,
                           "%s %s: %llu bytes, shorter than the 1024-byte header", what, path,
                           (unsigned long long)size);
    if (fread(h, 4, 256, f) != 256)
        return ridge_error(RIDGE_EIO, "%s %s: cannot read the header", what, path);
    return RIDGE_OK;
}

static ridge_status check_magic(const char *what, const char *path, const int32_t h[256],
                                int32_t magic)
{
    if (h[0] != magic)
        return ridge_error(RIDGE_EFORMAT, "%s %s: header[0] magic = %d, expected %d", what, path,
                           h[0], magic);
    return RIDGE_OK;
}

static ridge_status read_body(const char *what, const char *path, FILE *f, void *dst,
                              size_t bytes)
{
    if (bytes && fread(dst, 1, bytes, f) != bytes)
        return ridge_error(RIDGE_EIO, "%s %s: short read of %zu bytes", what, path, bytes);
    return RIDGE_OK;
}

/* Every writer goes through ridge_file_atomic (src/core/file.c): PATH.tmp.PID, fsync'd and
 * renamed over PATH, so PATH is always the previous complete file or the new one. */

/* ---- checkpoint ------------------------------------------------------------------------- */

ridge_status ridge_llmc_model_read(const char *path, ridge_gpt2_config *cfg, float *params,
                                   size_t nparams)
{
    static const char what[] = "checkpoint";
    FILE *f;
    uint64_t size = 0;
    int32_t h[256];
    ridge_status st = open_read(what, path, &f, &size);
    if (st) return st;
    if ((st = read_header(what, path, f, size, h))) goto out;
    if ((st = check_magic(what, path, h, RIDGE_LLMC_MODEL_MAGIC))) goto out;
    if (h[1] != RIDGE_LLMC_MODEL_VERSION) {
        st = ridge_error(RIDGE_EFORMAT,
                         "checkpoint %s: header[1] version = %d, expected 3 (fp32)%s", path, h[1],
                         h[1] == 5 ? "; version 5 is llm.c's bf16 GPU checkpoint" : "");
        goto out;
    }
    ridge_gpt2_config c = {h[2], h[3], h[7], h[4], h[5], h[6]};
    static const char *const field[8] = {"", "", "max_seq_len", "vocab_size", "num_layers",
                                         "num_heads", "channels", "padded_vocab_size"};
    for (int i = 2; i < 8; i++)
        if (h[i] <= 0) {
            st = ridge_error(RIDGE_EFORMAT, "checkpoint %s: header[%d] %s = %d, must be positive",
                             path, i, field[i], h[i]);
            goto out;
        }
    size_t n;
    if ((st = ridge_gpt2_param_sizes(&c, NULL, &n))) {
        char why[256]; /* the message is rewritten in place: copy it first */
        snprintf(why, sizeof why, "%s", ridge_last_error());
        st = ridge_error(RIDGE_EFORMAT, "checkpoint %s: %s", path, why);
        goto out;
    }
    uint64_t want = RIDGE_LLMC_HEADER_BYTES + 4 * (uint64_t)n;
    if (size != want) {
        st = ridge_error(RIDGE_EFORMAT,
                         "checkpoint %s: file is %llu bytes, the header (L=%d C=%d Vp=%d maxT=%d) "
                         "implies %llu (%zu parameters): %s",
                         path, (unsigned long long)size, c.num_layers, c.channels,
                         c.padded_vocab_size, c.max_seq_len, (unsigned long long)want, n,
                         size < want ? "truncated" : "trailing bytes");
        goto out;
    }
    if (params) {
        if (nparams != n) {
            st = ridge_error(RIDGE_EINVAL, "checkpoint %s: holds %zu parameters, buffer has %zu",
                             path, n, nparams);
            goto out;
        }
        if ((st = read_body(what, path, f, params, n * sizeof(float)))) goto out;
    }
    if (cfg) *cfg = c;
out:
    fclose(f);
    return st;
}

ridge_status ridge_llmc_model_write(const char *path, const ridge_gpt2_config *cfg,
                                    const float *params)
{
    size_t n;
    ridge_status st = ridge_gpt2_param_sizes(cfg, NULL, &n);
    if (st) return st;
    if (!params) return ridge_error(RIDGE_EINVAL, "checkpoint %s: params is NULL", path);
    int32_t h[256] = {RIDGE_LLMC_MODEL_MAGIC, RIDGE_LLMC_MODEL_VERSION, cfg->max_seq_len,
                      cfg->vocab_size, cfg->num_layers, cfg->num_heads, cfg->channels,
                      cfg->padded_vocab_size};
    ridge_file_part parts[2] = {{h, sizeof h}, {params, n * sizeof(float)}};
    return ridge_file_write_atomic(path, "checkpoint", parts, 2);
}

/* ---- token shards ----------------------------------------------------------------------- */

static ridge_status tokens_open(const char *path, FILE **f, size_t *ntok)
{
    static const char what[] = "token shard";
    uint64_t size = 0;
    int32_t h[256];
    ridge_status st = open_read(what, path, f, &size);
    if (st) return st;
    if ((st = read_header(what, path, *f, size, h))) goto fail;
    if ((st = check_magic(what, path, h, RIDGE_LLMC_TOKENS_MAGIC))) goto fail;
    if (h[1] != RIDGE_LLMC_TOKENS_VERSION) {
        st = ridge_error(RIDGE_EFORMAT, "token shard %s: header[1] version = %d, expected 1%s",
                         path, h[1], h[1] == 7 ? " (version 7 is llm.c's uint32 llama-3 format)"
                                               : "");
        goto fail;
    }
    if (h[2] <= 0) {
        st = ridge_error(RIDGE_EFORMAT, "token shard %s: header[2] ntok = %d, must be positive",
                         path, h[2]);
        goto fail;
    }
    uint64_t want = RIDGE_LLMC_HEADER_BYTES + 2 * (uint64_t)h[2];
    if (size != want) {
        st = ridge_error(RIDGE_EFORMAT,
                         "token shard %s: file is %llu bytes, header[2] ntok = %d implies %llu: %s",
                         path, (unsigned long long)size, h[2], (unsigned long long)want,
                         size < want ? "truncated" : "trailing bytes");
        goto fail;
    }
    *ntok = (size_t)h[2];
    return RIDGE_OK;
fail:
    fclose(*f);
    *f = NULL;
    return st;
}

ridge_status ridge_llmc_tokens_info(const char *path, size_t *ntok)
{
    FILE *f;
    size_t n;
    ridge_status st = tokens_open(path, &f, &n);
    if (st) return st;
    fclose(f);
    if (ntok) *ntok = n;
    return RIDGE_OK;
}

ridge_status ridge_llmc_tokens_read(const char *path, int vocab_size, uint16_t **tokens,
                                    size_t *ntok)
{
    if (!tokens || !ntok) return ridge_error(RIDGE_EINVAL, "token shard %s: NULL output", path);
    *tokens = NULL;
    FILE *f;
    size_t n;
    ridge_status st = tokens_open(path, &f, &n);
    if (st) return st;
    uint16_t *t = ridge_malloc(n * sizeof *t);
    if (!t) {
        fclose(f);
        return ridge_error(RIDGE_ENOMEM, "token shard %s: no memory for %zu tokens", path, n);
    }
    st = read_body("token shard", path, f, t, n * sizeof *t);
    fclose(f);
    for (size_t i = 0; !st && vocab_size > 0 && i < n; i++)
        if (t[i] >= vocab_size)
            st = ridge_error(RIDGE_EFORMAT,
                             "token shard %s: token %zu has id %u, outside the vocabulary (%d)",
                             path, i, t[i], vocab_size);
    if (st) {
        ridge_free(t);
        return st;
    }
    *tokens = t;
    *ntok = n;
    return RIDGE_OK;
}

ridge_status ridge_llmc_tokens_write(const char *path, const uint16_t *tokens, size_t ntok)
{
    if (!tokens || ntok == 0 || ntok > INT32_MAX)
        return ridge_error(RIDGE_EINVAL, "token shard %s: %zu tokens (need 1..%d, non-NULL)",
                           path, ntok, INT32_MAX);
    int32_t h[256] = {RIDGE_LLMC_TOKENS_MAGIC, RIDGE_LLMC_TOKENS_VERSION, (int32_t)ntok};
    ridge_file_part parts[2] = {{h, sizeof h}, {tokens, ntok * sizeof *tokens}};
    return ridge_file_write_atomic(path, "token shard", parts, 2);
}

/* ---- tokenizer -------------------------------------------------------------------------- */

struct ridge_llmc_tokenizer {
    uint32_t vocab_size, eot;
    uint32_t *offset; /* (vocab_size + 1): piece i is bytes[offset[i] .. offset[i+1]) */
    uint8_t *bytes;   /* the file's body; the length bytes stay in it, skipped by offset */
};

ridge_status ridge_llmc_tokenizer_read(const char *path, ridge_llmc_tokenizer **out)
{
    static const char what[] = "tokenizer";
    if (!out) return ridge_error(RIDGE_EINVAL, "tokenizer: out is NULL");
    *out = NULL;
    FILE *f;
    uint64_t size = 0;
    int32_t h[256];
    ridge_llmc_tokenizer *tok = NULL;
    ridge_status st = open_read(what, path, &f, &size);
    if (st) return st;
    if ((st = read_header(what, path, f, size, h))) goto fail;
    if ((st = check_magic(what, path, h, RIDGE_LLMC_TOKENIZER_MAGIC))) goto fail;
    uint32_t V, eot;
    if (h[1] == 1) {
        V = (uint32_t)h[2], eot = 50256;
        if (V != 50257) {
            st = ridge_error(RIDGE_EFORMAT,
                             "tokenizer %s: header[2] vocab_size = %u, version 1 implies 50257",
                             path, V);
            goto fail;
        }
    } else if (h[1] == RIDGE_LLMC_TOKENIZER_VERSION) {
        V = (uint32_t)h[2], eot = (uint32_t)h[3];
    } else {
        st = ridge_error(RIDGE_EFORMAT, "tokenizer %s: header[1] version = %d, expected 1 or 2",
                         path, h[1]);
        goto fail;
    }
    uint64_t body = size - RIDGE_LLMC_HEADER_BYTES;
    /* each piece takes at least 2 bytes (its length and one byte) */
    if (h[2] <= 0 || V > body / 2 || V > 65536) {
        st = ridge_error(RIDGE_EFORMAT,
                         "tokenizer %s: header[2] vocab_size = %d does not fit the %llu-byte body "
                         "(at most 65536, 2 bytes or more per token)",
                         path, h[2], (unsigned long long)body);
        goto fail;
    }
    if (body > (uint64_t)V * 256) {
        st = ridge_error(RIDGE_EFORMAT,
                         "tokenizer %s: %llu-byte body is longer than %u tokens of at most 255 "
                         "bytes can be (trailing bytes)",
                         path, (unsigned long long)body, V);
        goto fail;
    }
    if (eot >= V) {
        st = ridge_error(RIDGE_EFORMAT, "tokenizer %s: header[3] eot_token = %u >= vocab_size %u",
                         path, eot, V);
        goto fail;
    }
    tok = calloc(1, sizeof *tok);
    if (tok) tok->offset = malloc(((size_t)V + 1) * sizeof *tok->offset);
    if (tok && tok->offset) tok->bytes = malloc((size_t)body);
    if (!tok || !tok->offset || !tok->bytes) {
        st = ridge_error(RIDGE_ENOMEM, "tokenizer %s: out of memory", path);
        goto fail;
    }
    if ((st = read_body(what, path, f, tok->bytes, (size_t)body))) goto fail;
    size_t p = 0;
    for (uint32_t i = 0; i < V; i++) {
        unsigned len = p < body ? tok->bytes[p] : 0;
        if (p >= body || len == 0 || p + 1 + len > body) {
            st = ridge_error(RIDGE_EFORMAT, "tokenizer %s: token %u: %s", path, i,
                             p >= body ? "file ends before it"
                             : len == 0 ? "length byte is 0"
                                        : "piece runs past the end of the file");
            goto fail;
        }
        tok->offset[i] = (uint32_t)(p + 1);
        p += 1 + len;
    }
    tok->offset[V] = (uint32_t)p + 1; /* piece V-1 ends at p; decode uses offset[i+1]-1 */
    if (p != body) {
        st = ridge_error(RIDGE_EFORMAT, "tokenizer %s: %llu trailing bytes after token %u", path,
                         (unsigned long long)(body - p), V - 1);
        goto fail;
    }
    tok->vocab_size = V;
    tok->eot = eot;
    fclose(f);
    *out = tok;
    return RIDGE_OK;
fail:
    fclose(f);
    ridge_llmc_tokenizer_destroy(tok);
    return st;
}

void ridge_llmc_tokenizer_destroy(ridge_llmc_tokenizer *tok)
{
    if (!tok) return;
    free(tok->offset);
    free(tok->bytes);
    free(tok);
}

uint32_t ridge_llmc_tokenizer_vocab_size(const ridge_llmc_tokenizer *tok)
{
    return tok->vocab_size;
}

uint32_t ridge_llmc_tokenizer_eot(const ridge_llmc_tokenizer *tok)
{
    return tok->eot;
}

const uint8_t *ridge_llmc_tokenizer_decode(const ridge_llmc_tokenizer *tok, uint32_t id,
                                           size_t *len)
{
    if (!tok || id >= tok->vocab_size) return NULL;
    /* offset[id+1] - 1 is where the next piece's length byte sits, i.e. the end of this one */
    if (len) *len = tok->offset[id + 1] - 1 - tok->offset[id];
    return tok->bytes + tok->offset[id];
}

ridge_status ridge_llmc_tokenizer_write(const char *path, uint32_t V, uint32_t eot,
                                        const uint8_t *const *pieces, const uint8_t *lens)
{
    if (V == 0 || V > 65536 || eot >= V || !pieces || !lens)
        return ridge_error(RIDGE_EINVAL, "tokenizer %s: vocab_size %u / eot %u out of range", path,
                           V, eot);
    for (uint32_t i = 0; i < V; i++)
        if (lens[i] == 0 || !pieces[i])
            return ridge_error(RIDGE_EINVAL, "tokenizer %s: token %u is empty", path, i);
    int32_t h[256] = {RIDGE_LLMC_TOKENIZER_MAGIC, RIDGE_LLMC_TOKENIZER_VERSION, (int32_t)V,
                      (int32_t)eot};
    ridge_file_atomic a;
    ridge_status st = ridge_file_atomic_open(&a, path, "tokenizer");
    if (st) return st;
    int ok = ridge_file_atomic_write(&a, h, sizeof h);
    for (uint32_t i = 0; ok && i < V; i++)
        ok = ridge_file_atomic_write(&a, &lens[i], 1) &&
             ridge_file_atomic_write(&a, pieces[i], lens[i]);
    return ridge_file_atomic_commit(&a);
}
