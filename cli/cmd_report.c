/*
 * fitgate report LOG... [--json] [--html FILE] [--by day|week|month]
 *                       [--since DATE] [--until DATE]
 *
 * Summarises audit trails (policies/audit.h, docs/audit.md) per period,
 * per partition and per user: decisions by verdict, GPUs asked for and
 * after the decision, GPU-hours of requests shrunk, and the models most
 * often rejected.  Text by default, --json for programs, --html FILE for
 * one self-contained page (inline CSS and SVG, no script, nothing fetched).
 *
 * Reading streams: only the tallies are kept, so a year of logs costs the
 * memory of its distinct users, partitions and models.  A line that is not
 * an audit line is skipped and counted, with a warning naming FILE:LINE
 * (the first FG_CLI_AUDIT_WARNINGS of them); it never stops the report.  Lines may
 * carry a syslog prefix ("... fitgate[PID]: {...}"), so a syslog file
 * filtered on the tag can be read directly.  LOG "-" is standard input.
 *
 * Exit status: 0 the report was written (bad lines or not), 2 an argument
 * or a file could not be used.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "auditlog.h"
#include "cli.h"
#include "format.h"
#include "html.h"

#define TOP_MODELS 10
#define CHART_USERS 25

/* ---- tallies ------------------------------------------------------------------ */

struct tally {
    uint64_t checked;
    uint64_t n[FG_AUDIT_N_VERDICTS];
    uint64_t gpus_asked, gpus_after;
    double shrunk_hours;        /* GPU-hours of the shrunk requests whose time limit is known */
    uint64_t shrunk, shrunk_unknown; /* requests shrunk; of them without a time limit */
};

struct group {
    char *key;
    struct tally t;
};

/* Groups by key: an array in first-seen order, found through an open-addressing index. */
struct groups {
    struct group *v;
    size_t n, cap;
    size_t *slot; /* index + 1; 0 empty */
    size_t nslot;
};

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int grow_index(struct groups *g)
{
    size_t nslot = g->nslot ? g->nslot * 2 : 64;
    size_t *slot = calloc(nslot, sizeof *slot);
    if (!slot)
        return -1;
    for (size_t i = 0; i < g->n; i++) {
        size_t j = hash(g->v[i].key) & (nslot - 1);
        while (slot[j])
            j = (j + 1) & (nslot - 1);
        slot[j] = i + 1;
    }
    free(g->slot);
    g->slot = slot;
    g->nslot = nslot;
    return 0;
}

/* The group for key, added when new; NULL when out of memory. */
static struct tally *group_get(struct groups *g, const char *key)
{
    if ((g->n + 1) * 10 >= g->nslot * 7 && grow_index(g))
        return NULL;
    size_t j = hash(key) & (g->nslot - 1);
    for (; g->slot[j]; j = (j + 1) & (g->nslot - 1))
        if (!strcmp(g->v[g->slot[j] - 1].key, key))
            return &g->v[g->slot[j] - 1].t;
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 32;
        struct group *v = realloc(g->v, cap * sizeof *v);
        if (!v)
            return NULL;
        g->v = v;
        g->cap = cap;
    }
    char *k = strdup(key);
    if (!k)
        return NULL;
    g->v[g->n] = (struct group){.key = k};
    g->slot[j] = ++g->n;
    return &g->v[g->n - 1].t;
}

static void groups_free(struct groups *g)
{
    for (size_t i = 0; i < g->n; i++)
        free(g->v[i].key);
    free(g->v);
    free(g->slot);
    memset(g, 0, sizeof *g);
}

static void add(struct tally *t, const struct fg_audit_rec *r)
{
    t->checked++;
    t->n[r->verdict]++;
    t->gpus_asked += r->gpus_asked;
    t->gpus_after += r->gpus_after;
    if (r->gpus_after < r->gpus_asked) {
        t->shrunk++;
        if (r->time_limit_min)
            t->shrunk_hours += (double)(r->gpus_asked - r->gpus_after) * r->time_limit_min / 60.0;
        else
            t->shrunk_unknown++;
    }
}

/* ---- the run's state ----------------------------------------------------------- */

