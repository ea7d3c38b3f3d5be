/*
 * test_st_layout.c - the checkpoint's tensor rows (engine/source/st_layout.c), on the real
 * safetensors headers of the loopback hub's checkpoints (tests/fixtures/hub).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt_fixture.h"
#include "source/safetensors.h"
#include "source/source.h"
#include "source/st_layout.h"

/* Scan a staged checkout of repo with its rows into l. */
static void scan_repo(const char *repo, struct fg_st_summary *s, struct fg_st_layout *l)
{
    char dir[64];
    struct fg_source_opts o;
    struct fg_source_repo *r = NULL;
    struct fg_st_scan_opts so = {.layout = l};
    struct fg_err err = {0};
    stage_repo(repo, stage_tmpdir(dir, sizeof dir));
    fg_source_opts_init(&o);
    o.offline = true;
    assert_int_equal(fg_source_repo_open(&o, dir, NULL, &r, &err), 0);
    int rc = fg_safetensors_scan_with(r, &so, s, &err);
    if (rc)
        print_message("%s\n", err.detail);
    assert_int_equal(rc, 0);
    fg_source_repo_free(r);
    stage_remove(dir);
}

static void fg_st_layout_pattern_should_keep_the_first_number_and_fold_the_rest(void **state)
{
    (void)state;
    char out[FG_ST_ROW_NAME];
    assert_true(fg_st_layout_pattern("model.layers.12.mlp.experts.37.down_proj.weight", out,
                                     sizeof out));
    assert_string_equal(out, "model.layers.12.mlp.experts.*.down_proj.weight");
    assert_true(fg_st_layout_pattern("transformer.h.0.ln_1.weight", out, sizeof out));
    assert_string_equal(out, "transformer.h.0.ln_1.weight");
    /* a number inside a word is part of the word */
    assert_true(fg_st_layout_pattern("model.layers.3.mlp.c_fc_0.weight", out, sizeof out));
    assert_string_equal(out, "model.layers.3.mlp.c_fc_0.weight");
    assert_true(fg_st_layout_pattern("lm_head.weight", out, sizeof out));
    assert_string_equal(out, "lm_head.weight");
    char small[8];
    assert_false(fg_st_layout_pattern("model.layers.1.x", small, sizeof small));
    assert_int_equal(strlen(small), sizeof small - 1);
}

static void fg_st_layout_add_should_fold_experts_into_one_row(void **state)
{
    (void)state;
    struct fg_st_layout l;
    char name[96];
    uint64_t shape[2] = {16384, 6144};
    fg_st_layout_init(&l);
    /* WizardLM-2-8x22B's experts (model.safetensors.index.json): 8 per layer, 3 weights each */
    for (int layer = 0; layer < 2; layer++)
        for (int e = 0; e < 8; e++)
            for (int w = 1; w <= 3; w++) {
                snprintf(name, sizeof name, "model.layers.%d.block_sparse_moe.experts.%d.w%d."
                         "weight", layer, e, w);
                uint64_t sh[2] = {w == 2 ? shape[1] : shape[0], w == 2 ? shape[0] : shape[1]};
                assert_int_equal(fg_st_layout_add(&l, name, FG_ST_BF16, sh, 2, NULL), 0);
            }
    assert_int_equal(l.tensors, 48);
    assert_int_equal(l.n, 6);
    for (size_t i = 0; i < l.n; i++)
        assert_int_equal(l.rows[i].count, 8);
    assert_int_equal(fg_st_layout_elements(&l), 48ull * 16384 * 6144);
    fg_st_layout_free(&l);
}

static void fg_st_layout_add_should_drop_every_row_past_the_cap(void **state)
{
    (void)state;
    struct fg_st_layout l;
    char name[64];
    uint64_t shape[1];
    fg_st_layout_init(&l);
    for (uint64_t i = 0; i <= FG_ST_LAYOUT_MAX_ROWS; i++) {
        shape[0] = i + 1; /* every shape differs: a row each */
        snprintf(name, sizeof name, "t.%llu.w", (unsigned long long)i % 7);
        assert_int_equal(fg_st_layout_add(&l, name, FG_ST_F32, shape, 1, NULL), 0);
    }
    assert_true(l.overflow);
    assert_int_equal(l.n, 0);
    assert_int_equal(l.tensors, FG_ST_LAYOUT_MAX_ROWS + 1);
    fg_st_layout_free(&l);
}

static void fg_st_layout_move_should_leave_the_source_empty(void **state)
{
    (void)state;
    struct fg_st_layout a, b;
    uint64_t shape[2] = {4, 4};
    fg_st_layout_init(&a);
    fg_st_layout_init(&b);
    assert_int_equal(fg_st_layout_add(&a, "x.weight", FG_ST_F16, shape, 2, NULL), 0);
    assert_int_equal(fg_st_layout_add(&b, "y.weight", FG_ST_F16, shape, 2, NULL), 0);
    fg_st_layout_move(&b, &a);
    assert_int_equal(a.n, 0);
    assert_null(a.rows);
    assert_int_equal(b.n, 1);
    assert_string_equal(b.rows[0].name, "x.weight");
    fg_st_layout_free(&b);
}

