/*
 * assess_int.h - assess.c's private half (policies/ only), in the order the files build on
 * each other: the job's layout on its GPUs and the estimate on it (assess_layout.c), then a
 * serving engine's budget, fit and fewest GPUs (assess_serve.c), both used by assess.c.
 * Every pointer is borrowed for the call; out / a are the caller's, filled in place.
 */
#ifndef FG_ASSESS_INT_H
#define FG_ASSESS_INT_H

#include "assess.h"

/* ---- assess_layout.c ---- */

/* The framework's layout bits as the planner's (the same values). */
void fg__assess_restrict_to(const struct fg_framework *fw, struct fg_plan_opts *po);

/*
 * The layout the check admits a job that one card does not hold on: of exactly the GPUs
 * asked for, on their nodes, one the framework runs (the plan's option of that count, else
 * a plan of that count alone).  a->at_total_found false when none fits: the plan's
 * smaller counts do not make the asked GPUs run (a layer split has no data parallel beside
 * it, TP does not cross nodes).
 */
int fg__assess_layout_at_total(const struct fg_model *m, const struct fg_job *j, uint32_t gpus,
                               const struct fg_plan_opts *po, struct fg_assessment *a,
                               struct fg_err *err);

/* The layout the job's files declare (jobfile_apply.c declared_layout): more GPUs around it,
 * never another sharding or split, which would need other files. */
void fg__assess_keep_files_layout(const struct fg_job *j, struct fg_plan_opts *po);

/*
 * The job's own layout: declared dimensions, the rest from the GPU count; checked against
 * the framework, the count and the model.  Fills out->job's tp, pp, ep, dp, zero.
 */
int fg__assess_job_layout(const struct fg_model *m, const struct fg_jobspec *spec, uint32_t total,
                          uint32_t per_node, uint32_t nodes, struct fg_assessment *out,
                          struct fg_err *err);

/* Per-GPU estimate of the job's layout: the whole model on each rank (TP = PP = 1), else
 * the planner's best cut of exactly that shape and the estimate of its largest stage. */
int fg__assess_layout_estimate(const struct fg_model *m, const struct fg_rules *r,
                               struct fg_assessment *out, struct fg_err *err);

/* ---- assess_serve.c ---- */

/* The engine's share of the card: out->usable (the budget the weights and the KV pool
 * come out of), gpu_util, serve_card and serve_tokens. */
void fg__assess_engine_budget(const struct fg_model *m, const struct fg_jobspec *spec,
                              const struct fg_gpu *gpu, const struct fg_fit_opts *fo,
                              struct fg_assessment *a);

/* What the engine holds besides the weights (serve_engine.h for vLLM), what that leaves
 * the KV cache, how many sequences of the asked length it holds, and whether vLLM would
 * refuse to start (kv_cache_utils.py _check_enough_kv_cache_memory). */
void fg__assess_engine_fit(const struct fg_model *m, struct fg_assessment *a);

/*
 * The longest max_model_len whose one sequence the KV budget holds, up to the model's
 * context (vLLM refuses a longer one: ModelConfig derives max_model_len from
 * max_position_embeddings): a bisection on the estimate's KV line, which grows with the
 * length (windowed layers stop growing at their window).  A pipeline stage's cache is
 * scaled from the asked length's.
 */
int fg__assess_serve_max_len(const struct fg_model *m, struct fg_assessment *a, struct fg_err *err);

/*
 * The fewest GPUs the engine holds the job on, as it runs them: tensor parallel inside a
 * node (a size that divides the heads), pipeline stages across nodes, the job's EP kept;
 * each count judged by the same budget and fit, up to the GPUs asked for or MaxGPUs,
 * whichever is more (FG_ASSESS_MAX_GPUS at most).  Within a node every power of two; then
 * whole nodes, where each more node is one more pipeline stage (no stage holds more), so
 * the first that fits is found by bisection.  Fills a->plan with that one layout; no plan
 * when none holds it.
 */
int fg__assess_serve_fewest(const struct fg_model *m, const struct fg_jobspec *spec,
                            const struct fg_gpu *gpu, uint32_t gpus, const struct fg_rules *r,
                            const struct fg_fit_opts *fo, struct fg_assessment *a,
                            struct fg_err *err);

#endif
