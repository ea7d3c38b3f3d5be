/*
 * fairseq_decoders.c - fairseq-style decoders (learned or sinusoidal positions, biased MHA,
 * fc1 / fc2, LayerNorms), each read from its transformers modeling file
 * (huggingface/transformers):
 *
 *   xglm    XGLMForCausalLM    models/xglm/modeling_xglm.py (facebook/xglm-*)
 *   biogpt  BioGptForCausalLM  models/biogpt/modeling_biogpt.py (microsoft/biogpt)
 *   trocr   TrOCRForCausalLM   models/trocr/modeling_trocr.py (the text decoder of the
 *                              microsoft/trocr-* VisionEncoderDecoder checkpoints)
 *   openai-gpt  OpenAIGPTLMHeadModel  models/openai/modeling_openai.py (004edfe2; GPT-1)
 *   ctrl    CTRLLMHeadModel    models/ctrl/modeling_ctrl.py (Salesforce/ctrl)
 *   bert-generation  BertGenerationDecoder / BertGenerationEncoder
 *                              models/bert_generation/modeling_bert_generation.py
 *   gpt_neox_japanese  GPTNeoXJapaneseForCausalLM  models/gpt_neox_japanese/
 *                              modeling_gpt_neox_japanese.py (00d4b3d2)
 *   cpmant  CpmAntForCausalLM  models/cpmant/modeling_cpmant.py (00a91481; openbmb/cpm-ant-10b)
 *
 * One builder over struct dec: token embedding, [learned position table,]
 * [layernorm_embedding,] layers of self_attn + norm, [encoder_attn over a kdim-wide
 * encoder + norm,] fc1 / fc2 + norm, [final layer_norm], head without bias.  Sinusoidal
 * tables these classes keep as non-persistent buffers (XGLMSinusoidalPositionalEmbedding
 * "weights", TrOCRSinusoidalPositionalEmbedding) are not in the checkpoint and are a few
 * MB at most: not counted.
 */
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/encdec/marian_pegasus.h"
#include "util/fmt.h"

struct dec {
    uint64_t pos_rows;     /* learned table rows, 0 = sinusoidal buffer (not stored) */
    bool emb_norm;         /* layernorm_embedding */
    bool final_norm;       /* the decoder's layer_norm */
    bool cross;            /* encoder_attn + encoder_attn_layer_norm in every layer */
    bool cross_runs;       /* the cross-attention has an encoder to attend (else stored only) */
    uint64_t kdim;         /* encoder width the cross-attention's k_proj / v_proj read */
    bool fused_qkv;        /* one c_attn projection (OpenAI GPT's Conv1D) */
    bool head_bias;        /* the LM head's own bias (CTRL) */
    bool encoder;          /* bidirectional attention and no head (BertGenerationEncoder) */
};

/* An encoder_attn the model stores but does not run (TrOCR alone has no encoder): its
 * four biased projections, k_proj / v_proj from kdim, and its norm, as one node. */
static int unused_cross(struct fg_model *m, int32_t li, const void *ctx, struct fg_err *err)
{
    const struct dec *k = ctx;
    const uint64_t d = m->hidden;
    return fg__seq_unused_cross(m, li, 2 * (d * d + d) + 2 * (k->kdim * d + d) + 2 * d, err);
}

