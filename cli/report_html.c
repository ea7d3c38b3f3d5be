/*
 * report_html.c - the HTML report of `fitgate plan --html FILE` (see
 * report_html.h for the sections and the self-contained rule).
 *
 * Everything is computed again here from the model and the options, with
 * the same engine calls as cmd_plan.c, so the plan command only adds one
 * call.  Drawing is plain arithmetic into SVG user units; text widths are
 * estimated (no fonts are loaded, the page uses the reader's sans-serif).
 */
#include "report_html.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "decide.h"
#include "format.h"
#include "fit.h"
#include "hw/gpu.h"
#include "html.h"
#include "memory.h"
#include "plan.h"

/* The seeds' card table, shared with `fitgate plan`: one row per card size
 * users ask about (the SXM H100: "h100" alone names the PCIe card first in
 * gpus.conf).  The default layout card follows. */
const char *const fg_cli_default_cards[] = {"t4", "l4", "a100_40g", "h100_sxm", "h200", NULL};


#define REPORT_DEFAULT_CARD "h200"
#define REPORT_MAX_CARDS 8

static const enum fg_mode table_modes[3] = {FG_MODE_FULL, FG_MODE_LORA, FG_MODE_SERVE};
static const char *const table_mode_title[3] = {"Full fine-tune", "LoRA", "Serve bf16"};

/* Breakdown keys in drawing order, with their colours (Tableau 10: distinct, print-safe). */
static const struct {
    const char *key, *label, *colour;
} keys[] = {
    {"weights", "weights", "#4e79a7"},         {"gradients", "gradients", "#f28e2b"},
    {"optimizer", "optimizer", "#e15759"},     {"adapters", "adapters", "#76b7b2"},
    {"activations", "activations", "#59a14f"}, {"logits", "logits", "#edc948"},
    {"kv_cache", "KV cache", "#b07aa1"},       {"ssm_state", "SSM state", "#ff9da7"},
    {"overhead", "overhead", "#9c755f"},
};
#define NKEYS (sizeof keys / sizeof keys[0])

static const char *const mode_colour[4] = {"#4e79a7", "#59a14f", "#b07aa1", "#e15759"};

/* ---- small output helpers ------------------------------------------------ */

/* Width of text at font-size px in a sans-serif face, estimated (no font metrics offline). */
static double text_w(const char *s, double px)
{
    return (double)strlen(s) * px * 0.56;
}

/* ---- the numbers ------------------------------------------------------- */

struct card {
    const struct fg_gpu *gpu;
    uint64_t usable;
    const struct fg_estimate *est;  /* full, lora, serve: the report's, one set for every card */
    struct fg_fit fit[3];
    uint32_t split_gpus[3]; /* smallest layout when one card is not enough; 0 = none */
};

struct report {
    const struct fg_model *m;
    const struct fg_cli_opts *o;
    const struct fg_report_gate *gate; /* or NULL */
    struct fg_plan_opts po;
    struct fg_estimate est;          /* the user's job */
    const struct fg_gpu *card;       /* --gpu, or H200 */
    uint64_t card_usable;
    struct fg_fit card_fit;
    struct fg_plan plan;             /* layouts on card */
    struct card cards[REPORT_MAX_CARDS];
    size_t ncards;
    /* the lines of the batch chart: the table's modes, plus the user's mode when it is
     * none of them (qlora) */
    struct fg_estimate mode_est[4];
    const char *mode_name[4];
    size_t nmodes;
};

/* No card in the request: the job on --gpu or H200, under the gate's rules (or the default
 * policy's) with the page's headroom; total gets the GPUs it was judged on. */
static int assess_on_page_card(struct report *r, const struct fg_gpu_table *t, uint32_t *total,
                               struct fg_err *err)
{
    const struct fg_cli_opts *o = r->o;
    const char *want = o->gpu ? o->gpu : REPORT_DEFAULT_CARD;
    unsigned have = 0;
    r->card = fg_gpu_find(t, want, &have);
    if (!r->card)
        return fg_err_set(err, FG_E_NOTFOUND, "unknown GPU '%s'; 'fitgate gpus --table' lists "
                          "the known cards and aliases", want);
    uint32_t asked = r->gate ? r->gate->gpus : 0;
    *total = asked ? asked : have ? have : 1;
    struct fg_policy pol;
    fg_policy_init(&pol);
    struct fg_rules rules = r->gate && r->gate->rules ? *r->gate->rules : pol.rules;
    rules.headroom = o->headroom;
    rules.conservative = o->conservative;
    struct fg_assessment *a = calloc(1, sizeof *a);
    if (!a)
        return fg_err_set(err, FG_E_NOMEM, "out of memory assessing the job");
    int rc = fg_assess(r->m, &o->spec, r->card, *total, &rules, a, err);
    if (!rc) {
        r->est = a->est;
        r->card_fit = a->fit;
        r->card_usable = a->usable;
    }
    free(a);
    return rc;
}

