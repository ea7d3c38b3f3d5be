/*
 * bamba_falcon_h1.c - the BambaMixer hybrids (the other hybrids are nemotron_h_lfm2_qwen3_next.c):
 *
 *   bamba, granitemoehybrid, falcon_h1
 *               BambaMixer (Mamba-2) layers with attention layers chosen by
 *               attn_layer_indices / layers_block_type, each followed by an MLP
 *               (Bamba), a shared MLP and experts (GraniteMoeHybrid); Falcon-H1
 *               runs Mamba-2 and attention side by side in every layer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/hybrid/nemotron_h_lfm2_qwen3_next.h"
#include "util/fmt.h"

/* GraniteMoeHybridConfig.layers_block_type: since transformers 5.13 (#46738,
 * configuration_utils.py remap_legacy_layer_types) the class saves layer_types as
 * "linear_attention" / "full_attention", the names "mamba" / "attention" before. */
static const struct hy_kind_name granite_hybrid_kinds[] = {
    {0, "linear_attention", "mamba", HY_MAMBA},
    {0, "full_attention", "attention", HY_ATTN},
    {0, NULL, NULL, 0},
};

/* BambaConfig defaults (models/bamba/configuration_bamba.py). */
static const struct hybrid_spec bamba = {
    .d = {.vocab = 128000, .hidden = 4096, .inter = 14336, .layers = 32, .heads = 32,
          .max_pos = 262144, .tie = false},
    .kv_heads = 8, .kinds = granite_hybrid_kinds};

/* GraniteMoeHybridConfig defaults (models/granitemoehybrid/configuration_granitemoehybrid.py). */
static const struct hybrid_spec granitemoehybrid = {
    .d = {.vocab = 32000, .hidden = 4096, .inter = 11008, .layers = 32, .heads = 32,
          .max_pos = 2048, .tie = true},
    .kv_heads = 32, .kinds = granite_hybrid_kinds};

/* FalconH1Config defaults (models/falcon_h1/configuration_falcon_h1.py). */
static const struct hybrid_spec falcon_h1 = {
    .d = {.vocab = 128000, .hidden = 4096, .inter = 14336, .layers = 32, .heads = 32,
          .max_pos = 8192, .tie = false},
    .kv_heads = 8, .kinds = granite_hybrid_kinds};

/* ---- Bamba, GraniteMoeHybrid, Falcon-H1 ------------------------------------ */

/*
 * BambaMixer (models/bamba/modeling_bamba.py), the Mamba-2 of all three: the
 * inner width is mamba_expand x hidden (Falcon-H1: mamba_d_ssm when set) over
 * mamba_n_heads heads; mamba_d_state, mamba_n_groups, mamba_d_conv; the conv
 * bias by mamba_conv_bias, in_proj / out_proj bias by mamba_proj_bias.
 */
static int read_bamba_mixer(const struct fg_cfg *c, const struct fg_model *m, bool falcon,
                            struct fg_mamba2_shape *mb, struct fg_err *err)
{
    double expand;
    uint64_t inner = 0;
    bool norm = true;
    int rc;
    mb->hidden = m->hidden;
    if ((rc = fg_cfg_u64(c, "mamba_n_heads", 128, 1, FG_MAX_HEADS, &mb->heads, err)) ||
        (rc = fg_cfg_u64(c, "mamba_n_groups", 1, 1, FG_MAX_HEADS, &mb->groups, err)) ||
        (rc = fg_cfg_u64(c, "mamba_d_state", 256, 1, 1u << 14, &mb->state, err)) ||
        (rc = fg_cfg_u64(c, "mamba_d_conv", 4, 1, 1024, &mb->kernel, err)) ||
        (rc = fg_cfg_u64(c, "mamba_chunk_size", 256, 1, FG_MAX_POS, &mb->chunk, err)) ||
        (rc = fg_cfg_f64(c, "mamba_expand", 2.0, 0.01, 64.0, &expand, err)) ||
        (rc = fg_cfg_bool(c, "mamba_conv_bias", true, &mb->conv_bias, err)) ||
        (rc = fg_cfg_bool(c, "mamba_proj_bias", false, &mb->proj_bias, err)))
        return rc;
    if (falcon && ((rc = fg_cfg_u64(c, "mamba_d_ssm", 0, 0, FG_MAX_INTER, &inner, err)) ||
                   (rc = fg_cfg_bool(c, "mamba_rms_norm", false, &norm, err))))
        return rc;
    if (!inner)
        inner = (uint64_t)(expand * (double)m->hidden);
    mb->no_norm = !norm;
    if (!inner || inner % mb->heads)
        return fg_err_set(err, FG_E_RANGE, "%s: the Mamba inner width %llu (mamba_expand x "
                          "hidden_size%s) is not a multiple of mamba_n_heads %llu", c->origin,
                          (unsigned long long)inner, falcon ? ", or mamba_d_ssm" : "",
                          (unsigned long long)mb->heads);
    mb->head_dim = inner / mb->heads;
    if (inner % mb->groups)
        return fg_err_set(err, FG_E_RANGE, "%s: the Mamba inner width %llu is not divisible by "
                          "mamba_n_groups %llu", c->origin, (unsigned long long)inner,
                          (unsigned long long)mb->groups);
    return 0;
}