enum period { BY_DAY, BY_WEEK, BY_MONTH };
static const char *const period_names[] = {"day", "week", "month"};
static const char *const period_formats[] = {"%Y-%m-%d", "%G-W%V", "%Y-%m"};

struct report {
    enum period by;
    bool have_since, have_until;
    int64_t since, until;       /* [since, until) */
    char since_arg[32], until_arg[32];
    size_t nfiles;
    uint64_t lines, bad, out_of_range;
    uint64_t again;             /* lines of a job another door's line already counts */
    int64_t first, last;        /* times of the decisions counted */
    struct tally total;
    struct groups periods, partitions, users, models;
};

static void report_free(struct report *r)
{
    groups_free(&r->periods);
    groups_free(&r->partitions);
    groups_free(&r->users);
    groups_free(&r->models);
}

static int count(struct report *r, const struct fg_audit_rec *rec)
{
    char period[32];
    if (rec->where == FG_AUDIT_AT_STEPD)
        return 0; /* the node's line of a job already counted at submission (fitgate learn's) */
    if (strcmp(rec->key, rec->submit_id)) {
        /* job_submit's line of a job sbatch already decided and logged (its key is sbatch's
         * submit id): a job counts once, at its first door */
        r->again++;
        return 0;
    }
    struct tm tm;
    time_t t = (time_t)rec->time;
    if (!gmtime_r(&t, &tm) || !strftime(period, sizeof period, period_formats[r->by], &tm))
        snprintf(period, sizeof period, "?");
    struct tally *tp = group_get(&r->periods, period);
    struct tally *tq = group_get(&r->partitions, rec->partition[0] ? rec->partition
                                                                  : "(default)");
    struct tally *tu = group_get(&r->users, rec->user[0] ? rec->user : "(unknown)");
    if (!tp || !tq || !tu)
        return -1;
    if (rec->verdict == FG_AUDIT_REJECT) {
        struct tally *tm_ = group_get(&r->models, rec->model[0] ? rec->model : "(none)");
        if (!tm_)
            return -1;
        add(tm_, rec);
    }
    add(&r->total, rec);
    add(tp, rec);
    add(tq, rec);
    add(tu, rec);
    if (r->total.checked == 1 || rec->time < r->first)
        r->first = rec->time;
    if (r->total.checked == 1 || rec->time > r->last)
        r->last = rec->time;
    return 0;
}

/* fg_cli_audit_each: one decision counted, unless outside --since / --until. */
static int count_in_range(const struct fg_audit_rec *rec, const struct fg_cli_trail *at,
                          void *ctx)
{
    struct report *r = ctx;
    (void)at;
    if ((r->have_since && rec->time < r->since) || (r->have_until && rec->time >= r->until)) {
        r->out_of_range++;
        return 0;
    }
    if (count(r, rec)) {
        fprintf(stderr, "fitgate: error: out of memory\n");
        return -1;
    }
    return 0;
}

/* DATE: YYYY-MM-DD (the whole day, UTC) or YYYY-MM-DDTHH:MM:SS[Z].  until: the end of the
 * day for a bare date, else that instant. */
static int parse_date(const char *s, bool end_of_day, int64_t *out)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *rest = strptime(s, "%Y-%m-%d", &tm);
    if (!rest || strlen(s) < 10)
        return -1;
    bool day = !*rest;
    if (!day) {
        rest = strptime(rest, "T%H:%M:%S", &tm);
        if (!rest || (*rest && strcmp(rest, "Z")))
            return -1;
    }
    time_t t = timegm(&tm);
    if (t == (time_t)-1)
        return -1;
    *out = (int64_t)t + (day && end_of_day ? 86400 : 0);
    return 0;
}

/* ---- sorting ------------------------------------------------------------------------ */

static int by_key(const void *a, const void *b)
{
    return strcmp(((const struct group *)a)->key, ((const struct group *)b)->key);
}

static int by_checked(const void *a, const void *b)
{
    const struct group *x = a, *y = b;
    if (x->t.checked != y->t.checked)
        return x->t.checked > y->t.checked ? -1 : 1;
    return strcmp(x->key, y->key);
}

/* Sorting moves the groups: their index is rebuilt if anyone adds to them again (nobody
 * does after reading; dropped to be safe). */
