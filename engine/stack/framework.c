/*
 * framework.c - the framework table (framework.h).  Each row's facts come
 * from the framework's own code; the source column says where.
 */
#include "stack/framework.h"
#include "job/job.h"
#include "stack/trainer.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>


/*
 * Sources, by row (repository, release read: file function or key).  Each row is one
 * release; a name's newest release comes first and older ones follow it (NAME@VERSION).
 *  transformers 5 (5.x, the newest): modeling_utils.py PreTrainedModel.from_pretrained loads
 *             dtype="auto" (the checkpoint's torch_dtype: bf16 for today's checkpoints), so a
 *             Trainer full fine-tune under bf16=True holds bf16 parameters, gradients and
 *             AdamW states (2 + 2 + 4 B/param; autocast changes no dtype); training_args.py
 *             TrainingArguments.optim: default_optim = "adamw_torch_fused" when torch >= 2.8
 *             (no foreach sqrt(v) temporary); gradient_checkpointing False; trainer.py
 *             _wrap_model (DDP, FSDP, DeepSpeed through accelerate); modeling_utils.py
 *             device_map (a layer split run one micro-batch at a time); peft
 *             tuners/lora/model.py (adapters upcast to fp32: autocast_adapter_dtype) and
 *             utils/other.py prepare_model_for_kbit_training for QLoRA (the Trainer recipes).
 *  transformers 4.57: from_pretrained loaded fp32 unless torch_dtype was given (the
 *             fp32 + autocast full fine-tune: 4 + 4 + 8 B/param and bf16 weight copies);
 *             default_optim "adamw_torch" (foreach) below torch 2.8, as this row counts it
 *             (--optimizer adamw-fused for 4.57 on torch >= 2.8).  The default row.
 *  trl 1.9    (v1.9.0) trainer/utils.py create_model_from_path (dtype defaults to "float32",
 *             also in model_config.py ModelConfig.dtype), trainer/sft_config.py SFTConfig
 *             (gradient_checkpointing=True, bf16=True; loss_type None becomes "chunked_nll"
 *             unless use_liger_kernel, __post_init__), trainer/sft_trainer.py
 *             SFTTrainer.__init__: _patch_chunked_ce_lm_head with
 *             _CHUNKED_LM_HEAD_CHUNK_SIZE = 256 (memory/loss.c); no
 *             prepare_model_for_kbit_training; for a quantized model every trainable
 *             parameter is cast to bfloat16 (the adapters); embeddings, norms and head stay in
 *             the load dtype (fp32 by default, bf16 with --precision bf16).
 *  trl 1.6    (v1.6.0) the same, but loss_type None is "nll" (it warns the default becomes
 *             "chunked_nll" in 1.7): transformers' loss over the whole logits.
 *  accelerate 1.14: a bare loop: the model as from_pretrained loads it (transformers 5: bf16),
 *             Accelerator(mixed_precision="bf16") autocast, torch.optim.AdamW (foreach).
 *  axolotl 0.18.0: utils/schemas/config.py bf16 -> torch_dtype bf16 (loaders/model.py): a full
 *             fine-tune holds bf16 parameters; gradient_checkpointing off unless the YAML sets
 *             it; QLoRA without peft's fp32 casts (convert_embedding_modules_dtype casts back).
 *  llama-factory 0.9.5: model/adapter.py init_adapter: cast_trainable_params_to_fp32 (not
 *             pure_bf16, not ZeRO-3): the base loads in the compute dtype (bf16) and every
 *             trainable parameter is upcast to fp32 (full: fp32 parameters under autocast);
 *             hparams/model_args.py disable_gradient_checkpointing=False: checkpointing on
 *             (model/model_utils/checkpointing.py prepare_model_for_training).
 *  unsloth 2026.8.19: HF Trainer + peft with use_gradient_checkpointing="unsloth";
 *             models/llama.py CausalLM_fast_forward calls unsloth_fused_ce_loss (unsloth-zoo
 *             fused_losses/cross_entropy_loss.py, memory/loss.c); one GPU per process.
 *  torchtune 0.7 (main, version.txt 0.7.0; no 0.7 tag): on several GPUs
 *             recipes/full_finetune_distributed.py reads cfg.get("optimizer_in_bwd", False)
 *             and llama3_1/8B_full.yaml sets torch.optim.AdamW with fused: True (dist_recipe:
 *             full gradients and fused AdamW); on one,
 *             recipes/full_finetune_single_device.py (optimizer_in_bwd: the step runs in
 *             each parameter's post-accumulate-grad hook, no full gradient set;
 *             cfg.get("enable_activation_checkpointing", False): off unless the config says,
 *             the shipped configs say True), configs llama3_1/8B_full_single_device.yaml
 *             (bitsandbytes.optim.PagedAdamW8bit, optimizer_in_bwd: True) and
 *             qwen3/8B_full_single_device.yaml (PagedAdamW); the model in cfg.dtype (bf16, no
 *             autocast); loss modules/loss LinearCrossEntropyLoss (chunked, fp32 log-softmax
 *             per trained token); FSDP2 fully_shard over the ranks; QLoRA through torchao's
 *             to_nf4 (block 64, its scalers quantized in blocks of 256: nf4-dq's bytes).
 *  torchtitan main (b5bcd76, 2026-08-21; 0.2.2 where it differs: the loss, no LoRA):
 *             config/configs.py mixed_precision_param="bfloat16",
 *             mixed_precision_reduce="float32" (FSDP2 MixedPrecisionPolicy over fp32 sharded
 *             parameters: fp32 master shards, gradients and AdamW states, bf16 all-gathered
 *             blocks; no autocast), distributed/activation_checkpoint.py (per-op selective
 *             checkpointing by default).  On main (b5bcd76): config/configs.py
 *             ParallelismConfig.enable_sequence_parallel = True, models/llama3/sharding.py
 *             (SequenceParallel norms, wo / w2 reduce-scatter to the sequence shard:
 *             memory/titan.c), components/loss.py _LossParallelCrossEntropy (vocab-parallel
 *             loss), components/quantization/float8.py (rowwise recipes; _scaled_mm is not
 *             on the op-SAC save list), components/lora.py LoRAConverter (rank 8, alpha 16,
 *             no dropout; LoRALinear freezes the base, which stays in the fp32 shards, and
 *             adds lora_a / lora_b Linears that run on the input as it comes: no cast copy),
 *             distributed/pipeline_parallel.py (layers split by count; looped schedules two
 *             chunks a rank: plan_even.c), distributed/fsdp.py (no reshard after forward under
 *             PP), distributed/tensor_parallel.py (async TP over symmetric memory),
 *             models/llama3/config_registry.py (llama3_8b / 70b / 405b run ChunkedLossWrapper
 *             of 8 chunks over the vocab-parallel loss).  0.2.2: components/loss.py
 *             cross_entropy_loss over the whole logits (pred.float()), no LoRA.  0.2.0
 *             (29624e37f): as 0.2.2, but train.py Trainer.train_step calls pp_schedule.step
 *             with its outputs returned (return_outputs=False from e5ef99a, v0.2.1): the
 *             last stage keeps every micro-batch's logits (memory/titan.h).
 *  lit-gpt 0.5.13: litgpt finetune/lora.py: FSDPStrategy when devices > 1,
 *             chunked_cross_entropy (utils.py) for the loss; Lightning's bf16-mixed keeps
 *             fp32 parameters (fabric/plugins/precision/amp.py MixedPrecision); its FSDP LoRA
 *             keeps a whole weight copy per rank (measured-dev rows 44-47).  QLoRA
 *             (finetune/lora.py main with --quantize bnb.*): it warns unless bitsandbytes is
 *             0.42.0, whose MatMul4Bit.forward keeps its input (ctx.tensors = (A, B));
 *             after fabric.setup_module it swaps model.transformer.wte for a
 *             bitsandbytes StableEmbedding: the old embedding stays referenced by
 *             main()'s old_embedding for the whole run, and the new one is trainable
 *             (created after mark_only_lora_as_trainable) but outside the optimizer (made
 *             after instantiate_bnb_optimizer), so its bf16 gradient is never freed.
 *             Lightning 2.6 fabric/plugins/precision/bitsandbytes.py _Linear4bit quantizes
 *             each weight as it is created or loaded (quantize_, _quantize_on_load_hook):
 *             no whole-model 16-bit copy at load.
 *  nemo, megatron: Megatron-Core optimizer/distrib_optimizer.py (bf16 parameters; fp32 main
 *             parameters and Adam states sharded over DP), distributed/param_and_grad_buffer.py
 *             (the main_grad buffer, allocated once: alive through forward and backward;
 *             fp32 under Megatron-LM's bf16 default, arguments.py
 *             accumulate_allreduce_grads_in_fp32, and Megatron-Bridge's ddp default
 *             grad_reduce_in_fp32=True; --grad-reduce-dtype bf16 as the Bridge DeepSeek /
 *             Gemma-2 recipes set it), TE / apex FusedAdam; TP, PP (1F1B), EP and CP in
 *             parallel_state.py; activations per layer as theoretical_memory_usage.py counts
 *             them (Megatron-LM core_v0.19.0, 5be9626);
 *             the loss tensor_parallel/cross_entropy.py VocabParallelCrossEntropy, or with
 *             cross_entropy_loss_fusion (Megatron-Bridge models/gpt_provider.py: True)
 *             fusions/fused_cross_entropy.py, which saves the same fp32 exp_logits.  The rows differ by their defaults:
 *             Megatron-LM's arguments.py leaves --use-distributed-optimizer and
 *             --sequence-parallel off (megatron: ZeRO-0 unless --zero 1); NeMo 2 and
 *             Megatron-Bridge recipes turn both on (Bridge recipes/llama/h100/llama3.py:
 *             cfg.model.sequence_parallel = True with TP > 1, cfg.ddp.use_distributed_optimizer
 *             = True; Megatron-Bridge v0.6.0, 51885cf).
 *  DDP        transformers / accelerate / lit-gpt data parallel without ZeRO is torch DDP
 *             with gradient_as_bucket_view=False (accelerate 1.15 utils/dataclasses.py
 *             DistributedDataParallelKwargs; Lightning DDPStrategy): its buckets hold a
 *             second copy of the gradients.
 *  deepspeed  runtime/bf16_optimizer.py and zero/stage_1_and_2.py (bf16 parameters and
 *             gradients; fp32 master weights with the Adam states, partitioned from ZeRO-1:
 *             the ZeRO paper's 2 + 2 + 12 bytes), ops/adam/fused_adam.py, pipe/engine.py (1F1B);
 *             stage_1_and_2.py step (the gradient partition converted to fp32) and
 *             backward_prologue (reduce_bucket_size 5e8 elements, zero/config.py), stage3.py
 *             sub_group_size 1e9 (DeepSpeed v0.19.5).
 *  vllm       vLLM main as stored (the 0.27 series; the same from 0.21): config/cache.py
 *             CacheConfig.gpu_memory_utilization = 0.92 (0.9 up to 0.20, the vllm@0.20
 *             row); v1/worker/gpu_worker.py determine_available_memory: the budget is
 *             utilization x the card's total, the baseline taken after the CUDA context
 *             (utils/mem_utils.py memory_profiling), and the weights, the profile run's torch
 *             peak (gpu_model_runner.py profile_run: a dummy forward of
 *             max_num_batched_tokens, then _dummy_sampler_run over max_num_seqs rows of
 *             logits: the v2 runner's (v1/worker/gpu/model_runner.py, every dense model
 *             from 0.25; config/vllm.py use_v2_model_runner) holds them and their fp32 copy,
 *             the v1 runner's (MoE, hybrid) its top-k / top-p sort;
 *             vllm/engine/arg_utils.py EngineArgs.get_batch_defaults, 8192 tokens
 *             and 1024 sequences for the API server on cards of 70 GiB and more other than
 *             A100, else 2048 and 256) and, from 0.21, profile_cudagraph_memory's estimate
 *             come off it; the rest is KV cache, refused when not positive or short of one
 *             max_model_len sequence (v1/core/kv_cache_utils.py
 *             _check_enough_kv_cache_memory).  memory/serve_engine.c counts each term.
 *             Sparse-MLA models (DeepSeek-V3.2) keep the fp8_ds_mla cache
 *             (models/config.py DeepseekV32ForCausalLM.verify_and_update_config).
 *  sglang     main as stored (0.5 series): srt/arg_groups/memory_hook.py
 *             handle_gpu_memory_settings: chunked_prefill_size and the decode graphs' max_bs by
 *             card memory and TP, reserved = 512 MB + 1.5 MB x max(chunked_prefill_size, 2048)
 *             + 1 GB x tp x pp / 8 + reserve_for_graph_mb (2 MB x decode max_bs, 8 MB per
 *             prefill graph size or 1.5 GB under MLA; model_executor/cuda_graph_config.py:
 *             prefill graphs on by default on CUDA), at least 10 GB on cards over 60 GB;
 *             mem_fraction_static = (card - reserved) / card for the weights and the KV pool;
 *             activations live in the reserve.  memory/serve_engine.c fg_sglang_budget.
 */
