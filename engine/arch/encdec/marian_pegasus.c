/*
 * marian_pegasus.c - the BART-lineage encoder-decoders whose common checkpoints are the whole
 * translation / summarisation / dialogue model, each read from its transformers modeling
 * file (huggingface/transformers; commits as read_file returned them):
 *
 *   marian            MarianMTModel / MarianForCausalLM   models/marian/modeling_marian.py
 *                     (00b676f8), configuration_marian.py  (Helsinki-NLP opus-mt-*)
 *   pegasus           PegasusForConditionalGeneration / PegasusForCausalLM  models/pegasus
 *                     (configuration_pegasus.py 00e12e7c)
 *   blenderbot        BlenderbotForConditionalGeneration / BlenderbotForCausalLM
 *                     models/blenderbot (configuration_blenderbot.py 0171fcd7)
 *   blenderbot-small  BlenderbotSmallForConditionalGeneration / ...ForCausalLM
 *                     models/blenderbot_small (configuration_blenderbot_small.py 0077a6ee)
 *   mvp               MvpForConditionalGeneration / MvpForCausalLM  models/mvp
 *                     (configuration_mvp.py 01ae98ae), with its layer-wise prompts
 *   plbart            PLBartForConditionalGeneration / PLBartForCausalLM  models/plbart
 *                     (configuration_plbart.py 1001bb00)
 *   prophetnet        ProphetNetForConditionalGeneration / ProphetNetForCausalLM
 *                     models/prophetnet (its own layout: read_prophetnet below)
 *   udop              UdopForConditionalGeneration  models/udop/modeling_udop.py,
 *                     configuration_udop.py (0166003b): T5 stacks over text, layout and
 *                     image patches (read_udop below)
 *   bigbird_pegasus   BigBirdPegasusForConditionalGeneration / ...ForCausalLM
 *                     models/bigbird_pegasus: Pegasus with learned positions, one
 *                     LayerNorm per stack at its end (named layernorm_embedding) and the
 *                     attention biases switched by use_bias; its block-sparse encoder
 *                     attention holds the same q/k/v/output tensors as full attention
 *
 * Every one is BartModel's skeleton (bart_t5_whisper.c reads bart / mbart): a token embedding
 * shared by both stacks, a position table per stack, layers of biased q/k/v/out_proj
 * attention, [cross-attention,] fc1 / fc2 with bias and a LayerNorm after each; what
 * differs is a row of struct seq_spec: the position table (learned with BART's offset of
 * 2 rows, learned without it, or a frozen sinusoidal nn.Embedding), layernorm_embedding,
 * the stacks' final layer_norm (pre-norm families), and Marian's separate vocabularies.
 * Pre- or post-norm changes no shape.
 *
 * The structure read is the one `architectures` names, as the bart reader does:
 *   ...ForConditionalGeneration / MarianMTModel  both stacks, final_logits_bias (a
 *        persistent 1 x vocab buffer: stored) and lm_head (no bias) tied to the shared
 *        embedding by tie_word_embeddings;
 *   ...ForCausalLM  the decoder alone (XxxDecoderWrapper): its own embed_tokens, positions,
 *        layers that still build encoder_attn (XxxDecoderLayer always does; it runs only
 *        with encoder_hidden_states, so it is counted, not run), lm_head tied;
 *   anything else (the base XxxModel)  both stacks, no head.
 */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "arch/arch.h"
#include "arch/encdec/marian_pegasus.h"
#include "util/fmt.h"

enum seq_pos {
    SEQ_POS_LEARNED,   /* nn.Embedding of max_position_embeddings + offset rows, trained */
    SEQ_POS_SINUS,     /* nn.Embedding filled with sinusoids, requires_grad False */
};

struct seq_spec {
    const char *gen_class, *causal_class;
    /* the config class's defaults */
    uint64_t vocab, d_model, enc_layers, dec_layers, heads, ffn, max_pos;
    enum seq_pos pos;
    uint64_t pos_offset;    /* BartLearnedPositionalEmbedding's 2 extra rows, or 0 */
    bool emb_norm;          /* layernorm_embedding in each stack */
    bool final_norm;        /* encoder.layer_norm / decoder.layer_norm */
    bool marian;            /* decoder_vocab_size, share_encoder_decoder_embeddings */
    bool prompts;           /* MVP use_prompt */
    const char *bias_key;   /* the config key switching the attention biases (BigBird-Pegasus
                               use_bias, default false), NULL: always biased */
};

/* MarianConfig defaults (vocab 58101, the opus-mt vocabulary; decoder_vocab_size None =
 * vocab_size; share_encoder_decoder_embeddings True).  MarianSinusoidalPositionalEmbedding
 * is an nn.Embedding whose weight is replaced by a frozen nn.Parameter; no
 * layernorm_embedding, no stack layer_norm (post-norm). */
