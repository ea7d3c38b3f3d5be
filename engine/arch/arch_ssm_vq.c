/*
 * arch_ssm_vq.c - the early-fusion models whose images are VQ tokens in the text vocabulary:
 *
 *   chameleon  ChameleonForConditionalGeneration (transformers models/chameleon/
 *              modeling_chameleon.py @00d4b3d2, configuration_chameleon.py @053f59ef): a
 *              Llama-style decoder with per-head q/k LayerNorms, and the VQ-GAN encoder
 *              (ChameleonVQVAE) sized by vq_config.
 *
 * The VQ model is one FG_NODE_VISION node in FG_STACK_TOWER: it runs once per image, frozen
 * (ChameleonVQVAE calls self.eval()).
 */
#include <stdio.h>
#include <string.h>

#include "arch/arch_ssm.h"
#include "util/fmt.h"

struct vq {
    uint64_t embed_dim, codes, latent, in_ch, base, res_blocks, resolution;
    uint64_t mult[16], attn_res[16];
    size_t nmult, nattn;
    bool double_latent, vanilla;
};

static int read_vq(const struct fg_cfg *root, struct vq *q, struct fg_err *err)
{
    static const uint64_t mult_def[] = {1, 1, 2, 2, 4};
    struct fg_cfg c;
    const char *attn_type = NULL;
    int rc;
    if (!fg_cfg_child(root, "vq_config", &c, err)) {
        if (err && err->code)
            return err->code;
        c = *root;
        c.obj = NULL; /* absent: ChameleonVQVAEConfig's defaults */
        c.index = NULL;
    }
    if ((rc = fg_cfg_u64(&c, "embed_dim", 256, 1, FG_MAX_HIDDEN, &q->embed_dim, err)) ||
        (rc = fg_cfg_u64(&c, "num_embeddings", 8192, 1, FG_MAX_VOCAB, &q->codes, err)) ||
        (rc = fg_cfg_u64(&c, "latent_channels", 256, 1, FG_MAX_HIDDEN, &q->latent, err)) ||
        (rc = fg_cfg_u64(&c, "in_channels", 3, 1, 64, &q->in_ch, err)) ||
        (rc = fg_cfg_u64(&c, "base_channels", 128, 1, FG_MAX_HIDDEN, &q->base, err)) ||
        (rc = fg_cfg_u64(&c, "num_res_blocks", 2, 1, 64, &q->res_blocks, err)) ||
        (rc = fg_cfg_u64(&c, "resolution", 512, 1, 1u << 16, &q->resolution, err)) ||
        (rc = fg_cfg_bool(&c, "double_latent", false, &q->double_latent, err)) ||
        (rc = fg_cfg_str(&c, "attn_type", "vanilla", &attn_type, err)) ||
        (rc = fg_cfg_u64_array(&c, "channel_multiplier", 1, 64, q->mult, 16, &q->nmult, err)) ||
        (rc = fg_cfg_u64_array(&c, "attn_resolutions", 0, 1u << 16, q->attn_res, 16, &q->nattn,
                               err)))
        return rc;
    if (!fg_cfg_has(&c, "channel_multiplier")) {
        q->nmult = sizeof mult_def / sizeof mult_def[0];
        memcpy(q->mult, mult_def, sizeof mult_def);
    }
    if (q->nmult == 0 || q->nmult > 16 || q->nattn > 16)
        return fg_err_set(err, FG_E_RANGE, "%s: vq_config's channel_multiplier needs 1 to 16 "
                          "entries and attn_resolutions at most 16", root->origin);
    q->vanilla = attn_type && !strcmp(attn_type, "vanilla");
    return 0;
}

/* GroupNorm(affine): weight and bias. */
static uint64_t gn(uint64_t ch)
{
    return 2 * ch;
}

/* ChameleonVQVAEEncoderResnetBlock: norm1, conv1 3x3, norm2, conv2 3x3, and a 1x1
 * nin_shortcut when the widths differ (conv_shortcut is never set). */
static uint64_t resnet(uint64_t in, uint64_t out)
{
    return gn(in) + (in * out * 9 + out) + gn(out) + (out * out * 9 + out) +
           (in != out ? in * out + out : 0);
}

/* ChameleonVQVAEEncoderAttnBlock: norm and 1x1 q / k / v / proj_out with bias. */
static uint64_t attn_block(uint64_t ch)
{
    return gn(ch) + 4 * (ch * ch + ch);
}

/*
 * ChameleonVQVAE: ChameleonVQVAEEncoder (conv_in; per resolution level num_res_blocks
 * resnet blocks from base x in_multiplier to base x multiplier, an attention block after
 * each when the level's resolution is in attn_resolutions and attn_type is vanilla, a 3x3
 * stride-2 downsample except on the last level; mid resnet, attention (vanilla), resnet;
 * norm_out; conv_out to latent_channels, twice that with double_latent), the quantizer's
 * codebook num_embeddings x embed_dim, quant_conv and post_quant_conv (1x1, biased).
 */
