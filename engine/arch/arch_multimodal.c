/*
 * arch_multimodal.c - vision-language wrappers: a text model from
 * text_config (read by the registered reader of its model_type, so a text
 * family is described once), a vision tower from vision_config counted as
 * one FG_NODE_VISION node, and the projector that maps image features into
 * the text width as one FG_NODE_OTHER node.  Both sit in FG_STACK_TOWER,
 * ahead of the text model's nodes (images are encoded first, and pipeline
 * stage 0 holds the tower in Megatron / NeMo layouts).
 *
 * What differs between towers (stem, position table, class token, norms,
 * pooling head) is a column of struct vit_spec; the projector is one of a
 * few builders, each naming its class.  llama4_text, the Llama-4 MoE text
 * model the llama4 wrapper reads, is arch_llama4.c.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "util/fmt.h"

/* A config key with its class default; def 0 means the key is required. */
struct mm_key {
    const char *keys;
    uint64_t def;
};

enum vit_pos {
    VIT_POS_NONE,     /* rotary only, nothing stored (Qwen2-VL) */
    VIT_POS_PATCHES,  /* learned table, one row per patch (+ class token) */
    VIT_POS_GRID,     /* learned pos_h x pos_w grid, interpolated (MoonViT) */
    VIT_POS_TABLE,    /* learned table of pos_rows rows, interpolated (Qwen3-VL) */
};

/*
 * A ViT-style tower.  Every tower here has blocks of: two LayerNorms with
 * bias, q/k/v/o with bias (fused qkv in some), and a two-layer MLP with
 * bias; they differ in the stem and what surrounds the blocks.
 */
struct vit_spec {
    const char *name;                   /* shown in the node's description */
    struct mm_key hidden, layers, heads, inter, channels, patch, image;
    struct mm_key temporal;             /* Conv3d time taps (Qwen2-VL); keys NULL = 2D stem */
    const char *mlp_ratio_key;          /* MLP width = hidden x ratio (Qwen2-VL), or NULL */
    double mlp_ratio_def;
    enum vit_pos pos;
    struct mm_key pos_h, pos_w;         /* VIT_POS_GRID */
    struct mm_key pos_rows;             /* VIT_POS_TABLE */
    bool class_token;                   /* learned class embedding (+1 position) */
    bool patch_bias;                    /* patch stem has a bias */
    bool pre_norm, post_norm;           /* LayerNorm before / after the blocks */
    bool fused_qkv;                     /* one qkv projection (LoRA role "qkv") */
    const char *head_key;               /* SigLIP attention-pooling head switch, or NULL */
    bool head_def;
    const char *pos_type_key, *pos_type_val; /* the only position scheme the shapes cover */
    bool rms;                           /* RMSNorms (weight only) instead of LayerNorms */
    bool gated_mlp;                     /* gate / up / down MLP (Pixtral) */
    bool no_bias;                       /* no linear carries a bias (Pixtral) */
};

/* CLIPVisionModel (transformers models/clip): Conv2d stem without bias,
 * class_embedding, position_embedding of num_patches + 1 rows (position_ids
 * is a non-persistent buffer), pre_layrnorm and post_layernorm.
 * CLIPVisionConfig defaults. */
static const struct vit_spec clip_vit = {
    .name = "CLIP ViT",
    .hidden = {"hidden_size", 768}, .layers = {"num_hidden_layers", 12},
    .heads = {"num_attention_heads", 12}, .inter = {"intermediate_size", 3072},
    .channels = {"num_channels", 3}, .patch = {"patch_size", 32}, .image = {"image_size", 224},
    .pos = VIT_POS_PATCHES, .class_token = true, .patch_bias = false, .pre_norm = true,
    .post_norm = true};

/* SiglipVisionModel (transformers models/siglip): Conv2d stem with bias,
 * position_embedding of num_patches rows, post_layernorm, and the
 * attention-pooling head unless vision_use_head is false.
 * SiglipVisionConfig defaults. */
static const struct vit_spec siglip_vit = {
    .name = "SigLIP ViT",
    .hidden = {"hidden_size", 768}, .layers = {"num_hidden_layers", 12},
    .heads = {"num_attention_heads", 12}, .inter = {"intermediate_size", 3072},
    .channels = {"num_channels", 3}, .patch = {"patch_size", 16}, .image = {"image_size", 224},
    .pos = VIT_POS_PATCHES, .patch_bias = true, .post_norm = true,
    .head_key = "vision_use_head", .head_def = true};

/* Qwen2VisionTransformerPretrainedModel (models/qwen2_vl): PatchEmbed is a
 * Conv3d over temporal_patch_size x patch x patch without bias; rotary
 * positions (inv_freq non-persistent); no norm outside the blocks (the
 * merger's ln_q is counted with the projector).  Qwen2VLVisionConfig
 * defaults; "in_chans" is the key older configs wrote. */
