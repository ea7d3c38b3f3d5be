/*
 * plan_even.c - a framework's own even stage split (plan.h fg_plan_even_cut), for the
 * layout a job declares: the planner cuts for the least memory, torchtitan cuts by count.
 */
#include "plan/plan.h"

bool fg_plan_even_cut(uint32_t layers, uint32_t pp, uint32_t in_w, uint32_t out_w,
                      uint32_t *cut)
{
    uint64_t eff = (uint64_t)layers + in_w + out_w;
    if (!pp || pp > FG_PLAN_MAX_PP || pp > eff)
        return false;
    uint64_t per = eff / pp, extra = eff % pp;
    if (per <= in_w || per <= out_w) /* a first or last stage with no block */
        return false;
    uint32_t at = 0, c[FG_PLAN_MAX_PP + 1];
    c[0] = 0;
    for (uint32_t s = 0; s < pp; s++) {
        uint64_t n = per + (s < extra);
        if (s == 0)
            n -= in_w;
        if (s == pp - 1)
            n -= out_w;
        at += (uint32_t)n;
        c[s + 1] = at;
    }
    if (c[pp] != layers)
        return false;
    for (uint32_t s = 0; s <= pp; s++)
        cut[s] = c[s];
    return true;
}

/* The chunk forwards a rank keeps at its peak (plan.h fg_plan_pp_rank), for n micro-batches
 * over pp ranks of v chunks each. */
static uint64_t pp_in_flight(enum fg_pp_schedule s, uint64_t pp, uint64_t v, uint64_t n,
                             uint64_t r)
{
    switch (s) {
    case FG_PP_GPIPE:
        return n;
    case FG_PP_LOOPED_BFS:
        return n * v;
    case FG_PP_INTERLEAVED_1F1B: {
        uint64_t rounds = n / pp > 1 ? n / pp : 1, per_round = n / rounds;
        uint64_t w = (v - 1) * per_round + 2 * (pp - 1 - r);
        return w < n * v ? w + 1 : n * v; /* each steady step runs its forward first */
    }
    case FG_PP_1F1B:
    default:
        return n < pp - r ? n : pp - r; /* then one backward before each forward */
    }
}

bool fg_plan_pp_rank(const struct fg_job *job, uint32_t layers, uint32_t pp, uint32_t rank,
                     uint32_t *first, uint32_t *last, bool *embed, bool *head,
                     uint32_t *chunks, uint32_t *inflight)
{
    bool looped = job->pp_schedule == FG_PP_INTERLEAVED_1F1B ||
                  job->pp_schedule == FG_PP_LOOPED_BFS;
    uint32_t v = looped ? 2 : 1, cut[FG_PLAN_MAX_PP + 1];
    if (!pp || rank >= pp || pp > FG_PLAN_MAX_PP / v ||
        !fg_plan_even_cut(layers, pp * v, 1, 1, cut))
        return false;
    uint32_t blocks = 0;
    for (uint32_t k = 0; k < v; k++)
        blocks += cut[rank + k * pp + 1] - cut[rank + k * pp];
    *first = cut[rank] + blocks <= layers ? cut[rank] : layers - blocks;
    *last = *first + blocks;
    *embed = rank == 0;
    *head = rank == pp - 1;
    *chunks = v;
    uint64_t n = job->pp_microbatches ? job->pp_microbatches : (uint64_t)pp * v;
    uint64_t f = pp_in_flight(job->pp_schedule, pp, v, n, rank);
    *inflight = f > UINT32_MAX ? UINT32_MAX : (uint32_t)f;
    return true;
}
