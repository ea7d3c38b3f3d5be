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

/* Longest sequence the estimator accepts (tokens). */
#define FG_MAX_SEQ (1u << 24)

enum fg_mode { FG_MODE_FULL, FG_MODE_LORA, FG_MODE_QLORA, FG_MODE_SERVE };
enum fg_precision { FG_PREC_BF16_MIXED, FG_PREC_BF16, FG_PREC_FP16_MIXED, FG_PREC_FP32 };
/* adamw: torch.optim.AdamW as it runs by default on CUDA (foreach: the step materialises
 * sqrt(v) for every parameter); adamw-fused: AdamW(fused=True), one kernel per tensor, no
 * such temporary (torch/optim/adamw.py _fused_adamw); adamw-8bit: bitsandbytes; paged-adamw
 * and paged-adamw-8bit: bitsandbytes optim PagedAdamW / PagedAdamW8bit (Optimizer2State with
 * is_paged: fp32 or 8-bit blockwise m and v in CUDA unified memory, resident on the GPU
 * unless the driver pages them out under pressure, so counted on the GPU). */
enum fg_optimizer {
    FG_OPT_ADAMW, FG_OPT_ADAMW_8BIT, FG_OPT_SGD, FG_OPT_ADAMW_FUSED, FG_OPT_PAGED_ADAMW,
    FG_OPT_PAGED_ADAMW_8BIT
};
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
/* torch.distributed.pipelining's schedules (schedules.py get_schedule_class names), as
 * torchtitan runs them (struct fg_job.pp_schedule): single-stage 1F1B (the default) and
 * GPipe, and the looped ones, two model chunks per rank by default. */
enum fg_pp_schedule { FG_PP_1F1B, FG_PP_GPIPE, FG_PP_INTERLEAVED_1F1B, FG_PP_LOOPED_BFS };
/* torchtitan parallelism.fsdp_reshard_after_forward (distributed/fsdp.py
 * get_fsdp_reshard_after_forward_policy): "default" is `not pp_enabled`. */
enum fg_reshard { FG_RESHARD_DEFAULT, FG_RESHARD_ALWAYS, FG_RESHARD_NEVER };
/* What bitsandbytes' 4-bit linears compute in (struct fg_job.bnb_compute). */
enum fg_bnb_compute { FG_BNB_INPUT, FG_BNB_FP32 };
/* What a chunked loss keeps per vocabulary entry beside the logits (struct fg_job.ce_kept):
 * an fp32 log-softmax (torchtune's CEWithChunkedOutputLoss upcasts each chunk), one in the
 * logits' dtype (lit-gpt's chunked_cross_entropy), or only a log-sum-exp per token
 * (unsloth's fused kernel). */
enum fg_ce_kept { FG_CE_FP32, FG_CE_COMPUTE, FG_CE_LSE };
/* The loss kernel beside chunked_ce (struct fg_job.loss), each as its stack computes it
 * (memory/loss.c says what each keeps): the default reads chunked_ce (a plain or a chunked
 * cross-entropy); Liger's fused linear cross-entropy; Apple's Cut Cross-Entropy; TRL's
 * loss_type "chunked_nll"; Megatron-Core's vocab-parallel cross-entropy; torchtitan's
 * ChunkedLossWrapper; unsloth's fused cross-entropy (unsloth_fused_ce_loss); torchtune's
 * LinearCrossEntropyLoss.  The order is
 * --loss's names after "plain" and "chunked" (job.c). */
#define FG_DS_BUCKET_AUTO UINT64_MAX /* struct fg_job.ds_bucket: "auto" */
enum fg_loss { FG_LOSS_DEFAULT, FG_LOSS_LIGER, FG_LOSS_CCE, FG_LOSS_CHUNKED_NLL,
               FG_LOSS_VOCAB_PARALLEL, FG_LOSS_CHUNKED_WRAPPER, FG_LOSS_UNSLOTH,
               FG_LOSS_LINEAR_CE };

