/* ridge/llmc.h: llm.c's GPT-2 files, read and written exactly (docs/FORMATS.md, and
 * llm.c's train_gpt2.c / train_gpt2.py / dev/data/data_common.py).
 *
 *   checkpoint  1024-byte header (256 x int32; magic 20240326, version 3) + fp32 parameters,
 *               16 tensors in llm.c's order (layer-major), vocabulary padded to Vp
 *   tokens      header (magic 20240520, version 1, ntok) + ntok uint16 token ids; a training
 *               set is a glob of such shards
 *   tokenizer   header (magic 20240328, version 2, vocab size, end-of-text id) + for each
 *               token: uint8 length (1..255) and that many bytes of the decoded piece
 *
 * Every reader checks each header field, the sizes against the file's length and the token ids
 * against the vocabulary, and names the file and the field in ridge_last_error(). A reader
 * never allocates more than the file's size justifies. Writers write PATH.tmp.PID, fsync it
 * and rename it over PATH, so a crash never leaves a half-written file under the final name
 * (docs/RELIABILITY.md); a failed write returns RIDGE_EIO and leaves PATH as it was. All calls are
 * thread-safe on distinct objects.
 */
#ifndef RIDGE_LLMC_H
#define RIDGE_LLMC_H

#include <stddef.h>
#include <stdint.h>

#include "ridge/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RIDGE_LLMC_MODEL_MAGIC 20240326
#define RIDGE_LLMC_MODEL_VERSION 3
#define RIDGE_LLMC_TOKENS_MAGIC 20240520
#define RIDGE_LLMC_TOKENS_VERSION 1
#define RIDGE_LLMC_TOKENIZER_MAGIC 20240328
#define RIDGE_LLMC_TOKENIZER_VERSION 2
#define RIDGE_LLMC_HEADER_BYTES 1024

/* ---- model shape and parameter layout ---------------------------------------------------- */

typedef struct ridge_gpt2_config {
    int max_seq_len;       /* maxT: the number of positions (1024 for GPT-2) */
    int vocab_size;        /* V: real vocabulary (50257) */
    int padded_vocab_size; /* Vp >= V: rows of wte (50304, a multiple of 128) */
    int num_layers;        /* L */
    int num_heads;         /* NH; channels % num_heads == 0 */
    int channels;          /* C */
} ridge_gpt2_config;

#define RIDGE_GPT2_NUM_TENSORS 16

/* Checks the config (every field positive, V <= Vp, C % NH == 0, token ids fit uint16 in the
 * shards: V <= 65536, and the parameter count fits size_t); RIDGE_EINVAL naming the field. */
ridge_status ridge_gpt2_config_check(const ridge_gpt2_config *cfg);

/* The element counts of the 16 parameter tensors in llm.c's order (wte, wpe, ln1w, ln1b,
 * qkvw, qkvb, attprojw, attprojb, ln2w, ln2b, fcw, fcb, fcprojw, fcprojb, lnfw, lnfb) and
 * their total. Checks the config first. */
ridge_status ridge_gpt2_param_sizes(const ridge_gpt2_config *cfg,
                                    size_t sizes[RIDGE_GPT2_NUM_TENSORS], size_t *total);
/* "wte", "wpe", ... ("?" out of range). */
const char *ridge_gpt2_param_name(int i);

/* The config for depth L with llm.c's conventions (train_gpt2.cu `-e dL`): C = 64 L,
 * NH = max(1, L), maxT 1024, V 50257, Vp 50304. For tests, a smaller V/maxT can be set after. */
ridge_gpt2_config ridge_gpt2_config_depth(int depth);

/* ---- checkpoint -------------------------------------------------------------------------- */

/* Reads a checkpoint's header into *cfg and checks the file is exactly header + parameters.
 * If params is non-NULL it must hold nparams floats (the total of ridge_gpt2_param_sizes),
 * and the parameters are read into it. */
ridge_status ridge_llmc_model_read(const char *path, ridge_gpt2_config *cfg, float *params,
                                   size_t nparams);
/* Writes a checkpoint (version 3, fp32) of params (the total of ridge_gpt2_param_sizes). */
ridge_status ridge_llmc_model_write(const char *path, const ridge_gpt2_config *cfg,
                                    const float *params);

/* ---- token shards ------------------------------------------------------------------------ */

/* Checks a shard's header and its length (1024 + 2 ntok bytes); *ntok = its token count. */
ridge_status ridge_llmc_tokens_info(const char *path, size_t *ntok);
/* Reads a shard: *tokens (ridge_malloc'ed, free with ridge_free) gets its *ntok ids. If
 * vocab_size > 0 every id must be below it. */
ridge_status ridge_llmc_tokens_read(const char *path, int vocab_size, uint16_t **tokens,
                                    size_t *ntok);
/* Writes a shard; ntok must be in 1..INT32_MAX. */
ridge_status ridge_llmc_tokens_write(const char *path, const uint16_t *tokens, size_t ntok);

/* ---- tokenizer (decoding) ---------------------------------------------------------------- */

typedef struct ridge_llmc_tokenizer ridge_llmc_tokenizer; /* opaque */

