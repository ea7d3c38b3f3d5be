/*
 * memory_rl.c - what a preference or RL trainer adds to the estimate of its adaptation
 * (memory_int.h fg__memory_trainer; the rows are trainer.c's, each with its TRL source).
 *
 * The adaptation's estimate (full, LoRA, QLoRA at the job's precision and layout) is the
 * policy's.  On top of it, per sample: the sequences the trainer's forward holds (chosen
 * and rejected together for DPO, ORPO and reward models), and the log-probabilities TRL
 * computes in place of a cross-entropy; statically: the models it keeps beside the policy
 * (a frozen reference copy, PPO's reward and value models); and for a trainer that
 * generates on the training GPU, the generation phase's KV cache, which is alive before the
 * step's activations, not with them.  A vLLM engine's share of the card is the card's, not
 * the job's: policies/assess.c takes it off the usable bytes.
 */
#include "memory/memory_int.h"

#include "memory/loss.h"
#include "stack/trainer.h"

#include <string.h>

#include "util/fmt.h"
#include "util/sat.h"

/*
 * Log-probabilities per trained token, bytes per vocabulary entry.  TRL takes no
 * cross-entropy: selective_log_softmax (trl/trainer/utils.py) over the logits in their
 * dtype c (bf16 under autocast or a bf16 model, fp32 otherwise); for bf16 it runs
 * F.log_softmax row by row, whose output autograd saves (c more per entry), for fp32 a
 * logsumexp that saves nothing vocabulary-wide.  A reference forward run while the
 * policy's graph is alive (DPO's _compute_loss: torch.no_grad after the policy) keeps its
 * logits too, until the loss is taken.
 */
static uint64_t logp_bytes_per_entry(const struct fg_job *job, bool ref_concurrent)
{
    unsigned c = job->precision == FG_PREC_FP32 && !job->autocast ? 4 : 2;
    return (uint64_t)c * (1 + (c == 2) + ref_concurrent);
}

/* The logits line of the adaptation's estimate becomes the trainer's log-probabilities,
 * unless the job's loss has a fused form that takes them chunk by chunk from the hidden
 * states (loss.h fg_loss_fused_logprobs: Liger's, under use_liger_kernel): then the fused
 * loss's line (train_logits.c) stands. */
static void retake_logits(const struct fg_model *m, const struct fg_job *job,
                          const struct fg_trainer_row *row, bool ref_concurrent, bool lines,
                          struct fg_estimate *e)
{
    uint64_t batch = job->batch ? job->batch : 1, old = e->b.logits / batch;
    if (old == 0 || (fg_loss_fused_logprobs(job->loss) && !row->score_head))
        return; /* no causal-LM head on this stage; a fused loss keeps no log-probs */
    uint64_t tp = job->tp ? job->tp : 1, tokens = row->generates ? job->max_completion
                                                                  : e->seq_len;
    if (job->cp > 1)
        tokens = (tokens + job->cp - 1) / job->cp;
    uint64_t per = row->score_head ? 0 : logp_bytes_per_entry(job, ref_concurrent);
    uint64_t now = fg__mul_sat(fg__mul_sat(per, m->vocab / tp), tokens);
    for (size_t i = 0; lines && i < e->n_lines; i++) {
        struct fg_line *l = &e->lines[i];
        if (strcmp(l->key, "logits") || !l->per_sample)
            continue;
        l->bytes = now;
        fg__copy(l->source, sizeof l->source,
                 row->score_head ? row->source : "trl utils.py selective_log_softmax");
        if (row->score_head)
            fg__fmt(l->what, sizeof l->what, "a score head: no vocabulary logits");
        else
            fg__fmt(l->what, sizeof l->what, "log-probs: %llu tokens x %llu vocab x %llu B%s",
                    (unsigned long long)tokens, (unsigned long long)(m->vocab / tp),
                    (unsigned long long)per, ref_concurrent ? " (policy + reference)" : "");
    }
    e->per_sample_bytes = fg__add_sat(e->per_sample_bytes - old, now);
    e->b.logits = fg__mul_sat(now, batch);
}

/* One more attributed line for memory.c to append (bytes 0: none). */
static void add_to(struct fg__rl_lines *add, const char *key, uint64_t bytes, bool per_sample,
                   const char *source, const char *what)
{
    if (!bytes || add->n >= FG__RL_MAX_LINES)
        return;
    struct fg_line *l = &add->lines[add->n++];
    fg__copy(l->key, sizeof l->key, key);
    fg__copy(l->source, sizeof l->source, source);
    fg__copy(l->what, sizeof l->what, what);
    l->bytes = bytes;
    l->per_sample = per_sample;
}

/* A static part kept through both phases: the static bytes, the step's, one line. */
static void keep_static(struct fg_estimate *e, struct fg__rl_lines *add, const char *key,
                        uint64_t bytes, const char *src, const char *what)
{
    if (!bytes)
        return;
    e->static_bytes = fg__add_sat(e->static_bytes, bytes);
    if (e->step_bytes)
        e->step_bytes = fg__add_sat(e->step_bytes, bytes);
    add_to(add, key, bytes, false, src, what);
}

