#include "jobopts.h"

#include "job/jobfile.h"
#include "util/fmt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* User text for a message: at most 60 bytes of it, control characters as \xNN (util/fmt.h
 * fg__esc: the text reaches terminals and, through the plugin's callers, logs). */
static const char *shown(const char *s, char *buf, size_t cap)
{
    fg__esc(buf, cap, s ? s : "", s ? strnlen(s, 60) : 0, 0);
    return buf;
}

int fg_cli_parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    if (!s || !*s || *s == '-' || *s == '+') {
        char b[64];
        fprintf(stderr, "fitgate: %s needs a whole number, got '%s'\n", opt, shown(s, b, sizeof b));
        return 2;
    }
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < min || v > max) {
        char b[64];
        fprintf(stderr, "fitgate: %s '%s' is not a whole number in %llu..%llu\n", opt,
                shown(s, b, sizeof b),
                (unsigned long long)min, (unsigned long long)max);
        return 2;
    }
    *out = v;
    return 0;
}

int fg_cli_parse_f(const char *opt, const char *s, double min, double max, double *out)
{
    char *end;
    errno = 0;
    double v = s ? strtod(s, &end) : 0;
    if (!s || !*s || errno || *end || !(v >= min && v <= max)) {
        char b[64];
        fprintf(stderr, "fitgate: %s '%s' is not a number in %g..%g\n", opt, shown(s, b, sizeof b),
                min,
                max);
        return 2;
    }
    *out = v;
    return 0;
}

/* The CLI's own options and Slurm's request spellings (the job's are engine/job/jobopts.def). */
enum cli_opt {
    C_JSON, C_STRUCTURE, C_HTML, C_HEADROOM, C_CONSERVATIVE, C_SAMPLES, C_EPOCHS,
    C_GLOBAL_BATCH, C_GRES, C_GPUS, C_GPUS_PER_NODE, C_NODES, C_PARTITION, C_POLICY,
    C_GPUS_CONF, C_OFFLINE, C_LOG_AS, C_BASE_DIR, C_WRITE_FIT
};
static const struct {
    const char *name;
    bool has_arg;
    enum cli_opt id;
} cli_opts[] = {
    {"json", false, C_JSON},
    {"structure", false, C_STRUCTURE},
    {"html", true, C_HTML},
    {"headroom", true, C_HEADROOM},
    {"conservative", true, C_CONSERVATIVE},
    {"samples", true, C_SAMPLES},
    {"epochs", true, C_EPOCHS},
    {"global-batch", true, C_GLOBAL_BATCH},
    {"gres", true, C_GRES},
    {"gpus", true, C_GPUS},           /* Slurm's --gpus=[type:]N, per job */
    {"gpus-per-node", true, C_GPUS_PER_NODE},
    {"nodes", true, C_NODES},
    {"partition", true, C_PARTITION},
    {"policy", true, C_POLICY},
    {"gpus-conf", true, C_GPUS_CONF},
    {"offline", false, C_OFFLINE},
    {"log-as", true, C_LOG_AS},
    {"base-dir", true, C_BASE_DIR},
    {"write-fit", true, C_WRITE_FIT},
};

const char *fg_cli_opt_at(size_t i, bool *has_arg)
{
    if (i >= sizeof cli_opts / sizeof cli_opts[0])
        return NULL;
    *has_arg = cli_opts[i].has_arg;
    return cli_opts[i].name;
}

static int cli_opt_find(const char *name)
{
    for (size_t k = 0; k < sizeof cli_opts / sizeof cli_opts[0]; k++)
        if (!strcmp(cli_opts[k].name, name))
            return (int)k;
    return -1;
}

const char *fg_cli_jobopt_flag(unsigned id, char *buf, size_t cap)
{
    const struct fg_jobopt *r = fg_jobopt_at(id);
    if (!r || id == FG_JOBOPT_MODEL)
        return NULL;
    snprintf(buf, cap, "%s%s", cli_opt_find(r->name) >= 0 ? "--ft-" : "--", r->name);
    return buf;
}

const char *fg_cli_jobopt_arg(unsigned id, char *buf, size_t cap)
{
    const struct fg_jobopt *r = fg_jobopt_at(id);
    const char *w[32];
    size_t n = fg_jobopt_values(id, w, 32), off = 0;
    if (!r || !r->arg)
        return NULL;
    if (!n || n > 32 || id == FG_JOBOPT_FRAMEWORK)
        return r->arg; /* a number, or a name from a list too long for one line */
    buf[0] = '\0';
    for (size_t i = 0; i < n && off < cap; i++) {
        int k = snprintf(buf + off, cap - off, "%s%s", i ? "|" : "", w[i]);
        off += k > 0 ? (size_t)k : 0;
    }
    if (id == FG_JOBOPT_LORA_TARGETS && off < cap)
        snprintf(buf + off, cap - off, "|LIST");
    return buf;
}

