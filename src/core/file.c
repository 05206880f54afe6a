/* Writing a file so that a crash never leaves it half-written: the bytes go to PATH.tmp.PID,
 * are flushed to the disk, and the temporary file is renamed over PATH. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/internal.h"

ridge_status ridge_file_write_atomic(const char *path, const char *who,
                                     const ridge_file_part *parts, size_t nparts)
{
    char tmp[4096];
    int n = snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof tmp)
        return ridge_error(RIDGE_EINVAL, "%s: path too long: %s", who, path);
    FILE *f = fopen(tmp, "wb");
    if (!f) return ridge_error(RIDGE_EIO, "%s: cannot create: %s", tmp, strerror(errno));
    int ok = 1;
    for (size_t i = 0; i < nparts && ok; i++)
        ok = parts[i].bytes == 0 || fwrite(parts[i].data, 1, parts[i].bytes, f) == parts[i].bytes;
    ok = ok && fflush(f) == 0 && fsync(fileno(f)) == 0;
    int err = errno;
    if (fclose(f) != 0 && ok) ok = 0, err = errno;
    if (!ok || rename(tmp, path) != 0) {
        if (ok) err = errno;
        unlink(tmp);
        return ridge_error(RIDGE_EIO, "%s: cannot write: %s", path, strerror(err));
    }
    return RIDGE_OK;
}
