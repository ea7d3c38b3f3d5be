/*
 * arch_seq_mm.c - image-text models that embed image patches straight into a decoder or
 * run their own small vision tower, each read from its transformers modeling file
 * (huggingface/transformers):
 *
 *   fuyu  FuyuForCausalLM  models/fuyu/modeling_fuyu.py, configuration_fuyu.py (053f59ef)
 *                          over PersimmonModel (models/persimmon/modeling_persimmon.py)
 *
 * The image side is a node of the tower stack (FG_STACK_TOWER), as the vision-language
 * wrapper of arch_multimodal.c places its towers.
 */
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "util/fmt.h"

/*
 * PersimmonModel: embed_tokens, PersimmonDecoderLayer: input_layernorm, self_attn
 * (query_key_value hidden -> 3 x hidden and dense, both biased; q_layernorm / k_layernorm
 * LayerNorm(head_dim) when qk_layernorm), post_attention_layernorm, mlp dense_h_to_4h /
 * dense_4h_to_h (biased, relu2 between); final_layernorm.  PersimmonConfig defaults
 * (persimmon-8b, the shapes Fuyu-8B's text model has).
 */
static int persimmon_text(const struct fg_cfg *t, struct fg_model *m, struct fg_err *err)
{
    static const struct fg_core_defaults d = {.vocab = 262144, .hidden = 4096, .inter = 16384,
                                              .layers = 36, .heads = 64, .max_pos = 16384,
                                              .tie = false};
    bool qk_ln;
    int rc;
    if ((rc = fg__read_core(t, m, &d, err)) ||
        (rc = fg_cfg_bool(t, "qk_layernorm", true, &qk_ln, err)))
        return rc;
    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)))
        return rc;
    struct fg_attn_shape a = {.hidden = m->hidden, .heads = m->heads, .kv_heads = m->kv_heads,
                              .head_dim = m->head_dim, .qkv_bias = true, .o_bias = true,
                              .fused_qkv = true, .qk_norm = qk_ln ? 1 : 0,
                              .qk_norm_kind = FG_NORM_LN};
    struct fg_mlp_shape f = {.hidden = m->hidden, .inter = m->inter, .bias = true};
    size_t first = m->n_nodes;
    for (uint64_t l = 0; l < m->layers; l++) {
        int32_t li = (int32_t)l;
        if (l > 0 && fg__model_repeat_block(m, first, li, (uint32_t)(m->layers - l)))
            break;
        first = m->n_nodes;
        if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_LN, err)) ||
            (rc = fg__add_attention(m, li, &a, NULL, err)) ||
            (rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_LN, err)) ||
            (rc = fg__add_mlp(m, li, &f, NULL, err)))
            return rc;
    }
    return fg__add_norm(m, -1, "Final norm", m->hidden, FG_NORM_LN, err);
}

/*
 * FuyuForCausalLM = FuyuModel (vision_embed_tokens nn.Linear(patch_size^2 x num_channels,
 * hidden_size), biased: the whole image side; language_model AutoModel(text_config)) +
 * lm_head nn.Linear(text hidden, text vocab, bias=False), tied by tie_word_embeddings
 * (FuyuConfig default false).  FuyuConfig builds text_config from its own keys when the
 * config has none, and reads text_config.model_type (persimmon when absent).
 */
static int read_fuyu(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                     struct fg_err *err)
{
    (void)spec;
    struct fg_cfg text = *c;
    uint64_t patch, channels, image, hidden;
    const char *tt = NULL;
    bool tie;
    int rc;
    if (fg_cfg_has(c, "text_config") && !fg_cfg_child(c, "text_config", &text, err))
        return err ? err->code : FG_E_TYPE;
    if ((rc = fg_cfg_u64(c, "patch_size", 30, 1, 1u << 12, &patch, err)) ||
        (rc = fg_cfg_u64(c, "num_channels", 3, 1, 64, &channels, err)) ||
        (rc = fg_cfg_u64(c, "image_size", 300, 1, 1u << 16, &image, err)) ||
        (rc = fg_cfg_u64(c, "hidden_size", 4096, 1, FG_MAX_HIDDEN, &hidden, err)) ||
        (rc = fg_cfg_bool(c, "tie_word_embeddings", false, &tie, err)) ||
        (text.obj != c->obj && (rc = fg_cfg_str(&text, "model_type", "persimmon", &tt, err))))
        return rc;
    if (tt && strcmp(tt, "persimmon"))
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: key 'text_config.model_type' is '%s': "
                          "fitgate reads Fuyu over its Persimmon text model only", c->origin, tt);
    struct fg_node *n = fg__model_add(m, FG_NODE_VISION, -1, "Patch embedding", err);
    if (!n)
        return FG_E_NOMEM;
    n->stack = FG_STACK_TOWER;
    fg__node_linear(n, "patch", patch * patch * channels, hidden, 1, true);
    n->hidden = (uint32_t)(patch * patch * channels);
    n->width = (uint32_t)hidden;
    uint64_t side = image / patch;
    fg__fmt(n->desc, sizeof n->desc, "linear %llu -> %llu, %llu patches/image",
            (unsigned long long)(patch * patch * channels), (unsigned long long)hidden,
            (unsigned long long)(side * side));
    if ((rc = persimmon_text(&text, m, err)))
        return rc;
    if (hidden != m->hidden)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'hidden_size' = %llu differs from the text "
                          "model's %llu: the patch embedding feeds the text model directly",
                          c->origin, (unsigned long long)hidden, (unsigned long long)m->hidden);
    return fg__add_head(m, m->vocab, m->hidden, tie, false, false, err);
}

const struct fg_arch fg__arch_seq_mm_table[] = {
    {"fuyu", "fuyu (linear patch embedding + persimmon)", read_fuyu, NULL},
    {NULL, NULL, NULL, NULL},
};
