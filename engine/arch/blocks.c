/*
 * blocks.c - the building blocks every family reader shares (arch.h): the
 * shapes common to all transformers modeling classes (embedding, norm,
 * attention, MLP, MLA, MoE, head, pooler) and the config reads most readers
 * make (core sizes, heads, sliding windows, labels).  It calls nothing in
 * the readers or the registry, so the readers depend on it and not on each
 * other.
 */
#include "arch/arch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "util/fmt.h"
int fg__add_table(struct fg_model *m, enum fg_node_kind kind, const char *name,
                  uint64_t rows, uint64_t width, struct fg_node **out, struct fg_err *err)
{
    struct fg_node *n = fg__model_add(m, kind, -1, name, err);
    if (!n)
        return FG_E_NOMEM; /* err says so */
    n->params = rows * width;
    n->hidden = (uint32_t)width;
    n->width = (uint32_t)width;
    fg__fmt(n->desc, sizeof n->desc, "%llu x %llu", (unsigned long long)rows,
             (unsigned long long)width);
    if (out)
        *out = n;
    return 0;
}

int fg__add_linear(struct fg_model *m, enum fg_node_kind kind, int32_t layer, const char *name,
                   const char *role, uint64_t in, uint64_t out, bool bias,
                   struct fg_node **node, struct fg_err *err)
{
    struct fg_node *n = layer >= 0 ? fg__model_add_block(m, kind, layer, name, err)
                                   : fg__model_add(m, kind, layer, name, err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, role, in, out, 1, bias);
    n->hidden = (uint32_t)in;
    n->width = (uint32_t)out;
    fg__fmt(n->desc, sizeof n->desc, "%llu %s %llu", (unsigned long long)in,
            kind == FG_NODE_HEAD ? "x" : "->", (unsigned long long)out);
    if (node)
        *node = n;
    return 0;
}

int fg__check_top_k(const struct fg_cfg *c, uint64_t top_k, const char *tk, uint64_t experts,
                    const char *ek, struct fg_err *err)
{
    if (top_k <= experts)
        return 0;
    return fg_err_set(err, FG_E_RANGE, "%s: key '%s' %llu is more than the %llu experts (%s)",
                      c->origin, tk, (unsigned long long)top_k, (unsigned long long)experts, ek);
}

int fg__add_pooler(struct fg_model *m, uint64_t hidden, struct fg_err *err)
{
    struct fg_node *n;
    int rc = fg__add_table(m, FG_NODE_OTHER, "Pooler", hidden + 1, hidden, &n, err);
    if (rc)
        return rc;
    fg__fmt(n->desc, sizeof n->desc, "dense %llu x %llu + bias", (unsigned long long)hidden,
             (unsigned long long)hidden);
    return 0;
}

int fg__add_embedding(struct fg_model *m, uint64_t vocab, uint64_t hidden, struct fg_err *err)
{
    return fg__add_table(m, FG_NODE_EMBED, "Embedding", vocab, hidden, NULL, err);
}

int fg__add_norm(struct fg_model *m, int32_t layer, const char *name, uint64_t width,
                 enum fg_norm_kind kind, struct fg_err *err)
{
    struct fg_node *n = layer >= 0 ? fg__model_add_block(m, FG_NODE_NORM, layer, name, err)
                                   : fg__model_add(m, FG_NODE_NORM, layer, name, err);
    if (!n)
        return FG_E_NOMEM;
    n->params = kind == FG_NORM_LN_NOPARAM ? 0 : width * (kind == FG_NORM_LN ? 2 : 1);
    n->width = (uint32_t)width;
    n->hidden = (uint32_t)width;
    fg__copy(n->desc, sizeof n->desc, kind == FG_NORM_RMS          ? "RMSNorm"
                                      : kind == FG_NORM_LN_NOPARAM ? "LayerNorm (no weights)"
                                                                   : "LayerNorm");
    return 0;
}

