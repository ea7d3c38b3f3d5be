/*
 * test_arch_gemma4.c - the Gemma 4 reader (engine/arch/vision/gemma4.c): the released
 * configs' counts written out term by term from transformers models/gemma4/modeling_gemma4.py
 * (@decba1d2ea), against the published totals, and the switches no release in the fixtures
 * sets (KV-shared layers, per-layer inputs, the audio tower, the wrapper's head tie).
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

/* A Gemma4TextDecoderLayer's attention: q / o over heads x d, k (and v unless kv_eq) over
 * kv x d, q_norm and k_norm over d. */
static uint64_t attn(uint64_t h, uint64_t heads, uint64_t kv, uint64_t d, bool kv_eq)
{
    return 2 * h * heads * d + (kv_eq ? 1 : 2) * h * kv * d + 2 * d;
}

/* Gemma4VisionModel + embed_vision at the released 27 x 1152 shapes (16 heads of 72, MLP
 * 4304, patch 16, 10240 positions, standardize), into a text model of width text_h. */
static uint64_t vision_1152(uint64_t text_h)
{
    const uint64_t h = 1152, f = 4304, L = 27, d = 72;
    const uint64_t layer = 4 * h * 16 * d + 2 * d + 3 * h * f + 4 * h;
    return L * layer + 3 * 16 * 16 * h + 2 * 10240 * h + 2 * h /* std_bias, std_scale */
           + h * text_h;                                      /* embedding_projection */
}

/* Five sliding : one full layers (the released layer_types), each layer's norms, MLP and
 * layer_scalar; the MoE branch with experts of w when e > 0. */
static uint64_t text_31_26(uint64_t h, uint64_t L, uint64_t heads, uint64_t kv, uint64_t gkv,
                           uint64_t inter, uint64_t e, uint64_t w)
{
    uint64_t n = 262144 * h + h; /* embed_tokens (tied head), norm */
    for (uint64_t l = 0; l < L; l++) {
        bool full = (l + 1) % 6 == 0;
        n += full ? attn(h, heads, gkv, 512, true) : attn(h, heads, kv, 256, false);
        n += 4 * h + 3 * h * inter + 1;
        if (e)
            n += 3 * h + h * e + h + e + e * 3 * w * h;
    }
    return n;
}

static void read_gemma4_should_count_the_26b_a4b_release_term_by_term(void **state)
{
    (void)state;
    struct fg_model *m = load("tests/fixtures/models/google--gemma-4-26B-A4B");
    uint64_t want = text_31_26(2816, 30, 16, 8, 2, 2112, 128, 704) + vision_1152(2816);
    assert_int_equal(want, 25805936206ull); /* the published safetensors total */
    assert_int_equal(m->params_total, want);
    assert_int_equal(m->params_buffers, 30 + 2 * 1152);
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    assert_int_equal(m->experts, 128);
    assert_int_equal(m->top_k, 8);
    assert_true(m->tied);
    const struct fg_node *a = first_of(m, FG_NODE_ATTN);
    assert_int_equal(a->window, 1024);
    assert_int_equal(a->kv_heads, 8);
    assert_non_null(lin(a, "v"));
    const struct fg_node *g = NULL; /* the first full-attention layer: the sixth */
    for (size_t i = 0; i < m->n_nodes && !g; i++)
        if (m->nodes[i].kind == FG_NODE_ATTN && m->nodes[i].layer == 5)
            g = &m->nodes[i];
    assert_non_null(g);
    assert_int_equal(g->window, 0);
    assert_int_equal(g->kv_heads, 2);
    assert_int_equal(g->head_dim, 512);
    assert_null(lin(g, "v")); /* attention_k_eq_v */
    const struct fg_node *e = first_of(m, FG_NODE_MOE);
    assert_int_equal(e->lora_experts, FG_LORA_EXPERTS_NONE);
    assert_non_null(lin(e, "gate_up"));
    assert_int_equal(count_kind(m, FG_NODE_MOE), 30);
    assert_int_equal(count_kind(m, FG_NODE_MLP), 30); /* the dense MLP runs beside it */
    assert_int_equal(m->nodes[0].kind, FG_NODE_VISION);
    fg_model_free(m);
}

static void read_gemma4_should_count_the_31b_nvfp4_repack_as_its_shapes(void **state)
{
    (void)state;
    struct fg_model *m = load("tests/fixtures/models/nvidia--Gemma-4-31B-IT-NVFP4");
    uint64_t want = text_31_26(5376, 60, 32, 16, 4, 21504, 0, 0) + vision_1152(5376);
    assert_int_equal(want, 31273088876ull); /* google/gemma-4-31B-it's published total */
    assert_int_equal(m->params_total, want);
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    assert_int_equal(count_kind(m, FG_NODE_MOE), 0);
    assert_int_equal(m->experts, 0);
    fg_model_free(m);
}

/* A small Gemma4ForCausalLM with every text switch set: per-layer inputs (p 8), the last two
 * of six layers KV-shared with a double-wide MLP, keys as values in the full layers. */
