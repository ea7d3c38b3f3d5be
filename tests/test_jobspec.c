/*
 * test_jobspec.c - engine/job/jobspec.c and engine/stack/framework.c: the one option table, the
 * framework rows, and the gate judging the job as it will run (its framework, its layout)
 * on real fixture models.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "util/fileio.h"
#include "stack/framework.h"
#include "gate.h"
#include "job/jobspec.h"
#include "policy.h"
#include "support.h"

#define M "tests/fixtures/models/"

/* A finished spec from "name=value" pairs (NULL-terminated). */
static void spec_of(struct fg_jobspec *s, const char *const *kv)
{
    struct fg_err err = {0};
    int rc = spec_from_pairs(s, kv, &err);
    if (rc)
        print_message("%s\n", err.detail);
    assert_int_equal(rc, 0);
}

/* The gate on a fixture model for `count` GPUs of `card` asked as --gres=gpu:card:count. */
static void gate(const char *model, const char *const *kv, const char *card, uint32_t count,
                 const struct fg_rules *r, struct fg_gate *g)
{
    struct fg_jobspec s;
    spec_of(&s, kv);
    struct fg_model *m = load(model);
    struct fg_request q;
    memset(&q, 0, sizeof q);
    char spec[64];
    snprintf(spec, sizeof spec, "gpu:%s:%u", card, count);
    assert_true(fg_request_from_option(&q, "gres", spec, 1, fg_gpu_table_builtin()));
    assert_non_null(q.gpu);
    fg_gate_model_label(model, q.model, sizeof q.model);
    struct fg_rules def;
    if (!r) {
        struct fg_policy p;
        fg_policy_init(&p);
        def = p.rules;
        r = &def;
    }
    fg_gate_run(m, &s, &q, r, FG_ONERR_ALLOW, g);
    fg_model_free(m);
}

static bool line_has(const struct fg_gate *g, int i, const char *s)
{
    if (!strstr(g->d.lines[i], s))
        print_message("line %d: %s\n(no '%s')\n", i, g->d.lines[i], s);
    return strstr(g->d.lines[i], s) != NULL;
}

/* ---- the option table ------------------------------------------------------------- */

static bool has(const char *text, const char *s)
{
    return strstr(text, s) != NULL;
}

/* s in text as a whole word (not "--tp" inside "--tpx") */
static bool has_word(const char *text, const char *s)
{
    size_t n = strlen(s);
    for (const char *p = text; (p = strstr(p, s)); p++) {
        char after = p[n];
        if (!(after == '-' || after == '_' || (after >= 'a' && after <= 'z')))
            return true;
    }
    return false;
}

/* "lora-rank" as groff writes it: "lora\-rank" */
static void roff(const char *prefix, const char *name, char *out, size_t cap)
{
    size_t o = 0;
    for (const char *p = prefix; *p && o + 3 < cap; p++) {
        if (*p == '-')
            out[o++] = '\\';
        out[o++] = *p;
    }
    for (const char *p = name; *p && o + 3 < cap; p++) {
        if (*p == '-')
            out[o++] = '\\';
        out[o++] = *p;
    }
    out[o] = '\0';
}

static void jobopts_should_be_in_the_man_pages_and_the_completion(void **state)
{
    (void)state;
    char *man1 = NULL, *man8 = NULL, *comp = NULL;
    size_t n;
    assert_int_equal(fg__read_file("man/fitgate.1", 1 << 20, &man1, &n), 0);
    assert_int_equal(fg__read_file("man/spank_fitgate.8", 1 << 20, &man8, &n), 0);
    assert_int_equal(fg__read_file("contrib/bash-completion/fitgate", 1 << 20, &comp, &n), 0);
    for (unsigned id = 0; id < FG_JOBOPT_COUNT; id++) {
        const struct fg_jobopt *o = fg_jobopt_at(id);
        char want[96];
        roff("--ft-", o->name, want, sizeof want);
        if (!has(man8, want))
            print_message("spank_fitgate.8 lacks %s\n", want);
        assert_true(has(man8, want));
        if (id == FG_JOBOPT_MODEL)
            continue; /* the CLI's MODEL */
        /* the CLI's --gpus is Slurm's; the plugin's count is --ft-gpus there */
        roff(id == FG_JOBOPT_GPUS ? "--ft-" : "--", o->name, want, sizeof want);
        if (!has(man1, want))
            print_message("fitgate.1 lacks %s\n", want);
        assert_true(has(man1, want));
        snprintf(want, sizeof want, "%s%s", id == FG_JOBOPT_GPUS ? "--ft-" : "--", o->name);
        if (!has_word(comp, want))
            print_message("completion lacks %s\n", want);
        assert_true(has_word(comp, want));
    }
    free(man1);
    free(man8);
    free(comp);
}

/* One yes/no reader (util/yesno.h): a job flag takes the words a boolean policy key takes,
 * --ft-grad-ckpt=on as CheckpointScan=on, and refuses what the key refuses. */
static void flag_should_take_the_words_a_policy_key_takes(void **state)
{
    (void)state;
    static const char *const words[] = {"yes", "TRUE", "On", "1", "no", "False", "OFF", "0",
                                        "y", "2", "enable", "yes ", "-1"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        struct fg_jobspec s;
        struct fg_policy p;
        struct fg_err err = {0};
        char arg[64];
        snprintf(arg, sizeof arg, "checkpointscan=%s", words[i]);
        char *argv[] = {arg};
        fg_jobspec_init(&s, "--ft-");
        fg_policy_init(&p);
        p.checkpoint_scan = !(i < 4);
        int key = fg_policy_args(&p, 1, argv, "plugstack.conf", &err);
        int flag = fg_jobspec_set(&s, FG_JOBOPT_GRAD_CKPT, words[i], &err);
        assert_int_equal(key == 0, flag == 0);
        if (!flag) {
            assert_int_equal(s.job.grad_ckpt, p.checkpoint_scan);
            assert_int_equal(s.job.grad_ckpt, i < 4);
        } else {
            assert_non_null(strstr(err.detail, "--ft-grad-ckpt is a flag"));
        }
    }
    struct fg_jobspec s;
    fg_jobspec_init(&s, NULL);
    assert_int_equal(fg_jobspec_set(&s, FG_JOBOPT_GRAD_CKPT, "set", NULL), 0); /* Slurm's bare */
    assert_true(s.job.grad_ckpt);
}

/* The words the generated lists offer (completion, usage, man pages) are the parser's. */
static void jobopt_values_should_be_what_the_parser_takes(void **state)
{
    (void)state;
    unsigned with_words = 0;
    for (unsigned id = 0; id < FG_JOBOPT_COUNT; id++) {
        const char *w[64];
        size_t n = fg_jobopt_values(id, w, 64);
        with_words += n > 0;
        for (size_t i = 0; i < n; i++) {
            struct fg_jobspec s;
            struct fg_err err = {0};
            fg_jobspec_init(&s, NULL);
            if (fg_jobspec_set(&s, id, w[i], &err))
                print_message("--%s %s: %s\n", fg_jobopt_at(id)->name, w[i], err.detail);
            assert_int_equal(fg_jobspec_set(&s, id, w[i], &err), 0);
        }
        assert_int_equal(fg_jobopt_values(id, w, 0), n); /* the count, whatever the room */
    }
    assert_true(with_words >= 8); /* mode precision optimizer quant zero attention ... */
    assert_int_equal(fg_jobopt_values(FG_JOBOPT_COUNT, NULL, 0), 0);
}

static void jobopt_find_should_take_every_spelling(void **state)
{
    (void)state;
    assert_int_equal(fg_jobopt_find("seq-len"), FG_JOBOPT_SEQ_LEN);
    assert_int_equal(fg_jobopt_find("ft-seq-len"), FG_JOBOPT_SEQ_LEN);
    assert_int_equal(fg_jobopt_find("ft_seq_len"), FG_JOBOPT_SEQ_LEN); /* the Lua key */
    assert_int_equal(fg_jobopt_find("framework"), FG_JOBOPT_FRAMEWORK);
    assert_int_equal(fg_jobopt_find("seqlen"), -1);
    assert_int_equal(fg_jobopt_find(NULL), -1);
}

/* peft's matching (tuners_utils.py check_target_module_exists): a str is one regex
 * full-matched against each module's path, a list entry matches by the end of the path. */
static void set_should_match_lora_targets_as_peft_does(void **state)
{
    (void)state;
    struct fg_jobspec s;
    /* axolotl examples/gemma3/gemma-3-4b-vision-qlora.yml */
    spec_of(&s, (const char *const[]){"mode=lora", "lora-targets=model.language_model.layers."
                                      "[\\d]+.(mlp|cross_attn|self_attn).(up|down|gate|q|k|v|o)"
                                      "_proj", NULL});
    assert_int_equal(s.job.lora_targets, FG_LORA_LIST);
    assert_string_equal(s.job.lora_list, "q,k,v,o,gate,up,down");
    /* layers picked by the expression (axolotl examples/ebft): counted on every layer */
    spec_of(&s, (const char *const[]){"mode=lora", "lora-targets=.*\\.layers\\.(3|7|11)\\."
                                      "self_attn\\.(q|v)_proj", NULL});
    assert_string_equal(s.job.lora_list, "q,v");
    /* dotted list entries by their last component; a shared expert's by its own role */
    spec_of(&s, (const char *const[]){"mode=lora", "lora-targets=self_attn.q_proj,"
                                      "shared_expert.up_proj,linear_attn.in_proj_qkvz", NULL});
    assert_string_equal(s.job.lora_list, "q,shared_up,in_proj");
    struct fg_err err = {0};
    fg_jobspec_init(&s, "--ft-");
    assert_int_equal(fg_jobspec_set(&s, FG_JOBOPT_LORA_TARGETS, "vision_tower\\..*", &err),
                     FG_E_INVAL);
    assert_non_null(strstr(err.detail, "matches no attention or MLP linear"));
    assert_int_equal(fg_jobspec_set(&s, FG_JOBOPT_LORA_TARGETS, "(?=q)q_proj", &err), FG_E_INVAL);
    assert_non_null(strstr(err.detail, "a regular expression fitgate cannot read"));
    /* a lazy quantifier matches as the greedy one */
    spec_of(&s, (const char *const[]){"mode=lora", "lora-targets=.*?self_attn\\.(q|v)_proj",
                                      NULL});
    assert_string_equal(s.job.lora_list, "q,v");
    /* what would make regcomp copy its tree without bound (the fuzzer's 2.3 GB input: a
     * repeat of a repeat), a count past 16, nested repeated groups: refused, at once */
    static const char *const hostile[] = {
        "q_proj++++++++++++++++++++++++++++++++", "(q|k)_proj{1000}",
        "((((((q+)+)+)+)+)+)_proj", "q{2}{3}_proj", "q_proj{x}",
    };
    for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
        assert_int_equal(fg_jobspec_set(&s, FG_JOBOPT_LORA_TARGETS, hostile[i], &err),
                         FG_E_INVAL);
        assert_non_null(strstr(err.detail, "a regular expression fitgate cannot read"));
    }
}

