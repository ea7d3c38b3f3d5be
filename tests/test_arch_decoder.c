/*
 * test_arch_decoder.c - the table-driven decoder rows (engine/arch/decoder/llama_rows.c):
 * each family's count against the tensors its transformers class creates,
 * written out term by term, and the checkpoint-layout rules keyed on the
 * config (the rotary inv_freq buffers of Llama checkpoints written before
 * transformers 4.32).
 *
 * The configs are inline test inputs carrying the shape fields of a released
 * checkpoint where one is named; the expected counts are derived here from
 * the modeling files, not copied from the reader.
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

/* Llama-2-7b-hf shape fields; the version is spliced in. */
#define LLAMA2_7B(ver)                                                                         \
    "{\"model_type\": \"llama\", \"hidden_size\": 4096, \"intermediate_size\": 11008, "      \
    "\"num_hidden_layers\": 32, \"num_attention_heads\": 32, \"num_key_value_heads\": 32, " \
    "\"vocab_size\": 32000, \"tie_word_embeddings\": false, \"transformers_version\": \"" ver \
    "\"}"

/* LlamaForCausalLM modules: embed + lm_head 2 x 32000 x 4096, per layer q/k/v/o 4 x 4096^2,
 * gate/up/down 3 x 4096 x 11008, two RMSNorms; final norm. */
#define LLAMA2_7B_MODULES                                                                      \
    (2ull * 32000 * 4096 + 32ull * (4ull * 4096 * 4096 + 3ull * 4096 * 11008 + 2 * 4096) + 4096)

static void read_decoder_should_store_llama_inv_freq_written_before_4_32(void **state)
{
    (void)state;
    struct fg_model *m = built(LLAMA2_7B("4.31.0.dev0"));
    /* model.layers.N.self_attn.rotary_emb.inv_freq: head_dim / 2 = 64 floats a layer */
    assert_int_equal(m->params_total, LLAMA2_7B_MODULES + 32 * 64);
    assert_int_equal(m->params_total, 6738417664ull); /* the Hub's total for Llama-2-7b-hf */
    assert_int_equal(m->params_buffers, 32 * 64);
    assert_int_equal(first_of(m, FG_NODE_ATTN)->buffers, 64);
    fg_model_free(m);

    m = built(LLAMA2_7B("4.30.2"));
    assert_int_equal(m->params_buffers, 32 * 64);
    fg_model_free(m);
}

static void read_decoder_should_not_store_inv_freq_from_4_32_or_unversioned(void **state)
{
    (void)state;
    const char *const cfgs[] = {LLAMA2_7B("4.32.0.dev0"), LLAMA2_7B("4.35.0"),
                                LLAMA2_7B("not a version")};
    for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
        struct fg_model *m = built(cfgs[i]);
        assert_int_equal(m->params_total, LLAMA2_7B_MODULES);
        assert_int_equal(m->params_buffers, 0);
        fg_model_free(m);
    }
}

/* A small block shape shared by the rows below: hidden 256, 4 heads of 64 (2 kv), inter 512,
 * 2 layers, vocab 1000.  q 256x256, k/v 256x128, o 256x256. */
#define SMALL_KEYS                                                                             \
    "\"hidden_size\": 256, \"intermediate_size\": 512, \"num_hidden_layers\": 2, "            \
    "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"head_dim\": 64, "               \
    "\"vocab_size\": 1000, \"tie_word_embeddings\": false"
#define QKVO (256ull * 256 + 2 * 256ull * 128 + 256ull * 256)
#define QKV_BIAS (256ull + 2 * 128)
#define GATED_MLP (3ull * 256 * 512)
#define PLAIN_MLP (2ull * 256 * 512)
#define EMB_HEAD (2ull * 1000 * 256)

struct row {
    const char *json;
    uint64_t want;
    const char *why;
};

