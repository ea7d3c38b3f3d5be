/*
 * bert_variants.c - masked-LM encoders built on BERT's blocks, each read from its transformers
 * modeling file (the commit read_file returned for it; class names as written there):
 *
 *   ernie                 ErnieModel          models/ernie/modular_ernie.py @7965ef767165 (BERT
 *                                             + task_type_embeddings)
 *   roberta-prelayernorm  RobertaPreLayerNormModel  @00ce4e9a3963
 *   xlm-roberta-xl        XLMRobertaXLModel   @014873b4dfa2
 *   megatron-bert         MegatronBertModel   @313e4d039f41 (no LayerNorm after the
 *                                             embeddings: "applied after the 1st dropout")
 *   big_bird              BigBirdModel        @48c8c8db5b8d (block-sparse attention holds
 *                                             no parameters)
 *   layoutlm              LayoutLMModel       @dccd2df9e5e5
 *   longformer            LongformerModel     @4770c6d87fb4
 *   roc_bert              RoCBertModel        @09432c88f271
 *   xmod                  XmodModel           @967ed0db0367 (language adapters)
 *   albert                AlbertModel         @00661e38a9e1
 *   deberta               DebertaModel (v1)   @0038a3caa5c7
 *
 * and the blocks they share with esm_roformer_convbert.c (esm, roformer, rembert, convbert; its own
 * table).  BERT itself and its direct kin (roberta, deberta-v2 ...) are bert_family.c.
 */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "arch/encoder/bert_variants.h"
#include "util/fmt.h"

/* ---- shared pieces (bert_variants.h) ------------------------------------------------------- */

/* The classes of enc1_class, in its order. */
static const struct enc1_task enc1_classes[] = {
    {"ForMaskedLM", false, E1_MLM},
    {"ForCausalLM", false, E1_MLM},
    {"ForPreTraining", false, E1_PRETRAIN},
    {"Model", false, E1_NONE},
    {"ForSequenceClassification", false, E1_LABELS},
    {"ForMultipleChoice", false, E1_ONE},
    {"ForTokenClassification", false, E1_LABELS},
    {"ForQuestionAnswering", false, E1_QA},
};

/* Class i of enc1_classes as the family builds it. */
static struct enc1_task enc1_class(const struct enc1_tasks *tasks, unsigned i)
{
    struct enc1_task t = enc1_classes[i];
    t.pooler = tasks->pooled & (1u << i);
    if (1u << i == E1C_SEQ)
        t.head = tasks->seq_head;
    if (1u << i == E1C_PRETRAINING && tasks->pretrain_mlm_only)
        t.head = E1_MLM;
    return t;
}

int fg__enc1_task(const struct fg_cfg *c, struct fg_model *m, const char *prefixes,
                  const struct enc1_tasks *tasks, struct enc1_task *out, uint64_t *labels,
                  struct fg_err *err)
{
    const unsigned n_classes = sizeof enc1_classes / sizeof enc1_classes[0];
    const char *a[16];
    size_t n = 0;
    int rc = fg_cfg_str_array(c, "architectures", a, 16, &n, err);
    if (rc)
        return rc;
    bool found = false;
    for (size_t i = 0; i < n && i < 16 && !found; i++)
        for (unsigned k = 0; k < n_classes && !found; k++)
            if ((tasks->classes & (1u << k)) &&
                fg__class_is(a[i], prefixes, enc1_classes[k].suffix)) {
                *out = enc1_class(tasks, k);
                found = true;
            }
    if (!found) {
        if (n)
            fg__model_unsure(m, "architectures", "unsure: architectures names %.60s, a task "
                             "class fitgate does not size: counted as the base model", a[0]);
        *out = enc1_class(tasks, 3); /* E1C_MODEL */
    }
    enum enc1_head h = out->head;
    if (h == E1_LABELS || h == E1_CLS_DENSE || h == E1_QA)
        return fg__read_num_labels(c, labels, err);
    return 0;
}

