/*
 * nemotron_h_lfm2_qwen3_next.h - internal to the hybrid readers (nemotron_h_lfm2_qwen3_next.c, bamba_falcon_h1.c): the layer
 * kinds a config names layer by layer, a family's defaults, and the two readers they
 * share.  Error contract: arch.h's (0 or FG_E_*, err naming the key).
 */
#ifndef FG_ARCH_HYBRID_H
#define FG_ARCH_HYBRID_H

#include "arch/arch.h"

enum hy_kind { HY_MAMBA, HY_ATTN, HY_MLP, HY_MOE, HY_CONV };

/* One layer kind as configs spell it: a pattern letter and list names. */
struct hy_kind_name {
    char letter;          /* hybrid_override_pattern letter, 0 = none */
    const char *name;     /* layers_block_type / layer_types spelling */
    const char *legacy;   /* older spelling of the same kind, or NULL */
    enum hy_kind kind;
};

struct hybrid_spec {
    struct fg_core_defaults d;   /* the config class defaults */
    uint64_t kv_heads;           /* num_key_value_heads default (not = heads) */
    const struct hy_kind_name *kinds;
    uint64_t experts_def;        /* Qwen3-Next family: num_experts when absent (0 = dense) */
};

/* The kind table t (ended by a NULL name) names s, in its current or legacy spelling;
 * NULL when none. */
const struct hy_kind_name *fg__hy_kind_by_name(const struct hy_kind_name *t, const char *s);

/*
 * The layer kinds a config lists under keys (fg_cfg_str_array's '|' aliases; details name
 * key) into out, *n of them: 0 when there is no list (out untouched).  layers is the
 * count the list must have; 0 takes any up to FG_MAX_LAYERS.  FG_E_RANGE for a list of
 * another length, or a name the kind table t does not know (naming the layer).
 */
int fg__hy_read_kind_list(const struct fg_cfg *c, const char *keys, const char *key,
                          const struct hy_kind_name *t, uint64_t layers, enum hy_kind *out,
                          size_t *n, struct fg_err *err);

/* num_key_value_heads with the class default def (fg__read_core defaults it to heads). */
int fg__hy_read_kv_heads(const struct fg_cfg *c, struct fg_model *m, uint64_t def,
                         struct fg_err *err);

/* The mixer half of an Lfm2DecoderLayer (and Lfm2MoeDecoderLayer's), in
 * nemotron_h_lfm2_qwen3_next.c: operator_norm (RMSNorm), the attention a when attn, else
 * Lfm2ShortConv (in_proj hidden -> 3 x hidden, a depthwise conv1d of kernel taps over the
 * hidden channels, out_proj hidden -> hidden, bias on all three by conv_bias), then
 * ffn_norm; the caller adds the feed-forward.  FG_E_NOMEM. */
int fg__hy_lfm2_mixer(struct fg_model *m, int32_t layer, bool attn,
                      const struct fg_attn_shape *a, uint64_t kernel, bool conv_bias,
                      struct fg_err *err);

#endif
