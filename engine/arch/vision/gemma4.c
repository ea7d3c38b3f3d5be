/*
 * gemma4.c - Gemma 4: Gemma4ForConditionalGeneration (gemma4) and Gemma4ForCausalLM
 * (gemma4_text), read from huggingface/transformers models/gemma4/modeling_gemma4.py and
 * configuration_gemma4.py (commit decba1d2ea, 5.16.0.dev0):
 *
 *   language_model  Gemma4TextModel: embed_tokens vocab x hidden; layers of
 *                   Gemma4TextDecoderLayer; norm.  With hidden_size_per_layer_input p (0 = none;
 *                   Gemma4TextConfig's default 256): embed_tokens_per_layer
 *                   vocab_size_per_layer_input x layers x p, per_layer_model_projection hidden
 *                   -> layers x p, per_layer_projection_norm (p).
 *   vision_tower    Gemma4VisionModel (when vision_config is not null): patch_embedder
 *                   input_proj 3 x patch^2 -> hidden and position_embedding_table 2 x
 *                   position_embedding_size x hidden; encoder layers of Gemma4VisionAttention
 *                   (q / o over heads x head_dim, k / v over kv_heads x head_dim, q_norm and
 *                   k_norm over head_dim, v_norm without weight), Gemma4VisionMLP gate / up /
 *                   down of intermediate_size, four RMSNorms; no final norm; std_bias and
 *                   std_scale (hidden each, persistent buffers) when standardize.  Every
 *                   linear is a Gemma4ClippableLinear without bias, which stores input_min /
 *                   input_max / output_min / output_max scalars (persistent buffers) when
 *                   use_clipped_linears.  The rotary tables are non-persistent.
 *   audio_tower     Gemma4AudioModel (when audio_config is not null): add_audio below.
 *   embed_vision /  Gemma4MultimodalEmbedder: embedding_projection tower width (the audio
 *   embed_audio     tower's output_proj_dims) -> text hidden, no bias; its norm has no weight.
 *   lm_head         Linear(hidden, vocab), tied to embed_tokens by tie_word_embeddings.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "arch/vision/multimodal.h"
#include "util/fmt.h"

struct g4_text {
    uint64_t window, global_hd, global_kv, kv_shared, per_layer, vocab_pl;
    uint64_t experts, top_k, moe_inter;
    bool attn_bias, k_eq_v, moe, double_wide, bidir_all;
    bool full[FG_MAX_LAYERS];
};

/* The MoE keys, which Gemma4TextConfig leaves None: required when enable_moe_block. */
static int read_moe(const struct fg_cfg *c, struct g4_text *g, struct fg_err *err)
{
    int rc;
    if ((rc = fg_cfg_bool(c, "enable_moe_block", false, &g->moe, err)) || !g->moe)
        return rc;
    if ((rc = fg_cfg_u64_req(c, "num_experts", 1, FG_MAX_EXPERTS, &g->experts, err)) ||
        (rc = fg_cfg_u64_req(c, "top_k_experts", 1, FG_MAX_EXPERTS, &g->top_k, err)) ||
        (rc = fg_cfg_u64_req(c, "moe_intermediate_size", 1, FG_MAX_INTER, &g->moe_inter, err)))
        return rc;
    return fg__check_top_k(c, g->top_k, "top_k_experts", g->experts, "num_experts", err);
}

/* Gemma4TextConfig's sizes and its defaults; full-attention layers take global_head_dim and,
 * with attention_k_eq_v, num_global_key_value_heads (per_layer_config). */
