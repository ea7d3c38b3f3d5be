/*
 * deepseek_vl.c - DeepseekVLForConditionalGeneration and
 * DeepseekVLHybridForConditionalGeneration, read from huggingface/transformers
 * models/deepseek_vl/modular_deepseek_vl.py (commit 06053b84),
 * models/deepseek_vl_hybrid/modular_deepseek_vl_hybrid.py (commit 032c0930) and the SAM
 * tower of models/sam/modeling_sam.py:
 *
 *   vision_model          the tower vision_config.model_type names (SiglipVisionModel by
 *                         default), multimodal.c's
 *   aligner               DeepseekVLAligner: linear1 vision -> text hidden, GELU, linear2
 *                         text -> text, both biased; the hybrid's DeepseekVLHybridAligner:
 *                         vision_proj vision -> text / 2, high_res_vision_proj
 *                         4 x output_channels -> text / 2, proj text -> text, all biased
 *   high_res_vision_model (hybrid) SamVisionModel: patch_embed Conv2d with bias, pos_embed
 *                         (image / patch)^2 x hidden when use_abs_pos, layers of layer_norm1 /
 *                         layer_norm2, qkv (bias qkv_bias), proj, the rel_pos_h / rel_pos_w
 *                         tables (2 x side - 1 rows of head_dim, side the window or, on the
 *                         global_attn_indexes layers, the whole grid) when use_rel_pos, lin1 /
 *                         lin2 of mlp_dim (hidden x mlp_ratio); the neck (conv1 1 x 1 and conv2
 *                         3 x 3 to output_channels without bias, two SamLayerNorms)
 *   high_res_vision_neck  a second SamVisionNeck; high_res_vision_proj conv1 / conv2 3 x 3
 *                         (output_channels -> 2x -> 4x, no bias); high_res_vision_alpha
 *   language_model        text_config's own reader (llama by default) and the wrapper's
 *                         lm_head, tied by tie_word_embeddings.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "arch/vision/llava.h"
#include "util/fmt.h"

/* SamVisionNeck: conv1 1 x 1 and conv2 3 x 3 to out channels without bias, two LayerNorms. */
static uint64_t sam_neck(uint64_t h, uint64_t out)
{
    return h * out + 2 * out + 9 * out * out + 2 * out;
}

struct sam_dims {
    uint64_t h, L, heads, ch, image, patch, out, window, mlp;
    bool qkv_bias, abs_pos, rel_pos;
};

static int read_sam(const struct fg_cfg *s, struct sam_dims *k, struct fg_err *err)
{
    double ratio = 4.0;
    int rc;
    if ((rc = fg_cfg_u64(s, "hidden_size", 768, 1, FG_MAX_HIDDEN, &k->h, err)) ||
        (rc = fg_cfg_u64(s, "num_hidden_layers", 12, 1, FG_MAX_LAYERS, &k->L, err)) ||
        (rc = fg_cfg_u64(s, "num_attention_heads", 12, 1, FG_MAX_HEADS, &k->heads, err)) ||
        (rc = fg_cfg_u64(s, "num_channels", 3, 1, 64, &k->ch, err)) ||
        (rc = fg_cfg_u64(s, "image_size", 1024, 1, 1u << 16, &k->image, err)) ||
        (rc = fg_cfg_u64(s, "patch_size", 16, 1, 4096, &k->patch, err)) ||
        (rc = fg_cfg_u64(s, "output_channels", 256, 1, FG_MAX_HIDDEN, &k->out, err)) ||
        (rc = fg_cfg_u64(s, "window_size", 14, 0, 1u << 12, &k->window, err)) ||
        (rc = fg_cfg_f64(s, "mlp_ratio", 4.0, 0.01, 64.0, &ratio, err)) ||
        (rc = fg_cfg_bool(s, "qkv_bias", true, &k->qkv_bias, err)) ||
        (rc = fg_cfg_bool(s, "use_abs_pos", true, &k->abs_pos, err)) ||
        (rc = fg_cfg_bool(s, "use_rel_pos", true, &k->rel_pos, err)))
        return rc;
    /* SamVisionConfig: mlp_dim = int(hidden_size * mlp_ratio) unless given */
    if ((rc = fg_cfg_u64(s, "mlp_dim", (uint64_t)((double)k->h * ratio), 1, FG_MAX_INTER,
                         &k->mlp, err)))
        return rc;
    if (k->h % k->heads || k->image % k->patch)
        return fg_err_set(err, FG_E_RANGE, "%s: high_res_vision_config hidden_size %llu is not "
                          "divisible by %llu heads, or image_size by patch_size", s->origin,
                          (unsigned long long)k->h, (unsigned long long)k->heads);
    return 0;
}

