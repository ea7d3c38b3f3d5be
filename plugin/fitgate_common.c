/*
 * fitgate_common.c - what both contexts need: the job's options through the
 * engine's parser, the policy, the GPU table, messages, and the plan as
 * environment variables, and what the submit side packed for the node side.  The model is read by fg_gate_load_model
 * (policies/gate.h), as fitgate check reads it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fitgate.h"
#include "hw/gpu.h"
#include "job/jobfile.h"
#include "util/fmt.h"
#include "util/log.h"
#include "plan/plan.h"
#include "remedy_file.h"

static const char *const *option_values;
static unsigned n_values;

void fitgate_use_options(const char *const *values, unsigned n)
{
    option_values = values;
    n_values = n;
}

const char *fitgate_option(enum fg_jobopt_id id)
{
    return option_values && (unsigned)id < n_values && (unsigned)id < FG_JOBOPT_COUNT
               ? option_values[id]
               : NULL;
}

int fitgate_job(struct fg_jobspec *spec, const char *base_dir, struct fg_err *err)
{
    fg_jobspec_init(spec, "--ft-");
    for (unsigned id = 0; id < FG_JOBOPT_COUNT; id++) {
        const char *v = fitgate_option((enum fg_jobopt_id)id);
        int rc;
        if (v && (rc = fg_jobspec_set(spec, id, v, err)))
            return rc;
    }
    int rc = fg_jobfile_apply(spec, base_dir, err);
    for (size_t i = 0; !rc && i < spec->n_unknown; i++) {
        char said[sizeof spec->unknown[0] + 40];
        snprintf(said, sizeof said, "%s: changes memory, not modelled", spec->unknown[i]);
        fitgate_line(FG_LOG_WARN, "fitgate: warning: ", said); /* a key of the job's file */
    }
    return rc ? rc : fg_jobspec_finish(spec, err);
}

void fitgate_config_digest(const struct fg_jobspec *spec, char *buf, size_t cap)
{
    snprintf(buf, cap, "%016llx", (unsigned long long)spec->config_digest);
}

void fitgate_line(enum fg_log_level level, const char *prefix, const char *s)
{
    char clean[1200];
    /* a newline in a model directory or job option would start a line of its own in
     * slurmd.log, slurmctld.log or the job's output: control characters as \xNN
     * (util/fmt.h fg__esc, as every message fitgate prints) */
    fg__esc(clean, sizeof clean, s, strlen(s), 0);
    if (level == FG_LOG_ERROR)
        slurm_error("%s%s", prefix, clean);
    else if (level <= FG_LOG_WARN)
        slurm_info("%s%s", prefix, clean);
    else
        slurm_debug("%s%s", prefix, clean);
}

void fitgate_error(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fitgate_line(FG_LOG_ERROR, "fitgate: ", msg);
}

/* Engine messages: warnings reach the user, the rest Slurm's debug log. */
static void sink(enum fg_log_level level, const char *msg, void *ctx)
{
    (void)ctx;
    fitgate_line(level <= FG_LOG_WARN ? FG_LOG_WARN : FG_LOG_DEBUG, "fitgate: ", msg);
}

void fitgate_log_init(void)
{
    fg_log_set_sink(sink, NULL, FG_LOG_DEBUG);
}

int fitgate_policy(int ac, char **av, struct fg_policy *p, struct fg_err *err)
{
    return fg_policy_setup(p, ac, av, "plugstack.conf (spank_fitgate.so)", err);
}

int fitgate_gpu_table(const struct fg_policy *p, struct fg_gpu_table **out,
                      const struct fg_gpu_table **use, struct fg_err *err)
{
    *use = NULL;
    int rc = fg_policy_gpu_table(p, out, err);
    if (!rc)
        *use = *out ? *out : fg_gpu_table_builtin();
    return rc;
}

void fitgate_say(const struct fg_decision *d)
{
    const char *lines[FG_DECIDE_LINES + FG_REMEDY_MAX];
    size_t n = fg_decide_lines(d, lines, sizeof lines / sizeof lines[0]);
    for (size_t i = 0; i < n; i++) {
        fitgate_line(d->kind == FG_DECIDE_REJECT ? FG_LOG_ERROR : FG_LOG_WARN, "", lines[i]);
    }
}

void fitgate_say_edits(const struct fg_decision *d, const struct fg_remedies *rem,
                       const struct fg_jobspec *spec)
{
    for (size_t i = 0; spec->n_configs && i < rem->n && i < d->n_remedies; i++) {
        struct fg_jobfile_edits ed;
        struct fg_err err = {0};
        char w[700], line[800];
        if (fg_remedy_file_edits(&rem->r[i], spec, NULL, &ed, &err))
            continue;
        for (size_t k = 0; k < ed.n; k++) {
            fg_remedy_file_words(&ed.e[k], w, sizeof w);
            snprintf(line, sizeof line, "fitgate:   remedy %zu in the file: %s", i + 1, w);
            fitgate_line(d->kind == FG_DECIDE_REJECT ? FG_LOG_ERROR : FG_LOG_WARN, "", line);
        }
    }
}

int fitgate_export(const struct fg_layout *l, const char *card, uint32_t gpus,
                   int (*set)(const char *name, const char *value, void *ctx), void *ctx)
{
    char v[32];
    int rc = fg_layout_env(l, set, ctx);
    if (rc)
        return rc;
    if (card && *card && (rc = set("FITGATE_CARD", card, ctx)))
        return rc;
    snprintf(v, sizeof v, "%u", gpus);
    return set("FITGATE_GPUS", v, ctx);
}

bool fitgate_env(spank_t sp, const char *name, char *buf, size_t cap)
{
    return spank_getenv(sp, name, buf, (int)cap) == ESPANK_SUCCESS && buf[0];
}

/*
 * A value decided at submission (export_one in fitgate_alloc.c): its field of the packed
 * SLURM_SPANK_FITGATE_PLAN ("TP=1;PP=2;..."), else SLURM_SPANK_FITGATE_<key> alone (a
 * value that could not be packed, or a job submitted by an older fitgate).
 *
 * These arrive in the job's environment, which a client that is not sbatch (a REST call)
 * writes as it likes; job_submit.lua sets them to what spank_job_env says, but a site may
 * run the plugin alone.  So none of them may lower the check on their own word: a
 * submitted micro-batch is taken only below the job's own --ft-batch (and then it is what
 * the tasks are told to run, FITGATE_MICRO_BATCH), gradient accumulation only upwards (it
 * costs no memory), and CARD only where hwloc sizes no GPU (fake devices, no driver
 * attributes), where the node has nothing else; on such nodes the controller's check of
 * the job's own request is the enforcement (docs/plugin.md, "Enforcing at the controller").
 */
bool fitgate_submitted(spank_t sp, const char *key, char *buf, size_t cap)
{
    char plan[2048], name[64];
    size_t kl = strlen(key);
    if (fitgate_env(sp, "SLURM_SPANK_FITGATE_PLAN", plan, sizeof plan))
        for (const char *p = plan; *p;) {
            size_t n = strcspn(p, ";");
            /* a field longer than buf is not cut short: the variable alone may hold it */
            if (n > kl + 1 && !strncmp(p, key, kl) && p[kl] == '=' && n - kl - 1 < cap) {
                snprintf(buf, cap, "%.*s", (int)(n - kl - 1), p + kl + 1);
                return true;
            }
            p += n + (p[n] == ';');
        }
    snprintf(name, sizeof name, "SLURM_SPANK_FITGATE_%s", key);
    return fitgate_env(sp, name, buf, cap);
}
