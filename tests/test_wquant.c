/*
 * test_wquant.c - quantization_config as a serving engine loads it (engine/source/wquant.c), and the
 * served weights it gives (engine/memory/serve.c fg__serve_estimate) on the real checkpoints' configs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "memory/memory.h"
#include "model/model.h"
#include "source/config.h"
#include "support.h"
#include "source/wquant.h"

#define M "tests/fixtures/models/"

static int read_text(const char *json, struct fg_wquant *q, struct fg_err *err)
{
    struct fg_config *doc = NULL;
    int rc = fg_config_parse(json, strlen(json), "test.json", &doc, err);
    if (!rc) {
        struct fg_cfg root = fg_config_root(doc);
        rc = fg_wquant_read(&root, q, err);
    }
    fg_config_free(doc);
    return rc;
}

static void wquant_read_should_give_each_schemes_bytes_with_its_scales(void **state)
{
    (void)state;
    struct fg_wquant q;
    struct fg_err err = {0};
    assert_int_equal(read_text("{\"hidden_size\": 8}", &q, &err), 0);
    assert_int_equal(q.method, FG_WQ_NONE);
    /* DeepSeek-V3 / R1: 1 B + one fp32 scale per 128 x 128 block */
    assert_int_equal(read_text("{\"quantization_config\": {\"quant_method\": \"fp8\", "
                               "\"weight_block_size\": [128, 128]}}", &q, &err), 0);
    assert_int_equal(q.method, FG_WQ_FP8);
    assert_true(fabs(q.bytes - (1 + 4.0 / 16384)) < 1e-12);
    /* gpt-oss: routed experts only, 0.5 B + an e8m0 scale per 32 */
    assert_int_equal(read_text("{\"quantization_config\": {\"quant_method\": \"mxfp4\"}}", &q,
                               &err), 0);
    assert_true(q.bytes == 0.5 + 1.0 / 32);
    assert_true(q.keep & FG_WQK_ATTN);
    assert_false(q.keep & FG_WQK_EXPERTS);
    /* GPTQ / AWQ int4 g128: 0.5 B + (fp16 scale + packed zero) / 128 */
    assert_int_equal(read_text("{\"quantization_config\": {\"quant_method\": \"gptq\", "
                               "\"bits\": 4, \"group_size\": 128}}", &q, &err), 0);
    assert_true(fabs(q.bytes - (0.5 + 2.5 / 128)) < 1e-12);
    assert_int_equal(read_text("{\"quantization_config\": {\"quant_method\": \"awq\", "
                               "\"bits\": 4, \"group_size\": 128, \"modules_to_not_convert\": "
                               "[\"model.layers.0.self_attn\"]}}", &q, &err), 0);
    assert_int_equal(q.method, FG_WQ_AWQ);
    assert_true(q.keep & FG_WQK_ATTN); /* one layer named: the class kept everywhere */
    /* compressed-tensors nvfp4 (llm-compressor): 0.5 B + an fp8 scale per 16 */
    assert_int_equal(read_text("{\"quantization_config\": {\"quant_method\": "
                               "\"compressed-tensors\", \"config_groups\": {\"group_0\": "
                               "{\"weights\": {\"num_bits\": 4, \"type\": \"float\", "
                               "\"strategy\": \"group\", \"group_size\": 16}}}, \"ignore\": "
                               "[\"lm_head\"]}}", &q, &err), 0);
    assert_true(q.bytes == 0.5 + 1.0 / 16);
    assert_int_equal(read_text("{\"quantization_config\": {\"quant_method\": \"modelopt\", "
                               "\"quant_algo\": \"NVFP4\", \"group_size\": 16}}", &q, &err), 0);
    assert_int_equal(q.method, FG_WQ_NVFP4);
    assert_int_equal(read_text("{\"quantization_config\": {\"quant_method\": \"bitsandbytes\", "
                               "\"load_in_4bit\": true}}", &q, &err), 0);
    assert_true(q.bytes == 0.5 + 4.0 / 64);
}

