/*
 * test_arch_vl.c - the vision-language readers of engine/arch/vision/ (GLM-V, LLaVA-NeXT-
 * Video, VipLLaVA, LFM2-VL, Cohere2-Vision, Idefics2): each tower and projector written out
 * term by term from its transformers class at a release's shapes, the text model counted by
 * its own reader (tested in its own file), and the published total where one is known.
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

/* ---- GLM-V ------------------------------------------------------------------------- */

/* GLM-4.1V-9B-Thinking / GLM-4.6V-Flash: the text keys in the root (Glm4vConfig passes
 * them to Glm4vTextConfig), the vision tower in vision_config. */
#define GLM41V_TEXT                                                                            \
    "\"hidden_size\": 4096, \"intermediate_size\": 13696, \"num_hidden_layers\": 40, "         \
    "\"num_attention_heads\": 32, \"num_key_value_heads\": 2, \"vocab_size\": 151552, "        \
    "\"attention_bias\": true, \"tie_word_embeddings\": false, \"partial_rotary_factor\": 0.5"
#define GLM_VISION(inter)                                                                      \
    "\"vision_config\": {\"hidden_size\": 1536, \"depth\": 24, \"num_heads\": 12, "            \
    "\"attention_bias\": false, \"intermediate_size\": " inter ", \"image_size\": 336, "       \
    "\"patch_size\": 14, \"out_hidden_size\": 4096, \"spatial_merge_size\": 2, "               \
    "\"temporal_patch_size\": 2, \"in_channels\": 3, \"hidden_act\": \"silu\"}"

/* Glm4vVisionModel + downsample + merger at GLM-4.1V's shapes (merger width inter). */
static uint64_t glm_tower(uint64_t inter)
{
    const uint64_t h = 1536, o = 4096;
    const uint64_t block = h * 3 * h + h * h + 2 * h * o + o * h + 2 * h;
    const uint64_t tower = 24 * block + (3ull * 2 * 14 * 14 * h + h) + 576 * h + 2 * h;
    const uint64_t proj = (h * 4 * o + o) + o * o + 2 * o * inter + inter * o + 2 * o;
    return tower + proj;
}

static void read_glm4v_should_count_the_glm4v_tower_merger_and_glm4_text(void **state)
{
    (void)state;
    struct fg_model *m = built("{\"model_type\": \"glm4v\", " GLM41V_TEXT ", " GLM_VISION("13696")
                               "}");
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    /* Glm4vTextModel: q 4096 -> 4096 and k / v 4096 -> 2 x 128, biased; o; one gate_up; four
     * RMSNorms a layer; untied lm_head */
    const uint64_t H = 4096, F = 13696;
    const uint64_t layer = (H * H + H) + 2 * (H * 256 + 256) + H * H + H * 2 * F + F * H + 4 * H;
    const uint64_t text = 2 * 151552ull * H + 40 * layer + H;
    assert_int_equal(m->params_total, text + glm_tower(F));
    /* zai-org/GLM-4.6V-Flash (Glm4vForConditionalGeneration, these shapes): 10,292,777,472,
     * its safetensors total, and the base count a LoRA run's log prints (10,327,562,752 all
     * params = 10,292,777,472 + 34,785,280 trainable) */
    assert_int_equal(m->params_total, 10292777472ull);
    assert_int_equal(count_kind(m, FG_NODE_VISION), 1);
    assert_int_equal(m->nodes[0].kind, FG_NODE_VISION);  /* the tower runs first */
    fg_model_free(m);
    /* the text class hard-codes the q/k/v biases and head_dim = hidden / heads: neither
     * attention_bias false nor a head_dim changes the count; a missing num_key_value_heads is
     * Glm4vTextConfig's 2, not the head count */
    assert_int_equal(exact_count("{\"model_type\": \"glm4v\", " GLM41V_TEXT ", \"head_dim\": 64, "
                           "\"attention_bias\": false, " GLM_VISION("13696") "}"),
                     10292777472ull);
    uint64_t no_kv = exact_count("{\"model_type\": \"glm4v\", \"hidden_size\": 4096, "
                           "\"intermediate_size\": 13696, \"num_hidden_layers\": 40, "
                           "\"num_attention_heads\": 32, \"vocab_size\": 151552, "
                           GLM_VISION("13696") "}");
    assert_int_equal(no_kv, 10292777472ull);
    /* the same text keys under text_config */
    assert_int_equal(exact_count("{\"model_type\": \"glm4v\", \"text_config\": {" GLM41V_TEXT "}, "
                           GLM_VISION("13696") "}"),
                     10292777472ull);
}

/* GLM-4.5V / GLM-4.6V: GLM-4.5-Air's MoE text model in text_config. */
#define GLM45V_TEXT(vocab, extra)                                                              \
    "\"text_config\": {\"model_type\": \"glm4v_moe_text\", \"attention_bias\": true, "         \
    "\"first_k_dense_replace\": 1, \"head_dim\": 128, \"hidden_size\": 4096, "                 \
    "\"intermediate_size\": 10944, \"moe_intermediate_size\": 1408, \"n_routed_experts\": 128, " \
    "\"n_shared_experts\": 1, \"num_attention_heads\": 96, \"num_experts_per_tok\": 8, "       \
    "\"num_hidden_layers\": 46, \"num_key_value_heads\": 8, \"vocab_size\": " vocab ", "      \
    "\"tie_word_embeddings\": false" extra "}"

static void read_glm4v_moe_should_count_air_blocks_without_mtp(void **state)
{
    (void)state;
    /* Glm4MoeAttention without q/k norms, the dense first layer, 45 MoE layers of 128 + 1
     * shared experts of 1408 with the router and its correction bias (test_arch_moe.c's
     * GLM-4.5-Air terms), no MTP layer */
    const uint64_t attn = 4096ull * 12288 + 12288 + 2 * (4096ull * 1024 + 1024) + 12288ull * 4096;
    const uint64_t dense = 3ull * 4096 * 10944;
    const uint64_t moe = 128ull * 4096 + 128 + 129ull * 3 * 4096 * 1408;
    const uint64_t emb = 151552ull * 4096;
    const uint64_t text = emb + (attn + 2 * 4096 + dense) + 45 * (attn + 2 * 4096 + moe) + 4096 +
                          emb;
    uint64_t n = exact_count("{\"model_type\": \"glm4v_moe\", " GLM45V_TEXT("151552", "") ", "
                       GLM_VISION("10944") "}");
    assert_int_equal(n, text + glm_tower(10944));
    /* zai-org/GLM-4.6V: 107,710,933,120, its safetensors total (107.7B) */
    assert_int_equal(n, 107710933120ull);
    /* Glm4vMoeTextModel builds num_hidden_layers layers: a num_nextn_predict_layers the text
     * config carries adds none, and use_qk_norm (dropped by the class) no norms */
    assert_int_equal(exact_count("{\"model_type\": \"glm4v_moe\", "
                           GLM45V_TEXT("151552", ", \"num_nextn_predict_layers\": 1, "
                                                 "\"use_qk_norm\": true") ", "
                           GLM_VISION("10944") "}"),
                     n);
    /* Glm4vMoeTextConfig's vocab default is 151424, not Glm4MoeConfig's 151552 */
    const char *no_vocab = "{\"model_type\": \"glm4v_moe\", \"text_config\": {"
                           "\"model_type\": \"glm4v_moe_text\", \"first_k_dense_replace\": 1, "
                           "\"head_dim\": 128, \"hidden_size\": 4096, \"intermediate_size\": "
                           "10944, \"moe_intermediate_size\": 1408, \"n_routed_experts\": 128, "
                           "\"n_shared_experts\": 1, \"num_attention_heads\": 96, "
                           "\"num_experts_per_tok\": 8, \"num_hidden_layers\": 46, "
                           "\"num_key_value_heads\": 8}, " GLM_VISION("10944") "}";
    assert_int_equal(exact_count(no_vocab), n - 2 * 128ull * 4096);
}

static void read_glm46v_should_pick_the_text_model_by_its_type(void **state)
{
    (void)state;
    assert_int_equal(exact_count("{\"model_type\": \"glm46v\", \"text_config\": {\"model_type\": "
                           "\"glm4v_text\", " GLM41V_TEXT "}, " GLM_VISION("13696") "}"),
                     10292777472ull);
    assert_int_equal(exact_count("{\"model_type\": \"glm46v\", " GLM45V_TEXT("151552", "") ", "
                           GLM_VISION("10944") "}"),
                     107710933120ull);
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(build("{\"model_type\": \"glm46v\", \"text_config\": {\"model_type\": "
                           "\"llama\"}, " GLM_VISION("13696") "}", &m, &err),
                     FG_E_UNSUPPORTED);
    assert_non_null(strstr(err.detail, "text_config.model_type' is 'llama'"));
    assert_null(m);
}

/* ---- LLaVA-NeXT-Video, VipLLaVA --------------------------------------------------------- */

/* llava-hf/LLaVA-NeXT-Video-7B-hf and vip-llava-7b-hf: a 7B llama (vocab 32064) and CLIP
 * ViT-L/14 at 336 px. */
