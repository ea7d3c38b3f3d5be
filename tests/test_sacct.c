/*
 * test_sacct.c - policies/sacct.c on sacct -p output in Slurm's own spelling
 * (tests/fixtures/sacct/PROVENANCE says where each line's form comes from).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "util/fileio.h"
#include "sacct.h"

#define MIB (1024ull * 1024)

static struct fg_sacct *parse_fixture(void)
{
    char *text = NULL;
    size_t len = 0;
    struct fg_sacct *s = NULL;
    struct fg_err err = {0};
    assert_int_equal(fg__read_file("tests/fixtures/sacct/accounting.txt", 1 << 20, &text, &len), 0);
    int rc = fg_sacct_parse(text, len, &s, &err);
    if (rc)
        print_message("%s\n", err.detail);
    assert_int_equal(rc, 0);
    free(text);
    return s;
}

static void sacct_size_should_read_every_convert_num_unit_spelling(void **state)
{
    (void)state;
    uint64_t b;
    assert_int_equal(fg_sacct_size("36266M", &b), 0);
    assert_int_equal(b, 36266 * MIB);
    assert_int_equal(fg_sacct_size("1.50G", &b), 0);
    assert_int_equal(b, 1536 * MIB);
    assert_int_equal(fg_sacct_size("123456789", &b), 0);
    assert_int_equal(b, 123456789);
    assert_int_equal(fg_sacct_size("0", &b), 0);
    assert_int_equal(b, 0);
    assert_int_equal(fg_sacct_size("2T", &b), 0);
    assert_int_equal(b, 2 * MIB * MIB);
    assert_int_equal(fg_sacct_size("12Q", &b), FG_E_PARSE);
    assert_int_equal(fg_sacct_size("-1M", &b), FG_E_PARSE);
    assert_int_equal(fg_sacct_size("", &b), FG_E_PARSE);
    assert_int_equal(fg_sacct_size("5MM", &b), FG_E_PARSE);
}

static void sacct_tres_should_not_take_a_typed_gres_for_the_count(void **state)
{
    (void)state;
    char buf[32];
    assert_true(fg_sacct_tres("billing=2,gres/gpu:a100=3,gres/gpu=2", "gres/gpu", buf, sizeof buf));
    assert_string_equal(buf, "2");
    assert_false(fg_sacct_tres("gres/gpu:a100=3,gres/gpumem=1M", "gres/gpu", buf, sizeof buf));
}

static void sacct_parse_should_fold_steps_into_their_job(void **state)
{
    (void)state;
    struct fg_sacct *s = parse_fixture();
    assert_int_equal(s->n, 6);
    /* two tasks of one GPU each: 36266M per task is 36266M per GPU */
    const struct fg_sacct_job *j = fg_sacct_find(s, 1277);
    assert_non_null(j);
    assert_string_equal(j->state, "COMPLETED");
    assert_int_equal(j->gpus, 2);
    assert_true(j->has_gpumem);
    assert_int_equal(j->gpumem_task_max, 36266 * MIB);
    assert_int_equal(j->gpumem_per_gpu, 36266 * MIB);
    assert_int_equal(j->gpus_per_task, 1);
    assert_int_equal(j->gpuutil_max, 100);
    /* one task (torchrun in the batch step) on four GPUs: a quarter each */
    j = fg_sacct_find(s, 1290);
    assert_int_equal(j->gpumem_task_max, 248168 * MIB);
    assert_int_equal(j->gpumem_per_gpu, 62042 * MIB);
    assert_int_equal(j->gpus_per_task, 4);
    j = fg_sacct_find(s, 1291);
    assert_string_equal(j->state, "FAILED");
    assert_int_equal(j->exit_code, 1);
    assert_int_equal(j->gpumem_per_gpu, 1536 * MIB);
    j = fg_sacct_find(s, 1292);
    assert_string_equal(j->state, "OUT_OF_MEMORY");
    assert_int_equal(j->exit_signal, 125);
    assert_int_equal(j->gpumem_per_gpu, 123456789);
    /* an array task by its raw id; "CANCELLED by 1003" is CANCELLED */
    j = fg_sacct_find(s, 1301);
    assert_non_null(j);
    assert_string_equal(j->state, "CANCELLED");
    assert_int_equal(j->gpumem_per_gpu, 20480 * MIB);
    j = fg_sacct_find(s, 1302);
    assert_false(j->has_gpumem);
    assert_null(fg_sacct_find(s, 1300));
    fg_sacct_free(s);
}