static const struct seq_spec marian = {
    .gen_class = "MarianMTModel", .causal_class = "MarianForCausalLM", .vocab = 58101,
    .d_model = 1024, .enc_layers = 12, .dec_layers = 12, .heads = 16, .ffn = 4096,
    .max_pos = 1024, .pos = SEQ_POS_SINUS, .marian = true};
/* PegasusConfig defaults; PegasusSinusoidalPositionalEmbedding as Marian's, pre-norm layers
 * with the stacks' layer_norm. */
static const struct seq_spec pegasus = {
    .gen_class = "PegasusForConditionalGeneration", .causal_class = "PegasusForCausalLM",
    .vocab = 50265, .d_model = 1024, .enc_layers = 12, .dec_layers = 12, .heads = 16,
    .ffn = 4096, .max_pos = 1024, .pos = SEQ_POS_SINUS, .final_norm = true};
/* BlenderbotConfig defaults (blenderbot-3B): BlenderbotLearnedPositionalEmbedding without
 * an offset, pre-norm layers, the stacks' layer_norm, no layernorm_embedding. */
static const struct seq_spec blenderbot = {
    .gen_class = "BlenderbotForConditionalGeneration", .causal_class = "BlenderbotForCausalLM",
    .vocab = 8008, .d_model = 2560, .enc_layers = 2, .dec_layers = 24, .heads = 32,
    .ffn = 10240, .max_pos = 128, .pos = SEQ_POS_LEARNED, .final_norm = true};
/* BlenderbotSmallConfig defaults (blenderbot_small-90M): learned positions without an
 * offset, layernorm_embedding, post-norm layers, no stack layer_norm. */
static const struct seq_spec blenderbot_small = {
    .gen_class = "BlenderbotSmallForConditionalGeneration",
    .causal_class = "BlenderbotSmallForCausalLM", .vocab = 50265, .d_model = 512,
    .enc_layers = 8, .dec_layers = 8, .heads = 16, .ffn = 2048, .max_pos = 512,
    .pos = SEQ_POS_LEARNED, .emb_norm = true};
/* MvpConfig defaults: BART's layout (MvpLearnedPositionalEmbedding offset 2,
 * layernorm_embedding) plus MvpPrompt modules when use_prompt. */
static const struct seq_spec mvp = {
    .gen_class = "MvpForConditionalGeneration", .causal_class = "MvpForCausalLM",
    .vocab = 50267, .d_model = 1024, .enc_layers = 12, .dec_layers = 12, .heads = 16,
    .ffn = 4096, .max_pos = 1024, .pos = SEQ_POS_LEARNED, .pos_offset = 2, .emb_norm = true,
    .prompts = true};
/* BigBirdPegasusConfig defaults (bigbird-pegasus-large-*): learned positions without an
 * offset, the stacks' closing LayerNorm, use_bias false. */
static const struct seq_spec bigbird_pegasus = {
    .gen_class = "BigBirdPegasusForConditionalGeneration",
    .causal_class = "BigBirdPegasusForCausalLM", .vocab = 96103, .d_model = 1024,
    .enc_layers = 16, .dec_layers = 16, .heads = 16, .ffn = 4096, .max_pos = 4096,
    .pos = SEQ_POS_LEARNED, .final_norm = true, .bias_key = "use_bias"};
/* PLBartConfig defaults (plbart-base): BART's layout. */
static const struct seq_spec plbart = {
    .gen_class = "PLBartForConditionalGeneration", .causal_class = "PLBartForCausalLM",
    .vocab = 50005, .d_model = 768, .enc_layers = 6, .dec_layers = 6, .heads = 12,
    .ffn = 3072, .max_pos = 1024, .pos = SEQ_POS_LEARNED, .pos_offset = 2, .emb_norm = true};

struct seq_cfg {
    uint64_t enc_layers, enc_heads, enc_ffn, dec_vocab;
    bool share;                  /* one embedding for both stacks (Marian's switch) */
    uint64_t prompt_len, prompt_mid;   /* MVP, 0 = no prompts */
    bool bias;                   /* q / k / v / out_proj biases */
};

void fg__seq_mark_encoder(struct fg_model *m, size_t from)
{
    for (size_t i = from; i < m->n_nodes; i++) {
        struct fg_node *n = &m->nodes[i];
        char name[sizeof n->name] = {0};
        n->stack = FG_STACK_ENCODER;
        fg__fmt(name, sizeof name, "Enc.%.27s", n->name);
        memcpy(n->name, name, sizeof n->name);
    }
}

