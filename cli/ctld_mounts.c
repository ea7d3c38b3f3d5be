/*
 * ctld_mounts.c - the file systems a check of fitgate ctld reads, and whether its child was
 * waiting on one when its time ran out (ctld.h; the stall window of job_submit.lua).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ctld.h"

/*
 * The file systems a check of this job reads, as mount points: where its model and config
 * files are (relative ones from --base-dir), and for a model named by id the site's
 * ModelDirs= and CacheDir=.  Found from the strings and /proc/self/mountinfo alone: nothing
 * on them is touched (a stalled one would hang this process too).  job_submit.lua skips the
 * check of a job on a file system whose check timed out moments ago (--stalled), and only
 * of such a job: a stalled scratch mount does not open the door for jobs elsewhere.
 */
static void add_path(const struct ctld *c, const char *p, size_t n, char **out, size_t *k)
{
    const char *base = fg__ctld_arg_value(c, "--base-dir");
    if (!n || *k == CTLD_MAX_PATHS)
        return;
    if (p[0] != '/' && (!base || base[0] != '/'))
        return; /* relative to nothing known: no file system to name */
    if (asprintf(&out[*k], "%s%s%.*s", p[0] == '/' ? "" : base, p[0] == '/' ? "" : "/",
                 (int)n, p) > 0)
        (*k)++;
    else
        out[*k] = NULL;
}

static size_t job_paths(const struct ctld *c, char **out)
{
    size_t k = 0;
    const char *m = c->model ? c->model : "";
    add_path(c, m, strlen(m), out, &k);
    const char *slash = strchr(m, '/');
    if (m[0] && m[0] != '/' && m[0] != '.' && slash && !strchr(slash + 1, '/')) {
        /* org/name: read from the site's directories and cache */
        for (const char *d = c->pol.model_dirs; *d;) {
            size_t n = strcspn(d, ":");
            add_path(c, d, n, out, &k);
            d += n + (d[n] == ':');
        }
        add_path(c, c->pol.cache_dir, strcspn(c->pol.cache_dir, "%"), out, &k);
    }
    for (size_t i = 0; i < c->n_opts; i++) {
        if (strncmp(c->opts[i], "--ft-config=", 12))
            continue;
        for (const char *f = c->opts[i] + 12; *f;) { /* [FORMAT:]FILE,... */
            size_t n = strcspn(f, ","), colon = strcspn(f, ":/");
            const char *file = colon < n && f[colon] == ':' ? f + colon + 1 : f;
            add_path(c, file, n - (size_t)(file - f), out, &k);
            f += n + (f[n] == ',');
        }
    }
    return k;
}

/* mountinfo's octal escapes (\040 a blank) undone in place. */
static void unoctal(char *s)
{
    char *o = s;
    for (char *p = s; *p; p++) {
        if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
            p[3] >= '0' && p[3] <= '7') {
            *o++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
            p += 3;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
}

/* The mount point path is on (the longest that holds it), into buf; false when none. */
static bool mount_of(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    char line[4096], best[4096] = "";
    size_t best_n = 0;
    if (!f)
        return false;
    while (fgets(line, sizeof line, f)) {
        char mp[4096];
        /* ID PARENT MAJ:MIN ROOT MOUNTPOINT ... */
        if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) != 1)
            continue;
        unoctal(mp);
        size_t n = strlen(mp);
        bool holds = !strcmp(mp, "/") ||
                     (!strncmp(path, mp, n) && (path[n] == '/' || path[n] == '\0'));
        if (holds && n >= best_n) {
            snprintf(best, sizeof best, "%s", mp);
            best_n = n;
        }
    }
    fclose(f);
    snprintf(buf, cap, "%s", best);
    return best[0] != '\0';
}

size_t fg__ctld_job_mounts(const struct ctld *c, char (*mounts)[1024])
{
    char *paths[CTLD_MAX_PATHS] = {0};
    size_t n = job_paths(c, paths), k = 0;
    for (size_t i = 0; i < n; i++) {
        char mp[1024];
        bool seen = false;
        if (!mount_of(paths[i], mp, sizeof mp))
            continue;
        for (size_t j = 0; j < k; j++)
            seen |= !strcmp(mounts[j], mp);
        if (!seen)
            snprintf(mounts[k++], sizeof mounts[0], "%s", mp);
    }
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    return k;
}

const char *fg__ctld_on_stalled(const struct ctld *c, char (*mounts)[1024], size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < c->n_stalled; j++)
            if (!strcmp(mounts[i], c->stalled[j]))
                return mounts[i];
    return NULL;
}

/* The system calls a check makes on the files it reads: one it is blocked in when its time
 * runs out is a file system that does not answer (an NFS server gone, a FUSE server that never
 * replies), not a check computing. */
static const long fs_calls[] = {
    SYS_read, SYS_pread64, SYS_readv, SYS_openat, SYS_fstat, SYS_newfstatat, SYS_getdents64,
    SYS_faccessat, SYS_readlinkat, SYS_close, SYS_statfs, SYS_fstatfs,
#ifdef SYS_open
    SYS_open, SYS_stat, SYS_lstat, SYS_access, SYS_readlink,
#endif
#ifdef SYS_statx
    SYS_statx,
#endif
#ifdef SYS_openat2
    SYS_openat2,
#endif
#ifdef SYS_faccessat2
    SYS_faccessat2,
#endif
};

/* Whether process pid waits on a file system: blocked in one of fs_calls
 * (/proc/PID/syscall, which this process may read of its own child), or in the kernel's
 * uninterruptible wait (/proc/PID/stat state D). */
bool fg__ctld_waits_on_files(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/syscall", (int)pid);
    FILE *f = fopen(path, "re");
    if (f) {
        char *end;
        bool got = fgets(buf, sizeof buf, f) != NULL;
        fclose(f);
        long nr = got ? strtol(buf, &end, 10) : -1;
        for (size_t i = 0; got && end != buf && i < sizeof fs_calls / sizeof fs_calls[0]; i++)
            if (nr == fs_calls[i])
                return true;
    }
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if (!(f = fopen(path, "re")))
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *close_paren = strrchr(buf, ')'); /* after the command name, which may hold ')' */
    return close_paren && close_paren[1] == ' ' && close_paren[2] == 'D';
}
