/*
 * efficient_attention.c - the efficient-attention encoders of transformers' masked-LM list, each
 * from its modeling file at the commit read_file returned (xlnet_xlm_funnel.c has the task-table
 * helpers):
 *
 *   nystromformer NystromformerForMaskedLM models/nystromformer/modeling_nystromformer.py
 *   yoso          YosoForMaskedLM          models/yoso/modeling_yoso.py
 *   mra           MraForMaskedLM           models/mra/modeling_mra.py
 *   reformer      ReformerModelWithLMHead  models/reformer/modeling_reformer.py (and
 *                 ReformerForMaskedLM)
 *   perceiver     PerceiverForMaskedLM     models/perceiver/modeling_perceiver.py
 *
 * Their attention approximations (landmarks, hashing, blocks, LSH buckets) change no
 * stored shape; the graph counts full attention scores for them, an upper bound on what
 * the approximations keep.
 */
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/encoder/xlnet_xlm_funnel.h"
#include "util/fmt.h"

/* ---- Nystromformer, YOSO, MRA ------------------------------------------------------------- */

enum { LH_CLS = FG_ENC2_H_FAMILY, LH_CHOICE };

/* NystromformerClassificationHead (dense + out_proj) for sequence classification, and
 * pre_classifier + classifier for multiple choice; YOSO and MRA copy both. */
static const struct fg_enc2_task landmark_rows[] = {
    {"ForMaskedLM", FG_ENC2_H_LM, 0},
    {"Model", FG_ENC2_H_NONE, 0},
    {"ForSequenceClassification", LH_CLS, FG_ENC2_LABELS},
    {"ForMultipleChoice", LH_CHOICE, 0},
    {"ForTokenClassification", FG_ENC2_H_LABELS, FG_ENC2_LABELS},
    {"ForQuestionAnswering", FG_ENC2_H_LABELS, FG_ENC2_LABELS},
    {NULL, 0, 0},
};

struct landmark {
    struct fg_enc2_tasks tasks;
    struct fg_core_defaults d;
    uint64_t types_def;
    const char *conv_key;      /* the depthwise conv over values, or NULL */
    uint64_t conv_def;         /* its kernel when the key is absent (0: none) */
};

/* NystromformerConfig, YosoConfig and MraConfig defaults. */
static const struct landmark nystromformer = {
    {"Nystromformer", landmark_rows, 1},
    {.vocab = 30000, .hidden = 768, .inter = 3072, .layers = 12, .heads = 12, .max_pos = 510,
     .tie = true}, 2, "conv_kernel_size", 65};
static const struct landmark yoso = {
    {"Yoso", landmark_rows, 1},
    {.vocab = 50265, .hidden = 768, .inter = 3072, .layers = 12, .heads = 12, .max_pos = 4096,
     .tie = true}, 1, "conv_window", 0};
static const struct landmark mra = {
    {"Mra", landmark_rows, 1},
    {.vocab = 50265, .hidden = 768, .inter = 3072, .layers = 12, .heads = 12, .max_pos = 512,
     .tie = true}, 1, NULL, 0};

/*
 * NystromformerModel (huggingface/transformers@0085ddcdb07f
 * models/nystromformer/modeling_nystromformer.py; YosoModel at 004edfe2dc0f and MraModel at
 * 001aea8f1909 build the same modules): embeddings word, position of
 * max_position_embeddings + 2 rows, token type, LayerNorm; BERT's layers, whose
 * self-attention adds (Nystromformer with conv_kernel_size, YOSO with conv_window) a
 * depthwise Conv2d over the values of heads x kernel weights without bias; no pooler.  The
 * position_ids buffer was persistent before the 4.31 sweep of such buffers (the file read
 * at 0085ddcd says "exported when serialized"): counted for configs written before it.
 */
