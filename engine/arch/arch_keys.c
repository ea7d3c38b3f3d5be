/*
 * arch_keys.c - the raw keys of a config as the generic reader meets them (arch_keys.h),
 * and the table of keys that mean structure it cannot size: each makes the count
 * FG_CERT_UNSURE with a note naming it, instead of being ignored.
 */
#include <string.h>

#include <cjson/cJSON.h>

#include "arch/arch_keys.h"

/* ---- keys that make the count unsure ---------------------------------------------------- */

/* A key whose presence (not null, false, 0, "" or empty) means structure this reader does not
 * size. */
struct unsure_key {
    const char *key;
    const char *what;
};

static const struct unsure_key unsure_keys[] = {
    {"vision_config", "a vision tower the generic reader does not size"},
    {"audio_config", "an audio tower the generic reader does not size"},
    {"speech_config", "a speech tower the generic reader does not size"},
    {"text_config", "a nested text model: the wrapper's other parts are not sized"},
    {"encoder_config", "a separate encoder the generic reader does not size"},
    {"decoder_config", "a separate decoder the generic reader does not size"},
    {"vision_tower", "a vision tower the generic reader does not size"},
    {"mm_vision_tower", "a vision tower the generic reader does not size"},
    {"is_encoder_decoder", "an encoder-decoder: the encoder stack is not sized"},
    {"encoder_layers", "an encoder-decoder: the encoder stack is not sized"},
    {"num_decoder_layers", "an encoder-decoder: the decoder stack is not sized"},
    /* AlbertTransformer: num_hidden_groups groups of inner_group_num layers are stored once
     * and run num_hidden_layers times */
    {"num_hidden_groups", "layer sharing: the checkpoint stores fewer layers than run"},
    {"inner_group_num", "layer sharing: the checkpoint stores fewer layers than run"},
    {"share_layers", "layer sharing: the checkpoint stores fewer layers than run"},
    {"shared_layers", "layer sharing: the checkpoint stores fewer layers than run"},
    {"num_shared_layers", "layer sharing: the checkpoint stores fewer layers than run"},
    {"linear_attn_config", "linear-attention layers the generic reader cannot size"},
    /* Qwen3NextConfig: every full_attention_interval-th layer attends, the others are gated
     * delta-net layers; JambaConfig: attention every attn_layer_period, Mamba-1 between */
    {"full_attention_interval", "linear-attention layers between the attention layers"},
    {"attn_layer_period", "Mamba layers between the attention layers"},
    {"cross_attention_layers", "cross-attention layers over another modality"},
    {"block_configs", "per-layer block shapes (DeciLM / Nemotron-NAS)"},
    /* Gemma3nTextConfig: per-layer input embeddings, AltUp, LAuReL, layers reusing another
     * layer's keys and values (and, in Gemma-4, double-wide MLPs on those) */
    {"hidden_size_per_layer_input", "per-layer input embeddings the generic reader does not size"},
    {"altup_num_inputs", "AltUp projections the generic reader does not size"},
    {"laurel_rank", "LAuReL blocks the generic reader does not size"},
    {"num_kv_shared_layers", "layers sharing keys and values: fewer projections are stored"},
    {"use_double_wide_mlp", "MLPs of two widths the generic reader does not place"},
    {"full_attn_idxs", "a per-layer mixer list whose other layers are not sized"},
    {"conv_L_cache", "short-convolution layers the generic reader does not size"},
    /* RecurrentGemmaConfig: RG-LRU recurrent blocks between the local-attention layers */
    {"lru_width", "RG-LRU recurrent blocks the generic reader does not size"},
    {"moe_latent_size", "experts over a latent projection the generic reader does not size"},
    {"index_n_heads", "a sparse-attention indexer the generic reader does not size"},
    {"word_embed_proj_dim", "an embedding projection the generic reader does not size"},
    {"num_mtp_modules", "multi-token-prediction modules of unknown shape"},
    {NULL, NULL},
};

/* Keys a family reader must have read for its count to stay exact: each, when set, adds or
 * removes stored tensors (another tower, MTP layers, experts, shared layers, a head).  A
 * reader that sizes one reads it; one it never asked for means a shape it did not build.
 * The generic reader's table above says why for most; the rest are MoE and head keys. */
static const char *const family_shape_keys[] = {
    "vision_config", "audio_config", "speech_config", "text_config", "encoder_config",
    "decoder_config", "vision_tower", "mm_vision_tower", "num_nextn_predict_layers",
    "mtp_num_hidden_layers", "num_mtp_modules", "cross_attention_layers", "num_hidden_groups",
    "inner_group_num", "full_attention_interval", "attn_layer_period", "block_configs",
    "hidden_size_per_layer_input", "altup_num_inputs", "laurel_rank", "num_kv_shared_layers",
    "index_n_heads", "word_embed_proj_dim", "moe_latent_size", "linear_attn_config",
    "num_experts", "num_local_experts", "n_routed_experts", "n_shared_experts",
    "moe_intermediate_size", "shared_expert_intermediate_size", "lm_head_bias",
    "tie_word_embeddings", NULL,
};

void fg__family_check_unread(const struct fg_cfg *c, struct fg_model *m)
{
    for (const char *const *k = family_shape_keys; *k; k++)
        if (!fg__cfg_was_read(c, *k) && fg__cfg_set_on(fg__cfg_item(c, *k)))
            fg__model_unsure(m, *k, "unsure: key '%s' can change the stored shapes and the %s "
                             "reader does not read it; the count may be off", *k, m->reader);
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
    for (const struct unsure_key *u = unsure_keys; u->key; u++)
        if (fg__cfg_set_on(fg__cfg_item(c, u->key)))
            fg__model_unsure(m, u->key, "unsure: key '%s' means %s; the count may be far off",
                             u->key, u->what);
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
