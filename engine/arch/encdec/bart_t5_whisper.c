/*
 * bart_t5_whisper.c - encoder-decoders (the bidirectional encoders alone are bert_family.c):
 *
 *   bart, mbart  BartForConditionalGeneration, MBartForConditionalGeneration (models/bart,
 *                models/mbart)
 *   t5, mt5, umt5  T5ForConditionalGeneration / T5EncoderModel (models/t5),
 *                MT5ForConditionalGeneration (models/mt5, same tensors), UMT5 (models/umt5)
 *   whisper      WhisperForConditionalGeneration (models/whisper)
 *
 * The encoder nodes go to FG_STACK_ENCODER (names prefixed "Enc."), the decoder to
 * FG_STACK_MAIN; the shared token embedding sits in the main stack.  T5 and Whisper
 * blocks are pre-norm, BART post-norm.  What a checkpoint stores beyond the modules is a
 * named rule, as in bert_family.c.
 */
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "util/fmt.h"

/* ---- helpers -------------------------------------------------------------- */

/* is_encoder_decoder (PretrainedConfig): the modeling class builds its stacks whatever the
 * key says (T5ForConditionalGeneration both, T5EncoderModel the encoder alone, by
 * architectures), so it is read, type-checked, and changes no shape. */
static int read_enc_dec_flag(const struct fg_cfg *c, struct fg_err *err)
{
    bool v;
    return fg_cfg_bool(c, "is_encoder_decoder", true, &v, err);
}

/* Move nodes [from, end) to the encoder stack, names prefixed "Enc.". */
static void mark_encoder(struct fg_model *m, size_t from)
{
    for (size_t i = from; i < m->n_nodes; i++) {
        struct fg_node *n = &m->nodes[i];
        char name[sizeof n->name] = {0}; /* zeroed past the NUL, as every node's name */
        n->stack = FG_STACK_ENCODER;
        fg__fmt(name, sizeof name, "Enc.%.27s", n->name);
        memcpy(n->name, name, sizeof n->name);
    }
}

/* ---- BART / mBART --------------------------------------------------------- */

struct bart_spec {
    uint64_t vocab, d_model, layers, heads, ffn, max_pos;
    bool final_ln;          /* encoder.layer_norm / decoder.layer_norm (MBart) */
};

/* BartConfig defaults (bart-large). */
static const struct bart_spec bart = {.vocab = 50265, .d_model = 1024, .layers = 12,
                                      .heads = 16, .ffn = 4096, .max_pos = 1024};
/* MBartConfig defaults (mbart-large-cc25). */
static const struct bart_spec mbart = {.vocab = 50265, .d_model = 1024, .layers = 12,
                                       .heads = 16, .ffn = 4096, .max_pos = 1024,
                                       .final_ln = true};

/* One BART stack: learned positions (max_position_embeddings + 2 rows: BartLearnedPositional-
 * Embedding's offset), layernorm_embedding, post-norm layers of biased q/k/v/out_proj,
 * self_attn_layer_norm, [encoder_attn + its LayerNorm,] fc1 / fc2 (biased), final_layer_norm;
 * MBart adds the stack's layer_norm. */
