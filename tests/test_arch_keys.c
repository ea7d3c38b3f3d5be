/*
 * test_arch_keys.c - the table of keys that change stored shapes (engine/arch/keys.c)
 * and the check that makes a family reader's count unsure when it leaves one unread.
 *
 * Every real config.json under tests/fixtures (the model fixtures of truth.tsv and the hub
 * fixtures) is read, then read again with one key of the table added that it lacks, at the
 * root and in each sub-config (text_config, vision_config ...) its reader entered.  Whether
 * the reader read the added key is asked of the document afterwards (fg__cfg_was_read), so
 * no list of keys per model is written here: a key left unread must give `unsure` or an
 * error, never `exact`.  A new reader that forgets a key is caught as today's are.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support.h"
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/keys.h"
#include "source/config.h"
#include "util/fileio.h"

/* Where real configs are: DIR/NAME/config.json (models), DIR/ORG/NAME/config.json (hub). */
static const struct {
    const char *dir;
    unsigned depth;
} roots[] = {{"tests/fixtures/models", 1}, {"tests/fixtures/hub/repos", 2}};

/* A value that switches a key of this kind on. */
static cJSON *value_of(enum fg_shape_kind kind)
{
    switch (kind) {
    case FG_SHAPE_CONFIG:
        return cJSON_Parse("{\"model_type\": \"siglip_vision_model\", \"hidden_size\": 1152, "
                           "\"num_hidden_layers\": 27, \"intermediate_size\": 4304}");
    case FG_SHAPE_COUNT:
        return cJSON_CreateNumber(2);
    case FG_SHAPE_FLAG:
        return cJSON_CreateTrue();
    case FG_SHAPE_NAME:
        return cJSON_CreateString("openai/clip-vit-large-patch14-336");
    case FG_SHAPE_LIST:
        return cJSON_Parse("[1]");
    case FG_SHAPE_LAYER_KINDS:
        return cJSON_Parse("[\"linear_attention\", \"full_attention\"]");
    }
    return NULL;
}

struct tally {
    unsigned configs, tried, unread_unsure, unread_refused, read, read_same, wrong;
};

/* Read text; *doc keeps the document for the questions asked after.  0 or the reader's
 * code. */
static int read_text(const char *text, const char *name, struct fg_config **doc,
                     struct fg_model **m)
{
    struct fg_err err = {0};
    *m = NULL;
    int rc = fg_config_parse(text, strlen(text), name, doc, &err);
    return rc ? rc : fg_model_from_config(*doc, name, m, &err);
}

/* Read text as name: its certainty is want, and when key is given, the unsure key is key
 * and a note holds note. */
static void expect_certainty(const char *text, const char *name, enum fg_certainty want,
                             const char *key, const char *note)
{
    struct fg_config *doc = NULL;
    struct fg_model *m = NULL;
    assert_int_equal(read_text(text, name, &doc, &m), 0);
    assert_int_equal(m->certainty, want);
    if (key) {
        assert_string_equal(m->unsure_key, key);
        bool named = false;
        for (size_t n = 0; n < m->n_notes; n++)
            named |= strstr(m->notes[n], note) != NULL;
        assert_true(named);
    }
    fg_model_free(m);
    fg_config_free(doc);
}

/* The view of scope ("" the root, else a member of the root) in doc. */
static bool view_of(const struct fg_config *doc, const char *scope, struct fg_cfg *v)
{
    struct fg_cfg root = fg_config_root(doc);
    if (!*scope) {
        *v = root;
        return true;
    }
    return fg_cfg_child(&root, scope, v, NULL);
}

/* config j (the fixture) with key added in scope: unread by the reader means not exact. */
static void try_key(const cJSON *j, const char *name, const char *scope,
                    const struct fg__shape_key *k, uint64_t base, struct tally *t)
{
    cJSON *x = cJSON_Duplicate(j, 1);
    assert_non_null(x);
    cJSON *where = *scope ? cJSON_GetObjectItemCaseSensitive(x, scope) : x;
    if (cJSON_GetObjectItemCaseSensitive(where, k->key)) {
        cJSON_Delete(x); /* the fixture has it: its certainty is the base's */
        return;
    }
    cJSON_AddItemToObject(where, k->key, value_of(k->kind));
    char *text = cJSON_PrintUnformatted(x);
    cJSON_Delete(x);
    struct fg_config *doc = NULL;
    struct fg_model *m = NULL;
    int rc = read_text(text, name, &doc, &m);
    free(text);
    struct fg_cfg v;
    bool read = view_of(doc, scope, &v) && fg__cfg_was_read(&v, k->key);
    t->tried++;
    if (read)
        t->read++; /* sized, unsure or refused by the reader that knows it, or no change
                    * in its class (tie_word_embeddings true where tied by default) */
    if (read)
        t->read_same += !rc && m->certainty == FG_CERT_EXACT && m->params_total == base;
    else if (rc)
        t->unread_refused++;
    else if (fg_model_unsure_of_memory(m))
        t->unread_unsure++;
    else if (k->built && k->built(m))
        t->read++; /* the graph holds what the key means (an encoder-decoder's flag) */
    else {
        print_message("WRONG %s + %s%s%s: unread, still exact at %llu\n", name, scope,
                      *scope ? "." : "", k->key, (unsigned long long)m->params_total);
        t->wrong++;
    }
    fg_model_free(m);
    fg_config_free(doc);
}

