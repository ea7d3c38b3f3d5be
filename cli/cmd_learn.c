/*
 * fitgate learn AUDIT_LOG... [--sacct FILE] [--logs DIR] [--json] [--html FILE]
 *               [--min-jobs N] [--far-below F] [--write-calibration FILE]
 *
 * Closes the loop: what fitgate estimated for a job against what the job then
 * used.  Three records are joined (docs/learn.md):
 *
 *   the decision      the audit line written at submission (sbatch, salloc,
 *                     srun): estimate, layout, card, verdict; no job id;
 *   the job id        the audit line the node writes ("where":"stepd"), with
 *                     the job id and the same submit_id, of the same user
 *                     (a job_submit decision carries its job id itself);
 *   what it used      sacct -p (policies/sacct.h): state, exit code, GPUs,
 *                     TRESUsageInMax gres/gpumem; where Slurm has none, the
 *                     node's own NVML sample (GpuSampler=: gpu_peak_bytes on
 *                     the job's last stepd line), already per GPU.
 *
 * Like with like: gres/gpumem is driver-level memory (the CUDA context and
 * everything the allocator reserved) of a task, summed over its GPUs; the
 * estimate is what the framework allocates on one GPU, without the context.
 * So per job: actual = gres/gpumem / GPUs per task, compared with estimate
 * per GPU + FG_CUDA_PROCESS_BYTES; ratio = actual / (estimate + context).
 * The calibration factor of a job is (actual - context) / estimate: what the
 * engine's estimate must be multiplied by to give what ran.
 *
 * Exit status: 0 the report was written, 2 an argument or a file could not
 * be used.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "auditlog.h"
#include "memory/calib.h"
#include "cli.h"
#include "format.h"
#include "util/fileio.h"
#include "plan/fit.h"
#include "html.h"
#include "jobopts.h"
#include "model/model.h"
#include "learn_data.h"
#include "learnrec.h"
#include "sacct.h"

/* ---- output ---------------------------------------------------------------------- */

static double gib(uint64_t b)
{
    return (double)b / (1024.0 * 1024 * 1024);
}

static const char *flags_of(const struct job *j, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s%s%s%s",
             j->admitted && j->gpu_oom ? "admitted-died-gpu-oom " : "",
             j->admitted && j->gpu_oom_likely ? "admitted-failed-at-card-limit " : "",
             j->host_oom ? "host-oom " : "", j->far_below ? "far-below " : "");
    size_t n = strlen(buf);
    if (n)
        buf[n - 1] = '\0';
    return buf;
}

/* What became of a job: its state, or what it died of. */
static const char *outcome(const struct job *j)
{
    if (j->gpu_oom)
        return "GPU_OOM";
    if (j->gpu_oom_likely)
        return "GPU_OOM?";
    return j->acct->state[0] ? j->acct->state : "UNKNOWN";
}

/* Verdict x outcome counts: rows in first-seen order of "verdict outcome". */
struct vo {
    char verdict[16], outcome[32];
    unsigned n;
};

static size_t verdict_outcome(const struct learn *l, struct vo *v, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < l->n_jobs; i++) {
        const char *vd = fg_audit_verdict_name(l->jobs[i].sub->verdict), *oc = outcome(&l->jobs[i]);
        size_t k = 0;
        while (k < n && (strcmp(v[k].verdict, vd) || strcmp(v[k].outcome, oc)))
            k++;
        if (k == n) {
            if (n == cap)
                continue;
            snprintf(v[n].verdict, sizeof v[n].verdict, "%s", vd);
            snprintf(v[n].outcome, sizeof v[n].outcome, "%s", oc);
            v[n++].n = 0;
        }
        v[k].n++;
    }
    return n;
}

#define MAX_VO 64

