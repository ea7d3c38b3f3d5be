/*
 * fitgate_record.c - the node's line of the audit trail (issue 18: learn).
 *
 * The line written at submission has no job id (sbatch does not know it yet).
 * The submit side packs that line's submit_id into the job's job-control
 * environment (SLURM_SPANK_FITGATE_PLAN "...;SUBMIT_ID=host:pid:sec.ns:seq");
 * here, in slurmstepd, the job id is known, and one more line is written:
 * where "stepd", job_id set, the same submit_id.  `fitgate learn` joins the
 * two (cli/cmd_learn.c), then the job id with sacct's records.
 *
 * One line per job, not per step and node: only node 0 of the batch step, or
 * of step 0 when there is no batch step (srun or salloc allocations).  (A
 * batch job that runs srun writes two; learn keeps the first per job id.)
 *
 * The submit_id is the user's environment and can be forged: learn joins a
 * stepd line only to a submit line of the same user (uid), so a forged id
 * can at most misattribute the user's own jobs.  Here it is only checked to
 * be the shape fg_audit_rec_init writes (printable, no quote, bounded).
 *
 * GpuSampler=SECONDS (off by default): the same node samples NVML for the
 * job (engine/hw/nvml.h) from user_init to slurm_spank_exit, and writes a second
 * "stepd" line at the end with gpu_peak_bytes, for clusters whose Slurm does
 * not account gres/gpumem.  No NVML library: nothing more happens.
 *
 * Never fails the job: an error is one info line in slurmd's log.
 */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "fitgate.h"
#include "hw/nvml.h"

#ifndef SLURM_BATCH_SCRIPT
#define SLURM_BATCH_SCRIPT 0xfffffffbu /* slurm.h */
#endif

/* The job's line and sampler, kept from user_init to slurm_spank_exit (this slurmstepd). */
static struct {
    struct fg_sampler *sampler;
    struct fg_audit_rec rec;
    char log_file[FG_POLICY_PATH_MAX];
    uid_t uid;   /* the job user's, as user_init runs: the end is written as them too */
    gid_t gid;
} ending;

static bool env(spank_t sp, const char *name, char *buf, size_t cap)
{
    return spank_getenv(sp, name, buf, (int)cap) == ESPANK_SUCCESS && buf[0];
}

