/*
 * arch.c - the architecture registry and the shared building blocks.
 * Parameter shapes follow the transformers modeling classes named in each
 * reader; the blocks here are the shapes common to all of them.
 */
#include "arch.h"

#include <stdio.h>
#include <string.h>

#include "fmt.h"

static const struct fg_arch *const tables[] = {
    fg__arch_decoder_table, fg__arch_moe_table,    fg__arch_legacy_table,
    fg__arch_encoder_table, fg__arch_hybrid_table, fg__arch_multimodal_table,
};

const struct fg_arch *fg__arch_find(const char *model_type)
{
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
        for (const struct fg_arch *a = tables[t]; a->model_type; a++)
            if (strcmp(a->model_type, model_type) == 0)
                return a;
    return NULL;
}

struct fg_node *fg__add_table(struct fg_model *m, enum fg_node_kind kind, const char *name,
                              uint64_t rows, uint64_t width, struct fg_err *err)
{
    struct fg_node *n = fg__model_add(m, kind, -1, name, err);
    if (!n)
        return NULL;
    n->params = rows * width;
    n->hidden = (uint32_t)width;
    n->width = (uint32_t)width;
    fg__fmt(n->desc, sizeof n->desc, "%llu x %llu", (unsigned long long)rows,
             (unsigned long long)width);
    return n;
}

int fg__add_embedding(struct fg_model *m, uint64_t vocab, uint64_t hidden, struct fg_err *err)
{
    return fg__add_table(m, FG_NODE_EMBED, "Embedding", vocab, hidden, err) ? 0 : FG_E_NOMEM;
}

int fg__add_norm(struct fg_model *m, int32_t layer, const char *name, uint64_t width,
                 enum fg_norm_kind kind, struct fg_err *err)
{
    struct fg_node *n = layer >= 0 ? fg__model_add_block(m, FG_NODE_NORM, layer, name, err)
                                   : fg__model_add(m, FG_NODE_NORM, layer, name, err);
    if (!n)
        return FG_E_NOMEM;
    n->params = width * (kind == FG_NORM_LN ? 2 : 1);
    n->width = (uint32_t)width;
    n->hidden = (uint32_t)width;
    fg__copy(n->desc, sizeof n->desc, kind == FG_NORM_RMS ? "RMSNorm" : "LayerNorm");
    return 0;
}

struct fg_node *fg__add_attention(struct fg_model *m, int32_t layer, const struct fg_attn_shape *s,
                                  struct fg_err *err)
{
    struct fg_node *n = fg__model_add_block(m, FG_NODE_ATTN, layer,
                                            s->cross ? "CrossAttention" : "Attention", err);
    if (!n)
        return NULL;
    uint64_t q = s->heads * s->head_dim, kv = s->kv_heads * s->head_dim;
    if (s->fused_qkv) {
        fg__node_linear(n, "qkv", s->hidden, q + 2 * kv, 1, s->qkv_bias);
    } else {
        fg__node_linear(n, "q", s->hidden, q, 1, s->qkv_bias);
        fg__node_linear(n, "k", s->hidden, kv, 1, s->qkv_bias);
        fg__node_linear(n, "v", s->hidden, kv, 1, s->qkv_bias);
    }
    fg__node_linear(n, "o", q, s->hidden, 1, s->o_bias);
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
    n->v_head_dim = (uint32_t)s->head_dim;
    n->window = (uint32_t)s->window;
    n->bidirectional = s->bidirectional;
    n->cross = s->cross;
    /* transformers' eager_attention_forward: softmax(dtype=float32) kept by its backward
     * and its cast to the compute dtype kept by the PV matmul, 4 + 2 B per score
     * (Llama-3.2-1B on H200: 6.03 B, tests/calibration/measured-h200.tsv) */
    n->eager_bytes = 6;
    const char *kind = s->kv_heads == s->heads ? "MHA" : s->kv_heads == 1 ? "MQA" : "GQA";
    if (s->window)
        fg__fmt(n->desc, sizeof n->desc, "%s %lluq/%llukv x%llu, window %llu", kind,
                 (unsigned long long)s->heads, (unsigned long long)s->kv_heads,
                 (unsigned long long)s->head_dim, (unsigned long long)s->window);
    else
        fg__fmt(n->desc, sizeof n->desc, "%s %lluq/%llukv x%llu", kind,
                 (unsigned long long)s->heads, (unsigned long long)s->kv_heads,
                 (unsigned long long)s->head_dim);
    return n;
}

struct fg_node *fg__add_mlp(struct fg_model *m, int32_t layer, const struct fg_mlp_shape *s,
                            struct fg_err *err)
{
    struct fg_node *n = fg__model_add_block(m, FG_NODE_MLP, layer, "MLP", err);
    if (!n)
        return NULL;
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
    return n;
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
        (rc = fg_cfg_u64(c, "num_key_value_heads|n_head_kv|num_kv_heads", m->heads, 1,
                         FG_MAX_HEADS, &kv, err)) ||
        (rc = fg_cfg_bool(c, "tie_word_embeddings", d->tie, &tie, err)))
        return rc;
    if (!fg_cfg_has(c, "head_dim") &&
        (rc = fg__check_heads(c, "hidden_size|n_embd|d_model|dim", m->hidden,
                              "num_attention_heads|n_head|num_heads|n_heads", m->heads, err)))
        return rc;
    if (m->heads % kv)
        return fg_err_set(err, FG_E_RANGE,
                          "%s: %llu attention heads are not a multiple of %llu key/value heads",
                          c->origin, (unsigned long long)m->heads, (unsigned long long)kv);
    m->kv_heads = kv;
    m->tied = tie;
    if ((rc = fg_cfg_u64(c, "head_dim", m->hidden / m->heads, 1, 1u << 14, &m->head_dim, err)))
        return rc;
    return 0;
}

const char *fg__cfg_key_used(const struct fg_cfg *c, const char *keys, char *buf, size_t len)
{
    const char *first_end = strchr(keys, '|');
    for (const char *p = keys;;) {
        const char *e = strchr(p, '|');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        fg__fmt(buf, len, "%.*s", (int)n, p);
        if (fg_cfg_has(c, buf))
            return buf;
        if (!e)
            break;
        p = e + 1;
    }
    fg__fmt(buf, len, "%.*s", (int)(first_end ? (size_t)(first_end - keys) : strlen(keys)), keys);
    return buf;
}

int fg__check_heads(const struct fg_cfg *c, const char *hidden_key, uint64_t hidden,
                    const char *heads_key, uint64_t heads, struct fg_err *err)
{
    char hk[64], nk[64];
    if (hidden % heads == 0)
        return 0;
    return fg_err_set(err, FG_E_RANGE, "%s: key '%s' = %llu is not divisible by key '%s' = %llu "
                      "(attention heads)", c->origin, fg__cfg_key_used(c, hidden_key, hk, sizeof hk),
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
