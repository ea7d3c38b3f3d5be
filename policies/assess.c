/*
 * assess.c - the engine run once for a job (assess.h): its layout, the estimate on it,
 * the fit on one card, and the plans when one card is not enough.
 */
#include "assess.h"
#include "stack/trainer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The framework's layout bits as the planner's (the same values). */
static void restrict_to(const struct fg_framework *fw, struct fg_plan_opts *po)
{
    po->restrict_layouts = true;
    po->layouts = fw->layouts & (FG_PLAN_TP | FG_PLAN_PP | FG_PLAN_EP | FG_PLAN_ZERO);
    po->naive_pp = fw->naive_pp;
    po->fw = fw;
}

/*
 * The layout the check admits a job that one card does not hold on: of exactly the GPUs
 * asked for, on their nodes, one the framework runs (the plan's option of that count, else
 * a plan of that count alone).  a->at_total_found false when none fits: the plan's
 * smaller counts do not make the asked GPUs run (a layer split has no data parallel beside
 * it, TP does not cross nodes).
 */
static int layout_at_total(const struct fg_model *m, const struct fg_job *j, uint32_t gpus,
                           const struct fg_plan_opts *po, struct fg_assessment *a,
                           struct fg_err *err)
{
    const struct fg_plan *p = &a->plan;
    a->at_total_found = false;
    if (p->status != FG_PLAN_FOUND || !p->n || p->options[0].gpus > gpus)
        return 0;
    /* one that holds the conservative peak too when there is one (the plan's own at that
     * count, else a plan of that count under the conservative factor), so that a job
     * given more GPUs than it needs is not judged borderline on the least sharded layout */
    for (size_t i = 0; i < p->n; i++)
        if (p->options[i].gpus == gpus &&
            (double)p->options[i].peak_bytes * po->fit.conservative <= (double)a->usable) {
            a->at_total = p->options[i];
            a->at_total_found = true;
            return 0;
        }
    struct fg_plan_opts one = *po;
    one.min_gpus = one.max_gpus = gpus;
    one.any_count = true;
    one.gpus_per_node = a->nodes > 1 ? a->node_gpus : a->plan_node_gpus;
    struct fg_plan *at = malloc(sizeof *at);
    if (!at)
        return fg_err_set(err, FG_E_NOMEM, "out of memory");
    int rc = 0;
    for (int k = 0; k < 2 && !rc && !a->at_total_found; k++) {
        if (k == 0)
            one.fit.headroom = po->fit.conservative;
        else
            one.fit.headroom = po->fit.headroom;
        rc = fg_plan_layouts(m, j, a->usable, &one, at, err);
        if (!rc && at->status == FG_PLAN_FOUND && at->n) {
            a->at_total = at->options[0];
            a->at_total_found = true;
        }
    }
    free(at);
    return rc;
}

/* The layout the job's files declare (jobfile_apply.c declared_layout): more GPUs around it,
 * never another sharding or split, which would need other files. */
static void keep_files_layout(const struct fg_job *j, struct fg_plan_opts *po)
{
    po->fix_zero = true;
    po->layouts &= ~(FG_PLAN_TP | FG_PLAN_PP | FG_PLAN_EP);
    po->fix_tp = j->tp;
    po->fix_pp = j->pp;
}

/* "TP=2 x PP=1 x CP=1 x DP=2" for messages. */
static void shape_str(uint32_t tp, uint32_t pp, uint32_t ep, uint32_t cp, uint32_t dp, char *buf,
                      size_t cap)
{
    int w = snprintf(buf, cap, "TP=%u x PP=%u x DP=%u", tp, pp, dp);
    if (ep > 1 && w > 0 && (size_t)w < cap)
        w += snprintf(buf + w, cap - (size_t)w, " (EP=%u)", ep);
    if (cp > 1 && w > 0 && (size_t)w < cap)
        snprintf(buf + w, cap - (size_t)w, " x CP=%u", cp);
}

/*
 * The job's own layout: declared dimensions, the rest from the GPU count; checked against
 * the framework, the count and the model.  Fills out->job's tp, pp, ep, dp, zero.
 */
