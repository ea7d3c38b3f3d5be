/*
 * step3p7.c - step3p7: the text model of StepFun's Step-3.7-Flash (transformers
 * models/step3p7/modeling_step3p7.py @decba1d2ea, 5.16.0.dev0: Step3p7TextModel and the
 * lm_head of Step3p7ForConditionalGeneration), read from a flat config whose root holds the
 * text keys.  Each layer is Step3p7DecoderLayer: two RMSNorms, Step3p7Attention (sliding or
 * full by layer_types, its own head count on sliding layers, q/k norms over head_dim and a
 * sigmoid output gate g_proj), then a dense Step3p7MLP or a Step3p7SparseMoeBlock (sigmoid
 * router with e_score_correction_bias, Step3p7Experts, one shared Step3p7MLP of
 * share_expert_dim).  The checkpoint's num_nextn_predict_layers MTP layers are a rule.
 * A nested vision_config / text_config is not read here: keys.c leaves such a count unsure.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/moe/moe_mla.h"
#include "util/fmt.h"

/* Step3p7TextConfig defaults (configuration_step3p7.py @decba1d2ea). */
static const struct fg_core_defaults step3p7_d = {
    .vocab = 128815, .hidden = 4096, .inter = 11264, .layers = 45, .heads = 64,
    .max_pos = 128000, .tie = false, .kv_heads = 8, .head_dim = 128};

/* The MTP layers the checkpoint may append (Step3p7TextConfig.__post_init__ splits the
 * per-layer lists at num_hidden_layers). */
#define STEP_MAX_MTP 16u

/* Everything a block reads, from the config once; per-layer arrays cover the MTP layers. */
struct step_cfg {
    uint64_t layers, nextn;               /* num_hidden_layers, num_nextn_predict_layers */
    uint64_t experts, top_k, moe_inter, shared_inter;
    uint64_t sliding_heads, gate_width;   /* g_proj: 1 per head, or head_dim per head */
    bool attn_bias, mlp_bias;
    bool sparse[FG_MAX_LAYERS + STEP_MAX_MTP];
    bool sliding[FG_MAX_LAYERS + STEP_MAX_MTP];   /* sliding_attention: its heads, a window */
    uint64_t window[FG_MAX_LAYERS + STEP_MAX_MTP];
};

/* ---- reading the config ------------------------------------------------- */

/*
 * mlp_layer_types ("sparse" / "dense", num_hidden_layers entries or padded with the MTP
 * layers'), else the legacy moe_layers_enum (a comma-separated string or a list of layer
 * indices), else layers 3 on: Step3p7TextConfig.__post_init__, over the padded range.
 */
