/*
 * dbrx_jetmoe_minimax.c - causal-LM families whose blocks the table readers do not build, each read
 * from its transformers modeling file (the commit read is named at each reader):
 *
 *   dbrx            DbrxForCausalLM          models/dbrx/modeling_dbrx.py (DBRX Base/Instruct)
 *   hunyuan_v1_moe  HunYuanMoEV1ForCausalLM  models/hunyuan_v1_moe/modular_hunyuan_v1_moe.py
 *                                            (Hunyuan-A13B)
 *   jetmoe          JetMoeForCausalLM        models/jetmoe/modeling_jetmoe.py (JetMoE-8B)
 *   lfm2_moe        Lfm2MoeForCausalLM       models/lfm2_moe/modular_lfm2_moe.py (LFM2-8B-A1B)
 *   minimax         MiniMaxForCausalLM       models/minimax/modular_minimax.py
 *                                            (MiniMax-Text-01-hf); the remote-code
 *                                            minimax_text_01 / minimax_m1 read alike
 *
 * Each resolves its config into the shapes of one block and builds the blocks with the
 * shared ones of blocks.c (and nemotron_h_lfm2_qwen3_next.c's short convolution); a block whose inputs
 * equal the one before is a copy of it.
 */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "arch/arch.h"
#include "arch/hybrid/nemotron_h_lfm2_qwen3_next.h"
#include "util/fmt.h"

/* FG_E_RANGE when heads is not a multiple of kv (the key names the config spells). */
static int check_kv(const struct fg_cfg *c, uint64_t heads, uint64_t kv, const char *key,
                    struct fg_err *err)
{
    if (kv && heads % kv == 0)
        return 0;
    return fg_err_set(err, FG_E_RANGE, "%s: %llu attention heads are not a multiple of key '%s' "
                      "= %llu", c->origin, (unsigned long long)heads, key, (unsigned long long)kv);
}

/* The final norm and the LM head (no bias) behind the blocks. */
static int add_tail(struct fg_model *m, enum fg_norm_kind norm, bool tied, struct fg_err *err)
{
    int rc = fg__add_norm(m, -1, "Final norm", m->hidden, norm, err);
    return rc ? rc : fg__add_head(m, m->vocab, m->hidden, tied, false, false, err);
}

/* ---- DBRX ------------------------------------------------------------------ */

struct dbrx_block {
    struct fg_attn_shape a;
    struct fg_moe_shape f;
};

/* DbrxBlock: norm_1, attention, norm_2, ffn. */
static int add_dbrx_block(struct fg_model *m, int32_t li, const void *ctx, struct fg_err *err)
{
    const struct dbrx_block *b = ctx;
    int rc;
    if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_LN_NOBIAS, err)) ||
        (rc = fg__add_attention(m, li, &b->a, NULL, err)) ||
        (rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_LN_NOBIAS, err)))
        return rc;
    return fg__add_moe(m, li, &b->f, NULL, err);
}

/* DbrxAttentionConfig and DbrxFFNConfig are PretrainedConfig subclasses (configuration_dbrx.py
 * before the @strict rewrite): a config saved by transformers 4.3x-4.4x writes the base class's
 * attributes into each sub-dict, tie_word_embeddings (true by default) among them, as the
 * mlx-community/dbrx-instruct-4bit repack does.  DbrxForCausalLM ties on the top-level key
 * alone, so the sub-dict's copy is read here and left alone. */
static int skip_base_tie(const struct fg_cfg *sub, struct fg_err *err)
{
    bool ignored;
    return fg_cfg_bool(sub, "tie_word_embeddings", false, &ignored, err);
}

/*
 * DbrxForCausalLM (huggingface/transformers@00491cee models/dbrx/modeling_dbrx.py; config
 * @032b32ab configuration_dbrx.py).  DbrxBlock: norm_attn_norm = norm_1 LayerNorm(d_model,
 * bias=False), DbrxAttention Wqkv d_model -> d_model + 2 x kv_n_heads x head_dim and
 * out_proj, no bias, norm_2 LayerNorm(bias=False); ffn = DbrxRouter layer Linear(d_model,
 * moe_num_experts, bias=False) and DbrxExpertGLU w1 / v1 / w2, each (moe_num_experts x
 * ffn_hidden_size, d_model).  norm_f LayerNorm(bias=False), lm_head untied (DbrxConfig
 * refuses tie_word_embeddings).  The sizes of attention and experts are in the attn_config
 * and ffn_config sub-dicts (DbrxAttentionConfig / DbrxFFNConfig defaults when absent).
 */
