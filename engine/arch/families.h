/*
 * families.h - the model_types fitgate knows, for 'fitgate families': each with the reader
 * that sizes it, how sure that reader is, the transformers class it follows, and the
 * transformers auto-mapping lists (models/auto/modeling_auto.py) that name it.
 *
 * Error contract: see error.h.
 * Ownership: fg_families returns an array the caller frees with free(); the strings in it
 * are static.
 */
#ifndef FG_FAMILIES_H
#define FG_FAMILIES_H

#include <stddef.h>

#include "util/error.h"

struct fg_family {
    const char *model_type;
    const char *reader;      /* the family reader, "generic decoder", or "" when refused */
    const char *certainty;   /* "exact" (a family reader), "generic" (the generic reader,
                                unsure where it meets a key it cannot size), "refused" */
    const char *follows;     /* the transformers class whose __init__ the reader follows */
    const char *causal_lm;   /* its class in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES, or NULL */
    const char *image_text_to_text; /* ... MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES */
    const char *masked_lm;   /* ... MODEL_FOR_MASKED_LM_MAPPING_NAMES */
    const char *why;         /* refused: the reason; NULL otherwise */
};

/* The transformers tree the mapping columns were read from ("huggingface/transformers@<commit>
 * src/transformers/models/auto/modeling_auto.py"). */
const char *fg_families_source(void);

/* Every model_type of the mapping lists and of fitgate's readers, sorted by model_type, in
 * *out (caller frees with free()) and its length in *n.  FG_E_NOMEM. */
int fg_families(struct fg_family **out, size_t *n, struct fg_err *err);

/* Internal (arch.c): the reason model_type is refused by name, or NULL. */
const char *fg__family_refused(const char *model_type);

#endif
