/*
 * decide.c - assessment (engine calls) and the pure admission decision.
 * See decide.h.
 */
#include "decide.h"

#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

const char *fg_decide_kind_name(enum fg_decide_kind k)
{
    switch (k) {
    case FG_DECIDE_ALLOW: return "allow";
    case FG_DECIDE_WARN: return "warn";
    case FG_DECIDE_REJECT: return "reject";
    default: return "resize";
    }
}

uint32_t fg_request_total(const struct fg_request *q)
{
    if (q->via == FG_VIA_NONE)
        return 0;
    if (q->via == FG_VIA_GPUS)
        return q->count;
    uint64_t t = (uint64_t)q->count * (q->nodes ? q->nodes : 1);
    return t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
}

/* The gres type to suggest: the job's own spelling, else the card's first alias. */
static void type_of(const struct fg_request *q, char *buf, size_t cap)
{
    if (q->type[0]) {
        snprintf(buf, cap, "%s", q->type);
    } else if (q->gpu && q->gpu->aliases[0]) {
        size_t n = strcspn(q->gpu->aliases, ",");
        snprintf(buf, cap, "%.*s", (int)n, q->gpu->aliases);
    } else {
        snprintf(buf, cap, "TYPE");
    }
}

void fg_request_spell(const struct fg_request *q, uint32_t count, uint32_t nodes, char *buf,
                      size_t cap)
{
    char type[40], nn[32] = "";
    type_of(q, type, sizeof type);
    if (nodes > 1)
        snprintf(nn, sizeof nn, "--nodes=%u ", nodes);
    switch (q->via) {
    case FG_VIA_GRES:
        if (q->type[0])
            snprintf(buf, cap, "%s--gres=gpu:%s:%u", nn, q->type, count);
        else
            snprintf(buf, cap, "%s--gres=gpu:%u", nn, count);
        break;
    case FG_VIA_GPUS:
        if (q->type[0])
            snprintf(buf, cap, "%s--gpus=%s:%u", nn, q->type, count);
        else
            snprintf(buf, cap, "%s--gpus=%u", nn, count);
        break;
    case FG_VIA_GPUS_PER_NODE:
        if (q->type[0])
            snprintf(buf, cap, "%s--gpus-per-node=%s:%u", nn, q->type, count);
        else
            snprintf(buf, cap, "%s--gpus-per-node=%u", nn, count);
        break;
    default:
        snprintf(buf, cap, "%s--gres=gpu:%s:%u", nn, type, count);
        break;
    }
}

/* The framework's layout bits as the planner's (the same values). */
static void restrict_to(const struct fg_framework *fw, struct fg_plan_opts *po)
{
    po->restrict_layouts = true;
    po->layouts = fw->layouts & (FG_PLAN_TP | FG_PLAN_PP | FG_PLAN_EP | FG_PLAN_ZERO);
    po->naive_pp = fw->naive_pp;
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
                      uint32_t per_node, struct fg_assessment *out, struct fg_err *err)
{
    const struct fg_framework *fw = spec->fw;
    struct fg_job *j = &out->job;
    bool serve_engine = j->mode == FG_MODE_SERVE && fw->gpu_util > 0;
    uint32_t tp = spec->tp ? spec->tp : 1, pp = spec->pp ? spec->pp : 1;
    uint32_t ep = spec->ep ? spec->ep : 1, cp = spec->cp ? spec->cp : 1, dp;
    /* a serving engine splits the model over the GPUs it is given (vLLM / SGLang
     * --tensor-parallel-size), unless the job says how */
    if (serve_engine && !fg_jobspec_declares_layout(spec) && total > 1)
        tp = total;
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
    if (fw->naive_pp && pp > 1 && dp * cp > 1)
        return fg_err_set(err, FG_E_INVAL, "--framework %s splits layers with device_map in one "
                          "process, which runs no data parallel beside it (accelerate refuses a "
                          "device_map model in any distributed mode): use --dp 1, or a "
                          "framework with pipeline parallel (nemo, megatron, deepspeed)",
                          fw->name);
    if (tp > per_node)
        return fg_err_set(err, FG_E_INVAL, "TP=%u spans more than the %u GPUs of a node "
                          "(MaxGPUsPerNode): tensor parallel stays inside a node", tp, per_node);
    if (pp > out->layers)
        return fg_err_set(err, FG_E_INVAL, "PP=%u is more stages than the model's %u blocks", pp,
                          out->layers);
    if (ep > 1 && (!m->experts || m->experts % ep || dp % ep))
        return fg_err_set(err, FG_E_INVAL, "EP=%u must divide the model's %llu experts and the "
                          "%u data-parallel ranks", ep, (unsigned long long)m->experts, dp);
    j->tp = tp;
    j->pp = pp;
    j->ep = ep;
    j->cp = cp;
    j->dp = dp;
    /* the model-parallel group; a declared DP, or a serving engine's split, is the job's */
    out->need_min = spec->dp || serve_engine ? total : (uint32_t)split;
    if (!fg_jobspec_given(spec, FG_JOBOPT_ZERO) && dp * cp > 1 && (fw->layouts & FG_LAY_ZERO))
        j->zero = fw->dp_zero;
    if (j->zero && !(fw->layouts & FG_LAY_ZERO))
        return fg_err_set(err, FG_E_INVAL, "--framework %s runs no ZeRO / FSDP sharding; drop "
                          "--zero", fw->name);
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
        l->tp = l->pp = 1;
        l->ep = j->ep;
        l->dp = j->dp;
        l->zero = j->zero;
        l->cut[1] = out->layers;
        l->micro_batch = j->batch;
        l->grad_accum = 1;
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
 * A serving engine inside its budget: the weights and the profile run's working set (at
 * most max_num_batched_tokens at once: vLLM's scheduler default for chunked prefill,
 * vllm config SchedulerConfig) come first; what is left holds the KV cache, and the
 * concurrency is how many sequences of the job's length it holds
 * (gpu_worker.py determine_available_memory, kv_cache_utils.py check_enough_kv_cache_memory:
 * the engine refuses to start when one max_model_len sequence does not fit).
 */