static int compute(struct report *r, struct fg_err *err)
{
    const struct fg_model *m = r->m;
    const struct fg_cli_opts *o = r->o;
    int rc;
    fg_plan_opts_default(&r->po);
    r->po.fit.headroom = o->headroom;
    r->po.fit.conservative = o->conservative;
    r->po.global_batch = o->global_batch;
    const struct fg_report_gate *gate = r->gate;
    const struct fg_gpu_table *t = gate && gate->table ? gate->table : fg_gpu_table_builtin();
    uint32_t total = 1;
    if (gate && gate->a && gate->card) {
        /* the verdict on the card is the gate's: the page shows what plan and check said */
        r->card = gate->card;
        total = gate->gpus ? gate->gpus : 1;
        r->est = gate->a->est;
        r->card_fit = gate->a->fit;
        r->card_usable = gate->a->usable;
    } else if ((rc = assess_on_page_card(r, t, &total, err))) {
        return rc;
    }
    if (total > r->po.max_gpus)
        r->po.max_gpus = total;
    if ((rc = fg_plan_layouts(m, &o->job, r->card_usable, &r->po, &r->plan, err)))
        return rc;

    /* the card table: the default rows, then the asked-for card if it is none of them */
    const struct fg_gpu *rows[REPORT_MAX_CARDS];
    size_t n = 0;
    for (int i = 0; fg_cli_default_cards[i] && n < REPORT_MAX_CARDS; i++) {
        const struct fg_gpu *g = fg_gpu_find(t, fg_cli_default_cards[i], NULL);
        if (g)
            rows[n++] = g;
    }
    bool listed = false;
    for (size_t i = 0; i < n; i++)
        listed = listed || rows[i] == r->card;
    if (!listed && n < REPORT_MAX_CARDS)
        rows[n++] = r->card;
    /* chart lines: the user's job first when its mode is not a table column, then the
     * table's three jobs, which every card of the table is fitted with (an estimate does
     * not depend on the card) */
    bool own = false;
    for (int k = 0; k < 3; k++)
        own = own || table_modes[k] == o->job.mode;
    if (!own) {
        r->mode_est[r->nmodes] = r->est;
        r->mode_name[r->nmodes++] = fg_mode_name(o->job.mode);
    }
    const struct fg_estimate *table_est = &r->mode_est[r->nmodes];
    for (int k = 0; k < 3; k++) {
        struct fg_job j = fg_cli_job_for_mode(o, table_modes[k]);
        if ((rc = fg_memory_estimate(m, &j, &r->mode_est[r->nmodes], err)))
            return rc;
        r->mode_name[r->nmodes++] = fg_mode_name(table_modes[k]);
    }
    for (size_t i = 0; i < n; i++) {
        struct card *c = &r->cards[r->ncards++];
        c->gpu = rows[i];
        c->usable = fg_fit_usable(c->gpu->memory_gb, c->gpu->memory_bytes, &r->po.fit);
        c->est = table_est;
        for (int k = 0; k < 3; k++) {
            fg_fit_card(&c->est[k], c->usable, &r->po.fit, &c->fit[k]);
            c->split_gpus[k] = 0;
            if (c->fit[k].verdict == FG_FIT_SPLIT) {
                struct fg_job j = fg_cli_job_for_mode(o, table_modes[k]);
                struct fg_plan p;
                if ((rc = fg_plan_layouts(m, &j, c->usable, &r->po, &p, err)))
                    return rc;
                if (p.status == FG_PLAN_IMPOSSIBLE || !p.n)
                    c->fit[k].verdict = FG_FIT_NO;
                else
                    c->split_gpus[k] = p.options[0].gpus;
            }
        }
    }
    return 0;
}

/* ---- page head and summary -------------------------------------------- */

static const char css[] =
    ":root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#fff;--soft:#f6f8fa}"
    "*{box-sizing:border-box}"
    "body{margin:0;padding:24px 32px 48px;font:14px/1.45 system-ui,-apple-system,'Segoe UI',"
    "Roboto,'Helvetica Neue',Arial,sans-serif;color:var(--fg);background:var(--bg);"
    "max-width:1320px}"
    "h1{font-size:24px;margin:0 0 4px;word-break:break-all}"
    "h2{font-size:18px;margin:32px 0 8px;padding-bottom:4px;border-bottom:1px solid var(--line)}"
    "p{margin:6px 0}.muted{color:var(--muted)}"
    "table{border-collapse:collapse;margin:8px 0;font-variant-numeric:tabular-nums}"
    "th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}"
    "th{background:var(--soft);font-weight:600}"
    "td.num,th.num{text-align:right}"
    "code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}"
    ".facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(200px,1fr));gap:8px;"
    "margin:12px 0}"
    ".fact{background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:8px 12px}"
    ".fact b{display:block;font-size:20px}"
    ".fits{background:#dafbe1}.borderline{background:#fff8c5}.split{background:#ddf4ff}"
    ".no{background:#ffebe9}"
    ".verdict{display:inline-block;padding:2px 8px;border-radius:12px;font-weight:600}"
    "svg{display:block;max-width:100%;height:auto}"
    "svg text{font-family:system-ui,-apple-system,'Segoe UI',Roboto,Arial,sans-serif}"
    ".legend span{display:inline-block;margin-right:14px;white-space:nowrap}"
    ".sw{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:4px;"
    "vertical-align:-1px}"
    "table.structure td{padding:2px 8px}"
    "footer{margin-top:40px;color:var(--muted);font-size:12px}";

static void write_head(FILE *f, const struct report *r)
{
    char title[sizeof r->m->id + 64];
    snprintf(title, sizeof title, "fitgate: %s (%s)", r->m->id, fg_mode_name(r->o->job.mode));
    fg_cli_html_head(f, title, css);
}