static void text_groups(const char *title, const struct group *g, size_t n)
{
    printf("\n%s\n  %-36s %5s %7s %15s %7s %6s\n", title, "GROUP", "JOBS", "MEDIAN",
           "P10..P90", "FREE", "OOM");
    for (size_t i = 0; i < n; i++)
        printf("  %-36.36s %5zu %7.3f %7.3f..%-7.3f %5u %5u\n", g[i].key, g[i].ratio.n,
               g[i].ratio.median, g[i].ratio.p10, g[i].ratio.p90, g[i].ratio.freeable,
               g[i].ratio.oom);
}

static void print_text(const struct learn *l, const struct group *fmf, size_t n_fmf,
                       const struct group *part, size_t n_part)
{
    char fl[96];
    printf("fitgate learn: %zu jobs joined (%llu audit lines, %llu node lines; unmatched %llu, "
           "other user %llu, not in sacct %llu, no gres/gpumem %llu",
           l->n_jobs, (unsigned long long)l->lines, (unsigned long long)l->stepd,
           (unsigned long long)l->unmatched, (unsigned long long)l->other_user,
           (unsigned long long)l->not_in_sacct, (unsigned long long)l->no_gpumem);
    if (l->untrusted)
        printf(", not believed %llu", (unsigned long long)l->untrusted);
    if (l->logs_refused)
        printf(", job outputs refused %llu", (unsigned long long)l->logs_refused);
    printf(")\n");
    printf("ratio = peak per GPU (sacct gres/gpumem / GPUs per task) / (estimate per GPU + "
           "%.1f GiB CUDA context)\n\n", gib(FG_CUDA_PROCESS_BYTES));
    printf("%-10s %-10s %-10s %-28s %-10s %-6s %4s %9s %9s %7s %-8s %-14s %s\n", "JOB",
           "USER", "PARTITION", "MODEL", "FRAMEWORK", "MODE", "GPUS", "EST GiB", "PEAK GiB",
           "RATIO", "VERDICT", "OUTCOME", "FLAGS");
    for (size_t i = 0; i < l->n_jobs; i++) {
        const struct job *j = &l->jobs[i];
        printf("%-10llu %-10.10s %-10.10s %-28.28s %-10.10s %-6s %4u %9.2f %9.2f %7.3f %-8s "
               "%-14s %s\n", (unsigned long long)j->job_id, j->sub->user, j->sub->partition,
               j->sub->model, j->sub->framework, j->sub->mode, j->gpus, gib(j->est),
               gib(j->actual), j->ratio, fg_audit_verdict_name(j->sub->verdict), outcome(j),
               flags_of(j, fl, sizeof fl));
    }
    struct vo vo[MAX_VO];
    size_t n_vo = verdict_outcome(l, vo, MAX_VO);
    printf("\nVerdict -> outcome:\n");
    for (size_t i = 0; i < n_vo; i++)
        printf("  %-8s -> %-14s %u\n", vo[i].verdict, vo[i].outcome, vo[i].n);
    text_groups("By framework x mode x model family:", fmf, n_fmf);
    if (l->family_unknown)
        printf("  %s: %llu job%s whose audit line records no model_type (written before "
               "fitgate recorded it, or not assessed) and whose model's config this machine "
               "does not hold\n",
               FAMILY_UNKNOWN, (unsigned long long)l->family_unknown,
               l->family_unknown == 1 ? "" : "s");
    text_groups("By partition:", part, n_part);
    bool any = false;
    for (size_t i = 0; i < l->n_jobs; i++) {
        const struct job *j = &l->jobs[i];
        if (!(j->admitted && (j->gpu_oom || j->gpu_oom_likely)) && !j->freeable && !j->host_oom)
            continue;
        if (!any)
            printf("\nFlags:\n");
        any = true;
        if (j->admitted && j->gpu_oom)
            printf("  job %llu: admitted (%s) and died of GPU memory: %s\n",
                   (unsigned long long)j->job_id, fg_audit_verdict_name(j->sub->verdict),
                   j->evidence);
        else if (j->admitted && j->gpu_oom_likely)
            printf("  job %llu: admitted (%s), FAILED with its peak at %.0f%% of the card: "
                   "likely GPU memory (no log to say)\n", (unsigned long long)j->job_id,
                   fg_audit_verdict_name(j->sub->verdict),
                   100.0 * (double)j->actual / (double)j->card);
        if (j->host_oom)
            printf("  job %llu: OUT_OF_MEMORY is the host's memory (the job's cgroup), not "
                   "the GPU's\n", (unsigned long long)j->job_id);
        if (j->freeable)
            printf("  job %llu: peak %.0f%% of each of its %u GPUs: about %u could have been "
                   "freed\n", (unsigned long long)j->job_id,
                   100.0 * (double)j->actual / (double)j->card, j->gpus, j->freeable);
    }
}

