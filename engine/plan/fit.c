#include "plan/fit.h"

#include <math.h>

#include "util/sat.h"

void fg_fit_opts_default(struct fg_fit_opts *o)
{
    o->headroom = 1.15;
    o->conservative = 1.43;
    o->context_bytes = FG_CUDA_CONTEXT_BYTES;
}

uint64_t fg_fit_usable(uint64_t marketed_gb, uint64_t driver_bytes, const struct fg_fit_opts *o)
{
    uint64_t card = driver_bytes ? driver_bytes : marketed_gb * 1000000000ull;
    return card > o->context_bytes ? card - o->context_bytes : 0;
}

uint64_t fg_estimate_accum_at(const struct fg_estimate *e, uint64_t mb)
{
    uint64_t t = fg_estimate_at(e, mb);
    if (mb < e->batch && e->accum_bytes) {
        uint64_t a = fg__add_sat(fg__add_sat(e->static_bytes, e->accum_bytes),
                                 fg__mul_sat(e->per_sample_bytes, mb));
        t = a > t ? a : t;
    }
    return t;
}

static uint64_t max_batch_over(const struct fg_estimate *e, uint64_t usable, double headroom,
                               uint64_t extra)
{
    if ((double)e->step_bytes * headroom > (double)usable)
        return 0;
    double budget = (double)usable / headroom - (double)e->static_bytes - (double)extra;
    if (budget < (double)e->per_sample_bytes)
        return 0;
    if (e->per_sample_bytes == 0)
        return 1u << 20; /* nothing grows with the batch */
    double b = floor(budget / (double)e->per_sample_bytes);
    return b > (double)(1u << 20) ? (1u << 20) : (uint64_t)b;
}

uint64_t fg_fit_max_batch(const struct fg_estimate *e, uint64_t usable, double headroom)
{
    uint64_t b = max_batch_over(e, usable, headroom, 0);
    if (b < e->batch && e->accum_bytes) {
        b = max_batch_over(e, usable, headroom, e->accum_bytes);
        b = b < e->batch ? b : e->batch - 1;
    }
    return b;
}

void fg_fit_card(const struct fg_estimate *e, uint64_t usable, const struct fg_fit_opts *o,
                 struct fg_fit *out)
{
    out->usable_bytes = usable;
    out->max_batch = fg_fit_max_batch(e, usable, o->headroom);
    out->need_bytes = (uint64_t)((double)e->total_bytes * o->headroom);
    bool ok = (double)e->total_bytes * o->headroom <= (double)usable;
    bool safe = (double)e->total_bytes * o->conservative <= (double)usable;
    out->verdict = ok ? (safe ? FG_FIT_FITS : FG_FIT_BORDERLINE) : FG_FIT_SPLIT;
}

const char *fg_verdict_name(enum fg_verdict v)
{
    switch (v) {
    case FG_FIT_FITS: return "fits";
    case FG_FIT_BORDERLINE: return "borderline";
    case FG_FIT_SPLIT: return "split";
    default: return "no";
    }
}
