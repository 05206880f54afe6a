/* Writes the fuzzers' seed corpora: small valid files made with ridge's own writers, so no
 * binary seeds are committed. Usage: fuzz-make-seeds DIR (creates DIR/<target>/...). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ridge/ridge.h"
#include "ridge/io.h"

static char path[4096];
static const char *dir;

static const char *at(const char *target, const char *name)
{
    snprintf(path, sizeof path, "%s/%s", dir, target);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%s/%s", dir, target, name);
    return path;
}

static void raw(const char *target, const char *name, const void *p, size_t n)
{
    FILE *f = fopen(at(target, name), "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f)) exit(1);
}

#define CHECK(x)                                                                              \
    do {                                                                                      \
        if ((x) != RIDGE_OK) {                                                                \
            fprintf(stderr, "make-seeds: %s: %s\n", #x, ridge_last_error());                  \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    dir = argv[1];
    mkdir(dir, 0755);

    /* IDX: u8 images 3x4x5, i32 labels, f32 and f64 vectors, plain and gzip'd */
    uint8_t px[60];
    for (int i = 0; i < 60; i++) px[i] = (uint8_t)(i * 7);
    int32_t lab[3] = {1, -2, 70000};
    float fv[4] = {0.5f, -1, 3, 1e-3f};
    double dv[2] = {1.5, -2};
    ridge_idx ids[] = {{RIDGE_IDX_U8, 3, {3, 4, 5}, 60, px},
                       {RIDGE_IDX_I32, 1, {3}, 3, lab},
                       {RIDGE_IDX_F32, 2, {2, 2}, 4, fv},
                       {RIDGE_IDX_F64, 1, {2}, 2, dv}};
    for (int i = 0; i < 4; i++) {
        char name[32];
        snprintf(name, sizeof name, "plain-%d", i);
        CHECK(ridge_idx_write(at("idx", name), &ids[i], 0));
        snprintf(name, sizeof name, "plain-%d", i);
        CHECK(ridge_idx_write(at("idx-gz", name), &ids[i], 0));
        if (ridge_io_has_zlib()) {
            snprintf(name, sizeof name, "gz-%d", i);
            CHECK(ridge_idx_write(at("idx", name), &ids[i], 1));
        }
    }

    /* checkpoints: a tiny MLP (AdamW and SGD) and a tiny CNN */
    ridge_mlp_config mc = {0};
    mc.nlayers = 2, mc.sizes[0] = 4, mc.sizes[1] = 3, mc.sizes[2] = 2;
    mc.act = RIDGE_EPI_RELU, mc.in_std = 1;
    ridge_optim_config o;
    ridge_optim_config_init(&o);
    ridge_mlp *m;
    CHECK(ridge_mlp_create(&mc, &o, 2, 1, &m));
    CHECK(ridge_mlp_save(m, at("mlp-checkpoint", "adamw")));
    ridge_mlp_destroy(m);
    o.kind = RIDGE_OPTIM_SGD;
    CHECK(ridge_mlp_create(&mc, &o, 2, 1, &m));
    CHECK(ridge_mlp_save(m, at("mlp-checkpoint", "sgd")));
    ridge_mlp_destroy(m);
    /* int8 MLPs: 4-3-2 ReLU and 4-5-3-2 without activation, calibrated on 3 images */
    ridge_ctx *ctx;
    CHECK(ridge_ctx_create(NULL, &ctx));
    const uint8_t calib[12] = {0, 255, 7, 99, 3, 3, 3, 3, 200, 1, 50, 128};
    for (int i = 0; i < 2; i++) {
        ridge_mlp_config qc = mc;
        if (i) qc.nlayers = 3, qc.sizes[1] = 5, qc.sizes[2] = 3, qc.sizes[3] = 2,
               qc.act = RIDGE_EPI_NONE;
        ridge_qmlp *q;
        CHECK(ridge_mlp_create(&qc, &o, 2, 1, &m));
        CHECK(ridge_qmlp_quantize(ctx, m, calib, 3, &q));
        CHECK(ridge_qmlp_save(q, at("qmlp-checkpoint", i ? "linear" : "relu")));
        ridge_qmlp_destroy(q);
        ridge_mlp_destroy(m);
    }
    ridge_ctx_destroy(ctx);
    ridge_optim_config_init(&o);
    ridge_cnn_config cc;
    ridge_cnn_config_init(&cc);
    cc.in_h = cc.in_w = 6;
    CHECK(ridge_cnn_arch_parse("conv3x3-2,bn,relu,maxpool2,dense-3", &cc));
    ridge_cnn *cn;
    CHECK(ridge_cnn_create(&cc, &o, 2, 1, &cn));
    CHECK(ridge_cnn_save(cn, at("cnn-checkpoint", "small")));
    /* its int8 version, calibrated on 3 images of 6 x 6 */
    uint8_t cimg[3 * 36];
    for (size_t i = 0; i < sizeof cimg; i++) cimg[i] = (uint8_t)(i * 37 + 11);
    ridge_qcnn *qc;
    CHECK(ridge_ctx_create(NULL, &ctx));
    CHECK(ridge_qcnn_quantize(ctx, cn, cimg, 3, &qc));
    CHECK(ridge_qcnn_save(qc, at("qcnn-checkpoint", "small")));
    ridge_qcnn_destroy(qc);
    ridge_ctx_destroy(ctx);
    ridge_cnn_destroy(cn);

    /* a roofline cache file (as `ridge roofline` writes it), 2 thread counts */
    static const char roof[] =
        "{\"format\": \"ridge-roofline\", \"version\": 3, \"units\": \"GFLOP/s, GB/s, bytes\",\n"
        " \"cpu\": \"AMD EPYC\", \"threads\": 2, \"l1d\": 32768, \"l2\": 524288,\n"
        " \"l3_usable\": 33554432, \"quick\": false, \"seconds\": 3.5,\n"
        " \"measured_at\": \"2026-11-30T11:23:54Z\", \"points\": [\n"
        "  {\"threads\": 1, \"peak\": {\"f32-ref\": 10.9, \"f32-avx2\": 98.2, \"f32-avx512\": null,\n"
        "   \"i8-dot\": null, \"bf16-dot\": null}, \"read\": {\"L1\": 188.7, \"L2\": 93.9,\n"
        "   \"L3\": 17.8, \"DRAM\": 13.7}, \"copy\": 12.7, \"triad\": 15.8},\n"
        "  {\"threads\": 2, \"peak\": {\"f32-ref\": 21.8, \"f32-avx2\": 190.1, \"f32-avx512\": null,\n"
        "   \"i8-dot\": 350, \"bf16-dot\": null}, \"read\": {\"L1\": 370, \"L2\": 180,\n"
        "   \"L3\": 30, \"DRAM\": 20}, \"copy\": 18, \"triad\": 21}]}\n";
    ridge_roofline rr;
    CHECK(ridge_roofline_from_json(roof, &rr));
    raw("roofline", "epyc-2t", roof, sizeof roof - 1);

    /* llm.c: a 1-layer GPT-2 with V 8, maxT 4, C 4; a token shard; a tokenizer */
    ridge_gpt2_config g = {4, 8, 8, 1, 2, 4};
    size_t sizes[RIDGE_GPT2_NUM_TENSORS], total;
    CHECK(ridge_gpt2_param_sizes(&g, sizes, &total));
    float *p = calloc(total, sizeof *p);
    if (!p) return 1;
    for (size_t i = 0; i < total; i++) p[i] = (float)i / 64;
    CHECK(ridge_llmc_model_write(at("llmc-model", "tiny"), &g, p));
    free(p);
    uint16_t tok[9] = {0, 1, 2, 3, 7, 6, 5, 4, 0};
    CHECK(ridge_llmc_tokens_write(at("llmc-tokens", "shard"), tok, 9));
    const uint8_t *pieces[4] = {(const uint8_t *)"a", (const uint8_t *)"bc",
                                (const uint8_t *)"\xe2\x82\xac", (const uint8_t *)"<|e|>"};
    const uint8_t lens[4] = {1, 2, 3, 5};
    CHECK(ridge_llmc_tokenizer_write(at("llmc-tokenizer", "tiny"), 4, 3, pieces, lens));

    /* a training state over the shards fuzz-llmc-state.c makes (33 and 64 tokens, B 1, T 4),
     * after 3 batches; and one before any */
    uint16_t st_tok[64];
    for (int i = 0; i < 64; i++) st_tok[i] = (uint16_t)(i % 50);
    CHECK(ridge_llmc_tokens_write(at("llmc-state-shards", "shard0.bin"), st_tok, 33));
    CHECK(ridge_llmc_tokens_write(at("llmc-state-shards", "shard1.bin"), st_tok, 64));
    ridge_llmc_loader *ld;
    CHECK(ridge_llmc_loader_create(at("llmc-state-shards", "shard*.bin"), 1, 4, 50257, 1, &ld));
    float mom[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    CHECK(ridge_llmc_state_write(at("llmc-state", "fresh"), 0, 7, ld, mom, mom, 8));
    const int *in, *tg;
    for (int i = 0; i < 3; i++) CHECK(ridge_llmc_loader_next(ld, &in, &tg));
    CHECK(ridge_llmc_state_write(at("llmc-state", "step3"), 3, 7, ld, mom, mom, 8));
    ridge_llmc_loader_destroy(ld);

    /* CLI words (NUL-separated argv) and shapes (see fuzz-shapes.c for the encoding) */
    static const char cli[] = "--threads\0" "2\0" "--isa\0" "avx2\0" "784,128,10\0"
                              "conv3x3-8,bn,relu,maxpool2,dense-10\0" "nhwc\0" "winograd-4x3\0"
                              "1e-3\0" "--json";
    raw("cli", "words", cli, sizeof cli - 1);
    uint8_t shp[1 + 16 * 2 + 2] = {0};
    const uint8_t conv_small[16] = {2, 3, 7, 7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    for (int i = 0; i < 16; i++) shp[1 + 2 * i] = conv_small[i];
    raw("shapes", "conv", shp, sizeof shp);
    uint8_t gm[1 + 1 + 6 * 8] = {1, 0};
    const uint8_t gsz[6] = {5, 7, 3, 3, 7, 7}; /* m n k lda ldb ldc, encoded as 2 v */
    for (int i = 0; i < 6; i++) gm[2 + 8 * i] = (uint8_t)(gsz[i] << 1);
    raw("shapes", "gemm", gm, sizeof gm);

    /* the conv tuning file: a comment, the fuzzer's own key, another shape */
    static const char tune[] =
        "ridge-conv-tune 1\n# isa threads n c_in h w c_out r s ...\n"
        "avx2 1 1 8 5 5 8 3 3 1 1 1 1 1 1 1 1 1 nhwc winograd-2x3 2 1.5 - - 0.5 0.75 -\n"
        "avx512 2 8 64 56 56 64 1 1 1 1 1 1 0 0 0 0 1 nchw16c pointwise 1 1.2 0.25 - - - -\n";
    raw("conv-tune", "two-lines", tune, sizeof tune - 1);

    /* bpe: texts (first byte even), and the tiny vocabulary's two files (odd, "JSON\0BPE") */
    static const char text[] = "\0hello the world, it's 42  \n\nx\xc3\xa9\xff aaaaa";
    raw("bpe", "text", text, sizeof text - 1);
    static char vocab[1 << 16];
    size_t vn = 1;
    vocab[0] = 1;
    const char *files[2] = {RIDGE_BPE_TINY_DIR "/encoder.json", RIDGE_BPE_TINY_DIR "/vocab.bpe"};
    for (int i = 0; i < 2; i++) {
        FILE *f = fopen(files[i], "rb");
        if (!f) {
            fprintf(stderr, "make-seeds: cannot open %s\n", files[i]);
            return 1;
        }
        vn += fread(vocab + vn, 1, sizeof vocab - vn - 1, f);
        fclose(f);
        if (i == 0) vocab[vn++] = 0;
    }
    raw("bpe", "tiny-vocab", vocab, vn);
    return 0;
}