/* Reads a tokenizer file (version 2, or version 1 which implies V 50257 and EOT 50256). */
ridge_status ridge_llmc_tokenizer_read(const char *path, ridge_llmc_tokenizer **out);
void ridge_llmc_tokenizer_destroy(ridge_llmc_tokenizer *tok); /* NULL is a no-op */
uint32_t ridge_llmc_tokenizer_vocab_size(const ridge_llmc_tokenizer *tok);
uint32_t ridge_llmc_tokenizer_eot(const ridge_llmc_tokenizer *tok);
/* The bytes of token id (not NUL-terminated) and their count; NULL if id >= vocab size. */
const uint8_t *ridge_llmc_tokenizer_decode(const ridge_llmc_tokenizer *tok, uint32_t id,
                                           size_t *len);
/* Writes a version-2 tokenizer file: piece i is lens[i] (1..255) bytes at pieces[i]. */
ridge_status ridge_llmc_tokenizer_write(const char *path, uint32_t vocab_size, uint32_t eot,
                                        const uint8_t *const *pieces, const uint8_t *lens);

/* ---- llm.c's random numbers -------------------------------------------------------------- */

/* MT19937 (Matsumoto and Nishimura), seeded and drawn as PyTorch and llm.c do: seeded 137 the
 * first outputs are 4053805790, 2173880614, 380293709, ... */
typedef struct ridge_mt19937 {
    uint32_t state[624];
    int left;
    int next;
} ridge_mt19937;

void ridge_mt19937_seed(ridge_mt19937 *rng, uint32_t seed);
uint32_t ridge_mt19937_u32(ridge_mt19937 *rng);
/* Uniform in [0, 1) from the low 24 bits of one draw (llm.c's randfloat32). */
float ridge_mt19937_f32(ridge_mt19937 *rng);

/* ---- the data loader (llm.c's dataloader.h semantics, one process) ------------------------ */

typedef struct ridge_llmc_loader ridge_llmc_loader; /* opaque */

/* Opens every shard matching the glob `pattern` (sorted, as glob(3) returns them), checks each
 * header and that each holds at least B*T+1 tokens. shuffle = 1 is llm.c's training loader
 * (an MT19937 seeded 42 permutes the shards and, per shard, the samples, afresh each epoch);
 * shuffle = 0 its sequential validation loader. Token ids are checked against vocab_size when
 * a shard is loaded. */
ridge_status ridge_llmc_loader_create(const char *pattern, size_t B, size_t T, int vocab_size,
                                      int shuffle, ridge_llmc_loader **out);
/* The same as one of nranks data-parallel processes (llm.c's dataloader_init with process_rank
 * and num_processes): a sample is then a global batch of nranks*B*T tokens (a shard has
 * floor((ntok-1)/(nranks*B*T)) of them) and this rank reads its B*T+1 tokens at offset rank*B*T
 * within it, so the ranks' batches together are exactly the batch of one process with
 * nranks*B rows. Departure from llm.c: every rank seeds the shuffle with 42 (llm.c: 42 + rank),
 * so that the ranks agree on the sample order and N ranks train on the same data as 1. */
ridge_status ridge_llmc_loader_create_rank(const char *pattern, size_t B, size_t T,
                                           int vocab_size, int shuffle, int rank, int nranks,
                                           ridge_llmc_loader **out);
void ridge_llmc_loader_destroy(ridge_llmc_loader *ld); /* NULL is a no-op */
/* Back to the first batch (for a shuffling loader: a new epoch, new permutations). */
ridge_status ridge_llmc_loader_reset(ridge_llmc_loader *ld);
/* The next batch: *inputs and *targets point at B*T ids owned by the loader, valid until the
 * next call. targets[i] is the token after inputs[i]. */
ridge_status ridge_llmc_loader_next(ridge_llmc_loader *ld, const int **inputs,
                                    const int **targets);
size_t ridge_llmc_loader_num_tokens(const ridge_llmc_loader *ld); /* over all shards */
size_t ridge_llmc_loader_num_shards(const ridge_llmc_loader *ld);

/* ---- training state (llm.c's train_gpt2.cu state file) --------------------------------- */

#define RIDGE_LLMC_STATE_MAGIC 20240527

/* Writes what resuming a run needs besides the checkpoint, in llm.c's layout: header
 * [0] 20240527, [1] 1, [2] 1 process, [3] rank 0, [4] 0 (no master weights), [5] shuffle,
 * [10] step (optimizer steps done), [20..23] the sampler's RNG state (u64, twice),
 * [30..33] the loader's shard and sample position (u64); then the AdamW moments m and v
 * (nparams fp32 each) and, for a shuffling loader, its shard order, the current shard's sample
 * order and its MT19937 state (llm.c's 2520-byte struct). */
ridge_status ridge_llmc_state_write(const char *path, int step, uint64_t sample_rng,
                                    const ridge_llmc_loader *ld, const float *m, const float *v,
                                    size_t nparams);
/* Reads such a file back into the loader (which must be over the same shards with the same
 * B, T and shuffle) and m, v (nparams each); every field is checked. On failure m, v and the
 * loader's position are undefined: reset or destroy the loader. */
ridge_status ridge_llmc_state_read(const char *path, int *step, uint64_t *sample_rng,
                                   ridge_llmc_loader *ld, float *m, float *v, size_t nparams);

#ifdef __cplusplus
}
#endif
#endif /* RIDGE_LLMC_H */
