/*
 * multimodal_proj.c - the projectors of the vision-language wrappers (multimodal.h):
 * each maps the tower's features into the text width as one FG_NODE_OTHER node in
 * FG_STACK_TOWER, and names the transformers class it follows.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "arch/vision/multimodal.h"
#include "util/fmt.h"

/* ---- the vision_config read ----------------------------------------------------- */

int fg__mm_vision_view(const struct fg_cfg *c, struct fg_model *m, const char *left_out,
                       struct fg_cfg *v, struct fg_config **fill, struct fg_err *err)
{
    const char *cls = NULL;
    int rc = fg_cfg_class_fill(c, "vision_config", fill, &cls, err);
    memset(v, 0, sizeof *v);
    if (rc)
        return rc;
    if (*fill) {
        /* transformers builds and loads the class's default tower then */
        *v = fg_config_root(*fill);
        fg__model_unsure(m, "vision_config", "unsure: vision_config absent (trimmed config?): "
                         "the tower counted is the one %s builds then, its defaults; the "
                         "checkpoint's may differ", cls);
        return 0;
    }
    if (!fg_cfg_has(c, "vision_config")) {
        fg__model_unsure(m, "vision_config", "unsure: vision_config absent (trimmed config?): "
                         "only the text model is counted; the checkpoint also stores %s",
                         left_out);
        return 0;
    }
    return fg_cfg_child(c, "vision_config", v, err) ? 0 : FG_E_TYPE;
}

/* ---- projectors ---------------------------------------------------------------- */

struct fg_node *fg__mm_projector_node(struct fg_model *m, uint64_t out, const char *desc,
                                      struct fg_err *err)
{
    struct fg_node *n = fg__model_add(m, FG_NODE_OTHER, -1, "Projector", err);
    if (!n)
        return NULL;
    n->stack = FG_STACK_TOWER;
    n->width = (uint32_t)out;
    n->hidden = (uint32_t)out;
    fg__copy(n->desc, sizeof n->desc, desc);
    return n;
}

/* How many vision layers' features the projector concatenates (LlavaConfig,
 * Mistral3Config): vision_feature_layer is an int (one layer) or a list; the values may be
 * negative, so only the count is read.  1 when absent or null; FG_E_TYPE for any other
 * type, FG_E_RANGE for an empty or over-long list. */
int fg__mm_feature_layers(const struct fg_cfg *c, const char *key, uint64_t *nfeat,
                          struct fg_err *err)
{
    size_t len = 0;
    enum fg_cfg_form form = fg_cfg_form(c, key, &len);
    *nfeat = 1;
    if (form == FG_CFG_LIST)
        *nfeat = (uint64_t)len;
    else if (form != FG_CFG_ABSENT && form != FG_CFG_NUMBER && form != FG_CFG_NULL)
        return fg_err_set(err, FG_E_TYPE, "%s: key '%s' must be a number or an array of "
                          "numbers", c->origin, key);
    if (*nfeat == 0 || *nfeat > FG_MAX_LAYERS)
        return fg_err_set(err, FG_E_RANGE, "%s: key '%s' lists %llu layers", c->origin, key,
                          (unsigned long long)*nfeat);
    return 0;
}

/* LlavaMultiModalProjector: linear_1 (vision hidden x number of feature
 * layers -> text hidden), GELU, linear_2 (text -> text), biases by
 * multimodal_projector_bias (default true). */
static int proj_llava(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                      const struct vit_dims *d, struct fg_err *err)
{
    (void)v;
    bool bias = true;
    uint64_t nfeat;
    int rc;
    if ((rc = fg_cfg_bool(c, "multimodal_projector_bias", true, &bias, err)) ||
        (rc = fg__mm_feature_layers(c, "vision_feature_layer", &nfeat, err)))
        return rc;
    struct fg_node *n = fg__mm_projector_node(m, m->hidden, "2-layer MLP (GELU)", err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "linear_1", d->hidden * nfeat, m->hidden, 1, bias);
    fg__node_linear(n, "linear_2", m->hidden, m->hidden, 1, bias);
    return 0;
}

/* Gemma3MultiModalProjector: mm_input_projection_weight (vision hidden x
 * text hidden, no bias) and mm_soft_emb_norm (Gemma3RMSNorm over the vision
 * hidden); the average pooling to mm_tokens_per_image has no parameters. */
