/*
 * tapas_luke_fnet.c - more encoders of transformers' masked-LM list (xlnet_xlm_funnel.c has the
 * others and the task-table helpers), each from its modeling file at the commit read_file
 * returned:
 *
 *   tapas       TapasForMaskedLM        models/tapas/modeling_tapas.py
 *   luke        LukeForMaskedLM         models/luke/modeling_luke.py
 *   fnet        FNetForMaskedLM         models/fnet/modeling_fnet.py
 *   squeezebert SqueezeBertForMaskedLM  models/squeezebert/modeling_squeezebert.py
 *   wav2vec2    Wav2Vec2ForMaskedLM     models/wav2vec2/modeling_wav2vec2.py (and ForCTC)
 */
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/encoder/xlnet_xlm_funnel.h"
#include "util/fmt.h"

static int mlm_head(const struct fg_cfg *c, struct fg_model *m, bool nsp, struct fg_err *err)
{
    return fg__enc2_mlm(c, m, m->hidden, 0, nsp, err);
}

/* The heads most BERT copies share, after the family's own: one linear of labels or 1. */
static int plain_head(struct fg_model *m, unsigned head, uint64_t labels, struct fg_err *err)
{
    if (head == FG_ENC2_H_LABELS || head == FG_ENC2_H_ONE)
        return fg__enc2_head(m, "Task head", m->hidden, head == FG_ENC2_H_ONE ? 1 : labels,
                             true, NULL, err);
    return 0;
}

/* ---- TAPAS --------------------------------------------------------------------------------- */

enum { TH_QA = FG_ENC2_H_FAMILY };

static const struct fg_enc2_task tapas_rows[] = {
    {"ForMaskedLM", FG_ENC2_H_LM, 0},
    {"Model", FG_ENC2_H_NONE, FG_ENC2_POOLER},
    {"ForQuestionAnswering", TH_QA, FG_ENC2_POOLER},
    {"ForSequenceClassification", FG_ENC2_H_LABELS, FG_ENC2_POOLER | FG_ENC2_LABELS},
    {NULL, 0, 0},
};
static const struct fg_enc2_tasks tapas_tasks = {"Tapas", tapas_rows, 1};

/*
 * TapasModel (huggingface/transformers@030ebe5c398f models/tapas/modeling_tapas.py):
 * TapasEmbeddings word_embeddings, position_embeddings (max_position_embeddings 1024 by
 * default), one token_type_embeddings_<i> of type_vocab_sizes[i] rows per entry (segment,
 * column, row, prev_labels, column_ranks, inv_column_ranks, numeric_relations), LayerNorm;
 * BERT's layers; TapasPooler.  TapasForMaskedLM builds no pooler; TapasForQuestionAnswering
 * adds output_weights and column_output_weights (hidden each), output_bias and
 * column_output_bias (one scalar each) and, when num_aggregation_labels > 0, its
 * aggregation_classifier.  add_cross_attention (a decoder's crossattention) is refused.
 * TapasConfig defaults (google/tapas-base shapes).
 */