static cJSON *stats_json(const struct stats *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "jobs", (double)s->n);
    cJSON_AddNumberToObject(o, "median", s->median);
    cJSON_AddNumberToObject(o, "p10", s->p10);
    cJSON_AddNumberToObject(o, "p90", s->p90);
    cJSON_AddNumberToObject(o, "min", s->min);
    cJSON_AddNumberToObject(o, "max", s->max);
    if (s->lo > 0) {
        cJSON_AddNumberToObject(o, "ci95_low", s->lo);
        cJSON_AddNumberToObject(o, "ci95_high", s->hi);
    }
    return o;
}

static cJSON *groups_json(const struct group *g, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "group", g[i].key);
        cJSON_AddItemToObject(o, "ratio", stats_json(&g[i].ratio));
        cJSON_AddItemToObject(o, "factor", stats_json(&g[i].factor));
        cJSON_AddNumberToObject(o, "gpus_freeable", g[i].ratio.freeable);
        cJSON_AddNumberToObject(o, "admitted_gpu_oom", g[i].ratio.oom);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

/* One job's object (the "jobs" array's element). */
static cJSON *job_json(const struct job *j)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "job_id", (double)j->job_id);
    cJSON_AddStringToObject(o, "submit_id", j->sub->submit_id);
    cJSON_AddStringToObject(o, "user", j->sub->user);
    cJSON_AddStringToObject(o, "partition", j->sub->partition);
    cJSON_AddStringToObject(o, "model", j->sub->model);
    cJSON_AddStringToObject(o, "family", j->family);
    cJSON_AddStringToObject(o, "framework", j->sub->framework);
    cJSON_AddStringToObject(o, "mode", j->sub->mode);
    cJSON_AddStringToObject(o, "verdict", fg_audit_verdict_name(j->sub->verdict));
    cJSON_AddStringToObject(o, "state", j->acct->state);
    cJSON_AddNumberToObject(o, "exit_code", j->acct->exit_code);
    cJSON_AddNumberToObject(o, "gpus", j->gpus);
    cJSON_AddNumberToObject(o, "gpus_per_task", j->acct->gpus_per_task);
    cJSON_AddNumberToObject(o, "estimate_bytes", (double)j->est);
    cJSON_AddNumberToObject(o, "card_bytes", (double)j->card);
    cJSON_AddNumberToObject(o, "peak_bytes", (double)j->actual);
    cJSON_AddStringToObject(o, "peak_source", j->source);
    cJSON_AddNumberToObject(o, "ratio", j->ratio);
    cJSON_AddNumberToObject(o, "factor", j->factor);
    cJSON_AddNumberToObject(o, "calibration_applied", j->sub->calibration_milli / 1000.0);
    cJSON_AddBoolToObject(o, "admitted", j->admitted);
    cJSON_AddBoolToObject(o, "gpu_oom", j->gpu_oom);
    cJSON_AddBoolToObject(o, "gpu_oom_likely", j->gpu_oom_likely);
    cJSON_AddBoolToObject(o, "host_oom", j->host_oom);
    cJSON_AddBoolToObject(o, "far_below", j->far_below);
    cJSON_AddNumberToObject(o, "gpus_freeable", j->freeable);
    cJSON_AddStringToObject(o, "evidence", j->evidence ? j->evidence : "");
    return o;
}

/*
 * The whole answer as cJSON_Print would format it, without the jobs in memory at once: the
 * document is printed with a placeholder for "jobs", and each job's object is printed on its
 * own and indented to its place (two tabs deeper), ", " between them as cJSON writes arrays.
 * At 500k jobs the tree of every job was gigabytes.
 */
