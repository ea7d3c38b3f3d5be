/*
 * test_model.c - the graph builder's own helpers (engine/model/model.c); the graphs of real
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

#include "arch/graph.h"
#include "model/model_int.h"
#include "source/config.h"
#include "model/model.h"
#include "support.h"

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

/* Block `layer` as a reader builds it: a norm, an attention with two linears, an MLP. */
static size_t build_block(struct fg_model *m, int32_t layer, const char *attn)
{
    size_t first = m->n_nodes;
    struct fg_node *n = fg__model_add_block(m, FG_NODE_NORM, layer, "Norm", NULL);
    assert_non_null(n);
    n->params = 4096;
    snprintf(n->desc, sizeof n->desc, "RMSNorm");
    n = fg__model_add_block(m, FG_NODE_ATTN, layer, attn, NULL);
    assert_non_null(n);
    fg__node_linear(n, "q", 4096, 4096, 1, false);
    fg__node_linear(n, "o", 4096, 4096, 1, true);
    n->heads = 32;
    snprintf(n->desc, sizeof n->desc, "MHA 32q/32kv x128");
    n = fg__model_add_block(m, FG_NODE_MLP, layer, "MLP", NULL);
    assert_non_null(n);
    fg__node_linear(n, "up", 4096, 14336, 1, false);
    n->inter = 14336;
    return first;
}

/* A repeated block is, byte for byte, the block built again: across a change in the
 * number of digits (9 -> 10, 99 -> 100, 120 -> 5) too. */
static void model_repeat_block_should_give_the_nodes_a_build_gives(void **state)
{
    (void)state;
    struct fg_model *built = calloc(1, sizeof *built), *copied = calloc(1, sizeof *copied);
    assert_non_null(built);
    assert_non_null(copied);
    size_t first = build_block(copied, 0, "Attention");
    build_block(built, 0, "Attention");
    for (int32_t l = 1; l < 120; l++) {
        size_t next = copied->n_nodes;
        assert_true(fg__model_repeat_block(copied, first, l, 1));
        first = next;
        build_block(built, l, "Attention");
        assert_int_equal(copied->n_nodes, built->n_nodes);
    }
    assert_memory_equal(copied->nodes, built->nodes, built->n_nodes * sizeof *built->nodes);
    assert_string_equal(copied->nodes[copied->n_nodes - 2].name, "Attention_120");
    /* many copies at once: what as many builds give */
    size_t at = copied->n_nodes;
    assert_true(fg__model_repeat_block(copied, first, 200, 150));
    for (int32_t l = 200; l < 350; l++)
        build_block(built, l, "Attention");
    assert_int_equal(copied->n_nodes, built->n_nodes);
    assert_memory_equal(copied->nodes + at, built->nodes + at,
                        (built->n_nodes - at) * sizeof *built->nodes);
    /* to a layer with fewer digits: the name's tail is zeroed again */
    first = copied->n_nodes - 3; /* block 349 */
    assert_true(fg__model_repeat_block(copied, first, 4, 1));
    build_block(built, 4, "Attention");
    assert_memory_equal(copied->nodes, built->nodes, built->n_nodes * sizeof *built->nodes);
    fg_model_free(built);
    fg_model_free(copied);
}

