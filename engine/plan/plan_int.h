/*
 * plan_int.h - the planner's private half, shared by plan.c (the planner: per-block costs,
 * a layout's evaluation and ranking) and plan_search.c (the search over GPU counts and
 * shapes, fg_plan_layouts).  Nothing outside engine/plan/ includes it.  A struct planner
 * belongs to its caller: fg__planner_init fills it, fg__planner_free frees what it holds.
 */
#ifndef FG_PLAN_INT_H
#define FG_PLAN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan/plan.h"

struct fg__parts;

/*
 * Speed (bench/RESULTS.md).  A plan evaluates up to a thousand layouts, and a pipeline
 * layout needs an estimate of every block alone, a binary search over cuts, and an
 * estimate per stage.  Done naively that is O(layouts x layers x nodes) (2 s for a
 * DeepSeek-V3 plan).  What keeps it small, every number still the estimator's own:
 *   - totals-only estimates (fg__memory_estimate_parts): the same arithmetic without
 *     formatting the attributed lines, which the planner never reads;
 *   - the estimator walks the model's segments (model.h): a run of equal blocks off the
 *     stage costs a comparison, on it a few multiplications, and a block's part, once
 *     counted under a (mode, TP, EP, LoRA, precision) key, is kept for the whole plan;
 *   - block costs depend on (tp, ep, zero, and dp when zero > 0) only, not on pp or
 *     the cut: computed once per such shape in a plan and reused;
 *   - identical blocks (the segments' representatives) share their costs, so a 61-block
 *     DeepSeek-V3 needs 2 block estimates per shape, not 61;
 *   - cut_fits does not walk the blocks one by one: runs of equal consecutive blocks
 *     are taken in one step, and where most runs are single blocks (hybrid stacks) a
 *     stage's start is found by galloping search on prefix sums (see there); the
 *     bisection jumps between stage costs the cuts really have;
 *   - a GPU count whose every layout must hold more than a card is skipped whole
 *     (fg__plan_count_floor), a pipeline shape whose every cut must is skipped before its
 *     blocks are costed (fg__plan_shape_floor: one estimate, not one per distinct block
 *     and side plus the sums), and a count's search stops at the first shape whose rank
 *     keeps it out of the options (kept_out).
 * tools/bench_golden.sh checks the CLI's output byte for byte against earlier code, and
 * tools/bench_plandiff.c plans and estimates in-process against an earlier engine.
 */
struct stage_costs {
    uint64_t key;              /* shape_key() of the layouts they serve */
    uint64_t *s, *a;           /* per block: static bytes, per-sample bytes */
    uint64_t *S, *A;           /* prefix sums: S[l] = s[0] + ... + s[l-1] (layers + 1 each) */
    bool sums_ok;              /* the sums did not overflow */
    uint32_t *run;             /* blocks up to l (back from l) with the same s and a (>= 1) */
    uint32_t runs;             /* how many runs */
    uint64_t es, ea, hs, ha;   /* embedding side and head side */
    bool in_flight;            /* training: stage i keeps pp - i micro-batches (1F1B); a
                                  served stage keeps its layers' cache once (estimate_serve) */
};

struct planner {
    const struct fg_model *m;
    struct fg__parts *parts;   /* block parts across the plan's estimates (memory.h) */
    uint32_t layers;
    uint32_t *rep;             /* per block: the first block identical to it */
    int8_t tp_ok[65];          /* tp_valid by tp: -1 unknown */
    struct stage_costs *memo;
    size_t n_memo, cap_memo;
    uint32_t *index;           /* open addressing over memo by key: i + 1, 0 empty */
    size_t cap_index;          /* a power of two, at least twice n_memo */
    bool naive_pp;             /* a layer split run one micro-batch at a time */
    bool serve;                /* a served job: KV heads may be replicated over TP */
};

/* One (TP, PP, EP) shape of a GPU count; rank: its layout_rank at the job's ZeRO stage,
 * the least it can have (a higher stage only adds to it). */
struct shape {
    uint32_t tp, pp, ep, dp, order;
    int rank;
};

int fg__planner_init(struct planner *P, const struct fg_model *m, uint32_t layers,
                     struct fg_err *err);

void fg__planner_free(struct planner *P);

int fg__planner_estimate(struct planner *P, const struct fg_job *j, struct fg_estimate *e,
                         struct fg_err *err);

bool fg__planner_tp_valid(struct planner *P, uint32_t tp);

int fg__plan_eval_layout(struct planner *P, const struct fg_job *job, uint64_t usable,
                         const struct fg_plan_opts *o, struct fg_layout *L, bool *fits,
                         struct fg_err *err);

int fg__plan_layout_rank(const struct fg_layout *l);

int fg__plan_cmp_layout(const void *a, const void *b);

int fg__plan_cmp_shape(const void *a, const void *b);

bool fg__plan_kept_out(const struct fg_layout *found, size_t n, int r, bool first_count);

/* The accumulation steps of layout L under the plan's global batch (o->global_batch: 0
 * keeps the job's own), as the search reports them. */
uint32_t fg__plan_accum_of(const struct fg_job *job, const struct fg_plan_opts *o,
                           const struct fg_layout *L);

#endif
