/*
 * multimodal.c - vision-language wrappers: a text model from
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
 * model the llama4 wrapper reads, is llama4.c.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/vision/multimodal.h"
#include "util/fmt.h"

/* What a tower's config switches beyond its spec: q/k/v biases, RMSNorms, the post norm, and
 * parameters outside the blocks' linears and norms. */
struct vit_switches {
    bool qkv_bias, rms, post_norm;
    uint64_t extra;
};

/*
 * InternVLVisionModel (transformers models/internvl/modeling_internvl.py): q/k/v biased by
 * attention_bias (projection_layer, fc1 and fc2 always), layernorm_before / _after of
 * norm_type (layer_norm or rms_norm), q_norm / k_norm RMSNorms over the hidden size when
 * use_qk_norm, the layer scales lambda_1 and lambda_2, mask_token when use_mask_token, the
 * position table only with use_absolute_position_embeddings, and a final LayerNorm only
 * without use_mean_pooling.  Other towers: the spec's own values.
 */
static int read_switches(const struct fg_cfg *v, const struct vit_spec *s, uint64_t h,
                         uint64_t L, uint64_t *pos, struct vit_switches *sw, struct fg_err *err)
{
    *sw = (struct vit_switches){.qkv_bias = !s->no_bias, .rms = s->rms, .post_norm = s->post_norm};
    if (!s->internvl)
        return 0;
    bool qk, mask, abs_pos, mean;
    const char *nt = NULL;
    int rc;
    if ((rc = fg_cfg_bool(v, "attention_bias", false, &sw->qkv_bias, err)) ||
        (rc = fg_cfg_bool(v, "use_qk_norm", false, &qk, err)) ||
        (rc = fg_cfg_bool(v, "use_mask_token", false, &mask, err)) ||
        (rc = fg_cfg_bool(v, "use_absolute_position_embeddings", true, &abs_pos, err)) ||
        (rc = fg_cfg_bool(v, "use_mean_pooling", true, &mean, err)) ||
        (rc = fg_cfg_str(v, "norm_type", "layer_norm", &nt, err)))
        return rc;
    if (strcmp(nt, "layer_norm") && strcmp(nt, "rms_norm"))
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: key 'vision_config.norm_type' is '%s'; "
                          "layer_norm and rms_norm are understood", v->origin, nt);
    sw->rms = !strcmp(nt, "rms_norm");
    sw->post_norm = !mean;
    sw->extra = L * 2 * h + (qk ? L * 2 * h : 0) + (mask ? h : 0);
    if (!abs_pos)
        *pos = 0;
    return 0;
}

/* CLIPVisionModel (transformers models/clip): Conv2d stem without bias,
 * class_embedding, position_embedding of num_patches + 1 rows (position_ids
 * is a non-persistent buffer), pre_layrnorm and post_layernorm.
 * CLIPVisionConfig defaults. */
