/*
 * gpt2_bloom_falcon.c - decoders from before the llama layout settled:
 *
 *   gpt2                  GPT2LMHeadModel (transformers models/gpt2)
 *   gptj                  GPTJForCausalLM (models/gptj)
 *   bloom                 BloomForCausalLM (models/bloom)
 *   falcon                FalconForCausalLM (models/falcon)
 *   phi                   PhiForCausalLM (models/phi)
 *   mixformer-sequential  MixFormerSequentialForCausalLM, the remote code of the
 *                         first microsoft/phi-1_5 and phi-2 revisions
 *                         (modeling_mixformer_sequential.py); the same tensors
 *                         PhiForCausalLM later renamed
 *   chatglm               ChatGLMForConditionalGeneration, THUDM chatglm2/3
 *                         remote code (modeling_chatglm.py)
 *   qwen                  QWenLMHeadModel, Qwen v1 remote code (modeling_qwen.py)
 *
 * Every family is the same block - norm(s), attention, MLP - with LayerNorm
 * or RMSNorm, parallel or sequential residuals, fused or split projections
 * and biases in different places.  A row of struct legacy_spec holds what is
 * fixed for a family (the config class defaults, the block layout); its key
 * reader resolves what the config decides, in the family's own spellings
 * (n_embd, n_embed, padded_vocab_size, kv_channels ...).  One builder turns
 * the resolved block into nodes.
 */
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "util/fmt.h"

/* The block as built: fixed per family, some fields set by the key reader. */
struct block {
    enum fg_norm_kind norm;
    uint8_t norms;             /* per layer: 1 = one norm feeding parallel attention and MLP */
    bool fused_qkv, qkv_bias, o_bias;
    uint8_t qk_norm;           /* see struct fg_attn_shape */
    bool gated, fused_gate_up, mlp_bias;
    bool learned_pos;          /* absolute position table, max_pos x hidden */
    bool emb_norm;             /* LayerNorm right after the embedding */
    bool final_norm;
    uint8_t score_bytes;       /* see struct fg_node; eager_bytes 0: fg__add_attention's */
    uint8_t eager_bytes;
    bool head_bias, head_stored_when_tied;
    uint64_t mask_per_layer;   /* stored causal-mask buffer scalars in each attention */
    uint64_t rotary_buffer;    /* stored rotary inv_freq scalars (one table per model) */
};

struct legacy_spec;
typedef int (*keys_fn)(const struct fg_cfg *c, struct fg_model *m, const struct legacy_spec *s,
                       struct block *b, struct fg_err *err);

struct legacy_spec {
    struct fg_core_defaults d;   /* the config class defaults */
    const char *hidden_key;      /* alias lists, for checks that name the key */
    const char *heads_key;
    struct block b;
    keys_fn keys;
    bool new_arch;               /* falcon: new_decoder_architecture default */
};

/* ---- helpers -------------------------------------------------------------- */


/* fg__read_core, after checking heads against hidden under the family's own
 * key names (fg__read_core's message says hidden_size whatever the spelling). */
static int read_core_checked(const struct fg_cfg *c, struct fg_model *m,
                             const struct legacy_spec *s, struct fg_err *err)
{
    uint64_t hidden, heads;
    int rc;
    if ((rc = fg_cfg_u64(c, s->hidden_key, s->d.hidden, 1, FG_MAX_HIDDEN, &hidden, err)) ||
        (rc = fg_cfg_u64(c, s->heads_key, s->d.heads, 1, FG_MAX_HEADS, &heads, err)))
        return rc;
    if (!fg_cfg_has(c, "head_dim") && (rc = fg__check_heads(c, s->hidden_key, hidden, s->heads_key,
                                                        heads, err)))
        return rc;
    return fg__read_core(c, m, &s->d, err);
}

/* ---- the block builder ---------------------------------------------------- */

struct layer {
    const struct block *b;
    const struct fg_attn_shape *a;
    const struct fg_mlp_shape *f;
};

/* One block (an fg_layer_fn): norm, attention with the stored masks and the score sizes of
 * b, the second norm when b has two, MLP. */
