/*
 * moe_mla.c - mixture-of-experts decoders as table rows, with the
 * multi-head latent attention (MLA) of the DeepSeek-V2/V3 line.
 *
 * One block = norm, attention (GQA or MLA), norm, then either a dense MLP
 * or one MoE node (router + routed experts + shared experts).  What differs
 * between families is a column of struct moe_spec: which keys name the
 * expert counts, which layers stay dense, how shared experts are sized,
 * whether experts and router carry biases, the attention variant, and the
 * checkpoint extras (multi-token-prediction layers, sparse-attention
 * indexer).  The rows, each naming the transformers class (or remote-code
 * file) its shapes were read from, are moe_rows.c; struct moe_spec is
 * moe_mla.h.
 *
 * Checkpoint formats are counting rules applied after the graph is built,
 * read from quantization_config, never from the model's name:
 *   - FP8 block quantization stores one fp32 weight_scale_inv per
 *     128x128 block of every quantized linear;
 *   - MXFP4 stores two 4-bit values per U8 byte plus a scale per 32 values.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "arch/moe/moe_mla.h"
#include "util/fmt.h"

/* Everything one block needs, read once from the config. */
struct moe_cfg {
    const struct moe_spec *s;
    uint64_t experts, top_k, moe_inter, shared_n, shared_inter;
    uint64_t sparse_step, first_k, layer_freq;
    int64_t last_k;                  /* PLACE_ERNIE: last MoE layer, -1 = the last layer */
    bool mlp_only[FG_MAX_LAYERS];
    bool sparse[FG_MAX_LAYERS];      /* PLACE_TYPES: the layer's MLP is the experts */
    bool swa[FG_MAX_LAYERS];         /* hybrid_pattern: the layer is a sliding one */
    uint64_t v_head_dim, swa_kv;     /* value head width; the sliding layers' kv heads */
    bool attn_bias, qkv_bias, qk_norm, score_bias;
    uint64_t q_lora, kv_lora, nope, rope, v;
    uint64_t index_heads, index_head_dim;
    bool idx_shared[FG_MAX_LAYERS];  /* indexer_types "shared": the layer reuses an indexer */
    uint64_t window[FG_MAX_LAYERS];
};

/* ---- blocks ------------------------------------------------------------- */

static uint64_t window_of(const struct moe_cfg *k, uint64_t l)
{
    return l < FG_MAX_LAYERS ? k->window[l] : 0;
}

static bool is_swa(const struct moe_cfg *k, uint64_t l)
{
    return l < FG_MAX_LAYERS && k->swa[l];
}

static bool is_moe_layer(const struct moe_cfg *k, uint64_t l)
{
    if (k->experts == 0)
        return false;
    switch (k->s->place) {
    case PLACE_TYPES:
        return l < FG_MAX_LAYERS && k->sparse[l];
    case PLACE_SPARSE_STEP:
        return !(l < FG_MAX_LAYERS && k->mlp_only[l]) && (l + 1) % k->sparse_step == 0;
    case PLACE_FIRST_K:
        return l >= k->first_k && l % k->layer_freq == 0;
    case PLACE_ERNIE:
        return l >= k->first_k && (k->last_k < 0 || l <= (uint64_t)k->last_k) &&
               (l + 1) % k->layer_freq == 0;
    case PLACE_ALL:
    default:
        return true;
    }
}

/*
 * One MoE node.  Router Linear(hidden, experts); experts as stacked
 * gate/up/down (or fused gate_up) of moe_intermediate_size; the shared
 * expert as one gated MLP; Qwen2Moe's shared_expert_gate Linear(hidden, 1);
 * the e_score_correction_bias buffer where the router keeps one.
 */
static int add_moe(struct fg_model *m, int32_t layer, const struct moe_cfg *k, struct fg_err *err)
{
    const struct moe_spec *s = k->s;
    /* Qwen2MoeSparseMoeBlock.shared_expert_gate: Linear(hidden, 1, bias=False) */
    const struct fg_moe_shape ms = {
        .hidden = m->hidden, .experts = k->experts, .top_k = k->top_k, .inter = k->moe_inter,
        .shared_inter = k->shared_inter, .shared_n = (uint32_t)k->shared_n, .gated = true,
        .fused_gate_up = s->fused_gate_up, .router_bias = s->router_bias,
        .expert_bias = s->expert_bias, .shared_gate = s->shared == SHARED_QWEN,
        .score_bias = k->score_bias, .lora_experts = (uint8_t)s->peft};
    return fg__add_moe(m, layer, &ms, NULL, err);
}

