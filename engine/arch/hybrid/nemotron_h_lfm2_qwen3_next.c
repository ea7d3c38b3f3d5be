/*
 * nemotron_h_lfm2_qwen3_next.c - hybrid decoders whose blocks differ layer by layer:
 *
 *   nemotron_h  NemotronHForCausalLM (transformers models/nemotron_h, and the
 *               Hub's remote modeling_nemotron_h.py): one RMSNorm + one mixer
 *               per block, the mixer chosen per layer by hybrid_override_pattern
 *               (or layers_block_type): Mamba-2, attention, ReLU^2 MLP or MoE.
 *   lfm2        Lfm2ForCausalLM (transformers models/lfm2): gated short
 *               convolutions with a few attention layers, each followed by a
 *               SwiGLU MLP.
 *   qwen3_next  Qwen3NextForCausalLM (transformers models/qwen3_next): Gated
 *               DeltaNet linear attention with a gated full-attention layer
 *               every full_attention_interval, each followed by a Qwen MoE.
 *
 * The letter / name -> block kind mappings are tables; the shapes of each
 * block are in its builder, with the class that creates the tensors.  The
 * BambaMixer family (bamba, granitemoehybrid, falcon_h1) is bamba_falcon_h1.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/hybrid/nemotron_h_lfm2_qwen3_next.h"
#include "util/fmt.h"

/* NemotronHConfig._pattern_to_list and remap_legacy_layer_types. */
static const struct hy_kind_name nemotron_h_kinds[] = {
    {'M', "linear_attention", "mamba", HY_MAMBA},
    {'*', "full_attention", "attention", HY_ATTN},
    {'-', "mlp", NULL, HY_MLP},
    {'E', "moe", NULL, HY_MOE},
    {0, NULL, NULL, 0},
};

/* Lfm2Config.layer_types. */
static const struct hy_kind_name lfm2_kinds[] = {
    {0, "full_attention", NULL, HY_ATTN},
    {0, "conv", NULL, HY_CONV},
    {0, NULL, NULL, 0},
};

/* NemotronHConfig defaults (transformers configuration_nemotron_h.py). */
static const struct hybrid_spec nemotron_h = {
    .d = {.vocab = 131072, .hidden = 4096, .inter = 21504, .layers = 0, .heads = 32,
          .max_pos = 4096, .tie = false},
    .kv_heads = 8, .kinds = nemotron_h_kinds};

/* Lfm2Config defaults (transformers configuration_lfm2.py). */
static const struct hybrid_spec lfm2 = {
    .d = {.vocab = 65536, .hidden = 2560, .inter = 12288, .layers = 32, .heads = 32,
          .max_pos = 128000, .tie = true},
    .kv_heads = 8, .kinds = lfm2_kinds};

/* Qwen3NextConfig.layer_types. */
static const struct hy_kind_name qwen3_next_kinds[] = {
    {0, "full_attention", NULL, HY_ATTN},
    {0, "linear_attention", NULL, HY_MAMBA},
    {0, NULL, NULL, 0},
};

/* Qwen3NextConfig defaults (transformers configuration_qwen3_next.py). */
static const struct hybrid_spec qwen3_next = {
    .d = {.vocab = 151936, .hidden = 2048, .inter = 5632, .layers = 48, .heads = 16,
          .max_pos = 32768, .tie = false},
    .kv_heads = 2, .kinds = qwen3_next_kinds, .experts_def = 512};

/* Qwen3.5's text models (the qwen3_5_moe_text / qwen3_5_text configs of
 * Qwen3_5MoeForConditionalGeneration / Qwen3_5ForConditionalGeneration): Qwen3-Next's
 * layers - Gated DeltaNet, gated attention every full_attention_interval, MTP layers - with
 * routed experts or, in the dense text model, one MLP per layer.  Defaults as
 * Qwen3NextConfig's but for the vocabulary and the dense model's experts. */
static const struct hybrid_spec qwen3_5_moe_text = {
    .d = {.vocab = 248320, .hidden = 2048, .inter = 5632, .layers = 40, .heads = 16,
          .max_pos = 262144, .tie = false},
    .kv_heads = 2, .kinds = qwen3_next_kinds, .experts_def = 256};
static const struct hybrid_spec qwen3_5_text = {
    .d = {.vocab = 248320, .hidden = 4096, .inter = 12288, .layers = 32, .heads = 16,
          .max_pos = 262144, .tie = false},
    .kv_heads = 4, .kinds = qwen3_next_kinds, .experts_def = 0};

/* ---- layer kinds ---------------------------------------------------------- */

static const struct hy_kind_name *kind_by_letter(const struct hy_kind_name *t, char ch)
{
    for (; t->name; t++)
        if (t->letter && t->letter == ch)
            return t;
    return NULL;
}

