/*
 * assess_serve.c - a serving engine's own sizing of a job (assess_int.h): vLLM's and SGLang's
 * budget of the card, the engine's fit and its refusal, the longest sequence the KV cache
 * holds, and the fewest GPUs the engine holds the job on.
 */
#include "assess_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether m has a node of kind k (an MLA backend under SGLang: model_config.py
 * AttentionArch.MLA; a Mamba or short-convolution mixer: vLLM's is_hybrid). */
static bool has_node(const struct fg_model *m, enum fg_node_kind k)
{
    for (size_t i = 0; i < m->n_nodes; i++)
        if (m->nodes[i].kind == k)
            return true;
    return false;
}

/* The engine's share of the card: out->usable (the budget the weights and the KV pool
 * come out of), gpu_util, serve_card and serve_tokens. */
void fg__assess_engine_budget(const struct fg_model *m, const struct fg_jobspec *spec,
                              const struct fg_gpu *gpu, const struct fg_fit_opts *fo,
                              struct fg_assessment *a)
{
    uint64_t driver = gpu->memory_bytes ? gpu->memory_bytes : gpu->memory_gb * 1000000000ull;
    uint64_t total = driver > FG_DRIVER_RESERVED_BYTES ? driver - FG_DRIVER_RESERVED_BYTES : 0;
    uint64_t ctx = fo->context_bytes > FG_DRIVER_RESERVED_BYTES
                       ? fo->context_bytes - FG_DRIVER_RESERVED_BYTES : 0;
    enum fg_serve_budget kind = a->fw->serve_budget;
    double util = spec->gpu_util, budget;
    a->serve_card = total;
    if (kind == FG_SERVE_SGLANG) {
        struct fg_sglang_in in = {.card_mib = (double)driver / (1 << 20), .tp = a->job.tp,
                                  .pp = a->job.pp, .mla = has_node(m, FG_NODE_MLA)};
        struct fg_sglang_budget sb;
        fg_sglang_budget(&in, &sb);
        if (!fg_jobspec_given(spec, FG_JOBOPT_GPU_UTIL))
            util = sb.fraction;
        a->serve_card = driver;
        a->serve_tokens = sb.chunk;
        a->serve_reserve = util < 1 ? (uint64_t)((double)driver * (1 - util)) : 0;
        a->serve_graph_reserve = (uint64_t)((2.0 * sb.decode_bs + sb.prefill_graph_mib) *
                                            (1 << 20));
        budget = (double)driver * util - (double)ctx;
    } else {
        struct fg_vllm_sched sched;
        fg_vllm_sched_defaults(total, strstr(gpu->name, "A100") != NULL, &sched);
        a->serve_tokens = sched.batched_tokens;
        a->serve_seqs = sched.max_num_seqs;
        budget = (double)total * util;
        if (kind == FG_SERVE_VLLM_020 || budget > (double)(total - ctx))
            budget -= (double)ctx; /* 0.20; or a share that leaves no room for the context */
    }
    a->usable = budget > 0 ? (uint64_t)budget : 0;
    a->gpu_util = util;
}

/* What the engine holds besides the weights (serve_engine.h for vLLM), what that leaves
 * the KV cache, how many sequences of the asked length it holds, and whether vLLM would
 * refuse to start (kv_cache_utils.py _check_enough_kv_cache_memory). */
