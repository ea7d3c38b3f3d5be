/*
 * serve_engine.c - vLLM's start-up sizing (serve_engine.h), read from vLLM main as stored
 * (the 0.27 series): vllm/engine/arg_utils.py EngineArgs.get_batch_defaults,
 * vllm/config/vllm.py (max_cudagraph_capture_size, cudagraph_mode FULL_AND_PIECEWISE),
 * vllm/config/compilation.py (cudagraph_capture_sizes), v1/worker/gpu_model_runner.py
 * profile_run, _dummy_sampler_run and profile_cudagraph_memory, the v2 runner's
 * v1/worker/gpu/cudagraph_utils.py profile_cudagraph_memory and
 * _extrapolate_full_graph_memory (the default for dense models from 0.25), v1/sample/sampler.py and
 * ops/topk_topp_sampler.py, v1/worker/gpu_worker.py determine_available_memory,
 * v1/core/kv_cache_utils.py _check_enough_kv_cache_memory.
 */
#include "memory/serve_engine.h"

#include <math.h>
#include <stdio.h>

#define GIB (1024.0 * 1024.0 * 1024.0)

void fg_vllm_sched_defaults(uint64_t total, bool a100, struct fg_vllm_sched *out)
{
    bool large = total >= (70ull << 30) && !a100;
    out->max_num_seqs = large ? 1024 : 256;
    out->batched_tokens = large ? 8192 : 2048;
}

/*
 * Bytes per logit the dummy sampler run holds at its peak.  _dummy_sampler_run asks for
 * temperature 0.5, top_p 0.9 and top_k = vocab - 1, so every step runs:
 *   compute_logits          the logits in the model's dtype (2), alive in the caller;
 *   Sampler.forward         logits.to(torch.float32) (4);
 *   apply_top_k_top_p       logits.sort(): the sorted values (4) and int64 indices (8);
 *                           softmax of the sorted values, cumsum'd in place (4); the top-p
 *                           mask (1, bool); logits_sort.scatter(...) into a new tensor (4)
 * (the torch path TopKTopPSampler runs unless VLLM_USE_FLASHINFER_SAMPLER opts in).  The
 * softmax and exponential draw of random_sample come after the sort's tensors are freed
 * and hold less (2 + 4 + 4 + 4 + 4).
 */
#define SAMPLER_BYTES_PER_LOGIT (2u + 4u + 4u + 8u + 4u + 1u + 4u)

/*
 * The v2 runner's dummy sampler (v1/worker/gpu/model_runner.py _dummy_sampler_run: a dummy
 * input batch, whose requests ask for no top-k, top-p or logprobs, as its NOTE says) holds
 * the logits in the model's dtype (2) and Sampler.sample's fp32 copy of them (4); penalties
 * and temperature apply in place, and gumbel_sample (sample/gumbel.py) keeps one int64 and
 * one fp32 per 1024 logits.
 */
#define SAMPLER_V2_BYTES_PER_LOGIT (2u + 4u)

/* vLLM counts at least this per captured graph for the driver (v1 gpu_model_runner.py
 * profile_cudagraph_memory: per_graph = max(the second capture's sample, 1 MiB); the v2
 * runner's cudagraph_utils.py _MIN_PER_GRAPH_BYTES, "driver overhead per graph"). */
#define GRAPH_FLOOR_BYTES (1ull << 20)

/* CompilationConfig's default capture sizes up to max_size: 1, 2, 4, then every 8 below
 * 256, then every 16 up to max_size; how many of them are <= limit. */
static uint32_t capture_sizes_upto(uint32_t max_size, uint32_t limit)
{
    uint32_t n = 0;
    for (uint32_t s = 1; s <= max_size; s = s < 4 ? s * 2 : s < 8 ? 8 : s < 256 ? s + 8 : s + 16)
        n += s <= limit;
    return n;
}

bool fg_vllm_v2_runner(bool moe, bool hybrid, bool encoder)
{
    return !moe && !hybrid && !encoder;
}

void fg_vllm_profile(const struct fg_vllm_in *in, struct fg_vllm_profile *out)
{
    const struct fg_vllm_sched *s = &in->sched;
    double per = in->act_per_token > 0 ? in->act_per_token : 0;
    out->forward = (uint64_t)(per * s->batched_tokens);
    out->sample_rows = s->max_num_seqs < s->batched_tokens ? s->max_num_seqs : s->batched_tokens;
    /* the sampled rows' hidden states stay referenced beside the sampler's tensors */
    uint64_t per_logit = in->v2_runner ? SAMPLER_V2_BYTES_PER_LOGIT : SAMPLER_BYTES_PER_LOGIT;
    out->sampler = (uint64_t)out->sample_rows * (in->vocab * per_logit + 2 * in->hidden);
    out->peak = out->forward > out->sampler ? out->forward : out->sampler;
    /* max_cudagraph_capture_size = min(2 x max_num_seqs, 512); FULL_AND_PIECEWISE captures
     * a PIECEWISE graph per size and a FULL decode graph per size up to max_num_seqs. */
    uint32_t max = 2 * s->max_num_seqs < 512 ? 2 * s->max_num_seqs : 512;
    out->capture_max = in->eager ? 0 : max;
    out->capture_sizes = in->eager ? 0 : capture_sizes_upto(max, max);
    out->full_sizes = in->eager ? 0 : capture_sizes_upto(max, s->max_num_seqs);
    out->first_capture = out->graphs = 0;
    if (!in->eager) {
        /* The largest capture's working set, twice: profile_cudagraph_memory empties the
         * allocator's cache, then each capture's warm-up runs the forward outside the graph
         * (its blocks stay cached in the ordinary pool) and the capture allocates the same
         * tensors again in the throwaway graph pool, which cannot take the ordinary pool's
         * blocks; the free-memory delta the estimate is measured from holds both. */
        out->first_capture = 2 * (uint64_t)(per * max);
        /* every further capture: the measured PIECEWISE sizes (cudagraph_utils.py captures
         * them all; v1 samples the second and extrapolates) and each FULL graph, at least
         * GRAPH_FLOOR_BYTES each (_MIN_PER_GRAPH_BYTES) */
        uint64_t further = (uint64_t)(out->capture_sizes ? out->capture_sizes - 1 : 0) +
                           out->full_sizes;
        out->graphs = out->first_capture + further * GRAPH_FLOOR_BYTES;
    }
}

