/* ridge predict: classifies one image with an MLP checkpoint, from an MNIST-format dataset
 * (--index N) or a binary PGM file (--image FILE, P5, 8-bit, the model's input size). */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mlp-cli.h"

const char cmd_predict_summary[] = "classify an image with an MLP checkpoint (--index N | --image F)";

static const char *const fashion_names[10] = {"T-shirt/top", "Trouser", "Pullover", "Dress",
                                              "Coat",        "Sandal",  "Shirt",    "Sneaker",
                                              "Bag",         "Ankle boot"};

static void help(void)
{
    printf("usage: ridge predict --model FILE (--index N | --image FILE.pgm) [options]\n\n"
           "Prints the model's three most likely classes with their probabilities.\n\n"
           "options:\n"
           "  --model FILE       an MLP checkpoint (ridge train mlp --save)\n"
           "  --index N          image N of the dataset split\n"
           "  --data DIR         MNIST-format directory (default %s)\n"
           "  --split NAME       t10k (default) or train\n"
           "  --image FILE       a binary PGM (P5, maxval 255) with as many pixels as the model's\n"
           "                     inputs, white on black like MNIST\n"
           "  --names fashion    print Fashion-MNIST class names (the default with --index on\n"
           "                     a directory whose name contains 'fashion')\n" CLI_COMMON_HELP,
           MLP_DEFAULT_DATA);
}

/* Reads the next PGM header integer, skipping whitespace and # comments. */
static long pgm_int(FILE *f)
{
    int c;
    for (;;) {
        c = fgetc(f);
        if (c == '#')
            while (c != '\n' && c != EOF) c = fgetc(f);
        else if (!isspace(c))
            break;
    }
    long v = 0;
    int digits = 0;
    for (; c != EOF && isdigit(c) && v < 1000000; c = fgetc(f), digits++) v = v * 10 + (c - '0');
    return digits && (c == EOF || isspace(c)) ? v : -1; /* one whitespace byte ends the field */
}

static int read_pgm(const char *path, size_t want, uint8_t *px)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    char magic[2];
    long w = -1, h = -1, maxval = -1;
    int ok = fread(magic, 1, 2, f) == 2 && magic[0] == 'P' && magic[1] == '5';
    if (ok) w = pgm_int(f), h = pgm_int(f), maxval = pgm_int(f);
    if (!ok || w < 1 || h < 1 || maxval != 255) {
        fprintf(stderr, "ridge predict: %s: not a binary 8-bit PGM (P5, maxval 255)\n", path);
        fclose(f);
        return -1;
    }
    if ((size_t)(w * h) != want) {
        fprintf(stderr, "ridge predict: %s is %ldx%ld = %ld pixels, the model takes %zu\n", path,
                w, h, w * h, want);
        fclose(f);
        return -1;
    }
    ok = fread(px, 1, want, f) == want;
    fclose(f);
    if (!ok) fprintf(stderr, "ridge predict: %s: truncated pixel data\n", path);
    return ok ? 0 : -1;
}

