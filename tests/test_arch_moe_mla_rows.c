/*
 * test_arch_moe_mla_rows.c - the rows of engine/arch/moe/moe_rows.c that follow a GLM-4.5
 * family class (glm4_moe_lite, solar_open): each count written out term by term from the
 * transformers class at the published shapes of a release, with the published total where
 * one was found.
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

/* Unsure, naming key. */
static void assert_unsure_on(const char *json, const char *key)
{
    struct fg_model *m = built(json);
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_string_equal(m->unsure_key, key);
    fg_model_free(m);
}

/* GLM-4.7-Flash (Glm4MoeLiteForCausalLM, modeling_glm4_moe_lite.py @decba1d2ea): MLA with
 * q_lora 768, kv_lora 512, 20 heads of nope 192 + rope 64 and v 256; layer 0 a dense MLP of
 * 10240, the rest 64 experts of 1536, one shared expert, router weight + bias buffer. */
static void read_glm4_moe_lite_should_count_mla_sparse_layers_and_mtp(void **state)
{
    (void)state;
    const uint64_t h = 2048, v = 154880, e = 64;
    /* q_a_proj, q_a_layernorm, q_b_proj, kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj, o_proj */
    const uint64_t attn = h * 768 + 768 + 768ull * 20 * 256 + h * (512 + 64) + 512 +
                          512ull * 20 * (192 + 256) + 20ull * 256 * h;
    const uint64_t dense = 3 * h * 10240;
    const uint64_t moe = e * h + e + e * 3 * h * 1536 + 3 * h * 1536;
    const uint64_t graph = v * h + (attn + 2 * h + dense) + 46 * (attn + 2 * h + moe) + h + v * h;
    /* model.layers.47: a MoE block, enorm + hnorm + eh_proj 2h -> h + shared_head.norm, and
     * its embed_tokens / shared_head.head copies */
    const uint64_t mtp = attn + 2 * h + moe + 3 * h + 2 * h * h + 2 * v * h;
    struct fg_model *m = load("tests/fixtures/models/zai-org--GLM-4.7-Flash");
    assert_int_equal(m->params_total, graph + mtp);
    /* the safetensors total published for the checkpoint (truth.tsv) */
    assert_int_equal(m->params_total, 31221488576ull);
    assert_int_equal(m->params_buffers, 46 * e); /* the graph's routers; the MTP rule holds its own */
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_true(m->unsure_count_only);
    assert_string_equal(m->unsure_key, "num_nextn_predict_layers");
    assert_int_equal(m->experts, 64);
    assert_int_equal(m->top_k, 4);
    fg_model_free(m);
    /* the class builds mlp_layer_types and leaves first_k_dense_replace unread */
    const char *two_dense = "{\"model_type\": \"glm4_moe_lite\", \"num_hidden_layers\": 4, "
                            "\"mlp_layer_types\": [\"dense\", \"dense\", \"sparse\", \"sparse\"], "
                            "\"first_k_dense_replace\": 2}";
    uint64_t n = exact_count(two_dense);
    assert_int_equal(n, v * h + 2 * (attn + 2 * h + dense) + 2 * (attn + 2 * h + moe) + h + v * h);
    assert_unsure_on("{\"model_type\": \"glm4_moe_lite\", \"first_k_dense_replace\": 3}",
                  "first_k_dense_replace");
}

/* Solar-Open-100B (SolarOpenForCausalLM, modular_solar_open.py @decba1d2ea): LlamaAttention
 * of 64 heads, 8 key/value heads of 128, no biases; Glm4MoeMoE in all 48 layers. */
static void read_solar_open_should_count_moe_in_every_layer(void **state)
{
    (void)state;
    const uint64_t h = 4096, v = 196608;
    const uint64_t attn = h * 8192 + 2 * h * 1024 + 8192 * h;
    /* router weight + e_score_correction_bias, 128 experts and 1 shared of 1280 */
    const uint64_t moe = 128 * h + 128 + 129 * 3 * h * 1280;
    struct fg_model *m = load("tests/fixtures/models/upstage--Solar-Open-100B");
    assert_int_equal(m->params_total, v * h + 48 * (attn + 2 * h + moe) + h + v * h);
    assert_int_equal(m->params_total, 102651799552ull);
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    assert_int_equal(m->kv_heads, 8);
    assert_int_equal(m->experts, 128);
    assert_int_equal(m->top_k, 8);
    fg_model_free(m);
    /* the class builds no dense layer and no q/k norm, whatever the Hub's keys say */
    assert_unsure_on("{\"model_type\": \"solar_open\", \"first_k_dense_replace\": 1}",
                  "first_k_dense_replace");
    assert_unsure_on("{\"model_type\": \"solar_open\", \"use_qk_norm\": true}", "use_qk_norm");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(read_glm4_moe_lite_should_count_mla_sparse_layers_and_mtp),
        cmocka_unit_test(read_solar_open_should_count_moe_in_every_layer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