int fg__enc1_head(struct fg_model *m, enum enc1_head head, uint64_t labels, uint64_t t,
                  bool decoder_stored, uint64_t extra, struct fg_err *err)
{
    uint64_t h = m->hidden, v = m->vocab;
    struct fg_node *n;
    int rc;
    if (head == E1_NONE)
        return 0;
    if (head == E1_MLM || head == E1_PRETRAIN) {
        if (!(n = fg__model_add(m, FG_NODE_HEAD, -1, "MLM head", err)))
            return FG_E_NOMEM;
        fg__node_linear(n, "dense", h, t, 1, true);
        n->params += 2 * t + v + extra + (decoder_stored ? t * v : 0);
        n->hidden = (uint32_t)h;
        n->width = (uint32_t)v;
        fg__fmt(n->desc, sizeof n->desc, "transform %llu -> %llu + LN, decoder %s, bias %llu",
                (unsigned long long)h, (unsigned long long)t,
                decoder_stored ? "untied" : "tied", (unsigned long long)v);
        if (head == E1_MLM)
            return 0;
        if ((rc = fg__add_table(m, FG_NODE_OTHER, "NSP head", h + 1, 2, &n, err)))
            return rc;
        n->hidden = (uint32_t)h;
        fg__fmt(n->desc, sizeof n->desc, "seq_relationship %llu x 2 + bias",
                (unsigned long long)h);
        return 0;
    }
    uint64_t w = head == E1_ONE ? 1 : labels;
    if (!(n = fg__model_add(m, FG_NODE_HEAD, -1, "Task head", err)))
        return FG_E_NOMEM;
    if (head == E1_CLS_DENSE)
        fg__node_linear(n, "dense", h, h, 1, true);
    fg__node_linear(n, "head", h, w, 1, true);
    n->hidden = (uint32_t)h;
    n->width = (uint32_t)w;
    fg__fmt(n->desc, sizeof n->desc, "%s%llu x %llu", head == E1_CLS_DENSE ? "dense + " : "",
            (unsigned long long)h, (unsigned long long)w);
    return 0;
}

int fg__enc1_block(struct fg_model *m, int32_t layer, const struct enc1_block *b,
                   struct fg_node **attn, struct fg_err *err)
{
    struct fg_node *n;
    int rc;
    uint64_t h = b->a.hidden;
    if ((rc = fg__add_attention(m, layer, &b->a, &n, err)))
        return rc;
    n->params += b->attn_extra;
    if (attn)
        *attn = n;
    if ((rc = fg__add_norm(m, layer, "Norm", h, FG_NORM_LN, err)))
        return rc;
    if (b->cross) {
        /* the cross-attention: BERT's attention class built with position_embedding_type
         * "absolute" (no relative table), and its LayerNorm */
        struct fg_attn_shape x = b->a;
        x.cross = true;
        x.bidirectional = true;
        if ((rc = fg__add_attention(m, layer, &x, NULL, err)) ||
            (rc = fg__add_norm(m, layer, "Norm", h, FG_NORM_LN, err)))
            return rc;
    }
    if ((rc = fg__add_mlp(m, layer, &b->f, NULL, err)))
        return rc;
    return fg__add_norm(m, layer, "Norm", h, FG_NORM_LN, err);
}

struct enc1_block fg__enc1_bert_block(const struct fg_model *m, bool bidirectional)
{
    struct enc1_block b = {
        .a = {.hidden = m->hidden, .heads = m->heads, .kv_heads = m->heads,
              .head_dim = m->head_dim, .qkv_bias = true, .o_bias = true,
              .bidirectional = bidirectional},
        .f = {.hidden = m->hidden, .inter = m->inter, .bias = true}};
    return b;
}

static int enc1_layer(struct fg_model *m, int32_t layer, const void *ctx, struct fg_err *err)
{
    return fg__enc1_block(m, layer, ctx, NULL, err);
}

int fg__enc1_blocks(struct fg_model *m, const struct enc1_block *b, struct fg_err *err)
{
    return fg__add_layers(m, m->layers, enc1_layer, b, err);
}

int fg__enc1_pos_type(const struct fg_cfg *c, const char *def, bool *relative, bool *rotary,
                      bool rotary_ok, struct fg_err *err)
{
    const char *p = NULL;
    int rc = fg_cfg_str(c, "position_embedding_type", def, &p, err);
    if (rc)
        return rc;
    *relative = !strcmp(p, "relative_key") || !strcmp(p, "relative_key_query");
    *rotary = rotary_ok && !strcmp(p, "rotary");
    if (*relative || *rotary || !strcmp(p, "absolute"))
        return 0;
    return fg_err_set(err, FG_E_RANGE, "%s: key 'position_embedding_type' = '%s'; expected "
                      "absolute, relative_key or relative_key_query%s", c->origin, p,
                      rotary_ok ? " or rotary" : "");
}

void fg__enc1_position_ids(const struct fg_cfg *c, struct fg_model *m, struct fg_node *n)
{
    unsigned ver = fg__cfg_tf_version(c);
    if (ver < 3001 || ver >= 4031)
        return;
    n->params += m->max_pos;
    n->buffers += m->max_pos;
    fg__model_rule(m, "embeddings.position_ids buffer stored (written by transformers < 4.31; "
                   "in Position embedding)", 0);
}

int fg__enc1_proj(struct fg_model *m, uint64_t in, uint64_t out, bool bias, struct fg_err *err)
{
    return fg__add_linear(m, FG_NODE_OTHER, -1, "Embedding projection", "proj", in, out, bias,
                          NULL, err);
}