static int build(struct fg_model *m, const struct dec *k, struct fg_err *err)
{
    int rc;
    const uint64_t d = m->hidden;
    if ((rc = fg__add_embedding(m, m->vocab, d, err)))
        return rc;
    if (k->pos_rows && (rc = fg__add_table(m, FG_NODE_POS_EMBED, "Position embedding",
                                           k->pos_rows, d, NULL, err)))
        return rc;
    if (k->emb_norm && (rc = fg__add_norm(m, -1, "Embedding norm", d, FG_NORM_LN, err)))
        return rc;
    struct fg_attn_shape a = {.hidden = d, .heads = m->heads, .kv_heads = m->heads,
                              .head_dim = m->head_dim, .qkv_bias = true, .o_bias = true,
                              .fused_qkv = k->fused_qkv, .bidirectional = k->encoder};
    struct fg_mlp_shape f = {.hidden = d, .inter = m->inter, .bias = true};
    /* An encoder_attn whose k_proj / v_proj read kdim-wide encoder states (TrOCRAttention
     * with kdim = vdim = cross_attention_hidden_size), all four biased. */
    struct fg_attn_shape x = a;
    x.cross = true;
    x.fused_qkv = x.bidirectional = false;
    /* post-norm: self_attn, its norm, [encoder_attn and its norm,] fc1 / fc2, their norm */
    const struct fg_block_step self = {.kind = FG_STEP_ATTN, .attn = &a},
        norm = {.kind = FG_STEP_NORM, .norm = FG_NORM_LN},
        cross = {.kind = FG_STEP_ATTN, .attn = &x, .kdim = k->kdim != d ? k->kdim : 0},
        unused = {.kind = FG_STEP_CALL, .call = unused_cross, .ctx = k},
        mlp = {.kind = FG_STEP_MLP, .mlp = &f};
    struct fg_block_step block[6];
    size_t n = 0;
    block[n++] = self;
    block[n++] = norm;
    if (k->cross && !k->cross_runs)
        block[n++] = unused;
    if (k->cross && k->cross_runs) {
        block[n++] = cross;
        block[n++] = norm;
    }
    block[n++] = mlp;
    block[n++] = norm;
    if ((rc = fg__add_blocks(m, block, n, err)))
        return rc;
    if (k->final_norm && (rc = fg__add_norm(m, -1, "Final norm", d, FG_NORM_LN, err)))
        return rc;
    if (k->encoder) {
        m->encoder_only = true;
        m->tied = true; /* no head */
        return 0;
    }
    return fg__add_head(m, m->vocab, d, m->tied, false, k->head_bias, err);
}

/* keys[i] NULL: the size has no key in the family's config (OpenAI GPT's MLP is fixed at
 * 4 x n_embd); defaults[i] is then taken as a multiple of the hidden size. */
static int read_sizes(const struct fg_cfg *c, struct fg_model *m, const char *const keys[6],
                      const uint64_t defaults[6], struct fg_err *err)
{
    bool tie;
    int rc;
    if ((rc = fg_cfg_u64(c, keys[0], defaults[0], 1, FG_MAX_VOCAB, &m->vocab, err)) ||
        (rc = fg_cfg_u64(c, keys[1], defaults[1], 1, FG_MAX_HIDDEN, &m->hidden, err)) ||
        (rc = fg_cfg_u64(c, keys[2], defaults[2], 1, FG_MAX_LAYERS, &m->layers, err)) ||
        (rc = fg_cfg_u64(c, keys[3], defaults[3], 1, FG_MAX_HEADS, &m->heads, err)) ||
        (keys[4] && (rc = fg_cfg_u64(c, keys[4], defaults[4], 1, FG_MAX_INTER, &m->inter,
                                     err))) ||
        (rc = fg_cfg_u64(c, keys[5], defaults[5], 1, FG_MAX_POS, &m->max_pos, err)) ||
        (rc = fg_cfg_bool(c, "tie_word_embeddings", true, &tie, err)) ||
        (rc = fg__check_heads(c, keys[1], m->hidden, keys[3], m->heads, err)))
        return rc;
    if (!keys[4])
        m->inter = defaults[4] * m->hidden;
    m->kv_heads = m->heads;
    m->head_dim = m->hidden / m->heads;
    m->tied = tie;
    return 0;
}

