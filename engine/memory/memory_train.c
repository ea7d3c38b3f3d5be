/*
 * memory_train.c - the training peaks beside the two phases' own terms (memory_train.h): the
 * data-parallel machinery's buffers and the fused losses, as numbers; memory.c writes their
 * lines.  Short source names are memory.c's.
 */
#include "memory/memory_train.h"

#include "util/sat.h"

/* DeepSpeed's defaults (runtime/zero/config.py, v0.19.5): reduce_bucket_size and ZeRO-3's
 * sub_group_size, in elements. */
#define DS_REDUCE_BUCKET 500000000ull
#define DS_SUB_GROUP 1000000000ull

/*
 * Over what trains (every parameter of a full fine-tune, the adapters of a LoRA):
 *   - torch DDP (job.h ddp_buckets; dp > 1 at ZeRO-0), gradient_as_bucket_view=False:
 *     buckets of every gradient in its dtype, allocated with the reducer and kept; each
 *     .grad is copied in (torch nn/parallel/distributed.py, reducer.cpp);
 *   - DeepSpeed ZeRO (job.h ds_buffers): gradients reduce through a bucket of
 *     reduce_bucket_size elements in the gradient dtype (stage_1_and_2.py
 *     backward_prologue; two under ZeRO-3, whose overlap_comm is on), and the step converts
 *     the rank's gradient partition to fp32 (stage_1_and_2.py step:
 *     flat_grad_partition.to(fp32); ZeRO-3 one sub-group of sub_group_size elements at a
 *     time, stage3.py); .to(fp32) of fp32 makes no copy, and offloaded the partition goes
 *     to the CPU.
 */
void fg__train_buffers(struct train *x, struct train_buffers *b)
{
    const struct fg_job *job = x->job;
    uint64_t trained = x->full ? x->params : x->adapters;
    uint64_t experts = x->full ? x->experts_here : 0;
    b->gb = x->full ? x->gbytes : job->lora_base_dtype ? x->pbytes : 4;
    b->ddp = b->ds_bucket = b->ds_part = 0;
    if (job->ddp_buckets && x->dp > 1 && job->zero == 0)
        b->ddp = sharded_bytes(trained, experts, b->gb, 1, job->ep);
    if (job->ds_buffers && job->zero >= 1) {
        b->ds_bucket = DS_REDUCE_BUCKET * b->gb * (job->zero >= 3 ? 2 : 1);
        b->ds_part = trained / (x->shard_o ? x->shard_o : 1);
        if (job->zero >= 3 && b->ds_part > DS_SUB_GROUP)
            b->ds_part = DS_SUB_GROUP;
        /* the partition goes to the master gradients' dtype: bf16 with
         * bf16_master_weights_and_grads (stage3.py master_weights_and_grads_dtype), no copy */
        unsigned master = job->master_bytes ? job->master_bytes : 4;
        if (b->gb < master && job->offload == FG_OFFLOAD_NONE)
            x->step_extra = fg__mul_sat(b->ds_part, master);
    }
    x->both_extra = b->ddp;
}

/*
 * The fused losses (job.h fg_loss).  Both start the backward with the head input's gradient
 * (c h per token) beside every kept activation.
 *   liger  LigerFusedLinearCrossEntropyFunction.forward (Liger-Kernel v0.8.2
 *          ops/fused_linear_cross_entropy.py fused_linear_cross_entropy_forward): grad_input
 *          (zeros_like the input), an fp32 loss per token, and one chunk's logits in the
 *          compute dtype, chunk_size = next_power_of_2(ceil(BT / ceil(V / H))) tokens (under
 *          2 BT / ceil(V / H)); grad_weight (zeros_like the head's weight) where the head
 *          trains;
 *   cce    apple/ml-cross-entropy cut_cross_entropy/cce.py LinearCrossEntropyFunction:
 *          save_for_backward(e, c, bias, lse, ...): the fp32 log-sum-exp per token, the
 *          logits recomputed blockwise in backward and never materialized.
 */
uint64_t fg__fused_loss_tok(const struct train *x, unsigned c, uint64_t *head_grad)
{
    uint64_t h = x->m->hidden, v = x->m->vocab / x->tp;
    *head_grad = 0;
    if (x->job->loss != FG_LOSS_LIGER)
        return c * h + 4;
    if (x->full)
        *head_grad = fg__mul_sat(v * h, x->wbytes);
    uint64_t inc = h ? (v + h - 1) / h : 1;
    return c * h + 4 + 2 * c * v / (inc ? inc : 1);
}

