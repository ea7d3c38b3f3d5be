/*
 * ssm.c - the blocks the state-space readers share (ssm.h): the Mamba-1
 * mixer, the time-step rank, and the uniform stack builder.  It calls no reader, so the
 * reader files depend on it and not on each other (tests/integration/layout.sh).
 */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "arch/hybrid/ssm.h"
#include "util/fmt.h"

int fg__add_mamba1(struct fg_model *m, int32_t layer, const struct fg_mamba1_shape *s,
                   struct fg_err *err)
{
    struct fg_node *n = fg__model_add_block(m, FG_NODE_MAMBA2, layer, "Mamba", err);
    if (!n)
        return FG_E_NOMEM;
    uint64_t i = s->inner, r = s->dt_rank, st = s->state;
    fg__node_linear(n, "in_proj", s->hidden, 2 * i, 1, s->proj_bias);
    fg__node_linear(n, "x_proj", i, r + 2 * st, 1, false);
    fg__node_linear(n, "dt_proj", r, i, 1, true);
    fg__node_linear(n, "out_proj", i, s->hidden, 1, s->proj_bias);
    n->params += i * s->kernel + (s->conv_bias ? i : 0); /* conv1d */
    n->params += i * st + i;                               /* A_log, D */
    if (s->inner_norms)
        n->params += r + 2 * st;
    n->hidden = (uint32_t)s->hidden;
    n->width = (uint32_t)s->hidden;
    n->ssm_heads = (uint32_t)i;
    n->ssm_head_dim = 1;
    n->groups = 0;
    n->state = (uint32_t)st;
    n->conv_kernel = (uint32_t)s->kernel;
    fg__fmt(n->desc, sizeof n->desc, "Mamba-1 %llu wide, state %llu, dt rank %llu",
            (unsigned long long)i, (unsigned long long)st, (unsigned long long)r);
    return 0;
}

int fg__ssm_read_dt_rank(const struct fg_cfg *c, const char *key, uint64_t hidden,
                         uint64_t *out, struct fg_err *err)
{
    const char *s = NULL;
    int rc;
    if (fg_cfg_form(c, key, NULL) == FG_CFG_STRING) {
        if ((rc = fg_cfg_str(c, key, NULL, &s, err)))
            return rc;
        if (strcmp(s, "auto"))
            return fg_err_set(err, FG_E_TYPE, "%s: key '%s' is \"%s\"; expected an integer or "
                              "\"auto\"", c->origin, key, s);
        *out = (hidden + 15) / 16; /* math.ceil(hidden_size / 16) */
        return 0;
    }
    return fg_cfg_u64(c, key, (hidden + 15) / 16, 1, FG_MAX_HIDDEN, out, err);
}

int fg__ssm_build_uniform(struct fg_model *m, enum fg_norm_kind norm, fg__ssm_layer_fn layer,
                          const void *arg, uint32_t unique, struct fg_err *err)
{
    int rc = fg__add_embedding(m, m->vocab, m->hidden, err);
    if (rc)
        return rc;
    size_t first = m->n_nodes;
    for (uint64_t l = 0; l < m->layers; l++) {
        int32_t li = (int32_t)l;
        if (l >= unique && fg__model_repeat_block(m, first, li, (uint32_t)(m->layers - l)))
            break;
        first = m->n_nodes;
        if ((rc = layer(m, li, arg, err)))
            return rc;
    }
    if ((rc = fg__add_norm(m, -1, "Final norm", m->hidden, norm, err)))
        return rc;
    return fg__add_head(m, m->vocab, m->hidden, m->tied, false, false, err);
}
