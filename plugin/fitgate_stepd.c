/*
 * fitgate_stepd.c - on the node (S_CTX_REMOTE: slurmstepd, for the batch
 * step and every srun step).
 *
 * The GPUs Slurm gave the step are looked up with hwloc (the plugstack
 * argument topology=FILE.xml replaces this machine's topology: tests, and
 * nodes whose GPUs hwloc cannot see), the job is checked again against
 * their real memory, and the plan is exported to the tasks as FITGATE_*
 * (spank_setenv: it reaches the tasks under --export=NONE too).
 *
 * Where: the work runs from user_init, where slurmstepd has taken the job
 * user's identity (euid), so a model path is read with the user's rights.
 * Nothing here fails before task_init: a non-zero return from init,
 * init_post_opt or user_init drains the node (docs/design.md).  A job
 * that does not fit is recorded (fitgate_engine_stepd returns 1), its
 * message printed into the job's output once, and the dispatcher's
 * slurm_spank_task_init returns -1: the job fails, the node stays.
 */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw/detect.h"
#include "fitgate.h"
#include "hw/gpu.h"

static struct {
    bool failed;            /* task_init refuses to start tasks */
} stepd;

/* Messages in the job's output: slurmstepd shows errors there, not info lines. */
static void say(const struct fg_decision *d)
{
    for (int i = 0; i < FG_DECIDE_LINES; i++)
        if (d->lines[i][0])
            fitgate_line(FG_LOG_ERROR, "", d->lines[i]);
}

static uint32_t u32_of(const char *buf)
{
    char *end;
    unsigned long v = strtoul(buf, &end, 10);
    return *end || v > 65535 ? 0 : (uint32_t)v;
}

static uint32_t env_u32(spank_t sp, const char *name)
{
    char buf[32];
    return fitgate_env(sp, name, buf, sizeof buf) ? u32_of(buf) : 0;
}

static uint32_t submitted_u32(spank_t sp, const char *key)
{
    char buf[32];
    return fitgate_submitted(sp, key, buf, sizeof buf) ? u32_of(buf) : 0;
}

static int setenv_cb(const char *name, const char *value, void *ctx)
{
    spank_t sp = ctx;
    return spank_setenv(sp, name, value, 1) == ESPANK_SUCCESS ? 0 : -1;
}

/* Record an error that keeps the job from being checked, per OnError. */
static void cannot_check(const char *what, const char *detail, const char *todo,
                         enum fg_on_error on_error)
{
    struct fg_decision d;
    fg_decide_error(what, detail, todo, on_error, &d);
    if (d.kind == FG_DECIDE_REJECT) {
        say(&d);
        stepd.failed = true;
        return;
    }
    /* the job goes on: submission already said so; the node's log keeps the detail */
    for (int i = 0; i < FG_DECIDE_LINES; i++)
        if (d.lines[i][0])
            fitgate_line(FG_LOG_WARN, "", d.lines[i]);
}

/*
 * Nothing to check against here (no GPU hwloc can size and no card from the
 * submission, or the model unreadable on this node): the tasks get the plan
 * decided at submission, which travels as job-control environment (fitgate_submitted()),
 * present under --export=NONE too.
 */
static void export_submitted_plan(spank_t sp, const char *why)
{
    static const char *const names[] = {"TP", "PP", "EP", "DP", "MICRO_BATCH", "GRAD_ACCUM",
                                        "ESTIMATE_BYTES", "PP_SPLIT", "NEMO_OVERRIDES", "CARD",
                                        "GPUS"};
    char to[64], val[1024];
    int n = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(to, sizeof to, "FITGATE_%s", names[i]);
        if (fitgate_submitted(sp, names[i], val, sizeof val) &&
            spank_setenv(sp, to, val, 1) == ESPANK_SUCCESS)
            n++;
    }
    slurm_info("fitgate: not checked on this node (%s); %s", why,
               n ? "the tasks get the plan decided at submission" : "no plan to pass on");
}

/*
 * The card the step runs on: the smallest GPU hwloc sees among the step's (or, when Slurm's
 * numbers do not map onto the topology, the node's), else the card asked for at submission.
 * 0 with *card and seen filled; 1 when there is none (the submitted plan is passed on);
 * -1 when hwloc failed (OnError has spoken).
 */
