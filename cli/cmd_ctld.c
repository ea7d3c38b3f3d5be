/*
 * fitgate ctld --policy FILE [--run-as UID:GID] [--timeout-ms N] [--on-error allow|reject]
 *              [--key SUBMIT_ID] [--job-id N] [--time-limit MIN] [--skip WHY]
 *              [--stalled MOUNT]...
 *              [--log-file TARGET] [--door job_submit|sbatch|salloc|srun]
 *   (standard input: the check's arguments, each ended by a NUL byte)
 *
 * The controller's check, for contrib/job_submit.lua: what slurmctld runs for
 * a tagged job.  It exists so that the controller door cannot be skipped:
 *
 *   - no shell and no argument limit: the job's options arrive on standard
 *     input, NUL-separated, up to CTLD_MAX_INPUT bytes (a 128 KiB single
 *     argument, or 2 MiB of them, do not make the exec fail);
 *   - a fixed argument vector: the first field is the model, a value and never
 *     an option ("" when the job names it in --ft-config); every other field is
 *     one of the options a job may set, written --NAME=VALUE (a flag --NAME):
 *     the --ft-* table (engine/jobopts.def, --ft-model apart), the GPU request
 *     (--gres, --gpus, --gpus-per-node, one of them), --nodes, --partition and
 *     --base-dir (the job's directory), each at most once.  The site's inputs
 *     (--policy and the GPU table, calibration and topology it names) come from
 *     the policy alone: a --gpus-conf, --policy, --headroom or any other field
 *     is refused as the job's own error (rejected whatever OnError= says, with
 *     an audit line), as is input past CTLD_MAX_INPUT or not NUL-ended.  The
 *     check is handed the fields re-spelt from the table, the model last after
 *     "--" (cli/jobopts.c), so no field is ever read as an option;
 *   - the check runs in a child with the user's identity and supplementary
 *     groups (initgroups(3), as `setpriv --init-groups`): a root:projgroup
 *     0750 model directory is read as the user reads it;
 *   - its time is bounded here (--timeout-ms, default 800): past it the child
 *     is killed, and the job is decided by OnError=;
 *   - every outcome writes one audit line, by this process (slurmctld's user)
 *     into the policy's LogFile=: the child, running as the user, hands its
 *     line over a pipe (fg_audit_redirect) and cannot open the trail itself;
 *     a check that failed (model unreadable, timeout, crash, no answer) writes
 *     an "error" line with the reason;
 *   - a policy that does not load, or whose GpuTable= does not (missing, not a
 *     regular file, malformed, writable by others), fails closed: the job is
 *     rejected (the built-in OnError=reject for tagged jobs), and
 *     slurmctld.log says why;
 *   - the answer is fixed, machine-readable lines (below), every field
 *     percent-encoded, so no user text can be read as part of it.
 *
 * Output, one record a line, fields separated by one space, each field
 * percent-encoded (every byte outside [A-Za-z0-9._:/=,+@-] as %XX):
 *   fitgate-say MSG            a line for the user (slurm.log_user), 0..4
 *   fitgate-log LEVEL MSG      a line for slurmctld.log, LEVEL info | error;
 *                              MSG has its control characters written \xNN
 *   fitgate-stalled MOUNT      a file system the check was waiting on when its
 *                              time ran out (--stalled below), 0..16
 *   fitgate-answer 1 VERDICT REQUEST   last: allow | reject | resize, and the
 *                              request after a resize in Slurm's spelling
 * Exit status 0 when the answer was written, 2 on a bad invocation.
 *
 * --log-file TARGET: the audit lines go there instead of the policy's LogFile= (a file only
 * root can write, or syslog: the controller's trail beyond users' reach, docs/audit.md).
 *
 * --door: the door the audit lines name (contrib/cli_filter.lua runs this in sbatch, salloc
 * and srun, as the user, without --run-as).
 *
 * --skip WHY: no check at all (job_submit.lua when fitgate ctld itself gave no answer in
 * time); the job is decided by OnError= at once and the audit line says WHY.
 *
 * --stalled MOUNT (repeatable, percent-encoded as written): a check that ran out of time
 * while blocked on a file (/proc/PID/syscall: a read, open or stat that a stalled file system
 * never answers; or state D) adds a record `fitgate-stalled MOUNT` for each file system the job reads (its
 * model and config files, or for an org/name model the site's ModelDirs= and CacheDir=, as
 * /proc/self/mountinfo names their mount points).  job_submit.lua hands those back for
 * STALL_S seconds: a job on one of them is decided by OnError= at once, logged; a job on
 * other file systems is checked.  A check that ran out of time computing names none: the
 * job alone is decided by OnError=, the door stays shut for the rest.
 *
 * `fitgate check --policy FILE --lint` (cli/lint.c) is the admin's view of
 * the same policy load: it names the first bad line.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "cli.h"
#include "hw/gpu.h"
#include "jobopts.h"
#include "policy.h"
#include "util/fileio.h"

#define CTLD_MAX_INPUT (16u << 20)
#define CTLD_MAX_ARGS 4096
#define CTLD_MAX_OUTPUT (1u << 20)

/* The options of Slurm's own a job may give (its GPU request, nodes, partition) and its
 * directory; every other field but the --ft-* table is refused. */
