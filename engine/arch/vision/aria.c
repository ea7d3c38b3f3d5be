/*
 * aria.c - AriaForConditionalGeneration, read from huggingface/transformers
 * models/aria/modeling_aria.py (commit 00779a6b) and configuration_aria.py (commit 008e5743):
 *
 *   vision_tower          Idefics3VisionTransformer (AriaConfig forces vision_config's type
 *                         to idefics3_vision): multimodal.c's Idefics3 tower
 *   multi_modal_projector AriaProjector: query (max of projector_patch_to_query_dict's values
 *                         x vision hidden); AriaCrossAttention: q/k/v vision -> vision without
 *                         bias, nn.MultiheadAttention (in_proj 3 x hidden^2 + 3 x hidden,
 *                         out_proj with bias), linear (biased), layer_norm and layer_norm_kv;
 *                         layer_norm; AriaProjectorMLP linear_in vision -> text hidden and
 *                         linear_out text -> text, without bias
 *   language_model        AriaTextModel + lm_head: text_config, read by afmoe_longcat_doge.c's
 *                         aria_text reader (AriaTextForCausalLM)
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "arch/vision/multimodal.h"

/* The largest value of projector_patch_to_query_dict ({"1225": 128, "4900": 256} when
 * absent, AriaConfig's). */
static int max_queries(const struct fg_cfg *c, uint64_t *out, struct fg_err *err)
{
    const cJSON *d = fg__cfg_item(c, "projector_patch_to_query_dict");
    *out = 256;
    if (!d || cJSON_IsNull(d))
        return 0;
    if (!cJSON_IsObject(d) || !d->child)
        return fg_err_set(err, FG_E_TYPE, "%s: key 'projector_patch_to_query_dict' must be a "
                          "non-empty object of patch counts to query counts", c->origin);
    *out = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, d) {
        if (!cJSON_IsNumber(e) || e->valuedouble < 1 || e->valuedouble > (1u << 20))
            return fg_err_set(err, FG_E_RANGE, "%s: key 'projector_patch_to_query_dict' maps "
                              "'%s' to a value that is not a query count", c->origin,
                              e->string ? e->string : "?");
        if ((uint64_t)e->valuedouble > *out)
            *out = (uint64_t)e->valuedouble;
    }
    return 0;
}

static int proj_aria(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                     const struct vit_dims *d, struct fg_err *err)
{
    (void)v;
    uint64_t nq = 0;
    int rc = max_queries(c, &nq, err);
    if (rc)
        return rc;
    const uint64_t h = d->hidden;
    struct fg_node *n = fg__mm_projector_node(m, m->hidden, "query cross-attention + MLP", err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "q", h, h, 1, false);
    fg__node_linear(n, "k", h, h, 1, false);
    fg__node_linear(n, "v", h, h, 1, false);
    fg__node_linear(n, "mha_in", h, 3 * h, 1, true);
    fg__node_linear(n, "mha_out", h, h, 1, true);
    fg__node_linear(n, "linear", h, h, 1, true);
    fg__node_linear(n, "linear_in", h, m->hidden, 1, false);
    fg__node_linear(n, "linear_out", m->hidden, m->hidden, 1, false);
    n->params += nq * h + 3 * 2 * h;   /* query; layer_norm, layer_norm_kv, layer_norm */
    return 0;
}

/* AriaForConditionalGeneration: text_config is always an AriaTextConfig (the original
 * remote-code configs name it aria_moe_lm), read by afmoe_longcat_doge.c's aria_text reader. */
static const struct mm_spec aria = {.text_type = "aria_text", .text_alias = "aria_moe_lm",
                                    .vit = &fg__mm_idefics3_vit, .proj_fn = proj_aria};

const struct fg_arch fg__arch_vl_aria_table[] = {
#include "arch/vision/aria.def"
    {0},
};
