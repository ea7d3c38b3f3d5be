/*
 * memory_stage.c - the sums over one pipeline stage (memory_stage.h): segment by segment,
 * a run of equal blocks counted once, or from the planner's per-block prefix table; and
 * the planner's part sets under their keys (memory.h fg__parts).
 */
#include "model/model_int.h"
#include "memory/memory_stage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/sat.h"

/* Is node on the pipeline stage the job sizes? */
static bool on_stage(const struct fg_node *n, const struct fg_job *job)
{
    if (job->layer_last == 0)
        return true;
    if (n->layer >= 0 && n->stack == FG_STACK_MAIN)
        return (uint32_t)n->layer >= job->layer_first && (uint32_t)n->layer < job->layer_last;
    if (fg__node_head_side(n))
        return job->stage_head;
    return job->stage_embed; /* embeddings, encoder and towers live on the first stage */
}

/* Fold part p (nodes of block `layer`, or of no block when layer < 0) into t; blocks are
 * told apart by the layer number changing, as the nodes come. */
static void fold(struct stage_sums *t, const struct part *p, int32_t layer, int32_t *cur_layer,
                 uint64_t *cur_act)
{
    for (int f = 0; f < S_ACT; f++)
        t->sum[f] += p->sum[f];
    if (p->largest > t->largest)
        t->largest = p->largest;
    if (layer < 0) {
        t->act_other += p->sum[S_ACT];
        return;
    }
    if (layer != *cur_layer) {
        if (*cur_act > t->act_block_max)
            t->act_block_max = *cur_act;
        *cur_layer = layer;
        *cur_act = 0;
        t->layers++;
    }
    *cur_act += p->sum[S_ACT];
    t->sum[S_ACT] += p->sum[S_ACT];
}

/* k blocks of part p one after the other from block `layer` on: what k folds give (each
 * block closes the one before it; all but the first hold p's activations alone). */
static void fold_run(struct stage_sums *t, const struct part *p, int32_t layer, uint32_t k,
                     int32_t *cur_layer, uint64_t *cur_act)
{
    fold(t, p, layer, cur_layer, cur_act);
    if (k < 2)
        return;
    uint64_t more = k - 1, act = p->sum[S_ACT];
    for (int f = 0; f < SUMS; f++)
        t->sum[f] += p->sum[f] * more;
    if (*cur_act > t->act_block_max)
        t->act_block_max = *cur_act;
    if (k > 2 && act > t->act_block_max)
        t->act_block_max = act;
    *cur_layer = layer + (int32_t)more;
    *cur_act = act;
    t->layers += more;
}

/* on_stage for a whole segment (model.h says where each side goes). */
static bool seg_on_stage(const struct fg_model *m, const struct fg_seg *g, const struct fg_job *job)
{
    if (job->layer_last == 0)
        return true;
    if (g->side == FG_SEG_LAYER) {
        uint32_t l = (uint32_t)m->nodes[g->first].layer;
        return l >= job->layer_first && l < job->layer_last;
    }
    return g->side == FG_SEG_HEAD ? job->stage_head : job->stage_embed;
}

/*
 * The block segment at segs[*s] starts a run (model.h); its blocks on the job's stage are
 * k blocks from *g on.  *s moves to the run's last segment, so the caller's s++ goes past
 * it; false when no block of the run is on the stage.
 */
static bool run_on_stage(const struct fg_model *m, const struct fg_job *job, size_t *s,
                         const struct fg_seg **g, uint32_t *k)
{
    const struct fg_seg *first = &m->segs[*s];
    uint32_t l = (uint32_t)first->layer, n = first->run, skip = 0;
    *s += n - 1;
    if (job->layer_last) {
        if (l >= job->layer_last || l + n <= job->layer_first)
            return false;
        if (l < job->layer_first)
            skip = job->layer_first - l;
        if (l + n > job->layer_last)
            n = job->layer_last - l;
    }
    *g = first + skip;
    *k = n - skip;
    return true;
}

/* The part of block segment g under job: from the set, or computed and kept there. */
static struct part block_part(const struct fg_model *m, const struct fg_job *job,
                              const struct act *a, const struct fg_seg *g, struct part_set *set)
{
    for (unsigned i = 0; i < set->n; i++)
        if (set->seen[i].rep == g->rep)
            return set->seen[i].p;
    struct part own = {0};
    for (uint32_t i = 0; i < g->n; i++)
        fg__add_node(&m->nodes[g->first + i], job, a, &own);
    if (set->n < CACHED) {
        set->seen[set->n].rep = g->rep;
        set->seen[set->n++].p = own;
    }
    return own;
}