#define JOBS_MARK "\"@@fitgate-learn-jobs@@\""
static int print_json(const struct learn *l, const struct group *fmf, size_t n_fmf,
                      const struct group *part, size_t n_part)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "context_bytes", (double)FG_CUDA_PROCESS_BYTES);
    cJSON *c = cJSON_AddObjectToObject(root, "counts");
    cJSON_AddNumberToObject(c, "joined", (double)l->n_jobs);
    cJSON_AddNumberToObject(c, "audit_lines", (double)l->lines);
    cJSON_AddNumberToObject(c, "stepd_lines", (double)l->stepd);
    cJSON_AddNumberToObject(c, "unmatched", (double)l->unmatched);
    cJSON_AddNumberToObject(c, "other_user", (double)l->other_user);
    cJSON_AddNumberToObject(c, "not_in_sacct", (double)l->not_in_sacct);
    cJSON_AddNumberToObject(c, "no_gpumem", (double)l->no_gpumem);
    cJSON_AddNumberToObject(c, "untrusted", (double)l->untrusted);
    cJSON_AddNumberToObject(c, "logs_refused", (double)l->logs_refused);
    cJSON_AddNumberToObject(c, "family_unknown", (double)l->family_unknown);
    cJSON_AddStringToObject(root, "jobs", "@@fitgate-learn-jobs@@");
    struct vo vo[MAX_VO];
    size_t n_vo = verdict_outcome(l, vo, MAX_VO);
    cJSON *vos = cJSON_AddArrayToObject(root, "verdict_outcome");
    for (size_t i = 0; i < n_vo; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "verdict", vo[i].verdict);
        cJSON_AddStringToObject(o, "outcome", vo[i].outcome);
        cJSON_AddNumberToObject(o, "jobs", vo[i].n);
        cJSON_AddItemToArray(vos, o);
    }
    cJSON_AddItemToObject(root, "by_framework_mode_family", groups_json(fmf, n_fmf));
    cJSON_AddItemToObject(root, "by_partition", groups_json(part, n_part));
    char *s = fg_cli_json_print(root), *mark = s ? strstr(s, JOBS_MARK) : NULL;
    cJSON_Delete(root);
    if (!mark) {
        free(s);
        return -1;
    }
    fwrite(s, 1, (size_t)(mark - s), stdout);
    putchar('[');
    for (size_t i = 0; i < l->n_jobs; i++) {
        cJSON *o = job_json(&l->jobs[i]);
        char *t = o ? fg_cli_json_print(o) : NULL;
        cJSON_Delete(o);
        if (!t) {
            free(s);
            return -1;
        }
        if (i)
            fputs(", ", stdout);
        for (const char *p = t, *nl; *p; p = nl + 1) {
            if (!(nl = strchr(p, '\n'))) {
                fputs(p, stdout);
                break;
            }
            fwrite(p, 1, (size_t)(nl - p + 1), stdout);
            fputs("\t\t", stdout);
        }
        free(t);
    }
    putchar(']');
    puts(mark + strlen(JOBS_MARK));
    free(s);
    return 0;
}

