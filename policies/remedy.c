/*
 * remedy.c - remedies proposed, applied and re-checked through the gate (remedy.h).  The
 * words for them are the decision module's (decide.c fg_decide_remedies).
 *
 * What a framework can switch on is its row's (framework.h fg_framework_switch_list, the
 * table and its sources in framework.c); which layouts it runs, its row and
 * fg_framework_runs.  This file turns a row's switches into options of the job, tries them,
 * and completes each one that passes into the request a user pastes.
 */
#include "remedy.h"
#include "remedy_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assess.h"
#include "stack/framework.h"
#include "stack/trainer.h"

/* ---- edits ------------------------------------------------------------------------- */

static bool has_edit(const struct fg_remedy *x, unsigned opt)
{
    for (size_t i = 0; i < x->n_edits; i++)
        if (x->edits[i].opt == opt)
            return true;
    return false;
}

int fg_remedy_apply(const struct fg_remedy *x, const struct fg_jobspec *spec,
                    const struct fg_request *q, struct fg_jobspec *out,
                    struct fg_request *qout, struct fg_err *err)
{
    *out = *spec;
    *qout = *q;
    /* the options as the job gave them, then the remedy's after them (jobspec.h) */
    fg_jobspec_unfinish(out);
    /* judged on its own: an override the job carries is not part of a remedy */
    out->override_reason[0] = '\0';
    out->given &= ~(1ull << FG_JOBOPT_OVERRIDE);
    for (size_t i = 0; i < x->n_edits; i++) {
        int rc = fg_jobspec_set(out, x->edits[i].opt, x->edits[i].value, err);
        if (rc)
            return rc;
    }
    int rc = fg_jobspec_finish(out, err);
    if (rc)
        return rc;
    qout->count = x->count;
    qout->nodes = x->nodes;
    return 0;
}

void fg_remedy_flags(const struct fg_remedy *x, const struct fg_request *q, const char *sp,
                     char *buf, size_t cap)
{
    size_t off = 0;
    buf[0] = '\0';
#define PUT(...)                                                                              \
    do {                                                                                      \
        if (off < cap) {                                                                      \
            int w_ = snprintf(buf + off, cap - off, __VA_ARGS__);                             \
            off += w_ > 0 ? (size_t)w_ : 0;                                                   \
        }                                                                                     \
    } while (0)
    for (size_t i = 0; i < x->n_edits; i++) {
        const struct fg_jobopt *o = fg_jobopt_at(x->edits[i].opt);
        if (!o)
            continue;
        if (!o->arg) /* a flag: SPANK takes it bare (the remedies only turn flags on) */
            PUT("%s%s%s", off ? " " : "", sp, o->name);
        else
            PUT("%s%s%s=%s", off ? " " : "", sp, o->name, x->edits[i].value);
    }
    uint32_t qn = q->nodes ? q->nodes : 1, xn = x->nodes ? x->nodes : 1;
    if (x->count != q->count || xn != qn) {
        char req[128];
        fg_request_spell(q, x->count, 1, req, sizeof req);
        if (xn > 1 || xn != qn)
            PUT("%s--nodes=%u", off ? " " : "", xn);
        PUT("%s%s", off ? " " : "", req);
    }
#undef PUT
}

/* ---- the search: the job and its check ---------------------------------------------- */

struct search {
    const struct fg_model *m;
    const struct fg_jobspec *spec;
    const struct fg_request *q;
    const struct fg_rules *r;
    const struct fg_remedy_job *j;
    const struct fg_assessment *a0; /* the job's own assessment */
    struct fg_jobspec after;
    struct fg_request qa;
    const struct fg_assessment *last; /* the last check's (borrowed from the check) */
    bool beyond;                       /* counts above MaxGPUs may pass (FG_REMEDY_BEYOND) */
};

/* GPUs on each node of x's request. */
static uint32_t per_node_of(const struct fg_request *q, uint32_t count, uint32_t nodes)
{
    uint32_t n = nodes ? nodes : 1;
    return q->via == FG_VIA_GPUS ? (count + n - 1) / n : count;
}

