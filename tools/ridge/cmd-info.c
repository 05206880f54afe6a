/* ridge info: what this CPU is, what it can do, and what ridge picks for it. */
#include <string.h>

#include "cli.h"

const char cmd_info_summary[] = "the CPU, its features, and the kernels ridge picks for it";

typedef struct family {
    const char *name;
    const char *(*describe)(const ridge_ctx *);
} family;

static const family families[] = {
#define RIDGE_FAMILY(name, describe) {#name, describe},
#include "families.inc"
#undef RIDGE_FAMILY
    {NULL, NULL},
};

typedef struct feature {
    const char *name;
    int on;
} feature;

static void help(void)
{
    printf("usage: ridge info [options]\n\n"
           "Prints the CPU, the instruction sets it and the OS support, the cache sizes, the\n"
           "ISA ridge chose (override with --isa or RIDGE_ISA) and the kernel chosen for each\n"
           "kernel family.\n\noptions:\n" CLI_COMMON_HELP);
}

static void print_size(FILE *f, const char *name, size_t bytes)
{
    if (bytes >= (1u << 20)) fprintf(f, "  %-10s %zu MiB\n", name, bytes >> 20);
    else fprintf(f, "  %-10s %zu KiB\n", name, bytes >> 10);
}

int cmd_info(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    for (int i = 1; i < argc;) {
        int r = cli_common_parse(&c, argc, argv, &i);
        if (r < 0) return CLI_USAGE;
        if (r == 0) return cli_unknown("info", argv[i]);
    }
    if (c.help) {
        help();
        return CLI_OK;
    }
    ridge_ctx *ctx = cli_make_ctx(&c);
    if (!ctx) return CLI_FAIL;
    const ridge_cpu *cpu = ridge_ctx_cpu(ctx);
    const feature feats[] = {
        {"sse4.2", cpu->sse42},        {"avx", cpu->avx},
        {"avx2", cpu->avx2},           {"fma", cpu->fma},
        {"f16c", cpu->f16c},           {"avx512f", cpu->avx512f},
        {"avx512bw", cpu->avx512bw},   {"avx512vl", cpu->avx512vl},
        {"avx512dq", cpu->avx512dq},   {"avx512cd", cpu->avx512cd},
        {"avx512_vnni", cpu->avx512_vnni}, {"avx512_bf16", cpu->avx512_bf16},
        {"avx512_fp16", cpu->avx512_fp16}, {"avx_vnni", cpu->avx_vnni},
        {"amx", cpu->amx},             {"os_ymm", cpu->os_ymm},
        {"os_zmm", cpu->os_zmm},
    };
    size_t nfeat = sizeof feats / sizeof feats[0];
    if (c.json) {
        printf("{\n  \"version\": \"%s\",\n  \"cpu\": {\"vendor\": \"%s\", \"brand\": \"%s\", "
               "\"family\": %d, \"model\": %d, \"stepping\": %d, \"logical_cpus\": %d},\n",
               RIDGE_VERSION_STRING, cpu->vendor, cpu->brand, cpu->family, cpu->model,
               cpu->stepping, cpu->logical_cpus);
        printf("  \"features\": {");
        for (size_t i = 0; i < nfeat; i++)
            printf("%s\"%s\": %s", i ? ", " : "", feats[i].name, feats[i].on ? "true" : "false");
        printf("},\n  \"caches\": {\"l1d\": %zu, \"l2\": %zu, \"l3\": %zu, \"l3_usable\": %zu, "
               "\"line\": %zu},\n",
               cpu->l1d, cpu->l2, cpu->l3, cpu->l3_usable, cpu->line);
        printf("  \"best_isa\": \"%s\",\n  \"isa\": \"%s\",\n  \"threads\": %d,\n"
               "  \"spin_us\": %d,\n  \"kernels\": {",
               ridge_isa_name(ridge_cpu_best_isa(cpu)), ridge_isa_name(ridge_ctx_isa(ctx)),
               ridge_ctx_threads(ctx), ridge_ctx_spin_us(ctx));
        for (int i = 0; families[i].name; i++)
            printf("%s\"%s\": \"%s\"", i ? ", " : "", families[i].name,
                   families[i].describe(ctx));
        printf("}\n}\n");
    } else {
        printf("ridge %s\n\ncpu\n  %-10s %s\n  %-10s %s (family %d, model %d, stepping %d)\n"
               "  %-10s %d\n",
               RIDGE_VERSION_STRING, "brand", cpu->brand, "vendor", cpu->vendor, cpu->family,
               cpu->model, cpu->stepping, "cpus", cpu->logical_cpus);
        printf("\nfeatures (CPU has it and the OS saves its registers)\n ");
        for (size_t i = 0; i < nfeat; i++)
            if (feats[i].on) printf(" %s", feats[i].name);
        printf("\n  missing:");
        for (size_t i = 0; i < nfeat; i++)
            if (!feats[i].on) printf(" %s", feats[i].name);
        printf("\n\ncaches\n");
        print_size(stdout, "l1d", cpu->l1d);
        print_size(stdout, "l2", cpu->l2);
        print_size(stdout, "l3", cpu->l3);
        print_size(stdout, "l3 usable", cpu->l3_usable);
        printf("  %-10s %zu B\n", "line", cpu->line);
        printf("\nruntime\n  %-10s %s (best for this CPU: %s)\n  %-10s %d\n  %-10s %d us\n",
               "isa", ridge_isa_name(ridge_ctx_isa(ctx)),
               ridge_isa_name(ridge_cpu_best_isa(cpu)), "threads", ridge_ctx_threads(ctx),
               "spin", ridge_ctx_spin_us(ctx));
        printf("\nkernels\n");
        if (!families[0].name) printf("  (no kernel families in this build)\n");
        for (int i = 0; families[i].name; i++)
            printf("  %-10s %s\n", families[i].name, families[i].describe(ctx));
    }
    ridge_ctx_destroy(ctx);
    return CLI_OK;
}
