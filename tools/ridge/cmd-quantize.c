/* ridge quantize --model FILE -o OUT: post-training int8 quantization of an MLP checkpoint
 * (ridge/quant.h), calibrated on the first N training images; then both models are evaluated
 * on the test split so the accuracy cost is printed next to the result. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mlp-cli.h"
#include "qmlp-cli.h"

const char cmd_quantize_summary[] =
    "int8 post-training quantization of an MLP checkpoint (ridge quantize --model FILE -o OUT)";

static void help(void)
{
    printf("usage: ridge quantize --model FILE -o OUT [options]\n\n"
           "Quantizes an MLP checkpoint (from `ridge train mlp --save`) to int8: weights per\n"
           "output channel, activations per tensor from their range over N calibration images\n"
           "(the first N of the training split). Writes the int8 checkpoint (run it with\n"
           "`ridge eval qmlp --model OUT`) and prints the test accuracy of both models.\n\n"
           "options:\n"
           "  --model FILE       the fp32 checkpoint (required)\n"
           "  -o, --output OUT   the int8 checkpoint to write (required)\n"
           "  --data DIR         MNIST-format directory (default %s)\n"
           "  --calib N          calibration images (default 1000)\n" CLI_COMMON_HELP,
           MLP_DEFAULT_DATA);
}

int cmd_quantize(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    const char *model = NULL, *outp = NULL, *data = MLP_DEFAULT_DATA;
    long calib = 1000;
    for (int i = 1; i < argc;) {
        int r = cli_common_parse(&c, argc, argv, &i);
        if (r < 0) return CLI_USAGE;
        if (r > 0) continue;
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad;
        if (!strcmp(a, "--model")) bad = mlp_str_arg(a, v, &model);
        else if (!strcmp(a, "-o") || !strcmp(a, "--output")) bad = mlp_str_arg(a, v, &outp);
        else if (!strcmp(a, "--data")) bad = mlp_str_arg(a, v, &data);
        else if (!strcmp(a, "--calib")) bad = cli_int_arg(a, v, 1, 1L << 30, &calib);
        else return cli_unknown("quantize", a);
        if (bad) return CLI_USAGE;
        i += 2;
    }
    if (c.help) {
        help();
        return CLI_OK;
    }
    if (!model || !outp) {
        fprintf(stderr, "ridge quantize: %s is required (see --help)\n",
                !model ? "--model FILE" : "-o OUT");
        return CLI_USAGE;
    }
    ridge_ctx *ctx = cli_make_ctx(&c);
    if (!ctx) return CLI_FAIL;
    int rc = CLI_FAIL;
    ridge_mnist tr = {0}, te = {0};
    ridge_mlp *m = NULL;
    ridge_qmlp *q = NULL;
    if (ridge_mlp_load(model, &m) || ridge_mnist_load(data, "train", &tr) ||
        ridge_mnist_load(data, "t10k", &te)) {
        fprintf(stderr, "ridge quantize: %s\n", ridge_last_error());
        goto done;
    }
    if (mlp_check_data(m, model, tr.rows * tr.cols, tr.classes)) goto done;
    size_t n = (size_t)calib < tr.n ? (size_t)calib : tr.n;
    uint64_t t0 = ridge_time_ns();
    if (ridge_qmlp_quantize(ctx, m, tr.images, n, &q) || ridge_qmlp_save(q, outp)) {
        fprintf(stderr, "ridge quantize: %s\n", ridge_last_error());
        goto done;
    }
    double tq = (double)(ridge_time_ns() - t0) * 1e-9;
    qmlp_eval_result f32, i8;
    if (qmlp_cli_eval_both(ctx, m, q, &te, &f32, &i8)) goto done;
    char layers[256];
    mlp_format_layers(&m->cfg, layers, sizeof layers);
    if (c.json) {
        printf("{\"model\": \"%s\", \"output\": \"%s\", \"layers\": \"%s\", \"calib\": %zu, "
               "\"quantize_s\": %.3f, \"test_images\": %zu, \"f32_accuracy\": %.4f, "
               "\"int8_accuracy\": %.4f, \"f32_loss\": %.6f, \"int8_loss\": %.6f, "
               "\"f32_eval_s\": %.4f, \"int8_eval_s\": %.4f}\n",
               model, outp, layers, n, tq, te.n, f32.accuracy, i8.accuracy, f32.loss, i8.loss,
               f32.seconds, i8.seconds);
    } else {
        printf("%s: mlp %s -> %s (int8), calibrated on %zu images in %.2f s\n"
               "t10k, %zu images:  fp32 accuracy %.2f%% (loss %.4f, %.3f s)\n"
               "                   int8 accuracy %.2f%% (loss %.4f, %.3f s)  change %+.2f points\n",
               model, layers, outp, n, tq, te.n, f32.accuracy, f32.loss, f32.seconds,
               i8.accuracy, i8.loss, i8.seconds, i8.accuracy - f32.accuracy);
    }
    rc = CLI_OK;
done:
    ridge_qmlp_destroy(q);
    ridge_mlp_destroy(m);
    ridge_mnist_free(&tr);
    ridge_mnist_free(&te);
    ridge_ctx_destroy(ctx);
    return rc;
}
