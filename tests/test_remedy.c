/*
 * test_remedy.c - policies/remedy.c and the remedy words of the decision module: every
 * remedy fitgate prints, fed back as a request, passes the same check; on real fixture
 * models, and as a property over a grid of jobs (models x modes x frameworks x cards x
 * counts x declared layouts x policies).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate.h"
#include "job/jobspec.h"
#include "support.h"

#define M "tests/fixtures/models/"

/* A spec from "name=value" pairs (NULL-terminated); false when the framework refuses it. */
static bool spec_try(struct fg_jobspec *s, const char *const *kv)
{
    struct fg_err err = {0};
    return spec_from_pairs(s, kv, &err) == 0;
}

static struct fg_request request(const char *card, uint32_t per_node, uint32_t nodes)
{
    struct fg_request q;
    char v[64];
    fg_request_init(&q);
    snprintf(v, sizeof v, "gpu:%s:%u", card, per_node);
    assert_true(fg_request_from_option(&q, "gres", v, nodes, fg_gpu_table_builtin()));
    assert_non_null(q.gpu);
    snprintf(q.model, sizeof q.model, "m");
    return q;
}

static struct fg_rules default_rules(void)
{
    struct fg_policy p;
    fg_policy_init(&p);
    return p.rules;
}

/* The request a remedy or a resize names passes the check the gate made. */
static bool passes(const struct fg_model *m, const struct fg_jobspec *s,
                   const struct fg_request *q, const struct fg_rules *r, struct fg_gate *g)
{
    fg_gate_once(m, s, q, r, FG_ONERR_REJECT, g);
    return g->assessed && g->d.fits && g->d.kind != FG_DECIDE_REJECT;
}

static bool has_edit(const struct fg_remedy *x, unsigned opt, const char *value)
{
    for (size_t i = 0; i < x->n_edits; i++)
        if (x->edits[i].opt == opt && (!value || !strcmp(x->edits[i].value, value)))
            return true;
    return false;
}

/* ---- the cases of the issue ---------------------------------------------------------- */

static void find_should_put_grad_ckpt_first_for_a_lora_that_fits_one_card_with_it(void **state)
{
    (void)state;
    struct fg_model *m = load(M "meta-llama--Llama-3.1-8B");
    struct fg_jobspec s;
    assert_true(spec_try(&s, (const char *const[]){"mode=lora", "seq-len=4096", NULL}));
    struct fg_request q = request("a100_40g", 1, 1);
    struct fg_rules r = default_rules();
    struct fg_gate *g = calloc(1, sizeof *g);
    fg_gate_run(m, &s, &q, &r, FG_ONERR_REJECT, g);
    assert_int_equal(g->d.kind, FG_DECIDE_REJECT);
    assert_true(g->rem.n >= 2);
    const struct fg_remedy *x = &g->rem.r[0];
    assert_int_equal(x->kind, FG_REMEDY_SWITCH);
    assert_true(has_edit(x, FG_JOBOPT_GRAD_CKPT, NULL));
    assert_int_equal(x->gpus, 1);
    assert_true(x->layout.peak_bytes > 10000000000ull && x->layout.peak_bytes < 35000000000ull);
    /* the complete request: the switch, then the layout the re-check ran as options */
    assert_non_null(strstr(g->d.remedies[0], "remedy 1 (same GPUs): --ft-grad-ckpt --ft-tp=1 "
                                             "--ft-pp=1 --ft-dp=1 --ft-zero=0 (fits 1 x A100 "
                                             "40 GB at "));
    /* more GPUs come after the switches */
    for (size_t i = 1; i < g->rem.n; i++)
        if (g->rem.r[i].kind != FG_REMEDY_SWITCH)
            for (size_t k = i; k < g->rem.n; k++)
                assert_int_not_equal(g->rem.r[k].kind, FG_REMEDY_SWITCH);
    free(g);
    fg_model_free(m);
}

