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
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "arch/graph.h"
#include "source/config.h"
#include "source/config_classes.h"
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

/* Python's json.dumps writes an infinite float as Infinity, and transformers' save_pretrained
 * does so for Mamba2Config's time_step_limit (mistralai/Mamba-Codestral-7B-v0.1,
 * tests/fixtures/models): the word reads as an infinite number outside strings, stays text
 * inside them, and a line number past it still counts from the file as written. */
static void parse_should_read_python_infinity_as_a_number(void **state)
{
    (void)state;
    struct fg_config *doc = parse("{\"time_step_limit\": [0.0, Infinity], \"low\": -Infinity, "
                                  "\"s\": \"Infinity \\\" Infinity\"}");
    struct fg_cfg c = fg_config_root(doc);
    const cJSON *lim = cJSON_GetObjectItemCaseSensitive(c.obj, "time_step_limit");
    assert_true(isinf(cJSON_GetArrayItem(lim, 1)->valuedouble));
    assert_true(cJSON_GetObjectItemCaseSensitive(c.obj, "low")->valuedouble < 0);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(c.obj, "s")->valuestring,
                        "Infinity \" Infinity");
    fg_config_free(doc);
    struct fg_err err = {0};
    const char *bad = "{\"a\": Infinity,\n\"b\": Infinit}";
    assert_int_equal(fg_config_parse(bad, strlen(bad), "bad.json", &doc, &err), FG_E_PARSE);
    assert_non_null(strstr(err.detail, "line 2"));
    assert_int_equal(fg_config_parse("{\"a\": NaN}", 11, "nan.json", &doc, &err), FG_E_PARSE);
    /* a config fetched from the hub or the cache is checked the same way */
    const char *fetched = "{\"a\": [0.0, Infinity]}", *broken = "{\"a\": Infinit}";
    assert_true(fg__config_is_object(fetched, strlen(fetched)));
    assert_false(fg__config_is_object(broken, strlen(broken)));
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
    /* LlamaConfig.validate_architecture's own ValueError, then the keys as spelled */
    assert_non_null(strstr(err.detail, "LlamaConfig: The hidden size (100) is not a multiple "
                                       "of the number of attention heads (3)."));
    assert_non_null(strstr(err.detail, "'hidden_size' = 100"));
    fg_config_free(doc);
    /* a class that states no such check: fitgate's own words */
    doc = parse("{\"model_type\": \"qwen2\", \"hidden_size\": 100, \"num_attention_heads\": 3}");
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

/* ---- the config classes (source/config_classes.tsv) ---------------------------- */

static void str_array_should_split_the_string_the_class_splits(void **state)
{
    (void)state;
    /* DebertaV2Config.__init__: [x.strip() for x in pos_att_type.lower().split("|")] */
    struct fg_config *doc = parse("{\"model_type\": \"deberta-v2\", \"pos_att_type\": \"P2C| c2p\"}");
    struct fg_cfg c = fg_config_root(doc);
    const char *a[4];
    size_t n = 0;
    assert_int_equal(fg_cfg_str_array(&c, "pos_att_type", a, 4, &n, NULL), 0);
    assert_int_equal(n, 2);
    assert_string_equal(a[0], "p2c");
    assert_string_equal(a[1], "c2p");
    fg_config_free(doc);
}

static void str_array_should_refuse_a_string_the_class_keeps(void **state)
{
    (void)state;
    struct fg_config *doc = parse("{\"model_type\": \"llama\", \"pos_att_type\": \"p2c|c2p\"}");
    struct fg_cfg c = fg_config_root(doc);
    const char *a[4];
    size_t n = 0;
    struct fg_err err = {0};
    assert_int_equal(fg_cfg_str_array(&c, "pos_att_type", a, 4, &n, &err), FG_E_TYPE);
    assert_non_null(strstr(err.detail, "'pos_att_type'"));
    fg_config_free(doc);
}

