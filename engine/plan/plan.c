/*
 * plan.c - the parallel planner (see plan.h for the rules and sources).
 *
 * Search: GPU counts 1..gpus_per_node, then whole nodes; for each count the
 * (tp, pp, ep, dp, zero) shapes the rules allow, in rank order.  Pipeline cuts are
 * placed by a binary search on the largest stage, using per-block costs from the
 * estimator (static bytes and per-sample bytes of each block alone), then every stage
 * of the chosen cut is re-estimated exactly.
 */
#include "memory/memory_int.h"
#include "plan/plan.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stack/framework.h"
#include "util/sat.h"

void fg_plan_opts_default(struct fg_plan_opts *o)
{
    memset(o, 0, sizeof *o);
    o->max_gpus = 64;
    o->min_gpus = 1;
    o->gpus_per_node = 8;
    fg_fit_opts_default(&o->fit);
}

/* TP must split heads, KV heads, MLP / expert widths and SSM heads evenly
 * (Megatron ColumnParallelLinear / RowParallelLinear partitioning); a serving engine also
 * runs more ranks than KV heads, each holding a copy of one (vLLM QKVParallelLinear
 * replicates them when tp is a multiple of the KV heads). */
static bool node_tp_valid(const struct fg_node *n, uint32_t tp, bool serve)
{
    if (n->stack != FG_STACK_MAIN)
        return true;
    if ((n->kind == FG_NODE_ATTN || n->kind == FG_NODE_MLA) &&
        (n->heads % tp ||
         (n->kv_heads && n->kv_heads % tp && !(serve && tp % n->kv_heads == 0))))
        return false;
    if ((n->kind == FG_NODE_MLP || n->kind == FG_NODE_MOE) && n->inter % tp)
        return false;
    if (n->kind == FG_NODE_MAMBA2 && (n->ssm_heads % tp || (n->groups && n->groups % tp)))
        return false;
    return true;
}

/* Every node's, or, by segments (model.h), every node but those of a block equal to an
 * earlier representative (equal in all node_tp_valid reads). */
static bool tp_valid(const struct fg_model *m, uint32_t tp, bool serve)
{
    if (tp == 1)
        return true;
    if (!m->segs) {
        for (size_t i = 0; i < m->n_nodes; i++)
            if (!node_tp_valid(&m->nodes[i], tp, serve))
                return false;
        return true;
    }
    for (size_t s = 0; s < m->n_segs; s++) {
        const struct fg_seg *g = &m->segs[s];
        if (g->rep != s)
            continue;
        for (uint32_t i = g->first; i < g->first + g->n; i++)
            if (!node_tp_valid(&m->nodes[i], tp, serve))
                return false;
    }
    return true;
}

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

/* The estimate reads tp, ep and zero, dp to shard under ZeRO and, without ZeRO, whether
 * it is above 1 (DDP's buckets), and whether micro-batches accumulate (memory.c). */
static uint64_t shape_key(const struct fg_job *j)
{
    uint64_t dp = j->zero ? j->dp : j->dp > 1;
    return (uint64_t)j->tp << 48 | (uint64_t)(j->ep & 0xffff) << 32 |
           (uint64_t)(j->zero & 0xff) << 24 | (uint64_t)(j->grad_accum > 1) << 23 |
           (dp & 0x7fffff);
}

/* The accumulation steps of layout L under the plan's global batch (o->global_batch: 0
 * keeps the job's own), as search_count reports them. */
static uint32_t accum_of(const struct fg_job *job, const struct fg_plan_opts *o,
                         const struct fg_layout *L)
{
    if (!o->global_batch)
        return job->grad_accum;
    uint64_t per_step = job->batch * (L->dp ? L->dp : 1);
    uint64_t a = (o->global_batch + per_step - 1) / per_step;
    return a > UINT32_MAX ? UINT32_MAX : (uint32_t)a;
}

/* Blocks made of one segment each share the costs of their segment's representative;
 * a block in several segments (nodes not contiguous) is its own. */
static int planner_init(struct planner *P, const struct fg_model *m, uint32_t layers,
                        struct fg_err *err)
{
    memset(P, 0, sizeof *P);
    P->m = m;
    P->layers = layers;
    memset(P->tp_ok, -1, sizeof P->tp_ok);
    P->rep = malloc(2 * (size_t)layers * sizeof *P->rep);
    P->parts = fg__parts_new();
    if (!P->rep || !P->parts)
        return fg_err_set(err, FG_E_NOMEM, "out of memory planning pipeline stages");
    uint32_t *seg = P->rep + layers; /* per block: its segment, UINT32_MAX none or several */
    for (uint32_t l = 0; l < layers; l++) {
        P->rep[l] = l;
        seg[l] = UINT32_MAX - 1;
    }
    for (uint32_t s = 0; s < m->n_segs; s++) {
        int32_t l = m->segs[s].layer;
        if (l >= 0 && (uint32_t)l < layers)
            seg[l] = seg[l] == UINT32_MAX - 1 ? s : UINT32_MAX;
    }
    for (uint32_t l = 0; l < layers; l++) {
        if (seg[l] >= UINT32_MAX - 1)
            continue;
        int32_t r = m->segs[m->segs[seg[l]].rep].layer;
        if (r >= 0 && (uint32_t)r < l && seg[r] < UINT32_MAX - 1)
            P->rep[l] = (uint32_t)r;
    }
    return 0;
}

static void planner_free(struct planner *P)
{
    for (size_t i = 0; i < P->n_memo; i++)
        free(P->memo[i].s);
    free(P->memo);
    free(P->index);
    free(P->rep);
    fg__parts_free(P->parts);
}

/* A totals-only estimate with the plan's block parts: the same bytes, fewer blocks counted. */
static int estimate(struct planner *P, const struct fg_job *j, struct fg_estimate *e,
                    struct fg_err *err)
{
    return fg__memory_estimate_parts(P->m, j, e, P->parts, err);
}

static bool planner_tp_valid(struct planner *P, uint32_t tp)
{
    if (tp >= sizeof P->tp_ok)
        return tp_valid(P->m, tp, P->serve);
    if (P->tp_ok[tp] < 0)
        P->tp_ok[tp] = tp_valid(P->m, tp, P->serve);
    return P->tp_ok[tp];
}

