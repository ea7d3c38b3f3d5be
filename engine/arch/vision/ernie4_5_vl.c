/*
 * ernie4_5_vl.c - ERNIE-4.5-VL, Ernie4_5_VLMoeForConditionalGeneration, read from
 * huggingface/transformers@decba1d2ea models/ernie4_5_vl_moe/modeling_ernie4_5_vl_moe.py
 * and configuration_ernie4_5_vl_moe.py:
 *
 *   vision_tower     Ernie4_5_VLMoeVisionTransformerPretrainedModel: patch_embed.proj
 *                    Linear(in_channels x patch^2, hidden, no bias); depth
 *                    Ernie4_5_VLMoeVisionBlock of norm1 / norm2 LayerNorm (weight + bias),
 *                    attn.qkv Linear(h, 3h) and attn.proj Linear(h, h), both biased, and
 *                    Ernie4_5VLVisionMLP fc1 Linear(h, intermediate_size) / fc2 back, biased;
 *                    a final ln LayerNorm.  The rotary table is a non-persistent buffer.
 *   resampler_model  Ernie4_5_VLMoeVariableResolutionResamplerModel over spatial_dim = h x
 *                    spatial_merge_size^2 and temporal_dim = spatial_dim x temporal_merge_size:
 *                    spatial_linear and temporal_linear (Ernie4_5_VLMoeVisionMLP: fc1 in ->
 *                    spatial_dim, fc2 spatial_dim -> spatial_dim, both biased, ln LayerNorm),
 *                    mlp Linear(spatial_dim, text hidden) biased, after_norm RMSNorm.
 *   language_model   Ernie4_5_VLMoeTextModel: embed_tokens; per layer input_layernorm and
 *                    post_attention_layernorm (RMSNorm), q/k/v/o biased by use_bias, head_dim
 *                    from head_dim or hidden / heads; an mlp_layer_types "sparse" layer holds
 *                    Ernie4_5_VLMoeMoeBlock: text_moe and vision_moe (each a router weight
 *                    (experts, hidden), Ernie4_5_VLMoeMoeStatics' e_score_correction_bias
 *                    (1, experts) and experts of gate_up (2 x width, hidden) / down of
 *                    moe_intermediate_size[0] resp. [1]) and shared_experts, one
 *                    Ernie4_5_VLMoeMLP of moe_intermediate_size[0] x moe_num_shared_experts
 *                    (absent when 0); a "dense" layer an Ernie4_5_VLMoeMLP of
 *                    intermediate_size; MLP linears biased by use_bias; final norm.
 *   lm_head          Linear(text hidden, vocab, no bias), tied to embed_tokens by the root
 *                    config's tie_word_embeddings (the class's _tied_weights_keys).
 *
 * Text tokens run text_moe, image and video tokens vision_moe: both expert sets are stored,
 * one runs per token.  They sit in one MoE node whose width and routing are the text set's
 * (the wider: every token's activations are bounded by it).
 *
 * Baidu's released configs (ERNIE-4.5-VL-28B-A3B-PT / -Thinking, -424B-A47B) are the remote
 * code's Ernie4_5_VLMoEConfig (model_type ernie4_5_moe_vl): the text keys in the root,
 * moe_num_experts and moe_intermediate_size as [text, vision] lists, MoE layers by
 * moe_layer_start_index / moe_layer_end_index / moe_layer_interval (ints or lists), the
 * tower's width by mlp_ratio and the merge sizes from the root's spatial_conv_size /
 * temporal_conv_size.  They are read as transformers' conversion script reads them
 * (convert_ernie4_5_vl_moe_to_hf.py convert_text_config_to_hf /
 * convert_vision_config_to_hf @decba1d2ea).  Their checkpoints hold the same scalars in
 * another layout, which conversion_mapping.py's "ernie4_5_vl_moe" entry renames and splits
 * at load: gate.weight / gate.weight_1 (hidden, experts) for the two routers, one
 * moe_statics.e_score_correction_bias (2, experts), and experts.*.gate_proj / up_proj /
 * down_proj, the text experts then the vision ones.
 */
#include <stdio.h>
#include <string.h>

#include "arch/keys.h"
#include "arch/vision/multimodal.h"
#include "util/fmt.h"

struct ernie_vl_spec {
    bool legacy; /* the remote code's flat config (ernie4_5_moe_vl) */
};

/* What the text blocks need, read once. */
struct ernie_vl_text {
    uint64_t experts, vexperts, top_k, inter_t, inter_v, shared_n;
    bool bias;
    enum fg_lora_experts peft;       /* how peft's LoRA reaches the experts (moe_mla.h) */
    bool sparse[FG_MAX_LAYERS];
};

