/*
 * titan.c - torchtitan's tensor-parallel terms (titan.h).
 *
 * torchtitan main, config/configs.py ParallelismConfig.enable_sequence_parallel = True
 * ("SequenceParallel as part of tensor parallelism"); models/llama3/sharding.py
 * _set_llama3_layer_sharding: with it the attention and FFN norms take
 * models/common/decoder_sharding.py norm_config(enable_sp=True), their input and output
 * the sequence-parallel placement (tokens split over DP, CP and TP), and attention.wo and
 * feed_forward.w2 reduce-scatter back to it (rowwise_config(output_sp=True)): between
 * blocks, and in the norms, each rank holds 1/tp of the tokens.  The column-parallel wq,
 * wk, wv and w1, w3 take the all-gathered input (colwise_config) and keep it for their
 * weight gradients.  The loss is vocab-parallel (components/loss.py
 * _LossParallelCrossEntropy on S(-1) logits): the estimator's logits are over tp already.
 */
#include "memory/titan.h"

#include "util/sat.h"

uint64_t fg__titan_unsharded(const struct fg_job *job, uint32_t dp, uint64_t params)
{
    if (!job->fsdp_mixed || job->zero < 3 || dp <= 1)
        return 0;
    if (job->pp > 1) /* bf16 parameters + fp32 accumulated gradients */
        return fg__mul_sat(params, 2 + 4);
    return job->reshard == FG_RESHARD_NEVER ? fg__mul_sat(params, 2) : 0;
}

uint64_t fg__titan_norm_sp(uint64_t w, bool rms, unsigned r, unsigned c, uint32_t tp)
{
    uint64_t t = tp ? tp : 1;
    /* RMSNorm keeps an fp32 copy and the normalised output (transformers' rule, as
     * memory_node.c node_act_per_token counts it), LayerNorm its input and output: on this
     * rank's tokens; the cast the linears read (c w) is the gathered sequence */
    uint64_t own = rms ? (uint64_t)(4 + r) * w : (uint64_t)r * w;
    return own / t + (uint64_t)c * w;
}

uint64_t fg__titan_async_tp_workspace(const struct fg_job *job, uint64_t sq, uint64_t hidden,
                                      uint32_t tp)
{
    if (!job->async_tp || tp <= 1)
        return 0;
    return fg__mul_sat(fg__mul_sat((sq + tp - 1) / tp, hidden), 2 * 2);
}

uint64_t fg__titan_pp_outputs(const struct fg_job *job, bool head, uint64_t sq, uint64_t vocab,
                              uint32_t tp, unsigned c)
{
    if (!job->pp_keeps_outputs || job->pp <= 1 || !head)
        return 0;
    uint64_t t = tp ? tp : 1, v = job->pp_chunks ? job->pp_chunks : 1;
    uint64_t n = job->pp_microbatches ? job->pp_microbatches : fg__mul_sat(job->pp, v);
    uint64_t per = fg__mul_sat(fg__mul_sat(sq, (vocab + t - 1) / t), c);
    return n > 1 ? fg__mul_sat(per, n - 1) : 0;
}
