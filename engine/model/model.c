#include "model/model_int.h"
#include "model/model.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/fmt.h"
#include "util/log.h"

static const char *const kind_names[FG_NODE_KIND_COUNT] = {
    [FG_NODE_EMBED] = "Embedding",     [FG_NODE_POS_EMBED] = "Position embedding",
    [FG_NODE_NORM] = "Norm",           [FG_NODE_ATTN] = "Attention",
    [FG_NODE_MLA] = "Latent attention", [FG_NODE_MLP] = "MLP",
    [FG_NODE_MOE] = "MoE",             [FG_NODE_MAMBA2] = "Mamba-2",
    [FG_NODE_SHORTCONV] = "Short conv", [FG_NODE_HEAD] = "Head",
    [FG_NODE_VISION] = "Tower",        [FG_NODE_OTHER] = "Other",
};

const char *fg_node_kind_name(enum fg_node_kind kind)
{
    return (unsigned)kind < FG_NODE_KIND_COUNT ? kind_names[kind] : "?";
}

/* Room for `more` nodes past the last; false (err set) when out of memory. */
static bool reserve(struct fg_model *m, size_t more, struct fg_err *err)
{
    if (m->n_nodes + more <= m->cap_nodes)
        return true;
    /* first: room for the usual six nodes per block when the reader has read the depth
     * (doubling from 64 copied a 400-layer graph three times: memmove, callgrind) */
    size_t cap = m->cap_nodes ? m->cap_nodes * 2 : m->layers ? m->layers * 6 + 8 : 64;
    while (cap < m->n_nodes + more)
        cap *= 2;
    struct fg_node *nn = realloc(m->nodes, cap * sizeof *nn);
    if (!nn) {
        fg_err_set(err, FG_E_NOMEM, "out of memory building the model graph");
        return false;
    }
    m->nodes = nn;
    m->cap_nodes = cap;
    return true;
}

/* A zeroed node at the end of the list (its name left empty), or NULL with err set. */
static struct fg_node *append(struct fg_model *m, enum fg_node_kind kind, int32_t layer,
                              struct fg_err *err)
{
    if (!reserve(m, 1, err))
        return NULL;
    struct fg_node *n = &m->nodes[m->n_nodes++];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->layer = layer;
    return n;
}

struct fg_node *fg__model_add(struct fg_model *m, enum fg_node_kind kind, int32_t layer,
                              const char *name, struct fg_err *err)
{
    struct fg_node *n = append(m, kind, layer, err);
    if (n)
        fg__copy(n->name, sizeof n->name, name);
    return n;
}

/* Whether base (len bytes) and any layer from 0 make a name written in place (below):
 * room for '_', ten digits and the NUL. */
static bool name_in_place(size_t len)
{
    return len + 12 <= sizeof ((struct fg_node *)0)->name;
}

/* "_<layer + 1>" into buf (12 bytes), for a layer from 0; its length. */
static size_t layer_suffix(char *buf, int32_t layer)
{
    char digits[11], *d = digits + sizeof digits;
    for (uint32_t v = (uint32_t)layer + 1; v; v /= 10)
        *--d = (char)('0' + v % 10);
    *--d = '_';
    size_t n = (size_t)(digits + sizeof digits - d);
    memcpy(buf, d, n);
    return n;
}

struct fg_model *fg__model_scratch(const struct fg_model *m, struct fg_err *err)
{
    struct fg_model *x = calloc(1, sizeof *x);
    if (!x) {
        fg_err_set(err, FG_E_NOMEM, "out of memory");
        return NULL;
    }
    x->hidden = m->hidden;
    x->heads = m->heads;
    x->kv_heads = m->kv_heads;
    x->head_dim = m->head_dim;
    x->inter = m->inter;
    x->vocab = m->vocab;
    return x;
}

/* "<base>_<layer + 1>" written in place: a graph names every node of every block, and
 * formatting the name (then copying it) was a tenth of a full plan's instructions
 * (callgrind, bench/RESULTS.md).  A name that would not fit, or a layer below 0, takes
 * fg__fmt, which truncates as snprintf does. */
struct fg_node *fg__model_add_block(struct fg_model *m, enum fg_node_kind kind, int32_t layer,
                                    const char *base, struct fg_err *err)
{
    struct fg_node *n = append(m, kind, layer, err);
    if (!n)
        return NULL;
    size_t len = strnlen(base, sizeof n->name);
    if (layer < 0 || !name_in_place(len)) {
        fg__fmt(n->name, sizeof n->name, "%s_%d", base, layer + 1);
        return n;
    }
    memcpy(n->name, base, len);
    layer_suffix(n->name + len, layer);
    return n;
}

