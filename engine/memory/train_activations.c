/*
 * train_activations.c - the activations stage (stages.def): what the forward keeps for
 * backward per sample: the blocks' tensors (or the recompute's), the attention scores, and
 * what the framework keeps beside them.
 */
#include "memory/pipeline.h"

#include "util/sat.h"

/* bytes (one micro-batch's, over every block of this rank) times the micro-batches in
 * flight: job.inflight chunk forwards, each keeping its chunk's share when the rank holds
 * job.pp_chunks model chunks (plan.h fg_plan_pp_rank). */
static uint64_t in_flight(const struct fg_job *job, uint64_t bytes)
{
    uint64_t chunks = job->pp_chunks > 1 ? job->pp_chunks : 1;
    return fg__mul_sat(bytes, job->inflight ? job->inflight : 1) / chunks;
}

/* Under recomputation a pipeline stage keeps the checkpointed tensors (kept bytes per
 * token) of every micro-batch in flight, and recomputes one block of one micro-batch at a
 * time in backward (its working set, work bytes per token, once): Megatron-LM
 * theoretical_memory_usage.py counts the in-flight micro-batches on the checkpointed
 * inputs only; torch.utils.checkpoint frees each block's recompute before the next. */
static uint64_t recompute_in_flight(const struct fg_job *job, uint64_t kept, uint64_t work,
                                    uint64_t sq)
{
    return fg__add_sat(in_flight(job, fg__mul_sat(kept, sq)), fg__mul_sat(work, sq));
}

/* The per-sample activations: the blocks' kept tensors (or the recompute's), the attention
 * scores, and what the framework keeps beside them (dropout masks, 4-bit inputs). */
int fg__train_activations(struct train *x, struct fg_err *err)
{
    (void)err;
    const struct fg_model *m = x->m;
    const struct fg_job *job = x->job;
    struct fg_estimate *e = x->e;
    uint64_t seq = x->seq, layers_here = x->layers_here;
    uint64_t act_block_max = x->t.act_block_max, act_sum = x->t.sum[S_ACT];
    uint64_t act_other = x->t.act_other;
    /* Context parallel splits each sequence over cp ranks: a rank keeps its share of the
     * tokens' activations and logits, and scores of its queries against every key
     * (Megatron-Core context parallel, transformer/attention.py with ring attention). */
    uint64_t sq = job->cp > 1 ? (seq + job->cp - 1) / job->cp : seq;
    uint64_t act_tok, blocks; /* per token kept; the blocks' bytes per sample */
    uint64_t in_tok = (uint64_t)x->kept.r * m->hidden / (x->kept.sp ? x->tp : 1); /* SP: over TP */
    if (job->act_offload) {
        /* job.h act_offload: the blocks' tensors on the CPU; the block in backward, the
         * forward stash (one block more at most) and the sides stay. */
        act_tok = 2 * act_block_max + act_other;
        blocks = in_flight(job, fg__mul_sat(act_tok, sq));
        add_line(e, "activations", blocks, true,
                 "torchtune _activation_offloading.py OffloadActivations",
                 "offloaded to the CPU: two blocks' working set stay, %llu tokens",
                 (unsigned long long)sq);
    } else if (job->grad_ckpt && job->ac_selective) {
        /* job.h ac_selective: each block's input, the outputs the op-SAC policy saves
         * (memory_node.c S_SAC), and one block's recompute working set in its backward */
        act_tok = layers_here * in_tok + x->t.sum[S_SAC] + act_other;
        blocks = recompute_in_flight(job, act_tok, act_block_max, sq);
        add_line(e, "activations", blocks, true,
                 "torchtitan activation_checkpoint.py op SAC",
                 "selective: %llu block inputs%s + half the linear and SDPA outputs, "
                 "%llu tokens", (unsigned long long)layers_here,
                 x->kept.sp ? " (sequence over TP)" : "", (unsigned long long)sq);
    } else if (job->grad_ckpt) {
        /* Recompute per block [KOR full recompute]: keep each block's input
         * (r h) and one block's working set during its backward. */
        act_tok = layers_here * in_tok + act_other;
        blocks = recompute_in_flight(job, act_tok, act_block_max, sq);
        add_line(e, "activations", blocks, true, "Korthikanti 2022, full recompute",
                 "checkpointed: %llu block inputs%s + one block's working set, %llu tokens",
                 (unsigned long long)layers_here, x->kept.sp ? " (sequence over TP)" : "",
                 (unsigned long long)sq);
    } else {
        act_tok = act_sum + act_other;
        blocks = in_flight(job, fg__mul_sat(act_tok, sq));
        add_line(e, "activations", blocks, true,
                 x->kept.sp ? "Megatron theoretical_memory_usage.py + SP (TE)"
                 : x->kept.te ? "Megatron theoretical_memory_usage.py (TE)"
                 : job->attention == FG_ATTN_EAGER ? "saved tensors per node"
                                                   : "saved tensors per node (SDPA, no score matrix)",
                 "%llu blocks x %llu tokens, %llu B/token/block max",
                 (unsigned long long)layers_here, (unsigned long long)sq,
                 (unsigned long long)act_block_max);
    }
    /* Attention that keeps its scores (model.h score_bytes) keeps heads x s of them per
     * token in each block, one block's under recompute. */
    bool one_block = job->grad_ckpt || job->act_offload; /* what the GPU keeps of the blocks */
    uint64_t score = x->t.sum[S_SCORE] / (one_block && layers_here ? layers_here : 1);
    score = in_flight(job, fg__mul_sat(fg__mul_sat(score, sq), seq));
    add_line(e, "activations", score, true,
             job->attention != FG_ATTN_EAGER ? "torch SDPA math path (fewer K/V heads)"
             : x->kept.attn_drop ? "transformers eager attention + dropout mask"
                                 : "transformers eager attention",
             "attention scores kept for backward: heads x %llu x %llu per block",
             (unsigned long long)sq, (unsigned long long)seq);
    /* What the framework keeps beside the modelling code's tensors (struct act), per token
     * in each block, one block's under recompute, as the scores. */
    uint64_t per_block = one_block && layers_here ? layers_here : 1, framework = 0;
    static const struct {
        int sum;
        const char *source, *what;
    } kept_rows[] = {
        {S_QIN, "bitsandbytes<0.43.2 MatMul4Bit.forward",
         "4-bit linears' inputs, kept as cast to the compute dtype"},
        {S_LDROP, "peft tuners/lora/layer.py Linear.forward",
         "LoRA adapters' own inputs: casts to their dtype, dropout masks and copies"},
        {S_HDROP, "torch native_dropout (config hidden dropout)",
         "hidden-state dropout masks, 1 B per element"},
    };
    for (size_t i = 0; i < sizeof kept_rows / sizeof kept_rows[0]; i++) {
        uint64_t tok = x->t.sum[kept_rows[i].sum] / per_block;
        if (kept_rows[i].sum == S_HDROP && x->kept.hidden_drop &&
            (job->layer_last == 0 || job->stage_embed))
            tok += m->hidden; /* the embeddings' dropout, on the first stage */
        uint64_t k = in_flight(job, fg__mul_sat(tok, sq));
        framework = fg__add_sat(framework, k);
        add_line(e, "activations", k, true, kept_rows[i].source, "%s, %llu tokens",
                 kept_rows[i].what, (unsigned long long)sq);
    }
    e->act_per_token_layer_max = act_block_max;
    uint64_t act = fg__add_sat(blocks, score);
    x->act = fg__add_sat(act, framework);
    x->sq = sq;
    return 0;
}
