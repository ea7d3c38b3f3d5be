/*
 * blt.c - the Byte Latent Transformer (blt: BltForCausalLM, transformers
 * models/blt/modeling_blt.py @015e6876, configuration_blt.py @00d18978): a byte-level local
 * encoder, a global transformer over patches, a local decoder back to bytes, hash n-gram
 * embeddings, and the frozen entropy model (patcher) that cuts the bytes into patches.
 *
 * Each part has its own sub-config (encoder_config, global_config, decoder_config,
 * patcher_config) with its own widths; the layers are numbered encoder, global, decoder in
 * the order they run.
 */
#include <stdio.h>
#include <string.h>

#include "arch/hybrid/ssm.h"
#include "util/fmt.h"

/* One part's transformer sizes (Blt*Config: head_dim = hidden / heads, kv heads default to
 * heads, intermediate_size falls back to int(8 x hidden / 3) when 0). */
struct blt_part {
    uint64_t vocab, hidden, heads, kv, layers, inter, cross_k, hidden_global;
    bool cross_all;
};

struct blt_defaults {
    const char *key;
    uint64_t hidden, heads, layers, inter;
    bool cross_all;
};

static const struct blt_defaults enc_def = {"encoder_config", 1024, 16, 1, 2816, false};
static const struct blt_defaults dec_def = {"decoder_config", 1024, 16, 9, 2816, true};
static const struct blt_defaults glo_def = {"global_config", 2048, 16, 25, 5632, false};
static const struct blt_defaults pat_def = {"patcher_config", 768, 12, 14, 2048, false};

static int read_part(const struct fg_cfg *root, const struct blt_defaults *d, struct blt_part *p,
                     struct fg_err *err)
{
    struct fg_cfg c;
    int rc;
    if (!fg_cfg_child(root, d->key, &c, err)) {
        if (err && err->code)
            return err->code;
        c = *root;
        c.obj = NULL; /* absent: every read takes its default */
        c.index = NULL;
    }
    if ((rc = fg_cfg_u64(&c, "vocab_size", 260, 1, FG_MAX_VOCAB, &p->vocab, err)) ||
        (rc = fg_cfg_u64(&c, "hidden_size", d->hidden, 1, FG_MAX_HIDDEN, &p->hidden, err)) ||
        (rc = fg_cfg_u64(&c, "num_attention_heads", d->heads, 1, FG_MAX_HEADS, &p->heads, err)) ||
        (rc = fg_cfg_u64(&c, "num_key_value_heads", p->heads, 1, FG_MAX_HEADS, &p->kv, err)) ||
        (rc = fg_cfg_u64(&c, "num_hidden_layers", d->layers, 0, FG_MAX_LAYERS, &p->layers, err)) ||
        (rc = fg_cfg_u64(&c, "intermediate_size", d->inter, 0, FG_MAX_INTER, &p->inter, err)) ||
        (rc = fg_cfg_u64(&c, "cross_attn_k", 2, 1, 64, &p->cross_k, err)) ||
        (rc = fg_cfg_u64(&c, "hidden_size_global", 2048, 1, FG_MAX_HIDDEN, &p->hidden_global,
                         err)) ||
        (rc = fg_cfg_bool(&c, "cross_attn_all_layers", d->cross_all, &p->cross_all, err)))
        return rc;
    if (!p->inter)
        p->inter = 8 * p->hidden / 3;
    if (p->hidden % p->heads || p->heads % p->kv)
        return fg_err_set(err, FG_E_RANGE, "%s: %s: hidden_size %llu must divide into "
                          "num_attention_heads %llu, a multiple of num_key_value_heads %llu",
                          root->origin, d->key, (unsigned long long)p->hidden,
                          (unsigned long long)p->heads, (unsigned long long)p->kv);
    return 0;
}

/* BltTransformerLayer: input_layernorm, BltSelfAttention (q / k / v / o without bias),
 * post_attention_layernorm, BltMLP (gate / up / down without bias). */