int fg__add_attention(struct fg_model *m, int32_t layer, const struct fg_attn_shape *s,
                      struct fg_node **out, struct fg_err *err)
{
    struct fg_node *n = fg__model_add_block(m, FG_NODE_ATTN, layer,
                                            s->cross ? "CrossAttention" : "Attention", err);
    if (!n)
        return FG_E_NOMEM; /* err says so */
    uint64_t vd = s->v_head_dim ? s->v_head_dim : s->head_dim;
    uint64_t q = s->heads * s->head_dim, kv = s->kv_heads * s->head_dim;
    if (s->fused_qkv) {
        fg__node_linear(n, "qkv", s->hidden, q + kv + s->kv_heads * vd, 1, s->qkv_bias);
    } else {
        fg__node_linear(n, "q", s->hidden, q, 1, s->qkv_bias);
        fg__node_linear(n, "k", s->hidden, kv, 1, s->qkv_bias);
        fg__node_linear(n, "v", s->hidden, s->kv_heads * vd, 1, s->qkv_bias);
    }
    fg__node_linear(n, "o", s->heads * vd, s->hidden, 1, s->o_bias);
    uint64_t per = s->qk_norm_kind == FG_NORM_LN ? 2 : 1;
    if (s->qk_norm == 1)
        n->params += 2 * s->head_dim * per;
    else if (s->qk_norm == 2)
        n->params += (q + kv) * per;
    n->hidden = (uint32_t)s->hidden;
    n->width = (uint32_t)s->hidden;
    n->heads = (uint32_t)s->heads;
    n->kv_heads = (uint32_t)s->kv_heads;
    n->head_dim = (uint32_t)s->head_dim;
    n->v_head_dim = (uint32_t)vd;
    n->window = (uint32_t)s->window;
    n->bidirectional = s->bidirectional;
    n->cross = s->cross;
    /* transformers' eager_attention_forward: softmax(dtype=float32) kept by its backward
     * and its cast to the compute dtype kept by the PV matmul, 4 + 2 B per score
     * (Llama-3.2-1B on H200: 6.03 B, tests/calibration/measured-h200.tsv) */
    n->eager_bytes = 6;
    const char *kind = s->kv_heads == s->heads ? "MHA" : s->kv_heads == 1 ? "MQA" : "GQA";
    char dims[48];
    if (vd != s->head_dim)
        fg__fmt(dims, sizeof dims, "x%llu (v %llu)", (unsigned long long)s->head_dim,
                 (unsigned long long)vd);
    else
        fg__fmt(dims, sizeof dims, "x%llu", (unsigned long long)s->head_dim);
    if (s->window)
        fg__fmt(n->desc, sizeof n->desc, "%s %lluq/%llukv %s, window %llu", kind,
                 (unsigned long long)s->heads, (unsigned long long)s->kv_heads, dims,
                 (unsigned long long)s->window);
    else
        fg__fmt(n->desc, sizeof n->desc, "%s %lluq/%llukv %s", kind,
                 (unsigned long long)s->heads, (unsigned long long)s->kv_heads, dims);
    if (out)
        *out = n;
    return 0;
}

int fg__add_mlp(struct fg_model *m, int32_t layer, const struct fg_mlp_shape *s,
                struct fg_node **out, struct fg_err *err)
{
    struct fg_node *n = fg__model_add_block(m, FG_NODE_MLP, layer, "MLP", err);
    if (!n)
        return FG_E_NOMEM; /* err says so */
    if (s->gated && s->fused_gate_up) {
        fg__node_linear(n, "gate_up", s->hidden, 2 * s->inter, 1, s->bias);
    } else if (s->gated) {
        fg__node_linear(n, "gate", s->hidden, s->inter, 1, s->bias);
        fg__node_linear(n, "up", s->hidden, s->inter, 1, s->bias);
    } else {
        fg__node_linear(n, "up", s->hidden, s->inter, 1, s->bias);
    }
    fg__node_linear(n, "down", s->inter, s->hidden, 1, s->bias);
    n->hidden = (uint32_t)s->hidden;
    n->width = (uint32_t)s->hidden;
    n->inter = (uint32_t)s->inter;
    n->gated = s->gated;
    fg__fmt(n->desc, sizeof n->desc, "%s %llu", s->gated ? "gated" : "plain",
             (unsigned long long)s->inter);
    if (out)
        *out = n;
    return 0;
}