/*
 * XGLMModel: embed_tokens (XGLMScaledWordEmbedding, vocab x d_model), sinusoidal positions
 * (a non-persistent buffer), XGLMDecoderLayer pre-norm: self_attn (q/k/v/out_proj, bias),
 * self_attn_layer_norm, encoder_attn + its norm only when add_cross_attention, fc1 / fc2
 * (bias), final_layer_norm; layer_norm; lm_head (no bias) tied.  XGLMConfig defaults
 * (xglm-564M).
 */
static int read_xglm(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                     struct fg_err *err)
{
    (void)spec;
    static const char *const keys[6] = {"vocab_size", "d_model", "num_layers",
                                        "attention_heads", "ffn_dim",
                                        "max_position_embeddings"};
    static const uint64_t defaults[6] = {256008, 1024, 24, 16, 4096, 2048};
    struct dec k = {.final_norm = true};
    int rc;
    if ((rc = read_sizes(c, m, keys, defaults, err)) ||
        (rc = fg_cfg_bool(c, "add_cross_attention", false, &k.cross, err)))
        return rc;
    k.kdim = m->hidden;
    return build(m, &k, err);
}

/*
 * BioGptModel: embed_tokens (BioGptScaledWordEmbedding), embed_positions
 * BioGptLearnedPositionalEmbedding of max_position_embeddings + 2 rows (the fairseq
 * offset), BioGptDecoderLayer pre-norm: self_attn (bias), self_attn_layer_norm, fc1 / fc2
 * to intermediate_size (bias), final_layer_norm; layer_norm; output_projection (no bias)
 * tied.  BioGptConfig defaults (microsoft/biogpt).
 */
static int read_biogpt(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                       struct fg_err *err)
{
    (void)spec;
    static const char *const keys[6] = {"vocab_size", "hidden_size", "num_hidden_layers",
                                        "num_attention_heads", "intermediate_size",
                                        "max_position_embeddings"};
    static const uint64_t defaults[6] = {42384, 1024, 24, 16, 4096, 1024};
    int rc = read_sizes(c, m, keys, defaults, err);
    if (rc)
        return rc;
    struct dec k = {.pos_rows = m->max_pos + 2, .final_norm = true, .kdim = m->hidden};
    return build(m, &k, err);
}

/*
 * TrOCRDecoder: embed_tokens, TrOCRLearnedPositionalEmbedding of max_position_embeddings +
 * 2 rows when use_learned_position_embeddings (else a sinusoidal buffer, not stored),
 * layernorm_embedding when layernorm_embedding, TrOCRDecoderLayer post-norm: self_attn
 * (bias), self_attn_layer_norm, encoder_attn with k_proj / v_proj from
 * cross_attention_hidden_size (d_model when null) + encoder_attn_layer_norm (built when
 * is_decoder, which TrOCRForCausalLM always sets), fc1 / fc2 (bias), final_layer_norm; no
 * final norm; output_projection (no bias), tied by tie_word_embeddings.  Alone, the model
 * has no encoder to attend: the cross-attention is stored, not run.  TrOCRConfig defaults
 * (trocr-large).
 */
static int read_trocr(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                      struct fg_err *err)
{
    (void)spec;
    static const char *const keys[6] = {"vocab_size", "d_model", "decoder_layers",
                                        "decoder_attention_heads", "decoder_ffn_dim",
                                        "max_position_embeddings"};
    static const uint64_t defaults[6] = {50265, 1024, 12, 16, 4096, 512};
    bool learned, emb_norm, ignored;
    struct dec k = {.cross = true};
    int rc;
    /* TrOCRDecoderLayer builds encoder_attn on is_decoder, not on add_cross_attention,
     * which the microsoft/trocr-* decoder configs write true: read, no shape changes. */
    if ((rc = read_sizes(c, m, keys, defaults, err)) ||
        (rc = fg_cfg_bool(c, "add_cross_attention", true, &ignored, err)) ||
        (rc = fg_cfg_bool(c, "use_learned_position_embeddings", true, &learned, err)) ||
        (rc = fg_cfg_bool(c, "layernorm_embedding", true, &emb_norm, err)) ||
        (rc = fg_cfg_u64(c, "cross_attention_hidden_size", m->hidden, 1, FG_MAX_HIDDEN,
                         &k.kdim, err)))
        return rc;
    k.pos_rows = learned ? m->max_pos + 2 : 0;
    k.emb_norm = emb_norm;
    return build(m, &k, err);
}