static void sort_groups(struct groups *g, int (*cmp)(const void *, const void *))
{
    if (g->n)
        qsort(g->v, g->n, sizeof *g->v, cmp);
    free(g->slot);
    g->slot = NULL;
    g->nslot = 0;
}

/* ---- text -------------------------------------------------------------------------- */

/* GPU-hours shrunk: "12.5", "unknown" (no shrunk request had a time limit), "12.5 + 3
 * unknown", "0" */
static const char *shrunk_str(const struct tally *t, char *buf, size_t cap)
{
    if (!t->shrunk)
        snprintf(buf, cap, "0");
    else if (t->shrunk_unknown == t->shrunk)
        snprintf(buf, cap, "unknown (%llu job%s)", (unsigned long long)t->shrunk,
                 t->shrunk == 1 ? "" : "s");
    else if (t->shrunk_unknown)
        snprintf(buf, cap, "%.1f + %llu unknown", t->shrunk_hours,
                 (unsigned long long)t->shrunk_unknown);
    else
        snprintf(buf, cap, "%.1f", t->shrunk_hours);
    return buf;
}

static void date_str(int64_t t, char *buf, size_t cap)
{
    struct tm tm;
    time_t tt = (time_t)t;
    if (!gmtime_r(&tt, &tm) || !strftime(buf, cap, "%Y-%m-%d %H:%M", &tm))
        snprintf(buf, cap, "?");
}

static void iso_str(int64_t t, char *buf, size_t cap)
{
    struct tm tm;
    time_t tt = (time_t)t;
    if (!gmtime_r(&tt, &tm) || !strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(buf, cap, "?");
}

static void text_row(const char *key, int w, const struct tally *t)
{
    char s[64];
    printf("%-*s %8llu %7llu %6llu %7llu %7llu %9llu %6llu %11llu %7llu  %s\n", w, key,
           (unsigned long long)t->checked, (unsigned long long)t->n[FG_AUDIT_ALLOW],
           (unsigned long long)t->n[FG_AUDIT_WARN], (unsigned long long)t->n[FG_AUDIT_REJECT],
           (unsigned long long)t->n[FG_AUDIT_RESIZE],
           (unsigned long long)t->n[FG_AUDIT_OVERRIDE], (unsigned long long)t->n[FG_AUDIT_ERROR],
           (unsigned long long)t->gpus_asked, (unsigned long long)t->gpus_after,
           shrunk_str(t, s, sizeof s));
}

static void text_table(const char *title, const struct groups *g, const struct tally *total)
{
    int w = (int)strlen(title);
    for (size_t i = 0; i < g->n; i++)
        if ((int)strlen(g->v[i].key) > w)
            w = (int)strlen(g->v[i].key);
    if (w > 40)
        w = 40;
    printf("\n%-*s %8s %7s %6s %7s %7s %9s %6s %11s %7s  %s\n", w, title, "checked", "allow",
           "warn", "reject", "resize", "override", "error", "GPUs asked", "after",
           "GPU-h shrunk");
    for (size_t i = 0; i < g->n; i++)
        text_row(g->v[i].key, w, &g->v[i].t);
    if (total)
        text_row("total", w, total);
}

static void print_text(const struct report *r)
{
    char a[32], b[32];
    printf("fitgate report: %llu decision%s from %zu log%s",
           (unsigned long long)r->total.checked, r->total.checked == 1 ? "" : "s", r->nfiles,
           r->nfiles == 1 ? "" : "s");
    if (r->total.checked) {
        date_str(r->first, a, sizeof a);
        date_str(r->last, b, sizeof b);
        printf(", %s .. %s UTC", a, b);
    }
    printf("\n");
    if (r->bad)
        printf("%llu line%s skipped: not audit lines this fitgate reads (warnings on stderr)\n",
               (unsigned long long)r->bad, r->bad == 1 ? "" : "s");
    if (r->again)
        printf("%llu line%s of jobs counted at an earlier door (job_submit re-checking sbatch's "
               "decision)\n", (unsigned long long)r->again, r->again == 1 ? "" : "s");
    if (r->out_of_range)
        printf("%llu decision%s outside --since/--until\n", (unsigned long long)r->out_of_range,
               r->out_of_range == 1 ? "" : "s");
    const char *title = r->by == BY_DAY ? "day" : r->by == BY_WEEK ? "week" : "month";
    text_table(title, &r->periods, &r->total);
    text_table("partition", &r->partitions, NULL);
    text_table("user", &r->users, NULL);
    printf("\nmodels rejected most often\n");
    if (!r->models.n)
        printf("  (none)\n");
    for (size_t i = 0; i < r->models.n && i < TOP_MODELS; i++)
        printf("%8llu  %s\n", (unsigned long long)r->models.v[i].t.checked, r->models.v[i].key);
    printf("\nGPU-hours shrunk: (GPUs asked - after) x the job's time limit, for requests the "
           "decision lowered;\n\"unknown\" where the line has no time limit.\n");
}

/* ---- JSON -------------------------------------------------------------------------- */

static cJSON *tally_json(const struct tally *t, const char *key_name, const char *key)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    if (key_name)
        cJSON_AddStringToObject(o, key_name, key);
    cJSON_AddNumberToObject(o, "checked", (double)t->checked);
    for (int v = 0; v < FG_AUDIT_N_VERDICTS; v++)
        cJSON_AddNumberToObject(o, fg_audit_verdict_name((enum fg_audit_verdict)v),
                                (double)t->n[v]);
    cJSON_AddNumberToObject(o, "gpus_asked", (double)t->gpus_asked);
    cJSON_AddNumberToObject(o, "gpus_after", (double)t->gpus_after);
    cJSON_AddNumberToObject(o, "shrunk", (double)t->shrunk);
    cJSON_AddNumberToObject(o, "shrunk_no_time_limit", (double)t->shrunk_unknown);
    if (t->shrunk && t->shrunk_unknown == t->shrunk)
        cJSON_AddNullToObject(o, "gpu_hours_shrunk");
    else
        cJSON_AddNumberToObject(o, "gpu_hours_shrunk", round(t->shrunk_hours * 10) / 10);
    return o;
}

