/*
 * jobfile_detect.c - the format a file's own keys tell (fg_jobfile_detect, jobfile.h).
 *
 * Which formats read a key follows from the rows (jobfile_rows.c, jobfile_rows_launch.c:
 * the memory keys) and from the identity table below (keys of the same classes that change
 * no memory but name the format: accelerate's compute_environment, vLLM's
 * uvicorn-log-level).  A key only one format reads is a vote for it; keys several read
 * (TrainingArguments' own fields, read by TRL and LLaMA-Factory too; the options vLLM and
 * SGLang both take) are no vote.  The format with the most votes is the file's when no
 * other has as many; equal votes are ambiguous, and so is a file of shared keys only
 * (vllm-project/vllm:tests/config/test_config.yaml is also a valid SGLang config), except
 * that keys of TrainingArguments alone are transformers', the class TRL's and
 * LLaMA-Factory's extend.
 * A file with none of these keys is not a job config.
 */
#include <stdio.h>
#include <string.h>

#include "job/jobfile_rows.h"

#define F(x) (1u << FG_JF_##x)
#define TA (F(TRL) | F(TRANSFORMERS) | F(LLAMA_FACTORY))
#define SERVE (F(VLLM) | F(SGLANG))

/* A key ending in '.' names every key under it. */
static const struct {
    unsigned fmts;
    const char *key;
} idents[] = {
    /* TRL SFTConfig / ModelConfig / ScriptArguments (trl/trainer/sft_config.py,
     * trl/trainer/model_config.py, trl/scripts/utils.py) */
    {F(TRL), "dataset_name"},
    {F(TRL), "dataset_text_field"},
    {F(TRL), "dataset_train_split"},
    {F(TRL), "packing"},
    {F(TRL), "completion_only_loss"},
    {F(TRL), "assistant_only_loss"},
    {F(TRL), "model_init_kwargs."},
    {F(TRL), "lora_task_type"},
    {F(TRL), "model_revision"},
    {F(TRL), "dataset_num_proc"},
    {F(TRL), "dataset_mixture."},
    {F(TRL), "dataset_config"},
    /* axolotl (src/axolotl/utils/schemas/config.py) */
    {F(AXOLOTL), "base_model"},
    {F(AXOLOTL), "micro_batch_size"},
    {F(AXOLOTL), "sequence_len"},
    {F(AXOLOTL), "adapter"},
    {F(AXOLOTL), "lora_target_linear"},
    {F(AXOLOTL), "val_set_size"},
    {F(AXOLOTL), "dataset_prepared_path"},
    {F(AXOLOTL), "sample_packing"},
    {F(AXOLOTL), "num_epochs"},
    {F(AXOLOTL), "special_tokens."},
    {F(AXOLOTL), "evals_per_epoch"},
    {F(AXOLOTL), "saves_per_epoch"},
    {F(AXOLOTL), "wandb_project"},
    {F(AXOLOTL), "plugins"},
    /* LLaMA-Factory (src/llamafactory/hparams) */
    {F(LLAMA_FACTORY), "finetuning_type"},
    {F(LLAMA_FACTORY), "cutoff_len"},
    {F(LLAMA_FACTORY), "lora_target"},
    {F(LLAMA_FACTORY), "template"},
    {F(LLAMA_FACTORY), "quantization_bit"},
    {F(LLAMA_FACTORY), "dataset_dir"},
    {F(LLAMA_FACTORY), "max_samples"},
    {F(LLAMA_FACTORY), "overwrite_cache"},
    {F(LLAMA_FACTORY), "plot_loss"},
    /* LLaMA-Factory v1 (src/llamafactory/v1/config): model_class, the *_config blocks */
    {F(LLAMA_FACTORY), "model_class"},
    {F(LLAMA_FACTORY), "peft_config."},
    {F(LLAMA_FACTORY), "dist_config."},
    {F(LLAMA_FACTORY), "kernel_config."},
    {F(LLAMA_FACTORY), "train_dataset"},
    {F(LLAMA_FACTORY), "sample_backend"},
    /* torchtune recipe configs: the builders, and the recipes' own keys */
    {F(TORCHTUNE), "checkpointer."},
    {F(TORCHTUNE), "metric_logger."},
    {F(TORCHTUNE), "enable_activation_checkpointing"},
    {F(TORCHTUNE), "enable_activation_offloading"},
    {F(TORCHTUNE), "max_steps_per_epoch"},
    {F(TORCHTUNE), "log_every_n_steps"},
    {F(TORCHTUNE), "clip_grad_norm"},
    /* DeepSpeed (runtime/config.py, runtime/constants.py) */
    {F(DEEPSPEED), "zero_optimization."},
    {F(DEEPSPEED), "train_batch_size"},
    {F(DEEPSPEED), "steps_per_print"},
    {F(DEEPSPEED), "wall_clock_breakdown"},
    {F(DEEPSPEED), "zero_allow_untested_optimizer"},
    {F(DEEPSPEED), "gradient_clipping"},
    {F(DEEPSPEED), "prescale_gradients"},
    {F(DEEPSPEED), "fp16."},
    {F(DEEPSPEED), "bf16."},
    {F(DEEPSPEED), "optimizer.params."},
    {F(DEEPSPEED), "scheduler.params."},
    {F(DEEPSPEED), "flops_profiler."},
    {F(DEEPSPEED), "tensorboard."},
    {F(DEEPSPEED), "autotuning."},
    /* accelerate ClusterConfig (commands/config/config_args.py) */
    {F(ACCELERATE), "compute_environment"},
    {F(ACCELERATE), "machine_rank"},
    {F(ACCELERATE), "main_training_function"},
    {F(ACCELERATE), "num_machines"},
    {F(ACCELERATE), "rdzv_backend"},
    {F(ACCELERATE), "same_network"},
    {F(ACCELERATE), "main_process_ip"},
    {F(ACCELERATE), "main_process_port"},
    {F(ACCELERATE), "downcast_bf16"},
    {F(ACCELERATE), "enable_cpu_affinity"},
    {F(ACCELERATE), "tpu_env"},
    {F(ACCELERATE), "deepspeed_config."},
    {F(ACCELERATE), "parallelism_config."},
    {F(ACCELERATE), "fp8_config."},
    {F(ACCELERATE), "megatron_lm_config."},
    {F(ACCELERATE), "dynamo_config."},
    /* vLLM's own options (EngineArgs, the OpenAI server's FrontendArgs) */
    {F(VLLM), "uvicorn-log-level"},
    {F(VLLM), "enable-auto-tool-choice"},
    {F(VLLM), "disable-log-requests"},
    {F(VLLM), "enable-prefix-caching"},
    {F(VLLM), "enable-chunked-prefill"},
    {F(VLLM), "swap-space"},
    {F(VLLM), "block-size"},
    {F(VLLM), "max-log-len"},
    /* SGLang's own (ServerArgs) */
    {F(SGLANG), "enable-metrics"},
    {F(SGLANG), "log-requests"},
    {F(SGLANG), "disable-radix-cache"},
    {F(SGLANG), "page-size"},
    {F(SGLANG), "skip-server-warmup"},
    {F(SGLANG), "watchdog-timeout"},
    {F(SGLANG), "schedule-policy"},
    {F(SGLANG), "random-seed"},
    /* both serving engines take these */
    {SERVE, "served-model-name"},
    {SERVE, "host"},
    {SERVE, "port"},
    {SERVE, "trust-remote-code"},
    {SERVE, "tokenizer"},
    {SERVE, "api-key"},
    {SERVE, "chat-template"},
    {SERVE, "tool-call-parser"},
    {SERVE, "reasoning-parser"},
    {SERVE, "attention-backend"},
};