int fg__seq_unused_cross(struct fg_model *m, int32_t li, uint64_t params, struct fg_err *err)
{
    struct fg_node *n = fg__model_add_block(m, FG_NODE_OTHER, li, "Unused cross-attn", err);
    if (!n)
        return FG_E_NOMEM;
    n->params = params;
    n->width = n->hidden = (uint32_t)m->hidden;
    fg__copy(n->desc, sizeof n->desc, "cross-attention + norm, no encoder to attend");
    return 0;
}

/* MvpPrompt(config, num_layers, num_heads): prompt_embedding prompt_length x d_model and
 * prompt_trans Linear(d_model, prompt_mid_dim) -> GELU -> Linear(prompt_mid_dim,
 * num_layers x 2 x d_model), both biased.  One per encoder (self_attn_prompt), two per
 * decoder (self_attn_prompt, cross_attn_prompt). */
static int add_prompt(struct fg_model *m, const char *name, uint64_t layers,
                      const struct seq_cfg *q, struct fg_err *err)
{
    struct fg_node *n = fg__model_add(m, FG_NODE_OTHER, -1, name, err);
    if (!n)
        return FG_E_NOMEM;
    const uint64_t d = m->hidden, out = layers * 2 * d;
    n->params = q->prompt_len * d;
    fg__node_linear(n, "prompt_in", d, q->prompt_mid, 1, true);
    fg__node_linear(n, "prompt_out", q->prompt_mid, out, 1, true);
    n->hidden = (uint32_t)d;
    n->width = (uint32_t)d;
    fg__fmt(n->desc, sizeof n->desc, "%llu prompts, %llu -> %llu -> %llu",
            (unsigned long long)q->prompt_len, (unsigned long long)d,
            (unsigned long long)q->prompt_mid, (unsigned long long)out);
    return 0;
}

/* The position table of one stack: learned (trained) or the frozen sinusoids, which
 * memory holds as a buffer (no gradient, no optimizer state). */
static int add_positions(struct fg_model *m, const struct seq_spec *s, struct fg_err *err)
{
    struct fg_node *n;
    int rc = fg__add_table(m, FG_NODE_POS_EMBED, "Position embedding", m->max_pos + s->pos_offset,
                           m->hidden, &n, err);
    if (rc)
        return rc;
    if (s->pos == SEQ_POS_SINUS) {
        n->buffers = n->params;
        fg__fmt(n->desc, sizeof n->desc, "%llu x %llu sinusoidal, frozen",
                (unsigned long long)m->max_pos, (unsigned long long)m->hidden);
    }
    return 0;
}

struct seq_layer {
    const struct fg_attn_shape *a, *x;
    const struct fg_mlp_shape *f;
    int cross;
    uint64_t unused_cross;   /* cross 2: the stored cross-attention's scalars */
};

/* One layer of seq_stack (an fg_layer_fn). */
static int seq_layer(struct fg_model *m, int32_t li, const void *ctx, struct fg_err *err)
{
    const struct seq_layer *k = ctx;
    const uint64_t d = m->hidden;
    int rc;
    if ((rc = fg__add_attention(m, li, k->a, NULL, err)) ||
        (rc = fg__add_norm(m, li, "Norm", d, FG_NORM_LN, err)))
        return rc;
    if (k->cross == 1 && ((rc = fg__add_attention(m, li, k->x, NULL, err)) ||
                          (rc = fg__add_norm(m, li, "Norm", d, FG_NORM_LN, err))))
        return rc;
    if (k->cross == 2 && (rc = fg__seq_unused_cross(m, li, k->unused_cross, err)))
        return rc;
    if ((rc = fg__add_mlp(m, li, k->f, NULL, err)))
        return rc;
    return fg__add_norm(m, li, "Norm", d, FG_NORM_LN, err);
}

/*
 * One stack after its token embedding: positions, [layernorm_embedding,] layers of
 * self_attn (q/k/v/out_proj, bias) + self_attn_layer_norm, [encoder_attn +
 * encoder_attn_layer_norm,] fc1 / fc2 (bias) + final_layer_norm, [the stack's layer_norm].
 * cross: 0 none (encoder), 1 run over the encoder output, 2 built but not run (ForCausalLM
 * without an encoder: a stored node outside the attention math).
 */
