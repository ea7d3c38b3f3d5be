/*
 * test_memory.c - the memory model against the seeds' own figures
 * (docs/accuracy.md, "The seeds' figures") and its invariants.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "memory/memory_int.h"
#include "support.h"
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plan/fit.h"
#include "memory/memory.h"
#include "model/model.h"
#include "plan/plan.h"

#define NEMOTRON "tests/fixtures/models/nvidia--NVIDIA-Nemotron-Nano-9B-v2"
#define NOMIC "tests/fixtures/models/nomic-ai--nomic-embed-text-v2-moe"
#define LLAMA8B "tests/fixtures/models/meta-llama--Llama-3.1-8B"
#define LLAMA2_7B "tests/fixtures/models/meta-llama--Llama-2-7b-hf"
#define LLAMA2_13B "tests/fixtures/models/meta-llama--Llama-2-13b-hf"
#define QWEN3_06B "tests/fixtures/models/Qwen--Qwen3-0.6B"
#define LLAMA32_1B "tests/fixtures/models/meta-llama--Llama-3.2-1B-Instruct"
#define LLAMA2_7B_PARAMS 6738415616ull
#define LLAMA2_13B_PARAMS 13015864320ull

static struct fg_estimate est(const struct fg_model *m, enum fg_mode mode, uint64_t seq,
                              uint64_t batch)
{
    struct fg_job j;
    struct fg_estimate e;
    struct fg_err err = {0};
    fg_job_defaults(&j, mode);
    j.seq_len = seq;
    j.batch = batch;
    if (fg_memory_estimate(m, &j, &e, &err))
        fail_msg("estimate: %s", err.detail);
    return e;
}

/* The seeds' jobs: "AdamW with bf16 autocast", a LoRA base frozen in bf16 (seeds 000, 004):
 * the adapters' inputs are autocast's bf16 casts. */
static struct fg_estimate est_seed(const struct fg_model *m, enum fg_mode mode, uint64_t seq)
{
    struct fg_job j;
    struct fg_estimate e;
    struct fg_err err = {0};
    fg_job_defaults(&j, mode);
    j.seq_len = seq;
    j.autocast = mode == FG_MODE_LORA;
    if (fg_memory_estimate(m, &j, &e, &err))
        fail_msg("estimate: %s", err.detail);
    return e;
}

static void within(double got, double want, double tol, const char *what)
{
    double rel = fabs(got - want) / want;
    print_message("%-40s got %8.3f GB  seed %8.3f GB  (%+.1f%%)\n", what, got / 1e9, want / 1e9,
                  100 * (got - want) / want);
    assert_true(rel <= tol);
}

static void estimate_should_match_seed_000_nemotron_within_10pct(void **state)
{
    (void)state;
    struct fg_model *m = load(NEMOTRON);
    struct fg_estimate full = est_seed(m, FG_MODE_FULL, 2048);
    within((double)full.total_bytes, 183e9, 0.10, "Nemotron-Nano-9B-v2 full, 2048");
    struct fg_estimate lora = est_seed(m, FG_MODE_LORA, 2048);
    /* The seed leaves out the logits and the fp32 loss (docs/accuracy.md, "Deliberate
     * differences"); compare the parts it counts. */
    within((double)(lora.total_bytes - lora.b.logits), 30.5e9, 0.10,
           "Nemotron-Nano-9B-v2 LoRA, 2048 (no logits)");
    /* Borderline on one A100 40 GB: fits under 1.15x, not under 1.43x.  The seeds size a
     * card as its marketed GB less 512 MiB (the context fitgate charged before it measured
     * 1,392 MiB): their verdicts are compared on their own cards. */
    struct fg_fit_opts o;
    fg_fit_opts_default(&o);
    o.context_bytes = 512ull << 20;
    struct fg_fit f;
    fg_fit_card(&lora, fg_fit_usable(40, 0, &o), &o, &f);
    assert_int_equal(f.verdict, FG_FIT_BORDERLINE);
    /* Full needs more than one H200. */
    fg_fit_card(&full, fg_fit_usable(141, 0, &o), &o, &f);
    assert_int_equal(f.verdict, FG_FIT_SPLIT);
    fg_model_free(m);
}

static void estimate_should_match_seed_004_nomic_within_10pct(void **state)
{
    (void)state;
    struct fg_model *m = load(NOMIC);
    struct fg_estimate full = est_seed(m, FG_MODE_FULL, 512);
    within((double)full.total_bytes, 9.34e9, 0.10, "nomic-embed-text-v2-moe full, 512");
    struct fg_estimate lora = est_seed(m, FG_MODE_LORA, 512);
    within((double)lora.total_bytes, 1.20e9, 0.10, "nomic-embed-text-v2-moe LoRA, 512");
    /* The nomic seed's card table (docs/accuracy.md), largest batch per card within 15%. */
    static const struct { unsigned gb; uint64_t full, lora; } seed[] = {
        {16, 22, 60}, {24, 55, 93}, {40, 120, 158}, {80, 283, 321}, {141, 531, 570}};
    struct fg_fit_opts o;
    fg_fit_opts_default(&o);
    o.context_bytes = 512ull << 20; /* the seed's card: marketed GB less 512 MiB */
    for (size_t i = 0; i < sizeof seed / sizeof seed[0]; i++) {
        uint64_t usable = fg_fit_usable(seed[i].gb, 0, &o);
        uint64_t bf = fg_fit_max_batch(&full, usable, o.headroom);
        uint64_t bl = fg_fit_max_batch(&lora, usable, o.headroom);
        print_message("%3u GB: full %4llu (seed %3llu)  lora %4llu (seed %3llu)\n", seed[i].gb,
                      (unsigned long long)bf, (unsigned long long)seed[i].full,
                      (unsigned long long)bl, (unsigned long long)seed[i].lora);
        /* full: deliberate difference (docs/accuracy.md): gradients and activations are
         * not counted together, so more samples fit than the seed says */
        assert_true((double)bf >= 0.85 * (double)seed[i].full &&
                    (double)bf <= 1.35 * (double)seed[i].full);
        assert_true(fabs((double)bl - (double)seed[i].lora) <= 0.15 * (double)seed[i].lora);
    }
    fg_model_free(m);
}

static void estimate_should_be_the_larger_of_backward_and_step_phases(void **state)
{
    (void)state;
    struct fg_model *m = load(LLAMA8B);
    struct fg_estimate e1 = est(m, FG_MODE_FULL, 1024, 1);
    struct fg_estimate e4 = est(m, FG_MODE_FULL, 1024, 4);
    assert_int_equal(e4.static_bytes, e1.static_bytes);
    uint64_t backward = e1.static_bytes + 4 * e1.per_sample_bytes;
    assert_int_equal(e4.total_bytes, backward > e1.step_bytes ? backward : e1.step_bytes);
    /* the step holds weights, grads, states: 4 + 4 + 8 B/param + temporaries */
    assert_true(e1.step_bytes >= 16ull * 8030261248ull);
    uint64_t sum = e4.b.weights + e4.b.gradients + e4.b.optimizer + e4.b.adapters +
                   e4.b.activations + e4.b.logits + e4.b.kv_cache + e4.b.ssm_state + e4.b.overhead;
    assert_true(sum >= e4.total_bytes);
    /* LoRA has one phase: the breakdown sums to the total */
    struct fg_estimate l4 = est(m, FG_MODE_LORA, 1024, 4);
    sum = l4.b.weights + l4.b.gradients + l4.b.optimizer + l4.b.adapters + l4.b.activations +
          l4.b.logits + l4.b.kv_cache + l4.b.ssm_state + l4.b.overhead;
    assert_int_equal(sum, l4.total_bytes);
    assert_int_equal(l4.total_bytes, l4.static_bytes + 4 * l4.per_sample_bytes);
    fg_model_free(m);
}

static void estimate_should_shrink_with_grad_ckpt_lora_qlora_and_zero(void **state)
{
    (void)state;
    struct fg_model *m = load(LLAMA8B);
    struct fg_job j;
    struct fg_estimate a, b;
    fg_job_defaults(&j, FG_MODE_FULL);
    assert_int_equal(fg_memory_estimate(m, &j, &a, NULL), 0);
    j.grad_ckpt = true;
    assert_int_equal(fg_memory_estimate(m, &j, &b, NULL), 0);
    assert_true(b.b.activations < a.b.activations / 4);
    j.grad_ckpt = false;
    j.zero = 3;
    j.dp = 8;
    assert_int_equal(fg_memory_estimate(m, &j, &b, NULL), 0);
    assert_true(b.b.optimizer == a.b.optimizer / 8);
    fg_job_defaults(&j, FG_MODE_LORA);
    assert_int_equal(fg_memory_estimate(m, &j, &a, NULL), 0);
    fg_job_defaults(&j, FG_MODE_QLORA);
    assert_int_equal(fg_memory_estimate(m, &j, &b, NULL), 0);
    /* blocks in 4 bit, embedding and head stay bf16 */
    assert_true(b.b.weights < a.b.weights / 2);
    /* logits of a 128k vocabulary: 12 B x 128256 x 2048 tokens */
    assert_int_equal(a.b.logits, 12ull * 128256 * 2048);
    fg_model_free(m);
}

