/*
 * xlnet_xlm_funnel.c - the pre-BERT-successor encoders of transformers' masked-LM and causal-LM
 * mapping lists that are not BERT clones, each read from its modeling file (the commit
 * read_file returned for it is named at each reader):
 *
 *   xlnet      XLNetLMHeadModel        models/xlnet/modeling_xlnet.py
 *   xlm        XLMWithLMHeadModel      models/xlm/modeling_xlm.py
 *   flaubert   FlaubertWithLMHeadModel models/flaubert/modeling_flaubert.py (XLM's shapes)
 *   funnel     FunnelForMaskedLM       models/funnel/modeling_funnel.py
 *   mobilebert MobileBertForMaskedLM   models/mobilebert/modeling_mobilebert.py
 *
 * The task class in `architectures` decides the head the checkpoint stores (one table per
 * family, as bert_family.c does for BERT); a config without the list is read as its base
 * model, and a class the table does not know is read as the base model with a note.
 * Tapas, LUKE, FNet, SqueezeBERT and wav2vec2 are tapas_luke_fnet.c.
 */
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/encoder/xlnet_xlm_funnel.h"
#include "util/fmt.h"

/* ---- task heads ----------------------------------------------------------------------- */

int fg__enc2_task(const struct fg_cfg *c, struct fg_model *m, const struct fg_enc2_tasks *f,
                  const struct fg_enc2_task **out, uint64_t *labels, struct fg_err *err)
{
    const char *a[16];
    size_t n = 0, plen = strlen(f->prefix);
    bool tie;
    *out = NULL;
    *labels = 2;
    /* tie_word_embeddings changes a stored shape only under an LM head, whose builder reads
     * it again; for the other classes (and Perceiver's weightless embedding decoder) it is
     * read here, so that setting it does not make the count unsure */
    int rc = fg_cfg_str_array(c, "architectures", a, 16, &n, err);
    if (!rc)
        rc = fg_cfg_bool(c, "tie_word_embeddings", true, &tie, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < n && i < 16 && !*out; i++)
        for (const struct fg_enc2_task *t = f->rows; t->suffix && !*out; t++)
            if (!strncmp(a[i], f->prefix, plen) && !strcmp(a[i] + plen, t->suffix))
                *out = t;
    if (!*out) {
        if (n)
            fg__model_unsure(m, "architectures", "unsure: architectures names %.60s, no %s "
                             "class fitgate knows: read as the base model, its task head not "
                             "counted", a[0], f->prefix);
        *out = &f->rows[f->absent];
    }
    if ((*out)->flags & FG_ENC2_LABELS)
        return fg__read_num_labels(c, labels, err);
    return 0;
}

int fg__enc2_head(struct fg_model *m, const char *name, uint64_t in, uint64_t out, bool bias,
                  struct fg_node **node, struct fg_err *err)
{
    return fg__add_linear(m, FG_NODE_HEAD, -1, name, "head", in, out, bias, node, err);
}

int fg__enc2_block(struct fg_model *m, int32_t li, const void *ctx, struct fg_err *err)
{
    const struct fg_enc2_block *b = ctx;
    struct fg_node *n;
    int rc = fg__add_attention(m, li, &b->a, &n, err);
    if (rc)
        return rc;
    if (b->rel_out)
        fg__node_linear(n, "r", b->rel_in, b->rel_out, 1, false);
    if (b->extra_q)
        fg__node_linear(n, "q_extra", b->a.hidden, b->a.heads * b->a.head_dim, b->extra_q,
                        true);
    n->params += b->attn_extra;
    if (b->eager_only)
        n->score_bytes = n->eager_bytes;
    if (b->desc)
        fg__copy(n->desc, sizeof n->desc, b->desc);
    if ((rc = fg__add_norm(m, li, "Norm", b->a.hidden, FG_NORM_LN, err)) ||
        (rc = fg__add_mlp(m, li, &b->f, NULL, err)) ||
        (rc = fg__add_norm(m, li, "Norm", b->a.hidden, FG_NORM_LN, err)))
        return rc;
    return 0;
}

int fg__enc2_blocks(struct fg_model *m, uint64_t n, const struct fg_enc2_block *b,
                    struct fg_err *err)
{
    return fg__add_layers(m, n, fg__enc2_block, b, err);
}

int fg__enc2_bert_embeddings(struct fg_model *m, uint64_t type_rows,
                             struct fg_node **types_node, struct fg_err *err)
{
    uint64_t h = m->hidden;
    int rc;
    if ((rc = fg__add_embedding(m, m->vocab, h, err)) ||
        (rc = fg__add_table(m, FG_NODE_POS_EMBED, "Position embedding", m->max_pos, h, NULL,
                            err)) ||
        (rc = fg__add_table(m, FG_NODE_POS_EMBED, "Token type embedding", type_rows, h,
                            types_node, err)))
        return rc;
    return fg__add_norm(m, -1, "Embedding norm", h, FG_NORM_LN, err);
}

