/*
 * generic.c - the reader for a model_type no family row knows.
 *
 * It builds what the structural keys recent families share describe, with the shapes of
 * the nearest transformers class, and says what it assumed (fg__model_assume).  A key it
 * meets that changes the structure but that it cannot size - sub-configs it does not read,
 * layer sharing, linear attention, expert keys it does not know - makes the count
 * FG_CERT_UNSURE with a note naming the key, instead of being ignored: for an admission gate
 * a confident wrong number is the worst answer.
 *
 * What it understands (each a table below, with the class it was read from):
 *   blocks     per-layer type lists (layer_types, layers_block_type, attn_type_list, the
 *              letters of hybrid_override_pattern): full / sliding attention, Mamba-2, and
 *              the MLP-only / MoE-only blocks of NemotronH (one norm + one mixer);
 *   attention  GQA / MQA (num_key_value_heads, multi_query), biases, multi-head latent
 *              attention (kv_lora_rank: DeepseekV3Attention);
 *   MLP        gated or plain by the activation; GELU / ReLU are used both ways, so they
 *              leave it unsure unless a key fixes the form (hidden_activation: GemmaMLP,
 *              ModernBertMLP are gated);
 *   experts    routed experts under their names, top-k, the expert width, shared experts
 *              (DeepSeek's n_shared_experts x width, Qwen's shared_expert_intermediate_size),
 *              dense-first layers (first_k_dense_replace, moe_layer_freq), sparse steps
 *              (decoder_sparse_step, mlp_only_layers);
 *   head       by the class in `architectures`: an LM head (tied by tie_word_embeddings,
 *              absent = tied, the PretrainedConfig default), none for a base / embedding
 *              model (*Model), a score head for classifiers; learned absolute positions and
 *              token types (BertEmbeddings) where the config says so.
 * The keys that make a count unsure are keys.c's table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "arch/keys.h"
#include "util/fmt.h"

/* ---- the MLP form ------------------------------------------------------------------------ */

enum form { FORM_GATED, FORM_PLAIN, FORM_EITHER };

/* Activations as configs spell them, and the MLP form they imply.  SiLU is the SwiGLU of
 * LlamaMLP and its descendants; GELU and ReLU are used both ways (GemmaMLP gated,
 * Starcoder2MLP / BertIntermediate plain), and so is ReLU^2 (NemotronMLP, ArceeMLP plain;
 * BitNetMLP, a GemmaMLP, gated). */
static const struct act_row {
    const char *name;
    enum form form;
} acts[] = {
    {"silu", FORM_GATED},      {"swish", FORM_GATED},     {"swiglu", FORM_GATED},
    {"geglu", FORM_GATED},     {"squared_relu", FORM_PLAIN},
    {NULL, FORM_EITHER},
};

/* Keys that fix the form whatever the activation: GemmaConfig / ModernBertConfig name it
 * hidden_activation, and GemmaMLP (gate_proj, up_proj) and ModernBertMLP (Wi of
 * 2 x intermediate_size) are both gated. */
static const char *const gated_keys[] = {"hidden_activation", NULL};

/* ... and the key NemotronHConfig names its MLP's activation by: NemotronHMLP is plain
 * (up_proj, down_proj) whatever it names. */
static const char *const plain_keys[] = {"mlp_hidden_act", NULL};

/* NemotronHConfig names the MLP's activation mlp_hidden_act (hidden_act is its Mamba's) */
#define ACT_KEYS "mlp_hidden_act|hidden_act|activation_function|activation|hidden_activation"

static int read_form(const struct fg_cfg *c, struct fg_model *m, const char *keys, bool *gated,
                     struct fg_err *err)
{
    const char *act = NULL;
    char used[64];
    int rc = fg_cfg_str(c, keys, NULL, &act, err);
    if (rc)
        return rc;
    *gated = true;
    if (!act) {
        fg__model_unsure(m, "hidden_act", "unsure: no activation key (hidden_act): the MLP "
                         "may be gated or plain; counted gated, the larger");
        return 0;
    }
    enum form f = FORM_EITHER;
    for (const struct act_row *a = acts; a->name; a++)
        if (!strcmp(a->name, act))
            f = a->form;
    for (const char *const *g = gated_keys; *g && f == FORM_EITHER; g++)
        if (fg_cfg_has(c, *g)) {
            f = FORM_GATED;
            fg__model_assume(m, "MLP gated: key '%s' (GemmaMLP / ModernBertMLP)", *g);
        }
    for (const char *const *p = plain_keys; *p && f == FORM_EITHER; p++)
        if (fg_cfg_has(c, *p)) {
            f = FORM_PLAIN;
            fg__model_assume(m, "MLP plain: key '%s' (NemotronHMLP)", *p);
        }
    if (f == FORM_EITHER) {
        fg__cfg_key_used(c, keys, used, sizeof used);
        fg__model_unsure(m, used, "unsure: %s '%s' is used by gated and plain MLPs alike; "
                         "counted gated, the larger, which may be a third too many", used, act);
        return 0;
    }
    *gated = f == FORM_GATED;
    return 0;
}