static void zero_should_shard_experts_only_over_the_expert_data_parallel_group(void **state)
{
    (void)state;
    struct fg_model *m = load("tests/fixtures/models/Qwen--Qwen3-30B-A3B");
    struct fg_job j;
    struct fg_estimate z0, z3, dense;
    fg_job_defaults(&j, FG_MODE_FULL);
    j.ep = 8;
    j.dp = 8;
    assert_int_equal(fg_memory_estimate(m, &j, &z0, NULL), 0);
    j.zero = 3;
    assert_int_equal(fg_memory_estimate(m, &j, &z3, NULL), 0);
    /* EP=8 over DP=8 leaves one rank per expert: ZeRO cannot shard the
     * experts again, only the dense part (attention, router, embeddings) */
    assert_true(z3.b.optimizer > z0.b.optimizer / 2);
    assert_true(z3.b.optimizer < z0.b.optimizer);
    /* without EP every parameter is sharded over all 8 ranks */
    j.ep = 1;
    assert_int_equal(fg_memory_estimate(m, &j, &dense, NULL), 0);
    j.zero = 0;
    assert_int_equal(fg_memory_estimate(m, &j, &z0, NULL), 0);
    assert_true(dense.b.optimizer <= z0.b.optimizer / 8 + 1);
    fg_model_free(m);
}

static void estimate_should_reject_bad_jobs_clearly(void **state)
{
    (void)state;
    struct fg_model *m = load(LLAMA8B);
    struct fg_job j;
    struct fg_estimate e;
    struct fg_err err = {0};
    fg_job_defaults(&j, FG_MODE_LORA);
    j.batch = 0;
    assert_int_equal(fg_memory_estimate(m, &j, &e, &err), FG_E_INVAL);
    fg_job_defaults(&j, FG_MODE_LORA);
    assert_int_equal(fg_lora_targets_parse("nonexistent_role", &j, &err), 0);
    assert_int_equal(fg_memory_estimate(m, &j, &e, &err), FG_E_INVAL);
    assert_non_null(strstr(err.detail, "match no linear layer"));
    assert_int_equal(fg_lora_targets_parse("q;rm -rf", &j, &err), FG_E_INVAL);
    fg_job_defaults(&j, FG_MODE_FULL);
    j.seq_len = (uint64_t)1 << 40;
    assert_int_equal(fg_memory_estimate(m, &j, &e, &err), FG_E_RANGE);
    enum fg_mode md;
    assert_int_equal(fg_mode_parse("pretrain", &md, &err), FG_E_INVAL);
    assert_non_null(strstr(err.detail, "full|lora|qlora|serve"));
    fg_model_free(m);
}

static void serve_should_count_gqa_kv_and_windows(void **state)
{
    (void)state;
    struct fg_model *m = load(LLAMA8B);
    struct fg_estimate e = est(m, FG_MODE_SERVE, 4096, 1);
    /* 32 layers x 2 (K,V) x 8 kv heads x 128 x 2 bytes x 4096 tokens */
    assert_int_equal(e.b.kv_cache, 32ull * 2 * 8 * 128 * 2 * 4096);
    fg_model_free(m);
    m = load("tests/fixtures/models/google--gemma-2-9b");
    e = est(m, FG_MODE_SERVE, 8192, 1);
    /* 21 local layers hold 4096 tokens, 21 global layers 8192 */
    assert_int_equal(e.b.kv_cache, 2ull * 2 * 8 * 256 * (21 * 4096 + 21 * 8192));
    fg_model_free(m);
}

/* lit-gpt 8641822's FSDP LoRA of measured-dev rows 44-47 (tests/accuracy/rows.tsv):
 * r=8 on q,v over a bf16 base, the longest Alpaca sample (1304 tokens), checkpointing,
 * ZeRO-3 over dp ranks. */
static struct fg_job litgpt_fsdp_lora(uint32_t dp, bool copy)
{
    struct fg_job j;
    fg_job_defaults(&j, FG_MODE_LORA);
    assert_int_equal(fg_lora_targets_parse("qv", &j, NULL), 0);
    j.lora_rank = 8;
    j.seq_len = 1304;
    j.grad_ckpt = true;
    j.zero = 3;
    j.dp = dp;
    j.unsharded_copy = copy;
    return j;
}

static const struct fg_line *line_of(const struct fg_estimate *e, const char *what)
{
    for (size_t i = 0; i < e->n_lines; i++)
        if (strstr(e->lines[i].what, what))
            return &e->lines[i];
    return NULL;
}

static void unsharded_copy_should_add_the_whole_bf16_weights_beside_a_zero3_shard(void **state)
{
    (void)state;
    struct fg_model *m = load(LLAMA2_7B);
    struct fg_job j = litgpt_fsdp_lora(2, false);
    struct fg_estimate a, b;
    assert_int_equal(fg_memory_estimate(m, &j, &a, NULL), 0);
    j.unsharded_copy = true;
    assert_int_equal(fg_memory_estimate(m, &j, &b, NULL), 0);
    /* one line of its own: 2 B x 6,738,415,616 params = 13,476,831,232 B */
    const uint64_t copy = 2 * LLAMA2_7B_PARAMS;
    assert_null(line_of(&a, "unsharded copy"));
    const struct fg_line *l = line_of(&b, "unsharded copy");
    assert_non_null(l);
    assert_string_equal(l->key, "overhead");
    assert_int_equal(l->bytes, 13476831232ull);
    assert_int_equal(l->bytes, copy);
    assert_false(l->per_sample);
    assert_non_null(strstr(l->source, "44/45/47"));
    assert_int_equal(b.n_lines, a.n_lines + 1);
    /* the weights line stays the shard; the copy is static and nothing else moves */
    assert_int_equal(b.b.weights, a.b.weights);
    assert_int_equal(b.b.weights, copy / 2);
    assert_int_equal(b.b.overhead, a.b.overhead + copy);
    assert_int_equal(b.static_bytes, a.static_bytes + copy);
    assert_int_equal(b.per_sample_bytes, a.per_sample_bytes);
    assert_int_equal(b.total_bytes, a.total_bytes + copy);
    /* row 44: 8.63 + 13.48 = 22.10 GB, measured 22.18 GB (8.72 before FSDP sharded the
     * adapters' fp32 weights, gradients and Adam states with the base, 8.69 before the
     * frozen linears stopped keeping their inputs) */
    assert_int_equal((a.total_bytes + 5000000) / 10000000, 863);
    assert_int_equal((b.total_bytes + 5000000) / 10000000, 2210);
    fg_model_free(m);

    /* row 46 (ran out of memory on 2x A100 40GB): 15.60 + 26.03 = 41.63 GB, not "fits" */
    m = load(LLAMA2_13B);
    j = litgpt_fsdp_lora(2, true);
    assert_int_equal(fg_memory_estimate(m, &j, &b, NULL), 0);
    l = line_of(&b, "unsharded copy");
    assert_non_null(l);
    assert_int_equal(l->bytes, 26031728640ull);
    assert_int_equal(l->bytes, 2 * LLAMA2_13B_PARAMS);
    assert_int_equal((b.total_bytes + 5000000) / 10000000, 4163);
    struct fg_fit_opts o;
    fg_fit_opts_default(&o);
    struct fg_fit f;
    fg_fit_card(&b, fg_fit_usable(40, 0, &o), &o, &f);
    assert_int_not_equal(f.verdict, FG_FIT_FITS);
    assert_int_not_equal(f.verdict, FG_FIT_BORDERLINE);
    fg_model_free(m);
}

