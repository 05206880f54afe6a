/* Internal to the library: error reporting, the context's layout, small helpers. */
#ifndef RIDGE_CORE_INTERNAL_H
#define RIDGE_CORE_INTERNAL_H

#include <assert.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ridge/core.h"

/* Records a message for ridge_last_error() and returns `s`, so a check reads
 *   if (lda < k) return ridge_error(RIDGE_EINVAL, "sgemm: lda (%zu) < k (%zu)", lda, k); */
ridge_status ridge_error(ridge_status s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Kernels below the public entry points assert their preconditions (checked at the door). */
#define RIDGE_ASSERT(x) assert(x)

#define RIDGE_MIN(a, b) ((a) < (b) ? (a) : (b))
#define RIDGE_MAX(a, b) ((a) > (b) ? (a) : (b))
#define RIDGE_ALIGN 64
/* A function the optimizer must not clone or specialize (gcc's noipa; clang has no such
 * attribute, and noinline is the nearest). */
#if defined(__clang__)
#define RIDGE_NOIPA __attribute__((noinline))
#else
#define RIDGE_NOIPA __attribute__((noipa))
#endif

/* cpu.c: fills the cache sizes still zero in C from AMD's legacy leaves (0x80000005's ECX,
 * 0x80000006's ECX and EDX); a fallback for VMs that leave leaf 0x8000001D empty. */
void ridge_cpu_legacy_amd_caches(ridge_cpu *c, unsigned ecx5, unsigned ecx6, unsigned edx6);

/* cpu.c: whether a CPUID vendor string is Intel's (rules measured on Intel cores only), and
 * the part of an L3 of l3 bytes one core may plan for, by vendor */
int ridge_cpu_vendor_is_intel(const char *vendor);
size_t ridge_cpu_l3_usable(const char *vendor, size_t l3);

/* file.c: atomic file writes. The data goes to PATH.tmp.PID; commit flushes and fsyncs it,
 * renames it over PATH and fsyncs the directory (best effort: ignored where unsupported). Any
 * failure removes the temporary file and leaves PATH as it was. Open first removes stale
 * PATH.tmp.PID files whose process no longer exists (a writer killed mid-write).
 * Streaming:
 *   ridge_file_atomic a;
 *   if ((st = ridge_file_atomic_open(&a, path, "who"))) return st;
 *   ridge_file_atomic_write(&a, p, n); ...    (errors are sticky: checked by commit)
 *   return ridge_file_atomic_commit(&a);      (or ridge_file_atomic_abort(&a) to give up)
 * a.f may also be written directly (fwrite, or through fileno(a.f) before any buffered write);
 * set a.err to an errno value to make commit fail. open: RIDGE_EINVAL for a NULL or too long
 * path (the message starts with `who`), RIDGE_EIO when PATH.tmp.PID cannot be created;
 * commit: RIDGE_EIO "PATH: cannot write: <reason>". */
typedef struct ridge_file_atomic {
    FILE *f;          /* the temporary file */
    const char *path; /* the caller's: must stay valid until commit/abort */
    int err;          /* the first write error (an errno value), 0 if none */
    char tmp[4096];   /* PATH.tmp.PID */
} ridge_file_atomic;
ridge_status ridge_file_atomic_open(ridge_file_atomic *a, const char *path, const char *who);
/* Returns 1 while no write has failed. */
int ridge_file_atomic_write(ridge_file_atomic *a, const void *data, size_t bytes);
ridge_status ridge_file_atomic_commit(ridge_file_atomic *a);
void ridge_file_atomic_abort(ridge_file_atomic *a);

/* The whole file at once: the parts, in order, through the functions above. */
typedef struct ridge_file_part {
    const void *data;
    size_t bytes;
} ridge_file_part;
ridge_status ridge_file_write_atomic(const char *path, const char *who,
                                     const ridge_file_part *parts, size_t nparts);

/* mkdir -p for the directory part of path: 0, or -1 with errno set. */
int ridge_mkdir_parents(const char *path);

/* A per-machine cache file: $XDG_CACHE_HOME/ridge/<stem>-<brand><suffix>, else
 * ~/.cache/ridge/...; brand reduced to [A-Za-z0-9._-] (each run of other characters one '_').
 * RIDGE_EINVAL if neither variable is set or buf is too small. */
ridge_status ridge_cache_file_path(const char *stem, const char *brand, const char *suffix,
                                   char *buf, size_t size);

typedef struct ridge_pool ridge_pool;
typedef struct ridge_profile ridge_profile;

/* pool.c */
ridge_status ridge_pool_create(int threads, int spin_us, ridge_pool **out);
void ridge_pool_destroy(ridge_pool *pool);
void ridge_pool_run(ridge_pool *pool, int nth, ridge_task_fn fn, void *arg);
/* While `prof` is non-NULL the pool records task spans and caller waits into it. */
void ridge_pool_set_profile(ridge_pool *pool, ridge_profile *prof);
/* The CPU the context's worker last woke on and the CPU move_off_caller moved it to, each -1
 * if none since the last call, which resets both. In the library for test-pool only. */
void ridge_pool_last_move_for_tests(ridge_ctx *ctx, int *woke_on, int *moved_to);

struct ridge_profile {
    int on;
    int depth;            /* recorded ops open on the calling thread */
    ridge_prof_record *recs;
    size_t cap, n, dropped;
};

/* Appends a record at the current depth (the caller checked prof->on). */
void ridge_profile_add(ridge_profile *prof, const char *op, const char *algo, double flops,
                       double bytes, double working_set, uint64_t start_ns, uint64_t end_ns,
                       int thread, const char *shape_fmt, ...)
    __attribute__((format(printf, 10, 11)));
/* How many pool tasks the calling thread is inside (pool.c). Records are written only outside
 * tasks, by the thread that owns the context, so the buffer never sees two writers. */
extern _Thread_local int ridge_task_depth;

/* Opens a recorded op: depth + 1, returns the start time. */
uint64_t ridge_profile_enter(ridge_profile *prof);

/* Entry points bracket their work with these, after argument checks and on every path out:
 *   uint64_t t0 = RIDGE_PROF_START(ctx);
 *   ... compute ...
 *   RIDGE_PROF_END(ctx, t0, "sgemm", algo, flops, bytes, ws, "%zux%zux%zu", m, n, k);
 * flops: the analytic count (the direct algorithm's, for Winograd and FFT); bytes: compulsory
 * traffic (each input read once, each output written once); ws: the bytes touched, which
 * places the op in a memory level. With profiling off each macro is one predictable branch. */
#define RIDGE_PROF_START(ctx) \
    ((ctx) && (ctx)->prof.on && !ridge_task_depth ? ridge_profile_enter(&(ctx)->prof) : 0)
#define RIDGE_PROF_END(ctx, t0, op, algo, flops, bytes, ws, ...)                              \
    do {                                                                                       \
        if ((t0) != 0 && (ctx)->prof.on) {                                                       \
            (ctx)->prof.depth--;                                                               \
            ridge_profile_add(&(ctx)->prof, op, algo, flops, bytes, ws, t0, ridge_time_ns(), 0, \
                              __VA_ARGS__);                                                    \
        }                                                                                      \
    } while (0)

struct ridge_ctx {
    const ridge_cpu *cpu;
    ridge_isa isa;
    int threads;
    int spin_us;
    int verbose;
    int conv_tune;        /* ridge_ctx_options.conv_tune, resolved: 0 or 1 */
    ridge_pool *pool;
    void *scratch;        /* the arena: one 64-byte aligned block, grown on demand */
    size_t scratch_bytes;
    ridge_profile prof;
};

#endif /* RIDGE_CORE_INTERNAL_H */
