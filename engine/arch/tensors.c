/*
 * tensors.c - the structure of a model no family reader knows, from its checkpoint's
 * tensors (tensors.h).
 *
 * The block stack is the name prefix before a block index ("model.layers.", "transformer.h.",
 * "gpt_neox.layers.") that holds the most elements outside vision / audio towers; its layer
 * count is the highest index + 1.  Inside a block each tensor is mapped by its module name,
 * in the context its path gives (attention / MLP / experts), onto a role; a linear's
 * orientation is read against the embedding's width, so nn.Linear [out, in] and GPT-2's
 * Conv1D [in, out] both map.  Norms go to one norm node per block, tensors no role matches
 * to an "Other" node of the block; every element is counted once, so the graph's total is
 * the headers' sum exactly.  The names follow the modules transformers and the remote-code
 * releases write (LlamaDecoderLayer, GPT2Block, GPTNeoXLayer, MixtralSparseMoeBlock,
 * InternLM2 / EXAONE / Baichuan remote code); the module tables below list them.
 */
#include "arch/tensors.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "model/model_int.h"
#include "source/safetensors.h"
#include "util/fmt.h"

enum role {
    R_NONE, R_Q, R_K, R_V, R_O, R_QKV, R_GATE, R_UP, R_DOWN, R_GATE_UP, R_ROUTER, R_COUNT
};

/* Module names per role; ctx 'a' only inside attention, 'm' only inside an MLP, 0 both. */
static const struct {
    const char *module;
    enum role role;
    char ctx;
} modules[] = {
    {"q_proj", R_Q, 0},       {"query", R_Q, 'a'},        {"wq", R_Q, 'a'},
    {"k_proj", R_K, 0},       {"key", R_K, 'a'},          {"wk", R_K, 'a'},
    {"v_proj", R_V, 0},       {"value", R_V, 'a'},        {"wv", R_V, 'a'},
    {"o_proj", R_O, 0},       {"out_proj", R_O, 'a'},     {"wo", R_O, 'a'},
    {"dense", R_O, 'a'},      {"c_proj", R_O, 'a'},       {"proj", R_O, 'a'},
    {"qkv_proj", R_QKV, 0},   {"query_key_value", R_QKV, 0}, {"c_attn", R_QKV, 0},
    {"Wqkv", R_QKV, 0},       {"wqkv", R_QKV, 0},         {"qkv", R_QKV, 'a'},
    {"W_pack", R_QKV, 0},
    {"gate_proj", R_GATE, 0}, {"w1", R_GATE, 'm'},        {"c_fc_0", R_GATE, 'm'},
    {"wi_0", R_GATE, 'm'},
    {"up_proj", R_UP, 0},     {"w3", R_UP, 'm'},          {"c_fc_1", R_UP, 'm'},
    {"fc1", R_UP, 'm'},       {"c_fc", R_UP, 'm'},        {"dense_h_to_4h", R_UP, 'm'},
    {"fc_in", R_UP, 'm'},     {"wi_1", R_UP, 'm'},
    {"down_proj", R_DOWN, 0}, {"w2", R_DOWN, 'm'},        {"c_proj", R_DOWN, 'm'},
    {"fc2", R_DOWN, 'm'},     {"dense_4h_to_h", R_DOWN, 'm'}, {"fc_out", R_DOWN, 'm'},
    {"wo", R_DOWN, 'm'},
    {"gate_up_proj", R_GATE_UP, 0},
    {"router", R_ROUTER, 'm'}, {"gate", R_ROUTER, 'm'},
};

/* Path words that put a tensor in attention, in an MLP, or in the routed experts. */
static const char *const attn_words[] = {"attn", "attention", NULL};
static const char *const mlp_words[] = {"mlp", "ffn", "feed_forward", "moe", "DenseReluDense",
                                        NULL};

static bool has_word(const char *s, const char *const *words)
{
    for (size_t i = 0; words[i]; i++)
        if (strstr(s, words[i]))
            return true;
    return false;
}

/* One tensor (a row) split as "<prefix>.<index>.<rest>"; index -1 when it has none. */
struct split {
    char prefix[FG_ST_ROW_NAME];
    const char *rest;
    long index;
};