static bool prefix_is(const char *prefix, size_t n, const char *path)
{
    for (size_t i = 0; i < n; i++)
        if (!path[i] || (path[i] == '-' ? '_' : path[i]) != (prefix[i] == '-' ? '_' : prefix[i]))
            return false;
    return true;
}

unsigned fg__jf_readers(const char *path, bool *ident)
{
    unsigned fmts = fg__jf_rows_fmts(path), by_ident = 0;
    int c0 = path[0] == '-' ? '_' : path[0];
    for (size_t i = 0; i < sizeof idents / sizeof idents[0]; i++) {
        const char *k = idents[i].key;
        if ((k[0] == '-' ? '_' : k[0]) != c0)
            continue;
        size_t n = strlen(k);
        if (k[n - 1] == '.' ? prefix_is(k, n, path) : fg_jobfile_key_is(k, path))
            by_ident |= idents[i].fmts;
    }
    size_t len = strlen(path); /* torchtune's builders: model._component_, loss._component_ */
    if (len > 12 && !strcmp(path + len - 12, "._component_"))
        by_ident |= F(TORCHTUNE);
    *ident = by_ident != 0;
    return (fmts | by_ident) & ~F(AUTO);
}

static unsigned popcount(unsigned v)
{
    unsigned n = 0;
    for (; v; v &= v - 1)
        n++;
    return n;
}

