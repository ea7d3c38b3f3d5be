/*
 * accuracy.c - see accuracy.h.  Included (as a .c) by tools/accuracy.c and
 * tests/test_accuracy.c so that both compute the same thing.
 */
#include "accuracy.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "model.h"

#define ACC_MAX_COLS 24
#define ACC_LINE_MAX 4096

static const char *const acc_metric_names[] = {"allocated", "active", "reserved", "nvml",
                                               "fits-limit"};

const char *acc_metric_name(enum acc_metric m)
{
    return (unsigned)m < 5 ? acc_metric_names[m] : "?";
}

static int acc_fail(char *errbuf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int acc_fail(char *errbuf, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errbuf, cap, fmt, ap);
    va_end(ap);
    return -1;
}

/* Split line in place on tabs; returns the number of fields. */
static size_t acc_split(char *line, char **f, size_t max)
{
    size_t n = 0;
    char *p = line;
    while (n < max) {
        f[n++] = p;
        char *t = strchr(p, '\t');
        if (!t)
            break;
        *t = '\0';
        p = t + 1;
    }
    return n;
}

static bool acc_u64(const char *s, uint64_t max, uint64_t *out)
{
    char *end;
    if (!s || !*s || *s == '-' || *s == '+')
        return false;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v > max)
        return false;
    *out = v;
    return true;
}

enum acc_col {
    C_ROW, C_MODEL, C_CONFIG, C_MODE, C_PRECISION, C_OPTIMIZER, C_BATCH, C_SEQ, C_GRAD_CKPT,
    C_LORA_TARGETS, C_LORA_RANK, C_QUANT, C_CHUNKED_CE, C_CARD, C_GPUS, C_ZERO,
    C_UNSHARDED_COPY, C_MEASURED, C_METRIC, C_OOM, C_WHY, C_COUNT
};

static const char *const acc_col_names[C_COUNT] = {
    "row", "model", "config", "mode", "precision", "optimizer", "batch", "seq", "grad_ckpt",
    "lora_targets", "lora_rank", "quant", "chunked_ce", "card", "gpus", "zero", "unsharded_copy",
    "measured_bytes", "metric", "oom", "why"};