int fg__enc1_tables(const struct fg_cfg *c, struct fg_model *m, uint64_t emb, bool positions,
                    uint64_t types, struct fg_err *err)
{
    struct fg_node *n;
    int rc;
    if ((rc = fg__add_embedding(m, m->vocab, emb, err)))
        return rc;
    if (positions) {
        if ((rc = fg__add_table(m, FG_NODE_POS_EMBED, "Position embedding", m->max_pos, emb,
                                &n, err)))
            return rc;
        fg__enc1_position_ids(c, m, n);
    }
    if (types && (rc = fg__add_table(m, FG_NODE_POS_EMBED, "Token type embedding", types, emb,
                                     NULL, err)))
        return rc;
    return 0;
}

int fg__enc1_embeddings(const struct fg_cfg *c, struct fg_model *m, uint64_t emb,
                        bool positions, uint64_t types, bool proj, struct fg_err *err)
{
    int rc;
    if ((rc = fg__enc1_tables(c, m, emb, positions, types, err)) ||
        (rc = fg__add_norm(m, -1, "Embedding norm", emb, FG_NORM_LN, err)))
        return rc;
    return proj ? fg__enc1_proj(m, emb, m->hidden, true, err) : 0;
}

/* ---- the BERT-like families -------------------------------------------------------------- */

enum enc1_norms {
    NORMS_POST,       /* BERT: LayerNorm after the embeddings and after each sublayer */
    NORMS_PRE,        /* RobertaPreLayerNorm: embeddings LayerNorm, pre-norm sublayers, a final
                         LayerNorm */
    NORMS_PRE_NOEMB,  /* XLMRobertaXL, MegatronBert: pre-norm, final LayerNorm, none after the
                         embeddings */
};

struct enc1_family {
    const char *prefix;              /* class-name prefix */
    const struct enc1_tasks *tasks;  /* the base model ("Model") when architectures is absent,
                                        as AutoModel builds it */
    struct fg_core_defaults d;
    uint64_t types_def;
    enum enc1_norms norms;
    bool task_ids;                   /* ErnieEmbeddings task_type_embeddings (use_task_id) */
    bool layout_2d;                  /* LayoutLMEmbeddings x / y / h / w position tables */
    bool global_qkv;                 /* LongformerSelfAttention query/key/value_global */
    bool use_bias_key;               /* BigBirdSelfAttention: q/k/v bias by use_bias */
    bool roc_inputs;                 /* RoCBertEmbeddings pronunciation / shape tables */
    bool lang_adapters;              /* XmodOutput: one adapter per language, pre_norm */
};

/* BertFor* as the families whose classes are copied from BERT's build them. */
static const struct enc1_tasks bert_tasks = {
    .classes = E1C_BERT, .pooled = E1C_PRETRAINING | E1C_MODEL | E1C_SEQ | E1C_CHOICE,
    .seq_head = E1_LABELS};

/* RoCBertFor*: BERT's, but RoCBertForPreTraining is RoCBertModel (with its pooler) and
 * RoCBertOnlyMLMHead alone: its contrastive losses hold no weights and there is no
 * next-sentence head (models/roc_bert/modeling_roc_bert.py). */
static const struct enc1_tasks roc_bert_tasks = {
    .classes = E1C_BERT, .pooled = E1C_PRETRAINING | E1C_MODEL | E1C_SEQ | E1C_CHOICE,
    .seq_head = E1_LABELS, .pretrain_mlm_only = true};

/* RobertaFor* (and the classes copied from them): the classification head is dense +
 * out_proj without the pooler. */
static const struct enc1_tasks roberta_tasks = {
    .classes = E1C_BERT & ~E1C_PRETRAINING, .pooled = E1C_MODEL | E1C_CHOICE,
    .seq_head = E1_CLS_DENSE};

/* LayoutLMFor*: every class builds LayoutLMModel(config) with its pooler. */
static const struct enc1_tasks layoutlm_tasks = {
    .classes = E1C_MASKED_LM | E1C_MODEL | E1C_SEQ | E1C_TOKEN | E1C_QA, .pooled = E1C_BERT,
    .seq_head = E1_LABELS};

/* BigBirdFor*: BigBirdModel(config) with its pooler under every head listed here (the QA
 * class's own head is not sized); sequence classification is dense + out_proj. */
static const struct enc1_tasks big_bird_tasks = {
    .classes = E1C_BERT & ~E1C_QA, .pooled = E1C_BERT, .seq_head = E1_CLS_DENSE};

/* ErnieConfig defaults; ERNIE 3.0 / Zh checkpoints set use_task_id. */
static const struct enc1_family ernie = {
    .prefix = "Ernie", .tasks = &bert_tasks, .types_def = 2, .norms = NORMS_POST, .task_ids = true,
    .d = {.vocab = 30522, .hidden = 768, .inter = 3072, .layers = 12, .heads = 12,
          .max_pos = 512, .tie = true}};
