/*
 * jobfile_rows_launch.c - the rows (jobfile_rows.h) of the files that launch a job rather
 * than train it: the DeepSpeed config, accelerate's config, and the vLLM and SGLang serve
 * configs.  Every key of the release's own class that changes GPU memory has a row: what it
 * sets, or a note that lists it as not modelled (tests/test_jobfile.c holds each class's
 * memory keys and fails on one without a row).
 *
 * Read from:
 *   DeepSpeed 0.19.6 (deepspeedai/DeepSpeed edaa722): runtime/config.py (train_batch_size,
 *     train_micro_batch_size_per_gpu, gradient_accumulation_steps, the bf16 / fp16 checks
 *     at lines 1037-1049), runtime/precision_config.py DeepSpeedBF16Config
 *     (bf16_master_weights_and_grads, bf16_optimizer_states) and DeepSpeedFP16Config,
 *     runtime/zero/config.py DeepSpeedZeroConfig (stage, buckets, offload_*, zero_hpz_*,
 *     mics_shard_size), zero/stage3.py master_weights_and_grads_dtype; HF's "auto"
 *     (transformers integrations/deepspeed.py HfTrainerDeepSpeedConfig.trainer_config_process
 *     and trainer_config_finalize: the batch, accumulation and precision from the trainer's
 *     arguments, the buckets from the model's hidden size);
 *   accelerate (huggingface/accelerate 16cb6eb): commands/config/config_args.py
 *     ClusterConfig (distributed_type, mixed_precision, num_processes, deepspeed_config,
 *     fsdp_config, parallelism_config, megatron_lm_config, fp8_config) and
 *     parallelism_config.py ParallelismConfig (dp_replicate, dp_shard, tp, cp sizes);
 *   vLLM (vllm-project/vllm vllm/engine/arg_utils.py EngineArgs, 99d7eb5), whose
 *     `vllm serve --config` YAML takes the long option names
 *     (vllm-project/vllm:docs/configuration/serve_args.md);
 *   SGLang (sgl-project/sglang python/sglang/srt/server_args.py ServerArgs, 469c63e), whose
 *     --config YAML takes the same
 *     (sgl-project/sglang:docs/advanced_features/server_arguments.md).
 */
#include "job/jobfile_rows.h"

#define F(x) (1u << FG_JF_##x)
#define SERVE (F(VLLM) | F(SGLANG))
#define END {NULL, NULL}

static const struct fg__jf_vmap m_ok[] = {{"*", ""}, END};
static const struct fg__jf_vmap m_false_ok[] = {{"false|no|0", ""}, END};
static const struct fg__jf_vmap m_one_ok[] = {{"1", ""}, END};
static const struct fg__jf_vmap m_zero_ok[] = {{"0|0.0", ""}, END};
/* FSDP's own activation checkpointing: on whatever the trainer's gradient_checkpointing says
 * (a refinement, not a conflict: accelerate wraps the layers itself) */
static const struct fg__jf_vmap m_ckpt_on[] = {
    {"true|yes|1", "+grad-ckpt=yes"}, {"false|no|0", ""}, END};
/* HF's "auto" is the trainer's own value (HfTrainerDeepSpeedConfig.fill_match): the
 * trainer's file says it */
static const struct fg__jf_vmap m_auto_bf16[] = {
    {"true", "precision=bf16-mixed"}, {"auto|false", ""}, END};
static const struct fg__jf_vmap m_auto_fp16[] = {
    {"true", "precision=fp16-mixed"}, {"auto|false", ""}, END};
static const struct fg__jf_vmap m_bf16_master[] = {
    {"true", "master-dtype=bf16"}, {"false", ""}, END};
static const struct fg__jf_vmap m_bf16_states[] = {
    {"true", "optimizer-state-dtype=bf16"}, {"false", ""}, END};
