/*
 * test_arch_bert_variants.c - the masked-LM encoder readers of
 * engine/arch/encoder/bert_variants.c and esm_roformer_convbert.c: each count written out term
 * by term from the transformers class at a published release's shapes, and the published total
 * where one is known (the source beside each figure; tests/fixtures/PROVENANCE.md).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support.h"
#include <stdio.h>
#include <string.h>

#include "model/model.h"

/* One post-norm BERT layer: q/k/v/o biased, two LayerNorms, fc1 / fc2 biased. */
static uint64_t layer(uint64_t h, uint64_t i)
{
    return 4 * (h * h + h) + 2 * h + (h * i + i) + (i * h + h) + 2 * h;
}

/* The BERT MLM head: transform h -> t + bias, LayerNorm(t), bias vocab (decoder tied). */
static uint64_t mlm(uint64_t h, uint64_t t, uint64_t vocab)
{
    return h * t + t + 2 * t + vocab;
}

#define ALBERT_BASE                                                                          \
    "\"model_type\": \"albert\", \"architectures\": [\"AlbertForMaskedLM\"], "               \
    "\"embedding_size\": 128, \"hidden_size\": 768, \"intermediate_size\": 3072, "           \
    "\"num_attention_heads\": 12, \"num_hidden_layers\": 12, \"max_position_embeddings\": 512, " \
    "\"type_vocab_size\": 2, \"vocab_size\": 30000"

static void read_albert_should_store_each_group_once_and_the_conversion_extras(void **state)
{
    (void)state;
    const uint64_t e = 128, h = 768;
    /* embeddings of E, embedding_hidden_mapping_in, ONE stored layer, the MLM head of E */
    const uint64_t cls = (30000 + 512 + 2) * e + 2 * e + (e * h + h) + layer(h, 3072) +
                         mlm(h, e, 30000);
    assert_int_equal(cls, 11221680ull);
    uint64_t n = exact_count("{" ALBERT_BASE ", \"num_hidden_groups\": 1, \"inner_group_num\": 1, "
                       "\"transformers_version\": \"4.40.0\"}");
    assert_int_equal(n, cls);
    /* albert-base-v2's published config has no transformers_version: the original
     * conversion stores the pooler and predictions.decoder.bias (model.safetensors
     * F32 11,842,272: huggingface/safetensors:temp.md @01b9ce07) */
    struct fg_model *m = built("{" ALBERT_BASE "}");
    assert_int_equal(m->params_total, cls + (h * h + h) + 30000);
    assert_int_equal(m->params_total, 11842272ull);
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    /* twelve layers run over the one stored: the activations see 12 */
    assert_int_equal(m->layers, 12);
    assert_int_equal(count_kind(m, FG_NODE_ATTN), 12);
    fg_model_free(m);
    /* 2 groups of 2 inner layers: 4 stored, 24 run */
    m = built("{" ALBERT_BASE ", \"num_hidden_groups\": 2, \"inner_group_num\": 2, "
              "\"transformers_version\": \"4.40.0\"}");
    assert_int_equal(m->params_total, cls + 3 * layer(h, 3072));
    assert_int_equal(m->layers, 24);
    fg_model_free(m);
}

static void read_albert_should_refuse_more_groups_than_layers(void **state)
{
    (void)state;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(build("{\"model_type\": \"albert\", \"num_hidden_layers\": 2, "
                           "\"num_hidden_groups\": 3}", &m, &err), FG_E_RANGE);
    assert_non_null(strstr(err.detail, "num_hidden_groups"));
    assert_null(m);
}

#define ESM(layers, h, heads, inter, extra)                                                    \
    "{\"model_type\": \"esm\", \"architectures\": [\"EsmForMaskedLM\"], \"vocab_size\": 33, " \
    "\"hidden_size\": " h ", \"num_hidden_layers\": " layers ", \"num_attention_heads\": "   \
    heads ", \"intermediate_size\": " inter ", \"max_position_embeddings\": 1026, "          \
    "\"position_embedding_type\": \"rotary\", \"emb_layer_norm_before\": false, "            \
    "\"token_dropout\": true" extra "}"

/* EsmForMaskedLM without the position table and buffers. */
static uint64_t esm_class(uint64_t layers, uint64_t h, uint64_t heads, uint64_t inter)
{
    /* word embeddings; per layer q/k/v/o, two LayerNorms, the MLP; emb_layer_norm_after;
     * contact_head regression (layers x heads) + 1; EsmLMHead */
    return 33 * h + layers * layer(h, inter) + 2 * h + (layers * heads + 1) + mlm(h, h, 33);
}

