/*
 * memory_train.h - internal to the estimator (memory.c, memory_train.c): one training
 * estimate as its phases read it (struct train), the attributed-line writer they share, and
 * the ZeRO sharding of a byte count.  Every pointer in struct train is borrowed from
 * estimate() for the call; nothing here allocates or fails.
 */
#ifndef FG_MEMORY_TRAIN_H
#define FG_MEMORY_TRAIN_H

#include "memory.h"
#include "memory_stage.h"

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

/* One attributed line into e (memory.h fg_line): skipped at 0 bytes or with the lines full. */
void fg__put_line(struct fg_estimate *e, const char *key, uint64_t bytes, bool per_sample,
                  const char *source, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* A totals-only estimate starts with its lines full (estimate()): not even the call. */
#define add_line(e, ...) \
    ((e)->n_lines < FG_ESTIMATE_MAX_LINES ? fg__put_line((e), __VA_ARGS__) : (void)0)

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
    uint64_t loss_tok;       /* train_fused_loss: bytes per token */
    /* train_buffers: in both phases (DDP's buckets), the step's own (DeepSpeed's fp32
     * gradient partition) */
    uint64_t both_extra, step_extra;
};

/* The data-parallel machinery's own buffers (DDP's buckets, DeepSpeed ZeRO's), into the
 * static overhead and x->both_extra / x->step_extra. */
void fg__train_buffers(struct train *x);

/* A fused loss's bytes per token (x->loss_tok) and lines; c: the compute dtype's bytes. */
void fg__train_fused_loss(struct train *x, unsigned c);

#endif
