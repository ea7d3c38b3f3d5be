/*
 * test_arch_ssm.c - the state-space and recurrent readers (engine/arch/hybrid/mamba_jamba.c: mamba,
 * falcon_mamba, mamba2, jamba; zamba.c: zamba, zamba2; rwkv_xlstm_recurrent_gemma.c:
 * recurrent_gemma, rwkv, xlstm; gemma3n.c: gemma3n_text;
 * blt.c: blt; chameleon_emu3.c: chameleon, emu3): each count written out term by
 * term from the transformers class, at the published shapes of a release.
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

/* MambaMixer, term by term: in_proj, conv1d, x_proj, dt_proj, A_log, D, out_proj. */
static uint64_t mamba1_mixer(uint64_t h, uint64_t i, uint64_t r, uint64_t n, uint64_t k,
                             bool bias)
{
    return (h * 2 * i + (bias ? 2 * i : 0)) + (i * k + i) + i * (r + 2 * n) + (r * i + i) +
           i * n + i + (i * h + (bias ? h : 0));
}

/* state-spaces/mamba-130m-hf (config 4.39.0.dev0): hidden 768, 24 layers, intermediate 1536,
 * state 16, time_step_rank 48, use_bias false, vocab 50280, tied head. */
static void read_mamba_should_count_mamba_130m_term_by_term(void **state)
{
    (void)state;
    const char *cfg = "{\"model_type\": \"mamba\", \"architectures\": [\"MambaForCausalLM\"], "
                      "\"hidden_size\": 768, \"num_hidden_layers\": 24, \"intermediate_size\": "
                      "1536, \"expand\": 2, \"state_size\": 16, \"conv_kernel\": 4, "
                      "\"time_step_rank\": 48, \"use_bias\": false, \"use_conv_bias\": true, "
                      "\"vocab_size\": 50280}";
    uint64_t n = exact_count(cfg);
    const uint64_t layer = 768 + mamba1_mixer(768, 1536, 48, 16, 4, false);
    assert_int_equal(n, 50280ull * 768 + 24 * layer + 768);
    /* the published file's safetensors header sum: 242 float32 tensors, 129,135,360 elements
     * (tests/fixtures/models/state-spaces--mamba-130m-hf/PROVENANCE.txt) */
    assert_int_equal(n, 129135360ull);
    struct fg_model *m = built(cfg);
    const struct fg_node *mx = first_of(m, FG_NODE_MAMBA2);
    assert_non_null(mx);
    assert_int_equal(mx->ssm_heads, 1536); /* the recurrent state: I x N per layer */
    assert_int_equal(mx->state, 16);
    assert_true(m->tied);
    fg_model_free(m);
    /* MambaConfig defaults (huggingface/transformers@decba1d2 configuration_mamba.py, and
     * since the class was added): use_bias False, use_conv_bias True, expand 2, state 16,
     * time_step_rank "auto" = ceil(768 / 16) = 48: mamba-130m itself */
    uint64_t nb = exact_count("{\"model_type\": \"mamba\", \"hidden_size\": 768, \"num_hidden_layers\":"
                        " 24, \"time_step_rank\": \"auto\", \"vocab_size\": 50280}");
    assert_int_equal(nb, n);
    /* use_bias true adds in_proj's 2 x 1536 and out_proj's 768 biases a layer */
    nb = exact_count("{\"model_type\": \"mamba\", \"hidden_size\": 768, \"num_hidden_layers\": 24, "
               "\"use_bias\": true, \"vocab_size\": 50280}");
    assert_int_equal(nb - n, 24 * (2 * 1536 + 768));
}

/* tiiuae/falcon-mamba-7b (config 4.43.0.dev0): expand 16 in the file but intermediate_size
 * 8192, which FalconMambaConfig keeps; untied head; the b_c_rms / dt_rms buffers are
 * non-persistent. */
