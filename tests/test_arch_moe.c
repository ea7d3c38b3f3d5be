/*
 * test_arch_moe.c - the mixture-of-experts and latent-attention readers
 * (engine/arch/moe/moe_mla.c, deepseek_v4.c): graph shape on real configs from tests/fixtures,
 * checkpoint rules, and the errors bad values get.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <cjson/cJSON.h>

#include "support.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "source/config.h"
#include "model/model.h"

#define FIXTURES "tests/fixtures/models/"

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

/*
 * MiMoV2FlashForCausalLM (transformers decba1d2ea models/mimo_v2_flash) at the Hub config of
 * XiaomiMiMo/MiMo-V2-Flash: hybrid_layer_pattern 0 (full) at layers 0, 5, 11, ..., 47,
 * moe_layer_freq 0 at layer 0 only.
 */
static void read_moe_should_count_mimo_v2_flash_term_by_term(void **state)
{
    (void)state;
    const uint64_t h = 4096, v = 152576, hd = 192, vd = 128, q = 64 * hd;
    /* MiMoV2FlashAttention: q/k of head_dim, v/o of v_head_dim; sliding: 2 x 4 kv + sinks */
    const uint64_t full = h * q + h * 4 * hd + h * 4 * vd + 64 * vd * h;
    const uint64_t swa = h * q + h * 8 * hd + h * 8 * vd + 64 * vd * h + 64;
    /* MiMoV2FlashTopkRouter weight + e_score_correction_bias; MiMoV2FlashExperts */
    const uint64_t moe = 256 * h + 256 + 256 * (2 * 2048 * h + h * 2048);
    const uint64_t dense = 3 * h * 16384;
    const uint64_t graph = 2 * v * h + h + 9 * full + 39 * swa + 47 * moe + dense + 48 * 2 * h;
    /* weight_scale_inv per 128 x 128 block: full q 96x32, k 6x32, v 4x32, o 32x64; sliding
     * k 12x32, v 8x32; dense 3 x 128x32; experts gate_up 32x32 + down 32x16 */
    const uint64_t sc_full = 3072 + 192 + 128 + 2048, sc_swa = 3072 + 384 + 256 + 2048;
    const uint64_t scales = 9 * sc_full + 39 * sc_swa + 3 * 4096 + 47 * 256 * (1024 + 512);
    struct fg_model *m = load(FIXTURES "XiaomiMiMo--MiMo-V2-Flash");
    assert_int_equal(graph, 308778780864ull);
    assert_int_equal(rule(m, "FP8 block scales"), scales);
    assert_int_equal(m->params_total, graph + scales);
    const struct fg_node *a0 = node_of_layer(m, FG_NODE_ATTN, 0);
    const struct fg_node *a1 = node_of_layer(m, FG_NODE_ATTN, 1);
    const struct fg_node *a5 = node_of_layer(m, FG_NODE_ATTN, 5);
    assert_int_equal(a0->params, full);
    assert_int_equal(a0->kv_heads, 4);
    assert_int_equal(a0->window, 0);
    assert_int_equal(a1->params, swa);
    assert_int_equal(a1->kv_heads, 8);
    assert_int_equal(a1->window, 128);
    assert_int_equal(a1->v_head_dim, 128);
    assert_int_equal(a5->params, full);
    assert_non_null(node_of_layer(m, FG_NODE_MLP, 0));
    assert_null(node_of_layer(m, FG_NODE_MOE, 0));
    assert_int_equal(node_of_layer(m, FG_NODE_MOE, 1)->params, moe);
    /* the checkpoint's model.mtp.* layers: what is loaded is known, what is stored is not */
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_true(m->unsure_count_only);
    fg_model_free(m);
}

/* A small MiMoV2FlashConfig; the layer keys spliced in. */
#define MIMO_SMALL(keys)                                                                      \
    "{\"model_type\": \"mimo_v2_flash\", \"hidden_size\": 64, \"num_attention_heads\": 4, "   \
    "\"num_key_value_heads\": 1, \"head_dim\": 16, \"v_head_dim\": 8, "                      \
    "\"intermediate_size\": 128, \"moe_intermediate_size\": 32, \"n_routed_experts\": 4, "    \
    "\"num_experts_per_tok\": 2, \"vocab_size\": 100, \"num_hidden_layers\": 7" keys "}"

static uint64_t mimo_count(const char *json, const char *unsure_key)
{
    struct fg_model *m = built(json);
    uint64_t n = m->params_total;
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_string_equal(m->unsure_key, unsure_key);
    fg_model_free(m);
    return n;
}

