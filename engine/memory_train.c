/*
 * memory_train.c - the training peaks beside the two phases' own terms (memory_train.h): the
 * data-parallel machinery's buffers and the fused losses, as numbers; memory.c writes their
 * lines.  Short source names are memory.c's.
 */
#include "memory_train.h"

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
        if (b->gb < 4 && job->offload == FG_OFFLOAD_NONE)
            x->step_extra = fg__mul_sat(b->ds_part, 4);
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
