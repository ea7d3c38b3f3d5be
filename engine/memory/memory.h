/*
 * memory.h - a job on a model graph -> GPU memory, byte by byte.
 *
 * The estimate is split into a static part (does not grow with the
 * micro-batch: weights, gradients, optimizer state, adapters, framework
 * transients) and a per-sample part (activations kept for backward, logits
 * and loss, KV cache and SSM state when serving), so that
 *     total(b) = static + b * per_sample.
 * Every byte is attributed to a line with the formula's source
 * (fg_estimate.lines), so an estimate can say where each byte comes from.
 *
 * What total_bytes means: the bytes the job's framework allocates on one
 * GPU (comparable to torch.cuda.max_memory_reserved), not counting the
 * CUDA context, which the fit charges to the card (fit.h).
 *
 * Error contract: see error.h.
 */
#ifndef FG_MEMORY_H
#define FG_MEMORY_H

#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"
#include "model/model.h"
#include "job/job.h"


struct fg_breakdown {
    uint64_t weights, gradients, optimizer, adapters, activations, logits, kv_cache, ssm_state,
        overhead;
};

#define FG_ESTIMATE_MAX_LINES 24

/* One attributed line of an estimate: "where each byte comes from". */
struct fg_line {
    char key[16];          /* breakdown field it belongs to */
    char what[96];         /* "fp32 master weights: 4 B x 8,888,227,328" */
    char source[72];       /* "PyTorch AMP; Megatron theoretical_memory_usage" */
    uint64_t bytes;        /* at batch 1 for per-sample lines */
    bool per_sample;
};

struct fg_estimate {
    struct fg_breakdown b;           /* at job.batch */
    uint64_t static_bytes;
    uint64_t per_sample_bytes;
    uint64_t total_bytes;            /* max(static + batch * per_sample, step_bytes) */
    uint64_t step_bytes;             /* peak of the optimizer step (weights, gradients,
                                        states, step temporaries; no activations); 0 if none */
    uint64_t seq_len;                /* tokens per sample used */
    uint64_t batch;
    uint64_t trainable_params;
    uint64_t adapter_params;
    uint64_t act_per_token_layer_max; /* largest per-token activation of one block (bytes) */
    /* What a smaller micro-batch with gradient accumulation adds to static_bytes: the
     * gradients, alive through every micro-batch after the first (job.h grad_accum).  0
     * where they are counted there already (the job accumulates, or its buffer persists)
     * or nothing accumulates into them (LoRA's adapters are static anyway); read by
     * fg_estimate_accum_at (fit.h). */
    uint64_t accum_bytes;
    size_t n_lines;
    struct fg_line lines[FG_ESTIMATE_MAX_LINES];
};

/*
 * Estimate job on model.  Fails with FG_E_INVAL for inconsistent jobs
 * (zero batch, LoRA rank 0, a LoRA target list matching no linear layer),
 * FG_E_RANGE for absurd sizes, FG_E_OVERFLOW when the bytes overflow.
 */
int fg_memory_estimate(const struct fg_model *m, const struct fg_job *job, struct fg_estimate *out,
                       struct fg_err *err);

/*
 * The same estimate without the attributed lines (out->n_lines is 0), for callers that
 * read only the byte totals (the planner, a card table): every number is computed by the
 * same code, the text is not formatted (a quarter of the instructions).  Fails as
 * fg_memory_estimate does.
 */
int fg_memory_estimate_totals(const struct fg_model *m, const struct fg_job *job,
                              struct fg_estimate *out, struct fg_err *err);

/* Bytes at another micro-batch: max(static + b * per_sample, step_bytes), saturating. */
uint64_t fg_estimate_at(const struct fg_estimate *e, uint64_t batch);

/* FLOPs per training token (6 x active params + attention), for the cost roofline. */
double fg_memory_flops_per_token(const struct fg_model *m, const struct fg_job *job);

/* Active parameters per token (MoE: top-k of the routed experts). */
uint64_t fg_model_active_params(const struct fg_model *m);

#endif