static const struct row rows[] = {
    {"{\"model_type\": \"granite\", " SMALL_KEYS ", \"attention_bias\": true, "
     "\"embedding_multiplier\": 12.0, \"residual_multiplier\": 0.22}",
     EMB_HEAD + 2 * (QKVO + QKV_BIAS + 256 + GATED_MLP + 2 * 256) + 256,
     "GraniteAttention: q/k/v/o biased by attention_bias; multipliers leave shapes alone"},
    {"{\"model_type\": \"ministral\", " SMALL_KEYS ", \"sliding_window\": 32}",
     EMB_HEAD + 2 * (QKVO + GATED_MLP + 2 * 256) + 256,
     "MinistralAttention drops Qwen2's q/k/v biases"},
    {"{\"model_type\": \"seed_oss\", " SMALL_KEYS ", \"attention_bias\": true, "
     "\"attention_out_bias\": false}",
     EMB_HEAD + 2 * (QKVO + QKV_BIAS + GATED_MLP + 2 * 256) + 256,
     "SeedOssAttention: q/k/v biased by attention_bias, o_proj by attention_out_bias"},
    {"{\"model_type\": \"seed_oss\", " SMALL_KEYS ", \"attention_out_bias\": true}",
     EMB_HEAD + 2 * (QKVO + QKV_BIAS + 256 + GATED_MLP + 2 * 256) + 256,
     "SeedOssConfig.attention_bias defaults to true"},
    {"{\"model_type\": \"glm\", " SMALL_KEYS "}",
     EMB_HEAD + 2 * (QKVO + QKV_BIAS + GATED_MLP + 2 * 256) + 256,
     "GlmAttention: q/k/v biased (attention_bias defaults to true), o_proj never"},
    {"{\"model_type\": \"glm4\", " SMALL_KEYS ", \"attention_bias\": true}",
     EMB_HEAD + 2 * (QKVO + QKV_BIAS + GATED_MLP + 4 * 256) + 256,
     "Glm4DecoderLayer: four RMSNorms"},
    {"{\"model_type\": \"olmo3\", " SMALL_KEYS ", \"sliding_window\": 64}",
     EMB_HEAD + 2 * (QKVO + 256 + 128 + GATED_MLP + 2 * 256) + 256,
     "Olmo3Attention: q_norm over 4 x 64, k_norm over 2 x 64"},
    {"{\"model_type\": \"exaone4\", " SMALL_KEYS ", \"sliding_window\": null}",
     EMB_HEAD + 2 * (QKVO + 2 * 64 + GATED_MLP + 2 * 256) + 256,
     "Exaone4Attention: q_norm / k_norm over head_dim; two post-norms"},
    {"{\"model_type\": \"ernie4_5\", " SMALL_KEYS ", \"use_bias\": true}",
     EMB_HEAD + 2 * (QKVO + QKV_BIAS + 256 + GATED_MLP + 2 * 512 + 256 + 2 * 256) + 256,
     "Ernie4_5: use_bias on q/k/v/o and gate/up/down"},
    {"{\"model_type\": \"hunyuan_v1_dense\", " SMALL_KEYS "}",
     EMB_HEAD + 2 * (QKVO + 2 * 64 + GATED_MLP + 2 * 256) + 256,
     "HunYuanDenseV1Attention: query_layernorm / key_layernorm over head_dim, always"},
    {"{\"model_type\": \"helium\", " SMALL_KEYS ", \"attention_bias\": true}",
     EMB_HEAD + 2 * (QKVO + QKV_BIAS + GATED_MLP + 2 * 256) + 256,
     "HeliumAttention: o_proj never biased"},
    {"{\"model_type\": \"nemotron\", " SMALL_KEYS "}",
     EMB_HEAD + 2 * (QKVO + PLAIN_MLP + 2 * 2 * 256) + 2 * 256,
     "NemotronLayerNorm1P carries a bias; relu^2 MLP has up and down only"},
    {"{\"model_type\": \"cohere2\", " SMALL_KEYS ", \"sliding_window\": 64}",
     EMB_HEAD + 2 * (QKVO + GATED_MLP + 256) + 256,
     "Cohere2: one LayerNorm without bias feeds the parallel attention and MLP"},
    {"{\"model_type\": \"arcee\", " SMALL_KEYS ", \"mlp_bias\": true}",
     EMB_HEAD + 2 * (QKVO + PLAIN_MLP + 512 + 256 + 2 * 256) + 256,
     "ArceeMLP: up_proj / down_proj, biased by mlp_bias"},
    {"{\"model_type\": \"hyperclovax\", " SMALL_KEYS "}",
     EMB_HEAD + 2 * (QKVO + GATED_MLP + 4 * 256) + 256,
     "HyperCLOVAXDecoderLayer: post-attention and post-MLP RMSNorms (use_post_norm default)"},
    {"{\"model_type\": \"hyperclovax\", " SMALL_KEYS ", \"use_post_norm\": false, "
     "\"mlp_bias\": true}",
     EMB_HEAD + 2 * (QKVO + GATED_MLP + 2 * 512 + 256 + 2 * 256) + 256,
     "HyperCLOVAXDecoderLayer: nn.Identity for the post-norms when use_post_norm is false"},
};

