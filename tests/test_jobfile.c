/*
 * test_jobfile.c - engine/job/jobfile.c, jobfile_rows.c, jobfile_apply.c: framework configs
 * read into flat keys, the format told by its keys, and the job filled from them, on the
 * frameworks' own example files (tests/fixtures/configs, PROVENANCE.md).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fileio.h"
#include "job/jobfile.h"
#include "job/jobfile_edit.h"
#include "job/jobfile_rows.h"
#include "job/jobspec.h"
#include "assess.h"
#include "hw/gpu.h"
#include "model/model.h"
#include "policy.h"
#include "support.h"

#define C "tests/fixtures/configs/"

static struct fg_jobfile *parse(const char *text)
{
    struct fg_jobfile *f = NULL;
    struct fg_err err = {0};
    int rc = fg_jobfile_parse(text, strlen(text), "t.yaml", &f, &err);
    if (rc)
        print_message("%s\n", err.detail);
    assert_int_equal(rc, 0);
    return f;
}

static int parse_fails(const char *text, const char *want)
{
    struct fg_jobfile *f = (struct fg_jobfile *)1;
    struct fg_err err = {0};
    int rc = fg_jobfile_parse(text, strlen(text), "t.yaml", &f, &err);
    assert_null(f);
    if (!strstr(err.detail, want))
        print_message("detail: %s\n", err.detail);
    assert_non_null(strstr(err.detail, want));
    return rc;
}

static void jobfile_parse_should_flatten_keys_with_their_lines(void **state)
{
    (void)state;
    struct fg_jobfile *f = parse("# c\nmodel:\n  _component_: x.lora_y\n  lora_attn_modules: "
                                 "['q_proj', 'v_proj']\nbatch_size: 2\nempty:\nq: \"null\"\n");
    const struct fg_jobfile_key *k = fg_jobfile_get(f, "model._component_");
    assert_non_null(k);
    assert_string_equal(k->value, "x.lora_y");
    assert_int_equal(k->line, 3);
    k = fg_jobfile_get(f, "model.lora_attn_modules");
    assert_true(k->list);
    assert_string_equal(k->value, "q_proj,v_proj");
    assert_true(fg_jobfile_get(f, "empty")->null);
    assert_false(fg_jobfile_get(f, "q")->null); /* a quoted "null" is a string */
    assert_int_equal(fg_jobfile_get(f, "batch_size")->line, 5);
    fg_jobfile_free(f);
}

static void jobfile_parse_should_read_json_through_cjson(void **state)
{
    (void)state;
    struct fg_jobfile *f = parse("{\n \"zero_optimization\": {\n  \"stage\": 3,\n"
                                 "  \"sub_group_size\": 1e9\n },\n \"bf16\": {\"enabled\": true}\n}");
    assert_string_equal(fg_jobfile_get(f, "zero_optimization.stage")->value, "3");
    assert_int_equal(fg_jobfile_get(f, "zero_optimization.stage")->line, 3);
    assert_string_equal(fg_jobfile_get(f, "zero_optimization.sub_group_size")->value,
                        "1000000000");
    assert_string_equal(fg_jobfile_get(f, "bf16.enabled")->value, "true");
    fg_jobfile_free(f);
}

static void jobfile_parse_should_follow_aliases_and_merge_keys(void **state)
{
    (void)state;
    struct fg_jobfile *f = parse("base: &b\n  lora_r: 8\n  sequence_len: 1024\n"
                                 "run:\n  <<: *b\n  lora_r: 16\nsame: *b\n");
    assert_string_equal(fg_jobfile_get(f, "run.lora_r")->value, "16"); /* own key wins */
    assert_string_equal(fg_jobfile_get(f, "run.sequence_len")->value, "1024");
    assert_string_equal(fg_jobfile_get(f, "same.lora_r")->value, "8");
    /* '-' and '_' alike, as vLLM and SGLang read them */
    fg_jobfile_free(f);
    f = parse("tensor_parallel_size: 2\n");
    assert_non_null(fg_jobfile_get(f, "tensor-parallel-size"));
    fg_jobfile_free(f);
}

static void jobfile_parse_should_refuse_hostile_input_with_the_bound(void **state)
{
    (void)state;
    char *deep = malloc(30000);
    assert_non_null(deep);
    strcpy(deep, "a: ");
    for (int i = 0; i < 10000; i++)
        strcat(deep + 3 + i, "[");
    assert_int_equal(parse_fails(deep, "nested deeper than 64 levels"), FG_E_RANGE);
    free(deep);
    /* a mapping bomb: ten keys of the level below, nine levels deep */
    char bomb[4096] = "a0: &a0 {k: v}\n";
    for (int i = 1; i < 10; i++) {
        char row[256];
        int n = snprintf(row, sizeof row, "a%d: &a%d {", i, i);
        for (int j = 0; j < 10; j++)
            n += snprintf(row + n, sizeof row - (size_t)n, "%sk%d: *a%d", j ? ", " : "", j, i - 1);
        snprintf(row + n, sizeof row - (size_t)n, "}\n");
        strcat(bomb, row);
    }
    struct fg_jobfile *f = (struct fg_jobfile *)1;
    struct fg_err err = {0};
    assert_int_equal(fg_jobfile_parse(bomb, strlen(bomb), "t.yaml", &f, &err), FG_E_RANGE);
    assert_null(f);
    assert_int_equal(parse_fails("- a\n- b\n", "not a mapping of keys"), FG_E_PARSE);
    assert_int_equal(parse_fails("a: [x\n", "not YAML"), FG_E_PARSE);
    assert_int_equal(parse_fails("a: *none\n", "names no anchor"), FG_E_INVAL);
    assert_int_equal(parse_fails("{\"a\": [1,}", "not JSON"), FG_E_PARSE);
}

