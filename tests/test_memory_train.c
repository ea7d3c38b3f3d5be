/*
 * test_memory_train.c - the training peaks beside the two phases (engine/memory/train_buffers.c,
 * train_phases.c and the terms the other stages / memory_node.c read from the job for them): gradient accumulation,
 * Megatron's persistent gradient buffer and its dtypes, DDP's buckets, DeepSpeed ZeRO's
 * bucket and fp32 partition, offload under LoRA, the fused losses, activation offloading,
 * Transformer Engine's activations with and without sequence parallel, LoRA on expert
 * tensors.  Each figure is the rule's own arithmetic on a real config.json.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support.h"
#include <string.h>

#include "plan/fit.h"
#include "job/jobspec.h"
#include "memory/memory.h"
#include "model/model.h"

#define LLAMA32_1B "tests/fixtures/models/meta-llama--Llama-3.2-1B-Instruct"
#define LLAMA8B "tests/fixtures/models/meta-llama--Llama-3.1-8B"
#define LLAMA2_7B "tests/fixtures/models/meta-llama--Llama-2-7b-hf"
#define BLOOM7B "tests/fixtures/models/bigscience--bloom-7b1"
#define GPTOSS20B "tests/fixtures/models/openai--gpt-oss-20b"

static struct fg_estimate run(const struct fg_model *m, const struct fg_job *j)
{
    struct fg_estimate e;
    struct fg_err err = {0};
    if (fg_memory_estimate(m, j, &e, &err))
        fail_msg("estimate: %s", err.detail);
    return e;
}

/* The job as the CLI builds it: options by name, then the framework's defaults. */
static struct fg_job spec_job(const char *const *kv)
{
    struct fg_jobspec s;
    struct fg_err err = {0};
    fg_jobspec_init(&s, NULL);
    for (; kv[0]; kv += 2)
        if (fg_jobspec_set(&s, (unsigned)fg_jobopt_find(kv[0]), kv[1], &err))
            fail_msg("--%s %s: %s", kv[0], kv[1], err.detail);
    if (fg_jobspec_finish(&s, &err))
        fail_msg("finish: %s", err.detail);
    return s.job;
}

static uint64_t line_by_source(const struct fg_estimate *e, const char *source)
{
    uint64_t b = 0;
    for (size_t i = 0; i < e->n_lines; i++)
        if (!strcmp(e->lines[i].source, source))
            b += e->lines[i].bytes;
    return b;
}

static void grad_accum_should_hold_the_gradients_beside_the_activations(void **state)
{
    (void)state;
    struct fg_model *m = load(LLAMA32_1B);
    struct fg_job j;
    fg_job_defaults(&j, FG_MODE_FULL);
    j.seq_len = 2048;
    j.batch = 4;
    struct fg_estimate one = run(m, &j);
    j.grad_accum = 8;
    struct fg_estimate acc = run(m, &j);
    /* the forward / backward phase gains exactly the gradients; the step is unchanged */
    assert_true(one.b.gradients > 0);
    assert_int_equal(acc.static_bytes, one.static_bytes + one.b.gradients);
    assert_int_equal(acc.step_bytes, one.step_bytes);
    assert_true(one.static_bytes + 4 * one.per_sample_bytes > one.step_bytes);
    assert_int_equal(acc.total_bytes, one.total_bytes + one.b.gradients);
    assert_int_equal(one.accum_bytes, one.b.gradients);
    assert_int_equal(acc.accum_bytes, 0);
    assert_true(line_by_source(&acc, "transformers Trainer gradient accumulation") ==
                acc.b.gradients);
    /* a smaller micro-batch keeping the batch by accumulation is held to the same peak */
    assert_int_equal(fg_estimate_accum_at(&one, 2),
                     one.static_bytes + one.b.gradients + 2 * one.per_sample_bytes);
    assert_int_equal(fg_estimate_accum_at(&one, 4), one.total_bytes);
    /* LoRA's adapter gradients are static already: accumulation adds nothing */
    fg_job_defaults(&j, FG_MODE_LORA);
    struct fg_estimate l1 = run(m, &j);
    j.grad_accum = 8;
    struct fg_estimate l8 = run(m, &j);
    assert_int_equal(l8.total_bytes, l1.total_bytes);
    assert_int_equal(l1.accum_bytes, 0);
    fg_model_free(m);
}

