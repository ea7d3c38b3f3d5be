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
        {C "trl/example_config.yaml", FG_JF_TRL},
        {C "llama-factory/qwen3_lora_sft_ds3.yaml", FG_JF_LLAMA_FACTORY},
        {C "torchtune/8B_lora_single_device.yaml", FG_JF_TORCHTUNE},
        {C "torchtune/8B_qlora_single_device.yaml", FG_JF_TORCHTUNE},
        {C "deepspeed/ds_z3_config.json", FG_JF_DEEPSPEED},
        {C "deepspeed/ds_z3_offload_config.json", FG_JF_DEEPSPEED},
        {C "accelerate/fsdp2.yaml", FG_JF_ACCELERATE},
        {C "accelerate/deepspeed_zero3.yaml", FG_JF_ACCELERATE},
        {C "vllm/test_config_with_model.yaml", FG_JF_VLLM},
        {C "sglang/config.yaml", FG_JF_SGLANG},
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
