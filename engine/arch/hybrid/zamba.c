/*
 * zamba.c - the Zamba hybrids: a Mamba backbone whose "hybrid" layers first call a
 * shared transformer block, stored once, on the stream concatenated with the embeddings.
 *
 *   zamba   ZambaForCausalLM (transformers models/zamba/modeling_zamba.py @010496ec,
 *           configuration_zamba.py @0381c337): Mamba-1 layers (ZambaMambaMixer, its
 *           x_proj / dt_proj split into n_mamba_heads slices: the Mamba-1 count), one shared
 *           block.
 *   zamba2  Zamba2ForCausalLM (modular_zamba2.py @00511f5d, configuration_zamba2.py
 *           @02f58079): Mamba-2 layers and num_mem_blocks shared blocks called in turn
 *           (ABAB), each call with its own LoRA-style adapters (nn.Sequential(Linear(in,
 *           adapter_rank), Linear(adapter_rank, out)) in the block's *_adapter_list at that
 *           call's index).
 *
 * The graph holds a node for every call, so activations and FLOPs are per call; the shared
 * weights are the nodes of each block's first call, later calls store only their adapters.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "arch/hybrid/ssm.h"
#include "util/fmt.h"

enum { ZB_MAMBA, ZB_HYBRID };

struct zamba2 {
    bool v1;                /* Zamba (Mamba-1 layers, one block, no adapters) */
    uint64_t mem_blocks, rank, heads, kv_heads, head_dim, inter, attn_in;
    double expand;          /* mamba_expand */
    bool attn_adapter, bias;
    struct fg_mamba2_shape mb;
    struct fg_mamba1_shape m1;
    uint8_t kind[FG_MAX_LAYERS];
};

/* Zamba2Config's default layers_block_type (54 layers). */
static void default_pattern(uint8_t *kind)
{
    size_t n = 0;
    kind[n++] = ZB_MAMBA;
    for (int r = 0; r < 7; r++) {
        for (int i = 0; i < 5; i++)
            kind[n++] = ZB_MAMBA;
        kind[n++] = ZB_HYBRID;
    }
    static const uint8_t tail[] = {0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0};
    memcpy(kind + n, tail, sizeof tail);
}

/* ZambaConfig._layers_block_type: mamba, mamba, hybrid, then hybrid where i % period ==
 * offset over the other layers. */
static int zamba_pattern(const struct fg_cfg *c, uint64_t layers, uint8_t *kind,
                         struct fg_err *err)
{
    uint64_t period, offset;
    int rc;
    if ((rc = fg_cfg_u64(c, "attn_layer_period", 6, 1, FG_MAX_LAYERS, &period, err)) ||
        (rc = fg_cfg_u64(c, "attn_layer_offset", 4, 0, FG_MAX_LAYERS, &offset, err)))
        return rc;
    if (layers < 3)
        return fg_err_set(err, FG_E_RANGE, "%s: zamba needs at least 3 layers (its first "
                          "three are mamba, mamba, hybrid)", c->origin);
    kind[0] = kind[1] = ZB_MAMBA;
    kind[2] = ZB_HYBRID;
    for (uint64_t i = 0; i + 3 < layers; i++)
        kind[i + 3] = i % period == offset ? ZB_HYBRID : ZB_MAMBA;
    return 0;
}

/* layers_block_type as saved (it wins over the computed default), else the class default.
 * Since transformers 5.13 (#46738, commit 181beb3b) ZambaConfig and Zamba2Config
 * remap the legacy "mamba" to "linear_attention" (configuration_utils.py
 * remap_legacy_layer_types) and save the new name, so a re-saved config writes it. */
static int read_kinds(const struct fg_cfg *c, bool v1, uint64_t layers, uint8_t *kind,
                      struct fg_err *err)
{
    const char *names[FG_MAX_LAYERS];
    size_t n = 0;
    int rc = fg_cfg_str_array(c, "layers_block_type", names, FG_MAX_LAYERS, &n, err);
    if (rc)
        return rc;
    if (n == 0 && v1)
        return zamba_pattern(c, layers, kind, err);
    if (n == 0) {
        if (layers != 54)
            return fg_err_set(err, FG_E_MISSING, "%s: zamba2 with %llu layers needs "
                              "'layers_block_type' (the class default lists 54)", c->origin,
                              (unsigned long long)layers);
        default_pattern(kind);
        return 0;
    }
    if (n != layers)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'layers_block_type' has %zu entries for "
                          "%llu layers", c->origin, n, (unsigned long long)layers);
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(names[i], "mamba") || !strcmp(names[i], "linear_attention"))
            kind[i] = ZB_MAMBA;
        else if (!strcmp(names[i], "hybrid"))
            kind[i] = ZB_HYBRID;
        else
            return fg_err_set(err, FG_E_RANGE, "%s: key 'layers_block_type' has unknown kind "
                              "'%s' at layer %zu; known: mamba (linear_attention), hybrid",
                              c->origin, names[i], i);
    }
    return 0;
}

