/*
 * pipeline.h - internal to the estimator (engine/memory/): one training estimate as a pipeline
 * of stages that runs in one direction.  stages.def lists the stages in the order they run;
 * each is one file, train_<name>.c, defining fg__train_<name>(), a function of what the stages
 * before it wrote into struct train and the estimate; pipeline.c runs them, and estimate.c
 * calls that once per training estimate (serving is serve.c's; a preference / RL trainer's
 * part sits on top, in estimate.c).  A new memory term is a new stage: its file and its line
 * in stages.def (the Makefile's source list is derived from it).
 *
 * Every pointer in struct train is borrowed from estimate.c's estimate() for the call; nothing
 * here allocates.  A stage returns 0, or a negative FG_E_* code with err set.
 *
 * The short names of the sources the stages cite:
 *   [AMP]   PyTorch automatic mixed precision: fp32 parameters, autocast
 *           keeps bf16 copies of the weights it casts for the forward pass
 *           and saves them for backward (torch/csrc/autograd autocast cache).
 *   [MEG]   Megatron-LM megatron/training/theoretical_memory_usage.py:
 *           18 bytes per parameter for bf16 training with fp32 master
 *           weights, grads and Adam states; ZeRO / distributed optimizer
 *           divides the 12 optimizer bytes by DP.
 *   [KOR]   Korthikanti et al. 2022 (arXiv 2205.05198): activations per
 *           layer, 34sbh without the score matrix (SDPA / flash attention),
 *           TP divides the attention and MLP internals, full recompute keeps
 *           2sbh per layer, pipeline stage 0 holds p micro-batches.
 *   [HF]    transformers modeling code: LlamaRMSNorm upcasts to fp32,
 *           ForCausalLMLoss upcasts the logits to fp32 for cross-entropy.
 *   [PEFT]  peft get_peft_model(autocast_adapter_dtype=True) keeps LoRA
 *           adapters in fp32 even on a bf16 base.
 *   [BNB]   bitsandbytes 4-bit: NF4 = 0.5 byte per weight + one fp32 absmax
 *           per 64 weights; double quantization stores absmax in 8 bit with
 *           one fp32 per 256 blocks (QLoRA paper, Dettmers et al. 2023).
 *   [T101]  EleutherAI "Transformer Math 101": 8-bit Adam 2 bytes, SGD with
 *           momentum one state per parameter.
 */
#ifndef FG_MEMORY_PIPELINE_H
#define FG_MEMORY_PIPELINE_H

#include <stdbool.h>
#include <stdint.h>

#include "memory/memory.h"
#include "memory/memory_stage.h"
#include "util/error.h"

/*
 * Bytes of `all` parameters (of which `experts` are routed experts) at
 * `bytes` each, sharded over DP by a ZeRO stage: dense parameters over the
 * DP ranks, routed experts over the expert-data-parallel group (DP / EP):
 * EP has already split the experts, so the distributed optimizer shards
 * each expert over the ranks that hold it (Megatron expert_data_parallel).
 */
static inline uint64_t sharded_bytes(uint64_t all, uint64_t experts, double bytes, uint64_t shard,
                              uint32_t ep)
{
    uint64_t shard_e = shard > 1 && ep > 1 ? (shard / ep ? shard / ep : 1) : shard;
    double dense = (double)(all - experts) * bytes / (double)shard;
    double exp = (double)experts * bytes / (double)shard_e;
    double t = dense + exp;
    return t >= 1.8e19 ? UINT64_MAX : (uint64_t)t;
}

/*
 * One training estimate as its stages read it: estimate.c fills the first group, each stage
 * (stages.def) the fields after it.
 */
struct train {
    const struct fg_model *m;
    const struct fg_job *job;
    struct fg_estimate *e;
    bool lines;              /* e gets its lines (estimate(): false for totals only) */
    struct part_set *set;    /* the planner's cached block parts (memory_stage.h) */
    struct act kept;
    struct stage_sums t;
    uint64_t seq;
    bool full;
    unsigned pbytes;         /* parameter bytes */
    uint32_t tp, dp;         /* dp: spans the context-parallel ranks (train_static) */
    uint64_t params, linear, quantizable, adapters, largest_linear, experts_here, layers_here;
    /* layout */
    unsigned wbytes, gbytes, obytes, state_bytes;
    bool adam, master_opt, want_copy;
    uint64_t shard_w, shard_g, shard_o, copy_w;
    /* transients, buffers, logits (a fused loss's head gradient) */
    uint64_t overhead;
    /* activations */
    uint64_t sq, act;
    /* logits */
    uint64_t logits;
    /* buffers: in both phases (DDP's buckets), the step's own (DeepSpeed's fp32
     * gradient partition) */
    uint64_t both_extra, step_extra;
};

/* The estimate's attributed lines (lines.c).  fg__put_line appends one line (none of 0 bytes,
 * none past FG_ESTIMATE_MAX_LINES); add_line skips the call, formatting included, once the
 * lines are full, as a totals-only estimate's are from the start (estimate.c estimate()). */
void fg__put_line(struct fg_estimate *e, const char *key, uint64_t bytes, bool per_sample,
                  const char *source, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
#define add_line(e, ...) \
    ((e)->n_lines < FG_ESTIMATE_MAX_LINES ? fg__put_line((e), __VA_ARGS__) : (void)0)

/* The lines of key move to the CPU: kept, with 0 bytes on the GPU and the source saying so
 * (none when lines is false: a totals-only estimate wrote none). */
void fg__offloaded(struct fg_estimate *e, bool lines, const char *key, const char *source);

/* Bytes per quantized weight of a bitsandbytes scheme (lines.c [BNB]). */
double fg__quant_bytes(enum fg_quant q);

/* The tied matrix a pipeline stage holding the head but not the embedding keeps (lines.c). */
uint64_t fg__tied_copy_here(const struct fg_model *m, const struct fg_job *job, bool has_head);

/* The stages, in the order they run (stages.def). */
#define FG_TRAIN_STAGE(name, what) int fg__train_##name(struct train *x, struct fg_err *err);
#include "memory/stages.def"
#undef FG_TRAIN_STAGE

/* Runs every stage of stages.def on x in order; the first error stops it. */
int fg__train_run(struct train *x, struct fg_err *err);

/* A serving estimate (serve.c): weights, KV cache, state and prefill working set into e. */
int fg__serve_estimate(const struct fg_model *m, const struct fg_job *job, struct fg_estimate *e,
                       struct fg_err *err);

#endif
