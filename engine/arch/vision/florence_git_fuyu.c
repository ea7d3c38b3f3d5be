/*
 * florence_git_fuyu.c - image-text models that embed image patches straight into a decoder or
 * run their own small vision tower, each read from its transformers modeling file
 * (huggingface/transformers):
 *
 *   fuyu  FuyuForCausalLM  models/fuyu/modeling_fuyu.py, configuration_fuyu.py (053f59ef)
 *                          over PersimmonModel (models/persimmon/modeling_persimmon.py)
 *   git   GitForCausalLM   models/git/modeling_git.py (00dcc6dd), configuration_git.py
 *                          (007ecf4a): a CLIP vision tower and a BERT-style decoder
 *   pix2struct  Pix2StructForConditionalGeneration  models/pix2struct/modeling_pix2struct.py
 *                          (00b676f8), configuration_pix2struct.py (00c77270): a patch
 *                          encoder of T5 blocks and a T5 decoder
 *   florence2  Florence2ForConditionalGeneration  models/florence2/modeling_florence2.py
 *                          (01596202), configuration_florence2.py (124ddc4e): a DaViT
 *                          backbone, its projector, and the text_config model (BART)
 *   got_ocr2  GotOcr2ForConditionalGeneration  models/got_ocr2/modeling_got_ocr2.py
 *                          (00b676f8), configuration_got_ocr2.py (0178c681): a SAM ViT-B
 *                          encoder, conv projector, and its text_config model (Qwen2)
 *
 * The image side is a node of the tower stack (FG_STACK_TOWER), as the vision-language
 * wrapper of multimodal.c places its towers.
 */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "arch/arch.h"
#include "arch/encdec/marian_pegasus.h"
#include "arch/vision/multimodal.h"
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
    const struct fg_block_step block[] = {
        {.kind = FG_STEP_NORM, .norm = FG_NORM_LN}, {.kind = FG_STEP_ATTN, .attn = &a},
        {.kind = FG_STEP_NORM, .norm = FG_NORM_LN}, {.kind = FG_STEP_MLP, .mlp = &f},
    };
    if ((rc = fg__add_blocks(m, block, sizeof block / sizeof block[0], err)))
        return rc;
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

/*
 * GitVisionModel (CLIP's vision transformer): class_embedding (hidden), patch_embedding
 * Conv2d(num_channels, hidden, patch, stride patch, no bias), position_embedding of
 * (image / patch)^2 + 1 rows, pre_layrnorm, layers of layer_norm1, q/k/v/out_proj (biased),
 * layer_norm2, fc1 / fc2 (biased), post_layernorm.  GitVisionConfig defaults (CLIP
 * ViT-B/16 at 224).  *width: its hidden size.
 */
static int git_vision(struct fg_model *m, const struct fg_cfg *v, uint64_t *width,
                      struct fg_err *err)
{
    uint64_t h, inter, L, heads, ch, image, patch;
    int rc;
    if ((rc = fg_cfg_u64(v, "hidden_size", 768, 1, FG_MAX_HIDDEN, &h, err)) ||
        (rc = fg_cfg_u64(v, "intermediate_size", 3072, 1, FG_MAX_INTER, &inter, err)) ||
        (rc = fg_cfg_u64(v, "num_hidden_layers", 12, 1, FG_MAX_LAYERS, &L, err)) ||
        (rc = fg_cfg_u64(v, "num_attention_heads", 12, 1, FG_MAX_HEADS, &heads, err)) ||
        (rc = fg_cfg_u64(v, "num_channels", 3, 1, 64, &ch, err)) ||
        (rc = fg_cfg_u64(v, "image_size", 224, 1, 1u << 16, &image, err)) ||
        (rc = fg_cfg_u64(v, "patch_size", 16, 1, 1u << 12, &patch, err)) ||
        (rc = fg__check_heads(v, "hidden_size", h, "num_attention_heads", heads, err)))
        return rc;
    if (image % patch)
        return fg_err_set(err, FG_E_RANGE, "%s: vision_config image_size %llu is not a "
                          "multiple of patch_size %llu", v->origin, (unsigned long long)image,
                          (unsigned long long)patch);
    const uint64_t tokens = (image / patch) * (image / patch) + 1;
    struct fg_node *n = fg__mm_tower_node(m, "Vision tower", h, heads, inter, err);
    if (!n)
        return FG_E_NOMEM;
    fg__mm_tower_blocks(n, &(struct fg_mm_blocks){.h = h, .f = inter, .L = L, .qkv_bias = true,
                                                  .o_bias = true, .mlp_bias = true});
    n->params += L * 2 * 2 * h + h + ch * patch * patch * h + tokens * h + 2 * 2 * h;
    fg__fmt(n->desc, sizeof n->desc, "CLIP ViT %llu x %llu, %llu tokens/image",
            (unsigned long long)L, (unsigned long long)h, (unsigned long long)tokens);
    *width = h;
    return 0;
}