static void split_name(const char *name, struct split *sp)
{
    sp->index = -1;
    sp->rest = name;
    sp->prefix[0] = '\0';
    for (const char *p = name; *p; p++) {
        if ((p == name || p[-1] == '.') && *p >= '0' && *p <= '9') {
            char *end;
            long v = strtol(p, &end, 10);
            if (*end == '.') {
                size_t n = (size_t)(p - name);
                snprintf(sp->prefix, sizeof sp->prefix, "%.*s", (int)n, name);
                sp->index = v;
                sp->rest = end + 1;
                return;
            }
        }
    }
}

/* The module a parameter belongs to (the component before the last) and whether the last
 * is "weight" or "bias". */
static void module_of(const char *rest, char *mod, size_t cap, bool *weight, bool *bias)
{
    const char *last = strrchr(rest, '.');
    const char *start = rest;
    *weight = last && !strcmp(last + 1, "weight");
    *bias = last && !strcmp(last + 1, "bias");
    if (!last) {
        snprintf(mod, cap, "%s", rest);
        return;
    }
    for (const char *p = rest; p < last; p++)
        if (*p == '.')
            start = p + 1;
    snprintf(mod, cap, "%.*s", (int)(last - start), start);
}

static enum role role_of(const char *rest, const char *mod, bool *in_attn, bool *in_mlp)
{
    *in_attn = has_word(rest, attn_words);
    *in_mlp = !*in_attn && (has_word(rest, mlp_words) || strstr(rest, "experts."));
    for (size_t i = 0; i < sizeof modules / sizeof modules[0]; i++) {
        if (strcmp(modules[i].module, mod) != 0)
            continue;
        if ((modules[i].ctx == 'a' && !*in_attn) || (modules[i].ctx == 'm' && !*in_mlp))
            continue;
        return modules[i].role;
    }
    return R_NONE;
}

static bool is_norm(const char *mod)
{
    return strstr(mod, "norm") || !strncmp(mod, "ln", 2);
}

/* What one block holds, summed from its rows. */
#define NORMS 4
struct block {
    uint64_t attn, mlp, other, buffers;      /* elements */
    char norm_mod[NORMS][48];                 /* the block's norm modules, first one first */
    uint64_t norm_el[NORMS];
    unsigned norms;
    uint64_t out[R_COUNT], in[R_COUNT];       /* a role's linear, from its weight */
    bool seen[R_COUNT], bias[R_COUNT];
    uint64_t experts, shared_inter;           /* routed experts (rows' count or a stacked dim) */
    bool stacked;                             /* experts stored as 3-D parameters */
    bool packed;                              /* a role's weight in a packed integer dtype */
};

static bool packed_dtype(int d)
{
    return d == FG_ST_I32 || d == FG_ST_U8 || d == FG_ST_I8 || d == FG_ST_U32 || d == FG_ST_I16;
}

/* A linear's (in, out) against the residual width h: nn.Linear [out, in] or Conv1D [in, out]. */
static void orient(enum role r, uint64_t a, uint64_t b, uint64_t h, uint64_t *in, uint64_t *out)
{
    bool to_hidden = r == R_O || r == R_DOWN;
    if (to_hidden) {
        *out = h;
        *in = a == h ? b : a;
    } else {
        *in = h;
        *out = b == h ? a : b;
    }
}

