/*
 * memory_int.h - the estimator's private half, for the planner: block parts
 * kept across the estimates of one model.  Nothing outside engine/ includes
 * it (tests/integration/layout.sh checks); the public half is memory.h.
 */
#ifndef FG_MEMORY_INT_H
#define FG_MEMORY_INT_H

#include "memory.h"

/*
 * Internal (the planner): block parts kept across the estimates of one model, so that an
 * estimate whose job reads the blocks as an earlier one did (same mode, TP, EP, LoRA
 * targets and rank, precision) recomputes none of them.  fg__parts_new returns NULL when
 * out of memory; the caller frees it with fg__parts_free (NULL-safe) and uses it for one
 * model only.  fg__memory_estimate_parts is fg_memory_estimate_totals with it.
 */
struct fg__parts;
struct fg__parts *fg__parts_new(void);
void fg__parts_free(struct fg__parts *p);
int fg__memory_estimate_parts(const struct fg_model *m, const struct fg_job *job,
                              struct fg_estimate *e, struct fg__parts *parts, struct fg_err *err);

#endif