/*
 * Multi-head latent attention of DeepseekV2Attention / DeepseekV3Attention: fg__add_mla
 * (arch.h), bias = attention_bias.  DeepSeek-V3.2 adds the lightning indexer
 * (DeepSeek-V3.2-Exp inference/model.py Indexer, stored as self_attn.indexer.*): wq_b
 * q_lora -> index_heads x index_head_dim, wk hidden -> index_head_dim, k_norm
 * LayerNorm(index_head_dim) with bias, weights_proj hidden -> index_heads.
 */
/* Whether layer l holds its own sparse-attention indexer (MTP layers, past the main stack,
 * always do). */
static bool has_indexer(const struct moe_cfg *k, uint64_t l)
{
    return k->s->dsa_indexer && !(l < FG_MAX_LAYERS && k->idx_shared[l]);
}

static int add_mla(struct fg_model *m, int32_t layer, const struct moe_cfg *k, struct fg_err *err)
{
    const struct fg_mla_shape s = {.hidden = m->hidden, .heads = m->heads, .q_lora = k->q_lora,
                                   .kv_lora = k->kv_lora, .nope = k->nope, .rope = k->rope,
                                   .v = k->v, .bias = k->attn_bias};
    struct fg_node *n;
    int rc;
    if ((rc = fg__add_mla(m, layer, &s, &n, err)))
        return rc;
    uint64_t h = m->hidden;
    bool indexer = has_indexer(k, (uint64_t)layer);
    if (indexer) {
        fg__node_linear(n, "idx_q", k->q_lora, k->index_heads * k->index_head_dim, 1, false);
        fg__node_linear(n, "idx_k", h, k->index_head_dim, 1, false);
        n->params += 2 * k->index_head_dim; /* indexer.k_norm: LayerNorm weight + bias */
        fg__node_linear(n, "idx_w", h, k->index_heads, 1, false);
    }
    if (k->s->dsa_indexer)
        fg__fmt(n->desc, sizeof n->desc, "MLA %lluh q%llu/kv%llu x%llu%s",
                 (unsigned long long)m->heads, (unsigned long long)k->q_lora,
                 (unsigned long long)k->kv_lora, (unsigned long long)(k->nope + k->rope),
                 indexer ? " + DSA indexer" : ", shared indexer");
    return 0;
}

/* One decoder block: norm, attention, norm, MLP or MoE. */
static int add_block(struct fg_model *m, uint64_t l, const struct moe_cfg *k, struct fg_err *err)
{
    const struct moe_spec *s = k->s;
    int32_t li = (int32_t)l;
    int rc;
    if ((rc = fg__add_norm(m, li, "Norm", m->hidden, s->norm, err)))
        return rc;
    if (s->attn == ATTN_MLA) {
        if ((rc = add_mla(m, li, k, err)))
            return rc;
    } else {
        bool swa = is_swa(k, l);
        struct fg_attn_shape a = {
            .hidden = m->hidden, .heads = m->heads, .kv_heads = swa ? k->swa_kv : m->kv_heads,
            .head_dim = m->head_dim, .v_head_dim = k->v_head_dim, .window = window_of(k, l),
            .qkv_bias = k->attn_bias || k->qkv_bias, .o_bias = k->attn_bias,
            .qk_norm = k->qk_norm ? s->qk_norm : 0, .qk_norm_kind = FG_NORM_RMS,
        };
        struct fg_node *n;
        if ((rc = fg__add_attention(m, li, &a, &n, err)))
            return rc;
        if (s->sinks == SINKS_ALL || (s->sinks == SINKS_SLIDING && swa)) {
            /* GptOssAttention.sinks, MiMoV2FlashAttention.sinks: one learned logit per head */
            n->params += m->heads;
            size_t len = strlen(n->desc);
            fg__fmt(n->desc + len, sizeof n->desc - len, ", sinks");
        }
    }
    if ((rc = fg__add_norm(m, li, "Norm", m->hidden, s->norm, err)))
        return rc;
    if (is_moe_layer(k, l))
        return add_moe(m, li, k, err);
    struct fg_mlp_shape f = {.hidden = m->hidden, .inter = m->inter, .gated = true};
    struct fg_node *mlp;
    if ((rc = fg__add_mlp(m, li, &f, &mlp, err)))
        return rc;
    /* its gate_proj / up_proj / down_proj names are the ones peft moves onto the experts */
    mlp->lora_experts = (uint8_t)k->s->peft;
    return 0;
}

/* ---- checkpoint rules --------------------------------------------------- */

/* The rule of the FP8 block scales, total of them, when the checkpoint has bo x bi blocks. */
void fg__moe_fp8_rule(struct fg_model *m, uint64_t bo, uint64_t bi, uint64_t total)
{
    if (!bo)
        return;
    char name[96];
    fg__fmt(name, sizeof name, "FP8 block scales (weight_scale_inv, %llux%llu blocks)",
            (unsigned long long)bo, (unsigned long long)bi);
    fg__model_rule(m, name, (int64_t)total);
}

