#include "util/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int fg__openat_regular(int dirfd, const char *name, int flags, struct stat *st)
{
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | flags);
    if (fd < 0)
        return -1;
    struct stat own;
    st = st ? st : &own;
    if (fstat(fd, st) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    if (!S_ISREG(st->st_mode)) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

int fg__open_regular(const char *path)
{
    return fg__openat_regular(AT_FDCWD, path, 0, NULL);
}

int fg__read_file(const char *path, size_t max, char **text, size_t *len)
{
    return fg__read_file_st(path, max, text, len, NULL);
}

int fg__read_file_st(const char *path, size_t max, char **text, size_t *len, struct stat *st)
{
    int fd = fg__openat_regular(AT_FDCWD, path, 0, st);
    if (fd < 0)
        return -1;
    /* room for max + 1 bytes: reading that many means the file is too long */
    size_t cap = max < 65536 ? max + 1 : 65536, n = 0;
    char *buf = malloc(cap + 1);
    int e = buf ? 0 : ENOMEM;
    while (!e) {
        if (n == cap) {
            if (cap == max + 1) {
                e = EFBIG;
                break;
            }
            size_t grown = cap > (max + 1) / 2 ? max + 1 : cap * 2;
            char *nb = realloc(buf, grown + 1);
            if (!nb) {
                e = ENOMEM;
                break;
            }
            buf = nb;
            cap = grown;
        }
        ssize_t k = read(fd, buf + n, cap - n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            e = EIO;
        else if (k == 0)
            break;
        else
            n += (size_t)k;
    }
    close(fd);
    if (e) {
        free(buf);
        errno = e;
        return -1;
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return 0;
}

int fg__read_fd(int fd, const struct stat *st, const char *what, uint64_t max, char **text,
                size_t *len, struct fg_err *err)
{
    if ((uint64_t)st->st_size > max)
        return fg_err_set(err, FG_E_RANGE, "%.300s: %lld bytes, more than the %llu accepted", what,
                          (long long)st->st_size, (unsigned long long)max);
    char *buf = malloc((size_t)st->st_size + 1);
    if (!buf)
        return fg_err_set(err, FG_E_NOMEM, "out of memory");
    size_t got = 0;
    while (got < (size_t)st->st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st->st_size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            free(buf);
            return fg_err_set(err, FG_E_IO, "%.300s: %s", what, r < 0 ? strerror(errno) :
                              "shorter than its size");
        }
        got += (size_t)r;
    }
    buf[got] = '\0';
    *text = buf;
    *len = got;
    return 0;
}

static unsigned site_owner;
static int site_owner_pinned;

void fg__site_owner_pin(unsigned uid)
{
    site_owner = uid;
    site_owner_pinned = 1;
}

int fg__site_file_check(const struct stat *st, const char *what, struct fg_err *err)
{
    unsigned owner = site_owner_pinned ? site_owner : (unsigned)geteuid();
    if (st->st_uid != 0 && (unsigned)st->st_uid != owner)
        return fg_err_set(err, FG_E_DENIED, "%.300s: owned by uid %u, not by root or uid %u "
                          "(who reads it): a site file another user owns is not the site's "
                          "(chown root %.300s)", what, (unsigned)st->st_uid, owner, what);
    if (st->st_mode & (S_IWGRP | S_IWOTH))
        return fg_err_set(err, FG_E_DENIED, "%.300s: writable by %s (mode %04o): anyone who can "
                          "write it sets the site's rules (chmod go-w %.300s)", what,
                          st->st_mode & S_IWOTH ? "every user" : "its group",
                          (unsigned)(st->st_mode & 07777), what);
    return 0;
}

int fg__path_expand(const char *key, const char *tmpl, const char *user, unsigned uid,
                    char *out, size_t cap, struct fg_err *err)
{
    user = user && *user ? user : "unknown";
    size_t o = 0;
    for (const char *s = tmpl; *s; s++) {
        char piece[24];
        const char *add = piece;
        if (s[0] == '%' && s[1] == 'u') {
            /* a name that would climb out of the directory or into another */
            if (!strcmp(user, ".") || !strcmp(user, "..") || strchr(user, '/'))
                return fg_err_set(err, FG_E_INVAL,
                                  "%s=%s: user name '%s' cannot be part of a path", key, tmpl,
                                  user);
            add = user;
            s++;
        } else if (s[0] == '%' && s[1] == 'U') {
            snprintf(piece, sizeof piece, "%u", uid);
            s++;
        } else {
            piece[0] = *s;
            piece[1] = '\0';
        }
        size_t n = strlen(add);
        if (o + n >= cap)
            return fg_err_set(err, FG_E_RANGE, "%s=%s: too long once expanded", key, tmpl);
        memcpy(out + o, add, n);
        o += n;
    }
    out[o] = '\0';
    return 0;
}