static void u64_should_take_the_class_default_for_an_absent_key(void **state)
{
    (void)state;
    struct fg_config *doc = parse("{\"model_type\": \"deberta-v2\", \"vocab_size\": null}");
    struct fg_cfg c = fg_config_root(doc);
    uint64_t v = 0;
    bool b = true;
    /* DebertaV2Config(hidden_size=1536, relative_attention=False) */
    assert_int_equal(fg_cfg_u64(&c, "hidden_size", 7, 1, 1 << 20, &v, NULL), 0);
    assert_int_equal(v, 1536);
    assert_int_equal(fg_cfg_bool(&c, "relative_attention", true, &b, NULL), 0);
    assert_false(b);
    /* null is None to the class: the caller's default stands */
    assert_int_equal(fg_cfg_u64(&c, "vocab_size", 7, 1, 1 << 20, &v, NULL), 0);
    assert_int_equal(v, 7);
    /* a class default outside the caller's range is a sentinel the caller spells */
    double f = 0;
    assert_int_equal(fg_cfg_f64(&c, "max_relative_positions", 5, 0, 1e6, &f, NULL), 0);
    assert_true(f == 5);
    fg_config_free(doc);
}

static void u64_should_leave_a_derived_field_to_the_caller(void **state)
{
    (void)state;
    /* MistralConfig(sliding_window=4096) holds it as given; Qwen2Config.__post_init__ sets
     * it to None unless use_sliding_window, so its literal 4096 is not what the class holds */
    struct fg_config *doc = parse("{\"model_type\": \"mistral\"}");
    struct fg_cfg c = fg_config_root(doc);
    uint64_t v = 0;
    assert_int_equal(fg_cfg_u64(&c, "sliding_window", 0, 0, 1 << 30, &v, NULL), 0);
    assert_int_equal(v, 4096);
    fg_config_free(doc);
    doc = parse("{\"model_type\": \"qwen2\"}");
    c = fg_config_root(doc);
    assert_int_equal(fg_cfg_u64(&c, "sliding_window", 0, 0, 1 << 30, &v, NULL), 0);
    assert_int_equal(v, 0);
    /* MistralConfig's 4096 * 32, evaluated by the generator */
    fg_config_free(doc);
    doc = parse("{\"model_type\": \"mistral\"}");
    c = fg_config_root(doc);
    assert_int_equal(fg_cfg_u64(&c, "max_position_embeddings", 1, 1, 1 << 30, &v, NULL), 0);
    assert_int_equal(v, 131072);
    fg_config_free(doc);
}

static void u64_should_keep_the_callers_default_without_a_class(void **state)
{
    (void)state;
    struct fg_config *doc = parse("{\"model_type\": \"no-such-type\"}");
    struct fg_cfg c = fg_config_root(doc);
    uint64_t v = 0;
    assert_int_equal(fg_cfg_u64(&c, "hidden_size", 7, 1, 1 << 20, &v, NULL), 0);
    assert_int_equal(v, 7);
    fg_config_free(doc);
}

static void u64_should_read_a_key_by_its_attribute_map_name(void **state)
{
    (void)state;
    /* GPT2Config.attribute_map: hidden_size -> n_embd, num_hidden_layers -> n_layer */
    struct fg_config *doc = parse("{\"model_type\": \"gpt2\", \"hidden_size\": 1024, "
                                  "\"n_layer\": 24}");
    struct fg_cfg c = fg_config_root(doc);
    uint64_t v = 0;
    assert_int_equal(fg_cfg_u64(&c, "n_embd", 1, 1, 1 << 20, &v, NULL), 0);
    assert_int_equal(v, 1024);
    assert_int_equal(fg_cfg_u64(&c, "num_hidden_layers", 1, 1, 1 << 20, &v, NULL), 0);
    assert_int_equal(v, 24);
    char key[32];
    assert_true(fg_cfg_key(&c, "n_embd", key, sizeof key));
    assert_string_equal(key, "hidden_size"); /* as the file spells it, for messages */
    assert_false(fg_cfg_key(&c, "n_inner", key, sizeof key));
    /* absent under both names: the attribute's default, GPT2Config(n_head=12) */
    assert_int_equal(fg_cfg_u64(&c, "num_attention_heads", 1, 1, 1 << 20, &v, NULL), 0);
    assert_int_equal(v, 12);
    fg_config_free(doc);
}