static void read_moe_should_read_mimo_v2_flash_layer_lists_in_either_form(void **state)
{
    (void)state;
    const char *mtp = "num_nextn_predict_layers";
    /* __post_init__: layers 0 and 5 full, layer 0 dense */
    uint64_t def = mimo_count(MIMO_SMALL(""), mtp);
    assert_int_equal(mimo_count(MIMO_SMALL(", \"hybrid_layer_pattern\": [0, 1, 1, 1, 1, 0, 1], "
                                           "\"moe_layer_freq\": [0, 1, 1, 1, 1, 1, 1]"), mtp),
                     def);
    assert_int_equal(mimo_count(MIMO_SMALL(
                         ", \"layer_types\": [\"full_attention\", \"sliding_attention\", "
                         "\"sliding_attention\", \"sliding_attention\", \"sliding_attention\", "
                         "\"full_attention\", \"sliding_attention\"], \"mlp_layer_types\": "
                         "[\"dense\", \"sparse\", \"sparse\", \"sparse\", \"sparse\", \"sparse\", "
                         "\"sparse\"]"), mtp),
                     def);
    /* layer 5 sliding: one more kv head of k 16 + v 8 wide, and 4 sinks */
    assert_int_equal(mimo_count(MIMO_SMALL(", \"hybrid_layer_pattern\": [0, 1, 1, 1, 1, 1, 1]"),
                                mtp),
                     def + 64 * (16 + 8) + 4);
    /* layer 1 dense: a 128-wide MLP for the router, its buffer and 4 experts of 32 */
    assert_int_equal(mimo_count(MIMO_SMALL(", \"moe_layer_freq\": [0, 0, 1, 1, 1, 1, 1]"), mtp),
                     def + 3 * 64 * 128 - (4 * 64 + 4 + 4 * 3 * 32 * 64));
    /* Hub keys the class hardcodes: a value it does not build is a question of the load */
    struct fg_model *m = built(MIMO_SMALL(", \"swa_num_key_value_heads\": 1"));
    assert_string_equal(m->unsure_key, "swa_num_key_value_heads");
    assert_false(m->unsure_count_only);
    fg_model_free(m);
    assert_int_equal(mimo_count(MIMO_SMALL(", \"swa_num_key_value_heads\": 2, \"swa_head_dim\": "
                                           "16, \"swa_v_head_dim\": 8, "
                                           "\"add_swa_attention_sink_bias\": true"), mtp),
                     def);
    m = built(MIMO_SMALL(", \"add_full_attention_sink_bias\": true"));
    assert_string_equal(m->unsure_key, "add_full_attention_sink_bias");
    fg_model_free(m);
}

/* GLM-4.5-Air's shape fields (Glm4MoeConfig as zai-org publishes it); nextn spliced in. */
#define GLM45_AIR(nextn)                                                                      \
    "{\"model_type\": \"glm4_moe\", \"attention_bias\": true, \"first_k_dense_replace\": 1, " \
    "\"head_dim\": 128, \"hidden_size\": 4096, \"intermediate_size\": 10944, "              \
    "\"moe_intermediate_size\": 1408, \"n_routed_experts\": 128, \"n_shared_experts\": 1, "   \
    "\"num_attention_heads\": 96, \"num_experts_per_tok\": 8, \"num_hidden_layers\": 46, "    \
    "\"num_key_value_heads\": 8, \"num_nextn_predict_layers\": " nextn ", "                   \
    "\"tie_word_embeddings\": false, \"use_qk_norm\": false, \"vocab_size\": 151552}"

static void read_moe_should_count_glm4_moe_layers_router_buffers_and_mtp(void **state)
{
    (void)state;
    /* Glm4MoeAttention: q 4096 -> 96 x 128 and k/v 4096 -> 8 x 128, all biased; o_proj not */
    const uint64_t attn = 4096ull * 12288 + 12288 + 2 * (4096ull * 1024 + 1024) + 12288ull * 4096;
    const uint64_t dense = 3ull * 4096 * 10944;
    /* router 128 x 4096 + e_score_correction_bias 128, 128 experts and 1 shared of 1408 */
    const uint64_t moe = 128ull * 4096 + 128 + 129ull * 3 * 4096 * 1408;
    const uint64_t emb = 151552ull * 4096;
    const uint64_t main_graph = emb + (attn + 2 * 4096 + dense) +
                                45 * (attn + 2 * 4096 + moe) + 4096 + emb;
    struct fg_model *m = built(GLM45_AIR("0"));
    assert_int_equal(count_kind(m, FG_NODE_MLP), 1);
    assert_int_equal(count_kind(m, FG_NODE_MOE), 45);
    assert_int_equal(m->params_buffers, 45 * 128);
    assert_int_equal(m->params_total, main_graph);
    /* INTELLECT-3 publishes these shapes without the MTP layer: 106,852,251,264 */
    assert_int_equal(m->params_total, 106852251264ull);
    fg_model_free(m);

    m = built(GLM45_AIR("1"));
    /* layer 46: one more MoE block, enorm + hnorm + eh_proj 8192 -> 4096 + shared_head.norm,
     * and its own embed_tokens and shared_head.head */
    const uint64_t mtp = attn + 2 * 4096 + moe + 3 * 4096 + 2ull * 4096 * 4096 + 2 * emb;
    assert_int_equal(m->params_total, main_graph + mtp);
    /* GLM-4.5-Air's published total (HF API, quoted in an audit table of MoE checkpoints) */
    assert_int_equal(m->params_total, 110468824832ull);
    fg_model_free(m);
}

