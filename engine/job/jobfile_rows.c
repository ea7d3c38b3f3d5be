/*
 * jobfile_rows.c - what each framework's config keys mean to fitgate, as data
 * rows, and fg_jobfile_apply (jobfile.h), which maps a file's keys through
 * them onto the job's options.
 *
 * A row names a key (a dotted path; '-' and '_' alike) of one or more formats
 * and what its value sets, as option assignments "seq-len=$" ($: the value),
 * or through a map of values ("true" -> "grad-ckpt=yes"; "" sets nothing, the
 * value is understood), or a hook for the few keys that need code (a file that
 * names another, torchtune's builders).  A value no map entry matches, and a
 * row with nothing to set, is a key that changes memory which fitgate does not
 * model: listed (spec->unknown), never guessed.  Keys no row names do not change
 * the peak (logging, data, learning rate) and are ignored.
 *
 * "+opt=value" refines what the same file said plainly (TRL's load_in_4bit makes
 * use_peft's LoRA a QLoRA; torchtune's fused: True makes AdamW fused); any other
 * two keys that set one option to different values are a conflict.
 *
 * Rows name options by name (fg_jobopt_find), so a row may name one this build
 * does not have: a "soft" row is then ignored (accumulation: no memory), any other
 * is listed as not understood.
 *
 * Read from (the release in the mirror, 2026): transformers training_args.py
 * (TrainingArguments: per_device_train_batch_size=8, optim, fsdp), TRL
 * trl/trainer/sft_config.py (gradient_checkpointing=True, max_length=1024) and
 * model_config.py (use_peft, lora_*, load_in_4bit), axolotl
 * src/axolotl/utils/schemas/config.py (gradient_checkpointing=False, sequence_len=512)
 * and loaders/model.py (prepare_model_for_kbit_training(use_gradient_checkpointing=
 * cfg.gradient_checkpointing)), LLaMA-Factory hparams/model_args.py
 * (disable_gradient_checkpointing=False, double_quantization=True) and data_args.py
 * (cutoff_len=2048), torchtune recipes/lora_finetune_single_device.py
 * (cfg.get("enable_activation_checkpointing", False)), DeepSpeed runtime/zero/config.py
 * (bucket defaults), accelerate commands/config/config_args.py,
 * vllm-project/vllm:vllm/engine/arg_utils.py, sgl-project/sglang:python/sglang/srt/server_args.py.
 */
#include "job/jobfile_rows.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>


#define F(x) (1u << FG_JF_##x)
#define TA (F(TRL) | F(TRANSFORMERS) | F(LLAMA_FACTORY)) /* TrainingArguments' own keys */
#define SERVE (F(VLLM) | F(SGLANG))

static const struct {
    const char *name, *aliases, *framework;
    int rank; /* which file names the framework: a trainer's over accelerate's over DeepSpeed's */
} formats[FG_JF_COUNT] = {
    [FG_JF_AUTO] = {"auto", "", "", 0},
    [FG_JF_TRL] = {"trl", "", "trl", 2},
    [FG_JF_TRANSFORMERS] = {"transformers", "hf,trainer,hf-trainer", "transformers", 2},
    [FG_JF_AXOLOTL] = {"axolotl", "", "axolotl", 2},
    [FG_JF_LLAMA_FACTORY] = {"llama-factory", "llamafactory,llama_factory,lf", "llama-factory", 2},
    [FG_JF_TORCHTUNE] = {"torchtune", "tune", "torchtune", 2},
    [FG_JF_DEEPSPEED] = {"deepspeed", "ds", "deepspeed", 0},
    [FG_JF_ACCELERATE] = {"accelerate", "", "accelerate", 1},
    [FG_JF_VLLM] = {"vllm", "", "vllm", 2},
    [FG_JF_SGLANG] = {"sglang", "", "sglang", 2},
};

#define END {NULL, NULL}
static const struct fg__jf_vmap m_ckpt[] = {{"true|yes|on|1", "grad-ckpt=yes"},
                                     {"false|no|off|0", "grad-ckpt=no"}, END};
static const struct fg__jf_vmap m_ckpt_ax[] = {
    {"true|yes|1", "grad-ckpt=yes"},
    {"false|no|0", "grad-ckpt=no"},
    {"offload|offload_disk", "grad-ckpt=yes;act-offload=yes"},
    END};
/* FSDP's own activation checkpointing: it checkpoints whatever gradient_checkpointing says
 * (transformers wraps the layers with checkpoint_wrapper), so it refines that key */
static const struct fg__jf_vmap m_ckpt_on[] = {
    {"true|yes|1", "+grad-ckpt=yes"}, {"false|no|0", ""}, END};
static const struct fg__jf_vmap m_no_ckpt[] = {
    {"true|yes|1", "grad-ckpt=no"}, {"false|no|0", "grad-ckpt=yes"}, END};
static const struct fg__jf_vmap m_bf16[] = {
    {"true|yes|1", "precision=bf16-mixed"}, {"false|no|0", ""}, END};