static void read_falcon_mamba_should_keep_intermediate_size_over_expand(void **state)
{
    (void)state;
    uint64_t n = exact_count("{\"model_type\": \"falcon_mamba\", \"architectures\": "
                       "[\"FalconMambaForCausalLM\"], \"hidden_size\": 4096, \"expand\": 16, "
                       "\"intermediate_size\": 8192, \"num_hidden_layers\": 64, "
                       "\"state_size\": 16, \"conv_kernel\": 4, \"time_step_rank\": 256, "
                       "\"use_bias\": false, \"use_conv_bias\": true, \"tie_word_embeddings\": "
                       "false, \"vocab_size\": 65024}");
    const uint64_t layer = 4096 + mamba1_mixer(4096, 8192, 256, 16, 4, false);
    assert_int_equal(n, 2 * 65024ull * 4096 + 64 * layer + 4096);
    /* FalconMambaConfig's defaults are MambaConfig's (use_bias False both) */
    uint64_t fd = exact_count("{\"model_type\": \"falcon_mamba\", \"hidden_size\": 1024, "
                        "\"num_hidden_layers\": 2, \"vocab_size\": 100}");
    uint64_t md = exact_count("{\"model_type\": \"mamba\", \"hidden_size\": 1024, "
                        "\"num_hidden_layers\": 2, \"vocab_size\": 100}");
    assert_int_equal(md, fd);
}

/* mistralai/Mamba-Codestral-7B-v0.1: hidden 4096, 64 layers, 128 heads, 8 groups of state
 * 128, expand 2, vocab 32768, untied. */
static void read_mamba2_should_count_codestral_term_by_term(void **state)
{
    (void)state;
    uint64_t n = exact_count("{\"model_type\": \"mamba2\", \"architectures\": [\"Mamba2ForCausalLM\"], "
                       "\"hidden_size\": 4096, \"num_hidden_layers\": 64, \"num_heads\": 128, "
                       "\"head_dim\": 64, \"n_groups\": 8, \"state_size\": 128, \"expand\": 2, "
                       "\"conv_kernel\": 4, \"use_bias\": false, \"use_conv_bias\": true, "
                       "\"tie_word_embeddings\": false, \"vocab_size\": 32768}");
    const uint64_t h = 4096, i = 8192, conv = i + 2 * 8 * 128, heads = 128;
    const uint64_t mixer = h * (i + conv + heads) + (conv * 4 + conv) + 3 * heads + i + i * h;
    assert_int_equal(n, 2 * 32768ull * h + 64 * (h + mixer) + h);
    /* no published exact total found for the release; this is the sum above */
    assert_int_equal(n, 7285403648ull);
    /* a width that num_heads does not divide is refused, naming the key */
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(build("{\"model_type\": \"mamba2\", \"hidden_size\": 1000, \"num_heads\": "
                           "7}", &m, &err), FG_E_RANGE);
    assert_non_null(strstr(err.detail, "num_heads"));
}

/* JambaMambaMixer: MambaMixer plus dt / B / C RMSNorms. */
static uint64_t jamba_mixer(void)
{
    return mamba1_mixer(4096, 8192, 256, 16, 4, false) + 256 + 2 * 16;
}

/* ai21labs/AI21-Jamba-1.5-Mini: 32 layers, attention at i % 8 == 4, 16 experts at
 * i % 2 == 1, hidden 4096, 32 / 8 heads, 14336 wide, vocab 65536, untied. */
static void read_jamba_should_place_attention_and_experts_by_period(void **state)
{
    (void)state;
    const char *cfg = "{\"model_type\": \"jamba\", \"architectures\": [\"JambaForCausalLM\"], "
                      "\"attn_layer_offset\": 4, \"attn_layer_period\": 8, "
                      "\"expert_layer_offset\": 1, \"expert_layer_period\": 2, "
                      "\"hidden_size\": 4096, \"intermediate_size\": 14336, "
                      "\"mamba_conv_bias\": true, \"mamba_d_conv\": 4, \"mamba_d_state\": 16, "
                      "\"mamba_dt_rank\": 256, \"mamba_expand\": 2, \"mamba_proj_bias\": false, "
                      "\"num_attention_heads\": 32, \"num_experts\": 16, "
                      "\"num_experts_per_tok\": 2, \"num_hidden_layers\": 32, "
                      "\"num_key_value_heads\": 8, \"sliding_window\": null, "
                      "\"tie_word_embeddings\": false, \"vocab_size\": 65536}";
    uint64_t n = exact_count(cfg);
    const uint64_t h = 4096, f = 14336;
    const uint64_t attn = h * h + 2 * h * 1024 + h * h;
    const uint64_t mlp = 3 * h * f, moe = h * 16 + 16 * 3 * h * f;
    /* 4 attention layers (4, 12, 20, 28: all even, so dense), 28 Mamba layers of which 16
     * are odd (MoE) and 12 even (dense) */
    uint64_t want = 2 * 65536ull * h + h + 32 * 2 * h + 4 * (attn + mlp) +
                    12 * (jamba_mixer() + mlp) + 16 * (jamba_mixer() + moe);
    assert_int_equal(n, want);
    struct fg_model *m = built(cfg);
    assert_int_equal(m->experts, 16);
    assert_int_equal(m->top_k, 2);
    assert_int_equal(m->nodes[1 + 4 * 4 + 1].kind, FG_NODE_ATTN); /* layer 4's mixer */
    fg_model_free(m);
    /* an offset at or past its period is refused, as JambaConfig refuses it */
    struct fg_err err = {0};
    assert_int_equal(build("{\"model_type\": \"jamba\", \"attn_layer_period\": 4, "
                           "\"attn_layer_offset\": 4}", &m, &err), FG_E_RANGE);
    assert_non_null(strstr(err.detail, "attn_layer_offset"));
}