/* k_proj / v_proj reading from-wide states: their inputs, and the node's count, follow. */
static void retarget_kv(struct fg_node *n, uint64_t from)
{
    for (uint32_t i = 0; i < n->nlin; i++) {
        struct fg_linear *l = &n->lin[i];
        if (strcmp(l->role, "k") && strcmp(l->role, "v"))
            continue;
        n->params = n->params - (uint64_t)l->in * l->out * l->count + from * l->out * l->count;
        l->in = (uint32_t)from;
    }
}

static int add_step(struct fg_model *m, int32_t layer, const struct fg_block_step *s,
                    struct fg_err *err)
{
    struct fg_node *n = NULL;
    int rc = FG_E_INVAL;
    switch (s->kind) {
    case FG_STEP_NORM:
        return fg__add_norm(m, layer, "Norm", s->width ? s->width : m->hidden, s->norm, err);
    case FG_STEP_ATTN:
        rc = fg__add_attention(m, layer, s->attn, &n, err);
        if (!rc && s->kdim)
            retarget_kv(n, s->kdim);
        break;
    case FG_STEP_MLP:
        rc = fg__add_mlp(m, layer, s->mlp, &n, err);
        break;
    case FG_STEP_CALL:
        return s->call(m, layer, s->ctx, err);
    }
    if (!rc) {
        n->params += s->extra + s->buffers;
        n->buffers += s->buffers;
    }
    return rc;
}

int fg__add_layers_alike(struct fg_model *m, uint64_t n, fg_layer_fn fn, fg_layers_alike_fn alike,
                         const void *ctx, struct fg_err *err)
{
    size_t first = m->n_nodes;
    for (uint64_t l = 0; l < n; l++) {
        uint64_t same = 0;
        while (l > 0 && l + same < n && (!alike || alike(ctx, l - 1, l + same)))
            same++;
        if (same && fg__model_repeat_block(m, first, (int32_t)l, (uint32_t)same)) {
            l += same - 1;
            continue;
        }
        first = m->n_nodes;
        int rc = fn(m, (int32_t)l, ctx, err);
        if (rc)
            return rc;
    }
    return 0;
}

int fg__add_layers(struct fg_model *m, uint64_t n, fg_layer_fn fn, const void *ctx,
                   struct fg_err *err)
{
    return fg__add_layers_alike(m, n, fn, NULL, ctx, err);
}

struct steps {
    const struct fg_block_step *steps;
    size_t n;
};

static int add_steps(struct fg_model *m, int32_t layer, const void *ctx, struct fg_err *err)
{
    const struct steps *s = ctx;
    int rc = 0;
    for (size_t i = 0; !rc && i < s->n; i++)
        rc = add_step(m, layer, &s->steps[i], err);
    return rc;
}

int fg__add_blocks(struct fg_model *m, const struct fg_block_step *steps, size_t n,
                   struct fg_err *err)
{
    struct steps s = {steps, n};
    return fg__add_layers(m, m->layers, add_steps, &s, err);
}