static void jobfile_detect_should_tell_every_fixture_format(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        enum fg_jobfile_format fmt;
    } cases[] = {
        {C "axolotl/qlora.yml", FG_JF_AXOLOTL},
        {C "axolotl/fft-8b.yaml", FG_JF_AXOLOTL},
        {C "trl/example_config.yaml", FG_JF_TRL},
        {C "llama-factory/qwen3_lora_sft_ds3.yaml", FG_JF_LLAMA_FACTORY},
        /* LLaMA-Factory v1: micro_batch_size (axolotl's name too) beside cutoff_len and its
         * *_config blocks */
        {C "llama-factory/v1_train_lora_sft.yaml", FG_JF_LLAMA_FACTORY},
        {C "torchtune/8B_lora_single_device.yaml", FG_JF_TORCHTUNE},
        {C "torchtune/8B_qlora_single_device.yaml", FG_JF_TORCHTUNE},
        {C "deepspeed/ds_z3_config.json", FG_JF_DEEPSPEED},
        {C "deepspeed/ds_z3_offload_config.json", FG_JF_DEEPSPEED},
        {C "deepspeed/bf16_full.json", FG_JF_DEEPSPEED},
        {C "deepspeed/bf16_baseline.json", FG_JF_DEEPSPEED},
        {C "deepspeed/pipeline_ds_config.json", FG_JF_DEEPSPEED},
        {C "deepspeed/autotuning_ds_config_z2.json", FG_JF_DEEPSPEED},
        {C "deepspeed/autotuning_ds_config_fp16_z3.json", FG_JF_DEEPSPEED},
        {C "deepspeed/tensor_parallel_ds_config.json", FG_JF_DEEPSPEED},
        {C "deepspeed/zf_config.json", FG_JF_DEEPSPEED},
        /* the autotuner's own config: its autotuning block is DeepSpeed's */
        {C "deepspeed/autotuning_ds_config_tune.json", FG_JF_DEEPSPEED},
        {C "deepspeed/sp-alst.ds-config.json", FG_JF_DEEPSPEED},
        {C "deepspeed/accelerate_zero_stage1_config.json", FG_JF_DEEPSPEED},
        {C "deepspeed/accelerate_zero_stage2_config.json", FG_JF_DEEPSPEED},
        {C "deepspeed/accelerate_zero_stage2_offload_config.json", FG_JF_DEEPSPEED},
        {C "deepspeed/accelerate_zero_stage3_config.json", FG_JF_DEEPSPEED},
        {C "deepspeed/accelerate_zero_stage3_offload_config.json", FG_JF_DEEPSPEED},
        {C "deepspeed/accelerate_tests_ds_config_zero2.json", FG_JF_DEEPSPEED},
        {C "deepspeed/accelerate_tests_ds_config_zero3.json", FG_JF_DEEPSPEED},
        {C "accelerate/fsdp2.yaml", FG_JF_ACCELERATE},
        {C "accelerate/deepspeed_zero3.yaml", FG_JF_ACCELERATE},
        {C "accelerate/template_deepspeed.yaml", FG_JF_ACCELERATE},
        {C "accelerate/template_fsdp.yaml", FG_JF_ACCELERATE},
        {C "accelerate/template_fp8.yaml", FG_JF_ACCELERATE},
        {C "accelerate/template_multi_gpu.yaml", FG_JF_ACCELERATE},
        {C "accelerate/template_multi_node.yaml", FG_JF_ACCELERATE},
        {C "accelerate/template_single_accelerator.yaml", FG_JF_ACCELERATE},
        {C "accelerate/parallelism_cp.yaml", FG_JF_ACCELERATE},
        {C "accelerate/parallelism_tp_hsdp.yaml", FG_JF_ACCELERATE},
        {C "accelerate/slurm_fsdp_config.yaml", FG_JF_ACCELERATE},
        {C "accelerate/sp-alst.accelerate-config.yml", FG_JF_ACCELERATE},
        {C "accelerate/tests_latest_fsdp.yaml", FG_JF_ACCELERATE},
        {C "accelerate/tests_fsdp2_tp_preparation_config.yaml", FG_JF_ACCELERATE},
        /* vLLM's documented `vllm serve --config` example: uvicorn-log-level is vLLM's */
        {C "vllm/serve_args_config.yaml", FG_JF_VLLM},
        {C "sglang/config.yaml", FG_JF_SGLANG},
        /* SGLang's documented --config example: model-path, enable-metrics and log-requests
         * are SGLang's; tensor-parallel-size is both engines' */
        {C "sglang/server_arguments_config.yaml", FG_JF_SGLANG},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct fg_jobfile *f = NULL;
        struct fg_err err = {0};
        assert_int_equal(fg_jobfile_read(cases[i].file, NULL, &f, &err), 0);
        if (fg_jobfile_detect(f) != cases[i].fmt)
            print_message("%s read as %s\n", cases[i].file,
                          fg_jobfile_format_name(fg_jobfile_detect(f)));
        assert_int_equal(fg_jobfile_detect(f), cases[i].fmt);
        fg_jobfile_free(f);
    }
    assert_int_equal(fg_jobfile_format_find("llamafactory", 12), FG_JF_LLAMA_FACTORY);
    assert_int_equal(fg_jobfile_format_find("nope", 4), FG_JF_AUTO);
}

/* A file whose keys more than one format reads names the prefixes; one no format reads is
 * not a job config. */
static void jobfile_detect_should_name_the_prefix_or_refuse_by_name(void **state)
{
    (void)state;
    static const struct {
        const char *file, *want[3];
        int code; /* ambiguous: the job's to name (INVAL); no job config: not checkable */
    } cases[] = {
        /* vLLM's own test configs hold only options SGLang takes too */
        {C "vllm/test_config.yaml", {"name the one it is for", "vllm:", "sglang:"}, FG_E_INVAL},
        {C "vllm/test_config_with_model.yaml", {"vllm:", " or sglang:", NULL}, FG_E_INVAL},
        /* an lm-eval task file from SGLang's tests: batch_size alone names no framework */
        {C "sglang/lm_eval_Llama-3.3-70B-Instruct.yaml", {"is not a job config", NULL, NULL},
         FG_E_UNSUPPORTED},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct fg_jobfile *f = NULL;
        struct fg_err err = {0};
        enum fg_jobfile_format fmt = FG_JF_TRL;
        assert_int_equal(fg_jobfile_read(cases[i].file, NULL, &f, &err), 0);
        assert_int_equal(fg_jobfile_detect_format(f, &fmt, &err), cases[i].code);
        assert_int_equal(fmt, FG_JF_AUTO);
        for (size_t k = 0; k < 3 && cases[i].want[k]; k++) {
            if (!strstr(err.detail, cases[i].want[k]))
                print_message("%s: %s\n", cases[i].file, err.detail);
            assert_non_null(strstr(err.detail, cases[i].want[k]));
        }
        fg_jobfile_free(f);
    }
    /* the prefix reads it as named */
    static struct fg_jobspec s;
    struct fg_err err = {0};
    fg_jobspec_init(&s, "--ft-");
    assert_int_equal(fg_jobspec_set(&s, FG_JOBOPT_CONFIG, "vllm:" C "vllm/test_config.yaml",
                                    &err), 0);
    assert_int_equal(fg_jobfile_apply(&s, NULL, &err), 0);
    assert_int_equal(s.tp, 2);
    assert_int_equal(s.job.mode, FG_MODE_SERVE);
}

/* The spec from config files and options ("name=value"), finished; rc of the apply. */
/* A fresh spec with kv's "name=value" options set. */
static void spec_with(struct fg_jobspec *s, const char *const *kv, struct fg_err *err)
{
    fg_jobspec_init(s, "--ft-");
    for (; kv && *kv; kv++) {
        char name[64];
        const char *eq = strchr(*kv, '=');
        snprintf(name, sizeof name, "%.*s", (int)(eq - *kv), *kv);
        assert_int_equal(fg_jobspec_set(s, (unsigned)fg_jobopt_find(name), eq + 1, err), 0);
    }
}

static int job_of(struct fg_jobspec *s, const char *configs, const char *const *kv,
                  struct fg_err *err)
{
    spec_with(s, kv, err);
    assert_int_equal(fg_jobspec_set(s, FG_JOBOPT_CONFIG, configs, err), 0);
    int rc = fg_jobfile_apply(s, NULL, err);
    if (!rc)
        assert_int_equal(fg_jobspec_finish(s, err), 0);
    return rc;
}

static bool used(const struct fg_jobspec *s, const char *where, const char *set)
{
    for (size_t i = 0; i < s->n_from; i++)
        if (strstr(s->from[i].where, where) && strstr(s->from[i].set, set))
            return true;
    return false;
}

static void jobfile_apply_should_fill_the_job_and_name_every_key(void **state)
{
    (void)state;
    static struct fg_jobspec s;
    struct fg_err err = {0};
    assert_int_equal(job_of(&s, C "axolotl/qlora.yml", NULL, &err), 0);
    assert_int_equal(s.job.mode, FG_MODE_QLORA);
    assert_int_equal(s.job.seq_len, 4096);
    assert_int_equal(s.job.batch, 2);
    assert_int_equal(s.job.lora_rank, 32);
    assert_true(s.job.grad_ckpt);
    assert_string_equal(s.model, "NousResearch/Meta-Llama-3-8B");
    assert_string_equal(s.fw->name, "axolotl");
    assert_true(used(&s, "qlora.yml:46 gradient_checkpointing=true", "--ft-grad-ckpt=yes"));
    assert_true(used(&s, "qlora.yml:37 micro_batch_size=2", "--ft-batch=2"));
    assert_int_not_equal(s.config_digest, 0);
    /* TRL's SFTConfig defaults when the file says nothing */
    assert_int_equal(job_of(&s, C "trl/example_config.yaml", NULL, &err), 0);
    assert_true(s.job.grad_ckpt);
    assert_int_equal(s.job.seq_len, 1024);
    assert_int_equal(s.job.batch, 8);
    assert_true(used(&s, "gradient_checkpointing (SFTConfig default)", "--ft-grad-ckpt=yes"));
}

