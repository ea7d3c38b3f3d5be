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
#include "model.h"
#include "plan.h"
#include "policy.h"

/* Which job option carries the GPU count (suggestions are spelled the same way). */
enum fg_req_via {
    FG_VIA_NONE,          /* the job asks for no GPU */
    FG_VIA_GRES,          /* --gres=gpu[:type]:N, N per node */
    FG_VIA_GPUS,          /* --gpus=[type:]N, N per job */
    FG_VIA_GPUS_PER_NODE, /* --gpus-per-node=[type:]N */
    FG_VIA_PLUGIN,        /* only fitgate's own --ft-gpus / --ft-gpu */
};

struct fg_request {
    const struct fg_gpu *gpu; /* the card; NULL when unknown (borrowed from a GPU table) */
    char type[32];            /* gres type as the job spells it ("t4"); "" when untyped */
    enum fg_req_via via;
    uint32_t count;           /* the number in that option (per node, or per job for GPUS) */
    uint32_t nodes;           /* >= 1 */
    char partition[64];       /* "" when the default partition */
    char model[160];          /* for messages */
    char note[160];           /* how the card was chosen when the job named none ("" none) */
};

/* GPUs of the whole job. */
uint32_t fg_request_total(const struct fg_request *q);

/* The request in the job's own syntax: "--gres=gpu:t4:4", "--nodes=2 --gpus-per-node=h100:8". */
void fg_request_spell(const struct fg_request *q, uint32_t count, uint32_t nodes, char *buf,
                      size_t cap);

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
    /* verdict, numbers, what to do, other layouts (suggestions); "" when silent */
    char lines[FG_DECIDE_LINES][FG_DECIDE_LINE];
};

/* The decision; see the top of this file.  Never fails. */
void fg_decide(const struct fg_request *q, const struct fg_assessment *a,
               const struct fg_rules *r, struct fg_decision *out);

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
