/*
 * fitgate_dispatch.c - the SPANK entry points: one switch on spank_context(),
 * and the engine part (fitgate_engine.so) loaded only for a job tagged with
 * --ft-model.  Untagged jobs pass through every callback untouched: no file
 * is read, nothing is loaded.
 *
 *   S_CTX_ALLOCATOR  sbatch, salloc    init_post_opt -> fitgate_engine_alloc
 *   S_CTX_LOCAL      srun              same, unless inside an allocation (the
 *                                      allocation was checked; the node checks the step)
 *   S_CTX_REMOTE     slurmstepd        user_init -> fitgate_engine_stepd; task_init
 *                                      fails the step it recorded (never earlier:
 *                                      that drains the node, docs/design.md);
 *                                      exit -> fitgate_engine_stepd_exit (GpuSampler=)
 *   others           slurmd, prolog    nothing
 *
 * If the engine part cannot be loaded the job is let through with a message:
 * a broken installation must not stop every tagged job (and the policy that
 * would say otherwise is read by the engine part).
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fitgate.h"

SPANK_PLUGIN(fitgate, 1);

/*
 * Slurm >= 25.05 reads this variable when a required plugin's slurm_spank_init fails
 * (SchedMD/slurm src/common/spank.c, _do_call_stack: rc = *(sp->ops.init_failure_mode) for
 * SPANK_INIT; slurm/spank.h; spank(8)): ESPANK_JOB_FAILURE fails the job instead of the
 * default ESPANK_NODE_FAILURE, which drains the node (slurmd's _launch_job_fail).  Our remote
 * init returns 0 anyway; this covers what may fail before it (a Slurm that cannot dlopen
 * us never reaches this).  Older releases have neither the symbol nor the code: nothing
 * to export there (their loader looks up a fixed list of names).
 */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0)
int slurm_spank_init_failure_mode = ESPANK_JOB_FAILURE;
#endif

static struct {
    void *handle;
    fitgate_engine_alloc_fn alloc;
    fitgate_engine_stepd_fn stepd;
    fitgate_engine_stepd_exit_fn stepd_exit; /* NULL: an engine part without one */
    bool step_fails;
} engine;

/* The engine: plugstack engine=PATH, else fitgate_engine.so beside this plugin. */
static int load_engine(int ac, char **av)
{
    char path[PATH_MAX];
    const char *given = NULL;
    if (engine.handle)
        return 0;
    for (int i = 0; i < ac; i++)
        if (!strncmp(av[i], "engine=", 7))
            given = av[i] + 7;
    if (given) {
        snprintf(path, sizeof path, "%s", given);
    } else {
        Dl_info info;
        const char *slash;
        if (!dladdr((void *)&fitgate_options_register, &info) || !info.dli_fname ||
            !(slash = strrchr(info.dli_fname, '/'))) {
            slurm_error("fitgate: cannot find this plugin's directory; set engine=PATH in "
                        "plugstack.conf; the job is not checked");
            return -1;
        }
        snprintf(path, sizeof path, "%.*s/fitgate_engine.so", (int)(slash - info.dli_fname),
                 info.dli_fname);
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        slurm_error("fitgate: cannot load %s (%s); the job is not checked", path, dlerror());
        return -1;
    }
    engine.alloc = (fitgate_engine_alloc_fn)dlsym(h, "fitgate_engine_alloc");
    engine.stepd = (fitgate_engine_stepd_fn)dlsym(h, "fitgate_engine_stepd");
    engine.stepd_exit = (fitgate_engine_stepd_exit_fn)dlsym(h, "fitgate_engine_stepd_exit");
    if (!engine.alloc || !engine.stepd) {
        slurm_error("fitgate: %s is not fitgate's engine (entry points missing); the job is "
                    "not checked", path);
        dlclose(h);
        return -1;
    }
    engine.handle = h;
    return 0;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    switch (spank_context()) {
    case S_CTX_ALLOCATOR:
    case S_CTX_LOCAL:
        return fitgate_options_register(sp);
    case S_CTX_REMOTE:
        /* a failure here would drain the node: the job then runs unchecked */
        if (fitgate_options_register(sp))
            slurm_error("fitgate: options not registered on this node; jobs run unchecked");
        return 0;
    default:
        return 0;
    }
}

/* Whether the admin's plugstack line turns RequireTag on (requiretag=yes): only then does an
 * untagged job load the engine part, which reads the policy (a partition may say no).  The
 * words are the policy's (fg_yes_no) and the last requiretag= wins, as in
 * fg_policy_args; a value the policy refuses loads the engine part too, which reports it
 * (OnError=) rather than let untagged GPU jobs through unsaid. */
static bool require_tag_arg(int ac, char **av)
{
    bool on = false;
    for (int i = 0; i < ac; i++)
        if (av[i] && !strncasecmp(av[i], "requiretag=", 11))
            on = fg_yes_no(av[i] + 11) != 0;
    return on;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
    spank_context_t ctx = spank_context();
    if (ctx != S_CTX_ALLOCATOR && ctx != S_CTX_LOCAL)
        return 0;
    if (!fitgate_tagged() && !require_tag_arg(ac, av))
        return 0;
    if (ctx == S_CTX_LOCAL && getenv("SLURM_JOB_ID"))
        return 0;
    if (load_engine(ac, av))
        return 0;
    /* 0 or -1 only, whatever the engine part returns: Slurm >= 25.05 treats any non-zero as
     * an error, and a positive value would read as an ESPANK_* code in its logs */
    return engine.alloc(sp, ac, av, fitgate_option_values(), FG_JOBOPT_COUNT) ? -1 : 0;
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
    if (spank_context() != S_CTX_REMOTE)
        return 0;
    fitgate_options_from_env(sp);
    if (!fitgate_tagged() || load_engine(ac, av))
        return 0;
    engine.step_fails = engine.stepd(sp, ac, av, fitgate_option_values(), FG_JOBOPT_COUNT) == 1;
    return 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
    (void)sp;
    (void)ac;
    (void)av;
    return spank_context() == S_CTX_REMOTE && engine.step_fails ? -1 : 0;
}

/* The job's end on the node: only an engine part loaded for a tagged job has anything to do. */
int slurm_spank_exit(spank_t sp, int ac, char **av)
{
    (void)sp;
    (void)ac;
    (void)av;
    if (spank_context() == S_CTX_REMOTE && engine.handle && engine.stepd_exit)
        engine.stepd_exit();
    return 0;
}
