/* The roofline profile: judgement arithmetic, JSON form, and the per-user cache.
 * The probes that fill a profile are in measure.c and probe-*.c. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/internal.h"
#include "perf/json.h"
#include "ridge/perf.h"

static const char *const peak_names[RIDGE_PEAK_COUNT] = {"f32-ref", "f32-avx2", "f32-avx512",
                                                         "i8-dot", "bf16-dot"};
static const char *const level_names[RIDGE_LEVEL_COUNT] = {"L1", "L2", "L3", "DRAM"};

const char *ridge_roofline_peak_name(ridge_roofline_peak peak)
{
    return peak >= 0 && peak < RIDGE_PEAK_COUNT ? peak_names[peak] : "unknown";
}

const char *ridge_roofline_level_name(ridge_roofline_level level)
{
    return level >= 0 && level < RIDGE_LEVEL_COUNT ? level_names[level] : "unknown";
}

const char *ridge_roofline_wall_name(ridge_roofline_wall wall)
{
    return wall == RIDGE_WALL_COMPUTE ? "compute" : wall == RIDGE_WALL_MEMORY ? "memory" : "unknown";
}

ridge_roofline_peak ridge_roofline_peak_f32(ridge_isa isa)
{
    return isa == RIDGE_ISA_AVX512 ? RIDGE_PEAK_F32_AVX512
         : isa == RIDGE_ISA_AVX2   ? RIDGE_PEAK_F32_AVX2
                                   : RIDGE_PEAK_F32_REF;
}

/* ---- judgement ------------------------------------------------------------------------------ */

ridge_roofline_level ridge_roofline_level_of(const ridge_roofline *roof, int threads, double bytes)
{
    double per_thread = bytes / (threads > 0 ? threads : 1);
    if (per_thread <= (double)roof->l1d) return RIDGE_LEVEL_L1;
    if (per_thread <= (double)roof->l2) return RIDGE_LEVEL_L2;
    if (bytes <= (double)roof->l3_usable) return RIDGE_LEVEL_L3;
    return RIDGE_LEVEL_DRAM;
}

ridge_status ridge_roofline_at(const ridge_roofline *roof, int threads, ridge_roofline_point *out)
{
    if (!roof || !out) return ridge_error(RIDGE_EINVAL, "roofline_at: NULL argument");
    if (roof->npoints < 1 || threads < roof->points[0].threads ||
        threads > roof->points[roof->npoints - 1].threads)
        return ridge_error(RIDGE_EINVAL, "roofline: %d threads is outside the profile (%d..%d)",
                           threads, roof->npoints ? roof->points[0].threads : 0,
                           roof->npoints ? roof->points[roof->npoints - 1].threads : 0);
    int i = 0;
    while (roof->points[i].threads < threads) i++;
    const ridge_roofline_point *hi = &roof->points[i];
    if (hi->threads == threads) {
        *out = *hi;
        return RIDGE_OK;
    }
    const ridge_roofline_point *lo = &roof->points[i - 1];
    double w = (double)(threads - lo->threads) / (double)(hi->threads - lo->threads);
#define LERP(f) ((1 - w) * lo->f + w * hi->f)
    out->threads = threads;
    for (int k = 0; k < RIDGE_PEAK_COUNT; k++) out->peak[k] = LERP(peak[k]);
    for (int k = 0; k < RIDGE_LEVEL_COUNT; k++) out->read[k] = LERP(read[k]);
    out->copy = LERP(copy);
    out->triad = LERP(triad);
#undef LERP
    return RIDGE_OK;
}

double ridge_roofline_bandwidth(const ridge_roofline_point *p, ridge_roofline_level level)
{
    if (level < 0 || level >= RIDGE_LEVEL_COUNT) return 0;
    double bw = p->read[level];
    if (level == RIDGE_LEVEL_DRAM) bw = fmax(bw, fmax(p->copy, p->triad));
    return bw;
}