/* RobertaPreLayerNormConfig defaults */
static const struct enc1_family roberta_prelayernorm = {
    .prefix = "RobertaPreLayerNorm", .tasks = &roberta_tasks, .types_def = 2, .norms = NORMS_PRE,
    .d = {.vocab = 50265, .hidden = 768, .inter = 3072, .layers = 12, .heads = 12,
          .max_pos = 512, .tie = true}};
/* XLMRobertaXLConfig defaults (facebook/xlm-roberta-xl shapes) */
static const struct enc1_family xlm_roberta_xl = {
    .prefix = "XLMRobertaXL", .tasks = &roberta_tasks, .types_def = 1,
    .norms = NORMS_PRE_NOEMB,
    .d = {.vocab = 250880, .hidden = 2560, .inter = 10240, .layers = 36, .heads = 32,
          .max_pos = 514, .tie = true}};
/* MegatronBertConfig defaults (megatron-bert-cased-345m shapes) */
static const struct enc1_family megatron_bert = {
    .prefix = "MegatronBert", .tasks = &bert_tasks, .types_def = 2, .norms = NORMS_PRE_NOEMB,
    .d = {.vocab = 29056, .hidden = 1024, .inter = 4096, .layers = 24, .heads = 16,
          .max_pos = 512, .tie = true}};
/* BigBirdConfig defaults (google/bigbird-roberta-base shapes) */
static const struct enc1_family big_bird = {
    .prefix = "BigBird", .tasks = &big_bird_tasks, .types_def = 2, .norms = NORMS_POST,
    .use_bias_key = true,
    .d = {.vocab = 50358, .hidden = 768, .inter = 3072, .layers = 12, .heads = 12,
          .max_pos = 4096, .tie = true}};
/* LayoutLMConfig defaults */
static const struct enc1_family layoutlm = {
    .prefix = "LayoutLM", .tasks = &layoutlm_tasks, .types_def = 2, .norms = NORMS_POST,
    .layout_2d = true,
    .d = {.vocab = 30522, .hidden = 768, .inter = 3072, .layers = 12, .heads = 12,
          .max_pos = 512, .tie = true}};
/* LongformerConfig defaults */
static const struct enc1_family longformer = {
    .prefix = "Longformer", .tasks = &roberta_tasks, .types_def = 2, .norms = NORMS_POST,
    .global_qkv = true,
    .d = {.vocab = 30522, .hidden = 768, .inter = 3072, .layers = 12, .heads = 12,
          .max_pos = 512, .tie = true}};

/* RoCBertConfig defaults (weiweishi/roc-bert-base-zh shapes) */
static const struct enc1_family roc_bert = {
    .prefix = "RoCBert", .tasks = &roc_bert_tasks, .types_def = 2, .norms = NORMS_POST,
    .roc_inputs = true,
    .d = {.vocab = 30522, .hidden = 768, .inter = 3072, .layers = 12, .heads = 12,
          .max_pos = 512, .tie = true}};
/* XmodConfig defaults */
static const struct enc1_family xmod = {
    .prefix = "Xmod", .tasks = &roberta_tasks, .types_def = 2, .norms = NORMS_POST,
    .lang_adapters = true,
    .d = {.vocab = 30522, .hidden = 768, .inter = 3072, .layers = 12, .heads = 12,
          .max_pos = 512, .tie = true}};

/*
 * RoCBertEmbeddings (models/roc_bert/modeling_roc_bert.py): beside BERT's tables
 * pronunciation_embed (pronunciation_vocab_size x pronunciation_embed_dim) and shape_embed
 * (shape_vocab_size x shape_embed_dim), always built; with concat_input map_inputs_layer
 * Linear(h + the enabled widths, h).
 */
static int roc_inputs(const struct fg_cfg *c, struct fg_model *m, struct fg_err *err)
{
    uint64_t pv, pd, sv, sd;
    bool pron, shape, concat;
    struct fg_node *n;
    int rc;
    if ((rc = fg_cfg_u64(c, "pronunciation_vocab_size", 910, 0, FG_MAX_VOCAB, &pv, err)) ||
        (rc = fg_cfg_u64(c, "pronunciation_embed_dim", 768, 0, FG_MAX_HIDDEN, &pd, err)) ||
        (rc = fg_cfg_u64(c, "shape_vocab_size", 24858, 0, FG_MAX_VOCAB, &sv, err)) ||
        (rc = fg_cfg_u64(c, "shape_embed_dim", 512, 0, FG_MAX_HIDDEN, &sd, err)) ||
        (rc = fg_cfg_bool(c, "enable_pronunciation", true, &pron, err)) ||
        (rc = fg_cfg_bool(c, "enable_shape", true, &shape, err)) ||
        (rc = fg_cfg_bool(c, "concat_input", true, &concat, err)))
        return rc;
    if ((rc = fg__add_table(m, FG_NODE_EMBED, "Pronunciation embedding", pv, pd, &n, err)) ||
        (rc = fg__add_table(m, FG_NODE_EMBED, "Shape embedding", sv, sd, &n, err)))
        return rc;
    if (!concat)
        return 0;
    return fg__enc1_proj(m, m->hidden + (pron ? pd : 0) + (shape ? sd : 0), m->hidden, true,
                         err);
}

