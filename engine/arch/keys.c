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

/* An encoder-decoder graph holds what is_encoder_decoder means: a reader for the class built
 * both stacks (Marian, BART, T5 ...) whatever the flag says. */
static bool built_enc_dec(const struct fg_model *m)
{
    return m->enc_dec;
}

/* The keys that change the stored shapes: keys.def, which says how they are chosen. */
static const struct fg__shape_key shape_keys[] = {
#define FG_SHAPE_KEY(k, kind, what, gen) {k, FG_SHAPE_##kind, what, gen, NULL},
#define FG_SHAPE_KEY_BUILT(k, kind, what, gen, built) {k, FG_SHAPE_##kind, what, gen, built},
#include "arch/keys.def"
#undef FG_SHAPE_KEY
#undef FG_SHAPE_KEY_BUILT
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

/* The sizes every family reader reads, under fg__read_core's alias lists (blocks.c). */
static const char *const core_sizes[] = {
    "vocab_size|padded_vocab_size|n_vocab",
    "hidden_size|n_embd|d_model|dim",
    "num_hidden_layers|n_layer|num_layers|n_layers",
    "num_attention_heads|n_head|num_heads|n_heads",
    "intermediate_size|n_inner|ffn_dim|ffn_hidden_size",
    "num_key_value_heads|n_head_kv|num_kv_heads",
    NULL,
};

void fg__family_check_remote_defaults(const struct fg_cfg *c, struct fg_model *m)
{
    const cJSON *map = fg__cfg_raw(c, "auto_map");
    const cJSON *cls = cJSON_IsObject(map) ? cJSON_GetObjectItemCaseSensitive(map, "AutoConfig")
                                           : NULL;
    if (!cJSON_IsString(cls) || !cls->valuestring)
        return;
    for (const char *const *k = core_sizes; *k && !fg_model_unsure_of_memory(m); k++) {
        const char *value = NULL;
        if (!fg_cfg_class_filled(c, *k, &value))
            continue;
        char key[64];
        fg__fmt(key, sizeof key, "%.*s", (int)strcspn(*k, "|"), *k);
        /* notes hold 159 bytes: the remote class is in config.json for whoever reads on */
        fg__model_unsure(m, key, "unsure: '%s' absent and auto_map names a remote config "
                         "class: %s's default %s is counted", key,
                         fg_config_class(m->model_type), value);
    }
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