static int read_dbrx(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                     struct fg_err *err)
{
    (void)spec;
    static const struct fg_core_defaults d = {.vocab = 32000, .hidden = 2048, .layers = 24,
                                              .heads = 16, .max_pos = 2048, .tie = false};
    struct fg_cfg ac = {0}, fc = {0};
    struct fg_err e = {0};
    uint64_t kv = 1, ffn = 3584, experts = 4, top_k = 1;
    int rc;
    if ((rc = fg__read_core(c, m, &d, err)))
        return rc;
    if (m->tied)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'tie_word_embeddings' is true, which "
                          "DbrxConfig refuses (DBRX stores its own lm_head)", c->origin);
    bool has_attn = fg_cfg_child(c, "attn_config", &ac, &e);
    if (e.code || (!has_attn && fg_cfg_has(c, "attn_config")))
        return fg_err_set(err, FG_E_TYPE, "%s: key 'attn_config' is not an object",
                          c->origin);
    bool has_ffn = fg_cfg_child(c, "ffn_config", &fc, &e);
    if (e.code || (!has_ffn && fg_cfg_has(c, "ffn_config")))
        return fg_err_set(err, FG_E_TYPE, "%s: key 'ffn_config' is not an object", c->origin);
    if ((has_attn && (rc = fg_cfg_u64(&ac, "kv_n_heads", 1, 1, FG_MAX_HEADS, &kv, err))) ||
        (has_ffn && ((rc = fg_cfg_u64(&fc, "ffn_hidden_size", 3584, 1, FG_MAX_INTER, &ffn, err)) ||
                     (rc = fg_cfg_u64(&fc, "moe_num_experts", 4, 1, FG_MAX_EXPERTS, &experts,
                                      err)) ||
                     (rc = fg_cfg_u64(&fc, "moe_top_k", 1, 1, FG_MAX_EXPERTS, &top_k, err)))))
        return rc;
    if ((rc = check_kv(c, m->heads, kv, "attn_config.kv_n_heads", err)) ||
        (has_attn && (rc = skip_base_tie(&ac, err))) || (has_ffn && (rc = skip_base_tie(&fc, err))))
        return rc;
    if (top_k > experts)
        return fg_err_set(err, FG_E_RANGE, "%s: ffn_config.moe_top_k %llu is more than the %llu "
                          "experts (ffn_config.moe_num_experts)", c->origin,
                          (unsigned long long)top_k, (unsigned long long)experts);
    m->kv_heads = kv;
    m->head_dim = m->hidden / m->heads;
    m->inter = ffn;
    m->experts = experts;
    m->top_k = top_k;

    const struct dbrx_block b = {
        .a = {.hidden = m->hidden, .heads = m->heads, .kv_heads = kv, .head_dim = m->head_dim,
              .fused_qkv = true},
        .f = {.hidden = m->hidden, .experts = experts, .top_k = top_k, .inter = ffn,
              .gated = true, .lora_experts = FG_LORA_EXPERTS_NONE}};
    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)) ||
        (rc = fg__add_layers(m, m->layers, add_dbrx_block, &b, err)))
        return rc;
    return add_tail(m, FG_NORM_LN_NOBIAS, false, err);
}

/* ---- HunYuan MoE ------------------------------------------------------------- */

/* The remote-code keys transformers' class does not read: unsure where they would size the
 * experts or the shared MLP otherwise than intermediate_size and one shared MLP.  The remote
 * code itself (remote) sizes the shared MLP from num_shared_expert and leaves
 * moe_intermediate_size unread: one that differs says another remote code reads it. */
