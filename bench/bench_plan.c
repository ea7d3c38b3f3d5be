/*
 * bench_plan.c - estimator throughput, in-process, over every fixture model
 * (`make bench` runs it; tools/bench.sh writes the results to build/bench.txt).
 *
 * What is timed, per model, one "op" each (all libfitgate calls, no output):
 *
 *   graph-from-text  fg_config_parse of the config.json text already in memory, then
 *                    fg_model_from_config, then both freed.
 *   full plan        the brief's definition: the model graph from an already-parsed
 *                    config (fg_model_from_config), the job's estimate with its lines, the
 *                    5-card table (T4, L4, A100 40 GB, H100 SXM, H200, looked up by alias
 *                    as the CLI does; the full / LoRA / serve estimates, totals only, once,
 *                    as the CLI's table, + fit on each card: 15) and the planner for one card
 *                    (fg_plan_layouts on H200, run whether or not one card holds the
 *                    job), then the graph freed.
 *   cli plan         what `fitgate plan M --gpu h200` computes, without printing: the full
 *                    plan above plus the planner for every table cell that needs more than
 *                    one card (the table prints "split: N cards" from it), and the requested
 *                    card's planner only when one H200 is not enough.
 *   gate 4096 GPUs   (--op large) the gate for a full fine-tune under Megatron asked as
 *                    --gpus=h200:4096, no layout declared: the planner's search up to the
 *                    GPUs asked, the decision and its re-checks (fg_gate_run).
 *
 * Rates are ops per second of this thread's CPU time (CLOCK_THREAD_CPUTIME_ID), i.e.
 * per core; wall-clock rates are printed beside them.  A "round" runs every model
 * once (so big and small models weigh equally, as in the corpus); rounds repeat until
 * --min-ms of CPU time has passed; the whole measurement is repeated --runs times and
 * the median, min and max of the runs are printed.
 *
 * usage: bench_plan [--models DIR] [--runs N] [--min-ms MS] [--per-model] [--only NAME]
 *                   [--op text|full|cli|large|reject]
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arch/graph.h"
#include "source/config.h"
#include "plan/fit.h"
#include "gate.h"
#include "hw/gpu.h"
#include "job/jobspec.h"
#include "memory/memory.h"
#include "model/model.h"
#include "plan/plan.h"

struct model_in {
    char name[256];
    char *text;
    size_t len;
    struct fg_config *doc;
};

/* cli/report_html.c fg_cli_default_cards: the card table of `fitgate plan` */
static const char *const table_cards[] = {"t4", "l4", "a100_40g", "h100_sxm", "h200"};
static const enum fg_mode table_modes[3] = {FG_MODE_FULL, FG_MODE_LORA, FG_MODE_SERVE};

static double now(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        *len = (size_t)n;
    }
    return buf;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(((const struct model_in *)a)->name, ((const struct model_in *)b)->name);
}

/* Every DIR/<name>/config.json, sorted by name; the count, or -1. */
static int load_models(const char *dir, const char *only, struct model_in **out)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct model_in *v = NULL;
    int n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        char path[4096];
        if (de->d_name[0] == '.' || (only && strcmp(de->d_name, only)))
            continue;
        snprintf(path, sizeof path, "%s/%s/config.json", dir, de->d_name);
        size_t len;
        char *text = slurp(path, &len);
        if (!text)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            v = realloc(v, (size_t)cap * sizeof *v);
            if (!v)
                return -1;
        }
        struct fg_err err = {0};
        snprintf(v[n].name, sizeof v[n].name, "%s", de->d_name);
        v[n].text = text;
        v[n].len = len;
        if (fg_config_parse(text, len, path, &v[n].doc, &err)) {
            fprintf(stderr, "bench_plan: %s: %s\n", path, err.detail);
            return -1;
        }
        n++;
    }
    closedir(d);
    qsort(v, (size_t)n, sizeof *v, cmp_name);
    *out = v;
    return n;
}

static volatile uint64_t sink; /* keeps the optimiser from dropping results */

static int op_graph_from_text(const struct model_in *mi)
{
    struct fg_err err = {0};
    struct fg_config *doc = NULL;
    struct fg_model *m = NULL;
    int rc = fg_config_parse(mi->text, mi->len, mi->name, &doc, &err);
    if (!rc)
        rc = fg_model_from_config(doc, mi->name, &m, &err);
    if (m)
        sink += m->params_total;
    fg_model_free(m);
    fg_config_free(doc);
    return rc;
}

/* full (the brief's definition) when cli is false; what `fitgate plan --gpu h200` computes
 * when cli is true.  Errors from the estimator are results too (the CLI prints them): a
 * failing estimate counts as a completed op, as it does for the CLI process. */