/*
 * GitForCausalLM = GitModel + output nn.Linear(hidden, vocab) with bias, its weight tied to
 * word_embeddings by tie_word_embeddings (GitConfig default false).  GitModel:
 * GitEmbeddings (word_embeddings, position_embeddings max_position_embeddings x hidden,
 * LayerNorm), image_encoder (git_vision), visual_projection Linear(vision hidden, hidden) +
 * LayerNorm, img_temperal_embedding (num_image_with_embedding x vision hidden) when set,
 * GitEncoder: BERT layers (query / key / value / output dense biased + LayerNorm,
 * intermediate / output dense biased + LayerNorm; a distance_embedding of
 * 2 x max_position_embeddings - 1 rows x head size when position_embedding_type is
 * relative_key(_query)).  GitConfig defaults (microsoft/git-base).
 */
static int read_git(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                    struct fg_err *err)
{
    (void)spec;
    static const struct fg_core_defaults d = {.vocab = 30522, .hidden = 768, .inter = 3072,
                                              .layers = 6, .heads = 12, .max_pos = 1024,
                                              .tie = false};
    struct fg_cfg v = {.obj = NULL, .origin = c->origin, .scope = "vision_config"};
    uint64_t vw = 0, frames = 0;
    const char *pos = NULL;
    int rc;
    if (fg_cfg_has(c, "vision_config") && !fg_cfg_child(c, "vision_config", &v, err))
        return err ? err->code : FG_E_TYPE;
    if ((rc = git_vision(m, &v, &vw, err)) ||
        (rc = fg__read_core(c, m, &d, err)) ||
        (rc = fg_cfg_str(c, "position_embedding_type", "absolute", &pos, err)) ||
        (rc = fg_cfg_u64(c, "num_image_with_embedding", 0, 0, 1u << 16, &frames, err)))
        return rc;
    bool relative = !strcmp(pos, "relative_key") || !strcmp(pos, "relative_key_query");
    if (!relative && strcmp(pos, "absolute"))
        return fg_err_set(err, FG_E_RANGE, "%s: key 'position_embedding_type' = '%s'; expected "
                          "absolute, relative_key or relative_key_query", c->origin, pos);
    struct fg_node *n;
    if ((rc = fg__add_table(m, FG_NODE_VISION, "Visual projection", vw + 1 + 2, m->hidden, &n,
                            err)))
        return rc;
    n->stack = FG_STACK_TOWER;
    n->params += frames * vw; /* img_temperal_embedding */
    fg__fmt(n->desc, sizeof n->desc, "linear %llu -> %llu + LayerNorm", (unsigned long long)vw,
            (unsigned long long)m->hidden);
    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)) ||
        (rc = fg__add_table(m, FG_NODE_POS_EMBED, "Position embedding", m->max_pos, m->hidden,
                            NULL, err)) ||
        (rc = fg__add_norm(m, -1, "Embedding norm", m->hidden, FG_NORM_LN, err)))
        return rc;
    struct fg_attn_shape a = {.hidden = m->hidden, .heads = m->heads, .kv_heads = m->heads,
                              .head_dim = m->head_dim, .qkv_bias = true, .o_bias = true};
    struct fg_mlp_shape f = {.hidden = m->hidden, .inter = m->inter, .bias = true};
    /* post-norm: self-attention (with its distance embedding when relative), its norm, the
     * MLP, its norm */
    const struct fg_block_step block[] = {
        {.kind = FG_STEP_ATTN, .attn = &a,
         .extra = relative ? (2 * m->max_pos - 1) * m->head_dim : 0},
        {.kind = FG_STEP_NORM, .norm = FG_NORM_LN},
        {.kind = FG_STEP_MLP, .mlp = &f},
        {.kind = FG_STEP_NORM, .norm = FG_NORM_LN},
    };
    if ((rc = fg__add_blocks(m, block, sizeof block / sizeof block[0], err)))
        return rc;
    return fg__add_head(m, m->vocab, m->hidden, m->tied, false, true, err);
}