static int read_tapas(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                      struct fg_err *err)
{
    (void)spec;
    static const struct fg_core_defaults d = {.vocab = 30522, .hidden = 768, .inter = 3072,
                                              .layers = 12, .heads = 12, .max_pos = 1024,
                                              .tie = true};
    const struct fg_enc2_task *t;
    uint64_t labels, types[16], agg;
    size_t nt = 0;
    bool cross;
    int rc;
    if ((rc = fg__read_core(c, m, &d, err)) ||
        (rc = fg_cfg_u64_array(c, "type_vocab_sizes", 1, FG_MAX_VOCAB, types, 16, &nt, err)) ||
        (rc = fg_cfg_u64(c, "num_aggregation_labels", 0, 0, 1u << 16, &agg, err)) ||
        (rc = fg_cfg_bool(c, "add_cross_attention", false, &cross, err)) ||
        (rc = fg__enc2_task(c, m, &tapas_tasks, &t, &labels, err)))
        return rc;
    if (cross) /* TapasLayer's crossattention, for a decoder */
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: key 'add_cross_attention' is true: "
                          "TAPAS as a decoder with cross-attention is not supported", c->origin);
    /* Released configs (google/tapas-base-finetuned-wtq) also carry the list as
     * 'type_vocab_size', which TapasConfig keeps as an extra attribute: TapasEmbeddings
     * (models/tapas/modeling_tapas.py) sizes its tables from type_vocab_sizes alone, so the
     * key is read here to say it changes nothing. */
    (void)fg_cfg_has(c, "type_vocab_size");
    if (!fg_cfg_has(c, "type_vocab_sizes")) {
        static const uint64_t def[] = {3, 256, 256, 2, 256, 256, 10};
        memcpy(types, def, sizeof def);
        nt = 7;
    }
    if (nt > 16)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'type_vocab_sizes' holds %zu tables; at "
                          "most 16", c->origin, nt);
    uint64_t h = m->hidden, rows = 0;
    for (size_t i = 0; i < nt; i++)
        rows += types[i];
    struct fg_node *n;
    if ((rc = fg__enc2_bert_embeddings(m, rows, &n, err)))
        return rc;
    fg__fmt(n->desc, sizeof n->desc, "%zu tables, %llu rows x %llu", nt,
            (unsigned long long)rows, (unsigned long long)h);
    struct fg_enc2_block b = fg__enc2_bert_block(m, 0);
    b.eager_only = true; /* TapasSelfAttention computes its scores itself */
    if ((rc = fg__enc2_blocks(m, m->layers, &b, err)))
        return rc;
    m->encoder_only = true;
    m->tied = true;
    if ((t->flags & FG_ENC2_POOLER) && (rc = fg__add_pooler(m, h, err)))
        return rc;
    if (t->head == FG_ENC2_H_LM)
        return mlm_head(c, m, false, err);
    if (t->head != TH_QA)
        return plain_head(m, t->head, labels, err);
    if ((rc = fg__enc2_head(m, "Task head", h, agg, true, &n, err)))
        return rc;
    n->params += 2 * h + 2;
    n->width = (uint32_t)(agg ? agg : 1);
    fg__fmt(n->desc, sizeof n->desc, "cell / column selection%s", agg ? " + aggregation" : "");
    return 0;
}

/* ---- LUKE ---------------------------------------------------------------------------------- */

enum { LH_ENTITY = FG_ENC2_H_FAMILY, LH_PAIR, LH_SPAN };

static const struct fg_enc2_task luke_rows[] = {
    {"ForMaskedLM", FG_ENC2_H_LM, FG_ENC2_POOLER},
    {"Model", FG_ENC2_H_NONE, FG_ENC2_POOLER},
    {"ForEntityClassification", LH_ENTITY, FG_ENC2_POOLER | FG_ENC2_LABELS},
    {"ForEntityPairClassification", LH_PAIR, FG_ENC2_POOLER | FG_ENC2_LABELS},
    {"ForEntitySpanClassification", LH_SPAN, FG_ENC2_POOLER | FG_ENC2_LABELS},
    {"ForSequenceClassification", FG_ENC2_H_LABELS, FG_ENC2_POOLER | FG_ENC2_LABELS},
    {"ForMultipleChoice", FG_ENC2_H_ONE, FG_ENC2_POOLER},
    {"ForTokenClassification", FG_ENC2_H_LABELS, FG_ENC2_LABELS},
    {"ForQuestionAnswering", FG_ENC2_H_LABELS, FG_ENC2_LABELS},
    {NULL, 0, 0},
};
static const struct fg_enc2_tasks luke_tasks = {"Luke", luke_rows, 1};

/* LukeForMaskedLM's EntityPredictionHead: transform dense H -> entity_emb_size (biased) +
 * LayerNorm, decoder tied to the entity embeddings, bias entity_vocab_size. */
static int luke_entity_head(struct fg_model *m, uint64_t ents, uint64_t ee, struct fg_err *err)
{
    struct fg_node *n = fg__model_add(m, FG_NODE_OTHER, -1, "Entity head", err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "dense", m->hidden, ee, 1, true);
    n->params += 2 * ee + ents;
    n->hidden = (uint32_t)m->hidden;
    n->width = (uint32_t)ee;
    fg__fmt(n->desc, sizeof n->desc, "transform %llu + LN, decoder tied, bias %llu",
            (unsigned long long)ee, (unsigned long long)ents);
    return 0;
}

/*
 * LukeModel (huggingface/transformers@00843e151aea models/luke/modeling_luke.py):
 * LukeEmbeddings (RoBERTa's: word, position, token type, LayerNorm); LukeEntityEmbeddings
 * entity_embeddings entity_vocab_size x entity_emb_size, entity_embedding_dense
 * entity_emb_size -> H without bias when they differ, its own position and token type
 * tables and LayerNorm; LukeLayers of BERT's shapes whose LukeSelfAttention adds
 * w2e_query, e2w_query and e2e_query (biased) with use_entity_aware_attention; LukePooler
 * (not in ForTokenClassification / ForQuestionAnswering).  LukeConfig defaults
 * (studio-ousia/luke-base shapes).
 */
