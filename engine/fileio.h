/*
 * fileio.h - internal: opening files that users name (model paths, tables,
 * policies, tokens, cache entries) without ever blocking.
 */
#ifndef FG_FILEIO_H
#define FG_FILEIO_H

/*
 * Open path read-only without blocking on a FIFO or a device (O_NONBLOCK;
 * a FIFO with no writer would otherwise hang sbatch or slurmstepd), then
 * refuse anything but a regular file.  Returns the descriptor (O_CLOEXEC,
 * blocking mode restored), or -1 with errno set: ENOENT / ENOTDIR when
 * absent, EINVAL when not a regular file, else the open error.
 */
int fg__open_regular(const char *path);

#endif
