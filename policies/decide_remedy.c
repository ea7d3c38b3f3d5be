/*
 * decide_remedy.c - the decision module's words for the remedies (decide.h
 * fg_decide_remedies): what the user changes, in their own spelling, and the figure the
 * re-check reached.  The remedies themselves are found and re-checked in remedy.c.
 */
#include <stdio.h>
#include <string.h>

#include "decide.h"
#include "decide_int.h"

/* Layout dimensions a layout remedy sets: said through the layout, not as options, unless
 * the job declared them (then the user writes the new value). */
static bool is_layout_opt(unsigned opt)
{
    return opt == FG_JOBOPT_TP || opt == FG_JOBOPT_PP || opt == FG_JOBOPT_EP ||
           opt == FG_JOBOPT_DP || opt == FG_JOBOPT_ZERO;
}

/* x's options as the user types them: "--ft-grad-ckpt --ft-zero=3"; layout dimensions only
 * for a switch (a layout remedy describes its layout instead). */
static void options_spell(const struct fg_remedy *x, const char *sp, char *buf, size_t cap)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < x->n_edits && off < cap; i++) {
        const struct fg_remedy_edit *e = &x->edits[i];
        const struct fg_jobopt *o = fg_jobopt_at(e->opt);
        if (!o || (x->kind != FG_REMEDY_SWITCH && is_layout_opt(e->opt)))
            continue;
        int w = o->arg ? snprintf(buf + off, cap - off, "%s%s%s=%s", off ? " " : "", sp,
                                  o->name, e->value)
                       : snprintf(buf + off, cap - off, "%s%s%s", off ? " " : "", sp, o->name);
        if (w < 0)
            break;
        off += (size_t)w;
    }
}

static bool has_edit(const struct fg_remedy *x, unsigned opt)
{
    for (size_t i = 0; i < x->n_edits; i++)
        if (x->edits[i].opt == opt)
            return true;
    return false;
}

/* A remedy the plugin may apply itself: only the count, the nodes and the layout it
 * exports (FITGATE_*: TP, PP, EP, DP, ZeRO, micro-batch) change. */
static bool slurm_only(const struct fg_remedy *x)
{
    for (size_t i = 0; i < x->n_edits; i++)
        if (!is_layout_opt(x->edits[i].opt) && x->edits[i].opt != FG_JOBOPT_BATCH)
            return false;
    return x->kind == FG_REMEDY_GPUS;
}

/* One remedy's line: "same GPUs: --ft-grad-ckpt fits 1 x A100 40 GB at 30.1 GB per GPU". */
static void remedy_line(const struct fg_request *q, const struct fg_assessment *a,
                        const char *sp, const struct fg_remedy *x, size_t i, char *out)
{
    char opts[200], req[128], card[48], peak[32], use[32], desc[320], acc[96] = "";
    options_spell(x, sp, opts, sizeof opts);
    fg_request_spell(q, x->count, x->nodes, req, sizeof req);
    card_label(q, card, sizeof card);
    gb(x->layout.peak_bytes, peak, sizeof peak);
    gb(a->usable, use, sizeof use);
    uint64_t mb = x->layout.micro_batch ? x->layout.micro_batch : 1;
    uint64_t steps = (a->job.batch + mb - 1) / mb;
    if (has_edit(x, FG_JOBOPT_BATCH) && steps > 1)
        snprintf(acc, sizeof acc, " with %llu gradient-accumulation steps (the global batch "
                                  "kept)", (unsigned long long)steps);
    switch (x->kind) {
    case FG_REMEDY_SWITCH:
        fg__decide_say(out, "remedy %zu (same GPUs): %s%s fits %u x %s at %s per GPU (%s "
                            "usable)", i + 1, opts, acc, x->gpus, card, peak, use);
        break;
    case FG_REMEDY_GPUS:
        fg__decide_layout_desc(&x->layout, desc, sizeof desc);
        fg__decide_say(out, "remedy %zu (more GPUs): %s%s%s%s (%s)", i + 1, req, opts[0] ? " " : "",
                       opts, acc, desc);
        break;
    default:
        fg__decide_layout_desc(&x->layout, desc, sizeof desc);
        fg__decide_say(out, "remedy %zu (another framework): %s %s%s (%s)", i + 1, opts, req, acc,
                       desc);
        break;
    }
}

/* The resize the decision made, replaced by the first re-checked remedy that changes only
 * what Slurm controls; a rejection when none passed. */
static void recheck_resize(const struct fg_request *q, const struct fg_assessment *a,
                           const struct fg_remedies *rem, struct fg_decision *d)
{
    char asked[128], sugg[128], desc[320];
    fg_request_spell(q, q->count, q->nodes ? q->nodes : 1, asked, sizeof asked);
    for (size_t i = 0; i < rem->n; i++) {
        const struct fg_remedy *x = &rem->r[i];
        if (!slurm_only(x))
            continue;
        d->count = x->count;
        d->nodes = x->nodes;
        d->layout = x->layout;
        fg_request_spell(q, x->count, x->nodes, sugg, sizeof sugg);
        fg__decide_layout_desc(&x->layout, desc, sizeof desc);
        fg__decide_say(d->lines[0], "resized: %s of %s does not fit %s; the job now asks for %s",
                       fg__decide_mode_words(a->job.mode), q->model, asked, sugg);
        fg__decide_say(d->lines[2], "layout %s; exported to the job as FITGATE_* (re-checked)",
                       desc);
        return;
    }
    d->kind = FG_DECIDE_REJECT;
    d->resize_gpus = false;
    d->has_layout = false;
    d->count = q->count;
    d->nodes = q->nodes ? q->nodes : 1;
    fg__decide_say(d->lines[0], "rejected: %s of %s does not fit %s, and no larger request in a "
                                "layout its framework runs passes the check",
                   fg__decide_mode_words(a->job.mode), q->model, asked);
}

void fg_decide_remedies(const struct fg_request *q, const struct fg_assessment *a,
                        const struct fg_remedies *rem, struct fg_decision *d)
{
    /* one spelling for every front end, as the other lines' "--ft-batch" */
    const char *sp = "--ft-";
    d->n_remedies = 0;
    if (!strncmp(d->lines[3], "fitgate: suggestion, on another framework", 41)) {
        /* other frameworks are remedies now, re-checked; a card note stays */
        d->lines[3][0] = '\0';
        if (q->note[0])
            fg__decide_say(d->lines[3], "%s", q->note);
    }
    if (d->resize_gpus)
        recheck_resize(q, a, rem, d);
    if (d->kind == FG_DECIDE_RESIZE)
        return; /* the resize is the answer; lines[2] says what was exported */
    if (!rem->n) {
        fg__decide_say(d->lines[2], "no change fitgate tried passes the check (switches %s "
                                    "runs, more GPUs up to the partition's limit, other "
                                    "frameworks): use a larger card",
                       a->fw->name);
        return;
    }
    fg__decide_say(d->lines[2], "what would fit, cheapest first (each re-checked by the same "
                                "check):");
    for (size_t i = 0; i < rem->n && i < FG_REMEDY_MAX; i++)
        remedy_line(q, a, sp, &rem->r[i], i, d->remedies[d->n_remedies++]);
}

size_t fg_decide_lines(const struct fg_decision *d, const char **out, size_t cap)
{
    size_t n = 0;
    for (int i = 0; i < FG_DECIDE_LINES && n < cap; i++) {
        if (d->lines[i][0])
            out[n++] = d->lines[i];
        if (i == 2)
            for (size_t k = 0; k < d->n_remedies && n < cap; k++)
                out[n++] = d->remedies[k];
    }
    return n;
}