static void read_decoder_should_count_each_new_row_from_its_modeling_file(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct fg_model *m = built(rows[i].json);
        if (m->params_total != rows[i].want)
            print_message("row %zu (%s): got %llu want %llu\n", i, rows[i].why,
                          (unsigned long long)m->params_total, (unsigned long long)rows[i].want);
        assert_int_equal(m->params_total, rows[i].want);
        fg_model_free(m);
    }
}

static uint32_t window_of_layer(const struct fg_model *m, int32_t layer)
{
    for (size_t i = 0; i < m->n_nodes; i++)
        if (m->nodes[i].kind == FG_NODE_ATTN && m->nodes[i].layer == layer)
            return m->nodes[i].window;
    return UINT32_MAX;
}

static void read_decoder_should_slide_three_layers_in_four_for_olmo3_and_cohere2(void **state)
{
    (void)state;
    const char *const types[] = {"olmo3", "cohere2", "exaone4"};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        char json[1024];
        snprintf(json, sizeof json,
                 "{\"model_type\": \"%s\", \"hidden_size\": 256, \"intermediate_size\": 512, "
                 "\"num_hidden_layers\": 8, \"num_attention_heads\": 4, \"vocab_size\": 1000, "
                 "\"num_key_value_heads\": 4, \"sliding_window\": 128}", types[t]);
        struct fg_model *m = built(json);
        for (int32_t l = 0; l < 8; l++)
            assert_int_equal(window_of_layer(m, l), (l + 1) % 4 ? 128 : 0);
        fg_model_free(m);
    }
}

/* Qwen3 tied releases: hidden and MLP widths spliced in (28 or 36 layers as published). */
#define QWEN3_TIED(h, inter, layers, heads)                                                    \
    "{\"model_type\": \"qwen3\", \"hidden_size\": " h ", \"intermediate_size\": " inter ", "  \
    "\"num_hidden_layers\": " layers ", \"num_attention_heads\": " heads ", "                 \
    "\"num_key_value_heads\": 8, \"head_dim\": 128, \"vocab_size\": 151936, "                 \
    "\"tie_word_embeddings\": true, \"use_sliding_window\": false}"

/* Qwen3-4B's modules: q 2560 -> 4096, k/v 2560 -> 1024, o 4096 -> 2560, q/k norms 128 each,
 * MLP 3 x 2560 x 9728, two norms; the embedding, the final norm (no lm_head in its file) */
#define QWEN3_4B_LAYER                                                                         \
    (2560ull * 4096 + 2 * 2560ull * 1024 + 4096ull * 2560 + 256 + 3ull * 2560 * 9728 + 2 * 2560)
#define QWEN3_4B_MODULES (151936ull * 2560 + 36 * QWEN3_4B_LAYER + 2560)

/* config.json cannot say whether a tied Qwen3 checkpoint writes lm_head anyway (0.6B and
 * 1.7B do, 4B and Qwen3-Embedding-0.6B do not): counted written, and unsure naming why. */
static void read_decoder_should_be_unsure_whether_a_tied_qwen3_head_is_written(void **state)
{
    (void)state;
    struct fg_model *m = built(QWEN3_TIED("2560", "9728", "36", "32"));
    assert_int_equal(QWEN3_4B_MODULES, 4022468096ull); /* Qwen3-4B's Hub total */
    assert_int_equal(m->params_total, QWEN3_4B_MODULES + 151936ull * 2560);
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_string_equal(m->unsure_key, "tie_word_embeddings");
    fg_model_free(m);
    /* Qwen3-1.7B: its file writes the head, as counted */
    m = built(QWEN3_TIED("2048", "6144", "28", "16"));
    assert_int_equal(m->params_total, 2031739904ull);
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    fg_model_free(m);
}