/* ---- per-layer kinds --------------------------------------------------------------------- */

enum gl_kind { GL_ATTN, GL_SLIDING, GL_MAMBA2, GL_MLP, GL_MOE, GL_LINEAR, GL_CONV, GL_UNKNOWN };

/* Layer kinds as the lists spell them: Gemma-2/3, Qwen3-Next and gpt-oss layer_types;
 * NemotronHConfig's pattern letters and layers_block_type; Jamba's layers_block_type. */
static const struct gl_name {
    const char *name;
    char letter;
    enum gl_kind kind;
} gl_names[] = {
    {"full_attention", '*', GL_ATTN},   {"attention", 0, GL_ATTN},
    {"global", 0, GL_ATTN},             {"sliding_attention", 0, GL_SLIDING},
    {"chunked_attention", 0, GL_SLIDING}, {"local", 0, GL_SLIDING},
    {"mamba", 'M', GL_MAMBA2},          {"mamba2", 0, GL_MAMBA2},
    {"mlp", '-', GL_MLP},               {"moe", 'E', GL_MOE},
    {"linear_attention", 0, GL_LINEAR}, {"conv", 0, GL_CONV},
    {NULL, 0, GL_UNKNOWN},
};

/* Lists of layer names, first present wins. */
#define LAYER_LIST_KEYS "layer_types|layers_block_type|block_types"

struct layers {
    enum gl_kind kind[FG_MAX_LAYERS];
    bool mixer_blocks;   /* NemotronHBlock: one norm + one mixer per layer */
};

static enum gl_kind kind_of(const char *s, char letter)
{
    for (const struct gl_name *g = gl_names; g->name; g++)
        if ((s && !strcmp(g->name, s)) || (!s && g->letter && g->letter == letter))
            return g->kind;
    return GL_UNKNOWN;
}

static void unsure_layer(struct fg_model *m, const char *key, size_t i, const char *what)
{
    char k[64];
    fg__fmt(k, sizeof k, "%s[%zu]", key, i);
    fg__model_unsure(m, k, "unsure: %s = '%s': a layer kind the generic reader cannot size "
                     "(read as attention)", k, what);
}

static int read_layers(const struct fg_cfg *c, struct fg_model *m, struct layers *L,
                       struct fg_err *err)
{
    uint64_t n = m->layers;
    for (uint64_t i = 0; i < n; i++)
        L->kind[i] = GL_ATTN;
    const char *names[FG_MAX_LAYERS], *pattern = NULL;
    size_t nn = 0;
    char key[64];
    int rc;
    if ((rc = fg_cfg_str(c, "hybrid_override_pattern", NULL, &pattern, err)))
        return rc;
    if (pattern) {
        /* NemotronHConfig: one letter per layer */
        if (strlen(pattern) != n)
            return fg_err_set(err, FG_E_RANGE, "%s: hybrid_override_pattern has %zu letters "
                              "for %llu layers", c->origin, strlen(pattern),
                              (unsigned long long)n);
        for (uint64_t i = 0; i < n; i++) {
            L->kind[i] = kind_of(NULL, pattern[i]);
            if (L->kind[i] == GL_UNKNOWN) {
                char what[2] = {pattern[i], 0};
                unsure_layer(m, "hybrid_override_pattern", i, what);
                L->kind[i] = GL_ATTN;
            }
        }
        L->mixer_blocks = true;
        fg__model_assume(m, "hybrid_override_pattern: one norm + one mixer per block "
                            "(NemotronHBlock)");
        return 0;
    }
    const cJSON *atl = fg__cfg_item(c, "attn_type_list");
    if (cJSON_IsArray(atl)) {
        /* MiniMaxText01Config: 1 softmax attention, 0 lightning (linear) attention */
        size_t i = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, atl) {
            if (i < n && !(cJSON_IsNumber(e) && e->valuedouble == 1))
                unsure_layer(m, "attn_type_list", i, "linear attention");
            i++;
        }
        return 0;
    }
    if (!fg_cfg_has(c, LAYER_LIST_KEYS))
        return 0;
    if ((rc = fg_cfg_str_array(c, LAYER_LIST_KEYS, names, FG_MAX_LAYERS, &nn, err)))
        return rc;
    fg__cfg_key_used(c, LAYER_LIST_KEYS, key, sizeof key);
    if (nn != n)
        return fg_err_set(err, FG_E_RANGE, "%s: %s has %zu entries for %llu layers", c->origin,
                          key, nn, (unsigned long long)n);
    for (size_t i = 0; i < nn; i++) {
        L->kind[i] = kind_of(names[i], 0);
        L->mixer_blocks |= L->kind[i] == GL_MLP || L->kind[i] == GL_MOE;
    }
    for (size_t i = 0; i < nn; i++)
        if (L->kind[i] == GL_LINEAR || L->kind[i] == GL_CONV || L->kind[i] == GL_UNKNOWN) {
            unsure_layer(m, key, i, names[i]);
            L->kind[i] = GL_ATTN;
        }
    if (L->mixer_blocks)
        fg__model_assume(m, "%s lists MLP / MoE layers: one norm + one mixer per block "
                            "(NemotronHBlock)", key);
    return 0;
}

