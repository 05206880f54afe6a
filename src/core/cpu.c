/* CPU detection: CPUID for what the processor has, XGETBV for what the OS saves on a context
 * switch (an instruction set is usable only when both say yes), and the cache hierarchy from
 * the deterministic cache-parameter leaves (Intel leaf 4, AMD leaf 0x8000001D, same layout),
 * or, where a VM leaves those empty, AMD's older size leaves 0x80000005 and 0x80000006.
 * Runs once; later calls return the cached result. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/internal.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define RIDGE_X86 1
#endif

/* The cap on the last-level cache one core may plan for. A VM on an AMD chiplet CPU reports
 * the whole socket's L3 (hundreds of MiB) although a core reaches only its own chiplet's
 * 32 MiB. An Intel Xeon's L3 is one mesh that every core reaches, but a VM shares it with the
 * host's other tenants: on one that reported 480 MiB, one core read at 29.8 GB/s from 4 to
 * 64 MiB, 28.7 at 96, 24.8 at 128 and 16.9 at 256 (scripts/read-bandwidth.c), and a chain of
 * depthwise layers kept its outputs in cache profitably up to 77 MB (docs/PERFORMANCE.md,
 * session 24). Other vendors get the chiplet cap. */
#define L3_USABLE_CAP ((size_t)32 << 20)
#define L3_USABLE_CAP_INTEL ((size_t)96 << 20)

/* The GEMM asks on every call: the first letter spares other vendors the strcmp. */
int ridge_cpu_vendor_is_intel(const char *vendor)
{
    return vendor[0] == 'G' && strcmp(vendor, "GenuineIntel") == 0;
}

size_t ridge_cpu_l3_usable(const char *vendor, size_t l3)
{
    return RIDGE_MIN(l3, ridge_cpu_vendor_is_intel(vendor) ? L3_USABLE_CAP_INTEL : L3_USABLE_CAP);
}

static ridge_cpu g_cpu;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* AMD's legacy cache leaves: 0x80000005 ECX holds L1d (size in KiB in bits 31:24, line in
 * 7:0), 0x80000006 ECX the L2 (KiB in 31:16, line in 7:0) and EDX the L3 (in 512 KiB units
 * in 31:18). Each level is taken only if it is nonzero; levels already known are kept. Some
 * hypervisors (one "Virtual Turin-like" Zen 5 VM here) clear leaf 0x8000001D but fill these. */
void ridge_cpu_legacy_amd_caches(ridge_cpu *c, unsigned ecx5, unsigned ecx6, unsigned edx6)
{
    size_t l1d = (size_t)(ecx5 >> 24) << 10, l2 = (size_t)(ecx6 >> 16) << 10;
    size_t l3 = (size_t)(edx6 >> 18) << 19;
    if (c->l1d == 0 && l1d) c->l1d = l1d, c->line = ecx5 & 0xff;
    if (c->l2 == 0 && l2) c->l2 = l2;
    if (c->l3 == 0 && l3) c->l3 = l3;
}

#ifdef RIDGE_X86
static void cpuid(unsigned leaf, unsigned sub, unsigned r[4])
{
    __cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
}