static void read_moe_should_store_ernie_router_bias_in_every_moe_layer(void **state)
{
    (void)state;
    /* ERNIE-4.5-21B-A3B's shape fields */
    struct fg_model *m = built(
        "{\"model_type\": \"ernie4_5_moe\", \"hidden_size\": 2560, \"intermediate_size\": 12288, "
        "\"num_hidden_layers\": 28, \"num_attention_heads\": 20, \"num_key_value_heads\": 4, "
        "\"head_dim\": 128, \"vocab_size\": 103424, \"tie_word_embeddings\": true, "
        "\"use_bias\": false, \"moe_num_experts\": 64, \"moe_k\": 6, "
        "\"moe_intermediate_size\": 1536, \"moe_num_shared_experts\": 2, "
        "\"moe_layer_start_index\": 1, \"moe_layer_end_index\": 27, \"moe_layer_interval\": 1}");
    /* Ernie4_5_MoeStatics.e_score_correction_bias: 1 x 64 in each of the 27 MoE layers */
    assert_int_equal(m->params_buffers, 1728);
    assert_int_equal(count_kind(m, FG_NODE_MLP), 1);
    assert_int_equal(count_kind(m, FG_NODE_MOE), 27);
    const uint64_t attn = 2560ull * 2560 + 2 * 2560ull * 512 + 2560ull * 2560;
    const uint64_t moe = 64ull * 2560 + 64 + 64ull * 3 * 2560 * 1536 + 3ull * 2560 * 3072;
    assert_int_equal(m->params_total, 103424ull * 2560 + (attn + 2 * 2560 + 3ull * 2560 * 12288) +
                                          27 * (attn + 2 * 2560 + moe) + 2560);
    fg_model_free(m);

    /* moe_layer_interval 2 from layer 1: layers 1, 3, 5 of 6 */
    m = built("{\"model_type\": \"ernie4_5_moe\", \"hidden_size\": 64, \"intermediate_size\": 128,"
              " \"num_hidden_layers\": 6, \"num_attention_heads\": 4, \"vocab_size\": 100, "
              "\"moe_num_experts\": 4, \"moe_k\": 2, \"moe_intermediate_size\": 32, "
              "\"moe_layer_interval\": 2}");
    assert_int_equal(count_kind(m, FG_NODE_MOE), 3);
    assert_non_null(node_of_layer(m, FG_NODE_MOE, 5));
    assert_non_null(node_of_layer(m, FG_NODE_MLP, 0));
    fg_model_free(m);
}

static void read_moe_should_count_olmoe_q_k_norms_over_all_heads(void **state)
{
    (void)state;
    /* OLMoE-1B-7B-0924's shape fields */
    struct fg_model *m = built(
        "{\"model_type\": \"olmoe\", \"hidden_size\": 2048, \"intermediate_size\": 1024, "
        "\"num_hidden_layers\": 16, \"num_attention_heads\": 16, \"num_key_value_heads\": 16, "
        "\"num_experts\": 64, \"num_experts_per_tok\": 8, \"vocab_size\": 50304, "
        "\"tie_word_embeddings\": false}");
    /* q/k/v/o 4 x 2048^2, q_norm and k_norm 2048 each, router 64 x 2048, 64 experts x 3 x
     * 2048 x 1024, two norms */
    const uint64_t layer = 4ull * 2048 * 2048 + 2 * 2048 + 64ull * 2048 +
                           64ull * 3 * 2048 * 1024 + 2 * 2048;
    assert_int_equal(m->params_total, 2ull * 50304 * 2048 + 16 * layer + 2048);
    /* OLMoE-1B-7B-0924-Instruct's safetensors headers: 6,919,161,856 */
    assert_int_equal(m->params_total, 6919161856ull);
    fg_model_free(m);
}