static void jobfile_apply_should_refuse_a_conflict_naming_both(void **state)
{
    (void)state;
    static struct fg_jobspec s;
    struct fg_err err = {0};
    static const char *const no_ckpt[] = {"grad-ckpt=no", NULL};
    assert_int_equal(job_of(&s, C "axolotl/qlora.yml", no_ckpt, &err), FG_E_INVAL);
    assert_non_null(strstr(err.detail, "--ft-grad-ckpt=no on the command line"));
    assert_non_null(strstr(err.detail, "qlora.yml:46 gradient_checkpointing=true"));
    /* the same value is no conflict, and the command line's model stands */
    static const char *const agree[] = {"grad-ckpt=yes", "model=/m", NULL};
    assert_int_equal(job_of(&s, C "axolotl/qlora.yml", agree, &err), 0);
    assert_string_equal(s.model, "/m");
    assert_true(used(&s, "gradient_checkpointing=true", "agrees with the command line"));
}

static void jobfile_apply_should_list_memory_keys_it_does_not_model(void **state)
{
    (void)state;
    static struct fg_jobspec s;
    struct fg_err err = {0};
    static const char *const model[] = {"model=/m", NULL};
    assert_int_equal(job_of(&s, C "torchtune/8B_lora_single_device.yaml", model, &err), 0);
    assert_int_equal(s.n_unknown, 1);
    assert_non_null(strstr(s.unknown[0], "tokenizer.max_seq_len=null"));
    /* torchtune without a checkpoint directory holding config.json: refused, saying what */
    assert_int_equal(job_of(&s, C "torchtune/8B_lora_single_device.yaml", NULL, &err),
                     FG_E_INVAL);
    assert_non_null(strstr(err.detail, "checkpointer.checkpoint_dir"));
}

static void jobfile_parse_should_read_yaml11_integers(void **state)
{
    (void)state;
    /* axolotl examples/alst/llama3-8b-fsdp2-alst.yaml: PyYAML reads 500_000 as 500000 */
    struct fg_jobfile *f = parse("sequence_len: 500_000\nq: '1_000'\nv: 1_0x\nn: -2_048\n");
    assert_string_equal(fg_jobfile_get(f, "sequence_len")->value, "500000");
    assert_string_equal(fg_jobfile_get(f, "q")->value, "1_000"); /* quoted: a string */
    assert_string_equal(fg_jobfile_get(f, "v")->value, "1_0x");
    assert_string_equal(fg_jobfile_get(f, "n")->value, "-2048");
    fg_jobfile_free(f);
}

/*
 * Every key of each release's argument classes that changes the peak is modelled or
 * listed (a row), never dropped.  Read from TRL 1.9 (trl/trainer/sft_config.py,
 * dpo_config.py, grpo_config.py, kto_config.py, reward_config.py, model_config.py and
 * transformers TrainingArguments), axolotl 0.18 (src/axolotl/utils/schemas/config.py,
 * peft.py, trl.py, fsdp.py), LLaMA-Factory 0.9.5 (src/llamafactory/hparams/model_args.py,
 * data_args.py, finetuning_args.py, generating_args.py) and torchtune 0.6
 * (recipes/full_finetune_distributed.py and the lora recipes' cfg.get, recipes/configs/).  The
 * loss keys (use_liger_kernel, loss_type, axolotl's plugins) and torchtune's optimizer_in_bwd
 * are the stacks' rows, left out here.
 */
static void jobfile_rows_should_cover_every_memory_key_of_each_release(void **state)
{
    (void)state;
    static const struct {
        enum fg_jobfile_format fmt;
        const char *keys;
    } releases[] = {
        {FG_JF_TRL,
         "model_name_or_path per_device_train_batch_size gradient_accumulation_steps "
         "gradient_checkpointing bf16 fp16 optim max_length max_seq_length deepspeed fsdp "
         "fsdp_config.activation_checkpointing dtype torch_dtype model_init_kwargs.dtype "
         "model_init_kwargs.torch_dtype attn_implementation use_peft lora_r lora_target_modules "
         "lora_target_parameters lora_modules_to_save use_dora load_in_4bit load_in_8bit "
         "use_bnb_nested_quant bnb_4bit_quant_type beta max_prompt_length max_completion_length "
         "num_generations use_vllm vllm_mode vllm_gpu_memory_utilization "
         "precompute_ref_log_probs generation_batch_size ds3_gather_for_generation"},
        {FG_JF_AXOLOTL,
         "base_model micro_batch_size sequence_len gradient_accumulation_steps "
         "gradient_checkpointing activation_offloading bf16 bfloat16 fp16 fp8 optimizer adapter "
         "lora_r lora_target_modules lora_target_linear lora_modules_to_save "
         "lora_target_parameters unfrozen_parameters load_in_4bit load_in_8bit "
         "bnb_4bit_use_double_quant bnb_4bit_quant_type use_dora deepspeed fsdp fsdp_version "
         "fsdp_config.reshard_after_forward fsdp_config.offload_params "
         "fsdp_config.activation_checkpointing tensor_parallel_size context_parallel_size "
         "dp_shard_size dp_replicate_size rl rl_beta trl.beta trl.num_generations trl.use_vllm "
         "trl.vllm_mode trl.max_completion_length max_prompt_len flash_attention sdp_attention "
         "xformers_attention attn_implementation"},
        {FG_JF_LLAMA_FACTORY,
         "model_name_or_path per_device_train_batch_size gradient_accumulation_steps cutoff_len "
         "disable_gradient_checkpointing bf16 fp16 pure_bf16 optim finetuning_type lora_rank "
         "lora_target additional_target quantization_bit double_quantization use_dora "
         "use_galore use_apollo use_badam stage pref_loss pref_beta max_new_tokens deepspeed "
         "fsdp flash_attn"},
        {FG_JF_TORCHTUNE,
         "model._component_ batch_size tokenizer.max_seq_len gradient_accumulation_steps "
         "enable_activation_checkpointing enable_activation_offloading dtype "
         "optimizer._component_ optimizer.fused loss._component_ model.lora_rank "
         "model.lora_attn_modules model.apply_lora_to_mlp model.apply_lora_to_output "
         "fsdp_cpu_offload fsdp_reshard_after_forward"},
    };
    size_t missing = 0;
    for (size_t i = 0; i < sizeof releases / sizeof releases[0]; i++) {
        char buf[2048];
        snprintf(buf, sizeof buf, "%s", releases[i].keys);
        for (char *save = NULL, *k = strtok_r(buf, " ", &save); k; k = strtok_r(NULL, " ", &save))
            if (!fg__jf_row_for(releases[i].fmt, k)) {
                print_message("%s: %s is neither modelled nor listed\n",
                              fg_jobfile_format_name(releases[i].fmt), k);
                missing++;
            }
    }
    assert_int_equal(missing, 0);
}

static bool listed(const struct fg_jobspec *s, const char *what)
{
    for (size_t i = 0; i < s->n_unknown; i++)
        if (strstr(s->unknown[i], what))
            return true;
    return false;
}

