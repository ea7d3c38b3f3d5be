/*
 * fitgate_common.c - what both contexts need: the policy, the GPU table,
 * the model (a path, or an id through the site's sources within
 * HubTimeout), messages, and the plan as environment variables.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "fitgate.h"
#include "gpu.h"
#include "log.h"
#include "plan.h"
#include "source.h"

static const char *const *option_values;

void fitgate_use_options(const char *const *values)
{
    option_values = values;
}

const char *fitgate_option(enum fitgate_opt id)
{
    return option_values && (unsigned)id < FITGATE_OPT_COUNT ? option_values[id] : NULL;
}

static int parse_uint(const char *s, unsigned long long min, unsigned long long max,
                      unsigned long long *out)
{
    char *end;
    if (!s || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

/* A whole-number option in [min, max] into *out (untouched when the option is absent). */
static int opt_uint(enum fitgate_opt id, const char *name, unsigned long long min,
                    unsigned long long max, unsigned long long *out, struct fg_err *err)
{
    const char *v = fitgate_option(id);
    if (v && parse_uint(v, min, max, out))
        return fg_err_set(err, FG_E_RANGE, "--%s=%.40s: expected a whole number in %llu..%llu",
                          name, v, min, max);
    return 0;
}

int fitgate_job(struct fg_job *job, struct fg_err *err)
{
    enum fg_mode mode = FG_MODE_FULL;
    int rc;
    const char *v;
    unsigned long long u;
    if ((v = fitgate_option(FITGATE_OPT_MODE)) && (rc = fg_mode_parse(v, &mode, err)))
        return fg_err_prefix(err, "--ft-mode"), rc;
    fg_job_defaults(job, mode);
    if (mode == FG_MODE_QLORA && job->quant == FG_QUANT_NONE)
        job->quant = FG_QUANT_NF4;
    if ((v = fitgate_option(FITGATE_OPT_PRECISION)) &&
        (rc = fg_precision_parse(v, &job->precision, err)))
        return fg_err_prefix(err, "--ft-precision"), rc;
    if ((v = fitgate_option(FITGATE_OPT_OPTIMIZER)) &&
        (rc = fg_optimizer_parse(v, &job->optimizer, err)))
        return fg_err_prefix(err, "--ft-optimizer"), rc;
    if ((v = fitgate_option(FITGATE_OPT_ATTENTION)) &&
        (rc = fg_attention_parse(v, &job->attention, err)))
        return fg_err_prefix(err, "--ft-attention"), rc;
    if ((v = fitgate_option(FITGATE_OPT_QUANT)) && (rc = fg_quant_parse(v, &job->quant, err)))
        return fg_err_prefix(err, "--ft-quant"), rc;
    if ((v = fitgate_option(FITGATE_OPT_LORA_TARGETS)) &&
        (rc = fg_lora_targets_parse(v, job, err)))
        return fg_err_prefix(err, "--ft-lora-targets"), rc;
    u = job->seq_len;
    if ((rc = opt_uint(FITGATE_OPT_SEQ_LEN, "ft-seq-len", 1, FG_MAX_SEQ, &u, err)))
        return rc;
    job->seq_len = u;
    u = job->batch;
    if ((rc = opt_uint(FITGATE_OPT_BATCH, "ft-batch", 1, 1u << 20, &u, err)))
        return rc;
    job->batch = u;
    u = job->lora_rank;
    if ((rc = opt_uint(FITGATE_OPT_LORA_RANK, "ft-lora-rank", 1, 65536, &u, err)))
        return rc;
    job->lora_rank = (uint32_t)u;
    u = job->zero;
    if ((rc = opt_uint(FITGATE_OPT_ZERO, "ft-zero", 0, 3, &u, err)))
        return rc;
    job->zero = (uint32_t)u;
    if ((rc = opt_uint(FITGATE_OPT_GPUS, "ft-gpus", 1, 65535, &u, err)))
        return rc;
    if (fitgate_option(FITGATE_OPT_GRAD_CKPT))
        job->grad_ckpt = true;
    return 0;
}

void fitgate_error(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    slurm_error("fitgate: %s", msg);
}

