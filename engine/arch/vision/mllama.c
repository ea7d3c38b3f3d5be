/*
 * mllama.c - MllamaForConditionalGeneration (Llama-3.2-Vision), read from
 * huggingface/transformers models/mllama/modeling_mllama.py:
 *
 *   vision_model   MllamaVisionModel: patch_embedding Conv2d without bias, class_embedding,
 *                  gated_positional_embedding (embedding of num_patches + 1 rows, a gate, and
 *                  tile_embedding of max_aspect_ratio_id + 1 rows of max_num_tiles x
 *                  (num_patches + 1) x hidden), pre_ and post_tile_positional_embedding
 *                  (max_aspect_ratio_id + 1 rows of max_num_tiles x hidden, a gate each),
 *                  layernorm_pre / layernorm_post, num_hidden_layers encoder layers (q/k/v/o
 *                  without bias, fc1 / fc2 with bias, two LayerNorms) and num_global_layers
 *                  more with gate_attn and gate_ffn; max_aspect_ratio_id is
 *                  len(supported_aspect_ratios)
 *   projector      multi_modal_projector Linear(vision_output_dim, text hidden) with bias
 *   language_model MllamaTextModel: embed_tokens of vocab_size + 8 rows; llama self-attention
 *                  layers, and at cross_attention_layers MllamaCrossAttentionDecoderLayer
 *                  (q/k/v/o over the text hidden, q_norm / k_norm RMSNorms over head_dim,
 *                  cross_attn_attn_gate and cross_attn_mlp_gate, the llama MLP); lm_head of
 *                  vocab_size rows, untied by default
 *
 * Llama-3.2-11B-Vision's shapes give 10,670,220,835, its published count
 * (tests/test_arch_hybrid.c).  MllamaTextConfig / MllamaVisionConfig defaults.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/vision/multimodal.h"
#include "util/fmt.h"

/* MllamaVisionModel as one FG_NODE_VISION node in FG_STACK_TOWER. */
static int add_vision(struct fg_model *m, const struct fg_cfg *v, uint64_t *out_dim,
                      struct fg_err *err)
{
    uint64_t h, inter, layers, global, heads, ch, patch, image, tiles, vout, nar = 8;
    int rc;
    if ((rc = fg_cfg_u64(v, "hidden_size", 1280, 1, FG_MAX_HIDDEN, &h, err)) ||
        (rc = fg_cfg_u64(v, "intermediate_size", 5120, 1, FG_MAX_INTER, &inter, err)) ||
        (rc = fg_cfg_u64(v, "num_hidden_layers", 32, 1, FG_MAX_LAYERS, &layers, err)) ||
        (rc = fg_cfg_u64(v, "num_global_layers", 8, 0, FG_MAX_LAYERS, &global, err)) ||
        (rc = fg_cfg_u64(v, "num_attention_heads", 16, 1, FG_MAX_HEADS, &heads, err)) ||
        (rc = fg_cfg_u64(v, "num_channels", 3, 1, 64, &ch, err)) ||
        (rc = fg_cfg_u64(v, "patch_size", 14, 1, 4096, &patch, err)) ||
        (rc = fg_cfg_u64(v, "image_size", 560, 1, 1u << 16, &image, err)) ||
        (rc = fg_cfg_u64(v, "max_num_tiles", 4, 1, 64, &tiles, err)) ||
        (rc = fg_cfg_u64(v, "vision_output_dim", 7680, 1, FG_MAX_INTER, &vout, err)))
        return rc;
    size_t len = 0;
    enum fg_cfg_form ar = fg_cfg_form(v, "supported_aspect_ratios", &len);
    if (ar != FG_CFG_ABSENT && ar != FG_CFG_NULL) {
        if (ar != FG_CFG_LIST || len < 1)
            return fg_err_set(err, FG_E_TYPE, "%s: key 'vision_config.supported_aspect_ratios' "
                              "must be a non-empty array", v->origin);
        nar = (uint64_t)len;
    }
    uint64_t tokens;
    if ((rc = fg__mm_vit_tokens(v, h, heads, image, patch, &tokens, err)))
        return rc;
    struct fg_node *n = fg__mm_tower_node(m, "Vision tower", h, heads, inter, err);
    if (!n)
        return FG_E_NOMEM;
    uint64_t L = layers + global;
    fg__mm_tower_blocks(n, &(struct fg_mm_blocks){.h = h, .f = inter, .L = L, .mlp_bias = true});
    n->params += L * 2 * 2 * h + 2 * global;                 /* LayerNorms, gate_attn / ffn */
    n->params += ch * patch * patch * h + h;                 /* stem, class_embedding */
    n->params += tokens * h + 1 + (nar + 1) * tiles * tokens * h; /* gated positions + tiles */
    n->params += 2 * ((nar + 1) * tiles * h + 1);            /* pre / post tile embeddings */
    n->params += 2 * 2 * h;                                  /* layernorm_pre / _post */
    fg__fmt(n->desc, sizeof n->desc, "Mllama ViT %llu + %llu global x %llu, %llu tokens/tile",
            (unsigned long long)layers, (unsigned long long)global, (unsigned long long)h,
            (unsigned long long)tokens);
    *out_dim = vout;
    return 0;
}

