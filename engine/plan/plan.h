/*
 * plan.h - when one card cannot hold the job: the smallest GPU count and a
 * layout that fits, with alternatives.
 *
 * Layouts follow Megatron / NeMo rules:
 *   - TP divides attention heads, KV heads and the MLP width, and stays
 *     within one node (<= gpus_per_node);
 *   - PP cuts the main stack into contiguous stages balanced by memory; the
 *     first stage holds the embedding and, under 1F1B, pp micro-batches of
 *     activations; the last holds the head and the logits;
 *   - EP (MoE) divides the expert count and the data-parallel size; when
 *     EP > 1, TP = 1 (NeMo Customizer's rule, docs/planner.md);
 *   - DP with ZeRO-1/2/3 (FSDP) shards optimizer state, gradients, weights.
 * Every layout returned fits the estimate under the headroom.
 */
#ifndef FG_PLAN_H
#define FG_PLAN_H

#include <stdint.h>

#include "plan/fit.h"
#include "memory/memory.h"
#include "model/model.h"

struct fg_framework;

#define FG_PLAN_MAX_PP 64
/* Above this many GPUs the planner searches by families of layouts (plan.c): the counts
 * where one can fit, not every count. */
#define FG_PLAN_JUMP_FROM 64u
#define FG_PLAN_MAX_OPTIONS 8

struct fg_layout {
    uint32_t gpus, tp, pp, ep, dp, zero;
    uint32_t cp;                          /* context-parallel ranks of a declared layout (0, 1:
                                             none); gpus counts them */
    uint32_t cut[FG_PLAN_MAX_PP + 1];     /* stage i holds blocks [cut[i], cut[i+1]) */
    uint64_t stage_bytes[FG_PLAN_MAX_PP]; /* estimate per GPU of each stage */
    uint64_t peak_bytes;                  /* the largest of them */
    uint64_t micro_batch, grad_accum;
    uint32_t gen_gpus;                    /* a trainer's vLLM server: GPUs of the job that
                                             generate (0 none); gpus counts the others */
};

/* Layout dimensions (fg_plan_opts.layouts): the same bits as framework.h's FG_LAY_*. */
#define FG_PLAN_TP 0x1u
#define FG_PLAN_PP 0x2u
#define FG_PLAN_EP 0x4u
#define FG_PLAN_ZERO 0x10u

struct fg_plan_opts {
    /* What the job's framework can run: with restrict_layouts, only the FG_PLAN_* bits in
     * layouts (no bit: data parallel at the job's ZeRO stage only).  Default: everything. */
    bool restrict_layouts;
    unsigned layouts;
    /* PP as a layer split in one process (transformers device_map): one micro-batch in
     * flight per stage, and no data parallel or ZeRO beside it (accelerate's
     * Accelerator.prepare refuses a device_map model in any distributed mode) */
    bool naive_pp;
    /* Dimensions the job has fixed (0 = free), and whether ZeRO stays the job's stage. */
    uint32_t fix_tp, fix_pp, fix_ep, fix_dp;
    bool fix_zero;
    bool any_count;            /* every count from min_gpus (not only powers of two, nodes) */
    uint32_t max_gpus;         /* default 64 */
    uint32_t min_gpus;         /* default 1 */
    uint32_t gpus_per_node;    /* default 8 */
    uint64_t global_batch;     /* samples per optimizer step; 0 = the job's micro-batch */
    struct fg_fit_opts fit;
    /* The framework whose table (framework.h fg_framework_runs) every layout is held to:
     * its dimensions, TP inside a node, a device_map split on one node, the ZeRO stages
     * its pipeline takes; the GPUs of a count are on nodes of gpus_per_node.  NULL: the
     * rules of any framework (TP inside a node, EP on a MoE model). */
    const struct fg_framework *fw;
};

enum fg_plan_status { FG_PLAN_FOUND, FG_PLAN_IMPOSSIBLE };

struct fg_plan {
    enum fg_plan_status status;
    uint64_t usable_bytes;
    size_t n;                                 /* options, best first */
    struct fg_layout options[FG_PLAN_MAX_OPTIONS];
    char why[256];                            /* for FG_PLAN_IMPOSSIBLE */
};

void fg_plan_opts_default(struct fg_plan_opts *o);

/*
 * Plan job on cards with usable bytes each.  FG_PLAN_IMPOSSIBLE (with why)
 * is a result, not an error; errors are the estimator's.
 */
