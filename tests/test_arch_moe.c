/*
 * test_arch_moe.c - the mixture-of-experts and latent-attention readers
 * (engine/arch/moe/moe_mla.c): graph shape on real configs from tests/fixtures,
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