/* axolotl resolve_dtype (src/axolotl/utils/config/__init__.py:156-196): bf16 (true, or
 * "auto" on a card that has it) sets cfg.torch_dtype = bfloat16, so the model is loaded and
 * trained in bf16, with no fp32 master; false with no fp16 loads it in float32. */
static const struct fg__jf_vmap m_bf16_ax[] = {{"true|yes|1|auto", "~precision=bf16"},
                                               {"false|no|0", "~precision=fp32"}, END};
static const struct fg__jf_vmap m_fp16_ax[] = {
    {"true|yes|1", "+precision=fp16-mixed"}, {"false|no|0", ""}, END};
/* TRL ModelConfig.dtype (model_config.py:89) and model_init_kwargs' dtype reach
 * from_pretrained (trl/trainer/utils.py:1144, float32 when unset): bfloat16 weights are
 * trained in bf16, the more specific statement beside bf16: true (autocast); an inference
 * that accelerate's mixed_precision or DeepSpeed's bf16 (an fp32 master in the optimizer)
 * replaces */
static const struct fg__jf_vmap m_dtype_trl[] = {{"bfloat16|bf16", "~+precision=bf16"},
                                                 {"float32|fp32", ""}, END};
static const struct fg__jf_vmap m_fp16[] = {
    {"true|yes|1", "precision=fp16-mixed"}, {"false|no|0", ""}, END};
static const struct fg__jf_vmap m_pure_bf16[] = {
    {"true|yes|1", "+precision=bf16"}, {"false|no|0", ""}, END};
static const struct fg__jf_vmap m_optim[] = {
    {"adamw_torch_fused", "optimizer=adamw-fused"},
    {"adamw_torch|adamw_hf|paged_adamw_32bit|adamw_torch_npu_fused|adamw_apex_fused",
     "optimizer=adamw"},
    {"adamw_bnb_8bit|adamw_8bit|paged_adamw_8bit|adamw_torch_8bit", "optimizer=adamw-8bit"},
    {"sgd", "optimizer=sgd"}, END};
static const struct fg__jf_vmap m_peft[] = {{"true|yes|1", "mode=lora"}, {"false|no|0", ""}, END};
static const struct fg__jf_vmap m_4bit[] = {{"true|yes|1", "+mode=qlora"}, {"false|no|0", ""}, END};
static const struct fg__jf_vmap m_8bit[] = {
    {"true|yes|1", "+mode=qlora;quant=int8"}, {"false|no|0", ""}, END};
static const struct fg__jf_vmap m_nested[] = {
    {"true|yes|1", "+quant=nf4-dq"}, {"false|no|0", ""}, END};
static const struct fg__jf_vmap m_nf4[] = {{"nf4", ""}, END};
static const struct fg__jf_vmap m_adapter[] = {{"lora", "mode=lora"}, {"qlora", "mode=qlora"}, END};
static const struct fg__jf_vmap m_linear[] = {{"true|yes|1", "+lora-targets=all-linear"},
                                       {"false|no|0", ""}, END};
static const struct fg__jf_vmap m_flash[] = {
    {"true|yes|1", "attention=sdpa"}, {"false|no|0", ""}, END};
static const struct fg__jf_vmap m_attn[] = {{"eager", "attention=eager"},
                                     {"sdpa|flash_attention_2|flash_attention_3|flex_attention|"
                                      "kernels-community/flash-attn|kernels-community/flash-attn3|"
                                      "kernels-community/vllm-flash-attn3",
                                      "attention=sdpa"}, END};
static const struct fg__jf_vmap m_lf_attn[] = {
    {"disabled", "attention=eager"}, {"sdpa|fa2|fa3", "attention=sdpa"}, {"auto", ""}, END};
static const struct fg__jf_vmap m_finetune[] = {{"lora", "mode=lora"}, {"full", "mode=full"}, END};
static const struct fg__jf_vmap m_lf_target[] = {
    {"all", "lora-targets=all-linear"}, {"*", "lora-targets=$"}, END};
static const struct fg__jf_vmap m_stage[] = {{"sft|pt|dpo|kto|rm|ppo", ""}, END};
/* a preference / RL trainer's keys: what they set where the trainer takes them */
static const struct fg__jf_vmap m_rl_ax[] = {{"dpo|ipo|kto|orpo|simpo|grpo", ""}, END};
static const struct fg__jf_vmap m_beta[] = {{"*", "beta=$"}, END};
static const struct fg__jf_vmap m_vllm[] = {{"true|yes|1", "~vllm-mode=colocate"},
                                            {"false|no|0", "vllm-mode=none"}, END};
static const struct fg__jf_vmap m_vllm_mode[] = {{"server|colocate", "+vllm-mode=$"}, END};
static const struct fg__jf_vmap m_in_bwd[] = {{"true|yes|1", "optimizer-in-bwd=yes"},
                                             {"false|no|0", "optimizer-in-bwd=no"}, END};
