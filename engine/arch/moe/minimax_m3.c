/*
 * minimax_m3.c - minimax_m3_vl_text: the text model of MiniMax-M3 (transformers
 * models/minimax_m3_vl/modeling_minimax_m3_vl.py @decba1d2ea, 5.16.0.dev0: MiniMaxM3VLTextModel
 * and the lm_head of MiniMaxM3VLForCausalLM / MiniMaxM3SparseForConditionalGeneration), as
 * MiniMaxM3VLTextConfig (configuration_minimax_m3_vl.py) reads the Hub's text_config.  Each
 * layer is MiniMaxM3VLDecoderLayer: input_layernorm, MiniMaxM3VLAttention (q/k/v/o without
 * bias, per-head q_norm / k_norm, and a MiniMaxM3VLIndexer on the "minimax_m3_sparse" layers),
 * post_attention_layernorm, then a MiniMaxM3VLDenseMLP of dense_intermediate_size or a
 * MiniMaxM3VLSparseMoeBlock ("sparse" layers: sigmoid MiniMaxM3VLTopKRouter with its
 * e_score_correction_bias buffer, MiniMaxM3VLExperts of intermediate_size, one shared
 * MiniMaxM3VLDenseMLP of shared_intermediate_size).  The norms are Gemma-style RMSNorms (one
 * weight of their width).  The checkpoint's mtp.* modules, which the class drops on load, are
 * not sized by config.json: the count is unsure when num_mtp_modules declares some.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/moe/moe_mla.h"
#include "arch/vision/multimodal.h"
#include "util/fmt.h"

/* MiniMaxM3VLTextConfig defaults (configuration_minimax_m3_vl.py @decba1d2ea). */
static const struct fg_core_defaults m3_d = {
    .vocab = 200064, .hidden = 6144, .inter = 3072, .layers = 60, .heads = 64,
    .max_pos = 524288, .tie = false, .kv_heads = 4, .head_dim = 128};

/* Everything a block reads, from the config once. */
struct m3_cfg {
    uint64_t layers, experts, top_k, dense_inter, shared_inter;
    uint64_t index_heads, index_dim;
    bool sparse_mlp[FG_MAX_LAYERS];    /* mlp_layer_types "sparse": the MoE block */
    bool indexer[FG_MAX_LAYERS];       /* layer_types "minimax_m3_sparse": an indexer */
};

/* ---- reading the config ------------------------------------------------- */

/*
 * A per-layer kind: the class's list key (strings, on / off naming the kinds), else the Hub's
 * 1 / 0 list (the converted name, from MiniMaxM3VLTextConfig.__post_init__), else def for
 * every layer.
 */
static int read_kinds(const struct fg_cfg *c, const struct fg_cfg *freq_cfg, const char *key,
                      const char *on, const char *off, const char *freq_key, bool def,
                      uint64_t layers, bool *out, struct fg_err *err)
{
    const char *types[FG_MAX_LAYERS];
    uint64_t freq[FG_MAX_LAYERS];
    size_t nt = 0, nf = 0;
    int rc;
    if ((rc = fg_cfg_str_array(c, key, types, FG_MAX_LAYERS, &nt, err)) ||
        (rc = fg__moe_check_list_len(c, key, nt, layers, err)))
        return rc;
    if (!nt && freq_cfg &&
        ((rc = fg_cfg_u64_array(freq_cfg, freq_key, 0, 1, freq, FG_MAX_LAYERS, &nf, err)) ||
         (rc = fg__moe_check_list_len(freq_cfg, freq_key, nf, layers, err))))
        return rc;
    for (uint64_t l = 0; l < layers && l < FG_MAX_LAYERS; l++) {
        if (nt && strcmp(types[l], on) && strcmp(types[l], off))
            return fg_err_set(err, FG_E_RANGE, "%s: key '%s' has '%s' at layer %llu; expected "
                              "%s or %s", c->origin, key, types[l], (unsigned long long)l, on,
                              off);
        out[l] = nt ? strcmp(types[l], on) == 0 : nf ? freq[l] == 1 : def;
    }
    return 0;
}

/*
 * sparse_attention_config, which __post_init__ pops: sparse_num_index_heads / sparse_index_dim
 * over index_n_heads / index_head_dim, sparse_attention_freq (1 = an indexer) when layer_types
 * is absent.  The class builds no index-value branch: a sparse layer whose
 * sparse_disable_index_value is 0 would store one, and use_sparse_attention false with sparse
 * layers says the checkpoint is not the class's - both unsure.
 */