static int read_landmark(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                         struct fg_err *err)
{
    const struct landmark *f = spec;
    const struct fg_enc2_task *t;
    uint64_t labels, types, conv = 0;
    int rc;
    if ((rc = fg__read_core(c, m, &f->d, err)) ||
        (rc = fg_cfg_u64(c, "type_vocab_size", f->types_def, 1, FG_MAX_VOCAB, &types, err)) ||
        (f->conv_key && (rc = fg_cfg_u64(c, f->conv_key, f->conv_def, 0, 1u << 16, &conv,
                                         err))) ||
        (rc = fg__enc2_task(c, m, &f->tasks, &t, &labels, err)))
        return rc;
    uint64_t h = m->hidden, max_pos = m->max_pos;
    struct fg_node *n;
    m->max_pos = max_pos + 2;
    rc = fg__enc2_bert_embeddings(m, types, NULL, err);
    m->max_pos = max_pos;
    if (rc)
        return rc;
    unsigned ver = fg__cfg_tf_version(c);
    if (ver && ver < 4031) {
        n = &m->nodes[m->n_nodes - 3]; /* the position table, before token types and norm */
        n->params += max_pos;
        n->buffers += max_pos;
        fg__model_rule(m, "embeddings.position_ids buffer stored (written by transformers "
                          "< 4.31; in Position embedding)", 0);
    }
    struct fg_enc2_block b = fg__enc2_bert_block(m, 0);
    b.attn_extra = m->heads * conv;
    if ((rc = fg__enc2_blocks(m, m->layers, &b, err)))
        return rc;
    m->encoder_only = true;
    m->tied = true;
    switch (t->head) {
    case FG_ENC2_H_LM:
        return fg__enc2_mlm(c, m, h, 0, false, err);
    case FG_ENC2_H_LABELS:
    case LH_CLS:
    case LH_CHOICE:
        if ((rc = fg__enc2_head(m, "Task head", h, t->head == LH_CHOICE ? 1 : labels, true, &n,
                                err)))
            return rc;
        if (t->head != FG_ENC2_H_LABELS)
            fg__node_linear(n, "dense", h, h, 1, true);
        return 0;
    }
    return 0;
}

/* ---- Reformer -------------------------------------------------------------------------------- */

enum { RH_CLS = FG_ENC2_H_FAMILY };

static const struct fg_enc2_task reformer_rows[] = {
    {"ModelWithLMHead", FG_ENC2_H_LM, 0},
    {"ForMaskedLM", FG_ENC2_H_LM, 0},
    {"Model", FG_ENC2_H_NONE, 0},
    {"ForSequenceClassification", RH_CLS, FG_ENC2_LABELS},
    {"ForQuestionAnswering", FG_ENC2_H_LABELS, FG_ENC2_LABELS},
    {NULL, 0, 0},
};
static const struct fg_enc2_tasks reformer_tasks = {"Reformer", reformer_rows, 2};

struct reformer {
    bool lsh[FG_MAX_LAYERS];
    uint64_t q;                /* num_attention_heads x attention_head_size */
    uint64_t buffers[2];       /* stored mask-value scalars of a local / an LSH layer */
};

/* ReformerLayer: ReformerAttention layer_norm, LSHSelfAttention query_key / value or
 * LocalSelfAttention query / key / value (hidden -> heads x head size, no bias),
 * ReformerSelfOutput dense back (no bias); ChunkReformerFeedForward layer_norm, dense and
 * output (biased). */