/* HF Trainer + peft underneath (transformers, trl, accelerate, axolotl, llama-factory) */
#define TRAIN_HF                                                                              \
    .layouts = FG_LAY_PP | FG_LAY_ZERO, .naive_pp = true, .trains = true, .serves = true,     \
    .qlora = true, .master = FG_MASTER_PARAMS, .ddp_buckets = true
/* the LoRA base stays in the dtype it was loaded in (bf16) under Trainer's bf16 autocast */
#define HF_BASE .lora_base_torch_dtype = true, .lora_autocast = true
/* Read from stored single files: these snapshots are over the fetch limit, so each row
 * carries its release's date and the stored record that gives it. */
#define TF_READ                                                                               \
    .repo = "huggingface/transformers", .file = "src/transformers/training_args.py",         \
    .commit = "fd798335c"
#define VLLM_READ .repo = "vllm-project/vllm", .file = "vllm/config/cache.py", .commit = "c1d864211"

/*
 * The switches and trainers of each row (fg_framework.switches, .trainers), read in the
 * releases the rows name:
 *  HF Trainer   training_args.py gradient_checkpointing, gradient_accumulation_steps,
 *               use_liger_kernel (Liger fused linear cross-entropy), optim adamw_bnb_8bit /
 *               paged_adamw_8bit; accelerate FullyShardedDataParallelPlugin cpu_offload
 *               (parameters, with FSDP full shard) and DeepSpeed offload_optimizer /
 *               offload_param; serving through generate: fewer sequences, shorter ones
 *  TRL          every trainer of trainer.c (dpo, orpo, kto, grpo, rloo, ppo, reward);
 *               DPOConfig / KTOConfig precompute_ref_log_probs; GRPOConfig use_vllm,
 *               vllm_mode colocate (vllm_gpu_memory_utilization) or server (trl vllm-serve);
 *               SFTConfig activation_offloading
 *  accelerate   an own loop: the switches above, no trainer of TRL's (--framework trl)
 *  axolotl      rl: dpo | orpo | kto | grpo (TRL's, vLLM server or colocate), reward_model;
 *               activation_offloading, liger plugin, optimizer adamw_bnb_8bit
 *  LLaMA-Factory stage rm | ppo | dpo | kto (pref_loss orpo), enable_liger_kernel,
 *               optim adamw_bnb_8bit, deepspeed offload configs
 *  unsloth      single GPU: its checkpointing, optim adamw_8bit, TRL's DPO / ORPO / KTO /
 *               GRPO (fast_inference: vLLM colocated)
 *  torchtune    enable_activation_checkpointing, gradient_accumulation_steps, optimizer
 *               bitsandbytes PagedAdamW8bit / AdamW8bit, fsdp_cpu_offload (parameters,
 *               gradients and optimizer), enable_activation_offloading; recipes
 *               lora_dpo / full_dpo_distributed, ppo_full_finetune_single_device,
 *               dev/grpo_full_finetune_distributed
 *  torchtitan   activation_checkpoint.mode, training.gradient_accumulation_steps (local batch
 *               size), training.enable_cpu_offload (FSDP2 CPUOffloadPolicy); pretraining and
 *               SFT only
 *  lit-gpt      FSDPStrategy(activation_checkpointing_policy, cpu_offload=True),
 *               --train.micro_batch_size, --optimizer bitsandbytes.optim.PagedAdamW /
 *               AdamW8bit; `litgpt serve`
 *  NeMo 2       recompute_granularity, micro / global batch, optimizer_cpu_offload (Megatron-Core
 *               HybridDeviceOptimizer); NeMo-RL dpo, grpo and reward-model training
 *  Megatron     --recompute-granularity, --micro-batch-size, --optimizer-cpu-offload
 *  DeepSpeed    activation_checkpointing, gradient_accumulation_steps, zero_optimization
 *               offload_optimizer / offload_param; PipelineEngine with ZeRO stage 0 or 1 only
 *               (runtime/pipe/engine.py asserts zero_optimization_stage() < 2); DeepSpeed-Chat
 *               reward model and PPO (step 2 and 3)
 *  vLLM, SGLang --gpu-memory-utilization / --mem-fraction-static, --kv-cache-dtype fp8,
 *               --max-num-seqs, --max-model-len
 */
