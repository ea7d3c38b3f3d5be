/*
 * report_charts.c - the two charts of the HTML report (report_html.h): the
 * estimate as stacked bars, one segment per breakdown key with its lines as
 * the tooltip, and memory against micro-batch for every mode and card.
 * Drawing is plain arithmetic into SVG user units; text widths are estimated
 * (no fonts are loaded, the page uses the reader's sans-serif).
 */
#include "report_charts.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "format.h"
#include "html.h"
#include "jobopts.h"

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

/* The breakdown's geometry (SVG user units) and what its parts share. */
#define BD_W 1200.0
#define BD_X0 150.0
#define BD_X1 (BD_W - 170)
#define BD_BH 40.0
#define BD_LABEL_ROW 16.0

struct breakdown {
    const struct report *r;
    const struct fg_estimate *e;
    struct bar bars[2];
    size_t nb, temp_line;
    uint64_t limit;     /* usable / headroom: what the estimate may reach */
    bool card_drawn;
    double scale;       /* user units per byte */
    struct lab {
        double cx, w;
        int row;          /* -1 inside, -2 not drawn */
        char text[64];
    } labs[2][NKEYS];
    int rows_used[2];
};

/* The scale: the larger bar, or the card when it is not much larger (a 0.4 GB job against
 * a 141 GB card would be a hairline; the card is then named, not drawn). */
static void breakdown_scale(struct breakdown *d)
{
    const struct report *r = d->r;
    d->limit = (uint64_t)((double)r->card_usable / r->o->headroom);
    uint64_t span = 0;
    for (size_t i = 0; i < d->nb; i++)
        if (d->bars[i].total > span)
            span = d->bars[i].total;
    d->card_drawn = (double)r->card_usable <= 2.5 * (double)span;
    if (d->card_drawn && r->card_usable > span)
        span = r->card_usable;
    span += span / 20;
    d->scale = (BD_X1 - BD_X0) / (double)(span ? span : 1);
}

/* Labels: inside a segment when they fit, else as a flag under the bar: a leader down from
 * the segment's middle, the text to its right.  Flags are placed right to left, each one
 * row below any flag to its right that its text would reach, so no text covers another
 * flag's leader. */
static void breakdown_labels(struct breakdown *d)
{
    char a[32];
    for (size_t i = 0; i < d->nb; i++) {
        double x = BD_X0;
        for (size_t k = 0; k < NKEYS; k++) {
            struct lab *L = &d->labs[i][k];
            double w = (double)d->bars[i].seg[k] * d->scale;
            L->row = -2;
            if (!d->bars[i].seg[k])
                continue;
            snprintf(L->text, sizeof L->text, "%s %s", keys[k].label,
                     fg_cli_gb(d->bars[i].seg[k], a, sizeof a));
            L->cx = x + w / 2;
            L->w = text_w(L->text, 12);
            L->row = L->w + 8 <= w ? -1 : 0;
            x += w;
        }
        for (size_t k = NKEYS; k-- > 0;) {
            struct lab *L = &d->labs[i][k];
            if (L->row != 0)
                continue;
            int row = 0;
            for (size_t q = k + 1; q < NKEYS; q++) {
                const struct lab *R = &d->labs[i][q];
                if (R->row >= 0 && R->cx <= L->cx + 5 + L->w + 8 && R->row + 1 > row)
                    row = R->row + 1;
            }
            L->row = row < 7 ? row : 7;
            if (L->row + 1 > d->rows_used[i])
                d->rows_used[i] = L->row + 1;
        }
    }
}