static void find_should_shard_and_checkpoint_a_70b_under_hf_never_pp_across_nodes(void **state)
{
    (void)state;
    struct fg_model *m = load(M "meta-llama--Llama-3.1-70B");
    struct fg_jobspec s;
    assert_true(spec_try(&s, (const char *const[]){"mode=full", "framework=hf", NULL}));
    struct fg_request q = request("h100", 8, 1);
    struct fg_rules r = default_rules();
    struct fg_gate *g = calloc(1, sizeof *g);
    fg_gate_run(m, &s, &q, &r, FG_ONERR_REJECT, g);
    assert_int_equal(g->d.kind, FG_DECIDE_REJECT);
    bool sharded = false;
    for (size_t i = 0; i < g->rem.n; i++) {
        const struct fg_remedy *x = &g->rem.r[i];
        if (x->kind == FG_REMEDY_FRAMEWORK)
            continue;
        /* a device_map split stays on one node: no PP over nodes under hf */
        assert_false(x->layout.pp > 1 && x->nodes > 1);
        if (x->layout.zero == 3 && has_edit(x, FG_JOBOPT_GRAD_CKPT, NULL))
            sharded = true;
    }
    assert_true(sharded);
    assert_int_equal(g->rem.r[0].kind, FG_REMEDY_SWITCH);
    free(g);
    fg_model_free(m);
}

static void find_should_keep_the_declared_expert_parallel_size(void **state)
{
    (void)state;
    struct fg_model *m = load(M "Qwen--Qwen3-30B-A3B");
    struct fg_jobspec s;
    assert_true(spec_try(&s, (const char *const[]){"mode=full", "framework=megatron", "ep=8",
                                                   NULL}));
    /* 8 x A100 40 GB: it does not fit as asked (on 8 x H100 at 84 GB usable it does) */
    struct fg_request q = request("a100_40g", 8, 1);
    struct fg_rules r = default_rules();
    struct fg_gate *g = calloc(1, sizeof *g);
    fg_gate_run(m, &s, &q, &r, FG_ONERR_REJECT, g);
    assert_true(g->rem.n >= 1);
    for (size_t i = 0; i < g->rem.n; i++)
        assert_int_equal(g->rem.r[i].layout.ep, 8);
    free(g);
    fg_model_free(m);
}

static void find_should_offer_qlora_only_frameworks_with_a_4bit_path(void **state)
{
    (void)state;
    struct fg_model *m = load(M "meta-llama--Llama-3.1-70B");
    struct fg_jobspec s;
    assert_true(spec_try(&s, (const char *const[]){"mode=qlora", "seq-len=8192", "batch=4",
                                                   NULL}));
    struct fg_request q = request("t4", 1, 1);
    struct fg_rules r = default_rules();
    struct fg_gate *g = calloc(1, sizeof *g);
    fg_gate_run(m, &s, &q, &r, FG_ONERR_REJECT, g);
    for (size_t i = 0; i < g->rem.n; i++) {
        assert_false(has_edit(&g->rem.r[i], FG_JOBOPT_FRAMEWORK, "nemo"));
        assert_false(has_edit(&g->rem.r[i], FG_JOBOPT_FRAMEWORK, "megatron"));
    }
    assert_null(strstr(g->d.lines[3], "nemo"));
    free(g);
    fg_model_free(m);
}

static void smallest_should_name_a_request_that_passes_the_check(void **state)
{
    (void)state;
    /* DeepSeek-V3 with PP16 x EP64 declared: EP divides DP, so fewer than 1,024 GPUs
     * cannot run it; the old advice ("16 GPUs are enough") was rejected by the same check */
    struct fg_model *m = load(M "deepseek-ai--DeepSeek-V3");
    struct fg_jobspec s;
    assert_true(spec_try(&s, (const char *const[]){"mode=full", "framework=megatron", "pp=16",
                                                   "ep=64", "grad-ckpt", NULL}));
    struct fg_request q;
    fg_request_init(&q);
    assert_true(fg_request_from_option(&q, "gpus", "h200:1024", 1, fg_gpu_table_builtin()));
    struct fg_rules r = default_rules();
    struct fg_gate *g = calloc(1, sizeof *g), *h = calloc(1, sizeof *h);
    fg_gate_run(m, &s, &q, &r, FG_ONERR_REJECT, g);
    assert_true(g->d.fits);
    if (g->d.enough) {
        struct fg_request q2 = q;
        fg_request_arrange(&q, r.max_gpus_node, r.min_gpus_node, g->d.enough, &q2.count,
                           &q2.nodes);
        assert_true(passes(m, &s, &q2, &r, h));
    }
    /* a 64-rank data-parallel job over 128 GPUs: the advice is the count that passes */
    struct fg_model *small = load(M "Qwen--Qwen3-8B");
    /* transformers 4.57's fp32 + autocast full fine-tune (hf is transformers 5 now) */
    assert_true(spec_try(&s, (const char *const[]){"mode=full", "framework=hf@4.57",
                                                   "grad-ckpt", NULL}));
    q = request("h100", 8, 16);
    fg_gate_run(small, &s, &q, &r, FG_ONERR_REJECT, g);
    assert_int_equal(g->d.kind, FG_DECIDE_WARN);
    assert_true(g->d.enough > 0 && g->d.enough < 128);
    struct fg_request q3 = q;
    fg_request_arrange(&q, r.max_gpus_node, r.min_gpus_node, g->d.enough, &q3.count, &q3.nodes);
    assert_true(passes(small, &s, &q3, &r, h));
    free(g);
    free(h);
    fg_model_free(small);
    fg_model_free(m);
}