ridge_status ridge_roofline_judge(const ridge_roofline *roof, int threads,
                                  ridge_roofline_peak peak, double flops, double bytes,
                                  double working_set, double seconds,
                                  ridge_roofline_verdict *out)
{
    if (!roof || !out) return ridge_error(RIDGE_EINVAL, "roofline_judge: NULL argument");
    memset(out, 0, sizeof *out);
    if (!(seconds > 0) || !(flops >= 0) || !(bytes >= 0) || !(working_set >= 0) ||
        !isfinite(seconds) || !isfinite(flops) || !isfinite(bytes) || !isfinite(working_set))
        return ridge_error(RIDGE_EINVAL,
                           "roofline_judge: need seconds > 0 and finite flops, bytes, working "
                           "set >= 0 (got %g s, %g FLOP, %g B, %g B)",
                           seconds, flops, bytes, working_set);
    if (peak < 0 || peak >= RIDGE_PEAK_COUNT)
        return ridge_error(RIDGE_EINVAL, "roofline_judge: peak %d is not a ridge_roofline_peak",
                           (int)peak);
    ridge_roofline_point p;
    ridge_status st = ridge_roofline_at(roof, threads, &p);
    if (st) return st;
    if (!(p.peak[peak] > 0))
        return ridge_error(RIDGE_EUNSUPPORTED, "roofline_judge: no %s peak on this CPU (%s)",
                           peak_names[peak], roof->cpu);

    ridge_roofline_verdict v;
    v.gflops = flops / seconds * 1e-9;
    v.gbs = bytes / seconds * 1e-9;
    v.intensity = bytes > 0 ? flops / bytes : INFINITY;
    v.level = ridge_roofline_level_of(roof, threads, working_set);
    v.peak_gflops = p.peak[peak];
    v.bw_gbs = ridge_roofline_bandwidth(&p, v.level);
    v.ridge_point = v.peak_gflops / v.bw_gbs;
    v.bound_gflops = fmin(v.peak_gflops, v.intensity * v.bw_gbs);
    v.wall = v.intensity >= v.ridge_point ? RIDGE_WALL_COMPUTE : RIDGE_WALL_MEMORY;
    /* A pure data movement (no FLOPs) has a bound of 0 GFLOP/s: judge its bytes instead. */
    v.fraction = flops > 0 ? v.gflops / v.bound_gflops : v.gbs / v.bw_gbs;
    *out = v;
    return RIDGE_OK;
}

/* ---- JSON ----------------------------------------------------------------------------------- */

typedef struct sbuf {
    char *buf;
    size_t size, len; /* len counts what would have been written */
} sbuf;

__attribute__((format(printf, 2, 3))) static void put(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = b->len < b->size ? b->size - b->len : 0;
    int n = vsnprintf(room ? b->buf + b->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0) b->len += (size_t)n;
}

/* A JSON string: quotes and backslashes escaped, control characters dropped (a profile's
 * strings are a CPU brand and a timestamp; what the loader accepted must load again). */
static void put_str(sbuf *b, const char *s)
{
    put(b, "\"");
    for (; *s; s++)
        if (*s == '"' || *s == '\\') put(b, "\\%c", *s);
        else if ((unsigned char)*s >= 0x20) put(b, "%c", *s);
    put(b, "\"");
}

/* A measured number, or null when it is 0 (not on this CPU). */
static void put_num(sbuf *b, const char *key, double v, const char *sep)
{
    if (v > 0) put(b, "\"%s\": %.6g%s", key, v, sep);
    else put(b, "\"%s\": null%s", key, sep);
}

size_t ridge_roofline_to_json(const ridge_roofline *r, char *buf, size_t size)
{
    sbuf b = {buf, size, 0};
    if (buf && size) buf[0] = 0;
    put(&b, "{\n  \"format\": \"ridge-roofline\",\n  \"version\": %d,\n", r->version);
    put(&b, "  \"units\": \"peaks GFLOP/s (i8-dot: GOP/s), bandwidths GB/s, sizes bytes\",\n");
    put(&b, "  \"cpu\": ");
    put_str(&b, r->cpu);
    put(&b, ",\n  \"threads\": %d,\n  \"l1d\": %zu,\n  \"l2\": %zu,\n  \"l3_usable\": %zu,\n",
        r->threads, r->l1d, r->l2, r->l3_usable);
    put(&b, "  \"quick\": %s,\n  \"seconds\": %.3f,\n  \"measured_at\": ",
        r->quick ? "true" : "false", r->seconds);
    put_str(&b, r->measured_at);
    put(&b, ",\n");
    put(&b, "  \"points\": [");
    for (int i = 0; i < r->npoints; i++) {
        const ridge_roofline_point *p = &r->points[i];
        put(&b, "%s\n    {\"threads\": %d,\n     \"peak\": {", i ? "," : "", p->threads);
        for (int k = 0; k < RIDGE_PEAK_COUNT; k++)
            put_num(&b, peak_names[k], p->peak[k], k + 1 < RIDGE_PEAK_COUNT ? ", " : "},\n");
        put(&b, "     \"read\": {");
        for (int k = 0; k < RIDGE_LEVEL_COUNT; k++)
            put_num(&b, level_names[k], p->read[k], k + 1 < RIDGE_LEVEL_COUNT ? ", " : "},\n");
        put(&b, "     ");
        put_num(&b, "copy", p->copy, ", ");
        put_num(&b, "triad", p->triad, "}");
    }
    put(&b, "\n  ]\n}\n");
    return b.len;
}