static int read_text_cfg(const struct fg_cfg *c, struct fg_model *m, struct g4_text *g,
                         struct fg_err *err)
{
    const char *bidir = NULL;
    int rc;
    if ((rc = fg_cfg_u64(c, "vocab_size", 262144, 1, FG_MAX_VOCAB, &m->vocab, err)) ||
        (rc = fg_cfg_u64(c, "hidden_size", 2304, 1, FG_MAX_HIDDEN, &m->hidden, err)) ||
        (rc = fg_cfg_u64(c, "intermediate_size", 9216, 1, FG_MAX_INTER, &m->inter, err)) ||
        (rc = fg_cfg_u64(c, "num_hidden_layers", 30, 1, FG_MAX_LAYERS, &m->layers, err)) ||
        (rc = fg_cfg_u64(c, "num_attention_heads", 8, 1, FG_MAX_HEADS, &m->heads, err)) ||
        (rc = fg_cfg_u64(c, "num_key_value_heads", 4, 1, FG_MAX_HEADS, &m->kv_heads, err)) ||
        (rc = fg_cfg_u64(c, "head_dim", 256, 1, 1u << 14, &m->head_dim, err)) ||
        (rc = fg_cfg_u64(c, "global_head_dim", 512, 1, 1u << 14, &g->global_hd, err)) ||
        (rc = fg_cfg_u64(c, "max_position_embeddings", 131072, 1, FG_MAX_POS, &m->max_pos,
                         err)) ||
        (rc = fg_cfg_bool(c, "tie_word_embeddings", true, &m->tied, err)) ||
        (rc = fg_cfg_u64(c, "sliding_window", 512, 1, FG_MAX_POS, &g->window, err)) ||
        (rc = fg_cfg_bool(c, "attention_bias", false, &g->attn_bias, err)) ||
        (rc = fg_cfg_bool(c, "attention_k_eq_v", false, &g->k_eq_v, err)) ||
        (rc = fg_cfg_u64(c, "num_kv_shared_layers", 0, 0, FG_MAX_LAYERS, &g->kv_shared, err)) ||
        (rc = fg_cfg_bool(c, "use_double_wide_mlp", false, &g->double_wide, err)) ||
        (rc = fg_cfg_u64(c, "hidden_size_per_layer_input", 256, 0, FG_MAX_HIDDEN,
                         &g->per_layer, err)) ||
        (rc = fg_cfg_u64(c, "vocab_size_per_layer_input", 262144, 1, FG_MAX_VOCAB, &g->vocab_pl,
                         err)) ||
        (rc = fg_cfg_str(c, "use_bidirectional_attention", "", &bidir, err)) ||
        (rc = read_moe(c, g, err)) ||
        (rc = fg__read_full_layers(c, m->layers, 6, g->full, err)))
        return rc;
    /* Gemma4TextConfig.__post_init__: the last layer attends fully whatever layer_types says */
    g->full[m->layers - 1] = true;
    g->global_kv = m->kv_heads;
    if (g->k_eq_v && fg_cfg_has(c, "num_global_key_value_heads") &&
        (rc = fg_cfg_u64(c, "num_global_key_value_heads", 0, 1, FG_MAX_HEADS, &g->global_kv,
                         err)))
        return rc;
    if (m->heads % m->kv_heads || m->heads % g->global_kv)
        return fg_err_set(err, FG_E_RANGE, "%s: num_attention_heads %llu must be a multiple of "
                          "num_key_value_heads %llu and num_global_key_value_heads %llu",
                          c->origin, (unsigned long long)m->heads,
                          (unsigned long long)m->kv_heads, (unsigned long long)g->global_kv);
    if (g->kv_shared >= m->layers)
        return fg_err_set(err, FG_E_RANGE, "%s: num_kv_shared_layers %llu leaves no layer of "
                          "the %llu that computes keys and values", c->origin,
                          (unsigned long long)g->kv_shared, (unsigned long long)m->layers);
    /* "all": bidirectional, the window halved (+1) by __post_init__ */
    g->bidir_all = bidir && !strcmp(bidir, "all");
    if (g->bidir_all)
        g->window = g->window / 2 + 1;
    return 0;
}

/* Remove linear i of n (its weight and bias) from the node fg__add_attention built. */
static void drop_linear(struct fg_node *n, unsigned i, bool bias)
{
    const struct fg_linear *l = &n->lin[i];
    n->params -= (uint64_t)l->in * l->out * l->count + (bias ? (uint64_t)l->out * l->count : 0);
    memmove(&n->lin[i], &n->lin[i + 1], (n->nlin - i - 1) * sizeof n->lin[0]);
    n->nlin--;
}

/*
 * Gemma4TextAttention of layer l: q_proj, q_norm and o_proj always; k_proj, k_norm (and
 * v_norm, no weight) and v_proj except in the last num_kv_shared_layers layers, which reuse
 * an earlier layer's keys and values; no v_proj in full-attention layers under
 * attention_k_eq_v (values are the keys).  Biases by attention_bias.
 */
