/*
 * memory_int.h - the estimator's private half, for the planner: block parts
 * kept across the estimates of one model.  Nothing outside engine/ includes
 * it (tests/integration/layout.sh checks); the public half is memory.h.
 */
#ifndef FG_MEMORY_INT_H
#define FG_MEMORY_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "job/job.h"
#include "memory/memory.h"
#include "model/model.h"

/*
 * Internal (the planner): block parts kept across the estimates of one model, so that an
 * estimate whose job reads the blocks as an earlier one did (same mode, TP, EP, LoRA
 * targets and rank, precision) recomputes none of them.  fg__parts_new returns NULL when
 * out of memory; the caller frees it with fg__parts_free (NULL-safe) and uses it for one
 * model only.  fg__memory_estimate_parts is fg_memory_estimate_totals with it.
 */
struct fg__parts;
struct fg__parts *fg__parts_new(void);
void fg__parts_free(struct fg__parts *p);
int fg__memory_estimate_parts(const struct fg_model *m, const struct fg_job *job,
                              struct fg_estimate *e, struct fg__parts *parts, struct fg_err *err);

/* ---- the estimator's part for preference and RL trainers (memory_rl.c): memory.c sizes
 * the models a trainer keeps beside the policy (the estimates asked for below), hands them
 * in, and appends the lines this part returns, so the part calls nothing of memory.c. ---- */

/* The estimates a trainer's part reads (NULL: the trainer keeps no such model). */
struct fg__rl_aux {
    const struct fg_estimate *value;      /* PPO's value model: fg__trainer_value_job */
    const struct fg_estimate *generation; /* generate() on the training GPU:
                                             fg__trainer_generation_job */
};

#define FG__RL_MAX_LINES 6
struct fg__rl_lines {
    size_t n;
    struct fg_line lines[FG__RL_MAX_LINES];
};

/* The job whose totals size PPO's value model: a full fine-tune of the policy's model. */
void fg__trainer_value_job(const struct fg_job *job, struct fg_job *out);

/* The serving job whose KV cache sizes generate() on the training GPU: the job's
 * completions at seq tokens, on its stage and layout. */
void fg__trainer_generation_job(const struct fg_job *job, uint64_t seq, struct fg_job *out);

/*
 * What job's trainer (not SFT) adds to e, the estimate of its adaptation: e's fields
 * updated, its logits line retaken when lines is set, the lines to append in add.  The
 * caller recomputes e->total_bytes.  Never fails.
 */
void fg__memory_trainer(const struct fg_model *m, const struct fg_job *job,
                        const struct fg__rl_aux *aux, bool lines, struct fg_estimate *e,
                        struct fg__rl_lines *add);

#endif
