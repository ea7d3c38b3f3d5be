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
