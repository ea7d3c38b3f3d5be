/*
 * test_arch_encoder.c - the encoder and encoder-decoder readers
 * (engine/arch/encoder/bert_family.c) added for the RoBERTa family, DistilBERT and
 * BART / mBART: counts derived here from the modeling files, term by term,
 * on the shape fields of released checkpoints whose stored totals the
 * safetensors metadata table (the huggingface/safetensors repository's metadata table, commit
 * 01b9ce07) lists.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support.h"
#include <stdio.h>
#include <string.h>

#include "source/config.h"
#include "model/model.h"

/* BERT-style layer of width h and FFN i: q/k/v/o biased, two LayerNorms, fc1 / fc2 biased. */
static uint64_t bert_layer(uint64_t h, uint64_t i)
{
    return 4 * (h * h + h) + 2 * h + (h * i + i) + (i * h + h) + 2 * h;
}

/* Embeddings: word, position, token type, LayerNorm. */
static uint64_t bert_emb(uint64_t vocab, uint64_t pos, uint64_t types, uint64_t h)
{
    return (vocab + pos + types) * h + 2 * h;
}

#define ROBERTA(type, cls, vocab, h, layers, heads, inter, extra)                              \
    "{\"model_type\": \"" type "\", \"architectures\": [\"" cls "\"], \"vocab_size\": " vocab \
    ", \"hidden_size\": " h ", \"num_hidden_layers\": " layers ", \"num_attention_heads\": "   \
    heads ", \"intermediate_size\": " inter ", \"max_position_embeddings\": 514, "            \
    "\"type_vocab_size\": 1" extra "}"

/* The class's count, unsure of the stored one: the published totals (the safetensors
 * metadata table) are each the class plus RobertaModel's pooler, which the original
 * conversions stored and re-saved files (roberta-base) do not. */
static void assert_class_count_doubting_the_pooler(struct fg_model *m, uint64_t published,
                                                   uint64_t h)
{
    assert_int_equal(m->params_total + h * h + h, published);
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_true(m->unsure_count_only);
    assert_string_equal(m->unsure_key, "transformers_version");
    assert_false(fg_model_unsure_of_memory(m));
}

static void read_bert_should_count_the_class_of_unversioned_roberta_conversions(void **state)
{
    (void)state;
    /* the LM head: dense h x h + bias, layer_norm, bias vocab (decoder tied) */
    struct fg_model *m = built(ROBERTA("xlm-roberta", "XLMRobertaForMaskedLM", "250002", "768",
                                       "12", "12", "3072", ""));
    uint64_t want = bert_emb(250002, 514, 1, 768) + 12 * bert_layer(768, 3072) +
                    (768 * 768 + 768 + 2 * 768 + 250002);
    assert_int_equal(m->params_total, want);
    assert_class_count_doubting_the_pooler(m, 278885778ull, 768); /* xlm-roberta-base */
    fg_model_free(m);

    m = built(ROBERTA("xlm-roberta", "XLMRobertaForMaskedLM", "250002", "1024", "24", "16",
                      "4096", ""));
    assert_class_count_doubting_the_pooler(m, 561192082ull, 1024); /* xlm-roberta-large */
    fg_model_free(m);

    m = built(ROBERTA("camembert", "CamembertForMaskedLM", "32005", "768", "12", "12", "3072",
                      ""));
    assert_class_count_doubting_the_pooler(m, 111246085ull, 768); /* camembert-base */
    fg_model_free(m);

    /* RobertaClassificationHead: dense 1024 x 1024 + out_proj 1024 x 3, no pooler */
    m = built(ROBERTA("roberta", "RobertaForSequenceClassification", "50265", "1024", "24", "16",
                      "4096", ", \"id2label\": {\"0\": \"C\", \"1\": \"N\", \"2\": \"E\"}"));
    want = bert_emb(50265, 514, 1, 1024) + 24 * bert_layer(1024, 4096) +
           (1024 * 1024 + 1024) + (1024 * 3 + 3);
    assert_int_equal(m->params_total, want);
    assert_class_count_doubting_the_pooler(m, 356412419ull, 1024); /* roberta-large-mnli */
    fg_model_free(m);
}

