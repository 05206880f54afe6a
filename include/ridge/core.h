/* ridge/core.h: status codes, CPU detection, the context, the thread pool, memory, time.
 *
 * Everything in ridge takes a ridge_ctx. A context owns a persistent thread pool, the ISA
 * chosen for this CPU, and a scratch arena. Create one per thread that calls into ridge (a
 * context is not safe to use from two threads at once; two contexts are independent).
 */
#ifndef RIDGE_CORE_H
#define RIDGE_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status ------------------------------------------------------------------------------ */

typedef enum ridge_status {
    RIDGE_OK = 0,
    RIDGE_EINVAL = 1,      /* an argument is out of range, NULL, or inconsistent */
    RIDGE_ENOMEM = 2,      /* an allocation failed */
    RIDGE_EIO = 3,         /* a file could not be opened, read or written */
    RIDGE_EFORMAT = 4,     /* a file is not in the expected format */
    RIDGE_EUNSUPPORTED = 5, /* valid request this build or CPU cannot do */
    RIDGE_EOVERFLOW = 6,   /* a result or a size does not fit its type */
    RIDGE_EINTERNAL = 7,   /* a bug in ridge: please report it */
} ridge_status;

/* A short constant name for a status ("invalid argument"); never NULL. */
const char *ridge_status_str(ridge_status s);

/* The detail of the last failure on the calling thread ("sgemm: lda (3) < k (4)"), or "" if
 * none. The string belongs to ridge and stays valid until the thread's next failing call. */
const char *ridge_last_error(void);

/* ---- CPU --------------------------------------------------------------------------------- */

typedef enum ridge_isa {
    RIDGE_ISA_AUTO = -1,  /* pick the best the CPU and OS support (or $RIDGE_ISA) */
    RIDGE_ISA_REF = 0,    /* portable C, the reference kernels */
    RIDGE_ISA_AVX2 = 1,   /* AVX2 + FMA (256-bit) */
    RIDGE_ISA_AVX512 = 2, /* AVX-512 F/BW/VL/DQ (512-bit) */
} ridge_isa;

/* "ref", "avx2", "avx512" (or "auto"). */
const char *ridge_isa_name(ridge_isa isa);
/* Parses a name as above; RIDGE_EINVAL with a message if unknown. */
ridge_status ridge_isa_parse(const char *name, ridge_isa *out);

typedef struct ridge_cpu {
    char vendor[13];
    char brand[49];
    int family, model, stepping;
    int logical_cpus;     /* online CPUs the OS reports */
    /* instruction sets, each only if the CPU has it AND the OS saves the register state */
    unsigned sse42 : 1, avx : 1, avx2 : 1, fma : 1, f16c : 1;
    unsigned avx512f : 1, avx512bw : 1, avx512vl : 1, avx512dq : 1, avx512cd : 1;
    unsigned avx512_vnni : 1, avx512_bf16 : 1, avx512_fp16 : 1, avx_vnni : 1, amx : 1;
    unsigned os_ymm : 1, os_zmm : 1;  /* XGETBV: the OS enabled YMM / ZMM state */
    /* data cache sizes in bytes (0 if unknown). l3 is what CPUID says; l3_usable is the part
     * one core can count on (capped, because a VM or a chiplet CPU reports the whole socket). */
    size_t l1d, l2, l3, l3_usable;
    size_t line;          /* cache line bytes */
} ridge_cpu;

/* Detects once (thread-safe) and returns the same pointer on every call. */
const ridge_cpu *ridge_cpu_get(void);

/* The best ISA this CPU supports. */
ridge_isa ridge_cpu_best_isa(const ridge_cpu *cpu);
/* Whether the CPU supports `isa`. */
int ridge_cpu_supports(const ridge_cpu *cpu, ridge_isa isa);

/* ---- the context ------------------------------------------------------------------------- */

typedef struct ridge_ctx ridge_ctx;  /* opaque */

typedef struct ridge_ctx_options {
    int threads;     /* total threads including the caller; 0: $RIDGE_NUM_THREADS, else all CPUs */
    ridge_isa isa;   /* RIDGE_ISA_AUTO: $RIDGE_ISA, else the best supported */
    int spin_us;     /* how long idle workers spin before sleeping; -1: $RIDGE_SPIN_US, else 50
                      * (the caller waiting for a job's end spins this or a quarter of its own
                      * share's time, whichever is longer; 0: nobody spins) */
    int verbose;     /* 1: print what was chosen to stderr; -1: $RIDGE_VERBOSE */
    int conv_tune;   /* what convolution plans made without options do (the conv layers of
                      * ridge's models): 0: the cost model picks; 1: time the candidates once
                      * per shape and reuse the saved result (ridge_conv2d_plan_options.tune);
                      * -1: $RIDGE_CONV_TUNE, else 0 */
} ridge_ctx_options;

/* Fills the defaults listed above (all "from the environment, else automatic"). */
void ridge_ctx_options_init(ridge_ctx_options *opts);

/* Creates a context. opts may be NULL (defaults). Fails with RIDGE_EUNSUPPORTED if the ISA
 * asked for is not supported by this CPU, RIDGE_EINVAL for a bad option or environment value.
 * On failure *out is NULL. Free with ridge_ctx_destroy. */
ridge_status ridge_ctx_create(const ridge_ctx_options *opts, ridge_ctx **out);
void ridge_ctx_destroy(ridge_ctx *ctx); /* NULL is a no-op; joins the pool's workers */

int ridge_ctx_threads(const ridge_ctx *ctx);
ridge_isa ridge_ctx_isa(const ridge_ctx *ctx);
int ridge_ctx_spin_us(const ridge_ctx *ctx);
const ridge_cpu *ridge_ctx_cpu(const ridge_ctx *ctx);