static void jobfile_apply_should_select_the_trainer_from_its_keys(void **state)
{
    (void)state;
    static struct fg_jobspec s;
    struct fg_err err = {0};
    static const char *const qwen[] = {"model=/m", NULL};
    /* open-r1's GRPO demo: num_generations says GRPO; no SFT max_length is injected */
    assert_int_equal(job_of(&s, C "trl/open-r1/recipes/DeepSeek-R1-Distill-Qwen-1.5B/grpo/"
                            "config_demo.yaml", qwen, &err), 0);
    assert_int_equal(s.job.trainer, FG_TRAINER_GRPO);
    assert_int_equal(s.job.num_generations, 16);
    assert_int_equal(s.job.max_prompt, 512);
    assert_int_equal(s.job.max_completion, 2048);
    assert_int_equal(s.job.vllm_mode, FG_VLLM_COLOCATE); /* use_vllm: TRL's default mode */
    assert_int_equal(s.job.precision, FG_PREC_BF16);     /* torch_dtype: bfloat16 */
    assert_false(used(&s, "max_length", "--ft-seq-len"));
    /* the command line's trainer stands over the one the keys imply */
    static const char *const rloo[] = {"model=/m", "mode=rloo", NULL};
    assert_int_equal(job_of(&s, C "trl/open-r1/recipes/DeepSeek-R1-Distill-Qwen-1.5B/grpo/"
                            "config_demo.yaml", rloo, &err), 0);
    assert_int_equal(s.job.trainer, FG_TRAINER_RLOO);
    /* LLaMA-Factory stage: dpo, its LoRA the adapter */
    assert_int_equal(job_of(&s, C "llama-factory/examples/train_lora/qwen3_lora_dpo.yaml", qwen,
                            &err), 0);
    assert_int_equal(s.job.trainer, FG_TRAINER_DPO);
    assert_int_equal(s.job.mode, FG_MODE_LORA);
    /* alignment-handbook: the folder names the trainer */
    assert_int_equal(job_of(&s, C "trl/alignment-handbook/recipes/zephyr-141b-A35b/orpo/"
                            "config_full.yaml", qwen, &err), 0);
    assert_int_equal(s.job.trainer, FG_TRAINER_ORPO);
    /* axolotl rl: kto; torchtune's DPOLoss */
    assert_int_equal(job_of(&s, C "axolotl/examples/llama-3/qlora-1b-kto.yaml", qwen, &err), 0);
    assert_int_equal(s.job.trainer, FG_TRAINER_KTO);
    assert_int_equal(s.job.mode, FG_MODE_QLORA);
    assert_int_equal(job_of(&s, C "torchtune/recipes/configs/llama3_1/8B_lora_dpo_single_device."
                            "yaml", qwen, &err), 0);
    assert_int_equal(s.job.trainer, FG_TRAINER_DPO);
    assert_int_equal(s.n_unknown, 0);
}

static void jobfile_apply_should_let_the_command_line_replace_an_inference(void **state)
{
    (void)state;
    static struct fg_jobspec s;
    struct fg_err err = {0};
    static const char *const phi[] = {"model=/m", NULL};
    /* axolotl bf16: auto loads the model in bf16 (resolve_dtype): pure bf16 */
    assert_int_equal(job_of(&s, C "axolotl/examples/phi/phi2-ft.yml", phi, &err), 0);
    assert_int_equal(s.job.precision, FG_PREC_BF16);
    /* an inference the command line corrects: no conflict, the job line says so */
    static const char *const mixed[] = {"model=/m", "precision=bf16-mixed", NULL};
    assert_int_equal(job_of(&s, C "axolotl/examples/phi/phi2-ft.yml", mixed, &err), 0);
    assert_int_equal(s.job.precision, FG_PREC_BF16_MIXED);
    assert_true(used(&s, "phi2-ft.yml:43 bf16=auto", "the command line's --ft-precision="));
    /* a stated key still conflicts */
    static const char *const nockpt[] = {"model=/m", "grad-ckpt=no", NULL};
    assert_int_equal(job_of(&s, C "axolotl/examples/phi/phi2-ft.yml", nockpt, &err), FG_E_INVAL);
    /* FSDP's own activation checkpointing refines gradient_checkpointing: false */
    assert_int_equal(job_of(&s, C "axolotl/examples/archived/dbrx/16bit-lora.yaml", phi, &err), 0);
    assert_true(s.job.grad_ckpt);
}

static void jobfile_apply_should_name_what_is_no_training_job_and_list_what_it_drops(void **state)
{
    (void)state;
    static struct fg_jobspec s;
    struct fg_err err = {0};
    static const char *const m[] = {"model=/m", NULL};
    assert_int_equal(job_of(&s, C "llama-factory/examples/inference/qwen3.yaml", m, &err),
                     FG_E_UNSUPPORTED);
    assert_non_null(strstr(err.detail, "a LLaMA-Factory inference config"));
    assert_non_null(strstr(err.detail, "not a training job"));
    assert_int_equal(job_of(&s, C "axolotl/examples/cloud/baseten.yaml", m, &err),
                     FG_E_UNSUPPORTED);
    assert_non_null(strstr(err.detail, "axolotl cloud launcher config"));
    assert_int_equal(job_of(&s, C "torchtune/recipes/configs/llama3_1/evaluation.yaml", m, &err),
                     FG_E_UNSUPPORTED);
    assert_non_null(strstr(err.detail, "a torchtune evaluation config"));
    /* keys that change memory fitgate does not model: listed with file:line */
    assert_int_equal(job_of(&s, C "axolotl/examples/llama-3/lora-8b.yml", m, &err), 0);
    assert_true(listed(&s, "lora-8b.yml:29 lora_modules_to_save"));
    assert_int_equal(job_of(&s, C "axolotl/examples/gemma3/gemma-3-1b-qlora.yml", m, &err), 0);
    assert_true(listed(&s, "gemma-3-1b-qlora.yml:28 unfrozen_parameters"));
    assert_int_equal(job_of(&s, C "axolotl/examples/llama-3/3b-fp8-fsdp2.yaml", m, &err), 0);
    assert_true(listed(&s, "3b-fp8-fsdp2.yaml:50 fp8=true"));
    assert_int_equal(job_of(&s, C "llama-factory/examples/extras/galore/llama3_full_sft.yaml", m,
                            &err), 0);
    assert_true(listed(&s, "llama3_full_sft.yaml:9 use_galore=true"));
}

/* The loss each file's stack computes (memory/loss.c): axolotl's CutCrossEntropyPlugin
 * (cut_cross_entropy defaults True once listed) and liger_fused_linear_cross_entropy, and
 * TRL's own row (SFTConfig loss_type chunked_nll) where its file names none. */
static void jobfile_apply_should_map_each_stacks_loss(void **state)
{
    (void)state;
    static struct fg_jobspec s;
    struct fg_err err = {0};
    static const char *const model[] = {"model=/m", NULL};
    assert_int_equal(job_of(&s, C "axolotl/lfm2-350m-fft.yaml", model, &err), 0);
    assert_int_equal(s.job.loss, FG_LOSS_CCE);
    assert_true(used(&s, "lfm2-350m-fft.yaml:3 plugins=", "--ft-loss=cce"));
    assert_int_equal(job_of(&s, C "axolotl/orpheus-finetune.yml", model, &err), 0);
    assert_int_equal(s.job.loss, FG_LOSS_LIGER);
    assert_true(used(&s, "liger_fused_linear_cross_entropy=true", "--ft-loss=liger"));
    assert_int_equal(job_of(&s, C "trl/example_config.yaml", model, &err), 0);
    assert_int_equal(s.job.loss, FG_LOSS_CHUNKED_NLL);
    /* DeepSpeed's "auto" reduce bucket: hidden x hidden once the model is known */
    assert_int_equal(job_of(&s, C "deepspeed/ds_z3_config.json", model, &err), 0);
    assert_true(s.job.ds_bucket == FG_DS_BUCKET_AUTO);
}

/* torchtune's llama3_1/8B_full.yaml on 4 GPUs runs full_finetune_distributed.py: its
 * optimizer_in_bwd: False stands, fused AdamW, and the full (sharded) gradient set, where
 * the single-device recipe's defaults (in backward, 8-bit paged Adam) under-count by about
 * 7 GB per GPU. */
static void jobfile_apply_should_run_torchtunes_distributed_recipe_on_several_gpus(void **state)
{
    (void)state;
    static struct fg_jobspec s;
    struct fg_err err = {0};
    const char *dir = "tests/fixtures/models/meta-llama--Llama-3.1-8B";
    static char arg[128];
    snprintf(arg, sizeof arg, "model=%s", dir);
    const char *const kv[] = {arg, NULL};
    assert_int_equal(job_of(&s, C "torchtune/8B_full.yaml", kv, &err), 0);
    assert_true(used(&s, "optimizer_in_bwd=False", "--ft-optimizer-in-bwd=no"));
    struct fg_model *m = load(dir);
    struct fg_policy pol;
    fg_policy_init(&pol);
    static struct fg_assessment a;
    const struct fg_gpu *h100 = fg_gpu_find(NULL, "h100", NULL);
    assert_int_equal(fg_assess(m, &s, h100, 4, &pol.rules, &a, &err), 0);
    assert_int_equal(a.job.dp, 4);
    assert_int_equal(a.job.zero, 3);
    assert_false(a.job.optimizer_in_bwd);
    assert_int_equal(a.job.optimizer, FG_OPT_ADAMW_FUSED);
    assert_int_equal(a.est.b.gradients, 2 * a.est.trainable_params / 4);
    /* the framework's own row on 4 GPUs, no file: the same recipe */
    static const char *const tt[] = {"framework=torchtune", "mode=full", NULL};
    spec_with(&s, tt, &err);
    assert_int_equal(fg_jobspec_finish(&s, &err), 0);
    assert_true(s.job.optimizer_in_bwd); /* one GPU: the single-device recipe */
    assert_int_equal(fg_assess(m, &s, h100, 4, &pol.rules, &a, &err), 0);
    assert_false(a.job.optimizer_in_bwd);
    assert_int_equal(a.job.optimizer, FG_OPT_ADAMW_FUSED);
    fg_model_free(m);
}

