/*
 * framework.c - the framework table (framework.h).  Each row's facts come
 * from the framework's own code; the source column says where.
 */
#include "framework.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>


/*
 * Sources, by row (repository: file, function or key):
 *  hf         transformers: training_args.py (bf16=True runs torch.autocast; the model keeps the
 *             dtype from_pretrained gave it, so a peft base loaded with torch_dtype=bf16 stays
 *             bf16), trainer.py _wrap_model (DDP, FSDP and DeepSpeed through accelerate);
 *             modeling_utils.py device_map (a layer split run one micro-batch at a time);
 *             peft tuners/lora/model.py (adapters upcast to fp32: autocast_adapter_dtype).
 *             Trainer's default optimizer is adamw_torch_fused from torch 2.8
 *             (training_args.py default_optim); accelerate/TRL loops and older releases run
 *             torch.optim.AdamW's foreach path, whose sqrt(v) temporary is counted unless
 *             --optimizer adamw-fused says otherwise.
 *  lit-gpt    litgpt finetune/lora.py, finetune/full.py: FSDPStrategy when devices > 1,
 *             chunked_cross_entropy (utils.py) for the loss; Lightning's bf16-mixed keeps
 *             fp32 parameters (fabric/plugins/precision/amp.py MixedPrecision); its FSDP LoRA
 *             keeps a whole weight copy per rank (measured-dev rows 44-47).
 *  torchtune  recipes/full_finetune_{single_device,distributed}.py and lora_finetune_*.py:
 *             the model in cfg.dtype (bf16, no autocast), FSDP2 fully_shard over the ranks, configs'
 *             enable_activation_checkpointing: True, optimizer fused: True,
 *             loss CEWithChunkedOutputLoss (modules/loss/ce_chunked_output_loss.py); QLoRA
 *             through torchao's to_nf4 (block 64, its scalers quantized in blocks of 256:
 *             nf4-dq's bytes).
 *  axolotl, llama-factory: HF Trainer + peft underneath (axolotl core/trainer_builder.py,
 *             llamafactory train/sft/workflow.py): the hf row's semantics, but neither runs
 *             peft's prepare_model_for_kbit_training's fp32 casts (axolotl casts back to
 *             torch_dtype in convert_embedding_modules_dtype; LLaMA-Factory upcasts layer
 *             norms only on request).
 *  QLoRA and LoRA details per framework: docs/frameworks-memory.md (peft utils/other.py
 *             prepare_model_for_kbit_training; bitsandbytes MatMul4Bit; litgpt LoRAQKVLinear;
 *             torchtune LoRALinear under the recipe's bf16 default dtype).
 *  unsloth    HF Trainer + peft with use_gradient_checkpointing="unsloth" and a fused,
 *             chunked cross entropy (unsloth kernels/cross_entropy_loss.py); one GPU per process.
 *  nemo, megatron: Megatron-Core optimizer/distrib_optimizer.py (bf16 parameters; fp32 main
 *             parameters and Adam states sharded over DP: use_distributed_optimizer in NeMo 2
 *             recipes), distributed/param_and_grad_buffer.py (fp32 main_grad buffer,
 *             accumulate_allreduce_grads_in_fp32), TE / apex FusedAdam; TP, PP (1F1B),
 *             EP and CP in parallel_state.py.
 *  deepspeed  runtime/bf16_optimizer.py and zero/stage_1_and_2.py (bf16 parameters and
 *             gradients; fp32 master weights with the Adam states, partitioned from ZeRO-1:
 *             the ZeRO paper's 2 + 2 + 12 bytes), ops/adam/fused_adam.py, pipe/engine.py (1F1B).
 *  vllm       vLLM main as stored (commit 002f10e, after v0.21): config/cache.py
 *             CacheConfig.gpu_memory_utilization = 0.92 (0.9 up to 0.20, the vllm@0.20
 *             row); v1/worker/gpu_worker.py determine_available_memory: the budget is
 *             utilization x the card's total, the baseline taken after the CUDA context
 *             (utils/mem_utils.py memory_profiling), and the weights, the profile run's peak
 *             (a dummy batch of max_num_batched_tokens: vllm/engine/arg_utils.py
 *             EngineArgs.get_batch_defaults, 8192 for the API server on cards of 70 GiB and
 *             more other than A100, else 2048) and, from 0.21, the CUDA graphs' memory come
 *             off it; the rest is KV cache, which must hold one max_model_len sequence
 *             (v1/core/kv_cache_utils.py check_enough_kv_cache_memory).
 *  sglang     srt/server_args.py ServerArgs._handle_gpu_memory_settings: chunked_prefill_size
 *             and cuda_graph_max_bs by card memory and TP, reserved = 512 MB + 1.5 MB x
 *             max(chunked_prefill_size, 2048) + 2 MB x cuda_graph_max_bs + 1 GB x tp x pp / 8
 *             (at least 10 GB on cards over 60 GB), mem_fraction_static = (card - reserved) /
 *             card for the weights and the KV pool; activations and CUDA graphs live in the
 *             reserve (model_executor/model_runner.py profile_max_num_token).
 */