static const struct vit_spec qwen2_vl_vit = {
    .name = "Qwen2-VL ViT",
    .hidden = {"embed_dim", 1280}, .layers = {"depth", 32}, .heads = {"num_heads", 16},
    .channels = {"in_channels|in_chans", 3}, .patch = {"patch_size|spatial_patch_size", 14},
    .temporal = {"temporal_patch_size", 2}, .mlp_ratio_key = "mlp_ratio", .mlp_ratio_def = 4.0,
    .pos = VIT_POS_NONE, .fused_qkv = true};

/* Llama4VisionModel (models/llama4): Llama4UnfoldConvolution is a Linear
 * over channels x patch^2 without bias, class_embedding,
 * positional_embedding_vlm of num_patches + 1 rows, layernorm_pre /
 * layernorm_post; the rotary table is a plain attribute, not stored.  The
 * pixel-shuffle vision_adapter is counted with the projector.
 * Llama4VisionConfig defaults. */
static const struct vit_spec llama4_vit = {
    .name = "Llama-4 ViT",
    .hidden = {"hidden_size", 768}, .layers = {"num_hidden_layers", 34},
    .heads = {"num_attention_heads", 16}, .inter = {"intermediate_size", 5632},
    .channels = {"num_channels", 3}, .patch = {"patch_size", 14}, .image = {"image_size", 448},
    .pos = VIT_POS_PATCHES, .class_token = true, .pre_norm = true, .post_norm = true};

/* MoonViT3dPretrainedModel (Kimi-K2.5 remote modeling_kimi_k25.py):
 * Conv2d stem with bias (3 channels), a learned init_pos_emb_height x
 * init_pos_emb_width grid (the temporal sin-cos table is a non-persistent
 * buffer), fused wqkv, final_layernorm; 2D rope computed, not stored.
 * The remote config class has no defaults we could cite: keys required. */
static const struct vit_spec moonvit = {
    .name = "MoonViT",
    .hidden = {"vt_hidden_size|hidden_size", 0}, .layers = {"vt_num_hidden_layers", 0},
    .heads = {"vt_num_attention_heads", 0}, .inter = {"vt_intermediate_size", 0},
    .channels = {NULL, 3}, .patch = {"patch_size", 0},
    .pos = VIT_POS_GRID, .pos_h = {"init_pos_emb_height", 0}, .pos_w = {"init_pos_emb_width", 0},
    .patch_bias = true, .post_norm = true, .fused_qkv = true,
    .pos_type_key = "pos_emb_type", .pos_type_val = "divided_fixed"};

/* Qwen3VLVisionModel (transformers models/qwen3_vl/modeling_qwen3_vl.py): PatchEmbed a
 * Conv3d over temporal_patch_size x patch x patch WITH bias, pos_embed a learned table of
 * num_position_embeddings rows (bilinearly interpolated to the grid), blocks of LayerNorms
 * with bias, fused qkv and proj with bias, linear_fc1 / linear_fc2 with bias; no norm
 * outside the blocks (the mergers are counted with the projector).  Qwen3VLVisionConfig
 * defaults. */
static const struct vit_spec qwen3_vl_vit = {
    .name = "Qwen3-VL ViT",
    .hidden = {"hidden_size", 1152}, .layers = {"depth", 27}, .heads = {"num_heads", 16},
    .inter = {"intermediate_size", 4304}, .channels = {"in_channels", 3},
    .patch = {"patch_size", 16}, .temporal = {"temporal_patch_size", 2},
    .pos = VIT_POS_TABLE, .pos_rows = {"num_position_embeddings", 2304}, .patch_bias = true,
    .fused_qkv = true};

/* PixtralVisionModel (transformers models/pixtral/modeling_pixtral.py): patch_conv a Conv2d
 * without bias, ln_pre (RMSNorm), blocks of attention_norm / ffn_norm RMSNorms, q/k/v/o and
 * a gated feed_forward (gate / up / down), no biases; 2D rotary positions, nothing stored.
 * PixtralVisionConfig defaults. */
static const struct vit_spec pixtral_vit = {
    .name = "Pixtral ViT",
    .hidden = {"hidden_size", 1024}, .layers = {"num_hidden_layers", 24},
    .heads = {"num_attention_heads", 16}, .inter = {"intermediate_size", 4096},
    .channels = {"num_channels", 3}, .patch = {"patch_size", 16}, .image = {"image_size", 1024},
    .pos = VIT_POS_NONE, .pre_norm = true, .rms = true, .gated_mlp = true, .no_bias = true};

enum proj_kind { PROJ_LLAVA, PROJ_GEMMA3, PROJ_QWEN2_VL, PROJ_LLAMA4, PROJ_KIMI, PROJ_QWEN3_VL,
                 PROJ_MISTRAL3 };

