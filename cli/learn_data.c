/*
 * learn_data.c - `fitgate learn`'s records (learn_data.h): the audit lines kept, the
 * sacct table read, the two joined into one row per job and grouped with their
 * statistics.  cmd_learn.c prints them.
 */
#include "learn_data.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
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
#include "memory/calib.h"
#include "cli.h"
#include "util/fileio.h"
#include "plan/fit.h"
#include "html.h"
#include "jobopts.h"
#include "model/model.h"

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

static bool trusted_owner(const struct learn *l, unsigned owner)
{
    for (size_t i = 0; i < l->n_trust; i++)
        if (l->trust[i] == owner)
            return true;
    return false;
}

/* fg_cli_audit_each: every audit line believed kept, for the join (learn_data.h). */
int fg__learn_keep(const struct fg_audit_rec *rec, const struct fg_cli_trail *at, void *ctx)
{
    struct learn *l = ctx;
    if (at->others_write) {
        l->untrusted++;
        if (l->warned_trail != at->name)
            fprintf(stderr, "fitgate: warning: %s: its group or others may write it: none of "
                            "its lines is believed (chmod go-w)\n", at->name);
        l->warned_trail = at->name;
        return 0;
    }
    if (rec->uid != at->owner && !trusted_owner(l, at->owner)) {
        if (++l->untrusted <= FG_CLI_AUDIT_WARNINGS)
            fprintf(stderr, "fitgate: warning: %s:%llu: skipped: a line of uid %u in a trail "
                            "owned by uid %u (a user's trail vouches for that user's jobs "
                            "only; --trust-owner for the controller's)\n",
                    at->name, (unsigned long long)at->line, (unsigned)rec->uid, at->owner);
        return 0;
    }
    if (fg_cli_lrecs_add(&l->recs, rec)) {
        fprintf(stderr, "fitgate: error: out of memory\n");
        return -1;
    }
    return 0;
}

/* --sacct FILE ("-": standard input), read as a stream (sacct.h fg_sacct_read). */
int fg__learn_read_sacct(struct learn *l, const char *path)
{
    struct fg_err err = {0};
    bool std_in = !strcmp(path, "-");
    struct stat st;
    FILE *in = std_in ? stdin : fg_cli_open_stream(path, &st);
    if (!in) {
        fprintf(stderr, "fitgate: error: --sacct %s: %s\n", path,
                errno == EINVAL ? "not a regular file or a pipe" : strerror(errno));
        return -1;
    }
    int rc = fg_sacct_read(in, &l->acct, &err);
    if (!std_in)
        fclose(in);
    if (rc)
        fprintf(stderr, "fitgate: error: --sacct %s: %s\n", path, err.detail);
    return rc ? -1 : 0;
}

/* The job output file name (relative to dirfd) opened for its tail: a regular file only,
 * never through a symbolic link, never blocking on a FIFO (fileio.h fg__openat_regular),
 * written by the job's user (or root, or a trusted owner): a file another user planted
 * under the job's name cannot mark the job as died of GPU memory, which takes it out of
 * the calibration.  -1 when absent or refused (counted). */
static int open_log(struct learn *l, int dirfd, const char *name, const struct job *j,
                    struct stat *st)
{
    int fd = fg__openat_regular(dirfd, name, O_NOFOLLOW, st);
    if (fd < 0) {
        if (errno != ENOENT)
            l->logs_refused++;
        return -1;
    }
    if (st->st_uid != j->sub->uid && !trusted_owner(l, (unsigned)st->st_uid)) {
        close(fd);
        l->logs_refused++;
        return -1;
    }
    return fd;
}

/* A GPU OOM message in the job's output under --logs: slurm-ID.out (sbatch's default),
 * slurm-ID.err, ID.out, ID.err; the last LOG_TAIL bytes of each. */
