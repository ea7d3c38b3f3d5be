/*
 * bert_family.c - bidirectional encoders with transformers' task heads:
 *
 *   bert        BertModel / BertFor* (transformers models/bert), and the
 *               families that share its heads: roberta, xlm-roberta,
 *               camembert, mpnet, electra, distilbert, modernbert,
 *               deberta-v2
 *
 * Encoder blocks are post-norm (attention, norm, MLP, norm).  The
 * encoder-decoders (bart, t5, whisper) are bart_t5_whisper.c, nomic_bert
 * nomic_bert.c.
 *
 * What a published checkpoint stores beyond the module's parameters (task
 * heads, persistent buffers, tensors the class no longer builds) is a named
 * rule, decided from the config (architectures, transformers_version,
 * feed_forward_proj), each with the measurement it rests on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "arch/arch.h"
#include "arch/encoder/bert_family.h"
#include "util/fmt.h"

/* ---- BERT ----------------------------------------------------------------- */

/*
 * What a BERT checkpoint stores beyond the encoder, by the class the
 * architectures list names (the first known one; absent = the Google layout).
 *   pooler   BertPooler dense hidden x hidden + bias (add_pooling_layer)
 *   PRETRAIN BertPreTrainingHeads: predictions.transform (dense + LayerNorm),
 *            predictions.bias (vocab; decoder.weight is tied to the word
 *            embeddings and not written), seq_relationship hidden x 2 + 2
 *   LABELS   classifier hidden x num_labels + num_labels
 *   QA       qa_outputs hidden x 2 + 2
 */
enum bert_head {
    BH_NONE,
    BH_PRETRAIN,    /* MLM transform + LayerNorm + vocab bias, and NSP hidden x 2 + 2 */
    BH_MLM,         /* RobertaLMHead: dense + layer_norm + bias (decoder tied) */
    BH_LABELS,
    BH_CLS_DENSE,   /* RobertaClassificationHead: dense hidden x hidden + out_proj */
    BH_ONE,
    BH_ONE_DENSE,   /* DistilBertForMultipleChoice: pre_classifier + classifier hidden x 1 */
    BH_QA,
    BH_DISC,        /* ElectraDiscriminatorPredictions: dense hidden x hidden, dense_prediction
                       hidden x 1 */
    BH_GEN,         /* ElectraGeneratorPredictions: LayerNorm(E), dense hidden -> E; the
                       generator_lm_head's bias (its weight is tied) */
};

struct bert_task {
    const char *cls;    /* the class name, or its suffix after the family prefix */
    bool pooler;
    enum bert_head head;
};

/* A family read by read_bert: its task classes, config defaults, and whether
 * its BertModel configs follow the Google-conversion reading below. */
struct bert_family {
    const struct bert_task *tasks;
    const char *prefixes;            /* class-name prefixes, '|' separated */
    const struct bert_task *absent;  /* task when the config has no architectures */
    const char *name;                /* in bert_task_labels' note; read_bert words its own */
    bool google_layout;
    bool unversioned_pooler;         /* configs without transformers_version: a pooler may
                                        be stored beside a head class that builds none */
    uint64_t rel_buckets_def;        /* MPNet: one relative_attention_bias (buckets x heads)
                                        shared by all layers; 0 = none */
    uint64_t embedding_size_def;     /* ELECTRA: embeddings of embedding_size, projected to
                                        hidden by embeddings_project when they differ; 0 = none */
    struct fg_core_defaults d;
    uint64_t types_def;              /* type_vocab_size when absent */
};

static const struct bert_task bert_tasks[] = {
    {"BertForPreTraining", true, BH_PRETRAIN},
    /* The published google-bert checkpoints name BertForMaskedLM but store the
     * whole BertForPreTraining state (pooler + MLM + NSP): bert-base-uncased's
     * model.safetensors holds 110,106,428 scalars = BertModel 109,482,240 +
     * MLM 622,650 + NSP 1,538 (huggingface.js / safetensors metadata tables). */
    {"BertForMaskedLM", true, BH_PRETRAIN},
    /* BertModel: see google_layout() in read_bert. */
    {"BertModel", true, BH_PRETRAIN},
    {"BertForSequenceClassification", true, BH_LABELS},
    {"BertForMultipleChoice", true, BH_ONE},
    {"BertForTokenClassification", false, BH_LABELS},
    {"BertForQuestionAnswering", false, BH_QA},
    {NULL, false, BH_NONE},
};

/*
 * RoBERTa and the models built on its classes (XLM-RoBERTa, CamemBERT): BERT
 * embeddings and layers (RobertaEmbeddings' position table already holds the
 * padding_idx + 1 offset in max_position_embeddings), heads by class:
 *   ForMaskedLM / ForCausalLM  RobertaLMHead dense hidden x hidden + bias,
 *                layer_norm, bias vocab (decoder.weight tied, its bias is the
 *                same tensor)
 *   ForSequenceClassification  RobertaClassificationHead, no pooler
 *   ForMultipleChoice          pooler + classifier hidden x 1
 * The count is what the class builds.  The original fairseq conversions,
 * whose configs carry no transformers_version, stored RobertaModel's pooler
 * whatever the class: xlm-roberta-base 278,885,778, xlm-roberta-large
 * 561,192,082 and camembert-base 111,246,085 (ForMaskedLM) and
 * roberta-large-mnli 356,412,419 (ForSequenceClassification) are each exactly
 * the class plus pooler (the safetensors metadata table in the
 * huggingface/safetensors repository), while roberta-base and roberta-large's
 * safetensors files were re-saved through the class (no pooler, position_ids
 * kept: 124,697,433 / 355,412,057 F32 + 514 I64).  Their configs cannot tell
 * the two apart, so an unversioned head class is unsure of the stored count
 * (not of what is loaded) until the safetensors headers are read.
 */