static int seq_stack(struct fg_model *m, const struct seq_spec *s, const struct seq_cfg *q,
                     uint64_t layers, uint64_t heads, uint64_t ffn, int cross, struct fg_err *err)
{
    int rc;
    if ((rc = add_positions(m, s, err)))
        return rc;
    if (s->emb_norm && (rc = fg__add_norm(m, -1, "Embedding norm", m->hidden, FG_NORM_LN, err)))
        return rc;
    const uint64_t d = m->hidden;
    struct fg_attn_shape a = {.hidden = d, .heads = heads, .kv_heads = heads,
                              .head_dim = d / heads, .qkv_bias = q->bias, .o_bias = q->bias,
                              .bidirectional = cross == 0};
    struct fg_attn_shape x = a;
    x.bidirectional = false;
    x.cross = true;
    struct fg_mlp_shape f = {.hidden = d, .inter = ffn, .bias = true};
    const struct seq_layer k = {&a, &x, &f, cross, 4 * (d * d + (q->bias ? d : 0)) + 2 * d};
    if ((rc = fg__add_layers(m, layers, seq_layer, &k, err)))
        return rc;
    if (s->final_norm)
        return fg__add_norm(m, -1, cross ? "Final norm" : "Norm", d, FG_NORM_LN, err);
    return 0;
}

/* Marian's switches, MVP's prompts. */
static int read_variant(const struct fg_cfg *c, const struct seq_spec *s, struct fg_model *m,
                        struct seq_cfg *q, struct fg_err *err)
{
    int rc;
    q->dec_vocab = m->vocab;
    q->share = true;
    if (s->marian &&
        ((rc = fg_cfg_u64(c, "decoder_vocab_size", m->vocab, 1, FG_MAX_VOCAB, &q->dec_vocab,
                          err)) ||
         (rc = fg_cfg_bool(c, "share_encoder_decoder_embeddings", true, &q->share, err))))
        return rc;
    if (q->share && q->dec_vocab != m->vocab)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'decoder_vocab_size' = %llu differs from "
                          "'vocab_size' = %llu while 'share_encoder_decoder_embeddings' is "
                          "true: MarianModel builds one embedding of vocab_size rows",
                          c->origin, (unsigned long long)q->dec_vocab,
                          (unsigned long long)m->vocab);
    q->bias = true;
    if (s->bias_key && (rc = fg_cfg_bool(c, s->bias_key, false, &q->bias, err)))
        return rc;
    bool use_prompt = false;
    if (s->prompts && (rc = fg_cfg_bool(c, "use_prompt", false, &use_prompt, err)))
        return rc;
    if (use_prompt &&
        ((rc = fg_cfg_u64(c, "prompt_length", 100, 1, 1u << 20, &q->prompt_len, err)) ||
         (rc = fg_cfg_u64(c, "prompt_mid_dim", 800, 1, FG_MAX_INTER, &q->prompt_mid, err))))
        return rc;
    return 0;
}