static int read_placement(const struct fg_cfg *c, struct step_cfg *k, struct fg_err *err)
{
    uint64_t padded = k->layers + k->nextn;
    const char *types[FG_MAX_LAYERS + STEP_MAX_MTP];
    size_t nt = 0;
    int rc;
    if ((rc = fg_cfg_str_array(c, "mlp_layer_types", types, FG_MAX_LAYERS + STEP_MAX_MTP, &nt,
                               err)))
        return rc;
    if (nt) {
        if (nt != k->layers && nt != padded)
            return fg_err_set(err, FG_E_RANGE, "%s: key 'mlp_layer_types' has %zu entries for "
                              "%llu layers (%llu with the MTP layers)", c->origin, nt,
                              (unsigned long long)k->layers, (unsigned long long)padded);
        /* a config saved by transformers holds the MTP layers' in mtp_mlp_layer_types */
        size_t nm = 0;
        if (nt == k->layers &&
            (rc = fg_cfg_str_array(c, "mtp_mlp_layer_types", types + nt, STEP_MAX_MTP, &nm,
                                   err)))
            return rc;
        if (nm > k->nextn)
            return fg_err_set(err, FG_E_RANGE, "%s: key 'mtp_mlp_layer_types' has %zu entries "
                              "for %llu MTP layers", c->origin, nm,
                              (unsigned long long)k->nextn);
        for (size_t i = 0; i < nt + nm; i++) {
            if (strcmp(types[i], "sparse") && strcmp(types[i], "dense"))
                return fg_err_set(err, FG_E_RANGE, "%s: key 'mlp_layer_types' has '%s' at "
                                  "layer %zu; expected sparse or dense", c->origin, types[i], i);
            k->sparse[i] = strcmp(types[i], "sparse") == 0;
        }
        return 0;
    }
    const cJSON *e = fg__cfg_item(c, "moe_layers_enum");
    if (!e || cJSON_IsNull(e)) {
        for (uint64_t l = 3; l < k->layers; l++)
            k->sparse[l] = true;
        return 0;
    }
    if (cJSON_IsString(e)) {
        for (const char *p = e->valuestring; p && *p;) {
            char *end;
            while (*p == ' ' || *p == ',')
                p++;
            if (!*p)
                break;
            unsigned long long v = strtoull(p, &end, 10);
            if (end == p || v >= padded)
                return fg_err_set(err, FG_E_RANGE, "%s: key 'moe_layers_enum' names '%.16s', "
                                  "not a layer below %llu", c->origin, p,
                                  (unsigned long long)padded);
            k->sparse[v] = true;
            p = end;
        }
        return 0;
    }
    uint64_t list[FG_MAX_LAYERS + STEP_MAX_MTP];
    size_t nl = 0;
    if ((rc = fg_cfg_u64_array(c, "moe_layers_enum", 0, padded - 1, list,
                               FG_MAX_LAYERS + STEP_MAX_MTP, &nl, err)))
        return rc;
    for (size_t i = 0; i < nl; i++)
        k->sparse[list[i]] = true;
    return 0;
}

/*
 * Keys other writers of this config use for what transformers reads elsewhere: a first_k_dense_
 * replace or n_shared_experts that disagrees with what the class builds leaves the count unsure
 * (transformers ignores both; a checkpoint written by that convention would differ).
 */
static int check_conventions(const struct fg_cfg *c, struct fg_model *m,
                             const struct step_cfg *k, struct fg_err *err)
{
    uint64_t first_k, shared_n, lead = 0;
    int rc;
    while (lead < k->layers && !k->sparse[lead])
        lead++;
    if ((rc = fg_cfg_u64(c, "first_k_dense_replace", lead, 0, k->layers, &first_k, err)) ||
        (rc = fg_cfg_u64(c, "n_shared_experts", 1, 0, FG_MAX_EXPERTS, &shared_n, err)))
        return rc;
    fg__moe_doubt_u64(m, "first_k_dense_replace", first_k, lead, "Step3p7TextConfig places "
                      "experts by moe_layers_enum");
    fg__moe_doubt_u64(m, "n_shared_experts", shared_n, 1, "Step3p7SparseMoeBlock's one shared "
                      "expert of share_expert_dim");
    return 0;
}

/*
 * layer_types (num_hidden_layers entries, or padded with the MTP layers'; a saved config holds
 * theirs in mtp_layer_types): sliding_attention layers see sliding_window keys
 * (Step3p7Attention.sliding_window; all when it is null), full_attention all.
 */