/* Bar i at height y, with its segments and their labels; returns the next bar's y. */
static double breakdown_bar(FILE *f, const struct breakdown *d, size_t i, double y)
{
    const struct bar *bar = &d->bars[i];
    const struct fg_estimate *e = d->e;
    char a[32];
    bool peak = bar->total == e->total_bytes;
    fprintf(f, "<g class=\"bar\" data-phase=\"%s\" data-total=\"%llu\">\n",
            bar->step ? "step" : d->nb == 2 ? "backward" : "all",
            (unsigned long long)bar->total);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\" text-anchor=\"end\" "
               "font-weight=\"%s\">%s</text>\n",
            BD_X0 - 10, y + BD_BH / 2 - 2, peak ? "600" : "400", bar->title);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"end\" "
               "fill=\"#59636e\">%s%s</text>\n",
            BD_X0 - 10, y + BD_BH / 2 + 13, fg_cli_gb(bar->total, a, sizeof a),
            peak ? " (peak)" : "");
    double x = BD_X0;
    for (size_t k = 0; k < NKEYS; k++) {
        if (!bar->seg[k])
            continue;
        double w = (double)bar->seg[k] * d->scale;
        const struct lab *L = &d->labs[i][k];
        fprintf(f, "<g class=\"segment\" data-key=\"%s\" data-bytes=\"%llu\">",
                keys[k].key, (unsigned long long)bar->seg[k]);
        seg_title(f, e, bar, k, d->temp_line);
        fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.0f\" fill=\"%s\" "
                   "stroke=\"#fff\" stroke-width=\"1\"/>",
                x, y, w < 0.5 ? 0.5 : w, BD_BH, keys[k].colour);
        if (L->row == -1) {
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" "
                       "fill=\"%s\">%s</text>",
                    L->cx, y + BD_BH / 2 + 4,
                    !strcmp(keys[k].key, "logits") || !strcmp(keys[k].key, "ssm_state")
                        ? "#1f2328" : "#fff",
                    L->text);
        } else if (L->row >= 0) {
            double ty = y + BD_BH + 14 + L->row * BD_LABEL_ROW;
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                       "stroke=\"%s\" stroke-width=\"1.5\"/>",
                    L->cx, y + BD_BH, L->cx, ty - 4, keys[k].colour);
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" fill=\"#1f2328\">%s"
                       "</text>",
                    L->cx + 5, ty, L->text);
        }
        fputs("</g>\n", f);
        x += w;
    }
    fputs("</g>\n", f);
    return y + BD_BH + 14 + d->rows_used[i] * BD_LABEL_ROW + 18;
}

/* The card's limits across every bar, down to y: usable memory, and usable / headroom
 * (what the estimate may reach); or its name alone when it is off the scale. */
static void breakdown_card(FILE *f, const struct breakdown *d, double y)
{
    const struct report *r = d->r;
    char a[32], b[32];
    double lx = BD_X0 + (double)r->card_usable * d->scale, hx = BD_X0 + (double)d->limit * d->scale;
    if (!d->card_drawn) {
        fprintf(f, "<text x=\"%.1f\" y=\"11\" font-size=\"12\" fill=\"#cf222e\">", BD_X0);
        fg_cli_html_esc(f, r->card->label);
        fprintf(f, ": %s usable, off this scale</text>\n", fg_cli_gb(r->card_usable, a, sizeof a));
        return;
    }
    fprintf(f, "<g class=\"card-limit\"><title>");
    fg_cli_html_esc(f, r->card->label);
    fprintf(f, ": %s usable after the CUDA context; the estimate may reach %s under %.2fx "
               "headroom</title>",
            fg_cli_gb(r->card_usable, a, sizeof a), fg_cli_gb(d->limit, b, sizeof b),
            r->o->headroom);
    fprintf(f, "<line x1=\"%.1f\" y1=\"14\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#cf222e\" "
               "stroke-width=\"2\" stroke-dasharray=\"6 4\"/>",
            lx, lx, y - 14);
    fprintf(f, "<line x1=\"%.1f\" y1=\"14\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#bf8700\" "
               "stroke-width=\"1.5\" stroke-dasharray=\"2 3\"/>",
            hx, hx, y - 14);
    fprintf(f, "<text x=\"%.1f\" y=\"11\" font-size=\"12\" text-anchor=\"%s\" "
               "fill=\"#cf222e\">",
            lx, lx > BD_W - 260 ? "end" : "start");
    fg_cli_html_esc(f, r->card->label);
    fprintf(f, " usable %s</text></g>\n", fg_cli_gb(r->card_usable, a, sizeof a));
}

