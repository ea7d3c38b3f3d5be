/*
 * test_arch_hybrid.c - the hybrid readers (nemotron_h_lfm2_qwen3_next.c: nemotron_h, lfm2)
 * and the multimodal wrappers built on the same graph (multimodal.c:
 * llava, gemma3, qwen2_vl, llama4, kimi_k25): graph shape in layer order,
 * exact stored counts for the fixtures with a published total, and the
 * errors a bad layer pattern gets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support.h"
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source/config.h"
#include "model/model.h"

#define MODELS "tests/fixtures/models/"

/* ---- nemotron_h ------------------------------------------------------------ */

static void nemotron_h_should_follow_the_pattern_layer_by_layer(void **state)
{
    (void)state;
    static const char pattern[] = "M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-";
    struct fg_model *m = load(MODELS "nvidia--NVIDIA-Nemotron-Nano-9B-v2");
    assert_int_equal(m->layers, 56);
    assert_int_equal(count_kind(m, FG_NODE_MAMBA2), 27);
    assert_int_equal(count_kind(m, FG_NODE_ATTN), 4);
    assert_int_equal(count_kind(m, FG_NODE_MLP), 25);
    assert_int_equal(count_kind(m, FG_NODE_MOE), 0);
    /* the mixer of layer l is the node after its norm, in pattern order */
    size_t l = 0;
    for (size_t i = 0; i < m->n_nodes; i++) {
        const struct fg_node *n = &m->nodes[i];
        if (n->kind == FG_NODE_NORM || n->layer < 0)
            continue;
        assert_int_equal(n->layer, (int32_t)l);
        enum fg_node_kind want = pattern[l] == 'M' ? FG_NODE_MAMBA2
                                 : pattern[l] == '*' ? FG_NODE_ATTN
                                                     : FG_NODE_MLP;
        assert_int_equal(n->kind, want);
        l++;
    }
    assert_int_equal(l, 56);
    fg_model_free(m);
}

static void nemotron_h_should_count_nano_9b_v2_exactly(void **state)
{
    (void)state;
    struct fg_model *m = load(MODELS "nvidia--NVIDIA-Nemotron-Nano-9B-v2");
    assert_int_equal(m->params_total, 8888227328ULL);
    assert_false(m->generic);
    fg_model_free(m);
}

static void nemotron_h_should_describe_the_mamba2_mixer(void **state)
{
    (void)state;
    struct fg_model *m = load(MODELS "nvidia--NVIDIA-Nemotron-Nano-9B-v2");
    const struct fg_node *n = first_of(m, FG_NODE_MAMBA2);
    assert_non_null(n);
    assert_string_equal(n->name, "Mamba_1");
    assert_int_equal(n->hidden, 4480);
    assert_int_equal(n->width, 4480);
    assert_int_equal(n->ssm_heads, 128);
    assert_int_equal(n->ssm_head_dim, 80);
    assert_int_equal(n->groups, 8);
    assert_int_equal(n->state, 128);
    assert_int_equal(n->conv_kernel, 4);
    assert_int_equal(n->chunk, 128);
    assert_int_equal(n->nlin, 2);
    assert_string_equal(n->lin[0].role, "in_proj");
    /* 2 x 10240 + 2 x 8 x 128 + 128 */
    assert_int_equal(n->lin[0].out, 22656);
    assert_string_equal(n->lin[1].role, "out_proj");
    assert_int_equal(n->lin[1].in, 10240);
    /* in 4480 x 22656, conv 12288 x (4 + 1), 3 x 128, norm 10240, out 10240 x 4480 */
    assert_int_equal(n->params, 101498880ULL + 61440 + 384 + 10240 + 45875200ULL);
    fg_model_free(m);
}

static void nemotron_h_should_read_moe_layers_of_nano_30b(void **state)
{
    (void)state;
    struct fg_model *m = load(MODELS "nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16");
    assert_int_equal(m->layers, 52);
    assert_int_equal(count_kind(m, FG_NODE_MAMBA2), 23);
    assert_int_equal(count_kind(m, FG_NODE_MOE), 23);
    assert_int_equal(count_kind(m, FG_NODE_ATTN), 6);
    assert_int_equal(m->experts, 128);
    assert_int_equal(m->top_k, 6);
    const struct fg_node *e = first_of(m, FG_NODE_MOE);
    assert_non_null(e);
    assert_int_equal(e->layer, 1);
    assert_int_equal(e->experts, 128);
    assert_int_equal(e->top_k, 6);
    assert_int_equal(e->inter, 1856);
    assert_int_equal(e->shared_inter, 3712);
    assert_int_equal(e->gated, 0);
    /* router 128 x 2688 + e_score_correction_bias 128 + 128 x (up + down)
     * + shared up/down */
    assert_int_equal(e->buffers, 128);
    assert_int_equal(e->params, 128ULL * 2688 + 128 + 128ULL * 2 * 2688 * 1856 +
                                    2ULL * 2688 * 3712);
    /* NVIDIA quotes 31.6B total for this model */
    assert_int_equal(m->params_total, 31577940288ULL);
    fg_model_free(m);
}

#define NEMO_HEAD "{\"model_type\": \"nemotron_h\", \"hidden_size\": 64, " \
                  "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"head_dim\": 16, " \
                  "\"mamba_num_heads\": 4, \"mamba_head_dim\": 16, \"n_groups\": 2, " \
                  "\"ssm_state_size\": 8, \"intermediate_size\": 128, \"vocab_size\": 100, "

static void nemotron_h_should_reject_pattern_of_wrong_length_naming_key(void **state)
{
    (void)state;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    int rc = build(NEMO_HEAD "\"num_hidden_layers\": 4, \"hybrid_override_pattern\": \"M*-\"}",
                   &m, &err);
    assert_int_equal(rc, FG_E_RANGE);
    assert_null(m);
    assert_non_null(strstr(err.detail, "hybrid_override_pattern"));
    assert_non_null(strstr(err.detail, "t.json"));
    fg_model_free(m);
}

static void nemotron_h_should_reject_unknown_pattern_letter_naming_key(void **state)
{
    (void)state;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    int rc = build(NEMO_HEAD "\"num_hidden_layers\": 3, \"hybrid_override_pattern\": \"M*X\"}",
                   &m, &err);
    assert_int_equal(rc, FG_E_RANGE);
    assert_non_null(strstr(err.detail, "hybrid_override_pattern"));
    assert_non_null(strstr(err.detail, "'X'"));
    fg_model_free(m);
}

static void nemotron_h_should_need_a_pattern(void **state)
{
    (void)state;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    int rc = build(NEMO_HEAD "\"num_hidden_layers\": 3}", &m, &err);
    assert_int_equal(rc, FG_E_MISSING);
    assert_non_null(strstr(err.detail, "hybrid_override_pattern"));
    fg_model_free(m);
}