/* Scratch memory from the context's arena: a 64-byte aligned block of at least `bytes`,
 * valid until the next call of ridge_ctx_scratch on this context. Contents are undefined.
 * Internal callers use it for packing buffers; it grows and is never shrunk. */
ridge_status ridge_ctx_scratch(ridge_ctx *ctx, size_t bytes, void **out);

/* ---- the thread pool --------------------------------------------------------------------- */

/* A task body: called once on each of nth threads with ith in [0, nth). */
typedef void (*ridge_task_fn)(void *arg, int ith, int nth);

/* Runs fn(arg, ith, nth) for ith in 0..nth-1 on the context's pool, the calling thread taking
 * ith = 0, and returns when all have finished (fork-join). nth is clamped to [1, threads].
 * Nested or concurrent calls on a busy pool run every ith serially on the calling thread, in
 * order, so they never deadlock. */
void ridge_parallel_run(ridge_ctx *ctx, int nth, ridge_task_fn fn, void *arg);

/* A 1D range body: [begin, end) is this thread's contiguous block. */
typedef void (*ridge_range_fn)(void *arg, size_t begin, size_t end, int ith);

/* Splits [0, n) into at most `threads` contiguous blocks whose boundaries are multiples of
 * `grain` (grain 0 counts as 1), the same split for the same n and thread count, and runs
 * fn on each non-empty block. Blocks never hold fewer than `grain` items except the last. */
void ridge_parallel_for(ridge_ctx *ctx, size_t n, size_t grain, ridge_range_fn fn, void *arg);

/* A 2D range body: rows [b0, e0) x columns [b1, e1). */
typedef void (*ridge_range2d_fn)(void *arg, size_t b0, size_t e0, size_t b1, size_t e1, int ith);

/* Splits the n0 x n1 range into a grid of p0 x p1 <= threads blocks (chosen to keep blocks
 * close to square in units of grain0 x grain1), each contiguous and grain-aligned. */
void ridge_parallel_for_2d(ridge_ctx *ctx, size_t n0, size_t n1, size_t grain0, size_t grain1,
                           ridge_range2d_fn fn, void *arg);

/* The same range, but where the grid would have one column block (rows enough for every
 * thread), rows are handed out from a shared counter in grain0-aligned chunks, each 1/(2
 * threads) of the rows left: a thread that starts late or runs slowly (a vCPU just woken, a
 * core shared with another process) takes fewer of them instead of holding up the call.
 * Which thread runs a chunk varies from call to call; fn's result must not depend on it. */
void ridge_parallel_for_2d_dynamic(ridge_ctx *ctx, size_t n0, size_t n1, size_t grain0,
                                   size_t grain1, ridge_range2d_fn fn, void *arg);

/* The block [*begin, *end) that thread ith of nth gets when [0, n) is split in grain-aligned
 * contiguous blocks. Exposed so kernels that call ridge_parallel_run split the same way. */
void ridge_partition(size_t n, size_t grain, int ith, int nth, size_t *begin, size_t *end);

/* ---- profiling ---------------------------------------------------------------------------- */

/* One timed operation. Kernel entry points (sgemm, conv2d, the vec ops, ...) record one each
 * while profiling is on; the pool records, per parallel call, each thread's task span
 * ("pool.task", thread = ith) and the time the caller waited for the slowest thread after
 * finishing its own share ("pool.wait": imbalance plus synchronization). */
typedef struct ridge_prof_record {
    const char *op;       /* static name: "sgemm", "conv2d", "pool.wait", ... */
    const char *algo;     /* static name of the kernel or algorithm chosen, or "" */
    char shape[48];       /* e.g. "256x768x768 NT" */
    double flops;         /* analytic FLOP count (direct-algorithm count), 0 if none */
    double bytes;         /* compulsory bytes moved (inputs read once, outputs written once) */
    double working_set;   /* bytes the operation touches: which memory level it lives in */
    uint64_t start_ns, end_ns;
    int thread;           /* 0 = the calling thread */
    int depth;            /* 0 = called by the application; 1 = inside another recorded op
                           * (an sgemm inside a dense layer), and so on */
} ridge_prof_record;

/* Starts recording into a buffer of `max_records` (older records are kept; records past the
 * capacity are counted as dropped). Clears previous records. With profiling off, the cost on
 * every kernel call is one predictable branch. */
ridge_status ridge_profile_start(ridge_ctx *ctx, size_t max_records);
/* Stops recording; the records stay readable until the next start or the context's end. */
void ridge_profile_stop(ridge_ctx *ctx);
/* Records again after a stop, keeping what was recorded (e.g. only the training steps, not
 * the validation between them). RIDGE_EINVAL if profiling was never started. */
ridge_status ridge_profile_resume(ridge_ctx *ctx);
/* The records so far (pointer valid until the next start/destroy); returns their count. */
size_t ridge_profile_records(const ridge_ctx *ctx, const ridge_prof_record **out);
/* How many records did not fit. */
size_t ridge_profile_dropped(const ridge_ctx *ctx);

/* ---- memory and time --------------------------------------------------------------------- */

/* 64-byte aligned allocation; NULL on failure or if bytes is 0. Free with ridge_free. */
void *ridge_malloc(size_t bytes);
void *ridge_calloc(size_t count, size_t size); /* zeroed; NULL on overflow */
void ridge_free(void *p);                      /* NULL is a no-op */

/* Multiplies sizes, returning RIDGE_EOVERFLOW (with a message naming `what`) on overflow. */
ridge_status ridge_size_mul(size_t a, size_t b, const char *what, size_t *out);

/* Monotonic clock in nanoseconds. */
uint64_t ridge_time_ns(void);

#ifdef __cplusplus
}
#endif
#endif /* RIDGE_CORE_H */
