/*
 * test_serve_engine.c - vLLM's start-up sizing (engine/memory/serve_engine.h), on the
 * numbers its code uses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <math.h>

#include "memory/serve_engine.h"

/* get_batch_defaults: an H100 (>= 70 GiB) takes the large row, an A100 80GB and an L4 the
 * small one. */
static void fg_vllm_sched_defaults_should_follow_the_card_class(void **state)
{
    (void)state;
    struct fg_vllm_sched s;
    fg_vllm_sched_defaults(79ull << 30, false, &s);
    assert_int_equal(s.max_num_seqs, 1024);
    assert_int_equal(s.batched_tokens, 8192);
    fg_vllm_sched_defaults(79ull << 30, true, &s);
    assert_int_equal(s.max_num_seqs, 256);
    assert_int_equal(s.batched_tokens, 2048);
    fg_vllm_sched_defaults(22ull << 30, false, &s);
    assert_int_equal(s.max_num_seqs, 256);
}

/* Capture sizes 1, 2, 4, 8 .. 248, 256 .. 512: 51 PIECEWISE graphs and as many FULL decode
 * graphs under 1024 sequences (35 under 256); the estimate is the 512-token working set
 * twice (the warm-up's cached blocks and the graph pool) and 1 MiB for each further graph:
 * 50 PIECEWISE and 51 FULL. */
static void fg_vllm_profile_should_count_the_capture_sizes(void **state)
{
    (void)state;
    struct fg_vllm_in in = {.sched = {1024, 8192}, .act_per_token = 1000.0, .hidden = 4096,
                            .vocab = 128256};
    struct fg_vllm_profile p;
    fg_vllm_profile(&in, &p);
    assert_int_equal(p.capture_max, 512);
    assert_int_equal(p.capture_sizes, 51);
    assert_int_equal(p.full_sizes, 51);
    assert_int_equal(p.first_capture, 2 * 512u * 1000);
    assert_int_equal(p.graphs, 2 * 512u * 1000 + 101ull * (1 << 20));
    in.sched.max_num_seqs = 256;
    fg_vllm_profile(&in, &p);
    assert_int_equal(p.capture_max, 512);
    assert_int_equal(p.full_sizes, 35);
    assert_int_equal(p.graphs, 2 * 512u * 1000 + (50ull + 35) * (1 << 20));
    in.eager = true;
    fg_vllm_profile(&in, &p);
    assert_int_equal(p.graphs, 0);
}

/* The v1 runner's dummy sampler run: 27 B per logit over min(max_num_seqs, batched_tokens) rows, and
 * the profile's peak is the larger of it and the dummy forward. */
static void fg_vllm_profile_should_size_the_sampler_run(void **state)
{
    (void)state;
    struct fg_vllm_in in = {.sched = {1024, 8192}, .act_per_token = 100.0, .hidden = 2880,
                            .vocab = 201088};
    struct fg_vllm_profile p;
    fg_vllm_profile(&in, &p);
    assert_int_equal(p.sample_rows, 1024);
    assert_int_equal(p.sampler, 1024ull * (201088 * 27 + 2 * 2880));
    assert_int_equal(p.forward, 819200);
    assert_int_equal(p.peak, p.sampler);
    in.sched = (struct fg_vllm_sched){256, 128};
    in.act_per_token = 1e7;
    fg_vllm_profile(&in, &p);
    assert_int_equal(p.sample_rows, 128);
    assert_int_equal(p.peak, p.forward);
}

/* The v2 runner (every dense model from 0.25) profiles its sampler with requests that ask
 * for no top-k or top-p: the logits and their fp32 copy, 6 B per logit; MoE and hybrid
 * models stay on the v1 runner and its 27 B. */
static void fg_vllm_profile_should_size_the_v2_runners_sampler(void **state)
{
    (void)state;
    struct fg_vllm_in in = {.sched = {1024, 8192}, .act_per_token = 100.0, .hidden = 4096,
                            .vocab = 128256, .v2_runner = true};
    struct fg_vllm_profile p;
    fg_vllm_profile(&in, &p);
    assert_int_equal(p.sampler, 1024ull * (128256 * 6 + 2 * 4096));
    assert_true(fg_vllm_v2_runner(false, false, false));
    assert_false(fg_vllm_v2_runner(true, false, false));
    assert_false(fg_vllm_v2_runner(false, true, false));
    assert_false(fg_vllm_v2_runner(false, false, true));
}

