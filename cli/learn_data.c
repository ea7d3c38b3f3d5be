/*
 * learn_data.c - `fitgate learn`'s records (learn_data.h): the audit lines
 * kept, the sacct table read, the two joined into one row per job (its
 * estimate, its measured peak per GPU, its OOM evidence in the job's output),
 * and the rows grouped with their statistics.  cmd_learn.c prints them.
 */
#include "learn_data.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit.h"
#include "auditlog.h"
#include "calib.h"
#include "cli.h"
#include "util/fileio.h"
#include "fit.h"
#include "html.h"
#include "jobopts.h"
#include "model.h"
#include "sacct.h"

#define LOG_TAIL (16u << 20) /* bytes of a job's output searched for an OOM message */

/*
 * What frameworks print when a GPU allocation fails, searched in a job's output (--logs).
 * Host memory is another matter: Slurm's OUT_OF_MEMORY state is the job's cgroup running
 * out (memory.events oom_kill, src/plugins/cgroup/v2/cgroup_v2.c), never the GPU's.
 */
static const struct {
    const char *text;
    const char *source;
} oom_patterns[] = {
    {"CUDA out of memory", "PyTorch c10/cuda/CUDACachingAllocator.cpp "
                           "DeviceCachingAllocator::malloc (OutOfMemoryError)"},
    {"torch.OutOfMemoryError", "PyTorch: the exception's class name (2.5 and later)"},
    {"torch.cuda.OutOfMemoryError", "PyTorch: the exception's class name (before 2.5)"},
    {"CUBLAS_STATUS_ALLOC_FAILED", "cuBLAS cublasStatus_t, raised by PyTorch's "
                                   "TORCH_CUDABLAS_CHECK (aten/src/ATen/cuda/CUDABlas.cpp)"},
    {"CUDA error: out of memory", "cudaErrorMemoryAllocation through C10_CUDA_CHECK "
                                  "(c10/cuda/CUDAException.h)"},
};

/* ---- reading ------------------------------------------------------------------ */

int fg__learn_keep(const struct fg_audit_rec *rec, void *ctx)
{
    struct learn *l = ctx;
    if (l->n_recs == l->cap_recs) {
        size_t nc = l->cap_recs ? l->cap_recs * 2 : 256;
        struct fg_audit_rec *r = realloc(l->recs, nc * sizeof *r);
        if (!r) {
            fprintf(stderr, "fitgate: error: out of memory\n");
            return -1;
        }
        l->recs = r;
        l->cap_recs = nc;
    }
    l->recs[l->n_recs++] = *rec;
    return 0;
}

int fg__learn_read_sacct(struct learn *l, const char *path)
{
    char *text = NULL;
    size_t len = 0;
    struct fg_err err = {0};
    if (fg__read_file(path, 1u << 30, &text, &len)) {
        fprintf(stderr, "fitgate: error: --sacct %s: %s\n", path, strerror(errno));
        return -1;
    }
    int rc = fg_sacct_parse(text, len, &l->acct, &err);
    free(text);
    if (rc)
        fprintf(stderr, "fitgate: error: --sacct %s: %s\n", path, err.detail);
    return rc ? -1 : 0;
}

/* A GPU OOM message in the job's output under --logs: slurm-ID.out (sbatch's default),
 * slurm-ID.err, ID.out, ID.err; the last LOG_TAIL bytes of each. */
static void find_oom(const char *dir, struct job *j)
{
    static const char *const names[] = {"slurm-%llu.out", "slurm-%llu.err", "%llu.out",
                                        "%llu.err"};
    char name[64], path[4096];
    char *buf = malloc(LOG_TAIL + 1);
    if (!buf)
        return;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !j->gpu_oom; i++) {
        snprintf(name, sizeof name, names[i], (unsigned long long)j->job_id);
        snprintf(path, sizeof path, "%s/%s", dir, name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (fseeko(f, 0, SEEK_END) == 0) {
            off_t size = ftello(f);
            fseeko(f, size > (off_t)LOG_TAIL ? size - (off_t)LOG_TAIL : 0, SEEK_SET);
        }
        size_t n = fread(buf, 1, LOG_TAIL, f);
        fclose(f);
        buf[n] = '\0';
        for (size_t k = 0; k < sizeof oom_patterns / sizeof oom_patterns[0]; k++)
            if (memmem(buf, n, oom_patterns[k].text, strlen(oom_patterns[k].text))) {
                j->gpu_oom = true;
                snprintf(j->evidence, sizeof j->evidence, "%s: \"%s\" (%s)", name,
                         oom_patterns[k].text, oom_patterns[k].source);
                break;
            }
    }
    free(buf);
}

