/*
 * remedy.c - remedies proposed, applied and re-checked through the gate (remedy.h).  The
 * words for them are the decision module's (decide.c fg_decide_remedies).
 */
#include "remedy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assess.h"

/*
 * The switches a framework's own code offers beyond the layout bits of its row
 * (framework.h): chunked or fused loss, an 8-bit optimizer from bitsandbytes, optimizer
 * offload to the CPU.  Gradient checkpointing every training framework runs; ZeRO / FSDP is
 * the row's FG_LAY_ZERO bit and QLoRA its qlora field.  Read in (releases of late 2025):
 *
 *   hf, axolotl, llama-factory  transformers training_args.py OptimizerNames
 *                               (adamw_bnb_8bit, paged_adamw_8bit), use_liger_kernel
 *                               (liger_kernel fused linear cross entropy); accelerate
 *                               FullyShardedDataParallelPlugin cpu_offload and DeepSpeed
 *                               offload_optimizer; axolotl liger plugin; LLaMA-Factory
 *                               enable_liger_kernel
 *   unsloth                     TrainingArguments optim="adamw_8bit"; its own chunked loss
 *                               (kernels/cross_entropy_loss.py); no optimizer offload
 *   lit-gpt                     finetune --optimizer bitsandbytes.optim.PagedAdamW;
 *                               chunked_cross_entropy; FSDPStrategy(cpu_offload=True)
 *   torchtune                   configs' optimizer bitsandbytes.optim.PagedAdamW8bit;
 *                               CEWithChunkedOutputLoss; fsdp_cpu_offload
 *   nemo, megatron              no bitsandbytes optimizer, no chunked loss; Megatron-Core
 *                               optimizer_cpu_offload (HybridDeviceOptimizer)
 *   deepspeed                   offload_optimizer (zero/stage_1_and_2.py cpu_offload)
 */
struct fw_switches {
    const char *name;
    bool chunked_ce, adam8, offload, offload_params;
};

/* offload_params: parameters too (torch FSDP CPUOffload(offload_params=True), which
 * accelerate, Lightning and torchtune pass; DeepSpeed offload_param under ZeRO-3);
 * Megatron-Core offloads the optimizer only */
static const struct fw_switches switch_rows[] = {
    {"hf", true, true, true, true},           {"axolotl", true, true, true, true},
    {"llama-factory", true, true, true, true}, {"unsloth", true, true, false, false},
    {"lit-gpt", true, true, true, true},      {"torchtune", true, true, true, true},
    {"nemo", false, false, true, false},      {"megatron", false, false, true, false},
    {"deepspeed", false, false, true, true},
};

static const struct fw_switches *switches_of(const struct fg_framework *fw)
{
    for (size_t i = 0; i < sizeof switch_rows / sizeof switch_rows[0]; i++)
        if (!strcmp(switch_rows[i].name, fw->name))
            return &switch_rows[i];
    return NULL;
}

static void add_edit(struct fg_remedy *x, unsigned opt, const char *value)
{
    for (size_t i = 0; i < x->n_edits; i++)
        if (x->edits[i].opt == opt) {
            snprintf(x->edits[i].value, sizeof x->edits[i].value, "%s", value);
            return;
        }
    if (x->n_edits >= FG_REMEDY_EDITS)
        return;
    x->edits[x->n_edits].opt = opt;
    snprintf(x->edits[x->n_edits].value, sizeof x->edits[x->n_edits].value, "%s", value);
    x->n_edits++;
}

static void add_edit_u(struct fg_remedy *x, unsigned opt, uint64_t v)
{
    char b[24];
    snprintf(b, sizeof b, "%llu", (unsigned long long)v);
    add_edit(x, opt, b);
}

