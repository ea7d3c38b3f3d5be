/*
 * rwkv_xlstm_recurrent_gemma.c - the recurrent language models, read from their transformers modeling
 * files:
 *
 *   recurrent_gemma  RecurrentGemmaForCausalLM  models/recurrent_gemma (Griffin: RG-LRU
 *                                               recurrent blocks and local attention)
 *   rwkv             RwkvForCausalLM            models/rwkv (RWKV-4 time-mix / channel-mix)
 *   xlstm            xLSTMForCausalLM           models/xlstm (mLSTM blocks, xLSTM 7B)
 *
 * Their recurrent mixers are FG_NODE_MAMBA2 nodes whose fields give memory_node.c the state
 * the model carries per sequence (see each builder); the parameters are the class's.
 */
#include <stdio.h>
#include <string.h>

#include "arch/hybrid/ssm.h"
#include "util/fmt.h"

/* ---- RecurrentGemma -------------------------------------------------------- */

struct rgemma {
    uint64_t lru, conv, window, heads;
    bool attn_bias;
    bool attn[FG_MAX_LAYERS];
};

/*
 * RecurrentGemmaRecurrentBlock (transformers modeling_recurrent_gemma.py @0233e509):
 * linear_y and linear_x hidden -> lru_width and linear_out back, all biased; conv_1d
 * depthwise over lru_width with conv1d_width taps and bias; RecurrentGemmaRglru:
 * recurrent_param (W), input_gate_weight / recurrent_gate_weight (heads x bw x bw, bw = W /
 * heads) and their biases (heads x bw).  The cache is rg_lru.recurrent_states (W, fp32) and
 * conv1d_state ((width - 1) x W): a node of W heads of width 1 and state 1.
 */
static int add_rglru(struct fg_model *m, int32_t li, const struct rgemma *g, struct fg_err *err)
{
    struct fg_node *n = fg__model_add_block(m, FG_NODE_MAMBA2, li, "Recurrent", err);
    if (!n)
        return FG_E_NOMEM;
    uint64_t h = m->hidden, w = g->lru, bw = w / g->heads;
    fg__node_linear(n, "linear_y", h, w, 1, true);
    fg__node_linear(n, "linear_x", h, w, 1, true);
    fg__node_linear(n, "linear_out", w, h, 1, true);
    n->params += w * g->conv + w;                          /* conv_1d */
    n->params += w + 2 * (g->heads * bw * bw + w);         /* rg_lru */
    n->hidden = n->width = (uint32_t)h;
    n->ssm_heads = (uint32_t)w;
    n->ssm_head_dim = 1;
    n->state = 1;
    n->conv_kernel = (uint32_t)g->conv;
    fg__fmt(n->desc, sizeof n->desc, "RG-LRU %llu wide, %llu gate blocks, conv %llu",
            (unsigned long long)w, (unsigned long long)g->heads, (unsigned long long)g->conv);
    return 0;
}

static int read_rgemma_cfg(const struct fg_cfg *c, struct fg_model *m, struct rgemma *g,
                           struct fg_err *err)
{
    static const struct fg_core_defaults d = {.vocab = 256000, .hidden = 2560,
                                              .inter = 3 * 2560, .layers = 26, .heads = 10,
                                              .max_pos = 8192, .tie = true};
    int rc;
    if ((rc = fg__read_core(c, m, &d, err)) ||
        (rc = fg_cfg_u64(c, "lru_width", m->hidden, 1, FG_MAX_HIDDEN, &g->lru, err)) ||
        (rc = fg_cfg_u64(c, "conv1d_width", 4, 1, 1024, &g->conv, err)) ||
        (rc = fg_cfg_u64(c, "attention_window_size", 2048, 1, FG_MAX_POS, &g->window, err)) ||
        (rc = fg_cfg_bool(c, "attention_bias", false, &g->attn_bias, err)))
        return rc;
    g->heads = m->heads;
    if (g->lru % g->heads)
        return fg_err_set(err, FG_E_RANGE, "%s: lru_width %llu is not a multiple of "
                          "num_attention_heads %llu (the RG-LRU gate blocks)", c->origin,
                          (unsigned long long)g->lru, (unsigned long long)g->heads);
    if (m->inter % 2)
        return fg_err_set(err, FG_E_RANGE, "%s: intermediate_size %llu is odd; RecurrentGemmaMlp "
                          "is intermediate_size / 2 wide", c->origin,
                          (unsigned long long)m->inter);
    /* layers_block_type = (block_types * 100)[:num_hidden_layers]; configs saved by 4.40 name
     * the list _block_types */
    const char *types[FG_MAX_LAYERS];
    size_t nt = 0;
    if ((rc = fg_cfg_str_array(c, "block_types|_block_types", types, FG_MAX_LAYERS, &nt, err)))
        return rc;
    static const char *const def[] = {"recurrent", "recurrent", "attention"};
    if (nt == 0) {
        nt = 3;
        memcpy(types, def, sizeof def);
    }
    for (uint64_t l = 0; l < m->layers; l++) {
        const char *t = types[l % nt];
        if (strcmp(t, "recurrent") && strcmp(t, "attention"))
            return fg_err_set(err, FG_E_RANGE, "%s: key 'block_types' has unknown kind '%s'; "
                              "known: recurrent, attention", c->origin, t);
        g->attn[l] = !strcmp(t, "attention");
    }
    return 0;
}