/* Reads a number member into *out; null counts as 0 when `nullable`. Ranges catch absurd
 * values (a corrupt or hand-edited file) before they reach a judgement. */
static ridge_status get_num(const ridge_json *obj, const char *key, double lo, double hi,
                            int nullable, double *out)
{
    const ridge_json *v = ridge_json_get(obj, key);
    if (v && v->type == RIDGE_JSON_NULL && nullable) {
        *out = 0;
        return RIDGE_OK;
    }
    if (!v || v->type != RIDGE_JSON_NUMBER)
        return ridge_error(RIDGE_EFORMAT, "roofline profile: \"%s\" is missing or not a number",
                           key);
    if (!(v->num >= lo && v->num <= hi))
        return ridge_error(RIDGE_EFORMAT, "roofline profile: \"%s\" = %g is outside %g..%g", key,
                           v->num, lo, hi);
    *out = v->num;
    return RIDGE_OK;
}

static ridge_status parse_point(const ridge_json *o, ridge_roofline_point *p)
{
    ridge_status st;
    double t;
    const double big = 1e8; /* GFLOP/s or GB/s: far above any CPU */
    if ((st = get_num(o, "threads", 1, 1024, 0, &t))) return st;
    p->threads = (int)t;
    const ridge_json *peak = ridge_json_get(o, "peak"), *read = ridge_json_get(o, "read");
    if (!peak || !read)
        return ridge_error(RIDGE_EFORMAT, "roofline profile: a point lacks \"peak\" or \"read\"");
    for (int k = 0; k < RIDGE_PEAK_COUNT; k++)
        if ((st = get_num(peak, peak_names[k], 0, big, 1, &p->peak[k]))) return st;
    for (int k = 0; k < RIDGE_LEVEL_COUNT; k++)
        if ((st = get_num(read, level_names[k], 1e-6, big, 0, &p->read[k]))) return st;
    if ((st = get_num(o, "copy", 0, big, 1, &p->copy))) return st;
    if ((st = get_num(o, "triad", 0, big, 1, &p->triad))) return st;
    if (!(p->peak[RIDGE_PEAK_F32_REF] > 0))
        return ridge_error(RIDGE_EFORMAT, "roofline profile: the f32-ref peak is missing");
    return RIDGE_OK;
}

static ridge_status parse_profile(const ridge_json *root, ridge_roofline *r)
{
    ridge_status st;
    double v = 0;
    memset(r, 0, sizeof *r);
    const ridge_json *fmt = ridge_json_get(root, "format");
    if (!fmt || fmt->type != RIDGE_JSON_STRING || strcmp(fmt->str, "ridge-roofline"))
        return ridge_error(RIDGE_EFORMAT, "not a ridge roofline profile (\"format\" missing)");
    if ((st = get_num(root, "version", 0, 1e9, 0, &v))) return st;
    if ((int)v != RIDGE_ROOFLINE_VERSION)
        return ridge_error(RIDGE_EFORMAT, "roofline profile: version %g, expected %d", v,
                           RIDGE_ROOFLINE_VERSION);
    r->version = RIDGE_ROOFLINE_VERSION;
    const ridge_json *cpu = ridge_json_get(root, "cpu");
    if (!cpu || cpu->type != RIDGE_JSON_STRING || strlen(cpu->str) >= sizeof r->cpu)
        return ridge_error(RIDGE_EFORMAT, "roofline profile: \"cpu\" missing or too long");
    strcpy(r->cpu, cpu->str);
    if ((st = get_num(root, "threads", 1, 1024, 0, &v))) return st;
    r->threads = (int)v;
    const double maxsize = 1e12;
    if ((st = get_num(root, "l1d", 1, maxsize, 0, &v))) return st;
    r->l1d = (size_t)v;
    if ((st = get_num(root, "l2", 1, maxsize, 0, &v))) return st;
    r->l2 = (size_t)v;
    if ((st = get_num(root, "l3_usable", 0, maxsize, 0, &v))) return st;
    r->l3_usable = (size_t)v;
    if ((st = get_num(root, "seconds", 0, 1e6, 0, &r->seconds))) return st;
    const ridge_json *quick = ridge_json_get(root, "quick");
    if (!quick || quick->type != RIDGE_JSON_BOOL)
        return ridge_error(RIDGE_EFORMAT, "roofline profile: \"quick\" missing or not a bool");
    r->quick = quick->num != 0;
    const ridge_json *at = ridge_json_get(root, "measured_at");
    if (at && at->type == RIDGE_JSON_STRING)
        snprintf(r->measured_at, sizeof r->measured_at, "%s", at->str);

    const ridge_json *pts = ridge_json_get(root, "points");
    if (!pts || pts->type != RIDGE_JSON_ARRAY)
        return ridge_error(RIDGE_EFORMAT, "roofline profile: \"points\" missing");
    for (const ridge_json *e = pts->child; e; e = e->next) {
        if (r->npoints == RIDGE_ROOFLINE_MAX_POINTS)
            return ridge_error(RIDGE_EFORMAT, "roofline profile: more than %d points",
                               RIDGE_ROOFLINE_MAX_POINTS);
        ridge_roofline_point *p = &r->points[r->npoints];
        if ((st = parse_point(e, p))) return st;
        if (r->npoints && p->threads <= p[-1].threads)
            return ridge_error(RIDGE_EFORMAT, "roofline profile: points not in increasing "
                                              "thread count");
        r->npoints++;
    }
    if (r->npoints == 0 || r->points[r->npoints - 1].threads != r->threads)
        return ridge_error(RIDGE_EFORMAT, "roofline profile: no point for %d threads", r->threads);
    return RIDGE_OK;
}