/*
 * XmodOutput (models/xmod/modeling_xmod.py): after BERT's output dense and LayerNorm,
 * adapter_layer_norm (with adapter_layer_norm) and adapter_modules, one XmodAdapter per
 * entry of languages: dense1 h -> h / adapter_reduction_factor and dense2 back, biased.
 * Scalars per layer into *per; *final: XmodEncoder's LayerNorm (pre_norm).
 */
static int lang_adapters(const struct fg_cfg *c, uint64_t h, uint64_t *per, bool *final,
                         struct fg_err *err)
{
    const char *langs[1024];
    size_t n = 0;
    uint64_t r;
    bool ln;
    int rc;
    if ((rc = fg_cfg_u64(c, "adapter_reduction_factor", 2, 1, FG_MAX_HIDDEN, &r, err)) ||
        (rc = fg_cfg_bool(c, "adapter_layer_norm", false, &ln, err)) ||
        (rc = fg_cfg_bool(c, "pre_norm", false, final, err)))
        return rc;
    if (fg_cfg_has(c, "languages")) {
        if ((rc = fg_cfg_str_array(c, "languages", langs, 1024, &n, err)))
            return rc;
    } else {
        n = 1; /* ("en_XX",) */
    }
    uint64_t b = h / r;
    *per = n * (h * b + b + b * h + h) + (ln ? 2 * h : 0);
    return 0;
}

/* Embedding tables of a BERT-like family: word, position (with the old position_ids
 * buffer), token type, ERNIE's task types, LayoutLM's four 2-D tables, the LayerNorm. */
static int bertlike_embeddings(const struct fg_cfg *c, struct fg_model *m,
                               const struct enc1_family *f, struct fg_err *err)
{
    uint64_t h = m->hidden, types, task_types = 0, max2d = 0;
    bool use_task = false;
    struct fg_node *n;
    int rc;
    if ((rc = fg_cfg_u64(c, "type_vocab_size", f->types_def, 0, FG_MAX_VOCAB, &types, err)) ||
        (f->task_ids && (rc = fg_cfg_bool(c, "use_task_id", false, &use_task, err))) ||
        (use_task &&
         (rc = fg_cfg_u64(c, "task_type_vocab_size", 3, 0, FG_MAX_VOCAB, &task_types, err))) ||
        (f->layout_2d &&
         (rc = fg_cfg_u64(c, "max_2d_position_embeddings", 1024, 1, FG_MAX_POS, &max2d, err))))
        return rc;
    if ((rc = fg__enc1_tables(c, m, h, true, types, err)))
        return rc;
    if (task_types &&
        (rc = fg__add_table(m, FG_NODE_POS_EMBED, "Task type embedding", task_types, h, NULL,
                            err)))
        return rc;
    if (max2d) {
        if ((rc = fg__add_table(m, FG_NODE_POS_EMBED, "2-D position embeddings", 4 * max2d, h,
                                &n, err)))
            return rc;
        fg__fmt(n->desc, sizeof n->desc, "x, y, h, w: 4 x %llu x %llu",
                (unsigned long long)max2d, (unsigned long long)h);
    }
    if (f->roc_inputs && (rc = roc_inputs(c, m, err)))
        return rc;
    if (f->norms != NORMS_PRE_NOEMB)
        return fg__add_norm(m, -1, "Embedding norm", h, FG_NORM_LN, err);
    return 0;
}

/*
 * The BERT-like families: embeddings as above; per layer q/k/v/o (biased; BigBird's q/k/v
 * by use_bias), relative distance_embedding (2 max_pos - 1) x head_dim when
 * position_embedding_type is relative, Longformer's query/key/value_global (h x h + bias),
 * two LayerNorms, the cross-attention and its LayerNorm with add_cross_attention, the
 * plain biased MLP; the pre-norm families' final LayerNorm; the pooler when the class
 * builds one; the task head.
 */
