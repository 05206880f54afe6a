/* Tuning results (ridge_conv2d_plan_options.tune): the measured time of every candidate per
 * (descriptor, ISA, threads), kept for the process and in a file per machine beside the
 * roofline profile, $XDG_CACHE_HOME/ridge/conv-tune-<brand>.txt (else ~/.cache/ridge/...), so
 * that a later process reuses them instead of timing every algorithm again.
 *
 * The file is text (docs/FORMATS.md, "conv tuning results"): the line `ridge-conv-tune 1`,
 * then one line per shape; lines starting with '#' are comments. A line that does not parse,
 * or whose descriptor does not validate, is skipped on reading and dropped on the next write.
 * Writes replace the whole file atomically (core/file.c), so a crash never leaves it half
 * written; two processes storing at once may lose one of their two new lines, which is then
 * measured again next time. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conv/conv.h"
#include "perf/json.h"

#define TUNE_MAGIC "ridge-conv-tune 1"
#define TUNE_FILE_MAX ((size_t)1 << 20) /* bytes read at most */
#define TUNE_FILE_LINES 4096            /* shapes kept in the file (the oldest go first) */
#define TUNE_PROCESS 64                 /* shapes kept in memory (a ring) */
#define TUNE_TIMES (RIDGE_CONV_ALGO_COUNT - RIDGE_CONV_DIRECT)
#define TUNE_FIELDS (20 + TUNE_TIMES)

static conv_tune_entry cache[TUNE_PROCESS];
static int cache_count;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* the ring and the file */

static int same_key(const conv_tune_entry *a, const ridge_conv2d_desc *d, ridge_isa isa,
                    int threads)
{
    const ridge_conv2d_desc *b = &a->d;
    return a->isa == isa && a->threads == threads && d->n == b->n && d->c_in == b->c_in &&
           d->h == b->h && d->w == b->w && d->c_out == b->c_out && d->r == b->r && d->s == b->s &&
           d->stride_h == b->stride_h && d->stride_w == b->stride_w && d->dil_h == b->dil_h &&
           d->dil_w == b->dil_w && d->pad_top == b->pad_top && d->pad_bottom == b->pad_bottom &&
           d->pad_left == b->pad_left && d->pad_right == b->pad_right &&
           d->groups == b->groups && d->layout == b->layout;
}

/* The ring's slot for this key, or -1 (lock held) */
static int ring_find(const ridge_conv2d_desc *d, ridge_isa isa, int threads)
{
    for (int i = 0; i < cache_count && i < TUNE_PROCESS; i++)
        if (same_key(&cache[i], d, isa, threads)) return i;
    return -1;
}

/* e into the ring: over its key's slot, else the oldest (lock held) */
static void ring_put(const conv_tune_entry *e)
{
    int i = ring_find(&e->d, e->isa, e->threads);
    cache[i >= 0 ? i : cache_count++ % TUNE_PROCESS] = *e;
}

size_t conv_tune_format_line(const conv_tune_entry *e, char *buf, size_t size)
{
    const ridge_conv2d_desc *d = &e->d;
    size_t o = 0;
#define OUT(...)                                                                              \
    (o += (size_t)snprintf(o < size ? buf + o : NULL, o < size ? size - o : 0, __VA_ARGS__))
    OUT("%s %d %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld "
        "%s %s",
        ridge_isa_name(e->isa), e->threads, (long long)d->n, (long long)d->c_in,
        (long long)d->h, (long long)d->w, (long long)d->c_out, (long long)d->r, (long long)d->s,
        (long long)d->stride_h, (long long)d->stride_w, (long long)d->dil_h, (long long)d->dil_w,
        (long long)d->pad_top, (long long)d->pad_bottom, (long long)d->pad_left,
        (long long)d->pad_right, (long long)d->groups, ridge_layout_name(d->layout),
        ridge_conv_algo_name(e->algo));
    for (int a = RIDGE_CONV_DIRECT; a < RIDGE_CONV_ALGO_COUNT; a++) {
        if (e->measured[a] > 0) OUT(" %.6g", e->measured[a] * 1e3);
        else OUT(" -");
    }
    OUT("\n");
#undef OUT
    return o;
}