/* One Pix2Struct block: [RMS norm,] attention without biases, ... gated MLP wi_0 / wi_1 /
 * wo without biases; the norms are Pix2StructLayerNorm (T5's RMS, weight only). */
struct p2s_stack {
    uint64_t hidden, heads, head_dim, d_ff, layers, buckets;
    bool decoder;
};

static int p2s_stack(struct fg_model *m, const struct p2s_stack *k, struct fg_err *err)
{
    int rc;
    const uint64_t h = k->hidden;
    struct fg_attn_shape a = {.hidden = h, .heads = k->heads, .kv_heads = k->heads,
                              .head_dim = k->head_dim, .bidirectional = !k->decoder};
    struct fg_attn_shape x = a;
    x.cross = true;
    struct fg_mlp_shape f = {.hidden = h, .inter = k->d_ff, .gated = true};
    for (uint64_t l = 0; l < k->layers; l++) {
        int32_t li = (int32_t)l;
        struct fg_node *n;
        if ((rc = fg__add_norm(m, li, "Norm", h, FG_NORM_RMS, err)) ||
            (rc = fg__add_attention(m, li, &a, &n, err)))
            return rc;
        if (k->decoder && l == 0)
            n->params += k->buckets * k->heads; /* relative_attention_bias, layer 0 alone */
        if (k->decoder && ((rc = fg__add_norm(m, li, "Norm", h, FG_NORM_RMS, err)) ||
                           (rc = fg__add_attention(m, li, &x, NULL, err))))
            return rc;
        if ((rc = fg__add_norm(m, li, "Norm", h, FG_NORM_RMS, err)) ||
            (rc = fg__add_mlp(m, li, &f, NULL, err)))
            return rc;
    }
    return fg__add_norm(m, -1, k->decoder ? "Final norm" : "Norm", h, FG_NORM_RMS, err);
}

/*
 * Pix2StructForConditionalGeneration: encoder Pix2StructVisionModel (embeddings
 * patch_projection Linear(patch_embed_hidden_size, hidden) with bias, row_embedder and
 * column_embedder of seq_len rows; layers of pre_attention_layer_norm, attention query /
 * key / value hidden -> num_attention_heads x d_kv and output back, no biases,
 * pre_mlp_layer_norm, gated MLP to d_ff; layernorm), decoder Pix2StructTextModel
 * (embed_tokens; Pix2StructTextBlock: self-attention query / key / value / output hidden ->
 * hidden without biases, relative_attention_bias (buckets x num_heads) in block 0 only,
 * cross-attention of the same shape, gated MLP, each after its RMS norm; final_layer_norm;
 * lm_head without bias).  The vision layers' qkv_bias / mlp_bias / layer_norm_bias keys are
 * not read by these classes.  The head is tied by tie_word_embeddings (PretrainedConfig's
 * default true; the published configs say false).  Pix2StructTextConfig /
 * Pix2StructVisionConfig defaults (pix2struct-base); patch_embed_hidden_size, which that
 * config class does not define, defaults to 16 x 16 x 3.
 */
