/*
 * support.h - helpers shared by the cmocka tests of the model graph, the
 * memory model and the planner.  Include after <cmocka.h>.
 */
#ifndef FG_TEST_SUPPORT_H
#define FG_TEST_SUPPORT_H

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/graph.h"
#include "model/model_load.h"
#include "source/config.h"
#include "job/jobspec.h"
#include "model/model.h"
#include "util/fileio.h"
#include "util/jsonscan.h"

/* Whether doc's root model_type is one fitgate refuses by name (graph.c's table): a
 * microsoft/trocr-* vision-encoder-decoder, kept as a fixture for the typed sub-config a
 * reader is tested on (test_arch_families.c). */
static inline bool refused_doc(const struct fg_config *doc)
{
    struct fg_cfg root = fg_config_root(doc);
    const char *type = NULL;
    return fg_cfg_str(&root, "model_type", NULL, &type, NULL) == 0 && type &&
           fg__family_refused(type);
}

/* Whether the config in dir failed to load (rc) only because its root is refused by name. */
static inline bool refused_root(const char *dir, int rc)
{
    struct fg_config *doc = NULL;
    struct fg_err err = {0};
    bool refused = rc == FG_E_UNSUPPORTED && fg_config_load(dir, &doc, &err) == 0 &&
                   refused_doc(doc);
    fg_config_free(doc);
    return refused;
}

/* The model of a fixture folder (or config.json), or NULL when its root is refused by name
 * (refused_root); any other failure fails the test with the detail. */
static inline struct fg_model *load_fixture(const char *dir)
{
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    int rc = fg_model_load(dir, &m, &err);
    if (rc && refused_root(dir, rc))
        return NULL;
    if (rc)
        print_message("%s: %s\n", dir, err.detail);
    assert_int_equal(rc, 0);
    return m;
}

/* Load a fixture directory (or config.json); fails the test with the detail. */
static inline struct fg_model *load(const char *dir)
{
    struct fg_model *m = load_fixture(dir);
    if (!m)
        fail_msg("%s: its root model_type is refused by name", dir);
    return m;
}

/* A fixture's config.json text parsed as cJSON the way source/config.c reads it: Python's
 * Infinity (the published Mamba-2 configs' time_step_limit) as a number.  NULL when it does not
 * parse; the caller deletes the tree. */
static inline cJSON *fixture_json(const char *text)
{
    cJSON *j = cJSON_Parse(text);
    char *py = j ? NULL : fg__json_python_infinity(text, strlen(text));
    if (py) {
        j = cJSON_ParseWithLength(py, strlen(text));
        free(py);
    }
    return j;
}

/* tests/fixtures/models/<folder>/config.json with key set to the number value (replaced or
 * added), as JSON text the caller frees. */
static inline char *fixture_config_with(const char *folder, const char *key, double value)
{
    char path[512], *text = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "tests/fixtures/models/%s/config.json", folder);
    assert_int_equal(fg__read_file(path, 1 << 20, &text, &len), 0);
    cJSON *j = fixture_json(text);
    free(text);
    assert_non_null(j);
    cJSON_DeleteItemFromObjectCaseSensitive(j, key);
    cJSON_AddNumberToObject(j, key, value);
    char *cfg = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    assert_non_null(cfg);
    return cfg;
}

/* Build from inline JSON; returns the reader's code and fills *out on success. */
static inline int build(const char *json, struct fg_model **out, struct fg_err *err)
{
    struct fg_config *doc = NULL;
    *out = NULL;
    assert_int_equal(fg_config_parse(json, strlen(json), "t.json", &doc, err), 0);
    int rc = fg_model_from_config(doc, "t", out, err);
    fg_config_free(doc);
    return rc;
}

/* build() that must succeed with a reader of the model's own (not the generic one). */
static inline struct fg_model *built(const char *json)
{
    struct fg_model *m = NULL;
    struct fg_err err = {0};
    int rc = build(json, &m, &err);
    if (rc)
        print_message("%s\n", err.detail);
    assert_int_equal(rc, 0);
    assert_non_null(m);
    assert_false(m->generic);
    return m;
}