/* ---- experts ----------------------------------------------------------------------------- */

#define EXPERTS_KEYS "num_experts|num_local_experts|n_routed_experts|moe_num_experts"
#define TOPK_KEYS "num_experts_per_tok|moe_topk|moe_top_k|experts_per_token|" \
                  "num_experts_per_token|moe_k|top_k"
#define EXPERT_WIDTH_KEYS "moe_intermediate_size|expert_intermediate_size|moe_ffn_hidden_size"
#define SHARED_N_KEYS "n_shared_experts|num_shared_experts|moe_num_shared_experts"
#define SHARED_WIDTH_KEYS "shared_expert_intermediate_size|moe_shared_expert_intermediate_size"

struct experts {
    uint64_t n, top_k, width, shared_width;
    bool gated;
    bool qwen_shared_gate;   /* Qwen2MoeSparseMoeBlock.shared_expert_gate */
    bool score_bias;         /* e_score_correction_bias (DeepSeek noaux_tc routing) */
    /* placement */
    uint64_t first_dense, freq, sparse_step;
    bool mlp_only[FG_MAX_LAYERS];
    bool freq_list[FG_MAX_LAYERS];
    bool have_freq_list;
};

/* Unsure (true) when the key of keys the config spells is not one number (a list per layer,
 * Hunyuan-A13B's moe_topk): what, of several sizes, the generic reader does not size. */
static bool unsure_unless_one_number(const struct fg_cfg *c, struct fg_model *m,
                                     const char *keys, const char *what)
{
    char key[64];
    enum fg_cfg_form f = fg_cfg_form(c, fg__cfg_key_used(c, keys, key, sizeof key), NULL);
    if (f == FG_CFG_ABSENT || f == FG_CFG_NUMBER || f == FG_CFG_NULL)
        return false;
    fg__model_unsure(m, key, "unsure: %s is not one number: %s of several sizes the generic "
                     "reader does not size", key, what);
    return true;
}

