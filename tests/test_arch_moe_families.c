/*
 * test_arch_moe_families.c - the causal-LM readers of engine/arch/moe/dbrx_jetmoe_minimax.c
 * and afmoe_longcat_doge.c, step3p7.c and the rows added beside them (dots1, hy_v3 in
 * moe_rows.c; apertus, bitnet in llama_rows.c): each count written out term by term from the
 * transformers class, at the published shapes of a release, with the published total where
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

static void assert_unsure(const char *json, const char *key)
{
    struct fg_model *m = built(json);
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_string_equal(m->unsure_key, key);
    fg_model_free(m);
}

static void assert_refused(const char *json, int code, const char *words)
{
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(build(json, &m, &err), code);
    assert_null(m);
    if (!strstr(err.detail, words))
        print_message("%s\n", err.detail);
    assert_non_null(strstr(err.detail, words));
}

/* dbrx-instruct's shapes (d_model 6144, 48 heads, 8 kv heads, 40 blocks, 16 experts of
 * 10752, top-4, vocab 100352). */
#define DBRX_CFG                                                                            \
    "{\"model_type\": \"dbrx\", \"d_model\": 6144, \"n_heads\": 48, \"n_layers\": 40, "    \
    "\"max_seq_len\": 32768, \"vocab_size\": 100352, \"tie_word_embeddings\": false, "      \
    "\"attn_config\": {\"clip_qkv\": 8, \"kv_n_heads\": 8, \"rope_theta\": 500000}, "       \
    "\"ffn_config\": {\"ffn_act_fn\": {\"name\": \"silu\"}, \"ffn_hidden_size\": 10752, "   \
    "\"moe_num_experts\": 16, \"moe_top_k\": 4}}"

static void read_dbrx_should_count_fused_wqkv_and_stacked_glu_experts(void **state)
{
    (void)state;
    const uint64_t h = 6144, hd = 128, kv = 8, e = 16, f = 10752, v = 100352;
    const uint64_t attn = h * (h + 2 * kv * hd) + h * h;   /* Wqkv, out_proj */
    const uint64_t ffn = h * e + 3 * e * f * h;            /* router.layer, w1 v1 w2 */
    const uint64_t layer = 2 * h + attn + ffn;             /* norm_1, norm_2: no bias */
    uint64_t n = exact_count(DBRX_CFG);
    assert_int_equal(n, v * h + 40 * layer + h + v * h);
    struct fg_model *m = built(DBRX_CFG);
    assert_int_equal(m->kv_heads, 8);
    assert_int_equal(m->experts, 16);
    assert_int_equal(m->top_k, 4);
    fg_model_free(m);
    /* the sub-configs' defaults: kv_n_heads 1, 4 experts of 3584, top-1 */
    const uint64_t H = 2048, F = 3584;
    assert_int_equal(exact_count("{\"model_type\": \"dbrx\"}"),
                     2 * 32000 * H + 24 * (2 * H + H * (H + 2 * 128) + H * H + H * 4 +
                                           3 * 4 * F * H) + H);
    assert_refused("{\"model_type\": \"dbrx\", \"tie_word_embeddings\": true}", FG_E_RANGE,
                   "tie_word_embeddings");
    assert_refused("{\"model_type\": \"dbrx\", \"attn_config\": {\"kv_n_heads\": 5}}",
                   FG_E_RANGE, "kv_n_heads");
    assert_refused("{\"model_type\": \"dbrx\", \"ffn_config\": 3}", FG_E_TYPE, "ffn_config");
}

/* A re-saved DBRX config (mlx-community/dbrx-instruct-4bit, tests/fixtures/models) carries the
 * PretrainedConfig attributes of its sub-configs, tie_word_embeddings true among them; the
 * model ties on the top-level key alone, so the count stays exact and the same. */
static void read_dbrx_should_leave_the_sub_configs_base_attributes_alone(void **state)
{
    (void)state;
    const char *resaved =
        "{\"model_type\": \"dbrx\", \"d_model\": 6144, \"n_heads\": 48, \"n_layers\": 40, "
        "\"max_seq_len\": 32768, \"vocab_size\": 100352, \"tie_word_embeddings\": false, "
        "\"attn_config\": {\"tie_word_embeddings\": true, \"model_type\": \"\", "
        "\"clip_qkv\": 8, \"kv_n_heads\": 8, \"rope_theta\": 500000}, "
        "\"ffn_config\": {\"tie_word_embeddings\": true, \"model_type\": \"\", "
        "\"ffn_act_fn\": {\"name\": \"silu\"}, \"ffn_hidden_size\": 10752, "
        "\"moe_num_experts\": 16, \"moe_top_k\": 4}}";
    assert_int_equal(exact_count(resaved), exact_count(DBRX_CFG));
    assert_refused("{\"model_type\": \"dbrx\", \"attn_config\": {\"tie_word_embeddings\": 2}}",
                   FG_E_TYPE, "tie_word_embeddings");
}

/* Hunyuan-A13B-Instruct's shapes: hidden 4096, 32 layers, 32 heads, 8 kv, head_dim 128,
 * intermediate 3072, 64 experts top-8, vocab 128167, tied. */
#define HUNYUAN_CFG                                                                         \
    "{\"model_type\": \"hunyuan_v1_moe\", \"hidden_size\": 4096, \"num_hidden_layers\": 32, " \
    "\"num_attention_heads\": 32, \"num_key_value_heads\": 8, \"head_dim\": 128, "          \
    "\"intermediate_size\": 3072, \"vocab_size\": 128167, \"tie_word_embeddings\": true, "  \
    "\"num_experts\": 64, \"moe_topk\": %s, \"moe_intermediate_size\": %s, "                  \
    "\"num_shared_expert\": %s, \"use_mixed_mlp_moe\": true}"

static void read_hunyuan_moe_should_count_shared_mlp_and_per_layer_lists(void **state)
{
    (void)state;
    char json[2048], l8[256], l3072[512], l1[256];
    size_t a = 0, b = 0, c = 0;
    for (int i = 0; i < 32; i++) {
        a += (size_t)snprintf(l8 + a, sizeof l8 - a, "%s8", i ? "," : "[");
        b += (size_t)snprintf(l3072 + b, sizeof l3072 - b, "%s3072", i ? "," : "[");
        c += (size_t)snprintf(l1 + c, sizeof l1 - c, "%s1", i ? "," : "[");
    }
    snprintf(l8 + a, sizeof l8 - a, "]");
    snprintf(l3072 + b, sizeof l3072 - b, "]");
    snprintf(l1 + c, sizeof l1 - c, "]");
    snprintf(json, sizeof json, HUNYUAN_CFG, l8, l3072, l1);
    const uint64_t h = 4096, q = 32 * 128, kv = 8 * 128, f = 3072, e = 64;
    const uint64_t attn = h * q + 2 * h * kv + q * h + 2 * 128; /* + query/key_layernorm */
    const uint64_t moe = h * e + e * 3 * h * f + 3 * h * f;      /* wg, experts, shared_mlp */
    uint64_t n = exact_count(json);
    assert_int_equal(n, 128167 * h + 32 * (2 * h + attn + moe) + h);
    /* the integer spellings read the same */
    snprintf(json, sizeof json, HUNYUAN_CFG, "8", "3072", "1");
    assert_int_equal(exact_count(json), n);
    /* the remote code's wider experts or more shared MLPs are not what the class builds */
    snprintf(json, sizeof json, HUNYUAN_CFG, "8", "1536", "1");
    assert_unsure(json, "moe_intermediate_size");
    snprintf(json, sizeof json, HUNYUAN_CFG, "8", "3072", "2");
    assert_unsure(json, "num_shared_expert");
    snprintf(json, sizeof json, HUNYUAN_CFG, "[8, 8]", "3072", "1");
    assert_refused(json, FG_E_RANGE, "moe_topk");
}

