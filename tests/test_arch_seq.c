/*
 * test_arch_seq.c - the BART-lineage encoder-decoders (engine/arch/encdec/marian_pegasus.c: marian,
 * pegasus, blenderbot, blenderbot-small, mvp, plbart) and the fairseq-style decoders
 * (engine/arch/decoder/fairseq_decoders.c: xglm, biogpt, trocr): each count written out term by term
 * from the transformers class, at the published shapes of a release.
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
#include "arch/graph.h"

/* The scalars of the nodes alone (what the modules hold once built), before the rules. */
static uint64_t nodes(const char *json)
{
    struct fg_model *m = built(json);
    uint64_t n = 0;
    for (size_t i = 0; i < m->n_nodes; i++)
        n += m->nodes[i].params;
    fg_model_free(m);
    return n;
}

/* BART-style layers: q/k/v/out_proj (bias), fc1 / fc2 (bias), LayerNorms. */
static uint64_t attn(uint64_t d) { return 4 * (d * d + d); }
static uint64_t ffn(uint64_t d, uint64_t f) { return (d * f + f) + (f * d + d); }
static uint64_t enc_layer(uint64_t d, uint64_t f) { return attn(d) + ffn(d, f) + 2 * 2 * d; }
static uint64_t dec_layer(uint64_t d, uint64_t f) { return enc_layer(d, f) + attn(d) + 2 * d; }

#define OPUS_EN_DE                                                                          \
    "\"model_type\": \"marian\", \"vocab_size\": 58101, \"decoder_vocab_size\": 58101, "   \
    "\"d_model\": 512, \"encoder_layers\": 6, \"decoder_layers\": 6, "                      \
    "\"encoder_attention_heads\": 8, \"decoder_attention_heads\": 8, "                      \
    "\"encoder_ffn_dim\": 2048, \"decoder_ffn_dim\": 2048, \"max_position_embeddings\": 512, " \
    "\"share_encoder_decoder_embeddings\": true, \"scale_embedding\": true"

/* Helsinki-NLP/opus-mt-en-de: one shared 58101 x 512 embedding, two frozen 512 x 512
 * sinusoid tables, 6 + 6 post-norm layers, final_logits_bias; tied lm_head. */
static void read_marian_should_count_opus_mt_and_leave_out_unsaved_positions(void **state)
{
    (void)state;
    const uint64_t d = 512, f = 2048, V = 58101, P = 512;
    const char *cfg = "{" OPUS_EN_DE ", \"architectures\": [\"MarianMTModel\"], "
                      "\"transformers_version\": \"4.22.0.dev0\"}";
    const uint64_t modules = V * d + 2 * P * d + 6 * enc_layer(d, f) + 6 * dec_layer(d, f);
    /* sum(p.numel() for p in model.parameters()) of MarianMTModel.from_pretrained(
     * "Helsinki-NLP/opus-mt-en-de"): 74,410,496, printed by two unrelated projects
     * (tests/fixtures/PROVENANCE.md); final_logits_bias is a buffer, not a parameter */
    assert_int_equal(modules, 74410496ull);
    assert_int_equal(nodes(cfg), modules + V);
    /* the file MarianMTModel writes: without the two tables (_keys_to_ignore_on_save) */
    assert_int_equal(exact_count(cfg), modules + V - 2 * P * d);
    struct fg_model *m = built(cfg);
    assert_true(m->enc_dec);
    assert_true(m->tied);
    assert_int_equal(m->layers, 6);
    /* the trainable part, without final_logits_bias and the frozen tables (buffers to the
     * estimate): 73,886,208, the count another project's table gives, whose 284.075 MB model
     * size is 4 B x (modules + final_logits_bias) */
    assert_int_equal(m->params_total - m->params_buffers, 73886208ull);
    fg_model_free(m);
    /* the 2020 conversions (no transformers_version) store the tables; a 3.x config is
     * unsure */
    assert_int_equal(exact_count("{" OPUS_EN_DE ", \"architectures\": [\"MarianMTModel\"]}"),
                     modules + V);
    m = built("{" OPUS_EN_DE ", \"architectures\": [\"MarianMTModel\"], "
              "\"transformers_version\": \"3.5.1\"}");
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    fg_model_free(m);
    /* separate vocabularies: the encoder's own embedding of vocab_size rows, the decoder's
     * (and lm_head, final_logits_bias) of decoder_vocab_size */
    const uint64_t Vd = 32000;
    assert_int_equal(exact_count("{\"model_type\": \"marian\", \"vocab_size\": 58101, "
                           "\"decoder_vocab_size\": 32000, \"d_model\": 512, "
                           "\"encoder_layers\": 6, \"decoder_layers\": 6, "
                           "\"encoder_attention_heads\": 8, \"decoder_attention_heads\": 8, "
                           "\"encoder_ffn_dim\": 2048, \"decoder_ffn_dim\": 2048, "
                           "\"max_position_embeddings\": 512, "
                           "\"share_encoder_decoder_embeddings\": false, "
                           "\"architectures\": [\"MarianMTModel\"], "
                           "\"transformers_version\": \"4.22.0\"}"),
                     V * d + Vd * d + 6 * enc_layer(d, f) + 6 * dec_layer(d, f) + Vd);
    /* sharing one embedding needs one vocabulary */
    struct fg_err err = {0};
    assert_int_equal(build("{\"model_type\": \"marian\", \"vocab_size\": 100, "
                           "\"decoder_vocab_size\": 50}", &m, &err), FG_E_RANGE);
    assert_non_null(strstr(err.detail, "decoder_vocab_size"));
    /* MarianForCausalLM: the decoder alone, its cross-attention stored, the table kept */
    assert_int_equal(exact_count("{" OPUS_EN_DE ", \"architectures\": [\"MarianForCausalLM\"]}"),
                     V * d + P * d + 6 * dec_layer(d, f));
}

