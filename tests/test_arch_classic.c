/*
 * test_arch_classic.c - the GPT-2-era readers (engine/arch/decoder/gpt_neox_opt_mpt.c: gpt_neox, opt,
 * gpt_bigcode, mpt, gpt_neo) and the rows added beside them (codegen, gpt-sw3 in
 * gpt2_bloom_falcon.c; olmo, code_llama in llama_rows.c): each count written out term by term
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

/* Pythia-1b's shapes: hidden 2048, 16 layers, 8192 wide, vocab 50304, untied embed_out. */
static void read_gpt_neox_should_count_fused_biased_blocks_and_an_untied_head(void **state)
{
    (void)state;
    const uint64_t h = 2048, f = 8192;
    const uint64_t layer = 2 * 2 * h + (h * 3 * h + 3 * h) + (h * h + h) + (h * f + f) +
                           (f * h + h);
    uint64_t n = exact_count("{\"model_type\": \"gpt_neox\", \"hidden_size\": 2048, "
                       "\"intermediate_size\": 8192, \"num_hidden_layers\": 16, "
                       "\"num_attention_heads\": 8, \"vocab_size\": 50304, \"rotary_pct\": 0.25, "
                       "\"tie_word_embeddings\": false, \"use_parallel_residual\": true}");
    assert_int_equal(n, 2 * 50304 * h + 16 * layer + 2 * h);
    assert_int_equal(n, 1011781632ull); /* the Pythia paper's total for Pythia-1B */
    /* the published file (config 4.24.0) also holds each layer's mask, masked_bias and
     * inv_freq (rotary_ndims 64 / 2): 1,078,891,024 elements in the 2,090,701,528 B file */
    uint64_t nf = exact_count("{\"model_type\": \"gpt_neox\", \"hidden_size\": 2048, "
              "\"intermediate_size\": 8192, \"num_hidden_layers\": 16, "
              "\"num_attention_heads\": 8, \"vocab_size\": 50304, \"rotary_pct\": 0.25, "
              "\"max_position_embeddings\": 2048, \"transformers_version\": \"4.24.0\"}");
    assert_int_equal(nf, 1011781632ull + 16 * (2048ull * 2048 + 1 + 32));
    struct fg_model *m = built("{\"model_type\": \"gpt_neox\", \"transformers_version\": "
                               "\"4.28.1\"}");
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    fg_model_free(m);
    /* attention_bias false drops the q/k/v and dense biases */
    uint64_t nb = exact_count("{\"model_type\": \"gpt_neox\", \"hidden_size\": 2048, "
                        "\"intermediate_size\": 8192, \"num_hidden_layers\": 16, "
                        "\"num_attention_heads\": 8, \"vocab_size\": 50304, "
                        "\"attention_bias\": false}");
    assert_int_equal(n - nb, 16 * (3 * h + h));
}

/* OPT-125m, and OPT-350m's projections without a final norm. */
static void read_opt_should_count_offset_positions_and_the_350m_projections(void **state)
{
    (void)state;
    const uint64_t h = 768, f = 3072;
    const uint64_t layer = 4 * (h * h + h) + 2 * 2 * h + (h * f + f) + (f * h + h);
    uint64_t n = exact_count("{\"model_type\": \"opt\", \"hidden_size\": 768, \"ffn_dim\": 3072, "
                       "\"num_hidden_layers\": 12, \"num_attention_heads\": 12, "
                       "\"max_position_embeddings\": 2048, \"vocab_size\": 50272, "
                       "\"word_embed_proj_dim\": 768, \"do_layer_norm_before\": true}");
    assert_int_equal(n, 50272 * h + 2050 * h + 12 * layer + 2 * h);
    /* hidden 1024, word_embed_proj_dim 512, post-norm blocks, no final_layer_norm */
    const uint64_t H = 1024, F = 4096;
    const uint64_t l350 = 4 * (H * H + H) + 2 * 2 * H + (H * F + F) + (F * H + H);
    n = exact_count("{\"model_type\": \"opt\", \"hidden_size\": 1024, \"ffn_dim\": 4096, "
              "\"num_hidden_layers\": 24, \"num_attention_heads\": 16, "
              "\"max_position_embeddings\": 2048, \"vocab_size\": 50272, "
              "\"word_embed_proj_dim\": 512, \"do_layer_norm_before\": false}");
    assert_int_equal(n, 50272ull * 512 + 2050 * H + 2 * 512 * H + 24 * l350);
    /* layer_norm_elementwise_affine false: the LayerNorms store nothing */
    uint64_t na = exact_count("{\"model_type\": \"opt\", \"layer_norm_elementwise_affine\": false}");
    assert_int_equal(exact_count("{\"model_type\": \"opt\"}") - na, (2 * 12 + 1) * 2 * h);
}