static int reformer_layer(struct fg_model *m, int32_t li, const void *ctx, struct fg_err *err)
{
    const struct reformer *r = ctx;
    uint64_t h = m->hidden;
    bool lsh = r->lsh[li];
    struct fg_attn_shape a = {.hidden = h, .heads = m->heads, .kv_heads = m->heads,
                              .head_dim = m->head_dim, .fused_qkv = false};
    struct fg_mlp_shape f = {.hidden = h, .inter = m->inter, .bias = true};
    struct fg_node *n;
    int rc;
    if ((rc = fg__add_norm(m, li, "Norm", h, FG_NORM_LN, err)) ||
        (rc = fg__add_attention(m, li, &a, &n, err)))
        return rc;
    if (lsh) { /* query and key are one projection: drop k */
        n->params -= h * r->q;
        for (uint8_t i = 0; i + 1 < n->nlin; i++)
            if (!strcmp(n->lin[i].role, "k")) {
                memmove(&n->lin[i], &n->lin[i + 1],
                        (size_t)(n->nlin - i - 1) * sizeof n->lin[0]);
                n->nlin--;
                break;
            }
    }
    n->params += r->buffers[lsh];
    n->buffers += r->buffers[lsh];
    fg__copy(n->desc, sizeof n->desc, lsh ? "LSH self-attention" : "local self-attention");
    if ((rc = fg__add_norm(m, li, "Norm", h, FG_NORM_LN, err)) ||
        (rc = fg__add_mlp(m, li, &f, NULL, err)))
        return rc;
    return 0;
}

/* attn_layers: "lsh" and "local" entries (ReformerAttention raises on another).  ReformerConfig
 * sets num_hidden_layers to their count; ReformerEncoder builds num_hidden_layers layers, and
 * ReformerAttention indexes attn_layers by layer only when it mixes both kinds.  Fills r->lsh
 * and m->layers. */
static int reformer_layers(const struct fg_cfg *c, struct fg_model *m, struct reformer *r,
                           struct fg_err *err)
{
    const char *types[FG_MAX_LAYERS];
    size_t nt = 0;
    int rc = fg_cfg_str_array(c, "attn_layers", types, FG_MAX_LAYERS, &nt, err);
    if (rc)
        return rc;
    if (!fg_cfg_has(c, "attn_layers")) { /* ReformerConfig default */
        static const char *const def[] = {"local", "lsh", "local", "lsh", "local", "lsh"};
        memcpy(types, def, sizeof def);
        nt = 6;
    }
    if (nt == 0 || nt > FG_MAX_LAYERS)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'attn_layers' holds %zu layers; expected "
                          "1 to %u", c->origin, nt, FG_MAX_LAYERS);
    size_t nlsh = 0;
    for (size_t i = 0; i < nt; i++) {
        bool lsh = !strcmp(types[i], "lsh");
        if (!lsh && strcmp(types[i], "local"))
            return fg_err_set(err, FG_E_RANGE, "%s: key 'attn_layers[%zu]' = '%s'; expected "
                              "lsh or local", c->origin, i, types[i]);
        nlsh += lsh;
    }
    if ((rc = fg_cfg_u64(c, "num_hidden_layers", nt, 1, FG_MAX_LAYERS, &m->layers, err)))
        return rc;
    bool mixed = nlsh && nlsh < nt;
    if (mixed && m->layers > nt)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'num_hidden_layers' = %llu but "
                          "'attn_layers' names %zu mixed layers: ReformerAttention has no "
                          "kind for the others", c->origin, (unsigned long long)m->layers, nt);
    for (uint64_t i = 0; i < m->layers; i++)
        r->lsh[i] = mixed ? !strcmp(types[i], "lsh") : nlsh > 0;
    return 0;
}

/*
 * ReformerModel (huggingface/transformers@000824f17f92 models/reformer/
 * modeling_reformer.py): word_embeddings, AxialPositionEmbeddings (one weight of
 * axial_pos_shape[i] x axial_pos_embds_dim[i] per axis, the dims summing to hidden) or,
 * without axial_pos_embds, a position table of max_position_embeddings; the layers of
 * attn_layers; the encoder's LayerNorm over 2 x hidden (the two reversible streams).
 * ReformerOnlyLMHead decoder 2 x hidden -> vocab without bias and its bias, untied
 * (tie_word_embeddings false by default: the widths differ).  The mask-value scalars the
 * attentions register (2 per local, 4 per LSH layer) were persistent in the releases that
 * wrote the Google checkpoints and are not now; the release between 4.0 and 4.31 that
 * changed it is not pinned here.  Reversible layers recompute their activations in
 * backward: the graph's stored activations are an upper bound.  ReformerConfig defaults.
 */