/* One data line (fields already split by the header's column map) -> row. */
static int acc_parse_row(char **f, const int *col, struct acc_row *r, char *msg, size_t cap)
{
    struct fg_err err = {0};
    uint64_t v;
    memset(r, 0, sizeof *r);
#define FIELD(c) (f[col[c]])
    if (!acc_u64(FIELD(C_ROW), 100000, &v) || v == 0)
        return acc_fail(msg, cap, "row '%s' is not a data row number", FIELD(C_ROW));
    r->row = (unsigned)v;
    snprintf(r->model, sizeof r->model, "%s", FIELD(C_MODEL));
    snprintf(r->config, sizeof r->config, "%s", FIELD(C_CONFIG));
    snprintf(r->card, sizeof r->card, "%s", FIELD(C_CARD));
    enum fg_mode mode;
    if (fg_mode_parse(FIELD(C_MODE), &mode, &err))
        return acc_fail(msg, cap, "%s", err.detail);
    fg_job_defaults(&r->job, mode);
    if (fg_precision_parse(FIELD(C_PRECISION), &r->job.precision, &err))
        return acc_fail(msg, cap, "%s", err.detail);
    if (strcmp(FIELD(C_OPTIMIZER), "-") != 0 &&
        fg_optimizer_parse(FIELD(C_OPTIMIZER), &r->job.optimizer, &err))
        return acc_fail(msg, cap, "%s", err.detail);
    if (!acc_u64(FIELD(C_BATCH), 1u << 20, &r->job.batch) || r->job.batch == 0)
        return acc_fail(msg, cap, "batch '%s' is not a whole number >= 1", FIELD(C_BATCH));
    if (!acc_u64(FIELD(C_SEQ), FG_MAX_SEQ, &r->job.seq_len) || r->job.seq_len == 0)
        return acc_fail(msg, cap, "seq '%s' is not a token count", FIELD(C_SEQ));
    if (!acc_u64(FIELD(C_GRAD_CKPT), 1, &v))
        return acc_fail(msg, cap, "grad_ckpt '%s' is not 0 or 1", FIELD(C_GRAD_CKPT));
    r->job.grad_ckpt = v != 0;
    if (mode == FG_MODE_LORA || mode == FG_MODE_QLORA) {
        if (fg_lora_targets_parse(FIELD(C_LORA_TARGETS), &r->job, &err))
            return acc_fail(msg, cap, "%s", err.detail);
        if (!acc_u64(FIELD(C_LORA_RANK), 65536, &v) || v == 0)
            return acc_fail(msg, cap, "lora_rank '%s' is not 1..65536", FIELD(C_LORA_RANK));
        r->job.lora_rank = (uint32_t)v;
    }
    if (fg_quant_parse(FIELD(C_QUANT), &r->job.quant, &err))
        return acc_fail(msg, cap, "%s", err.detail);
    if (mode == FG_MODE_QLORA && r->job.quant == FG_QUANT_NONE)
        return acc_fail(msg, cap, "qlora row with quant 'none'");
    if (!acc_u64(FIELD(C_CHUNKED_CE), 1, &v))
        return acc_fail(msg, cap, "chunked_ce '%s' is not 0 or 1", FIELD(C_CHUNKED_CE));
    r->job.chunked_ce = v != 0;
    if (!acc_u64(FIELD(C_GPUS), 4096, &v) || v == 0)
        return acc_fail(msg, cap, "gpus '%s' is not 1..4096", FIELD(C_GPUS));
    r->gpus = (unsigned)v;
    if (!acc_u64(FIELD(C_ZERO), 3, &v) || (v != 0 && v != 3))
        return acc_fail(msg, cap, "zero '%s' is not 0 or 3", FIELD(C_ZERO));
    r->zero = (unsigned)v;
    if (r->gpus > 1 && r->zero == 3) {
        /* FSDP full shard: weights, gradients and optimizer states over dp = gpus. */
        r->job.zero = 3;
        r->job.dp = r->gpus;
    }
    if (!acc_u64(FIELD(C_UNSHARDED_COPY), 1, &v))
        return acc_fail(msg, cap, "unsharded_copy '%s' is not 0 or 1", FIELD(C_UNSHARDED_COPY));
    r->job.unsharded_copy = v != 0;
    if (!acc_u64(FIELD(C_OOM), 1, &v))
        return acc_fail(msg, cap, "oom '%s' is not 0 or 1", FIELD(C_OOM));
    r->oom = v != 0;
    if (!acc_u64(FIELD(C_MEASURED), UINT64_MAX, &r->measured))
        return acc_fail(msg, cap, "measured_bytes '%s' is not a byte count", FIELD(C_MEASURED));
    if (r->oom != (r->measured == 0))
        return acc_fail(msg, cap, "oom rows carry measured_bytes 0, the others a figure");
    int m = -1;
    for (int i = 0; i < 5; i++)
        if (!strcmp(FIELD(C_METRIC), acc_metric_names[i]))
            m = i;
    if (m < 0)
        return acc_fail(msg, cap, "metric '%s' is not allocated|active|reserved|nvml|fits-limit",
                        FIELD(C_METRIC));
    r->metric = (enum acc_metric)m;
    if (r->oom && strcmp(r->card, "-") == 0)
        return acc_fail(msg, cap, "an oom row needs its card");
#undef FIELD
    return 0;
}

int acc_load(const char *path, struct acc_row **rows, size_t *n, char *errbuf, size_t cap)
{
    *rows = NULL;
    *n = 0;
    FILE *fp = fopen(path, "r");
    if (!fp)
        return acc_fail(errbuf, cap, "%s: %s", path, strerror(errno));
    char line[ACC_LINE_MAX];
    char *f[ACC_MAX_COLS];
    int col[C_COUNT];
    size_t cap_rows = 0, lineno = 0;
    struct acc_row *out = NULL;
    int rc = 0;
    for (int c = 0; c < C_COUNT; c++)
        col[c] = -1;
    while (fgets(line, sizeof line, fp)) {
        lineno++;
        size_t len = strlen(line);
        if (len && line[len - 1] != '\n' && !feof(fp)) {
            rc = acc_fail(errbuf, cap, "%s:%zu: line longer than %d bytes", path, lineno,
                          ACC_LINE_MAX - 1);
            break;
        }
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (!len || line[0] == '#')
            continue;
        size_t nf = acc_split(line, f, ACC_MAX_COLS);
        if (col[C_ROW] < 0) {
            for (size_t i = 0; i < nf; i++)
                for (int c = 0; c < C_COUNT; c++)
                    if (!strcmp(f[i], acc_col_names[c]))
                        col[c] = (int)i;
            for (int c = 0; c < C_COUNT; c++)
                if (col[c] < 0) {
                    rc = acc_fail(errbuf, cap, "%s:%zu: header lacks column '%s'", path, lineno,
                                  acc_col_names[c]);
                    break;
                }
            if (rc)
                break;
            continue;
        }
        bool short_line = false;
        for (int c = 0; c < C_COUNT; c++)
            if ((size_t)col[c] >= nf)
                short_line = true;
        if (short_line) {
            rc = acc_fail(errbuf, cap, "%s:%zu: %zu fields, the header has more", path, lineno,
                          nf);
            break;
        }
        if (*n == cap_rows) {
            size_t nc = cap_rows ? 2 * cap_rows : 64;
            struct acc_row *nr = realloc(out, nc * sizeof *nr);
            if (!nr) {
                rc = acc_fail(errbuf, cap, "%s: out of memory", path);
                break;
            }
            out = nr;
            cap_rows = nc;
        }
        char msg[200];
        if (acc_parse_row(f, col, &out[*n], msg, sizeof msg)) {
            rc = acc_fail(errbuf, cap, "%s:%zu: %s", path, lineno, msg);
            break;
        }
        (*n)++;
    }
    if (!rc && ferror(fp))
        rc = acc_fail(errbuf, cap, "%s: read error", path);
    if (!rc && col[C_ROW] < 0)
        rc = acc_fail(errbuf, cap, "%s: no header line", path);
    fclose(fp);
    if (rc) {
        free(out);
        *n = 0;
        return rc;
    }
    *rows = out;
    return 0;
}

