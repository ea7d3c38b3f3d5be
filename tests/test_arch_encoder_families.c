/*
 * test_arch_encoder_families.c - the readers of engine/arch/encoder/xlnet_xlm_funnel.c and
 * tapas_luke_fnet.c (xlnet, xlm, flaubert, funnel, mobilebert, tapas, luke, fnet, squeezebert,
 * wav2vec2): each count written out term by term from the transformers modeling class at the
 * shapes of a published release, and the published total where one is known.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

static void refused(const char *json, int code, const char *needle)
{
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(build(json, &m, &err), code);
    assert_null(m);
    assert_non_null(strstr(err.detail, needle));
}

/* xlnet-base-cased (XLNetLMHeadModel): d_model 768, 12 layers, 12 heads, d_inner 3072,
 * vocab 32000. */
static void read_xlnet_should_count_relative_attention_and_the_tied_head_bias(void **state)
{
    (void)state;
    const uint64_t h = 768, f = 3072, V = 32000;
    /* q k v o r, r_r / r_s / r_w biases, seg_embed 2 x heads x d_head, LayerNorm, FFN, LN */
    const uint64_t layer = 5 * h * h + 3 * h + 2 * h + 2 * h + (h * f + f) + (f * h + h) +
                           2 * h;
    const char *base = "{\"model_type\": \"xlnet\", \"architectures\": [\"XLNetLMHeadModel\"], "
                       "\"d_model\": 768, \"n_layer\": 12, \"n_head\": 12, \"d_head\": 64, "
                       "\"d_inner\": 3072, \"vocab_size\": 32000, \"untie_r\": true, "
                       "\"ff_activation\": \"gelu\", \"mem_len\": null}";
    uint64_t n = exact_count(base);
    assert_int_equal(n, V * h + h + 12 * layer + V);
    /* ForSequenceClassification: summary Linear(h, h) and logits_proj Linear(h, labels) */
    uint64_t cls = exact_count("{\"model_type\": \"xlnet\", \"architectures\": "
                         "[\"XLNetForSequenceClassification\"], \"d_model\": 768, "
                         "\"n_layer\": 12, \"n_head\": 12, \"d_inner\": 3072, "
                         "\"num_labels\": 3}");
    assert_int_equal(cls, V * h + h + 12 * layer + (h * h + h) + (h * 3 + 3));
    /* the SQuAD head of XLNetForQuestionAnswering */
    uint64_t qa = exact_count("{\"model_type\": \"xlnet\", \"architectures\": "
                        "[\"XLNetForQuestionAnswering\"], \"d_model\": 768, \"n_layer\": 12, "
                        "\"n_head\": 12, \"d_inner\": 3072}");
    assert_int_equal(qa - (V * h + h + 12 * layer),
                     (h + 1) + (2 * h * h + h) + 2 * h + (h + 1) + (2 * h * h + h) + h);
    /* an untied head stores its weight */
    uint64_t untied = exact_count("{\"model_type\": \"xlnet\", \"d_model\": 768, \"n_layer\": 12, "
                            "\"n_head\": 12, \"d_inner\": 3072, \"architectures\": "
                            "[\"XLNetLMHeadModel\"], \"tie_word_embeddings\": false}");
    assert_int_equal(untied - n, V * h);
    /* XLNetRelativeAttention has no SDPA path: its scores are kept whatever the job asks */
    struct fg_model *m = built(base);
    assert_int_equal(first_of(m, FG_NODE_ATTN)->score_bytes, 6);
    fg_model_free(m);
    refused("{\"model_type\": \"xlnet\", \"d_model\": 768, \"n_head\": 12, \"d_head\": 32}",
            FG_E_RANGE, "d_head");
    refused("{\"model_type\": \"xlnet\", \"architectures\": [\"XLNetForSequenceClassification\"], "
            "\"summary_type\": \"attn\"}", FG_E_UNSUPPORTED, "summary_type");
}

