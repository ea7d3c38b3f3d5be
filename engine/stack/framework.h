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
    bool kv_ds_mla;            /* serving: sparse-MLA layers keep fp8_ds_mla (job.h) */
    bool pp_even;              /* PP stages split by count, not memory (fg_plan_even_cut) */
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
    bool pp_keeps_outputs;     /* its PP step returns the outputs: the last stage keeps every
                                  micro-batch's logits to the step's end (job.h) */
    bool float8;               /* runs --precision float8 (torchao Float8Linear) */
    bool qlora_head_4bit;      /* QLoRA and 4-bit serving quantize the head too (lit-gpt) */
    bool head_untied;          /* its own lm_head whatever config.json ties (lit-gpt) */
    bool bnb_fp16_quant;       /* 4-bit weights quantized from fp16 (Lightning, lit-gpt) */
    const char *keeps;         /* for people: what the row keeps, one line (fitgate frameworks) */
    const char *source;        /* where the row's facts come from: file:function, release */
    /* Where the row was read (fitgate frameworks): the repository, its main file, the commit
     * (the release's tag, abbreviated) and a date, "YYYY-MM-DD".  Where a snapshot of the
     * repository was fetched, date is that commit's and dated is NULL.  Where none could be
     * (over the fetch limit), commit names the stored file read, date is the release's,
     * and dated says which stored source gives it ("released by": the earliest record
     * found of the release, an upper bound on its day). */
    const char *repo, *file, *commit, *date, *dated;
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
    /* ---- What a job under it can switch on, and what it runs (the remedies' table,
     * policies/remedy.c; framework.c says where each is read) ---- */
    unsigned switches;         /* FG_SW_*: besides ZeRO (layouts) and QLoRA (qlora) */
    unsigned trainers;         /* FG_TRAINS_*: the preference / RL trainers it has (SFT is
                                  every training row's) */
    uint8_t pp_zero_max;       /* the highest ZeRO stage its pipeline runs beside (DeepSpeed's
                                  PipelineEngine: 1); 0 means no limit */
};

/* Switches a framework's own code turns on (fg_framework.switches). */
#define FG_SW_GRAD_CKPT 0x0001u    /* activation checkpointing */
#define FG_SW_ACCUM 0x0002u        /* a smaller micro-batch with gradient accumulation */
#define FG_SW_LIGER 0x0004u        /* fused linear cross-entropy (Liger-Kernel) */
#define FG_SW_ADAM8 0x0008u        /* bitsandbytes 8-bit AdamW */
#define FG_SW_PAGED 0x0010u        /* bitsandbytes paged AdamW (8-bit) */
#define FG_SW_OFFLOAD_OPT 0x0020u  /* optimizer states on the CPU (with a ZeRO stage) */
#define FG_SW_OFFLOAD_PARAMS 0x0040u /* parameters and gradients on the CPU too (ZeRO-3) */
#define FG_SW_ACT_OFFLOAD 0x0080u  /* saved activations on the CPU */
#define FG_SW_VLLM 0x0100u         /* TRL's vLLM generation: its colocated share, or a server
                                      on GPUs of the job's own */
#define FG_SW_REF_PRECOMPUTE 0x0200u /* reference log-probs computed before training
                                        (TRL precompute_ref_log_probs): no reference model */
#define FG_SW_SEQS 0x0400u         /* serving: fewer sequences at once (max_num_seqs) */
#define FG_SW_MAX_LEN 0x0800u      /* serving: a shorter max_model_len */
#define FG_SW_KV_FP8 0x1000u       /* serving: an fp8 KV cache (--kv-cache-dtype) */
#define FG_SW_GPU_UTIL 0x2000u     /* serving: a larger share of the card */

/* Trainers a framework has (fg_framework.trainers): bit 1 << enum fg_trainer. */
#define FG_TRAINS(t) (1u << (t))

