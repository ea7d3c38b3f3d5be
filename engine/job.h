/*
 * job.h - the job a model is sized for: what the user asks (mode, precision, optimizer,
 * LoRA, parallel layout) and what the framework's code keeps, with the spellings the CLI,
 * the plugin and fitgate.conf accept and the defaults of an unset field.
 *
 * Ownership: struct fg_job is a plain value; nothing in it is allocated, so it is copied
 * with = and needs no free.  The parsers write only their out-parameter (or job fields);
 * the _name functions return static strings.
 *
 * Error contract: see error.h (the parsers fail with FG_E_INVAL naming the value, or
 * FG_E_RANGE for a LoRA target list that is too long).
 */
#ifndef FG_JOB_H
#define FG_JOB_H

#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"

enum fg_mode { FG_MODE_FULL, FG_MODE_LORA, FG_MODE_QLORA, FG_MODE_SERVE };
enum fg_precision { FG_PREC_BF16_MIXED, FG_PREC_BF16, FG_PREC_FP16_MIXED, FG_PREC_FP32 };
/* adamw: torch.optim.AdamW as it runs by default on CUDA (foreach: the step materialises
 * sqrt(v) for every parameter); adamw-fused: AdamW(fused=True), one kernel per tensor, no
 * such temporary (torch/optim/adamw.py _fused_adamw); adamw-8bit: bitsandbytes. */
enum fg_optimizer { FG_OPT_ADAMW, FG_OPT_ADAMW_8BIT, FG_OPT_SGD, FG_OPT_ADAMW_FUSED };
enum fg_quant { FG_QUANT_NONE, FG_QUANT_NF4, FG_QUANT_NF4_DQ, FG_QUANT_INT8 };
enum fg_lora_targets { FG_LORA_ALL_LINEAR, FG_LORA_ATTN, FG_LORA_QV, FG_LORA_LIST };
/* The attention implementation transformers runs (attn_implementation): sdpa, its default,
 * keeps no score matrix where a fused kernel runs; eager computes softmax(QK^T) as tensors
 * and keeps them for backward (model.h fg_node.eager_bytes). */
enum fg_attention { FG_ATTN_SDPA, FG_ATTN_EAGER };
/* Where a full fine-tune's fp32 master weights live: in the parameters themselves (PyTorch
 * AMP, Lightning, FSDP mixed precision: fp32 parameters, bf16 autocast copies), or beside the
 * optimizer's states over bf16 parameters (Megatron's DistributedOptimizer, DeepSpeed's bf16
 * optimizer: sharded with them from ZeRO-1). */
enum fg_master { FG_MASTER_PARAMS, FG_MASTER_OPTIMIZER };
/* ZeRO-Offload / FSDP CPU offload: what leaves the GPU. */
enum fg_offload { FG_OFFLOAD_NONE, FG_OFFLOAD_OPTIMIZER, FG_OFFLOAD_PARAMS };
/* What bitsandbytes' 4-bit linears compute in (struct fg_job.bnb_compute). */
enum fg_bnb_compute { FG_BNB_INPUT, FG_BNB_FP32 };
/* What a chunked loss keeps per vocabulary entry beside the logits (struct fg_job.ce_kept):
 * an fp32 log-softmax (torchtune's CEWithChunkedOutputLoss upcasts each chunk), one in the
 * logits' dtype (lit-gpt's chunked_cross_entropy), or only a log-sum-exp per token
 * (unsloth's fused kernel). */
enum fg_ce_kept { FG_CE_FP32, FG_CE_COMPUTE, FG_CE_LSE };

/* What trains the model on top of the adaptation (mode): supervised fine-tuning, or one of
 * the preference / RL trainers whose bytes engine/trainer.c describes row by row. */
enum fg_trainer { FG_TRAINER_SFT, FG_TRAINER_DPO, FG_TRAINER_ORPO, FG_TRAINER_KTO,
                  FG_TRAINER_GRPO, FG_TRAINER_RLOO, FG_TRAINER_PPO, FG_TRAINER_REWARD };
/* The reference model of a preference / RL trainer: the trainer's default, none (TRL
 * precompute_ref_log_probs, or beta 0), a frozen copy, or the base with adapters disabled. */
enum fg_ref_model { FG_REF_AUTO, FG_REF_NONE, FG_REF_COPY, FG_REF_ADAPTER };
/* Where a generating trainer's completions come from: the policy's own generate(), a vLLM
 * engine sharing each training GPU, or a vLLM server on GPUs of its own. */
enum fg_vllm_mode { FG_VLLM_NONE, FG_VLLM_COLOCATE, FG_VLLM_SERVER };