static int bart_stack(struct fg_model *m, uint64_t layers, uint64_t heads, uint64_t ffn,
                      uint64_t max_pos, bool decoder, bool final_ln, struct fg_err *err)
{
    int rc;
    if ((rc = fg__add_table(m, FG_NODE_POS_EMBED, "Position embedding", max_pos + 2, m->hidden,
                            NULL, err)))
        return rc;
    if ((rc = fg__add_norm(m, -1, "Embedding norm", m->hidden, FG_NORM_LN, err)))
        return rc;
    struct fg_attn_shape a = {.hidden = m->hidden, .heads = heads, .kv_heads = heads,
                              .head_dim = m->hidden / heads, .qkv_bias = true, .o_bias = true,
                              .bidirectional = !decoder};
    struct fg_attn_shape x = a;
    x.bidirectional = false;
    x.cross = true;
    struct fg_mlp_shape f = {.hidden = m->hidden, .inter = ffn, .bias = true};
    for (uint64_t l = 0; l < layers; l++) {
        int32_t li = (int32_t)l;
        if ((rc = fg__add_attention(m, li, &a, NULL, err)) ||
            (rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_LN, err)))
            return rc;
        if (decoder && ((rc = fg__add_attention(m, li, &x, NULL, err)) ||
                        (rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_LN, err))))
            return rc;
        if ((rc = fg__add_mlp(m, li, &f, NULL, err)) ||
            (rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_LN, err)))
            return rc;
    }
    if (final_ln)
        return fg__add_norm(m, -1, decoder ? "Final norm" : "Norm", m->hidden, FG_NORM_LN, err);
    return 0;
}

/*
 * BartModel / BartForConditionalGeneration (models/bart/modeling_bart.py) and
 * MBart (models/mbart): one shared embedding (encoder and decoder embed_tokens
 * are tied to it), two stacks, lm_head tied to it.  ForConditionalGeneration
 * registers final_logits_bias (1 x vocab) as a persistent buffer: stored.
 * facebook/bart-base (BartModel): 139,420,416 (safetensors metadata table).
 */
static int read_bart(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                     struct fg_err *err)
{
    const struct bart_spec *s = spec;
    int rc;
    uint64_t enc_layers, enc_heads, enc_ffn;
    bool gen = false, final_ln, tie;
    if ((rc = read_enc_dec_flag(c, err)) ||
        (rc = fg_cfg_u64(c, "vocab_size", s->vocab, 1, FG_MAX_VOCAB, &m->vocab, err)) ||
        (rc = fg_cfg_u64(c, "d_model", s->d_model, 1, FG_MAX_HIDDEN, &m->hidden, err)) ||
        (rc = fg_cfg_u64(c, "encoder_layers", s->layers, 1, FG_MAX_LAYERS, &enc_layers, err)) ||
        (rc = fg_cfg_u64(c, "decoder_layers", s->layers, 1, FG_MAX_LAYERS, &m->layers, err)) ||
        (rc = fg_cfg_u64(c, "encoder_attention_heads", s->heads, 1, FG_MAX_HEADS, &enc_heads,
                         err)) ||
        (rc = fg_cfg_u64(c, "decoder_attention_heads", s->heads, 1, FG_MAX_HEADS, &m->heads,
                         err)) ||
        (rc = fg_cfg_u64(c, "encoder_ffn_dim", s->ffn, 1, FG_MAX_INTER, &enc_ffn, err)) ||
        (rc = fg_cfg_u64(c, "decoder_ffn_dim", s->ffn, 1, FG_MAX_INTER, &m->inter, err)) ||
        (rc = fg_cfg_u64(c, "max_position_embeddings", s->max_pos, 1, FG_MAX_POS, &m->max_pos,
                         err)) ||
        (rc = fg_cfg_bool(c, "add_final_layer_norm", s->final_ln, &final_ln, err)) ||
        (rc = fg_cfg_bool(c, "tie_word_embeddings", true, &tie, err)) ||
        (rc = fg__check_heads(c, "d_model", m->hidden, "encoder_attention_heads", enc_heads,
                              err)) ||
        (rc = fg__check_heads(c, "d_model", m->hidden, "decoder_attention_heads", m->heads, err)) ||
        (rc = fg__cfg_has_arch(c, s->final_ln ? "MBartForConditionalGeneration"
                                      : "BartForConditionalGeneration", &gen, err)))
        return rc;
    m->kv_heads = m->heads;
    m->head_dim = m->hidden / m->heads;
    m->enc_dec = true;
    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)))
        return rc;
    size_t enc_from = m->n_nodes;
    if ((rc = bart_stack(m, enc_layers, enc_heads, enc_ffn, m->max_pos, false, final_ln, err)))
        return rc;
    mark_encoder(m, enc_from);
    if ((rc = bart_stack(m, m->layers, m->heads, m->inter, m->max_pos, true, final_ln, err)))
        return rc;
    if (!gen) {
        m->tied = true; /* the base model: no lm_head */
        return 0;
    }
    struct fg_node *n;
    if ((rc = fg__add_table(m, FG_NODE_OTHER, "final_logits_bias", 1, m->vocab, &n, err)))
        return rc;
    n->buffers = n->params;
    fg__model_rule(m, "final_logits_bias buffer stored (in final_logits_bias)", 0);
    return fg__add_head(m, m->vocab, m->hidden, tie, false, false, err);
}

