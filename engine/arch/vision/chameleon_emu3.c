/*
 * chameleon_emu3.c - the early-fusion models whose images are VQ tokens in the text vocabulary:
 *
 *   chameleon  ChameleonForConditionalGeneration (transformers models/chameleon/
 *              modeling_chameleon.py @00d4b3d2, configuration_chameleon.py @053f59ef): a
 *              Llama-style decoder with per-head q/k LayerNorms, and the VQ-GAN encoder
 *              (ChameleonVQVAE) sized by vq_config.
 *   emu3       Emu3ForConditionalGeneration (models/emu3/modular_emu3.py @00afce98,
 *              configuration_emu3.py @008f5c8c): a Llama decoder (text_config) and the
 *              video VQ-VAE (Emu3VQVAE: encoder, decoder, temporal convolutions) sized by
 *              vq_config.
 *
 * The VQ model is one FG_NODE_VISION node in FG_STACK_TOWER: it runs once per image, frozen
 * (ChameleonVQVAE calls self.eval()).
 */
#include <stdio.h>
#include <string.h>

#include "arch/hybrid/nemotron_h_lfm2_qwen3_next.h"
#include "arch/hybrid/ssm.h"
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

/* ---- what both share ------------------------------------------------------------- */

/* The VQ tokenizer as one tower node of params (and buffers) whose codes embed at width. */
static struct fg_node *vq_node(struct fg_model *m, uint64_t params, uint64_t buffers,
                               uint64_t width, struct fg_err *err)
{
    struct fg_node *n = fg__model_add(m, FG_NODE_VISION, -1, "VQ-VAE", err);
    if (!n)
        return NULL;
    n->stack = FG_STACK_TOWER;
    n->params = params;
    n->buffers = buffers;
    n->hidden = n->width = (uint32_t)width;
    return n;
}

/*
 * The decoder both run over text and image tokens alike (ChameleonModel, Emu3TextModel):
 * embed_tokens, per layer RMSNorm + attention and RMSNorm + gated MLP, the final RMSNorm and
 * an untied lm_head; qk_norm: Chameleon's per-head q_norm / k_norm (weight and bias over
 * heads x head_dim).
 */
static int vq_decoder(struct fg_model *m, bool attn_bias, bool mlp_bias, bool qk_norm,
                      struct fg_err *err)
{
    const struct fg_attn_shape a = {.hidden = m->hidden, .heads = m->heads,
                                    .kv_heads = m->kv_heads, .head_dim = m->head_dim,
                                    .qkv_bias = attn_bias, .o_bias = attn_bias};
    const struct fg_mlp_shape f = {.hidden = m->hidden, .inter = m->inter, .gated = true,
                                   .bias = mlp_bias};
    const struct fg_block_step block[] = {
        {.kind = FG_STEP_NORM, .norm = FG_NORM_RMS},
        {.kind = FG_STEP_ATTN, .attn = &a,
         .extra = qk_norm ? 2 * (m->heads + m->kv_heads) * m->head_dim : 0},
        {.kind = FG_STEP_NORM, .norm = FG_NORM_RMS},
        {.kind = FG_STEP_MLP, .mlp = &f},
    };
    int rc = fg__add_embedding(m, m->vocab, m->hidden, err);
    if (!rc)
        rc = fg__add_blocks(m, block, sizeof block / sizeof block[0], err);
    if (!rc)
        rc = fg__add_norm(m, -1, "Final norm", m->hidden, FG_NORM_RMS, err);
    return rc ? rc : fg__add_head(m, m->vocab, m->hidden, m->tied, false, false, err);
}

/* ---- Chameleon --------------------------------------------------------------------- */

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
    struct fg_node *n = vq_node(m, chameleon_vq_params(&q), 0, q.embed_dim, err);
    if (!n)
        return FG_E_NOMEM;
    fg__fmt(n->desc, sizeof n->desc, "VQ-GAN encoder %llu x %zu levels, %llu codes",
            (unsigned long long)q.base, q.nmult, (unsigned long long)q.codes);
    return vq_decoder(m, attn_bias, mlp_bias, true, err);
}

/* ---- Emu3 ------------------------------------------------------------------------- */

struct evq {
    uint64_t codes, embed, latent, in_ch, out_ch, tdf, base, res_blocks, hidden;
    uint64_t mult[16], attn_lv[16];
    size_t nmult, nattn;
    bool double_latent;
};