/* Add row r (of a block) to b. */
static void block_add(struct block *b, const struct fg_st_row *r, uint64_t hidden)
{
    struct split sp;
    char mod[FG_ST_ROW_NAME];
    bool weight, bias, in_attn, in_mlp;
    uint64_t el = fg_st_row_numel(r) * r->count;
    split_name(r->name, &sp);
    module_of(sp.rest, mod, sizeof mod, &weight, &bias);
    if (fg_safetensors_group(r->name) == FG_ST_BUFFER) {
        b->buffers += el;
        b->attn += el;
        return;
    }
    enum role role = role_of(sp.rest, mod, &in_attn, &in_mlp);
    bool expert = strstr(sp.rest, "experts.") && !strstr(sp.rest, "shared_expert");
    bool shared = strstr(sp.rest, "shared_expert") != NULL;
    if (role == R_NONE && is_norm(mod)) {
        /* q_norm / k_norm inside self_attn belong to attention; post_attention_layernorm,
         * named after it, is the block's */
        char path[FG_ST_ROW_NAME];
        const char *at = strstr(sp.rest, mod);
        snprintf(path, sizeof path, "%.*s", at ? (int)(at - sp.rest) : 0, sp.rest);
        if (has_word(path, attn_words)) {
            b->attn += el;
            return;
        }
        unsigned k = 0;
        while (k < b->norms && strcmp(b->norm_mod[k], mod) != 0)
            k++;
        if (k == b->norms && k < NORMS)
            snprintf(b->norm_mod[b->norms++], sizeof b->norm_mod[0], "%.47s", mod);
        if (k < NORMS)
            b->norm_el[k] += el;
        else
            b->norm_el[NORMS - 1] += el;
        return;
    }
    if (role == R_NONE) {
        if (in_attn)
            b->attn += el;
        else if (in_mlp)
            b->mlp += el; /* a shared-expert gate, a router's bias: the MLP's own */
        else
            b->other += el;
        return;
    }
    if (role <= R_QKV)
        b->attn += el;
    else
        b->mlp += el;
    if (!weight || shared || (role == R_ROUTER && r->ndim != 2)) {
        if (shared && weight && role == R_UP && r->ndim == 2)
            b->shared_inter = r->shape[0] == hidden ? r->shape[1] : r->shape[0];
        if (bias && !expert)
            b->bias[role] = true;
        return;
    }
    if (packed_dtype(r->dtype))
        b->packed = true;
    uint64_t n = r->count, x, y;
    if (r->ndim == 3) { /* stacked experts [E, x, y] */
        n = r->shape[0];
        x = r->shape[1];
        y = r->shape[2];
    } else if (r->ndim == 2) {
        x = r->shape[0];
        y = r->shape[1];
    } else {
        return;
    }
    if (role == R_ROUTER) {
        b->seen[role] = true;
        b->out[role] = x == hidden ? y : x;
        return;
    }
    if (expert) {
        b->experts = n;
        b->stacked = r->ndim == 3;
    }
    b->seen[role] = true;
    orient(role, x, y, hidden, &b->in[role], &b->out[role]);
}

/* What the builder learns across the rows. */
struct plan {
    char stack[FG_ST_ROW_NAME];   /* the block prefix */
    long layers;
    uint64_t vocab, hidden, embed, pos, head, final_norm, vision, other, buffers;
    struct block *blocks;
    char why[160];                /* what keeps the activations from being sized */
};

/* The block prefix holding the most elements outside towers. */
static void find_stack(const struct fg_st_layout *l, struct plan *p)
{
    uint64_t best = 0;
    char seen[8][FG_ST_ROW_NAME];
    size_t nseen = 0;
    for (size_t i = 0; i < l->n; i++) {
        struct split a;
        split_name(l->rows[i].name, &a);
        bool again = false;
        for (size_t k = 0; k < nseen && !again; k++)
            again = !strcmp(seen[k], a.prefix);
        if (a.index < 0 || again || fg_safetensors_group(l->rows[i].name) == FG_ST_VISION)
            continue;
        if (nseen < sizeof seen / sizeof seen[0])
            snprintf(seen[nseen++], sizeof seen[0], "%s", a.prefix);
        uint64_t sum = 0;
        for (size_t j = 0; j < l->n; j++) {
            struct split b;
            split_name(l->rows[j].name, &b);
            if (b.index >= 0 && !strcmp(a.prefix, b.prefix))
                sum += fg_st_row_numel(&l->rows[j]) * l->rows[j].count;
        }
        if (sum > best) {
            best = sum;
            snprintf(p->stack, sizeof p->stack, "%s", a.prefix);
        }
    }
    p->layers = 0;
    for (size_t i = 0; best && i < l->n; i++) {
        struct split a;
        split_name(l->rows[i].name, &a);
        if (a.index >= 0 && !strcmp(a.prefix, p->stack) && a.index + 1 > p->layers)
            p->layers = a.index + 1;
    }
}

/* Sort the rows outside the block stack into the plan's totals; the embedding gives vocab
 * and hidden. */
