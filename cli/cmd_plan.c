/* fitgate plan: the whole answer for one model. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "model.h"

static void print_count(FILE *f, uint64_t v)
{
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    for (int i = 0; i < n; i++) {
        fputc(buf[i], f);
        if ((n - i - 1) % 3 == 0 && i != n - 1)
            fputc(',', f);
    }
}

static void print_structure(const struct fg_model *m, uint64_t seq)
{
    printf("\nStructure (%zu nodes; output shape per sample at %llu tokens)\n", m->n_nodes,
           (unsigned long long)seq);
    printf("%5s  %-22s %-18s %-34s %-20s %s\n", "#", "Layer", "Type", "Detail", "Output shape",
           "Parameters");
    for (size_t i = 0; i < m->n_nodes; i++) {
        const struct fg_node *n = &m->nodes[i];
        char shape[48];
        snprintf(shape, sizeof shape, "%llu x %u", (unsigned long long)seq, n->width);
        printf("%5zu  %-22s %-18s %-34s %-20s ", i + 1, n->name, fg_node_kind_name(n->kind),
               n->desc, shape);
        print_count(stdout, n->params);
        putchar('\n');
    }
}

static cJSON *model_json(const struct fg_model *m)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", m->id);
    cJSON_AddStringToObject(o, "model_type", m->model_type);
    cJSON_AddStringToObject(o, "reader", m->reader);
    cJSON_AddBoolToObject(o, "generic", m->generic);
    cJSON *p = cJSON_AddObjectToObject(o, "params");
    cJSON_AddNumberToObject(p, "total", (double)m->params_total);
    cJSON_AddNumberToObject(p, "buffers", (double)m->params_buffers);
    cJSON *r = cJSON_AddArrayToObject(p, "rules");
    for (size_t i = 0; i < m->n_rules; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", m->rules[i].name);
        cJSON_AddNumberToObject(e, "scalars", (double)m->rules[i].scalars);
        cJSON_AddItemToArray(r, e);
    }
    cJSON_AddNumberToObject(o, "layers", (double)m->layers);
    cJSON_AddNumberToObject(o, "hidden", (double)m->hidden);
    cJSON_AddNumberToObject(o, "vocab", (double)m->vocab);
    cJSON *notes = cJSON_AddArrayToObject(o, "notes");
    for (size_t i = 0; i < m->n_notes; i++)
        cJSON_AddItemToArray(notes, cJSON_CreateString(m->notes[i]));
    return o;
}

int fg_cli_plan(int argc, char **argv)
{
    const char *path = NULL;
    int json = 0, structure = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--structure"))
            structure = 1;
        else if (argv[i][0] != '-' && !path)
            path = argv[i];
        else {
            fprintf(stderr, "fitgate plan: unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    if (!path) {
        fprintf(stderr, "fitgate plan: MODEL missing\n");
        return 2;
    }
    struct fg_err err = {0};
    struct fg_model *m;
    if (fg_cli_load_model(path, &m, &err)) {
        fprintf(stderr, "fitgate: error: %s\n", err.detail);
        return 2;
    }
    if (json) {
        cJSON *root = cJSON_CreateObject();
        cJSON_AddItemToObject(root, "model", model_json(m));
        char *s = cJSON_Print(root);
        puts(s);
        free(s);
        cJSON_Delete(root);
    } else {
        printf("%s (%s, %s)\n", m->id, m->model_type, m->reader);
        printf("parameters: ");
        print_count(stdout, m->params_total);
        printf(" in %llu layers\n", (unsigned long long)m->layers);
        for (size_t i = 0; i < m->n_notes; i++)
            printf("note: %s\n", m->notes[i]);
        if (structure)
            print_structure(m, m->max_pos ? m->max_pos : 2048);
    }
    fg_model_free(m);
    return 0;
}
