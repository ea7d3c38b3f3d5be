/*
 * ctld_args.c - the job as fitgate ctld reads it from standard input: NUL-separated fields,
 * the model first, then only the options a job may set (ctld.h, cmd_ctld.c's header).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctld.h"
#include "job/jobspec.h"
#include "util/fmt.h"

/* The options of Slurm's own a job may give (its GPU request, nodes, partition) and its
 * directory; every other field but the --ft-* table is refused.  The GPU request first. */
static const char *const slurm_opts[] = {"gres", "gpus", "gpus-per-node", "nodes", "partition",
                                         "base-dir"};
#define N_SLURM_OPTS (sizeof slurm_opts / sizeof slurm_opts[0])

const char *fg__ctld_arg_value(const struct ctld *c, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < c->n_opts; i++)
        if (!strncmp(c->opts[i], name, n) && c->opts[i][n] == '=')
            return c->opts[i] + n + 1;
    return NULL;
}

/* A field's name for a message: at most 40 bytes of it, control characters as \xNN (util/fmt.h
 * fg__esc). */
static const char *shown(const char *s, size_t n, char *buf, size_t cap)
{
    fg__esc(buf, cap, s, strnlen(s, n < 40 ? n : 40), 0);
    return buf;
}

int fg__ctld_read_input(struct ctld *c, char **text)
{
    size_t n = 0, cap = 0;
    bool over = false;
    *text = NULL;
    for (;;) {
        if (n + 65536 + 1 > cap) {
            if (cap > CTLD_MAX_INPUT) {
                over = true;
                break;
            }
            cap = cap ? cap * 2 : 65536 * 2;
            if (cap > CTLD_MAX_INPUT + 2)
                cap = CTLD_MAX_INPUT + 2; /* one byte past the cap tells it is over */
            char *p = realloc(*text, cap);
            if (!p)
                return -1;
            *text = p;
        }
        ssize_t r = read(0, *text + n, cap - n - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        n += (size_t)r;
        if (n > CTLD_MAX_INPUT) {
            over = true;
            break;
        }
    }
    if (!(c->args = calloc(CTLD_MAX_ARGS, sizeof *c->args)))
        return -1;
    if (over) {
        snprintf(c->refused, sizeof c->refused, "the job's options are more than %u bytes "
                 "(%u MiB): not what sbatch sends", CTLD_MAX_INPUT, CTLD_MAX_INPUT >> 20);
        n = CTLD_MAX_INPUT;
    } else if (!n || (*text)[n - 1] != '\0') {
        snprintf(c->refused, sizeof c->refused, "the options on standard input must each end "
                 "with a NUL byte, the model first");
    }
    /* the whole fields, for the audit line of a refusal too (its model, request) */
    for (size_t i = 0; i < n && memchr(*text + i, '\0', n - i); i += strlen(*text + i) + 1) {
        if (c->n_args == CTLD_MAX_ARGS) {
            if (!c->refused[0])
                snprintf(c->refused, sizeof c->refused, "more than %d options", CTLD_MAX_ARGS);
            break;
        }
        c->args[c->n_args++] = *text + i;
    }
    return 0;
}

int fg__ctld_check_fields(struct ctld *c)
{
    bool seen[N_SLURM_OPTS] = {false};
    const char *request = NULL;
    c->model = c->n_args ? c->args[0] : "";
    if (!(c->opts = calloc(c->n_args + 1, sizeof *c->opts)))
        return -1;
    for (size_t i = 1; i < c->n_args && !c->refused[0]; i++) {
        const char *a = c->args[i], *eq = strchr(a, '=');
        size_t n = eq ? (size_t)(eq - a) : strlen(a);
        char b[200], name[64];
        if (strncmp(a, "--", 2) || n < 3 || n - 2 >= sizeof name) {
            snprintf(c->refused, sizeof c->refused, "field %zu '%s' is not an option (the "
                     "model is the first field)", i + 1, shown(a, n, b, sizeof b));
            break;
        }
        memcpy(name, a + 2, n - 2);
        name[n - 2] = '\0';
        const char *value = eq ? eq + 1 : NULL;
        char *spelt = NULL;
        if (!strncmp(name, "ft-", 3) || !strncmp(name, "ft_", 3)) {
            int id = fg_jobopt_find(name);
            const struct fg_jobopt *row = id >= 0 ? fg_jobopt_at((unsigned)id) : NULL;
            if (!row) {
                snprintf(c->refused, sizeof c->refused, "--%s is not an option of fitgate",
                         shown(name, strlen(name), b, sizeof b));
                break;
            }
            if (id == FG_JOBOPT_MODEL) {
                snprintf(c->refused, sizeof c->refused, "--ft-model is the first field, not an "
                         "option");
                break;
            }
            if (row->arg && !value) {
                snprintf(c->refused, sizeof c->refused, "--ft-%s needs a value (--ft-%s=%s)",
                         row->name, row->name, row->arg);
                break;
            }
            if (asprintf(&spelt, "--ft-%s%s%s", row->name, value ? "=" : "",
                         value ? value : "") < 0)
                return -1;
        } else {
            size_t k = 0;
            while (k < N_SLURM_OPTS && strcmp(slurm_opts[k], name))
                k++;
            if (k == N_SLURM_OPTS) {
                snprintf(c->refused, sizeof c->refused, "--%s is not an option a job sets: the "
                         "site's files come from its policy, the job's from --ft-*, --gres, "
                         "--gpus, --gpus-per-node, --nodes and --partition",
                         shown(name, strlen(name), b, sizeof b));
                break;
            }
            if (!value || seen[k]) {
                snprintf(c->refused, sizeof c->refused, "--%s %s", name,
                         value ? "given twice" : "needs a value");
                break;
            }
            seen[k] = true;
            bool is_request = k < 3; /* gres, gpus, gpus-per-node: slurm_opts' first three */
            if (is_request && request) {
                snprintf(c->refused, sizeof c->refused, "the GPU request is given twice "
                         "(--%s and --%s)", request, name);
                break;
            }
            if (is_request)
                request = slurm_opts[k];
            if (asprintf(&spelt, "--%s=%s", slurm_opts[k], value) < 0)
                return -1;
        }
        c->opts[c->n_opts++] = spelt;
    }
    return 0;
}
