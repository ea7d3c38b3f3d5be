/*
 * train_weights.c - the weights stage (stages.def): the parameters in their dtype, sharded by
 * ZeRO-3 / FSDP, or QLoRA's quantized base; the unsharded copy some frameworks keep.
 */
#include "memory/pipeline.h"

#include "util/sat.h"

/* The weights line: the quantized base of QLoRA, else the parameters in their dtype. */
int fg__train_weights(struct train *x, struct fg_err *err)
{
    (void)err;
    const struct fg_job *job = x->job;
    struct fg_estimate *e = x->e;
    struct fg_breakdown *b = &e->b;
    uint64_t params = x->params, quantizable = x->quantizable, experts_here = x->experts_here;
    if (job->mode == FG_MODE_QLORA) {
        /* [BNB]: linear weights of the blocks quantized; embeddings, norms and
         * the head stay bf16 (transformers' bitsandbytes integration skips lm_head). */
        double per = fg__quant_bytes(job->quant);
        uint64_t exq = experts_here < quantizable ? experts_here : quantizable;
        /* peft prepare_model_for_kbit_training casts what is not Params4bit to fp32 */
        uint64_t rest = (params - quantizable) * (job->kbit_prepared ? 4 : x->pbytes);
        b->weights = sharded_bytes(quantizable, exq, per, x->shard_w, job->ep) + rest / x->shard_w;
        if (x->want_copy)
            x->copy_w = sharded_bytes(quantizable, exq, per, 1, job->ep) + rest;
        add_line(e, "weights", b->weights, false, "bitsandbytes; QLoRA paper",
                 "%s base: %.4f B x %llu linear params + the rest in %s",
                 job->quant == FG_QUANT_INT8 ? "int8" : job->quant == FG_QUANT_NF4_DQ ? "nf4-dq"
                                                                                      : "nf4",
                 per, (unsigned long long)quantizable,
                 job->kbit_prepared ? "fp32 (peft prepare_model_for_kbit_training)"
                                    : "the parameter dtype");
    } else {
        b->weights = sharded_bytes(params, experts_here, x->wbytes, x->shard_w, job->ep);
        if (x->want_copy)
            x->copy_w = sharded_bytes(params, experts_here, x->wbytes, 1, job->ep);
        add_line(e, "weights", b->weights, false, x->full ? "PyTorch AMP / Megatron" : "frozen base",
                 "%s weights: %u B x %llu params%s", x->wbytes == 4 ? "fp32" : "bf16", x->wbytes,
                 (unsigned long long)params, x->shard_w > 1 ? ", sharded over DP" : "");
    }
    return 0;
}
