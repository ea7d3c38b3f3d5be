/*
 * xlnet_xlm_funnel.h - internal to xlnet_xlm_funnel.c and tapas_luke_fnet.c: the task-class table a family
 * reader resolves `architectures` with, and the one-linear task head they share.
 * Pointers are borrowed (static tables, the model); functions return 0 or an FG_E_* code
 * with err set, as arch.h's blocks do.
 */
#ifndef FG_ARCH_ENC2_H
#define FG_ARCH_ENC2_H

#include "arch/arch.h"

/* Heads every family has; a family numbers its own from FG_ENC2_H_FAMILY. */
enum {
    FG_ENC2_H_NONE,     /* the base model */
    FG_ENC2_H_LM,       /* the family's LM / MLM head */
    FG_ENC2_H_LABELS,   /* one Linear(hidden, num_labels) with bias */
    FG_ENC2_H_ONE,      /* one Linear(hidden, 1) with bias */
    FG_ENC2_H_FAMILY = 16,
};

#define FG_ENC2_LABELS 0x1u  /* the head reads num_labels */
#define FG_ENC2_POOLER 0x2u  /* the class builds the base model's pooler */
#define FG_ENC2_BASE 0x4u    /* the class builds a smaller base (FunnelBaseModel) */
#define FG_ENC2_NSP 0x8u     /* a next-sentence head beside the MLM head */

struct fg_enc2_task {
    const char *suffix;  /* class name after the family prefix: "ForMaskedLM" */
    unsigned head;       /* FG_ENC2_H_* or the family's own */
    unsigned flags;      /* FG_ENC2_* */
};

struct fg_enc2_tasks {
    const char *prefix;                /* "XLNet" */
    const struct fg_enc2_task *rows;   /* ends with a NULL suffix */
    size_t absent;                     /* row read when the config names no known class */
};

/* *out: the row of the first class of `architectures` the table knows, else rows[absent]
 * (m made unsure when the list names another class: its head is not counted); *labels:
 * num_labels when the row's head reads it, else 2.  The list's and num_labels' read
 * errors. */
int fg__enc2_task(const struct fg_cfg *c, struct fg_model *m, const struct fg_enc2_tasks *f,
                  const struct fg_enc2_task **out, uint64_t *labels, struct fg_err *err);

/* A task head node of one Linear(in, out); *node (may be NULL) gets it; FG_E_NOMEM. */
int fg__enc2_head(struct fg_model *m, const char *name, uint64_t in, uint64_t out, bool bias,
                  struct fg_node **node, struct fg_err *err);

/* BertLMPredictionHead and its copies (Tapas, FNet, SqueezeBERT, LukeLMHead,
 * MobileBertLMPredictionHead): transform dense H x H + LayerNorm, the decoder tied to word
 * embeddings tied_w wide (stored when tie_word_embeddings is false), bias vocab, extra more
 * scalars; with nsp, seq_relationship H -> 2 beside it.  FG_E_NOMEM or the key's error. */
int fg__enc2_mlm(const struct fg_cfg *c, struct fg_model *m, uint64_t tied_w, uint64_t extra,
                 bool nsp, struct fg_err *err);

/*
 * A post-norm block (attention, norm, MLP, norm: BERT's order, and XLM's, XLNet's, Funnel's,
 * whose norms sit inside their attention and FFN modules): the attention of `a` plus a
 * position projection rel_in -> rel_out without bias (XLNet's r, Funnel's r_kernel) when
 * rel_out, extra_q more biased hidden -> q projections (LUKE's entity-aware queries) and
 * attn_extra loose scalars (relative biases, segment embeddings); LayerNorms; the MLP `f`.
 */
struct fg_enc2_block {
    struct fg_attn_shape a;
    struct fg_mlp_shape f;
    uint64_t rel_in, rel_out;
    uint32_t extra_q;
    uint64_t attn_extra;
    const char *desc;  /* the attention's description, or NULL for fg__add_attention's */
    bool eager_only;   /* the class has no SDPA path: its scores are kept under any
                          attn_implementation (score_bytes = eager_bytes) */
};

/* Block `layer` of the struct fg_enc2_block ctx points to (an fg_layer_fn), and blocks
 * [0, n) of *b (fg__add_layers); FG_E_NOMEM. */
int fg__enc2_block(struct fg_model *m, int32_t layer, const void *ctx, struct fg_err *err);
int fg__enc2_blocks(struct fg_model *m, uint64_t n, const struct fg_enc2_block *b,
                    struct fg_err *err);

/* BERT's embeddings over m's sizes: word, position (m->max_pos rows), type_rows of token
 * types, LayerNorm; *types_node (may be NULL) gets the token type table.  FG_E_NOMEM. */
int fg__enc2_bert_embeddings(struct fg_model *m, uint64_t type_rows,
                             struct fg_node **types_node, struct fg_err *err);

/* BERT's layer over m's sizes (BertSelfAttention q / k / v, BertSelfOutput,
 * BertIntermediate, BertOutput: biased, post-norm), with extra_q more query projections. */
struct fg_enc2_block fg__enc2_bert_block(const struct fg_model *m, uint32_t extra_q);

#endif