static void unsharded_copy_should_hold_through_a_full_fine_tunes_step_phase(void **state)
{
    (void)state;
    struct fg_model *m = load(LLAMA2_7B);
    struct fg_job j;
    struct fg_estimate a, b;
    fg_job_defaults(&j, FG_MODE_FULL); /* bf16-mixed: fp32 parameters, 4 B */
    j.zero = 3;
    j.dp = 4;
    assert_int_equal(fg_memory_estimate(m, &j, &a, NULL), 0);
    j.unsharded_copy = true;
    assert_int_equal(fg_memory_estimate(m, &j, &b, NULL), 0);
    const uint64_t copy = 4 * LLAMA2_7B_PARAMS;
    const struct fg_line *l = line_of(&b, "unsharded copy");
    assert_non_null(l);
    assert_int_equal(l->bytes, copy);
    assert_int_equal(b.static_bytes, a.static_bytes + copy);
    assert_int_equal(b.step_bytes, a.step_bytes + copy);
    assert_int_equal(b.total_bytes, a.total_bytes + copy);
    fg_model_free(m);
}

static void unsharded_copy_should_change_nothing_without_weight_sharding(void **state)
{
    (void)state;
    struct fg_model *m = load(LLAMA2_7B);
    static const enum fg_mode modes[] = {FG_MODE_FULL, FG_MODE_LORA, FG_MODE_QLORA,
                                         FG_MODE_SERVE};
    for (size_t k = 0; k < sizeof modes / sizeof modes[0]; k++)
        for (uint32_t zero = 0; zero <= 3; zero++)
            for (uint32_t dp = 1; dp <= 2; dp++) {
                /* the weights are sharded only under ZeRO-3 over dp > 1; serving never */
                if (zero == 3 && dp == 2 && modes[k] != FG_MODE_SERVE)
                    continue;
                struct fg_job j;
                struct fg_estimate a, b;
                fg_job_defaults(&j, modes[k]);
                j.zero = zero;
                j.dp = dp;
                assert_int_equal(fg_memory_estimate(m, &j, &a, NULL), 0);
                j.unsharded_copy = true;
                assert_int_equal(fg_memory_estimate(m, &j, &b, NULL), 0);
                if (memcmp(&a, &b, sizeof a))
                    fail_msg("%s zero=%u dp=%u: the estimate changed", fg_mode_name(modes[k]),
                             zero, dp);
            }
    fg_model_free(m);
}

/* The estimate of the one-stage layout L of job j, as the planner makes it. */
static struct fg_estimate layout_estimate(const struct fg_model *m, struct fg_job j,
                                          const struct fg_layout *L)
{
    j.tp = L->tp;
    j.ep = L->ep;
    j.dp = L->dp;
    j.zero = L->zero;
    j.batch = L->micro_batch;
    struct fg_estimate e;
    assert_int_equal(fg_memory_estimate(m, &j, &e, NULL), 0);
    return e;
}

/* Plans of j on cards of usable bytes without and with the unsharded copy. */
static void plan_both(const struct fg_model *m, struct fg_job j, uint64_t usable,
                      struct fg_plan *without, struct fg_plan *with)
{
    struct fg_plan_opts po;
    struct fg_err err = {0};
    fg_plan_opts_default(&po);
    j.unsharded_copy = false;
    assert_int_equal(fg_plan_layouts(m, &j, usable, &po, without, &err), 0);
    j.unsharded_copy = true;
    assert_int_equal(fg_plan_layouts(m, &j, usable, &po, with, &err), 0);
    assert_int_equal(with->status, FG_PLAN_FOUND);
}

/* The planner copies the job into every layout it tries, so the copy is priced in each
 * layout that shards the weights over DP and in no other. */
static void plan_should_price_the_copy_into_the_layouts_that_shard_weights(void **state)
{
    (void)state;
    struct fg_model *m = load(LLAMA2_13B);
    struct fg_plan_opts po;
    fg_plan_opts_default(&po);
    uint64_t usable = fg_fit_usable(40, 0, &po.fit);
    double limit = (double)usable / po.fit.headroom;
    struct fg_plan without, with;
    struct fg_job j = litgpt_fsdp_lora(1, true);
    j.batch = 8; /* over one card, so that the planner is asked */
    plan_both(m, j, usable, &without, &with);
    bool dp_layout_without = false;
    for (size_t i = 0; i < without.n; i++)
        dp_layout_without |= without.options[i].dp > 1 && without.options[i].zero == 3;
    assert_true(dp_layout_without);
    size_t sharded = 0;
    for (size_t i = 0; i < with.n; i++) {
        const struct fg_layout *L = &with.options[i];
        assert_true((double)L->peak_bytes <= limit);
        if (L->pp != 1)
            continue;
        /* a one-stage layout's peak is the estimate of that layout, copy and all */
        struct fg_estimate e = layout_estimate(m, j, L);
        assert_int_equal(L->peak_bytes, e.total_bytes);
        bool shards = L->zero >= 3 && L->dp > 1;
        assert_true((line_of(&e, "unsharded copy") != NULL) == shards);
        sharded += shards;
    }
    print_message("plan with the copy: %zu options, %zu one-stage DP-sharded; first %u GPUs "
                  "TP=%u PP=%u DP=%u (without: first %u GPUs TP=%u PP=%u DP=%u)\n", with.n,
                  sharded, with.options[0].gpus, with.options[0].tp, with.options[0].pp,
                  with.options[0].dp, without.options[0].gpus, without.options[0].tp,
                  without.options[0].pp, without.options[0].dp);
    /* the DP-sharded layouts offered without the copy are over the card with it: gone */
    for (size_t i = 0; i < without.n; i++) {
        const struct fg_layout *L = &without.options[i];
        if (L->pp != 1 || L->zero < 3 || L->dp < 2)
            continue;
        struct fg_estimate e = layout_estimate(m, j, L);
        assert_true(e.total_bytes > L->peak_bytes);
        if ((double)e.total_bytes <= limit)
            continue;
        for (size_t k = 0; k < with.n; k++)
            assert_false(with.options[k].gpus == L->gpus && with.options[k].tp == L->tp &&
                         with.options[k].pp == 1 && with.options[k].dp == L->dp &&
                         with.options[k].zero == L->zero);
    }
    /* a layout without DP sharding pays no copy, so the smallest count stays the same */
    assert_int_equal(with.options[0].gpus, without.options[0].gpus);
    fg_model_free(m);
}

/* The same for a full fine-tune, where the copy (fp32 under bf16-mixed) is in both phases:
 * TP=2 over 2x A100 80GB holds Llama-2-7b without any copy, so the flag must not move the
 * smallest count.  plan_floor.c's per-count floor (fg__plan_count_floor) prices the job as
 * ZeRO-3 over every GPU of the count, which no TP or PP layout is; counting the copy there
 * skipped counts that fit (2 -> 4 GPUs; Llama-2-13b on A100 40GB: no layout at all). */
static void plan_should_keep_the_smallest_count_of_a_full_fine_tune_with_the_copy(void **state)
{
    (void)state;
    struct fg_model *m = load(LLAMA2_7B);
    struct fg_plan_opts po;
    fg_plan_opts_default(&po);
    uint64_t usable = fg_fit_usable(80, 0, &po.fit);
    struct fg_job j;
    fg_job_defaults(&j, FG_MODE_FULL);
    uint64_t floor_without = fg__plan_count_floor(m, &j, 2);
    j.unsharded_copy = true;
    assert_int_equal(fg__plan_count_floor(m, &j, 2), floor_without);
    struct fg_plan without, with;
    plan_both(m, j, usable, &without, &with);
    assert_int_equal(with.options[0].gpus, without.options[0].gpus);
    assert_int_equal(with.options[0].gpus, 2);
    fg_model_free(m);
}

/* AdamW(fused=True) keeps AdamW's states and drops the foreach step's sqrt(v) temporary:
 * the step phase is smaller by one state's worth (bf16 here), nothing else moves. */
static void fused_adamw_should_drop_only_the_step_temporary(void **state)
{
    (void)state;
    struct fg_model *m = load(LLAMA8B);
    struct fg_job j;
    fg_job_defaults(&j, FG_MODE_FULL);
    j.precision = FG_PREC_BF16;
    struct fg_estimate foreach, fused;
    assert_int_equal(fg_memory_estimate(m, &j, &foreach, NULL), 0);
    assert_int_equal(fg_optimizer_parse("adamw-fused", &j.optimizer, NULL), 0);
    assert_int_equal(fg_memory_estimate(m, &j, &fused, NULL), 0);
    assert_true(fused.b.optimizer == foreach.b.optimizer);
    assert_true(fused.static_bytes == foreach.static_bytes);
    assert_true(fused.per_sample_bytes == foreach.per_sample_bytes);
    assert_true(foreach.step_bytes - fused.step_bytes == 2 * foreach.trainable_params);
    assert_true(fused.total_bytes < foreach.total_bytes);
    bool temp_line = false;
    for (size_t i = 0; i < fused.n_lines; i++)
        temp_line |= strstr(fused.lines[i].what, "sqrt of v") != NULL;
    assert_false(temp_line);
    assert_string_equal(fg_optimizer_name(j.optimizer), "adamw-fused");
    fg_model_free(m);
}

