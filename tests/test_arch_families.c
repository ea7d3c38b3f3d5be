/*
 * test_arch_families.c - the families table (engine/arch/families.c, 'fitgate families')
 * against transformers' own auto-mapping lists, vendored in
 * tests/fixtures/transformers/modeling_auto_mappings.tsv: every (list, model_type, class)
 * there is in the table with the same class, nothing is in a list that the file does not
 * put there, every registered reader shows as exact, and a refused type is refused by name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <cjson/cJSON.h>

#include "support.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/graph.h"
#include "model/model.h"
#include "model/model_load.h"

#include <unistd.h>

#define MAPPINGS "tests/fixtures/transformers/modeling_auto_mappings.tsv"

static const struct fg_family *find(const struct fg_family *v, size_t n, const char *mt)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i].model_type, mt))
            return &v[i];
    return NULL;
}

/* The class f has in the list named as the file names it, or NULL. */
static const char *class_in(const struct fg_family *f, const char *list)
{
    if (!strcmp(list, "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES"))
        return f->causal_lm;
    if (!strcmp(list, "MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES"))
        return f->image_text_to_text;
    if (!strcmp(list, "MODEL_FOR_MASKED_LM_MAPPING_NAMES"))
        return f->masked_lm;
    fail_msg("unknown list %s", list);
    return NULL;
}

static void families_should_hold_every_row_of_the_vendored_mapping_lists(void **state)
{
    (void)state;
    struct fg_family *v = NULL;
    size_t n = 0;
    struct fg_err err = {0};
    assert_int_equal(fg_families(&v, &n, &err), 0);
    FILE *f = fopen(MAPPINGS, "r");
    assert_non_null(f);
    char line[512];
    unsigned rows[3] = {0}, exact[3] = {0}, bad = 0;
    static const char *const names[3] = {"MODEL_FOR_CAUSAL_LM_MAPPING_NAMES",
                                         "MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES",
                                         "MODEL_FOR_MASKED_LM_MAPPING_NAMES"};
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#')
            continue;
        char *save = NULL, *list = strtok_r(line, "\t\n", &save);
        char *mt = strtok_r(NULL, "\t\n", &save), *cls = strtok_r(NULL, "\t\n", &save);
        assert_non_null(cls);
        const struct fg_family *fam = find(v, n, mt);
        const char *have = fam ? class_in(fam, list) : NULL;
        if (!have || strcmp(have, cls)) {
            print_message("MISSING %s %s %s (table: %s)\n", list, mt, cls, have ? have : "-");
            bad++;
            continue;
        }
        for (int k = 0; k < 3; k++)
            if (!strcmp(list, names[k])) {
                rows[k]++;
                exact[k] += !strcmp(fam->certainty, "exact");
                /* the rest refused by name, with the reason; none read generically */
                if (strcmp(fam->certainty, "exact") &&
                    (strcmp(fam->certainty, "refused") || !fam->why || !*fam->why)) {
                    print_message("NOT EXACT NOR REFUSED %s %s: %s\n", list, mt,
                                  fam->certainty);
                    bad++;
                }
            }
    }
    fclose(f);
    /* nothing the file does not list */
    unsigned listed = 0;
    for (size_t i = 0; i < n; i++)
        listed += !!v[i].causal_lm + !!v[i].image_text_to_text + !!v[i].masked_lm;
    print_message("exact: causal-lm %u/%u, image-text-to-text %u/%u, masked-lm %u/%u\n",
                  exact[0], rows[0], exact[1], rows[1], exact[2], rows[2]);
    assert_int_equal(bad, 0);
    assert_int_equal(listed, rows[0] + rows[1] + rows[2]);
    assert_int_equal(rows[0], 139);
    assert_int_equal(rows[1], 51);
    assert_int_equal(rows[2], 43);
    /* issue 25's floor: 125 of 139, 40 of 51, 35 of 43 read exactly (135, 45 and 42 when
     * the floor was set) */
    assert_true(exact[0] >= 125 && exact[1] >= 40 && exact[2] >= 35);
    free(v);
}