void fg__assess_engine_fit(const struct fg_model *m, struct fg_assessment *a)
{
    const struct fg_estimate *e = &a->est;
    uint64_t b = e->batch ? e->batch : 1;
    uint64_t kv = (e->b.kv_cache + e->b.ssm_state) / b;
    uint64_t act = e->per_sample_bytes > kv ? e->per_sample_bytes - kv : 0;
    double per_token = (double)act / (double)(e->seq_len ? e->seq_len : 1);
    enum fg_serve_budget kind = a->fw->serve_budget;
    a->serve_profile = a->serve_graphs = a->serve_sampler = 0;
    if (kind != FG_SERVE_SGLANG) {
        bool hybrid = has_node(m, FG_NODE_MAMBA2) || has_node(m, FG_NODE_SHORTCONV);
        struct fg_vllm_in in = {.sched = {a->serve_seqs, a->serve_tokens},
                                .act_per_token = per_token, .hidden = m->hidden,
                                .vocab = m->vocab,
                                .v2_runner = kind == FG_SERVE_VLLM &&
                                             fg_vllm_v2_runner(m->experts > 0 ||
                                                                   has_node(m, FG_NODE_MOE),
                                                               hybrid, m->encoder_only)};
        struct fg_vllm_profile p;
        fg_vllm_profile(&in, &p);
        a->serve_profile = p.peak;
        a->serve_sampler = p.sampler;
        /* vLLM 0.20 captured its graphs after the KV cache, outside the budget */
        a->serve_graphs = kind == FG_SERVE_VLLM ? p.graphs : 0;
    }
    a->engine_static = e->static_bytes + a->serve_profile + a->serve_graphs;
    a->kv_seq_bytes = kv;
    uint64_t left = a->usable > a->engine_static ? a->usable - a->engine_static : 0;
    a->serve_kv_budget = left;
    a->serve_kv_avail = (int64_t)a->usable - (int64_t)a->engine_static;
    a->serve_refusal = kind == FG_SERVE_SGLANG ? FG_VLLM_STARTS
                                               : fg_vllm_kv_check(a->serve_kv_avail, kv);
    uint64_t n = kv ? left / kv : (left ? UINT32_MAX : 0);
    a->fit.max_batch = n;
    a->fit.need_bytes = a->engine_static + kv * b;
    a->fit.verdict = n >= b && a->serve_refusal == FG_VLLM_STARTS ? FG_FIT_FITS : FG_FIT_SPLIT;
}

/*
 * The longest max_model_len whose one sequence the KV budget holds, up to the model's
 * context (vLLM refuses a longer one: ModelConfig derives max_model_len from
 * max_position_embeddings): a bisection on the estimate's KV line, which grows with the
 * length (windowed layers stop growing at their window).  A pipeline stage's cache is
 * scaled from the asked length's.
 */
int fg__assess_serve_max_len(const struct fg_model *m, struct fg_assessment *a, struct fg_err *err)
{
    uint64_t cap = m->max_pos && m->max_pos < FG_MAX_SEQ ? m->max_pos : FG_MAX_SEQ;
    uint64_t budget = a->serve_kv_budget, lo = 0, hi = cap;
    if (a->layout.pp > 1) {
        double per = (double)a->kv_seq_bytes / (double)(a->est.seq_len ? a->est.seq_len : 1);
        uint64_t l = per > 0 ? (uint64_t)((double)budget / per) : cap;
        a->serve_max_len = l < cap ? l : cap;
        return 0;
    }
    while (lo < hi) { /* largest L in [0, cap] with kv(L) <= budget */
        uint64_t mid = lo + (hi - lo + 1) / 2;
        struct fg_job j = a->job;
        struct fg_estimate e;
        j.seq_len = mid;
        j.batch = 1;
        int rc = fg_memory_estimate_totals(m, &j, &e, err);
        if (rc)
            return rc;
        if (e.b.kv_cache + e.b.ssm_state <= budget)
            lo = mid;
        else
            hi = mid - 1;
    }
    a->serve_max_len = lo;
    return 0;
}

/*
 * The fewest GPUs the engine holds the job on, as it runs them: tensor parallel inside a
 * node (a size that divides the heads), pipeline stages across nodes, the job's EP kept;
 * each count judged by the same budget and fit.  Fills a->plan with that one layout; no
 * plan when none up to the policy's MaxGPUs (or 64) holds it.
 */
/* Whether the engine holds the job on n GPUs split as serve_fewest says (into *t, a copy
 * of a); false when n cannot be split so. */
