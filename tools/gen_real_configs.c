/*
 * gen_real_configs.c - build-time list of the model types tested on a real config.json.
 *
 *   gen_real_configs READERS.def... FIXTURE/config.json... > build/gen/real_configs.c
 *
 * READERS.def: the reader registry files (engine/arch/decoder/llama_rows.def ...); FIXTURE: a
 * folder tests/fixtures/models/ORG--NAME.
 *
 * Each fixture folder holding a released checkpoint's config.json and its PROVENANCE.txt
 * (tests/fixtures/PROVENANCE.md) names the model_type its root reader is tested on.  The
 * list is made from the folders themselves at each build, so 'fitgate families' cannot
 * claim a real config that is not there (a folder without PROVENANCE.txt is left out) and
 * a new fixture shows without a hand-kept flag.  Writes fg__real_configs (arch/arch.h),
 * sorted by model_type, the first folder of each type in name order.  A config.json without
 * model_type (google/umt5-*) stands for the type of its first architectures class, and one
 * that names no class either (the 2019 ctrl file) for the longest reader type (the FG_ARCH
 * rows of the .def files given) its folder's name contains (engine/util/classtype.h, as
 * engine/arch/graph.c reads it); one naming a type under another spelling AutoConfig maps to
 * the same class stands for that class's type ("EvollaModel": evolla).  A sub-config of the root
 * that names its own model_type (a text_config of "qwen3_vl_text") is a real config of that
 * type's reader too, listed with the key it sits under (via) after every root row of the
 * type: tests/test_arch_families.c reads that object alone through the reader.  Exit 0, or
 * 1 with a message on stderr (a config.json that does not parse or names neither).
 */
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/classtype.h"
#include "util/jsonscan.h"

struct row {
    char *model_type, *folder;
    const char *via; /* NULL for the root, else the root key of the sub-config (borrowed
                        from the parsed config, kept until the end) */
};

/* s as the body of a C string literal. */
static void put_c(const char *s)
{
    for (; *s; s++)
        if (*s == '"' || *s == '\\' || *s == '?')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
            printf("\\%03o", (unsigned char)*s);
        else
            putchar(*s);
}

/* The whole of path (at most 4 MiB, as config.c reads) in a NUL-ended buffer the caller
 * frees, or NULL. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *text = f ? malloc((4u << 20) + 1) : NULL;
    *len = text ? fread(text, 1, 4u << 20, f) : 0;
    bool whole = f && !ferror(f) && feof(f);
    if (f)
        fclose(f);
    if (!text || !whole) {
        free(text);
        return NULL;
    }
    text[*len] = '\0';
    return text;
}

/* The type a config.json without model_type stands for (util/classtype.h), strdup'ed, or
 * NULL. */
static char *type_of_class(const cJSON *j)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "architectures");
    const cJSON *c = cJSON_IsArray(a) ? a->child : NULL;
    char buf[64];
    return cJSON_IsString(c) && fg__class_type(c->valuestring, buf, sizeof buf) ? strdup(buf)
                                                                                : NULL;
}

/* The reader types: the first argument of each FG_ARCH(" row of the .def files. */
struct types {
    char **v;
    size_t n, cap;
};

static const char *type_at(size_t i, const void *ctx)
{
    const struct types *t = ctx;
    return i < t->n ? t->v[i] : NULL;
}

/* Add the types of the .def file at path to t; false (said on stderr) when it cannot be
 * read or out of memory. */
static bool read_types(const char *path, struct types *t)
{
    size_t len = 0;
    char *text = slurp(path, &len), *at = text;
    bool ok = text != NULL;
    while (ok && (at = strstr(at, "FG_ARCH(\"")) != NULL) {
        at += strlen("FG_ARCH(\"");
        char *end = strchr(at, '"');
        if (!end)
            break;
        if (t->n == t->cap) {
            char **v = realloc(t->v, (t->cap = t->cap ? 2 * t->cap : 256) * sizeof *v);
            ok = v != NULL;
            if (ok)
                t->v = v;
        }
        if (ok) {
            t->v[t->n] = strndup(at, (size_t)(end - at));
            ok = t->v[t->n] != NULL;
            t->n += ok;
        }
        at = end;
    }
    if (!ok)
        fprintf(stderr, "gen_real_configs: %s: cannot read its FG_ARCH rows\n", path);
    free(text);
    return ok;
}

static int by_type(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    int c = strcmp(x->model_type, y->model_type);
    if (!c)
        c = (x->via != NULL) - (y->via != NULL);
    if (!c)
        c = strcmp(x->folder, y->folder);
    return c || !x->via ? c : strcmp(x->via, y->via);
}

/* Room for the rows of j's sub-configs that name their own model_type, after n rows;
 * false when out of memory. */
static bool grow(struct row **rows, size_t *cap, size_t n)
{
    if (n < *cap)
        return true;
    struct row *r = realloc(*rows, 2 * *cap * sizeof *r);
    if (!r)
        return false;
    *rows = r;
    *cap *= 2;
    return true;
}