/* host:pid:sec.nsec:seq as fg_audit_rec_init writes it: a host name's characters and digits. */
bool fitgate_submit_id_valid(const char *s)
{
    size_t colons = 0, n = strlen(s);
    if (!n || n >= sizeof(((struct fg_audit_rec *)0)->submit_id))
        return false;
    for (const char *p = s; *p; p++) {
        if (*p == ':')
            colons++;
        else if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                   (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' || *p == '_'))
            return false;
    }
    return colons == 3;
}

void fitgate_stepd_record(spank_t sp, const struct fg_policy *pol, bool failed)
{
    uint32_t job = 0, step = 0, node = 0;
    if (spank_get_item(sp, S_JOB_NODEID, &node) != ESPANK_SUCCESS || node != 0)
        return;
    if (spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS ||
        (step != SLURM_BATCH_SCRIPT && step != 0))
        return;
    if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS || !job)
        return;
    char id[128], buf[256];
    if (!fitgate_submitted(sp, "SUBMIT_ID", id, sizeof id))
        return; /* not logged at submission: nothing to join */
    struct fg_err err = {0};
    if (!pol || !pol->log_file[0])
        return; /* check() said what was wrong with the policy */
    if (!fitgate_submit_id_valid(id)) {
        slurm_info("fitgate: job %u: the submit id it carries is malformed; no stepd line", job);
        return;
    }
    struct fg_audit_rec rec;
    fg_audit_rec_init(&rec, FG_AUDIT_AT_STEPD);
    snprintf(rec.submit_id, sizeof rec.submit_id, "%s", id);
    snprintf(rec.key, sizeof rec.key, "%s", id);
    rec.job_id = job;
    struct passwd *pw = getpwuid(geteuid());
    snprintf(rec.user, sizeof rec.user, "%.63s", pw ? pw->pw_name : "");
    rec.uid = (uint32_t)geteuid();
    env(sp, "SLURM_JOB_PARTITION", rec.partition, sizeof rec.partition);
    const char *model = fitgate_option(FG_JOBOPT_MODEL);
    snprintf(rec.model, sizeof rec.model, "%.255s", model ? model : "");
    if (fitgate_submitted(sp, "CARD", buf, sizeof buf))
        snprintf(rec.card, sizeof rec.card, "%.63s", buf);
    if (fitgate_submitted(sp, "GPUS", buf, sizeof buf))
        rec.gpus_asked = rec.gpus_after = (uint32_t)strtoul(buf, NULL, 10);
    if (fitgate_submitted(sp, "ESTIMATE_BYTES", buf, sizeof buf))
        rec.estimate_bytes = strtoull(buf, NULL, 10);
    rec.verdict = failed ? FG_AUDIT_REJECT : FG_AUDIT_ALLOW;
    snprintf(rec.message, sizeof rec.message, "%s",
             failed ? "fitgate: the node check failed the job" : "fitgate: started");
    if (fg_audit_write(pol->log_file, &rec, &err))
        slurm_info("fitgate: warning: the job's start could not be logged: %s", err.detail);
    if (!pol->gpu_sampler_ms || failed)
        return;
    struct fg_sampler_opts o = {.library = pol->nvml[0] ? pol->nvml : NULL,
                                .interval_ms = pol->gpu_sampler_ms};
    char gpus[512];
    if (!env(sp, "SLURM_STEP_GPUS", gpus, sizeof gpus) &&
        !env(sp, "SLURM_JOB_GPUS", gpus, sizeof gpus))
        return; /* no GPU on this node */
    int rc = fg_sampler_devices(&o, gpus, &err);
    if (!rc)
        rc = fg_sampler_start(&o, &ending.sampler, &err);
    if (rc) {
        if (rc != FG_E_NOTFOUND) /* no NVML here: nothing to say */
            slurm_info("fitgate: job %u: GPU memory not sampled: %s", job, err.detail);
        return;
    }
    ending.rec = rec;
    ending.uid = geteuid();
    ending.gid = getegid();
    snprintf(ending.log_file, sizeof ending.log_file, "%s", pol->log_file);
}

/*
 * slurm_spank_exit runs as root; the start line was written as the job's user (user_init),
 * and a per-user log (%u) must stay the user's: write as them (slurmstepd's own threads
 * are done with the job by now), then take root back.  Returns whether the write ran.
 */
static bool write_as_user(const struct fg_audit_rec *r, struct fg_err *err)
{
    uid_t was = geteuid();
    gid_t was_g = getegid();
    bool swap = was == 0 && ending.uid != 0;
    if (swap && (setegid(ending.gid) || seteuid(ending.uid))) {
        if (setegid(was_g))
            slurm_info("fitgate: warning: could not restore the group id");
        fg_err_set(err, FG_E_DENIED, "cannot take the job user's identity");
        return false;
    }
    int rc = fg_audit_write(ending.log_file, r, err);
    if (swap && (seteuid(was) || setegid(was_g)))
        slurm_info("fitgate: warning: could not restore slurmstepd's identity");
    return rc == 0;
}

/* The engine part's entry point for slurm_spank_exit (fitgate_dispatch.c). */
void fitgate_engine_stepd_exit(void)
{
    if (!ending.sampler)
        return;
    uint64_t peak = 0, samples = 0;
    /* a hung GPU must not hold the step's end: give the thread two seconds */
    fg_sampler_stop(ending.sampler, 2000, &peak, &samples);
    ending.sampler = NULL;
    /* the start line's record (kept by fitgate_stepd_record), now, with the peak */
    struct fg_audit_rec *r = &ending.rec;
    struct fg_err err = {0};
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    r->time = (int64_t)now.tv_sec;
    r->gpu_peak_bytes = peak;
    snprintf(r->message, sizeof r->message, "fitgate: ended; peak %llu MiB on one GPU over %llu "
             "NVML samples", (unsigned long long)(peak >> 20), (unsigned long long)samples);
    if (peak && !write_as_user(r, &err))
        slurm_info("fitgate: warning: the job's GPU peak could not be logged: %s", err.detail);
}