/*
 * OpenAIGPTModel: tokens_embed, positions_embed of n_positions rows, Block post-norm:
 * Attention c_attn Conv1D(n_embd -> 3 x n_embd) and c_proj, both biased (its "bias" causal
 * mask is registered non-persistent: not in the file transformers writes), ln_1, MLP c_fc /
 * c_proj to 4 x n_embd (biased; no config key), ln_2; no final norm; lm_head (no bias) tied.
 * OpenAIGPTConfig defaults (openai-community/openai-gpt).
 */
static int read_openai_gpt(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                           struct fg_err *err)
{
    (void)spec;
    static const char *const keys[6] = {"vocab_size", "n_embd", "n_layer", "n_head", NULL,
                                        "n_positions"};
    static const uint64_t defaults[6] = {40478, 768, 12, 12, 4, 512};
    int rc = read_sizes(c, m, keys, defaults, err);
    if (rc)
        return rc;
    struct dec k = {.pos_rows = m->max_pos, .fused_qkv = true, .kdim = m->hidden};
    return build(m, &k, err);
}

/*
 * CTRLModel: w (vocab x n_embd), sinusoidal pos_encoding (a plain attribute, not stored),
 * EncoderLayer pre-norm: layernorm1, MultiHeadAttention Wq / Wk / Wv / dense (nn.Linear,
 * biased), layernorm2, ffn Linear(n_embd, dff) -> ReLU -> Linear(dff, n_embd) (biased);
 * layernorm; CTRLLMHeadModel lm_head nn.Linear(n_embd, vocab, bias=True) whose weight is
 * tied to w and whose bias is stored.  CTRLConfig defaults (Salesforce/ctrl).
 */
static int read_ctrl(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                     struct fg_err *err)
{
    (void)spec;
    static const char *const keys[6] = {"vocab_size", "n_embd", "n_layer", "n_head", "dff",
                                        "n_positions"};
    static const uint64_t defaults[6] = {246534, 1280, 48, 16, 8192, 256};
    int rc = read_sizes(c, m, keys, defaults, err);
    if (rc)
        return rc;
    struct dec k = {.final_norm = true, .head_bias = true, .kdim = m->hidden};
    return build(m, &k, err);
}

/*
 * BertGenerationEncoder: BertGenerationEmbeddings (word_embeddings, position_embeddings of
 * max_position_embeddings rows, LayerNorm; no token types), BERT layers post-norm (query /
 * key / value / output dense biased + LayerNorm, crossattention of the same shape + its
 * LayerNorm when add_cross_attention, intermediate / output dense biased + LayerNorm), no
 * pooler.  BertGenerationDecoder adds BertGenerationOnlyLMHead: decoder Linear(hidden,
 * vocab) whose weight is tied to word_embeddings (tie_word_embeddings) and whose bias is
 * its own Parameter.  The decoder is the class 'architectures' names or is_decoder asks
 * for; otherwise the bidirectional encoder without a head.  Standalone, the
 * cross-attention has no encoder to attend: stored, not run.  Relative position tables
 * (position_embedding_type relative_key*) are refused.  BertGenerationConfig defaults.
 */
