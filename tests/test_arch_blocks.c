/*
 * test_arch_blocks.c - the shared builders of engine/arch/blocks.c that the readers fold
 * their near-copies into: the repeated-block loop and the one-linear node.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "model/model.h"

#include "arch/arch.h"

static uint64_t params(const struct fg_model *m)
{
    uint64_t p = 0;
    for (size_t i = 0; i < m->n_nodes; i++)
        p += m->nodes[i].params;
    return p;
}

static int count_layer(struct fg_model *m, int32_t layer, const void *ctx, struct fg_err *err)
{
    int *calls = (int *)ctx;
    (*calls)++;
    return fg__add_norm(m, layer, "Norm", m->hidden, FG_NORM_RMS, err);
}

static int fail_third(struct fg_model *m, int32_t layer, const void *ctx, struct fg_err *err)
{
    (void)ctx;
    if (layer == 2)
        return FG_E_RANGE;
    return fg__add_norm(m, layer, "Norm", m->hidden, FG_NORM_LN, err);
}

/* A block that reads nothing of its layer is built once and copied over the others: n
 * blocks, each counted; built node by node (no copies), fn runs n times. */
static void add_layers_should_copy_the_block_once_it_repeats(void **state)
{
    (void)state;
    struct fg_err err = {0};
    struct fg_model *m = calloc(1, sizeof *m);
    assert_non_null(m);
    m->hidden = 64;
    int calls = 0;
    assert_int_equal(fg__add_layers(m, 5, count_layer, &calls, &err), 0);
    assert_int_equal(calls, 1);
    assert_int_equal(m->n_nodes, 5);
    assert_int_equal(m->nodes[4].layer, 4);
    assert_int_equal(params(m), 5 * 64);
    fg_model_free(m);

    m = calloc(1, sizeof *m);
    assert_non_null(m);
    m->hidden = 64;
    m->node_by_node = true;
    calls = 0;
    assert_int_equal(fg__add_layers(m, 5, count_layer, &calls, &err), 0);
    assert_int_equal(calls, 5);
    assert_int_equal(m->n_nodes, 5);
    assert_int_equal(params(m), 5 * 64);
    fg_model_free(m);
}

/* The first failing block's code comes back and no block after it is built. */
static void add_layers_should_return_the_failing_block_code(void **state)
{
    (void)state;
    struct fg_err err = {0};
    struct fg_model *m = calloc(1, sizeof *m);
    assert_non_null(m);
    m->hidden = 8;
    m->node_by_node = true;
    assert_int_equal(fg__add_layers(m, 6, fail_third, NULL, &err), FG_E_RANGE);
    assert_int_equal(m->n_nodes, 2);
    fg_model_free(m);
}

/* A head's desc is its weight's shape, a projection's the widths it maps; a layer puts the
 * node in that block. */
static void add_linear_should_describe_heads_and_projections(void **state)
{
    (void)state;
    struct fg_err err = {0};
    struct fg_model *m = calloc(1, sizeof *m);
    struct fg_node *n = NULL;
    assert_non_null(m);
    assert_int_equal(fg__add_linear(m, FG_NODE_HEAD, -1, "Task head", "head", 768, 3, true, &n,
                                    &err), 0);
    assert_non_null(n);
    assert_int_equal(n->params, 768 * 3 + 3);
    assert_int_equal(n->hidden, 768);
    assert_int_equal(n->width, 3);
    assert_string_equal(n->desc, "768 x 3");
    assert_int_equal(fg__add_linear(m, FG_NODE_OTHER, 4, "Patch projection", "proj", 1024, 4096,
                                    false, &n, &err), 0);
    assert_int_equal(n->params, 1024 * 4096);
    assert_int_equal(n->layer, 4);
    assert_string_equal(n->desc, "1024 -> 4096");
    assert_string_equal(n->name, "Patch projection_5");
    fg_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(add_layers_should_copy_the_block_once_it_repeats),
        cmocka_unit_test(add_layers_should_return_the_failing_block_code),
        cmocka_unit_test(add_linear_should_describe_heads_and_projections),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