static void read_bert_should_take_a_versioned_roberta_class_literally(void **state)
{
    (void)state;
    /* written by 4.52: RobertaForMaskedLM has no pooler, position_ids are not persistent */
    struct fg_model *m = built(ROBERTA("roberta", "RobertaForMaskedLM", "50265", "1024", "24",
                                       "16", "4096", ", \"transformers_version\": \"4.52.4\""));
    uint64_t want = bert_emb(50265, 514, 1, 1024) + 24 * bert_layer(1024, 4096) +
                    (1024 * 1024 + 1024 + 2 * 1024 + 50265);
    assert_int_equal(m->params_total, want);
    assert_int_equal(m->params_total, 355412057ull); /* roberta-large's F32 tensors */
    assert_int_equal(m->params_buffers, 0);
    fg_model_free(m);

    /* written by 4.30: the position_ids buffer (514 int64) is stored too */
    m = built(ROBERTA("roberta", "RobertaForQuestionAnswering", "50265", "768", "12", "12", "3072",
                      ", \"transformers_version\": \"4.30.0\""));
    want = bert_emb(50265, 514, 1, 768) + 12 * bert_layer(768, 3072) + (768 * 2 + 2);
    assert_int_equal(m->params_total, want + 514);
    assert_int_equal(want, 124056578ull); /* deepset/roberta-base-squad2's F32 tensors */
    assert_int_equal(m->params_buffers, 514);
    fg_model_free(m);
}

#define DISTILBERT(cls, extra)                                                                 \
    "{\"model_type\": \"distilbert\", \"architectures\": [\"" cls "\"], \"dim\": 768, "      \
    "\"hidden_dim\": 3072, \"n_layers\": 6, \"n_heads\": 12, \"vocab_size\": 30522, "         \
    "\"max_position_embeddings\": 512, \"sinusoidal_pos_embds\": false" extra "}"

static void read_distilbert_should_count_its_heads(void **state)
{
    (void)state;
    const uint64_t body = (30522 + 512) * 768ull + 2 * 768 + 6 * bert_layer(768, 3072);
    /* vocab_transform, vocab_layer_norm, vocab_projector bias */
    struct fg_model *m = built(DISTILBERT("DistilBertForMaskedLM", ""));
    assert_int_equal(m->params_total, body + 768 * 768 + 768 + 2 * 768 + 30522);
    assert_int_equal(m->params_total, 66985530ull); /* distilbert-base-uncased */
    fg_model_free(m);
    /* pre_classifier 768 x 768 + classifier 768 x 2 */
    m = built(DISTILBERT("DistilBertForSequenceClassification", ""));
    assert_int_equal(m->params_total, body + 768 * 768 + 768 + 768 * 2 + 2);
    assert_int_equal(m->params_total, 66955010ull); /* ...-finetuned-sst-2-english */
    fg_model_free(m);
    m = built(DISTILBERT("DistilBertForQuestionAnswering", ""));
    assert_int_equal(m->params_total, 66364418ull); /* distilbert-base-uncased-distilled-squad */
    fg_model_free(m);
}

#define BART(cls, extra)                                                                       \
    "{\"model_type\": \"bart\", \"architectures\": [\"" cls "\"], \"d_model\": 768, "        \
    "\"encoder_layers\": 6, \"decoder_layers\": 6, \"encoder_attention_heads\": 12, "         \
    "\"decoder_attention_heads\": 12, \"encoder_ffn_dim\": 3072, \"decoder_ffn_dim\": 3072, " \
    "\"max_position_embeddings\": 1024, \"vocab_size\": 50265" extra "}"

static void read_bart_should_share_one_embedding_and_store_final_logits_bias(void **state)
{
    (void)state;
    /* shared 50265 x 768; per stack positions 1026 x 768 and layernorm_embedding; decoder
     * layers add encoder_attn and its LayerNorm */
    const uint64_t h = 768, pos = 1026 * h + 2 * h;
    const uint64_t enc = 6 * bert_layer(h, 3072);
    const uint64_t dec = 6 * (bert_layer(h, 3072) + 4 * (h * h + h) + 2 * h);
    struct fg_model *m = built(BART("BartModel", ""));
    assert_true(m->enc_dec);
    assert_int_equal(m->params_total, 50265 * h + 2 * pos + enc + dec);
    assert_int_equal(m->params_total, 139420416ull); /* facebook/bart-base */
    fg_model_free(m);
    m = built(BART("BartForConditionalGeneration", ""));
    assert_int_equal(m->params_total, 139420416ull + 50265);
    assert_int_equal(m->params_buffers, 50265);
    fg_model_free(m);
    /* MBart: encoder.layer_norm and decoder.layer_norm */
    m = built("{\"model_type\": \"mbart\", \"architectures\": [\"MBartForConditionalGeneration\"], "
              "\"d_model\": 768, \"encoder_layers\": 6, \"decoder_layers\": 6, "
              "\"encoder_attention_heads\": 12, \"decoder_attention_heads\": 12, "
              "\"encoder_ffn_dim\": 3072, \"decoder_ffn_dim\": 3072, "
              "\"max_position_embeddings\": 1024, \"vocab_size\": 50265}");
    assert_int_equal(m->params_total, 139420416ull + 50265 + 2 * 2 * h);
    fg_model_free(m);
}