static int read_bert_generation(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                                struct fg_err *err)
{
    (void)spec;
    static const char *const keys[6] = {"vocab_size", "hidden_size", "num_hidden_layers",
                                        "num_attention_heads", "intermediate_size",
                                        "max_position_embeddings"};
    static const uint64_t defaults[6] = {50358, 1024, 24, 16, 4096, 512};
    struct dec k = {.emb_norm = true, .head_bias = true};
    bool decoder = false, is_decoder;
    const char *pos = NULL;
    int rc;
    if ((rc = read_sizes(c, m, keys, defaults, err)) ||
        (rc = fg_cfg_bool(c, "add_cross_attention", false, &k.cross, err)) ||
        (rc = fg_cfg_bool(c, "is_decoder", false, &is_decoder, err)) ||
        (rc = fg_cfg_str(c, "position_embedding_type", "absolute", &pos, err)) ||
        (rc = fg__cfg_has_arch(c, "BertGenerationDecoder", &decoder, err)))
        return rc;
    if (strcmp(pos, "absolute"))
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: key 'position_embedding_type' = '%s': "
                          "only absolute positions are read for bert-generation", c->origin,
                          pos);
    k.pos_rows = m->max_pos;
    k.kdim = m->hidden;
    k.encoder = !decoder && !is_decoder;
    return build(m, &k, err);
}

/*
 * GPTNeoXJapaneseModel: embed_in, GPTNeoXJapaneseLayer: input_layernorm and
 * post_attention_layernorm (LayerNorm), attention query_key_value hidden -> 3 x hidden and
 * dense, both without bias, plus dense_bias (hidden) in the last layer alone (use_bias =
 * layer_number == num_hidden_layers - 1), rotary over rotary_pct; mlp dense_h_to_4h /
 * dense_4h_to_h to hidden x intermediate_multiple_size, no biases; final_layer_norm;
 * embed_out (no bias), tied by tie_word_embeddings (PretrainedConfig's default true: the
 * config class sets none).  GPTNeoXJapaneseConfig defaults (gpt-neox-japanese-2.7b).
 */
/* One GPTNeoXJapaneseLayer; the last also holds the attention's dense_bias. */
static int neoxj_layer(struct fg_model *m, int32_t li, const struct fg_attn_shape *a,
                       const struct fg_mlp_shape *f, bool last, struct fg_err *err)
{
    struct fg_node *n;
    int rc;
    if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_LN, err)) ||
        (rc = fg__add_attention(m, li, a, &n, err)))
        return rc;
    if (last)
        n->params += m->hidden; /* dense_bias */
    if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_LN, err)) ||
        (rc = fg__add_mlp(m, li, f, NULL, err)))
        return rc;
    return 0;
}

static int read_gpt_neox_japanese(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                                  struct fg_err *err)
{
    (void)spec;
    static const char *const keys[6] = {"vocab_size", "hidden_size", "num_hidden_layers",
                                        "num_attention_heads", NULL, "max_position_embeddings"};
    static const uint64_t defaults[6] = {32000, 2560, 32, 32, 4, 2048};
    uint64_t mult;
    int rc;
    if ((rc = read_sizes(c, m, keys, defaults, err)) ||
        (rc = fg_cfg_u64(c, "intermediate_multiple_size", 4, 1, 1u << 10, &mult, err)))
        return rc;
    m->inter = m->hidden * mult;
    struct fg_attn_shape a = {.hidden = m->hidden, .heads = m->heads, .kv_heads = m->heads,
                              .head_dim = m->head_dim, .fused_qkv = true};
    struct fg_mlp_shape f = {.hidden = m->hidden, .inter = m->inter};
    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)))
        return rc;
    /* the layers before the last are copies of the first */
    const uint64_t L = m->layers;
    size_t first = m->n_nodes;
    for (uint64_t l = 0; l < L; l++) {
        int32_t li = (int32_t)l;
        if (l == 1 && L > 2 && fg__model_repeat_block(m, first, 1, (uint32_t)(L - 2)))
            l = L - 2; /* layers 1 .. L - 2 added; the loop goes on with the last */
        else if ((rc = neoxj_layer(m, li, &a, &f, l + 1 == L, err)))
            return rc;
    }
    if ((rc = fg__add_norm(m, -1, "Final norm", m->hidden, FG_NORM_LN, err)))
        return rc;
    return fg__add_head(m, m->vocab, m->hidden, m->tied, false, false, err);
}

