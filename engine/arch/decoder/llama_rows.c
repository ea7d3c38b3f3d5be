/*
 * llama_rows.c - llama-style decoders as table rows.
 *
 * One block = [pre-norm] attention [post-norm] + [pre-norm] MLP [post-norm],
 * embedding in front, final norm and LM head behind.  What differs between
 * families (norm kind, biases, q/k norms, extra norms, tying defaults, fused
 * projections, sliding-window pattern) is a column of struct fg_decoder_spec,
 * with the transformers class the row was read from.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/hybrid/nemotron_h_lfm2_qwen3_next.h"
#include "util/fmt.h"

struct fg_decoder_spec {
    struct fg_core_defaults d;     /* the config class defaults */
    enum fg_norm_kind norm;
    const char *bias_key;          /* config key switching q/k/v/o biases, or NULL */
    const char *qkv_bias_key;      /* config key switching q/k/v biases only, or NULL */
    bool bias_default;             /* q/k/v/o biases when the key is absent */
    bool qkv_bias_default;         /* q/k/v biases when qkv_bias_key is absent (GLM: true) */
    const char *o_bias_key;        /* config key switching the o_proj bias alone (Seed-OSS) */
    bool qkv_bias_fixed;           /* q/k/v biases always present (Qwen2) */
    const char *mlp_bias_key;      /* config key for MLP biases, or NULL (= bias_key for starcoder2) */
    bool gated;                    /* SwiGLU / GeGLU MLP */
    uint8_t qk_norm;               /* 0 none, 1 per head_dim, 2 over all heads */
    const char *qk_norm_key;       /* config key switching qk norm, or NULL (always as qk_norm) */
    uint8_t norms_per_layer;       /* 1 parallel block, 2 pre-norms, 4 pre+post (Gemma-2/3) */
    const char *post_norm_key;     /* config key switching the post-attention and post-MLP
                                      norms (4 norms when true, the default; 2 when false) */
    bool stores_tied_head;         /* checkpoint writes lm_head even when tied (counted so) */
    bool tied_head_open;           /* ... in some releases only, which config.json does not
                                      tell apart: unsure, the checkpoint's tensors decide */
    bool fused_qkv, fused_gate_up; /* projections stored fused (LoRA roles differ, counts do not) */
    uint64_t window_pattern;       /* see fg__read_windows */
    bool full_first;               /* without layer_types, layer i % window_pattern == 0 is
                                      the full one (GraniteSWAConfig.__post_init__) */
    bool honour_use_sliding_window;
    bool head_bias_key;            /* lm_head_bias key honoured (Phi-3) */
    bool normhead;                 /* Baichuan-2 NormHead: lm_head stored, never tied */
    double softcap_def;            /* attn_logit_softcapping when absent (Gemma-2: 50.0) */
    unsigned inv_freq_before;      /* configs written by transformers older than this
                                      (major * 1000 + minor) sit next to checkpoints that store
                                      each layer's rotary inv_freq buffer; 0 = never */
    uint64_t kv_heads_def;         /* num_key_value_heads when absent; 0 = heads (BitNet: 5) */
    bool sub_norms;                /* BitNet attn_sub_norm (hidden) and ffn_sub_norm (inter) */
    bool xielu;                    /* hidden_act "xielu" (the class default): each MLP's
                                      XIELUActivation stores alpha_p, alpha_n and the
                                      persistent buffers beta, eps (Apertus) */
    uint64_t head_dim_def;         /* head_dim when absent; 0 = hidden / heads */
    bool mlp_bias_default;         /* MLP biases when mlp_bias_key is absent, or always
                                      without a key (Jais2 true, Persimmon) */
    bool qk_norm_default;          /* qk norms when qk_norm_key is absent (Persimmon) */
    uint8_t attn_head_vectors;     /* learned head_dim vectors in each attention (DiffLlama's
                                      lambda_q1, lambda_k1, lambda_q2, lambda_k2: 4) */
    bool sinks;                    /* one learned sink logit per query head in each attention
                                      (GraniteSWAAttention.sinks) */
};

/* The LM head of a row: none stored for a base-model class, the tied head counted as written
 * where the row's checkpoints may write it (unsure of the count alone). */
static int add_head(const struct fg_cfg *c, const struct fg_decoder_spec *s, struct fg_model *m,
                    bool head_bias, struct fg_err *err)
{
    int rc;
    bool tied = s->normhead ? false : m->tied, headless = false;
    if ((rc = fg__cfg_headless(c, &headless, err)))
        return rc;
    if (headless) {
        /* a base-model class (Qwen3Model, LlamaModel: embedding checkpoints) holds no
         * lm_head; the node stays for the hidden states, with nothing stored */
        fg__model_rule(m, "architectures names no LM-head class: no lm_head stored", 0);
        return fg__add_head(m, m->vocab, m->hidden, true, false, false, err);
    }
    bool stored = tied && s->stores_tied_head;
    m->tied_head_open = stored && s->tied_head_open;
    if (m->tied_head_open)
        fg__model_unsure_count(m, "tie_word_embeddings", "unsure: tied, and config.json cannot say if "
                         "the checkpoint writes lm_head.weight anyway (Qwen3-0.6B does, "
                         "Qwen3-Embedding-0.6B not): counted as written");
    return fg__add_head(m, m->vocab, m->hidden, tied, stored, head_bias, err);
}

/* The class default layer_types with the full layer first in each window_pattern run: the
 * windows fg__read_windows gave (full last) moved one run position. */
static void full_first(uint64_t *window, uint64_t layers, uint64_t pattern)
{
    uint64_t sw = 0;
    for (uint64_t l = 0; l < layers; l++)
        sw = window[l] ? window[l] : sw;
    for (uint64_t l = 0; l < layers; l++)
        window[l] = l % pattern ? sw : 0;
}