static void read_esm_should_count_rotary_buffers_and_the_unused_table_of_old_saves(void **state)
{
    (void)state;
    /* facebook/esm2_t6_8M_UR50D, config 4.25.0.dev0 (the published ESM-2 configs' version, e.g.
     * esm2_t36_3B's as a Rust port quotes it): the class, the unused 1026 x 320
     * position table, inv_freq (6 x 8) and position_ids I64 1026 (model.safetensors:
     * F32 7,840,842 + I64 1026, huggingface/safetensors:temp.md @01b9ce07) */
    struct fg_model *m = built(ESM("6", "320", "20", "1280",
                                   ", \"transformers_version\": \"4.25.0.dev0\""));
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    assert_int_equal(esm_class(6, 320, 20, 1280) + 1026 * 320 + 6 * 8, 7840842ull);
    assert_int_equal(m->params_total, 7840842ull + 1026);
    assert_int_equal(m->params_buffers, 1026 * 320 + 6 * 8 + 1026);
    fg_model_free(m);
    /* a save by transformers >= 4.53: the class and inv_freq; fair-esm's parameter counts
     * (a GitHub analysis script's table: 651,043,254 / 148,140,154 / 33,501,394) are the
     * class without buffers */
    m = built(ESM("33", "1280", "20", "5120", ", \"transformers_version\": \"4.56.0\""));
    assert_int_equal(m->params_total - m->params_buffers, esm_class(33, 1280, 20, 5120));
    assert_int_equal(m->params_total - m->params_buffers, 651043254ull);
    assert_int_equal(m->params_buffers, 33 * 32);
    fg_model_free(m);
    m = built(ESM("30", "640", "20", "2560", ", \"transformers_version\": \"4.56.0\""));
    assert_int_equal(m->params_total - m->params_buffers, 148140154ull);
    fg_model_free(m);
    m = built(ESM("12", "480", "20", "1920", ", \"transformers_version\": \"4.56.0\""));
    assert_int_equal(m->params_total - m->params_buffers, 33501394ull);
    fg_model_free(m);
    /* ESM-1b as EsmForMaskedLM: absolute positions, emb_layer_norm_before */
    uint64_t n = exact_count("{\"model_type\": \"esm\", \"architectures\": [\"EsmForMaskedLM\"], "
                       "\"vocab_size\": 33, \"hidden_size\": 1280, "
                       "\"num_hidden_layers\": 33, \"num_attention_heads\": 20, "
                       "\"intermediate_size\": 5120, \"position_embedding_type\": \"absolute\", "
                       "\"emb_layer_norm_before\": true, \"transformers_version\": \"4.56.0\"}");
    assert_int_equal(n, esm_class(33, 1280, 20, 5120) + 1026 * 1280 + 2 * 1280);
    /* without architectures: EsmModel (AutoModel's class), its pooler and no LM head */
    uint64_t b = exact_count("{\"model_type\": \"esm\", \"vocab_size\": 33, \"hidden_size\": 1280, "
                       "\"num_hidden_layers\": 33, \"num_attention_heads\": 20, "
                       "\"intermediate_size\": 5120, \"position_embedding_type\": \"absolute\", "
                       "\"emb_layer_norm_before\": true, \"transformers_version\": \"4.56.0\"}");
    assert_int_equal(b, n - mlm(1280, 1280, 33) + (1280 * 1280 + 1280));
}

static void read_esm_should_refuse_the_folding_model_and_a_missing_vocab(void **state)
{
    (void)state;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(build(ESM("6", "320", "20", "1280", ", \"is_folding_model\": true"), &m,
                           &err), FG_E_UNSUPPORTED);
    assert_non_null(strstr(err.detail, "folding"));
    assert_int_equal(build("{\"model_type\": \"esm\", \"hidden_size\": 320}", &m, &err),
                     FG_E_MISSING);
    assert_non_null(strstr(err.detail, "vocab_size"));
    assert_null(m);
}

/* DebertaModel at deberta-base's shapes: word embeddings, LayerNorm; per layer in_proj
 * (no bias), q_bias, v_bias, pos_proj (no bias), pos_q_proj, the BERT output, MLP and two
 * LayerNorms; rel_embeddings 2 x 512 x h. */