/* The legend and the estimate's lines themselves, as a table. */
static void breakdown_lines(FILE *f, const struct breakdown *d)
{
    const struct fg_estimate *e = d->e;
    char a[32];
    fputs("<p class=\"legend\">", f);
    for (size_t k = 0; k < NKEYS; k++) {
        bool used = false;
        for (size_t i = 0; i < d->nb; i++)
            used = used || d->bars[i].seg[k];
        if (used)
            fprintf(f, "<span><i class=\"sw\" style=\"background:%s\"></i>%s</span>",
                    keys[k].colour, keys[k].label);
    }
    if (d->card_drawn)
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

void fg__report_write_breakdown(FILE *f, const struct report *r)
{
    struct breakdown bd = {0}, *d = &bd; /* about 2 kB */
    char a[32];
    uint64_t temp;
    d->r = r;
    d->e = &r->est;
    d->nb = make_bars(d->e, d->bars, &temp);
    d->temp_line = find_temp_line(d->e, temp);
    breakdown_scale(d);
    breakdown_labels(d);
    double H = 30;
    for (size_t i = 0; i < d->nb; i++)
        H += BD_BH + 14 + d->rows_used[i] * BD_LABEL_ROW + 18;
    H += 20;

    fputs("<section id=\"breakdown\">\n<h2>Memory breakdown</h2>\n", f);
    fprintf(f, "<p>Where the %s of micro-batch %llu &times; %llu tokens go, one segment per "
               "part of the estimate; hover a segment for the lines it is made of and the source "
               "of each formula.",
            fg_cli_gb(d->e->total_bytes, a, sizeof a), (unsigned long long)d->e->batch,
            (unsigned long long)d->e->seq_len);
    if (d->nb == 2)
        fputs(" A full fine-tune peaks twice: at the start of backward (activations, no "
              "gradients yet) and in the optimizer step (gradients, no activations); the "
              "estimate is the larger.",
              f);
    fputs("</p>\n", f);
    fprintf(f, "<svg id=\"breakdown-bars\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" "
               "height=\"%.0f\" role=\"img\" aria-label=\"memory breakdown\" "
               "xmlns=\"http://www.w3.org/2000/svg\">\n",
            BD_W, H, BD_W, H);
    double y = 24;
    for (size_t i = 0; i < d->nb; i++)
        y = breakdown_bar(f, d, i, y);
    breakdown_card(f, d, y);
    fputs("</svg>\n", f);
    breakdown_lines(f, d);
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

/* The chart's frame (SVG user units) and what its parts share. */
#define BC_W 1200.0
#define BC_H 480.0
#define BC_L 80.0
#define BC_R 230.0
#define BC_T 24.0
#define BC_B 56.0

struct batch_chart {
    const struct report *r;
    double hr;                     /* the page's headroom */
    double pw, ph;                 /* the plot's width and height */
    uint64_t xmax;                 /* micro-batch 1..xmax on a log2 axis */
    double lxmax, ymax;
    double top_right[4], top_y[4]; /* mode names placed at the top so far */
    size_t ntop;
};

static double xp(const struct batch_chart *bc, double b)
{
    return BC_L + bc->pw * log2(b) / bc->lxmax;
}

static double yp(const struct batch_chart *bc, double v)
{
    return BC_T + bc->ph - bc->ph * (v / bc->ymax);
}

static void batch_axes(FILE *f, const struct batch_chart *bc)
{
    /* grid and axes */
    fputs("<g class=\"axes\" font-size=\"12\" fill=\"#59636e\">\n", f);
    double ystep = nice_ceil(bc->ymax / 1e9 / 6) * 1e9;
    for (double v = 0; v <= bc->ymax + 1; v += ystep) {
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eaeef2\"/>",
                BC_L, yp(bc, v), BC_L + bc->pw, yp(bc, v));
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.0f GB</text>\n", BC_L - 8,
                yp(bc, v) + 4, v / 1e9);
    }
    for (uint64_t b = 1; b <= bc->xmax; b *= 2) {
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eaeef2\"/>",
                xp(bc, b), BC_T, xp(bc, b), BC_T + bc->ph);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%llu</text>\n", xp(bc, b),
                BC_T + bc->ph + 18, (unsigned long long)b);
    }
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
               "stroke=\"#8c959f\"/>\n",
            BC_L, BC_T, bc->pw, bc->ph);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#1f2328\">"
               "micro-batch per GPU (log scale)</text>\n",
            BC_L + bc->pw / 2, BC_H - 14);
    fprintf(f, "<text transform=\"translate(18 %.1f) rotate(-90)\" text-anchor=\"middle\" "
               "fill=\"#1f2328\">memory needed per GPU</text>\n</g>\n",
            BC_T + bc->ph / 2);

}

