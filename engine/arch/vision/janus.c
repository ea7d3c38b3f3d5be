/*
 * janus.c - JanusForConditionalGeneration (Janus / Janus-Pro), read from
 * huggingface/transformers models/janus/modeling_janus.py (commit 00dcc6dd) and
 * configuration_janus.py (commit 05ff2e98):
 *
 *   vision_model          JanusVisionModel: patch_embedding Conv2d with bias, a position table of
 *                         (image_size / patch_size)^2 rows, layers of layer_norm1 / layer_norm2,
 *                         q/k/v (bias attention_bias), projection_layer (biased), q_norm / k_norm
 *                         LayerNorms over hidden when use_qk_norm, fc1 / fc2 of hidden x
 *                         mlp_ratio (biased); post_layernorm
 *   aligner               JanusVisionAlignerMLP: fc1 hidden -> projection_dim and depth - 1
 *                         projection_dim -> projection_dim, biased
 *   vqmodel               JanusVQVAE (frozen, stored): encoder conv_in, per channel_multiplier
 *                         level num_res_blocks ResNet blocks (two GroupNorms, two 3 x 3 convs, a
 *                         1 x 1 nin_shortcut where the width changes) with an AttnBlock after
 *                         each on the last level, a stride-2 downsample conv between levels, the
 *                         mid block (ResNet, AttnBlock, ResNet), norm_out and conv_out to
 *                         latent_channels (twice with double_latent); the codebook num_embeddings
 *                         x embed_dim, quant_conv / post_quant_conv 1 x 1; the decoder mirrors it
 *                         with num_res_blocks + 1 blocks a level and upsample convs
 *   generation_*          generation_embeddings num_embeddings x embed_dim; generation_aligner
 *                         fc1 embed_dim -> projection_dim plus num_hidden_layers - 1 more;
 *                         generation_head proj_out image_token_embed_dim -> projection_dim and
 *                         vision_head -> num_embeddings, all biased
 *   language_model        text_config's own reader (llama by default) and the lm_head.
 */
#include <stdio.h>
#include <string.h>

#include "arch/vision/multimodal.h"
#include "util/fmt.h"

/* JanusVisionModel as one FG_NODE_VISION node and the aligner as the projector. */
static int add_vision(struct fg_model *m, const struct fg_cfg *v, struct fg_err *err)
{
    uint64_t h, L, heads, ch, patch, image, proj, depth;
    double ratio = 4.0;
    bool bias, qkn;
    int rc;
    if ((rc = fg_cfg_u64(v, "hidden_size", 1024, 1, FG_MAX_HIDDEN, &h, err)) ||
        (rc = fg_cfg_u64(v, "num_hidden_layers", 24, 1, FG_MAX_LAYERS, &L, err)) ||
        (rc = fg_cfg_u64(v, "num_attention_heads", 16, 1, FG_MAX_HEADS, &heads, err)) ||
        (rc = fg_cfg_u64(v, "num_channels", 3, 1, 64, &ch, err)) ||
        (rc = fg_cfg_u64(v, "patch_size", 16, 1, 4096, &patch, err)) ||
        (rc = fg_cfg_u64(v, "image_size", 384, 1, 1u << 16, &image, err)) ||
        (rc = fg_cfg_u64(v, "projection_dim", 2048, 1, FG_MAX_HIDDEN, &proj, err)) ||
        (rc = fg_cfg_u64(v, "depth", 2, 1, 64, &depth, err)) ||
        (rc = fg_cfg_f64(v, "mlp_ratio", 4.0, 0.01, 64.0, &ratio, err)) ||
        (rc = fg_cfg_bool(v, "attention_bias", true, &bias, err)) ||
        (rc = fg_cfg_bool(v, "use_qk_norm", false, &qkn, err)))
        return rc;
    if (h % heads)
        return fg_err_set(err, FG_E_RANGE, "%s: vision_config hidden_size %llu is not divisible "
                          "by %llu heads", v->origin, (unsigned long long)h,
                          (unsigned long long)heads);
    const uint64_t f = (uint64_t)((double)h * ratio), grid = image / patch;  /* int(h * ratio) */
    struct fg_node *n = fg__mm_tower_node(m, "Vision tower", h, heads, f, err);
    if (!n)
        return FG_E_NOMEM;
    fg__mm_tower_blocks(n, &(struct fg_mm_blocks){.h = h, .f = f, .L = L, .qkv_bias = bias,
                                                  .o_bias = true, .mlp_bias = true});
    n->params += L * (2 * 2 * h + (qkn ? 2 * 2 * h : 0));
    n->params += ch * patch * patch * h + h + grid * grid * h + 2 * h;
    fg__fmt(n->desc, sizeof n->desc, "Janus SigLIP ViT %llu x %llu, %llu tokens/image",
            (unsigned long long)L, (unsigned long long)h, (unsigned long long)(grid * grid));
    struct fg_node *p = fg__mm_projector_node(m, m->hidden, "aligner MLP", err);
    if (!p)
        return FG_E_NOMEM;
    fg__node_linear(p, "fc1", h, proj, 1, true);
    fg__node_linear(p, "hidden", proj, proj, depth - 1, true);
    if (proj != m->hidden)
        fg__model_note(m, "vision_config.projection_dim %llu differs from the text hidden size "
                       "%llu", (unsigned long long)proj, (unsigned long long)m->hidden);
    return 0;
}

/* JanusVQVAEResnetBlock in -> out; JanusVQVAEAttnBlock over c. */
static uint64_t resnet(uint64_t in, uint64_t out)
{
    return 2 * in + (9 * in * out + out) + 2 * out + (9 * out * out + out) +
           (in != out ? in * out + out : 0);
}

static uint64_t attn_block(uint64_t c)
{
    return 2 * c + 4 * (c * c + c);
}