static int add_layer(struct fg_model *m, int32_t li, const void *ctx, struct fg_err *err)
{
    const struct layer *k = ctx;
    const struct block *b = k->b;
    struct fg_node *n;
    int rc;
    if ((rc = fg__add_norm(m, li, "Norm", m->hidden, b->norm, err)) ||
        (rc = fg__add_attention(m, li, k->a, &n, err)))
        return rc;
    n->params += b->mask_per_layer;
    n->buffers += b->mask_per_layer;
    n->score_bytes = b->score_bytes;
    n->eager_bytes = b->eager_bytes ? b->eager_bytes : n->eager_bytes;
    if (b->norms == 2 && (rc = fg__add_norm(m, li, "Norm", m->hidden, b->norm, err)))
        return rc;
    return fg__add_mlp(m, li, k->f, NULL, err);
}

static int build(struct fg_model *m, const struct block *b, struct fg_err *err)
{
    int rc;
    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)))
        return rc;
    if (b->learned_pos && (rc = fg__add_table(m, FG_NODE_POS_EMBED, "Position embedding",
                                              m->max_pos,
                                     m->hidden, NULL, err)))
        return rc;
    if (b->emb_norm && (rc = fg__add_norm(m, -1, "Embedding norm", m->hidden, b->norm, err)))
        return rc;
    if (b->rotary_buffer) {
        struct fg_node *n;
        if ((rc = fg__add_table(m, FG_NODE_OTHER, "Rotary inv_freq", b->rotary_buffer, 1, &n,
                                      err)))
            return rc;
        n->buffers = n->params;
        n->width = 0;
        fg__fmt(n->desc, sizeof n->desc, "stored buffer, %llu scalars",
                 (unsigned long long)b->rotary_buffer);
    }
    struct fg_attn_shape a = {
        .hidden = m->hidden, .heads = m->heads, .kv_heads = m->kv_heads, .head_dim = m->head_dim,
        .qkv_bias = b->qkv_bias, .o_bias = b->o_bias, .fused_qkv = b->fused_qkv,
        .qk_norm = b->qk_norm, .qk_norm_kind = b->norm,
    };
    struct fg_mlp_shape f = {.hidden = m->hidden, .inter = m->inter, .gated = b->gated,
                             .bias = b->mlp_bias, .fused_gate_up = b->fused_gate_up};
    /* the blocks read nothing of their layer: those after the first are copies of it */
    struct layer k = {b, &a, &f};
    if ((rc = fg__add_layers(m, m->layers, add_layer, &k, err)))
        return rc;
    if (b->final_norm && (rc = fg__add_norm(m, -1, "Final norm", m->hidden, b->norm, err)))
        return rc;
    return fg__add_head(m, m->vocab, m->hidden, m->tied, b->head_stored_when_tied, b->head_bias,
                        err);
}

static int read_legacy(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                       struct fg_err *err)
{
    const struct legacy_spec *s = spec;
    struct block b = s->b;
    int rc = s->keys(c, m, s, &b, err);
    return rc ? rc : build(m, &b, err);
}

/* ---- key readers ---------------------------------------------------------- */

/* Largest n_positions whose stored n_positions^2 masks still make sense (and
 * keep layers x n_positions^2 far from overflow). */
#define MASK_MAX_POS (1u << 20)

/*
 * GPT2Attention registers bias = tril(ones(n_positions, n_positions)) viewed
 * 1 x 1 x n x n.  The published GPT-2 checkpoints (converted from OpenAI's
 * release) store it for every layer: openai-community/gpt2's model.safetensors
 * holds 137,022,720 scalars = 124,439,808 parameters + 12 x 1024 x 1024
 * (huggingface/safetensors "Metadata parsing" table); gpt2-large's 812M on the
 * Hub is likewise 774M + 36 x 1024^2.  transformers made the buffer
 * non-persistent later, so a fine-tune it saved has no masks; the config
 * cannot tell that save from a re-saved copy of a published config (the gpt2
 * fixture is one: transformers 4.47.1), and the published layout is counted.
 */