static int read_experts(const struct fg_cfg *c, struct fg_model *m, struct experts *x,
                        struct fg_err *err)
{
    int rc;
    char key[64];
    if (unsure_unless_one_number(c, m, EXPERTS_KEYS, "experts"))
        return 0;
    fg__cfg_key_used(c, EXPERTS_KEYS, key, sizeof key);
    double wide = 0;
    if (fg_cfg_form(c, key, NULL) == FG_CFG_NUMBER &&
        (rc = fg_cfg_f64(c, EXPERTS_KEYS, 0, 0, 1e18, &wide, err)))
        return rc;
    if (wide > FG_MAX_EXPERTS) {
        /* SmallDoge's releases carry num_experts 16384 (one-row embedding experts, and only
         * under is_moe): no count of MLP experts that wide is a count of the model */
        fg__model_unsure(m, key, "unsure: %s = %g is more experts than the generic reader "
                         "sizes (at most %u): experts of a kind it does not know, left out of "
                         "the count", key, wide, FG_MAX_EXPERTS);
        return 0;
    }
    if ((rc = fg_cfg_u64(c, EXPERTS_KEYS, 0, 0, FG_MAX_EXPERTS, &x->n, err)))
        return rc;
    if (x->n == 0)
        return 0;
    uint64_t shared_n = 0;
    /* a top-k per layer leaves it 0 (unsure below); a width per layer, intermediate_size */
    x->width = m->inter;
    if ((!unsure_unless_one_number(c, m, TOPK_KEYS, "top-k") &&
         (rc = fg_cfg_u64(c, TOPK_KEYS, 0, 0, FG_MAX_EXPERTS, &x->top_k, err))) ||
        (!unsure_unless_one_number(c, m, EXPERT_WIDTH_KEYS, "expert widths") &&
         (rc = fg_cfg_u64(c, EXPERT_WIDTH_KEYS, m->inter, 1, FG_MAX_INTER, &x->width, err))) ||
        (rc = fg_cfg_u64(c, SHARED_N_KEYS, 0, 0, FG_MAX_EXPERTS, &shared_n, err)) ||
        (rc = fg_cfg_u64(c, SHARED_WIDTH_KEYS, 0, 0, FG_MAX_INTER, &x->shared_width, err)))
        return rc;
    if (x->top_k == 0 || x->top_k > x->n) {
        fg__model_unsure(m, "num_experts_per_tok", "unsure: no usable top-k for %llu experts "
                         "(num_experts_per_tok): the active size is unknown",
                         (unsigned long long)x->n);
        x->top_k = x->top_k ? x->n : 1;
    }
    if (!fg_cfg_has(c, EXPERT_WIDTH_KEYS))
        fg__model_assume(m, "experts as wide as intermediate_size (MixtralSparseMoeBlock)");
    if (x->shared_width) {
        /* Qwen2MoeSparseMoeBlock: one shared MLP of that width behind shared_expert_gate */
        x->qwen_shared_gate = fg_cfg_has(c, "shared_expert_intermediate_size");
        fg__model_assume(m, "one shared expert of %llu%s", (unsigned long long)x->shared_width,
                         x->qwen_shared_gate ? " behind a 1-wide gate (Qwen2MoeSparseMoeBlock)"
                                             : "");
    } else if (shared_n) {
        /* DeepseekV3MoE: shared_experts is one MLP of moe_intermediate_size x n_shared */
        x->shared_width = shared_n * x->width;
        fg__model_assume(m, "%llu shared experts as one MLP of %llu (DeepseekV3MoE)",
                         (unsigned long long)shared_n, (unsigned long long)x->shared_width);
    }
    const char *method = NULL;
    if ((rc = fg_cfg_str(c, "topk_method", "", &method, err)))
        return rc;
    x->score_bias = !strcmp(method, "noaux_tc");

    /* placement: DeepseekV3DecoderLayer (and the V2 remote code) put experts on layers
     * >= first_k_dense_replace with layer % moe_layer_freq == 0; Qwen2MoeDecoderLayer on
     * layers not in mlp_only_layers with (layer + 1) % decoder_sparse_step == 0 */
    x->freq = 1;
    const cJSON *fq = fg__cfg_item(c, "moe_layer_freq");
    if (cJSON_IsArray(fq)) {
        size_t i = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, fq) {
            if (i < FG_MAX_LAYERS)
                x->freq_list[i] = fg__cfg_set_on(e);
            i++;
        }
        if (i != m->layers)
            return fg_err_set(err, FG_E_RANGE, "%s: moe_layer_freq has %zu entries for %llu "
                              "layers", c->origin, i, (unsigned long long)m->layers);
        x->have_freq_list = true;
    } else if ((rc = fg_cfg_u64(c, "moe_layer_freq", 1, 1, FG_MAX_LAYERS, &x->freq, err))) {
        return rc;
    }
    uint64_t only[FG_MAX_LAYERS];
    size_t n_only = 0;
    if ((rc = fg_cfg_u64(c, "first_k_dense_replace", 0, 0, FG_MAX_LAYERS, &x->first_dense,
                         err)) ||
        (rc = fg_cfg_u64(c, "decoder_sparse_step", 1, 1, FG_MAX_LAYERS, &x->sparse_step, err)) ||
        (rc = fg_cfg_u64_array(c, "mlp_only_layers", 0, FG_MAX_LAYERS - 1, only, FG_MAX_LAYERS,
                               &n_only, err)))
        return rc;
    for (size_t i = 0; i < n_only && i < FG_MAX_LAYERS; i++)
        x->mlp_only[only[i]] = true;
    m->experts = x->n;
    m->top_k = x->top_k;
    return 0;
}

static bool moe_layer(const struct experts *x, uint64_t l)
{
    if (x->n == 0 || x->mlp_only[l])
        return false;
    if (x->have_freq_list)
        return x->freq_list[l];
    return l >= x->first_dense && l % x->freq == 0 && (l + 1) % x->sparse_step == 0;
}