static void read_moe_should_give_phimoe_layernorm_biases_and_a_biased_head(void **state)
{
    (void)state;
    struct fg_model *m = built(
        "{\"model_type\": \"phimoe\", \"hidden_size\": 256, \"intermediate_size\": 512, "
        "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "
        "\"num_local_experts\": 4, \"num_experts_per_tok\": 2, \"vocab_size\": 1000, "
        "\"attention_bias\": true, \"lm_head_bias\": true, \"tie_word_embeddings\": false}");
    const uint64_t attn = 2 * (256ull * 256 + 256) + 2 * (256ull * 128 + 128);
    const uint64_t layer = attn + 2 * 2 * 256 + 4ull * 256 + 4ull * 3 * 256 * 512;
    assert_int_equal(m->params_total, 1000ull * 256 + 2 * layer + 2 * 256 + 1000ull * 256 + 1000);
    fg_model_free(m);
}

static void read_moe_should_add_granitemoeshared_shared_mlp_only_when_sized(void **state)
{
    (void)state;
    const char *fmt =
        "{\"model_type\": \"granitemoeshared\", \"hidden_size\": 256, \"intermediate_size\": 128, "
        "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, \"num_local_experts\": 4, "
        "\"num_experts_per_tok\": 2, \"vocab_size\": 1000, \"shared_intermediate_size\": %d}";
    char json[512];
    /* per layer: q/k/v/o 4 x 256^2, router 4 x 256, 4 experts x (256 -> 2 x 128, 128 -> 256);
     * the head untied, GraniteMoeSharedConfig's tie_word_embeddings default False */
    const uint64_t layer = 4ull * 256 * 256 + 2 * 256 + 4ull * 256 + 4ull * 3 * 256 * 128;
    const uint64_t head = 1000ull * 256;
    snprintf(json, sizeof json, fmt, 0);
    struct fg_model *m = built(json);
    assert_int_equal(m->params_total, 1000ull * 256 + 2 * layer + 256 + head);
    fg_model_free(m);
    snprintf(json, sizeof json, fmt, 384);
    m = built(json);
    /* GraniteMoeSharedMLP: input_linear 256 -> 2 x 384, output_linear 384 -> 256 */
    assert_int_equal(m->params_total,
                     1000ull * 256 + 2 * (layer + 3ull * 256 * 384) + 256 + head);
    fg_model_free(m);
}

static void read_moe_should_drop_the_indexers_glm5_2_marks_shared(void **state)
{
    (void)state;
    struct fg_model *a = load(FIXTURES "zai-org--GLM-5.1");
    struct fg_model *b = load(FIXTURES "zai-org--GLM-5.2");
    /* the lightning indexer: wq_b 2048 -> 32 x 128, wk 6144 -> 128, k_norm 128 + bias,
     * weights_proj 6144 -> 32; 57 of GLM-5.2's 78 layers share one */
    const uint64_t indexer = 2048ull * 4096 + 6144ull * 128 + 2 * 128 + 6144ull * 32;
    assert_int_equal(a->params_total - b->params_total, 57 * indexer);
    /* GLM's MTP layer has no embed_tokens / shared_head.head of its own */
    assert_int_equal(rule(a, "MTP layers store"), -1);
    assert_true(rule(a, "MTP layers (") > 0);
    fg_model_free(a);
    fg_model_free(b);
}

/* fg__add_moe, the one MoE block every reader builds: each part the shape names, counted. */
static void add_moe_should_count_each_part_the_shape_names(void **state)
{
    (void)state;
    struct fg_model *m = calloc(1, sizeof *m);
    struct fg_err err = {0};
    assert_non_null(m);
    /* DeepSeek-V3's MoE layer: 256 gated experts 2048 wide, one shared expert, the router's
     * e_score_correction_bias */
    const struct fg_moe_shape ds = {.hidden = 7168, .experts = 256, .top_k = 8, .inter = 2048,
                                    .shared_inter = 2048, .shared_n = 1, .gated = true,
                                    .score_bias = true};
    struct fg_node *n;
    assert_int_equal(fg__add_moe(m, 3, &ds, &n, &err), 0);
    assert_int_equal(n->params, 7168ull * 256 + 256 * 3 * 7168ull * 2048 + 3 * 7168ull * 2048 +
                                    256);
    assert_int_equal(n->params, 11320164608ull);
    assert_int_equal(n->buffers, 256);
    assert_int_equal(n->shared, 1);
    assert_string_equal(n->desc, "256 experts top-8, 2048 wide, 1 shared");
    /* GraniteMoeHybrid's: gate_up fused, no shared expert; a plain block: up / down alone */
    const struct fg_moe_shape gr = {.hidden = 1536, .experts = 40, .top_k = 8, .inter = 512,
                                    .shared_inter = 1024, .shared_n = 0, .gated = true,
                                    .fused_gate_up = true};
    assert_int_equal(fg__add_moe(m, 4, &gr, &n, &err), 0);
    assert_int_equal(n->params, 1536ull * 40 + 40 * (1536ull * 1024 + 512 * 1536ull) +
                                    2 * 1536ull * 1024 + 1024 * 1536ull);
    assert_int_equal(n->shared, 0);
    assert_string_equal(n->desc, "40 experts top-8, 512 wide");
    const struct fg_moe_shape pl = {.hidden = 768, .experts = 8, .top_k = 2, .inter = 3072,
                                    .router_bias = true, .expert_bias = true};
    assert_int_equal(fg__add_moe(m, 5, &pl, &n, &err), 0);
    assert_int_equal(n->params, (768ull * 8 + 8) + 8 * (768ull * 3072 + 3072) +
                                    8 * (3072ull * 768 + 768));
    assert_int_equal(n->gated, 0);
    fg_model_free(m);
}