/* PPO's value model: a trained model of the policy's architecture (TRL's examples) with a
 * score head, in a full fine-tune of its own (ev: its estimate, fg__trainer_value_job); its
 * forward holds no vocabulary logits. */
static void value_model(const struct fg_job *job, const struct fg_estimate *vest,
                        struct fg_estimate *e, struct fg__rl_lines *add)
{
    const struct fg_estimate ev = *vest;
    uint64_t batch = job->batch ? job->batch : 1;
    uint64_t per = ev.per_sample_bytes - ev.b.logits / (ev.batch ? ev.batch : 1);
    uint64_t base_step = e->step_bytes ? e->step_bytes : e->static_bytes;
    e->step_bytes = fg__add_sat(base_step, ev.step_bytes ? ev.step_bytes : ev.static_bytes);
    e->static_bytes = fg__add_sat(e->static_bytes, ev.static_bytes);
    e->per_sample_bytes = fg__add_sat(e->per_sample_bytes, per);
    e->b.activations = fg__add_sat(e->b.activations, fg__mul_sat(per, batch));
    e->b.optimizer = fg__add_sat(e->b.optimizer, ev.b.optimizer);
    e->b.gradients = fg__add_sat(e->b.gradients, ev.b.gradients);
    e->b.weights = fg__add_sat(e->b.weights, ev.b.weights);
    add_to(add, "optimizer", ev.static_bytes, false, "trl ppo_trainer.py value_model",
                      "value model: a full fine-tune of the policy's architecture");
    add_to(add, "activations", per, true, "trl ppo_trainer.py PolicyAndValueWrapper",
                      "value model's forward over query + response (score head)");
}

/* The generation phase on the training GPU (no vLLM): transformers' generate() with a KV
 * cache of the step's completions at full length (es: fg__trainer_generation_job's
 * estimate); the activations are not alive yet. */
static void generation(const struct fg_job *job, const struct fg_estimate *es,
                       struct fg_estimate *e, struct fg__rl_lines *add)
{
    uint64_t kv = fg__add_sat(es->b.kv_cache, es->b.ssm_state);
    uint64_t peak = fg__add_sat(e->static_bytes, kv);
    if (peak > e->step_bytes)
        e->step_bytes = peak;
    e->b.kv_cache = kv;
    char what[96];
    fg__fmt(what, sizeof what, "generation phase: KV cache of %llu completions x %llu tokens",
            (unsigned long long)(job->batch ? job->batch : 1), (unsigned long long)e->seq_len);
    add_to(add, "kv_cache", kv, false, "transformers generate (no vLLM)", what);
}

void fg__trainer_value_job(const struct fg_job *job, struct fg_job *out)
{
    *out = *job;
    out->trainer = FG_TRAINER_SFT;
    out->mode = FG_MODE_FULL;
}

void fg__trainer_generation_job(const struct fg_job *job, uint64_t seq, struct fg_job *out)
{
    fg_job_defaults(out, FG_MODE_SERVE);
    out->tp = job->tp, out->pp = job->pp, out->ep = job->ep;
    out->layer_first = job->layer_first, out->layer_last = job->layer_last;
    out->stage_embed = job->stage_embed, out->stage_head = job->stage_head;
    out->seq_len = seq;
    out->batch = job->batch ? job->batch : 1;
}

void fg__memory_trainer(const struct fg_model *m, const struct fg_job *job,
                        const struct fg__rl_aux *aux, bool lines, struct fg_estimate *e,
                        struct fg__rl_lines *add)
{
    const struct fg_trainer_row *row = fg_trainer_row(job->trainer);
    enum fg_ref_model ref = fg_trainer_ref(job);
    uint64_t batch = job->batch ? job->batch : 1;
    add->n = 0;
    retake_logits(m, job, row, ref != FG_REF_NONE && !row->generates, lines, e);
    if (row->seqs > 1) {
        uint64_t extra = fg__mul_sat(e->per_sample_bytes, row->seqs - 1);
        e->per_sample_bytes = fg__add_sat(e->per_sample_bytes, extra);
        e->b.activations = fg__add_sat(e->b.activations, fg__mul_sat(extra, batch));
        add_to(add, "activations", extra, true, row->source,
               "the rejected sequence of each pair (chosen + rejected, one batch)");
    }
    /* a frozen copy in the policy's parameter dtype, sharded as the policy's weights are
     * (create_model_from_path with the policy's init kwargs; prepare_deepspeed / fsdp) */
    uint64_t weights = e->b.weights;
    if (ref == FG_REF_COPY) {
        keep_static(e, add, "weights", weights, row->source,
                    "reference model: a frozen copy of the weights");
        e->b.weights = fg__add_sat(e->b.weights, weights);
    }
    if (row->reward_model) {
        keep_static(e, add, "weights", weights, row->source,
                    "reward model: frozen, the policy's architecture and dtype");
        e->b.weights = fg__add_sat(e->b.weights, weights);
    }
    if (row->value_model && aux->value)
        value_model(job, aux->value, e, add);
    if (row->generates && job->vllm_mode == FG_VLLM_NONE && aux->generation)
        generation(job, aux->generation, e, add);
}
