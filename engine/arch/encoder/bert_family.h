/*
 * bert_family.h - internal to the ModernBERT readers: bert_family.c's encoder and
 * afmoe_longcat_doge.c's ModernBertDecoder share ModernBertConfig's keys and the stack
 * (defined in bert_family.c).  Functions return 0 or an FG_E_* code with err set.
 */
#ifndef FG_ARCH_BERT_FAMILY_H
#define FG_ARCH_BERT_FAMILY_H

#include "arch/arch.h"

/* The keys both ModernBERT classes read. */
struct fg_modernbert {
    enum fg_norm_kind norm;   /* LayerNorm, biased by norm_bias */
    bool attn_bias, mlp_bias, cls_bias, dec_bias;
    uint64_t every;           /* global_attn_every_n_layers */
    uint64_t local;           /* local_attention */
};

/* fg__read_core with ModernBertConfig's defaults, then the keys of *k; the first key's
 * error. */
int fg__modernbert_keys(const struct fg_cfg *c, struct fg_model *m, struct fg_modernbert *k,
                        struct fg_err *err);

/* ModernBertEmbeddings tok_embeddings and norm; the layers: attn_norm (Identity in layer 0),
 * the attention a over window[l] tokens (0: global), mlp_norm, ModernBertMLP Wi hidden ->
 * 2 x intermediate (GLU) and Wo (bias by mlp_bias); final_norm.  FG_E_NOMEM. */
int fg__modernbert_stack(struct fg_model *m, const struct fg_modernbert *k,
                         const struct fg_attn_shape *a, const uint64_t *window,
                         struct fg_err *err);

#endif