static int job_layout(const struct fg_model *m, const struct fg_jobspec *spec, uint32_t total,
                      uint32_t per_node, uint32_t nodes, struct fg_assessment *out,
                      struct fg_err *err)
{
    const struct fg_framework *fw = spec->fw;
    struct fg_job *j = &out->job;
    bool serve_engine = j->mode == FG_MODE_SERVE && fw->gpu_util > 0;
    uint32_t tp = spec->tp ? spec->tp : 1, pp = spec->pp ? spec->pp : 1;
    uint32_t ep = spec->ep ? spec->ep : 1, cp = spec->cp ? spec->cp : 1, dp;
    /* a serving engine splits the model over the GPUs it is given, unless the job says how:
     * tensor parallel inside a node (the largest size that divides the heads and the GPUs),
     * pipeline stages across nodes (vLLM's multi-node recipe: --tensor-parallel-size per
     * node, --pipeline-parallel-size the nodes) */
    if (serve_engine && !spec->tp && !spec->pp && !spec->dp && !spec->cp && total > 1) {
        /* a declared EP spreads the experts over the GPUs of this split (EP = TP x DP) */
        uint32_t lim = total < per_node ? total : per_node;
        for (uint32_t t = lim; t >= 1; t--)
            if (total % t == 0 && (!m->heads || m->heads % t == 0) &&
                (!m->kv_heads || m->kv_heads % t == 0 || t % m->kv_heads == 0)) {
                tp = t;
                break;
            }
        pp = total / tp;
        if (pp > out->layers)
            pp = 1;
    }
    uint64_t split = (uint64_t)tp * pp * cp;
    if (spec->dp)
        dp = spec->dp;
    else
        dp = total % split == 0 && total >= split ? (uint32_t)(total / split) : 1;
    char shape[96];
    shape_str(tp, pp, ep, cp, dp, shape, sizeof shape);
    if (split * dp != total)
        return fg_err_set(err, FG_E_INVAL, "the layout %s is %llu GPUs but the job asks for %u: "
                          "declare --tp/--pp/--cp/--dp that multiply to the GPU count",
                          shape, (unsigned long long)(split * dp), total);
    unsigned need = fg_framework_needs(tp, pp, ep, cp, 0);
    if (need & ~fw->layouts) {
        char who[160];
        fg_framework_who_runs(need, who, sizeof who);
        return fg_err_set(err, FG_E_INVAL, "--framework %s cannot run %s (%s); %s%s", fw->name,
                          shape,
                          fw->layouts & FG_LAY_PP ? "it runs data parallel, ZeRO / FSDP and a "
                                                    "layer split"
                          : fw->layouts & FG_LAY_ZERO ? "it runs data parallel with ZeRO / FSDP"
                                                      : "it runs data parallel only",
                          who[0] ? "frameworks that can: " : "no framework fitgate knows can",
                          who);
    }
    if (fw->naive_pp && pp > 1 && (pp * tp > per_node || nodes > 1))
        return fg_err_set(err, FG_E_INVAL, "--framework %s splits layers with device_map in one "
                          "process on one node: PP=%u is more than the %u GPUs of a node%s; use "
                          "a framework with pipeline parallel across nodes (nemo, megatron, "
                          "deepspeed), or ZeRO-3 / FSDP", fw->name, pp, per_node,
                          nodes > 1 ? " (the job spans several)" : "");
    if (fw->naive_pp && pp > 1 && dp * cp > 1)
        return fg_err_set(err, FG_E_INVAL, "--framework %s splits layers with device_map in one "
                          "process, which runs no data parallel beside it (accelerate refuses a "
                          "device_map model in any distributed mode): use --dp 1, or a "
                          "framework with pipeline parallel (nemo, megatron, deepspeed)",
                          fw->name);
    if (tp > per_node || (nodes > 1 && per_node % tp))
        return fg_err_set(err, FG_E_INVAL, "TP=%u spans more than the %u GPUs of a node: "
                          "tensor parallel stays inside a node", tp, per_node);
    if (pp > out->layers)
        return fg_err_set(err, FG_E_INVAL, "PP=%u is more stages than the model's %u blocks", pp,
                          out->layers);
    /* Megatron carves EP out of DP (parallel_state: expert-data-parallel = DP / EP); a
     * serving engine spreads the experts over all its GPUs (vLLM enable_expert_parallel:
     * EP = TP x DP) */
    uint64_t ep_over = serve_engine ? (uint64_t)tp * dp : dp;
    if (ep > 1 && (!m->experts || m->experts % ep || ep_over % ep))
        return fg_err_set(err, FG_E_INVAL, "EP=%u must divide the model's %llu experts and the "
                          "%llu ranks it spreads them over", ep, (unsigned long long)m->experts,
                          (unsigned long long)ep_over);
    if (cp > 1 && j->seq_len && j->seq_len % (2ull * cp))
        return fg_err_set(err, FG_E_INVAL, "CP=%u needs a sequence length divisible by 2 x CP = "
                          "%u (Megatron splits each sequence into 2 x CP chunks), not %llu", cp,
                          2 * cp, (unsigned long long)j->seq_len);
    j->tp = tp;
    j->pp = pp;
    j->ep = ep;
    j->cp = cp;
    j->dp = dp;
    /* --global-batch: the micro-batches each rank accumulates per optimizer step */
    if (spec->global_batch && !fg_jobspec_given(spec, FG_JOBOPT_GRAD_ACCUM)) {
        uint64_t per_step = j->batch * dp, a = (spec->global_batch + per_step - 1) / per_step;
        j->grad_accum = a > UINT32_MAX ? UINT32_MAX : (uint32_t)a;
    }
    /* the model-parallel group; a declared DP, or a serving engine's split, is the job's */
    out->need_min = spec->dp || serve_engine ? total : (uint32_t)split;
    if (!fg_jobspec_given(spec, FG_JOBOPT_ZERO) && dp * cp > 1 && (fw->layouts & FG_LAY_ZERO))
        j->zero = fw->dp_zero;
    /* framework.h dist_recipe: on several ranks torchtune's full fine-tune is
     * full_finetune_distributed.py, whose optimizer_in_bwd defaults False and whose configs
     * (llama3_1/8B_full.yaml) run fused AdamW: the single-device defaults do not apply */
    if (fw->dist_recipe && dp * cp > 1 && j->mode == FG_MODE_FULL) {
        if (!fg_jobspec_given(spec, FG_JOBOPT_OPTIMIZER_IN_BWD))
            j->optimizer_in_bwd = false;
        if (!fg_jobspec_given(spec, FG_JOBOPT_OPTIMIZER))
            j->optimizer = fw->optimizer;
    }
    if (j->zero && !(fw->layouts & FG_LAY_ZERO))
        return fg_err_set(err, FG_E_INVAL, "--framework %s runs no ZeRO / FSDP sharding; drop "
                          "--zero", fw->name);
    /* CPU offload is ZeRO's (DeepSpeed zero/stage_1_and_2.py cpu_offload from stage 1,
     * offload_param at stage 3; torch FSDP CPUOffload with full sharding) */
    if (j->offload == FG_OFFLOAD_PARAMS && j->zero < 3)
        return fg_err_set(err, FG_E_INVAL, "--offload params needs ZeRO-3 / FSDP full sharding "
                          "(--zero 3): parameters are offloaded shard by shard");
    if (j->offload == FG_OFFLOAD_OPTIMIZER && j->zero < 1)
        return fg_err_set(err, FG_E_INVAL, "--offload optimizer needs a ZeRO stage (--zero 1..3): "
                          "the optimizer step runs on the CPU over the rank's shard");
    /* and everything else the framework's table says of the layout (DeepSpeed's pipeline
     * beside ZeRO-2/3, ...) */
    struct fg_run_shape rs = {.tp = tp, .pp = pp, .ep = ep, .cp = cp, .dp = dp,
                              .zero = j->zero,
                              .per_node = per_node, .nodes = nodes, .experts = m->experts,
                              .seq_len = j->seq_len, .serve = serve_engine};
    char why[240];
    if (!fg_framework_runs(fw, &rs, why, sizeof why))
        return fg_err_set(err, FG_E_INVAL, "the layout %s: %s", shape, why);
    return 0;
}

