/*
 * deepseek_v4.c - deepseek_v4: DeepseekV4ForCausalLM (huggingface/transformers@decba1d2ea
 * src/transformers/models/deepseek_v4/modeling_deepseek_v4.py, configuration_deepseek_v4.py).
 *
 * Not a variant of moe_mla.c's rows: the block keeps hc_mult residual streams mixed by two
 * hyper-connections (DeepseekV4HyperConnection), its attention is a shared-KV MQA with a
 * grouped low-rank output projection and, per layer type, a compressor of the keys (CSA with
 * a lightning indexer, HCA without), and every layer is a MoE whose first layers route by a
 * stored token -> expert table (DeepseekV4HashRouter).  One block here:
 *   HC (attn_hc), Norm, Attention, [Compressor], HC (ffn_hc), Norm, MoE
 * and after the blocks the hyper-head (DeepseekV4HyperHead), the final norm and the head.
 *
 * Keys -> shapes (DeepseekV4Config.__post_init__): layer_types, else the legacy per-layer
 * compress_ratios (0 sliding, 4 CSA, 128 HCA; a list longer than the layers is cut, as the
 * class cuts it: the released configs carry one entry more, the MTP layer's), else the
 * V4-Pro default; compress_rates (or compress_rate_csa / _hca) size the compressors'
 * position_bias; mlp_layer_types, else num_hash_layers (3) hash_moe layers first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "util/fmt.h"

/* DeepseekV4Config defaults; intermediate_size is the class's attribute_map alias of
 * moe_intermediate_size. */
static const struct fg_core_defaults dsv4_d = {
    .vocab = 129280, .hidden = 4096, .inter = 2048, .layers = 43, .heads = 64,
    .max_pos = 1048576, .tie = false, .kv_heads = 1, .head_dim = 512};

enum dsv4_attn { DSV4_SLIDING, DSV4_CSA, DSV4_HCA };

struct dsv4_cfg {
    uint64_t q_lora, o_groups, o_lora, idx_heads, idx_dim, hc, window;
    uint64_t rate_csa, rate_hca;
    uint64_t experts, top_k, moe_inter;
    bool mlp_bias;
    uint8_t attn[FG_MAX_LAYERS];     /* enum dsv4_attn */
    uint8_t mtp_attn;                /* the MTP block's: compress_ratios[layers], else sliding */
    bool hash[FG_MAX_LAYERS];        /* mlp_layer_types "hash_moe" */
};

/* ---- blocks ------------------------------------------------------------- */

/*
 * DeepseekV4HyperConnection: fn ((2 + hc) x hc, hc x hidden), base ((2 + hc) x hc), scale (3);
 * its input_norm holds no weight.  A table, not a linear: fn is an nn.Parameter peft does not
 * reach.
 */
static int add_hc(struct fg_model *m, int32_t layer, const struct dsv4_cfg *k, struct fg_err *err)
{
    struct fg_node *n = fg__model_add_block(m, FG_NODE_OTHER, layer, "HyperConnection", err);
    if (!n)
        return FG_E_NOMEM;
    uint64_t mix = (2 + k->hc) * k->hc;
    n->params = mix * k->hc * m->hidden + mix + 3;
    n->hidden = (uint32_t)m->hidden;
    n->width = (uint32_t)m->hidden;
    fg__fmt(n->desc, sizeof n->desc, "mHC %llu streams", (unsigned long long)k->hc);
    return 0;
}

/*
 * DeepseekV4Attention: q_a_proj hidden -> q_lora, q_a_norm, q_b_proj q_lora -> heads x
 * head_dim (q_b_norm holds no weight), kv_proj hidden -> head_dim (one KV head, read as key
 * and value), kv_norm, o_a_proj (DeepseekV4GroupedLinear: o_groups blocks of heads x
 * head_dim / o_groups -> o_lora_rank, stored as one (o_groups x o_lora) x (heads x head_dim /
 * o_groups) weight), o_b_proj o_groups x o_lora -> hidden, sinks (one per head).  No biases.
 */