bool fg_remedy_runnable(const struct fg_remedy *x, const struct fg_jobspec *after,
                        const struct fg_model *m, const struct fg_request *q,
                        const struct fg_rules *r)
{
    (void)r;
    const struct fg_layout *l = &x->layout;
    struct fg_run_shape rs = {.tp = l->tp, .pp = l->pp, .ep = l->ep, .cp = l->cp,
                              .dp = l->dp, .zero = l->zero,
                              .per_node = per_node_of(q, x->count, x->nodes),
                              .nodes = x->nodes ? x->nodes : 1, .experts = m->experts,
                              .seq_len = after->job.seq_len,
                              .serve = after->job.mode == FG_MODE_SERVE &&
                                       after->fw->gpu_util > 0};
    if (l->gen_gpus) /* a trainer's vLLM server: the training ranks are not all the GPUs */
        rs.per_node = rs.nodes = 0;
    return fg_framework_runs(after->fw, &rs, NULL, 0);
}

/* x applied and run through the check: fits as asked, not refused, on a layout its
 * framework runs.  On a pass, x gets the layout and the GPUs of the re-check; s->last is
 * the check's assessment. */
static bool passes(struct search *s, struct fg_remedy *x)
{
    struct fg_err err = {0};
    struct fg_layout l;
    s->last = NULL;
    if (fg_remedy_apply(x, s->spec, s->q, &s->after, &s->qa, &err))
        return false;
    uint32_t gpus = fg_request_total(&s->qa);
    if (!s->beyond && gpus > s->r->max_gpus && gpus > fg_request_total(s->q))
        return false; /* more than the partition allows */
    if (!s->j->check(s->j->check_ctx, &s->after, &s->qa, &l, &s->last))
        return false;
    x->layout = l;
    x->gpus = gpus;
    /* an engine's fit is its budget (assess_serve.c), not the layout's training-style peak */
    bool engine = s->last && s->last->gpu_util > 0;
    x->need = engine ? s->last->fit.need_bytes : l.peak_bytes;
    x->layout.peak_bytes = x->need;
    x->usable = s->last ? s->last->usable : 0;
    return fg_remedy_runnable(x, &s->after, s->m, s->q, s->r);
}

/* The layout of x's re-check as options: TP, PP, DP, ZeRO (training, where the framework
 * shards), EP and CP where the model or the job has them, a vLLM server's GPUs, and a
 * smaller micro-batch with the accumulation that keeps the job's samples per step. */
static void add_layout(const struct search *s, const struct fg_framework *fw,
                       struct fg_remedy *x)
{
    const struct fg_layout *l = &x->layout;
    const struct fg_job *j = &s->spec->job;
    bool serve = j->mode == FG_MODE_SERVE;
    fg__remedy_edit_u(x, FG_JOBOPT_TP, l->tp ? l->tp : 1);
    fg__remedy_edit_u(x, FG_JOBOPT_PP, l->pp ? l->pp : 1);
    if (l->ep > 1 || s->spec->ep)
        fg__remedy_edit_u(x, FG_JOBOPT_EP, l->ep ? l->ep : 1);
    if (l->cp > 1 || s->spec->cp)
        fg__remedy_edit_u(x, FG_JOBOPT_CP, l->cp > 1 ? l->cp : 1);
    fg__remedy_edit_u(x, FG_JOBOPT_DP, l->dp ? l->dp : 1);
    if (!serve && ((fw->layouts & FG_LAY_ZERO) || l->zero))
        fg__remedy_edit_u(x, FG_JOBOPT_ZERO, l->zero);
    if (l->gen_gpus && s->after.job.vllm_mode == FG_VLLM_SERVER)
        fg__remedy_edit_u(x, FG_JOBOPT_GEN_GPUS, l->gen_gpus);
    if (!serve && l->micro_batch && l->micro_batch < j->batch && !has_edit(x, FG_JOBOPT_BATCH)) {
        /* the planner's: the job's batch kept over the layout's ranks by accumulation */
        fg__remedy_edit_u(x, FG_JOBOPT_BATCH, l->micro_batch);
        fg__remedy_edit_u(x, FG_JOBOPT_GRAD_ACCUM, l->grad_accum ? l->grad_accum : 1);
    }
}

/* x passes, then passes again with its layout as options (the request a user pastes):
 * true when both did; x then holds the complete remedy and its re-check. */