static void hunyuan_check_remote_keys(const struct fg_cfg *c, struct fg_model *m, bool remote)
{
    static const struct {
        const char *key;
        uint64_t want_of_inter; /* 1: equals intermediate_size; 0: equals 1 */
    } keys[] = {{"moe_intermediate_size", 1}, {"num_shared_expert", 0}};
    for (size_t i = 0; i < (remote ? 1 : sizeof keys / sizeof keys[0]); i++) {
        const cJSON *v = fg__cfg_item(c, keys[i].key), *x;
        uint64_t want = keys[i].want_of_inter ? m->inter : 1;
        bool same = true;
        if (cJSON_IsNumber(v))
            same = v->valuedouble == (double)want;
        else if (cJSON_IsArray(v)) {
            cJSON_ArrayForEach(x, v) {
                same = same && cJSON_IsNumber(x) && x->valuedouble == (double)want;
            }
        }
        if (v && !cJSON_IsNull(v) && !same)
            fg__model_unsure(m, keys[i].key, "unsure: key '%s' differs from what "
                             "HunYuanMoEV1Moe builds (experts and one shared MLP of "
                             "intermediate_size): the remote code would size them otherwise",
                             keys[i].key);
    }
}

/*
 * HunYuanMoEV1ForCausalLM (huggingface/transformers@05bf8f64 modular_hunyuan_v1_moe.py;
 * config @008cd60e).  LlamaModel blocks: HunYuanMoEV1Attention = LlamaAttention
 * (attention_bias on q/k/v/o) plus query_layernorm / key_layernorm over head_dim;
 * HunYuanMoE in every layer: gate wg Linear(hidden, num_experts, bias=False), num_experts
 * experts and one shared_mlp, each a gated MLP of intermediate_size without bias.
 * num_experts and moe_topk are an integer or a list per layer.  HunYuanMoEV1Config
 * defaults; hunyuan_v1_moe maps to qwen2_moe in transformers' conversion table.
 *
 * The remote code the release ships (model_type hunyuan; Tencent-Hunyuan/Hunyuan-A13B@2798f3c8
 * models/modeling_hunyuan.py) builds the same blocks from its own switches: query_layernorm /
 * key_layernorm only under use_qk_norm, the shared_mlp only under use_mixed_mlp_moe and
 * intermediate_size x num_shared_expert[0] wide (HunYuanMLP), experts of intermediate_size
 * (moe_intermediate_size is not read).  use_cla (cross-layer K/V) and use_mla change the
 * attention this reader builds, so either makes the count unsure.
 */
struct hunyuan_spec {
    bool remote; /* the release's remote code (model_type hunyuan), not transformers' class */
};
static const struct hunyuan_spec hunyuan_remote = {.remote = true};

/* The remote code's switches: q/k norms, the shared MLP's width (0 = none); CLA / MLA unsure. */
static int hunyuan_remote_switches(const struct fg_cfg *c, struct fg_model *m, bool *qk_norm,
                                   uint64_t *shared_inter, struct fg_err *err)
{
    uint64_t shared[FG_MAX_LAYERS];
    bool mixed = false, cla = false, mla = false;
    int rc;
    if ((rc = fg_cfg_bool(c, "use_qk_norm", false, qk_norm, err)) ||
        (rc = fg_cfg_bool(c, "use_mixed_mlp_moe", false, &mixed, err)) ||
        (rc = fg_cfg_bool(c, "use_cla", false, &cla, err)) ||
        (rc = fg_cfg_bool(c, "use_mla", false, &mla, err)) ||
        (rc = fg_cfg_u64_per_layer(c, "num_shared_expert", 1, 1, FG_MAX_EXPERTS, m->layers,
                                   shared, FG_MAX_LAYERS, err)))
        return rc;
    *shared_inter = mixed ? m->inter * shared[0] : 0;
    if (cla || mla)
        fg__model_unsure(m, cla ? "use_cla" : "use_mla", "unsure: key '%s' is true: the "
                         "remote code then shares or compresses the K/V projections, which "
                         "this reader does not build", cla ? "use_cla" : "use_mla");
    return 0;
}