static const struct bert_task roberta_tasks[] = {
    {"ForMaskedLM", false, BH_MLM},
    {"ForCausalLM", false, BH_MLM},
    {"Model", true, BH_NONE},
    {"ForSequenceClassification", false, BH_CLS_DENSE},
    {"ForMultipleChoice", true, BH_ONE},
    {"ForTokenClassification", false, BH_LABELS},
    {"ForQuestionAnswering", false, BH_QA},
    {NULL, false, BH_NONE},
};

/* BertConfig defaults (google-bert/bert-base-uncased shapes). */
static const struct bert_family bert = {
    .tasks = bert_tasks, .prefixes = "", .absent = &bert_tasks[0], .google_layout = true,
    .d = {.vocab = 30522, .hidden = 768, .inter = 3072, .layers = 12, .heads = 12,
          .max_pos = 512, .tie = true},
    .types_def = 2};
/* RobertaConfig defaults (models/roberta/configuration_roberta.py). */
static const struct bert_family roberta = {
    .unversioned_pooler = true, .tasks = roberta_tasks, .prefixes = "Roberta", .absent = &roberta_tasks[2],
    .d = {.vocab = 50265, .hidden = 768, .inter = 3072, .layers = 12, .heads = 12,
          .max_pos = 512, .tie = true},
    .types_def = 2};
/* XLMRobertaConfig defaults (models/xlm_roberta/configuration_xlm_roberta.py). */
static const struct bert_family xlm_roberta = {
    .unversioned_pooler = true, .tasks = roberta_tasks, .prefixes = "XLMRoberta", .absent = &roberta_tasks[2],
    .d = {.vocab = 30522, .hidden = 768, .inter = 3072, .layers = 12, .heads = 12,
          .max_pos = 512, .tie = true},
    .types_def = 2};
/* CamembertConfig defaults (models/camembert/configuration_camembert.py). */
static const struct bert_family camembert = {
    .unversioned_pooler = true, .tasks = roberta_tasks, .prefixes = "Camembert", .absent = &roberta_tasks[2],
    .d = {.vocab = 30522, .hidden = 768, .inter = 3072, .layers = 12, .heads = 12,
          .max_pos = 512, .tie = true},
    .types_def = 2};

/* Data2VecTextConfig defaults (models/data2vec/configuration_data2vec_text.py):
 * Data2VecTextModel's embeddings, layers and pooler, and its task heads
 * (Data2VecTextLMHead, Data2VecTextClassificationHead), are RoBERTa's, copied. */
static const struct bert_family data2vec_text = {
    .tasks = roberta_tasks, .prefixes = "Data2VecText", .absent = &roberta_tasks[2],
    .d = {.vocab = 30522, .hidden = 768, .inter = 3072, .layers = 12, .heads = 12,
          .max_pos = 512, .tie = true},
    .types_def = 2};

/* MPNetConfig defaults (models/mpnet/configuration_mpnet.py): MPNetModel is BERT without
 * token types plus encoder.relative_attention_bias, Embedding(relative_attention_num_buckets,
 * heads), shared by every layer; its task classes have RoBERTa's heads (MPNetLMHead,
 * MPNetClassificationHead; MPNetForMaskedLM builds no pooler). */
static const struct bert_family mpnet = {
    .tasks = roberta_tasks, .prefixes = "MPNet", .absent = &roberta_tasks[2],
    .rel_buckets_def = 32,
    .d = {.vocab = 30527, .hidden = 768, .inter = 3072, .layers = 12, .heads = 12,
          .max_pos = 514, .tie = true},
    .types_def = 0};

/*
 * ELECTRA (models/electra/modeling_electra.py): BERT layers under embeddings of
 * embedding_size (word, position, token type, LayerNorm) and embeddings_project
 * Linear(embedding_size, hidden) when the two differ; no pooler in any class.
 */
static const struct bert_task electra_tasks[] = {
    {"ElectraForPreTraining", false, BH_DISC},
    {"ElectraForMaskedLM", false, BH_GEN},
    {"ElectraModel", false, BH_NONE},
    {"ElectraForSequenceClassification", false, BH_CLS_DENSE},
    {"ElectraForTokenClassification", false, BH_LABELS},
    {"ElectraForQuestionAnswering", false, BH_QA},
    {NULL, false, BH_NONE},
};