static void write_summary(FILE *f, const struct report *r)
{
    const struct fg_model *m = r->m;
    const struct fg_job *j = &r->o->job;
    const struct fg_estimate *e = &r->est;
    char a[32], b[32];
    fputs("<header>\n<h1>", f);
    fg_cli_html_esc(f, m->id);
    fputs("</h1>\n<p class=\"muted\">", f);
    fg_cli_html_esc(f, m->model_type);
    fputs("; read as ", f);
    fg_cli_html_esc(f, m->reader);
    fprintf(f, "; count %s", fg_certainty_name(m->certainty));
    fprintf(f, "; %s parameters stored in the checkpoint", fg_cli_count(m->params_total, a, sizeof a));
    if (m->experts)
        fprintf(f, ", %llu experts top-%llu (%s active)", (unsigned long long)m->experts,
                (unsigned long long)m->top_k, fg_cli_count(fg_model_active_params(m), b, sizeof b));
    fprintf(f, "; %llu layers</p>\n", (unsigned long long)m->layers);
    for (size_t i = 0; i < m->n_notes; i++) {
        fputs("<p class=\"muted\">note: ", f);
        fg_cli_html_esc(f, m->notes[i]);
        fputs("</p>\n", f);
    }
    for (size_t i = 0; i < m->n_assumed; i++) {
        fputs("<p class=\"muted\">assumed: ", f);
        fg_cli_html_esc(f, m->assumed[i]);
        fputs("</p>\n", f);
    }
    fputs("</header>\n<section id=\"summary\">\n<h2>Job</h2>\n<p>", f);
    fprintf(f, "%s, %s, %s", fg_mode_name(j->mode), fg_precision_name(j->precision),
            fg_optimizer_name(j->optimizer));
    if (j->mode == FG_MODE_LORA || j->mode == FG_MODE_QLORA)
        fprintf(f, ", LoRA r=%u", j->lora_rank);
    if (j->grad_ckpt)
        fputs(", gradient checkpointing", f);
    if (j->zero)
        fprintf(f, ", ZeRO-%u", j->zero);
    if (j->unsharded_copy)
        fputs(", unsharded weight copy beside ZeRO-3 shards", f);
    if (j->attention == FG_ATTN_EAGER)
        fputs(", eager attention", f);
    fprintf(f, "; micro-batch %llu &times; %llu tokens; %.2f&times; headroom, %.2f&times; "
               "conservative peak</p>\n",
            (unsigned long long)e->batch, (unsigned long long)e->seq_len, r->o->headroom,
            r->o->conservative);
    fputs("<div class=\"facts\">\n", f);
    fprintf(f, "<div class=\"fact\">estimate at micro-batch %llu<b>%s</b></div>\n",
            (unsigned long long)e->batch, fg_cli_gb(e->total_bytes, a, sizeof a));
    fprintf(f, "<div class=\"fact\">static (does not grow with the batch)<b>%s</b></div>\n",
            fg_cli_gb(e->static_bytes, a, sizeof a));
    fprintf(f, "<div class=\"fact\">per sample<b>%s</b></div>\n",
            fg_cli_gb(e->per_sample_bytes, a, sizeof a));
    if (e->step_bytes)
        fprintf(f, "<div class=\"fact\">optimizer step<b>%s</b></div>\n",
                fg_cli_gb(e->step_bytes, a, sizeof a));
    fprintf(f, "<div class=\"fact\">on ");
    fg_cli_html_esc(f, r->card->label);
    const char *v = r->card_fit.verdict == FG_FIT_SPLIT && r->plan.status == FG_PLAN_IMPOSSIBLE
                        ? "no" : fg_verdict_name(r->card_fit.verdict);
    fprintf(f, " (%s usable)<b><span class=\"verdict %s\">%s</span></b></div>\n",
            fg_cli_gb(r->card_usable, a, sizeof a), v, v);
    fputs("</div>\n<p>", f);
    if (r->card_fit.verdict == FG_FIT_FITS || r->card_fit.verdict == FG_FIT_BORDERLINE) {
        fprintf(f, "One ");
        fg_cli_html_esc(f, r->card->label);
        fprintf(f, " holds this job: it needs %s with headroom; the largest micro-batch is "
                   "%llu.%s",
                fg_cli_gb(r->card_fit.need_bytes, a, sizeof a),
                (unsigned long long)r->card_fit.max_batch,
                r->card_fit.verdict == FG_FIT_BORDERLINE
                    ? " Above the card on the conservative peak: measure one step first."
                    : "");
    } else if (r->plan.status == FG_PLAN_IMPOSSIBLE) {
        fg_cli_html_esc(f, r->plan.why);
    } else {
        fprintf(f, "One ");
        fg_cli_html_esc(f, r->card->label);
        fprintf(f, " cannot hold micro-batch %llu (it needs %s with headroom); the smallest "
                   "layout that fits uses %u GPUs (below).",
                (unsigned long long)e->batch, fg_cli_gb(r->card_fit.need_bytes, a, sizeof a),
                r->plan.n ? r->plan.options[0].gpus : 0);
    }
    fputs("</p>\n</section>\n", f);
}

/* ---- breakdown: stacked bars ---------------------------------------------- */

struct bar {
    const char *title;
    uint64_t seg[NKEYS];
    uint64_t total;
    bool step;          /* the optimizer-step phase of a full fine-tune */
};

static size_t key_index(const char *key)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (!strcmp(keys[i].key, key))
            return i;
    return NKEYS - 1; /* an unknown key is drawn as overhead */
}

static uint64_t sub_sat(uint64_t a, uint64_t b)
{
    return a > b ? a - b : 0;
}

/*
 * The bars of an estimate.  A full fine-tune has two phases (memory.c):
 * the backward peak (weights, optimizer state, static overhead, the batch's
 * activations and logits) and the optimizer step (weights, gradients, state,
 * the step's temporaries); their parts are recovered from the totals, so
 * each bar sums exactly to its phase's bytes.
 */
static size_t make_bars(const struct fg_estimate *e, struct bar *bars, uint64_t *step_temp)
{
    const struct fg_breakdown *b = &e->b;
    memset(bars, 0, 2 * sizeof *bars);
    *step_temp = 0;
    if (e->step_bytes) {
        uint64_t temp = sub_sat(e->step_bytes, b->weights + b->gradients + b->optimizer);
        *step_temp = temp;
        struct bar *p = &bars[0], *s = &bars[1];
        p->title = "backward peak";
        p->seg[key_index("weights")] = b->weights;
        p->seg[key_index("optimizer")] = b->optimizer;
        p->seg[key_index("adapters")] = b->adapters;
        p->seg[key_index("activations")] = b->activations;
        p->seg[key_index("logits")] = b->logits;
        p->seg[key_index("overhead")] = sub_sat(b->overhead, temp);
        s->title = "optimizer step";
        s->step = true;
        s->seg[key_index("weights")] = b->weights;
        s->seg[key_index("gradients")] = b->gradients;
        s->seg[key_index("optimizer")] = b->optimizer;
        s->seg[key_index("overhead")] = temp;
        for (int i = 0; i < 2; i++)
            for (size_t k = 0; k < NKEYS; k++)
                bars[i].total += bars[i].seg[k];
        return 2;
    }
    struct bar *p = &bars[0];
    p->title = "estimate";
    p->seg[key_index("weights")] = b->weights;
    p->seg[key_index("gradients")] = b->gradients;
    p->seg[key_index("optimizer")] = b->optimizer;
    p->seg[key_index("adapters")] = b->adapters;
    p->seg[key_index("activations")] = b->activations;
    p->seg[key_index("logits")] = b->logits;
    p->seg[key_index("kv_cache")] = b->kv_cache;
    p->seg[key_index("ssm_state")] = b->ssm_state;
    p->seg[key_index("overhead")] = b->overhead;
    for (size_t k = 0; k < NKEYS; k++)
        p->total += p->seg[k];
    return 1;
}

/* Whether estimate line i belongs to bar (the step's temporary and the gradients are step-only). */
static bool line_in_bar(const struct fg_estimate *e, size_t i, const struct bar *bar,
                        size_t temp_line)
{
    const struct fg_line *l = &e->lines[i];
    if (!e->step_bytes)
        return true;
    bool step_only = !strcmp(l->key, "gradients") || i == temp_line;
    if (bar->step)
        return step_only || (!l->per_sample && (!strcmp(l->key, "weights") ||
                                                !strcmp(l->key, "optimizer")));
    return !step_only;
}