static void set_should_take_peft_target_modules(void **state)
{
    (void)state;
    struct fg_jobspec s;
    spec_of(&s, (const char *const[]){"mode=lora", "lora-targets=q_proj,v_proj", NULL});
    assert_int_equal(s.job.lora_targets, FG_LORA_LIST);
    assert_string_equal(s.job.lora_list, "q,v");
    spec_of(&s, (const char *const[]){"mode=lora", "lora-targets=[\"gate_proj\", \"up_proj\", "
                                                   "\"down_proj\"]", NULL});
    assert_string_equal(s.job.lora_list, "gate,up,down");
    spec_of(&s, (const char *const[]){"mode=lora", "lora-targets=c_attn,c_proj", NULL});
    assert_string_equal(s.job.lora_list, "qkv,o,down"); /* GPT-2: c_proj is both */
    spec_of(&s, (const char *const[]){"mode=lora", "lora-targets=query_key_value", NULL});
    assert_string_equal(s.job.lora_list, "qkv");
    struct fg_err err = {0};
    fg_jobspec_init(&s, "--ft-");
    assert_int_equal(fg_jobspec_set(&s, FG_JOBOPT_LORA_TARGETS, "q_proj;rm -rf", &err),
                     FG_E_INVAL);
    assert_non_null(strstr(err.detail, "--ft-lora-targets"));
    /* the peft names reach the same layers as the roles */
    struct fg_model *m = load(M "meta-llama--Llama-3.1-8B");
    struct fg_estimate a, b;
    spec_of(&s, (const char *const[]){"mode=lora", "lora-targets=q_proj,v_proj", NULL});
    assert_int_equal(fg_memory_estimate(m, &s.job, &a, &err), 0);
    spec_of(&s, (const char *const[]){"mode=lora", "lora-targets=qv", NULL});
    assert_int_equal(fg_memory_estimate(m, &s.job, &b, &err), 0);
    assert_int_equal(a.adapter_params, b.adapter_params);
    assert_int_equal(a.adapter_params, 32ull * 16 * (4096 + 4096 + 4096 + 1024));
    fg_model_free(m);
}

static void set_should_name_the_option_in_the_front_ends_spelling(void **state)
{
    (void)state;
    struct fg_jobspec s;
    struct fg_err err = {0};
    fg_jobspec_init(&s, "--ft-");
    assert_int_equal(fg_jobspec_set(&s, FG_JOBOPT_TP, "0", &err), FG_E_RANGE);
    assert_string_equal(err.detail, "--ft-tp=0: expected a whole number in 1..1024");
    assert_int_equal(fg_jobspec_set(&s, FG_JOBOPT_FRAMEWORK, "keras", &err), FG_E_INVAL);
    assert_non_null(strstr(err.detail, "--ft-framework: framework 'keras' is not one of transformers|"));
    assert_int_equal(fg_jobspec_set(&s, FG_JOBOPT_MODE, "pretrain", &err), FG_E_INVAL);
    assert_non_null(strstr(err.detail, "--ft-mode"));
    assert_int_equal(fg_jobspec_set(&s, FG_JOBOPT_GRAD_CKPT, "maybe", &err), FG_E_INVAL);
    fg_jobspec_init(&s, NULL);
    assert_int_equal(fg_jobspec_set(&s, FG_JOBOPT_GRAD_CKPT, "", &err), 0); /* a flag */
    assert_true(s.job.grad_ckpt);
    assert_int_equal(fg_jobspec_set(&s, FG_JOBOPT_GPU_UTIL, "1.5", &err), FG_E_RANGE);
}

/* ---- the framework rows ------------------------------------------------------------ */

/* The loss and the autocast a framework's LoRA runs with (framework.c rows): HF Trainer's
 * bf16=True autocasts a bf16 base unless --precision says bf16; lit-gpt's chunked loss keeps
 * log-softmax chunks in the logits' dtype, torchtune's upcasts them, unsloth's kernel keeps
 * a log-sum-exp. */
static void framework_should_set_the_loss_autocast_and_4bit_base_it_runs(void **state)
{
    (void)state;
    static const struct {
        const char *fw, *precision;
        bool autocast, chunked;
        enum fg_ce_kept ce;
    } rows[] = {
        {"hf", NULL, true, false, FG_CE_FP32},
        {"hf", "bf16", false, false, FG_CE_FP32},
        {"hf", "bf16-mixed", true, false, FG_CE_FP32},
        {"axolotl", NULL, true, false, FG_CE_FP32},
        {"lit-gpt", NULL, false, true, FG_CE_COMPUTE},
        {"torchtune", NULL, false, true, FG_CE_FP32},
        {"unsloth", NULL, false, true, FG_CE_LSE},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char fw[64], prec[64];
        snprintf(fw, sizeof fw, "framework=%s", rows[i].fw);
        snprintf(prec, sizeof prec, "precision=%s", rows[i].precision ? rows[i].precision : "");
        const char *kv[] = {"mode=lora", fw, rows[i].precision ? prec : NULL, NULL};
        struct fg_jobspec s;
        spec_of(&s, kv);
        print_message("%s %s\n", rows[i].fw, rows[i].precision ? rows[i].precision : "-");
        assert_int_equal(s.job.autocast, rows[i].autocast);
        assert_int_equal(s.job.chunked_ce, rows[i].chunked);
        assert_int_equal(s.job.ce_kept, rows[i].ce);
    }
    /* torchtune's 4-bit base is torchao's NF4 with quantized scalers: nf4-dq's bytes */
    static const struct { const char *kv[4]; enum fg_quant quant; } q[] = {
        {{"mode=qlora", "framework=torchtune", NULL, NULL}, FG_QUANT_NF4_DQ},
        {{"mode=qlora", "framework=torchtune", "quant=nf4", NULL}, FG_QUANT_NF4},
        {{"mode=qlora", "framework=hf", NULL, NULL}, FG_QUANT_NF4},
    };
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        struct fg_jobspec s;
        spec_of(&s, q[i].kv);
        assert_int_equal(s.job.quant, q[i].quant);
    }
}

/* fitgate frameworks: every row names the repository, file and commit it was read from and
 * a date (YYYY-MM-DD): the commit's where a snapshot was fetched, else the release's, with
 * the stored record that gives it (dated) and a source that says stored files were read.
 * Each row's default loss is one --loss names. */
static void framework_rows_should_name_where_and_when_they_were_read(void **state)
{
    (void)state;
    const struct fg_framework *f;
    for (size_t i = 0; (f = fg_framework_at(i)); i++) {
        print_message("%s@%s %s %s %s\n", f->name, f->version, f->repo ? f->repo : "-",
                      f->commit ? f->commit : "-", f->date ? f->date : "-");
        assert_non_null(f->repo);
        assert_non_null(strchr(f->repo, '/'));
        assert_non_null(f->file);
        assert_true(strlen(f->file) > 3);
        assert_non_null(f->commit);
        assert_true(strlen(f->commit) >= 7);
        assert_non_null(f->date);
        int y, mo, d;
        assert_int_equal(sscanf(f->date, "%4d-%2d-%2d", &y, &mo, &d), 3);
        assert_true(y >= 2025 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31);
        if (f->dated) {
            assert_non_null(strstr(f->dated, "released by then: "));
            assert_non_null(strchr(f->dated, '#')); /* owner/repo#N: the record cited */
            assert_non_null(strstr(f->source, "stored file"));
        }
        struct fg_job j = {.loss = f->loss, .chunked_ce = f->chunked_ce};
        struct fg_job back = {0};
        assert_int_equal(fg_loss_parse(fg_loss_name(&j), &back, NULL), 0);
        assert_int_equal(back.loss, f->loss);
    }
    /* the releases people run today, and the older one where the defaults differ */
    assert_int_equal(fg_framework_find("trl")->loss, FG_LOSS_CHUNKED_NLL);
    assert_int_equal(fg_framework_find("trl@1.6")->loss, FG_LOSS_DEFAULT);
    assert_int_equal(fg_framework_find("megatron")->loss, FG_LOSS_VOCAB_PARALLEL);
    assert_int_equal(fg_framework_find("nemo")->loss, FG_LOSS_VOCAB_PARALLEL);
    assert_int_equal(fg_framework_find("unsloth")->loss, FG_LOSS_UNSLOTH);
    assert_int_equal(fg_framework_find("torchtune")->loss, FG_LOSS_LINEAR_CE);
    assert_string_equal(fg_framework_find("megatron")->version, "0.19");
    assert_string_equal(fg_framework_find("deepspeed")->version, "0.19");
}

static void framework_find_should_know_every_row_and_alias(void **state)
{
    (void)state;
    /* no framework named: transformers 4.57 (fp32 load, foreach AdamW); hf is the newest */
    assert_ptr_equal(fg_framework_find("transformers@4.57"), fg_framework_default());
    assert_ptr_equal(fg_framework_find("hf"), fg_framework_find("transformers"));
    assert_string_equal(fg_framework_find("transformers")->version, "5");
    assert_string_equal(fg_framework_find("transformers@4.57")->version, "4.57");
    assert_string_equal(fg_framework_find("hf@4.57.1")->version, "4.57");
    assert_string_equal(fg_framework_find("transformers@5.2")->version, "5");
    assert_null(fg_framework_find("transformers@4.1"));
    struct fg_err err = {0};
    assert_int_equal(fg_framework_unknown("transformers@4.1", "--", &err), FG_E_INVAL);
    assert_non_null(strstr(err.detail, "known: transformers@5, transformers@4.57"));
    assert_string_equal(fg_framework_find("LitGPT")->name, "lit-gpt");
    assert_string_equal(fg_framework_find("megatron-core")->name, "megatron");
    assert_null(fg_framework_find("keras"));
    size_t n = 0, names = 0;
    /* every row names its release, what it keeps and a source (fitgate frameworks) */
    const char *help = fg_jobopt_at(FG_JOBOPT_FRAMEWORK)->help;
    for (const struct fg_framework *f; (f = fg_framework_at(n)); n++) {
        print_message("%s@%s\n", f->name, f->version ? f->version : "(none)");
        assert_true(f->trains || f->serves);
        assert_non_null(f->version);
        assert_true(f->version[0] != '\0');
        assert_non_null(f->keeps);
        assert_non_null(f->source);
        assert_true(strlen(f->source) > 10);
        /* the option's help lists every framework by name */
        assert_non_null(strstr(help, f->name));
        /* no name hides another framework: the name finds its newest release */
        assert_string_equal(fg_framework_find(f->name)->name, f->name);
        names += fg_framework_is_newest(f);
    }
    assert_true(n > names); /* releases beside their stack's newest (transformers@4.57) */
    /* the help sbatch shows (framework_names.h, generated from the table) names every
     * framework once */
    size_t words = 1;
    for (const char *p = FG_FRAMEWORK_CHOICES; *p; p++)
        words += *p == '|';
    assert_true(names > 1);
    assert_int_equal(words, names);
    const char *w[64];
    assert_int_equal(fg_jobopt_values(FG_JOBOPT_FRAMEWORK, w, 64), names);
    assert_int_equal(fg_framework_find("vllm@0.20")->serve_budget, FG_SERVE_VLLM_020);
    char who[160];
    fg_framework_who_runs(FG_LAY_TP, who, sizeof who);
    assert_string_equal(who, "accelerate, axolotl, torchtitan, nemo, megatron");
    /* every row is documented, by name, with its sources */
    char *doc = NULL;
    size_t len;
    assert_int_equal(fg__read_file("docs/frameworks.md", 1 << 20, &doc, &len), 0);
    for (size_t i = 0; fg_framework_at(i); i++) {
        char want[48];
        snprintf(want, sizeof want, "`%s`", fg_framework_at(i)->name);
        if (!has(doc, want))
            print_message("docs/frameworks.md lacks %s\n", want);
        assert_true(has(doc, want));
    }
    free(doc);
}