static int add_attention(struct fg_model *m, int32_t layer, const struct dsv4_cfg *k,
                         uint8_t kind, struct fg_err *err)
{
    struct fg_node *n = fg__model_add_block(m, FG_NODE_ATTN, layer, "Attention", err);
    if (!n)
        return FG_E_NOMEM;
    uint64_t h = m->hidden, heads = m->heads, hd = m->head_dim;
    fg__node_linear(n, "q_a", h, k->q_lora, 1, false);
    fg__node_linear(n, "q_b", k->q_lora, heads * hd, 1, false);
    fg__node_linear(n, "kv", h, hd, 1, false);
    fg__node_linear(n, "o_a", heads * hd / k->o_groups, k->o_groups * k->o_lora, 1, false);
    fg__node_linear(n, "o_b", k->o_groups * k->o_lora, h, 1, false);
    n->params += k->q_lora + hd + heads; /* q_a_norm, kv_norm, sinks */
    n->eager_bytes = 6; /* eager-only (_supports_sdpa False): eager_attention_forward */
    n->hidden = (uint32_t)h;
    n->width = (uint32_t)h;
    n->heads = (uint32_t)heads;
    n->kv_heads = (uint32_t)m->kv_heads;
    n->head_dim = (uint32_t)hd;
    n->v_head_dim = (uint32_t)hd;
    n->q_lora = (uint32_t)k->q_lora;
    /* the sliding-window cache (DynamicSlidingWindowLayer) holds sliding_window tokens; a
     * compressed layer also attends to its compressed entries over the whole sequence,
     * which a window cannot say: it is counted as attending to all of it */
    n->window = kind == DSV4_SLIDING ? (uint32_t)k->window : 0;
    static const char *const kinds[] = {"sliding", "CSA", "HCA"};
    fg__fmt(n->desc, sizeof n->desc, "MQA %lluh x%llu, o %llux%llu, %s",
            (unsigned long long)heads, (unsigned long long)hd, (unsigned long long)k->o_groups,
            (unsigned long long)k->o_lora, kinds[kind]);
    return 0;
}

/*
 * The compressor of a CSA or HCA layer.  DeepseekV4HCACompressor: kv_proj and gate_proj
 * hidden -> head_dim, position_bias (rate x head_dim), kv_norm (head_dim).
 * DeepseekV4CSACompressor: the same at 2 x head_dim (two overlapping series) and its
 * DeepseekV4Indexer: kv_proj and gate_proj hidden -> 2 x index_head_dim, position_bias
 * (rate x 2 x index_head_dim), kv_norm (index_head_dim), q_b_proj q_lora -> index_n_heads x
 * index_head_dim, scorer.weights_proj hidden -> index_n_heads.
 */
static int add_compressor(struct fg_model *m, int32_t layer, const struct dsv4_cfg *k,
                          bool csa, struct fg_err *err)
{
    struct fg_node *n = fg__model_add_block(m, FG_NODE_OTHER, layer, "Compressor", err);
    if (!n)
        return FG_E_NOMEM;
    uint64_t h = m->hidden, hd = m->head_dim, series = csa ? 2 : 1;
    uint64_t rate = csa ? k->rate_csa : k->rate_hca;
    fg__node_linear(n, "cmp_kv", h, series * hd, 1, false);
    fg__node_linear(n, "cmp_gate", h, series * hd, 1, false);
    n->params += rate * series * hd + hd; /* position_bias, kv_norm */
    if (csa) {
        uint64_t id = k->idx_dim;
        fg__node_linear(n, "idx_kv", h, 2 * id, 1, false);
        fg__node_linear(n, "idx_gate", h, 2 * id, 1, false);
        fg__node_linear(n, "idx_q", k->q_lora, k->idx_heads * id, 1, false);
        fg__node_linear(n, "idx_w", h, k->idx_heads, 1, false);
        n->params += rate * 2 * id + id; /* indexer position_bias, kv_norm */
    }
    n->hidden = (uint32_t)h;
    n->width = (uint32_t)(series * hd);
    fg__fmt(n->desc, sizeof n->desc, "%s 1/%llu%s", csa ? "CSA" : "HCA",
            (unsigned long long)rate, csa ? " + indexer" : "");
    return 0;
}