static bool passes_complete(struct search *s, struct fg_remedy *x)
{
    if (!passes(s, x))
        return false;
    struct fg_remedy y = *x;
    add_layout(s, s->after.fw, &y);
    if (!passes(s, &y))
        return false;
    *x = y;
    return true;
}

/* ---- (a) switches at the same GPU count ---------------------------------------------- */

/* The switches that apply to the job, into out and which[] (up to cap); how many. */
static size_t switch_cands(const struct fg_jobspec *spec, const struct fg_request *q,
                           const struct fg_assessment *a, struct fg_remedy *out,
                           enum fg_switch *which, size_t cap)
{
    enum fg_switch sw[FG_SWITCH_COUNT];
    size_t n = fg_framework_switch_list(spec->fw, spec->job.mode, spec->job.trainer, sw,
                                        FG_SWITCH_COUNT), k = 0;
    for (size_t i = 0; i < n && k < cap; i++)
        if (fg__remedy_switch_edits(sw[i], spec, q, a, &out[k]))
            which[k++] = sw[i];
    return k;
}

size_t fg_remedy_switches(const struct fg_jobspec *spec, const struct fg_request *q,
                          const struct fg_assessment *a, struct fg_remedy *out, size_t cap)
{
    enum fg_switch which[FG_SWITCH_COUNT];
    return switch_cands(spec, q, a, out, which, cap < FG_SWITCH_COUNT ? cap : FG_SWITCH_COUNT);
}

/* The largest micro-batch below the job's, a divisor of it (the samples per step kept
 * exactly), that passes with x's other edits, into x. */
static bool micro_batch(struct search *s, struct fg_remedy *x)
{
    const struct fg_job *j = &s->spec->job;
    uint64_t accum0 = j->grad_accum ? j->grad_accum : 1;
    for (uint64_t mb = j->batch - 1; mb >= 1; mb--) {
        if (j->batch % mb)
            continue;
        fg__remedy_edit_u(x, FG_JOBOPT_BATCH, mb);
        fg__remedy_edit_u(x, FG_JOBOPT_GRAD_ACCUM, j->batch / mb * accum0);
        if (passes_complete(s, x))
            return true;
    }
    return false;
}

/* Serving: the most sequences at once, or the longest max_model_len, that pass with x's
 * other edits (bisection below the job's own), into x. */
static bool serve_most(struct search *s, struct fg_remedy *x, unsigned opt, uint64_t have)
{
    uint64_t lo = 0, hi = have; /* lo passes (0: none yet), hi does not */
    struct fg_remedy best = *x;
    while (hi - lo > 1 && hi - lo > hi / 64) {
        uint64_t mid = lo + (hi - lo) / 2;
        struct fg_remedy y = *x;
        fg__remedy_edit_u(&y, opt, mid);
        if (passes_complete(s, &y)) {
            lo = mid;
            best = y;
        } else {
            hi = mid;
        }
    }
    if (!lo)
        return false;
    *x = best;
    return true;
}

/* A switch's value made the best that passes (the largest micro-batch, the most sequences,
 * the longest max_model_len), x then complete; or x as it is when it passes. */
static bool try_switch(struct search *s, enum fg_switch sw, struct fg_remedy *x)
{
    const struct fg_job *j = &s->spec->job;
    if (sw == FG_SWITCH_ACCUM)
        return micro_batch(s, x);
    if (sw == FG_SWITCH_VLLM_SERVER && j->vllm_mode == FG_VLLM_SERVER) {
        /* the fewest server GPUs, other than the job's, that hold both sides */
        uint32_t total = fg_request_total(s->q);
        for (uint32_t n = 1; n < total && n <= 64; n++) {
            if (n == j->gen_gpus)
                continue;
            fg__remedy_edit_u(x, FG_JOBOPT_GEN_GPUS, n);
            if (passes_complete(s, x))
                return true;
        }
        return false;
    }
    if (sw == FG_SWITCH_SEQS)
        return serve_most(s, x, FG_JOBOPT_BATCH, j->batch);
    if (sw == FG_SWITCH_MAX_LEN)
        return serve_most(s, x, FG_JOBOPT_SEQ_LEN, j->seq_len);
    return passes_complete(s, x);
}