/* xlm-mlm-en-2048 (XLMWithLMHeadModel) and xlm-mlm-enfr-1024's language embeddings. */
static void read_xlm_should_count_positions_languages_and_the_prediction_bias(void **state)
{
    (void)state;
    const uint64_t h = 2048, V = 30145;
    const uint64_t layer = 4 * (h * h + h) + 2 * h + (h * 4 * h + 4 * h) + (4 * h * h + h) +
                           2 * h;
    uint64_t n = exact_count("{\"model_type\": \"xlm\", \"architectures\": [\"XLMWithLMHeadModel\"], "
                       "\"emb_dim\": 2048, \"n_layers\": 12, \"n_heads\": 16, "
                       "\"vocab_size\": 30145, \"max_position_embeddings\": 512, "
                       "\"n_langs\": 1, \"sinusoidal_embeddings\": false, \"asm\": false}");
    assert_int_equal(n, 512 * h + V * h + 2 * h + 12 * layer + V);
    const uint64_t H = 1024, W = 64139;
    const uint64_t l2 = 4 * (H * H + H) + 2 * H + (H * 4 * H + 4 * H) + (4 * H * H + H) + 2 * H;
    assert_int_equal(exact_count("{\"model_type\": \"xlm\", \"architectures\": "
                           "[\"XLMWithLMHeadModel\"], \"emb_dim\": 1024, \"n_layers\": 6, "
                           "\"n_heads\": 8, \"vocab_size\": 64139, \"n_langs\": 2, "
                           "\"use_lang_emb\": true}"),
                     512 * H + 2 * H + W * H + 2 * H + 6 * l2 + W);
    /* XLMForSequenceClassification: the summary projects to the labels, nothing after */
    uint64_t seq = exact_count("{\"model_type\": \"xlm\", \"architectures\": "
                         "[\"XLMForSequenceClassification\"], \"num_labels\": 5}");
    assert_int_equal(seq, 512 * h + V * h + 2 * h + 12 * layer + (h * 5 + 5));
    /* the adaptive softmax: head 8000 + 2 clusters, tails 2048 / 4 and 2048 / 16 wide */
    uint64_t asm_n = exact_count("{\"model_type\": \"xlm\", \"architectures\": "
                           "[\"XLMWithLMHeadModel\"], \"asm\": true}");
    assert_int_equal(asm_n - (512 * h + V * h + 2 * h + 12 * layer),
                     (h * 8002 + 8002) + (h * 512 + 512 * 12000) + (h * 128 + 128 * 10145));
    refused("{\"model_type\": \"xlm\", \"is_encoder\": false}", FG_E_UNSUPPORTED, "is_encoder");
    /* FlauBERT-base builds XLM's modules */
    const uint64_t F = 768, FV = 68729;
    const uint64_t fl = 4 * (F * F + F) + 2 * F + (F * 4 * F + 4 * F) + (4 * F * F + F) + 2 * F;
    assert_int_equal(exact_count("{\"model_type\": \"flaubert\", \"architectures\": "
                           "[\"FlaubertWithLMHeadModel\"], \"emb_dim\": 768, \"n_layers\": 12, "
                           "\"n_heads\": 12, \"vocab_size\": 68729, \"pre_norm\": false, "
                           "\"layerdrop\": 0.0}"),
                     512 * F + FV * F + 2 * F + 12 * fl + FV);
}