/* What the files set, as the job line says it: "--ft-batch=4 --ft-zero=3 ...", and the
 * keys listed as not modelled, "file:line key" each. */
static void sets_of(const struct fg_jobspec *s, char *buf, size_t cap, char *unk, size_t ucap)
{
    size_t off = 0;
    buf[0] = unk[0] = '\0';
    for (size_t i = 0; i < s->n_from && off < cap; i++)
        if (!strncmp(s->from[i].set, "--ft-", 5) && strncmp(s->from[i].set, "--ft-model", 10))
            off += (size_t)snprintf(buf + off, cap - off, "%s%s", off ? " " : "",
                                    s->from[i].set + 5);
    off = 0;
    for (size_t i = 0; i < s->n_unknown && off < ucap; i++) {
        const char *c = strchr(s->unknown[i], '='), *sl = NULL;
        for (const char *p = s->unknown[i]; c && p < c; p++)
            if (*p == '/')
                sl = p;
        int n = c ? (int)(c - (sl ? sl + 1 : s->unknown[i])) : 0;
        off += (size_t)snprintf(unk + off, ucap - off, "%s%.*s", off ? "; " : "", n,
                                sl ? sl + 1 : s->unknown[i]);
    }
}

/*
 * Every DeepSpeed, accelerate, vLLM and SGLang fixture: the options it reads to, and the
 * keys it lists as not modelled.  Each row says why that is what a user of the framework
 * expects.  (accelerate's template_deepspeed.yaml and sp-alst.accelerate-config.yml name
 * their DeepSpeed file by a path relative to where accelerate is launched: config.sh.)
 */
static void jobfile_apply_should_pin_each_launcher_fixture(void **state)
{
    (void)state;
    static const struct {
        const char *file, *sets, *unknown;
    } cases[] = {
        /* HF "auto" everywhere: the trainer's own arguments fill them, the reduce bucket
         * hidden x hidden (--ds-bucket=auto); ZeRO-2 with the optimizer on the CPU; the 2e8
         * all-gather bucket is not DeepSpeed's default */
        {"deepspeed/accelerate_tests_ds_config_zero2.json",
         "zero=2 offload=optimizer ds-bucket=auto grad-accum=1 "
         "framework=deepspeed",
         "accelerate_tests_ds_config_zero2.json:37 "
         "zero_optimization.allgather_bucket_size"},
        /* ZeRO-3 with both offloads to the CPU */
        {"deepspeed/accelerate_tests_ds_config_zero3.json",
         "zero=3 offload=optimizer offload=params ds-bucket=auto "
         "grad-accum=1 framework=deepspeed",
         ""},
        {"deepspeed/accelerate_zero_stage1_config.json",
         "precision=fp16-mixed zero=1 ds-bucket=auto grad-accum=1 "
         "framework=deepspeed",
         "accelerate_zero_stage1_config.json:31 "
         "zero_optimization.allgather_bucket_size"},
        {"deepspeed/accelerate_zero_stage2_config.json",
         "precision=fp16-mixed zero=2 ds-bucket=auto grad-accum=1 "
         "framework=deepspeed",
         "accelerate_zero_stage2_config.json:31 "
         "zero_optimization.allgather_bucket_size"},
        {"deepspeed/accelerate_zero_stage2_offload_config.json",
         "precision=fp16-mixed zero=2 offload=optimizer "
         "ds-bucket=auto grad-accum=1 framework=deepspeed",
         "accelerate_zero_stage2_offload_config.json:35 "
         "zero_optimization.allgather_bucket_size"},
        {"deepspeed/accelerate_zero_stage3_config.json",
         "precision=fp16-mixed zero=3 ds-bucket=auto grad-accum=1 "
         "framework=deepspeed",
         ""},
        {"deepspeed/accelerate_zero_stage3_offload_config.json",
         "precision=fp16-mixed zero=3 offload=optimizer "
         "offload=params ds-bucket=auto grad-accum=1 "
         "framework=deepspeed",
         ""},
        /* the autotuner's templates: the micro-batch is the tuner's ("auto") */
        {"deepspeed/autotuning_ds_config_z2.json",
         "zero=2 framework=deepspeed",
         ""},
        {"deepspeed/autotuning_ds_config_fp16_z3.json",
         "zero=3 precision=fp16-mixed framework=deepspeed",
         ""},
        /* DeepSpeedExamples bf16_master_weight: the baseline keeps fp32 master weights and
         * Adam states, the full-bf16 run keeps both in bf16 (its README: 31.4 vs 18.9 GB);
         * its 5e7 reduce bucket is the job's (--ds-bucket) */
        {"deepspeed/bf16_baseline.json",
         "batch=4 grad-accum=1 precision=bf16-mixed zero=3 "
         "ds-bucket=50000000 framework=deepspeed",
         "bf16_baseline.json:25 "
         "zero_optimization.stage3_param_persistence_threshold"},
        {"deepspeed/bf16_full.json",
         "batch=4 grad-accum=1 precision=bf16-mixed master-dtype=bf16 "
         "optimizer-state-dtype=bf16 zero=3 ds-bucket=50000000 "
         "framework=deepspeed",
         "bf16_full.json:27 "
         "zero_optimization.stage3_param_persistence_threshold"},
        /* a pipeline example with no zero_optimization: stage 0, data parallel (zero=0);
         * the micro-batch is given, and train_batch_size is listed: DeepSpeed derives
         * accumulation from it */
        {"deepspeed/pipeline_ds_config.json",
         "batch=8 zero=0 framework=deepspeed",
         "pipeline_ds_config.json:2 train_batch_size"},
        {"deepspeed/ds_z3_config.json",
         "zero=3 ds-bucket=auto framework=deepspeed",
         ""},
        {"deepspeed/ds_z3_offload_config.json",
         "zero=3 offload=optimizer offload=params ds-bucket=auto "
         "framework=deepspeed",
         ""},
        /* ZeRO-2 beside AutoTP over 4 ranks: the TP split is listed, not guessed */
        {"deepspeed/tensor_parallel_ds_config.json",
         "zero=2 framework=deepspeed",
         "tensor_parallel_ds_config.json:28 "
         "tensor_parallel.autotp_size"},
        /* ZenFlow: ZeRO-2 with the optimizer on the CPU, and its GPU-kept gradients listed */
        {"deepspeed/zf_config.json",
         "precision=bf16-mixed zero=2 offload=optimizer grad-accum=1 "
         "framework=deepspeed",
         "zf_config.json:2 train_batch_size; zf_config.json:11 "
         "zero_optimization.zenflow.topk_ratio"},
        {"deepspeed/sp-alst.ds-config.json",
         "precision=bf16-mixed zero=3 grad-accum=1 framework=deepspeed",
         ""},
        /* accelerate: FSDP full shard with bf16 autocast on 2 processes (distributed_type
         * FSDP is FullyShardedDataParallelPlugin's FULL_SHARD, which the strategy key
         * refines) */
        {"accelerate/template_fsdp.yaml",
         "zero=3 precision=bf16-mixed dp=2 zero=3 framework=accelerate",
         ""},
        /* fp8 through Transformer Engine: listed (fitgate models no TE FP8 here) */
        {"accelerate/template_fp8.yaml",
         "zero=0 framework=accelerate",
         "template_fp8.yaml:4 mixed_precision"},
        {"accelerate/template_multi_gpu.yaml",
         "zero=0 precision=bf16-mixed dp=2 framework=accelerate",
         ""},
        {"accelerate/template_multi_node.yaml",
         "zero=0 dp=8 framework=accelerate",
         ""},
        {"accelerate/template_single_accelerator.yaml",
         "zero=0 precision=bf16-mixed framework=accelerate",
         ""},
        /* CP=8 over FSDP2: every process is a context-parallel rank */
        {"accelerate/parallelism_cp.yaml",
         "zero=3 grad-ckpt=yes zero=3 precision=bf16-mixed dp=1 cp=8 "
         "tp=1 framework=accelerate",
         ""},
        /* TP=2 with HSDP 2 x 2: DP = 8 / 2; the replicated shard groups are listed */
        {"accelerate/parallelism_tp_hsdp.yaml",
         "zero=3 zero=3 precision=bf16-mixed dp=4 cp=1 tp=2 "
         "framework=accelerate",
         "parallelism_tp_hsdp.yaml:21 "
         "parallelism_config.parallelism_config_dp_replicate_size"},
        {"accelerate/slurm_fsdp_config.yaml",
         "zero=3 zero=3 framework=accelerate",
         ""},
        {"accelerate/tests_latest_fsdp.yaml",
         "zero=3 zero=3 precision=fp32 dp=1 framework=accelerate",
         ""},
        /* FSDP with no fsdp_config: the plugin's default FULL_SHARD over 4 processes */
        {"accelerate/tests_fsdp2_tp_preparation_config.yaml",
         "zero=3 precision=fp32 dp=4 framework=accelerate",
         ""},
        {"accelerate/fsdp2.yaml",
         "zero=3 zero=3 precision=bf16-mixed dp=8 framework=accelerate",
         ""},
        /* DeepSpeed's plugin with no file: no reduce_bucket_size, DeepSpeed's 5e8 */
        {"accelerate/deepspeed_zero3.yaml",
         "zero=3 precision=bf16-mixed dp=8 ds-bucket=500000000 framework=accelerate",
         ""},
        /* the serving engines: the file is the engine's options */
        {"vllm/serve_args_config.yaml",
         "mode=serve framework=vllm",
         ""},
        {"sglang/config.yaml",
         "gpu-util=0.8 tp=4 mode=serve framework=sglang",
         "config.yaml:4 disable-cuda-graph"},
        {"sglang/server_arguments_config.yaml",
         "tp=2 mode=serve framework=sglang",
         ""},
    };
    size_t wrong = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        static struct fg_jobspec s;
        struct fg_err err = {0};
        char path[256], sets[1024], unk[1024];
        static const char *const model[] = {"model=/m", NULL};
        snprintf(path, sizeof path, C "%s", cases[i].file);
        int rc = job_of(&s, path, model, &err);
        if (rc)
            print_message("%s: %s\n", cases[i].file, err.detail);
        assert_int_equal(rc, 0);
        sets_of(&s, sets, sizeof sets, unk, sizeof unk);
        bool differs = strcmp(sets, cases[i].sets) || strcmp(unk, cases[i].unknown);
        if (differs)
            print_message("%s:\n  sets \"%s\"\n  unknown \"%s\"\n", cases[i].file, sets, unk);
        wrong += differs;
    }
    assert_int_equal(wrong, 0);
}

