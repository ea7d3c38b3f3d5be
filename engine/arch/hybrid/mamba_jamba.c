/*
 * mamba_jamba.c - the state-space language models, each read from its transformers modeling
 * file (huggingface/transformers; the commit of each file read is named by its reader):
 *
 *   mamba         MambaForCausalLM        models/mamba/modeling_mamba.py (state-spaces
 *                                         mamba-*-hf)
 *   falcon_mamba  FalconMambaForCausalLM  models/falcon_mamba/modular_falcon_mamba.py
 *                                         (falcon-mamba-7b, Falcon3-Mamba)
 *   mamba2        Mamba2ForCausalLM       models/mamba2/modeling_mamba2.py
 *                                         (Mamba-Codestral-7B, mamba2-*-hf)
 *   jamba         JambaForCausalLM        models/jamba/modular_jamba.py (Jamba-v0.1,
 *                                         AI21-Jamba-Mini / Large 1.5, 1.6)
 *   zamba, zamba2 ZambaForCausalLM, Zamba2ForCausalLM   zamba.c
 *   recurrent_gemma, rwkv, xlstm          rwkv_xlstm_recurrent_gemma.c
 *   gemma3n_text  Gemma3nForCausalLM      gemma3n.c
 *   blt           BltForCausalLM          blt.c
 *   chameleon, emu3  ...ForConditionalGeneration     chameleon_emu3.c
 *
 * Mamba-1 layers are fg__add_mamba1 (below); Mamba-2 layers blocks.c's fg__add_mamba2.
 */
#include <stdio.h>
#include <string.h>


#include "arch/hybrid/nemotron_h_lfm2_qwen3_next.h"
#include "arch/hybrid/ssm.h"
#include "util/fmt.h"

/* The Mamba inner width: int(expand x hidden), or the key that overrides it. */
static int read_inner(const struct fg_cfg *c, const char *expand_key, const char *inner_key,
                      uint64_t hidden, uint64_t *out, struct fg_err *err)
{
    double expand;
    int rc = fg_cfg_f64(c, expand_key, 2.0, 0.01, 64.0, &expand, err);
    if (rc)
        return rc;
    uint64_t def = (uint64_t)(expand * (double)hidden);
    if (inner_key)
        return fg_cfg_u64(c, inner_key, def, 1, FG_MAX_INTER, out, err);
    if (!def)
        return fg_err_set(err, FG_E_RANGE, "%s: key '%s' x hidden_size is 0", c->origin,
                          expand_key);
    *out = def;
    return 0;
}

/* vocab, hidden, layers of the pure state-space configs (they have no attention heads). */
static int read_ssm_core(const struct fg_cfg *c, struct fg_model *m, uint64_t vocab,
                         uint64_t hidden, uint64_t layers, bool tie, struct fg_err *err)
{
    int rc;
    if ((rc = fg_cfg_u64(c, "vocab_size", vocab, 1, FG_MAX_VOCAB, &m->vocab, err)) ||
        (rc = fg_cfg_u64(c, "hidden_size", hidden, 1, FG_MAX_HIDDEN, &m->hidden, err)) ||
        (rc = fg_cfg_u64(c, "num_hidden_layers", layers, 1, FG_MAX_LAYERS, &m->layers, err)) ||
        (rc = fg_cfg_bool(c, "tie_word_embeddings", tie, &m->tied, err)))
        return rc;
    m->max_pos = 0;
    return 0;
}

/* ---- Mamba, FalconMamba --------------------------------------------------- */

/* The reader's fallback where the class table has no default (it has MambaConfig's and
 * FalconMambaConfig's: use_bias False both, since MambaConfig was added). */
struct mamba_spec {
    bool use_bias;
};
static const struct mamba_spec mamba = {.use_bias = false};
static const struct mamba_spec falcon_mamba = {.use_bias = false};