/* Keys of Zyphra's pre-transformers Zamba2 config (Zyphra/Zamba2 hf_utils, the 7B's first
 * hub config) and the size Zamba2Config builds in their place: the class neither reads nor
 * saves the former, so on such a config it builds its own value, which is the checkpoint's
 * only where the two agree (Zamba2-7B's first file: 14336 = 4 x 3584, state 64, expand 2,
 * rank 128 all do).  (mamba_headdim, kv_channels and num_query_groups are attributes the
 * class derives and saves, so a transformers config holds them too.) */
enum zyphra_size { ZS_INTER, ZS_STATE, ZS_CONV, ZS_EXPAND, ZS_MLP_ADAPTER, ZS_RANK, ZS_ATTN_ADAPTER };

static const struct zyphra_key {
    const char *key, *reads;
    enum zyphra_size size;
} zyphra_keys[] = {
    {"ffn_hidden_size", "intermediate_size", ZS_INTER},
    {"state_size", "mamba_d_state", ZS_STATE},
    {"conv_dimension", "mamba_d_conv", ZS_CONV},
    {"expansion_factor", "mamba_expand", ZS_EXPAND},
    {"use_shared_block_lora", "the MLP adapters, which it always builds", ZS_MLP_ADAPTER},
    {"lora_rank", "adapter_rank", ZS_RANK},
    {"use_shared_attention_lora", "use_shared_attention_adapter", ZS_ATTN_ADAPTER},
};

/* The value the class builds for a Zyphra key's size. */
static double class_size(const struct zamba2 *z, enum zyphra_size s)
{
    switch (s) {
    case ZS_INTER: return (double)z->inter;
    case ZS_STATE: return (double)z->mb.state;
    case ZS_CONV: return (double)z->mb.kernel;
    case ZS_EXPAND: return z->expand;
    case ZS_MLP_ADAPTER: return 1.0;
    case ZS_RANK: return (double)z->rank;
    case ZS_ATTN_ADAPTER: return z->attn_adapter ? 1.0 : 0.0;
    }
    return 0.0;
}

/* Unsure, naming the key, when a Zyphra key of c sizes something other than the class
 * builds, or when mamba_headdim is not the mamba_expand x hidden_size / n_mamba_heads the
 * class overwrites it with (the heads the config meant are then not the ones built); a
 * config in Zyphra's names that leaves mamba_headdim out does not say its heads at all. */
static void doubt_zyphra_keys(const struct fg_cfg *c, struct fg_model *m, const struct zamba2 *z)
{
    bool zyphra = false;
    for (size_t i = 0; i < sizeof zyphra_keys / sizeof zyphra_keys[0]; i++) {
        const struct zyphra_key *k = &zyphra_keys[i];
        const cJSON *v = fg__cfg_raw(c, k->key);
        if (!v)
            continue;
        zyphra = true;
        double said = cJSON_IsBool(v) ? (cJSON_IsTrue(v) ? 1.0 : 0.0) : v->valuedouble;
        if ((cJSON_IsBool(v) || cJSON_IsNumber(v)) && said == class_size(z, k->size))
            continue;
        fg__model_unsure(m, k->key, "unsure: key '%s' is a pre-transformers Zyphra name that "
                         "Zamba2Config does not read; it builds %s at its own %g instead: take "
                         "a config saved by transformers", k->key, k->reads,
                         class_size(z, k->size));
        return;
    }
    const cJSON *hd = fg__cfg_raw(c, "mamba_headdim");
    if (cJSON_IsNumber(hd) && hd->valuedouble != (double)z->mb.head_dim)
        fg__model_unsure(m, "mamba_headdim", "unsure: key 'mamba_headdim' = %g, but "
                         "Zamba2Config sets it to mamba_expand x hidden_size / n_mamba_heads = "
                         "%llu: n_mamba_heads is missing or wrong for this checkpoint",
                         hd->valuedouble, (unsigned long long)z->mb.head_dim);
    else if (zyphra && !hd)
        fg__model_unsure(m, "mamba_headdim", "unsure: a config in Zyphra's pre-transformers "
                         "names without 'mamba_headdim' does not say its Mamba heads; "
                         "Zamba2Config builds n_mamba_heads = %llu: take a config saved by "
                         "transformers", (unsigned long long)z->mb.heads);
}

