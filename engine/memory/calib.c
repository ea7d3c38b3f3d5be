/*
 * calib.c - the site calibration table (calib.h): parse, look up, apply.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "memory/calib.h"
#include "util/fileio.h"
#include "stack/framework.h"

/* The keys, one row each: a new key is a new row here and a case in set(). */
enum ckey { CK_FRAMEWORK, CK_MODE, CK_FACTOR, CK_JOBS, CK_LOW, CK_HIGH, CK_N };
static const struct {
    const char *name;
    bool required;
    const char *expect;
} ckeys[CK_N] = {
    {"Framework", true, "a framework name (fitgate plan --help lists them)"},
    {"Mode", true, "full, lora, qlora or serve"},
    {"Factor", true, "a number from 0.25 to 4"},
    {"Jobs", true, "a whole number of jobs, at least 1"},
    {"Low", false, "a number from 0.25 to 4, at most Factor"},
    {"High", false, "a number from 0.25 to 4, at least Factor"},
};

static bool factor_of(const char *v, double *out)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (errno || end == v || *end || !(d >= FG_CALIB_FACTOR_MIN && d <= FG_CALIB_FACTOR_MAX))
        return false;
    *out = d;
    return true;
}

static int set(struct fg_calib_row *r, enum ckey k, const char *v, struct fg_err *err)
{
    char *end;
    switch (k) {
    case CK_FRAMEWORK:
        if (strlen(v) >= sizeof r->framework)
            return FG_E_RANGE;
        if (!fg_framework_find(v)) /* a row no job would ever find */
            return FG_E_PARSE;
        snprintf(r->framework, sizeof r->framework, "%s", v);
        return 0;
    case CK_MODE:
        return fg_mode_parse(v, &r->mode, err) ? FG_E_PARSE : 0;
    case CK_FACTOR:
        return factor_of(v, &r->factor) ? 0 : FG_E_RANGE;
    case CK_LOW:
        return factor_of(v, &r->low) ? 0 : FG_E_RANGE;
    case CK_HIGH:
        return factor_of(v, &r->high) ? 0 : FG_E_RANGE;
    case CK_JOBS: {
        if (*v < '0' || *v > '9')
            return FG_E_PARSE;
        errno = 0;
        unsigned long n = strtoul(v, &end, 10);
        if (errno || *end || n < 1 || n > 100000000UL)
            return FG_E_RANGE;
        r->jobs = (uint32_t)n;
        return 0;
    }
    case CK_N:
        break;
    }
    return FG_E_INVAL;
}

/* One line (NUL-terminated, modified) -> a row; 1 when it was blank or a comment. */
static int parse_line(char *s, const char *origin, unsigned line, struct fg_calib_row *r,
                      struct fg_err *err)
{
    char *hash = strchr(s, '#');
    if (hash)
        *hash = '\0';
    unsigned given = 0;
    memset(r, 0, sizeof *r);
    r->line = line;
    for (char *save = NULL, *tok = strtok_r(s, " \t\r", &save); tok;
         tok = strtok_r(NULL, " \t\r", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok || !eq[1])
            return fg_err_set(err, FG_E_PARSE, "%s:%u: '%.60s' is not Key=Value; write rows as "
                              "Framework=hf Mode=lora Factor=1.07 Jobs=143", origin, line, tok);
        *eq = '\0';
        int k = 0;
        while (k < CK_N && strcasecmp(tok, ckeys[k].name))
            k++;
        if (k == CK_N)
            return fg_err_set(err, FG_E_PARSE, "%s:%u: unknown key '%.40s'; known keys: "
                              "Framework Mode Factor Jobs Low High", origin, line, tok);
        if (given & (1u << k))
            return fg_err_set(err, FG_E_PARSE, "%s:%u: %s is given twice in one row", origin,
                              line, ckeys[k].name);
        given |= 1u << k;
        struct fg_err sub = {0};
        int rc = set(r, (enum ckey)k, eq + 1, &sub);
        if (rc)
            return fg_err_set(err, rc, "%s:%u: %s=%.60s is not valid; expected %s", origin,
                              line, ckeys[k].name, eq + 1, ckeys[k].expect);
    }
    if (!given)
        return 1;
    for (int k = 0; k < CK_N; k++)
        if (ckeys[k].required && !(given & (1u << k)))
            return fg_err_set(err, FG_E_MISSING, "%s:%u: %s is missing; expected %s", origin,
                              line, ckeys[k].name, ckeys[k].expect);
    bool lo = given & (1u << CK_LOW), hi = given & (1u << CK_HIGH);
    if (lo != hi)
        return fg_err_set(err, FG_E_MISSING, "%s:%u: give Low and High together (the "
                          "confidence interval), or neither", origin, line);
    if (lo && !(r->low <= r->factor && r->factor <= r->high))
        return fg_err_set(err, FG_E_RANGE, "%s:%u: Factor=%g is not within Low=%g .. High=%g",
                          origin, line, r->factor, r->low, r->high);
    return 0;
}