static const struct fg__jf_vmap m_ds_opt[] = {{"cpu|nvme", "offload=optimizer"}, {"none", ""}, END};
static const struct fg__jf_vmap m_ds_param[] = {{"cpu|nvme", "+offload=params"}, {"none", ""}, END};
static const struct fg__jf_vmap m_ds_batch[] = {{"auto", ""}, {"*", "batch=$"}, END};
static const struct fg__jf_vmap m_ds_global[] = {{"auto", ""}, END};
static const struct fg__jf_vmap m_ds_accum[] = {{"auto", ""}, {"*", "grad-accum=$"}, END};
static const struct fg__jf_vmap m_ds_zero[] = {{"auto", ""}, {"*", "zero=$"}, END};
/* DeepSpeed's defaults (runtime/zero/config.py): fitgate's ZeRO model assumes them */
static const struct fg__jf_vmap m_ds_1e9[] = {{"auto|1000000000", ""}, END};
static const struct fg__jf_vmap m_ds_5e8[] = {{"auto|500000000", ""}, END};
/* "auto": hidden x hidden (transformers integrations/deepspeed.py trainer_config_finalize) */
static const struct fg__jf_vmap m_ds_bucket[] = {{"auto", "ds-bucket=auto"},
                                                 {"*", "ds-bucket=$"}, END};
static const struct fg__jf_vmap m_ds_5e7[] = {{"auto|50000000", ""}, END};
static const struct fg__jf_vmap m_ds_1e5[] = {{"auto|100000", ""}, END};
static const struct fg__jf_vmap m_ds_mics[] = {{"-1", ""}, END};
/* AdamW in its fused or CPU form: the framework's own two states */
static const struct fg__jf_vmap m_ds_optim[] = {
    {"Adam|AdamW|FusedAdam|CPUAdam|DeepSpeedCPUAdam|torch_adam", ""}, {"SGD", "optimizer=sgd"},
    END};
/* FSDP alone is FullyShardedDataParallelPlugin's default FULL_SHARD, which fsdp_config's
 * own keys refine ("+"); DeepSpeed's stage is its file's or deepspeed_config's (the plugin's
 * default ZeRO-2 where neither says: jobfile_apply.c declared_layout) */
static const struct fg__jf_vmap m_acc_dist[] = {
    {"MULTI_GPU|NO", "zero=0"}, {"FSDP", "zero=3"}, {"DEEPSPEED", ""}, END};
static const struct fg__jf_vmap m_acc_mixed[] = {{"bf16", "precision=bf16-mixed"},
                                                 {"fp16", "precision=fp16-mixed"},
                                                 {"no", "precision=fp32"},
                                                 END};
static const struct fg__jf_vmap m_fsdp_strategy[] = {
    {"FULL_SHARD|1", "+zero=3"}, {"SHARD_GRAD_OP|2", "+zero=2"}, {"NO_SHARD|3", "+zero=0"}, END};
/* FSDP2 takes a bool; FSDP1 a strategy name (utils/dataclasses.py FullyShardedDataParallelPlugin
 * __post_init__: FSDP_SHARDING_STRATEGY) */
static const struct fg__jf_vmap m_reshard[] = {
    {"true|yes|1|FULL_SHARD|HYBRID_SHARD", "+zero=3"},
    {"false|no|0|SHARD_GRAD_OP|_HYBRID_SHARD_ZERO2", "+zero=2"}, {"NO_SHARD", "+zero=0"}, END};
static const struct fg__jf_vmap m_offload_params[] = {
    {"true|yes|1", "offload=params"}, {"false|no|0", ""}, END};
static const struct fg__jf_vmap m_fsdp_wrap[] = {
    {"TRANSFORMER_BASED_WRAP|SIZE_BASED_WRAP", ""}, END};
static const struct fg__jf_vmap m_fsdp_version[] = {{"1|2", ""}, END};
/* a 2-byte float is a 2-byte float to the weights and the KV cache */
static const struct fg__jf_vmap m_serve_dtype[] = {
    {"auto", ""}, {"bfloat16|bf16|half|float16|fp16", "precision=bf16"},
    {"float32|fp32|float", "precision=fp32"}, END};
static const struct fg__jf_vmap m_kv[] = {
    {"auto|bf16|bfloat16", ""}, {"fp8|fp8_e4m3|fp8_e5m2", "kv-dtype=$"}, END};