static int serve_on(const struct fg_model *m, const struct fg_jobspec *spec,
                    const struct fg_gpu *gpu, const struct fg_rules *r,
                    const struct fg_fit_opts *fo, const struct fg_assessment *a, uint32_t n,
                    struct fg_assessment *t, bool *fits, struct fg_err *err)
{
    uint32_t per_node = a->plan_node_gpus;
    *fits = false;
    *t = *a;
    struct fg_jobspec s = *spec;
    s.tp = s.pp = s.dp = s.cp = 0;
    struct fg_err e = {0};
    if (fg__assess_job_layout(m, &s, n, n < per_node ? n : per_node, (n + per_node - 1) / per_node, t,
                   &e) ||
        t->job.tp * t->job.pp != n)
        return 0;
    int rc = fg__assess_layout_estimate(m, r, t, err);
    if (rc)
        return rc;
    fg__assess_engine_budget(m, spec, gpu, fo, t);
    fg__assess_engine_fit(m, t);
    *fits = t->fit.verdict == FG_FIT_FITS;
    return 0;
}

/*
 * The fewest GPUs the engine holds the job on, as it runs them: tensor parallel inside a
 * node (a size that divides the heads), pipeline stages across nodes, the job's EP kept;
 * each count judged by the same budget and fit, up to the GPUs asked for or MaxGPUs,
 * whichever is more (FG_ASSESS_MAX_GPUS at most).  Within a node every power of two; then
 * whole nodes, where each more node is one more pipeline stage (no stage holds more), so
 * the first that fits is found by bisection.  Fills a->plan with that one layout; no plan
 * when none holds it.
 */
int fg__assess_serve_fewest(const struct fg_model *m, const struct fg_jobspec *spec,
                            const struct fg_gpu *gpu, uint32_t gpus, const struct fg_rules *r,
                            const struct fg_fit_opts *fo, struct fg_assessment *a,
                            struct fg_err *err)
{
    uint32_t per_node = a->plan_node_gpus;
    uint32_t most = r->max_gpus > gpus ? r->max_gpus : gpus;
    if (most > FG_ASSESS_MAX_GPUS)
        most = FG_ASSESS_MAX_GPUS;
    struct fg_assessment *t = malloc(2 * sizeof *t);
    if (!t)
        return fg_err_set(err, FG_E_NOMEM, "out of memory");
    int rc = 0;
    bool fits = false;
    uint32_t n = 0;
    for (uint32_t k = 2; k <= per_node && k <= most && !fits && !rc; k *= 2)
        if (!(rc = serve_on(m, spec, gpu, r, fo, a, k, t, &fits, err)) && fits)
            n = k;
    if (!fits && !rc) {
        /* whole nodes: PP grows with them up to the blocks */
        uint32_t lo = 1, hi = most / per_node, layers = a->layers ? a->layers : 1;
        if (hi > layers)
            hi = layers;
        if (hi >= 2 && !(rc = serve_on(m, spec, gpu, r, fo, a, hi * per_node, t, &fits, err)) &&
            fits) {
            n = hi * per_node;
            while (hi - lo > 1 && !rc) {
                uint32_t mid = lo + (hi - lo) / 2;
                bool f2;
                if ((rc = serve_on(m, spec, gpu, r, fo, a, mid * per_node, t + 1, &f2, err)))
                    break;
                if (f2) {
                    hi = mid;
                    n = mid * per_node;
                    t[0] = t[1];
                } else {
                    lo = mid;
                }
            }
        }
    }
    if (!rc && n) {
        a->plan.status = FG_PLAN_FOUND;
        a->plan.usable_bytes = t->usable;
        a->plan.n = 1;
        a->plan.options[0] = t->layout;
        a->plan.options[0].gpus = n;
        a->plan.options[0].peak_bytes = t->fit.need_bytes;
        a->planned = true;
    }
    free(t);
    return rc;
}