static uint64_t deberta_model(uint64_t h, uint64_t layers, uint64_t inter)
{
    uint64_t per = h * 3 * h + 2 * h + h * h + (h * h + h) + (h * h + h) + 2 * h +
                   (h * inter + inter) + (inter * h + h) + 2 * h;
    return 50265 * h + 2 * h + layers * per + 1024 * h;
}

#define DEBERTA(h, layers, heads, inter, extra)                                               \
    "{\"model_type\": \"deberta\", \"hidden_size\": " h ", \"num_hidden_layers\": " layers    \
    ", \"num_attention_heads\": " heads ", \"intermediate_size\": " inter ", "                \
    "\"vocab_size\": 50265, \"max_position_embeddings\": 512, \"relative_attention\": true, " \
    "\"pos_att_type\": \"c2p|p2c\", \"max_relative_positions\": -1, "                         \
    "\"position_biased_input\": false, \"type_vocab_size\": 0" extra "}"

static void read_deberta_should_count_disentangled_attention(void **state)
{
    (void)state;
    /* model.num_parameters() of AutoModel.from_pretrained, printed in a GitHub project's
     * print_model_summary(): deberta-base 138,601,728, -large 405,163,008,
     * -xlarge 757,804,032 */
    assert_int_equal(exact_count(DEBERTA("768", "12", "12", "3072", "")), deberta_model(768, 12, 3072));
    assert_int_equal(exact_count(DEBERTA("768", "12", "12", "3072", "")), 138601728ull);
    assert_int_equal(exact_count(DEBERTA("1024", "24", "16", "4096", "")), 405163008ull);
    assert_int_equal(exact_count(DEBERTA("1024", "48", "16", "4096", "")), 757804032ull);
    /* the list spelling of pos_att_type reads the same; only c2p drops pos_q_proj */
    assert_int_equal(exact_count(DEBERTA("768", "12", "12", "3072", ", \"pos_att_type\": [\"c2p\", "
                                   "\"p2c\"]")), 138601728ull);
    uint64_t c2p = exact_count(DEBERTA("768", "12", "12", "3072", ", \"pos_att_type\": [\"c2p\"]"));
    assert_int_equal(138601728ull - c2p, 12 * (768 * 768 + 768));
    /* DebertaForMaskedLM: the MLM transform, tied decoder, bias */
    assert_int_equal(exact_count(DEBERTA("768", "12", "12", "3072", ", \"architectures\": "
                                   "[\"DebertaForMaskedLM\"]")),
                     138601728ull + mlm(768, 768, 50265));
    /* ContextPooler and the classifier of 3 labels */
    assert_int_equal(exact_count(DEBERTA("768", "12", "12", "3072", ", \"architectures\": "
                                   "[\"DebertaForSequenceClassification\"], \"num_labels\": 3")),
                     138601728ull + (768 * 768 + 768) + (768 * 3 + 3));
}

/* RoBERTa-style embeddings: word, position, token type, LayerNorm. */
static uint64_t emb(uint64_t vocab, uint64_t pos, uint64_t types, uint64_t h)
{
    return (vocab + pos + types) * h + 2 * h;
}

static void read_bertlike_should_match_longformer_and_big_bird_base_models(void **state)
{
    (void)state;
    /* a GitHub benchmark's table of parameter counts: Longformer 148,659,456 (LongformerModel
     * of longformer-base-4096), Big Bird 127,468,800 (BigBirdModel of bigbird-roberta-base),
     * BERT 109,482,240 */
    const uint64_t h = 768;
    uint64_t n = exact_count("{\"model_type\": \"longformer\", \"architectures\": [\"LongformerModel\"], "
                       "\"vocab_size\": 50265, \"max_position_embeddings\": 4098, "
                       "\"type_vocab_size\": 1, \"attention_window\": [512, 512, 512, 512, 512, "
                       "512, 512, 512, 512, 512, 512, 512]}");
    /* query/key/value_global per layer, the pooler */
    assert_int_equal(n, emb(50265, 4098, 1, h) + 12 * (layer(h, 3072) + 3 * (h * h + h)) +
                            (h * h + h));
    assert_int_equal(n, 148659456ull);
    n = exact_count("{\"model_type\": \"big_bird\", \"architectures\": [\"BigBirdModel\"], "
              "\"vocab_size\": 50358, \"max_position_embeddings\": 4096, "
              "\"attention_type\": \"block_sparse\", \"block_size\": 64}");
    assert_int_equal(n, emb(50358, 4096, 2, h) + 12 * layer(h, 3072) + (h * h + h));
    assert_int_equal(n, 127468800ull);
    /* LongformerForMaskedLM: no pooler, the RoBERTa LM head; BigBirdForPreTraining keeps the
     * pooler and adds the MLM and NSP heads */
    assert_int_equal(exact_count("{\"model_type\": \"longformer\", \"architectures\": "
                           "[\"LongformerForMaskedLM\"], \"vocab_size\": 50265, "
                           "\"max_position_embeddings\": 4098, \"type_vocab_size\": 1}"),
                     148659456ull - (h * h + h) + mlm(h, h, 50265));
    assert_int_equal(exact_count("{\"model_type\": \"big_bird\", \"architectures\": "
                           "[\"BigBirdForPreTraining\"]}"),
                     127468800ull + mlm(h, h, 50358) + (h * 2 + 2));
    /* BigBirdForCausalLM keeps BigBirdModel(config)'s pooler too */
    assert_int_equal(exact_count("{\"model_type\": \"big_bird\", \"architectures\": "
                           "[\"BigBirdForCausalLM\"], \"is_decoder\": true}"),
                     127468800ull + mlm(h, h, 50358));
    /* use_bias false drops BigBird's q/k/v biases */
    assert_int_equal(exact_count("{\"model_type\": \"big_bird\", \"architectures\": [\"BigBirdModel\"], "
                           "\"use_bias\": false}"), 127468800ull - 12 * 3 * h);
}

