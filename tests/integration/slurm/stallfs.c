/*
 * stallfs.c - a file system that stalls, for the controller-check bound
 * (tests/integration/slurm_lua.sh): what a hung NFS server does to a reader,
 * for real, through the kernel's FUSE client.  `stallfs SRC MOUNTPOINT
 * [FUSE options]` serves one directory, /model, with SRC's bytes as
 * /model/config.json: lookups, stat and open answer at once, every read
 * blocks until the file system is unmounted (the reader waits in the kernel,
 * as on a stalled mount; SIGKILL still ends it).  Build: cc stallfs.c
 * $(pkg-config --cflags --libs fuse3).
 */
#define FUSE_USE_VERSION 31
#include <errno.h>
#include <fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static off_t size_of_src;

static int st_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
    (void)fi;
    memset(st, 0, sizeof *st);
    if (!strcmp(path, "/") || !strcmp(path, "/model")) {
        st->st_mode = S_IFDIR | 0755;
        st->st_nlink = 2;
        return 0;
    }
    if (!strcmp(path, "/model/config.json")) {
        st->st_mode = S_IFREG | 0644;
        st->st_nlink = 1;
        st->st_size = size_of_src;
        return 0;
    }
    return -ENOENT;
}

static int st_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
    (void)off;
    (void)fi;
    (void)flags;
    fill(buf, ".", NULL, 0, 0);
    fill(buf, "..", NULL, 0, 0);
    if (!strcmp(path, "/"))
        fill(buf, "model", NULL, 0, 0);
    else if (!strcmp(path, "/model"))
        fill(buf, "config.json", NULL, 0, 0);
    else
        return -ENOENT;
    return 0;
}

static int st_open(const char *path, struct fuse_file_info *fi)
{
    if (strcmp(path, "/model/config.json"))
        return -ENOENT;
    fi->direct_io = 1; /* every read reaches st_read: nothing from the page cache */
    return 0;
}

static int st_read(const char *path, char *buf, size_t size, off_t off,
                   struct fuse_file_info *fi)
{
    (void)path;
    (void)buf;
    (void)size;
    (void)off;
    (void)fi;
    for (;;)
        pause(); /* the server never answers: the reader stalls */
    return -EIO;
}

static const struct fuse_operations ops = {
    .getattr = st_getattr, .readdir = st_readdir, .open = st_open, .read = st_read,
};

int main(int argc, char **argv)
{
    struct stat st;
    if (argc < 3 || stat(argv[1], &st)) {
        fprintf(stderr, "usage: stallfs SRC MOUNTPOINT [FUSE options]\n");
        return 2;
    }
    size_of_src = st.st_size;
    return fuse_main(argc - 1, argv + 1, &ops, NULL);
}
