/*
 * test_trainer.c - the preference and RL trainers (engine/stack/trainer.c, memory_rl.c,
 * policies/assess.c, decide_gen.c): what each one adds to its adaptation's estimate, the options
 * that go with it, and the vLLM engine's side of a generating job.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support.h"

#include "assess.h"
#include "decide.h"
#include "hw/gpu.h"
#include "policy.h"
#include "job/jobspec.h"
#include "memory/memory.h"
#include "stack/trainer.h"

#define QWEN "tests/fixtures/models/Qwen--Qwen3-8B"

/* The job of a CLI line: NULL-terminated name, value pairs, finished. */
static int spec_of(struct fg_jobspec *s, struct fg_err *err, ...)
{
    va_list ap;
    fg_jobspec_init(s, "--");
    va_start(ap, err);
    int rc = 0;
    for (const char *n; !rc && (n = va_arg(ap, const char *));) {
        const char *v = va_arg(ap, const char *);
        int id = fg_jobopt_find(n);
        assert_true(id >= 0);
        rc = fg_jobspec_set(s, (unsigned)id, v, err);
    }
    va_end(ap);
    return rc ? rc : fg_jobspec_finish(s, err);
}

static struct fg_estimate est_of(const struct fg_model *m, const struct fg_jobspec *s)
{
    struct fg_estimate e;
    struct fg_err err = {0};
    int rc = fg_memory_estimate(m, &s->job, &e, &err);
    if (rc)
        print_message("%s\n", err.detail);
    assert_int_equal(rc, 0);
    return e;
}

static uint64_t line_bytes(const struct fg_estimate *e, const char *what_prefix)
{
    for (size_t i = 0; i < e->n_lines; i++)
        if (!strncmp(e->lines[i].what, what_prefix, strlen(what_prefix)))
            return e->lines[i].bytes;
    return 0;
}

static void dpo_lora_should_exceed_lora_sft_by_the_pair_and_its_log_probs(void **state)
{
    (void)state;
    struct fg_model *m = load(QWEN);
    struct fg_jobspec sft, dpo;
    struct fg_err err = {0};
    assert_int_equal(spec_of(&sft, &err, "mode", "lora", NULL), 0);
    assert_int_equal(spec_of(&dpo, &err, "mode", "dpo", "adapter", "lora", NULL), 0);
    assert_int_equal(dpo.job.mode, FG_MODE_LORA);
    assert_int_equal(dpo.job.ref_model, FG_REF_ADAPTER); /* peft: adapters disabled */
    struct fg_estimate a = est_of(m, &sft), b = est_of(m, &dpo);
    /* the same static part: no reference copy under peft */
    assert_int_equal(a.static_bytes, b.static_bytes);
    /* per sample: two sequences, each with TRL's log-probs (policy + reference logits and
     * the saved bf16 log-softmax: 6 B per vocabulary entry) in place of the fp32 loss */
    uint64_t tokens = a.seq_len, vocab = m->vocab;
    uint64_t logp = 6 * vocab * tokens, ce = 12 * vocab * tokens;
    assert_int_equal(b.per_sample_bytes, 2 * (a.per_sample_bytes - ce + logp));
    assert_true(b.total_bytes > a.total_bytes);
    assert_int_equal(line_bytes(&b, "log-probs"), logp);
    assert_true(line_bytes(&b, "the rejected sequence") > 0);
    fg_model_free(m);
}

static void dpo_full_should_carry_a_frozen_copy_that_ref_none_removes(void **state)
{
    (void)state;
    struct fg_model *m = load(QWEN);
    struct fg_jobspec full, none, sft;
    struct fg_err err = {0};
    assert_int_equal(spec_of(&sft, &err, "mode", "full", NULL), 0);
    assert_int_equal(spec_of(&full, &err, "mode", "dpo", NULL), 0);
    assert_int_equal(spec_of(&none, &err, "mode", "dpo", "ref-model", "none", NULL), 0);
    assert_int_equal(full.job.ref_model, FG_REF_COPY);
    struct fg_estimate s = est_of(m, &sft), f = est_of(m, &full), n = est_of(m, &none);
    /* a copy in the policy's parameter dtype (fp32 under bf16-mixed: TRL loads fp32) */
    assert_int_equal(f.static_bytes - n.static_bytes, s.b.weights);
    assert_int_equal(line_bytes(&f, "reference model"), s.b.weights);
    assert_int_equal(line_bytes(&n, "reference model"), 0);
    assert_int_equal(f.step_bytes - n.step_bytes, s.b.weights);
    fg_model_free(m);
}