static int add_layer(struct fg_model *m, int32_t li, const struct blt_part *p,
                     struct fg_err *err)
{
    const struct fg_attn_shape a = {.hidden = p->hidden, .heads = p->heads, .kv_heads = p->kv,
                                    .head_dim = p->hidden / p->heads};
    const struct fg_mlp_shape f = {.hidden = p->hidden, .inter = p->inter, .gated = true};
    int rc;
    if ((rc = fg__add_norm(m, li, "Norm", p->hidden, FG_NORM_RMS, err)) ||
        (rc = fg__add_attention(m, li, &a, NULL, err)) ||
        (rc = fg__add_norm(m, li, "Norm", p->hidden, FG_NORM_RMS, err)))
        return rc;
    return fg__add_mlp(m, li, &f, NULL, err);
}

/* BltCrossAttention: q_norm and k_norm (hidden each), q / k / v / o without bias, all in
 * the part's own width. */
static int add_cross(struct fg_model *m, int32_t li, const struct blt_part *p,
                     struct fg_err *err)
{
    const struct fg_attn_shape a = {.hidden = p->hidden, .heads = p->heads, .kv_heads = p->kv,
                                    .head_dim = p->hidden / p->heads, .cross = true};
    struct fg_node *n;
    int rc = fg__add_attention(m, li, &a, &n, err);
    if (rc == 0)
        n->params += 2 * p->hidden;
    return rc;
}

/* BltLocalEncoder: embed_tokens, its layers, then (after the last layer, or after each with
 * cross_attn_all_layers) patch_embedding_projection hidden -> hidden x k feeding a
 * BltCrossAttention; the projection is one module, the cross layers one or one per layer. */
static int add_encoder(struct fg_model *m, const struct blt_part *e, int32_t *li,
                       struct fg_err *err)
{
    int rc = fg__add_table(m, FG_NODE_EMBED, "Byte embedding", e->vocab, e->hidden, NULL, err);
    for (uint64_t l = 0; rc == 0 && l < e->layers; l++, (*li)++) {
        if ((rc = add_layer(m, *li, e, err)))
            break;
        if (l + 1 == e->layers &&
            (rc = fg__add_linear(m, FG_NODE_OTHER, *li, "Patch projection", "proj", e->hidden,
                                 e->hidden * e->cross_k, false, NULL, err)))
            break;
        if (l + 1 == e->layers || e->cross_all)
            rc = add_cross(m, *li, e, err);
    }
    return rc;
}

/* BltLocalDecoder: patch_embedding_projection hidden_size_global -> hidden x k, a
 * BltCrossAttention before layer 0 (before every layer with cross_attn_all_layers), its
 * layers, norm. */
static int add_decoder(struct fg_model *m, const struct blt_part *d, int32_t *li,
                       struct fg_err *err)
{
    int rc = fg__add_linear(m, FG_NODE_OTHER, -1, "Patch projection", "proj", d->hidden_global,
                            d->hidden * d->cross_k, false, NULL, err);
    for (uint64_t l = 0; rc == 0 && l < d->layers; l++, (*li)++) {
        if ((l == 0 || d->cross_all) && (rc = add_cross(m, *li, d, err)))
            break;
        rc = add_layer(m, *li, d, err);
    }
    if (rc == 0)
        rc = fg__add_norm(m, -1, "Final norm", d->hidden, FG_NORM_RMS, err);
    return rc;
}

/* BltPatcher (built when patch_in_forward; frozen, requires_grad False): embed_tokens,
 * its layers, norm, lm_head hidden -> vocab; counted as one node, it keeps no activations
 * for backward. */
static int add_patcher(struct fg_model *m, const struct blt_part *p, struct fg_err *err)
{
    uint64_t h = p->hidden, hd = h / p->heads;
    uint64_t layer = 2 * h + h * p->heads * hd + 2 * h * p->kv * hd + p->heads * hd * h +
                     3 * h * p->inter;
    struct fg_node *n = fg__model_add(m, FG_NODE_OTHER, -1, "Patcher", err);
    if (!n)
        return FG_E_NOMEM;
    n->params = 2 * p->vocab * h + h + p->layers * layer;
    n->hidden = n->width = (uint32_t)h;
    fg__fmt(n->desc, sizeof n->desc, "entropy model %llu x %llu, frozen",
            (unsigned long long)p->layers, (unsigned long long)h);
    return 0;
}