static int add_text_attention(struct fg_model *m, int32_t li, const struct g4_text *g,
                              struct fg_err *err)
{
    bool full = g->full[li], shared = (uint64_t)li >= m->layers - g->kv_shared;
    uint64_t hd = full ? g->global_hd : m->head_dim;
    const struct fg_attn_shape a = {.hidden = m->hidden, .heads = m->heads,
                                    .kv_heads = full ? g->global_kv : m->kv_heads,
                                    .head_dim = hd, .window = full ? 0 : g->window,
                                    .qkv_bias = g->attn_bias, .o_bias = g->attn_bias,
                                    .qk_norm = 1, .bidirectional = g->bidir_all};
    struct fg_node *n;
    int rc = fg__add_attention(m, li, &a, &n, err);
    if (rc)
        return rc;
    if (shared) { /* lin: q, k, v, o */
        drop_linear(n, 2, g->attn_bias);
        drop_linear(n, 1, g->attn_bias);
        n->params -= hd; /* k_norm */
    } else if (full && g->k_eq_v) {
        drop_linear(n, 2, g->attn_bias);
    }
    return 0;
}

/*
 * The MoE branch of a Gemma4TextDecoderLayer with enable_moe_block, which runs beside the
 * dense MLP: pre_feedforward_layernorm_2, Gemma4TextRouter (norm without weight, proj hidden
 * -> experts, scale (hidden), per_expert_scale (experts)), Gemma4TextExperts gate_up_proj
 * experts x 2 x moe_intermediate_size x hidden and down_proj (nn.Parameter, no bias),
 * post_feedforward_layernorm_1 and _2.  peft does not reach the fused experts:
 * conversion_mapping.py maps no gemma4 pattern onto them.
 */
static int add_text_moe(struct fg_model *m, int32_t li, const struct g4_text *g,
                        struct fg_err *err)
{
    const struct fg_moe_shape s = {.hidden = m->hidden, .experts = g->experts, .top_k = g->top_k,
                                   .inter = g->moe_inter, .gated = true, .fused_gate_up = true,
                                   .lora_experts = FG_LORA_EXPERTS_NONE};
    struct fg_node *n;
    int rc;
    if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)) ||
        (rc = fg__add_moe(m, li, &s, &n, err)))
        return rc;
    n->params += m->hidden + g->experts; /* router scale, per_expert_scale */
    if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)))
        return rc;
    return fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err);
}

/*
 * One Gemma4TextDecoderLayer: input_layernorm, the attention, post_attention_layernorm,
 * pre_feedforward_layernorm, Gemma4TextMLP (gate / up / down, no bias; twice as wide in a
 * KV-shared layer under use_double_wide_mlp), post_feedforward_layernorm, the MoE branch,
 * the per-layer input parts (per_layer_input_gate hidden -> p, per_layer_projection p ->
 * hidden, post_per_layer_input_norm) and layer_scalar, a persistent one-scalar buffer.
 */
static int add_text_layer(struct fg_model *m, int32_t li, const void *ctx, struct fg_err *err)
{
    const struct g4_text *g = ctx;
    bool shared = (uint64_t)li >= m->layers - g->kv_shared;
    const struct fg_mlp_shape f = {.hidden = m->hidden, .gated = true,
                                   .inter = m->inter * (g->double_wide && shared ? 2 : 1)};
    struct fg_node *mlp;
    int rc;
    if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)) ||
        (rc = add_text_attention(m, li, g, err)) ||
        (rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)) ||
        (rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)) ||
        (rc = fg__add_mlp(m, li, &f, &mlp, err)))
        return rc;
    mlp->params += 1; /* layer_scalar */
    mlp->buffers += 1;
    if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)) ||
        (g->moe && (rc = add_text_moe(m, li, g, err))))
        return rc;
    if (!g->per_layer)
        return 0;
    struct fg_node *n = fg__model_add_block(m, FG_NODE_OTHER, li, "PerLayerInput", err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "pl_gate", m->hidden, g->per_layer, 1, false);
    fg__node_linear(n, "pl_proj", g->per_layer, m->hidden, 1, false);
    n->params += m->hidden; /* post_per_layer_input_norm */
    n->hidden = n->width = (uint32_t)m->hidden;
    fg__fmt(n->desc, sizeof n->desc, "per-layer input %llu", (unsigned long long)g->per_layer);
    return 0;
}

