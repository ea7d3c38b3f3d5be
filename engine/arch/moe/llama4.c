/*
 * llama4.c - llama4_text: the Llama-4 MoE text model (transformers models/llama4,
 * Llama4TextModel), interleaved MoE and dense layers with chunked local attention; the
 * text model of multimodal.c's llama4 wrapper, read through the registry like any
 * other text family.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "util/fmt.h"

/* Llama4TextConfig defaults (transformers configuration_llama4.py). */
static const struct fg_core_defaults llama4_text_d = {
    .vocab = 202048, .hidden = 5120, .inter = 8192, .layers = 48, .heads = 40,
    .max_pos = 4096 * 32, .tie = false};

/*
 * Llama4TextMoe: router (Linear hidden -> experts, no bias), experts
 * (Llama4TextExperts: gate_up_proj experts x hidden x 2 inter, down_proj
 * experts x inter x hidden, SwiGLU), shared_expert (Llama4TextMLP of
 * intermediate_size, no bias).
 */
static int add_llama4_moe(struct fg_model *m, int32_t layer, uint64_t experts, uint64_t top_k,
                          struct fg_err *err)
{
    const struct fg_moe_shape ms = {.hidden = m->hidden, .experts = experts, .top_k = top_k,
                                    .inter = m->inter, .shared_inter = m->inter, .shared_n = 1,
                                    .gated = true};
    struct fg_node *n;
    int rc;
    if ((rc = fg__add_moe(m, layer, &ms, &n, err)))
        return rc;
    fg__fmt(n->desc, sizeof n->desc, "%llu experts top-%llu x%llu + shared %llu",
             (unsigned long long)experts, (unsigned long long)top_k,
             (unsigned long long)m->inter, (unsigned long long)m->inter);
    return 0;
}

/*
 * Which Llama-4 layers use chunked attention: layer_types when given, else
 * the RoPE layers of no_rope_layers (1 = RoPE = chunked), else every layer
 * but each no_rope_layer_interval-th (Llama4TextConfig.__post_init__).
 * Chunked attention sees at most attention_chunk_size keys, so it is
 * described as a window of that size.
 */
static int read_llama4_chunks(const struct fg_cfg *c, uint64_t layers, uint64_t *window,
                              struct fg_err *err)
{
    uint64_t chunk = 0, interval = 0, rope[FG_MAX_LAYERS];
    const char *types[FG_MAX_LAYERS];
    size_t nt = 0, nr = 0;
    int rc;
    if ((rc = fg_cfg_u64(c, "attention_chunk_size", 8192, 1, FG_MAX_POS, &chunk, err)) ||
        (rc = fg_cfg_u64(c, "no_rope_layer_interval", 4, 1, FG_MAX_LAYERS, &interval, err)) ||
        (rc = fg_cfg_str_array(c, "layer_types", types, FG_MAX_LAYERS, &nt, err)) ||
        (rc = fg_cfg_u64_array(c, "no_rope_layers", 0, 1, rope, FG_MAX_LAYERS, &nr, err)))
        return rc;
    /* An explicit null turns chunking off (absent means the default). */
    if (fg_cfg_form(c, "attention_chunk_size", NULL) == FG_CFG_NULL)
        chunk = 0;
    if (nt && nt != layers)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'layer_types' has %zu entries for %llu layers",
                          c->origin, nt, (unsigned long long)layers);
    if (!nt && nr && nr < layers)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'no_rope_layers' has %zu entries for %llu "
                          "layers", c->origin, nr, (unsigned long long)layers);
    for (uint64_t i = 0; i < layers; i++) {
        bool chunked;
        if (nt)
            chunked = strcmp(types[i], "chunked_attention") == 0;
        else if (nr)
            chunked = rope[i] != 0;
        else
            chunked = (i + 1) % interval != 0;
        window[i] = chunked ? chunk : 0;
    }
    return 0;
}