/*
 * RecurrentGemmaModel (modeling_recurrent_gemma.py @0233e509, configuration @052b1dcd):
 * embed_tokens; per layer temporal_pre_norm, a recurrent block or RecurrentGemmaSdpaAttention
 * (q / k / v biased by attention_bias, o_proj always biased; head_dim = hidden / heads; the
 * cache holds attention_window_size tokens), channel_pre_norm, RecurrentGemmaMlp (gate / up
 * hidden -> intermediate_size / 2 and down, all biased); final_norm; lm_head tied by
 * tie_word_embeddings (default true).  RMSNorms store hidden weights; the normalizer
 * buffer is non-persistent.
 */
int fg__ssm_read_recurrent_gemma(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                                 struct fg_err *err)
{
    (void)spec;
    struct rgemma g = {0};
    int rc = read_rgemma_cfg(c, m, &g, err);
    if (rc)
        return rc;
    const struct fg_attn_shape a = {.hidden = m->hidden, .heads = m->heads,
                                    .kv_heads = m->kv_heads, .head_dim = m->head_dim,
                                    .window = g.window, .qkv_bias = g.attn_bias, .o_bias = true};
    const struct fg_mlp_shape f = {.hidden = m->hidden, .inter = m->inter / 2, .gated = true,
                                   .bias = true};
    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)))
        return rc;
    for (uint64_t l = 0; l < m->layers; l++) {
        int32_t li = (int32_t)l;
        if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)) ||
            (rc = g.attn[l] ? fg__add_attention(m, li, &a, NULL, err) : add_rglru(m, li, &g, err)) ||
            (rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)) ||
            (rc = fg__add_mlp(m, li, &f, NULL, err)))
            return rc;
    }
    if ((rc = fg__add_norm(m, -1, "Final norm", m->hidden, FG_NORM_RMS, err)))
        return rc;
    return fg__add_head(m, m->vocab, m->hidden, m->tied, false, false, err);
}

/* ---- RWKV-4 ------------------------------------------------------------------- */

/*
 * RwkvSelfAttention (transformers modeling_rwkv.py @058a04a3): time_decay and time_first
 * (A each), time_mix_key / value / receptance (hidden each), key / value / receptance
 * hidden -> A and output A -> hidden, no biases.  The state RwkvModel keeps per layer is
 * the numerator, denominator and max of the WKV (A each, fp32) and the two token-shift
 * vectors (hidden each, the model dtype): a node of A heads of width 1, state 3 and a
 * kernel of 3 (two shifted tokens' worth of conv state).
 */
static int add_time_mix(struct fg_model *m, int32_t li, uint64_t att, struct fg_err *err)
{
    struct fg_node *n = fg__model_add_block(m, FG_NODE_MAMBA2, li, "TimeMix", err);
    if (!n)
        return FG_E_NOMEM;
    uint64_t h = m->hidden;
    fg__node_linear(n, "key", h, att, 1, false);
    fg__node_linear(n, "value", h, att, 1, false);
    fg__node_linear(n, "receptance", h, att, 1, false);
    fg__node_linear(n, "output", att, h, 1, false);
    n->params += 2 * att + 3 * h;
    n->hidden = n->width = (uint32_t)h;
    n->ssm_heads = (uint32_t)att;
    n->ssm_head_dim = 1;
    n->state = 3;
    n->conv_kernel = 3;
    fg__fmt(n->desc, sizeof n->desc, "RWKV-4 time-mix %llu wide", (unsigned long long)att);
    return 0;
}

/*
 * RwkvFeedForward: time_mix_key / time_mix_receptance (hidden each), key hidden -> I,
 * value I -> hidden, receptance hidden -> hidden, no biases: an MLP node (key as up, value
 * as down) with the receptance gate and the mixing vectors added.
 */