static int read_luke(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                     struct fg_err *err)
{
    (void)spec;
    static const struct fg_core_defaults d = {.vocab = 50267, .hidden = 768, .inter = 3072,
                                              .layers = 12, .heads = 12, .max_pos = 512,
                                              .tie = true};
    const struct fg_enc2_task *t;
    uint64_t labels, types, ents, ee;
    bool aware;
    int rc;
    if ((rc = fg__read_core(c, m, &d, err)) ||
        (rc = fg_cfg_u64(c, "type_vocab_size", 2, 1, FG_MAX_VOCAB, &types, err)) ||
        (rc = fg_cfg_u64(c, "entity_vocab_size", 500000, 1, FG_MAX_VOCAB, &ents, err)) ||
        (rc = fg_cfg_u64(c, "entity_emb_size", 256, 1, FG_MAX_HIDDEN, &ee, err)) ||
        (rc = fg_cfg_bool(c, "use_entity_aware_attention", true, &aware, err)) ||
        (rc = fg__enc2_task(c, m, &luke_tasks, &t, &labels, err)))
        return rc;
    uint64_t h = m->hidden;
    struct fg_node *n;
    if ((rc = fg__enc2_bert_embeddings(m, types, NULL, err)) ||
        (rc = fg__add_table(m, FG_NODE_EMBED, "Entity embedding", ents, ee, &n, err)))
        return rc;
    n->width = (uint32_t)h;
    if (ee != h)
        fg__node_linear(n, "proj", ee, h, 1, false);
    /* the entity position and token type tables and their LayerNorm */
    n->params += m->max_pos * h + types * h + 2 * h;
    struct fg_enc2_block b = fg__enc2_bert_block(m, aware ? 3 : 0);
    b.eager_only = true; /* LukeSelfAttention computes its scores itself */
    if ((rc = fg__enc2_blocks(m, m->layers, &b, err)))
        return rc;
    m->encoder_only = true;
    m->tied = true;
    if ((t->flags & FG_ENC2_POOLER) && (rc = fg__add_pooler(m, h, err)))
        return rc;
    switch (t->head) {
    case FG_ENC2_H_LM:
        if ((rc = mlm_head(c, m, false, err)))
            return rc;
        return luke_entity_head(m, ents, ee, err);
    case LH_ENTITY:
        return fg__enc2_head(m, "Task head", h, labels, true, NULL, err);
    case LH_PAIR:
        return fg__enc2_head(m, "Task head", 2 * h, labels, false, NULL, err);
    case LH_SPAN:
        return fg__enc2_head(m, "Task head", 3 * h, labels, true, NULL, err);
    }
    return plain_head(m, t->head, labels, err);
}

/* ---- FNet and SqueezeBERT -------------------------------------------------------------------- */

enum { BH_PRETRAIN = FG_ENC2_H_FAMILY, BH_NSP };

/* The BERT task set of FNet and SqueezeBERT: every class keeps the pooler. */
static const struct fg_enc2_task bertlike_rows[] = {
    {"ForMaskedLM", FG_ENC2_H_LM, 0},
    {"Model", FG_ENC2_H_NONE, 0},
    {"ForPreTraining", BH_PRETRAIN, 0},
    {"ForNextSentencePrediction", BH_NSP, 0},
    {"ForSequenceClassification", FG_ENC2_H_LABELS, FG_ENC2_LABELS},
    {"ForMultipleChoice", FG_ENC2_H_ONE, 0},
    {"ForTokenClassification", FG_ENC2_H_LABELS, FG_ENC2_LABELS},
    {"ForQuestionAnswering", FG_ENC2_H_LABELS, FG_ENC2_LABELS},
    {NULL, 0, 0},
};
static const struct fg_enc2_tasks fnet_tasks = {"FNet", bertlike_rows, 1};
static const struct fg_enc2_tasks squeezebert_tasks = {"SqueezeBert", bertlike_rows, 1};

