/*
 * train_buffers.c - the data-parallel machinery stage (stages.def): DDP's buckets, DeepSpeed's
 * reduce bucket(s) and its step's fp32 gradient partition.
 */
#include "memory/pipeline.h"

#include "util/sat.h"

/* What the data-parallel machinery holds (buffers_of): DDP's buckets, DeepSpeed's reduce
 * bucket(s), the elements of its step's fp32 partition, in the trained params' gradient dtype
 * gb. */
struct train_buffers {
    uint64_t ddp, ds_bucket, ds_part;
    unsigned gb;
};

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
 *     reduce_bucket_size elements (job.h ds_bucket: "auto" is hidden^2 under transformers
 *     and accelerate) in the gradient dtype (stage_1_and_2.py
 *     backward_prologue; two under ZeRO-3, whose overlap_comm is on), and the step converts
 *     the rank's gradient partition to fp32 (stage_1_and_2.py step:
 *     flat_grad_partition.to(fp32); ZeRO-3 one sub-group of sub_group_size elements at a
 *     time, stage3.py); .to(fp32) of fp32 makes no copy, and offloaded the partition goes
 *     to the CPU.
 */
static void buffers_of(struct train *x, struct train_buffers *b)
{
    const struct fg_job *job = x->job;
    uint64_t trained = x->full ? x->params : x->adapters;
    uint64_t experts = x->full ? x->experts_here : 0;
    b->gb = x->full ? x->gbytes : job->lora_base_dtype ? x->pbytes : 4;
    b->ddp = b->ds_bucket = b->ds_part = 0;
    if (job->ddp_buckets && x->dp > 1 && job->zero == 0)
        b->ddp = sharded_bytes(trained, experts, b->gb, 1, job->ep);
    if (job->ds_buffers && job->zero >= 1) {
        uint64_t h = x->m->hidden;
        uint64_t bucket = job->ds_bucket == FG_DS_BUCKET_AUTO ? h * h
                        : job->ds_bucket ? job->ds_bucket : DS_REDUCE_BUCKET;
        b->ds_bucket = fg__mul_sat(bucket, b->gb * (job->zero >= 3 ? 2 : 1));
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

/* Their lines, static and the step's own. */
int fg__train_buffers(struct train *x, struct fg_err *err)
{
    (void)err;
    struct fg_estimate *e = x->e;
    struct train_buffers b;
    buffers_of(x, &b);
    add_line(e, "overhead", b.ddp, false, "torch DDP reducer, gradient_as_bucket_view=False",
             "DDP buckets: a second copy of the gradients, %u B each", b.gb);
    add_line(e, "overhead", b.ds_bucket, false,
             x->job->ds_bucket == FG_DS_BUCKET_AUTO
                 ? "transformers integrations/deepspeed.py reduce_bucket_size auto"
                 : "DeepSpeed zero/config.py reduce_bucket_size",
             "ZeRO reduce bucket%s: %llu elements x %u B", x->job->zero >= 3 ? "s (two)" : "",
             (unsigned long long)(b.ds_bucket / b.gb / (x->job->zero >= 3 ? 2 : 1)), b.gb);
    add_line(e, "overhead", x->step_extra, false, "DeepSpeed stage_1_and_2.py / stage3.py step",
             "fp32 copy of the rank's gradient partition: 4 B x %llu, step phase only",
             (unsigned long long)b.ds_part);
    uint64_t add = fg__add_sat(b.ddp, b.ds_bucket);
    x->overhead = fg__add_sat(x->overhead, add);
    e->b.overhead = fg__add_sat(e->b.overhead, add);
    return 0;
}
