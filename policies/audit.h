/*
 * audit.h - the audit trail: every admission decision as one JSON line.
 *
 * A decision (allow, warn, reject, resize, override, error) is filled into
 * a struct fg_audit_rec, formatted as one line of JSON and appended to the
 * site's log (fitgate.conf LogFile=): a file, or the local syslog.
 * `fitgate report` reads the lines back; issue 18 joins them with sacct.
 * The line format is versioned ("v":1) and documented field by field in
 * docs/audit.md; a field may be added without a new version (readers ignore
 * fields they do not know), a field is never renamed or given another
 * meaning without one.
 *
 * Error contract: error.h.  Writing never blocks and never decides anything:
 * fg_audit_write returns an error the caller reports (once, as a warning)
 * and the job goes on as decided.
 *
 * Ownership: struct fg_audit_rec is plain data with fixed-size strings
 * (copies, truncated to fit); nothing here allocates for the caller.
 */
#ifndef FG_AUDIT_H
#define FG_AUDIT_H

#include <stddef.h>
#include <stdint.h>

#include "decide.h"
#include "util/error.h"

/* The "v" of every line this code writes. */
#define FG_AUDIT_VERSION 1

/* fitgate's version, written into every line ("version"); the Makefile may define it. */
#ifndef FITGATE_VERSION
#define FITGATE_VERSION "0.1.0"
#endif

#define FG_AUDIT_X_VERDICT(X) X(ALLOW, "allow") X(WARN, "warn") X(REJECT, "reject") \
    X(RESIZE, "resize") X(OVERRIDE, "override") X(ERROR, "error")
#define FG_AUDIT_X_WHERE(X) X(CLI, "cli") X(SBATCH, "sbatch") X(SALLOC, "salloc") \
    X(SRUN, "srun") X(JOB_SUBMIT, "job_submit") X(STEPD, "stepd")

enum fg_audit_verdict {
#define FG__AUDIT_ENUM(name, text) FG_AUDIT_##name,
    FG_AUDIT_X_VERDICT(FG__AUDIT_ENUM)
    FG_AUDIT_N_VERDICTS
};

enum fg_audit_where {
#define FG__AUDIT_WHERE_ENUM(name, text) FG_AUDIT_AT_##name,
    FG_AUDIT_X_WHERE(FG__AUDIT_WHERE_ENUM)
    FG_AUDIT_N_WHERE
};

/* Slurm's time limits that are not a number of minutes (slurm.h NO_VAL, INFINITE). */
#define FG_TIME_NO_VAL 0xfffffffeu
#define FG_TIME_UNLIMITED 0xffffffffu

struct fg_audit_rec {
    int64_t time;                 /* epoch seconds, UTC (also written as RFC 3339) */
    char submit_id[128];          /* unique per decision: host:pid:sec.nsec:seq */
    /* the job's key, the same on every door's line of one job: the submission's submit_id
     * (sbatch's, carried to job_submit and the node); fg_audit_rec_init sets it to this
     * line's own submit_id, the reader to submit_id on lines written before it */
    char key[128];
    uint64_t job_id;              /* 0 = not known yet (sbatch, salloc); set by "stepd" */
    char user[64];
    uint32_t uid;
    char partition[64];           /* "" = the default partition */
    char model[256];              /* --ft-model as given */
    /* the architecture: the config's model_type as the engine read it ("qwen3"), from the
     * assessment; "" when the job was not assessed (written only when set; lines from
     * before it have none): fitgate learn groups on it, never on the model's name */
    char model_type[64];
    char revision[64];            /* asked revision or resolved commit; "" unknown */
    char request[160];            /* as the job asked: "--gres=gpu:h100:4" */
    char request_after[160];      /* after the decision (the same when unchanged) */
    uint32_t gpus_asked, gpus_after;   /* GPUs of the whole job */
    uint32_t nodes, nodes_after;
    uint32_t time_limit_min;      /* 0 = unknown or unlimited (then no GPU-hours) */
    char time_limit[12];          /* "unlimited" (Slurm's INFINITE), else "": written when set */
    char card[64];                /* GPU table row name, or the gres type when unknown */
    char framework[32];           /* "" when not given */
    char layout[96];              /* "TP=1 PP=2 DP=1"; "" when none */
    char mode[16];                /* full, lora, qlora, serve; "dpo+lora" for a trainer */
    uint64_t estimate_bytes;      /* the job's estimate at its micro-batch, one card */
    uint64_t per_gpu_bytes;       /* per GPU in the layout decided; 0 unknown */
    uint64_t usable_bytes;        /* one card after the CUDA context; 0 unknown */
    enum fg_audit_verdict verdict;
    char message[FG_DECIDE_LINE]; /* the verdict line users saw */
    char override_reason[256];    /* "" unless verdict is override */
    char version[32];             /* fitgate's */
    enum fg_audit_where where;
    /* "stepd" lines at the job's end only (written when not 0): the largest bytes in use on
     * one of the job's GPUs, sampled from NVML by the node (GpuSampler=; engine/hw/nvml.h) */
    uint64_t gpu_peak_bytes;
    /* the site calibration factor x 1000 the estimates carry (Calibration=); 0 none (written
     * only when set): fitgate learn divides it out to learn from the model's own estimate */
    uint32_t calibration_milli;
};

/*
 * The longest line fg_audit_format can write, newline and NUL included:
 * every string byte may become a 6-byte escape, plus the keys and numbers.
 */
