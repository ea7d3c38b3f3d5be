/*
 * memory_train.c - the training peaks beside the two phases' own lines (memory_train.h):
 * the data-parallel machinery's buffers and the fused losses.  Short source names are
 * memory.c's.
 */
#include "memory_train.h"

#include "util/sat.h"

/* DeepSpeed's defaults (runtime/zero/config.py, v0.19.5): reduce_bucket_size and ZeRO-3's
 * sub_group_size, in elements. */
#define DS_REDUCE_BUCKET 500000000ull
#define DS_SUB_GROUP 1000000000ull

/* The data-parallel machinery's own buffers (job.h ddp_buckets, ds_buffers), over what
 * trains: every parameter of a full fine-tune, the adapters of a LoRA. */
void fg__train_buffers(struct train *x)
{
    const struct fg_job *job = x->job;
    struct fg_estimate *e = x->e;
    uint64_t trained = x->full ? x->params : x->adapters;
    uint64_t experts = x->full ? x->experts_here : 0;
    unsigned gb = x->full ? x->gbytes : job->lora_base_dtype ? x->pbytes : 4;
    uint64_t add = 0;
    if (job->ddp_buckets && x->dp > 1 && job->zero == 0) {
        /* torch DDP (gradient_as_bucket_view=False): buckets of every gradient, in its
         * dtype, allocated with the reducer and kept; each .grad is copied in. */
        uint64_t bucket = sharded_bytes(trained, experts, gb, 1, job->ep);
        x->both_extra = bucket;
        add = fg__add_sat(add, bucket);
        add_line(e, "overhead", bucket, false, "torch DDP reducer, gradient_as_bucket_view=False",
                 "DDP buckets: a second copy of %llu gradients x %u B",
                 (unsigned long long)trained, gb);
    }
    if (job->ds_buffers && job->zero >= 1) {
        /* DeepSpeed ZeRO: gradients reduce through a bucket of reduce_bucket_size elements
         * in the model dtype (stage_1_and_2.py backward_prologue; two under ZeRO-3, whose
         * overlap_comm is on), and the step converts the rank's gradient partition to fp32
         * (stage_1_and_2.py step: flat_grad_partition.to(fp32); ZeRO-3 one sub-group of
         * sub_group_size elements at a time, stage3.py). */
        uint64_t bucket = DS_REDUCE_BUCKET * gb * (job->zero >= 3 ? 2 : 1);
        uint64_t part = trained / (x->shard_o ? x->shard_o : 1);
        if (job->zero >= 3 && part > DS_SUB_GROUP)
            part = DS_SUB_GROUP;
        /* .to(fp32) of fp32 makes no copy; offloaded, the partition goes to the CPU */
        x->step_extra = gb < 4 && job->offload == FG_OFFLOAD_NONE ? fg__mul_sat(part, 4) : 0;
        add = fg__add_sat(add, bucket);
        add_line(e, "overhead", bucket, false, "DeepSpeed zero/config.py reduce_bucket_size",
                 "ZeRO reduce bucket%s: 5e8 elements x %u B", job->zero >= 3 ? "s (two)" : "", gb);
        add_line(e, "overhead", x->step_extra, false, "DeepSpeed stage_1_and_2.py / stage3.py step",
                 "fp32 copy of the rank's gradient partition: 4 B x %llu, step phase only",
                 (unsigned long long)part);
    }
    x->overhead = fg__add_sat(x->overhead, add);
    e->b.overhead = fg__add_sat(e->b.overhead, add);
}

/*
 * The fused losses (job.h fg_loss): what they keep per token, into x->loss_tok, and
 * Liger's head gradient, into the static overhead.  Both start the backward with the head
 * input's gradient (c h per token) beside every kept activation.
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
void fg__train_fused_loss(struct train *x, unsigned c)
{
    const struct fg_model *m = x->m;
    const struct fg_job *job = x->job;
    struct fg_estimate *e = x->e;
    uint64_t h = m->hidden, v = m->vocab / x->tp;
    if (job->loss == FG_LOSS_LIGER) {
        uint64_t inc = h ? (v + h - 1) / h : 1;
        x->loss_tok = c * h + 4 + 2 * c * v / (inc ? inc : 1);
        add_line(e, "logits", fg__mul_sat(x->loss_tok, x->sq), true,
                 "Liger-Kernel fused_linear_cross_entropy.py",
                 "fused linear CE: input grad, fp32 loss, one chunk's logits, %llu tokens",
                 (unsigned long long)x->sq);
        if (x->full) {
            uint64_t gw = fg__mul_sat(v * h, x->wbytes);
            x->overhead = fg__add_sat(x->overhead, gw);
            e->b.overhead = fg__add_sat(e->b.overhead, gw);
            add_line(e, "overhead", gw, false, "Liger-Kernel fused_linear_cross_entropy.py",
                     "the head's weight gradient, made in the forward: %u B x %llu",
                     x->wbytes, (unsigned long long)(v * h));
        }
    } else {
        x->loss_tok = c * h + 4;
        add_line(e, "logits", fg__mul_sat(x->loss_tok, x->sq), true,
                 "ml-cross-entropy cce.py (no logits)",
                 "cut CE: fp32 log-sum-exp and the input's grad, %llu tokens",
                 (unsigned long long)x->sq);
    }
}