struct mm_spec {
    const char *text_type;    /* text reader when text_config names no model_type */
    const char *text_alias;   /* a text model_type meaning text_type, or NULL */
    bool text_in_root;        /* without text_config the text keys sit in the root */
    const struct vit_spec *vit;
    enum proj_kind proj;
};

/* ---- helpers --------------------------------------------------------------- */

static int get_key(const struct fg_cfg *c, const struct mm_key *k, uint64_t max, uint64_t *out,
                   struct fg_err *err)
{
    if (!k->keys) {
        *out = k->def;
        return 0;
    }
    if (k->def == 0)
        return fg_cfg_u64_req(c, k->keys, 1, max, out, err);
    return fg_cfg_u64(c, k->keys, k->def, 1, max, out, err);
}

/* Move the nodes from index first on to the front, keeping both runs in order. */
static int move_to_front(struct fg_model *m, size_t first, struct fg_err *err)
{
    size_t k = m->n_nodes - first;
    if (k == 0 || first == 0)
        return 0;
    struct fg_node *tmp = malloc(k * sizeof *tmp);
    if (!tmp)
        return fg_err_set(err, FG_E_NOMEM, "out of memory building the model graph");
    memcpy(tmp, m->nodes + first, k * sizeof *tmp);
    memmove(m->nodes + k, m->nodes, first * sizeof *tmp);
    memcpy(m->nodes, tmp, k * sizeof *tmp);
    free(tmp);
    return 0;
}

/* ---- vision tower ------------------------------------------------------------ */

struct vit_dims {
    uint64_t hidden, layers, heads, inter, channels, patch, image, temporal;
};

static int read_vit_dims(const struct fg_cfg *v, const struct vit_spec *s, struct vit_dims *d,
                         struct fg_err *err)
{
    int rc;
    d->temporal = 1;
    d->image = 0;
    d->inter = 0;
    if ((rc = get_key(v, &s->hidden, FG_MAX_HIDDEN, &d->hidden, err)) ||
        (rc = get_key(v, &s->layers, FG_MAX_LAYERS, &d->layers, err)) ||
        (rc = get_key(v, &s->heads, FG_MAX_HEADS, &d->heads, err)) ||
        (rc = get_key(v, &s->channels, 64, &d->channels, err)) ||
        (rc = get_key(v, &s->patch, 4096, &d->patch, err)))
        return rc;
    if (s->temporal.keys && (rc = get_key(v, &s->temporal, 64, &d->temporal, err)))
        return rc;
    if (s->image.keys && (rc = get_key(v, &s->image, 1u << 16, &d->image, err)))
        return rc;
    if (s->mlp_ratio_key) {
        double r = 0;
        if ((rc = fg_cfg_f64(v, s->mlp_ratio_key, s->mlp_ratio_def, 0.01, 64.0, &r, err)))
            return rc;
        d->inter = (uint64_t)((double)d->hidden * r);   /* int(dim * mlp_ratio) */
    } else if ((rc = get_key(v, &s->inter, FG_MAX_INTER, &d->inter, err))) {
        return rc;
    }
    if (d->inter == 0 || d->inter > FG_MAX_INTER)
        return fg_err_set(err, FG_E_RANGE, "%s: %s MLP width %llu is out of range", v->origin,
                          v->scope, (unsigned long long)d->inter);
    if (d->hidden % d->heads)
        return fg_err_set(err, FG_E_RANGE, "%s: %s hidden size %llu is not divisible by %llu heads",
                          v->origin, v->scope, (unsigned long long)d->hidden,
                          (unsigned long long)d->heads);
    if (s->pos_type_key) {
        const char *pt = NULL;
        if ((rc = fg_cfg_str(v, s->pos_type_key, s->pos_type_val, &pt, err)))
            return rc;
        if (strcmp(pt, s->pos_type_val) != 0)
            return fg_err_set(err, FG_E_UNSUPPORTED, "%s: key '%s.%s' is '%s'; only '%s' is "
                              "understood", v->origin, v->scope, s->pos_type_key, pt,
                              s->pos_type_val);
    }
    return 0;
}