/* An embedding checkpoint saved from the base model (architectures ["Qwen3Model"]) holds no
 * lm_head, tied or not, whatever its size. */
static void read_decoder_should_store_no_head_for_a_base_model_class(void **state)
{
    (void)state;
    static const char cfg[] =
        "{\"model_type\": \"qwen3\", \"architectures\": [\"Qwen3Model\"], "
        "\"hidden_size\": 1024, \"intermediate_size\": 3072, \"num_hidden_layers\": 28, "
        "\"num_attention_heads\": 16, \"num_key_value_heads\": 8, \"head_dim\": 128, "
        "\"vocab_size\": 151669, \"tie_word_embeddings\": true}";
    const uint64_t layer = 1024ull * 2048 + 2 * 1024ull * 1024 + 2048ull * 1024 + 256 +
                           3ull * 1024 * 3072 + 2 * 1024;
    struct fg_model *m = built(cfg);
    assert_int_equal(m->params_total, 151669ull * 1024 + 28 * layer + 1024);
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    fg_model_free(m);
}

/* HunYuanDenseV1Attention builds query_layernorm / key_layernorm whatever use_qk_norm says
 * (transformers models/hunyuan_v1_dense/modeling_hunyuan_v1_dense.py): the key read either
 * way, the count the same and exact. */
static void read_decoder_should_ignore_use_qk_norm_where_the_norms_are_unconditional(void **state)
{
    (void)state;
    static const char *const cfgs[] = {
        "{\"model_type\": \"hunyuan_v1_dense\", " SMALL_KEYS "}",
        "{\"model_type\": \"hunyuan_v1_dense\", " SMALL_KEYS ", \"use_qk_norm\": true}",
        "{\"model_type\": \"hunyuan_v1_dense\", " SMALL_KEYS ", \"use_qk_norm\": false}",
    };
    for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
        struct fg_model *m = built(cfgs[i]);
        assert_int_equal(m->params_total, EMB_HEAD + 2 * (QKVO + 2 * 64 + GATED_MLP + 2 * 256) + 256);
        assert_int_equal(m->certainty, FG_CERT_EXACT);
        fg_model_free(m);
    }
}

/* granite-swash-2b (GraniteSWAForCausalLM, modular_granite_swa.py @decba1d2ea): Granite blocks
 * of 2560 - q/o 2560 x 2560, k/v 2560 x 512 (4 KV heads of 128), sinks one per query head
 * (20), SwiGLU 3 x 2560 x 8192, two RMSNorms - 24 times, the 100352-row embedding tied to
 * the head, the final norm; layer_types slides 18 layers over 128 tokens, 6 attend fully. */
static void read_granite_swa_should_add_sinks_and_read_the_windows(void **state)
{
    (void)state;
    struct fg_model *m = load("tests/fixtures/models/ibm-granite--granite-swash-2b");
    const uint64_t h = 2560, attn = 2 * h * h + 2 * h * 4 * 128 + 20,
                   block = attn + 3 * h * 8192 + 2 * h;
    assert_int_equal(m->params_total, 100352 * h + 24 * block + h);
    assert_int_equal(m->params_total, 2144463840ull);
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    unsigned full = 0, sliding = 0;
    for (size_t i = 0; i < m->n_nodes; i++) {
        const struct fg_node *n = &m->nodes[i];
        if (n->kind != FG_NODE_ATTN)
            continue;
        if (n->window == 128)
            sliding++;
        else if (n->window == 0)
            full++;
    }
    assert_int_equal(full, 6);
    assert_int_equal(sliding, 18);
    fg_model_free(m);
}

/* Without layer_types GraniteSWAConfig.__post_init__ makes layer i % 4 == 0 the full one and
 * sliding_window defaults to 128: layers 0 and 4 attend fully, 1-3 and 5 slide. */