static void read_bertlike_should_place_the_pre_norm_families_norms(void **state)
{
    (void)state;
    const uint64_t h = 768;
    /* RobertaPreLayerNormForMaskedLM (andreasmadsen/efficient_mlm_m0.40 shapes): RoBERTa's
     * count plus the model's final LayerNorm */
    uint64_t n = exact_count("{\"model_type\": \"roberta-prelayernorm\", \"architectures\": "
                       "[\"RobertaPreLayerNormForMaskedLM\"], \"vocab_size\": 50265, "
                       "\"max_position_embeddings\": 514, \"type_vocab_size\": 1, "
                       "\"hidden_size\": 1024, \"num_hidden_layers\": 24, "
                       "\"num_attention_heads\": 16, \"intermediate_size\": 4096}");
    assert_int_equal(n, emb(50265, 514, 1, 1024) + 24 * layer(1024, 4096) + 2 * 1024 +
                            mlm(1024, 1024, 50265));
    /* XLMRobertaXLForMaskedLM (facebook/xlm-roberta-xl): no LayerNorm after the
     * embeddings, the encoder's final one */
    n = exact_count("{\"model_type\": \"xlm-roberta-xl\", \"architectures\": "
              "[\"XLMRobertaXLForMaskedLM\"]}");
    assert_int_equal(n, (250880 + 514 + 1) * 2560ull + 36 * layer(2560, 10240) + 2 * 2560 +
                            mlm(2560, 2560, 250880));
    /* a GitHub evaluation script's parameter list for XLM-R base / large / XL / XXL:
     * 278,295,186, 560,142,482, 3,482,741,760, 10,712,994,816 (the masked-LM classes) */
    assert_int_equal(n, 3482741760ull);
    n = exact_count("{\"model_type\": \"xlm-roberta-xl\", \"architectures\": "
              "[\"XLMRobertaXLForMaskedLM\"], \"hidden_size\": 4096, \"num_hidden_layers\": 48, "
              "\"num_attention_heads\": 32, \"intermediate_size\": 16384}");
    assert_int_equal(n, 10712994816ull);
    /* MegatronBertForMaskedLM (345M shapes): likewise */
    n = exact_count("{\"model_type\": \"megatron-bert\", \"architectures\": "
              "[\"MegatronBertForMaskedLM\"]}");
    assert_int_equal(n, (29056 + 512 + 2) * 1024ull + 24 * layer(1024, 4096) + 2 * 1024 +
                            mlm(1024, 1024, 29056));
    /* the causal twin as a decoder with cross-attention: a second attention and LayerNorm
     * per layer, and the head of the masked class */
    uint64_t x = exact_count("{\"model_type\": \"roberta-prelayernorm\", \"architectures\": "
                       "[\"RobertaPreLayerNormForCausalLM\"], \"is_decoder\": true, "
                       "\"add_cross_attention\": true}");
    assert_int_equal(x, emb(50265, 512, 2, h) + 12 * (layer(h, 3072) + 4 * (h * h + h) + 2 * h) +
                            2 * h + mlm(h, h, 50265));
}