#define LLAMA7B                                                                                \
    "\"text_config\": {\"model_type\": \"llama\", \"hidden_size\": 4096, "                     \
    "\"intermediate_size\": 11008, \"num_hidden_layers\": 32, \"num_attention_heads\": 32, "   \
    "\"num_key_value_heads\": 32, \"vocab_size\": 32064, \"tie_word_embeddings\": false}"
#define CLIP_L336                                                                              \
    "\"vision_config\": {\"model_type\": \"clip_vision_model\", \"hidden_size\": 1024, "       \
    "\"intermediate_size\": 4096, \"num_hidden_layers\": 24, \"num_attention_heads\": 16, "    \
    "\"image_size\": 336, \"patch_size\": 14, \"projection_dim\": 768}"

/* CLIPVisionModel: q/k/v/o, fc1 / fc2 and two LayerNorms a layer, all biased; the bias-free
 * stem, class embedding, 577 positions, pre / post LayerNorms. */
static uint64_t clip_l336(void)
{
    const uint64_t h = 1024, f = 4096;
    return 24 * (4 * (h * h + h) + (h * f + f) + (f * h + h) + 4 * h) + 3 * 14 * 14 * h + h +
           577 * h + 4 * h;
}

/* zai-org/GLM-OCR (tests/fixtures/models): GlmOcrForConditionalGeneration at transformers
 * decba1d2ea, term by term from modeling_glm_ocr.py. */
static void read_glm_ocr_should_count_the_ocr_tower_merger_and_unbiased_glm4_text(void **state)
{
    (void)state;
    struct fg_model *m = load("tests/fixtures/models/zai-org--GLM-OCR");
    /* GlmOcrVisionModel: 24 blocks of 1024 (16 heads of 64): qkv and proj biased, q_norm /
     * k_norm over 64, gate / up / down of 4096 biased, norm1 / norm2; Conv3d stem with bias,
     * post_layernorm */
    const uint64_t h = 1024, f = 4096, o = 1536;
    const uint64_t block = (h * 3 * h + 3 * h) + (h * h + h) + 2 * 64 +
                           (2 * (h * f + f) + f * h + h) + 2 * h;
    const uint64_t tower = 24 * block + (3ull * 2 * 14 * 14 * h + h) + h;
    /* downsample Conv2d 1024 x 2 x 2 -> 1536 with bias; GlmOcrVisionPatchMerger: proj, a
     * LayerNorm, gate / up to 1536 x in_channels 3 and down, no biases */
    const uint64_t proj = (4 * h * o + o) + o * o + 2 * o + 3 * o * (3 * o);
    /* GlmOcrTextModel: q 1536 -> 16 x 128, k / v -> 8 x 128, o back, no biases; gate_up
     * 1536 -> 2 x 4608, down; four RMSNorms; final norm; untied lm_head over 59392 */
    const uint64_t H = 1536, F = 4608, V = 59392;
    const uint64_t layer = H * 2048 + 2 * H * 1024 + 2048 * H + 3 * H * F + 4 * H;
    const uint64_t text = 2 * V * H + 16 * layer + H;
    /* model.language_model.layers.16.*, which GlmOcrPreTrainedModel skips on load: one
     * decoder layer, enorm, hnorm, eh_proj 3072 -> 1536, shared_head.norm */
    const uint64_t mtp = layer + 2 * H * H + 3 * H;
    /* and its own embed_tokens and shared_head.head, 59392 x 1536 each */
    const uint64_t copies = 2 * V * H;
    assert_int_equal(m->params_total, tower + proj + text + mtp + copies);
    /* the Hub's safetensors total for zai-org/GLM-OCR (revision ca5d8b3e, 2,650,579,464
     * bytes of BF16 weights), quoted in two files of the code index */
    assert_int_equal(m->params_total, 1325258240ull);
    assert_int_equal(first_of(m, FG_NODE_VISION)->params, tower);
    assert_int_equal(rule_with(m, "MTP layers:")->scalars, (int64_t)mtp);
    assert_int_equal(rule_with(m, "MTP layers store")->scalars, (int64_t)copies);
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_true(m->unsure_count_only);
    assert_string_equal(m->unsure_key, "num_nextn_predict_layers");
    fg_model_free(m);
}

static void read_llava_next_video_should_add_the_pooler_only_when_it_convolves(void **state)
{
    (void)state;
    const uint64_t text = exact_count("{\"model_type\": \"llama\", \"hidden_size\": 4096, "
                                "\"intermediate_size\": 11008, \"num_hidden_layers\": 32, "
                                "\"num_attention_heads\": 32, \"vocab_size\": 32064}");
    /* LlavaNextMultiModalProjector 1024 -> 4096 -> 4096 with biases, image_newline 4096 */
    const uint64_t proj = (1024ull * 4096 + 4096) + (4096ull * 4096 + 4096) + 4096;
    uint64_t n = exact_count("{\"model_type\": \"llava_next_video\", \"spatial_pool_mode\": "
                       "\"average\", \"spatial_pool_stride\": 2, " LLAMA7B ", " CLIP_L336 "}");
    assert_int_equal(n, text + clip_l336() + proj);
    /* spatial_pool_mode conv: Conv2d 1024 -> 1024 over 2 x 2, with bias */
    assert_int_equal(exact_count("{\"model_type\": \"llava_next_video\", \"spatial_pool_mode\": "
                           "\"conv\", " LLAMA7B ", " CLIP_L336 "}"),
                     n + 1024ull * 4 * 1024 + 1024);
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(build("{\"model_type\": \"llava_next_video\", \"spatial_pool_mode\": "
                           "\"median\", " LLAMA7B ", " CLIP_L336 "}", &m, &err),
                     FG_E_UNSUPPORTED);
    assert_non_null(strstr(err.detail, "spatial_pool_mode' is 'median'"));
}

/* LlavaConfig.__post_init__ builds CONFIG_MAPPING["clip_vision_model"](hidden_size=1024,
 * ..., image_size=336) for an absent vision_config: that tower is counted (and loaded), the
 * count unsure, as the checkpoint of a trimmed config may hold another. */
static void read_llava_should_count_the_class_default_tower_of_an_absent_vision_config(
    void **state)
{
    (void)state;
    const uint64_t whole = exact_count("{\"model_type\": \"llava\", " LLAMA7B ", " CLIP_L336 "}");
    struct fg_model *m = built("{\"model_type\": \"llava\", " LLAMA7B "}");
    assert_int_equal(m->params_total, whole);
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_string_equal(m->unsure_key, "vision_config");
    assert_false(m->unsure_count_only);
    fg_model_free(m);
}

static void read_vipllava_should_norm_and_project_every_feature_layer(void **state)
{
    (void)state;
    const uint64_t text = exact_count("{\"model_type\": \"llama\", \"hidden_size\": 4096, "
                                "\"intermediate_size\": 11008, \"num_hidden_layers\": 32, "
                                "\"num_attention_heads\": 32, \"vocab_size\": 32064}");
    /* five feature layers: LayerNorm 5 x 1024, linear_1 5120 -> 4096, linear_2, biased */
    const uint64_t w = 5 * 1024;
    const uint64_t proj = 2 * w + (w * 4096 + 4096) + (4096ull * 4096 + 4096);
    assert_int_equal(exact_count("{\"model_type\": \"vipllava\", \"vision_feature_layers\": "
                           "[-2, -5, -8, -11, 6], \"projector_layernorm_eps\": 1e-05, " LLAMA7B
                           ", " CLIP_L336 "}"),
                     text + clip_l336() + proj);
    /* VipLlavaConfig's default list is the same five layers; one int is one layer */
    assert_int_equal(exact_count("{\"model_type\": \"vipllava\", " LLAMA7B ", " CLIP_L336 "}"),
                     text + clip_l336() + proj);
    assert_int_equal(exact_count("{\"model_type\": \"vipllava\", \"vision_feature_layers\": -2, "
                           LLAMA7B ", " CLIP_L336 "}"),
                     text + clip_l336() + 2 * 1024 + (1024ull * 4096 + 4096) +
                         (4096ull * 4096 + 4096));
}

/* ---- LFM2-VL --------------------------------------------------------------------------- */

/* LiquidAI/LFM2-1.2B's text shapes (tests/fixtures/models/LiquidAI--LFM2-1.2B) and
 * LFM2-350M's. */
#define LFM2_1_2B                                                                              \
    "{\"model_type\": \"lfm2\", \"block_auto_adjust_ff_dim\": true, \"block_dim\": 2048, "     \
    "\"block_ff_dim\": 12288, \"block_ffn_dim_multiplier\": 1.0, \"block_multiple_of\": 256, " \
    "\"conv_L_cache\": 3, \"conv_bias\": false, \"full_attn_idxs\": [2, 5, 8, 10, 12, 14], "   \
    "\"hidden_size\": 2048, \"num_attention_heads\": 32, \"num_hidden_layers\": 16, "          \
    "\"num_key_value_heads\": 8, \"vocab_size\": 65536}"
#define LFM2_350M                                                                              \
    "{\"model_type\": \"lfm2\", \"block_auto_adjust_ff_dim\": true, \"block_ff_dim\": 6656, "  \
    "\"block_ffn_dim_multiplier\": 1.0, \"block_multiple_of\": 256, \"conv_L_cache\": 3, "     \
    "\"conv_bias\": false, \"full_attn_idxs\": [2, 5, 8, 10, 12, 14], \"hidden_size\": 1024, " \
    "\"num_attention_heads\": 16, \"num_hidden_layers\": 16, \"num_key_value_heads\": 8, "     \
    "\"vocab_size\": 65536}"
