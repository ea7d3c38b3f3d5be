/*
 * memory_flops.c - a model's active parameters and training FLOPs per token (memory.h),
 * for the cost roofline: what the job computes, beside what it keeps.
 */
#include "memory/memory.h"

uint64_t fg_model_active_params(const struct fg_model *m)
{
    uint64_t s = 0;
    for (size_t i = 0; i < m->n_nodes; i++) {
        const struct fg_node *n = &m->nodes[i];
        uint64_t p = n->params - n->buffers;
        if (n->kind == FG_NODE_MOE && n->experts) {
            uint64_t routed = 0;
            for (unsigned k = 0; k < n->nlin; k++)
                if (n->lin[k].count > 1)
                    routed += (uint64_t)n->lin[k].in * n->lin[k].out * n->lin[k].count;
            if (routed > p)
                routed = p;
            p = p - routed + routed / n->experts * n->top_k;
        }
        if (n->kind == FG_NODE_EMBED || n->stack == FG_STACK_TOWER)
            continue; /* a lookup, not a matmul */
        s += p;
    }
    return s;
}

double fg_memory_flops_per_token(const struct fg_model *m, const struct fg_job *job)
{
    /* 6 N per trained token (2 forward, 4 backward; Kaplan et al. 2020),
     * 2 N when serving; LoRA still back-propagates through the frozen base
     * (activation gradients, ~4 N), so it is counted as 6 N as well; plus the
     * attention score FLOPs 6 * 2 * L * s * d per token for training. */
    double n = (double)fg_model_active_params(m);
    double f = job->mode == FG_MODE_SERVE ? 2 * n : 6 * n;
    uint64_t seq = job->seq_len ? job->seq_len : 2048;
    for (size_t i = 0; i < m->n_nodes; i++) {
        const struct fg_node *nd = &m->nodes[i];
        if (nd->kind == FG_NODE_ATTN || nd->kind == FG_NODE_MLA) {
            double ctx = nd->window && nd->window < seq ? nd->window : (double)seq;
            f += (job->mode == FG_MODE_SERVE ? 2.0 : 6.0) * 2.0 * ctx / 2.0 * nd->heads *
                 nd->head_dim;
        }
    }
    return f;
}
