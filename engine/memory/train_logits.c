/*
 * train_logits.c - the logits and loss stage (stages.def): the head's logits and what each
 * loss keeps of them for backward, per sample: transformers' fp32 upcast, the chunked losses,
 * and the fused ones (job.h fg_loss).
 */
#include "memory/pipeline.h"

#include "util/sat.h"

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
static uint64_t fused_loss_tok(const struct train *x, unsigned c, uint64_t *head_grad)
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

/* A fused loss's logits line and Liger's head gradient; its bytes per sample. */
static uint64_t fused_loss(struct train *x, unsigned c)
{
    struct fg_estimate *e = x->e;
    bool liger = x->job->loss == FG_LOSS_LIGER;
    uint64_t gw, logits = fg__mul_sat(fused_loss_tok(x, c, &gw), x->sq);
    add_line(e, "logits", logits, true,
             liger ? "Liger-Kernel fused_linear_cross_entropy.py"
                   : "ml-cross-entropy cce.py (no logits)",
             liger ? "fused linear CE: input grad, fp32 loss, one chunk's logits, %llu tokens"
                   : "cut CE: fp32 log-sum-exp and the input's grad, %llu tokens",
             (unsigned long long)x->sq);
    add_line(e, "overhead", gw, false, "Liger-Kernel fused_linear_cross_entropy.py",
             "the head's weight gradient, made in the forward: %u B each", x->wbytes);
    x->overhead = fg__add_sat(x->overhead, gw);
    e->b.overhead = fg__add_sat(e->b.overhead, gw);
    return logits;
}

/* The logits line: the head's logits and what the loss keeps of them, per sample. */
int fg__train_logits(struct train *x, struct fg_err *err)
{
    (void)err;
    const struct fg_model *m = x->m;
    const struct fg_job *job = x->job;
    struct fg_estimate *e = x->e;
    uint64_t sq = x->sq, logits = 0;
    if (x->t.has_head && !m->encoder_only) {
        /* [HF] ForCausalLMLoss: logits.float(); cross_entropy saves the fp32
         * log-softmax (4V) and backward holds its gradient and the upcast's
         * gradient (4V + 4V).  A chunked loss keeps every chunk's logits in the compute
         * dtype and, per chunk, what its cross-entropy saves for backward: the fp32
         * log-softmax of torchtune's upcast chunks (ce_chunked_output_loss.py
         * compute_cross_entropy), one in the logits' dtype for lit-gpt's
         * (utils.py chunked_cross_entropy; fp32 under autocast), a log-sum-exp per
         * token for unsloth's kernel (Fast_CrossEntropyLoss: save_for_backward(logits,
         * logsumexp, labels)). */
        bool autocast = job->autocast || job->precision == FG_PREC_BF16_MIXED ||
                        job->precision == FG_PREC_FP16_MIXED;
        unsigned c = x->kept.c, lsm = job->ce_kept == FG_CE_LSE ? 0
                                    : job->ce_kept == FG_CE_FP32 || autocast ? 4 : c;
        uint64_t per_tok = job->chunked_ce ? (uint64_t)(c + lsm) * m->vocab / x->tp
                                           : 12ull * m->vocab / x->tp;
        logits = fg__mul_sat(per_tok, sq);
        if (job->loss != FG_LOSS_DEFAULT) {
            logits = fused_loss(x, c);
        } else {
            add_line(e, "logits", logits, true,
                     !job->chunked_ce ? "transformers ForCausalLMLoss fp32 upcast"
                     : job->ce_kept == FG_CE_FP32 ? "torchtune CEWithChunkedOutputLoss"
                     : job->ce_kept == FG_CE_COMPUTE ? "lit-gpt chunked_cross_entropy"
                                                     : "unsloth Fast_CrossEntropyLoss",
                     "%s: %llu tokens x %llu vocab x %llu B",
                     job->chunked_ce ? "chunked CE" : "logits + fp32 loss",
                     (unsigned long long)sq, (unsigned long long)m->vocab,
                     (unsigned long long)per_tok / (m->vocab ? m->vocab : 1));
        }
    }
    x->logits = logits;
    return 0;
}