#define SIGLIP2(h, f, L, heads)                                                                \
    "\"vision_config\": {\"model_type\": \"siglip2_vision_model\", \"hidden_size\": " h ", "   \
    "\"intermediate_size\": " f ", \"num_hidden_layers\": " L ", \"num_attention_heads\": "    \
    heads ", \"num_patches\": 256, \"patch_size\": 16, \"num_channels\": 3, "                  \
    "\"vision_use_head\": false}"

/* Siglip2VisionModel without its head: the SigLIP blocks, a Linear stem over 3 x 16^2 with
 * bias, 256 position rows, post_layernorm. */
static uint64_t siglip2(uint64_t h, uint64_t f, uint64_t L)
{
    return L * (4 * (h * h + h) + (h * f + f) + (f * h + h) + 4 * h) + (3 * 16 * 16 * h + h) +
           256 * h + 2 * h;
}

/* Lfm2VlMultiModalProjector: LayerNorm over h x 4, linear_1 -> 2560, linear_2 -> text. */
static uint64_t lfm2_proj(uint64_t h, uint64_t text_h)
{
    return 2 * 4 * h + (4 * h * 2560 + 2560) + (2560 * text_h + text_h);
}

static void read_lfm2_vl_should_match_the_published_totals(void **state)
{
    (void)state;
    const uint64_t t12 = exact_count(LFM2_1_2B), t350 = exact_count(LFM2_350M);
    assert_int_equal(t12, 1170340608ull);  /* LFM2-1.2B, tests/fixtures/models/truth.tsv */
    assert_int_equal(t350, 354483968ull);  /* LFM2-350M's Hub total */
    /* LFM2-VL-1.6B: SigLIP2 NaFlex shape-optimized 400M with 26 of its 27 layers */
    char json[2048];
    snprintf(json, sizeof json, "{\"model_type\": \"lfm2_vl\", \"downsample_factor\": 2, "
             "\"projector_hidden_size\": 2560, \"projector_bias\": true, \"text_config\": %.*s, "
             SIGLIP2("1152", "4304", "26", "16") "}", (int)strlen(LFM2_1_2B), LFM2_1_2B);
    uint64_t n = exact_count(json);
    assert_int_equal(n, t12 + siglip2(1152, 4304, 26) + lfm2_proj(1152, 2048));
    assert_int_equal(n, 1584804000ull);    /* LFM2-VL-1.6B's Hub total */
    /* LFM2-VL-450M: SigLIP2 NaFlex base, 12 layers */
    snprintf(json, sizeof json, "{\"model_type\": \"lfm2_vl\", \"text_config\": %s, "
             SIGLIP2("768", "3072", "12", "12") "}", LFM2_350M);
    n = exact_count(json);
    assert_int_equal(n, t350 + siglip2(768, 3072, 12) + lfm2_proj(768, 1024));
    assert_int_equal(n, 450822656ull);     /* LFM2-VL-450M's Hub total */
    /* projector_use_layernorm false drops the LayerNorm */
    snprintf(json, sizeof json, "{\"model_type\": \"lfm2_vl\", \"projector_use_layernorm\": "
             "false, \"text_config\": %s, " SIGLIP2("768", "3072", "12", "12") "}", LFM2_350M);
    assert_int_equal(exact_count(json), 450822656ull - 2 * 4 * 768);
}

/* LLaVA-OneVision's SigLIP tower at 384 px / 14 (llava-hf/llava-onevision-qwen2-7b-ov-hf):
 * the stride-14 stem drops the partial last row and column, so the table has
 * (384 // 14)^2 = 729 rows (SiglipVisionEmbeddings), the same as at 378 px; and the
 * tie_word_embeddings a save writes into vision_config sizes nothing. */
static void read_llava_onevision_should_floor_the_patch_grid_and_ignore_the_vision_tie(
    void **state)
{
    (void)state;
    static const char text[] = "\"text_config\": {\"model_type\": \"qwen2\", "
                               "\"hidden_size\": 512, \"intermediate_size\": 1024, "
                               "\"num_hidden_layers\": 2, \"num_attention_heads\": 8, "
                               "\"vocab_size\": 1000}";
    char json[1024];
    uint64_t n[4];
    static const char *const sides[] = {"384", "378", "392", "384"};
    for (int i = 0; i < 4; i++) {
        snprintf(json, sizeof json, "{\"model_type\": \"llava_onevision\", %s, "
                 "\"vision_config\": {\"model_type\": \"siglip_vision_model\", "
                 "\"hidden_size\": 256, \"intermediate_size\": 512, \"num_hidden_layers\": 2, "
                 "\"num_attention_heads\": 4, \"image_size\": %s, \"patch_size\": 14%s}}",
                 text, sides[i], i == 3 ? ", \"tie_word_embeddings\": true" : "");
        n[i] = exact_count(json);
    }
    assert_int_equal(n[0], n[1]);
    assert_int_equal(n[2] - n[1], (28 * 28 - 27 * 27) * 256);
    assert_int_equal(n[3], n[0]);
}

/* ---- Cohere2-Vision, Idefics2 ------------------------------------------------------------ */

static void read_cohere2_vision_should_count_the_swiglu_projector_without_a_norm(void **state)
{
    (void)state;
    const char *text = "{\"model_type\": \"cohere2\", \"hidden_size\": 1024, "
                       "\"intermediate_size\": 2048, \"num_hidden_layers\": 4, "
                       "\"num_attention_heads\": 8, \"num_key_value_heads\": 2, "
                       "\"vocab_size\": 4096, \"tie_word_embeddings\": true}";
    char json[2048];
    snprintf(json, sizeof json, "{\"model_type\": \"cohere2_vision\", \"downsample_factor\": 2, "
             "\"alignment_intermediate_size\": 8192, \"text_config\": %s, \"vision_config\": "
             "{\"model_type\": \"siglip_vision_model\", \"hidden_size\": 256, "
             "\"intermediate_size\": 512, \"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
             "\"image_size\": 64, \"patch_size\": 16, \"vision_use_head\": false}}", text);
    const uint64_t h = 256, f = 512;
    const uint64_t tower = 2 * (4 * (h * h + h) + (h * f + f) + (f * h + h) + 4 * h) +
                           (3 * 16 * 16 * h + h) + 16 * h + 2 * h;
    /* linear_1 256 x 4 -> 8192, linear_2 4096 -> 1024, biased */
    const uint64_t proj = (4 * h * 8192 + 8192) + (4096ull * 1024 + 1024);
    assert_int_equal(exact_count(json), exact_count(text) + tower + proj);
}

static void read_idefics2_should_count_the_connector_and_the_perceiver(void **state)
{
    (void)state;
    /* HuggingFaceM4/idefics2-8b: Mistral-7B (vocab 32003), SigLIP so400m at 980 px / 14 */
    const char *text = "{\"model_type\": \"mistral\", \"hidden_size\": 4096, "
                       "\"intermediate_size\": 14336, \"num_hidden_layers\": 32, "
                       "\"num_attention_heads\": 32, \"num_key_value_heads\": 8, "
                       "\"vocab_size\": 32003, \"tie_word_embeddings\": false}";
    char json[2048];
    snprintf(json, sizeof json, "{\"model_type\": \"idefics2\", \"text_config\": %s, "
             "\"vision_config\": {\"model_type\": \"idefics2\", \"hidden_size\": 1152, "
             "\"intermediate_size\": 4304, \"num_hidden_layers\": 27, \"num_attention_heads\": "
             "16, \"image_size\": 980, \"patch_size\": 14}, \"perceiver_config\": {"
             "\"model_type\": \"idefics2\", \"resampler_n_latents\": 64, \"resampler_depth\": 3, "
             "\"resampler_n_heads\": 16, \"resampler_head_dim\": 96, \"num_key_value_heads\": 4}}",
             text);
    const uint64_t h = 1152, f = 4304, H = 4096;
    const uint64_t tower = 27 * (4 * (h * h + h) + (h * f + f) + (f * h + h) + 4 * h) +
                           (3 * 14 * 14 * h + h) + 4900 * h + 2 * h;
    /* modality_projection 1152 -> 14336 (gate, up) -> 4096; three perceiver layers of three
     * RMSNorms, q 4096 -> 16 x 96, k / v 4096 -> 4 x 96, o, MLP 4 x 4096; 64 latents; norm */
    const uint64_t mlp = 2 * h * 14336 + 14336 * H;
    const uint64_t layer = 3 * H + H * 1536 + 2 * H * 384 + 1536 * H + 3 * H * 4 * H;
    const uint64_t proj = mlp + 3 * layer + 64 * H + H;
    uint64_t n = exact_count(json);
    assert_int_equal(n, exact_count(text) + tower + proj);
    /* Idefics2PerceiverConfig's defaults are these shapes: the same count without the block */
    snprintf(json, sizeof json, "{\"model_type\": \"idefics2\", \"text_config\": %s, "
             "\"vision_config\": {\"hidden_size\": 1152, \"intermediate_size\": 4304, "
             "\"num_hidden_layers\": 27, \"num_attention_heads\": 16, \"image_size\": 980, "
             "\"patch_size\": 14}}", text);
    assert_int_equal(exact_count(json), n);
}