#define TRAIN_HF                                                                              \
    .layouts = FG_LAY_PP | FG_LAY_ZERO, .naive_pp = true, .trains = true, .serves = true,     \
    .qlora = true,                                                                            \
    .lora_base_torch_dtype = true, .lora_autocast = true,                                     \
    .full_precision = FG_PREC_BF16_MIXED, .master = FG_MASTER_PARAMS, .optimizer = FG_OPT_ADAMW

static const struct fg_framework table[] = {
    {.name = "hf", .aliases = "transformers,trainer,accelerate,trl,peft",
     .label = "HF Trainer/accelerate/TRL + peft", TRAIN_HF, .kbit_prepared = true,
     .source = "transformers training_args.py, trainer.py; peft tuners/lora/model.py"},
    {.name = "lit-gpt", .aliases = "litgpt,lightning", .label = "lit-gpt (Lightning Fabric)",
     .layouts = FG_LAY_ZERO, .trains = true, .serves = true, .qlora = true,
     .full_precision = FG_PREC_BF16_MIXED,
     .master = FG_MASTER_PARAMS, .optimizer = FG_OPT_ADAMW, .chunked_ce = true,
     .ce_kept = FG_CE_COMPUTE, .kv_expanded = true, .unsharded_copy = true, .dp_zero = 3, .lora_base_dtype = true, .lora_fused_qkv = true,
     .lora_dropout = 0.05f, .no_dropout = true,
     .source = "litgpt finetune/lora.py, utils.py chunked_cross_entropy; Lightning amp.py"},
    {.name = "torchtune", .aliases = "", .label = "torchtune", .layouts = FG_LAY_ZERO,
     .trains = true, .qlora = true, .lora_base_torch_dtype = true, .full_precision = FG_PREC_BF16,
     .master = FG_MASTER_PARAMS, .optimizer = FG_OPT_ADAMW_FUSED, .chunked_ce = true,
     .grad_ckpt = true, .dp_zero = 3, .lora_base_dtype = true, .no_dropout = true,
     .qlora_quant = FG_QUANT_NF4_DQ,
     .source = "torchtune recipes/*_finetune_*.py, ce_chunked_output_loss.py; torchao "
               "dtypes/nf4tensor.py to_nf4 (block 64, scaler block 256)"},
    {.name = "axolotl", .aliases = "", .label = "axolotl (HF Trainer + peft)", TRAIN_HF,
     .source = "axolotl core/trainer_builder.py over transformers Trainer"},
    {.name = "llama-factory", .aliases = "llamafactory,llama_factory",
     .label = "LLaMA-Factory (HF Trainer + peft)", TRAIN_HF,
     .source = "llamafactory train/sft/workflow.py over transformers Trainer"},
    {.name = "unsloth", .aliases = "", .label = "unsloth", .layouts = 0, .trains = true,
     .qlora = true,
     .lora_base_torch_dtype = true, .full_precision = FG_PREC_BF16_MIXED,
     .master = FG_MASTER_PARAMS, .optimizer = FG_OPT_ADAMW, .chunked_ce = true,
     .ce_kept = FG_CE_LSE, .grad_ckpt = true,
     .source = "unsloth models/_utils.py, kernels/cross_entropy_loss.py"},
    {.name = "nemo", .aliases = "nemo2,nemo-rl", .label = "NeMo (Megatron-Core)",
     .layouts = FG_LAY_TP | FG_LAY_PP | FG_LAY_EP | FG_LAY_CP | FG_LAY_ZERO, .trains = true,
     .lora_base_torch_dtype = true, .full_precision = FG_PREC_BF16,
     .master = FG_MASTER_OPTIMIZER, .main_grad_bytes = 4, .optimizer = FG_OPT_ADAMW_FUSED,
     .dp_zero = 1, .source = "megatron/core/optimizer/distrib_optimizer.py; NeMo 2 recipes"},
    {.name = "megatron", .aliases = "megatron-lm,megatron-core,mcore",
     .label = "Megatron-LM/Megatron-Core",
     .layouts = FG_LAY_TP | FG_LAY_PP | FG_LAY_EP | FG_LAY_CP | FG_LAY_ZERO, .trains = true,
     .lora_base_torch_dtype = true, .full_precision = FG_PREC_BF16,
     .master = FG_MASTER_OPTIMIZER, .main_grad_bytes = 4, .optimizer = FG_OPT_ADAMW_FUSED,
     .dp_zero = 1, .source = "megatron/core/optimizer/distrib_optimizer.py, param_and_grad_buffer.py"},
    {.name = "deepspeed", .aliases = "ds", .label = "DeepSpeed",
     .layouts = FG_LAY_PP | FG_LAY_ZERO, .trains = true, .lora_base_torch_dtype = true,
     .full_precision = FG_PREC_BF16, .master = FG_MASTER_OPTIMIZER, .main_grad_bytes = 2,
     .optimizer = FG_OPT_ADAMW_FUSED,
     .source = "deepspeed runtime/bf16_optimizer.py, zero/stage_1_and_2.py, pipe/engine.py"},
    {.name = "vllm", .aliases = "", .label = "vLLM", .layouts = FG_LAY_TP | FG_LAY_PP | FG_LAY_EP,
     .serves = true, .gpu_util = 0.92, .serve_budget = FG_SERVE_VLLM,
     .source = "vllm config/cache.py gpu_memory_utilization 0.92, gpu_worker.py "
               "determine_available_memory, engine/arg_utils.py get_batch_defaults"},
    {.name = "sglang", .aliases = "", .label = "SGLang", .layouts = FG_LAY_TP | FG_LAY_PP | FG_LAY_EP,
     .serves = true, .gpu_util = 0.88, .serve_budget = FG_SERVE_SGLANG,
     .source = "sglang srt/server_args.py _handle_gpu_memory_settings"},
    {.name = "vllm@0.20", .aliases = "", .label = "vLLM 0.20",
     .layouts = FG_LAY_TP | FG_LAY_PP | FG_LAY_EP, .serves = true, .gpu_util = 0.9,
     .serve_budget = FG_SERVE_VLLM_020,
     .source = "vllm 0.20 CacheConfig.gpu_memory_utilization 0.9, gpu_worker.py"},
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

const struct fg_framework *fg_framework_find(const char *name)
{
    if (!name || !*name)
        return NULL;
    for (size_t i = 0; i < N_ROWS; i++)
        if (!strcasecmp(table[i].name, name) || in_aliases(table[i].aliases, name))
            return &table[i];
    return NULL;
}

const struct fg_framework *fg_framework_default(void)
{
    return &table[0];
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
        int w = snprintf(buf + off, cap - off, "%s%s", i ? "|" : "", table[i].name);
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
        if ((table[i].layouts & need) != need || !table[i].trains)
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