/* _check_enough_kv_cache_memory: nothing left, less than one sequence, enough. */
static void fg_vllm_kv_check_should_refuse_as_vllm_does(void **state)
{
    (void)state;
    assert_int_equal(fg_vllm_kv_check(-1, 10), FG_VLLM_NO_CACHE_MEMORY);
    assert_int_equal(fg_vllm_kv_check(0, 0), FG_VLLM_NO_CACHE_MEMORY);
    assert_int_equal(fg_vllm_kv_check(9, 10), FG_VLLM_MAX_LEN);
    assert_int_equal(fg_vllm_kv_check(10, 10), FG_VLLM_STARTS);
}

static void fg_vllm_refusal_text_should_quote_vllm(void **state)
{
    (void)state;
    char buf[400];
    fg_vllm_refusal_text(FG_VLLM_NO_CACHE_MEMORY, -(int64_t)(2.14 * (1 << 30)), 1, 131072, 0,
                         buf, sizeof buf);
    assert_non_null(strstr(buf, "Available KV cache memory: -2.14 GiB"));
    assert_non_null(strstr(buf, "No available memory for the cache blocks"));
    fg_vllm_refusal_text(FG_VLLM_MAX_LEN, 3ll << 30, 9ull << 29, 131072, 87381, buf,
                         sizeof buf);
    assert_non_null(strstr(buf, "max seq len (131072), (4.50 GiB KV cache is needed, which is "
                                "larger than the available KV cache memory (3.00 GiB)"));
    assert_non_null(strstr(buf, "estimated maximum model length is 87381"));
    fg_vllm_refusal_text(FG_VLLM_STARTS, 1, 1, 1, 1, buf, sizeof buf);
    assert_string_equal(buf, "");
}

/* memory_hook.py on an H100 80GB (81559 MiB) at TP 1: chunked prefill 8192, decode max_bs
 * 256, 58 prefill graph sizes up to 8192 at 8 MiB; the reserve 13440 + 464 MiB is over the
 * 10 GiB floor, so the graphs come out of the KV pool's share: 0.830 where it was 0.835. */
static void fg_sglang_budget_should_reserve_the_prefill_graphs(void **state)
{
    (void)state;
    struct fg_sglang_budget b;
    fg_sglang_budget(&(struct fg_sglang_in){.card_mib = 81559, .tp = 1}, &b);
    assert_int_equal(b.chunk, 8192);
    assert_int_equal(b.decode_bs, 256);
    assert_int_equal(b.prefill_sizes, 58);
    assert_true(b.prefill_graph_mib == 464.0);
    assert_true(b.reserved_mib == 512 + 1.5 * 8192 + 128 + 512 + 464);
    assert_true(fabs(b.fraction - 0.830) < 1e-9);
    /* an MLA model: graphs up to 2048 tokens, a flat 1.5 GiB */
    fg_sglang_budget(&(struct fg_sglang_in){.card_mib = 81559, .tp = 1, .mla = true}, &b);
    assert_int_equal(b.prefill_sizes, 42);
    assert_true(b.prefill_graph_mib == 1536.0);
    assert_true(b.reserved_mib == 13440 + 1536);
}

/* An RTX 4090 (24564 MiB): chunked prefill 4096 and decode max_bs 48 in this release (2048
 * and 24 before); no floor below 60 GiB.  An H200 at TP 8: 8192 / 512, 1 GiB for TP,
 * 15312 MiB in all, over the floor. */
static void fg_sglang_budget_should_follow_the_card_rows(void **state)
{
    (void)state;
    struct fg_sglang_budget b;
    fg_sglang_budget(&(struct fg_sglang_in){.card_mib = 24564, .tp = 1}, &b);
    assert_int_equal(b.chunk, 4096);
    assert_int_equal(b.decode_bs, 48);
    assert_int_equal(b.prefill_sizes, 50);
    assert_true(b.reserved_mib == 512 + 1.5 * 4096 + 128 + 96 + 400);
    fg_sglang_budget(&(struct fg_sglang_in){.card_mib = 143771, .tp = 8}, &b);
    assert_int_equal(b.decode_bs, 512);
    assert_true(b.reserved_mib == 512 + 12288 + 1024 + 1024 + 464);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fg_vllm_sched_defaults_should_follow_the_card_class),
        cmocka_unit_test(fg_vllm_profile_should_count_the_capture_sizes),
        cmocka_unit_test(fg_vllm_profile_should_size_the_sampler_run),
        cmocka_unit_test(fg_vllm_profile_should_size_the_v2_runners_sampler),
        cmocka_unit_test(fg_vllm_kv_check_should_refuse_as_vllm_does),
        cmocka_unit_test(fg_vllm_refusal_text_should_quote_vllm),
        cmocka_unit_test(fg_sglang_budget_should_reserve_the_prefill_graphs),
        cmocka_unit_test(fg_sglang_budget_should_follow_the_card_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