/* ---- T5 ------------------------------------------------------------------- */

struct t5_spec {
    uint64_t vocab, d_model, d_kv, d_ff, layers, heads, buckets;
    const char *ff_proj;
    bool tie;
    bool bias_every_layer;  /* UMT5: every self-attention owns relative_attention_bias */
    const char *encoder_class; /* the family's encoder-only class (T5EncoderModel ...) */
};

/* T5Config defaults (t5-small). */
static const struct t5_spec t5 = {.vocab = 32128, .d_model = 512, .d_kv = 64, .d_ff = 2048,
                                  .layers = 6, .heads = 8, .buckets = 32, .ff_proj = "relu",
                                  .tie = true, .encoder_class = "T5EncoderModel"};
/* UMT5Config defaults (umt5-small): mT5 blocks whose every self-attention holds its own
 * relative_attention_bias (UMT5Attention has_relative_attention_bias = True always,
 * models/umt5/modeling_umt5.py). */
static const struct t5_spec umt5 = {.vocab = 250112, .d_model = 512, .d_kv = 64, .d_ff = 1024,
                                    .layers = 8, .heads = 6, .buckets = 32,
                                    .ff_proj = "gated-gelu", .tie = true,
                                    .bias_every_layer = true,
                                    .encoder_class = "UMT5EncoderModel"};
/* MT5Config defaults (mt5-small): v1.1 blocks, untied head. */
static const struct t5_spec mt5 = {.vocab = 250112, .d_model = 512, .d_kv = 64, .d_ff = 1024,
                                   .layers = 8, .heads = 6, .buckets = 32,
                                   .ff_proj = "gated-gelu", .tie = false,
                                   .encoder_class = "MT5EncoderModel"};

/*
 * One T5 stack: per block T5LayerSelfAttention (T5LayerNorm = RMS weight
 * only, then q/k/v/o without bias over heads x d_kv; block 0 alone holds
 * relative_attention_bias, buckets x heads), in the decoder a
 * T5LayerCrossAttention of the same shape, then T5LayerFF (norm, wi or
 * wi_0 + wi_1 when gated, wo; no biases); final_layer_norm.
 */
static int t5_stack(struct fg_model *m, uint64_t layers, bool decoder, uint64_t d_ff, bool gated,
                    uint64_t buckets, bool every, const char *final_name, struct fg_err *err)
{
    int rc;
    struct fg_attn_shape a = {.hidden = m->hidden, .heads = m->heads, .kv_heads = m->heads,
                              .head_dim = m->head_dim, .bidirectional = !decoder};
    struct fg_attn_shape x = {.hidden = m->hidden, .heads = m->heads, .kv_heads = m->heads,
                              .head_dim = m->head_dim, .cross = true};
    struct fg_mlp_shape f = {.hidden = m->hidden, .inter = d_ff, .gated = gated};
    for (uint64_t l = 0; l < layers; l++) {
        int32_t li = (int32_t)l;
        struct fg_node *n;
        if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)))
            return rc;
        if ((rc = fg__add_attention(m, li, &a, &n, err)))
            return rc;
        if (l == 0 || every)
            n->params += buckets * m->heads;
        if (decoder && ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)) ||
                        (rc = fg__add_attention(m, li, &x, NULL, err))))
            return rc;
        if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)))
            return rc;
        if ((rc = fg__add_mlp(m, li, &f, NULL, err)))
            return rc;
    }
    return fg__add_norm(m, -1, final_name, m->hidden, FG_NORM_RMS, err);
}