static int read_bertlike(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                         struct fg_err *err)
{
    const struct enc1_family *f = spec;
    uint64_t labels = 2, windows[FG_MAX_LAYERS], adapters = 0;
    bool relative, rotary, cross, decoder, qkv_bias = true, final_norm = f->norms != NORMS_POST;
    struct enc1_task task;
    int rc;
    if ((rc = fg__read_core(c, m, &f->d, err)) ||
        (rc = fg__enc1_pos_type(c, "absolute", &relative, &rotary, false, err)) ||
        (rc = fg_cfg_bool(c, "add_cross_attention", false, &cross, err)) ||
        (rc = fg_cfg_bool(c, "is_decoder", false, &decoder, err)) ||
        (f->use_bias_key && (rc = fg_cfg_bool(c, "use_bias", true, &qkv_bias, err))) ||
        (f->lang_adapters && (rc = lang_adapters(c, m->hidden, &adapters, &final_norm, err))) ||
        (rc = fg__enc1_task(c, m, f->prefix, f->tasks, &task, &labels, err)))
        return rc;
    /* LongformerConfig.attention_window: one size for all layers, or one per layer */
    if (f->global_qkv &&
        (rc = fg_cfg_u64_per_layer(c, "attention_window", 512, 2, FG_MAX_POS, m->layers, windows,
                                   FG_MAX_LAYERS, err)))
        return rc;
    if ((rc = bertlike_embeddings(c, m, f, err)))
        return rc;
    uint64_t h = m->hidden;
    struct enc1_block b = fg__enc1_bert_block(m, !decoder);
    b.a.qkv_bias = qkv_bias;
    b.attn_extra = (relative ? (2 * m->max_pos - 1) * m->head_dim : 0) +
                   (f->global_qkv ? 3 * (h * h + h) : 0);
    b.cross = cross;
    for (uint64_t l = 0; l < m->layers; l++) {
        b.a.window = f->global_qkv ? windows[l] : 0;
        if ((rc = fg__enc1_block(m, (int32_t)l, &b, NULL, err)))
            return rc;
        if (adapters) {
            struct fg_node *n = fg__model_add_block(m, FG_NODE_OTHER, (int32_t)l, "Adapters",
                                                    err);
            if (!n)
                return FG_E_NOMEM;
            n->params = adapters;
            n->hidden = n->width = (uint32_t)h;
        }
    }
    if (final_norm && (rc = fg__add_norm(m, -1, "Final norm", h, FG_NORM_LN, err)))
        return rc;
    if (task.pooler && (rc = fg__add_pooler(m, h, err)))
        return rc;
    m->encoder_only = !decoder;
    return fg__enc1_head(m, task.head, labels, h, !m->tied, 0, err);
}

/* ---- ALBERT -------------------------------------------------------------------------------- */

/* AlbertFor*: BERT's but ForCausalLM; AlbertSOPHead: h x num_labels (2). */
static const struct enc1_tasks albert_tasks = {
    .classes = E1C_BERT & ~E1C_CAUSAL_LM,
    .pooled = E1C_PRETRAINING | E1C_MODEL | E1C_SEQ | E1C_CHOICE, .seq_head = E1_LABELS};

/*
 * AlbertModel (models/albert/modeling_albert.py @00661e38a9e1):
 *   AlbertEmbeddings  word, position, token type tables of embedding_size, LayerNorm(E)
 *   AlbertTransformer embedding_hidden_mapping_in Linear(E, h); num_hidden_groups
 *                     AlbertLayerGroups of inner_group_num AlbertLayers (query / key /
 *                     value / dense biased, LayerNorm, ffn / ffn_output biased,
 *                     full_layer_layer_norm)
 *   pooler            Linear(h, h) (add_pooling_layer)
 * The loop runs num_hidden_layers times, the i-th over group int(i / (L / G)), each
 * group's inner_group_num layers: L x inner layers run, G x inner stored.  Run layers
 * past a group's first run hold no parameters of their own here (the stored layer's count
 * is on its first run).  AlbertMLMHead: LayerNorm(E), bias vocab, dense h -> E, decoder
 * E -> vocab tied to the embeddings, its bias the same tensor.
 * The original conversions (configs without transformers_version, e.g. albert-base-v2)
 * store the pooler and predictions.decoder.bias beside predictions.bias whatever the
 * class: albert-base-v2's model.safetensors holds 11,842,272 F32 = AlbertForMaskedLM
 * 11,221,680 + pooler 590,592 + 30,000 (tests/test_arch_bert_variants.c).
 */