static void u64_should_read_a_legacy_name_the_class_accepts(void **state)
{
    (void)state;
    /* FalconConfig.__post_init__: n_embed = kwargs.pop("n_embed", None) stands for
     * hidden_size; num_hidden_layers keeps its field default 32 */
    struct fg_config *doc = parse("{\"model_type\": \"falcon\", \"n_embed\": 1024}");
    struct fg_cfg c = fg_config_root(doc);
    uint64_t v = 0;
    assert_int_equal(fg_cfg_u64(&c, "hidden_size", 1, 1, 1 << 20, &v, NULL), 0);
    assert_int_equal(v, 1024);
    assert_int_equal(fg_cfg_u64(&c, "num_hidden_layers|n_layer", 1, 1, 1 << 20, &v, NULL), 0);
    assert_int_equal(v, 32);
    fg_config_free(doc);
}

static void child_should_read_by_its_own_model_type(void **state)
{
    (void)state;
    struct fg_config *doc = parse("{\"model_type\": \"llava\", \"text_config\": "
                                  "{\"model_type\": \"deberta-v2\", \"pos_att_type\": \"c2p\"}}");
    struct fg_cfg c = fg_config_root(doc), t;
    assert_true(fg_cfg_child(&c, "text_config", &t, NULL));
    const char *a[4];
    size_t n = 0;
    uint64_t v = 0;
    assert_int_equal(fg_cfg_str_array(&t, "pos_att_type", a, 4, &n, NULL), 0);
    assert_int_equal(n, 1);
    assert_string_equal(a[0], "c2p");
    assert_int_equal(fg_cfg_u64(&t, "num_hidden_layers", 1, 1, 1 << 20, &v, NULL), 0);
    assert_int_equal(v, 24);
    fg_config_free(doc);
}

static void class_fill_should_build_the_sub_config_the_class_builds_when_absent(void **state)
{
    (void)state;
    /* LlavaConfig: vision_config None -> CONFIG_MAPPING["clip_vision_model"](hidden_size=1024,
     * ...); what the call leaves out is CLIPVisionConfig's default (layer_norm_eps 1e-5) */
    struct fg_config *doc = parse("{\"model_type\": \"llava\"}"), *fill = NULL;
    struct fg_cfg c = fg_config_root(doc);
    const char *cls = NULL;
    assert_int_equal(fg_cfg_class_fill(&c, "vision_config", &fill, &cls, NULL), 0);
    assert_non_null(fill);
    assert_string_equal(cls, "LlavaConfig");
    struct fg_cfg v = fg_config_root(fill);
    uint64_t n = 0;
    double eps = 0;
    assert_int_equal(fg_cfg_u64(&v, "hidden_size", 1, 1, 1 << 20, &n, NULL), 0);
    assert_int_equal(n, 1024);
    assert_int_equal(fg_cfg_f64(&v, "layer_norm_eps", 1, 0, 1, &eps, NULL), 0);
    assert_true(eps == 1e-5);
    assert_non_null(strstr(fg_config_origin(fill), "LlavaConfig's default vision_config"));
    fg_config_free(fill);
    /* the text model the class builds is LlamaConfig(): no literal override, but a fill */
    assert_int_equal(fg_cfg_class_fill(&c, "text_config", &fill, &cls, NULL), 0);
    assert_non_null(fill);
    fg_config_free(fill);
    /* a present sub-config, or a class that builds none, fills nothing */
    assert_int_equal(fg_cfg_class_fill(&c, "audio_config", &fill, &cls, NULL), 0);
    assert_null(fill);
    fg_config_free(doc);
    doc = parse("{\"model_type\": \"llava\", \"vision_config\": {\"hidden_size\": 64}}");
    c = fg_config_root(doc);
    assert_int_equal(fg_cfg_class_fill(&c, "vision_config", &fill, &cls, NULL), 0);
    assert_null(fill);
    fg_config_free(doc);
}

static void child_should_read_a_sub_config_without_model_type_as_its_fallback_type(
    void **state)
{
    (void)state;
    /* LlavaConfig: vision_config.get("model_type", "clip_vision_model") */
    struct fg_config *doc = parse("{\"model_type\": \"llava\", \"vision_config\": "
                                  "{\"num_hidden_layers\": 2}}");
    struct fg_cfg c = fg_config_root(doc), v;
    uint64_t n = 0;
    assert_true(fg_cfg_child(&c, "vision_config", &v, NULL));
    assert_int_equal(fg_cfg_u64(&v, "patch_size", 1, 1, 1 << 20, &n, NULL), 0);
    assert_int_equal(n, 32); /* CLIPVisionConfig.patch_size */
    fg_config_free(doc);
}