static int read_t5(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                   struct fg_err *err)
{
    const struct t5_spec *s = spec;
    int rc;
    uint64_t enc_layers, dec_layers, d_ff, buckets;
    const char *ff = NULL;
    bool tie, encoder_only;
    if ((rc = fg_cfg_u64(c, "vocab_size", s->vocab, 1, FG_MAX_VOCAB, &m->vocab, err)) ||
        (rc = fg_cfg_u64(c, "d_model", s->d_model, 1, FG_MAX_HIDDEN, &m->hidden, err)) ||
        (rc = fg_cfg_u64(c, "d_kv", s->d_kv, 1, 1u << 14, &m->head_dim, err)) ||
        (rc = fg_cfg_u64(c, "d_ff", s->d_ff, 1, FG_MAX_INTER, &d_ff, err)) ||
        (rc = fg_cfg_u64(c, "num_layers", s->layers, 1, FG_MAX_LAYERS, &enc_layers, err)) ||
        (rc = fg_cfg_u64(c, "num_decoder_layers", enc_layers, 1, FG_MAX_LAYERS, &dec_layers,
                         err)) ||
        (rc = fg_cfg_u64(c, "num_heads", s->heads, 1, FG_MAX_HEADS, &m->heads, err)) ||
        (rc = fg_cfg_u64(c, "relative_attention_num_buckets", s->buckets, 1, 1u << 16, &buckets,
                         err)) ||
        (rc = fg_cfg_str(c, "feed_forward_proj", s->ff_proj, &ff, err)) ||
        (rc = fg_cfg_bool(c, "tie_word_embeddings", s->tie, &tie, err)) ||
        /* T5 has relative positions and no length limit; n_positions is the
         * length it was trained at when a config carries it. */
        (rc = fg_cfg_u64(c, "n_positions", 512, 1, FG_MAX_POS, &m->max_pos, err)) ||
        /* T5EncoderModel, MT5EncoderModel, UMT5EncoderModel (models/{t5,mt5,umt5}): the
         * shared table and the encoder stack, no decoder, no head */
        (rc = fg__cfg_has_arch(c, s->encoder_class, &encoder_only, err)) ||
        (rc = read_enc_dec_flag(c, err)))
        return rc;
    /* T5Config: "gated-ACT" or "ACT"; anything else raises, with the class's own message */
    const char *dash = strchr(ff, '-');
    bool gated = dash && (size_t)(dash - ff) == 5 && strncmp(ff, "gated", 5) == 0;
    if ((dash && !gated) || (gated && strchr(dash + 1, '-')) || !*ff || (gated && !dash[1]))
        return fg_err_set(err, FG_E_RANGE, "%s: T5Config: `feed_forward_proj`: %.60s is not a "
                          "valid activation function of the dense layer. Please make sure "
                          "`feed_forward_proj` is of the format `gated-{ACT_FN}` or `{ACT_FN}`, "
                          "e.g. 'gated-gelu' or 'relu'", c->origin, ff);
    m->kv_heads = m->heads;
    m->inter = d_ff;
    m->layers = encoder_only ? enc_layers : dec_layers;

    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)))
        return rc;
    size_t enc_from = m->n_nodes;
    if ((rc = t5_stack(m, enc_layers, false, d_ff, gated, buckets, s->bias_every_layer,
                       encoder_only ? "Final norm" : "Norm", err)))
        return rc;
    if (encoder_only) {
        /* T5EncoderModel: the encoder is the model. */
        m->encoder_only = true;
        m->tied = true;
        return 0;
    }
    mark_encoder(m, enc_from);
    if ((rc = t5_stack(m, dec_layers, true, d_ff, gated, buckets, s->bias_every_layer,
                       "Final norm", err)))
        return rc;
    m->enc_dec = true;
    /* The v1.0 checkpoints converted from Mesh TensorFlow (t5-small .. t5-11b,
     * feed_forward_proj "relu") also hold
     * decoder.block.0.layer.1.EncDecAttention.relative_attention_bias, which
     * T5 never builds (_keys_to_ignore_on_load_unexpected): t5-small's file
     * holds 60,506,880 = 60,506,624 + 32 x 8 (safetensors metadata table),
     * t5-base 222,903,936 = 222,903,552 + 32 x 12.  v1.1 / flan-t5 files do
     * not (flan-t5-small: 76,961,152 exactly its modules). */
    if (strcmp(ff, "relu") == 0)
        fg__model_rule(m, "T5 v1.0 file stores unused EncDecAttention.relative_attention_bias",
                       (int64_t)(buckets * m->heads));
    return fg__add_head(m, m->vocab, m->hidden, tie, false, false, err);
}