static int read_sparse(const struct fg_cfg *c, struct fg_model *m, struct m3_cfg *k,
                       struct fg_err *err)
{
    struct fg_cfg s = {0};
    struct fg_err e = {0};
    bool have = fg_cfg_child(c, "sparse_attention_config", &s, &e);
    if (e.code) {
        if (err)
            *err = e;
        return e.code;
    }
    int rc;
    if ((rc = fg_cfg_u64(c, "index_n_heads", 4, 1, FG_MAX_HEADS, &k->index_heads, err)) ||
        (rc = fg_cfg_u64(c, "index_head_dim", 128, 1, 1u << 14, &k->index_dim, err)) ||
        (have && ((rc = fg_cfg_u64(&s, "sparse_num_index_heads", k->index_heads, 1, FG_MAX_HEADS,
                                   &k->index_heads, err)) ||
                  (rc = fg_cfg_u64(&s, "sparse_index_dim", k->index_dim, 1, 1u << 14,
                                   &k->index_dim, err)))) ||
        (rc = read_kinds(c, have ? &s : NULL, "layer_types", "minimax_m3_sparse",
                         "full_attention", "sparse_attention_freq", false, k->layers, k->indexer,
                         err)))
        return rc;
    if (!have)
        return 0;
    uint64_t off[FG_MAX_LAYERS];
    size_t n = 0;
    bool use = true, any = false;
    if ((rc = fg_cfg_u64_array(&s, "sparse_disable_index_value", 0, 1, off, FG_MAX_LAYERS, &n,
                               err)) ||
        (rc = fg__moe_check_list_len(&s, "sparse_disable_index_value", n, k->layers, err)) ||
        (rc = fg_cfg_bool(&s, "use_sparse_attention", true, &use, err)))
        return rc;
    for (uint64_t l = 0; l < k->layers && l < FG_MAX_LAYERS; l++) {
        any |= k->indexer[l];
        if (n && k->indexer[l] && off[l] == 0) {
            fg__model_unsure(m, "sparse_disable_index_value", "unsure: "
                             "sparse_disable_index_value is 0 at sparse layer %llu: an index-"
                             "value branch MiniMaxM3VLIndexer does not build",
                             (unsigned long long)l);
            break;
        }
    }
    if (!use && any)
        fg__model_unsure(m, "use_sparse_attention", "unsure: use_sparse_attention is false, but "
                         "sparse_attention_freq gives layers the indexer MiniMaxM3VLAttention "
                         "builds");
    return 0;
}

/*
 * The Hub's keys for what the class hardcodes: one shared expert (n_shared_experts), experts
 * of intermediate_size (moe_intermediate_size), the dense layers mlp_layer_types names
 * (first_k_dense_replace), per-head q/k norms always (use_qk_norm, qk_norm_type), the router
 * bias always (use_routing_bias), no output gate (attention_output_gate).
 */
static int check_conventions(const struct fg_cfg *c, struct fg_model *m, const struct m3_cfg *k,
                             struct fg_err *err)
{
    uint64_t lead = 0, first_k, shared_n, moe_inter;
    bool qk_norm, bias, gate;
    const char *qk_type = NULL;
    int rc;
    while (lead < k->layers && lead < FG_MAX_LAYERS && !k->sparse_mlp[lead])
        lead++;
    if ((rc = fg_cfg_u64(c, "first_k_dense_replace", lead, 0, k->layers, &first_k, err)) ||
        (rc = fg_cfg_u64(c, "n_shared_experts", 1, 0, FG_MAX_EXPERTS, &shared_n, err)) ||
        (rc = fg_cfg_u64(c, "moe_intermediate_size", m->inter, 1, FG_MAX_INTER, &moe_inter,
                         err)) ||
        (rc = fg_cfg_bool(c, "use_qk_norm", true, &qk_norm, err)) ||
        (rc = fg_cfg_str(c, "qk_norm_type", "per_head", &qk_type, err)) ||
        (rc = fg_cfg_bool(c, "use_routing_bias", true, &bias, err)) ||
        (rc = fg_cfg_bool(c, "attention_output_gate", false, &gate, err)))
        return rc;
    fg__moe_doubt_u64(m, "first_k_dense_replace", first_k, lead, "MiniMaxM3VLTextConfig "
                      "places the experts by mlp_layer_types / moe_layer_freq");
    fg__moe_doubt_u64(m, "n_shared_experts", shared_n, 1, "MiniMaxM3VLSparseMoeBlock's one "
                      "shared expert");
    fg__moe_doubt_u64(m, "moe_intermediate_size", moe_inter, m->inter, "MiniMaxM3VLExperts "
                      "are intermediate_size wide");
    if (!qk_norm || (qk_type && strcmp(qk_type, "per_head")))
        fg__model_unsure(m, "qk_norm_type", "unsure: use_qk_norm / qk_norm_type say other q/k "
                         "norms than the per-head ones MiniMaxM3VLAttention builds");
    if (!bias)
        fg__model_unsure(m, "use_routing_bias", "unsure: use_routing_bias is false, but "
                         "MiniMaxM3VLTopKRouter keeps an e_score_correction_bias");
    if (gate)
        fg__model_unsure(m, "attention_output_gate", "unsure: attention_output_gate is true: "
                         "a gate MiniMaxM3VLAttention does not build");
    return 0;
}