static int proj_gemma3(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                       const struct vit_dims *d, struct fg_err *err)
{
    (void)c;
    (void)v;
    struct fg_node *n = fg__mm_projector_node(m, m->hidden, "RMSNorm + linear", err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "mm_input", d->hidden, m->hidden, 1, false);
    n->params += d->hidden;
    return 0;
}

/* The PatchMerger of Qwen2-VL and Qwen2.5-VL: ln_q over the vision hidden (norm_per scalars
 * per channel: 2 for Qwen2-VL's LayerNorm, 1 for Qwen2.5-VL's RMSNorm), then mlp =
 * Linear(hidden x merge^2 -> same) + GELU + Linear(-> out), both with bias
 * (spatial_merge_size x spatial_merge_size patches become one text token); out is
 * vision_config's out_key. */
/* A merger over spatial_merge_size^2 tower vectors: a norm of norm_per x hidden scalars, a
 * biased Linear(wide -> wide) and a biased Linear(wide -> out), out the vision_config key
 * out_key or, with out_key NULL, the text hidden size. */
static int patch_merger(struct fg_model *m, const struct fg_cfg *v, const struct vit_dims *d,
                        const char *out_key, uint64_t norm_per, const char *desc,
                        struct fg_err *err)
{
    uint64_t merge = 0, out = m->hidden;
    int rc;
    if ((rc = fg_cfg_u64(v, "spatial_merge_size", 2, 1, 64, &merge, err)) ||
        (out_key && (rc = fg_cfg_u64(v, out_key, 3584, 1, FG_MAX_HIDDEN, &out, err))))
        return rc;
    if (out != m->hidden)
        fg__model_note(m, "vision_config.%s %llu differs from the text hidden size %llu", out_key,
                       (unsigned long long)out, (unsigned long long)m->hidden);
    uint64_t wide = d->hidden * merge * merge;
    struct fg_node *n = fg__mm_projector_node(m, out, desc, err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "merger_in", wide, wide, 1, true);
    fg__node_linear(n, "merger_out", wide, out, 1, true);
    n->params += norm_per * d->hidden;
    return 0;
}

/* Qwen2-VL PatchMerger: ln_q a LayerNorm, the output width vision_config.hidden_size. */
static int proj_qwen2_vl(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                         const struct vit_dims *d, struct fg_err *err)
{
    (void)c;
    return patch_merger(m, v, d, "hidden_size", 2, "PatchMerger (LayerNorm + 2-layer MLP)", err);
}

/* Llama-4: the tower's vision_adapter (Llama4VisionMLP2: fc1
 * intermediate_size -> projector_input_dim, fc2 projector_output_dim ->
 * projector_output_dim, no bias; transformers sizes fc1's input by
 * intermediate_size, the pixel-shuffled width) and
 * Llama4MultiModalProjector.linear_1 (vision_output_dim -> text hidden,
 * no bias). */
static int proj_llama4(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                       const struct vit_dims *d, struct fg_err *err)
{
    (void)c;
    uint64_t pin = 0, pout = 0, vout = 0;
    int rc;
    if ((rc = fg_cfg_u64(v, "projector_input_dim", 4096, 1, FG_MAX_INTER, &pin, err)) ||
        (rc = fg_cfg_u64(v, "projector_output_dim", 4096, 1, FG_MAX_INTER, &pout, err)) ||
        (rc = fg_cfg_u64(v, "vision_output_dim", 7680, 1, FG_MAX_INTER, &vout, err)))
        return rc;
    struct fg_node *n = fg__mm_projector_node(m, m->hidden, "pixel-shuffle MLP + linear", err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "adapter_fc1", d->inter, pin, 1, false);
    fg__node_linear(n, "adapter_fc2", pout, pout, 1, false);
    fg__node_linear(n, "linear_1", vout, m->hidden, 1, false);
    return 0;
}

/* Kimi-K2.5 PatchMergerMLP (mm_projector_type "patchmerger"): pre_norm
 * LayerNorm(mm_hidden_size), proj = Linear(mm x kh x kw -> same) + GELU +
 * Linear(-> text_hidden_size), both with bias. */