static int read_pix2struct(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                           struct fg_err *err)
{
    (void)spec;
    struct fg_cfg v = {.obj = NULL, .origin = c->origin, .scope = "vision_config"};
    struct fg_cfg t = {.obj = NULL, .origin = c->origin, .scope = "text_config"};
    struct p2s_stack e = {0}, d = {.decoder = true};
    uint64_t patch_in, seq_len, d_kv;
    bool tie, ttie;
    int rc;
    if ((fg_cfg_has(c, "vision_config") && !fg_cfg_child(c, "vision_config", &v, err)) ||
        (fg_cfg_has(c, "text_config") && !fg_cfg_child(c, "text_config", &t, err)))
        return err ? err->code : FG_E_TYPE;
    /* vision_config.tie_word_embeddings, which a save writes into every sub-config
     * (google/pix2struct-docvqa-base: true): Pix2StructVisionModel has no output embeddings
     * to tie, so the flag sizes nothing */
    (void)fg_cfg_has(&v, "tie_word_embeddings");
    if ((rc = fg_cfg_u64(&v, "hidden_size", 768, 1, FG_MAX_HIDDEN, &e.hidden, err)) ||
        (rc = fg_cfg_u64(&v, "num_hidden_layers", 12, 1, FG_MAX_LAYERS, &e.layers, err)) ||
        (rc = fg_cfg_u64(&v, "num_attention_heads", 12, 1, FG_MAX_HEADS, &e.heads, err)) ||
        (rc = fg_cfg_u64(&v, "d_kv", 64, 1, 1u << 14, &e.head_dim, err)) ||
        (rc = fg_cfg_u64(&v, "d_ff", 2048, 1, FG_MAX_INTER, &e.d_ff, err)) ||
        (rc = fg_cfg_u64(&v, "seq_len", 4096, 1, 1u << 20, &seq_len, err)) ||
        (rc = fg_cfg_u64(&v, "patch_embed_hidden_size", 768, 1, 1u << 20, &patch_in, err)) ||
        (rc = fg_cfg_u64(&t, "vocab_size", 50244, 1, FG_MAX_VOCAB, &m->vocab, err)) ||
        (rc = fg_cfg_u64(&t, "hidden_size", 768, 1, FG_MAX_HIDDEN, &d.hidden, err)) ||
        (rc = fg_cfg_u64(&t, "num_layers", 12, 1, FG_MAX_LAYERS, &d.layers, err)) ||
        (rc = fg_cfg_u64(&t, "num_heads", 12, 1, FG_MAX_HEADS, &d.heads, err)) ||
        (rc = fg_cfg_u64(&t, "d_kv", 64, 1, 1u << 14, &d_kv, err)) ||
        (rc = fg_cfg_u64(&t, "d_ff", 2048, 1, FG_MAX_INTER, &d.d_ff, err)) ||
        (rc = fg_cfg_u64(&t, "relative_attention_num_buckets", 32, 1, 1u << 16, &d.buckets,
                         err)) ||
        (rc = fg_cfg_bool(&t, "tie_word_embeddings", true, &ttie, err)) ||
        (rc = fg_cfg_bool(c, "tie_word_embeddings", ttie, &tie, err)) ||
        (rc = fg__check_heads(&t, "hidden_size", d.hidden, "num_heads", d.heads, err)))
        return rc;
    if (e.hidden != d.hidden)
        return fg_err_set(err, FG_E_RANGE, "%s: vision_config.hidden_size %llu differs from "
                          "text_config.hidden_size %llu: Pix2StructTextAttention's key / value "
                          "read the encoder at the text width", c->origin,
                          (unsigned long long)e.hidden, (unsigned long long)d.hidden);
    if (tie != ttie)
        fg__model_unsure(m, "tie_word_embeddings", "unsure: key 'tie_word_embeddings' is %s in "
                         "the root config and %s in text_config: whether lm_head is stored is "
                         "open", tie ? "true" : "false", ttie ? "true" : "false");
    /* Pix2StructTextAttention views hidden as num_heads x d_kv; its linears are hidden wide */
    d.head_dim = d.hidden / d.heads;
    if (d_kv != d.head_dim)
        return fg_err_set(err, FG_E_RANGE, "%s: text_config d_kv %llu x num_heads %llu is not "
                          "hidden_size %llu", c->origin, (unsigned long long)d_kv,
                          (unsigned long long)d.heads, (unsigned long long)d.hidden);
    m->hidden = d.hidden;
    m->heads = m->kv_heads = d.heads;
    m->head_dim = d.head_dim;
    m->inter = d.d_ff;
    m->layers = d.layers;
    m->max_pos = 512;
    m->enc_dec = true;

    size_t from = m->n_nodes;
    struct fg_node *n;
    if ((rc = fg__add_table(m, FG_NODE_OTHER, "Patch embedding", patch_in + 1 + 2 * seq_len,
                            e.hidden, &n, err)))
        return rc;
    fg__fmt(n->desc, sizeof n->desc, "linear %llu -> %llu, row/column tables %llu",
            (unsigned long long)patch_in, (unsigned long long)e.hidden,
            (unsigned long long)seq_len);
    if ((rc = p2s_stack(m, &e, err)))
        return rc;
    fg__seq_mark_encoder(m, from);
    if ((rc = fg__add_embedding(m, m->vocab, d.hidden, err)) || (rc = p2s_stack(m, &d, err)))
        return rc;
    return fg__add_head(m, m->vocab, d.hidden, tie, false, false, err);
}

/*
 * GotOcr2VisionEncoder (SAM's image encoder): patch_embed Conv2d(num_channels, hidden,
 * patch, stride patch) with bias; pos_embed (image / patch)^2 x hidden when use_abs_pos;
 * layers of layer_norm1, qkv hidden -> 3 x hidden (bias by qkv_bias) and proj (bias),
 * rel_pos_h / rel_pos_w of 2 x side - 1 rows x head_dim when use_rel_pos (side =
 * window_size, or image / patch in the global_attn_indexes layers), layer_norm2, lin1 / lin2
 * to mlp_dim (biased); neck conv1 1x1 hidden -> output_channels and conv2 3x3, no biases,
 * each followed by a LayerNorm2d (weight + bias).  GotOcr2MultiModalProjector:
 * conv_upsampler1 3x3 output_channels -> 2x, conv_upsampler2 3x3 -> text hidden (no
 * biases), multimodal_projector Linear(text hidden, text hidden).  GotOcr2VisionConfig
 * defaults.
 */