/* The losses (memory/loss.c): TRL SFTConfig.loss_type (dft: nll's memory), use_liger_kernel
 * (TrainingArguments), axolotl's plugin flags, LLaMA-Factory's unsloth.  axolotl's
 * CutCrossEntropyPlugin turns cut_cross_entropy on by default (integrations/
 * cut_cross_entropy/args.py: cut_cross_entropy = True); its LigerPlugin only with
 * liger_fused_linear_cross_entropy. */
static const struct fg__jf_vmap m_loss_type[] = {
    {"chunked_nll", "loss=chunked-nll"}, {"nll|dft", "loss=plain"},
    {"*", ""}, /* DPO, KTO, GRPO's loss_type: their trainer rows size the log-probs */ END};
static const struct fg__jf_vmap m_liger[] = {{"true|yes|1", "loss=liger"}, {"false|no|0", ""}, END};
static const struct fg__jf_vmap m_cce[] = {{"true|yes|1", "loss=cce"}, {"false|no|0", ""}, END};
static const struct fg__jf_vmap m_unsloth[] = {
    {"true|yes|1", "loss=unsloth"}, {"false|no|0", ""}, END};
#define AX_CCE "axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin"
#define AX_LIGER "axolotl.integrations.liger.LigerPlugin"
#define AX_KERNELS "axolotl.integrations.kernels.KernelsPlugin"
static const struct fg__jf_vmap m_ax_plugins[] = {
    {AX_CCE "|" AX_CCE "," AX_LIGER "|" AX_LIGER "," AX_CCE "|" AX_CCE "," AX_KERNELS "|"
     AX_KERNELS "," AX_CCE, "loss=cce"},
    {AX_LIGER "|" AX_KERNELS "|" AX_LIGER "," AX_KERNELS "|" AX_KERNELS "," AX_LIGER, ""}, END};
static const struct fg__jf_vmap m_ok[] = {{"*", ""}, END};
static const struct fg__jf_vmap m_false_ok[] = {{"false|no|0", ""}, END};
static const struct fg__jf_vmap m_true_ok[] = {{"true|yes|1", ""}, END};
static const struct fg__jf_vmap m_precompute[] = {{"true|yes|1", "ref-model=none"},
                                                  {"false|no|0", ""}, END};
static const struct fg__jf_vmap m_tt_opt[] = {
    {"torch.optim.AdamW", "optimizer=adamw"},
    {"bitsandbytes.optim.PagedAdamW8bit|bitsandbytes.optim.AdamW8bit|torchao.optim.AdamW8bit",
     "optimizer=adamw-8bit"},
    {"bitsandbytes.optim.PagedAdamW|bitsandbytes.optim.PagedAdamW32bit", "optimizer=paged-adamw"},
    {"torch.optim.SGD", "optimizer=sgd"}, END};
static const struct fg__jf_vmap m_tt_fused[] = {
    {"true|yes|1", "+optimizer=adamw-fused"}, {"false|no|0", ""}, END};
static const struct fg__jf_vmap m_tt_loss[] = {
    {"torchtune.modules.loss.CEWithChunkedOutputLoss", "chunked-ce=yes"},
    {"torchtune.modules.loss.LinearCrossEntropyLoss", "loss=linear-ce"},
    {"torch.nn.CrossEntropyLoss", "chunked-ce=no"},
    /* the preference losses work on the policy's log-probs: the trainer (dpo) sizes them */
    {"torchtune.rlhf.loss.DPOLoss|torchtune.rlhf.loss.RSOLoss|torchtune.rlhf.loss.IPOLoss|"
     "torchtune.rlhf.loss.SimPOLoss|torchtune.rlhf.loss.PPOLoss", ""}, END};
static const struct fg__jf_vmap m_tt_dtype[] = {
    {"bf16", "precision=bf16"}, {"fp32", "precision=fp32"}, END};
/* axolotl activation_offloading: true, legacy (the older CPU offload) or disk */
static const struct fg__jf_vmap m_offload_on[] = {
    {"true|yes|1|legacy|disk", "act-offload=yes"}, {"false|no|0", ""}, END};
static const struct fg__jf_vmap m_dp1[] = {{"1", ""}, END};
static const struct fg__jf_vmap m_reshard[] = {
    {"true|yes|1", "zero=3"}, {"false|no|0", "zero=2"}, END};
static const struct fg__jf_vmap m_offload_params[] = {
    {"true|yes|1", "offload=params"}, {"false|no|0", ""}, END};