const struct hy_kind_name *fg__hy_kind_by_name(const struct hy_kind_name *t, const char *s)
{
    for (; t->name; t++)
        if (strcmp(t->name, s) == 0 || (t->legacy && strcmp(t->legacy, s) == 0))
            return t;
    return NULL;
}

int fg__hy_read_kind_list(const struct fg_cfg *c, const char *keys, const char *key,
                          const struct hy_kind_name *t, uint64_t layers, enum hy_kind *out,
                          size_t *n, struct fg_err *err)
{
    const char *names[FG_MAX_LAYERS];
    int rc = fg_cfg_str_array(c, keys, names, FG_MAX_LAYERS, n, err);
    if (rc || !*n)
        return rc;
    if (layers && *n != layers)
        return fg_err_set(err, FG_E_RANGE, "%s: key '%s' has %zu entries for %llu layers",
                          c->origin, key, *n, (unsigned long long)layers);
    if (*n > FG_MAX_LAYERS)
        return fg_err_set(err, FG_E_RANGE, "%s: key '%s' has %zu entries; at most %u",
                          c->origin, key, *n, FG_MAX_LAYERS);
    for (size_t i = 0; i < *n; i++) {
        const struct hy_kind_name *k = fg__hy_kind_by_name(t, names[i]);
        if (!k)
            return fg_err_set(err, FG_E_RANGE, "%s: key '%s' has unknown kind '%s' at layer %zu",
                              c->origin, key, names[i], i);
        out[i] = k->kind;
    }
    return 0;
}

/*
 * NemotronH block kinds, from hybrid_override_pattern (one letter a layer) or
 * from the newer layers_block_type list.  Fails with FG_E_MISSING when
 * neither is there, FG_E_RANGE for an unknown letter / name or a pattern
 * longer than FG_MAX_LAYERS, naming the key and the position.
 */
static int read_pattern(const struct fg_cfg *c, const struct hy_kind_name *kinds,
                        enum hy_kind *out, size_t *n, const char **key, struct fg_err *err)
{
    const char *pat = NULL;
    int rc = fg_cfg_str(c, "hybrid_override_pattern", NULL, &pat, err);
    if (rc)
        return rc;
    *n = 0;
    if (pat) {
        *key = "hybrid_override_pattern";
        size_t len = strlen(pat);
        if (len == 0 || len > FG_MAX_LAYERS)
            return fg_err_set(err, FG_E_RANGE, "%s: key 'hybrid_override_pattern' has %zu letters; "
                              "expected 1 to %u (one per layer)", c->origin, len, FG_MAX_LAYERS);
        for (size_t i = 0; i < len; i++) {
            const struct hy_kind_name *k = kind_by_letter(kinds, pat[i]);
            if (!k)
                return fg_err_set(err, FG_E_RANGE,
                                  "%s: key 'hybrid_override_pattern' has unknown letter '%c' at "
                                  "layer %zu; known: M (Mamba-2), * (attention), - (MLP), E (MoE)",
                                  c->origin, pat[i], i);
            out[i] = k->kind;
        }
        *n = len;
        return 0;
    }
    *key = "layers_block_type";
    if ((rc = fg__hy_read_kind_list(c, "layers_block_type|layer_types", *key, kinds, 0, out, n,
                                    err)))
        return rc;
    if (*n == 0)
        return fg_err_set(err, FG_E_MISSING, "%s: nemotron_h needs 'hybrid_override_pattern' or "
                          "'layers_block_type' to know each layer's kind", c->origin);
    return 0;
}

/* num_key_value_heads with the class default (fg__read_core defaults it to heads). */
int fg__hy_read_kv_heads(const struct fg_cfg *c, struct fg_model *m, uint64_t def,
                         struct fg_err *err)
{
    if (fg_cfg_has(c, "num_key_value_heads"))
        return 0;
    if (m->heads % def)
        return fg_err_set(err, FG_E_RANGE, "%s: %llu attention heads are not a multiple of the "
                          "default %llu key/value heads; set num_key_value_heads", c->origin,
                          (unsigned long long)m->heads, (unsigned long long)def);
    m->kv_heads = def;
    return 0;
}

/* ---- NemotronH ------------------------------------------------------------ */

struct nemotron_moe_shape {
    uint64_t hidden, experts, top_k, inter, shared_inter, latent;
    bool bias;
};

/*
 * NemotronHMoE (a DeepseekV3MoE with NemotronH experts):
 *   gate     NemotronHTopkRouter: weight experts x hidden, no bias, and the
 *            e_score_correction_bias buffer (experts), stored in the checkpoint
 *            (_keep_in_fp32_modules_strict names it)
 *   experts  NemotronHExperts: up_proj and down_proj only (ReLU^2, not gated),
 *            over moe_latent_size when set, else hidden
 *   shared   NemotronHMLP of moe_shared_expert_intermediate_size, always built
 *            (the class ignores n_shared_experts for its shape)
 *   latent   fc1_latent_proj / fc2_latent_proj when moe_latent_size is set
 */