/* ElectraConfig defaults (electra-small-discriminator shapes). */
static const struct bert_family electra = {
    .tasks = electra_tasks, .prefixes = "", .absent = &electra_tasks[2],
    .embedding_size_def = 128,
    .d = {.vocab = 30522, .hidden = 256, .inter = 1024, .layers = 12, .heads = 4,
          .max_pos = 512, .tie = true},
    .types_def = 2};

static const struct bert_task *bert_task_of(const struct fg_cfg *c, const struct bert_family *f,
                                            struct fg_err *err, int *rc)
{
    const char *a[16];
    size_t n = 0;
    *rc = fg_cfg_str_array(c, "architectures", a, 16, &n, err);
    if (*rc)
        return NULL;
    for (size_t i = 0; i < n && i < 16; i++)
        for (const struct bert_task *t = f->tasks; t->cls; t++)
            if (fg__class_is(a[i], f->prefixes, t->cls))
                return t;
    return n ? NULL : f->absent;
}

/* The class of the config in fam's table, else fam->absent with a note naming the family
 * (DistilBERT, DeBERTa-v2); num_labels read into *labels for a classifier head. */
static int bert_task_labels(const struct fg_cfg *c, struct fg_model *m,
                            const struct bert_family *fam, const struct bert_task **task,
                            uint64_t *labels, struct fg_err *err)
{
    int rc;
    if (!(*task = bert_task_of(c, fam, err, &rc)) && !rc) {
        fg__model_note(m, "architectures names no %s class fitgate knows: its task head is "
                          "not counted", fam->name);
        *task = fam->absent;
    }
    if (rc || ((*task)->head != BH_LABELS && (*task)->head != BH_CLS_DENSE))
        return rc;
    return fg__read_num_labels(c, labels, err);
}

/*
 * BertModel: embeddings (word, position, token_type, LayerNorm), then per
 * layer BertSelfAttention q/k/v + BertSelfOutput dense (all biased), LayerNorm,
 * BertIntermediate + BertOutput (plain GELU, biased), LayerNorm.  Relative
 * position_embedding_type adds distance_embedding (2 x max_pos - 1) x head_dim
 * to every attention.
 */
/*
 * The task head a class adds on top of the encoder, as one FG_NODE_HEAD (and
 * BERT's NSP head as an "other" node, so the graph has one LM-width head).
 */
static int add_bert_head(struct fg_model *m, enum bert_head head, uint64_t labels, uint64_t emb,
                         const char *cls, struct fg_err *err)
{
    struct fg_node *n;
    int rc;
    uint64_t h = m->hidden;
    switch (head) {
    case BH_DISC:
        if (!(n = fg__model_add(m, FG_NODE_HEAD, -1, "Task head", err)))
            return FG_E_NOMEM;
        fg__node_linear(n, "dense", h, h, 1, true);
        fg__node_linear(n, "head", h, 1, 1, true);
        n->hidden = (uint32_t)h;
        n->width = 1;
        fg__fmt(n->desc, sizeof n->desc, "discriminator %llu x 1", (unsigned long long)h);
        break;
    case BH_GEN:
        if (!(n = fg__model_add(m, FG_NODE_HEAD, -1, "MLM head", err)))
            return FG_E_NOMEM;
        n->params = h * emb + emb + 2 * emb + m->vocab;
        n->hidden = (uint32_t)h;
        n->width = (uint32_t)m->vocab;
        fg__fmt(n->desc, sizeof n->desc, "generator %llu -> %llu + LN, lm_head tied, bias %llu",
                 (unsigned long long)h, (unsigned long long)emb, (unsigned long long)m->vocab);
        break;
    case BH_PRETRAIN:
    case BH_MLM:
        if (!(n = fg__model_add(m, FG_NODE_HEAD, -1, "MLM head", err)))
            return FG_E_NOMEM;
        n->params = h * h + h + 2 * h + m->vocab;
        n->hidden = (uint32_t)h;
        n->width = (uint32_t)m->vocab;
        fg__fmt(n->desc, sizeof n->desc, "transform %llu + LN, decoder tied, bias %llu",
                 (unsigned long long)h, (unsigned long long)m->vocab);
        if (head == BH_MLM)
            break;
        if ((rc = fg__add_table(m, FG_NODE_OTHER, "NSP head", h + 1, 2, &n, err)))
            return rc;
        n->hidden = (uint32_t)h;
        fg__fmt(n->desc, sizeof n->desc, "seq_relationship %llu x 2 + bias",
                 (unsigned long long)h);
        fg__model_rule(m, "BERT pre-training heads stored (cls.predictions + cls.seq_relationship"
                       "; in MLM head, NSP head)", 0);
        break;
    case BH_LABELS:
    case BH_CLS_DENSE:
    case BH_ONE:
    case BH_ONE_DENSE:
    case BH_QA: {
        uint64_t out = head == BH_LABELS || head == BH_CLS_DENSE ? labels : head == BH_QA ? 2 : 1;
        if (!(n = fg__model_add(m, FG_NODE_HEAD, -1, "Task head", err)))
            return FG_E_NOMEM;
        if (head == BH_CLS_DENSE || head == BH_ONE_DENSE)
            fg__node_linear(n, "dense", h, h, 1, true);
        fg__node_linear(n, "head", h, out, 1, true);
        n->hidden = (uint32_t)h;
        n->width = (uint32_t)out;
        fg__fmt(n->desc, sizeof n->desc, "%.40s %llu x %llu", cls, (unsigned long long)h,
                 (unsigned long long)out);
        break;
    }
    case BH_NONE:
        break;
    }
    return 0;
}

