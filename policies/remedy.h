/*
 * remedy.h - what a job that does not fit (or asks for more than it needs) can change,
 * each suggestion a complete request re-checked through the gate before anyone sees it.
 *
 * A remedy is a change to the job's own options (struct fg_remedy_edit, the rows of
 * jobopts.def) and to its GPU request (count and nodes in the job's own spelling).  Its
 * edits are every option the user adds: the switches, the framework, every layout
 * dimension the re-check ran (TP, PP, DP, ZeRO, and EP / CP where the job has them) and a
 * smaller micro-batch with its accumulation (--ft-batch, --ft-grad-accum); the same list is
 * applied for the re-check, printed (fg_remedy_flags) and written to the JSON, so a remedy
 * pasted onto the job's command as printed passes the same check.  Four kinds, in order of
 * cost:
 *
 *   FG_REMEDY_SWITCH     the same GPUs, switches of the job's framework row for its mode
 *                        (framework.h fg_framework_switch_list: checkpointing, micro-batch
 *                        with accumulation, fused loss, ZeRO-3, an 8-bit optimizer, offload,
 *                        activation offload, a precomputed reference, vLLM's share or
 *                        server, QLoRA; serving: the engine's share, an fp8 KV cache, fewer
 *                        sequences, a shorter max_model_len): each alone, else the fewest
 *                        that fit together
 *   FG_REMEDY_GPUS       more GPUs within the partition's MaxGPUs, in a layout the job's
 *                        framework runs on the nodes the request names, every dimension the
 *                        job declared kept
 *   FG_REMEDY_FRAMEWORK  a layout of another framework, one that has the job's mode,
 *                        trainer and quantization
 *   FG_REMEDY_BEYOND     the fewest GPUs that hold the job under its own framework when they
 *                        are more than MaxGPUs (searched up to FG_ASSESS_MAX_GPUS): the count
 *                        and the limit said, the request re-checked all the same
 *
 * When a switch fits, only switches are offered (no more GPUs, no other framework), unless
 * the decision resizes the request (struct fg_remedy_job want_gpus).
 *
 * fg_remedy_find() proposes and re-checks: each remedy is applied (fg_remedy_apply) and run
 * through the gate's check (fg_gate_once, handed over as fg_remedy_check_fn); only those
 * that come out fits (and not rejected) on a layout the framework runs (fg_remedy_runnable)
 * are kept, with the figure and layout of that re-check.  The same check gives the
 * smallest request that passes for an over-request (fg_remedy_smallest).
 *
 * Ownership: plain data the caller owns.  Never prints.
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

enum fg_remedy_kind { FG_REMEDY_SWITCH, FG_REMEDY_GPUS, FG_REMEDY_FRAMEWORK, FG_REMEDY_BEYOND };

#define FG_REMEDY_EDITS 16
#define FG_REMEDY_MAX 6

struct fg_remedy_edit {
    unsigned opt;    /* FG_JOBOPT_* row */
    char value[24];  /* as the user types it ("" for a flag) */
};

struct fg_remedy {
    enum fg_remedy_kind kind;
    size_t n_edits;
    struct fg_remedy_edit edits[FG_REMEDY_EDITS]; /* in the order they are applied */
    uint32_t count, nodes;    /* the request after, in the request's own units */
    uint32_t gpus;            /* GPUs of the whole job after */
    struct fg_layout layout;  /* the layout the re-check ran, its peak per GPU */
    uint64_t need, usable;    /* what the re-check held per GPU and the room it had there:
                                 the layout's peak of a card after its CUDA context, or a
                                 serving engine's weights, profile run, graphs and KV cache
                                 of its share (usable 0: not recorded) */
};

struct fg_remedies {
    size_t n;
    struct fg_remedy r[FG_REMEDY_MAX];
    uint32_t max_gpus;        /* FG_REMEDY_BEYOND: the partition's limit it is above */
};

/*
 * The job of spec (finished) with remedy x applied, into *out (spec as its options left it,
 * the edits set in order and finished again: as the options pasted after the job's own)
 * and *qout (q with x's count and nodes).  FG_E_INVAL when an edit does not apply to the job
 * (its framework refuses it).
 */
int fg_remedy_apply(const struct fg_remedy *x, const struct fg_jobspec *spec,
                    const struct fg_request *q, struct fg_jobspec *out,
                    struct fg_request *qout, struct fg_err *err);

/*
 * What the user pastes for remedy x onto the command that asked for q: its edits as
 * sp-spelled options ("--ft-grad-ckpt --ft-zero=3": a flag bare, the rest NAME=VALUE), then
 * the request when it changes ("--nodes=2 --gres=gpu:h100:8"; --nodes=1 when the job asked
 * for several), into buf.
 */
void fg_remedy_flags(const struct fg_remedy *x, const struct fg_request *q, const char *sp,
                     char *buf, size_t cap);

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
    bool want_gpus;                 /* the decision resizes the request: more GPUs are looked
                                       for even when a switch fits (the resize takes the
                                       first that changes only what Slurm controls) */
};

/*
 * Remedies for the job j, whose assessment is a (on the card it asked for, not fitting as
 * asked): up to FG_REMEDY_MAX, cheapest first, each passed through j->check.  out->n 0
 * when nothing passes.  FG_E_NOMEM only.
 */
int fg_remedy_find(const struct fg_remedy_job *j, const struct fg_assessment *a,
                   struct fg_remedies *out);

/*
 * The switches of the job's framework row for its mode that apply to it, one remedy each
 * (edits only; the request as asked), cheapest first, into out (up to cap); how many.  The
 * table fg_remedy_find tries alone before combining them; a micro-batch is 1 with the
 * accumulation that keeps the job's samples per step, a shorter max_model_len the one the
 * assessment a says one sequence fits.
 */
size_t fg_remedy_switches(const struct fg_jobspec *spec, const struct fg_request *q,
                          const struct fg_assessment *a, struct fg_remedy *out, size_t cap);

/*
 * The fewest GPUs (from lo up to the job's own count, in counts the request can spell
 * within the partition's per-node limits) at which the job, otherwise unchanged, passes
 * j->check; the job's own count when none smaller does.  Never fails.
 */
void fg_remedy_smallest(const struct fg_remedy_job *j, uint32_t lo, uint32_t *gpus);

/* Whether the layout of remedy x runs on the framework of the job after it (framework.h
 * fg_framework_runs, on x's nodes: x->count / x->nodes GPUs each). */
bool fg_remedy_runnable(const struct fg_remedy *x, const struct fg_jobspec *after,
                        const struct fg_model *m, const struct fg_request *q,
                        const struct fg_rules *r);

#endif