static const struct fg__jf_row rows[] = {
    /* the model */
    {.fmts = F(TRL) | F(LLAMA_FACTORY) | F(TRANSFORMERS),
     .key = "model_name_or_path",
     .assign = "model=$"},
    {.fmts = F(AXOLOTL), .key = "base_model", .assign = "model=$"},
    /* batch, length, accumulation */
    {.fmts = TA, .key = "per_device_train_batch_size", .assign = "batch=$"},
    {.fmts = F(AXOLOTL), .key = "micro_batch_size", .assign = "batch=$"},
    {.fmts = F(TORCHTUNE), .key = "batch_size", .assign = "batch=$"},
    {.fmts = TA | F(AXOLOTL) | F(TORCHTUNE),
     .key = "gradient_accumulation_steps",
     .assign = "grad-accum=$",
     .soft = true},
    {.fmts = F(TRL),
     .key = "max_length",
     .assign = "seq-len=$",
     .note = "no truncation: the longest sample decides the length"},
    {.fmts = F(TRL),
     .key = "max_seq_length",
     .assign = "seq-len=$",
     .note = "no truncation: the longest sample decides the length"},
    {.fmts = F(AXOLOTL), .key = "sequence_len", .assign = "seq-len=$"},
    {.fmts = F(LLAMA_FACTORY), .key = "cutoff_len", .assign = "seq-len=$"},
    {.fmts = F(TORCHTUNE),
     .key = "tokenizer.max_seq_len",
     .assign = "seq-len=$",
     .note = "no truncation: the longest sample decides the length"},
    /* checkpointing, offload of activations */
    {.fmts = TA, .key = "gradient_checkpointing", .map = m_ckpt},
    {.fmts = F(AXOLOTL), .key = "gradient_checkpointing", .map = m_ckpt_ax},
    {.fmts = F(LLAMA_FACTORY), .key = "disable_gradient_checkpointing", .map = m_no_ckpt},
    {.fmts = F(TORCHTUNE), .key = "enable_activation_checkpointing", .map = m_ckpt},
    {.fmts = F(TORCHTUNE), .key = "enable_activation_offloading", .map = m_offload_on},
    {.fmts = F(AXOLOTL), .key = "activation_offloading", .map = m_offload_on},
    {.fmts = TA, .key = "fsdp_config.activation_checkpointing", .map = m_ckpt_on},
    {.fmts = F(AXOLOTL), .key = "fsdp_config.activation_checkpointing", .map = m_ckpt_on},
    /* precision */
    {.fmts = TA, .key = "bf16", .map = m_bf16},
    {.fmts = F(AXOLOTL), .key = "bf16", .map = m_bf16_ax},
    {.fmts = TA, .key = "fp16", .map = m_fp16},
    {.fmts = F(AXOLOTL), .key = "fp16", .map = m_fp16_ax},
    {.fmts = F(AXOLOTL), .key = "bfloat16", .map = m_pure_bf16},
    {.fmts = F(TRL) | F(TRANSFORMERS), .key = "dtype", .map = m_dtype_trl,
     .note = "the checkpoint's own dtype (auto) or fp16 weights: give --precision"},
    {.fmts = F(TRL) | F(TRANSFORMERS), .key = "torch_dtype", .map = m_dtype_trl,
     .note = "the checkpoint's own dtype (auto) or fp16 weights: give --precision"},
    {.fmts = F(TRL) | F(TRANSFORMERS), .key = "model_init_kwargs.dtype", .map = m_dtype_trl,
     .note = "the checkpoint's own dtype (auto) or fp16 weights: give --precision"},
    {.fmts = F(TRL) | F(TRANSFORMERS), .key = "model_init_kwargs.torch_dtype", .map = m_dtype_trl,
     .note = "the checkpoint's own dtype (auto) or fp16 weights: give --precision"},
    {.fmts = F(AXOLOTL),
     .key = "fp8",
     .map = m_false_ok,
     .note = "torchao float8 linears (schemas/config.py:568): not modelled"},
    {.fmts = F(LLAMA_FACTORY), .key = "pure_bf16", .map = m_pure_bf16},
    {.fmts = F(TORCHTUNE), .key = "dtype", .map = m_tt_dtype},
    /* optimizer and loss */
    {.fmts = TA, .key = "optim", .map = m_optim},
    {.fmts = F(AXOLOTL), .key = "optimizer", .map = m_optim},
    {.fmts = F(TORCHTUNE), .key = "optimizer._component_", .map = m_tt_opt},
    {.fmts = F(TORCHTUNE), .key = "optimizer.fused", .map = m_tt_fused},
    {.fmts = F(TORCHTUNE), .key = "optimizer_in_bwd", .map = m_in_bwd},
    {.fmts = F(TORCHTUNE), .key = "loss._component_", .map = m_tt_loss},
    {.fmts = F(TRL), .key = "loss_type", .map = m_loss_type},
    {.fmts = F(TRL) | F(TRANSFORMERS), .key = "use_liger_kernel", .map = m_liger},
    {.fmts = F(AXOLOTL), .key = "liger_fused_linear_cross_entropy", .map = m_liger},
    {.fmts = F(AXOLOTL), .key = "cut_cross_entropy", .map = m_cce},
    {.fmts = F(AXOLOTL), .key = "plugins", .map = m_ax_plugins},
    {.fmts = F(LLAMA_FACTORY), .key = "enable_liger_kernel", .map = m_liger},
    {.fmts = F(LLAMA_FACTORY), .key = "use_unsloth", .map = m_unsloth},
    /* attention */
    {.fmts = F(TRL) | F(TRANSFORMERS) | F(AXOLOTL), .key = "attn_implementation", .map = m_attn},
    {.fmts = F(AXOLOTL), .key = "flash_attention", .map = m_flash},
    {.fmts = F(AXOLOTL), .key = "sdp_attention", .map = m_flash},
    {.fmts = F(AXOLOTL), .key = "xformers_attention", .map = m_flash},
    {.fmts = F(LLAMA_FACTORY), .key = "flash_attn", .map = m_lf_attn},
    /* LoRA and quantization */
    {.fmts = F(TRL), .key = "use_peft", .map = m_peft},
    {.fmts = F(TRL), .key = "lora_r", .assign = "lora-rank=$"},
    {.fmts = F(AXOLOTL), .key = "lora_r", .assign = "lora-rank=$"},
    {.fmts = F(LLAMA_FACTORY), .key = "lora_rank", .assign = "lora-rank=$"},
    {.fmts = F(TORCHTUNE), .key = "model.lora_rank", .assign = "lora-rank=$"},
    {.fmts = F(TRL) | F(AXOLOTL), .key = "lora_target_modules", .assign = "lora-targets=$"},
    {.fmts = F(AXOLOTL), .key = "lora_target_linear", .map = m_linear},
    {.fmts = F(LLAMA_FACTORY), .key = "lora_target", .map = m_lf_target},
    {.fmts = F(TORCHTUNE), .key = "model.lora_attn_modules", .hook = H_TT_TARGETS},
    {.fmts = F(TORCHTUNE), .key = "model.apply_lora_to_mlp", .map = m_ok},
    {.fmts = F(TORCHTUNE), .key = "model.apply_lora_to_output", .map = m_ok},
    {.fmts = F(TORCHTUNE), .key = "model._component_", .hook = H_TT_MODEL},
    {.fmts = F(AXOLOTL), .key = "adapter", .map = m_adapter},
    {.fmts = F(LLAMA_FACTORY), .key = "finetuning_type", .map = m_finetune},
    {.fmts = F(TRL) | F(AXOLOTL), .key = "load_in_4bit", .map = m_4bit},
    {.fmts = F(TRL) | F(AXOLOTL), .key = "load_in_8bit", .map = m_8bit},
    {.fmts = F(TRL), .key = "use_bnb_nested_quant", .map = m_nested},
    {.fmts = F(AXOLOTL), .key = "bnb_4bit_use_double_quant", .map = m_nested},
    {.fmts = F(TRL) | F(AXOLOTL), .key = "bnb_4bit_quant_type", .map = m_nf4},
    {.fmts = F(LLAMA_FACTORY), .key = "quantization_bit", .hook = H_LF_QUANT},
    {.fmts = F(LLAMA_FACTORY), .key = "double_quantization", .map = m_ok},
    {.fmts = F(TRL) | F(AXOLOTL) | F(LLAMA_FACTORY),
     .key = "use_dora",
     .map = m_false_ok,
     .note = "DoRA keeps a magnitude vector and a weight norm per adapted layer"},
    /* the layout: ZeRO, FSDP, offload, parallel sizes */
    {.fmts = TA | F(AXOLOTL), .key = "deepspeed", .assign = "deepspeed", .hook = H_FILE},
    {.fmts = TA | F(AXOLOTL), .key = "fsdp", .hook = H_FSDP},
    {.fmts = F(AXOLOTL), .key = "fsdp_config.reshard_after_forward", .map = m_reshard},
    {.fmts = F(AXOLOTL), .key = "fsdp_config.offload_params", .map = m_offload_params},
    {.fmts = F(AXOLOTL), .key = "tensor_parallel_size", .assign = "tp=$"},
    {.fmts = F(AXOLOTL), .key = "context_parallel_size", .assign = "cp=$"},
    /* axolotl's ParallelismConfig sizes (schemas/config.py): FSDP shards over dp_shard_size;
     * dp_replicate_size > 1 is HSDP, a shard group smaller than the data-parallel ranks */
    {.fmts = F(AXOLOTL), .key = "dp_shard_size", .map = m_ok},
    {.fmts = F(AXOLOTL),
     .key = "dp_replicate_size",
     .map = m_dp1,
     .note = "HSDP: FSDP shards within dp_shard_size ranks, replicated across the rest"},
    {.fmts = F(AXOLOTL), .key = "fsdp_version", .map = m_ok},
    /* training recipes fitgate models one sequence per sample for */
    {.fmts = F(LLAMA_FACTORY),
     .key = "stage",
     .map = m_stage,
     .note = "preference and RL stages hold chosen and rejected sequences and a reference model"},
    /* a preference / RL trainer's keys: the trainer is told by the file (jobfile_rows.c
     * trainers[]) or --mode; each sets its option where that trainer takes it */
    {.fmts = F(TRL), .key = "beta", .map = m_beta},
    {.fmts = F(AXOLOTL), .key = "trl.beta", .map = m_beta},
    {.fmts = F(AXOLOTL), .key = "rl_beta", .map = m_beta},
    {.fmts = F(LLAMA_FACTORY), .key = "pref_beta", .map = m_beta},
    {.fmts = F(TRL), .key = "max_prompt_length", .assign = "max-prompt-length=$"},
    {.fmts = F(AXOLOTL), .key = "max_prompt_len", .assign = "max-prompt-length=$"},
    {.fmts = F(TRL), .key = "max_completion_length", .assign = "max-completion-length=$"},
    {.fmts = F(AXOLOTL), .key = "trl.max_completion_length", .assign = "max-completion-length=$"},
    {.fmts = F(LLAMA_FACTORY), .key = "max_new_tokens", .assign = "max-completion-length=$"},
    {.fmts = F(TRL), .key = "num_generations", .assign = "num-generations=$"},
    {.fmts = F(AXOLOTL), .key = "trl.num_generations", .assign = "num-generations=$"},
    {.fmts = F(TRL), .key = "use_vllm", .map = m_vllm},
    {.fmts = F(AXOLOTL), .key = "trl.use_vllm", .map = m_vllm},
    {.fmts = F(TRL), .key = "vllm_mode", .map = m_vllm_mode},
    {.fmts = F(AXOLOTL), .key = "trl.vllm_mode", .map = m_vllm_mode},
    {.fmts = F(TRL), .key = "vllm_gpu_memory_utilization", .assign = "vllm-gpu-util=$"},
    {.fmts = F(AXOLOTL), .key = "rl", .map = m_rl_ax,
     .note = "a trainer fitgate does not model (schemas/enums.py RLType)"},
    /* weights trained beside the adapters, and other ways of choosing what trains */
    {.fmts = F(TRL),
     .key = "lora_modules_to_save",
     .note = "whole modules trained beside the adapters (ModelConfig, model_config.py:127)"},
    {.fmts = F(AXOLOTL),
     .key = "lora_modules_to_save",
     .note = "whole modules trained beside the adapters (schemas/peft.py:62)"},
    {.fmts = F(LLAMA_FACTORY),
     .key = "additional_target",
     .note = "whole modules trained beside the adapters (finetuning_args.py:59)"},
    {.fmts = F(AXOLOTL),
     .key = "unfrozen_parameters",
     .note = "only the named parameters train (schemas/config.py:654)"},
    {.fmts = F(LLAMA_FACTORY),
     .key = "use_galore",
     .map = m_false_ok,
     .note = "GaLore projects gradients and optimizer states (finetuning_args.py:266)"},
    {.fmts = F(LLAMA_FACTORY),
     .key = "use_apollo",
     .map = m_false_ok,
     .note = "APOLLO projects optimizer states (finetuning_args.py:305)"},
    {.fmts = F(LLAMA_FACTORY),
     .key = "use_badam",
     .map = m_false_ok,
     .note = "BAdam trains one block at a time (finetuning_args.py:356)"},
    {.fmts = F(TRL) | F(AXOLOTL),
     .key = "lora_target_parameters",
     .note = "LoRA on parameters (fused MoE experts): peft target_parameters"},
    {.fmts = F(LLAMA_FACTORY), .key = "pref_loss", .map = m_ok},
    /* dpo_config.py:216, kto_config.py:174: the reference's log-probs are computed once
     * before training, no reference model is kept for the steps */
    {.fmts = F(TRL), .key = "precompute_ref_log_probs", .map = m_precompute},
    {.fmts = F(TRL),
     .key = "generation_batch_size",
     .note = "completions generated per step (grpo_config.py:511)"},
    {.fmts = F(TRL),
     .key = "ds3_gather_for_generation",
     .map = m_true_ok,
     .note = "ZeRO-3 weights not gathered for generation (grpo_config.py:492)"},
    /* torchtune's distributed recipes (full_finetune_distributed.py:145, :382) */
    {.fmts = F(TORCHTUNE), .key = "fsdp_cpu_offload", .map = m_offload_params},
    {.fmts = F(TORCHTUNE), .key = "fsdp_reshard_after_forward", .map = m_reshard},
};