/* The release's remote code (model_type hunyuan, Tencent-Hunyuan/Hunyuan-A13B models/
 * modeling_hunyuan.py): q/k norms under use_qk_norm, a shared MLP under use_mixed_mlp_moe of
 * intermediate_size x num_shared_expert[0]; use_cla shares K/V the reader does not build. */
#define HUNYUAN_REMOTE_CFG                                                                  \
    "{\"model_type\": \"hunyuan\", \"hidden_size\": 4096, \"num_hidden_layers\": 32, "        \
    "\"num_attention_heads\": 32, \"num_key_value_heads\": 8, \"attention_head_dim\": 128, "  \
    "\"intermediate_size\": 3072, \"vocab_size\": 128167, \"tie_word_embeddings\": true, "  \
    "\"num_experts\": 64, \"moe_topk\": 8, \"moe_intermediate_size\": 3072, "                \
    "\"num_shared_expert\": %s, \"use_qk_norm\": %s, \"use_mixed_mlp_moe\": %s, "             \
    "\"use_cla\": %s}"

static void read_hunyuan_remote_should_follow_its_switches(void **state)
{
    (void)state;
    char json[1024];
    const uint64_t h = 4096, f = 3072, norms = 32 * 2 * 128, shared = 32 * 3 * h * f;
    snprintf(json, sizeof json, HUNYUAN_REMOTE_CFG, "1", "true", "true", "false");
    uint64_t n = exact_count(json);
    /* the switches on read as transformers' class: Hunyuan-A13B's 80,393,183,232 */
    assert_int_equal(n, 80393183232ULL);
    snprintf(json, sizeof json, HUNYUAN_REMOTE_CFG, "2", "true", "true", "false");
    assert_int_equal(exact_count(json), n + shared);
    snprintf(json, sizeof json, HUNYUAN_REMOTE_CFG, "1", "false", "true", "false");
    assert_int_equal(exact_count(json), n - norms);
    snprintf(json, sizeof json, HUNYUAN_REMOTE_CFG, "1", "true", "false", "false");
    assert_int_equal(exact_count(json), n - shared);
    snprintf(json, sizeof json, HUNYUAN_REMOTE_CFG, "1", "true", "true", "true");
    assert_unsure(json, "use_cla");
}

/* JetMoE-8B's shapes: hidden 2048, 24 layers, 16 kv heads x 128 channels, 8 experts top-2
 * in attention and MLP, intermediate 5632, vocab 32000, tied. */
static void read_jetmoe_should_count_attention_and_mlp_experts(void **state)
{
    (void)state;
    const uint64_t h = 2048, kvp = 16 * 128, e = 8, f = 5632;
    const uint64_t moa = h * e + e * kvp * h + e * h * kvp + h + h * 2 * kvp;
    const uint64_t moe = h * e + e * 2 * f * h + e * h * f + h;
    const char *cfg = "{\"model_type\": \"jetmoe\", \"hidden_size\": 2048, "
                      "\"num_hidden_layers\": 24, \"num_key_value_heads\": 16, "
                      "\"kv_channels\": 128, \"intermediate_size\": 5632, "
                      "\"num_local_experts\": 8, \"num_experts_per_tok\": 2, "
                      "\"vocab_size\": 32000, \"max_position_embeddings\": 4096, "
                      "\"tie_word_embeddings\": true}";
    uint64_t n = exact_count(cfg);
    assert_int_equal(n, 32000 * h + 24 * (2 * h + moa + moe) + h);
    struct fg_model *m = built(cfg);
    assert_int_equal(m->heads, 32); /* num_key_value_heads x num_experts_per_tok */
    assert_int_equal(m->head_dim, 128);
    fg_model_free(m);
    assert_refused("{\"model_type\": \"jetmoe\", \"num_experts_per_tok\": 9}", FG_E_RANGE,
                   "num_experts_per_tok");
    /* the first release's spellings (n_embd, n_layer, moe_num_experts, moe_top_k,
     * ffn_hidden_size) read the same */
    assert_int_equal(exact_count("{\"model_type\": \"jetmoe\", \"n_embd\": 2048, \"n_layer\": 24, "
                           "\"n_head\": 16, \"num_key_value_heads\": 16, \"kv_channels\": 128, "
                           "\"ffn_hidden_size\": 5632, \"moe_num_experts\": 8, "
                           "\"moe_top_k\": 2, \"vocab_size\": 32000, "
                           "\"tie_word_embeddings\": true}"),
                     n);
}

/* LFM2-8B-A1B's shapes: hidden 2048, 24 layers of which 6 attend, 32 heads, 8 kv, dense
 * intermediate 7168 in the first 2 layers, 32 experts of 1792 top-4 with the expert bias,
 * vocab 65536, tied. */
static void read_lfm2_moe_should_place_dense_and_sparse_feed_forwards(void **state)
{
    (void)state;
    static const char *const types =
        "[\"conv\", \"conv\", \"full_attention\", \"conv\", \"conv\", \"conv\", "
        "\"full_attention\", \"conv\", \"conv\", \"conv\", \"full_attention\", \"conv\", "
        "\"conv\", \"conv\", \"full_attention\", \"conv\", \"conv\", \"conv\", "
        "\"full_attention\", \"conv\", \"conv\", \"full_attention\", \"conv\", \"conv\"]";
    char json[2048];
    snprintf(json, sizeof json,
             "{\"model_type\": \"lfm2_moe\", \"hidden_size\": 2048, \"num_hidden_layers\": 24, "
             "\"num_attention_heads\": 32, \"num_key_value_heads\": 8, "
             "\"intermediate_size\": 7168, \"moe_intermediate_size\": 1792, "
             "\"num_dense_layers\": 2, \"num_experts\": 32, \"num_experts_per_tok\": 4, "
             "\"use_expert_bias\": true, \"vocab_size\": 65536, \"conv_L_cache\": 3, "
             "\"conv_bias\": false, \"tie_embedding\": true, \"layer_types\": %s}", types);
    const uint64_t h = 2048, kv = 512;
    const uint64_t attn = 2 * h * h + 2 * h * kv + 2 * 64;  /* + q/k_layernorm */
    const uint64_t conv = h * 3 * h + h * h + h * 3;        /* in_proj, out_proj, conv */
    const uint64_t dense = 3 * h * 7168;
    const uint64_t moe = h * 32 + 32 * 3 * h * 1792 + 32;   /* gate, experts, expert_bias */
    uint64_t n = exact_count(json);
    assert_int_equal(n, 65536 * h + 6 * attn + 18 * conv + 2 * dense + 22 * moe + 24 * 2 * h + h);
    assert_refused("{\"model_type\": \"lfm2_moe\"}", FG_E_MISSING, "layer_types");
}

/* dots.llm1's shapes: hidden 4096, 62 layers (the first dense), 32 heads, MHA, 128
 * experts of 1408 top-6 with 2 shared, dense intermediate 10944, vocab 152064. */