static int read_albert(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                       struct fg_err *err)
{
    (void)spec;
    /* AlbertConfig defaults (albert-xxlarge shapes) */
    static const struct fg_core_defaults d = {.vocab = 30000, .hidden = 4096, .inter = 16384,
                                              .layers = 12, .heads = 64, .max_pos = 512,
                                              .tie = true};
    uint64_t emb, types, groups, inner, labels = 2;
    bool relative, rotary;
    struct enc1_task task;
    int rc;
    if ((rc = fg__read_core(c, m, &d, err)) ||
        (rc = fg_cfg_u64(c, "embedding_size", 128, 1, FG_MAX_HIDDEN, &emb, err)) ||
        (rc = fg_cfg_u64(c, "type_vocab_size", 2, 0, FG_MAX_VOCAB, &types, err)) ||
        (rc = fg_cfg_u64(c, "num_hidden_groups", 1, 1, FG_MAX_LAYERS, &groups, err)) ||
        (rc = fg_cfg_u64(c, "inner_group_num", 1, 1, FG_MAX_LAYERS, &inner, err)) ||
        (rc = fg__enc1_pos_type(c, "absolute", &relative, &rotary, false, err)) ||
        (rc = fg__enc1_task(c, m, "Albert", &albert_tasks, &task, &labels, err)))
        return rc;
    if (groups > m->layers || m->layers * inner > FG_MAX_LAYERS)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'num_hidden_groups' = %llu with %llu "
                          "layers of %llu: at most num_hidden_layers groups and %u layers run",
                          c->origin, (unsigned long long)groups, (unsigned long long)m->layers,
                          (unsigned long long)inner, FG_MAX_LAYERS);
    bool original = !fg__cfg_tf_version(c);
    uint64_t h = m->hidden, runs = m->layers;
    if ((rc = fg__enc1_embeddings(c, m, emb, true, types, true, err)))
        return rc;
    struct enc1_block b = fg__enc1_bert_block(m, true);
    b.attn_extra = relative ? (2 * m->max_pos - 1) * m->head_dim : 0;
    uint64_t last_group = (uint64_t)-1;
    for (uint64_t i = 0; i < runs; i++) {
        uint64_t g = i * groups / runs; /* int(i / (L / G)) */
        bool stored = g != last_group;
        last_group = g;
        for (uint64_t k = 0; k < inner; k++) {
            size_t first = m->n_nodes;
            if ((rc = fg__enc1_block(m, (int32_t)(i * inner + k), &b, NULL, err)))
                return rc;
            for (size_t j = first; !stored && j < m->n_nodes; j++)
                m->nodes[j].params = 0; /* the group's layer, stored on its first run */
        }
    }
    if (groups < runs)
        fg__model_note(m, "ALBERT layer sharing: %llu layers run, %llu stored "
                       "(num_hidden_groups %llu x inner_group_num %llu)",
                       (unsigned long long)(runs * inner),
                       (unsigned long long)(groups * inner), (unsigned long long)groups,
                       (unsigned long long)inner);
    m->layers = runs * inner;
    bool pooler = task.pooler || original;
    if (pooler && (rc = fg__add_pooler(m, h, err)))
        return rc;
    bool mlm = task.head == E1_MLM || task.head == E1_PRETRAIN;
    if (original)
        fg__model_rule(m, mlm ? "pooler and predictions.decoder.bias stored by the original "
                                "conversions (config without transformers_version; in Pooler, "
                                "MLM head)"
                              : "pooler stored by the original conversions (config without "
                                "transformers_version; in Pooler)", 0);
    m->encoder_only = true;
    return fg__enc1_head(m, task.head, labels, emb, !m->tied, original && mlm ? m->vocab : 0,
                         err);
}

/* ---- DeBERTa (v1) --------------------------------------------------------------------------- */

/* DebertaFor*: the pooler (ContextPooler) only under sequence classification. */
static const struct enc1_tasks deberta_tasks = {
    .classes = E1C_MASKED_LM | E1C_MODEL | E1C_SEQ | E1C_TOKEN | E1C_QA, .pooled = E1C_SEQ,
    .seq_head = E1_LABELS};

/* DebertaConfig.pos_att_type: a list (the '|'-separated string the class splits is one by
 * the time it is read: source/config_classes.h). */
static int deberta_att_types(const struct fg_cfg *c, bool *c2p, bool *p2c, struct fg_err *err)
{
    const char *a[4];
    size_t n = 0;
    int rc = fg_cfg_str_array(c, "pos_att_type", a, 4, &n, err);
    *c2p = *p2c = false;
    for (size_t i = 0; i < n && i < 4; i++) {
        *c2p = *c2p || !strcmp(a[i], "c2p");
        *p2c = *p2c || !strcmp(a[i], "p2c");
    }
    return rc;
}