/* The pooler and the head of an FNet / SqueezeBERT class. */
static int bertlike_heads(const struct fg_cfg *c, struct fg_model *m,
                          const struct fg_enc2_task *t, uint64_t labels, struct fg_err *err)
{
    int rc = fg__add_pooler(m, m->hidden, err);
    if (rc)
        return rc;
    m->encoder_only = true;
    m->tied = true;
    if (t->head == FG_ENC2_H_LM || t->head == BH_PRETRAIN)
        return mlm_head(c, m, t->head == BH_PRETRAIN, err);
    if (t->head == BH_NSP)
        return fg__enc2_head(m, "Task head", m->hidden, 2, true, NULL, err);
    return plain_head(m, t->head, labels, err);
}

/* FNetLayer: FNetFourierTransform (an FFT over sequence and hidden, no weights) and its
 * FNetBasicOutput LayerNorm, FNetIntermediate / FNetOutput dense (biased) and LayerNorm. */
static int fnet_layer(struct fg_model *m, int32_t li, const void *ctx, struct fg_err *err)
{
    (void)ctx;
    struct fg_mlp_shape f = {.hidden = m->hidden, .inter = m->inter, .bias = true};
    struct fg_node *n = fg__model_add_block(m, FG_NODE_OTHER, li, "Fourier", err);
    if (!n)
        return FG_E_NOMEM;
    n->hidden = n->width = (uint32_t)m->hidden;
    fg__copy(n->desc, sizeof n->desc, "2-D FFT mixing, no weights");
    int rc;
    if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_LN, err)) ||
        (rc = fg__add_mlp(m, li, &f, NULL, err)) ||
        (rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_LN, err)))
        return rc;
    return 0;
}

/*
 * FNetModel (huggingface/transformers@0172c3ecffb3 models/fnet/modeling_fnet.py):
 * FNetEmbeddings word, position, token type tables, LayerNorm and projection H -> H
 * (biased); FNetLayers; FNetPooler.  Every task class keeps the pooler; the MLM head is
 * BERT's.  FNetConfig defaults (google/fnet-base shapes).
 */
static int read_fnet(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                     struct fg_err *err)
{
    (void)spec;
    static const struct fg_core_defaults d = {.vocab = 32000, .hidden = 768, .inter = 3072,
                                              .layers = 12, .heads = 1, .max_pos = 512,
                                              .tie = true};
    const struct fg_enc2_task *t;
    uint64_t labels, types;
    int rc;
    if ((rc = fg__read_core(c, m, &d, err)) ||
        (rc = fg_cfg_u64(c, "type_vocab_size", 4, 1, FG_MAX_VOCAB, &types, err)) ||
        (rc = fg__enc2_task(c, m, &fnet_tasks, &t, &labels, err)))
        return rc;
    uint64_t h = m->hidden;
    struct fg_node *n;
    if ((rc = fg__enc2_bert_embeddings(m, types, NULL, err)))
        return rc;
    if (!(n = fg__model_add(m, FG_NODE_OTHER, -1, "Embedding projection", err)))
        return FG_E_NOMEM;
    fg__node_linear(n, "proj", h, h, 1, true);
    n->hidden = n->width = (uint32_t)h;
    if ((rc = fg__add_layers(m, m->layers, fnet_layer, NULL, err)))
        return rc;
    return bertlike_heads(c, m, t, labels, err);
}

struct squeeze {
    uint64_t q, k, v, post, inter, out;   /* the groups of each grouped 1x1 convolution */
};

/* SqueezeBertModule: SqueezeBertSelfAttention query / key / value Conv1d(H, H, 1, groups)
 * (biased), post_attention ConvDropoutLayerNorm (conv H -> H of post_attention_groups and
 * LayerNorm), intermediate ConvActivation H -> inter, output ConvDropoutLayerNorm inter ->
 * H and LayerNorm. */
static int squeeze_layer(struct fg_model *m, int32_t li, const void *ctx, struct fg_err *err)
{
    const struct squeeze *g = ctx;
    uint64_t h = m->hidden, f = m->inter;
    struct fg_attn_shape a = {.hidden = h, .heads = m->heads, .kv_heads = m->heads,
                              .head_dim = m->head_dim, .qkv_bias = true, .o_bias = true,
                              .bidirectional = true};
    struct fg_mlp_shape mf = {.hidden = h, .inter = f, .bias = true};
    struct fg_node *n;
    int rc = fg__add_attention(m, li, &a, &n, err);
    if (rc)
        return rc;
    n->score_bytes = n->eager_bytes; /* SqueezeBertSelfAttention's matmul / softmax only */
    /* a grouped 1x1 convolution holds in x out / groups weights */
    n->params = (h * h / g->q + h * h / g->k + h * h / g->v + h * h / g->post) + 4 * h;
    fg__fmt(n->desc, sizeof n->desc, "MHA %llu heads, grouped convs %llu/%llu/%llu",
            (unsigned long long)m->heads, (unsigned long long)g->q, (unsigned long long)g->k,
            (unsigned long long)g->v);
    if ((rc = fg__add_norm(m, li, "Norm", h, FG_NORM_LN, err)) ||
        (rc = fg__add_mlp(m, li, &mf, &n, err)))
        return rc;
    n->params = h * f / g->inter + f + f * h / g->out + h;
    return fg__add_norm(m, li, "Norm", h, FG_NORM_LN, err);
}

