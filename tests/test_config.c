/*
 * test_config.c - strict typed reads of config.json and the errors bad
 * input gets (file and key named, no crash).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "arch/graph.h"
#include "source/config.h"
#include "model/model.h"
#include "support.h"

static struct fg_config *parse(const char *text)
{
    struct fg_config *doc = NULL;
    struct fg_err err = {0};
    assert_int_equal(fg_config_parse(text, strlen(text), "t.json", &doc, &err), 0);
    return doc;
}

static void u64_should_use_default_when_key_missing_or_null(void **state)
{
    (void)state;
    struct fg_config *doc = parse("{\"a\": null}");
    struct fg_cfg c = fg_config_root(doc);
    uint64_t v = 0;
    assert_int_equal(fg_cfg_u64(&c, "a", 7, 0, 10, &v, NULL), 0);
    assert_int_equal(v, 7);
    assert_int_equal(fg_cfg_u64(&c, "b", 9, 0, 10, &v, NULL), 0);
    assert_int_equal(v, 9);
    fg_config_free(doc);
}

static void u64_should_take_first_present_alias(void **state)
{
    (void)state;
    struct fg_config *doc = parse("{\"n_embd\": 768, \"d_model\": 5}");
    struct fg_cfg c = fg_config_root(doc);
    uint64_t v = 0;
    assert_int_equal(fg_cfg_u64(&c, "hidden_size|n_embd|d_model", 1, 1, 1 << 20, &v, NULL), 0);
    assert_int_equal(v, 768);
    fg_config_free(doc);
}

static void u64_should_reject_string_naming_file_and_key(void **state)
{
    (void)state;
    struct fg_config *doc = parse("{\"hidden_size\": \"4096\"}");
    struct fg_cfg c = fg_config_root(doc);
    struct fg_err err = {0};
    uint64_t v = 0;
    assert_int_equal(fg_cfg_u64(&c, "hidden_size", 1, 1, 1 << 20, &v, &err), FG_E_TYPE);
    assert_non_null(strstr(err.detail, "t.json"));
    assert_non_null(strstr(err.detail, "'hidden_size'"));
    assert_non_null(strstr(err.detail, "string"));
    fg_config_free(doc);
}

static void u64_should_reject_negative_fractional_and_absurd(void **state)
{
    (void)state;
    struct fg_config *doc = parse("{\"a\": -1, \"b\": 1.5, \"c\": 1e300}");
    struct fg_cfg c = fg_config_root(doc);
    struct fg_err err = {0};
    uint64_t v = 0;
    assert_int_equal(fg_cfg_u64(&c, "a", 1, 1, 100, &v, &err), FG_E_RANGE);
    assert_int_equal(fg_cfg_u64(&c, "b", 1, 1, 100, &v, &err), FG_E_TYPE);
    assert_int_equal(fg_cfg_u64(&c, "c", 1, 1, 100, &v, &err), FG_E_RANGE);
    fg_config_free(doc);
}

static void parse_should_reject_malformed_json_with_line(void **state)
{
    (void)state;
    struct fg_config *doc = NULL;
    struct fg_err err = {0};
    const char *bad = "{\n\"a\": 1,\n\"b\": }";
    assert_int_equal(fg_config_parse(bad, strlen(bad), "bad.json", &doc, &err), FG_E_PARSE);
    assert_null(doc);
    assert_non_null(strstr(err.detail, "bad.json"));
    assert_non_null(strstr(err.detail, "line 3"));
    assert_int_equal(fg_config_parse("[1,2]", 5, "arr.json", &doc, &err), FG_E_PARSE);
}

static void parse_should_survive_deep_nesting(void **state)
{
    (void)state;
    char buf[20001];
    memset(buf, '[', 10000);
    memset(buf + 10000, ']', 10000);
    buf[20000] = 0;
    struct fg_config *doc = NULL;
    assert_int_equal(fg_config_parse(buf, 20000, "deep.json", &doc, NULL), FG_E_PARSE);
}

static void load_should_name_directory_without_config(void **state)
{
    (void)state;
    struct fg_config *doc = NULL;
    struct fg_err err = {0};
    assert_int_equal(fg_config_load("tests", &doc, &err), FG_E_NOTFOUND);
    assert_non_null(strstr(err.detail, "no config.json"));
    assert_int_equal(fg_config_load("/nonexistent/config.json", &doc, &err), FG_E_NOTFOUND);
}

static void model_should_fall_back_to_generic_decoder_and_say_so(void **state)
{
    (void)state;
    const char *t = "{\"model_type\": \"brandnew\", \"hidden_size\": 64, \"num_hidden_layers\": 2,"
                    "\"num_attention_heads\": 4, \"vocab_size\": 100, \"intermediate_size\": 128}";
    struct fg_config *doc = parse(t);
    struct fg_model *m = NULL;
    assert_int_equal(fg_model_from_config(doc, "x", &m, NULL), 0);
    assert_true(m->generic);
    assert_true(m->n_notes >= 1);
    assert_non_null(strstr(m->notes[0], "generic decoder"));
    fg_model_free(m);
    fg_config_free(doc);
}

static void model_should_reject_unknown_type_without_standard_keys(void **state)
{
    (void)state;
    struct fg_config *doc = parse("{\"model_type\": \"weird\", \"foo\": 1}");
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(fg_model_from_config(doc, "x", &m, &err), FG_E_UNSUPPORTED);
    assert_null(m);
    assert_non_null(strstr(err.detail, "weird"));
    assert_non_null(strstr(err.detail, "hidden_size"));
    fg_config_free(doc);
}

static void model_should_reject_heads_not_dividing(void **state)
{
    (void)state;
    struct fg_config *doc = parse("{\"model_type\": \"llama\", \"hidden_size\": 100,"
                                  "\"num_attention_heads\": 3}");
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    assert_int_equal(fg_model_from_config(doc, "x", &m, &err), FG_E_RANGE);
    assert_non_null(strstr(err.detail, "divisible"));
    fg_config_free(doc);
}

/* What the root view answers for keys, through the document's key index and by walking
 * the object (the index left out): the value or error, and the key an error names. */
