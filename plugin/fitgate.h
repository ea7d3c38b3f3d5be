/*
 * fitgate.h - internal to the SPANK plugin (never installed).
 *
 * The plugin is glue: Slurm contexts in, engine + policies out, in two objects
 * so that jobs without --ft-model pay nothing (no engine, no libcurl / hwloc /
 * cJSON loaded into every sbatch and slurmstepd):
 *
 *   spank_fitgate.so    the plugin Slurm loads (plugstack.conf)
 *     fitgate_dispatch.c  the slurm_spank_* entry points, switching on spank_context(),
 *                         and the lazy dlopen of the engine part
 *     fitgate_options.c   the --ft-* option table and its callbacks
 *   fitgate_engine.so   next to it (or plugstack engine=PATH), loaded for tagged jobs
 *     fitgate_common.c    options checked, policy, model loading, messages, plan export
 *     fitgate_alloc.c     submit time: sbatch, salloc, srun creating an allocation
 *     fitgate_stepd.c     on the node: slurmstepd (batch step and srun steps)
 *
 * Every message starts with "fitgate: ".  Functions return 0 or a negative
 * FG_E_* code (error.h) unless said otherwise; SPANK callbacks return 0 or -1.
 */
#ifndef FITGATE_PLUGIN_H
#define FITGATE_PLUGIN_H

#include <slurm/spank.h>
#include <stdbool.h>

#include "decide.h"
#include "error.h"
#include "memory.h"
#include "model.h"
#include "policy.h"

/* Append only: the thin plugin hands the engine part its values indexed by these numbers,
 * so a number must mean the same option in every release. */
enum fitgate_opt {
    FITGATE_OPT_MODEL,
    FITGATE_OPT_MODE,
    FITGATE_OPT_SEQ_LEN,
    FITGATE_OPT_BATCH,
    FITGATE_OPT_LORA_RANK,
    FITGATE_OPT_LORA_TARGETS,
    FITGATE_OPT_PRECISION,
    FITGATE_OPT_OPTIMIZER,
    FITGATE_OPT_QUANT,
    FITGATE_OPT_ZERO,
    FITGATE_OPT_GRAD_CKPT,
    FITGATE_OPT_GPU,
    FITGATE_OPT_GPUS,
    FITGATE_OPT_ATTENTION,
    FITGATE_OPT_COUNT
};

/* ---- the thin plugin (spank_fitgate.so): fitgate_dispatch.c, fitgate_options.c ----
 * Loaded into every sbatch / salloc / srun / slurmstepd: options only, no engine, no
 * library beyond libc and libdl.  The engine part (fitgate_engine.so) is dlopen'ed
 * the first time a job is tagged with --ft-model. */

/* Register the --ft-* options (valid only inside slurm_spank_init). */
int fitgate_options_register(spank_t sp);

/* Whether the job is tagged at all (--ft-model given). */
bool fitgate_tagged(void);

/*
 * Remote context: take options the callbacks did not see from the job's
 * environment (--export=NONE drops _SLURM_SPANK_OPTION_*; the SLURM_SPANK_
 * copy survives).
 */
void fitgate_options_from_env(spank_t sp);

/* The values as given, indexed by enum fitgate_opt (NULL: not given); borrowed. */
const char *const *fitgate_option_values(void);

/* ---- the engine part's entry points (fitgate_engine.so, exported) -------------- */

/* Submit time (allocator, or srun creating an allocation): 0, or -1 to refuse the job. */
int fitgate_engine_alloc(spank_t sp, int ac, char **av, const char *const *values);
typedef int (*fitgate_engine_alloc_fn)(spank_t, int, char **, const char *const *);

/* On the node, from user_init: 0, or 1 when task_init must fail the step.  Never drains. */
int fitgate_engine_stepd(spank_t sp, int ac, char **av, const char *const *values);
typedef int (*fitgate_engine_stepd_fn)(spank_t, int, char **, const char *const *);

/* ---- inside the engine part ----------------------------------------------------- */

/* The option values of this job (set by the entry points); borrowed. */
const char *fitgate_option(enum fitgate_opt id);
void fitgate_use_options(const char *const *values);

/* The --ft-* options, checked, as an engine job (fg_job_defaults for the rest). */
int fitgate_job(struct fg_job *job, struct fg_err *err);

/* ---- fitgate_common.c ----------------------------------------------------- */

/* Route engine log messages to Slurm's log. */
void fitgate_log_init(void);

/*
 * Policy from the plugstack arguments (and the file they name).  On error
 * *p holds what parsed (OnError included) and err names file:line.
 */
int fitgate_policy(int ac, char **av, struct fg_policy *p, struct fg_err *err);

/* The GPU table: built-in, plus GpuTable= rows.  Borrowed / caller frees with fg_gpu_table_free. */
int fitgate_gpu_table(const struct fg_policy *p, struct fg_gpu_table **out,
                      const struct fg_gpu_table **use, struct fg_err *err);

/*
 * --ft-model as a graph: a path (relative paths resolved against base_dir,
 * which may be NULL for the current directory) or org/name[@rev] through
 * the policy's model directories, cache and hub (bounded by HubTimeout).
 * user names the cache directory's %u; uid its %U.  offline keeps the hub
 * out (slurmstepd: compute nodes often have no route to it; the caches and
 * site directories still answer).
 */
int fitgate_load_model(const struct fg_policy *p, const char *arg, const char *base_dir,
                       const char *user, unsigned uid, bool offline, struct fg_model **out,
                       struct fg_err *err);

/* What to do when the policy itself is broken (third message line). */
#define FITGATE_TODO_POLICY "the site's fitgate policy needs fixing: tell the admin (the line above names it)"

/* --ft-model for messages: an id as given, a path by its last directory name. */
void fitgate_model_label(const char *arg, char *buf, size_t cap);

/* Print a decision's lines: slurm_error for rejections, slurm_info otherwise. */
void fitgate_say(const struct fg_decision *d);

/* Print one line with the prefix (slurm_error). */
void fitgate_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Export a layout through set(name, value, ctx): the FITGATE_* variables of
 * fg_layout_env plus FITGATE_CARD and FITGATE_GPUS.
 */
int fitgate_export(const struct fg_layout *l, const char *card, uint32_t gpus,
                   int (*set)(const char *name, const char *value, void *ctx), void *ctx);

#endif