static void finish_should_give_an_hf_lora_a_bf16_base_under_mixed_precision(void **state)
{
    (void)state;
    struct fg_jobspec hf, lit;
    spec_of(&hf, (const char *const[]){"mode=lora", "precision=bf16-mixed", NULL});
    spec_of(&lit, (const char *const[]){"mode=lora", "precision=bf16-mixed",
                                        "framework=lit-gpt", NULL});
    assert_int_equal(hf.job.precision, FG_PREC_BF16);
    assert_int_equal(hf.n_notes, 1);
    assert_non_null(strstr(hf.notes[0], "bf16"));
    assert_int_equal(lit.job.precision, FG_PREC_BF16_MIXED);
    /* Llama-2-70B: the frozen base is 2 B per parameter under hf, 4 B under Lightning */
    struct fg_model *m = load(M "meta-llama--Llama-2-70b-hf");
    struct fg_estimate a, b;
    struct fg_err err = {0};
    assert_int_equal(fg_memory_estimate(m, &hf.job, &a, &err), 0);
    assert_int_equal(fg_memory_estimate(m, &lit.job, &b, &err), 0);
    assert_int_equal(a.b.weights, 2 * m->params_total);
    assert_int_equal(b.b.weights, 4 * m->params_total);
    fg_model_free(m);
}

static void finish_should_keep_the_megatron_master_copy_with_the_optimizer(void **state)
{
    (void)state;
    struct fg_jobspec s;
    spec_of(&s, (const char *const[]){"framework=nemo", NULL});
    assert_int_equal(s.job.master, FG_MASTER_OPTIMIZER);
    assert_int_equal(s.job.precision, FG_PREC_BF16);
    assert_int_equal(s.job.optimizer, FG_OPT_ADAMW_FUSED);
    struct fg_model *m = load(M "meta-llama--Llama-3.1-8B");
    struct fg_estimate e;
    struct fg_err err = {0};
    const uint64_t p = m->params_total;
    assert_int_equal(fg_memory_estimate(m, &s.job, &e, &err), 0);
    assert_int_equal(e.b.weights, 2 * p);   /* bf16 parameters */
    assert_int_equal(e.b.gradients, 4 * p); /* fp32 main_grad */
    assert_int_equal(e.b.optimizer, 12 * p); /* fp32 master + Adam m, v */
    /* the distributed optimizer shards master and states over DP (ZeRO-1) */
    s.job.zero = 1;
    s.job.dp = 4;
    assert_int_equal(fg_memory_estimate(m, &s.job, &e, &err), 0);
    assert_int_equal(e.b.weights, 2 * p);
    assert_true(e.b.optimizer >= 3 * p && e.b.optimizer <= 3 * p + 12 * 4);
    fg_model_free(m);
}

/* ---- the gate judges the job as it runs ------------------------------------------------ */

static void gate_should_judge_a_lit_gpt_fsdp_job_on_its_own_layout(void **state)
{
    (void)state;
    /* measured-dev's published lit-gpt FSDP run that ran out of memory on 4 x A10G */
    struct fg_gate *g = calloc(1, sizeof *g);
    gate(M "meta-llama--Llama-2-7b-hf",
         (const char *const[]){"framework=lit-gpt", "mode=full", "precision=bf16", "zero=3",
                               "unsharded-copy", "grad-ckpt", "batch=4", "seq-len=512", NULL},
         "a10g", 4, NULL, g);
    assert_true(g->assessed);
    assert_int_equal(g->d.kind, FG_DECIDE_REJECT);
    assert_int_equal(g->a.job.dp, 4);
    assert_int_equal(g->a.job.tp, 1);
    assert_true(g->a.est.total_bytes > 30.0e9 && g->a.est.total_bytes < 30.6e9);
    assert_true(line_has(g, 0, "does not fit --gres=gpu:a10g:4"));
    /* the remedies stay FSDP (lit-gpt runs no TP): a switch of lit-gpt's own fits the four
     * GPUs (parameter offload), so no more GPUs and no other framework are offered */
    assert_null(strstr(g->d.lines[2], "TP="));
    assert_true(g->d.n_remedies >= 1);
    for (size_t i = 0; i < g->d.n_remedies; i++) {
        assert_non_null(strstr(g->d.remedies[i], "(same GPUs): "));
        assert_null(strstr(g->d.remedies[i], "TP=")); /* lit-gpt's own: FSDP */
        assert_non_null(strstr(g->d.remedies[i], "--ft-tp=1 --ft-pp=1 --ft-dp=4 --ft-zero=3"));
    }
    assert_null(strstr(g->d.remedies[0], "--ft-framework="));
    free(g);
}

static void gate_should_refuse_a_layout_the_framework_cannot_run(void **state)
{
    (void)state;
    struct fg_gate *g = calloc(1, sizeof *g);
    gate(M "meta-llama--Llama-3.1-8B", (const char *const[]){"tp=2", NULL}, "h100", 2, NULL, g);
    assert_false(g->assessed);
    assert_int_equal(g->rc, FG_E_INVAL);
    assert_int_equal(g->d.kind, FG_DECIDE_REJECT);
    assert_true(line_has(g, 0, "--framework transformers cannot run TP=2"));
    assert_true(line_has(g, 0, "nemo, megatron"));
    /* a layout that does not multiply to the GPUs asked for */
    gate(M "meta-llama--Llama-3.1-8B", (const char *const[]){"framework=nemo", "tp=2", "dp=2",
                                                             NULL},
         "h100", 2, NULL, g);
    assert_int_equal(g->rc, FG_E_INVAL);
    assert_true(line_has(g, 0, "is 4 GPUs but the job asks for 2"));
    free(g);
}

static void gate_should_judge_a_declared_pipeline_by_its_largest_stage(void **state)
{
    (void)state;
    struct fg_gate *g = calloc(1, sizeof *g);
    const char *model = M "nvidia--NVIDIA-Nemotron-Nano-9B-v2";
    /* transformers 4.57: an fp32 + autocast full fine-tune */
    gate(model, (const char *const[]){"framework=hf@4.57", "tp=1", "pp=1", "dp=2", NULL},
         "h100", 2, NULL, g);
    assert_int_equal(g->d.kind, FG_DECIDE_REJECT);
    uint64_t whole = g->a.est.total_bytes;
    gate(model, (const char *const[]){"framework=hf@4.57", "pp=2", NULL}, "h100", 2, NULL, g);
    assert_true(g->assessed);
    assert_int_equal(g->a.job.pp, 2);
    assert_int_equal(g->a.layout.pp, 2);
    /* the breakdown is the largest stage's, about half the model */
    assert_int_equal(g->a.est.total_bytes, g->a.layout.peak_bytes);
    assert_true(g->a.est.total_bytes < whole * 6 / 10);
    /* 91.8 GB per GPU does not fit an H100 under 1.15x headroom: as the estimate says */
    bool fits = (double)g->a.est.total_bytes * 1.15 <= (double)g->a.usable;
    assert_int_equal(g->d.kind, fits ? FG_DECIDE_ALLOW : FG_DECIDE_REJECT);
    gate(model, (const char *const[]){"pp=2", "framework=nemo", NULL}, "h200", 2, NULL, g);
    assert_int_equal(g->d.kind, FG_DECIDE_ALLOW);
    free(g);
}

static void gate_should_serve_inside_the_engines_share_and_count_sequences(void **state)
{
    (void)state;
    struct fg_gate *g = calloc(1, sizeof *g);
    gate(M "meta-llama--Llama-3.1-8B",
         (const char *const[]){"framework=vllm", "mode=serve", "seq-len=32768", NULL}, "h100", 1,
         NULL, g);
    assert_int_equal(g->d.kind, FG_DECIDE_ALLOW);
    assert_true(g->a.gpu_util == 0.92);
    /* 0.92 x the card's total; 128 KiB of KV per token (32 layers x 8 KV heads x 128 x 2 x
     * 2 B): 4.29 GB per 32k sequence */
    assert_int_equal(g->a.kv_seq_bytes, 32768ull * 32 * 8 * 128 * 2 * 2);
    uint64_t n = (g->a.usable - g->a.engine_static) / g->a.kv_seq_bytes;
    assert_int_equal(g->a.fit.max_batch, n);
    assert_true(n >= 12 && n <= 15);
    assert_int_equal(g->a.serve_tokens, 8192); /* get_batch_defaults: an H100 is >= 70 GiB */
    assert_true(line_has(g, 1, "at once"));
    /* 70B: not one sequence fits under 0.92 x one card; the fewest GPUs that hold it are
     * tensor parallel inside the node, re-judged by the same budget */
    gate(M "meta-llama--Llama-3.1-70B",
         (const char *const[]){"framework=vllm", "mode=serve", "seq-len=32768", NULL}, "h100", 1,
         NULL, g);
    assert_int_equal(g->d.kind, FG_DECIDE_REJECT);
    assert_true(line_has(g, 1, "0 at once"));
    /* at TP=2 each rank holds 70.6 GB of weights and the v2 runner's dummy sampler over
     * 1024 x 128,256 logits at 6 B each (0.8 GB, serve_engine.c): 6.2 GB of KV left, where
     * one 32k sequence needs 5.4 GB; the serving remedy is tensor parallel over two GPUs,
     * as options and the request */
    assert_true(g->d.n_remedies >= 1);
    assert_non_null(strstr(g->d.remedies[0], "(more GPUs): --ft-tp=2 --ft-pp=1 --ft-dp=1 "
                                             "--gres=gpu:h100:2 (2 x H100 80 GB; TP=2"));
    for (size_t i = 0; i < g->d.n_remedies; i++) /* never a training switch */
        assert_null(strstr(g->d.remedies[i], "grad-ckpt"));
    free(g);
}