/*
 * DebertaModel (models/deberta/modeling_deberta.py @0038a3caa5c7):
 *   DebertaEmbeddings  word (embedding_size), position only when position_biased_input,
 *                      token type when type_vocab_size > 0, embed_proj E -> h (no bias)
 *                      when they differ, DebertaLayerNorm (weight + bias)
 *   DisentangledSelfAttention  in_proj h -> 3 x heads x head_dim (no bias), q_bias,
 *                      v_bias; with relative_attention pos_proj (c2p, no bias) and
 *                      pos_q_proj (p2c, biased); talking_head: head_logits_proj and
 *                      head_weights_proj heads x heads (no bias)
 *   DebertaSelfOutput / Intermediate / Output  BERT's, with DebertaLayerNorm
 *   DebertaEncoder     rel_embeddings (2 x max_relative_positions, or 2 x max_position_
 *                      embeddings when < 1) x h with relative_attention
 * Heads: the MLM transform (dense h -> E, LayerNorm(E)), decoder tied, bias vocab;
 * ContextPooler dense pooler_hidden_size under the sequence classifier.  AutoModel
 * counts: deberta-base 138,601,728, -large 405,163,008, -xlarge 757,804,032
 * (tests/test_arch_bert_variants.c).
 */
static int read_deberta(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                        struct fg_err *err)
{
    (void)spec;
    /* DebertaConfig defaults */
    static const struct fg_core_defaults d = {.vocab = 50265, .hidden = 768, .inter = 3072,
                                              .layers = 12, .heads = 12, .max_pos = 512,
                                              .tie = true};
    uint64_t emb, types, pool, labels = 2;
    bool pos_input, relative, talking, c2p, p2c;
    double mr;
    struct enc1_task task;
    struct fg_node *n;
    int rc;
    if ((rc = fg__read_core(c, m, &d, err)) ||
        (rc = fg_cfg_u64(c, "embedding_size", m->hidden, 1, FG_MAX_HIDDEN, &emb, err)) ||
        (rc = fg_cfg_u64(c, "type_vocab_size", 0, 0, FG_MAX_VOCAB, &types, err)) ||
        (rc = fg_cfg_u64(c, "pooler_hidden_size", m->hidden, 1, FG_MAX_HIDDEN, &pool, err)) ||
        (rc = fg_cfg_bool(c, "position_biased_input", true, &pos_input, err)) ||
        (rc = fg_cfg_bool(c, "relative_attention", false, &relative, err)) ||
        (rc = fg_cfg_bool(c, "talking_head", false, &talking, err)) ||
        (rc = fg_cfg_f64(c, "max_relative_positions", -1, -1e9, (double)FG_MAX_POS, &mr, err)) ||
        (rc = deberta_att_types(c, &c2p, &p2c, err)) ||
        (rc = fg__enc1_task(c, m, "Deberta", &deberta_tasks, &task, &labels, err)))
        return rc;
    uint64_t h = m->hidden, q = m->heads * m->head_dim;
    uint64_t max_rel = mr < 1 ? m->max_pos : (uint64_t)mr;
    if ((rc = fg__enc1_tables(c, m, emb, pos_input, types, err)))
        return rc;
    if (emb != h && (rc = fg__enc1_proj(m, emb, h, false, err)))
        return rc;
    if ((rc = fg__add_norm(m, -1, "Embedding norm", h, FG_NORM_LN, err)))
        return rc;
    /* in_proj q / k / v fused without bias; q_bias, v_bias; talking-head projections */
    struct enc1_block b = fg__enc1_bert_block(m, true);
    b.a.fused_qkv = true;
    b.a.qkv_bias = false;
    b.attn_extra = 2 * q + (talking ? 2 * m->heads * m->heads : 0);
    for (uint64_t l = 0; l < m->layers; l++) {
        if ((rc = fg__enc1_block(m, (int32_t)l, &b, &n, err)))
            return rc;
        if (relative && c2p)
            fg__node_linear(n, "pos_k", h, q, 1, false);
        if (relative && p2c)
            fg__node_linear(n, "pos_q", h, q, 1, true);
    }
    if (relative &&
        (rc = fg__add_table(m, FG_NODE_POS_EMBED, "Relative embedding", 2 * max_rel, h, NULL,
                            err)))
        return rc;
    if (task.pooler) {
        if (!(n = fg__model_add(m, FG_NODE_OTHER, -1, "Pooler", err)))
            return FG_E_NOMEM;
        fg__node_linear(n, "dense", pool, pool, 1, true);
        fg__fmt(n->desc, sizeof n->desc, "ContextPooler %llu", (unsigned long long)pool);
    }
    m->encoder_only = true;
    uint64_t hsave = m->hidden;
    if (task.pooler)
        m->hidden = pool; /* the classifier reads the pooled width */
    rc = fg__enc1_head(m, task.head, labels, emb, !m->tied, 0, err);
    m->hidden = hsave;
    return rc;
}

const struct fg_arch fg__arch_enc1_table[] = {
#include "arch/encoder/bert_variants.def"
    {0},
};