/* A decoder's prefill holds one node's working set beside the cache (measured on H200:
 * tests/calibration/measured-h200.tsv, serve rows, within 2.3% of max_memory_allocated). */
static void serve_should_hold_one_nodes_prefill_working_set(void **state)
{
    (void)state;
    struct fg_model *m = load(LLAMA32_1B);
    struct fg_estimate e = est(m, FG_MODE_SERVE, 8192, 4);
    /* gated MLP: residual 2048 + gate, act, up, product 4 x 8192, in bf16 */
    assert_int_equal(e.b.activations, 4ull * 8192 * 2 * (2048 + 4 * 8192));
    assert_true(e.total_bytes == e.b.weights + e.b.kv_cache + e.b.activations);
    fg_model_free(m);
    m = load("tests/fixtures/models/Qwen--Qwen3-30B-A3B");
    e = est(m, FG_MODE_SERVE, 2048, 1);
    /* 8 slots x (4 x 768 expert widths + gathered, expert and weighted tokens 3 x 2048) */
    assert_int_equal(e.b.activations, 2048ull * 2 * (2048 + 8 * (4 * 768 + 3 * 2048)));
    fg_model_free(m);
}

/* The bytes of the line whose source is `source`, or 0. */
static uint64_t line_bytes(const struct fg_estimate *e, const char *source)
{
    for (size_t i = 0; i < e->n_lines; i++)
        if (!strcmp(e->lines[i].source, source))
            return e->lines[i].bytes;
    return 0;
}

/* peft adapts transformers 5's fused experts through ParamWrapper, which keeps a rebuilt copy
 * W + BA of every adapted expert tensor for backward (measured on H200, Mixtral-8x7B cut to
 * 4 layers: 11.3 of the 11.6 GB its LoRA keeps over its full fine-tune's activations); only
 * the families peft maps, and one block's copy under recompute. */
static void moe_lora_should_keep_the_rebuilt_experts_where_peft_wraps_them(void **state)
{
    (void)state;
    struct fg_model *m = load("tests/fixtures/models/mistralai--Mixtral-8x7B-v0.1");
    const uint64_t experts = 32ull * 8 * 3 * 4096 * 14336;
    struct fg_estimate e = est(m, FG_MODE_LORA, 2048, 1);
    assert_true(line_bytes(&e, "peft ParamWrapper on fused experts") == 2 * experts);
    struct fg_job j;
    fg_job_defaults(&j, FG_MODE_LORA);
    j.grad_ckpt = true;
    assert_int_equal(fg_memory_estimate(m, &j, &e, NULL), 0);
    assert_true(line_bytes(&e, "peft ParamWrapper on fused experts") == 2 * experts / 32);
    assert_int_equal(fg_lora_targets_parse("attn", &j, NULL), 0);
    assert_int_equal(fg_memory_estimate(m, &j, &e, NULL), 0);
    assert_true(line_bytes(&e, "peft ParamWrapper on fused experts") == 0);
    e = est(m, FG_MODE_FULL, 2048, 1);
    assert_true(line_bytes(&e, "peft ParamWrapper on fused experts") == 0);
    fg_model_free(m);
    /* granitemoe: no peft mapping, so all-linear adapts q/k/v/o alone (the H200 run trained
     * 2,752,512 adapter parameters: 24 layers x 16 x (q 2048 + k 1536 + v 1536 + o 2048)) */
    m = load("tests/fixtures/models/ibm-granite--granite-3.1-1b-a400m-instruct");
    e = est(m, FG_MODE_LORA, 2048, 1);
    assert_true(e.adapter_params == 2752512);
    fg_model_free(m);
    /* granitemoe: no peft mapping; Kimi-K2: remote code with nn.Linear experts */
    const char *unwrapped[] = {"tests/fixtures/models/ibm-granite--granite-3.1-1b-a400m-instruct",
                               "tests/fixtures/models/moonshotai--Kimi-K2-Instruct"};
    for (size_t i = 0; i < 2; i++) {
        m = load(unwrapped[i]);
        e = est(m, FG_MODE_LORA, 2048, 1);
        assert_true(line_bytes(&e, "peft ParamWrapper on fused experts") == 0);
        fg_model_free(m);
    }
}

/* falcon's attention hands SDPA one K/V head for 71 query heads, so torch runs its math path
 * and keeps the fp32 softmax (measured on H200: 13.69 GB kept by falcon-7b LoRA at 1079
 * tokens, 1.34 GB at 256); Llama's SDPA runs a fused kernel and keeps no scores. */
static void falcon_should_keep_its_attention_scores_where_llama_keeps_none(void **state)
{
    (void)state;
    const char *source = "torch SDPA math path (fewer K/V heads)";
    struct fg_model *m = load("tests/fixtures/models/tiiuae--falcon-7b");
    struct fg_estimate e = est(m, FG_MODE_LORA, 1024, 2);
    assert_true(line_bytes(&e, source) == 4ull * 71 * 1024 * 1024 * 32);
    struct fg_job j;
    fg_job_defaults(&j, FG_MODE_LORA);
    j.seq_len = 1024;
    j.grad_ckpt = true;
    assert_int_equal(fg_memory_estimate(m, &j, &e, NULL), 0);
    assert_true(line_bytes(&e, source) == 4ull * 71 * 1024 * 1024);
    fg_model_free(m);
    m = load(LLAMA8B);
    e = est(m, FG_MODE_LORA, 1024, 2);
    assert_true(line_bytes(&e, source) == 0);
    fg_model_free(m);
}

/* --attention eager keeps each block's scores: 6 B (transformers' eager_attention_forward:
 * fp32 softmax + its bf16 copy; Llama-3.2-1B on H200 6.03), 8 B under Gemma-2's soft cap
 * (tanh keeps its output), 2 B for falcon's own eager path; serving holds about 10 B per
 * score of one layer at once. */
static void eager_attention_should_keep_the_scores_of_every_block(void **state)
{
    (void)state;
    static const struct {
        const char *model;
        uint64_t bytes, heads, layers;
    } cases[] = {
        {LLAMA8B, 6, 32, 32},
        {"tests/fixtures/models/google--gemma-2-9b", 8, 16, 42},
        {"tests/fixtures/models/tiiuae--falcon-7b", 2, 71, 32},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct fg_model *m = load(cases[i].model);
        struct fg_job j;
        struct fg_estimate e;
        fg_job_defaults(&j, FG_MODE_LORA);
        j.seq_len = 1024;
        assert_int_equal(fg_attention_parse("eager", &j.attention, NULL), 0);
        assert_int_equal(fg_memory_estimate(m, &j, &e, NULL), 0);
        assert_true(line_bytes(&e, "transformers eager attention") ==
                    cases[i].bytes * cases[i].heads * 1024 * 1024 * cases[i].layers);
        j.mode = FG_MODE_SERVE;
        j.batch = 2;
        assert_int_equal(fg_memory_estimate(m, &j, &e, NULL), 0);
        assert_true(e.b.activations == 2 * 10 * cases[i].heads * 1024 * 1024);
        fg_model_free(m);
    }
    struct fg_err err = {0};
    enum fg_attention a;
    assert_int_equal(fg_attention_parse("flash", &a, &err), FG_E_INVAL);
    assert_string_equal(err.detail, "attention 'flash' is not one of sdpa|eager");
    assert_string_equal(fg_attention_name(FG_ATTN_EAGER), "eager");
}

/* ---- what the frameworks keep (docs/frameworks-memory.md) ---- */

#define BERT_BASE "tests/fixtures/models/google-bert--bert-base-uncased"
/* Llama-2-7b: 262,410,240 parameters bitsandbytes leaves unquantized (embedding and head
 * 131,072,000 each, 65 RMSNorms of 4096); per block the 4-bit linears read q, k, v and
 * gate, up 4096 wide each, o 4096 and down 11,008: 35,584 input elements per token. */
#define LLAMA2_7B_UNQUANTIZED 262410240ull
#define LLAMA2_7B_QIN 35584ull

static struct fg_job qlora_7b(uint64_t seq)
{
    struct fg_job j;
    fg_job_defaults(&j, FG_MODE_QLORA);
    j.seq_len = seq;
    return j;
}

static struct fg_estimate estimate_of(const struct fg_model *m, const struct fg_job *j)
{
    struct fg_estimate e;
    struct fg_err err = {0};
    if (fg_memory_estimate(m, j, &e, &err))
        fail_msg("estimate: %s", err.detail);
    return e;
}