/* The stages of a framework that splits its layers by count (framework.h pp_even), each
 * estimated with the micro-batches 1F1B keeps in flight there (pp - stage); the planner's
 * cut kept when the count split does not apply. */
static int even_stages(const struct fg_model *m, const struct fg_job *j, struct fg_layout *l,
                       struct fg_err *err)
{
    uint32_t cut[FG_PLAN_MAX_PP + 1];
    if (!fg_plan_even_cut(fg_model_main_layers(m), l->pp, 1, 1, cut))
        return 0;
    struct fg_layout even = *l;
    memcpy(even.cut, cut, sizeof cut);
    even.peak_bytes = 0;
    for (uint32_t s = 0; s < l->pp; s++) {
        struct fg_job st = *j;
        struct fg_estimate e;
        st.layer_first = cut[s];
        st.layer_last = cut[s + 1];
        st.stage_embed = s == 0;
        st.stage_head = s == l->pp - 1;
        st.inflight = l->pp - s;
        int rc = fg_memory_estimate_totals(m, &st, &e, err);
        if (rc)
            return rc;
        even.stage_bytes[s] = e.total_bytes;
        if (e.total_bytes > even.peak_bytes)
            even.peak_bytes = e.total_bytes;
    }
    *l = even;
    return 0;
}

/* Per-GPU estimate of the job's layout: the whole model on each rank (TP = PP = 1), else
 * the planner's best cut of exactly that shape and the estimate of its largest stage. */