static const struct fg__jf_vmap m_load_format[] = {
    {"auto|pt|safetensors|npcache|dummy|fastsafetensors|runai_streamer|sharded_state|"
     "tensorizer|remote|remote_instance|private|layered", ""}, END};

#define NOTE_ACC_MEGATRON "accelerate's Megatron-LM plugin: check it as --framework megatron"

/* The rows; their order is the order a key is looked up in (the first that names it). */
const struct fg__jf_row fg__jf_launch_rows[] = {
    /* ---- DeepSpeed (with HF's "auto") ---- */
    {.fmts = F(DEEPSPEED), .key = "train_micro_batch_size_per_gpu", .map = m_ds_batch},
    {.fmts = F(DEEPSPEED),
     .key = "train_batch_size",
     .map = m_ds_global,
     .note = "DeepSpeed derives the micro-batch from it (/ accumulation / ranks): give "
             "train_micro_batch_size_per_gpu"},
    {.fmts = F(DEEPSPEED), .key = "gradient_accumulation_steps", .map = m_ds_accum, .soft = true},
    {.fmts = F(DEEPSPEED), .key = "bf16.enabled", .map = m_auto_bf16},
    {.fmts = F(DEEPSPEED), .key = "fp16.enabled", .map = m_auto_fp16},
    {.fmts = F(DEEPSPEED), .key = "bf16.bf16_master_weights_and_grads", .map = m_bf16_master},
    {.fmts = F(DEEPSPEED), .key = "bf16.bf16_optimizer_states", .map = m_bf16_states},
    {.fmts = F(DEEPSPEED),
     .key = "fp16.fp16_master_weights_and_grads",
     .map = m_false_ok,
     .note = "fp16 master weights and gradients"},
    {.fmts = F(DEEPSPEED), .key = "amp.enabled", .map = m_false_ok, .note = "apex AMP"},
    {.fmts = F(DEEPSPEED), .key = "torch_autocast.enabled", .map = m_ok},
    {.fmts = F(DEEPSPEED),
     .key = "data_types.grad_accum_dtype",
     .note = "the dtype gradients accumulate in"},
    {.fmts = F(DEEPSPEED),
     .key = "communication_data_type",
     .note = "the dtype gradients are reduced in"},
    {.fmts = F(DEEPSPEED),
     .key = "optimizer.type",
     .map = m_ds_optim,
     .note = "an optimizer whose states fitgate does not model (1-bit Adam, LAMB, Adagrad...)"},
    {.fmts = F(DEEPSPEED), .key = "zero_optimization.stage", .map = m_ds_zero},
    {.fmts = F(DEEPSPEED), .key = "zero_optimization.offload_optimizer.device", .map = m_ds_opt},
    {.fmts = F(DEEPSPEED), .key = "zero_optimization.offload_param.device", .map = m_ds_param},
    {.fmts = F(DEEPSPEED),
     .key = "zero_optimization.offload_optimizer.ratio",
     .map = m_one_ok,
     .note = "a share of the optimizer offloaded (the rest on the GPU)"},
    {.fmts = F(DEEPSPEED),
     .key = "zero_optimization.sub_group_size",
     .map = m_ds_1e9,
     .note = "the optimizer steps in groups of this many parameters"},
    {.fmts = F(DEEPSPEED),
     .key = "zero_optimization.stage3_max_live_parameters",
     .map = m_ds_1e9,
     .note = "ZeRO-3 keeps this many gathered parameters"},
    {.fmts = F(DEEPSPEED),
     .key = "zero_optimization.stage3_max_reuse_distance",
     .map = m_ds_1e9,
     .note = "ZeRO-3 keeps gathered parameters this long"},
    {.fmts = F(DEEPSPEED), .key = "zero_optimization.reduce_bucket_size", .map = m_ds_bucket},
    {.fmts = F(DEEPSPEED),
     .key = "zero_optimization.allgather_bucket_size",
     .map = m_ds_5e8,
     .note = "the all-gather buffer"},
    {.fmts = F(DEEPSPEED),
     .key = "zero_optimization.stage3_prefetch_bucket_size",
     .map = m_ds_5e7,
     .note = "ZeRO-3 prefetches this many parameters"},
    {.fmts = F(DEEPSPEED),
     .key = "zero_optimization.stage3_param_persistence_threshold",
     .map = m_ds_1e5,
     .note = "parameters under this size stay gathered on every rank"},
    {.fmts = F(DEEPSPEED),
     .key = "zero_optimization.zero_hpz_partition_size",
     .map = m_one_ok,
     .note = "ZeRO++ keeps a second weight partition per node"},
    {.fmts = F(DEEPSPEED),
     .key = "zero_optimization.zero_quantized_weights",
     .map = m_false_ok,
     .note = "ZeRO++ quantized weight all-gathers"},
    {.fmts = F(DEEPSPEED),
     .key = "zero_optimization.zero_quantized_gradients",
     .map = m_false_ok,
     .note = "ZeRO++ quantized gradient reduction"},
    {.fmts = F(DEEPSPEED),
     .key = "zero_optimization.mics_shard_size",
     .map = m_ds_mics,
     .note = "MiCS shards the states over a sub-group of ranks"},
    {.fmts = F(DEEPSPEED),
     .key = "zero_optimization.zenflow.topk_ratio",
     .note = "ZenFlow keeps the important gradients on the GPU"},
    {.fmts = F(DEEPSPEED),
     .key = "activation_checkpointing.partition_activations",
     .map = m_false_ok,
     .note = "checkpointed activations split over the model-parallel ranks"},
    {.fmts = F(DEEPSPEED),
     .key = "activation_checkpointing.cpu_checkpointing",
     .map = m_false_ok,
     .note = "checkpointed activations kept in CPU memory"},
    {.fmts = F(DEEPSPEED),
     .key = "tensor_parallel.autotp_size",
     .map = m_one_ok,
     .note = "DeepSpeed AutoTP splits the weights over this many ranks"},
    {.fmts = F(DEEPSPEED),
     .key = "sequence_parallel_size",
     .map = m_one_ok,
     .note = "Ulysses sequence parallel splits each sequence over this many ranks"},
    {.fmts = F(DEEPSPEED),
     .key = "compression_training.weight_quantization.shared_parameters.enabled",
     .map = m_false_ok,
     .note = "compression training keeps quantized weight copies"},

    /* ---- accelerate ---- */
    {.fmts = F(ACCELERATE),
     .key = "distributed_type",
     .map = m_acc_dist,
     .note = "a launch fitgate does not model (Megatron-LM, XLA, multi-CPU)"},
    {.fmts = F(ACCELERATE),
     .key = "mixed_precision",
     .map = m_acc_mixed,
     .note = "FP8 training (Transformer Engine, MS-AMP or torchao)"},
    {.fmts = F(ACCELERATE), .key = "num_processes", .hook = H_ACC_PROCS},
    {.fmts = F(ACCELERATE), .key = "use_cpu", .map = m_false_ok, .note = "runs on the CPU"},
    {.fmts = F(ACCELERATE),
     .key = "deepspeed_config.gradient_accumulation_steps",
     .map = m_ds_accum,
     .soft = true},
    {.fmts = F(ACCELERATE),
     .key = "deepspeed_config.deepspeed_config_file",
     .assign = "deepspeed",
     .hook = H_FILE},
    {.fmts = F(ACCELERATE), .key = "deepspeed_config.zero_stage", .assign = "zero=$"},
    {.fmts = F(ACCELERATE), .key = "deepspeed_config.offload_optimizer_device", .map = m_ds_opt},
    {.fmts = F(ACCELERATE), .key = "deepspeed_config.offload_param_device", .map = m_ds_param},
    {.fmts = F(ACCELERATE) | F(AXOLOTL),
     .key = "fsdp_config.fsdp_activation_checkpointing",
     .map = m_ckpt_on},
    {.fmts = F(ACCELERATE) | F(AXOLOTL),
     .key = "fsdp_config.fsdp_sharding_strategy",
     .map = m_fsdp_strategy},
    {.fmts = F(ACCELERATE) | F(AXOLOTL),
     .key = "fsdp_config.fsdp_reshard_after_forward",
     .map = m_reshard},
    {.fmts = F(ACCELERATE) | F(AXOLOTL),
     .key = "fsdp_config.fsdp_offload_params",
     .map = m_offload_params},
    {.fmts = F(ACCELERATE),
     .key = "fsdp_config.fsdp_auto_wrap_policy",
     .map = m_fsdp_wrap,
     .note = "no wrapping: FSDP gathers the whole model at once"},
    {.fmts = F(ACCELERATE), .key = "fsdp_config.fsdp_version", .map = m_fsdp_version},
    {.fmts = F(ACCELERATE),
     .key = "parallelism_config.parallelism_config_tp_size",
     .assign = "tp=$"},
    {.fmts = F(ACCELERATE),
     .key = "parallelism_config.parallelism_config_cp_size",
     .assign = "cp=$"},
    {.fmts = F(ACCELERATE), .key = "parallelism_config.parallelism_config_dp_shard_size",
     .map = m_ok},
    {.fmts = F(ACCELERATE),
     .key = "parallelism_config.parallelism_config_dp_replicate_size",
     .map = m_one_ok,
     .note = "HSDP: the states shard over dp_shard_size ranks only, replicated over these"},
    {.fmts = F(ACCELERATE),
     .key = "megatron_lm_config.megatron_lm_tp_degree",
     .map = m_one_ok,
     .note = NOTE_ACC_MEGATRON},
    {.fmts = F(ACCELERATE),
     .key = "megatron_lm_config.megatron_lm_pp_degree",
     .map = m_one_ok,
     .note = NOTE_ACC_MEGATRON},
    {.fmts = F(ACCELERATE),
     .key = "megatron_lm_config.megatron_lm_recompute_activations",
     .map = m_false_ok,
     .note = NOTE_ACC_MEGATRON},
    {.fmts = F(ACCELERATE),
     .key = "megatron_lm_config.megatron_lm_use_distributed_optimizer",
     .map = m_false_ok,
     .note = NOTE_ACC_MEGATRON},

    /* ---- vLLM and SGLang ---- */
    {.fmts = F(VLLM), .key = "model", .assign = "model=$"},
    {.fmts = F(SGLANG), .key = "model-path", .assign = "model=$"},
    {.fmts = F(SGLANG), .key = "model", .assign = "model=$"},
    {.fmts = SERVE, .key = "dtype", .map = m_serve_dtype},
    {.fmts = SERVE, .key = "kv-cache-dtype", .map = m_kv},
    {.fmts = SERVE, .key = "quantization", .assign = "quantization=$"},
    {.fmts = SERVE,
     .key = "load-format",
     .map = m_load_format,
     .note = "weights quantized as they load (bitsandbytes, gguf)"},
    {.fmts = F(VLLM), .key = "max-model-len", .assign = "seq-len=$"},
    {.fmts = F(SGLANG), .key = "context-length", .assign = "seq-len=$"},
    {.fmts = SERVE, .key = "tensor-parallel-size", .assign = "tp=$"},
    {.fmts = SERVE, .key = "pipeline-parallel-size", .assign = "pp=$"},
    {.fmts = F(VLLM), .key = "data-parallel-size", .assign = "dp=$"},
    {.fmts = F(VLLM), .key = "enable-expert-parallel", .hook = H_EP},
    {.fmts = F(VLLM),
     .key = "decode-context-parallel-size",
     .map = m_one_ok,
     .note = "the KV cache split over decode-context-parallel ranks"},
    {.fmts = F(SGLANG), .key = "tp-size", .assign = "tp=$"},
    {.fmts = F(SGLANG), .key = "pp-size", .assign = "pp=$"},
    {.fmts = F(SGLANG),
     .key = "dp-size",
     .map = m_one_ok,
     .note = "SGLang's data-parallel replicas"},
    {.fmts = F(SGLANG),
     .key = "data-parallel-size",
     .map = m_one_ok,
     .note = "SGLang's data-parallel replicas"},
    {.fmts = F(SGLANG), .key = "ep-size", .assign = "ep=$"},
    {.fmts = F(SGLANG), .key = "expert-parallel-size", .assign = "ep=$"},
    {.fmts = F(SGLANG),
     .key = "enable-dp-attention",
     .map = m_false_ok,
     .note = "DP attention: each data-parallel rank keeps its own KV cache"},
    {.fmts = F(VLLM), .key = "gpu-memory-utilization", .assign = "gpu-util=$"},
    {.fmts = F(SGLANG), .key = "mem-fraction-static", .assign = "gpu-util=$"},
    {.fmts = F(VLLM),
     .key = "kv-cache-memory-bytes",
     .note = "the KV cache's bytes, instead of gpu_memory_utilization's share"},
    {.fmts = F(VLLM),
     .key = "num-gpu-blocks-override",
     .note = "the KV cache's blocks, instead of the profile's"},
    {.fmts = F(VLLM),
     .key = "max-num-batched-tokens",
     .note = "the prefill chunk vLLM profiles its activations at"},
    {.fmts = F(VLLM), .key = "max-num-seqs", .note = "the sequences vLLM runs at once"},
    {.fmts = SERVE, .key = "cpu-offload-gb", .map = m_zero_ok, .note = "weights kept in CPU memory"},
    {.fmts = F(VLLM),
     .key = "enforce-eager",
     .map = m_false_ok,
     .note = "no CUDA graphs are captured"},
    {.fmts = F(VLLM),
     .key = "cuda-graph-sizes",
     .note = "the batch sizes vLLM captures CUDA graphs for"},
    {.fmts = F(VLLM),
     .key = "compilation-config",
     .note = "torch.compile and CUDA-graph settings (capture sizes, mode)"},
    {.fmts = F(VLLM),
     .key = "disable-sliding-window",
     .map = m_false_ok,
     .note = "sliding-window layers cache the whole context"},
    {.fmts = F(VLLM),
     .key = "speculative-config",
     .note = "a draft model, its weights and its KV cache"},
    {.fmts = F(VLLM),
     .key = "limit-mm-per-prompt",
     .note = "the multimodal encoder's profiled inputs"},
    {.fmts = SERVE, .key = "enable-lora", .map = m_false_ok, .note = "LoRA adapter slots"},
    {.fmts = F(VLLM), .key = "max-loras", .note = "LoRA adapter slots"},
    {.fmts = SERVE, .key = "max-lora-rank", .note = "LoRA adapter slots"},
    {.fmts = F(SGLANG), .key = "max-loras-per-batch", .note = "LoRA adapter slots"},
    {.fmts = SERVE,
     .key = "hf-overrides",
     .note = "config.json overridden: the model may not be the one fitgate reads"},
    {.fmts = F(SGLANG),
     .key = "json-model-override-args",
     .note = "config.json overridden: the model may not be the one fitgate reads"},
    {.fmts = F(SGLANG), .key = "chunked-prefill-size", .note = "the prefill chunk"},
    {.fmts = F(SGLANG),
     .key = "max-prefill-tokens",
     .note = "the tokens one prefill batch holds"},
    {.fmts = F(SGLANG), .key = "max-running-requests", .note = "the requests SGLang runs at once"},
    {.fmts = F(SGLANG), .key = "max-total-tokens", .note = "the KV pool's size in tokens"},
    {.fmts = F(SGLANG),
     .key = "cuda-graph-max-bs",
     .note = "CUDA graphs captured up to this batch (part of SGLang's reserve)"},
    {.fmts = F(SGLANG),
     .key = "disable-cuda-graph",
     .map = m_false_ok,
     .note = "no CUDA graphs are captured (SGLang's reserve is smaller)"},
    {.fmts = F(SGLANG),
     .key = "speculative-algorithm",
     .note = "a draft model, its weights and its KV cache"},
    {.fmts = F(SGLANG),
     .key = "swa-full-tokens-ratio",
     .note = "the sliding-window layers' share of the KV pool"},
};

const size_t fg__jf_launch_n = sizeof fg__jf_launch_rows / sizeof fg__jf_launch_rows[0];