static void dots1_row_should_count_qwen3_attention_over_deepseek_experts(void **state)
{
    (void)state;
    const uint64_t h = 4096, e = 128, w = 1408;
    const uint64_t attn = 4 * h * h + 2 * 128;
    const uint64_t moe = h * e + e * 3 * h * w + 3 * h * 2 * w + e; /* + score bias */
    const uint64_t dense = 3 * h * 10944;
    uint64_t n = exact_count("{\"model_type\": \"dots1\", \"hidden_size\": 4096, "
                       "\"num_hidden_layers\": 62, \"num_attention_heads\": 32, "
                       "\"num_key_value_heads\": 32, \"head_dim\": 128, "
                       "\"intermediate_size\": 10944, \"moe_intermediate_size\": 1408, "
                       "\"n_routed_experts\": 128, \"n_shared_experts\": 2, "
                       "\"num_experts_per_tok\": 6, \"first_k_dense_replace\": 1, "
                       "\"vocab_size\": 152064, \"tie_word_embeddings\": false}");
    assert_int_equal(n, 2 * 152064 * h + 62 * (2 * h + attn) + dense + 61 * moe + h);
}

/* Apertus-8B's shapes: hidden 4096, 32 layers, 32 heads, 8 kv, plain xIELU MLP 21504,
 * vocab 131072, untied. */
static void apertus_and_bitnet_rows_should_count_xielu_and_sub_norms(void **state)
{
    (void)state;
    const uint64_t h = 4096, kv = 1024, f = 21504;
    const uint64_t layer = 2 * h * h + 2 * h * kv + 2 * 128 + 2 * h * f + 2 * h + 4;
    const char *cfg = "{\"model_type\": \"apertus\", \"hidden_size\": 4096, "
                      "\"num_hidden_layers\": 32, \"num_attention_heads\": 32, "
                      "\"num_key_value_heads\": 8, \"intermediate_size\": 21504, "
                      "\"vocab_size\": 131072, \"hidden_act\": \"xielu\", "
                      "\"tie_word_embeddings\": false}";
    uint64_t n = exact_count(cfg);
    assert_int_equal(n, 2 * 131072 * h + 32 * layer + h);
    struct fg_model *m = built(cfg);
    /* XIELUActivation's beta and eps are buffers: sum(p.numel()) of the loaded model,
     * 8,053,338,176, is the count without them */
    assert_int_equal(m->params_total - m->params_buffers, 8053338176ull);
    fg_model_free(m);
    /* another activation stores nothing */
    assert_int_equal(exact_count("{\"model_type\": \"apertus\"}") -
                         exact_count("{\"model_type\": \"apertus\", \"hidden_act\": \"relu2\"}"),
                     32 * 4);
    /* bitnet-b1.58-2B-4T: hidden 2560, 30 layers, 20 heads, 5 kv (the class default),
     * 6912 wide, vocab 128256, tied; attn_sub_norm over hidden, ffn_sub_norm over 6912 */
    const uint64_t H = 2560, KV = 640, F = 6912;
    const uint64_t bl = 2 * H * H + 2 * H * KV + H + 3 * H * F + F + 2 * H;
    uint64_t nb = exact_count("{\"model_type\": \"bitnet\", \"tie_word_embeddings\": true}");
    assert_int_equal(nb, 128256 * H + 30 * bl + H);
    assert_int_equal(nb, 2412820480ull);
}

/* The llama-style rows: CWM (32B shapes), Ministral-3 8B's text model, VaultGemma-1B,
 * Jais-2-8B, nanochat-d32, Persimmon-8B, each term by term. */
static void llama_style_rows_should_follow_their_classes(void **state)
{
    (void)state;
    /* CWM: hidden 6144, 64 layers, 48 heads, 8 kv (default), head_dim 128, 21504 wide,
     * vocab 128256, no attention bias */
    const uint64_t h = 6144, q = 6144, kv = 1024, f = 21504;
    assert_int_equal(exact_count("{\"model_type\": \"cwm\"}"),
                     2 * 128256 * h + 64 * (2 * h * q + 2 * h * kv + 3 * h * f + 2 * h) + h);
    /* Ministral-3 8B text: hidden 4096, 34 layers, 32 heads, 8 kv, 14336 wide, vocab 131072 */
    const uint64_t H = 4096;
    assert_int_equal(exact_count("{\"model_type\": \"ministral3\"}"),
                     2 * 131072 * H + 34 * (2 * H * H + 2 * H * 1024 + 3 * H * 14336 + 2 * H) + H);
    /* VaultGemma-1B: hidden 1152, 26 layers, 4 heads x 256, 4 kv, 6912 wide, tied; two
     * norms per block where Gemma-2 has four */
    const uint64_t vh = 1152, vq = 1024;
#define VG_SHAPES                                                                           \
    "\"hidden_size\": 1152, \"num_hidden_layers\": 26, \"num_attention_heads\": 4, "         \
    "\"num_key_value_heads\": 4, \"head_dim\": 256, \"intermediate_size\": 6912, "           \
    "\"vocab_size\": 256000}"
    uint64_t nv = exact_count("{\"model_type\": \"vaultgemma\", " VG_SHAPES);
    assert_int_equal(nv, 256000 * vh + 26 * (4 * vh * vq + 3 * vh * 6912 + 2 * vh) + vh);
    assert_int_equal(exact_count("{\"model_type\": \"gemma2\", " VG_SHAPES) - nv, 26 * 2 * vh);
    /* Jais-2-8B: hidden 3328, 32 layers, 26 heads, MHA, relu^2 26624 wide, biases and
     * LayerNorms with bias, vocab 150272 */
    const uint64_t jh = 3328, jf = 26624;
    assert_int_equal(exact_count("{\"model_type\": \"jais2\"}"),
                     2 * 150272 * jh + 32 * (4 * (jh * jh + jh) + (jh * jf + jf) + (jf * jh + jh) +
                                             2 * 2 * jh) + 2 * jh);
    /* nanochat-d32: hidden 2048, 32 layers, 16 heads, 8192 wide, vocab 65536: no norm
     * weights at all */
    const uint64_t nh = 2048;
    assert_int_equal(exact_count("{\"model_type\": \"nanochat\", \"hidden_size\": 2048, "
                           "\"num_hidden_layers\": 32, \"num_attention_heads\": 16, "
                           "\"num_key_value_heads\": 16, \"intermediate_size\": 8192, "
                           "\"vocab_size\": 65536}"),
                     2 * 65536 * nh + 32 * (4 * nh * nh + 2 * nh * 8192));
    assert_int_equal(exact_count("{\"model_type\": \"nanochat\", \"qkv_bias\": true}") -
                         exact_count("{\"model_type\": \"nanochat\"}"),
                     12 * 4 * 768);
    /* Persimmon-8B: hidden 4096, 36 layers, 64 heads x 64, 16384 wide, vocab 262144 */
    const uint64_t ph = 4096, pf = 16384;
    const uint64_t pl = (ph * 3 * ph + 3 * ph) + (ph * ph + ph) + 4 * 64 + (ph * pf + pf) +
                        (pf * ph + ph) + 2 * 2 * ph;
    assert_int_equal(exact_count("{\"model_type\": \"persimmon\"}"), 2 * 262144 * ph + 36 * pl + 2 * ph);
    assert_int_equal(exact_count("{\"model_type\": \"persimmon\"}") -
                         exact_count("{\"model_type\": \"persimmon\", \"qk_layernorm\": false}"),
                     36 * 4 * 64);
}