/* google/pegasus-xsum: 96103 x 1024 shared, frozen sinusoids stored, 16 + 16 pre-norm
 * layers, the stacks' layer_norm, final_logits_bias. */
static void read_pegasus_should_count_xsum_with_its_stored_sinusoids(void **state)
{
    (void)state;
    const uint64_t d = 1024, f = 4096, V = 96103, P = 512;
    const char *cfg = "{\"model_type\": \"pegasus\", \"vocab_size\": 96103, \"d_model\": 1024, "
                      "\"encoder_layers\": 16, \"decoder_layers\": 16, "
                      "\"encoder_attention_heads\": 16, \"decoder_attention_heads\": 16, "
                      "\"encoder_ffn_dim\": 4096, \"decoder_ffn_dim\": 4096, "
                      "\"max_position_embeddings\": 512, "
                      "\"architectures\": [\"PegasusForConditionalGeneration\"]}";
    assert_int_equal(exact_count(cfg), V * d + 2 * P * d + 16 * enc_layer(d, f) +
                                     16 * dec_layer(d, f) + 2 * 2 * d + V);
    assert_int_equal(exact_count(cfg), 569844583ull);
    /* the base PegasusModel: no head, no final_logits_bias */
    assert_int_equal(exact_count("{\"model_type\": \"pegasus\", \"vocab_size\": 96103, "
                           "\"d_model\": 1024, \"encoder_layers\": 16, \"decoder_layers\": 16, "
                           "\"max_position_embeddings\": 512}"),
                     V * d + 2 * P * d + 16 * enc_layer(d, f) + 16 * dec_layer(d, f) + 4 * d);
}

/* facebook/blenderbot-400M-distill: 2 encoder and 12 decoder layers of 1280 / 5120, 128
 * learned positions without an offset; blenderbot_small-90M: layernorm_embedding, no
 * stack norm. */
static void read_blenderbot_should_count_400m_distill_and_small_90m(void **state)
{
    (void)state;
    const uint64_t d = 1280, f = 5120, V = 8008, P = 128;
    assert_int_equal(exact_count("{\"model_type\": \"blenderbot\", \"vocab_size\": 8008, "
                           "\"d_model\": 1280, \"encoder_layers\": 2, \"decoder_layers\": 12, "
                           "\"encoder_attention_heads\": 32, \"decoder_attention_heads\": 32, "
                           "\"encoder_ffn_dim\": 5120, \"decoder_ffn_dim\": 5120, "
                           "\"max_position_embeddings\": 128, "
                           "\"architectures\": [\"BlenderbotForConditionalGeneration\"]}"),
                     V * d + 2 * P * d + 2 * enc_layer(d, f) + 12 * dec_layer(d, f) +
                         2 * 2 * d + V);
    const uint64_t s = 512, sf = 2048, sV = 54944;
    /* without final_logits_bias: 87,508,992, ParlAI's "Total parameters" for the same
     * weights and a GitHub table's count for facebook/blenderbot_small-90M
     * (tests/fixtures/PROVENANCE.md) */
    assert_int_equal(sV * s + 2 * 512 * s + 2 * 2 * s + 8 * enc_layer(s, sf) +
                         8 * dec_layer(s, sf), 87508992ull);
    assert_int_equal(exact_count("{\"model_type\": \"blenderbot-small\", \"vocab_size\": 54944, "
                           "\"d_model\": 512, \"encoder_layers\": 8, \"decoder_layers\": 8, "
                           "\"encoder_attention_heads\": 16, \"decoder_attention_heads\": 16, "
                           "\"encoder_ffn_dim\": 2048, \"decoder_ffn_dim\": 2048, "
                           "\"max_position_embeddings\": 512, \"architectures\": "
                           "[\"BlenderbotSmallForConditionalGeneration\"]}"),
                     sV * s + 2 * 512 * s + 2 * 2 * s + 8 * enc_layer(s, sf) +
                         8 * dec_layer(s, sf) + sV);
    /* BlenderbotForCausalLM: the decoder with its layer_norm, lm_head tied */
    assert_int_equal(exact_count("{\"model_type\": \"blenderbot\", \"vocab_size\": 8008, "
                           "\"d_model\": 1280, \"decoder_layers\": 12, "
                           "\"decoder_attention_heads\": 32, \"decoder_ffn_dim\": 5120, "
                           "\"max_position_embeddings\": 128, "
                           "\"architectures\": [\"BlenderbotForCausalLM\"]}"),
                     V * d + P * d + 12 * dec_layer(d, f) + 2 * d);
}

/* RUCAIBox/mvp (BART-large shapes, offset positions, layernorm_embedding), and its
 * prompts: MvpPrompt = prompt_length x d embedding + d -> mid -> layers x 2 x d MLP. */