/* What a format does when its file leaves a key out (the config class's own default); a
 * NULL key: always. */
static const struct fg__jf_default defaults[] = {
    {F(TRL), "gradient_checkpointing", "grad-ckpt=yes", "SFTConfig default", false},
    {F(TRL), "max_length", "seq-len=1024", "SFTConfig default", false},
    /* trl/trainer/utils.py get_peft_config: target_modules=lora_target_modules, None by
     * default, so peft's per-model mapping: q_proj and v_proj for the llama-style decoders */
    {F(TRL), "lora_target_modules", "lora-targets=qv", "peft's default for the model", true},
    {TA, "per_device_train_batch_size", "batch=8", "TrainingArguments default", false},
    {F(TRANSFORMERS), "gradient_checkpointing", "grad-ckpt=no", "TrainingArguments default", false},
    {F(AXOLOTL), "gradient_checkpointing", "grad-ckpt=no", "axolotl default", false},
    {F(AXOLOTL), "sequence_len", "seq-len=512", "axolotl default", false},
    {F(AXOLOTL), "bf16", "~precision=bf16", "axolotl default bf16: auto, resolve_dtype", false},
    {F(LLAMA_FACTORY), "disable_gradient_checkpointing", "grad-ckpt=yes", "LLaMA-Factory default", false},
    {F(LLAMA_FACTORY), "cutoff_len", "seq-len=2048", "LLaMA-Factory default", false},
    {F(TORCHTUNE), "enable_activation_checkpointing", "grad-ckpt=no", "torchtune recipe default", false},
    {SERVE, NULL, "mode=serve", "a serving engine's config", false},
};