/*
 * MambaModel (transformers@00328d4e models/mamba/modeling_mamba.py): embeddings, one
 * MambaBlock per layer - MambaRMSNorm(hidden) and MambaMixer - norm_f, and MambaForCausalLM's
 * lm_head Linear(hidden, vocab, bias=False), tied to the embedding by tie_word_embeddings
 * (PretrainedConfig default true).  MambaConfig sets intermediate_size = int(expand x
 * hidden_size), time_step_rank "auto" = ceil(hidden / 16); a saved config's
 * intermediate_size is applied after (PretrainedConfig sets leftover kwargs), so it wins.
 * FalconMambaMixer (modular_falcon_mamba.py @0a4256a0) adds only the b_c_rms / dt_rms
 * buffers, registered persistent=False: the checkpoint holds none.
 */
/* MambaBlock: its RMSNorm and the mixer. */
static int add_mamba_block(struct fg_model *m, int32_t li, const void *arg, struct fg_err *err)
{
    int rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err);
    return rc ? rc : fg__add_mamba1(m, li, arg, err);
}

static int read_mamba(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                      struct fg_err *err)
{
    const struct mamba_spec *s = spec;
    struct fg_mamba1_shape mb = {0};
    int rc;
    if ((rc = read_ssm_core(c, m, 50280, 768, 32, true, err)) ||
        (rc = read_inner(c, "expand", "intermediate_size", m->hidden, &mb.inner, err)) ||
        (rc = fg_cfg_u64(c, "state_size", 16, 1, 1u << 14, &mb.state, err)) ||
        (rc = fg_cfg_u64(c, "conv_kernel", 4, 1, 1024, &mb.kernel, err)) ||
        (rc = fg_cfg_bool(c, "use_bias", s->use_bias, &mb.proj_bias, err)) ||
        (rc = fg_cfg_bool(c, "use_conv_bias", true, &mb.conv_bias, err)) ||
        (rc = fg__ssm_read_dt_rank(c, "time_step_rank", m->hidden, &mb.dt_rank, err)))
        return rc;
    mb.hidden = m->hidden;
    m->inter = mb.inner;
    return fg__ssm_build_uniform(m, FG_NORM_RMS, add_mamba_block, &mb, 1, err);
}

/* ---- Mamba-2 ---------------------------------------------------------------- */

/*
 * Mamba2Model (transformers@4711664e models/mamba2/modeling_mamba2.py; Mamba2Config
 * @f2a39d49): embeddings, one Mamba2Block per layer - Mamba2RMSNorm(hidden) and
 * Mamba2Mixer - norm_f, lm_head Linear(hidden, vocab, bias=False) tied by
 * tie_word_embeddings (default false).  Mamba2Mixer: I = int(expand x hidden) over
 * num_heads heads, n_groups groups of state_size; in_proj hidden -> I + conv_dim + heads
 * and out_proj biased by use_bias, conv1d over conv_dim = I + 2 groups x state (bias
 * use_conv_bias), dt_bias / A_log / D per head, the gated RMSNorm over I (always built).
 * head_dim only reshapes: the stored shapes follow I and num_heads.
 */
/* Mamba2Block: its RMSNorm and the mixer. */
static int add_mamba2_block(struct fg_model *m, int32_t li, const void *arg, struct fg_err *err)
{
    int rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err);
    return rc ? rc : fg__add_mamba2(m, li, arg, err);
}