static int add_vit(struct fg_model *m, const struct fg_cfg *v, const struct vit_spec *s,
                   struct vit_dims *d, struct fg_err *err)
{
    int rc;
    if ((rc = read_vit_dims(v, s, d, err)))
        return rc;
    uint64_t h = d->hidden, L = d->layers, tokens = 0, pos = 0;
    if (s->pos == VIT_POS_PATCHES) {
        if (!d->image || d->image % d->patch)
            return fg_err_set(err, FG_E_RANGE, "%s: %s image_size %llu is not a multiple of "
                              "patch_size %llu", v->origin, v->scope,
                              (unsigned long long)d->image, (unsigned long long)d->patch);
        tokens = (d->image / d->patch) * (d->image / d->patch) + (s->class_token ? 1 : 0);
        pos = tokens;
    } else if (s->pos == VIT_POS_TABLE) {
        if ((rc = get_key(v, &s->pos_rows, 1u << 20, &pos, err)))
            return rc;
    } else if (s->pos == VIT_POS_GRID) {
        uint64_t ph = 0, pw = 0;
        if ((rc = get_key(v, &s->pos_h, 1u << 12, &ph, err)) ||
            (rc = get_key(v, &s->pos_w, 1u << 12, &pw, err)))
            return rc;
        pos = ph * pw;
    }
    bool head = false;
    if (s->head_key && (rc = fg_cfg_bool(v, s->head_key, s->head_def, &head, err)))
        return rc;

    struct fg_node *n = fg__model_add(m, FG_NODE_VISION, -1, "Vision tower", err);
    if (!n)
        return FG_E_NOMEM;
    n->stack = FG_STACK_TOWER;
    /* blocks: q/k/v/o (or qkv), fc1/fc2 (or gate/up/down), two norms; biases on every linear
     * and LayerNorms unless the spec says otherwise */
    bool b = !s->no_bias;
    uint64_t norm = s->rms ? h : 2 * h;
    if (s->fused_qkv) {
        fg__node_linear(n, "qkv", h, 3 * h, L, b);
    } else {
        fg__node_linear(n, "q", h, h, L, b);
        fg__node_linear(n, "k", h, h, L, b);
        fg__node_linear(n, "v", h, h, L, b);
    }
    fg__node_linear(n, "o", h, h, L, b);
    if (s->gated_mlp)
        fg__node_linear(n, "gate", h, d->inter, L, b);
    fg__node_linear(n, "up", h, d->inter, L, b);
    fg__node_linear(n, "down", d->inter, h, L, b);
    n->params += L * 2 * norm;
    /* stem: channels x temporal x patch^2 -> h */
    n->params += d->channels * d->temporal * d->patch * d->patch * h + (s->patch_bias ? h : 0);
    n->params += (s->class_token ? h : 0) + pos * h;
    n->params += (s->pre_norm ? norm : 0) + (s->post_norm ? norm : 0);
    if (head)   /* SiglipMultiheadAttentionPoolingHead: probe, MHA, LayerNorm, MLP */
        n->params += h + (3 * h * h + 3 * h) + (h * h + h) + 2 * h +
                     (h * d->inter + d->inter) + (d->inter * h + h);
    n->hidden = (uint32_t)h;
    n->width = (uint32_t)h;
    n->heads = (uint32_t)d->heads;
    n->kv_heads = (uint32_t)d->heads;
    n->head_dim = (uint32_t)(h / d->heads);
    n->v_head_dim = n->head_dim;
    n->inter = (uint32_t)d->inter;
    n->bidirectional = 1;
    if (tokens)
        fg__fmt(n->desc, sizeof n->desc, "%s %llu x %llu, %llu tokens/image", s->name,
                 (unsigned long long)L, (unsigned long long)h, (unsigned long long)tokens);
    else
        fg__fmt(n->desc, sizeof n->desc, "%s %llu x %llu, native resolution", s->name,
                 (unsigned long long)L, (unsigned long long)h);
    return 0;
}

/* ---- projectors ---------------------------------------------------------------- */

static struct fg_node *add_projector_node(struct fg_model *m, uint64_t out, const char *desc,
                                          struct fg_err *err)
{
    struct fg_node *n = fg__model_add(m, FG_NODE_OTHER, -1, "Projector", err);
    if (!n)
        return NULL;
    n->stack = FG_STACK_TOWER;
    n->width = (uint32_t)out;
    n->hidden = (uint32_t)out;
    fg__copy(n->desc, sizeof n->desc, desc);
    return n;
}

/* How many vision layers' features the projector concatenates (LlavaConfig,
 * Mistral3Config): vision_feature_layer is an int (one layer) or a list; the values may be
 * negative, so only the count is read.  1 when absent or null; FG_E_TYPE for any other
 * type, FG_E_RANGE for an empty or over-long list. */
static int read_feature_layers(const struct fg_cfg *c, uint64_t *nfeat, struct fg_err *err)
{
    const cJSON *vfl = fg__cfg_item(c, "vision_feature_layer");
    *nfeat = 1;
    if (vfl && cJSON_IsArray(vfl))
        *nfeat = (uint64_t)cJSON_GetArraySize(vfl);
    else if (vfl && !cJSON_IsNumber(vfl) && !cJSON_IsNull(vfl))
        return fg_err_set(err, FG_E_TYPE, "%s: key 'vision_feature_layer' must be a number or "
                          "an array of numbers", c->origin);
    if (*nfeat == 0 || *nfeat > FG_MAX_LAYERS)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'vision_feature_layer' lists %llu layers",
                          c->origin, (unsigned long long)*nfeat);
    return 0;
}