/* ---- the join -------------------------------------------------------------------- */

static int by_submit_id(const void *a, const void *b)
{
    const struct fg_audit_rec *const *x = a, *const *y = b;
    return strcmp((*x)->submit_id, (*y)->submit_id);
}

/* Family per distinct model of the lines that do not record it, looked up once each. */
struct fam_cache {
    char model[256];
    char family[64];
};


/*
 * The model's family, its architecture: the model_type its decision recorded; for a line
 * written before fitgate recorded it, the config's model_type where this machine's caches
 * or directories hold the model (never the hub); else FAMILY_UNKNOWN, a group of its own.
 * Never the model's name: "Qwen/Qwen3-8B" and a config's "qwen3" are one architecture.
 * fam holds *n_fam models so far and has room for one more.
 */
static const char *family_of(const struct fg_audit_rec *s, struct fam_cache *fam, size_t *n_fam)
{
    if (s->model_type[0])
        return s->model_type;
    size_t f = 0;
    while (f < *n_fam && strcmp(fam[f].model, s->model))
        f++;
    if (f == *n_fam) {
        struct fg_model *m = NULL;
        struct fg_err err = {0};
        snprintf(fam[f].model, sizeof fam[f].model, "%s", s->model);
        snprintf(fam[f].family, sizeof fam[f].family, "%s", FAMILY_UNKNOWN);
        if (s->model[0] && !fg_cli_load_model(s->model, true, &m, &err) && m->model_type[0])
            snprintf(fam[f].family, sizeof fam[f].family, "%s", m->model_type);
        fg_model_free(m);
        (*n_fam)++;
    }
    return fam[f].family;
}

static void measure(const struct learn *l, struct job *j)
{
    const struct fg_audit_rec *s = j->sub;
    const struct fg_sacct_job *a = j->acct;
    const double ctx = (double)FG_CUDA_PROCESS_BYTES;
    j->est = s->per_gpu_bytes ? s->per_gpu_bytes : s->estimate_bytes;
    j->card = s->usable_bytes ? s->usable_bytes + FG_CUDA_CONTEXT_BYTES : 0;
    j->actual = a->gpumem_per_gpu;
    j->gpus = a->gpus ? a->gpus : s->gpus_after;
    j->ratio = j->est ? (double)j->actual / ((double)j->est + ctx) : 0;
    /* against the model's own estimate: a decision that carried the site calibration had
     * its bytes scaled by it (learning from scaled ones would drift towards x1) */
    double raw = s->calibration_milli ? (double)j->est * 1000.0 / s->calibration_milli
                                      : (double)j->est;
    j->factor = raw > 0 ? ((double)j->actual - ctx) / raw : 0;
    j->admitted = s->verdict == FG_AUDIT_ALLOW || s->verdict == FG_AUDIT_WARN ||
                  s->verdict == FG_AUDIT_RESIZE || s->verdict == FG_AUDIT_OVERRIDE;
    j->host_oom = !strcmp(a->state, "OUT_OF_MEMORY");
    if (l->logs)
        find_oom(l->logs, j);
    /* no log, but failed at the card's limit: what gres/gpumem can say */
    j->gpu_oom_likely = !j->gpu_oom && !strcmp(a->state, "FAILED") && j->card &&
                        (double)j->actual >= 0.95 * (double)j->card;
    if (j->card && j->gpus) {
        double used = (double)j->actual / (double)j->card;
        j->far_below = used < l->far_below && !j->gpu_oom && !j->gpu_oom_likely;
        /* the peak over all GPUs at 1/1.15 of a card each (the default headroom) */
        double need = ceil((double)j->actual * j->gpus / ((double)j->card / 1.15));
        if (need < 1)
            need = 1;
        j->freeable = j->far_below && need < j->gpus ? j->gpus - (uint32_t)need : 0;
    }
}