#define SW_HF                                                                                 \
    (FG_SW_GRAD_CKPT | FG_SW_ACCUM | FG_SW_LIGER | FG_SW_ADAM8 | FG_SW_PAGED |                \
     FG_SW_OFFLOAD_OPT | FG_SW_OFFLOAD_PARAMS | FG_SW_SEQS | FG_SW_MAX_LEN)
#define SW_TRL (SW_HF | FG_SW_VLLM | FG_SW_REF_PRECOMPUTE)
#define SW_ENGINE (FG_SW_SEQS | FG_SW_MAX_LEN | FG_SW_KV_FP8 | FG_SW_GPU_UTIL)
#define TRAINS_TRL                                                                            \
    (FG_TRAINS(FG_TRAINER_DPO) | FG_TRAINS(FG_TRAINER_ORPO) | FG_TRAINS(FG_TRAINER_KTO) |     \
     FG_TRAINS(FG_TRAINER_GRPO) | FG_TRAINS(FG_TRAINER_RLOO) | FG_TRAINS(FG_TRAINER_PPO) |    \
     FG_TRAINS(FG_TRAINER_REWARD))

/* What the transformers releases' rows share: HF Trainer + peft, TRL's trainers on it. */
#define HF_TRAINER                                                                            \
    .aliases = "hf,trainer,peft", .switches = SW_TRL, .trainers = TRAINS_TRL,                 \
    .label = "HF Trainer + peft", TRAIN_HF, HF_BASE, .kbit_prepared = true
/* What the TRL releases' rows share: SFTTrainer over HF Trainer, fp32 load and bf16
 * autocast, checkpointing on; LoRA on an fp32 base, QLoRA adapters in bf16. */
#define TRL_SFT                                                                               \
    .aliases = "", .switches = SW_TRL | FG_SW_ACT_OFFLOAD, .trainers = TRAINS_TRL, TRAIN_HF,  \
    .lora_fp32_base = true, .qlora_adapters_bf16 = true, .full_precision = FG_PREC_BF16_MIXED, \
    .optimizer = FG_OPT_ADAMW_FUSED, .grad_ckpt = true