/* LlavaMultiModalProjector: linear_1 (vision hidden x number of feature
 * layers -> text hidden), GELU, linear_2 (text -> text), biases by
 * multimodal_projector_bias (default true). */
static int proj_llava(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                      const struct vit_dims *d, struct fg_err *err)
{
    (void)v;
    bool bias = true;
    uint64_t nfeat;
    int rc;
    if ((rc = fg_cfg_bool(c, "multimodal_projector_bias", true, &bias, err)) ||
        (rc = read_feature_layers(c, &nfeat, err)))
        return rc;
    struct fg_node *n = add_projector_node(m, m->hidden, "2-layer MLP (GELU)", err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "linear_1", d->hidden * nfeat, m->hidden, 1, bias);
    fg__node_linear(n, "linear_2", m->hidden, m->hidden, 1, bias);
    return 0;
}

/* Gemma3MultiModalProjector: mm_input_projection_weight (vision hidden x
 * text hidden, no bias) and mm_soft_emb_norm (Gemma3RMSNorm over the vision
 * hidden); the average pooling to mm_tokens_per_image has no parameters. */
static int proj_gemma3(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                       const struct vit_dims *d, struct fg_err *err)
{
    (void)c;
    (void)v;
    struct fg_node *n = add_projector_node(m, m->hidden, "RMSNorm + linear", err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "mm_input", d->hidden, m->hidden, 1, false);
    n->params += d->hidden;
    return 0;
}

/* Qwen2-VL PatchMerger: ln_q LayerNorm(embed_dim), then mlp =
 * Linear(embed_dim x merge^2 -> same) + GELU + Linear(-> vision_config
 * hidden_size), both with bias (spatial_merge_size x spatial_merge_size
 * patches become one text token). */
static int proj_qwen2_vl(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                         const struct vit_dims *d, struct fg_err *err)
{
    (void)c;
    uint64_t merge = 0, out = 0;
    int rc;
    if ((rc = fg_cfg_u64(v, "spatial_merge_size", 2, 1, 64, &merge, err)) ||
        (rc = fg_cfg_u64(v, "hidden_size", 3584, 1, FG_MAX_HIDDEN, &out, err)))
        return rc;
    if (out != m->hidden)
        fg__model_note(m, "vision_config.hidden_size %llu differs from the text hidden size %llu",
                       (unsigned long long)out, (unsigned long long)m->hidden);
    uint64_t wide = d->hidden * merge * merge;
    struct fg_node *n = add_projector_node(m, out, "PatchMerger (LayerNorm + 2-layer MLP)", err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "merger_in", wide, wide, 1, true);
    fg__node_linear(n, "merger_out", wide, out, 1, true);
    n->params += 2 * d->hidden;
    return 0;
}

/* Llama-4: the tower's vision_adapter (Llama4VisionMLP2: fc1
 * intermediate_size -> projector_input_dim, fc2 projector_output_dim ->
 * projector_output_dim, no bias; transformers sizes fc1's input by
 * intermediate_size, the pixel-shuffled width) and
 * Llama4MultiModalProjector.linear_1 (vision_output_dim -> text hidden,
 * no bias). */
static int proj_llama4(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                       const struct vit_dims *d, struct fg_err *err)
{
    (void)c;
    uint64_t pin = 0, pout = 0, vout = 0;
    int rc;
    if ((rc = fg_cfg_u64(v, "projector_input_dim", 4096, 1, FG_MAX_INTER, &pin, err)) ||
        (rc = fg_cfg_u64(v, "projector_output_dim", 4096, 1, FG_MAX_INTER, &pout, err)) ||
        (rc = fg_cfg_u64(v, "vision_output_dim", 7680, 1, FG_MAX_INTER, &vout, err)))
        return rc;
    struct fg_node *n = add_projector_node(m, m->hidden, "pixel-shuffle MLP + linear", err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "adapter_fc1", d->inter, pin, 1, false);
    fg__node_linear(n, "adapter_fc2", pout, pout, 1, false);
    fg__node_linear(n, "linear_1", vout, m->hidden, 1, false);
    return 0;
}

/* Kimi-K2.5 PatchMergerMLP (mm_projector_type "patchmerger"): pre_norm
 * LayerNorm(mm_hidden_size), proj = Linear(mm x kh x kw -> same) + GELU +
 * Linear(-> text_hidden_size), both with bias. */
