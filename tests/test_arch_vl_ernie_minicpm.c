/*
 * test_arch_vl_ernie_minicpm.c - the 2026 vision-language readers: ERNIE-4.5-VL
 * (engine/arch/vision/ernie4_5_vl.c; Baidu's released configs, the remote code's
 * ernie4_5_moe_vl, and transformers' nested ernie4_5_vl_moe) and MiniCPM-V 4.6
 * (engine/arch/vision/minicpmv4_6.c), each count written out term by term from the
 * transformers class (huggingface/transformers@decba1d2ea) and the published total where one
 * is known.
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

#include <cjson/cJSON.h>

#include "model/model.h"

/* The vision tower (depth 32 x 1280, fc 5120, patch 14, 3 channels) and the resampler
 * (spatial_dim 5120, temporal_dim 10240) into a text hidden of H. */
static uint64_t tower_and_resampler(uint64_t H)
{
    const uint64_t h = 1280, f = 5120, sd = 5120, td = 10240;
    /* norm1 / norm2 LayerNorms, qkv + proj biased, fc1 / fc2 biased */
    const uint64_t block = 4 * h + (h * 3 * h + 3 * h) + (h * h + h) + (h * f + f) + (f * h + h);
    const uint64_t tower = 32 * block + 3ull * 14 * 14 * h + 2 * h; /* patch_embed, ln */
    /* spatial fc1 / fc2, temporal fc2; temporal fc1 from td; mlp; two LayerNorms; after_norm */
    const uint64_t resampler = 3 * (sd * sd + sd) + (td * sd + sd) + (sd * H + H) + 4 * sd + H;
    return tower + resampler;
}

/* One Ernie4_5_VLMoeMoeBlock: text_moe and vision_moe, each router (E, H) + correction bias
 * (1, E) + E experts of gate_up / down; shared experts of shared x text width. */
static uint64_t moe_block(uint64_t H, uint64_t E, uint64_t wt, uint64_t wv, uint64_t shared)
{
    return 2 * (E * H + E) + E * 3 * H * wt + E * 3 * H * wv + 3 * H * shared * wt;
}

#define ERNIE_28B "tests/fixtures/models/baidu--ERNIE-4.5-VL-28B-A3B-Base-PT"

/* ERNIE-4.5-VL-28B-A3B: 28 layers of 2560 (GQA 20/4 x 128, no biases), layer 0 dense of
 * 12288, layers 1-27 MoE (moe_layer_start_index [1, 1], end [29, 28]: max 29 past the last)
 * of 64 + 64 experts, 1536 / 512 wide, top-6, two shared; tied head. */
static const uint64_t H28 = 2560;

static uint64_t ernie_28b(void)
{
    const uint64_t H = H28, V = 103424;
    const uint64_t attn = 2 * H * H + 2 * H * 4 * 128 + 2 * H; /* q, o, k, v, two norms */
    const uint64_t text = V * H + 28 * attn + 3 * H * 12288 + 27 * moe_block(H, 64, 1536, 512, 2) +
                          H;
    return text + tower_and_resampler(H);
}

static void read_ernie4_5_moe_vl_should_count_both_expert_sets_the_tower_and_resampler(
    void **state)
{
    (void)state;
    struct fg_model *m = load(ERNIE_28B);
    assert_int_equal(m->params_total, ernie_28b());
    assert_int_equal(m->params_total, 29399294336ull);
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    assert_int_equal(m->nodes[0].kind, FG_NODE_VISION); /* the tower runs first */
    assert_int_equal(m->experts, 64);
    assert_int_equal(m->top_k, 6);
    assert_int_equal(m->kv_heads, 4);
    assert_true(m->tied);
    fg_model_free(m);
}

/* ERNIE-4.5-VL-424B-A47B: 54 layers of 8192 (GQA 64/8 x 128), moe_layer_start_index 3 as
 * one int and no end index (the last layer), 64 + 64 experts of 3584 / 1536, top-8, no
 * moe_num_shared_experts (the conversion's None: none), untied head. */
static void read_ernie4_5_moe_vl_should_place_moe_from_int_indices_and_untie_the_head(
    void **state)
{
    (void)state;
    struct fg_model *m = load("tests/fixtures/models/baidu--ERNIE-4.5-VL-424B-A47B-Paddle");
    const uint64_t H = 8192, V = 103424;
    const uint64_t attn = 2 * H * H + 2 * H * 8 * 128 + 2 * H;
    const uint64_t text = 2 * V * H + 54 * attn + 3 * (3 * H * 28672) +
                          51 * moe_block(H, 64, 3584, 1536, 0) + H;
    assert_int_equal(m->params_total, text + tower_and_resampler(H));
    assert_int_equal(m->params_total, 423526285184ull);
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    assert_int_equal(m->top_k, 8);
    assert_false(m->tied);
    fg_model_free(m);
}