void fg_cli_jobopts_usage(FILE *f, size_t width)
{
    size_t col = 0;
    for (unsigned id = 0; id < FG_JOBOPT_COUNT; id++) {
        char flag[64], arg[160];
        const char *fl = fg_cli_jobopt_flag(id, flag, sizeof flag);
        const char *a = fg_cli_jobopt_arg(id, arg, sizeof arg);
        if (!fl)
            continue;
        size_t len = strlen(fl) + (a ? strlen(a) + 1 : 0);
        if (col && col + 1 + len > width) {
            fputc('\n', f);
            col = 0;
        }
        col += (size_t)fprintf(f, "%s%s%s%s", col ? " " : "  ", fl, a ? " " : "", a ? a : "");
    }
    if (col)
        fputc('\n', f);
}

static int cli_value(struct fg_cli_opts *o, enum cli_opt id, const char *a, const char *v)
{
    uint64_t u;
    switch (id) {
    case C_JSON: o->json = true; break;
    case C_STRUCTURE: o->structure = true; break;
    case C_HTML: o->html = v; break;
    case C_HEADROOM:
        o->headroom_set = true;
        return fg_cli_parse_f(a, v, 1.0, 4.0, &o->headroom);
    case C_CONSERVATIVE:
        o->conservative_set = true;
        return fg_cli_parse_f(a, v, 1.0, 4.0, &o->conservative);
    case C_SAMPLES: return fg_cli_parse_u64(a, v, 1, 1ull << 40, &o->samples);
    case C_EPOCHS: return fg_cli_parse_u64(a, v, 1, 1000000, &o->epochs);
    case C_GLOBAL_BATCH: return fg_cli_parse_u64(a, v, 1, 1u << 24, &o->global_batch);
    case C_GRES: o->gres = v; break;
    case C_GPUS: o->gpus_opt = v; break;
    case C_GPUS_PER_NODE: o->gpus_per_node = v; break;
    case C_NODES:
        if (fg_cli_parse_u64(a, v, 1, 1024, &u))
            return 2;
        o->nodes = (uint32_t)u;
        break;
    case C_PARTITION: o->partition = v; break;
    case C_POLICY: o->policy = v; break;
    case C_GPUS_CONF: o->gpus_conf = v; break;
    case C_OFFLINE: o->offline = true; break;
    case C_BASE_DIR: o->base_dir = v; break;
    case C_WRITE_FIT: o->write_fit = v; break;
    case C_LOG_AS:
        if (strcmp(v, "cli") && strcmp(v, "job_submit")) {
            fprintf(stderr, "fitgate: --log-as takes cli or job_submit\n");
            return 2;
        }
        o->log_as = v;
        break;
    }
    return 0;
}

/*
 * The job's own config files (jobfile.h), relative paths from --base-dir as MODEL: what they
 * say joins the spec.  What they get wrong is the job's error (o->job_error, as a bad option
 * value); 2 after a message when they could not be read for another reason (a read that
 * failed, no memory, no libyaml), else 0.
 */
static int read_configs(struct fg_cli_opts *o)
{
    struct fg_err err = {0};
    int rc = 0;
    if (o->model && !fg_jobspec_given(&o->spec, FG_JOBOPT_MODEL))
        rc = fg_jobspec_set(&o->spec, FG_JOBOPT_MODEL, o->model, &err);
    if (!rc)
        rc = fg_jobfile_apply(&o->spec, o->base_dir, &err);
    if (rc == FG_E_IO || rc == FG_E_NOMEM || rc == FG_E_UNSUPPORTED) {
        /* not the job's doing: a read that failed, no memory, no libyaml */
        fprintf(stderr, "fitgate: %s\n", err.detail);
        return 2;
    }
    if (rc) /* the job's own file says something its framework would refuse: as a bad
             * option value, the job's error (the plugin's fitgate_job) */
        snprintf(o->job_error, sizeof o->job_error, "%s", err.detail);
    if (!o->model && o->spec.model[0])
        o->model = o->spec.model;
    for (size_t i = 0; !rc && i < o->spec.n_unknown; i++)
        fprintf(stderr, "fitgate: warning: %s: changes memory, not modelled\n",
                o->spec.unknown[i]);
    return 0;
}

