/* Writing a file so that a crash never leaves it half-written (docs/RELIABILITY.md).
 *
 * The bytes go to PATH.tmp.PID in PATH's directory; commit flushes and fsyncs it, renames it
 * over PATH (atomic on POSIX filesystems: PATH is the old file or the new one, never a mix) and
 * fsyncs the directory so the rename itself survives a power loss. A writer killed mid-write
 * leaves its PATH.tmp.PID behind: the next open of PATH, in any process, removes every
 * PATH.tmp.PID whose process no longer exists. One implementation serves both the streaming
 * API (ridge_file_atomic_open/write/commit/abort) and ridge_file_write_atomic. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "core/internal.h"

/* The directory part of path into buf ("." when it has none), 0 if it does not fit. */
static int dir_of(const char *path, char *buf, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return snprintf(buf, size, ".") > 0;
    size_t n = slash == path ? 1 : (size_t)(slash - path); /* "/x" -> "/" */
    if (n >= size) return 0;
    memcpy(buf, path, n);
    buf[n] = '\0';
    return 1;
}

/* If `name` is exactly BASE.tmp.PID (PID: decimal, no sign or leading zero, > 0, fits pid_t)
 * returns PID, else 0. */
static pid_t temp_pid(const char *name, const char *base, size_t nbase)
{
    if (strncmp(name, base, nbase) != 0 || strncmp(name + nbase, ".tmp.", 5) != 0) return 0;
    const char *d = name + nbase + 5;
    if (*d < '1' || *d > '9') return 0;
    long long pid = 0;
    for (; *d; d++) {
        if (*d < '0' || *d > '9') return 0;
        pid = pid * 10 + (*d - '0');
        if (pid > 0x7fffffff) return 0;
    }
    return (pid_t)pid;
}

/* Removes PATH.tmp.PID files left by processes that no longer exist (kill(PID, 0) fails with
 * ESRCH). A live process's file (or one whose owner we may not signal: EPERM) is kept, as is
 * anything not a regular file or not exactly of that form. Best effort: errors are ignored. */
static void remove_stale_temps(const char *path)
{
    char dir[4096];
    if (!dir_of(path, dir, sizeof dir)) return;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t nbase = strlen(base);
    if (nbase == 0) return;
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        pid_t pid = temp_pid(e->d_name, base, nbase);
        if (pid == 0 || pid == getpid()) continue;
        struct stat sb;
        if (fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(sb.st_mode))
            continue;
        if (kill(pid, 0) != 0 && errno == ESRCH) unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
}

ridge_status ridge_file_atomic_open(ridge_file_atomic *a, const char *path, const char *who)
{
    memset(a, 0, sizeof *a);
    if (!path) return ridge_error(RIDGE_EINVAL, "%s: path is NULL", who);
    int n = snprintf(a->tmp, sizeof a->tmp, "%s.tmp.%ld", path, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof a->tmp)
        return ridge_error(RIDGE_EINVAL, "%s: path too long: %s", who, path);
    remove_stale_temps(path);
    a->f = fopen(a->tmp, "wb");
    if (!a->f) return ridge_error(RIDGE_EIO, "%s: cannot create: %s", a->tmp, strerror(errno));
    a->path = path;
    return RIDGE_OK;
}

int ridge_file_atomic_write(ridge_file_atomic *a, const void *data, size_t bytes)
{
    if (a->err == 0 && bytes && fwrite(data, 1, bytes, a->f) != bytes) a->err = errno ? errno : EIO;
    return a->err == 0;
}

void ridge_file_atomic_abort(ridge_file_atomic *a)
{
    if (!a->f) return;
    fclose(a->f);
    unlink(a->tmp);
    a->f = NULL;
}

/* fsyncs PATH's directory, so the rename is on the disk too. Ignored where unsupported
 * (some filesystems refuse fsync on a directory with EINVAL; a directory we may write but not
 * read cannot be opened): the file itself is already durable and in place. */
static void sync_dir(const char *path)
{
    char dir[4096];
    if (!dir_of(path, dir, sizeof dir)) return;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    (void)fsync(fd);
    close(fd);
}

ridge_status ridge_file_atomic_commit(ridge_file_atomic *a)
{
    int err = a->err;
    if (!err && (fflush(a->f) != 0 || fsync(fileno(a->f)) != 0)) err = errno;
    if (fclose(a->f) != 0 && !err) err = errno;
    a->f = NULL;
    if (!err && rename(a->tmp, a->path) != 0) err = errno;
    if (err) {
        unlink(a->tmp);
        return ridge_error(RIDGE_EIO, "%s: cannot write: %s", a->path, strerror(err));
    }
    sync_dir(a->path);
    return RIDGE_OK;
}

ridge_status ridge_file_write_atomic(const char *path, const char *who,
                                     const ridge_file_part *parts, size_t nparts)
{
    ridge_file_atomic a;
    ridge_status st = ridge_file_atomic_open(&a, path, who);
    if (st) return st;
    for (size_t i = 0; i < nparts; i++) ridge_file_atomic_write(&a, parts[i].data, parts[i].bytes);
    return ridge_file_atomic_commit(&a);
}

int ridge_mkdir_parents(const char *path)
{
    char dir[4096];
    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir) return -1;
    for (char *s = dir + 1; *s; s++) {
        if (*s != '/') continue;
        *s = 0;
        if (mkdir(dir, 0755) && errno != EEXIST) return -1;
        *s = '/';
    }
    return 0;
}

ridge_status ridge_cache_file_path(const char *stem, const char *brand, const char *suffix,
                                   char *buf, size_t size)
{
    char key[64];
    size_t k = 0;
    for (const char *s = brand; *s && k + 1 < sizeof key; s++) {
        char c = *s;
        int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '-' || c == '_';
        if (ok) key[k++] = c;
        else if (k && key[k - 1] != '_') key[k++] = '_'; /* one '_' per run of others */
    }
    key[k] = 0;
    if (k == 0) strcpy(key, "unknown");
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n;
    if (xdg && *xdg) n = snprintf(buf, size, "%s/ridge/%s-%s%s", xdg, stem, key, suffix);
    else if (home && *home)
        n = snprintf(buf, size, "%s/.cache/ridge/%s-%s%s", home, stem, key, suffix);
    else return ridge_error(RIDGE_EINVAL, "%s: neither XDG_CACHE_HOME nor HOME is set", stem);
    if (n < 0 || (size_t)n >= size)
        return ridge_error(RIDGE_EINVAL, "%s: cache path buffer of %zu bytes too small", stem,
                           size);
    return RIDGE_OK;
}