static int block_costs(struct planner *P, const struct fg_job *job, struct stage_costs *c,
                       struct fg_err *err)
{
    struct fg_estimate e;
    struct fg_job j = *job;
    j.batch = 1;
    j.inflight = 1;
    j.stage_embed = j.stage_head = false;
    for (uint32_t l = 0; l < P->layers; l++) {
        if (P->rep[l] != l) { /* identical to an earlier block (planner_init) */
            c->s[l] = c->s[P->rep[l]];
            c->a[l] = c->a[P->rep[l]];
            continue;
        }
        j.layer_first = l;
        j.layer_last = l + 1;
        int rc = estimate(P, &j, &e, err);
        if (rc)
            return rc;
        /* the step phase can be the larger one: partition on the larger static */
        c->s[l] = e.step_bytes > e.static_bytes ? e.step_bytes : e.static_bytes;
        c->a[l] = e.per_sample_bytes;
    }
    c->runs = 0;
    for (uint32_t l = 0; l < P->layers; l++) {
        bool same = l > 0 && c->s[l - 1] == c->s[l] && c->a[l - 1] == c->a[l];
        c->run[l] = same ? c->run[l - 1] + 1 : 1;
        c->runs += !same;
    }
    c->S[0] = c->A[0] = 0;
    c->sums_ok = true;
    for (uint32_t l = 0; l < P->layers; l++)
        if (__builtin_add_overflow(c->S[l], c->s[l], &c->S[l + 1]) ||
            __builtin_add_overflow(c->A[l], c->a[l], &c->A[l + 1]))
            c->sums_ok = false;
    j.layer_first = j.layer_last = UINT32_MAX;
    j.stage_embed = true;
    int rc = estimate(P, &j, &e, err);
    if (rc)
        return rc;
    c->es = e.step_bytes > e.static_bytes ? e.step_bytes : e.static_bytes;
    c->ea = e.per_sample_bytes;
    j.stage_embed = false;
    j.stage_head = true;
    if ((rc = estimate(P, &j, &e, err)))
        return rc;
    c->hs = e.step_bytes > e.static_bytes ? e.step_bytes : e.static_bytes;
    c->ha = e.per_sample_bytes;
    c->in_flight = job->mode != FG_MODE_SERVE && !P->naive_pp;
    return 0;
}

/* The slot of key in P->index (a multiplicative hash, then linear probing). */
static size_t index_slot(const struct planner *P, uint64_t key)
{
    size_t mask = P->cap_index - 1, i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & mask;
    while (P->index[i] && P->memo[P->index[i] - 1].key != key)
        i = (i + 1) & mask;
    return i;
}

/* The block costs kept for the layout job j, or NULL.  A plan over thousands of GPU counts
 * keeps thousands of them (the key holds DP under ZeRO): looked up by hash, not walked. */
static const struct stage_costs *costs_kept(const struct planner *P, const struct fg_job *j)
{
    if (!P->cap_index)
        return NULL;
    size_t i = index_slot(P, shape_key(j));
    return P->index[i] ? &P->memo[P->index[i] - 1] : NULL;
}

/* memo[n] indexed by its key (the index grown to stay at most half full); FG_E_NOMEM. */
static int index_add(struct planner *P, size_t n, struct fg_err *err)
{
    if (2 * (n + 1) > P->cap_index) {
        size_t cap = P->cap_index ? 2 * P->cap_index : 64;
        uint32_t *ni = calloc(cap, sizeof *ni);
        if (!ni)
            return fg_err_set(err, FG_E_NOMEM, "out of memory planning pipeline stages");
        free(P->index);
        P->index = ni;
        P->cap_index = cap;
        for (size_t k = 0; k < n; k++)
            P->index[index_slot(P, P->memo[k].key)] = (uint32_t)k + 1;
    }
    P->index[index_slot(P, P->memo[n].key)] = (uint32_t)n + 1;
    return 0;
}

/* Block costs for the layout job j, computed and kept (costs_kept has none). */
static int costs_for(struct planner *P, const struct fg_job *j, const struct stage_costs **out,
                     struct fg_err *err)
{
    uint64_t key = shape_key(j);
    if (P->n_memo == P->cap_memo) {
        size_t cap = P->cap_memo ? 2 * P->cap_memo : 16;
        struct stage_costs *nm = realloc(P->memo, cap * sizeof *nm);
        if (!nm)
            return fg_err_set(err, FG_E_NOMEM, "out of memory planning pipeline stages");
        P->memo = nm;
        P->cap_memo = cap;
    }
    struct stage_costs *c = &P->memo[P->n_memo];
    memset(c, 0, sizeof *c);
    /* one allocation: s, a, S, A, then run */
    c->s = malloc((4 * (size_t)P->layers + 2) * sizeof(uint64_t) + P->layers * sizeof(uint32_t));
    if (!c->s)
        return fg_err_set(err, FG_E_NOMEM, "out of memory planning pipeline stages");
    c->a = c->s + P->layers;
    c->S = c->a + P->layers;
    c->A = c->S + P->layers + 1;
    c->run = (uint32_t *)(c->A + P->layers + 1);
    int rc = block_costs(P, j, c, err);
    if (rc) {
        free(c->s);
        return rc;
    }
    c->key = key;
    if ((rc = index_add(P, P->n_memo, err))) {
        free(c->s);
        return rc;
    }
    P->n_memo++;
    *out = c;
    return 0;
}

/*
 * Whether no sum cut_fits forms for pp stages at micro-batch b can overflow: all of them
 * are at most the whole model's cost at the largest multiplier (b x pp) plus both sides'.
 * Then a stage's cost over blocks [l, e) is exactly fixed + (S[e] - S[l]) + (A[e] - A[l])
 * x b x inflight, and it grows with e.
 */
static bool sums_fit(const struct stage_costs *c, uint32_t layers, uint32_t pp, uint64_t b)
{
    uint64_t k, x, t;
    return c->sums_ok && !__builtin_mul_overflow(b, (uint64_t)pp, &k) &&
           !__builtin_mul_overflow(c->A[layers], k, &t) &&
           !__builtin_add_overflow(t, c->S[layers], &t) &&
           !__builtin_mul_overflow(c->ea, k, &x) && !__builtin_add_overflow(t, x, &t) &&
           !__builtin_add_overflow(t, c->es, &t) && !__builtin_mul_overflow(c->ha, b, &x) &&
           !__builtin_add_overflow(t, x, &t) && !__builtin_add_overflow(t, c->hs, &t);
}