/* BERT's embeddings: words (embedding_size wide where the family has one), positions
 * (with the position_ids buffer older files hold), token types, their norm, and the
 * projection to the hidden size (ELECTRA's generator-sized embeddings). */
static int bert_embeddings(const struct fg_cfg *c, struct fg_model *m,
                           const struct bert_family *fam, uint64_t types, bool position_ids,
                           uint64_t *emb_out, struct fg_err *err)
{
    int rc;
    uint64_t emb = m->hidden;
    if (fam->embedding_size_def &&
        (rc = fg_cfg_u64(c, "embedding_size", fam->embedding_size_def, 1, FG_MAX_HIDDEN, &emb,
                         err)))
        return rc;
    *emb_out = emb;
    if ((rc = fg__add_embedding(m, m->vocab, emb, err)))
        return rc;
    struct fg_node *n;
    if ((rc = fg__add_table(m, FG_NODE_POS_EMBED, "Position embedding", m->max_pos,
                                      emb, &n, err)))
        return rc;
    if (position_ids) {
        n->params += m->max_pos;
        n->buffers += m->max_pos;
        fg__model_rule(m, "embeddings.position_ids buffer stored (written by transformers "
                       "< 4.31; in Position embedding)", 0);
    }
    if (types && (rc = fg__add_table(m, FG_NODE_POS_EMBED, "Token type embedding", types, emb,
                                     NULL, err)))
        return rc;
    if ((rc = fg__add_norm(m, -1, "Embedding norm", emb, FG_NORM_LN, err)))
        return rc;
    if (emb != m->hidden) {
        if (!(n = fg__model_add(m, FG_NODE_OTHER, -1, "Embedding projection", err)))
            return FG_E_NOMEM;
        fg__node_linear(n, "proj", emb, m->hidden, 1, true);
        n->hidden = (uint32_t)emb;
        n->width = (uint32_t)m->hidden;
        fg__fmt(n->desc, sizeof n->desc, "%llu -> %llu", (unsigned long long)emb,
                 (unsigned long long)m->hidden);
    }
    return 0;
}

/* BERT's post-norm blocks: attention (with relative position tables where the config asks,
 * MPNet's shared relative_attention_bias on the first), norm, MLP, norm. */
static int bert_blocks(const struct fg_cfg *c, struct fg_model *m,
                       const struct bert_family *fam, bool relative, struct fg_err *err)
{
    int rc = 0;
    struct fg_attn_shape a = {.hidden = m->hidden, .heads = m->heads, .kv_heads = m->heads,
                              .head_dim = m->head_dim, .qkv_bias = true, .o_bias = true,
                              .bidirectional = true};
    struct fg_mlp_shape f = {.hidden = m->hidden, .inter = m->inter, .bias = true};
    uint64_t buckets = 0;
    if (fam->rel_buckets_def &&
        (rc = fg_cfg_u64(c, "relative_attention_num_buckets", fam->rel_buckets_def, 1, 1u << 16,
                         &buckets, err)))
        return rc;
    for (uint64_t l = 0; l < m->layers; l++) {
        int32_t li = (int32_t)l;
        struct fg_node *n;
        if ((rc = fg__add_attention(m, li, &a, &n, err)))
            return rc;
        if (relative)
            n->params += (2 * m->max_pos - 1) * m->head_dim;
        if (l == 0)
            n->params += buckets * m->heads; /* the shared relative_attention_bias */
        if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_LN, err)) ||
            (rc = fg__add_mlp(m, li, &f, NULL, err)) ||
            (rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_LN, err)))
            return rc;
    }
    return 0;
}