static void outside(const struct fg_st_layout *l, struct plan *p)
{
    for (size_t i = 0; i < l->n; i++) {
        const struct fg_st_row *r = &l->rows[i];
        struct split sp;
        split_name(r->name, &sp);
        uint64_t el = fg_st_row_numel(r) * r->count;
        if (sp.index >= 0 && p->layers && !strcmp(sp.prefix, p->stack))
            continue;
        switch (fg_safetensors_group(r->name)) {
        case FG_ST_EMBED:
            p->embed += el;
            if (r->ndim == 2 && r->shape[0] * r->shape[1] > p->vocab * p->hidden) {
                p->vocab = r->shape[0];
                p->hidden = r->shape[1];
            }
            break;
        case FG_ST_POS_EMBED: p->pos += el; break;
        case FG_ST_HEAD: p->head += el; break;
        case FG_ST_NORM: p->final_norm += el; break;
        case FG_ST_VISION: p->vision += el; break;
        case FG_ST_BUFFER: p->buffers += el; p->other += el; break;
        default: p->other += el; break;
        }
    }
}

/* A node of `kind` outside the blocks holding el elements (none when el is 0). */
static int add_rest(struct fg_model *m, enum fg_node_kind kind, const char *name, uint64_t el,
                    uint64_t buffers, struct fg_err *err)
{
    if (!el)
        return 0;
    struct fg_node *n = fg__model_add(m, kind, -1, name, err);
    if (!n)
        return FG_E_NOMEM;
    n->params = el;
    n->buffers = buffers;
    if (kind == FG_NODE_VISION)
        n->stack = FG_STACK_TOWER;
    fg__copy(n->desc, sizeof n->desc, "from the checkpoint's tensors");
    return 0;
}

/* The last node added, its params set to el (the blocks' own counts are the shapes'). */
static void set_last(struct fg_model *m, uint64_t el, uint64_t buffers)
{
    m->nodes[m->n_nodes - 1].params = el;
    m->nodes[m->n_nodes - 1].buffers = buffers;
}

/* Heads from config.json where it gives them; the tensors give the widths. */
struct heads {
    uint64_t heads, kv_heads, head_dim, top_k;
    bool heads_given, kv_given, hd_given, top_k_given;
};

static int read_heads(const struct fg_cfg *c, struct heads *h, struct fg_err *err)
{
    int rc;
    memset(h, 0, sizeof *h);
    h->heads_given = fg_cfg_has(c, "num_attention_heads|n_head|num_heads|n_heads");
    h->kv_given = fg_cfg_has(c, "num_key_value_heads|n_kv_heads|multi_query_group_num|"
                                "num_kv_heads");
    h->hd_given = fg_cfg_has(c, "head_dim|kv_channels");
    h->top_k_given = fg_cfg_has(c, "num_experts_per_tok|moe_top_k|top_k|num_experts_per_token");
    if ((rc = fg_cfg_u64(c, "num_attention_heads|n_head|num_heads|n_heads", 0, 0, FG_MAX_HEADS,
                         &h->heads, err)) ||
        (rc = fg_cfg_u64(c, "num_key_value_heads|n_kv_heads|multi_query_group_num|num_kv_heads",
                         0, 0, FG_MAX_HEADS, &h->kv_heads, err)) ||
        (rc = fg_cfg_u64(c, "head_dim|kv_channels", 0, 0, FG_MAX_HIDDEN, &h->head_dim, err)) ||
        (rc = fg_cfg_u64(c, "num_experts_per_tok|moe_top_k|top_k|num_experts_per_token", 0, 0,
                         FG_MAX_EXPERTS, &h->top_k, err)))
        return rc;
    return 0;
}