/* The line holding the optimizer step's temporary: the last static overhead line of that size. */
static size_t find_temp_line(const struct fg_estimate *e, uint64_t temp)
{
    size_t found = SIZE_MAX;
    if (!e->step_bytes)
        return found;
    for (size_t i = 0; i < e->n_lines; i++)
        if (!strcmp(e->lines[i].key, "overhead") && !e->lines[i].per_sample &&
            e->lines[i].bytes == temp)
            found = i;
    return found;
}

/* One segment's tooltip: its bytes, then each contributing line with its source. */
static void seg_title(FILE *f, const struct fg_estimate *e, const struct bar *bar, size_t k,
                      size_t temp_line)
{
    char a[32];
    fprintf(f, "<title>%s: %s", keys[k].label, fg_cli_gb(bar->seg[k], a, sizeof a));
    for (size_t i = 0; i < e->n_lines; i++) {
        const struct fg_line *l = &e->lines[i];
        if (key_index(l->key) != k || !line_in_bar(e, i, bar, temp_line))
            continue;
        fputs("\n\xe2\x80\xa2 ", f); /* bullet */
        fg_cli_html_esc(f, l->what);
        if (l->per_sample)
            fprintf(f, " (%s per sample x %llu)", fg_cli_gb(l->bytes, a, sizeof a),
                    (unsigned long long)e->batch);
        else
            fprintf(f, " (%s)", fg_cli_gb(l->bytes, a, sizeof a));
        fputs(" [source: ", f);
        fg_cli_html_esc(f, l->source);
        fputs("]", f);
    }
    fputs("</title>", f);
}

static void write_breakdown(FILE *f, const struct report *r)
{
    const struct fg_estimate *e = &r->est;
    struct bar bars[2];
    uint64_t temp;
    size_t nb = make_bars(e, bars, &temp);
    size_t temp_line = find_temp_line(e, temp);
    char a[32], b[32];

    /* scale: the larger bar, or the card when it is not much larger (a 0.4 GB job against
     * a 141 GB card would be a hairline; the card is then named, not drawn) */
    uint64_t limit = (uint64_t)((double)r->card_usable / r->o->headroom);
    uint64_t span = 0;
    for (size_t i = 0; i < nb; i++)
        if (bars[i].total > span)
            span = bars[i].total;
    bool card_drawn = (double)r->card_usable <= 2.5 * (double)span;
    if (card_drawn && r->card_usable > span)
        span = r->card_usable;
    span += span / 20;
    const double W = 1200, X0 = 150, X1 = W - 170, BH = 40, LABEL_ROW = 16;
    double scale = (X1 - X0) / (double)(span ? span : 1);

    /* Lay out labels first: inside a segment when they fit, else as a flag under the bar:
     * a leader down from the segment's middle, the text to its right.  Flags are placed
     * right to left, each one row below any flag to its right that its text would reach,
     * so no text covers another flag's leader. */
    struct lab {
        double cx, w;
        int row;          /* -1 inside, -2 not drawn */
        char text[64];
    } labs[2][NKEYS];
    int rows_used[2] = {0, 0};
    for (size_t i = 0; i < nb; i++) {
        double x = X0;
        for (size_t k = 0; k < NKEYS; k++) {
            struct lab *L = &labs[i][k];
            double w = (double)bars[i].seg[k] * scale;
            L->row = -2;
            if (!bars[i].seg[k])
                continue;
            snprintf(L->text, sizeof L->text, "%s %s", keys[k].label,
                     fg_cli_gb(bars[i].seg[k], a, sizeof a));
            L->cx = x + w / 2;
            L->w = text_w(L->text, 12);
            L->row = L->w + 8 <= w ? -1 : 0;
            x += w;
        }
        for (size_t k = NKEYS; k-- > 0;) {
            struct lab *L = &labs[i][k];
            if (L->row != 0)
                continue;
            int row = 0;
            for (size_t q = k + 1; q < NKEYS; q++) {
                const struct lab *R = &labs[i][q];
                if (R->row >= 0 && R->cx <= L->cx + 5 + L->w + 8 && R->row + 1 > row)
                    row = R->row + 1;
            }
            L->row = row < 7 ? row : 7;
            if (L->row + 1 > rows_used[i])
                rows_used[i] = L->row + 1;
        }
    }
    double H = 30;
    for (size_t i = 0; i < nb; i++)
        H += BH + 14 + rows_used[i] * LABEL_ROW + 18;
    H += 20;

    fputs("<section id=\"breakdown\">\n<h2>Memory breakdown</h2>\n", f);
    fprintf(f, "<p>Where the %s of micro-batch %llu &times; %llu tokens go, one segment per "
               "part of the estimate; hover a segment for the lines it is made of and the source "
               "of each formula.",
            fg_cli_gb(e->total_bytes, a, sizeof a), (unsigned long long)e->batch,
            (unsigned long long)e->seq_len);
    if (nb == 2)
        fputs(" A full fine-tune peaks twice: at the start of backward (activations, no "
              "gradients yet) and in the optimizer step (gradients, no activations); the "
              "estimate is the larger.",
              f);
    fputs("</p>\n", f);
    fprintf(f, "<svg id=\"breakdown-bars\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" "
               "height=\"%.0f\" role=\"img\" aria-label=\"memory breakdown\" "
               "xmlns=\"http://www.w3.org/2000/svg\">\n",
            W, H, W, H);
    double y = 24;
    /* the card's line across all bars */
    double lx = X0 + (double)r->card_usable * scale, hx = X0 + (double)limit * scale;
    for (size_t i = 0; i < nb; i++) {
        const struct bar *bar = &bars[i];
        bool peak = bar->total == e->total_bytes;
        fprintf(f, "<g class=\"bar\" data-phase=\"%s\" data-total=\"%llu\">\n",
                bar->step ? "step" : nb == 2 ? "backward" : "all",
                (unsigned long long)bar->total);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\" text-anchor=\"end\" "
                   "font-weight=\"%s\">%s</text>\n",
                X0 - 10, y + BH / 2 - 2, peak ? "600" : "400", bar->title);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"end\" "
                   "fill=\"#59636e\">%s%s</text>\n",
                X0 - 10, y + BH / 2 + 13, fg_cli_gb(bar->total, a, sizeof a), peak ? " (peak)" : "");
        double x = X0;
        for (size_t k = 0; k < NKEYS; k++) {
            if (!bar->seg[k])
                continue;
            double w = (double)bar->seg[k] * scale;
            const struct lab *L = &labs[i][k];
            fprintf(f, "<g class=\"segment\" data-key=\"%s\" data-bytes=\"%llu\">",
                    keys[k].key, (unsigned long long)bar->seg[k]);
            seg_title(f, e, bar, k, temp_line);
            fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.0f\" fill=\"%s\" "
                       "stroke=\"#fff\" stroke-width=\"1\"/>",
                    x, y, w < 0.5 ? 0.5 : w, BH, keys[k].colour);
            if (L->row == -1) {
                fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" "
                           "fill=\"%s\">%s</text>",
                        L->cx, y + BH / 2 + 4,
                        !strcmp(keys[k].key, "logits") || !strcmp(keys[k].key, "ssm_state")
                            ? "#1f2328" : "#fff",
                        L->text);
            } else if (L->row >= 0) {
                double ty = y + BH + 14 + L->row * LABEL_ROW;
                fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                           "stroke=\"%s\" stroke-width=\"1.5\"/>",
                        L->cx, y + BH, L->cx, ty - 4, keys[k].colour);
                fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" fill=\"#1f2328\">%s"
                           "</text>",
                        L->cx + 5, ty, L->text);
            }
            fputs("</g>\n", f);
            x += w;
        }
        fputs("</g>\n", f);
        y += BH + 14 + rows_used[i] * LABEL_ROW + 18;
    }
    /* card limits: usable memory, and usable / headroom (what the estimate may reach) */
    if (!card_drawn) {
        fprintf(f, "<text x=\"%.1f\" y=\"11\" font-size=\"12\" fill=\"#cf222e\">", X0);
        fg_cli_html_esc(f, r->card->label);
        fprintf(f, ": %s usable, off this scale</text>\n", fg_cli_gb(r->card_usable, a, sizeof a));
    } else {
        fprintf(f, "<g class=\"card-limit\"><title>");
        fg_cli_html_esc(f, r->card->label);
        fprintf(f, ": %s usable after the CUDA context; the estimate may reach %s under %.2fx "
                   "headroom</title>",
                fg_cli_gb(r->card_usable, a, sizeof a), fg_cli_gb(limit, b, sizeof b), r->o->headroom);
        fprintf(f, "<line x1=\"%.1f\" y1=\"14\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#cf222e\" "
                   "stroke-width=\"2\" stroke-dasharray=\"6 4\"/>",
                lx, lx, y - 14);
        fprintf(f, "<line x1=\"%.1f\" y1=\"14\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#bf8700\" "
                   "stroke-width=\"1.5\" stroke-dasharray=\"2 3\"/>",
                hx, hx, y - 14);
        fprintf(f, "<text x=\"%.1f\" y=\"11\" font-size=\"12\" text-anchor=\"%s\" "
                   "fill=\"#cf222e\">",
                lx, lx > W - 260 ? "end" : "start");
        fg_cli_html_esc(f, r->card->label);
        fprintf(f, " usable %s</text></g>\n", fg_cli_gb(r->card_usable, a, sizeof a));
    }
    fputs("</svg>\n", f);

    /* the legend and the lines themselves, as a table */
    fputs("<p class=\"legend\">", f);
    for (size_t k = 0; k < NKEYS; k++) {
        bool used = false;
        for (size_t i = 0; i < nb; i++)
            used = used || bars[i].seg[k];
        if (used)
            fprintf(f, "<span><i class=\"sw\" style=\"background:%s\"></i>%s</span>",
                    keys[k].colour, keys[k].label);
    }
    if (card_drawn)
        fputs("<span><i class=\"sw\" style=\"background:#cf222e\"></i>card usable</span>"
              "<span><i class=\"sw\" style=\"background:#bf8700\"></i>usable / headroom</span>",
              f);
    fputs("</p>\n", f);
    fputs("<table id=\"lines\">\n<thead><tr><th>part</th><th class=\"num\">bytes</th>"
          "<th>what</th><th>source</th></tr></thead>\n<tbody>\n", f);
    for (size_t i = 0; i < e->n_lines; i++) {
        const struct fg_line *l = &e->lines[i];
        size_t k = key_index(l->key);
        fprintf(f, "<tr><td><i class=\"sw\" style=\"background:%s\"></i>", keys[k].colour);
        fg_cli_html_esc(f, l->key);
        fprintf(f, "</td><td class=\"num\">%s%s</td><td>", fg_cli_gb(l->bytes, a, sizeof a),
                l->per_sample ? " / sample" : "");
        fg_cli_html_esc(f, l->what);
        fputs("</td><td>", f);
        fg_cli_html_esc(f, l->source);
        fputs("</td></tr>\n", f);
    }
    fputs("</tbody>\n</table>\n</section>\n", f);
}