static int read_hunyuan_moe(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                            struct fg_err *err)
{
    const struct hunyuan_spec *s = spec;
    bool remote = s && s->remote, qk_norm = true;
    static const struct fg_core_defaults d = {.vocab = 290943, .hidden = 4096, .inter = 11008,
                                              .layers = 32, .heads = 32, .max_pos = 2048,
                                              .tie = false};
    uint64_t experts[FG_MAX_LAYERS], top_k[FG_MAX_LAYERS], shared_inter = 0;
    bool bias = false;
    int rc;
    if ((rc = fg__read_core(c, m, &d, err)) ||
        (rc = fg_cfg_bool(c, "attention_bias", false, &bias, err)) ||
        (rc = fg_cfg_u64_per_layer(c, "num_experts", 1, 1, FG_MAX_EXPERTS, m->layers, experts,
                                   FG_MAX_LAYERS, err)) ||
        (rc = fg_cfg_u64_per_layer(c, "moe_topk", 1, 1, FG_MAX_EXPERTS, m->layers, top_k,
                                   FG_MAX_LAYERS, err)))
        return rc;
    for (uint64_t l = 0; l < m->layers; l++)
        if (top_k[l] > experts[l])
            return fg_err_set(err, FG_E_RANGE, "%s: key 'moe_topk' %llu is more than the %llu "
                              "experts of layer %llu (num_experts)", c->origin,
                              (unsigned long long)top_k[l], (unsigned long long)experts[l],
                              (unsigned long long)l);
    shared_inter = m->inter;
    if (remote && (rc = hunyuan_remote_switches(c, m, &qk_norm, &shared_inter, err)))
        return rc;
    hunyuan_check_remote_keys(c, m, remote);
    m->experts = experts[0];
    m->top_k = top_k[0];
    const struct fg_attn_shape a = {.hidden = m->hidden, .heads = m->heads,
                                    .kv_heads = m->kv_heads, .head_dim = m->head_dim,
                                    .qkv_bias = bias, .o_bias = bias, .qk_norm = qk_norm ? 1 : 0,
                                    .qk_norm_kind = FG_NORM_RMS};
    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)))
        return rc;
    size_t first = 0;
    for (uint64_t l = 0; l < m->layers; l++) {
        int32_t li = (int32_t)l;
        uint64_t k = 0;
        while (l > 0 && l + k < m->layers && experts[l + k] == experts[l - 1] &&
               top_k[l + k] == top_k[l - 1])
            k++;
        if (k && fg__model_repeat_block(m, first, li, (uint32_t)k)) {
            l += k - 1;
            continue;
        }
        first = m->n_nodes;
        const struct fg_moe_shape f = {
            .hidden = m->hidden, .experts = experts[l], .top_k = top_k[l], .inter = m->inter,
            .shared_inter = shared_inter, .shared_n = shared_inter ? 1 : 0, .gated = true,
            .lora_experts = FG_LORA_EXPERTS_MERGED};
        if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)) ||
            (rc = fg__add_attention(m, li, &a, NULL, err)) ||
            (rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)) ||
            (rc = fg__add_moe(m, li, &f, NULL, err)))
            return rc;
    }
    return add_tail(m, FG_NORM_RMS, m->tied, err);
}

/* ---- JetMoE ------------------------------------------------------------------ */

/*
 * JetMoeAttention's mixture of attention heads (JetMoeMoA): router layer Linear(hidden,
 * experts, bias=False); input_linear (experts, kv_heads x kv_channels, hidden) the queries
 * of each expert, output_linear (experts, hidden, kv_heads x kv_channels) its output, bias
 * (hidden); kv_proj Linear(hidden, 2 x kv_heads x kv_channels, bias=False) shared by all.
 * top_k experts run per token, so a token attends with kv_heads x top_k query heads.
 */
