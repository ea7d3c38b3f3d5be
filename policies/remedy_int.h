/*
 * remedy_int.h - remedy.c's private half (policies/ only): a remedy's edits and the options
 * each switch of a framework row sets (remedy_switch.c).  Nothing here allocates; x is the
 * caller's.
 */
#ifndef FG_REMEDY_INT_H
#define FG_REMEDY_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "remedy.h"

/* opt = value in x, replacing an earlier edit of opt (it keeps its place); dropped past
 * FG_REMEDY_EDITS.  _u: a whole number. */
void fg__remedy_edit(struct fg_remedy *x, unsigned opt, const char *value);
void fg__remedy_edit_u(struct fg_remedy *x, unsigned opt, uint64_t v);

/* One switch as the options that turn it on (spec: the job, q its request, a its assessment
 * or NULL), into x (cleared first); false when it does not apply to the job. */
bool fg__remedy_switch_edits(enum fg_switch sw, const struct fg_jobspec *spec,
                             const struct fg_request *q, const struct fg_assessment *a,
                             struct fg_remedy *x);

#endif
