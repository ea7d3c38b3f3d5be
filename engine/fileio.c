#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
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
    int fd = fg__open_regular(path);
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