enum fg_vllm_refusal fg_vllm_kv_check(int64_t available, uint64_t needed)
{
    if (available <= 0)
        return FG_VLLM_NO_CACHE_MEMORY;
    return needed > (uint64_t)available ? FG_VLLM_MAX_LEN : FG_VLLM_STARTS;
}

void fg_vllm_refusal_text(enum fg_vllm_refusal r, int64_t available, uint64_t needed,
                          uint64_t max_len, uint64_t fit_len, char *buf, size_t cap)
{
    char est[96] = "";
    if (!cap)
        return;
    buf[0] = '\0';
    if (r == FG_VLLM_NO_CACHE_MEMORY) {
        snprintf(buf, cap, "Available KV cache memory: %.2f GiB; No available memory for the "
                 "cache blocks. Try increasing `gpu_memory_utilization`.", (double)available / GIB);
        return;
    }
    if (r != FG_VLLM_MAX_LEN)
        return;
    if (fit_len)
        snprintf(est, sizeof est, " Based on the available memory, the estimated maximum "
                 "model length is %llu.", (unsigned long long)fit_len);
    snprintf(buf, cap, "To serve at least one request with the model's max seq len (%llu), "
             "(%.2f GiB KV cache is needed, which is larger than the available KV cache "
             "memory (%.2f GiB).%s Try increasing `gpu_memory_utilization` or decreasing "
             "`max_model_len`.", (unsigned long long)max_len,
             (double)needed / GIB, (double)available / GIB, est);
}

/* cuda_graph_hook.py generate_prefill_cuda_graph_batch_sizes: 4..32 by 4, 48..256 by 16,
 * 288..512 by 32, 576..1024 by 64, 1280..4096 by 256, then by 512; how many are <= max. */
static uint32_t prefill_sizes_upto(uint32_t max)
{
    static const struct { uint32_t from, to, step; } runs[] = {
        {4, 32, 4}, {48, 256, 16}, {288, 512, 32}, {576, 1024, 64}, {1280, 4096, 256},
        {4608, UINT32_MAX, 512},
    };
    uint32_t n = 0;
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++)
        for (uint32_t s = runs[i].from; s <= runs[i].to && s <= max; s += runs[i].step)
            n++;
    return n;
}

void fg_sglang_budget(const struct fg_sglang_in *in, struct fg_sglang_budget *out)
{
    /* handle_gpu_memory_settings: below each bound of card MiB, chunked_prefill_size and
     * the decode max_bs under TP 4 and from TP 4 */
    static const struct { double below; uint32_t chunk, bs_small, bs_large; } rows[] = {
        {20 * 1024, 2048, 8, 8},     {35 * 1024, 4096, 48, 160}, {60 * 1024, 4096, 32, 160},
        {90 * 1024, 8192, 256, 512}, {160 * 1024, 8192, 256, 512}, {1e300, 16384, 512, 512},
    };
    uint32_t tp = in->tp ? in->tp : 1, pp = in->pp ? in->pp : 1;
    size_t i = 0;
    while (in->card_mib >= rows[i].below)
        i++;
    *out = (struct fg_sglang_budget){.chunk = rows[i].chunk,
                                     .decode_bs = tp < 4 ? rows[i].bs_small : rows[i].bs_large};
    out->prefill_sizes = prefill_sizes_upto(in->mla ? 2048 : out->chunk);
    out->prefill_graph_mib = in->mla ? 1.5 * 1024 : 8.0 * out->prefill_sizes;
    double reserved = 512 + 1.5 * (out->chunk > 2048 ? out->chunk : 2048) +
                      (double)tp * pp / 8 * 1024 + 2.0 * out->decode_bs + out->prefill_graph_mib;
    if (in->card_mib > 60 * 1024 && reserved < 10 * 1024)
        reserved = 10 * 1024;
    out->reserved_mib = reserved;
    out->fraction = in->card_mib > 0 ? round((in->card_mib - reserved) / in->card_mib * 1000) / 1000
                                     : 0;
}
