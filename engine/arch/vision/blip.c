/*
 * blip.c - the Q-Former wrappers: Blip2ForConditionalGeneration and
 * InstructBlipForConditionalGeneration, read from huggingface/transformers
 * models/blip_2/modeling_blip_2.py and models/instructblip/modeling_instructblip.py (the
 * Q-Former layer as Blip2QFormerLayer builds it with use_qformer_text_input):
 *
 *   vision_model        Blip2VisionModel: class_embedding, patch_embedding Conv2d with bias,
 *                       position_embedding of (image_size / patch_size)^2 + 1 rows; layers of
 *                       qkv (hidden -> 3 x hidden, no bias) with the q_bias / v_bias vectors
 *                       when qkv_bias, projection (biased), layer_norm1 / layer_norm2 and fc1 /
 *                       fc2 (biased); post_layernorm.  InstructBLIP's tower is the same.
 *   query_tokens        num_query_tokens x qformer hidden
 *   qformer             layers of attention (query / key / value / output dense, all biased,
 *                       and its LayerNorm), a crossattention of the same shape whose key and
 *                       value read the vision hidden (encoder_hidden_size, which Blip2Config
 *                       sets to vision_config.hidden_size) on every cross_attention_frequency-th
 *                       layer, intermediate_query / output_query (dense + LayerNorm), and the
 *                       text feed-forward intermediate / output as well in InstructBLIP (whose
 *                       Q-Former reads the instruction); BLIP-2 ends in a LayerNorm, InstructBLIP
 *                       starts with word and position embeddings and their LayerNorm
 *   language_projection Linear(qformer hidden, text hidden) with bias
 *   language_model      text_config read by the registered reader of its model_type (OPT,
 *                       Flan-T5, Vicuna ...); OPT when absent (Blip2Config's default).
 *
 * position_embedding_type other than "absolute" adds relative tables the reader does not
 * build: refused by key.
 *
 * BlipForConditionalGeneration (BLIP-1 captioning, models/blip/modeling_blip.py and
 * modeling_blip_text.py): BlipVisionModel (the same layout with one biased qkv, no q_bias /
 * v_bias) and text_decoder BlipTextLMHeadModel: word and position embeddings and their
 * LayerNorm; BERT layers (post-LayerNorm) of self-attention, cross-attention whose key and
 * value read encoder_hidden_size (Blip's vision width) when is_decoder, intermediate / output;
 * cls.predictions transform (dense + LayerNorm) and a decoder of vocab_size with its bias.
 * Only the bias is tied (_tied_weights_keys): the decoder weight is stored apart from the word
 * embeddings, as Salesforce/blip-image-captioning-base's 247,414,076 parameters say.
 */
#include <stdio.h>
#include <string.h>

#include "arch/vision/multimodal.h"
#include "util/fmt.h"

struct qformer_spec {
    bool instruct;   /* InstructBLIP's Q-Former: text embeddings and text feed-forwards */
};

/* Blip2VisionModel as one FG_NODE_VISION node; *hidden its width.  Blip2VisionConfig
 * defaults (EVA ViT-g). */