/* Zamba2-2.7B's layout at small width: two shared blocks (ABAB) over four hybrid layers,
 * each call with its own gate_up adapter, attention adapters on; the shared weights are
 * stored once per block. */
static void read_zamba2_should_store_shared_blocks_once_with_per_call_adapters(void **state)
{
    (void)state;
#define ZAMBA2_CFG(adapter)                                                                   \
    "{\"model_type\": \"zamba2\", \"hidden_size\": 256, \"num_hidden_layers\": 8, "               \
    "\"layers_block_type\": [\"mamba\", \"hybrid\", \"mamba\", \"hybrid\", \"mamba\", \"hybrid\", "   \
    "\"mamba\", \"hybrid\"], \"num_mem_blocks\": 2, \"num_attention_heads\": 8, "                  \
    "\"intermediate_size\": 1024, \"adapter_rank\": 16, \"use_shared_attention_adapter\": "        \
    adapter ", \"mamba_d_state\": 64, \"mamba_ngroups\": 1, \"n_mamba_heads\": 8, "                \
    "\"mamba_expand\": 2, \"vocab_size\": 1000}"
    const char *cfg = ZAMBA2_CFG("true");
    uint64_t n = exact_count(cfg);
    const uint64_t h = 256, h2 = 512, f = 1024, r = 16, i = 512, conv = i + 2 * 64, heads = 8;
    const uint64_t mixer = h * (i + conv + heads) + (conv * 4 + conv) + 3 * heads + i + i * h;
    const uint64_t block = h2 + (3 * h2 * h2 + h2 * h) + h + (h * 2 * f + f * h);
    const uint64_t adapters = 3 * (h2 * r + r * h2) + (h * r + r * 2 * f);
    uint64_t want = 1000 * h + 8 * (h + mixer) + 2 * block + 4 * adapters + 4 * h * h + h;
    assert_int_equal(n, want);
    /* without the attention adapters each call stores only its gate_up adapter */
    assert_int_equal(n - exact_count(ZAMBA2_CFG("false")), 4 * 3 * (h2 * r + r * h2));
    /* a block type list of the wrong length is refused */
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(build("{\"model_type\": \"zamba2\", \"num_hidden_layers\": 3, "
                           "\"layers_block_type\": [\"mamba\"]}", &m, &err), FG_E_RANGE);
    assert_non_null(strstr(err.detail, "layers_block_type"));
}

/* Zyphra's pre-transformers Zamba2-7B config (tests/fixtures/models/Zyphra--Zamba2-7B):
 * ffn_hidden_size / state_size / expansion_factor / lora_rank are not Zamba2Config
 * arguments, so the class builds its own sizes there; the 7B's values are those sizes
 * (14336 = 4 x 3584, 64, 2, 128) and are not doubted, but its mamba_headdim 64 is not the
 * 2 x 3584 / 8 = 896 the class derives from its default n_mamba_heads: unsure, naming it.
 * A Zyphra size the class does not build is named; a transformers config carries
 * mamba_headdim as the class derives it, and stays exact; one that disagrees does not. */