static int parse_i64(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return 0;
    *out = v;
    return 1;
}

int conv_tune_parse_line(const char *line, conv_tune_entry *e)
{
    char buf[512], *tok[TUNE_FIELDS + 1], *save = NULL;
    size_t len = strcspn(line, "\n");
    if (len >= sizeof buf) return 0;
    memcpy(buf, line, len);
    buf[len] = 0;
    int nt = 0;
    for (char *t = strtok_r(buf, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save)) {
        if (nt == TUNE_FIELDS) return 0; /* too many */
        tok[nt++] = t;
    }
    if (nt != TUNE_FIELDS) return 0;
    memset(e, 0, sizeof *e);
    long long v[17];
    if (ridge_isa_parse(tok[0], &e->isa) || e->isa == RIDGE_ISA_AUTO ||
        !parse_i64(tok[1], 1, 1 << 16, v))
        return 0;
    e->threads = (int)v[0];
    for (int i = 0; i < 16; i++)
        if (!parse_i64(tok[2 + i], 0, INT64_MAX, &v[i])) return 0;
    ridge_conv2d_desc *d = &e->d;
    ridge_conv2d_desc_init(d);
    d->n = v[0], d->c_in = v[1], d->h = v[2], d->w = v[3], d->c_out = v[4], d->r = v[5];
    d->s = v[6], d->stride_h = v[7], d->stride_w = v[8], d->dil_h = v[9], d->dil_w = v[10];
    d->pad_top = v[11], d->pad_bottom = v[12], d->pad_left = v[13], d->pad_right = v[14];
    d->groups = v[15];
    if (ridge_layout_parse(tok[18], &d->layout) || ridge_conv2d_desc_check(d, NULL, NULL) ||
        ridge_conv_algo_parse(tok[19], &e->algo) || e->algo < RIDGE_CONV_DIRECT)
        return 0;
    for (int a = RIDGE_CONV_DIRECT; a < RIDGE_CONV_ALGO_COUNT; a++) {
        const char *t = tok[20 + a - RIDGE_CONV_DIRECT];
        if (!strcmp(t, "-")) continue;
        char *end;
        double ms = strtod(t, &end);
        if (end == t || *end || !isfinite(ms) || ms <= 0 || ms > 1e9) return 0;
        e->measured[a] = ms * 1e-3;
    }
    /* the fastest is the one named */
    for (int a = RIDGE_CONV_DIRECT; a < RIDGE_CONV_ALGO_COUNT; a++)
        if (e->measured[a] > 0 && e->measured[a] < e->measured[e->algo]) return 0;
    return e->measured[e->algo] > 0;
}

/* The file's valid entries (at most TUNE_FILE_LINES, the last ones), in order. A missing or
 * empty file has none; 0 with why set when it cannot be read, or is not ours. */
static int read_file(const char *path, conv_tune_entry **out, int *n, char *why, size_t why_len)
{
    *out = NULL, *n = 0;
    if (access(path, F_OK) != 0) return 1;
    char *text;
    if (ridge_read_file(path, TUNE_FILE_MAX, &text)) {
        snprintf(why, why_len, "%s", ridge_last_error());
        return 0;
    }
    size_t ml = strlen(TUNE_MAGIC);
    if (!text[0]) { /* empty: as if missing */
        free(text);
        return 1;
    }
    if (strncmp(text, TUNE_MAGIC, ml) || (text[ml] != '\n' && text[ml] != 0)) {
        snprintf(why, why_len, "%s: not a ridge conv tuning file (its first line is not '%s')",
                 path, TUNE_MAGIC);
        free(text);
        return 0;
    }
    conv_tune_entry *e = ridge_malloc(sizeof *e * TUNE_FILE_LINES);
    if (!e) {
        free(text);
        snprintf(why, why_len, "out of memory");
        return 0;
    }
    /* a ring of the last TUNE_FILE_LINES valid lines, put back in order at the end */
    size_t k = 0;
    for (char *line = strchr(text, '\n'); line; line = strchr(line, '\n')) {
        line++;
        if (*line == '#' || *line == '\n' || !*line) continue;
        if (conv_tune_parse_line(line, &e[k % TUNE_FILE_LINES])) k++;
    }
    free(text);
    if (k > TUNE_FILE_LINES) {
        conv_tune_entry *r = ridge_malloc(sizeof *r * TUNE_FILE_LINES);
        if (!r) {
            ridge_free(e);
            snprintf(why, why_len, "out of memory");
            return 0;
        }
        for (size_t i = 0; i < TUNE_FILE_LINES; i++) r[i] = e[(k + i) % TUNE_FILE_LINES];
        ridge_free(e);
        e = r, k = TUNE_FILE_LINES;
    }
    *out = e, *n = (int)k;
    return 1;
}