static void max_batch_should_count_the_gradients_of_the_accumulation_it_implies(void **state)
{
    (void)state;
    struct fg_model *m = load(LLAMA32_1B);
    struct fg_job j;
    fg_job_defaults(&j, FG_MODE_FULL);
    j.batch = 8;
    struct fg_estimate e = run(m, &j);
    /* a card that takes micro-batch 4 without the gradients but not with them */
    uint64_t usable = (uint64_t)((double)(e.static_bytes + 4 * e.per_sample_bytes) * 1.15) + 1;
    uint64_t b = fg_fit_max_batch(&e, usable, 1.15);
    assert_true(b < 4);
    assert_true((double)fg_estimate_accum_at(&e, b) * 1.15 <= (double)usable);
    assert_true(b == 0 || (double)fg_estimate_accum_at(&e, b + 1) * 1.15 > (double)usable);
    fg_model_free(m);
}

static void megatron_should_keep_its_gradient_buffer_and_its_dtypes(void **state)
{
    (void)state;
    struct fg_model *m = load(LLAMA8B);
    const char *plain[] = {"framework", "megatron", "seq-len", "2048", NULL};
    struct fg_job j = spec_job(plain);
    assert_true(j.grads_persist && j.te_act && !j.sp);
    struct fg_estimate e = run(m, &j);
    uint64_t params = e.trainable_params;
    /* param_and_grad_buffer: fp32 main_grad alive in both phases, whatever accumulates */
    assert_int_equal(e.b.gradients, 4 * params);
    assert_true(e.static_bytes >= e.b.weights + e.b.gradients + e.b.optimizer);
    assert_int_equal(e.accum_bytes, 0);
    const char *bf16[] = {"framework", "megatron", "seq-len", "2048", "grad-reduce-dtype", "bf16",
                          "optimizer-state-dtype", "bf16", NULL};
    struct fg_job k = spec_job(bf16);
    struct fg_estimate b = run(m, &k);
    assert_int_equal(b.b.gradients, 2 * params);
    /* fp32 master 4 B + Adam moments 2 + 2 B, against 4 + 4 + 4 */
    assert_int_equal(b.b.optimizer, 8 * params);
    assert_int_equal(e.b.optimizer, 12 * params);
    /* Megatron-Core's options only where Megatron-Core runs */
    struct fg_jobspec s;
    struct fg_err err = {0};
    fg_jobspec_init(&s, NULL);
    assert_int_equal(fg_jobspec_set(&s, FG_JOBOPT_SP, "", &err), 0);
    assert_int_equal(fg_jobspec_finish(&s, &err), FG_E_INVAL);
    assert_non_null(strstr(err.detail, "--sp is Megatron-Core's"));
    fg_model_free(m);
}

static void ddp_should_keep_a_second_gradient_copy_in_its_buckets(void **state)
{
    (void)state;
    struct fg_model *m = load(LLAMA32_1B);
    const char *kv[] = {"framework", "transformers", NULL};
    struct fg_job j = spec_job(kv);
    assert_true(j.ddp_buckets);
    const char *src = "torch DDP reducer, gradient_as_bucket_view=False";
    struct fg_estimate one = run(m, &j);
    assert_int_equal(line_by_source(&one, src), 0);
    j.dp = 4;
    struct fg_estimate ddp = run(m, &j);
    assert_int_equal(line_by_source(&ddp, src), ddp.b.gradients);
    assert_int_equal(ddp.static_bytes, one.static_bytes + ddp.b.gradients);
    assert_int_equal(ddp.step_bytes, one.step_bytes + ddp.b.gradients);
    j.zero = 1; /* ZeRO reduces through its own buckets */
    struct fg_estimate z = run(m, &j);
    assert_int_equal(line_by_source(&z, src), 0);
    fg_model_free(m);
}

static void deepspeed_should_hold_its_reduce_bucket_and_an_fp32_partition(void **state)
{
    (void)state;
    struct fg_model *m = load(LLAMA8B);
    const char *kv[] = {"framework", "deepspeed", "zero", "1", "dp", "8", NULL};
    struct fg_job j = spec_job(kv);
    j.dp = 8;
    assert_true(j.ds_buffers);
    struct fg_estimate e = run(m, &j);
    /* 5e8 bf16 elements; the step's fp32 copy of the rank's eighth of the gradients */
    assert_int_equal(line_by_source(&e, "DeepSpeed zero/config.py reduce_bucket_size"),
                     1000000000ull);
    assert_int_equal(line_by_source(&e, "DeepSpeed stage_1_and_2.py / stage3.py step"),
                     4 * (e.trainable_params / 8));
    j.zero = 3; /* two buckets; the partition capped at sub_group_size */
    j.dp = 2;
    e = run(m, &j);
    assert_int_equal(line_by_source(&e, "DeepSpeed zero/config.py reduce_bucket_size"),
                     2000000000ull);
    assert_int_equal(line_by_source(&e, "DeepSpeed stage_1_and_2.py / stage3.py step"),
                     4000000000ull);
    /* "auto" under transformers / accelerate: hidden x hidden elements, not 5e8 */
    j.ds_bucket = FG_DS_BUCKET_AUTO;
    e = run(m, &j);
    assert_int_equal(line_by_source(&e, "transformers integrations/deepspeed.py "
                                        "reduce_bucket_size auto"),
                     2 * 2 * m->hidden * m->hidden);
    fg_model_free(m);
}