/* The cards' usable memory, labels pushed apart so they do not overlap. */
static void batch_card_limits(FILE *f, const struct batch_chart *bc)
{
    const struct report *r = bc->r;
    char a[32];
    double ly[REPORT_MAX_CARDS];
    size_t order[REPORT_MAX_CARDS];
    for (size_t c = 0; c < r->ncards; c++) {
        order[c] = c;
        ly[c] = yp(bc, (double)r->cards[c].usable) + 4;
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
        double yy = yp(bc, (double)cd->usable);
        bool inside = (double)cd->usable <= bc->ymax;
        fputs("<g class=\"card-limit\"><title>", f);
        fg_cli_html_esc(f, cd->gpu->label);
        fprintf(f, ": %s usable after the CUDA context</title>", fg_cli_gb(cd->usable, a, sizeof a));
        if (inside)
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#57606a\" "
                       "stroke-width=\"1.2\" stroke-dasharray=\"6 4\"/>",
                    BC_L, yy, BC_L + bc->pw, yy);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#24292f\">", BC_L + bc->pw + 8,
                inside ? ly[c] : BC_T + 4 + 14.0 * (double)c);
        fg_cli_html_esc(f, cd->gpu->label);
        fprintf(f, "%s</text></g>\n", inside ? "" : " (above)");
    }
    fputs("</g>\n", f);

}

/* Mode k's line, sampled at every batch up to 64, then geometrically; its name; and the
 * largest batch on each card as a dot. */
static void batch_mode(FILE *f, struct batch_chart *bc, size_t k)
{
    const struct report *r = bc->r;
    char a[32], b1[32];
    const struct fg_estimate *e = &r->mode_est[k];
    fprintf(f, "<g class=\"mode\" data-mode=\"%s\"><title>%s: %s at micro-batch 1, +%s per "
               "sample (x %.2f headroom)</title><polyline fill=\"none\" stroke=\"%s\" "
               "stroke-width=\"2.5\" points=\"",
            r->mode_name[k], r->mode_name[k], fg_cli_gb(fg_estimate_at(e, 1), a, sizeof a),
            fg_cli_gb(e->per_sample_bytes, b1, sizeof b1), bc->hr, mode_colour[k % 4]);
    /* every batch up to 64, then geometric steps, and xmax itself */
    double px[256], py[256];
    size_t np = 0;
    uint64_t last = 0;
    for (double b = 1; np < 255;) {
        uint64_t bi = (uint64_t)(b + 0.5);
        if (bi > bc->xmax)
            bi = bc->xmax;
        if (bi != last) {
            double v = (double)fg_estimate_at(e, bi) * bc->hr;
            px[np] = xp(bc, bi);
            py[np++] = yp(bc, v > 2 * bc->ymax ? 2 * bc->ymax : v); /* clipped; sane coordinates */
            last = bi;
        }
        if (bi == bc->xmax)
            break;
        b = b < 64 ? b + 1 : b * 1.06;
    }
    for (size_t i = 0; i < np; i++)
        fprintf(f, "%.1f,%.1f ", px[i], py[i]);
    fputs("\"/>", f);
    /* the line's name where it leaves the plot at the top (one under the other when
     * they would overlap), else at its right end */
    size_t in = 0;
    while (in + 1 < np && py[in + 1] >= BC_T)
        in++;
    if (py[0] < BC_T || in + 1 < np) {
        char text[96];
        if (py[0] < BC_T)
            snprintf(text, sizeof text, "%s (above: %s at micro-batch 1)", r->mode_name[k],
                     fg_cli_gb((uint64_t)((double)fg_estimate_at(e, 1) * bc->hr), a, sizeof a));
        else
            snprintf(text, sizeof text, "%s", r->mode_name[k]);
        double tx = py[0] < BC_T ? BC_L + 8 : px[in + 1] + 6, ty = BC_T + 16;
        for (size_t t = 0; t < bc->ntop; t++)
            if (tx < bc->top_right[t] + 6 && ty <= bc->top_y[t] + 1)
                ty = bc->top_y[t] + 16;
        if (bc->ntop < 4) {
            bc->top_right[bc->ntop] = tx + text_w(text, 13);
            bc->top_y[bc->ntop++] = ty;
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
        uint64_t mb = fg_fit_max_batch(e, r->cards[c].usable, bc->hr);
        if (!mb || mb > bc->xmax)
            continue;
        double v = (double)fg_estimate_at(e, mb) * bc->hr;
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"><title>%s on ",
                xp(bc, mb), yp(bc, v), mode_colour[k % 4], r->mode_name[k]);
        fg_cli_html_esc(f, r->cards[c].gpu->label);
        fprintf(f, ": largest micro-batch %llu (%s with headroom)</title></circle>\n",
                (unsigned long long)mb, fg_cli_gb((uint64_t)v, a, sizeof a));
    }
}