static void gate_should_find_a_layout_for_deepseek_v3_on_2048_h200(void **state)
{
    (void)state;
    struct fg_model *m = load(M "deepseek-ai--DeepSeek-V3");
    struct fg_jobspec s;
    assert_true(spec_try(&s, (const char *const[]){"mode=full", "framework=megatron", NULL}));
    struct fg_request q;
    fg_request_init(&q);
    assert_true(fg_request_from_option(&q, "gpus", "h200:2048", 1, fg_gpu_table_builtin()));
    struct fg_rules r = default_rules();
    struct fg_gate *g = calloc(1, sizeof *g);
    fg_gate_run(m, &s, &q, &r, FG_ONERR_REJECT, g);
    assert_true(g->d.fits);
    assert_true(g->d.has_layout);
    assert_true(g->d.layout.gpus <= 2048);
    free(g);
    fg_model_free(m);
}


/* ---- the repros of issue 36 ----------------------------------------------------------- */

/* One job through the gate: the model, the spec of kv, per x card GPUs on nodes, the
 * default rules; g the gate's answer, h room for re-checks. */
struct repro {
    struct fg_model *m;
    struct fg_jobspec s;
    struct fg_request q;
    struct fg_rules r;
    struct fg_gate *g, *h;
};

static void repro_run(struct repro *x, const char *model, const char *const *kv,
                      const char *card, uint32_t per, uint32_t nodes)
{
    char dir[256];
    snprintf(dir, sizeof dir, M "%s", model);
    x->m = load(dir);
    assert_true(spec_try(&x->s, kv));
    x->q = request(card, per, nodes);
    x->r = default_rules();
    x->g = calloc(1, sizeof *x->g);
    x->h = calloc(1, sizeof *x->h);
    assert_non_null(x->g);
    assert_non_null(x->h);
    fg_gate_run(x->m, &x->s, &x->q, &x->r, FG_ONERR_REJECT, x->g);
}

static void repro_free(struct repro *x)
{
    free(x->g);
    free(x->h);
    fg_model_free(x->m);
}

/* Remedy i pasted after the job's options (fg_remedy_apply is that) passes the check. */
static void assert_pasted_passes(struct repro *x, size_t i)
{
    struct fg_jobspec after;
    struct fg_request qa;
    struct fg_err err = {0};
    assert_int_equal(fg_remedy_apply(&x->g->rem.r[i], &x->s, &x->q, &after, &qa, &err), 0);
    assert_true(passes(x->m, &after, &qa, &x->r, x->h));
}

static void find_should_recheck_a_smaller_micro_batch_with_its_accumulation(void **state)
{
    (void)state;
    bool accum = false;
    for (uint32_t n = 2; n <= 4; n += 2) {
        struct repro x;
        repro_run(&x, "nvidia--NVIDIA-Nemotron-Nano-9B-v2",
                  (const char *const[]){"mode=full", "framework=hf", "seq-len=16384", "batch=2",
                                        NULL}, "h100", n, 1);
        assert_int_equal(x.g->d.kind, FG_DECIDE_REJECT);
        for (size_t i = 0; i < x.g->rem.n; i++) {
            const struct fg_remedy *y = &x.g->rem.r[i];
            /* a smaller micro-batch always comes with its accumulation, as an option */
            assert_int_equal(has_edit(y, FG_JOBOPT_BATCH, NULL),
                             has_edit(y, FG_JOBOPT_GRAD_ACCUM, NULL));
            if (has_edit(y, FG_JOBOPT_GRAD_ACCUM, "2")) {
                accum = true;
                assert_non_null(strstr(x.g->d.remedies[i], "--ft-batch=1 --ft-grad-accum=2"));
            }
            assert_pasted_passes(&x, i);
        }
        repro_free(&x);
    }
    assert_true(accum);
}