static int node_card(spank_t sp, const struct fg_policy *pol, const struct fg_gpu_table *table,
                     struct fg_gpu *card, char *seen, size_t cap)
{
    char visible[512] = "", buf[1024];
    struct fg_err err = {0};
    const char *vname = "SLURM_STEP_GPUS";
    if (!fitgate_env(sp, vname, visible, sizeof visible)) {
        vname = "SLURM_JOB_GPUS";
        fitgate_env(sp, vname, visible, sizeof visible);
    }
    struct fg_detect_opts o = {.xml_path = pol->topology[0] ? pol->topology : NULL,
                               .visible = visible[0] ? visible : NULL,
                               .visible_name = vname,
                               .table = table};
    struct fg_detect_result *res = NULL;
    int rc = fg_detect_gpus(&o, &res, &err);
    if (rc == FG_E_RANGE) {
        /* Slurm's device numbers do not map onto this topology (gres.conf File= order
         * differs from the PCI order): judge by the node's GPUs, smallest first. */
        slurm_debug("fitgate: %s; using every GPU of the node", err.detail);
        o.visible = NULL;
        rc = fg_detect_gpus(&o, &res, &err);
    }
    if (rc) {
        cannot_check("the GPUs of this node", err.detail,
                     "the admin's topology= file or this node's hwloc needs a look",
                     pol->on_error);
        return -1;
    }
    bool have = false;
    for (size_t i = 0; i < res->n; i++) {
        const struct fg_detected_gpu *g = &res->gpus[i];
        if (!g->row || !g->memory_bytes)
            continue;
        if (!have || g->memory_bytes < card->memory_bytes) {
            *card = *g->row;
            if (g->memory_bytes < card->memory_bytes || !card->memory_bytes)
                card->memory_bytes = g->memory_bytes;
            have = true;
        }
    }
    snprintf(seen, cap, "hwloc, %s", res->topology);
    fg_detect_result_free(res);
    if (!have) {
        /* hwloc sees no GPU we can size (no driver attributes, fake devices): take the
         * card the job asked for at submission. */
        const struct fg_gpu *g = NULL;
        if (fitgate_submitted(sp, "CARD", buf, sizeof buf))
            g = fg_gpu_find(table, buf, NULL);
        if (!g) {
            export_submitted_plan(sp, "no GPU hwloc can size, no card named at submission");
            return 1;
        }
        *card = *g;
        snprintf(seen, cap, "the card asked for at submission; hwloc sees no GPU it can size");
    }
    return 0;
}

/* Say the decision on the node and export its layout; a rejection fails the step. */
static void act(spank_t sp, struct fg_decision *d, const struct fg_request *q,
                const struct fg_job *job, const struct fg_rules *r, const struct fg_gpu *card,
                const char *seen, uint32_t sub_accum)
{
    char node[64] = "this node";
    gethostname(node, sizeof node - 1);
    if (d->kind == FG_DECIDE_REJECT) {
        /* (a borderline job under Borderline=reject, and a mode the site does not allow, keep
         * the decision's own words) */
        if (!d->fits && (r->modes & (1u << job->mode)))
            snprintf(d->lines[0], sizeof d->lines[0],
                     "fitgate: rejected on %.40s: %.120s (--ft-mode=%.8s) does not fit the %u x "
                     "%.24s allocated here (%.80s)", node, q->model, fg_mode_name(job->mode),
                     q->count, card->label, seen);
        say(d);
        stepd.failed = true;
        return;
    }
    if (d->kind == FG_DECIDE_WARN && !d->fits)
        say(d); /* Action=warn: the real GPUs are smaller than the job assumed */
    if (d->resize_batch)
        say(d);
    if (d->has_layout) {
        if (sub_accum > d->layout.grad_accum && d->layout.micro_batch == job->batch)
            d->layout.grad_accum = sub_accum;
        if (fitgate_export(&d->layout, q->type, d->layout.gpus, setenv_cb, sp))
            slurm_error("fitgate: could not export FITGATE_* to the tasks");
    }
}

/*
 * The job's config (--ft-config) read here again: a file that changed since submission is a
 * job other than the one judged there, and is refused (the step fails, the node stays).  A
 * submission without a digest (a REST job the plugin did not see at sbatch) is checked as the
 * file reads now.  true when refused.
 */
static bool config_changed(spank_t sp, const struct fg_jobspec *spec)
{
    char then[40], now[24];
    if (!spec->config_digest || !fitgate_submitted(sp, "CONFIG_DIGEST", then, sizeof then))
        return false;
    fitgate_config_digest(spec, now, sizeof now);
    if (!strcmp(then, now))
        return false;
    struct fg_decision d;
    memset(&d, 0, sizeof d);
    d.kind = FG_DECIDE_REJECT;
    snprintf(d.lines[0], sizeof d.lines[0], "fitgate: rejected: the job's config (%.250s) "
             "changed since submission (digest %.20s then, %s now)", spec->configs[0], then, now);
    snprintf(d.lines[1], sizeof d.lines[1], "fitgate: the job was judged on the file as it was; "
             "submit it again to have it judged as it is");
    say(&d);
    stepd.failed = true;
    return true;
}

/* pol: the policy fitgate_engine_stepd parsed once for the check and the audit line
 * (borrowed); pol_error: what was wrong with it, or NULL. */