/* One fixture: every key of the table it lacks, at the root and in every sub-config the
 * reader entered. */
static void try_fixture(const char *path, const char *name, struct tally *t)
{
    char *buf = NULL;
    size_t len = 0;
    if (fg__read_file(path, FG_CONFIG_MAX_BYTES, &buf, &len))
        return;
    struct fg_config *doc = NULL;
    struct fg_model *base = NULL;
    int rc = read_text(buf, name, &doc, &base);
    cJSON *j = fixture_json(buf);
    free(buf);
    /* exact, or unsure only whether a tied head is written (Qwen3-0.6B): an unread key must
     * still make either unsure of what is loaded */
    if (!rc && (base->certainty == FG_CERT_EXACT || base->unsure_count_only) && j) {
        t->configs++;
        struct fg_cfg root = fg_config_root(doc);
        const cJSON *sub;
        for (size_t i = 0; fg__shape_key_at(i); i++)
            try_key(j, name, "", fg__shape_key_at(i), base->params_total, t);
        cJSON_ArrayForEach(sub, j)
            if (cJSON_IsObject(sub) && strstr(sub->string, "_config") &&
                fg__cfg_was_read(&root, sub->string) &&
                fg_cfg_has(&root, sub->string) /* (asks again: a read, after the check) */)
                for (size_t i = 0; fg__shape_key_at(i); i++)
                    try_key(j, name, sub->string, fg__shape_key_at(i), base->params_total, t);
    }
    cJSON_Delete(j);
    fg_model_free(base);
    fg_config_free(doc);
}

/* Walk dir to depth, trying every config.json found at that depth. */
static void walk(const char *dir, unsigned depth, const char *prefix, struct tally *t)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *de;
    while ((de = readdir(d))) {
        char path[768], name[512];
        if (de->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        snprintf(name, sizeof name, "%s%s%s", prefix, *prefix ? "/" : "", de->d_name);
        if (depth > 1) {
            if (de->d_type == DT_DIR)
                walk(path, depth - 1, name, t);
            continue;
        }
        char cfg[800];
        snprintf(cfg, sizeof cfg, "%s/config.json", path);
        try_fixture(cfg, name, t);
    }
    closedir(d);
}

static void family_check_unread_should_make_every_fixture_unsure_past_an_unread_key(void **state)
{
    (void)state;
    struct tally t = {0};
    for (size_t r = 0; r < sizeof roots / sizeof roots[0]; r++)
        walk(roots[r].dir, roots[r].depth, "", &t);
    print_message("%u configs read exactly (or unsure of a tied head alone), %u with one key "
                  "added: %u unread -> unsure, %u unread -> refused, %u read by the reader (%u "
                  "of them the same count), %u wrong\n",
                  t.configs, t.tried, t.unread_unsure, t.unread_refused, t.read, t.read_same,
                  t.wrong);
    assert_true(t.configs >= 100);
    assert_true(t.unread_unsure > 50 * t.configs); /* most keys are unread by most readers */
    assert_int_equal(t.wrong, 0);
}

/* The table itself: each key once, a meaning for the note, and every kind of value known. */
static void shape_key_at_should_list_each_key_once_with_its_meaning(void **state)
{
    (void)state;
    size_t n = 0;
    for (const struct fg__shape_key *k; (k = fg__shape_key_at(n)); n++) {
        assert_non_null(k->key);
        assert_non_null(k->what);
        assert_true(k->what[0] != '\0');
        cJSON *v = value_of(k->kind);
        assert_non_null(v);
        cJSON_Delete(v);
        for (size_t i = 0; i < n; i++)
            if (!strcmp(fg__shape_key_at(i)->key, k->key))
                fail_msg("key '%s' listed twice", k->key);
    }
    assert_true(n >= 60);
    assert_null(fg__shape_key_at(n));
}

/* A key in a sub-config the reader entered is checked as a root key is, and the note names
 * where it is, what it means and the reader. */
static void family_check_unread_should_name_a_sub_config_key(void **state)
{
    (void)state;
    static const char text[] =
        "{\"model_type\": \"llava\", \"architectures\": [\"LlavaForConditionalGeneration\"], "
        "\"text_config\": {\"model_type\": \"llama\", \"hidden_size\": 256, "
        "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, \"intermediate_size\": 512, "
        "\"vocab_size\": 1000, \"mtp_num_hidden_layers\": 1}, "
        "\"vision_config\": {\"model_type\": \"clip_vision_model\", \"hidden_size\": 64, "
        "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, \"intermediate_size\": 128, "
        "\"image_size\": 336, \"patch_size\": 14}}";
    struct fg_config *doc = NULL;
    struct fg_model *m = NULL;
    assert_int_equal(read_text(text, "llava+mtp", &doc, &m), 0);
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_string_equal(m->unsure_key, "text_config.mtp_num_hidden_layers");
    bool named = false;
    for (size_t i = 0; i < m->n_notes; i++)
        named |= strstr(m->notes[i], "key 'text_config.mtp_num_hidden_layers' "
                                     "(multi-token-prediction layers) is not read by the") != NULL;
    assert_true(named);
    fg_model_free(m);
    fg_config_free(doc);
}

