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
#include "plan/plan_int.h"

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
uint32_t fg__plan_accum_of(const struct fg_job *job, const struct fg_plan_opts *o,
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
int fg__planner_init(struct planner *P, const struct fg_model *m, uint32_t layers,
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

void fg__planner_free(struct planner *P)
{
    for (size_t i = 0; i < P->n_memo; i++)
        free(P->memo[i].s);
    free(P->memo);
    free(P->index);
    free(P->rep);
    fg__parts_free(P->parts);
}

/* A totals-only estimate with the plan's block parts: the same bytes, fewer blocks counted. */
int fg__planner_estimate(struct planner *P, const struct fg_job *j, struct fg_estimate *e,
                         struct fg_err *err)
{
    return fg__memory_estimate_parts(P->m, j, e, P->parts, err);
}

bool fg__planner_tp_valid(struct planner *P, uint32_t tp)
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
        if (P->rep[l] != l) { /* identical to an earlier block (fg__planner_init) */
            c->s[l] = c->s[P->rep[l]];
            c->a[l] = c->a[P->rep[l]];
            continue;
        }
        j.layer_first = l;
        j.layer_last = l + 1;
        int rc = fg__planner_estimate(P, &j, &e, err);
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
    int rc = fg__planner_estimate(P, &j, &e, err);
    if (rc)
        return rc;
    c->es = e.step_bytes > e.static_bytes ? e.step_bytes : e.static_bytes;
    c->ea = e.per_sample_bytes;
    j.stage_embed = false;
    j.stage_head = true;
    if ((rc = fg__planner_estimate(P, &j, &e, err)))
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

int fg__plan_eval_layout(struct planner *P, const struct fg_job *job, uint64_t usable,
                         const struct fg_plan_opts *o, struct fg_layout *L, bool *fits,
                         struct fg_err *err)
{
    struct fg_job j = *job;
    j.tp = L->tp;
    j.ep = L->ep;
    j.dp = L->dp;
    j.zero = L->zero;
    j.pp = L->pp;
    j.grad_accum = fg__plan_accum_of(job, o, L);
    *fits = false;
    double limit = (double)usable / o->fit.headroom;
    struct fg_estimate e;
    uint32_t layers = P->layers;
    if (L->pp == 1) {
        int rc = fg__planner_estimate(P, &j, &e, err);
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
        if ((rc = fg__planner_estimate(P, &j, &e, err)))
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
int fg__plan_layout_rank(const struct fg_layout *l)
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
int fg__plan_cmp_layout(const void *a, const void *b)
{
    const struct fg_layout *x = a, *y = b;
    if (x->gpus != y->gpus)
        return x->gpus < y->gpus ? -1 : 1;
    int rx = fg__plan_layout_rank(x), ry = fg__plan_layout_rank(y);
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


int fg__plan_cmp_shape(const void *a, const void *b)
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
bool fg__plan_kept_out(const struct fg_layout *found, size_t n, int r, bool first_count)
{
    size_t lower = 0;
    for (size_t i = 0; i < n; i++)
        lower += fg__plan_layout_rank(&found[i]) < r;
    return lower >= (first_count ? 5u : 1u);
}