/* Lines that name a job, by job id and then position (qsort is not stable). */
static const struct fg_audit_rec *g_recs;
static int by_job_id(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    uint64_t u = g_recs[x].job_id, v = g_recs[y].job_id;
    return u < v ? -1 : u > v ? 1 : x < y ? -1 : x > y;
}

int fg__learn_join(struct learn *l)
{
    int rc = -1;
    size_t n_subs = 0, n_fam = 0;
    size_t n_ids = 0;
    const struct fg_audit_rec **subs = calloc(l->n_recs + 1, sizeof *subs);
    struct fam_cache *fam = calloc(l->n_recs + 1, sizeof *fam);
    size_t *ids = calloc(l->n_recs + 1, sizeof *ids);
    l->jobs = calloc(l->n_recs + 1, sizeof *l->jobs);
    if (!subs || !fam || !ids || !l->jobs)
        goto out;
    for (size_t i = 0; i < l->n_recs; i++) {
        if (l->recs[i].where != FG_AUDIT_AT_STEPD && l->recs[i].where != FG_AUDIT_AT_CLI)
            subs[n_subs++] = &l->recs[i];
        if (l->recs[i].job_id)
            ids[n_ids++] = i;
        l->stepd += l->recs[i].where == FG_AUDIT_AT_STEPD && l->recs[i].job_id;
    }
    qsort(subs, n_subs, sizeof *subs, by_submit_id);
    g_recs = l->recs;
    qsort(ids, n_ids, sizeof *ids, by_job_id);
    for (size_t i = 0, next; i < n_ids; i = next) {
        /* the job's first line joins (a batch job's srun step 0 writes a second start line;
         * GpuSampler= an end line with the peak) */
        const struct fg_audit_rec *r = &l->recs[ids[i]];
        uint64_t sampled = 0;
        for (next = i; next < n_ids && l->recs[ids[next]].job_id == r->job_id; next++) {
            const struct fg_audit_rec *o = &l->recs[ids[next]];
            if (o->where == FG_AUDIT_AT_STEPD && !strcmp(o->user, r->user) &&
                o->gpu_peak_bytes > sampled)
                sampled = o->gpu_peak_bytes;
        }
        /* a job_submit decision knows its job id; one at sbatch joins through the node's */
        bool direct = r->where != FG_AUDIT_AT_STEPD;
        const struct fg_audit_rec *key = r, **hit =
            direct ? &key : bsearch(&key, subs, n_subs, sizeof *subs, by_submit_id);
        if (!hit) {
            l->unmatched++;
            continue;
        }
        if (strcmp((*hit)->user, r->user)) {
            l->other_user++; /* a submit id carried by another user's job: forged */
            continue;
        }
        const struct fg_sacct_job *a = l->acct ? fg_sacct_find(l->acct, r->job_id) : NULL;
        if (a && a->has_gpumem)
            sampled = 0; /* Slurm's own figure first */
        if (!a && !sampled) {
            l->not_in_sacct++;
            continue;
        }
        if (!sampled && !a->has_gpumem) {
            l->no_gpumem++;
            continue;
        }
        struct job *j = &l->jobs[l->n_jobs++];
        j->job_id = r->job_id;
        j->sub = *hit;
        j->acct = a;
        j->source = "sacct";
        if (sampled) {
            /* Slurm did not account it: the node's NVML sample, already per GPU */
            if (a)
                j->own = *a;
            else
                snprintf(j->own.state, sizeof j->own.state, "UNKNOWN");
            j->own.job_id = r->job_id;
            j->own.has_gpumem = true;
            j->own.gpumem_per_gpu = j->own.gpumem_task_max = sampled;
            j->own.gpus_per_task = 1;
            j->acct = &j->own;
            j->source = "nvml";
        }
        snprintf(j->family, sizeof j->family, "%s", family_of(j->sub, fam, &n_fam));
        l->family_unknown += !strcmp(j->family, FAMILY_UNKNOWN);
        measure(l, j);
    }
    rc = 0;
out:
    if (rc)
        fprintf(stderr, "fitgate: error: out of memory\n");
    free(subs);
    free(fam);
    free(ids);
    return rc;
}