static int read_zamba2_cfg(const struct fg_cfg *c, struct fg_model *m, struct zamba2 *z,
                           struct fg_err *err)
{
    int rc;
    if ((rc = fg_cfg_u64(c, "vocab_size", 32000, 1, FG_MAX_VOCAB, &m->vocab, err)) ||
        (rc = fg_cfg_u64(c, "hidden_size", 2560, 1, FG_MAX_HIDDEN, &m->hidden, err)) ||
        (rc = fg_cfg_u64(c, "num_hidden_layers", 54, 1, FG_MAX_LAYERS, &m->layers, err)) ||
        (rc = fg_cfg_u64(c, "max_position_embeddings", 4096, 1, FG_MAX_POS, &m->max_pos, err)) ||
        (rc = fg_cfg_bool(c, "tie_word_embeddings", true, &m->tied, err)) ||
        (rc = fg_cfg_u64(c, "intermediate_size", 4 * m->hidden, 1, FG_MAX_INTER, &z->inter,
                         err)) ||
        (rc = fg_cfg_u64(c, "num_attention_heads", 32, 1, FG_MAX_HEADS, &z->heads, err)) ||
        (rc = fg_cfg_u64(c, "num_key_value_heads", z->heads, 1, FG_MAX_HEADS, &z->kv_heads,
                         err)) ||
        (rc = fg_cfg_u64(c, "num_mem_blocks", 1, 1, FG_MAX_LAYERS, &z->mem_blocks, err)) ||
        (rc = fg_cfg_u64(c, "adapter_rank", 128, 1, FG_MAX_HIDDEN, &z->rank, err)) ||
        (rc = fg_cfg_bool(c, "use_shared_attention_adapter", false, &z->attn_adapter, err)) ||
        (rc = fg_cfg_bool(c, "add_bias_linear", false, &z->bias, err)) ||
        (rc = fg_cfg_f64(c, "mamba_expand", 2.0, 0.01, 64.0, &z->expand, err)) ||
        (rc = fg_cfg_u64(c, "n_mamba_heads", 8, 1, FG_MAX_INTER, &z->mb.heads, err)) ||
        (rc = fg_cfg_u64(c, "mamba_ngroups", 1, 1, FG_MAX_HEADS, &z->mb.groups, err)) ||
        (rc = fg_cfg_u64(c, "mamba_d_state", 64, 1, 1u << 14, &z->mb.state, err)) ||
        (rc = fg_cfg_u64(c, "mamba_d_conv", 4, 1, 1024, &z->mb.kernel, err)) ||
        (rc = fg_cfg_u64(c, "chunk_size", 256, 1, FG_MAX_POS, &z->mb.chunk, err)))
        return rc;
    /* Zamba2Config: attention_hidden_size = 2 x hidden, attention_head_dim = 2 x hidden /
     * heads, set after the kwargs (a config.json value does not override them) */
    if ((2 * m->hidden) % z->heads || z->heads % z->kv_heads)
        return fg_err_set(err, FG_E_RANGE, "%s: 2 x hidden_size %llu must divide into "
                          "num_attention_heads %llu, a multiple of num_key_value_heads %llu",
                          c->origin, (unsigned long long)(2 * m->hidden),
                          (unsigned long long)z->heads, (unsigned long long)z->kv_heads);
    z->head_dim = 2 * m->hidden / z->heads;
    uint64_t inner = (uint64_t)(z->expand * (double)m->hidden);
    if (!inner || inner % z->mb.heads)
        return fg_err_set(err, FG_E_RANGE, "%s: the Mamba-2 inner width %llu (mamba_expand x "
                          "hidden_size) is not a multiple of n_mamba_heads %llu", c->origin,
                          (unsigned long long)inner, (unsigned long long)z->mb.heads);
    z->mb.hidden = m->hidden;
    z->mb.head_dim = inner / z->mb.heads;
    z->mb.conv_bias = true; /* Zamba2MambaMixer: conv1d bias=True whatever use_conv_bias */
    z->mb.proj_bias = z->bias;
    m->heads = z->heads;
    m->kv_heads = z->kv_heads;
    m->head_dim = z->head_dim;
    m->inter = z->inter;
    z->attn_in = 2 * m->hidden;
    return read_kinds(c, false, m->layers, z->kind, err);
}