static int got_vision(struct fg_model *m, const struct fg_cfg *v, uint64_t text_h,
                      struct fg_err *err)
{
    uint64_t h, out, L, heads, ch, image, patch, win, mlp;
    bool qkv_bias, abs_pos, rel_pos;
    int rc;
    if ((rc = fg_cfg_u64(v, "hidden_size", 768, 1, FG_MAX_HIDDEN, &h, err)) ||
        (rc = fg_cfg_u64(v, "output_channels", 256, 1, FG_MAX_HIDDEN, &out, err)) ||
        (rc = fg_cfg_u64(v, "num_hidden_layers", 12, 1, FG_MAX_LAYERS, &L, err)) ||
        (rc = fg_cfg_u64(v, "num_attention_heads", 12, 1, FG_MAX_HEADS, &heads, err)) ||
        (rc = fg_cfg_u64(v, "num_channels", 3, 1, 64, &ch, err)) ||
        (rc = fg_cfg_u64(v, "image_size", 1024, 1, 1u << 16, &image, err)) ||
        (rc = fg_cfg_u64(v, "patch_size", 16, 1, 1u << 12, &patch, err)) ||
        (rc = fg_cfg_u64(v, "window_size", 14, 0, 1u << 12, &win, err)) ||
        (rc = fg_cfg_u64(v, "mlp_dim", 3072, 1, FG_MAX_INTER, &mlp, err)) ||
        (rc = fg_cfg_bool(v, "qkv_bias", true, &qkv_bias, err)) ||
        (rc = fg_cfg_bool(v, "use_abs_pos", true, &abs_pos, err)) ||
        (rc = fg_cfg_bool(v, "use_rel_pos", true, &rel_pos, err)) ||
        (rc = fg__check_heads(v, "hidden_size", h, "num_attention_heads", heads, err)))
        return rc;
    /* global_attn_indexes: the layers attending over the whole grid (default 2, 5, 8, 11) */
    bool global[FG_MAX_LAYERS] = {false};
    uint64_t gi[FG_MAX_LAYERS];
    size_t ng = 0;
    if (!fg_cfg_has(v, "global_attn_indexes")) {
        for (uint64_t i = 2; i < L && i <= 11; i += 3)
            global[i] = true;
    } else if ((rc = fg_cfg_u64_array(v, "global_attn_indexes", 0, L - 1, gi, FG_MAX_LAYERS, &ng,
                                      err))) {
        return rc;
    }
    for (size_t i = 0; i < ng && i < FG_MAX_LAYERS; i++)
        global[gi[i]] = true;
    const uint64_t side = image / patch, hd = h / heads;
    struct fg_node *n = fg__model_add(m, FG_NODE_VISION, -1, "Vision tower", err);
    if (!n)
        return FG_E_NOMEM;
    n->stack = FG_STACK_TOWER;
    fg__mm_tower_blocks(n, &(struct fg_mm_blocks){.h = h, .f = mlp, .L = L, .fused_qkv = true,
                                                  .qkv_bias = qkv_bias, .o_bias = true,
                                                  .mlp_bias = true});
    n->params += L * 2 * 2 * h + ch * patch * patch * h + h + (abs_pos ? side * side * h : 0);
    for (uint64_t l = 0; rel_pos && l < L; l++)
        n->params += 2 * (2 * (global[l] || !win ? side : win) - 1) * hd;
    n->params += h * out + 2 * out + out * out * 9 + 2 * out; /* neck */
    n->hidden = (uint32_t)h;
    n->width = (uint32_t)out;
    n->heads = n->kv_heads = (uint32_t)heads;
    n->head_dim = n->v_head_dim = (uint32_t)hd;
    n->inter = (uint32_t)mlp;
    n->bidirectional = 1;
    fg__fmt(n->desc, sizeof n->desc, "SAM ViT %llu x %llu, %llu x %llu grid, window %llu",
            (unsigned long long)L, (unsigned long long)h, (unsigned long long)side,
            (unsigned long long)side, (unsigned long long)win);
    if (!(n = fg__model_add(m, FG_NODE_VISION, -1, "Projector", err)))
        return FG_E_NOMEM;
    n->stack = FG_STACK_TOWER;
    n->params = out * 2 * out * 9 + 2 * out * text_h * 9;
    fg__node_linear(n, "proj", text_h, text_h, 1, true);
    n->hidden = (uint32_t)out;
    n->width = (uint32_t)text_h;
    fg__fmt(n->desc, sizeof n->desc, "2 strided 3x3 convs %llu -> %llu, linear",
            (unsigned long long)out, (unsigned long long)text_h);
    return 0;
}