static const char *const slurm_opts[] = {"gres", "gpus", "gpus-per-node", "nodes", "partition",
                                         "base-dir"};
#define N_SLURM_OPTS (sizeof slurm_opts / sizeof slurm_opts[0])

#define CTLD_MAX_STALLED 16
#define CTLD_MAX_PATHS 16

struct ctld {
    const char *policy, *key, *skip, *log_file;
    char *stalled[CTLD_MAX_STALLED]; /* --stalled: mount points whose check timed out lately */
    size_t n_stalled;
    bool untagged;
    enum fg_audit_where where; /* --door: job_submit (default), or sbatch / salloc / srun */
    uid_t uid;
    gid_t gid;
    bool run_as;
    long timeout_ms;
    uint64_t job_id;
    uint32_t time_limit;
    enum fg_on_error on_error;
    char user[64];
    struct fg_policy pol;
    bool pol_ok;
    char **args; /* NUL-separated input split, args[0] the model; borrowed from input */
    size_t n_args;
    const char *model;  /* args[0], "" when none */
    char **opts;        /* args[1..] re-spelt from the tables for the check; owned */
    size_t n_opts;
    char refused[400];  /* why the input is not a job's (refused as the job's error) */
};

/* ---- the answer ------------------------------------------------------------------ */

static void put_field(const char *s)
{
    static const char safe[] = "._:/=,+@-";
    putchar(' ');
    if (!*s)
        fputs("%00", stdout); /* an empty field is still one field */
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr(safe, *p))
            putchar(*p);
        else
            printf("%%%02X", *p);
    }
}

static void say(const char *msg)
{
    fputs("fitgate-say", stdout);
    put_field(msg);
    putchar('\n');
}

/* slurmctld.log: control characters (a newline in a job's model name) as \xNN */
static void log_line(const char *level, const char *fmt, ...)
{
    char raw[1024], safe[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)raw; *p && o + 5 < sizeof safe; p++)
        o += (size_t)(*p < 0x20 || *p == 0x7f ? snprintf(safe + o, 5, "\\x%02x", *p)
                                              : (safe[o] = (char)*p, 1));
    safe[o] = '\0';
    fputs("fitgate-log", stdout);
    put_field(level);
    put_field(safe);
    putchar('\n');
}

static void answer(const char *verdict, const char *request)
{
    fputs("fitgate-answer 1", stdout);
    put_field(verdict);
    put_field(request ? request : "");
    putchar('\n');
}

/* ---- the audit line -------------------------------------------------------------- */

/* The value of --name=... among the checked fields (c->opts), or NULL. */
static const char *arg_value(const struct ctld *c, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < c->n_opts; i++)
        if (!strncmp(c->opts[i], name, n) && c->opts[i][n] == '=')
            return c->opts[i] + n + 1;
    return NULL;
}

/* What this process knows of the job, over what the child said: the user, the key, the job
 * id and time limit Slurm gave, the model as named. */
static void complete(const struct ctld *c, struct fg_audit_rec *rec)
{
    snprintf(rec->user, sizeof rec->user, "%s", c->user);
    rec->uid = (uint32_t)c->uid;
    rec->where = c->where;
    if (c->key && *c->key)
        snprintf(rec->key, sizeof rec->key, "%.127s", c->key);
    if (c->job_id)
        rec->job_id = c->job_id;
    fg_audit_set_time_limit(rec, c->time_limit);
    if (c->model && *c->model) /* --ft-model as the job gave it, as the plugin records it */
        snprintf(rec->model, sizeof rec->model, "%.255s", c->model);
}

static void write_line(const struct ctld *c, struct fg_audit_rec *rec)
{
    struct fg_err err = {0};
    complete(c, rec);
    if (c->pol.log_file[0] && fg_audit_write(c->pol.log_file, rec, &err))
        log_line("error", "fitgate: the decision on a job of %s could not be logged: %s",
                 c->user, err.detail);
}