/* LlamaRotaryEmbedding registered inv_freq as a persistent buffer until transformers
 * 4.32 (commit 95f96b45, "remove persistent inv_freq"): checkpoints written before store
 * model.layers.N.self_attn.rotary_emb.inv_freq, head_dim / 2 floats per layer.
 * Llama-2-7b-hf (config 4.31.0.dev0): Hub total 6,738,417,664 = 6,738,415,616 modules
 * + 32 x 64.  The change landed during 4.32's development, so 4.32.0.dev0 configs can sit
 * next to either layout (Llama-2-13b-hf's stores them: a pinned gap in test_params.c);
 * they are read as the newer one. */
static uint64_t stored_inv_freq(const struct fg_cfg *c, const struct fg_decoder_spec *s,
                                struct fg_model *m)
{
    unsigned ver = fg__cfg_tf_version(c);
    uint64_t inv_freq = s->inv_freq_before && ver && ver < s->inv_freq_before ? m->head_dim / 2 : 0;
    if (inv_freq)
        fg__model_rule(m, "rotary inv_freq buffer stored per layer (written by transformers "
                          "< 4.32; in Attention)", 0);
    return inv_freq;
}

/* Shared by all rows: the block structure. */
int fg__arch_read_decoder(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                          struct fg_err *err)
{
    const struct fg_decoder_spec *s = spec;
    int rc;
    if ((rc = fg__read_core(c, m, &s->d, err)))
        return rc;
    if (s->kv_heads_def && (rc = fg__hy_read_kv_heads(c, m, s->kv_heads_def, err)))
        return rc;
    if (s->head_dim_def && !fg_cfg_has(c, "head_dim"))
        m->head_dim = s->head_dim_def;
    const char *act = "";
    if (s->xielu && (rc = fg_cfg_str(c, "hidden_act", "xielu", &act, err)))
        return rc;
    bool xielu = s->xielu && act && strcmp(act, "xielu") == 0;
    bool bias = s->bias_default, mlp_bias = s->mlp_bias_default, qkn = s->qk_norm != 0,
         head_bias = false;
    if (s->bias_key && (rc = fg_cfg_bool(c, s->bias_key, s->bias_default, &bias, err)))
        return rc;
    bool qkv_bias = false, o_bias = false;
    if (s->qkv_bias_key &&
        (rc = fg_cfg_bool(c, s->qkv_bias_key, s->qkv_bias_default, &qkv_bias, err)))
        return rc;
    if (s->o_bias_key && (rc = fg_cfg_bool(c, s->o_bias_key, false, &o_bias, err)))
        return rc;
    if (s->mlp_bias_key &&
        (rc = fg_cfg_bool(c, s->mlp_bias_key, s->mlp_bias_default, &mlp_bias, err)))
        return rc;
    if (s->qk_norm_key && (rc = fg_cfg_bool(c, s->qk_norm_key, s->qk_norm_default, &qkn, err)))
        return rc;
    /* A class whose q/k norms are unconditional (HunYuanDenseV1Attention) ignores a
     * use_qk_norm its config may carry (Hunyuan-MT-7B writes true): read, no shape changes. */
    bool ignored;
    if (s->qk_norm && !s->qk_norm_key &&
        (rc = fg_cfg_bool(c, "use_qk_norm", true, &ignored, err)))
        return rc;
    if (s->head_bias_key && (rc = fg_cfg_bool(c, "lm_head_bias", false, &head_bias, err)))
        return rc;
    bool post_norm = s->norms_per_layer == 4;
    if (s->post_norm_key && (rc = fg_cfg_bool(c, s->post_norm_key, true, &post_norm, err)))
        return rc;
    uint8_t norms = s->post_norm_key ? (post_norm ? 4 : 2) : s->norms_per_layer;
    /* Soft-capped attention logits (Gemma-2): eager attention's tanh keeps its output,
     * 2 B per score more (transformers gemma2 eager_attention_forward). */
    double softcap;
    if ((rc = fg_cfg_f64(c, "attn_logit_softcapping", s->softcap_def, 0, 1e9, &softcap, err)))
        return rc;
    uint64_t inv_freq = stored_inv_freq(c, s, m);
    uint64_t window[FG_MAX_LAYERS];
    if ((rc = fg__read_windows(c, m->layers, window, s->window_pattern,
                               s->honour_use_sliding_window, err)))
        return rc;
    if (s->full_first && !fg_cfg_has(c, "layer_types"))
        full_first(window, m->layers, s->window_pattern);

    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)))
        return rc;
    size_t block = 0; /* the first node of the block built last */
    for (uint64_t l = 0; l < m->layers; l++) {
        int32_t li = (int32_t)l;
        /* a block reads nothing of its layer but its window: the blocks after the last one
         * built with its window are copies of it */
        uint64_t k = 0;
        while (l > 0 && l + k < m->layers && window[l + k] == window[l - 1])
            k++;
        if (k && fg__model_repeat_block(m, block, li, (uint32_t)k)) {
            l += k - 1;
            continue;
        }
        block = m->n_nodes;
        struct fg_attn_shape a = {
            .hidden = m->hidden, .heads = m->heads, .kv_heads = m->kv_heads,
            .head_dim = m->head_dim, .window = window[l],
            .qkv_bias = bias || qkv_bias || s->qkv_bias_fixed, .o_bias = bias || o_bias,
            .fused_qkv = s->fused_qkv, .qk_norm = qkn ? (s->qk_norm ? s->qk_norm : 1) : 0,
            .qk_norm_kind = s->norm == FG_NORM_LN ? FG_NORM_LN : FG_NORM_RMS,
        };
        struct fg_mlp_shape f = {.hidden = m->hidden, .inter = m->inter, .gated = s->gated,
                                 .bias = mlp_bias, .fused_gate_up = s->fused_gate_up};
        /* Norm placement: 2 = input + post-attention (llama); 4 = Gemma-2/3's
         * pre/post pairs; 1 = one norm feeding parallel attention and MLP (Cohere). */
        if ((rc = fg__add_norm(m, li, "Norm", m->hidden, s->norm, err)))
            return rc;
        struct fg_node *attn;
        if ((rc = fg__add_attention(m, li, &a, &attn, err)))
            return rc;
        if (softcap > 0)
            attn->eager_bytes += 2;
        attn->params += inv_freq + (s->sub_norms ? m->hidden : 0) +
                        s->attn_head_vectors * m->head_dim + (s->sinks ? m->heads : 0);
        if (s->sinks) {
            size_t len = strlen(attn->desc);
            fg__fmt(attn->desc + len, sizeof attn->desc - len, ", sinks");
        }
        attn->buffers += inv_freq;
        if (norms == 4 &&
            (rc = fg__add_norm(m, li, "PostAttnNorm", m->hidden, s->norm, err)))
            return rc;
        if (norms >= 2 && (rc = fg__add_norm(m, li, "Norm", m->hidden, s->norm, err)))
            return rc;
        struct fg_node *mlp;
        if ((rc = fg__add_mlp(m, li, &f, &mlp, err)))
            return rc;
        mlp->params += (s->sub_norms ? m->inter : 0) + (xielu ? 4 : 0);
        mlp->buffers += xielu ? 2 : 0;
        if (norms == 4 &&
            (rc = fg__add_norm(m, li, "PostMLPNorm", m->hidden, s->norm, err)))
            return rc;
    }
    if ((rc = fg__add_norm(m, -1, "Final norm", m->hidden, s->norm, err)))
        return rc;
    return add_head(c, s, m, head_bias, err);
}

