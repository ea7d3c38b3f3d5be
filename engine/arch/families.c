/*
 * families.c - the families table behind 'fitgate families' (arch/graph.h), its rows in
 * families.def: one row per model_type of transformers' three auto-mapping lists that
 * fine-tuning jobs load (MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
 * MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES, MODEL_FOR_MASKED_LM_MAPPING_NAMES, read from
 * FAMILIES_SOURCE) with its class in each, and one row per type fitgate reads that those
 * lists do not name (remote code, seq2seq, types newer than that tree) with the class its
 * reader follows.  Whether a type has a reader is the registry's answer (arch.c), not a
 * column here; tests/test_arch_families.c compares the table with the vendored lists
 * (tests/fixtures/transformers/) and the registry.
 */
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/graph.h"

#define FAMILIES_SOURCE                                                                   \
    "huggingface/transformers@001002320fa01a489bb9b93976a7e4cd1a46291c "                  \
    "src/transformers/models/auto/modeling_auto.py"

/* A row of families.def. */
struct family_row {
    const char *model_type;
    const char *clm, *itt, *mlm;  /* class in each mapping list, NULL when not listed */
    const char *other;            /* the class followed, for a type none of them lists */
};

static const struct family_row rows[] = {
#define FG_FAMILY_CLM(type, clm) {type, clm, NULL, NULL, NULL},
#define FG_FAMILY_ITT(type, itt) {type, NULL, itt, NULL, NULL},
#define FG_FAMILY_MLM(type, mlm) {type, NULL, NULL, mlm, NULL},
#define FG_FAMILY_CLM_ITT(type, clm, itt) {type, clm, itt, NULL, NULL},
#define FG_FAMILY_CLM_MLM(type, clm, mlm) {type, clm, NULL, mlm, NULL},
#define FG_FAMILY_OTHER(type, other) {type, NULL, NULL, NULL, other},
#include "arch/families.def"
#undef FG_FAMILY_CLM
#undef FG_FAMILY_ITT
#undef FG_FAMILY_MLM
#undef FG_FAMILY_CLM_ITT
#undef FG_FAMILY_CLM_MLM
#undef FG_FAMILY_OTHER
};

const char *fg_families_source(void)
{
    return FAMILIES_SOURCE;
}

static const struct family_row *row_of(const char *model_type)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (!strcmp(rows[i].model_type, model_type))
            return &rows[i];
    return NULL;
}

/* The real config of model_type (arch.h), or NULL. */
static const struct fg__real_config *real_config(const char *model_type)
{
    for (const struct fg__real_config *c = fg__real_configs; c->model_type; c++)
        if (!strcmp(c->model_type, model_type))
            return c;
    return NULL;
}

static void fill(struct fg_family *f, const char *model_type, const struct family_row *r)
{
    const struct fg_arch *a = fg__arch_find(model_type);
    const char *why = fg__family_refused(model_type);
    memset(f, 0, sizeof *f);
    f->model_type = model_type;
    f->reader = a ? a->family : why ? "" : "generic decoder";
    f->certainty = a ? "exact" : why ? "refused" : "generic";
    f->why = a ? NULL : why;
    f->reader_file = a ? a->file : NULL;
    const struct fg__real_config *rc = real_config(model_type);
    f->real_config = rc ? rc->folder : NULL;
    f->real_config_via = rc ? rc->via : NULL;
    f->config_class = fg_config_class(model_type);
    if (r) {
        f->causal_lm = r->clm;
        f->image_text_to_text = r->itt;
        f->masked_lm = r->mlm;
        f->follows = r->clm ? r->clm : r->itt ? r->itt : r->mlm ? r->mlm : r->other;
    }
    if (!f->follows)
        f->follows = "";
}

static int by_type(const void *a, const void *b)
{
    return strcmp(((const struct fg_family *)a)->model_type,
                  ((const struct fg_family *)b)->model_type);
}

int fg_families(struct fg_family **out, size_t *n, struct fg_err *err)
{
    size_t cap = sizeof rows / sizeof rows[0];
    for (size_t i = 0; fg__family_refused_at(i); i++)
        cap++;
    for (size_t i = 0; fg__arch_at(i); i++)
        cap++;
    struct fg_family *v = calloc(cap, sizeof *v);
    *out = NULL;
    *n = 0;
    if (!v)
        return fg_err_set(err, FG_E_NOMEM, "out of memory listing the families");
    size_t k = 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        fill(&v[k++], rows[i].model_type, &rows[i]);
    for (size_t i = 0; fg__family_refused_at(i); i++)
        if (!row_of(fg__family_refused_at(i)))
            fill(&v[k++], fg__family_refused_at(i), NULL);
    /* a reader's type the table lacks still shows, with no class (the test asks for one) */
    for (size_t i = 0; fg__arch_at(i); i++)
        if (!row_of(fg__arch_at(i)->model_type) && !fg__family_refused(fg__arch_at(i)->model_type))
            fill(&v[k++], fg__arch_at(i)->model_type, NULL);
    qsort(v, k, sizeof *v, by_type);
    *out = v;
    *n = k;
    return 0;
}