/*
 * Linears that FP8 block-quantized checkpoints keep in bf16, hence without a
 * weight_scale_inv: the router (DeepSeek-V3 MoEGate is an nn.Parameter;
 * MiniMax-M2 lists "gate" in modules_to_not_convert), Qwen's shared-expert
 * gate, and the indexer's weights_proj ("stored in bf16", V3.2 inference/model.py).
 */
static const char *const fp8_bf16_roles[] = {"router", "shexp_gate", "idx_w"};

static bool fp8_quantized(const struct fg_linear *l)
{
    for (size_t i = 0; i < sizeof fp8_bf16_roles / sizeof fp8_bf16_roles[0]; i++)
        if (strcmp(l->role, fp8_bf16_roles[i]) == 0)
            return false;
    return true;
}

/* One scale per bo x bi block (ceil-divided) of every quantized block linear. */
uint64_t fg__moe_fp8_scales(const struct fg_model *m, uint64_t bo, uint64_t bi)
{
    uint64_t total = 0;
    for (size_t i = 0; i < m->n_nodes; i++) {
        const struct fg_node *n = &m->nodes[i];
        if (n->kind != FG_NODE_ATTN && n->kind != FG_NODE_MLA && n->kind != FG_NODE_MLP &&
            n->kind != FG_NODE_MOE)
            continue;
        for (size_t j = 0; j < n->nlin; j++)
            if (fp8_quantized(&n->lin[j]))
                total += (uint64_t)n->lin[j].count * ((n->lin[j].out + bo - 1) / bo) *
                         ((n->lin[j].in + bi - 1) / bi);
    }
    return total;
}

/*
 * Multi-token prediction modules (deepseek-ai/DeepSeek-V3:README_WEIGHTS.md): each is one
 * more decoder block stored as model.layers.<num_hidden_layers + i>, plus
 * enorm and hnorm (RMSNorm over hidden), eh_proj Linear(2 x hidden, hidden)
 * kept in bf16, and shared_head.norm.  transformers never loads them, so
 * they are rules, not graph nodes.  The README calls embed_tokens and
 * shared_head.head shared with the main model, but the checkpoint writes
 * them again: DeepSeek-V3's published BF16 count, 3,918,786,560, only adds
 * up with both copies in layer 61 (measured against truth.tsv).  The
 * blocks' fp8 scales are returned through *scales.
 */
static int add_mtp_rules(struct fg_model *m, const struct moe_cfg *k, uint64_t nextn,
                         uint64_t bo, uint64_t bi, uint64_t *scales, struct fg_err *err)
{
    *scales = 0;
    struct fg_model *x = fg__model_scratch(m, err);
    if (!x)
        return FG_E_NOMEM;
    int rc = 0;
    for (uint64_t i = 0; i < nextn && !rc; i++)
        rc = add_block(x, m->layers + i, k, err);
    if (rc) {
        fg_model_free(x);
        return rc;
    }
    uint64_t block = fg_model_params_of(x, FG_NODE_KIND_COUNT);
    if (bo)
        *scales = fg__moe_fp8_scales(x, bo, bi);
    fg_model_free(x);
    uint64_t h = m->hidden;
    uint64_t extra = nextn * (2 * h + 2 * h * h + h);
    fg__model_rule_optional(m, "num_nextn_predict_layers", "MTP layers "
                            "(num_nextn_predict_layers): block + enorm, hnorm, eh_proj 2h->h, "
                            "head norm", (int64_t)(block + extra));
    /* DeepseekV3PreTrainedModel / Glm4MoePreTrainedModel list model.layers.<num_hidden_layers>
     * in _keys_to_ignore_on_load_unexpected: the layers are in the file, not in the model */
    fg__model_note(m, "num_nextn_predict_layers=%llu: MTP layers (model.layers.%llu) counted "
                   "as stored; transformers does not build them: memory leaves them out",
                   (unsigned long long)nextn, (unsigned long long)m->layers);
    if (k->s->mtp_no_copies)
        return 0;
    uint64_t copies = nextn * 2 * m->vocab * h;
    fg__model_rule_optional(m, "num_nextn_predict_layers", "MTP layers store their own "
                            "embed_tokens and shared_head.head copies", (int64_t)copies);
    return 0;
}

/*
 * quantization_config: FP8 block scales, or the MXFP4 packing note.
 * FP8 (DeepSeek-V3, MiniMax-M2): every quantized linear stores a fp32
 * weight_scale_inv of ceil(out/128) x ceil(in/128); DeepSeek-V3's published
 * F32 count, 41,555,600, is exactly these scales plus the routers'
 * e_score_correction_bias, and MiniMax-M2.5's total is the graph plus its
 * scales.  (Some Hub totals of the same architectures leave the scales out -
 * DeepSeek-R1 vs R1-0528, V3.2 vs V3.2-Exp, Kimi-K2-Instruct vs -Base - with
 * nothing in config.json to tell them apart; the checkpoint stores them all.)
 * MXFP4 (gpt-oss): the *_blocks tensors pack two 4-bit values per U8 byte
 * and are counted unpacked, the per-32-value *_scales are not counted
 * (huggingface.js getQuantizationMultiplier "mxfp4", MXFP4_SCALES_SUFFIX),
 * so the graph's unpacked expert shapes are already the count.
 */