static int read_windows(const struct fg_cfg *c, struct step_cfg *k, struct fg_err *err)
{
    uint64_t padded = k->layers + k->nextn, window = 0;
    const char *types[FG_MAX_LAYERS + STEP_MAX_MTP];
    size_t nt = 0;
    int rc;
    if ((rc = fg_cfg_str_array(c, "layer_types", types, FG_MAX_LAYERS + STEP_MAX_MTP, &nt,
                               err)))
        return rc;
    if (nt && nt != k->layers && nt != padded)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'layer_types' has %zu entries for %llu "
                          "layers (%llu with the MTP layers)", c->origin, nt,
                          (unsigned long long)k->layers, (unsigned long long)padded);
    size_t nm = 0;
    if (nt == k->layers &&
        (rc = fg_cfg_str_array(c, "mtp_layer_types", types + nt, STEP_MAX_MTP, &nm, err)))
        return rc;
    if (nm > k->nextn)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'mtp_layer_types' has %zu entries for %llu "
                          "MTP layers", c->origin, nm, (unsigned long long)k->nextn);
    if (fg_cfg_form(c, "sliding_window", NULL) != FG_CFG_NULL &&
        (rc = fg_cfg_u64(c, "sliding_window", 0, 0, FG_MAX_POS, &window, err)))
        return rc;
    for (size_t i = 0; i < nt + nm; i++) {
        k->sliding[i] = strcmp(types[i], "sliding_attention") == 0;
        if (!k->sliding[i] && strcmp(types[i], "full_attention"))
            return fg_err_set(err, FG_E_RANGE, "%s: key 'layer_types' has '%s' at layer %zu; "
                              "expected full_attention or sliding_attention", c->origin,
                              types[i], i);
        k->window[i] = k->sliding[i] ? window : 0;
    }
    return 0;
}

/*
 * Step3p7Attention: heads on full layers, num_sliding_attention_heads (legacy:
 * attention_other_setting.num_attention_heads) on sliding ones, through per_layer_config;
 * g_proj Linear(hidden, heads) when gating is True or "per-head" (the class's True), else
 * Linear(hidden, heads x head_dim).
 */
static int read_attention(const struct fg_cfg *c, struct fg_model *m, struct step_cfg *k,
                          struct fg_err *err)
{
    struct fg_cfg other;
    struct fg_err e = {0};
    int rc;
    if (!fg_cfg_has(c, "num_key_value_heads|n_head_kv|num_kv_heads") &&
        fg_cfg_has(c, "num_attention_groups")) {
        /* Step3p7TextConfig.attribute_map: num_attention_groups -> num_key_value_heads */
        if ((rc = fg_cfg_u64(c, "num_attention_groups", 8, 1, FG_MAX_HEADS, &m->kv_heads, err)))
            return rc;
    }
    k->sliding_heads = m->heads;
    if (fg_cfg_has(c, "num_sliding_attention_heads")) {
        rc = fg_cfg_u64(c, "num_sliding_attention_heads", m->heads, 1, FG_MAX_HEADS,
                        &k->sliding_heads, err);
    } else if (fg_cfg_child(c, "attention_other_setting", &other, &e)) {
        rc = fg_cfg_u64(&other, "num_attention_heads", m->heads, 1, FG_MAX_HEADS,
                        &k->sliding_heads, err);
    } else if (e.code) {
        if (err)
            *err = e;
        rc = e.code;
    } else {
        rc = 0;
    }
    if (rc)
        return rc;
    if (m->heads % m->kv_heads || k->sliding_heads % m->kv_heads)
        return fg_err_set(err, FG_E_RANGE, "%s: %llu (sliding: %llu) attention heads are not a "
                          "multiple of the %llu key/value heads", c->origin,
                          (unsigned long long)m->heads, (unsigned long long)k->sliding_heads,
                          (unsigned long long)m->kv_heads);
    const cJSON *g = fg__cfg_item(c, "gating");
    bool per_head = !g || cJSON_IsTrue(g) ||
                    (cJSON_IsString(g) && strcmp(g->valuestring, "per-head") == 0);
    k->gate_width = per_head ? 1 : m->head_dim;
    if ((rc = fg_cfg_bool(c, "attention_bias", false, &k->attn_bias, err)) ||
        (rc = fg_cfg_bool(c, "mlp_bias", false, &k->mlp_bias, err)))
        return rc;
    return read_windows(c, k, err);
}