int fg__add_mla(struct fg_model *m, int32_t layer, const struct fg_mla_shape *s,
                struct fg_node **out, struct fg_err *err)
{
    struct fg_node *n = fg__model_add_block(m, FG_NODE_MLA, layer, "Attention", err);
    if (!n)
        return FG_E_NOMEM; /* err says so */
    n->eager_bytes = 6; /* eager_attention_forward, as fg__add_attention */
    uint64_t h = s->hidden, heads = s->heads, qhd = s->nope + s->rope;
    if (s->q_lora) {
        fg__node_linear(n, "q_a", h, s->q_lora, 1, s->bias);
        fg__node_linear(n, "q_b", s->q_lora, heads * qhd, 1, false);
        n->params += s->q_lora; /* q_a_layernorm */
    } else {
        fg__node_linear(n, "q", h, heads * qhd, 1, false);
    }
    fg__node_linear(n, "kv_a", h, s->kv_lora + s->rope, 1, s->bias);
    n->params += s->kv_lora; /* kv_a_layernorm */
    fg__node_linear(n, "kv_b", s->kv_lora, heads * (s->nope + s->v), 1, false);
    fg__node_linear(n, "o", heads * s->v, h, 1, s->bias);
    n->hidden = (uint32_t)h;
    n->width = (uint32_t)h;
    n->heads = (uint32_t)heads;
    n->kv_heads = (uint32_t)heads;
    n->head_dim = (uint32_t)qhd;
    n->v_head_dim = (uint32_t)s->v;
    n->q_lora = (uint32_t)s->q_lora;
    n->kv_lora = (uint32_t)s->kv_lora;
    n->rope_dim = (uint32_t)s->rope;
    fg__fmt(n->desc, sizeof n->desc, "MLA %lluh q%llu/kv%llu x%llu", (unsigned long long)heads,
             (unsigned long long)s->q_lora, (unsigned long long)s->kv_lora,
             (unsigned long long)qhd);
    if (out)
        *out = n;
    return 0;
}

int fg__add_moe(struct fg_model *m, int32_t layer, const struct fg_moe_shape *s,
                struct fg_node **out, struct fg_err *err)
{
    struct fg_node *n = fg__model_add_block(m, FG_NODE_MOE, layer, "MoE", err);
    if (!n)
        return FG_E_NOMEM; /* err says so */
    uint64_t h = s->hidden, e = s->experts, w = s->inter, sh = s->shared_inter;
    fg__node_linear(n, "router", h, e, 1, s->router_bias);
    if (s->gated && s->fused_gate_up) {
        fg__node_linear(n, "gate_up", h, 2 * w, e, s->expert_bias);
    } else {
        if (s->gated)
            fg__node_linear(n, "gate", h, w, e, s->expert_bias);
        fg__node_linear(n, "up", h, w, e, s->expert_bias);
    }
    fg__node_linear(n, "down", w, h, e, s->expert_bias);
    if (sh) {
        if (s->gated)
            fg__node_linear(n, "shared_gate", h, sh, 1, false);
        fg__node_linear(n, "shared_up", h, sh, 1, false);
        fg__node_linear(n, "shared_down", sh, h, 1, false);
        if (s->shared_gate)
            fg__node_linear(n, "shexp_gate", h, 1, 1, false);
    }
    if (s->score_bias) {
        n->params += e;
        n->buffers += e;
    }
    n->hidden = (uint32_t)h;
    n->width = (uint32_t)h;
    n->inter = (uint32_t)w;
    n->experts = (uint32_t)e;
    n->top_k = (uint32_t)s->top_k;
    n->gated = s->gated;
    n->lora_experts = s->lora_experts;
    n->shared = sh ? s->shared_n : 0;
    n->shared_inter = (uint32_t)sh;
    if (n->shared)
        fg__fmt(n->desc, sizeof n->desc, "%llu experts top-%llu, %llu wide, %u shared",
                 (unsigned long long)e, (unsigned long long)s->top_k, (unsigned long long)w,
                 n->shared);
    else
        fg__fmt(n->desc, sizeof n->desc, "%llu experts top-%llu, %llu wide",
                 (unsigned long long)e, (unsigned long long)s->top_k, (unsigned long long)w);
    if (out)
        *out = n;
    return 0;
}