static void sacct_parse_should_name_the_line_of_a_bad_row(void **state)
{
    (void)state;
    struct fg_sacct *s = NULL;
    struct fg_err err = {0};
    const char *bad_size = "JobID|State|TRESUsageInMax|\n7|COMPLETED||\n"
                           "7.0|COMPLETED|gres/gpumem=12X|\n";
    assert_int_equal(fg_sacct_parse(bad_size, strlen(bad_size), &s, &err), FG_E_PARSE);
    assert_non_null(strstr(err.detail, "line 3"));
    assert_non_null(strstr(err.detail, "12X"));
    assert_null(s);
    const char *array = "JobID|State|\n1300_1|COMPLETED|\n";
    assert_int_equal(fg_sacct_parse(array, strlen(array), &s, &err), FG_E_PARSE);
    assert_non_null(strstr(err.detail, "JobIDRaw"));
    const char *no_header = "1277|COMPLETED|\n";
    assert_int_equal(fg_sacct_parse(no_header, strlen(no_header), &s, &err), FG_E_PARSE);
    const char *short_row = "JobID|State|ExitCode|\n5|COMPLETED|\n";
    assert_int_equal(fg_sacct_parse(short_row, strlen(short_row), &s, &err), FG_E_PARSE);
    assert_non_null(strstr(err.detail, "2 fields where the header has 3"));
}

/* Every line has a cap: a row of sacct -p is a few hundred bytes, a 2 MiB one (or /dev/zero,
 * one endless line of NULs) is refused naming the line, with memory bounded by the cap. */
static void sacct_read_should_cap_its_lines(void **state)
{
    (void)state;
    struct fg_sacct *s = NULL;
    struct fg_err err = {0};
    size_t big = 2u << 20;
    char *text = malloc(big + 64);
    assert_non_null(text);
    int h = snprintf(text, 64, "JobID|State|\n");
    memset(text + h, 'x', big);
    memcpy(text + h + big, "|\n", 3);
    assert_int_equal(fg_sacct_parse(text, (size_t)h + big + 2, &s, &err), FG_E_RANGE);
    assert_non_null(strstr(err.detail, "line 2: longer than 1024 KiB"));
    assert_null(s);
    free(text);
    FILE *zero = fopen("/dev/zero", "r");
    assert_non_null(zero);
    assert_int_equal(fg_sacct_read(zero, &s, &err), FG_E_RANGE);
    assert_non_null(strstr(err.detail, "line 1: longer than"));
    fclose(zero);
    /* a state with control characters is shown escaped (learn prints it) */
    const char *esc = "JobID|State|\n9|COMPL\x1b[2JETED|\n";
    assert_int_equal(fg_sacct_parse(esc, strlen(esc), &s, &err), 0);
    assert_string_equal(fg_sacct_find(s, 9)->state, "COMPL\\x1b[2JETED");
    fg_sacct_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sacct_size_should_read_every_convert_num_unit_spelling),
        cmocka_unit_test(sacct_tres_should_not_take_a_typed_gres_for_the_count),
        cmocka_unit_test(sacct_parse_should_fold_steps_into_their_job),
        cmocka_unit_test(sacct_parse_should_name_the_line_of_a_bad_row),
        cmocka_unit_test(sacct_read_should_cap_its_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