static cJSON *groups_json(const struct groups *g, const char *key_name, size_t max)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < g->n && i < max; i++)
        cJSON_AddItemToArray(a, tally_json(&g->v[i].t, key_name, g->v[i].key));
    return a;
}

static int print_json(const struct report *r)
{
    char a[32];
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return -1;
    cJSON_AddNumberToObject(o, "v", 1);
    cJSON_AddStringToObject(o, "by", period_names[r->by]);
    if (r->have_since)
        cJSON_AddStringToObject(o, "since", r->since_arg);
    if (r->have_until)
        cJSON_AddStringToObject(o, "until", r->until_arg);
    cJSON_AddNumberToObject(o, "logs", (double)r->nfiles);
    cJSON_AddNumberToObject(o, "lines", (double)r->lines);
    cJSON_AddNumberToObject(o, "bad_lines", (double)r->bad);
    cJSON_AddNumberToObject(o, "outside_dates", (double)r->out_of_range);
    cJSON_AddNumberToObject(o, "counted_at_another_door", (double)r->again);
    if (r->total.checked) {
        iso_str(r->first, a, sizeof a);
        cJSON_AddStringToObject(o, "first", a);
        iso_str(r->last, a, sizeof a);
        cJSON_AddStringToObject(o, "last", a);
    }
    cJSON_AddItemToObject(o, "total", tally_json(&r->total, NULL, NULL));
    cJSON_AddItemToObject(o, "periods", groups_json(&r->periods, "period", SIZE_MAX));
    cJSON_AddItemToObject(o, "partitions", groups_json(&r->partitions, "partition", SIZE_MAX));
    cJSON_AddItemToObject(o, "users", groups_json(&r->users, "user", SIZE_MAX));
    cJSON *m = cJSON_AddArrayToObject(o, "top_rejected_models");
    for (size_t i = 0; m && i < r->models.n && i < TOP_MODELS; i++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "model", r->models.v[i].key);
        cJSON_AddNumberToObject(x, "rejected", (double)r->models.v[i].t.checked);
        cJSON_AddItemToArray(m, x);
    }
    char *s = fg_cli_json_print(o);
    cJSON_Delete(o);
    if (!s)
        return -1;
    puts(s);
    free(s);
    return 0;
}

