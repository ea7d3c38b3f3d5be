/*
 * graph.h - the model's graph from a parsed config.json (graph.c): the
 * registry of family readers by model_type, and the generic reader for the
 * rest, and the list of families they cover ('fitgate families', families.c).  The
 * caller frees a model with fg_model_free (model.h) and a family list with free().
 */
#ifndef FG_ARCH_GRAPH_H
#define FG_ARCH_GRAPH_H

#include <stdbool.h>
#include <stddef.h>

#include "model/model.h"
#include "source/config.h"
#include "util/error.h"

/*
 * Build the graph for a parsed config (engine/arch/graph.c: the family readers
 * fill a model; this module only holds it).  id (may be NULL) names the model in
 * output.  Fails with FG_E_UNSUPPORTED for an unknown model_type that lacks
 * the standard decoder keys, and with the config getters' errors.
 */
int fg_model_from_config(const struct fg_config *doc, const char *id, struct fg_model **out,
                         struct fg_err *err);


/*
 * fg_model_from_config for a model_type no family reader knows and none refuses: its
 * structure read from the checkpoint's tensors l (arch/arch_tensors.h, certainty
 * FG_CERT_CHECKPOINT) instead of the generic reader.  A known type reads as
 * fg_model_from_config reads it.  l is borrowed.
 */
struct fg_st_layout;
int fg_model_from_tensors(const struct fg_config *doc, const char *id,
                          const struct fg_st_layout *l, struct fg_model **out, struct fg_err *err);

/* True when model_type has a family reader or is refused by name (the tensors' route is
 * for the rest). */
bool fg_model_type_known(const char *model_type);

/* fg_model_from_config, every block built node by node when node_by_node is set. */
int fg__model_from_config(const struct fg_config *doc, const char *id, bool node_by_node,
                          struct fg_model **out, struct fg_err *err);

/* ---- the families fitgate knows (families.c) --------------------------------- */

/* One model_type: the reader that sizes it, how sure that reader is, the transformers class
 * it follows, and the transformers auto-mapping lists (models/auto/modeling_auto.py) that
 * name it.  Strings are static. */
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
    const char *reader_file; /* the family reader's source file, NULL without one */
    const char *real_config; /* the fixture folder (tests/fixtures/models/<folder>) of a
                                released checkpoint's config.json the reader is tested on,
                                NULL when none is */
    const char *real_config_via; /* NULL when that config's root is of the type; else the
                                    root key of the sub-config the reader reads */
    const char *config_class; /* the transformers config class its config.json is read as
                                 (source/config.h fg_config_class), NULL when none */
};

/* The transformers tree the mapping columns were read from ("huggingface/transformers@<commit>
 * src/transformers/models/auto/modeling_auto.py"). */
const char *fg_families_source(void);

/* Every model_type of the mapping lists and of fitgate's readers, sorted by model_type, in
 * *out (caller frees with free()) and its length in *n.  FG_E_NOMEM. */
int fg_families(struct fg_family **out, size_t *n, struct fg_err *err);

#endif
