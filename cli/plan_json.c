/* plan_json.c - the JSON of a layout, of the remedies and of the checkpoint's headers, for
 * `plan` and `check --json`. */
#include "plan_json.h"

#include <stdio.h>
#include <string.h>

#include "job/jobspec.h"

cJSON *fg_cli_layout_json(const struct fg_layout *l)
{
    cJSON *p = cJSON_CreateObject();
    char split[256];
    fg_layout_split_str(l, split, sizeof split);
    cJSON_AddNumberToObject(p, "gpus", l->gpus);
    cJSON_AddNumberToObject(p, "tp", l->tp);
    cJSON_AddNumberToObject(p, "pp", l->pp);
    cJSON_AddNumberToObject(p, "ep", l->ep);
    cJSON_AddNumberToObject(p, "dp", l->dp);
    if (l->cp > 1)
        cJSON_AddNumberToObject(p, "cp", l->cp);
    cJSON_AddNumberToObject(p, "zero", l->zero);
    cJSON_AddStringToObject(p, "pp_split", split);
    cJSON_AddNumberToObject(p, "peak_bytes", (double)l->peak_bytes);
    cJSON_AddNumberToObject(p, "micro_batch", (double)l->micro_batch);
    cJSON_AddNumberToObject(p, "grad_accum", (double)l->grad_accum);
    return p;
}

cJSON *fg_cli_remedies_json(const struct fg_request *q, const struct fg_remedies *rem,
                            const struct fg_decision *d)
{
    static const char *const kinds[] = {"switch", "more_gpus", "other_framework",
                                        "beyond_max_gpus"};
    cJSON *a = cJSON_CreateArray();
    char req[160];
    for (size_t i = 0; i < rem->n && i < d->n_remedies; i++) {
        const struct fg_remedy *x = &rem->r[i];
        cJSON *e = cJSON_CreateObject(), *opts = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "kind", kinds[x->kind]);
        for (size_t k = 0; k < x->n_edits; k++)
            cJSON_AddStringToObject(opts, fg_jobopt_at(x->edits[k].opt)->name,
                                    x->edits[k].value);
        cJSON_AddItemToObject(e, "options", opts);
        fg_request_spell(q, x->count, x->nodes, req, sizeof req);
        cJSON_AddStringToObject(e, "request", req);
        /* what the line says to paste, the same string (remedy.h fg_remedy_flags) */
        char flags[320];
        fg_remedy_flags(x, q, "--ft-", flags, sizeof flags);
        cJSON_AddStringToObject(e, "flags", flags);
        if (x->kind == FG_REMEDY_BEYOND)
            cJSON_AddNumberToObject(e, "max_gpus", rem->max_gpus);
        cJSON_AddNumberToObject(e, "gpus", x->gpus);
        cJSON_AddItemToObject(e, "layout", fg_cli_layout_json(&x->layout));
        cJSON_AddStringToObject(e, "line", d->remedies[i]);
        cJSON_AddItemToArray(a, e);
    }
    return a;
}

/* What the checkpoint's headers said (model.h fg_ckpt_seen): where they were read, whether
 * the structure itself came from them, tensors, bytes as stored, elements per dtype. */
cJSON *fg_cli_ckpt_json(const struct fg_ckpt_seen *k)
{
    cJSON *o = cJSON_CreateObject(), *d;
    char buf[sizeof k->dtypes];
    cJSON_AddStringToObject(o, "where", k->where);
    cJSON_AddBoolToObject(o, "structure", k->structure);
    cJSON_AddNumberToObject(o, "tensors", (double)k->tensors);
    cJSON_AddNumberToObject(o, "elements", (double)k->elements);
    cJSON_AddNumberToObject(o, "bytes", (double)k->bytes);
    d = cJSON_AddObjectToObject(o, "dtypes");
    snprintf(buf, sizeof buf, "%s", k->dtypes);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char name[16];
        unsigned long long n;
        if (sscanf(t, " %15s %llu", name, &n) == 2)
            cJSON_AddNumberToObject(d, name, (double)n);
    }
    if (k->unused[0])
        cJSON_AddStringToObject(o, "stored_not_loaded", k->unused);
    return o;
}
