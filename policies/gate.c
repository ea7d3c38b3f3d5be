/*
 * gate.c - the one assess path (gate.h) and Slurm's GPU request spellings.
 */
#include "gate.h"

#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "model_load.h"
#include "source/source.h"
#include "util/fileio.h"

void fg_gate_run(const struct fg_model *m, const struct fg_jobspec *spec,
                 const struct fg_request *q, const struct fg_rules *r, enum fg_on_error on_error,
                 struct fg_gate *out)
{
    struct fg_err err = {0};
    memset(out, 0, sizeof *out);
    out->rc = fg_assess(m, spec, q->gpu, fg_request_total(q), r, &out->a, &err);
    if (!out->rc) {
        out->assessed = true;
        /* a count the generic reader is unsure of decides nothing (OnUnknown) */
        if (r->action == FG_ACTION_OFF || !fg_decide_unknown(q, m, r, &out->d))
            fg_decide(q, &out->a, r, &out->d);
        return;
    }
    snprintf(out->detail, sizeof out->detail, "%.255s", err.detail);
    if (out->rc == FG_E_INVAL) {
        /* the job's own options contradict each other: the user's to fix */
        memset(&out->d, 0, sizeof out->d);
        out->d.kind = FG_DECIDE_REJECT;
        snprintf(out->d.lines[0], FG_DECIDE_LINE, "fitgate: rejected: %.370s", err.detail);
        return;
    }
    fg_decide_error(q->model, err.detail, NULL, on_error, &out->d);
}

bool fg_gpu_count_parse(const char *s, size_t n, uint32_t *out)
{
    uint64_t v = 0;
    if (!n)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
        if (v > 65535)
            return false;
    }
    *out = (uint32_t)v;
    return v > 0;
}

/*
 * The GPU entry of a gres list ("gres:gpu:h100:2,gres:mps:100"; "gpu",
 * "gpu:4", "gpu:t4") or of a --gpus value ("h100:2", "2").  Returns true
 * when one was found; type "" when untyped, count 1 when the entry has none.
 */
bool fg_gpu_spec_parse(const char *spec, bool gres, char *type, size_t cap, uint32_t *count)
{
    const char *s = spec;
    while (*s) {
        size_t n = strcspn(s, ",");
        const char *e = s;
        size_t len = n;
        if (gres) {
            if (len > 5 && (!strncmp(e, "gres:", 5) || !strncmp(e, "gres/", 5)))
                e += 5, len -= 5;
            if (len >= 3 && !strncmp(e, "gpu", 3) && (len == 3 || e[3] == ':')) {
                e += 3;
                len -= 3;
                if (len)
                    e++, len--;
            } else {
                s += n;
                if (*s == ',')
                    s++;
                continue;
            }
        }
        /* e[0..len): "", "4", "t4", "t4:4" (a "(S:0-1)" socket suffix is ignored) */
        const char *paren = memchr(e, '(', len);
        if (paren)
            len = (size_t)(paren - e);
        const char *colon = memchr(e, ':', len);
        type[0] = '\0';
        *count = 1;
        if (colon) {
            size_t tl = (size_t)(colon - e);
            snprintf(type, cap, "%.*s", (int)(tl < cap ? tl : cap - 1), e);
            if (!fg_gpu_count_parse(colon + 1, len - tl - 1, count))
                *count = 1;
        } else if (!fg_gpu_count_parse(e, len, count)) {
            snprintf(type, cap, "%.*s", (int)(len < cap ? len : cap - 1), e);
            *count = 1;
        }
        return true;
    }
    return false;
}


bool fg_request_from_option(struct fg_request *q, const char *opt, const char *value,
                            uint32_t nodes, const struct fg_gpu_table *table)
{
    char type[32];
    uint32_t count;
    bool gres = !strcmp(opt, "gres");
    if (!value || !fg_gpu_spec_parse(value, gres, type, sizeof type, &count))
        return false;
    q->via = gres ? FG_VIA_GRES : !strcmp(opt, "gpus") ? FG_VIA_GPUS : FG_VIA_GPUS_PER_NODE;
    snprintf(q->type, sizeof q->type, "%s", type);
    q->count = count;
    q->nodes = nodes ? nodes : 1;
    q->gpu = type[0] && table ? fg_gpu_find(table, type, NULL) : NULL;
    return true;
}

int fg_gate_load_model(const struct fg_policy *p, const char *arg, const char *base_dir,
                       const char *user, unsigned uid, bool offline, struct fg_model **out,
                       struct fg_err *err)
{
    char full[PATH_MAX];
    *out = NULL;
    if (arg[0] != '/' && base_dir && *base_dir) {
        if ((size_t)snprintf(full, sizeof full, "%s/%s", base_dir, arg) >= sizeof full)
            return fg_err_set(err, FG_E_RANGE, "--ft-model path too long");
    } else {
        snprintf(full, sizeof full, "%s", arg);
    }
    struct stat st;
    if (fg_source_arg_is_path(arg) || stat(full, &st) == 0)
        return fg_model_load_path(full, out, err);