static int read_bert(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                     struct fg_err *err)
{
    const struct bert_family *fam = spec;
    int rc;
    uint64_t types, labels = 2;
    bool cross = false;
    const char *pos_type = NULL;
    if ((rc = fg__read_core(c, m, &fam->d, err)) ||
        (rc = fg_cfg_u64(c, "type_vocab_size", fam->types_def, 0, FG_MAX_VOCAB, &types, err)) ||
        (rc = fg_cfg_str(c, "position_embedding_type", "absolute", &pos_type, err)) ||
        (rc = fg_cfg_bool(c, "add_cross_attention", false, &cross, err)))
        return rc;
    if (cross)
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: key 'add_cross_attention' is true: BERT as "
                          "a decoder with cross-attention is not supported", c->origin);
    bool relative = strcmp(pos_type, "absolute") != 0;
    if (relative && strcmp(pos_type, "relative_key") != 0 &&
        strcmp(pos_type, "relative_key_query") != 0)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'position_embedding_type' = '%s'; expected "
                          "absolute, relative_key or relative_key_query", c->origin, pos_type);
    const struct bert_task *task = bert_task_of(c, fam, err, &rc);
    if (rc)
        return rc;
    if (!task) {
        const char *a[1];
        size_t n = 0;
        fg_cfg_str_array(c, "architectures", a, 1, &n, NULL);
        fg__model_note(m, "architectures names %.60s: its task head is not counted (the base "
                       "model with pooler)", n ? a[0] : "?");
        static const struct bert_task plain = {"Model", true, BH_NONE};
        task = &plain;
    }
    if ((task->head == BH_LABELS || task->head == BH_CLS_DENSE) &&
        (rc = fg__read_num_labels(c, &labels, err)))
        return rc;
    bool google_model = fam->google_layout && strcmp(task->cls, "BertModel") == 0;

    /*
     * Two facts about what BERT files hold, and the rule that joins them:
     *  - until transformers 4.31 BertEmbeddings.position_ids was a persistent
     *    buffer (1 x max_position_embeddings int64) written with the weights:
     *    BAAI/bge-large-zh-v1.5 (config 4.30.0, BertModel) has a
     *    model.safetensors of 1,302,138,752 B, exactly its BertModel + pooler
     *    in fp32 plus that buffer, and no cls.* heads;
     *  - the Google conversions (the google-bert models) list BertForMaskedLM, store
     *    the pre-training heads and no position_ids whatever their config's
     *    version says (bert-base-uncased: 110,106,428, config 4.6.0.dev0).
     * So a config written by transformers 3.1 - 4.30 is taken to have been
     * written with its weights, and its class is taken literally (BertModel:
     * headless, position_ids stored).  A BertModel config written by a later
     * transformers cannot prove that: it is read as the Google layout, which
     * is what a re-saved copy of a Google config sits next to (the
     * bert-base-uncased fixture, re-saved by 5.2.0), and a note gives the
     * difference for a headless save.
     */
    unsigned ver = fg__cfg_tf_version(c);
    bool written_with_weights = ver >= 3001 && ver < 4031;
    enum bert_head head = task->head;
    if (head == BH_PRETRAIN && written_with_weights && google_model)
        head = BH_NONE;
    bool position_ids = written_with_weights && head != BH_PRETRAIN;

    uint64_t emb = m->hidden;
    if ((rc = bert_embeddings(c, m, fam, types, position_ids, &emb, err)) ||
        (rc = bert_blocks(c, m, fam, relative, err)))
        return rc;
    bool pooler = task->pooler;
    if (!pooler && fam->unversioned_pooler && !ver)
        fg__model_unsure_count(m, "transformers_version", "unsure: %.30s%.40s builds no pooler; "
                               "the original conversions of this family, whose configs carry "
                               "no transformers_version, stored the base model's pooler "
                               "(%llu parameters) beside it and re-saved files do not: the "
                               "safetensors headers settle what the checkpoint holds",
                               fam->prefixes, task->cls,
                               (unsigned long long)(m->hidden * m->hidden + m->hidden));
    if (pooler && (rc = fg__add_pooler(m, m->hidden, err)))
        return rc;
    m->encoder_only = true;
    m->tied = true;
    if ((rc = add_bert_head(m, head, labels, emb, task->cls, err)))
        return rc;
    if (head == BH_PRETRAIN && google_model)
        fg__model_note(m, "BertModel config not from transformers 3.1-4.30: counted the "
                       "Google pre-training heads; a headless save holds %llu fewer scalars",
                       (unsigned long long)(m->hidden * m->hidden + 5 * m->hidden + m->vocab +
                                            2));
    return 0;
}

/* ---- DistilBERT ----------------------------------------------------------- */

/*
 * DistilBertModel (models/distilbert/modeling_distilbert.py): Embeddings
 * word_embeddings, position_embeddings (max_position_embeddings x dim, a
 * frozen sinusoid table when sinusoidal_pos_embds, stored either way),
 * LayerNorm; per TransformerBlock q_lin / k_lin / v_lin / out_lin (biased),
 * sa_layer_norm, ffn lin1 / lin2 (biased), output_layer_norm.  No pooler, no
 * token types.  Heads: ForMaskedLM vocab_transform dim x dim + vocab_layer_norm
 * + vocab_projector bias (weight tied); ForSequenceClassification and
 * ForMultipleChoice pre_classifier dim x dim + classifier.
 * distilbert-base-uncased: 66,985,530 (safetensors metadata table).
 */
static const struct bert_task distilbert_tasks[] = {
    {"DistilBertForMaskedLM", false, BH_MLM},
    {"DistilBertModel", false, BH_NONE},
    {"DistilBertForSequenceClassification", false, BH_CLS_DENSE},
    {"DistilBertForMultipleChoice", false, BH_ONE_DENSE},
    {"DistilBertForTokenClassification", false, BH_LABELS},
    {"DistilBertForQuestionAnswering", false, BH_QA},
    {NULL, false, BH_NONE},
};

static const struct bert_family distilbert = {
    .tasks = distilbert_tasks, .prefixes = "", .absent = &distilbert_tasks[1],
    .name = "DistilBERT"};