bool fg__model_repeat_block(struct fg_model *m, size_t first, int32_t layer, uint32_t copies)
{
    enum { MAX_BLOCK = 32 }; /* nodes a block copied may have (readers add up to eight) */
    size_t count = m->n_nodes - first;
    if (m->node_by_node || first >= m->n_nodes || count > MAX_BLOCK || layer < 0 ||
        copies == 0 || copies - 1 > (uint32_t)(INT32_MAX - layer) ||
        m->nodes[first].layer < 0 || !reserve(m, count * copies, NULL))
        return false;
    /* every name "<base>_<from + 1>" with a base fg__model_add_block writes in place */
    char was[12], now[12];
    size_t nw = layer_suffix(was, m->nodes[first].layer);
    uint8_t base[MAX_BLOCK];
    for (size_t i = 0; i < count; i++) {
        const struct fg_node *n = &m->nodes[first + i];
        size_t len = strnlen(n->name, sizeof n->name);
        if (n->layer != m->nodes[first].layer || len < nw || !name_in_place(len - nw) ||
            memcmp(n->name + len - nw, was, nw) != 0)
            return false;
        base[i] = (uint8_t)(len - nw);
    }
    for (uint32_t c = 0; c < copies; c++) {
        int32_t to_layer = layer + (int32_t)c;
        size_t nn = layer_suffix(now, to_layer);
        struct fg_node *to = &m->nodes[m->n_nodes];
        memcpy(to, &m->nodes[first], count * sizeof *to);
        for (size_t i = 0; i < count; i++) {
            char *suffix = to[i].name + base[i];
            for (size_t k = nn; k < nw; k++) /* a shorter number: the bytes past it back to 0 */
                suffix[k] = '\0';
            for (size_t k = 0; k < nn; k++)
                suffix[k] = now[k];
            to[i].layer = to_layer;
        }
        m->n_nodes += count;
    }
    return true;
}

void fg__node_linear(struct fg_node *n, const char *role, uint64_t in, uint64_t out, uint64_t count,
                     bool bias)
{
    if (count == 0)
        return;
    n->params += in * out * count + (bias ? out * count : 0);
    if (n->nlin < FG_NODE_MAX_LINEAR) {
        struct fg_linear *l = &n->lin[n->nlin++];
        fg__copy(l->role, sizeof l->role, role);
        l->in = (uint32_t)in;
        l->out = (uint32_t)out;
        l->count = (uint32_t)count;
    }
}

void fg__model_rule(struct fg_model *m, const char *name, int64_t scalars)
{
    if (m->n_rules >= FG_MODEL_MAX_RULES)
        return;
    struct fg_rule *r = &m->rules[m->n_rules++];
    fg__copy(r->name, sizeof r->name, name);
    r->scalars = scalars;
    r->optional = false;
}

void fg__model_rule_optional(struct fg_model *m, const char *key, const char *name,
                             int64_t scalars)
{
    size_t n = m->n_rules;
    fg__model_rule(m, name, scalars);
    if (m->n_rules > n)
        m->rules[n].optional = true;
    if (scalars)
        fg__model_unsure_count(m, key, "unsure: %s: %s, counted as the original release "
                               "stores them; the class does not build them, so a fine-tune or "
                               "a pruned release saved through transformers holds none: the "
                               "safetensors headers settle it", key, name);
}

/* Notes, assumptions and keys quote config values: no control characters reach a terminal
 * or a log. */
static void scrub(char *s, size_t cap)
{
    fg__esc_inplace(s, cap, 0);
}

static void note_v(struct fg_model *m, const char *fmt, va_list ap)
{
    if (m->n_notes >= FG_MODEL_MAX_NOTES)
        return;
    char *note = m->notes[m->n_notes++];
    fg__vfmt(note, sizeof m->notes[0], fmt, ap);
    scrub(note, sizeof m->notes[0]);
}

void fg__model_note(struct fg_model *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    note_v(m, fmt, ap);
    va_end(ap);
}