/*
 * DeepseekV4SparseMoeBlock: gate (DeepseekV4TopKRouter: weight experts x hidden and the
 * e_score_correction_bias buffer; DeepseekV4HashRouter: weight and the persistent tid2eid
 * buffer vocab x top_k), experts (DeepseekV4Experts: gate_up_proj and down_proj, fused 3-D
 * parameters; transformers' conversion_mapping.py does not convert deepseek_v4 to the
 * mixtral / qwen2_moe layout, so peft's target names do not reach them), shared_experts (one
 * DeepseekV4MLP of moe_intermediate_size whatever n_shared_experts says, biased by mlp_bias).
 */
static int add_moe(struct fg_model *m, int32_t layer, const struct dsv4_cfg *k, bool hash,
                   struct fg_err *err)
{
    const struct fg_moe_shape s = {
        .hidden = m->hidden, .experts = k->experts, .top_k = k->top_k, .inter = k->moe_inter,
        .shared_inter = k->moe_inter, .shared_n = 1, .gated = true, .fused_gate_up = true,
        .score_bias = !hash, .lora_experts = FG_LORA_EXPERTS_NONE};
    struct fg_node *n;
    int rc;
    if ((rc = fg__add_moe(m, layer, &s, &n, err)))
        return rc;
    if (k->mlp_bias)
        n->params += 2 * k->moe_inter + m->hidden;
    if (hash) {
        n->params += m->vocab * k->top_k;
        n->buffers += m->vocab * k->top_k;
    }
    fg__fmt(n->desc, sizeof n->desc, "%llu experts top-%llu x%llu + 1 shared%s",
            (unsigned long long)k->experts, (unsigned long long)k->top_k,
            (unsigned long long)k->moe_inter, hash ? ", hash-routed" : "");
    return 0;
}

/* DeepseekV4DecoderLayer; kind and hash as the layer's types say. */
static int add_block(struct fg_model *m, int32_t li, const struct dsv4_cfg *k, uint8_t kind,
                     bool hash, struct fg_err *err)
{
    int rc;
    if ((rc = add_hc(m, li, k, err)) ||
        (rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)) ||
        (rc = add_attention(m, li, k, kind, err)) ||
        (kind != DSV4_SLIDING && (rc = add_compressor(m, li, k, kind == DSV4_CSA, err))) ||
        (rc = add_hc(m, li, k, err)) ||
        (rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)))
        return rc;
    return add_moe(m, li, k, hash, err);
}

/* DeepseekV4HyperHead: hc_fn (hc x hc x hidden), hc_base (hc), hc_scale (1). */
static uint64_t hyper_head_params(const struct fg_model *m, const struct dsv4_cfg *k)
{
    return k->hc * k->hc * m->hidden + k->hc + 1;
}

/*
 * The multi-token-prediction modules the released checkpoints store as mtp.<i>.* (the class
 * drops them: _keys_to_ignore_on_load_unexpected "mtp\."), as vLLM loads them
 * (vllm-project/vllm@0050eb86aeec vllm/models/deepseek_v4/nvidia/mtp.py
 * DeepSeekV4MultiTokenPredictorLayer): enorm, hnorm and shared_head.norm (RMSNorm over
 * hidden), e_proj and h_proj (hidden -> hidden), one decoder block (the layer after the
 * last: its compress_ratios entry, 0 = sliding in the releases; a top-k router)
 * and its own hyper-head (hc_head_fn / _base / _scale); the embedding and the head are the
 * main model's (load_weights routes the top-level embed / head to them).  transformers does
 * not describe them, so the rule is optional and the stored count stays unsure.
 */
static int add_mtp_rule(struct fg_model *m, const struct dsv4_cfg *k, uint64_t nextn,
                        struct fg_err *err)
{
    struct fg_model *x = fg__model_scratch(m, err);
    if (!x)
        return FG_E_NOMEM;
    int rc = add_block(x, (int32_t)m->layers, k, k->mtp_attn, false, err);
    uint64_t block = rc ? 0 : fg_model_params_of(x, FG_NODE_KIND_COUNT);
    fg_model_free(x);
    if (rc)
        return rc;
    uint64_t h = m->hidden;
    uint64_t each = block + 3 * h + 2 * h * h + hyper_head_params(m, k);
    fg__model_rule_optional(m, "num_nextn_predict_layers", "MTP modules "
                            "(num_nextn_predict_layers): block + enorm, hnorm, e_proj, h_proj, "
                            "norm, hyper-head", (int64_t)(nextn * each));
    fg__model_note(m, "num_nextn_predict_layers=%llu: MTP modules (mtp.*) counted as stored; "
                   "transformers does not build them: memory leaves them out",
                   (unsigned long long)nextn);
    return 0;
}

