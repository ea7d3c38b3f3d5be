/*
 * train_phases.c - the phases stage (stages.def): the caching allocator's share of what grows
 * with the batch, then the estimate's totals: a full fine-tune's two phases (the forward and
 * backward's peak, the optimizer step's), one phase for adapters.
 */
#include "memory/pipeline.h"
#include "memory/titan.h"

#include "util/sat.h"

/* The allocator's share, and the totals of the two phases. */
int fg__train_phases(struct train *x, struct fg_err *err)
{
    const struct fg_job *job = x->job;
    struct fg_estimate *e = x->e;
    struct fg_breakdown *b = &e->b;
    uint64_t act = x->act, logits = x->logits;
    /* Caching-allocator fragmentation: reserved runs ~5% over allocated for
     * the batch-dependent tensors (xMem arXiv 2510.21048; LLMem arXiv 2404.10933, 2 MiB blocks;
     * ROCm Megatron PR #162 models 7%). */
    uint64_t frag = (act + logits) / 20;
    add_line(e, "overhead", frag, true, "PyTorch caching allocator",
             "allocator fragmentation: 5%% of activations and logits");

    /* titan.h: async TP's symmetric-memory workspace, kept beside the activations */
    uint64_t symm = fg__titan_async_tp_workspace(job, x->sq, x->m->hidden, x->tp);
    add_line(e, "overhead", symm, true, "torch _symmetric_memory get_symm_mem_workspace",
             "async TP workspace: 2 reduce-scatter chunks of %llu tokens / %u TP x %llu",
             (unsigned long long)x->sq, x->tp, (unsigned long long)x->m->hidden);
    frag = fg__add_sat(frag, symm);

    b->activations = fg__mul_sat(act, job->batch);
    b->logits = fg__mul_sat(logits, job->batch);
    b->overhead = fg__add_sat(b->overhead, fg__mul_sat(frag, job->batch));
    if (x->full) {
        /* Two phases (see memory.h): activations peak before any gradient
         * exists; the step holds gradients, states and foreach AdamW's
         * temporary (torch/optim/adamw.py _multi_tensor_adamw: exp_avg_sq.sqrt()
         * materialised once per parameter, in the state dtype); the fused
         * kernel (adamw-fused) updates each tensor in place and keeps none. */
        uint64_t temp = job->optimizer == FG_OPT_ADAMW && job->offload == FG_OFFLOAD_NONE
                            ? sharded_bytes(x->params, x->experts_here, x->state_bytes / 2,
                                            x->shard_o, job->ep)
                            : 0;
        e->static_bytes = fg__add_sat(fg__add_sat(b->weights, b->optimizer), x->overhead);
        /* Gradients in the first phase too (job.h grads_persist, grad_accum); else what a
         * smaller micro-batch accumulating would add (memory.h accum_bytes). */
        if (job->grads_persist || job->grad_accum > 1)
            e->static_bytes = fg__add_sat(e->static_bytes, b->gradients);
        else
            e->accum_bytes = b->gradients;
        e->step_bytes = fg__add_sat(fg__add_sat(fg__add_sat(b->weights, b->gradients), b->optimizer), temp);
        e->step_bytes = fg__add_sat(e->step_bytes, x->copy_w);
        e->step_bytes = fg__add_sat(e->step_bytes, fg__add_sat(x->both_extra, x->step_extra));
        if (job->optimizer_in_bwd) {
            /* the steps run inside backward, beside the activations: no phase of its own */
            e->static_bytes = fg__add_sat(fg__add_sat(e->static_bytes, b->gradients), temp);
            e->step_bytes = 0;
        }
        add_line(e, "overhead", temp, false, "torch foreach AdamW step",
                 "optimizer step temporaries (sqrt of v), step phase only");
        b->overhead = fg__add_sat(fg__add_sat(b->overhead, temp), x->step_extra);
    } else {
        b->overhead = fg__add_sat(b->overhead, x->step_extra);
        e->static_bytes = fg__add_sat(fg__add_sat(fg__add_sat(b->weights, b->gradients),
                                          fg__add_sat(b->optimizer, b->adapters)), x->overhead);
        e->static_bytes = fg__add_sat(e->static_bytes, x->step_extra); /* one phase */
    }
    e->per_sample_bytes = fg__add_sat(fg__add_sat(act, logits), frag);
    e->total_bytes = fg_estimate_at(e, job->batch);
    if (e->total_bytes == UINT64_MAX)
        return fg_err_set(err, FG_E_OVERFLOW, "memory estimate overflows 64 bits");
    return 0;
}

