/*
 * decide.h - the admission decision.
 *
 * Two steps, so the decision itself is a pure function:
 *
 *   fg_assess()  runs the engine once for a job on the card it asked for
 *                (assess.h, policies/assess.c).
 *   fg_decide()  request + assessment + rules -> allow / warn / reject /
 *                resize, the request after the decision, the layout to
 *                export (FITGATE_*), and up to four lines for people:
 *                a verdict, the numbers, what to do.  No I/O, no engine
 *                calls, no allocation: unit tests feed it numbers.
 *
 * What "fits" means: the job's micro-batch fits one card under the
 * headroom (then every GPU asked for is a data-parallel rank), or the
 * planner's smallest layout needs no more GPUs than the job asks for.
 * A job whose micro-batch does not fit but micro-batch 1 does is fixed by
 * lowering the micro-batch and adding gradient accumulation (the global
 * batch is kept), before any GPU is added.
 *
 * Error contract: see error.h.  fg_assess fails only with the engine's
 * errors; a job that does not fit is a result, not an error.
 */
#ifndef FG_DECIDE_H
#define FG_DECIDE_H

#include <stdbool.h>
#include <stdint.h>

#include "assess.h"
#include "util/error.h"
#include "hw/gpu.h"
#include "model/model.h"
#include "plan/plan.h"
#include "policy.h"
#include "remedy.h"
#include "request.h"

enum fg_decide_kind { FG_DECIDE_ALLOW, FG_DECIDE_WARN, FG_DECIDE_REJECT, FG_DECIDE_RESIZE };

#define FG_DECIDE_LINE 400
#define FG_DECIDE_LINES 4

struct fg_decision {
    enum fg_decide_kind kind;
    bool fits;                 /* the job fits as asked */
    bool resize_gpus;          /* count / nodes changed */
    bool resize_batch;         /* micro-batch lowered, gradient accumulation added */
    uint32_t count, nodes;     /* the request after the decision (same units as fg_request) */
    bool has_layout;           /* layout is meaningful (the job fits, as asked or resized) */
    struct fg_layout layout;   /* what to export as FITGATE_* */
    bool overridden;           /* a rejection let through by --ft-override (AllowOverride=yes) */
    bool by_rule;              /* decided by a site rule (a mode not allowed, no GPU asked
                                  for, a card fitgate cannot size), not by memory */
    uint32_t enough;           /* an over-request: the GPUs the advice names (0 none); the
                                  gate re-checks it (fg_gate_run) */
    /* verdict, numbers, what to do, other layouts (suggestions); "" when silent */
    char lines[FG_DECIDE_LINES][FG_DECIDE_LINE];
    /* the remedies, cheapest first, each re-checked (fg_decide_remedies); printed after
     * lines[2] (fg_decide_lines gives the order) */
    size_t n_remedies;
    char remedies[FG_REMEDY_MAX][FG_DECIDE_LINE];
};

/*
 * The words for the remedies the gate found and re-checked (remedy.h) of a job that does
 * not fit as asked: one line each, labelled by kind ("same GPUs", "more GPUs", "another
 * framework") with the options as sbatch takes them ("--ft-grad-ckpt": the CLI takes the
 * same, and the Lua filters pass the lines on to sbatch users) and the figure its re-check
 * reached; lines[2] becomes their heading, or says that nothing
 * passed.  A GPU resize the decision made is replaced by the first re-checked one that only
 * changes what Slurm controls (count, nodes, exported layout), or becomes a rejection when
 * none passes.  Pure; never fails.
 */
void fg_decide_remedies(const struct fg_request *q, const struct fg_assessment *a,
                        const struct fg_remedies *rem, struct fg_decision *d);

/* The decision's lines in the order people read them (lines[0..2], the remedies, lines[3]),
 * the empty ones left out, into out (borrowed from d); returns how many. */
size_t fg_decide_lines(const struct fg_decision *d, const char **out, size_t cap);

/* The decision; see the top of this file.  Never fails. */
void fg_decide(const struct fg_request *q, const struct fg_assessment *a,
               const struct fg_rules *r, struct fg_decision *out);

/* The rejection of a job whose own options contradict each other (detail: which and why;
 * the engine's FG_E_INVAL), with the request's total when its spelling may be why. */
void fg_decide_invalid(const struct fg_request *q, const char *detail, struct fg_decision *d);

/*
 * The decision when the job cannot be checked (model source unreachable,
 * bad policy file, unknown card...): `what` could not be checked because of
 * `detail`; `todo` is the third line (NULL: check --ft-model).  OnError says
 * allow (the job goes on, with a warning) or reject.
 */
void fg_decide_error(const char *what, const char *detail, const char *todo,
                     enum fg_on_error on_error, struct fg_decision *out);

/*
 * The step for a model the generic reader is unsure of (m->certainty FG_CERT_UNSURE: a key it
 * cannot size, named in m->unsure_key).  OnUnknown=reject refuses the job and OnUnknown=warn
 * lets it go on unchecked, each with three lines (what is unknown and which key, the count and
 * the rule, what to do), and returns true: out is the decision.  It returns false, out
 * untouched, for a model read with certainty, or under OnUnknown=allow: the caller goes on to
 * fg_decide.  q->model names the model in the lines (m->id when empty).  Pure, never fails.
 */
bool fg_decide_unknown(const struct fg_request *q, const struct fg_model *m,
                       const struct fg_rules *r, struct fg_decision *out);

const char *fg_decide_kind_name(enum fg_decide_kind k);

#endif
