/* remedy_file.c - remedies as edits of the job's own files (remedy_file.h). */
#include "remedy_file.h"

#include <stdbool.h>
#include <stdio.h>

int fg_remedy_file_edits(const struct fg_remedy *x, const struct fg_jobspec *spec,
                         const char *base_dir, struct fg_jobfile_edits *out,
                         struct fg_err *err)
{
    unsigned ids[FG_REMEDY_EDITS + 1];
    const char *values[FG_REMEDY_EDITS + 1];
    char accum[24];
    size_t n = 0;
    bool batch = false, steps = false;
    /* more GPUs and another framework are the request's and the launch's, not the file's */
    if (x->kind != FG_REMEDY_SWITCH)
        return fg_err_set(err, FG_E_UNSUPPORTED, "changes the GPU request or the framework, "
                          "not the file");
    for (size_t i = 0; i < x->n_edits && n < FG_REMEDY_EDITS; i++) {
        batch = batch || x->edits[i].opt == FG_JOBOPT_BATCH;
        steps = steps || x->edits[i].opt == FG_JOBOPT_GRAD_ACCUM;
        ids[n] = x->edits[i].opt;
        values[n++] = x->edits[i].value;
    }
    /* a smaller micro-batch keeps the global batch by accumulation (the remedy's words and
     * its re-check): the file says that too */
    unsigned long long mb = x->layout.micro_batch ? x->layout.micro_batch : 1;
    unsigned long long acc = spec->job.grad_accum ? spec->job.grad_accum : 1;
    if (batch && !steps && spec->job.batch > mb) {
        snprintf(accum, sizeof accum, "%llu",
                 (acc * (unsigned long long)spec->job.batch + mb - 1) / mb);
        ids[n] = FG_JOBOPT_GRAD_ACCUM;
        values[n++] = accum;
    }
    return fg_jobfile_edits_for(spec, base_dir, n, ids, values, out, err);
}

void fg_remedy_file_words(const struct fg_jobfile_edit *e, char *buf, size_t cap)
{
    if (e->insert)
        snprintf(buf, cap, "%s:%u add %s: %s%s", e->file, e->line, e->key, e->to,
                 e->names_file ? " (a config the framework ships)" : "");
    else
        snprintf(buf, cap, "%s:%u %s: %s -> %s", e->file, e->line, e->key, e->from, e->to);
}