/* ---- HTML -------------------------------------------------------------------------- */

static const char *const verdict_colour[FG_AUDIT_N_VERDICTS] = {
    "#59a14f", "#edc948", "#e15759", "#4e79a7", "#b07aa1", "#9c755f",
};

static const char css[] =
    ":root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--soft:#f6f8fa}"
    "*{box-sizing:border-box}"
    "body{margin:0;padding:24px 32px 48px;font:14px/1.45 system-ui,-apple-system,'Segoe UI',"
    "Roboto,'Helvetica Neue',Arial,sans-serif;color:var(--fg);background:#fff;max-width:1320px}"
    "h1{font-size:24px;margin:0 0 4px}"
    "h2{font-size:18px;margin:32px 0 8px;padding-bottom:4px;border-bottom:1px solid var(--line)}"
    "p{margin:6px 0}.muted{color:var(--muted)}"
    "table{border-collapse:collapse;margin:8px 0;font-variant-numeric:tabular-nums}"
    "th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}"
    "th{background:var(--soft);font-weight:600}td.num,th.num{text-align:right}"
    "tr.total td{font-weight:600;background:var(--soft)}"
    ".facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:8px;"
    "margin:12px 0}"
    ".fact{background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:8px 12px}"
    ".fact b{display:block;font-size:20px}"
    "svg{display:block;max-width:100%;height:auto}"
    "svg text{font-family:system-ui,-apple-system,'Segoe UI',Roboto,Arial,sans-serif}"
    ".legend span{display:inline-block;margin-right:14px;white-space:nowrap}"
    ".sw{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:4px;"
    "vertical-align:-1px}"
    "footer{margin-top:40px;color:var(--muted);font-size:12px}";

static void html_legend(FILE *f)
{
    fputs("<p class=\"legend\">", f);
    for (int v = 0; v < FG_AUDIT_N_VERDICTS; v++)
        fprintf(f, "<span><i class=\"sw\" style=\"background:%s\"></i>%s</span>",
                verdict_colour[v], fg_audit_verdict_name((enum fg_audit_verdict)v));
    fputs("</p>\n", f);
}

/* A round axis maximum at or above v whose quarters are round too: {1, 2, 4, 6, 8} x 10^k. */
static double nice_max(double v)
{
    static const double steps[] = {1, 2, 4, 6, 8, 10};
    if (v <= 4)
        return 4;
    double p = pow(10, floor(log10(v)));
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if (steps[i] * p >= v)
            return steps[i] * p;
    return 10 * p;
}

/* Vertical stacked bars: one per period, one segment per verdict. */
static void html_period_chart(FILE *f, const struct groups *g)
{
    const double W = 960, H = 300, L = 56, R = 16, T = 16, B = 48;
    double max = 0;
    for (size_t i = 0; i < g->n; i++)
        if ((double)g->v[i].t.checked > max)
            max = (double)g->v[i].t.checked;
    max = nice_max(max);
    double pw = W - L - R, ph = H - T - B;
    double step = g->n ? pw / (double)g->n : pw;
    double bw = fmin(56, step * 0.7);
    size_t every = g->n > 24 ? (g->n + 23) / 24 : 1;
    fprintf(f, "<svg id=\"period-chart\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
               "role=\"img\" aria-label=\"decisions per period by verdict\">\n", W, H, W, H);
    for (int k = 0; k <= 4; k++) {
        double y = T + ph - ph * k / 4.0;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#d1d9e0\"/>"
                   "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%g</text>\n",
                L, y, W - R, y, L - 6, y + 4, max * k / 4.0);
    }
    for (size_t i = 0; i < g->n; i++) {
        const struct tally *t = &g->v[i].t;
        double x = L + step * (double)i + (step - bw) / 2, y = T + ph;
        fputs("<g class=\"bar\" data-key=\"", f);
        fg_cli_html_esc(f, g->v[i].key);
        fprintf(f, "\" data-checked=\"%llu\">", (unsigned long long)t->checked);
        for (int v = 0; v < FG_AUDIT_N_VERDICTS; v++) {
            if (!t->n[v])
                continue;
            double h = ph * (double)t->n[v] / max;
            y -= h;
            fprintf(f, "<rect class=\"segment\" data-verdict=\"%s\" x=\"%.1f\" y=\"%.1f\" "
                       "width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>",
                    fg_audit_verdict_name((enum fg_audit_verdict)v), x, y, bw, h,
                    verdict_colour[v]);
            fg_cli_html_esc(f, g->v[i].key);
            fprintf(f, ": %llu %s</title></rect>", (unsigned long long)t->n[v],
                    fg_audit_verdict_name((enum fg_audit_verdict)v));
        }
        if (i % every == 0) {
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">",
                    x + bw / 2, T + ph + 16);
            fg_cli_html_esc(f, g->v[i].key);
            fputs("</text>", f);
        }
        fputs("</g>\n", f);
    }
    fputs("</svg>\n", f);
}