static int read_reformer(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                         struct fg_err *err)
{
    (void)spec;
    struct reformer r;
    const struct fg_enc2_task *t;
    uint64_t labels, head_size, shape[8], dims[8];
    size_t ns = 0, nd = 0;
    bool axial, decoder, tie;
    int rc;
    memset(&r, 0, sizeof r);
    if ((rc = fg_cfg_u64(c, "vocab_size", 320, 1, FG_MAX_VOCAB, &m->vocab, err)) ||
        (rc = fg_cfg_u64(c, "hidden_size", 256, 1, FG_MAX_HIDDEN, &m->hidden, err)) ||
        (rc = fg_cfg_u64(c, "num_attention_heads", 2, 1, FG_MAX_HEADS, &m->heads, err)) ||
        (rc = fg_cfg_u64(c, "attention_head_size", 64, 1, 1u << 14, &head_size, err)) ||
        (rc = fg_cfg_u64(c, "feed_forward_size", 512, 1, FG_MAX_INTER, &m->inter, err)) ||
        (rc = fg_cfg_u64(c, "max_position_embeddings", 4096, 1, FG_MAX_POS, &m->max_pos, err)) ||
        (rc = fg_cfg_bool(c, "axial_pos_embds", true, &axial, err)) ||
        (rc = fg_cfg_bool(c, "is_decoder", false, &decoder, err)) ||
        (rc = fg_cfg_bool(c, "tie_word_embeddings", false, &tie, err)) ||
        (rc = fg_cfg_u64_array(c, "axial_pos_shape", 1, FG_MAX_POS, shape, 8, &ns, err)) ||
        (rc = fg_cfg_u64_array(c, "axial_pos_embds_dim", 1, FG_MAX_HIDDEN, dims, 8, &nd, err)) ||
        (rc = reformer_layers(c, m, &r, err)) ||
        (rc = fg__enc2_task(c, m, &reformer_tasks, &t, &labels, err)))
        return rc;
    if (tie)
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: key 'tie_word_embeddings' is true: "
                          "Reformer's LM head is 2 x hidden_size wide and cannot share the "
                          "embedding", c->origin);
    if (!fg_cfg_has(c, "axial_pos_shape"))
        shape[0] = 64, shape[1] = 64, ns = 2;
    if (!fg_cfg_has(c, "axial_pos_embds_dim"))
        dims[0] = 64, dims[1] = 192, nd = 2;
    uint64_t h = m->hidden, sum = 0;
    for (size_t i = 0; i < nd && i < 8; i++)
        sum += dims[i];
    if (axial && (ns != nd || ns > 8 || sum != h))
        return fg_err_set(err, FG_E_RANGE, "%s: keys 'axial_pos_shape' (%zu axes) and "
                          "'axial_pos_embds_dim' (%zu, summing to %llu) must have one entry "
                          "per axis and sum to hidden_size %llu", c->origin, ns, nd,
                          (unsigned long long)sum, (unsigned long long)h);
    m->head_dim = head_size;
    m->kv_heads = m->heads;
    r.q = m->heads * head_size;
    unsigned ver = fg__cfg_tf_version(c);
    if (!ver || ver < 4031) {
        r.buffers[0] = 2;
        r.buffers[1] = 4;
        fg__model_rule(m, "attention mask-value buffers stored (written by transformers "
                          "< 4.31; in Attention)", 0);
        if (ver >= 4000)
            fg__model_unsure(m, "transformers_version", "unsure: key 'transformers_version' "
                             "falls between 4.0 and 4.31, where the release that stopped "
                             "storing Reformer's mask-value buffers is not pinned: counted "
                             "with them");
    }
    struct fg_node *n;
    if ((rc = fg__add_embedding(m, m->vocab, h, err)) ||
        (rc = fg__add_table(m, FG_NODE_POS_EMBED, "Position embedding", axial ? 0 : m->max_pos,
                            h, &n, err)))
        return rc;
    if (axial) {
        for (size_t i = 0; i < ns; i++)
            n->params += shape[i] * dims[i];
        fg__fmt(n->desc, sizeof n->desc, "axial, %zu axes", ns);
    }
    /* layers differ by attn_layers: each is built, none repeated */
    for (uint64_t l = 0; l < m->layers; l++)
        if ((rc = reformer_layer(m, (int32_t)l, &r, err)))
            return rc;
    if ((rc = fg__add_norm(m, -1, "Final norm", 2 * h, FG_NORM_LN, err)))
        return rc;
    m->encoder_only = !decoder;
    m->tied = false;
    switch (t->head) {
    case FG_ENC2_H_LM:
        return fg__enc2_head(m, "LM head", 2 * h, m->vocab, true, NULL, err);
    case FG_ENC2_H_LABELS:
        return fg__enc2_head(m, "Task head", 2 * h, labels, true, NULL, err);
    case RH_CLS: /* ReformerClassificationHead: dense 2 x hidden -> hidden, out_proj */
        if ((rc = fg__enc2_head(m, "Task head", h, labels, true, &n, err)))
            return rc;
        fg__node_linear(n, "dense", 2 * h, h, 1, true);
        return 0;
    }
    return 0;
}


