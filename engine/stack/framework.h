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
#include "memory/memory.h"

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
    const char *name;          /* "transformers" */
    const char *version;       /* the release its defaults are read from: "5.2" (never NULL) */
    const char *aliases;       /* comma list of other spellings */
    const char *label;         /* for people: "HF Trainer / accelerate / TRL + peft" */
    unsigned layouts;          /* FG_LAY_* */
    bool naive_pp;             /* PP is a layer split run one micro-batch at a time */
    bool trains, serves;       /* the modes it runs */
    bool qlora;                /* has a 4-bit base path (bitsandbytes, torchao NF4) */
    bool full_only;            /* trains full fine-tunes only: no adapter (LoRA) path */
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
    /* ---- training-stack defaults of today's releases (framework.c says where each is
     * read; job.h says what the estimator does with the job field each one sets) ---- */
    bool lora_fp32_base;       /* LoRA / QLoRA: the model loads in fp32 unless --precision says
                                  (TRL create_model_from_path dtype="float32"), so the base and
                                  what bitsandbytes leaves unquantized are 4 B under autocast */
    bool qlora_adapters_bf16;  /* QLoRA: the trainable adapters are cast to bf16 (TRL) */
    bool full_optimizer_set;   /* a full fine-tune runs full_optimizer, not optimizer */
    enum fg_optimizer full_optimizer;
    bool optimizer_in_bwd;     /* full fine-tune: each parameter steps in its grad hook */
    bool bnb_keeps_input;      /* the bitsandbytes it pins keeps MatMul4Bit's input (< 0.43.2) */
    bool qlora_embed_swap;     /* QLoRA swaps in a second, trainable embedding (lit-gpt) */
    bool fsdp_mixed;           /* FSDP2 MixedPrecisionPolicy: fp32 shards, bf16 gathered blocks,
                                  no autocast weight cache (torchtitan) */
    bool ac_selective;         /* its checkpointing is per-op selective (torchtitan) */
    bool float8;               /* runs --precision float8 (torchao Float8Linear) */
    bool qlora_head_4bit;      /* QLoRA quantizes the head too (lit-gpt) */
    const char *keeps;         /* for people: what the row keeps, one line (fitgate frameworks) */
    const char *source;        /* where the row's facts come from: file:function, release */
    /* Where the row was read (fitgate frameworks): the repository, its main file, the commit
     * (the release's tag, abbreviated) and that commit's date, "YYYY-MM-DD", from a fetched
     * snapshot of the repository.  date is NULL where no snapshot could be fetched: commit
     * then names the stored single files that were read, and source says so. */
    const char *repo, *file, *commit, *date;
    enum fg_loss loss;         /* its loss kernel unless --loss says (memory/loss.c; DEFAULT:
                                  chunked_ce and ce_kept say) */
    bool dist_recipe;          /* a full fine-tune on several ranks runs its distributed recipe:
                                  `optimizer`, not full_optimizer, and no optimizer_in_bwd
                                  (torchtune full_finetune_distributed.py) */
    /* Training buffers and kernels (job.h says what each keeps) */
    bool grads_persist;        /* gradient buffer allocated once (Megatron param_and_grad_buffer) */
    bool ddp_buckets;          /* DP without ZeRO through torch DDP, gradient_as_bucket_view off */
    bool ds_buffers;           /* DeepSpeed ZeRO's fp32 gradient partition and reduce bucket */
    bool te_act;               /* activations as Megatron-Core + Transformer Engine save them */
    bool sp;                   /* sequence parallel on by default (its recipes) */
};

/* The row for a name or alias (case-insensitive), newest release; "NAME@VERSION" the row of
 * that release (a version matches a row whose version it starts: "4.57" finds 4.57, "4"
 * the newest 4.x).  NULL when unknown. */
const struct fg_framework *fg_framework_find(const char *name);

/* Why fg_framework_find(name) failed, for the user: FG_E_INVAL naming the frameworks, or
 * for NAME@VERSION the versions the table knows of NAME.  spelling: "--" or "--ft-". */
int fg_framework_unknown(const char *name, const char *spelling, struct fg_err *err);

/* Whether row i is the newest of its name (the rows a list of names shows). */
bool fg_framework_is_newest(const struct fg_framework *f);

/* The row a job that names no framework runs: transformers@4.57 (framework.c says why);
 * never NULL. */
const struct fg_framework *fg_framework_default(void);

/* Row i of the table (NULL past the end), for listings. */
const struct fg_framework *fg_framework_at(size_t i);

/* "transformers|trl|..." into buf: every framework's name, once (older releases are
 * NAME@VERSION of the same name). */
void fg_framework_names(char *buf, size_t cap);

/* "Megatron/NeMo" etc.: the frameworks whose layouts include every bit of need, by label,
 * into buf ("" when none). */
void fg_framework_who_runs(unsigned need, char *buf, size_t cap);

/* The layout bits a layout needs: FG_LAY_TP when tp > 1, and so on. */
unsigned fg_framework_needs(uint32_t tp, uint32_t pp, uint32_t ep, uint32_t cp, uint32_t zero);

#endif
