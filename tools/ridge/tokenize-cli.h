/* Text files to token ids, shared by `ridge tokenize` and the built-in demo of
 * `ridge train gpt2` (tools/ridge/cmd-tokenize.c). */
#ifndef RIDGE_TOKENIZE_CLI_H
#define RIDGE_TOKENIZE_CLI_H

#include "cli.h"

typedef struct cli_tokens {
    uint16_t *ids;  /* n ids (malloc'ed; the caller frees) */
    size_t n, docs; /* ids and documents */
    size_t bytes;   /* of text read */
    double seconds; /* spent encoding */
} cli_tokens;

/* Reads the files ("-" is standard input), splits them into documents (each file; or at lines
 * equal to sep; or, if blank, at empty lines; empty documents are skipped) and encodes each
 * after the end-of-text token, in parallel on ctx's threads. bpe NULL: byte-level tokens
 * (id = byte, end-of-text 256). progress: a progress line on stderr if it is a terminal.
 * Returns 0, or -1 after printing why. */
int cli_tokenize_files(ridge_ctx *ctx, const ridge_bpe *bpe, const char *const *paths,
                       size_t npaths, const char *sep, int blank, int progress,
                       cli_tokens *out);

#endif /* RIDGE_TOKENIZE_CLI_H */