static int layout_estimate(const struct fg_model *m, const struct fg_rules *r,
                           struct fg_assessment *out, struct fg_err *err)
{
    struct fg_job *j = &out->job;
    struct fg_layout *l = &out->layout;
    memset(l, 0, sizeof *l);
    if (j->tp == 1 && j->pp == 1) {
        int rc = fg_memory_estimate(m, j, &out->est, err);
        if (rc)
            return rc;
        l->gpus = j->dp * (j->cp ? j->cp : 1);
        l->cp = j->cp;
        l->tp = l->pp = 1;
        l->ep = j->ep;
        l->dp = j->dp;
        l->zero = j->zero;
        l->cut[1] = out->layers;
        l->micro_batch = j->batch;
        l->grad_accum = j->grad_accum ? j->grad_accum : 1;
        l->peak_bytes = l->stage_bytes[0] = out->est.total_bytes;
        return 0;
    }
    struct fg_plan_opts po;
    fg_plan_opts_default(&po);
    po.fix_tp = j->tp;
    po.fix_pp = j->pp;
    po.fix_ep = j->ep;
    po.fix_dp = j->dp;
    po.fix_zero = true;
    po.any_count = true;
    po.naive_pp = out->fw->naive_pp;
    po.min_gpus = po.max_gpus = j->tp * j->pp * j->dp;
    po.gpus_per_node = r->max_gpus_node ? r->max_gpus_node : 8;
    po.fit.headroom = 1.0;
    struct fg_plan p;
    /* sized, not judged: any card holds it, so the planner returns the best cut */
    int rc = fg_plan_layouts(m, j, UINT64_MAX / 4, &po, &p, err);
    if (rc)
        return rc;
    if (p.status != FG_PLAN_FOUND || !p.n)
        return fg_err_set(err, FG_E_INVAL, "the layout TP=%u x PP=%u x DP=%u does not apply "
                          "to %s (TP must divide its heads and widths)", j->tp, j->pp, j->dp,
                          m->id);
    *l = p.options[0];
    if (j->cp > 1) { /* the planner sizes TP x PP x DP; each CP rank holds its share of that */
        l->cp = j->cp;
        l->gpus *= j->cp;
    }
    if (out->fw->pp_even && l->pp > 1 && (rc = even_stages(m, j, l, err)))
        return rc;
    /* the breakdown of the largest stage */
    uint32_t worst = 0;
    for (uint32_t s = 1; s < l->pp; s++)
        if (l->stage_bytes[s] > l->stage_bytes[worst])
            worst = s;
    struct fg_job st = *j;
    if (l->pp > 1) {
        st.layer_first = l->cut[worst];
        st.layer_last = l->cut[worst + 1];
        st.stage_embed = worst == 0;
        st.stage_head = worst == l->pp - 1;
        st.inflight = out->fw->naive_pp || j->mode == FG_MODE_SERVE ? 1 : l->pp - worst;
    }
    return fg_memory_estimate(m, &st, &out->est, err);
}

/*
 * Serving engines, as each budgets a card (framework.h enum fg_serve_budget; the sources
 * are framework.c's, the rules docs/frameworks.md "Serving"):
 *   vLLM >= 0.21  budget = gpu_memory_utilization x the card's total (cudaMemGetInfo's:
 *                 the driver's figure less what it keeps, FG_DRIVER_RESERVED_BYTES), the
 *                 baseline taken after the CUDA context, which must fit beside it; off it
 *                 the weights, the profile run's peak (a dummy batch of
 *                 max_num_batched_tokens, then its sampler over max_num_seqs rows of
 *                 logits) and the CUDA graphs' estimate (memory/serve_engine.h)
 *   vLLM 0.20     the same at 0.9 with the context inside the budget and the graphs outside
 *   SGLang        mem_fraction_static x the card for the weights and the KV pool, less the
 *                 context (profile_max_num_token: the memory left after the weights, less
 *                 (1 - fraction) x the card); activations and graphs, the piecewise
 *                 prefill graphs included, live in the reserve
 * What is left is KV cache; vLLM refuses to start when it is not positive or one
 * max_model_len sequence does not fit (kv_cache_utils.py _check_enough_kv_cache_memory),
 * and its concurrency is how many sequences of that length the rest holds.
 */

/* SGLang ServerArgs._handle_gpu_memory_settings: the fraction for a card of mib MiB
 * (nvidia-smi memory.total) at tp x pp, and the chunked prefill size it picks. */
static double sglang_fraction(double mib, uint32_t tp, uint32_t pp, uint32_t *chunk)
{
    static const struct { double below; uint32_t chunk, bs_small, bs_large; } rows[] = {
        {20 * 1024, 2048, 8, 8},     {35 * 1024, 2048, 24, 80},  {60 * 1024, 4096, 32, 160},
        {90 * 1024, 8192, 256, 512}, {160 * 1024, 8192, 256, 512}, {1e300, 16384, 512, 512},
    };
    size_t i = 0;
    while (mib >= rows[i].below)
        i++;
    *chunk = rows[i].chunk;
    double bs = tp < 4 ? rows[i].bs_small : rows[i].bs_large;
    double reserved = 512 + 1.5 * (rows[i].chunk > 2048 ? rows[i].chunk : 2048) + 2 * bs +
                      (double)tp * pp / 8 * 1024;
    if (mib > 60 * 1024 && reserved < 10 * 1024)
        reserved = 10 * 1024;
    return round((mib - reserved) / mib * 1000) / 1000;
}

/* The engine's share of the card: out->usable (the budget the weights and the KV pool
 * come out of), gpu_util, serve_card and serve_tokens. */