static int read_distilbert(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                           struct fg_err *err)
{
    const struct bert_family *fam = spec;
    int rc;
    uint64_t labels = 2;
    /* DistilBertConfig defaults */
    if ((rc = fg_cfg_u64(c, "vocab_size", 30522, 1, FG_MAX_VOCAB, &m->vocab, err)) ||
        (rc = fg_cfg_u64(c, "dim", 768, 1, FG_MAX_HIDDEN, &m->hidden, err)) ||
        (rc = fg_cfg_u64(c, "n_layers", 6, 1, FG_MAX_LAYERS, &m->layers, err)) ||
        (rc = fg_cfg_u64(c, "n_heads", 12, 1, FG_MAX_HEADS, &m->heads, err)) ||
        (rc = fg_cfg_u64(c, "hidden_dim", 3072, 1, FG_MAX_INTER, &m->inter, err)) ||
        (rc = fg_cfg_u64(c, "max_position_embeddings", 512, 1, FG_MAX_POS, &m->max_pos, err)) ||
        (rc = fg__check_heads(c, "dim", m->hidden, "n_heads", m->heads, err)))
        return rc;
    m->kv_heads = m->heads;
    m->head_dim = m->hidden / m->heads;
    const struct bert_task *task;
    if ((rc = bert_task_labels(c, m, fam, &task, &labels, err)))
        return rc;
    unsigned ver = fg__cfg_tf_version(c);
    bool position_ids = ver >= 3001 && ver < 4031; /* as BERT's, see read_bert */
    /* BERT's embeddings without token types (the family has no embedding_size) and its
     * blocks without relative positions (nor MPNet's buckets) */
    uint64_t emb;
    if ((rc = bert_embeddings(c, m, fam, 0, position_ids, &emb, err)) ||
        (rc = bert_blocks(c, m, fam, false, err)))
        return rc;
    m->encoder_only = true;
    m->tied = true;
    return add_bert_head(m, task->head, labels, m->hidden, task->cls, err);
}

/* ---- ModernBERT ----------------------------------------------------------- */

/*
 * ModernBertModel (models/modernbert/modeling_modernbert.py):
 *   embeddings  tok_embeddings, norm (LayerNorm, bias by norm_bias)
 *   layers      attn_norm (Identity in layer 0), attn Wqkv hidden -> 3 hidden and
 *               Wo (bias by attention_bias), mlp_norm, mlp Wi hidden -> 2 x
 *               intermediate (GLU) and Wo (bias by mlp_bias)
 *   final_norm
 * Heads: ForMaskedLM head (dense hidden x hidden, bias by classifier_bias, and
 * a norm) plus decoder (weight tied, bias by decoder_bias); ForSequence /
 * ForTokenClassification the same head plus classifier hidden x num_labels.
 * ModernBERT-base (ModernBertForMaskedLM): 149,655,232.  Layers alternate
 * global and local (local_attention tokens) attention every
 * global_attn_every_n_layers.
 */
int fg__modernbert_keys(const struct fg_cfg *c, struct fg_model *m, struct fg_modernbert *k,
                        struct fg_err *err)
{
    /* ModernBertConfig defaults (ModernBertDecoderConfig's are the same) */
    static const struct fg_core_defaults d = {.vocab = 50368, .hidden = 768, .inter = 1152,
                                              .layers = 22, .heads = 12, .max_pos = 8192,
                                              .tie = true};
    bool norm_bias;
    int rc;
    if ((rc = fg__read_core(c, m, &d, err)) ||
        (rc = fg_cfg_bool(c, "norm_bias", false, &norm_bias, err)) ||
        (rc = fg_cfg_bool(c, "attention_bias", false, &k->attn_bias, err)) ||
        (rc = fg_cfg_bool(c, "mlp_bias", false, &k->mlp_bias, err)) ||
        (rc = fg_cfg_bool(c, "classifier_bias", false, &k->cls_bias, err)) ||
        (rc = fg_cfg_bool(c, "decoder_bias", true, &k->dec_bias, err)) ||
        (rc = fg_cfg_u64(c, "global_attn_every_n_layers", 3, 1, FG_MAX_LAYERS, &k->every,
                         err)) ||
        (rc = fg_cfg_u64(c, "local_attention", 128, 0, FG_MAX_POS, &k->local, err)))
        return rc;
    k->norm = norm_bias ? FG_NORM_LN : FG_NORM_LN_NOBIAS;
    return 0;
}

int fg__modernbert_stack(struct fg_model *m, const struct fg_modernbert *k,
                         const struct fg_attn_shape *a, const uint64_t *window,
                         struct fg_err *err)
{
    const uint64_t h = m->hidden;
    const enum fg_norm_kind nk = k->norm;
    int rc;
    if ((rc = fg__add_embedding(m, m->vocab, h, err)) ||
        (rc = fg__add_norm(m, -1, "Embedding norm", h, nk, err)))
        return rc;
    const struct fg_mlp_shape f = {.hidden = h, .inter = m->inter, .gated = true,
                                   .bias = k->mlp_bias, .fused_gate_up = true};
    for (uint64_t l = 0; l < m->layers; l++) {
        int32_t li = (int32_t)l;
        struct fg_attn_shape al = *a;
        al.window = window[l];
        if ((l > 0 && (rc = fg__add_norm(m, li, "Norm", h, nk, err))) ||
            (rc = fg__add_attention(m, li, &al, NULL, err)) ||
            (rc = fg__add_norm(m, li, "Norm", h, nk, err)) ||
            (rc = fg__add_mlp(m, li, &f, NULL, err)))
            return rc;
    }
    return fg__add_norm(m, -1, "Final norm", h, nk, err);
}

