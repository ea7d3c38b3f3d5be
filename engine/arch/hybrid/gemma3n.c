/*
 * gemma3n.c - Gemma 3n's text model (gemma3n_text: Gemma3nForCausalLM,
 * transformers models/gemma3n/modeling_gemma3n.py @00aa0f5d, configuration_gemma3n.py
 * @01854809): a Gemma-3 decoder with per-layer input embeddings, AltUp (altup_num_inputs
 * parallel streams), LAuReL low-rank residuals and, in the last num_kv_shared_layers
 * layers, attention that reuses an earlier layer's keys and values.
 *
 * The multimodal gemma3n (Gemma3nForConditionalGeneration) is refused by graph.c: its vision
 * tower is the timm model vision_config.architecture names.
 */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "arch/hybrid/ssm.h"
#include "util/fmt.h"

struct g3n {
    uint64_t vocab_pl, per_layer, altup, laurel, kv_shared, window;
    bool attn_bias;
    uint64_t inter[FG_MAX_LAYERS];
    bool full[FG_MAX_LAYERS];
};

/* Gemma3nTextConfig's sizes; read here rather than by fg__read_core, whose
 * intermediate_size is one number. */
static int read_g3n_cfg(const struct fg_cfg *c, struct fg_model *m, struct g3n *g,
                        struct fg_err *err)
{
    int rc;
    if ((rc = fg_cfg_u64(c, "vocab_size", 262400, 1, FG_MAX_VOCAB, &m->vocab, err)) ||
        (rc = fg_cfg_u64(c, "hidden_size", 2048, 1, FG_MAX_HIDDEN, &m->hidden, err)) ||
        (rc = fg_cfg_u64(c, "num_hidden_layers", 35, 1, FG_MAX_LAYERS, &m->layers, err)) ||
        (rc = fg_cfg_u64(c, "num_attention_heads", 8, 1, FG_MAX_HEADS, &m->heads, err)) ||
        (rc = fg_cfg_u64(c, "num_key_value_heads", 2, 1, FG_MAX_HEADS, &m->kv_heads, err)) ||
        (rc = fg_cfg_u64(c, "head_dim", 256, 1, 1u << 14, &m->head_dim, err)) ||
        (rc = fg_cfg_u64(c, "max_position_embeddings", 32768, 1, FG_MAX_POS, &m->max_pos,
                         err)) ||
        (rc = fg_cfg_bool(c, "tie_word_embeddings", true, &m->tied, err)) ||
        (rc = fg_cfg_u64(c, "vocab_size_per_layer_input", 262144, 1, FG_MAX_VOCAB, &g->vocab_pl,
                         err)) ||
        (rc = fg_cfg_u64(c, "hidden_size_per_layer_input", 256, 1, FG_MAX_HIDDEN, &g->per_layer,
                         err)) ||
        (rc = fg_cfg_u64(c, "altup_num_inputs", 4, 1, 64, &g->altup, err)) ||
        (rc = fg_cfg_u64(c, "laurel_rank", 64, 1, FG_MAX_HIDDEN, &g->laurel, err)) ||
        (rc = fg_cfg_u64(c, "num_kv_shared_layers", 15, 0, FG_MAX_LAYERS, &g->kv_shared, err)) ||
        (rc = fg_cfg_u64(c, "sliding_window", 512, 1, FG_MAX_POS, &g->window, err)) ||
        (rc = fg_cfg_bool(c, "attention_bias", false, &g->attn_bias, err)) ||
        (rc = fg_cfg_u64_per_layer(c, "intermediate_size", 16384, 1, FG_MAX_INTER, m->layers,
                                   g->inter, FG_MAX_LAYERS, err)) ||
        (rc = fg__read_full_layers(c, m->layers, 5, g->full, err)))
        return rc;
    /* Gemma3nTextConfig.validate_architecture */
    if (m->hidden % m->heads || m->heads % m->kv_heads)
        return fg_err_set(err, FG_E_RANGE, "%s: hidden_size %llu must divide into "
                          "num_attention_heads %llu, a multiple of num_key_value_heads %llu",
                          c->origin, (unsigned long long)m->hidden, (unsigned long long)m->heads,
                          (unsigned long long)m->kv_heads);
    m->inter = g->inter[0];
    return 0;
}

/*
 * The model-level parts of Gemma3nTextModel besides embed_tokens and norm:
 * embed_tokens_per_layer (vocab_size_per_layer_input x layers x p), per_layer_model_projection
 * hidden -> layers x p, per_layer_projection_norm (p), and altup_num_inputs - 1 each of
 * altup_projections and altup_unembed_projections (hidden x hidden).
 */