static int add_moa(struct fg_model *m, int32_t layer, uint64_t experts, uint64_t top_k,
                   struct fg_err *err)
{
    struct fg_node *n = fg__model_add_block(m, FG_NODE_ATTN, layer, "Attention", err);
    if (!n)
        return FG_E_NOMEM;
    uint64_t h = m->hidden, kvp = m->kv_heads * m->head_dim;
    fg__node_linear(n, "router", h, experts, 1, false);
    fg__node_linear(n, "q", h, kvp, experts, false);
    fg__node_linear(n, "kv", h, 2 * kvp, 1, false);
    fg__node_linear(n, "o", kvp, h, experts, false);
    n->params += h;
    n->hidden = (uint32_t)h;
    n->width = (uint32_t)h;
    n->heads = (uint32_t)m->heads;
    n->kv_heads = (uint32_t)m->kv_heads;
    n->head_dim = (uint32_t)m->head_dim;
    n->v_head_dim = (uint32_t)m->head_dim;
    n->eager_bytes = 6; /* eager attention, as fg__add_attention */
    fg__fmt(n->desc, sizeof n->desc, "MoA %llu experts top-%llu, %llukv x%llu",
            (unsigned long long)experts, (unsigned long long)top_k,
            (unsigned long long)m->kv_heads, (unsigned long long)m->head_dim);
    return 0;
}

/* JetMoeBlock: input_layernorm, attention, post_attention_layernorm, MoE (ctx its shape). */
static int add_jetmoe_block(struct fg_model *m, int32_t li, const void *ctx, struct fg_err *err)
{
    struct fg_node *moe;
    int rc;
    if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)) ||
        (rc = add_moa(m, li, m->experts, m->top_k, err)) ||
        (rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)) ||
        (rc = fg__add_moe(m, li, ctx, &moe, err)))
        return rc;
    moe->params += m->hidden; /* JetMoeMoE.bias */
    return 0;
}

/*
 * JetMoeForCausalLM (huggingface/transformers@00dcc6dd models/jetmoe/modeling_jetmoe.py;
 * config @05cd1ec1).  JetMoeBlock: input_layernorm, JetMoeAttention (add_moa),
 * post_attention_layernorm, JetMoeMoE: router Linear(hidden, num_local_experts),
 * input_linear (experts, 2 x intermediate_size, hidden) - gate and up in one -,
 * output_linear (experts, hidden, intermediate_size), bias (hidden).  RMSNorms, tied head
 * by default.  JetMoeConfig sets num_attention_heads = num_key_value_heads x
 * num_experts_per_tok and head_dim = kv_channels.
 */
static int read_jetmoe(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                       struct fg_err *err)
{
    (void)spec;
    static const struct fg_core_defaults d = {.vocab = 32000, .hidden = 2048, .inter = 5632,
                                              .layers = 12, .heads = 32, .max_pos = 4096,
                                              .tie = true};
    uint64_t kv, kvch, experts, top_k;
    int rc;
    if ((rc = fg__read_core(c, m, &d, err)) ||
        (rc = fg_cfg_u64(c, "num_key_value_heads", 16, 1, FG_MAX_HEADS, &kv, err)) ||
        (rc = fg_cfg_u64(c, "kv_channels", 128, 1, 1u << 14, &kvch, err)) ||
        /* the JetMoE repository's first configs spell them moe_num_experts / moe_top_k */
        (rc = fg_cfg_u64(c, "num_local_experts|moe_num_experts", 8, 1, FG_MAX_EXPERTS,
                         &experts, err)) ||
        (rc = fg_cfg_u64(c, "num_experts_per_tok|moe_top_k", 2, 1, FG_MAX_EXPERTS, &top_k,
                         err)))
        return rc;
    if ((rc = fg__check_top_k(c, top_k, "num_experts_per_tok", experts, "num_local_experts",
                              err)))
        return rc;
    m->kv_heads = kv;
    m->heads = kv * top_k;
    m->head_dim = kvch;
    m->experts = experts;
    m->top_k = top_k;
    const struct fg_moe_shape f = {.hidden = m->hidden, .experts = experts, .top_k = top_k,
                                   .inter = m->inter, .gated = true, .fused_gate_up = true,
                                   .lora_experts = FG_LORA_EXPERTS_NONE};
    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)) ||
        (rc = fg__add_layers(m, m->layers, add_jetmoe_block, &f, err)))
        return rc;
    return add_tail(m, FG_NORM_RMS, m->tied, err);
}

/* ---- LFM2-MoE ---------------------------------------------------------------- */