int fg__moe_read_quant(const struct fg_cfg *c, struct fg_model *m, uint64_t *bo, uint64_t *bi,
                       struct fg_err *err)
{
    *bo = *bi = 0;
    struct fg_cfg q;
    struct fg_err e = {0};
    if (!fg_cfg_child(c, "quantization_config", &q, &e)) {
        if (!e.code)
            return 0;
        if (err)
            *err = e;
        return e.code;
    }
    const char *method = NULL;
    int rc;
    if ((rc = fg_cfg_str(&q, "quant_method", "", &method, err)))
        return rc;
    if (strcmp(method, "mxfp4") == 0) {
        fg__model_rule(m, "MXFP4 expert packing: 2 values per stored byte, counted unpacked; "
                          "block scales not counted", 0);
        return 0;
    }
    if (strcmp(method, "fp8") != 0)
        return 0;
    uint64_t blk[2];
    size_t nb = 0;
    if ((rc = fg_cfg_u64_array(&q, "weight_block_size", 1, 1u << 16, blk, 2, &nb, err)))
        return rc;
    if (nb == 0)
        return 0; /* per-tensor scales: a handful of scalars, not modelled */
    if (nb != 2)
        return fg_err_set(err, FG_E_RANGE, "%s: quantization_config.weight_block_size has %zu "
                          "entries, expected 2", c->origin, nb);
    *bo = blk[0];
    *bi = blk[1];
    return 0;
}

/* ---- reading the config ------------------------------------------------- */

void fg__moe_doubt_u64(struct fg_model *m, const char *key, uint64_t got, uint64_t want,
                       const char *why)
{
    if (got != want)
        fg__model_unsure(m, key, "unsure: %s=%llu where the class builds %llu (%s)", key,
                         (unsigned long long)got, (unsigned long long)want, why);
}

int fg__moe_check_list_len(const struct fg_cfg *c, const char *key, size_t n, uint64_t layers,
                           struct fg_err *err)
{
    if (n == 0 || n == layers)
        return 0;
    return fg_err_set(err, FG_E_RANGE, "%s: key '%s' has %zu entries for %llu layers; give "
                      "one per layer", c->origin, key, n, (unsigned long long)layers);
}

/*
 * PLACE_TYPES (MiMoV2FlashConfig, models/mimo_v2_flash/configuration_mimo_v2_flash.py at
 * decba1d2ea): mlp_layer_types "sparse" / "dense"; the Hub's config.json writes
 * moe_layer_freq as a list of 1 / 0 instead, which convert_mimo_v2_flash_weights_to_hf.py
 * turns into it; absent, __post_init__ makes layer 0 dense and the rest sparse (HYV3Config
 * likewise).
 */
static int read_mlp_types(const struct fg_cfg *c, const struct fg_model *m, struct moe_cfg *k,
                          struct fg_err *err)
{
    const char *types[FG_MAX_LAYERS];
    uint64_t freq[FG_MAX_LAYERS];
    size_t nt = 0, nf = 0;
    int rc;
    if ((rc = fg_cfg_str_array(c, "mlp_layer_types", types, FG_MAX_LAYERS, &nt, err)) ||
        (rc = fg__moe_check_list_len(c, "mlp_layer_types", nt, m->layers, err)) ||
        (rc = fg_cfg_u64_array(c, "moe_layer_freq", 0, 1, freq, FG_MAX_LAYERS, &nf, err)) ||
        (rc = fg__moe_check_list_len(c, "moe_layer_freq", nf, m->layers, err)))
        return rc;
    for (uint64_t l = 0; l < m->layers && l < FG_MAX_LAYERS; l++) {
        if (nt && strcmp(types[l], "sparse") && strcmp(types[l], "dense"))
            return fg_err_set(err, FG_E_RANGE, "%s: key 'mlp_layer_types' has '%s' at layer "
                              "%llu; expected sparse or dense", c->origin, types[l],
                              (unsigned long long)l);
        k->sparse[l] = nt ? strcmp(types[l], "sparse") == 0 : nf ? freq[l] == 1 : l > 0;
    }
    /* the checkpoint's MTP layers (model.layers.<num_hidden_layers>...) hold experts */
    for (uint64_t l = m->layers; l < FG_MAX_LAYERS; l++)
        k->sparse[l] = true;
    return 0;
}

