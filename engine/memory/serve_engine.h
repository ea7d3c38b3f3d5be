/*
 * serve_engine.h - what vLLM takes of a card besides the weights and the KV cache, and
 * when it refuses to start, as its start-up code sizes them.
 *
 * vLLM (v1/worker/gpu_worker.py Worker.determine_available_memory) gives the KV cache
 *     requested - (weights + the profile run's torch peak + non-torch memory)
 *               - the CUDA-graph estimate
 * where requested = gpu_memory_utilization x the card's total.  The profile run
 * (gpu_model_runner.py profile_run) is one dummy forward of max_num_batched_tokens and one
 * dummy sampler run over max_num_seqs rows of logits; the CUDA-graph estimate
 * (profile_cudagraph_memory) measures the captures: the largest one's working set, held
 * twice, and at least 1 MiB for each further graph.  Then v1/core/kv_cache_utils.py _check_enough_kv_cache_memory refuses to
 * start when the rest is not positive, or holds less than one max_model_len sequence.
 *
 * SGLang keeps no such profile: fg_sglang_budget below sizes its reserve.
 *
 * Nothing here allocates, fails or prints; fg_vllm_refusal_text formats into the
 * caller's buffer.
 */
#ifndef FG_SERVE_ENGINE_H
#define FG_SERVE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The scheduler's limits the profile runs at (EngineArgs.get_batch_defaults). */
struct fg_vllm_sched {
    uint32_t max_num_seqs;   /* sequences in one step: the sampler's rows */
    uint32_t batched_tokens; /* max_num_batched_tokens: the profile forward's tokens */
};

/* `vllm serve`'s defaults (UsageContext.OPENAI_API_SERVER) on a card of total bytes:
 * 1024 sequences and 8192 tokens on cards of 70 GiB and more other than A100, else 256
 * and 2048.  a100: the card is an A100 (PR #17885 kept it on the small row). */
void fg_vllm_sched_defaults(uint64_t total, bool a100, struct fg_vllm_sched *out);

struct fg_vllm_in {
    struct fg_vllm_sched sched;
    double act_per_token;  /* the forward's working set per token (bytes) */
    uint64_t hidden;       /* the model's hidden width */
    uint64_t vocab;        /* the logits' width (the whole vocabulary on every TP rank) */
    bool eager;            /* enforce_eager: no CUDA graphs */
    bool v2_runner;        /* the v2 model runner (v1/worker/gpu/): its lighter dummy sampler */
};

/* Whether vLLM runs a model on its v2 model runner: the default for every dense generative
 * model since 0.25 (release notes, #44443); vllm/config/vllm.py _is_default_v2_model_runner_model
 * keeps MoE and hybrid (Mamba / linear-attention) models on the v1 runner unless their
 * architecture is listed.  moe: routed experts; hybrid: a state-space or convolution mixer;
 * encoder: no generate runner. */
bool fg_vllm_v2_runner(bool moe, bool hybrid, bool encoder);

struct fg_vllm_profile {
    uint64_t forward;       /* the dummy forward of batched_tokens */
    uint64_t sampler;       /* the dummy sampler run over sample_rows rows, with their
                               hidden states */
    uint64_t peak;          /* the profile run's torch peak: the larger of the two */
    uint64_t graphs;        /* profile_cudagraph_memory's estimate */
    uint64_t first_capture; /* of which the largest capture's working set, twice (the
                               ordinary allocator's cache of its warm-up and the graph pool) */
    uint32_t sample_rows;   /* min(max_num_seqs, batched_tokens) */
    uint32_t capture_max;   /* the largest CUDA-graph capture size */
    uint32_t capture_sizes; /* PIECEWISE sizes captured; FULL captures those <= max_num_seqs */
    uint32_t full_sizes;
};

void fg_vllm_profile(const struct fg_vllm_in *in, struct fg_vllm_profile *out);

/* What _check_enough_kv_cache_memory says. */
enum fg_vllm_refusal {
    FG_VLLM_STARTS,
    FG_VLLM_NO_CACHE_MEMORY, /* available <= 0: "No available memory for the cache blocks" */
    FG_VLLM_MAX_LEN,         /* one max_model_len sequence needs more than is available */
};

/* available: the KV budget, negative when the rest of the engine already overdraws the
 * share; needed: one max_model_len sequence's KV cache. */
enum fg_vllm_refusal fg_vllm_kv_check(int64_t available, uint64_t needed);

/* vLLM's own words for a refusal (kv_cache_utils.py, gpu_worker.py's log line), with its
 * numbers in GiB as format_gib prints them: max_len the job's max_model_len, fit_len the
 * estimated maximum model length (0: none).  "" for FG_VLLM_STARTS. */
void fg_vllm_refusal_text(enum fg_vllm_refusal r, int64_t available, uint64_t needed,
                          uint64_t max_len, uint64_t fit_len, char *buf, size_t cap);

/*
 * SGLang's share of the card (python/sglang/srt/arg_groups/memory_hook.py
 * handle_gpu_memory_settings and reserve_for_graph_mb, as stored on main after v0.5.19):
 * chunked_prefill_size and the decode graphs' max_bs by the card's memory (MiB, as
 * get_device_memory_capacity reads it) and TP, then
 *     reserved = 512 + 1.5 x max(chunked_prefill_size, 2048) + tp x pp / 8 x 1024
 *              + 2 x decode max_bs + the prefill graphs (MiB),
 * at least 10 GiB on cards over 60 GiB, and mem_fraction_static = (card - reserved) / card,
 * rounded to 3 decimals.  The prefill graphs (cuda_graph_config.py: the breakable
 * backend, on by default on CUDA) cost 8 MiB of non-torch memory per captured size
 * (sizes up to chunked_prefill_size, cuda_graph_hook.py
 * generate_prefill_cuda_graph_batch_sizes), or 1.5 GiB under an MLA backend, whose prefill
 * graphs stop at 2048 tokens.  They are added before the 10 GiB floor is applied, but
 * with the card rows above the reserve is over the floor on every card it applies to
 * (13440 MiB before the graphs on an 80 GB card), so the graphs come out of the weights'
 * and KV pool's share.
 */
struct fg_sglang_in {
    double card_mib;
    uint32_t tp, pp; /* 0 reads as 1 */
    bool mla;        /* the model runs an MLA backend (kv_lora_rank) */
};

struct fg_sglang_budget {
    uint32_t chunk;          /* chunked_prefill_size */
    uint32_t decode_bs;      /* cuda_graph_config.decode.max_bs */
    uint32_t prefill_sizes;  /* prefill graph sizes captured */
    double prefill_graph_mib; /* what the reserve keeps for them */
    double reserved_mib;     /* after the floor */
    double fraction;         /* mem_fraction_static */
};

void fg_sglang_budget(const struct fg_sglang_in *in, struct fg_sglang_budget *out);

#endif