/* ---- Whisper -------------------------------------------------------------- */

/* WhisperAttention: q, v and out_proj biased, k_proj without bias. */
static struct fg_node *whisper_attention(struct fg_model *m, int32_t layer, uint64_t heads,
                                         bool decoder, bool cross, struct fg_err *err)
{
    struct fg_attn_shape a = {.hidden = m->hidden, .heads = heads, .kv_heads = heads,
                              .head_dim = m->hidden / heads, .o_bias = true,
                              .bidirectional = !decoder, .cross = cross};
    struct fg_node *n;
    if (fg__add_attention(m, layer, &a, &n, err))
        return NULL;
    n->params += 2 * m->hidden; /* q_proj and v_proj biases */
    return n;
}

/*
 * WhisperForConditionalGeneration:
 *   encoder  conv1 (num_mel_bins -> d_model, k 3) and conv2 (d_model ->
 *            d_model, k 3, stride 2), both biased; embed_positions
 *            max_source_positions x d_model, a sinusoidal table kept frozen
 *            (requires_grad False) but stored in the checkpoint; pre-norm
 *            layers (LayerNorm, attention, LayerNorm, fc1 / fc2 biased GELU);
 *            layer_norm
 *   decoder  embed_tokens, learned embed_positions max_target_positions x
 *            d_model, layers with self- and cross-attention, layer_norm
 *   head     proj_out tied to embed_tokens (tie_word_embeddings default
 *            true): not stored
 * NbAiLab/nb-whisper-small-beta: 241,734,912, matching its fp32 file size.
 */