static int read_seq(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                    struct fg_err *err)
{
    const struct seq_spec *s = spec;
    struct seq_cfg q = {0};
    bool gen = false, causal = false, tie;
    int rc;
    if ((rc = fg_cfg_u64(c, "vocab_size", s->vocab, 1, FG_MAX_VOCAB, &m->vocab, err)) ||
        (rc = fg_cfg_u64(c, "d_model", s->d_model, 1, FG_MAX_HIDDEN, &m->hidden, err)) ||
        (rc = fg_cfg_u64(c, "encoder_layers", s->enc_layers, 1, FG_MAX_LAYERS, &q.enc_layers,
                         err)) ||
        (rc = fg_cfg_u64(c, "decoder_layers", s->dec_layers, 1, FG_MAX_LAYERS, &m->layers, err)) ||
        (rc = fg_cfg_u64(c, "encoder_attention_heads", s->heads, 1, FG_MAX_HEADS, &q.enc_heads,
                         err)) ||
        (rc = fg_cfg_u64(c, "decoder_attention_heads", s->heads, 1, FG_MAX_HEADS, &m->heads,
                         err)) ||
        (rc = fg_cfg_u64(c, "encoder_ffn_dim", s->ffn, 1, FG_MAX_INTER, &q.enc_ffn, err)) ||
        (rc = fg_cfg_u64(c, "decoder_ffn_dim", s->ffn, 1, FG_MAX_INTER, &m->inter, err)) ||
        (rc = fg_cfg_u64(c, "max_position_embeddings", s->max_pos, 1, FG_MAX_POS, &m->max_pos,
                         err)) ||
        (rc = fg_cfg_bool(c, "tie_word_embeddings", true, &tie, err)) ||
        (rc = fg__check_heads(c, "d_model", m->hidden, "encoder_attention_heads", q.enc_heads,
                              err)) ||
        (rc = fg__check_heads(c, "d_model", m->hidden, "decoder_attention_heads", m->heads, err)) ||
        (rc = read_variant(c, s, m, &q, err)) ||
        (rc = fg__cfg_has_arch(c, s->gen_class, &gen, err)) ||
        (rc = fg__cfg_has_arch(c, s->causal_class, &causal, err)))
        return rc;
    m->kv_heads = m->heads;
    m->head_dim = m->hidden / m->heads;

    if (causal && !gen) {
        /* XxxForCausalLM: the decoder alone (Marian's of decoder_vocab_size rows; MVP's
         * MvpDecoderWrapper builds MvpDecoder(config) with use_prompt left false) */
        if ((rc = fg__add_embedding(m, q.dec_vocab, m->hidden, err)) ||
            (rc = seq_stack(m, s, &q, m->layers, m->heads, m->inter, 2, err)))
            return rc;
        return fg__add_head(m, q.dec_vocab, m->hidden, tie, false, false, err);
    }

    m->enc_dec = true;
    if ((rc = fg__add_embedding(m, q.share ? m->vocab : q.dec_vocab, m->hidden, err)))
        return rc;
    size_t enc_from = m->n_nodes;
    /* MarianModel without shared embeddings: the encoder's own copy of vocab_size rows */
    if (!q.share && (rc = fg__add_embedding(m, m->vocab, m->hidden, err)))
        return rc;
    if ((q.prompt_len && (rc = add_prompt(m, "Self-attn prompt", q.enc_layers, &q, err))) ||
        (rc = seq_stack(m, s, &q, q.enc_layers, q.enc_heads, q.enc_ffn, 0, err)))
        return rc;
    fg__seq_mark_encoder(m, enc_from);
    if ((q.prompt_len && (rc = add_prompt(m, "Self-attn prompt", m->layers, &q, err))) ||
        (q.prompt_len && (rc = add_prompt(m, "Cross-attn prompt", m->layers, &q, err))) ||
        (rc = seq_stack(m, s, &q, m->layers, m->heads, m->inter, 1, err)))
        return rc;
    if (!gen) {
        m->tied = true; /* the base model: no lm_head */
        return 0;
    }
    struct fg_node *n;
    if ((rc = fg__add_table(m, FG_NODE_OTHER, "final_logits_bias", 1, q.dec_vocab, &n, err)))
        return rc;
    n->buffers = n->params;
    fg__model_rule(m, "final_logits_bias buffer stored (in final_logits_bias)", 0);
    if (s->marian) {
        /* MarianMTModel._keys_to_ignore_on_save (keys_to_never_save in the 3.x releases)
         * names both embed_positions tables: a file it writes lacks them, and loading
         * rebuilds them (_keys_to_ignore_on_load_missing).  The opus-mt conversions of
         * 2020 hold them: their configs carry no transformers_version, and
         * opus-mt-zh-en's pytorch_model.bin is 312,087,009 B, 4 x 78,008,297 (the modules
         * with both tables and final_logits_bias) + 53,821 B of pickle, where the count
         * without the tables would leave 2.1 MB unexplained.  A config written by 4.0 or
         * later comes with a file without them; the 3.x release that added the rule is
         * not pinned here, so a 3.x config is said unsure (counted with them). */
        unsigned ver = fg__cfg_tf_version(c);
        if (ver >= 4000) {
            /* the rule takes them out of the stored count; they leave the buffers with it,
             * so the trainable count (stored - buffers) stays the modules' */
            fg__model_rule(m, "sinusoidal embed_positions not saved (MarianMTModel "
                              "_keys_to_ignore_on_save)",
                           -(int64_t)(2 * m->max_pos * m->hidden));
            for (size_t i = 0; i < m->n_nodes; i++)
                if (m->nodes[i].kind == FG_NODE_POS_EMBED)
                    m->nodes[i].buffers = 0;
        }
        else if (ver >= 3000)
            fg__model_unsure(m, "transformers_version", "unsure: key 'transformers_version' "
                             "is a 3.x release, during which MarianMTModel stopped saving the "
                             "sinusoidal position tables: counted with them");
    }
    return fg__add_head(m, q.dec_vocab, m->hidden, tie, false, false, err);
}

/* One ProphetNet stack: positions (ProphetNetPositionalEmbeddings, max_position_embeddings
 * rows), [ngram_embeddings ngram x hidden,] embeddings_layer_norm, post-norm layers of
 * q/k/v/out_proj (bias) + LayerNorm, [cross_attn + LayerNorm,] feed_forward intermediate /
 * output (bias) + LayerNorm.  The decoder's ProphetNetNgramSelfAttention adds
 * relative_pos_embeddings Linear(hidden, num_buckets x heads) with bias. */
struct pn_stack {
    uint64_t layers, heads, ffn, ngram, buckets;
    int cross;              /* as seq_stack: 0 none, 1 run, 2 stored only */
};

