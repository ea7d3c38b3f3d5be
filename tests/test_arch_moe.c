/*
 * test_arch_moe.c - the mixture-of-experts and latent-attention readers
 * (engine/arch_moe.c): graph shape on real configs from tests/fixtures,
 * checkpoint rules, and the errors bad values get.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support.h"
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "model.h"

#define FIXTURES "tests/fixtures/models/"

static const struct fg_node *node_of_layer(const struct fg_model *m, enum fg_node_kind kind,
                                           int32_t layer)
{
    for (size_t i = 0; i < m->n_nodes; i++)
        if (m->nodes[i].kind == kind && m->nodes[i].layer == layer)
            return &m->nodes[i];
    return NULL;
}

static int64_t rule(const struct fg_model *m, const char *prefix)
{
    for (size_t i = 0; i < m->n_rules; i++)
        if (strncmp(m->rules[i].name, prefix, strlen(prefix)) == 0)
            return m->rules[i].scalars;
    return -1;
}

static void read_moe_should_give_mixtral_32_moe_blocks_of_8_experts_top_2(void **state)
{
    (void)state;
    struct fg_model *m = load(FIXTURES "mistralai--Mixtral-8x7B-v0.1");
    assert_int_equal(m->experts, 8);
    assert_int_equal(m->top_k, 2);
    assert_int_equal(count_kind(m, FG_NODE_MOE), 32);
    assert_int_equal(count_kind(m, FG_NODE_MLP), 0);
    const struct fg_node *n = node_of_layer(m, FG_NODE_MOE, 0);
    assert_non_null(n);
    assert_string_equal(n->name, "MoE_1");
    assert_int_equal(n->experts, 8);
    assert_int_equal(n->top_k, 2);
    assert_int_equal(n->inter, 14336);
    assert_int_equal(n->gated, 1);
    assert_int_equal(n->shared, 0);
    assert_int_equal(lin(n, "router")->count, 1);
    assert_int_equal(lin(n, "gate")->count, 8);
    assert_int_equal(lin(n, "down")->in, 14336);
    /* router 8 x 4096 + 8 experts x 3 x 4096 x 14336 */
    assert_int_equal(n->params, 32768ull + 8ull * 3 * 4096 * 14336);
    assert_int_equal(m->params_total, 46702792704ull);
    fg_model_free(m);
}

static void read_moe_should_keep_deepseek_v3_first_3_layers_dense(void **state)
{
    (void)state;
    struct fg_model *m = load(FIXTURES "deepseek-ai--DeepSeek-V3");
    assert_int_equal(m->layers, 61);
    assert_int_equal(count_kind(m, FG_NODE_MLP), 3);
    assert_int_equal(count_kind(m, FG_NODE_MOE), 58);
    assert_int_equal(count_kind(m, FG_NODE_MLA), 61);
    assert_non_null(node_of_layer(m, FG_NODE_MLP, 2));
    const struct fg_node *moe = node_of_layer(m, FG_NODE_MOE, 3);
    assert_non_null(moe);
    assert_int_equal(moe->experts, 256);
    assert_int_equal(moe->top_k, 8);
    assert_int_equal(moe->shared, 1);
    assert_int_equal(moe->shared_inter, 2048);
    assert_int_equal(moe->buffers, 256); /* e_score_correction_bias */
    assert_int_equal(m->params_buffers, 58 * 256);
    fg_model_free(m);
}

static void read_moe_should_build_deepseek_v3_latent_attention(void **state)
{
    (void)state;
    struct fg_model *m = load(FIXTURES "deepseek-ai--DeepSeek-V3");
    const struct fg_node *a = node_of_layer(m, FG_NODE_MLA, 0);
    assert_non_null(a);
    assert_int_equal(a->q_lora, 1536);
    assert_int_equal(a->kv_lora, 512);
    assert_int_equal(a->rope_dim, 64);
    assert_int_equal(a->head_dim, 192);
    assert_int_equal(a->v_head_dim, 128);
    assert_int_equal(a->heads, 128);
    assert_int_equal(lin(a, "q_b")->out, 128 * 192);
    assert_int_equal(lin(a, "kv_a")->out, 512 + 64);
    assert_int_equal(lin(a, "kv_b")->out, 128 * 256);
    /* q_a, q_b, kv_a, kv_b, o + q_a_layernorm + kv_a_layernorm */
    assert_int_equal(a->params, 7168ull * 1536 + 1536ull * 24576 + 7168ull * 576 +
                                    512ull * 32768 + 16384ull * 7168 + 1536 + 512);
    fg_model_free(m);
}

static void read_moe_should_count_deepseek_v3_mtp_and_fp8_scales_as_rules(void **state)
{
    (void)state;
    struct fg_model *m = load(FIXTURES "deepseek-ai--DeepSeek-V3");
    /* F32 41,555,600 in the published count = these scales + 59 x 256 score biases */
    assert_int_equal(rule(m, "FP8 block scales"), 41555600 - 59 * 256);
    assert_int_equal(rule(m, "MTP layers store"), 2ll * 129280 * 7168);
    assert_true(rule(m, "MTP layers (") > 0);
    assert_int_equal(m->params_total, 684531386000ull);
    fg_model_free(m);
}

static void read_moe_should_read_null_q_lora_rank_as_plain_q_proj(void **state)
{
    (void)state;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(build("{\"model_type\": \"deepseek_v3\", \"q_lora_rank\": null,"
                           " \"num_hidden_layers\": 2, \"num_nextn_predict_layers\": 0}",
                           &m, &err),
                     0);
    const struct fg_node *a = node_of_layer(m, FG_NODE_MLA, 0);
    assert_non_null(a);
    assert_int_equal(a->q_lora, 0);
    assert_non_null(lin(a, "q"));
    assert_null(lin(a, "q_a"));
    fg_model_free(m);
}

