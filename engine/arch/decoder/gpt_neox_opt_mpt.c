/*
 * gpt_neox_opt_mpt.c - the GPT-2-era decoders people still fine-tune, each read from its
 * transformers modeling file (huggingface/transformers@001002320fa0; MPT's file read at
 * 0206c7b0):
 *
 *   gpt_neox     GPTNeoXForCausalLM   models/gpt_neox/modeling_gpt_neox.py (Pythia, Dolly,
 *                                     RedPajama-INCITE, GPT-NeoX-20B)
 *   opt          OPTForCausalLM       models/opt/modeling_opt.py
 *   gpt_bigcode  GPTBigCodeForCausalLM models/gpt_bigcode/modeling_gpt_bigcode.py (StarCoder 1,
 *                                     SantaCoder, WizardCoder-15B)
 *   mpt          MptForCausalLM       models/mpt/modeling_mpt.py
 *   gpt_neo      GPTNeoForCausalLM    models/gpt_neo/modeling_gpt_neo.py
 *
 * All are one block - norm, attention, norm, MLP - with LayerNorms, biases in different
 * places, learned or rotary / ALiBi positions.  A reader resolves the config into struct
 * classic; one builder turns it into nodes.  The causal-mask buffers these classes register
 * (GPTNeoXAttention, GPTNeoSelfAttention, GPTBigCodeModel "bias") are non-persistent in
 * transformers, so the checkpoints it writes do not hold them; files converted from older
 * saves can, and 'fitgate verify' shows it.
 */
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "util/fmt.h"

struct classic {
    enum fg_norm_kind norm;
    uint64_t pos_rows;         /* learned position table rows, 0 = none (rotary, ALiBi) */
    uint64_t embed_dim;        /* token embedding and head width (OPT word_embed_proj_dim) */
    bool final_norm;
    bool head_bias;
    uint64_t attn_buffers;     /* stored buffer scalars in each attention (old GPT-NeoX files) */
    struct fg_attn_shape a;
    struct fg_mlp_shape f;
};

static int build(struct fg_model *m, const struct classic *k, struct fg_err *err)
{
    int rc;
    if ((rc = fg__add_embedding(m, m->vocab, k->embed_dim, err)))
        return rc;
    if (k->pos_rows && (rc = fg__add_table(m, FG_NODE_POS_EMBED, "Position embedding", k->pos_rows,
                                      m->hidden, NULL, err)))
        return rc;
    if (k->embed_dim != m->hidden) {
        /* OPTDecoder project_in (embed -> hidden) and project_out (hidden -> embed), no bias */
        struct fg_node *n;
        if ((rc = fg__add_table(m, FG_NODE_OTHER, "Projections", 2 * k->embed_dim,
                                          m->hidden, &n, err)))
            return rc;
        fg__fmt(n->desc, sizeof n->desc, "project_in %llu -> %llu, project_out back",
                (unsigned long long)k->embed_dim, (unsigned long long)m->hidden);
    }
    /* the blocks read nothing of their layer: those after the first are copies of it */
    const struct fg_block_step steps[] = {
        {.kind = FG_STEP_NORM, .norm = k->norm},
        {.kind = FG_STEP_ATTN, .attn = &k->a, .buffers = k->attn_buffers},
        {.kind = FG_STEP_NORM, .norm = k->norm},
        {.kind = FG_STEP_MLP, .mlp = &k->f},
    };
    if ((rc = fg__add_blocks(m, steps, 4, err)))
        return rc;
    if (k->final_norm && (rc = fg__add_norm(m, -1, "Final norm", m->hidden, k->norm, err)))
        return rc;
    return fg__add_head(m, m->vocab, k->embed_dim, m->tied, false, k->head_bias, err);
}

/* The block every reader starts from: MHA over m's sizes, a plain MLP of m->inter. */
static struct classic plain(const struct fg_model *m, enum fg_norm_kind norm, bool bias)
{
    struct classic k = {
        .norm = norm, .embed_dim = m->hidden, .final_norm = true,
        .a = {.hidden = m->hidden, .heads = m->heads, .kv_heads = m->kv_heads,
              .head_dim = m->head_dim, .qkv_bias = bias, .o_bias = bias, .fused_qkv = true},
        .f = {.hidden = m->hidden, .inter = m->inter, .gated = false, .bias = bias},
    };
    return k;
}