/*
 * hybrid_pattern (MiMoV2FlashConfig): layer_types "sliding_attention" / "full_attention";
 * the Hub's hybrid_layer_pattern writes 1 / 0 instead (the conversion script's reading);
 * absent, __post_init__ makes layer 0 and every 6th layer full.  Sliding layers attend over
 * sliding_window (class default 128; the Hub's sliding_window_size is dropped).
 */
static int read_hybrid(const struct fg_cfg *c, const struct fg_model *m, struct moe_cfg *k,
                       struct fg_err *err)
{
    const char *types[FG_MAX_LAYERS];
    uint64_t pat[FG_MAX_LAYERS], sw;
    size_t nt = 0, np = 0;
    int rc;
    if ((rc = fg_cfg_u64(c, "sliding_window", 128, 0, FG_MAX_POS, &sw, err)) ||
        (rc = fg_cfg_str_array(c, "layer_types", types, FG_MAX_LAYERS, &nt, err)) ||
        (rc = fg__moe_check_list_len(c, "layer_types", nt, m->layers, err)) ||
        (rc = fg_cfg_u64_array(c, "hybrid_layer_pattern", 0, 1, pat, FG_MAX_LAYERS, &np, err)) ||
        (rc = fg__moe_check_list_len(c, "hybrid_layer_pattern", np, m->layers, err)))
        return rc;
    for (uint64_t l = 0; l < m->layers && l < FG_MAX_LAYERS; l++) {
        if (nt && strcmp(types[l], "sliding_attention") && strcmp(types[l], "full_attention"))
            return fg_err_set(err, FG_E_RANGE, "%s: key 'layer_types' has '%s' at layer %llu; "
                              "expected sliding_attention or full_attention", c->origin,
                              types[l], (unsigned long long)l);
        k->swa[l] = nt ? strcmp(types[l], "sliding_attention") == 0
                  : np ? pat[l] == 1 : l > 0 && (l + 1) % 6 != 0;
        k->window[l] = k->swa[l] ? sw : 0;
    }
    return 0;
}

/* The layers before the first expert layer (all of them in a dense model). */
static uint64_t leading_dense(const struct fg_model *m, const struct moe_cfg *k)
{
    uint64_t l = 0;
    while (l < m->layers && !is_moe_layer(k, l))
        l++;
    return l;
}

/*
 * The Hub keys a class hardcodes (spec->fixed): a value other than the one the class builds
 * means a checkpoint of other shapes than the class's, which transformers would not load:
 * unsure, naming the key.
 */
static int check_fixed(const struct fg_cfg *c, struct fg_model *m, const struct moe_cfg *k,
                       struct fg_err *err)
{
    for (const struct moe_fixed *f = k->s->fixed; f && f->key; f++) {
        if (fg_cfg_form(c, f->key, NULL) == FG_CFG_NULL)
            continue; /* the remote class's own default: nothing said */
        int rc;
        if (f->of == FIXED_TRUE || f->of == FIXED_FALSE) {
            bool want = f->of == FIXED_TRUE, got;
            if ((rc = fg_cfg_bool(c, f->key, want, &got, err)))
                return rc;
            if (got != want)
                fg__model_unsure(m, f->key, "unsure: %s is %s, but the transformers class "
                                 "builds as if %s: the checkpoint's shapes are not its own",
                                 f->key, got ? "true" : "false", want ? "true" : "false");
            continue;
        }
        uint64_t want = f->of == FIXED_HEADS      ? m->heads
                      : f->of == FIXED_SWA_KV     ? k->swa_kv
                      : f->of == FIXED_HEAD_DIM   ? m->head_dim
                      : f->of == FIXED_FIRST_DENSE ? leading_dense(m, k)
                      : f->of == FIXED_MOE_INTER  ? k->moe_inter
                                                  : k->v_head_dim, got;
        if ((rc = fg_cfg_u64(c, f->key, want, 0, UINT32_MAX, &got, err)))
            return rc;
        if (got != want)
            fg__model_unsure(m, f->key, "unsure: %s is %llu, but the transformers class builds "
                             "%llu: the checkpoint's shapes are not its own", f->key,
                             (unsigned long long)got, (unsigned long long)want);
    }
    return 0;
}