/*
 * One MoE node: router Linear(hidden, experts) (MixtralSparseMoeBlock.gate), experts of
 * gate/up/down (or up/down for a plain activation, NemotronHExperts), the shared expert as
 * one MLP, Qwen's shared_expert_gate Linear(hidden, 1), DeepSeek's e_score_correction_bias.
 */
static int add_moe(struct fg_model *m, int32_t layer, const struct experts *x,
                   struct fg_err *err)
{
    const struct fg_moe_shape ms = {
        .hidden = m->hidden, .experts = x->n, .top_k = x->top_k, .inter = x->width,
        .shared_inter = x->shared_width, .shared_n = 1, .gated = x->gated,
        .shared_gate = x->qwen_shared_gate, .score_bias = x->score_bias};
    struct fg_node *n;
    int rc;
    if ((rc = fg__add_moe(m, layer, &ms, &n, err)))
        return rc;
    fg__fmt(n->desc, sizeof n->desc, "%llu experts top-%llu, %llu wide%s",
             (unsigned long long)x->n, (unsigned long long)x->top_k,
             (unsigned long long)x->width, x->shared_width ? ", shared" : "");
    return 0;
}

/* ---- attention --------------------------------------------------------------------------- */

struct attn {
    struct fg_attn_shape gqa;
    uint64_t sliding;
    bool mla;
    uint64_t q_lora, kv_lora, nope, rope, v;
};

/* Multi-head latent attention (fg__add_mla). */
static int add_mla(struct fg_model *m, int32_t layer, const struct attn *a, struct fg_err *err)
{
    const struct fg_mla_shape s = {.hidden = m->hidden, .heads = m->heads, .q_lora = a->q_lora,
                                   .kv_lora = a->kv_lora, .nope = a->nope, .rope = a->rope,
                                   .v = a->v, .bias = a->gqa.qkv_bias};
    return fg__add_mla(m, layer, &s, NULL, err);
}

static int read_attn(const struct fg_cfg *c, struct fg_model *m, struct attn *a,
                     struct fg_err *err)
{
    int rc;
    bool bias = false, qk_norm = false, mq = false;
    if ((rc = fg_cfg_bool(c, "attention_bias|qkv_bias|use_qkv_bias|bias", false, &bias, err)) ||
        (rc = fg_cfg_bool(c, "use_qk_norm|qk_norm|qk_layernorm", false, &qk_norm, err)) ||
        (rc = fg_cfg_bool(c, "multi_query", false, &mq, err)) ||
        (rc = fg_cfg_u64(c, "sliding_window", 0, 0, FG_MAX_POS, &a->sliding, err)))
        return rc;
    /* FalconConfig / GPTBigCodeConfig: one key/value head */
    if (mq && !fg_cfg_has(c, "num_key_value_heads|num_kv_heads|n_head_kv"))
        m->kv_heads = 1;
    a->gqa = (struct fg_attn_shape){.hidden = m->hidden, .heads = m->heads,
                                    .kv_heads = m->kv_heads, .head_dim = m->head_dim,
                                    .qkv_bias = bias, .o_bias = bias, .qk_norm = qk_norm};
    if (!fg_cfg_has(c, "kv_lora_rank"))
        return 0;
    a->mla = true;
    if ((rc = fg_cfg_u64(c, "q_lora_rank", 0, 0, FG_MAX_HIDDEN, &a->q_lora, err)) ||
        (rc = fg_cfg_u64_req(c, "kv_lora_rank", 1, FG_MAX_HIDDEN, &a->kv_lora, err)) ||
        (rc = fg_cfg_u64_req(c, "qk_nope_head_dim", 1, 1u << 14, &a->nope, err)) ||
        (rc = fg_cfg_u64_req(c, "qk_rope_head_dim", 1, 1u << 14, &a->rope, err)) ||
        (rc = fg_cfg_u64(c, "v_head_dim", a->nope, 1, 1u << 14, &a->v, err)))
        return rc;
    if (!fg_cfg_has(c, "q_lora_rank"))
        fg__model_assume(m, "kv_lora_rank without q_lora_rank: one q_proj (DeepSeek-V2-Lite)");
    m->head_dim = a->nope + a->rope;
    m->kv_heads = m->heads;
    return 0;
}

/* ---- Mamba-2 ----------------------------------------------------------------------------- */