/* ---- memory against micro-batch --------------------------------------- */

static double nice_ceil(double v)
{
    if (v <= 0)
        return 1;
    double p = pow(10, floor(log10(v)));
    double steps[] = {1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if (steps[i] * p >= v)
            return steps[i] * p;
    return 10 * p;
}

static void write_batch_chart(FILE *f, const struct report *r)
{
    const double W = 1200, H = 480, L = 80, R = 230, T = 24, B = 56;
    const double pw = W - L - R, ph = H - T - B;
    double hr = r->o->headroom;
    char a[32], b1[32];

    /* x: micro-batch 1..xmax on log2; xmax covers the largest batch any card holds */
    uint64_t most = 8;
    for (size_t c = 0; c < r->ncards; c++)
        for (size_t k = 0; k < r->nmodes; k++) {
            uint64_t mb = fg_fit_max_batch(&r->mode_est[k], r->cards[c].usable, hr);
            if (mb > most)
                most = mb;
        }
    uint64_t xmax = 8;
    while (xmax < most && xmax < 1024)
        xmax *= 2;
    double lxmax = log2((double)xmax);

    /* y: 0..the largest card, or this job's need at micro-batch 1 when that is higher (up
     * to twice the card): the cards stay readable, a line above says so in its label */
    double ymax = 0;
    for (size_t c = 0; c < r->ncards; c++)
        if ((double)r->cards[c].usable > ymax)
            ymax = (double)r->cards[c].usable;
    double need1 = (double)fg_estimate_at(&r->est, 1) * hr;
    if (need1 > ymax)
        ymax = need1 > 2 * ymax ? 2 * ymax : need1;
    ymax = nice_ceil(ymax * 1.08 / 1e9) * 1e9;

#define XP(b) (L + pw * log2((double)(b)) / lxmax)
#define YP(v) (T + ph - ph * ((v) / ymax))
    fputs("<section id=\"batch\">\n<h2>Memory against micro-batch</h2>\n", f);
    fprintf(f, "<p>Memory a job needs (estimate &times; %.2f headroom) as the micro-batch "
               "grows, one line per job mode; dashed lines are each card's usable memory. A "
               "line below a card's line fits that card; the crossing is the largest "
               "micro-batch. Training at %llu tokens, serving at %llu.</p>\n",
            hr, (unsigned long long)r->cards[0].est[0].seq_len,
            (unsigned long long)r->cards[0].est[2].seq_len);
    fprintf(f, "<svg id=\"batch-chart\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
               "role=\"img\" aria-label=\"memory against micro-batch\" "
               "xmlns=\"http://www.w3.org/2000/svg\">\n",
            W, H, W, H);
    fprintf(f, "<defs><clipPath id=\"plot\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
               "height=\"%.1f\"/></clipPath></defs>\n",
            L, T, pw, ph);
    /* grid and axes */
    fputs("<g class=\"axes\" font-size=\"12\" fill=\"#59636e\">\n", f);
    double ystep = nice_ceil(ymax / 1e9 / 6) * 1e9;
    for (double v = 0; v <= ymax + 1; v += ystep) {
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eaeef2\"/>",
                L, YP(v), L + pw, YP(v));
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.0f GB</text>\n", L - 8,
                YP(v) + 4, v / 1e9);
    }
    for (uint64_t b = 1; b <= xmax; b *= 2) {
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eaeef2\"/>",
                XP(b), T, XP(b), T + ph);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%llu</text>\n", XP(b),
                T + ph + 18, (unsigned long long)b);
    }
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
               "stroke=\"#8c959f\"/>\n",
            L, T, pw, ph);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#1f2328\">"
               "micro-batch per GPU (log scale)</text>\n",
            L + pw / 2, H - 14);
    fprintf(f, "<text transform=\"translate(18 %.1f) rotate(-90)\" text-anchor=\"middle\" "
               "fill=\"#1f2328\">memory needed per GPU</text>\n</g>\n",
            T + ph / 2);

    /* card limits, labels pushed apart so they do not overlap */
    double ly[REPORT_MAX_CARDS];
    size_t order[REPORT_MAX_CARDS];
    for (size_t c = 0; c < r->ncards; c++) {
        order[c] = c;
        ly[c] = YP((double)r->cards[c].usable) + 4;
    }
    for (size_t i = 1; i < r->ncards; i++) /* sort by y, top first */
        for (size_t j = i; j > 0 && ly[order[j]] < ly[order[j - 1]]; j--) {
            size_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (size_t i = 1; i < r->ncards; i++)
        if (ly[order[i]] < ly[order[i - 1]] + 14)
            ly[order[i]] = ly[order[i - 1]] + 14;
    fputs("<g class=\"card-limits\" font-size=\"12\">\n", f);
    for (size_t c = 0; c < r->ncards; c++) {
        const struct card *cd = &r->cards[c];
        double yy = YP((double)cd->usable);
        bool inside = (double)cd->usable <= ymax;
        fputs("<g class=\"card-limit\"><title>", f);
        fg_cli_html_esc(f, cd->gpu->label);
        fprintf(f, ": %s usable after the CUDA context</title>", fg_cli_gb(cd->usable, a, sizeof a));
        if (inside)
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#57606a\" "
                       "stroke-width=\"1.2\" stroke-dasharray=\"6 4\"/>",
                    L, yy, L + pw, yy);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#24292f\">", L + pw + 8,
                inside ? ly[c] : T + 4 + 14.0 * (double)c);
        fg_cli_html_esc(f, cd->gpu->label);
        fprintf(f, "%s</text></g>\n", inside ? "" : " (above)");
    }
    fputs("</g>\n", f);

    double top_right[4], top_y[4];
    size_t ntop = 0;
    /* one line per mode: sampled at every batch up to 64, then geometrically */
    fputs("<g class=\"modes\" clip-path=\"url(#plot)\">\n", f);
    for (size_t k = 0; k < r->nmodes; k++) {
        const struct fg_estimate *e = &r->mode_est[k];
        fprintf(f, "<g class=\"mode\" data-mode=\"%s\"><title>%s: %s at micro-batch 1, +%s per "
                   "sample (x %.2f headroom)</title><polyline fill=\"none\" stroke=\"%s\" "
                   "stroke-width=\"2.5\" points=\"",
                r->mode_name[k], r->mode_name[k], fg_cli_gb(fg_estimate_at(e, 1), a, sizeof a),
                fg_cli_gb(e->per_sample_bytes, b1, sizeof b1), hr, mode_colour[k % 4]);
        /* every batch up to 64, then geometric steps, and xmax itself */
        double px[256], py[256];
        size_t np = 0;
        uint64_t last = 0;
        for (double b = 1; np < 255;) {
            uint64_t bi = (uint64_t)(b + 0.5);
            if (bi > xmax)
                bi = xmax;
            if (bi != last) {
                double v = (double)fg_estimate_at(e, bi) * hr;
                px[np] = XP(bi);
                py[np++] = YP(v > 2 * ymax ? 2 * ymax : v); /* clipped; sane coordinates */
                last = bi;
            }
            if (bi == xmax)
                break;
            b = b < 64 ? b + 1 : b * 1.06;
        }
        for (size_t i = 0; i < np; i++)
            fprintf(f, "%.1f,%.1f ", px[i], py[i]);
        fputs("\"/>", f);
        /* the line's name where it leaves the plot at the top (one under the other when
         * they would overlap), else at its right end */
        size_t in = 0;
        while (in + 1 < np && py[in + 1] >= T)
            in++;
        if (py[0] < T || in + 1 < np) {
            char text[96];
            if (py[0] < T)
                snprintf(text, sizeof text, "%s (above: %s at micro-batch 1)", r->mode_name[k],
                         fg_cli_gb((uint64_t)((double)fg_estimate_at(e, 1) * hr), a, sizeof a));
            else
                snprintf(text, sizeof text, "%s", r->mode_name[k]);
            double tx = py[0] < T ? L + 8 : px[in + 1] + 6, ty = T + 16;
            for (size_t t = 0; t < ntop; t++)
                if (tx < top_right[t] + 6 && ty <= top_y[t] + 1)
                    ty = top_y[t] + 16;
            if (ntop < 4) {
                top_right[ntop] = tx + text_w(text, 13);
                top_y[ntop++] = ty;
            }
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\" font-weight=\"600\" "
                       "fill=\"%s\">%s</text>",
                    tx, ty, mode_colour[k % 4], text);
        }
        else
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\" font-weight=\"600\" "
                       "text-anchor=\"end\" fill=\"%s\">%s</text>",
                    px[in] - 8, py[in] - 8, mode_colour[k % 4], r->mode_name[k]);
        fputs("</g>\n", f);
        /* the largest batch on each card, as a dot on the line */
        for (size_t c = 0; c < r->ncards; c++) {
            uint64_t mb = fg_fit_max_batch(e, r->cards[c].usable, hr);
            if (!mb || mb > xmax)
                continue;
            double v = (double)fg_estimate_at(e, mb) * hr;
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"><title>%s on ",
                    XP(mb), YP(v), mode_colour[k % 4], r->mode_name[k]);
            fg_cli_html_esc(f, r->cards[c].gpu->label);
            fprintf(f, ": largest micro-batch %llu (%s with headroom)</title></circle>\n",
                    (unsigned long long)mb, fg_cli_gb((uint64_t)v, a, sizeof a));
        }
    }
    fputs("</g>\n</svg>\n<p class=\"legend\">", f);
    for (size_t k = 0; k < r->nmodes; k++)
        fprintf(f, "<span><i class=\"sw\" style=\"background:%s\"></i>%s%s</span>",
                mode_colour[k % 4], r->mode_name[k],
                !strcmp(r->mode_name[k], fg_mode_name(r->o->job.mode)) ? " (this job)" : "");
    fputs("<span><i class=\"sw\" style=\"background:#57606a\"></i>card usable memory</span>"
          "</p>\n</section>\n",
          f);
