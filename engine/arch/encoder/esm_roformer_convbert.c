/*
 * esm_roformer_convbert.c - the masked-LM encoders whose embeddings or heads are not BERT's, over the
 * blocks of bert_variants.c (bert_variants.h); registered through fg__arch_enc1b_table:
 *
 *   esm       EsmModel / EsmForMaskedLM       models/esm/modeling_esm.py @0220b9db084f
 *   roformer  RoFormerModel                   models/roformer/modeling_roformer.py @189e82c53b3f
 *   rembert   RemBertModel                    models/rembert/modeling_rembert.py @02fb0d2b4ec1
 *   convbert  ConvBertModel                   models/convbert/modeling_convbert.py @0172c3ecffb3
 */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "arch/encoder/bert_variants.h"
#include "util/fmt.h"

/* ---- ESM ------------------------------------------------------------------------------------ */

/* EsmFor*: sequence classification is EsmClassificationHead (dense + out_proj). */
static const struct enc1_tasks esm_tasks = {
    .classes = E1C_MASKED_LM | E1C_MODEL | E1C_SEQ | E1C_TOKEN, .pooled = E1C_MODEL,
    .seq_head = E1_CLS_DENSE};

/*
 * EsmModel (models/esm/modeling_esm.py @0220b9db084f):
 *   EsmEmbeddings  word_embeddings; layer_norm only with emb_layer_norm_before;
 *                  position_embeddings (max_position_embeddings x h) only for
 *                  position_embedding_type "absolute"
 *   EsmLayer       EsmAttention: LayerNorm (pre-norm), query / key / value and
 *                  EsmSelfOutput dense (biased); rotary: RotaryEmbedding's inv_freq, a
 *                  persistent buffer of ceil(head_dim / 2); relative_key[_query]:
 *                  distance_embedding (2 max_pos - 1) x head_dim; LayerNorm;
 *                  intermediate and output dense (biased)
 *   EsmEncoder     emb_layer_norm_after
 *   EsmModel       contact_head: EsmContactPredictionHead regression Linear(layers x heads,
 *                  1) with bias, in every class; pooler (add_pooling_layer)
 *   EsmLMHead      dense h x h + bias, layer_norm, decoder h -> vocab without bias (tied),
 *                  bias vocab
 * Before transformers PR #38089 (noted in PR #39063, 2025-06-26) EsmEmbeddings built
 * position_embeddings whatever the type, so checkpoints of configs written before 4.53
 * hold the unused table: facebook/esm2_t6_8M_UR50D's model.safetensors is F32 7,840,842 =
 * the class 7,512,474 + the table 1026 x 320 + inv_freq 6 x 8, and I64 1026
 * (position_ids, persistent before 4.31).  The fair-esm models count 651,043,254
 * (esm2_t33_650M), 148,140,154 (t30_150M), 33,501,394 (t12_35M): the class without table
 * and buffers (tests/test_arch_bert_variants.c).
 */