static void keep(struct fg_remedies *out, const struct fg_remedy *x)
{
    if (out->n < FG_REMEDY_MAX)
        out->r[out->n++] = *x;
}

/* The edits of cand[i] for the i in set (a bit each), in cand's order, into x. */
static void union_of(const struct fg_remedy *cand, size_t n, uint32_t set, struct fg_remedy *x,
                     const struct fg_request *q)
{
    memset(x, 0, sizeof *x);
    x->kind = FG_REMEDY_SWITCH;
    x->count = q->count;
    x->nodes = q->nodes ? q->nodes : 1;
    for (size_t i = 0; i < n; i++)
        if (set >> i & 1u)
            for (size_t e = 0; e < cand[i].n_edits; e++)
                fg__remedy_edit(x, cand[i].edits[e].opt, cand[i].edits[e].value);
}

/* Every switch, cumulatively, until the job fits (QLoRA last: it changes the job the most;
 * one vLLM switch, the server's, with the rest); then each one dropped that the fit does
 * not need, the most costly first; the value of what is left made the best that passes. */
static bool fewest_switches(struct search *s, const struct fg_remedy *cand,
                            const enum fg_switch *sw, size_t n, struct fg_remedy *x)
{
    uint32_t set = 0;
    bool ok = false, server = false;
    for (size_t i = 0; i < n; i++)
        server |= sw[i] == FG_SWITCH_VLLM_SERVER;
    for (size_t i = 0; i < n && !ok; i++) {
        if (sw[i] == FG_SWITCH_VLLM_UTIL && server)
            continue;
        set |= 1u << i;
        union_of(cand, n, set, x, s->q);
        ok = passes(s, x);
    }
    if (!ok)
        return false;
    for (size_t k = n; k-- > 0;) {
        if (!(set >> k & 1u) || (set & ~(1u << k)) == 0)
            continue;
        union_of(cand, n, set & ~(1u << k), x, s->q);
        if (passes(s, x))
            set &= ~(1u << k);
    }
    union_of(cand, n, set, x, s->q);
    for (size_t k = 0; k < n; k++)
        if ((set >> k & 1u) && (sw[k] == FG_SWITCH_ACCUM || sw[k] == FG_SWITCH_SEQS ||
                                sw[k] == FG_SWITCH_MAX_LEN))
            return try_switch(s, sw[k], x);
    return passes_complete(s, x);
}

static void find_switches(struct search *s, struct fg_remedies *out, struct fg_plan *ckpt_plan,
                          bool *have_ckpt_plan)
{
    struct fg_remedy cand[FG_SWITCH_COUNT];
    enum fg_switch sw[FG_SWITCH_COUNT];
    size_t n = switch_cands(s->spec, s->q, s->a0, cand, sw, FG_SWITCH_COUNT), kept = 0;
    *have_ckpt_plan = false;
    for (size_t i = 0; i < n && kept < 3; i++) {
        struct fg_remedy x = cand[i];
        if (try_switch(s, sw[i], &x)) {
            keep(out, &x);
            kept++;
        } else if (sw[i] == FG_SWITCH_GRAD_CKPT) {
            /* the job with checkpointing alone, for more GPUs (b) */
            struct fg_remedy y = cand[i];
            (void)passes(s, &y);
            if (s->last && s->last->planned && s->last->plan.status == FG_PLAN_FOUND &&
                s->last->plan.n) {
                *ckpt_plan = s->last->plan;
                *have_ckpt_plan = true;
            }
        }
    }
    if (kept || !n)
        return;
    struct fg_remedy x;
    if (fewest_switches(s, cand, sw, n, &x))
        keep(out, &x);
}

/* ---- (b) more GPUs, (c) other frameworks, (d) beyond MaxGPUs ------------------------- */

/*
 * Layout l on its GPUs as a request the framework fw runs it on: the request's own nodes
 * when they divide the count (fg_request_arrange), else as few nodes as hold it.  false
 * when neither runs it.
 */
