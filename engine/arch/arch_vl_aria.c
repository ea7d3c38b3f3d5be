/*
 * arch_vl_aria.c - AriaForConditionalGeneration and its text model AriaTextForCausalLM, read
 * from huggingface/transformers models/aria/modeling_aria.py (commit 00779a6b) and
 * configuration_aria.py (commit 008e5743):
 *
 *   vision_tower          Idefics3VisionTransformer (AriaConfig forces vision_config's type
 *                         to idefics3_vision): arch_multimodal.c's Idefics3 tower
 *   multi_modal_projector AriaProjector: query (max of projector_patch_to_query_dict's values
 *                         x vision hidden); AriaCrossAttention: q/k/v vision -> vision without
 *                         bias, nn.MultiheadAttention (in_proj 3 x hidden^2 + 3 x hidden,
 *                         out_proj with bias), linear (biased), layer_norm and layer_norm_kv;
 *                         layer_norm; AriaProjectorMLP linear_in vision -> text hidden and
 *                         linear_out text -> text, without bias
 *   language_model        AriaTextModel: llama attention (attention_bias, head_dim) and in
 *                         every layer AriaTextMoELayer: router Linear(hidden, moe_num_experts)
 *                         without bias, experts fc1 (hidden -> 2 x intermediate_size, fused) /
 *                         fc2 as 3-D parameters (AriaGroupedExpertsGemm), shared experts one
 *                         MLP of moe_num_shared_experts x intermediate_size (biased by mlp_bias)
 *   lm_head               Linear(hidden, vocab, no bias), tied by tie_word_embeddings
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch_moe.h"
#include "arch/arch_multimodal.h"

/* AriaTextConfig defaults.  peft maps no target name onto the AriaGroupedExpertsGemm
 * parameters (transformers conversion_mapping.py does not convert aria). */
static const struct moe_spec aria_text = {
    .d = {.vocab = 32000, .hidden = 4096, .inter = 4096, .layers = 32, .heads = 32,
          .max_pos = 2048, .tie = false},
    .experts_key = "moe_num_experts", .experts_def = 8,
    .topk_key = "moe_topk", .topk_def = 2,
    .place = PLACE_ALL, .shared = SHARED_DEEPSEEK, .shared_def = 2,
    .shared_key = "moe_num_shared_experts", .fused_gate_up = true,
    .peft = FG_LORA_EXPERTS_NONE, .attn = ATTN_GQA, .attn_bias_key = "attention_bias"};

/* The text reader: the MoE rows' reader, refusing mlp_bias (biased shared experts the rows do
 * not build). */
static int read_aria_text(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                          struct fg_err *err)
{
    bool mlp_bias = false;
    int rc = fg_cfg_bool(c, "mlp_bias", false, &mlp_bias, err);
    if (rc)
        return rc;
    if (mlp_bias)
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: key '%s%smlp_bias' is true: biased shared "
                          "experts are not sized", c->origin, c->scope, c->scope[0] ? "." : "");
    return fg__arch_read_moe(c, m, spec, err);
}

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
 * remote-code configs name it aria_moe_lm). */
static const struct mm_spec aria = {.text_type = "aria_text", .text_alias = "aria_moe_lm",
                                    .vit = &fg__mm_idefics3_vit, .proj_fn = proj_aria};

const struct fg_arch fg__arch_vl_aria_table[] = {
    {"aria", "vision-language (SigLIP + Aria MoE)", fg__mm_read, &aria},
    {"aria_text", "aria MoE decoder (shared experts)", read_aria_text, &aria_text},
    {NULL, NULL, NULL, NULL},
};
