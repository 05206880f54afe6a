/* The profile report: aggregate the context's records by operator, judge each against the
 * measured roofline, and write a Chrome trace.
 *
 * Only top-level records (depth 0) are summed, so an sgemm inside a dense layer counts once,
 * as the layer. Pool records ("pool.task", "pool.wait") happen inside operators; they are
 * summed on their own as the synchronization and imbalance share, never added to the step. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "perf/json.h"
#include "ridge/profile.h"

const char *ridge_profile_wall_name(ridge_profile_wall w)
{
    switch (w) {
    case RIDGE_PROFILE_COMPUTE: return "compute";
    case RIDGE_PROFILE_MEMORY: return "memory";
    case RIDGE_PROFILE_NEITHER: return "neither";
    }
    return "?";
}

typedef struct agg {
    ridge_profile_row row;
    double max_ws;
} agg;

/* The pool's own records (not pooling layers, which are "pool2d.*"). */
static int is_pool(const char *op)
{
    return !strcmp(op, "pool.task") || !strcmp(op, "pool.wait");
}

static agg *find_or_add(agg *a, size_t *n, const ridge_prof_record *r, int per_layer)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp(a[i].row.op, r->op) && (!per_layer || !strcmp(a[i].row.shape, r->shape)))
            return &a[i];
    agg *g = &a[(*n)++];
    memset(g, 0, sizeof *g);
    snprintf(g->row.op, sizeof g->row.op, "%s", r->op);
    if (per_layer) snprintf(g->row.shape, sizeof g->row.shape, "%s", r->shape);
    snprintf(g->row.algo, sizeof g->row.algo, "%s", r->algo);
    return g;
}

/* Judges one aggregated row; without a roof only the rates are filled. */
static void judge(ridge_profile_row *row, double max_ws, const ridge_roofline *roof,
                  int threads, ridge_isa isa)
{
    double s = row->seconds;
    row->gflops = s > 0 ? row->flops / s * 1e-9 : 0;
    row->gbs = s > 0 ? row->bytes / s * 1e-9 : 0;
    row->intensity = row->bytes > 0 ? row->flops / row->bytes : 0;
    row->level = "-";
    row->wall = RIDGE_PROFILE_NEITHER;
    if (!roof || s <= 0 || (row->flops <= 0 && row->bytes <= 0)) return;
    ridge_roofline_verdict v;
    /* Judge the per-call average working set level with the aggregate counts: the bound
     * depends on intensity and level only, not on how the work was split into calls. */
    if (ridge_roofline_judge(roof, threads, ridge_roofline_peak_f32(isa), row->flops,
                             row->bytes, max_ws, s, &v))
        return;
    row->level = ridge_roofline_level_name(v.level);
    row->bound_gflops = v.bound_gflops;
    /* A pure data-movement op (no FLOPs) is judged by bandwidth alone. */
    double achieved = row->flops > 0 ? v.fraction : row->gbs / v.bw_gbs;
    row->fraction = achieved;
    if (achieved < RIDGE_PROFILE_NEITHER_BELOW) row->wall = RIDGE_PROFILE_NEITHER;
    else row->wall = v.wall == RIDGE_WALL_COMPUTE ? RIDGE_PROFILE_COMPUTE : RIDGE_PROFILE_MEMORY;
    /* the time at RIDGE_PROFILE_TARGET of the bound: whichever wall is higher */
    double t_compute = row->flops > 0 ? row->flops / (RIDGE_PROFILE_TARGET * v.peak_gflops * 1e9) : 0;
    double t_memory = row->bytes / (RIDGE_PROFILE_TARGET * v.bw_gbs * 1e9);
    double t_target = t_compute > t_memory ? t_compute : t_memory;
    row->saved_seconds = s > t_target ? s - t_target : 0;
}

static int by_saving(const void *pa, const void *pb)
{
    const agg *a = pa, *b = pb;
    if (a->row.saved_seconds != b->row.saved_seconds)
        return a->row.saved_seconds < b->row.saved_seconds ? 1 : -1;
    return (a->row.seconds < b->row.seconds) - (a->row.seconds > b->row.seconds);
}