/* A trainer's file that names a DeepSpeed config runs ZeRO through DeepSpeed, and the job
 * keeps DeepSpeed's buffers: LLaMA-Factory's full SFT recipe names ds_z3_config.json, whose
 * reduce_bucket_size "auto" transformers fills with hidden^2; open-r1's accelerate ZeRO-3
 * config names no file, so DeepSpeed's default 5e8 stands.  An FSDP file keeps none. */
static void jobfile_apply_should_run_deepspeed_under_an_hf_trainer(void **state)
{
    (void)state;
    static struct fg_jobspec s;
    struct fg_err err = {0};
    static const char *const model[] = {"model=/m", NULL};
    /* LLaMA-Factory opens the file from its root, where its examples are launched */
    spec_with(&s, model, &err);
    assert_int_equal(fg_jobspec_set(&s, FG_JOBOPT_CONFIG,
                                    "examples/train_full/qwen3_full_sft.yaml", &err), 0);
    int rc = fg_jobfile_apply(&s, C "llama-factory", &err);
    if (rc)
        print_message("%s\n", err.detail);
    assert_int_equal(rc, 0);
    assert_int_equal(fg_jobspec_finish(&s, &err), 0);
    assert_int_equal(s.job.zero, 3);
    assert_true(s.job.ds_buffers);
    assert_true(s.job.ds_bucket == FG_DS_BUCKET_AUTO);
    assert_true(used(&s, "ds_z3_config.json", "ds-bucket=auto"));
    assert_int_equal(job_of(&s, C "trl/open-r1/recipes/accelerate_configs/zero3.yaml", model,
                            &err), 0);
    assert_true(s.job.ds_buffers);
    assert_int_equal(s.job.ds_bucket, 500000000);
    assert_true(used(&s, "zero3.yaml", "ds-bucket=500000000"));
    assert_int_equal(job_of(&s, C "accelerate/fsdp2.yaml", model, &err), 0);
    assert_int_equal(s.job.zero, 3);
    assert_false(s.job.ds_buffers);
}

/* A file that names no sharding declares DDP, and the job says so; one that names it keeps
 * it. */
static void jobfile_apply_should_declare_the_files_layout(void **state)
{
    (void)state;
    static struct fg_jobspec s;
    struct fg_err err = {0};
    static const char *const model[] = {"model=/m", NULL};
    /* axolotl examples/llama-3/fft-8b.yaml: no deepspeed, no fsdp: DDP on every GPU */
    assert_int_equal(job_of(&s, C "axolotl/fft-8b.yaml", model, &err), 0);
    assert_true(s.layout_fixed);
    assert_true(fg_jobspec_declares_layout(&s));
    assert_int_equal(s.job.zero, 0);
    assert_true(used(&s, "names no DeepSpeed, FSDP or other sharding (DDP)", "--ft-zero=0"));
    /* accelerate's FSDP2 config: ZeRO-3 as it names it, no DDP said */
    assert_int_equal(job_of(&s, C "accelerate/fsdp2.yaml", model, &err), 0);
    assert_true(s.layout_fixed);
    assert_int_equal(s.job.zero, 3);
    assert_false(used(&s, "(DDP)", "--ft-zero"));
    /* torchtune's distributed full fine-tune names no sharding: its recipe shards with FSDP2
     * by itself (full_finetune_distributed.py), the framework's own default, not DDP */
    assert_int_equal(job_of(&s, C "torchtune/8B_full.yaml", model, &err), 0);
    assert_true(s.layout_fixed);
    assert_false(used(&s, "(DDP)", "--ft-zero"));
    assert_false(fg_jobspec_given(&s, FG_JOBOPT_ZERO));
    /* a serving engine's file is no layout: vLLM splits over the GPUs its options give */
    assert_int_equal(job_of(&s, C "vllm/serve_args_config.yaml", model, &err), 0);
    assert_false(s.layout_fixed);
}

/* Option changes back to the keys the files used: the line edited in the file's spelling,
 * or the format's key added; the written copy changes only those lines. */