static void read_mvp_should_count_bart_large_shapes_and_the_prompts(void **state)
{
    (void)state;
    const uint64_t d = 1024, f = 4096, V = 50267, P = 1024 + 2;
    const uint64_t base = V * d + 2 * (P * d + 2 * d) + 12 * enc_layer(d, f) +
                          12 * dec_layer(d, f) + V;
    assert_int_equal(exact_count("{\"model_type\": \"mvp\", \"vocab_size\": 50267, "
                           "\"architectures\": [\"MvpForConditionalGeneration\"], "
                           "\"use_prompt\": false}"), base);
    const uint64_t len = 100, mid = 800;
    const uint64_t prompt = len * d + (d * mid + mid) + (mid * 12 * 2 * d + 12 * 2 * d);
    assert_int_equal(exact_count("{\"model_type\": \"mvp\", \"vocab_size\": 50267, "
                           "\"architectures\": [\"MvpForConditionalGeneration\"], "
                           "\"use_prompt\": true, \"prompt_length\": 100, "
                           "\"prompt_mid_dim\": 800}"), base + 3 * prompt);
    /* MvpForCausalLM's decoder is built without prompts whatever use_prompt says */
    assert_int_equal(exact_count("{\"model_type\": \"mvp\", \"vocab_size\": 50267, "
                           "\"use_prompt\": true, \"architectures\": [\"MvpForCausalLM\"]}"),
                     V * d + P * d + 2 * d + 12 * dec_layer(d, f));
}

/* uclanlp/plbart-base: BART-base shapes, vocab 50005. */
static void read_plbart_should_count_base_like_bart(void **state)
{
    (void)state;
    const uint64_t d = 768, f = 3072, V = 50005, P = 1024 + 2;
    const uint64_t modules = V * d + 2 * (P * d + 2 * d) + 6 * enc_layer(d, f) +
                             6 * dec_layer(d, f);
    assert_int_equal(exact_count("{\"model_type\": \"plbart\", \"vocab_size\": 50005, "
                           "\"architectures\": [\"PLBartForConditionalGeneration\"]}"),
                     modules + V);
    /* 139,220,736, PLBART's size in a code-model survey table (tests/fixtures/PROVENANCE.md) */
    assert_int_equal(modules, 139220736ull);
}

/* microsoft/prophetnet-large-uncased: 12 + 12 post-norm layers of 1024 / 4096, 512 learned
 * positions per stack, 2 n-gram embeddings, the decoder's relative-position projection. */
static void read_prophetnet_should_count_the_ngram_decoder(void **state)
{
    (void)state;
    const uint64_t d = 1024, f = 4096, V = 30522;
    const uint64_t e = enc_layer(d, f), x = dec_layer(d, f) + (d * 32 * 16 + 32 * 16);
    const uint64_t enc = 512 * d + 2 * d + 12 * e, dec = 512 * d + 2 * d + 2 * d + 12 * x;
    assert_int_equal(exact_count("{\"model_type\": \"prophetnet\", \"vocab_size\": 30522, "
                           "\"hidden_size\": 1024, \"num_encoder_layers\": 12, "
                           "\"num_decoder_layers\": 12, \"ngram\": 2, \"num_buckets\": 32, "
                           "\"architectures\": [\"ProphetNetForConditionalGeneration\"]}"),
                     V * d + enc + dec);
    /* the decoder alone keeps its cross_attn stored */
    assert_int_equal(exact_count("{\"model_type\": \"prophetnet\", "
                           "\"architectures\": [\"ProphetNetForCausalLM\"]}"), V * d + dec);
}

/* microsoft/udop-large: T5-large stacks (24 + 24, 1024 / 4096 relu, 16 x 64), a 16 px patch
 * conv, 2D tables of 1024 rows in the encoder, horizontal and vertical layout biases in both
 * stacks (the 1d one tied to block 0's), a tied head. */
static uint64_t udop_large(void)
{
    const uint64_t d = 1024, f = 4096, V = 33201, H = 16;
    const uint64_t e = 2 * d + 4 * d * d + 2 * d * f, x = e + d + 4 * d * d;
    const uint64_t enc = (3 * 16 * 16 * d + d) + 2 * 1024 * d + 2 * 32 * H + 24 * e + 32 * H + d;
    const uint64_t dec = 2 * 32 * H + 24 * x + 32 * H + d;
    return V * d + enc + dec;
}

static void read_udop_should_count_the_layout_parts(void **state)
{
    (void)state;
    const uint64_t H = 16;
    assert_int_equal(exact_count("{\"model_type\": \"udop\", \"vocab_size\": 33201, "
                           "\"d_model\": 1024, \"num_layers\": 24, \"num_heads\": 16, "
                           "\"relative_bias_args\": [{\"type\": \"1d\"}, "
                           "{\"type\": \"horizontal\"}, {\"type\": \"vertical\"}], "
                           "\"feed_forward_proj\": \"relu\"}"),
                     udop_large());
    /* a prefix bucket adds two rows to that bias */
    assert_int_equal(exact_count("{\"model_type\": \"udop\", \"relative_bias_args\": "
                           "[{\"type\": \"1d\"}, {\"type\": \"horizontal\", "
                           "\"prefix_bucket\": true}, {\"type\": \"vertical\"}]}") -
                         exact_count("{\"model_type\": \"udop\"}"), 2 * 2 * H);
    struct fg_model *m;
    struct fg_err err = {0};
    assert_int_equal(build("{\"model_type\": \"udop\", \"relative_bias_args\": "
                           "[{\"type\": \"2d\"}]}", &m, &err), FG_E_RANGE);
}

/* The microsoft/udop-large config.json as released (tests/fixtures/models/microsoft--udop-large,
 * a copy without model_type): read through its architectures class as udop, the same count. */
static void read_udop_should_count_the_released_config_without_model_type(void **state)
{
    (void)state;
    struct fg_model *m = load("tests/fixtures/models/microsoft--udop-large");
    assert_string_equal(m->model_type, "udop");
    assert_false(m->generic);
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    assert_true(has_note(m, "names no model_type"));
    assert_int_equal(m->params_total, udop_large());
    assert_int_equal(m->params_total, 741653504);
    fg_model_free(m);
}

