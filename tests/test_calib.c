/*
 * test_calib.c - engine/memory/calib.c: the calibration table and its effect on an estimate.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "memory/calib.h"
#include "memory/memory.h"
#include "support.h"

#define QWEN "tests/fixtures/models/Qwen--Qwen3-0.6B"

static int parse(struct fg_calib *c, const char *text, struct fg_err *err)
{
    return fg_calib_parse(c, text, strlen(text), "/etc/slurm/calibration.conf", err);
}

static void calib_load_should_read_the_shipped_example(void **state)
{
    (void)state;
    struct fg_calib c;
    struct fg_err err = {0};
    assert_int_equal(fg_calib_load(&c, "conf/calibration.conf", &err), 0);
    assert_int_equal(c.n, 3);
    const struct fg_calib_row *r = fg_calib_find(&c, "HF", FG_MODE_QLORA);
    assert_non_null(r);
    assert_true(r->factor == 1.12);
    assert_int_equal(r->jobs, 61);
    assert_true(r->low == 1.05 && r->high == 1.19);
    assert_null(fg_calib_find(&c, "hf", FG_MODE_FULL));
    /* its Framework=lightning row is lit-gpt's, as assess asks for it */
    assert_non_null(fg_calib_find(&c, "lit-gpt", FG_MODE_FULL));
    char buf[160];
    fg_calib_describe(r, buf, sizeof buf);
    assert_string_equal(buf, "site calibration: x1.12 from 61 jobs, 95% CI 1.05-1.19");
    assert_int_equal(fg_calib_format_row(r, buf, sizeof buf), 0);
    assert_string_equal(buf, "Framework=hf Mode=qlora Factor=1.120 Jobs=61 Low=1.050 High=1.190");
}

static void calib_parse_should_name_file_and_line_of_every_error(void **state)
{
    (void)state;
    struct fg_calib c;
    struct fg_err err = {0};
    static const struct {
        const char *text, *says;
        int rc;
    } bad[] = {
        {"# ok\nFramework=hf Mode=lora Factor=1.1 Jobs=3 Color=red\n", ":2: unknown key 'Color'",
         FG_E_PARSE},
        {"Framework=hf Mode=lora Factor=1.1 Jobs=3 Jobs=4\n", ":1: Jobs is given twice",
         FG_E_PARSE},
        {"Framework=hf Mode=lora Factor=9 Jobs=3\n", ":1: Factor=9 is not valid", FG_E_RANGE},
        {"Framework=hf Mode=lora Factor=1.1x Jobs=3\n", ":1: Factor=1.1x is not valid",
         FG_E_RANGE},
        {"Framework=hf Mode=lora Factor=1.1\n", ":1: Jobs is missing", FG_E_MISSING},
        {"Framework=hf Mode=tune Factor=1.1 Jobs=3\n", ":1: Mode=tune is not valid", FG_E_PARSE},
        {"Framework=hf Mode=lora Factor=1.1 Jobs=0\n", ":1: Jobs=0 is not valid", FG_E_RANGE},
        {"Framework=hf Mode=lora Factor=1.1 Jobs=3 Low=1.0\n", ":1: give Low and High",
         FG_E_MISSING},
        {"Framework=hf Mode=lora Factor=1.5 Jobs=3 Low=1.0 High=1.2\n",
         ":1: Factor=1.5 is not within", FG_E_RANGE},
        {"Framework=hf Mode=lora Factor=1.1 Jobs=3\n\nframework=HF mode=lora factor=1 jobs=2\n",
         ":3: a second row for HF lora (line 1 has it)", FG_E_PARSE},
        {"Framework hf\n", ":1: 'Framework' is not Key=Value", FG_E_PARSE},
        {"Framework=nosuch Mode=lora Factor=1.1 Jobs=3\n", ":1: Framework=nosuch is not valid",
         FG_E_PARSE},
        {"Framework=lit-gpt Mode=full Factor=1.1 Jobs=3\nFramework=lightning Mode=full "
         "Factor=1 Jobs=2\n", ":2: a second row for lightning full (line 1 has it)", FG_E_PARSE},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&err, 0, sizeof err);
        int rc = parse(&c, bad[i].text, &err);
        if (rc != bad[i].rc || !strstr(err.detail, bad[i].says))
            print_message("case %zu: rc %d: %s\n", i, rc, err.detail);
        assert_int_equal(rc, bad[i].rc);
        assert_non_null(strstr(err.detail, "/etc/slurm/calibration.conf"));
        assert_non_null(strstr(err.detail, bad[i].says));
    }
    assert_int_equal(fg_calib_load(&c, "/nonexistent/calibration.conf", &err), FG_E_NOTFOUND);
    assert_non_null(strstr(err.detail, "/nonexistent/calibration.conf"));
}

static void calib_apply_should_scale_the_estimate_and_say_so(void **state)
{
    (void)state;
    struct fg_model *m = load(QWEN);
    struct fg_job job;
    struct fg_estimate e, c;
    struct fg_err err = {0};
    fg_job_defaults(&job, FG_MODE_LORA);
    job.batch = 2;
    assert_int_equal(fg_memory_estimate(m, &job, &e, &err), 0);
    c = e;
    struct fg_calib_row r = {.framework = "hf", .mode = FG_MODE_LORA, .factor = 1.25,
                             .jobs = 40, .line = 7};
    fg_calib_apply(&r, &c);
    /* both parts scale, so the estimate at any batch stays static + b x per_sample */
    assert_int_equal(c.static_bytes, (uint64_t)(e.static_bytes * 1.25 + 0.5));
    assert_int_equal(c.per_sample_bytes, (uint64_t)(e.per_sample_bytes * 1.25 + 0.5));
    assert_int_equal(c.total_bytes, fg_estimate_at(&c, 2));
    assert_int_equal(c.n_lines, e.n_lines + 1);
    const struct fg_line *l = &c.lines[c.n_lines - 1];
    assert_string_equal(l->key, "calibration");
    assert_string_equal(l->what, "site calibration: x1.25 from 40 jobs");
    assert_int_equal(l->bytes, c.total_bytes - e.total_bytes);
    fg_model_free(m);
}

static void calib_apply_should_never_go_below_weights_and_states(void **state)
{
    (void)state;
    struct fg_model *m = load(QWEN);
    struct fg_job job;
    struct fg_estimate e;
    struct fg_err err = {0};
    fg_job_defaults(&job, FG_MODE_FULL);
    job.seq_len = 16; /* almost nothing per sample: the states are the estimate */
    assert_int_equal(fg_memory_estimate(m, &job, &e, &err), 0);
    uint64_t floor_b = e.b.weights + e.b.gradients + e.b.optimizer + e.b.adapters;
    assert_true(floor_b > e.total_bytes / 2);
    struct fg_calib_row r = {.framework = "hf", .mode = FG_MODE_FULL, .factor = 0.25,
                             .jobs = 20};
    uint64_t before = e.total_bytes;
    fg_calib_apply(&r, &e);
    assert_true(e.total_bytes >= floor_b);
    assert_true(e.static_bytes >= floor_b);
    assert_true(e.total_bytes < before);
    assert_int_equal(e.lines[e.n_lines - 1].bytes, before - e.total_bytes);
    assert_non_null(strstr(e.lines[e.n_lines - 1].what, "(less)"));
    fg_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(calib_load_should_read_the_shipped_example),
        cmocka_unit_test(calib_parse_should_name_file_and_line_of_every_error),
        cmocka_unit_test(calib_apply_should_scale_the_estimate_and_say_so),
        cmocka_unit_test(calib_apply_should_never_go_below_weights_and_states),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