struct fg_job {
    enum fg_mode mode;
    enum fg_precision precision;
    enum fg_optimizer optimizer;
    enum fg_quant quant;            /* QLoRA base quantization (nf4 by default for qlora) */
    enum fg_lora_targets lora_targets;
    char lora_list[128];            /* comma list of roles for FG_LORA_LIST: "q,v,down" */
    uint32_t lora_rank;
    uint64_t seq_len;               /* tokens per sample; 0 = default (see fg_job_defaults) */
    uint64_t batch;                 /* micro-batch per GPU */
    bool grad_ckpt;
    bool chunked_ce;                /* loss computed in chunks (no full fp32 logits) */
    enum fg_ce_kept ce_kept;        /* what the chunked loss keeps; default FG_CE_FP32 */
    enum fg_attention attention;    /* default sdpa */
    uint32_t zero;                  /* ZeRO stage 0..3 (3 = FSDP full shard) */
    uint32_t dp;                    /* data-parallel ranks the ZeRO states shard over */
    /* Each rank also keeps an unsharded copy of the weights (frozen or trained, in the
     * form the weights line counts them: parameter dtype, or quantized for QLoRA) beside
     * its ZeRO-3 / FSDP shard, as lit-gpt 8641822's FSDP LoRA did (measured-dev rows 44,
     * 45, 47; OOM row 46).  Counted only where the weights are sharded (zero >= 3 and
     * dp > 1): under ZeRO-0/1/2 or dp = 1 each rank holds them whole already and the
     * option adds nothing.  Default false. */
    bool unsharded_copy;
    /* FG_MASTER_OPTIMIZER (a full fine-tune at precision bf16): bf16 parameters, gradients of
     * main_grad_bytes (4: Megatron's fp32 main_grad buffer; 2: DeepSpeed's bf16 gradients),
     * and 4 B of fp32 master weight per parameter counted with the optimizer state, sharded
     * as it is.  Default FG_MASTER_PARAMS (the parameters are the master copy). */
    enum fg_master master;
    unsigned main_grad_bytes;
    enum fg_offload offload;        /* default none */
    uint32_t cp;                    /* context-parallel ranks splitting each sequence (0, 1: none) */
    uint32_t tp, pp, ep;            /* parallel layout (1 = none); set by the planner */
    /* Pipeline stage to size: blocks [layer_first, layer_last) of the main
     * stack, with or without the embedding / the head.  layer_last == 0 means
     * the whole model (set by the planner). */
    uint32_t layer_first, layer_last;
    bool stage_embed, stage_head;
    uint32_t inflight;              /* micro-batches in flight on this stage (1F1B: pp - stage) */
    /* ---- What the framework's code keeps (docs/frameworks-memory.md says which framework
     * sets which).  Appended; the defaults keep the estimates of before. ---- */
    /* peft prepare_model_for_kbit_training ran (QLoRA): it casts every parameter that
     * bitsandbytes did not quantize to fp32 (peft utils/other.py), so embeddings, norms and
     * the head weigh 4 B, the hidden states are fp32, and each Linear4bit computes in fp32
     * (bitsandbytes nn/modules.py Linear4bit.set_compute_type keeps an fp32 input's dtype)
     * and returns fp32 (forward: .to(inp_dtype)): activations as under precision fp32,
     * autocast or not.  Default false. */
    bool kbit_prepared;
    /* bitsandbytes before 0.43.2: MatMul4Bit.forward keeps its input for backward
     * (ctx.tensors = (A, B); dropped by #1270, commit 9e753741).  It costs bytes only where
     * that input is a copy, i.e. bnb_compute is wider than the activations.  Default false. */
    bool bnb_keeps_input;
    /* The dtype the 4-bit matmuls run in.  Linear4bit.set_compute_type keeps an fp32 or
     * bf16 input's dtype whatever bnb_4bit_compute_dtype says; only an fp16 input is cast to
     * bnb_4bit_compute_dtype (transformers' BitsAndBytesConfig default: float32).  The engine
     * cannot tell fp16 from bf16 activations (2 B each), so this says what ran: FG_BNB_FP32
     * for an fp16 model under the default config, else FG_BNB_INPUT (default). */
    enum fg_bnb_compute bnb_compute;
    /* LoRA dropout probability (peft LoraConfig.lora_dropout, default 0.0).  Above 0 each
     * adapted linear keeps a bool mask and the dropped input in the adapters' fp32 (peft
     * tuners/lora/layer.py Linear.forward: lora_B(lora_A(dropout(x))), one nn.Dropout per
     * adapted module). */
    float lora_dropout;
    /* The adapters are in the base's parameter dtype, as lit-gpt and torchtune make them,
     * not peft's fp32 (get_peft_model autocast_adapter_dtype=True): their weights, gradients
     * and optimizer states, and a dropped input without autocast, take that dtype.
     * Default false (peft). */
    bool lora_base_dtype;
    /* A LoRA base loaded in bf16 computes under autocast all the same (HF Trainer's
     * bf16=True, accelerate's mixed_precision): precision says bf16 for its weights, this
     * says that each adapted linear keeps autocast's bf16 cast of its fp32-cast input
     * (memory_node.c act_of).  Set by jobspec when a framework keeps such a base
     * (lora_base_torch_dtype) under --precision bf16-mixed.  Default false. */
    bool autocast;
    /* The attention expands K and V to the query heads before SDPA, and with as many K/V
     * heads as query heads hands SDPA v as a view of the fused qkv output, which SDPA's
     * saved v then keeps whole (lit-gpt CausalSelfAttention.forward: k.expand / v.expand,
     * then reshape).  Default false (transformers passes K/V heads as they are). */
    bool kv_expanded;
    /* q, k and v are one fused projection with one LoRA module and so one dropout
     * (lit-gpt's CausalSelfAttention.attn with LoRAQKVLinear); peft and torchtune adapt
     * each projection with its own.  Default false. */
    bool lora_fused_qkv;
    /* Dropout probabilities in training: on the attention probabilities (eager only: the
     * fused SDPA kernels draw theirs from a seed) and on the hidden states (after each
     * residual branch and the embeddings).  Negative: config.json's
     * (fg_model.attn_dropout / hidden_dropout), the default, since transformers applies the
     * config's dropout in train mode. */
    float attn_dropout, hidden_dropout;
    /* ---- Preference and RL trainers (engine/trainer.h): SFT unless set. ---- */
    enum fg_trainer trainer;
    enum fg_ref_model ref_model;    /* resolved by the jobspec: never AUTO in an estimate */
    enum fg_vllm_mode vllm_mode;
    float vllm_util;                /* colocate: vllm_gpu_memory_utilization of each GPU */
    float beta;                     /* KL weight; a reference model only when > 0 (GRPO, RLOO) */
    uint32_t num_generations;       /* completions per prompt (GRPO, RLOO) */
    uint32_t gen_gpus;              /* server mode: GPUs of the job that run the vLLM server */
    uint64_t max_prompt, max_completion; /* tokens (generating trainers: seq_len = their sum) */
    /* Serving: the weights' scheme the engine runs (enum fg_wq_method, vLLM --quantization;
     * 0: the checkpoint's quantization_config) and the KV cache's element bytes (vLLM / SGLang
     * --kv-cache-dtype: 0 auto, the model dtype's 2 B; fp8 1 B). */
    uint8_t serve_wq;
    uint8_t kv_bytes;
};