void fg__model_assume(struct fg_model *m, const char *fmt, ...)
{
    if (m->n_assumed >= FG_MODEL_MAX_ASSUMED)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *a = m->assumed[m->n_assumed++];
    fg__vfmt(a, sizeof m->assumed[0], fmt, ap);
    va_end(ap);
    scrub(a, sizeof m->assumed[0]);
}

/* Unsure because of key; count_only: a question of the stored count alone.  The key kept
 * is the first of the weightiest question (one of what is loaded outranks one of what is
 * stored), with its note; a later question of no more weight adds nothing. */
static void unsure_v(struct fg_model *m, const char *key, bool count_only, const char *fmt,
                     va_list ap)
{
    bool was = m->certainty == FG_CERT_UNSURE, was_count_only = was && m->unsure_count_only;
    m->certainty = FG_CERT_UNSURE;
    m->unsure_count_only = count_only && (!was || was_count_only);
    if (was && !(was_count_only && !count_only))
        return; /* one note is enough: the first key says what to fix */
    fg__copy(m->unsure_key, sizeof m->unsure_key, key);
    scrub(m->unsure_key, sizeof m->unsure_key);
    note_v(m, fmt, ap);
}

void fg__model_unsure(struct fg_model *m, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    unsure_v(m, key, false, fmt, ap);
    va_end(ap);
}

void fg__model_unsure_count(struct fg_model *m, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    unsure_v(m, key, true, fmt, ap);
    va_end(ap);
}

bool fg_model_unsure_of_memory(const struct fg_model *m)
{
    return m->certainty == FG_CERT_UNSURE && !m->unsure_count_only;
}

const char *fg_certainty_name(enum fg_certainty c)
{
    static const char *const names[] = {
        [FG_CERT_EXACT] = "exact", [FG_CERT_CHECKPOINT] = "checkpoint",
        [FG_CERT_GENERIC] = "generic", [FG_CERT_UNSURE] = "unsure"};
    return (unsigned)c < sizeof names / sizeof names[0] ? names[c] : "?";
}

/* Nodes equal for an estimate: everything but the name and the layer number (nodes are
 * zeroed when added, so the bytes past each string's end compare equal too). */
static bool same_node(const struct fg_node *x, const struct fg_node *y)
{
    return x->kind == y->kind && x->stack == y->stack &&
           !memcmp(x->desc, y->desc, sizeof *x - offsetof(struct fg_node, desc));
}

static bool same_seg(const struct fg_model *m, const struct fg_seg *a, const struct fg_seg *b)
{
    if (a->n != b->n)
        return false;
    for (uint32_t k = 0; k < a->n; k++)
        if (!same_node(&m->nodes[a->first + k], &m->nodes[b->first + k]))
            return false;
    return true;
}

bool fg__node_head_side(const struct fg_node *n)
{
    if (n->kind == FG_NODE_HEAD)
        return true;
    if (n->kind != FG_NODE_NORM)
        return false;
    /* strstr(n->name, "Final") by hand: it runs for each norm of each block, and the
     * call cost more than the few characters of "Norm_12" (callgrind) */
    for (const char *p = n->name; *p; p++)
        if (p[0] == 'F' && p[1] == 'i' && p[2] == 'n' && p[3] == 'a' && p[4] == 'l')
            return true;
    return false;
}

/* A node of a main-stack block, which a pipeline stage holds by its layer number alone (the
 * readers add the head and the final norm at layer -1). */
static bool in_block(const struct fg_node *n)
{
    return n->stack == FG_STACK_MAIN && n->layer >= 0;
}

/*
 * What the estimator reads many times and the graph fixes once (memory.c; the speed
 * figures are in bench/RESULTS.md): per node, the linear parameters split into routed
 * experts and the rest; the widest MLP of the model; and the segments (model.h), each
 * block compared with the previous block's representative first (repeating stacks), then
 * with every earlier representative (alternating ones: hybrids, sliding/global layers).
 */