static int read_esm(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                      struct fg_err *err)
{
    (void)spec;
    /* EsmConfig defaults; vocab_size has none (None) */
    static const struct fg_core_defaults d = {.vocab = 0, .hidden = 768, .inter = 3072,
                                              .layers = 12, .heads = 12, .max_pos = 1026,
                                              .tie = true};
    uint64_t labels = 2;
    bool relative, rotary, norm_before, folding, cross;
    struct enc1_task task;
    struct fg_node *n;
    int rc;
    if ((rc = fg_cfg_u64_req(c, "vocab_size", 1, FG_MAX_VOCAB, &m->vocab, err)) ||
        (rc = fg__read_core(c, m, &d, err)) ||
        (rc = fg__enc1_pos_type(c, "absolute", &relative, &rotary, true, err)) ||
        (rc = fg_cfg_bool(c, "emb_layer_norm_before", false, &norm_before, err)) ||
        (rc = fg_cfg_bool(c, "is_folding_model", false, &folding, err)) ||
        (rc = fg_cfg_bool(c, "add_cross_attention", false, &cross, err)))
        return rc;
    if (folding || fg_cfg_has(c, "esmfold_config"))
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: key 'is_folding_model' / "
                          "'esmfold_config': EsmForProteinFolding's folding trunk and structure "
                          "module are not sized", c->origin);
    if ((rc = fg__enc1_task(c, m, "Esm", &esm_tasks, &task, &labels, err)))
        return rc;
    unsigned ver = fg__cfg_tf_version(c);
    bool table = !rotary && !relative;
    bool old_table = !table && ver && ver < 4053;
    uint64_t h = m->hidden, inv_freq = rotary ? (m->head_dim + 1) / 2 : 0;
    if ((rc = fg__add_embedding(m, m->vocab, h, err)))
        return rc;
    if (table || old_table) {
        if ((rc = fg__add_table(m, FG_NODE_POS_EMBED, "Position embedding", m->max_pos, h, &n,
                                err)))
            return rc;
        if (old_table) {
            n->buffers += n->params; /* built, never used: no gradient reaches it */
            fg__model_rule(m, "unused position_embeddings stored (EsmEmbeddings before "
                           "transformers 4.53; in Position embedding)", 0);
        }
        fg__enc1_position_ids(c, m, n);
    }
    if (norm_before && (rc = fg__add_norm(m, -1, "Embedding norm", h, FG_NORM_LN, err)))
        return rc;
    struct enc1_block b = fg__enc1_bert_block(m, true);
    b.attn_extra = relative ? (2 * m->max_pos - 1) * m->head_dim : inv_freq;
    b.cross = cross;
    for (uint64_t l = 0; l < m->layers; l++) {
        if ((rc = fg__enc1_block(m, (int32_t)l, &b, &n, err)))
            return rc;
        n->buffers += rotary ? inv_freq : 0;
    }
    if ((rc = fg__add_norm(m, -1, "Final norm", h, FG_NORM_LN, err)) ||
        (rc = fg__add_table(m, FG_NODE_OTHER, "Contact head", m->layers * m->heads + 1, 1, &n,
                            err)))
        return rc;
    fg__fmt(n->desc, sizeof n->desc, "regression %llu x 1 + bias",
            (unsigned long long)(m->layers * m->heads));
    if (task.pooler && (rc = fg__add_pooler(m, h, err)))
        return rc;
    m->encoder_only = true;
    return fg__enc1_head(m, task.head, labels, h, !m->tied, 0, err);
}

/* ---- RoFormer ------------------------------------------------------------------------------- */

/* RoFormerFor*: RoFormerModel has no pooler; sequence classification is dense + out_proj. */
static const struct enc1_tasks roformer_tasks = {
    .classes = E1C_BERT & ~(E1C_PRETRAINING | E1C_CHOICE), .pooled = 0, .seq_head = E1_CLS_DENSE};

/*
 * RoFormerModel (models/roformer/modeling_roformer.py):
 *   RoFormerEmbeddings  word and token type tables of embedding_size (hidden when absent),
 *                       LayerNorm(E); embeddings_project Linear(E, h) when they differ
 *   RoFormerEncoder     embed_positions: RoFormerSinusoidalPositionalEmbedding, an
 *                       nn.Embedding(max_position_embeddings, h / heads) whose weight is
 *                       frozen (requires_grad False) but in the state dict; BERT layers
 *                       (rotary on q / k, and v with rotary_value: no parameters)
 * Heads: RoFormerPredictionHeadTransform dense h -> E + LayerNorm(E), decoder E -> vocab
 * tied, bias vocab.
 */
static int read_roformer(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                           struct fg_err *err)
{
    (void)spec;
    /* RoFormerConfig defaults */
    static const struct fg_core_defaults d = {.vocab = 50000, .hidden = 768, .inter = 3072,
                                              .layers = 12, .heads = 12, .max_pos = 1536,
                                              .tie = true};
    uint64_t emb, types, labels = 2;
    bool cross, decoder;
    struct enc1_task task;
    struct fg_node *n;
    int rc;
    if ((rc = fg__read_core(c, m, &d, err)) ||
        (rc = fg_cfg_u64(c, "embedding_size", m->hidden, 1, FG_MAX_HIDDEN, &emb, err)) ||
        (rc = fg_cfg_u64(c, "type_vocab_size", 2, 0, FG_MAX_VOCAB, &types, err)) ||
        (rc = fg_cfg_bool(c, "add_cross_attention", false, &cross, err)) ||
        (rc = fg_cfg_bool(c, "is_decoder", false, &decoder, err)) ||
        (rc = fg__enc1_task(c, m, "RoFormer", &roformer_tasks, &task, &labels, err)))
        return rc;
    uint64_t h = m->hidden;
    if ((rc = fg__enc1_embeddings(c, m, emb, false, types, emb != h, err)))
        return rc;
    if ((rc = fg__add_table(m, FG_NODE_POS_EMBED, "Sinusoidal positions", m->max_pos,
                            m->head_dim, &n, err)))
        return rc;
    n->buffers = n->params; /* frozen: stored, never trained */
    struct enc1_block b = fg__enc1_bert_block(m, !decoder);
    b.cross = cross;
    if ((rc = fg__enc1_blocks(m, &b, err)))
        return rc;
    m->encoder_only = !decoder;
    return fg__enc1_head(m, task.head, labels, emb, !m->tied, 0, err);
}

