/*
 * ssm.h - internal to the state-space and recurrent readers: the blocks they share
 * (ssm.c, which calls no reader) and the readers of zamba.c (zamba,
 * zamba2), rwkv_xlstm_recurrent_gemma.c (recurrent_gemma, rwkv, xlstm), gemma3n.c
 * (gemma3n_text), blt.c (blt) and chameleon_emu3.c (chameleon, emu3) that the registry
 * table in mamba_jamba.c (mamba, falcon_mamba, mamba2, jamba) names.  Error contract: arch.h's
 * (0 or FG_E_*, err naming the key).
 */
#ifndef FG_ARCH_SSM_H
#define FG_ARCH_SSM_H

#include "arch/arch.h"

/*
 * A Mamba-1 selective-scan mixer (MambaMixer, transformers models/mamba/modeling_mamba.py)
 * with I = inner, R = dt_rank, N = state:
 *   in_proj  hidden -> 2 I (+ bias)         conv1d  depthwise over I, kernel taps (+ bias)
 *   x_proj   I -> R + 2 N (no bias)         dt_proj R -> I with bias
 *   A_log    I x N                          D       I
 *   out_proj I -> hidden (+ bias)
 * and, in JambaMambaMixer, the dt / B / C RMSNorms (R + 2 N weights).  Zamba's multi-head
 * variant splits the same tensors into n_mamba_heads slices: the same count.
 */
struct fg_mamba1_shape {
    uint64_t hidden, inner, dt_rank, state, kernel;
    bool proj_bias, conv_bias;
    bool inner_norms;       /* JambaMambaMixer dt_layernorm, b_layernorm, c_layernorm */
};

/* The mixer as an FG_NODE_MAMBA2 node of inner heads of width 1 and no groups, which gives
 * memory_node.c its recurrent state (I x N + (kernel - 1) x I per sequence) and a per-token
 * activation of in_proj's output and the scan output; FG_E_NOMEM. */
int fg__add_mamba1(struct fg_model *m, int32_t layer, const struct fg_mamba1_shape *s,
                   struct fg_err *err);

/* The Mamba-1 time-step rank: key (an integer, or "auto" = ceil(hidden / 16), the configs'
 * default) into *out; FG_E_TYPE / FG_E_RANGE naming the key. */
int fg__ssm_read_dt_rank(const struct fg_cfg *c, const char *key, uint64_t hidden,
                         uint64_t *out, struct fg_err *err);

/* One block of a uniform stack (arch below); FG_E_NOMEM. */
typedef int (*fg__ssm_layer_fn)(struct fg_model *m, int32_t layer, const void *arg,
                                struct fg_err *err);

/* The embedding, m->layers blocks by layer() - the first `unique` built one by one, the rest
 * copies of the last of those - the final norm of kind norm and the LM head (tied by
 * m->tied); FG_E_NOMEM. */
int fg__ssm_build_uniform(struct fg_model *m, enum fg_norm_kind norm, fg__ssm_layer_fn layer,
                          const void *arg, uint32_t unique, struct fg_err *err);

/* The readers of the other files, named by mamba_jamba.c's table. */
int fg__ssm_read_recurrent_gemma(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                                 struct fg_err *err);
int fg__ssm_read_rwkv(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                      struct fg_err *err);
int fg__ssm_read_gemma3n_text(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                              struct fg_err *err);
int fg__ssm_read_xlstm(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                       struct fg_err *err);
int fg__ssm_read_blt(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                     struct fg_err *err);
int fg__ssm_read_chameleon(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                           struct fg_err *err);
int fg__ssm_read_emu3(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                      struct fg_err *err);
int fg__ssm_read_zamba(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                       struct fg_err *err);
int fg__ssm_read_zamba2(const struct fg_cfg *c, struct fg_model *m, const void *spec,
                        struct fg_err *err);

#endif
