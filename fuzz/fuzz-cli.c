/* The CLI's argument parsing: the input, split at NUL bytes, is an argv handed to the common
 * option parser (--threads, --isa, ...), and each word to the value parsers the subcommands
 * use (integers, floats, --layers lists, CNN architecture strings, layouts, algorithm
 * names). Messages go to a discarded stderr (sanitizer reports use fd 2 directly). */
#include "cli.h"
#include "fuzz.h"
#include "mlp-cli.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    FILE *null = fopen("/dev/null", "w");
    if (null) stderr = null;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096) return 0;
    char *buf = malloc(size + 1);
    if (!buf) abort();
    memcpy(buf, data, size);
    buf[size] = 0;
    char *argv[33];
    int argc = 0;
    argv[argc++] = (char *)"ridge";
    for (size_t i = 0; i <= size && argc < 32;) {
        argv[argc++] = buf + i;
        i += strlen(buf + i) + 1;
    }
    argv[argc] = NULL;

    cli_common c;
    cli_common_init(&c);
    for (int i = 1; i < argc;) {
        int r = cli_common_parse(&c, argc, argv, &i);
        if (r < 0) break;
        if (r == 0) i++;
        if (i > argc) abort(); /* consumed past the end */
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        long l;
        double d;
        const char *s;
        (void)cli_int_arg("--n", a, -5, 1L << 40, &l);
        (void)cli_int_arg("--n", i + 1 < argc ? argv[i + 1] : NULL, 1, 100, &l);
        (void)mlp_float_arg("--f", a, 0, 10, &d);
        (void)mlp_str_arg("--s", a, &s);
        ridge_mlp_config mc;
        memset(&mc, 0, sizeof mc);
        (void)mlp_parse_layers(a, &mc);
        ridge_cnn_config cc;
        ridge_cnn_config_init(&cc);
        if (ridge_cnn_arch_parse(a, &cc) == RIDGE_OK) {
            char back[4096];
            (void)ridge_cnn_arch_format(&cc, back, sizeof back);
            (void)ridge_cnn_config_check(&cc);
        }
        ridge_layout lay;
        (void)ridge_layout_parse(a, &lay);
        ridge_conv_algo algo;
        (void)ridge_conv_algo_parse(a, &algo);
    }
    free(buf);
    return 0;
}
