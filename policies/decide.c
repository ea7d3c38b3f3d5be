/*
 * decide.c - assessment (engine calls) and the pure admission decision.
 * See decide.h.
 */
#include "decide.h"

#include <stdarg.h>
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

int fg_assess(const struct fg_model *m, const struct fg_job *job, const struct fg_gpu *gpu,
              uint32_t gpus, const struct fg_rules *r, struct fg_assessment *out,
              struct fg_err *err)
{
    memset(out, 0, sizeof *out);
    out->job = *job;
    fg_job_on_gpus(&out->job, gpus);
    out->layers = fg_model_main_layers(m);
    int rc = fg_memory_estimate(m, &out->job, &out->est, err);
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
    fg_fit_card(&out->est, out->usable, &po.fit, &out->fit);
    if (out->fit.verdict == FG_FIT_SPLIT && out->fit.max_batch == 0) {
        struct fg_job j = out->job;
        j.dp = 1;
        if ((rc = fg_plan_layouts(m, &j, out->usable, &po, &out->plan, err)))
            return rc;
        if (out->plan.status != FG_PLAN_FOUND && j.batch > 1) {
            /* micro-batch 1 on more GPUs, the asked batch kept by accumulation */
            po.global_batch = j.batch;
            j.batch = 1;
            if ((rc = fg_plan_layouts(m, &j, out->usable, &po, &out->plan, err)))
                return rc;
        }
        out->planned = true;
    } else if (out->fit.verdict == FG_FIT_BORDERLINE) {
        /* layouts that hold the conservative peak too */
        struct fg_job j = out->job;
        j.dp = 1;
        po.fit.headroom = r->conservative;
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
    if (l->zero)
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

/* One-card (data-parallel) layout at micro-batch mb. */
static void one_card(const struct fg_assessment *a, uint32_t gpus, uint64_t mb,
                     struct fg_layout *l)
{
    memset(l, 0, sizeof *l);
    l->gpus = gpus ? gpus : 1;
    l->tp = l->pp = l->ep = 1;
    l->dp = l->gpus;
    l->zero = a->job.zero;
    l->cut[0] = 0;
    l->cut[1] = a->layers;
    l->micro_batch = mb;
    l->grad_accum = mb ? (a->job.batch + mb - 1) / mb : 1;
    if (!l->grad_accum)
        l->grad_accum = 1;
    l->peak_bytes = l->stage_bytes[0] = fg_estimate_at(&a->est, mb);
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

static void numbers_one(struct fg_decision *d, const struct fg_assessment *a, const char *card,
                        const struct fg_rules *r)
{
    char b1[32], b2[32], b3[32];
    line(d, 1, "needs %s per GPU (estimate %s x %.2f headroom) at micro-batch %llu x %llu "
               "tokens; one %s has %s usable",
         gb(a->fit.need_bytes, b1, sizeof b1), gb(a->est.total_bytes, b2, sizeof b2),
         r->headroom, (unsigned long long)a->est.batch, (unsigned long long)a->est.seq_len,
         card, gb(a->usable, b3, sizeof b3));
}

void fg_decide(const struct fg_request *q, const struct fg_assessment *a,
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
             gb((uint64_t)((double)a->est.total_bytes * r->headroom), b1, sizeof b1),
             gb(a->est.total_bytes, b2, sizeof b2), r->headroom,
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
                 (unsigned long long)a->est.seq_len, r->headroom,
                 gb((uint64_t)((double)peak * r->headroom), b2, sizeof b2),
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
                numbers_one(d, a, card, r);
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
        numbers_one(d, a, card, r);
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
             r->headroom, (unsigned long long)a->est.batch, (unsigned long long)a->est.seq_len,
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
         gb(f->need_bytes, b1, sizeof b1), gb(a->est.total_bytes, b2, sizeof b2), r->headroom,
         (unsigned long long)a->est.batch, (unsigned long long)a->est.seq_len, card,
         gb(a->usable, b3, sizeof b3));
    if (a->planned && a->plan.why[0])
        line(d, 2, "%s; use a larger card, QLoRA, or --ft-grad-ckpt", a->plan.why);
    else
        line(d, 2, "no layout within MaxGPUs=%u holds it; use a larger card, QLoRA, or "
                   "--ft-grad-ckpt", r->max_gpus);
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
    line(d, 0, "%s: cannot size %s: model_type '%s' is not known and key '%s' is structure the "
               "generic reader does not understand",
         d->kind == FG_DECIDE_REJECT ? "rejected" : "warning", q->model[0] ? q->model : m->id,
         m->model_type[0] ? m->model_type : "(none)", m->unsure_key[0] ? m->unsure_key : "?");
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