/* The request and partition of an audit line written here. */
static void request_of(const struct ctld *c, struct fg_audit_rec *rec)
{
    const char *req[] = {"--gres", "--gpus", "--gpus-per-node"};
    for (size_t i = 0; i < 3 && !rec->request[0]; i++) {
        const char *v = arg_value(c, req[i]);
        if (v)
            snprintf(rec->request, sizeof rec->request, "%s=%.100s", req[i], v);
    }
    snprintf(rec->request_after, sizeof rec->request_after, "%s", rec->request);
    const char *part = arg_value(c, "--partition");
    snprintf(rec->partition, sizeof rec->partition, "%.63s", part ? part : "");
}

/* A job that could not be checked: OnError decides; one audit line and one log line. */
static void cannot_check(const struct ctld *c, enum fg_on_error on_error, const char *why)
{
    struct fg_audit_rec rec;
    bool reject = on_error == FG_ONERR_REJECT;
    char msg[FG_DECIDE_LINE];
    fg_audit_rec_init(&rec, FG_AUDIT_AT_JOB_SUBMIT);
    rec.verdict = FG_AUDIT_ERROR;
    snprintf(msg, sizeof msg, "fitgate: %s: cannot check this job: %.300s (OnError=%s)",
             reject ? "rejected" : "warning", why, fg_on_error_name(on_error));
    snprintf(rec.message, sizeof rec.message, "%s", msg);
    request_of(c, &rec);
    write_line(c, &rec);
    log_line("error", "fitgate: cannot check a job of %s (model %s): %s; OnError=%s: %s",
             c->user, c->model && *c->model ? c->model : "?", why, fg_on_error_name(on_error),
             reject ? "rejected" : "admitted unchecked");
    say(msg);
    answer(reject ? "reject" : "allow", NULL);
}

/* The job's own input is not a job's (c->refused): rejected whatever OnError says, as a bad
 * option value is; one audit line and one log line. */
static void refuse_input(const struct ctld *c)
{
    struct fg_audit_rec rec;
    char msg[FG_DECIDE_LINE];
    fg_audit_rec_init(&rec, FG_AUDIT_AT_JOB_SUBMIT);
    rec.verdict = FG_AUDIT_REJECT;
    snprintf(msg, sizeof msg, "fitgate: rejected: %.360s", c->refused);
    snprintf(rec.message, sizeof rec.message, "%s", msg);
    request_of(c, &rec);
    write_line(c, &rec);
    log_line("info", "fitgate: refused a job of %s (model %s): %s", c->user,
             c->model && *c->model ? c->model : "?", c->refused);
    say(msg);
    answer("reject", NULL);
}

/* ---- stalled file systems ------------------------------------------------------------ */

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
    const char *base = arg_value(c, "--base-dir");
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

/* The mount points of the job's paths, without repeats: n of them into mounts (each
 * cap bytes, CTLD_MAX_PATHS rows). */
static size_t job_mounts(const struct ctld *c, char (*mounts)[1024])
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

/* The first of the job's file systems that --stalled names, or NULL. */
static const char *on_stalled(const struct ctld *c, char (*mounts)[1024], size_t n)
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
static bool waits_on_files(pid_t pid)
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

/* ---- the child ------------------------------------------------------------------- */

static int drop_to_user(const struct ctld *c)
{
    if (!c->run_as)
        return 0;
    /* the user's supplementary groups (initgroups(3), as setpriv --init-groups): a model
     * directory shared with a project group is read as the user reads it */
    if (initgroups(c->user, c->gid) || setgid(c->gid) || setuid(c->uid))
        return -1;
    return setuid(0) == 0 && c->uid != 0 ? -1 : 0;
}