static void read_bertlike_should_add_ernie_task_and_layoutlm_2d_tables(void **state)
{
    (void)state;
    const uint64_t h = 768;
    /* nghuyong/ernie-3.0-base-zh shapes: vocab 40000, 2048 positions, 4 token types and
     * use_task_id with 3 task types; ErnieForMaskedLM builds no pooler */
    uint64_t n = exact_count("{\"model_type\": \"ernie\", \"architectures\": [\"ErnieForMaskedLM\"], "
                       "\"vocab_size\": 40000, \"max_position_embeddings\": 2048, "
                       "\"type_vocab_size\": 4, \"use_task_id\": true, "
                       "\"task_type_vocab_size\": 3}");
    assert_int_equal(n, (40000 + 2048 + 4 + 3) * h + 2 * h + 12 * layer(h, 3072) +
                            mlm(h, h, 40000));
    /* LayoutLMForMaskedLM keeps LayoutLMModel's pooler; x, y, h, w tables of 1024 rows */
    n = exact_count("{\"model_type\": \"layoutlm\", \"architectures\": [\"LayoutLMForMaskedLM\"]}");
    assert_int_equal(n, (30522 + 512 + 2 + 4 * 1024) * h + 2 * h + 12 * layer(h, 3072) +
                            (h * h + h) + mlm(h, h, 30522));
}

static void read_roformer_and_rembert_should_size_their_embedding_widths(void **state)
{
    (void)state;
    const uint64_t h = 768;
    /* junnyu/roformer_chinese_base shapes: word and token type tables, no position table
     * but the frozen sinusoid (1536 x 64) in the encoder, no pooler */
    struct fg_model *m = built("{\"model_type\": \"roformer\", \"architectures\": "
                               "[\"RoFormerForMaskedLM\"], \"vocab_size\": 50000, "
                               "\"max_position_embeddings\": 1536}");
    assert_int_equal(m->params_total, (50000 + 2) * h + 2 * h + 1536 * 64 +
                                          12 * layer(h, 3072) + mlm(h, h, 50000));
    assert_int_equal(m->params_buffers, 1536 * 64);
    fg_model_free(m);
    /* embedding_size 384: embeddings_project and the head's transform to E */
    uint64_t n = exact_count("{\"model_type\": \"roformer\", \"architectures\": "
                       "[\"RoFormerForMaskedLM\"], \"embedding_size\": 384}");
    assert_int_equal(n, (50000 + 2) * 384 + 2 * 384 + (384 * h + h) + 1536 * 64 +
                            12 * layer(h, 3072) + mlm(h, 384, 50000));
    /* google/rembert shapes: tables of 256 projected to 1152, the untied decoder of 1664 */
    n = exact_count("{\"model_type\": \"rembert\", \"architectures\": [\"RemBertForMaskedLM\"]}");
    assert_int_equal(n, (250300 + 512 + 2) * 256ull + 2 * 256 + (256 * 1152 + 1152) +
                            32 * layer(1152, 4608) + mlm(1152, 1664, 250300) + 1664 * 250300ull);
    /* its config.json's embedding_size (256), which RemBertConfig has no use for, changes
     * nothing (tests/fixtures/models/google--rembert) */
    assert_int_equal(exact_count("{\"model_type\": \"rembert\", \"architectures\": "
                           "[\"RemBertForMaskedLM\"], \"embedding_size\": 256}"), n);
}

