/*
 * sacct.c - `sacct -p` output -> per job: state, exit code, GPUs, GPU memory used.
 * The format and what the numbers mean: sacct.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sacct.h"
#include "util/fmt.h"

/* The columns read, by the names sacct prints in its header (src/sacct/sacct.c fields[]). */
enum col { C_JOBID, C_JOBIDRAW, C_STATE, C_EXIT, C_ALLOC, C_UIMAX, C_NTASKS, C_UID, C_N };
static const char *const col_names[C_N] = {"JobID", "JobIDRaw", "State", "ExitCode",
                                           "AllocTRES", "TRESUsageInMax", "NTasks", "UID"};

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

/*
 * The parse in progress: the jobs so far and an open-addressing index of their ids (a
 * power-of-two table of job index + 1, 0 empty, at most half full), so that a row finds its
 * job in O(1) whatever the order of the rows: n rows cost O(n), not O(n^2).
 */
struct parse {
    struct fg_sacct *s;
    size_t cap;
    uint32_t *slot;
    size_t n_slots;
    size_t ncols;
    int at[C_N];
    unsigned lineno;
};

static size_t slot_of(uint64_t id, size_t n_slots)
{
    id ^= id >> 33; /* splitmix64's finaliser: consecutive ids spread over the table */
    id *= 0xff51afd7ed558ccdULL;
    id ^= id >> 33;
    return (size_t)id & (n_slots - 1);
}

static int grow_index(struct parse *p)
{
    size_t n = p->n_slots ? p->n_slots * 2 : 1024;
    uint32_t *t = calloc(n, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < p->s->n; i++) {
        size_t k = slot_of(p->s->jobs[i].job_id, n);
        while (t[k])
            k = (k + 1) & (n - 1);
        t[k] = (uint32_t)(i + 1);
    }
    free(p->slot);
    p->slot = t;
    p->n_slots = n;
    return 0;
}

static struct fg_sacct_job *job_get(struct parse *p, uint64_t id)
{
    struct fg_sacct *s = p->s;
    size_t k = p->n_slots ? slot_of(id, p->n_slots) : 0;
    for (; p->n_slots && p->slot[k]; k = (k + 1) & (p->n_slots - 1))
        if (s->jobs[p->slot[k] - 1].job_id == id)
            return &s->jobs[p->slot[k] - 1];
    if (s->n >= UINT32_MAX - 1)
        return NULL;
    if (2 * (s->n + 1) > p->n_slots) {
        if (grow_index(p))
            return NULL;
        for (k = slot_of(id, p->n_slots); p->slot[k];)
            k = (k + 1) & (p->n_slots - 1);
    }
    if (s->n == p->cap) {
        size_t nc = p->cap ? p->cap * 2 : 64;
        struct fg_sacct_job *j = realloc(s->jobs, nc * sizeof *j);
        if (!j)
            return NULL;
        s->jobs = j;
        p->cap = nc;
    }
    struct fg_sacct_job *j = &s->jobs[s->n++];
    memset(j, 0, sizeof *j);
    j->job_id = id;
    p->slot[k] = (uint32_t)s->n;
    return j;
}

