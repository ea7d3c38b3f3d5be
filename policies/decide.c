/*
 * decide.c - the pure admission decision, and apart from it its words (the lines for
 * people).  See decide.h; the assessment it reads is policies/assess.c.
 */
#include "decide.h"
#include "decide_int.h"

#define mode_words fg__decide_mode_words
#define layout_desc fg__decide_layout_desc

#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void fg__decide_say(char *buf, const char *fmt, ...)
{
    va_list ap;
    int w = snprintf(buf, FG_DECIDE_LINE, "fitgate: ");
    va_start(ap, fmt);
    vsnprintf(buf + w, FG_DECIDE_LINE - (size_t)w, fmt, ap);
    va_end(ap);
}

const char *fg_decide_kind_name(enum fg_decide_kind k)
{
    switch (k) {
    case FG_DECIDE_ALLOW: return "allow";
    case FG_DECIDE_WARN: return "warn";
    case FG_DECIDE_REJECT: return "reject";
    default: return "resize";
    }
}

/* ---- messages --------------------------------------------------------------- */

const char *fg__decide_mode_words(enum fg_mode m)
{
    switch (m) {
    case FG_MODE_FULL: return "full fine-tune";
    case FG_MODE_LORA: return "LoRA";
    case FG_MODE_QLORA: return "QLoRA";
    default: return "serving";
    }
}

/* "PP=4 over layers 0-13|14-27|..., 14.2 GB per GPU" */
void fg__decide_layout_desc(const struct fg_layout *l, char *buf, size_t cap)
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

/* The job's own layout at micro-batch mb (the global batch kept by accumulation). */
static void one_card(const struct fg_assessment *a, uint32_t gpus, uint64_t mb,
                     struct fg_layout *l)
{
    *l = a->layout;
    if (l->gen_gpus && gpus > l->gen_gpus)
        gpus -= l->gen_gpus; /* a trainer's vLLM server has GPUs of the job's own */
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
    l->peak_bytes = fg_estimate_accum_at(&a->est, mb); /* accumulating below the job's */
    if (l->pp <= 1)
        l->stage_bytes[0] = l->peak_bytes;
}

/* The plan's layout for exactly `gpus`, else the smallest one replicated by data parallelism. */
static void pick_layout(const struct fg_plan *p, const struct fg_assessment *a, uint32_t gpus,
                        struct fg_layout *l)
{
    uint32_t train = gpus; /* a trainer's vLLM server takes GPUs of the job's own */
    if (a->layout.gen_gpus && gpus > a->layout.gen_gpus)
        train -= a->layout.gen_gpus;
    if (p == &a->plan && a->at_total_found && a->at_total.gpus == train) {
        *l = a->at_total; /* the GPUs asked for, on their nodes, as the framework runs them */
        l->gen_gpus = a->layout.gen_gpus;
        return;
    }
    for (size_t i = 0; i < p->n; i++) {
        if (p->options[i].gpus == train) {
            *l = p->options[i];
            l->gen_gpus = a->layout.gen_gpus;
            return;
        }
    }
    *l = p->options[0];
    l->gen_gpus = a->layout.gen_gpus;
    /* more ranks of it by data parallel, where the framework runs DP beside it (a device_map
     * split does not: it stays one process, the other GPUs idle) */
    bool dp_beside = !(a->fw->naive_pp && l->pp > 1);
    if (dp_beside && train > l->gpus && train % l->gpus == 0) {
        uint32_t k = train / l->gpus;
        l->dp *= k;
        l->gpus = train;
        uint64_t per_step = l->micro_batch * l->dp;
        l->grad_accum = per_step ? (a->job.batch + per_step - 1) / per_step : 1;
        if (!l->grad_accum)
            l->grad_accum = 1;
    }
}