/* ---- reading the config ------------------------------------------------- */

/* compress_ratios' values, as _COMPRESS_RATIO_TO_LAYER_TYPE maps them. */
static int ratio_kind(const struct fg_cfg *c, uint64_t r, size_t i, uint8_t *out,
                      struct fg_err *err)
{
    if (r == 0 || r == 4 || r == 128) {
        *out = r == 0 ? DSV4_SLIDING : r == 4 ? DSV4_CSA : DSV4_HCA;
        return 0;
    }
    return fg_err_set(err, FG_E_RANGE, "%s: key 'compress_ratios' has %llu at layer %zu; "
                      "DeepseekV4Config maps only 0, 4 and 128 to a layer type", c->origin,
                      (unsigned long long)r, i);
}

/* The attention type of every layer: layer_types > compress_ratios > the class default. */
static int read_layer_types(const struct fg_cfg *c, const struct fg_model *m,
                            struct dsv4_cfg *k, struct fg_err *err)
{
    static const char *const names[] = {"sliding_attention", "compressed_sparse_attention",
                                        "heavily_compressed_attention"};
    const char *types[FG_MAX_LAYERS + 1];
    uint64_t ratios[FG_MAX_LAYERS + 1];
    size_t nt = 0, nr = 0;
    int rc;
    if ((rc = fg_cfg_str_array(c, "layer_types", types, FG_MAX_LAYERS + 1, &nt, err)) ||
        (rc = fg_cfg_u64_array(c, "compress_ratios", 0, 1u << 20, ratios, FG_MAX_LAYERS + 1, &nr,
                               err)))
        return rc;
    const char *key = nt ? "layer_types" : "compress_ratios";
    size_t n = nt ? nt : nr;
    if (n && n < m->layers)
        return fg_err_set(err, FG_E_RANGE, "%s: key '%s' has %zu entries for %llu layers",
                          c->origin, key, n, (unsigned long long)m->layers);
    for (uint64_t l = 0; l < m->layers; l++) {
        if (nt) {
            size_t t = 0;
            while (t < 3 && strcmp(types[l], names[t]))
                t++;
            if (t == 3)
                return fg_err_set(err, FG_E_RANGE, "%s: key 'layer_types' has '%s' at layer "
                                  "%llu; expected sliding_attention, compressed_sparse_attention "
                                  "or heavily_compressed_attention", c->origin, types[l],
                                  (unsigned long long)l);
            k->attn[l] = (uint8_t)t;
        } else if (nr) {
            if ((rc = ratio_kind(c, ratios[l], (size_t)l, &k->attn[l], err)))
                return rc;
        } else {
            /* 2 x HCA, then CSA on odd, HCA on even indices of the rest */
            k->attn[l] = l < 2 || (l - 2) % 2 == 0 ? DSV4_HCA : DSV4_CSA;
        }
    }
    /* the released configs' entry past the layers is the MTP layer's (its ratio, 0) */
    k->mtp_attn = DSV4_SLIDING;
    if (!nt && nr > m->layers)
        return ratio_kind(c, ratios[m->layers], (size_t)m->layers, &k->mtp_attn, err);
    return 0;
}

