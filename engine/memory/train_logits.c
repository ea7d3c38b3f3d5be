/*
 * train_logits.c - the logits and loss stage (stages.def): what the job's loss keeps of the
 * head's logits for backward, per sample, and once per step its chunk's working set and the
 * head gradient a fused kernel makes in the forward.  The bytes of each loss kind, as its
 * stack computes it, are memory/loss.c's; this stage writes their lines.
 */
#include "memory/pipeline.h"

#include "memory/loss.h"
#include "memory/titan.h"
#include "util/sat.h"

/* The logits line: the loss kernel named, its bytes per sample. */
int fg__train_logits(struct train *x, struct fg_err *err)
{
    (void)err;
    const struct fg_model *m = x->m;
    const struct fg_job *job = x->job;
    struct fg_estimate *e = x->e;
    x->logits = 0;
    if (!x->t.has_head || m->encoder_only)
        return 0;
    struct fg_loss_bytes l;
    struct fg_loss_in in = {
        .kind = job->loss, .chunked = job->chunked_ce, .kept = job->ce_kept,
        .autocast = job->autocast || job->precision == FG_PREC_BF16_MIXED ||
                    job->precision == FG_PREC_FP16_MIXED,
        .head_trains = x->full, .c = x->kept.c, .head_bytes = x->wbytes,
        .vocab = m->vocab, .hidden = m->hidden, .tp = x->tp,
        .tokens = fg__mul_sat(x->sq, job->batch)};
    fg_loss_bytes(&in, &l);
    uint64_t logits = fg__mul_sat(l.per_tok, x->sq), once = fg__add_sat(l.work, l.head_grad);
    if (job->loss == FG_LOSS_DEFAULT) /* per vocabulary entry */
        add_line(e, "logits", logits, true, l.source, "%s: %llu tokens x %llu vocab x %llu B",
                 l.name, (unsigned long long)x->sq, (unsigned long long)m->vocab,
                 (unsigned long long)l.per_tok / (m->vocab ? m->vocab : 1));
    else
        add_line(e, "logits", logits, true, l.source, "%s: %llu tokens x %llu B", l.name,
                 (unsigned long long)x->sq, (unsigned long long)l.per_tok);
    add_line(e, "overhead", l.work, false, l.source,
             "%s: one chunk's working set and the head's copies, once", l.name);
    add_line(e, "overhead", l.head_grad, false, l.source,
             "%s: the head's weight gradient, made in the forward: %u B each", l.name,
             x->wbytes);
    x->overhead = fg__add_sat(x->overhead, once);
    e->b.overhead = fg__add_sat(e->b.overhead, once);
    /* titan.h: the micro-batches' logits an older torchtitan's PP step keeps to its end */
    uint64_t kept = fg__titan_pp_outputs(job, x->t.has_head, x->sq, m->vocab, x->tp, x->kept.c);
    add_line(e, "logits", kept, true, "torch.distributed.pipelining stage output_chunks",
             "PP step returns its outputs: the earlier micro-batches' logits, %llu tokens x "
             "%llu vocab / %u TP each, kept to the step's end", (unsigned long long)x->sq,
             (unsigned long long)m->vocab, x->tp);
    x->logits = fg__add_sat(logits, kept);
    return 0;
}