/* ---- RemBERT -------------------------------------------------------------------------------- */

/* RemBertFor*: BERT's classes but pre-training; the pooler under the base model,
 * sequence classification and multiple choice. */
static const struct enc1_tasks rembert_tasks = {
    .classes = E1C_BERT & ~E1C_PRETRAINING, .pooled = E1C_MODEL | E1C_SEQ | E1C_CHOICE,
    .seq_head = E1_LABELS};

/*
 * RemBertModel (models/rembert/modeling_rembert.py): RemBertEmbeddings word, position and
 * token type tables of input_embedding_size and LayerNorm(input_embedding_size);
 * RemBertEncoder embedding_hidden_mapping_in Linear(input_embedding_size, h) and BERT
 * layers; pooler (add_pooling_layer).  RemBertLMPredictionHead: dense h ->
 * output_embedding_size, decoder output_embedding_size -> vocab with bias (untied:
 * RemBertConfig's tie_word_embeddings defaults to false), LayerNorm(output_embedding_size);
 * no separate bias.
 */
static int read_rembert(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                          struct fg_err *err)
{
    (void)spec;
    /* RemBertConfig defaults (google/rembert shapes) */
    static const struct fg_core_defaults d = {.vocab = 250300, .hidden = 1152, .inter = 4608,
                                              .layers = 32, .heads = 18, .max_pos = 512,
                                              .tie = false};
    uint64_t in_emb, out_emb, types, labels = 2;
    bool cross, decoder;
    struct enc1_task task;
    int rc;
    if ((rc = fg__read_core(c, m, &d, err)) ||
        (rc = fg_cfg_u64(c, "input_embedding_size", 256, 1, FG_MAX_HIDDEN, &in_emb, err)) ||
        (rc = fg_cfg_u64(c, "output_embedding_size", 1664, 1, FG_MAX_HIDDEN, &out_emb, err)) ||
        (rc = fg_cfg_u64(c, "type_vocab_size", 2, 0, FG_MAX_VOCAB, &types, err)) ||
        (rc = fg_cfg_bool(c, "add_cross_attention", false, &cross, err)) ||
        (rc = fg_cfg_bool(c, "is_decoder", false, &decoder, err)) ||
        (rc = fg__enc1_task(c, m, "RemBert", &rembert_tasks, &task, &labels, err)))
        return rc;
    /* google/rembert's config.json carries embedding_size 256 from its conversion:
     * RemBertConfig has no such argument and modeling_rembert only asks hasattr(config,
     * "embedding_size") in RemBertSelfAttention's head-divisibility check, so it sizes
     * nothing; read here so the factorised-embedding check does not doubt the count */
    (void)fg__cfg_raw(c, "embedding_size");
    uint64_t h = m->hidden;
    if ((rc = fg__enc1_embeddings(c, m, in_emb, true, types, true, err)))
        return rc;
    struct enc1_block b = fg__enc1_bert_block(m, !decoder);
    b.cross = cross;
    if ((rc = fg__enc1_blocks(m, &b, err)))
        return rc;
    if (task.pooler && (rc = fg__add_pooler(m, h, err)))
        return rc;
    m->encoder_only = !decoder;
    /* tied only where the tables have one width (the decoder is output_embedding_size) */
    return fg__enc1_head(m, task.head, labels, out_emb, !m->tied || in_emb != out_emb, 0, err);
}

/* ---- ConvBERT ------------------------------------------------------------------------------- */

/* ConvBertFor*: no pooler; the MLM head is ConvBertGeneratorPredictions +
 * generator_lm_head; sequence classification is dense + out_proj. */
static const struct enc1_tasks convbert_tasks = {
    .classes = E1C_MASKED_LM | E1C_MODEL | E1C_SEQ | E1C_TOKEN | E1C_QA, .pooled = 0,
    .seq_head = E1_CLS_DENSE};

