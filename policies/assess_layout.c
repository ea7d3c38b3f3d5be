/*
 * assess_layout.c - a job's layout on the GPUs it asks for, as its framework runs it (the
 * shape the options or the job's files declare, else the one the framework picks), checked
 * against what the framework can run, and the estimate on that layout (assess_int.h).
 */
#include "assess_int.h"
#include "stack/trainer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The framework's layout bits as the planner's (the same values). */
void fg__assess_restrict_to(const struct fg_framework *fw, struct fg_plan_opts *po)
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
int fg__assess_layout_at_total(const struct fg_model *m, const struct fg_job *j, uint32_t gpus,
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
void fg__assess_keep_files_layout(const struct fg_job *j, struct fg_plan_opts *po)
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

/* Whether the framework runs the shape rs (named shape in messages) of the model m under
 * out's job: FG_E_INVAL naming what refuses it (a layout it has no code for, a layer split
 * past a node or beside data parallel, TP across nodes, more stages than blocks, EP or CP
 * that do not divide), else 0. */
static int shape_refused(const struct fg_model *m, const struct fg_framework *fw,
                         const struct fg_assessment *out, const struct fg_run_shape *rs,
                         const char *shape, struct fg_err *err)
{
    unsigned need = fg_framework_needs(rs->tp, rs->pp, rs->ep, rs->cp, 0);
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
    if (fw->naive_pp && rs->pp > 1 && (rs->pp * rs->tp > rs->per_node || rs->nodes > 1))
        return fg_err_set(err, FG_E_INVAL, "--framework %s splits layers with device_map in one "
                          "process on one node: PP=%u is more than the %u GPUs of a node%s; use "
                          "a framework with pipeline parallel across nodes (nemo, megatron, "
                          "deepspeed), or ZeRO-3 / FSDP", fw->name, rs->pp, rs->per_node,
                          rs->nodes > 1 ? " (the job spans several)" : "");
    if (fw->naive_pp && rs->pp > 1 && rs->dp * rs->cp > 1)
        return fg_err_set(err, FG_E_INVAL, "--framework %s splits layers with device_map in one "
                          "process, which runs no data parallel beside it (accelerate refuses a "
                          "device_map model in any distributed mode): use --dp 1, or a "
                          "framework with pipeline parallel (nemo, megatron, deepspeed)",
                          fw->name);
    if (rs->tp > rs->per_node || (rs->nodes > 1 && rs->per_node % rs->tp))
        return fg_err_set(err, FG_E_INVAL, "TP=%u spans more than the %u GPUs of a node: "
                          "tensor parallel stays inside a node", rs->tp, rs->per_node);
    if (rs->pp > out->layers)
        return fg_err_set(err, FG_E_INVAL, "PP=%u is more stages than the model's %u blocks",
                          rs->pp, out->layers);
    /* Megatron carves EP out of DP (parallel_state: expert-data-parallel = DP / EP); a
     * serving engine spreads the experts over all its GPUs (vLLM enable_expert_parallel:
     * EP = TP x DP) */
    uint64_t ep_over = rs->serve ? (uint64_t)rs->tp * rs->dp : rs->dp;
    if (rs->ep > 1 && (!m->experts || m->experts % rs->ep || ep_over % rs->ep))
        return fg_err_set(err, FG_E_INVAL, "EP=%u must divide the model's %llu experts and the "
                          "%llu ranks it spreads them over", rs->ep,
                          (unsigned long long)m->experts, (unsigned long long)ep_over);
    if (rs->cp > 1 && rs->seq_len && rs->seq_len % (2ull * rs->cp))
        return fg_err_set(err, FG_E_INVAL, "CP=%u needs a sequence length divisible by 2 x CP = "
                          "%u (Megatron splits each sequence into 2 x CP chunks), not %llu",
                          rs->cp, 2 * rs->cp, (unsigned long long)rs->seq_len);
    return 0;
}

/*
 * The job's own layout: declared dimensions, the rest from the GPU count; checked against
 * the framework, the count and the model.  Fills out->job's tp, pp, ep, dp, zero.
 */
int fg__assess_job_layout(const struct fg_model *m, const struct fg_jobspec *spec, uint32_t total,
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
    struct fg_run_shape rs = {.tp = tp, .pp = pp, .ep = ep, .cp = cp, .dp = dp,
                              .per_node = per_node, .nodes = nodes, .experts = m->experts,
                              .seq_len = j->seq_len, .serve = serve_engine};
    int rc = shape_refused(m, fw, out, &rs, shape, err);
    if (rc)
        return rc;
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
    rs.zero = j->zero;
    char why[240];
    if (!fg_framework_runs(fw, &rs, why, sizeof why))
        return fg_err_set(err, FG_E_INVAL, "the layout %s: %s", shape, why);
    return 0;
}

/* The job of pipeline rank s of layout l: a framework that splits its layers by count
 * (framework.h pp_even: torchtitan) runs torch pipelining's schedule over its own split
 * (plan.h fg_plan_pp_rank: the rank's chunks, and the chunk forwards its schedule keeps);
 * else the planner's cut with the micro-batches 1F1B keeps in flight there (pp - s), one
 * for a naive layer split or serving. */
static void rank_job(const struct fg_model *m, const struct fg_framework *fw,
                     const struct fg_job *j, const struct fg_layout *l, uint32_t s,
                     struct fg_job *st)
{
    *st = *j;
    if (fw->pp_even && fg_plan_pp_rank(j, fg_model_main_layers(m), l->pp, s, &st->layer_first,
                                       &st->layer_last, &st->stage_embed, &st->stage_head,
                                       &st->pp_chunks, &st->inflight))
        return;
    st->layer_first = l->cut[s];
    st->layer_last = l->cut[s + 1];
    st->stage_embed = s == 0;
    st->stage_head = s == l->pp - 1;
    st->inflight = fw->naive_pp || j->mode == FG_MODE_SERVE ? 1 : l->pp - s;
}

/* The ranks of a framework that splits its layers by count (rank_job), each estimated;
 * the planner's cut kept when the count split does not apply.  l->cut then counts each
 * rank's blocks (a looped schedule's chunks are not one run). */
static int even_stages(const struct fg_model *m, const struct fg_framework *fw,
                       const struct fg_job *j, struct fg_layout *l, struct fg_err *err)
{
    struct fg_job st;
    if (!fg_plan_pp_rank(j, fg_model_main_layers(m), l->pp, 0, &st.layer_first, &st.layer_last,
                         &st.stage_embed, &st.stage_head, &st.pp_chunks, &st.inflight))
        return 0;
    struct fg_layout even = *l;
    even.peak_bytes = 0;
    even.cut[0] = 0;
    for (uint32_t s = 0; s < l->pp; s++) {
        struct fg_estimate e;
        rank_job(m, fw, j, l, s, &st);
        int rc = fg_memory_estimate_totals(m, &st, &e, err);
        if (rc)
            return rc;
        even.cut[s + 1] = even.cut[s] + (st.layer_last - st.layer_first);
        even.stage_bytes[s] = e.total_bytes;
        if (e.total_bytes > even.peak_bytes)
            even.peak_bytes = e.total_bytes;
    }
    *l = even;
    return 0;
}

/* Per-GPU estimate of the job's layout: the whole model on each rank (TP = PP = 1), else
 * the planner's best cut of exactly that shape and the estimate of its largest stage. */
int fg__assess_layout_estimate(const struct fg_model *m, const struct fg_rules *r,
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
    if (out->fw->pp_even && l->pp > 1 && (rc = even_stages(m, out->fw, j, l, err)))
        return rc;
    /* the breakdown of the largest stage */
    uint32_t worst = 0;
    for (uint32_t s = 1; s < l->pp; s++)
        if (l->stage_bytes[s] > l->stage_bytes[worst])
            worst = s;
    struct fg_job st = *j;
    if (l->pp > 1)
        rank_job(m, out->fw, j, l, worst, &st);
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