static void check(spank_t sp, const struct fg_policy *pol, const char *pol_error)
{
    const char *model_arg = fitgate_option(FG_JOBOPT_MODEL);
    struct fg_err err = {0};
    struct fg_gpu_table *own = NULL;
    struct fg_model *m = NULL;
    struct fg_assessment *a = NULL;
    char part[64] = "", seen[300];
    if (pol_error) {
        cannot_check("this job", pol_error, FITGATE_TODO_POLICY, pol->on_error);
        return;
    }
    fitgate_env(sp, "SLURM_JOB_PARTITION", part, sizeof part);
    struct fg_rules rules;
    fg_policy_rules_for(pol, part, &rules);
    if (rules.action == FG_ACTION_OFF)
        return;
    rules.shrink = false; /* the allocation exists: nothing to give back now */

    static struct fg_jobspec spec; /* 20 KB; one check per process */
    char user_dir[1024] = "";
    fitgate_env(sp, "SLURM_SUBMIT_DIR", user_dir, sizeof user_dir);
    if (fitgate_job(&spec, user_dir[0] ? user_dir : NULL, &err)) {
        cannot_check(model_arg ? model_arg : "this job", err.detail, NULL, pol->on_error);
        return;
    }
    model_arg = spec.model;
    if (config_changed(sp, &spec))
        return;
    struct fg_job *job = &spec.job;
    /* A micro-batch lowered at submission is what the job runs. */
    uint32_t sub_mb = submitted_u32(sp, "MICRO_BATCH");
    uint32_t sub_accum = submitted_u32(sp, "GRAD_ACCUM");
    if (sub_mb && sub_mb < job->batch)
        job->batch = sub_mb;

    uint32_t on_node = env_u32(sp, "SLURM_GPUS_ON_NODE");
    if (!on_node)
        return; /* no GPU here: the submit-time check said what there was to say */
    uint32_t nodes = env_u32(sp, "SLURM_STEP_NUM_NODES");
    if (!nodes)
        nodes = env_u32(sp, "SLURM_JOB_NUM_NODES");
    if (!nodes)
        nodes = 1;

    const struct fg_gpu_table *table = NULL;
    if (fitgate_gpu_table(pol, &own, &table, &err)) {
        cannot_check("this job", err.detail, FITGATE_TODO_POLICY, pol->on_error);
        goto out;
    }
    struct fg_gpu card;
    if (node_card(sp, pol, table, &card, seen, sizeof seen))
        goto out;

    struct fg_request q;
    memset(&q, 0, sizeof q);
    q.gpu = &card;
    snprintf(q.type, sizeof q.type, "%.*s", (int)strcspn(card.aliases, ","), card.aliases);
    q.via = FG_VIA_GRES;
    q.count = on_node;
    q.nodes = nodes;
    snprintf(q.partition, sizeof q.partition, "%s", part);
    fg_gate_model_label(model_arg, q.model, sizeof q.model);

    uid_t uid = geteuid();
    struct passwd *pw = getpwuid(uid);
    if (fg_gate_load_model(pol, model_arg, user_dir, pw ? pw->pw_name : NULL, (unsigned)uid,
                           true, &m, &err)) {
        /* it was read at submission, where OnError had its say */
        export_submitted_plan(sp, err.detail);
        goto out;
    }
    if (fg_model_unsure_of_memory(m) && rules.on_unknown != FG_ONUNK_ALLOW) {
        /* submission said what OnUnknown says: no second verdict on an unsure count */
        export_submitted_plan(sp, "the model's count is unsure (OnUnknown)");
        goto out;
    }
    if (!(a = calloc(1, sizeof *a)) ||
        fg_assess(m, &spec, &card, fg_request_total(&q), &rules, a, &err)) {
        cannot_check(model_arg, a ? err.detail : "out of memory", NULL, pol->on_error);
        goto out;
    }
    /* Resizing the GPU count is a submit-time act; here only the micro-batch can change. */
    bool micro_fix = a->fit.verdict == FG_FIT_SPLIT && a->fit.max_batch >= 1;
    if (rules.action == FG_ACTION_RESIZE && !micro_fix)
        rules.action = FG_ACTION_REJECT;
    struct fg_decision d;
    fg_decide(&q, a, &rules, &d);
    act(sp, &d, &q, job, &rules, &card, seen, sub_accum);
out:
    free(a);
    fg_model_free(m);
    fg_gpu_table_free(own);
}

int fitgate_engine_stepd(spank_t sp, int ac, char **av, const char *const *values, unsigned n)
{
    fitgate_use_options(values, n);
    fitgate_log_init();
    stepd.failed = false;
    struct fg_policy pol; /* 24 KB, as check() held it before */
    struct fg_err err = {0};
    bool bad = fitgate_policy(ac, av, &pol, &err) != 0;
    check(sp, &pol, bad ? err.detail : NULL);
    fitgate_stepd_record(sp, bad ? NULL : &pol, stepd.failed);
    return stepd.failed ? 1 : 0;
}
