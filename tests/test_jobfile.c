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
static int job_of(struct fg_jobspec *s, const char *configs, const char *const *kv,
                  struct fg_err *err)
{
    fg_jobspec_init(s, "--ft-");
    for (; kv && *kv; kv++) {
        char name[64];
        const char *eq = strchr(*kv, '=');
        snprintf(name, sizeof name, "%.*s", (int)(eq - *kv), *kv);
        assert_int_equal(fg_jobspec_set(s, (unsigned)fg_jobopt_find(name), eq + 1, err), 0);
    }
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
        cmocka_unit_test(jobfile_rows_should_be_in_the_docs),
        cmocka_unit_test(jobfile_parse_should_refuse_a_second_document),
        cmocka_unit_test(jobfile_apply_should_refuse_an_interpolation_naming_the_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
