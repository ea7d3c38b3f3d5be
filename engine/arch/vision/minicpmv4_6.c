/*
 * minicpmv4_6.c - MiniCPM-V 4.6, MiniCPMV4_6ForConditionalGeneration, read from
 * huggingface/transformers@decba1d2ea models/minicpmv4_6/modeling_minicpmv4_6.py and
 * configuration_minicpmv4_6.py:
 *
 *   vision_tower    MiniCPMV4_6VisionModel, a SigLIP tower for native resolutions:
 *                   embeddings.patch_embedding Conv2d(num_channels, hidden, patch) with bias,
 *                   position_embedding of (image_size // patch_size)^2 rows (looked up by
 *                   nearest position); num_hidden_layers encoder layers of layer_norm1 /
 *                   layer_norm2 (LayerNorm), q / k / v / out_proj and fc1 / fc2, all biased;
 *                   post_layernorm; vit_merger (MiniCPMV4_6ViTWindowAttentionMerger, run after
 *                   layer insert_layer_id): self_attn as a layer's, layer_norm1, pre_norm over
 *                   window_hidden_size = hidden x window_kernel_size[0] x [1], linear_1 to
 *                   window_intermediate_size = intermediate_size x the same, linear_2 back to
 *                   hidden, both biased.
 *   merger          MiniCPMV4_6Merger: merger_times MiniCPMV4_6DownsampleMLP of pre_norm
 *                   LayerNorm(4 x hidden), linear_1 4h -> 4h and linear_2 4h -> out, biased;
 *                   out is the vision hidden but for the last, the text hidden.  The class
 *                   fixes the factor 4 (two 2 x 2 merges): merge_kernel_size sizes nothing.
 *   language_model  AutoModel.from_config(text_config) (Qwen3_5TextConfig when absent), read
 *                   by the registered reader of its model_type; a model that holds no
 *                   multi-token-prediction layers (Qwen3_5TextModel skips mtp.*), and a
 *                   checkpoint saved from this class stores none: openbmb/MiniCPM-V-4.6
 *                   publishes 1,300,428,016, the graph without its text config's MTP layer.
 *   lm_head         Linear(text hidden, vocab, no bias), tied by the root config's
 *                   tie_word_embeddings (default false; the class's _tied_weights_keys).
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "arch/vision/multimodal.h"
#include "util/fmt.h"

#define FG_CFG_FALSE (&(const struct cJSON){.type = cJSON_False})

/* The text class's keys as this wrapper builds them: no MTP layers, the root's tie. */
static const struct fg_cfg_over text_tied[] = {
    {FG_CFG_SET, "mtp_num_hidden_layers", FG_CFG_NUMBER(0)},
    {FG_CFG_SET, "tie_word_embeddings", FG_CFG_TRUE},
    {0, NULL, NULL},
};
static const struct fg_cfg_over text_untied[] = {
    {FG_CFG_SET, "mtp_num_hidden_layers", FG_CFG_NUMBER(0)},
    {FG_CFG_SET, "tie_word_embeddings", FG_CFG_FALSE},
    {0, NULL, NULL},
};

static int read_text(const struct fg_cfg *c, struct fg_model *m, struct fg_err *err)
{
    struct fg_cfg text = {.obj = NULL, .origin = c->origin, .scope = "text_config"};
    bool have = fg_cfg_has(c, "text_config"), tie;
    const char *tt = "qwen3_5_text";
    int rc;
    if (have && !fg_cfg_child(c, "text_config", &text, err))
        return FG_E_TYPE;
    /* MiniCPMV4_6Config: CONFIG_MAPPING[text_config["model_type"]], a key it requires */
    if ((have && (rc = fg_cfg_str(&text, "model_type", NULL, &tt, err))) ||
        (rc = fg_cfg_bool(c, "tie_word_embeddings", false, &tie, err)))
        return rc;
    if (!tt)
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: text_config has no model_type, which "
                          "MiniCPMV4_6Config requires; add the text model's type (qwen3_5_text "
                          "for MiniCPM-V 4.6)", c->origin);
    if (!have)
        fg__model_note(m, "text_config absent: the text model uses the %s class defaults", tt);
    const struct fg_arch *a = m->arch_find ? m->arch_find(tt) : NULL;
    if (!a || a->read == fg__mm_read)
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: text_config.model_type '%s' has no text "
                          "reader in fitgate", c->origin, tt);
    text.over = tie ? text_tied : text_untied;
    return a->read(&text, m, a->spec, err);
}

struct mcpm_tower {
    uint64_t h, inter, L, heads, ch, image, patch, win[2], times;
};