static int add_channel_mix(struct fg_model *m, int32_t li, struct fg_err *err)
{
    const struct fg_mlp_shape f = {.hidden = m->hidden, .inter = m->inter};
    struct fg_node *n;
    int rc = fg__add_mlp(m, li, &f, &n, err);
    if (rc)
        return rc;
    fg__node_linear(n, "receptance", m->hidden, m->hidden, 1, false);
    n->params += 2 * m->hidden;
    fg__fmt(n->desc, sizeof n->desc, "RWKV-4 channel-mix %llu", (unsigned long long)m->inter);
    return 0;
}

/* RwkvBlock: pre_ln in block 0 only, ln1, the time-mix, ln2, the channel-mix; arg points
 * at attention_hidden_size. */
static int add_rwkv_block(struct fg_model *m, int32_t li, const void *arg, struct fg_err *err)
{
    uint64_t att = *(const uint64_t *)arg;
    int rc;
    if (li == 0 && (rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_LN, err)))
        return rc;
    if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_LN, err)) ||
        (rc = add_time_mix(m, li, att, err)) ||
        (rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_LN, err)))
        return rc;
    return add_channel_mix(m, li, err);
}

/*
 * RwkvModel (modeling_rwkv.py @058a04a3; RwkvConfig @053f59ef): embeddings; RwkvBlock i
 * has LayerNorms ln1, ln2 (weight and bias) and, in block 0 only, pre_ln; ln_out; the head
 * Linear(hidden, vocab, bias=False), tied by tie_word_embeddings (RwkvConfig default false).
 * attention_hidden_size defaults to hidden, intermediate_size to 4 x hidden.
 */
int fg__ssm_read_rwkv(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                      struct fg_err *err)
{
    (void)spec;
    uint64_t att;
    int rc;
    if ((rc = fg_cfg_u64(c, "vocab_size", 50277, 1, FG_MAX_VOCAB, &m->vocab, err)) ||
        (rc = fg_cfg_u64(c, "hidden_size", 4096, 1, FG_MAX_HIDDEN, &m->hidden, err)) ||
        (rc = fg_cfg_u64(c, "num_hidden_layers", 32, 1, FG_MAX_LAYERS, &m->layers, err)) ||
        (rc = fg_cfg_u64(c, "context_length", 1024, 1, FG_MAX_POS, &m->max_pos, err)) ||
        (rc = fg_cfg_u64(c, "attention_hidden_size", m->hidden, 1, FG_MAX_HIDDEN, &att, err)) ||
        (rc = fg_cfg_u64(c, "intermediate_size", 4 * m->hidden, 1, FG_MAX_INTER, &m->inter,
                         err)) ||
        (rc = fg_cfg_bool(c, "tie_word_embeddings", false, &m->tied, err)))
        return rc;
    return fg__ssm_build_uniform(m, FG_NORM_LN, add_rwkv_block, &att, 2, err);
}

/* ---- xLSTM ------------------------------------------------------------------- */

struct xlstm {
    uint64_t heads, qk, v, ffn;
    bool bias;
};

/*
 * xLSTMLayer (transformers modeling_xlstm.py @00bb1d12; xLSTMConfig @124ddc4e): q / k
 * hidden -> int(hidden x qk_dim_factor), v and ogate_preact hidden -> int(hidden x
 * v_dim_factor), all biased by use_bias; igate / fgate_preact hidden -> num_heads with bias
 * (weight_mode "fused" stores the same as two fused matrices); multihead_norm over v (bias by
 * use_bias); out_proj v -> hidden.  The state xLSTMCache keeps per layer is C (heads x
 * qk / heads x v / heads), n and m: a node of num_heads heads of v / heads with a state of
 * qk / heads and no conv taps.
 */
static int add_mlstm(struct fg_model *m, int32_t li, const struct xlstm *x, struct fg_err *err)
{
    struct fg_node *n = fg__model_add_block(m, FG_NODE_MAMBA2, li, "mLSTM", err);
    if (!n)
        return FG_E_NOMEM;
    uint64_t h = m->hidden;
    fg__node_linear(n, "q", h, x->qk, 1, x->bias);
    fg__node_linear(n, "k", h, x->qk, 1, x->bias);
    fg__node_linear(n, "v", h, x->v, 1, x->bias);
    fg__node_linear(n, "ogate", h, x->v, 1, x->bias);
    fg__node_linear(n, "igate", h, x->heads, 1, true);
    fg__node_linear(n, "fgate", h, x->heads, 1, true);
    fg__node_linear(n, "out_proj", x->v, h, 1, x->bias);
    n->params += x->v * (x->bias ? 2 : 1); /* multihead_norm */
    n->hidden = n->width = (uint32_t)h;
    n->ssm_heads = (uint32_t)x->heads;
    n->ssm_head_dim = (uint32_t)(x->v / x->heads);
    n->state = (uint32_t)(x->qk / x->heads);
    n->conv_kernel = 1;
    fg__fmt(n->desc, sizeof n->desc, "mLSTM %llu heads, qk %llu, v %llu",
            (unsigned long long)x->heads, (unsigned long long)x->qk, (unsigned long long)x->v);
    return 0;
}