int fg_calib_parse(struct fg_calib *c, const char *text, size_t len, const char *origin,
                   struct fg_err *err)
{
    memset(c, 0, sizeof *c);
    snprintf(c->path, sizeof c->path, "%s", origin);
    char buf[1024];
    unsigned line = 0;
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
        line++;
        if (n >= sizeof buf)
            return fg_err_set(err, FG_E_RANGE, "%s:%u: the line is longer than %zu bytes",
                              origin, line, sizeof buf - 1);
        if (memchr(text + at, '\0', n))
            return fg_err_set(err, FG_E_PARSE, "%s:%u: a NUL byte in the line", origin, line);
        memcpy(buf, text + at, n);
        buf[n] = '\0';
        at += n + 1;
        struct fg_calib_row r;
        int rc = parse_line(buf, origin, line, &r, err);
        if (rc < 0)
            return rc;
        if (rc)
            continue;
        const struct fg_calib_row *dup = fg_calib_find(c, r.framework, r.mode);
        if (dup)
            return fg_err_set(err, FG_E_PARSE, "%s:%u: a second row for %s %s (line %u has it)",
                              origin, line, r.framework, fg_mode_name(r.mode), dup->line);
        if (c->n == FG_CALIB_MAX_ROWS)
            return fg_err_set(err, FG_E_RANGE, "%s:%u: more than %d rows", origin, line,
                              FG_CALIB_MAX_ROWS);
        c->rows[c->n++] = r;
    }
    return 0;
}

static int load(struct fg_calib *c, const char *path, bool site, struct fg_err *err)
{
    char *text = NULL;
    size_t len = 0;
    struct stat st;
    memset(c, 0, sizeof *c);
    if (fg__read_file_st(path, 1u << 20, &text, &len, &st)) {
        int e = errno;
        return fg_err_set(err, e == ENOENT || e == ENOTDIR ? FG_E_NOTFOUND : FG_E_IO,
                          "calibration file %s: %s", path,
                          e == EFBIG ? "larger than 1 MiB" : e == EINVAL ? "not a regular file"
                                                                         : strerror(e));
    }
    int rc = site ? fg__site_file_check(&st, path, err) : 0;
    if (!rc)
        rc = fg_calib_parse(c, text, len, path, err);
    free(text);
    return rc;
}

int fg_calib_load(struct fg_calib *c, const char *path, struct fg_err *err)
{
    return load(c, path, false, err);
}

int fg_calib_load_site(struct fg_calib *c, const char *path, struct fg_err *err)
{
    return load(c, path, true, err);
}

const struct fg_calib_row *fg_calib_find(const struct fg_calib *c, const char *framework,
                                         enum fg_mode mode)
{
    /* a row names its framework by name or alias (Framework=lightning is lit-gpt's), and
     * holds for every release of it (Framework=hf: transformers 5 and 4.57 alike) */
    const struct fg_framework *want = fg_framework_find(framework), *have;
    for (size_t i = 0; c && framework && i < c->n; i++)
        if (c->rows[i].mode == mode &&
            (want ? (have = fg_framework_find(c->rows[i].framework)) &&
                        !strcmp(have->name, want->name)
                  : !strcasecmp(c->rows[i].framework, framework)))
            return &c->rows[i];
    return NULL;
}

static uint64_t scale(uint64_t b, double f)
{
    double v = (double)b * f;
    return v >= 18446744073709549568.0 ? UINT64_MAX : (uint64_t)llround(v);
}

void fg_calib_apply(const struct fg_calib_row *r, struct fg_estimate *e)
{
    /* what the job holds whatever its framework's allocator does */
    const struct fg_breakdown *b = &e->b;
    uint64_t floor_b = b->weights + b->gradients + b->optimizer + b->adapters;
    uint64_t before = e->total_bytes;
    e->static_bytes = scale(e->static_bytes, r->factor);
    if (e->static_bytes < floor_b)
        e->static_bytes = floor_b;
    e->per_sample_bytes = scale(e->per_sample_bytes, r->factor);
    e->accum_bytes = scale(e->accum_bytes, r->factor);
    if (e->step_bytes) {
        e->step_bytes = scale(e->step_bytes, r->factor);
        if (e->step_bytes < floor_b)
            e->step_bytes = floor_b;
    }
    e->total_bytes = fg_estimate_at(e, e->batch);
    if (e->total_bytes < floor_b)
        e->total_bytes = floor_b;
    if (e->n_lines >= FG_ESTIMATE_MAX_LINES)
        return;
    struct fg_line *l = &e->lines[e->n_lines++];
    memset(l, 0, sizeof *l);
    snprintf(l->key, sizeof l->key, "calibration");
    uint64_t after = e->total_bytes;
    l->bytes = after >= before ? after - before : before - after;
    char d[80];
    fg_calib_describe(r, d, sizeof d);
    snprintf(l->what, sizeof l->what, "%s%s", d,
             after < before ? " (less)" : "");
    snprintf(l->source, sizeof l->source, "Calibration= (fitgate learn), line %u", r->line);
}

int fg_calib_format_row(const struct fg_calib_row *r, char *buf, size_t cap)
{
    int n;
    if (r->low > 0 || r->high > 0)
        n = snprintf(buf, cap, "Framework=%s Mode=%s Factor=%.3f Jobs=%u Low=%.3f High=%.3f",
                     r->framework, fg_mode_name(r->mode), r->factor, r->jobs, r->low, r->high);
    else
        n = snprintf(buf, cap, "Framework=%s Mode=%s Factor=%.3f Jobs=%u", r->framework,
                     fg_mode_name(r->mode), r->factor, r->jobs);
    return n < 0 || (size_t)n >= cap ? FG_E_RANGE : 0;
}

void fg_calib_describe(const struct fg_calib_row *r, char *buf, size_t cap)
{
    if (r->low > 0 || r->high > 0)
        snprintf(buf, cap, "site calibration: x%.2f from %u jobs, 95%% CI %.2f-%.2f", r->factor,
                 r->jobs, r->low, r->high);
    else
        snprintf(buf, cap, "site calibration: x%.2f from %u jobs", r->factor, r->jobs);
}