struct fg_enc2_block fg__enc2_bert_block(const struct fg_model *m, uint32_t extra_q)
{
    struct fg_enc2_block b = {
        .a = {.hidden = m->hidden, .heads = m->heads, .kv_heads = m->heads,
              .head_dim = m->head_dim, .qkv_bias = true, .o_bias = true, .bidirectional = true},
        .f = {.hidden = m->hidden, .inter = m->inter, .bias = true},
        .extra_q = extra_q};
    return b;
}

/*
 * The SQuAD head of XLNetForQuestionAnswering and XLMForQuestionAnswering (XLMSQuADHead):
 * start_logits dense hidden -> 1; end_logits dense_0 2 x hidden -> hidden, LayerNorm,
 * dense_1 hidden -> 1; answer_class dense_0 2 x hidden -> hidden, dense_1 hidden -> 1
 * without bias.
 */
static int squad_head(struct fg_model *m, struct fg_err *err)
{
    uint64_t h = m->hidden;
    struct fg_node *n;
    int rc = fg__enc2_head(m, "Task head", h, 1, true, &n, err);
    if (rc)
        return rc;
    fg__node_linear(n, "end_0", 2 * h, h, 1, true);
    fg__node_linear(n, "end_1", h, 1, 1, true);
    fg__node_linear(n, "answer_0", 2 * h, h, 1, true);
    fg__node_linear(n, "answer_1", h, 1, 1, false);
    n->params += 2 * h; /* end_logits.LayerNorm */
    fg__copy(n->desc, sizeof n->desc, "SQuAD start / end / answer-class heads");
    return 0;
}

/*
 * SequenceSummary (XLNetSequenceSummary, XLMSequenceSummary): with summary_use_proj a
 * Linear(hidden, num_labels) when summary_proj_to_labels (and num_labels > 0), else
 * Linear(hidden, hidden); then the class's logits_proj in_w x out_w when out_w > 0.
 * summary_type "attn" raises NotImplementedError in transformers.
 */
static int summary_head(const struct fg_cfg *c, struct fg_model *m, bool to_labels_def,
                        uint64_t labels, uint64_t in_w, uint64_t out_w, struct fg_err *err)
{
    bool proj, to_labels;
    const char *type = NULL;
    int rc;
    if ((rc = fg_cfg_bool(c, "summary_use_proj", true, &proj, err)) ||
        (rc = fg_cfg_bool(c, "summary_proj_to_labels", to_labels_def, &to_labels, err)) ||
        (rc = fg_cfg_str(c, "summary_type", "last", &type, err)))
        return rc;
    if (type && !strcmp(type, "attn"))
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: key 'summary_type' = 'attn': "
                          "transformers' SequenceSummary does not build it", c->origin);
    uint64_t h = m->hidden, sw = to_labels ? labels : h;
    struct fg_node *n = fg__model_add(m, FG_NODE_HEAD, -1, "Task head", err);
    if (!n)
        return FG_E_NOMEM;
    if (proj)
        fg__node_linear(n, "summary", h, sw, 1, true);
    if (out_w)
        fg__node_linear(n, "head", in_w, out_w, 1, true);
    n->hidden = (uint32_t)h;
    n->width = (uint32_t)(out_w ? out_w : proj ? sw : h);
    fg__fmt(n->desc, sizeof n->desc, "sequence summary%s%s", proj ? " + proj" : "",
            out_w ? " + logits_proj" : "");
    return 0;
}

/* The tied LM projection of XLNet, XLM and Funnel: its bias, and its weight when the
 * config unties it (tie_word_embeddings false). */
static int tied_lm(const struct fg_cfg *c, struct fg_model *m, struct fg_err *err)
{
    bool tie;
    int rc = fg_cfg_bool(c, "tie_word_embeddings", true, &tie, err);
    if (rc)
        return rc;
    return fg__add_head(m, m->vocab, m->hidden, tie, false, true, err);
}

/* ---- XLNet ------------------------------------------------------------------------------ */

enum { XH_SUMMARY = FG_ENC2_H_FAMILY, XH_SUMMARY_ONE, XH_SQUAD };

static const struct fg_enc2_task xlnet_rows[] = {
    {"LMHeadModel", FG_ENC2_H_LM, 0},
    {"Model", FG_ENC2_H_NONE, 0},
    {"ForSequenceClassification", XH_SUMMARY, FG_ENC2_LABELS},
    {"ForTokenClassification", FG_ENC2_H_LABELS, FG_ENC2_LABELS},
    {"ForMultipleChoice", XH_SUMMARY_ONE, 0},
    {"ForQuestionAnsweringSimple", FG_ENC2_H_LABELS, FG_ENC2_LABELS},
    {"ForQuestionAnswering", XH_SQUAD, 0},
    {NULL, 0, 0},
};
static const struct fg_enc2_tasks xlnet_tasks = {"XLNet", xlnet_rows, 1};