static int op_plan(const struct model_in *mi, bool cli)
{
    struct fg_err err = {0};
    struct fg_model *m = NULL;
    int rc = fg_model_from_config(mi->doc, mi->name, &m, &err);
    if (rc)
        return rc;
    const struct fg_gpu_table *t = fg_gpu_table_builtin();
    struct fg_plan_opts po;
    fg_plan_opts_default(&po);
    struct fg_job job;
    fg_job_defaults(&job, FG_MODE_FULL);
    struct fg_estimate est;
    struct fg_fit fit;
    static struct fg_plan plan; /* 5 KB: keep it off the stack */
    if (fg_memory_estimate(m, &job, &est, &err))
        goto done;
    sink += est.total_bytes;
    static struct fg_estimate cell[3]; /* as cmd_plan.c table_estimates: once, every card */
    for (int k = 0; k < 3; k++) {
        struct fg_job j;
        fg_job_defaults(&j, table_modes[k]);
        if (fg_memory_estimate_totals(m, &j, &cell[k], &err))
            goto done;
    }
    for (size_t c = 0; c < sizeof table_cards / sizeof table_cards[0]; c++) {
        const struct fg_gpu *g = fg_gpu_find(t, table_cards[c], NULL);
        if (!g)
            continue;
        uint64_t usable = fg_fit_usable(g->memory_gb, g->memory_bytes, &po.fit);
        for (int k = 0; k < 3; k++) {
            struct fg_job j;
            fg_job_defaults(&j, table_modes[k]);
            fg_fit_card(&cell[k], usable, &po.fit, &fit);
            sink += fit.max_batch;
            if (cli && fit.verdict == FG_FIT_SPLIT) {
                if (fg_plan_layouts(m, &j, usable, &po, &plan, &err))
                    goto done;
                sink += plan.n;
            }
        }
    }
    const struct fg_gpu *h200 = fg_gpu_find(t, "h200", NULL);
    uint64_t usable = fg_fit_usable(h200->memory_gb, h200->memory_bytes, &po.fit);
    fg_fit_card(&est, usable, &po.fit, &fit);
    if (!cli || fit.verdict == FG_FIT_SPLIT) {
        if (fg_plan_layouts(m, &job, usable, &po, &plan, &err))
            goto done;
        sink += plan.n;
    }
done:
    fg_model_free(m);
    return 0;
}

/* The gate on a large request: a full fine-tune under Megatron on `gpus` H200 asked as
 * --gpus=h200:N, no layout declared (fg_gate_run: assess, the planner's search up to the
 * GPUs asked, the decision, and its remedies or re-check). */
static int op_large(const struct model_in *mi, uint32_t gpus)
{
    static struct fg_gate g; /* 40 KB: off the stack */
    struct fg_err err = {0};
    struct fg_model *m = NULL;
    struct fg_jobspec spec;
    struct fg_policy pol;
    struct fg_request q;
    char v[32];
    int rc = fg_model_from_config(mi->doc, mi->name, &m, &err);
    if (rc)
        return rc;
    fg_jobspec_init(&spec, NULL);
    if ((rc = fg_jobspec_set(&spec, FG_JOBOPT_FRAMEWORK, "megatron", &err)) ||
        (rc = fg_jobspec_finish(&spec, &err)))
        goto done;
    fg_policy_init(&pol);
    fg_request_init(&q);
    snprintf(v, sizeof v, "h200:%u", gpus);
    fg_request_from_option(&q, "gpus", v, 1, fg_gpu_table_builtin());
    fg_gate_run(m, &spec, &q, &pol.rules, FG_ONERR_REJECT, &g);
    sink += g.d.layout.gpus;
done:
    fg_model_free(m);
    return rc;
}

/* The gate on a job that nothing holds, asked for on 16,384 GPUs: a DPO LoRA at 16,384
 * tokens a sequence under transformers on --gpus=a100_40g:16384 (issue 36: granite-4.0-h-
 * small took 32 s), rejected after its own planner's search up to the GPUs asked, the other
 * frameworks' plan, and every remedy tried and re-checked. */
static int op_reject(const struct model_in *mi)
{
    static struct fg_gate g;
    struct fg_err err = {0};
    struct fg_model *m = NULL;
    struct fg_jobspec spec;
    struct fg_policy pol;
    struct fg_request q;
    int rc = fg_model_from_config(mi->doc, mi->name, &m, &err);
    if (rc)
        return rc;
    fg_jobspec_init(&spec, NULL);
    if ((rc = fg_jobspec_set(&spec, FG_JOBOPT_MODE, "dpo", &err)) ||
        (rc = fg_jobspec_set(&spec, FG_JOBOPT_ADAPTER, "lora", &err)) ||
        (rc = fg_jobspec_set(&spec, FG_JOBOPT_SEQ_LEN, "16384", &err)) ||
        (rc = fg_jobspec_finish(&spec, &err)))
        goto done;
    fg_policy_init(&pol);
    fg_request_init(&q);
    fg_request_from_option(&q, "gpus", "a100_40g:16384", 1, fg_gpu_table_builtin());
    fg_gate_run(m, &spec, &q, &pol.rules, FG_ONERR_REJECT, &g);
    sink += g.d.kind + g.rem.n;
done:
    fg_model_free(m);
    return rc;
}

