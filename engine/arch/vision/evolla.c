/*
 * evolla.c - EvollaForProteinText2Text (Evolla-10B), read from huggingface/transformers
 * models/evolla/modular_evolla.py (commit 01067252), configuration_evolla.py (commit 040e1a7e)
 * and the ESM layers it reuses (models/esm/modeling_esm.py, commit 0220b9db):
 *
 *   protein_encoder.model  the SaProt encoder (ESM): word_embeddings vocab x hidden, a position
 *                          table only when position_embedding_type is "absolute", layer_norm when
 *                          emb_layer_norm_before; layers of a pre-LayerNorm, query / key / value
 *                          and the output dense (biased), the rotary inv_freq buffer (persistent,
 *                          head_dim / 2) under "rotary", a pre-LayerNorm, intermediate / output
 *                          dense (biased); emb_layer_norm_after
 *   sequence_compressor    latents resampler_num_latents x protein hidden; resampler_depth
 *                          blocks of norm_media / norm_latents, to_q, to_kv (2 x heads x
 *                          dim_head), to_out (no bias) and a feed-forward (LayerNorm, fc1 to
 *                          resampler_ff_mult x, fc2; no bias); protein_projector protein ->
 *                          hidden (biased) and a LayerNorm over hidden
 *   model                  llama blocks from the root keys (the llama reader; EvollaConfig's
 *                          defaults where absent) and on every (i + 1) % max(layers //
 *                          aligner_num_add_layers, 1) == 0 layer an adapter: query and
 *                          key_protein / value_protein hidden -> hidden (biased),
 *                          attention_norm (RMSNorm), out_proj (bias aligner_enable_bias), a
 *                          feed-forward of aligner_ffn_mult (LayerNorm, no bias), two gates
 *   lm_head                hidden -> vocab, no bias; untied by default.
 *
 * The adapters are one node next to the protein encoder: their activations are counted once,
 * not per layer.
 *
 * westlake-repl/Evolla-10B-hf's safetensors hold 10,392,101,680 F32 values, exactly 1026 x 1280
 * more than the class builds from its SaProt defaults (rotary): by its size, the position table
 * EsmEmbeddings built whatever the type before transformers PR #38089 (esm_roformer_convbert.c),
 * which the Evolla class neither builds nor loads (its tensor list was not at hand to confirm).
 * The count here is the class's.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "arch/vision/multimodal.h"
#include "util/fmt.h"

/* EvollaConfig's llama defaults where LlamaConfig's differ. */
static const struct fg_cfg_over evolla_defaults[] = {
    {FG_CFG_DEFAULT, "vocab_size", FG_CFG_NUMBER(128256)},
    {FG_CFG_DEFAULT, "intermediate_size", FG_CFG_NUMBER(14336)},
    {FG_CFG_DEFAULT, "num_key_value_heads", FG_CFG_NUMBER(8)},
    {FG_CFG_DEFAULT, "max_position_embeddings", FG_CFG_NUMBER(8192)},
    {0, NULL, NULL},
};

/* The SaProt (ESM) encoder from protein_encoder_config as one tower node; *hidden its width. */
static int add_saprot(struct fg_model *m, const struct fg_cfg *p, uint64_t *hidden,
                      struct fg_err *err)
{
    uint64_t vocab, h, L, heads, f, pos;
    bool pre_norm;
    const char *pe = NULL;
    int rc;
    if ((rc = fg_cfg_u64(p, "vocab_size", 446, 1, FG_MAX_VOCAB, &vocab, err)) ||
        (rc = fg_cfg_u64(p, "hidden_size", 1280, 1, FG_MAX_HIDDEN, &h, err)) ||
        (rc = fg_cfg_u64(p, "num_hidden_layers", 33, 1, FG_MAX_LAYERS, &L, err)) ||
        (rc = fg_cfg_u64(p, "num_attention_heads", 20, 1, FG_MAX_HEADS, &heads, err)) ||
        (rc = fg_cfg_u64(p, "intermediate_size", 5120, 1, FG_MAX_INTER, &f, err)) ||
        (rc = fg_cfg_u64(p, "max_position_embeddings", 1026, 1, FG_MAX_POS, &pos, err)) ||
        (rc = fg_cfg_bool(p, "emb_layer_norm_before", false, &pre_norm, err)) ||
        (rc = fg_cfg_str(p, "position_embedding_type", "rotary", &pe, err)))
        return rc;
    if (strcmp(pe, "rotary") && strcmp(pe, "absolute"))
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: key 'protein_encoder_config."
                          "position_embedding_type' is '%s'; rotary and absolute are sized",
                          p->origin, pe);
    if (h % heads)
        return fg_err_set(err, FG_E_RANGE, "%s: protein_encoder_config hidden_size %llu is not "
                          "divisible by %llu heads", p->origin, (unsigned long long)h,
                          (unsigned long long)heads);
    const bool rotary = !strcmp(pe, "rotary");
    struct fg_node *n = fg__mm_tower_node(m, "Protein encoder", h, heads, f, err);
    if (!n)
        return FG_E_NOMEM;
    fg__mm_tower_blocks(n, &(struct fg_mm_blocks){.h = h, .f = f, .L = L, .qkv_bias = true,
                                                  .o_bias = true, .mlp_bias = true});
    uint64_t inv_freq = rotary ? L * (h / heads / 2) : 0;
    n->params += L * 2 * 2 * h + inv_freq + vocab * h + (rotary ? 0 : pos * h) +
                 (pre_norm ? 2 * h : 0) + 2 * h;
    n->buffers += inv_freq;
    fg__fmt(n->desc, sizeof n->desc, "SaProt (ESM) %llu x %llu", (unsigned long long)L,
            (unsigned long long)h);
    *hidden = h;
    return 0;
}

