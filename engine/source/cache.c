/*
 * cache.c - fitgate's own cache of what it fetched from the hub (cache.h).
 */
#include "source/cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "source/config.h"
#include "util/fileio.h"
#include "util/log.h"

/*
 * Trust rule for a cache directory or file: ours (the site cache may also
 * be root's) and writable by nobody else, so no other user can plant a
 * config that gates our job.
 */
static int check_owner(const struct stat *st, bool site, const char *what, struct fg_err *err)
{
    uid_t me = geteuid();
    if (st->st_uid != me && !(site && st->st_uid == 0))
        return fg_err_set(err, FG_E_DENIED, "%.300s is owned by uid %u, not by you (uid %u); "
                          "refusing to use it as a cache: fix the owner or use another cache "
                          "directory", what, (unsigned)st->st_uid, (unsigned)me);
    if (st->st_mode & (S_IWGRP | S_IWOTH))
        return fg_err_set(err, FG_E_DENIED, "%.300s is group- or world-writable (mode %03o); "
                          "refusing to use it as a cache: chmod go-w it", what,
                          (unsigned)(st->st_mode & 0777));
    return 0;
}

/* mkdir -p with 0700 for components that do not exist yet. */
static int mkdirs(const char *dir, struct fg_err *err)
{
    char buf[FG__CACHE_DIR_MAX];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(buf, 0700) != 0 && errno != EEXIST)
                return fg_err_set(err, FG_E_IO, "cannot create cache directory %.300s: %s", buf,
                                  strerror(errno));
            *p = c;
            if (!c)
                break;
        }
    }
    return 0;
}

/* Open the cache root (following a symlink the user set up), checked. */
static int open_root(const char *dir, bool site, bool create, int *fd, struct fg_err *err)
{
    *fd = -1;
    if (create && !site) {
        int rc = mkdirs(dir, err);
        if (rc)
            return rc;
    }
    int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d < 0) {
        if (errno == ENOENT)
            return FG_E_NOTFOUND;
        return fg_err_set(err, FG_E_IO, "cache directory %.300s: %s", dir, strerror(errno));
    }
    struct stat st;
    int rc = fstat(d, &st) ? fg_err_set(err, FG_E_IO, "%.300s: %s", dir, strerror(errno))
                           : check_owner(&st, site, dir, err);
    if (rc) {
        close(d);
        return rc;
    }
    *fd = d;
    return 0;
}

/* One directory level below an open one: no symlinks, same trust rule. */
static int open_sub(int parent, const char *name, bool site, bool create, const char *what,
                    int *fd, struct fg_err *err)
{
    *fd = -1;
    if (create && mkdirat(parent, name, 0700) != 0 && errno != EEXIST)
        return fg_err_set(err, FG_E_IO, "cannot create %.300s/%.100s: %s", what, name,
                          strerror(errno));
    int d = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (d < 0) {
        if (errno == ENOENT)
            return FG_E_NOTFOUND;
        return fg_err_set(err, FG_E_IO, "%.300s/%.100s: %s", what, name, strerror(errno));
    }
    struct stat st;
    char full[FG__CACHE_DIR_MAX + 300];
    snprintf(full, sizeof full, "%s/%s", what, name);
    int rc = fstat(d, &st) ? fg_err_set(err, FG_E_IO, "%.300s: %s", full, strerror(errno))
                           : check_owner(&st, site, full, err);
    if (rc) {
        close(d);
        return rc;
    }
    *fd = d;
    return 0;
}

/* Cache key: models--org--name/<rev with '/' as %2F> (revisions hold no '%'). */
static void cache_names(const struct fg__cache_key *k, const char *rev, char *repo, size_t rcap,
                        char *revdir, size_t vcap)
{
    snprintf(repo, rcap, "models--%s--%s", k->org, k->name);
    size_t o = 0;
    for (const char *p = rev; *p && o + 4 < vcap; p++) {
        if (*p == '/') {
            memcpy(revdir + o, "%2F", 3);
            o += 3;
        } else {
            revdir[o++] = *p;
        }
    }
    revdir[o] = '\0';
}

/* Open root/models--org--name/<rev>; create when asked. */
static int open_entry_dir(const char *root, bool site, bool create,
                          const struct fg__cache_key *k, const char *rev, int *fd,
                          struct fg_err *err)
{
    char repo[256], revdir[FG__CACHE_REV_MAX * 3 + 1], what[FG__CACHE_DIR_MAX + 300];
    cache_names(k, rev, repo, sizeof repo, revdir, sizeof revdir);
    int rootfd, repofd;
    int rc = open_root(root, site, create, &rootfd, err);
    if (rc)
        return rc;
    rc = open_sub(rootfd, repo, site, create, root, &repofd, err);
    close(rootfd);
    if (rc)
        return rc;
    snprintf(what, sizeof what, "%s/%s", root, repo);
    rc = open_sub(repofd, revdir, site, create, what, fd, err);
    close(repofd);
    return rc;
}

