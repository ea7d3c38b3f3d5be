/*
 * kosmos2.c - Kosmos2ForConditionalGeneration (microsoft/kosmos-2-patch14-224), read
 * from huggingface/transformers models/kosmos2/modeling_kosmos2.py (commit 00ad3b0b):
 *
 *   vision_model             Kosmos2VisionModel: the CLIP layout (class_embedding, Conv2d stem
 *                            without bias, num_patches + 1 positions, pre_layrnorm, biased q/k/v/
 *                            out_proj and fc1 / fc2, two LayerNorms a layer, post_layernorm) at
 *                            Kosmos2VisionConfig's defaults
 *   image_to_text_projection Kosmos2ImageToTextProjection: dense vision -> embed_dim (biased),
 *                            latent_query latent_query_num x embed_dim, x_attn q/k/v/out_proj
 *                            embed_dim -> embed_dim biased, no inner LayerNorm
 *   text_model               Kosmos2TextForCausalLM: embed_tokens vocab x embed_dim, sinusoidal
 *                            positions (a non-persistent buffer), layers of
 *                            self_attn_layer_norm, self_attn (biased q/k/v/out_proj and
 *                            inner_attn_ln), with add_cross_attention an encoder_attn of the same
 *                            shape without inner_attn_ln and its LayerNorm, final_layer_norm, ffn
 *                            (fc1 / fc2 biased, ffn_layernorm over ffn_dim); the final
 *                            layer_norm; lm_head without bias, tied to embed_tokens by
 *                            tie_word_embeddings (PretrainedConfig's default true).
 */
#include <stdio.h>
#include <string.h>

#include "arch/vision/multimodal.h"

/* Kosmos2VisionConfig defaults (CLIP ViT-L/14 at 224 px). */
static const struct vit_spec kosmos2_vit = {
    .name = "Kosmos-2 CLIP ViT",
    .hidden = {"hidden_size", 1024}, .layers = {"num_hidden_layers", 24},
    .heads = {"num_attention_heads", 16}, .inter = {"intermediate_size", 4096},
    .channels = {"num_channels", 3}, .patch = {"patch_size", 14}, .image = {"image_size", 224},
    .pos = VIT_POS_PATCHES, .class_token = true, .patch_bias = false, .pre_norm = true,
    .post_norm = true};

/* Kosmos2TextTransformer and its lm_head from text_config (Kosmos2TextConfig defaults). */
static int add_text(struct fg_model *m, const struct fg_cfg *t, struct fg_err *err)
{
    uint64_t E, F, heads;
    bool cross, tie;
    int rc;
    if ((rc = fg_cfg_u64(t, "vocab_size", 65037, 1, FG_MAX_VOCAB, &m->vocab, err)) ||
        (rc = fg_cfg_u64(t, "embed_dim", 2048, 1, FG_MAX_HIDDEN, &E, err)) ||
        (rc = fg_cfg_u64(t, "layers", 24, 1, FG_MAX_LAYERS, &m->layers, err)) ||
        (rc = fg_cfg_u64(t, "ffn_dim", 8192, 1, FG_MAX_INTER, &F, err)) ||
        (rc = fg_cfg_u64(t, "attention_heads", 32, 1, FG_MAX_HEADS, &heads, err)) ||
        (rc = fg_cfg_u64(t, "max_position_embeddings", 2048, 1, FG_MAX_POS, &m->max_pos, err)) ||
        (rc = fg_cfg_bool(t, "add_cross_attention", false, &cross, err)) ||
        (rc = fg_cfg_bool(t, "tie_word_embeddings", true, &tie, err)))
        return rc;
    if (E % heads)
        return fg_err_set(err, FG_E_RANGE, "%s: text_config embed_dim %llu is not divisible by "
                          "attention_heads %llu", t->origin, (unsigned long long)E,
                          (unsigned long long)heads);
    m->hidden = E;
    m->inter = F;
    m->heads = m->kv_heads = heads;
    m->head_dim = E / heads;
    m->tied = tie;
    if ((rc = fg__add_embedding(m, m->vocab, E, err)))
        return rc;
    const struct fg_attn_shape a = {.hidden = E, .heads = heads, .kv_heads = heads,
                                    .head_dim = E / heads, .qkv_bias = true, .o_bias = true};
    const struct fg_mlp_shape f = {.hidden = E, .inter = F, .bias = true};
    struct fg_attn_shape x = a;
    x.cross = true;
    /* pre-norm: self_attn (with its inner_attn_ln), [encoder_attn,] the MLP (with its
     * ffn_layernorm), each after a LayerNorm */
    const struct fg_block_step norm = {.kind = FG_STEP_NORM, .norm = FG_NORM_LN},
        self = {.kind = FG_STEP_ATTN, .attn = &a, .extra = 2 * E},
        enc = {.kind = FG_STEP_ATTN, .attn = &x},
        ffn = {.kind = FG_STEP_MLP, .mlp = &f, .extra = 2 * F};
    struct fg_block_step block[6];
    size_t ns = 0;
    block[ns++] = norm;
    block[ns++] = self;
    if (cross) {
        block[ns++] = norm;
        block[ns++] = enc;
    }
    block[ns++] = norm;
    block[ns++] = ffn;
    if ((rc = fg__add_blocks(m, block, ns, err)) ||
        (rc = fg__add_norm(m, -1, "Final norm", E, FG_NORM_LN, err)))
        return rc;
    return fg__add_head(m, m->vocab, E, tie, false, false, err);
}

static int read_kosmos2(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                        struct fg_err *err)
{
    (void)spec;
    struct fg_cfg t = {.obj = NULL, .origin = c->origin, .scope = "text_config"};
    struct fg_cfg v = {.obj = NULL, .origin = c->origin, .scope = "vision_config"};
    uint64_t nq = 0;
    int rc;
    if ((fg_cfg_has(c, "text_config") && !fg_cfg_child(c, "text_config", &t, err)) ||
        (fg_cfg_has(c, "vision_config") && !fg_cfg_child(c, "vision_config", &v, err)))
        return FG_E_TYPE;
    if ((rc = fg_cfg_u64(c, "latent_query_num", 64, 1, 1u << 16, &nq, err)) ||
        (rc = add_text(m, &t, err)))
        return rc;
    /* vision_config.tie_word_embeddings (true in the released config, which writes every
     * PretrainedConfig flag into each sub-config): Kosmos2VisionModel has no word embeddings
     * to tie, so the flag sizes nothing (models/kosmos2/modeling_kosmos2.py) */
    (void)fg_cfg_has(&v, "tie_word_embeddings");
    size_t first = m->n_nodes;
    struct vit_dims d;
    if ((rc = fg__mm_add_vit(m, &v, &kosmos2_vit, &d, err)))
        return rc;
    const uint64_t E = m->hidden;
    struct fg_node *n = fg__mm_projector_node(m, E, "latent-query cross-attention", err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "dense", d.hidden, E, 1, true);
    fg__node_linear(n, "q", E, E, 1, true);
    fg__node_linear(n, "k", E, E, 1, true);
    fg__node_linear(n, "v", E, E, 1, true);
    fg__node_linear(n, "o", E, E, 1, true);
    n->params += nq * E;                              /* latent_query */
    return fg__mm_move_to_front(m, first, err);
}

const struct fg_arch fg__arch_vl_kosmos_table[] = {
#include "arch/vision/kosmos2.def"
    {0},
};
