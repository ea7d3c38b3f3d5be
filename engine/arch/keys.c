/*
 * keys.c - the raw keys of a config as the generic reader meets them (keys.h),
 * and the table of keys that mean structure it cannot size: each makes the count
 * FG_CERT_UNSURE with a note naming it, instead of being ignored.
 */
#include <pthread.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "arch/keys.h"
#include "util/fmt.h"

/* ---- keys that change the stored shapes ------------------------------------------------ */

/*
 * Every key whose presence (not null, false, 0, "" or empty; for layer_types, a layer kind
 * other than attention) adds, removes or reshapes stored tensors: another tower, MTP layers,
 * experts and where they sit, layer sharing, per-layer blocks, a bias or norm, the head.
 * A family reader that sizes one reads it (or reads it to decide it changes nothing, which
 * counts as reading it); one it never asked for, at the root or in a sub-config it entered,
 * means a shape it did not build, and its count is unsure, naming the key
 * (fg__family_check_unread).  Rows with a `generic` text also make the generic reader
 * unsure, with that text: structure it never sizes.
 *
 * Left out, with the reason: num_labels / id2label (a score head only a task class builds,
 * and every config carries them), sliding_window / rope_scaling / partial_rotary_factor
 * (no stored tensor), head_dim / hidden_size / num_hidden_layers and their aliases (every
 * reader reads them: fg__read_core).
 */
/* An encoder-decoder graph holds what is_encoder_decoder means: a reader for the class built
 * both stacks (Marian, BART, T5 ...) whatever the flag says. */
static bool built_enc_dec(const struct fg_model *m)
{
    return m->enc_dec;
}