static int read_experts(const struct fg_cfg *c, const struct fg_model *m, struct moe_cfg *k,
                        struct fg_err *err)
{
    const struct moe_spec *s = k->s;
    int rc;
    if ((rc = fg_cfg_u64(c, s->experts_key, s->experts_def, 0, FG_MAX_EXPERTS, &k->experts, err)))
        return rc;
    if (k->experts == 0)
        return 0; /* no experts (or the class default None): every layer is dense */
    if (s->topk_def)
        rc = fg_cfg_u64(c, s->topk_key, s->topk_def, 1, FG_MAX_EXPERTS, &k->top_k, err);
    else
        rc = fg_cfg_u64_req(c, s->topk_key, 1, FG_MAX_EXPERTS, &k->top_k, err);
    if (rc)
        return rc;
    if (k->top_k > k->experts) {
        char a[64], b[64];
        return fg_err_set(err, FG_E_RANGE, "%s: %s %llu is more than the %llu routed experts (%s)",
                          c->origin, fg__cfg_key_used(c, s->topk_key, a, sizeof a),
                          (unsigned long long)k->top_k, (unsigned long long)k->experts,
                          fg__cfg_key_used(c, s->experts_key, b, sizeof b));
    }
    k->moe_inter = m->inter;
    if (s->moe_inter_key &&
        (rc = fg_cfg_u64(c, s->moe_inter_key, s->moe_inter_def, 1, FG_MAX_INTER, &k->moe_inter,
                         err)))
        return rc;
    switch (s->shared) {
    case SHARED_QWEN:
        k->shared_n = 1;
        rc = fg_cfg_u64(c, "shared_expert_intermediate_size", s->shared_def, 0, FG_MAX_INTER,
                        &k->shared_inter, err);
        break;
    case SHARED_DEEPSEEK:
        rc = fg_cfg_u64(c, s->shared_key ? s->shared_key : "n_shared_experts", s->shared_def, 0,
                        FG_MAX_EXPERTS, &k->shared_n, err);
        k->shared_inter = k->shared_n * k->moe_inter;
        break;
    case SHARED_GRANITE:
        rc = fg_cfg_u64(c, "shared_intermediate_size", s->shared_def, 0, FG_MAX_INTER,
                        &k->shared_inter, err);
        k->shared_n = k->shared_inter ? 1 : 0;
        break;
    case SHARED_NONE:
        break;
    }
    if (rc)
        return rc;
    if (k->shared_inter > FG_MAX_INTER)
        return fg_err_set(err, FG_E_RANGE, "%s: n_shared_experts x moe_intermediate_size = %llu "
                          "is out of range", c->origin, (unsigned long long)k->shared_inter);
    switch (s->place) {
    case PLACE_SPARSE_STEP: {
        uint64_t only[FG_MAX_LAYERS];
        size_t n = 0;
        if ((rc = fg_cfg_u64(c, "decoder_sparse_step", 1, 1, m->layers, &k->sparse_step, err)) ||
            (rc = fg_cfg_u64_array(c, "mlp_only_layers", 0, m->layers - 1, only, FG_MAX_LAYERS,
                                   &n, err)))
            return rc;
        for (size_t i = 0; i < n && i < FG_MAX_LAYERS; i++)
            k->mlp_only[only[i]] = true;
        break;
    }
    case PLACE_FIRST_K:
        if ((rc = fg_cfg_u64(c, "first_k_dense_replace", 0, 0, m->layers, &k->first_k, err)) ||
            (rc = fg_cfg_u64(c, "moe_layer_freq", 1, 1, m->layers, &k->layer_freq, err)))
            return rc;
        break;
    case PLACE_ERNIE: {
        double last;
        if ((rc = fg_cfg_u64(c, "moe_layer_start_index", 1, 0, m->layers, &k->first_k, err)) ||
            (rc = fg_cfg_u64(c, "moe_layer_interval", 1, 1, m->layers, &k->layer_freq, err)) ||
            (rc = fg_cfg_f64(c, "moe_layer_end_index", -1, -1, (double)m->layers, &last, err)))
            return rc;
        if (last != (double)(int64_t)last)
            return fg_err_set(err, FG_E_RANGE, "%s: key 'moe_layer_end_index' = %g is not a "
                              "whole number", c->origin, last);
        k->last_k = (int64_t)last;
        break;
    }
    case PLACE_TYPES:
        rc = read_mlp_types(c, m, k, err);
        break;
    case PLACE_ALL:
        break;
    }
    if (rc)
        return rc;
    if (s->score_bias == SCORE_BIAS_KEY) {
        if ((rc = fg_cfg_bool(c, "use_routing_bias", true, &k->score_bias, err)))
            return rc;
    } else if (s->score_bias == SCORE_BIAS_ALWAYS) {
        k->score_bias = true;
    } else if (s->score_bias == SCORE_BIAS_NOAUX) {
        const char *method = NULL;
        if ((rc = fg_cfg_str(c, "topk_method", s->topk_method_def, &method, err)))
            return rc;
        k->score_bias = method && strcmp(method, "noaux_tc") == 0;
    }
    return 0;
}