/* Salesforce/ctrl as released in 2019 (tests/fixtures/models/Salesforce--ctrl, no model_type
 * or architectures): CTRLLMHeadModel, 48 pre-norm layers of 1280 (biased Wq / Wk / Wv /
 * dense, ReLU FFN 8192 biased, two LayerNorms), the table tied to the head and its bias, a
 * final LayerNorm, sinusoidal positions not stored; the type from the folder's name, unsure
 * of it, and exact once the file names it. */
static void read_ctrl_should_count_the_released_2019_config(void **state)
{
    (void)state;
    const uint64_t h = 1280, f = 8192, V = 246534;
    const uint64_t layer = 4 * (h * h + h) + (h * f + f) + (f * h + h) + 4 * h;
    const uint64_t want = V * h + 48 * layer + 2 * h + V;
    struct fg_model *m = load("tests/fixtures/models/Salesforce--ctrl");
    assert_string_equal(m->model_type, "ctrl");
    assert_false(m->generic);
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_string_equal(m->unsure_key, "model_type");
    assert_int_equal(m->params_total, want);
    assert_int_equal(m->params_total, 1637964550);
    fg_model_free(m);
    assert_int_equal(exact_count("{\"model_type\": \"ctrl\", \"n_positions\": 50000}"), want);
}

/* google/bigbird-pegasus-large-arxiv: Pegasus-large shapes, 4096 learned positions per
 * stack, bias-free attention (use_bias false), one closing LayerNorm per stack. */
static void read_bigbird_pegasus_should_drop_the_attention_biases(void **state)
{
    (void)state;
    const uint64_t d = 1024, f = 4096, V = 96103, P = 4096;
    const uint64_t e = 4 * d * d + ffn(d, f) + 2 * 2 * d, x = e + 4 * d * d + 2 * d;
    const char *cfg = "{\"model_type\": \"bigbird_pegasus\", \"vocab_size\": 96103, "
                      "\"d_model\": 1024, \"encoder_layers\": 16, \"decoder_layers\": 16, "
                      "\"max_position_embeddings\": 4096, \"use_bias\": false, "
                      "\"attention_type\": \"block_sparse\", "
                      "\"architectures\": [\"BigBirdPegasusForConditionalGeneration\"]}";
    assert_int_equal(exact_count(cfg), V * d + 2 * P * d + 16 * e + 16 * x + 2 * 2 * d + V);
    assert_int_equal(exact_count("{\"model_type\": \"bigbird_pegasus\", \"use_bias\": true}") -
                         exact_count("{\"model_type\": \"bigbird_pegasus\"}"),
                     (16 * 4 + 16 * 8) * d);
}

/* facebook/xglm-564M: 256008 x 1024 tied, sinusoids not stored, 24 pre-norm layers. */
static void read_xglm_should_count_564m(void **state)
{
    (void)state;
    const uint64_t d = 1024, f = 4096;
    uint64_t n = exact_count("{\"model_type\": \"xglm\", \"vocab_size\": 256008, \"d_model\": 1024, "
                       "\"num_layers\": 24, \"attention_heads\": 16, \"ffn_dim\": 4096, "
                       "\"max_position_embeddings\": 2048}");
    assert_int_equal(n, 256008 * d + 24 * enc_layer(d, f) + 2 * d);
    assert_int_equal(n, 564463616ull);
    /* add_cross_attention builds encoder_attn + its norm in every layer */
    assert_int_equal(exact_count("{\"model_type\": \"xglm\", \"add_cross_attention\": true}") -
                         exact_count("{\"model_type\": \"xglm\"}"),
                     24 * (attn(d) + 2 * d));
}

/* microsoft/biogpt: 42384 x 1024 tied, 1026 learned positions, 24 layers. */
static void read_biogpt_should_count_its_offset_positions(void **state)
{
    (void)state;
    const uint64_t d = 1024, f = 4096;
    uint64_t n = exact_count("{\"model_type\": \"biogpt\", \"vocab_size\": 42384, "
                       "\"hidden_size\": 1024, \"num_hidden_layers\": 24, "
                       "\"num_attention_heads\": 16, \"intermediate_size\": 4096, "
                       "\"max_position_embeddings\": 1024}");
    assert_int_equal(n, 42384 * d + 1026 * d + 24 * enc_layer(d, f) + 2 * d);
    /* 346,763,264 and BioGPT-Large's 1,571,188,800: the parameter counts a third-party
     * project's table lists for microsoft/biogpt and microsoft/BioGPT-Large loaded from the
     * HF cache (tests/fixtures/PROVENANCE.md); "347M" / "1.5B" in the BioGPT paper */
    assert_int_equal(n, 346763264ull);
    assert_int_equal(exact_count("{\"model_type\": \"biogpt\", \"vocab_size\": 57717, "
                           "\"hidden_size\": 1600, \"num_hidden_layers\": 48, "
                           "\"num_attention_heads\": 25, \"intermediate_size\": 6400, "
                           "\"max_position_embeddings\": 2048}"),
                     1571188800ull);
}

/* The microsoft/trocr-base-handwritten decoder: d 1024, cross-attention from the 768-wide
 * BEiT encoder, layernorm_embedding, untied output_projection. */