/* ---- BLIP-2, InstructBLIP ---------------------------------------------------------------- */

/* Blip2VisionModel at Blip2VisionConfig's defaults (EVA ViT-g: 1408 wide, 39 layers, 6144,
 * 224 px / 14): fused qkv without bias plus q_bias and v_bias, biased projection and MLP, two
 * LayerNorms a layer; class embedding, biased stem, 257 positions, post_layernorm. */
static uint64_t eva_vit_g(void)
{
    const uint64_t h = 1408, f = 6144;
    return 39 * (h * 3 * h + 2 * h + (h * h + h) + (h * f + f) + (f * h + h) + 4 * h) + h +
           (3 * 14 * 14 * h + h) + 257 * h + 2 * h;
}

/* The Q-Former at its defaults (768 wide, 12 layers, 3072, cross-attention on the 6 even
 * layers reading the 1408-wide tower), 32 query tokens, language_projection to text_h;
 * InstructBLIP adds the text feed-forwards and word / position embeddings (vocab x 768,
 * 512 x 768). */
static uint64_t qformer(bool instruct, uint64_t vocab, uint64_t text_h)
{
    const uint64_t q = 768, f = 3072;
    const uint64_t self = 4 * (q * q + q) + 2 * q;
    const uint64_t cross = 2 * (q * q + q) + 2 * (1408 * q + q) + 2 * q;
    const uint64_t ffn = (q * f + f) + (f * q + q) + 2 * q;
    uint64_t n = 12 * (self + ffn) + 6 * cross + 32 * q + 2 * q + (q * text_h + text_h);
    if (instruct)
        n += 12 * ffn + vocab * q + 512 * q;
    return n;
}

static void read_blip2_should_count_the_tower_the_qformer_and_the_text_model(void **state)
{
    (void)state;
    /* Salesforce/blip2-opt-2.7b: OPT-2.7B (its own reader: 2,651,596,800) */
    const char *opt = "{\"model_type\": \"opt\", \"hidden_size\": 2560, \"ffn_dim\": 10240, "
                      "\"num_hidden_layers\": 32, \"num_attention_heads\": 32, \"vocab_size\": "
                      "50272, \"word_embed_proj_dim\": 2560, \"max_position_embeddings\": 2048, "
                      "\"do_layer_norm_before\": true}";
    char json[2048];
    snprintf(json, sizeof json, "{\"model_type\": \"blip-2\", \"num_query_tokens\": 32, "
             "\"text_config\": %s, \"vision_config\": {\"hidden_size\": 1408, "
             "\"num_hidden_layers\": 39}, \"qformer_config\": {\"hidden_size\": 768, "
             "\"cross_attention_frequency\": 2}}", opt);
    assert_int_equal(exact_count(opt), 2651596800ull);
    assert_int_equal(exact_count(json), 2651596800ull + eva_vit_g() + qformer(false, 0, 2560));
    /* Salesforce/blip2-flan-t5-xl: a Flan-T5-XL text model, read by the t5 reader */
    const char *t5 = "{\"model_type\": \"t5\", \"d_model\": 2048, \"d_ff\": 5120, \"d_kv\": 64, "
                     "\"num_layers\": 24, \"num_heads\": 32, \"vocab_size\": 32128, "
                     "\"feed_forward_proj\": \"gated-gelu\", \"tie_word_embeddings\": false}";
    snprintf(json, sizeof json, "{\"model_type\": \"blip-2\", \"text_config\": %s, "
             "\"vision_config\": {}}", t5);
    assert_int_equal(exact_count(json), exact_count(t5) + eva_vit_g() + qformer(false, 0, 2048));
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    snprintf(json, sizeof json, "{\"model_type\": \"blip-2\", \"text_config\": %s, "
             "\"vision_config\": {}, \"qformer_config\": {\"position_embedding_type\": "
             "\"relative_key\"}}", opt);
    assert_int_equal(build(json, &m, &err), FG_E_UNSUPPORTED);
    assert_non_null(strstr(err.detail, "position_embedding_type' is 'relative_key'"));
}

static void read_instructblip_should_add_the_qformer_text_embeddings_and_ffns(void **state)
{
    (void)state;
    /* Salesforce/instructblip-vicuna-7b: Vicuna-7B (llama, vocab 32001), Q-Former vocab 30523 */
    const char *vicuna = "{\"model_type\": \"llama\", \"hidden_size\": 4096, "
                         "\"intermediate_size\": 11008, \"num_hidden_layers\": 32, "
                         "\"num_attention_heads\": 32, \"vocab_size\": 32001, "
                         "\"tie_word_embeddings\": false}";
    char json[2048];
    snprintf(json, sizeof json, "{\"model_type\": \"instructblip\", \"num_query_tokens\": 32, "
             "\"text_config\": %s, \"vision_config\": {\"hidden_size\": 1408}, "
             "\"qformer_config\": {\"vocab_size\": 30523, \"max_position_embeddings\": 512}}",
             vicuna);
    uint64_t n = exact_count(json);
    assert_int_equal(n, exact_count(vicuna) + eva_vit_g() + qformer(true, 30523, 4096));
    /* a composed-image-retrieval study's plotting script (GitHub) lists 7913155712 as the
     * measured size of instructblip: the sum of the loaded model's parameters, not an index
     * total */
    assert_int_equal(n, 7913155712ull);
}

/* ---- Pixtral --------------------------------------------------------------------------- */

/* mistral-community/pixtral-12b (and its fine-tunes): LlavaForConditionalGeneration with a
 * Pixtral tower and a Mistral-NeMo text model; a root of type pixtral is refused. */
static void pixtral_should_be_read_through_llava_and_refused_alone(void **state)
{
    (void)state;
    const char *vision = "{\"model_type\": \"pixtral\", \"hidden_size\": 1024, "
                         "\"intermediate_size\": 4096, \"num_hidden_layers\": 24, "
                         "\"num_attention_heads\": 16, \"patch_size\": 16, \"image_size\": 1024, "
                         "\"head_dim\": 64}";
    char json[2048];
    snprintf(json, sizeof json, "{\"model_type\": \"llava\", \"projector_hidden_act\": \"gelu\", "
             "\"vision_feature_layer\": -1, \"text_config\": {\"model_type\": \"mistral\", "
             "\"hidden_size\": 5120, \"head_dim\": 128, \"intermediate_size\": 14336, "
             "\"num_hidden_layers\": 40, \"num_attention_heads\": 32, \"num_key_value_heads\": 8, "
             "\"vocab_size\": 131072, \"tie_word_embeddings\": false}, \"vision_config\": %s}",
             vision);
    /* PixtralVisionModel: bias-free patch_conv, ln_pre, q/k/v/o, gated MLP, two RMSNorms */
    const uint64_t tower = 3ull * 16 * 16 * 1024 + 1024 +
                           24 * (4ull * 1024 * 1024 + 3ull * 1024 * 4096 + 2 * 1024);
    const uint64_t proj = (1024ull * 5120 + 5120) + (5120ull * 5120 + 5120);
    const uint64_t text = 2 * 131072ull * 5120 + 40 * (5120ull * 4096 + 2 * 5120ull * 1024 +
                                                       4096ull * 5120 + 3ull * 5120 * 14336 +
                                                       2 * 5120) + 5120;
    assert_int_equal(exact_count(json), text + tower + proj);
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(build(vision, &m, &err), FG_E_UNSUPPORTED);
    assert_non_null(strstr(err.detail, "PixtralVisionConfig"));
    assert_null(m);
}

/* ---- Aria ------------------------------------------------------------------------------ */

static void read_aria_should_count_moe_text_idefics3_tower_and_query_projector(void **state)
{
    (void)state;
    /* rhymes-ai/Aria: AriaTextModel 2560 wide, 28 layers of MHA (20 x 128) and 64 experts of
     * 1664 top-6 with 2 shared; Idefics3 tower 1152 x 27 at 980 px / 14 */
    const char *text = "{\"model_type\": \"aria_text\", \"hidden_size\": 2560, "
                       "\"intermediate_size\": 1664, \"num_hidden_layers\": 28, "
                       "\"num_attention_heads\": 20, \"num_key_value_heads\": 20, \"head_dim\": "
                       "128, \"vocab_size\": 100352, \"moe_num_experts\": 64, \"moe_topk\": 6, "
                       "\"moe_num_shared_experts\": 2, \"tie_word_embeddings\": false}";
    const uint64_t H = 2560, F = 1664;
    const uint64_t layer = 4 * H * H + 2 * H + H * 64 + 64 * 3 * H * F + 3 * H * (2 * F);
    assert_int_equal(exact_count(text), 2 * 100352ull * H + 28 * layer + H);
    char json[2048];
    snprintf(json, sizeof json, "{\"model_type\": \"aria\", \"projector_patch_to_query_dict\": "
             "{\"1225\": 128, \"4900\": 256}, \"text_config\": %s, \"vision_config\": {"
             "\"model_type\": \"idefics3_vision\", \"hidden_size\": 1152, \"intermediate_size\": "
             "4304, \"num_hidden_layers\": 27, \"num_attention_heads\": 16, \"image_size\": 980, "
             "\"patch_size\": 14}}", text);
    const uint64_t h = 1152, f = 4304;
    const uint64_t tower = 27 * (4 * (h * h + h) + (h * f + f) + (f * h + h) + 4 * h) +
                           (3 * 14 * 14 * h + h) + 4900 * h + 2 * h;
    /* 256 queries; q/k/v; MultiheadAttention in_proj + out_proj; linear; three LayerNorms;
     * linear_in 1152 -> 2560 and linear_out, bias-free */
    const uint64_t proj = 256 * h + 3 * h * h + (3 * h * h + 3 * h) + (h * h + h) +
                          (h * h + h) + 3 * 2 * h + h * H + H * H;
    assert_int_equal(exact_count(json), exact_count(text) + tower + proj);
}