static void find_should_print_every_layout_dimension_as_an_option(void **state)
{
    (void)state;
    struct repro x;
    repro_run(&x, "nvidia--NVIDIA-Nemotron-Nano-9B-v2",
              (const char *const[]){"mode=full", "framework=torchtitan", "seq-len=16384", NULL},
              "h100", 2, 1);
    assert_true(x.g->rem.n >= 1);
    for (size_t i = 0; i < x.g->rem.n; i++) {
        const struct fg_remedy *y = &x.g->rem.r[i];
        char tp[32], flags[320];
        snprintf(tp, sizeof tp, "--ft-tp=%u ", y->layout.tp);
        fg_remedy_flags(y, &x.q, "--ft-", flags, sizeof flags);
        /* the layout in options, the bracket only explains it */
        assert_non_null(strstr(flags, tp));
        assert_non_null(strstr(flags, "--ft-pp="));
        assert_non_null(strstr(flags, "--ft-dp="));
        assert_non_null(strstr(x.g->d.remedies[i], flags));
        assert_pasted_passes(&x, i);
    }
    repro_free(&x);
}

static void find_should_try_zero3_and_offload_before_more_gpus(void **state)
{
    (void)state;
    struct repro x;
    repro_run(&x, "mistralai--Mistral-7B-v0.1",
              (const char *const[]){"mode=full", "framework=hf", "grad-ckpt", NULL}, "rtx4090",
              2, 1);
    assert_int_equal(x.g->d.kind, FG_DECIDE_REJECT);
    assert_true(x.g->rem.n >= 1);
    const struct fg_remedy *y = &x.g->rem.r[0];
    assert_int_equal(y->kind, FG_REMEDY_SWITCH);
    assert_true(has_edit(y, FG_JOBOPT_ZERO, "3"));
    assert_true(has_edit(y, FG_JOBOPT_OFFLOAD, "optimizer"));
    assert_int_equal(y->gpus, 2);
    for (size_t i = 0; i < x.g->rem.n; i++) /* a switch fits: no "4 GPUs" */
        assert_int_equal(x.g->rem.r[i].kind, FG_REMEDY_SWITCH);
    repro_free(&x);
}

static void find_should_give_a_grpo_job_its_switches(void **state)
{
    (void)state;
    struct repro x;
    repro_run(&x, "Qwen--Qwen3-30B-A3B",
              (const char *const[]){"mode=grpo", "adapter=lora", "framework=torchtune", NULL},
              "a100_80g", 8, 1);
    assert_int_equal(x.g->d.kind, FG_DECIDE_REJECT);
    assert_true(x.g->rem.n >= 1);
    assert_true(has_edit(&x.g->rem.r[0], FG_JOBOPT_GRAD_CKPT, NULL));
    for (size_t i = 0; i < x.g->rem.n; i++) {
        assert_false(has_edit(&x.g->rem.r[i], FG_JOBOPT_MODE, NULL)); /* still GRPO */
        assert_pasted_passes(&x, i);
    }
    repro_free(&x);
}

static void gate_should_not_admit_a_device_map_split_across_nodes(void **state)
{
    (void)state;
    struct repro x;
    repro_run(&x, "mistralai--Mixtral-8x7B-v0.1",
              (const char *const[]){"mode=full", "framework=hf", NULL}, "h100", 4, 2);
    if (x.g->d.fits && x.g->d.has_layout) /* admitted: on a layout hf runs over two nodes */
        assert_false(x.g->d.layout.pp > 1);
    /* declaring the split the check once admitted is refused, with the reason */
    struct fg_jobspec d;
    assert_true(spec_try(&d, (const char *const[]){"mode=full", "framework=hf", "pp=8", "dp=1",
                                                   NULL}));
    fg_gate_run(x.m, &d, &x.q, &x.r, FG_ONERR_REJECT, x.g);
    assert_int_equal(x.g->d.kind, FG_DECIDE_REJECT);
    assert_non_null(strstr(x.g->d.lines[0], "device_map"));
    repro_free(&x);
}