static void read_granite_swa_should_put_the_default_full_layer_first(void **state)
{
    (void)state;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(build("{\"model_type\": \"granite_swa\", \"hidden_size\": 256, "
                           "\"intermediate_size\": 512, \"num_hidden_layers\": 6, "
                           "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, "
                           "\"vocab_size\": 1000}",
                           &m, &err),
                     0);
    const uint32_t want[] = {0, 128, 128, 128, 0, 128};
    size_t l = 0;
    for (size_t i = 0; i < m->n_nodes; i++)
        if (m->nodes[i].kind == FG_NODE_ATTN) {
            assert_true(l < 6);
            assert_int_equal(m->nodes[i].window, want[l++]);
        }
    assert_int_equal(l, 6);
    /* q/o 256 x 256, k/v 256 x 128, 4 sinks; SwiGLU; two norms; tied head */
    const uint64_t block = 2 * 256 * 256 + 2 * 256 * 128 + 4 + 3 * 256 * 512 + 2 * 256;
    assert_int_equal(m->params_total, 1000 * 256 + 6 * block + 256);
    fg_model_free(m);
}

/* Llama-3_3-Nemotron-Super-49B-v1 (DeciLMForCausalLM, nemotron-nas): 80 layers of 8192, each
 * from its block_configs entry - 49 attention layers of 64 heads and 8 KV heads, 31 with
 * none; SwiGLU MLPs of int(2 x ffn_mult x 8192 / 3) rounded up to 256.  The release's
 * 49,867,145,216 bf16 parameters. */
static void read_decilm_should_build_each_layer_from_its_block_config(void **state)
{
    (void)state;
    struct fg_model *m = load("tests/fixtures/models/nvidia--Llama-3_3-Nemotron-Super-49B-v1");
    const uint64_t h = 8192, attn = 2 * h * h + 2 * h * 8 * 128 + h;
    /* the ffn widths and how many layers hold each (with or without attention) */
    const struct {
        uint64_t inter, with, without;
    } f[] = {{28672, 48, 1}, {14336, 1, 5}, {7168, 0, 10}, {5632, 0, 8}, {2816, 0, 6},
             {17920, 0, 1}};
    uint64_t blocks = 0;
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        blocks += (f[i].with + f[i].without) * (3 * h * f[i].inter + h) + f[i].with * attn;
    assert_int_equal(m->params_total, 2 * 128256 * h + h + blocks);
    assert_int_equal(m->params_total, 49867145216ull);
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    assert_int_equal(m->kv_heads, 8);
    fg_model_free(m);
}

/* HyperCLOVAX-SEED-Think-14B (HyperCLOVAXForCausalLM): 38 layers of 6144, 48 heads of 128 and
 * 8 KV heads; q/o 6144^2, k/v 6144 x 1024, gate/up/down 3 x 6144 x 14336, input, post-attention
 * (post_norm1), pre-MLP and post-MLP (post_norm2) RMSNorms; untied embed and lm_head over
 * 110592 tokens, final norm.  The Hub safetensors total: 14,748,112,896. */
static void read_decoder_should_count_hyperclovax_think_14b_exactly(void **state)
{
    (void)state;
    struct fg_model *m =
        load("tests/fixtures/models/naver-hyperclovax--HyperCLOVAX-SEED-Think-14B");
    const uint64_t h = 6144;
    const uint64_t layer = 2 * h * h + 2 * h * 8 * 128 + 3 * h * 14336 + 4 * h;
    assert_int_equal(m->params_total, 2 * 110592 * h + 38 * layer + h);
    assert_int_equal(m->params_total, 14748112896ull);
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    assert_int_equal(m->kv_heads, 8);
    assert_int_equal(m->head_dim, 128);
    fg_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(read_decoder_should_store_llama_inv_freq_written_before_4_32),
        cmocka_unit_test(read_decoder_should_not_store_inv_freq_from_4_32_or_unversioned),
        cmocka_unit_test(read_decoder_should_count_each_new_row_from_its_modeling_file),
        cmocka_unit_test(read_decoder_should_slide_three_layers_in_four_for_olmo3_and_cohere2),
        cmocka_unit_test(read_decoder_should_be_unsure_whether_a_tied_qwen3_head_is_written),
        cmocka_unit_test(read_decoder_should_store_no_head_for_a_base_model_class),
        cmocka_unit_test(read_decoder_should_ignore_use_qk_norm_where_the_norms_are_unconditional),
        cmocka_unit_test(read_decilm_should_build_each_layer_from_its_block_config),
        cmocka_unit_test(read_granite_swa_should_add_sinks_and_read_the_windows),
        cmocka_unit_test(read_granite_swa_should_put_the_default_full_layer_first),
        cmocka_unit_test(read_decoder_should_count_hyperclovax_think_14b_exactly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