/* fg__add_mla, the one MLA block of the MoE and the generic readers. */
static void add_mla_should_count_the_latent_projections_and_their_norms(void **state)
{
    (void)state;
    struct fg_model *m = calloc(1, sizeof *m);
    struct fg_err err = {0};
    assert_non_null(m);
    /* DeepSeek-V3's attention: q_a, q_a_layernorm, q_b, kv_a, kv_a_layernorm, kv_b, o */
    const struct fg_mla_shape v3 = {.hidden = 7168, .heads = 128, .q_lora = 1536,
                                    .kv_lora = 512, .nope = 128, .rope = 64, .v = 128};
    struct fg_node *n;
    assert_int_equal(fg__add_mla(m, 0, &v3, &n, &err), 0);
    assert_int_equal(n->params, 7168ull * 1536 + 1536 + 1536ull * 128 * 192 + 7168ull * 576 +
                                    512 + 512ull * 128 * 256 + 128ull * 128 * 7168);
    assert_int_equal(n->params, 187107328);
    assert_int_equal(n->kv_heads, 128);
    assert_string_equal(n->desc, "MLA 128h q1536/kv512 x192");
    /* DeepSeek-V2-Lite's: no q_lora_rank, one q_proj */
    const struct fg_mla_shape lite = {.hidden = 2048, .heads = 16, .kv_lora = 512, .nope = 128,
                                      .rope = 64, .v = 128};
    assert_int_equal(fg__add_mla(m, 1, &lite, &n, &err), 0);
    assert_int_equal(n->params, 13763072);
    assert_non_null(lin(n, "q"));
    assert_null(lin(n, "q_a"));
    fg_model_free(m);
}

/* DeepSeek-V2-Lite's released config writes "q_lora_rank": null: a plain q_proj, the
 * published 15,706,484,224.  The same config without the key is read as DeepseekV2Config
 * reads it, with the class's q_lora_rank 1536 (q_a_proj, its norm and q_b_proj). */
static void read_mla_should_take_the_class_q_lora_rank_only_when_absent(void **state)
{
    (void)state;
    struct fg_model *m = load("tests/fixtures/models/deepseek-ai--DeepSeek-V2-Lite-Chat");
    assert_int_equal(m->params_total, 15706484224ull);
    fg_model_free(m);
    FILE *f = fopen("tests/fixtures/models/deepseek-ai--DeepSeek-V2-Lite-Chat/config.json", "rb");
    assert_non_null(f);
    static char text[16384];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    cJSON *j = fixture_json(text);
    assert_non_null(j);
    cJSON_DeleteItemFromObjectCaseSensitive(j, "q_lora_rank");
    char *absent = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    assert_non_null(absent);
    m = built(absent);
    free(absent);
    /* 27 layers x (q_a_proj 2048 x 1536 + its norm 1536 + q_b_proj 1536 x 16 x 192)
     * in place of q_proj 2048 x 16 x 192 */
    uint64_t with = 27ull * (2048 * 1536 + 1536 + 1536ull * 16 * 192);
    uint64_t without = 27ull * 2048 * 16 * 192;
    assert_int_equal(m->params_total, 15706484224ull - without + with);
    fg_model_free(m);
}

/* Mistral-Small-4-119B-2603 (Mistral3ForConditionalGeneration over a mistral4 text model,
 * transformers models/mistral4/modeling_mistral4.py @decba1d2ea) term by term: hidden 4096,
 * 36 layers all sparse (first_k_dense_replace 0), 32 heads of MLA q 1024 / kv 256, nope 64,
 * rope 64, v 128; 128 experts of 2048 top-4 and one shared expert; Mistral4TopkRouter is a
 * weight only (no e_score_correction_bias); vocab 131072, untied.  The Pixtral tower and
 * the Mistral3 projector as the mistral3 reader counts them. */