/* Ernie4_5_VLMoeTextConfig defaults (also the legacy configs', whose class the conversion
 * script carries over key by key). */
static const struct fg_core_defaults text_defaults = {
    .vocab = 103424, .hidden = 2560, .inter = 12288, .layers = 28, .heads = 20,
    .max_pos = 131072, .tie = true, .kv_heads = 4};

/* An int or a list of ints at key (each -1 to FG_MAX_INTER, -1 in an int only): its entries
 * in out (cap), their count in *n (0 absent). */
static int read_ints(const struct fg_cfg *c, const char *key, int64_t *out, size_t cap,
                     size_t *n, struct fg_err *err)
{
    enum fg_cfg_form f = fg_cfg_form(c, key, NULL);
    *n = 0;
    if (f == FG_CFG_ABSENT || f == FG_CFG_NULL)
        return 0;
    if (f == FG_CFG_NUMBER) {
        double d;
        int rc = fg_cfg_f64(c, key, 0, -1, (double)FG_MAX_INTER, &d, err);
        if (rc)
            return rc;
        if (d != (double)(int64_t)d)
            return fg_err_set(err, FG_E_RANGE, "%s: key '%s' = %g is not a whole number",
                              c->origin, key, d);
        out[0] = (int64_t)d;
        *n = 1;
        return 0;
    }
    uint64_t u[8];
    size_t k = 0;
    int rc = fg_cfg_u64_array(c, key, 0, FG_MAX_INTER, u, 8, &k, err);
    if (rc)
        return rc;
    if (k == 0 || k > cap)
        return fg_err_set(err, FG_E_RANGE, "%s: key '%s' has %zu entries; 1 to %zu are "
                          "understood", c->origin, key, k, cap);
    for (size_t i = 0; i < k; i++)
        out[i] = (int64_t)u[i];
    *n = k;
    return 0;
}

/* The [text, vision] pair of key (one int: both); def when absent. */
static int read_pair(const struct fg_cfg *c, const char *key, const int64_t def[2],
                     uint64_t *a, uint64_t *b, struct fg_err *err)
{
    int64_t v[2];
    size_t n;
    int rc = read_ints(c, key, v, 2, &n, err);
    if (rc)
        return rc;
    if (n == 0) {
        v[0] = def[0];
        v[1] = def[1];
    } else if (n == 1) {
        v[1] = v[0];
    }
    if (v[0] < 1 || v[1] < 1)
        return fg_err_set(err, FG_E_RANGE, "%s: key '%s' needs positive entries", c->origin,
                          key);
    *a = (uint64_t)v[0];
    *b = (uint64_t)v[1];
    return 0;
}

/* The legacy MoE placement (convert_text_config_to_hf): (i + 1) % moe_layer_interval == 0
 * and min(moe_layer_start_index) <= i <= max(moe_layer_end_index), -1 meaning the last. */
static int legacy_placement(const struct fg_cfg *c, const struct fg_model *m,
                            struct ernie_vl_text *t, struct fg_err *err)
{
    int64_t s[8], e[8], lo = 1, hi = -1;
    size_t ns, ne;
    uint64_t every;
    int rc;
    if ((rc = read_ints(c, "moe_layer_start_index", s, 8, &ns, err)) ||
        (rc = read_ints(c, "moe_layer_end_index", e, 8, &ne, err)) ||
        (rc = fg_cfg_u64(c, "moe_layer_interval", 1, 1, m->layers, &every, err)))
        return rc;
    for (size_t i = 0; i < ns; i++)
        lo = i == 0 || s[i] < lo ? s[i] : lo;
    for (size_t i = 0; i < ne; i++)
        hi = i == 0 || e[i] > hi ? e[i] : hi;
    if (hi < 0)
        hi = (int64_t)m->layers - 1;
    for (uint64_t l = 0; l < m->layers; l++)
        t->sparse[l] = (l + 1) % every == 0 && (int64_t)l >= lo && (int64_t)l <= hi;
    return 0;
}

/* Switches of the remote code's config that the conversion script drops, whose names say
 * they add tensors (extra multimodal vocabulary rows, tail layers, a token-type bias,
 * attention experts) and that no released config turns on: on, the count is unsure. */
static const char *const legacy_unsized[] = {"mm_vocab_size", "add_tail_layers",
                                             "moe_use_token_type_bias",
                                             "moe_num_attn_experts", NULL};