static const struct fg__shape_key shape_keys[] = {
#define ROW(k, kind, what, gen) {k, FG_SHAPE_##kind, what, gen, NULL}
    ROW("vision_config", CONFIG, "a vision tower",
        "a vision tower the generic reader does not size"),
    ROW("audio_config", CONFIG, "an audio tower",
        "an audio tower the generic reader does not size"),
    ROW("speech_config", CONFIG, "a speech tower",
        "a speech tower the generic reader does not size"),
    ROW("text_config", CONFIG, "a nested text model",
        "a nested text model: the wrapper's other parts are not sized"),
    ROW("encoder_config", CONFIG, "a separate encoder",
        "a separate encoder the generic reader does not size"),
    ROW("decoder_config", CONFIG, "a separate decoder",
        "a separate decoder the generic reader does not size"),
    ROW("vision_tower", NAME, "a vision tower named by the config",
        "a vision tower the generic reader does not size"),
    ROW("mm_vision_tower", NAME, "a vision tower named by the config",
        "a vision tower the generic reader does not size"),
    ROW("perceiver_config", CONFIG, "a perceiver resampler", NULL),
    ROW("qformer_config", CONFIG, "a Q-Former between the towers", NULL),
    ROW("vq_config", CONFIG, "an image tokenizer (VQ-VAE)", NULL),
    {"is_encoder_decoder", FG_SHAPE_FLAG, "an encoder-decoder",
     "an encoder-decoder: the encoder stack is not sized", built_enc_dec},
    ROW("encoder_layers", COUNT, "an encoder stack",
        "an encoder-decoder: the encoder stack is not sized"),
    ROW("num_decoder_layers", COUNT, "a decoder stack of its own depth",
        "an encoder-decoder: the decoder stack is not sized"),
    ROW("add_cross_attention", FLAG, "cross-attention in every decoder layer", NULL),
    /* AlbertTransformer: num_hidden_groups groups of inner_group_num layers are stored once
     * and run num_hidden_layers times */
    ROW("num_hidden_groups", COUNT, "layer groups stored once and run many times",
        "layer sharing: the checkpoint stores fewer layers than run"),
    ROW("inner_group_num", COUNT, "layers per shared group",
        "layer sharing: the checkpoint stores fewer layers than run"),
    ROW("share_layers", FLAG, "layer sharing",
        "layer sharing: the checkpoint stores fewer layers than run"),
    ROW("shared_layers", COUNT, "layer sharing",
        "layer sharing: the checkpoint stores fewer layers than run"),
    ROW("num_shared_layers", COUNT, "layer sharing",
        "layer sharing: the checkpoint stores fewer layers than run"),
    ROW("linear_attn_config", CONFIG, "linear-attention layers",
        "linear-attention layers the generic reader cannot size"),
    /* Qwen3NextConfig: every full_attention_interval-th layer attends, the others are gated
     * delta-net layers; JambaConfig: attention every attn_layer_period, Mamba-1 between */
    ROW("full_attention_interval", COUNT, "linear-attention layers between attention layers",
        "linear-attention layers between the attention layers"),
    ROW("attn_layer_period", COUNT, "Mamba layers between attention layers",
        "Mamba layers between the attention layers"),
    ROW("cross_attention_layers", LIST, "cross-attention layers over another modality",
        "cross-attention layers over another modality"),
    ROW("layer_types", LAYER_KINDS, "per-layer mixers other than attention", NULL),
    ROW("block_configs", LIST, "per-layer block shapes (DeciLM / Nemotron-NAS)",
        "per-layer block shapes (DeciLM / Nemotron-NAS)"),
    /* Gemma3nTextConfig: per-layer input embeddings, AltUp, LAuReL, layers reusing another
     * layer's keys and values (and, in Gemma-4, double-wide MLPs on those) */
    ROW("hidden_size_per_layer_input", COUNT, "per-layer input embeddings",
        "per-layer input embeddings the generic reader does not size"),
    ROW("altup_num_inputs", COUNT, "AltUp projections",
        "AltUp projections the generic reader does not size"),
    ROW("laurel_rank", COUNT, "LAuReL blocks", "LAuReL blocks the generic reader does not size"),
    ROW("num_kv_shared_layers", COUNT, "layers sharing keys and values",
        "layers sharing keys and values: fewer projections are stored"),
    ROW("use_double_wide_mlp", FLAG, "MLPs of two widths",
        "MLPs of two widths the generic reader does not place"),
    ROW("full_attn_idxs", LIST, "a per-layer mixer list",
        "a per-layer mixer list whose other layers are not sized"),
    ROW("conv_L_cache", COUNT, "short-convolution layers",
        "short-convolution layers the generic reader does not size"),
    /* RecurrentGemmaConfig: RG-LRU recurrent blocks between the local-attention layers */
    ROW("lru_width", COUNT, "RG-LRU recurrent blocks",
        "RG-LRU recurrent blocks the generic reader does not size"),
    ROW("moe_latent_size", COUNT, "experts over a latent projection",
        "experts over a latent projection the generic reader does not size"),
    ROW("index_n_heads", COUNT, "a sparse-attention indexer",
        "a sparse-attention indexer the generic reader does not size"),
    ROW("word_embed_proj_dim", COUNT, "an embedding projection",
        "an embedding projection the generic reader does not size"),
    ROW("embedding_size", COUNT, "a factorised embedding width", NULL),
    ROW("type_vocab_size", COUNT, "token-type embeddings", NULL),
    /* multi-token prediction: DeepseekV3Config / Glm4MoeConfig num_nextn_predict_layers,
     * Qwen3NextConfig / Qwen3_5MoeTextConfig mtp_num_hidden_layers, MiniMax-M2
     * num_mtp_modules: layers the checkpoint stores beside the stack */
    ROW("num_nextn_predict_layers", COUNT, "multi-token-prediction layers", NULL),
    ROW("mtp_num_hidden_layers", COUNT, "multi-token-prediction layers", NULL),
    ROW("num_mtp_modules", COUNT, "multi-token-prediction modules",
        "multi-token-prediction modules of unknown shape"),
    /* experts: how many, how wide, where (the generic reader sizes these) */
    ROW("num_experts", COUNT, "routed experts", NULL),
    ROW("num_local_experts", COUNT, "routed experts", NULL),
    ROW("n_routed_experts", COUNT, "routed experts", NULL),
    ROW("moe_num_experts", COUNT, "routed experts", NULL),
    ROW("n_shared_experts", COUNT, "shared experts", NULL),
    ROW("num_shared_experts", COUNT, "shared experts", NULL),
    ROW("moe_intermediate_size", COUNT, "the experts' width", NULL),
    ROW("shared_expert_intermediate_size", COUNT, "the shared expert's width", NULL),
    ROW("first_k_dense_replace", COUNT, "dense layers before the expert layers", NULL),
    ROW("mlp_only_layers", LIST, "dense layers among the expert layers", NULL),
    ROW("decoder_sparse_step", COUNT, "expert layers every n-th layer", NULL),
    ROW("moe_layer_freq", COUNT, "expert layers every n-th layer", NULL),
    /* multi-head latent attention (DeepseekV2Attention) */
    ROW("kv_lora_rank", COUNT, "latent key/value projections", NULL),
    ROW("q_lora_rank", COUNT, "a latent query projection", NULL),
    /* biases, norms and the head */
    ROW("attention_bias", FLAG, "biases on the attention projections", NULL),
    ROW("mlp_bias", FLAG, "biases on the MLP projections", NULL),
    ROW("use_qkv_bias", FLAG, "q/k/v biases", NULL),
    ROW("qkv_bias", FLAG, "q/k/v biases", NULL),
    ROW("add_bias_linear", FLAG, "biases on every linear layer", NULL),
    ROW("use_qk_norm", FLAG, "q/k norms", NULL),
    ROW("qk_layernorm", FLAG, "q/k norms", NULL),
    ROW("lm_head_bias", FLAG, "a bias on the LM head", NULL),
    ROW("tie_word_embeddings", FLAG, "the LM head tied to the embedding", NULL),
#undef ROW
};