/* Every class whose validate_architecture / __post_init__ refuses a hidden size its heads do
 * not divide is refused with its own ValueError, the values spliced in (14 classes of the
 * table: LlamaConfig, Gemma2Config, CLIPVisionConfig, DeepseekV2Config ...). */
static void class_refusal_should_give_each_class_its_own_message(void **state)
{
    (void)state;
    size_t checked = 0;
    for (size_t i = 0; i < fg__cfg_nrules; i++) {
        const struct fg__cfg_rule *r = &fg__cfg_rules[i];
        if (r->kind != FG__CFG_DIVIDES || strcmp(r->key, "hidden_size") ||
            strcmp(r->value, "num_attention_heads"))
            continue;
        char json[256], buf[512], want[256];
        snprintf(json, sizeof json, "{\"model_type\": \"%s\", \"hidden_size\": 100, "
                 "\"num_attention_heads\": 3}", r->model_type);
        struct fg_config *doc = parse(json);
        struct fg_cfg c = fg_config_root(doc);
        assert_true(fg_cfg_class_refusal(&c, "hidden_size", "num_attention_heads", buf,
                                         sizeof buf));
        snprintf(want, sizeof want, "%s: ", r->cls);
        assert_memory_equal(buf, want, strlen(want));
        if (strstr(r->message, "{hidden_size}"))
            assert_non_null(strstr(buf, "(100)"));
        assert_null(strchr(buf, '{'));
        fg_config_free(doc);
        checked++;
    }
    assert_true(checked >= 14);
}

static void class_table_should_be_sorted_by_model_type(void **state)
{
    (void)state;
    for (size_t i = 1; i < fg__cfg_nrules; i++)
        assert_true(strcmp(fg__cfg_rules[i - 1].model_type, fg__cfg_rules[i].model_type) <= 0);
    assert_true(fg__cfg_nrules > 0);
}

static const struct fg_cfg_over over_rows[] = {
    {FG_CFG_HIDE, "head_dim", NULL},
    {FG_CFG_SET, "attention_bias", FG_CFG_TRUE},
    {FG_CFG_DEFAULT, "num_key_value_heads", FG_CFG_NUMBER(2)},
    {FG_CFG_DEFAULT, "vocab_size", FG_CFG_NUMBER(151424)},
    {0, NULL, NULL},
};

/* A view's over rows: a hidden key reads as absent, a set key as its value whatever the file
 * says, a default where the object lacks the key (after what it inherits); the file's hidden
 * and set keys count as read. */
static void over_should_hide_set_and_default_keys_and_record_the_reads(void **state)
{
    (void)state;
    struct fg_config *doc = parse("{\"tie_word_embeddings\": true, \"text_config\": "
                                  "{\"head_dim\": 64, \"attention_bias\": false, "
                                  "\"vocab_size\": 7}}");
    struct fg_cfg root = fg_config_root(doc), t;
    assert_true(fg_cfg_child(&root, "text_config", &t, NULL));
    t.over = over_rows;
    t.outer = &root;
    t.inherit = "tie_word_embeddings";
    uint64_t v = 0;
    bool b = false;
    assert_false(fg_cfg_has(&t, "head_dim"));
    assert_int_equal(fg_cfg_u64(&t, "head_dim", 128, 1, 1024, &v, NULL), 0);
    assert_int_equal(v, 128);
    assert_int_equal(fg_cfg_bool(&t, "attention_bias", false, &b, NULL), 0);
    assert_true(b);
    assert_int_equal(fg_cfg_u64(&t, "num_key_value_heads|n_head_kv", 32, 1, 1024, &v, NULL), 0);
    assert_int_equal(v, 2);
    assert_int_equal(fg_cfg_u64(&t, "vocab_size", 1, 1, 1u << 20, &v, NULL), 0);
    assert_int_equal(v, 7); /* present: the default does not apply */
    assert_int_equal(fg_cfg_bool(&t, "tie_word_embeddings", false, &b, NULL), 0);
    assert_true(b);         /* inherited ahead of any default */
    assert_null(fg__cfg_raw(&t, "head_dim"));
    assert_true(cJSON_IsTrue(fg__cfg_raw(&t, "attention_bias")));
    assert_true(fg__cfg_was_read(&t, "head_dim"));
    assert_true(fg__cfg_was_read(&t, "attention_bias"));
    /* the root's own view is unchanged */
    assert_true(fg_cfg_has(&root, "text_config"));
    struct fg_cfg plain;
    assert_true(fg_cfg_child(&root, "text_config", &plain, NULL));
    assert_null(plain.over);
    assert_int_equal(fg_cfg_u64(&plain, "head_dim", 128, 1, 1024, &v, NULL), 0);
    assert_int_equal(v, 64);
    fg_config_free(doc);
}

