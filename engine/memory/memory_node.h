/*
 * memory_node.h - internal to the estimator (memory.c, memory_stage.c, memory_node.c):
 * what one node of the graph (model.h) adds to a training or serving estimate under a job,
 * before the stage sums them (memory_stage.h).  Nothing here allocates; every pointer is
 * borrowed for the call.  Nothing fails: the sums wrap or saturate as the estimate reads
 * them (memory.c checks the total).
 */
#ifndef FG_MEMORY_NODE_H
#define FG_MEMORY_NODE_H

#include <stdbool.h>
#include <stdint.h>

#include "job/job.h"
#include "model/model.h"

/*
 * What the job's activations are made of, set once per estimate (act_of): the compute and
 * residual bytes, and which of the framework's kept tensors the job has.  Part of the
 * planner's part key (struct part_key): every block part reads it.
 */
struct act {
    unsigned c, r;          /* compute dtype bytes (bf16 2, fp32 4); residual stream bytes */
    unsigned qin_bytes;     /* bnb_keeps_input: bytes of each 4-bit linear's kept input copy */
    bool frozen;            /* LoRA / QLoRA: a base linear keeps no input for its weight */
    bool base_keeps;        /* ... but the 4-bit base keeps it all the same (bnb < 0.43.2) */
    bool lora_shares;       /* an adapter's lora_A keeps its linear's input tensor itself */
    unsigned lora_own;      /* bytes per input element an adapter keeps of its own: a cast
                               copy, a dropout mask and the dropped copy; 0 when it shares */
    bool attn_drop;         /* dropout on the attention probabilities (eager) */
    bool hidden_drop;       /* dropout on the hidden states */
    bool te;                /* Megatron-Core + TE's saved tensors (job.h te_act), full training */
    bool sp;                /* ... with sequence parallel over TP > 1 (job.h sp) */
};

/* What a part and a stage add up node by node: one array, so that folding, runs, the two
 * sides and the planner's prefix table treat every field alike. */
enum {
    S_PARAMS, S_EXPERTS, S_LINEAR, S_QUANTIZABLE, S_ADAPTERS,
    S_MERGED, /* LoRA: expert parameters peft rebuilds as W + BA each forward */
    S_SCORE,  /* bytes kept per token per token of context (attention scores) */
    S_QIN,    /* bytes kept per token: 4-bit linears' input copies (bnb_keeps_input) */
    S_LDROP,  /* bytes kept per token: LoRA adapters' own input copies (casts, dropout) */
    S_HDROP,  /* bytes kept per token: hidden-state dropout masks */
    S_SAC,    /* bytes per-op selective checkpointing keeps per token (torchtitan op SAC) */
    S_ACT,    /* bytes kept per token; a stage's: its blocks' (the sides' go to act_other) */
    SUMS
};

/* What one node (or one block, summed over its nodes) adds to a training estimate. */
struct part {
    uint64_t sum[SUMS];
    uint64_t largest;
};

/* What a served node (or block) adds: weights on this GPU, KV bytes per sequence, fixed
 * state per sequence, linear weights (for a quantized base only), and the largest forward
 * working set per token (one node's temporaries: the nodes run one after another). */
struct serve_part {
    uint64_t weights, kv, state, lin, work;
    uint64_t largest;       /* params of the largest quantized linear here (--quant) */
    uint64_t wbytes;        /* bytes of the weights here in the served scheme (wquant.h) */
    bool has_head;
    bool ds_mla;            /* a sparse-MLA layer keeps vLLM's fp8_ds_mla cache (job.h) */
};

/* What the job's activations are made of (struct act), from the job and the model's
 * dropout. */
void fg__act_of(const struct fg_model *m, const struct fg_job *job, struct act *a);

/* Node n's part of a training estimate, added into p (its parameters, linears, adapters
 * and the bytes it keeps per token for backward). */
void fg__add_node(const struct fg_node *n, const struct fg_job *job, const struct act *a,
                  struct part *p);

/* Node n's part of a serving estimate at seq tokens, added into p. */
void fg__add_served(const struct fg_node *n, const struct fg_job *job, uint64_t seq,
                    const struct fg_wquant *wq, struct serve_part *p);

#endif