static int read_m3(const struct fg_cfg *c, struct fg_model *m, struct m3_cfg *k,
                   struct fg_err *err)
{
    int rc;
    k->layers = m->layers;
    if ((rc = fg_cfg_u64(c, "num_local_experts|num_experts", 128, 1, FG_MAX_EXPERTS,
                         &k->experts, err)) ||
        (rc = fg_cfg_u64(c, "num_experts_per_tok", 4, 1, FG_MAX_EXPERTS, &k->top_k, err)) ||
        (rc = fg__check_top_k(c, k->top_k, "num_experts_per_tok", k->experts,
                              "num_local_experts", err)) ||
        (rc = fg_cfg_u64(c, "dense_intermediate_size", 12288, 1, FG_MAX_INTER, &k->dense_inter,
                         err)) ||
        (rc = fg_cfg_u64(c, "shared_intermediate_size", 3072, 0, FG_MAX_INTER,
                         &k->shared_inter, err)) ||
        (rc = read_kinds(c, c, "mlp_layer_types", "sparse", "dense", "moe_layer_freq", true,
                         k->layers, k->sparse_mlp, err)) ||
        (rc = read_sparse(c, m, k, err)))
        return rc;
    if (m->heads % m->kv_heads)
        return fg_err_set(err, FG_E_RANGE, "%s: %llu attention heads are not a multiple of the "
                          "%llu key/value heads", c->origin, (unsigned long long)m->heads,
                          (unsigned long long)m->kv_heads);
    return check_conventions(c, m, k, err);
}

/* ---- blocks ------------------------------------------------------------- */

/* One MiniMaxM3VLDecoderLayer. */
static int add_block(struct fg_model *m, uint64_t l, const struct m3_cfg *k, struct fg_err *err)
{
    int32_t li = (int32_t)l;
    const struct fg_attn_shape a = {
        .hidden = m->hidden, .heads = m->heads, .kv_heads = m->kv_heads,
        .head_dim = m->head_dim, .qk_norm = 1, .qk_norm_kind = FG_NORM_RMS};
    struct fg_node *n;
    int rc;
    if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)) ||
        (rc = fg__add_attention(m, li, &a, &n, err)))
        return rc;
    if (k->indexer[l]) {
        /* MiniMaxM3VLIndexer: q_proj hidden -> index_n_heads x index_head_dim, k_proj hidden
         * -> index_head_dim, bias-free; q_norm and k_norm RMSNorms of index_head_dim */
        fg__node_linear(n, "idx_q", m->hidden, k->index_heads * k->index_dim, 1, false);
        fg__node_linear(n, "idx_k", m->hidden, k->index_dim, 1, false);
        n->params += 2 * k->index_dim;
        size_t len = strlen(n->desc);
        fg__fmt(n->desc + len, sizeof n->desc - len, ", indexer %llux%llu",
                (unsigned long long)k->index_heads, (unsigned long long)k->index_dim);
    }
    if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)))
        return rc;
    if (!k->sparse_mlp[l]) {
        /* MiniMaxM3VLDenseMLP: gate_up_proj hidden -> 2 x dense_intermediate_size, down_proj */
        const struct fg_mlp_shape f = {.hidden = m->hidden, .inter = k->dense_inter,
                                       .gated = true, .fused_gate_up = true};
        return fg__add_mlp(m, li, &f, NULL, err);
    }
    /* router weight (experts, hidden) and e_score_correction_bias; experts gate_up_proj
     * (experts, 2 x intermediate_size, hidden) and down_proj; peft maps no target onto them
     * (minimax_m3_vl is not in conversion_mapping.py _MODEL_TO_CONVERSION_PATTERN) */
    const struct fg_moe_shape ms = {
        .hidden = m->hidden, .experts = k->experts, .top_k = k->top_k, .inter = m->inter,
        .shared_inter = k->shared_inter, .shared_n = k->shared_inter ? 1 : 0, .gated = true,
        .fused_gate_up = true, .score_bias = true, .lora_experts = FG_LORA_EXPERTS_NONE};
    return fg__add_moe(m, li, &ms, NULL, err);
}

static int add_layer(struct fg_model *m, int32_t layer, const void *ctx, struct fg_err *err)
{
    return add_block(m, (uint64_t)layer, ctx, err);
}

/* A block reads nothing of its layer but whether it has an indexer and the experts. */
static bool layers_alike(const void *ctx, uint64_t a, uint64_t b)
{
    const struct m3_cfg *k = ctx;
    return k->indexer[a] == k->indexer[b] && k->sparse_mlp[a] == k->sparse_mlp[b];
}

