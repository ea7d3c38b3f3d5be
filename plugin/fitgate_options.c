/*
 * fitgate_options.c - the --ft-* options: one table and one callback that
 * keeps the value (callbacks may run more than once: from the environment
 * and from the command line, and twice for an srun step).  Part of the thin
 * plugin: no engine code here; the values are checked by the engine part
 * when a job is tagged (fitgate_common.c: fitgate_job).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fitgate.h"

static char *values[FG_JOBOPT_COUNT];

static int option_cb(int val, const char *optarg, int remote);

/* name, arg, usage, has_arg, val, cb: the SPANK option table, one row per line of
 * engine/job/jobopts.def (a header of data: no engine code is linked here). */
static struct spank_option table[] = {
#define FG_JOBOPT(id, name, arg, has_arg, help)                                                \
    {"ft-" name, arg, "[fitgate] " help, has_arg, FG_JOBOPT_##id, option_cb},
#include "job/jobopts.def"
#undef FG_JOBOPT
};
#define NOPTS (sizeof table / sizeof table[0])
_Static_assert(NOPTS == FG_JOBOPT_COUNT, "one table row per option");

static int keep(enum fg_jobopt_id id, const char *v)
{
    char *copy = strdup(v);
    if (!copy)
        return -1;
    free(values[id]);
    values[id] = copy;
    return 0;
}

static int option_cb(int val, const char *optarg, int remote)
{
    (void)remote;
    if (val < 0 || val >= (int)FG_JOBOPT_COUNT)
        return -1;
    /* a flag has no value */
    const char *v = table[val].has_arg ? optarg : "1";
    if (!v || strlen(v) > 1000) {
        slurm_error("fitgate: --%s needs a value of at most 1000 characters", table[val].name);
        return -1;
    }
    if (keep((enum fg_jobopt_id)val, v)) {
        slurm_error("fitgate: out of memory keeping --%s", table[val].name);
        return -1;
    }
    return 0;
}

int fitgate_options_register(spank_t sp)
{
    for (size_t i = 0; i < NOPTS; i++) {
        spank_err_t rc = spank_option_register(sp, &table[i]);
        if (rc != ESPANK_SUCCESS) {
            slurm_error("fitgate: cannot register --%s: %s", table[i].name, spank_strerror(rc));
            return -1;
        }
    }
    return 0;
}

bool fitgate_tagged(void)
{
    return values[FG_JOBOPT_MODEL] != NULL || values[FG_JOBOPT_CONFIG] != NULL;
}

void fitgate_options_from_env(spank_t sp)
{
    char name[128], val[1024];
    for (size_t i = 0; i < NOPTS; i++) {
        if (values[i])
            continue;
        /* SLURM_SPANK__SLURM_SPANK_OPTION_<plugin>_<option, '-' as '_'> */
        int w = snprintf(name, sizeof name, "SLURM_SPANK__SLURM_SPANK_OPTION_fitgate_%s",
                         table[i].name);
        for (int k = w - (int)strlen(table[i].name); k < w; k++)
            if (name[k] == '-')
                name[k] = '_';
        if (spank_getenv(sp, name, val, sizeof val) != ESPANK_SUCCESS)
            continue;
        /* a flag travels as an empty value */
        (void)keep((enum fg_jobopt_id)i, table[i].has_arg ? val : "1");
    }
}

const char *const *fitgate_option_values(void)
{
    return (const char *const *)values;
}
