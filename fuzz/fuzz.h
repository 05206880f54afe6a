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

#endif