/* T GPUs on nodes within the partition's per-node limits (request.h). */
static uint32_t arrange(const struct fg_request *q, const struct fg_rules *r, uint32_t t,
                        uint32_t *count, uint32_t *nodes)
{
    return fg_request_arrange(q, r->max_gpus_node, r->min_gpus_node, t, count, nodes);
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

/* ---- the decision ----------------------------------------------------------------- */

/* How the job can fit: one card as asked (every GPU a data-parallel rank), a smaller
 * micro-batch on one card, a layout of the plan, or not at all. */
enum fit_how { FIT_ONE, FIT_MICRO, FIT_PLAN, FIT_NONE };

/* Which decision decide_fit took: each has its own words (word_fit). */
enum fit_case {
    CASE_SILENT,        /* Action=off, or the job fits as asked and asks for no more */
    CASE_MODE,          /* the mode is not in AllowedModes */
    CASE_NO_GPU,        /* the job asks for no GPU */
    CASE_NO_CARD,       /* a card fitgate cannot size */
    CASE_BORDER_RESIZE, /* borderline, resized to the conservative layout */
    CASE_BORDER_REJECT, /* borderline, refused */
    CASE_BORDER_WARN,   /* borderline, goes on */
    CASE_OVER_SHRINK,   /* more GPUs than it needs, shrunk */
    CASE_OVER_WARN,     /* more GPUs than it needs, goes on */
    CASE_MICRO_RESIZE,  /* micro-batch lowered, accumulation added */
    CASE_MICRO_FAIL,    /* micro-batch too large: warned or refused */
    CASE_PLAN_RESIZE,   /* more GPUs given */
    CASE_PLAN_MAX,      /* needs more GPUs than MaxGPUs */
    CASE_PLAN_ASK,      /* needs more GPUs: warned or refused */
    CASE_NONE,          /* no layout holds it */
};

/* The decision beside struct fg_decision's fields: what the words say.  suggest is a
 * request (count GPUs on nodes) to spell, shown the layout to describe, peak and peak_mb
 * the job's own layout's bytes and micro-batch before a resize. */
struct fit_call {
    enum fit_case c;
    enum fit_how how;
    uint32_t need;              /* GPUs the smallest layout needs */
    uint64_t mb;                /* the micro-batch that fits one card (FIT_MICRO) */
    bool safe;                  /* borderline: the conservative plan has a layout */
    uint32_t count, nodes;      /* the request suggested */
    struct fg_layout shown;
    uint64_t peak, peak_mb;
};

/* The job fits as asked (FIT_ONE, or a plan within its GPUs): borderline, over-request, or
 * nothing to say. */
static void decide_as_asked(const struct fg_request *q, const struct fg_assessment *a,
                            const struct fg_rules *r, struct fit_call *v,
                            struct fg_decision *d)
{
    uint32_t total = fg_request_total(q);
    d->fits = true;
    d->has_layout = true;
    if (v->how == FIT_ONE)
        one_card(a, total, a->job.batch, &d->layout);
    else
        pick_layout(&a->plan, a, total, &d->layout);
    bool borderline = v->how == FIT_ONE
                          ? a->fit.verdict == FG_FIT_BORDERLINE
                          : (double)d->layout.peak_bytes * r->conservative > (double)a->usable;
    if (borderline && r->borderline != FG_BORDER_ALLOW) {
        enum fg_borderline eff = r->borderline;
        if (eff == FG_BORDER_REJECT && r->action == FG_ACTION_WARN)
            eff = FG_BORDER_WARN;
        v->peak = d->layout.peak_bytes;
        v->peak_mb = d->layout.micro_batch;
        v->safe = a->safe_planned && a->safe.status == FG_PLAN_FOUND && a->safe.n;
        uint32_t st = 0;
        if (v->safe) {
            st = arrange(q, r, a->safe.options[0].gpus, &v->count, &v->nodes);
            v->shown = a->safe.options[0];
        }
        if (eff == FG_BORDER_REJECT && r->action == FG_ACTION_RESIZE && v->safe &&
            st <= r->max_gpus && st > total) {
            v->c = CASE_BORDER_RESIZE;
            d->kind = FG_DECIDE_RESIZE;
            d->resize_gpus = true;
            d->count = v->count;
            d->nodes = v->nodes;
            pick_layout(&a->safe, a, st, &d->layout);
            v->shown = d->layout;
        } else if (eff == FG_BORDER_REJECT) {
            v->c = CASE_BORDER_REJECT;
            d->kind = FG_DECIDE_REJECT;
            d->has_layout = false;
        } else {
            v->c = CASE_BORDER_WARN;
            d->kind = FG_DECIDE_WARN;
        }
        return;
    }
    /* over-request: the fewest GPUs that passed the gate's re-check, when it made one */
    uint32_t floor_ = v->need < r->min_gpus ? r->min_gpus : v->need;
    if (a->need_checked > floor_)
        floor_ = a->need_checked;
    uint32_t t = arrange(q, r, floor_, &v->count, &v->nodes);
    if (total <= t)
        return;
    d->enough = t;
    if (v->how == FIT_PLAN)
        v->shown = a->plan.options[0];
    if (!r->shrink) {
        v->c = CASE_OVER_WARN;
        d->kind = FG_DECIDE_WARN;
        return;
    }
    v->c = CASE_OVER_SHRINK;
    d->kind = FG_DECIDE_RESIZE;
    d->resize_gpus = true;
    d->count = v->count;
    d->nodes = v->nodes;
    if (v->how == FIT_ONE)
        one_card(a, t, a->job.batch, &d->layout);
    else
        pick_layout(&a->plan, a, t, &d->layout);
}

/* The job does not fit as asked: a smaller micro-batch, more GPUs, or nothing holds it. */
static void decide_not_fit(const struct fg_request *q, const struct fg_assessment *a,
                           const struct fg_rules *r, enum fg_decide_kind fail,
                           struct fit_call *v, struct fg_decision *d)
{
    if (v->how == FIT_MICRO) {
        one_card(a, fg_request_total(q), v->mb, &v->shown);
        if (r->action == FG_ACTION_RESIZE) {
            v->c = CASE_MICRO_RESIZE;
            d->kind = FG_DECIDE_RESIZE;
            d->resize_batch = true;
            d->has_layout = true;
            d->layout = v->shown;
            return;
        }
        v->c = CASE_MICRO_FAIL;
        d->kind = fail;
        if (fail == FG_DECIDE_WARN) {
            d->has_layout = true;
            d->layout = v->shown;
        }
        return;
    }
    if (v->how == FIT_NONE) {
        v->c = CASE_NONE;
        d->kind = r->action == FG_ACTION_WARN ? FG_DECIDE_WARN : FG_DECIDE_REJECT;
        return;
    }
    uint32_t floor_ = v->need < r->min_gpus ? r->min_gpus : v->need;
    uint32_t t = arrange(q, r, floor_, &v->count, &v->nodes);
    pick_layout(&a->plan, a, t, &v->shown);
    if (r->action == FG_ACTION_RESIZE && t <= r->max_gpus) {
        v->c = CASE_PLAN_RESIZE;
        d->kind = FG_DECIDE_RESIZE;
        d->resize_gpus = true;
        d->has_layout = true;
        d->layout = v->shown;
        d->count = v->count;
        d->nodes = v->nodes;
        return;
    }
    d->kind = r->action == FG_ACTION_RESIZE ? FG_DECIDE_REJECT : fail;
    v->c = t > r->max_gpus ? CASE_PLAN_MAX : CASE_PLAN_ASK;
}

/* Micro-batch mb with the accumulation that keeps the job's batch fits one card under the
 * headroom: the gradients alive beside its activations (fg_estimate_accum_at), re-checked
 * here as the gate checks the job, before advice names it. */
static bool micro_fits(const struct fg_assessment *a, uint64_t mb)
{
    return (double)fg_estimate_accum_at(&a->est, mb) * a->headroom <= (double)a->usable;
}

/* The decision (struct fg_decision's kind, fit, layout and request after) and, in v, which
 * one it is for its words.  No words here. */
static void decide_fit(const struct fg_request *q, const struct fg_assessment *a,
                       const struct fg_rules *r, struct fit_call *v, struct fg_decision *d)
{
    memset(d, 0, sizeof *d);
    memset(v, 0, sizeof *v);
    d->kind = FG_DECIDE_ALLOW;
    d->count = q->count;
    d->nodes = q->nodes ? q->nodes : 1;
    if (r->action == FG_ACTION_OFF)
        return;
    const uint32_t total = fg_request_total(q);
    const enum fg_decide_kind fail = r->action == FG_ACTION_WARN ? FG_DECIDE_WARN
                                                                  : FG_DECIDE_REJECT;
    /* 1. the mode; 2. no GPU, or a GPU fitgate cannot size */
    if (!(r->modes & (1u << a->job.mode)) || total == 0 || !a->have_card) {
        d->kind = fail;
        v->c = !(r->modes & (1u << a->job.mode)) ? CASE_MODE
             : total == 0                         ? CASE_NO_GPU
                                                  : CASE_NO_CARD;
        return;
    }
    /* 3. how the job can fit */
    const struct fg_fit *f = &a->fit;
    v->need = 1;
    v->mb = a->job.batch;
    if (f->verdict == FG_FIT_FITS || f->verdict == FG_FIT_BORDERLINE) {
        v->how = FIT_ONE;
        v->need = a->need_min ? a->need_min : 1;
    } else if (f->max_batch >= 1 && micro_fits(a, f->max_batch)) {
        v->how = FIT_MICRO;
        v->mb = f->max_batch;
    } else if (a->planned && a->plan.status == FG_PLAN_FOUND && a->plan.n) {
        v->how = FIT_PLAN;
        v->need = a->plan.options[0].gpus;
    } else {
        v->how = FIT_NONE;
    }
    /* 4. the job fits as asked; 5. it does not */
    /* a plan within the GPUs asked for holds it when the framework runs a layout of all
     * of them (assess.c layout_at_total) */
    if (v->how == FIT_ONE || (v->how == FIT_PLAN && v->need <= total && a->at_total_found))
        decide_as_asked(q, a, r, v, d);
    else
        decide_not_fit(q, a, r, fail, v, d);
}

/* ---- the decision's words ------------------------------------------------------------ */

/* What the words of one decision share: the job, the request, the card, the suggestion. */
struct words {
    const char *failed, *goes_on;
    char what[256], asked[128], card[48], sugg[128], desc[256];
};

/* The words of the borderline and over-request decisions (the job fits as asked). */
static void word_as_asked(const struct fg_assessment *a, const struct fg_rules *r, const struct fit_call *v,
                          struct words *w, struct fg_decision *d)
{
    char b1[32], b2[32], b3[32], b4[32];
    switch (v->c) {
    case CASE_BORDER_RESIZE: case CASE_BORDER_REJECT: case CASE_BORDER_WARN:
        line(d, 1, "estimate %s per GPU at micro-batch %llu x %llu tokens: x%.2f headroom "
                   "= %s fits the %s usable on one %s, x%.2f conservative peak = %s does "
                   "not",
             gb(v->peak, b1, sizeof b1), (unsigned long long)v->peak_mb,
             (unsigned long long)a->est.seq_len, a->headroom,
             gb((uint64_t)((double)v->peak * a->headroom), b2, sizeof b2),
             gb(a->usable, b3, sizeof b3), w->card, r->conservative,
             gb((uint64_t)((double)v->peak * r->conservative), b4, sizeof b4));
        break;
    case CASE_OVER_SHRINK: case CASE_OVER_WARN:
        if (v->how == FIT_ONE)
            numbers_one(d, a, w->card);
        else
            line(d, 1, "one %s has %s usable; %u GPU%s hold%s it: %s", w->card,
                 gb(a->usable, b1, sizeof b1), v->need, v->need > 1 ? "s" : "",
                 v->need > 1 ? "" : "s", w->desc);
        break;
    default:
        break;
    }
    switch (v->c) {
    case CASE_BORDER_RESIZE:
        line(d, 0, "resized: %s on %s is borderline (Borderline=reject); the job now "
                   "asks for %s", w->what, w->asked, w->sugg);
        line(d, 2, "layout %s; exported to the job as FITGATE_*", w->desc);
        break;
    case CASE_BORDER_REJECT:
        line(d, 0, "rejected: %s on %s is borderline (Borderline=reject)", w->what, w->asked);
        if (v->safe)
            line(d, 2, "ask for %s (%s) to stay under the conservative peak", w->sugg,
                 w->desc);
        else
            line(d, 2, "ask for a larger card, or lower --ft-seq-len / use --ft-grad-ckpt");
        break;
    case CASE_BORDER_WARN:
        line(d, 0, "warning: %s on %s is borderline; the job continues as asked", w->what,
             w->asked);
        if (v->safe)
            line(d, 2, "measure one step first, or ask for %s (%s) to stay under the "
                       "conservative peak", w->sugg, w->desc);
        else
            line(d, 2, "measure one step first (torch.cuda.max_memory_reserved)");
        break;
    case CASE_OVER_SHRINK:
        line(d, 0, "resized: %s is more than %s needs; the job now asks for %s", w->asked,
             w->what, w->sugg);
        line(d, 2, "this partition shrinks over-requests (ShrinkOverRequest=yes)");
        break;
    case CASE_OVER_WARN:
        line(d, 0, "warning: %s is more than %s needs; the job continues as asked",
             w->asked, w->what);
        line(d, 2, "%s is enough unless you want more data-parallel ranks", w->sugg);
        break;
    default:
        break;
    }
}

/* The words of the decisions where the job does not fit as asked. */
static void word_not_fit(const struct fg_assessment *a, const struct fg_rules *r, const struct fit_call *v,
                         struct words *w, struct fg_decision *d)
{
    char b1[32], b2[32], b3[32];
    const struct fg_layout *l = &v->shown;
    switch (v->c) {
    case CASE_MICRO_RESIZE:
        numbers_one(d, a, w->card);
        line(d, 0, "resized: micro-batch %llu of %s does not fit one %s; the job runs "
                   "micro-batch %llu x %llu accumulation steps",
             (unsigned long long)a->job.batch, w->what, w->card, (unsigned long long)v->mb,
             (unsigned long long)l->grad_accum);
        line(d, 2, "read FITGATE_MICRO_BATCH=%llu and FITGATE_GRAD_ACCUM=%llu in the job "
                   "(the global batch is kept)",
             (unsigned long long)v->mb, (unsigned long long)l->grad_accum);
        break;
    case CASE_MICRO_FAIL:
        numbers_one(d, a, w->card);
        line(d, 0, "%s: micro-batch %llu of %s does not fit one %s (%s)%s", w->failed,
             (unsigned long long)a->job.batch, w->what, w->card, w->asked, w->goes_on);
        line(d, 2, "use --ft-batch=%llu with %llu gradient-accumulation steps (same global "
                   "batch); micro-batch %llu fits",
             (unsigned long long)v->mb, (unsigned long long)l->grad_accum,
             (unsigned long long)v->mb);
        break;
    case CASE_PLAN_RESIZE: case CASE_PLAN_MAX: case CASE_PLAN_ASK:
        line(d, 1, "needs %s per GPU (estimate %s x %.2f headroom) at micro-batch %llu x %llu "
                   "tokens; one %s has %s usable, so it takes %u",
             gb(a->fit.need_bytes, b1, sizeof b1), gb(a->est.total_bytes, b2, sizeof b2),
             a->headroom, (unsigned long long)a->est.batch, (unsigned long long)a->est.seq_len,
             w->card, gb(a->usable, b3, sizeof b3), v->need);
        if (v->c == CASE_PLAN_RESIZE) {
            line(d, 0, "resized: %s does not fit %s; the job now asks for %s", w->what,
                 w->asked, w->sugg);
            line(d, 2, "layout %s; exported to the job as FITGATE_*", w->desc);
            break;
        }
        line(d, 0, "%s: %s does not fit %s%s", w->failed, w->what, w->asked, w->goes_on);
        if (v->c == CASE_PLAN_MAX)
            line(d, 2, "it needs %s (%s), above this partition's MaxGPUs=%u: use a larger "
                       "card or QLoRA",
                 w->sugg, w->desc, r->max_gpus);
        else
            line(d, 2, "ask for %s (%s)", w->sugg, w->desc);
        break;
    case CASE_NONE:
        line(d, 0, "%s: %s does not fit %s%s", w->failed, w->what, w->asked, w->goes_on);
        numbers_one(d, a, w->card);
        if (a->job.mode == FG_MODE_SERVE) /* serving advice for a served job */
            line(d, 2, "no split of the GPUs asked or of up to MaxGPUs=%u holds it; use a "
                       "larger card, or a shorter --ft-seq-len", r->max_gpus);
        else if (a->planned && a->plan.why[0])
            line(d, 2, "%s; use a larger card, QLoRA, or --ft-grad-ckpt", a->plan.why);
        else
            line(d, 2, "no layout within MaxGPUs=%u holds it; use a larger card, QLoRA, or "
                       "--ft-grad-ckpt", r->max_gpus);
        break;
    default:
        break;
    }
}

/* The lines for people of decision d (decide_fit's, v says which): the verdict, the
 * numbers, what to do.  Words only: d's kind, layout and request are not changed. */
static void word_fit(const struct fg_request *q, const struct fg_assessment *a,
                     const struct fg_rules *r, const struct fit_call *v, struct fg_decision *d)
{
    if (v->c == CASE_SILENT)
        return;
    struct words w;
    bool warn = d->kind == FG_DECIDE_WARN;
    w.failed = warn ? "warning" : "rejected";
    w.goes_on = warn ? "; the job continues as asked (Action=warn)" : "";
    snprintf(w.what, sizeof w.what, "%s of %s", mode_words(a->job.mode), q->model);
    fg_request_spell(q, q->count, q->nodes ? q->nodes : 1, w.asked, sizeof w.asked);
    card_label(q, w.card, sizeof w.card);
    w.sugg[0] = w.desc[0] = '\0';
    if (v->count)
        fg_request_spell(q, v->count, v->nodes, w.sugg, sizeof w.sugg);
    if (v->shown.gpus)
        layout_desc(&v->shown, w.desc, sizeof w.desc);
    char b1[32], b2[32];
    switch (v->c) {
    case CASE_MODE: {
        char modes[64];
        fg_modes_str(r->modes, modes, sizeof modes);
        line(d, 0, "%s: --ft-mode=%s is not allowed %s%s%s", w.failed,
             fg_mode_name(a->job.mode), q->partition[0] ? "in partition " : "on this cluster",
             q->partition, w.goes_on);
        line(d, 1, "the site allows AllowedModes=%s here", modes);
        line(d, 2, "use --ft-mode=%.*s%s", (int)strcspn(modes, ","), modes,
             q->partition[0] ? ", or another partition" : "");
        return;
    }
    case CASE_NO_GPU: case CASE_NO_CARD:
        if (v->c == CASE_NO_GPU)
            line(d, 0, "%s: %s asks for no GPU%s", w.failed, w.what, w.goes_on);
        else
            line(d, 0, "%s: %s asks for %s, a GPU whose type fitgate cannot size%s", w.failed,
                 w.what, w.asked, w.goes_on);
        line(d, 1, "it needs %s per GPU (estimate %s x %.2f headroom) at micro-batch %llu x "
                   "%llu tokens",
             gb((uint64_t)((double)a->est.total_bytes * a->headroom), b1, sizeof b1),
             gb(a->est.total_bytes, b2, sizeof b2), a->headroom,
             (unsigned long long)a->est.batch, (unsigned long long)a->est.seq_len);
        line(d, 2, "name the card: --gres=gpu:TYPE:N (or --ft-gpu=TYPE --ft-gpus=N); "
                   "'fitgate plan %s' lists the cards that fit", q->model);
        return;
    default:
        break;
    }
    if (d->fits)
        word_as_asked(a, r, v, &w, d);
    else
        word_not_fit(a, r, v, &w, d);
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

/* A serving engine's answer in its own terms: its budget and what comes off it, how many
 * sequences of the asked length its KV cache holds, and the longest max_model_len one
 * sequence fits; where vLLM would refuse to start, its own message and numbers
 * (memory/serve_engine.h) on the last line. */
static void serve_numbers(const struct fg_assessment *a, const struct fg_request *q,
                          struct fg_decision *d)
{
    char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32], b7[32], card[48], graphs[64] = "";
    char sampler[80] = "";
    card_label(q, card, sizeof card);
    uint64_t n = a->fit.max_batch;
    if (a->serve_graphs)
        snprintf(graphs, sizeof graphs, ", CUDA graphs %s", gb(a->serve_graphs, b6, sizeof b6));
    if (a->serve_sampler)
        snprintf(sampler, sizeof sampler, " (its sampler over %u sequences %s)", a->serve_seqs,
                 gb(a->serve_sampler, b7, sizeof b7));
    char len[96];
    if (a->serve_max_len)
        snprintf(len, sizeof len, "; one sequence fits up to max_model_len %llu",
                 (unsigned long long)a->serve_max_len);
    else
        snprintf(len, sizeof len, "; not one token's cache fits");
    char run[192];
    if (a->fw->serve_budget == FG_SERVE_SGLANG) /* its reserve is the card's rest */
        snprintf(run, sizeof run, "and beside that share a reserve of %s (a chunked prefill of "
                 "%u tokens, CUDA graphs %s)", gb(a->serve_reserve, b3, sizeof b3),
                 a->serve_tokens, gb(a->serve_graph_reserve, b6, sizeof b6));
    else
        snprintf(run, sizeof run, "profile run of %u tokens %s", a->serve_tokens,
                 gb(a->serve_profile, b3, sizeof b3));
    line(d, 1, "%s takes %.3g x %s = %s per GPU: weights %s, %s%s%s; KV cache left "
               "%s, %s per sequence of %llu tokens: %llu at once%s",
         a->fw->label, a->gpu_util, card, gb(a->usable, b1, sizeof b1),
         gb(a->est.static_bytes, b2, sizeof b2), run, sampler, graphs,
         gb(a->serve_kv_budget, b4, sizeof b4), gb(a->kv_seq_bytes, b5, sizeof b5),
         (unsigned long long)a->est.seq_len, (unsigned long long)n, len);
    if (a->serve_refusal != FG_VLLM_STARTS) {
        char said[FG_DECIDE_LINE - 32];
        fg_vllm_refusal_text(a->serve_refusal, a->serve_kv_avail, a->kv_seq_bytes,
                             a->est.seq_len, a->serve_max_len, said, sizeof said);
        double short_gib = ((double)a->kv_seq_bytes - (double)a->serve_kv_avail) / (1 << 30);
        line(d, 3, "%s would not start (KV %.2f GiB short): %s",
             a->fw->label, short_gib, said);
    }
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
    struct fit_call v;
    decide_fit(q, a, r, &v, d);
    word_fit(q, a, r, &v, d);
    d->by_rule = v.c == CASE_MODE || v.c == CASE_NO_GPU || v.c == CASE_NO_CARD;
    if (d->kind != FG_DECIDE_ALLOW && !d->fits && a->have_card)
        suggest(a, d);
    if (a->gpu_util > 0 && a->have_card && r->action != FG_ACTION_OFF &&
        (r->modes & (1u << a->job.mode)) && (d->fits || d->kind == FG_DECIDE_REJECT))
        serve_numbers(a, q, d);
    if (a->gen_budget && a->have_card)
        fg__decide_generation(a, q, r, d);
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
    /* an override takes the risk of a job that may not fit, not the site's other rules (a
     * mode it does not allow, a job that asks for no GPU or for a card nobody can size) */
    if (d->by_rule) {
        line(d, 3, "--ft-override lets through a job that may not fit, not this refusal");
        return;
    }
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

void fg_decide_invalid(const struct fg_request *q, const char *detail, struct fg_decision *d)
{
    memset(d, 0, sizeof *d);
    d->kind = FG_DECIDE_REJECT;
    line(d, 0, "rejected: %.370s", detail ? detail : "the job's options contradict each other");
    if (q && q->via == FG_VIA_GPUS && q->nodes > 1) {
        /* sbatch: --gpus is the job's total; --gpus-per-node is what multiplies by --nodes */
        char req[256];
        fg_request_describe(q, req, sizeof req);
        line(d, 1, "the request is %s", req);
    }
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
    /* a count unsure only of a tied head written or not sizes the same memory either way */
    if (!fg_model_unsure_of_memory(m) || r->on_unknown == FG_ONUNK_ALLOW)
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
