/*
 * glm4v.c - the GLM-V vision-language family: Glm4vForConditionalGeneration (GLM-4.1V),
 * Glm4vMoeForConditionalGeneration (GLM-4.5V), Glm46VForConditionalGeneration (GLM-4.6V,
 * either text model) and GlmOcrForConditionalGeneration (GLM-OCR: its own tower, add_ocr_tower,
 * and an unbiased GLM-4 text model, models/glm_ocr/modeling_glm_ocr.py at decba1d2ea), read from huggingface/transformers models/glm4v/modeling_glm4v.py
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

enum glm_text { GLM_TEXT_DENSE, GLM_TEXT_MOE, GLM_TEXT_BY_TYPE, GLM_TEXT_OCR };

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

/* How GlmOcrTextConfig / GlmOcrTextAttention read the GLM-4 keys: q/k/v never biased
 * (attention_bias is not read), head_dim as given, and the class defaults. */
static const struct fg_cfg_over glm_ocr_keys[] = {
    {FG_CFG_SET, "attention_bias", FG_CFG_FALSE},
    {FG_CFG_DEFAULT, "vocab_size", FG_CFG_NUMBER(59392)},
    {FG_CFG_DEFAULT, "hidden_size", FG_CFG_NUMBER(1024)},
    {FG_CFG_DEFAULT, "intermediate_size", FG_CFG_NUMBER(4096)},
    {FG_CFG_DEFAULT, "num_hidden_layers", FG_CFG_NUMBER(16)},
    {FG_CFG_DEFAULT, "num_attention_heads", FG_CFG_NUMBER(16)},
    {FG_CFG_DEFAULT, "num_key_value_heads", FG_CFG_NUMBER(8)},
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
    text.over = s->text == GLM_TEXT_OCR ? glm_ocr_keys : moe ? glm_moe_keys : glm_dense_keys;
    if (have) {
        text.outer = c;
        text.inherit = "tie_word_embeddings";
    }
    return a->read(&text, m, a->spec, err);
}

/* The projector both towers end in: downsample, a Conv2d h -> out over merge x merge with
 * bias, then the patch merger (proj out -> out, post_projection_norm LayerNorm, gate / up out
 * -> ctx, down back; no biases). */
static int add_merger(struct fg_model *m, uint64_t h, uint64_t merge, uint64_t out, uint64_t ctx,
                      struct fg_err *err)
{
    struct fg_node *p = fg__mm_projector_node(m, out, "downsample conv + SwiGLU merger", err);
    if (!p)
        return FG_E_NOMEM;
    fg__node_linear(p, "downsample", h * merge * merge, out, 1, true);
    fg__node_linear(p, "merger_proj", out, out, 1, false);
    fg__node_linear(p, "merger_gate", out, ctx, 1, false);
    fg__node_linear(p, "merger_up", out, ctx, 1, false);
    fg__node_linear(p, "merger_down", ctx, out, 1, false);
    p->params += 2 * out;                                    /* post_projection_norm */
    return 0;
}

/* The GLM-V vision_config sizes, as read or as a class's defaults. */
struct glm_vit {
    uint64_t h, L, heads, ch, patch, merge, tp, out, inter;
    bool bias;   /* attention_bias */
};

/* Glm4vVisionConfig and GlmOcrVisionConfig defaults. */
static const struct glm_vit glm4v_vit_def = {.h = 1536, .L = 24, .heads = 12, .ch = 3,
                                             .patch = 14, .merge = 2, .tp = 2, .out = 4096,
                                             .inter = 13696, .bias = false};
static const struct glm_vit glm_ocr_vit_def = {.h = 1024, .L = 24, .heads = 16, .ch = 3,
                                               .patch = 14, .merge = 2, .tp = 2, .out = 1536,
                                               .inter = 4096, .bias = true};