static int read_mamba2(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                       struct fg_err *err)
{
    (void)spec;
    struct fg_mamba2_shape mb = {0};
    uint64_t inner;
    int rc;
    if ((rc = read_ssm_core(c, m, 32768, 4096, 64, false, err)) ||
        (rc = read_inner(c, "expand", NULL, m->hidden, &inner, err)) ||
        (rc = fg_cfg_u64(c, "num_heads", 128, 1, FG_MAX_INTER, &mb.heads, err)) ||
        (rc = fg_cfg_u64(c, "n_groups", 8, 1, FG_MAX_HEADS, &mb.groups, err)) ||
        (rc = fg_cfg_u64(c, "state_size", 128, 1, 1u << 14, &mb.state, err)) ||
        (rc = fg_cfg_u64(c, "conv_kernel", 4, 1, 1024, &mb.kernel, err)) ||
        (rc = fg_cfg_u64(c, "chunk_size", 256, 1, FG_MAX_POS, &mb.chunk, err)) ||
        (rc = fg_cfg_bool(c, "use_bias", false, &mb.proj_bias, err)) ||
        (rc = fg_cfg_bool(c, "use_conv_bias", true, &mb.conv_bias, err)))
        return rc;
    if (inner % mb.heads)
        return fg_err_set(err, FG_E_RANGE, "%s: the Mamba-2 inner width %llu (expand x "
                          "hidden_size) is not a multiple of num_heads %llu", c->origin,
                          (unsigned long long)inner, (unsigned long long)mb.heads);
    mb.hidden = m->hidden;
    mb.head_dim = inner / mb.heads;
    m->inter = inner;
    return fg__ssm_build_uniform(m, FG_NORM_RMS, add_mamba2_block, &mb, 1, err);
}

/* ---- Jamba ------------------------------------------------------------------ */

/* JambaConfig defaults (configuration_jamba.py @008f5c8c). */
static const struct hybrid_spec jamba = {
    .d = {.vocab = 65536, .hidden = 4096, .inter = 14336, .layers = 32, .heads = 32,
          .max_pos = 262144, .tie = false},
    .kv_heads = 8};

struct jamba_cfg {
    uint64_t attn_period, attn_offset, expert_period, expert_offset, experts, top_k;
    uint64_t window;
    struct fg_mamba1_shape mb;
};

static int read_period(const struct fg_cfg *c, const char *pk, uint64_t pdef, const char *ok,
                       uint64_t odef, uint64_t *period, uint64_t *offset, struct fg_err *err)
{
    int rc;
    if ((rc = fg_cfg_u64(c, pk, pdef, 1, FG_MAX_LAYERS, period, err)) ||
        (rc = fg_cfg_u64(c, ok, odef, 0, FG_MAX_LAYERS, offset, err)))
        return rc;
    /* JambaConfig._check_supported_offset */
    if (*offset >= *period)
        return fg_err_set(err, FG_E_RANGE, "%s: key '%s' = %llu must be smaller than '%s' = %llu",
                          c->origin, ok, (unsigned long long)*offset, pk,
                          (unsigned long long)*period);
    return 0;
}

static int read_jamba_cfg(const struct fg_cfg *c, struct fg_model *m, struct jamba_cfg *k,
                          struct fg_err *err)
{
    int rc;
    if ((rc = fg__read_core(c, m, &jamba.d, err)) ||
        (rc = fg__hy_read_kv_heads(c, m, jamba.kv_heads, err)) ||
        (rc = read_period(c, "attn_layer_period", 8, "attn_layer_offset", 4, &k->attn_period,
                          &k->attn_offset, err)) ||
        (rc = read_period(c, "expert_layer_period", 2, "expert_layer_offset", 1,
                          &k->expert_period, &k->expert_offset, err)) ||
        (rc = fg_cfg_u64(c, "num_experts", 16, 1, FG_MAX_EXPERTS, &k->experts, err)) ||
        (rc = fg_cfg_u64(c, "num_experts_per_tok", 2, 1, FG_MAX_EXPERTS, &k->top_k, err)) ||
        (rc = fg_cfg_u64(c, "sliding_window", 0, 0, FG_MAX_POS, &k->window, err)) ||
        (rc = read_inner(c, "mamba_expand", NULL, m->hidden, &k->mb.inner, err)) ||
        (rc = fg_cfg_u64(c, "mamba_d_state", 16, 1, 1u << 14, &k->mb.state, err)) ||
        (rc = fg_cfg_u64(c, "mamba_d_conv", 4, 1, 1024, &k->mb.kernel, err)) ||
        (rc = fg_cfg_bool(c, "mamba_conv_bias", true, &k->mb.conv_bias, err)) ||
        (rc = fg_cfg_bool(c, "mamba_proj_bias", false, &k->mb.proj_bias, err)) ||
        (rc = fg__ssm_read_dt_rank(c, "mamba_dt_rank", m->hidden, &k->mb.dt_rank, err)))
        return rc;
    if (k->experts > 1 && k->top_k > k->experts)
        return fg_err_set(err, FG_E_RANGE, "%s: num_experts_per_tok %llu exceeds num_experts "
                          "%llu", c->origin, (unsigned long long)k->top_k,
                          (unsigned long long)k->experts);
    k->mb.hidden = m->hidden;
    k->mb.inner_norms = true;
    return 0;
}