/* Idefics2-8b's perceiver_config gives model_type and qk_layer_norms, neither of which the
 * reader sizes from; every key it asks is absent and defaulted.  It was read all the same,
 * so a key it never asks (an added shape key) must still make the count unsure. */
static void next_read_child_should_count_a_sub_config_whose_asked_keys_are_all_absent(void **state)
{
    (void)state;
    struct fg_config *doc = parse("{\"perceiver_config\": {\"model_type\": \"idefics2\", "
                                  "\"qk_layer_norms\": false}}");
    struct fg_cfg root = fg_config_root(doc), p, seen;
    assert_true(fg_cfg_child(&root, "perceiver_config", &p, NULL));
    uint64_t v = 0;
    assert_int_equal(fg_cfg_u64(&p, "resampler_depth", 3, 1, 64, &v, NULL), 0);
    assert_int_equal(v, 3);
    size_t pos = 0;
    assert_true(fg__cfg_next_read_child(&root, &pos, &seen));
    assert_string_equal(seen.scope, "perceiver_config");
    assert_false(fg__cfg_next_read_child(&root, &pos, &seen));
    fg_config_free(doc);
}

/* Entered but with only model_type looked at: its reads are not known, so it is left out. */
static void next_read_child_should_skip_a_sub_config_read_for_model_type_alone(void **state)
{
    (void)state;
    struct fg_config *doc = parse("{\"vision_config\": {\"model_type\": \"x\", "
                                  "\"hidden_size\": 8}}");
    struct fg_cfg root = fg_config_root(doc), vc, seen;
    assert_true(fg_cfg_child(&root, "vision_config", &vc, NULL));
    assert_non_null(fg__cfg_raw(&vc, "model_type"));
    size_t pos = 0;
    assert_false(fg__cfg_next_read_child(&root, &pos, &seen));
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
        cmocka_unit_test(parse_should_read_python_infinity_as_a_number),
        cmocka_unit_test(parse_should_survive_deep_nesting),
        cmocka_unit_test(load_should_name_directory_without_config),
        cmocka_unit_test(model_should_fall_back_to_generic_decoder_and_say_so),
        cmocka_unit_test(model_should_reject_unknown_type_without_standard_keys),
        cmocka_unit_test(model_should_reject_heads_not_dividing),
        cmocka_unit_test(lookup_should_answer_the_same_through_the_index_as_by_walking),
        cmocka_unit_test(str_array_should_split_the_string_the_class_splits),
        cmocka_unit_test(str_array_should_refuse_a_string_the_class_keeps),
        cmocka_unit_test(u64_should_take_the_class_default_for_an_absent_key),
        cmocka_unit_test(u64_should_keep_the_callers_default_without_a_class),
        cmocka_unit_test(u64_should_leave_a_derived_field_to_the_caller),
        cmocka_unit_test(u64_should_read_a_key_by_its_attribute_map_name),
        cmocka_unit_test(u64_should_read_a_legacy_name_the_class_accepts),
        cmocka_unit_test(child_should_read_by_its_own_model_type),
        cmocka_unit_test(class_fill_should_build_the_sub_config_the_class_builds_when_absent),
        cmocka_unit_test(child_should_read_a_sub_config_without_model_type_as_its_fallback_type),
        cmocka_unit_test(class_refusal_should_give_each_class_its_own_message),
        cmocka_unit_test(class_table_should_be_sorted_by_model_type),
        cmocka_unit_test(over_should_hide_set_and_default_keys_and_record_the_reads),
        cmocka_unit_test(next_read_child_should_count_a_sub_config_whose_asked_keys_are_all_absent),
        cmocka_unit_test(next_read_child_should_skip_a_sub_config_read_for_model_type_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
