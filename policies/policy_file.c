/*
 * policy_file.c - reading a policy file atomically (fg__policy_read, for fg_policy_load in
 * policy.h): the whole file at once, and again while it changes under the read or was
 * changed a moment ago (rewritten in place, perhaps half-written).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "policy.h"
#include "util/fileio.h"

#define POLICY_MAX_FILE (1u << 20)

/* A file changed within this long is still being written (an editor or `cat >` rewriting it
 * in place): fg_policy_load waits for it to settle rather than parse half of it. */
#define POLICY_SETTLE_NS (100 * 1000000LL)
#define POLICY_SETTLE_TRIES 5

static long long ns_of(const struct timespec *t)
{
    return (long long)t->tv_sec * 1000000000LL + t->tv_nsec;
}

/* The whole file into *buf (NUL-terminated) with its stat before and after the read. */
static int read_once(const char *path, char **buf, size_t *len, struct stat *before,
                     struct stat *after, struct fg_err *err)
{
    int fd = fg__open_regular(path), rc = 0;
    *buf = NULL;
    if (fd < 0)
        return fg_err_set(err, errno == ENOENT ? FG_E_NOTFOUND : FG_E_IO, "%s: %s", path,
                          errno == EINVAL ? "not a regular file" : strerror(errno));
    if (fstat(fd, before) || !S_ISREG(before->st_mode)) {
        rc = fg_err_set(err, FG_E_IO, "%s: not a regular file", path);
        goto out;
    }
    if ((rc = fg__site_file_check(before, path, err)))
        goto out;
    if (before->st_size > (off_t)POLICY_MAX_FILE) {
        rc = fg_err_set(err, FG_E_RANGE, "%s: larger than %u bytes", path, POLICY_MAX_FILE);
        goto out;
    }
    size_t size = (size_t)before->st_size, got = 0;
    if (!(*buf = malloc(size + 1))) {
        rc = fg_err_set(err, FG_E_NOMEM, "%s: out of memory", path);
        goto out;
    }
    while (got < size) {
        ssize_t n = read(fd, *buf + got, size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    (*buf)[got] = '\0';
    *len = got;
    if (fstat(fd, after))
        rc = fg_err_set(err, FG_E_IO, "%s: %s", path, strerror(errno));
out:
    close(fd);
    if (rc) {
        free(*buf);
        *buf = NULL;
    }
    return rc;
}

/*
 * Read atomically: the whole file at once, then its size, mtime and ctime compared with
 * those before the read; a file that changed during the read, or was changed less than
 * POLICY_SETTLE_NS ago (rewritten in place, perhaps half-written), is read again once it
 * has settled.  A policy installed by rename(2) is always whole; one that does not settle
 * within the tries fails FG_E_IO, and the caller fails closed (docs/plugin.md).
 */
int fg__policy_read(const char *path, char **text, size_t *text_len, struct fg_err *err)
{
    char *buf = NULL;
    size_t len = 0;
    struct stat a, b;
    for (int t = 0; t < POLICY_SETTLE_TRIES; t++) {
        int rc = read_once(path, &buf, &len, &a, &b, err);
        if (rc)
            return rc;
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        long long age = ns_of(&now) - ns_of(&b.st_mtim);
        long long cage = ns_of(&now) - ns_of(&b.st_ctim);
        bool same = a.st_size == b.st_size && (size_t)b.st_size == len &&
                    ns_of(&a.st_mtim) == ns_of(&b.st_mtim) &&
                    ns_of(&a.st_ctim) == ns_of(&b.st_ctim);
        if (cage < age)
            age = cage;
        if (same && age >= POLICY_SETTLE_NS) {
            *text = buf;
            *text_len = len;
            return 0;
        }
        free(buf);
        buf = NULL;
        long long wait = same && age >= 0 ? POLICY_SETTLE_NS - age : POLICY_SETTLE_NS / 4;
        struct timespec ts = {.tv_sec = wait / 1000000000LL, .tv_nsec = wait % 1000000000LL};
        nanosleep(&ts, NULL);
    }
    return fg_err_set(err, FG_E_IO, "%s: still being written (changed within %lld ms on "
                      "every one of %d reads): install it with a rename (mv), not in place",
                      path, POLICY_SETTLE_NS / 1000000, POLICY_SETTLE_TRIES);
}