static int derive(struct fg_model *m, struct fg_err *err)
{
    m->widest_inter = 0;
    for (size_t i = 0; i < m->n_nodes; i++) {
        struct fg_node *n = &m->nodes[i];
        n->lin_routed = n->lin_other = 0;
        for (unsigned k = 0; k < n->nlin; k++) {
            uint64_t one = (uint64_t)n->lin[k].in * n->lin[k].out * n->lin[k].count;
            if (n->kind == FG_NODE_MOE && n->lin[k].count > 1)
                n->lin_routed += one;
            else
                n->lin_other += one;
        }
        uint64_t w = n->kind == FG_NODE_MOE ? (uint64_t)n->top_k * n->inter : n->inter;
        if (w > m->widest_inter)
            m->widest_inter = w;
    }
    free(m->segs);
    m->n_segs = 0;
    m->segs = malloc((m->n_nodes ? m->n_nodes : 1) * sizeof *m->segs);
    if (!m->segs)
        return fg_err_set(err, FG_E_NOMEM, "out of memory building the model graph");
    for (size_t i = 0; i < m->n_nodes;) {
        const struct fg_node *n = &m->nodes[i];
        struct fg_seg *g = &m->segs[m->n_segs];
        g->first = (uint32_t)i;
        g->n = 1;
        g->layer = in_block(n) ? n->layer : -1;
        g->rep = (uint32_t)m->n_segs;
        if (g->layer >= 0)
            while (i + g->n < m->n_nodes && in_block(&m->nodes[i + g->n]) &&
                   m->nodes[i + g->n].layer == g->layer)
                g->n++;
        i += g->n;
        if (g->layer >= 0) {
            uint32_t prev = UINT32_MAX;
            for (size_t k = m->n_segs; k-- > 0;)
                if (m->segs[k].layer >= 0) {
                    prev = m->segs[k].rep;
                    break;
                }
            if (prev != UINT32_MAX && same_seg(m, g, &m->segs[prev]))
                g->rep = prev;
            else
                for (uint32_t k = 0; k < m->n_segs; k++)
                    if (m->segs[k].layer >= 0 && m->segs[k].rep == k && k != prev &&
                        same_seg(m, g, &m->segs[k])) {
                        g->rep = k;
                        break;
                    }
        }
        g->run = 1;
        g->side = n->layer >= 0 && n->stack == FG_STACK_MAIN ? FG_SEG_LAYER
                : fg__node_head_side(n)                      ? FG_SEG_HEAD
                                                             : FG_SEG_EMBED;
        m->n_segs++;
    }
    for (size_t k = m->n_segs; k-- > 1;) {
        struct fg_seg *a = &m->segs[k - 1], *b = &m->segs[k];
        if (a->layer >= 0 && b->layer == a->layer + 1 && b->rep == a->rep)
            a->run = b->run + 1;
    }
    return 0;
}

int fg__model_finalize(struct fg_model *m, struct fg_err *err)
{
    uint64_t total = 0, buffers = 0;
    for (size_t i = 0; i < m->n_nodes; i++) {
        if (__builtin_add_overflow(total, m->nodes[i].params, &total) ||
            __builtin_add_overflow(buffers, m->nodes[i].buffers, &buffers))
            return fg_err_set(err, FG_E_OVERFLOW, "parameter count overflows 64 bits");
    }
    for (size_t i = 0; i < m->n_rules; i++) {
        int64_t s = m->rules[i].scalars;
        if (s >= 0 ? __builtin_add_overflow(total, (uint64_t)s, &total)
                   : (uint64_t)(-s) > total)
            return fg_err_set(err, FG_E_OVERFLOW, "parameter rule '%s' overflows the count",
                              m->rules[i].name);
        if (s < 0)
            total -= (uint64_t)(-s);
    }
    m->params_total = total;
    m->params_buffers = buffers;
    return derive(m, err);
}

uint64_t fg_model_params_of(const struct fg_model *m, enum fg_node_kind kind)
{
    uint64_t s = 0;
    for (size_t i = 0; i < m->n_nodes; i++)
        if (kind == FG_NODE_KIND_COUNT || m->nodes[i].kind == kind)
            s += m->nodes[i].params;
    return s;
}

uint32_t fg_model_main_layers(const struct fg_model *m)
{
    int32_t top = -1;
    if (m->segs) { /* a segment's nodes share their stack and layer: its first node says */
        for (size_t s = 0; s < m->n_segs; s++) {
            const struct fg_node *n = &m->nodes[m->segs[s].first];
            if (n->stack == FG_STACK_MAIN && n->layer > top)
                top = n->layer;
        }
        return (uint32_t)(top + 1);
    }
    for (size_t i = 0; i < m->n_nodes; i++)
        if (m->nodes[i].stack == FG_STACK_MAIN && m->nodes[i].layer > top)
            top = m->nodes[i].layer;
    return (uint32_t)(top + 1);
}

void fg_model_free(struct fg_model *m)
{
    if (!m)
        return;
    free(m->nodes);
    free(m->segs);
    free(m);
}