/*
 * The sums over the stage, segment by segment (model.h): a run of equal blocks is counted
 * once and folded in k times, clipped to the stage (a 94-block Qwen3-235B is one run), a
 * block equal to one already counted (in this estimate, or in set's) adds that block's
 * part, so the cost grows with the distinct blocks and runs, not the nodes.  Integer sums
 * (wrapping as repeated additions wrap) and maxima: the same bytes as the node-by-node
 * walk, which is what runs when the model has no segments.
 */
void fg__sum_stage(const struct fg_model *m, const struct fg_job *job, const struct act *a,
                      struct part_set *set, struct stage_sums *t)
{
    int32_t cur_layer = -2;
    uint64_t cur_act = 0;
    memset(t, 0, sizeof *t);
    size_t n_segs = m->segs ? m->n_segs : m->n_nodes;
    for (size_t s = 0; s < n_segs; s++) {
        const struct fg_seg *g = m->segs ? &m->segs[s] : NULL;
        if (g && g->layer >= 0) {
            uint32_t k;
            if (!run_on_stage(m, job, &s, &g, &k))
                continue;
            struct part p = block_part(m, job, a, g, set);
            fold_run(t, &p, g->layer, k, &cur_layer, &cur_act);
            continue;
        }
        const struct fg_node *n = &m->nodes[g ? g->first : s];
        if (g ? !seg_on_stage(m, g, job) : !on_stage(n, job))
            continue;
        struct part own = {0};
        fg__add_node(n, job, a, &own);
        fold(t, &own, n->stack == FG_STACK_TOWER ? -1 : n->layer, &cur_layer, &cur_act);
        if (n->kind == FG_NODE_HEAD)
            t->has_head = true;
    }
    if (cur_act > t->act_block_max)
        t->act_block_max = cur_act;
}

/*
 * A planner asks for many stages of one model under one part key (fg__parts).  For a model
 * whose only layered nodes are its main-stack blocks, one segment each (decoders), the walk's
 * sums over a stage are prefix differences over the blocks plus the two sides: every block
 * is its own layer, so the largest block and the largest linear are maxima over the stage's
 * blocks.  The table holds those per block, built once per key; the planner's stage estimates
 * then cost the stage's length in comparisons, not a walk over the model.  Other models
 * (encoder stacks, layered towers) keep the walk: their layer numbers can meet across a
 * stage's edge, which the walk counts as one block.
 */
struct block_table {
    uint32_t layers;
    uint64_t *sum;      /* SUMS x (layers + 1) prefix sums of struct part's sum, field-major */
    uint64_t *largest;  /* per block */
    uint64_t *act;      /* per block */
    uint32_t *present;  /* prefix count of the blocks the model has */
    uint32_t *change;   /* per block: the next block whose largest or act differs (or layers):
                           a stage's maxima take a step per change, not per block */
    struct stage_sums embed, head; /* the two sides alone */
};

void fg__table_free(struct block_table *t)
{
    if (t)
        free(t->sum);
    free(t);
}

/* The table of m under job's part key, or NULL when the model is not one it serves (or no
 * memory: the walk then answers, the same bytes). */