/*
 * DeciLMForCausalLM (model_type nemotron-nas, remote code: the release's modeling_decilm.py;
 * the same module as vLLM's vllm/model_executor/models/nemotron_nas.py at 00bd1493 rebuilds
 * it): a llama decoder whose layers each follow their own block_configs entry, which
 * Puzzle / NAS search chose.  attention: no_op (no norm, no attention), replace_with_linear
 * (input_layernorm + Linear(hidden, hidden) without bias), else input_layernorm + llama
 * attention of num_attention_heads heads and heads / n_heads_in_group KV heads, a sliding
 * window of window_length when set.  ffn: no_op, replace_with_linear, else
 * post_attention_layernorm + a SwiGLU MLP of intermediate_size or of
 * _ffn_mult_to_intermediate_size: int(2 x ffn_mult x hidden / 3) rounded up to a multiple of
 * 256.  Llama-3_3-Nemotron-Super-49B-v1: 49,867,145,216 (tests/test_arch_decoder.c).
 */
/* The block entry's key as a number in *v; false when absent, null or not a number. */
static bool deci_number(const cJSON *o, const char *key, double *v)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(it))
        return false;
    *v = it->valuedouble;
    return true;
}

static int deci_layer(struct fg_model *m, int32_t l, const cJSON *blk, bool bias,
                      bool mlp_bias, const char *origin, struct fg_err *err)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(blk, "attention");
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(blk, "ffn");
    if (!cJSON_IsObject(blk) || !cJSON_IsObject(a) || !cJSON_IsObject(f))
        return fg_err_set(err, FG_E_TYPE, "%s: key 'block_configs' entry %d is not an object "
                          "with 'attention' and 'ffn' objects", origin, (int)l);
    int rc;
    double v;
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, "no_op"))) {
        /* nothing: the layer has no attention and no input_layernorm */
    } else if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, "replace_with_linear"))) {
        if ((rc = fg__add_norm(m, l, "Norm", m->hidden, FG_NORM_RMS, err)) ||
            (rc = fg__add_linear(m, FG_NODE_OTHER, l, "Linear attention", "proj", m->hidden,
                                 m->hidden, false, NULL, err)))
            return rc;
    } else {
        if (!deci_number(a, "n_heads_in_group", &v) || v < 1 || v != (double)(uint64_t)v ||
            m->heads % (uint64_t)v)
            return fg_err_set(err, FG_E_RANGE, "%s: key 'block_configs' entry %d: "
                              "attention.n_heads_in_group must divide num_attention_heads %llu",
                              origin, (int)l, (unsigned long long)m->heads);
        struct fg_attn_shape as = {.hidden = m->hidden, .heads = m->heads,
                                   .kv_heads = m->heads / (uint64_t)v, .head_dim = m->head_dim,
                                   .qkv_bias = bias, .o_bias = bias};
        if (deci_number(a, "window_length", &v) && v >= 1)
            as.window = (uint64_t)v;
        if (!m->kv_heads || m->kv_heads == m->heads)
            m->kv_heads = as.kv_heads;
        if ((rc = fg__add_norm(m, l, "Norm", m->hidden, FG_NORM_RMS, err)) ||
            (rc = fg__add_attention(m, l, &as, NULL, err)))
            return rc;
    }
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(f, "no_op")))
        return 0;
    if ((rc = fg__add_norm(m, l, "Norm", m->hidden, FG_NORM_RMS, err)))
        return rc;
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(f, "replace_with_linear")))
        return fg__add_linear(m, FG_NODE_OTHER, l, "Linear MLP", "proj", m->hidden, m->hidden,
                              false, NULL, err);
    uint64_t inter;
    if (deci_number(f, "ffn_mult", &v) && v > 0 && v < 1024) {
        inter = (uint64_t)(2 * v * (double)m->hidden / 3); /* Python's int(2 * m * h / 3) */
        inter = (inter + 255) / 256 * 256;
    } else if (deci_number(f, "intermediate_size", &v) && v >= 1 && v <= FG_MAX_INTER) {
        inter = (uint64_t)v;
    } else {
        return fg_err_set(err, FG_E_RANGE, "%s: key 'block_configs' entry %d: ffn needs "
                          "ffn_mult or intermediate_size", origin, (int)l);
    }
    if (inter > m->inter)
        m->inter = inter;
    struct fg_mlp_shape fs = {.hidden = m->hidden, .inter = inter, .gated = true,
                              .bias = mlp_bias};
    return fg__add_mlp(m, l, &fs, NULL, err);
}