#define SHARED_TEXT                                                                            \
    "\"vocab_size\": 1000, \"hidden_size\": 64, \"intermediate_size\": 128, "                  \
    "\"num_hidden_layers\": 6, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "       \
    "\"head_dim\": 16, \"global_head_dim\": 32, \"num_global_key_value_heads\": 1, "           \
    "\"attention_k_eq_v\": true, \"hidden_size_per_layer_input\": 8, "                         \
    "\"vocab_size_per_layer_input\": 500, \"num_kv_shared_layers\": 2, "                       \
    "\"use_double_wide_mlp\": true, \"sliding_window\": 128"

static void read_gemma4_text_should_build_shared_layers_without_keys_and_values(void **state)
{
    (void)state;
    struct fg_model *m = built("{\"model_type\": \"gemma4_text\", " SHARED_TEXT "}");
    const uint64_t h = 64, p = 8, L = 6;
    uint64_t want = 1000 * h + h + 500 * L * p + h * L * p + p;
    for (uint64_t l = 0; l < L; l++) {
        bool full = l == 5, shared = l >= 4;
        uint64_t d = full ? 32 : 16;
        if (shared)
            want += 2 * h * 4 * d + d; /* q, o, q_norm */
        else
            want += full ? attn(h, 4, 1, d, true) : attn(h, 4, 2, d, false);
        want += 4 * h + 3 * h * 128 * (shared ? 2 : 1) + 1;
        want += 2 * h * p + h; /* per_layer_input_gate, per_layer_projection, norm */
    }
    assert_int_equal(m->params_total, want);
    assert_true(m->unsure_count_only);
    assert_string_equal(m->unsure_key, "num_kv_shared_layers");
    assert_true(has_note(m, "reuse earlier keys and values"));
    fg_model_free(m);
}

/* Gemma4AudioModel at Gemma4AudioConfig's defaults (hidden 1024, 12 layers, 8 heads, channels
 * 128 / 32, kernel 5, clipped linears, output 1536) and its embedder into hidden 64. */
static void read_gemma4_should_count_the_audio_conformer_at_class_defaults(void **state)
{
    (void)state;
    const uint64_t h = 1024, L = 12, c0 = 128, c1 = 32, o = 1536;
    uint64_t layer = 2 * (2 * 4 * h * h + 2 * h)          /* two feed-forwards */
                     + 5 * h * h + h / 8                  /* q k v post relative_k, scale */
                     + 3 * h * h + 5 * h + 2 * h          /* light conv */
                     + 3 * h                              /* norm_pre / post_attn, norm_out */
                     + 4 * 10;                            /* clip scalars */
    uint64_t audio = L * layer + 9 * c0 + c0 + 9 * c0 * c1 + c1 + c0 / 4 * c1 * h +
                     h * o + o + o * 64;
    uint64_t text = exact_count("{\"model_type\": \"gemma4\", \"vision_config\": null, "
                                "\"text_config\": {" SHARED_TEXT ", \"num_kv_shared_layers\": 0}}");
    uint64_t both = exact_count("{\"model_type\": \"gemma4\", \"vision_config\": null, "
                                "\"audio_config\": {\"model_type\": \"gemma4_audio\"}, "
                                "\"text_config\": {" SHARED_TEXT ", \"num_kv_shared_layers\": 0}}");
    assert_int_equal(both - text, audio);
}

static void read_gemma4_should_tie_the_head_by_the_root_config(void **state)
{
    (void)state;
    uint64_t tied = exact_count("{\"model_type\": \"gemma4\", \"text_config\": {" SHARED_TEXT
                                ", \"num_kv_shared_layers\": 0, \"tie_word_embeddings\": false}}");
    uint64_t open = exact_count("{\"model_type\": \"gemma4\", \"tie_word_embeddings\": false, "
                                "\"text_config\": {" SHARED_TEXT ", \"num_kv_shared_layers\": 0, "
                                "\"tie_word_embeddings\": true}}");
    assert_int_equal(open - tied, 1000 * 64);
}

static void read_gemma4_should_refuse_a_moe_block_without_its_sizes(void **state)
{
    (void)state;
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(build("{\"model_type\": \"gemma4_text\", " SHARED_TEXT ", "
                           "\"enable_moe_block\": true, \"top_k_experts\": 2, "
                           "\"moe_intermediate_size\": 32}", &m, &err), FG_E_MISSING);
    assert_non_null(strstr(err.detail, "num_experts"));
    assert_null(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(read_gemma4_should_count_the_26b_a4b_release_term_by_term),
        cmocka_unit_test(read_gemma4_should_count_the_31b_nvfp4_repack_as_its_shapes),
        cmocka_unit_test(read_gemma4_text_should_build_shared_layers_without_keys_and_values),
        cmocka_unit_test(read_gemma4_should_count_the_audio_conformer_at_class_defaults),
        cmocka_unit_test(read_gemma4_should_tie_the_head_by_the_root_config),
        cmocka_unit_test(read_gemma4_should_refuse_a_moe_block_without_its_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