static void check_legacy_switches(const struct fg_cfg *c, struct fg_model *m)
{
    for (const char *const *k = legacy_unsized; *k; k++) {
        const struct cJSON *v = fg__cfg_item(c, *k);
        if (v && fg__cfg_set_on(v))
            fg__model_unsure(m, *k, "%s is set: a remote-code switch transformers' conversion "
                             "drops, whose tensors are not sized", *k);
    }
}

/* Ernie4_5_VLMoeTextConfig.mlp_layer_types: dense then sparse when absent. */
static int native_placement(const struct fg_cfg *c, const struct fg_model *m,
                            struct ernie_vl_text *t, struct fg_err *err)
{
    const char *types[FG_MAX_LAYERS];
    size_t n = 0;
    int rc = fg_cfg_str_array(c, "mlp_layer_types", types, FG_MAX_LAYERS, &n, err);
    if (rc)
        return rc;
    if (n == 0) {
        for (uint64_t l = 0; l < m->layers; l++)
            t->sparse[l] = l > 0;
        return 0;
    }
    if (n != m->layers)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'mlp_layer_types' has %zu entries for %llu "
                          "layers", c->origin, n, (unsigned long long)m->layers);
    for (size_t l = 0; l < n; l++) {
        if (strcmp(types[l], "sparse") && strcmp(types[l], "dense"))
            return fg_err_set(err, FG_E_RANGE, "%s: key 'mlp_layer_types' has '%s' at layer "
                              "%zu; expected sparse or dense", c->origin, types[l], l);
        t->sparse[l] = !strcmp(types[l], "sparse");
    }
    return 0;
}

static int read_text_keys(const struct fg_cfg *c, bool legacy, struct fg_model *m,
                          struct ernie_vl_text *t, struct fg_err *err)
{
    static const int64_t inter_def[2] = {1536, 512}, experts_def[2] = {64, 64};
    int rc;
    if ((rc = read_pair(c, "moe_intermediate_size", inter_def, &t->inter_t, &t->inter_v, err)) ||
        (rc = read_pair(c, legacy ? "moe_num_experts" : "moe_num_experts|num_experts",
                        experts_def, &t->experts, &t->vexperts, err)) ||
        (rc = fg_cfg_u64(c, "moe_k|num_experts_per_tok", 6, 1, FG_MAX_EXPERTS, &t->top_k,
                         err)) ||
        /* the conversion script turns an absent (None) count into 0 */
        (rc = fg_cfg_u64(c, "moe_num_shared_experts", legacy ? 0 : 2, 0, FG_MAX_EXPERTS,
                         &t->shared_n, err)) ||
        (rc = fg_cfg_bool(c, "use_bias", false, &t->bias, err)))
        return rc;
    if (t->experts > FG_MAX_EXPERTS || t->vexperts > FG_MAX_EXPERTS || t->top_k > t->experts ||
        t->top_k > t->vexperts)
        return fg_err_set(err, FG_E_RANGE, "%s: moe_k %llu is more than the routed experts "
                          "(moe_num_experts %llu / %llu), or those are out of range", c->origin,
                          (unsigned long long)t->top_k, (unsigned long long)t->experts,
                          (unsigned long long)t->vexperts);
    if (t->shared_n * t->inter_t > FG_MAX_INTER)
        return fg_err_set(err, FG_E_RANGE, "%s: moe_num_shared_experts x moe_intermediate_size "
                          "is out of range", c->origin);
    if (t->experts != t->vexperts)
        fg__model_unsure(m, "moe_num_experts", "moe_num_experts gives the text and vision "
                         "experts different counts (%llu, %llu); transformers' conversion "
                         "keeps the first for both", (unsigned long long)t->experts,
                         (unsigned long long)t->vexperts);
    if (!legacy)
        return native_placement(c, m, t, err);
    check_legacy_switches(c, m);
    return legacy_placement(c, m, t, err);
}