#undef XP
#undef YP
}

/* ---- card table ----------------------------------------------------------- */

static void write_cards(FILE *f, const struct report *r)
{
    char a[32], b[32];
    fputs("<section id=\"cards\">\n<h2>Cards</h2>\n", f);
    fprintf(f, "<p>Largest micro-batch per card (%.2f&times; headroom, %llu MiB CUDA context per "
               "card; borderline: fits the estimate but not %.2f&times; it).</p>\n",
            r->o->headroom, (unsigned long long)(r->po.fit.context_bytes >> 20),
            r->o->conservative);
    fputs("<table id=\"card-table\">\n<thead><tr><th>Card</th><th class=\"num\">usable</th>"
          "<th class=\"num\">bf16 TFLOP/s</th>", f);
    for (int k = 0; k < 3; k++)
        fprintf(f, "<th>%s</th>", table_mode_title[k]);
    fputs("</tr></thead>\n<tbody>\n", f);
    for (size_t c = 0; c < r->ncards; c++) {
        const struct card *cd = &r->cards[c];
        fputs("<tr><td>", f);
        fg_cli_html_esc(f, cd->gpu->label);
        fprintf(f, "</td><td class=\"num\">%s</td><td class=\"num\">%.0f</td>",
                fg_cli_gb(cd->usable, a, sizeof a), fg_gpu_tflops(cd->gpu));
        for (int k = 0; k < 3; k++) {
            const struct fg_fit *ft = &cd->fit[k];
            fprintf(f, "<td class=\"%s\" title=\"%s at micro-batch 1; %s with headroom\">",
                    fg_verdict_name(ft->verdict),
                    fg_cli_gb(fg_estimate_at(&cd->est[k], 1), a, sizeof a),
                    fg_cli_gb((uint64_t)((double)fg_estimate_at(&cd->est[k], 1) * r->o->headroom), b,
                       sizeof b));
            if (ft->verdict == FG_FIT_FITS)
                fprintf(f, "batch %llu", (unsigned long long)ft->max_batch);
            else if (ft->verdict == FG_FIT_BORDERLINE)
                fprintf(f, "batch %llu (borderline)", (unsigned long long)ft->max_batch);
            else if (ft->verdict == FG_FIT_SPLIT && cd->split_gpus[k])
                fprintf(f, "split: %u cards", cd->split_gpus[k]);
            else
                fputs("no", f);
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</tbody>\n</table>\n</section>\n", f);
}

/* ---- layouts ---------------------------------------------------------------- */

struct envbuf {
    FILE *f;
};

static int env_row(const char *name, const char *value, void *ctx)
{
    struct envbuf *eb = ctx;
    fprintf(eb->f, "<tr><td class=\"mono\">%s</td><td class=\"mono\">", name);
    fg_cli_html_esc(eb->f, value);
    fputs("</td></tr>\n", eb->f);
    return 0;
}

/* The memory of each pipeline stage against the card: one bar per stage, the card's
 * usable memory as the full height and usable / headroom as a dashed line. */
static void stage_svg(FILE *f, const struct fg_layout *l, uint64_t usable, double headroom)
{
    const double W = 280, H = 30;
    double bw = W / l->pp, lim = H - H / headroom;
    char a[32];
    fprintf(f, "<svg class=\"stages\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
               "xmlns=\"http://www.w3.org/2000/svg\">",
            W, H, W, H);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#f6f8fa\" "
               "stroke=\"#d1d9e0\"/>",
            W, H);
    for (uint32_t s = 0; s < l->pp; s++) {
        uint64_t b = l->stage_bytes[s] ? l->stage_bytes[s] : l->peak_bytes;
        double frac = (double)b / (double)(usable ? usable : 1);
        if (frac > 1)
            frac = 1;
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                   "fill=\"#4e79a7\"><title>stage %u: layers %u-%u, %s per GPU</title></rect>",
                s * bw + (l->pp > 1 ? 1 : 0), H * (1 - frac), bw - (l->pp > 1 ? 2 : 0),
                H * frac, s, l->cut[s], l->cut[s + 1] ? l->cut[s + 1] - 1 : 0, fg_cli_gb(b, a, sizeof a));
    }
    fprintf(f, "<line x1=\"0\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#bf8700\" "
               "stroke-dasharray=\"3 2\"><title>usable / headroom</title></line>",
            lim, W, lim);
    fputs("</svg>", f);
}