/* The 28B's shapes as transformers' conversion script writes them (text_config /
 * vision_config of Ernie4_5_VLMoeConfig). */
#define NATIVE_TEXT(extra)                                                                     \
    "\"text_config\": {\"model_type\": \"ernie4_5_vl_moe_text\", \"hidden_size\": 2560, "      \
    "\"intermediate_size\": 12288, \"num_hidden_layers\": 28, \"num_attention_heads\": 20, "   \
    "\"num_key_value_heads\": 4, \"vocab_size\": 103424, \"moe_intermediate_size\": [1536, "   \
    "512], \"moe_k\": 6, \"moe_num_experts\": 64, \"moe_num_shared_experts\": 2, "             \
    "\"use_bias\": false, \"tie_word_embeddings\": true" extra "}"
#define NATIVE_VISION                                                                          \
    "\"vision_config\": {\"model_type\": \"ernie4_5_vl_moe_vision\", \"depth\": 32, "           \
    "\"hidden_size\": 1280, \"intermediate_size\": 5120, \"num_heads\": 16, "                  \
    "\"in_channels\": 3, \"patch_size\": 14, \"spatial_merge_size\": 2, "                      \
    "\"temporal_merge_size\": 2}"

static void read_ernie4_5_vl_moe_should_read_the_nested_config_as_the_release(void **state)
{
    (void)state;
    const uint64_t want = ernie_28b(), table = 103424ull * H28;
    /* mlp_layer_types absent: dense then sparse, the release's layout */
    assert_int_equal(exact_count("{\"model_type\": \"ernie4_5_vl_moe\", " NATIVE_TEXT("") ", "
                                 NATIVE_VISION "}"),
                     want);
    /* every default: Ernie4_5_VLMoeTextConfig / VisionConfig are the 28B; the tower the
     * class builds without vision_config may not be the checkpoint's (unsure) */
    struct fg_model *m = built("{\"model_type\": \"ernie4_5_vl_moe\"}");
    assert_int_equal(m->params_total, want);
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    fg_model_free(m);
    /* mlp_layer_types places the MoE blocks: a second dense layer swaps one for an MLP */
    char json[2048], types[512] = "[\"dense\", \"dense\"";
    for (int i = 2; i < 28; i++)
        strcat(types, ", \"sparse\"");
    strcat(types, "]");
    snprintf(json, sizeof json, "{\"model_type\": \"ernie4_5_vl_moe\", "
             NATIVE_TEXT(", \"mlp_layer_types\": %s") ", " NATIVE_VISION "}", types);
    assert_int_equal(exact_count(json),
                     want - moe_block(H28, 64, 1536, 512, 2) + 3 * H28 * 12288);
    /* the root's tie_word_embeddings unties lm_head whatever text_config says */
    assert_int_equal(exact_count("{\"model_type\": \"ernie4_5_vl_moe\", \"tie_word_embeddings\": "
                                 "false, " NATIVE_TEXT("") ", " NATIVE_VISION "}"),
                     want + table);
}

/* Expert counts the conversion cannot keep (a different vision count) leave the count
 * unsure; an mlp_layer_types entry other than dense / sparse is refused. */
static void read_ernie4_5_vl_should_doubt_what_the_conversion_cannot_express(void **state)
{
    (void)state;
    struct fg_model *m = built("{\"model_type\": \"ernie4_5_moe_vl\", \"moe_num_experts\": "
                               "[64, 32], \"moe_intermediate_size\": [1536, 512], "
                               "\"moe_layer_start_index\": 1, \"vision_config\": {}}");
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_string_equal(m->unsure_key, "moe_num_experts");
    fg_model_free(m);
    /* a remote-code switch the conversion drops, on, adds what is not sized */
    m = built("{\"model_type\": \"ernie4_5_moe_vl\", \"mm_vocab_size\": 1024, "
              "\"vision_config\": {}}");
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_string_equal(m->unsure_key, "mm_vocab_size");
    fg_model_free(m);
    struct fg_err err = {0};
    assert_int_equal(build("{\"model_type\": \"ernie4_5_vl_moe\", "
                           "\"text_config\": {\"num_hidden_layers\": 2, "
                           "\"mlp_layer_types\": [\"dense\", \"mixed\"]}}", &m, &err),
                     FG_E_RANGE);
    assert_non_null(strstr(err.detail, "mlp_layer_types"));
}