/* It declines, adding nothing, where a copy could differ from a build. */
static void model_repeat_block_should_decline_what_it_cannot_copy_exactly(void **state)
{
    (void)state;
    struct fg_model *m = calloc(1, sizeof *m);
    assert_non_null(m);
    /* a base too long for the name written in place: fg__fmt truncates it */
    size_t first = build_block(m, 0, "AVeryLongAttentionBaseName");
    size_t n = m->n_nodes;
    assert_false(fg__model_repeat_block(m, first, 1, 1));
    assert_int_equal(m->n_nodes, n);
    /* a block node named by hand */
    first = m->n_nodes;
    assert_non_null(fg__model_add(m, FG_NODE_OTHER, 1, "Adapter", NULL));
    assert_false(fg__model_repeat_block(m, first, 2, 1));
    /* nodes of two layers, and nodes of no layer */
    first = build_block(m, 2, "Attention");
    build_block(m, 3, "Attention");
    assert_false(fg__model_repeat_block(m, first, 4, 1));
    first = m->n_nodes;
    assert_non_null(fg__model_add(m, FG_NODE_NORM, -1, "Final norm", NULL));
    assert_false(fg__model_repeat_block(m, first, 4, 1));
    /* nothing to copy, a layer below 0, and a model built node by node */
    assert_false(fg__model_repeat_block(m, m->n_nodes, 4, 1));
    first = build_block(m, 4, "Attention");
    assert_false(fg__model_repeat_block(m, first, -1, 1));
    m->node_by_node = true;
    n = m->n_nodes;
    assert_false(fg__model_repeat_block(m, first, 5, 1));
    assert_int_equal(m->n_nodes, n);
    m->node_by_node = false;
    assert_true(fg__model_repeat_block(m, first, 5, 1));
    assert_int_equal(m->n_nodes, n + 3);
    /* no copies, or copies past the largest layer */
    first = m->n_nodes - 3; /* block 5 */
    n = m->n_nodes;
    assert_false(fg__model_repeat_block(m, first, 6, 0));
    assert_false(fg__model_repeat_block(m, first, INT32_MAX - 1, 3));
    assert_false(fg__model_repeat_block(m, first, INT32_MAX, 2));
    assert_int_equal(m->n_nodes, n);
    assert_true(fg__model_repeat_block(m, first, INT32_MAX - 1, 2));
    assert_string_equal(m->nodes[m->n_nodes - 2].name, "Attention_2147483648");
    /* a block of more nodes than it copies */
    first = m->n_nodes;
    for (int k = 0; k < 33; k++)
        assert_non_null(fg__model_add_block(m, FG_NODE_NORM, 6, "Norm", NULL));
    n = m->n_nodes;
    assert_false(fg__model_repeat_block(m, first, 7, 1));
    assert_int_equal(m->n_nodes, n);
    fg_model_free(m);
}

/* Every fixture's graph is the same whether its readers copy repeated blocks or build
 * each: nodes (every byte), segments, totals; and its main layers the same counted by
 * segments as node by node. */
static void model_from_config_should_equal_the_node_by_node_build_for_every_fixture(void **state)
{
    (void)state;
    DIR *d = opendir("tests/fixtures/models");
    assert_non_null(d);
    char name[256];
    struct fg_config *doc;
    int models = 0;
    while ((doc = next_fixture_config(d, name, sizeof name))) {
        struct fg_err err = {0};
        struct fg_model *a = NULL, *b = NULL;
        int ra = fg_model_from_config(doc, name, &a, &err);
        int rb = fg__model_from_config(doc, name, true, &b, &err);
        assert_int_equal(ra, rb);
        if (ra == 0) {
            assert_int_equal(a->n_nodes, b->n_nodes);
            assert_memory_equal(a->nodes, b->nodes, a->n_nodes * sizeof *a->nodes);
            assert_int_equal(a->n_segs, b->n_segs);
            for (size_t i = 0; i < a->n_segs; i++) { /* field by field: padding is not set */
                const struct fg_seg *x = &a->segs[i], *y = &b->segs[i];
                assert_true(x->first == y->first && x->n == y->n && x->layer == y->layer &&
                            x->rep == y->rep && x->run == y->run && x->side == y->side);
            }
            assert_int_equal(a->params_total, b->params_total);
            assert_int_equal(a->layers, b->layers);
            /* main layers by segments, as by the node walk */
            struct fg_seg *segs = a->segs;
            a->segs = NULL;
            uint32_t walked = fg_model_main_layers(a);
            a->segs = segs;
            assert_int_equal(fg_model_main_layers(a), walked);
            models++;
        }
        fg_model_free(a);
        fg_model_free(b);
        fg_config_free(doc);
    }
    closedir(d);
    assert_true(models >= 80);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(model_add_block_should_name_a_node_as_snprintf_does),
        cmocka_unit_test(model_repeat_block_should_give_the_nodes_a_build_gives),
        cmocka_unit_test(model_repeat_block_should_decline_what_it_cannot_copy_exactly),
        cmocka_unit_test(model_from_config_should_equal_the_node_by_node_build_for_every_fixture),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
