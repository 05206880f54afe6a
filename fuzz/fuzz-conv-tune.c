/* The conv tuning file (src/conv/conv-tune.c) on arbitrary bytes: a lookup reads it, then a
 * store rewrites it. A file the store refuses must be left as it was; a file it wrote must
 * start with the format's first line, hold only lines that parse, and give back the stored
 * entry. The file lives in a temporary XDG_CACHE_HOME (its path is derived, not given). */
#include <sys/stat.h>

#include "conv/conv.h"
#include "fuzz.h"

static char dir[64], path[4200];
static char *text;

static size_t read_back(void)
{
    FILE *f = fopen(path, "rb");
    if (!f) abort();
    size_t n = fread(text, 1, (2u << 20) - 1, f);
    fclose(f);
    text[n] = 0;
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/ridge-fuzz-tune-XXXXXX");
        if (!mkdtemp(dir) || setenv("XDG_CACHE_HOME", dir, 1) ||
            ridge_cache_file_path("conv-tune", "fuzz", ".txt", path, sizeof path) ||
            ridge_mkdir_parents(path) || !(text = malloc(2u << 20)))
            abort();
    }
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f)) abort();

    ridge_conv2d_desc d;
    ridge_conv2d_desc_init(&d);
    d.n = 1, d.c_in = 8, d.h = d.w = 5, d.c_out = 8, d.r = d.s = 3, d.layout = RIDGE_NHWC;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
    conv_tune_entry e, got;
    char where[512];
    conv_tune_forget();
    conv_tune_lookup("fuzz", &d, RIDGE_ISA_AVX2, 1, &got, where, sizeof where);

    memset(&e, 0, sizeof e);
    e.d = d, e.isa = RIDGE_ISA_AVX2, e.threads = 1, e.algo = RIDGE_CONV_DIRECT;
    e.measured[RIDGE_CONV_DIRECT] = 1e-3, e.measured[RIDGE_CONV_IM2COL] = 2e-3;
    if (!conv_tune_store("fuzz", &e, where, sizeof where)) {
        if (read_back() != size || memcmp(text, data, size)) {
            fprintf(stderr, "fuzz-conv-tune: a refused file was changed (%s)\n", where);
            abort();
        }
        return 0;
    }
    read_back();
    if (strncmp(text, "ridge-conv-tune 1\n", 18)) abort();
    for (char *line = strchr(text, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        conv_tune_entry t;
        if (line[1] != '#' && !conv_tune_parse_line(line + 1, &t)) {
            fprintf(stderr, "fuzz-conv-tune: the writer wrote a line it cannot read:\n%s\n",
                    line + 1);
            abort();
        }
    }
    conv_tune_forget();
    if (!conv_tune_lookup("fuzz", &d, RIDGE_ISA_AVX2, 1, &got, where, sizeof where) ||
        got.algo != e.algo || got.measured[RIDGE_CONV_IM2COL] != 2e-3)
        abort();
    return 0;
}