/* The bytes of job j's line from source src. */
static uint64_t kept_bytes(const struct fg_model *m, const struct fg_job *j, const char *src)
{
    struct fg_estimate e = estimate_of(m, j);
    return line_bytes(&e, src);
}

/* peft prepare_model_for_kbit_training casts what is not Params4bit to fp32 and the fp32
 * hidden states make every Linear4bit compute and return fp32: the weights grow by 2 B per
 * unquantized parameter and the rest is the estimate of an fp32 QLoRA job. */
static void kbit_prepared_should_keep_the_unquantized_params_and_activations_in_fp32(void **s)
{
    (void)s;
    struct fg_model *m = load(LLAMA2_7B);
    struct fg_job j = qlora_7b(512);
    struct fg_estimate plain = estimate_of(m, &j);
    j.kbit_prepared = true;
    struct fg_estimate kbit = estimate_of(m, &j);
    assert_int_equal(kbit.b.weights - plain.b.weights, 2 * LLAMA2_7B_UNQUANTIZED);
    assert_int_equal(kbit.b.weights - plain.b.weights, 524820480ull);
    j.kbit_prepared = false;
    j.precision = FG_PREC_FP32;
    struct fg_estimate fp32 = estimate_of(m, &j);
    assert_int_equal(kbit.b.activations, fp32.b.activations);
    assert_int_equal(kbit.total_bytes, fp32.total_bytes);
    assert_true(kbit.b.activations > plain.b.activations);
    /* the dequantized weight (the largest, gate 4096 x 11008) is copied to fp32 as well:
     * 2 + 4 B, once (forward's copy is freed before backward makes its own) */
    assert_int_equal(line_bytes(&kbit, "bitsandbytes MatMul4Bit dequantize_4bit"),
                     6 * 4096ull * 11008);
    assert_int_equal(line_bytes(&plain, "bitsandbytes MatMul4Bit dequantize_4bit"),
                     2 * 4096ull * 11008);
    /* outside QLoRA nothing reads it */
    fg_job_defaults(&j, FG_MODE_LORA);
    struct fg_estimate lora = estimate_of(m, &j);
    j.kbit_prepared = true;
    struct fg_estimate lora_k = estimate_of(m, &j);
    assert_int_equal(lora_k.total_bytes, lora.total_bytes);
    fg_model_free(m);
}

/* bitsandbytes < 0.43.2 keeps each 4-bit linear's input for backward, where a frozen torch
 * linear keeps none: the input itself (2 B x (3 h + I) = 2 x 23,296 per token per block,
 * q/k/v, o, gate/up and down sharing theirs), or, where Linear4bit cast it to a wider
 * compute dtype (fp16 activations under transformers' default
 * bnb_4bit_compute_dtype=float32), a copy of its own: 4 B x 35,584. */
static void bnb_keeps_input_should_keep_fp32_copies_only_where_the_linear_upcasts(void **s)
{
    (void)s;
    const char *src = "bitsandbytes<0.43.2 MatMul4Bit.forward";
    struct fg_model *m = load(LLAMA2_7B);
    struct fg_job j = qlora_7b(512);
    j.bnb_keeps_input = true;
    struct fg_estimate input = estimate_of(m, &j); /* compute = the input's bf16 */
    assert_int_equal(line_bytes(&input, src), 0);
    j.bnb_keeps_input = false;
    struct fg_estimate none = estimate_of(m, &j);
    assert_int_equal(input.b.activations - none.b.activations, 2 * 23296ull * 32 * 512);
    j.bnb_keeps_input = true;
    j.bnb_compute = FG_BNB_FP32;
    struct fg_estimate up = estimate_of(m, &j);
    assert_int_equal(line_bytes(&up, src), 4 * LLAMA2_7B_QIN * 32 * 512);
    assert_int_equal(line_bytes(&up, src), 2332033024ull);
    assert_int_equal(up.b.activations - none.b.activations, 2332033024ull);
    j.batch = 3;
    struct fg_estimate b3 = estimate_of(m, &j);
    assert_int_equal(b3.b.activations - 3 * none.b.activations, 3 * 2332033024ull);
    j.batch = 1;
    j.grad_ckpt = true; /* one block's copies while it recomputes */
    assert_int_equal(kept_bytes(m, &j, src), 72876032ull);
    j.grad_ckpt = false;
    j.bnb_keeps_input = false; /* bitsandbytes 0.43.2 on: a transient, nothing kept */
    assert_int_equal(kept_bytes(m, &j, src), 0);
    j.bnb_keeps_input = true;
    j.kbit_prepared = true; /* fp32 hidden states: no cast, the input is kept anyway */
    assert_int_equal(kept_bytes(m, &j, src), 0);
    fg_model_free(m);
}

/* peft's default LoRA on q and v (rank 16, fp32 adapters, no autocast, no dropout). */
static struct fg_job lora_qv(uint64_t seq)
{
    struct fg_job j;
    fg_job_defaults(&j, FG_MODE_LORA);
    j.seq_len = seq;
    if (fg_lora_targets_parse("qv", &j, NULL))
        fail_msg("qv");
    return j;
}

/* A frozen linear keeps no input for its weight's gradient (torch autograd saves mm's self
 * only when the weight wants one: pytorch gen_variable_type.py guard_for), nor a
 * frozen norm its normalised tensor.  Llama-2-7b LoRA on q, v with adapters that take x as
 * it is (lit-gpt, torchtune), per token per block: two RMSNorm fp32 copies 2 x 4 h, q/v's
 * input 2 h, SDPA's q, k, v, output 2 (2 q + 2 kv) and log-sum-exp 4 x 32, gate, act(gate)
 * and up 2 x 3 I = 139,904 B, where a full fine-tune keeps 194,688; the final norm 4 h. */
static void frozen_linears_should_keep_no_input_of_their_own(void **s)
{
    (void)s;
    const char *src = "saved tensors per node (SDPA, no score matrix)";
    struct fg_model *m = load(LLAMA2_7B);
    struct fg_job j = lora_qv(512);
    j.lora_base_dtype = true;
    assert_int_equal(kept_bytes(m, &j, src), (139904ull * 32 + 4 * 4096) * 512);
    /* adapters on o and down keep their inputs: 2 q + 2 I more */
    assert_int_equal(fg_lora_targets_parse("q,v,o,down", &j, NULL), 0);
    assert_int_equal(kept_bytes(m, &j, src),
                     (139904ull * 32 + 4 * 4096) * 512 + (2 * 4096 + 2 * 11008ull) * 32 * 512);
    fg_job_defaults(&j, FG_MODE_FULL);
    j.seq_len = 512;
    j.precision = FG_PREC_BF16;
    assert_int_equal(kept_bytes(m, &j, src), (194688ull * 32 + 8 * 4096) * 512);
    fg_model_free(m);
}

/* A chunked loss keeps every chunk's logits (2 B on a bf16 job) and what its
 * cross-entropy saves: torchtune's upcast chunks an fp32 log-softmax (+4), lit-gpt's one in
 * the logits' dtype (+2; +4 under autocast, whose log_softmax runs in fp32), unsloth's
 * kernel a log-sum-exp per token (+0); transformers' whole fp32 loss 12 B per entry. */
static void chunked_loss_should_keep_what_each_framework_keeps(void **s)
{
    (void)s;
    struct fg_model *m = load(LLAMA2_7B);
    struct fg_job j = lora_qv(512);
    static const struct {
        bool chunked;
        enum fg_ce_kept ce;
        bool autocast;
        uint64_t bytes;
    } rows[] = {
        {false, FG_CE_FP32, false, 12}, {true, FG_CE_FP32, false, 6},
        {true, FG_CE_COMPUTE, false, 4}, {true, FG_CE_COMPUTE, true, 6},
        {true, FG_CE_LSE, false, 2},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        j.chunked_ce = rows[i].chunked;
        j.ce_kept = rows[i].ce;
        j.autocast = rows[i].autocast;
        struct fg_estimate e = estimate_of(m, &j);
        assert_int_equal(e.b.logits, rows[i].bytes * 32000 * 512);
    }
    fg_model_free(m);
}

/* lit-gpt's attention (job.kv_expanded): on Llama-2-7b's 32 K/V heads SDPA's v is a view of
 * the fused qkv output and keeps it whole, 2 B x (q + kv) more per token per block; on
 * Llama-3.1-8B's 8 K/V heads for 32 query heads k and v are expanded copies, 2 x 2 B x
 * (q - kv) more. */