/* xLSTMBlock: norm_mlstm, the mLSTM layer, norm_ffn (xLSTMRMSNorm, bias by use_bias) and
 * xLSTMFeedForward (proj_up_gate and proj_up hidden -> F, proj_down back, bias by use_bias). */
static int add_xlstm_block(struct fg_model *m, int32_t li, const void *arg, struct fg_err *err)
{
    const struct xlstm *x = arg;
    enum fg_norm_kind nk = x->bias ? FG_NORM_LN : FG_NORM_RMS; /* weight, and bias when set */
    const struct fg_mlp_shape f = {.hidden = m->hidden, .inter = x->ffn, .gated = true,
                                   .bias = x->bias};
    int rc;
    if ((rc = fg__add_norm(m, li, "Norm", m->hidden, nk, err)) ||
        (rc = add_mlstm(m, li, x, err)) ||
        (rc = fg__add_norm(m, li, "Norm", m->hidden, nk, err)))
        return rc;
    return fg__add_mlp(m, li, &f, NULL, err);
}

/*
 * xLSTMModel: embeddings vocab x embedding_dim (= hidden_size), num_blocks blocks, out_norm
 * (built whatever add_out_norm says; weight only); xLSTMForCausalLM's lm_head without bias,
 * tied by tie_word_embeddings (default false).  hidden_size / embedding_dim and
 * num_hidden_layers / num_blocks are aliases.  The FFN width is round_up_to_next_multiple_of(
 * hidden x ffn_proj_factor, ffn_round_up_to_multiple_of): floor((x + m - 1) / m) x m.
 */
int fg__ssm_read_xlstm(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                       struct fg_err *err)
{
    (void)spec;
    struct xlstm x = {0};
    double qkf, vf, ff;
    uint64_t mult;
    int rc;
    if ((rc = fg_cfg_u64(c, "vocab_size", 50304, 1, FG_MAX_VOCAB, &m->vocab, err)) ||
        (rc = fg_cfg_u64(c, "hidden_size|embedding_dim", 4096, 1, FG_MAX_HIDDEN, &m->hidden,
                         err)) ||
        (rc = fg_cfg_u64(c, "num_hidden_layers|num_blocks", 32, 1, FG_MAX_LAYERS, &m->layers,
                         err)) ||
        (rc = fg_cfg_u64(c, "num_heads", 8, 1, FG_MAX_HEADS, &x.heads, err)) ||
        (rc = fg_cfg_bool(c, "use_bias", false, &x.bias, err)) ||
        (rc = fg_cfg_bool(c, "tie_word_embeddings", false, &m->tied, err)) ||
        (rc = fg_cfg_f64(c, "qk_dim_factor", 0.5, 0.001, 64.0, &qkf, err)) ||
        (rc = fg_cfg_f64(c, "v_dim_factor", 1.0, 0.001, 64.0, &vf, err)) ||
        (rc = fg_cfg_f64(c, "ffn_proj_factor", 2.667, 0.001, 64.0, &ff, err)) ||
        (rc = fg_cfg_u64(c, "ffn_round_up_to_multiple_of", 64, 1, 1u << 16, &mult, err)))
        return rc;
    x.qk = (uint64_t)((double)m->hidden * qkf);
    x.v = (uint64_t)((double)m->hidden * vf);
    double up = (double)m->hidden * ff;
    x.ffn = (uint64_t)((up + (double)(mult - 1)) / (double)mult) * mult;
    if (!x.qk || !x.v || x.qk % x.heads || x.v % x.heads || !x.ffn || x.ffn > FG_MAX_INTER)
        return fg_err_set(err, FG_E_RANGE, "%s: the mLSTM widths (qk %llu, v %llu, ffn %llu) "
                          "must be positive multiples of num_heads %llu", c->origin,
                          (unsigned long long)x.qk, (unsigned long long)x.v,
                          (unsigned long long)x.ffn, (unsigned long long)x.heads);
    m->heads = x.heads;
    m->inter = x.ffn;
    return fg__ssm_build_uniform(m, FG_NORM_RMS, add_xlstm_block, &x, 1, err);
}
