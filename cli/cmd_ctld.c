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
 *     the --ft-* table (engine/job/jobopts.def, --ft-model apart), the GPU request
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
 * never answers; or state D) adds a record `fitgate-stalled MOUNT` for each file system the
 * job reads (its model and config files, or for an org/name model the site's ModelDirs= and
 * CacheDir=, as /proc/self/mountinfo names their mount points; ctld_mounts.c).
 * job_submit.lua hands those back for STALL_S seconds: a job on one of them is decided by
 * OnError= at once, logged; a job on other file systems is checked.  A check that ran out of
 * time computing names none: the job alone is decided by OnError=, the door stays shut for
 * the rest.
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
#include "ctld.h"
#include "hw/gpu.h"
#include "jobopts.h"
#include "policy.h"
#include "util/fileio.h"

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
        const char *v = fg__ctld_arg_value(c, req[i]);
        if (v)
            snprintf(rec->request, sizeof rec->request, "%s=%.100s", req[i], v);
    }
    /* a refused input: its request as given, for the trail (checked or not) */
    for (size_t i = 1; i < c->n_args && !rec->request[0]; i++)
        for (size_t k = 0; k < 3; k++)
            if (!strncmp(c->args[i], req[k], strlen(req[k])) && c->args[i][strlen(req[k])] == '=')
                snprintf(rec->request, sizeof rec->request, "%.150s", c->args[i]);
    snprintf(rec->request_after, sizeof rec->request_after, "%s", rec->request);
    const char *part = fg__ctld_arg_value(c, "--partition");
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

/*
 * The check's argument vector for the job c (argv: c->n_opts + 10 rows; pol: room for
 * --policy=FILE): the check's own options first, then the job's fields as checked and
 * re-spelt (ctld_args.c), the model last after "--": a value, whatever it says.  Its length.
 */
static int check_argv(const struct ctld *c, char **argv, char *pol, size_t pol_cap)
{
    int n = 0;
    argv[n++] = "check";
    argv[n++] = "--offline";
    argv[n++] = "--json";
    argv[n++] = "--log-as=job_submit";
    if (c->policy) {
        snprintf(pol, pol_cap, "--policy=%s", c->policy);
        argv[n++] = pol;
    }
    for (size_t i = 0; i < c->n_opts; i++)
        argv[n++] = c->opts[i];
    if (c->model && *c->model) {
        argv[n++] = "--";
        argv[n++] = (char *)c->model;
    }
    return n;
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
    int n = check_argv(c, argv, pol, sizeof pol);
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
        bool stalled = fg__ctld_waits_on_files(pid);
        kill(pid, SIGKILL);
        /* a process stuck in the kernel (an NFS server gone) may not die at once: not waited
         * for past 200 ms (init reaps it) */
        for (int i = 0; i < 20 && waitpid(pid, &ws, WNOHANG) == 0; i++)
            usleep(10000);
        char mounts[CTLD_MAX_PATHS][1024];
        size_t nm = stalled ? fg__ctld_job_mounts(c, mounts) : 0;
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
    const char *part = fg__ctld_arg_value(c, "--partition");
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
    if (fg__ctld_read_input(&c, &text)) {
        fprintf(stderr, "fitgate: error: cannot read the options on standard input: %s\n",
                strerror(errno));
        goto out;
    }
    if (fg__ctld_check_fields(&c)) {
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
    if (c.log_file) /* the controller's own trail: job_submit.lua's LOG_FILE */
        snprintf(c.pol.log_file, sizeof c.pol.log_file, "%s", c.log_file);
    else if (prc && c.pol.log_file[0] != '/') /* a broken file's trail, where it names one */
        c.pol.log_file[0] = '\0';
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
        cannot_check(&c, FG_ONERR_REJECT, why);
        goto out;
    }
    if (c.policy)
        c.on_error = c.pol.on_error;
    char mounts[CTLD_MAX_PATHS][1024], why[1200];
    const char *stalled = NULL; /* the job reads a file system whose check timed out lately */
    if (c.n_stalled)
        stalled = fg__ctld_on_stalled(&c, mounts, fg__ctld_job_mounts(&c, mounts));
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