static int add_nemotron_moe(struct fg_model *m, int32_t layer, const struct nemotron_moe_shape *s,
                            struct fg_err *err)
{
    struct fg_node *n = fg__model_add_block(m, FG_NODE_MOE, layer, "MoE", err);
    if (!n)
        return FG_E_NOMEM;
    uint64_t in = s->latent ? s->latent : s->hidden;
    fg__node_linear(n, "router", s->hidden, s->experts, 1, false);
    fg__node_linear(n, "up", in, s->inter, s->experts, false);
    fg__node_linear(n, "down", s->inter, in, s->experts, false);
    fg__node_linear(n, "shared_up", s->hidden, s->shared_inter, 1, s->bias);
    fg__node_linear(n, "shared_down", s->shared_inter, s->hidden, 1, s->bias);
    if (s->latent) {
        fg__node_linear(n, "latent_in", s->hidden, s->latent, 1, s->bias);
        fg__node_linear(n, "latent_out", s->latent, s->hidden, 1, s->bias);
    }
    n->params += s->experts;
    n->buffers += s->experts;
    n->hidden = (uint32_t)s->hidden;
    n->width = (uint32_t)s->hidden;
    n->inter = (uint32_t)s->inter;
    n->experts = (uint32_t)s->experts;
    n->top_k = (uint32_t)s->top_k;
    n->shared = 1;
    n->shared_inter = (uint32_t)s->shared_inter;
    n->gated = 0;
    fg__fmt(n->desc, sizeof n->desc, "%llu experts top-%llu x%llu + shared %llu",
             (unsigned long long)s->experts, (unsigned long long)s->top_k,
             (unsigned long long)s->inter, (unsigned long long)s->shared_inter);
    return 0;
}