static int keys_gpt2(const struct fg_cfg *c, struct fg_model *m, const struct legacy_spec *s,
                     struct block *b, struct fg_err *err)
{
    int rc;
    bool cross = false;
    if ((rc = read_core_checked(c, m, s, err)) ||
        (rc = fg_cfg_bool(c, "add_cross_attention", false, &cross, err)))
        return rc;
    if (cross)
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: key 'add_cross_attention' is true: GPT-2 "
                          "with cross-attention blocks (an encoder-decoder half) is not supported",
                          c->origin);
    if (m->max_pos > MASK_MAX_POS)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'n_positions' = %llu: GPT-2 stores an "
                          "n_positions x n_positions mask per layer; at most %u is accepted",
                          c->origin, (unsigned long long)m->max_pos, MASK_MAX_POS);
    b->mask_per_layer = m->max_pos * m->max_pos;
    char rule[96];
    fg__fmt(rule, sizeof rule, "attn.bias causal masks stored: %llu layers x %llu x %llu "
             "(in Attention)", (unsigned long long)m->layers, (unsigned long long)m->max_pos,
             (unsigned long long)m->max_pos);
    fg__model_rule(m, rule, 0);
    return 0;
}

/*
 * GPTJAttention also registers bias (n_positions^2) and masked_bias, but they
 * are not counted: the published EleutherAI/gpt-j-6b pytorch_model.bin is
 * 24,207,819,307 B, the fp32 weights (6,050,882,784 x 4 B) plus ~4 MB, not
 * 28 separate 2048 x 2048 masks (117 MB).
 */
static int keys_gptj(const struct fg_cfg *c, struct fg_model *m, const struct legacy_spec *s,
                     struct block *b, struct fg_err *err)
{
    (void)b;
    return read_core_checked(c, m, s, err);
}

/* BloomConfig spells hidden_size n_embed in the published configs; BloomMLP
 * is always 4 x hidden (n_inner is ignored); ALiBi, so no position table.
 * max_pos: BLOOM has no position limit; seq_length (its training context)
 * when given, else BLOOM's 2048. */
static int keys_bloom(const struct fg_cfg *c, struct fg_model *m, const struct legacy_spec *s,
                      struct block *b, struct fg_err *err)
{
    (void)b;
    int rc;
    bool tie;
    if ((rc = fg_cfg_u64(c, "vocab_size", s->d.vocab, 1, FG_MAX_VOCAB, &m->vocab, err)) ||
        (rc = fg_cfg_u64(c, s->hidden_key, s->d.hidden, 1, FG_MAX_HIDDEN, &m->hidden, err)) ||
        (rc = fg_cfg_u64(c, "n_layer|num_hidden_layers", s->d.layers, 1, FG_MAX_LAYERS,
                         &m->layers, err)) ||
        (rc = fg_cfg_u64(c, s->heads_key, s->d.heads, 1, FG_MAX_HEADS, &m->heads, err)) ||
        (rc = fg_cfg_u64(c, "seq_length", s->d.max_pos, 1, FG_MAX_POS, &m->max_pos, err)) ||
        (rc = fg_cfg_bool(c, "tie_word_embeddings", s->d.tie, &tie, err)) ||
        (rc = fg__check_heads(c, s->hidden_key, m->hidden, s->heads_key, m->heads, err)))
        return rc;
    m->kv_heads = m->heads;
    m->head_dim = m->hidden / m->heads;
    m->inter = 4 * m->hidden;
    m->tied = tie;
    return 0;
}

/*
 * FalconDecoderLayer / FalconAttention:
 *   query_key_value  hidden -> (heads + 2 kv) x head_dim, kv = num_kv_heads
 *                    with new_decoder_architecture, else 1 (multi_query) or heads
 *   norms            parallel_attn with num_ln_in_parallel_attn == 2 (the default
 *                    for new_decoder_architecture): ln_attn + ln_mlp; parallel
 *                    otherwise: input_layernorm only; sequential: input + post
 *   biases           every linear by config.bias
 * The head: tie_word_embeddings defaults to true, and the published
 * checkpoints still write lm_head.weight (falcon-180B-chat's index lists it and
 * its total_size, 359,045,130,240 B in bf16, counts it).
 * Attention: FalconAttention hands SDPA fewer K/V heads than query heads without
 * enable_gqa, which the flash, memory-efficient and cuDNN kernels refuse
 * (torch sdp_utils check_batch_size_and_num_heads_dense), so torch runs its math
 * path and keeps the fp32 softmax, 4 B per score (falcon-7b LoRA on H200, 32 layers
 * x 71 heads: 13.69 GB kept at 1079 tokens, 1.34 GB at 256;
 * tests/calibration/measured-h200.tsv).  Its eager path takes the softmax in the
 * input dtype: 2 B per score (8.06 GB kept at 1079 tokens, the same run).
 */