int cmd_predict(int argc, char **argv)
{
    cli_common c;
    const char *model = NULL, *data = MLP_DEFAULT_DATA, *split = "t10k", *image = NULL;
    const char *names = NULL;
    long index = -1;
    const cli_opt opts[] = {
        {"--model", .str = &model},
        {"--data", .str = &data},
        {"--split", .str = &split},
        {"--image", .str = &image},
        {"--names", .str = &names},
        {"--index", .num = &index, .lo = 0, .hi = 0x7fffffffL},
        {0}};
    if (cli_parse("predict", &c, opts, argc, argv)) return CLI_USAGE;
    if (c.help) {
        help();
        return CLI_OK;
    }
    if (!model || (index < 0) == !image) {
        fprintf(stderr, "ridge predict: needs --model FILE and one of --index N, --image FILE\n");
        return CLI_USAGE;
    }
    if (names && strcmp(names, "fashion") && strcmp(names, "none")) {
        fprintf(stderr, "ridge predict: --names '%s': expected fashion or none\n", names);
        return CLI_USAGE;
    }
    int fashion = names ? !strcmp(names, "fashion") : !image && strstr(data, "fashion") != NULL;

    ridge_ctx *ctx = cli_make_ctx(&c);
    if (!ctx) return CLI_FAIL;
    int rc = CLI_FAIL, label = -1;
    ridge_mlp *m = NULL;
    ridge_mnist d = {0};
    uint8_t *px = NULL;
    float *x = NULL;
    if (ridge_mlp_load(model, &m)) {
        fprintf(stderr, "ridge predict: %s\n", ridge_last_error());
        goto done;
    }
    const size_t D = m->cfg.sizes[0], C = m->cfg.sizes[m->cfg.nlayers];
    if (!(px = malloc(D)) || !(x = malloc(D * sizeof *x))) goto done;
    if (image) {
        if (read_pgm(image, D, px)) goto done;
    } else {
        if (ridge_mnist_load(data, split, &d)) {
            fprintf(stderr, "ridge predict: %s\n", ridge_last_error());
            goto done;
        }
        if ((size_t)index >= d.n) {
            fprintf(stderr, "ridge predict: --index %ld: the %s split has %zu images\n", index,
                    split, d.n);
            rc = CLI_USAGE;
            goto done;
        }
        if (mlp_check_data(m, model, d.rows * d.cols, d.classes)) goto done;
        memcpy(px, d.images + (size_t)index * D, D);
        label = d.labels[index];
    }
    ridge_batch_u8(x, NULL, px, NULL, NULL, 0, 1, D, m->cfg.in_mean, m->cfg.in_std);
    const float *logits;
    if (ridge_mlp_forward(ctx, m, x, 1, &logits)) {
        fprintf(stderr, "ridge predict: %s\n", ridge_last_error());
        goto done;
    }
    /* softmax in double, then the top three */
    double mx = logits[0], sum = 0, prob[3] = {-1, -1, -1};
    size_t top[3] = {0, 0, 0};
    for (size_t j = 1; j < C; j++) mx = fmax(mx, logits[j]);
    for (size_t j = 0; j < C; j++) sum += exp(logits[j] - mx);
    for (size_t j = 0; j < C; j++) {
        double p = exp(logits[j] - mx) / sum;
        for (int t = 0; t < 3; t++)
            if (p > prob[t]) {
                for (int u = 2; u > t; u--) prob[u] = prob[u - 1], top[u] = top[u - 1];
                prob[t] = p, top[t] = j;
                break;
            }
    }
    const int shown = C < 3 ? (int)C : 3;
    if (c.json) {
        printf("{\"model\": \"%s\", ", model);
        if (label >= 0) printf("\"index\": %ld, \"label\": %d, ", index, label);
        printf("\"top\": [");
        for (int t = 0; t < shown; t++)
            printf("%s{\"class\": %zu, \"probability\": %.6f}", t ? ", " : "", top[t], prob[t]);
        printf("]}\n");
    } else {
        if (label >= 0)
            printf("image %ld of %s/%s: true label %d%s%s%s\n", index, data, split, label,
                   fashion && label < 10 ? " (" : "", fashion && label < 10 ? fashion_names[label] : "",
                   fashion && label < 10 ? ")" : "");
        for (int t = 0; t < shown; t++)
            printf("  %zu%s%s%s  %6.2f%%\n", top[t], fashion && top[t] < 10 ? " (" : "",
                   fashion && top[t] < 10 ? fashion_names[top[t]] : "",
                   fashion && top[t] < 10 ? ")" : "", 100 * prob[t]);
    }
    rc = CLI_OK;
done:
    free(px);
    free(x);
    ridge_mnist_free(&d);
    ridge_mlp_destroy(m);
    ridge_ctx_destroy(ctx);
    return rc;
}