static int read_whisper(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                        struct fg_err *err)
{
    (void)spec;
    int rc;
    uint64_t mels, enc_layers, enc_heads, enc_ffn, src_pos;
    bool tie;
    if ((rc = read_enc_dec_flag(c, err)) ||
        (rc = fg_cfg_u64(c, "vocab_size", 51865, 1, FG_MAX_VOCAB, &m->vocab, err)) ||
        (rc = fg_cfg_u64(c, "d_model", 384, 1, FG_MAX_HIDDEN, &m->hidden, err)) ||
        (rc = fg_cfg_u64(c, "num_mel_bins", 80, 1, 1u << 12, &mels, err)) ||
        (rc = fg_cfg_u64(c, "encoder_layers", 4, 1, FG_MAX_LAYERS, &enc_layers, err)) ||
        (rc = fg_cfg_u64(c, "encoder_attention_heads", 6, 1, FG_MAX_HEADS, &enc_heads, err)) ||
        (rc = fg_cfg_u64(c, "encoder_ffn_dim", 1536, 1, FG_MAX_INTER, &enc_ffn, err)) ||
        (rc = fg_cfg_u64(c, "decoder_layers", 4, 1, FG_MAX_LAYERS, &m->layers, err)) ||
        (rc = fg_cfg_u64(c, "decoder_attention_heads", 6, 1, FG_MAX_HEADS, &m->heads, err)) ||
        (rc = fg_cfg_u64(c, "decoder_ffn_dim", 1536, 1, FG_MAX_INTER, &m->inter, err)) ||
        (rc = fg_cfg_u64(c, "max_source_positions", 1500, 1, FG_MAX_POS, &src_pos, err)) ||
        (rc = fg_cfg_u64(c, "max_target_positions", 448, 1, FG_MAX_POS, &m->max_pos, err)) ||
        (rc = fg_cfg_bool(c, "tie_word_embeddings", true, &tie, err)) ||
        (rc = fg__check_heads(c, "d_model", m->hidden, "encoder_attention_heads", enc_heads,
                              err)) ||
        (rc = fg__check_heads(c, "d_model", m->hidden, "decoder_attention_heads", m->heads, err)))
        return rc;
    m->kv_heads = m->heads;
    m->head_dim = m->hidden / m->heads;
    m->enc_positions = src_pos;
    m->enc_dec = true;

    /* Encoder. */
    size_t enc_from = m->n_nodes;
    struct fg_node *n = fg__model_add(m, FG_NODE_OTHER, -1, "Conv stem", err);
    if (!n)
        return FG_E_NOMEM;
    n->params = mels * m->hidden * 3 + m->hidden + m->hidden * m->hidden * 3 + m->hidden;
    n->hidden = (uint32_t)mels;
    n->width = (uint32_t)m->hidden;
    fg__fmt(n->desc, sizeof n->desc, "conv1d %llu->%llu k3, conv1d k3 s2",
             (unsigned long long)mels, (unsigned long long)m->hidden);
    if ((rc = fg__add_table(m, FG_NODE_POS_EMBED, "Position embedding", src_pos, m->hidden, &n,
                            err)))
        return rc;
    n->buffers = n->params; /* frozen sinusoids, stored */
    fg__fmt(n->desc, sizeof n->desc, "%llu x %llu sinusoidal, frozen",
             (unsigned long long)src_pos, (unsigned long long)m->hidden);
    struct fg_mlp_shape fe = {.hidden = m->hidden, .inter = enc_ffn, .bias = true};
    for (uint64_t l = 0; l < enc_layers; l++) {
        int32_t li = (int32_t)l;
        if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_LN, err)) ||
            !whisper_attention(m, li, enc_heads, false, false, err) ||
            (rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_LN, err)) ||
            (rc = fg__add_mlp(m, li, &fe, NULL, err)))
            return rc;
    }
    if ((rc = fg__add_norm(m, -1, "Norm", m->hidden, FG_NORM_LN, err)))
        return rc;
    mark_encoder(m, enc_from);

    /* Decoder. */
    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)))
        return rc;
    if ((rc = fg__add_table(m, FG_NODE_POS_EMBED, "Position embedding", m->max_pos, m->hidden,
                            NULL, err)))
        return rc;
    struct fg_mlp_shape fd = {.hidden = m->hidden, .inter = m->inter, .bias = true};
    for (uint64_t l = 0; l < m->layers; l++) {
        int32_t li = (int32_t)l;
        if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_LN, err)) ||
            !whisper_attention(m, li, m->heads, true, false, err) ||
            (rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_LN, err)) ||
            !whisper_attention(m, li, m->heads, true, true, err) ||
            (rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_LN, err)) ||
            (rc = fg__add_mlp(m, li, &fd, NULL, err)))
            return rc;
    }
    if ((rc = fg__add_norm(m, -1, "Final norm", m->hidden, FG_NORM_LN, err)))
        return rc;
    return fg__add_head(m, m->vocab, m->hidden, tie, false, false, err);
}

const struct fg_arch fg__arch_encdec_table[] = {
#include "arch/encdec/bart_t5_whisper.def"
    {0},
};