int fg__add_head(struct fg_model *m, uint64_t vocab, uint64_t hidden, bool tied,
                 bool stored_when_tied, bool bias, struct fg_err *err)
{
    struct fg_node *n = fg__model_add(m, FG_NODE_HEAD, -1, "LM head", err);
    if (!n)
        return FG_E_NOMEM;
    n->width = (uint32_t)vocab;
    n->hidden = (uint32_t)hidden;
    m->tied = tied;
    if (!tied || stored_when_tied)
        n->params = vocab * hidden;
    if (bias)
        n->params += vocab;
    if (tied && stored_when_tied) {
        n->alias = vocab * hidden;
        fg__model_rule(m, "tied lm_head written to the checkpoint anyway", 0);
    }
    fg__fmt(n->desc, sizeof n->desc, "%llu x %llu%s", (unsigned long long)hidden,
             (unsigned long long)vocab,
             tied ? (stored_when_tied ? ", tied but stored" : ", tied to embedding") : "");
    return 0;
}

int fg__read_core(const struct fg_cfg *c, struct fg_model *m, const struct fg_core_defaults *d,
                  struct fg_err *err)
{
    int rc;
    uint64_t kv;
    bool tie;
    if ((rc = fg_cfg_u64(c, "vocab_size|padded_vocab_size|n_vocab", d->vocab, 1, FG_MAX_VOCAB,
                         &m->vocab, err)) ||
        (rc = fg_cfg_u64(c, "hidden_size|n_embd|d_model|dim", d->hidden, 1, FG_MAX_HIDDEN,
                         &m->hidden, err)) ||
        (rc = fg_cfg_u64(c, "num_hidden_layers|n_layer|num_layers|n_layers", d->layers, 1,
                         FG_MAX_LAYERS, &m->layers, err)) ||
        (rc = fg_cfg_u64(c, "num_attention_heads|n_head|num_heads|n_heads", d->heads, 1,
                         FG_MAX_HEADS, &m->heads, err)) ||
        (rc = fg_cfg_u64(c, "intermediate_size|n_inner|ffn_dim|ffn_hidden_size",
                         d->inter ? d->inter : 4 * m->hidden, 1, FG_MAX_INTER, &m->inter, err)) ||
        (rc = fg_cfg_u64(c, "max_position_embeddings|n_positions|seq_length|max_seq_len",
                         d->max_pos, 1, FG_MAX_POS, &m->max_pos, err)) ||
        (rc = fg_cfg_u64(c, "num_key_value_heads|n_head_kv|num_kv_heads",
                         d->kv_heads ? d->kv_heads : m->heads, 1, FG_MAX_HEADS, &kv, err)) ||
        (rc = fg_cfg_bool(c, "tie_word_embeddings", d->tie, &tie, err)))
        return rc;
    if (!fg_cfg_has(c, "head_dim") && !d->head_dim &&
        (rc = fg__check_heads(c, "hidden_size|n_embd|d_model|dim", m->hidden,
                              "num_attention_heads|n_head|num_heads|n_heads", m->heads, err)))
        return rc;
    if (m->heads % kv)
        return fg_err_set(err, FG_E_RANGE,
                          "%s: %llu attention heads are not a multiple of %llu key/value heads",
                          c->origin, (unsigned long long)m->heads, (unsigned long long)kv);
    m->kv_heads = kv;
    m->tied = tie;
    if ((rc = fg_cfg_u64(c, "head_dim", d->head_dim ? d->head_dim : m->hidden / m->heads, 1,
                         1u << 14, &m->head_dim, err)))
        return rc;
    return 0;
}

const cJSON *fg__cfg_item(const struct fg_cfg *c, const char *key)
{
    return fg__cfg_raw(c, key);
}

const char *fg__cfg_key_used(const struct fg_cfg *c, const char *keys, char *buf, size_t len)
{
    const char *first_end = strchr(keys, '|');
    if (fg_cfg_key(c, keys, buf, len))
        return buf;
    fg__fmt(buf, len, "%.*s", (int)(first_end ? (size_t)(first_end - keys) : strlen(keys)), keys);
    return buf;
}