static void child(struct ctld *c, int out, int err, int audit)
{
    if (dup2(out, 1) < 0 || dup2(err, 2) < 0)
        _exit(125);
    close(out);
    close(err);
    if (drop_to_user(c)) {
        fprintf(stderr, "fitgate: error: cannot become uid %u gid %u with its groups: %s\n",
                (unsigned)c->uid, (unsigned)c->gid, strerror(errno));
        _exit(125);
    }
    /* nothing of slurmctld's environment reaches the check (no file fitgate reads expands
     * it, jobfile_apply.c; this makes sure no message can carry it either) */
    clearenv();
    struct passwd *pw = getpwuid(getuid());
    setenv("PATH", "/usr/bin:/bin", 1);
    if (pw) {
        setenv("USER", pw->pw_name, 1);
        setenv("LOGNAME", pw->pw_name, 1);
        setenv("HOME", pw->pw_dir, 1);
    }
    fg_audit_redirect(audit);
    char **argv = calloc(c->n_opts + 10, sizeof *argv);
    char pol[4200];
    if (!argv)
        _exit(125);
    int n = 0;
    argv[n++] = "check";
    argv[n++] = "--offline";
    argv[n++] = "--json";
    argv[n++] = "--log-as=job_submit";
    if (c->policy) {
        snprintf(pol, sizeof pol, "--policy=%s", c->policy);
        argv[n++] = pol;
    }
    /* the job's fields as checked and re-spelt (check_fields); the model last, after "--":
     * a value, whatever it says */
    for (size_t i = 0; i < c->n_opts; i++)
        argv[n++] = c->opts[i];
    if (c->model && *c->model) {
        argv[n++] = "--";
        argv[n++] = (char *)c->model;
    }
    int rc = fg_cli_check(n, argv);
    fflush(NULL);
    _exit(rc);
}

/* ---- running it ------------------------------------------------------------------ */

struct buf {
    char *p;
    size_t n;
};

static void take(int fd, struct buf *b, bool *open_)
{
    char tmp[65536];
    ssize_t n = read(fd, tmp, sizeof tmp);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        *open_ = false;
        return;
    }
    if (b->n + (size_t)n > CTLD_MAX_OUTPUT)
        return; /* more than any answer: dropped, the JSON will not parse */
    char *p = realloc(b->p, b->n + (size_t)n + 1);
    if (!p)
        return;
    memcpy(p + b->n, tmp, (size_t)n);
    b->p = p;
    b->n += (size_t)n;
    b->p[b->n] = '\0';
}

static long long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* The child's last "fitgate: error: ..." line, for the reason. */
static void last_error(const struct buf *err, char *why, size_t cap)
{
    const char *best = NULL;
    for (const char *p = err->p; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (!strncmp(p, "fitgate: ", 9))
            best = p;
    if (best) {
        best += strncmp(best, "fitgate: error: ", 16) ? 9 : 16;
        snprintf(why, cap, "%.*s", (int)strcspn(best, "\n"), best);
    }
}

/* The decision the child printed (--json): its lines said, then the answer; false when
 * there is none to read. */
static bool decided(const struct buf *out, int status)
{
    cJSON *root = out->p ? cJSON_Parse(out->p) : NULL;
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "decision");
    const cJSON *lines = cJSON_GetObjectItemCaseSensitive(d, "lines");
    const cJSON *req = cJSON_GetObjectItemCaseSensitive(d, "request");
    bool ok = cJSON_IsObject(d) && cJSON_IsArray(lines) && (status != 3 || cJSON_IsString(req));
    if (ok) {
        const cJSON *l;
        cJSON_ArrayForEach(l, lines) if (cJSON_IsString(l)) say(l->valuestring);
        /* what would fit, each re-checked (decision.remedies[].line), as the plugin says */
        const cJSON *rem, *rems = cJSON_GetObjectItemCaseSensitive(d, "remedies");
        cJSON_ArrayForEach(rem, rems) {
            const cJSON *rl = cJSON_GetObjectItemCaseSensitive(rem, "line");
            if (cJSON_IsString(rl))
                say(rl->valuestring);
        }
        answer(status == 1 ? "reject" : status == 3 ? "resize" : "allow",
               status == 3 ? req->valuestring : NULL);
    }
    cJSON_Delete(root);
    return ok;
}