enum op_kind { OP_GRAPH_TEXT, OP_FULL, OP_CLI, OP_LARGE, OP_REJECT, OP_COUNT };
static const char *const op_names[OP_COUNT] = {"graph-from-text", "full plan", "cli plan",
                                               "gate 4096 GPUs", "rejected 16384 GPUs"};

static int run_op(enum op_kind k, const struct model_in *mi)
{
    switch (k) {
    case OP_GRAPH_TEXT: return op_graph_from_text(mi);
    case OP_FULL: return op_plan(mi, false);
    case OP_LARGE: return op_large(mi, 4096);
    case OP_REJECT: return op_reject(mi);
    default: return op_plan(mi, true);
    }
}

/* One measurement: rounds over models[0..n) until min_s of thread CPU time.
 * Returns ops per CPU second; *wall_rate gets ops per wall second. */
static double measure(enum op_kind k, const struct model_in *models, int n, double min_s,
                      double *wall_rate)
{
    double c0 = now(CLOCK_THREAD_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC), c1, w1;
    long ops = 0;
    do {
        for (int i = 0; i < n; i++) {
            if (run_op(k, &models[i]) != 0) {
                fprintf(stderr, "bench_plan: %s failed on %s\n", op_names[k], models[i].name);
                exit(2);
            }
        }
        ops += n;
        c1 = now(CLOCK_THREAD_CPUTIME_ID);
        w1 = now(CLOCK_MONOTONIC);
    } while (c1 - c0 < min_s);
    *wall_rate = (double)ops / (w1 - w0);
    return (double)ops / (c1 - c0);
}

static void report(enum op_kind k, const struct model_in *models, int n, int runs, double min_s,
                   const char *label)
{
    double cpu[64], wall[64];
    if (runs > 64)
        runs = 64;
    for (int r = 0; r < runs; r++)
        cpu[r] = measure(k, models, n, min_s, &wall[r]);
    qsort(cpu, (size_t)runs, sizeof cpu[0], cmp_double);
    qsort(wall, (size_t)runs, sizeof wall[0], cmp_double);
    double med = runs % 2 ? cpu[runs / 2] : (cpu[runs / 2 - 1] + cpu[runs / 2]) / 2;
    double wmed = runs % 2 ? wall[runs / 2] : (wall[runs / 2 - 1] + wall[runs / 2]) / 2;
    printf("%-16s %-44s %12.0f /s/core  (min %.0f, max %.0f; %8.2f us/op)  wall %12.0f /s\n",
           op_names[k], label, med, cpu[0], cpu[runs - 1], 1e6 / med, wmed);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const char *dir = "tests/fixtures/models", *only = NULL;
    int runs = 7;
    double min_ms = 300;
    bool per_model = false;
    int op_only = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--models") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--min-ms") && i + 1 < argc)
            min_ms = atof(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--op") && i + 1 < argc) {
            const char *o = argv[++i];
            op_only = !strcmp(o, "text") ? OP_GRAPH_TEXT : !strcmp(o, "full") ? OP_FULL
                      : !strcmp(o, "cli") ? OP_CLI : !strcmp(o, "large") ? OP_LARGE
                      : !strcmp(o, "reject") ? OP_REJECT : -2;
        } else if (!strcmp(argv[i], "--per-model"))
            per_model = true;
        else {
            fprintf(stderr, "usage: bench_plan [--models DIR] [--runs N] [--min-ms MS] "
                            "[--per-model] [--only NAME] [--op text|full|cli|large|reject]\n");
            return 2;
        }
    }
    if (runs < 1)
        runs = 1;
    if (op_only == -2) {
        fprintf(stderr, "bench_plan: --op is one of text, full, cli, large, reject\n");
        return 2;
    }
    struct model_in *models = NULL;
    int n = load_models(dir, only, &models);
    if (n <= 0) {
        fprintf(stderr, "bench_plan: no config.json under %s\n", dir);
        return 2;
    }
    if (!fg_gpu_table_builtin() || !fg_gpu_find(NULL, "h200", NULL)) {
        fprintf(stderr, "bench_plan: built-in GPU table has no h200\n");
        return 2;
    }
    printf("# bench_plan: %d models from %s; %d runs of >= %.0f ms CPU each; median (min, max)\n",
           n, dir, runs, min_ms);
    char label[64];
    snprintf(label, sizeof label, "all %d models, one round each", n);
    /* the 4096-GPU gate only when asked for (--op large), on the models given */
    for (int k = 0; k < OP_COUNT; k++)
        if ((op_only < 0 && k != OP_LARGE && k != OP_REJECT) || op_only == k)
            report((enum op_kind)k, models, n, runs, min_ms / 1e3, label);
    if (per_model) {
        /* Per model: fewer, shorter runs; the slowest models are what the corpus rate hides. */
        for (int k = OP_FULL; k < OP_COUNT; k++)
            for (int i = 0; i < n && (op_only < 0 || op_only == k); i++)
                report((enum op_kind)k, &models[i], 1, 3, min_ms / 1e3 / 10, models[i].name);
    }
    for (int i = 0; i < n; i++) {
        fg_config_free(models[i].doc);
        free(models[i].text);
    }
    free(models);
    return 0;
}