/* One T5 encoder stack: per block two T5LayerNorms of h, q/k/v/o h x q, wi_0 / wi_1 / wo
 * h x ff; relative_attention_bias (bias) in block 0, or in every block (UMT5); the final
 * norm. */
static uint64_t t5_encoder(uint64_t h, uint64_t q, uint64_t ff, uint64_t layers, uint64_t bias,
                           bool every)
{
    return layers * (2 * h + 4 * h * q + 3 * h * ff) + (every ? layers : 1) * bias + h;
}

static void read_t5_should_give_every_umt5_self_attention_its_relative_bias(void **state)
{
    (void)state;
    /* umt5-small's shape fields */
    struct fg_model *m = built(
        "{\"model_type\": \"umt5\", \"vocab_size\": 256384, \"d_model\": 512, \"d_kv\": 64, "
        "\"d_ff\": 1024, \"num_layers\": 8, \"num_decoder_layers\": 8, \"num_heads\": 6, "
        "\"relative_attention_num_buckets\": 32, \"feed_forward_proj\": \"gated-gelu\", "
        "\"tie_word_embeddings\": false}");
    /* q/k/v/o 4 x 512 x 384, relative_attention_bias 32 x 6 in every self-attention,
     * wi_0 / wi_1 / wo 3 x 512 x 1024, T5LayerNorms of 512 */
    const uint64_t attn = 4ull * 512 * 384;
    const uint64_t enc = t5_encoder(512, 384, 1024, 8, 32 * 6, true);
    const uint64_t dec = enc + 8 * (512 + attn);
    assert_int_equal(m->params_total, 2 * 256384ull * 512 + enc + dec);
    fg_model_free(m);
}

static void read_t5_should_count_each_family_encoder_class_as_the_encoder_alone(void **state)
{
    (void)state;
    /* fal/AuraFlow-v0.3 text_encoder shapes (tests/fixtures/models/fal--AuraFlow-v0.3):
     * UMT5EncoderModel, the shared table and 24 encoder blocks, no decoder, no head */
    struct fg_model *m = built(
        "{\"model_type\": \"umt5\", \"architectures\": [\"UMT5EncoderModel\"], "
        "\"vocab_size\": 32128, \"d_model\": 2048, \"d_kv\": 64, \"d_ff\": 5120, "
        "\"num_layers\": 24, \"num_decoder_layers\": 24, \"num_heads\": 32, "
        "\"feed_forward_proj\": \"gated-gelu\", \"tie_word_embeddings\": false}");
    assert_int_equal(m->params_total,
                     32128ull * 2048 + t5_encoder(2048, 2048, 5120, 24, 32 * 32, true));
    assert_true(m->encoder_only);
    fg_model_free(m);
    /* MT5EncoderModel likewise: one relative bias table, in block 0 */
    m = built("{\"model_type\": \"mt5\", \"architectures\": [\"MT5EncoderModel\"]}");
    assert_int_equal(m->params_total, 250112ull * 512 + t5_encoder(512, 384, 1024, 8, 32 * 6,
                                                                   false));
    assert_true(m->encoder_only);
    fg_model_free(m);
}

static void read_bert_should_add_mpnet_one_shared_relative_bias_and_no_token_types(void **state)
{
    (void)state;
    struct fg_model *m = built(
        "{\"model_type\": \"mpnet\", \"architectures\": [\"MPNetForMaskedLM\"], "
        "\"vocab_size\": 30527, \"hidden_size\": 768, \"num_hidden_layers\": 12, "
        "\"num_attention_heads\": 12, \"intermediate_size\": 3072, "
        "\"max_position_embeddings\": 514, \"relative_attention_num_buckets\": 32, "
        "\"transformers_version\": \"4.40.0\"}");
    /* word + position + LayerNorm, 12 BERT layers, relative_attention_bias 32 x 12,
     * MPNetLMHead dense + layer_norm + bias */
    assert_int_equal(m->params_total, (30527 + 514) * 768ull + 2 * 768 +
                                          12 * bert_layer(768, 3072) + 32 * 12 +
                                          (768 * 768 + 768 + 2 * 768 + 30527));
    fg_model_free(m);
}