static void read_zamba2_should_doubt_zyphra_pre_transformers_keys(void **state)
{
    (void)state;
#define ZYPHRA_7B(ffn, headdim)                                                                \
    "{\"model_type\": \"zamba2\", \"hidden_size\": 3584, \"ffn_hidden_size\": " ffn ", "       \
    "\"state_size\": 64, \"expansion_factor\": 2, \"use_shared_block_lora\": true, "          \
    "\"lora_rank\": 128, \"use_shared_attention_lora\": false" headdim "}"
    struct fg_model *m = built(ZYPHRA_7B("14336", ", \"mamba_headdim\": 64"));
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_string_equal(m->unsure_key, "mamba_headdim");
    fg_model_free(m);
    m = built(ZYPHRA_7B("14336", ""));
    assert_string_equal(m->unsure_key, "mamba_headdim");
    fg_model_free(m);
    m = built(ZYPHRA_7B("10240", ", \"mamba_headdim\": 64"));
    assert_string_equal(m->unsure_key, "ffn_hidden_size");
    fg_model_free(m);
    /* the same file with the heads the checkpoint has reads as the class builds it */
    exact_count(ZYPHRA_7B("14336", ", \"mamba_headdim\": 64, \"n_mamba_heads\": 112"));
#undef ZYPHRA_7B
    /* Zamba2-2.7B's transformers config: 2560 x 2 / 80 heads = 64 */
    exact_count("{\"model_type\": \"zamba2\", \"n_mamba_heads\": 80, \"mamba_headdim\": 64}");
    m = built("{\"model_type\": \"zamba2\", \"hidden_size\": 3584, \"mamba_headdim\": 64}");
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_string_equal(m->unsure_key, "mamba_headdim");
    fg_model_free(m);
}

/* The Zyphra--Zamba2-7B fixture with the heads its checkpoint has (n_mamba_heads 112 =
 * 2 x 3584 / mamba_headdim 64), against a load of Zamba2-7B-Instruct through Zyphra's own
 * modeling code (Maykeye/Zamba2_HQQ@8239fe82 makezamba2-7b-quantie.ipynb, bf16 bytes of
 * model.parameters()): one Mamba layer 156,867,744 bytes, in_proj 3584 -> 14704; the whole
 * model 14,820,847,264 bytes.  Zyphra's code gives each of the two shared blocks the MLP
 * adapters of all 13 calls (linear_fc1_lora_A/B_list, 13 each), Zamba2MLP only those of its
 * own calls: the two differ by 13 adapter pairs exactly. */
static void read_zamba2_should_count_the_7b_as_a_zyphra_load_less_its_idle_adapters(void **state)
{
    (void)state;
    char *cfg = fixture_config_with("Zyphra--Zamba2-7B", "n_mamba_heads", 112);
    uint64_t n = exact_count(cfg);
    struct fg_model *m = built(cfg);
    free(cfg);
    const struct fg_node *mx = first_of(m, FG_NODE_MAMBA2);
    assert_non_null(mx);
    assert_int_equal(2 * mx->params, 156867744ull);
    fg_model_free(m);
    const uint64_t idle = 13 * (3584ull * 128 + 128ull * 2 * 14336);
    assert_int_equal(2 * (n + idle), 14820847264ull);
}

/* transformers since #46738 remaps the legacy "mamba" layer type to "linear_attention" and
 * saves that name: a re-saved config reads as the same model. */
static void read_zamba2_should_read_linear_attention_as_a_mamba_layer(void **state)
{
    (void)state;
    uint64_t legacy = exact_count("{\"model_type\": \"zamba2\", \"num_hidden_layers\": 3, "
                                  "\"layers_block_type\": [\"mamba\", \"hybrid\", \"mamba\"]}");
    uint64_t saved = exact_count("{\"model_type\": \"zamba2\", \"num_hidden_layers\": 3, "
                                 "\"layers_block_type\": [\"linear_attention\", \"hybrid\", "
                                 "\"linear_attention\"]}");
    assert_int_equal(saved, legacy);
    assert_int_equal(exact_count("{\"model_type\": \"zamba\", \"num_hidden_layers\": 3, "
                                 "\"layers_block_type\": [\"linear_attention\", \"hybrid\", "
                                 "\"hybrid\"]}"),
                     exact_count("{\"model_type\": \"zamba\", \"num_hidden_layers\": 3, "
                                 "\"layers_block_type\": [\"mamba\", \"hybrid\", \"hybrid\"]}"));
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(build("{\"model_type\": \"zamba2\", \"num_hidden_layers\": 1, "
                           "\"layers_block_type\": [\"attention\"]}", &m, &err), FG_E_RANGE);
    assert_non_null(strstr(err.detail, "linear_attention"));
}

/* ZambaConfig's defaults (the Zamba-7B-v1 shapes its docstring names): hidden 3712, 76
 * layers - mamba, mamba, hybrid, then hybrid at i % 6 == 4: 13 hybrid layers - one shared
 * block over 2 x hidden, Mamba-1 mixers of 7424 over 2 heads, dt rank 232, tied. */