static void gate_should_judge_vllm_expert_parallel_on_128_gpus(void **state)
{
    (void)state;
    struct repro x;
    repro_run(&x, "deepseek-ai--DeepSeek-V3",
              (const char *const[]){"mode=serve", "framework=vllm", "ep=2", NULL}, "h100", 8,
              16);
    /* TP inside each node, PP over the nodes, the experts over TP x DP: it fits */
    assert_true(x.g->d.fits);
    assert_int_equal(x.g->a.job.tp, 8);
    assert_int_equal(x.g->a.job.pp, 16);
    assert_int_equal(x.g->a.job.ep, 2);
    assert_null(strstr(x.g->d.lines[2], "MaxGPUs"));
    repro_free(&x);
}

static void find_should_say_the_count_beyond_max_gpus(void **state)
{
    (void)state;
    struct repro x;
    repro_run(&x, "meta-llama--Llama-3.1-405B",
              (const char *const[]){"mode=full", "framework=megatron", NULL}, "a100_40g", 8, 1);
    assert_int_equal(x.g->d.kind, FG_DECIDE_REJECT);
    assert_true(x.g->rem.n >= 1);
    size_t last = x.g->rem.n - 1;
    assert_int_equal(x.g->rem.r[last].kind, FG_REMEDY_BEYOND);
    assert_true(x.g->rem.r[last].gpus > x.r.max_gpus);
    assert_non_null(strstr(x.g->d.remedies[last], "(more GPUs than MaxGPUs=64): "));
    assert_pasted_passes(&x, last);
    repro_free(&x);
}

static void find_should_give_serving_jobs_serving_remedies(void **state)
{
    (void)state;
    struct repro x;
    repro_run(&x, "meta-llama--Llama-3.1-8B",
              (const char *const[]){"mode=serve", "framework=vllm", "seq-len=131072", "batch=8",
                                    NULL}, "l4", 1, 1);
    assert_int_equal(x.g->d.kind, FG_DECIDE_REJECT);
    assert_true(x.g->rem.n >= 1);
    for (size_t i = 0; i < x.g->rem.n; i++) {
        const struct fg_remedy *y = &x.g->rem.r[i];
        assert_false(has_edit(y, FG_JOBOPT_GRAD_CKPT, NULL));
        assert_false(has_edit(y, FG_JOBOPT_MODE, NULL));
        assert_false(has_edit(y, FG_JOBOPT_GRAD_ACCUM, NULL));
        assert_null(strstr(x.g->d.remedies[i], "QLoRA"));
        assert_pasted_passes(&x, i);
        /* the bracket says the engine's own budget: what it holds within its share */
        assert_true(y->usable > 0);
        assert_true(y->need <= y->usable);
        assert_int_equal(y->layout.peak_bytes, y->need);
    }
    repro_free(&x);
}

/* ---- the property -------------------------------------------------------------------- */

struct tally {
    unsigned jobs, remedies, resizes, overs, failures;
};

static void note_fail(struct tally *t, const char *what, const char *model, const char *fw,
                 const char *mode, const char *card, uint32_t n, size_t i)
{
    if (t->failures++ < 10)
        print_message("FAIL %s: %s %s %s on %u x %s (remedy %zu)\n", what, model, fw, mode, n,
                      card, i + 1);
}

/* Every remedy of g fed back fits, runs on its framework and keeps the declared layout; a
 * resize and an over-request's advice pass the same check. */