struct vq_dims {
    uint64_t embed, codes, latent, in, out, base, res, proj, layers, token_dim;
    uint64_t mult[16];
    size_t levels;
    bool double_latent;
};

static int read_vq(const struct fg_cfg *q, struct vq_dims *k, struct fg_err *err)
{
    int rc;
    if ((rc = fg_cfg_u64(q, "embed_dim", 8, 1, FG_MAX_HIDDEN, &k->embed, err)) ||
        (rc = fg_cfg_u64(q, "num_embeddings", 16384, 1, FG_MAX_VOCAB, &k->codes, err)) ||
        (rc = fg_cfg_u64(q, "latent_channels", 256, 1, FG_MAX_HIDDEN, &k->latent, err)) ||
        (rc = fg_cfg_u64(q, "in_channels", 3, 1, 64, &k->in, err)) ||
        (rc = fg_cfg_u64(q, "out_channels", 3, 1, 64, &k->out, err)) ||
        (rc = fg_cfg_u64(q, "base_channels", 128, 32, 1u << 14, &k->base, err)) ||
        (rc = fg_cfg_u64(q, "num_res_blocks", 2, 1, 64, &k->res, err)) ||
        (rc = fg_cfg_u64(q, "projection_dim", 2048, 1, FG_MAX_HIDDEN, &k->proj, err)) ||
        (rc = fg_cfg_u64(q, "num_hidden_layers", 2, 1, 64, &k->layers, err)) ||
        (rc = fg_cfg_u64(q, "image_token_embed_dim", 2048, 1, FG_MAX_HIDDEN, &k->token_dim,
                         err)) ||
        (rc = fg_cfg_bool(q, "double_latent", false, &k->double_latent, err)))
        return rc;
    if (fg_cfg_has(q, "channel_multiplier")) {
        if ((rc = fg_cfg_u64_array(q, "channel_multiplier", 1, 64, k->mult, 16, &k->levels,
                                   err)))
            return rc;
    } else {
        const uint64_t def[] = {1, 1, 2, 2, 4};  /* JanusVQVAEConfig */
        memcpy(k->mult, def, sizeof def);
        k->levels = 5;
    }
    if (k->levels == 0)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'vq_config.channel_multiplier' is empty",
                          q->origin);
    return 0;
}

/* JanusVQVAE (encoder, quantizer, 1 x 1 convs, decoder) and the generation modules. */
static uint64_t vq_params(const struct vq_dims *k)
{
    const uint64_t b = k->base, last = k->levels - 1;
    uint64_t n = 9 * k->in * b + b, c = b;                       /* encoder conv_in */
    for (size_t i = 0; i < k->levels; i++) {
        uint64_t out = b * k->mult[i];
        c = b * (i ? k->mult[i - 1] : 1);
        for (uint64_t j = 0; j < k->res; j++, c = out)
            n += resnet(c, out) + (i == last ? attn_block(out) : 0);
        if (i != last)
            n += 9 * c * c + c;                                  /* downsample */
    }
    uint64_t z = k->double_latent ? 2 * k->latent : k->latent;
    n += 2 * resnet(c, c) + attn_block(c) + 2 * c + 9 * c * z + z;
    n += k->codes * k->embed + (k->latent * k->embed + k->embed) +
         (k->embed * k->latent + k->latent);                     /* codebook, quant convs */
    c = b * k->mult[last];
    n += 9 * k->latent * c + c + 2 * resnet(c, c) + attn_block(c);  /* decoder conv_in, mid */
    for (size_t i = k->levels; i-- > 0;) {
        uint64_t out = b * k->mult[i];
        for (uint64_t j = 0; j <= k->res; j++, c = out)
            n += resnet(c, out) + (i == last ? attn_block(out) : 0);
        if (i != 0)
            n += 9 * c * c + c;                                  /* upsample */
    }
    n += 2 * c + 9 * c * k->out + k->out;
    n += k->codes * k->embed;                                    /* generation_embeddings */
    n += (k->embed * k->proj + k->proj) + (k->layers - 1) * (k->proj * k->proj + k->proj);
    n += (k->token_dim * k->proj + k->proj) + (k->proj * k->codes + k->codes);
    return n;
}

static int read_janus(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                      struct fg_err *err)
{
    (void)spec;
    const struct mm_spec text = {.text_type = "llama"};
    struct fg_cfg v = {.obj = NULL, .origin = c->origin, .scope = "vision_config"};
    struct fg_cfg q = {.obj = NULL, .origin = c->origin, .scope = "vq_config"};
    struct vq_dims k;
    int rc;
    if ((fg_cfg_has(c, "vision_config") && !fg_cfg_child(c, "vision_config", &v, err)) ||
        (fg_cfg_has(c, "vq_config") && !fg_cfg_child(c, "vq_config", &q, err)))
        return FG_E_TYPE;
    if ((rc = fg__mm_read_text(c, &text, m, err)) || (rc = read_vq(&q, &k, err)))
        return rc;
    size_t first = m->n_nodes;
    if ((rc = add_vision(m, &v, err)))
        return rc;
    struct fg_node *n = fg__model_add(m, FG_NODE_OTHER, -1, "VQ-VAE + generation head", err);
    if (!n)
        return FG_E_NOMEM;
    n->stack = FG_STACK_TOWER;
    n->params = vq_params(&k);
    n->hidden = n->width = (uint32_t)k.proj;
    fg__fmt(n->desc, sizeof n->desc, "VQ-VAE %llu codes x %llu, generation MLP + head",
            (unsigned long long)k.codes, (unsigned long long)k.embed);
    return fg__mm_move_to_front(m, first, err);
}

const struct fg_arch fg__arch_vl_janus_table[] = {
#include "arch/vision/janus.def"
    {0},
};