static int read_decilm(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                       struct fg_err *err)
{
    (void)spec;
    static const struct fg_core_defaults d = {.vocab = 32000, .hidden = 4096, .inter = 1,
                                              .layers = 32, .heads = 32, .max_pos = 2048,
                                              .tie = false};
    int rc = fg__read_core(c, m, &d, err);
    bool bias = false, mlp_bias = false;
    if (rc || (rc = fg_cfg_bool(c, "attention_bias", false, &bias, err)) ||
        (rc = fg_cfg_bool(c, "mlp_bias", false, &mlp_bias, err)))
        return rc;
    const cJSON *list = fg__cfg_item(c, "block_configs");
    if (!cJSON_IsArray(list) || (uint64_t)cJSON_GetArraySize(list) != m->layers)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'block_configs' must list one block per "
                          "layer (%llu)", c->origin, (unsigned long long)m->layers);
    m->inter = 0;
    m->kv_heads = m->heads;
    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)))
        return rc;
    int32_t l = 0;
    const cJSON *blk;
    cJSON_ArrayForEach(blk, list) {
        if ((rc = deci_layer(m, l++, blk, bias, mlp_bias, c->origin, err)))
            return rc;
    }
    if ((rc = fg__add_norm(m, -1, "Final norm", m->hidden, FG_NORM_RMS, err)))
        return rc;
    return fg__add_head(m, m->vocab, m->hidden, m->tied, false, false, err);
}

/* LlamaConfig defaults (transformers models/llama/configuration_llama.py). */
#define LLAMA_D {.vocab = 32000, .hidden = 4096, .inter = 11008, .layers = 32, .heads = 32, \
                 .max_pos = 2048, .tie = false}

/* LlamaForCausalLM: RMSNorm, q/k/v/o biases by attention_bias, MLP bias by mlp_bias;
 * checkpoints written before transformers 4.32 store the rotary inv_freq buffers. */
static const struct fg_decoder_spec llama = {
    .d = LLAMA_D, .norm = FG_NORM_RMS, .bias_key = "attention_bias", .mlp_bias_key = "mlp_bias",
    .gated = true, .norms_per_layer = 2, .inv_freq_before = 4032};
/* MistralForCausalLM: llama blocks, sliding window on every layer when set. */
static const struct fg_decoder_spec mistral = {
    .d = {.vocab = 32000, .hidden = 4096, .inter = 14336, .layers = 32, .heads = 32,
          .max_pos = 4096 * 32, .tie = false},
    .norm = FG_NORM_RMS, .gated = true, .norms_per_layer = 2};
/* Qwen2ForCausalLM: q/k/v always biased, o not (modeling_qwen2.py Qwen2Attention). */
static const struct fg_decoder_spec qwen2 = {
    .d = {.vocab = 151936, .hidden = 4096, .inter = 22016, .layers = 32, .heads = 32,
          .max_pos = 32768, .tie = false},
    .norm = FG_NORM_RMS, .qkv_bias_fixed = true, .gated = true, .norms_per_layer = 2,
    .honour_use_sliding_window = true};
/* Qwen3ForCausalLM: q_norm/k_norm over head_dim.  Of the tied releases, the two smallest
 * write lm_head.weight although tie_word_embeddings is true (Qwen3-0.6B's file holds
 * 751,632,384 = 596,049,920 + 155,582,464; Qwen3-1.7B 2,031,739,904), and Qwen3-4B does
 * not: 4,022,468,096, its modules alone, in the Hub total quoted for Qwen3-4B, -Base and
 * the -2507 releases; nor does Qwen3-Embedding-0.6B, which names Qwen3ForCausalLM as
 * Qwen3-0.6B does with the same shapes (model.safetensors 1,191,586,416 B, the modules
 * alone in BF16).  No key of config.json tells them apart (hidden_size stood in for it
 * and was wrong for the embedding release), so a tied Qwen3 LM is counted with the head
 * written and said unsure; the checkpoint's tensor names decide when it is at hand
 * (model_load.c stored_parts).  A config naming a base-model class (Qwen3Model) stores no
 * head at all (fg__cfg_headless): exact. */
static const struct fg_decoder_spec qwen3 = {
    .d = {.vocab = 151936, .hidden = 4096, .inter = 22016, .layers = 32, .heads = 32,
          .max_pos = 32768, .tie = false},
    .norm = FG_NORM_RMS, .bias_key = "attention_bias", .gated = true, .qk_norm = 1,
    .norms_per_layer = 2, .stores_tied_head = true, .tied_head_open = true,
    .honour_use_sliding_window = true};
/* Qwen3VLTextModel (models/qwen3_vl, the text model of Qwen3-VL): Qwen3 blocks with
 * interleaved M-RoPE (no new tensors); the tied releases do not write lm_head: a header scan
 * of Qwen3-VL-2B's model.safetensors sums to 2,127,532,032, its modules alone (hidden 2048,
 * where the Qwen3 text release stores the head).  Qwen3VLTextConfig defaults. */
static const struct fg_decoder_spec qwen3_vl_text = {
    .d = {.vocab = 151936, .hidden = 4096, .inter = 22016, .layers = 32, .heads = 32,
          .max_pos = 128000, .tie = false},
    .norm = FG_NORM_RMS, .bias_key = "attention_bias", .gated = true, .qk_norm = 1,
    .norms_per_layer = 2};
/* GemmaForCausalLM: tied by default, GeGLU.  GemmaConfig defaults (16 key/value heads of
 * head_dim 256, not hidden / heads). */
static const struct fg_decoder_spec gemma = {
    .d = {.vocab = 256000, .hidden = 3072, .inter = 24576, .layers = 28, .heads = 16,
          .max_pos = 8192, .tie = true, .kv_heads = 16, .head_dim = 256},
    .norm = FG_NORM_RMS, .bias_key = "attention_bias", .gated = true, .norms_per_layer = 2};
/* Gemma2ForCausalLM: four norms per block; even layers slide (layer_types in new configs).
 * Gemma2Config defaults (configuration_gemma2.py @008e5743): 4 key/value heads, head_dim 256. */