#define N_SHAPE_KEYS (sizeof shape_keys / sizeof shape_keys[0])

const struct fg__shape_key *fg__shape_key_at(size_t i)
{
    return i < N_SHAPE_KEYS ? &shape_keys[i] : NULL;
}

/* Layer kinds that are attention of one shape or another (sliding, chunked, full): a
 * layer_types list of only these changes no stored tensor. */
static const char *const attention_kinds[] = {"full_attention", "sliding_attention",
                                              "chunked_attention", "attention", NULL};

static bool listed(const char *const *list, const char *key);

/* Does v, the value of a key of this kind, switch its structure on? */
static bool shape_key_on(const struct fg__shape_key *k, const cJSON *v)
{
    if (k->kind != FG_SHAPE_LAYER_KINDS || !cJSON_IsArray(v))
        return fg__cfg_set_on(v);
    const cJSON *e;
    cJSON_ArrayForEach(e, v)
        if (!cJSON_IsString(e) || !listed(attention_kinds, e->valuestring))
            return true;
    return false;
}

/* The table's key codes (fg__cfg_key_code), computed once: hashing 70-odd names for every
 * view of every config was a tenth of a graph build (bench_plan graph-from-text). */
static uint64_t key_codes[N_SHAPE_KEYS];
static pthread_once_t key_codes_once = PTHREAD_ONCE_INIT;

static void compute_key_codes(void)
{
    for (size_t i = 0; i < N_SHAPE_KEYS; i++)
        key_codes[i] = fg__cfg_key_code(shape_keys[i].key);
}

/* The check of one view (the root or a sub-config the reader entered), then of the
 * sub-configs it entered below it. */