static int read_llama4_text(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                            struct fg_err *err)
{
    (void)spec;
    int rc;
    uint64_t inter_mlp = 0, experts = 0, top_k = 0, step = 0, head_dim = 0;
    bool bias = false;
    if ((rc = fg__read_core(c, m, &llama4_text_d, err)))
        return rc;
    /* Llama4TextConfig: head_dim defaults to 128, not hidden / heads;
     * num_key_value_heads to 8. */
    if ((rc = fg_cfg_u64(c, "head_dim", 128, 1, 1u << 14, &head_dim, err)))
        return rc;
    m->head_dim = head_dim;
    if (!fg_cfg_has(c, "num_key_value_heads")) {
        if (m->heads % 8)
            return fg_err_set(err, FG_E_RANGE, "%s: %llu heads are not a multiple of the default "
                              "8 key/value heads", c->origin, (unsigned long long)m->heads);
        m->kv_heads = 8;
    }
    if ((rc = fg_cfg_u64(c, "intermediate_size_mlp", 16384, 1, FG_MAX_INTER, &inter_mlp, err)) ||
        (rc = fg_cfg_u64(c, "num_local_experts", 16, 1, FG_MAX_EXPERTS, &experts, err)) ||
        (rc = fg_cfg_u64(c, "num_experts_per_tok", 1, 1, FG_MAX_EXPERTS, &top_k, err)) ||
        (rc = fg_cfg_u64(c, "interleave_moe_layer_step", 1, 1, FG_MAX_LAYERS, &step, err)) ||
        (rc = fg_cfg_bool(c, "attention_bias", false, &bias, err)))
        return rc;
    if (top_k > experts)
        return fg_err_set(err, FG_E_RANGE, "%s: num_experts_per_tok %llu exceeds num_local_experts "
                          "%llu", c->origin, (unsigned long long)top_k,
                          (unsigned long long)experts);
    /* moe_layers, else range(step - 1, layers, step) */
    bool moe[FG_MAX_LAYERS] = {false};
    uint64_t list[FG_MAX_LAYERS];
    size_t nl = 0;
    if ((rc = fg_cfg_u64_array(c, "moe_layers", 0, m->layers - 1, list, FG_MAX_LAYERS, &nl, err)))
        return rc;
    if (fg_cfg_has(c, "moe_layers")) {
        for (size_t i = 0; i < nl && i < FG_MAX_LAYERS; i++)
            moe[list[i]] = true;
    } else {
        for (uint64_t i = step - 1; i < m->layers; i += step)
            moe[i] = true;
    }
    /* use_qk_norm (Llama4TextConfig) switches Llama4TextL2Norm on q and k: a norm without
     * weights, so it is read and stores nothing */
    bool qk_l2;
    if ((rc = fg_cfg_bool(c, "use_qk_norm", true, &qk_l2, err)))
        return rc;
    uint64_t window[FG_MAX_LAYERS];
    if ((rc = read_llama4_chunks(c, m->layers, window, err)))
        return rc;

    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)))
        return rc;
    bool any_moe = false;
    for (uint64_t l = 0; l < m->layers; l++) {
        int32_t li = (int32_t)l;
        /* Llama4TextAttention: q/k/v/o by attention_bias; its qk_norm is an
         * L2 norm without weights. */
        struct fg_attn_shape a = {.hidden = m->hidden, .heads = m->heads,
                                  .kv_heads = m->kv_heads, .head_dim = m->head_dim,
                                  .window = window[l], .qkv_bias = bias, .o_bias = bias};
        /* dense layers: Llama4TextMLP of intermediate_size_mlp */
        struct fg_mlp_shape f = {.hidden = m->hidden, .inter = inter_mlp, .gated = true};
        if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)))
            return rc;
        if ((rc = fg__add_attention(m, li, &a, NULL, err)))
            return rc;
        if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)))
            return rc;
        if (moe[l]) {
            any_moe = true;
            if ((rc = add_llama4_moe(m, li, experts, top_k, err)))
                return rc;
        } else if ((rc = fg__add_mlp(m, li, &f, NULL, err))) {
            return rc;
        }
    }
    if (any_moe) {
        m->experts = experts;
        m->top_k = top_k;
    }
    if ((rc = fg__add_norm(m, -1, "Final norm", m->hidden, FG_NORM_RMS, err)))
        return rc;
    return fg__add_head(m, m->vocab, m->hidden, m->tied, false, false, err);
}

const struct fg_arch fg__arch_llama4_table[] = {
#include "arch/moe/llama4.def"
    {0},
};