static void read_trocr_should_size_the_cross_attention_by_the_encoder_width(void **state)
{
    (void)state;
    const uint64_t d = 1024, f = 4096, e = 768, V = 50265;
    const uint64_t cross = 2 * (d * d + d) + 2 * (e * d + d) + 2 * d;
    assert_int_equal(exact_count("{\"model_type\": \"trocr\", \"vocab_size\": 50265, "
                           "\"d_model\": 1024, \"decoder_layers\": 12, "
                           "\"decoder_attention_heads\": 16, \"decoder_ffn_dim\": 4096, "
                           "\"max_position_embeddings\": 512, "
                           "\"cross_attention_hidden_size\": 768, "
                           "\"layernorm_embedding\": true, "
                           "\"use_learned_position_embeddings\": true, "
                           "\"tie_word_embeddings\": false}"),
                     V * d + 514 * d + 2 * d + 12 * (enc_layer(d, f) + cross) + V * d);
    /* sinusoidal positions (a buffer) and no layernorm_embedding: neither is stored */
    assert_int_equal(exact_count("{\"model_type\": \"trocr\", \"use_learned_position_embeddings\": "
                           "true}") -
                         exact_count("{\"model_type\": \"trocr\", \"use_learned_position_embeddings\": "
                               "false, \"layernorm_embedding\": false}"),
                     514 * d + 2 * d);
}

/* TrOCRDecoderLayer builds encoder_attn on is_decoder, which TrOCRForCausalLM sets: the
 * add_cross_attention the microsoft/trocr-* decoder configs write true (and a false one)
 * changes no tensor and leaves the count exact. */
static void read_trocr_should_read_add_cross_attention_as_changing_nothing(void **state)
{
    (void)state;
    uint64_t plain = exact_count("{\"model_type\": \"trocr\"}");
    assert_int_equal(exact_count("{\"model_type\": \"trocr\", \"add_cross_attention\": true}"),
                     plain);
    assert_int_equal(exact_count("{\"model_type\": \"trocr\", \"add_cross_attention\": false}"),
                     plain);
}

/* openai-community/openai-gpt: 40478 x 768 tied, 512 learned positions, 12 post-norm blocks
 * of a fused c_attn; CTRL: 246534 x 1280 with a stored head bias, 48 blocks of dff 8192. */
static void read_openai_gpt_and_ctrl_should_follow_their_classes(void **state)
{
    (void)state;
    const uint64_t d = 768;
    uint64_t n = exact_count("{\"model_type\": \"openai-gpt\", \"vocab_size\": 40478, "
                       "\"n_embd\": 768, \"n_layer\": 12, \"n_head\": 12, "
                       "\"n_positions\": 512}");
    assert_int_equal(n, 40478 * d + 512 * d + 12 * enc_layer(d, 4 * d));
    /* AutoModelForCausalLM.from_pretrained("openai-community/openai-gpt"), summed: several
     * GitHub projects check their GPT-1 against it (tests/fixtures/PROVENANCE.md) */
    assert_int_equal(n, 116534784ull);
    const uint64_t D = 1280, F = 8192, V = 246534;
    assert_int_equal(exact_count("{\"model_type\": \"ctrl\", \"vocab_size\": 246534, "
                           "\"n_embd\": 1280, \"n_layer\": 48, \"n_head\": 16, "
                           "\"dff\": 8192, \"n_positions\": 256}"),
                     V * D + 48 * enc_layer(D, F) + 2 * D + V);
}

/* adept/fuyu-8b: a biased 30 x 30 x 3 -> 4096 patch projection, Persimmon's 36 layers of
 * fused biased qkv with per-head q/k LayerNorms, an untied head. */
static void read_fuyu_should_count_the_patch_projection_and_persimmon(void **state)
{
    (void)state;
    const uint64_t h = 4096, f = 16384, V = 262144, hd = 64;
    const uint64_t layer = 2 * 2 * h + (h * 3 * h + 3 * h) + (h * h + h) + 2 * 2 * hd +
                           (h * f + f) + (f * h + h);
    const uint64_t want = (2700 * h + h) + V * h + 36 * layer + 2 * h + V * h;
    /* the keys in the root (FuyuConfig builds text_config from them) */
    assert_int_equal(exact_count("{\"model_type\": \"fuyu\", \"vocab_size\": 262144, "
                           "\"hidden_size\": 4096, \"intermediate_size\": 16384, "
                           "\"num_hidden_layers\": 36, \"num_attention_heads\": 64, "
                           "\"patch_size\": 30, \"num_channels\": 3, \"qk_layernorm\": true, "
                           "\"tie_word_embeddings\": false}"), want);
    /* or in text_config */
    assert_int_equal(exact_count("{\"model_type\": \"fuyu\", \"text_config\": "
                           "{\"model_type\": \"persimmon\", \"qk_layernorm\": false}}"),
                     want - 36 * 2 * 2 * hd);
    struct fg_model *m;
    struct fg_err err = {0};
    assert_int_equal(build("{\"model_type\": \"fuyu\", \"text_config\": "
                           "{\"model_type\": \"llama\"}}", &m, &err), FG_E_UNSUPPORTED);
    assert_non_null(strstr(err.detail, "text_config.model_type"));
}

/* microsoft/git-base: CLIP ViT-B/16 at 224 (197 tokens), a 768 -> 768 projection +
 * LayerNorm, 6 BERT layers over 30522 x 768 with 1024 positions, an untied biased head. */