static void read_zamba_should_count_one_shared_block_and_mamba1_layers(void **state)
{
    (void)state;
    uint64_t n = exact_count("{\"model_type\": \"zamba\"}");
    const uint64_t h = 3712, h2 = 7424, f = 14848;
    const uint64_t block = h2 + 3 * h2 * h2 + h2 * h + h + 3 * h * f;
    const uint64_t layer = h + mamba1_mixer(h, 7424, 232, 16, 4, false);
    assert_int_equal(n, 32000ull * h + 76 * layer + block + 13 * h * h + h);
    /* a saved layers_block_type wins over the computed one */
    uint64_t n2 = exact_count("{\"model_type\": \"zamba\", \"num_hidden_layers\": 3, "
                        "\"layers_block_type\": [\"mamba\", \"hybrid\", \"hybrid\"]}");
    assert_int_equal(n2, 32000ull * h + 3 * layer + block + 2 * h * h + h);
}

/* google/recurrentgemma-2b: hidden 2560, 26 layers cycling recurrent, recurrent, attention,
 * lru_width 2560 over 10 gate blocks, 10 / 1 heads of 256, intermediate_size 15360 (the MLP
 * is half of it), vocab 256000, tied. */
static void read_recurrent_gemma_should_count_rglru_and_local_attention(void **state)
{
    (void)state;
    const char *cfg = "{\"model_type\": \"recurrent_gemma\", \"_block_types\": [\"recurrent\", "
                      "\"recurrent\", \"attention\"], \"attention_bias\": false, "
                      "\"attention_window_size\": 2048, \"conv1d_width\": 4, \"head_dim\": 256, "
                      "\"hidden_size\": 2560, \"intermediate_size\": 15360, \"lru_width\": 2560, "
                      "\"num_attention_heads\": 10, \"num_hidden_layers\": 26, "
                      "\"num_key_value_heads\": 1, \"vocab_size\": 256000}";
    uint64_t n = exact_count(cfg);
    const uint64_t h = 2560, w = 2560, bw = 256, f = 7680;
    const uint64_t rec = 3 * (h * w + w) - w + h + (w * 4 + w) + w + 2 * (10 * bw * bw + w);
    const uint64_t attn = h * h + 2 * h * 256 + (h * h + h);
    const uint64_t mlp = 2 * (h * f + f) + (f * h + h);
    assert_int_equal(n, 256000ull * h + 18 * (2 * h + rec + mlp) + 8 * (2 * h + attn + mlp) + h);
    /* the published total: safetensors metadata of the release (tests/fixtures/models/
     * google--recurrentgemma-2b/PROVENANCE.txt) */
    assert_int_equal(n, 2682862080ull);
    struct fg_model *m = built(cfg);
    const struct fg_node *a = first_of(m, FG_NODE_ATTN);
    assert_non_null(a);
    assert_int_equal(a->window, 2048);
    assert_int_equal(a->layer, 2);
    fg_model_free(m);
}

/* RWKV-4 Pile releases: 169m (768 x 12), 430m (1024 x 24), 1b5 (2048 x 24), 3b (2560 x 32),
 * vocab 50277, untied head; their published totals. */
static uint64_t rwkv4(uint64_t h, uint64_t layers)
{
    const uint64_t v = 50277, f = 4 * h;
    const uint64_t time_mix = 2 * h + 3 * h + 3 * h * h + h * h;
    const uint64_t channel_mix = 2 * h + h * f + h * h + f * h;
    return 2 * v * h + 2 * h /* pre_ln */ + layers * (4 * h + time_mix + channel_mix) + 2 * h;
}

static void read_rwkv_should_match_the_pile_releases(void **state)
{
    (void)state;
    static const struct {
        uint64_t h, layers, published;
    } rel[] = {{768, 12, 169342464}, {1024, 24, 430397440}, {2048, 24, 1515106304},
               {2560, 32, 2984627200}};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        char cfg[256];
        snprintf(cfg, sizeof cfg, "{\"model_type\": \"rwkv\", \"hidden_size\": %llu, "
                 "\"num_hidden_layers\": %llu, \"attention_hidden_size\": %llu, "
                 "\"intermediate_size\": %llu, \"vocab_size\": 50277, \"context_length\": 1024, "
                 "\"tie_word_embeddings\": false}", (unsigned long long)rel[i].h,
                 (unsigned long long)rel[i].layers, (unsigned long long)rel[i].h,
                 (unsigned long long)(4 * rel[i].h));
        uint64_t n = exact_count(cfg);
        assert_int_equal(n, rwkv4(rel[i].h, rel[i].layers));
        /* a model-size table of the four releases (tests/fixtures/PROVENANCE.md) */
        assert_int_equal(n, rel[i].published);
    }
}