static int add_model_parts(struct fg_model *m, const struct g3n *g, struct fg_err *err)
{
    uint64_t h = m->hidden, lp = m->layers * g->per_layer;
    struct fg_node *n;
    int rc = fg__add_table(m, FG_NODE_EMBED, "Per-layer embedding", g->vocab_pl, lp, &n, err);
    if (rc)
        return rc;
    if (!(n = fg__model_add(m, FG_NODE_OTHER, -1, "Per-layer projection", err)))
        return FG_E_NOMEM;
    fg__node_linear(n, "pl_proj", h, lp, 1, false);
    n->params += g->per_layer;
    for (uint64_t i = 1; i < g->altup; i++) {
        fg__node_linear(n, "altup_proj", h, h, 1, false);
        fg__node_linear(n, "altup_unemb", h, h, 1, false);
    }
    n->hidden = n->width = (uint32_t)h;
    fg__fmt(n->desc, sizeof n->desc, "per-layer %llu x %llu, AltUp %llu streams",
            (unsigned long long)m->layers, (unsigned long long)g->per_layer,
            (unsigned long long)g->altup);
    return 0;
}

/*
 * One layer's AltUp, LAuReL and per-layer-input parts (Gemma3nTextDecoderLayer):
 * Gemma3nTextAltUp correct_output_scale (h), correction_coefs n x n, prediction_coefs
 * n x n^2, modality_router h -> n, router_norm (h); Gemma3nTextLaurelBlock linear_left
 * h -> r, linear_right r -> h, post_laurel_norm (h); per_layer_input_gate h -> p,
 * per_layer_projection p -> h, post_per_layer_input_norm (h).  No biases.
 */
static int add_layer_extras(struct fg_model *m, int32_t li, const struct g3n *g,
                            struct fg_err *err)
{
    struct fg_node *n = fg__model_add_block(m, FG_NODE_OTHER, li, "AltUp", err);
    if (!n)
        return FG_E_NOMEM;
    uint64_t h = m->hidden, a = g->altup;
    fg__node_linear(n, "router", h, a, 1, false);
    fg__node_linear(n, "laurel_l", h, g->laurel, 1, false);
    fg__node_linear(n, "laurel_r", g->laurel, h, 1, false);
    fg__node_linear(n, "pl_gate", h, g->per_layer, 1, false);
    fg__node_linear(n, "pl_proj", g->per_layer, h, 1, false);
    n->params += h + a * a + a * a * a + h; /* AltUp scale, coefs, router_norm */
    n->params += 2 * h;                     /* post_laurel_norm, post_per_layer_input_norm */
    n->hidden = n->width = (uint32_t)h;
    fg__fmt(n->desc, sizeof n->desc, "AltUp x%llu, LAuReL r%llu, per-layer %llu",
            (unsigned long long)a, (unsigned long long)g->laurel,
            (unsigned long long)g->per_layer);
    return 0;
}

/*
 * Gemma3nTextDecoderLayer: input_layernorm, Gemma3nTextAttention (q / k / v / o biased by
 * attention_bias, q_norm and k_norm over head_dim, v_norm without weight; k_proj / v_proj
 * are built in the KV-shared layers too), post_attention_layernorm, pre_feedforward_layernorm,
 * Gemma3nTextMLP (gate / up / down of intermediate_size[layer], no bias),
 * post_feedforward_layernorm, and the parts above.  Gemma3nTextModel adds norm; the
 * Gemma3nForCausalLM head is tied by tie_word_embeddings (default true); the embed_scale,
 * router_input_scale and per-layer scale buffers are non-persistent.
 */
int fg__ssm_read_gemma3n_text(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                              struct fg_err *err)
{
    (void)spec;
    struct g3n g = {0};
    int rc = read_g3n_cfg(c, m, &g, err);
    if (rc)
        return rc;
    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)) ||
        (rc = add_model_parts(m, &g, err)))
        return rc;
    for (uint64_t l = 0; l < m->layers; l++) {
        int32_t li = (int32_t)l;
        const struct fg_attn_shape a = {.hidden = m->hidden, .heads = m->heads,
                                        .kv_heads = m->kv_heads, .head_dim = m->head_dim,
                                        .window = g.full[l] ? 0 : g.window,
                                        .qkv_bias = g.attn_bias, .o_bias = g.attn_bias,
                                        .qk_norm = 1};
        const struct fg_mlp_shape f = {.hidden = m->hidden, .inter = g.inter[l], .gated = true};
        if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)) ||
            (rc = fg__add_attention(m, li, &a, NULL, err)) ||
            (rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)) ||
            (rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)) ||
            (rc = fg__add_mlp(m, li, &f, NULL, err)) ||
            (rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)) ||
            (rc = add_layer_extras(m, li, &g, err)))
            return rc;
    }
    if (g.kv_shared)
        fg__model_note(m, "the last %llu layers reuse earlier keys and values: their KV cache "
                       "is counted as their own (an over-estimate)",
                       (unsigned long long)g.kv_shared);
    fg__model_note(m, "AltUp's %llu parallel streams keep activations the estimate does not "
                   "count", (unsigned long long)g.altup);
    if ((rc = fg__add_norm(m, -1, "Final norm", m->hidden, FG_NORM_RMS, err)))
        return rc;
    return fg__add_head(m, m->vocab, m->hidden, m->tied, false, false, err);
}
