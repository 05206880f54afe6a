/* ridge quantize --model FILE -o OUT: post-training int8 quantization of an MLP or CNN
 * checkpoint (ridge/quant.h; the kind is read from the checkpoint), calibrated on the first N
 * training images; then both models are evaluated on the test split so the accuracy cost and
 * the time are printed next to the result. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mlp-cli.h"
#include "quant-cli.h"

const char cmd_quantize_summary[] =
    "int8 post-training quantization of an MLP or CNN checkpoint (ridge quantize --model FILE -o OUT)";

static void help(void)
{
    printf("usage: ridge quantize --model FILE -o OUT [options]\n\n"
           "Quantizes an MLP or CNN checkpoint (from `ridge train mlp|cnn --save`; the kind is\n"
           "read from the file) to int8: batch norms folded into the layer before them, weights\n"
           "per output channel, activations per tensor from their range over N calibration\n"
           "images (the first N of the training split). Writes the int8 checkpoint (run it\n"
           "with `ridge eval --model OUT`) and prints the test accuracy and evaluation time of\n"
           "both models.\n\n"
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
    const char *model = NULL, *outp = NULL, *data = MLP_DEFAULT_DATA;
    long calib = 1000;
    const cli_opt opts[] = {
        {"--model", .str = &model},
        {"-o|--output", .str = &outp},
        {"--data", .str = &data},
        {"--calib", .num = &calib, .lo = 1, .hi = 1L << 30},
        {0}};
    if (cli_parse("quantize", &c, opts, argc, argv)) return CLI_USAGE;
    if (c.help) {
        help();
        return CLI_OK;
    }
    if (!model || !outp) {
        fprintf(stderr, "ridge quantize: %s is required (see --help)\n",
                !model ? "--model FILE" : "-o OUT");
        return CLI_USAGE;
    }
    const char *kind = quant_detect(model);
    if (!kind) return CLI_FAIL;
    const int cnn = !strcmp(kind, "cnn");
    if (!cnn && strcmp(kind, "mlp")) {
        fprintf(stderr, "ridge quantize: %s is already an int8 %s checkpoint\n", model, kind + 1);
        return CLI_FAIL;
    }
    ridge_ctx *ctx = cli_make_ctx(&c);
    if (!ctx) return CLI_FAIL;
    int rc = CLI_FAIL;
    ridge_mnist tr = {0}, te = {0};
    ridge_mlp *m = NULL;
    ridge_cnn *mc = NULL;
    quant_model q = {0};
    if ((cnn ? ridge_cnn_load(model, &mc) : ridge_mlp_load(model, &m)) ||
        ridge_mnist_load(data, "train", &tr) || ridge_mnist_load(data, "t10k", &te)) {
        fprintf(stderr, "ridge quantize: %s\n", ridge_last_error());
        goto done;
    }
    if (cnn ? quant_check_cnn_data(&mc->cfg, mc->classes, model, &tr)
            : mlp_check_data(m, model, tr.rows * tr.cols, tr.classes))
        goto done;
    size_t n = (size_t)calib < tr.n ? (size_t)calib : tr.n;
    uint64_t t0 = ridge_time_ns();
    if ((cnn ? ridge_qcnn_quantize(ctx, mc, tr.images, n, &q.cnn)
             : ridge_qmlp_quantize(ctx, m, tr.images, n, &q.mlp)) ||
        (cnn ? ridge_qcnn_save(q.cnn, outp) : ridge_qmlp_save(q.mlp, outp))) {
        fprintf(stderr, "ridge quantize: %s\n", ridge_last_error());
        goto done;
    }
    double tq = (double)(ridge_time_ns() - t0) * 1e-9;
    /* fp32 first, then int8, on the same test images */
    quant_eval_result f32, i8;
    size_t right;
    t0 = ridge_time_ns();
    if (cnn ? ridge_cnn_evaluate(ctx, mc, te.images, te.labels, te.n, &f32.loss, &right, NULL)
            : ridge_mlp_evaluate(ctx, m, te.images, te.labels, te.n, &f32.loss, &right, NULL)) {
        fprintf(stderr, "ridge quantize: fp32 evaluation: %s\n", ridge_last_error());
        goto done;
    }
    f32.seconds = (double)(ridge_time_ns() - t0) * 1e-9;
    f32.accuracy = 100.0 * (double)right / (double)te.n;
    if (quant_eval(ctx, &q, &te, &i8)) goto done;
    char arch[RIDGE_CNN_ARCH_MAX];
    if (cnn) ridge_cnn_arch_format(&mc->cfg, arch, sizeof arch);
    else mlp_format_layers(&m->cfg, arch, sizeof arch);
    if (c.json) {
        printf("{\"model\": \"%s\", \"kind\": \"%s\", \"output\": \"%s\", \"arch\": \"%s\", "
               "\"calib\": %zu, \"quantize_s\": %.3f, \"test_images\": %zu, "
               "\"f32_accuracy\": %.4f, \"int8_accuracy\": %.4f, \"f32_loss\": %.6f, "
               "\"int8_loss\": %.6f, \"f32_eval_s\": %.4f, \"int8_eval_s\": %.4f}\n",
               model, kind, outp, arch, n, tq, te.n, f32.accuracy, i8.accuracy, f32.loss, i8.loss,
               f32.seconds, i8.seconds);
    } else {
        printf("%s: %s %s -> %s (int8), calibrated on %zu images in %.2f s\n"
               "t10k, %zu images:  fp32 accuracy %.2f%% (loss %.4f, %.3f s)\n"
               "                   int8 accuracy %.2f%% (loss %.4f, %.3f s)  change %+.2f points, "
               "time x%.2f\n",
               model, kind, arch, outp, n, tq, te.n, f32.accuracy, f32.loss, f32.seconds,
               i8.accuracy, i8.loss, i8.seconds, i8.accuracy - f32.accuracy,
               i8.seconds / (f32.seconds > 0 ? f32.seconds : 1e-9));
    }
    rc = CLI_OK;
done:
    ridge_qmlp_destroy(q.mlp);
    ridge_qcnn_destroy(q.cnn);
    ridge_mlp_destroy(m);
    ridge_cnn_destroy(mc);
    ridge_mnist_free(&tr);
    ridge_mnist_free(&te);
    ridge_ctx_destroy(ctx);
    return rc;
}