static const struct fg_decoder_spec gemma2 = {
    .d = {.vocab = 256000, .hidden = 2304, .inter = 9216, .layers = 26, .heads = 8,
          .max_pos = 8192, .tie = true, .kv_heads = 4, .head_dim = 256},
    .norm = FG_NORM_RMS, .bias_key = "attention_bias", .gated = true, .norms_per_layer = 4,
    .window_pattern = 2, .softcap_def = 50.0};
/* Gemma3ForCausalLM (text): Gemma-2 blocks + q/k norms; 5 sliding layers, then 1 global.
 * Gemma3TextConfig defaults (configuration_gemma3.py @008f5c8c): 4 key/value heads and
 * head_dim 256, which gemma-3-4b-it's text_config leaves to them (hidden 2560 / 8 heads
 * would give 320: +356,520,192, the 8% the issue found). */
static const struct fg_decoder_spec gemma3_text = {
    .d = {.vocab = 262208, .hidden = 2304, .inter = 9216, .layers = 26, .heads = 8,
          .max_pos = 131072, .tie = true, .kv_heads = 4, .head_dim = 256},
    .norm = FG_NORM_RMS, .bias_key = "attention_bias", .gated = true, .qk_norm = 1,
    .norms_per_layer = 4, .window_pattern = 6};
/* Olmo2ForCausalLM: norms after attention and MLP; q/k norms over all heads. */
static const struct fg_decoder_spec olmo2 = {
    .d = {.vocab = 50304, .hidden = 4096, .inter = 11008, .layers = 32, .heads = 32,
          .max_pos = 2048, .tie = false},
    .norm = FG_NORM_RMS, .bias_key = "attention_bias", .gated = true, .qk_norm = 2,
    .norms_per_layer = 2};
/* SmolLM3ForCausalLM: llama blocks, tied by default. */
static const struct fg_decoder_spec smollm3 = {
    .d = {.vocab = 128256, .hidden = 2048, .inter = 11008, .layers = 36, .heads = 16,
          .max_pos = 32768, .tie = true},
    .norm = FG_NORM_RMS, .bias_key = "attention_bias", .mlp_bias_key = "mlp_bias",
    .gated = true, .norms_per_layer = 2, .honour_use_sliding_window = true};
/* CohereForCausalLM: one LayerNorm without bias feeding parallel attention and MLP. */
static const struct fg_decoder_spec cohere = {
    .d = {.vocab = 256000, .hidden = 8192, .inter = 22528, .layers = 40, .heads = 64,
          .max_pos = 8192, .tie = true},
    .norm = FG_NORM_LN_NOBIAS, .bias_key = "attention_bias", .gated = true,
    .qk_norm_key = "use_qk_norm", .norms_per_layer = 1};
/* StableLmForCausalLM: LayerNorm with bias, q/k/v bias by use_qkv_bias. */
static const struct fg_decoder_spec stablelm = {
    .d = {.vocab = 50304, .hidden = 2560, .inter = 6912, .layers = 32, .heads = 32,
          .max_pos = 4096, .tie = false},
    .norm = FG_NORM_LN, .qkv_bias_key = "use_qkv_bias", .gated = true, .norms_per_layer = 2};
/* Starcoder2ForCausalLM: LayerNorm with bias, plain GELU MLP, use_bias on every linear. */
static const struct fg_decoder_spec starcoder2 = {
    .d = {.vocab = 49152, .hidden = 3072, .inter = 12288, .layers = 30, .heads = 24,
          .max_pos = 4096, .tie = true},
    .norm = FG_NORM_LN, .bias_key = "use_bias", .bias_default = true, .mlp_bias_key = "use_bias",
    .gated = false, .norms_per_layer = 2};
/* Phi3ForCausalLM: fused qkv_proj and gate_up_proj, lm_head_bias key. */
static const struct fg_decoder_spec phi3 = {
    .d = {.vocab = 32064, .hidden = 3072, .inter = 8192, .layers = 32, .heads = 32,
          .max_pos = 4096, .tie = false},
    .norm = FG_NORM_RMS, .gated = true, .norms_per_layer = 2, .fused_qkv = true,
    .fused_gate_up = true, .head_bias_key = true};
/* MiniCPMForCausalLM (remote code): llama blocks, tied by default. */
static const struct fg_decoder_spec minicpm = {
    .d = {.vocab = 32000, .hidden = 4096, .inter = 11008, .layers = 32, .heads = 32,
          .max_pos = 2048, .tie = true},
    .norm = FG_NORM_RMS, .bias_key = "attention_bias", .gated = true, .norms_per_layer = 2};
/* InternLM2ForCausalLM (remote code): fused wqkv, w1/w3/w2, bias key "bias". */
static const struct fg_decoder_spec internlm2 = {
    .d = {.vocab = 103168, .hidden = 4096, .inter = 11008, .layers = 32, .heads = 32,
          .max_pos = 2048, .tie = false},
    .norm = FG_NORM_RMS, .bias_key = "bias", .gated = true, .norms_per_layer = 2,
    .fused_qkv = true};
/* BaichuanForCausalLM (remote code, Baichuan-2): fused W_pack, NormHead lm_head. */
static const struct fg_decoder_spec baichuan = {
    .d = {.vocab = 125696, .hidden = 4096, .inter = 11008, .layers = 32, .heads = 32,
          .max_pos = 4096, .tie = false},
    .norm = FG_NORM_RMS, .gated = true, .norms_per_layer = 2, .fused_qkv = true,
    .normhead = true};

/* GraniteForCausalLM (models/granite/modeling_granite.py): llama blocks; the embedding,
 * residual, attention and logits multipliers scale activations, not shapes.
 * GraniteConfig defaults. */
static const struct fg_decoder_spec granite = {
    .d = LLAMA_D, .norm = FG_NORM_RMS, .bias_key = "attention_bias", .mlp_bias_key = "mlp_bias",
    .gated = true, .norms_per_layer = 2};