/* One data row (fields f[0..nf)) into s. */
static int row(struct parse *p, char **f, struct fg_err *err)
{
    const int *at = p->at;
    unsigned lineno = p->lineno;
    const char *idtext = at[C_JOBIDRAW] >= 0 ? f[at[C_JOBIDRAW]] : f[at[C_JOBID]];
    uint64_t id;
    bool step;
    char buf[64];
    if (!job_id_of(idtext, &id, &step))
        return fg_err_set(err, FG_E_PARSE, "line %u: job id '%.40s' is not a number%s", lineno,
                          idtext, at[C_JOBIDRAW] < 0 ? " (add JobIDRaw to --format for array "
                                                       "and heterogeneous jobs)" : "");
    struct fg_sacct_job *j = job_get(p, id);
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
        fg__esc_inplace(j->state, sizeof j->state, 0); /* learn prints it */
        j->gpus = gpus;
        if (at[C_UID] >= 0 && f[at[C_UID]][0]) {
            if (!u32_of(f[at[C_UID]], &j->uid))
                return fg_err_set(err, FG_E_PARSE, "line %u: UID '%.20s' is not a number",
                                  lineno, f[at[C_UID]]);
            j->has_uid = true;
        }
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

/* One line (modified in place, without its newline) into p. */
static int line_in(struct parse *p, char *line, struct fg_err *err)
{
    char *f[MAX_FIELDS];
    size_t l = strlen(line);
    p->lineno++;
    if (l && line[l - 1] == '\r')
        line[--l] = '\0';
    if (!l)
        return 0;
    size_t nf = split(line, f);
    if (!p->ncols) {
        for (int c = 0; c < C_N; c++) {
            p->at[c] = -1;
            for (size_t i = 0; i < nf; i++)
                if (!strcmp(f[i], col_names[c]))
                    p->at[c] = (int)i;
        }
        if ((p->at[C_JOBID] < 0 && p->at[C_JOBIDRAW] < 0) || p->at[C_STATE] < 0)
            return fg_err_set(err, FG_E_PARSE, "line %u: not a sacct -p header naming "
                              "JobID (or JobIDRaw) and State (sacct -p without -n, "
                              "--format=JobIDRaw,State,ExitCode,AllocTRES,TRESUsageInMax,"
                              "NTasks,UID)", p->lineno);
        p->ncols = nf;
        return 0;
    }
    if (nf != p->ncols)
        return fg_err_set(err, FG_E_PARSE, "line %u: %zu fields where the header has %zu",
                          p->lineno, nf, p->ncols);
    return row(p, f, err);
}

/* getline(3) with a cap: the next line, its newline kept, into *buf (grown to at most
 * FG_SACCT_LINE_MAX + 2 bytes); its length, FG_SACCT_LINE_MAX + 1 when it is longer (the
 * rest not read), -1 at the end (or on a read error: ferror).  errno ENOMEM: no memory. */
static ssize_t read_line(FILE *in, char **buf, size_t *cap)
{
    size_t n = 0;
    int c;
    while ((c = getc_unlocked(in)) != EOF) {
        if (n + 2 > *cap) {
            size_t nc = *cap ? *cap * 2 : 256;
            if (nc > FG_SACCT_LINE_MAX + 2)
                nc = FG_SACCT_LINE_MAX + 2;
            char *nb = realloc(*buf, nc);
            if (!nb) {
                errno = ENOMEM;
                return -1;
            }
            *buf = nb;
            *cap = nc;
        }
        (*buf)[n++] = (char)c;
        if (c == '\n')
            break;
        if (n > FG_SACCT_LINE_MAX)
            break;
    }
    if (!n)
        return -1;
    (*buf)[n] = '\0';
    return (ssize_t)n;
}

int fg_sacct_read(FILE *in, struct fg_sacct **out, struct fg_err *err)
{
    int rc = 0;
    struct parse p = {.s = calloc(1, sizeof *p.s)};
    char *line = NULL;
    size_t cap = 0;
    *out = NULL;
    if (!p.s) {
        rc = fg_err_set(err, FG_E_NOMEM, "out of memory");
        goto out;
    }
    errno = 0;
    for (ssize_t n; (n = read_line(in, &line, &cap)) >= 0;) {
        if (n > FG_SACCT_LINE_MAX) {
            rc = fg_err_set(err, FG_E_RANGE, "line %u: longer than %u KiB: not sacct -p output",
                            p.lineno + 1, FG_SACCT_LINE_MAX >> 10);
            goto out;
        }
        if (n && line[n - 1] == '\n')
            line[n - 1] = '\0';
        if (memchr(line, '\0', (size_t)n - (n && !line[n - 1]))) {
            rc = fg_err_set(err, FG_E_PARSE, "line %u: a NUL byte", p.lineno + 1);
            goto out;
        }
        if ((rc = line_in(&p, line, err)))
            goto out;
    }
    if (ferror(in)) {
        rc = fg_err_set(err, errno == ENOMEM ? FG_E_NOMEM : FG_E_IO, "%s",
                        strerror(errno ? errno : EIO));
        goto out;
    }
    if (!p.ncols) {
        rc = fg_err_set(err, FG_E_PARSE, "no sacct -p header line");
        goto out;
    }
    /* by id for fg_sacct_find; the index is dropped */
    qsort(p.s->jobs, p.s->n, sizeof *p.s->jobs, by_id);
    *out = p.s;
    p.s = NULL;
out:
    free(line);
    free(p.slot);
    fg_sacct_free(p.s);
    return rc;
}

int fg_sacct_parse(const char *text, size_t len, struct fg_sacct **out, struct fg_err *err)
{
    *out = NULL;
    if (!len)
        return fg_err_set(err, FG_E_PARSE, "no sacct -p header line");
    FILE *in = fmemopen((void *)text, len, "r");
    if (!in)
        return fg_err_set(err, FG_E_NOMEM, "out of memory");
    int rc = fg_sacct_read(in, out, err);
    fclose(in);
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