/* Issue 29: gpt-oss-120b is MXFP4 (experts only, the rest bf16): one H100 holds it, with a
 * KV cache for several sequences; the serve line names no optimizer. */
static void gate_should_serve_gpt_oss_120b_on_one_h100_in_mxfp4(void **state)
{
    (void)state;
    struct fg_gate *g = calloc(1, sizeof *g);
    gate(M "openai--gpt-oss-120b", (const char *const[]){"framework=vllm", "mode=serve", NULL},
         "h100", 1, NULL, g);
    assert_int_equal(g->d.kind, FG_DECIDE_ALLOW);
    /* vLLM logs 64.38 GiB (69.1 GB) of weights for it on an H100 */
    assert_true(g->a.est.b.weights > 66e9 && g->a.est.b.weights < 71e9);
    assert_true(g->a.fit.max_batch >= 4);
    assert_int_equal(g->a.serve_refusal, FG_VLLM_STARTS);
    /* 0.92 x (85,520,809,984 - 615 MiB) */
    assert_true(fabs((double)g->a.usable - 0.92 * (85520809984.0 - (615 << 20))) < 2);
    /* not its whole context: see the next test */
    assert_true(g->a.serve_max_len > 60000 && g->a.serve_max_len < 131072);
    free(g);
}

/* Issue 34: `vllm serve openai/gpt-oss-120b --max-model-len 131072` on one H100 does not
 * start (vLLM issue 23278 logged -2.14 GiB of KV memory at 0.10.1's 0.9).  The profile
 * run's sampler over 1024 sequences of 201,088 logits (5.6 GB) and the CUDA graphs leave
 * less KV than one 131072-token sequence needs (18 full-attention layers x 2 KiB per
 * token: 4.5 GiB): rejected with vLLM's own message and numbers. */
static void gate_should_reject_gpt_oss_120b_at_its_whole_context_as_vllm_does(void **state)
{
    (void)state;
    struct fg_gate *g = calloc(1, sizeof *g);
    gate(M "openai--gpt-oss-120b",
         (const char *const[]){"framework=vllm", "mode=serve", "seq-len=131072", NULL}, "h100",
         1, NULL, g);
    assert_int_equal(g->d.kind, FG_DECIDE_REJECT);
    assert_int_equal(g->a.serve_refusal, FG_VLLM_MAX_LEN);
    assert_int_equal(g->a.serve_seqs, 1024);
    assert_true(g->a.serve_sampler == 1024ull * (201088ull * 27 + 2 * 2880));
    assert_true(g->a.serve_kv_avail > 0 && (uint64_t)g->a.serve_kv_avail < g->a.kv_seq_bytes);
    assert_true(line_has(g, 3, "To serve at least one request with the model's max seq len "
                               "(131072)"));
    assert_true(line_has(g, 3, "estimated maximum model length is"));
    free(g);
}

/* Issue 29: DeepSeek-R1 (FP8, 128x128 block scales) at TP=8 on 8 x H200 fits at 32k, with
 * the latent cache replicated on every rank: 61 layers x (512 + 64) x 2 B x 32768 tokens. */
static void gate_should_serve_deepseek_r1_fp8_with_a_replicated_latent_cache(void **state)
{
    (void)state;
    struct fg_gate *g = calloc(1, sizeof *g);
    gate(M "deepseek-ai--DeepSeek-R1",
         (const char *const[]){"framework=vllm", "mode=serve", "tp=8", "seq-len=32768", NULL},
         "h200", 8, NULL, g);
    assert_int_equal(g->d.kind, FG_DECIDE_ALLOW);
    uint64_t kv = 61ull * (512 + 64) * 2 * 32768;
    assert_int_equal(g->a.kv_seq_bytes, kv);
    assert_true(kv > 2.2e9 && kv < 2.4e9);
    assert_true(g->a.fit.max_batch >= 8);
    /* fp8 KV halves the line */
    gate(M "deepseek-ai--DeepSeek-R1",
         (const char *const[]){"framework=vllm", "mode=serve", "tp=8", "seq-len=32768",
                               "kv-dtype=fp8", NULL}, "h200", 8, NULL, g);
    assert_int_equal(g->a.kv_seq_bytes, kv / 2);
    /* SGLang: mem_fraction_static from the card (143,771 MiB, TP=8): reserve max(512 + 1.5 x
     * 8192 + 2 x 512 + 8 / 8 x 1024 + 1536 for an MLA model's prefill graphs, 10240) = 16384
     * MiB, fraction 0.886 (memory_hook.py reserve_for_graph_mb) */
    gate(M "deepseek-ai--DeepSeek-R1",
         (const char *const[]){"framework=sglang", "mode=serve", "tp=8", "seq-len=32768", NULL},
         "h200", 8, NULL, g);
    assert_int_equal(g->d.kind, FG_DECIDE_ALLOW);
    assert_true(g->a.gpu_util == 0.886);
    /* the answer names the reserve and its graphs: 2 x 512 decode + 1536 MLA prefill MiB */
    assert_int_equal(g->a.serve_graph_reserve, (2ull * 512 + 1536) << 20);
    assert_true(line_has(g, 1, "a reserve of"));
    assert_true(line_has(g, 1, "CUDA graphs 2.7 GB"));
    free(g);
}

/* GQA at TP above the KV heads: each rank keeps one head (max(1, kv_heads / tp)), so the KV
 * per rank stops shrinking; vLLM 0.20 keeps 0.9 with the context inside its budget. */
static void gate_should_keep_one_kv_head_per_rank_and_vllm_020_semantics(void **state)
{
    (void)state;
    struct fg_gate *g = calloc(1, sizeof *g);
    gate(M "Qwen--Qwen3-235B-A22B",
         (const char *const[]){"framework=vllm", "mode=serve", "tp=8", "seq-len=4096", NULL},
         "h200", 8, NULL, g);
    /* 4 KV heads over TP=8: 94 layers x 1 head x 128 x 2 x 2 B x 4096, not half a head */
    assert_int_equal(g->a.kv_seq_bytes, 94ull * 128 * 2 * 2 * 4096);
    gate(M "meta-llama--Llama-3.1-8B",
         (const char *const[]){"framework=vllm@0.20", "mode=serve", NULL}, "h100", 1, NULL, g);
    assert_true(g->a.gpu_util == 0.9);
    assert_int_equal(g->a.serve_graphs, 0);
    free(g);
}

static void gate_should_let_an_override_through_only_where_allowed(void **state)
{
    (void)state;
    struct fg_gate *g = calloc(1, sizeof *g);
    struct fg_policy p;
    fg_policy_init(&p);
    const char *const kv[] = {"mode=lora", "override=demo at 9", NULL};
    gate(M "nvidia--NVIDIA-Nemotron-Nano-9B-v2", kv, "t4", 1, &p.rules, g);
    assert_int_equal(g->d.kind, FG_DECIDE_REJECT);
    assert_true(line_has(g, 3, "AllowOverride=no"));
    p.rules.allow_override = true;
    gate(M "nvidia--NVIDIA-Nemotron-Nano-9B-v2", kv, "t4", 1, &p.rules, g);
    assert_int_equal(g->d.kind, FG_DECIDE_ALLOW);
    assert_true(g->d.overridden);
    assert_true(line_has(g, 0, "override: the job goes on as asked"));
    assert_true(line_has(g, 3, "demo at 9"));
    free(g);
}

static void gate_checkpoint_should_verify_or_doubt_the_count(void **state)
{
    (void)state;
    /* headers that agree with the graph: the count is the checkpoint's */
    struct fg_model *m = load("tests/fixtures/hub/repos/HuggingFaceTB/SmolLM2-135M-Instruct");
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    fg_model_weigh_checkpoint(m, "tests/fixtures/hub/repos/HuggingFaceTB/SmolLM2-135M-Instruct");
    assert_int_equal(m->certainty, FG_CERT_CHECKPOINT);
    assert_int_equal(m->params_checkpoint, 134515008);
    assert_int_equal(m->params_checkpoint, m->params_total);
    fg_model_free(m);
    /* a sharded checkpoint, through its index and both shard headers */
    m = load("tests/fixtures/hub/repos/google/gemma-2b-it/config.json");
    fg_model_weigh_checkpoint(m, "tests/fixtures/hub/repos/google/gemma-2b-it/config.json");
    assert_int_equal(m->certainty, FG_CERT_CHECKPOINT);
    assert_int_equal(m->params_checkpoint, 2506172416ull);
    fg_model_free(m);
    /* a checkpoint that stores 17% more than the graph: unsure, both numbers said */
    m = load("tests/fixtures/hub/repos/acme/llama-buffers");
    fg_model_weigh_checkpoint(m, "tests/fixtures/hub/repos/acme/llama-buffers");
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_string_equal(m->unsure_key, "checkpoint");
    assert_int_equal(m->params_checkpoint, 162827520);
    bool said = false;
    for (size_t i = 0; i < m->n_notes; i++)
        said = said || strstr(m->notes[i], "stores 162827520 parameters, the graph counts "
                                           "134515008 (17.4% off)");
    assert_true(said);
    fg_model_free(m);
    /* no checkpoint beside the config: nothing changes */
    m = load(M "Qwen--Qwen3-8B");
    fg_model_weigh_checkpoint(m, M "Qwen--Qwen3-8B");
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    assert_int_equal(m->params_checkpoint, 0);
    fg_model_free(m);
}

static void lua_filter_should_know_every_option_and_flag(void **state)
{
    (void)state;
    char *lua = NULL;
    size_t n;
    assert_int_equal(fg__read_file("contrib/job_submit.lua", 1 << 20, &lua, &n), 0);
    const char *opts = strstr(lua, "local OPTIONS = {"), *flags = strstr(lua, "local FLAGS = {");
    assert_non_null(opts);
    assert_non_null(flags);
    for (unsigned id = 0; id < FG_JOBOPT_COUNT; id++) {
        const struct fg_jobopt *o = fg_jobopt_at(id);
        char want[64];
        size_t k = 0;
        want[k++] = '"';
        for (const char *p = o->name; *p && k < sizeof want - 2; p++)
            want[k++] = *p == '-' ? '_' : *p;
        want[k++] = '"';
        want[k] = '\0';
        const char *hit = strstr(opts, want);
        if (!hit || hit > flags)
            print_message("contrib/job_submit.lua OPTIONS lacks %s\n", want);
        assert_true(hit && hit < flags);
        /* a flag is listed as one, with its Lua key */
        if (!o->arg) {
            char flag[72];
            snprintf(flag, sizeof flag, "%.*s = true", (int)(k - 2), want + 1);
            assert_non_null(strstr(flags, flag));
        }
    }
    free(lua);
}