/*
 * XLNetModel (huggingface/transformers@02fb0d2b4ec1 models/xlnet/modeling_xlnet.py):
 * word_embedding vocab x d_model, mask_emb 1 x 1 x d_model; per XLNetLayer an
 * XLNetRelativeAttention of parameters q, k, v, o, r (each d_model x n_head x d_head, no
 * bias), r_r_bias, r_s_bias, r_w_bias (n_head x d_head each), seg_embed 2 x n_head x d_head
 * and layer_norm; XLNetFeedForward layer_1 / layer_2 (biased) and layer_norm.  No position
 * table (sinusoidal relative positions), no final norm.  d_head is d_model / n_head
 * (XLNetConfig refuses another).  untie_r changes no stored shape: every layer holds its
 * own biases.  XLNetConfig defaults (xlnet-large-cased shapes).
 */
static int read_xlnet(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                      struct fg_err *err)
{
    (void)spec;
    const struct fg_enc2_task *t;
    uint64_t labels;
    int rc;
    if ((rc = fg_cfg_u64(c, "vocab_size|n_token", 32000, 1, FG_MAX_VOCAB, &m->vocab, err)) ||
        (rc = fg_cfg_u64(c, "d_model", 1024, 1, FG_MAX_HIDDEN, &m->hidden, err)) ||
        (rc = fg_cfg_u64(c, "n_layer", 24, 1, FG_MAX_LAYERS, &m->layers, err)) ||
        (rc = fg_cfg_u64(c, "n_head", 16, 1, FG_MAX_HEADS, &m->heads, err)) ||
        (rc = fg_cfg_u64(c, "d_inner", 4096, 1, FG_MAX_INTER, &m->inter, err)) ||
        (rc = fg__check_heads(c, "d_model", m->hidden, "n_head", m->heads, err)) ||
        (rc = fg__enc2_task(c, m, &xlnet_tasks, &t, &labels, err)))
        return rc;
    uint64_t h = m->hidden, dh = h / m->heads;
    if (fg_cfg_has(c, "d_head") && (rc = fg_cfg_u64(c, "d_head", dh, dh, dh, &dh, err)))
        return rc;
    m->kv_heads = m->heads;
    m->head_dim = dh;
    if ((rc = fg__add_embedding(m, m->vocab, h, err)) ||
        (rc = fg__add_table(m, FG_NODE_OTHER, "mask_emb", 1, h, NULL, err)))
        return rc;
    /* r (positions), the three biases and seg_embed of the relative attention */
    struct fg_enc2_block b = {
        .a = {.hidden = h, .heads = m->heads, .kv_heads = m->heads, .head_dim = dh,
              .bidirectional = true},
        .f = {.hidden = h, .inter = m->inter, .bias = true},
        .rel_in = h, .rel_out = h, .attn_extra = 3 * h + 2 * h,
        .desc = "relative MHA, two-stream", .eager_only = true};
    if ((rc = fg__enc2_blocks(m, m->layers, &b, err)))
        return rc;
    m->encoder_only = t->head != FG_ENC2_H_LM;
    m->tied = true;
    switch (t->head) {
    case FG_ENC2_H_LM:
        return tied_lm(c, m, err);
    case FG_ENC2_H_LABELS:
        return fg__enc2_head(m, "Task head", h, labels, true, NULL, err);
    case XH_SUMMARY:
        return summary_head(c, m, false, labels, h, labels, err);
    case XH_SUMMARY_ONE:
        return summary_head(c, m, false, labels, h, 1, err);
    case XH_SQUAD:
        return squad_head(m, err);
    }
    return 0;
}

/* ---- XLM / FlauBERT ---------------------------------------------------------------------- */

static const struct fg_enc2_task xlm_rows[] = {
    {"WithLMHeadModel", FG_ENC2_H_LM, 0},
    {"Model", FG_ENC2_H_NONE, 0},
    {"ForSequenceClassification", XH_SUMMARY, FG_ENC2_LABELS},
    {"ForTokenClassification", FG_ENC2_H_LABELS, FG_ENC2_LABELS},
    {"ForMultipleChoice", XH_SUMMARY_ONE, FG_ENC2_LABELS},
    {"ForQuestionAnsweringSimple", FG_ENC2_H_LABELS, FG_ENC2_LABELS},
    {"ForQuestionAnswering", XH_SQUAD, 0},
    {NULL, 0, 0},
};
static const struct fg_enc2_tasks xlm_tasks = {"XLM", xlm_rows, 1};
static const struct fg_enc2_tasks flaubert_tasks = {"Flaubert", xlm_rows, 1};

/*
 * XLMPredLayer with asm: nn.AdaptiveLogSoftmaxWithLoss(dim, n_words, asm_cutoffs,
 * asm_div_value, head_bias=True): head Linear(dim, cutoffs[0] + clusters) with bias, and per
 * cluster i Linear(dim, dim // div^(i+1)) and Linear(that, cluster size), both without bias.
 * Not tied (the module has no weight to tie).
 */