static const struct fg_framework table[] = {
    {.name = "transformers", .version = "5", HF_TRAINER,
     .full_precision = FG_PREC_BF16, .optimizer = FG_OPT_ADAMW_FUSED,
     .keeps = "dtype=auto (bf16 checkpoint: 2+2+4 B/param full), adamw_torch_fused, no "
              "checkpointing; QLoRA via prepare_model_for_kbit_training (fp32 rest)",
     .source = "transformers 5 modeling_utils.py from_pretrained dtype=auto; training_args.py "
               "default_optim (stored file, no snapshot); peft 0.20.0 utils/other.py "
               "prepare_model_for_kbit_training",
     TF_READ, .date = "2026-01-26",
     .dated = "v5.0.0 released by then: embeddings-benchmark/mteb#4003 links its release page"},
    {.name = "transformers", .version = "4.57", HF_TRAINER,
     .full_precision = FG_PREC_BF16_MIXED, .optimizer = FG_OPT_ADAMW,
     .keeps = "fp32 load + bf16 autocast (4+4+8 B/param and bf16 copies), adamw_torch on torch "
              "< 2.8 (foreach temporary); the default when a job names no framework",
     .source = "transformers 4.57 modeling_utils.py from_pretrained (fp32 unless torch_dtype); "
               "training_args.py default_optim (adamw_torch below torch 2.8; stored file)",
     TF_READ, .date = "2025-10-29",
     .dated = "4.57 released by then: huggingface/optimum-neuron#1016 syncs with 4.57.1"},
    {.name = "trl", .version = "1.9", .label = "TRL SFTTrainer + peft", TRL_SFT,
     .loss = FG_LOSS_CHUNKED_NLL,
     .keeps = "fp32 load unless --precision bf16, bf16 autocast, checkpointing on, loss_type "
              "chunked_nll (256-token checkpointed chunks); QLoRA: no kbit prep, adapters bf16",
     .source = "trl 1.9.0 trainer/utils.py create_model_from_path; sft_config.py SFTConfig "
               "(loss_type chunked_nll from 1.7); sft_trainer.py _chunked_cross_entropy_loss",
     .repo = "huggingface/trl", .file = "trl/trainer/sft_trainer.py", .commit = "35def3ee0",
     .date = "2026-07-21"},
    {.name = "trl", .version = "1.6", .label = "TRL 1.6 SFTTrainer + peft", TRL_SFT,
     .keeps = "as 1.9, but loss_type nll: transformers' loss over the whole fp32 logits",
     .source = "trl 1.6.0 sft_config.py SFTConfig loss_type (None: nll, chunked_nll from 1.7)",
     .repo = "huggingface/trl", .file = "trl/trainer/sft_config.py", .commit = "0dac44054",
     .date = "2026-06-11"},
    /* accelerate >= 1.10 ParallelismConfig (parallelism_config.py): TP and CP over FSDP2
     * beside data parallel, set in the config's parallelism_config */
    {.name = "accelerate", .version = "1.14", .aliases = "", .label = "accelerate (own loop)",
     .switches = SW_HF, .trainers = 0,
     .layouts = FG_LAY_TP | FG_LAY_CP | FG_LAY_PP | FG_LAY_ZERO, .naive_pp = true,
     .trains = true, .serves = true, .qlora = true, .master = FG_MASTER_PARAMS,
     .ddp_buckets = true, HF_BASE, .full_precision = FG_PREC_BF16, .optimizer = FG_OPT_ADAMW,
     .keeps = "the model as loaded (bf16), bf16 autocast, torch AdamW foreach, no checkpointing",
     .source = "accelerate 1.14.0 accelerator.py Accelerator(mixed_precision); torch "
               "optim/adamw.py",
     .repo = "huggingface/accelerate", .file = "src/accelerate/accelerator.py",
     .commit = "beb0672a", .date = "2026-06-11"},
    /* axolotl also runs TP and CP (tensor_parallel_size, context_parallel_size) under FSDP2
     * through accelerate's ParallelismConfig (loaders/model.py parallelism_config,
     * monkeypatch/accelerate/parallelism_config.py; examples/distributed-parallel/) */
    {.name = "axolotl", .version = "0.18", .aliases = "", .label = "axolotl (HF Trainer + peft)",
     .switches = SW_TRL | FG_SW_ACT_OFFLOAD,
     .trainers = FG_TRAINS(FG_TRAINER_DPO) | FG_TRAINS(FG_TRAINER_ORPO) |
                 FG_TRAINS(FG_TRAINER_KTO) | FG_TRAINS(FG_TRAINER_GRPO) |
                 FG_TRAINS(FG_TRAINER_REWARD),
     .layouts = FG_LAY_PP | FG_LAY_ZERO | FG_LAY_TP | FG_LAY_CP, .naive_pp = true,
     .trains = true, .serves = true, .qlora = true, .master = FG_MASTER_PARAMS,
     .ddp_buckets = true, HF_BASE, .full_precision = FG_PREC_BF16, .optimizer = FG_OPT_ADAMW_FUSED,
     .keeps = "bf16: true loads bf16 (2+2+4 B/param full), checkpointing as the YAML says; "
              "QLoRA without peft's fp32 casts",
     .source = "axolotl 0.18.0 utils/schemas/config.py bf16, loaders/model.py torch_dtype; "
               "plugins CutCrossEntropyPlugin / LigerPlugin when the YAML lists them",
     .repo = "axolotl-ai-cloud/axolotl", .file = "src/axolotl/loaders/model.py",
     .commit = "2f5cb9da6", .date = "2026-07-17"},
    {.name = "llama-factory", .version = "0.9.5", .aliases = "llamafactory,llama_factory",
     .switches = SW_HF,
     .trainers = FG_TRAINS(FG_TRAINER_DPO) | FG_TRAINS(FG_TRAINER_ORPO) |
                 FG_TRAINS(FG_TRAINER_KTO) | FG_TRAINS(FG_TRAINER_PPO) |
                 FG_TRAINS(FG_TRAINER_REWARD),
     .label = "LLaMA-Factory (HF Trainer + peft)", TRAIN_HF, HF_BASE,
     .full_precision = FG_PREC_BF16_MIXED, .optimizer = FG_OPT_ADAMW_FUSED, .grad_ckpt = true,
     .keeps = "bf16 load, trainable params upcast to fp32, checkpointing on",
     .source = "llamafactory 0.9.5 model/adapter.py init_adapter cast_trainable_params_to_fp32; "
               "hparams/model_args.py disable_gradient_checkpointing",
     .repo = "hiyouga/LLaMA-Factory", .file = "src/llamafactory/model/adapter.py",
     .commit = "7af909522", .date = "2026-05-30"},
    {.name = "unsloth", .version = "2026.8", .aliases = "", .label = "unsloth", .layouts = 0,
     .switches = FG_SW_GRAD_CKPT | FG_SW_ACCUM | FG_SW_ADAM8 | FG_SW_PAGED | FG_SW_VLLM |
                 FG_SW_REF_PRECOMPUTE,
     .trainers = FG_TRAINS(FG_TRAINER_DPO) | FG_TRAINS(FG_TRAINER_ORPO) |
                 FG_TRAINS(FG_TRAINER_KTO) | FG_TRAINS(FG_TRAINER_GRPO),
     .trains = true, .qlora = true, .lora_base_torch_dtype = true,
     .full_precision = FG_PREC_BF16_MIXED, .master = FG_MASTER_PARAMS, .optimizer = FG_OPT_ADAMW,
     .chunked_ce = true, .ce_kept = FG_CE_LSE, .grad_ckpt = true, .loss = FG_LOSS_UNSLOTH,
     .keeps = "HF Trainer + peft, unsloth checkpointing, unsloth_fused_ce_loss (the head "
              "input's gradient in the forward, chunks of at most 4 GiB of fp32 logits)",
     .source = "unsloth 2026.8.19 models/llama.py unsloth_fused_ce_loss; unsloth-zoo 2026.8.13 "
               "fused_losses/cross_entropy_loss.py UnslothFusedLoss",
     .repo = "unslothai/unsloth", .file = "unsloth/models/llama.py", .commit = "015bdef0d9",
     .date = "2026-08-22"},
    {.name = "torchtune", .version = "0.7", .aliases = "", .label = "torchtune",
     .switches = FG_SW_GRAD_CKPT | FG_SW_ACCUM | FG_SW_ADAM8 | FG_SW_PAGED |
                 FG_SW_OFFLOAD_PARAMS | FG_SW_ACT_OFFLOAD,
     .trainers = FG_TRAINS(FG_TRAINER_DPO) | FG_TRAINS(FG_TRAINER_PPO) |
                 FG_TRAINS(FG_TRAINER_GRPO),
     .layouts = FG_LAY_ZERO, .trains = true, .qlora = true, .lora_base_torch_dtype = true,
     .full_precision = FG_PREC_BF16, .master = FG_MASTER_PARAMS, .optimizer = FG_OPT_ADAMW_FUSED,
     .full_optimizer_set = true, .full_optimizer = FG_OPT_PAGED_ADAMW_8BIT,
     .optimizer_in_bwd = true, .dist_recipe = true, .chunked_ce = true,
     .loss = FG_LOSS_LINEAR_CE, .dp_zero = 3,
     .lora_base_dtype = true,
     .no_dropout = true, .qlora_quant = FG_QUANT_NF4_DQ,
     .keeps = "bf16 model, no autocast; full on one GPU: optimizer_in_bwd + PagedAdamW8bit (no "
              "gradient set), on several: full gradients + fused AdamW; LinearCrossEntropyLoss",
     .source = "torchtune 0.7.0 recipes/full_finetune_single_device.py, "
               "full_finetune_distributed.py (optimizer_in_bwd default False), configs "
               "llama3_1/8B_full_single_device.yaml, 8B_full.yaml; LinearCrossEntropyLoss",
     .repo = "pytorch/torchtune", .file = "recipes/full_finetune_distributed.py",
     .commit = "bd2a0fc7c", .date = "2026-04-23"},
    /* torchtitan's rows differ in the loss the llama3 configs run and in LoRA */
#define TITAN_ROW                                                                              \
    .name = "torchtitan", .aliases = "titan", .label = "torchtitan",                           \
    .switches = FG_SW_GRAD_CKPT | FG_SW_ACCUM | FG_SW_OFFLOAD_PARAMS, .trainers = 0,           \
    .layouts = FG_LAY_TP | FG_LAY_PP | FG_LAY_CP | FG_LAY_ZERO, .trains = true,                \
    .full_precision = FG_PREC_BF16_MIXED, .master = FG_MASTER_PARAMS,                          \
    .optimizer = FG_OPT_ADAMW_FUSED, .fsdp_mixed = true, .grad_ckpt = true,                    \
    .ac_selective = true, .float8 = true, .dp_zero = 3, .sp = true, .pp_even = true,           \
    .no_dropout = true, .lora_base_dtype = true, .repo = "pytorch/torchtitan"
    {TITAN_ROW, .version = "main", .loss = FG_LOSS_CHUNKED_WRAPPER,
     .keeps = "FSDP2: fp32 sharded params/grads/AdamW, bf16 gathered blocks, no autocast "
              "cache; op SAC; TP with sequence parallel; ChunkedLossWrapper; PP split by count "
              "under torch pipelining's schedules, the stage kept gathered; async TP; LoRA on "
              "the fp32 shards",
     .source = "torchtitan main models/llama3/config_registry.py (ChunkedLossWrapper, 8 "
               "chunks); config/configs.py ParallelismConfig; models/llama3/sharding.py; "
               "distributed/pipeline_parallel.py, fsdp.py, activation_checkpoint.py; "
               "components/lora.py",
     .file = "torchtitan/models/llama3/config_registry.py", .commit = "b5bcd76",
     .date = "2026-08-21"},
    {TITAN_ROW, .version = "0.2.2", .full_only = true,
     .keeps = "as main, but the loss over the whole fp32 logits (vocab-parallel) and no LoRA",
     .source = "torchtitan 0.2.2 components/loss.py cross_entropy_loss (pred.float(), "
               "loss_parallel); config/job_config.py; no components/lora.py",
     .file = "torchtitan/components/loss.py", .commit = "73a0e6979", .date = "2026-02-20"},
    {TITAN_ROW, .version = "0.2.0", .full_only = true, .pp_keeps_outputs = true,
     .keeps = "as 0.2.2, but the PP step returns its outputs: the last stage keeps every "
              "micro-batch's logits to the step's end (also 9dec370, December 2024)",
     .source = "torchtitan 0.2.0 train.py Trainer.train_step (pp_schedule.step without "
               "return_outputs=False, added by e5ef99a in 0.2.1); components/loss.py "
               "cross_entropy_loss as 0.2.2's",
     .file = "torchtitan/train.py", .commit = "29624e37f", .date = "2025-10-17"},
#undef TITAN_ROW
    {.name = "lit-gpt", .version = "0.5.13", .aliases = "litgpt,lightning",
     .switches = FG_SW_GRAD_CKPT | FG_SW_ACCUM | FG_SW_ADAM8 | FG_SW_PAGED |
                 FG_SW_OFFLOAD_PARAMS | FG_SW_SEQS | FG_SW_MAX_LEN,
     .trainers = 0,
     .label = "lit-gpt (Lightning Fabric)", .layouts = FG_LAY_ZERO, .trains = true,
     .serves = true, .qlora = true, .full_precision = FG_PREC_BF16_MIXED,
     .master = FG_MASTER_PARAMS, .optimizer = FG_OPT_ADAMW, .chunked_ce = true,
     .ce_kept = FG_CE_COMPUTE, .kv_expanded = true, .unsharded_copy = true, .dp_zero = 3,
     .lora_base_dtype = true, .lora_fused_qkv = true, .lora_dropout = 0.05f, .no_dropout = true,
     .bnb_keeps_input = true, .qlora_embed_swap = true, .qlora_head_4bit = true,
     .head_untied = true, .bnb_fp16_quant = true,
     .keeps = "bf16-mixed: fp32 params; chunked CE; FSDP LoRA whole copy; QLoRA: bnb 0.42 kept "
              "inputs, a second trainable embedding; its own lm_head; 4-bit from fp16",
     .ddp_buckets = true,
     .source = "litgpt 0.5.13 finetune/lora.py main, utils.py chunked_cross_entropy; Lightning "
               "2.6 bitsandbytes.py",
     .repo = "Lightning-AI/litgpt", .file = "litgpt/finetune/lora.py", .commit = "26857050",
     .date = "2026-06-29"},
    {.name = "nemo", .version = "2", .aliases = "nemo2,nemo-rl", .label = "NeMo (Megatron-Core)",
     .switches = FG_SW_GRAD_CKPT | FG_SW_ACCUM | FG_SW_OFFLOAD_OPT,
     .trainers = FG_TRAINS(FG_TRAINER_DPO) | FG_TRAINS(FG_TRAINER_GRPO) |
                 FG_TRAINS(FG_TRAINER_REWARD),
     .layouts = FG_LAY_TP | FG_LAY_PP | FG_LAY_EP | FG_LAY_CP | FG_LAY_ZERO, .trains = true,
     .lora_base_torch_dtype = true, .full_precision = FG_PREC_BF16,
     .master = FG_MASTER_OPTIMIZER, .main_grad_bytes = 4, .optimizer = FG_OPT_ADAMW_FUSED,
     .dp_zero = 1, .keeps = "bf16 params, fp32 main_grad, fp32 master + Adam in the distributed "
                            "optimizer; sequence parallel; TE activations (its recipes)",
     .grads_persist = true, .te_act = true, .sp = true, .loss = FG_LOSS_VOCAB_PARALLEL,
     .source = "Megatron-Bridge 0.6.0 recipes/llama/h100/llama3.py (sequence_parallel with TP, "
               "use_distributed_optimizer), models/gpt_provider.py cross_entropy_loss_fusion "
               "(fused vocab-parallel CE); megatron/core 0.19 optimizer/distrib_optimizer.py",
     .repo = "NVIDIA-NeMo/Megatron-Bridge", .file = "src/megatron/bridge/models/gpt_provider.py",
     .commit = "51885cf13", .date = "2026-08-19"},
    {.name = "megatron", .version = "0.19", .aliases = "megatron-lm,megatron-core,mcore",
     .switches = FG_SW_GRAD_CKPT | FG_SW_ACCUM | FG_SW_OFFLOAD_OPT, .trainers = 0,
     .label = "Megatron-LM/Megatron-Core",
     .layouts = FG_LAY_TP | FG_LAY_PP | FG_LAY_EP | FG_LAY_CP | FG_LAY_ZERO, .trains = true,
     .lora_base_torch_dtype = true, .full_precision = FG_PREC_BF16,
     .master = FG_MASTER_OPTIMIZER, .main_grad_bytes = 4, .optimizer = FG_OPT_ADAMW_FUSED,
     .dp_zero = 0, .keeps = "bf16 params, fp32 main_grad alive throughout, fp32 master + Adam "
              "(sharded over DP with --zero 1); TE activations",
     .grads_persist = true, .te_act = true, .loss = FG_LOSS_VOCAB_PARALLEL,
     .source = "megatron/core 0.19 optimizer/distrib_optimizer.py, param_and_grad_buffer.py, "
               "tensor_parallel/cross_entropy.py; Megatron-LM arguments.py, "
               "theoretical_memory_usage.py",
     .repo = "NVIDIA/Megatron-LM", .file = "megatron/core/tensor_parallel/cross_entropy.py",
     .commit = "5be9626709", .date = "2026-08-19"},
    {.name = "deepspeed", .version = "0.19", .aliases = "ds", .label = "DeepSpeed",
     .switches = FG_SW_GRAD_CKPT | FG_SW_ACCUM | FG_SW_OFFLOAD_OPT | FG_SW_OFFLOAD_PARAMS,
     .trainers = FG_TRAINS(FG_TRAINER_PPO) | FG_TRAINS(FG_TRAINER_REWARD), .pp_zero_max = 1,
     .layouts = FG_LAY_PP | FG_LAY_ZERO, .trains = true, .lora_base_torch_dtype = true,
     .full_precision = FG_PREC_BF16, .master = FG_MASTER_OPTIMIZER, .main_grad_bytes = 2,
     .optimizer = FG_OPT_ADAMW_FUSED,
     .keeps = "bf16 params and grads, fp32 master + Adam partitioned from ZeRO-1 (2+2+12)",
     .ds_buffers = true,
     .source = "deepspeed 0.19.5 runtime/bf16_optimizer.py, zero/stage_1_and_2.py, "
               "zero/config.py (reduce_bucket_size 5e8), pipe/engine.py",
     .repo = "deepspeedai/DeepSpeed", .file = "deepspeed/runtime/zero/config.py",
     .commit = "cf4430045", .date = "2026-08-09"},
    {.name = "vllm", .version = "0.27", .aliases = "", .label = "vLLM",
     .switches = SW_ENGINE,
     .layouts = FG_LAY_TP | FG_LAY_PP | FG_LAY_EP, .serves = true, .gpu_util = 0.92,
     .serve_budget = FG_SERVE_VLLM, .kv_ds_mla = true,
     .keeps = "gpu_memory_utilization 0.92 of the card: weights, profile run (forward at "
              "max_num_batched_tokens, sampler over max_num_seqs), CUDA graphs; the rest KV "
              "cache, refused below one max_model_len sequence",
     .source = "vllm 0.27 config/cache.py gpu_memory_utilization 0.92, gpu_worker.py "
               "determine_available_memory, gpu_model_runner.py profile_run, "
               "kv_cache_utils.py _check_enough_kv_cache_memory (stored files, no snapshot)",
     VLLM_READ, .date = "2026-08-11",
     .dated = "v0.27.0 released by then: vllm-project/vllm-metal#596 bumps vLLM to 0.27.0"},
    {.name = "vllm", .version = "0.20", .aliases = "", .label = "vLLM 0.20",
     .switches = SW_ENGINE,
     .layouts = FG_LAY_TP | FG_LAY_PP | FG_LAY_EP, .serves = true, .gpu_util = 0.9,
     .serve_budget = FG_SERVE_VLLM_020, .kv_ds_mla = true,
     .keeps = "gpu_memory_utilization 0.9 of the card",
     .source = "vllm 0.20 CacheConfig.gpu_memory_utilization 0.9, gpu_worker.py (stored files, "
               "no snapshot)",
     VLLM_READ, .date = "2026-04-29",
     .dated = "v0.20.0 released by then: apache/beam#38330 (dependabot) bumps vllm to 0.20.0"},
    {.name = "sglang", .version = "0.5", .aliases = "", .label = "SGLang",
     .switches = SW_ENGINE,
     .layouts = FG_LAY_TP | FG_LAY_PP | FG_LAY_EP, .serves = true, .gpu_util = 0.88,
     .serve_budget = FG_SERVE_SGLANG,
     .keeps = "mem_fraction_static from the card, TP and chunked prefill, less the decode and "
              "prefill (piecewise) CUDA graphs' reserve",
     .source = "sglang main as stored (0.5 series) srt/arg_groups/memory_hook.py "
               "handle_gpu_memory_settings, reserve_for_graph_mb; cuda_graph_config.py "
               "(stored files, no snapshot)",
     .repo = "sgl-project/sglang", .file = "python/sglang/srt/arg_groups/memory_hook.py",
     .commit = "031ed82d8", .date = "2026-09-17",
     .dated = "v0.5.19 released by then: llm-d/llm-d#2524 links its release page"},
};
#define N_ROWS (sizeof table / sizeof table[0])