int fg__ssm_read_blt(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                     struct fg_err *err)
{
    (void)spec;
    struct blt_part e, d, g, p;
    uint64_t cross_k, hash_vocab, hash_fns, groups[32];
    size_t ng = 0;
    bool patch_in_forward;
    int rc;
    if ((rc = read_part(c, &enc_def, &e, err)) || (rc = read_part(c, &dec_def, &d, err)) ||
        (rc = read_part(c, &glo_def, &g, err)) || (rc = read_part(c, &pat_def, &p, err)) ||
        (rc = fg_cfg_u64(c, "vocab_size", 260, 1, FG_MAX_VOCAB, &m->vocab, err)) ||
        (rc = fg_cfg_u64(c, "max_position_embeddings", 4096, 1, FG_MAX_POS, &m->max_pos, err)) ||
        (rc = fg_cfg_u64(c, "cross_attn_k", 2, 1, 64, &cross_k, err)) ||
        (rc = fg_cfg_u64(c, "encoder_hash_byte_group_vocab", 500002, 1, FG_MAX_VOCAB,
                         &hash_vocab, err)) ||
        (rc = fg_cfg_u64(c, "encoder_hash_byte_group_nb_functions", 1, 1, 64, &hash_fns, err)) ||
        (rc = fg_cfg_u64_array(c, "encoder_hash_byte_group_size", 1, 1024, groups, 32, &ng,
                               err)) ||
        (rc = fg_cfg_bool(c, "patch_in_forward", true, &patch_in_forward, err)) ||
        (rc = fg_cfg_bool(c, "tie_word_embeddings", false, &m->tied, err)))
        return rc;
    if (ng == 0)
        ng = 6; /* BltConfig: [3, 4, 5, 6, 7, 8] */
    if (ng > 32 || hash_fns * ng * hash_vocab > FG_MAX_VOCAB * 16ull)
        return fg_err_set(err, FG_E_RANGE, "%s: the hash embedding (%llu functions x %zu group "
                          "sizes x %llu) is too large", c->origin, (unsigned long long)hash_fns,
                          ng, (unsigned long long)hash_vocab);
    m->hidden = g.hidden;
    m->heads = g.heads;
    m->kv_heads = g.kv;
    m->head_dim = g.hidden / g.heads;
    m->inter = g.inter;
    int32_t li = 0;
    if ((rc = add_encoder(m, &e, &li, err)) ||
        (rc = fg__add_table(m, FG_NODE_EMBED, "Hash embedding", hash_fns * ng * hash_vocab,
                            e.hidden, NULL, err)))
        return rc;
    /* BltConfig: a token_embedding_projection when encoder hidden x cross_attn_k != global */
    if (e.hidden * cross_k != g.hidden &&
        (rc = fg__add_linear(m, FG_NODE_OTHER, -1, "Token projection", "proj", e.hidden * cross_k,
                             g.hidden, false, NULL, err)))
        return rc;
    for (uint64_t l = 0; l < g.layers; l++, li++)
        if ((rc = add_layer(m, li, &g, err)))
            return rc;
    if ((rc = add_decoder(m, &d, &li, err)) ||
        (patch_in_forward && (rc = add_patcher(m, &p, err))))
        return rc;
    m->layers = (uint64_t)li;
    fg__model_note(m, "the global transformer runs on patches, not bytes: its activations are "
                   "counted per byte (an over-estimate)");
    if (patch_in_forward)
        fg__model_note(m, "the frozen patcher (%llu layers) is counted as trainable in a full "
                       "fine-tune (an over-estimate)", (unsigned long long)p.layers);
    /* BltForCausalLM.lm_head: decoder hidden -> vocab, tied to the byte embedding by
     * tie_word_embeddings (default false) */
    return fg__add_head(m, m->vocab, d.hidden, m->tied, false, false, err);
}