/* StarCoder's shapes: multi-query c_attn hidden -> hidden + 2 x head_dim. */
static void read_gpt_bigcode_should_build_multi_query_attention(void **state)
{
    (void)state;
    const uint64_t h = 6144, f = 24576, hd = 128;
    const uint64_t layer = 2 * 2 * h + (h * (h + 2 * hd) + h + 2 * hd) + (h * h + h) +
                           (h * f + f) + (f * h + h);
    const char *cfg = "{\"model_type\": \"gpt_bigcode\", \"n_embd\": 6144, \"n_layer\": 40, "
                      "\"n_head\": 48, \"n_inner\": 24576, \"n_positions\": 8192, "
                      "\"vocab_size\": 49152, \"multi_query\": true}";
    assert_int_equal(exact_count(cfg), 49152 * h + 8192 * h + 40 * layer + 2 * h);
    struct fg_model *m = built(cfg);
    assert_int_equal(m->kv_heads, 1);
    fg_model_free(m);
    struct fg_err err = {0};
    assert_int_equal(build("{\"model_type\": \"gpt_bigcode\", \"add_cross_attention\": true}",
                           &m, &err), FG_E_UNSUPPORTED);
    assert_non_null(strstr(err.detail, "add_cross_attention"));
}

/* MPT-7B's shapes; the remote-code switches transformers does not build make it unsure. */
static void read_mpt_should_count_bias_free_blocks_and_doubt_remote_code_switches(void **state)
{
    (void)state;
    const uint64_t h = 4096;
    const uint64_t layer = 2 * h + 3 * h * h + h * h + 2 * 4 * h * h;
    assert_int_equal(exact_count("{\"model_type\": \"mpt\", \"d_model\": 4096, \"n_heads\": 32, "
                           "\"n_layers\": 32, \"expansion_ratio\": 4, \"max_seq_len\": 2048, "
                           "\"vocab_size\": 50432, \"no_bias\": true, "
                           "\"attn_config\": {\"alibi\": true, \"qk_ln\": false}}"),
                     50432 * h + 32 * layer + h);
    static const char *const doubtful[][2] = {
        {"{\"model_type\": \"mpt\", \"expansion_ratio\": 2}", "expansion_ratio"},
        {"{\"model_type\": \"mpt\", \"no_bias\": false}", "no_bias"},
        {"{\"model_type\": \"mpt\", \"attn_config\": {\"qk_ln\": true}}", "attn_config.qk_ln"},
        {"{\"model_type\": \"mpt\", \"attn_config\": {\"alibi\": false}}", "attn_config.alibi"},
    };
    for (size_t i = 0; i < sizeof doubtful / sizeof doubtful[0]; i++) {
        struct fg_model *m = built(doubtful[i][0]);
        assert_int_equal(m->certainty, FG_CERT_UNSURE);
        assert_string_equal(m->unsure_key, doubtful[i][1]);
        fg_model_free(m);
    }
}

/* GPT-Neo 125M's shapes: q/k/v without bias, out_proj with. */
static void read_gpt_neo_should_bias_only_the_output_projection(void **state)
{
    (void)state;
    const uint64_t h = 768;
    const uint64_t layer = 2 * 2 * h + 3 * h * h + (h * h + h) + (h * 4 * h + 4 * h) +
                           (4 * h * h + h);
    assert_int_equal(exact_count("{\"model_type\": \"gpt_neo\", \"hidden_size\": 768, "
                           "\"num_layers\": 12, \"num_heads\": 12, \"vocab_size\": 50257, "
                           "\"max_position_embeddings\": 2048, \"intermediate_size\": null}"),
                     50257 * h + 2048 * h + 12 * layer + 2 * h);
}

/* CodeGen-350M's shapes: one LayerNorm, fused qkv without bias, a biased untied head. */
static void codegen_and_olmo_rows_should_follow_their_classes(void **state)
{
    (void)state;
    const uint64_t h = 1024;
    const uint64_t layer = 2 * h + 3 * h * h + h * h + (h * 4 * h + 4 * h) + (4 * h * h + h);
    assert_int_equal(exact_count("{\"model_type\": \"codegen\", \"n_embd\": 1024, \"n_layer\": 20, "
                           "\"n_head\": 16, \"n_positions\": 2048, \"vocab_size\": 51200, "
                           "\"rotary_dim\": 32}"),
                     51200 * h + 20 * layer + 2 * h + (51200 * h + 51200));
    /* OLMo-1B: OlmoLayerNorm stores nothing; tied */
    const uint64_t H = 2048, F = 8192;
    assert_int_equal(exact_count("{\"model_type\": \"olmo\", \"hidden_size\": 2048, "
                           "\"intermediate_size\": 8192, \"num_hidden_layers\": 16, "
                           "\"num_attention_heads\": 16, \"vocab_size\": 50304, "
                           "\"tie_word_embeddings\": true}"),
                     50304 * H + 16 * (4 * H * H + 3 * H * F));
    /* the mapping aliases read as the class they map to */
    assert_int_equal(exact_count("{\"model_type\": \"code_llama\"}"), exact_count("{\"model_type\": \"llama\"}"));
    assert_int_equal(exact_count("{\"model_type\": \"gpt-sw3\"}"), exact_count("{\"model_type\": \"gpt2\"}"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(read_gpt_neox_should_count_fused_biased_blocks_and_an_untied_head),
        cmocka_unit_test(read_opt_should_count_offset_positions_and_the_350m_projections),
        cmocka_unit_test(read_gpt_bigcode_should_build_multi_query_attention),
        cmocka_unit_test(read_mpt_should_count_bias_free_blocks_and_doubt_remote_code_switches),
        cmocka_unit_test(read_gpt_neo_should_bias_only_the_output_projection),
        cmocka_unit_test(codegen_and_olmo_rows_should_follow_their_classes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