static int read_nemotron_h(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                           struct fg_err *err)
{
    const struct hybrid_spec *s = spec;
    enum hy_kind kinds[FG_MAX_LAYERS];
    size_t nk = 0;
    const char *key = NULL;
    int rc;
    if ((rc = read_pattern(c, s->kinds, kinds, &nk, &key, err)))
        return rc;
    /* The pattern decides the depth; a num_hidden_layers that disagrees means
     * the config was edited by hand, and either reading could be the wrong one. */
    struct fg_core_defaults d = s->d;
    d.layers = nk;
    if ((rc = fg__read_core(c, m, &d, err)) || (rc = fg__hy_read_kv_heads(c, m, s->kv_heads, err)))
        return rc;
    if (m->layers != nk)
        return fg_err_set(err, FG_E_RANGE, "%s: key '%s' describes %zu layers but "
                          "num_hidden_layers is %llu", c->origin, key, nk,
                          (unsigned long long)m->layers);

    struct fg_mamba2_shape mb = {.hidden = m->hidden};
    bool attn_bias = false, mlp_bias = false;
    if ((rc = fg_cfg_u64(c, "mamba_num_heads", 128, 1, FG_MAX_HEADS, &mb.heads, err)) ||
        (rc = fg_cfg_u64(c, "mamba_head_dim", 64, 1, 1u << 14, &mb.head_dim, err)) ||
        (rc = fg_cfg_u64(c, "n_groups|mamba_n_groups", 8, 1, FG_MAX_HEADS, &mb.groups, err)) ||
        (rc = fg_cfg_u64(c, "ssm_state_size", 128, 1, 1u << 14, &mb.state, err)) ||
        (rc = fg_cfg_u64(c, "conv_kernel|mamba_d_conv", 4, 1, 1024, &mb.kernel, err)) ||
        (rc = fg_cfg_u64(c, "chunk_size|mamba_chunk_size", 128, 1, FG_MAX_POS, &mb.chunk, err)) ||
        (rc = fg_cfg_bool(c, "use_conv_bias|mamba_conv_bias", true, &mb.conv_bias, err)) ||
        /* NemotronHMamba2Mixer: in_proj / out_proj bias=config.use_bias */
        (rc = fg_cfg_bool(c, "use_bias", false, &mb.proj_bias, err)) ||
        (rc = fg_cfg_bool(c, "attention_bias", false, &attn_bias, err)) ||
        (rc = fg_cfg_bool(c, "mlp_bias", false, &mlp_bias, err)))
        return rc;
    /* Zamba2RMSNormGated normalises groups of I / n_groups channels. */
    if ((mb.heads * mb.head_dim) % mb.groups)
        return fg_err_set(err, FG_E_RANGE, "%s: mamba_num_heads x mamba_head_dim = %llu is not "
                          "divisible by n_groups %llu", c->origin,
                          (unsigned long long)(mb.heads * mb.head_dim),
                          (unsigned long long)mb.groups);

    struct nemotron_moe_shape moe = {.hidden = m->hidden, .bias = mlp_bias};
    uint64_t mtp = 0, shared_n = 1;
    if ((rc = fg_cfg_u64(c, "n_routed_experts|num_local_experts", 8, 1, FG_MAX_EXPERTS,
                         &moe.experts, err)) ||
        (rc = fg_cfg_u64(c, "num_experts_per_tok", 2, 1, FG_MAX_EXPERTS, &moe.top_k, err)) ||
        (rc = fg_cfg_u64(c, "moe_intermediate_size", 7688, 1, FG_MAX_INTER, &moe.inter, err)) ||
        (rc = fg_cfg_u64(c, "moe_shared_expert_intermediate_size", 7688, 1, FG_MAX_INTER,
                         &moe.shared_inter, err)) ||
        (rc = fg_cfg_u64(c, "moe_latent_size", 0, 1, FG_MAX_HIDDEN, &moe.latent, err)) ||
        (rc = fg_cfg_u64(c, "num_nextn_predict_layers", 0, 0, 64, &mtp, err)) ||
        (rc = fg_cfg_u64(c, "n_shared_experts", 1, 0, FG_MAX_EXPERTS, &shared_n, err)))
        return rc;
    /* NemotronHMoE builds one shared_experts MLP of moe_shared_expert_intermediate_size;
     * another count is a layout this reader has not been checked against */
    if (shared_n != 1)
        fg__model_unsure(m, "n_shared_experts", "unsure: key 'n_shared_experts' = %llu: the "
                         "reader builds the one shared expert NemotronHMoE has",
                         (unsigned long long)shared_n);

    struct fg_attn_shape a = {.hidden = m->hidden, .heads = m->heads, .kv_heads = m->kv_heads,
                              .head_dim = m->head_dim, .qkv_bias = attn_bias,
                              .o_bias = attn_bias};
    /* NemotronHMLP: up_proj, down_proj (relu2), no gate. */
    struct fg_mlp_shape f = {.hidden = m->hidden, .inter = m->inter, .gated = false,
                             .bias = mlp_bias};
    bool any_moe = false;

    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)))
        return rc;
    for (size_t l = 0; l < nk; l++) {
        int32_t li = (int32_t)l;
        /* NemotronHBlock: one pre-norm, then the mixer, then the residual. */
        if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)))
            return rc;
        switch (kinds[l]) {
        case HY_MAMBA:
            rc = fg__add_mamba2(m, li, &mb, err);
            break;
        case HY_ATTN:
            rc = fg__add_attention(m, li, &a, NULL, err);
            break;
        case HY_MLP:
            rc = fg__add_mlp(m, li, &f, NULL, err);
            break;
        case HY_MOE:
            any_moe = true;
            rc = add_nemotron_moe(m, li, &moe, err);
            break;
        case HY_CONV:
            rc = fg_err_set(err, FG_E_UNSUPPORTED, "%s: nemotron_h has no conv layers", c->origin);
            break;
        }
        if (rc)
            return rc;
    }
    if (any_moe) {
        if (moe.top_k > moe.experts)
            return fg_err_set(err, FG_E_RANGE, "%s: num_experts_per_tok %llu exceeds "
                              "n_routed_experts %llu", c->origin, (unsigned long long)moe.top_k,
                              (unsigned long long)moe.experts);
        m->experts = moe.experts;
        m->top_k = moe.top_k;
    }
    if (mtp)
        fg__model_unsure(m, "num_nextn_predict_layers", "unsure: key "
                         "'num_nextn_predict_layers' = %llu: multi-token-prediction layers the "
                         "checkpoint may store are not counted (transformers skips mtp.*)",
                         (unsigned long long)mtp);
    if ((rc = fg__add_norm(m, -1, "Final norm", m->hidden, FG_NORM_RMS, err)))
        return rc;
    return fg__add_head(m, m->vocab, m->hidden, m->tied, false, false, err);
}

/* ---- LFM2 ------------------------------------------------------------------ */

/*
 * Lfm2ShortConv: in_proj hidden -> 3 x hidden (B, C, x), a depthwise conv1d
 * over hidden channels with conv_L_cache taps, out_proj hidden -> hidden;
 * conv_bias switches the bias of all three.
 */
static int add_shortconv(struct fg_model *m, int32_t layer, uint64_t hidden, uint64_t kernel,
                         bool bias, struct fg_err *err)
{
    struct fg_node *n = fg__model_add_block(m, FG_NODE_SHORTCONV, layer, "ShortConv", err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "in_proj", hidden, 3 * hidden, 1, bias);
    fg__node_linear(n, "out_proj", hidden, hidden, 1, bias);
    n->params += hidden * kernel + (bias ? hidden : 0);
    n->hidden = (uint32_t)hidden;
    n->width = (uint32_t)hidden;
    n->conv_kernel = (uint32_t)kernel;
    fg__fmt(n->desc, sizeof n->desc, "gated conv, %llu taps", (unsigned long long)kernel);
    return 0;
}