static int read_experts(const struct fg_cfg *c, struct fg_model *m, struct step_cfg *k,
                        struct fg_err *err)
{
    int rc;
    /* n_routed_experts and its attribute_map names; num_experts is the spelling of
     * aiconfigurator's normalised copy of the config, the same count */
    if ((rc = fg_cfg_u64(c, "n_routed_experts|moe_num_experts|num_local_experts|num_experts",
                         288, 1, FG_MAX_EXPERTS, &k->experts, err)) ||
        (rc = fg_cfg_u64(c, "num_experts_per_tok|moe_top_k", 8, 1, FG_MAX_EXPERTS, &k->top_k,
                         err)) ||
        (rc = fg_cfg_u64(c, "moe_intermediate_size", 1280, 1, FG_MAX_INTER, &k->moe_inter,
                         err)) ||
        (rc = fg_cfg_u64(c, "share_expert_dim|share_expert_dims", 1280, 0, FG_MAX_INTER,
                         &k->shared_inter, err)))
        return rc;
    if (k->top_k > k->experts) {
        char a[64], b[64];
        return fg_err_set(err, FG_E_RANGE, "%s: %s %llu is more than the %llu routed experts (%s)",
                          c->origin, fg__cfg_key_used(c, "num_experts_per_tok|moe_top_k", a,
                                                      sizeof a),
                          (unsigned long long)k->top_k, (unsigned long long)k->experts,
                          fg__cfg_key_used(c, "n_routed_experts|moe_num_experts|"
                                           "num_local_experts|num_experts", b, sizeof b));
    }
    if ((rc = read_placement(c, k, err)))
        return rc;
    return check_conventions(c, m, k, err);
}

/* ---- blocks ------------------------------------------------------------- */

/* One Step3p7DecoderLayer: input_layernorm, attention, post_attention_layernorm, MLP or MoE. */
static int add_block(struct fg_model *m, uint64_t l, const struct step_cfg *k, struct fg_err *err)
{
    int32_t li = (int32_t)l;
    uint64_t heads = k->sliding[l] ? k->sliding_heads : m->heads;
    const struct fg_attn_shape a = {
        .hidden = m->hidden, .heads = heads, .kv_heads = m->kv_heads, .head_dim = m->head_dim,
        .window = k->window[l], .qkv_bias = k->attn_bias, .o_bias = k->attn_bias,
        .qk_norm = 1, .qk_norm_kind = FG_NORM_RMS};
    struct fg_node *n;
    int rc;
    if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)) ||
        (rc = fg__add_attention(m, li, &a, &n, err)))
        return rc;
    /* g_proj: a sigmoid gate on each head's output, bias-free */
    fg__node_linear(n, "gate", m->hidden, heads * k->gate_width, 1, false);
    size_t len = strlen(n->desc);
    fg__fmt(n->desc + len, sizeof n->desc - len, ", gated");
    if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)))
        return rc;
    if (!k->sparse[l]) {
        const struct fg_mlp_shape f = {.hidden = m->hidden, .inter = m->inter, .gated = true,
                                       .bias = k->mlp_bias};
        return fg__add_mlp(m, li, &f, NULL, err);
    }
    /* Step3p7TopKRouter weight (experts, hidden) and e_score_correction_bias (the
     * checkpoint's moe.router_bias, conversion_mapping.py "step3p7"); Step3p7Experts
     * gate_up_proj (experts, 2 x moe_intermediate_size, hidden) and down_proj; peft maps no
     * target onto them (step3p7 is not in _MODEL_TO_CONVERSION_PATTERN's mixtral / qwen2_moe
     * rows) */
    const struct fg_moe_shape ms = {
        .hidden = m->hidden, .experts = k->experts, .top_k = k->top_k, .inter = k->moe_inter,
        .shared_inter = k->shared_inter, .shared_n = 1, .gated = true, .fused_gate_up = true,
        .score_bias = true, .lora_experts = FG_LORA_EXPERTS_NONE};
    if ((rc = fg__add_moe(m, li, &ms, &n, err)))
        return rc;
    if (k->mlp_bias) /* the shared Step3p7MLP's gate / up / down biases */
        n->params += 2 * k->shared_inter + m->hidden;
    return 0;
}

static int add_layer(struct fg_model *m, int32_t layer, const void *ctx, struct fg_err *err)
{
    return add_block(m, (uint64_t)layer, ctx, err);
}