/* funnel-transformer/small: blocks 4-4-4, 2 decoder layers, d_model 768, d_head 64. */
static void read_funnel_should_count_blocks_and_the_decoder_of_the_full_model(void **state)
{
    (void)state;
    const uint64_t h = 768, q = 768, f = 3072, V = 30522;
    /* q (no bias), k, v (biased), post_proj, r_kernel, r_w / r_r / r_s, seg_embed, LN, FFN */
    const uint64_t layer = h * q + 2 * (h * q + q) + (q * h + h) + h * q + 3 * q + 2 * q +
                           2 * h + (h * f + f) + (f * h + h) + 2 * h;
    const char *cfg = "{\"model_type\": \"funnel\", \"architectures\": [\"FunnelForMaskedLM\"], "
                      "\"block_sizes\": [4, 4, 4], \"block_repeats\": [1, 1, 1], "
                      "\"num_decoder_layers\": 2, \"d_model\": 768, \"n_head\": 12, "
                      "\"d_head\": 64, \"d_inner\": 3072, \"vocab_size\": 30522}";
    assert_int_equal(exact_count(cfg), V * h + 2 * h + 14 * layer + V);
    /* the Hub file's FunnelModel with its type_vocab_size 3, which sizes nothing
     * (tests/fixtures/models/funnel-transformer--small): no LM head */
    assert_int_equal(exact_count("{\"model_type\": \"funnel\", \"architectures\": "
                           "[\"FunnelModel\"], \"type_vocab_size\": 3}"),
                     V * h + 2 * h + 14 * layer);
    /* ForSequenceClassification sits on FunnelBaseModel: no decoder */
    assert_int_equal(exact_count("{\"model_type\": \"funnel\", \"architectures\": "
                           "[\"FunnelForSequenceClassification\"], \"num_labels\": 2}"),
                     V * h + 2 * h + 12 * layer + (h * h + h) + (h * 2 + 2));
    struct fg_model *m = built("{\"model_type\": \"funnel\", \"block_repeats\": [1, 2, 1]}");
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_string_equal(m->unsure_key, "block_repeats");
    fg_model_free(m);
    refused("{\"model_type\": \"funnel\", \"block_sizes\": [4, 4], \"block_repeats\": [1]}",
            FG_E_RANGE, "block_repeats");
}

/* google/mobilebert-uncased (MobileBertForPreTraining), MobileBertConfig defaults. */
static void read_mobilebert_should_count_bottlenecks_and_stacked_feed_forwards(void **state)
{
    (void)state;
    const uint64_t h = 512, e = 128, i = 128, f = 512, V = 30522;
    const uint64_t emb = V * e + 512 * h + 2 * h + (3 * e * h + h) + 2 * h;
    const uint64_t attn = 2 * (i * i + i) + (h * i + i) + (i * i + i) + 2 * i;
    const uint64_t ffn = (i * f + f) + (f * i + i) + 2 * i;
    const uint64_t bottleneck = 2 * ((h * i + i) + 2 * i) + ((i * h + h) + 2 * h);
    const uint64_t layer = attn + 4 * ffn + bottleneck;
    const uint64_t pooler = h * h + h;
    const uint64_t mlm = (h * h + h) + 2 * h + V * (h - e) + V;
    uint64_t n = exact_count("{\"model_type\": \"mobilebert\", \"architectures\": "
                       "[\"MobileBertForPreTraining\"], \"hidden_size\": 512, "
                       "\"embedding_size\": 128, \"intra_bottleneck_size\": 128, "
                       "\"intermediate_size\": 512, \"num_attention_heads\": 4, "
                       "\"num_hidden_layers\": 24, \"num_feedforward_networks\": 4, "
                       "\"normalization_type\": \"no_norm\", \"trigram_input\": true, "
                       "\"use_bottleneck\": true, \"key_query_shared_bottleneck\": true, "
                       "\"use_bottleneck_attention\": false, \"vocab_size\": 30522}");
    assert_int_equal(n, emb + 24 * layer + pooler + mlm + (2 * h + 2));
    /* ForMaskedLM builds no pooler and no NSP head */
    assert_int_equal(exact_count("{\"model_type\": \"mobilebert\", \"architectures\": "
                           "[\"MobileBertForMaskedLM\"]}"), emb + 24 * layer + mlm);
    /* without bottlenecks every width is hidden_size */
    const uint64_t plain = 4 * (h * h + h) + 2 * h + 4 * ((h * f + f) + (f * h + h) + 2 * h);
    assert_int_equal(exact_count("{\"model_type\": \"mobilebert\", \"use_bottleneck\": false, "
                           "\"architectures\": [\"MobileBertModel\"], "
                           "\"classifier_activation\": false}"), emb + 24 * plain);
}