/* Gemma4TextModel's per-layer input embedding and projection (hidden_size_per_layer_input). */
static int add_per_layer_model(struct fg_model *m, const struct g4_text *g, struct fg_err *err)
{
    uint64_t lp = m->layers * g->per_layer;
    struct fg_node *n;
    int rc = fg__add_table(m, FG_NODE_EMBED, "Per-layer embedding", g->vocab_pl, lp, &n, err);
    if (rc)
        return rc;
    if (!(n = fg__model_add(m, FG_NODE_OTHER, -1, "Per-layer projection", err)))
        return FG_E_NOMEM;
    fg__node_linear(n, "pl_proj", m->hidden, lp, 1, false);
    n->params += g->per_layer; /* per_layer_projection_norm */
    n->hidden = n->width = (uint32_t)m->hidden;
    fg__fmt(n->desc, sizeof n->desc, "per-layer %llu x %llu", (unsigned long long)m->layers,
            (unsigned long long)g->per_layer);
    return 0;
}

/* The text model and its head from c, tied by *tie when not NULL (the wrapper's
 * tie_word_embeddings) else by c's own. */
static int build_text(const struct fg_cfg *c, struct fg_model *m, const bool *tie,
                      struct fg_err *err)
{
    struct g4_text g = {0};
    int rc = read_text_cfg(c, m, &g, err);
    if (rc)
        return rc;
    if (tie)
        m->tied = *tie;
    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)) ||
        (g.per_layer && (rc = add_per_layer_model(m, &g, err))))
        return rc;
    for (uint64_t l = 0; l < m->layers; l++)
        if ((rc = add_text_layer(m, (int32_t)l, &g, err)))
            return rc;
    if (g.moe) {
        m->experts = g.experts;
        m->top_k = g.top_k;
    }
    if (g.kv_shared) {
        fg__model_note(m, "the last %llu layers reuse earlier keys and values: their KV cache "
                       "is counted as their own (an over-estimate)",
                       (unsigned long long)g.kv_shared);
        fg__model_unsure_count(m, "num_kv_shared_layers", "the checkpoint may store the k / v "
                               "projections of the %llu KV-shared layers, which Gemma4TextModel "
                               "builds none of and drops on load",
                               (unsigned long long)g.kv_shared);
    }
    if ((rc = fg__add_norm(m, -1, "Final norm", m->hidden, FG_NORM_RMS, err)))
        return rc;
    return fg__add_head(m, m->vocab, m->hidden, m->tied, false, false, err);
}

/* Gemma4ForCausalLM. */
static int read_gemma4_text(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                            struct fg_err *err)
{
    (void)spec;
    return build_text(c, m, NULL, err);
}

/* The four clamp scalars a Gemma4ClippableLinear stores per linear when use_clipped_linears. */
static void clip_buffers(struct fg_node *n, bool clipped, uint64_t linears)
{
    if (!clipped)
        return;
    n->params += 4 * linears;
    n->buffers += 4 * linears;
}

/* Gemma4MultimodalEmbedder: projection of width `in` to the text hidden, no bias. */
static int add_embedder(struct fg_model *m, uint64_t in, const char *desc, struct fg_err *err)
{
    struct fg_node *p = fg__mm_projector_node(m, m->hidden, desc, err);
    if (!p)
        return FG_E_NOMEM;
    fg__node_linear(p, "proj", in, m->hidden, 1, false);
    return 0;
}