static int read_mla(const struct fg_cfg *c, struct fg_model *m, struct moe_cfg *k,
                    struct fg_err *err)
{
    const struct mla_defaults *d = &k->s->mla;
    int rc;
    /* q_lora_rank null means no query compression (a plain q_proj), not the class
     * default: V2-Lite and Moonlight write "q_lora_rank": null; an absent key takes the
     * class's default, as the class does. */
    if (fg_cfg_form(c, "q_lora_rank", NULL) == FG_CFG_NULL)
        k->q_lora = 0;
    else if ((rc = fg_cfg_u64(c, "q_lora_rank", d->q_lora, 0, FG_MAX_HIDDEN, &k->q_lora, err)))
        return rc;
    if ((rc = fg_cfg_u64(c, "kv_lora_rank", d->kv_lora, 1, FG_MAX_HIDDEN, &k->kv_lora, err)) ||
        (rc = fg_cfg_u64(c, "qk_nope_head_dim", d->nope, 0, 1u << 14, &k->nope, err)) ||
        (rc = fg_cfg_u64(c, "qk_rope_head_dim", d->rope, 1, 1u << 14, &k->rope, err)) ||
        (rc = fg_cfg_u64(c, "v_head_dim", d->v, 1, 1u << 14, &k->v, err)))
        return rc;
    if (k->s->dsa_indexer) {
        /* DeepSeek-V3.2-Exp inference/model.py ModelArgs defaults */
        if ((rc = fg_cfg_u64(c, "index_n_heads", 64, 1, FG_MAX_HEADS, &k->index_heads, err)) ||
            (rc = fg_cfg_u64(c, "index_head_dim", 128, 1, 1u << 14, &k->index_head_dim, err)))
            return rc;
        if (!k->q_lora)
            return fg_err_set(err, FG_E_UNSUPPORTED, "%s: the sparse-attention indexer reads the "
                              "q_lora_rank latent, but q_lora_rank is absent or 0", c->origin);
        /* GLM-5.2 indexer_types: "shared" layers reuse an earlier layer's top-k and hold no
         * indexer weights (GLM-5.2 publishes 57 x 9,371,904 fewer scalars than GLM-5.1) */
        const char *types[FG_MAX_LAYERS];
        size_t nt = 0;
        if ((rc = fg_cfg_str_array(c, "indexer_types", types, FG_MAX_LAYERS, &nt, err)))
            return rc;
        if (nt && nt != m->layers)
            return fg_err_set(err, FG_E_RANGE, "%s: key 'indexer_types' has %zu entries for %llu "
                              "layers", c->origin, nt, (unsigned long long)m->layers);
        for (size_t i = 0; i < nt; i++) {
            if (strcmp(types[i], "shared") && strcmp(types[i], "full"))
                return fg_err_set(err, FG_E_RANGE, "%s: key 'indexer_types' has '%s' at layer %zu; "
                                  "expected full or shared", c->origin, types[i], i);
            k->idx_shared[i] = strcmp(types[i], "shared") == 0;
        }
    }
    m->head_dim = k->nope + k->rope;
    m->kv_heads = m->heads;
    return 0;
}

static int read_attention(const struct fg_cfg *c, struct fg_model *m, struct moe_cfg *k,
                          struct fg_err *err)
{
    const struct moe_spec *s = k->s;
    int rc;
    k->attn_bias = s->attn_bias_def;
    k->qkv_bias = s->qkv_bias_def;
    k->qk_norm = s->qk_norm && !s->qk_norm_key;
    if ((s->attn_bias_key &&
         (rc = fg_cfg_bool(c, s->attn_bias_key, s->attn_bias_def, &k->attn_bias, err))) ||
        (s->qkv_bias_key &&
         (rc = fg_cfg_bool(c, s->qkv_bias_key, s->qkv_bias_def, &k->qkv_bias, err))) ||
        (s->qk_norm_key && (rc = fg_cfg_bool(c, s->qk_norm_key, s->qk_norm_def, &k->qk_norm, err))))
        return rc;
    /* A class whose q/k norms are unconditional (Qwen3MoeAttention) ignores a use_qk_norm its
     * config may carry (Qwen3-Coder-480B-A35B writes true): read, and no shape changes. */
    bool ignored;
    if (s->qk_norm && !s->qk_norm_key &&
        (rc = fg_cfg_bool(c, "use_qk_norm", true, &ignored, err)))
        return rc;
    if (s->attn == ATTN_MLA)
        return read_mla(c, m, k, err);
    /* fg__read_core defaults these to MHA and hidden / heads; the class may not */
    if (s->kv_heads_def && !fg_cfg_has(c, "num_key_value_heads")) {
        if (m->heads % s->kv_heads_def)
            return fg_err_set(err, FG_E_RANGE, "%s: %llu attention heads are not a multiple of "
                              "the default %llu key/value heads", c->origin,
                              (unsigned long long)m->heads, (unsigned long long)s->kv_heads_def);
        m->kv_heads = s->kv_heads_def;
    }
    if (s->head_dim_def && !fg_cfg_has(c, "head_dim"))
        m->head_dim = s->head_dim_def;
    k->v_head_dim = m->head_dim;
    k->swa_kv = m->kv_heads * (s->swa_kv_mult ? s->swa_kv_mult : 1);
    if (s->v_head_dim_key &&
        (rc = fg_cfg_u64(c, s->v_head_dim_key, s->v_head_dim_def, 1, 1u << 14, &k->v_head_dim,
                         err)))
        return rc;
    if (s->hybrid_pattern)
        return read_hybrid(c, m, k, err);
    if (!s->windows)
        return 0;
    if ((rc = fg__read_windows(c, m->layers, k->window, 0, s->honour_use_sliding_window, err)))
        return rc;
    /* Qwen2MoeConfig.layer_types: only layers from max_window_layers on slide */
    if (s->max_window_layers && !fg_cfg_has(c, "layer_types")) {
        uint64_t mwl;
        if ((rc = fg_cfg_u64(c, "max_window_layers", 28, 0, FG_MAX_LAYERS, &mwl, err)))
            return rc;
        for (uint64_t l = 0; l < mwl && l < m->layers; l++)
            k->window[l] = 0;
    }
    return 0;
}