static int proj_kimi(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                     const struct vit_dims *d, struct fg_err *err)
{
    (void)c;
    const char *type = NULL;
    uint64_t mm = 0, out = 0, k[2] = {2, 2};
    size_t nk = 0;
    int rc;
    if ((rc = fg_cfg_str(v, "mm_projector_type", "patchmerger", &type, err)))
        return rc;
    if (strcmp(type, "patchmerger") != 0)
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: key 'vision_config.mm_projector_type' is "
                          "'%s'; only 'patchmerger' is understood", c->origin, type);
    if ((rc = fg_cfg_u64(v, "mm_hidden_size", d->hidden, 1, FG_MAX_HIDDEN, &mm, err)) ||
        (rc = fg_cfg_u64(v, "text_hidden_size", m->hidden, 1, FG_MAX_HIDDEN, &out, err)) ||
        (rc = fg_cfg_u64_array(v, "merge_kernel_size", 1, 64, k, 2, &nk, err)))
        return rc;
    if (nk != 0 && nk != 2)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'vision_config.merge_kernel_size' must hold "
                          "two numbers", c->origin);
    uint64_t wide = mm * k[0] * k[1];
    struct fg_node *n = fg__mm_projector_node(m, out, "PatchMerger (LayerNorm + 2-layer MLP)", err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "merger_in", wide, wide, 1, true);
    fg__node_linear(n, "merger_out", wide, out, 1, true);
    n->params += 2 * mm;
    return 0;
}

/* Qwen3-VL: Qwen3VLVisionPatchMerger (norm LayerNorm over the vision hidden, linear_fc1
 * hidden x merge^2 -> same, linear_fc2 -> out_hidden_size, biases) and one more merger per
 * deepstack_visual_indexes entry whose norm runs after the shuffle (use_postshuffle_norm:
 * LayerNorm over hidden x merge^2).  Qwen3-VL-8B's shapes give 8,767,123,696, its Hub total
 * (tests/test_params.c, Qwen--Qwen3-VL-8B-Instruct). */
static int proj_qwen3_vl(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                         const struct vit_dims *d, struct fg_err *err)
{
    (void)c;
    uint64_t merge = 0, out = 0, idx[64];
    size_t ndeep = 0;
    int rc;
    if ((rc = fg_cfg_u64(v, "spatial_merge_size", 2, 1, 64, &merge, err)) ||
        (rc = fg_cfg_u64(v, "out_hidden_size", 3584, 1, FG_MAX_HIDDEN, &out, err)) ||
        (rc = fg_cfg_u64_array(v, "deepstack_visual_indexes", 0, FG_MAX_LAYERS, idx, 64, &ndeep,
                               err)))
        return rc;
    if (out != m->hidden)
        fg__model_note(m, "vision_config.out_hidden_size %llu differs from the text hidden size "
                       "%llu", (unsigned long long)out, (unsigned long long)m->hidden);
    uint64_t wide = d->hidden * merge * merge;
    struct fg_node *n = fg__mm_projector_node(m, out, "PatchMerger + deepstack mergers", err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "merger_in", wide, wide, 1 + ndeep, true);
    fg__node_linear(n, "merger_out", wide, out, 1 + ndeep, true);
    n->params += 2 * d->hidden + ndeep * 2 * wide;
    return 0;
}

/* Mistral3MultiModalProjector (models/mistral3): norm RMSNorm over the vision hidden,
 * patch_merger.merging_layer Linear(hidden x merge^2 -> hidden, no bias), linear_1 (vision
 * hidden x feature layers -> text hidden) and linear_2 (text -> text), biased by
 * multimodal_projector_bias (Mistral3Config default false).  Mistral-Small-3.2-24B's shapes
 * give 24,011,361,280, its published count (tests/test_arch_hybrid.c). */
static int proj_mistral3(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                         const struct vit_dims *d, struct fg_err *err)
{
    (void)v;
    uint64_t merge = 0, nfeat = 1;
    bool bias = false;
    int rc;
    if ((rc = fg_cfg_u64(c, "spatial_merge_size", 2, 1, 64, &merge, err)) ||
        (rc = fg_cfg_bool(c, "multimodal_projector_bias", false, &bias, err)) ||
        (rc = fg__mm_feature_layers(c, "vision_feature_layer", &nfeat, err)))
        return rc;
    struct fg_node *n = fg__mm_projector_node(m, m->hidden, "RMSNorm + patch merger + 2-layer MLP",
                                           err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "merger", d->hidden * merge * merge, d->hidden, 1, false);
    fg__node_linear(n, "linear_1", d->hidden * nfeat, m->hidden, 1, bias);
    fg__node_linear(n, "linear_2", m->hidden, m->hidden, 1, bias);
    n->params += d->hidden;
    return 0;
}