static void families_should_say_exact_for_every_registered_reader(void **state)
{
    (void)state;
    struct fg_family *v = NULL;
    size_t n = 0;
    struct fg_err err = {0};
    assert_int_equal(fg_families(&v, &n, &err), 0);
    for (size_t i = 0; i < n; i++) {
        const struct fg_family *f = &v[i];
        assert_non_null(f->follows);
        if (!strcmp(f->certainty, "exact") && !*f->follows)
            fail_msg("%s: read by '%s' but the table names no class it follows", f->model_type,
                     f->reader);
        if (i > 0)
            assert_true(strcmp(v[i - 1].model_type, f->model_type) < 0); /* sorted, once */
    }
    assert_string_equal(find(v, n, "llama")->certainty, "exact");
    assert_string_equal(find(v, n, "llama")->follows, "LlamaForCausalLM");
    /* a row without a reader says generic and names the generic reader; a type no row
     * names is read by it too, and never said exact */
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i].certainty, "generic"))
            assert_string_equal(v[i].reader, "generic decoder");
    assert_string_equal(find(v, n, "xlstm")->certainty, "exact");
    free(v);
    struct fg_model *m = NULL;
    assert_int_equal(build("{\"model_type\": \"some_new_decoder\", \"hidden_size\": 64, "
                           "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
                           "\"intermediate_size\": 128, \"vocab_size\": 100}", &m, &err),
                     0);
    assert_true(m->generic);
    assert_int_not_equal(m->certainty, FG_CERT_EXACT);
    fg_model_free(m);
}

static void families_should_refuse_a_wrapper_of_other_types_by_name(void **state)
{
    (void)state;
    struct fg_family *v = NULL;
    size_t n = 0;
    struct fg_err err = {0};
    assert_int_equal(fg_families(&v, &n, &err), 0);
    const struct fg_family *f = find(v, n, "vision-encoder-decoder");
    assert_non_null(f);
    assert_string_equal(f->certainty, "refused");
    assert_non_null(strstr(f->why, "encoder / decoder sub-configs"));
    free(v);
    struct fg_model *m = NULL;
    assert_int_equal(build("{\"model_type\": \"vision-encoder-decoder\", \"hidden_size\": 64, "
                           "\"num_hidden_layers\": 2, \"num_attention_heads\": 2, "
                           "\"vocab_size\": 100}", &m, &err),
                     FG_E_UNSUPPORTED);
    assert_null(m);
    assert_non_null(strstr(err.detail, "model_type 'vision-encoder-decoder' is not supported"));
}

/* Every reader names its source file, taken from its registry row (FG_ARCH's __FILE__). */
static void families_should_name_the_source_file_of_each_reader(void **state)
{
    (void)state;
    struct fg_family *v = NULL;
    size_t n = 0;
    assert_int_equal(fg_families(&v, &n, NULL), 0);
    size_t readers = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(v[i].certainty, "exact"))
            continue;
        readers++;
        assert_non_null(v[i].reader_file);
        if (strncmp(v[i].reader_file, "engine/arch/", 12) || access(v[i].reader_file, R_OK))
            fail_msg("%s: reader file '%s' is not a file under engine/arch/", v[i].model_type,
                     v[i].reader_file);
    }
    assert_true(readers > 200);
    free(v);
}

/* The sub-config under via of the config in dir, as a document of its own (its own
 * model_type picks its reader); the caller frees it. */
static struct fg_config *sub_config(const char *dir, const char *via)
{
    struct fg_config *doc = NULL, *sub = NULL;
    struct fg_err err = {0};
    if (fg_config_load(dir, &doc, &err) != 0)
        fail_msg("%s: %s", dir, err.detail);
    struct fg_cfg root = fg_config_root(doc), c;
    if (!fg_cfg_child(&root, via, &c, &err))
        fail_msg("%s: no object under '%s'", dir, via);
    char *text = cJSON_PrintUnformatted(c.obj);
    assert_non_null(text);
    assert_int_equal(fg_config_parse(text, strlen(text), dir, &sub, &err), 0);
    free(text);
    fg_config_free(doc);
    return sub;
}

/* Whether the whole config in dir loads, or fails as a root fitgate refuses by name must
 * (refused_root: FG_E_UNSUPPORTED).  A refused root (vision-encoder-decoder, gemma3n) can
 * still hold a typed sub-config a reader reads alone, which its via rows test (issue 37). */
static bool whole_loads(const char *dir, const char *folder, const char *model_type)
{
    struct fg_err err = {0};
    struct fg_model *m = NULL;
    int rc = fg_model_load(dir, &m, &err);
    fg_model_free(m);
    if (rc && !refused_root(dir, rc))
        fail_msg("%s (%s): %s", folder, model_type, err.detail);
    return rc == 0;
}

/* Each real config.json the families list claims (built from the fixture folders) reads
 * through its family reader without error: the whole file, and where the type's config is
 * a sub-config of it (a "qwen3_vl_text" text_config), that object alone through the type's
 * reader as well.  The whole file may instead be refused, only as a root refused by name:
 * then its own row tests nothing more, and its via rows test the sub-config alone (a
 * microsoft/trocr-* decoder, a gemma-3n text_config). */