/* Which layers attend: layers_block_type, else attn_layer_indices (Bamba), else none. */
static int read_attn_layers(const struct fg_cfg *c, const struct hy_kind_name *kinds,
                            uint64_t layers, enum hy_kind *out, struct fg_err *err)
{
    size_t nn = 0;
    int rc = fg__hy_read_kind_list(c, "layers_block_type|layer_types", "layers_block_type", kinds,
                                   layers, out, &nn, err);
    if (rc || nn)
        return rc;
    uint64_t idx[FG_MAX_LAYERS];
    size_t ni = 0;
    if ((rc = fg_cfg_u64_array(c, "attn_layer_indices", 0, layers - 1, idx, FG_MAX_LAYERS, &ni,
                               err)))
        return rc;
    for (uint64_t i = 0; i < layers; i++)
        out[i] = HY_MAMBA;
    for (size_t i = 0; i < ni && i < FG_MAX_LAYERS; i++)
        out[idx[i]] = HY_ATTN;
    return 0;
}

/* GraniteMoeSharedMoE: router Linear(hidden, experts), input_linear experts x (hidden ->
 * 2 x intermediate), output_linear back; no biases. */
static int add_granite_moe(struct fg_model *m, int32_t layer, uint64_t experts, uint64_t top_k,
                           struct fg_err *err)
{
    const struct fg_moe_shape ms = {.hidden = m->hidden, .experts = experts, .top_k = top_k,
                                    .inter = m->inter, .gated = true, .fused_gate_up = true,
                                    /* as the granitemoe row */
                                    .lora_experts = FG_LORA_EXPERTS_NONE};
    return fg__add_moe(m, layer, &ms, NULL, err);
}

enum mamba_family { MF_BAMBA, MF_GRANITE, MF_FALCON };

/*
 * One decoder layer of the three:
 *   Bamba            input_layernorm, BambaMixer or BambaAttention, pre_ff_layernorm,
 *                    BambaMLP (gate / up / down, bias by mlp_bias)
 *   GraniteMoeHybrid input_layernorm, mamba or attention, post_attention_layernorm,
 *                    block_sparse_moe (when num_local_experts > 0) and shared_mlp
 *                    (input_linear hidden -> 2 x shared_intermediate_size, output_linear)
 *   FalconH1         input_layernorm, mamba and self_attn side by side, pre_ff_layernorm,
 *                    FalconH1MLP (gate / up / down, bias by mlp_bias)
 */
static int add_mamba_family_layer(struct fg_model *m, int32_t li, enum mamba_family fam,
                                  enum hy_kind kind, const struct fg_mamba2_shape *mb,
                                  const struct fg_attn_shape *a, const struct fg_mlp_shape *f,
                                  uint64_t experts, uint64_t top_k, struct fg_err *err)
{
    int rc;
    if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)))
        return rc;
    if (fam == MF_FALCON || kind == HY_MAMBA)
        if ((rc = fg__add_mamba2(m, li, mb, err)))
            return rc;
    if ((fam == MF_FALCON || kind == HY_ATTN) && (rc = fg__add_attention(m, li, a, NULL, err)))
        return rc;
    if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)))
        return rc;
    if (fam == MF_GRANITE && experts && (rc = add_granite_moe(m, li, experts, top_k, err)))
        return rc;
    return fg__add_mlp(m, li, f, NULL, err);
}