static int keys_falcon(const struct fg_cfg *c, struct fg_model *m, const struct legacy_spec *s,
                       struct block *b, struct fg_err *err)
{
    int rc;
    bool new_arch, multi_query, parallel, bias, tie;
    uint64_t kv, nln;
    if ((rc = fg_cfg_u64(c, "vocab_size", s->d.vocab, 1, FG_MAX_VOCAB, &m->vocab, err)) ||
        (rc = fg_cfg_u64(c, s->hidden_key, s->d.hidden, 1, FG_MAX_HIDDEN, &m->hidden, err)) ||
        (rc = fg_cfg_u64(c, "num_hidden_layers|n_layer", s->d.layers, 1, FG_MAX_LAYERS,
                         &m->layers, err)) ||
        (rc = fg_cfg_u64(c, s->heads_key, s->d.heads, 1, FG_MAX_HEADS, &m->heads, err)) ||
        (rc = fg_cfg_u64(c, "max_position_embeddings", s->d.max_pos, 1, FG_MAX_POS, &m->max_pos,
                         err)) ||
        (rc = fg__check_heads(c, s->hidden_key, m->hidden, s->heads_key, m->heads, err)) ||
        (rc = fg_cfg_u64(c, "ffn_hidden_size", 4 * m->hidden, 1, FG_MAX_INTER, &m->inter, err)) ||
        (rc = fg_cfg_bool(c, "new_decoder_architecture", s->new_arch, &new_arch, err)) ||
        (rc = fg_cfg_bool(c, "multi_query", true, &multi_query, err)) ||
        (rc = fg_cfg_bool(c, "parallel_attn", true, &parallel, err)) ||
        (rc = fg_cfg_bool(c, "bias", false, &bias, err)) ||
        (rc = fg_cfg_bool(c, "tie_word_embeddings", s->d.tie, &tie, err)) ||
        (rc = fg_cfg_u64(c, "num_kv_heads|n_head_kv", m->heads, 1, FG_MAX_HEADS, &kv, err)) ||
        (rc = fg_cfg_u64(c, "num_ln_in_parallel_attn", new_arch ? 2 : 1, 1, 2, &nln, err)))
        return rc;
    if (!new_arch)
        kv = multi_query ? 1 : m->heads;
    if (m->heads % kv)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'num_attention_heads' = %llu is not a "
                          "multiple of key 'num_kv_heads' = %llu", c->origin,
                          (unsigned long long)m->heads, (unsigned long long)kv);
    m->kv_heads = kv;
    m->head_dim = m->hidden / m->heads;
    m->tied = tie;
    b->score_bytes = kv < m->heads ? 4 : 0;
    b->eager_bytes = 2;
    b->norms = !parallel || nln == 2 ? 2 : 1;
    b->qkv_bias = b->o_bias = b->mlp_bias = bias;
    return 0;
}

/* PhiAttention: q/k/v and dense with bias, optional q/k LayerNorm over head_dim. */
static int keys_phi(const struct fg_cfg *c, struct fg_model *m, const struct legacy_spec *s,
                    struct block *b, struct fg_err *err)
{
    bool qk = false;
    int rc;
    if ((rc = read_core_checked(c, m, s, err)) ||
        (rc = fg_cfg_bool(c, "qk_layernorm", false, &qk, err)))
        return rc;
    b->qk_norm = qk ? 1 : 0;
    return 0;
}

/*
 * MixFormerSequentialForCausalLM: layers = [Embedding, ParallelBlock x n_layer,
 * CausalLMHead]; a ParallelBlock is ln -> (mixer: Wqkv + out_proj, both
 * biased) + (mlp: fc1, fc2, biased); the head is its own LayerNorm + a biased
 * linear.  architecture.block_cls "parallel" and mlp_cls "mlp"/"fused_mlp"
 * (same tensors) are the layouts the published checkpoints use.
 */