/* compress_rates {type: rate}, the legacy compress_rate_csa / _hca over it. */
static int read_rates(const struct fg_cfg *c, struct dsv4_cfg *k, struct fg_err *err)
{
    struct fg_cfg r;
    struct fg_err e = {0};
    int rc;
    k->rate_csa = 4;
    k->rate_hca = 128;
    if (fg_cfg_child(c, "compress_rates", &r, &e)) {
        if ((rc = fg_cfg_u64(&r, "compressed_sparse_attention", 4, 1, 1u << 20, &k->rate_csa,
                             err)) ||
            (rc = fg_cfg_u64(&r, "heavily_compressed_attention", 128, 1, 1u << 20, &k->rate_hca,
                             err)))
            return rc;
    } else if (e.code) {
        if (err)
            *err = e;
        return e.code;
    }
    if ((rc = fg_cfg_u64(c, "compress_rate_csa", k->rate_csa, 1, 1u << 20, &k->rate_csa, err)) ||
        (rc = fg_cfg_u64(c, "compress_rate_hca", k->rate_hca, 1, 1u << 20, &k->rate_hca, err)))
        return rc;
    return 0;
}

/* The MoE of every layer: mlp_layer_types > num_hash_layers hash_moe layers first. */
static int read_mlp_types(const struct fg_cfg *c, const struct fg_model *m, struct dsv4_cfg *k,
                          struct fg_err *err)
{
    const char *types[FG_MAX_LAYERS + 1];
    size_t nt = 0;
    uint64_t n_hash;
    bool ignored;
    int rc;
    if ((rc = fg_cfg_u64(c, "n_routed_experts|num_local_experts", 256, 1, FG_MAX_EXPERTS,
                         &k->experts, err)) ||
        (rc = fg_cfg_u64(c, "num_experts_per_tok", 6, 1, FG_MAX_EXPERTS, &k->top_k, err)) ||
        (rc = fg__check_top_k(c, k->top_k, "num_experts_per_tok", k->experts,
                              "n_routed_experts", err)) ||
        (rc = fg_cfg_u64(c, "moe_intermediate_size|intermediate_size", 2048, 1, FG_MAX_INTER,
                         &k->moe_inter, err)) ||
        (rc = fg_cfg_bool(c, "mlp_bias", false, &k->mlp_bias, err)) ||
        (rc = fg_cfg_u64(c, "n_shared_experts", 1, 0, FG_MAX_EXPERTS, &n_hash, err)) ||
        /* DeepseekV4Attention builds no bias whatever attention_bias says */
        (rc = fg_cfg_bool(c, "attention_bias", false, &ignored, err)) ||
        (rc = fg_cfg_u64(c, "num_hash_layers", 3, 0, FG_MAX_LAYERS, &n_hash, err)) ||
        (rc = fg_cfg_str_array(c, "mlp_layer_types", types, FG_MAX_LAYERS + 1, &nt, err)))
        return rc;
    if (nt && nt < m->layers)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'mlp_layer_types' has %zu entries for %llu "
                          "layers", c->origin, nt, (unsigned long long)m->layers);
    for (uint64_t l = 0; l < m->layers; l++) {
        if (!nt) {
            k->hash[l] = l < n_hash;
            continue;
        }
        if (strcmp(types[l], "hash_moe") && strcmp(types[l], "moe"))
            return fg_err_set(err, FG_E_RANGE, "%s: key 'mlp_layer_types' has '%s' at layer "
                              "%llu; expected hash_moe or moe", c->origin, types[l],
                              (unsigned long long)l);
        k->hash[l] = strcmp(types[l], "hash_moe") == 0;
    }
    return 0;
}

static int read_cfg(const struct fg_cfg *c, struct fg_model *m, struct dsv4_cfg *k,
                    struct fg_err *err)
{
    int rc;
    if ((rc = fg_cfg_u64(c, "q_lora_rank", 1024, 1, FG_MAX_HIDDEN, &k->q_lora, err)) ||
        (rc = fg_cfg_u64(c, "o_groups", 8, 1, FG_MAX_HEADS, &k->o_groups, err)) ||
        (rc = fg_cfg_u64(c, "o_lora_rank", 1024, 1, FG_MAX_HIDDEN, &k->o_lora, err)) ||
        (rc = fg_cfg_u64(c, "index_n_heads", 64, 1, FG_MAX_HEADS, &k->idx_heads, err)) ||
        (rc = fg_cfg_u64(c, "index_head_dim", 128, 1, 1u << 14, &k->idx_dim, err)) ||
        (rc = fg_cfg_u64(c, "hc_mult", 4, 1, 64, &k->hc, err)) ||
        (rc = fg_cfg_u64(c, "sliding_window", 128, 1, FG_MAX_POS, &k->window, err)))
        return rc;
    if ((m->heads * m->head_dim) % k->o_groups)
        return fg_err_set(err, FG_E_RANGE, "%s: o_groups %llu does not divide the %llu x %llu "
                          "attention output (num_attention_heads x head_dim)", c->origin,
                          (unsigned long long)k->o_groups, (unsigned long long)m->heads,
                          (unsigned long long)m->head_dim);
    if ((rc = read_rates(c, k, err)) || (rc = read_layer_types(c, m, k, err)) ||
        (rc = read_mlp_types(c, m, k, err)))
        return rc;
    m->experts = k->experts;
    m->top_k = k->top_k;
    m->inter = k->moe_inter;
    return 0;
}