int fg_remedy_apply(const struct fg_remedy *x, const struct fg_jobspec *spec,
                    const struct fg_request *q, struct fg_jobspec *out,
                    struct fg_request *qout, struct fg_err *err)
{
    *out = *spec;
    *qout = *q;
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

/* The search: the job and its check. */
struct search {
    const struct fg_model *m;
    const struct fg_jobspec *spec;
    const struct fg_request *q;
    const struct fg_rules *r;
    const struct fg_remedy_job *j;
    struct fg_jobspec after;
    struct fg_request qa;
    const struct fg_assessment *last; /* the last check's (borrowed from the check) */
};

/* x applied and run through the check: fits as asked, and not refused.  On a pass, x gets
 * the layout and the GPUs of the re-check; s->last is the check's assessment. */
static bool passes(struct search *s, struct fg_remedy *x)
{
    struct fg_err err = {0};
    struct fg_layout l;
    s->last = NULL;
    if (fg_remedy_apply(x, s->spec, s->q, &s->after, &s->qa, &err))
        return false;
    uint32_t gpus = fg_request_total(&s->qa);
    if (gpus > s->r->max_gpus && gpus > fg_request_total(s->q))
        return false; /* more than the partition allows */
    if (!s->j->check(s->j->check_ctx, &s->after, &s->qa, &l, &s->last))
        return false;
    x->layout = l;
    x->gpus = gpus;
    return fg_remedy_runnable(x, &s->after, s->m, s->r);
}

bool fg_remedy_runnable(const struct fg_remedy *x, const struct fg_jobspec *after,
                        const struct fg_model *m, const struct fg_rules *r)
{
    const struct fg_layout *l = &x->layout;
    const struct fg_framework *fw = after->fw;
    uint32_t per_node = r->max_gpus_node ? r->max_gpus_node : 8;
    if (fg_framework_needs(l->tp, l->pp, l->ep, l->cp > 1 ? l->cp : 1, l->dp > 1 ? l->zero : 0) &
        ~fw->layouts)
        return false;
    if (fw->naive_pp && l->pp > 1 && (x->nodes > 1 || l->dp > 1))
        return false;
    if (l->tp > per_node)
        return false;
    if (l->ep > 1 && (!m->experts || m->experts % l->ep))
        return false;
    return true;
}

/* ---- (a) switches at the same GPU count ---------------------------------------------- */

/* The switches the job can take, cheapest first, into cand (one edit set each). */
static size_t switch_candidates(const struct fg_jobspec *spec, uint32_t total,
                                struct fg_remedy *cand, size_t cap)
{
    const struct fg_job *j = &spec->job;
    const struct fg_framework *fw = spec->fw;
    const struct fw_switches *sw = switches_of(fw);
    uint32_t split = (spec->tp ? spec->tp : 1) * (spec->pp ? spec->pp : 1) *
                     (spec->cp ? spec->cp : 1);
    bool dp_gt1 = spec->dp ? spec->dp > 1 : total / (split ? split : 1) > 1;
    size_t n = 0;
#define CAND(opt, val)                                                                        \
    do {                                                                                      \
        if (n < cap) {                                                                        \
            memset(&cand[n], 0, sizeof cand[n]);                                              \
            add_edit(&cand[n], (opt), (val));                                                 \
            n++;                                                                              \
        }                                                                                     \
    } while (0)
    if (!j->grad_ckpt)
        CAND(FG_JOBOPT_GRAD_CKPT, "yes");
    if (j->batch > 1)
        CAND(FG_JOBOPT_BATCH, "1");
    if (sw && sw->chunked_ce && !j->chunked_ce && j->loss == FG_LOSS_DEFAULT)
        CAND(FG_JOBOPT_CHUNKED_CE, "yes");
    if ((fw->layouts & FG_LAY_ZERO) && dp_gt1 && j->zero < 3)
        CAND(FG_JOBOPT_ZERO, "3");
    if (sw && sw->adam8 && j->optimizer != FG_OPT_ADAMW_8BIT && j->optimizer != FG_OPT_SGD)
        CAND(FG_JOBOPT_OPTIMIZER, "adamw-8bit");
    if (sw && sw->offload && (fw->layouts & FG_LAY_ZERO) && j->offload == FG_OFFLOAD_NONE) {
        CAND(FG_JOBOPT_OFFLOAD, "optimizer");
        if (n && j->zero < 1)
            add_edit(&cand[n - 1], FG_JOBOPT_ZERO, dp_gt1 ? "3" : "1");
    }
    if (sw && sw->offload_params && (fw->layouts & FG_LAY_ZERO) &&
        j->offload != FG_OFFLOAD_PARAMS) {
        CAND(FG_JOBOPT_OFFLOAD, "params");
        if (n && j->zero < 3)
            add_edit(&cand[n - 1], FG_JOBOPT_ZERO, "3");
    }
    if (j->mode == FG_MODE_LORA && fw->qlora)
        CAND(FG_JOBOPT_MODE, "qlora");
#undef CAND
    return n;
}

/* The largest micro-batch below the job's that passes, into x (its BATCH edit). */
static bool micro_batch(struct search *s, struct fg_remedy *x)
{
    for (uint64_t mb = s->spec->job.batch / 2; mb >= 1; mb /= 2) {
        add_edit_u(x, FG_JOBOPT_BATCH, mb);
        if (passes(s, x))
            return true;
        if (mb == 1)
            break;
    }
    return false;
}

/* Every switch in cand, cumulatively, until the job fits; then each dropped that the fit
 * does not need.  One remedy into x, or false. */
static bool fewest_switches(struct search *s, const struct fg_remedy *cand, size_t n,
                            struct fg_remedy *x)
{
    struct fg_remedy all = *x;
    bool ok = false;
    for (size_t i = 0; i < n && !ok; i++) {
        for (size_t e = 0; e < cand[i].n_edits; e++)
            add_edit(&all, cand[i].edits[e].opt, cand[i].edits[e].value);
        if (cand[i].edits[0].opt == FG_JOBOPT_MODE && i + 1 < n)
            continue; /* QLoRA last: it changes the job the most */
        ok = passes(s, &all);
    }
    if (!ok)
        return false;
    /* drop what the fit does not need, the most costly first */
    for (size_t k = all.n_edits; k-- > 0;) {
        struct fg_remedy less = all;
        less.n_edits = 0;
        for (size_t e = 0; e < all.n_edits; e++)
            if (e != k)
                add_edit(&less, all.edits[e].opt, all.edits[e].value);
        if (less.n_edits && passes(s, &less))
            all = less;
    }
    bool batch = false;
    for (size_t e = 0; e < all.n_edits; e++)
        batch |= all.edits[e].opt == FG_JOBOPT_BATCH;
    /* the largest micro-batch that fits with the other switches; all's layout and figure
     * from its own check */
    if (batch ? !micro_batch(s, &all) : !passes(s, &all))
        return false;
    *x = all;
    return true;
}

static void keep(struct fg_remedies *out, const struct fg_remedy *x)
{
    if (out->n < FG_REMEDY_MAX)
        out->r[out->n++] = *x;
}

static void find_switches(struct search *s, struct fg_remedies *out, struct fg_plan *ckpt_plan,
                          bool *have_ckpt_plan)
{
    struct fg_remedy cand[8];
    size_t n = switch_candidates(s->spec, fg_request_total(s->q), cand, 8), kept = 0;
    *have_ckpt_plan = false;
    for (size_t i = 0; i < n && kept < 3; i++) {
        struct fg_remedy x = cand[i];
        x.kind = FG_REMEDY_SWITCH;
        x.count = s->q->count;
        x.nodes = s->q->nodes ? s->q->nodes : 1;
        bool ok = x.edits[0].opt == FG_JOBOPT_BATCH ? micro_batch(s, &x) : passes(s, &x);
        if (ok) {
            keep(out, &x);
            kept++;
        } else if (x.edits[0].opt == FG_JOBOPT_GRAD_CKPT && s->last && s->last->planned &&
                   s->last->plan.status == FG_PLAN_FOUND && s->last->plan.n) {
            *ckpt_plan = s->last->plan; /* more GPUs with checkpointing, for (b) */
            *have_ckpt_plan = true;
        }
    }
    if (kept || !n)
        return;
    struct fg_remedy x = {.kind = FG_REMEDY_SWITCH, .count = s->q->count,
                          .nodes = s->q->nodes ? s->q->nodes : 1};
    if (fewest_switches(s, cand, n, &x))
        keep(out, &x);
}

/* ---- (b) more GPUs, (c) other frameworks --------------------------------------------- */

/* A layout as the job's declared dimensions, on the GPUs it needs. */
static void layout_remedy(const struct search *s, const struct fg_layout *l,
                          enum fg_remedy_kind kind, struct fg_remedy *x)
{
    uint32_t count, nodes;
    fg_request_arrange(s->q, s->r->max_gpus_node, s->r->min_gpus_node, l->gpus, &count, &nodes);
    x->kind = kind;
    x->count = count;
    x->nodes = nodes;
    add_edit_u(x, FG_JOBOPT_TP, l->tp);
    add_edit_u(x, FG_JOBOPT_PP, l->pp);
    if (l->ep > 1)
        add_edit_u(x, FG_JOBOPT_EP, l->ep);
    add_edit_u(x, FG_JOBOPT_DP, l->dp);
    if (l->dp > 1 || s->spec->job.zero)
        add_edit_u(x, FG_JOBOPT_ZERO, l->zero);
    if (l->micro_batch && l->micro_batch < s->spec->job.batch)
        add_edit_u(x, FG_JOBOPT_BATCH, l->micro_batch);
}

/* The first layout of plan that passes, with base's edits, into out. */
static bool from_plan(struct search *s, const struct fg_plan *plan, const struct fg_remedy *base,
                      enum fg_remedy_kind kind, struct fg_remedy *x)
{
    for (size_t i = 0; i < plan->n; i++) {
        *x = *base;
        layout_remedy(s, &plan->options[i], kind, x);
        if (passes(s, x))
            return true;
    }
    return false;
}

static void find_more_gpus(struct search *s, const struct fg_assessment *a,
                           const struct fg_plan *ckpt_plan, bool have_ckpt_plan,
                           struct fg_remedies *out)
{
    struct fg_remedy base = {0}, x, y;
    bool got = a->planned && a->plan.status == FG_PLAN_FOUND &&
               from_plan(s, &a->plan, &base, FG_REMEDY_GPUS, &x);
    if (have_ckpt_plan) {
        add_edit(&base, FG_JOBOPT_GRAD_CKPT, "yes");
        if (from_plan(s, ckpt_plan, &base, FG_REMEDY_GPUS, &y) && (!got || y.gpus < x.gpus)) {
            x = y;
            got = true;
        }
    }
    if (got)
        keep(out, &x);
}

/* Whether framework fw runs the job's mode (and its quantization) and layout l. */
static bool fw_runs(const struct fg_framework *fw, const struct fg_job *j,
                    const struct fg_layout *l)
{
    if (j->mode == FG_MODE_SERVE ? !fw->serves : !fw->trains)
        return false;
    if (j->mode == FG_MODE_QLORA && !fw->qlora)
        return false;
    if ((j->mode == FG_MODE_LORA || j->mode == FG_MODE_QLORA) && fw->full_only)
        return false;
    unsigned need = fg_framework_needs(l->tp, l->pp, l->ep, 1, l->dp > 1 ? l->zero : 0);
    return !(need & ~fw->layouts);
}

static void find_other_frameworks(struct search *s, const struct fg_assessment *a,
                                  struct fg_remedies *out)
{
    if (!a->alt_planned || a->alt.status != FG_PLAN_FOUND)
        return;
    int shown = 0;
    for (size_t i = 0; i < a->alt.n && shown < 2 && out->n < FG_REMEDY_MAX; i++) {
        const struct fg_layout *l = &a->alt.options[i];
        unsigned need = fg_framework_needs(l->tp, l->pp, l->ep, 1, l->dp > 1 ? l->zero : 0);
        if (!(need & ~s->spec->fw->layouts))
            continue; /* the job's own framework runs it: that is (b) */
        const struct fg_framework *fw;
        for (size_t k = 0; (fw = fg_framework_at(k)); k++) {
            if (fw == s->spec->fw || !fw_runs(fw, &s->spec->job, l))
                continue;
            struct fg_remedy x = {0};
            add_edit(&x, FG_JOBOPT_FRAMEWORK, fw->name);
            layout_remedy(s, l, FG_REMEDY_FRAMEWORK, &x);
            if (passes(s, &x)) {
                keep(out, &x);
                shown++;
                break;
            }
        }
    }
}

int fg_remedy_find(const struct fg_remedy_job *j, const struct fg_assessment *a,
                   struct fg_remedies *out)
{
    memset(out, 0, sizeof *out);
    if (j->spec->job.mode == FG_MODE_SERVE)
        return 0; /* serving remedies are the engine's budget (decide.c serve_numbers) */
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
    bool have_ckpt_plan = false;
    find_switches(s, out, ckpt_plan, &have_ckpt_plan);
    find_more_gpus(s, a, ckpt_plan, have_ckpt_plan, out);
    find_other_frameworks(s, a, out);
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