/*
 * The trainer a file is written for (fg__jf_trainer_of): a key only that trainer's config
 * class has, or the value of the key that names it.  TRL 1.9 (trl/trainer/grpo_config.py
 * num_generations, use_vllm, vllm_mode; kto_config.py desirable_weight; reward_config.py
 * center_rewards_coefficient; dpo_config.py precompute_ref_log_probs, rpo_alpha), open-r1's
 * GRPOScriptArguments (reward_funcs), axolotl `rl` (schemas/enums.py RLType), LLaMA-Factory
 * `stage` and `pref_loss` (hparams/finetuning_args.py), torchtune's DPO loss and PPO
 * recipe's reward model (recipes/configs/llama3_1/8B_lora_dpo.yaml,
 * mistral/7B_full_ppo_low_memory.yaml).  A "weak" key (beta,
 * max_prompt_length: DPO, ORPO and CPO share them) counts only when the folder the file sits
 * in names no trainer (open-r1 and alignment-handbook keep recipes/MODEL/dpo/config.yaml).
 */
static const struct fg__jf_trainer trainers[] = {
    {F(TRL), "num_generations", "*", "grpo", false},
    {F(TRL), "use_vllm", "true|yes|1", "grpo", false},
    {F(TRL), "vllm_mode", "*", "grpo", false},
    {F(TRL), "reward_funcs", "*", "grpo", false},
    {F(TRL), "desirable_weight", "*", "kto", false},
    {F(TRL), "undesirable_weight", "*", "kto", false},
    {F(TRL), "center_rewards_coefficient", "*", "reward", false},
    {F(TRL), "precompute_ref_log_probs", "*", "dpo", false},
    {F(TRL), "rpo_alpha", "*", "dpo", false},
    {F(TRL), "beta", "*", "dpo", true},
    {F(TRL), "max_prompt_length", "*", "dpo", true},
    {F(AXOLOTL), "rl", "dpo|ipo", "dpo", false},
    {F(AXOLOTL), "rl", "kto", "kto", false},
    {F(AXOLOTL), "rl", "orpo|simpo", "orpo", false},
    {F(AXOLOTL), "rl", "grpo", "grpo", false},
    {F(LLAMA_FACTORY), "pref_loss", "orpo|simpo", "orpo", false},
    {F(LLAMA_FACTORY), "stage", "dpo", "dpo", false},
    {F(LLAMA_FACTORY), "stage", "kto", "kto", false},
    {F(LLAMA_FACTORY), "stage", "rm", "reward", false},
    {F(LLAMA_FACTORY), "stage", "ppo", "ppo", false},
    {F(TORCHTUNE), "loss._component_",
     "torchtune.rlhf.loss.DPOLoss|torchtune.rlhf.loss.RSOLoss|torchtune.rlhf.loss.IPOLoss|"
     "torchtune.rlhf.loss.SimPOLoss|torchtune.modules.rlhf.loss.DPOLoss",
     "dpo", false},
    {F(TORCHTUNE), "reward_and_value_model._component_", "*", "ppo", false},
};