static uint64_t chameleon_vq_params(const struct vq *q)
{
    uint64_t p = q->in_ch * q->base * 9 + q->base, res = q->resolution, ch = q->base;
    for (size_t i = 0; i < q->nmult; i++) {
        uint64_t in = q->base * (i ? q->mult[i - 1] : 1), out = q->base * q->mult[i];
        bool attn = false;
        for (size_t k = 0; k < q->nattn; k++)
            attn |= q->attn_res[k] == res;
        for (uint64_t b = 0; b < q->res_blocks; b++, in = out)
            p += resnet(in, out) + (attn && q->vanilla ? attn_block(out) : 0);
        ch = out;
        if (i + 1 < q->nmult) {
            p += ch * ch * 9 + ch;
            res /= 2;
        }
    }
    uint64_t lat = q->double_latent ? 2 * q->latent : q->latent;
    p += 2 * resnet(ch, ch) + (q->vanilla ? attn_block(ch) : 0) + gn(ch) + (ch * lat * 9 + lat);
    p += q->codes * q->embed_dim;
    p += (q->latent * q->embed_dim + q->embed_dim) + (q->embed_dim * q->latent + q->latent);
    return p;
}

/*
 * ChameleonModel: embed_tokens; ChameleonDecoderLayer (or ChameleonSwinDecoderLayer under
 * swin_norm: the same tensors in another order): input_layernorm, ChameleonAttention
 * (q / k / v / o biased by attention_bias; q_norm and k_norm are LayerNorms over
 * (heads, head_dim) and (kv heads, head_dim): weight and bias per head), post_attention_
 * layernorm, ChameleonMLP (gate / up / down biased by mlp_bias); norm; the vqmodel; the
 * lm_head of ChameleonForConditionalGeneration, tied by tie_word_embeddings (default false).
 */
int fg__ssm_read_chameleon(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                           struct fg_err *err)
{
    (void)spec;
    static const struct fg_core_defaults d = {.vocab = 65536, .hidden = 4096, .inter = 11008,
                                              .layers = 32, .heads = 32, .max_pos = 4096,
                                              .tie = false};
    struct vq q = {0};
    bool attn_bias, mlp_bias, swin;
    int rc;
    if ((rc = fg__read_core(c, m, &d, err)) ||
        (rc = fg_cfg_bool(c, "attention_bias", false, &attn_bias, err)) ||
        (rc = fg_cfg_bool(c, "mlp_bias", false, &mlp_bias, err)) ||
        (rc = fg_cfg_bool(c, "swin_norm", false, &swin, err)) || (rc = read_vq(c, &q, err)))
        return rc;
    struct fg_node *n = fg__model_add(m, FG_NODE_VISION, -1, "VQ-VAE", err);
    if (!n)
        return FG_E_NOMEM;
    n->stack = FG_STACK_TOWER;
    n->params = chameleon_vq_params(&q);
    n->hidden = n->width = (uint32_t)q.embed_dim;
    fg__fmt(n->desc, sizeof n->desc, "VQ-GAN encoder %llu x %zu levels, %llu codes",
            (unsigned long long)q.base, q.nmult, (unsigned long long)q.codes);
    const struct fg_attn_shape a = {.hidden = m->hidden, .heads = m->heads,
                                    .kv_heads = m->kv_heads, .head_dim = m->head_dim,
                                    .qkv_bias = attn_bias, .o_bias = attn_bias};
    const struct fg_mlp_shape f = {.hidden = m->hidden, .inter = m->inter, .gated = true,
                                   .bias = mlp_bias};
    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)))
        return rc;
    size_t first = m->n_nodes;
    for (uint64_t l = 0; l < m->layers; l++) {
        int32_t li = (int32_t)l;
        if (l > 0 && fg__model_repeat_block(m, first, li, (uint32_t)(m->layers - l)))
            break;
        first = m->n_nodes;
        struct fg_node *an;
        if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)) ||
            (rc = fg__add_attention(m, li, &a, &an, err)))
            return rc;
        an->params += 2 * (m->heads + m->kv_heads) * m->head_dim; /* q_norm, k_norm */
        if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)) ||
            (rc = fg__add_mlp(m, li, &f, NULL, err)))
            return rc;
    }
    if ((rc = fg__add_norm(m, -1, "Final norm", m->hidden, FG_NORM_RMS, err)))
        return rc;
    return fg__add_head(m, m->vocab, m->hidden, m->tied, false, false, err);
}