static int proj_kimi(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                     const struct vit_dims *d, struct fg_err *err)
{
    (void)c;
    const char *type = NULL;
    uint64_t mm = 0, out = 0, k[2] = {2, 2};
    size_t nk = 0;
    int rc;
    if ((rc = fg_cfg_str(v, "mm_projector_type", "patchmerger", &type, err)))
        return rc;
    if (strcmp(type, "patchmerger") != 0)
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: key 'vision_config.mm_projector_type' is "
                          "'%s'; only 'patchmerger' is understood", c->origin, type);
    if ((rc = fg_cfg_u64(v, "mm_hidden_size", d->hidden, 1, FG_MAX_HIDDEN, &mm, err)) ||
        (rc = fg_cfg_u64(v, "text_hidden_size", m->hidden, 1, FG_MAX_HIDDEN, &out, err)) ||
        (rc = fg_cfg_u64_array(v, "merge_kernel_size", 1, 64, k, 2, &nk, err)))
        return rc;
    if (nk != 0 && nk != 2)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'vision_config.merge_kernel_size' must hold "
                          "two numbers", c->origin);
    uint64_t wide = mm * k[0] * k[1];
    struct fg_node *n = add_projector_node(m, out, "PatchMerger (LayerNorm + 2-layer MLP)", err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "merger_in", wide, wide, 1, true);
    fg__node_linear(n, "merger_out", wide, out, 1, true);
    n->params += 2 * mm;
    return 0;
}

/* Qwen3-VL: Qwen3VLVisionPatchMerger (norm LayerNorm over the vision hidden, linear_fc1
 * hidden x merge^2 -> same, linear_fc2 -> out_hidden_size, biases) and one more merger per
 * deepstack_visual_indexes entry whose norm runs after the shuffle (use_postshuffle_norm:
 * LayerNorm over hidden x merge^2).  Qwen3-VL-8B's shapes give 8,767,123,696, its Hub total
 * (tests/test_params.c, Qwen--Qwen3-VL-8B-Instruct). */
static int proj_qwen3_vl(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                         const struct vit_dims *d, struct fg_err *err)
{
    (void)c;
    uint64_t merge = 0, out = 0, idx[64];
    size_t ndeep = 0;
    int rc;
    if ((rc = fg_cfg_u64(v, "spatial_merge_size", 2, 1, 64, &merge, err)) ||
        (rc = fg_cfg_u64(v, "out_hidden_size", 3584, 1, FG_MAX_HIDDEN, &out, err)) ||
        (rc = fg_cfg_u64_array(v, "deepstack_visual_indexes", 0, FG_MAX_LAYERS, idx, 64, &ndeep,
                               err)))
        return rc;
    if (out != m->hidden)
        fg__model_note(m, "vision_config.out_hidden_size %llu differs from the text hidden size "
                       "%llu", (unsigned long long)out, (unsigned long long)m->hidden);
    uint64_t wide = d->hidden * merge * merge;
    struct fg_node *n = add_projector_node(m, out, "PatchMerger + deepstack mergers", err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "merger_in", wide, wide, 1 + ndeep, true);
    fg__node_linear(n, "merger_out", wide, out, 1 + ndeep, true);
    n->params += 2 * d->hidden + ndeep * 2 * wide;
    return 0;
}

/* Mistral3MultiModalProjector (models/mistral3): norm RMSNorm over the vision hidden,
 * patch_merger.merging_layer Linear(hidden x merge^2 -> hidden, no bias), linear_1 (vision
 * hidden x feature layers -> text hidden) and linear_2 (text -> text), biased by
 * multimodal_projector_bias (Mistral3Config default false).  Mistral-Small-3.2-24B's shapes
 * give 24,011,361,280, its published count (tests/test_arch_hybrid.c). */
static int proj_mistral3(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                         const struct vit_dims *d, struct fg_err *err)
{
    (void)v;
    uint64_t merge = 0, nfeat = 1;
    bool bias = false;
    int rc;
    if ((rc = fg_cfg_u64(c, "spatial_merge_size", 2, 1, 64, &merge, err)) ||
        (rc = fg_cfg_bool(c, "multimodal_projector_bias", false, &bias, err)) ||
        (rc = read_feature_layers(c, &nfeat, err)))
        return rc;
    struct fg_node *n = add_projector_node(m, m->hidden, "RMSNorm + patch merger + 2-layer MLP",
                                           err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "merger", d->hidden * merge * merge, d->hidden, 1, false);
    fg__node_linear(n, "linear_1", d->hidden * nfeat, m->hidden, 1, bias);
    fg__node_linear(n, "linear_2", m->hidden, m->hidden, 1, bias);
    n->params += d->hidden;
    return 0;
}

typedef int (*proj_fn)(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                       const struct vit_dims *d, struct fg_err *err);

