/* plan_json.c - the JSON of a model, an estimate, a layout, the remedies and the
 * checkpoint's headers, for `plan` and `check --json`. */
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

cJSON *fg_cli_model_json(const struct fg_model *m)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", m->id);
    cJSON_AddStringToObject(o, "model_type", m->model_type);
    cJSON_AddStringToObject(o, "reader", m->reader);
    cJSON_AddBoolToObject(o, "generic", m->generic);
    cJSON_AddStringToObject(o, "certainty", fg_certainty_name(m->certainty));
    if (m->certainty == FG_CERT_UNSURE)
        cJSON_AddStringToObject(o, "unsure_key", m->unsure_key);
    cJSON *as = cJSON_AddArrayToObject(o, "assumptions");
    for (size_t i = 0; i < m->n_assumed; i++)
        cJSON_AddItemToArray(as, cJSON_CreateString(m->assumed[i]));
    cJSON *p = cJSON_AddObjectToObject(o, "params");
    cJSON_AddNumberToObject(p, "total", (double)m->params_total);
    cJSON_AddNumberToObject(p, "buffers", (double)m->params_buffers);
    if (m->params_checkpoint)
        cJSON_AddNumberToObject(p, "checkpoint", (double)m->params_checkpoint);
    cJSON_AddNumberToObject(p, "active", (double)fg_model_active_params(m));
    cJSON *r = cJSON_AddArrayToObject(p, "rules");
    for (size_t i = 0; i < m->n_rules; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", m->rules[i].name);
        cJSON_AddNumberToObject(e, "scalars", (double)m->rules[i].scalars);
        cJSON_AddItemToArray(r, e);
    }
    cJSON_AddNumberToObject(o, "layers", (double)m->layers);
    cJSON_AddNumberToObject(o, "hidden", (double)m->hidden);
    cJSON_AddNumberToObject(o, "vocab", (double)m->vocab);
    cJSON *notes = cJSON_AddArrayToObject(o, "notes");
    for (size_t i = 0; i < m->n_notes; i++)
        cJSON_AddItemToArray(notes, cJSON_CreateString(m->notes[i]));
    if (m->ckpt.where[0])
        cJSON_AddItemToObject(o, "checkpoint", fg_cli_ckpt_json(&m->ckpt));
    return o;
}

cJSON *fg_cli_memory_json(const struct fg_estimate *e)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "total_bytes", (double)e->total_bytes);
    cJSON_AddNumberToObject(o, "static_bytes", (double)e->static_bytes);
    cJSON_AddNumberToObject(o, "per_sample_bytes", (double)e->per_sample_bytes);
    cJSON_AddNumberToObject(o, "step_bytes", (double)e->step_bytes);
    cJSON *b = cJSON_AddObjectToObject(o, "breakdown");
    cJSON_AddNumberToObject(b, "weights", (double)e->b.weights);
    cJSON_AddNumberToObject(b, "gradients", (double)e->b.gradients);
    cJSON_AddNumberToObject(b, "optimizer", (double)e->b.optimizer);
    cJSON_AddNumberToObject(b, "adapters", (double)e->b.adapters);
    cJSON_AddNumberToObject(b, "activations", (double)e->b.activations);
    cJSON_AddNumberToObject(b, "logits", (double)e->b.logits);
    cJSON_AddNumberToObject(b, "kv_cache", (double)e->b.kv_cache);
    cJSON_AddNumberToObject(b, "ssm_state", (double)e->b.ssm_state);
    cJSON_AddNumberToObject(b, "overhead", (double)e->b.overhead);
    cJSON *lines = cJSON_AddArrayToObject(o, "lines");
    for (size_t i = 0; i < e->n_lines; i++) {
        cJSON *l = cJSON_CreateObject();
        cJSON_AddStringToObject(l, "key", e->lines[i].key);
        cJSON_AddStringToObject(l, "what", e->lines[i].what);
        cJSON_AddStringToObject(l, "source", e->lines[i].source);
        cJSON_AddNumberToObject(l, "bytes", (double)e->lines[i].bytes);
        cJSON_AddBoolToObject(l, "per_sample", e->lines[i].per_sample);
        cJSON_AddItemToArray(lines, l);
    }
    return o;
}