/*
 * GPTNeoXLayer: input_layernorm and post_attention_layernorm (LayerNorm with bias; the
 * parallel residual of use_parallel_residual changes no shape), GPTNeoXAttention
 * query_key_value hidden -> 3 x hidden and dense, both biased by attention_bias (default
 * true); GPTNeoXMLP dense_h_to_4h / dense_4h_to_h with bias; final_layer_norm; embed_out
 * without bias, untied by default.  Rotary over rotary_pct of head_dim.  GPTNeoXConfig
 * defaults (GPT-NeoX-20B).
 *
 * Files written by early transformers hold each attention's buffers too: the causal mask
 * "bias" (max_position_embeddings^2 bools), "masked_bias" (one scalar) and the rotary
 * inv_freq (rotary_ndims / 2).  EleutherAI/pythia-1b's model.safetensors (config 4.24.0) is
 * 2,090,701,528 B: its 1,011,781,632 fp16 weights are 2,023,563,264 B, and the other
 * 67.1 MB are the 16 masks of 2048 x 2048 bools plus the header.  transformers no longer
 * registers them persistently; the release that changed it is not pinned here, so a config
 * written before 4.25 is counted with them, one from 4.32 on (or unversioned) without, and
 * one between is said unsure.
 */
static int read_gpt_neox(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                         struct fg_err *err)
{
    (void)spec;
    static const struct fg_core_defaults d = {.vocab = 50432, .hidden = 6144, .inter = 24576,
                                              .layers = 44, .heads = 64, .max_pos = 2048,
                                              .tie = false};
    bool bias;
    int rc;
    if ((rc = fg__read_core(c, m, &d, err)) ||
        (rc = fg_cfg_bool(c, "attention_bias", true, &bias, err)))
        return rc;
    struct classic k = plain(m, FG_NORM_LN, true);
    k.a.qkv_bias = k.a.o_bias = bias;
    unsigned ver = fg__cfg_tf_version(c);
    if (ver && ver < 4032) {
        double pct;
        if ((rc = fg_cfg_f64(c, "rotary_pct|partial_rotary_factor", 0.25, 0.0, 1.0, &pct, err)))
            return rc;
        if (m->max_pos > (1u << 20))
            return fg_err_set(err, FG_E_RANGE, "%s: key 'max_position_embeddings' = %llu: a "
                              "file of this transformers version stores a square mask of that "
                              "side per layer; at most %u is accepted", c->origin,
                              (unsigned long long)m->max_pos, 1u << 20);
        k.attn_buffers = m->max_pos * m->max_pos + 1 + (uint64_t)((double)m->head_dim * pct) / 2;
        fg__model_rule(m, "attention bias / masked_bias / inv_freq buffers stored per layer "
                          "(written by transformers < 4.32; in Attention)", 0);
        if (ver >= 4025)
            fg__model_unsure(m, "transformers_version", "unsure: key 'transformers_version' "
                             "falls between 4.24, whose GPT-NeoX files store the attention "
                             "masks, and 4.32: counted with them");
    }
    return build(m, &k, err);
}

/*
 * OPTDecoder: embed_tokens vocab x word_embed_proj_dim, OPTLearnedPositionalEmbedding of
 * max_position_embeddings + 2 rows (its offset of 2), project_in / project_out when
 * word_embed_proj_dim differs from hidden_size; OPTDecoderLayer self_attn q/k/v/out_proj
 * and fc1 / fc2 biased by enable_bias, self_attn_layer_norm and final_layer_norm
 * (LayerNorm, without weights when layer_norm_elementwise_affine is false); the decoder's
 * final_layer_norm only when do_layer_norm_before and not _remove_final_layer_norm
 * (OPT-350m has none); lm_head word_embed_proj_dim -> vocab, tied by default.  OPTConfig
 * defaults (OPT-125m).
 */
static int read_opt(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                    struct fg_err *err)
{
    (void)spec;
    static const struct fg_core_defaults d = {.vocab = 50272, .hidden = 768, .inter = 3072,
                                              .layers = 12, .heads = 12, .max_pos = 2048,
                                              .tie = true};
    bool bias, affine, before, removed;
    uint64_t proj;
    int rc;
    if ((rc = fg__read_core(c, m, &d, err)) ||
        (rc = fg_cfg_bool(c, "enable_bias", true, &bias, err)) ||
        (rc = fg_cfg_bool(c, "layer_norm_elementwise_affine", true, &affine, err)) ||
        (rc = fg_cfg_bool(c, "do_layer_norm_before", true, &before, err)) ||
        (rc = fg_cfg_bool(c, "_remove_final_layer_norm", false, &removed, err)) ||
        (rc = fg_cfg_u64(c, "word_embed_proj_dim", m->hidden, 1, FG_MAX_HIDDEN, &proj, err)))
        return rc;
    struct classic k = plain(m, affine ? FG_NORM_LN : FG_NORM_LN_NOPARAM, bias);
    k.a.fused_qkv = false;
    k.pos_rows = m->max_pos + 2;
    k.embed_dim = proj;
    k.final_norm = before && !removed;
    return build(m, &k, err);
}

/*
 * GPTBigCodeModel: wte, wpe of n_positions rows; GPTBigCodeBlock ln_1, attn c_attn hidden
 * -> hidden + 2 x kv_dim (kv_dim = head_dim under multi_query, the default, else hidden)
 * and c_proj, both biased; ln_2, mlp c_fc / c_proj to n_inner (4 x hidden when null) with
 * bias; ln_f; lm_head tied by default.  GPTBigCodeConfig defaults.
 */