static void read_moe_should_count_mistral4_text_model_of_mistral_small_4(void **state)
{
    (void)state;
    struct fg_model *m = load(FIXTURES "mistralai--Mistral-Small-4-119B-2603");
    const uint64_t h = 4096, e = 128, w = 2048, H = 32;
    /* q_a_proj, q_a_layernorm, q_b_proj, kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj, o */
    const uint64_t attn = h * 1024 + 1024 + 1024 * H * 128 + h * (256 + 64) + 256 +
                          256 * H * (64 + 128) + H * 128 * h;
    const uint64_t moe = e * h + e * 3 * h * w + 3 * h * w; /* router, experts, shared */
    const uint64_t text = 2 * 131072 * h + 36 * (attn + moe + 2 * h) + h;
    const uint64_t tower = 3 * 14 * 14 * 1024 + 1024 +
                           24 * (4 * 1024 * 1024 + 3 * 1024 * 4096 + 2 * 1024);
    const uint64_t proj = 1024 + 4096 * 1024 + 1024 * h + h * h;
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    assert_false(m->generic);
    assert_int_equal(m->params_total, text + tower + proj);
    assert_int_equal(m->params_total, 119401298944ull);
    const struct fg_node *n = node_of_layer(m, FG_NODE_MOE, 0);
    assert_non_null(n);
    assert_int_equal(n->params, moe);
    assert_int_equal(n->lora_experts, FG_LORA_EXPERTS_NONE);
    assert_int_equal(count_kind(m, FG_NODE_MOE), 36);
    assert_int_equal(m->experts, 128);
    assert_int_equal(m->top_k, 4);
    assert_int_equal(m->head_dim, 128);
    assert_int_equal(m->kv_heads, 32);
    fg_model_free(m);
}

/* DeepseekV4 shapes of one config, term by term from modeling_deepseek_v4.py
 * (huggingface/transformers@decba1d2ea). */
struct v4_shape {
    uint64_t h, heads, hd, q_lora, o_groups, o_lora, experts, top_k, inter, idx_heads, idx_dim;
    uint64_t hc, vocab, n_hash, rate_csa, rate_hca;
};

/* DeepseekV4Attention, with its compressor by kind (0 sliding, 4 CSA, 128 HCA) */
static uint64_t v4_attention(const struct v4_shape *s, uint64_t ratio)
{
    uint64_t h = s->h, hd = s->hd, id = s->idx_dim;
    uint64_t p = h * s->q_lora + s->q_lora + s->q_lora * s->heads * hd /* q_a, q_a_norm, q_b */
                 + h * hd + hd                                         /* kv_proj, kv_norm */
                 + s->heads * hd * s->o_lora                           /* o_a_proj (grouped) */
                 + s->o_groups * s->o_lora * h + s->heads;             /* o_b_proj, sinks */
    if (ratio == 128) /* DeepseekV4HCACompressor: kv, gate, position_bias, kv_norm */
        p += 2 * h * hd + s->rate_hca * hd + hd;
    if (ratio == 4) /* DeepseekV4CSACompressor at 2 x head_dim + DeepseekV4Indexer */
        p += 2 * h * 2 * hd + s->rate_csa * 2 * hd + hd + 2 * h * 2 * id + s->rate_csa * 2 * id +
             id + s->q_lora * s->idx_heads * id + h * s->idx_heads;
    return p;
}

/* norms, two hyper-connections and the MoE of layer l */
static uint64_t v4_rest_of_block(const struct v4_shape *s, uint64_t l)
{
    uint64_t mix = (2 + s->hc) * s->hc;
    uint64_t moe = s->experts * s->h + s->experts * 3 * s->h * s->inter /* gate, experts */
                   + 3 * s->h * s->inter                                   /* shared expert */
                   + (l < s->n_hash ? s->vocab * s->top_k : s->experts);  /* tid2eid or bias */
    return 2 * s->h + 2 * (mix * s->hc * s->h + mix + 3) + moe;
}