/* Defaults of the seeds: full AdamW bf16 autocast (fp32 parameters), LoRA
 * on a bf16 base (precision bf16; bf16-mixed means an fp32 base under
 * autocast, as Lightning's bf16-mixed does), 2048 tokens (or the model's
 * context when shorter), batch 1, LoRA r=16 on all linear layers, serving
 * at 4096 tokens. */
void fg_job_defaults(struct fg_job *job, enum fg_mode mode);

/* The job runs on gpus GPUs, each a data-parallel rank: a ZeRO stage then shards over all
 * of them (dp = gpus), as the plugin assesses a submission and the CLI's --gpus reads. */
void fg_job_on_gpus(struct fg_job *job, uint32_t gpus);

/* Parse the spellings the CLI and the plugin accept; FG_E_INVAL naming the value. */
int fg_mode_parse(const char *s, enum fg_mode *out, struct fg_err *err);
int fg_precision_parse(const char *s, enum fg_precision *out, struct fg_err *err);
int fg_optimizer_parse(const char *s, enum fg_optimizer *out, struct fg_err *err);
int fg_quant_parse(const char *s, enum fg_quant *out, struct fg_err *err);
int fg_lora_targets_parse(const char *s, struct fg_job *job, struct fg_err *err);
int fg_attention_parse(const char *s, enum fg_attention *out, struct fg_err *err);
int fg_offload_parse(const char *s, enum fg_offload *out, struct fg_err *err);
int fg_ref_model_parse(const char *s, enum fg_ref_model *out, struct fg_err *err);
int fg_vllm_mode_parse(const char *s, enum fg_vllm_mode *out, struct fg_err *err);
const char *fg_mode_name(enum fg_mode m);
const char *fg_precision_name(enum fg_precision p);
const char *fg_optimizer_name(enum fg_optimizer o);
const char *fg_attention_name(enum fg_attention a);
const char *fg_offload_name(enum fg_offload o);
const char *fg_ref_model_name(enum fg_ref_model r);
const char *fg_vllm_mode_name(enum fg_vllm_mode v);

#endif