static int add_blip_vision(struct fg_model *m, const struct fg_cfg *v, uint64_t *hidden,
                           struct fg_err *err)
{
    uint64_t h, f, L, heads, ch, image, patch, tokens;
    bool qkv_bias;
    int rc;
    if ((rc = fg_cfg_u64(v, "hidden_size", 1408, 1, FG_MAX_HIDDEN, &h, err)) ||
        (rc = fg_cfg_u64(v, "intermediate_size", 6144, 1, FG_MAX_INTER, &f, err)) ||
        (rc = fg_cfg_u64(v, "num_hidden_layers", 39, 1, FG_MAX_LAYERS, &L, err)) ||
        (rc = fg_cfg_u64(v, "num_attention_heads", 16, 1, FG_MAX_HEADS, &heads, err)) ||
        (rc = fg_cfg_u64(v, "num_channels", 3, 1, 64, &ch, err)) ||
        (rc = fg_cfg_u64(v, "image_size", 224, 1, 1u << 16, &image, err)) ||
        (rc = fg_cfg_u64(v, "patch_size", 14, 1, 4096, &patch, err)) ||
        (rc = fg_cfg_bool(v, "qkv_bias", true, &qkv_bias, err)) ||
        (rc = fg__mm_vit_tokens(v, h, heads, image, patch, &tokens, err)))
        return rc;
    struct fg_node *n = fg__mm_tower_node(m, "Vision tower", h, heads, f, err);
    if (!n)
        return FG_E_NOMEM;
    fg__mm_tower_blocks(n, &(struct fg_mm_blocks){.h = h, .f = f, .L = L, .fused_qkv = true,
                                                  .o_bias = true, .mlp_bias = true});
    n->params += L * (2 * 2 * h + (qkv_bias ? 2 * h : 0));   /* LayerNorms, q_bias, v_bias */
    n->params += h + ch * patch * patch * h + h + tokens * h + 2 * h;
    fg__fmt(n->desc, sizeof n->desc, "BLIP ViT %llu x %llu, %llu tokens/image",
            (unsigned long long)L, (unsigned long long)h, (unsigned long long)tokens);
    *hidden = h;
    return 0;
}

/* The Q-Former, the query tokens and language_projection as one projector node. */
static int add_qformer(struct fg_model *m, const struct fg_cfg *c, const struct qformer_spec *s,
                       uint64_t vh, struct fg_err *err)
{
    struct fg_cfg q = {.obj = NULL, .origin = c->origin, .scope = "qformer_config"};
    if (fg_cfg_has(c, "qformer_config") && !fg_cfg_child(c, "qformer_config", &q, err))
        return FG_E_TYPE;
    /* Released configs (Salesforce/blip2-opt-2.7b) keep in qformer_config only what differs
     * from Blip2QFormerConfig's defaults, classifier_dropout: read it (it sizes no tensor) so
     * that the sub-config counts as entered and a shape key added to it is not passed over. */
    (void)fg_cfg_has(&q, "classifier_dropout");
    uint64_t h, f, L, heads, freq, vocab, pos, nq;
    const char *pe = NULL;
    int rc;
    if ((rc = fg_cfg_u64(&q, "hidden_size", 768, 1, FG_MAX_HIDDEN, &h, err)) ||
        (rc = fg_cfg_u64(&q, "intermediate_size", 3072, 1, FG_MAX_INTER, &f, err)) ||
        (rc = fg_cfg_u64(&q, "num_hidden_layers", 12, 1, FG_MAX_LAYERS, &L, err)) ||
        (rc = fg_cfg_u64(&q, "num_attention_heads", 12, 1, FG_MAX_HEADS, &heads, err)) ||
        (rc = fg_cfg_u64(&q, "cross_attention_frequency", 2, 1, FG_MAX_LAYERS, &freq, err)) ||
        (rc = fg_cfg_u64(&q, "vocab_size", 30522, 1, FG_MAX_VOCAB, &vocab, err)) ||
        (rc = fg_cfg_u64(&q, "max_position_embeddings", 512, 1, FG_MAX_POS, &pos, err)) ||
        (rc = fg_cfg_str(&q, "position_embedding_type", "absolute", &pe, err)) ||
        (rc = fg_cfg_u64(c, "num_query_tokens", 32, 1, 1u << 16, &nq, err)))
        return rc;
    if (strcmp(pe, "absolute"))
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: key 'qformer_config.position_embedding_type' "
                          "is '%s'; only 'absolute' is sized", c->origin, pe);
    if (h % heads)
        return fg_err_set(err, FG_E_RANGE, "%s: qformer_config hidden_size %llu is not "
                          "divisible by %llu heads", c->origin, (unsigned long long)h,
                          (unsigned long long)heads);
    uint64_t cross = (L + freq - 1) / freq;   /* layers with layer_idx % freq == 0 */
    uint64_t ffns = s->instruct ? 2 : 1;      /* query feed-forward, and the text one */
    struct fg_node *n = fg__mm_projector_node(m, m->hidden, "Q-Former + linear", err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "q", h, h, L + cross, true);
    fg__node_linear(n, "k", h, h, L, true);
    fg__node_linear(n, "v", h, h, L, true);
    fg__node_linear(n, "cross_k", vh, h, cross, true);
    fg__node_linear(n, "cross_v", vh, h, cross, true);
    fg__node_linear(n, "o", h, h, L + cross, true);
    fg__node_linear(n, "up", h, f, L * ffns, true);
    fg__node_linear(n, "down", f, h, L * ffns, true);
    fg__node_linear(n, "language_projection", h, m->hidden, 1, true);
    n->params += (L + cross + L * ffns) * 2 * h;   /* one LayerNorm after each sublayer */
    n->params += nq * h + 2 * h;                    /* query_tokens, the outer LayerNorm */
    if (s->instruct)
        n->params += vocab * h + pos * h;           /* word and position embeddings */
    fg__fmt(n->desc, sizeof n->desc, "Q-Former %llu x %llu, %llu queries, linear",
            (unsigned long long)L, (unsigned long long)h, (unsigned long long)nq);
    return 0;
}

