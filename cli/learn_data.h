/*
 * learn_data.h - `fitgate learn`'s records (learn_data.c): the audit lines kept in compact
 * form (learnrec.h), the sacct table read, the two joined into one row per job (its
 * estimate, its measured peak per GPU, its OOM evidence in the job's output) by sorting and
 * hashing, and the rows grouped with their statistics.  cmd_learn.c prints them.
 *
 * Ownership: struct learn owns its records, jobs (and each job's evidence) and the sacct
 * table; cmd_learn.c frees them.  *out of fg__learn_groups is the caller's (free()).
 * Functions return 0, or -1 with the reason printed (a CLI module).
 */
#ifndef FG_CLI_LEARN_DATA_H
#define FG_CLI_LEARN_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "audit.h"
#include "auditlog.h"
#include "learnrec.h"
#include "sacct.h"

#define FAMILY_UNKNOWN "(unknown)"

struct job {
    uint64_t job_id;
    const struct fg_cli_lrec *sub;       /* the decision (borrowed from struct learn) */
    const struct fg_sacct_job *acct;     /* borrowed from the sacct table */
    const char *family;  /* interned in learn's records, or FAMILY_UNKNOWN */
    uint64_t est;        /* per GPU: per_gpu_bytes of the layout decided, else estimate_bytes */
    uint64_t card;       /* bytes of one card: usable + context; 0 unknown */
    uint64_t actual;     /* peak per GPU (sacct.h gpumem_per_gpu) */
    double ratio;        /* actual / (est + context) */
    double factor;       /* (actual - context) / est */
    uint32_t gpus;
    uint32_t freeable;   /* GPUs the peak did not need (an upper bound: docs/learn.md) */
    bool admitted, far_below, host_oom, gpu_oom, gpu_oom_likely;
    char *evidence;      /* the log file and message of a GPU OOM (owned; NULL none) */
    const char *source;  /* of the peak: "sacct" (gres/gpumem) or "nvml" (GpuSampler=) */
    struct fg_sacct_job own; /* acct when the peak is the node's own sample */
};

#define LEARN_TRUST_MAX 8

struct learn {
    struct fg_cli_lrecs recs;   /* every line, compact (learnrec.h) */
    struct job *jobs;
    size_t n_jobs;
    uint64_t lines, bad, stepd, unmatched, other_user, not_in_sacct, no_gpumem;
    /* lines not believed: another uid's line in a user's trail, or any line of a trail its
     * group or others may write (fg__learn_keep); job outputs under --logs not read: not a
     * regular file, a symbolic link, or owned by someone other than the job's user */
    uint64_t untrusted, logs_refused;
    /* owners whose trails are believed whole: root, the user running learn, --trust-owner */
    unsigned trust[LEARN_TRUST_MAX + 2];
    size_t n_trust;
    const char *warned_trail;   /* the last trail warned about as a whole */
    uint64_t family_unknown; /* joined jobs of no known architecture (family_of) */
    struct fg_sacct *acct;
    double far_below;
    uint32_t min_jobs;
    const char *logs;
};

struct stats {
    size_t n;
    double median, p10, p90, min, max;
    double lo, hi;          /* 95% confidence interval of the median (n >= 6) */
    uint32_t freeable, oom;
};

enum group_by { BY_FW_MODE_FAMILY, BY_PARTITION, BY_FW_MODE };

struct group {
    char key[160];
    struct stats ratio;     /* actual / (estimate + context) */
    struct stats factor;    /* (actual - context) / estimate, completed jobs only */
    char framework[32], mode[16];
};

/*
 * fg_cli_audit_each's callback: every audit line l (ctx) believes kept, for the join.  A
 * line is believed when its trail is written by no one but its owner (neither its group nor
 * others may write it) and the owner is the line's uid, or one of l->trust (root, the user
 * running learn, --trust-owner: the controller's trail).  So one user's trail can rewrite
 * no other user's jobs, nor weigh in the calibration with them.
 */
int fg__learn_keep(const struct fg_audit_rec *rec, const struct fg_cli_trail *at, void *ctx);
/* The sacct -p table at path into l->acct. */
int fg__learn_read_sacct(struct learn *l, const char *path);
/* One row per job: decision, job id and what it used (docs/learn.md). */
int fg__learn_join(struct learn *l);
/* l's jobs grouped by `by`, in the order their first job comes. */
int fg__learn_groups(struct learn *l, enum group_by by, struct group **out, size_t *n_out);

#endif
