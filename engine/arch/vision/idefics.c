/*
 * idefics.c - IdeficsForVisionText2Text (IDEFICS v1, Flamingo-style), read from
 * huggingface/transformers models/idefics/modeling_idefics.py (commit 00b676f8), vision.py
 * and perceiver.py (commit 1237e7f1):
 *
 *   embed_tokens          IdeficsDecoupledEmbedding: vocab_size x hidden, plus
 *                         additional_embedding additional_vocab_size x hidden when > 0
 *   vision_model          IdeficsVisionTransformer: the CLIP layout (class_embedding, Conv2d
 *                         stem without bias, num_patches + 1 positions, pre_layrnorm, biased
 *                         q/k/v/out_proj and fc1 / fc2, two LayerNorms a layer, post_layernorm)
 *                         over vision_config.embed_dim
 *   perceiver_resampler   with use_resampler: latents n_latents x embed_dim; resampler_depth
 *                         blocks of IdeficsPerceiverAttention (context / latents LayerNorms,
 *                         q / k / v / output_proj of n_heads x head_dim without bias, q / k
 *                         LayerNorms over head_dim when qk_layer_norms_perceiver) and IdeficsMLP
 *                         (ln, fc to 4 x embed_dim, c_proj, no bias); a final LayerNorm
 *   layers                llama blocks: q/k/v/o and gate / up / down without bias, two
 *                         RMSNorms
 *   gated_cross_attn_layers num_hidden_layers // cross_layer_interval, each before the decoder
 *                         layer it serves: q over hidden, k / v reading the vision embed_dim,
 *                         o, q / k RMSNorms over head_dim when qk_layer_norms, the llama MLP,
 *                         two RMSNorms, alpha_cross_attn / alpha_dense (1 each, or hidden when
 *                         alpha_type is "vector")
 *   norm, lm_head         RMSNorm; IdeficsDecoupledLinear hidden -> vocab_size without bias plus
 *                         additional_fc hidden -> additional_vocab_size; tied by
 *                         tie_word_embeddings (IdeficsConfig default false).
 */
#include <stdio.h>
#include <string.h>

#include "arch/vision/multimodal.h"
#include "util/fmt.h"

/* IdeficsVisionConfig defaults. */
static const struct vit_spec idefics_vit = {
    .name = "IDEFICS CLIP ViT",
    .hidden = {"embed_dim|hidden_size", 768}, .layers = {"num_hidden_layers", 32},
    .heads = {"num_attention_heads", 16}, .inter = {"intermediate_size", 5120},
    .channels = {"num_channels", 3}, .patch = {"patch_size", 14}, .image = {"image_size", 224},
    .pos = VIT_POS_PATCHES, .class_token = true, .patch_bias = false, .pre_norm = true,
    .post_norm = true};

/* IdeficsPerceiverResampler over the vision width e as one projector node. */
static int add_resampler(struct fg_model *m, const struct fg_cfg *c, uint64_t e,
                         struct fg_err *err)
{
    struct fg_cfg p = {.obj = NULL, .origin = c->origin, .scope = "perceiver_config"};
    uint64_t lat, depth, heads, hd;
    bool qkn;
    int rc;
    if (fg_cfg_has(c, "perceiver_config") && !fg_cfg_child(c, "perceiver_config", &p, err))
        return FG_E_TYPE;
    if ((rc = fg_cfg_u64(&p, "resampler_n_latents", 64, 1, 1u << 16, &lat, err)) ||
        (rc = fg_cfg_u64(&p, "resampler_depth", 6, 1, FG_MAX_LAYERS, &depth, err)) ||
        (rc = fg_cfg_u64(&p, "resampler_n_heads", 16, 1, FG_MAX_HEADS, &heads, err)) ||
        (rc = fg_cfg_u64(&p, "resampler_head_dim", 96, 1, 1u << 14, &hd, err)) ||
        (rc = fg_cfg_bool(&p, "qk_layer_norms_perceiver", false, &qkn, err)))
        return rc;
    struct fg_node *n = fg__mm_projector_node(m, e, "perceiver resampler", err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "q", e, heads * hd, depth, false);
    fg__node_linear(n, "k", e, heads * hd, depth, false);
    fg__node_linear(n, "v", e, heads * hd, depth, false);
    fg__node_linear(n, "o", heads * hd, e, depth, false);
    fg__node_linear(n, "fc", e, 4 * e, depth, false);
    fg__node_linear(n, "c_proj", 4 * e, e, depth, false);
    /* context / latents / MLP LayerNorms, q / k LayerNorms; latents; the final LayerNorm */
    n->params += depth * (3 * 2 * e + (qkn ? 2 * 2 * hd : 0)) + lat * e + 2 * e;
    return 0;
}

/* The decoder: llama blocks, a gated cross-attention block before every
 * cross_layer_interval-th, the decoupled embedding and head. */