/* Lfm2MoeConfig.layer_types. */
static const struct hy_kind_name lfm2_moe_kinds[] = {
    {0, "full_attention", NULL, HY_ATTN},
    {0, "conv", NULL, HY_CONV},
    {0, NULL, NULL, 0},
};

/*
 * Lfm2MoeForCausalLM (huggingface/transformers@0c67e26d modular_lfm2_moe.py; config
 * @06053b84).  Lfm2MoeDecoderLayer: operator_norm, Lfm2Attention (q_layernorm /
 * k_layernorm over head_dim, no bias) or Lfm2ShortConv by layer_types, ffn_norm, then
 * Lfm2MoeMLP (w1 / w3 / w2 of intermediate_size, as given) below num_dense_layers, else
 * Lfm2MoeSparseMoeBlock: gate Linear(hidden, num_experts, bias=False), Qwen2MoeExperts
 * (gate_up_proj and down_proj of moe_intermediate_size) and, with use_expert_bias, the
 * expert_bias buffer (num_experts, fp32).  embedding_norm is the final norm.
 * Lfm2MoeConfig defaults (8 key/value heads, tied).
 */
static int read_lfm2_moe(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                         struct fg_err *err)
{
    (void)spec;
    static const struct fg_core_defaults d = {.vocab = 65536, .hidden = 2048, .inter = 7168,
                                              .layers = 32, .heads = 32, .max_pos = 128000,
                                              .tie = true};
    uint64_t kernel, dense, experts, top_k, moe_inter;
    bool conv_bias, expert_bias, tie;
    enum hy_kind kinds[FG_MAX_LAYERS];
    size_t nk = 0;
    int rc;
    if ((rc = fg__read_core(c, m, &d, err)) || (rc = fg__hy_read_kv_heads(c, m, 8, err)) ||
        (rc = fg_cfg_bool(c, "tie_word_embeddings|tie_embedding", true, &tie, err)) ||
        (rc = fg_cfg_u64(c, "conv_L_cache", 3, 1, 1024, &kernel, err)) ||
        (rc = fg_cfg_bool(c, "conv_bias", false, &conv_bias, err)) ||
        (rc = fg_cfg_u64(c, "num_dense_layers", 2, 0, m->layers, &dense, err)) ||
        (rc = fg_cfg_u64(c, "num_experts", 32, 1, FG_MAX_EXPERTS, &experts, err)) ||
        (rc = fg_cfg_u64(c, "num_experts_per_tok", 4, 1, FG_MAX_EXPERTS, &top_k, err)) ||
        (rc = fg_cfg_u64(c, "moe_intermediate_size", 1792, 1, FG_MAX_INTER, &moe_inter, err)) ||
        (rc = fg_cfg_bool(c, "use_expert_bias", true, &expert_bias, err)) ||
        (rc = fg__hy_read_kind_list(c, "layer_types", "layer_types", lfm2_moe_kinds, m->layers,
                                    kinds, &nk, err)))
        return rc;
    if (!nk)
        return fg_err_set(err, FG_E_MISSING, "%s: key 'layer_types' is missing: "
                          "Lfm2MoeDecoderLayer picks attention or convolution from it, layer "
                          "by layer", c->origin);
    if ((rc = fg__check_top_k(c, top_k, "num_experts_per_tok", experts, "num_experts", err)))
        return rc;
    m->tied = tie;
    m->experts = experts;
    m->top_k = top_k;
    const struct fg_attn_shape a = {.hidden = m->hidden, .heads = m->heads,
                                    .kv_heads = m->kv_heads, .head_dim = m->head_dim,
                                    .qk_norm = 1, .qk_norm_kind = FG_NORM_RMS};
    const struct fg_mlp_shape f = {.hidden = m->hidden, .inter = m->inter, .gated = true};
    const struct fg_moe_shape e = {.hidden = m->hidden, .experts = experts, .top_k = top_k,
                                   .inter = moe_inter, .gated = true, .fused_gate_up = true,
                                   .score_bias = expert_bias,
                                   .lora_experts = FG_LORA_EXPERTS_NONE};
    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)))
        return rc;
    for (uint64_t l = 0; l < m->layers; l++) {
        int32_t li = (int32_t)l;
        if ((rc = fg__hy_lfm2_mixer(m, li, kinds[l] == HY_ATTN, &a, kernel, conv_bias, err)))
            return rc;
        rc = l < dense ? fg__add_mlp(m, li, &f, NULL, err) : fg__add_moe(m, li, &e, NULL, err);
        if (rc)
            return rc;
    }
    return add_tail(m, FG_NORM_RMS, m->tied, err);
}

