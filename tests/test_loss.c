/*
 * test_loss.c - engine/memory/loss.c: what each stack's loss keeps, per token and once per
 * step, on Llama-3.1-8B's head (vocab 128256, hidden 4096), each figure the comment's
 * arithmetic in loss.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "memory/loss.h"

enum { V = 128256, H = 4096 };

static struct fg_loss_bytes of(enum fg_loss kind, unsigned head_bytes, bool autocast,
                               uint32_t tp, uint64_t tokens)
{
    struct fg_loss_in in = {.kind = kind, .c = 2, .head_bytes = head_bytes,
                            .autocast = autocast, .vocab = V, .hidden = H, .tp = tp,
                            .tokens = tokens};
    struct fg_loss_bytes b;
    fg_loss_bytes(&in, &b);
    return b;
}

/* TRL 1.9's chunked_nll: the reordered hidden states and their gradient per token, one
 * 256-token chunk's four fp32 [256, V] tensors and the head's fp32 copy once: about 0.07 GB
 * + 2.6 GB at 4096 tokens where transformers' loss keeps 6.3 GB. */
static void loss_bytes_should_keep_trls_chunks_not_the_logits(void **state)
{
    (void)state;
    struct fg_loss_bytes plain = of(FG_LOSS_DEFAULT, 2, false, 1, 4096);
    assert_int_equal(plain.per_tok, 12ull * V);
    struct fg_loss_bytes trl = of(FG_LOSS_CHUNKED_NLL, 2, false, 1, 4096);
    assert_string_equal(trl.name, "TRL chunked_nll");
    assert_int_equal(trl.per_tok, 2 * 2 * H + 16);
    assert_int_equal(trl.work, 4ull * 256 * V * 4 + 4ull * V * H);
    assert_true(trl.per_tok * 4096 + trl.work < plain.per_tok * 4096 / 2);
    /* an fp32 head makes no copy; under autocast the saved copy is the bf16 cast */
    assert_int_equal(of(FG_LOSS_CHUNKED_NLL, 4, false, 1, 4096).work, 4ull * 256 * V * 4);
    assert_int_equal(of(FG_LOSS_CHUNKED_NLL, 2, true, 1, 4096).work, 6ull * V * H);
    /* the chunk does not grow with the tokens */
    assert_int_equal(of(FG_LOSS_CHUNKED_NLL, 2, false, 1, 65536).work, trl.work);
}

/* Megatron's vocab-parallel CE keeps one fp32 exp_logits per entry over TP, and at the
 * start of backward its cast to the logits' dtype: 6 B per entry / TP, not 12. */
static void loss_bytes_should_keep_one_fp32_exp_logits_for_megatron(void **state)
{
    (void)state;
    struct fg_loss_bytes b = of(FG_LOSS_VOCAB_PARALLEL, 2, false, 2, 8192);
    assert_int_equal(b.per_tok, 6ull * (V / 2) + 9);
    assert_int_equal(b.work, 0);
    assert_int_equal(of(FG_LOSS_DEFAULT, 2, false, 2, 8192).per_tok, 12ull * V / 2);
}

/* torchtitan's ChunkedLossWrapper: the chunk copies and the fp32 gradient accumulator, and
 * one of 8 chunks' CE at a time (loss_parallel: V / TP). */
static void loss_bytes_should_spread_titans_ce_over_its_eight_chunks(void **state)
{
    (void)state;
    struct fg_loss_bytes b = of(FG_LOSS_CHUNKED_WRAPPER, 2, false, 4, 8192);
    assert_int_equal(b.per_tok, 6ull * H + 12ull * (V / 4) / 8);
}

/* unsloth_fused_ce_loss: one chunk while the batch's fp32 logits fit 4 GiB (per token),
 * else chunks of a multiple of 4 (once); the head input's gradient per token either way. */
static void loss_bytes_should_cap_unsloths_chunks_at_four_gib(void **state)
{
    (void)state;
    struct fg_loss_bytes small = of(FG_LOSS_UNSLOTH, 2, false, 1, 4096);
    assert_int_equal(small.per_tok, 2 * H + 4ull * V);
    assert_int_equal(small.work, 0);
    /* 16384 tokens: 8.4 GB of fp32 logits, 2 chunks needed, 4 made */
    struct fg_loss_bytes big = of(FG_LOSS_UNSLOTH, 2, false, 1, 16384);
    assert_int_equal(big.per_tok, 2 * H);
    assert_int_equal(big.work, 4ull * V * 4096);
}

/* torchtune's LinearCrossEntropyLoss keeps each chunk's fp32 log-softmax only, and one of its
 * 8 chunks' gradient in backward: 4.75 V per token, not CEWithChunkedOutputLoss's 6 V. */
static void loss_bytes_should_keep_torchtunes_log_softmax_only(void **state)
{
    (void)state;
    struct fg_loss_bytes b = of(FG_LOSS_LINEAR_CE, 2, false, 1, 2048);
    assert_int_equal(b.per_tok, 2 * H + 16 + 4ull * V + 6ull * V / 8);
    struct fg_loss_in in = {.chunked = true, .kept = FG_CE_FP32, .c = 2, .vocab = V,
                            .hidden = H, .tp = 1};
    struct fg_loss_bytes old;
    fg_loss_bytes(&in, &old);
    assert_int_equal(old.per_tok, 6ull * V);
    assert_true(b.per_tok < old.per_tok);
}

/* The fused kernels of before keep their figures (test_memory_train.c checks the lines). */
static void loss_bytes_should_keep_liger_and_cce_as_they_were(void **state)
{
    (void)state;
    uint64_t inc = (V + H - 1) / H;
    assert_int_equal(of(FG_LOSS_LIGER, 2, false, 1, 4096).per_tok, 2 * H + 4 + 4ull * V / inc);
    assert_int_equal(of(FG_LOSS_CCE, 2, false, 1, 4096).per_tok, 2 * H + 4);
}

/* Only Liger has the fused DPO / GRPO forms TRL builds in place of selective_log_softmax;
 * every kind names its line. */
static void loss_fused_logprobs_should_be_ligers_alone(void **state)
{
    (void)state;
    assert_true(fg_loss_fused_logprobs(FG_LOSS_LIGER));
    static const enum fg_loss others[] = {FG_LOSS_DEFAULT, FG_LOSS_CCE, FG_LOSS_CHUNKED_NLL,
                                          FG_LOSS_VOCAB_PARALLEL, FG_LOSS_CHUNKED_WRAPPER,
                                          FG_LOSS_UNSLOTH, FG_LOSS_LINEAR_CE};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        assert_false(fg_loss_fused_logprobs(others[i]));
        struct fg_loss_bytes b = of(others[i], 2, false, 1, 4096);
        assert_non_null(b.name);
        assert_non_null(b.source);
    }
    assert_string_equal(of(FG_LOSS_CHUNKED_NLL, 2, false, 1, 4096).name, "TRL chunked_nll");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(loss_bytes_should_keep_trls_chunks_not_the_logits),
        cmocka_unit_test(loss_bytes_should_keep_one_fp32_exp_logits_for_megatron),
        cmocka_unit_test(loss_bytes_should_spread_titans_ce_over_its_eight_chunks),
        cmocka_unit_test(loss_bytes_should_cap_unsloths_chunks_at_four_gib),
        cmocka_unit_test(loss_bytes_should_keep_torchtunes_log_softmax_only),
        cmocka_unit_test(loss_bytes_should_keep_liger_and_cce_as_they_were),
        cmocka_unit_test(loss_fused_logprobs_should_be_ligers_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