ridge_status ridge_roofline_from_json(const char *text, ridge_roofline *out)
{
    if (!text || !out) return ridge_error(RIDGE_EINVAL, "roofline_from_json: NULL argument");
    ridge_json *root;
    ridge_status st = ridge_json_parse(text, &root);
    if (st) return st;
    ridge_roofline r;
    st = parse_profile(root, &r);
    ridge_json_free(root);
    if (!st) *out = r;
    return st;
}

/* ---- files and the cache -------------------------------------------------------------------- */

ridge_status ridge_roofline_load(const char *path, ridge_roofline *out)
{
    if (!path || !out) return ridge_error(RIDGE_EINVAL, "roofline_load: NULL argument");
    char *text;
    ridge_status st = ridge_read_file(path, (size_t)1 << 20, &text);
    if (st) return st;
    st = ridge_roofline_from_json(text, out);
    free(text);
    if (st) return ridge_error(st, "%s: %s", path, ridge_last_error());
    return RIDGE_OK;
}

ridge_status ridge_roofline_save(const ridge_roofline *roof, const char *path)
{
    if (!roof || !path) return ridge_error(RIDGE_EINVAL, "roofline_save: NULL argument");
    size_t n = ridge_roofline_to_json(roof, NULL, 0);
    char *text = malloc(n + 1);
    if (!text) return ridge_error(RIDGE_ENOMEM, "roofline_save: out of memory");
    ridge_roofline_to_json(roof, text, n + 1);
    ridge_status st;
    if (ridge_mkdir_parents(path))
        st = ridge_error(RIDGE_EIO, "%s: cannot create the directory: %s", path, strerror(errno));
    else
        st = ridge_file_write_atomic(path, "roofline_save", &(ridge_file_part){text, n}, 1);
    free(text);
    return st;
}

ridge_status ridge_roofline_cache_path(const char *brand, int threads, char *buf, size_t size)
{
    if (!brand || !buf) return ridge_error(RIDGE_EINVAL, "roofline_cache_path: NULL argument");
    char suffix[32];
    snprintf(suffix, sizeof suffix, "-%dt.json", threads);
    return ridge_cache_file_path("roofline", brand, suffix, buf, size);
}

ridge_status ridge_roofline_for_ctx(ridge_ctx *ctx, int flags, ridge_roofline *out)
{
    if (!ctx || !out) return ridge_error(RIDGE_EINVAL, "roofline_for_ctx: NULL argument");
    const ridge_cpu *cpu = ridge_ctx_cpu(ctx);
    int threads = ridge_ctx_threads(ctx);
    char path[4096];
    int have_path = ridge_roofline_cache_path(cpu->brand, threads, path, sizeof path) == RIDGE_OK;
    if (have_path && !(flags & RIDGE_ROOFLINE_REFRESH)) {
        ridge_roofline r;
        /* a profile measured with other cache sizes (an older ridge that misread them) sized
         * its probes and levels wrongly: measured again */
        if (ridge_roofline_load(path, &r) == RIDGE_OK && strcmp(r.cpu, cpu->brand) == 0 &&
            r.threads == threads && (!r.quick || (flags & RIDGE_ROOFLINE_QUICK)) &&
            r.l1d == cpu->l1d && r.l2 == cpu->l2 && r.l3_usable == cpu->l3_usable) {
            *out = r;
            return RIDGE_OK;
        }
    }
    ridge_status st = ridge_roofline_measure(ctx, flags, out);
    if (st) return st;
    if (have_path && ridge_roofline_save(out, path) && (flags & RIDGE_ROOFLINE_VERBOSE))
        fprintf(stderr, "roofline: not cached: %s\n", ridge_last_error());
    return RIDGE_OK;
}