/* FlexOlmo-7x7B's shapes: hidden 4096, 32 layers, 32 heads, MHA, 7 experts of 11008 top-5,
 * vocab 100352; q_norm / k_norm over all heads. */
static void flex_olmo_row_should_count_olmo2_attention_over_olmoe_experts(void **state)
{
    (void)state;
    const uint64_t h = 4096, e = 7, f = 11008;
    const uint64_t layer = 4 * h * h + 2 * h + (h * e + e * 3 * h * f) + 2 * h;
    assert_int_equal(exact_count("{\"model_type\": \"flex_olmo\"}"), 2 * 100352 * h + 32 * layer + h);
}

/* MiniMax-Text-01's shapes: hidden 6144, 80 layers of which every 8th attends with
 * softmax (attn_type_list), 64 heads x 128, 8 kv, 32 experts of 9216 top-2, vocab 200064,
 * block_size 256. */
static void read_minimax_should_count_lightning_buffers_and_softmax_layers(void **state)
{
    (void)state;
    char list[512], json[1536], remote[1536];
    size_t n = 0;
    for (int i = 0; i < 80; i++)
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%d", i ? "," : "[", i % 8 == 7);
    snprintf(list + n, sizeof list - n, "]");
#define MINIMAX_CFG                                                                         \
    "{\"model_type\": \"%s\", \"hidden_size\": 6144, \"num_hidden_layers\": 80, "            \
    "\"num_attention_heads\": 64, \"num_key_value_heads\": 8, \"head_dim\": 128, "              \
    "\"intermediate_size\": 9216, \"num_local_experts\": 32, \"num_experts_per_tok\": 2, "      \
    "\"vocab_size\": 200064, \"postnorm\": true, \"attn_type_list\": %s}"
    snprintf(json, sizeof json, MINIMAX_CFG, "minimax", list);
    snprintf(remote, sizeof remote, MINIMAX_CFG, "minimax_m1", list);
    const uint64_t h = 6144, in = 64 * 128, b = 256;
    const uint64_t buffers = 64 + 2 * 64 * b + 64 * b * b; /* slope, q/k decay, diagonal */
    const uint64_t lightning = h * 3 * in + h * in + in * h + in + buffers;
    const uint64_t softmax = h * in + 2 * h * 1024 + in * h;
    const uint64_t moe = h * 32 + 32 * 3 * h * 9216;
    struct fg_model *m = built(json);
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    assert_int_equal(m->params_total, 2 * 200064 * h + 70 * lightning + 10 * softmax +
                                          80 * (moe + 2 * h) + h);
    assert_int_equal(m->params_buffers, 70 * buffers);
    fg_model_free(m);
    /* layer_types says the same in transformers' spelling; without either, even layers
     * attend (MiniMaxConfig) */
    struct fg_model *a = built("{\"model_type\": \"minimax\", \"num_hidden_layers\": 2, "
                               "\"layer_types\": [\"full_attention\", \"linear_attention\"]}");
    struct fg_model *d = built("{\"model_type\": \"minimax\", \"num_hidden_layers\": 2}");
    assert_int_equal(a->params_total, d->params_total);
    fg_model_free(a);
    fg_model_free(d);
    assert_refused("{\"model_type\": \"minimax\", \"attn_type_list\": [0, 1]}", FG_E_RANGE,
                   "attn_type_list");
    /* the remote-code releases store no decay buffers: MiniMax-M1-40k / -80k's published
     * 456,089,655,296 (a third-party table of Hub totals) */
    uint64_t nr = exact_count(remote);
    assert_int_equal(nr, 2 * 200064 * h + 70 * (lightning - buffers) + 10 * softmax +
                             80 * (moe + 2 * h) + h);
    assert_int_equal(nr, 456089655296ull);
}

/* DiffLlama's, AFMoE's and Aria's text model's class defaults, term by term. */
static void diffllama_afmoe_aria_should_count_their_extra_tensors(void **state)
{
    (void)state;
    /* DiffLlamaConfig: hidden 2048, 16 layers, 32 heads x 64, MHA, 8192 wide, vocab 32000;
     * lambda_q1, lambda_k1, lambda_q2, lambda_k2 of head_dim each */
    const uint64_t h = 2048;
    assert_int_equal(exact_count("{\"model_type\": \"diffllama\"}"),
                     2 * 32000 * h + 16 * (4 * h * h + 4 * 64 + 3 * h * 8192 + 2 * h) + h);
    /* AfmoeConfig: hidden 2048, 32 layers, 16 heads x 128 (MHA), one dense layer of 6144,
     * 64 experts of 1408 top-6 with 2 shared, vocab 200192; q/k norms, gate_proj, 4 norms */
    const uint64_t q = 16 * 128;
    const uint64_t attn = 4 * h * q + 2 * 128 + h * q;
    const uint64_t moe = h * 64 + 64 * 3 * h * 1408 + 3 * h * 2 * 1408 + 64;
    assert_int_equal(exact_count("{\"model_type\": \"afmoe\"}"),
                     2 * 200192 * h + 32 * (attn + 4 * h) + 3 * h * 6144 + 31 * moe + h);
    struct fg_model *m = built("{\"model_type\": \"afmoe\", \"sliding_window\": 2048}");
    assert_int_equal(first_of(m, FG_NODE_ATTN)->window, 2048);
    fg_model_free(m);
    /* AriaTextConfig: LlamaConfig's hidden 4096, 32 layers, 32 heads; 8 experts of 4096
     * top-2 (fc1 gate and up in one), 2 shared experts, vocab 32000 */
    const uint64_t H = 4096, F = 4096;
    const uint64_t amoe = H * 8 + 8 * 3 * H * F + 3 * H * 2 * F;
    uint64_t na = exact_count("{\"model_type\": \"aria_text\"}");
    assert_int_equal(na, 2 * 32000 * H + 32 * (4 * H * H + amoe + 2 * H) + H);
    /* mlp_bias biases the shared experts' gate, up (2 x 8192) and down (4096) */
    assert_int_equal(exact_count("{\"model_type\": \"aria_text\", \"mlp_bias\": true}") - na,
                     32 * (2 * 2 * F + H));
    assert_refused("{\"model_type\": \"aria_text\", \"moe_topk\": 9}", FG_E_RANGE, "moe_topk");
}

/* ModernBertDecoderConfig's defaults (the ModernBERT-base shapes): hidden 768, 22 layers,
 * 12 heads, GLU 1152, vocab 50368, LayerNorms without bias, tied decoder with its bias. */
static void read_modernbert_decoder_should_count_the_prediction_head(void **state)
{
    (void)state;
    const uint64_t h = 768, f = 1152, v = 50368;
    const uint64_t layer = 4 * h * h + h * 2 * f + f * h + 2 * h;
    uint64_t n = exact_count("{\"model_type\": \"modernbert-decoder\"}");
    /* embeddings + norm, layer 0 without attn_norm, final norm, dense + norm, decoder bias */
    assert_int_equal(n, v * h + h + 22 * layer - h + h + (h * h + h) + v);
    assert_int_equal(exact_count("{\"model_type\": \"modernbert-decoder\", \"norm_bias\": true}") - n,
                     (1 + 22 * 2 - 1 + 1 + 1) * h);
    struct fg_model *m = built("{\"model_type\": \"modernbert-decoder\"}");
    assert_int_equal(first_of(m, FG_NODE_ATTN)->window, 0);  /* layer 0 attends globally */
    for (size_t i = 0; i < m->n_nodes; i++)
        if (m->nodes[i].kind == FG_NODE_ATTN && m->nodes[i].layer == 1)
            assert_int_equal(m->nodes[i].window, 64); /* local_attention / 2 */
    fg_model_free(m);
}

/* DogeConfig's defaults (Doge-320M's shapes): hidden 1024, 32 layers, 8 heads x 128 (MHA),
 * 2048 wide, vocab 32768; with is_moe, 16384 embedding experts (128 product keys x2) top-64
 * beside the shared MLP. */
static void read_doge_should_count_dynamic_mask_and_embedding_experts(void **state)
{
    (void)state;
    const uint64_t h = 1024, f = 2048, kv = 8;
    const uint64_t attn = 4 * h * h + 2 * 128 + (kv * 128 * kv) + kv;
    const uint64_t layer = 2 * h + attn + 2 * h; /* norms, residual scales */
    uint64_t n = exact_count("{\"model_type\": \"doge\"}");
    assert_int_equal(n, 2 * 32768 * h + 32 * (layer + 3 * h * f) + h);
    uint64_t nm = exact_count("{\"model_type\": \"doge\", \"is_moe\": true}");
    assert_int_equal(nm - n, 32 * (h * 2 * 128 + 2 * 16384 * h));
    assert_refused("{\"model_type\": \"doge\", \"is_moe\": true, \"num_experts\": 16, "
                   "\"num_experts_per_tok\": 64}", FG_E_RANGE, "num_experts_per_tok");
}

/* The dense SmallDoge releases (Doge-160M: tests/fixtures/models/SmallDoge--Doge-160M)
 * carry num_experts 16384 / num_experts_per_tok 64 beside is_moe false: DogeConfig holds
 * them, DogeDecoderLayer builds DogeMLP, so the count is the dense one and exact. */
static void read_doge_should_count_a_dense_release_exactly_beside_its_expert_keys(void **state)
{
    (void)state;
    const char *dense = "{\"model_type\": \"doge\", \"is_moe\": false, "
                        "\"num_experts\": 16384, \"num_experts_per_tok\": 64}";
    uint64_t n = exact_count(dense);
    assert_int_equal(n, exact_count("{\"model_type\": \"doge\"}"));
    struct fg_model *m = built(dense);
    assert_int_equal(m->experts, 0);
    fg_model_free(m);
}

/* LongCat-Flash-Chat's shapes (LongcatFlashConfig's defaults): hidden 6144, 28 layers of
 * two MLA attentions (64 heads, q_lora 1536, kv_lora 512, 128 + 64 / 128) and two dense
 * MLPs of 12288, one MoE of 512 experts of 2048 plus 256 zero experts, top-12, vocab
 * 131072, untied. */
static void read_longcat_flash_should_count_zero_experts_in_the_router_only(void **state)
{
    (void)state;
    const uint64_t h = 6144, H = 64, v = 131072;
    const uint64_t mla = h * 1536 + 1536 + 1536 * H * 192 + h * (512 + 64) + 512 +
                         512 * H * (128 + 128) + H * 128 * h;
    const uint64_t mlp = 3 * h * 12288;
    const uint64_t moe = h * (512 + 256) + (512 + 256) + 512 * 3 * h * 2048;
    const uint64_t layer = 2 * mla + 2 * mlp + moe + 4 * h;
    uint64_t n = exact_count("{\"model_type\": \"longcat_flash\", \"num_hidden_layers\": 56}");
    assert_int_equal(n, 2 * v * h + 28 * layer + h);
    /* LongCat-Flash-Chat, -Thinking and -Thinking-2601 publish 561,862,880,256 (a
     * third-party table of Hub totals): the graph plus the MTP module transformers skips -
     * its own embed_tokens, eh_proj 2h -> h, one MLA, one dense MLP and five norms */
    const uint64_t mtp = v * h + 2 * h * h + mla + mlp + 5 * h;
    assert_int_equal(561862880256ull - n, mtp);
    struct fg_model *m = built("{\"model_type\": \"longcat_flash\"}");
    assert_int_equal(m->layers, 28);
    assert_int_equal(m->experts, 512);
    fg_model_free(m);
}

/* Step3p7TextModel + lm_head (transformers models/step3p7/modeling_step3p7.py @decba1d2ea) at
 * Step-3.7-Flash's shapes: hidden 4096, 45 layers (3 dense, then MoE), 64 heads / 8 kv x 128,
 * dense 11264, 288 experts of 1280 top-8 with one shared of share_expert_dim 1280, vocab
 * 128896, untied. */
#define STEP_H 4096ull
#define STEP_V 128896ull
static uint64_t step_attn(uint64_t heads)
{
    /* q, k, v, o, q_norm and k_norm over head_dim, g_proj hidden -> heads */
    return STEP_H * heads * 128 * 2 + 2 * STEP_H * 8 * 128 + 2 * 128 + STEP_H * heads;
}
static const uint64_t step_dense = 3 * STEP_H * 11264;
/* router weight + e_score_correction_bias, gate_up / down experts, the shared Step3p7MLP */
static const uint64_t step_moe = 288 * STEP_H + 288 + 288 * 3 * STEP_H * 1280 + 3 * STEP_H * 1280;

static uint64_t step_graph(uint64_t sliding_heads, uint64_t dense_layers)
{
    uint64_t full = 12, sliding = 33; /* layer_types: one full layer in four */
    return 2 * STEP_V * STEP_H + full * step_attn(64) + sliding * step_attn(sliding_heads) +
           45 * 2 * STEP_H + dense_layers * step_dense + (45 - dense_layers) * step_moe + STEP_H;
}

static void read_step3p7_should_count_gated_attention_and_the_shared_expert(void **state)
{
    (void)state;
    struct fg_model *m = load("tests/fixtures/views/stepfun-ai--Step-3.7-Flash");
    /* the three MTP layers the checkpoint appends: a dense block each, enorm, hnorm,
     * eh_proj 2h -> h, shared_head norm and output; counted, unsure of the stored count */
    const uint64_t mtp = 3 * (step_attn(64) + 2 * STEP_H + step_dense + 3 * STEP_H +
                              2 * STEP_H * STEP_H + STEP_V * STEP_H);
    assert_int_equal(m->params_total, step_graph(64, 3) + mtp);
    assert_int_equal(m->params_total, 198171623232ull);
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_true(m->unsure_count_only);
    assert_string_equal(m->unsure_key, "num_nextn_predict_layers");
    assert_int_equal(m->experts, 288);
    assert_int_equal(m->top_k, 8);
    assert_int_equal(first_of(m, FG_NODE_ATTN)->window, 0);
    fg_model_free(m);
    /* FP8 (weight_block_size 128 x 128): one scale per block of every block linear as
     * transformers quantizes them, the MTP layers kept in bf16 */
    m = load("tests/fixtures/views/stepfun-ai--Step-3.7-Flash-FP8");
    const uint64_t attn = 64 * 32 + 2 * 8 * 32 + 32 * 64 + 32;
    const uint64_t scales = 45 * attn + 3 * 3 * 88 * 32 + 42 * (288 * (20 * 32 + 32 * 10) +
                                                                 3 * 10 * 32);
    assert_int_equal(m->params_total, 198171623232ull + scales);
    fg_model_free(m);
}

/* MiniMaxM3VLTextModel + lm_head (transformers models/minimax_m3_vl/modeling_minimax_m3_vl.py
 * @decba1d2ea) at MiniMax-M3's shapes: hidden 6144, 60 layers (3 dense of 12288, then MoE),
 * 64 heads / 4 kv x 128 with per-head q/k norms, the indexer (4 heads x 128) on the 57
 * sparse layers, 128 experts of 3072 top-4 and one shared expert of 3072, vocab 200064,
 * untied. */
#define M3_H 6144ull
#define M3_V 200064ull
/* q, k, v, o, q_norm and k_norm over head_dim */
static const uint64_t m3_attn = M3_H * 64 * 128 * 2 + 2 * M3_H * 4 * 128 + 2 * 128;
/* MiniMaxM3VLIndexer: q_proj h -> 4 x 128, k_proj h -> 128, q_norm and k_norm */
static const uint64_t m3_idx = M3_H * 4 * 128 + M3_H * 128 + 2 * 128;
static const uint64_t m3_dense = 3 * M3_H * 12288;
/* router weight + e_score_correction_bias, gate_up / down experts, the shared DenseMLP */
static const uint64_t m3_moe = 128 * M3_H + 128 + 128 * 3 * M3_H * 3072 + 3 * M3_H * 3072;

static uint64_t m3_text(uint64_t layers, uint64_t dense, uint64_t sparse_attn)
{
    return 2 * M3_V * M3_H + M3_H + layers * (m3_attn + 2 * M3_H) + sparse_attn * m3_idx +
           dense * m3_dense + (layers - dense) * m3_moe;
}

static void read_minimax_m3_vl_should_count_the_indexer_experts_and_tower(void **state)
{
    (void)state;
    struct fg_model *m = load("tests/fixtures/models/nvidia--MiniMax-M3-NVFP4");
    /* MiniMaxM3VLVisionModel: Conv3d 3 x 2 x 14 x 14 -> 1280 without bias, pre_layrnorm, 32
     * CLIP layers (two LayerNorms, q/k/v/out and fc1 / fc2 of 5120 with biases) */
    const uint64_t vh = 1280, layer = 4 * vh + 4 * (vh * vh + vh) + 2 * vh * 5120 + 5120 + vh;
    const uint64_t tower = 3 * 2 * 14 * 14 * vh + 2 * vh + 32 * layer;
    /* MiniMaxM3VLMultiModalProjector: linear_1 1280 -> 6144, linear_2, merge_linear_1 of the
     * 2 x 2 merged patches 4 x 6144 -> 6144, merge_linear_2, all with bias */
    const uint64_t proj = (vh * M3_H + M3_H) + (M3_H * M3_H + M3_H) + (4 * M3_H * M3_H + M3_H) +
                          (M3_H * M3_H + M3_H);
    assert_int_equal(m->params_total, m3_text(60, 3, 57) + tower + proj);
    assert_int_equal(m->params_total, 427040140160ull);
    /* num_mtp_modules = 1: mtp.* stored, dropped on load, not sized by config.json */
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_true(m->unsure_count_only);
    assert_string_equal(m->unsure_key, "num_mtp_modules");
    assert_int_equal(m->experts, 128);
    assert_int_equal(m->top_k, 4);
    assert_int_equal(first_of(m, FG_NODE_ATTN)->kv_heads, 4);
    fg_model_free(m);
}

#define M3_TEXT "{\"model_type\": \"minimax_m3_vl_text\", \"num_hidden_layers\": 4"

/* MiniMaxM3VLTextConfig.__post_init__: mlp_layer_types / layer_types, else the Hub's
 * moe_layer_freq and sparse_attention_config.sparse_attention_freq, else every layer sparse
 * MoE and full attention; keys the class does not read that would mean other shapes. */
static void read_minimax_m3_text_should_follow_the_class_lists(void **state)
{
    (void)state;
    assert_int_equal(exact_count(M3_TEXT "}"), m3_text(4, 0, 0));
    assert_int_equal(exact_count(M3_TEXT ", \"mlp_layer_types\": [\"dense\", \"sparse\", "
                                 "\"sparse\", \"dense\"], \"layer_types\": [\"full_attention\", "
                                 "\"minimax_m3_sparse\", \"minimax_m3_sparse\", "
                                 "\"full_attention\"]}"),
                     m3_text(4, 2, 2));
    assert_int_equal(exact_count(M3_TEXT ", \"moe_layer_freq\": [0, 1, 1, 1], "
                                 "\"sparse_attention_config\": {\"sparse_attention_freq\": "
                                 "[0, 1, 1, 1], \"sparse_disable_index_value\": [0, 1, 1, 1], "
                                 "\"sparse_num_index_heads\": 4, \"sparse_index_dim\": 128}}"),
                     m3_text(4, 1, 3));
    assert_unsure(M3_TEXT ", \"sparse_attention_config\": {\"sparse_attention_freq\": "
                  "[0, 1, 1, 1], \"sparse_disable_index_value\": [0, 0, 1, 1]}}",
                  "sparse_disable_index_value");
    assert_unsure(M3_TEXT ", \"n_shared_experts\": 2}", "n_shared_experts");
    assert_unsure(M3_TEXT ", \"attention_output_gate\": true}", "attention_output_gate");
    assert_unsure(M3_TEXT ", \"first_k_dense_replace\": 3}", "first_k_dense_replace");
    assert_refused(M3_TEXT ", \"layer_types\": [\"full_attention\", \"linear_attention\", "
                   "\"full_attention\", \"full_attention\"]}", FG_E_RANGE, "minimax_m3_sparse");
}

/* The legacy Hub spellings Step3p7TextConfig.__post_init__ reads: moe_layers_enum,
 * attention_other_setting's head count for sliding layers, num_attention_groups, layer_types
 * padded with the MTP layers' entries. */
static void read_step3p7_should_follow_the_legacy_hub_keys(void **state)
{
    (void)state;
    char types[2048] = "[", json[4096], moe[512] = "";
    for (int i = 0; i < 48; i++)
        snprintf(types + strlen(types), sizeof types - strlen(types), "%s\"%s\"",
                 i ? ", " : "", i % 4 ? "sliding_attention" : "full_attention");
    strcat(types, "]");
    for (int i = 5; i < 45; i++)
        snprintf(moe + strlen(moe), sizeof moe - strlen(moe), "%s%d", i > 5 ? "," : "", i);
    snprintf(json, sizeof json,
             "{\"model_type\": \"step3p7\", \"vocab_size\": 128896, \"num_attention_groups\": 8, "
             "\"moe_num_experts\": 288, \"moe_top_k\": 8, \"sliding_window\": 512, "
             "\"layer_types\": %s, \"moe_layers_enum\": \"%s\", "
             "\"attention_other_setting\": {\"num_attention_heads\": 96, "
             "\"num_attention_groups\": 8}, \"num_nextn_predict_layers\": 3}", types, moe);
    struct fg_model *m = built(json);
    /* the MTP layers 45-47: sliding (96 heads) and dense, moe_layers_enum naming none */
    const uint64_t mtp = 3 * (step_attn(96) + 2 * STEP_H + step_dense + 3 * STEP_H +
                              2 * STEP_H * STEP_H + STEP_V * STEP_H);
    assert_int_equal(m->params_total, step_graph(96, 5) + mtp);
    assert_string_equal(m->unsure_key, "num_nextn_predict_layers");
    fg_model_free(m);
    /* gating other than per-head: g_proj hidden -> heads x head_dim */
    uint64_t per_head = exact_count("{\"model_type\": \"step3p7\", \"num_hidden_layers\": 4}");
    uint64_t full = exact_count("{\"model_type\": \"step3p7\", \"num_hidden_layers\": 4, "
                                "\"gating\": false}");
    assert_int_equal(full - per_head, 4 * STEP_H * 64 * 127);
    /* a config saved by transformers: sliding heads by name, the MTP layers' kinds apart;
     * sliding layers keep their heads with no window */
    m = built("{\"model_type\": \"step3p7\", \"num_hidden_layers\": 2, "
              "\"layer_types\": [\"full_attention\", \"sliding_attention\"], "
              "\"sliding_window\": null, \"num_sliding_attention_heads\": 96, "
              "\"mlp_layer_types\": [\"dense\", \"sparse\"], \"num_nextn_predict_layers\": 1, "
              "\"mtp_layer_types\": [\"sliding_attention\"], "
              "\"mtp_mlp_layer_types\": [\"sparse\"], \"vocab_size\": 128896}");
    const uint64_t head = 2 * STEP_V * STEP_H + STEP_H;
    assert_int_equal(m->params_total - rule_with(m, "MTP layers")->scalars,
                     head + step_attn(64) + step_attn(96) + 4 * STEP_H + step_dense + step_moe);
    assert_int_equal(rule_with(m, "MTP layers")->scalars,
                     step_attn(96) + 2 * STEP_H + step_moe + 3 * STEP_H + 2 * STEP_H * STEP_H +
                         STEP_V * STEP_H);
    fg_model_free(m);
    assert_refused("{\"model_type\": \"step3p7\", \"mlp_layer_types\": [\"dense\", \"moe\"], "
                   "\"num_hidden_layers\": 2}", FG_E_RANGE, "mlp_layer_types");
}

/* Keys transformers' class ignores that mean another shape elsewhere leave the count unsure:
 * a first_k_dense_replace or n_shared_experts the class does not build, a vision tower. */
static void read_step3p7_should_doubt_what_the_class_does_not_build(void **state)
{
    (void)state;
    assert_unsure("{\"model_type\": \"step3p7\", \"first_k_dense_replace\": 5}",
                  "first_k_dense_replace");
    assert_unsure("{\"model_type\": \"step3p7\", \"n_shared_experts\": 2}", "n_shared_experts");
    assert_unsure("{\"model_type\": \"step3p7\", \"vision_config\": {\"hidden_size\": 64}}",
                  "vision_config");
    exact_count("{\"model_type\": \"step3p7\", \"first_k_dense_replace\": 3, "
                "\"n_shared_experts\": 1}");
}

/* Every reader of this slice leaves a shape key it never reads to the unread-key check: a
 * vision tower or MTP layers declared beside its keys make the count unsure, never exact. */
/*
 * HYV3ForCausalLM (transformers decba1d2ea models/hy_v3/modeling_hy_v3.py) at the Hub config of
 * tencent/Hy3-preview: HYV3Attention (q/k/v/o, q_norm / k_norm over head_dim), layer 0 an
 * HYV3MLP of 13312, layers 1-79 HYV3MoE (router weight, e_score_correction_bias buffer,
 * 192 fused experts of 1536, one shared HYV3MLP of 1536); the stored MTP layer 80 is a
 * decoder layer with experts plus enorm, hnorm, eh_proj 2h -> h and final_layernorm.
 */
static void read_hy_v3_should_count_the_graph_and_the_stored_mtp_layer(void **state)
{
    (void)state;
    const uint64_t h = 4096, v = 120832, e = 192, w = 1536;
    const uint64_t attn = h * 64 * 128 + 2 * h * 8 * 128 + 64 * 128 * h;
    const uint64_t norms = 2 * h + 2 * 128;          /* block norms; q_norm, k_norm */
    const uint64_t moe = e * h + e + e * 3 * w * h + 3 * h * w;
    const uint64_t dense = 3 * h * 13312;
    const uint64_t graph = 2 * v * h + h + 80 * (attn + norms) + dense + 79 * moe;
    const uint64_t mtp = attn + norms + moe + 2 * h + 2 * h * h + h;
    assert_int_equal(graph, 295033543488ull);
    struct fg_model *m = load("tests/fixtures/models/tencent--Hy3-preview");
    /* the safetensors total of tencent/Hy3 (tests/fixtures/models/truth.tsv) */
    assert_int_equal(m->params_total, 298786155776ull);
    assert_int_equal(m->params_total, graph + mtp);
    assert_int_equal(rule_with(m, "MTP layers")->scalars, (int64_t)mtp);
    assert_int_equal(m->kv_heads, 8);
    assert_int_equal(m->experts, 192);
    assert_int_equal(m->top_k, 8);
    assert_non_null(node_of_layer(m, FG_NODE_MLP, 0));
    assert_null(node_of_layer(m, FG_NODE_MOE, 0));
    assert_int_equal(node_of_layer(m, FG_NODE_MOE, 1)->params, moe);
    assert_int_equal(node_of_layer(m, FG_NODE_MOE, 79)->params, moe);
    /* the MTP layer, as every stored MTP rule: optional, the checkpoint decides */
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_string_equal(m->unsure_key, "num_nextn_predict_layers");
    fg_model_free(m);
}

/* A small HYV3Config; keys spliced in. */
#define HY_V3_SMALL(keys)                                                                     \
    "{\"model_type\": \"hy_v3\", \"hidden_size\": 64, \"num_attention_heads\": 4, "           \
    "\"num_key_value_heads\": 2, \"head_dim\": 16, \"intermediate_size\": 128, "              \
    "\"moe_intermediate_size\": 32, \"num_experts\": 4, \"num_experts_per_tok\": 2, "          \
    "\"vocab_size\": 100, \"num_hidden_layers\": 3" keys "}"

static void read_hy_v3_should_doubt_hub_keys_the_class_replaces(void **state)
{
    (void)state;
    const uint64_t h = 64;
    const uint64_t attn = h * 64 + 2 * h * 32 + 64 * h + 2 * 16 + 2 * h;
    const uint64_t moe = 4 * h + 4 + 4 * 3 * 32 * h + 3 * h * 32;
    const uint64_t base = 2 * 100 * h + h + 3 * attn + 3 * h * 128;
    /* the Hub's keys at the values the class builds: read, nothing changes */
    assert_int_equal(exact_count(HY_V3_SMALL(", \"first_k_dense_replace\": 1, "
                                             "\"expert_hidden_dim\": 32, \"qk_norm\": true, "
                                             "\"moe_router_enable_expert_bias\": true")),
                     base + 2 * moe);
    /* mlp_layer_types places the experts, as HYV3DecoderLayer does */
    assert_int_equal(exact_count(HY_V3_SMALL(", \"mlp_layer_types\": "
                                             "[\"dense\", \"dense\", \"sparse\"], "
                                             "\"first_k_dense_replace\": 2")),
                     base + 3 * h * 128 + moe);
    assert_unsure(HY_V3_SMALL(", \"first_k_dense_replace\": 2"), "first_k_dense_replace");
    assert_unsure(HY_V3_SMALL(", \"expert_hidden_dim\": 48"), "expert_hidden_dim");
    assert_unsure(HY_V3_SMALL(", \"qk_norm\": false"), "qk_norm");
    assert_unsure(HY_V3_SMALL(", \"moe_router_enable_expert_bias\": false"),
                  "moe_router_enable_expert_bias");
}

static void readers_should_doubt_shape_keys_they_do_not_read(void **state)
{
    (void)state;
    static const char *const types[] = {
        "dbrx", "hunyuan_v1_moe", "jetmoe", "minimax", "minimax_m1", "dots1", "apertus",
        "bitnet", "cwm", "ministral3", "vaultgemma", "jais2", "nanochat", "persimmon",
        "flex_olmo", "diffllama", "afmoe", "aria_text", "modernbert-decoder", "doge",
        "longcat_flash", "step3p7",
    };
    char json[512];
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        snprintf(json, sizeof json, "{\"model_type\": \"%s\", \"num_nextn_predict_layers\": 1}",
                 types[i]);
        assert_unsure(json, "num_nextn_predict_layers");
        snprintf(json, sizeof json, "{\"model_type\": \"%s\", \"vision_config\": "
                 "{\"hidden_size\": 64}}", types[i]);
        assert_unsure(json, "vision_config");
    }
    assert_unsure("{\"model_type\": \"lfm2_moe\", \"layer_types\": [\"conv\", \"full_attention\"], "
                  "\"num_hidden_layers\": 2, \"num_dense_layers\": 1, \"vision_config\": "
                  "{\"hidden_size\": 64}}", "vision_config");
}