static void expanded_kv_should_keep_the_fused_output_or_the_copies(void **s)
{
    (void)s;
    const char *src = "saved tensors per node (SDPA, no score matrix)";
    static const struct { const char *model; uint64_t more; } rows[] = {
        {LLAMA2_7B, 2 * (4096 + 4096)}, {LLAMA8B, 2 * 2 * (4096 - 1024)}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct fg_model *m = load(rows[i].model);
        struct fg_job j = lora_qv(512);
        uint64_t plain = kept_bytes(m, &j, src);
        j.kv_expanded = true;
        assert_int_equal(kept_bytes(m, &j, src) - plain, rows[i].more * 32 * 512);
        fg_model_free(m);
    }
}

/* What peft's adapters keep of their own (peft tuners/lora/layer.py Linear.forward:
 * lora_B(lora_A(dropout(self._cast_input_dtype(x, lora_A.weight.dtype))))), per element of
 * each adapted input (q and v, 4096 wide each on Llama-2-7b): without autocast the fp32
 * adapters' cast copy, 4 B; with dropout a bool mask and the dropped copy, 1 + 4; under
 * autocast lora_A keeps its bf16 cast, 2 (1 + 2 with dropout); lit-gpt's bf16 adapters
 * take x as it is (nothing of their own) and drop it once for the fused q, k, v (1 + 2). */
static void lora_adapters_should_keep_their_own_input_copies(void **s)
{
    (void)s;
    const char *src = "peft tuners/lora/layer.py Linear.forward";
    struct fg_model *m = load(LLAMA2_7B);
    struct fg_job j = lora_qv(512);
    assert_int_equal(kept_bytes(m, &j, src), 4 * (4096 + 4096) * 32 * 512ull);
    j.lora_dropout = 0.05f;
    assert_int_equal(kept_bytes(m, &j, src), 5 * (4096 + 4096) * 32 * 512ull);
    j.lora_fused_qkv = true; /* lit-gpt: one dropout for the fused projection */
    j.lora_base_dtype = true; /* and bf16 adapters: the mask and a bf16 copy */
    assert_int_equal(kept_bytes(m, &j, src), 3 * 4096 * 32 * 512ull);
    j.lora_dropout = 0; /* nothing of their own: lora_A keeps x */
    assert_int_equal(kept_bytes(m, &j, src), 0);
    j.lora_dropout = 0.05f;
    j.lora_fused_qkv = j.lora_base_dtype = false;
    j.autocast = true; /* autocast: lora_A keeps a bf16 cast */
    assert_int_equal(kept_bytes(m, &j, src), 3 * (4096 + 4096) * 32 * 512ull);
    j.lora_dropout = 0;
    assert_int_equal(kept_bytes(m, &j, src), 2 * (4096 + 4096) * 32 * 512ull);
    j.lora_dropout = 0.05f;
    j.autocast = false;
    j.lora_targets = FG_LORA_ALL_LINEAR; /* every linear but the head */
    assert_int_equal(kept_bytes(m, &j, src), 5 * LLAMA2_7B_QIN * 32 * 512);
    j.mode = FG_MODE_QLORA;
    j.quant = FG_QUANT_NF4;
    assert_int_equal(kept_bytes(m, &j, src), 5 * LLAMA2_7B_QIN * 32 * 512);
    j.kbit_prepared = true; /* fp32 hidden states: no cast, the mask and an fp32 copy */
    assert_int_equal(kept_bytes(m, &j, src), 5 * LLAMA2_7B_QIN * 32 * 512);
    j.lora_dropout = 0;
    assert_int_equal(kept_bytes(m, &j, src), 0);
    j.kbit_prepared = false;
    j.lora_dropout = 1.0f;
    struct fg_err err = {0};
    struct fg_estimate e;
    assert_int_equal(fg_memory_estimate(m, &j, &e, &err), FG_E_INVAL);
    fg_model_free(m);
}

/* Serving a 4-bit base: bitsandbytes' MatMul4Bit dequantizes the prefill's weights whole
 * (F.dequantize_4bit(B, quant_state).to(A.dtype)): one copy of the largest 4-bit linear in
 * the dtype it was quantized from, a second where the activations are another (lit-gpt
 * quantizes from fp16 and computes in bf16).  lit-gpt's head is one of the 4-bit linears
 * and a tensor of its own even where config.json ties it (falcon-7b). */
static void serving_should_count_the_prefills_dequantized_copies(void **s)
{
    (void)s;
    struct fg_model *m = load(LLAMA2_7B);
    struct fg_job j;
    fg_job_defaults(&j, FG_MODE_SERVE);
    j.seq_len = 56;
    const char *src = "bitsandbytes MatMul4Bit dequantize_4bit";
    uint64_t head = (uint64_t)m->vocab * m->hidden, mlp = 11008ull * 4096;
    assert_int_equal(kept_bytes(m, &j, src), 0); /* bf16: nothing to dequantize */
    j.quant = FG_QUANT_NF4; /* transformers: the head stays bf16, the MLP is the largest */
    struct fg_estimate plain = estimate_of(m, &j);
    assert_int_equal(line_bytes(&plain, src), 2 * mlp);
    assert_int_equal(plain.static_bytes, plain.b.weights + 2 * mlp);
    j.head_4bit = j.bnb_fp16_quant = true; /* lit-gpt: a 4-bit head, fp16 then bf16 */
    struct fg_estimate lit = estimate_of(m, &j);
    assert_int_equal(line_bytes(&lit, src), 4 * head);
    uint64_t saved = plain.b.weights - lit.b.weights; /* the head at 0.5625 B, not 2 */
    assert_true(saved > head * 143 / 100 && saved < head * 145 / 100);
    j.precision = FG_PREC_FP16_MIXED; /* fp16 activations: .to(A.dtype) copies nothing */
    assert_int_equal(kept_bytes(m, &j, src), 2 * head);
    j.quant = FG_QUANT_INT8; /* MatMul8bitLt multiplies the int8 weight as it is */
    assert_int_equal(kept_bytes(m, &j, src), 0);
    fg_model_free(m);

    m = load("tests/fixtures/models/tiiuae--falcon-7b");
    assert_true(m->tied);
    fg_job_defaults(&j, FG_MODE_SERVE);
    struct fg_estimate tied = estimate_of(m, &j);
    j.head_untied = true;
    struct fg_estimate own = estimate_of(m, &j);
    assert_int_equal(own.b.weights - tied.b.weights, 2ull * m->vocab * m->hidden);
    fg_model_free(m);
}

/* BERT fine-tunes with config.json's attention_probs_dropout_prob 0.1: eager keeps the
 * softmax output, the dropout's bool mask and the dropped probabilities the PV matmul
 * multiplies: 4 + 1 + 4 = 9 B per score in fp32, 4 + 1 + 2 under bf16 autocast (softmax
 * runs in fp32), 4 in fp32 without dropout; 12 heads x 512 x 512 x 12 blocks of them. */