static bool arrange(const struct search *s, const struct fg_framework *fw,
                    const struct fg_layout *l, uint32_t *count, uint32_t *nodes)
{
    uint32_t node_max = s->r->max_gpus_node ? s->r->max_gpus_node : 8;
    uint32_t gpus = l->gpus + l->gen_gpus;
    for (int k = 0; k < 2; k++) {
        uint32_t c, n;
        if (k == 0) {
            if (fg_request_arrange(s->q, s->r->max_gpus_node, s->r->min_gpus_node, gpus, &c,
                                   &n) != gpus)
                continue;
        } else {
            /* packed: the planner's nodes (a multi-node request's own size, else the
             * partition's) */
            uint32_t pn = s->a0 && s->a0->plan_node_gpus ? s->a0->plan_node_gpus : node_max;
            n = (gpus + pn - 1) / pn;
            if (gpus % n)
                continue;
            c = s->q->via == FG_VIA_GPUS ? gpus : gpus / n;
        }
        struct fg_run_shape rs = {.tp = l->tp, .pp = l->pp, .ep = l->ep, .cp = l->cp,
                                  .dp = l->dp, .zero = l->zero,
                                  .per_node = per_node_of(s->q, c, n), .nodes = n,
                                  .experts = s->m->experts, .seq_len = s->spec->job.seq_len,
                                  .serve = s->spec->job.mode == FG_MODE_SERVE &&
                                           fw->gpu_util > 0};
        if (l->gen_gpus)
            rs.per_node = rs.nodes = 0;
        if (fg_framework_runs(fw, &rs, NULL, 0)) {
            *count = c;
            *nodes = n;
            return true;
        }
    }
    return false;
}

/* A layout as the request and options of a remedy of kind, base's edits first. */
static bool layout_remedy(const struct search *s, const struct fg_framework *fw,
                          const struct fg_layout *l, const struct fg_remedy *base,
                          enum fg_remedy_kind kind, struct fg_remedy *x)
{
    *x = *base;
    x->kind = kind;
    if (!arrange(s, fw, l, &x->count, &x->nodes))
        return false;
    x->layout = *l;
    return true;
}

/* The first layout of plan that passes complete, with base's edits, into x. */
static bool from_plan(struct search *s, const struct fg_plan *plan, const struct fg_remedy *base,
                      enum fg_remedy_kind kind, struct fg_remedy *x)
{
    for (size_t i = 0; i < plan->n; i++) {
        struct fg_layout l = plan->options[i];
        if (s->spec->job.vllm_mode == FG_VLLM_SERVER && s->a0)
            l.gen_gpus = s->a0->gen_gpus; /* the server's GPUs beside the training's */
        if (!layout_remedy(s, s->spec->fw, &l, base, kind, x))
            continue;
        /* the layout itself as options: what the re-check must run */
        struct fg_remedy y = *x;
        add_layout(s, s->spec->fw, &y);
        if (passes(s, &y)) {
            *x = y;
            return true;
        }
    }
    return false;
}

static bool find_more_gpus(struct search *s, const struct fg_assessment *a,
                           const struct fg_plan *ckpt_plan, bool have_ckpt_plan,
                           struct fg_remedies *out)
{
    struct fg_remedy base = {0}, x, y;
    bool got = a->planned && a->plan.status == FG_PLAN_FOUND &&
               from_plan(s, &a->plan, &base, FG_REMEDY_GPUS, &x);
    if (have_ckpt_plan) {
        fg__remedy_edit(&base, FG_JOBOPT_GRAD_CKPT, "");
        if (from_plan(s, ckpt_plan, &base, FG_REMEDY_GPUS, &y) && (!got || y.gpus < x.gpus)) {
            x = y;
            got = true;
        }
    }
    if (got)
        keep(out, &x);
    return got;
}

/* Whether framework fw has the job's mode, trainer and quantization. */
static bool fw_has_job(const struct fg_framework *fw, const struct fg_job *j)
{
    if (!fg_framework_is_newest(fw))
        return false; /* an older release is the same framework */
    if (j->mode == FG_MODE_SERVE)
        return fw->serves;
    if (!fg_framework_has_trainer(fw, j->trainer))
        return false;
    if (j->mode == FG_MODE_QLORA && !fw->qlora)
        return false;
    return !((j->mode == FG_MODE_LORA || j->mode == FG_MODE_QLORA) && fw->full_only);
}