/* Horizontal stacked bars: one row per group (at most max rows). */
static void html_row_chart(FILE *f, const char *id, const struct groups *g, size_t max_rows)
{
    const double W = 960, L = 200, R = 60, row = 22;
    size_t n = g->n < max_rows ? g->n : max_rows;
    double max = 0;
    for (size_t i = 0; i < n; i++)
        if ((double)g->v[i].t.checked > max)
            max = (double)g->v[i].t.checked;
    if (max < 1)
        max = 1;
    double H = row * (double)n + 8;
    fprintf(f, "<svg id=\"%s\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
               "role=\"img\">\n", id, W, H, W, H);
    for (size_t i = 0; i < n; i++) {
        const struct tally *t = &g->v[i].t;
        double y = 4 + row * (double)i, x = L;
        char label[48];
        snprintf(label, sizeof label, "%.28s%s", g->v[i].key, strlen(g->v[i].key) > 28 ? "..." : "");
        fputs("<g class=\"bar\" data-key=\"", f);
        fg_cli_html_esc(f, g->v[i].key);
        fprintf(f, "\" data-checked=\"%llu\"><text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" "
                   "text-anchor=\"end\">", (unsigned long long)t->checked, L - 8, y + 15);
        fg_cli_html_esc(f, label);
        fputs("</text>", f);
        for (int v = 0; v < FG_AUDIT_N_VERDICTS; v++) {
            if (!t->n[v])
                continue;
            double w = (W - L - R) * (double)t->n[v] / max;
            fprintf(f, "<rect class=\"segment\" data-verdict=\"%s\" x=\"%.1f\" y=\"%.1f\" "
                       "width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>",
                    fg_audit_verdict_name((enum fg_audit_verdict)v), x, y + 2, w, row - 6,
                    verdict_colour[v]);
            fg_cli_html_esc(f, g->v[i].key);
            fprintf(f, ": %llu %s</title></rect>", (unsigned long long)t->n[v],
                    fg_audit_verdict_name((enum fg_audit_verdict)v));
            x += w;
        }
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">%llu</text></g>\n", x + 6,
                y + 15, (unsigned long long)t->checked);
    }
    fputs("</svg>\n", f);
}

static void html_table_row(FILE *f, const char *key, const struct tally *t, bool total)
{
    char s[64];
    fputs(total ? "<tr class=\"total\"><td>" : "<tr><td>", f);
    fg_cli_html_esc(f, key);
    fprintf(f, "</td><td class=\"num\">%llu</td>", (unsigned long long)t->checked);
    for (int v = 0; v < FG_AUDIT_N_VERDICTS; v++)
        fprintf(f, "<td class=\"num\">%llu</td>", (unsigned long long)t->n[v]);
    fprintf(f, "<td class=\"num\">%llu</td><td class=\"num\">%llu</td><td class=\"num\">%s</td>"
               "</tr>\n", (unsigned long long)t->gpus_asked, (unsigned long long)t->gpus_after,
            shrunk_str(t, s, sizeof s));
}