/* One self-contained page: the scatter of estimate + context against the peak, per GPU. */
static int html_page(FILE *f, const void *ctx, struct fg_err *err)
{
    const struct learn *l = ctx;
    (void)err;
    double max = 1;
    for (size_t i = 0; i < l->n_jobs; i++) {
        double e = gib(l->jobs[i].est + FG_CUDA_PROCESS_BYTES), a = gib(l->jobs[i].actual);
        max = fmax(max, fmax(e, a));
    }
    max = ceil(max / 20) * 20; /* four ticks of a multiple of 5 GiB */
    const double W = 580, H = 560, X0 = 70, Y0 = 20, S = 480;
    fg_cli_html_head(f, "fitgate learn",
                     "body{font:14px sans-serif;margin:2em}circle{fill-opacity:.7}"
                     ".ok{fill:#2b6cb0}.oom{fill:#c53030}.far{fill:#d69e2e}");
    fprintf(f, "<h1>fitgate learn: estimate vs. peak, per GPU</h1>\n<p>%zu jobs. x: "
               "fitgate's estimate per GPU + %.1f GiB CUDA context; y: sacct's "
               "TRESUsageInMax gres/gpumem / GPUs per task, or the node's own NVML sample "
               "(GiB). On the dashed line the estimate was exact; above it, short. Red: "
               "admitted and died of GPU memory; amber: far below the card.</p>\n",
            l->n_jobs, gib(FG_CUDA_PROCESS_BYTES));
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "role=\"img\" aria-label=\"estimate against peak\">\n", W, H);
    fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" "
               "stroke=\"#999\"/>\n<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" "
               "stroke=\"#999\" stroke-dasharray=\"4\"/>\n", X0, Y0, S, S, X0, Y0 + S, X0 + S, Y0);
    for (int t = 0; t <= 4; t++) {
        double v = max * t / 4, p = S * t / 4;
        fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">%.0f</text>\n"
                   "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%.0f</text>\n",
                X0 + p, Y0 + S + 18, v, X0 - 6, Y0 + S - p + 4, v);
    }
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">estimate + context per "
               "GPU, GiB</text>\n<text transform=\"translate(14 %.0f) rotate(-90)\" "
               "text-anchor=\"middle\">peak per GPU, GiB</text>\n",
            X0 + S / 2, Y0 + S + 36, Y0 + S / 2);
    for (size_t i = 0; i < l->n_jobs; i++) {
        const struct job *j = &l->jobs[i];
        double x = X0 + S * gib(j->est + FG_CUDA_PROCESS_BYTES) / max;
        double y = Y0 + S - S * gib(j->actual) / max;
        const char *cls = j->admitted && (j->gpu_oom || j->gpu_oom_likely) ? "oom"
                          : j->far_below                                    ? "far"
                                                                            : "ok";
        fprintf(f, "<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\"><title>job %llu ",
                cls, x, y, (unsigned long long)j->job_id);
        fg_cli_html_esc(f, j->sub->model);
        fputc(' ', f);
        fg_cli_html_esc(f, j->sub->framework);
        fputc(' ', f);
        fg_cli_html_esc(f, j->sub->mode);
        fprintf(f, ": ratio %.3f</title></circle>\n", j->ratio);
    }
    fputs("</svg>\n</body>\n</html>\n", f);
    return 0;
}

/*
 * The calibration table (calib.h) from the groups by framework x mode with at least
 * min_jobs completed jobs; read back with fg_calib_load before it is kept, so a file this
 * writes is one the policy accepts.
 */
