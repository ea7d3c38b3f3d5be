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
#include "plan/fit.h"
#include "hw/gpu.h"
#include "html.h"
#include "memory/memory.h"
#include "plan/plan.h"
/* The seeds' card table, shared with `fitgate plan`: one row per card size
 * users ask about (the SXM H100: "h100" alone names the PCIe card first in
 * gpus.conf).  The default layout card follows. */
const char *const fg_cli_default_cards[] = {"t4", "l4", "a100_40g", "h100_sxm", "h200", NULL};


#define REPORT_DEFAULT_CARD "h200"

static const enum fg_mode table_modes[3] = {FG_MODE_FULL, FG_MODE_LORA, FG_MODE_SERVE};
static const char *const table_mode_title[3] = {"Full fine-tune", "LoRA", "Serve bf16"};

/* ---- the numbers ------------------------------------------------------- */

#include "report_charts.h"

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
        fg__report_write_breakdown(f, r);
        fg__report_write_batch_chart(f, r);
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