static void html_table(FILE *f, const char *id, const char *first, const struct groups *g,
                       const struct tally *total)
{
    fprintf(f, "<table id=\"%s\">\n<tr><th>%s</th><th class=\"num\">checked</th>", id, first);
    for (int v = 0; v < FG_AUDIT_N_VERDICTS; v++)
        fprintf(f, "<th class=\"num\">%s</th>", fg_audit_verdict_name((enum fg_audit_verdict)v));
    fputs("<th class=\"num\">GPUs asked</th><th class=\"num\">after</th>"
          "<th class=\"num\">GPU-hours shrunk</th></tr>\n", f);
    for (size_t i = 0; i < g->n; i++)
        html_table_row(f, g->v[i].key, &g->v[i].t, false);
    if (total)
        html_table_row(f, "total", total, true);
    fputs("</table>\n", f);
}

static void html_write(FILE *f, const struct report *r)
{
    char a[32], b[32];
    const struct tally *t = &r->total;
    fg_cli_html_head(f, "fitgate audit report", css);
    fputs("<header>\n<h1>fitgate audit report</h1>\n<p class=\"muted\">", f);
    fprintf(f, "%llu decision%s from %zu log%s", (unsigned long long)t->checked,
            t->checked == 1 ? "" : "s", r->nfiles, r->nfiles == 1 ? "" : "s");
    if (t->checked) {
        date_str(r->first, a, sizeof a);
        date_str(r->last, b, sizeof b);
        fprintf(f, ", %s .. %s UTC", a, b);
    }
    fprintf(f, "; by %s", period_names[r->by]);
    if (r->have_since || r->have_until) {
        fputs("; dates ", f);
        fg_cli_html_esc(f, r->have_since ? r->since_arg : "...");
        fputs(" to ", f);
        fg_cli_html_esc(f, r->have_until ? r->until_arg : "...");
    }
    fprintf(f, "; %llu line%s skipped (not audit lines this fitgate reads)</p>\n</header>\n",
            (unsigned long long)r->bad, r->bad == 1 ? "" : "s");

    fputs("<section id=\"summary\">\n<h2>Summary</h2>\n<div class=\"facts\">\n", f);
    fprintf(f, "<div class=\"fact\">jobs checked<b id=\"n-checked\">%llu</b></div>\n",
            (unsigned long long)t->checked);
    for (int v = 0; v < FG_AUDIT_N_VERDICTS; v++)
        fprintf(f, "<div class=\"fact\">%s<b id=\"n-%s\">%llu</b></div>\n",
                fg_audit_verdict_name((enum fg_audit_verdict)v),
                fg_audit_verdict_name((enum fg_audit_verdict)v), (unsigned long long)t->n[v]);
    fprintf(f, "<div class=\"fact\">GPUs asked &rarr; after<b>%llu &rarr; %llu</b></div>\n",
            (unsigned long long)t->gpus_asked, (unsigned long long)t->gpus_after);
    fprintf(f, "<div class=\"fact\">GPU-hours of requests shrunk<b id=\"n-shrunk\">%s</b></div>\n",
            shrunk_str(t, a, sizeof a));
    fputs("</div>\n<p class=\"muted\">GPU-hours shrunk: (GPUs asked &minus; after) &times; the "
          "job's time limit, for requests the decision lowered; unknown where the line has no "
          "time limit.</p>\n</section>\n", f);

    fprintf(f, "<section id=\"periods\">\n<h2>Decisions per %s</h2>\n", period_names[r->by]);
    html_legend(f);
    html_period_chart(f, &r->periods);
    html_table(f, "period-table", period_names[r->by], &r->periods, &r->total);
    fputs("</section>\n<section id=\"partitions\">\n<h2>Per partition</h2>\n", f);
    html_row_chart(f, "partition-chart", &r->partitions, SIZE_MAX);
    html_table(f, "partition-table", "partition", &r->partitions, NULL);
    fputs("</section>\n<section id=\"users\">\n<h2>Per user</h2>\n", f);
    if (r->users.n > CHART_USERS)
        fprintf(f, "<p class=\"muted\">The %d users with the most decisions; the table has all "
                   "%zu.</p>\n", CHART_USERS, r->users.n);
    html_row_chart(f, "user-chart", &r->users, CHART_USERS);
    html_table(f, "user-table", "user", &r->users, NULL);
    fputs("</section>\n<section id=\"models\">\n<h2>Models rejected most often</h2>\n"
          "<table id=\"model-table\">\n<tr><th class=\"num\">rejected</th><th>model</th></tr>\n",
          f);
    for (size_t i = 0; i < r->models.n && i < TOP_MODELS; i++) {
        fprintf(f, "<tr><td class=\"num\">%llu</td><td>",
                (unsigned long long)r->models.v[i].t.checked);
        fg_cli_html_esc(f, r->models.v[i].key);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n</section>\n<footer>fitgate report; audit line format v1 (docs/audit.md)"
          "</footer>\n</body>\n</html>\n", f);
}

