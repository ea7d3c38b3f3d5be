/*
 * phi4mm.c - Phi4MultimodalForCausalLM (transformers-native Phi-4-multimodal), read from
 * huggingface/transformers models/phi4_multimodal/modular_phi4_multimodal.py (commit 005f0127)
 * and configuration_phi4_multimodal.py (commit 008e5743):
 *
 *   model.layers ...      Phi3 blocks from the root keys (the phi3 reader; Phi4MultimodalConfig's
 *                         defaults where a key is absent: vocab 200064, 8 key / value heads)
 *   image_embed           Phi4MultimodalVisionModel: the SigLIP layout with its attention-pooling
 *                         head (always built) over (image_size / patch_size)^2 positions;
 *                         img_projection_up vision -> hidden and img_projection_down hidden ->
 *                         hidden (biased); global_img_feature_extensor and
 *                         sub_img_feature_extensor, a vision-wide vector each
 *   audio_embed           Phi4MultimodalAudioModel: encoder_embedding's global_mean /
 *                         global_invstd buffers (input_size each, persistent); the NeMo conv
 *                         subsampling (Conv2d 1 -> C 3 x 3, then log2(time_reduction) - 1 pairs of
 *                         a depthwise 3 x 3 and a pointwise 1 x 1, all biased; out Linear of
 *                         C x nemo_final_size -> hidden); relative_attention_bias_layer
 *                         (bias_max_distance buckets, twice when not symmetric, x heads);
 *                         num_blocks conformer layers of two MLPs (LayerNorm, gate_up hidden ->
 *                         2 x intermediate, down; biased), q/k/v/o with bias, the conv module
 *                         (LayerNorm, GLU point-wise conv hidden -> 2 x ext_pw_out_channel with
 *                         b1 / b2, depthwise conv of kernel_size x depthwise_multiplier,
 *                         point-wise conv to depthwise_separable_out_channel, ext_pw_conv_1d
 *                         hidden -> ext_pw_out_channel; biased) and two LayerNorms; the speech
 *                         and vision-speech projections (up hidden x downsample_rate -> text
 *                         hidden, down text -> text, biased)
 *   lm_head               hidden -> vocab without bias, tied by tie_word_embeddings.
 *
 * The LoRA adapters of the original remote-code release (model_type phi4mm) are not part of
 * this class: transformers' conversion writes them as separate adapters.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "arch/vision/multimodal.h"
#include "util/fmt.h"

/* Phi4MultimodalConfig's text defaults where Phi3Config's differ. */
static const struct fg_cfg_over phi4_defaults[] = {
    {FG_CFG_DEFAULT, "vocab_size", FG_CFG_NUMBER(200064)},
    {FG_CFG_DEFAULT, "num_key_value_heads", FG_CFG_NUMBER(8)},
    {FG_CFG_DEFAULT, "max_position_embeddings", FG_CFG_NUMBER(131072)},
    {0, NULL, NULL},
};

/* Phi4MultimodalVisionModel: SiglipVisionModel's layout at Phi4MultimodalVisionConfig's
 * defaults, the pooling head always built (no vision_use_head key in the class). */
static const struct vit_spec phi4_vit = {
    .name = "Phi-4 SigLIP ViT",
    .hidden = {"hidden_size", 1152}, .layers = {"num_hidden_layers", 27},
    .heads = {"num_attention_heads", 16}, .inter = {"intermediate_size", 4304},
    .channels = {"num_channels", 3}, .patch = {"patch_size", 14}, .image = {"image_size", 448},
    .pos = VIT_POS_PATCHES, .patch_bias = true, .post_norm = true,
    .head_key = "vision_use_head", .head_def = true};

static int add_image(struct fg_model *m, const struct fg_cfg *v, struct fg_err *err)
{
    struct vit_dims d;
    int rc = fg__mm_add_vit(m, v, &phi4_vit, &d, err);
    if (rc)
        return rc;
    struct fg_node *p = fg__mm_projector_node(m, m->hidden, "image projection (GELU MLP)", err);
    if (!p)
        return FG_E_NOMEM;
    fg__node_linear(p, "up", d.hidden, m->hidden, 1, true);
    fg__node_linear(p, "down", m->hidden, m->hidden, 1, true);
    p->params += 2 * d.hidden;                       /* global / sub feature extensors */
    return 0;
}

struct audio_dims {
    uint64_t h, f, L, heads, ext, dsout, mult, kernel, input, reduce, maxd, convc, down;
    bool symmetric;
};