static void read_deepseek_v4_should_count_flash_term_by_term(void **state)
{
    (void)state;
    struct fg_model *m = load(FIXTURES "deepseek-ai--DeepSeek-V4-Flash");
    const struct v4_shape s = {.h = 4096, .heads = 64, .hd = 512, .q_lora = 1024,
                               .o_groups = 8, .o_lora = 1024, .experts = 256, .top_k = 6,
                               .inter = 2048, .idx_heads = 64, .idx_dim = 128, .hc = 4,
                               .vocab = 129280, .n_hash = 3, .rate_csa = 4, .rate_hca = 128};
    /* compress_ratios: 0, 0, then 4 / 128 alternating to layer 42 (4); its 44th entry, the
     * MTP layer's, is cut */
    uint64_t want = 2 * s.vocab * s.h + s.h + s.hc * s.hc * s.h + s.hc + 1;
    for (uint64_t l = 0; l < 43; l++)
        want += v4_attention(&s, l < 2 ? 0 : l % 2 == 0 ? 4 : 128) + v4_rest_of_block(&s, l);
    assert_int_equal(want, 284334567511ull); /* the card's "284B" */
    /* the MTP module: a sliding, top-k block + enorm, hnorm, norm, e_proj, h_proj, hyper-head */
    uint64_t mtp = v4_attention(&s, 0) + v4_rest_of_block(&s, 43) + 3 * s.h + 2 * s.h * s.h +
                   s.hc * s.hc * s.h + s.hc + 1;
    assert_int_equal(rule(m, "MTP modules"), (int64_t)mtp);
    assert_int_equal(m->params_total, want + mtp);
    assert_int_equal(count_kind(m, FG_NODE_ATTN), 43);
    assert_int_equal(count_kind(m, FG_NODE_MOE), 43);
    assert_int_equal(m->kv_heads, 1);
    assert_int_equal(m->params_buffers, 3 * s.vocab * s.top_k + 40 * s.experts);
    /* FP8 scales and FP4 experts: the stored count is unsure, not what is loaded */
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_true(m->unsure_count_only);
    assert_string_equal(m->unsure_key, "quantization_config");
    uint64_t flash = m->params_total;
    fg_model_free(m);
    /* nvidia's ModelOpt repack (NVFP4 experts) differs only in quantization_config */
    m = load(FIXTURES "nvidia--DeepSeek-V4-Flash-NVFP4");
    assert_int_equal(m->params_total, flash);
    assert_true(m->unsure_count_only);
    assert_string_equal(m->unsure_key, "quantization_config");
    fg_model_free(m);
}

static void read_deepseek_v4_should_place_compressors_and_hash_routers_by_layer(void **state)
{
    (void)state;
    struct fg_model *m = load(FIXTURES "deepseek-ai--DeepSeek-V4-Flash");
    const struct fg_node *a0 = node_of_layer(m, FG_NODE_ATTN, 0);
    const struct fg_node *a2 = node_of_layer(m, FG_NODE_ATTN, 2);
    assert_non_null(a0);
    assert_non_null(a2);
    assert_int_equal(a0->window, 128);          /* sliding only */
    assert_int_equal(a2->window, 0);            /* CSA: compressed entries over the sequence */
    assert_int_equal(lin(a2, "o_a")->in, 64 * 512 / 8);
    assert_int_equal(lin(a2, "o_a")->out, 8 * 1024);
    const struct fg_node *c3 = NULL;
    for (size_t i = 0; i < m->n_nodes; i++)
        if (m->nodes[i].layer == 3 && strncmp(m->nodes[i].name, "Compressor", 10) == 0)
            c3 = &m->nodes[i];
    assert_non_null(c3);
    assert_non_null(lin(c3, "cmp_kv"));
    assert_null(lin(c3, "idx_q"));              /* HCA: no indexer */
    assert_int_equal(lin(c3, "cmp_kv")->out, 512);
    size_t compressors = 0;
    for (size_t i = 0; i < m->n_nodes; i++)
        compressors += strncmp(m->nodes[i].name, "Compressor", 10) == 0;
    assert_int_equal(compressors, 41);
    assert_int_equal(node_of_layer(m, FG_NODE_MOE, 2)->buffers, 129280 * 6); /* tid2eid */
    assert_int_equal(node_of_layer(m, FG_NODE_MOE, 3)->buffers, 256);        /* score bias */
    fg_model_free(m);
}

#define V4_SMALL "{\"model_type\": \"deepseek_v4\", \"num_hidden_layers\": 4, " \
                 "\"num_nextn_predict_layers\": 0, "