/* Gemma3nTextModel, term by term: hidden h, L layers of MLP width f, 8 / 2 heads of 256,
 * vocabularies 262400 and 262144 (per layer, 256 wide), AltUp 4, LAuReL 64, tied. */
static uint64_t gemma3n_text(uint64_t layers, uint64_t f)
{
    const uint64_t h = 2048, hd = 256, p = 256, n = 4, r = 64;
    const uint64_t attn = h * 8 * hd + 2 * h * 2 * hd + 8 * hd * h + 2 * hd;
    const uint64_t extras = h * n + h * r + r * h + h * p + p * h + (h + n * n + n * n * n + h) +
                            2 * h;
    const uint64_t layer = 4 * h + attn + 3 * h * f + extras;
    return 262400ull * h + 262144ull * layers * p + (h * layers * p + p) + 2 * (n - 1) * h * h +
           layers * layer + h;
}

/* gemma-3n-E4B's text_config (the class defaults: 35 layers, 16384 wide, 15 KV-shared) and
 * E2B's (30 layers, 8192 wide, 10 KV-shared).  Both releases carry the same vision and
 * audio towers, so their published totals (7,849,978,192 and 5,439,438,272, Hub safetensors
 * counts) differ by exactly the difference of the text models. */
static void read_gemma3n_text_should_match_the_e4b_e2b_difference(void **state)
{
    (void)state;
    uint64_t e4b = exact_count("{\"model_type\": \"gemma3n_text\", \"hidden_size\": 2048, "
                         "\"num_hidden_layers\": 35, \"intermediate_size\": 16384, "
                         "\"num_attention_heads\": 8, \"num_key_value_heads\": 2, "
                         "\"head_dim\": 256, \"num_kv_shared_layers\": 15}");
    uint64_t e2b = exact_count("{\"model_type\": \"gemma3n_text\", \"hidden_size\": 2048, "
                         "\"num_hidden_layers\": 30, \"intermediate_size\": [8192, 8192, 8192, "
                         "8192, 8192, 8192, 8192, 8192, 8192, 8192, 8192, 8192, 8192, 8192, 8192, "
                         "8192, 8192, 8192, 8192, 8192, 8192, 8192, 8192, 8192, 8192, 8192, 8192, "
                         "8192, 8192, 8192], \"num_attention_heads\": 8, "
                         "\"num_key_value_heads\": 2, \"num_kv_shared_layers\": 10}");
    assert_int_equal(e4b, gemma3n_text(35, 16384));
    assert_int_equal(e2b, gemma3n_text(30, 8192));
    assert_int_equal(e4b - e2b, 7849978192ull - 5439438272ull);
    /* the multimodal class is refused by name: its vision tower is a timm model */
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(build("{\"model_type\": \"gemma3n\", \"text_config\": {}}", &m, &err),
                     FG_E_UNSUPPORTED);
    assert_non_null(strstr(err.detail, "timm"));
}

/* NX-AI/xLSTM-7b: 32 mLSTM blocks of 4096 over 8 heads, qk 2048, v 4096, the FFN
 * round_up(4096 x 2.667, 64) = 10944, vocab 50304, untied; the xLSTM 7B paper's Table 4
 * gives 6,865,424,896 parameters. */
static void read_xlstm_should_match_the_7b_paper_total(void **state)
{
    (void)state;
    uint64_t n = exact_count("{\"model_type\": \"xlstm\", \"embedding_dim\": 4096, \"num_blocks\": 32, "
                       "\"num_heads\": 8, \"vocab_size\": 50304, \"qk_dim_factor\": 0.5, "
                       "\"v_dim_factor\": 1.0, \"ffn_proj_factor\": 2.667, "
                       "\"ffn_round_up_to_multiple_of\": 64, \"weight_mode\": \"single\", "
                       "\"use_bias\": false, \"tie_word_embeddings\": false}");
    const uint64_t h = 4096, qk = 2048, v = 4096, f = 10944, nh = 8;
    const uint64_t mlstm = 2 * h * qk + 2 * h * v + 2 * (h * nh + nh) + v + v * h;
    const uint64_t block = 2 * h + mlstm + 3 * h * f;
    assert_int_equal(n, 2 * 50304ull * h + 32 * block + h);
    assert_int_equal(n, 6865424896ull);
}