/* A block reads nothing of its layer but its attention kind, window and whether its MLP is
 * sparse. */
static bool layers_alike(const void *ctx, uint64_t a, uint64_t b)
{
    const struct step_cfg *k = ctx;
    return k->sliding[a] == k->sliding[b] && k->window[a] == k->window[b] &&
           k->sparse[a] == k->sparse[b];
}

/*
 * The MTP layers model.layers.<num_hidden_layers + i>, which Step3p7TextModel lists in
 * _keys_to_ignore_on_load_unexpected: each a decoder layer of its mtp_layer_types /
 * mtp_mlp_layer_types entry (dense unless moe_layers_enum names it) plus enorm, hnorm,
 * eh_proj Linear(2 x hidden, hidden), shared_head.norm and shared_head.output (vocab x
 * hidden), and no embed_tokens of its own (sgl-project/sglang@03d73863b6:
 * python/sglang/srt/models/step3p5_mtp.py Step3p5AMultiTokenPredictor: 17 tensors a layer
 * with a dense block, the 51 of the three MTP layers the REAP prune of Step-3.7-Flash
 * lists).  The FP8 release keeps them in bf16: no scales.
 */
static int add_mtp_rule(struct fg_model *m, const struct step_cfg *k, struct fg_err *err)
{
    struct fg_model *x = fg__model_scratch(m, err);
    if (!x)
        return FG_E_NOMEM;
    int rc = 0;
    for (uint64_t i = 0; i < k->nextn && !rc; i++)
        rc = add_block(x, k->layers + i, k, err);
    uint64_t block = rc ? 0 : fg_model_params_of(x, FG_NODE_KIND_COUNT);
    fg_model_free(x);
    if (rc)
        return rc;
    uint64_t h = m->hidden;
    fg__model_rule_optional(m, "num_nextn_predict_layers", "MTP layers "
                            "(num_nextn_predict_layers): block + enorm, hnorm, eh_proj 2h->h, "
                            "shared_head norm and output",
                            (int64_t)(block + k->nextn * (3 * h + 2 * h * h + m->vocab * h)));
    fg__model_note(m, "num_nextn_predict_layers=%llu: MTP layers (model.layers.%llu) counted "
                   "as stored; transformers does not build them: memory leaves them out",
                   (unsigned long long)k->nextn, (unsigned long long)k->layers);
    return 0;
}

static int read_step3p7(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                        struct fg_err *err)
{
    (void)spec;
    int rc;
    struct step_cfg *k = calloc(1, sizeof *k);
    if (!k)
        return fg_err_set(err, FG_E_NOMEM, "out of memory");
    uint64_t bo = 0, bi = 0;
    if ((rc = fg__read_core(c, m, &step3p7_d, err)) ||
        (rc = fg_cfg_u64(c, "num_nextn_predict_layers|num_mtp_layers", 0, 0, STEP_MAX_MTP,
                         &k->nextn, err)))
        goto out;
    k->layers = m->layers;
    if ((rc = read_experts(c, m, k, err)) || (rc = read_attention(c, m, k, err)) ||
        (rc = fg__moe_read_quant(c, m, &bo, &bi, err)))
        goto out;
    m->experts = k->experts;
    m->top_k = k->top_k;

    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)))
        goto out;
    if ((rc = fg__add_layers_alike(m, m->layers, add_layer, layers_alike, k, err)))
        goto out;
    if ((rc = fg__add_norm(m, -1, "Final norm", m->hidden, FG_NORM_RMS, err)) ||
        (rc = fg__add_head(m, m->vocab, m->hidden, m->tied, false, false, err)))
        goto out;
    if (k->nextn && (rc = add_mtp_rule(m, k, err)))
        goto out;
    fg__moe_fp8_rule(m, bo, bi, bo ? fg__moe_fp8_scales(m, bo, bi) : 0);
out:
    free(k);
    return rc;
}

const struct fg_arch fg__arch_step3p7_table[] = {
#include "arch/moe/step3p7.def"
    {0},
};