static int run_check(struct ctld *c)
{
    int po[2] = {-1, -1}, pe[2] = {-1, -1}, pa[2] = {-1, -1};
    struct buf out = {0}, err = {0}, aud = {0};
    char why[600] = "";
    int status = -1;
    if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC) || pipe2(pa, O_CLOEXEC)) {
        cannot_check(c, c->on_error, "no pipe for the check");
        goto out;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        cannot_check(c, c->on_error, "cannot fork the check");
        goto out;
    }
    if (pid == 0) {
        close(po[0]);
        close(pe[0]);
        close(pa[0]);
        child(c, po[1], pe[1], pa[1]);
    }
    close(po[1]);
    close(pe[1]);
    close(pa[1]);
    po[1] = pe[1] = pa[1] = -1;
    bool o_open = true, e_open = true, a_open = true, timed_out = false;
    long long deadline = now_ms() + c->timeout_ms;
    while (o_open || e_open || a_open) {
        struct pollfd fds[3] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}, {pa[0], POLLIN, 0}};
        long long left = deadline - now_ms();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        for (int i = 0; i < 3; i++)
            if (!(i == 0 ? o_open : i == 1 ? e_open : a_open))
                fds[i].fd = -1;
        if (poll(fds, 3, (int)left) < 0 && errno != EINTR)
            break;
        if (fds[0].revents)
            take(po[0], &out, &o_open);
        if (fds[1].revents)
            take(pe[0], &err, &e_open);
        if (fds[2].revents)
            take(pa[0], &aud, &a_open);
    }
    int ws = 0;
    if (timed_out) {
        /* a check waiting on a file system names it, for job_submit.lua's skip window */
        bool stalled = waits_on_files(pid);
        kill(pid, SIGKILL);
        /* a process stuck in the kernel (an NFS server gone) may not die at once: not waited
         * for past 200 ms (init reaps it) */
        for (int i = 0; i < 20 && waitpid(pid, &ws, WNOHANG) == 0; i++)
            usleep(10000);
        char mounts[CTLD_MAX_PATHS][1024];
        size_t nm = stalled ? job_mounts(c, mounts) : 0;
        snprintf(why, sizeof why, "the check took longer than %ld ms (%s%.200s)", c->timeout_ms,
                 !stalled ? "not waiting on a file system" : nm ? "waiting on the file system at "
                                                                : "a stalled file system?",
                 nm ? mounts[0] : "");
        for (size_t i = 0; i < nm; i++) {
            fputs("fitgate-stalled", stdout);
            put_field(mounts[i]);
            putchar('\n');
        }
        cannot_check(c, c->on_error, why);
        goto out;
    }
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(ws))
        status = WEXITSTATUS(ws);
    if (status == 0 || status == 1 || status == 3) {
        struct fg_audit_rec rec;
        struct fg_err perr = {0};
        if (!decided(&out, status)) {
            cannot_check(c, c->on_error, "fitgate check gave no decision");
            goto out;
        }
        if (aud.n && !fg_audit_parse(aud.p, aud.n, &rec, &perr))
            write_line(c, &rec);
        else if (c->pol.log_file[0])
            log_line("error", "fitgate: the check of a job of %s gave no audit line%s%s",
                     c->user, aud.n ? ": " : "", aud.n ? perr.detail : "");
        goto out;
    }
    last_error(&err, why, sizeof why);
    if (!why[0]) {
        if (WIFSIGNALED(ws))
            snprintf(why, sizeof why, "fitgate check was killed by signal %d", WTERMSIG(ws));
        else
            snprintf(why, sizeof why, "fitgate check failed (exit %d)", status);
    }
    cannot_check(c, c->on_error, why);
out:
    for (int i = 0; i < 2; i++) {
        if (po[i] >= 0)
            close(po[i]);
        if (pe[i] >= 0)
            close(pe[i]);
        if (pa[i] >= 0)
            close(pa[i]);
    }
    free(out.p);
    free(err.p);
    free(aud.p);
    return 0;
}

/* ---- the command ----------------------------------------------------------------- */

/*
 * --untagged: a job without --ft-model that asks for GPUs.  RequireTag= of its partition
 * (the plugin's rule, fitgate_alloc.c) rejects it, with an audit line; else it goes on and
 * nothing is written.  A policy that does not load admits it (the fail-closed rule is for
 * tagged jobs) and says so for slurmctld.log.
 */
static void untagged(struct ctld *c, bool pol_ok, const char *why)
{
    if (!pol_ok) {
        log_line("error", "fitgate: an untagged GPU job of %s goes on unchecked: %s", c->user,
                 why);
        answer("allow", NULL);
        return;
    }
    struct fg_rules rules;
    const char *part = arg_value(c, "--partition");
    fg_policy_rules_for(&c->pol, part, &rules);
    if (rules.action == FG_ACTION_OFF || !rules.require_tag) {
        answer("allow", NULL);
        return;
    }
    struct fg_audit_rec rec;
    fg_audit_rec_init(&rec, FG_AUDIT_AT_JOB_SUBMIT);
    rec.verdict = FG_AUDIT_REJECT;
    snprintf(rec.message, sizeof rec.message, "fitgate: rejected: GPU jobs %s%.60s must say "
             "what they run (RequireTag=yes)", part ? "in partition " : "on this cluster",
             part ? part : "");
    snprintf(rec.partition, sizeof rec.partition, "%.63s", part ? part : "");
    for (size_t i = 0; i < c->n_opts && !rec.request[0]; i++)
        if (!strncmp(c->opts[i], "--gres=", 7) || !strncmp(c->opts[i], "--gpus=", 7))
            snprintf(rec.request, sizeof rec.request, "%.150s", c->opts[i]);
    snprintf(rec.request_after, sizeof rec.request_after, "%s", rec.request);
    write_line(c, &rec);
    say(rec.message);
    say("fitgate: add --ft-model=ORG/NAME (or a directory with config.json) and "
        "--ft-mode=full|lora|qlora|serve; 'fitgate plan MODEL' shows what to ask for");
    answer("reject", NULL);
}