static int read_modernbert(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                           struct fg_err *err)
{
    (void)spec;
    struct fg_modernbert k;
    bool mlm, seq, tok;
    uint64_t labels = 2;
    int rc;
    if ((rc = fg__modernbert_keys(c, m, &k, err)) ||
        (rc = fg__cfg_has_arch(c, "ModernBertForMaskedLM", &mlm, err)) ||
        (rc = fg__cfg_has_arch(c, "ModernBertForSequenceClassification", &seq, err)) ||
        (rc = fg__cfg_has_arch(c, "ModernBertForTokenClassification", &tok, err)))
        return rc;
    if ((seq || tok) && (rc = fg__read_num_labels(c, &labels, err)))
        return rc;
    const enum fg_norm_kind nk = k.norm;
    const uint64_t h = m->hidden;
    const struct fg_attn_shape a = {.hidden = h, .heads = m->heads, .kv_heads = m->heads,
                                    .head_dim = m->head_dim, .qkv_bias = k.attn_bias,
                                    .o_bias = k.attn_bias, .fused_qkv = true,
                                    .bidirectional = true};
    /* ModernBertAttention: local_attention / 2 tokens each side, all but every
     * global_attn_every_n_layers-th layer from the first */
    uint64_t window[FG_MAX_LAYERS];
    for (uint64_t l = 0; l < m->layers; l++)
        window[l] = l % k.every ? k.local : 0;
    if ((rc = fg__modernbert_stack(m, &k, &a, window, err)))
        return rc;
    m->encoder_only = true;
    m->tied = true;
    if (!mlm && !seq && !tok)
        return 0;
    struct fg_node *n = fg__model_add(m, FG_NODE_HEAD, -1, mlm ? "MLM head" : "Task head", err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "dense", h, h, 1, k.cls_bias);
    n->params += nk == FG_NORM_LN ? 2 * h : h;
    if (mlm)
        n->params += k.dec_bias ? m->vocab : 0;
    else
        fg__node_linear(n, "head", h, labels, 1, true);
    n->hidden = (uint32_t)h;
    n->width = (uint32_t)(mlm ? m->vocab : labels);
    fg__fmt(n->desc, sizeof n->desc, "dense %llu + norm, %s", (unsigned long long)h,
             mlm ? "decoder tied" : "classifier");
    return 0;
}

/* ---- DeBERTa-v2 / v3 --------------------------------------------------------- */

static const struct bert_task deberta_tasks[] = {
    {"DebertaV2ForMaskedLM", false, BH_MLM},
    {"DebertaV2Model", false, BH_NONE},
    {"DebertaV2ForSequenceClassification", true, BH_LABELS},
    {"DebertaV2ForMultipleChoice", true, BH_ONE},
    {"DebertaV2ForTokenClassification", false, BH_LABELS},
    {"DebertaV2ForQuestionAnswering", false, BH_QA},
    {NULL, false, BH_NONE},
};

static const struct bert_family deberta_v2 = {
    .tasks = deberta_tasks, .prefixes = "", .absent = &deberta_tasks[1], .name = "DeBERTa-v2"};

/*
 * DebertaV2Model (models/deberta_v2/modeling_deberta_v2.py):
 *   embeddings  word (embedding_size), position table only when position_biased_input,
 *               token types when type_vocab_size > 0, embed_proj embedding_size -> hidden
 *               (no bias) when they differ, LayerNorm
 *   layers      query_proj / key_proj / value_proj and output dense (biased), LayerNorm,
 *               intermediate / output dense (biased), LayerNorm; without share_att_key,
 *               pos_key_proj (c2p) and pos_query_proj (p2c), biased, per pos_att_type
 *   encoder     rel_embeddings (2 x position_buckets, or 2 x max_relative_positions, rows)
 *               and its LayerNorm when norm_rel_ebd names layer_norm; the ConvLayer of
 *               conv_kernel_size (depthwise groups conv_groups, biased) and its LayerNorm
 * The task classes put ContextPooler (dense hidden x hidden) under the classifier of
 * ForSequenceClassification and ForMultipleChoice.  DeBERTa-v3-large's shapes give
 * 434,012,160 for DebertaV2Model (tests/test_arch_encoder.c).
 */
