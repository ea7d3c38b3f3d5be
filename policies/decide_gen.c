/*
 * decide_gen.c - the words of a trainer's generation engine (decide_int.h): TRL's vLLM
 * colocated on every training GPU, or a server on GPUs of the job's own, beside the
 * training the decision judged (policies/assess.c sized both).
 */
#include "decide_int.h"

#include <string.h>

#include "stack/trainer.h"

/*
 * A trainer's vLLM engine beside its training (policies/assess.c), side by side: the engine's
 * share or server GPUs and what it holds there, the training peak in what is left.  An
 * engine that cannot hold its weights and KV cache fails at start-up however the training
 * fits: the job does not fit as asked.
 */
void fg__decide_generation(const struct fg_assessment *a, const struct fg_request *q,
                           const struct fg_rules *r, struct fg_decision *d)
{
    char b1[32], b2[32], b3[32], b4[32], b5[32], card[48];
    card_label(q, card, sizeof card);
    const char *tail = a->gen_fits ? "" : ": it does not hold them";
    unsigned n = a->gen_seqs;
    if (a->job.vllm_mode == FG_VLLM_COLOCATE)
        line(d, 1, "vLLM colocated takes %.2f x %s = %s per GPU for its weights and the KV cache "
                   "of %u completion%s x %llu tokens (%s)%s; the training peak is %s of the %s "
                   "left: %s per GPU together", a->job.vllm_util, card,
             gb(a->gen_share, b1, sizeof b1), n, n == 1 ? "" : "s",
             (unsigned long long)a->job.seq_len, gb(a->gen_need, b2, sizeof b2), tail,
             gb(a->est.total_bytes, b3, sizeof b3), gb(a->usable, b4, sizeof b4),
             gb(a->gen_share + a->est.total_bytes, b5, sizeof b5));
    else
        line(d, 1, "vLLM server on %u GPU%s (TP=%u) holds %s of %s per GPU for %u completion%s "
                   "x %llu tokens%s; training on the other %u GPU%s", a->gen_gpus,
             a->gen_gpus == 1 ? "" : "s", a->gen_gpus, gb(a->gen_need, b2, sizeof b2),
             gb(a->gen_budget, b3, sizeof b3), n, n == 1 ? "" : "s",
             (unsigned long long)a->job.seq_len, tail, a->layout.gpus,
             a->layout.gpus == 1 ? "" : "s");
    if (d->fits && a->gen_fits && !d->lines[0][0])
        line(d, 0, "fits: training and the vLLM engine of this %s job, side by side",
             fg_trainer_name(a->job.trainer));
    if (a->gen_found && a->gen_fits && d->fits)
        line(d, 3, "split: --ft-vllm-mode=server --ft-gen-gpus=%u (exported as FITGATE_GEN_GPUS "
                   "and FITGATE_TRAIN_GPUS)", a->gen_gpus);
    if (a->gen_fits || !d->fits || r->action == FG_ACTION_OFF)
        return;
    d->fits = false;
    d->has_layout = false;
    d->kind = r->action == FG_ACTION_WARN ? FG_DECIDE_WARN : FG_DECIDE_REJECT;
    line(d, 0, "%s: the vLLM engine of this %s job does not fit its %s",
         d->kind == FG_DECIDE_WARN ? "warning" : "rejected", fg_trainer_name(a->job.trainer),
         a->job.vllm_mode == FG_VLLM_COLOCATE ? "share of each GPU" : "server GPUs");
    line(d, 2, a->job.vllm_mode == FG_VLLM_COLOCATE
                   ? "raise --ft-vllm-gpu-util so that the share holds the engine, or generate "
                     "on GPUs of its own (--ft-vllm-mode=server)"
                   : "give the server more GPUs (--ft-gen-gpus) or shorter completions");
}