/*
 * SqueezeBertModel (huggingface/transformers@01ae98ae2414 models/squeezebert/
 * modeling_squeezebert.py): SqueezeBertEmbeddings word, position and token type tables of
 * embedding_size, LayerNorm; SqueezeBertEncoder (embedding_size must equal hidden_size);
 * SqueezeBertPooler.  Every task class keeps the pooler; the MLM head is BERT's.
 * SqueezeBertConfig defaults (squeezebert/squeezebert-uncased shapes).
 */
static int read_squeezebert(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                            struct fg_err *err)
{
    (void)spec;
    static const struct fg_core_defaults d = {.vocab = 30522, .hidden = 768, .inter = 3072,
                                              .layers = 12, .heads = 12, .max_pos = 512,
                                              .tie = true};
    const struct fg_enc2_task *t;
    struct squeeze g;
    uint64_t labels, types, emb;
    int rc;
    if ((rc = fg__read_core(c, m, &d, err)) ||
        (rc = fg_cfg_u64(c, "type_vocab_size", 2, 1, FG_MAX_VOCAB, &types, err)) ||
        (rc = fg_cfg_u64(c, "embedding_size", 768, 1, FG_MAX_HIDDEN, &emb, err)) ||
        (rc = fg_cfg_u64(c, "q_groups", 4, 1, FG_MAX_HIDDEN, &g.q, err)) ||
        (rc = fg_cfg_u64(c, "k_groups", 4, 1, FG_MAX_HIDDEN, &g.k, err)) ||
        (rc = fg_cfg_u64(c, "v_groups", 4, 1, FG_MAX_HIDDEN, &g.v, err)) ||
        (rc = fg_cfg_u64(c, "post_attention_groups", 1, 1, FG_MAX_HIDDEN, &g.post, err)) ||
        (rc = fg_cfg_u64(c, "intermediate_groups", 4, 1, FG_MAX_HIDDEN, &g.inter, err)) ||
        (rc = fg_cfg_u64(c, "output_groups", 4, 1, FG_MAX_HIDDEN, &g.out, err)) ||
        (rc = fg__enc2_task(c, m, &squeezebert_tasks, &t, &labels, err)))
        return rc;
    uint64_t h = m->hidden, f = m->inter;
    if (emb != h || h % g.q || h % g.k || h % g.v || h % g.post || h % g.inter ||
        f % g.inter || h % g.out || f % g.out)
        return fg_err_set(err, FG_E_RANGE, "%s: SqueezeBERT needs embedding_size = "
                          "hidden_size and every *_groups to divide hidden_size and "
                          "intermediate_size (Conv1d groups)", c->origin);
    if ((rc = fg__enc2_bert_embeddings(m, types, NULL, err)) ||
        (rc = fg__add_layers(m, m->layers, squeeze_layer, &g, err)))
        return rc;
    return bertlike_heads(c, m, t, labels, err);
}

/* ---- wav2vec 2.0 --------------------------------------------------------------------------- */

enum { WH_CTC = FG_ENC2_H_FAMILY, WH_PRETRAIN, WH_SEQ, WH_FRAME };

static const struct fg_enc2_task wav2vec2_rows[] = {
    {"ForCTC", WH_CTC, 0},
    {"Model", FG_ENC2_H_NONE, 0},
    {"ForMaskedLM", FG_ENC2_H_LM, 0},
    {"ForPreTraining", WH_PRETRAIN, 0},
    {"ForSequenceClassification", WH_SEQ, FG_ENC2_LABELS},
    {"ForAudioFrameClassification", WH_FRAME, FG_ENC2_LABELS},
    {NULL, 0, 0},
};
static const struct fg_enc2_tasks wav2vec2_tasks = {"Wav2Vec2", wav2vec2_rows, 1};