static void wquant_read_should_refuse_what_it_cannot_size_naming_the_key(void **state)
{
    (void)state;
    struct fg_wquant q;
    struct fg_err err = {0};
    assert_int_equal(read_text("{\"quantization_config\": {\"quant_method\": \"hqq\"}}", &q, &err),
                     FG_E_UNSUPPORTED);
    assert_non_null(strstr(err.detail, "quant_method 'hqq'"));
    assert_int_equal(read_text("{\"quantization_config\": {\"quant_method\": \"fp8\", "
                               "\"weight_block_size\": [128]}}", &q, &err), FG_E_RANGE);
    assert_non_null(strstr(err.detail, "weight_block_size"));
    assert_int_equal(read_text("{\"quantization_config\": {\"quant_method\": "
                               "\"compressed-tensors\"}}", &q, &err), FG_E_MISSING);
    assert_non_null(strstr(err.detail, "config_groups"));
    /* the model still loads, its weights in the checkpoint dtype, with a note */
    struct fg_config *doc = NULL;
    const char *cfg = "{\"model_type\": \"llama\", \"hidden_size\": 64, \"intermediate_size\": "
                      "128, \"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
                      "\"vocab_size\": 100, \"quantization_config\": {\"quant_method\": \"hqq\"}}";
    assert_int_equal(fg_config_parse(cfg, strlen(cfg), "t.json", &doc, &err), 0);
    struct fg_model *m = NULL;
    assert_int_equal(fg_model_from_config(doc, "t", &m, &err), 0);
    assert_int_equal(m->wq.method, FG_WQ_NONE);
    bool noted = false;
    for (size_t i = 0; i < m->n_notes; i++)
        noted |= strstr(m->notes[i], "checkpoint dtype") != NULL;
    assert_true(noted);
    fg_model_free(m);
    fg_config_free(doc);
}

/* A scheme it cannot size read from a file deep in a tree (microsoft/bitnet-b1.58-2B-4T's
 * quant_method "bitnet"): the note names the method, not the path that opens the detail. */
static void wquant_note_should_name_the_refused_method_behind_a_long_path(void **state)
{
    (void)state;
    static const char cfg[] =
        "{\"model_type\": \"llama\", \"hidden_size\": 64, \"intermediate_size\": 128, "
        "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, \"vocab_size\": 100, "
        "\"quantization_config\": {\"quant_method\": \"bitnet\"}}";
    const char *path = "tests/fixtures/models/microsoft--bitnet-b1.58-2B-4T/config.json";
    struct fg_config *doc = NULL;
    struct fg_err err = {0};
    assert_int_equal(fg_config_parse(cfg, strlen(cfg), path, &doc, &err), 0);
    struct fg_model *m = NULL;
    assert_int_equal(fg_model_from_config(doc, "t", &m, &err), 0);
    bool named = false;
    for (size_t i = 0; i < m->n_notes; i++)
        named |= strstr(m->notes[i], "quant_method 'bitnet'") != NULL &&
                 strstr(m->notes[i], "checkpoint dtype") != NULL;
    assert_true(named);
    fg_model_free(m);
    fg_config_free(doc);
}

static void wquant_for_serving_should_follow_vllms_verify_quantization(void **state)
{
    (void)state;
    struct fg_wquant none = {0}, fp8 = {.method = FG_WQ_FP8, .bytes = 1}, out;
    struct fg_err err = {0};
    assert_int_equal(fg_wquant_for_serving(&none, FG_WQ_FP8, &out, &err), 0);
    assert_true(out.runtime && out.bytes == 1 && out.keep == 0);
    assert_int_equal(fg_wquant_for_serving(&none, FG_WQ_AWQ, &out, &err), FG_E_INVAL);
    assert_int_equal(fg_wquant_for_serving(&fp8, FG_WQ_GPTQ, &out, &err), FG_E_INVAL);
    assert_non_null(strstr(err.detail, "does not match"));
    assert_int_equal(fg_wquant_for_serving(&fp8, FG_WQ_NONE, &out, &err), 0);
    assert_int_equal(out.method, FG_WQ_FP8);
    enum fg_wq_method m;
    assert_int_equal(fg_wq_method_parse("compressed-tensors", &m, &err), 0);
    assert_int_equal(m, FG_WQ_CT);
    assert_int_equal(fg_wq_method_parse("int3", &m, &err), FG_E_INVAL);
    assert_non_null(strstr(err.detail, "mxfp4"));
}

