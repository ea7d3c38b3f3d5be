/*
 * glm4v.c - the GLM-V vision-language family: Glm4vForConditionalGeneration (GLM-4.1V),
 * Glm4vMoeForConditionalGeneration (GLM-4.5V) and Glm46VForConditionalGeneration (GLM-4.6V,
 * either text model), read from huggingface/transformers models/glm4v/modeling_glm4v.py
 * (commit 005612ef), models/glm4v_moe/modular_glm4v_moe.py (commit 0067189d) and
 * models/glm46v/modular_glm46v.py (commit 020a37d2):
 *
 *   visual          Glm4vVisionModel: patch_embed Conv3d (in_channels x temporal_patch_size x
 *                   patch^2 -> hidden, with bias); embeddings.position_embedding of
 *                   (image_size // patch_size)^2 rows, bicubically resampled to each grid;
 *                   post_conv_layernorm; depth blocks of norm1 / norm2 (RMSNorm), qkv (hidden ->
 *                   3 x hidden, bias attention_bias), proj (no bias) and Glm4VisionMlp gate /
 *                   up / down whose width is out_hidden_size, not intermediate_size, all
 *                   without bias; post_layernorm; downsample Conv2d hidden -> out_hidden_size
 *                   over spatial_merge_size^2 with bias; merger Glm4vVisionPatchMerger (proj
 *                   out -> out, post_projection_norm LayerNorm, gate / up out ->
 *                   intermediate_size, down back; no biases).  The rotary table is a
 *                   non-persistent buffer.
 *   language_model  Glm4vTextModel: GLM-4 blocks (q/k/v always biased, o not, fused gate_up,
 *                   four RMSNorms), head_dim = hidden / heads whatever head_dim says,
 *                   num_key_value_heads default 2; or Glm4vMoeTextModel: GLM-4.5's MoE blocks
 *                   (Glm4MoeConfig keys; vocab default 151424, attention_bias default true)
 *                   without q/k norms (the class drops use_qk_norm) and with no MTP layer (it
 *                   builds num_hidden_layers layers; num_nextn_predict_layers is ignored).
 *   lm_head         Linear(text hidden, vocab, no bias), tied by tie_word_embeddings.
 *
 * The text model is read by the registered glm4 / glm4_moe reader through a view of the text
 * keys that applies those class differences (source/config.h struct fg_cfg_over), so the
 * blocks are described once.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "arch/vision/multimodal.h"
#include "util/fmt.h"

enum glm_text { GLM_TEXT_DENSE, GLM_TEXT_MOE, GLM_TEXT_BY_TYPE };

struct glm_spec {
    enum glm_text text;
};

/* How Glm4vTextConfig reads the keys the GLM-4 reader asks for: head_dim ignored (hidden /
 * heads), q/k/v always biased, two key-value heads by default. */
static const struct fg_cfg_over glm_dense_keys[] = {
    {FG_CFG_HIDE, "head_dim", NULL},
    {FG_CFG_SET, "attention_bias", FG_CFG_TRUE},
    {FG_CFG_DEFAULT, "num_key_value_heads", FG_CFG_NUMBER(2)},
    {0, NULL, NULL},
};

/* How Glm4vMoeTextConfig reads the GLM-4.5 keys: no MTP layer, no q/k norms, its own
 * vocabulary and attention-bias defaults. */
static const struct fg_cfg_over glm_moe_keys[] = {
    {FG_CFG_HIDE, "num_nextn_predict_layers", NULL},
    {FG_CFG_HIDE, "use_qk_norm", NULL},
    {FG_CFG_DEFAULT, "vocab_size", FG_CFG_NUMBER(151424)},
    {FG_CFG_DEFAULT, "attention_bias", FG_CFG_TRUE},
    {0, NULL, NULL},
};

static int read_glm_text(const struct fg_cfg *c, const struct glm_spec *s, struct fg_model *m,
                         struct fg_err *err)
{
    struct fg_cfg text = *c;
    bool have = fg_cfg_has(c, "text_config");
    if (have && !fg_cfg_child(c, "text_config", &text, err))
        return FG_E_TYPE;
    bool moe = s->text == GLM_TEXT_MOE;
    const char *tt = NULL;
    int rc;
    if (s->text == GLM_TEXT_BY_TYPE) {
        /* Glm46VConfig: AutoConfig of text_config.model_type, glm4v_text by default */
        if ((rc = fg_cfg_str(&text, "model_type", "glm4v_text", &tt, err)))
            return rc;
        if (!have)
            tt = "glm4v_text";
        if (strcmp(tt, "glm4v_text") && strcmp(tt, "glm4v_moe_text"))
            return fg_err_set(err, FG_E_UNSUPPORTED, "%s: key 'text_config.model_type' is '%s'; "
                              "glm4v_text and glm4v_moe_text are understood", c->origin, tt);
        moe = !strcmp(tt, "glm4v_moe_text");
    }
    const struct fg_arch *a = m->arch_find ? m->arch_find(moe ? "glm4_moe" : "glm4") : NULL;
    if (!a)
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: the %s text reader is not registered",
                          c->origin, moe ? "glm4_moe" : "glm4");
    /* the text class's own reading of its keys; Glm46VConfig / Glm4vConfig keep
     * tie_word_embeddings in the root */
    text.rules = NULL;
    text.nrules = 0;
    text.over = moe ? glm_moe_keys : glm_dense_keys;
    if (have) {
        text.outer = c;
        text.inherit = "tie_word_embeddings";
    }
    return a->read(&text, m, a->spec, err);
}