#define FG_ENGINE_BATCHED_TOKENS 8192u
static void engine_fit(struct fg_assessment *a)
{
    const struct fg_estimate *e = &a->est;
    uint64_t b = e->batch ? e->batch : 1;
    uint64_t kv = (e->b.kv_cache + e->b.ssm_state) / b;
    uint64_t act = e->per_sample_bytes > kv ? e->per_sample_bytes - kv : 0;
    uint64_t seq = e->seq_len ? e->seq_len : 1;
    if (seq > FG_ENGINE_BATCHED_TOKENS)
        act = (uint64_t)((double)act * FG_ENGINE_BATCHED_TOKENS / (double)seq);
    a->engine_static = e->static_bytes + act;
    a->kv_seq_bytes = kv;
    uint64_t left = a->usable > a->engine_static ? a->usable - a->engine_static : 0;
    uint64_t n = kv ? left / kv : (left ? UINT32_MAX : 0);
    a->fit.max_batch = n;
    a->fit.need_bytes = a->engine_static + kv * b;
    if (n >= b)
        a->fit.verdict = FG_FIT_FITS;
    else
        a->fit.verdict = FG_FIT_SPLIT;
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

static int assess(const struct fg_model *m, const struct fg_jobspec *spec,
                  const struct fg_gpu *gpu, uint32_t gpus, const struct fg_rules *r,
                  struct fg_assessment *out, struct fg_err *err);

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

int fg_assess(const struct fg_model *m, const struct fg_jobspec *spec, const struct fg_gpu *gpu,
              uint32_t gpus, const struct fg_rules *r, struct fg_assessment *out,
              struct fg_err *err)
{
    int rc = assess(m, spec, gpu, gpus, r, out, err);
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
    return 0;
}

static int assess(const struct fg_model *m, const struct fg_jobspec *spec,
                  const struct fg_gpu *gpu, uint32_t gpus, const struct fg_rules *r,
                  struct fg_assessment *out, struct fg_err *err)
{
    memset(out, 0, sizeof *out);
    out->job = spec->job;
    out->fw = spec->fw ? spec->fw : fg_framework_default();
    snprintf(out->override_reason, sizeof out->override_reason, "%s", spec->override_reason);
    out->layers = fg_model_main_layers(m);
    out->headroom = r->headroom;
    uint32_t per_node = r->max_gpus_node ? r->max_gpus_node : 8;
    int rc = job_layout(m, spec, gpus ? gpus : 1, per_node, out, err);
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
    po.max_gpus = r->max_gpus;
    po.min_gpus = 1;
    po.gpus_per_node = r->max_gpus_node;
    out->have_card = true;
    out->usable = fg_fit_usable(gpu->memory_gb, gpu->memory_bytes, &po.fit);
    if (out->job.mode == FG_MODE_SERVE && spec->gpu_util > 0) {
        /* vLLM's budget is gpu_memory_utilization of the whole card, and the non-torch
         * memory (CUDA context, NCCL) comes off it (gpu_worker.py
         * determine_available_memory); inside it the engine sizes its KV pool to what is
         * left, so the estimate is held to the budget itself (headroom 1). */
        struct fg_fit_opts raw = po.fit;
        raw.context_bytes = 0;
        double card = (double)fg_fit_usable(gpu->memory_gb, gpu->memory_bytes, &raw);
        double budget = card * spec->gpu_util - (double)po.fit.context_bytes;
        out->usable = budget > 0 ? (uint64_t)budget : 0;
        out->gpu_util = spec->gpu_util;
        out->headroom = po.fit.headroom = 1.0;
        po.fit.conservative = r->conservative / r->headroom;
    }
    fg_fit_card(&out->est, out->usable, &po.fit, &out->fit);
    if (out->gpu_util > 0)
        engine_fit(out);
    if (out->calib) {
        /* the planner's estimates are the model's own: the site's factor goes into the
         * fit's margins instead (need = headroom x factor x estimate) */
        po.fit.headroom *= out->calib->factor;
        po.fit.conservative *= out->calib->factor;
    }
    if ((rc = zero_need(m, spec, out, &po, err)))
        return rc;
    restrict_to(out->fw, &po);
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
            po.global_batch = any.global_batch = j.batch;
            j.batch = 1;
            if ((rc = fg_plan_layouts(m, &j, out->usable, &po, &out->plan, err)))
                return rc;
        }
        out->planned = true;
        if (po.layouts != (FG_PLAN_TP | FG_PLAN_PP | FG_PLAN_EP | FG_PLAN_ZERO) ||
            po.naive_pp) {
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

/* ---- messages --------------------------------------------------------------- */

static const char *gb(uint64_t bytes, char *buf, size_t cap)
{
    snprintf(buf, cap, "%.1f GB", (double)bytes / 1e9);
    return buf;
}

static const char *mode_words(enum fg_mode m)
{
    switch (m) {
    case FG_MODE_FULL: return "full fine-tune";
    case FG_MODE_LORA: return "LoRA";
    case FG_MODE_QLORA: return "QLoRA";
    default: return "serving";
    }
}

static void line(struct fg_decision *d, int i, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void line(struct fg_decision *d, int i, const char *fmt, ...)
{
    va_list ap;
    int w = snprintf(d->lines[i], FG_DECIDE_LINE, "fitgate: ");
    va_start(ap, fmt);
    vsnprintf(d->lines[i] + w, FG_DECIDE_LINE - (size_t)w, fmt, ap);
    va_end(ap);
}

/* "PP=4 over layers 0-13|14-27|..., 14.2 GB per GPU" */
static void layout_desc(const struct fg_layout *l, char *buf, size_t cap)
{
    size_t off = 0;
    char b[32];
#define ADD(...)                                                                              \
    do {                                                                                      \
        if (off < cap) {                                                                      \
            int w_ = snprintf(buf + off, cap - off, __VA_ARGS__);                             \
            if (w_ > 0)                                                                       \
                off += (size_t)w_;                                                            \
        }                                                                                     \
    } while (0)
    buf[0] = '\0';
    if (l->tp > 1)
        ADD("TP=%u ", l->tp);
    if (l->pp > 1) {
        ADD("PP=%u over layers ", l->pp);
        for (uint32_t s = 0; s < l->pp; s++)
            ADD("%s%u-%u", s ? "|" : "", l->cut[s], l->cut[s + 1] ? l->cut[s + 1] - 1 : 0);
        ADD(" ");
    }
    if (l->ep > 1)
        ADD("EP=%u ", l->ep);
    if (l->dp > 1)
        ADD("DP=%u ", l->dp);
    if (l->zero && l->dp > 1)
        ADD("ZeRO-%u ", l->zero);
    if (!off)
        ADD("one GPU ");
    if (off)
        off--; /* drop the trailing blank */
    if (off < cap)
        buf[off] = '\0';
    ADD(", %s per GPU", gb(l->peak_bytes, b, sizeof b));
#undef ADD
}

static void card_label(const struct fg_request *q, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", q->gpu ? q->gpu->label : q->type[0] ? q->type : "GPU");
}

/* The job's own layout at micro-batch mb (the global batch kept by accumulation). */
static void one_card(const struct fg_assessment *a, uint32_t gpus, uint64_t mb,
                     struct fg_layout *l)
{
    *l = a->layout;
    if (l->tp == 1 && l->pp == 1) {
        /* data parallel: every GPU asked for is a rank */
        l->gpus = gpus ? gpus : 1;
        l->dp = l->gpus / (a->job.cp > 1 ? a->job.cp : 1);
        if (!l->dp)
            l->dp = 1;
    }
    l->micro_batch = mb;
    l->grad_accum = mb ? (a->job.batch + mb - 1) / mb : 1;
    if (!l->grad_accum)
        l->grad_accum = 1;
    l->peak_bytes = fg_estimate_at(&a->est, mb);
    if (l->pp <= 1)
        l->stage_bytes[0] = l->peak_bytes;
}

/* The plan's layout for exactly `gpus`, else the smallest one replicated by data parallelism. */
static void pick_layout(const struct fg_plan *p, const struct fg_assessment *a, uint32_t gpus,
                        struct fg_layout *l)
{
    for (size_t i = 0; i < p->n; i++) {
        if (p->options[i].gpus == gpus) {
            *l = p->options[i];
            return;
        }
    }
    *l = p->options[0];
    if (gpus > l->gpus && gpus % l->gpus == 0) {
        uint32_t k = gpus / l->gpus;
        l->dp *= k;
        l->gpus = gpus;
        uint64_t per_step = l->micro_batch * l->dp;
        l->grad_accum = per_step ? (a->job.batch + per_step - 1) / per_step : 1;
        if (!l->grad_accum)
            l->grad_accum = 1;
    }
}

/* Arrange T GPUs on nodes within the per-node limits, keeping the job's node count when it
 * divides; returns the GPUs of the arrangement (>= T when MinGPUsPerNode raises it). */
static uint32_t arrange(const struct fg_request *q, const struct fg_rules *r, uint32_t t,
                        uint32_t *count, uint32_t *nodes)
{
    uint32_t n = q->nodes ? q->nodes : 1, per;
    uint32_t pn_max = r->max_gpus_node ? r->max_gpus_node : 8;
    if (t % n == 0 && t / n <= pn_max && t / n >= 1) {
        per = t / n;
    } else {
        n = (t + pn_max - 1) / pn_max;
        per = (t + n - 1) / n;
    }
    if (per < r->min_gpus_node)
        per = r->min_gpus_node;
    *nodes = n;
    *count = q->via == FG_VIA_GPUS ? per * n : per;
    return per * n;
}

static void numbers_one(struct fg_decision *d, const struct fg_assessment *a, const char *card)
{
    char b1[32], b2[32], b3[32];
    line(d, 1, "needs %s per GPU (estimate %s x %.2f headroom) at micro-batch %llu x %llu "
               "tokens; one %s has %s usable",
         gb(a->fit.need_bytes, b1, sizeof b1), gb(a->est.total_bytes, b2, sizeof b2),
         a->headroom, (unsigned long long)a->est.batch, (unsigned long long)a->est.seq_len,
         card, gb(a->usable, b3, sizeof b3));
}

static void decide_fit(const struct fg_request *q, const struct fg_assessment *a,
                       const struct fg_rules *r, struct fg_decision *d)
{
    memset(d, 0, sizeof *d);
    d->kind = FG_DECIDE_ALLOW;
    d->count = q->count;
    d->nodes = q->nodes ? q->nodes : 1;
    if (r->action == FG_ACTION_OFF)
        return;

    const uint32_t total = fg_request_total(q);
    const enum fg_decide_kind fail = r->action == FG_ACTION_WARN ? FG_DECIDE_WARN
                                                                  : FG_DECIDE_REJECT;
    const char *failed = fail == FG_DECIDE_WARN ? "warning" : "rejected";
    const char *goes_on = fail == FG_DECIDE_WARN ? "; the job continues as asked (Action=warn)"
                                                 : "";
    char what[256], asked[128], card[48], b1[32], b2[32], b3[32], sugg[128], desc[256];
    snprintf(what, sizeof what, "%s of %s", mode_words(a->job.mode), q->model);
    fg_request_spell(q, q->count, d->nodes, asked, sizeof asked);
    card_label(q, card, sizeof card);

    /* 1. the mode */
    if (!(r->modes & (1u << a->job.mode))) {
        char modes[64];
        fg_modes_str(r->modes, modes, sizeof modes);
        d->kind = fail;
        line(d, 0, "%s: --ft-mode=%s is not allowed %s%s%s", failed, fg_mode_name(a->job.mode),
             q->partition[0] ? "in partition " : "on this cluster", q->partition, goes_on);
        line(d, 1, "the site allows AllowedModes=%s here", modes);
        line(d, 2, "use --ft-mode=%.*s%s", (int)strcspn(modes, ","), modes,
             q->partition[0] ? ", or another partition" : "");
        return;
    }

    /* 2. no GPU, or a GPU fitgate cannot size */
    if (total == 0 || !a->have_card) {
        d->kind = fail;
        if (total == 0)
            line(d, 0, "%s: %s asks for no GPU%s", failed, what, goes_on);
        else
            line(d, 0, "%s: %s asks for %s, a GPU whose type fitgate cannot size%s", failed,
                 what, asked, goes_on);
        line(d, 1, "it needs %s per GPU (estimate %s x %.2f headroom) at micro-batch %llu x "
                   "%llu tokens",
             gb((uint64_t)((double)a->est.total_bytes * a->headroom), b1, sizeof b1),
             gb(a->est.total_bytes, b2, sizeof b2), a->headroom,
             (unsigned long long)a->est.batch, (unsigned long long)a->est.seq_len);
        line(d, 2, "name the card: --gres=gpu:TYPE:N (or --ft-gpu=TYPE --ft-gpus=N); "
                   "'fitgate plan %s' lists the cards that fit", q->model);
        return;
    }

    /* 3. how the job can fit */
    const struct fg_fit *f = &a->fit;
    enum { FIT_ONE, FIT_MICRO, FIT_PLAN, FIT_NONE } how;
    uint32_t need = 1;
    uint64_t mb = a->job.batch;
    if (f->verdict == FG_FIT_FITS || f->verdict == FG_FIT_BORDERLINE) {
        how = FIT_ONE;
        need = a->need_min ? a->need_min : 1;
    } else if (f->max_batch >= 1) {
        how = FIT_MICRO;
        mb = f->max_batch;
    } else if (a->planned && a->plan.status == FG_PLAN_FOUND && a->plan.n) {
        how = FIT_PLAN;
        need = a->plan.options[0].gpus;
    } else {
        how = FIT_NONE;
    }

    /* 4. the job fits as asked */
    if (how == FIT_ONE || (how == FIT_PLAN && need <= total)) {
        d->fits = true;
        d->has_layout = true;
        if (how == FIT_ONE)
            one_card(a, total, a->job.batch, &d->layout);
        else
            pick_layout(&a->plan, a, total, &d->layout);
        bool borderline = how == FIT_ONE
                              ? f->verdict == FG_FIT_BORDERLINE
                              : (double)d->layout.peak_bytes * r->conservative >
                                    (double)a->usable;
        if (borderline && r->borderline != FG_BORDER_ALLOW) {
            enum fg_borderline eff = r->borderline;
            if (eff == FG_BORDER_REJECT && r->action == FG_ACTION_WARN)
                eff = FG_BORDER_WARN;
            uint64_t peak = d->layout.peak_bytes;
            char b4[32];
            line(d, 1, "estimate %s per GPU at micro-batch %llu x %llu tokens: x%.2f headroom "
                       "= %s fits the %s usable on one %s, x%.2f conservative peak = %s does "
                       "not",
                 gb(peak, b1, sizeof b1), (unsigned long long)d->layout.micro_batch,
                 (unsigned long long)a->est.seq_len, a->headroom,
                 gb((uint64_t)((double)peak * a->headroom), b2, sizeof b2),
                 gb(a->usable, b3, sizeof b3), card, r->conservative,
                 gb((uint64_t)((double)peak * r->conservative), b4, sizeof b4));
            bool safe = a->safe_planned && a->safe.status == FG_PLAN_FOUND && a->safe.n;
            uint32_t sc = 0, sn = 0, st = 0;
            if (safe) {
                st = arrange(q, r, a->safe.options[0].gpus, &sc, &sn);
                fg_request_spell(q, sc, sn, sugg, sizeof sugg);
                layout_desc(&a->safe.options[0], desc, sizeof desc);
            }
            if (eff == FG_BORDER_REJECT && r->action == FG_ACTION_RESIZE && safe &&
                st <= r->max_gpus && st > total) {
                d->kind = FG_DECIDE_RESIZE;
                d->resize_gpus = true;
                d->count = sc;
                d->nodes = sn;
                pick_layout(&a->safe, a, st, &d->layout);
                line(d, 0, "resized: %s on %s is borderline (Borderline=reject); the job now "
                           "asks for %s", what, asked, sugg);
                layout_desc(&d->layout, desc, sizeof desc);
                line(d, 2, "layout %s; exported to the job as FITGATE_*", desc);
                return;
            }
            if (eff == FG_BORDER_REJECT) {
                d->kind = FG_DECIDE_REJECT;
                d->has_layout = false;
                line(d, 0, "rejected: %s on %s is borderline (Borderline=reject)", what, asked);
                if (safe)
                    line(d, 2, "ask for %s (%s) to stay under the conservative peak", sugg,
                         desc);
                else
                    line(d, 2, "ask for a larger card, or lower --ft-seq-len / use "
                               "--ft-grad-ckpt");
                return;
            }
            d->kind = FG_DECIDE_WARN;
            line(d, 0, "warning: %s on %s is borderline; the job continues as asked", what,
                 asked);
            if (safe)
                line(d, 2, "measure one step first, or ask for %s (%s) to stay under the "
                           "conservative peak", sugg, desc);
            else
                line(d, 2, "measure one step first (torch.cuda.max_memory_reserved)");
            return;
        }
        /* over-request */
        uint32_t floor_ = need < r->min_gpus ? r->min_gpus : need, c, n;
        uint32_t t = arrange(q, r, floor_, &c, &n);
        if (total > t) {
            fg_request_spell(q, c, n, sugg, sizeof sugg);
            if (how == FIT_ONE)
                numbers_one(d, a, card);
            else {
                layout_desc(&a->plan.options[0], desc, sizeof desc);
                line(d, 1, "one %s has %s usable; %u GPU%s hold%s it: %s", card,
                     gb(a->usable, b1, sizeof b1), need, need > 1 ? "s" : "",
                     need > 1 ? "" : "s", desc);
            }
            if (r->shrink) {
                d->kind = FG_DECIDE_RESIZE;
                d->resize_gpus = true;
                d->count = c;
                d->nodes = n;
                if (how == FIT_ONE)
                    one_card(a, t, a->job.batch, &d->layout);
                else
                    pick_layout(&a->plan, a, t, &d->layout);
                line(d, 0, "resized: %s is more than %s needs; the job now asks for %s", asked,
                     what, sugg);
                line(d, 2, "this partition shrinks over-requests (ShrinkOverRequest=yes)");
            } else {
                d->kind = FG_DECIDE_WARN;
                line(d, 0, "warning: %s is more than %s needs; the job continues as asked",
                     asked, what);
                line(d, 2, "%s is enough unless you want more data-parallel ranks", sugg);
            }
        }
        return;
    }

    /* 5. the job does not fit as asked */
    if (how == FIT_MICRO) {
        struct fg_layout l;
        one_card(a, total, mb, &l);
        numbers_one(d, a, card);
        if (r->action == FG_ACTION_RESIZE) {
            d->kind = FG_DECIDE_RESIZE;
            d->resize_batch = true;
            d->has_layout = true;
            d->layout = l;
            line(d, 0, "resized: micro-batch %llu of %s does not fit one %s; the job runs "
                       "micro-batch %llu x %llu accumulation steps",
                 (unsigned long long)a->job.batch, what, card, (unsigned long long)mb,
                 (unsigned long long)l.grad_accum);
            line(d, 2, "read FITGATE_MICRO_BATCH=%llu and FITGATE_GRAD_ACCUM=%llu in the job "
                       "(the global batch is kept)",
                 (unsigned long long)mb, (unsigned long long)l.grad_accum);
            return;
        }
        d->kind = fail;
        if (fail == FG_DECIDE_WARN) {
            d->has_layout = true;
            d->layout = l;
        }
        line(d, 0, "%s: micro-batch %llu of %s does not fit one %s (%s)%s", failed,
             (unsigned long long)a->job.batch, what, card, asked, goes_on);
        line(d, 2, "use --ft-batch=%llu with %llu gradient-accumulation steps (same global "
                   "batch); micro-batch %llu fits",
             (unsigned long long)mb, (unsigned long long)l.grad_accum, (unsigned long long)mb);
        return;
    }
    if (how == FIT_PLAN) {
        uint32_t floor_ = need < r->min_gpus ? r->min_gpus : need, c, n;
        uint32_t t = arrange(q, r, floor_, &c, &n);
        struct fg_layout l;
        pick_layout(&a->plan, a, t, &l);
        fg_request_spell(q, c, n, sugg, sizeof sugg);
        layout_desc(&l, desc, sizeof desc);
        line(d, 1, "needs %s per GPU (estimate %s x %.2f headroom) at micro-batch %llu x %llu "
                   "tokens; one %s has %s usable, so it takes %u",
             gb(f->need_bytes, b1, sizeof b1), gb(a->est.total_bytes, b2, sizeof b2),
             a->headroom, (unsigned long long)a->est.batch, (unsigned long long)a->est.seq_len,
             card, gb(a->usable, b3, sizeof b3), need);
        if (r->action == FG_ACTION_RESIZE && t <= r->max_gpus) {
            d->kind = FG_DECIDE_RESIZE;
            d->resize_gpus = true;
            d->has_layout = true;
            d->layout = l;
            d->count = c;
            d->nodes = n;
            line(d, 0, "resized: %s does not fit %s; the job now asks for %s", what, asked,
                 sugg);
            line(d, 2, "layout %s; exported to the job as FITGATE_*", desc);
            return;
        }
        d->kind = r->action == FG_ACTION_RESIZE ? FG_DECIDE_REJECT : fail;
        if (d->kind == FG_DECIDE_REJECT) {
            failed = "rejected";
            goes_on = "";
        }
        if (t > r->max_gpus) {
            line(d, 0, "%s: %s does not fit %s%s", failed, what, asked, goes_on);
            line(d, 2, "it needs %s (%s), above this partition's MaxGPUs=%u: use a larger "
                       "card or QLoRA",
                 sugg, desc, r->max_gpus);
            return;
        }
        line(d, 0, "%s: %s does not fit %s%s", failed, what, asked, goes_on);
        line(d, 2, "ask for %s (%s)", sugg, desc);
        return;
    }
    /* FIT_NONE */
    d->kind = r->action == FG_ACTION_WARN ? FG_DECIDE_WARN : FG_DECIDE_REJECT;
    failed = d->kind == FG_DECIDE_WARN ? "warning" : "rejected";
    goes_on = d->kind == FG_DECIDE_WARN ? "; the job continues as asked (Action=warn)" : "";
    line(d, 0, "%s: %s does not fit %s%s", failed, what, asked, goes_on);
    line(d, 1, "needs %s per GPU (estimate %s x %.2f headroom) at micro-batch %llu x %llu "
               "tokens; one %s has %s usable",
         gb(f->need_bytes, b1, sizeof b1), gb(a->est.total_bytes, b2, sizeof b2), a->headroom,
         (unsigned long long)a->est.batch, (unsigned long long)a->est.seq_len, card,
         gb(a->usable, b3, sizeof b3));
    if (a->planned && a->plan.why[0])
        line(d, 2, "%s; use a larger card, QLoRA, or --ft-grad-ckpt", a->plan.why);
    else
        line(d, 2, "no layout within MaxGPUs=%u holds it; use a larger card, QLoRA, or "
                   "--ft-grad-ckpt", r->max_gpus);
}

/* Layouts of other frameworks that hold the job, as the fourth line. */
static void suggest(const struct fg_assessment *a, struct fg_decision *d)
{
    if (!a->alt_planned || a->alt.status != FG_PLAN_FOUND || !a->alt.n)
        return;
    char buf[FG_DECIDE_LINE], desc[256], who[160];
    size_t off = 0;
    int shown = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < a->alt.n && shown < 2; i++) {
        const struct fg_layout *l = &a->alt.options[i];
        unsigned need = fg_framework_needs(l->tp, l->pp, l->ep, 1, l->zero);
        if (!(need & ~a->fw->layouts))
            continue; /* the job's framework runs it: it is the resize, not a suggestion */
        fg_framework_who_runs(need, who, sizeof who);
        layout_desc(l, desc, sizeof desc);
        int w = snprintf(buf + off, sizeof buf - off, "%s%u GPUs %s (%s)", shown ? "; " : "",
                         l->gpus, desc, who[0] ? who : "no framework fitgate knows");
        if (w < 0 || (size_t)w >= sizeof buf - off)
            break;
        off += (size_t)w;
        shown++;
    }
    if (shown)
        line(d, 3, "suggestion, on another framework: %s", buf);
}

/* A serving engine's answer in its own terms: how many max-length sequences its KV cache
 * holds inside its share of the card. */
static void serve_numbers(const struct fg_assessment *a, const struct fg_request *q,
                          struct fg_decision *d)
{
    char b1[32], b2[32], b3[32], card[48];
    card_label(q, card, sizeof card);
    uint64_t n = a->fit.max_batch;
    line(d, 1, "%s takes %.2f x %s = %s per GPU; weights and working set %s, KV cache %s "
               "per sequence of %llu tokens: %llu such sequence%s at once",
         a->fw->label, a->gpu_util, card, gb(a->usable, b1, sizeof b1),
         gb(a->engine_static, b2, sizeof b2), gb(a->kv_seq_bytes, b3, sizeof b3),
         (unsigned long long)a->est.seq_len, (unsigned long long)n, n == 1 ? "" : "s");
}

/* Every answer that used the site calibration says so: on its verdict line (which the audit
 * trail keeps), or on a line of its own when the job was let through silently. */
static void say_calibration(const struct fg_assessment *a, struct fg_decision *d)
{
    char c[120], b[32];
    fg_calib_describe(a->calib, c, sizeof c);
    if (!d->lines[0][0])
        line(d, 0, "fits: %s per GPU with the %s", gb(a->est.total_bytes, b, sizeof b), c);
    else if (strlen(d->lines[0]) + strlen(c) + 4 < FG_DECIDE_LINE)
        strcat(strcat(strcat(d->lines[0], " ("), c), ")");
    else if (!d->lines[3][0])
        line(d, 3, "%s", c);
}

void fg_decide(const struct fg_request *q, const struct fg_assessment *a,
               const struct fg_rules *r, struct fg_decision *d)
{
    decide_fit(q, a, r, d);
    if (d->kind != FG_DECIDE_ALLOW && !d->fits && a->have_card)
        suggest(a, d);
    if (a->gpu_util > 0 && a->have_card && r->action != FG_ACTION_OFF &&
        (r->modes & (1u << a->job.mode)) && (d->fits || d->kind == FG_DECIDE_REJECT))
        serve_numbers(a, q, d);
    if (q->note[0] && d->lines[0][0]) {
        if (!d->lines[3][0])
            line(d, 3, "%s", q->note);
        else if (strlen(d->lines[3]) + strlen(q->note) + 3 < FG_DECIDE_LINE)
            strcat(strcat(d->lines[3], "; "), q->note);
    }
    if (a->calib && r->action != FG_ACTION_OFF)
        say_calibration(a, d);
    if (d->kind != FG_DECIDE_REJECT || !a->override_reason[0])
        return;
    if (!r->allow_override) {
        line(d, 3, "--ft-override is not accepted %s%s (AllowOverride=no)",
             q->partition[0] ? "in partition " : "on this cluster", q->partition);
        return;
    }
    /* the user takes the risk, with a reason the site logs */
    char was[FG_DECIDE_LINE];
    snprintf(was, sizeof was, "%s", d->lines[0] + strlen("fitgate: "));
    d->kind = FG_DECIDE_ALLOW;
    d->overridden = true;
    d->has_layout = false;
    d->resize_gpus = d->resize_batch = false;
    d->count = q->count;
    d->nodes = q->nodes ? q->nodes : 1;
    line(d, 0, "override: the job goes on as asked (--ft-override, AllowOverride=yes); it "
               "would have been %s", was);
    line(d, 3, "override reason: %.300s", a->override_reason);
}

void fg_decide_error(const char *what, const char *detail, const char *todo,
                     enum fg_on_error on_error, struct fg_decision *d)
{
    memset(d, 0, sizeof *d);
    d->kind = on_error == FG_ONERR_REJECT ? FG_DECIDE_REJECT : FG_DECIDE_WARN;
    line(d, 0, "%s: cannot check %s: %s",
         d->kind == FG_DECIDE_REJECT ? "rejected" : "warning", what ? what : "this job",
         detail ? detail : "unknown error");
    if (d->kind == FG_DECIDE_REJECT)
        line(d, 1, "the site refuses jobs it cannot check (OnError=reject)");
    else
        line(d, 1, "the job goes on unchecked (OnError=allow)");
    line(d, 2, "%s", todo ? todo
                          : "check --ft-model (a path or org/name the site can read); "
                            "'fitgate check' gives the same answer outside Slurm");
}

/*
 * OnUnknown: a model whose count the generic reader is unsure of (a key it cannot size) is
 * not admitted on that count.  reject refuses the job, warn lets it go on unchecked; allow
 * leaves the job to fg_decide on the unsure count, as for any other model.
 */
bool fg_decide_unknown(const struct fg_request *q, const struct fg_model *m,
                       const struct fg_rules *r, struct fg_decision *d)
{
    if (m->certainty != FG_CERT_UNSURE || r->on_unknown == FG_ONUNK_ALLOW)
        return false;
    memset(d, 0, sizeof *d);
    d->kind = r->on_unknown == FG_ONUNK_REJECT ? FG_DECIDE_REJECT : FG_DECIDE_WARN;
    d->count = q->count;
    d->nodes = q->nodes;
    char n[32];
    snprintf(n, sizeof n, "%.2f B", (double)m->params_total / 1e9);
    if (!strcmp(m->unsure_key, "checkpoint"))
        line(d, 0, "%s: cannot size %s: its checkpoint stores %llu parameters, fitgate's graph "
                   "of model_type '%s' counts %llu",
             d->kind == FG_DECIDE_REJECT ? "rejected" : "warning",
             q->model[0] ? q->model : m->id, (unsigned long long)m->params_checkpoint,
             m->model_type[0] ? m->model_type : "(none)", (unsigned long long)m->params_total);
    else
        line(d, 0, "%s: cannot size %s: model_type '%s' is not known and key '%s' is structure "
                   "the generic reader does not understand",
             d->kind == FG_DECIDE_REJECT ? "rejected" : "warning",
             q->model[0] ? q->model : m->id, m->model_type[0] ? m->model_type : "(none)",
             m->unsure_key[0] ? m->unsure_key : "?");
    if (d->kind == FG_DECIDE_REJECT)
        line(d, 1, "its count (%s parameters) could be far off; the site refuses such jobs "
                   "(OnUnknown=reject)", n);
    else
        line(d, 1, "its count (%s parameters) could be far off; the job goes on unchecked "
                   "(OnUnknown=warn)", n);
    line(d, 2, "pass --ft-model a local config directory of a family fitgate knows "
               "('fitgate check' says how it reads one), or ask the site admin");
    return true;
}