/* A wrapper's vision_config and text_config as views v and t (v empty when absent); without
 * text_config t reads def, the JSON of the text config class's values ("{}": its
 * defaults), and m gets the note.  *own: that document, which the caller frees with
 * cJSON_Delete (NULL otherwise).  FG_E_TYPE naming a sub-config that is not an object,
 * FG_E_NOMEM. */
static int wrapper_views(const struct fg_cfg *c, struct fg_model *m, const char *def,
                         const char *note, struct fg_cfg *v, struct fg_cfg *t, cJSON **own,
                         struct fg_err *err)
{
    *v = (struct fg_cfg){.obj = NULL, .origin = c->origin, .scope = "vision_config"};
    *t = (struct fg_cfg){.obj = NULL, .origin = c->origin, .scope = "text_config"};
    *own = NULL;
    if ((fg_cfg_has(c, "vision_config") && !fg_cfg_child(c, "vision_config", v, err)) ||
        (fg_cfg_has(c, "text_config") && !fg_cfg_child(c, "text_config", t, err)))
        return err ? err->code : FG_E_TYPE;
    if (!t->obj) {
        if (!(*own = cJSON_Parse(def)))
            return fg_err_set(err, FG_E_NOMEM, "out of memory building the default text_config");
        t->obj = *own;
        fg__model_note(m, "%s", note);
    }
    return 0;
}

/* *out: the registered reader of the text model type tt; FG_E_UNSUPPORTED when fitgate has
 * none, or only the wrapper's own reader self. */
static int text_reader(const struct fg_cfg *c, const struct fg_model *m, const char *tt,
                       fg_arch_read_fn self, const struct fg_arch **out, struct fg_err *err)
{
    *out = m->arch_find ? m->arch_find(tt) : NULL;
    if (*out && (*out)->read != self)
        return 0;
    return fg_err_set(err, FG_E_UNSUPPORTED, "%s: key 'text_config.model_type' is '%s', which "
                      "fitgate has no text reader for", c->origin, tt);
}

/* GotOcr2Config's text model when config.json has no text_config. */
static const char got_text_default[] =
    "{\"model_type\": \"qwen2\", \"vocab_size\": 151860, \"hidden_size\": 1024, "
    "\"intermediate_size\": 2816, \"num_hidden_layers\": 24, \"num_attention_heads\": 16, "
    "\"num_key_value_heads\": 16, \"max_position_embeddings\": 32768, "
    "\"tie_word_embeddings\": true}";

/*
 * GotOcr2ForConditionalGeneration: the vision tower and projector above, language_model
 * AutoModel(text_config) (model_type qwen2 when absent) read by that type's own reader,
 * lm_head Linear(text hidden, text vocab, bias=False) tied as text_config says (the text
 * reader's head).  Without text_config, GotOcr2Config's own Qwen2 values.
 */
static int read_got_ocr2(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                         struct fg_err *err)
{
    (void)spec;
    struct fg_cfg v, t;
    cJSON *own;
    const char *tt = NULL;
    const struct fg_arch *a = NULL;
    uint64_t text_h = 0;
    int rc = wrapper_views(c, m, got_text_default, "text_config absent: the text model is "
                           "GotOcr2Config's default Qwen2", &v, &t, &own, err);
    if (rc)
        return rc;
    if ((rc = fg_cfg_str(&t, "model_type", "qwen2", &tt, err)) ||
        (rc = fg_cfg_u64(&t, "hidden_size", 1024, 1, FG_MAX_HIDDEN, &text_h, err)) ||
        (rc = text_reader(c, m, tt, read_got_ocr2, &a, err)))
        goto out;
    if ((rc = got_vision(m, &v, text_h, err)) || (rc = a->read(&t, m, a->spec, err)))
        goto out;
out:
    cJSON_Delete(own);
    return rc;
}

/* A list of up to FG_DAVIT_STAGES whole numbers under `key` of v (its default when absent);
 * *n its length.  FG_E_TYPE / FG_E_RANGE naming the key. */