static int pn_stack(struct fg_model *m, const struct pn_stack *k, struct fg_err *err)
{
    const uint64_t d = m->hidden;
    struct fg_node *n;
    int rc;
    if ((rc = fg__add_table(m, FG_NODE_POS_EMBED, "Position embedding", m->max_pos, d, NULL,
                            err)) ||
        (k->ngram && (rc = fg__add_table(m, FG_NODE_OTHER, "Ngram embedding", k->ngram, d, NULL,
                                         err))) ||
        (rc = fg__add_norm(m, -1, "Embedding norm", d, FG_NORM_LN, err)))
        return rc;
    struct fg_attn_shape a = {.hidden = d, .heads = k->heads, .kv_heads = k->heads,
                              .head_dim = d / k->heads, .qkv_bias = true, .o_bias = true,
                              .bidirectional = !k->ngram};
    struct fg_attn_shape x = a;
    x.bidirectional = false;
    x.cross = true;
    struct fg_mlp_shape f = {.hidden = d, .inter = k->ffn, .bias = true};
    for (uint64_t l = 0; l < k->layers; l++) {
        int32_t li = (int32_t)l;
        if ((rc = fg__add_attention(m, li, &a, &n, err)))
            return rc;
        if (k->ngram)
            fg__node_linear(n, "relpos", d, k->buckets * k->heads, 1, true);
        if ((rc = fg__add_norm(m, li, "Norm", d, FG_NORM_LN, err)))
            return rc;
        if (k->cross == 1 && ((rc = fg__add_attention(m, li, &x, NULL, err)) ||
                              (rc = fg__add_norm(m, li, "Norm", d, FG_NORM_LN, err))))
            return rc;
        if (k->cross == 2 && (rc = fg__seq_unused_cross(m, li, 4 * (d * d + d) + 2 * d, err)))
            return rc;
        if ((rc = fg__add_mlp(m, li, &f, NULL, err)) ||
            (rc = fg__add_norm(m, li, "Norm", d, FG_NORM_LN, err)))
            return rc;
    }
    return 0;
}

/*
 * ProphetNetForConditionalGeneration: word_embeddings shared by both stacks, the encoder
 * and the n-gram decoder (pn_stack), lm_head (no bias) tied by tie_word_embeddings; no
 * final_logits_bias.  ProphetNetForCausalLM: the decoder alone with its own
 * word_embeddings, its cross_attn (built when add_cross_attention, the default) stored but
 * not run.  The decoder runs ngram + 1 streams of the target (main and predicting), which
 * the activation estimate does not multiply in: said in a note.  ProphetNetConfig
 * defaults (prophetnet-large-uncased).
 */
static int read_prophetnet(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                           struct fg_err *err)
{
    (void)spec;
    struct pn_stack e = {0}, dk = {0};
    bool gen = false, causal = false, tie, cross;
    int rc;
    if ((rc = fg_cfg_u64(c, "vocab_size", 30522, 1, FG_MAX_VOCAB, &m->vocab, err)) ||
        (rc = fg_cfg_u64(c, "hidden_size", 1024, 1, FG_MAX_HIDDEN, &m->hidden, err)) ||
        (rc = fg_cfg_u64(c, "num_encoder_layers", 12, 1, FG_MAX_LAYERS, &e.layers, err)) ||
        (rc = fg_cfg_u64(c, "num_encoder_attention_heads", 16, 1, FG_MAX_HEADS, &e.heads,
                         err)) ||
        (rc = fg_cfg_u64(c, "encoder_ffn_dim", 4096, 1, FG_MAX_INTER, &e.ffn, err)) ||
        (rc = fg_cfg_u64(c, "num_decoder_layers", 12, 1, FG_MAX_LAYERS, &dk.layers, err)) ||
        (rc = fg_cfg_u64(c, "num_decoder_attention_heads", 16, 1, FG_MAX_HEADS, &dk.heads,
                         err)) ||
        (rc = fg_cfg_u64(c, "decoder_ffn_dim", 4096, 1, FG_MAX_INTER, &dk.ffn, err)) ||
        (rc = fg_cfg_u64(c, "max_position_embeddings", 512, 1, FG_MAX_POS, &m->max_pos, err)) ||
        (rc = fg_cfg_u64(c, "ngram", 2, 1, 64, &dk.ngram, err)) ||
        (rc = fg_cfg_u64(c, "num_buckets", 32, 1, 1u << 16, &dk.buckets, err)) ||
        (rc = fg_cfg_bool(c, "add_cross_attention", true, &cross, err)) ||
        (rc = fg_cfg_bool(c, "tie_word_embeddings", true, &tie, err)) ||
        (rc = fg__check_heads(c, "hidden_size", m->hidden, "num_encoder_attention_heads",
                              e.heads, err)) ||
        (rc = fg__check_heads(c, "hidden_size", m->hidden, "num_decoder_attention_heads",
                              dk.heads, err)) ||
        (rc = fg__cfg_has_arch(c, "ProphetNetForConditionalGeneration", &gen, err)) ||
        (rc = fg__cfg_has_arch(c, "ProphetNetForCausalLM", &causal, err)))
        return rc;
    m->layers = dk.layers;
    m->heads = m->kv_heads = dk.heads;
    m->head_dim = m->hidden / dk.heads;
    m->inter = dk.ffn;
    fg__model_note(m, "ProphetNet's decoder runs %llu streams of the target (main + %llu "
                      "predicting): its activations are about that many times one stream's",
                   (unsigned long long)(dk.ngram + 1), (unsigned long long)dk.ngram);
    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)))
        return rc;
    if (causal && !gen) {
        dk.cross = cross ? 2 : 0;
        if ((rc = pn_stack(m, &dk, err)))
            return rc;
        return fg__add_head(m, m->vocab, m->hidden, tie, false, false, err);
    }
    m->enc_dec = true;
    size_t from = m->n_nodes;
    if ((rc = pn_stack(m, &e, err)))
        return rc;
    fg__seq_mark_encoder(m, from);
    dk.cross = cross ? 1 : 0;
    if ((rc = pn_stack(m, &dk, err)))
        return rc;
    if (!gen) {
        m->tied = true; /* ProphetNetModel: no lm_head */
        return 0;
    }
    return fg__add_head(m, m->vocab, m->hidden, tie, false, false, err);
}