/* The parameter count of json's model, which must read exact; on failure the unsure key and
 * the first note say why. */
static inline uint64_t exact_count(const char *json)
{
    struct fg_model *m = built(json);
    uint64_t n = m->params_total;
    if (m->certainty != FG_CERT_EXACT)
        print_message("%s: unsure key %s; %s\n", json, m->unsure_key,
                      m->n_notes ? m->notes[0] : "(no note)");
    assert_int_equal(m->certainty, FG_CERT_EXACT);
    fg_model_free(m);
    return n;
}

/* The first node of this kind, or NULL. */
static inline const struct fg_node *first_of(const struct fg_model *m, enum fg_node_kind kind)
{
    for (size_t i = 0; i < m->n_nodes; i++)
        if (m->nodes[i].kind == kind)
            return &m->nodes[i];
    return NULL;
}

/* The node of kind in block layer, or NULL. */
static inline const struct fg_node *node_of_layer(const struct fg_model *m,
                                                  enum fg_node_kind kind, int32_t layer)
{
    for (size_t i = 0; i < m->n_nodes; i++)
        if (m->nodes[i].kind == kind && m->nodes[i].layer == layer)
            return &m->nodes[i];
    return NULL;
}

/* Whether a note of the model holds needle. */
static inline bool has_note(const struct fg_model *m, const char *needle)
{
    for (size_t i = 0; i < m->n_notes; i++)
        if (strstr(m->notes[i], needle))
            return true;
    return false;
}

/* The first rule of the model whose name holds text, or NULL. */
static inline const struct fg_rule *rule_with(const struct fg_model *m, const char *text)
{
    for (size_t i = 0; i < m->n_rules; i++)
        if (strstr(m->rules[i].name, text))
            return &m->rules[i];
    return NULL;
}

static inline size_t count_kind(const struct fg_model *m, enum fg_node_kind kind)
{
    size_t n = 0;
    for (size_t i = 0; i < m->n_nodes; i++)
        n += m->nodes[i].kind == kind;
    return n;
}

/* The linear of a node with this LoRA role ("q", "gate", "router" ...), or NULL. */
static inline const struct fg_linear *lin(const struct fg_node *n, const char *role)
{
    for (size_t i = 0; i < n->nlin; i++)
        if (strcmp(n->lin[i].role, role) == 0)
            return &n->lin[i];
    return NULL;
}

/* The next fixture model's config.json, parsed, from d (an opendir of
 * tests/fixtures/models), its directory's name in name; NULL after the last.  The caller
 * frees it with fg_config_free. */
static inline struct fg_config *next_fixture_config(DIR *d, char *name, size_t cap)
{
    struct dirent *de;
    while ((de = readdir(d))) {
        char path[512];
        struct fg_config *doc = NULL;
        struct fg_err err = {0};
        if (de->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "tests/fixtures/models/%s/config.json", de->d_name);
        if (fg_config_load(path, &doc, &err) == 0) { /* other entries: truth.tsv ... */
            snprintf(name, cap, "%s", de->d_name);
            return doc;
        }
    }
    return NULL;
}

/* A spec from "name=value" pairs (NULL-terminated; a bare "name" is a flag), finished:
 * 0, or the code of the first option or of fg_jobspec_finish that refused it, with err
 * saying why (err->detail names the pair when an option refused it). */
static inline int spec_from_pairs(struct fg_jobspec *s, const char *const *kv, struct fg_err *err)
{
    fg_jobspec_init(s, NULL);
    for (; *kv; kv++) {
        char name[64];
        const char *eq = strchr(*kv, '=');
        snprintf(name, sizeof name, "%.*s", (int)(eq ? eq - *kv : (long)strlen(*kv)), *kv);
        int id = fg_jobopt_find(name);
        assert_true(id >= 0);
        int rc = fg_jobspec_set(s, (unsigned)id, eq ? eq + 1 : NULL, err);
        if (rc) {
            fg_err_prefix(err, "%s", *kv);
            return rc;
        }
    }
    return fg_jobspec_finish(s, err);
}

#endif
