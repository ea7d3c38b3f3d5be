/*
 * llava_proj.c - the projectors of the vision-language rows of llava.c, each one
 * FG_NODE_OTHER node after the tower (struct mm_spec.proj_fn), named by the transformers
 * class it follows.  Signature and ownership as multimodal.h's fg__mm_proj_fn.
 */
#include <stdio.h>
#include <string.h>

#include "arch/vision/llava.h"

/* LlavaNextVideoModel (models/llava_next_video/modeling_llava_next_video.py, commit
 * 56701659 of the file): LLaVA-NeXT's projector, plus vision_resampler LlavaNextVideoPooler,
 * which stores a Conv2d (vision hidden -> spatial_pool_out_channels, kernel and stride
 * spatial_pool_stride, with bias) only when spatial_pool_mode is "conv"; average and max
 * pooling store nothing.  LlavaNextVideoConfig: "average", stride 2. */
int fg__vl_proj_llava_next_video(struct fg_model *m, const struct fg_cfg *c,
                                 const struct fg_cfg *v, const struct vit_dims *d,
                                 struct fg_err *err)
{
    const char *mode = NULL;
    uint64_t stride = 0, out = 0;
    int rc;
    if ((rc = fg__mm_projectors[PROJ_LLAVA](m, c, v, d, err)) ||
        (rc = fg_cfg_str(c, "spatial_pool_mode", "average", &mode, err)) ||
        (rc = fg_cfg_u64(c, "spatial_pool_stride", 2, 1, 64, &stride, err)) ||
        (rc = fg_cfg_u64(c, "spatial_pool_out_channels", d->hidden, 1, FG_MAX_HIDDEN, &out,
                         err)))
        return rc;
    if (!strcmp(mode, "average") || !strcmp(mode, "max"))
        return 0;
    if (strcmp(mode, "conv"))
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: key 'spatial_pool_mode' is '%s'; average, "
                          "max and conv are understood", c->origin, mode);
    fg__node_linear(&m->nodes[m->n_nodes - 1], "pool_conv", d->hidden * stride * stride, out, 1,
                    true);
    return 0;
}

/* VipLlavaMultiModalProjector (models/vipllava/modeling_vipllava.py): projector_layernorm
 * (LayerNorm with bias) over the vision hidden x the number of vision_feature_layers, linear_1
 * to the text hidden and linear_2 text -> text, both biased.  VipLlavaConfig's default list
 * [-2, -5, -8, -11, 6] holds five layers. */
int fg__vl_proj_vipllava(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                         const struct vit_dims *d, struct fg_err *err)
{
    (void)v;
    uint64_t nfeat = 5;
    int rc;
    if (fg_cfg_has(c, "vision_feature_layers") &&
        (rc = fg__mm_feature_layers(c, "vision_feature_layers", &nfeat, err)))
        return rc;
    return fg__mm_proj_norm_mlp(m, d->hidden * nfeat, err);
}

/* Lfm2VlMultiModalProjector (models/lfm2_vl/modeling_lfm2_vl.py, commit 01596202):
 * pixel_unshuffle by downsample_factor, layer_norm (LayerNorm with bias) over vision hidden x
 * factor^2 when projector_use_layernorm, linear_1 to projector_hidden_size and linear_2 to the
 * text hidden, both biased by projector_bias.  Lfm2VlConfig defaults (2, true, 2560, true). */
int fg__vl_proj_lfm2_vl(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                        const struct vit_dims *d, struct fg_err *err)
{
    (void)v;
    uint64_t f = 0, ph = 0;
    bool bias = true, ln = true;
    int rc;
    if ((rc = fg_cfg_u64(c, "downsample_factor", 2, 1, 64, &f, err)) ||
        (rc = fg_cfg_u64(c, "projector_hidden_size", 2560, 1, FG_MAX_INTER, &ph, err)) ||
        (rc = fg_cfg_bool(c, "projector_bias", true, &bias, err)) ||
        (rc = fg_cfg_bool(c, "projector_use_layernorm", true, &ln, err)))
        return rc;
    uint64_t wide = d->hidden * f * f;
    struct fg_node *n = fg__mm_projector_node(m, m->hidden, "pixel unshuffle + 2-layer MLP",
                                              err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "linear_1", wide, ph, 1, bias);
    fg__node_linear(n, "linear_2", ph, m->hidden, 1, bias);
    n->params += ln ? 2 * wide : 0;
    return 0;
}

