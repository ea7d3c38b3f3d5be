/*
 * nomic_bert.c - nomic_bert: NomicBertModel, nomic-ai/nomic-bert-2048 remote code
 * (modeling_hf_nomic_bert.py), with the megablocks MoE layers of nomic-embed-text-v2-moe.
 * A BERT-like encoder of its own code and config (a GPT2Config), apart from the
 * transformers encoders of bert_family.c.
 */
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "util/fmt.h"

/* ---- nomic_bert ----------------------------------------------------------- */

/*
 * NomicBertModel (NomicBertConfig is a GPT2Config: n_embd, n_layer, n_head,
 * n_inner, n_positions):
 *   embeddings   word (vocab rounded up to pad_vocab_size_multiple), a
 *                position table only when rotary_emb_fraction is 0,
 *                token_type when type_vocab_size > 0, then emb_ln
 *   attention    Wqkv fused hidden -> 3 hidden and out_proj, both biased by
 *                qkv_proj_bias; norm1 after it (post-norm; prenorm moves the
 *                norms, not their count)
 *   MLP          fc1 / fc2 biased by mlp_fc1_bias / mlp_fc2_bias; GLU
 *                activations use fc11 + fc12 of n_inner (default 8h/3)
 *                rounded up to 256 (NomciBertGatedMLP)
 *   MoE          layers with i % moe_every_n_layers == 1: router
 *                hidden -> num_experts without bias, megablocks experts w1 / w2
 *                of num_experts x n_inner x hidden without per-expert bias,
 *                one shared output bias of hidden
 *   pooler       only with add_pooling_layer
 * nomic-embed-text-v2-moe counts 475,292,928 with these shapes (the Hub's
 * safetensors total).
 */