static void review_cases_should_hold(void **state)
{
    (void)state;
    struct fg_gate *g = calloc(1, sizeof *g);
    struct fg_jobspec s;
    struct fg_err err = {0};
    /* a flag as Slurm's spank_option_get and cli_filter hand it over */
    fg_jobspec_init(&s, "--ft-");
    assert_int_equal(fg_jobspec_set(&s, FG_JOBOPT_GRAD_CKPT, "set", &err), 0);
    assert_true(s.job.grad_ckpt);
    /* offload needs the ZeRO stage that does it */
    gate(M "meta-llama--Llama-3.1-8B", (const char *const[]){"offload=params", NULL}, "h100", 4,
         NULL, g);
    assert_int_equal(g->rc, FG_E_INVAL);
    assert_true(line_has(g, 0, "--offload params needs ZeRO-3"));
    gate(M "meta-llama--Llama-3.1-8B",
         (const char *const[]){"framework=deepspeed", "offload=optimizer", NULL}, "h100", 4,
         NULL, g);
    assert_int_equal(g->rc, FG_E_INVAL);
    gate(M "meta-llama--Llama-3.1-8B",
         (const char *const[]){"framework=deepspeed", "zero=3", "offload=params", NULL}, "h100",
         1, NULL, g);
    assert_true(g->assessed);
    assert_int_equal(g->a.est.b.weights, 0);
    bool gathered = false;
    for (size_t i = 0; i < g->a.est.n_lines; i++)
        gathered = gathered || (strstr(g->a.est.lines[i].source, "all-gather") &&
                                g->a.est.lines[i].bytes > 0);
    assert_true(gathered); /* the layer in flight is on the GPU, even on one rank */
    /* TP with EP, as Megatron-Core runs it, is judged, not refused */
    gate(M "Qwen--Qwen3-30B-A3B",
         (const char *const[]){"framework=megatron", "tp=2", "ep=2", NULL}, "h100", 8, NULL, g);
    assert_true(g->assessed);
    assert_int_equal(g->a.job.tp, 2);
    assert_int_equal(g->a.job.ep, 2);
    /* context parallel reaches the layout and the job's environment */
    gate(M "meta-llama--Llama-3.1-8B",
         (const char *const[]){"framework=nemo", "tp=2", "cp=2", NULL}, "h100", 4, NULL, g);
    assert_true(g->assessed);
    assert_int_equal(g->d.kind, FG_DECIDE_ALLOW);
    assert_int_equal(g->d.layout.cp, 2);
    assert_int_equal(g->d.layout.gpus, 4);
    gate(M "meta-llama--Llama-3.1-8B",
         (const char *const[]){"framework=nemo", "cp=2", "seq-len=4097", NULL}, "h100", 2, NULL,
         g);
    assert_int_equal(g->rc, FG_E_INVAL);
    /* a serving engine on two nodes: TP inside a node, PP across */
    gate(M "meta-llama--Llama-3.1-405B", (const char *const[]){"framework=vllm", "mode=serve",
                                                              NULL},
         "h100", 16, NULL, g);
    assert_true(g->assessed);
    assert_int_equal(g->a.job.tp, 8);
    assert_int_equal(g->a.job.pp, 2);
    /* a served model keeps the precision it is asked for; --gpu-util is a serving engine's */
    spec_of(&s, (const char *const[]){"mode=serve", "precision=fp32", NULL});
    assert_int_equal(s.job.precision, FG_PREC_FP32);
    fg_jobspec_init(&s, NULL);
    assert_int_equal(fg_jobspec_set(&s, FG_JOBOPT_GPU_UTIL, "0.5", &err), 0);
    assert_int_equal(fg_jobspec_finish(&s, &err), FG_E_INVAL);
    /* QLoRA where the framework has no 4-bit path */
    fg_jobspec_init(&s, NULL);
    assert_int_equal(fg_jobspec_set(&s, FG_JOBOPT_MODE, "qlora", &err), 0);
    assert_int_equal(fg_jobspec_set(&s, FG_JOBOPT_FRAMEWORK, "nemo", &err), 0);
    assert_int_equal(fg_jobspec_finish(&s, &err), FG_E_INVAL);
    /* an override takes the risk of a fit, not the site's other rules */
    struct fg_policy p;
    fg_policy_init(&p);
    p.rules.allow_override = true;
    p.rules.modes = 1u << FG_MODE_SERVE;
    gate(M "Qwen--Qwen3-0.6B", (const char *const[]){"mode=full", "override=x", NULL}, "h100", 1,
         &p.rules, g);
    assert_int_equal(g->d.kind, FG_DECIDE_REJECT);
    assert_false(g->d.overridden);
    assert_true(g->d.by_rule);
    free(g);
}

static void slurm_time_should_read_every_form_sbatch_takes(void **state)
{
    (void)state;
    assert_int_equal(fg_slurm_time_minutes("90"), 90);
    assert_int_equal(fg_slurm_time_minutes("90:30"), 91);
    assert_int_equal(fg_slurm_time_minutes("1:30:00"), 90);
    assert_int_equal(fg_slurm_time_minutes("2-00:00:00"), 2880);
    assert_int_equal(fg_slurm_time_minutes("1-12"), 2160);
    assert_int_equal(fg_slurm_time_minutes("UNLIMITED"), FG_TIME_UNLIMITED);
    assert_int_equal(fg_slurm_time_minutes("infinite"), FG_TIME_UNLIMITED);
    /* Slurm's NO_VAL (sbatch without --time) and INFINITE as numbers */
    assert_int_equal(fg_slurm_time_minutes("4294967294"), 0);
    assert_int_equal(fg_slurm_time_minutes("4294967295"), FG_TIME_UNLIMITED);
    assert_int_equal(fg_slurm_time_minutes("abc"), 0);
    assert_int_equal(fg_slurm_time_minutes(NULL), 0);
}

/* TRL SFTConfig turns gradient checkpointing on; --no-grad-ckpt (= --grad-ckpt=no) turns it
 * off.  A LoRA of Llama-3.1-8B at 4096 tokens on one A100 40 GB: fits with the base in bf16
 * (model_init_kwargs dtype=bfloat16, --precision bf16); TRL's own default loads fp32
 * (create_model_from_path), which does not. */
static void gate_should_run_a_trl_lora_checkpointed_unless_told(void **state)
{
    (void)state;
    struct fg_gate *g = calloc(1, sizeof *g);
    const char *model = M "meta-llama--Llama-3.1-8B";
    gate(model, (const char *const[]){"framework=trl", "mode=lora", "precision=bf16",
                                      "seq-len=4096", NULL}, "a100_40g", 1, NULL, g);
    assert_true(g->assessed);
    assert_true(g->a.job.grad_ckpt);
    assert_true(g->d.fits);
    uint64_t ckpt = g->a.est.total_bytes;
    gate(model, (const char *const[]){"framework=trl", "mode=lora", "precision=bf16",
                                      "seq-len=4096", "no-grad-ckpt", NULL}, "a100_40g", 1,
         NULL, g);
    assert_false(g->a.job.grad_ckpt);
    assert_false(g->d.fits);
    uint64_t plain = g->a.est.total_bytes;
    gate(model, (const char *const[]){"framework=transformers", "mode=lora", "precision=bf16",
                                      "seq-len=4096", "loss=chunked-nll", NULL}, "a100_40g", 1,
         NULL, g);
    assert_int_equal(g->a.est.total_bytes, plain); /* Trainer: no checkpointing */
    gate(model, (const char *const[]){"framework=trl", "mode=lora", "precision=bf16",
                                      "seq-len=4096", "ft-grad-ckpt=no", NULL}, "a100_40g", 1,
         NULL, g);
    assert_int_equal(g->a.est.total_bytes, plain);
    print_message("trl lora 4096: %.1f GB checkpointed, %.1f GB not\n", ckpt / 1e9, plain / 1e9);
    assert_true(ckpt < plain / 2);
    /* TRL's default load dtype is float32: the frozen base at 4 B per parameter */
    gate(model, (const char *const[]){"framework=trl", "mode=lora", "seq-len=4096", NULL},
         "a100_40g", 1, NULL, g);
    assert_int_equal(g->a.job.precision, FG_PREC_BF16_MIXED);
    assert_true(g->a.est.b.weights >= 4 * 8000000000ull);
    free(g);
}

/* QLoRA under TRL: no prepare_model_for_kbit_training, so the embeddings and head stay in
 * the load dtype (bf16 with --precision bf16), and the adapters are cast to bf16. */
static void finish_should_keep_a_trl_qlora_rest_in_bf16(void **state)
{
    (void)state;
    struct fg_jobspec trl, hf;
    spec_of(&trl, (const char *const[]){"framework=trl", "mode=qlora", "precision=bf16",
                                        "seq-len=2048", NULL});
    spec_of(&hf, (const char *const[]){"framework=transformers", "mode=qlora", "seq-len=2048",
                                       NULL});
    assert_false(trl.job.kbit_prepared);
    assert_true(trl.job.adapters_bf16);
    assert_true(hf.job.kbit_prepared);
    struct fg_model *m = load(M "Qwen--Qwen3-8B");
    struct fg_estimate a, b;
    struct fg_err err = {0};
    assert_int_equal(fg_memory_estimate(m, &trl.job, &a, &err), 0);
    assert_int_equal(fg_memory_estimate(m, &hf.job, &b, &err), 0);
    /* embeddings + head (2 x 151936 x 4096) at 2 B instead of 4: 2.49 GB */
    uint64_t rest = 2ull * m->vocab * m->hidden;
    print_message("qwen3-8b qlora weights: trl %.2f GB, transformers %.2f GB\n",
                  a.b.weights / 1e9, b.b.weights / 1e9);
    assert_true(b.b.weights - a.b.weights >= rest * 2 - rest / 50 &&
                b.b.weights - a.b.weights <= rest * 2 + rest / 50);
    assert_true(b.b.weights - a.b.weights > 2.4e9 && b.b.weights - a.b.weights < 2.6e9);
    assert_true(a.b.adapters * 2 == b.b.adapters); /* bf16: 8 B per adapter parameter vs 16 */
    fg_model_free(m);
}