/* ---- MiniMax (Text-01) --------------------------------------------------------- */

/* MiniMaxConfig.layer_types. */
static const struct hy_kind_name minimax_kinds[] = {
    {0, "full_attention", NULL, HY_ATTN},
    {0, "linear_attention", NULL, HY_MAMBA},
    {0, NULL, NULL, 0},
};

/*
 * MiniMaxLightningAttention: qkv_proj hidden -> 3 x heads x head_dim, output_gate hidden ->
 * heads x head_dim, out_proj back, no bias; norm RMSNorm over heads x head_dim; and the
 * persistent buffers register_buffer makes (save_pretrained writes them): slope_rate
 * (heads, 1, 1), query_decay and key_decay (heads, block_size, 1), diagonal_decay (1,
 * heads, block_size, block_size).  Kept as a Mamba-2-kind node: its state, heads x head_dim
 * x head_dim per sequence, has that form with groups = heads and state = head_dim.
 */
static int add_lightning(struct fg_model *m, int32_t layer, uint64_t block, bool stored,
                         struct fg_err *err)
{
    struct fg_node *n = fg__model_add_block(m, FG_NODE_MAMBA2, layer, "Lightning", err);
    if (!n)
        return FG_E_NOMEM;
    uint64_t inner = m->heads * m->head_dim;
    uint64_t buffers =
        stored ? m->heads + 2 * m->heads * block + m->heads * block * block : 0;
    fg__node_linear(n, "in_proj", m->hidden, 3 * inner, 1, false);
    fg__node_linear(n, "gate", m->hidden, inner, 1, false);
    fg__node_linear(n, "out_proj", inner, m->hidden, 1, false);
    n->params += inner + buffers;
    n->buffers += buffers;
    n->hidden = (uint32_t)m->hidden;
    n->width = (uint32_t)m->hidden;
    n->ssm_heads = (uint32_t)m->heads;
    n->ssm_head_dim = (uint32_t)m->head_dim;
    n->groups = (uint32_t)m->heads;
    n->state = (uint32_t)m->head_dim;
    n->chunk = (uint32_t)block;
    fg__fmt(n->desc, sizeof n->desc, "lightning %llu heads x%llu, block %llu",
            (unsigned long long)m->heads, (unsigned long long)m->head_dim,
            (unsigned long long)block);
    return 0;
}

/* Which MiniMax layers attend with softmax: layer_types, else the original configs'
 * attn_type_list (1 softmax, 0 lightning), else MiniMaxConfig's alternation (even layers
 * attend). */
static int read_minimax_kinds(const struct fg_cfg *c, uint64_t layers, enum hy_kind *out,
                              struct fg_err *err)
{
    size_t n = 0;
    int rc = fg__hy_read_kind_list(c, "layer_types", "layer_types", minimax_kinds, layers, out,
                                   &n, err);
    if (rc || n)
        return rc;
    uint64_t list[FG_MAX_LAYERS];
    if ((rc = fg_cfg_u64_array(c, "attn_type_list", 0, 1, list, FG_MAX_LAYERS, &n, err)))
        return rc;
    if (n && n != layers)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'attn_type_list' has %zu entries for %llu "
                          "layers", c->origin, n, (unsigned long long)layers);
    for (uint64_t l = 0; l < layers; l++)
        out[l] = (n ? list[l] == 1 : (l + 1) % 2 != 0) ? HY_ATTN : HY_MAMBA;
    return 0;
}