static int read_tower(const struct fg_cfg *c, const struct fg_cfg *v, struct mcpm_tower *d,
                      struct fg_err *err)
{
    size_t nw = 0;
    int rc;
    if ((rc = fg_cfg_u64(v, "hidden_size", 768, 1, FG_MAX_HIDDEN, &d->h, err)) ||
        (rc = fg_cfg_u64(v, "intermediate_size", 3072, 1, FG_MAX_INTER, &d->inter, err)) ||
        (rc = fg_cfg_u64(v, "num_hidden_layers", 12, 1, FG_MAX_LAYERS, &d->L, err)) ||
        (rc = fg_cfg_u64(v, "num_attention_heads", 12, 1, FG_MAX_HEADS, &d->heads, err)) ||
        (rc = fg_cfg_u64(v, "num_channels", 3, 1, 64, &d->ch, err)) ||
        (rc = fg_cfg_u64(v, "image_size", 224, 1, 1u << 16, &d->image, err)) ||
        (rc = fg_cfg_u64(v, "patch_size", 16, 1, 4096, &d->patch, err)) ||
        (rc = fg_cfg_u64_array(v, "window_kernel_size", 1, 64, d->win, 2, &nw, err)) ||
        (rc = fg_cfg_u64(c, "merger_times", 1, 1, 16, &d->times, err)))
        return rc;
    if (nw == 0)
        d->win[0] = d->win[1] = 2; /* MiniCPMV4_6VisionConfig default (2, 2) */
    else if (nw != 2)
        return fg_err_set(err, FG_E_RANGE, "%s: vision_config window_kernel_size has %zu "
                          "entries; expected (h, w)", v->origin, nw);
    if (d->h % d->heads || d->image < d->patch)
        return fg_err_set(err, FG_E_RANGE, "%s: vision_config hidden_size %llu is not divisible "
                          "by num_attention_heads %llu, or image_size %llu is under patch_size "
                          "%llu", v->origin, (unsigned long long)d->h,
                          (unsigned long long)d->heads, (unsigned long long)d->image,
                          (unsigned long long)d->patch);
    return 0;
}

/* The tower with its window-attention merger (one FG_NODE_VISION node) and the merger. */
static int add_tower(struct fg_model *m, const struct mcpm_tower *d, struct fg_err *err)
{
    const uint64_t h = d->h, f = d->inter, side = d->image / d->patch;
    const uint64_t wh = h * d->win[0] * d->win[1], wi = f * d->win[0] * d->win[1];
    struct fg_node *n = fg__mm_tower_node(m, "Vision tower", h, d->heads, f, err);
    if (!n)
        return FG_E_NOMEM;
    fg__mm_tower_blocks(n, &(struct fg_mm_blocks){.h = h, .f = f, .L = d->L, .qkv_bias = true,
                                                  .o_bias = true, .mlp_bias = true});
    n->params += d->L * 2 * 2 * h;                    /* layer_norm1, layer_norm2 */
    n->params += d->ch * d->patch * d->patch * h + h; /* patch_embedding Conv2d */
    n->params += side * side * h;                     /* position_embedding */
    n->params += 2 * h;                               /* post_layernorm */
    /* vit_merger: self_attn, layer_norm1, pre_norm, linear_1, linear_2 */
    static const char *const attn[] = {"q", "k", "v", "o"};
    for (size_t i = 0; i < 4; i++)
        fg__node_linear(n, attn[i], h, h, 1, true);
    n->params += 2 * h + 2 * wh;
    fg__node_linear(n, "merger_up", wh, wi, 1, true);
    fg__node_linear(n, "merger_down", wi, h, 1, true);
    fg__fmt(n->desc, sizeof n->desc, "SigLIP %llu x %llu + window merger",
            (unsigned long long)d->L, (unsigned long long)h);

    struct fg_node *p = fg__mm_projector_node(m, m->hidden, "downsample MLP merger", err);
    if (!p)
        return FG_E_NOMEM;
    for (uint64_t i = 0; i < d->times; i++) {
        uint64_t out = i + 1 == d->times ? m->hidden : h;
        fg__node_linear(p, "linear_1", 4 * h, 4 * h, 1, true);
        fg__node_linear(p, "linear_2", 4 * h, out, 1, true);
        p->params += 2 * 4 * h; /* pre_norm */
    }
    return 0;
}

/* The tower and merger (fg__mm_tower_fn). */
static int add_vision(struct fg_model *m, const struct fg_cfg *c, const struct fg_cfg *v,
                      const void *ctx, struct fg_err *err)
{
    (void)ctx;
    struct mcpm_tower d;
    int rc = read_tower(c, v, &d, err);
    return rc ? rc : add_tower(m, &d, err);
}

static int read_minicpmv4_6(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                            struct fg_err *err)
{
    (void)spec;
    int rc = read_text(c, m, err);
    return rc ? rc
              : fg__mm_add_vision_first(c, m, "the vision tower and merger", add_vision, NULL,
                                        err);
}

const struct fg_arch fg__arch_vl_minicpm_table[] = {
#include "arch/vision/minicpmv4_6.def"
    {0},
};