static void find_oom(struct learn *l, int dirfd, struct job *j)
{
    static const char *const names[] = {"slurm-%llu.out", "slurm-%llu.err", "%llu.out",
                                        "%llu.err"};
    char name[64];
    char *buf = malloc(LOG_TAIL + 1);
    if (!buf)
        return;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !j->gpu_oom; i++) {
        struct stat st;
        snprintf(name, sizeof name, names[i], (unsigned long long)j->job_id);
        int fd = open_log(l, dirfd, name, j, &st);
        if (fd < 0)
            continue;
        off_t from = st.st_size > (off_t)LOG_TAIL ? st.st_size - (off_t)LOG_TAIL : 0;
        size_t n = 0;
        while (n < LOG_TAIL) {
            ssize_t k = pread(fd, buf + n, LOG_TAIL - n, from + (off_t)n);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0)
                break;
            n += (size_t)k;
        }
        close(fd);
        buf[n] = '\0';
        for (size_t k = 0; k < sizeof oom_patterns / sizeof oom_patterns[0]; k++)
            if (memmem(buf, n, oom_patterns[k].text, strlen(oom_patterns[k].text))) {
                j->gpu_oom = true;
                char ev[256];
                snprintf(ev, sizeof ev, "%s: \"%s\" (%s)", name, oom_patterns[k].text,
                         oom_patterns[k].source);
                free(j->evidence);
                j->evidence = strdup(ev);
                break;
            }
    }
    free(buf);
}

/* ---- the join -------------------------------------------------------------------- */

static int by_submit_id(const void *a, const void *b)
{
    const struct fg_cli_lrec *const *x = a, *const *y = b;
    return strcmp((*x)->submit_id, (*y)->submit_id);
}

/* Family per distinct model of the lines that do not record it, looked up once each (the
 * model strings are interned: one pointer per model). */
struct fam_cache {
    const char *model;
    const char *family;
};


/*
 * The model's family, its architecture: the model_type its decision recorded; for a line
 * written before fitgate recorded it, the config's model_type where this machine's caches
 * or directories hold the model (never the hub); else FAMILY_UNKNOWN, a group of its own.
 * Never the model's name: "Qwen/Qwen3-8B" and a config's "qwen3" are one architecture.
 * *fam holds *n_fam models (grown here); NULL when memory runs out.
 */
static const char *family_of(struct learn *l, const struct fg_cli_lrec *s,
                             struct fam_cache **fam, size_t *n_fam)
{
    if (s->model_type[0])
        return s->model_type;
    size_t f = 0;
    while (f < *n_fam && (*fam)[f].model != s->model)
        f++;
    if (f < *n_fam)
        return (*fam)[f].family;
    struct fam_cache *c = realloc(*fam, (f + 1) * sizeof *c);
    if (!c)
        return NULL;
    *fam = c;
    c[f].model = s->model;
    c[f].family = FAMILY_UNKNOWN;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    if (s->model[0] && !fg_cli_load_model(s->model, true, &m, &err) && m->model_type[0])
        c[f].family = fg_cli_lrecs_intern(&l->recs, m->model_type);
    fg_model_free(m);
    (*n_fam)++;
    return c[f].family;
}