/* A field's name for a message: at most 40 bytes, control characters as '?'. */
static const char *shown(const char *s, size_t n, char *buf, size_t cap)
{
    size_t i = 0;
    for (; i < n && i < 40 && i + 1 < cap && s[i]; i++)
        buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
    buf[i] = '\0';
    return buf;
}

/*
 * Standard input, split at its NUL bytes into c->args.  0 when it was read (c->refused says
 * why it is not a job's, if so: more than CTLD_MAX_INPUT bytes or CTLD_MAX_ARGS fields, a
 * last field without its NUL); -1 when it could not be read at all.  Nothing past the cap is
 * read: the answer does not wait for a writer that goes on.
 */
static int read_input(struct ctld *c, char **text)
{
    size_t n = 0, cap = 0;
    bool over = false;
    *text = NULL;
    for (;;) {
        if (n + 65536 + 1 > cap) {
            if (cap > CTLD_MAX_INPUT) {
                over = true;
                break;
            }
            cap = cap ? cap * 2 : 65536 * 2;
            if (cap > CTLD_MAX_INPUT + 2)
                cap = CTLD_MAX_INPUT + 2; /* one byte past the cap tells it is over */
            char *p = realloc(*text, cap);
            if (!p)
                return -1;
            *text = p;
        }
        ssize_t r = read(0, *text + n, cap - n - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        n += (size_t)r;
        if (n > CTLD_MAX_INPUT) {
            over = true;
            break;
        }
    }
    if (!(c->args = calloc(CTLD_MAX_ARGS, sizeof *c->args)))
        return -1;
    if (over) {
        snprintf(c->refused, sizeof c->refused, "the job's options are more than %u bytes "
                 "(%u MiB): not what sbatch sends", CTLD_MAX_INPUT, CTLD_MAX_INPUT >> 20);
        n = CTLD_MAX_INPUT;
    } else if (!n || (*text)[n - 1] != '\0') {
        snprintf(c->refused, sizeof c->refused, "the options on standard input must each end "
                 "with a NUL byte, the model first");
    }
    /* the whole fields, for the audit line of a refusal too (its model, request) */
    for (size_t i = 0; i < n && memchr(*text + i, '\0', n - i); i += strlen(*text + i) + 1) {
        if (c->n_args == CTLD_MAX_ARGS) {
            if (!c->refused[0])
                snprintf(c->refused, sizeof c->refused, "more than %d options", CTLD_MAX_ARGS);
            break;
        }
        c->args[c->n_args++] = *text + i;
    }
    return 0;
}

/*
 * The fixed argument vector (the header): args[0] the model, a value; the rest each one of
 * the options a job may set, re-spelt into c->opts.  The first field that is not sets
 * c->refused, naming it; the fields before it stay in c->opts for the audit line.
 */
static int check_fields(struct ctld *c)
{
    bool seen[N_SLURM_OPTS] = {false};
    const char *request = NULL;
    c->model = c->n_args ? c->args[0] : "";
    if (!(c->opts = calloc(c->n_args + 1, sizeof *c->opts)))
        return -1;
    for (size_t i = 1; i < c->n_args && !c->refused[0]; i++) {
        const char *a = c->args[i], *eq = strchr(a, '=');
        size_t n = eq ? (size_t)(eq - a) : strlen(a);
        char b[48], name[64];
        if (strncmp(a, "--", 2) || n < 3 || n - 2 >= sizeof name) {
            snprintf(c->refused, sizeof c->refused, "field %zu '%s' is not an option (the "
                     "model is the first field)", i + 1, shown(a, n, b, sizeof b));
            break;
        }
        memcpy(name, a + 2, n - 2);
        name[n - 2] = '\0';
        const char *value = eq ? eq + 1 : NULL;
        char *spelt = NULL;
        if (!strncmp(name, "ft-", 3) || !strncmp(name, "ft_", 3)) {
            int id = fg_jobopt_find(name);
            const struct fg_jobopt *row = id >= 0 ? fg_jobopt_at((unsigned)id) : NULL;
            if (!row) {
                snprintf(c->refused, sizeof c->refused, "--%s is not an option of fitgate",
                         shown(name, strlen(name), b, sizeof b));
                break;
            }
            if (id == FG_JOBOPT_MODEL) {
                snprintf(c->refused, sizeof c->refused, "--ft-model is the first field, not an "
                         "option");
                break;
            }
            if (row->arg && !value) {
                snprintf(c->refused, sizeof c->refused, "--ft-%s needs a value (--ft-%s=%s)",
                         row->name, row->name, row->arg);
                break;
            }
            if (asprintf(&spelt, "--ft-%s%s%s", row->name, value ? "=" : "",
                         value ? value : "") < 0)
                return -1;
        } else {
            size_t k = 0;
            while (k < N_SLURM_OPTS && strcmp(slurm_opts[k], name))
                k++;
            if (k == N_SLURM_OPTS) {
                snprintf(c->refused, sizeof c->refused, "--%s is not an option a job sets: the "
                         "site's files come from its policy, the job's from --ft-*, --gres, "
                         "--gpus, --gpus-per-node, --nodes and --partition",
                         shown(name, strlen(name), b, sizeof b));
                break;
            }
            if (!value || seen[k]) {
                snprintf(c->refused, sizeof c->refused, "--%s %s", name,
                         value ? "given twice" : "needs a value");
                break;
            }
            seen[k] = true;
            bool is_request = k < 3; /* gres, gpus, gpus-per-node: slurm_opts' first three */
            if (is_request && request) {
                snprintf(c->refused, sizeof c->refused, "the GPU request is given twice "
                         "(--%s and --%s)", request, name);
                break;
            }
            if (is_request)
                request = slurm_opts[k];
            if (asprintf(&spelt, "--%s=%s", slurm_opts[k], value) < 0)
                return -1;
        }
        c->opts[c->n_opts++] = spelt;
    }
    return 0;
}

static int parse_args(struct ctld *c, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t u;
        if (!strcmp(a, "--untagged")) {
            c->untagged = true;
            continue;
        }
        if (!v) {
            fprintf(stderr, "fitgate: error: %s needs a value\n", a);
            return 2;
        }
        i++;
        if (!strcmp(a, "--policy")) {
            c->policy = v;
        } else if (!strcmp(a, "--door")) {
            int w = fg_audit_where_from_name(v);
            if (w != FG_AUDIT_AT_JOB_SUBMIT && w != FG_AUDIT_AT_SBATCH &&
                w != FG_AUDIT_AT_SALLOC && w != FG_AUDIT_AT_SRUN) {
                fprintf(stderr, "fitgate: error: --door takes job_submit, sbatch, salloc or "
                                "srun\n");
                return 2;
            }
            c->where = (enum fg_audit_where)w;
        } else if (!strcmp(a, "--log-file")) {
            c->log_file = v;
        } else if (!strcmp(a, "--key")) {
            c->key = v;
        } else if (!strcmp(a, "--skip")) {
            c->skip = v;
        } else if (!strcmp(a, "--stalled")) {
            /* percent-encoded, as this process wrote it in its fitgate-stalled record */
            char *d = c->n_stalled < CTLD_MAX_STALLED ? strdup(v) : NULL;
            if (!d)
                continue;
            size_t o = 0;
            for (size_t k = 0; d[k]; k++) {
                unsigned x;
                if (d[k] == '%' && sscanf(d + k + 1, "%2x", &x) == 1 && d[k + 1] && d[k + 2]) {
                    d[o++] = (char)x;
                    k += 2;
                } else {
                    d[o++] = d[k];
                }
            }
            d[o] = '\0';
            c->stalled[c->n_stalled++] = d;
        } else if (!strcmp(a, "--on-error")) {
            if (strcmp(v, "allow") && strcmp(v, "reject")) {
                fprintf(stderr, "fitgate: error: --on-error takes allow or reject\n");
                return 2;
            }
            c->on_error = !strcmp(v, "reject") ? FG_ONERR_REJECT : FG_ONERR_ALLOW;
        } else if (!strcmp(a, "--run-as")) {
            unsigned uid, gid;
            char end;
            if (sscanf(v, "%u:%u%c", &uid, &gid, &end) != 2) {
                fprintf(stderr, "fitgate: error: --run-as takes UID:GID\n");
                return 2;
            }
            c->uid = uid;
            c->gid = gid;
            c->run_as = true;
        } else if (!strcmp(a, "--timeout-ms")) {
            if (fg_cli_parse_u64(a, v, 10, 60000, &u))
                return 2;
            c->timeout_ms = (long)u;
        } else if (!strcmp(a, "--job-id")) {
            if (fg_cli_parse_u64(a, v, 0, UINT32_MAX, &u))
                return 2;
            c->job_id = u >= FG_TIME_NO_VAL ? 0 : u;
        } else if (!strcmp(a, "--time-limit")) {
            if (fg_cli_parse_u64(a, v, 0, UINT32_MAX, &u))
                return 2;
            c->time_limit = (uint32_t)u;
        } else {
            fprintf(stderr, "fitgate: error: unknown option %s (fitgate ctld is for "
                            "contrib/job_submit.lua)\n", a);
            return 2;
        }
    }
    return 0;
}