static void write_layouts(FILE *f, const struct report *r)
{
    char a[32], split[256];
    const struct fg_plan *p = &r->plan;
    fputs("<section id=\"layouts\">\n<h2>Suggested layouts on ", f);
    fg_cli_html_esc(f, r->card->label);
    fputs("</h2>\n", f);
    if (p->status == FG_PLAN_IMPOSSIBLE || !p->n) {
        fputs("<p class=\"no\">", f);
        fg_cli_html_esc(f, p->why[0] ? p->why : "no layout found");
        fputs("</p>\n</section>\n", f);
        return;
    }
    fprintf(f, "<p>Layouts that fit %s usable per card under %.2f&times; headroom, smallest GPU "
               "count first (TP inside a node, PP cuts balanced by memory, EP over experts, ZeRO "
               "over DP). The bars show each pipeline stage's memory against the card.</p>\n",
            fg_cli_gb(p->usable_bytes, a, sizeof a), r->o->headroom);
    fputs("<table id=\"layout-table\">\n<thead><tr><th class=\"num\">GPUs</th>"
          "<th class=\"num\">TP</th><th class=\"num\">PP</th><th class=\"num\">EP</th>"
          "<th class=\"num\">DP</th><th>ZeRO</th><th class=\"num\">peak / GPU</th>"
          "<th class=\"num\">micro-batch</th><th class=\"num\">grad accum</th>"
          "<th>layers per stage</th><th>stages</th></tr></thead>\n<tbody>\n",
          f);
    for (size_t i = 0; i < p->n; i++) {
        const struct fg_layout *l = &p->options[i];
        fg_layout_split_str(l, split, sizeof split);
        fprintf(f, "<tr><td class=\"num\">%u</td><td class=\"num\">%u</td><td class=\"num\">%u"
                   "</td><td class=\"num\">%u</td><td class=\"num\">%u</td><td>%s%.0u</td>"
                   "<td class=\"num\">%s</td><td class=\"num\">%llu</td>"
                   "<td class=\"num\">%llu</td><td class=\"mono\">",
                l->gpus, l->tp, l->pp, l->ep, l->dp, l->zero ? "ZeRO-" : "-", l->zero,
                fg_cli_gb(l->peak_bytes, a, sizeof a), (unsigned long long)l->micro_batch,
                (unsigned long long)(l->grad_accum ? l->grad_accum : 1));
        fg_cli_html_esc(f, l->pp > 1 ? split : "all");
        fputs("</td><td>", f);
        stage_svg(f, l, p->usable_bytes, r->o->headroom);
        fputs("</td></tr>\n", f);
    }
    fputs("</tbody>\n</table>\n", f);
    fputs("<p>The first layout as the job environment the SPANK plugin exports to the tasks:</p>\n"
          "<table id=\"layout-env\">\n<tbody>\n", f);
    struct envbuf eb = {f};
    (void)fg_layout_env(&p->options[0], env_row, &eb);
    fputs("</tbody>\n</table>\n</section>\n", f);
}

