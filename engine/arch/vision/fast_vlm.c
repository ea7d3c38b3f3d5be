/*
 * fast_vlm.c - FastVlmForConditionalGeneration, read from huggingface/transformers@decba1d2ea
 * models/fast_vlm/modeling_fast_vlm.py and configuration_fast_vlm.py:
 *
 *   vision_tower          AutoModel.from_config(vision_config): TimmWrapperModel
 *                         (models/timm_wrapper/modeling_timm_wrapper.py), which builds
 *                         timm.create_model(architecture, num_classes=0, **model_args); FastVLM
 *                         releases name FastViTHD, timm's fastvit_mci3
 *   multi_modal_projector FastVlmMultiModalProjector: linear_1 (vision hidden_size -> text
 *                         hidden) and linear_2 (text -> text), biased by
 *                         multimodal_projector_bias: LLaVA's projector with one feature layer
 *   language_model        text_config (qwen2 by default), its own reader; lm_head
 *
 * The tower is timm's FastVit (huggingface/pytorch-image-models@aa4b5850
 * timm/models/fastvit.py, fastvit_mci3 / fastvit_mci4) as built with
 * model_args.inference_mode true, the only form the released configs name: every MobileOneBlock,
 * ReparamLargeKernelConv, RepMixer and RepConditionalPosEnc is its one biased reparam_conv.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "arch/vision/multimodal.h"
#include "util/fmt.h"

/* A fastvit_mci* variant: five stages, stage 0 without downsampling, RepMixer stages then
 * attention stages with a 7x7 RepConditionalPosEnc, mlp_ratio 4, cls_ratio 2. */
struct fastvit_variant {
    const char *name;
    uint64_t layers[5], dims[5];
    unsigned attention_from; /* first attention stage (and pos_emb) */
};

static const struct fastvit_variant fastvit_variants[] = {
    {"fastvit_mci3", {2, 12, 24, 4, 2}, {96, 192, 384, 768, 1536}, 3},
    {"fastvit_mci4", {2, 12, 24, 4, 4}, {128, 256, 512, 1024, 2048}, 3},
};

/* ConvMlp: conv a ConvNormAct (depthwise 7x7 without bias, BatchNorm2d), fc1 / fc2 1x1 convs
 * with bias; *buf gets the BatchNorm's running_mean / running_var / num_batches_tracked. */
static uint64_t conv_mlp(uint64_t d, uint64_t *buf)
{
    *buf += 2 * d + 1;
    return d * 49 + 2 * d + (4 * d * d + 4 * d) + (4 * d * d + d);
}

/* timm model_args other than inference_mode change the network: refused by name. */
static int read_model_args(const struct fg_cfg *v, struct fg_err *err)
{
    const cJSON *a = fg__cfg_item(v, "model_args"), *e;
    bool inference = false;
    if (a && !cJSON_IsNull(a) && !cJSON_IsObject(a))
        return fg_err_set(err, FG_E_TYPE, "%s: key 'vision_config.model_args' must be an object",
                          v->origin);
    const cJSON *obj = a && cJSON_IsObject(a) ? a : NULL;
    cJSON_ArrayForEach(e, obj) {
        if (!e->string || strcmp(e->string, "inference_mode"))
            return fg_err_set(err, FG_E_UNSUPPORTED, "%s: key 'vision_config.model_args.%s' "
                              "changes the timm FastViT; only inference_mode is understood",
                              v->origin, e->string ? e->string : "?");
        inference = cJSON_IsTrue(e);
    }
    if (!inference)
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: vision_config.model_args.inference_mode "
                          "is not true: the train-time FastViT branches (BatchNorm, scale and "
                          "skip convs) are not sized; only the reparameterised tower is",
                          v->origin);
    return 0;
}