static void assert_same_both_ways(const struct fg_config *doc, const char *keys)
{
    struct fg_cfg root = fg_config_root(doc), walk = root;
    assert_non_null(root.index);
    walk.index = NULL;
    struct fg_err e1 = {0}, e2 = {0};
    uint64_t u1 = 1, u2 = 2;
    const char *s1 = "x", *s2 = "y";
    assert_int_equal(fg_cfg_has(&root, keys), fg_cfg_has(&walk, keys));
    assert_int_equal(fg_cfg_u64(&root, keys, 7, 0, UINT64_MAX, &u1, &e1),
                     fg_cfg_u64(&walk, keys, 7, 0, UINT64_MAX, &u2, &e2));
    assert_string_equal(e1.detail, e2.detail);
    if (!e1.code)
        assert_true(u1 == u2);
    memset(&e1, 0, sizeof e1);
    memset(&e2, 0, sizeof e2);
    assert_int_equal(fg_cfg_str(&root, keys, "def", &s1, &e1),
                     fg_cfg_str(&walk, keys, "def", &s2, &e2));
    assert_string_equal(e1.detail, e2.detail);
    if (!e1.code)
        assert_ptr_equal(s1, s2);
}

static void lookup_should_answer_the_same_through_the_index_as_by_walking(void **state)
{
    (void)state;
    /* duplicates (the last counts), nulls, an empty name, aliases present and absent */
    struct fg_config *doc = parse("{\"a\": 1, \"a\": null, \"b\": null, \"b\": 2, \"\": 3, "
                                  "\"s\": \"t\", \"s\": \"u\", \"ab\": 4, \"c\": {\"a\": 5}}");
    static const char *const keys[] = {"a", "b", "", "s", "ab", "c", "a|b", "b|a", "zz|ab",
                                       "ab|a", "zz", "zz|yy|", "A", "a|", "|s"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        assert_same_both_ways(doc, keys[i]);
    fg_config_free(doc);
    /* every key of every fixture config, alone and as a second alias */
    DIR *d = opendir("tests/fixtures/models");
    assert_non_null(d);
    char name[256];
    int configs = 0;
    while ((doc = next_fixture_config(d, name, sizeof name))) {
        struct fg_cfg root = fg_config_root(doc);
        const cJSON *e;
        cJSON_ArrayForEach(e, root.obj) {
            char two[300];
            assert_same_both_ways(doc, e->string);
            snprintf(two, sizeof two, "not_a_key|%s", e->string);
            assert_same_both_ways(doc, two);
        }
        configs++;
        fg_config_free(doc);
    }
    closedir(d);
    assert_true(configs >= 80);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(u64_should_use_default_when_key_missing_or_null),
        cmocka_unit_test(u64_should_take_first_present_alias),
        cmocka_unit_test(u64_should_reject_string_naming_file_and_key),
        cmocka_unit_test(u64_should_reject_negative_fractional_and_absurd),
        cmocka_unit_test(parse_should_reject_malformed_json_with_line),
        cmocka_unit_test(parse_should_survive_deep_nesting),
        cmocka_unit_test(load_should_name_directory_without_config),
        cmocka_unit_test(model_should_fall_back_to_generic_decoder_and_say_so),
        cmocka_unit_test(model_should_reject_unknown_type_without_standard_keys),
        cmocka_unit_test(model_should_reject_heads_not_dividing),
        cmocka_unit_test(lookup_should_answer_the_same_through_the_index_as_by_walking),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