static void check_unread(const struct fg_cfg *c, struct fg_model *m, unsigned depth)
{
    /* a count unsure of the stored head alone is still checked: a shape it lacks is worse */
    for (size_t i = 0; i < N_SHAPE_KEYS && !fg_model_unsure_of_memory(m); i++) {
        const struct fg__shape_key *k = &shape_keys[i];
        const cJSON *v = fg__cfg_unread(c, k->key, key_codes[i]);
        if (!v || !shape_key_on(k, v) || (k->built && k->built(m)))
            continue;
        char key[128];
        fg__fmt(key, sizeof key, "%s%s%s", c->scope, *c->scope ? "." : "", k->key);
        fg__model_unsure(m, key, "unsure: key '%s' (%s) is not read by the %s reader; the "
                         "count may be off", key, k->what, m->reader);
    }
    struct fg_cfg child;
    size_t pos = 0;
    while (depth > 1 && !fg_model_unsure_of_memory(m) &&
           fg__cfg_next_read_child(c, &pos, &child))
        check_unread(&child, m, depth - 1);
}

void fg__family_check_unread(const struct fg_cfg *c, struct fg_model *m)
{
    pthread_once(&key_codes_once, compute_key_codes);
    check_unread(c, m, 3);
}

/* Parts of key names that name structure (experts, other modalities): a key holding one
 * that the reader does not list in `understood` makes the count unsure. */
static const char *const structural_words[] = {"expert", "moe", "vision", "audio", "image",
                                               "video", "speech", "linear_", NULL};

/* Keys with those words that the reader sizes, or that do not change the stored tensors
 * (loss coefficients, kernels, dispatch). */
static const char *const understood[] = {
    "num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts",
    "num_experts_per_tok", "moe_topk", "moe_top_k", "experts_per_token",
    "num_experts_per_token", "moe_k", "moe_intermediate_size", "expert_intermediate_size",
    "moe_ffn_hidden_size", "n_shared_experts", "num_shared_experts", "moe_num_shared_experts",
    "shared_expert_intermediate_size", "moe_shared_expert_intermediate_size", "moe_layer_freq",
    "moe_aux_loss_coef", "moe_aux_loss_coeff", "moe_z_loss_coeff", "moe_impl",
    "moe_resid_pdrop", "moe_normalize_expert_weights", "moe_router_dtype", "moe_jitter_eps",
    "moe_token_dispatcher_type", NULL,
};

bool fg__cfg_set_on(const cJSON *v)
{
    if (!v || cJSON_IsNull(v) || cJSON_IsFalse(v))
        return false;
    if (cJSON_IsNumber(v))
        return v->valuedouble != 0;
    if (cJSON_IsString(v))
        return v->valuestring && v->valuestring[0];
    if (cJSON_IsArray(v) || cJSON_IsObject(v))
        return v->child != NULL;
    return true;
}

static bool listed(const char *const *list, const char *key)
{
    for (; *list; list++)
        if (!strcmp(*list, key))
            return true;
    return false;
}

void fg__generic_check_unsure(const struct fg_cfg *c, struct fg_model *m)
{
    for (size_t i = 0; i < N_SHAPE_KEYS; i++)
        if (shape_keys[i].generic && fg__cfg_set_on(fg__cfg_item(c, shape_keys[i].key)))
            fg__model_unsure(m, shape_keys[i].key, "unsure: key '%s' means %s; the count may "
                             "be far off", shape_keys[i].key, shape_keys[i].generic);
    /* ALBERT / ELECTRA factorised embeddings: a projection the reader does not build */
    const cJSON *e = fg__cfg_item(c, "embedding_size");
    if (cJSON_IsNumber(e) && e->valuedouble != (double)m->hidden)
        fg__model_unsure(m, "embedding_size", "unsure: key 'embedding_size' = %g differs from "
                         "the hidden size %llu: a factorised embedding the generic reader does "
                         "not build", e->valuedouble, (unsigned long long)m->hidden);
    const cJSON *k;
    cJSON_ArrayForEach(k, c->obj) {
        if (!k->string || listed(understood, k->string) || !fg__cfg_set_on(k))
            continue;
        for (const char *const *w = structural_words; *w; w++)
            if (strstr(k->string, *w)) {
                fg__model_unsure(m, k->string, "unsure: key '%s' names %s structure the "
                                 "generic reader does not understand", k->string, *w);
                break;
            }
    }
}