static void grpo_should_train_on_prompt_plus_completion_with_logits_of_the_completion(void **state)
{
    (void)state;
    struct fg_model *m = load(QWEN);
    struct fg_jobspec g, v;
    struct fg_err err = {0};
    assert_int_equal(spec_of(&g, &err, "mode", "grpo", "adapter", "lora",
                             "max-completion-length", "2048", NULL), 0);
    assert_int_equal(g.job.seq_len, 512 + 2048);
    assert_int_equal(g.job.num_generations, 8);
    assert_int_equal(g.job.ref_model, FG_REF_NONE); /* beta 0.0: TRL's default */
    struct fg_estimate e = est_of(m, &g);
    assert_int_equal(e.seq_len, 2560);
    assert_int_equal(line_bytes(&e, "log-probs"), 4 * m->vocab * 2048);
    /* no vLLM: the generation phase's KV cache, alive before the activations */
    uint64_t kv = line_bytes(&e, "generation phase");
    assert_true(kv > 0);
    assert_true(e.step_bytes >= e.static_bytes + kv);
    /* with vLLM the KV lives in the engine's share, not in the training estimate */
    assert_int_equal(spec_of(&v, &err, "mode", "grpo", "adapter", "lora",
                             "max-completion-length", "2048", "vllm-mode", "colocate", NULL), 0);
    assert_true(v.job.vllm_util > 0.29f && v.job.vllm_util < 0.31f);
    struct fg_estimate ev = est_of(m, &v);
    assert_int_equal(line_bytes(&ev, "generation phase"), 0);
    fg_model_free(m);
}

/* TRL builds LigerFusedLinearGRPOLoss / LigerFusedLinearDPOLoss under use_liger_kernel: the
 * loss comes from the hidden states chunk by chunk, no vocabulary-wide log-probs */
static void grpo_and_dpo_should_keep_no_log_probs_under_liger(void **state)
{
    (void)state;
    struct fg_model *m = load(QWEN);
    struct fg_jobspec g, d, p;
    struct fg_err err = {0};
    assert_int_equal(spec_of(&g, &err, "mode", "grpo", "adapter", "lora",
                             "max-completion-length", "2048", "loss", "liger", NULL), 0);
    assert_int_equal(spec_of(&p, &err, "mode", "grpo", "adapter", "lora",
                             "max-completion-length", "2048", NULL), 0);
    struct fg_estimate eg = est_of(m, &g), ep = est_of(m, &p);
    assert_int_equal(line_bytes(&eg, "log-probs"), 0);
    uint64_t fused = line_bytes(&eg, "Liger fused linear CE");
    assert_true(fused > 0 && fused < line_bytes(&ep, "log-probs") / 10);
    assert_true(eg.per_sample_bytes < ep.per_sample_bytes);
    assert_int_equal(spec_of(&d, &err, "mode", "dpo", "adapter", "lora", "loss", "liger", NULL),
                     0);
    struct fg_estimate ed = est_of(m, &d);
    assert_int_equal(line_bytes(&ed, "log-probs"), 0);
    assert_true(line_bytes(&ed, "Liger fused linear CE") > 0);
    fg_model_free(m);
}

static void options_should_be_refused_where_the_trainer_reads_none(void **state)
{
    (void)state;
    struct fg_jobspec s;
    struct fg_err err = {0};
    assert_int_equal(spec_of(&s, &err, "mode", "lora", "adapter", "full", NULL), FG_E_INVAL);
    assert_non_null(strstr(err.detail, "--adapter does not go with --mode lora"));
    assert_int_equal(spec_of(&s, &err, "mode", "dpo", "num-generations", "4", NULL), FG_E_INVAL);
    assert_non_null(strstr(err.detail, "grpo and rloo"));
    assert_int_equal(spec_of(&s, &err, "mode", "grpo", "seq-len", "4096", NULL), FG_E_INVAL);
    assert_non_null(strstr(err.detail, "max-completion-length"));
    assert_int_equal(spec_of(&s, &err, "mode", "grpo", "vllm-gpu-util", "0.4", NULL),
                     FG_E_INVAL);
    assert_int_equal(spec_of(&s, &err, "mode", "dpo", "ref-model", "adapter-disabled", NULL),
                     FG_E_INVAL);
    assert_int_equal(spec_of(&s, &err, "mode", "sft-ish", NULL), FG_E_INVAL);
    assert_non_null(strstr(err.detail, "dpo|orpo|kto|grpo|rloo|ppo|reward"));
    assert_int_equal(spec_of(&s, &err, "mode", "grpo", "vllm-gpu-util", "0.99", NULL),
                     FG_E_RANGE);
}