/* Gemma4VisionModel and embed_vision (the header above). */
static int add_vision(struct fg_model *m, const struct fg_cfg *v, struct fg_err *err)
{
    uint64_t h, f, L, heads, kv, hd, patch, pos;
    bool clipped, standardize;
    int rc;
    if ((rc = fg_cfg_u64(v, "hidden_size", 768, 1, FG_MAX_HIDDEN, &h, err)) ||
        (rc = fg_cfg_u64(v, "intermediate_size", 3072, 1, FG_MAX_INTER, &f, err)) ||
        (rc = fg_cfg_u64(v, "num_hidden_layers", 16, 1, FG_MAX_LAYERS, &L, err)) ||
        (rc = fg_cfg_u64(v, "num_attention_heads", 12, 1, FG_MAX_HEADS, &heads, err)) ||
        (rc = fg_cfg_u64(v, "num_key_value_heads", 12, 1, FG_MAX_HEADS, &kv, err)) ||
        (rc = fg_cfg_u64(v, "head_dim", 64, 1, 1u << 14, &hd, err)) ||
        (rc = fg_cfg_u64(v, "patch_size", 16, 1, 4096, &patch, err)) ||
        (rc = fg_cfg_u64(v, "position_embedding_size", 10240, 1, FG_MAX_POS, &pos, err)) ||
        (rc = fg_cfg_bool(v, "use_clipped_linears", false, &clipped, err)) ||
        (rc = fg_cfg_bool(v, "standardize", false, &standardize, err)))
        return rc;
    if (heads % kv)
        return fg_err_set(err, FG_E_RANGE, "%s: vision_config num_attention_heads %llu must be "
                          "a multiple of num_key_value_heads %llu", v->origin,
                          (unsigned long long)heads, (unsigned long long)kv);
    /* a save writes tie_word_embeddings into every sub-config; the tower has no word
     * embeddings to tie */
    (void)fg_cfg_has(v, "tie_word_embeddings");
    struct fg_node *n = fg__mm_tower_node(m, "Vision tower", h, heads, f, err);
    if (!n)
        return FG_E_NOMEM;
    n->kv_heads = (uint32_t)kv;
    n->head_dim = n->v_head_dim = (uint32_t)hd;
    fg__node_linear(n, "q", h, heads * hd, L, false);
    fg__node_linear(n, "k", h, kv * hd, L, false);
    fg__node_linear(n, "v", h, kv * hd, L, false);
    fg__node_linear(n, "o", heads * hd, h, L, false);
    fg__node_linear(n, "gate", h, f, L, false);
    fg__node_linear(n, "up", h, f, L, false);
    fg__node_linear(n, "down", f, h, L, false);
    clip_buffers(n, clipped, 7 * L);
    n->params += L * (2 * hd + 4 * h);            /* q_norm, k_norm; four RMSNorms */
    n->params += 3 * patch * patch * h;           /* patch_embedder.input_proj */
    n->params += 2 * pos * h;                     /* position_embedding_table */
    if (standardize) {
        n->params += 2 * h;                       /* std_bias, std_scale */
        n->buffers += 2 * h;
    }
    fg__fmt(n->desc, sizeof n->desc, "Gemma 4 ViT %llu x %llu, patch %llu",
            (unsigned long long)L, (unsigned long long)h, (unsigned long long)patch);
    return add_embedder(m, h, "embed_vision: RMSNorm + linear", err);
}

/*
 * Gemma4AudioModel (Gemma4AudioConfig's defaults): subsample_conv_projection two Conv2d 3x3
 * (1 -> c0 -> c1 channels of subsampling_conv_channels, no bias) each with a LayerNorm
 * without bias, input_proj_linear (c0 / 4) x c1 -> hidden; layers of two
 * Gemma4AudioFeedForward (ffw_layer_1 hidden -> 4 x hidden, ffw_layer_2 back, pre / post
 * norms), Gemma4AudioAttention (q / k / v / post of heads x hidden / heads, relative_k_proj,
 * per_dim_scale of the head width), Gemma4AudioLightConv1d (linear_start hidden -> 2 x
 * hidden, depthwise Conv1d of conv_kernel_size taps without bias, linear_end, pre_layer_norm,
 * conv_norm) and norm_pre_attn / norm_post_attn / norm_out; output_proj hidden ->
 * output_proj_dims with bias.  Ten of each layer's linears are Gemma4ClippableLinear
 * (relative_k_proj is not); use_clipped_linears defaults to true here.  The relative
 * position table and the soft cap are non-persistent buffers.
 */