/* The attention shape of block b; false (p->why set) when it cannot be sized. */
static bool attn_shape(const struct block *b, const struct heads *h, uint64_t hidden,
                       struct fg_attn_shape *s, struct plan *p)
{
    memset(s, 0, sizeof *s);
    s->hidden = hidden;
    s->fused_qkv = b->seen[R_QKV];
    uint64_t q = b->seen[R_Q] ? b->out[R_Q] : 0, k = b->seen[R_K] ? b->out[R_K] : 0;
    if (!h->heads) {
        snprintf(p->why, sizeof p->why, "config.json gives no num_attention_heads");
        return false;
    }
    s->heads = h->heads;
    if (s->fused_qkv) {
        s->head_dim = h->head_dim ? h->head_dim : hidden / h->heads;
        uint64_t rest = b->out[R_QKV] > s->heads * s->head_dim ?
                        b->out[R_QKV] - s->heads * s->head_dim : 0;
        s->kv_heads = h->kv_given ? h->kv_heads : s->head_dim ? rest / (2 * s->head_dim) : 0;
    } else {
        s->head_dim = q % h->heads == 0 ? q / h->heads : 0;
        s->kv_heads = s->head_dim && k % s->head_dim == 0 ? k / s->head_dim : 0;
    }
    if (!s->head_dim || !s->kv_heads || s->heads % s->kv_heads) {
        snprintf(p->why, sizeof p->why, "the query / key widths do not split into %" PRIu64
                 " heads", h->heads);
        return false;
    }
    s->qkv_bias = b->bias[R_Q] || b->bias[R_QKV];
    s->o_bias = b->bias[R_O];
    return true;
}

/* The norm that comes first in the block: the lowest name (input_layernorm before
 * post_attention_layernorm, ln_1 before ln_2). */
static unsigned first_norm(const struct block *b)
{
    unsigned f = 0;
    for (unsigned k = 1; k < b->norms; k++)
        if (strcmp(b->norm_mod[k], b->norm_mod[f]) < 0)
            f = k;
    return f;
}

/* One block's nodes: norm, attention, the other norms, MLP or experts, the rest. */
static int add_block(struct fg_model *m, long L, const struct block *b, const struct heads *h,
                     struct plan *p, struct fg_err *err)
{
    int rc = 0;
    int32_t layer = (int32_t)L;
    bool attn = b->seen[R_Q] || b->seen[R_QKV];
    bool mlp = b->seen[R_UP] || b->seen[R_GATE_UP] || b->seen[R_DOWN];
    uint64_t leftover = b->other;
    unsigned first = first_norm(b);
    /* the norm named first (input_layernorm, ln_1) before attention, the others after it */
    if (b->norms && (rc = fg__add_norm(m, layer, "Norm", p->hidden, FG_NORM_RMS, err)) == 0)
        set_last(m, b->norm_el[first], 0);
    struct fg_attn_shape as;
    if (!rc && attn && attn_shape(b, h, p->hidden, &as, p)) {
        if ((rc = fg__add_attention(m, layer, &as, NULL, err)) == 0)
            set_last(m, b->attn, b->buffers);
    } else {
        leftover += b->attn;
        if (!p->why[0])
            snprintf(p->why, sizeof p->why, "block %ld has no attention the names map", L);
    }
    for (unsigned k = 0; !rc && k < b->norms; k++)
        if (k != first && (rc = fg__add_norm(m, layer, "Norm", p->hidden, FG_NORM_RMS, err)) == 0)
            set_last(m, b->norm_el[k], 0);
    uint64_t inter = b->seen[R_UP] ? b->out[R_UP] : b->seen[R_GATE_UP] ? b->out[R_GATE_UP] / 2
                                                                      : b->in[R_DOWN];
    bool gated = b->seen[R_GATE] || b->seen[R_GATE_UP];
    if (!rc && mlp && b->experts > 1) {
        struct fg_moe_shape ms = {.hidden = p->hidden, .experts = b->experts, .top_k = h->top_k,
                                  .inter = inter, .shared_inter = b->shared_inter,
                                  .shared_n = 1, .gated = gated,
                                  .fused_gate_up = b->seen[R_GATE_UP],
                                  /* per-expert tensors are per-expert nn.Linear modules LoRA
                                   * adapts one by one; 3-D parameters of a class peft has no
                                   * mapping for are not reached by a target name */
                                  .lora_experts = b->stacked ? FG_LORA_EXPERTS_NONE
                                                             : FG_LORA_EXPERTS_LINEAR};
        if (!h->top_k && !p->why[0])
            snprintf(p->why, sizeof p->why, "config.json gives no num_experts_per_tok for "
                     "the %" PRIu64 " experts", b->experts);
        if ((rc = fg__add_moe(m, layer, &ms, NULL, err)) == 0)
            set_last(m, b->mlp, 0);
    } else if (!rc && mlp && inter) {
        struct fg_mlp_shape ms = {.hidden = p->hidden, .inter = inter, .gated = gated,
                                  .bias = b->bias[R_UP] || b->bias[R_DOWN],
                                  .fused_gate_up = b->seen[R_GATE_UP]};
        if ((rc = fg__add_mlp(m, layer, &ms, NULL, err)) == 0)
            set_last(m, b->mlp, 0);
        if (!m->inter)
            m->inter = inter;
    } else {
        leftover += b->mlp;
        if (!p->why[0])
            snprintf(p->why, sizeof p->why, "block %ld has no MLP the names map", L);
    }
    if (b->packed && !p->why[0])
        snprintf(p->why, sizeof p->why, "block %ld stores packed quantized weights: their "
                 "shapes are not the linears'", L);
    if (!rc && leftover) {
        struct fg_node *n = fg__model_add_block(m, FG_NODE_OTHER, layer, "Other", err);
        if (!n)
            return FG_E_NOMEM;
        n->params = leftover;
        fg__copy(n->desc, sizeof n->desc, "tensors no role maps");
    }
    return rc;
}