void fg__report_write_batch_chart(FILE *f, const struct report *r)
{
    struct batch_chart chart = {.r = r, .hr = r->o->headroom}, *bc = &chart;
    bc->pw = BC_W - BC_L - BC_R;
    bc->ph = BC_H - BC_T - BC_B;
    /* x: micro-batch 1..xmax on log2; xmax covers the largest batch any card holds */
    uint64_t most = 8;
    for (size_t c = 0; c < r->ncards; c++)
        for (size_t k = 0; k < r->nmodes; k++) {
            uint64_t mb = fg_fit_max_batch(&r->mode_est[k], r->cards[c].usable, bc->hr);
            if (mb > most)
                most = mb;
        }
    bc->xmax = 8;
    while (bc->xmax < most && bc->xmax < 1024)
        bc->xmax *= 2;
    bc->lxmax = log2((double)bc->xmax);

    /* y: 0..the largest card, or this job's need at micro-batch 1 when that is higher (up
     * to twice the card): the cards stay readable, a line above says so in its label */
    bc->ymax = 0;
    for (size_t c = 0; c < r->ncards; c++)
        if ((double)r->cards[c].usable > bc->ymax)
            bc->ymax = (double)r->cards[c].usable;
    double need1 = (double)fg_estimate_at(&r->est, 1) * bc->hr;
    if (need1 > bc->ymax)
        bc->ymax = need1 > 2 * bc->ymax ? 2 * bc->ymax : need1;
    bc->ymax = nice_ceil(bc->ymax * 1.08 / 1e9) * 1e9;

    fputs("<section id=\"batch\">\n<h2>Memory against micro-batch</h2>\n", f);
    fprintf(f, "<p>Memory a job needs (estimate &times; %.2f headroom) as the micro-batch "
               "grows, one line per job mode; dashed lines are each card's usable memory. A "
               "line below a card's line fits that card; the crossing is the largest "
               "micro-batch. Training at %llu tokens, serving at %llu.</p>\n",
            bc->hr, (unsigned long long)r->cards[0].est[0].seq_len,
            (unsigned long long)r->cards[0].est[2].seq_len);
    fprintf(f, "<svg id=\"batch-chart\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
               "role=\"img\" aria-label=\"memory against micro-batch\" "
               "xmlns=\"http://www.w3.org/2000/svg\">\n",
            BC_W, BC_H, BC_W, BC_H);
    fprintf(f, "<defs><clipPath id=\"plot\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
               "height=\"%.1f\"/></clipPath></defs>\n",
            BC_L, BC_T, bc->pw, bc->ph);
    batch_axes(f, bc);
    batch_card_limits(f, bc);
    fputs("<g class=\"modes\" clip-path=\"url(#plot)\">\n", f);
    for (size_t k = 0; k < r->nmodes; k++)
        batch_mode(f, bc, k);
    fputs("</g>\n</svg>\n<p class=\"legend\">", f);
    for (size_t k = 0; k < r->nmodes; k++)
        fprintf(f, "<span><i class=\"sw\" style=\"background:%s\"></i>%s%s</span>",
                mode_colour[k % 4], r->mode_name[k],
                !strcmp(r->mode_name[k], fg_mode_name(r->o->job.mode)) ? " (this job)" : "");
    fputs("<span><i class=\"sw\" style=\"background:#57606a\"></i>card usable memory</span>"
          "</p>\n</section>\n",
          f);
}