static void read_bert_should_project_electra_embeddings_to_the_hidden_width(void **state)
{
    (void)state;
    /* electra-small-discriminator's shape fields */
    struct fg_model *m = built(
        "{\"model_type\": \"electra\", \"architectures\": [\"ElectraForPreTraining\"], "
        "\"vocab_size\": 30522, \"embedding_size\": 128, \"hidden_size\": 256, "
        "\"num_hidden_layers\": 12, \"num_attention_heads\": 4, \"intermediate_size\": 1024, "
        "\"max_position_embeddings\": 512, \"type_vocab_size\": 2, "
        "\"transformers_version\": \"4.40.0\"}");
    /* embeddings of 128 + LayerNorm(128), embeddings_project 128 -> 256, 12 layers of 256,
     * discriminator dense 256 x 256 and dense_prediction 256 x 1 */
    const uint64_t body = (30522 + 512 + 2) * 128ull + 2 * 128 + (128 * 256 + 256) +
                          12 * bert_layer(256, 1024);
    assert_int_equal(m->params_total, body + (256 * 256 + 256) + (256 + 1));
    fg_model_free(m);
    /* the generator: LayerNorm(128), dense 256 -> 128, generator_lm_head bias */
    m = built("{\"model_type\": \"electra\", \"architectures\": [\"ElectraForMaskedLM\"], "
              "\"vocab_size\": 30522, \"embedding_size\": 128, \"hidden_size\": 256, "
              "\"num_hidden_layers\": 12, \"num_attention_heads\": 4, "
              "\"intermediate_size\": 1024, \"transformers_version\": \"4.40.0\"}");
    assert_int_equal(m->params_total, body + 2 * 128 + (256 * 128 + 128) + 30522);
    fg_model_free(m);
}

static void read_modernbert_should_skip_the_first_attention_norm(void **state)
{
    (void)state;
    /* ModernBERT-base's shape fields */
    struct fg_model *m = built(
        "{\"model_type\": \"modernbert\", \"architectures\": [\"ModernBertForMaskedLM\"], "
        "\"vocab_size\": 50368, \"hidden_size\": 768, \"intermediate_size\": 1152, "
        "\"num_hidden_layers\": 22, \"num_attention_heads\": 12, "
        "\"global_attn_every_n_layers\": 3, \"local_attention\": 128, \"norm_bias\": false, "
        "\"attention_bias\": false, \"mlp_bias\": false, \"classifier_bias\": false, "
        "\"decoder_bias\": true}");
    /* Wqkv 768 -> 2304, Wo, Wi 768 -> 2304, Wo 1152 -> 768, attn_norm (not in layer 0) and
     * mlp_norm without bias; embedding norm, final_norm; head dense + norm + decoder bias */
    const uint64_t layer = 768ull * 2304 + 768 * 768 + 768ull * 2304 + 1152 * 768 + 768 + 768;
    assert_int_equal(m->params_total, 50368ull * 768 + 768 + 22 * layer - 768 + 768 +
                                          (768 * 768 + 768 + 50368));
    assert_int_equal(m->params_total, 149655232ull); /* answerdotai/ModernBERT-base */
    uint32_t windows[3] = {0};
    for (size_t i = 0, k = 0; i < m->n_nodes && k < 3; i++)
        if (m->nodes[i].kind == FG_NODE_ATTN)
            windows[k++] = m->nodes[i].window;
    assert_int_equal(windows[0], 0);
    assert_int_equal(windows[1], 128);
    assert_int_equal(windows[2], 128);
    fg_model_free(m);
}

#define DEBERTA_V3(extra)                                                                      \
    "{\"model_type\": \"deberta-v2\", \"vocab_size\": 128100, \"hidden_size\": 1024, "       \
    "\"num_hidden_layers\": 24, \"num_attention_heads\": 16, \"intermediate_size\": 4096, "   \
    "\"max_position_embeddings\": 512, \"position_buckets\": 256, "                           \
    "\"relative_attention\": true, \"pos_att_type\": [\"p2c\", \"c2p\"], "                    \
    "\"norm_rel_ebd\": \"layer_norm\", \"position_biased_input\": false, "                    \
    "\"type_vocab_size\": 0" extra "}"