/*
 * ConvBertModel (models/convbert/modeling_convbert.py @0172c3ecffb3):
 *   ConvBertEmbeddings  word, position, token type tables of embedding_size, LayerNorm(E);
 *                       embeddings_project Linear(E, h) when they differ; no pooler
 *   ConvBertSelfAttention  heads' = heads / head_ratio (1 when that is 0), head_size =
 *                       h / heads, A = heads' x head_size: query / key / value h -> A;
 *                       key_conv_attn_layer SeparableConv1D: depthwise h x k, pointwise
 *                       h -> A (no bias), bias A; conv_kernel_layer A -> heads' x k;
 *                       conv_out_layer h -> A (biased); the attention and convolution
 *                       halves concatenate back to h for ConvBertSelfOutput dense h x h
 *                       and its LayerNorm
 *   ConvBertIntermediate / Output  Linear, or GroupedLinearLayer (num_groups x in/g x
 *                       out/g + bias out) when num_groups > 1; LayerNorm
 * ForMaskedLM: LayerNorm(E), dense h -> E, generator_lm_head E -> vocab tied, bias vocab.
 * The convolution branch's activations are not modelled beyond the attention's.
 */
static int read_convbert(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                           struct fg_err *err)
{
    (void)spec;
    /* ConvBertConfig defaults (YituTech/conv-bert-base shapes) */
    static const struct fg_core_defaults d = {.vocab = 30522, .hidden = 768, .inter = 3072,
                                              .layers = 12, .heads = 12, .max_pos = 512,
                                              .tie = true};
    uint64_t emb, types, ratio, k, groups, labels = 2;
    bool cross;
    struct enc1_task task;
    int rc;
    if ((rc = fg__read_core(c, m, &d, err)) ||
        (rc = fg_cfg_u64(c, "embedding_size", 768, 1, FG_MAX_HIDDEN, &emb, err)) ||
        (rc = fg_cfg_u64(c, "type_vocab_size", 2, 0, FG_MAX_VOCAB, &types, err)) ||
        (rc = fg_cfg_u64(c, "head_ratio", 2, 1, FG_MAX_HEADS, &ratio, err)) ||
        (rc = fg_cfg_u64(c, "conv_kernel_size", 9, 1, 1024, &k, err)) ||
        (rc = fg_cfg_u64(c, "num_groups", 1, 1, FG_MAX_HIDDEN, &groups, err)) ||
        (rc = fg_cfg_bool(c, "add_cross_attention", false, &cross, err)))
        return rc;
    if (cross)
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: key 'add_cross_attention' is true: "
                          "ConvBERT as a decoder is not sized (transformers has no "
                          "ConvBertForCausalLM)", c->origin);
    uint64_t h = m->hidden, heads2 = m->heads / ratio ? m->heads / ratio : 1;
    if (h % heads2 || h % groups || m->inter % groups)
        return fg_err_set(err, FG_E_RANGE, "%s: hidden_size %llu / intermediate_size %llu do "
                          "not divide into %llu attention heads / num_groups %llu", c->origin,
                          (unsigned long long)h, (unsigned long long)m->inter,
                          (unsigned long long)heads2, (unsigned long long)groups);
    if ((rc = fg__enc1_task(c, m, "ConvBert", &convbert_tasks, &task, &labels, err)))
        return rc;
    uint64_t a = heads2 * m->head_dim;
    if ((rc = fg__enc1_embeddings(c, m, emb, true, types, emb != h, err)))
        return rc;
    struct enc1_block b = fg__enc1_bert_block(m, true);
    b.a.heads = b.a.kv_heads = heads2;
    /* the output dense reads h, not A; the separable convolution, conv_kernel_layer,
     * conv_out_layer */
    b.attn_extra = (h - a) * h + (h * k + h * a + a) + (a * heads2 * k + heads2 * k) + (h * a + a);
    for (uint64_t l = 0; l < m->layers; l++) {
        size_t first = m->n_nodes;
        if ((rc = fg__enc1_block(m, (int32_t)l, &b, NULL, err)))
            return rc;
        for (size_t j = first; groups > 1 && j < m->n_nodes; j++)
            if (m->nodes[j].kind == FG_NODE_MLP) /* GroupedLinearLayer: 1 / num_groups */
                m->nodes[j].params = 2 * (h / groups) * (m->inter / groups) * groups +
                                     m->inter + h;
    }
    m->encoder_only = true;
    return fg__enc1_head(m, task.head, labels, emb, !m->tied, 0, err);
}

const struct fg_arch fg__arch_enc1b_table[] = {
#include "arch/encoder/esm_roformer_convbert.def"
    {0},
};