static int xlm_adaptive_head(const struct fg_cfg *c, struct fg_model *m, struct fg_err *err)
{
    uint64_t cut[16];
    size_t nc = 0;
    double div;
    int rc;
    if ((rc = fg_cfg_u64_array(c, "asm_cutoffs", 1, m->vocab - 1, cut, 15, &nc, err)) ||
        (rc = fg_cfg_f64(c, "asm_div_value", 4.0, 1.0, 1e6, &div, err)))
        return rc;
    if (!fg_cfg_has(c, "asm_cutoffs")) { /* XLMConfig default */
        cut[0] = 8000, cut[1] = 20000, nc = 2;
        if (m->vocab <= 20000)
            return fg_err_set(err, FG_E_RANGE, "%s: key 'asm' is true with the default "
                              "asm_cutoffs [8000, 20000], which need more than %llu words",
                              c->origin, (unsigned long long)m->vocab);
    }
    if (nc == 0 || nc > 15)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'asm_cutoffs' holds %zu values; expected "
                          "1 to 15", c->origin, nc);
    for (size_t i = 1; i < nc; i++)
        if (cut[i] <= cut[i - 1])
            return fg_err_set(err, FG_E_RANGE, "%s: key 'asm_cutoffs' is not increasing",
                              c->origin);
    cut[nc] = m->vocab;
    uint64_t h = m->hidden;
    struct fg_node *n;
    if ((rc = fg__enc2_head(m, "LM head", h, cut[0] + nc, true, &n, err)))
        return rc;
    double d = div;
    for (size_t i = 0; i < nc; i++, d *= div) {
        uint64_t hsz = (uint64_t)((double)h / d);
        n->params += h * hsz + hsz * (cut[i + 1] - cut[i]);
    }
    n->width = (uint32_t)m->vocab;
    fg__fmt(n->desc, sizeof n->desc, "adaptive softmax, %zu clusters", nc);
    return 0;
}

/*
 * XLMModel (huggingface/transformers@045e910e889d models/xlm/modeling_xlm.py; FlaubertModel
 * at 05ac5107cfb0 builds the same modules, pre_norm and layerdrop only reorder them):
 * position_embeddings max_position_embeddings x emb_dim (filled with a sinusoid when
 * sinusoidal_embeddings, stored either way), lang_embeddings n_langs x emb_dim when n_langs
 * > 1 and use_lang_emb, embeddings n_words x emb_dim, layer_norm_emb; per layer
 * MultiHeadAttention q_lin / k_lin / v_lin / out_lin (biased), layer_norm1, TransformerFFN
 * lin1 / lin2 of 4 x emb_dim (biased), layer_norm2.  is_encoder false raises
 * NotImplementedError.  The position_ids buffer is non-persistent.  XLMWithLMHeadModel's
 * pred_layer.proj is tied to the embeddings (its bias stored), or the adaptive softmax.
 */
