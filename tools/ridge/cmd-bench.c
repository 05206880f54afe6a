/* ridge bench <name>: runs one benchmark from bench/ (bench/bench-<name>.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

const char cmd_bench_summary[] = "benchmark a kernel family against the roof and against peers";

#ifdef RIDGE_HAVE_BENCH
#include "bench.h"

typedef struct bench_entry {
    const char *name, *summary;
    ridge_bench_fn run;
} bench_entry;

static const bench_entry benches[] = {
#define RIDGE_BENCH(name) {#name, ridge_bench_##name##_summary, ridge_bench_##name},
#include "benches.inc"
#undef RIDGE_BENCH
};
#define NBENCH (sizeof benches / sizeof benches[0])

static void help(void)
{
    printf("usage: ridge bench <name> [options] [bench options]\n\n"
           "Checks each kernel against its reference, then times it (warm-up, repeats, median)\n"
           "and reports the result against the machine's measured roof and, with --peers,\n"
           "against peer libraries timed in the same run.\n\nbenchmarks:\n");
    for (size_t i = 0; i < NBENCH; i++) printf("  %-10s %s\n", benches[i].name, benches[i].summary);
    printf("  all        every benchmark above, one after the other\n\noptions:\n" CLI_COMMON_HELP
           "  --quick            fewer repeats and sizes (a smoke run)\n"
           "  --peers            also time the peer libraries this build links (their idle\n"
           "                     threads then spin briefly after a call, as ridge's do, not\n"
           "                     for milliseconds; set RIDGE_BENCH_PEER_SPIN to keep the\n"
           "                     libraries' own defaults)\n"
           "  --filter TEXT      only cases whose name contains TEXT\n");
}

/* With --peers, every library's idle worker threads should spin briefly, as ridge's pool
 * does (50 us), before sleeping. By default OpenBLAS's spin for ~0.1 s after a call and
 * libgomp's (BLIS, oneDNN) for ~9 ms; with as many threads as cores, the next library timed
 * then shared a core with them, and ridge's 2-thread medians fell to its 1-thread rate (the
 * peers' own to 60-80% of theirs; docs/PERFORMANCE.md, `## gemm`). Both libraries read their
 * setting once when loaded, libgomp at process start (this binary links it for `bench pool`),
 * so the process re-executes itself once with OPENBLAS_THREAD_TIMEOUT=17 (2^17 cycles, ~40
 * us) and GOMP_SPINCOUNT=20000, unless the caller set them. 2000 was enough on Zen 3; on the
 * Zen 4 VM oneDNN's team then slept between back-to-back calls and paid ~0.1 ms to wake on
 * each (2-thread fmnist-conv1: 113 us median against 5 us best; 7 us with 20000, which still
 * ends well inside the benches' 1-3 ms quiesce). Returns only if it did not re-execute. */
static void peers_short_spin(int argc, char **argv)
{
    char *args[80];
    if (getenv("RIDGE_BENCH_PEER_SPIN") || argc > 78) return; /* done, asked not to, or odd */
    setenv("RIDGE_BENCH_PEER_SPIN", "1", 1);
    setenv("OPENBLAS_THREAD_TIMEOUT", "17", 0);
    setenv("GOMP_SPINCOUNT", "20000", 0);
    args[0] = "ridge";
    for (int i = 0; i < argc; i++) args[i + 1] = argv[i];
    args[argc + 1] = NULL;
    fflush(NULL);
    execv("/proc/self/exe", args);
    fprintf(stderr, "ridge bench: could not re-execute with the peers' short spin (%s); their "
                    "idle threads may slow the next library timed\n", strerror(errno));
}

int cmd_bench(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    ridge_bench_opts o = {0};
    o.out = stdout;
    const char *name = NULL;
    char *rest[64];
    int nrest = 0;
    for (int i = 1; i < argc;) {
        if (name && strcmp(name, "all") && (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))) {
            if (nrest < 63) rest[nrest++] = argv[i]; /* after a bench's name: its own help */
            i++;
            continue;
        }
        int r = cli_common_parse(&c, argc, argv, &i);
        if (r < 0) return CLI_USAGE;
        if (r > 0) continue;
        const char *a = argv[i];
        if (!strcmp(a, "--quick")) o.quick = 1;
        else if (!strcmp(a, "--peers")) o.peers = 1;
        else if (!strcmp(a, "--filter") && i + 1 < argc) o.filter = argv[++i];
        else if (a[0] != '-' && !name) name = a;
        else if (nrest < 63) rest[nrest++] = argv[i]; /* the bench's own options */
        i++;
    }
    if (c.help || !name) {
        help();
        return c.help ? CLI_OK : CLI_USAGE;
    }
    if (o.peers) peers_short_spin(argc, argv);
    o.threads = c.threads;
    o.isa = c.isa;
    o.json = c.json;
    rest[nrest] = NULL;
    int all = !strcmp(name, "all"), found = 0, rc = 0;
    for (size_t i = 0; i < NBENCH; i++) {
        if (!all && strcmp(name, benches[i].name)) continue;
        found = 1;
        int r = benches[i].run(&o, nrest, rest);
        if (r) rc = r == BENCH_USAGE ? CLI_USAGE : CLI_FAIL;
    }
    if (!found) {
        fprintf(stderr, "ridge bench: unknown benchmark '%s' (see 'ridge bench --help')\n", name);
        return CLI_USAGE;
    }
    return rc;
}
#else
int cmd_bench(int argc, char **argv)
{
    (void)argc, (void)argv;
    fprintf(stderr, "ridge bench: this ridge was built with RIDGE_BUILD_BENCH=OFF\n");
    return CLI_FAIL;
}
#endif