static int read_blip2(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                      struct fg_err *err)
{
    const struct mm_spec text = {.text_type = "opt"};
    int rc = fg__mm_read_text(c, &text, m, err);
    if (rc)
        return rc;
    struct fg_cfg v;
    struct fg_config *fill = NULL;
    if ((rc = fg__mm_vision_view(c, m, "the vision tower and Q-Former", &v, &fill, err)) ||
        !v.obj)
        return rc;
    size_t first = m->n_nodes;
    uint64_t vh = 0;
    if (!(rc = add_blip_vision(m, &v, &vh, err)) && !(rc = add_qformer(m, c, spec, vh, err)))
        rc = fg__mm_move_to_front(m, first, err);
    fg_config_free(fill);
    return rc;
}

/* BlipVisionModel: class_embedding, biased Conv2d stem, num_patches + 1 positions, fused qkv
 * and projection with biases, two LayerNorms and fc1 / fc2 a layer, post_layernorm.
 * BlipVisionConfig defaults (ViT-B/16 at 384 px). */
static const struct vit_spec blip_vit = {
    .name = "BLIP ViT",
    .hidden = {"hidden_size", 768}, .layers = {"num_hidden_layers", 12},
    .heads = {"num_attention_heads", 12}, .inter = {"intermediate_size", 3072},
    .channels = {"num_channels", 3}, .patch = {"patch_size", 16}, .image = {"image_size", 384},
    .pos = VIT_POS_PATCHES, .class_token = true, .patch_bias = true, .post_norm = true,
    .fused_qkv = true};