/* google/tapas-base shapes: seven token-type tables; TapasForQuestionAnswering's heads. */
static void read_tapas_should_count_every_token_type_table_and_the_cell_heads(void **state)
{
    (void)state;
    const uint64_t h = 768, f = 3072, V = 30522;
    const uint64_t layer = 4 * (h * h + h) + 2 * h + (h * f + f) + (f * h + h) + 2 * h;
    const uint64_t emb = V * h + 1024 * h + (3 + 256 + 256 + 2 + 256 + 256 + 10) * h + 2 * h;
    const uint64_t pooler = h * h + h;
    assert_int_equal(exact_count("{\"model_type\": \"tapas\", \"architectures\": [\"TapasModel\"], "
                           "\"type_vocab_sizes\": [3, 256, 256, 2, 256, 256, 10], "
                           "\"max_position_embeddings\": 1024}"),
                     emb + 12 * layer + pooler);
    /* WTQ fine-tune: cell and column weights and biases, 4 aggregation labels */
    assert_int_equal(exact_count("{\"model_type\": \"tapas\", \"architectures\": "
                           "[\"TapasForQuestionAnswering\"], \"num_aggregation_labels\": 4}"),
                     emb + 12 * layer + pooler + 2 * h + 2 + (h * 4 + 4));
    refused("{\"model_type\": \"tapas\", \"add_cross_attention\": true}", FG_E_UNSUPPORTED,
            "add_cross_attention");
    /* TapasForMaskedLM: no pooler, BERT's MLM head with the decoder tied */
    assert_int_equal(exact_count("{\"model_type\": \"tapas\", \"architectures\": "
                           "[\"TapasForMaskedLM\"]}"),
                     emb + 12 * layer + (h * h + h) + 2 * h + V);
}

/* studio-ousia/luke-base shapes: entity embeddings 500,000 x 256 projected to 768. */
static void read_luke_should_count_entity_tables_and_entity_aware_queries(void **state)
{
    (void)state;
    const uint64_t h = 768, f = 3072, V = 50267, E = 500000, ee = 256;
    const uint64_t layer = 7 * (h * h + h) + 2 * h + (h * f + f) + (f * h + h) + 2 * h;
    const uint64_t words = V * h + 514 * h + 1 * h + 2 * h;
    const uint64_t ents = E * ee + ee * h + 514 * h + 1 * h + 2 * h;
    const char *cfg = "{\"model_type\": \"luke\", \"architectures\": [\"LukeForMaskedLM\"], "
                      "\"vocab_size\": 50267, \"entity_vocab_size\": 500000, "
                      "\"entity_emb_size\": 256, \"max_position_embeddings\": 514, "
                      "\"type_vocab_size\": 1, \"use_entity_aware_attention\": true}";
    const uint64_t mlm = (h * h + h) + 2 * h + V;
    const uint64_t ent_head = (h * ee + ee) + 2 * ee + E;
    assert_int_equal(exact_count(cfg), words + ents + 12 * layer + (h * h + h) + mlm + ent_head);
    /* without entity-aware attention the three extra queries go */
    uint64_t plain = exact_count("{\"model_type\": \"luke\", \"architectures\": [\"LukeModel\"], "
                           "\"use_entity_aware_attention\": false}");
    uint64_t aware = exact_count("{\"model_type\": \"luke\", \"architectures\": [\"LukeModel\"]}");
    assert_int_equal(aware - plain, 12 * 3 * (h * h + h));
    /* an entity-pair classifier reads both entities without bias */
    uint64_t pair = exact_count("{\"model_type\": \"luke\", \"architectures\": "
                          "[\"LukeForEntityPairClassification\"], \"num_labels\": 42}");
    assert_int_equal(pair - aware, 2 * h * 42);
}