#define FG_DAVIT_STAGES 8
static int read_list(const struct fg_cfg *v, const char *key, const uint64_t *def, size_t ndef,
                     uint64_t max, uint64_t *out, size_t *n, struct fg_err *err)
{
    const cJSON *a = fg__cfg_item(v, key), *e;
    *n = 0;
    if (!a) {
        for (; *n < ndef; (*n)++)
            out[*n] = def[*n];
        return 0;
    }
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) < 1 || cJSON_GetArraySize(a) > FG_DAVIT_STAGES)
        return fg_err_set(err, FG_E_TYPE, "%s: key '%s.%s' is not a list of 1 to %d numbers",
                          v->origin, v->scope, key, FG_DAVIT_STAGES);
    cJSON_ArrayForEach(e, a) {
        double x = cJSON_IsBool(e) ? (cJSON_IsTrue(e) ? 1 : 0) : e->valuedouble;
        if ((!cJSON_IsNumber(e) && !cJSON_IsBool(e)) || x < 0 || x > (double)max ||
            x != (double)(uint64_t)x)
            return fg_err_set(err, FG_E_RANGE, "%s: key '%s.%s' holds an entry that is not a "
                              "whole number up to %llu", v->origin, v->scope, key,
                              (unsigned long long)max);
        out[(*n)++] = (uint64_t)x;
    }
    return 0;
}

/*
 * Florence2VisionBackbone (DaViT): per stage s, Florence2VisionConvEmbed (conv in ->
 * embed_dim[s], kernel patch_size[s], with bias; a LayerNorm over the input channels when
 * patch_prenorm[s], else over embed_dim[s]) and depths[s] Florence2VisionBlocks, each a
 * spatial block (depthwise 3x3 conv with bias, LayerNorm, window attention qkv C -> 3C (bias
 * by qkv_bias) + proj (bias), depthwise conv, LayerNorm, fc1 / fc2 to C x mlp_ratio with
 * bias) and a channel block of the same tensors (grouped channel attention).
 * Florence2MultiModalProjector: image_projection C_last -> projection_dim without bias,
 * image_proj_norm, row / column embeddings of max_position_embeddings rows (C_last / 2 and
 * the rest wide), and visual_temporal_embed's pos_idx_to_embed, a persistent buffer of
 * max_temporal_embeddings x C_last (stored).  Florence2VisionConfig defaults.
 */