/* Cohere2VisionMultiModalProjector (models/cohere2_vision/modular_cohere2_vision.py): pixel
 * shuffle by downsample_factor, linear_1 vision hidden x factor^2 -> alignment_intermediate_size,
 * a SwiGLU that halves it, linear_2 to the text hidden; both biased, no norm (where
 * AyaVision's has one).  Cohere2VisionConfig defaults (2, 36864). */
int fg__vl_proj_cohere2_vision(struct fg_model *m, const struct fg_cfg *c,
                               const struct fg_cfg *v, const struct vit_dims *d,
                               struct fg_err *err)
{
    (void)v;
    return fg__mm_proj_pixel_swiglu(m, c, d, 36864, false, err);
}

/* Idefics2Connector (models/idefics2/modeling_idefics2.py, commit 00dcc6dd): modality_projection
 * Idefics2MLP (gate / up vision hidden -> text intermediate_size, down -> text hidden, no
 * bias), then Idefics2PerceiverResampler over the text hidden (Idefics2Config sets the
 * perceiver's hidden_size to the text model's): latents resampler_n_latents x hidden,
 * resampler_depth layers of input_latents_norm, input_context_norm, post_attention_layernorm
 * (RMSNorms), q (heads x head_dim), k / v (num_key_value_heads x head_dim), o, all without
 * bias, and an MLP of 4 x hidden; a final RMSNorm.  Idefics2PerceiverConfig defaults. */
int fg__vl_proj_idefics2(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                         const struct vit_dims *d, struct fg_err *err)
{
    (void)v;
    struct fg_cfg p = {.obj = NULL, .origin = c->origin, .scope = "perceiver_config"};
    uint64_t lat = 0, depth = 0, heads = 0, hd = 0, kv = 0;
    int rc;
    if (fg_cfg_has(c, "perceiver_config") && !fg_cfg_child(c, "perceiver_config", &p, err))
        return FG_E_TYPE;
    if ((rc = fg_cfg_u64(&p, "resampler_n_latents", 64, 1, 1u << 16, &lat, err)) ||
        (rc = fg_cfg_u64(&p, "resampler_depth", 3, 1, FG_MAX_LAYERS, &depth, err)) ||
        (rc = fg_cfg_u64(&p, "resampler_n_heads", 16, 1, FG_MAX_HEADS, &heads, err)) ||
        (rc = fg_cfg_u64(&p, "resampler_head_dim", 96, 1, 1u << 14, &hd, err)) ||
        (rc = fg_cfg_u64(&p, "num_key_value_heads", 4, 1, FG_MAX_HEADS, &kv, err)))
        return rc;
    if (kv > heads || heads % kv)
        return fg_err_set(err, FG_E_RANGE, "%s: perceiver_config num_key_value_heads %llu does "
                          "not divide resampler_n_heads %llu", c->origin, (unsigned long long)kv,
                          (unsigned long long)heads);
    const uint64_t h = m->hidden;
    struct fg_node *n = fg__mm_projector_node(m, h, "MLP + perceiver resampler", err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "gate", d->hidden, m->inter, 1, false);
    fg__node_linear(n, "up", d->hidden, m->inter, 1, false);
    fg__node_linear(n, "down", m->inter, h, 1, false);
    fg__node_linear(n, "resampler_q", h, heads * hd, depth, false);
    fg__node_linear(n, "resampler_k", h, kv * hd, depth, false);
    fg__node_linear(n, "resampler_v", h, kv * hd, depth, false);
    fg__node_linear(n, "resampler_o", heads * hd, h, depth, false);
    fg__node_linear(n, "resampler_gate", h, 4 * h, depth, false);
    fg__node_linear(n, "resampler_up", h, 4 * h, depth, false);
    fg__node_linear(n, "resampler_down", 4 * h, h, depth, false);
    n->params += depth * 3 * h + lat * h + h;
    return 0;
}

/* A two-layer MLP with biases, vision hidden -> text hidden -> text hidden, GELU between:
 * DeepseekVLAligner (linear1 / linear2, models/deepseek_vl/modular_deepseek_vl.py) and
 * VideoLlama3Projector's readout (models/video_llama_3/modular_video_llama_3.py). */
int fg__vl_proj_mlp2(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                     const struct vit_dims *d, struct fg_err *err)
{
    (void)c;
    (void)v;
    struct fg_node *n = fg__mm_projector_node(m, m->hidden, "2-layer MLP (GELU)", err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "linear_1", d->hidden, m->hidden, 1, true);
    fg__node_linear(n, "linear_2", m->hidden, m->hidden, 1, true);
    return 0;
}