/* Glm4vVisionModel as one FG_NODE_VISION node, and its downsample + merger as the projector;
 * *out the merger's width. */
static int add_tower(struct fg_model *m, const struct fg_cfg *v, struct fg_err *err)
{
    uint64_t h, L, heads, ch, image, patch, merge, tp, out, inter;
    bool qkv_bias;
    int rc;
    if ((rc = fg_cfg_u64(v, "hidden_size", 1536, 1, FG_MAX_HIDDEN, &h, err)) ||
        (rc = fg_cfg_u64(v, "depth", 24, 1, FG_MAX_LAYERS, &L, err)) ||
        (rc = fg_cfg_u64(v, "num_heads", 12, 1, FG_MAX_HEADS, &heads, err)) ||
        (rc = fg_cfg_u64(v, "in_channels", 3, 1, 64, &ch, err)) ||
        (rc = fg_cfg_u64(v, "image_size", 336, 1, 1u << 16, &image, err)) ||
        (rc = fg_cfg_u64(v, "patch_size", 14, 1, 4096, &patch, err)) ||
        (rc = fg_cfg_u64(v, "spatial_merge_size", 2, 1, 64, &merge, err)) ||
        (rc = fg_cfg_u64(v, "temporal_patch_size", 2, 1, 64, &tp, err)) ||
        (rc = fg_cfg_u64(v, "out_hidden_size", 4096, 1, FG_MAX_HIDDEN, &out, err)) ||
        (rc = fg_cfg_u64(v, "intermediate_size", 13696, 1, FG_MAX_INTER, &inter, err)) ||
        (rc = fg_cfg_bool(v, "attention_bias", false, &qkv_bias, err)))
        return rc;
    if (h % heads)
        return fg_err_set(err, FG_E_RANGE, "%s: vision_config hidden_size %llu is not divisible "
                          "by num_heads %llu", v->origin, (unsigned long long)h,
                          (unsigned long long)heads);
    if (out != m->hidden)
        fg__model_note(m, "vision_config.out_hidden_size %llu differs from the text hidden size "
                       "%llu", (unsigned long long)out, (unsigned long long)m->hidden);
    uint64_t grid = image / patch;
    struct fg_node *n = fg__mm_tower_node(m, "Vision tower", h, heads, out, err);
    if (!n)
        return FG_E_NOMEM;
    fg__mm_tower_blocks(n, &(struct fg_mm_blocks){.h = h, .f = out, .L = L, .fused_qkv = true,
                                                  .qkv_bias = qkv_bias, .gated = true});
    n->params += L * 2 * h;                                  /* norm1, norm2 */
    n->params += ch * tp * patch * patch * h + h;            /* patch_embed Conv3d */
    n->params += grid * grid * h;                            /* position_embedding */
    n->params += 2 * h;                                      /* post_conv_ / post_layernorm */
    fg__fmt(n->desc, sizeof n->desc, "GLM-4V ViT %llu x %llu, native resolution",
            (unsigned long long)L, (unsigned long long)h);

    struct fg_node *p = fg__mm_projector_node(m, out, "downsample conv + SwiGLU merger", err);
    if (!p)
        return FG_E_NOMEM;
    fg__node_linear(p, "downsample", h * merge * merge, out, 1, true);
    fg__node_linear(p, "merger_proj", out, out, 1, false);
    fg__node_linear(p, "merger_gate", out, inter, 1, false);
    fg__node_linear(p, "merger_up", out, inter, 1, false);
    fg__node_linear(p, "merger_down", inter, out, 1, false);
    p->params += 2 * out;                                    /* post_projection_norm */
    return 0;
}

/* The tower and merger (fg__mm_tower_fn). */
static int add_vision(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                      const void *ctx, struct fg_err *err)
{
    (void)c;
    (void)ctx;
    return add_tower(m, v, err);
}

static int read_glm4v(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                      struct fg_err *err)
{
    int rc = read_glm_text(c, spec, m, err);
    return rc ? rc
              : fg__mm_add_vision_first(c, m, "the vision tower and merger", add_vision, NULL,
                                        err);
}

static const struct glm_spec glm4v = {.text = GLM_TEXT_DENSE};
static const struct glm_spec glm4v_moe = {.text = GLM_TEXT_MOE};
static const struct glm_spec glm46v = {.text = GLM_TEXT_BY_TYPE};

const struct fg_arch fg__arch_vl_glm_table[] = {
#include "arch/vision/glm4v.def"
    {0},
};