int fg_plan_layouts(const struct fg_model *m, const struct fg_job *job, uint64_t usable,
                    const struct fg_plan_opts *o, struct fg_plan *out, struct fg_err *err);

/*
 * torchtitan's stage split (distributed/pipeline_parallel.py
 * _generate_llm_fqn_per_model_part): the embedding counts as in_w blocks and the norm +
 * head as out_w, the layers + in_w + out_w are dealt evenly over pp stages (the first ones
 * one more each for the remainder), and the first and last stages drop their weights' worth
 * of blocks.  Fills cut[0..pp] (stage i holds blocks [cut[i], cut[i+1])); false when a
 * stage would be empty (torchtitan refuses those), cut then untouched.
 */
bool fg_plan_even_cut(uint32_t layers, uint32_t pp, uint32_t in_w, uint32_t out_w,
                      uint32_t *cut);

/*
 * What one pipeline rank holds and keeps under torch.distributed.pipelining's schedule as
 * torchtitan builds it (distributed/pipeline_parallel.py _get_pipeline_metadata: two
 * model chunks per rank for a looped schedule, one for 1F1B / GPipe; the pp x chunks
 * stages split by fg_plan_even_cut; rank r holds stages r, r + pp, ... ("loop" style)).
 * The rank's blocks are counted as the contiguous run [*first, *first + its blocks) (the
 * same count as its chunks' for a model whose blocks are alike); embed / head: it holds
 * the first / the last stage; *chunks its model chunks; *inflight the chunk forwards whose
 * activations it keeps at its peak (schedules.py: Schedule1F1B warmup_chunks = min(n,
 * pp - r) then one backward per forward; ScheduleGPipe all n forwards first;
 * ScheduleInterleaved1F1B _get_warmup_ops (chunks - 1) x per_round + 2 (pp - 1 - r), capped
 * at n x chunks, then one forward before each backward; ScheduleLoopedBFS every chunk's
 * forwards first).  n: job.pp_microbatches, or when 0 enough to fill the warmup (pp x
 * chunks).  False when a stage would be empty (cut as fg_plan_even_cut refuses).
 */
bool fg_plan_pp_rank(const struct fg_job *job, uint32_t layers, uint32_t pp, uint32_t rank,
                     uint32_t *first, uint32_t *last, bool *embed, bool *head,
                     uint32_t *chunks, uint32_t *inflight);

/* "0-27,28-55" (inclusive block ranges per stage) into buf. */
void fg_layout_split_str(const struct fg_layout *l, char *buf, size_t cap);

/*
 * The plan as a job environment: FITGATE_TP, FITGATE_PP, FITGATE_EP,
 * FITGATE_DP (and FITGATE_CP for a declared context-parallel layout), FITGATE_PP_SPLIT,
 * FITGATE_MICRO_BATCH, FITGATE_GRAD_ACCUM,
 * FITGATE_ESTIMATE_BYTES and FITGATE_NEMO_OVERRIDES (Megatron / NeMo
 * keys).  Calls set(name, value, ctx) for each; stops at the first non-zero
 * return and returns it.
 */
int fg_layout_env(const struct fg_layout *l, int (*set)(const char *name, const char *value,
                                                        void *ctx), void *ctx);

/* Internal (the planner, tests): a floor under the per-GPU peak of every layout of g GPUs
 * for job (plan_floor.c says why it holds); 0 when there is none. */
uint64_t fg__plan_count_floor(const struct fg_model *m, const struct fg_job *job, uint32_t g);

/* Internal (the planner, tests): a floor under the per-GPU peak of every cut of the
 * pipeline layout job->tp, pp, ep, dp, zero into pp stages (plan_floor.c says why); 0 when
 * none. */
uint64_t fg__plan_shape_floor(const struct fg_model *m, const struct fg_job *job);

/* The two floors (engine/plan/plan_floor.c) with the planner's block parts kept across its
 * estimates (memory_int.h fg__parts; NULL: none). */
struct fg__parts;
uint64_t fg__plan_count_floor_parts(const struct fg_model *m, struct fg__parts *parts,
                                   const struct fg_job *job, uint32_t g);
uint64_t fg__plan_shape_floor_parts(const struct fg_model *m, struct fg__parts *parts,
                                   const struct fg_job *job);

#endif
