/*
 * fileio.h - internal: opening files that users name (model paths, tables,
 * policies, tokens, cache entries) without ever blocking.
 */
#ifndef FG_FILEIO_H
#define FG_FILEIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "util/error.h"

/*
 * Open name (relative to dirfd, or AT_FDCWD) read-only without blocking on a
 * FIFO or a device (O_NONBLOCK; a FIFO with no writer would otherwise hang
 * sbatch or slurmstepd), then refuse anything but a regular file.  flags adds
 * open flags (O_NOFOLLOW); st, when not NULL, receives the file's fstat.
 * Returns the descriptor (O_CLOEXEC, blocking mode restored), or -1 with errno
 * set: ENOENT / ENOTDIR when absent, EINVAL when not a regular file, else the
 * open error.
 */
int fg__openat_regular(int dirfd, const char *name, int flags, struct stat *st);

/* fg__openat_regular(AT_FDCWD, path, 0, NULL). */
int fg__open_regular(const char *path);

/*
 * Read all of the regular file at path (opened with fg__open_regular) into a
 * NUL-terminated buffer; the caller frees *text with free().  The size is
 * not trusted from fstat: it reads until end of file, at most max bytes
 * (max < SIZE_MAX).  Returns 0, or -1 with errno set and *text untouched: the
 * fg__open_regular errors (ENOENT / ENOTDIR when absent, EINVAL when not a
 * regular file), EFBIG when longer than max, ENOMEM, EIO when a read fails.
 * Callers word the message.
 */
int fg__read_file(const char *path, size_t max, char **text, size_t *len);

/* fg__read_file, and the file's fstat into *st (not NULL) once it is open. */
int fg__read_file_st(const char *path, size_t max, char **text, size_t *len, struct stat *st);

/*
 * Read all of the open regular file fd, of st's size (its fstat), into a NUL-terminated
 * buffer the caller frees with free(), at most max bytes; the file is not closed.  Fails
 * with FG_E_RANGE (larger than max), FG_E_NOMEM, FG_E_IO (a read fails, or the file is
 * shorter than st says), the detail naming `what`.  *text is set only on success.
 */
int fg__read_fd(int fd, const struct stat *st, const char *what, uint64_t max, char **text,
                size_t *len, struct fg_err *err);

/*
 * A site file (the policy, the GPU table and calibration it names) is refused when anyone but
 * its trusted owner could have written it, as Slurm refuses an insecure plugstack: writable by
 * its group or by all (mode & 022), or owned by someone other than root or the trusted owner.
 * The trusted owner is the effective uid when the first check runs, or the one
 * fg__site_owner_pin() fixed: fitgate ctld pins its own (slurmctld's user) before its child
 * takes the job's uid, so a file the user owns is never the site's.  st is the file's fstat;
 * what names it in the detail.  0, or FG_E_DENIED with the fix in the detail.
 */
int fg__site_file_check(const struct stat *st, const char *what, struct fg_err *err);

/* The trusted owner of site files from now on, in this process and its children. */
void fg__site_owner_pin(unsigned uid);

/*
 * Expand a site path template (the policy's CacheDir, the audit LogFile): %u becomes
 * user (empty or NULL: "unknown"), %U the decimal uid, any other character is copied.
 * The result goes to out (cap bytes, NUL-terminated).  key names the setting in the
 * detail.  Fails with FG_E_INVAL when %u is used and user is ".", ".." or holds a "/"
 * (it would climb out of the directory or into another), FG_E_RANGE when the
 * expansion does not fit in cap.
 */
int fg__path_expand(const char *key, const char *tmpl, const char *user, unsigned uid,
                    char *out, size_t cap, struct fg_err *err);

#endif