/*
 * The shared transformer of one call (Zamba2AttentionDecoderLayer / ZambaAttentionDecoderLayer):
 * input_layernorm over the 2 x hidden concatenation of the stream and the embeddings,
 * attention (q / k / v 2 hidden -> heads / kv heads x head_dim, o back to hidden, no bias),
 * pre_ff_layernorm, Zamba2MLP (gate_up_proj hidden -> 2 I and down_proj, bias
 * add_bias_linear) or ZambaMLP (gate / up / down, no bias).  shared:
 * the block's weights are stored here (its first call); the call's adapters always are:
 * q / k / v (2h -> r -> 2h each) under use_shared_attention_adapter, gate_up (h -> r -> 2 I)
 * always (Zamba2MLP builds gate_up_proj_adapter_list unconditionally).
 */
static int add_shared_call(struct fg_model *m, int32_t li, const struct zamba2 *z, bool shared,
                           struct fg_err *err)
{
    uint64_t h = m->hidden, h2 = z->attn_in, r = z->rank;
    const struct fg_attn_shape a = {.hidden = h2, .heads = z->heads, .kv_heads = z->kv_heads,
                                    .head_dim = z->head_dim};
    const struct fg_mlp_shape f = {.hidden = h, .inter = z->inter, .gated = true,
                                   .bias = z->bias, .fused_gate_up = !z->v1};
    size_t first = m->n_nodes;
    struct fg_node *an, *fn;
    int rc;
    if ((rc = fg__add_norm(m, li, "Norm", h2, FG_NORM_RMS, err)) ||
        (rc = fg__add_attention(m, li, &a, &an, err)))
        return rc;
    /* o_proj writes hidden, not the 2 x hidden the block reads */
    an->params -= an->lin[3].out * (uint64_t)an->lin[3].in - (uint64_t)an->lin[3].in * h;
    an->lin[3].out = (uint32_t)h;
    an->width = (uint32_t)h;
    if ((rc = fg__add_norm(m, li, "Norm", h, FG_NORM_RMS, err)) ||
        (rc = fg__add_mlp(m, li, &f, &fn, err)))
        return rc;
    if (!shared)
        for (size_t i = first; i < m->n_nodes; i++)
            m->nodes[i].params = 0;
    if (z->v1)
        return 0;
    if (z->attn_adapter)
        an->params += 3 * (h2 * r + r * h2);
    fn->params += h * r + r * 2 * z->inter;
    return 0;
}

static int build_zamba(struct fg_model *m, const struct zamba2 *z, struct fg_err *err)
{
    int rc;
    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)))
        return rc;
    uint64_t calls = 0;
    for (uint64_t l = 0; l < m->layers; l++) {
        int32_t li = (int32_t)l;
        if (z->kind[l] == ZB_HYBRID) {
            /* blocks are cycled: call k runs block k % num_mem_blocks */
            if ((rc = add_shared_call(m, li, z, calls < z->mem_blocks, err)))
                return rc;
            calls++;
            /* the hybrid layer's linear: Linear(hidden, hidden, bias=False) */
            struct fg_node *n = fg__model_add_block(m, FG_NODE_OTHER, li, "Linear", err);
            if (!n)
                return FG_E_NOMEM;
            fg__node_linear(n, "linear", m->hidden, m->hidden, 1, false);
            n->hidden = n->width = (uint32_t)m->hidden;
            fg__fmt(n->desc, sizeof n->desc, "%llu x %llu", (unsigned long long)m->hidden,
                    (unsigned long long)m->hidden);
        }
        /* the Mamba decoder layer: input_layernorm and the mixer */
        if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)) ||
            (rc = z->v1 ? fg__add_mamba1(m, li, &z->m1, err) : fg__add_mamba2(m, li, &z->mb, err)))
            return rc;
    }
    if (calls > z->mem_blocks)
        fg__model_rule(m, "shared transformer blocks stored once", 0);
    if ((rc = fg__add_norm(m, -1, "Final norm", m->hidden, FG_NORM_RMS, err)))
        return rc;
    return fg__add_head(m, m->vocab, m->hidden, m->tied, false, false, err);
}