/*
 * CpmAntModel: input_embedding of vocab_size + prompt_types x prompt_length rows,
 * segment_embedding (segment_types rows), position_bias CpmAntSegmentPositionEmbedding
 * (relative_attention_bias segment_types^2 + position_bias_num_buckets rows x heads, one for
 * the model), CpmAntTransformerBlock pre-norm: CpmAntLayerNorm (weight only),
 * project_q / k / v hidden -> heads x dim_head and attention_out back, no biases,
 * CpmAntLayerNorm, w_0 / w_1 gated to dim_ff and w_out, no biases; output_layernorm.
 * CpmAntForCausalLM: lm_head Linear(hidden, vocab_size, bias=False), which the checkpoint
 * ships on its own (_tied_weights_keys is empty: a vocab-sized slice of the prompt-extended
 * embedding cannot be tied), so tie_word_embeddings changes nothing.  CpmAntConfig
 * defaults (cpm-ant-10b).
 */
static int read_cpmant(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                       struct fg_err *err)
{
    (void)spec;
    static const char *const keys[6] = {"vocab_size", "hidden_size", "num_hidden_layers",
                                        "num_attention_heads", "dim_ff", "max_position_embeddings"};
    static const uint64_t defaults[6] = {30720, 4096, 48, 32, 10240, 2048};
    uint64_t dim_head, ptypes, plen, segs, buckets;
    int rc;
    if ((rc = read_sizes(c, m, keys, defaults, err)) ||
        (rc = fg_cfg_u64(c, "dim_head", 128, 1, 1u << 14, &dim_head, err)) ||
        (rc = fg_cfg_u64(c, "prompt_types", 32, 0, 1u << 12, &ptypes, err)) ||
        (rc = fg_cfg_u64(c, "prompt_length", 32, 0, 1u << 16, &plen, err)) ||
        (rc = fg_cfg_u64(c, "segment_types", 32, 1, 1u << 12, &segs, err)) ||
        (rc = fg_cfg_u64(c, "position_bias_num_buckets", 512, 1, 1u << 20, &buckets, err)))
        return rc;
    m->head_dim = dim_head;
    m->tied = false;
    struct fg_node *n;
    if ((rc = fg__add_embedding(m, m->vocab + ptypes * plen, m->hidden, err)) ||
        (rc = fg__add_table(m, FG_NODE_OTHER, "Segment embedding", segs, m->hidden, NULL, err)) ||
        (rc = fg__add_table(m, FG_NODE_OTHER, "Position bias", segs * segs + buckets, m->heads,
                            &n, err)))
        return rc;
    struct fg_attn_shape a = {.hidden = m->hidden, .heads = m->heads, .kv_heads = m->heads,
                              .head_dim = dim_head};
    struct fg_mlp_shape f = {.hidden = m->hidden, .inter = m->inter, .gated = true};
    const struct fg_block_step block[] = {
        {.kind = FG_STEP_NORM, .norm = FG_NORM_RMS}, {.kind = FG_STEP_ATTN, .attn = &a},
        {.kind = FG_STEP_NORM, .norm = FG_NORM_RMS}, {.kind = FG_STEP_MLP, .mlp = &f},
    };
    if ((rc = fg__add_blocks(m, block, sizeof block / sizeof block[0], err)) ||
        (rc = fg__add_norm(m, -1, "Final norm", m->hidden, FG_NORM_RMS, err)))
        return rc;
    return fg__add_head(m, m->vocab, m->hidden, false, false, false, err);
}

const struct fg_arch fg__arch_seq_dec_table[] = {
#include "arch/decoder/fairseq_decoders.def"
    {0},
};