static bool in_aliases(const char *aliases, const char *name)
{
    size_t n = strlen(name);
    for (const char *s = aliases; s && *s;) {
        size_t len = strcspn(s, ",");
        if (len == n && !strncasecmp(s, name, n))
            return true;
        s += len;
        if (*s == ',')
            s++;
    }
    return false;
}

static bool row_named(const struct fg_framework *f, const char *name, size_t n)
{
    if (strlen(f->name) == n && !strncasecmp(f->name, name, n))
        return true;
    char one[64];
    if (n >= sizeof one)
        return false;
    memcpy(one, name, n);
    one[n] = '\0';
    return in_aliases(f->aliases, one);
}

/* A release names a row when one is a whole dotted prefix of the other: "4" and "4.57.1"
 * both name row 4.57, "5.2" names row 5. */
static bool version_matches(const char *have, const char *want)
{
    size_t n = strlen(want), h = strlen(have);
    if (!n)
        return false;
    if (n <= h)
        return !strncasecmp(have, want, n) && (have[n] == '\0' || have[n] == '.');
    return !strncasecmp(have, want, h) && want[h] == '.';
}

const struct fg_framework *fg_framework_find(const char *name)
{
    if (!name || !*name)
        return NULL;
    const char *at = strchr(name, '@');
    size_t n = at ? (size_t)(at - name) : strlen(name);
    for (size_t i = 0; i < N_ROWS; i++)
        if (row_named(&table[i], name, n) && (!at || version_matches(table[i].version, at + 1)))
            return &table[i];
    return NULL;
}