static int add_text(struct fg_model *m, const struct fg_cfg *c, uint64_t e, struct fg_err *err)
{
    static const struct fg_core_defaults d = {.vocab = 32000, .hidden = 4096, .inter = 11008,
                                              .layers = 32, .heads = 32, .max_pos = 2048,
                                              .tie = false};
    uint64_t extra, interval;
    bool qkn;
    const char *alpha = NULL;
    int rc;
    if ((rc = fg__read_core(c, m, &d, err)) ||
        (rc = fg_cfg_u64(c, "additional_vocab_size", 0, 0, FG_MAX_VOCAB, &extra, err)) ||
        (rc = fg_cfg_u64(c, "cross_layer_interval", 1, 1, FG_MAX_LAYERS, &interval, err)) ||
        (rc = fg_cfg_bool(c, "qk_layer_norms", false, &qkn, err)) ||
        (rc = fg_cfg_str(c, "alpha_type", "float", &alpha, err)))
        return rc;
    if (strcmp(alpha, "float") && strcmp(alpha, "vector"))
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: key 'alpha_type' is '%s'; float and "
                          "vector are understood", c->origin, alpha);
    /* IdeficsAttention: head_dim = hidden / heads, key / value heads = heads */
    const uint64_t h = m->hidden, hd = h / m->heads;
    m->kv_heads = m->heads;
    m->head_dim = hd;
    struct fg_node *n;
    if ((rc = fg__add_embedding(m, m->vocab, h, err)))
        return rc;
    m->nodes[m->n_nodes - 1].params += extra * h;           /* additional_embedding */
    const struct fg_attn_shape a = {.hidden = h, .heads = m->heads, .kv_heads = m->heads,
                                    .head_dim = hd};
    const struct fg_mlp_shape f = {.hidden = h, .inter = m->inter, .gated = true};
    uint64_t ncross = m->layers / interval;
    for (uint64_t l = 0; l < m->layers; l++) {
        int32_t li = (int32_t)l;
        if (l % interval == 0 && l / interval < ncross) {
            struct fg_attn_shape x = a;
            x.cross = true;
            if ((rc = fg__add_norm(m, li, "Norm", h, FG_NORM_RMS, err)) ||
                (rc = fg__add_attention(m, li, &x, &n, err)))
                return rc;
            for (uint32_t i = 0; i < n->nlin; i++)   /* k / v read the vision width */
                if (!strcmp(n->lin[i].role, "k") || !strcmp(n->lin[i].role, "v")) {
                    n->params = n->params - h * n->lin[i].out + e * n->lin[i].out;
                    n->lin[i].in = (uint32_t)e;
                }
            n->params += (qkn ? 2 * hd : 0) + 2 * (strcmp(alpha, "vector") ? 1 : h);
            if ((rc = fg__add_norm(m, li, "Norm", h, FG_NORM_RMS, err)) ||
                (rc = fg__add_mlp(m, li, &f, NULL, err)))
                return rc;
        }
        if ((rc = fg__add_norm(m, li, "Norm", h, FG_NORM_RMS, err)) ||
            (rc = fg__add_attention(m, li, &a, NULL, err)) ||
            (rc = fg__add_norm(m, li, "Norm", h, FG_NORM_RMS, err)) ||
            (rc = fg__add_mlp(m, li, &f, NULL, err)))
            return rc;
    }
    if ((rc = fg__add_norm(m, -1, "Final norm", h, FG_NORM_RMS, err)) ||
        (rc = fg__add_head(m, m->vocab, h, m->tied, false, false, err)))
        return rc;
    m->nodes[m->n_nodes - 1].params += extra * h;           /* additional_fc */
    return 0;
}

static int read_idefics(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                        struct fg_err *err)
{
    (void)spec;
    struct fg_cfg v = {.obj = NULL, .origin = c->origin, .scope = "vision_config"};
    bool resampler;
    uint64_t e = 0;
    int rc;
    if (fg_cfg_has(c, "vision_config") && !fg_cfg_child(c, "vision_config", &v, err))
        return FG_E_TYPE;
    if ((rc = fg_cfg_bool(c, "use_resampler", false, &resampler, err)) ||
        (rc = fg_cfg_u64(&v, idefics_vit.hidden.keys, idefics_vit.hidden.def, 1, FG_MAX_HIDDEN,
                         &e, err)) ||
        (rc = add_text(m, c, e, err)))
        return rc;
    size_t first = m->n_nodes;
    struct vit_dims d;
    if ((rc = fg__mm_add_vit(m, &v, &idefics_vit, &d, err)) ||
        (resampler && (rc = add_resampler(m, c, d.hidden, err))))
        return rc;
    return fg__mm_move_to_front(m, first, err);
}

const struct fg_arch fg__arch_vl_idefics_table[] = {
#include "arch/vision/idefics.def"
    {0},
};