static int read_mamba2(const struct fg_cfg *c, struct fg_model *m, struct fg_mamba2_shape *s,
                       bool *ok, struct fg_err *err)
{
    int rc;
    *s = (struct fg_mamba2_shape){.hidden = m->hidden};
    *ok = fg_cfg_has(c, "mamba_num_heads") && fg_cfg_has(c, "mamba_head_dim") &&
          fg_cfg_has(c, "ssm_state_size|mamba_d_state");
    if (!*ok) {
        fg__model_unsure(m, "mamba_num_heads", "unsure: Mamba layers without the Mamba-2 sizes "
                         "(mamba_num_heads, mamba_head_dim, ssm_state_size) the generic reader "
                         "reads (read as attention)");
        return 0;
    }
    if ((rc = fg_cfg_u64(c, "mamba_num_heads", 0, 1, FG_MAX_HEADS, &s->heads, err)) ||
        (rc = fg_cfg_u64(c, "mamba_head_dim", 0, 1, 1u << 14, &s->head_dim, err)) ||
        (rc = fg_cfg_u64(c, "n_groups|mamba_n_groups", 1, 1, FG_MAX_HEADS, &s->groups, err)) ||
        (rc = fg_cfg_u64(c, "ssm_state_size|mamba_d_state", 0, 1, 1u << 14, &s->state, err)) ||
        (rc = fg_cfg_u64(c, "conv_kernel|mamba_d_conv", 4, 1, 1024, &s->kernel, err)) ||
        (rc = fg_cfg_u64(c, "chunk_size|mamba_chunk_size", 256, 1, FG_MAX_POS, &s->chunk,
                         err)) ||
        (rc = fg_cfg_bool(c, "use_conv_bias|mamba_conv_bias", true, &s->conv_bias, err)) ||
        (rc = fg_cfg_bool(c, "mamba_proj_bias|use_bias", false, &s->proj_bias, err)))
        return rc;
    fg__model_assume(m, "Mamba layers as NemotronHMamba2Mixer / Mamba2Mixer");
    return 0;
}

/* ---- head -------------------------------------------------------------------------------- */

enum head { HEAD_LM, HEAD_NONE, HEAD_SCORE };

/* The class name's ending in `architectures`, in order (LMHeadModel before Model). */
static const struct head_row {
    const char *suffix;
    enum head head;
    bool encoder;        /* a bidirectional encoder (BertForMaskedLM) */
} heads[] = {
    {"ForCausalLM", HEAD_LM, false},
    {"LMHeadModel", HEAD_LM, false},
    {"ForConditionalGeneration", HEAD_LM, false},
    {"ForMaskedLM", HEAD_LM, true},
    {"ForSequenceClassification", HEAD_SCORE, false},
    {"ForTokenClassification", HEAD_SCORE, false},
    {"Model", HEAD_NONE, false},
    {NULL, HEAD_LM, false},
};

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

static int read_head(const struct fg_cfg *c, struct fg_model *m, const struct head_row **out,
                     struct fg_err *err)
{
    const char *names[4];
    size_t n = 0;
    int rc = fg_cfg_str_array(c, "architectures", names, 4, &n, err);
    if (rc)
        return rc;
    *out = &heads[sizeof heads / sizeof heads[0] - 1];
    if (n == 0) {
        fg__model_assume(m, "no architectures: an LM head");
        return 0;
    }
    for (const struct head_row *h = heads; h->suffix; h++)
        if (ends_with(names[0], h->suffix)) {
            *out = h;
            if (h->head == HEAD_NONE)
                fg__model_assume(m, "%s: a base / embedding model, no LM head", names[0]);
            return 0;
        }
    fg__model_assume(m, "%s: an LM head", names[0]);
    return 0;
}

/* ---- the reader -------------------------------------------------------------------------- */

struct generic {
    struct layers layers;
    struct experts x;
    struct attn a;
    struct fg_mamba2_shape mamba;
    bool mamba_ok;
    bool gated;
};

static int add_ffn(struct fg_model *m, int32_t l, const struct generic *g, bool moe,
                   struct fg_err *err)
{
    if (moe)
        return add_moe(m, l, &g->x, err);
    struct fg_mlp_shape f = {.hidden = m->hidden, .inter = m->inter, .gated = g->gated};
    return fg__add_mlp(m, l, &f, NULL, err);
}

static int add_mixer(struct fg_model *m, int32_t l, const struct generic *g, enum gl_kind k,
                     struct fg_err *err)
{
    if (k == GL_MAMBA2 && g->mamba_ok)
        return fg__add_mamba2(m, l, &g->mamba, err);
    if (g->a.mla)
        return add_mla(m, l, &g->a, err);
    struct fg_attn_shape s = g->a.gqa;
    s.window = k == GL_SLIDING ? g->a.sliding : 0;
    return fg__add_attention(m, l, &s, NULL, err);
}