/* ---- DeepSeek-VL ----------------------------------------------------------------------- */

/* deepseek-community/deepseek-vl-7b-chat's parts: a 30-layer llama (vocab 102400), SigLIP-L
 * at 384 px / 16 without its pooling head, SAM-B at 1024 px for the hybrid. */
#define DSVL_TEXT                                                                              \
    "{\"model_type\": \"llama\", \"hidden_size\": 4096, \"intermediate_size\": 11008, "        \
    "\"num_hidden_layers\": 30, \"num_attention_heads\": 32, \"vocab_size\": 102400, "         \
    "\"tie_word_embeddings\": false}"
#define DSVL_SIGLIP                                                                            \
    "\"vision_config\": {\"model_type\": \"siglip_vision_model\", \"hidden_size\": 1024, "     \
    "\"intermediate_size\": 4096, \"num_hidden_layers\": 24, \"num_attention_heads\": 16, "    \
    "\"image_size\": 384, \"patch_size\": 16, \"vision_use_head\": false}"

static void read_deepseek_vl_should_count_siglip_the_aligner_and_sam_for_the_hybrid(void **st)
{
    (void)st;
    const uint64_t h = 1024, f = 4096, H = 4096;
    const uint64_t siglip = 24 * (4 * (h * h + h) + (h * f + f) + (f * h + h) + 4 * h) +
                            (3 * 16 * 16 * h + h) + 576 * h + 2 * h;
    const uint64_t text = exact_count(DSVL_TEXT);
    uint64_t n = exact_count("{\"model_type\": \"deepseek_vl\", \"text_config\": " DSVL_TEXT ", "
                       DSVL_SIGLIP "}");
    assert_int_equal(n, text + siglip + (h * H + H) + (H * H + H));
    /* SAM-B: 12 layers of 768 (fused qkv and proj biased, LayerNorms, MLP 3072), 64 x 64
     * positions, rel_pos tables of 27 rows (window 14) or 127 (the 4 global layers) of 64, and
     * the neck 768 -> 256; then a second neck, the two 3 x 3 convolutions 256 -> 512 -> 1024,
     * alpha and the aligner (1024 -> 2048, 1024 -> 2048, 4096 -> 4096) */
    const uint64_t s = 768, m = 3072, o = 256;
    const uint64_t neck = s * o + 2 * o + 9 * o * o + 2 * o;
    const uint64_t sam = 12 * (s * 3 * s + 3 * s + s * s + s + s * m + m + m * s + s + 4 * s) +
                         (3 * 16 * 16 * s + s) + 64 * 64 * s + 8 * 2 * 27 * 64 +
                         4 * 2 * 127 * 64 + neck;
    const uint64_t hybrid = neck + 9 * o * 2 * o + 9 * 2 * o * 4 * o + 1 + (h * 2048 + 2048) +
                            (4 * o * 2048 + 2048) + (H * H + H);
    assert_int_equal(exact_count("{\"model_type\": \"deepseek_vl_hybrid\", \"text_config\": "
                           DSVL_TEXT ", " DSVL_SIGLIP ", \"high_res_vision_config\": {"
                           "\"model_type\": \"sam_vision_model\", \"hidden_size\": 768, "
                           "\"num_hidden_layers\": 12, \"num_attention_heads\": 12, "
                           "\"image_size\": 1024, \"patch_size\": 16, \"output_channels\": 256, "
                           "\"window_size\": 14, \"global_attn_indexes\": [2, 5, 8, 11]}}"),
                     text + siglip + sam + hybrid);
}

/* ---- Kosmos-2 -------------------------------------------------------------------------- */

static void read_kosmos2_should_match_the_published_safetensors_count(void **state)
{
    (void)state;
    /* microsoft/kosmos-2-patch14-224's shapes (the Kosmos2*Config defaults) */
    const char *json = "{\"model_type\": \"kosmos-2\", \"latent_query_num\": 64, \"text_config\": "
                       "{\"model_type\": \"kosmos_2_text_model\", \"vocab_size\": 65037, "
                       "\"embed_dim\": 2048, \"layers\": 24, \"ffn_dim\": 8192, "
                       "\"attention_heads\": 32}, \"vision_config\": {\"model_type\": "
                       "\"kosmos_2_vision_model\", \"hidden_size\": 1024, \"intermediate_size\": "
                       "4096, \"num_hidden_layers\": 24, \"num_attention_heads\": 16, "
                       "\"image_size\": 224, \"patch_size\": 14}}";
    const uint64_t E = 2048, F = 8192, h = 1024, f = 4096;
    /* text: tied embedding; per layer self_attn_layer_norm, inner_attn_ln and
     * final_layer_norm, biased q/k/v/out, fc1 / fc2 and ffn_layernorm; the final LayerNorm */
    const uint64_t layer = 3 * 2 * E + 4 * (E * E + E) + (E * F + F) + (F * E + E) + 2 * F;
    const uint64_t text = 65037 * E + 24 * layer + 2 * E;
    const uint64_t tower = 24 * (4 * (h * h + h) + (h * f + f) + (f * h + h) + 4 * h) +
                           3 * 14 * 14 * h + h + 257 * h + 4 * h;
    const uint64_t proj = (h * E + E) + 4 * (E * E + E) + 64 * E;
    uint64_t n = exact_count(json);
    assert_int_equal(n, text + tower + proj);
    /* its model.safetensors: 1,664,485,376 FP32 parameters (6,658,052,808 B, revision
     * e91cfbcb), as a Core ML export's provenance record pins them */
    assert_int_equal(n, 1664485376ull);
}

/* The released config writes every PretrainedConfig flag into each sub-config, among them
 * vision_config.tie_word_embeddings = true (tests/fixtures/models/ydshieh--kosmos-2-patch14-224):
 * the vision tower has no word embeddings, so the count stays exact and unchanged. */
static void read_kosmos2_should_size_nothing_for_the_vision_tie_word_embeddings_flag(void **state)
{
    (void)state;
    const char *json = "{\"model_type\": \"kosmos-2\", \"latent_query_num\": 64, \"text_config\": "
                       "{\"model_type\": \"kosmos_2_text_model\", \"tie_word_embeddings\": true}, "
                       "\"vision_config\": {\"model_type\": \"kosmos_2_vision_model\", "
                       "\"hidden_size\": 1024, \"tie_word_embeddings\": true}}";
    assert_int_equal(exact_count(json), 1664485376ull);
}

static void read_blip_should_count_the_captioning_decoder_and_its_untied_head(void **state)
{
    (void)state;
    /* Salesforce/blip-image-captioning-base: ViT-B/16 at 384 px, a 12-layer BERT decoder */
    const char *json = "{\"model_type\": \"blip\", \"text_config\": {\"model_type\": "
                       "\"blip_text_model\", \"vocab_size\": 30524, \"hidden_size\": 768, "
                       "\"num_hidden_layers\": 12, \"num_attention_heads\": 12, "
                       "\"intermediate_size\": 3072, \"max_position_embeddings\": 512}, "
                       "\"vision_config\": {\"model_type\": \"blip_vision_model\", "
                       "\"hidden_size\": 768, \"intermediate_size\": 3072, \"num_hidden_layers\": "
                       "12, \"num_attention_heads\": 12, \"image_size\": 384, \"patch_size\": 16}}";
    const uint64_t h = 768, f = 3072, V = 30524;
    const uint64_t vit = 12 * ((h * 3 * h + 3 * h) + (h * h + h) + (h * f + f) + (f * h + h) +
                               4 * h) + h + (3 * 16 * 16 * h + h) + 577 * h + 2 * h;
    /* embeddings (word, 512 positions, LayerNorm); per layer self- and cross-attention of four
     * biased 768 x 768 linears with a LayerNorm each, intermediate / output and a LayerNorm;
     * the prediction transform; the decoder 768 -> vocab with its bias */
    const uint64_t att = 4 * (h * h + h) + 2 * h;
    const uint64_t text = V * h + 512 * h + 2 * h +
                          12 * (2 * att + (h * f + f) + (f * h + h) + 2 * h) +
                          (h * h + h + 2 * h) + (h * V + V);
    uint64_t n = exact_count(json);
    assert_int_equal(n, vit + text);
    /* a fine-tuning report on Flickr8k: "Salesforce/blip-image-captioning-base, with
     * 247,414,076 parameters" */
    assert_int_equal(n, 247414076ull);
}