static int read_mamba_family(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                             enum mamba_family fam, struct fg_err *err)
{
    const struct hybrid_spec *s = spec;
    int rc;
    bool attn_bias = false, mlp_bias = false;
    uint64_t experts = 0, top_k = 0, shared = 0;
    struct fg_mamba2_shape mb = {0};
    if ((rc = fg__read_core(c, m, &s->d, err)) || (rc = fg__hy_read_kv_heads(c, m, s->kv_heads,
                                                                             err)) ||
        (rc = read_bamba_mixer(c, m, fam == MF_FALCON, &mb, err)) ||
        (rc = fg_cfg_bool(c, "attention_bias", false, &attn_bias, err)) ||
        (rc = fg_cfg_bool(c, "mlp_bias", false, &mlp_bias, err)))
        return rc;
    if (fam == MF_GRANITE &&
        ((rc = fg_cfg_u64(c, "num_local_experts", 8, 0, FG_MAX_EXPERTS, &experts, err)) ||
         (rc = fg_cfg_u64(c, "num_experts_per_tok", 2, 0, FG_MAX_EXPERTS, &top_k, err)) ||
         (rc = fg_cfg_u64(c, "shared_intermediate_size", 1024, 1, FG_MAX_INTER, &shared, err))))
        return rc;
    /* GraniteMoeHybridDecoderLayer builds block_sparse_moe only when num_local_experts > 0
     * (has_experts); the dense Granite 4.0 releases say 0 experts and 0 per token. */
    if (experts && !top_k)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'num_experts_per_tok' is 0 with %llu "
                          "experts: a router must pick at least one", c->origin,
                          (unsigned long long)experts);
    if (experts && top_k > experts)
        return fg_err_set(err, FG_E_RANGE, "%s: num_experts_per_tok %llu exceeds "
                          "num_local_experts %llu", c->origin, (unsigned long long)top_k,
                          (unsigned long long)experts);
    enum hy_kind kinds[FG_MAX_LAYERS];
    if (fam != MF_FALCON && (rc = read_attn_layers(c, s->kinds, m->layers, kinds, err)))
        return rc;
    struct fg_attn_shape a = {.hidden = m->hidden, .heads = m->heads, .kv_heads = m->kv_heads,
                              .head_dim = m->head_dim, .qkv_bias = attn_bias,
                              .o_bias = attn_bias};
    struct fg_mlp_shape f = {.hidden = m->hidden, .inter = fam == MF_GRANITE ? shared : m->inter,
                             .gated = true, .bias = fam == MF_GRANITE ? false : mlp_bias,
                             .fused_gate_up = fam == MF_GRANITE};
    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)))
        return rc;
    for (uint64_t l = 0; l < m->layers; l++)
        if ((rc = add_mamba_family_layer(m, (int32_t)l, fam, fam == MF_FALCON ? HY_MAMBA : kinds[l],
                                         &mb, &a, &f, experts, top_k, err)))
            return rc;
    if (experts) {
        m->experts = experts;
        m->top_k = top_k;
    }
    if ((rc = fg__add_norm(m, -1, "Final norm", m->hidden, FG_NORM_RMS, err)))
        return rc;
    return fg__add_head(m, m->vocab, m->hidden, m->tied, false, false, err);
}

static int read_bamba(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                      struct fg_err *err)
{
    return read_mamba_family(c, m, spec, MF_BAMBA, err);
}

static int read_granitemoehybrid(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                                 struct fg_err *err)
{
    return read_mamba_family(c, m, spec, MF_GRANITE, err);
}

static int read_falcon_h1(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                          struct fg_err *err)
{
    return read_mamba_family(c, m, spec, MF_FALCON, err);
}

const struct fg_arch fg__arch_mamba_table[] = {
#include "arch/hybrid/bamba_falcon_h1.def"
    {0},
};