/* The stored rows of UdopStack's relative_bias (create_relative_bias over
 * relative_bias_args): each RelativePositionBias* holds nn.Embedding(buckets + 2 when
 * prefix_bucket and not expand, heads); the 1d one is tied to block 0's
 * relative_attention_bias and stores nothing of its own.  Default: 1d, horizontal,
 * vertical.  *rows: the untied rows summed. */
static int udop_bias_rows(const struct fg_cfg *c, uint64_t *rows, struct fg_err *err)
{
    const cJSON *list = fg__cfg_item(c, "relative_bias_args"), *e;
    *rows = 0;
    if (!list) {
        *rows = 2 * 32; /* horizontal + vertical at 32 buckets */
        return 0;
    }
    if (!cJSON_IsArray(list))
        return fg_err_set(err, FG_E_TYPE, "%s: key 'relative_bias_args' is not a list of "
                          "objects", c->origin);
    cJSON_ArrayForEach(e, list) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "type");
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(e, "relative_attention_num_buckets");
        const cJSON *pre = cJSON_GetObjectItemCaseSensitive(e, "prefix_bucket");
        const cJSON *ex = cJSON_GetObjectItemCaseSensitive(e, "expand");
        if (!cJSON_IsObject(e) || !cJSON_IsString(t) ||
            (strcmp(t->valuestring, "1d") && strcmp(t->valuestring, "horizontal") &&
             strcmp(t->valuestring, "vertical")))
            return fg_err_set(err, FG_E_RANGE, "%s: key 'relative_bias_args' holds an entry "
                              "whose type is not 1d, horizontal or vertical", c->origin);
        if (b && (!cJSON_IsNumber(b) || b->valuedouble < 1 || b->valuedouble > 65536))
            return fg_err_set(err, FG_E_RANGE, "%s: key 'relative_bias_args' holds a "
                              "relative_attention_num_buckets out of [1, 65536]", c->origin);
        if (!strcmp(t->valuestring, "1d"))
            continue;
        *rows += (b ? (uint64_t)b->valuedouble : 32) +
                 (cJSON_IsTrue(pre) && !cJSON_IsTrue(ex) ? 2 : 0);
    }
    return 0;
}

/* One UDOP (T5) stack: blocks of RMS norm + attention q / k / v / o without biases
 * (heads x d_kv inner), [cross-attention,] RMS norm + DenseReluDense (wi / wo, or wi_0 /
 * wi_1 / wo gated); block 0's relative_attention_bias; final_layer_norm. */
