/* remedy_file.c - remedies as edits of the job's own files (remedy_file.h). */
#include "remedy_file.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether option id = value changes nothing of the job of spec (a remedy states its whole
 * layout: --tp=1 where the job has no TP).  *scratch is caller-provided room. */
static bool unchanged(const struct fg_jobspec *spec, unsigned id, const char *value,
                      struct fg_jobspec *scratch)
{
    struct fg_err err = {0};
    *scratch = *spec;
    fg_jobspec_unfinish(scratch);
    if (fg_jobspec_set(scratch, id, value, &err) || fg_jobspec_finish(scratch, &err))
        return false;
    return !memcmp(&scratch->job, &spec->job, sizeof spec->job) && scratch->fw == spec->fw;
}

/* The layout dimensions a remedy restates: the launch's (the GPUs, torchrun's processes)
 * where no key of the files holds them. */
static bool launch_dim(unsigned id)
{
    return id == FG_JOBOPT_TP || id == FG_JOBOPT_PP || id == FG_JOBOPT_EP ||
           id == FG_JOBOPT_CP || id == FG_JOBOPT_DP;
}

int fg_remedy_file_edits(const struct fg_remedy *x, const struct fg_jobspec *spec,
                         const char *base_dir, struct fg_jobfile_edits *out,
                         struct fg_err *err)
{
    char accum[24];
    bool batch = false, steps = false;
    int rc = 0;
    memset(out, 0, sizeof *out);
    /* more GPUs and another framework are the request's and the launch's, not the file's */
    if (x->kind != FG_REMEDY_SWITCH)
        return fg_err_set(err, FG_E_UNSUPPORTED, "changes the GPU request or the framework, "
                          "not the file");
    struct fg_jobspec *scratch = malloc(sizeof *scratch);
    if (!scratch)
        return fg_err_set(err, FG_E_NOMEM, "out of memory");
    for (size_t i = 0; i < x->n_edits && !rc; i++) {
        unsigned id = x->edits[i].opt;
        const char *v = x->edits[i].value;
        batch = batch || id == FG_JOBOPT_BATCH;
        steps = steps || id == FG_JOBOPT_GRAD_ACCUM;
        if (unchanged(spec, id, v, scratch))
            continue;
        struct fg_jobfile_edits one;
        struct fg_err e1 = {0};
        int r = fg_jobfile_edits_for(spec, base_dir, 1, &id, &v, &one, &e1);
        if (r == FG_E_UNSUPPORTED && launch_dim(id))
            continue; /* the request says it */
        if (r || out->n >= FG_JOBFILE_EDITS) {
            rc = r ? r : FG_E_RANGE;
            *err = e1;
            break;
        }
        out->e[out->n++] = one.e[0];
    }
    /* a smaller micro-batch keeps the global batch by accumulation (the remedy's words and
     * its re-check): the file says that too */
    unsigned long long mb = x->layout.micro_batch ? x->layout.micro_batch : 1;
    unsigned long long acc = spec->job.grad_accum ? spec->job.grad_accum : 1;
    if (!rc && batch && !steps && spec->job.batch > mb && out->n < FG_JOBFILE_EDITS) {
        snprintf(accum, sizeof accum, "%llu",
                 (acc * (unsigned long long)spec->job.batch + mb - 1) / mb);
        const unsigned id = FG_JOBOPT_GRAD_ACCUM;
        const char *v = accum;
        struct fg_jobfile_edits one;
        if (!(rc = fg_jobfile_edits_for(spec, base_dir, 1, &id, &v, &one, err)))
            out->e[out->n++] = one.e[0];
    }
    if (!rc && !out->n)
        rc = fg_err_set(err, FG_E_UNSUPPORTED, "changes nothing the files say");
    free(scratch);
    return rc;
}

void fg_remedy_file_words(const struct fg_jobfile_edit *e, char *buf, size_t cap)
{
    if (e->insert)
        snprintf(buf, cap, "%s:%u add %s: %s%s", e->file, e->line, e->key, e->to,
                 e->names_file ? " (a config the framework ships)" : "");
    else
        snprintf(buf, cap, "%s:%u %s: %s -> %s", e->file, e->line, e->key, e->from, e->to);
}