static int add_audio(struct fg_model *m, const struct fg_cfg *a, struct fg_err *err)
{
    uint64_t h, L, heads, kernel, out, ch[2] = {128, 32};
    size_t nch = 0;
    bool clipped;
    int rc;
    if ((rc = fg_cfg_u64(a, "hidden_size", 1024, 1, FG_MAX_HIDDEN, &h, err)) ||
        (rc = fg_cfg_u64(a, "num_hidden_layers", 12, 1, FG_MAX_LAYERS, &L, err)) ||
        (rc = fg_cfg_u64(a, "num_attention_heads", 8, 1, FG_MAX_HEADS, &heads, err)) ||
        (rc = fg_cfg_u64(a, "conv_kernel_size", 5, 1, 4096, &kernel, err)) ||
        (rc = fg_cfg_u64(a, "output_proj_dims", 1536, 1, FG_MAX_HIDDEN, &out, err)) ||
        (rc = fg_cfg_bool(a, "use_clipped_linears", true, &clipped, err)) ||
        (rc = fg_cfg_u64_array(a, "subsampling_conv_channels", 1, FG_MAX_HIDDEN, ch, 2, &nch,
                               err)))
        return rc;
    if (nch && nch != 2)
        return fg_err_set(err, FG_E_RANGE, "%s: audio_config subsampling_conv_channels has %zu "
                          "values; Gemma4AudioSubSampleConvProjection takes two", a->origin, nch);
    (void)fg_cfg_has(a, "tie_word_embeddings");
    uint64_t q = heads * (h / heads);
    struct fg_node *n = fg__mm_tower_node(m, "Audio tower", h, heads, 4 * h, err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "ffw_1", h, 4 * h, 2 * L, false);
    fg__node_linear(n, "ffw_2", 4 * h, h, 2 * L, false);
    fg__node_linear(n, "q", h, q, L, false);
    fg__node_linear(n, "k", h, q, L, false);
    fg__node_linear(n, "v", h, q, L, false);
    fg__node_linear(n, "post", h, h, L, false);
    fg__node_linear(n, "relative_k", h, q, L, false);
    fg__node_linear(n, "lin_start", h, 2 * h, L, false);
    fg__node_linear(n, "lin_end", h, h, L, false);
    clip_buffers(n, clipped, 10 * L);
    n->params += L * (h / heads + h * kernel + 9 * h); /* per_dim_scale, conv, nine norms */
    n->params += 9 * ch[0] + ch[0] + 9 * ch[0] * ch[1] + ch[1]; /* two convs + LayerNorms */
    fg__node_linear(n, "input_proj", ch[0] / 4 * ch[1], h, 1, false);
    fg__node_linear(n, "output_proj", h, out, 1, true);
    fg__fmt(n->desc, sizeof n->desc, "Gemma 4 conformer %llu x %llu", (unsigned long long)L,
            (unsigned long long)h);
    return add_embedder(m, out, "embed_audio: RMSNorm + linear", err);
}

/* A tower sub-config: absent or null builds none (Gemma4Model), an object is read by add. */
static int add_tower(struct fg_model *m, const struct fg_cfg *c, const char *key,
                     int (*add)(struct fg_model *, const struct fg_cfg *, struct fg_err *),
                     struct fg_err *err)
{
    struct fg_cfg v;
    if (!fg_cfg_child(c, key, &v, err))
        return fg_cfg_has(c, key) ? FG_E_TYPE : 0;
    size_t first = m->n_nodes;
    int rc = add(m, &v, err);
    return rc ? rc : fg__mm_move_to_front(m, first, err);
}

static int read_gemma4(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                       struct fg_err *err)
{
    struct fg_cfg text;
    if (!fg_cfg_child(c, "text_config", &text, err))
        return fg_cfg_has(c, "text_config")
                   ? FG_E_TYPE
                   : fg_err_set(err, FG_E_UNSUPPORTED, "%s: key 'text_config' is absent; "
                                "Gemma4Config then builds its default text model, which "
                                "fitgate does not assume: write the text_config", c->origin);
    /* the head follows the wrapper's config (PreTrainedModel.get_expanded_tied_weights_keys
     * reads self.config, a Gemma4Config): its tie_word_embeddings, true by default, not
     * text_config's */
    (void)spec;
    bool tie;
    int rc;
    if ((rc = fg_cfg_bool(c, "tie_word_embeddings", true, &tie, err)) ||
        (rc = build_text(&text, m, &tie, err)) ||
        (rc = add_tower(m, c, "audio_config", add_audio, err)))
        return rc;
    return add_tower(m, c, "vision_config", add_vision, err);
}

const struct fg_arch fg__arch_vl_gemma4_table[] = {
#include "arch/vision/gemma4.def"
    {0},
};