/* ---- groups --------------------------------------------------------------------- */


static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank quantile of sorted v[0..n). */
static double quantile(const double *v, size_t n, double q)
{
    size_t k = (size_t)ceil(q * (double)n);
    return v[k ? k - 1 : 0];
}

/*
 * Median, spread and the distribution-free 95% interval of the median: the order statistics
 * x(k) and x(n-k+1), k = floor((n - 1.96 sqrt(n)) / 2), the normal approximation of the
 * binomial (Conover, Practical Nonparametric Statistics, 3rd ed., section 3.2).
 */
static void stats_of(double *v, size_t n, struct stats *s)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    if (!n)
        return;
    qsort(v, n, sizeof *v, cmp_double);
    s->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    s->p10 = quantile(v, n, 0.10);
    s->p90 = quantile(v, n, 0.90);
    s->min = v[0];
    s->max = v[n - 1];
    double k = floor(((double)n - 1.96 * sqrt((double)n)) / 2);
    if (k >= 1) {
        s->lo = v[(size_t)k - 1];
        s->hi = v[n - (size_t)k];
    }
}


static void group_key(const struct job *j, enum group_by by, char *buf, size_t cap)
{
    const struct fg_audit_rec *s = j->sub;
    const char *fw = s->framework[0] ? s->framework : "-", *mode = s->mode[0] ? s->mode : "-";
    if (by == BY_PARTITION)
        snprintf(buf, cap, "%s", s->partition[0] ? s->partition : "(default)");
    else if (by == BY_FW_MODE)
        snprintf(buf, cap, "%s %s", fw, mode);
    else
        snprintf(buf, cap, "%s %s %s", fw, mode, j->family);
}


int fg__learn_groups(const struct learn *l, enum group_by by, struct group **out, size_t *n_out)
{
    int rc = -1;
    struct group *g = calloc(l->n_jobs + 1, sizeof *g);
    double *r = malloc((l->n_jobs + 1) * sizeof *r), *f = malloc((l->n_jobs + 1) * sizeof *f);
    size_t n = 0;
    if (!g || !r || !f)
        goto out;
    for (size_t i = 0; i < l->n_jobs; i++) {
        char key[160];
        group_key(&l->jobs[i], by, key, sizeof key);
        size_t k = 0;
        while (k < n && strcmp(g[k].key, key))
            k++;
        if (k < n)
            continue;
        snprintf(g[n].key, sizeof g[n].key, "%s", key);
        snprintf(g[n].framework, sizeof g[n].framework, "%s", l->jobs[i].sub->framework);
        snprintf(g[n].mode, sizeof g[n].mode, "%s", l->jobs[i].sub->mode);
        size_t nr = 0, nf = 0;
        uint32_t freeable = 0, oom = 0;
        for (size_t m = i; m < l->n_jobs; m++) {
            const struct job *j = &l->jobs[m];
            char other[160];
            group_key(j, by, other, sizeof other);
            if (strcmp(other, key) || !j->est)
                continue;
            r[nr++] = j->ratio;
            /* the calibration learns from jobs that ran to their end: COMPLETED, or, with
             * no sacct record (the node's sample), not seen to fail */
            bool ended = !strcmp(j->acct->state, "COMPLETED") ||
                         (!strcmp(j->acct->state, "UNKNOWN") && !j->gpu_oom);
            if (ended && !j->gpu_oom)
                f[nf++] = j->factor;
            freeable += j->freeable;
            oom += j->admitted && (j->gpu_oom || j->gpu_oom_likely);
        }
        stats_of(r, nr, &g[n].ratio);
        stats_of(f, nf, &g[n].factor);
        g[n].ratio.freeable = freeable;
        g[n].ratio.oom = oom;
        n++;
    }
    *out = g;
    *n_out = n;
    g = NULL;
    rc = 0;
out:
    free(g);
    free(r);
    free(f);
    return rc;
}