int fg_cli_ctld(int argc, char **argv)
{
    struct ctld c = {.timeout_ms = 800, .on_error = FG_ONERR_ALLOW,
                     .where = FG_AUDIT_AT_JOB_SUBMIT};
    char *text = NULL;
    struct fg_err err = {0};
    int rc = parse_args(&c, argc, argv);
    if (rc)
        goto out;
    rc = 2;
    if (!c.run_as) {
        c.uid = getuid();
        c.gid = getgid();
    }
    struct passwd *pw = getpwuid(c.uid);
    snprintf(c.user, sizeof c.user, "%s", pw ? pw->pw_name : "");
    if (c.run_as && !pw) {
        fprintf(stderr, "fitgate: error: --run-as: no user with uid %u\n", (unsigned)c.uid);
        goto out;
    }
    if (read_input(&c, &text)) {
        fprintf(stderr, "fitgate: error: cannot read the options on standard input: %s\n",
                strerror(errno));
        goto out;
    }
    if (check_fields(&c)) {
        fprintf(stderr, "fitgate: error: out of memory\n");
        goto out;
    }
    rc = 0;
    /* the site's files are the site's: root's or this process's (slurmctld's user), also for
     * the check's child once it runs as the job's user (fileio.h) */
    fg__site_owner_pin((unsigned)geteuid());
    fg_policy_init(&c.pol);
    struct fg_gpu_table *table = NULL;
    int prc = c.policy ? fg_policy_load(&c.pol, c.policy, &err) : 0;
    if (!prc && c.policy && !c.untagged)
        prc = fg_policy_gpu_table(&c.pol, &table, &err); /* the check's child reads it again */
    fg_gpu_table_free(table);
    if (c.log_file && (!prc || c.untagged)) /* the controller's own trail: LOG_FILE */
        snprintf(c.pol.log_file, sizeof c.pol.log_file, "%s", c.log_file);
    if (c.untagged) {
        if (c.refused[0] && !prc)
            refuse_input(&c);
        else
            untagged(&c, !prc, err.detail);
        goto out;
    }
    if (prc) {
        /* fail closed: a tagged job is rejected until the policy is fixed (the built-in
         * OnError=reject); the line goes to the trail where the file still names one */
        char why[700];
        snprintf(why, sizeof why, "the site policy is invalid: %.600s (fitgate check "
                 "--policy %.40s --lint)", err.detail, c.policy);
        if (c.log_file)
            snprintf(c.pol.log_file, sizeof c.pol.log_file, "%s", c.log_file);
        else if (c.pol.log_file[0] != '/')
            c.pol.log_file[0] = '\0';
        cannot_check(&c, FG_ONERR_REJECT, why);
        goto out;
    }
    if (c.policy)
        c.on_error = c.pol.on_error;
    char mounts[CTLD_MAX_PATHS][1024], why[1200];
    const char *stalled = c.n_stalled ? on_stalled(&c, mounts, job_mounts(&c, mounts)) : NULL;
    if (stalled)
        snprintf(why, sizeof why, "a check on the file system at %.1000s timed out moments ago "
                 "(a stalled file system?): not checked again yet", stalled);
    if (c.refused[0])
        refuse_input(&c); /* the job's own: whatever OnError says */
    else if (c.skip)
        cannot_check(&c, c.on_error, c.skip);
    else if (stalled)
        cannot_check(&c, c.on_error, why);
    else
        run_check(&c);
out:
    fflush(stdout);
    for (size_t i = 0; i < c.n_stalled; i++)
        free(c.stalled[i]);
    for (size_t i = 0; i < c.n_opts; i++)
        free(c.opts[i]);
    free(c.opts);
    free(c.args);
    free(text);
    return rc;
}