static int keys_mixformer(const struct fg_cfg *c, struct fg_model *m, const struct legacy_spec *s,
                          struct block *b, struct fg_err *err)
{
    (void)b;
    int rc;
    if ((rc = read_core_checked(c, m, s, err)))
        return rc;
    struct fg_cfg arch;
    const char *block = "parallel", *mlp = "mlp";
    if (fg_cfg_has(c, "architecture")) {
        if (!fg_cfg_child(c, "architecture", &arch, err))
            return err ? err->code : FG_E_TYPE;
        if ((rc = fg_cfg_str(&arch, "block_cls", "parallel", &block, err)) ||
            (rc = fg_cfg_str(&arch, "mlp_cls", "mlp", &mlp, err)))
            return rc;
    }
    if (strcmp(block, "parallel") != 0)
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: key 'architecture.block_cls' = '%s': only "
                          "the 'parallel' MixFormer block is supported", c->origin, block);
    if (strcmp(mlp, "mlp") != 0 && strcmp(mlp, "fused_mlp") != 0)
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: key 'architecture.mlp_cls' = '%s': only "
                          "'mlp' and 'fused_mlp' are supported", c->origin, mlp);
    return 0;
}

/*
 * ChatGLMModel (chatglm2/3): embedding of padded_vocab_size; SelfAttention's
 * query_key_value maps hidden to heads x kv_channels + 2 x groups x kv_channels
 * (groups = multi_query_group_num under multi_query_attention), biased by
 * add_bias_linear or add_qkv_bias; dense biased by add_bias_linear; MLP
 * dense_h_to_4h to 2 x ffn_hidden_size (SwiGLU, fused), dense_4h_to_h;
 * final_layernorm when post_layer_norm; output_layer never tied.
 * RotaryEmbedding(rotary_dim // 2) registers inv_freq = arange(0, dim, 2) as a
 * persistent buffer, so the checkpoint stores it (32 scalars for chatglm3-6b).
 */
static int keys_chatglm(const struct fg_cfg *c, struct fg_model *m, const struct legacy_spec *s,
                        struct block *b, struct fg_err *err)
{
    int rc;
    bool mqa, bias_linear, qkv_bias, rms, post_ln;
    uint64_t groups;
    /* ChatGLM-6B (v1, GLM blocks with 2D positions) spells its sizes
     * inner_hidden_size / max_sequence_length and is a different network. */
    if (!fg_cfg_has(c, "padded_vocab_size") && fg_cfg_has(c, "inner_hidden_size"))
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: key 'inner_hidden_size' marks a ChatGLM-6B "
                          "v1 config (GLM blocks); only chatglm2/3 are supported", c->origin);
    if ((rc = fg_cfg_u64(c, "padded_vocab_size|vocab_size", s->d.vocab, 1, FG_MAX_VOCAB,
                         &m->vocab, err)) ||
        (rc = fg_cfg_u64(c, s->hidden_key, s->d.hidden, 1, FG_MAX_HIDDEN, &m->hidden, err)) ||
        (rc = fg_cfg_u64(c, "num_layers", s->d.layers, 1, FG_MAX_LAYERS, &m->layers, err)) ||
        (rc = fg_cfg_u64(c, s->heads_key, s->d.heads, 1, FG_MAX_HEADS, &m->heads, err)) ||
        (rc = fg_cfg_u64(c, "ffn_hidden_size", s->d.inter, 1, FG_MAX_INTER, &m->inter, err)) ||
        (rc = fg_cfg_u64(c, "seq_length", s->d.max_pos, 1, FG_MAX_POS, &m->max_pos, err)))
        return rc;
    if (!fg_cfg_has(c, "kv_channels") &&
        (rc = fg__check_heads(c, s->hidden_key, m->hidden, s->heads_key, m->heads, err)))
        return rc;
    if ((rc = fg_cfg_u64(c, "kv_channels", m->hidden / m->heads, 1, 1u << 14, &m->head_dim,
                         err)) ||
        (rc = fg_cfg_bool(c, "multi_query_attention", false, &mqa, err)) ||
        (rc = fg_cfg_u64(c, "multi_query_group_num", 1, 1, FG_MAX_HEADS, &groups, err)) ||
        (rc = fg_cfg_bool(c, "add_bias_linear", false, &bias_linear, err)) ||
        (rc = fg_cfg_bool(c, "add_qkv_bias", false, &qkv_bias, err)) ||
        (rc = fg_cfg_bool(c, "rmsnorm", true, &rms, err)) ||
        (rc = fg_cfg_bool(c, "post_layer_norm", true, &post_ln, err)))
        return rc;
    m->kv_heads = mqa ? groups : m->heads;
    if (m->heads % m->kv_heads)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'num_attention_heads' = %llu is not a "
                          "multiple of key 'multi_query_group_num' = %llu", c->origin,
                          (unsigned long long)m->heads, (unsigned long long)m->kv_heads);
    m->tied = false;
    b->norm = rms ? FG_NORM_RMS : FG_NORM_LN;
    b->qkv_bias = bias_linear || qkv_bias;
    b->o_bias = b->mlp_bias = bias_linear;
    b->final_norm = post_ln;
    uint64_t dim = m->head_dim / 2;
    b->rotary_buffer = (dim + 1) / 2;
    fg__model_rule(m, "rotary_pos_emb.inv_freq buffer stored (in Rotary inv_freq)", 0);
    return 0;
}