/* torchtune's single-device full configs: optimizer_in_bwd with PagedAdamW8bit: no full
 * gradient set and 2 B of states per parameter; --optimizer paged-adamw: fp32 states. */
static void finish_should_step_a_torchtune_full_in_backward(void **state)
{
    (void)state;
    struct fg_jobspec tt, off, paged;
    spec_of(&tt, (const char *const[]){"framework=torchtune", NULL});
    spec_of(&off, (const char *const[]){"framework=torchtune", "optimizer-in-bwd=no",
                                        "optimizer=adamw-fused", NULL});
    spec_of(&paged, (const char *const[]){"framework=torchtune", "optimizer=paged-adamw", NULL});
    assert_true(tt.job.optimizer_in_bwd);
    assert_int_equal(tt.job.optimizer, FG_OPT_PAGED_ADAMW_8BIT);
    assert_false(tt.job.grad_ckpt); /* cfg.get("enable_activation_checkpointing", False) */
    struct fg_model *m = load(M "meta-llama--Llama-3.1-8B");
    struct fg_estimate a, b, c;
    struct fg_err err = {0};
    const uint64_t p = m->params_total;
    assert_int_equal(fg_memory_estimate(m, &tt.job, &a, &err), 0);
    assert_int_equal(fg_memory_estimate(m, &off.job, &b, &err), 0);
    assert_int_equal(fg_memory_estimate(m, &paged.job, &c, &err), 0);
    assert_int_equal(a.b.optimizer, 2 * p);
    assert_int_equal(a.b.gradients, 2ull * m->vocab * m->hidden); /* the embedding's */
    assert_int_equal(a.step_bytes, 0);
    assert_int_equal(b.b.gradients, 2 * p);
    assert_int_equal(b.b.optimizer, 4 * p);
    assert_int_equal(c.b.optimizer, 8 * p); /* fp32 m and v */
    assert_true(a.total_bytes + 2 * p - a.b.gradients <= b.total_bytes);
    fg_model_free(m);
}

/* lit-gpt QLoRA: bitsandbytes 0.42's MatMul4Bit keeps its input, and the StableEmbedding
 * swap keeps the old embedding and the new one's gradient. */
static void finish_should_count_what_lit_gpt_qlora_keeps(void **state)
{
    (void)state;
    struct fg_jobspec s;
    spec_of(&s, (const char *const[]){"framework=lit-gpt", "mode=qlora", "precision=bf16",
                                      "lora-targets=qv", "seq-len=512", "batch=2", NULL});
    assert_true(s.job.bnb_keeps_input);
    assert_true(s.job.embed_swap);
    assert_true(s.job.head_4bit);
    struct fg_model *m = load(M "meta-llama--Llama-2-7b-hf");
    struct fg_estimate a, b;
    struct fg_err err = {0};
    assert_int_equal(fg_memory_estimate(m, &s.job, &a, &err), 0);
    s.job.embed_swap = s.job.bnb_keeps_input = false;
    assert_int_equal(fg_memory_estimate(m, &s.job, &b, &err), 0);
    assert_int_equal(a.b.overhead - b.b.overhead - (a.b.activations - b.b.activations) / 20,
                     4ull * m->vocab * m->hidden);
    assert_true(a.b.activations > b.b.activations);
    /* the head is one of the 4-bit linears: 0.5625 B per weight instead of 2 */
    s.job.head_4bit = false;
    struct fg_estimate c;
    assert_int_equal(fg_memory_estimate(m, &s.job, &c, &err), 0);
    uint64_t head = (uint64_t)m->vocab * m->hidden;
    assert_true(c.b.weights - a.b.weights > head * 143 / 100 &&
                c.b.weights - a.b.weights < head * 145 / 100);
    fg_model_free(m);
}

/* lit-gpt builds its own lm_head (model.py, never tied), swaps it to 4 bits with the blocks
 * for QLoRA and --quantize bnb.nf4 serving, and quantizes from fp16 (Lightning's
 * _Linear4bit.quantize), so MatMul4Bit's dequantized fp16 weight is copied again to bf16:
 * QLoRA counts both copies of the head, 2 + 2 B. */
static void finish_should_build_lit_gpts_head_and_fp16_quantization(void **state)
{
    (void)state;
    struct fg_jobspec lit, hf, bf;
    spec_of(&lit, (const char *const[]){"framework=lit-gpt", "mode=serve", "quant=nf4", NULL});
    spec_of(&hf, (const char *const[]){"framework=transformers", "mode=serve", "quant=nf4",
                                       NULL});
    spec_of(&bf, (const char *const[]){"framework=lit-gpt", "mode=serve", NULL});
    assert_true(lit.job.head_4bit && lit.job.bnb_fp16_quant && lit.job.head_untied);
    assert_false(hf.job.head_4bit || hf.job.bnb_fp16_quant || hf.job.head_untied);
    assert_false(bf.job.head_4bit || bf.job.bnb_fp16_quant);
    assert_true(bf.job.head_untied);
    struct fg_jobspec q;
    spec_of(&q, (const char *const[]){"framework=lit-gpt", "mode=qlora", "precision=bf16",
                                      "lora-targets=qv", "seq-len=512", NULL});
    assert_true(q.job.bnb_fp16_quant);
    struct fg_model *m = load(M "meta-llama--Llama-2-7b-hf");
    struct fg_estimate a, b;
    struct fg_err err = {0};
    assert_int_equal(fg_memory_estimate(m, &q.job, &a, &err), 0);
    q.job.bnb_fp16_quant = false;
    assert_int_equal(fg_memory_estimate(m, &q.job, &b, &err), 0);
    assert_int_equal(a.b.overhead - b.b.overhead, 2ull * m->vocab * m->hidden);
    fg_model_free(m);
}

/* torchtitan: FSDP2 mixed precision (fp32 shards, no autocast copies) and per-op selective
 * checkpointing by default; --grad-ckpt=full and --no-grad-ckpt say otherwise. */
static void finish_should_run_torchtitan_selective_over_fp32_shards(void **state)
{
    (void)state;
    struct fg_jobspec sel, full, none, asked;
    spec_of(&sel, (const char *const[]){"framework=torchtitan", "seq-len=8192", NULL});
    spec_of(&full, (const char *const[]){"framework=torchtitan", "grad-ckpt=full",
                                         "seq-len=8192", NULL});
    spec_of(&none, (const char *const[]){"framework=torchtitan", "no-grad-ckpt",
                                         "seq-len=8192", NULL});
    spec_of(&asked, (const char *const[]){"framework=transformers", "grad-ckpt=selective",
                                          "seq-len=8192", NULL});
    assert_true(sel.job.grad_ckpt && sel.job.ac_selective);
    assert_true(full.job.grad_ckpt && !full.job.ac_selective);
    assert_false(none.job.grad_ckpt || none.job.ac_selective);
    assert_true(asked.job.grad_ckpt && asked.job.ac_selective);
    struct fg_model *m = load(M "meta-llama--Llama-3.1-8B");
    struct fg_estimate a, b, c;
    struct fg_err err = {0};
    const uint64_t p = m->params_total;
    assert_int_equal(fg_memory_estimate(m, &sel.job, &a, &err), 0);
    assert_int_equal(fg_memory_estimate(m, &full.job, &b, &err), 0);
    assert_int_equal(fg_memory_estimate(m, &none.job, &c, &err), 0);
    assert_int_equal(a.b.weights, 4 * p); /* fp32 master shards (one rank here) */
    assert_int_equal(a.b.overhead - (a.b.activations + a.b.logits) / 20, 0); /* no autocast */
    print_message("torchtitan 8192: activations %.1f GB selective, %.1f full, %.1f none\n",
                  a.b.activations / 1e9, b.b.activations / 1e9, c.b.activations / 1e9);
    assert_true(b.b.activations < a.b.activations && a.b.activations < c.b.activations / 2);
    /* float8 linears: aten._scaled_mm is not on the op-SAC save list, so float8 keeps what
     * bf16 keeps (torchtitan's Table 1 and 3: 76.8 vs 77.0 GiB, 61.8 vs 62.0); only
     * torchtitan */
    struct fg_jobspec f8;
    spec_of(&f8, (const char *const[]){"framework=torchtitan", "precision=float8",
                                       "seq-len=8192", NULL});
    assert_true(f8.job.float8 && f8.job.precision == FG_PREC_BF16_MIXED);
    struct fg_estimate d;
    assert_int_equal(fg_memory_estimate(m, &f8.job, &d, &err), 0);
    assert_int_equal(d.b.activations, a.b.activations);
    assert_int_equal(d.b.weights, a.b.weights);
    fg_jobspec_init(&f8, NULL);
    assert_int_equal(fg_jobspec_set(&f8, FG_JOBOPT_PRECISION, "float8", &err), 0);
    assert_int_equal(fg_jobspec_finish(&f8, &err), FG_E_INVAL);
    assert_non_null(strstr(err.detail, "--framework torchtitan"));
    fg_model_free(m);
}

/* torchtitan's TP runs SequenceParallel (configs.py enable_sequence_parallel = True): the
 * checkpointed block inputs and the norms are over TP, the linears' gathered inputs are
 * not.  Llama-3.1-70B at TP=8, 16 x 8192 tokens, full recompute (torchtitan's benchmarks
 * Table 4, 71.9 GiB measured): 80 block inputs of 8192 x 8192 x 2 B / 8 per sample. */
static void finish_should_shard_torchtitans_block_inputs_over_tp(void **state)
{
    (void)state;
    struct fg_jobspec sp, nosp;
    spec_of(&sp, (const char *const[]){"framework=torchtitan", "grad-ckpt=full", "tp=8",
                                       "seq-len=8192", NULL});
    spec_of(&nosp, (const char *const[]){"framework=torchtitan", "grad-ckpt=full", "tp=8",
                                         "sp=no", "seq-len=8192", NULL});
    assert_true(sp.job.sp && !nosp.job.sp);
    sp.job.tp = nosp.job.tp = 8; /* the layout's (assess.c job_layout sets it) */
    struct fg_model *m = load(M "meta-llama--Llama-3.1-70B");
    struct fg_estimate a, b;
    struct fg_err err = {0};
    assert_int_equal(fg_memory_estimate(m, &sp.job, &a, &err), 0);
    assert_int_equal(fg_memory_estimate(m, &nosp.job, &b, &err), 0);
    uint64_t inputs = 80ull * 8192 * 8192 * 2;
    assert_true(b.b.activations - a.b.activations >= inputs - inputs / 8);
    assert_true(a.b.activations > inputs / 8 && a.b.activations < inputs / 8 * 2);
    bool said = false;
    for (size_t i = 0; i < a.n_lines; i++)
        said |= strstr(a.lines[i].what, "sequence over TP") != NULL;
    assert_true(said);
    fg_model_free(m);
}