/* ---- Perceiver ------------------------------------------------------------------------------- */

enum { PH_CLS = FG_ENC2_H_FAMILY };

/* The text classes: PerceiverForMaskedLM and PerceiverForSequenceClassification.  The
 * image, optical-flow and multimodal classes build preprocessors this reader does not
 * size (unsure, by fg__enc2_task). */
static const struct fg_enc2_task perceiver_rows[] = {
    {"ForMaskedLM", FG_ENC2_H_LM, 0},
    {"ForSequenceClassification", PH_CLS, FG_ENC2_LABELS},
    {NULL, 0, 0},
};
static const struct fg_enc2_tasks perceiver_tasks = {"Perceiver", perceiver_rows, 0};

struct perceiver_layer {
    bool cross;
    uint64_t q_dim, kv_dim, qk, v, heads, widening;
};

/*
 * PerceiverLayer: PerceiverSelfAttention layernorm1 (q_dim), layernorm2 (kv_dim, cross
 * only), query q_dim -> qk, key kv_dim -> qk, value kv_dim -> v (biased); PerceiverSelfOutput
 * dense v -> q_dim (cross) or v (self); layernorm (q_dim); PerceiverMLP dense1 / dense2 of
 * widening x q_dim (biased).
 */
static int perceiver_layer(struct fg_model *m, int32_t li, const struct perceiver_layer *p,
                           struct fg_err *err)
{
    struct fg_node *n = fg__model_add_block(m, FG_NODE_ATTN, li,
                                            p->cross ? "CrossAttention" : "Attention", err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "q", p->q_dim, p->qk, 1, true);
    fg__node_linear(n, "k", p->kv_dim, p->qk, 1, true);
    fg__node_linear(n, "v", p->kv_dim, p->v, 1, true);
    fg__node_linear(n, "o", p->v, p->cross ? p->q_dim : p->v, 1, true);
    n->params += 2 * p->q_dim + (p->cross ? 2 * p->kv_dim : 0);
    n->hidden = n->width = (uint32_t)p->q_dim;
    n->heads = n->kv_heads = (uint32_t)p->heads;
    n->head_dim = (uint32_t)(p->qk / p->heads);
    n->v_head_dim = (uint32_t)(p->v / p->heads);
    n->bidirectional = true;
    n->cross = p->cross;
    /* PerceiverSelfAttention's matmul / softmax, under any attn_implementation (the
     * eager figure of fg__add_attention) */
    n->eager_bytes = n->score_bytes = 6;
    fg__fmt(n->desc, sizeof n->desc, "%s %llu heads, qk %llu, v %llu",
            p->cross ? "cross" : "self", (unsigned long long)p->heads,
            (unsigned long long)p->qk, (unsigned long long)p->v);
    struct fg_mlp_shape f = {.hidden = p->q_dim, .inter = p->widening * p->q_dim, .bias = true};
    int rc;
    if ((rc = fg__add_norm(m, li, "Norm", p->q_dim, FG_NORM_LN, err)) ||
        (rc = fg__add_mlp(m, li, &f, NULL, err)))
        return rc;
    return 0;
}