static int add_text_layer(struct fg_model *m, int32_t li, bool cross, struct fg_err *err)
{
    struct fg_attn_shape a = {.hidden = m->hidden, .heads = m->heads, .kv_heads = m->kv_heads,
                              .head_dim = m->head_dim, .cross = cross,
                              .qk_norm = cross ? 1 : 0, .qk_norm_kind = FG_NORM_RMS};
    struct fg_mlp_shape f = {.hidden = m->hidden, .inter = m->inter, .gated = true};
    int rc;
    if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)))
        return rc;
    struct fg_node *n;
    if ((rc = fg__add_attention(m, li, &a, &n, err)))
        return rc;
    if (cross)
        n->params += 2; /* cross_attn_attn_gate, cross_attn_mlp_gate */
    if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)))
        return rc;
    return fg__add_mlp(m, li, &f, NULL, err);
}

/* The vision model of vision_config v and multi_modal_projector, Linear(vision_output_dim,
 * text hidden) with bias. */
static int add_tower(struct fg_model *m, const struct fg_cfg *v, struct fg_err *err)
{
    uint64_t vout = 0;
    int rc = add_vision(m, v, &vout, err);
    if (rc)
        return rc;
    struct fg_node *p = fg__model_add(m, FG_NODE_OTHER, -1, "Projector", err);
    if (!p)
        return FG_E_NOMEM;
    p->stack = FG_STACK_TOWER;
    p->width = p->hidden = (uint32_t)m->hidden;
    fg__node_linear(p, "linear", vout, m->hidden, 1, true);
    fg__copy(p->desc, sizeof p->desc, "linear");
    return 0;
}

static int read_mllama(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                       struct fg_err *err)
{
    (void)spec;
    static const struct fg_core_defaults d = {.vocab = 128256, .hidden = 4096, .inter = 14336,
                                              .layers = 40, .heads = 32, .max_pos = 131072,
                                              .tie = false};
    struct fg_cfg t = {.obj = NULL, .origin = c->origin, .scope = "text_config"}, v;
    int rc;
    if (fg_cfg_has(c, "text_config") && !fg_cfg_child(c, "text_config", &t, err))
        return FG_E_TYPE;
    if ((rc = fg__read_core(&t, m, &d, err)))
        return rc;
    uint64_t cross[FG_MAX_LAYERS];
    size_t nc = 0;
    bool is_cross[FG_MAX_LAYERS] = {false};
    if ((rc = fg_cfg_u64_array(&t, "cross_attention_layers", 0, m->layers - 1, cross,
                               FG_MAX_LAYERS, &nc, err)))
        return rc;
    if (!fg_cfg_has(&t, "cross_attention_layers")) {
        static const uint64_t def[] = {3, 8, 13, 18, 23, 28, 33, 38};
        for (size_t i = 0; i < 8; i++)
            if (def[i] < m->layers)
                cross[nc++] = def[i];
    }
    for (size_t i = 0; i < nc; i++)
        is_cross[cross[i]] = true;
    struct fg_config *fill = NULL;
    if ((rc = fg__mm_vision_view(c, m, "the vision tower and projector", &v, &fill, err)))
        return rc;
    rc = v.obj ? add_tower(m, &v, err) : 0;
    fg_config_free(fill);
    if (rc)
        return rc;
    /* MllamaTextModel.embed_tokens has vocab_size + 8 rows (the image tokens' padding) */
    if ((rc = fg__add_embedding(m, m->vocab + 8, m->hidden, err)))
        return rc;
    for (uint64_t l = 0; l < m->layers; l++)
        if ((rc = add_text_layer(m, (int32_t)l, is_cross[l], err)))
            return rc;
    if ((rc = fg__add_norm(m, -1, "Final norm", m->hidden, FG_NORM_RMS, err)))
        return rc;
    return fg__add_head(m, m->vocab, m->hidden, m->tied, false, false, err);
}

const struct fg_arch fg__arch_mllama_table[] = {
#include "arch/vision/mllama.def"
    {0},
};