int fg_cli_parse_opts(int argc, char **argv, struct fg_cli_opts *o)
{
    memset(o, 0, sizeof *o);
    fg_jobspec_init(&o->spec, "--");
    o->headroom = 1.15;
    o->conservative = 1.43;
    o->utilisation = 0.4;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        char b[64], name[64];
        if (!strcmp(a, "--")) {
            /* the end of the options: what follows is MODEL as it is, never an option (fitgate
             * ctld puts the job's model there, so "--gpus-conf=..." in it stays a name) */
            if (i + 2 < argc || (i + 1 < argc && o->model)) {
                fprintf(stderr, "fitgate: only MODEL may follow --\n");
                return 2;
            }
            if (i + 1 < argc)
                o->model = argv[i + 1];
            break;
        }
        if (a[0] != '-' && !o->model) {
            o->model = a;
            continue;
        }
        if (a[0] != '-' || a[1] != '-') {
            fprintf(stderr, "fitgate: unknown option '%s' (see fitgate --help)\n",
                    shown(a, b, sizeof b));
            return 2;
        }
        /* --name, --name=value, --ft-name=value */
        const char *eq = strchr(a + 2, '=');
        size_t n = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
        if (n >= sizeof name) {
            fprintf(stderr, "fitgate: unknown option '%s' (see fitgate --help)\n",
                    shown(a, b, sizeof b));
            return 2;
        }
        memcpy(name, a + 2, n);
        name[n] = '\0';
        bool ft = !strncmp(name, "ft-", 3);
        int cli = ft ? -1 : cli_opt_find(name), job = -1;
        if (cli < 0)
            job = fg_jobopt_find(name);
        if (job == FG_JOBOPT_MODEL && !ft)
            job = -1; /* MODEL is the positional argument */
        if (cli < 0 && job < 0) {
            fprintf(stderr, "fitgate: unknown option '%s' (see fitgate --help)\n",
                    shown(a, b, sizeof b));
            return 2;
        }
        bool has_arg = cli >= 0 ? cli_opts[cli].has_arg : fg_jobopt_at((unsigned)job)->arg != NULL;
        const char *v = eq ? eq + 1 : NULL;
        if (!has_arg && !v && job == FG_JOBOPT_GRAD_CKPT && i + 1 < argc &&
            (!strcmp(argv[i + 1], "selective") || !strcmp(argv[i + 1], "full")))
            v = argv[++i]; /* --grad-ckpt selective: the one flag with a kind */
        if (has_arg && !v) {
            if (i + 1 >= argc) {
                fprintf(stderr, "fitgate: %s needs a value\n", shown(a, b, sizeof b));
                return 2;
            }
            v = argv[++i];
        }
        if (cli >= 0) {
            if (!has_arg && v) {
                fprintf(stderr, "fitgate: --%s takes no value\n", name);
                return 2;
            }
            if (cli_value(o, cli_opts[cli].id, a, v))
                return 2;
            continue;
        }
        struct fg_err err = {0};
        if (fg_jobspec_set(&o->spec, (unsigned)job, v, &err)) {
            /* the job's own option: the rest is read, so check can answer as the plugin does */
            if (!o->job_error[0])
                snprintf(o->job_error, sizeof o->job_error, "%s", err.detail);
            continue;
        }
        if (job == FG_JOBOPT_MODEL)
            o->model = o->spec.model;
    }
    if (o->spec.n_configs && !o->job_error[0] && read_configs(o))
        return 2;
    if (!o->model && !o->job_error[0]) {
        fprintf(stderr, "fitgate: MODEL missing (a directory, a config.json or org/name)\n");
        return 2;
    }
    if (!!o->gres + !!o->gpus_opt + !!o->gpus_per_node > 1) {
        fprintf(stderr, "fitgate: give the GPUs one way: --gres, --gpus or --gpus-per-node\n");
        return 2;
    }
    struct fg_err err = {0};
    if (!o->job_error[0] && fg_jobspec_finish(&o->spec, &err))
        snprintf(o->job_error, sizeof o->job_error, "%s", err.detail);
    if (o->job_error[0])
        return 4;
    o->spec.global_batch = o->global_batch;
    o->job = o->spec.job;
    o->seq_set = fg_jobspec_given(&o->spec, FG_JOBOPT_SEQ_LEN);
    o->gpu = o->spec.gpu[0] ? o->spec.gpu : NULL;
    if (o->conservative < o->headroom) {
        fprintf(stderr, "fitgate: --conservative %.2f is below --headroom %.2f\n",
                o->conservative, o->headroom);
        return 2;
    }
    return 0;
}

struct fg_job fg_cli_job_for_mode(const struct fg_cli_opts *o, enum fg_mode mode)
{
    if (mode == o->job.mode)
        return o->job;
    /* the job's framework completes the seeds' job for the mode, as it completed the user's */
    struct fg_jobspec s;
    char seq[24], fw[96];
    fg_jobspec_init(&s, NULL);
    snprintf(seq, sizeof seq, "%llu", (unsigned long long)o->job.seq_len);
    if (o->spec.fw) /* the row itself: its release too */
        snprintf(fw, sizeof fw, "%s@%s", o->spec.fw->name, o->spec.fw->version);
    if (fg_jobspec_set(&s, FG_JOBOPT_MODE, fg_mode_name(mode), NULL) ||
        (o->spec.fw && fg_jobspec_set(&s, FG_JOBOPT_FRAMEWORK, fw, NULL)) ||
        (o->seq_set && mode != FG_MODE_SERVE && fg_jobspec_set(&s, FG_JOBOPT_SEQ_LEN, seq, NULL)) ||
        fg_jobspec_finish(&s, NULL)) {
        /* a mode the framework does not run: the seeds' job as it stands */
        fg_job_defaults(&s.job, mode);
        if (o->seq_set && mode != FG_MODE_SERVE)
            s.job.seq_len = o->job.seq_len;
    }
    return s.job;
}