/* PerceiverAttention's channels: qk_channels, else (cross) the q or kv width that
 * cross_attention_shape_for_attention names, else q_dim; v_channels, else qk. */
static int perceiver_channels(const struct fg_cfg *c, struct perceiver_layer *p, uint64_t qk,
                              uint64_t v, struct fg_err *err)
{
    const char *shape = NULL;
    int rc = fg_cfg_str(c, "cross_attention_shape_for_attention", "kv", &shape, err);
    if (rc)
        return rc;
    if (p->cross && !qk && strcmp(shape, "q") && strcmp(shape, "kv"))
        return fg_err_set(err, FG_E_RANGE, "%s: key 'cross_attention_shape_for_attention' = "
                          "'%s'; expected q or kv", c->origin, shape);
    p->qk = qk ? qk : p->cross && !strcmp(shape, "kv") ? p->kv_dim : p->q_dim;
    p->v = v ? v : p->qk;
    if (p->qk % p->heads || p->v % p->heads)
        return fg_err_set(err, FG_E_RANGE, "%s: Perceiver qk_channels %llu and v_channels %llu "
                          "must be multiples of the %llu heads", c->origin,
                          (unsigned long long)p->qk, (unsigned long long)p->v,
                          (unsigned long long)p->heads);
    return 0;
}

/*
 * PerceiverForMaskedLM (huggingface/transformers@004edfe2dc0f models/perceiver/
 * modeling_perceiver.py): PerceiverTextPreprocessor embeddings vocab x d_model and
 * position_embeddings max_position_embeddings x d_model; PerceiverEmbeddings latents
 * num_latents x d_latents; PerceiverEncoder one cross-attention PerceiverLayer (latents
 * over the d_model inputs, num_cross_attention_heads, cross_attention_widening_factor) and
 * num_self_attends_per_block self-attention layers (num_self_attention_heads,
 * self_attention_widening_factor) that num_blocks runs again on the same weights;
 * PerceiverBasicDecoder a trainable position encoding max_pos x d_model and a cross layer of
 * q d_model over the latents (qk 8 x 32, v d_model, 8 heads, widening 1); the
 * PerceiverEmbeddingDecoder bias (vocab; its weight is the input embedding).
 * PerceiverForSequenceClassification's PerceiverClassificationDecoder: a 1 x d_latents
 * position encoding, a one-head cross layer over the latents and final_layer d_latents ->
 * num_labels.  The graph runs the latent layers at the input length, an upper bound.
 * PerceiverConfig defaults.
 */