static void read_git_should_count_git_base(void **state)
{
    (void)state;
    const uint64_t h = 768, f = 3072, V = 30522;
    const uint64_t layer = attn(h) + ffn(h, f) + 2 * 2 * h;
    const uint64_t vision = h + 3 * 16 * 16 * h + 197 * h + 2 * h + 12 * layer + 2 * h;
    const uint64_t proj = h * h + h + 2 * h;
    const uint64_t text = V * h + 1024 * h + 2 * h + 6 * layer + (V * h + V);
    uint64_t n = exact_count("{\"model_type\": \"git\", \"vocab_size\": 30522, "
                       "\"hidden_size\": 768, \"num_hidden_layers\": 6, "
                       "\"num_attention_heads\": 12, \"intermediate_size\": 3072, "
                       "\"max_position_embeddings\": 1024, \"tie_word_embeddings\": false, "
                       "\"vision_config\": {\"hidden_size\": 768, \"intermediate_size\": 3072, "
                       "\"num_hidden_layers\": 12, \"num_attention_heads\": 12, "
                       "\"image_size\": 224, \"patch_size\": 16}}");
    assert_int_equal(n, vision + proj + text);
    /* the parameter count a GitHub project prints for microsoft/git-base
     * (tests/fixtures/PROVENANCE.md) */
    assert_int_equal(n, 176619066ull);
    /* video checkpoints: one temporal embedding per frame; relative positions per layer */
    assert_int_equal(exact_count("{\"model_type\": \"git\", \"num_image_with_embedding\": 6}") -
                         exact_count("{\"model_type\": \"git\"}"), 6 * h);
    assert_int_equal(exact_count("{\"model_type\": \"git\", "
                           "\"position_embedding_type\": \"relative_key\"}") -
                         exact_count("{\"model_type\": \"git\"}"), 6 * (2 * 1024 - 1) * 64);
}

/* google/pix2struct-base: 12 + 12 T5 blocks of 768 / 2048 (gated, bias-free, RMS norms), a
 * 768 -> 768 patch projection with row / column tables of 4096, vocab 50244, untied. */
static void read_pix2struct_should_count_base(void **state)
{
    (void)state;
    const uint64_t h = 768, f = 2048, V = 50244;
    const uint64_t attn4 = 4 * h * h, mlp = 3 * h * f;
    const uint64_t vision = (h * h + h + 2 * 4096 * h) + 12 * (attn4 + mlp + 2 * h) + h;
    const uint64_t text = V * h + 12 * (2 * attn4 + mlp + 3 * h) + 32 * 12 + h + V * h;
    const char *cfg = "{\"model_type\": \"pix2struct\", \"tie_word_embeddings\": false, "
                      "\"text_config\": {\"vocab_size\": 50244, \"hidden_size\": 768, "
                      "\"num_layers\": 12, \"num_heads\": 12, \"d_kv\": 64, \"d_ff\": 2048, "
                      "\"tie_word_embeddings\": false}, "
                      "\"vision_config\": {\"hidden_size\": 768, \"num_hidden_layers\": 12, "
                      "\"num_attention_heads\": 12, \"d_kv\": 64, \"d_ff\": 2048, "
                      "\"seq_len\": 4096, \"patch_embed_hidden_size\": 768}}";
    assert_int_equal(exact_count(cfg), vision + text);
    struct fg_model *m = built(cfg);
    assert_true(m->enc_dec);
    fg_model_free(m);
    /* the root and text_config disagreeing on the head leaves it open */
    m = built("{\"model_type\": \"pix2struct\", \"tie_word_embeddings\": true, "
              "\"text_config\": {\"tie_word_embeddings\": false}}");
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    fg_model_free(m);
}

/* google/pix2struct-docvqa-base writes tie_word_embeddings true into vision_config (a save
 * writes it into every sub-config): Pix2StructVisionModel has no output embeddings, so it
 * sizes nothing and the count stays exact. */
static void read_pix2struct_should_size_nothing_for_the_vision_tie_flag(void **state)
{
    (void)state;
    const char *text = "\"text_config\": {\"tie_word_embeddings\": false}";
    char plain[256], tied[256];
    snprintf(plain, sizeof plain, "{\"model_type\": \"pix2struct\", %s}", text);
    snprintf(tied, sizeof tied, "{\"model_type\": \"pix2struct\", %s, \"vision_config\": "
             "{\"tie_word_embeddings\": true}}", text);
    assert_int_equal(exact_count(tied), exact_count(plain));
}

/* stepfun-ai/GOT-OCR-2.0-hf: SAM ViT-B at 1024 (64 x 64 patches, 14-token windows, global
 * layers 2, 5, 8, 11), a 256-channel neck, two strided convs to 1024 and a linear, Qwen2
 * (24 x 1024, vocab 151860, tied). */