int fg__hy_lfm2_mixer(struct fg_model *m, int32_t layer, bool attn,
                      const struct fg_attn_shape *a, uint64_t kernel, bool conv_bias,
                      struct fg_err *err)
{
    int rc;
    if ((rc = fg__add_norm(m, layer, "Norm", m->hidden, FG_NORM_RMS, err)))
        return rc;
    rc = attn ? fg__add_attention(m, layer, a, NULL, err)
              : add_shortconv(m, layer, m->hidden, kernel, conv_bias, err);
    return rc ? rc : fg__add_norm(m, layer, "Norm", m->hidden, FG_NORM_RMS, err);
}

/*
 * Lfm2MLP width: with block_auto_adjust_ff_dim, int(2/3 x ff), times
 * block_ffn_dim_multiplier, rounded up to block_multiple_of (the LLaMA
 * SwiGLU sizing rule); otherwise ff as given.
 */
static int read_lfm2_ff(const struct fg_cfg *c, uint64_t def, uint64_t *out, struct fg_err *err)
{
    uint64_t ff = 0, mult_of = 1;
    bool adjust = true;
    double mult = 1.0;
    int rc;
    if ((rc = fg_cfg_u64(c, "block_ff_dim|intermediate_size", def, 1, FG_MAX_INTER, &ff, err)) ||
        (rc = fg_cfg_bool(c, "block_auto_adjust_ff_dim", true, &adjust, err)) ||
        (rc = fg_cfg_f64(c, "block_ffn_dim_multiplier", 1.0, 1e-3, 64.0, &mult, err)) ||
        (rc = fg_cfg_u64(c, "block_multiple_of", 256, 1, FG_MAX_INTER, &mult_of, err)))
        return rc;
    if (adjust) {
        ff = (uint64_t)(2.0 * (double)ff / 3.0);
        ff = (uint64_t)(mult * (double)ff);
        ff = mult_of * ((ff + mult_of - 1) / mult_of);
    }
    if (ff == 0 || ff > FG_MAX_INTER)
        return fg_err_set(err, FG_E_RANGE, "%s: the MLP width from block_ff_dim is %llu, outside "
                          "[1, %u]", c->origin, (unsigned long long)ff, FG_MAX_INTER);
    *out = ff;
    return 0;
}

/*
 * Which LFM2 layers attend: layer_types ("full_attention" / "conv"), else
 * full_attn_idxs, else every layer (Lfm2Config's fallback).
 */
static int read_lfm2_kinds(const struct fg_cfg *c, const struct hy_kind_name *kinds,
                           uint64_t layers, enum hy_kind *out, struct fg_err *err)
{
    size_t nn = 0;
    int rc = fg__hy_read_kind_list(c, "layer_types", "layer_types", kinds, layers, out, &nn, err);
    if (rc || nn)
        return rc;
    uint64_t idx[FG_MAX_LAYERS];
    size_t ni = 0;
    if ((rc = fg_cfg_u64_array(c, "full_attn_idxs", 0, layers - 1, idx, FG_MAX_LAYERS, &ni, err)))
        return rc;
    bool listed = fg_cfg_has(c, "full_attn_idxs");
    for (uint64_t i = 0; i < layers; i++)
        out[i] = listed ? HY_CONV : HY_ATTN;
    for (size_t i = 0; i < ni && i < FG_MAX_LAYERS; i++)
        out[idx[i]] = HY_ATTN;
    return 0;
}

static int read_lfm2(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                     struct fg_err *err)
{
    const struct hybrid_spec *s = spec;
    int rc;
    uint64_t ff = 0, kernel = 0, conv_dim = 0;
    bool bias = false, tie = false;
    if ((rc = fg__read_core(c, m, &s->d, err)) || (rc = fg__hy_read_kv_heads(c, m, s->kv_heads,
                                                                             err)) ||
        /* Lfm2Config: tie_embedding is the original key for tie_word_embeddings */
        (rc = fg_cfg_bool(c, "tie_word_embeddings|tie_embedding", s->d.tie, &tie, err)) ||
        (rc = read_lfm2_ff(c, s->d.inter, &ff, err)) ||
        (rc = fg_cfg_u64(c, "conv_L_cache", 3, 1, 1024, &kernel, err)) ||
        (rc = fg_cfg_bool(c, "conv_bias", false, &bias, err)) ||
        (rc = fg_cfg_u64(c, "conv_dim", m->hidden, 1, FG_MAX_HIDDEN, &conv_dim, err)))
        return rc;
    /* The short conv maps the residual stream onto itself (current Lfm2ShortConv
     * uses hidden_size); an original conv_dim can only equal it. */
    if (conv_dim != m->hidden)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'conv_dim' is %llu but hidden_size is %llu; "
                          "the short convolution works on the residual width", c->origin,
                          (unsigned long long)conv_dim, (unsigned long long)m->hidden);
    m->tied = tie;
    m->inter = ff;
    enum hy_kind kinds[FG_MAX_LAYERS];
    if ((rc = read_lfm2_kinds(c, s->kinds, m->layers, kinds, err)))
        return rc;

    /* Lfm2Attention: q/k/v/out_proj without bias, q_layernorm / k_layernorm
     * (RMSNorm over head_dim). */
    struct fg_attn_shape a = {.hidden = m->hidden, .heads = m->heads, .kv_heads = m->kv_heads,
                              .head_dim = m->head_dim, .qk_norm = 1, .qk_norm_kind = FG_NORM_RMS};
    /* Lfm2MLP: w1 / w3 / w2, SwiGLU, no bias. */
    struct fg_mlp_shape f = {.hidden = m->hidden, .inter = ff, .gated = true};

    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)))
        return rc;
    /* Lfm2DecoderLayer: operator_norm, mixer, ffn_norm, feed_forward. */
    for (uint64_t l = 0; l < m->layers; l++)
        if ((rc = fg__hy_lfm2_mixer(m, (int32_t)l, kinds[l] == HY_ATTN, &a, kernel, bias, err)) ||
            (rc = fg__add_mlp(m, (int32_t)l, &f, NULL, err)))
            return rc;
    /* Lfm2Model.embedding_norm is applied after the last layer: the final norm. */
    if ((rc = fg__add_norm(m, -1, "Final norm", m->hidden, FG_NORM_RMS, err)))
        return rc;
    return fg__add_head(m, m->vocab, m->hidden, m->tied, false, false, err);
}