/* LagunaAttention of n query heads (transformers@decba1d2ea models/laguna): q / o of n x 128,
 * k / v of 8 x 128, q_norm / k_norm of 128, g_proj 2048 -> n (gating true: one per head). */
static uint64_t laguna_attn(uint64_t n)
{
    const uint64_t h = 2048, d = 128;
    return 2 * h * n * d + 2 * h * 8 * d + 2 * d + h * n;
}

static void read_laguna_should_count_per_layer_heads_and_one_dense_layer(void **state)
{
    (void)state;
    /* Laguna-XS.2: 10 full layers of 48 heads, 30 sliding of 64; layer 0 a dense MLP of
     * 8192, 39 LagunaSparseMoeBlocks: router 256 x 2048, e_score_correction_bias 256, 256
     * experts gate_up 2 x 512 and down 512, one shared LagunaMLP of 512 */
    const uint64_t h = 2048;
    const uint64_t moe = 256 * h + 256 + 256 * 3 * h * 512 + 3 * h * 512;
    struct fg_model *m = load("tests/fixtures/models/poolside--Laguna-XS.2");
    uint64_t want = 2 * 100352 * h + 10 * laguna_attn(48) + 30 * laguna_attn(64) +
                    3 * h * 8192 + 39 * moe + 40 * 2 * h + h;
    assert_int_equal(m->params_total, want);
    assert_int_equal(m->params_total, 33442617088ull);
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    assert_int_equal(m->kv_heads, 8);
    assert_int_equal(m->experts, 256);
    /* layer 1 slides over 512 tokens with 64 heads; layer 0 attends fully with 48 */
    const struct fg_node *a0 = first_of(m, FG_NODE_ATTN);
    assert_int_equal(a0->heads, 48);
    assert_int_equal(a0->window, 0);
    size_t i = (size_t)(a0 - m->nodes) + 1;
    while (m->nodes[i].kind != FG_NODE_ATTN)
        i++;
    assert_int_equal(m->nodes[i].heads, 64);
    assert_int_equal(m->nodes[i].window, 512);
    fg_model_free(m);

    /* the class defaults: every layer full attention of 48 heads, layer 0 dense; gating
     * "per-element" widens g_proj to heads x head_dim */
    m = built("{\"model_type\": \"laguna\", \"gating\": \"per-element\"}");
    want = 2 * 100352 * h + 40 * (laguna_attn(48) + 48 * 127 * h) + 3 * h * 8192 + 39 * moe +
           40 * 2 * h + h;
    assert_int_equal(m->params_total, want);
    assert_int_equal(first_of(m, FG_NODE_ATTN)->window, 0);
    fg_model_free(m);

    assert_refused("{\"model_type\": \"laguna\", \"num_hidden_layers\": 2, "
                   "\"mlp_layer_types\": [\"dense\"]}", FG_E_RANGE, "mlp_layer_types");
    assert_refused("{\"model_type\": \"laguna\", \"moe_apply_router_weight_on_input\": true}",
                   FG_E_UNSUPPORTED, "moe_apply_router_weight_on_input");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(read_dbrx_should_count_fused_wqkv_and_stacked_glu_experts),
        cmocka_unit_test(read_laguna_should_count_per_layer_heads_and_one_dense_layer),
        cmocka_unit_test(read_dbrx_should_leave_the_sub_configs_base_attributes_alone),
        cmocka_unit_test(read_hunyuan_moe_should_count_shared_mlp_and_per_layer_lists),
        cmocka_unit_test(read_hunyuan_remote_should_follow_its_switches),
        cmocka_unit_test(read_jetmoe_should_count_attention_and_mlp_experts),
        cmocka_unit_test(read_lfm2_moe_should_place_dense_and_sparse_feed_forwards),
        cmocka_unit_test(dots1_row_should_count_qwen3_attention_over_deepseek_experts),
        cmocka_unit_test(apertus_and_bitnet_rows_should_count_xielu_and_sub_norms),
        cmocka_unit_test(llama_style_rows_should_follow_their_classes),
        cmocka_unit_test(flex_olmo_row_should_count_olmo2_attention_over_olmoe_experts),
        cmocka_unit_test(read_minimax_should_count_lightning_buffers_and_softmax_layers),
        cmocka_unit_test(diffllama_afmoe_aria_should_count_their_extra_tensors),
        cmocka_unit_test(read_modernbert_decoder_should_count_the_prediction_head),
        cmocka_unit_test(read_doge_should_count_dynamic_mask_and_embedding_experts),
        cmocka_unit_test(read_doge_should_count_a_dense_release_exactly_beside_its_expert_keys),
        cmocka_unit_test(read_longcat_flash_should_count_zero_experts_in_the_router_only),
        cmocka_unit_test(read_step3p7_should_count_gated_attention_and_the_shared_expert),
        cmocka_unit_test(read_minimax_m3_vl_should_count_the_indexer_experts_and_tower),
        cmocka_unit_test(read_minimax_m3_text_should_follow_the_class_lists),
        cmocka_unit_test(read_step3p7_should_follow_the_legacy_hub_keys),
        cmocka_unit_test(read_step3p7_should_doubt_what_the_class_does_not_build),
        cmocka_unit_test(readers_should_doubt_shape_keys_they_do_not_read),
        cmocka_unit_test(read_hy_v3_should_count_the_graph_and_the_stored_mtp_layer),
        cmocka_unit_test(read_hy_v3_should_doubt_hub_keys_the_class_replaces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
