#include "jobopts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* User text for a message: at most 60 characters, control characters as '?'
 * (the text reaches terminals and, through the plugin's callers, logs). */
static const char *shown(const char *s, char *buf, size_t cap)
{
    size_t i = 0;
    for (; s && s[i] && i + 1 < cap && i < 60; i++)
        buf[i] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
    buf[i] = '\0';
    return buf;
}

/* Whole-string unsigned decimal in [min, max]. */
static int parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out)
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

static int parse_f(const char *opt, const char *s, double min, double max, double *out)
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

int fg_cli_parse_opts(int argc, char **argv, struct fg_cli_opts *o)
{
    memset(o, 0, sizeof *o);
    fg_job_defaults(&o->job, FG_MODE_FULL);
    o->headroom = 1.15;
    o->conservative = 1.43;
    o->utilisation = 0.4;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t u;
        struct fg_err err = {0};
        int rc = 0;
#define NEEDV()                                                                                \
    do {                                                                                       \
        if (!v) {                                                                              \
            fprintf(stderr, "fitgate: %s needs a value\n", a);                                 \
            return 2;                                                                          \
        }                                                                                      \
        i++;                                                                                   \
    } while (0)
        if (!strcmp(a, "--json")) {
            o->json = true;
        } else if (!strcmp(a, "--structure")) {
            o->structure = true;
        } else if (!strcmp(a, "--grad-ckpt")) {
            o->job.grad_ckpt = true;
        } else if (!strcmp(a, "--chunked-ce")) {
            o->job.chunked_ce = true;
        } else if (!strcmp(a, "--unsharded-copy")) {
            o->job.unsharded_copy = true;
        } else if (!strcmp(a, "--mode")) {
            NEEDV();
            enum fg_mode md;
            if ((rc = fg_mode_parse(v, &md, &err)) == 0) {
                o->job.mode = md;
                o->mode_set = true;
                if (md == FG_MODE_QLORA && o->job.quant == FG_QUANT_NONE)
                    o->job.quant = FG_QUANT_NF4;
            }
        } else if (!strcmp(a, "--precision")) {
            NEEDV();
            rc = fg_precision_parse(v, &o->job.precision, &err);
            o->precision_set = true;
        } else if (!strcmp(a, "--optimizer")) {
            NEEDV();
            rc = fg_optimizer_parse(v, &o->job.optimizer, &err);
        } else if (!strcmp(a, "--attention")) {
            NEEDV();
            rc = fg_attention_parse(v, &o->job.attention, &err);
        } else if (!strcmp(a, "--quant")) {
            NEEDV();
            rc = fg_quant_parse(v, &o->job.quant, &err);
        } else if (!strcmp(a, "--lora-targets")) {
            NEEDV();
            rc = fg_lora_targets_parse(v, &o->job, &err);
        } else if (!strcmp(a, "--seq-len")) {
            NEEDV();
            if (parse_u64(a, v, 1, FG_MAX_SEQ, &o->job.seq_len))
                return 2;
            o->seq_set = true;
        } else if (!strcmp(a, "--batch")) {
            NEEDV();
            if (parse_u64(a, v, 1, 1u << 20, &o->job.batch))
                return 2;
        } else if (!strcmp(a, "--lora-rank")) {
            NEEDV();
            if (parse_u64(a, v, 1, 65536, &u))
                return 2;
            o->job.lora_rank = (uint32_t)u;
        } else if (!strcmp(a, "--zero")) {
            NEEDV();
            if (parse_u64(a, v, 0, 3, &u))
                return 2;
            o->job.zero = (uint32_t)u;
        } else if (!strcmp(a, "--html")) {
            NEEDV();
            o->html = v;
        } else if (!strcmp(a, "--gpu")) {
            NEEDV();
            o->gpu = v;
        } else if (!strcmp(a, "--gpus")) {
            NEEDV();
            if (parse_u64(a, v, 1, 4096, &u))
                return 2;
            o->gpus = (uint32_t)u;
        } else if (!strcmp(a, "--nodes")) {
            NEEDV();
            if (parse_u64(a, v, 1, 1024, &u))
                return 2;
            o->nodes = (uint32_t)u;
        } else if (!strcmp(a, "--headroom")) {
            NEEDV();
            if (parse_f(a, v, 1.0, 4.0, &o->headroom))
                return 2;
        } else if (!strcmp(a, "--conservative")) {
            NEEDV();
            if (parse_f(a, v, 1.0, 4.0, &o->conservative))
                return 2;
        } else if (!strcmp(a, "--samples")) {
            NEEDV();
            if (parse_u64(a, v, 1, 1ull << 40, &o->samples))
                return 2;
        } else if (!strcmp(a, "--epochs")) {
            NEEDV();
            if (parse_u64(a, v, 1, 1000000, &o->epochs))
                return 2;
        } else if (!strcmp(a, "--global-batch")) {
            NEEDV();
            if (parse_u64(a, v, 1, 1u << 24, &o->global_batch))
                return 2;
        } else if (a[0] != '-' && !o->model) {
            o->model = a;
        } else {
            char b[64];
            fprintf(stderr, "fitgate: unknown option '%s' (see fitgate --help)\n",
                    shown(a, b, sizeof b));
            return 2;
        }
#undef NEEDV
        if (rc) {
            fprintf(stderr, "fitgate: %s\n", err.detail);
            return 2;
        }
    }
    if (!o->model) {
        fprintf(stderr, "fitgate: MODEL missing (a directory, a config.json or org/name)\n");
        return 2;
    }
    if (!o->precision_set) {
        /* the mode's default precision unless one was given */
        struct fg_job d;
        fg_job_defaults(&d, o->job.mode);
        o->job.precision = d.precision;
    }
    if (o->conservative < o->headroom) {
        fprintf(stderr, "fitgate: --conservative %.2f is below --headroom %.2f\n",
                o->conservative, o->headroom);
        return 2;
    }
    return 0;
}

struct fg_job fg_cli_job_for_mode(const struct fg_cli_opts *o, enum fg_mode mode)
{
    struct fg_job j = o->job;
    if (mode != o->job.mode) {
        fg_job_defaults(&j, mode);
        if (o->seq_set && mode != FG_MODE_SERVE)
            j.seq_len = o->job.seq_len;
    }
    return j;
}