/* LlamaForSequenceClassification.score: Linear(hidden, num_labels, bias=False). */
static int add_score_head(const struct fg_cfg *c, struct fg_model *m, struct fg_err *err)
{
    uint64_t nl;
    int rc = fg__read_num_labels(c, &nl, err);
    if (rc)
        return rc;
    struct fg_node *n = fg__model_add(m, FG_NODE_HEAD, -1, "Score head", err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "score", m->hidden, nl, 1, false);
    n->hidden = (uint32_t)m->hidden;
    n->width = (uint32_t)nl;
    fg__fmt(n->desc, sizeof n->desc, "%llu x %llu", (unsigned long long)m->hidden,
            (unsigned long long)nl);
    return 0;
}

static int build(const struct fg_cfg *c, struct fg_model *m, struct generic *g,
                 struct fg_err *err)
{
    int rc;
    const struct head_row *head;
    const char *pos = NULL;
    uint64_t types = 0, pad = 0, nextn = 0;
    bool causal = true;
    /* A list of token-type table sizes (TAPAS writes type_vocab_size as one, beside
     * type_vocab_sizes) is a set of embedding tables the generic reader does not size. */
    if (fg_cfg_form(c, "type_vocab_size", NULL) == FG_CFG_LIST)
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: key 'type_vocab_size' is a list of "
                          "token-type table sizes, which the generic reader does not size",
                          c->origin);
    if ((rc = read_head(c, m, &head, err)) || (rc = read_layers(c, m, &g->layers, err)) ||
        (rc = read_attn(c, m, &g->a, err)) || (rc = read_form(c, m, ACT_KEYS, &g->gated, err)) ||
        (rc = read_experts(c, m, &g->x, err)) ||
        (rc = fg_cfg_bool(c, "causal|is_causal", true, &causal, err)) ||
        (rc = fg_cfg_str(c, "position_embedding_type", "", &pos, err)) ||
        (rc = fg_cfg_u64(c, "type_vocab_size", 0, 0, 1u << 20, &types, err)) ||
        (rc = fg_cfg_u64(c, "pad_vocab_size_multiple", 0, 0, 1u << 16, &pad, err)) ||
        (rc = fg_cfg_u64(c, "num_nextn_predict_layers", 0, 0, 16, &nextn, err)))
        return rc;
    g->x.gated = g->gated;
    for (uint64_t l = 0; l < m->layers && !g->x.n; l++)
        if (g->layers.kind[l] == GL_MOE) {
            fg__model_unsure(m, "num_experts", "unsure: layer %llu is a MoE layer but no experts "
                             "key (num_experts, n_routed_experts...) sizes it (read as an MLP)",
                             (unsigned long long)l);
            break;
        }
    bool mamba = false;
    for (uint64_t l = 0; l < m->layers && !mamba; l++)
        mamba = g->layers.kind[l] == GL_MAMBA2;
    if (mamba && (rc = read_mamba2(c, m, &g->mamba, &g->mamba_ok, err)))
        return rc;
    /* Mamba sizes but no layer list placing Mamba layers: they would be left out */
    const cJSON *it;
    cJSON_ArrayForEach(it, c->obj) {
        if (!mamba && it->string && fg__cfg_set_on(it) &&
            (strstr(it->string, "mamba") || !strcmp(it->string, "ssm_state_size"))) {
            fg__model_unsure(m, it->string, "unsure: key '%s' sizes Mamba layers, but no layer "
                             "list says which layers they are", it->string);
            break;
        }
    }
    if (fg_cfg_has(c, "quantization_config"))
        fg__model_assume(m, "quantization_config: weights counted unquantized, scales not "
                            "counted");
    if (!fg_cfg_has(c, "tie_word_embeddings") && head->head == HEAD_LM)
        fg__model_assume(m, "tie_word_embeddings absent: tied (the PretrainedConfig default)");
    if (pad > 1 && m->vocab % pad) {
        /* NomicBertConfig / GPT-NeoX: the embedding rows are padded up to the multiple */
        m->vocab += pad - m->vocab % pad;
        fg__model_assume(m, "vocabulary padded to %llu (pad_vocab_size_multiple)",
                         (unsigned long long)m->vocab);
    }
    fg__model_assume(m, "RMSNorm, pre-norm blocks (LlamaDecoderLayer)");

    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)))
        return rc;
    /* BertEmbeddings: learned absolute positions and token types */
    if (!strcmp(pos, "absolute") &&
        (rc = fg__add_table(m, FG_NODE_POS_EMBED, "Position embedding", m->max_pos, m->hidden,
                            NULL, err)))
        return rc;
    if (types && (rc = fg__add_table(m, FG_NODE_POS_EMBED, "Token type embedding", types,
                                     m->hidden, NULL,
                                err)))
        return rc;
    for (uint64_t l = 0; l < m->layers; l++) {
        int32_t li = (int32_t)l;
        enum gl_kind k = g->layers.kind[l];
        if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)))
            return rc;
        if (g->layers.mixer_blocks) {
            rc = k == GL_MLP || k == GL_MOE ? add_ffn(m, li, g, k == GL_MOE && g->x.n, err)
                                            : add_mixer(m, li, g, k, err);
            if (rc)
                return rc;
            continue;
        }
        if ((rc = add_mixer(m, li, g, k, err)) ||
            (rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)) ||
            (rc = add_ffn(m, li, g, moe_layer(&g->x, l), err)))
            return rc;
    }
    if ((rc = fg__add_norm(m, -1, "Final norm", m->hidden, FG_NORM_RMS, err)))
        return rc;
    /* a bidirectional encoder: BertForMaskedLM, or a base model with BERT's token types or
     * an explicit causal: false (NomicBertConfig) */
    if (head->encoder || (head->head == HEAD_NONE && (types || !causal)))
        m->encoder_only = true;
    if (head->head == HEAD_LM && (rc = fg__add_head(m, m->vocab, m->hidden, m->tied, false,
                                                    false, err)))
        return rc;
    if (head->head == HEAD_SCORE && (rc = add_score_head(c, m, err)))
        return rc;
    if (nextn) {
        /* deepseek-ai/DeepSeek-V3's weights README: each multi-token-prediction module is one more
         * block stored as model.layers.<num_hidden_layers + i>, with enorm, hnorm, eh_proj
         * (2 x hidden -> hidden) and a shared_head norm; assumed to repeat the last block.
         * Its checkpoint (and GLM-4.5's, GLM-4.7-Flash's) also stores the module's own
         * embed_tokens and shared_head.head: counted too (GLM-5's holds none) */
        uint64_t last = 0;
        for (size_t i = 0; i < m->n_nodes; i++)
            if (m->nodes[i].layer == (int32_t)m->layers - 1)
                last += m->nodes[i].params;
        int64_t s = (int64_t)(nextn * (last + 2 * m->hidden * m->hidden + 3 * m->hidden +
                                       2 * m->vocab * m->hidden));
        fg__model_rule(m, "multi-token-prediction blocks stored in the checkpoint", s);
        fg__model_assume(m, "num_nextn_predict_layers=%llu: stored blocks like the last one, "
                         "each with its own embed_tokens and shared_head.head",
                         (unsigned long long)nextn);
    }
    return 0;
}