const struct vit_spec fg__mm_clip_vit = {
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
const struct vit_spec fg__mm_siglip_vit = {
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

/* Qwen2_5_VisionTransformerPretrainedModel (models/qwen2_5_vl/modeling_qwen2_5_vl.py): the
 * Qwen2-VL Conv3d stem without bias and rotary positions, blocks of RMSNorms (norm1, norm2),
 * a fused qkv and proj with bias, and Qwen2_5_VLMLP gate / up / down with bias; windowed
 * attention (window_size, fullatt_block_indexes) changes no shape.  Qwen2_5_VLVisionConfig
 * defaults. */
static const struct vit_spec qwen2_5_vl_vit = {
    .name = "Qwen2.5-VL ViT",
    .hidden = {"hidden_size", 1280}, .layers = {"depth", 32}, .heads = {"num_heads", 16},
    .inter = {"intermediate_size", 3420}, .channels = {"in_channels|in_chans", 3},
    .patch = {"patch_size|spatial_patch_size", 14}, .temporal = {"temporal_patch_size", 2},
    .pos = VIT_POS_NONE, .fused_qkv = true, .rms = true, .gated_mlp = true};

/* Exaone4_5_VisionModel (models/exaone4_5/modeling_exaone4_5.py at transformers decba1d2ea):
 * the Qwen2.5-VL tower but for Exaone4_5_VisionAttention's grouped keys and values - qkv a
 * biased Linear(hidden -> hidden + 2 x num_key_value_heads x head_dim).  Conv3d stem without
 * bias (Exaone4_5_PatchEmbed), RMSNorms norm1 / norm2, proj and Exaone4_5_MLP gate / up / down
 * with bias; the merger is Exaone4_5_PatchMerger, Qwen2.5-VL's.  Exaone4_5_VisionConfig
 * defaults. */
static const struct vit_spec exaone4_5_vit = {
    .name = "EXAONE-4.5 ViT",
    .hidden = {"hidden_size", 3584}, .layers = {"depth", 32}, .heads = {"num_heads", 16},
    .kv_heads = {"num_key_value_heads", 8}, .inter = {"intermediate_size", 3420},
    .channels = {"in_channels", 3}, .patch = {"patch_size", 14},
    .temporal = {"temporal_patch_size", 2}, .pos = VIT_POS_NONE, .fused_qkv = true, .rms = true,
    .gated_mlp = true};

/* PaddleOCRVisionModel (models/paddleocr_vl/modeling_paddleocr_vl.py at transformers
 * decba1d2ea): the SigLIP layout - Conv2d stem with bias, a learned table of (image_size /
 * patch_size)^2 rows (bilinearly resampled to each grid), LayerNorms with bias, q / k / v /
 * out_proj and fc1 / fc2 with bias, post_layernorm - with no pooling head.
 * PaddleOCRVisionConfig defaults. */
static const struct vit_spec paddleocr_vit = {
    .name = "PaddleOCR SigLIP ViT",
    .hidden = {"hidden_size", 1152}, .layers = {"num_hidden_layers", 27},
    .heads = {"num_attention_heads", 16}, .inter = {"intermediate_size", 4304},
    .channels = {"num_channels", 3}, .patch = {"patch_size", 14}, .image = {"image_size", 384},
    .pos = VIT_POS_PATCHES, .patch_bias = true, .post_norm = true};

/* InternVLVisionModel (models/internvl/modeling_internvl.py, InternViT): Conv2d stem with bias,
 * cls_token, a position table of num_patches + 1 rows, q/k/v (attention_bias) /
 * projection_layer / fc1 / fc2, two norms and two layer scales a block; read_switches reads
 * the rest.  InternVLVisionConfig defaults (InternViT-300M). */
static const struct vit_spec internvl_vit = {
    .name = "InternViT",
    .hidden = {"hidden_size", 1024}, .layers = {"num_hidden_layers", 24},
    .heads = {"num_attention_heads", 16}, .inter = {"intermediate_size", 4096},
    .channels = {"num_channels", 3}, .patch = {"patch_size", 14}, .image = {"image_size", 448},
    .pos = VIT_POS_PATCHES, .class_token = true, .patch_bias = true, .internvl = true};

/* Idefics3VisionTransformer (models/idefics3/modeling_idefics3.py, also SmolVLM's): the SigLIP
 * layout - Conv2d stem with bias, a learned table of (image_size / patch_size)^2 rows,
 * LayerNorms with bias, q/k/v/out_proj and fc1 / fc2 with bias, post_layernorm - with no
 * pooling head.  Idefics3VisionConfig defaults. */
const struct vit_spec fg__mm_idefics3_vit = {
    .name = "Idefics3 SigLIP ViT",
    .hidden = {"hidden_size", 1152}, .layers = {"num_hidden_layers", 12},
    .heads = {"num_attention_heads", 16}, .inter = {"intermediate_size", 3072},
    .channels = {"num_channels", 3}, .patch = {"patch_size", 32}, .image = {"image_size", 224},
    .pos = VIT_POS_PATCHES, .patch_bias = true, .post_norm = true};

/* Siglip2VisionModel (models/siglip2/modeling_siglip2.py, NaFlex): patch_embedding a Linear
 * over num_channels x patch^2 with bias (the Conv2d's count), position_embedding of
 * num_patches rows resized to each image's grid, the SigLIP blocks, post_layernorm and the
 * pooling head unless vision_use_head is false.  Siglip2VisionConfig defaults. */
const struct vit_spec fg__mm_siglip2_vit = {
    .name = "SigLIP2 ViT",
    .hidden = {"hidden_size", 768}, .layers = {"num_hidden_layers", 12},
    .heads = {"num_attention_heads", 12}, .inter = {"intermediate_size", 3072},
    .channels = {"num_channels", 3}, .patch = {"patch_size", 16},
    .pos = VIT_POS_TABLE, .pos_rows = {"num_patches", 256}, .patch_bias = true,
    .post_norm = true, .head_key = "vision_use_head", .head_def = true};



/* ---- helpers --------------------------------------------------------------- */

static int get_key(const struct fg_cfg *c, const struct mm_key *k, uint64_t max, uint64_t *out,
                   struct fg_err *err)
{
    if (!k->keys) {
        *out = k->def;
        return 0;
    }
    /* InternVLVisionConfig writes image_size and patch_size as [height, width] */
    char first[64];
    fg__cfg_key_used(c, k->keys, first, sizeof first);
    if (fg_cfg_form(c, first, NULL) == FG_CFG_LIST) {
        uint64_t hw[2];
        size_t n = 0;
        int rc = fg_cfg_u64_array(c, first, 1, max, hw, 2, &n, err);
        if (rc)
            return rc;
        if (n != 2 || hw[0] != hw[1])
            return fg_err_set(err, FG_E_UNSUPPORTED, "%s: key '%s.%s' must be a square "
                              "[height, width] pair", c->origin, c->scope, first);
        *out = hw[0];
        return 0;
    }
    if (k->def == 0)
        return fg_cfg_u64_req(c, k->keys, 1, max, out, err);
    return fg_cfg_u64(c, k->keys, k->def, 1, max, out, err);
}

/* Move the nodes from index first on to the front, keeping both runs in order. */
int fg__mm_move_to_front(struct fg_model *m, size_t first, struct fg_err *err)
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

int fg__mm_add_vision_first(const struct fg_cfg *c, struct fg_model *m, const char *left_out,
                            fg__mm_tower_fn add, const void *ctx, struct fg_err *err)
{
    struct fg_cfg v;
    struct fg_config *fill = NULL;
    int rc = fg__mm_vision_view(c, m, left_out, &v, &fill, err);
    if (rc || !v.obj)
        return rc;
    size_t first = m->n_nodes;
    if (!(rc = add(m, c, &v, ctx, err)))
        rc = fg__mm_move_to_front(m, first, err);
    fg_config_free(fill);
    return rc;
}

/* ---- vision tower ------------------------------------------------------------ */

void fg__mm_tower_blocks(struct fg_node *n, const struct fg_mm_blocks *b)
{
    const uint64_t h = b->h, f = b->f, L = b->L, kv = b->kv ? b->kv : b->h;
    if (b->fused_qkv) {
        fg__node_linear(n, "qkv", h, h + 2 * kv, L, b->qkv_bias);
    } else {
        fg__node_linear(n, "q", h, h, L, b->qkv_bias);
        fg__node_linear(n, "k", h, kv, L, b->qkv_bias);
        fg__node_linear(n, "v", h, kv, L, b->qkv_bias);
    }
    fg__node_linear(n, "o", h, h, L, b->o_bias);
    if (b->gated)
        fg__node_linear(n, "gate", h, f, L, b->mlp_bias);
    fg__node_linear(n, "up", h, f, L, b->mlp_bias);
    fg__node_linear(n, "down", f, h, L, b->mlp_bias);
}

int fg__mm_vit_tokens(const struct fg_cfg *v, uint64_t h, uint64_t heads, uint64_t image,
                      uint64_t patch, uint64_t *tokens, struct fg_err *err)
{
    if (h % heads || image % patch)
        return fg_err_set(err, FG_E_RANGE, "%s: vision_config hidden_size %llu is not divisible "
                          "by %llu heads, or image_size %llu by patch_size %llu", v->origin,
                          (unsigned long long)h, (unsigned long long)heads,
                          (unsigned long long)image, (unsigned long long)patch);
    *tokens = (image / patch) * (image / patch) + 1;
    return 0;
}

struct fg_node *fg__mm_tower_node(struct fg_model *m, const char *name, uint64_t h,
                                  uint64_t heads, uint64_t inter, struct fg_err *err)
{
    struct fg_node *n = fg__model_add(m, FG_NODE_VISION, -1, name, err);
    if (!n)
        return NULL;
    n->stack = FG_STACK_TOWER;
    n->hidden = n->width = (uint32_t)h;
    n->heads = n->kv_heads = (uint32_t)heads;
    n->head_dim = n->v_head_dim = (uint32_t)(h / heads);
    n->inter = (uint32_t)inter;
    n->bidirectional = 1;
    return n;
}


static int read_vit_dims(const struct fg_cfg *v, const struct vit_spec *s, struct vit_dims *d,
                         struct fg_err *err)
{
    int rc;
    d->temporal = 1;
    d->image = 0;
    d->inter = 0;
    /* tie_word_embeddings, which a save writes into every sub-config: a vision tower has no
     * word embeddings to tie, so the flag sizes nothing (SiglipVisionModel, CLIPVisionModel) */
    (void)fg_cfg_has(v, "tie_word_embeddings");
    if ((rc = get_key(v, &s->hidden, FG_MAX_HIDDEN, &d->hidden, err)) ||
        (rc = get_key(v, &s->layers, FG_MAX_LAYERS, &d->layers, err)) ||
        (rc = get_key(v, &s->heads, FG_MAX_HEADS, &d->heads, err)) ||
        (rc = get_key(v, &s->channels, 64, &d->channels, err)) ||
        (rc = get_key(v, &s->patch, 4096, &d->patch, err)))
        return rc;
    if (s->temporal.keys && (rc = get_key(v, &s->temporal, 64, &d->temporal, err)))
        return rc;
    d->kv_heads = d->heads;
    if (s->kv_heads.keys && (rc = get_key(v, &s->kv_heads, FG_MAX_HEADS, &d->kv_heads, err)))
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
    if (d->heads % d->kv_heads)
        return fg_err_set(err, FG_E_RANGE, "%s: %s %llu heads are not divisible by %llu key/value "
                          "heads", v->origin, v->scope, (unsigned long long)d->heads,
                          (unsigned long long)d->kv_heads);
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

int fg__mm_add_vit(struct fg_model *m, const struct fg_cfg *v, const struct vit_spec *s,
                   struct vit_dims *d, struct fg_err *err)
{
    int rc;
    if ((rc = read_vit_dims(v, s, d, err)))
        return rc;
    uint64_t h = d->hidden, L = d->layers, tokens = 0, pos = 0;
    if (s->pos == VIT_POS_PATCHES) {
        /* (image_size // patch_size)^2 positions (SiglipVisionEmbeddings, CLIPVisionEmbeddings):
         * the stride-patch Conv2d drops a partial last row and column (384 / 14 -> 27) */
        if (d->image < d->patch)
            return fg_err_set(err, FG_E_RANGE, "%s: %s image_size %llu is below patch_size "
                              "%llu; give the image side in pixels", v->origin, v->scope,
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
    struct vit_switches sw;
    if ((s->head_key && (rc = fg_cfg_bool(v, s->head_key, s->head_def, &head, err))) ||
        (rc = read_switches(v, s, h, L, &pos, &sw, err)))
        return rc;

    struct fg_node *n = fg__model_add(m, FG_NODE_VISION, -1, "Vision tower", err);
    if (!n)
        return FG_E_NOMEM;
    n->stack = FG_STACK_TOWER;
    /* blocks: q/k/v/o (or qkv), fc1/fc2 (or gate/up/down), two norms; biases on every linear
     * and LayerNorms unless the spec says otherwise */
    bool b = !s->no_bias;
    uint64_t norm = sw.rms ? h : 2 * h;
    fg__mm_tower_blocks(n, &(struct fg_mm_blocks){.h = h, .f = d->inter, .L = L,
                                                  .kv = h / d->heads * d->kv_heads,
                                                  .fused_qkv = s->fused_qkv,
                                                  .qkv_bias = sw.qkv_bias, .o_bias = b,
                                                  .gated = s->gated_mlp, .mlp_bias = b});
    n->params += L * 2 * norm;
    /* stem: channels x temporal x patch^2 -> h */
    n->params += d->channels * d->temporal * d->patch * d->patch * h + (s->patch_bias ? h : 0);
    n->params += (s->class_token ? h : 0) + pos * h;
    n->params += (s->pre_norm ? norm : 0) + (sw.post_norm ? (s->internvl ? 2 * h : norm) : 0) +
                 sw.extra;
    if (head)   /* SiglipMultiheadAttentionPoolingHead: probe, MHA, LayerNorm, MLP */
        n->params += h + (3 * h * h + 3 * h) + (h * h + h) + 2 * h +
                     (h * d->inter + d->inter) + (d->inter * h + h);
    n->hidden = (uint32_t)h;
    n->width = (uint32_t)h;
    n->heads = (uint32_t)d->heads;
    n->kv_heads = (uint32_t)d->kv_heads;
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

/* ---- the wrapper ----------------------------------------------------------------- */


/*
 * The text part: text_config read by its own registered reader.  Without a
 * text_config the keys are in the root (Qwen2-VL) or the text class
 * defaults apply (an empty view), said in a note.
 */
int fg__mm_read_text(const struct fg_cfg *c, const struct mm_spec *s, struct fg_model *m,
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
    if (a && a->read == fg__mm_read)
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
     * without the key reads the root's */
    if (have) {
        text.outer = c;
        text.inherit = "tie_word_embeddings";
    }
    if ((rc = a->read(&text, m, a->spec, err)))
        return rc;
    /* both configs say it: the text model's is the one built; a root that disagrees leaves
     * open which one the checkpoint followed */
    bool root_tie;
    if (have && fg_cfg_has(c, "tie_word_embeddings") &&
        (rc = fg_cfg_bool(c, "tie_word_embeddings", false, &root_tie, err)))
        return rc;
    if (have && fg_cfg_has(c, "tie_word_embeddings") && root_tie != m->tied)
        fg__model_unsure(m, "tie_word_embeddings", "unsure: key 'tie_word_embeddings' is %s in "
                         "the root config and %s in text_config: whether the head is stored "
                         "is open", root_tie ? "true" : "false", m->tied ? "true" : "false");

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

/*
 * A wrapper config whose architectures names only text-only classes (Qwen3_5MoeForCausalLM,
 * ...ForCausalLM: no ...ForConditionalGeneration) was saved from the text model alone, as
 * expert-pruned releases are: its checkpoint need not hold the vision tower (nor the MTP
 * layers) the vision_config and text_config it kept declare.  The class, not a key, says
 * so; the count keeps them and is unsure, and the checkpoint decides when it is at hand.
 */
static int text_only_class(const struct fg_cfg *c, struct fg_model *m, struct fg_err *err)
{
    const char *a[16];
    size_t n = 0;
    int rc = fg_cfg_str_array(c, "architectures", a, 16, &n, err);
    if (rc || n == 0 || !fg_cfg_has(c, "vision_config"))
        return rc;
    for (size_t i = 0; i < n && i < 16; i++) {
        size_t len = strlen(a[i]);
        if (len < 11 || strcmp(a[i] + len - 11, "ForCausalLM"))
            return 0;
    }
    fg__model_unsure(m, "vision_config", "unsure: key 'vision_config' declares a vision tower "
                     "and architectures names only %.48s, a text-only class: the checkpoint "
                     "may store none", a[0]);
    return 0;
}

int fg__mm_read_root_text(const struct fg_cfg *c, const char *type,
                          const struct fg_cfg_over *over, struct fg_model *m,
                          struct fg_err *err)
{
    const struct fg_arch *a = m->arch_find ? m->arch_find(type) : NULL;
    if (!a)
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: the %s text reader is not registered",
                          c->origin, type);
    struct fg_cfg view = *c;
    view.rules = NULL; /* the text class's reading, not the wrapper's */
    view.nrules = 0;
    view.over = over;
    return a->read(&view, m, a->spec, err);
}

static int mm_read_tower(const struct fg_cfg *c, const struct mm_spec *s, struct fg_model *m,
                         const struct fg_cfg *vc, struct fg_err *err);

/*
 * The MTP layers text_config.<s->mtp_key> declares, which the wrapper's class skips on load
 * (Exaone4_5_PreTrainedModel: _keys_to_ignore_on_load_unexpected mtp.*) and the release
 * stores: per layer one decoder layer of the text model's shapes, and once mtp.fc 2h -> h
 * without bias, the RMSNorms pre_fc_norm_embedding, pre_fc_norm_hidden and norm; the
 * embedding and head are the text model's (vllm-project/vllm
 * vllm/model_executor/models/exaone4_5_mtp.py, Exaone4_5MultiTokenPredictor, which loads
 * mtp.* and shares embed_tokens / lm_head).  Counted as an optional rule; called with the
 * text model alone in m, its layer 0 the block.
 */
static int mm_read_mtp(const struct fg_cfg *c, const struct mm_spec *s, struct fg_model *m,
                       struct fg_err *err)
{
    struct fg_cfg t;
    uint64_t mtp = 0;
    if (!s->mtp_key || !fg_cfg_has(c, "text_config"))
        return 0;
    if (!fg_cfg_child(c, "text_config", &t, err))
        return FG_E_TYPE;
    int rc = fg_cfg_u64(&t, s->mtp_key, 0, 0, 64, &mtp, err);
    if (rc || !mtp)
        return rc;
    uint64_t block = 0, h = m->hidden;
    for (size_t i = 0; i < m->n_nodes; i++)
        block += m->nodes[i].layer == 0 ? m->nodes[i].params : 0;
    fg__model_rule_optional(m, s->mtp_key, "MTP layers (mtp.*): "
                            "decoder layers + fc 2h->h, two pre-fc norms, norm",
                            (int64_t)(mtp * block + 2 * h * h + 3 * h));
    fg__model_note(m, "%s=%llu: MTP layers (mtp.*) counted as stored; transformers does not "
                   "build them: memory leaves them out", s->mtp_key, (unsigned long long)mtp);
    return 0;
}

int fg__mm_read(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                struct fg_err *err)
{
    const struct mm_spec *s = spec;
    int rc = fg__mm_read_text(c, s, m, err);
    if (rc || (rc = mm_read_mtp(c, s, m, err)))
        return rc;
    if ((rc = text_only_class(c, m, err)))
        return rc;
    struct fg_cfg v;
    struct fg_config *fill = NULL;
    if ((rc = fg__mm_vision_view(c, m, "the vision tower and projector", &v, &fill, err)) ||
        !v.obj)
        return rc;
    rc = mm_read_tower(c, s, m, &v, err);
    fg_config_free(fill);
    return rc;
}

/* The tower vision_config (v) describes and its projector, moved before the text model. */
static int mm_read_tower(const struct fg_cfg *c, const struct mm_spec *s, struct fg_model *m,
                         const struct fg_cfg *vc, struct fg_err *err)
{
    struct fg_cfg v = *vc;
    int rc;
    const struct vit_spec *vit = s->vit;
    const char *vt = NULL;
    if (s->vit_by_type && (rc = fg_cfg_str(&v, "model_type", NULL, &vt, err)))
        return rc;
    if (vt && !strcmp(vt, "siglip_vision_model"))
        vit = &fg__mm_siglip_vit;
    else if (vt && !strcmp(vt, "clip_vision_model"))
        vit = &fg__mm_clip_vit;
    else if (vt && !strcmp(vt, "pixtral"))  /* Pixtral-12B: LlavaForConditionalGeneration */
        vit = &pixtral_vit;
    else if (vt && !strcmp(vt, "siglip2_vision_model"))   /* LFM2-VL */
        vit = &fg__mm_siglip2_vit;
    else if (vt)
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: key 'vision_config.model_type' is '%s'; "
                          "only clip_vision_model, siglip_vision_model, siglip2_vision_model "
                          "and pixtral towers are sized", c->origin, vt);
    size_t first = m->n_nodes;
    struct vit_dims d;
    fg__mm_proj_fn proj = s->proj_fn ? s->proj_fn : fg__mm_projectors[s->proj];
    if ((rc = fg__mm_add_vit(m, &v, vit, &d, err)) || (rc = proj(m, c, &v, &d, err)))
        return rc;
    if (s->image_newline)
        m->nodes[m->n_nodes - 1].params += m->hidden;
    return fg__mm_move_to_front(m, first, err);
}

/* ---- the table ------------------------------------------------------------------ */

/* LlavaForConditionalGeneration: LlavaConfig's default text model is llama. */
static const struct mm_spec llava = {.text_type = "llama", .vit = &fg__mm_clip_vit,
                                     .proj = PROJ_LLAVA, .vit_by_type = true};
/* Gemma3ForConditionalGeneration: Gemma3TextConfig + SiglipVisionConfig. */
static const struct mm_spec gemma3 = {.text_type = "gemma3_text", .vit = &fg__mm_siglip_vit,
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
/* Qwen3VLForConditionalGeneration: the qwen3_vl_text model (llama_rows.c) and the
 * Qwen3-VL tower; tie_word_embeddings sits in the root config. */
static const struct mm_spec qwen3_vl = {.text_type = "qwen3_vl_text", .vit = &qwen3_vl_vit,
                                        .proj = PROJ_QWEN3_VL};
/* Qwen3VLMoeForConditionalGeneration: the qwen3_vl_moe_text model (moe_mla.c). */
static const struct mm_spec qwen3_vl_moe = {.text_type = "qwen3_vl_moe_text",
                                            .vit = &qwen3_vl_vit, .proj = PROJ_QWEN3_VL};

/* Qwen3_5MoeForConditionalGeneration / Qwen3_5ForConditionalGeneration: a Qwen3.5 text model
 * (nemotron_h_lfm2_qwen3_next.c) and the Qwen3-VL tower (its vision_config has the same keys, with
 * deepstack_visual_indexes empty). */
static const struct mm_spec qwen3_5_moe = {.text_type = "qwen3_5_moe_text", .vit = &qwen3_vl_vit,
                                           .proj = PROJ_QWEN3_VL};
static const struct mm_spec qwen3_5 = {.text_type = "qwen3_5_text", .vit = &qwen3_vl_vit,
                                       .proj = PROJ_QWEN3_VL};

/* Mistral3ForConditionalGeneration (Mistral-Small-3.1 / 3.2): a Mistral text model and the
 * Pixtral tower. */
static const struct mm_spec mistral3 = {.text_type = "mistral", .vit = &pixtral_vit,
                                        .proj = PROJ_MISTRAL3};

/* LightOnOcrForConditionalGeneration (models/lighton_ocr/modeling_lighton_ocr.py @decba1d2ea):
 * LightOnOcrModel's vision_encoder and language_model are AutoModel.from_config of
 * vision_config (Pixtral by default) and text_config (Qwen3 by default), between them
 * LightOnOcrMultiModalProjector, and lm_head.  The released LightOnOCR configs say model_type
 * mistral3 and read as that (tests/test_arch_vl.c). */
static const struct mm_spec lighton_ocr = {.text_type = "qwen3", .vit = &pixtral_vit,
                                           .proj = PROJ_LIGHTON_OCR, .vit_by_type = true};

/* PaliGemmaForConditionalGeneration: PaliGemmaConfig's text model is gemma (gemma2 in
 * PaliGemma 2, named by text_config.model_type) and its tower SigLIP. */
static const struct mm_spec paligemma = {.text_type = "gemma", .vit = &fg__mm_siglip_vit,
                                         .proj = PROJ_PALIGEMMA};
/* Idefics3ForConditionalGeneration and SmolVLMForConditionalGeneration (models/smolvlm, the
 * same modules): a llama text model, the Idefics3 tower and connector. */
static const struct mm_spec idefics3 = {.text_type = "llama", .vit = &fg__mm_idefics3_vit,
                                        .proj = PROJ_IDEFICS3};

/* LlavaNextForConditionalGeneration (models/llava_next/modeling_llava_next.py): LLaVA's
 * tower and 2-layer projector plus image_newline; LlavaOnevision (Qwen2 text, SigLIP tower
 * by default) the same.  The tower is the one vision_config.model_type names. */
static const struct mm_spec llava_next = {.text_type = "llama", .vit = &fg__mm_clip_vit,
                                          .proj = PROJ_LLAVA, .vit_by_type = true,
                                          .image_newline = true};
static const struct mm_spec llava_onevision = {.text_type = "qwen2", .vit = &fg__mm_siglip_vit,
                                               .proj = PROJ_LLAVA, .vit_by_type = true,
                                               .image_newline = true};

/* Qwen2_5_VLForConditionalGeneration: a Qwen2-shaped language model, its keys in the root
 * (configs of transformers < 4.53) or in a qwen2_5_vl_text text_config. */
static const struct mm_spec qwen2_5_vl = {.text_type = "qwen2", .text_alias = "qwen2_5_vl_text",
                                          .text_in_root = true, .vit = &qwen2_5_vl_vit,
                                          .proj = PROJ_QWEN2_5_VL};

/* Exaone4_5_ForConditionalGeneration: AutoModel.from_config(text_config), an exaone4 model
 * (Exaone4_5_Config maps text_config.model_type exaone4_5_text to exaone4), the EXAONE-4.5
 * tower and Qwen2.5-VL's merger; lm_head untied by default. */
static const struct mm_spec exaone4_5 = {.text_type = "exaone4", .text_alias = "exaone4_5_text",
                                         .vit = &exaone4_5_vit, .proj = PROJ_QWEN2_5_VL,
                                         .mtp_key = "num_nextn_predict_layers"};

/* PaddleOCRVLForConditionalGeneration: PaddleOCRTextModel - Ernie-4.5's decoder (q / k / v /
 * o and the gated MLP biased by use_bias, two RMSNorms, head_dim), read by the ernie4_5 reader;
 * PaddleOCRVLConfig takes its keys from the root when text_config is absent, as the releases
 * write them - the tower and PaddleOCRProjector. */
static const struct mm_spec paddleocr_vl = {.text_type = "ernie4_5",
                                            .text_alias = "paddleocr_vl_text",
                                            .text_in_root = true, .vit = &paddleocr_vit,
                                            .proj = PROJ_PADDLEOCR};

/* AyaVisionForConditionalGeneration: a Cohere-2 text model (AyaVisionConfig's default), the
 * tower vision_config names (SigLIP) and the SwiGLU projector. */
static const struct mm_spec aya_vision = {.text_type = "cohere2", .vit = &fg__mm_siglip_vit,
                                          .proj = PROJ_AYA_VISION, .vit_by_type = true};

/* InternVLForConditionalGeneration: the text model its text_config names (Qwen2 by default),
 * InternViT and InternVLMultiModalProjector. */
static const struct mm_spec internvl = {.text_type = "qwen2", .vit = &internvl_vit,
                                        .proj = PROJ_INTERNVL};

const struct fg_arch fg__arch_multimodal_table[] = {
#include "arch/vision/multimodal.def"
    {0},
};
