/*
 * test_config.c - strict typed reads of config.json and the errors bad
 * input gets (file and key named, no crash).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "model.h"

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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