/* The notes that say where the structure came from. */
static void say(struct fg_model *m, const struct fg_st_layout *l, const struct heads *h,
                const struct plan *p)
{
    char from[120] = "";
    size_t o = 0;
    if (h->heads_given)
        o += (size_t)snprintf(from + o, sizeof from - o, " num_attention_heads %" PRIu64,
                              h->heads);
    if (h->kv_given && o < sizeof from)
        o += (size_t)snprintf(from + o, sizeof from - o, " num_key_value_heads %" PRIu64,
                              h->kv_heads);
    if (h->top_k_given && m->experts && o < sizeof from)
        snprintf(from + o, sizeof from - o, " num_experts_per_tok %" PRIu64, h->top_k);
    fg__model_note(m, "read from the checkpoint's %" PRIu64 " tensors: no family reader for "
                      "model_type %s", l->tensors, m->model_type[0] ? m->model_type : "(none)");
    fg__model_note(m, "structure from the tensors: %ld blocks under '%.60s', hidden %" PRIu64
                      ", vocab %" PRIu64, p->layers, p->stack, p->hidden, p->vocab);
    fg__model_note(m, "taken from config.json:%s", from[0] ? from : " nothing");
    if (p->vision)
        fg__model_note(m, "the checkpoint stores %" PRIu64 " parameters of vision / audio "
                          "towers, counted as one tower node", p->vision);
}