/*
 * quantization_config: the released checkpoints store FP8 block-quantized linears with
 * ue8m0 scales, some projections in BF16 (_keep_in_fp32_modules), and the routed experts in
 * FP4 (expert_dtype); transformers' class does not say which tensors carry which scales, so
 * the count is the unpacked weights and the stored count is unsure.
 */
static int read_quant(const struct fg_cfg *c, struct fg_model *m, struct fg_err *err)
{
    const char *expert_dtype = NULL;
    int rc;
    if ((rc = fg_cfg_str(c, "expert_dtype", NULL, &expert_dtype, err)))
        return rc;
    if (fg_cfg_has(c, "quantization_config"))
        fg__model_unsure_count(m, "quantization_config", "quantization_config: its scales "
                               "(and %s experts) are stored in a layout transformers does not "
                               "describe; counted as the unpacked weights",
                               expert_dtype ? expert_dtype : "quantized");
    return 0;
}

static int read_deepseek_v4(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                            struct fg_err *err)
{
    (void)spec;
    int rc;
    uint64_t nextn = 0;
    struct dsv4_cfg *k = calloc(1, sizeof *k);
    if (!k)
        return fg_err_set(err, FG_E_NOMEM, "out of memory");
    if ((rc = fg__read_core(c, m, &dsv4_d, err)) || (rc = read_cfg(c, m, k, err)) ||
        (rc = fg_cfg_u64(c, "num_nextn_predict_layers", 1, 0, 16, &nextn, err)) ||
        (rc = read_quant(c, m, err)) ||
        (rc = fg__add_embedding(m, m->vocab, m->hidden, err)))
        goto out;
    size_t compressed = 0;
    for (uint64_t l = 0; l < m->layers && !rc; l++) {
        compressed += k->attn[l] != DSV4_SLIDING;
        rc = add_block(m, (int32_t)l, k, k->attn[l], k->hash[l], err);
    }
    if (rc)
        goto out;
    if (compressed)
        fg__model_note(m, "%zu CSA/HCA layers: KV cache counted as the whole sequence, not the "
                       "window plus 1/%llu or 1/%llu compressed entries: an upper bound",
                       compressed, (unsigned long long)k->rate_csa,
                       (unsigned long long)k->rate_hca);
    fg__model_note(m, "hc_mult=%llu residual streams: the hyper-connections' saved activations "
                   "are not counted (training activations are a lower bound)",
                   (unsigned long long)k->hc);
    struct fg_node *n = fg__model_add(m, FG_NODE_OTHER, -1, "Hyper-head", err);
    if (!n) {
        rc = FG_E_NOMEM;
        goto out;
    }
    n->params = hyper_head_params(m, k);
    n->hidden = n->width = (uint32_t)m->hidden;
    fg__fmt(n->desc, sizeof n->desc, "%llu streams -> 1", (unsigned long long)k->hc);
    if ((rc = fg__add_norm(m, -1, "Final norm", m->hidden, FG_NORM_RMS, err)) ||
        (rc = fg__add_head(m, m->vocab, m->hidden, m->tied, false, false, err)))
        goto out;
    if (nextn)
        rc = add_mtp_rule(m, k, nextn, err);
out:
    free(k);
    return rc;
}

const struct fg_arch fg__arch_dsv4_table[] = {
#include "arch/moe/deepseek_v4.def"
    {0},
};