/* FastVit with num_classes 0 (ClassifierHead's fc an Identity): the tower node and d. */
static int add_fastvit(struct fg_model *m, const struct fg_cfg *v, struct vit_dims *d,
                       struct fg_err *err)
{
    const char *type = NULL, *arch = NULL;
    int rc;
    if ((rc = fg_cfg_str(v, "model_type", "timm_wrapper", &type, err)) ||
        (rc = fg_cfg_str(v, "architecture", NULL, &arch, err)))
        return rc;
    const struct fastvit_variant *f = NULL;
    for (size_t i = 0; arch && i < sizeof fastvit_variants / sizeof *fastvit_variants; i++)
        if (!strcmp(arch, fastvit_variants[i].name))
            f = &fastvit_variants[i];
    if (strcmp(type, "timm_wrapper") || !f)
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: vision_config is %s '%s'; only timm "
                          "fastvit_mci3 and fastvit_mci4 towers are sized", v->origin, type,
                          arch ? arch : "(no architecture)");
    if ((rc = read_model_args(v, err)))
        return rc;
    const uint64_t last = f->dims[4], out = 2 * last;
    uint64_t hidden, features, classes;
    if ((rc = fg_cfg_u64(v, "hidden_size", out, 1, FG_MAX_HIDDEN, &hidden, err)) ||
        (rc = fg_cfg_u64(v, "num_features", out, 1, FG_MAX_HIDDEN, &features, err)) ||
        (rc = fg_cfg_u64(v, "num_classes", 0, 0, 1u << 24, &classes, err)))
        return rc;
    (void)classes; /* TimmWrapperModel builds the timm model with num_classes=0 */
    if (hidden != out || features != out)
        return fg_err_set(err, FG_E_RANGE, "%s: vision_config hidden_size %llu / num_features "
                          "%llu: %s's final_conv gives %llu", v->origin,
                          (unsigned long long)hidden, (unsigned long long)features, arch,
                          (unsigned long long)out);
    /* stem: MobileOneBlocks 3 -> d0 3x3 stride 2, d0 depthwise 3x3 stride 2, d0 1x1 */
    uint64_t d0 = f->dims[0], p = (d0 * 3 * 9 + d0) + (d0 * 9 + d0) + (d0 * d0 + d0), buf = 0;
    for (unsigned s = 0; s < 5; s++) {
        const uint64_t dim = f->dims[s];
        if (s > 0) /* PatchEmbed: 7x7 stride-2 conv of groups = its input, then a 1x1 block */
            p += (dim * 49 + dim) + (dim * dim + dim);
        if (s >= f->attention_from) /* RepConditionalPosEnc: depthwise 7x7 with bias */
            p += dim * 49 + dim;
        uint64_t bbuf = 0, block = conv_mlp(dim, &bbuf) + dim; /* ConvMlp, its LayerScale2d */
        if (s < f->attention_from) /* RepMixer: depthwise 3x3 with bias */
            block += dim * 9 + dim;
        else /* LayerNorm2d, Attention qkv (no bias) and proj, layer_scale_1 */
            block += 2 * dim + 3 * dim * dim + (dim * dim + dim) + dim;
        p += f->layers[s] * block;
        buf += f->layers[s] * bbuf;
    }
    /* final_conv: depthwise-grouped 3x3 last -> 2 x last with bias, SqueezeExcite of
     * out / 16 with biased 1x1 convs */
    p += out * 9 + out + (out * (out / 16) + out / 16) + (out / 16 * out + out);
    struct fg_node *n = fg__mm_tower_node(m, "Vision tower", last, last / 32, 4 * last, err);
    if (!n)
        return FG_E_NOMEM;
    n->params = p + buf;
    n->buffers = buf;
    fg__fmt(n->desc, sizeof n->desc, "FastViT %s, %llu features", arch, (unsigned long long)out);
    *d = (struct vit_dims){.hidden = out, .layers = 5, .heads = last / 32, .inter = 4 * last,
                           .channels = 3};
    return 0;
}

static int read_fast_vlm(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                         struct fg_err *err)
{
    int rc = fg__mm_read_text(c, spec, m, err);
    if (rc)
        return rc;
    struct fg_cfg v;
    struct fg_config *fill = NULL;
    if ((rc = fg__mm_vision_view(c, m, "the FastViT tower and projector", &v, &fill, err)) ||
        !v.obj)
        return rc;
    size_t first = m->n_nodes;
    struct vit_dims d;
    if (!(rc = add_fastvit(m, &v, &d, err)) &&
        !(rc = fg__mm_projectors[PROJ_LLAVA](m, c, &v, &d, err)))
        rc = fg__mm_move_to_front(m, first, err);
    fg_config_free(fill);
    return rc;
}

/* FastVlmConfig's default text model is qwen2. */
static const struct mm_spec fast_vlm = {.text_type = "qwen2"};

const struct fg_arch fg__arch_vl_fast_vlm_table[] = {
#include "arch/vision/fast_vlm.def"
    {0},
};