/*
 * Can the blocks be cut into exactly pp non-empty stages with every stage <= bound?  In
 * training stage i holds pp - i micro-batches (1F1B), so a block costs more the earlier
 * its stage; served, every stage holds its cache once.
 *
 * The stages are placed from the last one back, each taking as many blocks as fit (and
 * leaving one for each earlier stage); the first takes what is left.  That answers
 * exactly: if any cut meets the bound, each stage of this one starts no later than that
 * cut's (induction from the last stage: the same stage over fewer blocks costs less), so
 * the first stage holds no more than that cut's first stage and meets the bound too.  So
 * meeting a bound is monotone in the bound and a bisection finds the smallest bound any
 * cut meets.  (Filling from the first stage is not exact: the stages it fills push a
 * block with a large per-sample cost onto a stage with more micro-batches in flight, and
 * a larger bound can then fail where a smaller one met.)
 *
 * gallop (sums_fit, and mostly single-block runs): each stage's start by galloping
 * search on the prefix sums.  Otherwise block by block, a run of equal blocks at a time,
 * in saturating arithmetic.  *peak: the largest stage's cost; *grow: the least bound at
 * which some stage would take one more block or the first stage would fit (every bound
 * under it gives the same cut).
 */
static bool cut_fits(const struct stage_costs *c, uint32_t layers, uint32_t pp, uint64_t b,
                     uint64_t bound, bool gallop, uint32_t *cut, uint64_t *peak, uint64_t *grow)
{
    uint32_t e = layers; /* the end of the stage being placed */
    cut[pp] = layers;
    *peak = 0;
    *grow = UINT64_MAX;
    for (uint32_t stage = pp; stage-- > 0;) {
        uint64_t k = fg__mul_sat(b, c->in_flight ? pp - stage : 1);
        uint64_t cost = fg__add_sat(stage == 0 ? fg__add_sat(c->es, fg__mul_sat(c->ea, k)) : 0,
                                stage == pp - 1 ? fg__add_sat(c->hs, fg__mul_sat(c->ha, b)) : 0);
        uint32_t l = e, first = stage; /* a block for each earlier stage */
        if (gallop) {
            /* the stage over [x, e) costs span(x), which grows as x goes back */
#define span(x) (cost + (c->S[e] - c->S[(x)]) + (c->A[e] - c->A[(x)]) * k)
            if (stage == 0) {
                l = 0;
            } else if (e > first && span(e - 1) <= bound) {
                /* galloping back from e - 1 (stages are often a block or two), then
                 * bisection: the smallest x >= first with span(x) <= bound */
                uint32_t hi = e - 1, lo = first, step = 1;
                while (hi > first) {
                    uint32_t x = hi - first > step ? hi - step : first;
                    if (span(x) > bound) {
                        lo = x + 1;
                        break;
                    }
                    hi = x;
                    step *= 2;
                }
                while (lo < hi) {
                    uint32_t mid = lo + (hi - lo) / 2;
                    if (span(mid) <= bound)
                        hi = mid;
                    else
                        lo = mid + 1;
                }
                l = hi;
            }
            if (stage && l > first) { /* one block more would cost */
                uint64_t more = span(l - 1);
                *grow = more < *grow ? more : *grow;
            }
            cost = span(l);
#undef span
        } else {
            while (l > first) {
                uint64_t add = fg__add_sat(c->s[l - 1], fg__mul_sat(c->a[l - 1], k));
                if (stage && fg__add_sat(cost, add) > bound) {
                    *grow = fg__add_sat(cost, add) < *grow ? fg__add_sat(cost, add) : *grow;
                    break;
                }
                /* Block l - 1 fits (or the first stage takes it anyway), and the blocks
                 * before it in its run cost the same add: take as many of them as the
                 * room left for earlier stages and the bound allow, at once. */
                uint64_t n = c->run[l - 1], room = l - first;
                if (n > room)
                    n = room;
                if (stage && add) {
                    uint64_t fit = (bound - cost) / add;
                    if (fit < n)
                        n = fit;
                }
                cost = fg__add_sat(cost, fg__mul_sat(n, add));
                l -= (uint32_t)n;
            }
        }
        if (l == e || cost > bound) {
            if (cost > bound) /* the first stage, or a stage whose fixed part is over */
                *grow = cost < *grow ? cost : *grow;
            return false;
        }
        cut[stage] = l;
        if (cost > *peak)
            *peak = cost;
        e = l;
    }
    return true;
}

