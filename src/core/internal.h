/* Internal to the library: error reporting, the context's layout, small helpers. */
#ifndef RIDGE_CORE_INTERNAL_H
#define RIDGE_CORE_INTERNAL_H

#include <assert.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

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

typedef struct ridge_pool ridge_pool;

/* pool.c */
ridge_status ridge_pool_create(int threads, int spin_us, ridge_pool **out);
void ridge_pool_destroy(ridge_pool *pool);
void ridge_pool_run(ridge_pool *pool, int nth, ridge_task_fn fn, void *arg);

struct ridge_ctx {
    const ridge_cpu *cpu;
    ridge_isa isa;
    int threads;
    int spin_us;
    int verbose;
    ridge_pool *pool;
    void *scratch;        /* the arena: one 64-byte aligned block, grown on demand */
    size_t scratch_bytes;
};

#endif /* RIDGE_CORE_INTERNAL_H */