static void nemotron_h_should_read_layers_block_type_like_the_pattern(void **state)
{
    (void)state;
    struct fg_model *a = NULL, *b = NULL;
    struct fg_err err = {0};
    assert_int_equal(build(NEMO_HEAD "\"hybrid_override_pattern\": \"M*-E\"}", &a, &err), 0);
    assert_int_equal(build(NEMO_HEAD "\"layers_block_type\": [\"mamba\", \"full_attention\", "
                                     "\"mlp\", \"moe\"]}", &b, &err), 0);
    assert_int_equal(a->layers, 4);
    assert_int_equal(a->params_total, b->params_total);
    assert_int_equal(a->n_nodes, b->n_nodes);
    for (size_t i = 0; i < a->n_nodes; i++)
        assert_int_equal(a->nodes[i].kind, b->nodes[i].kind);
    fg_model_free(a);
    fg_model_free(b);
    assert_int_equal(build(NEMO_HEAD "\"layers_block_type\": [\"mamba\", \"conv\"]}", &a, &err),
                     FG_E_RANGE);
    assert_non_null(strstr(err.detail, "layers_block_type"));
    fg_model_free(a);
}

/* ---- lfm2 ---------------------------------------------------------------- */

static void lfm2_should_count_1_2b_exactly_with_convs_and_attention(void **state)
{
    (void)state;
    struct fg_model *m = load(MODELS "LiquidAI--LFM2-1.2B");
    assert_int_equal(m->params_total, 1170340608ULL);
    assert_int_equal(count_kind(m, FG_NODE_SHORTCONV), 10);
    assert_int_equal(count_kind(m, FG_NODE_ATTN), 6);
    assert_int_equal(count_kind(m, FG_NODE_MLP), 16);
    assert_true(m->tied);
    const struct fg_node *a = first_of(m, FG_NODE_ATTN);
    assert_int_equal(a->layer, 2); /* full_attn_idxs starts at 2 */
    const struct fg_node *s = first_of(m, FG_NODE_SHORTCONV);
    assert_int_equal(s->conv_kernel, 3);
    assert_int_equal(s->hidden, 2048);
    assert_string_equal(s->lin[0].role, "in_proj");
    assert_int_equal(s->lin[0].out, 3 * 2048);
    /* block_ff_dim 12288 auto-adjusted: int(2/3 x 12288) rounded to 256 */
    assert_int_equal(first_of(m, FG_NODE_MLP)->inter, 8192);
    fg_model_free(m);
}

#define LFM_HEAD "{\"model_type\": \"lfm2\", \"hidden_size\": 64, \"num_attention_heads\": 4, " \
                 "\"num_key_value_heads\": 2, \"num_hidden_layers\": 3, \"vocab_size\": 100, " \
                 "\"block_ff_dim\": 192, "

static void lfm2_should_read_layer_types_like_full_attn_idxs(void **state)
{
    (void)state;
    struct fg_model *a = NULL, *b = NULL;
    struct fg_err err = {0};
    assert_int_equal(build(LFM_HEAD "\"full_attn_idxs\": [1]}", &a, &err), 0);
    assert_int_equal(build(LFM_HEAD "\"layer_types\": [\"conv\", \"full_attention\", \"conv\"]}",
                           &b, &err), 0);
    assert_int_equal(count_kind(a, FG_NODE_SHORTCONV), 2);
    assert_int_equal(count_kind(a, FG_NODE_ATTN), 1);
    assert_int_equal(a->params_total, b->params_total);
    fg_model_free(a);
    fg_model_free(b);
    assert_int_equal(build(LFM_HEAD "\"layer_types\": [\"conv\", \"mamba\", \"conv\"]}", &a,
                           &err), FG_E_RANGE);
    assert_non_null(strstr(err.detail, "layer_types"));
    assert_non_null(strstr(err.detail, "mamba"));
    fg_model_free(a);
}

static void lfm2_should_reject_conv_dim_other_than_hidden(void **state)
{
    (void)state;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(build(LFM_HEAD "\"conv_dim\": 32}", &m, &err), FG_E_RANGE);
    assert_non_null(strstr(err.detail, "conv_dim"));
    fg_model_free(m);
}

/* ---- multimodal wrappers ---------------------------------------------------- */

/* Tower and projector come first, in the tower stack, then the text model. */
static void assert_tower_in_front(const struct fg_model *m)
{
    assert_true(m->n_nodes > 3);
    assert_int_equal(m->nodes[0].kind, FG_NODE_VISION);
    assert_int_equal(m->nodes[0].stack, FG_STACK_TOWER);
    assert_int_equal(m->nodes[0].layer, -1);
    assert_int_equal(m->nodes[1].kind, FG_NODE_OTHER);
    assert_string_equal(m->nodes[1].name, "Projector");
    assert_int_equal(m->nodes[1].stack, FG_STACK_TOWER);
    assert_int_equal(m->nodes[2].kind, FG_NODE_EMBED);
    assert_int_equal(count_kind(m, FG_NODE_VISION), 1);
}

static void llava_should_have_a_clip_tower_and_llama_text(void **state)
{
    (void)state;
    struct fg_model *m = load(MODELS "llava-hf--llava-1.5-7b-hf");
    assert_tower_in_front(m);
    /* CLIP ViT-L/14-336: 24 x 1024, 577 positions, pre and post LayerNorm */
    assert_int_equal(m->nodes[0].params, 303507456ULL);
    assert_int_equal(m->nodes[0].hidden, 1024);
    /* 1024 -> 4096 -> 4096 with biases */
    assert_int_equal(m->nodes[1].params, 1024ULL * 4096 + 4096 + 4096ULL * 4096 + 4096);
    /* text: LlamaConfig defaults (Llama-2-7B) with vocab 32064 */
    assert_int_equal(m->layers, 32);
    assert_int_equal(m->hidden, 4096);
    assert_int_equal(m->vocab, 32064);
    assert_int_equal(fg_model_main_layers(m), 32);
    /* the published llava-1.5-7b-hf parameter count */
    assert_int_equal(m->params_total, 7063427072ULL);
    fg_model_free(m);
}

static void gemma3_should_count_medgemma_27b_exactly(void **state)
{
    (void)state;
    struct fg_model *m = load(MODELS "google--medgemma-27b-it");
    assert_tower_in_front(m);
    /* SigLIP 27 x 1152 at 896 px, no pooling head */
    assert_int_equal(m->nodes[0].params, 416866032ULL);
    assert_int_equal(m->nodes[1].params, 1152ULL * 5376 + 1152);
    assert_int_equal(m->params_total, 27432406640ULL);
    fg_model_free(m);
}

static void qwen2_vl_should_count_olmocr_exactly_from_root_text_keys(void **state)
{
    (void)state;
    struct fg_model *m = load(MODELS "allenai--olmOCR-7B-0225-preview");
    assert_tower_in_front(m);
    assert_int_equal(m->layers, 28);
    assert_int_equal(m->hidden, 3584);
    assert_int_equal(m->params_total, 8291375616ULL);
    fg_model_free(m);
}

static void kimi_k25_should_count_exactly_through_the_kimi_k2_reader(void **state)
{
    (void)state;
    struct fg_model *m = load(MODELS "moonshotai--Kimi-K2.5");
    assert_tower_in_front(m);
    assert_int_equal(m->params_total, 1026879376368ULL);
    fg_model_free(m);
}

