/* remedy_file.c - remedies as edits of the job's own files (remedy_file.h). */
#include "remedy_file.h"

#include <stdio.h>

int fg_remedy_file_edits(const struct fg_remedy *x, const struct fg_jobspec *spec,
                         const char *base_dir, struct fg_jobfile_edits *out,
                         struct fg_err *err)
{
    unsigned ids[FG_REMEDY_EDITS];
    const char *values[FG_REMEDY_EDITS];
    size_t n = 0;
    /* more GPUs and another framework are the request's and the launch's, not the file's */
    if (x->kind != FG_REMEDY_SWITCH)
        return fg_err_set(err, FG_E_UNSUPPORTED, "changes the GPU request or the framework, "
                          "not the file");
    for (size_t i = 0; i < x->n_edits && n < FG_REMEDY_EDITS; i++) {
        ids[n] = x->edits[i].opt;
        values[n++] = x->edits[i].value;
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