int fg__arch_read_tensors(const struct fg_cfg *c, struct fg_model *m,
                          const struct fg_st_layout *l, struct fg_err *err)
{
    struct plan p;
    struct heads h;
    int rc;
    memset(&p, 0, sizeof p);
    if (!l || !l->n)
        return fg_err_set(err, FG_E_MISSING, "the checkpoint names no tensors");
    if ((rc = read_heads(c, &h, err)))
        return rc;
    find_stack(l, &p);
    outside(l, &p);
    if (p.layers && p.layers <= (long)FG_MAX_LAYERS && p.hidden &&
        !(p.blocks = calloc((size_t)p.layers, sizeof *p.blocks)))
        return fg_err_set(err, FG_E_NOMEM, "out of memory");
    for (size_t i = 0; p.blocks && i < l->n; i++) {
        struct split sp;
        split_name(l->rows[i].name, &sp);
        if (sp.index >= 0 && !strcmp(sp.prefix, p.stack))
            block_add(&p.blocks[sp.index], &l->rows[i], p.hidden);
    }
    m->hidden = p.hidden;
    m->vocab = p.vocab;
    m->layers = p.blocks ? (uint64_t)p.layers : 0;
    m->heads = h.heads;
    m->top_k = h.top_k;
    fg_cfg_u64(c, "max_position_embeddings|n_positions|seq_length", 0, 0, FG_MAX_POS,
               &m->max_pos, NULL);
    if (p.embed && (rc = fg__add_embedding(m, p.vocab, p.hidden, err)) == 0)
        set_last(m, p.embed, 0);
    if (!rc)
        rc = add_rest(m, FG_NODE_POS_EMBED, "Position embedding", p.pos, 0, err);
    for (long L = 0; !rc && p.blocks && L < p.layers; L++)
        rc = add_block(m, L, &p.blocks[L], &h, &p, err);
    if (!rc && !p.blocks) {
        snprintf(p.why, sizeof p.why, "no block stack with a token embedding in the names");
        for (size_t i = 0; i < l->n; i++) {
            struct split sp;
            split_name(l->rows[i].name, &sp);
            if (sp.index >= 0 && !strcmp(sp.prefix, p.stack))
                p.other += fg_st_row_numel(&l->rows[i]) * l->rows[i].count;
        }
    }
    if (!rc && p.final_norm && (rc = fg__add_norm(m, -1, "Final norm", p.hidden, FG_NORM_RMS,
                                                  err)) == 0)
        set_last(m, p.final_norm, 0);
    if (!rc && p.vocab)
        rc = fg__add_head(m, p.vocab, p.hidden, !p.head, false, false, err);
    if (!rc && p.head)
        set_last(m, p.head, 0);
    if (!rc)
        rc = add_rest(m, FG_NODE_VISION, "Tower", p.vision, 0, err);
    if (!rc)
        rc = add_rest(m, FG_NODE_OTHER, "Other", p.other, p.buffers, err);
    for (size_t i = 0; !rc && i < m->n_nodes; i++) {
        const struct fg_node *n = &m->nodes[i];
        if (n->kind == FG_NODE_ATTN && !m->kv_heads) {
            m->kv_heads = n->kv_heads;
            m->head_dim = n->head_dim;
        }
        if (n->kind == FG_NODE_MOE && !m->experts) {
            m->experts = n->experts;
            m->inter = n->inter;
        }
    }
    if (!rc) {
        fg__copy(m->reader, sizeof m->reader, "checkpoint tensors");
        m->certainty = FG_CERT_CHECKPOINT;
        say(m, l, &h, &p);
        if (p.why[0])
            fg__model_unsure(m, "checkpoint-structure", "every tensor is counted, but the "
                             "activations are not sized: %s", p.why);
    }
    free(p.blocks);
    return rc;
}

void fg__tensors_unused(const struct fg_st_layout *l, const struct fg_model *m, char *out,
                        size_t cap, uint64_t *elements)
{
    struct plan p;
    uint64_t beyond = 0, tower = 0;
    long lo = -1, hi = -1;
    bool has_tower = false;
    memset(&p, 0, sizeof p);
    *elements = 0;
    if (cap)
        out[0] = '\0';
    uint32_t built = fg_model_main_layers(m);
    for (size_t i = 0; i < m->n_nodes; i++)
        has_tower |= m->nodes[i].kind == FG_NODE_VISION || m->nodes[i].stack == FG_STACK_TOWER;
    find_stack(l, &p);
    for (size_t i = 0; i < l->n; i++) {
        const struct fg_st_row *r = &l->rows[i];
        struct split sp;
        split_name(r->name, &sp);
        uint64_t el = fg_st_row_numel(r) * r->count;
        if (!has_tower && fg_safetensors_group(r->name) == FG_ST_VISION) {
            tower += el;
        } else if (built && sp.index >= (long)built && !strcmp(sp.prefix, p.stack)) {
            beyond += el;
            lo = lo < 0 || sp.index < lo ? sp.index : lo;
            hi = sp.index > hi ? sp.index : hi;
        }
    }
    size_t o = 0;
    if (beyond && cap)
        o += (size_t)snprintf(out, cap, "blocks %ld-%ld under '%s', beyond the %u the model "
                              "class builds (multi-token-prediction layers): %" PRIu64
                              " parameters", lo, hi, p.stack, built, beyond);
    if (tower && o < cap)
        snprintf(out + o, cap - o, "%svision / audio tower tensors a text-only class does not "
                 "load: %" PRIu64 " parameters", o ? "; " : "", tower);
    *elements = beyond + tower;
}