/* GraniteSWAForCausalLM (models/granite_swa/modular_granite_swa.py @decba1d2ea): Granite
 * blocks whose GraniteSWAAttention adds sinks = nn.Parameter(num_attention_heads) and slides
 * over sliding_window on the layers layer_types marks sliding_attention; layer_rope_theta
 * picks each layer's rotary base (0: no rotary), no tensor.  GraniteSWAConfig.__post_init__
 * fills layer_types when absent, full where i % 4 == 0 (full_first).
 * GraniteSWAConfig defaults (configuration_granite_swa.py: 4 key/value heads, tied). */
static const struct fg_decoder_spec granite_swa = {
    .d = {.vocab = 100352, .hidden = 2560, .inter = 8192, .layers = 24, .heads = 20,
          .max_pos = 8192, .tie = true},
    .norm = FG_NORM_RMS, .bias_key = "attention_bias", .mlp_bias_key = "mlp_bias",
    .gated = true, .norms_per_layer = 2, .window_pattern = 4, .full_first = true,
    .kv_heads_def = 4, .sinks = true};
/* HyperCLOVAXForCausalLM (models/hyperclovax/modular_hyperclovax.py at transformers
 * decba1d2ea): GraniteForCausalLM whose HyperCLOVAXDecoderLayer adds an RMSNorm after the
 * attention and after the MLP output (Peri-Layer Normalization) when use_post_norm (default
 * true), nn.Identity otherwise; the MuP multipliers scale activations, not shapes.
 * HyperCLOVAXConfig defaults (= LlamaConfig's shapes).  HyperCLOVAX-SEED-Think-14B:
 * 14,748,112,896 (tests/test_arch_decoder.c). */
static const struct fg_decoder_spec hyperclovax = {
    .d = LLAMA_D, .norm = FG_NORM_RMS, .bias_key = "attention_bias", .mlp_bias_key = "mlp_bias",
    .gated = true, .norms_per_layer = 4, .post_norm_key = "use_post_norm"};
/* MinistralForCausalLM (models/ministral/modular_ministral.py): Qwen2 blocks whose
 * MinistralAttention drops the q/k/v biases ("Match Mistral"); sliding windows by
 * layer_types.  MinistralConfig defaults. */
static const struct fg_decoder_spec ministral = {
    .d = {.vocab = 32000, .hidden = 4096, .inter = 14336, .layers = 32, .heads = 32,
          .max_pos = 4096 * 32, .tie = false},
    .norm = FG_NORM_RMS, .gated = true, .norms_per_layer = 2};
/* SeedOssForCausalLM (models/seed_oss/modeling_seed_oss.py): SeedOssAttention q/k/v biased
 * by attention_bias, o_proj by attention_out_bias; MLP bias by mlp_bias.  SeedOssConfig
 * defaults (attention_bias true). */
static const struct fg_decoder_spec seed_oss = {
    .d = {.vocab = 155136, .hidden = 4096, .inter = 27648, .layers = 64, .heads = 80,
          .max_pos = 524288, .tie = false},
    .norm = FG_NORM_RMS, .qkv_bias_key = "attention_bias", .qkv_bias_default = true,
    .o_bias_key = "attention_out_bias", .mlp_bias_key = "mlp_bias", .gated = true,
    .norms_per_layer = 2};
/* GlmForCausalLM (models/glm/modeling_glm.py, GLM-4-9B-0414's predecessor glm-4-9b-chat-hf):
 * GlmAttention q/k/v biased by attention_bias (default true), o_proj not; GlmMLP one
 * gate_up_proj.  GlmConfig defaults. */
#define GLM_D {.vocab = 151552, .hidden = 4096, .inter = 13696, .layers = 40, .heads = 32, \
               .max_pos = 131072, .tie = false}
static const struct fg_decoder_spec glm = {
    .d = GLM_D, .norm = FG_NORM_RMS, .qkv_bias_key = "attention_bias", .qkv_bias_default = true,
    .gated = true, .norms_per_layer = 2, .fused_gate_up = true};
/* Glm4ForCausalLM (models/glm4/modeling_glm4.py): GLM blocks with four RMSNorms
 * (input_layernorm, post_self_attn_layernorm, post_attention_layernorm,
 * post_mlp_layernorm).  Glm4Config defaults. */
static const struct fg_decoder_spec glm4 = {
    .d = GLM_D, .norm = FG_NORM_RMS, .qkv_bias_key = "attention_bias", .qkv_bias_default = true,
    .gated = true, .norms_per_layer = 4, .fused_gate_up = true};
/* Olmo3ForCausalLM (models/olmo3/modular_olmo3.py): OLMo-2 blocks (post-norms, q_norm over
 * heads x head_dim, k_norm over kv_heads x head_dim), 3 sliding layers then 1 full.
 * Olmo3Config defaults. */
static const struct fg_decoder_spec olmo3 = {
    .d = {.vocab = 50304, .hidden = 4096, .inter = 11008, .layers = 32, .heads = 32,
          .max_pos = 2048, .tie = false},
    .norm = FG_NORM_RMS, .bias_key = "attention_bias", .gated = true, .qk_norm = 2,
    .norms_per_layer = 2, .window_pattern = 4};
/* Exaone4ForCausalLM (models/exaone4/modular_exaone4.py): post-norm blocks
 * (post_attention_layernorm, post_feedforward_layernorm), q_norm / k_norm over head_dim,
 * sliding windows by layer_types.  Exaone4Config defaults. */
static const struct fg_decoder_spec exaone4 = {
    .d = {.vocab = 102400, .hidden = 4096, .inter = 16384, .layers = 32, .heads = 32,
          .max_pos = 2048, .tie = false},
    .norm = FG_NORM_RMS, .gated = true, .qk_norm = 1, .norms_per_layer = 2, .window_pattern = 4};
/* Ernie4_5ForCausalLM (models/ernie4_5/modular_ernie4_5.py): llama blocks, every linear
 * (q/k/v/o, gate/up/down) biased by use_bias; tied by default.  Ernie4_5Config defaults. */
