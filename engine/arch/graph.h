/*
 * graph.h - the model's graph from a parsed config.json (graph.c): the
 * registry of family readers by model_type, and the generic reader for the
 * rest.  The caller frees a model with fg_model_free (model.h).
 */
#ifndef FG_ARCH_GRAPH_H
#define FG_ARCH_GRAPH_H

#include <stdbool.h>

#include "model.h"
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


/* fg_model_from_config, every block built node by node when node_by_node is set. */
int fg__model_from_config(const struct fg_config *doc, const char *id, bool node_by_node,
                          struct fg_model **out, struct fg_err *err);

#endif
