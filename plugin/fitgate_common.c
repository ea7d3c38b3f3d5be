/*
 * fitgate_common.c - what both contexts need: the job's options through the
 * engine's parser, the policy, the GPU table, messages, and the plan as
 * environment variables.  The model is read by fg_gate_load_model
 * (policies/gate.h), as fitgate check reads it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fitgate.h"
#include "gpu.h"
#include "jobfile.h"
#include "log.h"
#include "plan.h"

static const char *const *option_values;
static unsigned n_values;

void fitgate_use_options(const char *const *values, unsigned n)
{
    option_values = values;
    n_values = n;
}

const char *fitgate_option(enum fitgate_opt id)
{
    return option_values && (unsigned)id < n_values && (unsigned)id < FITGATE_OPT_COUNT
               ? option_values[id]
               : NULL;
}

int fitgate_job(struct fg_jobspec *spec, const char *base_dir, struct fg_err *err)
{
    fg_jobspec_init(spec, "--ft-");
    for (unsigned id = 0; id < FITGATE_OPT_COUNT; id++) {
        const char *v = fitgate_option((enum fitgate_opt)id);
        int rc;
        if (v && (rc = fg_jobspec_set(spec, id, v, err)))
            return rc;
    }
    int rc = fg_jobfile_apply(spec, base_dir, err);
    for (size_t i = 0; !rc && i < spec->n_unknown; i++)
        slurm_info("fitgate: warning: %s: changes memory, not modelled", spec->unknown[i]);
    return rc ? rc : fg_jobspec_finish(spec, err);
}

void fitgate_config_digest(const struct fg_jobspec *spec, char *buf, size_t cap)
{
    snprintf(buf, cap, "%016llx", (unsigned long long)spec->config_digest);
}

void fitgate_error(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    slurm_error("fitgate: %s", msg);
}

/* Engine messages: warnings reach the user, the rest Slurm's debug log. */
static void sink(enum fg_log_level level, const char *msg, void *ctx)
{
    (void)ctx;
    if (level <= FG_LOG_WARN)
        slurm_info("fitgate: %s", msg);
    else
        slurm_debug("fitgate: %s", msg);
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
    *out = NULL;
    *use = NULL;
    if (p->gpu_table[0]) {
        int rc = fg_gpu_table_load(p->gpu_table, out, err);
        if (rc)
            return rc;
        *use = *out;
        return 0;
    }
    *use = fg_gpu_table_builtin();
    return 0;
}

void fitgate_say(const struct fg_decision *d)
{
    for (int i = 0; i < FG_DECIDE_LINES; i++) {
        if (!d->lines[i][0])
            continue;
        if (d->kind == FG_DECIDE_REJECT)
            slurm_error("%s", d->lines[i]);
        else
            slurm_info("%s", d->lines[i]);
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
