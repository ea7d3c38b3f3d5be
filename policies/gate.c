/*
 * gate.c - the one assess path (gate.h); the request it reads is request.h's.
 */
#include "gate.h"

#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "model/model_load.h"
#include "source/source.h"
#include "util/fileio.h"

/*
 * OnUnknown=reject for the job's own config (jobfile.h): a key that changes memory which
 * fitgate does not model refuses the job, as a model it cannot size does.  warn and allow let
 * the verdict stand (the front ends list the keys).  true when it decided.
 */
static bool config_unknown(const struct fg_jobspec *spec, const struct fg_rules *r,
                           const struct fg_request *q, struct fg_decision *d)
{
    if (!spec->n_unknown || r->on_unknown != FG_ONUNK_REJECT || r->action == FG_ACTION_OFF)
        return false;
    memset(d, 0, sizeof *d);
    d->kind = FG_DECIDE_REJECT;
    d->count = q->count;
    d->nodes = q->nodes;
    snprintf(d->lines[0], FG_DECIDE_LINE, "fitgate: rejected: %.300s: it changes memory and "
             "fitgate does not model it (OnUnknown=reject)", spec->unknown[0]);
    if (spec->n_unknown > 1)
        snprintf(d->lines[1], FG_DECIDE_LINE, "fitgate: and %zu more such keys; the first "
                 "after it: %.300s", spec->n_unknown - 1, spec->unknown[1]);
    return true;
}

/* Where the request's GPUs are: its GPUs per node on its nodes; a one-node request larger
 * than a node is left to the assessment (as few nodes as hold it). */
void fg_gate_placement(const struct fg_request *q, const struct fg_rules *r,
                       struct fg_assess_opts *o)
{
    uint32_t node_max = r->max_gpus_node ? r->max_gpus_node : 8;
    uint32_t per = fg_request_per_node(q), nodes = q->nodes ? q->nodes : 1;
    o->per_node = o->nodes = 0;
    if (!per || (nodes == 1 && per > node_max))
        return;
    o->per_node = per;
    o->nodes = nodes;
}

static void gate_once(const struct fg_model *m, const struct fg_jobspec *spec,
                      const struct fg_request *q, const struct fg_rules *r,
                      enum fg_on_error on_error, bool no_alt, struct fg_gate *out)
{
    struct fg_err err = {0};
    memset(out, 0, offsetof(struct fg_gate, rem));
    out->rem.n = 0;
    struct fg_assess_opts ao = {.no_alt = no_alt};
    fg_gate_placement(q, r, &ao);
    out->rc = fg_assess_on(m, spec, q->gpu, fg_request_total(q), &ao, r, &out->a, &err);
    if (!out->rc) {
        out->assessed = true;
        /* a count the generic reader is unsure of decides nothing (OnUnknown) */
        out->unknown = r->action != FG_ACTION_OFF && fg_decide_unknown(q, m, r, &out->d);
        if (!out->unknown && !config_unknown(spec, r, q, &out->d))
            fg_decide(q, &out->a, r, &out->d);
        return;
    }
    snprintf(out->detail, sizeof out->detail, "%.255s", err.detail);
    if (out->rc == FG_E_INVAL) {
        /* the job's own options contradict each other: the user's to fix */
        fg_decide_invalid(q, err.detail, &out->d);
        return;
    }
    fg_decide_error(q->model, err.detail, NULL, on_error, &out->d);
}

void fg_gate_once(const struct fg_model *m, const struct fg_jobspec *spec,
                  const struct fg_request *q, const struct fg_rules *r, enum fg_on_error on_error,
                  struct fg_gate *out)
{
    gate_once(m, spec, q, r, on_error, false, out);
}

/* The check a remedy passes (remedy.h fg_remedy_check_fn): the gate once, in c->g. */
struct check_ctx {
    const struct fg_model *m;
    const struct fg_rules *r;
    struct fg_gate *g;
};

static bool check(void *vctx, const struct fg_jobspec *spec, const struct fg_request *q,
                  struct fg_layout *l, const struct fg_assessment **a)
{
    struct check_ctx *c = vctx;
    /* the decision reads no plan of other frameworks: the re-check leaves it out */
    gate_once(c->m, spec, q, c->r, FG_ONERR_REJECT, true, c->g);
    const struct fg_decision *d = &c->g->d;
    if (a)
        *a = c->g->assessed ? &c->g->a : NULL;
    if (!c->g->assessed || c->g->unknown || !d->fits || d->kind == FG_DECIDE_REJECT ||
        d->by_rule || !d->has_layout)
        return false;
    *l = d->layout;
    return true;
}

void fg_gate_run(const struct fg_model *m, const struct fg_jobspec *spec,
                 const struct fg_request *q, const struct fg_rules *r, enum fg_on_error on_error,
                 struct fg_gate *out)
{
    fg_gate_once(m, spec, q, r, on_error, out);
    struct fg_decision *d = &out->d;
    if (!out->assessed || out->unknown || r->action == FG_ACTION_OFF || d->by_rule ||
        !out->a.have_card || (!d->enough && d->fits))
        return;
    struct check_ctx c = {.m = m, .r = r, .g = malloc(sizeof *c.g)};
    if (!c.g)
        return; /* out of memory: the decision stands without its re-check */
    struct fg_remedy_job j = {.m = m, .spec = spec, .q = q, .r = r, .check = check,
                              .check_ctx = &c, .want_gpus = d->resize_gpus};
    if (d->enough) {
        /* an over-request: the advice names the fewest GPUs that pass this same check */
        fg_remedy_smallest(&j, d->enough, &out->a.need_checked);
        fg_decide(q, &out->a, r, d);
    } else if (!fg_remedy_find(&j, &out->a, &out->rem)) {
        fg_decide_remedies(q, &out->a, &out->rem, d);
    }
    free(c.g);
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
                  const struct fg_gate_audit_of *what, struct fg_err *err)
{
    const struct fg_jobspec *spec = what->spec;
    const struct fg_gate *g = what->g;
    char *id = what->id;
    size_t cap = what->id_cap;
    if (id && cap)
        id[0] = '\0';
    if (!pol->log_file[0])
        return 0;
    struct fg_audit_rec rec;
    fg_audit_rec_init(&rec, where);
    snprintf(rec.user, sizeof rec.user, "%.63s", what->user ? what->user : "");
    rec.job_id = what->job_id;
    fg_audit_set_time_limit(&rec, what->time_limit_min);
    fg_audit_from_decision(&rec, what->q, &g->d);
    /* the model as the job named it: the plugin's --ft-model, the CLI's MODEL argument */
    snprintf(rec.model, sizeof rec.model, "%.255s", spec->model[0] ? spec->model : what->q->model);
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