bool fg_framework_is_newest(const struct fg_framework *f)
{
    return f == &table[0] || (f > &table[0] && f < &table[N_ROWS] && strcmp(f[-1].name, f->name));
}

int fg_framework_unknown(const char *name, const char *spelling, struct fg_err *err)
{
    char list[256] = "";
    const char *at = name ? strchr(name, '@') : NULL;
    size_t n = at ? (size_t)(at - name) : (name ? strlen(name) : 0), off = 0;
    const char *sp = spelling ? spelling : "--";
    for (size_t i = 0; at && i < N_ROWS && off < sizeof list; i++) {
        if (!row_named(&table[i], name, n))
            continue;
        int w = snprintf(list + off, sizeof list - off, "%s%s@%s", off ? ", " : "",
                         table[i].name, table[i].version);
        off += w > 0 ? (size_t)w : 0;
    }
    if (at && list[0])
        return fg_err_set(err, FG_E_INVAL, "%sframework %.60s: no such release in the table; "
                          "known: %s (no @VERSION: the newest)", sp, name, list);
    fg_framework_names(list, sizeof list);
    return fg_err_set(err, FG_E_INVAL, "%sframework: framework '%.40s' is not one of %s", sp,
                      name ? name : "", list);
}

/* A job that names no framework is judged as transformers 4.57 on torch < 2.8 ran it (fp32
 * load, autocast, foreach AdamW): it counts at least what a transformers 5 job holds, so a
 * site that does not say is never under-estimated, and the figures of jobs from before the
 * rows were split stay as they were.  --framework transformers (or hf) is the newest. */