int fg__ssm_read_zamba2(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                        struct fg_err *err)
{
    (void)spec;
    struct zamba2 z = {0};
    int rc = read_zamba2_cfg(c, m, &z, err);
    if (!rc)
        doubt_zyphra_keys(c, m, &z);
    return rc ? rc : build_zamba(m, &z, err);
}

/*
 * ZambaConfig (configuration_zamba.py @0381c337): attention_hidden_size 2 x hidden and
 * attention_head_dim 2 x hidden / heads unless set, num_key_value_heads = heads when null,
 * mamba_expand x hidden split over n_mamba_heads, mamba_dt_rank "auto" = ceil(hidden / 16),
 * mamba_conv_bias / mamba_proj_bias; tie_word_embeddings default true.
 */
static int read_zamba_cfg(const struct fg_cfg *c, struct fg_model *m, struct zamba2 *z,
                          struct fg_err *err)
{
    double expand;
    uint64_t mheads;
    int rc;
    z->v1 = true;
    z->mem_blocks = 1;
    if ((rc = fg_cfg_u64(c, "vocab_size", 32000, 1, FG_MAX_VOCAB, &m->vocab, err)) ||
        (rc = fg_cfg_u64(c, "hidden_size", 3712, 1, FG_MAX_HIDDEN, &m->hidden, err)) ||
        (rc = fg_cfg_u64(c, "num_hidden_layers", 76, 1, FG_MAX_LAYERS, &m->layers, err)) ||
        (rc = fg_cfg_u64(c, "max_position_embeddings", 4096, 1, FG_MAX_POS, &m->max_pos, err)) ||
        (rc = fg_cfg_bool(c, "tie_word_embeddings", true, &m->tied, err)) ||
        (rc = fg_cfg_u64(c, "intermediate_size", 14848, 1, FG_MAX_INTER, &z->inter, err)) ||
        (rc = fg_cfg_u64(c, "num_attention_heads", 16, 1, FG_MAX_HEADS, &z->heads, err)) ||
        (rc = fg_cfg_u64(c, "num_key_value_heads", z->heads, 1, FG_MAX_HEADS, &z->kv_heads,
                         err)) ||
        (rc = fg_cfg_u64(c, "attention_hidden_size", 2 * m->hidden, 1, FG_MAX_HIDDEN,
                         &z->attn_in, err)) ||
        (rc = fg_cfg_u64(c, "attention_head_dim", 2 * m->hidden / z->heads, 1, 1u << 14,
                         &z->head_dim, err)) ||
        (rc = fg_cfg_f64(c, "mamba_expand", 2.0, 0.01, 64.0, &expand, err)) ||
        (rc = fg_cfg_u64(c, "n_mamba_heads", 2, 1, FG_MAX_INTER, &mheads, err)) ||
        (rc = fg_cfg_u64(c, "mamba_d_state", 16, 1, 1u << 14, &z->m1.state, err)) ||
        (rc = fg_cfg_u64(c, "mamba_d_conv", 4, 1, 1024, &z->m1.kernel, err)) ||
        (rc = fg_cfg_bool(c, "mamba_conv_bias", true, &z->m1.conv_bias, err)) ||
        (rc = fg_cfg_bool(c, "mamba_proj_bias", false, &z->m1.proj_bias, err)) ||
        (rc = fg__ssm_read_dt_rank(c, "mamba_dt_rank", m->hidden, &z->m1.dt_rank, err)))
        return rc;
    z->m1.hidden = m->hidden;
    z->m1.inner = (uint64_t)(expand * (double)m->hidden);
    if (!z->m1.inner || z->m1.inner % mheads || z->heads % z->kv_heads)
        return fg_err_set(err, FG_E_RANGE, "%s: the Mamba width %llu (mamba_expand x "
                          "hidden_size) must divide into n_mamba_heads %llu, and "
                          "num_attention_heads %llu into num_key_value_heads %llu", c->origin,
                          (unsigned long long)z->m1.inner, (unsigned long long)mheads,
                          (unsigned long long)z->heads, (unsigned long long)z->kv_heads);
    m->heads = z->heads;
    m->kv_heads = z->kv_heads;
    m->head_dim = z->head_dim;
    m->inter = z->inter;
    return read_kinds(c, true, m->layers, z->kind, err);
}

int fg__ssm_read_zamba(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                       struct fg_err *err)
{
    (void)spec;
    struct zamba2 z = {0};
    int rc = read_zamba_cfg(c, m, &z, err);
    return rc ? rc : build_zamba(m, &z, err);
}