static void engine_budget(const struct fg_jobspec *spec, const struct fg_gpu *gpu,
                          const struct fg_fit_opts *fo, struct fg_assessment *a)
{
    uint64_t driver = gpu->memory_bytes ? gpu->memory_bytes : gpu->memory_gb * 1000000000ull;
    uint64_t total = driver > FG_DRIVER_RESERVED_BYTES ? driver - FG_DRIVER_RESERVED_BYTES : 0;
    uint64_t ctx = fo->context_bytes > FG_DRIVER_RESERVED_BYTES
                       ? fo->context_bytes - FG_DRIVER_RESERVED_BYTES : 0;
    enum fg_serve_budget kind = a->fw->serve_budget;
    double util = spec->gpu_util, budget;
    a->serve_card = total;
    if (kind == FG_SERVE_SGLANG) {
        uint32_t chunk;
        double f = sglang_fraction((double)driver / (1 << 20), a->job.tp ? a->job.tp : 1,
                                   a->job.pp ? a->job.pp : 1, &chunk);
        if (!fg_jobspec_given(spec, FG_JOBOPT_GPU_UTIL))
            util = f;
        a->serve_card = driver;
        a->serve_tokens = chunk;
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
static void engine_fit(const struct fg_model *m, struct fg_assessment *a)
{
    const struct fg_estimate *e = &a->est;
    uint64_t b = e->batch ? e->batch : 1;
    uint64_t kv = (e->b.kv_cache + e->b.ssm_state) / b;
    uint64_t act = e->per_sample_bytes > kv ? e->per_sample_bytes - kv : 0;
    double per_token = (double)act / (double)(e->seq_len ? e->seq_len : 1);
    enum fg_serve_budget kind = a->fw->serve_budget;
    a->serve_profile = a->serve_graphs = a->serve_sampler = 0;
    if (kind != FG_SERVE_SGLANG) {
        struct fg_vllm_in in = {.sched = {a->serve_seqs, a->serve_tokens},
                                .act_per_token = per_token, .hidden = m->hidden,
                                .vocab = m->vocab};
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
static int serve_max_len(const struct fg_model *m, struct fg_assessment *a, struct fg_err *err)
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

static int layout_estimate(const struct fg_model *m, const struct fg_rules *r,
                           struct fg_assessment *out, struct fg_err *err);

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
    if (job_layout(m, &s, n, n < per_node ? n : per_node, (n + per_node - 1) / per_node, t,
                   &e) ||
        t->job.tp * t->job.pp != n)
        return 0;
    int rc = layout_estimate(m, r, t, err);
    if (rc)
        return rc;
    engine_budget(spec, gpu, fo, t);
    engine_fit(m, t);
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
static int serve_fewest(const struct fg_model *m, const struct fg_jobspec *spec,
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

/*
 * A data-parallel job that shards with ZeRO / FSDP fits as asked because its states are
 * spread over every rank: fewer ranks hold more each.  The fewest that still fit (powers
 * of two, as a scheduler hands them out), so an over-request is judged on that and not on
 * one rank holding a shard of 1/dp.
 */
static int zero_need(const struct fg_model *m, const struct fg_jobspec *spec,
                     struct fg_assessment *a, const struct fg_plan_opts *po, struct fg_err *err)
{
    const struct fg_job *j = &a->job;
    if (!j->zero || j->dp <= 1 || j->tp > 1 || j->pp > 1 || spec->dp ||
        (a->fit.verdict != FG_FIT_FITS && a->fit.verdict != FG_FIT_BORDERLINE))
        return 0;
    uint32_t cp = j->cp > 1 ? j->cp : 1;
    for (uint32_t d = 1; d < j->dp; d *= 2) {
        struct fg_job t = *j;
        struct fg_estimate e;
        struct fg_fit f;
        t.dp = d;
        int rc = fg_memory_estimate_totals(m, &t, &e, err);
        if (rc)
            return rc;
        fg_fit_card(&e, a->usable, &po->fit, &f);
        if (f.verdict == FG_FIT_FITS || f.verdict == FG_FIT_BORDERLINE) {
            a->need_min = d * cp;
            return 0;
        }
    }
    a->need_min = j->dp * cp;
    return 0;
}

static void scale_layout(struct fg_layout *l, double f)
{
    l->peak_bytes = (uint64_t)llround((double)l->peak_bytes * f);
    for (size_t i = 0; i < FG_PLAN_MAX_PP; i++)
        l->stage_bytes[i] = (uint64_t)llround((double)l->stage_bytes[i] * f);
}

static void scale_plan(struct fg_plan *p, double f)
{
    for (size_t i = 0; i < p->n && i < FG_PLAN_MAX_OPTIONS; i++)
        scale_layout(&p->options[i], f);
}

/* Where the GPUs of a request are (assess.h struct fg_assess_opts), into a's node_gpus,
 * nodes and plan_node_gpus: a request on one node plans more GPUs on nodes of
 * MaxGPUsPerNode; one over several keeps its own GPUs per node. */
static void place(const struct fg_assess_opts *ao, uint32_t gpus, const struct fg_rules *r,
                  struct fg_assessment *a)
{
    uint32_t node_max = r->max_gpus_node ? r->max_gpus_node : 8;
    uint32_t total = gpus ? gpus : 1;
    if (ao && ao->per_node && ao->nodes) {
        a->node_gpus = ao->per_node;
        a->nodes = ao->nodes;
    } else {
        a->nodes = (total + node_max - 1) / node_max;
        a->node_gpus = a->nodes > 1 ? node_max : total;
    }
    a->plan_node_gpus = a->nodes > 1 ? a->node_gpus : node_max;
}

static int assess(const struct fg_model *m, const struct fg_jobspec *spec,
                  const struct fg_gpu *gpu, uint32_t gpus, const struct fg_assess_opts *ao,
                  const struct fg_rules *r, struct fg_assessment *out, struct fg_err *err)
{
    memset(out, 0, sizeof *out);
    out->job = spec->job;
    out->fw = spec->fw ? spec->fw : fg_framework_default();
    snprintf(out->override_reason, sizeof out->override_reason, "%s", spec->override_reason);
    snprintf(out->model_type, sizeof out->model_type, "%s", m->model_type);
    out->layers = fg_model_main_layers(m);
    out->headroom = r->headroom;
    place(ao, gpus, r, out);
    int rc = job_layout(m, spec, gpus ? gpus : 1, out->node_gpus, out->nodes, out, err);
    if (!rc)
        rc = layout_estimate(m, r, out, err);
    if (!rc && r->calib && (out->calib = fg_calib_find(r->calib, out->fw->name, out->job.mode)))
        fg_calib_apply(out->calib, &out->est);
    if (rc || !gpu)
        return rc;
    struct fg_plan_opts po;
    fg_plan_opts_default(&po);
    po.fit.headroom = r->headroom;
    po.fit.conservative = r->conservative;
    /* the search reaches the GPUs the job asked for as well as the partition's MaxGPUs=
     * (a 2,048-GPU job is planned on 2,048), within FG_ASSESS_MAX_GPUS */
    po.max_gpus = r->max_gpus > gpus ? r->max_gpus : gpus;
    if (po.max_gpus > FG_ASSESS_MAX_GPUS)
        po.max_gpus = FG_ASSESS_MAX_GPUS;
    po.min_gpus = 1;
    po.gpus_per_node = out->plan_node_gpus;
    po.global_batch = spec->global_batch;
    out->have_card = true;
    out->usable = fg_fit_usable(gpu->memory_gb, gpu->memory_bytes, &po.fit);
    if (out->job.mode == FG_MODE_SERVE && spec->gpu_util > 0) {
        /* inside its budget the engine sizes its KV pool to what is left, so the estimate
         * is held to the budget itself (headroom 1) */
        engine_budget(spec, gpu, &po.fit, out);
        out->headroom = po.fit.headroom = 1.0;
        po.fit.conservative = r->conservative / r->headroom;
    }
    if (out->job.vllm_mode == FG_VLLM_COLOCATE) {
        /* TRL's colocated vLLM takes vllm_gpu_memory_utilization of the whole card on every
         * training GPU (grpo_trainer.py: LLM(gpu_memory_utilization=...)): the policy
         * trains in what is left */
        struct fg_fit_opts raw = po.fit;
        raw.context_bytes = 0;
        out->gen_share = (uint64_t)((double)fg_fit_usable(gpu->memory_gb, gpu->memory_bytes,
                                                          &raw) * out->job.vllm_util);
        out->usable = out->usable > out->gen_share ? out->usable - out->gen_share : 0;
    }
    fg_fit_card(&out->est, out->usable, &po.fit, &out->fit);
    if (out->gpu_util > 0) {
        engine_fit(m, out);
        if ((rc = serve_max_len(m, out, err)))
            return rc;
        if (out->fit.verdict != FG_FIT_FITS)
            return serve_fewest(m, spec, gpu, gpus, r, &po.fit, out, err);
        return 0;
    }
    if (out->calib) {
        /* the planner's estimates are the model's own: the site's factor goes into the
         * fit's margins instead (need = headroom x factor x estimate) */
        po.fit.headroom *= out->calib->factor;
        po.fit.conservative *= out->calib->factor;
    }
    if ((rc = zero_need(m, spec, out, &po, err)))
        return rc;
    restrict_to(out->fw, &po);
    /* what the job declared stays: more GPUs are added around it, never by changing it */
    po.fix_tp = spec->tp;
    po.fix_pp = spec->pp;
    po.fix_ep = spec->ep;
    po.fix_dp = spec->dp;
    if (spec->layout_fixed)
        keep_files_layout(&out->job, &po);
    if (out->fit.verdict == FG_FIT_SPLIT && out->fit.max_batch == 0) {
        struct fg_job j = out->job;
        j.dp = 1;
        j.tp = j.pp = j.ep = 1;
        if (!fg_jobspec_given(spec, FG_JOBOPT_ZERO))
            j.zero = 0;
        struct fg_plan_opts any = po;
        any.restrict_layouts = false;
        any.naive_pp = false;
        if ((rc = fg_plan_layouts(m, &j, out->usable, &po, &out->plan, err)))
            return rc;
        if (out->plan.status != FG_PLAN_FOUND && j.batch > 1) {
            /* micro-batch 1 on more GPUs, the asked batch kept by accumulation */
            if (!po.global_batch)
                po.global_batch = any.global_batch = j.batch;
            j.batch = 1;
            if ((rc = fg_plan_layouts(m, &j, out->usable, &po, &out->plan, err)))
                return rc;
        }
        out->planned = true;
        if ((rc = layout_at_total(m, &j, gpus, &po, out, err)))
            return rc;
        if ((po.layouts != (FG_PLAN_TP | FG_PLAN_PP | FG_PLAN_EP | FG_PLAN_ZERO) ||
             po.naive_pp) && !(ao && ao->no_alt)) {
            if ((rc = fg_plan_layouts(m, &j, out->usable, &any, &out->alt, err)))
                return rc;
            out->alt_planned = true;
        }
    } else if (out->fit.verdict == FG_FIT_BORDERLINE) {
        /* layouts that hold the conservative peak too */
        struct fg_job j = out->job;
        j.dp = 1;
        j.tp = j.pp = j.ep = 1;
        if (!fg_jobspec_given(spec, FG_JOBOPT_ZERO))
            j.zero = 0;
        po.fit.headroom = po.fit.conservative;
        if ((rc = fg_plan_layouts(m, &j, out->usable, &po, &out->safe, err)))
            return rc;
        out->safe_planned = true;
    }
    return 0;
}

/* ---- a trainer's generation engine ---- */

/*
 * The generation engine of a trainer that generates through vLLM: what the engine holds,
 * where, and how a server-mode job's GPUs split between generating and training.
 *
 * TRL (grpo_trainer.py, f2cd577) runs vLLM either colocated, one engine per training
 * process at vllm_gpu_memory_utilization of its GPU with max_num_seqs =
 * per_device_train_batch_size x vllm_tensor_parallel_size x steps_per_generation, or as a
 * server (`trl vllm-serve`, its own GPUs, --gpu-memory-utilization 0.9 by default) that
 * generates generation_batch_size = per_device_train_batch_size x training processes x
 * steps_per_generation completions per round.  The engine holds its own bf16 copy of the
 * policy's weights, its profile run's working set and the KV cache of those completions at
 * prompt + completion length: the serving estimate of the model (memory.c) sizes it.
 */

/* vLLM's own default share of a server GPU (vllm EngineArgs gpu_memory_utilization). */
#define GEN_SERVER_UTIL 0.9

/* The engine's bytes per GPU at tensor parallel tp for seqs completions, and its budget. */
static int engine_side(const struct fg_model *m, const struct fg_job *job, const struct fg_gpu *gpu,
                       uint32_t tp, uint32_t seqs, double util, struct fg_assessment *out,
                       struct fg_err *err)
{
    struct fg_job js;
    struct fg_estimate e;
    fg_job_defaults(&js, FG_MODE_SERVE);
    js.seq_len = job->seq_len;
    js.batch = seqs ? seqs : 1;
    js.tp = tp ? tp : 1;
    int rc = fg_memory_estimate_totals(m, &js, &e, err);
    if (rc)
        return rc;
    struct fg_fit_opts raw;
    fg_fit_opts_default(&raw);
    raw.context_bytes = 0;
    double card = (double)fg_fit_usable(gpu->memory_gb, gpu->memory_bytes, &raw);
    double budget = card * util - (double)FG_CUDA_CONTEXT_BYTES;
    out->gen_need = e.total_bytes;
    out->gen_budget = budget > 0 ? (uint64_t)budget : 0;
    out->gen_seqs = js.batch;
    out->gen_fits = out->gen_need <= out->gen_budget;
    return 0;
}

/* A server on n GPUs as vLLM runs it: TP over them (it must divide the heads). */
static bool server_tp_ok(const struct fg_model *m, uint32_t n)
{
    return n && (!m->heads || m->heads % n == 0) &&
           (!m->kv_heads || m->kv_heads % n == 0 || n % m->kv_heads == 0);
}

static bool training_fits(const struct fg_assessment *a)
{
    return a->fit.verdict == FG_FIT_FITS || a->fit.verdict == FG_FIT_BORDERLINE;
}

/* Server mode: the job's GPUs less the server's train; the server's count as asked, else
 * the fewest that hold the engine while the rest hold the training. */
static int server_split(const struct fg_model *m, const struct fg_jobspec *spec,
                        const struct fg_gpu *gpu, uint32_t gpus,
                        const struct fg_assess_opts *ao, const struct fg_rules *r,
                        struct fg_assessment *out, struct fg_err *err)
{
    const struct fg_job *j = &spec->job;
    uint32_t asked = j->gen_gpus;
    if (asked && asked >= gpus)
        return fg_err_set(err, FG_E_INVAL, "%sgen-gpus=%u leaves no GPU of the %u asked to "
                          "train on", spec->spelling, asked, gpus);
    if (gpus < 2)
        return fg_err_set(err, FG_E_INVAL, "%svllm-mode server needs GPUs of its own: ask for "
                          "2 or more (or use %svllm-mode colocate)", spec->spelling,
                          spec->spelling);
    uint32_t first = asked ? asked : 1, last = asked ? asked : gpus - 1;
    for (uint32_t n = first; n <= last; n++) {
        if (!asked && !server_tp_ok(m, n))
            continue;
        int rc = assess(m, spec, gpu, gpus - n, ao, r, out, err);
        if (rc)
            return rc;
        uint32_t seqs = (uint32_t)(j->batch * (gpus - n));
        if ((rc = engine_side(m, j, gpu, n, seqs, GEN_SERVER_UTIL, out, err)))
            return rc;
        out->gen_gpus = n;
        out->gen_found = !asked;
        out->layout.gen_gpus = n;
        out->need_min = (out->need_min ? out->need_min : 1) + n;
        if (asked || (out->gen_fits && training_fits(out)))
            return 0;
    }
    /* nothing holds both: the answer for one server GPU, which says what does not fit */
    if (!asked && last >= 1) {
        int rc = assess(m, spec, gpu, gpus - 1, ao, r, out, err);
        if (!rc)
            rc = engine_side(m, j, gpu, 1, (uint32_t)(j->batch * (gpus - 1)), GEN_SERVER_UTIL,
                             out, err);
        out->gen_gpus = out->layout.gen_gpus = 1;
        out->gen_found = true;
        return rc;
    }
    return 0;
}

static int assess_generation(const struct fg_model *m, const struct fg_jobspec *spec,
                          const struct fg_gpu *gpu, uint32_t gpus,
                          const struct fg_assess_opts *ao, const struct fg_rules *r,
                          struct fg_assessment *out, struct fg_err *err)
{
    const struct fg_job *j = &spec->job;
    bool gen = fg_trainer_row(j->trainer)->generates && j->vllm_mode != FG_VLLM_NONE;
    if (!gen || !gpu)
        return assess(m, spec, gpu, gpus, ao, r, out, err);
    if (j->vllm_mode == FG_VLLM_SERVER)
        return server_split(m, spec, gpu, gpus ? gpus : 1, ao, r, out, err);
    int rc = assess(m, spec, gpu, gpus, ao, r, out, err);
    if (!rc)
        rc = engine_side(m, j, gpu, 1, (uint32_t)j->batch, j->vllm_util, out, err);
    if (!rc) {
        /* the share is what the engine may hold; its context is the training process's */
        out->gen_budget = out->gen_share;
        out->gen_fits = out->gen_need <= out->gen_budget;
    }
    return rc;
}

int fg_assess(const struct fg_model *m, const struct fg_jobspec *spec, const struct fg_gpu *gpu,
              uint32_t gpus, const struct fg_rules *r, struct fg_assessment *out,
              struct fg_err *err)
{
    return fg_assess_on(m, spec, gpu, gpus, NULL, r, out, err);
}

int fg_assess_on(const struct fg_model *m, const struct fg_jobspec *spec,
                 const struct fg_gpu *gpu, uint32_t gpus, const struct fg_assess_opts *ao,
                 const struct fg_rules *r, struct fg_assessment *out, struct fg_err *err)
{
    int rc = assess_generation(m, spec, gpu, gpus, ao, r, out, err);
    if (rc || !out->calib)
        return rc;
    /* Every byte figure the decision quotes carries the site calibration: the job's own
     * layout (sized before it) and the planner's layouts (planned on the model's own
     * estimates with the factor in the margins). */
    double f = out->calib->factor;
    if (out->layout.tp <= 1 && out->layout.pp <= 1)
        out->layout.peak_bytes = out->layout.stage_bytes[0] = out->est.total_bytes;
    else
        scale_layout(&out->layout, f);
    if (out->planned)
        scale_plan(&out->plan, f);
    if (out->safe_planned)
        scale_plan(&out->safe, f);
    if (out->alt_planned)
        scale_plan(&out->alt, f);
    if (out->at_total_found)
        scale_layout(&out->at_total, f);
    return 0;
}