/* One BLT transformer layer, term by term: norms, q / k / v / o, gated MLP. */
static uint64_t blt_layer(uint64_t h, uint64_t f)
{
    return 2 * h + 4 * h * h + 3 * h * f;
}

/* BltConfig's defaults, the facebook/blt-1b shapes: a 1-layer local encoder (1024, one
 * cross-attention after it), a 25-layer global transformer (2048), a 9-layer local decoder
 * (1024, cross-attention before every layer), 6 hash embeddings of 500002 rows, the 14-layer
 * 768-wide patcher, an untied 260-byte head.  A from_pretrained load of blt-1b in
 * transformers counts 4,633,391,872 (tests/fixtures/PROVENANCE.md). */
static void read_blt_should_count_the_four_parts_and_the_hash_embeddings(void **state)
{
    (void)state;
    uint64_t n = exact_count("{\"model_type\": \"blt\"}");
    const uint64_t he = 1024, hg = 2048, hp = 768, v = 260;
    const uint64_t cross = 4 * he * he + 2 * he;
    const uint64_t enc = v * he + blt_layer(he, 2816) + he * 2 * he + cross;
    const uint64_t glo = 25 * blt_layer(hg, 5632);
    const uint64_t dec = hg * 2 * he + 9 * (cross + blt_layer(he, 2816)) + he;
    const uint64_t patcher = 2 * v * hp + hp + 14 * blt_layer(hp, 2048);
    assert_int_equal(n, enc + 6 * 500002ull * he + glo + dec + patcher + v * he);
    assert_int_equal(n, 4633391872ull);
    /* without patch_in_forward the class builds no patcher */
    assert_int_equal(n - exact_count("{\"model_type\": \"blt\", \"patch_in_forward\": false}"), patcher);
}

/* ChameleonVQVAEEncoderResnetBlock, term by term. */
static uint64_t vq_resnet(uint64_t in, uint64_t out)
{
    return 2 * in + in * out * 9 + out + 2 * out + out * out * 9 + out +
           (in != out ? in * out + out : 0);
}

/* ChameleonConfig's defaults, the chameleon-7b shapes (its vq_config is the VQ defaults:
 * 128 base channels over multipliers 1, 1, 2, 2, 4, two resnet blocks a level, no
 * attention levels, the vanilla mid attention, 8192 codes of 256). */
static void read_chameleon_should_count_the_vq_encoder_and_qk_layernorms(void **state)
{
    (void)state;
    uint64_t n = exact_count("{\"model_type\": \"chameleon\"}");
    const uint64_t h = 4096, f = 11008, b = 128;
    const uint64_t attn = 4 * h * h + 2 * 2 * h; /* q_norm and k_norm: weight and bias */
    const uint64_t layer = 2 * h + attn + 3 * h * f;
    uint64_t vq = 3 * b * 9 + b;
    const uint64_t mult[] = {1, 1, 2, 2, 4};
    for (int i = 0; i < 5; i++) {
        uint64_t in = b * (i ? mult[i - 1] : 1), out = b * mult[i];
        vq += vq_resnet(in, out) + vq_resnet(out, out) + (i < 4 ? out * out * 9 + out : 0);
    }
    const uint64_t c = 512;
    vq += 2 * vq_resnet(c, c) + (2 * c + 4 * (c * c + c)) + 2 * c + (c * 256 * 9 + 256);
    vq += 8192 * 256 + 2 * (256 * 256 + 256);
    assert_int_equal(n, 2 * 65536ull * h + 32 * layer + h + vq);
    /* an attention block at each level whose resolution attn_resolutions names */
    uint64_t na = exact_count("{\"model_type\": \"chameleon\", \"vq_config\": {\"attn_resolutions\": "
                        "[32]}}");
    assert_int_equal(na - n, 2 * (2 * c + 4 * (c * c + c)));
}

/* Emu3's defaults (Emu3-Chat-hf's text model: 4096 x 32, 32 / 8 heads, 14336 wide, vocab
 * 184622, untied) and the video VQ-VAE's (256 base channels over 1, 2, 2, 4, attention at
 * level 3 over 1024, 4-channel latents, a 4x temporal factor, 32768 codes), term by term. */