/* PaliGemmaMultiModalProjector (models/paligemma/modeling_paligemma.py): one linear, vision
 * hidden -> vision_config.projection_dim, with bias; PaliGemmaConfig also keeps
 * projection_dim in the root (default 2048). */
static int proj_paligemma(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                          const struct vit_dims *d, struct fg_err *err)
{
    uint64_t root = 0, out = 0;
    int rc;
    if ((rc = fg_cfg_u64(c, "projection_dim", 2048, 1, FG_MAX_HIDDEN, &root, err)) ||
        (rc = fg_cfg_u64(v, "projection_dim", root, 1, FG_MAX_HIDDEN, &out, err)))
        return rc;
    if (out != m->hidden)
        fg__model_note(m, "projection_dim %llu differs from the text hidden size %llu",
                       (unsigned long long)out, (unsigned long long)m->hidden);
    struct fg_node *n = fg__mm_projector_node(m, out, "linear", err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "linear", d->hidden, out, 1, true);
    return 0;
}

/* Idefics3Connector (models/idefics3/modeling_idefics3.py): pixel_shuffle folds scale_factor^2
 * patches into one (no parameters), then modality_projection.proj, vision hidden x
 * scale_factor^2 -> text hidden, without bias.  Idefics3Config scale_factor default 2. */
static int proj_idefics3(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                         const struct vit_dims *d, struct fg_err *err)
{
    (void)v;
    uint64_t scale = 0;
    int rc = fg_cfg_u64(c, "scale_factor", 2, 1, 64, &scale, err);
    if (rc)
        return rc;
    /* Idefics3Model builds the tower, this connector and AutoModel(text_config), no
     * perceiver (transformers decba1d2, 5.16.0.dev0, Idefics3Model.__init__; SmolVLM's the
     * same): the text_config.perceiver_config SmolVLM's releases carry over from Idefics2
     * is never read, so it sizes nothing */
    struct fg_cfg t;
    if (fg_cfg_child(c, "text_config", &t, NULL))
        (void)fg__cfg_raw(&t, "perceiver_config");
    struct fg_node *n = fg__mm_projector_node(m, m->hidden, "pixel shuffle + linear", err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "proj", d->hidden * scale * scale, m->hidden, 1, false);
    return 0;
}

/* Qwen2_5_VLPatchMerger (models/qwen2_5_vl/modeling_qwen2_5_vl.py): ln_q an RMSNorm over the
 * vision hidden (weight only, where Qwen2-VL's is a LayerNorm), then Linear(hidden x merge^2 ->
 * same) + GELU + Linear(-> out_hidden_size), both with bias.  Qwen2.5-VL-7B's shapes give its
 * visual module 676,550,144 and the whole 8,292,166,656, its index total_size / 2
 * (tests/test_arch_hybrid.c). */
static int proj_qwen2_5_vl(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                           const struct vit_dims *d, struct fg_err *err)
{
    (void)c;
    return patch_merger(m, v, d, "out_hidden_size", 1, "PatchMerger (RMSNorm + 2-layer MLP)",
                        err);
}

int fg__mm_proj_pixel_swiglu(struct fg_model *m, const struct fg_cfg *c, const struct vit_dims *d,
                             uint64_t align_def, bool norm, struct fg_err *err)
{
    uint64_t f = 0, align = 0;
    int rc;
    if ((rc = fg_cfg_u64(c, "downsample_factor", 2, 1, 64, &f, err)) ||
        (rc = fg_cfg_u64(c, "alignment_intermediate_size", align_def, 2, FG_MAX_INTER, &align,
                         err)))
        return rc;
    if (align % 2)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'alignment_intermediate_size' = %llu is odd: "
                          "the SwiGLU splits it in two halves", c->origin,
                          (unsigned long long)align);
    uint64_t wide = d->hidden * f * f;
    struct fg_node *n = fg__mm_projector_node(m, m->hidden, norm ? "LayerNorm + SwiGLU MLP"
                                                                 : "pixel shuffle + SwiGLU MLP",
                                              err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "linear_1", wide, align, 1, true);
    fg__node_linear(n, "linear_2", align / 2, m->hidden, 1, true);
    n->params += norm ? 2 * wide : 0;
    return 0;
}