/*
 * MiniMaxForCausalLM (huggingface/transformers@008e5743 models/minimax/modular_minimax.py,
 * MiniMax-Text-01-hf).  MiniMaxDecoderLayer: input_layernorm, MiniMaxAttention
 * (MixtralAttention: q/k/v/o without bias, head_dim) or MiniMaxLightningAttention by
 * layer_types, post_attention_layernorm, MiniMaxSparseMoeBlock (Mixtral: router
 * Linear(hidden, num_local_experts), experts gate_up / down of intermediate_size) in every
 * layer.  MiniMaxConfig defaults (8 key/value heads); minimax maps to mixtral in
 * transformers' conversion table.
 */
struct minimax_spec {
    bool decay_buffers;      /* the checkpoint stores the lightning decay buffers */
    bool remote;             /* the remote-code config (shared_intermediate_size) */
};

/* MiniMaxConfig: transformers' class registers the decay buffers as persistent, so what
 * save_pretrained writes (the -hf conversions) holds them. */
static const struct minimax_spec minimax_hf = {.decay_buffers = true};
/* The original remote-code releases (modeling_minimax_text_01.py, MiniMax-M1) store no
 * decay buffers: MiniMax-M1-40k and -80k publish 456,089,655,296 parameters, the modules
 * alone at Text-01's shapes (tests/test_arch_moe_families.c). */
static const struct minimax_spec minimax_remote = {.remote = true};

static int read_minimax(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                        struct fg_err *err)
{
    const struct minimax_spec *s = spec;
    static const struct fg_core_defaults d = {.vocab = 32000, .hidden = 4096, .inter = 14336,
                                              .layers = 32, .heads = 32, .max_pos = 4096 * 32,
                                              .tie = false};
    uint64_t experts, top_k, block;
    enum hy_kind kinds[FG_MAX_LAYERS];
    int rc;
    if ((rc = fg__read_core(c, m, &d, err)) || (rc = fg__hy_read_kv_heads(c, m, 8, err)) ||
        (rc = fg_cfg_u64(c, "num_local_experts|num_experts", 8, 1, FG_MAX_EXPERTS, &experts,
                         err)) ||
        (rc = fg_cfg_u64(c, "num_experts_per_tok", 2, 1, FG_MAX_EXPERTS, &top_k, err)) ||
        (rc = fg_cfg_u64(c, "block_size", 256, 1, 1u << 14, &block, err)) ||
        (rc = read_minimax_kinds(c, m->layers, kinds, err)))
        return rc;
    double shared = 0;
    if (s->remote && fg_cfg_form(c, "shared_intermediate_size", NULL) == FG_CFG_NUMBER &&
        !fg_cfg_f64(c, "shared_intermediate_size", 0, -1e300, 1e300, &shared, NULL) && shared != 0)
        fg__model_unsure(m, "shared_intermediate_size", "unsure: key "
                         "'shared_intermediate_size' = %g: a shared expert the MiniMax "
                         "reader does not build", shared);
    if ((rc = fg__check_top_k(c, top_k, "num_experts_per_tok", experts, "num_local_experts",
                              err)))
        return rc;
    m->experts = experts;
    m->top_k = top_k;
    uint64_t window[FG_MAX_LAYERS];
    if ((rc = fg__read_windows(c, m->layers, window, 0, false, err)))
        return rc;
    const struct fg_moe_shape f = {.hidden = m->hidden, .experts = experts, .top_k = top_k,
                                   .inter = m->inter, .gated = true, .fused_gate_up = true,
                                   .lora_experts = FG_LORA_EXPERTS_MERGED};
    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)))
        return rc;
    for (uint64_t l = 0; l < m->layers; l++) {
        int32_t li = (int32_t)l;
        const struct fg_attn_shape a = {.hidden = m->hidden, .heads = m->heads,
                                        .kv_heads = m->kv_heads, .head_dim = m->head_dim,
                                        .window = window[l]};
        if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)))
            return rc;
        rc = kinds[l] == HY_ATTN ? fg__add_attention(m, li, &a, NULL, err)
                                 : add_lightning(m, li, block, s->decay_buffers, err);
        if (rc || (rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)) ||
            (rc = fg__add_moe(m, li, &f, NULL, err)))
            return rc;
    }
    return add_tail(m, FG_NORM_RMS, m->tied, err);
}

const struct fg_arch fg__arch_dec_table[] = {
#include "arch/moe/dbrx_jetmoe_minimax.def"
    {0},
};