static struct fg_estimate serve(const struct fg_model *m, uint32_t tp, uint8_t kv_bytes,
                                uint8_t wq)
{
    struct fg_job j;
    struct fg_estimate e;
    struct fg_err err = {0};
    fg_job_defaults(&j, FG_MODE_SERVE);
    j.tp = tp;
    j.kv_bytes = kv_bytes;
    j.serve_wq = wq;
    j.seq_len = 32768;
    if (fg_memory_estimate(m, &j, &e, &err))
        fail_msg("estimate: %s", err.detail);
    return e;
}

static void estimate_serve_should_count_the_checkpoints_own_bytes(void **state)
{
    (void)state;
    /* gpt-oss-120b: 36 x 128 experts x 3 x 2880 x 2880 in mxfp4 (hidden padded to 3072),
     * the rest in bf16; vLLM logs 64.38 GiB = 69.1 GB on an H100 */
    struct fg_model *m = load(M "openai--gpt-oss-120b");
    struct fg_estimate e = serve(m, 1, 0, 0);
    double experts = 36.0 * 128 * 3 * 2880 * 2880;
    double want = experts * (0.5 + 1.0 / 32) * 3072 / 2880 +
                  ((double)m->params_total - experts) * 2;
    assert_true(fabs((double)e.b.weights - want) / want < 0.01);
    assert_true(e.b.weights > 68e9 && e.b.weights < 70.5e9);
    assert_non_null(strstr(e.lines[0].what, "mxfp4"));
    fg_model_free(m);
    /* DeepSeek-R1: fp8 blocks, the routers in bf16; MLA's latent on every TP rank; fp8 KV
     * halves it; a bf16 reading would be 2x */
    m = load(M "deepseek-ai--DeepSeek-R1");
    struct fg_estimate e1 = serve(m, 1, 0, 0), e8 = serve(m, 8, 0, 0), f8 = serve(m, 8, 1, 0);
    assert_true(e1.b.weights > 0.95 * 671e9 && e1.b.weights < 1.05 * 671e9);
    assert_true(e8.b.weights < e1.b.weights / 7);
    assert_int_equal(e8.b.kv_cache, e1.b.kv_cache);
    assert_int_equal(e8.b.kv_cache, 61ull * 576 * 2 * 32768);
    assert_int_equal(f8.b.kv_cache * 2, e8.b.kv_cache);
    /* headers read: the bytes they give win (twice the scheme's here: the weights double) */
    m->stored_bytes = 2 * e1.b.weights;
    struct fg_estimate h = serve(m, 1, 0, 0);
    assert_true(fabs((double)h.b.weights - 2.0 * (double)e1.b.weights) < 1e6);
    assert_non_null(strstr(h.lines[0].source, "safetensors"));
    fg_model_free(m);
    /* a bf16 checkpoint under --quantization fp8: 1 B per linear weight, embeddings and head
     * in bf16 */
    m = load(M "meta-llama--Llama-3.1-8B");
    struct fg_estimate b = serve(m, 1, 0, 0), q = serve(m, 1, 0, FG_WQ_FP8);
    double lin = 8030261248.0 - 2 * 128256.0 * 4096; /* untied embeddings and head */
    assert_true(fabs((double)(b.b.weights - q.b.weights) - lin) / lin < 0.01);
    fg_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(wquant_read_should_give_each_schemes_bytes_with_its_scales),
        cmocka_unit_test(wquant_read_should_refuse_what_it_cannot_size_naming_the_key),
        cmocka_unit_test(wquant_note_should_name_the_refused_method_behind_a_long_path),
        cmocka_unit_test(wquant_for_serving_should_follow_vllms_verify_quantization),
        cmocka_unit_test(estimate_serve_should_count_the_checkpoints_own_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