/* ---- VideoLLaMA3, PerceptionLM ---------------------------------------------------------- */

static void read_video_llama_3_should_count_the_rotary_tower_and_readout(void **state)
{
    (void)state;
    /* lkhl/VideoLLaMA3-2B-Image-HF's parts: SigLIP so400m blocks at patch 14, a Qwen2.5-1.5B */
    const char *text = "{\"model_type\": \"qwen2\", \"hidden_size\": 1536, \"intermediate_size\": "
                       "8960, \"num_hidden_layers\": 28, \"num_attention_heads\": 12, "
                       "\"num_key_value_heads\": 2, \"vocab_size\": 151936, "
                       "\"tie_word_embeddings\": true}";
    char json[2048];
    snprintf(json, sizeof json, "{\"model_type\": \"video_llama_3\", \"text_config\": %s, "
             "\"vision_config\": {\"model_type\": \"video_llama_3_vision\", \"hidden_size\": 1152, "
             "\"intermediate_size\": 4304, \"num_hidden_layers\": 27, \"num_attention_heads\": 16, "
             "\"patch_size\": 14}}", text);
    const uint64_t h = 1152, f = 4304, H = 1536;
    /* no position table: the stem, the blocks, post_layernorm; readout 1152 -> 1536 -> 1536 */
    const uint64_t tower = 27 * (4 * (h * h + h) + (h * f + f) + (f * h + h) + 4 * h) +
                           (3 * 14 * 14 * h + h) + 2 * h;
    assert_int_equal(exact_count(json), exact_count(text) + tower + (h * H + H) + (H * H + H));
    /* PerceptionLM's tower is a timm model: refused by name */
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(build("{\"model_type\": \"perception_lm\", \"vision_config\": "
                           "{\"model_type\": \"timm_wrapper\", \"architecture\": "
                           "\"vit_pe_core_large_patch14_336\"}}", &m, &err),
                     FG_E_UNSUPPORTED);
    assert_non_null(strstr(err.detail, "timm"));
}

/* ---- IDEFICS ---------------------------------------------------------------------------- */

static void read_idefics_should_count_gated_cross_layers_and_the_perceiver(void **state)
{
    (void)state;
    /* HuggingFaceM4/idefics-9b: llama-7B shapes, 2 extra tokens, a gated cross-attention block
     * every 4 layers with q/k RMSNorms, a 6-deep perceiver, a 1280-wide CLIP ViT-H/14 */
    const char *json = "{\"model_type\": \"idefics\", \"vocab_size\": 32000, "
                       "\"additional_vocab_size\": 2, \"hidden_size\": 4096, "
                       "\"intermediate_size\": 11008, \"num_hidden_layers\": 32, "
                       "\"num_attention_heads\": 32, \"cross_layer_interval\": 4, "
                       "\"qk_layer_norms\": true, \"alpha_type\": \"float\", "
                       "\"use_resampler\": true, \"tie_word_embeddings\": false, "
                       "\"vision_config\": {\"embed_dim\": 1280, \"image_size\": 224, "
                       "\"intermediate_size\": 5120, \"patch_size\": 14, "
                       "\"num_hidden_layers\": 32, \"num_attention_heads\": 16}, "
                       "\"perceiver_config\": {\"resampler_n_latents\": 64, "
                       "\"resampler_depth\": 6, \"resampler_n_heads\": 16, "
                       "\"resampler_head_dim\": 96, \"qk_layer_norms_perceiver\": true}}";
    const uint64_t H = 4096, F = 11008, e = 1280, f = 5120, V = 32002;
    const uint64_t mlp = 3 * H * F;
    const uint64_t layer = 4 * H * H + mlp + 2 * H;
    /* cross: q and o over 4096, k / v from 1280, q / k norms of 128, two alphas */
    const uint64_t cross = 2 * H * H + 2 * e * H + 2 * 128 + 2 + mlp + 2 * H;
    const uint64_t text = V * H + 32 * layer + 8 * cross + H + V * H;
    const uint64_t vit = 32 * (4 * (e * e + e) + (e * f + f) + (f * e + e) + 4 * e) +
                         e + 3 * 14 * 14 * e + 257 * e + 4 * e;
    /* perceiver: q/k/v 1280 -> 1536, output_proj, MLP 1280 -> 5120 -> 1280, three LayerNorms
     * and two over head_dim a block; latents; the final LayerNorm */
    const uint64_t perceiver = 6 * (3 * e * 1536 + 1536 * e + 2 * e * 4 * e + 3 * 2 * e +
                                    2 * 2 * 96) + 64 * e + 2 * e;
    assert_int_equal(exact_count(json), text + vit + perceiver);
}

/* ---- Janus ------------------------------------------------------------------------------ */

/* JanusVQVAEResnetBlock in -> out (GroupNorms, 3 x 3 convs, 1 x 1 shortcut) and AttnBlock. */
static uint64_t vq_res(uint64_t i, uint64_t o)
{
    return 2 * i + (9 * i * o + o) + 2 * o + (9 * o * o + o) + (i != o ? i * o + o : 0);
}

static uint64_t vq_attn(uint64_t c)
{
    return 2 * c + 4 * (c * c + c);
}

static void read_janus_should_count_the_tower_the_vq_model_and_the_generation_head(void **state)
{
    (void)state;
    /* deepseek-community/Janus-Pro-7B's shapes: a 30-layer llama, SigLIP-L at 384 px / 16, the
     * JanusVQVAEConfig defaults (base 128, multipliers 1 1 2 2 4, 16384 codes of 8) and a
     * 4096-wide generation path */
    const char *text = "{\"model_type\": \"llama\", \"hidden_size\": 4096, \"intermediate_size\": "
                       "11008, \"num_hidden_layers\": 30, \"num_attention_heads\": 32, "
                       "\"vocab_size\": 102400, \"tie_word_embeddings\": false}";
    char json[2048];
    snprintf(json, sizeof json, "{\"model_type\": \"janus\", \"text_config\": %s, "
             "\"vision_config\": {\"hidden_size\": 1024, \"num_hidden_layers\": 24, "
             "\"num_attention_heads\": 16, \"patch_size\": 16, \"image_size\": 384, "
             "\"projection_dim\": 4096, \"depth\": 2}, \"vq_config\": {\"projection_dim\": 4096, "
             "\"image_token_embed_dim\": 4096, \"num_hidden_layers\": 2}}", text);
    const uint64_t h = 1024, f = 4096, P = 4096;
    const uint64_t vit = 24 * (4 * (h * h + h) + (h * f + f) + (f * h + h) + 4 * h) +
                         (3 * 16 * 16 * h + h) + 576 * h + 2 * h;
    const uint64_t aligner = (h * P + P) + (P * P + P);
    const uint64_t enc = (9 * 3 * 128 + 128) + 4 * vq_res(128, 128) + vq_res(128, 256) +
                         3 * vq_res(256, 256) + vq_res(256, 512) + vq_res(512, 512) +
                         2 * vq_attn(512) + 2 * (9 * 128 * 128 + 128) +
                         2 * (9 * 256 * 256 + 256) + 2 * vq_res(512, 512) + vq_attn(512) +
                         2 * 512 + (9 * 512 * 256 + 256);
    const uint64_t dec = (9 * 256 * 512 + 512) + 2 * vq_res(512, 512) + vq_attn(512) +
                         3 * vq_res(512, 512) + 3 * vq_attn(512) + (9 * 512 * 512 + 512) +
                         vq_res(512, 256) + 2 * vq_res(256, 256) + (9 * 256 * 256 + 256) +
                         3 * vq_res(256, 256) + (9 * 256 * 256 + 256) + vq_res(256, 128) +
                         2 * vq_res(128, 128) + (9 * 128 * 128 + 128) + 3 * vq_res(128, 128) +
                         2 * 128 + (9 * 128 * 3 + 3);
    const uint64_t vq = enc + 16384 * 8 + (256 * 8 + 8) + (8 * 256 + 256) + dec;
    const uint64_t gen = 16384 * 8 + (8 * P + P) + (P * P + P) + (4096 * P + P) +
                         (P * 16384 + 16384);
    assert_int_equal(exact_count(json), exact_count(text) + vit + aligner + vq + gen);
}

/* ---- Phi-4-multimodal -------------------------------------------------------------------- */

