/*
 * framework.h - what a training or serving framework keeps, as table rows.
 *
 * "LoRA, bf16 mixed" is not one job: Lightning keeps an fp32 base under
 * autocast, HF Trainer + peft a bf16 base; Megatron keeps bf16 parameters
 * and its fp32 master copy inside a distributed optimizer; vLLM takes a share
 * of the card up front.  A row names, for one framework, the layouts it can
 * run and the defaults and meanings it gives the job's options, each with
 * its source in that framework's code (framework.c).  The estimator reads
 * only the job fields a row sets (job.h); nothing downstream asks which
 * framework it was.
 *
 * Rows are static and never NULL once found; lookups return NULL for an
 * unknown name.  Nothing here allocates or prints.
 */
#ifndef FG_FRAMEWORK_H
#define FG_FRAMEWORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "memory.h"

/* Layout dimensions a framework can run (bits of fg_framework.layouts). */
#define FG_LAY_TP 0x1u   /* Megatron-style tensor parallel */
#define FG_LAY_PP 0x2u   /* pipeline stages (1F1B, or a naive layer split: see naive_pp) */
#define FG_LAY_EP 0x4u   /* expert parallel */
#define FG_LAY_CP 0x8u   /* context (sequence) parallel */
#define FG_LAY_ZERO 0x10u /* ZeRO / FSDP sharding over the data-parallel ranks */

/* How a serving engine budgets one card (fg_framework.serve_budget; policies/assess.c
 * engine_fit applies it, docs/frameworks.md "Serving" says where each rule comes from). */
enum fg_serve_budget {
    FG_SERVE_NONE,     /* no engine: the estimate against the card with the headroom */
    FG_SERVE_VLLM,     /* vLLM >= 0.21: gpu_memory_utilization x total after the CUDA context,
                          weights + profile run at max_num_batched_tokens + CUDA graphs off it */
    FG_SERVE_VLLM_020, /* vLLM <= 0.20: the context inside the budget, CUDA graphs outside */
    FG_SERVE_SGLANG,   /* SGLang: mem_fraction_static from the card, TP and chunked prefill */
};

struct fg_framework {
    const char *name;          /* "hf" */
    const char *aliases;       /* comma list of other spellings */
    const char *label;         /* for people: "HF Trainer / accelerate / TRL + peft" */
    unsigned layouts;          /* FG_LAY_* */
    bool naive_pp;             /* PP is a layer split run one micro-batch at a time */
    bool trains, serves;       /* the modes it runs */
    bool qlora;                /* has a 4-bit base path (bitsandbytes, torchao NF4) */
    bool lora_base_torch_dtype;/* LoRA under mixed precision: the base stays in the dtype it
                                  was loaded in (bf16), autocast only computes in it */
    bool kv_expanded;          /* attention expands K/V to the query heads (job.h) */
    enum fg_quant qlora_quant; /* its 4-bit base when --quant is not given (NONE: nf4) */
    bool lora_autocast;        /* its LoRA computes under bf16 autocast unless --precision
                                  says bf16 (HF Trainer bf16=True: accelerate's autocast) */
    enum fg_precision full_precision; /* a full fine-tune's default */
    enum fg_master master;     /* where the fp32 master copy of a full fine-tune lives */
    unsigned main_grad_bytes;  /* with FG_MASTER_OPTIMIZER: gradient buffer bytes (4: fp32) */
    enum fg_optimizer optimizer;
    bool chunked_ce;           /* its loss never holds the whole fp32 logits */
    enum fg_ce_kept ce_kept;   /* what its chunked loss keeps beside the logits */
    bool grad_ckpt;            /* recomputes activations by default */
    bool unsharded_copy;       /* FSDP ranks keep a whole weight copy beside their shard */
    uint32_t dp_zero;          /* the ZeRO stage it shards with over several ranks unless told */
    /* QLoRA and LoRA as its code runs them (job.h; docs/frameworks-memory.md) */
    bool kbit_prepared;        /* QLoRA through peft's prepare_model_for_kbit_training, which
                                  also turns gradient checkpointing on */
    bool lora_base_dtype;      /* adapters in the base's dtype, not fp32 */
    bool lora_fused_qkv;       /* one LoRA dropout on a fused qkv input */
    float lora_dropout;        /* its default LoRA dropout */
    bool no_dropout;           /* its own modules: no attention or hidden dropout */
    double gpu_util;           /* serving: share of the card the engine takes (0: none; SGLang:
                                  computed from the card, this is its fallback) */
    enum fg_serve_budget serve_budget; /* serving: how the engine budgets a card */
    const char *source;        /* where the row's facts come from */
};

/* The row for a name or alias (case-insensitive); NULL when unknown. */
const struct fg_framework *fg_framework_find(const char *name);

/* The row of the default framework (hf); never NULL. */
const struct fg_framework *fg_framework_default(void);

/* Row i of the table (NULL past the end), for listings. */
const struct fg_framework *fg_framework_at(size_t i);

/* "hf, lit-gpt, ..." into buf: every row's name. */
void fg_framework_names(char *buf, size_t cap);

/* "Megatron/NeMo" etc.: the frameworks whose layouts include every bit of need, by label,
 * into buf ("" when none). */
void fg_framework_who_runs(unsigned need, char *buf, size_t cap);

/* The layout bits a layout needs: FG_LAY_TP when tp > 1, and so on. */
unsigned fg_framework_needs(uint32_t tp, uint32_t pp, uint32_t ep, uint32_t cp, uint32_t zero);

#endif
