/*
 * learn_data.h - what `fitgate learn`'s two files share (internal to cli/):
 * learn_data.c reads and joins the records into struct learn and groups its
 * jobs; cmd_learn.c prints them (text, JSON, HTML, a calibration file).
 * struct learn owns recs, jobs and acct; a struct job borrows from them.
 * Functions return 0, or -1 after a message on stderr (out of memory, a file
 * that cannot be read).
 */
#ifndef FG_CLI_LEARN_DATA_H
#define FG_CLI_LEARN_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "audit.h"
#include "sacct.h"

/* The family of a job whose model no configuration says: a group of its own. */
#define FAMILY_UNKNOWN "(unknown)"

struct job {
    uint64_t job_id;
    const struct fg_audit_rec *sub;      /* the decision (borrowed from struct learn) */
    const struct fg_sacct_job *acct;     /* borrowed from the sacct table */
    char family[64];
    uint64_t est;        /* per GPU: per_gpu_bytes of the layout decided, else estimate_bytes */
    uint64_t card;       /* bytes of one card: usable + context; 0 unknown */
    uint64_t actual;     /* peak per GPU (sacct.h gpumem_per_gpu) */
    double ratio;        /* actual / (est + context) */
    double factor;       /* (actual - context) / est */
    uint32_t gpus;
    uint32_t freeable;   /* GPUs the peak did not need (an upper bound: docs/learn.md) */
    bool admitted, far_below, host_oom, gpu_oom, gpu_oom_likely;
    char evidence[256];  /* the log file and message of a GPU OOM */
    const char *source;  /* of the peak: "sacct" (gres/gpumem) or "nvml" (GpuSampler=) */
    struct fg_sacct_job own; /* acct when the peak is the node's own sample */
};

struct learn {
    struct fg_audit_rec *recs;
    size_t n_recs, cap_recs;
    struct job *jobs;
    size_t n_jobs;
    uint64_t lines, bad, stepd, unmatched, other_user, not_in_sacct, no_gpumem;
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

/* fg_cli_audit_read_all's callback: every audit line kept in ctx (a struct learn). */
int fg__learn_keep(const struct fg_audit_rec *rec, void *ctx);

/* --sacct FILE: the accounting table into l->acct. */
int fg__learn_read_sacct(struct learn *l, const char *path);

/* The decisions joined with their job ids and what the jobs used: l->jobs. */
int fg__learn_join(struct learn *l);

/* Groups of l's jobs by `by`, in key order; the caller frees *out. */
int fg__learn_groups(const struct learn *l, enum group_by by, struct group **out, size_t *n_out);

#endif