static int read_gpt_bigcode(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                            struct fg_err *err)
{
    (void)spec;
    static const struct fg_core_defaults d = {.vocab = 50257, .hidden = 768, .inter = 0,
                                              .layers = 12, .heads = 12, .max_pos = 1024,
                                              .tie = true};
    bool mq, cross;
    int rc;
    if ((rc = fg__read_core(c, m, &d, err)) ||
        (rc = fg_cfg_bool(c, "multi_query", true, &mq, err)) ||
        (rc = fg_cfg_bool(c, "add_cross_attention", false, &cross, err)))
        return rc;
    if (cross)
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: key 'add_cross_attention' is true: "
                          "GPTBigCode blocks with cross-attention are not supported", c->origin);
    m->kv_heads = mq ? 1 : m->heads;
    struct classic k = plain(m, FG_NORM_LN, true);
    k.pos_rows = m->max_pos;
    return build(m, &k, err);
}

/*
 * MptModel: wte (ALiBi, no position table), MptBlock norm_1 / norm_2 LayerNorms whose bias
 * transformers sets to None, MptAttention Wqkv hidden -> 3 x hidden and out_proj without
 * bias, MptMLP up_proj / down_proj without bias, norm_f without bias, lm_head tied.
 * transformers builds MptMLP 4 x hidden wide and always ALiBi: a config asking for
 * another expansion_ratio, for biases (no_bias false), for q/k LayerNorms or for learned
 * positions instead of ALiBi describes MosaicML's remote code, which stores other
 * tensors, so the count (taken at expansion_ratio) is unsure.  MptConfig defaults.
 */
static int read_mpt(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                    struct fg_err *err)
{
    (void)spec;
    static const struct fg_core_defaults d = {.vocab = 50368, .hidden = 2048, .inter = 0,
                                              .layers = 24, .heads = 16, .max_pos = 2048,
                                              .tie = true};
    double ratio;
    bool no_bias, qk_ln = false, alibi = true;
    int rc;
    if ((rc = fg__read_core(c, m, &d, err)) ||
        (rc = fg_cfg_f64(c, "expansion_ratio", 4.0, 0.01, 256.0, &ratio, err)) ||
        (rc = fg_cfg_bool(c, "no_bias", true, &no_bias, err)))
        return rc;
    struct fg_cfg ac;
    if (fg_cfg_has(c, "attn_config")) {
        if (!fg_cfg_child(c, "attn_config", &ac, err))
            return err ? err->code : FG_E_TYPE;
        if ((rc = fg_cfg_bool(&ac, "qk_ln", false, &qk_ln, err)) ||
            (rc = fg_cfg_bool(&ac, "alibi", true, &alibi, err)))
            return rc;
    }
    m->inter = (uint64_t)(ratio * (double)m->hidden);
    if (ratio != 4.0)
        fg__model_unsure(m, "expansion_ratio", "unsure: key 'expansion_ratio' = %g: "
                         "transformers' MptMLP is 4 x hidden wide; counted at %g", ratio, ratio);
    if (!no_bias)
        fg__model_unsure(m, "no_bias", "unsure: key 'no_bias' is false: MosaicML's remote "
                         "code stores biases that transformers' Mpt classes do not build");
    if (qk_ln)
        fg__model_unsure(m, "attn_config.qk_ln", "unsure: key 'attn_config.qk_ln' is true: "
                         "q/k LayerNorms that transformers' MptAttention does not build");
    if (!alibi)
        fg__model_unsure(m, "attn_config.alibi", "unsure: key 'attn_config.alibi' is false: a "
                         "learned position table that transformers' MptModel does not build");
    struct classic k = plain(m, FG_NORM_LN_NOBIAS, false);
    return build(m, &k, err);
}

/*
 * GPTNeoModel: wte, wpe of max_position_embeddings rows; GPTNeoBlock ln_1, attn
 * (GPTNeoSelfAttention: q_proj / k_proj / v_proj without bias, out_proj with bias; the
 * local layers of attention_types mask a full score matrix, so no window is counted),
 * ln_2, mlp c_fc / c_proj to intermediate_size (4 x hidden when null) with bias; ln_f;
 * lm_head tied.  GPTNeoConfig defaults (GPT-Neo 1.3B).
 */
static int read_gpt_neo(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                        struct fg_err *err)
{
    (void)spec;
    static const struct fg_core_defaults d = {.vocab = 50257, .hidden = 2048, .inter = 0,
                                              .layers = 24, .heads = 16, .max_pos = 2048,
                                              .tie = true};
    int rc = fg__read_core(c, m, &d, err);
    if (rc)
        return rc;
    struct classic k = plain(m, FG_NORM_LN, true);
    k.a.qkv_bias = false;
    k.a.fused_qkv = false;
    k.pos_rows = m->max_pos;
    return build(m, &k, err);
}

const struct fg_arch fg__arch_classic_table[] = {
#include "arch/decoder/gpt_neox_opt_mpt.def"
    {0},
};
