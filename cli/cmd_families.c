/*
 * fitgate families: every model_type fitgate reads or transformers' auto-mapping lists name,
 * with its reader, certainty (exact / generic / refused), the transformers class it follows
 * and the lists that name it (engine/arch/graph.h); --json for tools, --markdown for the
 * family table of docs/accuracy.md (generated from it).
 */
#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "format.h"
#include "arch/graph.h"

enum fam_format { FAM_TEXT, FAM_JSON, FAM_MARKDOWN };

static void usage(FILE *f)
{
    fputs("usage: fitgate families [--json | --markdown]\n"
          "  every model_type fitgate knows: its reader, certainty (exact: a family reader;\n"
          "  generic: the generic decoder reader, unsure where it meets a key it cannot size;\n"
          "  refused: config.json cannot size it, with the reason), the transformers class it\n"
          "  follows and the auto-mapping lists that name it (causal-lm, image-text-to-text,\n"
          "  masked-lm)\n"
          "  --json      one object: source, counts per list and of the readers tested on a\n"
          "              released checkpoint's config.json, families[] (with reader_file and\n"
          "              real_config_tested per reader, config_class where transformers\n"
          "              defines one)\n"
          "  --markdown  the family table of docs/accuracy.md\n"
          "Exit status: 0 success, 2 error.\n",
          f);
}

/* The lists naming f, as "causal-lm,masked-lm" (or "-"), in buf. */
static const char *lists_of(const struct fg_family *f, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s%s%s%s", f->causal_lm ? "causal-lm" : "",
             f->causal_lm && (f->image_text_to_text || f->masked_lm) ? "," : "",
             f->image_text_to_text ? "image-text-to-text" : "",
             f->image_text_to_text && f->masked_lm ? "," : "", f->masked_lm ? "masked-lm" : "");
    if (!*buf)
        snprintf(buf, len, "-");
    return buf;
}

/* Listed and exact types of one list, added to the counts object o as {"listed", "exact"}. */
static void add_count(cJSON *o, const char *name, const struct fg_family *v, size_t n,
                      size_t offset)
{
    unsigned listed = 0, exact = 0;
    for (size_t i = 0; i < n; i++) {
        const char *cls = *(const char *const *)((const char *)&v[i] + offset);
        if (!cls)
            continue;
        listed++;
        exact += !strcmp(v[i].certainty, "exact");
    }
    cJSON *c = cJSON_AddObjectToObject(o, name);
    cJSON_AddNumberToObject(c, "listed", listed);
    cJSON_AddNumberToObject(c, "exact", exact);
}

static int print_json(const struct fg_family *v, size_t n)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "source", fg_families_source());
    cJSON *counts = cJSON_AddObjectToObject(root, "counts");
    add_count(counts, "causal-lm", v, n, offsetof(struct fg_family, causal_lm));
    add_count(counts, "image-text-to-text", v, n, offsetof(struct fg_family, image_text_to_text));
    add_count(counts, "masked-lm", v, n, offsetof(struct fg_family, masked_lm));
    unsigned readers = 0, real = 0, classed = 0;
    for (size_t i = 0; i < n; i++) {
        readers += v[i].reader_file != NULL;
        real += v[i].reader_file && v[i].real_config;
        classed += v[i].reader_file && v[i].config_class;
    }
    cJSON *rc = cJSON_AddObjectToObject(counts, "readers");
    cJSON_AddNumberToObject(rc, "types", readers);
    cJSON_AddNumberToObject(rc, "real_config_tested", real);
    cJSON_AddNumberToObject(rc, "config_class", classed);
    cJSON *arr = cJSON_AddArrayToObject(root, "families");
    for (size_t i = 0; i < n; i++) {
        const struct fg_family *f = &v[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "model_type", f->model_type);
        cJSON_AddStringToObject(o, "reader", f->reader);
        cJSON_AddStringToObject(o, "certainty", f->certainty);
        cJSON_AddStringToObject(o, "follows", f->follows);
        cJSON *l = cJSON_AddObjectToObject(o, "lists");
        if (f->causal_lm)
            cJSON_AddStringToObject(l, "causal-lm", f->causal_lm);
        if (f->image_text_to_text)
            cJSON_AddStringToObject(l, "image-text-to-text", f->image_text_to_text);
        if (f->masked_lm)
            cJSON_AddStringToObject(l, "masked-lm", f->masked_lm);
        if (f->why)
            cJSON_AddStringToObject(o, "why", f->why);
        if (f->reader_file)
            cJSON_AddStringToObject(o, "reader_file", f->reader_file);
        if (f->reader_file)
            cJSON_AddBoolToObject(o, "real_config_tested", f->real_config != NULL);
        if (f->real_config)
            cJSON_AddStringToObject(o, "real_config", f->real_config);
        if (f->real_config_via)
            cJSON_AddStringToObject(o, "real_config_via", f->real_config_via);
        if (f->config_class)
            cJSON_AddStringToObject(o, "config_class", f->config_class);
        cJSON_AddItemToArray(arr, o);
    }
    char *text = fg_cli_json_print(root);
    cJSON_Delete(root);
    if (!text) {
        fprintf(stderr, "fitgate: error: out of memory writing JSON\n");
        return 2;
    }
    puts(text);
    free(text);
    return 0;
}

static void print_rows(const struct fg_family *v, size_t n, enum fam_format fmt)
{
    char lists[64];
    if (fmt == FAM_MARKDOWN) {
        printf("<!-- generated by 'fitgate families --markdown' from %s; do not edit -->\n\n",
               fg_families_source());
        puts("| model_type | certainty | reader | follows | lists |");
        puts("|---|---|---|---|---|");
    } else {
        printf("%-26s %-8s %-44s %s\n", "MODEL_TYPE", "CERTAINTY", "READER", "FOLLOWS / LISTS");
    }
    for (size_t i = 0; i < n; i++) {
        const struct fg_family *f = &v[i];
        const char *reader = f->why ? f->why : f->reader;
        if (fmt == FAM_MARKDOWN)
            printf("| `%s` | %s | %s | %s | %s |\n", f->model_type, f->certainty, reader,
                   *f->follows ? f->follows : "-", lists_of(f, lists, sizeof lists));
        else
            printf("%-26s %-8s %-44s %s  [%s]\n", f->model_type, f->certainty, reader,
                   *f->follows ? f->follows : "-", lists_of(f, lists, sizeof lists));
    }
}

int fg_cli_families(int argc, char **argv)
{
    enum fam_format fmt = FAM_TEXT;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            fmt = FAM_JSON;
        else if (!strcmp(argv[i], "--markdown"))
            fmt = FAM_MARKDOWN;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "fitgate families: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    struct fg_family *v = NULL;
    size_t n = 0;
    struct fg_err err = {0};
    if (fg_families(&v, &n, &err)) {
        fprintf(stderr, "fitgate: error: %s\n", err.detail);
        return 2;
    }
    int rc = 0;
    if (fmt == FAM_JSON)
        rc = print_json(v, n);
    else
        print_rows(v, n, fmt);
    free(v);
    return rc;
}