int main(int argc, char **argv)
{
    size_t cap = (size_t)argc + 16;
    struct row *rows = calloc(cap, sizeof *rows);
    cJSON **docs = calloc((size_t)argc, sizeof *docs);
    size_t n = 0, ndocs = 0;
    struct types types = {0};
    int rc = 1;
    if (!rows || !docs) {
        fprintf(stderr, "gen_real_configs: out of memory\n");
        goto out;
    }
    for (int i = 1; i < argc; i++) {
        size_t alen = strlen(argv[i]);
        if (alen > 4 && !strcmp(argv[i] + alen - 4, ".def") && !read_types(argv[i], &types))
            goto out;
    }
    for (int i = 1; i < argc; i++) {
        char prov[4096], *text = NULL;
        size_t len = 0, alen = strlen(argv[i]);
        if (alen > 4 && !strcmp(argv[i] + alen - 4, ".def"))
            continue;
        const char *slash = strrchr(argv[i], '/');
        if (!slash || snprintf(prov, sizeof prov, "%.*s/PROVENANCE.txt",
                               (int)(slash - argv[i]), argv[i]) >= (int)sizeof prov) {
            fprintf(stderr, "gen_real_configs: %s: give FOLDER/config.json\n", argv[i]);
            goto out;
        }
        if (access(prov, R_OK) != 0)
            continue; /* not a documented release's config */
        if (!(text = slurp(argv[i], &len))) {
            fprintf(stderr, "gen_real_configs: %s: cannot read\n", argv[i]);
            goto out;
        }
        cJSON *j = cJSON_ParseWithLength(text, len);
        char *py = j ? NULL : fg__json_python_infinity(text, len);
        if (py)
            j = cJSON_ParseWithLength(py, len);
        free(py);
        free(text);
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "model_type");
        const char *alias = cJSON_IsString(t) ? fg__type_alias(t->valuestring) : NULL;
        char *type = alias ? strdup(alias) : cJSON_IsString(t) ? strdup(t->valuestring)
                                                               : type_of_class(j);
        char by_name[64];
        static const char *const sizes[] = {"hidden_size", "n_embd", "d_model", "dim",
                                            "num_hidden_layers", "n_layer", "num_layers",
                                            "n_layers"};
        bool sized = false;
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
            sized = sized || cJSON_GetObjectItemCaseSensitive(j, sizes[k]);
        if (!type && !cJSON_GetObjectItemCaseSensitive(j, "architectures") && sized &&
            fg__name_type(argv[i], type_at, &types, by_name, sizeof by_name))
            type = strdup(by_name);
        if (!type) {
            fprintf(stderr, "gen_real_configs: %s: no model_type string, no architectures "
                    "class and no reader type in its folder's name to name one; fix the "
                    "fixture\n", argv[i]);
            cJSON_Delete(j);
            goto out;
        }
        const char *folder = slash;
        while (folder > argv[i] && folder[-1] != '/')
            folder--;
        docs[ndocs++] = j;
        size_t root = n;
        if (!grow(&rows, &cap, n)) {
            free(type);
            fprintf(stderr, "gen_real_configs: out of memory\n");
            goto out;
        }
        rows[n].via = NULL;
        rows[n].model_type = type;
        rows[n].folder = strndup(folder, (size_t)(slash - folder));
        if (!rows[n++].folder) {
            fprintf(stderr, "gen_real_configs: out of memory\n");
            goto out;
        }
        const cJSON *sub;
        cJSON_ArrayForEach(sub, j) {
            const cJSON *st = cJSON_GetObjectItemCaseSensitive(sub, "model_type");
            if (!cJSON_IsObject(sub) || !cJSON_IsString(st) || !*st->valuestring ||
                !sub->string)
                continue;
            if (!grow(&rows, &cap, n)) {
                fprintf(stderr, "gen_real_configs: out of memory\n");
                goto out;
            }
            struct row *r = &rows[n++];
            *r = (struct row){.model_type = strdup(st->valuestring),
                              .folder = strdup(rows[root].folder), .via = sub->string};
            if (!r->model_type || !r->folder) {
                fprintf(stderr, "gen_real_configs: out of memory\n");
                goto out;
            }
        }
    }
    qsort(rows, n, sizeof *rows, by_type);
    printf("/* Generated by tools/gen_real_configs.c from tests/fixtures/models; do not edit. */\n"
           "#include \"arch/arch.h\"\n\n"
           "const struct fg__real_config fg__real_configs[] = {\n");
    for (size_t i = 0; i < n; i++)
        if (i == 0 || strcmp(rows[i].model_type, rows[i - 1].model_type)) {
            fputs("    {\"", stdout);
            put_c(rows[i].model_type);
            fputs("\", \"", stdout);
            put_c(rows[i].folder);
            if (rows[i].via) {
                fputs("\", \"", stdout);
                put_c(rows[i].via);
            }
            fputs(rows[i].via ? "\"},\n" : "\", NULL},\n", stdout);
        }
    printf("    {0},\n};\n");
    rc = 0;
out:
    for (size_t i = 0; rows && i < n; i++) {
        free(rows[i].model_type);
        free(rows[i].folder);
    }
    for (size_t i = 0; i < ndocs; i++)
        cJSON_Delete(docs[i]);
    for (size_t i = 0; i < types.n; i++)
        free(types.v[i]);
    free(types.v);
    free(docs);
    free(rows);
    return rc;
}