static int udop_stack(struct fg_model *m, uint64_t layers, bool decoder, bool gated,
                      uint64_t buckets, struct fg_err *err)
{
    struct fg_attn_shape a = {.hidden = m->hidden, .heads = m->heads, .kv_heads = m->heads,
                              .head_dim = m->head_dim, .bidirectional = !decoder};
    struct fg_attn_shape x = a;
    x.bidirectional = false;
    x.cross = true;
    struct fg_mlp_shape f = {.hidden = m->hidden, .inter = m->inter, .gated = gated};
    int rc;
    for (uint64_t l = 0; l < layers; l++) {
        int32_t li = (int32_t)l;
        struct fg_node *n;
        if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)) ||
            (rc = fg__add_attention(m, li, &a, &n, err)))
            return rc;
        if (l == 0)
            n->params += buckets * m->heads;
        if (decoder && ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)) ||
                        (rc = fg__add_attention(m, li, &x, NULL, err))))
            return rc;
        if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)) ||
            (rc = fg__add_mlp(m, li, &f, NULL, err)))
            return rc;
    }
    return fg__add_norm(m, -1, decoder ? "Final norm" : "Norm", m->hidden, FG_NORM_RMS, err);
}

/*
 * UdopForConditionalGeneration: shared (vocab x d_model), patch_embed Conv2d(num_channels,
 * d_model, patch_size, stride patch_size) with bias, the encoder UdopStack (its
 * cell_2d_embedding: x / y position tables of max_2d_position_embeddings rows), the decoder
 * UdopStack (no cell embedding), each with its relative_bias (udop_bias_rows), lm_head (no
 * bias) tied: UdopConfig forces tie_word_embeddings true.  UdopConfig defaults
 * (udop-large).
 */
static int read_udop(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                     struct fg_err *err)
{
    (void)spec;
    uint64_t enc_layers, dec_layers, buckets, max2d, image, patch, ch, bias_rows;
    const char *ff = NULL;
    int rc;
    if ((rc = fg_cfg_u64(c, "vocab_size", 33201, 1, FG_MAX_VOCAB, &m->vocab, err)) ||
        (rc = fg_cfg_u64(c, "d_model", 1024, 1, FG_MAX_HIDDEN, &m->hidden, err)) ||
        (rc = fg_cfg_u64(c, "d_kv", 64, 1, 1u << 14, &m->head_dim, err)) ||
        (rc = fg_cfg_u64(c, "d_ff", 4096, 1, FG_MAX_INTER, &m->inter, err)) ||
        (rc = fg_cfg_u64(c, "num_layers", 24, 1, FG_MAX_LAYERS, &enc_layers, err)) ||
        (rc = fg_cfg_u64(c, "num_decoder_layers", enc_layers, 1, FG_MAX_LAYERS, &dec_layers,
                         err)) ||
        (rc = fg_cfg_u64(c, "num_heads", 16, 1, FG_MAX_HEADS, &m->heads, err)) ||
        (rc = fg_cfg_u64(c, "relative_attention_num_buckets", 32, 1, 1u << 16, &buckets,
                         err)) ||
        (rc = fg_cfg_u64(c, "max_2d_position_embeddings", 1024, 1, 1u << 20, &max2d, err)) ||
        (rc = fg_cfg_u64(c, "image_size", 224, 1, 1u << 16, &image, err)) ||
        (rc = fg_cfg_u64(c, "patch_size", 16, 1, 1u << 12, &patch, err)) ||
        (rc = fg_cfg_u64(c, "num_channels", 3, 1, 64, &ch, err)) ||
        (rc = fg_cfg_str(c, "feed_forward_proj", "relu", &ff, err)) ||
        (rc = udop_bias_rows(c, &bias_rows, err)))
        return rc;
    bool gated = !strncmp(ff, "gated-", 6);
    m->kv_heads = m->heads;
    m->layers = dec_layers;
    m->enc_dec = true;
    struct fg_node *n;
    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)))
        return rc;
    size_t from = m->n_nodes;
    if ((rc = fg__add_table(m, FG_NODE_OTHER, "Patch and layout", ch * patch * patch + 1 +
                            2 * max2d, m->hidden, &n, err)))
        return rc;
    n->params += bias_rows * m->heads;
    fg__fmt(n->desc, sizeof n->desc, "patch conv %llu px, 2D tables %llu, %llu patches",
            (unsigned long long)patch, (unsigned long long)max2d,
            (unsigned long long)((image / patch) * (image / patch)));
    if ((rc = udop_stack(m, enc_layers, false, gated, buckets, err)))
        return rc;
    fg__seq_mark_encoder(m, from);
    if ((rc = fg__add_table(m, FG_NODE_OTHER, "Layout bias", bias_rows, m->heads, NULL, err)) ||
        (rc = udop_stack(m, dec_layers, true, gated, buckets, err)))
        return rc;
    return fg__add_head(m, m->vocab, m->hidden, true, false, false, err);
}

const struct fg_arch fg__arch_seq_table[] = {
#include "arch/encdec/marian_pegasus.def"
    {0},
};