void acc_free(struct acc_row *rows)
{
    free(rows);
}

static int acc_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void acc_estimate_row(struct acc_row *r, const char *models_dir,
                             const struct fg_fit_opts *fo)
{
    char path[512];
    struct fg_err err = {0};
    struct fg_model *m = NULL;
    snprintf(path, sizeof path, "%s/%s", models_dir, r->config);
    if (fg_model_load(path, &m, &err)) {
        snprintf(r->error, sizeof r->error, "%.190s", err.detail);
        return;
    }
    if (fg_memory_estimate(m, &r->job, &r->est, &err)) {
        snprintf(r->error, sizeof r->error, "%.190s", err.detail);
        fg_model_free(m);
        return;
    }
    fg_model_free(m);
    r->ok = true;
    r->compared = r->est.total_bytes;
    if (r->metric == ACC_NVML || r->metric == ACC_FITS_LIMIT)
        r->compared += fo->context_bytes;
    if (!r->oom)
        r->err_pct = ((double)r->compared - (double)r->measured) / (double)r->measured * 100.0;
    if (strcmp(r->card, "-") != 0) {
        const struct fg_gpu *g = fg_gpu_find(NULL, r->card, NULL);
        if (!g) {
            snprintf(r->error, sizeof r->error, "card '%s' is not in the GPU table", r->card);
            r->ok = false;
            return;
        }
        uint64_t usable = fg_fit_usable(g->memory_gb, g->memory_bytes, fo);
        fg_fit_card(&r->est, usable, fo, &r->fit);
        r->has_fit = true;
    }
}

void acc_run(struct acc_row *rows, size_t n, const char *models_dir, struct acc_summary *s)
{
    struct fg_fit_opts fo;
    fg_fit_opts_default(&fo);
    memset(s, 0, sizeof *s);
    s->rows = n;
    double *abs_err = n ? calloc(n, sizeof *abs_err) : NULL;
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        struct acc_row *r = &rows[i];
        acc_estimate_row(r, models_dir, &fo);
        if (!r->ok) {
            s->failed++;
            continue;
        }
        if (r->oom) {
            s->ooms++;
            if (r->has_fit && r->fit.verdict == FG_FIT_FITS)
                s->oom_fits++;
            if (r->has_fit && r->fit.verdict == FG_FIT_BORDERLINE)
                s->oom_borderline++;
            continue;
        }
        if (r->metric == ACC_FITS_LIMIT) {
            s->limits++;
            continue;
        }
        if (r->has_fit && r->fit.verdict == FG_FIT_SPLIT)
            s->ran_split++;
        double a = fabs(r->err_pct);
        if (abs_err)
            abs_err[s->peaks] = a;
        s->peaks++;
        sum += r->err_pct;
        if (a <= 10.0)
            s->within10++;
        if (a <= 25.0)
            s->within25++;
    }
    if (s->peaks && abs_err) {
        qsort(abs_err, s->peaks, sizeof *abs_err, acc_cmp_double);
        size_t h = s->peaks / 2;
        s->median_abs_pct = s->peaks % 2 ? abs_err[h] : (abs_err[h - 1] + abs_err[h]) / 2.0;
        s->mean_signed_pct = sum / (double)s->peaks;
    }
    free(abs_err);
}

static double acc_gb(uint64_t b)
{
    return (double)b / 1e9;
}

