/*
 * test_learnrec.c - cli/learnrec.c: the compact records fitgate learn joins (one copy
 * of each distinct string, the fields learn reads copied, growth past the arena's blocks).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "audit.h"
#include "learnrec.h"

static void intern_should_give_one_copy_per_distinct_string(void **state)
{
    (void)state;
    struct fg_cli_lrecs set = {0};
    char a[] = "Qwen/Qwen3-8B", b[] = "Qwen/Qwen3-8B";
    const char *x = fg_cli_lrecs_intern(&set, a), *y = fg_cli_lrecs_intern(&set, b);
    assert_non_null(x);
    assert_ptr_equal(x, y);
    assert_ptr_not_equal(x, a);
    a[0] = 'X'; /* a copy: the caller's buffer may change */
    assert_string_equal(x, "Qwen/Qwen3-8B");
    assert_ptr_not_equal(fg_cli_lrecs_intern(&set, "Qwen/Qwen3-4B"), x);
    /* past the table's growth and several 1 MiB arena blocks: earlier pointers still hold */
    char buf[400];
    memset(buf, 'm', sizeof buf - 12);
    for (int i = 0; i < 20000; i++) {
        snprintf(buf + sizeof buf - 12, 12, "%d", i);
        assert_non_null(fg_cli_lrecs_intern(&set, buf));
    }
    assert_ptr_equal(fg_cli_lrecs_intern(&set, "Qwen/Qwen3-8B"), x);
    snprintf(buf + sizeof buf - 12, 12, "%d", 7);
    assert_ptr_equal(fg_cli_lrecs_intern(&set, buf), fg_cli_lrecs_intern(&set, buf));
    fg_cli_lrecs_free(&set);
}

static void add_should_copy_the_fields_learn_reads(void **state)
{
    (void)state;
    struct fg_cli_lrecs set = {0};
    struct fg_audit_rec r;
    fg_audit_rec_init(&r, FG_AUDIT_AT_SBATCH);
    snprintf(r.user, sizeof r.user, "ana");
    snprintf(r.model, sizeof r.model, "meta-llama/Llama-3.1-8B");
    snprintf(r.model_type, sizeof r.model_type, "llama");
    snprintf(r.framework, sizeof r.framework, "lightning");
    snprintf(r.mode, sizeof r.mode, "full");
    r.job_id = 7010;
    r.estimate_bytes = 123456789;
    r.gpus_after = 4;
    r.calibration_milli = 1080;
    r.verdict = FG_AUDIT_RESIZE;
    for (int i = 0; i < 1000; i++) {
        r.job_id = 7010 + (uint64_t)i;
        assert_int_equal(fg_cli_lrecs_add(&set, &r), 0);
    }
    assert_int_equal(set.n, 1000);
    const struct fg_cli_lrec *a = &set.v[0], *z = &set.v[999];
    assert_int_equal(a->job_id, 7010);
    assert_int_equal(z->job_id, 8009);
    assert_string_equal(a->submit_id, r.submit_id);
    assert_ptr_not_equal(a->submit_id, z->submit_id); /* per line, not interned */
    assert_ptr_equal(a->user, z->user);
    assert_string_equal(z->model, "meta-llama/Llama-3.1-8B");
    assert_string_equal(z->model_type, "llama");
    assert_string_equal(z->partition, "");
    assert_int_equal(z->estimate_bytes, 123456789);
    assert_int_equal(z->gpus_after, 4);
    assert_int_equal(z->calibration_milli, 1080);
    assert_int_equal(z->verdict, FG_AUDIT_RESIZE);
    assert_int_equal(z->where, FG_AUDIT_AT_SBATCH);
    fg_cli_lrecs_free(&set);
    fg_cli_lrecs_free(&set); /* twice: nothing left to free */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(intern_should_give_one_copy_per_distinct_string),
        cmocka_unit_test(add_should_copy_the_fields_learn_reads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