static void offload_should_lower_a_lora_estimate_by_the_adapter_states(void **state)
{
    (void)state;
    struct fg_model *m = load(LLAMA8B);
    struct fg_job j;
    fg_job_defaults(&j, FG_MODE_LORA);
    j.zero = 1;
    struct fg_estimate gpu = run(m, &j);
    j.offload = FG_OFFLOAD_OPTIMIZER;
    struct fg_estimate cpu = run(m, &j);
    /* peft's fp32 adapters: AdamW's two fp32 states, 8 B each adapter parameter */
    assert_int_equal(gpu.total_bytes - cpu.total_bytes, 8 * gpu.adapter_params);
    j.offload = FG_OFFLOAD_PARAMS;
    j.zero = 3;
    struct fg_estimate all = run(m, &j);
    assert_int_equal(all.b.adapters, 0);
    fg_model_free(m);
}

static void fused_losses_should_keep_no_full_logits(void **state)
{
    (void)state;
    struct fg_model *m = load(LLAMA8B);
    struct fg_job j;
    fg_job_defaults(&j, FG_MODE_LORA);
    j.seq_len = 4096;
    struct fg_estimate plain = run(m, &j);
    uint64_t h = m->hidden, v = m->vocab, inc = (v + h - 1) / h;
    assert_int_equal(plain.b.logits, 12 * v * 4096);
    assert_int_equal(fg_loss_parse("cce", &j, NULL), 0);
    struct fg_estimate cce = run(m, &j);
    assert_int_equal(cce.b.logits, (2 * h + 4) * 4096);
    assert_int_equal(fg_loss_parse("liger", &j, NULL), 0);
    struct fg_estimate liger = run(m, &j);
    assert_int_equal(liger.b.logits, (2 * h + 4 + 2 * 2 * v / inc) * 4096);
    assert_int_equal(line_by_source(&liger, "Liger-Kernel fused_linear_cross_entropy.py"),
                     liger.b.logits); /* a frozen head: no weight gradient */
    /* a full fine-tune's head makes its weight gradient in the forward (fp32 under AMP) */
    fg_job_defaults(&j, FG_MODE_FULL);
    assert_int_equal(fg_loss_parse("liger", &j, NULL), 0);
    struct fg_estimate full = run(m, &j);
    assert_int_equal(line_by_source(&full, "Liger-Kernel fused_linear_cross_entropy.py") -
                         full.b.logits, 4 * v * h);
    assert_int_equal(fg_loss_parse("chunked", &j, NULL), 0);
    assert_true(j.chunked_ce && j.loss == FG_LOSS_DEFAULT);
    assert_string_equal(fg_loss_name(&j), "chunked");
    fg_model_free(m);
}

/* TRL SFT of Llama-3.1-8B, LoRA at 4096 tokens, dtype bfloat16: the logits line is TRL's
 * chunked NLL (memory/loss.c), not transformers' 6.3 GB of fp32 logits; TRL 1.6 still
 * computes the plain loss. */
static void trl_should_count_its_chunked_nll(void **state)
{
    (void)state;
    struct fg_model *m = load(LLAMA8B);
    static const char *const trl[] = {"framework", "trl", "mode", "lora", "seq-len", "4096",
                                      "precision", "bf16", NULL};
    struct fg_job j = spec_job(trl);
    assert_int_equal(j.loss, FG_LOSS_CHUNKED_NLL);
    struct fg_estimate e = run(m, &j);
    uint64_t h = m->hidden, v = m->vocab;
    assert_int_equal(e.b.logits, (2 * 2 * h + 16) * 4096);
    const char *src = "trl 1.9 sft_trainer.py _chunked_cross_entropy_loss";
    /* one 256-token chunk's four fp32 tensors and the bf16 head's fp32 copy, once */
    assert_int_equal(line_by_source(&e, src), e.b.logits + 4 * 256 * v * 4 + 4 * v * h);
    static const char *const old[] = {"framework", "trl@1.6", "mode", "lora", "seq-len", "4096",
                                      "precision", "bf16", NULL};
    struct fg_estimate o = run(m, (j = spec_job(old), &j));
    assert_int_equal(o.b.logits, 12 * v * 4096);
    assert_true(e.total_bytes + 3000000000ull < o.total_bytes);
    /* chunked_nll is SFTTrainer's: a DPO job's log-probs are its trainer row's */
    static const char *const dpo[] = {"framework", "trl", "mode", "dpo", NULL};
    assert_int_equal(spec_job(dpo).loss, FG_LOSS_DEFAULT);
    fg_model_free(m);
}