/* google/fnet-base and squeezebert/squeezebert-uncased shapes. */
static void read_fnet_and_squeezebert_should_count_mixing_without_attention_weights(void **state)
{
    (void)state;
    const uint64_t h = 768, f = 3072;
    /* FNet: no attention weights, a LayerNorm after the Fourier mixing */
    const uint64_t fl = 2 * h + (h * f + f) + (f * h + h) + 2 * h;
    const uint64_t V = 32000;
    const uint64_t femb = V * h + 512 * h + 4 * h + 2 * h + (h * h + h);
    assert_int_equal(exact_count("{\"model_type\": \"fnet\", \"architectures\": "
                           "[\"FNetForPreTraining\"], \"vocab_size\": 32000, "
                           "\"type_vocab_size\": 4, \"use_tpu_fourier_optimizations\": true}"),
                     femb + 12 * fl + (h * h + h) + ((h * h + h) + 2 * h + V) + (2 * h + 2));
    /* SqueezeBERT: q / k / v in 4 groups, post_attention in 1, FFN in 4 */
    const uint64_t W = 30528;
    const uint64_t sl = (3 * h * h / 4 + 3 * h) + (h * h + h) + 2 * h + (h * f / 4 + f) +
                        (f * h / 4 + h) + 2 * h;
    assert_int_equal(exact_count("{\"model_type\": \"squeezebert\", \"architectures\": "
                           "[\"SqueezeBertForMaskedLM\"], \"vocab_size\": 30528, "
                           "\"q_groups\": 4, \"k_groups\": 4, \"v_groups\": 4, "
                           "\"post_attention_groups\": 1, \"intermediate_groups\": 4, "
                           "\"output_groups\": 4}"),
                     W * h + 512 * h + 2 * h + 2 * h + 12 * sl + (h * h + h) +
                         ((h * h + h) + 2 * h + W));
    refused("{\"model_type\": \"squeezebert\", \"q_groups\": 5}", FG_E_RANGE, "groups");
}

/* facebook/wav2vec2-base-960h and jonatasgrosman/wav2vec2-large-xlsr-53-english
 * (Wav2Vec2ForCTC), against the safetensors counts of huggingface/safetensors:temp.md
 * (commit 01b9ce07): F32 94,395,552 and 315,472,545. */
static void read_wav2vec2_should_match_the_published_ctc_checkpoints(void **state)
{
    (void)state;
    /* large, layer-norm conv stem with biases, stable layer norm, vocab 33 */
    const uint64_t H = 1024, F = 4096;
    const uint64_t stem = (1 * 512 * 10 + 512 + 1024) + 4 * (512 * 512 * 3 + 512 + 1024) +
                          2 * (512 * 512 * 2 + 512 + 1024);
    const uint64_t proj = 1024 + (512 * H + H);
    const uint64_t pos = H * (H / 16) * 128 + 128 + H;
    const uint64_t layer = 4 * (H * H + H) + 2 * H + (H * F + F) + (F * H + H) + 2 * H;
    uint64_t large = exact_count("{\"model_type\": \"wav2vec2\", \"architectures\": "
                           "[\"Wav2Vec2ForCTC\"], \"hidden_size\": 1024, "
                           "\"num_hidden_layers\": 24, \"num_attention_heads\": 16, "
                           "\"intermediate_size\": 4096, \"vocab_size\": 33, "
                           "\"feat_extract_norm\": \"layer\", \"conv_bias\": true, "
                           "\"do_stable_layer_norm\": true, \"mask_time_prob\": 0.05, "
                           "\"conv_dim\": [512, 512, 512, 512, 512, 512, 512], "
                           "\"conv_kernel\": [10, 3, 3, 3, 3, 2, 2], "
                           "\"conv_stride\": [5, 2, 2, 2, 2, 2, 2]}");
    assert_int_equal(large, stem + proj + H + pos + 2 * H + 24 * layer + (H * 33 + 33));
    assert_int_equal(large, 315472545ull);
    /* base: group norm on the first conv only, no conv bias; the published file (written
     * by transformers 4.3, before SpecAugment added masked_spec_embed) lacks that one
     * hidden-wide vector the class now builds */
    const uint64_t h = 768, f = 3072;
    const uint64_t bstem = (512 * 10 + 1024) + 4 * (512 * 512 * 3) + 2 * (512 * 512 * 2);
    const uint64_t blayer = 4 * (h * h + h) + 2 * h + (h * f + f) + (f * h + h) + 2 * h;
    uint64_t base = exact_count("{\"model_type\": \"wav2vec2\", \"architectures\": "
                          "[\"Wav2Vec2ForCTC\"], \"vocab_size\": 32}");
    assert_int_equal(base, bstem + (1024 + 512 * h + h) + h + (h * 48 * 128 + 128 + h) +
                               2 * h + 12 * blayer + (h * 32 + 32));
    assert_int_equal(base - h, 94395552ull);
    /* ForPreTraining: quantizer codevectors 2 x 320 x 128, weight_proj, project_hid / _q */
    uint64_t pre = exact_count("{\"model_type\": \"wav2vec2\", \"architectures\": "
                         "[\"Wav2Vec2ForPreTraining\"]}");
    assert_int_equal(pre - (base - (h * 32 + 32)),
                     640 * 128 + (512 * 640 + 640) + (h * 256 + 256) + (256 * 256 + 256));
    struct fg_model *m = built("{\"model_type\": \"wav2vec2\", \"architectures\": "
                               "[\"Wav2Vec2ForXVector\"]}");
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_string_equal(m->unsure_key, "architectures");
    fg_model_free(m);
    refused("{\"model_type\": \"wav2vec2\", \"conv_dim\": [512, 512], \"conv_kernel\": [10]}",
            FG_E_RANGE, "conv_kernel");
}