static int florence_vision(struct fg_model *m, const struct fg_cfg *v, struct fg_err *err)
{
    static const uint64_t d_dim[] = {128, 256, 512, 1024}, d_depth[] = {1, 1, 9, 1},
                          d_heads[] = {4, 8, 16, 32}, d_patch[] = {7, 3, 3, 3},
                          d_pre[] = {0, 1, 1, 1};
    uint64_t dim[FG_DAVIT_STAGES], depth[FG_DAVIT_STAGES], heads[FG_DAVIT_STAGES],
        patch[FG_DAVIT_STAGES], pre[FG_DAVIT_STAGES], groups[FG_DAVIT_STAGES];
    size_t n, nd, nh, np, npre, ng;
    uint64_t in, proj, maxpos, temporal;
    double ratio;
    bool qkv_bias;
    int rc;
    if ((rc = read_list(v, "embed_dim", d_dim, 4, FG_MAX_HIDDEN, dim, &n, err)) ||
        (rc = read_list(v, "depths", d_depth, 4, FG_MAX_LAYERS, depth, &nd, err)) ||
        (rc = read_list(v, "num_heads", d_heads, 4, FG_MAX_HEADS, heads, &nh, err)) ||
        (rc = read_list(v, "num_groups", d_heads, 4, FG_MAX_HEADS, groups, &ng, err)) ||
        (rc = read_list(v, "patch_size", d_patch, 4, 64, patch, &np, err)) ||
        (rc = read_list(v, "patch_prenorm", d_pre, 4, 1, pre, &npre, err)) ||
        (rc = fg_cfg_u64(v, "in_channels", 3, 1, 64, &in, err)) ||
        (rc = fg_cfg_u64(v, "projection_dim", 1024, 1, FG_MAX_HIDDEN, &proj, err)) ||
        (rc = fg_cfg_u64(v, "max_position_embeddings", 50, 1, 1u << 16, &maxpos, err)) ||
        (rc = fg_cfg_u64(v, "max_temporal_embeddings", 100, 1, 1u << 16, &temporal, err)) ||
        (rc = fg_cfg_f64(v, "mlp_ratio", 4.0, 0.01, 64.0, &ratio, err)) ||
        (rc = fg_cfg_bool(v, "qkv_bias", true, &qkv_bias, err)))
        return rc;
    if (nd != n || nh != n || ng != n || np != n || npre != n)
        return fg_err_set(err, FG_E_RANGE, "%s: vision_config lists embed_dim, depths, "
                          "num_heads, num_groups, patch_size and patch_prenorm of different "
                          "lengths: Florence2VisionBackbone needs one entry per stage", v->origin);
    for (size_t s = 0; s < n; s++) {
        const uint64_t C = dim[s], r = (uint64_t)((double)C * ratio), cin = s ? dim[s - 1] : in;
        struct fg_node *t = fg__model_add(m, FG_NODE_VISION, -1, "Vision stage", err);
        if (!t)
            return FG_E_NOMEM;
        t->stack = FG_STACK_TOWER;
        t->params = cin * C * patch[s] * patch[s] + C + 2 * (pre[s] ? cin : C);
        /* per block: spatial + channel halves, each two depthwise convs, two norms */
        fg__node_linear(t, "qkv", C, 3 * C, 2 * depth[s], qkv_bias);
        fg__node_linear(t, "o", C, C, 2 * depth[s], true);
        fg__node_linear(t, "up", C, r, 2 * depth[s], true);
        fg__node_linear(t, "down", r, C, 2 * depth[s], true);
        t->params += 2 * depth[s] * (2 * (9 * C + C) + 2 * 2 * C);
        t->hidden = (uint32_t)cin;
        t->width = (uint32_t)C;
        t->heads = t->kv_heads = (uint32_t)heads[s];
        t->inter = (uint32_t)r;
        t->bidirectional = 1;
        fg__fmt(t->desc, sizeof t->desc, "DaViT stage %zu: %llu x %llu wide", s + 1,
                (unsigned long long)depth[s], (unsigned long long)C);
    }
    const uint64_t last = dim[n - 1];
    struct fg_node *p;
    if ((rc = fg__add_table(m, FG_NODE_VISION, "Projector", maxpos + 2, proj, &p, err)))
        return rc;
    p->stack = FG_STACK_TOWER;
    p->params = maxpos * last + 2 * proj + temporal * last;
    p->buffers = temporal * last;
    fg__node_linear(p, "proj", last, proj, 1, false);
    fg__fmt(p->desc, sizeof p->desc, "linear %llu -> %llu, 2D positions, temporal table",
            (unsigned long long)last, (unsigned long long)proj);
    return 0;
}

/*
 * Florence2ForConditionalGeneration: the backbone and projector above, language_model
 * AutoModel(text_config) (BartModel; model_type bart when absent) read by that type's own
 * reader, lm_head Linear(text hidden, text vocab, bias=False) tied to the shared embedding
 * by tie_word_embeddings (Florence2Config default true); no final_logits_bias.
 */
static int read_florence2(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                          struct fg_err *err)
{
    (void)spec;
    struct fg_cfg v, t;
    cJSON *own;
    const char *tt = NULL;
    const struct fg_arch *a = NULL;
    bool tie;
    int rc = wrapper_views(c, m, "{}", "text_config absent: the text model uses the BartConfig "
                           "defaults", &v, &t, &own, err);
    if (rc)
        return rc;
    if ((rc = fg_cfg_str(&t, "model_type", "bart", &tt, err)) ||
        (rc = fg_cfg_bool(c, "tie_word_embeddings", true, &tie, err)))
        goto out;
    if (!strcmp(tt, "florence2_language")) {
        /* microsoft/Florence-2-*: the remote-code layout (davit vision_config spellings) */
        rc = fg_err_set(err, FG_E_UNSUPPORTED, "%s: key 'text_config.model_type' is "
                        "'florence2_language', Microsoft's remote-code Florence-2 layout: size "
                        "its transformers conversion (florence-community/Florence-2-*) instead",
                        c->origin);
        goto out;
    }
    if ((rc = text_reader(c, m, tt, read_florence2, &a, err)) ||
        (rc = florence_vision(m, &v, err)) || (rc = a->read(&t, m, a->spec, err)))
        goto out;
    /* the text reader built the base model (its text_config names no head class) */
    rc = fg__add_head(m, m->vocab, m->hidden, tie, false, false, err);
out:
    cJSON_Delete(own);
    return rc;
}

const struct fg_arch fg__arch_seq_mm_table[] = {
#include "arch/vision/florence_git_fuyu.def"
    {0},
};