/* "vllm:NAME or sglang:NAME" for the formats in set. */
static void prefixes(unsigned set, const char *name, char *buf, size_t cap)
{
    size_t off = 0, left = popcount(set);
    buf[0] = '\0';
    for (unsigned k = 1; k < FG_JF_COUNT && off < cap; k++) {
        if (!(set & (1u << k)))
            continue;
        left--;
        int w = snprintf(buf + off, cap - off, "%s%s:%s", !off ? "" : left ? ", " : " or ",
                         fg_jobfile_format_name((enum fg_jobfile_format)k), name);
        if (w < 0)
            break;
        off += (size_t)w;
    }
}

int fg_jobfile_detect_format(const struct fg_jobfile *f, enum fg_jobfile_format *out,
                             struct fg_err *err)
{
    /* votes: keys only one format reads; strong: of them, identity keys (a memory key alone,
     * batch_size or dtype, is a common name that other tools' files use too) */
    unsigned votes[FG_JF_COUNT] = {0}, strong[FG_JF_COUNT] = {0}, shared = 0, common = ~0u;
    const char *shared_key = NULL;
    char list[600];
    *out = FG_JF_AUTO;
    for (size_t i = 0; i < f->n; i++) {
        bool ident = false;
        unsigned r = fg__jf_readers(f->keys[i].path, &ident);
        if (popcount(r) == 1) {
            votes[__builtin_ctz(r)]++;
            strong[__builtin_ctz(r)] += ident;
        } else if (r) {
            shared |= r;
            common &= r;
            if (!shared_key)
                shared_key = f->keys[i].path;
        }
    }
    unsigned best = 0, tied = 0;
    for (unsigned k = 1; k < FG_JF_COUNT; k++) {
        if (!strong[k] && votes[k] < 2)
            continue;
        if (votes[k] > best) {
            best = votes[k];
            tied = 1u << k;
        } else if (best && votes[k] == best) {
            tied |= 1u << k;
        }
    }
    if (best && popcount(tied) == 1) {
        *out = (enum fg_jobfile_format)__builtin_ctz(tied);
        return 0;
    }
    if (!best && shared && (shared & F(TRANSFORMERS))) {
        *out = FG_JF_TRANSFORMERS;
        return 0;
    }
    if (best || shared) {
        /* the formats every shared key belongs to, when some do */
        unsigned set = best ? tied : shared & common ? shared & common : shared;
        prefixes(set, f->name, list, sizeof list);
        return fg_err_set(err, FG_E_INVAL, "config %.200s: its keys%s%.60s%s are read by more "
                          "than one format; name the one it is for: %s", f->name,
                          best ? "" : " (", best ? "" : shared_key, best ? "" : "...)", list);
    }
    /* no key of any framework: the job cannot be checked (OnError), as a file fitgate does
     * not judge (jobfile_apply.c); an ambiguous one is the job's to name (FG_E_INVAL) */
    return fg_err_set(err, FG_E_UNSUPPORTED, "config %.200s is not a job config (not a training job, "
                      "nor a serving one): none of its keys "
                      "is one that trl, transformers, axolotl, llama-factory, torchtune, "
                      "deepspeed, accelerate, vllm or sglang reads; if it is one, name the "
                      "format (vllm:%.200s)", f->name, f->name);
}

enum fg_jobfile_format fg_jobfile_detect(const struct fg_jobfile *f)
{
    struct fg_err err = {0};
    enum fg_jobfile_format fmt;
    return fg_jobfile_detect_format(f, &fmt, &err) ? FG_JF_AUTO : fmt;
}