/* uw-madison/nystromformer-512 shapes (max_position_embeddings 510, conv_kernel_size 65),
 * YOSO's optional conv and MRA without one. */
static void read_landmark_should_count_offset_positions_and_value_convolutions(void **state)
{
    (void)state;
    const uint64_t h = 768, f = 3072;
    const uint64_t layer = 4 * (h * h + h) + 2 * h + (h * f + f) + (f * h + h) + 2 * h;
    const uint64_t V = 30000;
    const uint64_t emb = V * h + 512 * h + 2 * h + 2 * h;
    const uint64_t mlm = (h * h + h) + 2 * h + V;
    uint64_t n = exact_count("{\"model_type\": \"nystromformer\", \"architectures\": "
                       "[\"NystromformerForMaskedLM\"], \"max_position_embeddings\": 510, "
                       "\"conv_kernel_size\": 65, \"num_landmarks\": 64, "
                       "\"segment_means_seq_len\": 64, \"transformers_version\": \"4.44.0\"}");
    assert_int_equal(n, emb + 12 * (layer + 12 * 65) + mlm);
    /* a config written before 4.31 also stores embeddings.position_ids */
    uint64_t old = exact_count("{\"model_type\": \"nystromformer\", \"architectures\": "
                         "[\"NystromformerForMaskedLM\"], \"transformers_version\": "
                         "\"4.16.0.dev0\"}");
    assert_int_equal(old - n, 510);
    /* YOSO without conv_window, and with one; MRA's classification head */
    const uint64_t W = 50265;
    const uint64_t yemb = W * h + 4098 * h + 1 * h + 2 * h;
    uint64_t y = exact_count("{\"model_type\": \"yoso\", \"architectures\": [\"YosoModel\"]}");
    assert_int_equal(y, yemb + 12 * layer);
    uint64_t yc = exact_count("{\"model_type\": \"yoso\", \"architectures\": [\"YosoModel\"], "
                        "\"conv_window\": 9}");
    assert_int_equal(yc - y, 12 * 12 * 9);
    assert_int_equal(exact_count("{\"model_type\": \"mra\", \"architectures\": "
                           "[\"MraForSequenceClassification\"], \"num_labels\": 3}"),
                     W * h + 514 * h + h + 2 * h + 12 * layer + (h * h + h) + (h * 3 + 3));
}

/* The uw-madison/nystromformer-512 config.json as a PaddlePaddle port keeps it
 * (tests/fixtures/models/uw-madison--nystromformer-512): without architectures and
 * transformers_version it reads as NystromformerModel storing no position_ids buffer. */