/*
 * QWenBlock: ln_1 (RMS), attn.c_attn hidden -> 3 x heads x kv_channels with
 * bias (always), attn.c_proj biased unless no_bias, ln_2, QWenMLP w1 / w2
 * hidden -> intermediate_size / 2 and c_proj back (SwiGLU; intermediate_size
 * in the config is both branches together), ln_f, untied lm_head.
 */
static int keys_qwen(const struct fg_cfg *c, struct fg_model *m, const struct legacy_spec *s,
                     struct block *b, struct fg_err *err)
{
    int rc;
    bool no_bias;
    if ((rc = read_core_checked(c, m, s, err)) ||
        (rc = fg_cfg_u64(c, "kv_channels", m->hidden / m->heads, 1, 1u << 14, &m->head_dim,
                         err)) ||
        (rc = fg_cfg_bool(c, "no_bias", true, &no_bias, err)))
        return rc;
    if (m->inter % 2)
        return fg_err_set(err, FG_E_RANGE, "%s: key 'intermediate_size' = %llu is odd: QWenMLP "
                          "splits it into two branches of intermediate_size / 2", c->origin,
                          (unsigned long long)m->inter);
    m->inter /= 2;
    b->o_bias = b->mlp_bias = !no_bias;
    return 0;
}

/* ---- rows ----------------------------------------------------------------- */

/* GPT2Config defaults; tied wte / lm_head (GPT2LMHeadModel._tied_weights_keys). */
static const struct legacy_spec gpt2 = {
    .d = {.vocab = 50257, .hidden = 768, .inter = 0, .layers = 12, .heads = 12, .max_pos = 1024,
          .tie = true},
    .hidden_key = "hidden_size|n_embd", .heads_key = "num_attention_heads|n_head",
    .b = {.norm = FG_NORM_LN, .norms = 2, .fused_qkv = true, .qkv_bias = true, .o_bias = true,
          .mlp_bias = true, .learned_pos = true, .final_norm = true},
    .keys = keys_gpt2};

/* GPTJConfig defaults and key spellings, which CodeGenConfig shares. */
#define GPTJ_CONFIG                                                                           \
    .d = {.vocab = 50400, .hidden = 4096, .inter = 0, .layers = 28, .heads = 16,             \
          .max_pos = 2048, .tie = false},                                                     \
    .hidden_key = "hidden_size|n_embd", .heads_key = "num_attention_heads|n_head"

/* GPT-J: parallel block (ln_1 only), q/k/v/out_proj unbiased, fc_in / fc_out biased, untied
 * lm_head with bias. */
static const struct legacy_spec gptj = {
    GPTJ_CONFIG,
    .b = {.norm = FG_NORM_LN, .norms = 1, .mlp_bias = true, .final_norm = true,
          .head_bias = true},
    .keys = keys_gptj};

/* CodeGenForCausalLM (models/codegen/modeling_codegen.py): GPT-J's parallel block with one
 * fused qkv_proj (no bias) and out_proj (no bias), fc_in / fc_out with bias, ln_f, an
 * untied lm_head with bias. */
static const struct legacy_spec codegen = {
    GPTJ_CONFIG,
    .b = {.norm = FG_NORM_LN, .norms = 1, .fused_qkv = true, .mlp_bias = true, .final_norm = true,
          .head_bias = true},
    .keys = keys_gptj};