static int read_nomic_bert(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                           struct fg_err *err)
{
    (void)spec;
    /* GPT2Config defaults under NomicBertConfig's own. */
    static const struct fg_core_defaults d = {.vocab = 50257, .hidden = 768, .inter = 0,
                                              .layers = 12, .heads = 12, .max_pos = 1024,
                                              .tie = true};
    int rc;
    uint64_t pad, types, experts, top_k, every, shared;
    double rotary;
    bool qkv_bias, fc1_bias, fc2_bias, parallel, pooler, causal;
    const char *act = NULL;
    /* fg__read_core checks the heads only without head_dim; NomicBert ignores that key and
     * always splits the hidden size into heads. */
    if ((rc = fg__read_core(c, m, &d, err)) ||
        (rc = fg__check_heads(c, "hidden_size|n_embd", m->hidden, "num_attention_heads|n_head",
                              m->heads, err)) ||
        (rc = fg_cfg_u64(c, "pad_vocab_size_multiple", 1, 1, 1u << 16, &pad, err)) ||
        (rc = fg_cfg_u64(c, "type_vocab_size", 2, 0, FG_MAX_VOCAB, &types, err)) ||
        (rc = fg_cfg_f64(c, "rotary_emb_fraction", 0.0, 0.0, 1.0, &rotary, err)) ||
        (rc = fg_cfg_bool(c, "qkv_proj_bias", true, &qkv_bias, err)) ||
        (rc = fg_cfg_bool(c, "mlp_fc1_bias", true, &fc1_bias, err)) ||
        (rc = fg_cfg_bool(c, "mlp_fc2_bias", true, &fc2_bias, err)) ||
        (rc = fg_cfg_bool(c, "parallel_block", false, &parallel, err)) ||
        (rc = fg_cfg_bool(c, "add_pooling_layer", false, &pooler, err)) ||
        (rc = fg_cfg_bool(c, "causal", false, &causal, err)) ||
        (rc = fg_cfg_str(c, "activation_function", "gelu_new", &act, err)) ||
        (rc = fg_cfg_u64(c, "num_experts", 0, 0, FG_MAX_EXPERTS, &experts, err)) ||
        (rc = fg_cfg_u64(c, "moe_top_k", 1, 1, FG_MAX_EXPERTS, &top_k, err)) ||
        (rc = fg_cfg_u64(c, "moe_every_n_layers", 0, 0, FG_MAX_LAYERS, &every, err)) ||
        (rc = fg_cfg_u64(c, "num_shared_experts", 0, 0, FG_MAX_EXPERTS, &shared, err)))
        return rc;
    if (parallel)
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: key 'parallel_block' is true: the parallel "
                          "NomicBert block is not supported", c->origin);
    if (shared)
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: key 'num_shared_experts' = %llu: shared "
                          "experts in NomicBert MoE layers are not supported", c->origin,
                          (unsigned long long)shared);
    if (every && experts < 2)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'moe_every_n_layers' = %llu needs "
                          "'num_experts' of at least 2 (got %llu)", c->origin,
                          (unsigned long long)every, (unsigned long long)experts);
    if (every && top_k > experts)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'moe_top_k' = %llu exceeds 'num_experts' = "
                          "%llu", c->origin, (unsigned long long)top_k,
                          (unsigned long long)experts);
    bool gated = !strcmp(act, "glu") || !strcmp(act, "swiglu") || !strcmp(act, "geglu");
    if (gated) {
        uint64_t inter = fg_cfg_has(c, "n_inner|intermediate_size") ? m->inter : 8 * m->hidden / 3;
        m->inter = (inter + 255) / 256 * 256;
    }
    m->vocab = (m->vocab + pad - 1) / pad * pad;

    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)))
        return rc;
    if (rotary <= 0.0 && (rc = fg__add_table(m, FG_NODE_POS_EMBED, "Position embedding", m->max_pos,
                                    m->hidden, NULL, err)))
        return rc;
    if (types && (rc = fg__add_table(m, FG_NODE_POS_EMBED, "Token type embedding", types,
                                     m->hidden, NULL, err)))
        return rc;
    if ((rc = fg__add_norm(m, -1, "Embedding norm", m->hidden, FG_NORM_LN, err)))
        return rc;
    struct fg_attn_shape a = {.hidden = m->hidden, .heads = m->heads, .kv_heads = m->kv_heads,
                              .head_dim = m->head_dim, .qkv_bias = qkv_bias, .o_bias = qkv_bias,
                              .fused_qkv = true, .bidirectional = !causal};
    struct fg_mlp_shape f = {.hidden = m->hidden, .inter = m->inter, .gated = gated,
                             .bias = fc1_bias};
    for (uint64_t l = 0; l < m->layers; l++) {
        int32_t li = (int32_t)l;
        if ((rc = fg__add_attention(m, li, &a, NULL, err)))
            return rc;
        if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_LN, err)))
            return rc;
        if (every && l % every == 1) {
            const struct fg_moe_shape ms = {.hidden = m->hidden, .experts = experts,
                                            .top_k = top_k, .inter = m->inter};
            struct fg_node *n;
            if ((rc = fg__add_moe(m, li, &ms, &n, err)))
                return rc;
            n->params += m->hidden; /* the experts' one shared output bias */
            fg__fmt(n->desc, sizeof n->desc, "%llu experts top-%llu x%llu",
                     (unsigned long long)experts, (unsigned long long)top_k,
                     (unsigned long long)m->inter);
        } else {
            /* fg__add_mlp biases both linears alike; fc2's bias follows its own key. */
            struct fg_node *n;
            if ((rc = fg__add_mlp(m, li, &f, &n, err)))
                return rc;
            if (fc1_bias != fc2_bias)
                n->params = fc2_bias ? n->params + m->hidden : n->params - m->hidden;
        }
        if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_LN, err)))
            return rc;
    }
    if (pooler && (rc = fg__add_pooler(m, m->hidden, err)))
        return rc;
    if (every) {
        m->experts = experts;
        m->top_k = top_k;
    }
    m->encoder_only = true;
    m->tied = true;
    return 0;
}

const struct fg_arch fg__arch_nomic_table[] = {
#include "arch/encoder/nomic_bert.def"
    {0},
};
