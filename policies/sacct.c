/*
 * sacct.c - `sacct -p` output -> per job: state, exit code, GPUs, GPU memory used.
 * The format and what the numbers mean: sacct.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sacct.h"

/* The columns read, by the names sacct prints in its header (src/sacct/sacct.c fields[]). */
enum col { C_JOBID, C_JOBIDRAW, C_STATE, C_EXIT, C_ALLOC, C_UIMAX, C_NTASKS, C_N };
static const char *const col_names[C_N] = {"JobID", "JobIDRaw", "State", "ExitCode",
                                           "AllocTRES", "TRESUsageInMax", "NTasks"};

#define MAX_FIELDS 64

int fg_sacct_size(const char *s, uint64_t *out)
{
    /* convert_num_unit2: "%"PRIu64"%c" or "%.2f%c", unit one of "\0KMGTP" */
    static const char units[] = "KMGTP";
    char *end;
    if (!s || !*s || *s == '-' || *s == '+')
        return FG_E_PARSE;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s)
        return FG_E_PARSE;
    double mul = 1;
    if (*end) {
        const char *u = strchr(units, *end);
        if (!u || end[1])
            return FG_E_PARSE;
        for (const char *p = units; p <= u; p++)
            mul *= 1024;
    }
    double b = v * mul;
    if (b < 0 || b >= 18446744073709551615.0)
        return FG_E_RANGE;
    *out = (uint64_t)(b + 0.5);
    return 0;
}

bool fg_sacct_tres(const char *list, const char *name, char *buf, size_t cap)
{
    size_t nl = strlen(name);
    for (const char *p = list; p && *p;) {
        size_t n = strcspn(p, ",");
        if (n > nl && !strncmp(p, name, nl) && p[nl] == '=') {
            snprintf(buf, cap, "%.*s", (int)(n - nl - 1), p + nl + 1);
            return true;
        }
        p += n + (p[n] == ',');
    }
    return false;
}

/* "123", "123.batch", "123.0" -> 123 and whether a step; false for anything else. */
static bool job_id_of(const char *s, uint64_t *id, bool *step)
{
    char *end;
    if (*s < '0' || *s > '9')
        return false;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || !v || (*end && *end != '.') || (*end == '.' && !end[1]))
        return false;
    *id = v;
    *step = *end == '.';
    return true;
}

static bool u32_of(const char *s, uint32_t *out)
{
    char *end;
    if (*s < '0' || *s > '9')
        return false;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v > 0xffffffffUL)
        return false;
    *out = (uint32_t)v;
    return true;
}

static struct fg_sacct_job *job_get(struct fg_sacct *s, size_t *cap, uint64_t id)
{
    for (size_t i = s->n; i-- > 0;) /* steps follow their job: search from the end */
        if (s->jobs[i].job_id == id)
            return &s->jobs[i];
    if (s->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        struct fg_sacct_job *j = realloc(s->jobs, nc * sizeof *j);
        if (!j)
            return NULL;
        s->jobs = j;
        *cap = nc;
    }
    struct fg_sacct_job *j = &s->jobs[s->n++];
    memset(j, 0, sizeof *j);
    j->job_id = id;
    return j;
}

/* One data row (fields f[0..nf)) into s. */
static int row(struct fg_sacct *s, size_t *cap, char **f, const int *at, unsigned lineno,
               struct fg_err *err)
{
    const char *idtext = at[C_JOBIDRAW] >= 0 ? f[at[C_JOBIDRAW]] : f[at[C_JOBID]];
    uint64_t id;
    bool step;
    char buf[64];
    if (!job_id_of(idtext, &id, &step))
        return fg_err_set(err, FG_E_PARSE, "line %u: job id '%.40s' is not a number%s", lineno,
                          idtext, at[C_JOBIDRAW] < 0 ? " (add JobIDRaw to --format for array "
                                                       "and heterogeneous jobs)" : "");
    struct fg_sacct_job *j = job_get(s, cap, id);
    if (!j)
        return fg_err_set(err, FG_E_NOMEM, "out of memory");
    const char *alloc = at[C_ALLOC] >= 0 ? f[at[C_ALLOC]] : "";
    uint32_t gpus = 0;
    if (fg_sacct_tres(alloc, "gres/gpu", buf, sizeof buf) && !u32_of(buf, &gpus))
        return fg_err_set(err, FG_E_PARSE, "line %u: AllocTRES gres/gpu=%s is not a count",
                          lineno, buf);
    if (!step) {
        const char *st = f[at[C_STATE]];
        snprintf(j->state, sizeof j->state, "%.*s", (int)strcspn(st, " "), st);
        j->gpus = gpus;
        if (at[C_EXIT] >= 0 && f[at[C_EXIT]][0]) {
            char *end;
            long c = strtol(f[at[C_EXIT]], &end, 10), sig = 0;
            if (*end == ':')
                sig = strtol(end + 1, &end, 10);
            if (*end || c < 0 || c > 255 || sig < 0 || sig > 255)
                return fg_err_set(err, FG_E_PARSE, "line %u: ExitCode '%.20s' is not N:S",
                                  lineno, f[at[C_EXIT]]);
            j->exit_code = (int)c;
            j->exit_signal = (int)sig;
        }
        return 0;
    }
    if (at[C_UIMAX] < 0 || !fg_sacct_tres(f[at[C_UIMAX]], "gres/gpumem", buf, sizeof buf))
        return 0;
    uint64_t mem;
    if (fg_sacct_size(buf, &mem))
        return fg_err_set(err, FG_E_PARSE, "line %u: TRESUsageInMax gres/gpumem=%s is not a "
                          "size", lineno, buf);
    uint32_t tasks = 1, util = 0;
    if (at[C_NTASKS] >= 0 && f[at[C_NTASKS]][0] && (!u32_of(f[at[C_NTASKS]], &tasks) || !tasks))
        return fg_err_set(err, FG_E_PARSE, "line %u: NTasks '%.20s' is not a count", lineno,
                          f[at[C_NTASKS]]);
    if (!gpus)
        gpus = j->gpus; /* a step row without its own AllocTRES: the job's */
    /* gres/gpumem of the largest task covers that task's GPUs: the step's spread evenly */
    uint32_t per_task = gpus / tasks ? gpus / tasks : 1;
    uint64_t per_gpu = mem / per_task;
    j->has_gpumem = true;
    if (mem > j->gpumem_task_max)
        j->gpumem_task_max = mem;
    if (per_gpu > j->gpumem_per_gpu) {
        j->gpumem_per_gpu = per_gpu;
        j->gpus_per_task = per_task;
    }
    if (fg_sacct_tres(f[at[C_UIMAX]], "gres/gpuutil", buf, sizeof buf) && u32_of(buf, &util) &&
        util > j->gpuutil_max)
        j->gpuutil_max = util;
    return 0;
}