static const struct fg_decoder_spec ernie4_5 = {
    .d = {.vocab = 103424, .hidden = 1024, .inter = 3072, .layers = 18, .heads = 16,
          .max_pos = 131072, .tie = true},
    .norm = FG_NORM_RMS, .bias_key = "use_bias", .mlp_bias_key = "use_bias", .gated = true,
    .norms_per_layer = 2};
/* HunYuanDenseV1ForCausalLM (models/hunyuan_v1_dense/modular_hunyuan_v1_dense.py):
 * LlamaAttention (attention_bias) plus query_layernorm / key_layernorm over head_dim,
 * always built; MLP without bias.  HunYuanDenseV1Config defaults. */
static const struct fg_decoder_spec hunyuan_v1_dense = {
    .d = {.vocab = 290943, .hidden = 4096, .inter = 11008, .layers = 32, .heads = 32,
          .max_pos = 2048, .tie = false},
    .norm = FG_NORM_RMS, .bias_key = "attention_bias", .gated = true, .qk_norm = 1,
    .norms_per_layer = 2};
/* HeliumForCausalLM (models/helium/modular_helium.py): HeliumAttention q/k/v biased by
 * attention_bias, o_proj never; MLP bias by mlp_bias.  HeliumConfig defaults. */
static const struct fg_decoder_spec helium = {
    .d = {.vocab = 48000, .hidden = 2560, .inter = 7040, .layers = 24, .heads = 20,
          .max_pos = 4096, .tie = false},
    .norm = FG_NORM_RMS, .qkv_bias_key = "attention_bias", .mlp_bias_key = "mlp_bias",
    .gated = true, .norms_per_layer = 2};
/* NemotronForCausalLM (models/nemotron/modeling_nemotron.py, Nemotron-4 / Minitron):
 * NemotronLayerNorm1P (weight and bias), plain relu^2 MLP up_proj / down_proj biased by
 * mlp_bias, q/k/v/o by attention_bias.  NemotronConfig defaults. */
static const struct fg_decoder_spec nemotron = {
    .d = {.vocab = 256000, .hidden = 6144, .inter = 24576, .layers = 32, .heads = 48,
          .max_pos = 4096, .tie = false},
    .norm = FG_NORM_LN, .bias_key = "attention_bias", .mlp_bias_key = "mlp_bias",
    .gated = false, .norms_per_layer = 2};
/* Cohere2ForCausalLM (models/cohere2/modular_cohere2.py, Command R7B / A): the Cohere
 * parallel block (one LayerNorm without bias), 3 sliding layers then 1 full
 * (sliding_window_pattern 4).  Cohere2Config defaults. */
static const struct fg_decoder_spec cohere2 = {
    .d = {.vocab = 256000, .hidden = 8192, .inter = 22528, .layers = 40, .heads = 64,
          .max_pos = 8192, .tie = true},
    .norm = FG_NORM_LN_NOBIAS, .bias_key = "attention_bias", .gated = true,
    .norms_per_layer = 1, .window_pattern = 4};
/* ArceeForCausalLM (models/arcee/modular_arcee.py, AFM-4.5B): llama attention, ArceeMLP a
 * plain relu^2 up_proj / down_proj biased by mlp_bias.  ArceeConfig defaults. */
static const struct fg_decoder_spec arcee = {
    .d = {.vocab = 32000, .hidden = 2560, .inter = 18432, .layers = 32, .heads = 32,
          .max_pos = 4096, .tie = false},
    .norm = FG_NORM_RMS, .bias_key = "attention_bias", .mlp_bias_key = "mlp_bias",
    .gated = false, .norms_per_layer = 2};

/* OlmoForCausalLM (models/olmo/modeling_olmo.py, OLMo 1): llama blocks whose OlmoLayerNorm
 * has neither weight nor bias (F.layer_norm over the hidden size), q/k/v/o biased by
 * attention_bias; clip_qkv clamps activations only.  OlmoConfig defaults. */
static const struct fg_decoder_spec olmo = {
    .d = {.vocab = 50304, .hidden = 4096, .inter = 11008, .layers = 32, .heads = 32,
          .max_pos = 2048, .tie = false},
    .norm = FG_NORM_LN_NOPARAM, .bias_key = "attention_bias", .gated = true,
    .norms_per_layer = 2};

/* ApertusForCausalLM (models/apertus/modular_apertus.py @008e5743, Apertus-8B / 70B):
 * LlamaAttention (attention_bias) with q_norm / k_norm over head_dim; ApertusMLP a plain
 * up_proj / down_proj without bias around XIELUActivation (transformers activations.py:
 * alpha_p and alpha_n parameters of shape (1,), beta and eps registered as persistent
 * buffers); attention_layernorm and feedforward_layernorm.  ApertusConfig defaults. */
static const struct fg_decoder_spec apertus = {
    .d = {.vocab = 131072, .hidden = 4096, .inter = 14336, .layers = 32, .heads = 32,
          .max_pos = 65536, .tie = false},
    .norm = FG_NORM_RMS, .bias_key = "attention_bias", .gated = false, .qk_norm = 1,
    .norms_per_layer = 2, .xielu = true};
/* BitNetForCausalLM (models/bitnet/modular_bitnet.py @08c53278, bitnet-b1.58-2B-4T):
 * LlamaAttention (attention_bias) whose output goes through attn_sub_norm (RMSNorm over
 * hidden) before o_proj; BitNetMLP the gated GemmaMLP with ffn_sub_norm (RMSNorm over
 * intermediate_size) before down_proj.  BitNetConfig defaults (5 key/value heads). */
static const struct fg_decoder_spec bitnet = {
    .d = {.vocab = 128256, .hidden = 2560, .inter = 6912, .layers = 30, .heads = 20,
          .max_pos = 2048, .tie = false},
    .norm = FG_NORM_RMS, .bias_key = "attention_bias", .gated = true, .norms_per_layer = 2,
    .kv_heads_def = 5, .sub_norms = true};