static int add_compressor_and_aligners(struct fg_model *m, const struct fg_cfg *c, uint64_t ph,
                                       struct fg_err *err)
{
    uint64_t depth, dh, heads, lat, ffm, adds, afm;
    bool abias;
    int rc;
    if ((rc = fg_cfg_u64(c, "resampler_depth", 6, 1, FG_MAX_LAYERS, &depth, err)) ||
        (rc = fg_cfg_u64(c, "resampler_dim_head", 64, 1, 1u << 14, &dh, err)) ||
        (rc = fg_cfg_u64(c, "resampler_heads", 8, 1, FG_MAX_HEADS, &heads, err)) ||
        (rc = fg_cfg_u64(c, "resampler_num_latents", 64, 1, 1u << 16, &lat, err)) ||
        (rc = fg_cfg_u64(c, "resampler_ff_mult", 4, 1, 64, &ffm, err)) ||
        (rc = fg_cfg_u64(c, "aligner_num_add_layers", 8, 1, FG_MAX_LAYERS, &adds, err)) ||
        (rc = fg_cfg_u64(c, "aligner_ffn_mult", 4, 1, 64, &afm, err)) ||
        (rc = fg_cfg_bool(c, "aligner_enable_bias", true, &abias, err)))
        return rc;
    const uint64_t H = m->hidden, inner = heads * dh;
    struct fg_node *r = fg__mm_projector_node(m, H, "sequence compressor (perceiver)", err);
    if (!r)
        return FG_E_NOMEM;
    fg__node_linear(r, "to_q", ph, inner, depth, false);
    fg__node_linear(r, "to_kv", ph, 2 * inner, depth, false);
    fg__node_linear(r, "to_out", inner, ph, depth, false);
    fg__node_linear(r, "fc1", ph, ph * ffm, depth, false);
    fg__node_linear(r, "fc2", ph * ffm, ph, depth, false);
    fg__node_linear(r, "protein_projector", ph, H, 1, true);
    r->params += depth * 3 * 2 * ph + lat * ph + 2 * H;
    /* (i + 1) % step == 0 for i < layers: layers / step of them */
    uint64_t step = m->layers / adds ? m->layers / adds : 1, n_adapt = m->layers / step;
    struct fg_node *a = fg__mm_projector_node(m, H, "protein aligners (gated cross-attention)",
                                              err);
    if (!a)
        return FG_E_NOMEM;
    fg__node_linear(a, "q", H, H, n_adapt, true);
    fg__node_linear(a, "k", H, H, n_adapt, true);
    fg__node_linear(a, "v", H, H, n_adapt, true);
    fg__node_linear(a, "o", H, H, n_adapt, abias);
    fg__node_linear(a, "fc1", H, H * afm, n_adapt, false);
    fg__node_linear(a, "fc2", H * afm, H, n_adapt, false);
    a->params += n_adapt * (H + 2 * H + 2);          /* attention_norm, ff LayerNorm, gates */
    fg__fmt(a->desc, sizeof a->desc, "%llu gated cross-attention adapters",
            (unsigned long long)n_adapt);
    return 0;
}

static int read_evolla(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                       struct fg_err *err)
{
    (void)spec;
    struct fg_cfg p = {.obj = NULL, .origin = c->origin, .scope = "protein_encoder_config"};
    uint64_t ph = 0;
    int rc;
    if (fg_cfg_has(c, "protein_encoder_config") &&
        !fg_cfg_child(c, "protein_encoder_config", &p, err))
        return FG_E_TYPE;
    if ((rc = fg__mm_read_root_text(c, "llama", evolla_defaults, m, err)))
        return rc;
    size_t first = m->n_nodes;
    if ((rc = add_saprot(m, &p, &ph, err)) || (rc = add_compressor_and_aligners(m, c, ph, err)))
        return rc;
    return fg__mm_move_to_front(m, first, err);
}

const struct fg_arch fg__arch_vl_evolla_table[] = {
#include "arch/vision/evolla.def"
    {0},
};