struct block_table *fg__table_build(const struct fg_model *m, const struct fg_job *job,
                                       const struct act *a, struct part_set *set)
{
    uint32_t layers = fg_model_main_layers(m);
    if (!m->segs || !layers)
        return NULL;
    for (size_t s = 0; s < m->n_segs; s++) {
        const struct fg_seg *g = &m->segs[s];
        const struct fg_node *n = &m->nodes[g->first];
        if (g->layer < 0 && n->layer >= 0 && n->stack != FG_STACK_TOWER)
            return NULL; /* a layered node outside the blocks */
    }
    /* not zeroed: every entry is written below (a plan builds several tables, and clearing
     * them was a tenth of the planner's instructions, callgrind) */
    struct block_table *t = calloc(1, sizeof *t);
    size_t row = (size_t)layers + 1;
    uint64_t *mem = t ? malloc((SUMS + 3) * row * sizeof *mem) : NULL;
    if (!mem) {
        free(t);
        return NULL;
    }
    t->layers = layers;
    t->sum = mem;
    t->largest = mem + SUMS * row;
    t->act = t->largest + row;
    t->present = (uint32_t *)(t->act + row);
    t->change = t->present + row;
    memset(t->present, 0, row * sizeof *t->present);
    /* each block's own values first (sum[f][l + 1]), prefix-summed below */
    int32_t cur_layer = -2, head_layer = -2;
    uint64_t cur_act = 0, head_act = 0;
    for (size_t s = 0; s < m->n_segs; s++) {
        const struct fg_seg *g = &m->segs[s];
        const struct fg_node *n = &m->nodes[g->first];
        if (g->layer >= 0) {
            if (t->present[g->layer]) { /* a block in two segments */
                fg__table_free(t);
                return NULL;
            }
            t->present[g->layer] = 1;
            struct part p = block_part(m, job, a, g, set);
            for (int f = 0; f < SUMS; f++)
                t->sum[f * row + (size_t)g->layer + 1] = p.sum[f];
            t->largest[g->layer] = p.largest;
            t->act[g->layer] = p.sum[S_ACT];
            continue;
        }
        struct part own = {0};
        fg__add_node(n, job, a, &own);
        if (g->side == FG_SEG_HEAD) {
            fold(&t->head, &own, -1, &head_layer, &head_act);
            t->head.has_head |= n->kind == FG_NODE_HEAD;
        } else {
            fold(&t->embed, &own, -1, &cur_layer, &cur_act);
            t->embed.has_head |= n->kind == FG_NODE_HEAD;
        }
    }
    uint32_t count = 0;
    for (int f = 0; f < SUMS; f++)
        t->sum[f * row] = 0;
    for (uint32_t l = 0; l < layers; l++) {
        if (!t->present[l]) { /* a layer no block has: zeros */
            for (int f = 0; f < SUMS; f++)
                t->sum[f * row + l + 1] = 0;
            t->largest[l] = t->act[l] = 0;
        }
        for (int f = 0; f < SUMS; f++)
            t->sum[f * row + l + 1] += t->sum[f * row + l];
        count += t->present[l];
        t->present[l] = count - t->present[l]; /* blocks before l */
    }
    t->present[layers] = count;
    for (uint32_t l = layers; l-- > 0;)
        t->change[l] = l + 1 < layers && t->largest[l + 1] == t->largest[l] &&
                               t->act[l + 1] == t->act[l]
                           ? t->change[l + 1]
                           : l + 1;
    return t;
}

/* A side's sums into the stage's (sides hold no block: their activations are "other"). */
static void add_side(struct stage_sums *t, const struct stage_sums *side)
{
    for (int f = 0; f < SUMS; f++)
        t->sum[f] += side->sum[f];
    t->largest = side->largest > t->largest ? side->largest : t->largest;
    t->act_other += side->act_other;
    t->has_head |= side->has_head;
}

/* What sum_stage gives for job's stage, from the table. */
void fg__table_sums(const struct block_table *b, const struct fg_job *job,
                       struct stage_sums *t)
{
    memset(t, 0, sizeof *t);
    bool whole = job->layer_last == 0;
    uint32_t lo = whole ? 0 : job->layer_first, hi = whole ? b->layers : job->layer_last;
    hi = hi < b->layers ? hi : b->layers;
    lo = lo < hi ? lo : hi;
    if (whole || job->stage_embed)
        add_side(t, &b->embed);
    for (int f = 0; f < SUMS; f++)
        t->sum[f] += b->sum[f * (b->layers + 1) + hi] - b->sum[f * (b->layers + 1) + lo];
    for (uint32_t l = lo; l < hi; l = b->change[l]) {
        t->largest = b->largest[l] > t->largest ? b->largest[l] : t->largest;
        t->act_block_max = b->act[l] > t->act_block_max ? b->act[l] : t->act_block_max;
    }
    t->layers = b->present[hi] - b->present[lo];
    if (whole || job->stage_head)
        add_side(t, &b->head);
}

/* k copies of p into t: the saturating sums saturate as k additions would (the terms are
 * not negative), the linear count wraps as they would. */
static void fold_served(struct serve_part *t, const struct serve_part *p, uint64_t k)
{
    t->weights = fg__add_sat(t->weights, fg__mul_sat(p->weights, k));
    t->wbytes = fg__add_sat(t->wbytes, fg__mul_sat(p->wbytes, k));
    t->kv = fg__add_sat(t->kv, fg__mul_sat(p->kv, k));
    t->state = fg__add_sat(t->state, fg__mul_sat(p->state, k));
    t->lin += p->lin * k;
    t->has_head |= p->has_head;
    t->ds_mla |= p->ds_mla;
    t->work = p->work > t->work ? p->work : t->work;
    t->largest = p->largest > t->largest ? p->largest : t->largest;
}

