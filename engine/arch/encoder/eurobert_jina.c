/*
 * eurobert_jina.c - the 2025 rotary encoders transformers reads natively, over the task
 * classes of bert_variants.c (bert_variants.h); registered through fg__arch_eurobert_table:
 *
 *   eurobert            EuroBertModel            models/eurobert/modeling_eurobert.py
 *   jina_embeddings_v3  JinaEmbeddingsV3Model    models/jina_embeddings_v3/
 *                                                modeling_jina_embeddings_v3.py
 *
 * both read at huggingface/transformers@decba1d2ea (5.16.0.dev0).
 */
#include <stdio.h>
#include <string.h>

#include "arch/encoder/bert_variants.h"

/* ---- EuroBERT ------------------------------------------------------------------------------- */

/* EuroBertFor*: ForSequenceClassification is dense h x h + classifier h x num_labels (both
 * biased, the dense's bias unconditional), ForTokenClassification the classifier alone; no
 * class builds a pooler.  The release's auto_map names a ForQuestionAnswering the native
 * module lacks: a config naming it is counted as the base model, unsure. */
static const struct enc1_tasks eurobert_tasks = {
    .classes = E1C_MASKED_LM | E1C_MODEL | E1C_SEQ | E1C_TOKEN, .pooled = 0,
    .seq_head = E1_CLS_DENSE};

/* One EuroBertDecoderLayer: input_layernorm, EuroBertAttention (q / k / v / o of
 * attention_bias, GQA, no causal mask), post_attention_layernorm, EuroBertMLP. */
static int eurobert_layer(struct fg_model *m, int32_t layer, const void *ctx, struct fg_err *err)
{
    const struct enc1_block *b = ctx;
    int rc;
    if ((rc = fg__add_norm(m, layer, "Norm", m->hidden, FG_NORM_RMS, err)) ||
        (rc = fg__add_attention(m, layer, &b->a, NULL, err)) ||
        (rc = fg__add_norm(m, layer, "Norm", m->hidden, FG_NORM_RMS, err)))
        return rc;
    return fg__add_mlp(m, layer, &b->f, NULL, err);
}

/*
 * EuroBertModel (configuration_eurobert.py EuroBertConfig, modeling_eurobert.py):
 *   embed_tokens       vocab x h
 *   layers             EuroBertRMSNorm(h), q_proj h -> heads x head_dim, k_proj / v_proj
 *                      h -> num_key_value_heads x head_dim, o_proj back (bias by
 *                      attention_bias), EuroBertRMSNorm(h), gate / up h -> intermediate and
 *                      down back (bias by mlp_bias); rotary without a stored buffer
 *   norm               EuroBertRMSNorm(h)
 * EuroBertForMaskedLM: lm_head Linear(h, vocab, bias=mlp_bias), tied to embed_tokens only
 * when tie_word_embeddings (default false: the releases store it).  EuroBERT-210m:
 * 128256 x 768 x 2 + 12 x 9,438,720 + 768 = 310,266,624 (tests/test_arch_encoder.c).
 */
static int read_eurobert(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                         struct fg_err *err)
{
    (void)spec;
    static const struct fg_core_defaults d = {.vocab = 128256, .hidden = 768, .inter = 3072,
                                              .layers = 12, .heads = 12, .max_pos = 8192,
                                              .tie = false};
    bool attn_bias, mlp_bias;
    uint64_t labels = 2;
    struct enc1_task task;
    int rc;
    if ((rc = fg__read_core(c, m, &d, err)) ||
        (rc = fg_cfg_bool(c, "attention_bias", false, &attn_bias, err)) ||
        (rc = fg_cfg_bool(c, "mlp_bias", false, &mlp_bias, err)) ||
        (rc = fg__enc1_task(c, m, "EuroBert", &eurobert_tasks, &task, &labels, err)))
        return rc;
    const struct enc1_block b = {
        .a = {.hidden = m->hidden, .heads = m->heads, .kv_heads = m->kv_heads,
              .head_dim = m->head_dim, .qkv_bias = attn_bias, .o_bias = attn_bias,
              .bidirectional = true},
        .f = {.hidden = m->hidden, .inter = m->inter, .gated = true, .bias = mlp_bias}};
    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)) ||
        (rc = fg__add_layers(m, m->layers, eurobert_layer, &b, err)) ||
        (rc = fg__add_norm(m, -1, "Final norm", m->hidden, FG_NORM_RMS, err)))
        return rc;
    m->encoder_only = true;
    if (task.head == E1_MLM)
        return fg__add_head(m, m->vocab, m->hidden, m->tied, false, mlp_bias, err);
    return fg__enc1_head(m, task.head, labels, m->hidden, false, 0, err);
}