static int read_perceiver(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                          struct fg_err *err)
{
    (void)spec;
    const struct fg_enc2_task *t;
    uint64_t labels, d_model, latents, blocks, per_block, sheads, cheads, swide, cwide, qk = 0,
        v = 0;
    int rc;
    if ((rc = fg_cfg_u64(c, "vocab_size", 262, 1, FG_MAX_VOCAB, &m->vocab, err)) ||
        (rc = fg_cfg_u64(c, "d_latents", 1280, 1, FG_MAX_HIDDEN, &m->hidden, err)) ||
        (rc = fg_cfg_u64(c, "d_model", 768, 1, FG_MAX_HIDDEN, &d_model, err)) ||
        (rc = fg_cfg_u64(c, "num_latents", 256, 1, FG_MAX_POS, &latents, err)) ||
        (rc = fg_cfg_u64(c, "num_blocks", 1, 1, FG_MAX_LAYERS, &blocks, err)) ||
        (rc = fg_cfg_u64(c, "num_self_attends_per_block", 26, 1, FG_MAX_LAYERS - 2, &per_block,
                         err)) ||
        (rc = fg_cfg_u64(c, "num_self_attention_heads", 8, 1, FG_MAX_HEADS, &sheads, err)) ||
        (rc = fg_cfg_u64(c, "num_cross_attention_heads", 8, 1, FG_MAX_HEADS, &cheads, err)) ||
        (rc = fg_cfg_u64(c, "self_attention_widening_factor", 1, 1, 64, &swide, err)) ||
        (rc = fg_cfg_u64(c, "cross_attention_widening_factor", 1, 1, 64, &cwide, err)) ||
        (rc = fg_cfg_u64(c, "max_position_embeddings", 2048, 1, FG_MAX_POS, &m->max_pos,
                         err)) ||
        (fg_cfg_has(c, "qk_channels") &&
         (rc = fg_cfg_u64(c, "qk_channels", 0, 1, FG_MAX_HIDDEN, &qk, err))) ||
        (fg_cfg_has(c, "v_channels") &&
         (rc = fg_cfg_u64(c, "v_channels", 0, 1, FG_MAX_HIDDEN, &v, err))) ||
        (rc = fg__enc2_task(c, m, &perceiver_tasks, &t, &labels, err)))
        return rc;
    uint64_t h = m->hidden;
    if (h % sheads || h % cheads)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'd_latents' = %llu must be divisible by "
                          "the self- and cross-attention heads", c->origin,
                          (unsigned long long)h);
    if (blocks > 1)
        fg__model_unsure(m, "num_blocks", "unsure: key 'num_blocks' = %llu runs the %llu "
                         "self-attention layers again on the same weights: the count is "
                         "exact, the activations of the repeats are not counted",
                         (unsigned long long)blocks, (unsigned long long)per_block);
    m->heads = m->kv_heads = sheads;
    m->head_dim = h / sheads;
    m->inter = swide * h;
    m->layers = per_block + 2;
    struct fg_node *n;
    if ((rc = fg__add_table(m, FG_NODE_EMBED, "Embedding", m->vocab, d_model, NULL, err)) ||
        (rc = fg__add_table(m, FG_NODE_POS_EMBED, "Position embedding", m->max_pos, d_model,
                            NULL, err)) ||
        (rc = fg__add_table(m, FG_NODE_OTHER, "Latents", latents, h, &n, err)))
        return rc;
    struct perceiver_layer enc = {.cross = true, .q_dim = h, .kv_dim = d_model, .heads = cheads,
                                  .widening = cwide};
    struct perceiver_layer self = {.q_dim = h, .kv_dim = h, .heads = sheads, .widening = swide};
    if ((rc = perceiver_channels(c, &enc, qk, v, err)) ||
        (rc = perceiver_channels(c, &self, qk, v, err)) ||
        (rc = perceiver_layer(m, 0, &enc, err)))
        return rc;
    for (uint64_t l = 1; l <= per_block; l++)
        if ((rc = perceiver_layer(m, (int32_t)l, &self, err)))
            return rc;
    bool mlm = t->head == FG_ENC2_H_LM;
    struct perceiver_layer dec = {.cross = true, .q_dim = mlm ? d_model : h, .kv_dim = h,
                                  .heads = mlm ? 8 : 1, .widening = 1};
    if ((rc = perceiver_channels(c, &dec, mlm ? 8 * 32 : 0, mlm ? d_model : 0, err)) ||
        (rc = fg__add_table(m, FG_NODE_POS_EMBED, "Decoder queries", mlm ? m->max_pos : 1,
                            dec.q_dim, NULL, err)) ||
        (rc = perceiver_layer(m, (int32_t)per_block + 1, &dec, err)))
        return rc;
    m->encoder_only = true;
    m->tied = mlm;
    if (!mlm)
        return fg__enc2_head(m, "Task head", h, labels, true, NULL, err);
    /* the embedding decoder's logits use the input embedding: only its bias is stored */
    if ((rc = fg__enc2_head(m, "LM head", d_model, m->vocab, false, &n, err)))
        return rc;
    n->params = m->vocab;
    return 0;
}

const struct fg_arch fg__arch_enc2c_table[] = {
#include "arch/encoder/efficient_attention.def"
    {0},
};