/*
 * One switch of the table for a job: the option (jobopts.def row number, FG_JOBOPT_*) and
 * the value the user types ("" for a flag), the FG_SW_* bit it comes from (0: the row's ZeRO
 * or QLoRA).  fg_framework_switch_list() gives a row's switches for a mode, cheapest first.
 */
enum fg_switch {
    FG_SWITCH_GRAD_CKPT, FG_SWITCH_ACCUM, FG_SWITCH_LIGER, FG_SWITCH_ZERO3,
    FG_SWITCH_ADAM8, FG_SWITCH_PAGED, FG_SWITCH_OFFLOAD_OPT, FG_SWITCH_OFFLOAD_PARAMS,
    FG_SWITCH_ACT_OFFLOAD, FG_SWITCH_REF_PRECOMPUTE, FG_SWITCH_VLLM_UTIL,
    FG_SWITCH_VLLM_SERVER, FG_SWITCH_QLORA,
    FG_SWITCH_GPU_UTIL, FG_SWITCH_KV_FP8, FG_SWITCH_SEQS, FG_SWITCH_MAX_LEN,
    FG_SWITCH_COUNT
};

/* "gradient checkpointing", ... for people and tests. */
const char *fg_switch_name(enum fg_switch s);

/*
 * The switches row f runs for a job of mode (FG_MODE_*, job.h) under trainer (FG_TRAINER_*:
 * 0 SFT), cheapest first, into out (up to cap); returns how many.  Serving: the engine's
 * share, an fp8 KV cache, fewer sequences, a shorter max_model_len.  Training: checkpointing,
 * micro-batch with accumulation, fused loss, ZeRO-3, an 8-bit then a paged optimizer,
 * optimizer then parameter offload, activation offload, a precomputed reference (trainers
 * with one), vLLM's share and server (generating trainers), QLoRA last (from LoRA).  A mode
 * the row does not run has none; every mode it runs has one at least (tests/test_remedy.c
 * holds every row to it).
 */
size_t fg_framework_switch_list(const struct fg_framework *f, unsigned mode, unsigned trainer,
                                enum fg_switch *out, size_t cap);

/* Whether row f has trainer (enum fg_trainer; SFT: it trains at all). */
bool fg_framework_has_trainer(const struct fg_framework *f, unsigned trainer);

/*
 * A layout as it would run: its dimensions, where its GPUs are (per_node GPUs on each of
 * nodes nodes; 0 per_node: one node holds them all), and the job (serving, the model's
 * experts).
 */
struct fg_run_shape {
    uint32_t tp, pp, ep, cp, dp, zero;
    uint32_t per_node, nodes;
    uint64_t experts;      /* the model's routed experts (0: dense) */
    uint64_t seq_len;      /* tokens per sample (CP splits it in 2 x CP chunks) */
    bool serve;            /* a served job (EP spreads over TP x DP, not DP) */
};

/*
 * Whether framework f runs the layout s: the one table every layout fitgate admits or
 * proposes is held to (the check's own, the planner's, every remedy's).  f NULL: the rules
 * of any framework only.  The rules:
 *   - every dimension above 1 is one the row runs (FG_LAY_*), ZeRO only over DP > 1 or with
 *     a ZeRO stage asked on one rank;
 *   - TP stays inside a node (it divides the GPUs of a node when the job spans several);
 *   - a device_map layer split (naive_pp) is one process on one node: no DP or CP beside it;
 *   - a pipeline under a row with pp_zero_max runs ZeRO up to that stage only (DeepSpeed's
 *     PipelineEngine refuses ZeRO-2 and -3);
 *   - EP only on a MoE model, dividing its experts and the ranks it spreads them over (DP;
 *     TP x DP served);
 *   - CP divides the sequence into 2 x CP chunks.
 * false with the reason in why (cap bytes; NULL: none) when it does not.
 */
bool fg_framework_runs(const struct fg_framework *f, const struct fg_run_shape *s, char *why,
                       size_t cap);

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
