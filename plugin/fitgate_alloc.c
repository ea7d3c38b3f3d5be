/*
 * fitgate_alloc.c - submit time: sbatch, salloc, and srun when it creates
 * its own allocation (S_CTX_ALLOCATOR / S_CTX_LOCAL).
 *
 * The job's GPU request is read through Slurm's own option table: sbatch,
 * salloc and srun export their global `opt` and libslurmfull exports
 * slurm_option_get / slurm_option_set (docs/design.md, "Slurm contexts").  That is an
 * internal API, so every symbol is looked up with dlsym and the plugin
 * falls back to its own --ft-gpus / --ft-gpu when one is missing; SPANK
 * refuses to load a plugin built for another Slurm release, which keeps
 * the layout of `opt` and these signatures fixed under us.
 * slurm_option_set in init_post_opt resizes the job: the job description
 * is built from `opt` after the SPANK stack ran (slurm_opt_create_job_desc).
 *
 * A job without --ft-model costs nothing here: no file is read, no engine
 * code runs.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <pwd.h>
#include <slurm/slurm.h>

#include "fitgate.h"
#include "hw/gpu.h"

typedef char *(*opt_get_fn)(void *opt, const char *name);
typedef int (*opt_set_fn)(void *opt, const char *name, const char *value, bool early);
typedef void (*xfree_fn)(void **ptr);

struct probe {
    void *opt;
    opt_get_fn get;    /* returns an xmalloc'd copy, or NULL when unset */
    opt_set_fn set;    /* 0 when set */
    xfree_fn xfree;    /* frees what get returned (libslurmfull's slurm_xfree) */
};

static bool probe_open(struct probe *p)
{
    memset(p, 0, sizeof *p);
    p->opt = dlsym(RTLD_DEFAULT, "opt");
    p->get = (opt_get_fn)dlsym(RTLD_DEFAULT, "slurm_option_get");
    p->set = (opt_set_fn)dlsym(RTLD_DEFAULT, "slurm_option_set");
    p->xfree = (xfree_fn)dlsym(RTLD_DEFAULT, "slurm_xfree");
    return p->opt && p->get;
}

/* The option's value copied into buf, or NULL when unset.  Slurm's copy is
 * freed with slurm_xfree (it has xmalloc's header, so never with free());
 * without slurm_xfree it is left to the process, which exits soon. */
static const char *probe_get(const struct probe *p, const char *name, char *buf, size_t cap)
{
    char *v = p->get(p->opt, name);
    if (!v)
        return NULL;
    snprintf(buf, cap, "%s", v);
    if (p->xfree)
        p->xfree((void **)&v);
    return buf[0] ? buf : NULL;
}

/* What the job asks for, from Slurm's options, else from --ft-gpus (the job spec's count,
 * parsed with the other job options); the card apart (fg_request_card), for a tagged job
 * only. */
static void read_request(const struct probe *p, bool probed, const struct fg_jobspec *spec,
                         struct fg_request *q, char *what_opt, size_t cap)
{
    static const char *const opts[] = {"gres", "gpus-per-node", "gpus"}; /* first wins */
    char buf[512];
    fg_request_init(q);
    what_opt[0] = '\0';
    if (probed) {
        const char *v;
        for (size_t i = 0; i < sizeof opts / sizeof opts[0] && q->via == FG_VIA_NONE; i++)
            if (fg_request_from_option(q, opts[i], probe_get(p, opts[i], buf, sizeof buf), 1,
                                       NULL))
                snprintf(what_opt, cap, "%s", opts[i]);
        if ((v = probe_get(p, "nodes", buf, sizeof buf))) {
            uint32_t n;
            if (fg_gpu_count_parse(v, strcspn(v, "-"), &n))
                q->nodes = n;
        }
        if ((v = probe_get(p, "partition", buf, sizeof buf)))
            snprintf(q->partition, sizeof q->partition, "%.*s", (int)strcspn(v, ","), v);
    }
    fg_request_from_plugin(q, spec->gpus);
}