static int read_xlm(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                    struct fg_err *err)
{
    const struct fg_enc2_tasks *fam = spec;
    const struct fg_enc2_task *t;
    uint64_t labels, langs;
    bool lang_emb, enc, asm_on, causal;
    int rc;
    /* XLMConfig defaults; FlaubertConfig passes its kwargs to them */
    if ((rc = fg_cfg_u64(c, "vocab_size|n_words", 30145, 1, FG_MAX_VOCAB, &m->vocab, err)) ||
        (rc = fg_cfg_u64(c, "emb_dim", 2048, 1, FG_MAX_HIDDEN, &m->hidden, err)) ||
        (rc = fg_cfg_u64(c, "n_layers", 12, 1, FG_MAX_LAYERS, &m->layers, err)) ||
        (rc = fg_cfg_u64(c, "n_heads", 16, 1, FG_MAX_HEADS, &m->heads, err)) ||
        (rc = fg_cfg_u64(c, "max_position_embeddings", 512, 1, FG_MAX_POS, &m->max_pos, err)) ||
        (rc = fg_cfg_u64(c, "n_langs", 1, 1, 1u << 16, &langs, err)) ||
        (rc = fg_cfg_bool(c, "use_lang_emb", true, &lang_emb, err)) ||
        (rc = fg_cfg_bool(c, "is_encoder", true, &enc, err)) ||
        (rc = fg_cfg_bool(c, "asm", false, &asm_on, err)) ||
        (rc = fg_cfg_bool(c, "causal", false, &causal, err)) ||
        (rc = fg__check_heads(c, "emb_dim", m->hidden, "n_heads", m->heads, err)) ||
        (rc = fg__enc2_task(c, m, fam, &t, &labels, err)))
        return rc;
    if (!enc)
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: key 'is_encoder' is false: transformers' "
                          "%sModel raises NotImplementedError for a decoder", c->origin,
                          fam->prefix);
    uint64_t h = m->hidden;
    m->inter = 4 * h;
    m->kv_heads = m->heads;
    m->head_dim = h / m->heads;
    if ((rc = fg__add_table(m, FG_NODE_POS_EMBED, "Position embedding", m->max_pos, h, NULL,
                            err)) ||
        (langs > 1 && lang_emb &&
         (rc = fg__add_table(m, FG_NODE_POS_EMBED, "Language embedding", langs, h, NULL,
                             err))) ||
        (rc = fg__add_embedding(m, m->vocab, h, err)) ||
        (rc = fg__add_norm(m, -1, "Embedding norm", h, FG_NORM_LN, err)))
        return rc;
    struct fg_enc2_block b = {
        .a = {.hidden = h, .heads = m->heads, .kv_heads = m->heads, .head_dim = h / m->heads,
              .qkv_bias = true, .o_bias = true, .bidirectional = !causal},
        .f = {.hidden = h, .inter = 4 * h, .bias = true}, .eager_only = true};
    if ((rc = fg__enc2_blocks(m, m->layers, &b, err)))
        return rc;
    /* the causal CLM checkpoints (xlm-clm-*) decode; the MLM ones are encoders as BERT */
    m->encoder_only = !causal;
    m->tied = true;
    switch (t->head) {
    case FG_ENC2_H_LM:
        if (asm_on) {
            m->tied = false;
            return xlm_adaptive_head(c, m, err);
        }
        return tied_lm(c, m, err);
    case FG_ENC2_H_LABELS:
        return fg__enc2_head(m, "Task head", h, labels, true, NULL, err);
    case XH_SUMMARY:
        return summary_head(c, m, true, labels, 0, 0, err);
    case XH_SUMMARY_ONE:
        return summary_head(c, m, true, labels, labels, 1, err);
    case XH_SQUAD:
        return squad_head(m, err);
    }
    return 0;
}

/* ---- Funnel Transformer ------------------------------------------------------------------- */

enum { FH_DISC = FG_ENC2_H_FAMILY, FH_CLS, FH_CLS_ONE };

/* FunnelForSequenceClassification and FunnelForMultipleChoice sit on FunnelBaseModel
 * (no decoder); the others on FunnelModel. */
static const struct fg_enc2_task funnel_rows[] = {
    {"ForMaskedLM", FG_ENC2_H_LM, 0},
    {"Model", FG_ENC2_H_NONE, 0},
    {"BaseModel", FG_ENC2_H_NONE, FG_ENC2_BASE},
    {"ForPreTraining", FH_DISC, 0},
    {"ForSequenceClassification", FH_CLS, FG_ENC2_LABELS | FG_ENC2_BASE},
    {"ForMultipleChoice", FH_CLS_ONE, FG_ENC2_BASE},
    {"ForTokenClassification", FG_ENC2_H_LABELS, FG_ENC2_LABELS},
    {"ForQuestionAnswering", FG_ENC2_H_LABELS, FG_ENC2_LABELS},
    {NULL, 0, 0},
};
static const struct fg_enc2_tasks funnel_tasks = {"Funnel", funnel_rows, 1};

/*
 * FunnelModel (huggingface/transformers@020a37d2264e models/funnel/modeling_funnel.py):
 * FunnelEmbeddings word_embeddings vocab x d_model and layer_norm; the encoder's blocks of
 * block_sizes FunnelLayers (pooling between blocks changes no shape; block_repeats runs a
 * block again on the same weights), FunnelDecoder num_decoder_layers more FunnelLayers
 * (FunnelModel, not FunnelBaseModel).  The graph runs every layer at the full sequence, an
 * upper bound on the pooled blocks' activations.  FunnelConfig defaults (funnel-transformer
 * intermediate shapes).
 */