/* BlipTextLMHeadModel from text_config (BlipTextConfig defaults); vh the vision width. */
static int add_blip_text(struct fg_model *m, const struct fg_cfg *t, uint64_t vh,
                         struct fg_err *err)
{
    uint64_t h, f, heads, enc;
    bool decoder;
    int rc;
    if ((rc = fg_cfg_u64(t, "vocab_size", 30524, 1, FG_MAX_VOCAB, &m->vocab, err)) ||
        (rc = fg_cfg_u64(t, "hidden_size", 768, 1, FG_MAX_HIDDEN, &h, err)) ||
        (rc = fg_cfg_u64(t, "intermediate_size", 3072, 1, FG_MAX_INTER, &f, err)) ||
        (rc = fg_cfg_u64(t, "num_hidden_layers", 12, 1, FG_MAX_LAYERS, &m->layers, err)) ||
        (rc = fg_cfg_u64(t, "num_attention_heads", 8, 1, FG_MAX_HEADS, &heads, err)) ||
        (rc = fg_cfg_u64(t, "max_position_embeddings", 512, 1, FG_MAX_POS, &m->max_pos, err)) ||
        (rc = fg_cfg_bool(t, "is_decoder", true, &decoder, err)))
        return rc;
    /* BlipConfig sets text_config.encoder_hidden_size to the vision width */
    if ((rc = fg_cfg_u64(t, "encoder_hidden_size", vh, 1, FG_MAX_HIDDEN, &enc, err)))
        return rc;
    if (h % heads)
        return fg_err_set(err, FG_E_RANGE, "%s: text_config hidden_size %llu is not divisible "
                          "by %llu heads", t->origin, (unsigned long long)h,
                          (unsigned long long)heads);
    m->hidden = h;
    m->inter = f;
    m->heads = m->kv_heads = heads;
    m->head_dim = h / heads;
    m->tied = false;
    /* text_config.tie_word_embeddings (true in the released configs) is read and changes
     * nothing: the decoder weight is stored apart all the same (see the top of this file) */
    (void)fg_cfg_has(t, "tie_word_embeddings");
    if ((rc = fg__add_embedding(m, m->vocab, h, err)) ||
        (rc = fg__add_table(m, FG_NODE_POS_EMBED, "Position embedding", m->max_pos, h, NULL,
                            err)) ||
        (rc = fg__add_norm(m, -1, "Embedding norm", h, FG_NORM_LN, err)))
        return rc;
    const struct fg_attn_shape a = {.hidden = h, .heads = heads, .kv_heads = heads,
                                    .head_dim = h / heads, .qkv_bias = true, .o_bias = true};
    const struct fg_mlp_shape mlp = {.hidden = h, .inter = f, .bias = true};
    struct fg_attn_shape x = a;
    x.cross = true;
    /* post-norm: attention, its norm, [crossattention from the vision width, its norm,]
     * intermediate / output, their norm */
    const struct fg_block_step self = {.kind = FG_STEP_ATTN, .attn = &a},
        norm = {.kind = FG_STEP_NORM, .norm = FG_NORM_LN},
        cross = {.kind = FG_STEP_ATTN, .attn = &x, .kdim = enc},
        ffn = {.kind = FG_STEP_MLP, .mlp = &mlp};
    struct fg_block_step block[6];
    size_t ns = 0;
    block[ns++] = self;
    block[ns++] = norm;
    if (decoder) {
        block[ns++] = cross;
        block[ns++] = norm;
    }
    block[ns++] = ffn;
    block[ns++] = norm;
    if ((rc = fg__add_blocks(m, block, ns, err)))
        return rc;
    struct fg_node *n = fg__model_add(m, FG_NODE_OTHER, -1, "Prediction transform", err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "dense", h, h, 1, true);
    n->params += 2 * h;
    n->hidden = n->width = (uint32_t)h;
    return fg__add_head(m, m->vocab, h, false, false, true, err);
}

static int read_blip(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                     struct fg_err *err)
{
    (void)spec;
    struct fg_cfg t = {.obj = NULL, .origin = c->origin, .scope = "text_config"};
    struct fg_cfg v = {.obj = NULL, .origin = c->origin, .scope = "vision_config"};
    if ((fg_cfg_has(c, "text_config") && !fg_cfg_child(c, "text_config", &t, err)) ||
        (fg_cfg_has(c, "vision_config") && !fg_cfg_child(c, "vision_config", &v, err)))
        return FG_E_TYPE;
    struct vit_dims d;
    uint64_t vh = 0;
    /* vision_config.tie_word_embeddings (every sub-config of an old save writes the
     * PretrainedConfig flags): BlipVisionModel has no word embeddings to tie, so the flag
     * sizes nothing (models/blip/modeling_blip.py) */
    (void)fg_cfg_has(&v, "tie_word_embeddings");
    /* the vision width feeds the text model's cross-attention: read it first */
    int rc = fg_cfg_u64(&v, blip_vit.hidden.keys, blip_vit.hidden.def, 1, FG_MAX_HIDDEN, &vh,
                        err);
    if (rc || (rc = add_blip_text(m, &t, vh, err)))
        return rc;
    size_t first = m->n_nodes;
    if ((rc = fg__mm_add_vit(m, &v, &blip_vit, &d, err)))
        return rc;
    return fg__mm_move_to_front(m, first, err);
}

static const struct qformer_spec blip2 = {.instruct = false};
static const struct qformer_spec instructblip = {.instruct = true};

const struct fg_arch fg__arch_vl_blip_table[] = {
#include "arch/vision/blip.def"
    {0},
};