/*
 * Unknown model_type: the standard keys must be there (without them the count would be a
 * guess: FG_E_MISSING naming the key); everything else as the top of this file says.
 */
int fg__arch_read_generic(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                          struct fg_err *err)
{
    (void)spec;
    int rc;
    uint64_t v;
    m->generic = true;
    if (m->certainty != FG_CERT_UNSURE)
        m->certainty = FG_CERT_GENERIC;
    if ((rc = fg_cfg_u64_req(c, "hidden_size|n_embd|d_model", 1, FG_MAX_HIDDEN, &v, err)) ||
        (rc = fg_cfg_u64_req(c, "num_hidden_layers|n_layer|num_layers", 1, FG_MAX_LAYERS, &v,
                             err)) ||
        (rc = fg_cfg_u64_req(c, "num_attention_heads|n_head", 1, FG_MAX_HEADS, &v, err)) ||
        (rc = fg_cfg_u64_req(c, "vocab_size", 1, FG_MAX_VOCAB, &v, err)))
        return rc;
    struct fg_core_defaults d = {.max_pos = 2048, .tie = true};
    /* latent attention's heads are qk_nope_head_dim + qk_rope_head_dim wide, whatever
     * hidden / heads is (GLM-4.7-Flash: 2048 over 20 heads) */
    uint64_t nope = 0, rope = 0;
    if (fg_cfg_has(c, "kv_lora_rank") &&
        ((rc = fg_cfg_u64(c, "qk_nope_head_dim", 0, 0, 1u << 14, &nope, err)) ||
         (rc = fg_cfg_u64(c, "qk_rope_head_dim", 0, 0, 1u << 14, &rope, err))))
        return rc;
    d.head_dim = nope + rope;
    if ((rc = fg__read_core(c, m, &d, err)))
        return rc;
    struct generic *g = calloc(1, sizeof *g);
    if (!g)
        return fg_err_set(err, FG_E_NOMEM, "out of memory");
    fg__generic_check_unsure(c, m);
    rc = build(c, m, g, err);
    free(g);
    return rc;
}
