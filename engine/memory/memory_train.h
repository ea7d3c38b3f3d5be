/*
 * memory_train.h - internal to the estimator (memory.c, memory_train.c): one training
 * estimate as its phases read it (struct train), the attributed-line writer they share, and
 * the ZeRO sharding of a byte count.  Every pointer in struct train is borrowed from
 * estimate() for the call; nothing here allocates or fails.
 */
#ifndef FG_MEMORY_TRAIN_H
#define FG_MEMORY_TRAIN_H

#include "memory/memory_stage.h"

struct fg_estimate; /* memory.h: written by memory.c alone */

/*
 * Bytes of `all` parameters (of which `experts` are routed experts) at
 * `bytes` each, sharded over DP by a ZeRO stage: dense parameters over the
 * DP ranks, routed experts over the expert-data-parallel group (DP / EP):
 * EP has already split the experts, so the distributed optimizer shards
 * each expert over the ranks that hold it (Megatron expert_data_parallel).
 */
static inline uint64_t sharded_bytes(uint64_t all, uint64_t experts, double bytes, uint64_t shard,
                              uint32_t ep)
{
    uint64_t shard_e = shard > 1 && ep > 1 ? (shard / ep ? shard / ep : 1) : shard;
    double dense = (double)(all - experts) * bytes / (double)shard;
    double exp = (double)experts * bytes / (double)shard_e;
    double t = dense + exp;
    return t >= 1.8e19 ? UINT64_MAX : (uint64_t)t;
}

/*
 * One training estimate as its phases read it (estimate() fills the first group, each
 * phase the fields after): the stage's sums, the bytes per element and the ZeRO shards
 * (train_static), the static transients (train_overheads), the kept activations
 * (train_activations), the logits and the two phases' totals (train_totals).
 */
struct train {
    const struct fg_model *m;
    const struct fg_job *job;
    struct fg_estimate *e;
    bool lines;              /* e gets its lines (estimate(): false for totals only) */
    struct act kept;
    struct stage_sums t;
    uint64_t seq;
    bool full;
    unsigned pbytes;         /* parameter bytes */
    uint32_t tp, dp;         /* dp: spans the context-parallel ranks (train_static) */
    uint64_t params, linear, quantizable, adapters, largest_linear, experts_here, layers_here;
    /* train_static */
    unsigned wbytes, gbytes, obytes, state_bytes;
    bool adam, master_opt, want_copy;
    uint64_t shard_w, shard_g, shard_o, copy_w;
    /* train_overheads */
    uint64_t overhead;
    /* train_activations */
    uint64_t sq, act;
    /* train_buffers: in both phases (DDP's buckets), the step's own (DeepSpeed's fp32
     * gradient partition) */
    uint64_t both_extra, step_extra;
};

/* What the data-parallel machinery holds (fg__train_buffers): DDP's buckets, DeepSpeed's
 * reduce bucket(s), the elements of its step's fp32 partition, in the trained params' gradient
 * dtype gb. */
struct train_buffers {
    uint64_t ddp, ds_bucket, ds_part;
    unsigned gb;
};

/* The buffers of x's job into b; x->both_extra and x->step_extra set from them. */
void fg__train_buffers(struct train *x, struct train_buffers *b);

/* A fused loss's bytes per token (job.h fg_loss), and in *head_grad the bytes of the head
 * weight gradient it makes in the forward (0 where the head does not train). */
uint64_t fg__fused_loss_tok(const struct train *x, unsigned c, uint64_t *head_grad);

/* The job's sizes checked before it is estimated: FG_E_INVAL for an inconsistent job,
 * FG_E_RANGE for an absurd size (fg_memory_estimate's errors). */
int fg__train_check_job(const struct fg_job *job, struct fg_err *err);

/* The bytes per parameter of the job's weights, gradients and optimizer states, and the
 * ZeRO shards, into x (its job and dp set). */
void fg__train_bytes(struct train *x);

#endif