static void jobfile_edits_should_map_options_back_to_the_files_keys(void **state)
{
    (void)state;
    static struct fg_jobspec s;
    struct fg_err err = {0};
    struct fg_jobfile_edits ed;
    static const char *const model[] = {"model=/m", NULL};
    assert_int_equal(job_of(&s, C "axolotl/qlora.yml", model, &err), 0);
    const unsigned ids[] = {FG_JOBOPT_BATCH, FG_JOBOPT_LORA_RANK, FG_JOBOPT_LOSS};
    const char *const values[] = {"1", "16", "liger"};
    assert_int_equal(fg_jobfile_edits_for(&s, NULL, 3, ids, values, &ed, &err), 0);
    assert_int_equal(ed.n, 3);
    assert_int_equal(ed.e[0].line, 37);
    assert_string_equal(ed.e[0].key, "micro_batch_size");
    assert_string_equal(ed.e[0].from, "2");
    assert_string_equal(ed.e[0].to, "1");
    assert_int_equal(ed.e[1].line, 25);
    assert_string_equal(ed.e[1].to, "16");
    /* no key of the file says it: axolotl's own, added after its last line */
    assert_true(ed.e[2].insert);
    assert_string_equal(ed.e[2].key, "liger_fused_linear_cross_entropy");
    assert_string_equal(ed.e[2].to, "true");
    assert_int_equal(ed.e[2].line, 59);
    char dir[] = "/tmp/fg-jobfile-XXXXXX", out[64];
    assert_non_null(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/qlora.yml", dir);
    assert_int_equal(fg_jobfile_write_edited(&ed, NULL, out, &err), 0);
    struct fg_jobfile *f = NULL;
    assert_int_equal(fg_jobfile_read(out, NULL, &f, &err), 0);
    assert_string_equal(fg_jobfile_get(f, "micro_batch_size")->value, "1");
    assert_int_equal(fg_jobfile_get(f, "micro_batch_size")->line, 37);
    assert_string_equal(fg_jobfile_get(f, "lora_r")->value, "16");
    assert_string_equal(fg_jobfile_get(f, "liger_fused_linear_cross_entropy")->value, "true");
    assert_int_equal(fg_jobfile_get(f, "liger_fused_linear_cross_entropy")->line, 59);
    fg_jobfile_free(f);
    char *a = NULL, *b = NULL;
    size_t na, nb;
    assert_int_equal(fg__read_file(C "axolotl/qlora.yml", 1 << 20, &a, &na), 0);
    assert_int_equal(fg__read_file(out, 1 << 20, &b, &nb), 0);
    /* the comments stay, and the text differs by the two values (as long) and the line */
    assert_non_null(strstr(b, "# save_first_step: true  # uncomment this"));
    assert_int_equal(nb, na + strlen("liger_fused_linear_cross_entropy: true\n"));
    free(a);
    free(b);
    unlink(out);
    /* a DeepSpeed JSON: the nested key edited in place, the file still JSON */
    assert_int_equal(job_of(&s, C "deepspeed/ds_z3_config.json", model, &err), 0);
    const unsigned zid[] = {FG_JOBOPT_ZERO};
    const char *const two[] = {"2"};
    assert_int_equal(fg_jobfile_edits_for(&s, NULL, 1, zid, two, &ed, &err), 0);
    assert_int_equal(ed.e[0].line, 19);
    assert_string_equal(ed.e[0].key, "zero_optimization.stage");
    snprintf(out, sizeof out, "%s/ds.json", dir);
    assert_int_equal(fg_jobfile_write_edited(&ed, NULL, out, &err), 0);
    assert_int_equal(fg_jobfile_read(out, NULL, &f, &err), 0);
    assert_string_equal(fg_jobfile_get(f, "zero_optimization.stage")->value, "2");
    assert_string_equal(fg_jobfile_get(f, "zero_optimization.stage3_max_live_parameters")->value,
                        "1000000000");
    fg_jobfile_free(f);
    unlink(out);
    rmdir(dir);
    /* activation offloading alone: axolotl's activation_offloading, not gradient_checkpointing:
     * offload (the key the file has), which would turn checkpointing on too */
    const unsigned aid[] = {FG_JOBOPT_ACT_OFFLOAD};
    const char *const on[] = {""};
    assert_int_equal(job_of(&s, C "axolotl/qlora.yml", model, &err), 0);
    assert_int_equal(fg_jobfile_edits_for(&s, NULL, 1, aid, on, &ed, &err), 0);
    assert_true(ed.e[0].insert);
    assert_string_equal(ed.e[0].key, "activation_offloading");
    assert_string_equal(ed.e[0].to, "true");
    /* an option no key of the file's format says */
    assert_int_equal(job_of(&s, C "axolotl/fft-8b.yaml", model, &err), 0);
    const unsigned oid[] = {FG_JOBOPT_OFFLOAD};
    const char *const opt[] = {"optimizer"};
    assert_int_equal(fg_jobfile_edits_for(&s, NULL, 1, oid, opt, &ed, &err), FG_E_UNSUPPORTED);
    assert_non_null(strstr(err.detail, "--offload=optimizer is not a key of"));
    /* ZeRO-3 for axolotl: its deepspeed key, naming the config axolotl ships */
    const char *const three[] = {"3"};
    assert_int_equal(fg_jobfile_edits_for(&s, NULL, 1, zid, three, &ed, &err), 0);
    assert_true(ed.e[0].insert && ed.e[0].names_file);
    assert_string_equal(ed.e[0].to, "deepspeed_configs/zero3_bf16.json");
}

/*
 * Every key of each launcher's class that changes GPU memory has a row for that format:
 * modelled, or listed as not modelled with its file:line; none is dropped.  The lists are
 * the classes' own fields at the releases jobfile_rows_launch.c names; a key added to a
 * class and to this list without a row fails here.
 */
static void jobfile_rows_should_cover_every_memory_key_of_each_class(void **state)
{
    (void)state;
    static const struct {
        enum fg_jobfile_format fmt;
        const char *keys;
    } classes[] = {
        /* DeepSpeed 0.19.6 runtime/config.py, precision_config.py, zero/config.py */
        {FG_JF_DEEPSPEED,
         "train_micro_batch_size_per_gpu train_batch_size gradient_accumulation_steps "
         "bf16.enabled fp16.enabled bf16.bf16_master_weights_and_grads "
         "bf16.bf16_optimizer_states fp16.fp16_master_weights_and_grads amp.enabled "
         "torch_autocast.enabled data_types.grad_accum_dtype communication_data_type "
         "optimizer.type zero_optimization.stage zero_optimization.offload_optimizer.device "
         "zero_optimization.offload_param.device zero_optimization.offload_optimizer.ratio "
         "zero_optimization.sub_group_size zero_optimization.stage3_max_live_parameters "
         "zero_optimization.stage3_max_reuse_distance zero_optimization.reduce_bucket_size "
         "zero_optimization.allgather_bucket_size zero_optimization.stage3_prefetch_bucket_size "
         "zero_optimization.stage3_param_persistence_threshold "
         "zero_optimization.zero_hpz_partition_size zero_optimization.zero_quantized_weights "
         "zero_optimization.zero_quantized_gradients zero_optimization.mics_shard_size "
         "zero_optimization.zenflow.topk_ratio activation_checkpointing.partition_activations "
         "activation_checkpointing.cpu_checkpointing tensor_parallel.autotp_size "
         "sequence_parallel_size"},
        /* accelerate commands/config/config_args.py ClusterConfig, parallelism_config.py */
        {FG_JF_ACCELERATE,
         "distributed_type mixed_precision num_processes use_cpu "
         "deepspeed_config.gradient_accumulation_steps deepspeed_config.deepspeed_config_file "
         "deepspeed_config.zero_stage deepspeed_config.offload_optimizer_device "
         "deepspeed_config.offload_param_device fsdp_config.fsdp_activation_checkpointing "
         "fsdp_config.fsdp_sharding_strategy fsdp_config.fsdp_reshard_after_forward "
         "fsdp_config.fsdp_offload_params fsdp_config.fsdp_auto_wrap_policy "
         "fsdp_config.fsdp_version parallelism_config.parallelism_config_tp_size "
         "parallelism_config.parallelism_config_cp_size "
         "parallelism_config.parallelism_config_dp_shard_size "
         "parallelism_config.parallelism_config_dp_replicate_size "
         "megatron_lm_config.megatron_lm_tp_degree megatron_lm_config.megatron_lm_pp_degree "
         "megatron_lm_config.megatron_lm_recompute_activations "
         "megatron_lm_config.megatron_lm_use_distributed_optimizer"},
        /* vLLM vllm/engine/arg_utils.py EngineArgs */
        {FG_JF_VLLM,
         "model dtype kv-cache-dtype quantization load-format max-model-len "
         "tensor-parallel-size pipeline-parallel-size data-parallel-size "
         "enable-expert-parallel decode-context-parallel-size gpu-memory-utilization "
         "kv-cache-memory-bytes num-gpu-blocks-override max-num-batched-tokens max-num-seqs "
         "cpu-offload-gb enforce-eager cuda-graph-sizes compilation-config "
         "disable-sliding-window speculative-config limit-mm-per-prompt enable-lora "
         "max-loras max-lora-rank hf-overrides"},
        /* SGLang python/sglang/srt/server_args.py ServerArgs */
        {FG_JF_SGLANG,
         "model-path dtype kv-cache-dtype quantization load-format context-length tp-size "
         "pp-size dp-size ep-size enable-dp-attention mem-fraction-static cpu-offload-gb "
         "enable-lora max-lora-rank max-loras-per-batch json-model-override-args "
         "chunked-prefill-size max-prefill-tokens max-running-requests max-total-tokens "
         "cuda-graph-max-bs disable-cuda-graph speculative-algorithm swa-full-tokens-ratio"},
    };
    size_t missing = 0;
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
        char buf[2048];
        snprintf(buf, sizeof buf, "%s", classes[i].keys);
        for (char *save = NULL, *k = strtok_r(buf, " ", &save); k; k = strtok_r(NULL, " ", &save)) {
            const struct fg__jf_row *r = fg__jf_row_for(classes[i].fmt, k);
            /* a row that sets nothing for a value it does not know lists it: a map, an
             * assignment or a hook, or a note */
            bool covered = r && (r->assign || r->map || r->hook || r->note);
            if (!covered)
                print_message("%s: no row for %s\n",
                              fg_jobfile_format_name(classes[i].fmt), k);
            missing += !covered;
        }
    }
    assert_int_equal(missing, 0);
    /* the row index finds every row: the first of its format for its key, in table order */
    const struct fg__jf_row *r;
    for (size_t i = 0; (r = fg__jf_row_at(i)); i++) {
        unsigned f = (unsigned)__builtin_ctz(r->fmts);
        const struct fg__jf_row *first = NULL, *q;
        for (size_t k = 0; (q = fg__jf_row_at(k)) && !first; k++)
            if ((q->fmts & (1u << f)) && fg_jobfile_key_is(q->key, r->key))
                first = q;
        assert_ptr_equal(fg__jf_row_for((enum fg_jobfile_format)f, r->key), first);
    }
}

