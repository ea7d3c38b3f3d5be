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

int fitgate_job(struct fg_jobspec *spec, struct fg_err *err)
{
    fg_jobspec_init(spec, "--ft-");
    for (unsigned id = 0; id < FITGATE_OPT_COUNT; id++) {
        const char *v = fitgate_option((enum fitgate_opt)id);
        int rc;
        if (v && (rc = fg_jobspec_set(spec, id, v, err)))
            return rc;
    }
    return fg_jobspec_finish(spec, err);
}

void fitgate_line(enum fg_log_level level, const char *prefix, const char *s)
{
    char clean[1200];
    size_t o = 0;
    /* a newline in a model directory or job option would start a line of its own in
     * slurmd.log, slurmctld.log or the job's output: control characters as \xNN */
    for (const unsigned char *p = (const unsigned char *)s; *p && o + 5 < sizeof clean; p++)
        o += (size_t)(*p < 0x20 || *p == 0x7f ? snprintf(clean + o, 5, "\\x%02x", *p)
                                              : (clean[o] = (char)*p, 1));
    clean[o] = '\0';
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
        fitgate_line(d->kind == FG_DECIDE_REJECT ? FG_LOG_ERROR : FG_LOG_WARN, "",
                     d->lines[i]);
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