/* Engine messages: warnings reach the user, the rest Slurm's debug log. */
static void sink(enum fg_log_level level, const char *msg, void *ctx)
{
    (void)ctx;
    if (level <= FG_LOG_WARN)
        slurm_info("fitgate: %s", msg);
    else
        slurm_debug("fitgate: %s", msg);
}

void fitgate_log_init(void)
{
    fg_log_set_sink(sink, NULL, FG_LOG_DEBUG);
}

int fitgate_policy(int ac, char **av, struct fg_policy *p, struct fg_err *err)
{
    return fg_policy_setup(p, ac, av, "plugstack.conf (spank_fitgate.so)", err);
}

int fitgate_gpu_table(const struct fg_policy *p, struct fg_gpu_table **out,
                      const struct fg_gpu_table **use, struct fg_err *err)
{
    *out = NULL;
    *use = NULL;
    if (p->gpu_table[0]) {
        int rc = fg_gpu_table_load(p->gpu_table, out, err);
        if (rc)
            return rc;
        *use = *out;
        return 0;
    }
    *use = fg_gpu_table_builtin();
    return 0;
}

/* CacheDir with %u (user name) and %U (uid) expanded. */
static int expand_cache(const char *tmpl, const char *user, unsigned uid, char *out, size_t cap,
                        struct fg_err *err)
{
    size_t o = 0;
    for (const char *s = tmpl; *s; s++) {
        char piece[64];
        const char *add = piece;
        if (s[0] == '%' && s[1] == 'u') {
            add = user && *user ? user : "unknown";
            s++;
        } else if (s[0] == '%' && s[1] == 'U') {
            snprintf(piece, sizeof piece, "%u", uid);
            s++;
        } else {
            piece[0] = *s;
            piece[1] = '\0';
        }
        size_t n = strlen(add);
        if (o + n >= cap)
            return fg_err_set(err, FG_E_RANGE, "CacheDir=%s: too long once expanded", tmpl);
        memcpy(out + o, add, n);
        o += n;
    }
    out[o] = '\0';
    return 0;
}

static bool looks_like_path(const char *arg, const char *full)
{
    struct stat st;
    if (arg[0] == '/' || arg[0] == '.' || arg[0] == '~')
        return true;
    return stat(full, &st) == 0;
}

int fitgate_load_model(const struct fg_policy *p, const char *arg, const char *base_dir,
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
    if (looks_like_path(arg, full))
        return fg_model_load(full, out, err);

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
        (rc = expand_cache(p->cache_dir, user, uid, o.cache_dir, sizeof o.cache_dir, err)))
        return rc;
    struct fg_source_result *res = NULL;
    if ((rc = fg_source_resolve(&o, &id, &res, err)))
        return rc;
    struct fg_config *doc = NULL;
    rc = fg_config_parse(res->text, res->len, res->where, &doc, err);
    if (!rc)
        rc = fg_model_from_config(doc, arg, out, err);
    fg_config_free(doc);
    fg_source_result_free(res);
    return rc;
}

void fitgate_model_label(const char *arg, char *buf, size_t cap)
{
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", arg);
    size_t id_part = strcspn(tmp, "@"), slashes = 0;
    for (size_t i = 0; i < id_part; i++)
        slashes += tmp[i] == '/';
    bool path = tmp[0] == '/' || tmp[0] == '.' || strstr(tmp, "config.json") || slashes != 1;
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

void fitgate_say(const struct fg_decision *d)
{
    for (int i = 0; i < 3; i++) {
        if (!d->lines[i][0])
            continue;
        if (d->kind == FG_DECIDE_REJECT)
            slurm_error("%s", d->lines[i]);
        else
            slurm_info("%s", d->lines[i]);
    }
}

int fitgate_export(const struct fg_layout *l, const char *card, uint32_t gpus,
                   int (*set)(const char *name, const char *value, void *ctx), void *ctx)
{
    char v[32];
    int rc = fg_layout_env(l, set, ctx);
    if (rc)
        return rc;
    if (card && *card && (rc = set("FITGATE_CARD", card, ctx)))
        return rc;
    snprintf(v, sizeof v, "%u", gpus);
    return set("FITGATE_GPUS", v, ctx);
}