/* The routed experts' int4 weights are packed into I32 words (compressed-tensors
 * pack-quantized); the count stays the unpacked one, and a rule says so. */
static void kimi_k25_should_say_its_pack_quantized_weights_are_counted_unpacked(void **state)
{
    (void)state;
    struct fg_model *m = load(MODELS "moonshotai--Kimi-K2.5");
    const struct fg_rule *r = rule_with(m, "pack-quantized int weights counted unpacked");
    assert_non_null(r);
    assert_int_equal(r->scalars, 0);
    fg_model_free(m);
}

/* Trimmed of vision_config: Llama4Config builds (and loads) Llama4VisionConfig()'s default
 * tower then, hidden 768 and output 7680 against the release's 1408 and 4096, so the count
 * is the text model, 107,769,861,120, plus that tower, and unsure. */
static void llama4_should_count_the_class_default_tower_and_say_vision_config_is_missing(
    void **state)
{
    (void)state;
    struct fg_model *m = load(MODELS "meta-llama--Llama-4-Scout-17B-16E-Instruct");
    assert_true(count_kind(m, FG_NODE_VISION) > 0);
    assert_true(has_note(m, "vision_config absent"));
    assert_true(has_note(m, "Llama4Config builds"));
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_int_equal(m->layers, 48);
    assert_int_equal(count_kind(m, FG_NODE_MOE), 48);
    assert_int_equal(m->experts, 16);
    assert_int_equal(m->top_k, 1);
    assert_int_equal(m->params_total, 108225039360ULL);
    fg_model_free(m);
}

/* The vendored Scout config was trimmed of vision_config; with the published
 * one put back the count is the checkpoint's. */
static void llama4_should_count_scout_exactly_with_its_vision_config(void **state)
{
    (void)state;
    FILE *f = fopen(MODELS "meta-llama--Llama-4-Scout-17B-16E-Instruct/config.json", "rb");
    assert_non_null(f);
    char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    cJSON *root = cJSON_Parse(buf);
    assert_non_null(root);
    cJSON *v = cJSON_Parse("{\"hidden_size\": 1408, \"image_size\": 336, "
                           "\"intermediate_size\": 5632, \"model_type\": \"llama4_vision_model\", "
                           "\"num_attention_heads\": 16, \"num_channels\": 3, "
                           "\"num_hidden_layers\": 34, \"patch_size\": 14, "
                           "\"pixel_shuffle_ratio\": 0.5, \"projector_input_dim\": 4096, "
                           "\"projector_output_dim\": 4096, \"vision_output_dim\": 4096}");
    assert_non_null(v);
    cJSON_AddItemToObject(root, "vision_config", v);
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    int rc = build(text, &m, &err);
    free(text);
    assert_int_equal(rc, 0);
    assert_tower_in_front(m);
    assert_int_equal(m->params_total, 108641793536ULL);
    fg_model_free(m);
}

static void multimodal_should_read_unknown_text_type_as_generic_with_a_note(void **state)
{
    (void)state;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    int rc = build("{\"model_type\": \"llava\", \"text_config\": {\"model_type\": \"nova\", "
                   "\"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
                   "\"vocab_size\": 100}, \"vision_config\": {\"hidden_size\": 32, "
                   "\"intermediate_size\": 64, \"num_hidden_layers\": 1, "
                   "\"num_attention_heads\": 2, \"image_size\": 28, \"patch_size\": 14}}",
                   &m, &err);
    assert_int_equal(rc, 0);
    assert_true(m->generic);
    assert_true(has_note(m, "'nova'"));
    assert_tower_in_front(m);
    fg_model_free(m);
}

static void multimodal_should_refuse_a_wrapper_as_text_model(void **state)
{
    (void)state;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    int rc = build("{\"model_type\": \"llava\", \"text_config\": {\"model_type\": \"gemma3\"}}",
                   &m, &err);
    assert_int_equal(rc, FG_E_UNSUPPORTED);
    assert_non_null(strstr(err.detail, "gemma3"));
    fg_model_free(m);
}

static void multimodal_should_reject_vision_config_that_is_not_an_object(void **state)
{
    (void)state;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    int rc = build("{\"model_type\": \"gemma3\", \"vision_config\": 7}", &m, &err);
    assert_int_equal(rc, FG_E_TYPE);
    assert_non_null(strstr(err.detail, "vision_config"));
    fg_model_free(m);
}

/* vision_feature_layer is a layer index or a list of them (LlavaConfig, Mistral3Config):
 * both projectors refuse anything else rather than count it as one layer. */
static void multimodal_should_reject_a_vision_feature_layer_of_another_type(void **state)
{
    (void)state;
    const char *fmt = "{\"model_type\": \"%s\", \"vision_feature_layer\": \"last\", "
                      "\"text_config\": {\"model_type\": \"mistral\", \"hidden_size\": 64, "
                      "\"num_hidden_layers\": 1, \"num_attention_heads\": 4, "
                      "\"num_key_value_heads\": 4, \"intermediate_size\": 128, "
                      "\"vocab_size\": 100}, "
                      "\"vision_config\": {\"hidden_size\": 32, \"intermediate_size\": 64, "
                      "\"num_hidden_layers\": 1, \"num_attention_heads\": 2, "
                      "\"image_size\": 28, \"patch_size\": 14, \"head_dim\": 16}}";
    const char *types[] = {"llava", "mistral3"};
    for (size_t i = 0; i < 2; i++) {
        char json[1024];
        struct fg_model *m = NULL;
        struct fg_err err = {0};
        snprintf(json, sizeof json, fmt, types[i]);
        assert_int_equal(build(json, &m, &err), FG_E_TYPE);
        assert_non_null(strstr(err.detail, "vision_feature_layer"));
        fg_model_free(m);
    }
}

static void siglip_should_count_the_pooling_head_when_enabled(void **state)
{
    (void)state;
    struct fg_model *a = NULL, *b = NULL;
    struct fg_err err = {0};
    const char *fmt = "{\"model_type\": \"gemma3\", \"text_config\": {\"hidden_size\": 64, "
                      "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
                      "\"num_key_value_heads\": 2, \"head_dim\": 16, \"intermediate_size\": 128, "
                      "\"vocab_size\": 100}, \"vision_config\": {\"hidden_size\": 32, "
                      "\"intermediate_size\": 64, \"num_hidden_layers\": 1, "
                      "\"num_attention_heads\": 2, \"image_size\": 28, \"patch_size\": 14, "
                      "\"vision_use_head\": %s}}";
    char json[1024];
    snprintf(json, sizeof json, fmt, "false");
    assert_int_equal(build(json, &a, &err), 0);
    snprintf(json, sizeof json, fmt, "true");
    assert_int_equal(build(json, &b, &err), 0);
    /* probe + MHA in/out + LayerNorm + MLP */
    uint64_t h = 32, f = 64;
    assert_int_equal(b->nodes[0].params - a->nodes[0].params,
                     h + 4 * h * h + 4 * h + 2 * h + 2 * h * f + f + h);
    fg_model_free(a);
    fg_model_free(b);
}