static int read_funnel(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                       struct fg_err *err)
{
    (void)spec;
    const struct fg_enc2_task *t;
    uint64_t labels, blocks[64], reps[64], dec;
    size_t nb = 0, nr = 0;
    int rc;
    if ((rc = fg_cfg_u64(c, "vocab_size", 30522, 1, FG_MAX_VOCAB, &m->vocab, err)) ||
        (rc = fg_cfg_u64(c, "d_model", 768, 1, FG_MAX_HIDDEN, &m->hidden, err)) ||
        (rc = fg_cfg_u64(c, "n_head", 12, 1, FG_MAX_HEADS, &m->heads, err)) ||
        (rc = fg_cfg_u64(c, "d_head", 64, 1, 1u << 14, &m->head_dim, err)) ||
        (rc = fg_cfg_u64(c, "d_inner", 3072, 1, FG_MAX_INTER, &m->inter, err)) ||
        (rc = fg_cfg_u64(c, "num_decoder_layers", 2, 0, FG_MAX_LAYERS, &dec, err)) ||
        (rc = fg_cfg_u64_array(c, "block_sizes", 1, FG_MAX_LAYERS, blocks, 64, &nb, err)) ||
        (rc = fg_cfg_u64_array(c, "block_repeats", 1, 64, reps, 64, &nr, err)) ||
        (rc = fg__enc2_task(c, m, &funnel_tasks, &t, &labels, err)))
        return rc;
    /* The Hub's funnel-transformer configs carry type_vocab_size 3 from their conversion:
     * FunnelConfig takes no such argument and FunnelEmbeddings holds no token-type table
     * (token types enter as seg_embed, two rows per head), so it sizes nothing */
    (void)fg__cfg_raw(c, "type_vocab_size");
    if (!fg_cfg_has(c, "block_sizes"))
        blocks[0] = blocks[1] = blocks[2] = 4, nb = 3;
    if (nb == 0 || nb > 64 || (nr && nr != nb))
        return fg_err_set(err, FG_E_RANGE, "%s: key 'block_sizes' holds %zu blocks and "
                          "'block_repeats' %zu: expected 1 to 64 blocks, repeats one per block",
                          c->origin, nb, nr);
    uint64_t enc = 0;
    for (size_t i = 0; i < nb; i++) {
        enc += blocks[i];
        if (nr && reps[i] > 1)
            fg__model_unsure(m, "block_repeats", "unsure: key 'block_repeats' runs block %zu "
                             "%llu times on the same weights: the count is exact, the "
                             "activations of the repeats are not counted", i + 1,
                             (unsigned long long)reps[i]);
    }
    bool base = t->flags & FG_ENC2_BASE;
    m->layers = enc + (base ? 0 : dec);
    if (m->layers > FG_MAX_LAYERS)
        return fg_err_set(err, FG_E_RANGE, "%s: %llu Funnel layers; at most %u", c->origin,
                          (unsigned long long)m->layers, FG_MAX_LAYERS);
    m->kv_heads = m->heads;
    uint64_t h = m->hidden;
    if ((rc = fg__add_embedding(m, m->vocab, h, err)) ||
        (rc = fg__add_norm(m, -1, "Embedding norm", h, FG_NORM_LN, err)))
        return rc;
    /* FunnelRelMultiheadAttention: q_head (no bias), k_head / v_head (biased), post_proj,
     * r_kernel d_model x n_head x d_head, r_w / r_r / r_s biases and seg_embed (n_head x
     * d_head each, seg_embed twice), layer_norm; FunnelPositionwiseFFN linear_1 / linear_2
     * (biased), layer_norm */
    uint64_t q = m->heads * m->head_dim;
    struct fg_enc2_block b = {
        .a = {.hidden = h, .heads = m->heads, .kv_heads = m->heads, .head_dim = m->head_dim,
              .o_bias = true, .bidirectional = true},
        .f = {.hidden = h, .inter = m->inter, .bias = true},
        .rel_in = h, .rel_out = q, .attn_extra = 2 * q + 3 * q + 2 * q,
        .desc = "relative MHA (funnel)", .eager_only = true};
    if ((rc = fg__enc2_blocks(m, m->layers, &b, err)))
        return rc;
    m->encoder_only = true;
    m->tied = true;
    struct fg_node *n;
    switch (t->head) {
    case FG_ENC2_H_LM:
        return tied_lm(c, m, err);
    case FG_ENC2_H_LABELS:
        return fg__enc2_head(m, "Task head", h, labels, true, NULL, err);
    case FH_DISC:   /* FunnelDiscriminatorPredictions: dense, dense_prediction -> 1 */
    case FH_CLS:    /* FunnelClassificationHead: linear_hidden, linear_out */
    case FH_CLS_ONE:
        if ((rc = fg__enc2_head(m, "Task head", h, t->head == FH_CLS ? labels : 1, true, &n,
                                err)))
            return rc;
        fg__node_linear(n, "dense", h, h, 1, true);
        return 0;
    }
    return 0;
}

/* ---- MobileBERT ---------------------------------------------------------------------------- */

enum { MH_PRETRAIN = FG_ENC2_H_FAMILY, MH_NSP };

static const struct fg_enc2_task mobilebert_rows[] = {
    {"ForPreTraining", MH_PRETRAIN, FG_ENC2_POOLER},
    {"ForMaskedLM", FG_ENC2_H_LM, 0},
    {"Model", FG_ENC2_H_NONE, FG_ENC2_POOLER},
    {"ForNextSentencePrediction", MH_NSP, FG_ENC2_POOLER},
    {"ForSequenceClassification", FG_ENC2_H_LABELS, FG_ENC2_POOLER | FG_ENC2_LABELS},
    {"ForMultipleChoice", FG_ENC2_H_ONE, FG_ENC2_POOLER},
    {"ForTokenClassification", FG_ENC2_H_LABELS, FG_ENC2_LABELS},
    {"ForQuestionAnswering", FG_ENC2_H_LABELS, FG_ENC2_LABELS},
    {NULL, 0, 0},
};
static const struct fg_enc2_tasks mobilebert_tasks = {"MobileBert", mobilebert_rows, 2};