/* The job's numbers the estimator cannot read: FG_E_INVAL / FG_E_RANGE naming the field. */
int fg__train_check_job(const struct fg_job *job, struct fg_err *err)
{
    if (job->batch == 0)
        return fg_err_set(err, FG_E_INVAL, "micro-batch must be at least 1");
    if (job->batch > (1u << 20))
        return fg_err_set(err, FG_E_RANGE, "micro-batch %llu is absurd (limit 1048576)",
                          (unsigned long long)job->batch);
    if (job->seq_len > FG_MAX_SEQ)
        return fg_err_set(err, FG_E_RANGE, "sequence length %llu is beyond %u tokens",
                          (unsigned long long)job->seq_len, FG_MAX_SEQ);
    if ((job->mode == FG_MODE_LORA || job->mode == FG_MODE_QLORA) &&
        (job->lora_rank == 0 || job->lora_rank > 65536))
        return fg_err_set(err, FG_E_INVAL, "LoRA rank %u is out of range 1..65536",
                          job->lora_rank);
    if (job->zero > 3)
        return fg_err_set(err, FG_E_INVAL, "ZeRO stage %u is not 0..3", job->zero);
    if (!(job->lora_dropout >= 0 && job->lora_dropout < 1) || !(job->attn_dropout <= 1) ||
        !(job->hidden_dropout <= 1))
        return fg_err_set(err, FG_E_INVAL, "dropout probabilities must be below 1 (LoRA: 0 or "
                                           "more; attention, hidden: negative for config.json's)");
    return 0;
}

/* The bytes per element of weights, gradients and optimizer states, and the ZeRO shards. */
void fg__train_bytes(struct train *x)
{
    const struct fg_job *job = x->job;
    bool full = x->full;
    x->wbytes = x->pbytes;
    x->gbytes = full ? x->wbytes : 4;
    /* Adam m and v in the parameter dtype (torch.optim.AdamW); 8-bit Adam
     * 2 bytes [T101]; SGD with momentum one state. */
    x->adam = job->optimizer == FG_OPT_ADAMW || job->optimizer == FG_OPT_ADAMW_FUSED;
    bool adam8 = job->optimizer == FG_OPT_ADAMW_8BIT || job->optimizer == FG_OPT_PAGED_ADAMW_8BIT;
    /* bitsandbytes PagedAdamW: Optimizer2State(optim_bits=32) keeps fp32 m and v whatever the
     * parameter's dtype (optim/optimizer.py init_state: dtype=torch.float32) */
    x->obytes = x->adam ? 2 * (full ? x->wbytes : 4)
              : job->optimizer == FG_OPT_PAGED_ADAMW ? 8
              : adam8 ? 2 : (full ? x->wbytes : 4);
    /* job->master (job.h): bf16 parameters, and the fp32 master copy (4 B) held with the
     * Adam states, sharded as they are (Megatron DistributedOptimizer; DeepSpeed
     * bf16_optimizer: the ZeRO paper's 2 + 2 + 12 bytes per parameter). */
    x->master_opt = full && job->master == FG_MASTER_OPTIMIZER && job->precision == FG_PREC_BF16;
    x->state_bytes = x->obytes;
    if (x->master_opt) {
        x->gbytes = job->main_grad_bytes ? job->main_grad_bytes : 4;
        /* Megatron's precision-aware optimizer with bf16 moments (job.h bf16_states) */
        x->state_bytes = x->adam || job->optimizer == FG_OPT_PAGED_ADAMW ? (job->bf16_states ? 4 : 8)
                       : adam8 ? 2 : job->bf16_states ? 2 : 4;
        x->obytes = (job->master_bytes ? job->master_bytes : 4) + x->state_bytes;
    }
    /* Under ZeRO-3 / FSDP the data-parallel group also spans the context-parallel ranks
     * (Megatron parallel_state: the distributed optimizer shards over dp x cp). */
    uint32_t dp = x->dp;
    if (job->cp > 1)
        dp = (uint32_t)((uint64_t)dp * job->cp > UINT32_MAX ? UINT32_MAX : dp * job->cp);
    x->dp = dp;
    x->shard_w = job->zero >= 3 ? dp : 1;
    x->shard_g = job->zero >= 2 ? dp : 1;
    x->shard_o = job->zero >= 1 ? dp : 1;
    /* job->unsharded_copy (job.h): the weights line again, unsharded, and only where
     * that line is sharded (ZeRO-3 over dp > 1). */
    x->want_copy = job->unsharded_copy && x->shard_w > 1;
}