static void families_should_read_each_real_config_through_its_reader(void **state)
{
    (void)state;
    size_t checked = 0, via = 0;
    for (const struct fg__real_config *c = fg__real_configs; c->model_type; c++) {
        char dir[512];
        snprintf(dir, sizeof dir, "tests/fixtures/models/%s", c->folder);
        struct fg_err err = {0};
        struct fg_model *m = NULL;
        bool whole = whole_loads(dir, c->folder, c->model_type);
        if (!whole && !c->via)
            continue; /* the refused root's own row */
        if (c->via && !fg__arch_find(c->model_type))
            continue; /* a tower's or a part's own type: no family reader claims it */
        if (c->via) {
            struct fg_config *sub = sub_config(dir, c->via);
            if (fg_model_from_config(sub, c->folder, &m, &err) != 0)
                fail_msg("%s %s (%s): %s", c->folder, c->via, c->model_type, err.detail);
            fg_config_free(sub);
            via++;
        } else if (fg_model_load(dir, &m, &err) != 0) {
            fail_msg("%s (%s): %s", c->folder, c->model_type, err.detail);
        }
        if (fg__arch_find(c->model_type) && m->generic)
            fail_msg("%s (%s): read as a generic decoder", c->folder, c->model_type);
        fg_model_free(m);
        checked++;
    }
    print_message("real configs read: %zu, %zu of them a sub-config\n", checked, via);
    assert_true(checked > 60);
}

/*
 * The share of family readers tested on a released checkpoint's config.json.  The target
 * is 90% (issue 37); this holds the share reached so far, so a fixture removed shows here:
 * raise it as fixtures are added (docs/accuracy.md "Real configs").
 */
enum { REAL_CONFIG_SHARE_FLOOR = 88 };

static void families_should_test_the_readers_on_real_configs(void **state)
{
    (void)state;
    struct fg_family *v = NULL;
    size_t n = 0, readers = 0, real = 0;
    assert_int_equal(fg_families(&v, &n, NULL), 0);
    for (size_t i = 0; i < n; i++) {
        if (!v[i].reader_file)
            continue;
        readers++;
        real += v[i].real_config != NULL;
    }
    print_message("readers tested on a real config: %zu of %zu (%.1f%%)\n", real, readers,
                  100.0 * (double)real / (double)readers);
    assert_true(real * 100 >= REAL_CONFIG_SHARE_FLOOR * readers);
    free(v);
}

/*
 * Every type with a reader is read as its transformers config class reads it
 * (source/config_classes.tsv), but for the types transformers defines no class for: remote
 * code (trust_remote_code repos ship their own configuration_*.py) and names only a
 * tokenizer or a checkpoint family uses (gpt-sw3, code_llama load as GPT2Config and
 * LlamaConfig).
 */
static void families_should_read_every_reader_type_as_its_config_class(void **state)
{
    (void)state;
    static const char *const no_class[] = {
        "RefinedWeb", "RefinedWebModel", "baichuan", "chatglm", "code_llama", "deepseek",
        "ernie4_5_moe_vl", "gpt-sw3", "hunyuan", "internlm2", "kimi_k2", "minicpm",
        "minimax_m1", "minimax_text_01", "mixformer-sequential", "nemotron-nas", "qwen", NULL};
    struct fg_family *v = NULL;
    size_t n = 0, classed = 0, readers = 0;
    assert_int_equal(fg_families(&v, &n, NULL), 0);
    for (size_t i = 0; i < n; i++) {
        bool named = false;
        if (!v[i].reader_file)
            continue;
        readers++;
        for (const char *const *t = no_class; *t; t++)
            named = named || !strcmp(*t, v[i].model_type);
        if (!v[i].config_class && !named)
            fail_msg("%s has a reader but no config class rows: regenerate "
                     "engine/source/config_classes.tsv (tools/gen_config_classes.py)",
                     v[i].model_type);
        assert_false(v[i].config_class && named);
        classed += v[i].config_class != NULL;
    }
    print_message("reader types read as their config class: %zu of %zu\n", classed, readers);
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(families_should_hold_every_row_of_the_vendored_mapping_lists),
        cmocka_unit_test(families_should_say_exact_for_every_registered_reader),
        cmocka_unit_test(families_should_refuse_a_wrapper_of_other_types_by_name),
        cmocka_unit_test(families_should_name_the_source_file_of_each_reader),
        cmocka_unit_test(families_should_read_each_real_config_through_its_reader),
        cmocka_unit_test(families_should_test_the_readers_on_real_configs),
        cmocka_unit_test(families_should_read_every_reader_type_as_its_config_class),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