const struct fg_framework *fg_framework_default(void)
{
    return &table[1];
}

const struct fg_framework *fg_framework_at(size_t i)
{
    return i < N_ROWS ? &table[i] : NULL;
}

void fg_framework_names(char *buf, size_t cap)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < N_ROWS && off < cap; i++) {
        if (!fg_framework_is_newest(&table[i]))
            continue;
        int w = snprintf(buf + off, cap - off, "%s%s", off ? "|" : "", table[i].name);
        if (w < 0)
            break;
        off += (size_t)w;
    }
}

void fg_framework_who_runs(unsigned need, char *buf, size_t cap)
{
    size_t off = 0;
    buf[0] = '\0';
    /* every training framework whose layouts include all of need, by name: a user looks
     * for their own (axolotl and llama-factory are listed though they run as hf does) */
    for (size_t i = 0; i < N_ROWS && off < cap; i++) {
        if ((table[i].layouts & need) != need || !table[i].trains ||
            !fg_framework_is_newest(&table[i]))
            continue;
        int w = snprintf(buf + off, cap - off, "%s%s", off ? ", " : "", table[i].name);
        if (w < 0)
            break;
        off += (size_t)w;
    }
}

unsigned fg_framework_needs(uint32_t tp, uint32_t pp, uint32_t ep, uint32_t cp, uint32_t zero)
{
    return (tp > 1 ? FG_LAY_TP : 0) | (pp > 1 ? FG_LAY_PP : 0) | (ep > 1 ? FG_LAY_EP : 0) |
           (cp > 1 ? FG_LAY_CP : 0) | (zero > 0 ? FG_LAY_ZERO : 0);
}

/* ---- the remedies' table: switches, trainers, runnable layouts -------------------------- */

const char *fg_switch_name(enum fg_switch s)
{
    static const char *const names[FG_SWITCH_COUNT] = {
        "gradient checkpointing", "micro-batch with accumulation", "fused loss (Liger)",
        "ZeRO-3 / FSDP", "8-bit optimizer", "paged optimizer", "optimizer offload",
        "parameter offload", "activation offload", "precomputed reference",
        "vLLM share", "vLLM server", "QLoRA", "engine share of the card", "fp8 KV cache",
        "fewer sequences", "shorter max_model_len",
    };
    return (unsigned)s < FG_SWITCH_COUNT ? names[s] : "?";
}

