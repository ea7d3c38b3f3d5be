/*
 * gate.h - the one answer to "does this job fit, and if not, what would".
 *
 * Every front end asks here, with the same three inputs: the job
 * (jobspec.h, finished), the GPUs it asks for (struct fg_request, in the
 * job's own Slurm spelling) and the site's rules for its partition.  The SPANK
 * plugin (submit side and node side), `fitgate check` (and through it the Lua
 * filters) and `fitgate plan --gpu` all call fg_gate_run, so one job gets one
 * verdict and one set of messages wherever it is asked about.
 *
 *   fg_gate_run()  fg_assess + fg_decide, with the errors mapped as the plugin
 *                  always did: a job whose own options contradict each other
 *                  (FG_E_INVAL: a layout its framework cannot run, LoRA targets
 *                  that match nothing) is rejected whatever OnError says; any
 *                  other failure follows OnError (fg_decide_error).
 *
 * The GPU request itself is request.h's.  Ownership: struct fg_gate is plain data the caller owns (about
 * 40 KB: allocate it, do not put it on a small stack).
 */
#ifndef FG_GATE_H
#define FG_GATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "audit.h"
#include "decide.h"
#include "remedy.h"

struct fg_model_id;
struct fg_source_opts;
struct fg_source_result;

struct fg_gate {
    struct fg_assessment a;  /* meaningful when assessed */
    bool assessed;
    struct fg_decision d;    /* always filled */
    int rc;                  /* the engine error behind d, 0 when assessed */
    char detail[256];        /* its detail (cut to fit) */
    bool unknown;            /* decided by OnUnknown (fg_decide_unknown) */
    struct fg_remedies rem;  /* what the job can change, each re-checked (last: see
                                fg_gate_once) */
};

/*
 * Never fails: the decision says what happened.  gpus of the request, card q->gpu.  A job
 * that does not fit gets its remedies (remedy.h: each re-checked through fg_gate_once,
 * worded by fg_decide_remedies); an over-request's advice names the fewest GPUs that pass
 * the same check.
 */
void fg_gate_run(const struct fg_model *m, const struct fg_jobspec *spec,
                 const struct fg_request *q, const struct fg_rules *r, enum fg_on_error on_error,
                 struct fg_gate *out);

/* fg_gate_run without remedies or the over-request's re-check: one assessment, one
 * decision (what a remedy is re-checked with).  out->rem is left empty. */
void fg_gate_once(const struct fg_model *m, const struct fg_jobspec *spec,
                  const struct fg_request *q, const struct fg_rules *r, enum fg_on_error on_error,
                  struct fg_gate *out);

/* Where the GPUs of request q are, as the check judges them (assess.h struct
 * fg_assess_opts: its GPUs per node on its nodes). */
void fg_gate_placement(const struct fg_request *q, const struct fg_rules *r,
                       struct fg_assess_opts *o);

/*
 * The model a job names, as every front end reads it: a path (relative paths resolved
 * against base_dir, which may be NULL for the current directory: the same rule,
 * fg_source_arg_is_path, everywhere) or org/name[@rev] through the policy's model
 * directories, cache (CacheDir: user names its %u, uid its %U) and hub (within
 * HubTimeout, the checkpoint's headers included: fg_model_load_id; CheckpointScan=no reads
 * none from the hub).  offline keeps the hub out (compute nodes, slurmctld): the caches and site
 * directories still answer.  The caller frees *out with fg_model_free.
 */
int fg_gate_load_model(const struct fg_policy *p, const char *arg, const char *base_dir,
                       const char *user, unsigned uid, bool offline, struct fg_model **out,
                       struct fg_err *err);

/* One decision for the audit trail: the job (spec, request), what was decided (g), who asked
 * (user; the uid is the process's), the Slurm job id when known (0) and the time limit in
 * minutes (0 unknown).  Borrowed.  id, when not NULL, gets the line's submit_id (id_cap
 * bytes; "" when nothing was written), for the submit side to carry to the job (the node's
 * "stepd" line joins on it). */
struct fg_gate_audit_of {
    const struct fg_jobspec *spec;
    const struct fg_request *q;
    const struct fg_gate *g;
    const char *user;
    uint64_t job_id;
    uint32_t time_limit_min;
    char *id;
    size_t id_cap;
};

/*
 * The decision as one line of the site's audit trail (LogFile=; nothing when unset), written
 * where (sbatch, the node, the CLI ...).  Returns fg_audit_write's result: the caller
 * reports an error and goes on.
 */
int fg_gate_audit(const struct fg_policy *pol, enum fg_audit_where where,
                  const struct fg_gate_audit_of *what, struct fg_err *err);

/* Slurm's --time ("90", "1:30:00", "2-00:00:00", "UNLIMITED") in minutes; 0 when unknown
 * (also Slurm's NO_VAL), FG_TIME_UNLIMITED for UNLIMITED / INFINITE (audit.h). */
uint32_t fg_slurm_time_minutes(const char *s);

/* The model for messages: an id as given, a path by its last directory name. */
void fg_gate_model_label(const char *arg, char *buf, size_t cap);

#endif