/*
 * torchtitan's published runs (pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md
 * at b5bcd76: Llama 3.1 on H100 96 GB, torchtitan 9dec370, memory as its max_reserved in GiB),
 * those without pipeline stages.  The estimate is meant to be comparable to the reserved
 * figure (memory.h); compile rows are kept (compile only lowers activations, so they check
 * the estimate from below).  They ran torchtitan 9dec370 (December 2024), whose loss is
 * 0.2.2's (cross_entropy over the whole logits), not main's ChunkedLossWrapper: the rows
 * are judged as torchtitan@0.2.2.  Gate: median |error| <= 10% on the TP and float8 rows (they
 * were +21% to +215% before sequence parallel and float8's SAC were read from the code),
 * and every row within 15%.
 */
static void gate_should_estimate_torchtitans_published_runs(void **state)
{
    (void)state;
    static const struct {
        const char *model, *ac;
        uint32_t gpus, tp, dp, cp, batch, seq;
        bool float8, tp_or_f8;
        double gib;
    } rows[] = {
        {"8B", "selective", 8, 1, 8, 1, 2, 8192, false, false, 82.4},      /* Table 1 */
        {"8B", "selective", 8, 1, 8, 1, 2, 8192, false, false, 77.0},      /* + compile */
        {"8B", "selective", 8, 1, 8, 1, 2, 8192, true, true, 76.8},        /* + float8 */
        {"8B", "full", 8, 1, 8, 1, 1, 32768, true, true, 83.9},            /* Table 2 */
        {"8B", "full", 8, 1, 4, 2, 1, 65536, true, true, 84.2},
        {"8B", "full", 8, 1, 2, 4, 1, 131072, true, true, 84.0},
        {"8B", "full", 8, 1, 1, 8, 1, 262144, true, true, 84.5},
        {"8B", "selective", 128, 1, 128, 1, 2, 8192, false, false, 67.0},  /* Table 3 */
        {"8B", "selective", 128, 1, 128, 1, 2, 8192, false, false, 62.0},
        {"8B", "selective", 128, 1, 128, 1, 2, 8192, true, true, 61.8},
        {"70B", "full", 256, 8, 32, 1, 16, 8192, true, true, 71.9},        /* Table 4 */
        {"70B", "full", 256, 8, 32, 1, 16, 8192, true, true, 67.6},        /* + async TP */
        /* (the last row's async TP is named below: the symmetric-memory workspace) */
    };
    /* Tables 5 and 6: 405B over TP 8 x PP 8, as 1F1B or Interleaved1F1B (two chunks a
     * rank) runs them over 8 micro-batches (the local batch over the PP degree, torchtitan
     * 9dec370's default count), judged as torchtitan@0.2.0, whose PP step keeps every
     * micro-batch's logits as 9dec370's does; the benchmark's figure is the largest over
     * the PP ranks (its footnote 1), as the estimate's.  Shown and held within 25%, not in
     * the median: the 1F1B rows are 13 .. 23% under (tests/accuracy/README.md) */
    static const struct {
        const char *schedule;
        uint32_t dp, cp, batch, seq;
        double gib;
    } pp_rows[] = {
        {"1F1B", 8, 1, 4, 8192, 82.5},   {"Interleaved1F1B", 8, 1, 4, 8192, 72.7},
        {"1F1B", 8, 1, 1, 32768, 75.3},  {"1F1B", 4, 2, 1, 65536, 75.9},
        {"1F1B", 2, 4, 1, 131072, 77.1}, {"1F1B", 1, 8, 1, 262144, 84.9},
    };
    enum { N = sizeof rows / sizeof rows[0] };
    double err[N], gated[N];
    size_t ng = 0;
    struct fg_gate *g = calloc(1, sizeof *g);
    for (size_t i = 0; i < N; i++) {
        char model[128], ac[32], tp[16], dp[16], cp[16], batch[16], seq[24];
        snprintf(model, sizeof model, M "meta-llama--Llama-3.1-%s", rows[i].model);
        snprintf(ac, sizeof ac, "grad-ckpt=%s", rows[i].ac);
        snprintf(tp, sizeof tp, "tp=%u", rows[i].tp);
        snprintf(dp, sizeof dp, "dp=%u", rows[i].dp);
        snprintf(cp, sizeof cp, "cp=%u", rows[i].cp);
        snprintf(batch, sizeof batch, "batch=%u", rows[i].batch);
        snprintf(seq, sizeof seq, "seq-len=%u", rows[i].seq);
        gate(model, (const char *const[]){"framework=torchtitan@0.2.2", ac, tp, dp, cp, batch, seq,
                                          rows[i].float8 ? "precision=float8" : "precision=bf16-mixed",
                                          i == N - 1 ? "async-tp" : "async-tp=no", NULL},
             "h100", rows[i].gpus, NULL, g);
        double meas = rows[i].gib * 1073741824.0;
        err[i] = fabs((double)g->a.est.total_bytes - meas) / meas;
        print_message("torchtitan row %zu: %.1f GB against %.1f GB: %+.1f%%\n", i,
                      g->a.est.total_bytes / 1e9, meas / 1e9,
                      ((double)g->a.est.total_bytes - meas) / meas * 100);
        assert_true(err[i] < 0.15);
        if (rows[i].tp_or_f8)
            gated[ng++] = err[i];
    }
    for (size_t i = 0; i < ng; i++) /* insertion sort for the median */
        for (size_t j = i; j > 0 && gated[j] < gated[j - 1]; j--) {
            double t = gated[j];
            gated[j] = gated[j - 1];
            gated[j - 1] = t;
        }
    double median = ng % 2 ? gated[ng / 2] : (gated[ng / 2 - 1] + gated[ng / 2]) / 2;
    print_message("torchtitan TP / float8 rows: median |error| %.1f%%\n", median * 100);
    assert_true(median <= 0.10);
    for (size_t i = 0; i < sizeof pp_rows / sizeof pp_rows[0]; i++) {
        char dp[16], cp[16], batch[16], seq[24], sched[40];
        snprintf(sched, sizeof sched, "pp-schedule=%s", pp_rows[i].schedule);
        snprintf(dp, sizeof dp, "dp=%u", pp_rows[i].dp);
        snprintf(cp, sizeof cp, "cp=%u", pp_rows[i].cp);
        snprintf(batch, sizeof batch, "batch=%u", pp_rows[i].batch);
        snprintf(seq, sizeof seq, "seq-len=%u", pp_rows[i].seq);
        gate(M "meta-llama--Llama-3.1-405B",
             (const char *const[]){"framework=torchtitan@0.2.0", "grad-ckpt=full", "tp=8",
                                   "pp=8", dp, cp, batch, seq, "precision=float8", sched,
                                   "pp-microbatches=8", "async-tp", NULL},
             "h100", 512, NULL, g);
        double meas = pp_rows[i].gib * 1073741824.0, est = (double)g->a.est.total_bytes;
        print_message("torchtitan PP row %zu: %.1f GB against %.1f GB: %+.1f%% (first stage "
                      "%.1f, last %.1f)\n", i, est / 1e9, meas / 1e9, (est - meas) / meas * 100,
                      g->a.layout.stage_bytes[0] / 1e9, g->a.layout.stage_bytes[7] / 1e9);
        assert_true(fabs(est - meas) / meas < 0.25);
        if (!strcmp(pp_rows[i].schedule, "Interleaved1F1B")) /* +6.7% today: held to 10% */
            assert_true(fabs(est - meas) / meas < 0.10);
        /* torchtitan's split, not the planner's: rank 0 holds 15 blocks either way (1F1B:
         * stage 0; looped: stages 0 and 8 of 16, 7 + 8) */
        assert_int_equal(g->a.layout.cut[1], 15);
    }
    free(g);
}

/* torchtitan main's llama3 configs run ChunkedLossWrapper (models/llama3/config_registry.py);
 * 0.2.2 computed the loss over the whole logits and had no LoRA. */
static void framework_should_run_torchtitan_mains_loss_and_022s(void **state)
{
    (void)state;
    struct fg_jobspec s;
    struct fg_err err = {0};
    spec_of(&s, (const char *const[]){"framework=torchtitan", NULL});
    assert_int_equal(s.job.loss, FG_LOSS_CHUNKED_WRAPPER);
    assert_string_equal(s.fw->version, "main");
    spec_of(&s, (const char *const[]){"framework=torchtitan@0.2.2", NULL});
    assert_int_equal(s.job.loss, FG_LOSS_DEFAULT);
    fg_jobspec_init(&s, NULL);
    assert_int_equal(fg_jobspec_set(&s, FG_JOBOPT_FRAMEWORK, "torchtitan@0.2.2", &err), 0);
    assert_int_equal(fg_jobspec_set(&s, FG_JOBOPT_MODE, "lora", &err), 0);
    assert_int_equal(fg_jobspec_finish(&s, &err), FG_E_INVAL);
}

/* torchtitan up to v0.2.0 (and 9dec370) calls pp_schedule.step() with its outputs returned
 * (train.py; e5ef99a passes return_outputs=False from v0.2.1): the last stage keeps each
 * micro-batch's bf16, vocab-parallel logits to the step's end, the n - 1 before the running
 * one beside its loss.  Llama-3.1-8B's last 4 blocks and head, TP 8, PP 8, 8 micro-batches of
 * 8192 tokens: 7 x 8192 x 128256 / 8 x 2 B a sample; none on another stage, none under 0.2.2
 * or main, none without PP. */