/* BloomConfig defaults: word_embeddings_layernorm, fused query_key_value and
 * every linear biased, tied lm_head. */
static const struct legacy_spec bloom = {
    .d = {.vocab = 250880, .hidden = 64, .inter = 0, .layers = 2, .heads = 8, .max_pos = 2048,
          .tie = true},
    .hidden_key = "hidden_size|n_embed", .heads_key = "n_head|num_attention_heads",
    .b = {.norm = FG_NORM_LN, .norms = 2, .fused_qkv = true, .qkv_bias = true, .o_bias = true,
          .mlp_bias = true, .emb_norm = true, .final_norm = true},
    .keys = keys_bloom};

/* FalconConfig defaults (falcon-7b shapes), which the remote-code Falcon shares. */
#define FALCON_CONFIG                                                                         \
    .d = {.vocab = 65024, .hidden = 4544, .inter = 0, .layers = 32, .heads = 71,             \
          .max_pos = 2048, .tie = true},                                                      \
    .hidden_key = "hidden_size|n_embed", .heads_key = "num_attention_heads|n_head",          \
    .b = {.norm = FG_NORM_LN, .fused_qkv = true, .final_norm = true,                          \
          .head_stored_when_tied = true},                                                     \
    .keys = keys_falcon

static const struct legacy_spec falcon = {FALCON_CONFIG};

/* The original remote-code Falcon: RWForCausalLM of modelling_RW.py, the same
 * tensors; model_type RefinedWeb (40B / 180B) is the new decoder architecture
 * (ln_attn + ln_mlp, n_head_kv), RefinedWebModel (7B) the old one, Falcon's
 * (transformers convert_custom_code_checkpoint.py maps them so). */
static const struct legacy_spec refinedweb = {FALCON_CONFIG, .new_arch = true};

/* PhiConfig defaults: parallel block, biased q/k/v/dense and fc1/fc2,
 * final_layernorm, untied lm_head with bias. */
static const struct legacy_spec phi = {
    .d = {.vocab = 51200, .hidden = 2048, .inter = 8192, .layers = 24, .heads = 32,
          .max_pos = 2048, .tie = false},
    .hidden_key = "hidden_size", .heads_key = "num_attention_heads",
    .b = {.norm = FG_NORM_LN, .norms = 1, .qkv_bias = true, .o_bias = true, .mlp_bias = true,
          .final_norm = true, .head_bias = true},
    .keys = keys_phi};

/* MixFormerSequentialConfig defaults; the CausalLMHead's LayerNorm is the
 * final norm, its linear the biased head. */
static const struct legacy_spec mixformer = {
    .d = {.vocab = 50304, .hidden = 1024, .inter = 0, .layers = 20, .heads = 16, .max_pos = 2048,
          .tie = false},
    .hidden_key = "hidden_size|n_embd", .heads_key = "num_attention_heads|n_head",
    .b = {.norm = FG_NORM_LN, .norms = 1, .fused_qkv = true, .qkv_bias = true, .o_bias = true,
          .mlp_bias = true, .final_norm = true, .head_bias = true},
    .keys = keys_mixformer};

/* ChatGLMConfig defaults (chatglm2-6b shapes). */
static const struct legacy_spec chatglm = {
    .d = {.vocab = 65024, .hidden = 4096, .inter = 13696, .layers = 28, .heads = 32,
          .max_pos = 2048, .tie = false},
    .hidden_key = "hidden_size", .heads_key = "num_attention_heads",
    .b = {.norms = 2, .fused_qkv = true, .gated = true, .fused_gate_up = true},
    .keys = keys_chatglm};

/* QWenConfig defaults (Qwen-7B shapes). */
static const struct legacy_spec qwen = {
    .d = {.vocab = 151936, .hidden = 4096, .inter = 22016, .layers = 32, .heads = 32,
          .max_pos = 8192, .tie = false},
    .hidden_key = "hidden_size", .heads_key = "num_attention_heads",
    .b = {.norm = FG_NORM_RMS, .norms = 2, .fused_qkv = true, .qkv_bias = true, .gated = true,
          .final_norm = true},
    .keys = keys_qwen};

const struct fg_arch fg__arch_legacy_table[] = {
#include "arch/decoder/gpt2_bloom_falcon.def"
    {0},
};
