/*
 * plan_env.c - a layout in the job's terms (plan.h): the pipeline split as text, and the
 * FITGATE_* variables the plugin exports (with NeMo 2 / Megatron-Core overrides).
 */
#include "plan/plan.h"

#include <stdio.h>

void fg_layout_split_str(const struct fg_layout *l, char *buf, size_t cap)
{
    size_t off = 0;
    buf[0] = '\0';
    for (uint32_t s = 0; s < l->pp && off < cap; s++) {
        int w = snprintf(buf + off, cap - off, "%s%u-%u", s ? "," : "", l->cut[s],
                         l->cut[s + 1] ? l->cut[s + 1] - 1 : 0);
        if (w < 0)
            break;
        off += (size_t)w;
    }
}

int fg_layout_env(const struct fg_layout *l, int (*set)(const char *name, const char *value,
                                                        void *ctx), void *ctx)
{
    char v[512], split[256];
    int rc;
    fg_layout_split_str(l, split, sizeof split);
#define SETU(name, val)                                                                        \
    do {                                                                                        \
        snprintf(v, sizeof v, "%llu", (unsigned long long)(val));                               \
        if ((rc = set(name, v, ctx)))                                                           \
            return rc;                                                                          \
    } while (0)
    SETU("FITGATE_TP", l->tp);
    SETU("FITGATE_PP", l->pp);
    SETU("FITGATE_EP", l->ep);
    SETU("FITGATE_DP", l->dp);
    if (l->cp > 1)
        SETU("FITGATE_CP", l->cp);
    SETU("FITGATE_MICRO_BATCH", l->micro_batch);
    SETU("FITGATE_GRAD_ACCUM", l->grad_accum ? l->grad_accum : 1);
    SETU("FITGATE_ESTIMATE_BYTES", l->peak_bytes);
    if (l->gen_gpus) {
        /* a trainer's vLLM server (trl vllm-serve) and the training processes beside it */
        SETU("FITGATE_GEN_GPUS", l->gen_gpus);
        SETU("FITGATE_TRAIN_GPUS", l->gpus);
    }
#undef SETU
    if ((rc = set("FITGATE_PP_SPLIT", split, ctx)))
        return rc;
    /* Megatron-Core / NeMo 2 names (TransformerConfig / MegatronStrategy);
     * uneven first and last stages through num_layers_in_{first,last}_pipeline_stage. */
    int w = snprintf(v, sizeof v,
                     "tensor_model_parallel_size=%u pipeline_model_parallel_size=%u "
                     "expert_model_parallel_size=%u micro_batch_size=%llu",
                     l->tp, l->pp, l->ep, (unsigned long long)l->micro_batch);
    if (l->pp > 1 && w > 0 && (size_t)w < sizeof v)
        w += snprintf(v + w, sizeof v - (size_t)w,
                      " num_layers_in_first_pipeline_stage=%u num_layers_in_last_pipeline_stage=%u",
                      l->cut[1] - l->cut[0], l->cut[l->pp] - l->cut[l->pp - 1]);
    if (l->cp > 1 && w > 0 && (size_t)w < sizeof v)
        snprintf(v + w, sizeof v - (size_t)w, " context_parallel_size=%u", l->cp);
    return set("FITGATE_NEMO_OVERRIDES", v, ctx);
}