/*
 * Wav2Vec2FeatureEncoder: conv layer i Conv1d(conv_dim[i - 1] or 1, conv_dim[i],
 * conv_kernel[i]) with bias by conv_bias; feat_extract_norm "group" puts a GroupNorm (one
 * group per channel, affine) after the first only, "layer" a LayerNorm after each.  Then
 * Wav2Vec2FeatureProjection: LayerNorm(conv_dim[-1]) and projection to hidden (biased).
 * *last: conv_dim[-1].
 */
static int wav2vec2_stem(const struct fg_cfg *c, struct fg_model *m, uint64_t *last,
                         struct fg_err *err)
{
    uint64_t dim[64], kern[64], stride[64];
    size_t nd = 0, nk = 0, ns = 0;
    const char *norm = NULL;
    bool bias;
    int rc;
    if ((rc = fg_cfg_u64_array(c, "conv_dim", 1, FG_MAX_HIDDEN, dim, 64, &nd, err)) ||
        (rc = fg_cfg_u64_array(c, "conv_kernel", 1, 1u << 12, kern, 64, &nk, err)) ||
        (rc = fg_cfg_u64_array(c, "conv_stride", 1, 1u << 12, stride, 64, &ns, err)) ||
        (rc = fg_cfg_str(c, "feat_extract_norm", "group", &norm, err)) ||
        (rc = fg_cfg_bool(c, "conv_bias", false, &bias, err)))
        return rc;
    static const uint64_t kdef[] = {10, 3, 3, 3, 3, 2, 2}, sdef[] = {5, 2, 2, 2, 2, 2, 2};
    if (!fg_cfg_has(c, "conv_dim"))
        for (nd = 0; nd < 7; nd++)
            dim[nd] = 512;
    if (!fg_cfg_has(c, "conv_kernel"))
        memcpy(kern, kdef, sizeof kdef), nk = 7;
    if (!fg_cfg_has(c, "conv_stride"))
        memcpy(stride, sdef, sizeof sdef), ns = 7;
    bool group = norm && !strcmp(norm, "group");
    if (!group && !(norm && !strcmp(norm, "layer")))
        return fg_err_set(err, FG_E_RANGE, "%s: key 'feat_extract_norm' = '%s'; expected "
                          "group or layer", c->origin, norm ? norm : "");
    if (nd == 0 || nd > 64 || nk != nd || ns != nd)
        return fg_err_set(err, FG_E_RANGE, "%s: keys 'conv_dim', 'conv_kernel' and "
                          "'conv_stride' hold %zu, %zu and %zu layers: they must match (1 to "
                          "64)", c->origin, nd, nk, ns);
    struct fg_node *n = fg__model_add(m, FG_NODE_OTHER, -1, "Feature encoder", err);
    if (!n)
        return FG_E_NOMEM;
    for (size_t i = 0; i < nd; i++) {
        uint64_t in = i ? dim[i - 1] : 1;
        n->params += in * dim[i] * kern[i] + (bias ? dim[i] : 0);
        if (!group || i == 0)
            n->params += 2 * dim[i];
    }
    n->hidden = 1;
    n->width = (uint32_t)dim[nd - 1];
    fg__fmt(n->desc, sizeof n->desc, "%zu conv layers, %s norm", nd, norm);
    *last = dim[nd - 1];
    if (!(n = fg__model_add(m, FG_NODE_OTHER, -1, "Feature projection", err)))
        return FG_E_NOMEM;
    fg__node_linear(n, "proj", *last, m->hidden, 1, true);
    n->params += 2 * *last;
    n->hidden = (uint32_t)*last;
    n->width = (uint32_t)m->hidden;
    fg__fmt(n->desc, sizeof n->desc, "LN %llu + %llu -> %llu", (unsigned long long)*last,
            (unsigned long long)*last, (unsigned long long)m->hidden);
    return 0;
}

/* Wav2Vec2Adapter (add_adapter): proj hidden -> output_hidden_size and its LayerNorm when
 * they differ, num_adapter_layers Conv1d(O, 2 x O, adapter_kernel_size) (biased). */