/* Every key a row names is in docs/frameworks.md (the table there maps them). */
static void jobfile_rows_should_be_in_the_docs(void **state)
{
    (void)state;
    char *doc = NULL;
    size_t n;
    assert_int_equal(fg__read_file("docs/frameworks.md", 1 << 20, &doc, &n), 0);
    const struct fg__jf_row *r;
    size_t missing = 0;
    for (size_t i = 0; (r = fg__jf_row_at(i)); i++) {
        const char *leaf = strrchr(r->key, '.') ? strrchr(r->key, '.') + 1 : r->key;
        char full[128], tick[128], dot[128];
        snprintf(full, sizeof full, "`%s", r->key);
        snprintf(tick, sizeof tick, "`%s", leaf);
        snprintf(dot, sizeof dot, ".%s`", leaf);
        bool named = strstr(doc, full) || (strcmp(leaf, "_component_") &&
                                           (strstr(doc, tick) || strstr(doc, dot)));
        if (!named)
            print_message("docs/frameworks.md lacks %s\n", r->key);
        missing += !named;
    }
    free(doc);
    assert_int_equal(missing, 0);
}

/* One YAML document: PyYAML's safe_load refuses a second, fitgate does not pick one. */
static void jobfile_parse_should_refuse_a_second_document(void **state)
{
    (void)state;
    assert_int_equal(parse_fails("micro_batch_size: 1\n---\nmicro_batch_size: 64\n",
                                 "t.yaml:2: a second YAML document"), FG_E_PARSE);
    struct fg_jobfile *f = parse("---\nmicro_batch_size: 1\n...\n");
    assert_string_equal(fg_jobfile_get(f, "micro_batch_size")->value, "1");
    fg_jobfile_free(f);
}

/* ${...} in a key fitgate reads is never expanded (the environment of the controller's check
 * is slurmctld's): an error naming the key, not its value. */
static void jobfile_apply_should_refuse_an_interpolation_naming_the_key(void **state)
{
    (void)state;
    static struct fg_jobspec s;
    struct fg_err err = {0};
    char path[] = "/tmp/fitgate-test-interp-XXXXXX.yml";
    int fd = mkstemps(path, 4);
    assert_true(fd >= 0);
    const char *text = "base_model: m\nadapter: lora\nmicro_batch_size: ${oc.env:FG_T_SECRET}\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    setenv("FG_T_SECRET", "hf_abc123", 1);
    char spec[80];
    snprintf(spec, sizeof spec, "axolotl:%s", path);
    assert_int_equal(job_of(&s, spec, NULL, &err), FG_E_INVAL);
    assert_non_null(strstr(err.detail, ":3 micro_batch_size: an interpolation"));
    assert_null(strstr(err.detail, "hf_abc123"));
    /* torchtune's checkpoint_dir, which names the model, alike */
    static const char *const none[] = {NULL};
    char tt[] = "/tmp/fitgate-test-tt-XXXXXX.yaml";
    fd = mkstemps(tt, 5);
    assert_true(fd >= 0);
    text = "model:\n  _component_: torchtune.models.llama3_1.lora_llama3_1_8b\n"
           "checkpointer:\n  checkpoint_dir: ${oc.env:FG_T_SECRET}\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    snprintf(spec, sizeof spec, "torchtune:%s", tt);
    assert_int_equal(job_of(&s, spec, none, &err), FG_E_INVAL);
    assert_non_null(strstr(err.detail, "checkpointer.checkpoint_dir: an interpolation"));
    assert_null(strstr(err.detail, "hf_abc123"));
    unsetenv("FG_T_SECRET");
    unlink(path);
    unlink(tt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(jobfile_parse_should_flatten_keys_with_their_lines),
        cmocka_unit_test(jobfile_parse_should_read_json_through_cjson),
        cmocka_unit_test(jobfile_parse_should_follow_aliases_and_merge_keys),
        cmocka_unit_test(jobfile_parse_should_refuse_hostile_input_with_the_bound),
        cmocka_unit_test(jobfile_detect_should_tell_every_fixture_format),
        cmocka_unit_test(jobfile_detect_should_name_the_prefix_or_refuse_by_name),
        cmocka_unit_test(jobfile_apply_should_pin_each_launcher_fixture),
        cmocka_unit_test(jobfile_apply_should_declare_the_files_layout),
        cmocka_unit_test(jobfile_apply_should_run_deepspeed_under_an_hf_trainer),
        cmocka_unit_test(jobfile_edits_should_map_options_back_to_the_files_keys),
        cmocka_unit_test(jobfile_rows_should_cover_every_memory_key_of_each_class),
        cmocka_unit_test(jobfile_apply_should_fill_the_job_and_name_every_key),
        cmocka_unit_test(jobfile_apply_should_refuse_a_conflict_naming_both),
        cmocka_unit_test(jobfile_apply_should_list_memory_keys_it_does_not_model),
        cmocka_unit_test(jobfile_apply_should_map_each_stacks_loss),
        cmocka_unit_test(jobfile_apply_should_run_torchtunes_distributed_recipe_on_several_gpus),
        cmocka_unit_test(jobfile_rows_should_be_in_the_docs),
        cmocka_unit_test(jobfile_parse_should_refuse_a_second_document),
        cmocka_unit_test(jobfile_apply_should_refuse_an_interpolation_naming_the_key),
        cmocka_unit_test(jobfile_parse_should_read_yaml11_integers),
        cmocka_unit_test(jobfile_rows_should_cover_every_memory_key_of_each_release),
        cmocka_unit_test(jobfile_apply_should_select_the_trainer_from_its_keys),
        cmocka_unit_test(jobfile_apply_should_let_the_command_line_replace_an_inference),
        cmocka_unit_test(jobfile_apply_should_name_what_is_no_training_job_and_list_what_it_drops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