/* A sub-config the reader entered only to take the class defaults (Emu3-Chat-hf's vq_config
 * holds model_type and _attn_implementation_autoset alone; tests/fixtures/models/
 * BAAI--Emu3-Chat-hf) is checked too: a shape key added there is unread. */
static void family_check_unread_should_check_a_sub_config_read_for_its_defaults(void **state)
{
    (void)state;
    static const char text[] =
        "{\"model_type\": \"emu3\", \"text_config\": {\"model_type\": \"emu3_text_model\"}, "
        "\"vq_config\": {\"model_type\": \"emu3_vqgan\", \"_attn_implementation_autoset\": "
        "true, \"num_local_experts\": 8}}";
    struct fg_config *doc = NULL;
    struct fg_model *m = NULL;
    assert_int_equal(read_text(text, "emu3+experts", &doc, &m), 0);
    assert_int_equal(m->certainty, FG_CERT_UNSURE);
    assert_string_equal(m->unsure_key, "vq_config.num_local_experts");
    fg_model_free(m);
    fg_config_free(doc);
}

/* A key read to decide it changes nothing counts as read: layer_types of attention layers
 * only is off, one linear-attention layer is on. */
static void family_check_unread_should_pass_attention_only_layer_types(void **state)
{
    (void)state;
    static const char *const texts[] = {
        "{\"model_type\": \"llama\", \"hidden_size\": 256, \"num_hidden_layers\": 2, "
        "\"num_attention_heads\": 4, \"intermediate_size\": 512, \"vocab_size\": 1000, "
        "\"layer_types\": [\"full_attention\", \"sliding_attention\"]}",
        "{\"model_type\": \"llama\", \"hidden_size\": 256, \"num_hidden_layers\": 2, "
        "\"num_attention_heads\": 4, \"intermediate_size\": 512, \"vocab_size\": 1000, "
        "\"layer_types\": [\"full_attention\", \"linear_attention\"]}",
    };
    for (size_t i = 0; i < 2; i++)
        expect_certainty(texts[i], "llama", i ? FG_CERT_UNSURE : FG_CERT_EXACT, NULL, NULL);
}

/* A config naming its own config class (auto_map AutoConfig: remote code) takes the
 * transformers class's default for a size it leaves out, which the remote class need not
 * share (a nanochat export without intermediate_size: NanoChatConfig's 8192 against its MLP
 * of 4 x n_embd); with the size written, or without auto_map, the count stays exact. */
static void family_check_remote_defaults_should_doubt_a_size_left_to_the_class(void **state)
{
    (void)state;
    static const char *const texts[] = {
        "{\"model_type\": \"nanochat\", \"auto_map\": {\"AutoConfig\": "
        "\"configuration_nanochat.NanoChatHFConfig\"}, \"hidden_size\": 1280, "
        "\"num_hidden_layers\": 20, \"num_attention_heads\": 10, \"vocab_size\": 65536}",
        "{\"model_type\": \"nanochat\", \"auto_map\": {\"AutoConfig\": "
        "\"configuration_nanochat.NanoChatHFConfig\"}, \"hidden_size\": 1280, "
        "\"num_hidden_layers\": 20, \"num_attention_heads\": 10, \"vocab_size\": 65536, "
        "\"intermediate_size\": 5120, \"num_key_value_heads\": 10}",
        "{\"model_type\": \"nanochat\", \"hidden_size\": 1280, "
        "\"num_hidden_layers\": 20, \"num_attention_heads\": 10, \"vocab_size\": 65536}",
    };
    expect_certainty(texts[0], "nanochat", FG_CERT_UNSURE, "intermediate_size",
                     "NanoChatConfig's default 8192 is counted");
    for (size_t i = 1; i < 3; i++)
        expect_certainty(texts[i], "nanochat", FG_CERT_EXACT, NULL, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shape_key_at_should_list_each_key_once_with_its_meaning),
        cmocka_unit_test(family_check_unread_should_name_a_sub_config_key),
        cmocka_unit_test(family_check_unread_should_check_a_sub_config_read_for_its_defaults),
        cmocka_unit_test(family_check_unread_should_pass_attention_only_layer_types),
        cmocka_unit_test(family_check_remote_defaults_should_doubt_a_size_left_to_the_class),
        cmocka_unit_test(family_check_unread_should_make_every_fixture_unsure_past_an_unread_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