static uint64_t xgetbv0(void)
{
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

static void detect_caches(ridge_cpu *c, unsigned leaf)
{
    for (unsigned i = 0; i < 16; i++) {
        unsigned r[4];
        cpuid(leaf, i, r);
        unsigned type = r[0] & 31;
        if (type == 0) break;
        if (type == 2) continue; /* instruction cache */
        unsigned level = (r[0] >> 5) & 7;
        size_t ways = ((r[1] >> 22) & 0x3ff) + 1;
        size_t parts = ((r[1] >> 12) & 0x3ff) + 1;
        size_t line = (r[1] & 0xfff) + 1;
        size_t sets = (size_t)r[2] + 1;
        size_t bytes = ways * parts * line * sets;
        if (level == 1) c->l1d = bytes, c->line = line;
        else if (level == 2) c->l2 = bytes;
        else if (level == 3) c->l3 = bytes;
    }
}

static void detect(void)
{
    ridge_cpu *c = &g_cpu;
    unsigned r[4];
    cpuid(0, 0, r);
    unsigned max_leaf = r[0];
    memcpy(c->vendor + 0, &r[1], 4);
    memcpy(c->vendor + 4, &r[3], 4);
    memcpy(c->vendor + 8, &r[2], 4);
    c->vendor[12] = 0;

    cpuid(0x80000000u, 0, r);
    unsigned max_ext = r[0];
    if (max_ext >= 0x80000004u) {
        for (unsigned i = 0; i < 3; i++) {
            cpuid(0x80000002u + i, 0, r);
            memcpy(c->brand + 16 * i, r, 16);
        }
        c->brand[48] = 0;
        /* trim leading and trailing spaces */
        char *s = c->brand;
        while (*s == ' ') s++;
        memmove(c->brand, s, strlen(s) + 1);
        for (size_t n = strlen(c->brand); n > 0 && c->brand[n - 1] == ' '; n--) c->brand[n - 1] = 0;
    }

    cpuid(1, 0, r);
    unsigned fam = (r[0] >> 8) & 15, model = (r[0] >> 4) & 15;
    if (fam == 15) fam += (r[0] >> 20) & 0xff;
    if (fam >= 6) model += ((r[0] >> 16) & 15) << 4;
    c->family = (int)fam;
    c->model = (int)model;
    c->stepping = (int)(r[0] & 15);
    int has_osxsave = (r[2] >> 27) & 1;
    int has_avx = (r[2] >> 28) & 1;
    int has_fma = (r[2] >> 12) & 1;
    int has_f16c = (r[2] >> 29) & 1;
    c->sse42 = (r[2] >> 20) & 1;

    uint64_t xcr0 = has_osxsave ? xgetbv0() : 0;
    c->os_ymm = (xcr0 & 0x6) == 0x6;              /* XMM and YMM state */
    c->os_zmm = c->os_ymm && (xcr0 & 0xe0) == 0xe0; /* opmask, ZMM_Hi256, Hi16_ZMM */

    c->avx = has_avx && c->os_ymm;
    c->fma = has_fma && c->os_ymm;
    c->f16c = has_f16c && c->os_ymm;
    if (max_leaf >= 7) {
        cpuid(7, 0, r);
        unsigned ebx = r[1], ecx = r[2], edx = r[3];
        c->avx2 = ((ebx >> 5) & 1) && c->os_ymm;
        c->avx512f = ((ebx >> 16) & 1) && c->os_zmm;
        c->avx512dq = ((ebx >> 17) & 1) && c->os_zmm;
        c->avx512cd = ((ebx >> 28) & 1) && c->os_zmm;
        c->avx512bw = ((ebx >> 30) & 1) && c->os_zmm;
        c->avx512vl = ((ebx >> 31) & 1) && c->os_zmm;
        c->avx512_vnni = ((ecx >> 11) & 1) && c->os_zmm;
        c->avx512_fp16 = ((edx >> 23) & 1) && c->os_zmm;
        c->amx = (edx >> 24) & 1; /* AMX-BF16 tile support: reported, not used */
        cpuid(7, 1, r);
        c->avx_vnni = ((r[0] >> 4) & 1) && c->os_ymm;
        c->avx512_bf16 = ((r[0] >> 5) & 1) && c->os_zmm;
    }

    int amd = strcmp(c->vendor, "AuthenticAMD") == 0;
    if (amd && max_ext >= 0x8000001Du)
        detect_caches(c, 0x8000001Du);
    else if (max_leaf >= 4)
        detect_caches(c, 4);
    if (amd && max_ext >= 0x80000006u && (c->l1d == 0 || c->l2 == 0)) {
        unsigned r5[4], r6[4];
        cpuid(0x80000005u, 0, r5);
        cpuid(0x80000006u, 0, r6);
        ridge_cpu_legacy_amd_caches(c, r5[2], r6[2], r6[3]);
    }
}
#else
static void detect(void)
{
    strcpy(g_cpu.vendor, "unknown");
    strcpy(g_cpu.brand, "non-x86 CPU");
}
#endif /* RIDGE_X86 */

static void detect_once(void)
{
    detect();
    ridge_cpu *c = &g_cpu;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    c->logical_cpus = n > 0 ? (int)n : 1;
    if (c->line == 0) c->line = 64;
    if (c->l1d == 0) c->l1d = 32 << 10;
    if (c->l2 == 0) c->l2 = 256 << 10;
    c->l3_usable = ridge_cpu_l3_usable(c->vendor, c->l3);
}

const ridge_cpu *ridge_cpu_get(void)
{
    pthread_once(&g_once, detect_once);
    return &g_cpu;
}

int ridge_cpu_supports(const ridge_cpu *c, ridge_isa isa)
{
    switch (isa) {
    case RIDGE_ISA_REF: return 1;
    case RIDGE_ISA_AVX2: return c->avx2 && c->fma;
    case RIDGE_ISA_AVX512:
        return c->avx512f && c->avx512bw && c->avx512vl && c->avx512dq && c->fma;
    case RIDGE_ISA_AUTO: return 1;
    }
    return 0;
}

ridge_isa ridge_cpu_best_isa(const ridge_cpu *c)
{
    if (ridge_cpu_supports(c, RIDGE_ISA_AVX512)) return RIDGE_ISA_AVX512;
    if (ridge_cpu_supports(c, RIDGE_ISA_AVX2)) return RIDGE_ISA_AVX2;
    return RIDGE_ISA_REF;
}

const char *ridge_isa_name(ridge_isa isa)
{
    switch (isa) {
    case RIDGE_ISA_AUTO: return "auto";
    case RIDGE_ISA_REF: return "ref";
    case RIDGE_ISA_AVX2: return "avx2";
    case RIDGE_ISA_AVX512: return "avx512";
    }
    return "unknown";
}

ridge_status ridge_isa_parse(const char *name, ridge_isa *out)
{
    static const ridge_isa all[] = {RIDGE_ISA_AUTO, RIDGE_ISA_REF, RIDGE_ISA_AVX2,
                                    RIDGE_ISA_AVX512};
    if (name && *name) {
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
            if (strcmp(name, ridge_isa_name(all[i])) == 0) {
                *out = all[i];
                return RIDGE_OK;
            }
        }
    }
    return ridge_error(RIDGE_EINVAL, "unknown ISA '%s' (expected ref, avx2, avx512 or auto)",
                       name ? name : "(null)");
}