static int read_audio(const struct fg_cfg *a, struct audio_dims *k, struct fg_err *err)
{
    int rc;
    if ((rc = fg_cfg_u64(a, "hidden_size", 1024, 1, FG_MAX_HIDDEN, &k->h, err)) ||
        (rc = fg_cfg_u64(a, "intermediate_size", 1536, 1, FG_MAX_INTER, &k->f, err)) ||
        (rc = fg_cfg_u64(a, "num_blocks", 24, 1, FG_MAX_LAYERS, &k->L, err)) ||
        (rc = fg_cfg_u64(a, "num_attention_heads", 16, 1, FG_MAX_HEADS, &k->heads, err)) ||
        (rc = fg_cfg_u64(a, "ext_pw_out_channel", 1024, 1, FG_MAX_HIDDEN, &k->ext, err)) ||
        (rc = fg_cfg_u64(a, "depthwise_separable_out_channel", 1024, 1, FG_MAX_HIDDEN, &k->dsout,
                         err)) ||
        (rc = fg_cfg_u64(a, "depthwise_multiplier", 1, 1, 64, &k->mult, err)) ||
        (rc = fg_cfg_u64(a, "kernel_size", 3, 1, 1024, &k->kernel, err)) ||
        (rc = fg_cfg_u64(a, "input_size", 80, 1, 1u << 16, &k->input, err)) ||
        (rc = fg_cfg_u64(a, "time_reduction", 8, 2, 1u << 10, &k->reduce, err)) ||
        (rc = fg_cfg_u64(a, "bias_max_distance", 1000, 1, 1u << 20, &k->maxd, err)) ||
        (rc = fg_cfg_u64(a, "nemo_conv_channels", 1024, 1, FG_MAX_HIDDEN, &k->convc, err)) ||
        (rc = fg_cfg_u64(a, "downsample_rate", 1, 1, 64, &k->down, err)) ||
        (rc = fg_cfg_bool(a, "bias_symmetric", false, &k->symmetric, err)))
        return rc;
    if (k->reduce & (k->reduce - 1))
        return fg_err_set(err, FG_E_RANGE, "%s: key 'audio_config.time_reduction' = %llu is not a "
                          "power of two", a->origin, (unsigned long long)k->reduce);
    if (k->h % k->heads)
        return fg_err_set(err, FG_E_RANGE, "%s: audio_config hidden_size %llu is not divisible "
                          "by %llu heads", a->origin, (unsigned long long)k->h,
                          (unsigned long long)k->heads);
    return 0;
}

/* Phi4MultimodalAudioModel as one tower node, its two projections as the second projector. */
static int add_audio(struct fg_model *m, const struct fg_cfg *a, struct fg_err *err)
{
    struct audio_dims k;
    int rc = read_audio(a, &k, err);
    if (rc)
        return rc;
    const uint64_t h = k.h, C = k.convc;
    uint64_t steps = 0, final = k.input;
    for (uint64_t r = k.reduce; r > 1; r >>= 1, steps++)
        final = (final - 1) / 2 + 1;             /* floor((n - 1) / 2 + 1) per stride-2 conv */
    struct fg_node *n = fg__mm_tower_node(m, "Audio tower", h, k.heads, k.f, err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "q", h, h, k.L, true);
    fg__node_linear(n, "k", h, h, k.L, true);
    fg__node_linear(n, "v", h, h, k.L, true);
    fg__node_linear(n, "o", h, h, k.L, true);
    fg__node_linear(n, "gate_up", h, 2 * k.f, 2 * k.L, true);
    fg__node_linear(n, "down", k.f, h, 2 * k.L, true);
    /* conv module: LayerNorm, GLU conv + b1 / b2, depthwise + point-wise, ext_pw_conv_1d */
    const uint64_t conv = 2 * h + (h * 2 * k.ext + 2 * k.ext) + 2 * k.ext +
                          (h * k.mult * k.kernel + h * k.mult) +
                          (h * k.mult * k.dsout + k.dsout) + (h * k.ext + k.ext);
    n->params += k.L * (conv + 2 * 2 * h + 2 * 2 * h);  /* + MLP and block LayerNorms */
    n->params += 2 * k.input;                           /* global_mean / global_invstd */
    n->params += (9 * C + C) + (steps - 1) * ((9 * C + C) + (C * C + C)) +
                 (C * final * h + h);                   /* NeMo subsampling + out */
    n->params += (k.symmetric ? k.maxd : 2 * k.maxd) * k.heads;
    n->buffers += 2 * k.input;
    fg__fmt(n->desc, sizeof n->desc, "conformer %llu x %llu, 1/%llu time", (unsigned long long)k.L,
            (unsigned long long)h, (unsigned long long)k.reduce);
    struct fg_node *p = fg__mm_projector_node(m, m->hidden, "speech / vision-speech projections",
                                              err);
    if (!p)
        return FG_E_NOMEM;
    fg__node_linear(p, "up", h * k.down, m->hidden, 2, true);
    fg__node_linear(p, "down", m->hidden, m->hidden, 2, true);
    return 0;
}

static int read_phi4mm(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                       struct fg_err *err)
{
    (void)spec;
    struct fg_cfg v = {.obj = NULL, .origin = c->origin, .scope = "vision_config"};
    struct fg_cfg a = {.obj = NULL, .origin = c->origin, .scope = "audio_config"};
    int rc;
    if ((fg_cfg_has(c, "vision_config") && !fg_cfg_child(c, "vision_config", &v, err)) ||
        (fg_cfg_has(c, "audio_config") && !fg_cfg_child(c, "audio_config", &a, err)))
        return FG_E_TYPE;
    if ((rc = fg__mm_read_root_text(c, "phi3", phi4_defaults, m, err)))
        return rc;
    size_t first = m->n_nodes;
    if ((rc = add_image(m, &v, err)) || (rc = add_audio(m, &a, err)))
        return rc;
    return fg__mm_move_to_front(m, first, err);
}

const struct fg_arch fg__arch_vl_phi4mm_table[] = {
#include "arch/vision/phi4mm.def"
    {0},
};