static int read_minimax_m3(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                           struct fg_err *err)
{
    (void)spec;
    int rc;
    struct m3_cfg *k = calloc(1, sizeof *k);
    if (!k)
        return fg_err_set(err, FG_E_NOMEM, "out of memory");
    uint64_t bo = 0, bi = 0, mtp = 0;
    if ((rc = fg__read_core(c, m, &m3_d, err)) || (rc = read_m3(c, m, k, err)) ||
        (rc = fg_cfg_u64(c, "num_mtp_modules|num_nextn_predict_layers", 0, 0, 64, &mtp, err)) ||
        (rc = fg__moe_read_quant(c, m, &bo, &bi, err)))
        goto out;
    m->experts = k->experts;
    m->top_k = k->top_k;
    if (mtp)
        /* MiniMaxM3VLPreTrainedModel._keys_to_ignore_on_load_unexpected: (^|.)mtp.* */
        fg__model_unsure_count(m, "num_mtp_modules", "unsure: num_mtp_modules=%llu: the "
                               "release stores multi-token-prediction modules (mtp.*) the class "
                               "drops on load, and config.json does not size them; the "
                               "safetensors headers settle what the checkpoint holds",
                               (unsigned long long)mtp);
    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)) ||
        (rc = fg__add_layers_alike(m, m->layers, add_layer, layers_alike, k, err)) ||
        (rc = fg__add_norm(m, -1, "Final norm", m->hidden, FG_NORM_RMS, err)) ||
        (rc = fg__add_head(m, m->vocab, m->hidden, m->tied, false, false, err)))
        goto out;
    fg__moe_fp8_rule(m, bo, bi, bo ? fg__moe_fp8_scales(m, bo, bi) : 0);
out:
    free(k);
    return rc;
}

/* ---- the vision-language wrapper ------------------------------------------ */

/*
 * MiniMaxM3VLVisionModel: MiniMaxM3VLVisionEmbeddings.proj a Conv3d (num_channels ->
 * hidden_size, kernel temporal_patch_size x patch_size x patch_size, no bias), pre_layrnorm,
 * CLIP-like MiniMaxM3VLVisionEncoderLayers (layer_norm1 / layer_norm2 LayerNorms, q/k/v/out
 * with bias, fc1 / fc2 with bias), 3D rotary positions (nothing stored), no post-norm.
 * MiniMaxM3VLVisionConfig defaults; the class pops vision_config.model_type (the Hub writes
 * clip_vision_model).
 */
static const struct vit_spec m3_vit = {
    .name = "MiniMax-M3 ViT",
    .hidden = {"hidden_size", 1280}, .layers = {"num_hidden_layers", 32},
    .heads = {"num_attention_heads", 16}, .inter = {"intermediate_size", 5120},
    .channels = {"num_channels", 3}, .patch = {"patch_size", 14}, .image = {"image_size", 2016},
    .temporal = {"temporal_patch_size", 2}, .pos = VIT_POS_NONE, .pre_norm = true,
    .pos_type_key = "position_embedding_type", .pos_type_val = "rope"};

/*
 * MiniMaxM3VLMultiModalProjector: linear_1 vision hidden -> projector_hidden_size, linear_2
 * -> text hidden, then over spatial_merge_size^2 patches merge_linear_1 (text hidden x
 * spatial_merge_size^2 -> projector_hidden_size) and merge_linear_2 -> text hidden, all with
 * bias.  spatial_merge_size is vision_config's (the Hub's copy inside
 * img_token_compression_config is not read by the class).
 */
static int m3_proj(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                   const struct vit_dims *d, struct fg_err *err)
{
    uint64_t ph, merge;
    int rc;
    if ((rc = fg_cfg_u64(c, "projector_hidden_size", 6144, 1, FG_MAX_INTER, &ph, err)) ||
        (rc = fg_cfg_u64(v, "spatial_merge_size", 2, 1, 64, &merge, err)))
        return rc;
    struct fg_node *n = fg__mm_projector_node(m, m->hidden, "2-layer MLP + patch-merge MLP",
                                              err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "linear_1", d->hidden, ph, 1, true);
    fg__node_linear(n, "linear_2", ph, m->hidden, 1, true);
    fg__node_linear(n, "merge_linear_1", m->hidden * merge * merge, ph, 1, true);
    fg__node_linear(n, "merge_linear_2", ph, m->hidden, 1, true);
    return 0;
}

/* MiniMaxM3SparseForConditionalGeneration: the minimax_m3_vl_text model above, the tower and
 * the projector. */
static const struct mm_spec m3_vl = {.text_type = "minimax_m3_vl_text", .vit = &m3_vit,
                                     .proj_fn = m3_proj};

const struct fg_arch fg__arch_minimax_m3_table[] = {
#include "arch/moe/minimax_m3.def"
    {0},
};