static void read_phi4_multimodal_should_count_phi3_siglip_and_the_conformer(void **state)
{
    (void)state;
    /* microsoft/Phi-4-multimodal-instruct's text shapes (Phi-4-mini: 3072 wide, 24 heads of
     * 128, 8 key / value heads, tied) with the vision and audio class defaults */
    const char *text = "\"vocab_size\": 200064, \"hidden_size\": 3072, \"intermediate_size\": "
                       "8192, \"num_hidden_layers\": 32, \"num_attention_heads\": 24, "
                       "\"num_key_value_heads\": 8, \"tie_word_embeddings\": true, "
                       "\"max_position_embeddings\": 131072";
    char json[2048], phi3[1024];
    snprintf(json, sizeof json, "{\"model_type\": \"phi4_multimodal\", %s, \"vision_config\": {}, "
             "\"audio_config\": {}}", text);
    snprintf(phi3, sizeof phi3, "{\"model_type\": \"phi3\", %s}", text);
    const uint64_t H = 3072, h = 1152, f = 4304;
    /* SigLIP blocks, biased stem, 32 x 32 positions, post_layernorm, the pooling head (probe,
     * in_proj / out_proj, LayerNorm, MLP); projections up / down and the two extensors */
    const uint64_t vit = 27 * (4 * (h * h + h) + (h * f + f) + (f * h + h) + 4 * h) +
                         (3 * 14 * 14 * h + h) + 1024 * h + 2 * h +
                         (h + (3 * h * h + 3 * h) + (h * h + h) + 2 * h + (h * f + f) +
                          (f * h + h));
    const uint64_t image = (h * H + H) + (H * H + H) + 2 * h;
    /* conformer 1024 wide, 24 blocks: two MLPs (LayerNorm, 1024 -> 3072, 1536 -> 1024), q/k/v/o,
     * the conv module (LayerNorm, GLU 1024 -> 2048 + b1 / b2, depthwise 3, point-wise 1024,
     * ext_pw 1024 -> 1024), two LayerNorms; mean / invstd; the NeMo subsampling (80 -> 10
     * frequency bins) and its out Linear; 2000 x 16 relative bias */
    const uint64_t a = 1024, fa = 1536;
    const uint64_t mlp = 2 * a + (a * 2 * fa + 2 * fa) + (fa * a + a);
    const uint64_t conv = 2 * a + (a * 2048 + 2048) + 2048 + (a * 3 + a) + (a * a + a) +
                          (a * a + a);
    const uint64_t audio = 24 * (2 * mlp + 4 * (a * a + a) + conv + 4 * a) + 2 * 80 +
                           (9 * a + a) + 2 * ((9 * a + a) + (a * a + a)) + (a * 10 * a + a) +
                           2000 * 16;
    const uint64_t speech = 2 * ((a * H + H) + (H * H + H));
    assert_int_equal(exact_count(json), exact_count(phi3) + vit + image + audio + speech);
}

/* ---- Ovis2 ------------------------------------------------------------------------------ */

static void read_ovis2_should_count_the_visual_tokenizer_and_embedding_table(void **state)
{
    (void)state;
    /* Ovis2-2B's shapes: a tied Qwen2.5-1.5B, AIMv2 1024 x 24 at 448 px / 14, 65536 visual
     * codes (5 indicators), hidden_stride 2 */
    const char *text = "{\"model_type\": \"qwen2\", \"hidden_size\": 1536, \"intermediate_size\": "
                       "8960, \"num_hidden_layers\": 28, \"num_attention_heads\": 12, "
                       "\"num_key_value_heads\": 2, \"vocab_size\": 151936, "
                       "\"tie_word_embeddings\": true}";
    const char *vision = "\"vision_config\": {\"hidden_size\": 1024, \"intermediate_size\": 2816, "
                         "\"num_hidden_layers\": 24, \"num_attention_heads\": 8, \"image_size\": "
                         "448, \"patch_size\": 14, \"vocab_size\": 65536, \"hidden_stride\": 2, "
                         "\"num_visual_indicator_tokens\": 5}";
    char json[2048];
    snprintf(json, sizeof json, "{\"model_type\": \"ovis2\", \"vocab_size\": 151643, "
             "\"hidden_size\": 1536, \"text_config\": %s, %s}", text, vision);
    const uint64_t h = 1024, f = 2816, H = 1536, codes = 65536 - 5;
    /* bias-free q/k/v/o and gated MLP, two RMSNorms a layer; stem, 1024 positions, the
     * embedding RMSNorm and the final one; head_linear 4096 -> codes, head_norm; the table */
    const uint64_t tower = 24 * (4 * h * h + 3 * h * f + 2 * h) + (3 * 14 * 14 * h + h) +
                           1024 * h + 2 * h;
    const uint64_t tok = 4 * h * codes + 2 * codes + 65536 * H;
    uint64_t n = exact_count(json);
    assert_int_equal(n, exact_count(text) + tower + tok);
    /* untied, the wrapper's lm_head has the root vocab_size (151643) rows, not the text's */
    const char *untied = "{\"model_type\": \"qwen2\", \"hidden_size\": 1536, "
                         "\"intermediate_size\": 8960, \"num_hidden_layers\": 28, "
                         "\"num_attention_heads\": 12, \"num_key_value_heads\": 2, "
                         "\"vocab_size\": 151936, \"tie_word_embeddings\": false}";
    snprintf(json, sizeof json, "{\"model_type\": \"ovis2\", \"vocab_size\": 151643, "
             "\"hidden_size\": 1536, \"text_config\": %s, %s}", untied, vision);
    assert_int_equal(exact_count(json), exact_count(text) + 151643 * H + tower + tok);
    /* vision_config.tie_word_embeddings (thisisiron/Ovis2-1B-hf writes it true): no word
     * embeddings in the tower to tie, nothing sized, the count stays exact */
    char tied_vision[512];
    snprintf(tied_vision, sizeof tied_vision, "%.*s, \"tie_word_embeddings\": true}",
             (int)strlen(vision) - 1, vision);
    snprintf(json, sizeof json, "{\"model_type\": \"ovis2\", \"vocab_size\": 151643, "
             "\"hidden_size\": 1536, \"text_config\": %s, %s}", text, tied_vision);
    assert_int_equal(exact_count(json), n);
}

/* ---- Evolla ----------------------------------------------------------------------------- */

static void read_evolla_should_count_saprot_the_compressor_and_the_adapters(void **state)
{
    (void)state;
    /* westlake-repl/Evolla-10B-hf's shapes: Llama-3-8B, SaProt-650M (the class defaults) */
    const char *text = "\"vocab_size\": 128256, \"hidden_size\": 4096, \"intermediate_size\": "
                       "14336, \"num_hidden_layers\": 32, \"num_attention_heads\": 32, "
                       "\"num_key_value_heads\": 8";
    char json[1024], llama[1024];
    snprintf(json, sizeof json, "{\"model_type\": \"evolla\", %s, \"protein_encoder_config\": {}}",
             text);
    snprintf(llama, sizeof llama, "{\"model_type\": \"llama\", %s}", text);
    const uint64_t h = 1280, f = 5120, H = 4096;
    /* ESM: 33 layers of biased q/k/v/dense, intermediate / output and two LayerNorms, the
     * rotary inv_freq (32) each; word embeddings 446 x 1280; emb_layer_norm_after */
    const uint64_t saprot = 33 * (4 * (h * h + h) + (h * f + f) + (f * h + h) + 4 * h + 32) +
                            446 * h + 2 * h;
    /* 6 compressor blocks over 1280 (q 512, kv 1024, out, FF 4x, three LayerNorms), 64
     * latents, the projector 1280 -> 4096 and its LayerNorm */
    const uint64_t comp = 6 * (h * 512 + h * 1024 + 512 * h + 2 * h * 4 * h + 3 * 2 * h) +
                          64 * h + (h * H + H) + 2 * H;
    /* 8 adapters (every 4th layer): q/k/v/out biased, RMSNorm, FF 4x with its LayerNorm, two
     * gates */
    const uint64_t adapters = 8 * (4 * (H * H + H) + H + 2 * H * 4 * H + 2 * H + 2);
    assert_int_equal(exact_count(json), exact_count(llama) + saprot + comp + adapters);
}

/* westlake-repl/Evolla-10B-hf's config.json writes model_type "EvollaModel", the name
 * transformers' configuration_auto.py maps to EvollaConfig beside "evolla", and the protein
 * encoder as flat protein_* keys that EvollaConfig no longer reads (it builds SaProtConfig()
 * from an absent protein_encoder_config).  The keys below are that file's, as
 * hlky/dinoml_v2@6b8c0acb3a19:agents/plans/transformers/evolla/evolla_10b_config_snapshot.json
 * transcribes them: read as evolla, the count is the class's, exact. */
static void read_evolla_should_read_the_evollamodel_spelling_as_evolla(void **state)
{
    (void)state;
    const char *text = "\"vocab_size\": 128256, \"hidden_size\": 4096, \"intermediate_size\": "
                       "14336, \"num_hidden_layers\": 32, \"num_attention_heads\": 32, "
                       "\"num_key_value_heads\": 8, \"max_position_embeddings\": 8192";
    const char *flat = "\"protein_vocab_size\": 446, \"protein_hidden_size\": 1280, "
                       "\"protein_intermediate_size\": 5120, \"protein_num_hidden_layers\": 33, "
                       "\"protein_num_attention_heads\": 20, "
                       "\"protein_max_position_embeddings\": 1026, "
                       "\"protein_position_embedding_type\": \"rotary\", "
                       "\"protein_token_dropout\": true, \"resampler_depth\": 6, "
                       "\"resampler_dim_head\": 64, \"resampler_heads\": 8, "
                       "\"resampler_num_latents\": 64, \"resampler_ff_mult\": 4, "
                       "\"aligner_enable_bias\": true, \"aligner_ffn_mult\": 4, "
                       "\"aligner_num_add_layers\": 8, \"tie_word_embeddings\": false";
    char json[2048], canonical[1024];
    snprintf(json, sizeof json, "{\"architectures\": [\"EvollaForProteinText2Text\"], "
             "\"model_type\": \"EvollaModel\", %s, %s}", text, flat);
    snprintf(canonical, sizeof canonical, "{\"model_type\": \"evolla\", %s}", text);
    struct fg_model *m = built(json);
    assert_string_equal(m->model_type, "evolla");
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    assert_true(has_note(m, "names model_type 'EvollaModel'"));
    assert_int_equal(m->params_total, exact_count(canonical));
    assert_int_equal(m->params_total, 10390788400ull);
    fg_model_free(m);
}