static void read_emu3_should_count_the_video_vq_vae_and_its_batchnorm_buffers(void **state)
{
    (void)state;
    struct fg_model *m = built("{\"model_type\": \"emu3\"}");
    const uint64_t h = 4096, f = 14336, v = 184622;
    const uint64_t layer = 2 * h + (h * h + 2 * h * 1024 + h * h) + 3 * h * f;
    const uint64_t att = 4 * (1024ull * 1024 + 1024), b = 256, e = 4, L = 4;
    uint64_t enc = 3 * b * 9 + b;
    const uint64_t mult[] = {1, 2, 2, 4};
    for (int i = 0; i < 4; i++) {
        uint64_t in = b * (i ? mult[i - 1] : 1), out = b * mult[i];
        enc += vq_resnet(in, out) + vq_resnet(out, out) + (i == 3 ? 2 * (att + 2 * out) : 0) +
               (i < 3 ? out * out * 9 + out : 0);
    }
    const uint64_t top = 1024, tres = 2 * (4 * L + 1) + 2 * (L * L * 27 + L);
    enc += 2 * vq_resnet(top, top) + att + 2 * top + 2 * top + (top * L * 9 + L) +
           2 * (L * L * 36 + L) + 2 * tres;
    /* SpatialNorm(4, c): GroupNorm and two 1x1 convs from the 4 quant channels */
#define SN(c) (2 * (c) + 2 * (e * (c) + (c)))
#define QRES(i, o) (SN(i) + (i) * (o) * 9 + (o) + SN(o) + (o) * (o) * 9 + (o) + \
                    ((i) != (o) ? (i) * (o) + (o) : 0))
    uint64_t dec = 2 * tres + 2 * (L * L * 27 + L) + (L * top * 9 + top);
    dec += 2 * QRES(top, top) + att + SN(top);
    uint64_t in = top;
    for (int i = 3; i >= 0; i--) {
        uint64_t out = b * mult[i];
        for (int k = 0; k < 3; k++, in = out)
            dec += QRES(in, out) + (i == 3 ? att + SN(out) : 0);
        if (i)
            dec += in * in * 9 + in;
    }
    dec += SN(b) + (b * 3 * 9 + 3);
#undef SN
#undef QRES
    const uint64_t vq = enc + dec + 32768 * e + (L * e * 3 + e) + (e * L * 3 + L);
    assert_int_equal(m->params_total, 2 * v * h + 32 * layer + h + vq);
    /* BatchNorm3d's running_mean / running_var / num_batches_tracked are stored buffers */
    const struct fg_node *t = first_of(m, FG_NODE_VISION);
    assert_non_null(t);
    assert_int_equal(t->buffers, 4 * 2 * (2 * L + 1));
    fg_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(read_mamba_should_count_mamba_130m_term_by_term),
        cmocka_unit_test(read_falcon_mamba_should_keep_intermediate_size_over_expand),
        cmocka_unit_test(read_mamba2_should_count_codestral_term_by_term),
        cmocka_unit_test(read_jamba_should_place_attention_and_experts_by_period),
        cmocka_unit_test(read_zamba2_should_store_shared_blocks_once_with_per_call_adapters),
        cmocka_unit_test(read_zamba2_should_doubt_zyphra_pre_transformers_keys),
        cmocka_unit_test(read_zamba2_should_read_linear_attention_as_a_mamba_layer),
        cmocka_unit_test(read_zamba2_should_count_the_7b_as_a_zyphra_load_less_its_idle_adapters),
        cmocka_unit_test(read_zamba_should_count_one_shared_block_and_mamba1_layers),
        cmocka_unit_test(read_recurrent_gemma_should_count_rglru_and_local_attention),
        cmocka_unit_test(read_rwkv_should_match_the_pile_releases),
        cmocka_unit_test(read_gemma3n_text_should_match_the_e4b_e2b_difference),
        cmocka_unit_test(read_xlstm_should_match_the_7b_paper_total),
        cmocka_unit_test(read_blt_should_count_the_four_parts_and_the_hash_embeddings),
        cmocka_unit_test(read_chameleon_should_count_the_vq_encoder_and_qk_layernorms),
        cmocka_unit_test(read_emu3_should_count_the_video_vq_vae_and_its_batchnorm_buffers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