static int read_deberta_v2(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                           struct fg_err *err)
{
    const struct bert_family *fam = spec;
    /* DebertaV2Config defaults */
    static const struct fg_core_defaults d = {.vocab = 128100, .hidden = 1536, .inter = 6144,
                                              .layers = 24, .heads = 24, .max_pos = 512,
                                              .tie = true};
    int rc;
    uint64_t types, emb, buckets, max_rel, conv_k, conv_g, labels = 2;
    bool pos_input, relative, share;
    const char *norm_rel = NULL;
    const char *att[4];
    size_t natt = 0;
    if ((rc = fg__read_core(c, m, &d, err)) ||
        (rc = fg_cfg_u64(c, "type_vocab_size", 0, 0, FG_MAX_VOCAB, &types, err)) ||
        (rc = fg_cfg_u64(c, "embedding_size", m->hidden, 1, FG_MAX_HIDDEN, &emb, err)) ||
        (rc = fg_cfg_bool(c, "position_biased_input", true, &pos_input, err)) ||
        (rc = fg_cfg_bool(c, "relative_attention", false, &relative, err)) ||
        (rc = fg_cfg_bool(c, "share_att_key", false, &share, err)) ||
        (rc = fg_cfg_u64(c, "position_buckets", 0, 0, FG_MAX_POS, &buckets, err)) ||
        (rc = fg_cfg_str(c, "norm_rel_ebd", "none", &norm_rel, err)) ||
        (rc = fg_cfg_u64(c, "conv_kernel_size", 0, 0, 64, &conv_k, err)) ||
        (rc = fg_cfg_u64(c, "conv_groups", 1, 1, FG_MAX_HIDDEN, &conv_g, err)) ||
        (rc = fg_cfg_str_array(c, "pos_att_type", att, 4, &natt, err)))
        return rc;
    /* max_relative_positions < 1 means max_position_embeddings */
    double mr;
    if ((rc = fg_cfg_f64(c, "max_relative_positions", -1, -1e9, (double)FG_MAX_POS, &mr, err)))
        return rc;
    max_rel = mr < 1 ? m->max_pos : (uint64_t)mr;
    if (m->hidden % conv_g)
        return fg_err_set(err, FG_E_RANGE, "%s: hidden_size %llu is not divisible by "
                          "conv_groups %llu", c->origin, (unsigned long long)m->hidden,
                          (unsigned long long)conv_g);
    const struct bert_task *task;
    if ((rc = bert_task_labels(c, m, fam, &task, &labels, err)))
        return rc;
    bool c2p = false, p2c = false;
    for (size_t i = 0; i < natt && i < 4; i++) {
        c2p = c2p || !strcmp(att[i], "c2p");
        p2c = p2c || !strcmp(att[i], "p2c");
    }
    uint64_t h = m->hidden;
    if ((rc = fg__add_embedding(m, m->vocab, emb, err)))
        return rc;
    if (pos_input && (rc = fg__add_table(m, FG_NODE_POS_EMBED, "Position embedding", m->max_pos,
                                         emb, NULL,
                                    err)))
        return rc;
    if (types && (rc = fg__add_table(m, FG_NODE_POS_EMBED, "Token type embedding", types, emb,
                                     NULL, err)))
        return rc;
    struct fg_node *n;
    if (emb != h) {
        if (!(n = fg__model_add(m, FG_NODE_OTHER, -1, "Embedding projection", err)))
            return FG_E_NOMEM;
        fg__node_linear(n, "proj", emb, h, 1, false);
    }
    if ((rc = fg__add_norm(m, -1, "Embedding norm", h, FG_NORM_LN, err)))
        return rc;
    struct fg_attn_shape a = {.hidden = h, .heads = m->heads, .kv_heads = m->heads,
                              .head_dim = m->head_dim, .qkv_bias = true, .o_bias = true,
                              .bidirectional = true};
    struct fg_mlp_shape f = {.hidden = h, .inter = m->inter, .bias = true};
    uint64_t q = m->heads * m->head_dim;
    for (uint64_t l = 0; l < m->layers; l++) {
        int32_t li = (int32_t)l;
        if ((rc = fg__add_attention(m, li, &a, &n, err)))
            return rc;
        if (relative && !share) {
            if (c2p)
                fg__node_linear(n, "pos_k", h, q, 1, true);
            if (p2c)
                fg__node_linear(n, "pos_q", h, q, 1, true);
        }
        if ((rc = fg__add_norm(m, li, "Norm", h, FG_NORM_LN, err)) ||
            (rc = fg__add_mlp(m, li, &f, NULL, err)) ||
            (rc = fg__add_norm(m, li, "Norm", h, FG_NORM_LN, err)))
            return rc;
    }
    if (relative) {
        uint64_t rows = 2 * (buckets ? buckets : max_rel);
        if ((rc = fg__add_table(m, FG_NODE_POS_EMBED, "Relative embedding", rows, h, &n, err)))
            return rc;
        if (strstr(norm_rel, "layer_norm"))
            n->params += 2 * h;
    }
    if (conv_k) {
        if (!(n = fg__model_add(m, FG_NODE_OTHER, -1, "ConvLayer", err)))
            return FG_E_NOMEM;
        n->params = h * (h / conv_g) * conv_k + h + 2 * h;
        n->hidden = n->width = (uint32_t)h;
    }
    m->encoder_only = true;
    m->tied = true;
    if (task->pooler && (rc = fg__add_pooler(m, h, err)))
        return rc;
    return add_bert_head(m, task->head, labels, h, task->cls, err);
}

const struct fg_arch fg__arch_encoder_table[] = {
#include "arch/encoder/bert_family.def"
    {0},
};