const struct fg__jf_trainer *fg__jf_trainer_of(const struct fg_jobfile *f, bool weak)
{
    for (size_t i = 0; i < sizeof trainers / sizeof trainers[0]; i++) {
        const struct fg_jobfile_key *k;
        if (!(trainers[i].fmts & (1u << f->format)) || trainers[i].weak != weak ||
            !(k = fg_jobfile_get(f, trainers[i].key)) || k->null ||
            !fg__jf_match(trainers[i].match, k->value))
            continue;
        return &trainers[i];
    }
    return NULL;
}

/* Keys of files that sit beside the jobs in the frameworks' example folders but describe no
 * training job (of the format named, or of any: 0): what each is, for the message. */
static const struct {
    unsigned fmts;
    const char *key, *what;
} not_jobs[] = {
    {0, "infer_backend", "a LLaMA-Factory inference config (llamafactory-cli chat / api)"},
    {0, "export_dir", "a LLaMA-Factory export config (llamafactory-cli export merges adapters)"},
    {0, "peft_config.export_dir", "a LLaMA-Factory export config (merges adapters)"},
    {F(LLAMA_FACTORY), "predict_with_generate",
     "a LLaMA-Factory prediction config (do_predict generates, it does not train)"},
    {0, "dockerfile_commands", "an axolotl cloud launcher config (axolotl train --cloud)"},
    {0, "provider", "an axolotl cloud launcher config (axolotl train --cloud)"},
    {0, "pass_rate_min", "an open-r1 pass-rate filtering config (it generates, it does not train)"},
    {F(TORCHTUNE), "tasks", "a torchtune evaluation config (tune run eleuther_eval)"},
    {F(TORCHTUNE), "max_new_tokens", "a torchtune generation config (tune run generate)"},
};