static int wav2vec2_adapter(const struct fg_cfg *c, struct fg_model *m, uint64_t out,
                            struct fg_err *err)
{
    uint64_t k, layers;
    int rc;
    if ((rc = fg_cfg_u64(c, "adapter_kernel_size", 3, 1, 1u << 12, &k, err)) ||
        (rc = fg_cfg_u64(c, "num_adapter_layers", 3, 0, 64, &layers, err)))
        return rc;
    struct fg_node *n = fg__model_add(m, FG_NODE_OTHER, -1, "Adapter", err);
    if (!n)
        return FG_E_NOMEM;
    if (out != m->hidden) {
        fg__node_linear(n, "proj", m->hidden, out, 1, true);
        n->params += 2 * out;
    }
    n->params += layers * (out * 2 * out * k + 2 * out);
    n->hidden = (uint32_t)m->hidden;
    n->width = (uint32_t)out;
    fg__fmt(n->desc, sizeof n->desc, "%llu conv layers x %llu", (unsigned long long)layers,
            (unsigned long long)out);
    return 0;
}

/* The Wav2Vec2EncoderLayer: BERT-shaped attention (q / k / v / out_proj biased), layer_norm,
 * feed_forward intermediate / output dense, final_layer_norm; with adapter_attn_dim each
 * adds a Wav2Vec2AttnAdapterLayer (LayerNorm, linear_1 H -> A, linear_2 A -> H, biased). */
static int wav2vec2_layer(struct fg_model *m, int32_t li, const void *ctx, struct fg_err *err)
{
    const uint64_t *adapter = ctx;
    struct fg_enc2_block b = fg__enc2_bert_block(m, 0);
    int rc = fg__enc2_block(m, li, &b, err);
    if (rc || !*adapter)
        return rc;
    struct fg_node *n = fg__model_add_block(m, FG_NODE_OTHER, li, "AttnAdapter", err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "down", m->hidden, *adapter, 1, true);
    fg__node_linear(n, "up", *adapter, m->hidden, 1, true);
    n->params += 2 * m->hidden;
    n->hidden = n->width = (uint32_t)m->hidden;
    return 0;
}

/* The task head of a wav2vec2 class: ForCTC's lm_head (from output_hidden_size behind an
 * adapter), ForMaskedLM's, ForPreTraining's Wav2Vec2GumbelVectorQuantizer (codevectors
 * groups x vars x codevector_dim / groups, weight_proj conv_dim[-1] -> groups x vars) with
 * project_hid and project_q to proj_codevector_dim, and the classifiers (projector to
 * classifier_proj_size, then num_labels; layer_weights, layers + 1, with
 * use_weighted_layer_sum). */
static int wav2vec2_head(const struct fg_cfg *c, struct fg_model *m, unsigned head,
                         uint64_t labels, uint64_t last, uint64_t out_h, struct fg_err *err)
{
    uint64_t h = m->hidden, groups, vars, cd, pcd, proj;
    bool weighted;
    struct fg_node *n;
    int rc;
    if ((rc = fg_cfg_u64(c, "num_codevector_groups", 2, 1, 1024, &groups, err)) ||
        (rc = fg_cfg_u64(c, "num_codevectors_per_group", 320, 1, 1u << 20, &vars, err)) ||
        (rc = fg_cfg_u64(c, "codevector_dim", 256, 1, FG_MAX_HIDDEN, &cd, err)) ||
        (rc = fg_cfg_u64(c, "proj_codevector_dim", 256, 1, FG_MAX_HIDDEN, &pcd, err)) ||
        (rc = fg_cfg_u64(c, "classifier_proj_size", 256, 1, FG_MAX_HIDDEN, &proj, err)) ||
        (rc = fg_cfg_bool(c, "use_weighted_layer_sum", false, &weighted, err)))
        return rc;
    switch (head) {
    case WH_CTC:
    case FG_ENC2_H_LM:
        return fg__enc2_head(m, "LM head", head == WH_CTC ? out_h : h, m->vocab, true, NULL,
                             err);
    case WH_PRETRAIN:
        if ((rc = fg__enc2_head(m, "Task head", h, pcd, true, &n, err)))
            return rc;
        fg__node_linear(n, "project_q", cd, pcd, 1, true);
        fg__node_linear(n, "weight_proj", last, groups * vars, 1, true);
        n->params += groups * vars * (cd / groups);
        fg__copy(n->desc, sizeof n->desc, "quantizer + project_hid / project_q");
        return 0;
    case WH_SEQ:
    case WH_FRAME:
        if ((rc = fg__enc2_head(m, "Task head", head == WH_SEQ ? proj : h, labels, true, &n,
                                err)))
            return rc;
        if (head == WH_SEQ)
            fg__node_linear(n, "projector", h, proj, 1, true);
        n->params += weighted ? m->layers + 1 : 0;
        return 0;
    }
    return 0;
}