static void read_deberta_v2_should_count_relative_embeddings_once(void **state)
{
    (void)state;
    /* deberta-v3-large's shape fields: word embeddings and LayerNorm, 24 BERT-shaped layers,
     * rel_embeddings 2 x 256 rows and their LayerNorm; keys shared (share_att_key) */
    const uint64_t body = 128100ull * 1024 + 2 * 1024 + 24 * bert_layer(1024, 4096) +
                          512ull * 1024 + 2 * 1024;
    struct fg_model *m = built(DEBERTA_V3(", \"share_att_key\": true"));
    assert_int_equal(m->params_total, body);
    assert_int_equal(m->params_total, 434012160ull); /* DeBERTa-v3-large's recorded count */
    fg_model_free(m);
    /* without share_att_key: pos_key_proj (c2p) and pos_query_proj (p2c) in every layer */
    m = built(DEBERTA_V3(", \"share_att_key\": false"));
    assert_int_equal(m->params_total, body + 24 * 2 * (1024ull * 1024 + 1024));
    fg_model_free(m);
    /* ForSequenceClassification: ContextPooler dense + classifier */
    m = built(DEBERTA_V3(", \"share_att_key\": true, \"architectures\": "
                         "[\"DebertaV2ForSequenceClassification\"], \"num_labels\": 3"));
    assert_int_equal(m->params_total, body + (1024ull * 1024 + 1024) + (1024 * 3 + 3));
    fg_model_free(m);
}

/* bert_task_labels: a class the family's table lacks counts as the base model, with a note
 * naming the family. */
static void read_distilbert_and_deberta_v2_should_note_a_class_they_do_not_know(void **state)
{
    (void)state;
    const uint64_t distil = (30522 + 512) * 768ull + 2 * 768 + 6 * bert_layer(768, 3072);
    struct fg_model *m = built(DISTILBERT("DistilBertForFutureTask", ""));
    assert_int_equal(m->params_total, distil);
    assert_int_equal(m->n_notes, 1);
    assert_string_equal(m->notes[0], "architectures names no DistilBERT class fitgate knows: "
                                     "its task head is not counted");
    fg_model_free(m);
    m = built(DEBERTA_V3(", \"share_att_key\": true, \"architectures\": [\"DebertaV2ForX\"], "
                         "\"num_labels\": 3"));
    assert_int_equal(m->params_total, 434012160ull); /* DebertaV2Model: no head */
    assert_int_equal(m->n_notes, 1);
    assert_string_equal(m->notes[0], "architectures names no DeBERTa-v2 class fitgate knows: "
                                     "its task head is not counted");
    fg_model_free(m);
}

/* Data2VecTextForMaskedLM is RobertaForMaskedLM's modules under another prefix; the one
 * difference is RoBERTa's rule for unversioned configs (the published checkpoints store the
 * pooler), which data2vec-text does not share. */
static void read_bert_should_read_data2vec_text_as_roberta(void **state)
{
    (void)state;
    static const char *const fmt = "{\"model_type\": \"%s\", \"architectures\": "
                                   "[\"%sForMaskedLM\"], \"vocab_size\": 50265, "
                                   "\"max_position_embeddings\": 514, \"type_vocab_size\": 1, "
                                   "\"transformers_version\": \"4.40.0\"}";
    char a[512], b[512];
    snprintf(a, sizeof a, fmt, "data2vec-text", "Data2VecText");
    snprintf(b, sizeof b, fmt, "roberta", "Roberta");
    struct fg_model *ma = built(a), *mb = built(b);
    assert_int_equal(ma->params_total, mb->params_total);
    assert_int_equal(ma->certainty, FG_CERT_EXACT);
    fg_model_free(ma);
    fg_model_free(mb);
}

/* EuroBertDecoderLayer (transformers@decba1d2ea models/eurobert/modeling_eurobert.py): two
 * RMSNorms, q / o of heads x d, k / v of kv x d without bias, SwiGLU gate / up / down. */
static uint64_t eurobert_layer(uint64_t h, uint64_t heads, uint64_t kv, uint64_t d, uint64_t i)
{
    return 2 * h + 2 * h * heads * d + 2 * h * kv * d + 3 * h * i;
}