int fg__cache_read(const struct fg__cache_key *k, const char *root, bool site, uint64_t max_bytes,
                   uint64_t ttl_s, struct fg__cache_entry *e, struct fg_err *err)
{
    int dfd;
    int rc = open_entry_dir(root, site, false, k, k->rev, &dfd, err);
    if (rc)
        return rc;
    char repo[256], revdir[FG__CACHE_REV_MAX * 3 + 1];
    cache_names(k, k->rev, repo, sizeof repo, revdir, sizeof revdir);
    snprintf(e->path, sizeof e->path, "%s/%s/%s/%s", root, repo, revdir, k->file);
    struct stat st;
    int fd = fg__openat_regular(dfd, k->file, O_NOFOLLOW, &st);
    close(dfd);
    if (fd < 0)
        return errno == ENOENT ? FG_E_NOTFOUND
               : errno == EINVAL ? fg_err_set(err, FG_E_IO, "%.300s: not a regular file", e->path)
                                 : fg_err_set(err, FG_E_IO, "%.300s: %s", e->path, strerror(errno));
    if ((rc = check_owner(&st, site, e->path, err))) {
        close(fd);
        return rc;
    }
    rc = fg__read_fd(fd, &st, e->path, max_bytes, &e->text, &e->len, err);
    close(fd);
    if (rc)
        return rc;
    if (!fg__config_is_object(e->text, e->len)) {
        free(e->text);
        e->text = NULL;
        return fg_err_set(err, FG_E_PARSE, "%.300s: cache entry is not a JSON object; delete it",
                          e->path);
    }
    int64_t age = (int64_t)time(NULL) - (int64_t)st.st_mtime;
    e->age_s = age < 0 ? 0 : age;
    /* a commit never changes; a branch or tag may move under us */
    e->fresh = k->pinned || e->age_s < (int64_t)ttl_s;
    return 0;
}

/* Write text as root/models--org--name/<rev>/<file>: temp file, fsync, rename. */
static int cache_write(const char *root, bool site, const struct fg__cache_key *k,
                       const char *rev, const char *text, size_t len, struct fg_err *err)
{
    int dfd;
    int rc = open_entry_dir(root, site, true, k, rev, &dfd, err);
    if (rc)
        return rc;
    char tmp[64];
    int fd = -1;
    static unsigned counter;
    for (int tries = 0; tries < 16 && fd < 0; tries++) {
        snprintf(tmp, sizeof tmp, ".%.20s.%ld.%u.%ld", k->file, (long)getpid(), counter++,
                 (long)time(NULL));
        fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        rc = fg_err_set(err, FG_E_IO, "cache %.300s: cannot create a temporary file: %s", root,
                        strerror(errno));
        close(dfd);
        return rc;
    }
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            rc = fg_err_set(err, FG_E_IO, "cache %.300s: write: %s", root, strerror(errno));
            break;
        }
        off += (size_t)w;
    }
    if (!rc && fsync(fd) != 0)
        rc = fg_err_set(err, FG_E_IO, "cache %.300s: fsync: %s", root, strerror(errno));
    if (close(fd) != 0 && !rc)
        rc = fg_err_set(err, FG_E_IO, "cache %.300s: close: %s", root, strerror(errno));
    if (!rc && renameat(dfd, tmp, dfd, k->file) != 0)
        rc = fg_err_set(err, FG_E_IO, "cache %.300s: rename: %s", root, strerror(errno));
    if (rc)
        unlinkat(dfd, tmp, 0);
    close(dfd);
    return rc;
}

void fg__cache_store(const struct fg__cache_key *k, const char *cache_dir,
                     const char *site_cache_dir, const char *also, const char *text, size_t len,
                     char *note, size_t note_cap)
{
    const char *root = cache_dir[0] ? cache_dir : site_cache_dir;
    bool site = !cache_dir[0];
    if (!root[0])
        return;
    if (site) {
        struct stat st;
        if (stat(root, &st) != 0 || st.st_uid != geteuid())
            return; /* a site cache someone else owns is read-only to us */
    }
    struct fg_err e = {0};
    int rc = cache_write(root, site, k, k->rev, text, len, &e);
    /* the answer for a moving ref is also the answer for the commit it pointed to */
    if (!rc && also && also[0])
        rc = cache_write(root, site, k, also, text, len, &e);
    if (rc) {
        fg__log(FG_LOG_WARN, "not cached: %s", e.detail);
        snprintf(note, note_cap, "not cached: %.280s", e.detail);
    }
}