/* The serving sums over the stage, run by run as sum_stage. */
void fg__sum_served(const struct fg_model *m, const struct fg_job *job, uint64_t seq,
                    const struct fg_wquant *wq, struct serve_part *t)
{
    memset(t, 0, sizeof *t);
    size_t n_segs = m->segs ? m->n_segs : m->n_nodes;
    for (size_t s = 0; s < n_segs; s++) {
        const struct fg_seg *g = m->segs ? &m->segs[s] : NULL;
        struct serve_part p = {0};
        uint32_t k = 1;
        if (g && g->layer >= 0) {
            if (!run_on_stage(m, job, &s, &g, &k))
                continue;
            for (uint32_t i = 0; i < g->n; i++)
                fg__add_served(&m->nodes[g->first + i], job, seq, wq, &p);
        } else {
            const struct fg_node *n = &m->nodes[g ? g->first : s];
            if (g ? !seg_on_stage(m, g, job) : !on_stage(n, job))
                continue;
            fg__add_served(n, job, seq, wq, &p);
        }
        fold_served(t, &p, k);
    }
}

static void part_key_of(const struct fg_model *m, const struct fg_job *job, struct part_key *k)
{
    memset(k, 0, sizeof *k);
    fg__act_of(m, job, &k->act);
    k->lora_fused_qkv = job->lora_fused_qkv;
    k->head_4bit = job->head_4bit;
    k->head_untied = job->head_untied;
    k->kv_expanded = job->kv_expanded;
    k->lora = job->mode == FG_MODE_LORA || job->mode == FG_MODE_QLORA;
    k->attention = job->attention;
    k->tp = job->tp ? job->tp : 1;
    k->ep = job->ep;
    k->rank = job->lora_rank;
    k->targets = job->lora_targets;
    k->precision = job->precision;
    if (job->lora_targets == FG_LORA_LIST) /* the name alone: the bytes after it stay 0 */
        snprintf(k->list, sizeof k->list, "%s", job->lora_list);
}

/* part_key_of zeroes the key, and fg__act_of its act, padding included, before filling
 * them: equal keys are equal bytes, whatever fields they gain. */
static bool same_key(const struct part_key *a, const struct part_key *b)
{
    return !memcmp(a, b, sizeof *a);
}

struct part_set *fg__parts_set(struct fg__parts *parts, const struct fg_model *m,
                               const struct fg_job *job)
{
    struct part_key k;
    part_key_of(m, job, &k);
    unsigned i = 0;
    while (i < parts->used && !same_key(&parts->key[i], &k))
        i++;
    if (i == parts->used) {
        if (parts->used < PART_SETS) {
            i = parts->used++; /* never used: nothing to free */
        } else {
            i = parts->next++ % PART_SETS;
            fg__table_free(parts->set[i].table);
        }
        memcpy(&parts->key[i], &k, sizeof k);
        memset(&parts->set[i], 0, sizeof parts->set[i]);
    }
    struct part_set *set = &parts->set[i];
    if (!set->table_tried && job->mode != FG_MODE_SERVE) {
        set->table = fg__table_build(m, job, &k.act, set);
        set->table_tried = true;
    }
    return set;
}

/*
 * A quantized checkpoint whose safetensors headers were read: the headers' dtypes are the
 * truth, so this GPU's share (here, in the scheme's split) is scaled by what the whole
 * checkpoint stores over what the scheme gives the whole graph.  What the checkpoint stores
 * beyond the graph (DeepSeek's MTP layers, which vLLM loads only for speculative decoding)
 * stays in: a little more, never less.
 */
uint64_t fg__served_from_headers(const struct fg_model *m, const struct fg_job *job,
                                 const struct fg_wquant *wq, uint64_t here)
{
    struct fg_job whole = *job;
    whole.tp = whole.ep = 1;
    whole.pp = 1;
    whole.layer_first = whole.layer_last = 0;
    struct serve_part all;
    fg__sum_served(m, &whole, 1, wq, &all);
    if (!all.wbytes)
        return here;
    double t = (double)here * (double)m->stored_bytes / (double)all.wbytes;
    return t >= 1.8e19 ? UINT64_MAX : (uint64_t)t;
}