struct mobilebert {
    uint64_t emb, inner, ffns;  /* embedding_size, true_hidden_size, num_feedforward_networks */
    bool bottleneck, bottleneck_attn, shared;
};

/*
 * One MobileBertLayer over hidden H and inner width I (intra_bottleneck_size with
 * use_bottleneck, else H): Bottleneck input (dense H -> I + norm) and, with
 * key_query_shared_bottleneck, its attention twin; MobileBertSelfAttention query / key I ->
 * I and value from I (use_bottleneck_attention) or H, MobileBertSelfOutput dense I -> I and
 * norm; num_feedforward_networks - 1 FFNLayers (intermediate I -> inter, FFNOutput back and
 * norm); MobileBertIntermediate, MobileBertOutput dense and norm, and OutputBottleneck dense
 * I -> H and norm.  Norms are NoNorm or LayerNorm (normalization_type), a weight and a bias
 * each either way.  Biases everywhere.
 */
static int mobilebert_layer(struct fg_model *m, int32_t li, const void *ctx,
                            struct fg_err *err)
{
    const struct mobilebert *k = ctx;
    uint64_t h = m->hidden, in = k->inner;
    struct fg_node *n;
    int rc;
    if (k->bottleneck) {
        if (!(n = fg__model_add_block(m, FG_NODE_OTHER, li, "Bottleneck", err)))
            return FG_E_NOMEM;
        fg__node_linear(n, "bneck_in", h, in, k->shared ? 2 : 1, true);
        n->params += (k->shared ? 2 : 1) * 2 * in;
        n->hidden = (uint32_t)h;
        n->width = (uint32_t)in;
        fg__fmt(n->desc, sizeof n->desc, "%llu -> %llu%s", (unsigned long long)h,
                (unsigned long long)in, k->shared ? ", shared q/k" : "");
    }
    struct fg_attn_shape a = {.hidden = in, .heads = m->heads, .kv_heads = m->heads,
                              .head_dim = in / m->heads, .qkv_bias = true, .o_bias = true,
                              .bidirectional = true};
    if ((rc = fg__add_attention(m, li, &a, &n, err)))
        return rc;
    n->score_bytes = n->eager_bytes; /* MobileBertSelfAttention's own matmul / softmax */
    if (!k->bottleneck_attn && in != h)
        for (uint8_t i = 0; i < n->nlin; i++)
            if (!strcmp(n->lin[i].role, "v")) {
                n->params += (h - in) * in; /* value reads the layer input */
                n->lin[i].in = (uint32_t)h;
            }
    struct fg_mlp_shape f = {.hidden = in, .inter = m->inter, .bias = true};
    if ((rc = fg__add_norm(m, li, "Norm", in, FG_NORM_LN, err)))
        return rc;
    for (uint64_t i = 0; i < k->ffns; i++)
        if ((rc = fg__add_mlp(m, li, &f, NULL, err)) ||
            (rc = fg__add_norm(m, li, "Norm", in, FG_NORM_LN, err)))
            return rc;
    if (k->bottleneck) {
        if (!(n = fg__model_add_block(m, FG_NODE_OTHER, li, "OutBottleneck", err)))
            return FG_E_NOMEM;
        fg__node_linear(n, "bneck_out", in, h, 1, true);
        n->params += 2 * h;
        n->hidden = (uint32_t)in;
        n->width = (uint32_t)h;
        fg__fmt(n->desc, sizeof n->desc, "%llu -> %llu + norm", (unsigned long long)in,
                (unsigned long long)h);
    }
    return 0;
}

int fg__enc2_mlm(const struct fg_cfg *c, struct fg_model *m, uint64_t tied_w, uint64_t extra,
                 bool nsp, struct fg_err *err)
{
    bool tie;
    int rc = fg_cfg_bool(c, "tie_word_embeddings", true, &tie, err);
    if (rc)
        return rc;
    uint64_t h = m->hidden, v = m->vocab;
    struct fg_node *n = fg__model_add(m, FG_NODE_HEAD, -1, "MLM head", err);
    if (!n)
        return FG_E_NOMEM;
    fg__node_linear(n, "dense", h, h, 1, true);
    n->params += 2 * h + v + extra + (tie ? 0 : v * tied_w);
    n->hidden = (uint32_t)h;
    n->width = (uint32_t)v;
    m->tied = tie;
    fg__fmt(n->desc, sizeof n->desc, "transform %llu + LN, decoder %s, bias %llu",
            (unsigned long long)h, tie ? "tied" : "stored", (unsigned long long)v);
    if (!nsp)
        return 0;
    return fg__add_table(m, FG_NODE_OTHER, "NSP head", h + 1, 2, NULL, err);
}