static void read_got_ocr2_should_count_the_sam_tower_projector_and_qwen2(void **state)
{
    (void)state;
    const uint64_t h = 768, o = 256, t = 1024;
    const uint64_t vlayer = 2 * 2 * h + (h * 3 * h + 3 * h) + (h * h + h) + ffn(h, 3072);
    const uint64_t vision = (3 * 16 * 16 * h + h) + 64 * 64 * h + 12 * vlayer +
                            8 * 2 * 27 * 64 + 4 * 2 * 127 * 64 + (h * o + 2 * o + o * o * 9 + 2 * o);
    const uint64_t proj = o * 2 * o * 9 + 2 * o * t * 9 + t * t + t;
    const uint64_t tlayer = 3 * (t * t + t) + t * t + 3 * t * 2816 + 2 * t;
    const uint64_t text = 151860 * t + 24 * tlayer + t;
    const char *cfg = "{\"model_type\": \"got_ocr2\", \"vision_config\": {\"hidden_size\": 768, "
                      "\"num_hidden_layers\": 12, \"num_attention_heads\": 12, "
                      "\"image_size\": 1024, \"patch_size\": 16, \"window_size\": 14, "
                      "\"global_attn_indexes\": [2, 5, 8, 11], \"mlp_dim\": 3072, "
                      "\"output_channels\": 256}, \"text_config\": {\"model_type\": \"qwen2\", "
                      "\"vocab_size\": 151860, \"hidden_size\": 1024, "
                      "\"intermediate_size\": 2816, \"num_hidden_layers\": 24, "
                      "\"num_attention_heads\": 16, \"num_key_value_heads\": 16, "
                      "\"tie_word_embeddings\": true}}";
    uint64_t n = exact_count(cfg);
    assert_int_equal(n, vision + proj + text);
    /* "all params: 560528640" of GOT-OCR2.0 in PaddleMIX's training script, whose stage-3
     * line leaves the SAM tower and the two convs frozen: 560,528,640 - 464,959,488 =
     * 95,569,152 = vision + the convs (tests/fixtures/PROVENANCE.md) */
    assert_int_equal(n, 560528640ull);
    assert_int_equal(vision + o * 2 * o * 9 + 2 * o * t * 9, 560528640ull - 464959488ull);
    /* without text_config: GotOcr2Config's own Qwen2 */
    assert_int_equal(exact_count("{\"model_type\": \"got_ocr2\"}"), n);
    struct fg_model *m;
    struct fg_err err = {0};
    assert_int_equal(build("{\"model_type\": \"got_ocr2\", \"vision_config\": "
                           "{\"global_attn_indexes\": [12]}}", &m, &err), FG_E_RANGE);
    assert_non_null(strstr(err.detail, "global_attn_indexes"));
}

/* google/bert_for_seq_generation_L-24_bbc: BERT-large layers over 50358 x 1024; the decoder
 * keeps a head bias of its own, the encoder has no head. */
static void read_bert_generation_should_tell_the_decoder_from_the_encoder(void **state)
{
    (void)state;
    const uint64_t h = 1024, f = 4096, V = 50358;
    const uint64_t enc = V * h + 512 * h + 2 * h + 24 * enc_layer(h, f);
    struct fg_model *m = built("{\"model_type\": \"bert-generation\", "
                               "\"architectures\": [\"BertGenerationEncoder\"]}");
    assert_int_equal(m->params_total, enc);
    assert_true(m->encoder_only);
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    fg_model_free(m);
    assert_int_equal(exact_count("{\"model_type\": \"bert-generation\", "
                           "\"architectures\": [\"BertGenerationDecoder\"]}"), enc + V);
    /* add_cross_attention: a crossattention + LayerNorm per layer, stored */
    assert_int_equal(exact_count("{\"model_type\": \"bert-generation\", \"is_decoder\": true, "
                           "\"add_cross_attention\": true}"),
                     enc + V + 24 * (attn(h) + 2 * h));
    struct fg_err err = {0};
    assert_int_equal(build("{\"model_type\": \"bert-generation\", "
                           "\"position_embedding_type\": \"relative_key\"}", &m, &err),
                     FG_E_UNSUPPORTED);
}

/* abeja/gpt-neox-japanese-2.7b: 32 bias-free layers of 2560 with a 4x MLP; the last
 * layer's attention alone keeps dense_bias; tied embed_out (the class default). */
static void read_gpt_neox_japanese_should_bias_only_the_last_attention(void **state)
{
    (void)state;
    const uint64_t h = 2560;
    const uint64_t layer = 2 * 2 * h + 3 * h * h + h * h + 2 * 4 * h * h;
    uint64_t n = exact_count("{\"model_type\": \"gpt_neox_japanese\", \"vocab_size\": 32000, "
                       "\"hidden_size\": 2560, \"num_hidden_layers\": 32, "
                       "\"num_attention_heads\": 32, \"intermediate_multiple_size\": 4}");
    assert_int_equal(n, 32000 * h + 32 * layer + h + 2 * h);
    /* the same, built node by node (no block copies) */
    struct fg_config *doc = NULL;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    const char *j = "{\"model_type\": \"gpt_neox_japanese\", \"num_hidden_layers\": 3}";
    assert_int_equal(fg_config_parse(j, strlen(j), "t.json", &doc, &err), 0);
    assert_int_equal(fg__model_from_config(doc, "t", true, &m, &err), 0);
    uint64_t by_node = m->params_total;
    fg_model_free(m);
    fg_config_free(doc);
    assert_int_equal(exact_count(j), by_node);
    assert_int_equal(by_node, 32000 * h + 3 * layer + h + 2 * h);
    assert_int_equal(exact_count("{\"model_type\": \"gpt_neox_japanese\", \"num_hidden_layers\": 1}"),
                     32000 * h + layer + h + 2 * h);
}

/* openbmb/cpm-ant-10b: 48 bias-free pre-norm blocks of 4096 (32 x 128 heads, gated 10240),
 * an input embedding extended by 32 x 32 prompt rows, one segment position bias, and a head
 * of vocab_size rows stored on its own. */
static void read_cpmant_should_count_the_prompt_rows_and_an_own_head(void **state)
{
    (void)state;
    const uint64_t h = 4096, f = 10240, V = 30720;
    const uint64_t layer = 2 * h + 4 * h * h + 3 * h * f;
    assert_int_equal(exact_count("{\"model_type\": \"cpmant\", \"vocab_size\": 30720, "
                           "\"hidden_size\": 4096, \"num_hidden_layers\": 48, "
                           "\"num_attention_heads\": 32, \"dim_head\": 128, \"dim_ff\": 10240, "
                           "\"prompt_types\": 32, \"prompt_length\": 32, \"segment_types\": 32, "
                           "\"position_bias_num_buckets\": 512}"),
                     (V + 32 * 32) * h + 32 * h + (32 * 32 + 512) * 32 + 48 * layer + h + V * h);
}