    struct fg_model_id id;
    int rc = fg_source_parse_id(arg, &id, err);
    if (rc) {
        fg_err_prefix(err, "--ft-model=%.200s is no file or directory here, and not an "
                           "org/name id", arg);
        return rc;
    }
    struct fg_source_opts o;
    fg_source_opts_init(&o);
    if (p->model_dirs[0] && (rc = fg_source_add_site_dirs(&o, p->model_dirs, err)))
        return rc;
    if (p->hub_endpoint[0] && !offline)
        snprintf(o.endpoint, sizeof o.endpoint, "%s", p->hub_endpoint);
    else
        o.offline = true;
    o.timeout_ms = p->hub_timeout_ms;
    if (p->cache_dir[0] &&
        (rc = fg__path_expand("CacheDir", p->cache_dir, user, uid, o.cache_dir,
                                sizeof o.cache_dir, err)))
        return rc;
    struct fg_source_result *res = NULL;
    rc = fg_model_load_id(&o, &id, arg, p->checkpoint_scan, out, &res, err);
    fg_source_result_free(res);
    return rc;
}

void fg_gate_model_label(const char *arg, char *buf, size_t cap)
{
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", arg);
    size_t id_part = strcspn(tmp, "@"), slashes = 0;
    for (size_t i = 0; i < id_part; i++)
        slashes += tmp[i] == '/';
    bool path = fg_source_arg_is_path(tmp) || slashes != 1;
    if (path) {
        size_t n = strlen(tmp);
        while (n > 1 && tmp[n - 1] == '/')
            tmp[--n] = '\0';
        char *last = strrchr(tmp, '/');
        if (last && !strcmp(last, "/config.json")) {
            *last = '\0';
            last = strrchr(tmp, '/');
        }
        if (last && last[1]) {
            snprintf(buf, cap, "%.150s", last + 1);
            return;
        }
    }
    snprintf(buf, cap, "%.150s", arg);
}


int fg_gate_audit(const struct fg_policy *pol, enum fg_audit_where where,
                  const struct fg_jobspec *spec, const struct fg_request *q,
                  const struct fg_gate *g, const char *user, uint64_t job_id,
                  uint32_t time_limit_min, struct fg_err *err)
{
    return fg_gate_audit_id(pol, where, spec, q, g, user, job_id, time_limit_min, NULL, 0, err);
}

int fg_gate_audit_id(const struct fg_policy *pol, enum fg_audit_where where,
                     const struct fg_jobspec *spec, const struct fg_request *q,
                     const struct fg_gate *g, const char *user, uint64_t job_id,
                     uint32_t time_limit_min, char *id, size_t cap, struct fg_err *err)
{
    if (id && cap)
        id[0] = '\0';
    if (!pol->log_file[0])
        return 0;
    struct fg_audit_rec rec;
    fg_audit_rec_init(&rec, where);
    snprintf(rec.user, sizeof rec.user, "%.63s", user ? user : "");
    rec.job_id = job_id;
    fg_audit_set_time_limit(&rec, time_limit_min);
    fg_audit_from_decision(&rec, q, &g->d);
    /* the model as the job named it: the plugin's --ft-model, the CLI's MODEL argument */
    snprintf(rec.model, sizeof rec.model, "%.255s", spec->model[0] ? spec->model : q->model);
    if (g->assessed)
        fg_audit_from_assessment(&rec, &g->a);
    if (spec->fw)
        snprintf(rec.framework, sizeof rec.framework, "%.31s", spec->fw->name);
    if (g->d.overridden) {
        rec.verdict = FG_AUDIT_OVERRIDE;
        snprintf(rec.override_reason, sizeof rec.override_reason, "%.199s",
                 spec->override_reason);
    } else if (!g->assessed && g->rc != FG_E_INVAL) {
        rec.verdict = FG_AUDIT_ERROR;
    }
    int rc = fg_audit_write(pol->log_file, &rec, err);
    if (!rc && id && cap)
        snprintf(id, cap, "%s", rec.submit_id);
    return rc;
}

uint32_t fg_slurm_time_minutes(const char *s)
{
    /* src/common/parse_time.c time_str2mins: [days-]hours:minutes:seconds, minutes[:seconds],
     * days-hours[:minutes] */
    unsigned long d = 0, f[3] = {0, 0, 0};
    int n = 0;
    if (!s || !*s)
        return 0;
    if (!strcasecmp(s, "UNLIMITED") || !strcasecmp(s, "INFINITE"))
        return FG_TIME_UNLIMITED;
    if (strchr(s, 'U') || strchr(s, 'u') || strchr(s, 'I'))
        return 0;
    const char *p = s, *dash = strchr(s, '-');
    char *end;
    if (dash) {
        d = strtoul(s, &end, 10);
        if (end != dash)
            return 0;
        p = dash + 1;
    }
    while (*p && n < 3) {
        f[n++] = strtoul(p, &end, 10);
        if (end == p || (*end && *end != ':'))
            return 0;
        p = *end ? end + 1 : end;
    }
    unsigned long mins;
    if (dash) /* days-hours[:minutes[:seconds]] */
        mins = d * 1440 + f[0] * 60 + (n > 1 ? f[1] : 0) + (n > 2 && f[2] ? 1 : 0);
    else if (n == 3) /* hours:minutes:seconds */
        mins = f[0] * 60 + f[1] + (f[2] ? 1 : 0);
    else /* minutes[:seconds] */
        mins = f[0] + (n > 1 && f[1] ? 1 : 0);
    /* Slurm's own "no value" (NO_VAL, 0xfffffffe: sbatch without --time) and INFINITE
     * (0xffffffff) as numbers: unknown and unlimited, never 8,000 years of GPU-hours */
    if (mins == FG_TIME_NO_VAL)
        return 0;
    return mins >= FG_TIME_UNLIMITED ? FG_TIME_UNLIMITED : (uint32_t)mins;
}