static const proj_fn projectors[] = {
    [PROJ_LLAVA] = proj_llava,   [PROJ_GEMMA3] = proj_gemma3, [PROJ_QWEN2_VL] = proj_qwen2_vl,
    [PROJ_LLAMA4] = proj_llama4, [PROJ_KIMI] = proj_kimi, [PROJ_QWEN3_VL] = proj_qwen3_vl,
    [PROJ_MISTRAL3] = proj_mistral3,
};

/* ---- the wrapper ----------------------------------------------------------------- */

static int read_multimodal(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                           struct fg_err *err);

/*
 * The text part: text_config read by its own registered reader.  Without a
 * text_config the keys are in the root (Qwen2-VL) or the text class
 * defaults apply (an empty view), said in a note.
 */
static int read_text(const struct fg_cfg *c, const struct mm_spec *s, struct fg_model *m,
                     struct fg_err *err)
{
    struct fg_cfg text = {.obj = NULL, .origin = c->origin, .scope = "text_config"};
    bool have = fg_cfg_has(c, "text_config");
    if (have && !fg_cfg_child(c, "text_config", &text, err))
        return FG_E_TYPE;
    if (!have && s->text_in_root)
        text = *c;
    const char *tt = NULL, *own = NULL;
    int rc;
    if ((have && (rc = fg_cfg_str(&text, "model_type", NULL, &tt, err))) ||
        (rc = fg_cfg_str(c, "model_type", NULL, &own, err)))
        return rc;
    if (!tt || (s->text_alias && strcmp(tt, s->text_alias) == 0) || (own && !strcmp(tt, own)))
        tt = s->text_type;
    if (!have && !s->text_in_root)
        fg__model_note(m, "text_config absent: the text model uses the %s class defaults", tt);

    const struct fg_arch *a = m->arch_find ? m->arch_find(tt) : NULL;
    if (a && a->read == read_multimodal)
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: text_config.model_type '%s' is itself a "
                          "multimodal wrapper", c->origin, tt);
    if (!a) {
        /* Same policy as an unknown top-level model_type: a generic decoder,
         * flagged, rather than a refusal. */
        if ((rc = fg__arch_read_generic(&text, m, NULL, err)))
            return rc;
        fg__model_note(m, "text_config.model_type '%s' is not known to fitgate: the text model is "
                       "read as a generic decoder", tt);
        return 0;
    }
    /* Qwen3-VL keeps tie_word_embeddings in the root config (Qwen3VLConfig): a text view
     * without the key reads the root's, through a copy with the key added. */
    const cJSON *view = text.obj; /* quantization_config is read from it below */
    cJSON *copy = NULL;
    bool tie;
    if (have && !fg_cfg_has(&text, "tie_word_embeddings") &&
        fg_cfg_has(c, "tie_word_embeddings")) {
        if ((rc = fg_cfg_bool(c, "tie_word_embeddings", false, &tie, err)))
            return rc;
        if (!(copy = cJSON_Duplicate(text.obj, 1)) ||
            !cJSON_AddBoolToObject(copy, "tie_word_embeddings", tie)) {
            cJSON_Delete(copy);
            return fg_err_set(err, FG_E_NOMEM, "out of memory copying text_config");
        }
        text.obj = copy;
    }
    rc = a->read(&text, m, a->spec, err);
    text.obj = view;
    cJSON_Delete(copy);
    if (rc)
        return rc;

    /* compressed-tensors pack-quantized (Kimi-K2.5 routed experts): int
     * weights packed into I32 words; counts follow huggingface.js, which
     * unpacks them and leaves weight_scale / weight_shape out - the graph's
     * unquantized shapes already are that count. */
    struct fg_cfg q;
    const char *method = NULL, *format = NULL;
    if (fg_cfg_has(&text, "quantization_config")) {
        if (!fg_cfg_child(&text, "quantization_config", &q, err))
            return FG_E_TYPE;
        if ((rc = fg_cfg_str(&q, "quant_method", "", &method, err)) ||
            (rc = fg_cfg_str(&q, "format", "", &format, err)))
            return rc;
        if (!strcmp(method, "compressed-tensors") && !strcmp(format, "pack-quantized"))
            fg__model_rule(m, "pack-quantized int weights counted unpacked; scales/shapes not "
                              "counted", 0);
    }
    return 0;
}

static int read_multimodal(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                           struct fg_err *err)
{
    const struct mm_spec *s = spec;
    int rc = read_text(c, s, m, err);
    if (rc)
        return rc;
    struct fg_cfg v;
    if (!fg_cfg_has(c, "vision_config")) {
        /* transformers would build a default tower, but a config without
         * vision_config is a trimmed copy: the defaults would be a guess. */
        fg__model_note(m, "vision_config absent (trimmed config?): only the text model is "
                          "counted; the checkpoint also stores the vision tower and projector");
        return 0;
    }
    if (!fg_cfg_child(c, "vision_config", &v, err))
        return FG_E_TYPE;
    size_t first = m->n_nodes;
    struct vit_dims d;
    if ((rc = add_vit(m, &v, s->vit, &d, err)) || (rc = projectors[s->proj](m, c, &v, &d, err)))
        return rc;
    return move_to_front(m, first, err);
}