static int read_evq(const struct fg_cfg *root, struct evq *q, struct fg_err *err)
{
    static const uint64_t mult_def[] = {1, 2, 2, 4};
    struct fg_cfg c;
    int rc;
    if (!fg_cfg_child(root, "vq_config", &c, err)) {
        if (err && err->code)
            return err->code;
        c = *root;
        c.obj = NULL; /* absent: Emu3VQVAEConfig's defaults */
        c.index = NULL;
    }
    if ((rc = fg_cfg_u64(&c, "codebook_size", 32768, 1, FG_MAX_VOCAB, &q->codes, err)) ||
        (rc = fg_cfg_u64(&c, "embed_dim", 4, 1, FG_MAX_HIDDEN, &q->embed, err)) ||
        (rc = fg_cfg_u64(&c, "latent_channels", 4, 1, FG_MAX_HIDDEN, &q->latent, err)) ||
        (rc = fg_cfg_u64(&c, "in_channels", 3, 1, 64, &q->in_ch, err)) ||
        (rc = fg_cfg_u64(&c, "out_channels", 3, 1, 64, &q->out_ch, err)) ||
        (rc = fg_cfg_u64(&c, "temporal_downsample_factor", 4, 1, 1024, &q->tdf, err)) ||
        (rc = fg_cfg_u64(&c, "base_channels", 256, 1, FG_MAX_HIDDEN, &q->base, err)) ||
        (rc = fg_cfg_u64(&c, "num_res_blocks", 2, 1, 64, &q->res_blocks, err)) ||
        (rc = fg_cfg_u64(&c, "hidden_size", 1024, 1, FG_MAX_HIDDEN, &q->hidden, err)) ||
        (rc = fg_cfg_bool(&c, "double_latent", false, &q->double_latent, err)) ||
        (rc = fg_cfg_u64_array(&c, "channel_multiplier", 1, 64, q->mult, 16, &q->nmult, err)) ||
        (rc = fg_cfg_u64_array(&c, "attn_resolutions", 0, 64, q->attn_lv, 16, &q->nattn, err)))
        return rc;
    if (!fg_cfg_has(&c, "channel_multiplier")) {
        q->nmult = sizeof mult_def / sizeof mult_def[0];
        memcpy(q->mult, mult_def, sizeof mult_def);
    }
    if (!fg_cfg_has(&c, "attn_resolutions")) {
        q->nattn = 1;
        q->attn_lv[0] = 3;
    }
    if (q->nmult == 0 || q->nmult > 16 || q->nattn > 16 || (q->tdf & (q->tdf - 1)))
        return fg_err_set(err, FG_E_RANGE, "%s: vq_config needs 1 to 16 channel multipliers, at "
                          "most 16 attention levels and a power-of-two "
                          "temporal_downsample_factor", root->origin);
    return 0;
}

static bool evq_attn(const struct evq *q, size_t level)
{
    for (size_t k = 0; k < q->nattn; k++)
        if (q->attn_lv[k] == level)
            return true;
    return false;
}

/* Emu3VQVAEConv3d: a Conv3d with bias over kt x kh x kw taps. */
static uint64_t conv3d(uint64_t in, uint64_t out, uint64_t taps)
{
    return in * out * taps + out;
}

/* Emu3VQVAESpatialNorm: GroupNorm(out) and the 1x1 conv_y / conv_b from quant channels. */
static uint64_t spatial_norm(uint64_t quant, uint64_t ch)
{
    return gn(ch) + 2 * (quant * ch + ch);
}

/* Emu3VQVAEResnetBlock: GroupNorms (or SpatialNorms, quant > 0), two 3x3 convs, a 1x1
 * nin_shortcut when the widths differ. */
static uint64_t eresnet(uint64_t in, uint64_t out, uint64_t quant)
{
    uint64_t norms = quant ? spatial_norm(quant, in) + spatial_norm(quant, out) : gn(in) + gn(out);
    return norms + (in * out * 9 + out) + (out * out * 9 + out) + (in != out ? in * out + out : 0);
}

/* Emu3VQVAETemporalResnetBlock (in = out): two BatchNorm3d - weight and bias, and the
 * persistent running_mean / running_var / num_batches_tracked (*buffers) - and two 3x3x3
 * convs. */
static uint64_t temporal_resnet(uint64_t ch, uint64_t *buffers)
{
    *buffers += 2 * (2 * ch + 1);
    return 2 * (2 * ch + 2 * ch + 1) + 2 * conv3d(ch, ch, 27);
}

/*
 * Emu3VQVAE: the encoder (conv_in; Emu3VQVAEDownBlock levels of num_res_blocks resnets, an
 * attention block (SiglipAttention over vq hidden_size: q / k / v / out_proj with bias) and
 * its GroupNorm after each where attn_resolutions names the level index, a 3x3 downsample
 * except on the last level; Emu3VQVAEMiddleBlock; norm_out; conv_out to latent_channels,
 * doubled by double_latent; log2(temporal_downsample_factor) 4x3x3 temporal downsamples and
 * num_res_blocks temporal resnets), the decoder (temporal resnets and 3x3x3 temporal
 * upsamples over latent_channels, conv_in, the middle block and Emu3VQVAEUpBlock's
 * num_res_blocks + 1 resnets a level with SpatialNorms over embed_dim, upsample convs,
 * norm_out, conv_out), the codebook codebook_size x embed_dim, and the 3x1x1 quant_conv /
 * post_quant_conv.
 */