/* Ernie4_5_VLMoeMoeBlock: text_moe with the shared experts, vision_moe added to the node. */
static int add_moe_block(struct fg_model *m, int32_t li, const struct ernie_vl_text *t,
                         struct fg_err *err)
{
    uint64_t h = m->hidden, sh = t->shared_n * t->inter_t;
    const struct fg_moe_shape ms = {
        .hidden = h, .experts = t->experts, .top_k = t->top_k, .inter = t->inter_t,
        .shared_inter = sh, .shared_n = (uint32_t)t->shared_n, .gated = true,
        .score_bias = true, .lora_experts = (uint8_t)t->peft};
    struct fg_node *n;
    int rc = fg__add_moe(m, li, &ms, &n, err);
    if (rc)
        return rc;
    uint64_t e = t->vexperts, w = t->inter_v;
    fg__node_linear(n, "router", h, e, 1, false);
    fg__node_linear(n, "gate", h, w, e, false);
    fg__node_linear(n, "up", h, w, e, false);
    fg__node_linear(n, "down", w, h, e, false);
    n->params += e; /* vision_moe.gate.moe_statics.e_score_correction_bias */
    n->buffers += e;
    if (t->bias && sh)
        n->params += 2 * sh + h; /* shared_experts gate / up / down biases */
    fg__fmt(n->desc, sizeof n->desc, "%llu+%llu experts top-%llu, %llu/%llu wide, %llu shared",
            (unsigned long long)t->experts, (unsigned long long)e,
            (unsigned long long)t->top_k, (unsigned long long)t->inter_t,
            (unsigned long long)w, (unsigned long long)t->shared_n);
    return 0;
}

static int add_text_block(struct fg_model *m, uint64_t l, const struct ernie_vl_text *t,
                          struct fg_err *err)
{
    int32_t li = (int32_t)l;
    const struct fg_attn_shape a = {.hidden = m->hidden, .heads = m->heads,
                                    .kv_heads = m->kv_heads, .head_dim = m->head_dim,
                                    .qkv_bias = t->bias, .o_bias = t->bias};
    const struct fg_mlp_shape f = {.hidden = m->hidden, .inter = m->inter, .gated = true,
                                   .bias = t->bias};
    struct fg_node *mlp;
    int rc;
    if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)) ||
        (rc = fg__add_attention(m, li, &a, NULL, err)) ||
        (rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)))
        return rc;
    if (t->sparse[l])
        return add_moe_block(m, li, t, err);
    if ((rc = fg__add_mlp(m, li, &f, &mlp, err)))
        return rc;
    mlp->lora_experts = (uint8_t)t->peft;
    return 0;
}

/* Ernie4_5_VLMoeTextModel and lm_head from the text keys in c. */
static int read_text(const struct fg_cfg *c, bool legacy, struct fg_model *m,
                     struct fg_err *err)
{
    /* transformers converts ernie4_5_vl_moe's fused experts for peft
     * (conversion_mapping.py); the remote code keeps a list of nn.Linear experts */
    struct ernie_vl_text t = {.peft = legacy ? FG_LORA_EXPERTS_LINEAR : FG_LORA_EXPERTS_MERGED};
    int rc;
    if ((rc = fg__read_core(c, m, &text_defaults, err)) ||
        (rc = read_text_keys(c, legacy, m, &t, err)))
        return rc;
    m->experts = t.experts;
    m->top_k = t.top_k;
    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)))
        return rc;
    size_t block = 0;
    for (uint64_t l = 0; l < m->layers; l++) {
        uint64_t same = 0;
        while (l > 0 && l + same < m->layers && t.sparse[l + same] == t.sparse[l - 1])
            same++;
        if (same && fg__model_repeat_block(m, block, (int32_t)l, (uint32_t)same)) {
            l += same - 1;
            continue;
        }
        block = m->n_nodes;
        if ((rc = add_text_block(m, l, &t, err)))
            return rc;
    }
    return fg__add_norm(m, -1, "Final norm", m->hidden, FG_NORM_RMS, err);
}

struct ernie_vl_tower {
    uint64_t h, L, heads, ch, patch, inter, merge, temporal;
};

static int read_tower(const struct fg_cfg *c, const struct fg_cfg *v, bool legacy,
                      struct ernie_vl_tower *d, struct fg_err *err)
{
    int rc;
    if ((rc = fg_cfg_u64(v, legacy ? "hidden_size|embed_dim" : "hidden_size", 1280, 1,
                         FG_MAX_HIDDEN, &d->h, err)) ||
        (rc = fg_cfg_u64(v, "depth", 32, 1, FG_MAX_LAYERS, &d->L, err)) ||
        (rc = fg_cfg_u64(v, "num_heads", 16, 1, FG_MAX_HEADS, &d->heads, err)) ||
        (rc = fg_cfg_u64(v, legacy ? "in_channels|in_chans" : "in_channels", 3, 1, 64, &d->ch,
                         err)) ||
        (rc = fg_cfg_u64(v, "patch_size", 14, 1, 4096, &d->patch, err)))
        return rc;
    if (legacy) {
        /* convert_vision_config_to_hf: hidden_size x mlp_ratio, and the root's conv sizes */
        uint64_t ratio, ignored;
        if ((rc = fg_cfg_u64(v, "mlp_ratio", 4, 1, 64, &ratio, err)) ||
            (rc = fg_cfg_u64(v, "spatial_merge_size", 2, 1, 64, &ignored, err)) ||
            (rc = fg_cfg_u64(c, "spatial_conv_size", 2, 1, 64, &d->merge, err)) ||
            (rc = fg_cfg_u64(c, "temporal_conv_size", 2, 1, 64, &d->temporal, err)))
            return rc;
        d->inter = d->h * ratio;
    } else if ((rc = fg_cfg_u64(v, "intermediate_size", 4 * 1280, 1, FG_MAX_INTER, &d->inter,
                                err)) ||
               (rc = fg_cfg_u64(v, "spatial_merge_size", 2, 1, 64, &d->merge, err)) ||
               (rc = fg_cfg_u64(v, "temporal_merge_size", 2, 1, 64, &d->temporal, err))) {
        return rc;
    }
    if (d->h % d->heads)
        return fg_err_set(err, FG_E_RANGE, "%s: vision_config hidden_size %llu is not divisible "
                          "by num_heads %llu", v->origin, (unsigned long long)d->h,
                          (unsigned long long)d->heads);
    return 0;
}