void acc_print(FILE *fp, const struct acc_row *rows, size_t n, const struct acc_summary *s)
{
    fprintf(fp, "%4s  %-36s %-5s %-10s %9s %9s %8s  %s\n", "row", "model", "mode", "metric",
            "measured", "estimate", "error", "card verdict");
    for (size_t i = 0; i < n; i++) {
        const struct acc_row *r = &rows[i];
        char meas[16], est[16], e[16], v[64] = "";
        if (r->oom)
            snprintf(meas, sizeof meas, "OOM");
        else
            snprintf(meas, sizeof meas, "%.2f GB", acc_gb(r->measured));
        if (!r->ok) {
            fprintf(fp, "%4u  %-36.36s %-5s %-10s %9s %9s %8s  FAILED: %s\n", r->row, r->model,
                    fg_mode_name(r->job.mode), acc_metric_name(r->metric), meas, "-", "-",
                    r->error);
            continue;
        }
        snprintf(est, sizeof est, "%.2f GB", acc_gb(r->compared));
        if (r->oom)
            snprintf(e, sizeof e, "-");
        else
            snprintf(e, sizeof e, "%+.1f%%", r->err_pct);
        if (r->has_fit)
            snprintf(v, sizeof v, "%s %s%s", r->card, fg_verdict_name(r->fit.verdict),
                     r->oom && r->fit.verdict == FG_FIT_FITS ? "  <-- WRONG (ran out of memory)"
                                                             : "");
        fprintf(fp, "%4u  %-36.36s %-5s %-10s %9s %9s %8s  %s\n", r->row, r->model,
                fg_mode_name(r->job.mode), acc_metric_name(r->metric), meas, est, e, v);
    }
    fprintf(fp, "\nrows %zu (failed %zu); measured peaks scored %zu\n", s->rows, s->failed,
            s->peaks);
    fprintf(fp, "median |error| %.1f%%; mean signed error %+.1f%%; within 10%%: %zu/%zu (%.0f%%); "
                "within 25%%: %zu/%zu (%.0f%%)\n",
            s->median_abs_pct, s->mean_signed_pct, s->within10, s->peaks,
            s->peaks ? 100.0 * (double)s->within10 / (double)s->peaks : 0.0, s->within25,
            s->peaks, s->peaks ? 100.0 * (double)s->within25 / (double)s->peaks : 0.0);
    fprintf(fp, "OOM rows %zu: said 'fits' on %zu, 'borderline' on %zu\n", s->ooms, s->oom_fits,
            s->oom_borderline);
    fprintf(fp, "measured rows on a known card that we said need more cards: %zu\n",
            s->ran_split);
    fprintf(fp, "largest-sequence-that-fits rows (shown, not scored): %zu\n", s->limits);
}

int acc_write_tsv(const char *path, const struct acc_row *rows, size_t n)
{
    FILE *fp = fopen(path, "w");
    if (!fp)
        return -1;
    fprintf(fp, "row\tmodel\tconfig\tmode\tmetric\tmeasured_bytes\testimate_bytes\terror_pct\t"
                "total_bytes\tstatic_bytes\tper_sample_bytes\tweights\tgradients\toptimizer\t"
                "adapters\tactivations\tlogits\tkv_cache\toverhead\tcard\tverdict\tstatus\n");
    for (size_t i = 0; i < n; i++) {
        const struct acc_row *r = &rows[i];
        const struct fg_breakdown *b = &r->est.b;
        char e[32] = "";
        if (r->ok && !r->oom)
            snprintf(e, sizeof e, "%.2f", r->err_pct);
        fprintf(fp, "%u\t%s\t%s\t%s\t%s\t%llu\t%llu\t%s\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t"
                    "%llu\t%llu\t%llu\t%llu\t%s\t%s\t%s\n",
                r->row, r->model, r->config, fg_mode_name(r->job.mode), acc_metric_name(r->metric),
                (unsigned long long)r->measured, (unsigned long long)r->compared, e,
                (unsigned long long)r->est.total_bytes, (unsigned long long)r->est.static_bytes,
                (unsigned long long)r->est.per_sample_bytes, (unsigned long long)b->weights,
                (unsigned long long)b->gradients, (unsigned long long)b->optimizer,
                (unsigned long long)b->adapters, (unsigned long long)b->activations,
                (unsigned long long)b->logits, (unsigned long long)b->kv_cache,
                (unsigned long long)b->overhead, r->card,
                r->has_fit ? fg_verdict_name(r->fit.verdict) : "-",
                r->ok ? (r->oom ? "oom" : "ok") : r->error);
    }
    int rc = ferror(fp) ? -1 : 0;
    if (fclose(fp))
        rc = -1;
    return rc;
}
