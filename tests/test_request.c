/*
 * test_request.c - policies/request.c: Slurm's GPU spellings read as sbatch reads them,
 * and the card a request is judged on, chosen once for every front end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "request.h"

static void from_option_should_count_gpus_per_job_and_per_node_as_sbatch_does(void **state)
{
    (void)state;
    const struct fg_gpu_table *t = fg_gpu_table_builtin();
    struct fg_request q;
    fg_request_init(&q);
    assert_true(fg_request_from_option(&q, "gpus", "8", 16, t));
    assert_int_equal(fg_request_total(&q), 8); /* --gpus is the job's, whatever --nodes says */
    assert_int_equal(fg_request_per_node(&q), 1);
    fg_request_init(&q);
    assert_true(fg_request_from_option(&q, "gpus-per-node", "h100:8", 16, t));
    assert_int_equal(fg_request_total(&q), 128);
    assert_non_null(q.gpu);
    fg_request_init(&q);
    assert_true(fg_request_from_option(&q, "gres", "gres:gpu:a100:4,gres:mps:100", 2, t));
    assert_int_equal(fg_request_total(&q), 8);
    assert_string_equal(q.type, "a100");
    fg_request_init(&q);
    assert_false(fg_request_from_option(&q, "gres", "mps:100", 1, t));
    assert_int_equal(q.via, FG_VIA_NONE);
}

static void describe_should_state_the_total(void **state)
{
    (void)state;
    struct fg_request q;
    char buf[256];
    fg_request_init(&q);
    assert_true(fg_request_from_option(&q, "gpus", "8", 16, NULL));
    fg_request_describe(&q, buf, sizeof buf);
    assert_non_null(strstr(buf, "--nodes=16 --gpus=8: 8 GPUs in all"));
    fg_request_init(&q);
    assert_true(fg_request_from_option(&q, "gres", "gpu:t4:4", 2, NULL));
    fg_request_describe(&q, buf, sizeof buf);
    assert_string_equal(buf, "--nodes=2 --gres=gpu:t4:4: 8 GPUs in all (4 per node x 2 nodes)");
}

static void from_plugin_should_not_override_a_slurm_option(void **state)
{
    (void)state;
    struct fg_request q;
    fg_request_init(&q);
    fg_request_from_plugin(&q, 4);
    assert_int_equal(q.via, FG_VIA_PLUGIN);
    assert_int_equal(fg_request_total(&q), 4);
    fg_request_init(&q);
    assert_true(fg_request_from_option(&q, "gres", "gpu:2", 1, NULL));
    fg_request_from_plugin(&q, 4);
    assert_int_equal(fg_request_total(&q), 2);
}

static void card_should_take_the_partitions_smallest_for_an_untyped_request(void **state)
{
    (void)state;
    const struct fg_gpu_table *t = fg_gpu_table_builtin();
    struct fg_request q;
    struct fg_err err = {0};
    fg_request_init(&q);
    assert_true(fg_request_from_option(&q, "gres", "gpu:2", 1, t));
    assert_int_equal(fg_request_card(&q, t, NULL, "", "gpu", "h100,t4", NULL, &err), 0);
    assert_non_null(q.gpu);
    assert_true(q.gpu->memory_bytes < 20000000000ull);
    assert_non_null(strstr(q.note, "smallest card of partition gpu"));
    /* DefaultGPU= before the partition's cards; --ft-gpu before both */
    fg_request_init(&q);
    assert_true(fg_request_from_option(&q, "gres", "gpu:2", 1, t));
    assert_int_equal(fg_request_card(&q, t, NULL, "h100", "gpu", "t4", NULL, &err), 0);
    assert_true(q.gpu->memory_bytes > 70000000000ull);
    assert_int_equal(fg_request_card(&q, t, "t4", "h100", "gpu", "", NULL, &err), 0);
    assert_true(q.gpu->memory_bytes < 20000000000ull);
}

static void card_should_fail_on_a_type_the_table_lacks(void **state)
{
    (void)state;
    const struct fg_gpu_table *t = fg_gpu_table_builtin();
    struct fg_request q;
    struct fg_err err = {0};
    fg_request_init(&q);
    assert_true(fg_request_from_option(&q, "gres", "gpu:quantumcard:2", 1, t));
    assert_int_equal(fg_request_card(&q, t, NULL, "", "", "", NULL, &err), FG_E_NOTFOUND);
    assert_non_null(strstr(err.detail, "'quantumcard' is not in fitgate's GPU table"));
    fg_request_init(&q);
    assert_int_equal(fg_request_card(&q, t, "nosuchgpu", "", "", "", NULL, &err), FG_E_NOTFOUND);
    assert_non_null(strstr(err.detail, "unknown GPU 'nosuchgpu'"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(from_option_should_count_gpus_per_job_and_per_node_as_sbatch_does),
        cmocka_unit_test(describe_should_state_the_total),
        cmocka_unit_test(from_plugin_should_not_override_a_slurm_option),
        cmocka_unit_test(card_should_take_the_partitions_smallest_for_an_untyped_request),
        cmocka_unit_test(card_should_fail_on_a_type_the_table_lacks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