static void find_other_frameworks(struct search *s, const struct fg_assessment *a,
                                  struct fg_remedies *out)
{
    int shown = 0;
    const struct fg_framework *fw;
    if (s->spec->job.mode == FG_MODE_SERVE) {
        /* another engine on the same GPUs: its budget and split */
        for (size_t k = 0; (fw = fg_framework_at(k)) && shown < 2; k++) {
            if (fw == s->spec->fw || !fw_has_job(fw, &s->spec->job) ||
                !strcmp(fw->name, s->spec->fw->name))
                continue;
            struct fg_remedy x = {.kind = FG_REMEDY_FRAMEWORK, .count = s->q->count,
                                  .nodes = s->q->nodes ? s->q->nodes : 1};
            fg__remedy_edit(&x, FG_JOBOPT_FRAMEWORK, fw->name);
            if (passes_complete(s, &x)) {
                keep(out, &x);
                shown++;
            }
        }
        return;
    }
    if (!a->alt_planned || a->alt.status != FG_PLAN_FOUND)
        return;
    for (size_t i = 0; i < a->alt.n && shown < 2 && out->n < FG_REMEDY_MAX; i++) {
        const struct fg_layout *l = &a->alt.options[i];
        uint32_t c, n;
        if (arrange(s, s->spec->fw, l, &c, &n))
            continue; /* the job's own framework runs it: that is (b) */
        for (size_t k = 0; (fw = fg_framework_at(k)); k++) {
            if (!strcmp(fw->name, s->spec->fw->name) || !fw_has_job(fw, &s->spec->job))
                continue;
            struct fg_remedy base = {0}, x;
            fg__remedy_edit(&base, FG_JOBOPT_FRAMEWORK, fw->name);
            if (!layout_remedy(s, fw, l, &base, FG_REMEDY_FRAMEWORK, &x))
                continue;
            /* the layout as options; else the framework's own choice on those GPUs */
            struct fg_remedy y = x;
            add_layout(s, fw, &y);
            bool pinned = passes(s, &y);
            if (pinned || passes_complete(s, &x)) {
                keep(out, pinned ? &y : &x);
                shown++;
                break;
            }
        }
    }
}

/*
 * The fewest GPUs that hold the job under its own framework when none within MaxGPUs
 * does: the planner up to FG_ASSESS_MAX_GPUS (by families of layouts, plan.c: the counts
 * where one can fit), on the nodes the check plans, the first layout that passes.
 */
static void find_beyond(struct search *s, const struct fg_assessment *a, struct fg_remedies *out)
{
    const struct fg_job *j = &s->spec->job;
    uint32_t total = fg_request_total(s->q);
    if (j->mode == FG_MODE_SERVE || !a->have_card || s->r->max_gpus >= FG_ASSESS_MAX_GPUS ||
        total >= FG_ASSESS_MAX_GPUS || j->vllm_mode == FG_VLLM_SERVER)
        return;
    struct fg_plan_opts po;
    fg_plan_opts_default(&po);
    po.fit.headroom = a->headroom;
    po.fit.conservative = s->r->conservative;
    if (a->calib) {
        po.fit.headroom *= a->calib->factor;
        po.fit.conservative *= a->calib->factor;
    }
    po.restrict_layouts = true;
    po.layouts = s->spec->fw->layouts & (FG_PLAN_TP | FG_PLAN_PP | FG_PLAN_EP | FG_PLAN_ZERO);
    po.naive_pp = s->spec->fw->naive_pp;
    po.fw = s->spec->fw;
    po.fix_tp = s->spec->tp;
    po.fix_pp = s->spec->pp;
    po.fix_ep = s->spec->ep;
    po.fix_dp = s->spec->dp;
    po.gpus_per_node = a->plan_node_gpus;
    po.min_gpus = s->r->max_gpus > total ? s->r->max_gpus + 1 : total + 1;
    po.max_gpus = FG_ASSESS_MAX_GPUS;
    po.global_batch = s->spec->global_batch;
    struct fg_job pj = a->job;
    pj.dp = 1;
    pj.tp = pj.pp = pj.ep = 1;
    if (!fg_jobspec_given(s->spec, FG_JOBOPT_ZERO))
        pj.zero = 0;
    if (j->batch > 1) { /* micro-batch 1, the samples per step kept by accumulation */
        if (!po.global_batch)
            po.global_batch = pj.batch;
        pj.batch = 1;
    }
    struct fg_plan *p = malloc(sizeof *p);
    struct fg_err err = {0};
    if (!p)
        return;
    if (!fg_plan_layouts(s->m, &pj, a->usable, &po, p, &err) && p->status == FG_PLAN_FOUND) {
        struct fg_remedy base = {0}, x;
        s->beyond = true;
        if (from_plan(s, p, &base, FG_REMEDY_BEYOND, &x)) {
            keep(out, &x);
            out->max_gpus = s->r->max_gpus;
        }
        s->beyond = false;
    }
    free(p);
}