/*
 * The controller's view, for what the job's options leave open: which
 * partition is the default (for PartitionName= rules) and which GPU type a
 * partition's nodes have (for --gres=gpu:N without a type).  Public libslurm
 * calls, looked up in the running sbatch / salloc / srun like the options;
 * asked only when needed, never for an untagged job.
 */
typedef int (*load_parts_fn)(time_t, partition_info_msg_t **, uint16_t);
typedef int (*load_nodes_fn)(time_t, node_info_msg_t **, uint16_t);
typedef void (*free_parts_fn)(partition_info_msg_t *);
typedef void (*free_nodes_fn)(node_info_msg_t *);

static void default_partition(char *buf, size_t cap)
{
    load_parts_fn load = (load_parts_fn)dlsym(RTLD_DEFAULT, "slurm_load_partitions");
    free_parts_fn release = (free_parts_fn)dlsym(RTLD_DEFAULT, "slurm_free_partition_info_msg");
    partition_info_msg_t *msg = NULL;
    if (!load || !release || load((time_t)0, &msg, SHOW_ALL) || !msg)
        return;
    for (uint32_t i = 0; i < msg->record_count; i++) {
        const partition_info_t *p = &msg->partition_array[i];
        if ((p->flags & PART_FLAG_DEFAULT) && p->name) {
            snprintf(buf, cap, "%s", p->name);
            break;
        }
    }
    release(msg);
}

static bool in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *s = list; s && *s;) {
        size_t len = strcspn(s, ",");
        if (len == n && !strncmp(s, name, n))
            return true;
        s += len;
        if (*s == ',')
            s++;
    }
    return false;
}

/*
 * The GPU types the nodes of a partition have, comma-separated into types (as the gres
 * entries name them; "" when the controller says nothing usable): fg_request_card judges an
 * untyped request on the smallest of them.
 */
static void partition_types(const char *partition, char *types, size_t cap)
{
    load_nodes_fn load = (load_nodes_fn)dlsym(RTLD_DEFAULT, "slurm_load_node");
    free_nodes_fn release = (free_nodes_fn)dlsym(RTLD_DEFAULT, "slurm_free_node_info_msg");
    node_info_msg_t *msg = NULL;
    types[0] = '\0';
    if (!partition[0] || !load || !release || load((time_t)0, &msg, SHOW_ALL) || !msg)
        return;
    for (uint32_t i = 0; i < msg->record_count; i++) {
        const node_info_t *n = &msg->node_array[i];
        if (!n->gres || !n->partitions || !in_list(n->partitions, partition))
            continue;
        for (const char *e = n->gres; *e;) {
            size_t len = strcspn(e, ",");
            char entry[128], type[32];
            uint32_t count;
            snprintf(entry, sizeof entry, "%.*s", (int)(len < 127 ? len : 127), e);
            if (fg_gpu_spec_parse(entry, true, type, sizeof type, &count) && type[0] &&
                !in_list(types, type)) {
                size_t tl = strlen(types);
                snprintf(types + tl, cap - tl, "%s%s", tl ? "," : "", type);
            }
            e += len;
            if (*e == ',')
                e++;
        }
    }
    release(msg);
}

/* Apply a resize to Slurm's options; 0 or -1 (message printed). */
static int apply_resize(const struct probe *p, bool probed, const struct fg_request *q,
                        const struct fg_decision *d)
{
    char val[96], type[40];
    const char *name;
    if (!probed || !p->set) {
        fitgate_error("cannot resize this job: this Slurm does not expose its options to "
                      "plugins; ask for the request above yourself");
        return -1;
    }
    if (q->type[0])
        snprintf(type, sizeof type, "%s:", q->type);
    else if (q->gpu && q->via == FG_VIA_PLUGIN)
        snprintf(type, sizeof type, "%.*s:", (int)strcspn(q->gpu->aliases, ","),
                 q->gpu->aliases);
    else
        type[0] = '\0';
    switch (q->via) {
    case FG_VIA_GPUS:
        name = "gpus";
        snprintf(val, sizeof val, "%s%u", type, d->count);
        break;
    case FG_VIA_GPUS_PER_NODE:
        name = "gpus-per-node";
        snprintf(val, sizeof val, "%s%u", type, d->count);
        break;
    default:
        name = "gres";
        snprintf(val, sizeof val, "gpu:%s%u", type, d->count);
        break;
    }
    if (p->set(p->opt, name, val, false)) {
        fitgate_error("Slurm refused --%s=%s; ask for it yourself", name, val);
        return -1;
    }
    if (d->nodes != (q->nodes ? q->nodes : 1)) {
        char n[16];
        snprintf(n, sizeof n, "%u", d->nodes);
        if (p->set(p->opt, "nodes", n, false)) {
            fitgate_error("Slurm refused --nodes=%s; ask for it yourself", n);
            return -1;
        }
    }
    slurm_debug("fitgate: request set to --%s=%s, %u node(s)", name, val, d->nodes);
    return 0;
}