/* AyaVisionMultiModalProjector (models/aya_vision/modeling_aya_vision.py): pixel shuffle by
 * downsample_factor, layernorm (LayerNorm with bias) over vision hidden x factor^2, linear_1 to
 * alignment_intermediate_size, a SwiGLU that halves it, linear_2 to the text hidden; both
 * linears biased.  AyaVisionConfig defaults (factor 2, alignment 28672). */
static int proj_aya_vision(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                           const struct vit_dims *d, struct fg_err *err)
{
    (void)v;
    return fg__mm_proj_pixel_swiglu(m, c, d, 28672, true, err);
}

int fg__mm_proj_norm_mlp(struct fg_model *m, uint64_t wide, struct fg_err *err)
{
    struct fg_node *n = fg__mm_projector_node(m, m->hidden, "LayerNorm + 2-layer MLP", err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "linear_1", wide, m->hidden, 1, true);
    fg__node_linear(n, "linear_2", m->hidden, m->hidden, 1, true);
    n->params += 2 * wide;
    return 0;
}

/* InternVLMultiModalProjector (models/internvl/modeling_internvl.py): pixel shuffle by
 * 1 / downsample_ratio, layer_norm (LayerNorm with bias) over hidden x scale^2, linear_1 to the
 * text hidden, GELU, linear_2 text -> text; both linears biased.  InternVLConfig
 * downsample_ratio 0.5. */
static int proj_internvl(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                         const struct vit_dims *d, struct fg_err *err)
{
    (void)v;
    double ratio = 0.5;
    int rc = fg_cfg_f64(c, "downsample_ratio", 0.5, 0.01, 1.0, &ratio, err);
    if (rc)
        return rc;
    uint64_t scale = (uint64_t)(1.0 / ratio); /* int(1 / downsample_ratio) */
    return fg__mm_proj_norm_mlp(m, d->hidden * scale * scale, err);
}

/*
 * PaddleOCRProjector (models/paddleocr_vl/modeling_paddleocr_vl.py at transformers decba1d2ea):
 * pre_norm a LayerNorm over the vision hidden, linear_1 (hidden x merge^2 -> same) and
 * linear_2 (-> text_config.hidden_size), both biased.  The release's checkpoint, saved by
 * PaddlePaddle's remote code, also holds what PaddleOCRVLForConditionalGeneration skips on
 * load (_keys_to_ignore_on_load_unexpected): the embeddings' packing_position_embedding
 * (nn.Embedding(32768, hidden)) and the SigLIP attention-pooling head (use_head without
 * vision_use_head: probe, in_proj 3h x h, out_proj, LayerNorm, fc1 / fc2, all biased), an
 * optional rule of the stored count as MTP layers are.
 */
static int proj_paddleocr(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                          const struct vit_dims *d, struct fg_err *err)
{
    (void)c;
    int rc = patch_merger(m, v, d, NULL, 2, "Projector (LayerNorm + 2-layer MLP)", err);
    if (rc)
        return rc;
    uint64_t h = d->hidden, f = d->inter;
    uint64_t head = h + (3 * h * h + 3 * h) + (h * h + h) + 2 * h + (h * f + f) + (f * h + h);
    fg__model_rule_optional(m, "vision_config", "stored, not loaded: "
                            "packing_position_embedding, vision head", (int64_t)(32768 * h + head));
    return 0;
}

const fg__mm_proj_fn fg__mm_projectors[PROJ_COUNT] = {
    [PROJ_LLAVA] = proj_llava,   [PROJ_GEMMA3] = proj_gemma3, [PROJ_QWEN2_VL] = proj_qwen2_vl,
    [PROJ_LLAMA4] = proj_llama4, [PROJ_KIMI] = proj_kimi, [PROJ_QWEN3_VL] = proj_qwen3_vl,
    [PROJ_MISTRAL3] = proj_mistral3, [PROJ_PALIGEMMA] = proj_paligemma,
    [PROJ_IDEFICS3] = proj_idefics3, [PROJ_QWEN2_5_VL] = proj_qwen2_5_vl,
    [PROJ_AYA_VISION] = proj_aya_vision, [PROJ_INTERNVL] = proj_internvl,
    [PROJ_PADDLEOCR] = proj_paddleocr,
};