/* ---- Qwen3-Next ------------------------------------------------------------ */

struct deltanet_shape {
    uint64_t hidden, k_heads, v_heads, k_dim, v_dim, kernel;
};

/*
 * Qwen3NextGatedDeltaNet, with key_dim = k_heads x k_dim, value_dim = v_heads x
 * v_dim and conv_dim = 2 key_dim + value_dim:
 *   in_proj_qkvz  hidden -> 2 key_dim + 2 value_dim
 *   in_proj_ba    hidden -> 2 v_heads
 *   conv1d        depthwise over conv_dim, linear_conv_kernel_dim taps, no bias
 *   dt_bias, A_log  one each per value head
 *   norm          Qwen3NextRMSNormGated over v_dim
 *   out_proj      value_dim -> hidden
 * No bias anywhere.  Kept as a Mamba-2-kind node: its recurrent state, v_heads x
 * v_dim x k_dim, and its conv state over conv_dim have Mamba-2's form with
 * ssm_heads = v_heads, ssm_head_dim = v_dim, groups = k_heads, state = k_dim.
 */
static int add_deltanet(struct fg_model *m, int32_t layer, const struct deltanet_shape *s,
                        struct fg_err *err)
{
    struct fg_node *n = fg__model_add_block(m, FG_NODE_MAMBA2, layer, "DeltaNet", err);
    if (!n)
        return FG_E_NOMEM;
    uint64_t key_dim = s->k_heads * s->k_dim, value_dim = s->v_heads * s->v_dim;
    uint64_t conv_dim = 2 * key_dim + value_dim;
    fg__node_linear(n, "in_proj", s->hidden, 2 * key_dim + 2 * value_dim, 1, false);
    fg__node_linear(n, "in_proj_ba", s->hidden, 2 * s->v_heads, 1, false);
    fg__node_linear(n, "out_proj", value_dim, s->hidden, 1, false);
    n->params += conv_dim * s->kernel + 2 * s->v_heads + s->v_dim;
    n->hidden = (uint32_t)s->hidden;
    n->width = (uint32_t)s->hidden;
    n->ssm_heads = (uint32_t)s->v_heads;
    n->ssm_head_dim = (uint32_t)s->v_dim;
    n->groups = (uint32_t)s->k_heads;
    n->state = (uint32_t)s->k_dim;
    n->conv_kernel = (uint32_t)s->kernel;
    fg__fmt(n->desc, sizeof n->desc, "gated delta %llu v-heads x%llu, %llu k-heads x%llu",
             (unsigned long long)s->v_heads, (unsigned long long)s->v_dim,
             (unsigned long long)s->k_heads, (unsigned long long)s->k_dim);
    return 0;
}

/* Qwen3NextAttention: q_proj doubled (the output gate), q/k/v/o biased by attention_bias,
 * q_norm / k_norm over head_dim. */
static struct fg_node *add_gated_attention(struct fg_model *m, int32_t layer, bool bias,
                                           struct fg_err *err)
{
    struct fg_attn_shape a = {.hidden = m->hidden, .heads = m->heads, .kv_heads = m->kv_heads,
                              .head_dim = m->head_dim, .qkv_bias = bias, .o_bias = bias,
                              .qk_norm = 1, .qk_norm_kind = FG_NORM_RMS};
    struct fg_node *n;
    if (fg__add_attention(m, layer, &a, &n, err))
        return NULL;
    uint64_t q = m->heads * m->head_dim;
    for (size_t i = 0; i < n->nlin; i++)
        if (strcmp(n->lin[i].role, "q") == 0)
            n->lin[i].out = (uint32_t)(2 * q);
    n->params += m->hidden * q + (bias ? q : 0);
    return n;
}