static void read_landmark_should_count_the_released_nystromformer_config(void **state)
{
    (void)state;
    const uint64_t h = 768, f = 3072, V = 30000;
    const uint64_t layer = 4 * (h * h + h) + 2 * h + (h * f + f) + (f * h + h) + 2 * h;
    struct fg_model *m = load("tests/fixtures/models/uw-madison--nystromformer-512");
    assert_string_equal(m->model_type, "nystromformer");
    assert_false(m->generic);
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    assert_int_equal(m->params_total,
                     V * h + 512 * h + 2 * h + 2 * h + 12 * (layer + 12 * 65));
    assert_int_equal(m->params_total, 108500112);
    fg_model_free(m);
}

/* google/reformer-crime-and-punishment shapes: hidden 256, 2 heads of 64, axial positions
 * 512 x 1024 of 64 + 192, local / LSH layers, feed-forward 512, vocab 320. */
static void read_reformer_should_count_axial_positions_and_shared_query_keys(void **state)
{
    (void)state;
    const uint64_t h = 256, q = 128, f = 512, V = 320;
    const uint64_t local = 2 * h + 3 * h * q + q * h + 2 * h + (h * f + f) + (f * h + h);
    const uint64_t lsh = 2 * h + 2 * h * q + q * h + 2 * h + (h * f + f) + (f * h + h);
    const char *cfg = "{\"model_type\": \"reformer\", \"architectures\": "
                      "[\"ReformerModelWithLMHead\"], \"hidden_size\": 256, "
                      "\"num_attention_heads\": 2, \"attention_head_size\": 64, "
                      "\"attn_layers\": [\"local\", \"lsh\", \"local\", \"lsh\", \"local\", "
                      "\"lsh\"], \"axial_pos_embds\": true, \"axial_pos_shape\": [512, 1024], "
                      "\"axial_pos_embds_dim\": [64, 192], \"feed_forward_size\": 512, "
                      "\"vocab_size\": 320, \"max_position_embeddings\": 524288, "
                      "\"transformers_version\": \"4.40.0\"}";
    assert_int_equal(exact_count(cfg), V * h + (512 * 64 + 1024 * 192) + 3 * (local + lsh) +
                                     2 * 2 * h + (2 * h * V + V));
    /* all-LSH attn_layers: every one of num_hidden_layers layers is LSH; the heads are
     * ReformerConfig's default 12 of 64 */
    const uint64_t q12 = 12 * 64;
    const uint64_t lsh12 = 2 * h + 2 * h * q12 + q12 * h + 2 * h + (h * f + f) + (f * h + h);
    uint64_t two = exact_count("{\"model_type\": \"reformer\", \"attn_layers\": [\"lsh\"], "
                         "\"architectures\": [\"ReformerModelWithLMHead\"], "
                         "\"num_hidden_layers\": 2, \"transformers_version\": \"4.40.0\", "
                         "\"axial_pos_shape\": [512, 1024]}");
    assert_int_equal(two, V * h + (512 * 64 + 1024 * 192) + 2 * lsh12 + 2 * 2 * h + (2 * h * V + V));
    refused("{\"model_type\": \"reformer\", \"attn_layers\": [\"lsh\", \"local\"], "
            "\"num_hidden_layers\": 3}", FG_E_RANGE, "num_hidden_layers");
    refused("{\"model_type\": \"reformer\", \"attn_layers\": [\"local\", \"full\"]}",
            FG_E_RANGE, "attn_layers[1]");
    refused("{\"model_type\": \"reformer\", \"axial_pos_embds_dim\": [64, 64]}", FG_E_RANGE,
            "axial_pos_embds_dim");
    refused("{\"model_type\": \"reformer\", \"tie_word_embeddings\": true}", FG_E_UNSUPPORTED,
            "tie_word_embeddings");
}

/* deepmind/language-perceiver shapes: 256 latents of 1280, 26 self-attention layers with qk
 * 256 and v 1280, byte vocabulary 262 at d_model 768, 2048 positions. */
