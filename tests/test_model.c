/*
 * test_model.c - the graph builder's own helpers (engine/model.c); the graphs of real
 * configs are checked by test_params.c (counts) and test_arch_*.c (structure).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* fg__model_add_block writes the name by hand; it must be what "%s_%d" gives, truncation
 * included, and leave the rest of the name zeroed as every new node is. */
static void model_add_block_should_name_a_node_as_snprintf_does(void **state)
{
    (void)state;
    static const char *const bases[] = {
        "", "x", "Attention", "CrossAttention", "PostAttnNorm",
        "nineteen-characters", "twenty--characters.", "twenty-one-characters",
        "a base of twenty-five ch", "a base thirty-one characters lo", "a base far longer than "
        "the thirty-two bytes a node name holds"};
    static const int32_t layers[] = {0, 1, 8, 9, 10, 98, 99, 12345, 999999998, INT32_MAX - 1,
                                     -1, -2, -100};
    struct fg_model *m = calloc(1, sizeof *m);
    assert_non_null(m);
    for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++)
        for (size_t l = 0; l < sizeof layers / sizeof layers[0]; l++) {
            struct fg_err err = {0};
            struct fg_node *n = fg__model_add_block(m, FG_NODE_ATTN, layers[l], bases[b], &err);
            assert_non_null(n);
            char want[sizeof n->name];
            memset(want, 0, sizeof want);
            snprintf(want, sizeof want, "%s_%lld", bases[b], (long long)layers[l] + 1);
            assert_memory_equal(n->name, want, sizeof want);
            assert_int_equal(n->layer, layers[l]);
            assert_int_equal(n->kind, FG_NODE_ATTN);
        }
    fg_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(model_add_block_should_name_a_node_as_snprintf_does),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