/* ---- MiniCPM-V 4.6 ------------------------------------------------------------------ */

#define MINICPM "openbmb--MiniCPM-V-4.6"

/* MiniCPMV4_6VisionModel at MiniCPM-V 4.6's shapes (27 x 1152, fc 4304, image 980 / patch 14,
 * window 2 x 2) and one MiniCPMV4_6DownsampleMLP into a text hidden of H. */
static uint64_t minicpm_tower(uint64_t H)
{
    const uint64_t h = 1152, f = 4304, wh = 4 * h, wi = 4 * f;
    const uint64_t attn = 4 * (h * h + h);
    const uint64_t layer = 4 * h + attn + (h * f + f) + (f * h + h);
    const uint64_t tower = 27 * layer + (3ull * 14 * 14 * h + h) + 70ull * 70 * h + 2 * h;
    /* vit_merger: self_attn, layer_norm1, pre_norm, linear_1, linear_2 */
    const uint64_t window = attn + 2 * h + 2 * wh + (wh * wi + wi) + (wi * h + h);
    const uint64_t merger = 2 * 4 * h + (4 * h * 4 * h + 4 * h) + (4 * h * H + H);
    return tower + window + merger;
}

/* The fixture's config as a cJSON tree the caller deletes (its image_size rewritten to
 * its own value). */
static cJSON *minicpm_json(void)
{
    char *root = fixture_config_with(MINICPM, "image_size", 1120);
    cJSON *j = cJSON_Parse(root);
    free(root);
    assert_non_null(j);
    return j;
}

/* The count of j (deleted), which must read exact. */
static uint64_t exact_json(cJSON *j)
{
    char *text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    assert_non_null(text);
    uint64_t n = exact_count(text);
    free(text);
    return n;
}

/* The fixture's text_config alone without MTP layers, as qwen3_5_text reads it. */
static uint64_t minicpm_text(void)
{
    cJSON *j = minicpm_json();
    cJSON *t = cJSON_DetachItemFromObjectCaseSensitive(j, "text_config");
    cJSON_Delete(j);
    assert_non_null(t);
    cJSON_ReplaceItemInObjectCaseSensitive(t, "mtp_num_hidden_layers", cJSON_CreateNumber(0));
    return exact_json(t);
}

/* MiniCPM-V 4.6: the tower and mergers above around qwen3_5_text built by AutoModel, which
 * holds no MTP layer: the published 1,300,428,016 is the graph without the one its text config
 * declares (20,452,864 more with it). */
static void read_minicpmv4_6_should_count_the_tower_mergers_and_the_text_model_without_mtp(
    void **state)
{
    (void)state;
    struct fg_model *m = load("tests/fixtures/models/" MINICPM);
    assert_int_equal(m->params_total, minicpm_text() + minicpm_tower(1024));
    assert_int_equal(m->params_total, 1300428016ull);
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    assert_int_equal(m->nodes[0].kind, FG_NODE_VISION);
    assert_true(m->tied);
    fg_model_free(m);
    /* the root's tie_word_embeddings unties lm_head whatever text_config says */
    cJSON *j = minicpm_json();
    cJSON_ReplaceItemInObjectCaseSensitive(j, "tie_word_embeddings", cJSON_CreateFalse());
    assert_int_equal(exact_json(j), 1300428016ull + 248094ull * 1024);
    /* merger_times 2: one more MiniCPMV4_6DownsampleMLP, 4h -> 4h -> h, before the last */
    const uint64_t h = 1152;
    j = minicpm_json();
    cJSON_AddNumberToObject(j, "merger_times", 2);
    assert_int_equal(exact_json(j),
                     1300428016ull + 2 * 4 * h + (4 * h * 4 * h + 4 * h) + (4 * h * h + h));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            read_ernie4_5_moe_vl_should_count_both_expert_sets_the_tower_and_resampler),
        cmocka_unit_test(
            read_ernie4_5_moe_vl_should_place_moe_from_int_indices_and_untie_the_head),
        cmocka_unit_test(read_ernie4_5_vl_moe_should_read_the_nested_config_as_the_release),
        cmocka_unit_test(read_ernie4_5_vl_should_doubt_what_the_conversion_cannot_express),
        cmocka_unit_test(
            read_minicpmv4_6_should_count_the_tower_mergers_and_the_text_model_without_mtp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