static int write_calibration(const char *path, const struct learn *l, const struct group *g,
                             size_t n)
{
    char tmp[4096], row[200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "fitgate: error: --write-calibration %s: %s\n", tmp, strerror(errno));
        return -1;
    }
    time_t now = time(NULL);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    fprintf(f, "# fitgate calibration, written by fitgate learn at %s from %zu jobs\n"
               "# (format: conf/calibration.conf; Factor: the median over completed jobs of\n"
               "# (peak per GPU - CUDA context) / estimate per GPU; Low, High: its 95%% CI)\n",
            date, l->n_jobs);
    size_t rows = 0;
    for (size_t i = 0; i < n; i++) {
        const struct stats *s = &g[i].factor;
        struct fg_calib_row r = {.jobs = (uint32_t)s->n, .factor = round(s->median * 1000) / 1000,
                                 .low = round(s->lo * 1000) / 1000,
                                 .high = round(s->hi * 1000) / 1000};
        struct fg_err err = {0};
        /* a row is per framework and mode (calib.h), from enough jobs: say which is missing */
        if (!g[i].framework[0]) {
            fprintf(stderr, "fitgate: %s: the decisions name no framework (--ft-framework): "
                            "no row\n", g[i].key);
            continue;
        }
        if (fg_mode_parse(g[i].mode, &r.mode, &err)) {
            fprintf(stderr, "fitgate: %s: %s: no row\n", g[i].key,
                    g[i].mode[0] ? err.detail
                                 : "the decisions record no mode (jobs fitgate could not assess)");
            continue;
        }
        if (s->n < l->min_jobs) {
            fprintf(stderr, "fitgate: %s: %zu completed jobs, fewer than --min-jobs %u: no "
                            "row\n", g[i].key, s->n, l->min_jobs);
            continue;
        }
        if (r.factor < FG_CALIB_FACTOR_MIN || r.factor > FG_CALIB_FACTOR_MAX) {
            fprintf(stderr, "fitgate: warning: %s: factor %.3f is outside %.2f..%.2f: no row; "
                            "look at these jobs\n", g[i].key, r.factor, FG_CALIB_FACTOR_MIN,
                    FG_CALIB_FACTOR_MAX);
            continue;
        }
        if (s->lo > 0) {
            r.low = fmax(fmin(r.low, r.factor), FG_CALIB_FACTOR_MIN);
            r.high = fmin(fmax(r.high, r.factor), FG_CALIB_FACTOR_MAX);
        } else {
            r.low = r.high = 0; /* too few jobs for an interval (n < 6) */
        }
        snprintf(r.framework, sizeof r.framework, "%s", g[i].framework);
        if (fg_calib_format_row(&r, row, sizeof row))
            continue;
        fprintf(f, "%s\n", row);
        rows++;
    }
    if (fclose(f)) {
        fprintf(stderr, "fitgate: error: --write-calibration %s: %s\n", tmp, strerror(errno));
        remove(tmp);
        return -1;
    }
    struct fg_calib check;
    struct fg_err err = {0};
    if (fg_calib_load(&check, tmp, &err) || check.n != rows) {
        fprintf(stderr, "fitgate: error: the calibration written does not read back: %s\n",
                err.detail);
        remove(tmp);
        return -1;
    }
    if (rename(tmp, path)) {
        fprintf(stderr, "fitgate: error: --write-calibration %s: %s\n", path, strerror(errno));
        remove(tmp);
        return -1;
    }
    fprintf(stderr, "fitgate: wrote %s: %zu row%s\n", path, rows, rows == 1 ? "" : "s");
    return 0;
}

/* ---- the command ------------------------------------------------------------------- */

/* --trust-owner USER (a name or a uid): an owner whose trails are believed whole, as
 * root's are (the controller's trail when SlurmUser is not root). */
static int trust_owner(struct learn *l, const char *v)
{
    const struct passwd *pw = getpwnam(v);
    uint64_t uid;
    if (pw) {
        uid = pw->pw_uid;
    } else if (!*v || v[strspn(v, "0123456789")]) {
        fprintf(stderr, "fitgate: error: --trust-owner: no user '%s'\n", v);
        return -1;
    } else if (fg_cli_parse_u64("--trust-owner", v, 0, UINT32_MAX - 1, &uid)) {
        return -1;
    }
    if (l->n_trust >= sizeof l->trust / sizeof l->trust[0]) {
        fprintf(stderr, "fitgate: error: --trust-owner: at most %d owners\n", LEARN_TRUST_MAX);
        return -1;
    }
    l->trust[l->n_trust++] = (unsigned)uid;
    return 0;
}

static void usage(FILE *f)
{
    fputs("usage: fitgate learn AUDIT_LOG... [--sacct FILE] [--logs DIR] [--json] [--html FILE]\n"
          "                     [--min-jobs N] [--far-below F] [--write-calibration FILE]\n"
          "                     [--trust-owner USER]\n"
          "AUDIT_LOG: audit trails (LogFile=) holding the submission and the node lines.\n"
          "FILE: sacct -p --format=JobIDRaw,State,ExitCode,AllocTRES,NTasks,TRESUsageInMax,UID\n"
          "  (without it, or for jobs it has no gres/gpumem for: the nodes' GpuSampler= peaks)\n"
          "DIR: the jobs' output files (slurm-JOBID.out ...), searched for GPU OOM messages.\n"
          "--min-jobs N: completed jobs a calibration row needs (default 20).\n"
          "--far-below F: flag a job whose peak per GPU is under F of the card (default 0.5).\n"
          "--trust-owner USER: believe every line of a trail USER owns (root's and your own\n"
          "  are; a user's trail vouches for that user's jobs only).\n",
          f);
}