/* CwmForCausalLM (models/cwm/modular_cwm.py @000c33fd, Code World Model): LlamaModel
 * blocks whose CwmAttention (Qwen2Attention) has no bias on q/k/v/o; MLP bias by mlp_bias;
 * sliding windows by layer_types (the class default: every 4th layer, from the first,
 * attends fully).  CwmConfig defaults (8 key/value heads, head_dim 128). */
static const struct fg_decoder_spec cwm = {
    .d = {.vocab = 128256, .hidden = 6144, .inter = 21504, .layers = 64, .heads = 48,
          .max_pos = 131072, .tie = false},
    .norm = FG_NORM_RMS, .mlp_bias_key = "mlp_bias", .gated = true, .norms_per_layer = 2,
    .window_pattern = 4, .kv_heads_def = 8, .head_dim_def = 128};
/* Ministral3ForCausalLM (models/ministral3/modular_ministral3.py @00b364c7, the text model
 * of the Ministral-3 releases): MistralAttention (no bias) whose queries are scaled per
 * position (llama_4_scaling_beta: no tensor), Mistral blocks.  Ministral3Config defaults
 * (configuration_ministral3.py @008e5743: 8 key/value heads, head_dim 128). */
static const struct fg_decoder_spec ministral3 = {
    .d = {.vocab = 131072, .hidden = 4096, .inter = 14336, .layers = 34, .heads = 32,
          .max_pos = 262144, .tie = false},
    .norm = FG_NORM_RMS, .gated = true, .norms_per_layer = 2, .kv_heads_def = 8,
    .head_dim_def = 128};
/* VaultGemmaForCausalLM (models/vaultgemma/modular_vaultgemma.py @0eec8c78): Gemma2
 * attention (attention_bias, soft-capped logits) and GeGLU MLP, but VaultGemmaDecoderLayer
 * drops post_attention_layernorm and post_feedforward_layernorm: two norms per block;
 * sliding windows as Gemma-2's.  Gemma2Config defaults (4 key/value heads, head_dim 256). */
static const struct fg_decoder_spec vaultgemma = {
    .d = {.vocab = 256000, .hidden = 2304, .inter = 9216, .layers = 26, .heads = 8,
          .max_pos = 8192, .tie = true},
    .norm = FG_NORM_RMS, .bias_key = "attention_bias", .gated = true, .norms_per_layer = 2,
    .window_pattern = 2, .softcap_def = 50.0, .kv_heads_def = 4, .head_dim_def = 256};
/* Jais2ForCausalLM (models/jais2/modular_jais2.py @1060b88e, Jais-2): LlamaAttention with
 * q/k/v/o biased by attention_bias (default true), Jais2MLP = NemotronMLP (plain relu^2
 * up_proj / down_proj biased by mlp_bias, default true), nn.LayerNorm with bias for the
 * block and final norms.  Jais2Config defaults. */
static const struct fg_decoder_spec jais2 = {
    .d = {.vocab = 150272, .hidden = 3328, .inter = 26624, .layers = 32, .heads = 26,
          .max_pos = 8192, .tie = false},
    .norm = FG_NORM_LN, .bias_key = "attention_bias", .bias_default = true,
    .mlp_bias_key = "mlp_bias", .mlp_bias_default = true, .gated = false,
    .norms_per_layer = 2};
/* NanoChatForCausalLM (models/nanochat/modular_nanochat.py @06a60bac, nanochat-d32):
 * NanoChatRMSNorm is Llama4TextL2Norm, without weight, for the block, final and q/k norms;
 * q/k/v/o biased by attention_bias (qkv_bias in the first release); NanoChatMLP a plain
 * relu^2 fc / proj without bias; untied lm_head.  NanoChatConfig defaults
 * (configuration_nanochat.py @008e5743). */
static const struct fg_decoder_spec nanochat = {
    .d = {.vocab = 50304, .hidden = 768, .inter = 8192, .layers = 12, .heads = 6,
          .max_pos = 2048, .tie = false},
    .norm = FG_NORM_LN_NOPARAM, .bias_key = "attention_bias|qkv_bias", .gated = false,
    .norms_per_layer = 2};
/* PersimmonForCausalLM (models/persimmon/modeling_persimmon.py @00dcc6dd, Persimmon-8B,
 * Fuyu's text model): nn.LayerNorm with bias, query_key_value fused and dense, both biased,
 * q_layernorm / k_layernorm (LayerNorm over head_dim, with bias) when qk_layernorm (default
 * true), PersimmonMLP dense_h_to_4h / dense_4h_to_h with bias around relu^2; untied
 * lm_head without bias.  PersimmonConfig defaults. */
static const struct fg_decoder_spec persimmon = {
    .d = {.vocab = 262144, .hidden = 4096, .inter = 16384, .layers = 36, .heads = 64,
          .max_pos = 16384, .tie = false},
    .norm = FG_NORM_LN, .bias_default = true, .mlp_bias_default = true, .gated = false,
    .qk_norm = 1, .qk_norm_key = "qk_layernorm", .qk_norm_default = true,
    .norms_per_layer = 2, .fused_qkv = true};

/* DiffLlamaForCausalLM (models/diffllama/modular_diffllama.py @01ae98ae): DiffLlamaAttention
 * q/k/v/o biased by attention_bias plus lambda_q1, lambda_k1, lambda_q2, lambda_k2 (one
 * head_dim vector each) and a groupnorm without weight; MistralMLP; llama blocks.
 * DiffLlamaConfig defaults (configuration_diffllama.py). */
static const struct fg_decoder_spec diffllama = {
    .d = {.vocab = 32000, .hidden = 2048, .inter = 8192, .layers = 16, .heads = 32,
          .max_pos = 2048, .tie = false},
    .norm = FG_NORM_RMS, .bias_key = "attention_bias", .gated = true, .norms_per_layer = 2,
    .attn_head_vectors = 4};

const struct fg_arch fg__arch_decoder_table[] = {
#include "arch/decoder/llama_rows.def"
    {0},
};