/* Qwen3-Next-80B-A3B's shape fields; mtp_num_hidden_layers spliced in. */
#define QWEN3_NEXT(mtp)                                                                        \
    "{\"model_type\": \"qwen3_next\", \"hidden_size\": 2048, \"intermediate_size\": 5120, "  \
    "\"num_hidden_layers\": 48, \"num_attention_heads\": 16, \"num_key_value_heads\": 2, "    \
    "\"head_dim\": 256, \"vocab_size\": 151936, \"tie_word_embeddings\": false, "             \
    "\"full_attention_interval\": 4, \"linear_conv_kernel_dim\": 4, "                          \
    "\"linear_key_head_dim\": 128, \"linear_value_head_dim\": 128, "                           \
    "\"linear_num_key_heads\": 16, \"linear_num_value_heads\": 32, \"num_experts\": 512, "     \
    "\"num_experts_per_tok\": 10, \"moe_intermediate_size\": 512, "                            \
    "\"shared_expert_intermediate_size\": 512, \"decoder_sparse_step\": 1, "                   \
    "\"mlp_only_layers\": [], \"mtp_num_hidden_layers\": " mtp "}"

static void read_qwen3_next_should_count_delta_and_gated_attention_layers(void **state)
{
    (void)state;
    /* Qwen3NextAttention: q_proj 2048 -> 2 x 16 x 256 (query and gate), k/v 2048 -> 512,
     * o_proj 4096 -> 2048, q_norm / k_norm 256 each */
    const uint64_t attn = 2048ull * 8192 + 2 * 2048ull * 512 + 4096ull * 2048 + 2 * 256;
    /* Qwen3NextGatedDeltaNet: key_dim 2048, value_dim 4096, conv_dim 8192 */
    const uint64_t delta = 2048ull * (2 * 2048 + 2 * 4096) + 2048ull * 64 + 8192ull * 4 + 2 * 32 +
                           128 + 4096ull * 2048;
    /* router, 512 experts of 512, shared expert of 512 and its 1-wide gate */
    const uint64_t moe = 512ull * 2048 + 512ull * 3 * 2048 * 512 + 3ull * 2048 * 512 + 2048;
    const uint64_t body = 2 * 151936ull * 2048 + 12 * attn + 36 * delta + 48 * (moe + 2 * 2048) +
                          2048;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(build(QWEN3_NEXT("0"), &m, &err), 0);
    assert_int_equal(count_kind(m, FG_NODE_ATTN), 12);
    assert_int_equal(count_kind(m, FG_NODE_MAMBA2), 36);
    assert_int_equal(count_kind(m, FG_NODE_MOE), 48);
    assert_int_equal(m->params_total, body);
    /* Qwen3-Coder-Next, same shapes, publishes 79,674,391,296 */
    assert_int_equal(m->params_total, 79674391296ull);
    fg_model_free(m);

    assert_int_equal(build(QWEN3_NEXT("1"), &m, &err), 0);
    /* mtp.fc 4096 -> 2048, two pre-fc norms, one full-attention block with its MoE, mtp.norm */
    assert_int_equal(m->params_total,
                     body + 4096ull * 2048 + 2 * 2048 + (attn + moe + 2 * 2048) + 2048);
    /* Qwen3-Next-80B-A3B-Instruct's published total */
    assert_int_equal(m->params_total, 81324862720ull);
    fg_model_free(m);
}

static void read_qwen3_next_should_reject_value_heads_not_a_multiple_of_key_heads(void **state)
{
    (void)state;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(build("{\"model_type\": \"qwen3_next\", \"hidden_size\": 256, "
                           "\"num_hidden_layers\": 4, \"num_attention_heads\": 4, "
                           "\"vocab_size\": 100, \"linear_num_key_heads\": 3, "
                           "\"linear_num_value_heads\": 4}", &m, &err),
                     FG_E_RANGE);
    assert_non_null(strstr(err.detail, "linear_num_key_heads"));
    assert_null(m);
}

/* Mamba-2 as BambaMixer builds it, inner 512 over 8 heads, 1 group, state 16, 4 taps:
 * in_proj 256 -> 512 + (512 + 2 x 16) + 8, conv over 544 channels + bias, dt_bias / A_log /
 * D, gated norm over 512, out_proj 512 -> 256 */
#define BAMBA_MIXER (256ull * (512 + 544 + 8) + 544 * 4 + 544 + 3 * 8 + 512 + 512ull * 256)
#define MAMBA_KEYS                                                                             \
    "\"mamba_n_heads\": 8, \"mamba_n_groups\": 1, \"mamba_d_state\": 16, \"mamba_d_conv\": 4, " \
    "\"mamba_expand\": 2, \"mamba_conv_bias\": true, \"mamba_proj_bias\": false"
/* q 256 -> 256, k/v 256 -> 128 (2 of 4 heads), o */
#define GQA_256 (256ull * 256 + 2 * 256ull * 128 + 256ull * 256)

static void read_bamba_should_place_attention_by_attn_layer_indices(void **state)
{
    (void)state;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(build("{\"model_type\": \"bamba\", \"hidden_size\": 256, "
                           "\"intermediate_size\": 512, \"num_hidden_layers\": 4, "
                           "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, "
                           "\"vocab_size\": 1000, \"attn_layer_indices\": [2], " MAMBA_KEYS "}",
                           &m, &err),
                     0);
    assert_int_equal(count_kind(m, FG_NODE_MAMBA2), 3);
    assert_int_equal(count_kind(m, FG_NODE_ATTN), 1);
    /* every layer: two RMSNorms and BambaMLP gate / up / down; untied head */
    assert_int_equal(m->params_total, 2 * 1000ull * 256 + 3 * BAMBA_MIXER + GQA_256 +
                                          4 * (2 * 256 + 3ull * 256 * 512) + 256);
    fg_model_free(m);
}

static void read_granitemoehybrid_should_add_experts_and_the_shared_mlp(void **state)
{
    (void)state;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(build("{\"model_type\": \"granitemoehybrid\", \"hidden_size\": 256, "
                           "\"intermediate_size\": 128, \"num_hidden_layers\": 2, "
                           "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, "
                           "\"vocab_size\": 1000, \"tie_word_embeddings\": true, "
                           "\"layers_block_type\": [\"mamba\", \"attention\"], "
                           "\"num_local_experts\": 4, \"num_experts_per_tok\": 2, "
                           "\"shared_intermediate_size\": 384, " MAMBA_KEYS "}",
                           &m, &err),
                     0);
    /* per layer: router 256 x 4, 4 experts of input_linear 256 -> 256 and output_linear
     * 128 -> 256, shared_mlp 256 -> 768 and 384 -> 256, two norms */
    const uint64_t ffn = 4 * 256ull + 4 * 3ull * 256 * 128 + 3ull * 256 * 384 + 2 * 256;
    assert_int_equal(m->params_total, 1000ull * 256 + BAMBA_MIXER + GQA_256 + 2 * ffn + 256);
    assert_int_equal(m->experts, 4);
    fg_model_free(m);
}

/* transformers 5.13 (#46738) saves GraniteMoeHybridConfig.layer_types as
 * "linear_attention" / "full_attention": a re-saved config reads as the legacy one. */