/* SamVisionModel's encoder and neck as one FG_NODE_VISION node. */
static int add_sam(struct fg_model *m, const struct fg_cfg *s, struct sam_dims *k,
                   struct fg_err *err)
{
    uint64_t glob[64];
    size_t ng = 0;
    int rc;
    if ((rc = read_sam(s, k, err)))
        return rc;
    if (fg_cfg_has(s, "global_attn_indexes")) {
        if ((rc = fg_cfg_u64_array(s, "global_attn_indexes", 0, FG_MAX_LAYERS, glob, 64, &ng,
                                   err)))
            return rc;
    } else {
        const uint64_t def[] = {2, 5, 8, 11};  /* SamVisionConfig */
        memcpy(glob, def, sizeof def);
        ng = 4;
    }
    if (ng == 0)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'high_res_vision_config.global_attn_indexes' "
                          "is empty; DeepseekVLHybridModel reads its first entry", s->origin);
    const uint64_t h = k->h, hd = h / k->heads, grid = k->image / k->patch;
    uint64_t nglobal = 0;
    for (size_t i = 0; i < ng; i++)
        nglobal += glob[i] < k->L;
    struct fg_node *n = fg__mm_tower_node(m, "High-res tower", h, k->heads, k->mlp, err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "qkv", h, 3 * h, k->L, k->qkv_bias);
    fg__node_linear(n, "o", h, h, k->L, true);
    fg__node_linear(n, "up", h, k->mlp, k->L, true);
    fg__node_linear(n, "down", k->mlp, h, k->L, true);
    n->params += k->L * 2 * 2 * h;                           /* layer_norm1 / layer_norm2 */
    n->params += k->ch * k->patch * k->patch * h + h;         /* patch_embed */
    n->params += k->abs_pos ? grid * grid * h : 0;
    if (k->rel_pos) {   /* rel_pos_h and rel_pos_w: windowed layers and the global ones */
        uint64_t win = k->window ? k->window : grid;
        n->params += (k->L - nglobal) * 2 * (2 * win - 1) * hd + nglobal * 2 * (2 * grid - 1) * hd;
    }
    n->params += sam_neck(h, k->out);
    fg__fmt(n->desc, sizeof n->desc, "SAM ViT %llu x %llu, %llu px", (unsigned long long)k->L,
            (unsigned long long)h, (unsigned long long)k->image);
    return 0;
}

static int proj_deepseek_vl_hybrid(struct fg_model *m, const struct fg_cfg *c,
                                   const struct fg_cfg *v, const struct vit_dims *d,
                                   struct fg_err *err)
{
    (void)v;
    struct fg_cfg s = {.obj = NULL, .origin = c->origin, .scope = "high_res_vision_config"};
    if (fg_cfg_has(c, "high_res_vision_config") &&
        !fg_cfg_child(c, "high_res_vision_config", &s, err))
        return FG_E_TYPE;
    struct sam_dims k;
    int rc = add_sam(m, &s, &k, err);
    if (rc)
        return rc;
    if (m->hidden % 2)
        return fg_err_set(err, FG_E_RANGE, "%s: the text hidden size %llu is odd: the aligner "
                          "splits it in two halves", c->origin, (unsigned long long)m->hidden);
    const uint64_t o = k.out, half = m->hidden / 2;
    struct fg_node *n = fg__mm_projector_node(m, m->hidden, "SAM neck + hybrid aligner", err);
    if (!n)
        return FG_E_NOMEM;
    n->params += sam_neck(k.h, o) + 9 * o * 2 * o + 9 * 2 * o * 4 * o + 1;
    fg__node_linear(n, "vision_proj", d->hidden, half, 1, true);
    fg__node_linear(n, "high_res_vision_proj", 4 * o, half, 1, true);
    fg__node_linear(n, "proj", m->hidden, m->hidden, 1, true);
    return 0;
}

/* DeepseekVLConfig: llama text, SigLIP tower, both by model_type. */
static const struct mm_spec deepseek_vl = {.text_type = "llama", .vit = &fg__mm_siglip_vit,
                                           .vit_by_type = true, .proj_fn = fg__vl_proj_mlp2};
static const struct mm_spec deepseek_vl_hybrid = {
    .text_type = "llama", .vit = &fg__mm_siglip_vit, .vit_by_type = true,
    .proj_fn = proj_deepseek_vl_hybrid};

const struct fg_arch fg__arch_vl_deepseek_table[] = {
#include "arch/vision/deepseek_vl.def"
    {0},
};