static void read_deepseek_v4_should_take_the_class_layer_types_when_none_given(void **state)
{
    (void)state;
    /* __post_init__: 2 x HCA, then CSA at odd indices of the rest; 3 hash_moe layers */
    struct fg_model *m = built(V4_SMALL "\"hidden_size\": 512}");
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    const char *want[] = {"HCA 1/128", "HCA 1/128", "HCA 1/128", "CSA 1/4 + indexer"};
    size_t seen = 0;
    for (size_t i = 0; i < m->n_nodes; i++)
        if (strncmp(m->nodes[i].name, "Compressor", 10) == 0) {
            assert_true(seen < 4);
            assert_string_equal(m->nodes[i].desc, want[seen++]);
        }
    assert_int_equal(seen, 4);
    assert_int_equal(node_of_layer(m, FG_NODE_MOE, 2)->buffers, 129280 * 6);
    assert_int_equal(node_of_layer(m, FG_NODE_MOE, 3)->buffers, 256);
    fg_model_free(m);
    /* layer_types and mlp_layer_types over the legacy keys */
    m = built(V4_SMALL "\"hidden_size\": 512, \"compress_ratios\": [4, 4, 4, 4], "
              "\"layer_types\": [\"sliding_attention\", \"sliding_attention\", "
              "\"sliding_attention\", \"compressed_sparse_attention\"], "
              "\"mlp_layer_types\": [\"moe\", \"moe\", \"moe\", \"hash_moe\"]}");
    assert_int_equal(node_of_layer(m, FG_NODE_ATTN, 0)->window, 128);
    assert_int_equal(node_of_layer(m, FG_NODE_MOE, 0)->buffers, 256);
    assert_int_equal(node_of_layer(m, FG_NODE_MOE, 3)->buffers, 129280 * 6);
    fg_model_free(m);
}

static void read_deepseek_v4_should_size_the_mtp_block_by_its_compress_ratio(void **state)
{
    (void)state;
    /* compress_ratios' entry past the layers is the MTP layer's: 4 adds a CSA compressor */
    const char *base = "{\"model_type\": \"deepseek_v4\", \"num_hidden_layers\": 4, "
                       "\"hidden_size\": 512, \"compress_ratios\": [0, 0, 4, 128, %d]}";
    char json[256];
    snprintf(json, sizeof json, base, 0);
    struct fg_model *m = built(json);
    int64_t sliding = rule(m, "MTP modules");
    fg_model_free(m);
    snprintf(json, sizeof json, base, 4);
    m = built(json);
    uint64_t h = 512, hd = 512, id = 128;
    uint64_t csa = 2 * h * 2 * hd + 4 * 2 * hd + hd + 2 * h * 2 * id + 4 * 2 * id + id +
                   1024ull * 64 * id + h * 64;
    assert_int_equal(rule(m, "MTP modules") - sliding, (int64_t)csa);
    fg_model_free(m);
}

static void read_deepseek_v4_should_reject_a_ratio_without_a_layer_type(void **state)
{
    (void)state;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(build(V4_SMALL "\"compress_ratios\": [0, 0, 8, 4]}", &m, &err), FG_E_RANGE);
    assert_non_null(strstr(err.detail, "compress_ratios"));
    assert_null(m);
    assert_int_equal(build(V4_SMALL "\"compress_ratios\": [0, 4]}", &m, &err), FG_E_RANGE);
    assert_non_null(strstr(err.detail, "2 entries for 4 layers"));
    assert_int_equal(build(V4_SMALL "\"o_groups\": 7}", &m, &err), FG_E_RANGE);
    assert_non_null(strstr(err.detail, "o_groups"));
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
        cmocka_unit_test(read_moe_should_count_mimo_v2_flash_term_by_term),
        cmocka_unit_test(read_moe_should_read_mimo_v2_flash_layer_lists_in_either_form),
        cmocka_unit_test(read_moe_should_count_glm4_moe_layers_router_buffers_and_mtp),
        cmocka_unit_test(read_moe_should_store_ernie_router_bias_in_every_moe_layer),
        cmocka_unit_test(read_moe_should_count_olmoe_q_k_norms_over_all_heads),
        cmocka_unit_test(read_moe_should_give_phimoe_layernorm_biases_and_a_biased_head),
        cmocka_unit_test(read_moe_should_add_granitemoeshared_shared_mlp_only_when_sized),
        cmocka_unit_test(read_moe_should_drop_the_indexers_glm5_2_marks_shared),
        cmocka_unit_test(add_moe_should_count_each_part_the_shape_names),
        cmocka_unit_test(add_mla_should_count_the_latent_projections_and_their_norms),
        cmocka_unit_test(read_mla_should_take_the_class_q_lora_rank_only_when_absent),
        cmocka_unit_test(read_moe_should_count_mistral4_text_model_of_mistral_small_4),
        cmocka_unit_test(read_deepseek_v4_should_count_flash_term_by_term),
        cmocka_unit_test(read_deepseek_v4_should_place_compressors_and_hash_routers_by_layer),
        cmocka_unit_test(read_deepseek_v4_should_take_the_class_layer_types_when_none_given),
        cmocka_unit_test(read_deepseek_v4_should_size_the_mtp_block_by_its_compress_ratio),
        cmocka_unit_test(read_deepseek_v4_should_reject_a_ratio_without_a_layer_type),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
