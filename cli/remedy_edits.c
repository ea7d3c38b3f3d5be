/* remedy_edits.c - the remedies of a job read from its own files, as edits to those files
 * (engine/job/jobfile_edit.h): the lines `check` prints under the remedies, the "edits" of
 * --json, and --write-fit. */
#include "remedy_edits.h"

#include <stdio.h>
#include <string.h>

#include "remedy_file.h"

/* Remedy x's options as edits of o's files; 0, or the error that says why not. */
static int edits_of(const struct fg_cli_opts *o, const struct fg_remedy *x,
                    struct fg_jobfile_edits *ed, struct fg_err *err)
{
    return fg_remedy_file_edits(x, &o->spec, o->base_dir, ed, err);
}

void fg_cli_remedy_edits_print(const struct fg_cli_opts *o, const struct fg_remedies *rem,
                               size_t shown)
{
    if (!o->spec.n_configs)
        return;
    for (size_t i = 0; i < rem->n && i < shown; i++) {
        struct fg_jobfile_edits ed;
        struct fg_err err = {0};
        char w[800];
        if (edits_of(o, &rem->r[i], &ed, &err)) {
            if (rem->r[i].kind == FG_REMEDY_SWITCH)
                printf("    remedy %zu in the file: not a key of it (%s)\n", i + 1, err.detail);
            continue;
        }
        for (size_t k = 0; k < ed.n; k++) {
            fg_remedy_file_words(&ed.e[k], w, sizeof w);
            printf("    remedy %zu in the file: %s\n", i + 1, w);
        }
    }
}

void fg_cli_remedy_edits_json(const struct fg_cli_opts *o, const struct fg_remedies *rem,
                              cJSON *arr)
{
    cJSON *item;
    size_t i = 0;
    if (!o->spec.n_configs)
        return;
    cJSON_ArrayForEach(item, arr)
    {
        struct fg_jobfile_edits ed;
        struct fg_err err = {0};
        if (i >= rem->n)
            break;
        if (edits_of(o, &rem->r[i++], &ed, &err))
            continue;
        cJSON *a = cJSON_AddArrayToObject(item, "edits");
        for (size_t k = 0; k < ed.n; k++) {
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "file", ed.e[k].file);
            cJSON_AddNumberToObject(e, "line", ed.e[k].line);
            cJSON_AddStringToObject(e, "key", ed.e[k].key);
            if (ed.e[k].insert)
                cJSON_AddNullToObject(e, "from");
            else
                cJSON_AddStringToObject(e, "from", ed.e[k].from);
            cJSON_AddStringToObject(e, "to", ed.e[k].to);
            cJSON_AddItemToArray(a, e);
        }
    }
}

int fg_cli_write_fit(const struct fg_cli_opts *o, const struct fg_gate *g)
{
    struct fg_err err = {0};
    if (!o->spec.n_configs) {
        fprintf(stderr, "fitgate: error: --write-fit writes the job's config edited: give it "
                        "with --config\n");
        return 2;
    }
    if (g->d.fits && g->d.kind != FG_DECIDE_REJECT && !g->d.resize_gpus) {
        fprintf(stderr, "fitgate: the job fits as its files say: nothing written to %s\n",
                o->write_fit);
        return 0;
    }
    for (size_t i = 0; i < g->rem.n; i++) {
        struct fg_jobfile_edits ed;
        bool single = true, own = true;
        if (edits_of(o, &g->rem.r[i], &ed, &err) || !ed.n)
            continue;
        for (size_t k = 0; k < ed.n; k++) {
            single = single && !strcmp(ed.e[k].file, ed.e[0].file);
            own = own && !ed.e[k].names_file;
        }
        /* the first remedy whose edits are all keys of one file, and name no file that the
         * written copy's own directory may not have */
        if (!single || !own)
            continue;
        if (fg_jobfile_write_edited(&ed, o->base_dir, o->write_fit, &err)) {
            fprintf(stderr, "fitgate: error: %s\n", err.detail);
            return 2;
        }
        fprintf(stderr, "fitgate: wrote %s: %s with remedy %zu's edits (re-checked)\n",
                o->write_fit, ed.e[0].file, i + 1);
        return 0;
    }
    fprintf(stderr, "fitgate: error: no remedy is an edit of one file alone (each needs more "
                    "GPUs, another framework or another file): nothing written to %s\n",
            o->write_fit);
    return 1;
}