static void read_moe_should_reject_top_k_above_routed_experts_naming_the_key(void **state)
{
    (void)state;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    int rc = build("{\"model_type\": \"deepseek_v3\", \"n_routed_experts\": 4,"
                   " \"num_experts_per_tok\": 8}",
                   &m, &err);
    assert_int_equal(rc, FG_E_RANGE);
    assert_null(m);
    assert_non_null(strstr(err.detail, "t.json"));
    assert_non_null(strstr(err.detail, "num_experts_per_tok"));
    assert_non_null(strstr(err.detail, "n_routed_experts"));
}

static void read_moe_should_reject_mlp_only_layer_beyond_the_stack(void **state)
{
    (void)state;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    int rc = build("{\"model_type\": \"qwen3_moe\", \"num_hidden_layers\": 4,"
                   " \"mlp_only_layers\": [1, 9]}",
                   &m, &err);
    assert_int_equal(rc, FG_E_RANGE);
    assert_non_null(strstr(err.detail, "mlp_only_layers"));
}

static void read_moe_should_place_experts_by_sparse_step_and_mlp_only_layers(void **state)
{
    (void)state;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(build("{\"model_type\": \"qwen3_moe\", \"num_hidden_layers\": 6,"
                           " \"decoder_sparse_step\": 2, \"mlp_only_layers\": [3]}",
                           &m, &err),
                     0);
    /* (i+1) % 2 == 0 -> layers 1, 3, 5; 3 is forced dense */
    assert_non_null(node_of_layer(m, FG_NODE_MOE, 1));
    assert_non_null(node_of_layer(m, FG_NODE_MLP, 3));
    assert_non_null(node_of_layer(m, FG_NODE_MOE, 5));
    assert_int_equal(count_kind(m, FG_NODE_MOE), 2);
    assert_int_equal(count_kind(m, FG_NODE_MLP), 4);
    fg_model_free(m);
}

static void read_moe_should_give_qwen2_moe_a_gated_shared_expert(void **state)
{
    (void)state;
    struct fg_model *m = load(FIXTURES "Qwen--Qwen1.5-MoE-A2.7B-Chat");
    const struct fg_node *n = node_of_layer(m, FG_NODE_MOE, 0);
    assert_non_null(n);
    assert_int_equal(n->shared, 1);
    assert_int_equal(n->shared_inter, 5632);
    assert_int_equal(lin(n, "shared_up")->out, 5632);
    assert_int_equal(lin(n, "shexp_gate")->out, 1);
    /* router + 60 experts + shared expert + shared_expert_gate */
    assert_int_equal(n->params, 60ull * 2048 + 60ull * 3 * 2048 * 1408 + 3ull * 2048 * 5632 + 2048);
    fg_model_free(m);
}

static void read_moe_should_give_gpt_oss_sinks_windows_and_biased_experts(void **state)
{
    (void)state;
    struct fg_model *m = load(FIXTURES "openai--gpt-oss-120b");
    const struct fg_node *a0 = node_of_layer(m, FG_NODE_ATTN, 0);
    const struct fg_node *a1 = node_of_layer(m, FG_NODE_ATTN, 1);
    assert_int_equal(a0->window, 128);
    assert_int_equal(a1->window, 0);
    /* q/k/v/o with biases + 64 sinks */
    assert_int_equal(a0->params, 2880ull * 4096 + 4096 + 2 * (2880ull * 512 + 512) +
                                     4096ull * 2880 + 2880 + 64);
    const struct fg_node *n = node_of_layer(m, FG_NODE_MOE, 0);
    assert_int_equal(lin(n, "gate_up")->count, 128);
    assert_int_equal(lin(n, "gate_up")->out, 2 * 2880);
    assert_int_equal(n->top_k, 4);
    assert_int_equal(rule(m, "MXFP4 expert packing"), 0);
    fg_model_free(m);
}

static void read_moe_should_count_minimax_m2_fp8_scales(void **state)
{
    (void)state;
    struct fg_model *m = load(FIXTURES "MiniMaxAI--MiniMax-M2.5");
    /* per layer: attention 2,688 + 256 experts x 864 blocks of 128 x 128 */
    assert_int_equal(rule(m, "FP8 block scales"), 62ll * (2688 + 256 * 864));
    assert_int_equal(node_of_layer(m, FG_NODE_MOE, 0)->buffers, 256);
    assert_int_equal(m->params_total, 228703644928ull);
    fg_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(read_moe_should_give_mixtral_32_moe_blocks_of_8_experts_top_2),
        cmocka_unit_test(read_moe_should_keep_deepseek_v3_first_3_layers_dense),
        cmocka_unit_test(read_moe_should_build_deepseek_v3_latent_attention),
        cmocka_unit_test(read_moe_should_count_deepseek_v3_mtp_and_fp8_scales_as_rules),
        cmocka_unit_test(read_moe_should_read_null_q_lora_rank_as_plain_q_proj),
        cmocka_unit_test(read_moe_should_reject_top_k_above_routed_experts_naming_the_key),
        cmocka_unit_test(read_moe_should_reject_mlp_only_layer_beyond_the_stack),
        cmocka_unit_test(read_moe_should_place_experts_by_sparse_step_and_mlp_only_layers),
        cmocka_unit_test(read_moe_should_give_qwen2_moe_a_gated_shared_expert),
        cmocka_unit_test(read_moe_should_give_gpt_oss_sinks_windows_and_biased_experts),
        cmocka_unit_test(read_moe_should_count_minimax_m2_fp8_scales),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