bool fg_framework_has_trainer(const struct fg_framework *f, unsigned trainer)
{
    if (!f || !f->trains)
        return false;
    return trainer == FG_TRAINER_SFT || (f->trainers & FG_TRAINS(trainer));
}

size_t fg_framework_switch_list(const struct fg_framework *f, unsigned mode, unsigned trainer,
                                enum fg_switch *out, size_t cap)
{
    size_t n = 0;
#define PUT(sw)                                                                               \
    do {                                                                                      \
        if (n < cap)                                                                          \
            out[n] = (sw);                                                                    \
        n++;                                                                                  \
    } while (0)
    if (!f)
        return 0;
    unsigned sw = f->switches;
    if (mode == FG_MODE_SERVE) {
        if (!f->serves)
            return 0;
        if ((sw & FG_SW_GPU_UTIL) && f->gpu_util > 0)
            PUT(FG_SWITCH_GPU_UTIL);
        if (sw & FG_SW_KV_FP8)
            PUT(FG_SWITCH_KV_FP8);
        if (sw & FG_SW_SEQS)
            PUT(FG_SWITCH_SEQS);
        if (sw & FG_SW_MAX_LEN)
            PUT(FG_SWITCH_MAX_LEN);
        return n;
    }
    if (!fg_framework_has_trainer(f, trainer) || (mode == FG_MODE_QLORA && !f->qlora) ||
        ((mode == FG_MODE_LORA || mode == FG_MODE_QLORA) && f->full_only))
        return 0;
    const struct fg_trainer_row *t = fg_trainer_row((enum fg_trainer)trainer);
    if (sw & FG_SW_GRAD_CKPT)
        PUT(FG_SWITCH_GRAD_CKPT);
    if (sw & FG_SW_ACCUM)
        PUT(FG_SWITCH_ACCUM);
    if ((sw & FG_SW_LIGER) && !t->score_head)
        PUT(FG_SWITCH_LIGER);
    if (f->layouts & FG_LAY_ZERO)
        PUT(FG_SWITCH_ZERO3);
    if (sw & FG_SW_ADAM8)
        PUT(FG_SWITCH_ADAM8);
    else if (sw & FG_SW_PAGED) /* the same bytes on the GPU (job.h): one of the two */
        PUT(FG_SWITCH_PAGED);
    if ((sw & FG_SW_OFFLOAD_OPT) && (f->layouts & FG_LAY_ZERO))
        PUT(FG_SWITCH_OFFLOAD_OPT);
    if ((sw & FG_SW_OFFLOAD_PARAMS) && (f->layouts & FG_LAY_ZERO))
        PUT(FG_SWITCH_OFFLOAD_PARAMS);
    if ((sw & FG_SW_ACT_OFFLOAD) && trainer == FG_TRAINER_SFT)
        PUT(FG_SWITCH_ACT_OFFLOAD);
    if ((sw & FG_SW_REF_PRECOMPUTE) &&
        (trainer == FG_TRAINER_DPO || trainer == FG_TRAINER_KTO))
        PUT(FG_SWITCH_REF_PRECOMPUTE);
    if ((sw & FG_SW_VLLM) && t->generates && !t->value_model) {
        PUT(FG_SWITCH_VLLM_UTIL);
        PUT(FG_SWITCH_VLLM_SERVER);
    }
    if (mode == FG_MODE_LORA && f->qlora)
        PUT(FG_SWITCH_QLORA);
#undef PUT
    return n;
}

bool fg_framework_runs(const struct fg_framework *f, const struct fg_run_shape *s, char *why,
                       size_t cap)
{
    uint32_t tp = s->tp ? s->tp : 1, pp = s->pp ? s->pp : 1, ep = s->ep ? s->ep : 1;
    uint32_t cp = s->cp ? s->cp : 1, dp = s->dp ? s->dp : 1, nodes = s->nodes ? s->nodes : 1;
    uint32_t gpus = tp * pp * cp * dp;
    uint32_t per_node = s->per_node ? s->per_node : gpus;
    char tmp[8];
    if (!why) {
        why = tmp;
        cap = sizeof tmp;
    }
#define NO(...)                                                                               \
    do {                                                                                      \
        snprintf(why, cap, __VA_ARGS__);                                                      \
        return false;                                                                         \
    } while (0)
    if (f) {
        unsigned need = fg_framework_needs(tp, pp, ep, cp, s->zero);
        if (need & ~f->layouts) {
            char who[160];
            fg_framework_who_runs(need & ~f->layouts, who, sizeof who);
            NO("%s runs no %s%s%s%s%s (frameworks that do: %s)", f->name,
               (need & ~f->layouts & FG_LAY_TP) ? "TP " : "",
               (need & ~f->layouts & FG_LAY_PP) ? "PP " : "",
               (need & ~f->layouts & FG_LAY_EP) ? "EP " : "",
               (need & ~f->layouts & FG_LAY_CP) ? "CP " : "",
               (need & ~f->layouts & FG_LAY_ZERO) ? "ZeRO / FSDP" : "", who[0] ? who : "none");
        }
        if (f->naive_pp && pp > 1 && (nodes > 1 || tp * pp > per_node))
            NO("%s splits layers with device_map in one process on one node: PP=%u does not "
               "stay on one node's %u GPUs", f->name, pp, per_node);
        if (f->naive_pp && pp > 1 && dp * cp > 1)
            NO("%s splits layers with device_map in one process, which runs no data parallel "
               "beside it", f->name);
        if (f->pp_zero_max && pp > 1 && s->zero > f->pp_zero_max)
            NO("%s's pipeline runs ZeRO up to stage %u, not ZeRO-%u", f->name, f->pp_zero_max,
               s->zero);
    }
    if (tp > per_node || (nodes > 1 && per_node % tp))
        NO("TP=%u does not stay inside a node of %u GPUs: tensor parallel stays inside a node",
           tp, per_node);
    uint64_t over = s->serve ? (uint64_t)tp * dp : dp;
    if (ep > 1 && (!s->experts || s->experts % ep || over % ep))
        NO("EP=%u must divide the model's %llu experts and the %llu ranks it spreads them over",
           ep, (unsigned long long)s->experts, (unsigned long long)over);
    if (cp > 1 && s->seq_len && s->seq_len % (2ull * cp))
        NO("CP=%u needs a sequence length divisible by 2 x CP = %u, not %llu", cp, 2 * cp,
           (unsigned long long)s->seq_len);
#undef NO
    return true;
}
