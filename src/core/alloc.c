/* 64-byte aligned allocation and overflow-checked size arithmetic. */
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

void *ridge_malloc(size_t bytes)
{
    if (bytes == 0) return NULL;
    size_t rounded = (bytes + RIDGE_ALIGN - 1) & ~(size_t)(RIDGE_ALIGN - 1);
    if (rounded < bytes) return NULL;
    return aligned_alloc(RIDGE_ALIGN, rounded);
}

void *ridge_calloc(size_t count, size_t size)
{
    size_t bytes;
    if (__builtin_mul_overflow(count, size, &bytes)) return NULL;
    void *p = ridge_malloc(bytes);
    if (p) memset(p, 0, bytes);
    return p;
}

void ridge_free(void *p)
{
    free(p);
}

ridge_status ridge_size_mul(size_t a, size_t b, const char *what, size_t *out)
{
    if (__builtin_mul_overflow(a, b, out))
        return ridge_error(RIDGE_EOVERFLOW, "%s: %zu x %zu overflows size_t", what, a, b);
    return RIDGE_OK;
}