#define FG_AUDIT_LINE_MAX                                                                   \
    (6 * (sizeof(((struct fg_audit_rec *)0)->submit_id) +                                   \
          sizeof(((struct fg_audit_rec *)0)->key) +                                         \
          sizeof(((struct fg_audit_rec *)0)->time_limit) +                                  \
          sizeof(((struct fg_audit_rec *)0)->user) +                                        \
          sizeof(((struct fg_audit_rec *)0)->partition) +                                   \
          sizeof(((struct fg_audit_rec *)0)->model) +                                       \
          sizeof(((struct fg_audit_rec *)0)->model_type) +                                  \
          sizeof(((struct fg_audit_rec *)0)->revision) +                                    \
          sizeof(((struct fg_audit_rec *)0)->request) +                                     \
          sizeof(((struct fg_audit_rec *)0)->request_after) +                               \
          sizeof(((struct fg_audit_rec *)0)->card) +                                        \
          sizeof(((struct fg_audit_rec *)0)->framework) +                                   \
          sizeof(((struct fg_audit_rec *)0)->layout) +                                      \
          sizeof(((struct fg_audit_rec *)0)->mode) +                                        \
          sizeof(((struct fg_audit_rec *)0)->message) +                                     \
          sizeof(((struct fg_audit_rec *)0)->override_reason) +                             \
          sizeof(((struct fg_audit_rec *)0)->version)) +                                    \
     1024)

/*
 * A record for a decision made now, in `where`: time, submit_id, uid
 * (getuid()), version; everything else zero or "".  The caller fills the
 * user name (the front end knows it; no name-service lookup here).
 */
void fg_audit_rec_init(struct fg_audit_rec *rec, enum fg_audit_where where);

/* A time limit in minutes as Slurm gives it: NO_VAL (no --time) is unknown (0), INFINITE
 * (FG_TIME_UNLIMITED) is "unlimited" (time_limit_min 0, time_limit "unlimited"). */
void fg_audit_set_time_limit(struct fg_audit_rec *rec, uint32_t minutes);

/*
 * Fill from a decision: partition, model, both requests (fg_request_spell),
 * GPUs and nodes before and after, card, verdict (warn/reject/resize/allow),
 * the verdict line, and the layout and its per-GPU peak when it has one.
 * d may be NULL (an error before any decision: only the request is filled).
 */
void fg_audit_from_decision(struct fg_audit_rec *rec, const struct fg_request *q,
                            const struct fg_decision *d);

/* Fill mode, model_type, estimate_bytes, usable_bytes and calibration_milli from the
 * assessment the decision used. */
void fg_audit_from_assessment(struct fg_audit_rec *rec, const struct fg_assessment *a);

/*
 * One JSON line, '\n' included, into buf: the length written (without the
 * NUL), or 0 when cap is below what this record needs (buf then holds "").
 * cap >= FG_AUDIT_LINE_MAX always suffices.  Strings are escaped for JSON;
 * bytes that are not UTF-8 become U+FFFD, so every line is valid UTF-8.
 */
size_t fg_audit_format(const struct fg_audit_rec *rec, char *buf, size_t cap);

/*
 * Read one line back (len bytes, a trailing newline allowed).  Fields it
 * does not know are ignored; missing ones stay 0 / "".  Fails FG_E_PARSE
 * (not JSON, not an object, no "v"/"time"/"verdict", a string where a number
 * belongs), FG_E_UNSUPPORTED ("v" is not 1), FG_E_RANGE (a string longer
 * than its field, a number out of range), with a detail naming the field.
 */
int fg_audit_parse(const char *line, size_t len, struct fg_audit_rec *rec, struct fg_err *err);

/*
 * Every string field of rec as fitgate prints it (util/fmt.h fg__esc: control characters,
 * newlines, malformed UTF-8, C1 and bidirectional controls as \xNN, cut to the field's
 * size): what fitgate report and learn apply to each line they read, so a user, model or
 * partition from a trail never reaches a terminal, a log or a page raw.
 */
void fg_audit_escape(struct fg_audit_rec *rec);

/*
 * Append rec to target: NULL or "" does nothing; "syslog" sends it to the
 * local syslog socket (/dev/log; facility user, priority info, tag
 * "fitgate"); anything else is an absolute file path, %u expanded to
 * rec->user and %U to rec->uid.  The file is created 0640 if missing; an
 * existing one must be a regular file (or a FIFO / character device) owned
 * by this process's user or by root.  One write() per line on an O_APPEND
 * descriptor, so concurrent writers never interleave within a line on a
 * local file system; a short write (a full disk) is repaired: the file is
 * truncated back to where the line began when nothing was appended after
 * it, else the fragment is ended with a newline, so the next line is never
 * glued to it.  Never blocks: a FIFO without a reader or full, or a
 * syslog daemon that does not keep up, is an error.
 *
 * Fails FG_E_INVAL (relative path, bad expansion), FG_E_DENIED (owned by
 * another user, a symbolic link), FG_E_IO (cannot open or write, short
 * write, syslog socket missing) with the path and the reason.  The job
 * must not fail because of it: the caller reports the error and goes on.
 */
int fg_audit_write(const char *target, const struct fg_audit_rec *rec, struct fg_err *err);

/*
 * From now on in this process, fg_audit_write sends every line to fd (one write of the
 * whole line) instead of its target (-1: back to the targets).  The controller's check
 * (cli/cmd_ctld.c) runs as the user and hands its line to the privileged parent this way.
 */
void fg_audit_redirect(int fd);

/* The same with another syslog socket than /dev/log (tests). */
int fg__audit_write_syslog(const char *socket_path, const struct fg_audit_rec *rec,
                           struct fg_err *err);

const char *fg_audit_verdict_name(enum fg_audit_verdict v);
const char *fg_audit_where_name(enum fg_audit_where w);

/* Name -> value; -1 when the name is none of them. */
int fg_audit_verdict_from_name(const char *name);
int fg_audit_where_from_name(const char *name);

#endif