static void read_granitemoehybrid_should_read_the_renamed_layer_types(void **state)
{
    (void)state;
#define GRANITE_TYPES(a, b)                                                                    \
    "{\"model_type\": \"granitemoehybrid\", \"hidden_size\": 256, \"num_hidden_layers\": 2, " \
    "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"vocab_size\": 1000, "          \
    "\"layer_types\": [\"" a "\", \"" b "\"], " MAMBA_KEYS "}"
    struct fg_model *m = NULL, *legacy = NULL;
    struct fg_err err = {0};
    assert_int_equal(build(GRANITE_TYPES("linear_attention", "full_attention"), &m, &err), 0);
    assert_int_equal(build(GRANITE_TYPES("mamba", "attention"), &legacy, &err), 0);
#undef GRANITE_TYPES
    assert_int_equal(count_kind(m, FG_NODE_MAMBA2), 1);
    assert_int_equal(m->params_total, legacy->params_total);
    fg_model_free(m);
    fg_model_free(legacy);
}

/* Granite 4.0 dense (granite-4.0-micro, -h-1b ...): num_local_experts 0 and num_experts_per_tok
 * 0; GraniteMoeHybridDecoderLayer then has no block_sparse_moe, only shared_mlp. */
static void read_granitemoehybrid_should_read_the_dense_release_without_experts(void **state)
{
    (void)state;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(build("{\"model_type\": \"granitemoehybrid\", \"hidden_size\": 256, "
                           "\"intermediate_size\": 128, \"num_hidden_layers\": 2, "
                           "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, "
                           "\"vocab_size\": 1000, \"tie_word_embeddings\": true, "
                           "\"layer_types\": [\"attention\", \"attention\"], "
                           "\"num_local_experts\": 0, \"num_experts_per_tok\": 0, "
                           "\"shared_intermediate_size\": 384, " MAMBA_KEYS "}",
                           &m, &err),
                     0);
    assert_int_equal(count_kind(m, FG_NODE_MOE), 0);
    assert_int_equal(count_kind(m, FG_NODE_MAMBA2), 0);
    const uint64_t ffn = 3ull * 256 * 384 + 2 * 256;
    assert_int_equal(m->params_total, 1000ull * 256 + 2 * (GQA_256 + ffn) + 256);
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    fg_model_free(m);
    /* experts with nobody routed to them is an error naming the key */
    assert_int_equal(build("{\"model_type\": \"granitemoehybrid\", \"num_local_experts\": 4, "
                           "\"num_experts_per_tok\": 0}", &m, &err),
                     FG_E_RANGE);
    assert_non_null(strstr(err.detail, "num_experts_per_tok"));
}

static void read_falcon_h1_should_run_mamba_and_attention_in_every_layer(void **state)
{
    (void)state;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(build("{\"model_type\": \"falcon_h1\", \"hidden_size\": 256, "
                           "\"intermediate_size\": 512, \"num_hidden_layers\": 2, "
                           "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, "
                           "\"vocab_size\": 1000, \"mamba_d_ssm\": 512, "
                           "\"mamba_rms_norm\": false, " MAMBA_KEYS "}", &m, &err),
                     0);
    assert_int_equal(count_kind(m, FG_NODE_MAMBA2), 2);
    assert_int_equal(count_kind(m, FG_NODE_ATTN), 2);
    /* FalconH1Mixer without mamba_rms_norm has no gated norm */
    assert_int_equal(m->params_total, 2 * 1000ull * 256 +
                                          2 * (BAMBA_MIXER - 512 + GQA_256 + 2 * 256 +
                                               3ull * 256 * 512) + 256);
    fg_model_free(m);
}

static void read_qwen3_next_should_give_the_dense_qwen3_5_text_model_one_mlp_a_layer(void **state)
{
    (void)state;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    /* no num_experts: Qwen3.5's dense text model */
    assert_int_equal(build("{\"model_type\": \"qwen3_5_text\", \"hidden_size\": 256, "
                           "\"intermediate_size\": 512, \"num_hidden_layers\": 4, "
                           "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, "
                           "\"head_dim\": 64, \"vocab_size\": 1000, "
                           "\"linear_num_key_heads\": 2, \"linear_num_value_heads\": 4, "
                           "\"linear_key_head_dim\": 32, \"linear_value_head_dim\": 32}", &m, &err),
                     0);
    assert_int_equal(count_kind(m, FG_NODE_MOE), 0);
    assert_int_equal(count_kind(m, FG_NODE_MLP), 4);
    assert_int_equal(count_kind(m, FG_NODE_ATTN), 1);
    assert_int_equal(count_kind(m, FG_NODE_MAMBA2), 3);
    /* gated attention: q 256 -> 2 x 256, k/v 256 -> 128, o, q/k norms 64 each;
     * delta: key_dim 64, value_dim 128, conv_dim 256 */
    const uint64_t attn = 256ull * 512 + 2 * 256ull * 128 + 256ull * 256 + 128;
    const uint64_t delta = 256ull * (2 * 64 + 2 * 128) + 256ull * 8 + 256ull * 4 + 2 * 4 + 32 +
                           128ull * 256;
    assert_int_equal(m->params_total, 2 * 1000ull * 256 + attn + 3 * delta +
                                          4 * (3ull * 256 * 512 + 2 * 256) + 256);
    fg_model_free(m);
}

static void read_multimodal_should_count_mistral3_pixtral_tower_and_projector(void **state)
{
    (void)state;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    /* Mistral-Small-3.2-24B-Instruct-2506's shape fields */
    assert_int_equal(build("{\"model_type\": \"mistral3\", \"spatial_merge_size\": 2, "
                           "\"multimodal_projector_bias\": false, \"vision_feature_layer\": -1, "
                           "\"text_config\": {\"model_type\": \"mistral\", \"head_dim\": 128, "
                           "\"hidden_size\": 5120, \"intermediate_size\": 32768, "
                           "\"num_hidden_layers\": 40, \"num_attention_heads\": 32, "
                           "\"num_key_value_heads\": 8, \"vocab_size\": 131072, "
                           "\"tie_word_embeddings\": false}, "
                           "\"vision_config\": {\"model_type\": \"pixtral\", \"hidden_size\": 1024, "
                           "\"intermediate_size\": 4096, \"num_hidden_layers\": 24, "
                           "\"num_attention_heads\": 16, \"num_channels\": 3, \"patch_size\": 14, "
                           "\"image_size\": 1540, \"head_dim\": 64}}", &m, &err),
                     0);
    /* Pixtral: patch_conv 3 x 14 x 14 -> 1024, ln_pre; per layer q/k/v/o 4 x 1024^2, gated MLP
     * 3 x 1024 x 4096, two RMSNorms; all without bias */
    const uint64_t tower = 3ull * 14 * 14 * 1024 + 1024 +
                           24 * (4ull * 1024 * 1024 + 3ull * 1024 * 4096 + 2 * 1024);
    /* projector: RMSNorm 1024, merging_layer 4096 -> 1024, linear_1 1024 -> 5120, linear_2 */
    const uint64_t proj = 1024 + 4096ull * 1024 + 1024ull * 5120 + 5120ull * 5120;
    const uint64_t text = 2 * 131072ull * 5120 + 40 * (5120ull * 4096 + 2 * 5120ull * 1024 +
                                                       4096ull * 5120 + 3ull * 5120 * 32768 +
                                                       2 * 5120) + 5120;
    assert_int_equal(m->params_total, text + tower + proj);
    assert_int_equal(m->params_total, 24011361280ull); /* its published count */
    fg_model_free(m);
}