static int eval_layout(struct planner *P, const struct fg_job *job, uint64_t usable,
                       const struct fg_plan_opts *o, struct fg_layout *L, bool *fits,
                       struct fg_err *err)
{
    struct fg_job j = *job;
    j.tp = L->tp;
    j.ep = L->ep;
    j.dp = L->dp;
    j.zero = L->zero;
    j.pp = L->pp;
    j.grad_accum = accum_of(job, o, L);
    *fits = false;
    double limit = (double)usable / o->fit.headroom;
    struct fg_estimate e;
    uint32_t layers = P->layers;
    if (L->pp == 1) {
        int rc = estimate(P, &j, &e, err);
        if (rc)
            return rc;
        L->cut[0] = 0;
        L->cut[1] = layers;
        L->stage_bytes[0] = L->peak_bytes = e.total_bytes;
        *fits = (double)e.total_bytes <= limit;
        return 0;
    }
    const struct stage_costs *c = costs_kept(P, &j);
    int rc;
    if (!c) {
        /* a shape no cut can fit is out before its blocks are costed (shape_floor) */
        if ((double)fg__plan_shape_floor_parts(P->m, P->parts, &j) > limit)
            return 0;
        if ((rc = costs_for(P, &j, &c, err)))
            return rc;
    }
    /* Lower bound: some stage holds at least 1/pp of the blocks' static bytes plus the
     * embedding and head sides, so when that share is over the limit no cut can fit and
     * the search below is skipped (same answer); the bisection starts from it. */
    uint64_t sides = 0;
    if (c->sums_ok) {
        sides = fg__add_sat(fg__add_sat(c->es, c->hs), c->S[layers]) / L->pp;
        if ((double)sides > limit)
            return 0;
    }
    /* The smallest bound some cut meets, by bisection (cut_fits answers exactly, so meeting
     * it is monotone in the bound).  A layout that misses at the limit is out at once, and
     * no bound under the blocks' and sides' static bytes over pp (some stage holds at
     * least that) can be met: the search starts there.  A cut that meets a bound meets its
     * own largest stage too, with the same cut (every stage still fits, none can take
     * more), so the search goes down to that stage; and a bound missed is missed up to the
     * least bound at which some stage takes one more block (the cut is the same below it),
     * so the search goes up to that.  The cut kept is the one at the smallest bound met. */
    uint64_t hi = (uint64_t)limit, b = j.batch, lo = 0, peak, grow;
    uint32_t cut[FG_PLAN_MAX_PP + 1];
    bool fast = 4 * c->runs > 3 * layers && sums_fit(c, layers, L->pp, b);
    if (!cut_fits(c, layers, L->pp, b, hi, fast, cut, &peak, &grow))
        return 0;
    hi = peak < hi ? peak : hi;
    memcpy(L->cut, cut, sizeof cut);
    if (c->sums_ok)
        lo = sides < hi ? sides : hi;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (cut_fits(c, layers, L->pp, b, mid, fast, cut, &peak, &grow)) {
            hi = peak;
            memcpy(L->cut, cut, sizeof cut);
        } else {
            lo = grow > mid && grow < hi ? grow : mid + 1;
        }
    }
    /* Exact estimate of every stage. */
    L->peak_bytes = 0;
    for (uint32_t s = 0; s < L->pp; s++) {
        j.layer_first = L->cut[s];
        j.layer_last = L->cut[s + 1];
        j.stage_embed = s == 0;
        j.stage_head = s == L->pp - 1;
        j.inflight = P->naive_pp ? 1 : L->pp - s;
        if ((rc = estimate(P, &j, &e, err)))
            return rc;
        L->stage_bytes[s] = e.total_bytes;
        if (e.total_bytes > L->peak_bytes)
            L->peak_bytes = e.total_bytes;
    }
    *fits = (double)L->peak_bytes <= limit;
    return 0;
}

/* Lower is preferred among layouts of the same GPU count: experts spread
 * by EP first (NeMo), then a plain layer split (the seeds' answer), then
 * TP inside a node, then TP x PP, then data-parallel sharding. */
static int layout_rank(const struct fg_layout *l)
{
    int r = 0;
    if (l->ep > 1)
        r -= 2;
    if (l->dp > 1 && l->ep == 1)
        r += 4 + (int)l->zero;
    if (l->tp > 1)
        r += l->pp > 1 ? 2 : 1;
    return r;
}

/* GPU count, then rank, then peak; equal ones in the order the search tried them (TP, PP,
 * EP, ZeRO ascending), whatever order they were evaluated in. */
static int cmp_layout(const void *a, const void *b)
{
    const struct fg_layout *x = a, *y = b;
    if (x->gpus != y->gpus)
        return x->gpus < y->gpus ? -1 : 1;
    int rx = layout_rank(x), ry = layout_rank(y);
    if (rx != ry)
        return rx < ry ? -1 : 1;
    if (x->peak_bytes != y->peak_bytes)
        return x->peak_bytes < y->peak_bytes ? -1 : 1;
    const uint32_t kx[4] = {x->tp, x->pp, x->ep, x->zero}, ky[4] = {y->tp, y->pp, y->ep, y->zero};
    for (int i = 0; i < 4; i++)
        if (kx[i] != ky[i])
            return kx[i] < ky[i] ? -1 : 1;
    return 0;
}

/* One (TP, PP, EP) shape of a GPU count; rank: its layout_rank at the job's ZeRO stage,
 * the least it can have (a higher stage only adds to it). */
struct shape {
    uint32_t tp, pp, ep, dp, order;
    int rank;
};