static void check_job(const struct fg_model *m, const struct fg_jobspec *s,
                      const struct fg_request *q, const struct fg_rules *r,
                      const struct fg_gate *g, struct fg_gate *h, struct tally *t,
                      const char *const lbl[4], uint32_t n)
{
    struct fg_jobspec after;
    struct fg_request qa;
    struct fg_err err = {0};
    for (size_t i = 0; i < g->rem.n; i++) {
        const struct fg_remedy *x = &g->rem.r[i];
        t->remedies++;
        if (fg_remedy_apply(x, s, q, &after, &qa, &err) || !passes(m, &after, &qa, r, h)) {
            note_fail(t, "remedy does not fit", lbl[0], lbl[1], lbl[2], lbl[3], n, i);
            continue;
        }
        if (!fg_remedy_runnable(x, &after, m, q, r) ||
            (after.fw->naive_pp && h->d.layout.pp > 1 && (qa.nodes > 1 || h->d.layout.dp > 1)))
            note_fail(t, "layout its framework cannot run", lbl[0], lbl[1], lbl[2], lbl[3], n, i);
        if ((s->tp && h->d.layout.tp != s->tp) || (s->pp && h->d.layout.pp != s->pp) ||
            (s->ep && h->d.layout.ep != s->ep) || (s->dp && h->d.layout.dp != s->dp))
            note_fail(t, "declared dimension changed", lbl[0], lbl[1], lbl[2], lbl[3], n, i);
    }
    if (g->d.kind == FG_DECIDE_RESIZE && g->d.resize_gpus && !g->d.fits) {
        t->resizes++;
        struct fg_remedy x = {.kind = FG_REMEDY_GPUS, .count = g->d.count, .nodes = g->d.nodes};
        const uint32_t dims[5] = {g->d.layout.tp, g->d.layout.pp, g->d.layout.ep,
                                  g->d.layout.dp, g->d.layout.zero};
        const unsigned opts[5] = {FG_JOBOPT_TP, FG_JOBOPT_PP, FG_JOBOPT_EP, FG_JOBOPT_DP,
                                  FG_JOBOPT_ZERO};
        for (int k = 0; k < 5; k++) {
            x.edits[x.n_edits].opt = opts[k];
            snprintf(x.edits[x.n_edits++].value, sizeof x.edits[0].value, "%u",
                     dims[k] || k == 4 ? dims[k] : 1);
        }
        /* the exported micro-batch (FITGATE_MICRO_BATCH) is part of the layout */
        if (g->d.layout.micro_batch && g->d.layout.micro_batch < s->job.batch) {
            x.edits[x.n_edits].opt = FG_JOBOPT_BATCH;
            snprintf(x.edits[x.n_edits++].value, sizeof x.edits[0].value, "%llu",
                     (unsigned long long)g->d.layout.micro_batch);
        }
        if (fg_remedy_apply(&x, s, q, &after, &qa, &err) || !passes(m, &after, &qa, r, h))
            note_fail(t, "resize does not fit", lbl[0], lbl[1], lbl[2], lbl[3], n, 0);
    }
    if (g->d.enough) {
        t->overs++;
        qa = *q;
        fg_request_arrange(q, r->max_gpus_node, r->min_gpus_node, g->d.enough, &qa.count,
                           &qa.nodes);
        if (!passes(m, s, &qa, r, h))
            note_fail(t, "over-request advice is rejected", lbl[0], lbl[1], lbl[2], lbl[3], n, 0);
    }
}

static const char *const prop_models[] = {
    "Qwen--Qwen3-0.6B",           "meta-llama--Llama-3.2-1B-Instruct",
    "microsoft--phi-2",           "google--gemma-2-2b-it",
    "meta-llama--Llama-3.1-8B",   "Qwen--Qwen1.5-MoE-A2.7B-Chat",
    "deepseek-ai--DeepSeek-V2-Lite-Chat", "ibm-granite--granite-3.1-1b-a400m-instruct",
};
static const char *const prop_fws[] = {"hf", "lit-gpt", "torchtune", "unsloth", "nemo",
                                       "megatron", "deepspeed", "axolotl"};
static const char *const prop_modes[] = {"full", "lora", "qlora"};
static const char *const prop_cards[] = {"t4", "a100_40g", "h100"};
static const uint32_t prop_counts[][2] = {{1, 1}, {2, 1}, {8, 1}, {8, 2}}; /* per node, nodes */
static const char *const prop_layouts[][2] = {{NULL, NULL}, {"tp=2", NULL}, {"pp=2", NULL},
                                              {"ep=2", NULL}, {"dp=2", NULL}};
static const char *const prop_extra[] = {NULL, "batch=8", "seq-len=8192"};