ridge_status ridge_profile_summarize(const ridge_ctx *ctx, const ridge_roofline *roof,
                                     double wall_seconds, int steps, int per_layer,
                                     ridge_profile_summary *out)
{
    memset(out, 0, sizeof *out);
    if (steps < 1 || !(wall_seconds > 0))
        return ridge_error(RIDGE_EINVAL, "profile: steps = %d, wall = %g s: expected >= 1 and > 0",
                           steps, wall_seconds);
    const ridge_prof_record *r;
    size_t n = ridge_profile_records(ctx, &r);
    agg *a = calloc(n + 1, sizeof *a); /* at most one row per record, plus "other" */
    if (!a) return ridge_error(RIDGE_ENOMEM, "profile: out of memory");
    size_t na = 0;
    double covered = 0, wait = 0, task = 0;
    for (size_t i = 0; i < n; i++) {
        double s = (double)(r[i].end_ns - r[i].start_ns) * 1e-9;
        if (is_pool(r[i].op)) {
            if (!strcmp(r[i].op, "pool.wait")) wait += s;
            else task += s;
            continue;
        }
        if (r[i].depth != 0) continue;
        agg *g = find_or_add(a, &na, &r[i], per_layer);
        g->row.calls++;
        g->row.seconds += s;
        g->row.flops += r[i].flops;
        g->row.bytes += r[i].bytes;
        if (r[i].working_set > g->max_ws) g->max_ws = r[i].working_set;
        covered += s;
    }
    int threads = ridge_ctx_threads(ctx);
    for (size_t i = 0; i < na; i++) {
        judge(&a[i].row, a[i].max_ws, roof, threads, ridge_ctx_isa(ctx));
        a[i].row.share = a[i].row.seconds / wall_seconds;
    }
    qsort(a, na, sizeof *a, by_saving);
    agg *o = &a[na++];
    memset(o, 0, sizeof *o);
    snprintf(o->row.op, sizeof o->row.op, "other");
    o->row.seconds = wall_seconds > covered ? wall_seconds - covered : 0;
    o->row.share = o->row.seconds / wall_seconds;
    o->row.level = "-";
    o->row.wall = RIDGE_PROFILE_NEITHER;

    out->rows = malloc(na * sizeof *out->rows);
    if (!out->rows) {
        free(a);
        return ridge_error(RIDGE_ENOMEM, "profile: out of memory");
    }
    for (size_t i = 0; i < na; i++) out->rows[i] = a[i].row;
    out->other_seconds = o->row.seconds;
    free(a);
    out->nrows = na;
    out->steps = steps;
    out->wall_seconds = wall_seconds;
    out->step_seconds = wall_seconds / steps;
    out->covered_seconds = covered;
    out->pool_wait_seconds = wait;
    out->pool_task_seconds = task;
    out->threads = threads;
    out->dropped = ridge_profile_dropped(ctx);
    return RIDGE_OK;
}

void ridge_profile_summary_free(ridge_profile_summary *s)
{
    if (!s) return;
    free(s->rows);
    s->rows = NULL;
    s->nrows = 0;
}

ridge_status ridge_profile_write_trace(const ridge_ctx *ctx, FILE *f)
{
    const ridge_prof_record *r;
    size_t n = ridge_profile_records(ctx, &r);
    uint64_t t0 = n ? r[0].start_ns : 0;
    for (size_t i = 0; i < n; i++)
        if (r[i].start_ns < t0) t0 = r[i].start_ns;
    fprintf(f, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n");
    fprintf(f, "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 0, "
               "\"args\": {\"name\": \"ridge\"}}");
    for (int t = 0; t < ridge_ctx_threads(ctx); t++)
        fprintf(f, ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": %d, "
                   "\"args\": {\"name\": \"%s %d\"}}",
                t, t == 0 ? "caller" : "worker", t);
    for (size_t i = 0; i < n; i++) {
        double ts = (double)(r[i].start_ns - t0) * 1e-3;
        double dur = (double)(r[i].end_ns - r[i].start_ns) * 1e-3;
        fprintf(f, ",\n{\"name\": ");
        ridge_json_write_string(f, r[i].op);
        fprintf(f, ", \"cat\": \"%s\", \"ph\": \"X\", \"pid\": 1, \"tid\": %d, \"ts\": %.3f, "
                   "\"dur\": %.3f, \"args\": {\"shape\": ",
                is_pool(r[i].op) ? "pool" : "op", r[i].thread, ts, dur);
        ridge_json_write_string(f, r[i].shape);
        fprintf(f, ", \"algo\": ");
        ridge_json_write_string(f, r[i].algo);
        fprintf(f, ", \"flops\": %.0f, \"bytes\": %.0f, \"depth\": %d}}", r[i].flops, r[i].bytes,
                r[i].depth);
    }
    fprintf(f, "\n]}\n");
    if (ferror(f)) return ridge_error(RIDGE_EIO, "profile trace: write failed");
    return RIDGE_OK;
}