static void read_eurobert_should_count_an_untied_lm_head_and_bidirectional_gqa(void **state)
{
    (void)state;
    /* EuroBERT-210m: embed_tokens, 12 layers, norm, lm_head 768 x 128256 (untied, no bias) */
    struct fg_model *m = load("tests/fixtures/models/EuroBERT--EuroBERT-210m");
    uint64_t want = 128256ull * 768 + 12 * eurobert_layer(768, 12, 12, 64, 3072) + 768 +
                    768ull * 128256;
    assert_int_equal(m->params_total, want);
    assert_int_equal(m->params_total, 310266624ull);
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    assert_true(m->encoder_only);
    assert_true(first_of(m, FG_NODE_ATTN)->bidirectional);
    fg_model_free(m);

    /* EuroBERT-2.1B's shapes (18 heads, 6 KV heads of 128) under
     * EuroBertForSequenceClassification: dense 2304 x 2304 + bias, classifier 2304 x 3 + bias */
    m = built("{\"model_type\": \"eurobert\", \"architectures\": "
              "[\"EuroBertForSequenceClassification\"], \"hidden_size\": 2304, "
              "\"intermediate_size\": 6144, \"num_hidden_layers\": 32, \"num_attention_heads\": 18, "
              "\"num_key_value_heads\": 6, \"num_labels\": 3, \"clf_pooling\": \"late\"}");
    want = 128256ull * 2304 + 32 * eurobert_layer(2304, 18, 6, 128, 6144) + 2304 +
           (2304ull * 2304 + 2304) + (2304 * 3 + 3);
    assert_int_equal(m->params_total, want);
    assert_int_equal(m->kv_heads, 6);
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    fg_model_free(m);

    /* the release's auto_map names a ForQuestionAnswering the native module lacks */
    m = built("{\"model_type\": \"eurobert\", \"architectures\": "
              "[\"EuroBertForQuestionAnswering\"]}");
    assert_int_equal(m->params_total, 128256ull * 768 + 12 * eurobert_layer(768, 12, 12, 64,
                                                                             3072) + 768);
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_string_equal(m->unsure_key, "architectures");
    fg_model_free(m);
}

static void read_jina_embeddings_v3_should_count_rotary_xlm_roberta_with_its_pooler(void **state)
{
    (void)state;
    /* JinaEmbeddingsV3Model: word + token type (1) + LayerNorm, no position table, BERT
     * layers, the pooler (add_pooling_layer defaults to true) */
    struct fg_model *m = load("tests/fixtures/models/jinaai--jina-embeddings-v3-hf");
    const uint64_t body = bert_emb(250002, 0, 1, 1024) + 24 * bert_layer(1024, 4096);
    assert_int_equal(m->params_total, body + 1024 * 1024 + 1024);
    assert_int_equal(m->params_total, 559364096ull);
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    assert_true(m->encoder_only);
    fg_model_free(m);

    /* JinaEmbeddingsV3ForMaskedLM: no pooler; LM head dense + LayerNorm, decoder tied, bias */
    m = built("{\"model_type\": \"jina_embeddings_v3\", \"architectures\": "
              "[\"JinaEmbeddingsV3ForMaskedLM\"]}");
    assert_int_equal(m->params_total, body + 1024 * 1024 + 1024 + 2 * 1024 + 250002);
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    fg_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(read_bert_should_read_data2vec_text_as_roberta),
        cmocka_unit_test(read_eurobert_should_count_an_untied_lm_head_and_bidirectional_gqa),
        cmocka_unit_test(read_jina_embeddings_v3_should_count_rotary_xlm_roberta_with_its_pooler),
        cmocka_unit_test(read_bert_should_count_the_class_of_unversioned_roberta_conversions),
        cmocka_unit_test(read_bert_should_take_a_versioned_roberta_class_literally),
        cmocka_unit_test(read_distilbert_should_count_its_heads),
        cmocka_unit_test(read_bart_should_share_one_embedding_and_store_final_logits_bias),
        cmocka_unit_test(read_t5_should_give_every_umt5_self_attention_its_relative_bias),
        cmocka_unit_test(read_t5_should_count_each_family_encoder_class_as_the_encoder_alone),
        cmocka_unit_test(read_bert_should_add_mpnet_one_shared_relative_bias_and_no_token_types),
        cmocka_unit_test(read_bert_should_project_electra_embeddings_to_the_hidden_width),
        cmocka_unit_test(read_modernbert_should_skip_the_first_attention_norm),
        cmocka_unit_test(read_deberta_v2_should_count_relative_embeddings_once),
        cmocka_unit_test(read_distilbert_and_deberta_v2_should_note_a_class_they_do_not_know),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