const char *fg__jf_not_a_job(const struct fg_jobfile *f, enum fg_jobfile_format fmt)
{
    for (size_t i = 0; i < sizeof not_jobs / sizeof not_jobs[0]; i++)
        if ((!not_jobs[i].fmts || (not_jobs[i].fmts & (1u << fmt))) &&
            fg_jobfile_get(f, not_jobs[i].key))
            return not_jobs[i].what;
    /* torchtune's quantization recipe config: a model and a quantizer, nothing to train */
    if (fmt == FG_JF_TORCHTUNE && fg_jobfile_get(f, "quantizer._component_") &&
        !fg_jobfile_get(f, "optimizer._component_"))
        return "a torchtune quantization config (tune run quantize)";
    return NULL;
}

const char *fg_jobfile_format_name(enum fg_jobfile_format f)
{
    return (unsigned)f < FG_JF_COUNT ? formats[f].name : NULL;
}

enum fg_jobfile_format fg_jobfile_format_find(const char *name, size_t n)
{
    for (unsigned f = 1; f < FG_JF_COUNT; f++) {
        if (strlen(formats[f].name) == n && !strncasecmp(formats[f].name, name, n))
            return (enum fg_jobfile_format)f;
        for (const char *a = formats[f].aliases; *a;) {
            size_t l = strcspn(a, ",");
            if (l == n && !strncasecmp(a, name, n))
                return (enum fg_jobfile_format)f;
            a += l + (a[l] == ',');
        }
    }
    return FG_JF_AUTO;
}

bool fg__jf_match(const char *pattern, const char *v)
{
    if (!strcmp(pattern, "*"))
        return true;
    size_t n = strlen(v);
    for (const char *p = pattern; *p;) {
        size_t l = strcspn(p, "|");
        if (l == n && !strncasecmp(p, v, n))
            return true;
        p += l + (p[l] == '|');
    }
    return false;
}

/* The trainers' rows, then the launchers' (jobfile_rows_launch.c). */
const struct fg__jf_row *fg__jf_row_at(size_t i)
{
    size_t n = sizeof rows / sizeof rows[0];
    return i < n ? &rows[i] : i - n < fg__jf_launch_n ? &fg__jf_launch_rows[i - n] : NULL;
}

/*
 * The rows chained by their key's first character ('-' as '_'), in table order: built once
 * per process in one pass (no sort), so a file's keys are compared with the few rows that
 * start as they do.  chain_head[c] and chain_next[i] hold row index + 1; 0 ends a chain.
 */
#define N_ROWS (sizeof rows / sizeof rows[0])
static unsigned short chain_head[128], chain_next[N_ROWS + 256];
static pthread_once_t chain_once = PTHREAD_ONCE_INIT;

static int first_char(const char *k)
{
    return (k[0] == '-' ? '_' : (unsigned char)k[0]) & 127;
}

static void chain_build(void)
{
    const struct fg__jf_row *r;
    size_t n = 0;
    while (fg__jf_row_at(n) && n < sizeof chain_next / sizeof chain_next[0])
        n++;
    for (size_t i = n; i-- > 0;) {
        int c = first_char((r = fg__jf_row_at(i))->key);
        chain_next[i] = chain_head[c];
        chain_head[c] = (unsigned short)(i + 1);
    }
}

/* The formats of every row for path (fmt_only: the first row of fmt alone, into *first). */
static unsigned chain_scan(const char *path, int fmt, const struct fg__jf_row **first)
{
    unsigned fmts = 0;
    pthread_once(&chain_once, chain_build);
    for (unsigned i = chain_head[first_char(path)]; i; i = chain_next[i - 1]) {
        const struct fg__jf_row *r = fg__jf_row_at(i - 1);
        if (fmt >= 0 && !(r->fmts & (1u << fmt)))
            continue;
        if (!fg_jobfile_key_is(r->key, path))
            continue;
        if (fmt >= 0) {
            *first = r;
            return r->fmts;
        }
        fmts |= r->fmts;
    }
    return fmts;
}

const struct fg__jf_row *fg__jf_row_for(enum fg_jobfile_format fmt, const char *path)
{
    const struct fg__jf_row *r = NULL;
    chain_scan(path, (int)fmt, &r);
    return r;
}

unsigned fg__jf_rows_fmts(const char *path)
{
    return chain_scan(path, -1, NULL);
}

const struct fg__jf_default *fg__jf_defaults(size_t *n)
{
    *n = sizeof defaults / sizeof defaults[0];
    return defaults;
}

const char *fg__jf_framework(enum fg_jobfile_format fmt)
{
    return (unsigned)fmt < FG_JF_COUNT ? formats[fmt].framework : "";
}

int fg__jf_rank(enum fg_jobfile_format fmt)
{
    return (unsigned)fmt < FG_JF_COUNT ? formats[fmt].rank : 0;
}