/* fg__hy_read_kind_list, the one reader of per-layer kind lists (NemotronH, LFM2,
 * Qwen3-Next, Bamba / GraniteMoeHybrid): the key named as the config spells it. */
static void read_kind_list_should_name_the_key_of_a_bad_list(void **state)
{
    (void)state;
    static const struct {
        const char *json, *detail;
    } cases[] = {
        {"{\"model_type\": \"lfm2\", \"num_hidden_layers\": 3, "
         "\"layer_types\": [\"conv\", \"full_attention\"]}",
         "t.json: key 'layer_types' has 2 entries for 3 layers"},
        {"{\"model_type\": \"qwen3_next\", \"num_hidden_layers\": 2, "
         "\"layer_types\": [\"linear_attention\", \"sliding\"]}",
         "t.json: key 'layer_types' has unknown kind 'sliding' at layer 1"},
        {"{\"model_type\": \"bamba\", \"num_hidden_layers\": 2, "
         "\"layers_block_type\": [\"mamba\", \"attn\"]}",
         "t.json: key 'layers_block_type' has unknown kind 'attn' at layer 1"},
        {"{\"model_type\": \"granitemoehybrid\", \"num_hidden_layers\": 2, "
         "\"layer_types\": [\"mamba\", \"attention\", \"mamba\"]}",
         "t.json: key 'layers_block_type' has 3 entries for 2 layers"},
        {"{\"model_type\": \"nemotron_h\", \"num_hidden_layers\": 2, "
         "\"layers_block_type\": [\"mamba\", \"nope\"]}",
         "t.json: key 'layers_block_type' has unknown kind 'nope' at layer 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct fg_model *m = NULL;
        struct fg_err err = {0};
        assert_int_equal(build(cases[i].json, &m, &err), FG_E_RANGE);
        assert_null(m);
        assert_string_equal(err.detail, cases[i].detail);
    }
}

/* PaliGemma-3b-pt-224's shapes: gemma-2b text (vocab 257216, tied), SigLIP So400m/14 at 224
 * without its pooling head, one biased linear 1152 -> 2048.  2,923,466,480 is the count a
 * published benchmark table gives for it. */
static void read_multimodal_should_count_paligemma_tower_and_linear_projector(void **state)
{
    (void)state;
    struct fg_model *m = built(
        "{\"model_type\": \"paligemma\", \"projection_dim\": 2048, \"text_config\": "
        "{\"hidden_size\": 2048, \"intermediate_size\": 16384, \"model_type\": \"gemma\", "
        "\"num_attention_heads\": 8, \"num_hidden_layers\": 18, \"num_key_value_heads\": 1, "
        "\"vocab_size\": 257216}, \"vision_config\": {\"hidden_size\": 1152, "
        "\"intermediate_size\": 4304, \"model_type\": \"siglip_vision_model\", "
        "\"num_attention_heads\": 16, \"num_hidden_layers\": 27, \"patch_size\": 14, "
        "\"projection_dim\": 2048, \"vision_use_head\": false}}");
    const uint64_t h = 1152, f = 4304, H = 2048;
    const uint64_t vit = (3 * 14 * 14 * h + h) + 256 * h +
                         27 * (2 * 2 * h + 4 * (h * h + h) + (h * f + f) + (f * h + h)) + 2 * h;
    const uint64_t text = 257216 * H +
                          18 * (H * H + 2 * H * 256 + H * H + 3 * H * 16384 + 2 * H) + H;
    assert_int_equal(m->params_total, text + vit + (h * H + H));
    assert_int_equal(m->params_total, 2923466480ull);
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    fg_model_free(m);
}

/* Idefics3 / SmolVLM: the SigLIP-shaped tower without a head and the connector's one linear
 * over scale_factor^2 folded patches. */
static void read_multimodal_should_fold_patches_into_the_idefics3_connector(void **state)
{
    (void)state;
    static const char *const types[] = {"idefics3", "smolvlm"};
    for (size_t i = 0; i < 2; i++) {
        char cfg[1024];
        snprintf(cfg, sizeof cfg,
                 "{\"model_type\": \"%s\", \"scale_factor\": 4, \"text_config\": "
                 "{\"model_type\": \"llama\", \"hidden_size\": 576, "
                 "\"intermediate_size\": 1536, \"num_hidden_layers\": 30, "
                 "\"num_attention_heads\": 9, \"num_key_value_heads\": 3, "
                 "\"vocab_size\": 49280, \"tie_word_embeddings\": true}, "
                 "\"vision_config\": {\"hidden_size\": 768, \"intermediate_size\": 3072, "
                 "\"num_hidden_layers\": 12, \"num_attention_heads\": 12, "
                 "\"image_size\": 512, \"patch_size\": 16}}", types[i]);
        struct fg_model *m = built(cfg);
        const uint64_t h = 768, f = 3072, H = 576, I = 1536;
        const uint64_t vit = (3 * 16 * 16 * h + h) + 1024 * h +
                             12 * (2 * 2 * h + 4 * (h * h + h) + (h * f + f) + (f * h + h)) + 2 * h;
        const uint64_t text = 49280 * H + 30 * (2 * H * H + 2 * H * 192 + 3 * H * I + 2 * H) + H;
        assert_int_equal(m->params_total, text + vit + h * 16 * H);
        fg_model_free(m);
    }
}

/* SmolVLM-256M-Instruct's own config.json: its text_config carries Idefics2's
 * perceiver_config, which Idefics3Model never builds; the count stays exact. */
static void read_multimodal_should_pass_over_smolvlm_idle_perceiver_config(void **state)
{
    (void)state;
    struct fg_model *m = load(MODELS "HuggingFaceTB--SmolVLM-256M-Instruct");
    assert_string_equal(m->model_type, "idefics3");
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    assert_int_equal(m->params_total, 256484928);
    fg_model_free(m);
}

/* LLaVA-NeXT is LLaVA plus image_newline (one text-hidden vector); the tower is the one
 * vision_config.model_type names, so a SigLIP tower counts as SigLIP (LLaVA-OneVision). */
static void read_multimodal_should_add_llava_next_image_newline_and_pick_the_tower(void **state)
{
    (void)state;
    static const char text[] = "\"text_config\": {\"model_type\": \"llama\", "
                               "\"hidden_size\": 512, \"intermediate_size\": 1024, "
                               "\"num_hidden_layers\": 2, \"num_attention_heads\": 8, "
                               "\"vocab_size\": 1000}";
    static const char clip[] = "\"vision_config\": {\"model_type\": \"clip_vision_model\", "
                               "\"hidden_size\": 256, \"intermediate_size\": 512, "
                               "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
                               "\"image_size\": 224, \"patch_size\": 14}";
    char a[1024], b[1024];
    snprintf(a, sizeof a, "{\"model_type\": \"llava\", %s, %s}", text, clip);
    snprintf(b, sizeof b, "{\"model_type\": \"llava_next\", %s, %s}", text, clip);
    struct fg_model *ma = built(a), *mb = built(b);
    assert_int_equal(mb->params_total - ma->params_total, 512);
    fg_model_free(ma);
    fg_model_free(mb);
    /* the same sizes as a SigLIP tower: no class token, no pre-norm, a biased stem, and the
     * pooling head SiglipVisionConfig builds by default */
    char c[1024];
    snprintf(c, sizeof c, "{\"model_type\": \"llava_onevision\", %s, \"vision_config\": "
             "{\"model_type\": \"siglip_vision_model\", %s}", text,
             strstr(clip, "\"hidden_size\""));
    struct fg_model *mc = built(c);
    const uint64_t h = 256, f = 512;
    const uint64_t clip_tower = 3 * 14 * 14 * h + h + 257 * h + 2 * 2 * h +
                                2 * (2 * 2 * h + 4 * (h * h + h) + (h * f + f) + (f * h + h));
    const uint64_t siglip_tower = 3 * 14 * 14 * h + h + 256 * h + 2 * h +
                                  2 * (2 * 2 * h + 4 * (h * h + h) + (h * f + f) + (f * h + h)) +
                                  h + (3 * h * h + 3 * h) + (h * h + h) + 2 * h + (h * f + f) +
                                  (f * h + h);
    struct fg_model *mn = built(b);
    assert_int_equal(mc->params_total, mn->params_total - clip_tower + siglip_tower);
    fg_model_free(mc);
    fg_model_free(mn);
    /* a tower type no vit row describes is refused by name, not counted as CLIP */
    snprintf(c, sizeof c, "{\"model_type\": \"llava\", %s, \"vision_config\": "
             "{\"model_type\": \"internvl_vision\", %s}", text, strstr(clip, "\"hidden_size\""));
    struct fg_err err = {0};
    assert_int_equal(build(c, &mc, &err), FG_E_UNSUPPORTED);
    assert_non_null(strstr(err.detail, "'internvl_vision'"));
}

/* Qwen2.5-VL-7B-Instruct's shapes (text keys in the root, as its published config keeps
 * them): 8,292,166,656, its index total_size 16,584,333,312 B / 2; the visual module alone
 * 676,550,144 (the count LLaMA-Factory logs frozen). */
static void read_multimodal_should_count_qwen2_5_vl_exactly(void **state)
{
    (void)state;
    struct fg_model *m = built(
        "{\"model_type\": \"qwen2_5_vl\", \"hidden_size\": 3584, \"intermediate_size\": 18944, "
        "\"num_attention_heads\": 28, \"num_hidden_layers\": 28, \"num_key_value_heads\": 4, "
        "\"vocab_size\": 152064, \"tie_word_embeddings\": false, \"vision_config\": "
        "{\"depth\": 32, \"hidden_size\": 1280, \"intermediate_size\": 3420, \"num_heads\": 16, "
        "\"in_chans\": 3, \"out_hidden_size\": 3584, \"patch_size\": 14, "
        "\"spatial_merge_size\": 2, \"temporal_patch_size\": 2, \"window_size\": 112, "
        "\"fullatt_block_indexes\": [7, 15, 23, 31]}}");
    assert_int_equal(m->params_total, 8292166656ull);
    uint64_t tower = 0;
    for (size_t i = 0; i < m->n_nodes; i++)
        if (m->nodes[i].stack == FG_STACK_TOWER)
            tower += m->nodes[i].params;
    assert_int_equal(tower, 676550144ull);
    fg_model_free(m);
}

/* Llama-3.2-11B-Vision's shapes: 10,670,220,835, the count a third-party model registry
 * quotes for meta-llama/Llama-3.2-11B-Vision-Instruct; the cross-attention layers add q/k
 * norms and two gates each, and embed_tokens has 8 rows more than lm_head. */
static void read_mllama_should_count_llama_3_2_vision_exactly(void **state)
{
    (void)state;
    static const char cfg[] =
        "{\"model_type\": \"mllama\", \"text_config\": {\"model_type\": \"mllama_text_model\", "
        "\"hidden_size\": 4096, \"intermediate_size\": 14336, \"num_hidden_layers\": 40, "
        "\"num_attention_heads\": 32, \"num_key_value_heads\": 8, \"vocab_size\": 128256, "
        "\"cross_attention_layers\": [3, 8, 13, 18, 23, 28, 33, 38]}, \"vision_config\": "
        "{\"hidden_size\": 1280, \"intermediate_size\": 5120, \"num_hidden_layers\": 32, "
        "\"num_global_layers\": 8, \"num_attention_heads\": 16, \"image_size\": 560, "
        "\"patch_size\": 14, \"max_num_tiles\": 4, \"vision_output_dim\": 7680, "
        "\"supported_aspect_ratios\": [[1, 1], [1, 2], [1, 3], [1, 4], [2, 1], [2, 2], [3, 1], "
        "[4, 1]]}}";
    struct fg_model *m = built(cfg);
    const uint64_t H = 4096, layer = 2 * H * H + 2 * H * 1024 + 3 * H * 14336 + 2 * H;
    const uint64_t text = (128256 + 8) * H + 128256 * H + 40 * layer + 8 * (2 * 128 + 2) + H;
    const uint64_t h = 1280, vl = 4 * h * h + (h * 5120 + 5120) + (5120 * h + h) + 4 * h;
    const uint64_t vision = 3 * 14 * 14 * h + h + 1601 * h + 1 + 9 * 4 * 1601 * h +
                            2 * (9 * 4 * h + 1) + 4 * h + 40 * vl + 8 * 2;
    assert_int_equal(m->params_total, text + vision + (7680 * H + H));
    assert_int_equal(m->params_total, 10670220835ull);
    assert_int_equal(count_kind(m, FG_NODE_ATTN), 40);
    size_t cross = 0;
    for (size_t i = 0; i < m->n_nodes; i++)
        cross += m->nodes[i].kind == FG_NODE_ATTN && m->nodes[i].cross;
    assert_int_equal(cross, 8);
    fg_model_free(m);
}

/* Aya Vision: the SigLIP tower its vision_config names and AyaVisionMultiModalProjector's
 * LayerNorm over hidden x factor^2, linear_1 to alignment_intermediate_size, the SwiGLU halving
 * it and linear_2 to the text hidden; the text model against cohere2 alone. */
static void read_multimodal_should_count_the_aya_vision_swiglu_projector(void **state)
{
    (void)state;
    static const char text[] = "{\"model_type\": \"cohere2\", \"hidden_size\": 512, "
                               "\"intermediate_size\": 1024, \"num_hidden_layers\": 4, "
                               "\"num_attention_heads\": 8, \"num_key_value_heads\": 2, "
                               "\"vocab_size\": 1000}";
    char cfg[1024];
    snprintf(cfg, sizeof cfg, "{\"model_type\": \"aya_vision\", \"downsample_factor\": 2, "
             "\"alignment_intermediate_size\": 2048, \"text_config\": %s, \"vision_config\": "
             "{\"model_type\": \"siglip_vision_model\", \"hidden_size\": 256, "
             "\"intermediate_size\": 512, \"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
             "\"image_size\": 224, \"patch_size\": 14, \"vision_use_head\": false}}", text);
    struct fg_model *m = built(cfg), *t = built(text);
    const uint64_t h = 256, f = 512, wide = 4 * h;
    const uint64_t tower = 3 * 14 * 14 * h + h + 256 * h + 2 * h +
                           2 * (2 * 2 * h + 4 * (h * h + h) + (h * f + f) + (f * h + h));
    const uint64_t proj = 2 * wide + (wide * 2048 + 2048) + (1024 * 512 + 512);
    assert_int_equal(m->params_total, t->params_total + tower + proj);
    fg_model_free(m);
    fg_model_free(t);
}

/* InternVL 2.5-1B's shapes in the transformers layout (InternViT-300M at 448 with
 * [height, width] sizes, Qwen2.5-0.5B untied): 938,193,024, the count a third-party registry
 * quotes for OpenGVLab/InternVL2_5-1B; layer scales and biased q/k/v included. */
static void read_multimodal_should_count_internvl_exactly(void **state)
{
    (void)state;
    static const char cfg[] =
        "{\"model_type\": \"internvl\", \"downsample_ratio\": 0.5, \"text_config\": "
        "{\"model_type\": \"qwen2\", \"hidden_size\": 896, \"intermediate_size\": 4864, "
        "\"num_hidden_layers\": 24, \"num_attention_heads\": 14, \"num_key_value_heads\": 2, "
        "\"vocab_size\": 151674, \"tie_word_embeddings\": false}, \"vision_config\": "
        "{\"model_type\": \"internvl_vision\", \"hidden_size\": 1024, "
        "\"intermediate_size\": 4096, \"num_hidden_layers\": 24, \"num_attention_heads\": 16, "
        "\"image_size\": [448, 448], \"patch_size\": [14, 14], \"attention_bias\": true, "
        "\"use_qk_norm\": false, \"norm_type\": \"layer_norm\", \"use_mean_pooling\": true}}";
    struct fg_model *m = built(cfg);
    const uint64_t h = 1024;
    const uint64_t vision = (3 * 14 * 14 * h + h) + h + 1025 * h +
                            24 * (4 * (h * h + h) + (h * 4096 + 4096) + (4096 * h + h) + 4 * h +
                                  2 * h);
    const uint64_t proj = 2 * 4 * h + (4 * h * 896 + 896) + (896 * 896 + 896);
    assert_int_equal(m->params_total - vision - proj, 493798016ull + 151674ull * 896);
    assert_int_equal(m->params_total, 938193024ull);
    fg_model_free(m);
    /* a non-square size is refused by name */
    struct fg_err err = {0};
    assert_int_equal(build("{\"model_type\": \"internvl\", \"vision_config\": "
                           "{\"image_size\": [448, 224]}}", &m, &err), FG_E_UNSUPPORTED);
    assert_non_null(strstr(err.detail, "image_size"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(read_qwen3_next_should_count_delta_and_gated_attention_layers),
        cmocka_unit_test(read_multimodal_should_count_mistral3_pixtral_tower_and_projector),
        cmocka_unit_test(read_multimodal_should_count_paligemma_tower_and_linear_projector),
        cmocka_unit_test(read_multimodal_should_count_qwen2_5_vl_exactly),
        cmocka_unit_test(read_mllama_should_count_llama_3_2_vision_exactly),
        cmocka_unit_test(read_multimodal_should_count_the_aya_vision_swiglu_projector),
        cmocka_unit_test(read_multimodal_should_count_internvl_exactly),
        cmocka_unit_test(read_multimodal_should_fold_patches_into_the_idefics3_connector),
        cmocka_unit_test(read_multimodal_should_pass_over_smolvlm_idle_perceiver_config),
        cmocka_unit_test(read_multimodal_should_add_llava_next_image_newline_and_pick_the_tower),
        cmocka_unit_test(read_qwen3_next_should_give_the_dense_qwen3_5_text_model_one_mlp_a_layer),
        cmocka_unit_test(read_bamba_should_place_attention_by_attn_layer_indices),
        cmocka_unit_test(read_granitemoehybrid_should_add_experts_and_the_shared_mlp),
        cmocka_unit_test(read_granitemoehybrid_should_read_the_dense_release_without_experts),
        cmocka_unit_test(read_granitemoehybrid_should_read_the_renamed_layer_types),
        cmocka_unit_test(read_falcon_h1_should_run_mamba_and_attention_in_every_layer),
        cmocka_unit_test(read_qwen3_next_should_reject_value_heads_not_a_multiple_of_key_heads),
        cmocka_unit_test(nemotron_h_should_follow_the_pattern_layer_by_layer),
        cmocka_unit_test(nemotron_h_should_count_nano_9b_v2_exactly),
        cmocka_unit_test(nemotron_h_should_describe_the_mamba2_mixer),
        cmocka_unit_test(nemotron_h_should_read_moe_layers_of_nano_30b),
        cmocka_unit_test(nemotron_h_should_reject_pattern_of_wrong_length_naming_key),
        cmocka_unit_test(nemotron_h_should_reject_unknown_pattern_letter_naming_key),
        cmocka_unit_test(nemotron_h_should_need_a_pattern),
        cmocka_unit_test(nemotron_h_should_read_layers_block_type_like_the_pattern),
        cmocka_unit_test(lfm2_should_count_1_2b_exactly_with_convs_and_attention),
        cmocka_unit_test(lfm2_should_read_layer_types_like_full_attn_idxs),
        cmocka_unit_test(lfm2_should_reject_conv_dim_other_than_hidden),
        cmocka_unit_test(llava_should_have_a_clip_tower_and_llama_text),
        cmocka_unit_test(gemma3_should_count_medgemma_27b_exactly),
        cmocka_unit_test(qwen2_vl_should_count_olmocr_exactly_from_root_text_keys),
        cmocka_unit_test(kimi_k25_should_count_exactly_through_the_kimi_k2_reader),
        cmocka_unit_test(kimi_k25_should_say_its_pack_quantized_weights_are_counted_unpacked),
        cmocka_unit_test(llama4_should_count_the_class_default_tower_and_say_vision_config_is_missing),
        cmocka_unit_test(llama4_should_count_scout_exactly_with_its_vision_config),
        cmocka_unit_test(multimodal_should_read_unknown_text_type_as_generic_with_a_note),
        cmocka_unit_test(multimodal_should_refuse_a_wrapper_as_text_model),
        cmocka_unit_test(multimodal_should_reject_vision_config_that_is_not_an_object),
        cmocka_unit_test(multimodal_should_reject_a_vision_feature_layer_of_another_type),
        cmocka_unit_test(siglip_should_count_the_pooling_head_when_enabled),
        cmocka_unit_test(read_kind_list_should_name_the_key_of_a_bad_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
