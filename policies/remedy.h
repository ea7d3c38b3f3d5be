/*
 * remedy.h - what a job that does not fit (or asks for more than it needs) can change,
 * each suggestion re-checked through the gate before anyone sees it.
 *
 * A remedy is a change to the job's own options (struct fg_remedy_edit, the rows of
 * jobopts.def) and to its GPU request (count and nodes in the job's own spelling).  Three
 * kinds, in order of cost:
 *
 *   FG_REMEDY_SWITCH     the same GPUs, a switch of the job that its framework runs:
 *                        gradient checkpointing, a smaller micro-batch with accumulation,
 *                        chunked loss, ZeRO-3 / FSDP, an 8-bit optimizer, optimizer offload,
 *                        QLoRA (the fewest switches that fit, found by trying them in that
 *                        order and dropping every one the fit does not need)
 *   FG_REMEDY_GPUS       more GPUs, in a layout the job's framework runs, every dimension
 *                        the job declared kept
 *   FG_REMEDY_FRAMEWORK  a layout of another framework, one that runs the job's mode and
 *                        quantization
 *
 * fg_remedy_find() proposes and re-checks: each remedy is applied (fg_remedy_apply) and run
 * through the gate's check (fg_gate_once, handed over as fg_remedy_check_fn); only those
 * that come out fits (and not rejected) are kept, with the figure and layout of that
 * re-check.  The same function gives the smallest request that
 * passes the check for an over-request (fg_remedy_smallest).
 *
 * Ownership: plain data the caller owns; struct fg_remedies is about 6 KB.  Never prints.
 * Error contract: error.h; a remedy that does not apply is dropped, never an error.
 */
#ifndef FG_REMEDY_H
#define FG_REMEDY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "job/jobspec.h"
#include "plan/plan.h"
#include "policy.h"
#include "request.h"

struct fg_model;

enum fg_remedy_kind { FG_REMEDY_SWITCH, FG_REMEDY_GPUS, FG_REMEDY_FRAMEWORK };

#define FG_REMEDY_EDITS 8
#define FG_REMEDY_MAX 6

struct fg_remedy_edit {
    unsigned opt;    /* FG_JOBOPT_* row */
    char value[24];  /* as the user types it ("" for a flag) */
};

struct fg_remedy {
    enum fg_remedy_kind kind;
    size_t n_edits;
    struct fg_remedy_edit edits[FG_REMEDY_EDITS];
    uint32_t count, nodes;    /* the request after, in the request's own units */
    uint32_t gpus;            /* GPUs of the whole job after */
    struct fg_layout layout;  /* the layout the re-check ran, its peak per GPU */
};

struct fg_remedies {
    size_t n;
    struct fg_remedy r[FG_REMEDY_MAX];
};

/*
 * The job of spec (finished) with remedy x applied, into *out (copied from spec, the edits
 * set and finished again) and *qout (q with x's count and nodes).  FG_E_INVAL when an edit
 * does not apply to the job (its framework refuses it).
 */
int fg_remedy_apply(const struct fg_remedy *x, const struct fg_jobspec *spec,
                    const struct fg_request *q, struct fg_jobspec *out,
                    struct fg_request *qout, struct fg_err *err);

/*
 * The check every remedy passes, the gate's own (gate.c hands it over, so this module
 * does not call the gate back): the job of spec on the request q, as fg_gate_once runs it;
 * true when it fits as asked and is not refused, with the layout it ran into *l.  *a, when
 * not NULL, gets the run's assessment (borrowed, valid until the next check; NULL when the
 * job could not be assessed).
 */
struct fg_assessment;
typedef bool (*fg_remedy_check_fn)(void *ctx, const struct fg_jobspec *spec,
                                   const struct fg_request *q, struct fg_layout *l,
                                   const struct fg_assessment **a);

struct fg_remedy_job {
    const struct fg_model *m;       /* borrowed, as the rest */
    const struct fg_jobspec *spec;  /* finished */
    const struct fg_request *q;
    const struct fg_rules *r;
    fg_remedy_check_fn check;
    void *check_ctx;
};

/*
 * Remedies for the job j, whose assessment is a (on the card it asked for, not fitting as
 * asked): up to FG_REMEDY_MAX, cheapest first, each passed through j->check.  out->n 0
 * when nothing passes.  FG_E_NOMEM only.
 */
int fg_remedy_find(const struct fg_remedy_job *j, const struct fg_assessment *a,
                   struct fg_remedies *out);

/*
 * The fewest GPUs (from lo up to the job's own count, in counts the request can spell
 * within the partition's per-node limits) at which the job, otherwise unchanged, passes
 * j->check; the job's own count when none smaller does.  Never fails.
 */
void fg_remedy_smallest(const struct fg_remedy_job *j, uint32_t lo, uint32_t *gpus);

/* Whether a layout of remedy x runs on its framework as asked (the property the tests
 * check): the framework has every dimension, a device_map split stays on one node and has
 * no data parallel beside it, TP stays within a node, EP divides the model's experts. */
bool fg_remedy_runnable(const struct fg_remedy *x, const struct fg_jobspec *after,
                        const struct fg_model *m, const struct fg_rules *r);

#endif