int fg__check_heads(const struct fg_cfg *c, const char *hidden_key, uint64_t hidden,
                    const char *heads_key, uint64_t heads, struct fg_err *err)
{
    char hk[64], nk[64], why[256];
    if (hidden % heads == 0)
        return 0;
    if (fg_cfg_class_refusal(c, hidden_key, heads_key, why, sizeof why))
        return fg_err_set(err, FG_E_RANGE, "%s: %s (key '%s' = %llu, key '%s' = %llu)", c->origin,
                          why, fg__cfg_key_used(c, hidden_key, hk, sizeof hk),
                          (unsigned long long)hidden, fg__cfg_key_used(c, heads_key, nk, sizeof nk),
                          (unsigned long long)heads);
    return fg_err_set(err, FG_E_RANGE, "%s: key '%s' = %llu is not divisible by key '%s' = %llu "
                      "(attention heads)", c->origin, fg__cfg_key_used(c, hidden_key, hk,
                                                                       sizeof hk),
                      (unsigned long long)hidden, fg__cfg_key_used(c, heads_key, nk, sizeof nk),
                      (unsigned long long)heads);
}

int fg__read_windows(const struct fg_cfg *c, uint64_t layers, uint64_t *window, uint64_t pattern,
                     bool honour_use_sliding_window, struct fg_err *err)
{
    uint64_t sw = 0;
    bool use = true;
    int rc;
    memset(window, 0, layers * sizeof *window);
    if ((rc = fg_cfg_u64(c, "sliding_window", 0, 0, FG_MAX_POS, &sw, err)))
        return rc;
    if (honour_use_sliding_window && (rc = fg_cfg_bool(c, "use_sliding_window", false, &use, err)))
        return rc;
    if (!sw || !use)
        return 0;
    const char *types[FG_MAX_LAYERS];
    size_t nt = 0;
    if ((rc = fg_cfg_str_array(c, "layer_types", types, FG_MAX_LAYERS, &nt, err)))
        return rc;
    if (nt) {
        if (nt != layers)
            return fg_err_set(err, FG_E_RANGE, "%s: layer_types has %zu entries for %llu layers",
                              c->origin, nt, (unsigned long long)layers);
        for (size_t i = 0; i < nt; i++)
            window[i] = strcmp(types[i], "sliding_attention") == 0 ? sw : 0;
        return 0;
    }
    for (uint64_t i = 0; i < layers; i++)
        window[i] = pattern == 0 ? sw : ((i + 1) % pattern != 0 ? sw : 0);
    return 0;
}

int fg__read_full_layers(const struct fg_cfg *c, uint64_t layers, uint64_t period, bool *full,
                         struct fg_err *err)
{
    const char *t[FG_MAX_LAYERS];
    size_t n = 0;
    int rc = fg_cfg_str_array(c, "layer_types", t, FG_MAX_LAYERS, &n, err);
    if (rc)
        return rc;
    if (n && n != layers)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'layer_types' has %zu entries for %llu "
                          "layers", c->origin, n, (unsigned long long)layers);
    for (uint64_t l = 0; l < layers; l++) {
        if (!n)
            full[l] = (l + 1) % period == 0;
        else if (!strcmp(t[l], "full_attention") || !strcmp(t[l], "sliding_attention"))
            full[l] = !strcmp(t[l], "full_attention");
        else
            return fg_err_set(err, FG_E_RANGE, "%s: key 'layer_types' has unknown kind '%s' at "
                              "layer %llu", c->origin, t[l], (unsigned long long)l);
    }
    return 0;
}

unsigned fg__cfg_tf_version(const struct fg_cfg *c)
{
    const char *v = NULL;
    if (fg_cfg_str(c, "transformers_version", NULL, &v, NULL) || !v)
        return 0;
    char *end;
    unsigned long major = strtoul(v, &end, 10);
    if (end == v || *end != '.')
        return 0;
    const char *p = end + 1;
    unsigned long minor = strtoul(p, &end, 10);
    if (end == p || major > 1000 || minor > 999)
        return 0;
    return (unsigned)(major * 1000 + minor);
}

bool fg__class_is(const char *name, const char *prefixes, const char *suffix)
{
    for (const char *p = prefixes;;) {
        size_t n = strcspn(p, "|");
        if (strncmp(name, p, n) == 0 && strcmp(name + n, suffix) == 0)
            return true;
        if (!p[n])
            return false;
        p += n + 1;
    }
}