/* ---- structure -------------------------------------------------------------- */

static void write_structure(FILE *f, const struct report *r)
{
    const struct fg_model *m = r->m;
    uint64_t seq = r->est.seq_len;
    char a[32];
    fputs("<section id=\"structure\">\n<h2>Structure</h2>\n", f);
    fprintf(f, "<p>%zu nodes; output shape per sample at %llu tokens.</p>\n", m->n_nodes,
            (unsigned long long)seq);
    fputs("<table id=\"structure-table\" class=\"structure\">\n<thead><tr><th class=\"num\">#"
          "</th><th>Node</th><th>Type</th><th>Detail</th><th>Output shape</th>"
          "<th class=\"num\">Parameters</th></tr></thead>\n<tbody>\n", f);
    for (size_t i = 0; i < m->n_nodes; i++) {
        const struct fg_node *n = &m->nodes[i];
        fprintf(f, "<tr><td class=\"num\">%zu</td><td>", i + 1);
        fg_cli_html_esc(f, n->name);
        fputs("</td><td>", f);
        fg_cli_html_esc(f, fg_node_kind_name(n->kind));
        fputs("</td><td>", f);
        fg_cli_html_esc(f, n->desc);
        fprintf(f, "</td><td class=\"mono\">%llu &times; %u</td><td class=\"num\">%s</td></tr>\n",
                (unsigned long long)seq, n->width, fg_cli_count(n->params, a, sizeof a));
    }
    for (size_t i = 0; i < m->n_rules; i++) {
        fputs("<tr><td></td><td colspan=\"4\">rule: ", f);
        fg_cli_html_esc(f, m->rules[i].name);
        fprintf(f, "</td><td class=\"num\">%+lld</td></tr>\n", (long long)m->rules[i].scalars);
    }
    fprintf(f, "<tr><th></th><th colspan=\"4\">total stored in the checkpoint</th>"
               "<th class=\"num\">%s</th></tr>\n",
            fg_cli_count(m->params_total, a, sizeof a));
    fputs("</tbody>\n</table>\n</section>\n", f);
}

/* ---- entry points ----------------------------------------------------------- */

int fg_report_html_write(FILE *f, const struct fg_model *m, const struct fg_cli_opts *o,
                         const struct fg_report_gate *gate, struct fg_err *err)
{
    struct report *r = calloc(1, sizeof *r);
    if (!r)
        return fg_err_set(err, FG_E_NOMEM, "out of memory building the HTML report");
    r->m = m;
    r->o = o;
    r->gate = gate;
    int rc = compute(r, err);
    if (!rc) {
        write_head(f, r);
        write_summary(f, r);
        write_breakdown(f, r);
        write_batch_chart(f, r);
        write_cards(f, r);
        write_layouts(f, r);
        write_structure(f, r);
        fputs("<footer>Written by fitgate from config.json alone (no weights read). Estimates: "
              "measure one step before a long run on a borderline card.</footer>\n"
              "</body>\n</html>\n",
              f);
        if (fflush(f) || ferror(f))
            rc = fg_err_set(err, FG_E_IO, "writing the HTML report: %s", strerror(errno));
    }
    free(r);
    return rc;
}

struct page {
    const struct fg_model *m;
    const struct fg_cli_opts *o;
    const struct fg_report_gate *gate;
};

static int write_page(FILE *f, const void *ctx, struct fg_err *err)
{
    const struct page *pg = ctx;
    return fg_report_html_write(f, pg->m, pg->o, pg->gate, err);
}

int fg_report_html_file(const char *path, const struct fg_model *m, const struct fg_cli_opts *o,
                        const struct fg_report_gate *gate, struct fg_err *err)
{
    const struct page pg = {m, o, gate};
    return fg_cli_html_file(path, write_page, &pg, err);
}
