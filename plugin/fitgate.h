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
#include "gate.h"
#include "job/jobspec.h"
#include "util/error.h"
#include "util/log.h"
#include "memory/memory.h"
#include "model/model.h"
#include "policy.h"

/* The option values cross from the thin plugin to the engine part indexed by engine/job/jobspec.h's
 * enum fg_jobopt_id (jobopts.def's row numbers: append only, so a number means the same
 * option in every release). */

/* ---- the thin plugin (spank_fitgate.so): fitgate_dispatch.c, fitgate_options.c ----
 * Loaded into every sbatch / salloc / srun / slurmstepd: options only, no engine, no
 * library beyond libc and libdl.  The engine part (fitgate_engine.so) is dlopen'ed
 * the first time a job is tagged with --ft-model. */

/* Register the --ft-* options (valid only inside slurm_spank_init). */
int fitgate_options_register(spank_t sp);

/* Whether the job is tagged at all (--ft-model or --ft-config given). */
bool fitgate_tagged(void);

/*
 * Remote context: take options the callbacks did not see from the job's
 * environment (--export=NONE drops _SLURM_SPANK_OPTION_*; the SLURM_SPANK_
 * copy survives).
 */
void fitgate_options_from_env(spank_t sp);

/* The values as given, indexed by enum fg_jobopt_id (NULL: not given); borrowed. */
const char *const *fitgate_option_values(void);

/* ---- the engine part's entry points (fitgate_engine.so, exported) -------------- */

/* The option values cross the .so boundary with their count: an engine part newer than
 * the thin plugin reads only the n it was given, an older one only the options it knows. */

/* Submit time (allocator, or srun creating an allocation): 0, or -1 to refuse the job. */
int fitgate_engine_alloc(spank_t sp, int ac, char **av, const char *const *values, unsigned n);
typedef int (*fitgate_engine_alloc_fn)(spank_t, int, char **, const char *const *, unsigned);

/* On the node, from user_init: 0, or 1 when task_init must fail the step.  Never drains. */
int fitgate_engine_stepd(spank_t sp, int ac, char **av, const char *const *values, unsigned n);
typedef int (*fitgate_engine_stepd_fn)(spank_t, int, char **, const char *const *, unsigned);

/* On the node, from slurm_spank_exit: the job's end.  Stops GpuSampler= and writes its peak
 * (a "stepd" line with gpu_peak_bytes); nothing when no sampler was started.  Optional: an
 * older engine part has none. */
void fitgate_engine_stepd_exit(void);
typedef void (*fitgate_engine_stepd_exit_fn)(void);

/* ---- inside the engine part ----------------------------------------------------- */

/* The option values of this job (set by the entry points, n of them); borrowed. */
const char *fitgate_option(enum fg_jobopt_id id);
void fitgate_use_options(const char *const *values, unsigned n);

/* The --ft-* options through the engine's one parser (jobspec.h), the job's own config files
 * read (--ft-config, jobfile.h; relative paths against base_dir, NULL: the current directory),
 * finished with the job's framework; an error names the --ft- option or the file. */
int fitgate_job(struct fg_jobspec *spec, const char *base_dir, struct fg_err *err);

/* The config digest as it travels in the packed plan (CONFIG_DIGEST=): 16 hex digits. */
void fitgate_config_digest(const struct fg_jobspec *spec, char *buf, size_t cap);

/* ---- fitgate_stepd.c, fitgate_record.c ------------------------------------ */

/*
 * A value decided at submission into buf (cap bytes): key's field of
 * the packed SLURM_SPANK_FITGATE_PLAN, else SLURM_SPANK_FITGATE_<key> alone; false when
 * neither holds one that fits.  The job's environment: callers bound what they take.
 */
bool fitgate_submitted(spank_t sp, const char *key, char *buf, size_t cap);

/* The job's environment variable name into buf (cap bytes); false when unset, empty or
 * longer than buf. */
bool fitgate_env(spank_t sp, const char *name, char *buf, size_t cap);

/*
 * On the node, after the check: the audit line "stepd" (job id, the submit_id carried
 * from submission), for `fitgate learn` to join.  Node 0 of the batch step (or step 0)
 * only; nothing when pol is NULL (it did not parse: the check said so), LogFile= is unset
 * or the job carries no submit id.  pol is borrowed for the call.  Never fails.
 */
void fitgate_stepd_record(spank_t sp, const struct fg_policy *pol, bool failed);

/* Whether s has the shape of a submit_id fg_audit_rec_init writes (host:pid:sec.ns:seq). */
bool fitgate_submit_id_valid(const char *s);

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

/* What to do when the policy itself is broken (third message line). */
#define FITGATE_TODO_POLICY "the site's fitgate policy needs fixing: tell the admin (the line above names it)"

/* Print a decision's lines: slurm_error for rejections, slurm_info otherwise. */
void fitgate_say(const struct fg_decision *d);

/* Under the decision's lines, a job read from its own files: each remedy shown as the edit of
 * the file that makes it ("remedy 1 in the file: qlora.yml:46 gradient_checkpointing: false
 * -> true"), files read from sbatch's directory. */
struct fg_remedies;
void fitgate_say_edits(const struct fg_decision *d, const struct fg_remedies *rem,
                       const struct fg_jobspec *spec);
/* One line to Slurm's log at level (error, warn = info, debug), prefix then s with its
 * control characters written \xNN: user text (a model directory) cannot start a line. */
void fitgate_line(enum fg_log_level level, const char *prefix, const char *s);

/* Print one line with the prefix (slurm_error). */
void fitgate_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Export a layout through set(name, value, ctx): the FITGATE_* variables of
 * fg_layout_env plus FITGATE_CARD and FITGATE_GPUS.
 */
int fitgate_export(const struct fg_layout *l, const char *card, uint32_t gpus,
                   int (*set)(const char *name, const char *value, void *ctx), void *ctx);

#endif
