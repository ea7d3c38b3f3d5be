/*
 * bert_variants.h - internal to bert_variants.c and esm_roformer_convbert.c: the pieces the BERT-like
 * masked-LM families share (task class, task heads, one encoder block), defined in
 * bert_variants.c; the readers are registered through fg__arch_enc1_table and
 * fg__arch_enc1b_table (arch.h).  Pointers are borrowed from the config
 * document, valid while it is.
 */
#ifndef FG_ARCH_ENC1_H
#define FG_ARCH_ENC1_H

#include "arch/arch.h"

/* What a task class adds on top of the encoder. */
enum enc1_head {
    E1_NONE,
    E1_MLM,        /* transform dense h -> t + LayerNorm(t), decoder t -> vocab (tied unless
                      tie_word_embeddings is false), bias vocab */
    E1_PRETRAIN,   /* E1_MLM and the next-sentence / sentence-order classifier h x 2 */
    E1_LABELS,     /* classifier h x num_labels */
    E1_CLS_DENSE,  /* RobertaClassificationHead: dense h x h, out_proj h x num_labels */
    E1_ONE,        /* multiple choice: classifier h x 1 */
    E1_QA,         /* qa_outputs h x num_labels */
};

/* The task classes a BERT-like family may have, one bit each, by their name after the
 * family prefix. */
enum enc1_class {
    E1C_MASKED_LM = 1u << 0,     /* ForMaskedLM: E1_MLM */
    E1C_CAUSAL_LM = 1u << 1,     /* ForCausalLM: E1_MLM */
    E1C_PRETRAINING = 1u << 2,   /* ForPreTraining: E1_PRETRAIN (or E1_MLM) */
    E1C_MODEL = 1u << 3,         /* Model: the base model, E1_NONE */
    E1C_SEQ = 1u << 4,           /* ForSequenceClassification: the family's seq_head */
    E1C_CHOICE = 1u << 5,        /* ForMultipleChoice: E1_ONE */
    E1C_TOKEN = 1u << 6,         /* ForTokenClassification: E1_LABELS */
    E1C_QA = 1u << 7,            /* ForQuestionAnswering: E1_QA */
};

#define E1C_BERT 0xffu /* every class above: BertFor* */

/* A family's task classes: those it has (E1C_* bits), those of them that build the base
 * model with its pooler, its sequence-classification head (E1_LABELS, or E1_CLS_DENSE for
 * RobertaClassificationHead and its copies), and whether its pre-training class has the MLM
 * head alone (E1_MLM, no next-sentence head: RoCBert) rather than E1_PRETRAIN. */
struct enc1_tasks {
    unsigned classes;
    unsigned pooled;
    enum enc1_head seq_head;
    bool pretrain_mlm_only;
};

/* One task class resolved. */
struct enc1_task {
    const char *suffix;      /* the class name after the family prefix: "ForMaskedLM" */
    bool pooler;             /* the class builds the base model with its pooler */
    enum enc1_head head;
};

/* The config's task: the first class of its architectures list that is prefix + a suffix
 * of the family's classes ('|'-separated prefixes); the "Model" class (the base model,
 * AutoModel's) when the list is absent or empty.  A list naming no known class makes m
 * unsure (key 'architectures') and gives that base model.  num_labels read into *labels
 * for the heads that use it. */
int fg__enc1_task(const struct fg_cfg *c, struct fg_model *m, const char *prefixes,
                  const struct enc1_tasks *tasks, struct enc1_task *out, uint64_t *labels,
                  struct fg_err *err);

/* The head as one FG_NODE_HEAD (the NSP / SOP classifier of E1_PRETRAIN as an FG_NODE_OTHER
 * beside it).  t: the MLM transform width; decoder_stored: the decoder weight t x vocab is
 * a tensor of its own (untied); extra: scalars the MLM head stores beyond that (a second
 * copy of the bias).  FG_E_NOMEM. */
int fg__enc1_head(struct fg_model *m, enum enc1_head head, uint64_t labels, uint64_t t,
                  bool decoder_stored, uint64_t extra, struct fg_err *err);

/* One encoder layer as transformers' BERT-like classes build it: attention (q/k/v/o,
 * attn_extra more scalars: relative tables, global projections), its LayerNorm, the
 * cross-attention and its LayerNorm when cross, the MLP and its LayerNorm.  Pre-norm
 * classes put the norms before the sublayers; the count is the same.  *attn (may be NULL)
 * gets the attention node.  FG_E_NOMEM. */
struct enc1_block {
    struct fg_attn_shape a;
    struct fg_mlp_shape f;
    uint64_t attn_extra;
    bool cross;
};
int fg__enc1_block(struct fg_model *m, int32_t layer, const struct enc1_block *b,
                   struct fg_node **attn, struct fg_err *err);

/* BERT's layer over m's sizes: q / k / v / o and the MLP biased, no cross-attention, no
 * extra scalars; a reader sets what its class changes. */
struct enc1_block fg__enc1_bert_block(const struct fg_model *m, bool bidirectional);

/* Blocks [0, m->layers) of *b (fg__add_layers).  FG_E_NOMEM. */
int fg__enc1_blocks(struct fg_model *m, const struct enc1_block *b, struct fg_err *err);

/* position_embedding_type as BertSelfAttention reads it: *relative set for relative_key /
 * relative_key_query; FG_E_RANGE naming the value otherwise (absolute is not relative). */
int fg__enc1_pos_type(const struct fg_cfg *c, const char *def, bool *relative, bool *rotary,
                      bool rotary_ok, struct fg_err *err);

/* BertEmbeddings.position_ids was a persistent buffer (max_position_embeddings int64)
 * until transformers 4.31 (bert_family.c's read_bert: BAAI/bge-large-zh-v1.5, config
 * 4.30.0); configs written by 3.1 - 4.30 are taken to sit beside weights that hold it:
 * the buffer is added to n, the position table, with the rule that says so. */
void fg__enc1_position_ids(const struct fg_cfg *c, struct fg_model *m, struct fg_node *n);

/* BertEmbeddings' tables at width emb: word_embeddings, position_embeddings (m->max_pos
 * rows, with the position_ids buffer of fg__enc1_position_ids) when positions, and
 * token_type_embeddings of types rows (none when 0).  FG_E_NOMEM. */
int fg__enc1_tables(const struct fg_cfg *c, struct fg_model *m, uint64_t emb, bool positions,
                    uint64_t types, struct fg_err *err);

/* The tables, their LayerNorm(emb), and when proj the biased projection emb -> hidden
 * (AlbertTransformer's and RemBertEncoder's embedding_hidden_mapping_in, ConvBERT's and
 * RoFormer's embeddings_project).  FG_E_NOMEM. */
int fg__enc1_embeddings(const struct fg_cfg *c, struct fg_model *m, uint64_t emb,
                        bool positions, uint64_t types, bool proj, struct fg_err *err);

/* An "Embedding projection" node: Linear(in, out), biased or not.  FG_E_NOMEM. */
int fg__enc1_proj(struct fg_model *m, uint64_t in, uint64_t out, bool bias, struct fg_err *err);

#endif