/*
 * MobileBertModel (huggingface/transformers@01ae98ae2414 models/mobilebert/
 * modeling_mobilebert.py): MobileBertEmbeddings word_embeddings vocab x embedding_size,
 * position_embeddings max_pos x H, token_type_embeddings type_vocab_size x H,
 * embedding_transformation (embedding_size x 3 with trigram_input) -> H, norm; the layers
 * above; MobileBertPooler dense H x H only when classifier_activation.  MobileBertConfig
 * defaults (google/mobilebert-uncased shapes).
 */
static int read_mobilebert(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                           struct fg_err *err)
{
    (void)spec;
    static const struct fg_core_defaults d = {.vocab = 30522, .hidden = 512, .inter = 512,
                                              .layers = 24, .heads = 4, .max_pos = 512,
                                              .tie = true};
    struct mobilebert k;
    const struct fg_enc2_task *t;
    uint64_t labels, types, intra;
    bool trigram, act;
    int rc;
    if ((rc = fg__read_core(c, m, &d, err)) ||
        (rc = fg_cfg_u64(c, "embedding_size", 128, 1, FG_MAX_HIDDEN, &k.emb, err)) ||
        (rc = fg_cfg_u64(c, "type_vocab_size", 2, 0, FG_MAX_VOCAB, &types, err)) ||
        (rc = fg_cfg_u64(c, "intra_bottleneck_size", 128, 1, FG_MAX_HIDDEN, &intra, err)) ||
        (rc = fg_cfg_u64(c, "num_feedforward_networks", 4, 1, 64, &k.ffns, err)) ||
        (rc = fg_cfg_bool(c, "trigram_input", true, &trigram, err)) ||
        (rc = fg_cfg_bool(c, "use_bottleneck", true, &k.bottleneck, err)) ||
        (rc = fg_cfg_bool(c, "use_bottleneck_attention", false, &k.bottleneck_attn, err)) ||
        (rc = fg_cfg_bool(c, "key_query_shared_bottleneck", true, &k.shared, err)) ||
        (rc = fg_cfg_bool(c, "classifier_activation", true, &act, err)) ||
        (rc = fg__enc2_task(c, m, &mobilebert_tasks, &t, &labels, err)))
        return rc;
    k.inner = k.bottleneck ? intra : m->hidden;
    k.shared = k.bottleneck && k.shared;
    if (k.inner % m->heads || k.emb > m->hidden)
        return fg_err_set(err, FG_E_RANGE, "%s: MobileBERT needs true_hidden_size %llu to be "
                          "a multiple of num_attention_heads %llu and embedding_size %llu at "
                          "most hidden_size %llu", c->origin, (unsigned long long)k.inner,
                          (unsigned long long)m->heads, (unsigned long long)k.emb,
                          (unsigned long long)m->hidden);
    m->head_dim = k.inner / m->heads;
    uint64_t h = m->hidden, ein = k.emb * (trigram ? 3 : 1);
    struct fg_node *n;
    if ((rc = fg__add_embedding(m, m->vocab, k.emb, err)) ||
        (rc = fg__add_table(m, FG_NODE_POS_EMBED, "Position embedding", m->max_pos, h, NULL,
                            err)) ||
        (types && (rc = fg__add_table(m, FG_NODE_POS_EMBED, "Token type embedding", types, h,
                                      NULL, err))))
        return rc;
    if (!(n = fg__model_add(m, FG_NODE_OTHER, -1, "Embedding projection", err)))
        return FG_E_NOMEM;
    fg__node_linear(n, "proj", ein, h, 1, true);
    n->hidden = (uint32_t)ein;
    n->width = (uint32_t)h;
    if ((rc = fg__add_norm(m, -1, "Embedding norm", h, FG_NORM_LN, err)))
        return rc;
    if ((rc = fg__add_layers(m, m->layers, mobilebert_layer, &k, err)))
        return rc;
    m->encoder_only = true;
    m->tied = true;
    if ((t->flags & FG_ENC2_POOLER) && act && (rc = fg__add_pooler(m, h, err)))
        return rc;
    switch (t->head) {
    case FG_ENC2_H_LM:
    case MH_PRETRAIN:
        /* MobileBertLMPredictionHead: the decoder tied at embedding_size, dense vocab ->
         * hidden - embedding_size (no bias) beside it */
        return fg__enc2_mlm(c, m, k.emb, m->vocab * (m->hidden - k.emb),
                            t->head == MH_PRETRAIN, err);
    case MH_NSP:
        return fg__enc2_head(m, "Task head", h, 2, true, NULL, err);
    case FG_ENC2_H_LABELS:
    case FG_ENC2_H_ONE:
        return fg__enc2_head(m, "Task head", h, t->head == FG_ENC2_H_ONE ? 1 : labels, true,
                             NULL, err);
    }
    return 0;
}

const struct fg_arch fg__arch_enc2_table[] = {
#include "arch/encoder/xlnet_xlm_funnel.def"
    {0},
};