/* The keys both towers read, into *d (def the class defaults); 0 or an FG_E_* code. */
static int read_glm_vit(struct fg_model *m, const struct fg_cfg *v, const struct glm_vit *def,
                        struct glm_vit *d, struct fg_err *err)
{
    int rc;
    if ((rc = fg_cfg_u64(v, "hidden_size", def->h, 1, FG_MAX_HIDDEN, &d->h, err)) ||
        (rc = fg_cfg_u64(v, "depth", def->L, 1, FG_MAX_LAYERS, &d->L, err)) ||
        (rc = fg_cfg_u64(v, "num_heads", def->heads, 1, FG_MAX_HEADS, &d->heads, err)) ||
        (rc = fg_cfg_u64(v, "in_channels", def->ch, 1, 64, &d->ch, err)) ||
        (rc = fg_cfg_u64(v, "patch_size", def->patch, 1, 4096, &d->patch, err)) ||
        (rc = fg_cfg_u64(v, "spatial_merge_size", def->merge, 1, 64, &d->merge, err)) ||
        (rc = fg_cfg_u64(v, "temporal_patch_size", def->tp, 1, 64, &d->tp, err)) ||
        (rc = fg_cfg_u64(v, "out_hidden_size", def->out, 1, FG_MAX_HIDDEN, &d->out, err)) ||
        (rc = fg_cfg_u64(v, "intermediate_size", def->inter, 1, FG_MAX_INTER, &d->inter, err)) ||
        (rc = fg_cfg_bool(v, "attention_bias", def->bias, &d->bias, err)))
        return rc;
    if (d->h % d->heads)
        return fg_err_set(err, FG_E_RANGE, "%s: vision_config hidden_size %llu is not divisible "
                          "by num_heads %llu", v->origin, (unsigned long long)d->h,
                          (unsigned long long)d->heads);
    if (d->out != m->hidden)
        fg__model_note(m, "vision_config.out_hidden_size %llu differs from the text hidden size "
                       "%llu", (unsigned long long)d->out, (unsigned long long)m->hidden);
    return 0;
}

/* Glm4vVisionModel as one FG_NODE_VISION node, and its downsample + merger as the projector. */
static int add_tower(struct fg_model *m, const struct fg_cfg *v, struct fg_err *err)
{
    struct glm_vit d;
    uint64_t image = 0;
    int rc;
    if ((rc = read_glm_vit(m, v, &glm4v_vit_def, &d, err)) ||
        (rc = fg_cfg_u64(v, "image_size", 336, 1, 1u << 16, &image, err)))
        return rc;
    uint64_t h = d.h, L = d.L, grid = image / d.patch;
    struct fg_node *n = fg__mm_tower_node(m, "Vision tower", h, d.heads, d.out, err);
    if (!n)
        return FG_E_NOMEM;
    fg__mm_tower_blocks(n, &(struct fg_mm_blocks){.h = h, .f = d.out, .L = L, .fused_qkv = true,
                                                  .qkv_bias = d.bias, .gated = true});
    n->params += L * 2 * h;                                  /* norm1, norm2 */
    n->params += d.ch * d.tp * d.patch * d.patch * h + h;    /* patch_embed Conv3d */
    n->params += grid * grid * h;                            /* position_embedding */
    n->params += 2 * h;                                      /* post_conv_ / post_layernorm */
    fg__fmt(n->desc, sizeof n->desc, "GLM-4V ViT %llu x %llu, native resolution",
            (unsigned long long)L, (unsigned long long)h);
    return add_merger(m, h, d.merge, d.out, d.inter, err);
}

/*
 * GlmOcrVisionModel (models/glm_ocr/modeling_glm_ocr.py at transformers decba1d2ea) as one
 * FG_NODE_VISION node: patch_embed Conv3d with bias; depth GlmOcrVisionBlocks of norm1 /
 * norm2 RMSNorms, qkv and proj biased by attention_bias, q_norm / k_norm RMSNorms over the
 * head, GlmOcrVisionMlp gate / up / down of intermediate_size biased by attention_bias;
 * post_layernorm (RMSNorm); no position table (rotary only, image_size sizes nothing).  The
 * projector: downsample Conv2d hidden -> out_hidden_size over spatial_merge_size^2 with bias,
 * and GlmOcrVisionPatchMerger (proj out -> out, post_projection_norm LayerNorm, gate / up out
 * -> out_hidden_size x in_channels, the class's context_dim, and down back; no biases).
 */