static void eager_scores_should_follow_the_compute_dtype_and_attention_dropout(void **s)
{
    (void)s;
    struct fg_model *m = load(BERT_BASE);
    assert_true(m->attn_dropout > 0.09 && m->attn_dropout < 0.11);
    static const struct {
        enum fg_precision p;
        float drop;
        uint64_t bytes;
        const char *src;
    } cases[] = {
        {FG_PREC_FP32, -1, 9, "transformers eager attention + dropout mask"},
        {FG_PREC_BF16_MIXED, -1, 7, "transformers eager attention + dropout mask"},
        {FG_PREC_FP32, 0, 4, "transformers eager attention"},
        {FG_PREC_BF16_MIXED, 0, 6, "transformers eager attention"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct fg_job j;
        fg_job_defaults(&j, FG_MODE_FULL);
        j.seq_len = 512;
        j.precision = cases[i].p;
        j.attention = FG_ATTN_EAGER;
        j.attn_dropout = cases[i].drop;
        struct fg_estimate e = estimate_of(m, &j);
        assert_int_equal(line_bytes(&e, cases[i].src), cases[i].bytes * 12 * 512 * 512 * 12);
    }
    /* SDPA's fused kernels draw their dropout from a seed: no mask, no scores */
    struct fg_job j;
    fg_job_defaults(&j, FG_MODE_FULL);
    j.seq_len = 512;
    struct fg_estimate e = estimate_of(m, &j);
    assert_int_equal(line_bytes(&e, "transformers eager attention + dropout mask"), 0);
    fg_model_free(m);
    /* a decoder in fp32: 4 B (the bf16 cast is a no-op), Gemma-2's soft cap 8 */
    m = load(LLAMA8B);
    fg_job_defaults(&j, FG_MODE_LORA);
    j.seq_len = 1024;
    j.precision = FG_PREC_FP32;
    j.attention = FG_ATTN_EAGER;
    e = estimate_of(m, &j);
    assert_int_equal(line_bytes(&e, "transformers eager attention"), 4ull * 32 * 1024 * 1024 * 32);
    fg_model_free(m);
}

/* Attention that materialises its scores is softmax and two matmuls: no kernel output and
 * no log-sum-exp are kept, as SDPA's fused kernels keep them (Llama-3.1-8B: 2 B x 4096 +
 * 4 B x 32 heads per token per block fewer under eager, beside the scores it adds). */
static void eager_attention_should_keep_no_kernel_output_or_log_sum_exp(void **s)
{
    (void)s;
    struct fg_model *m = load(LLAMA8B);
    struct fg_job j;
    fg_job_defaults(&j, FG_MODE_LORA);
    j.seq_len = 1024;
    struct fg_estimate sdpa = estimate_of(m, &j);
    j.attention = FG_ATTN_EAGER;
    struct fg_estimate eager = estimate_of(m, &j);
    uint64_t scores = line_bytes(&eager, "transformers eager attention");
    assert_int_equal(scores, 6ull * 32 * 1024 * 1024 * 32);
    assert_int_equal(sdpa.b.activations + scores - eager.b.activations,
                     (2 * 4096 + 4 * 32) * 32 * 1024ull);
    fg_model_free(m);
}

/* Hidden dropout (hidden_dropout_prob 0.1) keeps a bool mask after each residual branch and
 * after the embeddings: (2 x 12 + 1) x 768 x 512 B for bert-base at 512 tokens. */
static void hidden_dropout_should_keep_one_mask_per_residual_branch(void **s)
{
    (void)s;
    const char *src = "torch native_dropout (config hidden dropout)";
    struct fg_model *m = load(BERT_BASE);
    struct fg_job j;
    fg_job_defaults(&j, FG_MODE_FULL);
    j.seq_len = 512;
    j.precision = FG_PREC_FP32;
    struct fg_estimate e = estimate_of(m, &j);
    assert_int_equal(line_bytes(&e, src), 25 * 768 * 512ull);
    assert_int_equal(line_bytes(&e, src), 9830400ull);
    j.hidden_dropout = 0;
    struct fg_estimate off = estimate_of(m, &j);
    assert_int_equal(line_bytes(&off, src), 0);
    assert_int_equal(e.b.activations - off.b.activations, 9830400ull);
    fg_model_free(m);
    m = load(LLAMA2_7B); /* no dropout in its config.json: nothing */
    fg_job_defaults(&j, FG_MODE_FULL);
    e = estimate_of(m, &j);
    assert_int_equal(line_bytes(&e, src), 0);
    fg_model_free(m);
}

/* FSDP shards every parameter it wraps: LoRA's fp32 adapters, their gradients and Adam
 * states go over the DP ranks with the base; a QLoRA base all-gathers its 4-bit shards. */
static void fsdp_should_shard_the_adapters_and_gather_a_quantized_base_as_stored(void **s)
{
    (void)s;
    struct fg_model *m = load(LLAMA2_7B);
    struct fg_job j;
    fg_job_defaults(&j, FG_MODE_LORA);
    j.seq_len = 512;
    struct fg_estimate one = estimate_of(m, &j);
    j.zero = 3;
    j.dp = 4;
    struct fg_estimate four = estimate_of(m, &j);
    /* r=16 all-linear: 39,976,960 adapter parameters x 16 B */
    assert_int_equal(one.adapter_params, 39976960ull);
    assert_int_equal(one.b.adapters, 16 * 39976960ull);
    assert_int_equal(four.b.adapters, 4 * 39976960ull);
    j.zero = 1; /* ZeRO-1: the Adam states alone */
    assert_int_equal((estimate_of(m, &j)).b.adapters, (8 + 2) * 39976960ull);
    j = qlora_7b(512);
    j.zero = 3;
    j.dp = 4;
    struct fg_estimate q = estimate_of(m, &j);
    /* 8 of the largest linear (gate, 4096 x 11008) at 0.5625 B (nf4), not 2 */
    assert_int_equal(line_bytes(&q, "FSDP / ZeRO-3 all-gather"), 8 * 4096ull * 11008 * 9 / 16);
    assert_int_equal(line_bytes(&q, "FSDP / ZeRO-3 all-gather"), 202899456ull);
    fg_model_free(m);
}


/* Qwen3-0.6B's checkpoint writes its tied lm_head (751,632,384 stored), but transformers ties
 * it to the embedding at load: the H200 calibration run trains 596,049,920 parameters
 * (tests/calibration/measured-h200.tsv, n_params, and mem_static = 12 B x that). */
static void tied_head_should_cost_nothing_beside_the_embedding_even_when_stored(void **state)
{
    (void)state;
    struct fg_model *m = load(QWEN3_06B);
    assert_true(m->params_total == 751632384ull);
    struct fg_estimate e = est(m, FG_MODE_FULL, 2048, 1);
    assert_true(e.b.weights == 4 * 596049920ull);
    assert_true(e.b.optimizer == 8 * 596049920ull);
    fg_model_free(m);
}

/* The weights line of mode's estimate for the stage [first, last) with or without the sides. */
static uint64_t stage_weights(const struct fg_model *m, enum fg_mode mode, uint32_t first,
                              uint32_t last, bool embed, bool head)
{
    struct fg_job j;
    struct fg_estimate e;
    fg_job_defaults(&j, mode);
    j.seq_len = 512;
    j.layer_first = first;
    j.layer_last = last;
    j.stage_embed = embed;
    j.stage_head = head;
    assert_int_equal(fg_memory_estimate(m, &j, &e, NULL), 0);
    return e.b.weights;
}

/* A pipeline stage with the head but not the embedding keeps its own copy of a tied matrix
 * (Megatron's share_embeddings_and_output_weights); the first stage keeps the one it shares. */
static void tied_head_should_be_copied_onto_a_last_stage_without_the_embedding(void **state)
{
    (void)state;
    const char *models[] = {QWEN3_06B, LLAMA32_1B};
    for (size_t i = 0; i < 2; i++) {
        struct fg_model *m = load(models[i]);
        assert_true(m->tied);
        uint32_t l = fg_model_main_layers(m), h = l / 2;
        uint64_t matrix = m->vocab * m->hidden;
        /* with the embedding on the stage: the shared vocab x hidden, once */
        assert_true(stage_weights(m, FG_MODE_FULL, h, l, true, true) ==
                    stage_weights(m, FG_MODE_FULL, h, l, false, true));
        assert_true(stage_weights(m, FG_MODE_FULL, h, l, false, true) -
                        stage_weights(m, FG_MODE_FULL, h, l, false, false) >= 4 * matrix);
        assert_true(stage_weights(m, FG_MODE_SERVE, h, l, false, true) -
                        stage_weights(m, FG_MODE_SERVE, h, l, false, false) >= 2 * matrix);
        fg_model_free(m);
    }
}

/* Everything an estimate reports but its lines. */
static void assert_same_totals(const struct fg_estimate *a, const struct fg_estimate *b)
{
    assert_memory_equal(&a->b, &b->b, sizeof a->b);
    assert_true(a->static_bytes == b->static_bytes && a->per_sample_bytes == b->per_sample_bytes);
    assert_true(a->total_bytes == b->total_bytes && a->step_bytes == b->step_bytes);
    assert_true(a->trainable_params == b->trainable_params &&
                a->adapter_params == b->adapter_params);
    assert_true(a->act_per_token_layer_max == b->act_per_token_layer_max);
}

static uint64_t draw_state = 0x2545f4914f6cdd1dull;
static uint64_t draw(uint64_t n)
{
    draw_state ^= draw_state << 13;
    draw_state ^= draw_state >> 7;
    draw_state ^= draw_state << 17;
    return draw_state % n;
}

/* A job as the planner or a user could set it: any mode and precision, parallel sizes,
 * a pipeline stage with its sides, LoRA targets. */
static void random_layout_job(struct fg_job *j, uint32_t layers)
{
    static const uint32_t sizes[] = {1, 1, 2, 4, 8, 3};
    static const char *const lists[] = {"q,v", "gate,up,down", "in_proj,o", "none_such"};
    fg_job_defaults(j, (enum fg_mode)draw(4));
    j->precision = (enum fg_precision)draw(4);
    j->optimizer = (enum fg_optimizer)draw(4);
    j->seq_len = draw(3) ? 0 : 1 + draw(16384);
    j->batch = 1 + draw(4);
    j->grad_ckpt = draw(2);
    j->zero = (uint32_t)draw(4);
    j->dp = sizes[draw(6)];
    j->tp = sizes[draw(6)];
    j->ep = sizes[draw(6)];
    j->unsharded_copy = draw(4) == 0;
    if (j->mode == FG_MODE_QLORA || (j->mode == FG_MODE_SERVE && draw(3) == 0))
        j->quant = (enum fg_quant)(1 + draw(3));
    j->lora_targets = (enum fg_lora_targets)draw(4);
    if (j->lora_targets == FG_LORA_LIST)
        strcpy(j->lora_list, lists[draw(4)]);
    if (draw(2) && layers) {
        j->layer_first = (uint32_t)draw(layers);
        j->layer_last = j->layer_first + 1 + (uint32_t)draw(layers - j->layer_first);
        j->stage_embed = draw(2);
        j->stage_head = draw(2);
        j->inflight = 1 + (uint32_t)draw(8);
    }
    /* what the frameworks keep (after the draws above, which stay as they were) */
    j->attention = draw(3) ? FG_ATTN_SDPA : FG_ATTN_EAGER;
    j->kbit_prepared = draw(3) == 0;
    j->bnb_keeps_input = draw(2);
    j->bnb_compute = (enum fg_bnb_compute)draw(2);
    j->lora_dropout = draw(2) ? 0.05f : 0;
    j->lora_base_dtype = draw(2);
    j->lora_fused_qkv = draw(2);
    j->attn_dropout = draw(3) ? -1 : 0.1f;
    j->hidden_dropout = draw(3) ? -1 : 0;
}

/* A planner's part sets are keyed on what a block's part reads: two jobs that differ in one
 * of the framework fields alone must not share a set (each is checked against the plain
 * estimate after the base job filled the set). */
static void parts_should_tell_apart_jobs_that_differ_in_what_the_framework_keeps(void **s)
{
    (void)s;
    static const char *const models[] = {BERT_BASE, LLAMA2_7B};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        struct fg_model *m = load(models[i]);
        for (int f = 0; f < 9; f++) {
            struct fg__parts *parts = fg__parts_new();
            assert_non_null(parts);
            struct fg_job base, j;
            fg_job_defaults(&base, FG_MODE_QLORA);
            base.seq_len = 512;
            base.attention = FG_ATTN_EAGER;
            base.bnb_keeps_input = true;
            base.lora_dropout = 0.05f;
            static struct fg_estimate a, b;
            assert_int_equal(fg__memory_estimate_parts(m, &base, &a, parts, NULL), 0);
            j = base;
            switch (f) {
            case 0: j.kbit_prepared = true; break;
            case 1: j.bnb_keeps_input = false; break;
            case 2: j.bnb_compute = FG_BNB_FP32; break;
            case 3: j.lora_dropout = 0; break;
            case 4: j.lora_base_dtype = true; break;
            case 5: j.lora_fused_qkv = true; break;
            case 6: j.attn_dropout = 0; break;
            case 7: j.hidden_dropout = 0; break;
            default: j.attention = FG_ATTN_SDPA; break;
            }
            assert_int_equal(fg__memory_estimate_parts(m, &j, &a, parts, NULL), 0);
            assert_int_equal(fg_memory_estimate_totals(m, &j, &b, NULL), 0);
            assert_same_totals(&a, &b);
            fg__parts_free(parts);
        }
        fg_model_free(m);
    }
}

