/* Shared helpers for ridge's libFuzzer targets (fuzz/README in docs/RELIABILITY.md).
 *
 * ridge's readers take a path, so each input is written to an anonymous in-memory file
 * (memfd) and the reader is given /proc/self/fd/N: the real open/fstat/read path is what is
 * fuzzed, with no disk traffic and nothing left behind. */
#ifndef RIDGE_FUZZ_H
#define RIDGE_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ridge/nn.h" /* ridge_crc32 */

typedef struct fuzz_file {
    int fd;
    char path[64];
} fuzz_file;

/* Writes data to a fresh memfd; aborts (a harness bug, not a finding) if that fails. */
static inline void fuzz_file_open(fuzz_file *f, const void *data, size_t size)
{
    f->fd = memfd_create("ridge-fuzz", 0);
    if (f->fd < 0) abort();
    const unsigned char *p = (const unsigned char *)data;
    while (size) {
        ssize_t w = write(f->fd, p, size);
        if (w <= 0) abort();
        p += w, size -= (size_t)w;
    }
    snprintf(f->path, sizeof f->path, "/proc/self/fd/%d", f->fd);
}

static inline void fuzz_file_close(fuzz_file *f) { close(f->fd); }

/* Little-endian reads from the input that never run past its end (missing bytes are 0). */
static inline uint64_t fuzz_take(const uint8_t **p, size_t *n, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) {
        uint64_t b = 0;
        if (*n) b = **p, (*p)++, (*n)--;
        v |= b << (8 * i);
    }
    return v;
}

/* ridge's checkpoints end with a CRC-32 (little-endian) of every byte before it: writes a
 * copy of the input with that CRC rewritten to the memfd, so that mutations reach the header
 * checks, the allocation and the body read instead of stopping at the CRC (which
 * tests/test-*.c check on their own). */
static inline void fuzz_file_open_crc(fuzz_file *f, const uint8_t *data, size_t size)
{
    unsigned char *buf = (unsigned char *)malloc(size ? size : 1);
    if (!buf) abort();
    memcpy(buf, data, size);
    if (size >= 4) {
        uint32_t crc = ridge_crc32(0, buf, size - 4);
        for (int i = 0; i < 4; i++) buf[size - 4 + i] = (unsigned char)(crc >> (8 * i));
    }
    fuzz_file_open(f, buf, size);
    free(buf);
}

#endif