static int cmp_shape(const void *a, const void *b)
{
    const struct shape *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * Whether a layout of rank r can still reach the plan (the options are sorted by count,
 * rank, peak): at the smallest count with a fit, five found there with a lower rank keep
 * it out; at a larger count, where only the best layout is shown, one does.  So shapes are
 * tried in rank order and the search of a count stops at the first shape kept out.
 */
static bool kept_out(const struct fg_layout *found, size_t n, int r, bool first_count)
{
    size_t lower = 0;
    for (size_t i = 0; i < n; i++)
        lower += layout_rank(&found[i]) < r;
    return lower >= (first_count ? 5u : 1u);
}

/* v with room for element n (doubling), or NULL when out of memory (v stays valid). */
static void *grow(void *v, size_t n, size_t *cap, size_t size)
{
    if (n < *cap)
        return v;
    size_t c = *cap ? 2 * *cap : 32;
    void *nv = realloc(v, c * size);
    if (nv)
        *cap = c;
    return nv;
}

/*
 * A family: one (TP, PP, EP) shape at one ZeRO stage, over every DP >= 2 (the layouts of
 * counts above the search's jump_from GPUs).  Its estimate per GPU does not grow with DP:
 * ZeRO shards the parameters' states over more ranks, routed experts over DP / EP, the
 * accumulation a global batch asks for falls, and what is not sharded (activations,
 * logits, buffers, DDP's buckets from DP = 2 on) stays; so a family that misses at some DP
 * misses at every smaller one, and one that fits fits at every larger one.  The search
 * keeps, per family, the DPs it knows to miss and to fit, and goes from a count to the next
 * one where some family can fit (next_jump) instead of through every count: a plan up to
 * 16,384 GPUs evaluates the counts that matter, and one that nothing holds ends once every
 * family misses at its largest DP.
 */
struct family {
    uint64_t key;               /* fam_key: TP, PP, EP, ZeRO */
    uint32_t tp, pp, ep, zero;
    uint32_t step;              /* its DPs are the multiples of step (EP, whole nodes) */
    uint32_t dp_top;            /* the largest DP within the search's GPUs */
    uint32_t fail_upto;         /* every DP in [2, fail_upto] misses */
    uint32_t fit_from;          /* every DP from fit_from on fits; UINT32_MAX none known */
};

static uint64_t fam_key(uint32_t tp, uint32_t pp, uint32_t ep, uint32_t zero)
{
    return (uint64_t)(tp & 0xffff) << 40 | (uint64_t)(pp & 0xff) << 32 |
           (uint64_t)(ep & 0xffffff) << 8 | (zero & 0xff);
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/*
 * A plan's search: what the job's framework can run and the dimensions the job has fixed,
 * the shapes of the GPU count being searched, and every layout found so far that fits and
 * can still reach the options (kept_out), none dropped.
 */
struct search {
    const struct fg_model *m;
    const struct fg_job *job;
    const struct fg_plan_opts *o;
    uint64_t usable;
    unsigned allow;             /* FG_PLAN_* the framework runs */
    uint32_t layers, gpn, tp_max, pp_max, ep_max;
    struct shape *shapes;
    size_t n_shapes, cap_shapes;
    struct fg_layout *found;
    size_t nfound, cap_found;
    uint32_t first_g;           /* the smallest count with a fit; 0 before one */
    uint32_t epv[64];           /* the EP sizes: divisors of the experts (1 for a dense model) */
    size_t n_epv;
    /* Above jump_from GPUs the search goes by families (see there): those of the counts
     * beyond it, by key in an open-addressed table (fam_cap a power of two; 0 unused). */
    uint32_t jump_from;
    struct family *fam;         /* the families, n_fam of them */
    size_t n_fam;
    uint32_t *fam_index;        /* open addressing by key: i + 1 into fam, 0 empty */
    size_t fam_cap;             /* a power of two, at least twice n_fam's bound */
    uint32_t *live;             /* families not yet known to miss everywhere (next_jump) */
    size_t n_live;
    uint32_t *ones;             /* the counts above jump_from of a shape with DP = 1 (TP x
                                   PP), ascending: no family has them */
    size_t n_ones;
};

/* The (TP, PP, EP) shapes of g GPUs the job may take, in s->shapes by rank; FG_E_NOMEM. */
static int list_shapes(struct search *s, struct planner *P, uint32_t g, struct fg_err *err)
{
    const struct fg_plan_opts *o = s->o;
    s->n_shapes = 0;
    for (uint32_t tp = 1; tp <= g && tp <= s->gpn && tp <= s->tp_max; tp++) {
        if (g % tp || (o->fix_tp && tp != o->fix_tp) || !planner_tp_valid(P, tp))
            continue;
        for (uint32_t pp = 1; pp <= g / tp && pp <= s->layers && pp <= FG_PLAN_MAX_PP &&
                              pp <= s->pp_max; pp++) {
            if ((g / tp) % pp || (o->fix_pp && pp != o->fix_pp))
                continue;
            uint32_t dp = g / tp / pp;
            if (o->fix_dp && dp != o->fix_dp)
                continue;
            /* a naive layer split runs in one process: no data parallel beside it, and
             * every stage on one node (transformers device_map places modules on the
             * process's own devices: modeling_utils.py, accelerate big_modeling.py) */
            if (o->naive_pp && pp > 1 && (dp > 1 || s->job->zero || tp * pp > s->gpn))
                continue;
            /* The planner's own EP divides DP with TP = 1 (NeMo Customizer's rule); a layout
             * the job declares may also combine TP and EP (Megatron-Core) or spread the
             * experts over TP x DP (vLLM's expert parallel). */
            uint32_t ep_top = o->fix_ep ? o->fix_ep : dp < s->ep_max ? dp : s->ep_max;
            /* EP divides the experts (s->epv: their divisors; 1 alone for a dense model) */
            for (size_t ei = 0; ei < s->n_epv && s->epv[ei] <= ep_top; ei++) {
                uint32_t ep = s->epv[ei];
                /* a declared EP spreads the experts over DP (Megatron) or TP x DP (vLLM) */
                if ((o->fix_ep && (ep != o->fix_ep || (dp % ep && ((uint64_t)tp * dp) % ep))) ||
                    (!o->fix_ep && (dp % ep || (ep > 1 && tp > 1))) ||
                    (ep > 1 && (!s->m->experts || s->m->experts % ep)))
                    continue;
                struct shape *ns = grow(s->shapes, s->n_shapes, &s->cap_shapes, sizeof *ns);
                if (!ns)
                    return fg_err_set(err, FG_E_NOMEM, "out of memory planning layouts");
                s->shapes = ns;
                struct fg_layout min = {.tp = tp, .pp = pp, .ep = ep, .dp = dp,
                                        .zero = s->job->zero};
                s->shapes[s->n_shapes] = (struct shape){.tp = tp, .pp = pp, .ep = ep, .dp = dp,
                                                        .order = (uint32_t)s->n_shapes,
                                                        .rank = layout_rank(&min)};
                s->n_shapes++;
            }
        }
    }
    if (s->n_shapes) /* no shape: s->shapes may be NULL, which qsort may not take */
        qsort(s->shapes, s->n_shapes, sizeof *s->shapes, cmp_shape);
    return 0;
}

/* Whether the framework's table (o->fw) runs layout L on g GPUs, nodes of s->gpn. */
static bool runs_at(const struct search *s, const struct fg_layout *L, uint32_t g)
{
    if (!s->o->fw)
        return true;
    struct fg_run_shape rs = {.tp = L->tp, .pp = L->pp, .ep = L->ep, .cp = s->job->cp,
                              .dp = L->dp, .zero = L->zero,
                              .per_node = g < s->gpn ? g : s->gpn,
                              .nodes = (g + s->gpn - 1) / s->gpn, .experts = s->m->experts,
                              .seq_len = s->job->seq_len,
                              .serve = s->job->mode == FG_MODE_SERVE};
    return fg_framework_runs(s->o->fw, &rs, NULL, 0);
}

/* The slot of key in s->fam_index: its own, or the empty one where it goes. */
static size_t fam_slot(const struct search *s, uint64_t key)
{
    size_t mask = s->fam_cap - 1, i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & mask;
    while (s->fam_index[i] && s->fam[s->fam_index[i] - 1].key != key)
        i = (i + 1) & mask;
    return i;
}

static struct family *fam_find(const struct search *s, uint64_t key)
{
    if (!s->fam_cap)
        return NULL;
    size_t i = fam_slot(s, key);
    return s->fam_index[i] ? &s->fam[s->fam_index[i] - 1] : NULL;
}

/* Whether layout L (its shape, DP and ZeRO set) fits: eval_layout on a copy. */
static int probe(struct search *s, struct planner *P, const struct family *f, uint32_t dp,
                 bool *fits, struct fg_err *err)
{
    struct fg_layout L;
    L.tp = f->tp;
    L.pp = f->pp;
    L.ep = f->ep;
    L.dp = dp;
    L.zero = f->zero;
    L.cp = s->job->cp;
    L.gpus = f->tp * f->pp * dp;
    L.micro_batch = s->job->batch;
    return eval_layout(P, s->job, s->usable, s->o, &L, fits, err);
}

/* After a miss at f->fail_upto: the DP where f starts to fit.  Its largest DP first (a
 * family that misses there is out), then galloping up from the miss (the next counts are
 * the likely ones) and bisection between the last miss and the first fit. */
static int refine(struct search *s, struct planner *P, struct family *f, struct fg_err *err)
{
    bool fits;
    int rc;
    if (f->fit_from == UINT32_MAX) {
        if (f->fail_upto >= f->dp_top)
            return 0;
        if ((rc = probe(s, P, f, f->dp_top, &fits, err)))
            return rc;
        if (!fits) {
            f->fail_upto = f->dp_top;
            return 0;
        }
        f->fit_from = f->dp_top;
    }
    for (uint64_t d = f->step; (uint64_t)f->fail_upto + d < f->fit_from; d *= 2) {
        uint32_t at = f->fail_upto + (uint32_t)d;
        if ((rc = probe(s, P, f, at, &fits, err)))
            return rc;
        if (fits) {
            f->fit_from = at;
            break;
        }
        f->fail_upto = at;
    }
    while (f->fit_from - f->fail_upto > f->step) {
        uint32_t mid = f->fail_upto + (f->fit_from - f->fail_upto) / f->step / 2 * f->step;
        if (mid <= f->fail_upto)
            mid = f->fail_upto + f->step;
        if ((rc = probe(s, P, f, mid, &fits, err)))
            return rc;
        if (fits)
            f->fit_from = mid;
        else
            f->fail_upto = mid;
    }
    return 0;
}

/* Room for n families (the index kept at most half full); FG_E_NOMEM. */
static int fam_reserve(struct search *s, size_t n, struct fg_err *err)
{
    size_t cap = 64;
    while (cap < 2 * n)
        cap *= 2;
    s->fam = malloc((n ? n : 1) * sizeof *s->fam);
    s->fam_index = calloc(cap, sizeof *s->fam_index);
    s->live = malloc((n ? n : 1) * sizeof *s->live);
    if (!s->fam || !s->fam_index || !s->live)
        return fg_err_set(err, FG_E_NOMEM, "out of memory planning layouts");
    s->fam_cap = cap;
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/*
 * Every family of the counts above s->jump_from (whole nodes, within the framework's
 * table and the dimensions the job fixed), those that cannot fit at their largest DP
 * marked so: one estimate per (TP, EP, ZeRO) whose pipeline floor over the most stages
 * misses at the largest DP any of its shapes has (fg__plan_shape_floor: a stage holds at
 * least 1/PP of the whole model's estimate at the same TP, EP, DP and ZeRO, and that
 * shrinks with DP).  The rest are found out when a count's search first misses with them
 * (refine).
 */
static int families(struct search *s, struct planner *P, struct fg_err *err)
{
    const struct fg_plan_opts *o = s->o;
    const struct fg_job *job = s->job;
    const double limit = (double)s->usable / o->fit.headroom;
    uint32_t z_top = !o->fix_zero && (s->allow & FG_PLAN_ZERO) ? 3u : job->zero;
    uint32_t pp_lim = s->layers < FG_PLAN_MAX_PP ? s->layers : FG_PLAN_MAX_PP;
    if (pp_lim > s->pp_max)
        pp_lim = s->pp_max;
    if (o->naive_pp)
        pp_lim = 1; /* a layer split has no DP beside it */
    size_t most = 0;
    for (uint32_t tp = 1; tp <= s->gpn && tp <= s->tp_max; tp++)
        most += (size_t)pp_lim * s->n_epv * (z_top - job->zero + 1);
    int rc = fam_reserve(s, most, err);
    if (rc)
        return rc;
    /* the counts of TP x PP alone (DP = 1) above jump_from: searched as they are */
    s->ones = malloc(((size_t)s->gpn * FG_PLAN_MAX_PP + 1) * sizeof *s->ones);
    if (!s->ones)
        return fg_err_set(err, FG_E_NOMEM, "out of memory planning layouts");
    if (!o->fix_dp || o->fix_dp == 1)
        for (uint32_t tp = 1; tp <= s->gpn && tp <= s->tp_max; tp++)
            for (uint32_t pp = 1; pp <= s->layers && pp <= FG_PLAN_MAX_PP && pp <= s->pp_max;
                 pp++) {
                uint32_t g = tp * pp;
                if (g > s->jump_from && g <= o->max_gpus && (!o->fix_tp || tp == o->fix_tp) &&
                    (!o->fix_pp || pp == o->fix_pp) && (o->any_count || g % s->gpn == 0))
                    s->ones[s->n_ones++] = g;
            }
    if (s->n_ones)
        qsort(s->ones, s->n_ones, sizeof *s->ones, cmp_u32);
    for (uint32_t tp = 1; tp <= s->gpn && tp <= s->tp_max; tp++) {
        if ((o->fix_tp && tp != o->fix_tp) || !planner_tp_valid(P, tp))
            continue;
        for (size_t ei = 0; ei < s->n_epv; ei++) {
            uint32_t ep = s->epv[ei];
            if (ep > s->ep_max && ep > 1)
                break;
            if ((o->fix_ep && ep != o->fix_ep) || (!o->fix_ep && ep > 1 && tp > 1))
                continue;
            /* DP steps: EP divides DP (a declared EP: DP or TP x DP) */
            uint32_t ep_step = o->fix_ep ? ep / (uint32_t)gcd64(ep, tp) : ep;
            for (uint32_t z = job->zero; z <= z_top; z++) {
                /* the group's floor: PP = 1 at the largest DP of any of its shapes */
                uint32_t dp_big = o->max_gpus / tp;
                dp_big -= dp_big % ep_step;
                double w = 0;
                if (dp_big >= 2 && !o->fix_dp) {
                    struct fg_job j = *job;
                    j.tp = tp;
                    j.ep = ep;
                    j.dp = dp_big;
                    j.zero = z;
                    j.pp = 1;
                    struct fg_layout G = {.dp = dp_big};
                    j.grad_accum = accum_of(job, o, &G);
                    w = (double)fg__plan_shape_floor_parts(P->m, P->parts, &j);
                }
                for (uint32_t pp = 1; pp <= pp_lim; pp++) {
                    if (o->fix_pp && pp != o->fix_pp)
                        continue;
                    uint32_t tpp = tp * pp;
                    uint32_t node = o->any_count ? 1 : s->gpn / (uint32_t)gcd64(s->gpn, tpp);
                    uint64_t step = (uint64_t)ep_step / gcd64(ep_step, node) * node;
                    if (step > UINT32_MAX / 2)
                        continue;
                    uint32_t top = o->max_gpus / tpp;
                    top -= top % (uint32_t)step;
                    if (o->fix_dp)
                        top = o->fix_dp % step || o->fix_dp > o->max_gpus / tpp ? 0 : o->fix_dp;
                    if (top < 2 || (uint64_t)tpp * top <= s->jump_from)
                        continue;
                    struct fg_layout L = {.tp = tp, .pp = pp, .ep = ep, .dp = top, .zero = z};
                    if (!runs_at(s, &L, tpp * top))
                        continue;
                    struct family f = {.key = fam_key(tp, pp, ep, z), .tp = tp, .pp = pp,
                                       .ep = ep, .zero = z, .step = (uint32_t)step,
                                       .dp_top = top, .fail_upto = 1,
                                       .fit_from = UINT32_MAX};
                    if (o->fix_dp)
                        f.fail_upto = top - 1; /* one DP: top, probed below */
                    if (w / pp > limit)
                        f.fail_upto = top; /* the group's floor misses */
                    s->fam_index[fam_slot(s, f.key)] = (uint32_t)s->n_fam + 1;
                    if (f.fail_upto < f.dp_top)
                        s->live[s->n_live++] = (uint32_t)s->n_fam;
                    s->fam[s->n_fam++] = f;
                }
            }
        }
    }
    return 0;
}

/* The next count above g where some layout can fit: each family's first count past its
 * known misses (and past g), on its DP steps, and the next count of a shape without DP;
 * 0 when none is left. */
static uint32_t next_jump(struct search *s, uint32_t g)
{
    uint64_t best = 0;
    for (size_t i = 0; i < s->n_live; i++) {
        const struct family *f = &s->fam[s->live[i]];
        if (f->fail_upto >= f->dp_top) { /* out: off the list */
            s->live[i--] = s->live[--s->n_live];
            continue;
        }
        uint64_t tpp = (uint64_t)f->tp * f->pp;
        uint64_t dp = g / tpp + 1; /* the first DP whose count is above g */
        if (dp <= f->fail_upto)
            dp = f->fail_upto + 1;
        dp = (dp + f->step - 1) / f->step * f->step;
        if (dp > f->dp_top)
            continue;
        if (!best || tpp * dp < best)
            best = tpp * dp;
    }
    for (size_t i = 0; i < s->n_ones; i++)
        if (s->ones[i] > g) {
            if (!best || s->ones[i] < best)
                best = s->ones[i];
            break;
        }
    return (uint32_t)best;
}

/* The layouts of g GPUs that fit, into s->found: the shapes in rank order, each at the
 * job's ZeRO stage or the lowest above it that fits, until kept_out says no later one can
 * reach the plan.  eval_layout's errors, FG_E_NOMEM. */
static int search_count(struct search *s, struct planner *P, uint32_t g, struct fg_err *err)
{
    const struct fg_job *job = s->job;
    const struct fg_plan_opts *o = s->o;
    size_t before = s->nfound;
    for (size_t k = 0; k < s->n_shapes; k++) {
        const struct shape *sh = &s->shapes[k];
        /* the layouts of this count found so far (none yet: s->found may still be NULL,
         * and NULL + 0 is undefined in C) */
        const struct fg_layout *mine = s->nfound > before ? s->found + before : NULL;
        if (kept_out(mine, s->nfound - before, sh->rank, !s->first_g))
            break;
        /* ZeRO only matters with dp > 1: try the job's stage, then up. */
        uint32_t z_top = sh->dp > 1 && !o->fix_zero && (s->allow & FG_PLAN_ZERO) ? 3u
                                                                                  : job->zero;
        for (uint32_t z = job->zero; z <= z_top; z++) {
            /* not an initializer: that clears the 0.8 KB of per-stage arrays for
             * every layout tried (5% of a Qwen3-235B plan); a fit's are cleared
             * past its stages below */
            struct fg_layout L;
            L.gpus = g;
            L.tp = sh->tp;
            L.pp = sh->pp;
            L.ep = sh->ep;
            L.dp = sh->dp;
            L.zero = z;
            L.cp = job->cp; /* the planner keeps the job's context parallel as it is */
            L.micro_batch = job->batch;
            L.gen_gpus = 0;
            if (kept_out(s->nfound > before ? s->found + before : NULL, s->nfound - before,
                         layout_rank(&L), !s->first_g))
                break;
            if (!runs_at(s, &L, g))
                continue;
            /* above jump_from: what the family is known to do at this DP */
            struct family *f = g > s->jump_from && L.dp >= 2
                                   ? fam_find(s, fam_key(L.tp, L.pp, L.ep, z))
                                   : NULL;
            if (f && L.dp <= f->fail_upto)
                continue;
            bool fits;
            int rc = eval_layout(P, job, s->usable, o, &L, &fits, err);
            if (rc)
                return rc;
            if (f && !fits && f->fit_from > L.dp) {
                f->fail_upto = L.dp;
                if ((rc = refine(s, P, f, err)))
                    return rc;
            } else if (f && fits && L.dp < f->fit_from) {
                f->fit_from = L.dp;
            }
            if (!fits)
                continue;
            L.grad_accum = o->global_batch ? accum_of(job, o, &L)
                                           : job->grad_accum ? job->grad_accum : 1;
            memset(L.cut + L.pp + 1, 0, (FG_PLAN_MAX_PP - L.pp) * sizeof L.cut[0]);
            memset(L.stage_bytes + L.pp, 0, (FG_PLAN_MAX_PP - L.pp) * sizeof L.stage_bytes[0]);
            struct fg_layout *nf = grow(s->found, s->nfound, &s->cap_found, sizeof *nf);
            if (!nf)
                return fg_err_set(err, FG_E_NOMEM, "out of memory planning layouts");
            s->found = nf;
            s->found[s->nfound++] = L;
            break;
        }
    }
    return 0;
}

/* The plan from what the search found: best first, up to 5 shapes at the smallest count,
 * then the best of each larger count; or why nothing holds the job. */
static void plan_of(struct search *s, struct fg_plan *out)
{
    const struct fg_plan_opts *o = s->o;
    if (!s->nfound) {
        out->status = FG_PLAN_IMPOSSIBLE;
        char tpb[32] = "", ppb[40] = "";
        if (s->tp_max > 1)
            snprintf(tpb, sizeof tpb, "TP <= %u, ", s->gpn);
        if (s->pp_max > 1 && o->naive_pp)
            snprintf(ppb, sizeof ppb, "PP <= %u stages on one node, ",
                     s->layers < s->gpn ? s->layers : s->gpn);
        else if (s->pp_max > 1)
            snprintf(ppb, sizeof ppb, "PP <= %u stages, ", s->layers);
        snprintf(out->why, sizeof out->why,
                 "no layout of up to %u GPUs (%s%s%sDP%s) holds this job under %.2fx headroom",
                 o->max_gpus, tpb, ppb, s->ep_max > 1 ? "EP, " : "",
                 (s->allow & FG_PLAN_ZERO) ? " with ZeRO-3" : "", o->fit.headroom);
        return;
    }
    qsort(s->found, s->nfound, sizeof s->found[0], cmp_layout);
    for (size_t i = 0; i < s->nfound && out->n < FG_PLAN_MAX_OPTIONS; i++) {
        bool take = s->found[i].gpus == s->first_g
                        ? out->n < 5
                        : (out->n == 0 || out->options[out->n - 1].gpus != s->found[i].gpus);
        if (take)
            out->options[out->n++] = s->found[i];
    }
    out->status = FG_PLAN_FOUND;
}

int fg_plan_layouts(const struct fg_model *m, const struct fg_job *job, uint64_t usable,
                    const struct fg_plan_opts *o, struct fg_plan *out, struct fg_err *err)
{
    memset(out, 0, sizeof *out);
    out->usable_bytes = usable;
    uint32_t layers = fg_model_main_layers(m);
    if (layers == 0)
        return fg_err_set(err, FG_E_INVAL, "%s has no blocks to place", m->id);
    /* what the job's framework can run, and the dimensions the job has fixed */
    const unsigned allow = o->restrict_layouts ? o->layouts : ~0u;
    struct search s = {.m = m, .job = job, .o = o, .usable = usable, .allow = allow,
                       .layers = layers, .gpn = o->gpus_per_node ? o->gpus_per_node : 8,
                       .tp_max = (allow & FG_PLAN_TP) ? UINT32_MAX : 1,
                       .pp_max = (allow & FG_PLAN_PP) ? UINT32_MAX : 1,
                       .ep_max = (allow & FG_PLAN_EP) ? UINT32_MAX : 1};
    struct planner P;
    int rc = planner_init(&P, m, layers, err);
    if (rc)
        goto out;
    P.naive_pp = o->naive_pp;
    P.serve = job->mode == FG_MODE_SERVE;
    /* the EP sizes: the divisors of the experts */
    s.epv[s.n_epv++] = 1;
    for (uint64_t e = 2; m->experts && e <= m->experts && s.n_epv < 64; e++)
        if (m->experts % e == 0)
            s.epv[s.n_epv++] = (uint32_t)e;
    /* Up to FG_PLAN_JUMP_FROM GPUs (and within a node) every count is searched; above it,
     * by families (struct family), from one count where something can fit to the next. */
    s.jump_from = s.gpn > FG_PLAN_JUMP_FROM ? s.gpn : FG_PLAN_JUMP_FROM;
    if (getenv("FG_PLAN_NO_JUMP"))
        s.jump_from = UINT32_MAX; /* the count-by-count search (tests/test_plan.c) */
    uint32_t counts_with_fit = 0;
    const double limit = (double)usable / o->fit.headroom;
    for (uint32_t g = o->min_gpus ? o->min_gpus : 1; g <= o->max_gpus; g++) {
        if (g > s.jump_from) {
            /* the families of the counts beyond, once; then the next count one can fit */
            if (!s.fam_cap && (rc = families(&s, &P, err)))
                goto out;
            uint32_t next = next_jump(&s, g - 1);
            if (!next || next > o->max_gpus)
                break;
            g = next;
        }
        /* Counts a scheduler hands out for such jobs: powers of two inside a
         * node (TP and EP sizes are powers of two in practice), whole nodes beyond. */
        if (!o->any_count && (g > s.gpn ? g % s.gpn != 0 : (g & (g - 1)) != 0))
            continue;
        size_t before = s.nfound;
        if ((double)fg__plan_count_floor_parts(m, P.parts, job, g) > limit)
            continue;
        if ((rc = list_shapes(&s, &P, g, err)) || (rc = search_count(&s, &P, g, err)))
            goto out;
        if (s.nfound > before) {
            if (!s.first_g)
                s.first_g = g;
            if (++counts_with_fit >= 3)
                break;
        }
    }
    plan_of(&s, out);
out:
    free(s.found);
    free(s.shapes);
    free(s.fam);
    free(s.fam_index);
    free(s.live);
    free(s.ones);
    planner_free(&P);
    return rc;
}