/* The vision tower (one FG_NODE_VISION node) and the resampler (the projector). */
static int add_tower(struct fg_model *m, const struct ernie_vl_tower *d, struct fg_err *err)
{
    uint64_t h = d->h, L = d->L;
    struct fg_node *n = fg__mm_tower_node(m, "Vision tower", h, d->heads, d->inter, err);
    if (!n)
        return FG_E_NOMEM;
    fg__mm_tower_blocks(n, &(struct fg_mm_blocks){.h = h, .f = d->inter, .L = L,
                                                  .fused_qkv = true, .qkv_bias = true,
                                                  .o_bias = true, .mlp_bias = true});
    n->params += L * 2 * 2 * h;                        /* norm1, norm2 LayerNorms */
    n->params += d->ch * d->patch * d->patch * h;      /* patch_embed.proj, no bias */
    n->params += 2 * h;                                /* ln */
    fg__fmt(n->desc, sizeof n->desc, "ERNIE-4.5-VL ViT %llu x %llu, native resolution",
            (unsigned long long)L, (unsigned long long)h);

    uint64_t sd = h * d->merge * d->merge, td = sd * d->temporal, out = m->hidden;
    struct fg_node *p = fg__mm_projector_node(m, out, "variable-resolution resampler", err);
    if (!p)
        return FG_E_NOMEM;
    fg__node_linear(p, "spatial_fc1", sd, sd, 1, true);
    fg__node_linear(p, "spatial_fc2", sd, sd, 1, true);
    fg__node_linear(p, "temporal_fc1", td, sd, 1, true);
    fg__node_linear(p, "temporal_fc2", sd, sd, 1, true);
    fg__node_linear(p, "mlp", sd, out, 1, true);
    p->params += 2 * 2 * sd; /* spatial_linear.ln, temporal_linear.ln */
    p->params += out;        /* after_norm RMSNorm */
    return 0;
}

/* The tower and resampler (fg__mm_tower_fn; ctx the row's spec). */
static int add_vision(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                      const void *ctx, struct fg_err *err)
{
    const struct ernie_vl_spec *s = ctx;
    struct ernie_vl_tower d;
    int rc = read_tower(c, v, s->legacy, &d, err);
    return rc ? rc : add_tower(m, &d, err);
}

static int read_ernie_vl(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                         struct fg_err *err)
{
    const struct ernie_vl_spec *s = spec;
    struct fg_cfg text = *c;
    bool tie;
    int rc;
    if (!s->legacy && fg_cfg_has(c, "text_config") && !fg_cfg_child(c, "text_config", &text, err))
        return FG_E_TYPE;
    /* the root's tie_word_embeddings (Ernie4_5_VLMoeConfig default true) ties lm_head */
    if ((rc = read_text(&text, s->legacy, m, err)) ||
        (rc = fg_cfg_bool(c, "tie_word_embeddings", true, &tie, err)) ||
        (rc = fg__add_head(m, m->vocab, m->hidden, tie, false, false, err)))
        return rc;
    return fg__mm_add_vision_first(c, m, "the vision tower and resampler", add_vision, s, err);
}

static const struct ernie_vl_spec ernie_vl_native = {.legacy = false};
static const struct ernie_vl_spec ernie_vl_legacy = {.legacy = true};

const struct fg_arch fg__arch_vl_ernie_table[] = {
#include "arch/vision/ernie4_5_vl.def"
    {0},
};