static void fg_st_row_numel_should_multiply_the_shape(void **state)
{
    (void)state;
    struct fg_st_layout l;
    uint64_t shape[6] = {2, 3, 4, 5, 6, 7};
    fg_st_layout_init(&l);
    assert_int_equal(fg_st_layout_add(&l, "conv.weight", FG_ST_F32, shape, 6, NULL), 0);
    assert_int_equal(l.rows[0].ndim, FG_ST_ROW_DIMS);
    assert_int_equal(fg_st_row_numel(&l.rows[0]), 2 * 3 * 4 * 5 * 6 * 7); /* folded, kept */
    fg_st_layout_free(&l);
}

static void fg_st_layout_elements_should_equal_the_headers_sum_of_a_real_checkpoint(
    void **state)
{
    (void)state;
    struct fg_st_summary s;
    struct fg_st_layout l;
    fg_st_layout_init(&l);
    /* granite-7b-lab: three shards, 291 tensors, 6,738,481,152 parameters (its index) */
    scan_repo("instructlab/granite-7b-lab", &s, &l);
    assert_true(s.headers);
    assert_int_equal(l.tensors, s.tensors);
    assert_int_equal(fg_st_layout_elements(&l), s.total);
    assert_int_equal(s.total, 6738481152ull);
    assert_int_equal(l.n, l.tensors); /* no experts: one row a tensor */
    fg_st_layout_free(&l);
}

static void fg_st_layout_to_cjson_should_read_back_the_same_rows(void **state)
{
    (void)state;
    struct fg_st_summary s;
    struct fg_st_layout l, back;
    struct fg_err err = {0};
    fg_st_layout_init(&l);
    fg_st_layout_init(&back);
    scan_repo("google/gemma-2b-it", &s, &l);
    cJSON *a = fg_st_layout_to_cjson(&l);
    assert_non_null(a);
    char *text = cJSON_PrintUnformatted(a);
    cJSON *again = cJSON_Parse(text);
    assert_int_equal(fg_st_layout_from_cjson(again, "t", &back, &err), 0);
    assert_int_equal(back.n, l.n);
    assert_int_equal(back.tensors, l.tensors);
    assert_int_equal(fg_st_layout_elements(&back), s.total);
    for (size_t i = 0; i < l.n; i++) {
        assert_string_equal(back.rows[i].name, l.rows[i].name);
        assert_int_equal(back.rows[i].dtype, l.rows[i].dtype);
        assert_memory_equal(back.rows[i].shape, l.rows[i].shape, sizeof l.rows[i].shape);
    }
    free(text);
    cJSON_Delete(a);
    cJSON_Delete(again);
    fg_st_layout_free(&l);
    fg_st_layout_free(&back);
}

static void fg_st_layout_from_cjson_should_refuse_a_row_it_did_not_write(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "{}",
        "[[\"a.weight\", \"BF16\", [2, 2]]]",
        "[[\"a.weight\", \"BF17\", [2, 2], 1]]",
        "[[\"a.weight\", \"BF16\", [2, -2], 1]]",
        "[[\"a.weight\", \"BF16\", [2, 2], 0]]",
        "[[\"a.weight\", \"BF16\", [1, 2, 3, 4, 5], 1]]",
        "[[7, \"BF16\", [2], 1]]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct fg_st_layout l;
        struct fg_err err = {0};
        fg_st_layout_init(&l);
        cJSON *a = cJSON_Parse(bad[i]);
        assert_int_equal(fg_st_layout_from_cjson(a, "entry.json", &l, &err), FG_E_PARSE);
        assert_non_null(strstr(err.detail, "entry.json"));
        assert_int_equal(l.n, 0);
        cJSON_Delete(a);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fg_st_layout_pattern_should_keep_the_first_number_and_fold_the_rest),
        cmocka_unit_test(fg_st_layout_add_should_fold_experts_into_one_row),
        cmocka_unit_test(fg_st_layout_add_should_drop_every_row_past_the_cap),
        cmocka_unit_test(fg_st_layout_move_should_leave_the_source_empty),
        cmocka_unit_test(fg_st_row_numel_should_multiply_the_shape),
        cmocka_unit_test(fg_st_layout_elements_should_equal_the_headers_sum_of_a_real_checkpoint),
        cmocka_unit_test(fg_st_layout_to_cjson_should_read_back_the_same_rows),
        cmocka_unit_test(fg_st_layout_from_cjson_should_refuse_a_row_it_did_not_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