/* Split line (modified in place) at '|'; sacct -p ends every field with one. */
static size_t split(char *line, char **f)
{
    size_t n = 0;
    char *p = line;
    while (n < MAX_FIELDS) {
        char *bar = strchr(p, '|');
        f[n++] = p;
        if (!bar)
            break;
        *bar = '\0';
        p = bar + 1;
        if (!*p)
            break; /* the trailing '|' */
    }
    return n;
}

static int by_id(const void *a, const void *b)
{
    uint64_t x = ((const struct fg_sacct_job *)a)->job_id, y = ((const struct fg_sacct_job *)b)->job_id;
    return x < y ? -1 : x > y;
}

int fg_sacct_parse(const char *text, size_t len, struct fg_sacct **out, struct fg_err *err)
{
    int rc = 0;
    struct fg_sacct *s = calloc(1, sizeof *s);
    char *copy = malloc(len + 1);
    size_t cap = 0, ncols = 0;
    int at[C_N];
    char *f[MAX_FIELDS];
    *out = NULL;
    if (!s || !copy) {
        rc = fg_err_set(err, FG_E_NOMEM, "out of memory");
        goto out;
    }
    memcpy(copy, text, len);
    copy[len] = '\0';
    unsigned lineno = 0;
    for (char *line = copy, *next; line && *line; line = next) {
        lineno++;
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        size_t l = strlen(line);
        if (l && line[l - 1] == '\r')
            line[--l] = '\0';
        if (!l)
            continue;
        size_t nf = split(line, f);
        if (!ncols) {
            for (int c = 0; c < C_N; c++) {
                at[c] = -1;
                for (size_t i = 0; i < nf; i++)
                    if (!strcmp(f[i], col_names[c]))
                        at[c] = (int)i;
            }
            if ((at[C_JOBID] < 0 && at[C_JOBIDRAW] < 0) || at[C_STATE] < 0) {
                rc = fg_err_set(err, FG_E_PARSE, "line %u: not a sacct -p header naming "
                                "JobID (or JobIDRaw) and State (sacct -p without -n, "
                                "--format=JobIDRaw,State,ExitCode,AllocTRES,TRESUsageInMax,"
                                "NTasks)", lineno);
                goto out;
            }
            ncols = nf;
            continue;
        }
        if (nf != ncols) {
            rc = fg_err_set(err, FG_E_PARSE, "line %u: %zu fields where the header has %zu",
                            lineno, nf, ncols);
            goto out;
        }
        if ((rc = row(s, &cap, f, at, lineno, err)))
            goto out;
    }
    if (!ncols) {
        rc = fg_err_set(err, FG_E_PARSE, "no sacct -p header line");
        goto out;
    }
    qsort(s->jobs, s->n, sizeof *s->jobs, by_id); /* for fg_sacct_find */
    *out = s;
    s = NULL;
out:
    free(copy);
    fg_sacct_free(s);
    return rc;
}

void fg_sacct_free(struct fg_sacct *s)
{
    if (!s)
        return;
    free(s->jobs);
    free(s);
}

const struct fg_sacct_job *fg_sacct_find(const struct fg_sacct *s, uint64_t job_id)
{
    struct fg_sacct_job key = {.job_id = job_id};
    return s && s->n ? bsearch(&key, s->jobs, s->n, sizeof *s->jobs, by_id) : NULL;
}