#define FLORENCE_TEXT(d, L, h, f)                                                            \
    "\"text_config\": {\"model_type\": \"bart\", \"vocab_size\": 51289, \"d_model\": " #d ", "    \
    "\"encoder_layers\": " #L ", \"decoder_layers\": " #L ", \"encoder_attention_heads\": " #h ", " \
    "\"decoder_attention_heads\": " #h ", \"encoder_ffn_dim\": " #f ", \"decoder_ffn_dim\": " #f ", " \
    "\"max_position_embeddings\": 1024}"

/* Florence-2-base (DaViT 128..1024, BART-base text) and Florence-2-large-ft (DaViT 256..2048,
 * BART-large text): every stage term by term, and the parameter counts projects publish. */
static void read_florence2_should_count_davit_the_projector_and_bart(void **state)
{
    (void)state;
    static const uint64_t dim[4] = {128, 256, 512, 1024}, depth[4] = {1, 1, 9, 1};
    static const uint64_t patch[4] = {7, 3, 3, 3}, pre[4] = {0, 1, 1, 1};
    uint64_t vision = 0;
    for (int s = 0; s < 4; s++) {
        const uint64_t C = dim[s], in = s ? dim[s - 1] : 3;
        vision += in * C * patch[s] * patch[s] + C + 2 * (pre[s] ? in : C);
        vision += 2 * depth[s] * ((C * 3 * C + 3 * C) + (C * C + C) + ffn(C, 4 * C) +
                                  2 * (9 * C + C) + 2 * 2 * C);
    }
    const uint64_t proj = 1024 * 768 + 2 * 768 + 50 * 1024, temporal = 100 * 1024;
    const uint64_t d = 768, V = 51289;
    const uint64_t bart = V * d + 2 * (1026 * d + 2 * d) + 6 * enc_layer(d, 3072) +
                          6 * dec_layer(d, 3072);
    const char *base = "{\"model_type\": \"florence2\", " FLORENCE_TEXT(768, 6, 12, 3072) ", "
                       "\"vision_config\": {\"projection_dim\": 768}}";
    struct fg_model *m = built(base);
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    assert_int_equal(m->params_total, vision + proj + temporal + bart);
    /* sum(p.numel() for p in model.parameters()) of Florence-2-base and -base-ft, printed by
     * several projects (tests/fixtures/PROVENANCE.md): the modules without the stored
     * pos_idx_to_embed buffer */
    assert_int_equal(m->params_total - m->params_buffers, 231414016ull);
    fg_model_free(m);
    m = built("{\"model_type\": \"florence2\", " FLORENCE_TEXT(1024, 12, 16, 4096) ", "
              "\"vision_config\": {\"embed_dim\": [256, 512, 1024, 2048], "
              "\"num_heads\": [8, 16, 32, 64], \"num_groups\": [8, 16, 32, 64], "
              "\"projection_dim\": 1024}}");
    assert_int_equal(m->params_total - m->params_buffers, 770173952ull); /* Florence-2-large-ft */
    fg_model_free(m);
    struct fg_err err = {0};
    assert_int_equal(build("{\"model_type\": \"florence2\", \"text_config\": "
                           "{\"model_type\": \"florence2_language\"}}", &m, &err),
                     FG_E_UNSUPPORTED);
    assert_non_null(strstr(err.detail, "remote-code"));
    assert_int_equal(build("{\"model_type\": \"florence2\", \"vision_config\": "
                           "{\"depths\": [1, 1, 9]}}", &m, &err), FG_E_RANGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(read_marian_should_count_opus_mt_and_leave_out_unsaved_positions),
        cmocka_unit_test(read_pegasus_should_count_xsum_with_its_stored_sinusoids),
        cmocka_unit_test(read_blenderbot_should_count_400m_distill_and_small_90m),
        cmocka_unit_test(read_mvp_should_count_bart_large_shapes_and_the_prompts),
        cmocka_unit_test(read_plbart_should_count_base_like_bart),
        cmocka_unit_test(read_prophetnet_should_count_the_ngram_decoder),
        cmocka_unit_test(read_udop_should_count_the_layout_parts),
        cmocka_unit_test(read_udop_should_count_the_released_config_without_model_type),
        cmocka_unit_test(read_ctrl_should_count_the_released_2019_config),
        cmocka_unit_test(read_bigbird_pegasus_should_drop_the_attention_biases),
        cmocka_unit_test(read_xglm_should_count_564m),
        cmocka_unit_test(read_biogpt_should_count_its_offset_positions),
        cmocka_unit_test(read_trocr_should_size_the_cross_attention_by_the_encoder_width),
        cmocka_unit_test(read_trocr_should_read_add_cross_attention_as_changing_nothing),
        cmocka_unit_test(read_openai_gpt_and_ctrl_should_follow_their_classes),
        cmocka_unit_test(read_fuyu_should_count_the_patch_projection_and_persimmon),
        cmocka_unit_test(read_git_should_count_git_base),
        cmocka_unit_test(read_pix2struct_should_count_base),
        cmocka_unit_test(read_pix2struct_should_size_nothing_for_the_vision_tie_flag),
        cmocka_unit_test(read_got_ocr2_should_count_the_sam_tower_projector_and_qwen2),
        cmocka_unit_test(read_florence2_should_count_davit_the_projector_and_bart),
        cmocka_unit_test(read_bert_generation_should_tell_the_decoder_from_the_encoder),
        cmocka_unit_test(read_gpt_neox_japanese_should_bias_only_the_last_attention),
        cmocka_unit_test(read_cpmant_should_count_the_prompt_rows_and_an_own_head),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
