/*
 * plan_search.c - the planner's search (plan.h fg_plan_layouts): GPU counts 1..gpus_per_node,
 * then whole nodes, and above the jump the families of shapes (see struct family); for each
 * count the (tp, pp, ep, dp, zero) shapes the framework runs, in rank order, each judged by
 * plan.c's evaluation.
 */
#include "plan/plan_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memory/memory_int.h"
#include "stack/framework.h"
#include "util/sat.h"

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
 * can still reach the options (fg__plan_kept_out), none dropped.
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
        if (g % tp || (o->fix_tp && tp != o->fix_tp) || !fg__planner_tp_valid(P, tp))
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
                                                        .rank = fg__plan_layout_rank(&min)};
                s->n_shapes++;
            }
        }
    }
    if (s->n_shapes) /* no shape: s->shapes may be NULL, which qsort may not take */
        qsort(s->shapes, s->n_shapes, sizeof *s->shapes, fg__plan_cmp_shape);
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
    return fg__plan_eval_layout(P, s->job, s->usable, s->o, &L, fits, err);
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
        if ((o->fix_tp && tp != o->fix_tp) || !fg__planner_tp_valid(P, tp))
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
                    j.grad_accum = fg__plan_accum_of(job, o, &G);
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
        if (fg__plan_kept_out(mine, s->nfound - before, sh->rank, !s->first_g))
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
            if (fg__plan_kept_out(s->nfound > before ? s->found + before : NULL, s->nfound - before,
                         fg__plan_layout_rank(&L), !s->first_g))
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
            int rc = fg__plan_eval_layout(P, job, s->usable, o, &L, &fits, err);
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
            L.grad_accum = o->global_batch ? fg__plan_accum_of(job, o, &L)
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
    qsort(s->found, s->nfound, sizeof s->found[0], fg__plan_cmp_layout);
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
    int rc = fg__planner_init(&P, m, layers, err);
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
    fg__planner_free(&P);
    return rc;
}