int fg_cli_learn(int argc, char **argv)
{
    struct learn l;
    const char *sacct = NULL, *html = NULL, *calib = NULL;
    bool json = false;
    int status = 2;
    uint64_t u;
    struct group *fmf = NULL, *part = NULL, *fm = NULL;
    size_t n_fmf = 0, n_part = 0, n_fm = 0, nlogs = 0;
    const char **logs = calloc((size_t)argc, sizeof *logs);
    memset(&l, 0, sizeof l);
    l.far_below = 0.5;
    l.min_jobs = 20;
    /* trails believed whole: root's (the controller's, syslog's) and the reader's own */
    l.trust[l.n_trust++] = 0;
    l.trust[l.n_trust++] = (unsigned)geteuid();
    if (!logs) {
        fprintf(stderr, "fitgate: error: out of memory\n");
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes = !strcmp(a, "--sacct") || !strcmp(a, "--logs") || !strcmp(a, "--html") ||
                     !strcmp(a, "--min-jobs") || !strcmp(a, "--far-below") ||
                     !strcmp(a, "--write-calibration") || !strcmp(a, "--trust-owner");
        if (takes && !v) {
            fprintf(stderr, "fitgate: error: %s needs a value\n", a);
            goto out;
        }
        if (!strcmp(a, "--json")) {
            json = true;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            status = 0;
            goto out;
        } else if (takes) {
            i++;
            if (!strcmp(a, "--sacct"))
                sacct = v;
            else if (!strcmp(a, "--logs"))
                l.logs = v;
            else if (!strcmp(a, "--html"))
                html = v;
            else if (!strcmp(a, "--write-calibration"))
                calib = v;
            else if (!strcmp(a, "--trust-owner")) {
                if (trust_owner(&l, v))
                    goto out;
            }
            else if (!strcmp(a, "--min-jobs")) {
                if (fg_cli_parse_u64(a, v, 1, 1000000, &u))
                    goto out;
                l.min_jobs = (uint32_t)u;
            } else if (fg_cli_parse_f(a, v, 0.01, 1, &l.far_below)) {
                goto out;
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
    if (sacct && fg__learn_read_sacct(&l, sacct))
        goto out;
    if (fg_cli_audit_read_all(logs, nlogs, &l.lines, &l.bad, fg__learn_keep, &l))
        goto out;
    if (fg__learn_join(&l))
        goto out;
    if (fg__learn_groups(&l, BY_FW_MODE_FAMILY, &fmf, &n_fmf) ||
        fg__learn_groups(&l, BY_PARTITION, &part, &n_part) || fg__learn_groups(&l, BY_FW_MODE, &fm, &n_fm)) {
        fprintf(stderr, "fitgate: error: out of memory\n");
        goto out;
    }
    if (html) {
        struct fg_err err = {0};
        if (fg_cli_html_file(html, html_page, &l, &err)) {
            fprintf(stderr, "fitgate: error: --html %s\n", err.detail);
            goto out;
        }
    }
    if (calib && write_calibration(calib, &l, fm, n_fm))
        goto out;
    if (json) {
        if (print_json(&l, fmf, n_fmf, part, n_part)) {
            fprintf(stderr, "fitgate: error: out of memory\n");
            goto out;
        }
    } else {
        print_text(&l, fmf, n_fmf, part, n_part);
    }
    status = fflush(stdout) ? 2 : 0;
out:
    free(fmf);
    free(part);
    free(fm);
    for (size_t i = 0; i < l.n_jobs; i++)
        free(l.jobs[i].evidence);
    free(l.jobs);
    fg_cli_lrecs_free(&l.recs);
    fg_sacct_free(l.acct);
    free(logs);
    return status;
}