/*
 * JambaModel (transformers modular_jamba.py @01596202; configuration_jamba.py @008f5c8c):
 * embed_tokens; layer i attends when i % attn_layer_period == attn_layer_offset
 * (JambaAttentionDecoderLayer: LlamaAttention q/k/v/o without bias) and is a
 * JambaMambaDecoderLayer otherwise (JambaMambaMixer: the Mamba-1 mixer with mamba_* sizes,
 * mamba_proj_bias on in/out_proj, plus dt / B / C RMSNorms); each has input_layernorm,
 * pre_ff_layernorm and a feed-forward: JambaSparseMoeBlock (router Linear(hidden,
 * num_experts, bias=False), Mixtral experts) where i % expert_layer_period ==
 * expert_layer_offset and num_experts > 1, a MistralMLP elsewhere; final_layernorm;
 * lm_head without bias, tied by tie_word_embeddings (default false).
 */
static int read_jamba(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                      struct fg_err *err)
{
    (void)spec;
    struct jamba_cfg k = {0};
    int rc = read_jamba_cfg(c, m, &k, err);
    if (rc)
        return rc;
    const struct fg_attn_shape a = {.hidden = m->hidden, .heads = m->heads,
                                    .kv_heads = m->kv_heads, .head_dim = m->head_dim,
                                    .window = k.window};
    const struct fg_mlp_shape f = {.hidden = m->hidden, .inter = m->inter, .gated = true};
    const struct fg_moe_shape e = {.hidden = m->hidden, .experts = k.experts, .top_k = k.top_k,
                                   .inter = m->inter, .gated = true,
                                   .lora_experts = FG_LORA_EXPERTS_MERGED};
    if ((rc = fg__add_embedding(m, m->vocab, m->hidden, err)))
        return rc;
    bool any_moe = false;
    for (uint64_t l = 0; l < m->layers; l++) {
        int32_t li = (int32_t)l;
        bool attn = l % k.attn_period == k.attn_offset;
        bool moe = k.experts > 1 && l % k.expert_period == k.expert_offset;
        struct fg_node *mlp;
        if ((rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)) ||
            (rc = attn ? fg__add_attention(m, li, &a, NULL, err)
                       : fg__add_mamba1(m, li, &k.mb, err)) ||
            (rc = fg__add_norm(m, li, "Norm", m->hidden, FG_NORM_RMS, err)))
            return rc;
        if (moe) {
            any_moe = true;
            if ((rc = fg__add_moe(m, li, &e, NULL, err)))
                return rc;
        } else {
            if ((rc = fg__add_mlp(m, li, &f, &mlp, err)))
                return rc;
            mlp->lora_experts = FG_LORA_EXPERTS_MERGED;
        }
    }
    if (any_moe) {
        m->experts = k.experts;
        m->top_k = k.top_k;
    }
    if ((rc = fg__add_norm(m, -1, "Final norm", m->hidden, FG_NORM_RMS, err)))
        return rc;
    return fg__add_head(m, m->vocab, m->hidden, m->tied, false, false, err);
}

const struct fg_arch fg__arch_ssm_table[] = {
#include "arch/hybrid/mamba_jamba.def"
    {0},
};