static uint64_t emu3_vq_params(const struct evq *q, uint64_t *buffers)
{
    uint64_t h = q->hidden, att = 4 * (h * h + h), e = q->embed, lat = q->latent;
    uint64_t outc = q->double_latent ? 2 * lat : lat, top = q->base * q->mult[q->nmult - 1];
    uint64_t tblocks = 0;
    for (uint64_t t = q->tdf; t > 1; t >>= 1)
        tblocks++;
    /* encoder */
    uint64_t p = q->in_ch * q->base * 9 + q->base;
    for (size_t i = 0; i < q->nmult; i++) {
        uint64_t in = q->base * (i ? q->mult[i - 1] : 1), out = q->base * q->mult[i];
        for (uint64_t b = 0; b < q->res_blocks; b++, in = out)
            p += eresnet(in, out, 0) + (evq_attn(q, i) ? att + gn(out) : 0);
        if (i + 1 < q->nmult)
            p += out * out * 9 + out;
    }
    p += 2 * eresnet(top, top, 0) + att + gn(top);
    p += gn(top) + (top * outc * 9 + outc) + tblocks * conv3d(outc, outc, 36);
    for (uint64_t b = 0; b < q->res_blocks; b++)
        p += temporal_resnet(outc, buffers);
    /* decoder */
    for (uint64_t b = 0; b < q->res_blocks; b++)
        p += temporal_resnet(lat, buffers);
    p += tblocks * conv3d(lat, lat, 27) + (lat * top * 9 + top);
    p += 2 * eresnet(top, top, e) + att + spatial_norm(e, top);
    uint64_t in = top;
    for (size_t i = q->nmult; i-- > 0;) {
        uint64_t out = q->base * q->mult[i];
        for (uint64_t b = 0; b <= q->res_blocks; b++, in = out)
            p += eresnet(in, out, e) + (evq_attn(q, i) ? att + spatial_norm(e, out) : 0);
        if (i != 0)
            p += in * in * 9 + in;
    }
    uint64_t bottom = q->base * q->mult[0];
    p += spatial_norm(e, bottom) + (bottom * q->out_ch * 9 + q->out_ch);
    /* codebook, quant_conv, post_quant_conv */
    return p + q->codes * e + conv3d(lat, e, 3) + conv3d(e, lat, 3);
}

/*
 * Emu3Model: text_model (Emu3TextModel, a LlamaModel: embed_tokens, layers of q / k / v / o
 * biased by attention_bias and gate / up / down biased by mlp_bias, norm) and vqmodel;
 * Emu3ForConditionalGeneration's lm_head, tied by text_config.tie_word_embeddings (default
 * false).  Emu3TextConfig's defaults are Emu3-Chat-hf's.
 */
int fg__ssm_read_emu3(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                      struct fg_err *err)
{
    (void)spec;
    static const struct fg_core_defaults d = {.vocab = 184622, .hidden = 4096, .inter = 14336,
                                              .layers = 32, .heads = 32, .max_pos = 9216,
                                              .tie = false};
    struct fg_cfg t;
    struct evq q = {0};
    bool attn_bias, mlp_bias;
    int rc;
    if (!fg_cfg_child(c, "text_config", &t, err)) {
        if (err && err->code)
            return err->code;
        t = *c;
        t.obj = NULL; /* absent: Emu3TextConfig's defaults */
        t.index = NULL;
    }
    if ((rc = fg__read_core(&t, m, &d, err)) || (rc = fg__hy_read_kv_heads(&t, m, 8, err)) ||
        (rc = fg_cfg_bool(&t, "attention_bias", false, &attn_bias, err)) ||
        (rc = fg_cfg_bool(&t, "mlp_bias", false, &mlp_bias, err)) || (rc = read_evq(c, &q, err)))
        return rc;
    uint64_t buffers = 0, params = emu3_vq_params(&q, &buffers);
    struct fg_node *n = vq_node(m, params, buffers, q.embed, err);
    if (!n)
        return FG_E_NOMEM;
    fg__fmt(n->desc, sizeof n->desc, "video VQ-VAE %llu x %zu levels, %llu codes",
            (unsigned long long)q.base, q.nmult, (unsigned long long)q.codes);
    return vq_decoder(m, attn_bias, mlp_bias, false, err);
}
