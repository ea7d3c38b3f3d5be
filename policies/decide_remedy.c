/*
 * decide_remedy.c - the decision module's words for the remedies (decide.h
 * fg_decide_remedies): what the user changes, in their own spelling, and the figure the
 * re-check reached.  The remedies themselves are found and re-checked in remedy.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decide.h"
#include "decide_int.h"

/* Options a resize may set itself: the layout it exports (FITGATE_*: TP, PP, EP, CP, DP,
 * ZeRO, micro-batch, accumulation, a vLLM server's GPUs). */
static bool is_layout_opt(unsigned opt)
{
    return opt == FG_JOBOPT_TP || opt == FG_JOBOPT_PP || opt == FG_JOBOPT_EP ||
           opt == FG_JOBOPT_CP || opt == FG_JOBOPT_DP || opt == FG_JOBOPT_ZERO ||
           opt == FG_JOBOPT_BATCH || opt == FG_JOBOPT_GRAD_ACCUM || opt == FG_JOBOPT_GEN_GPUS;
}

/* A remedy the plugin may apply itself: only the count, the nodes and the layout it
 * exports change. */
static bool slurm_only(const struct fg_remedy *x)
{
    for (size_t i = 0; i < x->n_edits; i++)
        if (!is_layout_opt(x->edits[i].opt))
            return false;
    return x->kind == FG_REMEDY_GPUS;
}

/*
 * One remedy's line: the options and request to paste, then in brackets what they come to
 * (explanation only): "remedy 1 (same GPUs): --ft-grad-ckpt --ft-tp=1 --ft-pp=1 --ft-dp=1
 * --ft-zero=0 (fits 1 x A100 40 GB at 30.1 GB per GPU of 41.5 GB usable; one GPU)".
 */
static void remedy_line(const struct fg_request *q, const struct fg_assessment *a,
                        const struct fg_remedies *rem, const char *sp,
                        const struct fg_remedy *x, size_t i, char *out)
{
    char flags[320], card[48], peak[32], use[32], desc[320], acc[96] = "";
    fg_remedy_flags(x, q, sp, flags, sizeof flags);
    card_label(q, card, sizeof card);
    /* the re-check's own figures: its peak, or an engine's budget, and its room */
    gb(x->usable ? x->need : x->layout.peak_bytes, peak, sizeof peak);
    gb(x->usable ? x->usable : a->usable, use, sizeof use);
    fg__decide_layout_desc(&x->layout, desc, sizeof desc);
    uint64_t steps = x->layout.grad_accum;
    for (size_t k = 0; k < x->n_edits; k++)
        if (x->edits[k].opt == FG_JOBOPT_GRAD_ACCUM)
            steps = strtoull(x->edits[k].value, NULL, 10);
    if (steps > 1)
        snprintf(acc, sizeof acc, ", %llu gradient-accumulation steps",
                 (unsigned long long)steps);
    switch (x->kind) {
    case FG_REMEDY_SWITCH:
        fg__decide_say(out, "remedy %zu (same GPUs): %s (fits %u x %s at %s per GPU of %s "
                            "usable; %s%s)", i + 1, flags, x->gpus, card, peak, use, desc, acc);
        break;
    case FG_REMEDY_GPUS:
        fg__decide_say(out, "remedy %zu (more GPUs): %s (%u x %s; %s%s)", i + 1, flags,
                       x->gpus, card, desc, acc);
        break;
    case FG_REMEDY_BEYOND:
        fg__decide_say(out, "remedy %zu (more GPUs than MaxGPUs=%u): %s (%u x %s, above this "
                            "partition's limit of %u; %s%s)", i + 1, rem->max_gpus, flags,
                       x->gpus, card, rem->max_gpus, desc, acc);
        break;
    default:
        fg__decide_say(out, "remedy %zu (another framework): %s (%u x %s; %s%s)", i + 1, flags,
                       x->gpus, card, desc, acc);
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
    bool serve = a->job.mode == FG_MODE_SERVE;
    if (!rem->n) {
        fg__decide_say(d->lines[2], "no change fitgate tried passes the check (the switches %s "
                                    "runs for %s, more GPUs up to %u, other frameworks): use a "
                                    "larger card%s",
                       a->fw->name, fg__decide_mode_words(a->job.mode), FG_ASSESS_MAX_GPUS,
                       serve ? " or a shorter --ft-seq-len" : "");
        return;
    }
    if (rem->r[0].kind == FG_REMEDY_BEYOND)
        fg__decide_say(d->lines[2], "nothing within this partition's MaxGPUs=%u fits; the fewest "
                                    "GPUs that do (re-checked; paste the options onto the job's "
                                    "command):", rem->max_gpus);
    else
        fg__decide_say(d->lines[2], "what would fit, cheapest first (each re-checked by the "
                                    "same check; paste the options onto the job's command):");
    for (size_t i = 0; i < rem->n && i < FG_REMEDY_MAX; i++)
        remedy_line(q, a, rem, sp, &rem->r[i], i, d->remedies[d->n_remedies++]);
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
