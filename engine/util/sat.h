/*
 * sat.h - saturating byte arithmetic (internal): a sum or product past 64 bits is
 * UINT64_MAX, which compares as "more than any card" instead of wrapping to a small
 * number.  The estimator's sums and the planner's stage costs use it.
 */
#ifndef FG_SAT_H
#define FG_SAT_H

#include <stdint.h>

static inline uint64_t fg__add_sat(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static inline uint64_t fg__mul_sat(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

#endif