struct qwen_moe_shape {
    uint64_t hidden, experts, top_k, inter, shared_inter;
};

/* Qwen3NextSparseMoeBlock: gate Linear(hidden, experts), experts gate/up/down of
 * moe_intermediate_size, shared_expert Qwen3NextMLP of shared_expert_intermediate_size and
 * shared_expert_gate Linear(hidden, 1); no biases. */
static int add_qwen_moe(struct fg_model *m, int32_t layer, const struct qwen_moe_shape *s,
                        struct fg_err *err)
{
    /* qwen3_next maps to qwen2_moe in transformers' _MODEL_TO_CONVERSION_PATTERN, as
     * qwen3_moe does: read as that row (not measured here) */
    const struct fg_moe_shape ms = {
        .hidden = s->hidden, .experts = s->experts, .top_k = s->top_k, .inter = s->inter,
        .shared_inter = s->shared_inter, .shared_n = 1, .gated = true, .shared_gate = true,
        .lora_experts = FG_LORA_EXPERTS_MERGED};
    return fg__add_moe(m, layer, &ms, NULL, err);
}

/*
 * Which Qwen3-Next layers attend fully: layer_types, else every
 * full_attention_interval-th layer (Qwen3NextConfig's fallback).
 */
static int read_qwen3_next_kinds(const struct fg_cfg *c, const struct hy_kind_name *kinds,
                                 uint64_t layers, enum hy_kind *out, struct fg_err *err)
{
    size_t nn = 0;
    uint64_t every;
    int rc;
    if ((rc = fg_cfg_u64(c, "full_attention_interval", 4, 1, FG_MAX_LAYERS, &every, err)) ||
        (rc = fg__hy_read_kind_list(c, "layer_types", "layer_types", kinds, layers, out, &nn,
                                    err)) ||
        nn)
        return rc;
    for (uint64_t i = 0; i < layers; i++)
        out[i] = (i + 1) % every ? HY_MAMBA : HY_ATTN;
    return 0;
}

/* One Qwen3NextDecoderLayer: input_layernorm, mixer, post_attention_layernorm, MoE or MLP. */
static int add_qwen3_next_block(struct fg_model *m, int32_t li, enum hy_kind kind, bool moe,
                                const struct deltanet_shape *dn, const struct qwen_moe_shape *q,
                                bool bias, struct fg_err *err)
{
    int rc;
    if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)))
        return rc;
    if (kind == HY_ATTN) {
        if (!add_gated_attention(m, li, bias, err))
            return FG_E_NOMEM;
    } else if ((rc = add_deltanet(m, li, dn, err))) {
        return rc;
    }
    if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)))
        return rc;
    if (moe)
        return add_qwen_moe(m, li, q, err);
    struct fg_mlp_shape f = {.hidden = m->hidden, .inter = m->inter, .gated = true};
    return fg__add_mlp(m, li, &f, NULL, err);
}

/*
 * Qwen3NextForCausalLM.  The published checkpoints also store
 * mtp_num_hidden_layers multi-token-prediction layers that transformers does
 * not load (mtp.* in _keys_to_ignore_on_load_unexpected): mtp.fc 2 hidden ->
 * hidden, mtp.pre_fc_norm_embedding and mtp.pre_fc_norm_hidden, the layers
 * (full-attention blocks with their MoE) and mtp.norm; no embedding or head
 * copies.  Qwen3-Next-80B-A3B's shapes give its published 81,324,862,720 with
 * one MTP layer, and without it 79,674,391,296, Qwen3-Coder-Next's
 * (tests/test_arch_hybrid.c).
 */