void conv_tune_forget(void)
{
    pthread_mutex_lock(&lock);
    cache_count = 0;
    pthread_mutex_unlock(&lock);
}

int conv_tune_lookup(const char *brand, const ridge_conv2d_desc *d, ridge_isa isa, int threads,
                     conv_tune_entry *out, char *where, size_t where_len)
{
    pthread_mutex_lock(&lock);
    int i = ring_find(d, isa, threads), found = i >= 0;
    if (found) *out = cache[i], snprintf(where, where_len, "in this process");
    char path[4096], why[256];
    conv_tune_entry *e;
    int n;
    if (!found &&
        ridge_cache_file_path("conv-tune", brand, ".txt", path, sizeof path) == RIDGE_OK &&
        read_file(path, &e, &n, why, sizeof why)) {
        for (int k = n - 1; k >= 0 && !found; k--)
            if (same_key(&e[k], d, isa, threads)) {
                *out = e[k], found = 1;
                snprintf(where, where_len, "in %s", path);
                ring_put(out);
            }
        ridge_free(e);
    }
    pthread_mutex_unlock(&lock);
    return found;
}

int conv_tune_store(const char *brand, const conv_tune_entry *s, char *where, size_t where_len)
{
    pthread_mutex_lock(&lock);
    ring_put(s);

    char path[4096];
    conv_tune_entry *e = NULL;
    int n = 0, saved = 0;
    if (ridge_cache_file_path("conv-tune", brand, ".txt", path, sizeof path)) {
        snprintf(where, where_len, "%s", ridge_last_error());
    } else if (read_file(path, &e, &n, where, where_len)) {
        /* read again, not kept from the lookup: the tuning in between took long enough for
         * another process to store lines of its own. The file's lines but any for this key,
         * oldest first, then this one. */
        char line[512];
        size_t cap = sizeof line * (size_t)(n + 2), len = 0;
        char *text = ridge_malloc(cap);
        if (text) {
            len += (size_t)snprintf(text, cap,
                                    "%s\n# isa threads n c_in h w c_out r s stride_h stride_w "
                                    "dil_h dil_w pad_top pad_bottom pad_left pad_right groups "
                                    "layout fastest, then ms:",
                                    TUNE_MAGIC);
            for (int a = RIDGE_CONV_DIRECT; a < RIDGE_CONV_ALGO_COUNT; a++)
                len += (size_t)snprintf(text + len, cap - len, " %s",
                                        ridge_conv_algo_name((ridge_conv_algo)a));
            text[len++] = '\n';
            for (int k = n == TUNE_FILE_LINES ? 1 : 0; k <= n; k++) {
                const conv_tune_entry *t = k < n ? &e[k] : s;
                if (k < n && same_key(t, &s->d, s->isa, s->threads)) continue;
                size_t m = conv_tune_format_line(t, line, sizeof line);
                if (m >= sizeof line || len + m >= cap) continue;
                memcpy(text + len, line, m);
                len += m;
            }
            if (ridge_mkdir_parents(path))
                snprintf(where, where_len, "%s: cannot create the directory: %s", path,
                         strerror(errno));
            else if (ridge_file_write_atomic(path, "conv tuning", &(ridge_file_part){text, len}, 1))
                snprintf(where, where_len, "%s", ridge_last_error());
            else saved = 1, snprintf(where, where_len, "%s", path);
            ridge_free(text);
        } else {
            snprintf(where, where_len, "out of memory");
        }
    }
    ridge_free(e);
    pthread_mutex_unlock(&lock);
    return saved;
}
