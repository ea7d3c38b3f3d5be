/*
 * plan_floor.c - the planner's floors (plan.h): lower bounds on the per-GPU peak of every
 * layout of a GPU count, and of every cut of a pipeline shape, from one estimate each, so
 * the search skips what cannot fit without costing a block.
 */
#include "memory/memory_int.h"
#include "plan/plan.h"

/*
 * A floor under the peak of every layout of g GPUs.  TP, PP and EP partition the
 * parameters (norms replicated: more, not less) and ZeRO shards them over DP at most, so
 * the GPUs of any layout hold between them at least all of the job's parameter state:
 * the weights, and for a full fine-tune their gradients, optimizer states and step
 * temporaries.  Some GPU holds at least 1/g of it, which is what the estimator gives for
 * the same job as ZeRO-3 over dp = g with nothing else split: its step phase (full), its
 * frozen base (LoRA / QLoRA).  Serving shards nothing over DP: the weights over g.  The
 * integer divisions of a real layout lose less than a parameter per node and division:
 * the slack covers them.  0 (no floor) when that estimate fails; the layouts then say why.
 */
uint64_t fg__plan_count_floor_parts(const struct fg_model *m, struct fg__parts *parts,
                                   const struct fg_job *job, uint32_t g)
{
    struct fg_job j = *job;
    j.tp = j.pp = j.ep = 1;
    j.layer_first = j.layer_last = 0;
    j.inflight = 1;
    j.unsharded_copy = false; /* paid by the layouts that shard over DP only */
    if (job->mode != FG_MODE_SERVE) {
        j.zero = 3;
        j.dp = g;
    }
    struct fg_estimate e;
    struct fg_err err = {0};
    if (g == 0 || (parts ? fg__memory_estimate_parts(m, &j, &e, parts, &err)
                         : fg_memory_estimate_totals(m, &j, &e, &err)))
        return 0;
    uint64_t share = job->mode == FG_MODE_FULL    ? e.step_bytes
                   : job->mode == FG_MODE_SERVE   ? e.b.weights / g
                                                  : e.b.weights;
    uint64_t slack = 64 * ((uint64_t)m->n_nodes + 4) + (share >> 40);
    return share > slack ? share - slack : 0;
}

uint64_t fg__plan_count_floor(const struct fg_model *m, const struct fg_job *job, uint32_t g)
{
    return fg__plan_count_floor_parts(m, NULL, job, g);
}

/*
 * A floor under the peak of every cut of a pipeline layout (job's tp, pp, ep, dp, zero),
 * before any block is costed: one estimate of the whole model under the same TP, EP, DP and
 * ZeRO with no pipeline, over pp.  Each of its terms is a sum over the nodes (weights,
 * gradients, optimizer states, step temporaries, activations and logits per sample) or a
 * largest-of (all-gather buffers, a QLoRA dequantized copy) that every stage pays for its
 * own nodes, so the stages of any cut hold at least it between them, and so do the block
 * and side costs cut_fits adds: a stage keeps one micro-batch or more (1F1B: pp - i),
 * serves each sequence once, and a pipeline adds a tied copy, never removes one; the
 * largest stage holds 1/pp of it.  The roundings of the per-part sums lose a few bytes per
 * part and micro-batch: the slack covers them.  With gradient checkpointing the whole
 * walk can count a block that stages split (kept block inputs): the per-sample part is
 * left out there.  0 (no floor) when the estimate fails; the blocks' estimates say why.
 */
uint64_t fg__plan_shape_floor_parts(const struct fg_model *m, struct fg__parts *parts,
                                   const struct fg_job *job)
{
    struct fg_job j = *job;
    j.layer_first = j.layer_last = 0;
    j.stage_embed = j.stage_head = false;
    j.inflight = 1;
    struct fg_estimate e;
    struct fg_err err = {0};
    if (parts ? fg__memory_estimate_parts(m, &j, &e, parts, &err)
              : fg_memory_estimate_totals(m, &j, &e, &err))
        return 0;
    uint64_t all = !job->grad_ckpt                   ? e.total_bytes
                 : e.step_bytes > e.static_bytes ? e.step_bytes : e.static_bytes;
    uint64_t slack = 16 * ((uint64_t)m->n_nodes + 4) * (job->batch + 1) + (all >> 40);
    return all > slack ? (all - slack) / (job->pp ? job->pp : 1) : 0;
}

uint64_t fg__plan_shape_floor(const struct fg_model *m, const struct fg_job *job)
{
    return fg__plan_shape_floor_parts(m, NULL, job);
}