/* ---- the table ------------------------------------------------------------------ */

/* LlavaForConditionalGeneration: LlavaConfig's default text model is llama. */
static const struct mm_spec llava = {.text_type = "llama", .vit = &clip_vit, .proj = PROJ_LLAVA};
/* Gemma3ForConditionalGeneration: Gemma3TextConfig + SiglipVisionConfig. */
static const struct mm_spec gemma3 = {.text_type = "gemma3_text", .vit = &siglip_vit,
                                      .proj = PROJ_GEMMA3};
/* Qwen2VLForConditionalGeneration: the language model is Qwen2-shaped
 * (q/k/v bias); early configs keep its keys in the root, later ones in a
 * text_config of type qwen2_vl_text. */
static const struct mm_spec qwen2_vl = {.text_type = "qwen2", .text_alias = "qwen2_vl_text",
                                        .text_in_root = true, .vit = &qwen2_vl_vit,
                                        .proj = PROJ_QWEN2_VL};
/* Llama4ForConditionalGeneration. */
static const struct mm_spec llama4 = {.text_type = "llama4_text", .vit = &llama4_vit,
                                      .proj = PROJ_LLAMA4};
/* KimiK25ForConditionalGeneration (remote code): a DeepSeek-V3-shaped
 * kimi_k2 text model, MoonViT3d and a PatchMergerMLP projector. */
static const struct mm_spec kimi_k25 = {.text_type = "kimi_k2", .vit = &moonvit,
                                        .proj = PROJ_KIMI};
/* Qwen3VLForConditionalGeneration: the qwen3_vl_text model (arch_decoder.c) and the
 * Qwen3-VL tower; tie_word_embeddings sits in the root config. */
static const struct mm_spec qwen3_vl = {.text_type = "qwen3_vl_text", .vit = &qwen3_vl_vit,
                                        .proj = PROJ_QWEN3_VL};
/* Qwen3VLMoeForConditionalGeneration: the qwen3_vl_moe_text model (arch_moe.c). */
static const struct mm_spec qwen3_vl_moe = {.text_type = "qwen3_vl_moe_text",
                                            .vit = &qwen3_vl_vit, .proj = PROJ_QWEN3_VL};

/* Qwen3_5MoeForConditionalGeneration / Qwen3_5ForConditionalGeneration: a Qwen3.5 text model
 * (arch_hybrid.c) and the Qwen3-VL tower (its vision_config has the same keys, with
 * deepstack_visual_indexes empty). */
static const struct mm_spec qwen3_5_moe = {.text_type = "qwen3_5_moe_text", .vit = &qwen3_vl_vit,
                                           .proj = PROJ_QWEN3_VL};
static const struct mm_spec qwen3_5 = {.text_type = "qwen3_5_text", .vit = &qwen3_vl_vit,
                                       .proj = PROJ_QWEN3_VL};

/* Mistral3ForConditionalGeneration (Mistral-Small-3.1 / 3.2): a Mistral text model and the
 * Pixtral tower. */
static const struct mm_spec mistral3 = {.text_type = "mistral", .vit = &pixtral_vit,
                                        .proj = PROJ_MISTRAL3};

const struct fg_arch fg__arch_multimodal_table[] = {
    {"llava", "vision-language (CLIP + llama)", read_multimodal, &llava},
    {"gemma3", "vision-language (SigLIP + gemma-3)", read_multimodal, &gemma3},
    {"qwen2_vl", "vision-language (Qwen2-VL)", read_multimodal, &qwen2_vl},
    {"llama4", "vision-language (Llama-4 MoE)", read_multimodal, &llama4},
    {"qwen3_vl", "vision-language (Qwen3-VL)", read_multimodal, &qwen3_vl},
    {"mistral3", "vision-language (Pixtral + mistral)", read_multimodal, &mistral3},
    {"qwen3_vl_moe", "vision-language (Qwen3-VL MoE)", read_multimodal, &qwen3_vl_moe},
    {"qwen3_5_moe", "vision-language (Qwen3.5 MoE, gated delta)", read_multimodal, &qwen3_5_moe},
    {"qwen3_5", "vision-language (Qwen3.5, gated delta)", read_multimodal, &qwen3_5},
    {"kimi_k25", "vision-language (MoonViT + kimi-k2)", read_multimodal, &kimi_k25},
    {NULL, NULL, NULL, NULL},
};