/* ---- Jina Embeddings v3 --------------------------------------------------------------------- */

/* JinaEmbeddingsV3For*: JinaEmbeddingsV3ClassificationHead (dense + out_proj) for sequence
 * classification; the task classes build the model with add_pooling_layer=False. */
static const struct enc1_tasks jina_v3_tasks = {
    .classes = E1C_MASKED_LM | E1C_MODEL | E1C_SEQ | E1C_TOKEN | E1C_QA, .pooled = E1C_MODEL,
    .seq_head = E1_CLS_DENSE};

/*
 * JinaEmbeddingsV3Model (configuration_jina_embeddings_v3.py JinaEmbeddingsV3Config,
 * modeling_jina_embeddings_v3.py): XLM-RoBERTa's shapes with rotary positions.
 *   JinaEmbeddingsV3Embeddings  word_embeddings vocab x h, token_type_embeddings
 *                               type_vocab_size x h (built even at 1), LayerNorm(h); no
 *                               position table (position_ids / token_type_ids buffers are
 *                               not persistent)
 *   JinaEmbeddingsV3Layer       q / k / v / o_proj h x h biased, post_attention_layernorm,
 *                               fc1 h -> intermediate and fc2 back, biased,
 *                               post_mlp_layernorm
 *   JinaEmbeddingsV3Pooler      dense h x h + bias, with add_pooling_layer (the Model's
 *                               default)
 * JinaEmbeddingsV3LMHead: dense h x h + LayerNorm, decoder tied to word_embeddings (by
 * tie_word_embeddings, default true), its bias the head's bias of vocab.  The per-task LoRA
 * adapters of jina-embeddings-v3-hf are PEFT folders of their own, outside the class; the
 * lora_* keys a converted config carries build nothing.  jina-embeddings-v3-hf: 250002 x
 * 1024 + 1024 + 2048 + 24 x 12,596,224 + 1,049,600 = 559,364,096 (tests/test_arch_encoder.c).
 */
static int read_jina_embeddings_v3(const struct fg_cfg *c, struct fg_model *m,
                                   const void *spec, struct fg_err *err)
{
    (void)spec;
    static const struct fg_core_defaults d = {.vocab = 250002, .hidden = 1024, .inter = 4096,
                                              .layers = 24, .heads = 16, .max_pos = 8194,
                                              .tie = true};
    uint64_t types, labels = 2;
    struct enc1_task task;
    int rc;
    if ((rc = fg__read_core(c, m, &d, err)) ||
        (rc = fg_cfg_u64(c, "type_vocab_size", 1, 1, FG_MAX_VOCAB, &types, err)) ||
        (rc = fg__enc1_task(c, m, "JinaEmbeddingsV3", &jina_v3_tasks, &task, &labels, err)))
        return rc;
    /* JinaEmbeddingsV3Attention sizes k / v by num_attention_heads, whatever
     * num_key_value_heads says */
    m->kv_heads = m->heads;
    struct enc1_block b = fg__enc1_bert_block(m, true);
    if ((rc = fg__enc1_embeddings(c, m, m->hidden, false, types, false, err)) ||
        (rc = fg__enc1_blocks(m, &b, err)))
        return rc;
    if (task.pooler && (rc = fg__add_pooler(m, m->hidden, err)))
        return rc;
    m->encoder_only = true;
    return fg__enc1_head(m, task.head, labels, m->hidden, !m->tied, 0, err);
}

const struct fg_arch fg__arch_eurobert_table[] = {
#include "arch/encoder/eurobert_jina.def"
    {0},
};