int fg__cfg_has_arch(const struct fg_cfg *c, const char *cls, bool *out, struct fg_err *err)
{
    const char *a[16];
    size_t n = 0;
    int rc = fg_cfg_str_array(c, "architectures", a, 16, &n, err);
    *out = false;
    for (size_t i = 0; i < n && i < 16; i++)
        if (strcmp(a[i], cls) == 0)
            *out = true;
    return rc;
}

int fg__cfg_headless(const struct fg_cfg *c, bool *out, struct fg_err *err)
{
    const char *a[16];
    size_t n = 0;
    int rc = fg_cfg_str_array(c, "architectures", a, 16, &n, err);
    *out = false;
    if (rc || n == 0)
        return rc;
    for (size_t i = 0; i < n && i < 16; i++) {
        size_t len = strlen(a[i]);
        bool base = len > 5 && !strcmp(a[i] + len - 5, "Model") && !strstr(a[i], "For") &&
                    !strstr(a[i], "LMHead");
        if (!base)
            return 0;
    }
    *out = true;
    return 0;
}

int fg__read_num_labels(const struct fg_cfg *c, uint64_t *out, struct fg_err *err)
{
    struct fg_cfg labels;
    if (fg_cfg_has(c, "num_labels"))
        return fg_cfg_u64(c, "num_labels", 2, 1, 1u << 20, out, err);
    *out = 2;
    if (fg_cfg_has(c, "id2label")) {
        size_t n = 0;
        if (!fg_cfg_child(c, "id2label", &labels, err))
            return err ? err->code : FG_E_TYPE;
        (void)fg_cfg_form(c, "id2label", &n);
        if (n < 1)
            return fg_err_set(err, FG_E_RANGE, "%s: key 'id2label' is empty", c->origin);
        *out = (uint64_t)n;
    }
    return 0;
}

/*
 * NemotronHMamba2Mixer (= Zamba2MambaMixer shapes): with I = heads x head_dim
 * and conv_dim = I + 2 x groups x state,
 *   in_proj  hidden -> I + conv_dim + heads   (z, xBC, dt)
 *   conv1d   depthwise over conv_dim channels, kernel conv_kernel (+ bias)
 *   dt_bias, A_log, D   one each per head
 *   norm     gated RMSNorm over I (weight only)
 *   out_proj I -> hidden
 */
int fg__add_mamba2(struct fg_model *m, int32_t layer, const struct fg_mamba2_shape *s,
                   struct fg_err *err)
{
    struct fg_node *n = fg__model_add_block(m, FG_NODE_MAMBA2, layer, "Mamba", err);
    if (!n)
        return FG_E_NOMEM;
    uint64_t inner = s->heads * s->head_dim, conv_dim = inner + 2 * s->groups * s->state;
    fg__node_linear(n, "in_proj", s->hidden, inner + conv_dim + s->heads, 1, s->proj_bias);
    fg__node_linear(n, "out_proj", inner, s->hidden, 1, s->proj_bias);
    n->params += conv_dim * s->kernel + (s->conv_bias ? conv_dim : 0);
    n->params += 3 * s->heads + (s->no_norm ? 0 : inner);
    n->hidden = (uint32_t)s->hidden;
    n->width = (uint32_t)s->hidden;
    n->ssm_heads = (uint32_t)s->heads;
    n->ssm_head_dim = (uint32_t)s->head_dim;
    n->groups = (uint32_t)s->groups;
    n->state = (uint32_t)s->state;
    n->conv_kernel = (uint32_t)s->kernel;
    n->chunk = (uint32_t)s->chunk;
    fg__fmt(n->desc, sizeof n->desc, "%llu heads x%llu, %llu groups, state %llu",
             (unsigned long long)s->heads, (unsigned long long)s->head_dim,
             (unsigned long long)s->groups, (unsigned long long)s->state);
    return 0;
}