static int add_ocr_tower(struct fg_model *m, const struct fg_cfg *v, struct fg_err *err)
{
    struct glm_vit d;
    int rc = read_glm_vit(m, v, &glm_ocr_vit_def, &d, err);
    if (rc)
        return rc;
    (void)fg_cfg_has(v, "image_size");   /* the rotary tower stores no position table */
    uint64_t h = d.h, L = d.L;
    struct fg_node *n = fg__mm_tower_node(m, "Vision tower", h, d.heads, d.inter, err);
    if (!n)
        return FG_E_NOMEM;
    fg__mm_tower_blocks(n, &(struct fg_mm_blocks){.h = h, .f = d.inter, .L = L,
                                                  .fused_qkv = true, .qkv_bias = d.bias,
                                                  .o_bias = d.bias, .gated = true,
                                                  .mlp_bias = d.bias});
    n->params += L * (2 * h + 2 * (h / d.heads));            /* norm1, norm2, q_norm, k_norm */
    n->params += d.ch * d.tp * d.patch * d.patch * h + h;    /* patch_embed Conv3d */
    n->params += h;                                          /* post_layernorm */
    fg__fmt(n->desc, sizeof n->desc, "GLM-OCR ViT %llu x %llu, native resolution",
            (unsigned long long)L, (unsigned long long)h);
    return add_merger(m, h, d.merge, d.out, d.out * d.ch, err);  /* context_dim out x ch */
}

/*
 * The MTP layers text_config.num_nextn_predict_layers declares: GlmOcrPreTrainedModel skips
 * model.language_model.layers.16.* on load (_keys_to_ignore_on_load_unexpected), where the
 * release stores them; vLLM's GlmOcrMultiTokenPredictorLayer (vllm-project/vllm
 * vllm/model_executor/models/glm_ocr_mtp.py) loads a GLM-4 decoder layer, enorm, hnorm,
 * eh_proj 2h -> h, shared_head.norm and shared_head.head each, and the layer's embed_tokens
 * as the shared one; the file stores both tables (zai-org/GLM-OCR's Hub safetensors total,
 * 1,325,258,240, is the count with them).  Optional rules, with the text model alone in m
 * (its layer 0 the block).
 */
static int read_ocr_mtp(const struct fg_cfg *c, struct fg_model *m, struct fg_err *err)
{
    struct fg_cfg t = *c;
    uint64_t mtp = 0;
    if (fg_cfg_has(c, "text_config") && !fg_cfg_child(c, "text_config", &t, err))
        return FG_E_TYPE;
    int rc = fg_cfg_u64(&t, "num_nextn_predict_layers", 0, 0, 64, &mtp, err);
    if (rc || !mtp)
        return rc;
    uint64_t block = 0, h = m->hidden;
    for (size_t i = 0; i < m->n_nodes; i++)
        block += m->nodes[i].layer == 0 ? m->nodes[i].params : 0;
    fg__model_rule_optional(m, "num_nextn_predict_layers", "MTP layers: decoder layer + "
                            "enorm, hnorm, eh_proj 2h->h, head norm",
                            (int64_t)(mtp * (block + 2 * h * h + 3 * h)));
    fg__model_rule_optional(m, "num_nextn_predict_layers", "MTP layers store their own "
                            "embed_tokens and shared_head.head copies",
                            (int64_t)(mtp * 2 * m->vocab * h));
    fg__model_note(m, "num_nextn_predict_layers=%llu: MTP layers (model.language_model.layers."
                   "%llu) counted as stored; transformers does not build them: memory leaves "
                   "them out", (unsigned long long)mtp, (unsigned long long)m->layers);
    return 0;
}

static int read_glm4v(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                      struct fg_err *err)
{
    const struct glm_spec *s = spec;
    bool ocr = s->text == GLM_TEXT_OCR;
    int rc = read_glm_text(c, s, m, err);
    if (rc || (ocr && (rc = read_ocr_mtp(c, m, err))))
        return rc;
    struct fg_cfg v;
    struct fg_config *fill = NULL;
    if ((rc = fg__mm_vision_view(c, m, "the vision tower and merger", &v, &fill, err)) || !v.obj)
        return rc;
    size_t first = m->n_nodes;
    if (!(rc = ocr ? add_ocr_tower(m, &v, err) : add_tower(m, &v, err)))
        rc = fg__mm_move_to_front(m, first, err);
    fg_config_free(fill);
    return rc;
}

static const struct glm_spec glm4v = {.text = GLM_TEXT_DENSE};
static const struct glm_spec glm4v_moe = {.text = GLM_TEXT_MOE};
static const struct glm_spec glm46v = {.text = GLM_TEXT_BY_TYPE};
static const struct glm_spec glm_ocr = {.text = GLM_TEXT_OCR};

const struct fg_arch fg__arch_vl_glm_table[] = {
#include "arch/vision/glm4v.def"
    {0},
};