/* Four site policies: the defaults; resize with shrink; warn; a MaxGPUs=8 partition. */
static void prop_rules(int k, struct fg_rules *r)
{
    *r = default_rules();
    if (k == 1) {
        r->action = FG_ACTION_RESIZE;
        r->shrink = true;
    } else if (k == 2) {
        r->action = FG_ACTION_WARN;
    } else if (k == 3) {
        r->max_gpus = 8;
    }
}

static void property_every_remedy_should_fit_when_fed_back(void **state)
{
    (void)state;
    struct tally t = {0};
    struct fg_gate *g = calloc(1, sizeof *g), *h = calloc(1, sizeof *h);
    assert_non_null(g);
    assert_non_null(h);
    for (size_t mi = 0; mi < sizeof prop_models / sizeof prop_models[0]; mi++) {
        char dir[256];
        snprintf(dir, sizeof dir, M "%s", prop_models[mi]);
        struct fg_model *m = load(dir);
        for (size_t fi = 0; fi < 8; fi++)
            for (size_t mo = 0; mo < 3; mo++)
                for (size_t li = 0; li < 5; li++)
                    for (size_t ei = 0; ei < 3; ei++) {
                        char fw[40], mode[24];
                        snprintf(fw, sizeof fw, "framework=%s", prop_fws[fi]);
                        snprintf(mode, sizeof mode, "mode=%s", prop_modes[mo]);
                        const char *kv[5] = {fw, mode, prop_layouts[li][0], NULL, NULL};
                        if (!kv[2])
                            kv[2] = prop_extra[ei], kv[3] = NULL;
                        else
                            kv[3] = prop_extra[ei];
                        struct fg_jobspec s;
                        if (!spec_try(&s, kv))
                            continue;
                        for (size_t ci = 0; ci < 3; ci++)
                            for (size_t ni = 0; ni < 4; ni++)
                                for (int pk = 0; pk < 4; pk++) {
                                    struct fg_rules r;
                                    prop_rules(pk, &r);
                                    struct fg_request q = request(prop_cards[ci],
                                                                  prop_counts[ni][0],
                                                                  prop_counts[ni][1]);
                                    fg_gate_run(m, &s, &q, &r, FG_ONERR_REJECT, g);
                                    if (!g->assessed)
                                        continue; /* the job's own options contradict */
                                    t.jobs++;
                                    const char *lbl[4] = {prop_models[mi], prop_fws[fi],
                                                          prop_modes[mo], prop_cards[ci]};
                                    check_job(m, &s, &q, &r, g, h, &t, lbl,
                                              fg_request_total(&q));
                                }
                    }
        fg_model_free(m);
    }
    print_message("property: %u jobs, %u remedies, %u resizes, %u over-requests re-checked; "
                  "%u failures\n", t.jobs, t.remedies, t.resizes, t.overs, t.failures);
    assert_true(t.jobs >= 20000);
    assert_true(t.remedies > 1000);
    assert_int_equal(t.failures, 0);
    free(g);
    free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(find_should_put_grad_ckpt_first_for_a_lora_that_fits_one_card_with_it),
        cmocka_unit_test(find_should_shard_and_checkpoint_a_70b_under_hf_never_pp_across_nodes),
        cmocka_unit_test(find_should_keep_the_declared_expert_parallel_size),
        cmocka_unit_test(find_should_offer_qlora_only_frameworks_with_a_4bit_path),
        cmocka_unit_test(smallest_should_name_a_request_that_passes_the_check),
        cmocka_unit_test(gate_should_find_a_layout_for_deepseek_v3_on_2048_h200),
        cmocka_unit_test(find_should_recheck_a_smaller_micro_batch_with_its_accumulation),
        cmocka_unit_test(find_should_print_every_layout_dimension_as_an_option),
        cmocka_unit_test(find_should_try_zero3_and_offload_before_more_gpus),
        cmocka_unit_test(find_should_give_a_grpo_job_its_switches),
        cmocka_unit_test(gate_should_not_admit_a_device_map_split_across_nodes),
        cmocka_unit_test(gate_should_judge_vllm_expert_parallel_on_128_gpus),
        cmocka_unit_test(find_should_say_the_count_beyond_max_gpus),
        cmocka_unit_test(find_should_give_serving_jobs_serving_remedies),
        cmocka_unit_test(property_every_remedy_should_fit_when_fed_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
