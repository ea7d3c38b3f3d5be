/*
 * train_layout.c - the layout stage (stages.def), the first: what of the model this rank
 * holds under the job's layout (the pipeline stage's sums, memory_stage.h; the tied copy), the
 * bytes per element of weights, gradients and optimizer states, and the ZeRO shards.
 */
#include "memory/pipeline.h"

#include "memory/memory_node.h"

/* The bytes per element of weights, gradients and optimizer states, and the ZeRO shards. */
static void train_bytes(struct train *x)
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

int fg__train_layout(struct train *x, struct fg_err *err)
{
    const struct fg_model *m = x->m;
    const struct fg_job *job = x->job;
    struct fg_estimate *e = x->e;
    bool lora = job->mode == FG_MODE_LORA || job->mode == FG_MODE_QLORA;
    x->full = job->mode == FG_MODE_FULL;
    /* "mixed" means fp32 parameters under autocast (PyTorch AMP; Lightning's
     * bf16-mixed), for a full fine-tune and a LoRA base alike, so the residual
     * stream is fp32; "bf16" loads the parameters in bf16 (the LoRA default). */
    x->pbytes = job->precision == FG_PREC_BF16 ? 2 : 4;
    fg__act_of(m, job, &x->kept);
    x->tp = job->tp ? job->tp : 1;
    x->dp = job->dp ? job->dp : 1;

    if (x->set->table_tried && x->set->table)
        fg__table_sums(x->set->table, job, &x->t);
    else
        fg__sum_stage(m, job, &x->kept, x->set, &x->t);
    uint64_t tied = fg__tied_copy_here(m, job, x->t.has_head);
    x->params = x->t.sum[S_PARAMS] + tied;
    x->linear = x->t.sum[S_LINEAR] + tied;
    x->quantizable = x->t.sum[S_QUANTIZABLE];
    x->adapters = x->t.sum[S_ADAPTERS];
    x->largest_linear = x->t.largest;
    x->experts_here = x->t.sum[S_EXPERTS];
    x->layers_here = x->t.layers;
    if (lora && x->adapters == 0 && job->layer_last == 0)
        return fg_err_set(err, FG_E_INVAL,
                          "the LoRA targets match no linear layer of %s; use all-linear, attn, "
                          "qv, or roles like q,k,v,o,gate,up,down", m->id);

    e->trainable_params = x->full ? x->params : x->adapters;
    e->adapter_params = x->adapters;
    train_bytes(x);
    return 0;
}