static void estimate_should_keep_the_pp_outputs_torchtitan_020_returns(void **state)
{
    (void)state;
    const char *rows[] = {"framework=torchtitan@0.2.0", "framework=torchtitan@0.2.2",
                          "framework=torchtitan"};
    struct fg_model *m = load(M "meta-llama--Llama-3.1-8B");
    uint64_t want = 7ull * 8192 * (128256 / 8) * 2, per_sample[3][2] = {{0}};
    for (size_t r = 0; r < 3; r++)
        for (int last = 0; last < 2; last++) {
            struct fg_jobspec s;
            spec_of(&s, (const char *const[]){rows[r], "grad-ckpt=full", "tp=8", "pp=8",
                                              "pp-microbatches=8", "seq-len=8192", NULL});
            s.job.tp = s.job.pp = 8;
            s.job.layer_first = last ? 28 : 0;
            s.job.layer_last = last ? 32 : 4;
            s.job.stage_head = last;
            s.job.stage_embed = !last;
            struct fg_estimate e;
            struct fg_err err = {0};
            assert_int_equal(fg_memory_estimate(m, &s.job, &e, &err), 0);
            uint64_t seen = 0;
            for (size_t i = 0; i < e.n_lines; i++)
                if (strstr(e.lines[i].what, "earlier micro-batches' logits"))
                    seen = e.lines[i].bytes;
            assert_int_equal(seen, r == 0 && last ? want : 0);
            per_sample[r][last] = e.per_sample_bytes;
            if (r == 0 && last) { /* without PP the row keeps nothing more */
                s.job.pp = 1;
                s.job.layer_first = s.job.layer_last = 0;
                s.job.stage_embed = false;
                assert_int_equal(fg_memory_estimate(m, &s.job, &e, &err), 0);
                for (size_t i = 0; i < e.n_lines; i++)
                    assert_null(strstr(e.lines[i].what, "earlier micro-batches' logits"));
            }
        }
    /* the kept logits and the allocator's 5% of them, on the last stage only */
    assert_true(per_sample[0][1] >= per_sample[1][1] + want + want / 20 - 1);
    assert_true(per_sample[0][1] <= per_sample[1][1] + want + want / 20 + 1);
    assert_true(per_sample[0][0] == per_sample[1][0]);
    fg_model_free(m);
}

/* Async TP (torchtitan enable_async_tensor_parallel) keeps torch's symmetric-memory
 * workspace per TP group: the reduce-scatter's two output chunks, 2 x 8192 / 8 tokens x
 * 8192 x 2 B per sample of Llama-3.1-70B at TP 8; none without it or without TP. */
static void estimate_should_count_async_tps_symmetric_workspace(void **state)
{
    (void)state;
    struct fg_jobspec on, off;
    spec_of(&on, (const char *const[]){"framework=torchtitan", "grad-ckpt=full", "tp=8",
                                       "seq-len=8192", "async-tp", NULL});
    spec_of(&off, (const char *const[]){"framework=torchtitan", "grad-ckpt=full", "tp=8",
                                        "seq-len=8192", NULL});
    on.job.tp = off.job.tp = 8;
    struct fg_model *m = load(M "meta-llama--Llama-3.1-70B");
    struct fg_estimate a, b;
    struct fg_err err = {0};
    assert_int_equal(fg_memory_estimate(m, &on.job, &a, &err), 0);
    assert_int_equal(fg_memory_estimate(m, &off.job, &b, &err), 0);
    uint64_t want = 2ull * (8192 / 8) * 8192 * 2, seen = 0;
    for (size_t i = 0; i < a.n_lines; i++)
        if (strstr(a.lines[i].what, "async TP workspace"))
            seen = a.lines[i].bytes;
    assert_int_equal(seen, want);
    assert_true(a.per_sample_bytes == b.per_sample_bytes + want);
    for (size_t i = 0; i < b.n_lines; i++)
        assert_null(strstr(b.lines[i].what, "async TP"));
    fg_model_free(m);
}

/* FSDP2's reshard_after_forward as torchtitan resolves it: "never" keeps every block's
 * bf16 parameters gathered after its forward (2 B a parameter of Llama-3.1-8B over 8
 * ranks, in place of the per-layer all-gather buffer); under PP the stage stays gathered
 * with fp32 gradients whatever the policy (torch pipelining stage.py). */
static void gate_should_keep_fsdp2s_gathered_params_as_reshard_says(void **state)
{
    (void)state;
    struct fg_gate *g = calloc(1, sizeof *g);
    const char *gathered = NULL;
    gate(M "meta-llama--Llama-3.1-8B",
         (const char *const[]){"framework=torchtitan", "seq-len=8192",
                               "reshard-after-forward=never", NULL},
         "h100", 8, NULL, g);
    uint64_t p = 8030261248ull, held = 0;
    for (size_t i = 0; i < g->a.est.n_lines; i++)
        if (strstr(g->a.est.lines[i].what, "reshard_after_forward never"))
            held = g->a.est.lines[i].bytes;
    assert_int_equal(held, 2 * p);
    gate(M "meta-llama--Llama-3.1-405B",
         (const char *const[]){"framework=torchtitan", "grad-ckpt=full", "tp=8", "pp=8",
                               "dp=8", "reshard-after-forward=always", NULL},
         "h100", 512, NULL, g);
    for (size_t i = 0; i < g->a.est.n_lines; i++)
        gathered = gathered ? gathered : strstr(g->a.est.lines[i].what, "FSDP2 under PP");
    assert_non_null(gathered);
    free(g);
}

/* The pipeline schedule, its micro-batch count and async TP are torch's as torchtitan drives
 * them: another framework's job that names them is refused, naming the option. */
static void finish_should_keep_the_pp_schedule_to_torchtitan(void **state)
{
    (void)state;
    struct fg_jobspec s;
    struct fg_err err = {0};
    fg_jobspec_init(&s, NULL);
    assert_int_equal(fg_jobspec_set(&s, FG_JOBOPT_FRAMEWORK, "megatron", &err), 0);
    assert_int_equal(fg_jobspec_set(&s, FG_JOBOPT_PP_SCHEDULE, "Interleaved1F1B", &err), 0);
    assert_int_equal(fg_jobspec_finish(&s, &err), FG_E_INVAL);
    assert_non_null(strstr(err.detail, "pp-schedule"));
    assert_non_null(strstr(err.detail, "--framework torchtitan"));
    fg_jobspec_init(&s, NULL);
    assert_int_equal(fg_jobspec_set(&s, FG_JOBOPT_PP_SCHEDULE, "ZBVZeroBubble", &err), FG_E_INVAL);
    assert_non_null(strstr(err.detail, "1F1B|GPipe|Interleaved1F1B|LoopedBFS"));
    spec_of(&s, (const char *const[]){"framework=torchtitan", "pp-schedule=GPipe",
                                      "pp-microbatches=16", "async-tp", NULL});
    assert_true(s.job.pp_schedule == FG_PP_GPIPE && s.job.pp_microbatches == 16 &&
                s.job.async_tp);
}

/* torchtitan main's LoRA (components/lora.py LoRAConverter: rank 8, no dropout, the base
 * frozen in the model's fp32 FSDP2 shards, the adapters plain fp32 Linears computing on the
 * gathered bf16 weights): 4 B per base parameter over DP, 16 B per adapter parameter, no
 * adapter cast copies. */
static void gate_should_run_torchtitans_lora_over_fp32_shards(void **state)
{
    (void)state;
    struct fg_gate *g = calloc(1, sizeof *g);
    gate(M "meta-llama--Llama-3.1-8B",
         (const char *const[]){"framework=torchtitan", "mode=lora", "lora-rank=8",
                               "seq-len=8192", NULL},
         "h100", 8, NULL, g);
    assert_true(g->d.fits); /* one card would do: a warning that 8 are more than needed */
    const struct fg_estimate *e = &g->a.est;
    uint64_t p = 8030261248ull;
    assert_true(e->b.weights >= 4 * p / 8 && e->b.weights <= 4 * p / 8 + 8);
    assert_true(e->adapter_params > 0 && e->b.adapters <= 16 * e->adapter_params / 8 + 16);
    for (size_t i = 0; i < e->n_lines; i++)
        assert_null(strstr(e->lines[i].what, "adapters' own inputs"));
    free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(jobopts_should_be_in_the_man_pages_and_the_completion),
        cmocka_unit_test(jobopt_find_should_take_every_spelling),
        cmocka_unit_test(jobopt_values_should_be_what_the_parser_takes),
        cmocka_unit_test(flag_should_take_the_words_a_policy_key_takes),
        cmocka_unit_test(set_should_take_peft_target_modules),
        cmocka_unit_test(set_should_match_lora_targets_as_peft_does),
        cmocka_unit_test(set_should_name_the_option_in_the_front_ends_spelling),
        cmocka_unit_test(framework_find_should_know_every_row_and_alias),
        cmocka_unit_test(framework_rows_should_name_where_and_when_they_were_read),
        cmocka_unit_test(framework_should_set_the_loss_autocast_and_4bit_base_it_runs),
        cmocka_unit_test(finish_should_give_an_hf_lora_a_bf16_base_under_mixed_precision),
        cmocka_unit_test(finish_should_keep_the_megatron_master_copy_with_the_optimizer),
        cmocka_unit_test(gate_should_judge_a_lit_gpt_fsdp_job_on_its_own_layout),
        cmocka_unit_test(gate_should_refuse_a_layout_the_framework_cannot_run),
        cmocka_unit_test(gate_should_run_a_trl_lora_checkpointed_unless_told),
        cmocka_unit_test(finish_should_keep_a_trl_qlora_rest_in_bf16),
        cmocka_unit_test(finish_should_step_a_torchtune_full_in_backward),
        cmocka_unit_test(finish_should_count_what_lit_gpt_qlora_keeps),
        cmocka_unit_test(finish_should_build_lit_gpts_head_and_fp16_quantization),
        cmocka_unit_test(finish_should_run_torchtitan_selective_over_fp32_shards),
        cmocka_unit_test(finish_should_shard_torchtitans_block_inputs_over_tp),
        cmocka_unit_test(gate_should_estimate_torchtitans_published_runs),
        cmocka_unit_test(gate_should_run_torchtitans_lora_over_fp32_shards),
        cmocka_unit_test(finish_should_keep_the_pp_schedule_to_torchtitan),
        cmocka_unit_test(framework_should_run_torchtitan_mains_loss_and_022s),
        cmocka_unit_test(estimate_should_count_async_tps_symmetric_workspace),
        cmocka_unit_test(estimate_should_keep_the_pp_outputs_torchtitan_020_returns),
        cmocka_unit_test(gate_should_keep_fsdp2s_gathered_params_as_reshard_says),
        cmocka_unit_test(gate_should_judge_a_declared_pipeline_by_its_largest_stage),
        cmocka_unit_test(gate_should_serve_inside_the_engines_share_and_count_sequences),
        cmocka_unit_test(gate_should_serve_gpt_oss_120b_on_one_h100_in_mxfp4),
        cmocka_unit_test(gate_should_reject_gpt_oss_120b_at_its_whole_context_as_vllm_does),
        cmocka_unit_test(gate_should_serve_deepseek_r1_fp8_with_a_replicated_latent_cache),
        cmocka_unit_test(gate_should_keep_one_kv_head_per_rank_and_vllm_020_semantics),
        cmocka_unit_test(gate_should_let_an_override_through_only_where_allowed),
        cmocka_unit_test(gate_checkpoint_should_verify_or_doubt_the_count),
        cmocka_unit_test(lua_filter_should_know_every_option_and_flag),
        cmocka_unit_test(review_cases_should_hold),
        cmocka_unit_test(slurm_time_should_read_every_form_sbatch_takes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