struct export_ctx {
    spank_t sp;
    int failed;
    char packed[2048]; /* "TP=1;PP=2;..." for SLURM_SPANK_FITGATE_PLAN */
    size_t len;
};

/*
 * setenv reaches the job under --export=ALL.  What slurmstepd (and a job under
 * --export=NONE) learns of the decision travels as job-control environment, packed into
 * one variable, SLURM_SPANK_FITGATE_PLAN = "TP=1;PP=2;...;CARD=h100;GPUS=1": sbatch
 * clears a 256 KB buffer for every job-control variable, and one per value was a quarter
 * of the plugin's cost on a tagged submission (bench/RESULTS.md section 3).  A value that
 * cannot be packed (a ';' in it, or no room left) goes alone as SLURM_SPANK_FITGATE_<NAME>,
 * which the node side reads too (fitgate_stepd.c fitgate_submitted()).
 */
static int export_one(const char *name, const char *value, void *vctx)
{
    struct export_ctx *c = vctx;
    if (setenv(name, value, 1))
        c->failed = 1;
    const char *key = strncmp(name, "FITGATE_", 8) ? name : name + 8;
    size_t room = sizeof c->packed - c->len;
    int n = snprintf(c->packed + c->len, room, "%s%s=%s", c->len ? ";" : "", key, value);
    if (n < 0 || (size_t)n >= room || strchr(value, ';')) {
        c->packed[c->len] = '\0';
        if (spank_job_control_setenv(c->sp, name, value, 1) != ESPANK_SUCCESS)
            c->failed = 1;
    } else {
        c->len += (size_t)n;
    }
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Returns the SPANK result for a decision (-1 only for a rejection). */
static int finish(const struct fg_decision *d)
{
    fitgate_say(d);
    return d->kind == FG_DECIDE_REJECT ? -1 : 0;
}

/* Export the decision's layout to the job (FITGATE_*, and packed for the node side). */
static void export_layout(spank_t sp, const struct fg_request *q, const struct fg_decision *d,
                          const char *submit_id, const struct fg_jobspec *spec)
{
    struct export_ctx c = {.sp = sp};
    char card[40];
    if (q->type[0])
        snprintf(card, sizeof card, "%s", q->type);
    else if (q->gpu)
        snprintf(card, sizeof card, "%.*s", (int)strcspn(q->gpu->aliases, ","), q->gpu->aliases);
    else
        card[0] = '\0';
    if (d->has_layout)
        fitgate_export(&d->layout, card, d->layout.gpus, export_one, &c);
    /* the audit line's id: the node's "stepd" line carries it, so learn joins job id and
     * decision (docs/learn.md) */
    if (submit_id[0])
        export_one("FITGATE_SUBMIT_ID", submit_id, &c);
    if (spec->config_digest) {
        /* the node reads the config again and refuses one changed since (fitgate_stepd.c) */
        char digest[24];
        fitgate_config_digest(spec, digest, sizeof digest);
        export_one("FITGATE_CONFIG_DIGEST", digest, &c);
    }
    if (c.len && spank_job_control_setenv(sp, "FITGATE_PLAN", c.packed, 1) != ESPANK_SUCCESS)
        c.failed = 1;
    if (c.failed)
        slurm_debug("fitgate: some FITGATE_* variables could not be exported");
}

/* The decision into the site's audit trail (LogFile=); a failure is said once, never fatal. */
static void audit(const struct fg_policy *pol, const struct fg_jobspec *spec,
                  const struct fg_request *q, const struct fg_gate *g, const char *user,
                  const struct probe *p, bool probed, char *id, size_t cap)
{
    char buf[64];
    struct fg_err err = {0};
    const char *prog = program_invocation_short_name;
    enum fg_audit_where where = !strcmp(prog, "salloc") ? FG_AUDIT_AT_SALLOC
                                : !strcmp(prog, "srun") ? FG_AUDIT_AT_SRUN
                                                        : FG_AUDIT_AT_SBATCH;
    const char *t = probed ? probe_get(p, "time", buf, sizeof buf) : NULL;
    struct fg_gate_audit_of what = {.spec = spec, .q = q, .g = g, .user = user,
                                     .time_limit_min = fg_slurm_time_minutes(t), .id = id,
                                     .id_cap = cap};
    if (fg_gate_audit(pol, where, &what, &err))
        slurm_info("fitgate: warning: the decision could not be logged: %s", err.detail);
}

/*
 * The job's options and config files into spec: 0; -1 when they are the job's own mistake
 * (said: rejected, nothing to decide); 1 when its config could not be read or is no training
 * job fitgate judges, *d deciding by OnError as fitgate check does (cli/jobopts.c).
 */
static int read_job(struct fg_jobspec *spec, const struct fg_policy *pol, struct fg_decision *d)
{
    struct fg_err err = {0};
    int rc = fitgate_job(spec, NULL, &err);
    if (rc == FG_E_IO || rc == FG_E_NOMEM || rc == FG_E_UNSUPPORTED) {
        fg_decide_error("this job", err.detail, NULL, pol->on_error, d);
        return 1;
    }
    if (rc)
        fitgate_error("rejected: %s", err.detail);
    return rc ? -1 : 0;
}

int fitgate_engine_alloc(spank_t sp, int ac, char **av, const char *const *values, unsigned n)
{
    double t0 = now_s();
    fitgate_use_options(values, n);
    fitgate_log_init();
    struct fg_decision d;
    struct fg_policy pol;
    struct fg_err err = {0};
    struct fg_gpu_table *own = NULL;
    struct fg_model *m = NULL;
    struct fg_gate *g = NULL;
    struct fg_jobspec *spec = NULL;
    char submit_id[128] = "";
    int rc = 0;
    if (fitgate_policy(ac, av, &pol, &err)) {
        fg_decide_error("this job", err.detail, FITGATE_TODO_POLICY, pol.on_error, &d);
        return finish(&d);
    }
    if (!(spec = calloc(1, sizeof *spec))) {
        fg_decide_error("this job", "out of memory", NULL, pol.on_error, &d);
        return finish(&d);
    }
    int jrc = read_job(spec, &pol, &d);
    if (jrc) {
        rc = jrc < 0 ? -1 : finish(&d);
        goto out;
    }
    const char *model_arg = spec->model[0] ? spec->model : NULL; /* --ft-model, or its config */
    struct probe probe;
    bool probed = probe_open(&probe);
    if (!probed)
        slurm_debug("fitgate: Slurm's options are not visible (opt=%p, slurm_option_get=%p); "
                    "using --ft-gpus/--ft-gpu", probe.opt, (void *)probe.get);
    struct fg_request q;
    char via[32];
    read_request(&probe, probed, spec, &q, via, sizeof via);
    fg_gate_model_label(model_arg ? model_arg : "", q.model, sizeof q.model);
    if (probed && !q.partition[0] && pol.n_parts)
        default_partition(q.partition, sizeof q.partition);
    struct fg_rules rules;
    fg_policy_rules_for(&pol, q.partition, &rules);
    if (!model_arg) {
        /* loaded for an untagged job only under requiretag= (fitgate_dispatch.c); the verdict
         * needs the request's kind and partition, no GPU table */
        if (rules.action != FG_ACTION_OFF && rules.require_tag && q.via != FG_VIA_NONE) {
            memset(&d, 0, sizeof d);
            d.kind = FG_DECIDE_REJECT;
            snprintf(d.lines[0], FG_DECIDE_LINE, "fitgate: rejected: GPU jobs %s%s must say "
                     "what they run (RequireTag=yes)", q.partition[0] ? "in partition " :
                     "on this cluster", q.partition);
            snprintf(d.lines[1], FG_DECIDE_LINE, "fitgate: add --ft-model=ORG/NAME (or a "
                     "directory with config.json) and --ft-mode=full|lora|qlora|serve; "
                     "'fitgate plan MODEL' shows what to ask for");
            rc = finish(&d);
        }
        goto out;
    }
    const struct fg_gpu_table *table = NULL;
    if (fitgate_gpu_table(&pol, &own, &table, &err)) {
        fg_decide_error("this job", err.detail, FITGATE_TODO_POLICY, pol.on_error, &d);
        rc = finish(&d);
        goto out;
    }
    if (rules.action == FG_ACTION_OFF)
        goto out;
    /* an untyped request without --ft-gpu: the partition's DefaultGPU=, else its smallest
     * card (suggestions keep the job's untyped form) */
    char part[64] = "", types[128] = "";
    const char *ft_gpu = fitgate_option(FG_JOBOPT_GPU);
    if (!q.type[0] && !(ft_gpu && *ft_gpu) && q.via != FG_VIA_NONE && !rules.default_gpu[0] &&
        probed) {
        snprintf(part, sizeof part, "%s", q.partition);
        if (!part[0])
            default_partition(part, sizeof part);
        partition_types(part, types, sizeof types);
    }
    if (fg_request_card(&q, table, ft_gpu, rules.default_gpu, part, types, NULL, &err)) {
        fg_decide_error(q.model, err.detail,
                        "name a known card with --ft-gpu=NAME ('fitgate gpus --table'), or ask "
                        "the admin to add a row (GpuTable=)", pol.on_error, &d);
        rc = finish(&d);
        goto out;
    }
    struct passwd *pw = getpwuid(getuid());
    const char *user = pw ? pw->pw_name : NULL;
    if (!(g = calloc(1, sizeof *g))) {
        fg_decide_error(q.model, "out of memory", NULL, pol.on_error, &d);
        rc = finish(&d);
        goto out;
    }
    if ((g->rc = fg_gate_load_model(&pol, model_arg, NULL, user, (unsigned)getuid(), false, &m,
                                    &err))) {
        /* a model directory past the bounds (error.h FG_E_LIMIT) is the job's own, as a bad
         * option value is; any other failure to read it is OnError='s */
        g->rc == FG_E_LIMIT ? fg_decide_invalid(&q, err.detail, &g->d)
                            : fg_decide_error(q.model, err.detail, NULL, pol.on_error, &g->d);
        audit(&pol, spec, &q, g, user, &probe, probed, submit_id, sizeof submit_id);
        rc = finish(&g->d);
        goto out;
    }
    fg_gate_run(m, spec, &q, &rules, pol.on_error, g);
    audit(&pol, spec, &q, g, user, &probe, probed, submit_id, sizeof submit_id);
    char said[600];
    snprintf(said, sizeof said, "%.300s: %s in %.0f ms (request via %s: %u x %.64s, %u node(s))",
             model_arg, fg_decide_kind_name(g->d.kind), (now_s() - t0) * 1e3,
             via[0] ? via : "--ft-gpus", q.count, q.type[0] ? q.type : "?", q.nodes);
    fitgate_line(FG_LOG_DEBUG, "fitgate: ", said); /* the job's text, escaped */
    rc = finish(&g->d);
    fitgate_say_edits(&g->d, &g->rem, spec);
    if (rc == 0 && g->d.resize_gpus && apply_resize(&probe, probed, &q, &g->d))
        rc = -1;
    if (rc == 0 && (g->d.has_layout || submit_id[0] || spec->config_digest))
        export_layout(sp, &q, &g->d, submit_id, spec);
out:
    free(g);
    free(spec);
    fg_model_free(m);
    fg_gpu_table_free(own);
    return rc;
}
