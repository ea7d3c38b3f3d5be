/*
 * arch_hybrid.h - internal to the hybrid readers (arch_hybrid.c, arch_mamba.c): the layer
 * kinds a config names layer by layer, a family's defaults, and the two readers they
 * share.  Error contract: arch.h's (0 or FG_E_*, err naming the key).
 */
#ifndef FG_ARCH_HYBRID_H
#define FG_ARCH_HYBRID_H

#include "arch.h"

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

/* num_key_value_heads with the class default def (fg__read_core defaults it to heads). */
int fg__hy_read_kv_heads(const struct fg_cfg *c, struct fg_model *m, uint64_t def,
                         struct fg_err *err);

#endif