int fg_remedy_find(const struct fg_remedy_job *j, const struct fg_assessment *a,
                   struct fg_remedies *out)
{
    memset(out, 0, sizeof *out);
    struct search *s = calloc(1, sizeof *s);
    struct fg_plan *ckpt_plan = calloc(1, sizeof *ckpt_plan);
    int rc = 0;
    if (!s || !ckpt_plan) {
        rc = FG_E_NOMEM;
        goto out;
    }
    s->m = j->m;
    s->spec = j->spec;
    s->q = j->q;
    s->r = j->r;
    s->j = j;
    s->a0 = a;
    bool have_ckpt_plan = false;
    find_switches(s, out, ckpt_plan, &have_ckpt_plan);
    if (out->n && !j->want_gpus)
        goto out; /* a switch fits: more GPUs and other frameworks cost more */
    bool more = find_more_gpus(s, a, ckpt_plan, have_ckpt_plan, out);
    if (out->n && out->r[0].kind == FG_REMEDY_SWITCH)
        goto out; /* the resize's GPUs found, the switches first */
    find_other_frameworks(s, a, out);
    if (!more)
        find_beyond(s, a, out);
out:
    free(ckpt_plan);
    free(s);
    return rc;
}

/* ---- the smallest request of an over-request ----------------------------------------- */

static bool count_passes(struct search *s, uint32_t t)
{
    struct fg_remedy x = {.kind = FG_REMEDY_GPUS};
    fg_request_arrange(s->q, s->r->max_gpus_node, s->r->min_gpus_node, t, &x.count, &x.nodes);
    return passes(s, &x);
}

/* The next count above t the request can spell exactly (0 past hi). */
static uint32_t next_count(const struct search *s, uint32_t t, uint32_t hi)
{
    for (uint32_t u = t + 1; u <= hi; u++) {
        uint32_t c, n;
        if (fg_request_arrange(s->q, s->r->max_gpus_node, s->r->min_gpus_node, u, &c, &n) == u)
            return u;
    }
    return 0;
}

void fg_remedy_smallest(const struct fg_remedy_job *j, uint32_t lo, uint32_t *gpus)
{
    uint32_t total = fg_request_total(j->q);
    *gpus = total;
    if (j->spec->dp || lo >= total)
        return; /* a declared DP fixes the count */
    struct search *s = calloc(1, sizeof *s);
    if (!s)
        return; /* the advice stays the decision's own */
    s->m = j->m;
    s->spec = j->spec;
    s->q = j->q;
    s->r = j->r;
    s->j = j;
    /* doubling from lo, then halving back between the last failure and the first pass */
    uint32_t fail = 0, t = lo ? lo : 1, pass = 0;
    if (next_count(s, t - 1, total) != t)
        t = next_count(s, t, total);
    while (t && t < total) {
        if (count_passes(s, t)) {
            pass = t;
            break;
        }
        fail = t;
        uint32_t d = next_count(s, 2 * t - 1, total);
        t = d ? d : 0;
    }
    if (!pass)
        pass = total; /* the job fits as asked: search below it */
    while (fail) {
        uint32_t mid = next_count(s, fail + (pass - fail) / 2 - 1, pass);
        if (!mid || mid >= pass || mid <= fail)
            break;
        if (count_passes(s, mid))
            pass = mid;
        else
            fail = mid;
    }
    *gpus = pass;
    free(s);
}