static void act_offload_should_keep_two_blocks_on_the_gpu(void **state)
{
    (void)state;
    struct fg_model *m = load(LLAMA8B);
    struct fg_job j;
    fg_job_defaults(&j, FG_MODE_LORA);
    struct fg_estimate kept = run(m, &j);
    j.act_offload = true;
    struct fg_estimate off = run(m, &j);
    uint64_t src = line_by_source(&off, "torchtune _activation_offloading.py OffloadActivations");
    /* the sides' bytes from the recompute line: layers block inputs (bf16), one block, sides */
    j.act_offload = false;
    j.grad_ckpt = true;
    struct fg_estimate ck = run(m, &j);
    uint64_t max = kept.act_per_token_layer_max, layers = fg_model_main_layers(m);
    uint64_t other = line_by_source(&ck, "Korthikanti 2022, full recompute") / 2048 -
                     layers * 2 * m->hidden - max;
    assert_int_equal(src, (2 * max + other) * 2048);
    assert_true(off.b.activations * 8 < kept.b.activations);
    fg_model_free(m);
}

/* bloom-7b1 is Megatron's own block (MHA, a 4h GELU MLP, LayerNorms): the per-layer bytes are
 * theoretical_memory_usage.py's sbh(10 + 24/t) without sequence parallel and sbh(34/t) with it. */
static void te_activations_should_follow_megatrons_formula(void **state)
{
    (void)state;
    struct fg_model *m = load(BLOOM7B);
    const char *kv[] = {"framework", "megatron", "tp", "8", NULL};
    struct fg_job j = spec_job(kv);
    j.tp = 8;
    uint64_t h = m->hidden;
    struct fg_estimate e = run(m, &j);
    assert_int_equal(e.act_per_token_layer_max, 10 * h + 24 * h / 8);
    j.sp = true;
    e = run(m, &j);
    assert_int_equal(e.act_per_token_layer_max, 34 * h / 8);
    fg_model_free(m);
    /* a gated MLP's fc1 output is 2 I wide (mlp.py gated_linear_unit): Llama-2-7B, MHA */
    m = load(LLAMA2_7B);
    j.sp = false;
    e = run(m, &j);
    h = m->hidden;
    assert_int_equal(e.act_per_token_layer_max, 10 * h + 8 * h / 8 + 6ull * 11008 / 8);
    /* nemo's recipes turn sequence parallel on */
    const char *nemo[] = {"framework", "nemo", NULL};
    assert_true(spec_job(nemo).sp);
    fg_model_free(m);
}

static void lora_on_expert_tensors_should_adapt_each_fused_tensor_at_rank_r(void **state)
{
    (void)state;
    struct fg_model *m = load(GPTOSS20B);
    struct fg_job j;
    fg_job_defaults(&j, FG_MODE_LORA);
    struct fg_estimate base = run(m, &j);
    assert_int_equal(fg_lora_targets_parse("all-linear,experts", &j, NULL), 0);
    struct fg_estimate with = run(m, &j);
    /* peft ParamWrapper: r E (h + 2 I) over gate_up_proj and r E (I + h) over down_proj */
    uint64_t r = 16, h = m->hidden, e = m->experts, inter = 0;
    for (size_t i = 0; i < m->n_nodes; i++)
        if (m->nodes[i].kind == FG_NODE_MOE)
            inter = m->nodes[i].inter;
    uint64_t layers = fg_model_main_layers(m);
    assert_int_equal(with.adapter_params - base.adapter_params,
                     layers * r * e * ((h + 2 * inter) + (inter + h)));
    assert_true(with.b.overhead > base.b.overhead); /* W + BA rebuilt each forward */
    fg_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(grad_accum_should_hold_the_gradients_beside_the_activations),
        cmocka_unit_test(max_batch_should_count_the_gradients_of_the_accumulation_it_implies),
        cmocka_unit_test(megatron_should_keep_its_gradient_buffer_and_its_dtypes),
        cmocka_unit_test(ddp_should_keep_a_second_gradient_copy_in_its_buckets),
        cmocka_unit_test(deepspeed_should_hold_its_reduce_bucket_and_an_fp32_partition),
        cmocka_unit_test(offload_should_lower_a_lora_estimate_by_the_adapter_states),
        cmocka_unit_test(fused_losses_should_keep_no_full_logits),
        cmocka_unit_test(trl_should_count_its_chunked_nll),
        cmocka_unit_test(act_offload_should_keep_two_blocks_on_the_gpu),
        cmocka_unit_test(te_activations_should_follow_megatrons_formula),
        cmocka_unit_test(lora_on_expert_tensors_should_adapt_each_fused_tensor_at_rank_r),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