/* ---- EXAONE-4.5 -------------------------------------------------------------------- */

/* LGAI-EXAONE/EXAONE-4.5-33B (tests/fixtures/models): Exaone4_5_ForConditionalGeneration at
 * transformers decba1d2ea, term by term from modeling_exaone4_5.py. */
static void read_exaone4_5_should_count_the_gqa_tower_merger_and_exaone4_text(void **state)
{
    (void)state;
    struct fg_model *m = load("tests/fixtures/models/LGAI-EXAONE--EXAONE-4.5-33B");
    /* Exaone4_5_VisionModel, 28 blocks of 2048, 32 heads of 64 and 8 k/v heads: qkv a biased
     * Linear(2048 -> 2048 + 2 x 8 x 64), proj biased, Exaone4_5_MLP gate / up / down of 5120
     * biased, norm1 / norm2 RMSNorms; Conv3d stem 3 x 2 x 14 x 14 without bias */
    const uint64_t h = 2048, kv = 8 * 64, f = 5120;
    const uint64_t block = (h * (h + 2 * kv) + h + 2 * kv) + (h * h + h) +
                           (2 * (h * f + f) + f * h + h) + 2 * h;
    const uint64_t tower = 28 * block + 3ull * 2 * 14 * 14 * h;
    /* Exaone4_5_PatchMerger: ln_q RMSNorm(2048), Linear(8192 -> 8192), Linear(8192 -> 5120) */
    const uint64_t w = 4 * h, merger = h + (w * w + w) + (w * 5120 + 5120);
    /* the exaone4 text model: q 5120 -> 40 x 128, k / v -> 8 x 128, o, no biases; q_norm /
     * k_norm over 128; gate / up / down of 27392; post-attention and post-feedforward
     * RMSNorms; final norm; untied lm_head over 153600 */
    const uint64_t H = 5120, F = 27392, V = 153600;
    const uint64_t layer = 2 * H * H + 2 * H * 1024 + 2 * 128 + 3 * H * F + 2 * H;
    const uint64_t text = 2 * V * H + 64 * layer + H;
    /* the release's mtp.* (num_nextn_predict_layers 1), which transformers skips on load:
     * one text decoder layer, fc 10240 -> 5120 and three RMSNorms, a rule of the stored
     * count that the model leaves out */
    const uint64_t mtp = layer + 2 * H * H + 3 * H;
    assert_int_equal(m->params_total, tower + merger + text + mtp);
    assert_int_equal(m->params_total, 34350097664ull);
    assert_non_null(rule_with(m, "MTP layers"));
    assert_int_equal(rule_with(m, "MTP layers")->scalars, (int64_t)mtp);
    const struct fg_node *t = first_of(m, FG_NODE_VISION);
    assert_non_null(t);
    assert_int_equal(t->params, tower);
    assert_int_equal(t->kv_heads, 8);
    assert_int_equal(lin(t, "qkv")->out, h + 2 * kv);
    /* a fine-tune saved through transformers holds no mtp.*: the stored count is open */
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_true(m->unsure_count_only);
    assert_string_equal(m->unsure_key, "num_nextn_predict_layers");
    fg_model_free(m);
}

/* ---- PaddleOCR-VL ------------------------------------------------------------------ */

/* PaddlePaddle/PaddleOCR-VL (tests/fixtures/models): PaddleOCRVLForConditionalGeneration at
 * transformers decba1d2ea, term by term from modeling_paddleocr_vl.py. */
static void read_paddleocr_vl_should_count_siglip_the_projector_and_ernie_text(void **state)
{
    (void)state;
    struct fg_model *m = load("tests/fixtures/models/PaddlePaddle--PaddleOCR-VL");
    /* PaddleOCRVisionModel: Conv2d 3 x 14 x 14 -> 1152 with bias, (384 / 14)^2 = 729
     * positions, 27 layers of layer_norm1 / 2, q / k / v / out_proj and fc1 / fc2 of 4304,
     * all biased; post_layernorm */
    const uint64_t h = 1152, f = 4304;
    const uint64_t block = 4 * (h * h + h) + (h * f + f) + (f * h + h) + 4 * h;
    const uint64_t tower = 27 * block + (3 * 14 * 14 * h + h) + 729 * h + 2 * h;
    /* PaddleOCRProjector: pre_norm LayerNorm(1152), linear_1 4608 -> 4608, linear_2 4608 ->
     * 1024, biased */
    const uint64_t w = 4 * h, proj = 2 * h + (w * w + w) + (w * 1024 + 1024);
    /* PaddleOCRTextModel from the root keys: 18 layers, q 1024 -> 16 x 128, k / v -> 2 x 128,
     * o, gate / up / down of 3072, no biases (use_bias false); two RMSNorms; final norm;
     * untied lm_head over 103424 (the root's tie_word_embeddings) */
    const uint64_t H = 1024, V = 103424;
    const uint64_t layer = H * 2048 + 2 * H * 256 + 2048 * H + 3 * H * 3072 + 2 * H;
    const uint64_t text = 2 * V * H + 18 * layer + H;
    /* what the release stores and the class skips on load: packing_position_embedding
     * (32768 x 1152) and the SigLIP pooling head (probe, in_proj, out_proj, LayerNorm, MLP) */
    const uint64_t stored = 32768 * h + h + (3 * h * h + 3 * h) + (h * h + h) + 2 * h +
                            (h * f + f) + (f * h + h);
    assert_int_equal(first_of(m, FG_NODE_VISION)->params, tower);
    assert_int_equal(rule_with(m, "packing_position_embedding")->scalars, (int64_t)stored);
    assert_int_equal(m->params_total, tower + proj + text + stored);
    /* PaddleOCR-VL-1.6's Hub safetensors total (its config not at hand; 1.0's and 1.5's are
     * byte-identical), quoted in two files of the code index */
    assert_int_equal(m->params_total, 958588736ull);
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_true(m->unsure_count_only);
    fg_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(read_glm4v_should_count_the_glm4v_tower_merger_and_glm4_text),
        cmocka_unit_test(read_glm4v_moe_should_count_air_blocks_without_mtp),
        cmocka_unit_test(read_glm46v_should_pick_the_text_model_by_its_type),
        cmocka_unit_test(read_glm_ocr_should_count_the_ocr_tower_merger_and_unbiased_glm4_text),
        cmocka_unit_test(read_llava_next_video_should_add_the_pooler_only_when_it_convolves),
        cmocka_unit_test(read_llava_should_count_the_class_default_tower_of_an_absent_vision_config),
        cmocka_unit_test(read_vipllava_should_norm_and_project_every_feature_layer),
        cmocka_unit_test(read_lfm2_vl_should_match_the_published_totals),
        cmocka_unit_test(read_llava_onevision_should_floor_the_patch_grid_and_ignore_the_vision_tie),
        cmocka_unit_test(read_cohere2_vision_should_count_the_swiglu_projector_without_a_norm),
        cmocka_unit_test(read_idefics2_should_count_the_connector_and_the_perceiver),
        cmocka_unit_test(read_blip2_should_count_the_tower_the_qformer_and_the_text_model),
        cmocka_unit_test(read_instructblip_should_add_the_qformer_text_embeddings_and_ffns),
        cmocka_unit_test(pixtral_should_be_read_through_llava_and_refused_alone),
        cmocka_unit_test(read_aria_should_count_moe_text_idefics3_tower_and_query_projector),
        cmocka_unit_test(read_deepseek_vl_should_count_siglip_the_aligner_and_sam_for_the_hybrid),
        cmocka_unit_test(read_kosmos2_should_match_the_published_safetensors_count),
        cmocka_unit_test(read_kosmos2_should_size_nothing_for_the_vision_tie_word_embeddings_flag),
        cmocka_unit_test(read_blip_should_count_the_captioning_decoder_and_its_untied_head),
        cmocka_unit_test(read_video_llama_3_should_count_the_rotary_tower_and_readout),
        cmocka_unit_test(read_idefics_should_count_gated_cross_layers_and_the_perceiver),
        cmocka_unit_test(read_janus_should_count_the_tower_the_vq_model_and_the_generation_head),
        cmocka_unit_test(read_phi4_multimodal_should_count_phi3_siglip_and_the_conformer),
        cmocka_unit_test(read_ovis2_should_count_the_visual_tokenizer_and_embedding_table),
        cmocka_unit_test(read_evolla_should_count_saprot_the_compressor_and_the_adapters),
        cmocka_unit_test(read_evolla_should_read_the_evollamodel_spelling_as_evolla),
        cmocka_unit_test(read_exaone4_5_should_count_the_gqa_tower_merger_and_exaone4_text),
        cmocka_unit_test(read_paddleocr_vl_should_count_siglip_the_projector_and_ernie_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