static void read_bertlike_should_add_roc_bert_inputs_and_xmod_adapters(void **state)
{
    (void)state;
    const uint64_t h = 768;
    /* RoCBertForMaskedLM at RoCBertConfig's defaults: pronunciation 910 x 768, shape
     * 24858 x 512, map_inputs_layer (768 + 768 + 512) -> 768 */
    uint64_t n = exact_count("{\"model_type\": \"roc_bert\", \"architectures\": "
                       "[\"RoCBertForMaskedLM\"]}");
    const uint64_t roc = (30522 + 512 + 2) * h + 910 * 768 + 24858 * 512 +
                         ((768 + 768 + 512) * h + h) + 2 * h + 12 * layer(h, 3072);
    assert_int_equal(n, roc + mlm(h, h, 30522));
    /* RoCBertForPreTraining (weiweishi/roc-bert-base-zh's class): the pooler and the MLM
     * head, nothing more */
    assert_int_equal(exact_count("{\"model_type\": \"roc_bert\", \"architectures\": "
                           "[\"RoCBertForPreTraining\"]}"),
                     roc + (h * h + h) + mlm(h, h, 30522));
    /* concat_input false: no map_inputs_layer, the tables stay */
    assert_int_equal(exact_count("{\"model_type\": \"roc_bert\", \"architectures\": "
                           "[\"RoCBertForMaskedLM\"], \"concat_input\": false}"),
                     n - ((768 + 768 + 512) * h + h));
    /* facebook/xmod-base shapes with three languages: per layer and language dense1
     * 768 -> 384 and dense2 back; XmodModel's pooler */
    n = exact_count("{\"model_type\": \"xmod\", \"architectures\": [\"XmodModel\"], "
              "\"vocab_size\": 250002, \"max_position_embeddings\": 514, \"type_vocab_size\": 1, "
              "\"languages\": [\"en_XX\", \"de_DE\", \"fr_XX\"]}");
    const uint64_t adapter = h * 384 + 384 + 384 * h + h;
    assert_int_equal(n, emb(250002, 514, 1, h) + 12 * (layer(h, 3072) + 3 * adapter) +
                            (h * h + h));
    /* adapter_layer_norm and pre_norm add a LayerNorm per layer and one after the encoder */
    assert_int_equal(exact_count("{\"model_type\": \"xmod\", \"architectures\": [\"XmodModel\"], "
                           "\"vocab_size\": 250002, \"max_position_embeddings\": 514, "
                           "\"type_vocab_size\": 1, \"languages\": [\"en_XX\", \"de_DE\", "
                           "\"fr_XX\"], \"adapter_layer_norm\": true, \"pre_norm\": true}"),
                     n + 12 * 2 * h + 2 * h);
}

static void read_convbert_should_count_the_convolution_half_of_each_head(void **state)
{
    (void)state;
    /* YituTech/conv-bert-base shapes: 6 attention heads of 64 (head_ratio 2), A = 384,
     * kernel 9: q/k/v h -> A, the separable convolution (depthwise 768 x 9, pointwise
     * 768 -> 384, bias), conv_kernel_layer 384 -> 54, conv_out_layer 768 -> 384, the
     * output dense 768 x 768 */
    const uint64_t h = 768, a = 384, k = 9;
    const uint64_t att = 3 * (h * a + a) + (h * k + h * a + a) + (a * 6 * k + 6 * k) +
                         (h * a + a) + (h * h + h) + 2 * h;
    const uint64_t per = att + (h * 3072 + 3072) + (3072 * h + h) + 2 * h;
    uint64_t n = exact_count("{\"model_type\": \"convbert\", \"architectures\": "
                       "[\"ConvBertForMaskedLM\"]}");
    assert_int_equal(n, (30522 + 512 + 2) * h + 2 * h + 12 * per + mlm(h, h, 30522));
    /* num_groups 2 halves the MLP matrices (GroupedLinearLayer) */
    uint64_t g = exact_count("{\"model_type\": \"convbert\", \"architectures\": "
                       "[\"ConvBertForMaskedLM\"], \"num_groups\": 2}");
    assert_int_equal(n - g, 12 * (2 * h * 3072 / 2));
}

static void readers_should_doubt_an_unknown_task_class(void **state)
{
    (void)state;
    struct fg_model *m = built("{\"model_type\": \"ernie\", \"architectures\": "
                               "[\"ErnieForSomethingNew\"]}");
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_true(has_note(m, "architectures"));
    fg_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(read_albert_should_store_each_group_once_and_the_conversion_extras),
        cmocka_unit_test(read_albert_should_refuse_more_groups_than_layers),
        cmocka_unit_test(read_esm_should_count_rotary_buffers_and_the_unused_table_of_old_saves),
        cmocka_unit_test(read_esm_should_refuse_the_folding_model_and_a_missing_vocab),
        cmocka_unit_test(read_deberta_should_count_disentangled_attention),
        cmocka_unit_test(read_bertlike_should_match_longformer_and_big_bird_base_models),
        cmocka_unit_test(read_bertlike_should_place_the_pre_norm_families_norms),
        cmocka_unit_test(read_bertlike_should_add_ernie_task_and_layoutlm_2d_tables),
        cmocka_unit_test(read_roformer_and_rembert_should_size_their_embedding_widths),
        cmocka_unit_test(read_bertlike_should_add_roc_bert_inputs_and_xmod_adapters),
        cmocka_unit_test(read_convbert_should_count_the_convolution_half_of_each_head),
        cmocka_unit_test(readers_should_doubt_an_unknown_task_class),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
