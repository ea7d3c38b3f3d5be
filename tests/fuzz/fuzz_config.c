/*
 * fuzz_config.c - libFuzzer target: config.json text -> fg_config_parse ->
 * fg_model_from_config -> fg_memory_estimate for every mode, with the
 * defaults and with the options that change the formulas (checkpointing,
 * chunked loss, fp32, 8-bit AdamW, ZeRO-3, LoRA on attention only, int8
 * QLoRA), then the fit on one card.
 *
 * Seeds: tests/fixtures/models/<dir>/config.json (tests/fuzz/run.sh).
 * Checks: the sanitizers, and fuzz.h's error contract on every call.
 */
#include <stddef.h>
#include <stdint.h>

#include "arch/graph.h"
#include "source/config.h"
#include "plan/fit.h"
#include "fuzz.h"
#include "memory/memory.h"
#include "model/model.h"

FUZZ_INITIALIZE_LOG_ONLY

static void estimate(const struct fg_model *m, const struct fg_job *job)
{
    struct fg_estimate e;
    struct fg_err err = {0};
    int rc = fg_memory_estimate(m, job, &e, &err);
    fuzz_check_rc(rc, &err);
    if (rc)
        return;
    if (e.total_bytes < e.static_bytes)
        fuzz_fail("estimate total below its static part", m->model_type);
    for (size_t i = 0; i < e.n_lines && i < FG_ESTIMATE_MAX_LINES; i++)
        fuzz_check_text("estimate line", e.lines[i].what, sizeof e.lines[i].what);
    (void)fg_estimate_at(&e, 1u << 20);
    (void)fg_memory_flops_per_token(m, job);
    struct fg_fit_opts fo;
    struct fg_fit fit;
    fg_fit_opts_default(&fo);
    fg_fit_card(&e, fg_fit_usable(80, 0, &fo), &fo, &fit);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fg_config *doc = (struct fg_config *)1;
    struct fg_err err = {0};
    int rc = fg_config_parse((const char *)data, size, "fuzz/config.json", &doc, &err);
    fuzz_check_rc(rc, &err);
    if (rc) {
        if (doc)
            fuzz_fail("fg_config_parse failed but left *out set", err.detail);
        return 0;
    }
    struct fg_model *m = (struct fg_model *)1;
    rc = fg_model_from_config(doc, "fuzz/model", &m, &err);
    fuzz_check_rc(rc, &err);
    if (rc) {
        if (m)
            fuzz_fail("fg_model_from_config failed but left *out set", err.detail);
        fg_config_free(doc);
        return 0;
    }
    for (size_t i = 0; i < m->n_nodes; i++)
        fuzz_check_text("node desc", m->nodes[i].desc, sizeof m->nodes[i].desc);
    for (size_t i = 0; i < m->n_notes && i < FG_MODEL_MAX_NOTES; i++)
        fuzz_check_text("model note", m->notes[i], sizeof m->notes[i]);
    for (size_t i = 0; i < m->n_assumed && i < FG_MODEL_MAX_ASSUMED; i++)
        fuzz_check_text("model assumption", m->assumed[i], sizeof m->assumed[i]);
    fuzz_check_text("unsure key", m->unsure_key, sizeof m->unsure_key);
    (void)fg_model_active_params(m);
    (void)fg_model_main_layers(m);

    static const enum fg_mode modes[] = {FG_MODE_FULL, FG_MODE_LORA, FG_MODE_QLORA, FG_MODE_SERVE};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        struct fg_job job;
        fg_job_defaults(&job, modes[i]);
        estimate(m, &job);
        job.grad_ckpt = true;
        job.chunked_ce = true;
        job.batch = 3;
        job.seq_len = 8192;
        job.zero = 3;
        job.dp = 8;
        job.precision = i == 0 ? FG_PREC_FP32 : FG_PREC_BF16;
        job.optimizer = FG_OPT_ADAMW_8BIT;
        job.quant = modes[i] == FG_MODE_QLORA ? FG_QUANT_INT8 : job.quant;
        job.lora_targets = FG_LORA_ATTN;
        estimate(m, &job);
    }
    fg_model_free(m);
    fg_config_free(doc);
    return 0;
}