static void measure(struct learn *l, int logs_fd, struct job *j)
{
    const struct fg_cli_lrec *s = j->sub;
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
    if (logs_fd >= 0)
        find_oom(l, logs_fd, j);
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
static const struct fg_cli_lrec *g_recs;
static int by_job_id(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    uint64_t u = g_recs[x].job_id, v = g_recs[y].job_id;
    return u < v ? -1 : u > v ? 1 : x < y ? -1 : x > y;
}

int fg__learn_join(struct learn *l)
{
    int rc = -1;
    size_t n_subs = 0, n_fam = 0, n_ids = 0, n_distinct = 0;
    const struct fg_cli_lrec *recs = l->recs.v;
    const struct fg_cli_lrec **subs = calloc(l->recs.n + 1, sizeof *subs);
    struct fam_cache *fam = NULL;
    size_t *ids = calloc(l->recs.n + 1, sizeof *ids);
    int logs_fd = -1;
    if (!subs || !ids)
        goto out;
    if (l->logs && (logs_fd = open(l->logs, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        fprintf(stderr, "fitgate: error: --logs %s: %s\n", l->logs, strerror(errno));
        free(subs);
        free(ids);
        return -1;
    }
    for (size_t i = 0; i < l->recs.n; i++) {
        if (recs[i].where != FG_AUDIT_AT_STEPD && recs[i].where != FG_AUDIT_AT_CLI)
            subs[n_subs++] = &recs[i];
        if (recs[i].job_id)
            ids[n_ids++] = i;
        l->stepd += recs[i].where == FG_AUDIT_AT_STEPD && recs[i].job_id;
    }
    /* sort joins, O(n log n): submissions by submit id, lines by job id */
    qsort(subs, n_subs, sizeof *subs, by_submit_id);
    g_recs = recs;
    qsort(ids, n_ids, sizeof *ids, by_job_id);
    for (size_t i = 0; i < n_ids; i++)
        n_distinct += !i || recs[ids[i]].job_id != recs[ids[i - 1]].job_id;
    if (!(l->jobs = calloc(n_distinct + 1, sizeof *l->jobs)))
        goto out;
    for (size_t i = 0, next; i < n_ids; i = next) {
        /* the job's first line joins (a batch job's srun step 0 writes a second start line;
         * GpuSampler= an end line with the peak) */
        const struct fg_cli_lrec *r = &recs[ids[i]];
        uint64_t sampled = 0;
        for (next = i; next < n_ids && recs[ids[next]].job_id == r->job_id; next++) {
            const struct fg_cli_lrec *o = &recs[ids[next]];
            if (o->where == FG_AUDIT_AT_STEPD && o->user == r->user && o->uid == r->uid &&
                o->gpu_peak_bytes > sampled)
                sampled = o->gpu_peak_bytes;
        }
        /* a job_submit decision knows its job id; one at sbatch joins through the node's */
        bool direct = r->where != FG_AUDIT_AT_STEPD;
        const struct fg_cli_lrec *key = r, **hit =
            direct ? &key : bsearch(&key, subs, n_subs, sizeof *subs, by_submit_id);
        if (!hit) {
            l->unmatched++;
            continue;
        }
        if ((*hit)->user != r->user || (*hit)->uid != r->uid) {
            l->other_user++; /* a submit id carried by another user's job: forged */
            continue;
        }
        const struct fg_sacct_job *a = l->acct ? fg_sacct_find(l->acct, r->job_id) : NULL;
        if (a && a->has_uid && a->uid != r->uid) {
            l->other_user++; /* Slurm says the job is another user's: the lines are forged */
            continue;
        }
        if (a && a->has_gpumem)
            sampled = 0; /* Slurm's own figure first */
        /* with --sacct, a job Slurm does not know is none (a node's sample alone could be
         * any job id a user writes into their own trail) */
        if (!a && (!sampled || l->acct)) {
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
        if (!(j->family = family_of(l, j->sub, &fam, &n_fam)))
            goto out;
        l->family_unknown += !strcmp(j->family, FAMILY_UNKNOWN);
        measure(l, logs_fd, j);
    }
    rc = 0;
out:
    if (rc)
        fprintf(stderr, "fitgate: error: out of memory\n");
    if (logs_fd >= 0)
        close(logs_fd);
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
    const struct fg_cli_lrec *s = j->sub;
    const char *fw = s->framework[0] ? s->framework : "-", *mode = s->mode[0] ? s->mode : "-";
    if (by == BY_PARTITION)
        snprintf(buf, cap, "%s", s->partition[0] ? s->partition : "(default)");
    else if (by == BY_FW_MODE)
        snprintf(buf, cap, "%s %s", fw, mode);
    else
        snprintf(buf, cap, "%s %s %s", fw, mode, j->family);
}


/*
 * Groups of l's jobs by `by`, in the order their first job comes; caller frees *out.
 * O(jobs x groups) pointer compares and O(jobs) otherwise: each job's key is interned
 * once (one pointer per distinct key), then its ratios and factors are bucketed per group.
 */
int fg__learn_groups(struct learn *l, enum group_by by, struct group **out, size_t *n_out)
{
    int rc = -1;
    size_t n = 0, cap = 0, nj = l->n_jobs;
    struct group *g = NULL;
    const char **keys = NULL;
    size_t *of = malloc((nj + 1) * sizeof *of), *at = NULL;
    double *r = malloc((nj + 1) * sizeof *r), *f = malloc((nj + 1) * sizeof *f);
    if (!of || !r || !f)
        goto out;
    for (size_t i = 0; i < nj; i++) {
        char key[160];
        group_key(&l->jobs[i], by, key, sizeof key);
        const char *k = fg_cli_lrecs_intern(&l->recs, key);
        if (!k)
            goto out;
        size_t x = i ? of[i - 1] : 0; /* jobs of one group often follow each other */
        if (x >= n || keys[x] != k)
            for (x = 0; x < n && keys[x] != k; x++)
                ;
        if (x == n) {
            if (n == cap) {
                size_t nc = cap ? cap * 2 : 16;
                struct group *ng = realloc(g, nc * sizeof *ng);
                if (ng)
                    g = ng;
                const char **nk = ng ? realloc(keys, nc * sizeof *nk) : NULL;
                if (!nk)
                    goto out;
                keys = nk;
                cap = nc;
            }
            memset(&g[n], 0, sizeof g[n]);
            keys[n] = k;
            snprintf(g[n].key, sizeof g[n].key, "%s", key);
            snprintf(g[n].framework, sizeof g[n].framework, "%s", l->jobs[i].sub->framework);
            snprintf(g[n].mode, sizeof g[n].mode, "%s", l->jobs[i].sub->mode);
            n++;
        }
        of[i] = x;
    }
    /* group x's ratios are r[at[x] ..], its factors f[at[x] ..] (buckets of one pass) */
    at = calloc(3 * (n + 1), sizeof *at);
    if (!at)
        goto out;
    size_t *nr = at + n + 1, *nf = at + 2 * (n + 1);
    for (size_t i = 0; i < nj; i++)
        at[of[i] + 1] += l->jobs[i].est != 0;
    for (size_t x = 0; x < n; x++)
        at[x + 1] += at[x];
    for (size_t i = 0; i < nj; i++) {
        const struct job *j = &l->jobs[i];
        size_t x = of[i];
        if (!j->est)
            continue;
        r[at[x] + nr[x]++] = j->ratio;
        /* the calibration learns from jobs that ran to their end: COMPLETED, or, with
         * no sacct record (the node's sample), not seen to fail */
        bool ended = !strcmp(j->acct->state, "COMPLETED") ||
                     (!strcmp(j->acct->state, "UNKNOWN") && !j->gpu_oom);
        if (ended && !j->gpu_oom)
            f[at[x] + nf[x]++] = j->factor;
        g[x].ratio.freeable += j->freeable;
        g[x].ratio.oom += j->admitted && (j->gpu_oom || j->gpu_oom_likely);
    }
    for (size_t x = 0; x < n; x++) {
        uint32_t freeable = g[x].ratio.freeable, oom = g[x].ratio.oom;
        stats_of(r + at[x], nr[x], &g[x].ratio);
        stats_of(f + at[x], nf[x], &g[x].factor);
        g[x].ratio.freeable = freeable;
        g[x].ratio.oom = oom;
    }
    *out = g;
    *n_out = n;
    g = NULL;
    rc = 0;
out:
    free(g);
    free(keys);
    free(of);
    free(at);
    free(r);
    free(f);
    return rc;
}