/* The segment walk (runs of equal blocks folded at once, blocks counted once) and the part
 * sets a planner keeps across estimates must give what the node-by-node walk gives. */
static void estimate_should_be_the_same_by_segments_parts_and_nodes(void **state)
{
    (void)state;
    DIR *d = opendir("tests/fixtures/models");
    assert_non_null(d);
    struct dirent *de;
    static struct fg_estimate by_segs, by_nodes, by_parts;
    long compared = 0;
    while ((de = readdir(d))) {
        if (!strstr(de->d_name, "--"))
            continue;
        char dir[512];
        snprintf(dir, sizeof dir, "tests/fixtures/models/%s", de->d_name);
        struct fg_model *m = load_fixture(dir);
        if (!m)
            continue;
        struct fg__parts *parts = fg__parts_new();
        assert_non_null(parts);
        for (int k = 0; k < 60; k++) {
            struct fg_job j;
            random_layout_job(&j, fg_model_main_layers(m));
            struct fg_err e1 = {0}, e2 = {0}, e3 = {0};
            int r1 = fg_memory_estimate(m, &j, &by_segs, &e1);
            int r3 = fg__memory_estimate_parts(m, &j, &by_parts, parts, &e3);
            struct fg_seg *segs = m->segs;
            m->segs = NULL;
            int r2 = fg_memory_estimate(m, &j, &by_nodes, &e2);
            m->segs = segs;
            assert_int_equal(r1, r2);
            assert_int_equal(r1, r3);
            if (r1)
                continue;
            assert_same_totals(&by_segs, &by_nodes);
            assert_same_totals(&by_segs, &by_parts);
            assert_int_equal(by_segs.n_lines, by_nodes.n_lines);
            assert_memory_equal(by_segs.lines, by_nodes.lines,
                                by_segs.n_lines * sizeof by_segs.lines[0]);
            compared++;
        }
        fg__parts_free(parts);
        fg_model_free(m);
    }
    closedir(d);
    print_message("%ld estimates the same three ways\n", compared);
    assert_true(compared > 3000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(estimate_should_be_the_same_by_segments_parts_and_nodes),
        cmocka_unit_test(parts_should_tell_apart_jobs_that_differ_in_what_the_framework_keeps),
        cmocka_unit_test(fused_adamw_should_drop_only_the_step_temporary),
        cmocka_unit_test(tied_head_should_cost_nothing_beside_the_embedding_even_when_stored),
        cmocka_unit_test(tied_head_should_be_copied_onto_a_last_stage_without_the_embedding),
        cmocka_unit_test(estimate_should_match_seed_000_nemotron_within_10pct),
        cmocka_unit_test(estimate_should_match_seed_004_nomic_within_10pct),
        cmocka_unit_test(estimate_should_be_the_larger_of_backward_and_step_phases),
        cmocka_unit_test(estimate_should_shrink_with_grad_ckpt_lora_qlora_and_zero),
        cmocka_unit_test(zero_should_shard_experts_only_over_the_expert_data_parallel_group),
        cmocka_unit_test(estimate_should_reject_bad_jobs_clearly),
        cmocka_unit_test(serve_should_count_gqa_kv_and_windows),
        cmocka_unit_test(serve_should_hold_one_nodes_prefill_working_set),
        cmocka_unit_test(moe_lora_should_keep_the_rebuilt_experts_where_peft_wraps_them),
        cmocka_unit_test(falcon_should_keep_its_attention_scores_where_llama_keeps_none),
        cmocka_unit_test(eager_attention_should_keep_the_scores_of_every_block),
        cmocka_unit_test(unsharded_copy_should_add_the_whole_bf16_weights_beside_a_zero3_shard),
        cmocka_unit_test(unsharded_copy_should_hold_through_a_full_fine_tunes_step_phase),
        cmocka_unit_test(unsharded_copy_should_change_nothing_without_weight_sharding),
        cmocka_unit_test(plan_should_price_the_copy_into_the_layouts_that_shard_weights),
        cmocka_unit_test(plan_should_keep_the_smallest_count_of_a_full_fine_tune_with_the_copy),
        cmocka_unit_test(kbit_prepared_should_keep_the_unquantized_params_and_activations_in_fp32),
        cmocka_unit_test(bnb_keeps_input_should_keep_fp32_copies_only_where_the_linear_upcasts),
        cmocka_unit_test(frozen_linears_should_keep_no_input_of_their_own),
        cmocka_unit_test(lora_adapters_should_keep_their_own_input_copies),
        cmocka_unit_test(chunked_loss_should_keep_what_each_framework_keeps),
        cmocka_unit_test(expanded_kv_should_keep_the_fused_output_or_the_copies),
        cmocka_unit_test(serving_should_count_the_prefills_dequantized_copies),
        cmocka_unit_test(eager_scores_should_follow_the_compute_dtype_and_attention_dropout),
        cmocka_unit_test(eager_attention_should_keep_no_kernel_output_or_log_sum_exp),
        cmocka_unit_test(hidden_dropout_should_keep_one_mask_per_residual_branch),
        cmocka_unit_test(fsdp_should_shard_the_adapters_and_gather_a_quantized_base_as_stored),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