/* fg_assess on count cards of name under the default policy. */
static int assess_on(const struct fg_model *m, struct fg_jobspec *s, const char *name,
                     uint32_t count, struct fg_assessment *a, struct fg_err *err)
{
    struct fg_policy pol;
    fg_policy_init(&pol);
    const struct fg_gpu *gpu = fg_gpu_find(NULL, name, NULL);
    assert_non_null(gpu);
    return fg_assess(m, s, gpu, count, &pol.rules, a, err);
}

/* The assessment and decision of a job on count cards of name. */
static void judge(const struct fg_model *m, struct fg_jobspec *s, const char *name,
                  uint32_t count, struct fg_assessment *a, struct fg_decision *d)
{
    struct fg_policy pol;
    struct fg_err err = {0};
    fg_policy_init(&pol);
    const struct fg_gpu *gpu = fg_gpu_find(NULL, name, NULL);
    int rc = assess_on(m, s, name, count, a, &err);
    if (rc)
        print_message("%s\n", err.detail);
    assert_int_equal(rc, 0);
    struct fg_request q;
    memset(&q, 0, sizeof q);
    q.gpu = gpu;
    q.via = FG_VIA_GRES;
    q.count = count;
    q.nodes = 1;
    snprintf(q.type, sizeof q.type, "%s", name);
    fg_decide(&q, a, &pol.rules, d);
}

static void colocate_should_decide_on_the_engine_share_and_the_training_together(void **state)
{
    (void)state;
    struct fg_model *m = load(QWEN);
    struct fg_jobspec s;
    struct fg_assessment a;
    struct fg_decision d;
    struct fg_err err = {0};
    assert_int_equal(spec_of(&s, &err, "mode", "grpo", "adapter", "lora", "num-generations", "8",
                             "max-completion-length", "2048", "vllm-mode", "colocate",
                             "vllm-gpu-util", "0.3", NULL), 0);
    judge(m, &s, "h100", 1, &a, &d);
    assert_true(a.gen_share > 0);
    assert_true(a.gen_fits);
    assert_true(d.fits);
    assert_non_null(strstr(d.lines[1], "vLLM colocated takes 0.30"));
    assert_non_null(strstr(d.lines[1], "together"));
    /* a share too small for the engine's weights: the job cannot start */
    assert_int_equal(spec_of(&s, &err, "mode", "grpo", "adapter", "lora", "vllm-mode",
                             "colocate", "vllm-gpu-util", "0.1", NULL), 0);
    judge(m, &s, "h100", 1, &a, &d);
    assert_false(a.gen_fits);
    assert_false(d.fits);
    assert_non_null(strstr(d.lines[0], "vLLM engine"));
    fg_model_free(m);
}

static void server_mode_should_find_the_split_of_the_gpus(void **state)
{
    (void)state;
    struct fg_model *m = load(QWEN);
    struct fg_jobspec s;
    struct fg_assessment a;
    struct fg_decision d;
    struct fg_err err = {0};
    assert_int_equal(spec_of(&s, &err, "mode", "grpo", "adapter", "lora", "vllm-mode", "server",
                             NULL), 0);
    judge(m, &s, "h100", 8, &a, &d);
    assert_true(a.gen_found);
    assert_int_equal(a.gen_gpus, 1);
    assert_int_equal(a.layout.gen_gpus, 1);
    assert_int_equal(a.layout.gpus, 7);
    assert_non_null(strstr(d.lines[3], "--ft-gen-gpus=1"));
    /* asked: the split as given, and no server on all of the job's GPUs */
    assert_int_equal(spec_of(&s, &err, "mode", "grpo", "adapter", "lora", "vllm-mode", "server",
                             "gen-gpus", "8", NULL), 0);
    assert_int_equal(assess_on(m, &s, "h100", 8, &a, &err), FG_E_INVAL);
    assert_non_null(strstr(err.detail, "leaves no GPU"));
    fg_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dpo_lora_should_exceed_lora_sft_by_the_pair_and_its_log_probs),
        cmocka_unit_test(dpo_full_should_carry_a_frozen_copy_that_ref_none_removes),
        cmocka_unit_test(grpo_should_train_on_prompt_plus_completion_with_logits_of_the_completion),
        cmocka_unit_test(grpo_and_dpo_should_keep_no_log_probs_under_liger),
        cmocka_unit_test(options_should_be_refused_where_the_trainer_reads_none),
        cmocka_unit_test(colocate_should_decide_on_the_engine_share_and_the_training_together),
        cmocka_unit_test(server_mode_should_find_the_split_of_the_gpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
