/*
 * ovis2.c - Ovis2ForConditionalGeneration, read from huggingface/transformers
 * models/ovis2/modular_ovis2.py (commit 032f3392) and configuration_ovis2.py (commit
 * 0c13cfc8):
 *
 *   vision_tower            Ovis2VisionModel: Ovis2VisionEmbeddings (the SigLIP Conv2d stem with
 *                           bias and (image_size / patch_size)^2 positions, then an RMSNorm);
 *                           AIMv2 layers of rms_norm1 / rms_norm2, q/k/v/out_proj biased by
 *                           qkv_bias and a gate / up / down MLP biased by mlp_bias; the final
 *                           rms_norm; head_linear hidden x hidden_stride^2 -> vocab_size -
 *                           num_visual_indicator_tokens without bias and head_norm (LayerNorm)
 *   visual_embeddings_table vision vocab_size x the root hidden_size
 *   language_model          text_config's own reader (Qwen2Config always); the wrapper's
 *                           lm_head Linear(root hidden_size, root vocab_size, no bias), tied to
 *                           the text embedding by tie_word_embeddings.
 */
#include <stdio.h>
#include <string.h>

#include "arch/vision/multimodal.h"
#include "util/fmt.h"

static int add_tower(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                     struct fg_err *err)
{
    uint64_t h, f, L, heads, ch, image, patch, vv, stride, ind, root_h;
    bool qkv_bias, mlp_bias;
    int rc;
    if ((rc = fg_cfg_u64(v, "hidden_size", 1024, 1, FG_MAX_HIDDEN, &h, err)) ||
        (rc = fg_cfg_u64(v, "intermediate_size", 2816, 1, FG_MAX_INTER, &f, err)) ||
        (rc = fg_cfg_u64(v, "num_hidden_layers", 24, 1, FG_MAX_LAYERS, &L, err)) ||
        (rc = fg_cfg_u64(v, "num_attention_heads", 8, 1, FG_MAX_HEADS, &heads, err)) ||
        (rc = fg_cfg_u64(v, "num_channels", 3, 1, 64, &ch, err)) ||
        (rc = fg_cfg_u64(v, "image_size", 224, 1, 1u << 16, &image, err)) ||
        (rc = fg_cfg_u64(v, "patch_size", 14, 1, 4096, &patch, err)) ||
        (rc = fg_cfg_u64(v, "vocab_size", 16384, 1, FG_MAX_VOCAB, &vv, err)) ||
        (rc = fg_cfg_u64(v, "hidden_stride", 1, 1, 64, &stride, err)) ||
        (rc = fg_cfg_u64(v, "num_visual_indicator_tokens", 5, 0, 1u << 16, &ind, err)) ||
        (rc = fg_cfg_bool(v, "qkv_bias", false, &qkv_bias, err)) ||
        (rc = fg_cfg_bool(v, "mlp_bias", false, &mlp_bias, err)) ||
        (rc = fg_cfg_u64(c, "hidden_size", 1536, 1, FG_MAX_HIDDEN, &root_h, err)))
        return rc;
    /* vision_config.tie_word_embeddings (a save writes it into every sub-config): the tower
     * has no word embeddings to tie; the visual embedding table is the wrapper's */
    (void)fg_cfg_has(v, "tie_word_embeddings");
    if (h % heads || ind >= vv)
        return fg_err_set(err, FG_E_RANGE, "%s: vision_config hidden_size %llu is not divisible "
                          "by %llu heads, or num_visual_indicator_tokens %llu is not below "
                          "vocab_size %llu", v->origin, (unsigned long long)h,
                          (unsigned long long)heads, (unsigned long long)ind,
                          (unsigned long long)vv);
    const uint64_t grid = image / patch, codes = vv - ind;
    struct fg_node *n = fg__mm_tower_node(m, "Vision tower", h, heads, f, err);
    if (!n)
        return FG_E_NOMEM;
    fg__mm_tower_blocks(n, &(struct fg_mm_blocks){.h = h, .f = f, .L = L, .qkv_bias = qkv_bias,
                                                  .o_bias = qkv_bias, .gated = true,
                                                  .mlp_bias = mlp_bias});
    n->params += L * 2 * h + (ch * patch * patch * h + h) + grid * grid * h + 2 * h;
    fg__fmt(n->desc, sizeof n->desc, "AIMv2 ViT %llu x %llu, %llu tokens/image",
            (unsigned long long)L, (unsigned long long)h, (unsigned long long)(grid * grid));
    struct fg_node *p = fg__mm_projector_node(m, root_h, "visual tokenizer + embedding table",
                                              err);
    if (!p)
        return FG_E_NOMEM;
    fg__node_linear(p, "head_linear", h * stride * stride, codes, 1, false);
    p->params += 2 * codes + vv * root_h;            /* head_norm, visual_embeddings_table */
    return 0;
}

static int read_ovis2(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                      struct fg_err *err)
{
    (void)spec;
    const struct mm_spec text = {.text_type = "qwen2"};
    struct fg_cfg v = {.obj = NULL, .origin = c->origin, .scope = "vision_config"};
    uint64_t vocab = 0;
    int rc;
    if (fg_cfg_has(c, "vision_config") && !fg_cfg_child(c, "vision_config", &v, err))
        return FG_E_TYPE;
    if ((rc = fg__mm_read_text(c, &text, m, err)) ||
        (rc = fg_cfg_u64(c, "vocab_size", 151643, 1, FG_MAX_VOCAB, &vocab, err)))
        return rc;
    /* the wrapper's lm_head has the root vocab_size rows; tied, it is the text embedding */
    struct fg_node *head = &m->nodes[m->n_nodes - 1];
    if (head->kind == FG_NODE_HEAD && !m->tied && vocab != m->vocab) {
        head->params = head->params - m->vocab * m->hidden + vocab * m->hidden;
        head->width = (uint32_t)vocab;
        fg__fmt(head->desc, sizeof head->desc, "%llu x %llu (root vocab_size)",
                (unsigned long long)m->hidden, (unsigned long long)vocab);
    }
    size_t first = m->n_nodes;
    if ((rc = add_tower(m, c, &v, err)))
        return rc;
    return fg__mm_move_to_front(m, first, err);
}

const struct fg_arch fg__arch_vl_ovis_table[] = {
#include "arch/vision/ovis2.def"
    {0},
};