/* What trains the model on top of the adaptation (mode): supervised fine-tuning, or one of
 * the preference / RL trainers whose bytes engine/stack/trainer.c describes row by row. */
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
    /* ---- Preference and RL trainers (engine/stack/trainer.h): SFT unless set. ---- */
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
    /* Serving: a sparse-MLA (DSA) layer keeps vLLM's fp8_ds_mla cache whatever kv_bytes
     * says (model_executor/models/config.py DeepseekV32ForCausalLM.verify_and_update_config:
     * the sparse FlashMLA kernels read that layout), with its indexer's fp8 key cache
     * (memory_node.c ds_mla_per_token).  Set by the vLLM rows. */
    bool kv_ds_mla;
    /* ---- Training-stack defaults of today's releases (framework.h / framework.c). ---- */
    /* A full fine-tune steps each parameter in its post-accumulate-grad hook (torchtune
     * optimizer_in_bwd: recipes/full_finetune_single_device.py _setup_optimizer), so no
     * full gradient set exists: the gradients line is the largest parameter's, and there is
     * no separate step phase.  Default false. */
    bool optimizer_in_bwd;
    /* QLoRA: the trainable adapters are cast to bf16 after get_peft_model (TRL
     * sft_trainer.py SFTTrainer.__init__, "param.data.to(torch.bfloat16)"): 2 B weights,
     * gradients and (torch AdamW, following the parameter) states.  Default false. */
    bool adapters_bf16;
    /* QLoRA under lit-gpt (finetune/lora.py main): the embedding is swapped for a
     * bitsandbytes StableEmbedding after the optimizer is made; the old one stays referenced
     * for the run and the new one, trainable but in no optimizer, keeps its gradient: two more
     * vocab x hidden tensors in the parameter dtype.  Default false. */
    bool embed_swap;
    /* FSDP2 MixedPrecisionPolicy (torchtitan): fp32 sharded parameters are the master copy,
     * each block is all-gathered in bf16 and freed after it runs; nothing is autocast, so no
     * bf16 weight cache is kept for backward.  Default false. */
    bool fsdp_mixed;
    /* Per-op selective activation checkpointing (torchtitan's default mode, --grad-ckpt=
     * selective): with grad_ckpt, each block keeps its input, every other linear's output
     * and the attention output instead of its input alone (memory_node.c S_SAC).  Default
     * false (full recompute). */
    bool ac_selective;
    /* Float8 linears as torchtitan's float8 converter runs them (torchao 0.19
     * float8/float8_linear.py, recipe rowwise): matmul_with_hp_or_float8_args saves its
     * high-precision input and weight (save_for_backward(input_hp, weight_hp_t)), so what a
     * block keeps is bf16's, under selective checkpointing too (memory_node.c
     * node_sac_per_token).  Set by
     * --precision float8 (precision then bf16-mixed over FSDP2).  Default false. */
    bool float8;
    /* QLoRA, and serving under a 4-bit --quant: the head is a 4-bit linear as well
     * (lit-gpt: every nn.Linear, lm_head included, is replaced under
     * BitsandbytesPrecision.module_init_context).  Default false (transformers'
     * bitsandbytes integration skips lm_head). */
    bool head_4bit;
    /* ---- Training peaks (docs/estimate.md "Gradient accumulation and buffers").
     * Appended; zero keeps the estimates of before. ---- */
    /* Micro-batches per optimizer step (0, 1: none).  Above 1 the gradients of the first
     * micro-batch stay alive through every later forward and backward (transformers
     * trainer.py _inner_training_loop: optimizer.step() once per gradient_accumulation_steps,
     * .grad accumulated in between), so the peak holds states, gradients and activations. */
    uint32_t grad_accum;
    /* The gradient buffer is allocated once and lives through forward and backward
     * (Megatron-Core distributed/param_and_grad_buffer.py _ParamAndGradBuffer: grad_data =
     * torch.zeros(numel) at construction).  Set by the megatron and nemo rows. */
    bool grads_persist;
    /* Data parallel without ZeRO runs torch DistributedDataParallel with
     * gradient_as_bucket_view=False (its default; transformers and accelerate leave it), whose
     * reducer allocates buckets as large as the gradients and copies each .grad into them
     * (torch/nn/parallel/distributed.py, reducer.cpp initialize_buckets).  Counted where
     * dp > 1 and zero == 0. */
    bool ddp_buckets;
    /* DeepSpeed ZeRO's own buffers: ZeRO-1/2 convert the gradient partition to fp32 at the
     * step (runtime/zero/stage_1_and_2.py step: flat_grad_partition.to(fp32)) and reduce
     * through a bucket of reduce_bucket_size (5e8) elements in the model dtype
     * (backward_prologue; two with overlap_comm, the ZeRO-3 default); ZeRO-3 converts one
     * sub-group of sub_group_size (1e9) elements at a time (zero/stage3.py). */
    bool ds_buffers;
    /* DeepSpeed's reduce_bucket_size in elements (0: its default, 5e8; FG_DS_BUCKET_AUTO:
     * "auto", which transformers integrations/deepspeed.py trainer_config_finalize and
     * accelerate fill with hidden_size x hidden_size). */
    uint64_t ds_bucket;
    enum fg_loss loss;              /* default FG_LOSS_DEFAULT (chunked_ce decides) */
    /* Saved activations go to the CPU (torchtune training/_activation_offloading.py
     * OffloadActivations, axolotl activation_offloading): the GPU keeps one block's tensors
     * in backward and the forward stash (max_fwd_stash_size 5 tensors: at most one block
     * more), and the head's, which the NoOpManager keeps on the GPU. */
    bool act_offload;
    /* Megatron-Core sequence parallel (TransformerConfig.sequence_parallel): the tensors
     * outside the TP regions (norms, dropout, the block inputs) split over TP too. */
    bool sp;
    /* Activations as Megatron-Core with Transformer Engine saves them, per
     * megatron/training/theoretical_memory_usage.py (Korthikanti 2022 Table 2), not
     * transformers' fp32 norm copies.  Set by the megatron and nemo rows. */
    bool te_act;
    /* Adam's moments in bf16 (Megatron OptimizerConfig use_precision_aware_optimizer with
     * exp_avg_dtype = exp_avg_sq_dtype = bf16, as the Megatron-Bridge DeepSeek recipes set
     * them).  Only with the master copy in the optimizer (FG_MASTER_OPTIMIZER). */
    bool bf16_states;
    /* Bytes of each master weight and master gradient the optimizer holds (2: DeepSpeed
     * bf16_master_weights_and_grads); 0: fp32.  Only with FG_MASTER_OPTIMIZER. */
    unsigned master_bytes;
    /* ---- Pipeline schedules and async TP as torch runs them under torchtitan
     * (memory/titan.h).  Appended; zero keeps the estimates of before. ---- */
    enum fg_pp_schedule pp_schedule; /* --pp-schedule; default 1F1B */
    /* Micro-batches per step and DP rank (torchtitan parallelism.num_pp_microbatches);
     * 0: not given, taken as enough to fill the schedule's warmup. */
    uint32_t pp_microbatches;
    /* Model chunks (virtual stages) this rank holds; inflight then counts chunk forwards,
     * and each keeps its chunk's share of the rank's blocks (0, 1: one chunk). */
    uint32_t pp_chunks;
    /* parallelism.enable_async_tensor_parallel: inductor's micro-pipelined TP over
     * symmetric memory (memory/titan.h fg__titan_async_tp_workspace).  Default false. */
    bool async_tp;
    enum fg_reshard reshard;         /* --reshard-after-forward; default by PP */
    /* The trainer calls torch pipelining's step() with its outputs returned (torchtitan
     * before e5ef99a, v0.2.0 and older): the last stage keeps every micro-batch's logits
     * until the step ends (memory/titan.h fg__titan_pp_outputs).  Default false. */
    bool pp_keeps_outputs;
    /* ---- What lit-gpt builds (docs/frameworks-memory.md).  Appended; zero keeps the
     * estimates of before. ---- */
    /* The head is a tensor of its own even where config.json ties it to the embedding
     * (lit-gpt model.py GPT.__init__: lm_head = nn.Linear(n_embd, padded_vocab_size), never
     * tied to transformer.wte; its checkpoint conversion copies lm_head.weight).  Default
     * false: a tied head stores nothing of its own. */
    bool head_untied;
    /* The 4-bit weights were quantized from an fp16 copy (Lightning's
     * _Linear4bit.quantize: weight.to(dtype=torch.half); bitsandbytes 0.40 Params4bit.cuda:
     * self.data.half()), so quant_state.dtype is fp16: MatMul4Bit.forward's
     * F.dequantize_4bit(B, quant_state) comes out in fp16 and .to(A.dtype) copies it again
     * for bf16 activations.  Default false: quantized from the model's dtype. */
    bool bnb_fp16_quant;
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
int fg_pp_schedule_parse(const char *s, enum fg_pp_schedule *out, struct fg_err *err);
int fg_reshard_parse(const char *s, enum fg_reshard *out, struct fg_err *err);
/* The words an option's parser above accepts, by the option's name in jobopts.def ("mode",
 * "lora-targets"), in enum order; NULL and *n = 0 for an option that takes no word.  For the
 * lists generated from the option table (engine/job/jobspec.h fg_jobopt_values). */
const char *const *fg_job_words(const char *option, size_t *n);
/* --loss plain|chunked|liger|cce|chunked-nll|vocab-parallel|chunked-wrapper|unsloth|linear-ce:
 * sets
 * job->loss and job->chunked_ce. */
int fg_loss_parse(const char *s, struct fg_job *job, struct fg_err *err);
/* fp32|bf16 -> 4|2 bytes (--grad-reduce-dtype, --optimizer-state-dtype). */
int fg_dtype_bytes_parse(const char *s, unsigned *out, struct fg_err *err);
const char *fg_mode_name(enum fg_mode m);
const char *fg_precision_name(enum fg_precision p);
const char *fg_optimizer_name(enum fg_optimizer o);
const char *fg_attention_name(enum fg_attention a);
const char *fg_offload_name(enum fg_offload o);
const char *fg_ref_model_name(enum fg_ref_model r);
const char *fg_vllm_mode_name(enum fg_vllm_mode v);
const char *fg_pp_schedule_name(enum fg_pp_schedule s);
/* "plain", "chunked", "liger", ...: the loss the job runs (--loss's name). */
const char *fg_loss_name(const struct fg_job *job);

#endif
