/* Status names and the per-thread last-error message. */
#include <stdarg.h>
#include <stdio.h>

#include "core/internal.h"

static _Thread_local char last_error[512];

const char *ridge_status_str(ridge_status s)
{
    switch (s) {
    case RIDGE_OK: return "ok";
    case RIDGE_EINVAL: return "invalid argument";
    case RIDGE_ENOMEM: return "out of memory";
    case RIDGE_EIO: return "i/o error";
    case RIDGE_EFORMAT: return "bad file format";
    case RIDGE_EUNSUPPORTED: return "unsupported";
    case RIDGE_EOVERFLOW: return "overflow";
    case RIDGE_EINTERNAL: return "internal error";
    }
    return "unknown status";
}

const char *ridge_last_error(void)
{
    return last_error;
}

ridge_status ridge_error(ridge_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return s;
}