static int read_qwen3_next(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                           struct fg_err *err)
{
    const struct hybrid_spec *s = spec;
    int rc;
    bool bias = false;
    uint64_t step = 1, mtp = 0;
    struct deltanet_shape dn = {0};
    struct qwen_moe_shape q = {0};
    if ((rc = fg__read_core(c, m, &s->d, err)) || (rc = fg__hy_read_kv_heads(c, m, s->kv_heads,
                                                                             err)))
        return rc;
    if (!fg_cfg_has(c, "head_dim"))
        m->head_dim = 256; /* Qwen3NextConfig.head_dim default */
    dn.hidden = q.hidden = m->hidden;
    if ((rc = fg_cfg_bool(c, "attention_bias", false, &bias, err)) ||
        (rc = fg_cfg_u64(c, "linear_num_key_heads", 16, 1, FG_MAX_HEADS, &dn.k_heads, err)) ||
        (rc = fg_cfg_u64(c, "linear_num_value_heads", 32, 1, FG_MAX_HEADS, &dn.v_heads, err)) ||
        (rc = fg_cfg_u64(c, "linear_key_head_dim", 128, 1, 1u << 14, &dn.k_dim, err)) ||
        (rc = fg_cfg_u64(c, "linear_value_head_dim", 128, 1, 1u << 14, &dn.v_dim, err)) ||
        (rc = fg_cfg_u64(c, "linear_conv_kernel_dim", 4, 1, 1024, &dn.kernel, err)) ||
        (rc = fg_cfg_u64(c, "num_experts", s->experts_def, 0, FG_MAX_EXPERTS, &q.experts,
                         err)) ||
        (rc = fg_cfg_u64(c, "num_experts_per_tok", 10, 1, FG_MAX_EXPERTS, &q.top_k, err)) ||
        (rc = fg_cfg_u64(c, "moe_intermediate_size", 512, 1, FG_MAX_INTER, &q.inter, err)) ||
        (rc = fg_cfg_u64(c, "shared_expert_intermediate_size", 512, 0, FG_MAX_INTER,
                         &q.shared_inter, err)) ||
        (rc = fg_cfg_u64(c, "decoder_sparse_step", 1, 1, m->layers, &step, err)) ||
        (rc = fg_cfg_u64(c, "mtp_num_hidden_layers", 0, 0, 64, &mtp, err)))
        return rc;
    if (q.experts && q.top_k > q.experts)
        return fg_err_set(err, FG_E_RANGE, "%s: num_experts_per_tok %llu exceeds num_experts "
                          "%llu", c->origin, (unsigned long long)q.top_k,
                          (unsigned long long)q.experts);
    /* Qwen3NextGatedDeltaNet repeats each key head over v_heads / k_heads value heads */
    if (dn.v_heads % dn.k_heads)
        return fg_err_set(err, FG_E_RANGE, "%s: linear_num_value_heads %llu is not a multiple of "
                          "linear_num_key_heads %llu", c->origin, (unsigned long long)dn.v_heads,
                          (unsigned long long)dn.k_heads);
    uint64_t only[FG_MAX_LAYERS];
    size_t n_only = 0;
    bool dense[FG_MAX_LAYERS] = {0};
    if ((rc = fg_cfg_u64_array(c, "mlp_only_layers", 0, m->layers - 1, only, FG_MAX_LAYERS,
                               &n_only, err)))
        return rc;
    for (size_t i = 0; i < n_only && i < FG_MAX_LAYERS; i++)
        dense[only[i]] = true;
    enum hy_kind kinds[FG_MAX_LAYERS];
    if ((rc = read_qwen3_next_kinds(c, s->kinds, m->layers, kinds, err)))
        return rc;

    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)))
        return rc;
    for (uint64_t l = 0; l < m->layers; l++) {
        bool moe = q.experts && !dense[l] && (l + 1) % step == 0;
        if ((rc = add_qwen3_next_block(m, (int32_t)l, kinds[l], moe, &dn, &q, bias, err)))
            return rc;
    }
    if (q.experts) {
        m->experts = q.experts;
        m->top_k = q.top_k;
    }
    if ((rc = fg__add_norm(m, -1, "Final norm", m->hidden, FG_NORM_RMS, err)) ||
        (rc = fg__add_head(m, m->vocab, m->hidden, m->tied, false, false, err)))
        return rc;
    if (!mtp && !fg_cfg_has(c, "mtp_num_hidden_layers"))
        /* the releases of this class store MTP layers; a config that does not say how many
         * cannot say what its checkpoint holds (Qwen3-Next-80B-A3B: 2.0% more) */
        fg__model_unsure_count(m, "mtp_num_hidden_layers", "unsure: mtp_num_hidden_layers "
                               "absent: the releases of this class store multi-token-"
                               "prediction layers (mtp.*) it does not build, and this "
                               "config.json does not say how many; the safetensors headers "
                               "settle what the checkpoint holds");
    if (!mtp)
        return 0;
    /* the MTP layers, built aside to be counted as a rule */
    struct fg_model *x = fg__model_scratch(m, err);
    if (!x)
        return FG_E_NOMEM;
    for (uint64_t i = 0; i < mtp && !rc; i++)
        rc = add_qwen3_next_block(x, (int32_t)i, HY_ATTN, q.experts != 0, &dn, &q, bias, err);
    uint64_t block = rc ? 0 : fg_model_params_of(x, FG_NODE_KIND_COUNT);
    fg_model_free(x);
    if (rc)
        return rc;
    uint64_t h = m->hidden;
    fg__model_rule_optional(m, "mtp_num_hidden_layers", "MTP layers (mtp_num_hidden_layers): "
                            "blocks + fc 2h->h, two pre-fc norms, norm",
                            (int64_t)(block + 2 * h * h + 3 * h));
    return 0;
}

const struct fg_arch fg__arch_hybrid_table[] = {
#include "arch/hybrid/nemotron_h_lfm2_qwen3_next.def"
    {0},
};