static int html_page(FILE *f, const void *ctx, struct fg_err *err)
{
    (void)err;
    html_write(f, ctx);
    return 0;
}

/* ---- the command ------------------------------------------------------------------- */

static void usage(FILE *f)
{
    fputs("usage: fitgate report LOG... [--json] [--html FILE] [--by day|week|month]\n"
          "                      [--since DATE] [--until DATE]\n"
          "LOG: an audit trail (fitgate.conf LogFile=), '-' for standard input.\n"
          "DATE: YYYY-MM-DD (UTC; --until includes that day) or YYYY-MM-DDTHH:MM:SSZ.\n",
          f);
}

int fg_cli_report(int argc, char **argv)
{
    static struct report r;
    const char *html = NULL;
    bool json = false;
    const char **logs = calloc((size_t)argc, sizeof *logs);
    size_t nlogs = 0;
    int status = 2;
    memset(&r, 0, sizeof r);
    r.by = BY_MONTH;
    if (!logs) {
        fprintf(stderr, "fitgate: error: out of memory\n");
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--json")) {
            json = true;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            status = 0;
            goto out;
        } else if (!strcmp(a, "--html") || !strcmp(a, "--by") || !strcmp(a, "--since") ||
                   !strcmp(a, "--until")) {
            if (!v) {
                fprintf(stderr, "fitgate: error: %s needs a value\n", a);
                goto out;
            }
            i++;
            if (!strcmp(a, "--html")) {
                html = v;
            } else if (!strcmp(a, "--by")) {
                int k = 0;
                while (k < 3 && strcmp(v, period_names[k]))
                    k++;
                if (k == 3) {
                    fprintf(stderr, "fitgate: error: --by %s: expected day, week or month\n", v);
                    goto out;
                }
                r.by = (enum period)k;
            } else {
                bool until = !strcmp(a, "--until");
                if (parse_date(v, until, until ? &r.until : &r.since) || strlen(v) >= 32) {
                    fprintf(stderr, "fitgate: error: %s %s: expected YYYY-MM-DD or "
                                    "YYYY-MM-DDTHH:MM:SSZ\n", a, v);
                    goto out;
                }
                snprintf(until ? r.until_arg : r.since_arg, 32, "%s", v);
                *(until ? &r.have_until : &r.have_since) = true;
            }
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "fitgate: error: unknown option %s\n", a);
            usage(stderr);
            goto out;
        } else {
            logs[nlogs++] = a;
        }
    }
    if (!nlogs) {
        usage(stderr);
        goto out;
    }
    if (r.have_since && r.have_until && r.until <= r.since) {
        fprintf(stderr, "fitgate: error: --until %s is not after --since %s\n", r.until_arg,
                r.since_arg);
        goto out;
    }
    if (fg_cli_audit_read_all(logs, nlogs, &r.lines, &r.bad, count_in_range, &r))
        goto out;
    r.nfiles = nlogs;
    sort_groups(&r.periods, by_key);
    sort_groups(&r.partitions, by_checked);
    sort_groups(&r.users, by_checked);
    sort_groups(&r.models, by_checked);
    if (html) {
        struct fg_err err = {0};
        if (fg_cli_html_file(html, html_page, &r, &err)) {
            fprintf(stderr, "fitgate: error: %s\n", err.detail);
            goto out;
        }
    }
    if (json) {
        if (print_json(&r)) {
            fprintf(stderr, "fitgate: error: out of memory\n");
            goto out;
        }
    } else {
        print_text(&r);
    }
    status = fflush(stdout) ? 2 : 0;
out:
    report_free(&r);
    free(logs);
    return status;
}