static void read_perceiver_should_count_latents_cross_layers_and_the_decoder(void **state)
{
    (void)state;
    const uint64_t L = 1280, D = 768;
    const uint64_t enc = 2 * L + 2 * D + (L * 256 + 256) + (D * 256 + 256) + (D * L + L) +
                         (L * L + L) + 2 * L + 2 * (L * L + L);
    const uint64_t self = 2 * (L * 256 + 256) + 2 * (L * L + L) + 2 * L + 2 * L +
                          2 * (L * L + L);
    const uint64_t dec = 2 * D + 2 * L + (D * 256 + 256) + (L * 256 + 256) + (L * D + D) +
                         (D * D + D) + 2 * D + 2 * (D * D + D);
    uint64_t n = exact_count("{\"model_type\": \"perceiver\", \"architectures\": "
                       "[\"PerceiverForMaskedLM\"], \"d_latents\": 1280, \"d_model\": 768, "
                       "\"num_latents\": 256, \"num_blocks\": 1, "
                       "\"num_self_attends_per_block\": 26, \"num_self_attention_heads\": 8, "
                       "\"num_cross_attention_heads\": 8, \"qk_channels\": 256, "
                       "\"v_channels\": 1280, \"vocab_size\": 262, "
                       "\"max_position_embeddings\": 2048, "
                       "\"cross_attention_shape_for_attention\": \"kv\"}");
    assert_int_equal(n, 262 * D + 2048 * D + 256 * L + enc + 26 * self + 2048 * D + dec + 262);
    struct fg_model *m = built("{\"model_type\": \"perceiver\", \"architectures\": "
                               "[\"PerceiverForImageClassificationLearned\"]}");
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    fg_model_free(m);
    m = built("{\"model_type\": \"perceiver\", \"num_blocks\": 8}");
    assert_string_equal(m->unsure_key, "num_blocks");
    fg_model_free(m);
}

/* Every enc2 reader: a shape key it never reads makes the count unsure; tie_word_embeddings
 * on a class without an LM head leaves it exact. */
static void enc2_readers_should_doubt_shape_keys_they_do_not_read(void **state)
{
    (void)state;
    static const char *const types[] = {"xlnet", "xlm", "flaubert", "funnel", "mobilebert",
                                        "tapas", "luke", "fnet", "squeezebert", "wav2vec2",
                                        "nystromformer", "yoso", "mra", "reformer",
                                        "perceiver"};
    char json[160];
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        snprintf(json, sizeof json, "{\"model_type\": \"%s\", \"num_experts\": 8, "
                 "\"transformers_version\": \"4.50.0\"}", types[i]);
        struct fg_model *m = built(json);
        if (m->certainty != FG_CERT_UNSURE)
            print_message("%s: still exact with num_experts\n", types[i]);
        assert_int_equal(m->certainty, FG_CERT_UNSURE);
        assert_string_equal(m->unsure_key, "num_experts");
        fg_model_free(m);
        if (!strcmp(types[i], "reformer")) /* its head cannot be tied: refused */
            continue;
        snprintf(json, sizeof json, "{\"model_type\": \"%s\", \"tie_word_embeddings\": true, "
                 "\"transformers_version\": \"4.50.0\"}", types[i]);
        (void)exact_count(json);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(read_xlnet_should_count_relative_attention_and_the_tied_head_bias),
        cmocka_unit_test(read_xlm_should_count_positions_languages_and_the_prediction_bias),
        cmocka_unit_test(read_funnel_should_count_blocks_and_the_decoder_of_the_full_model),
        cmocka_unit_test(read_mobilebert_should_count_bottlenecks_and_stacked_feed_forwards),
        cmocka_unit_test(read_tapas_should_count_every_token_type_table_and_the_cell_heads),
        cmocka_unit_test(read_luke_should_count_entity_tables_and_entity_aware_queries),
        cmocka_unit_test(read_fnet_and_squeezebert_should_count_mixing_without_attention_weights),
        cmocka_unit_test(read_wav2vec2_should_match_the_published_ctc_checkpoints),
        cmocka_unit_test(read_landmark_should_count_offset_positions_and_value_convolutions),
        cmocka_unit_test(read_landmark_should_count_the_released_nystromformer_config),
        cmocka_unit_test(read_reformer_should_count_axial_positions_and_shared_query_keys),
        cmocka_unit_test(read_perceiver_should_count_latents_cross_layers_and_the_decoder),
        cmocka_unit_test(enc2_readers_should_doubt_shape_keys_they_do_not_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