/* Shared by all rows (moe_rows.c). */
int fg__arch_read_moe(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                      struct fg_err *err)
{
    const struct moe_spec *s = spec;
    int rc;
    struct moe_cfg *k = calloc(1, sizeof *k);
    if (!k)
        return fg_err_set(err, FG_E_NOMEM, "out of memory");
    k->s = s;
    if ((rc = fg__read_core(c, m, &s->d, err)) || (rc = read_experts(c, m, k, err)) ||
        (rc = read_attention(c, m, k, err)))
        goto out;
    m->experts = k->experts;
    m->top_k = k->top_k;

    uint64_t nextn = 0, bo = 0, bi = 0;
    if (s->mtp && (rc = fg_cfg_u64(c, "num_nextn_predict_layers", 0, 0, 16, &nextn, err)))
        goto out;
    uint64_t unstored = 0;
    if (s->mtp_unstored_key &&
        (rc = fg_cfg_u64(c, s->mtp_unstored_key, 0, 0, 64, &unstored, err)))
        goto out;
    if (unstored)
        fg__model_note(m, "%s=%llu: the published checkpoints store no MTP modules, none "
                       "counted", s->mtp_unstored_key, (unsigned long long)unstored);
    if ((rc = fg__moe_read_quant(c, m, &bo, &bi, err)) || (rc = check_fixed(c, m, k, err)))
        goto out;
    if (s->mtp_unsized)
        /* MiMoV2FlashPreTrainedModel._keys_to_ignore_on_load_unexpected: ^model.mtp. */
        fg__model_unsure_count(m, "num_nextn_predict_layers", "unsure: the releases of this "
                               "class store multi-token-prediction layers (model.mtp.*) it "
                               "does not build, and config.json does not size them; the "
                               "safetensors headers settle what the checkpoint holds");

    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)))
        goto out;
    size_t block = 0; /* the first node of the block built last */
    for (uint64_t l = 0; l < m->layers; l++) {
        /* a block reads nothing of its layer but its window, whether its MLP is sparse and
         * whether it holds an indexer:
         * the blocks after the last one built that equal it in both are copies of it */
        uint64_t same = 0;
        while (l > 0 && l + same < m->layers && window_of(k, l + same) == window_of(k, l - 1) &&
               is_swa(k, l + same) == is_swa(k, l - 1) &&
               is_moe_layer(k, l + same) == is_moe_layer(k, l - 1) &&
               has_indexer(k, l + same) == has_indexer(k, l - 1))
            same++;
        if (same && fg__model_repeat_block(m, block, (int32_t)l, (uint32_t)same)) {
            l += same - 1;
            continue;
        }
        block = m->n_nodes;
        if ((rc = add_block(m, l, k, err)))
            goto out;
    }
    bool head_bias = false;
    if ((s->head_bias_key && (rc = fg_cfg_bool(c, s->head_bias_key, false, &head_bias, err))) ||
        (rc = fg__add_norm(m, -1, "Final norm", m->hidden, s->norm, err)) ||
        (rc = fg__add_head(m, m->vocab, m->hidden, m->tied, false, head_bias, err)))
        goto out;

    uint64_t scales = bo ? fg__moe_fp8_scales(m, bo, bi) : 0, mtp_scales = 0;
    if (nextn && (rc = add_mtp_rules(m, k, nextn, bo, bi, &mtp_scales, err)))
        goto out;
    fg__moe_fp8_rule(m, bo, bi, scales + mtp_scales);
out:
    free(k);
    return rc;
}