/*
 * Wav2Vec2Model (huggingface/transformers@00363c3693bc models/wav2vec2/
 * modeling_wav2vec2.py): the feature encoder and projection above, masked_spec_embed
 * (hidden) when mask_time_prob or mask_feature_prob is above 0, Wav2Vec2Encoder or
 * Wav2Vec2EncoderStableLayerNorm (do_stable_layer_norm: the same modules, the encoder
 * LayerNorm after the layers): Wav2Vec2PositionalConvEmbedding Conv1d(H, H,
 * num_conv_pos_embeddings, groups num_conv_pos_embedding_groups) under weight_norm(dim=2)
 * (weight_v, weight_g of one per kernel tap, bias), LayerNorm, the layers; the adapter with
 * add_adapter.  Wav2Vec2Config defaults (facebook/wav2vec2-base-960h shapes).
 */
static int read_wav2vec2(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                         struct fg_err *err)
{
    (void)spec;
    static const struct fg_core_defaults d = {.vocab = 32, .hidden = 768, .inter = 3072,
                                              .layers = 12, .heads = 12, .max_pos = 1,
                                              .tie = false};
    const struct fg_enc2_task *t;
    uint64_t labels, last, pos_k, pos_g, out_h, attn_ad = 0;
    double tprob, fprob;
    bool stable, adapter;
    int rc;
    if ((rc = fg__read_core(c, m, &d, err)) ||
        (rc = fg_cfg_u64(c, "num_conv_pos_embeddings", 128, 1, 1u << 12, &pos_k, err)) ||
        (rc = fg_cfg_u64(c, "num_conv_pos_embedding_groups", 16, 1, FG_MAX_HIDDEN, &pos_g,
                         err)) ||
        (rc = fg_cfg_f64(c, "mask_time_prob", 0.05, 0.0, 1.0, &tprob, err)) ||
        (rc = fg_cfg_f64(c, "mask_feature_prob", 0.0, 0.0, 1.0, &fprob, err)) ||
        (rc = fg_cfg_bool(c, "do_stable_layer_norm", false, &stable, err)) ||
        (rc = fg_cfg_bool(c, "add_adapter", false, &adapter, err)) ||
        (rc = fg_cfg_u64(c, "output_hidden_size", m->hidden, 1, FG_MAX_HIDDEN, &out_h, err)) ||
        (fg_cfg_has(c, "adapter_attn_dim") &&
         (rc = fg_cfg_u64(c, "adapter_attn_dim", 0, 1, FG_MAX_HIDDEN, &attn_ad, err))) ||
        (rc = fg__enc2_task(c, m, &wav2vec2_tasks, &t, &labels, err)))
        return rc;
    /* no position table: the frames are as many as the audio is long, so no cap on the
     * job's sequence */
    m->max_pos = 0;
    uint64_t h = m->hidden;
    if (h % pos_g)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'num_conv_pos_embedding_groups' = %llu "
                          "does not divide hidden_size %llu", c->origin,
                          (unsigned long long)pos_g, (unsigned long long)h);
    if (!adapter)
        out_h = h;
    struct fg_node *n;
    if ((rc = wav2vec2_stem(c, m, &last, err)))
        return rc;
    if (tprob > 0 || fprob > 0)
        m->nodes[m->n_nodes - 1].params += h; /* masked_spec_embed */
    if ((rc = fg__add_table(m, FG_NODE_POS_EMBED, "Positional conv", h / pos_g * pos_k + 1, h,
                            &n, err)))
        return rc;
    n->params += pos_k; /* weight_g */
    fg__fmt(n->desc, sizeof n->desc, "conv %llu taps, %llu groups, weight norm",
            (unsigned long long)pos_k, (unsigned long long)pos_g);
    if ((!stable && (rc = fg__add_norm(m, -1, "Encoder norm", h, FG_NORM_LN, err))) ||
        (rc = fg__add_layers(m, m->layers, wav2vec2_layer, &attn_ad, err)) ||
        (stable && (rc = fg__add_norm(m, -1, "Final norm", h, FG_NORM_LN, err))) ||
        (adapter && (rc = wav2vec2_adapter(c, m, out_h, err))))
        return rc;
    m->encoder_only = true;
    m->tied = false;
    return wav2vec2_head(c, m, t->head, labels, last, out_h, err);
}

const struct fg_arch fg__arch_enc2b_table[] = {
#include "arch/encoder/tapas_luke_fnet.def"
    {0},
};
