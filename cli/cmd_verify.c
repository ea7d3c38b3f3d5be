/*
 * fitgate verify MODEL [--json]: the graph's parameter count against what
 * the checkpoint stores, read from its safetensors headers (local files or
 * HTTP range requests on the hub; never the weights).  When only the index
 * is at hand, its metadata stands in and the output says so.
 * Exit status: 0 the counts agree, 1 they differ, 2 error or nothing to
 * compare.
 */
#include <cjson/cJSON.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "arch/graph.h"
#include "cli.h"
#include "source/config.h"
#include "format.h"
#include "model/model.h"
#include "source/safetensors.h"
#include "source/source.h"

/* What verify looked at, for the output. */
struct target {
    const char *arg;
    struct fg_model *m;                  /* NULL when no reader could build the graph */
    struct fg_err graph_err;             /* why not */
    struct fg_source_repo *repo;
    char source[64];
    char where[FG_SOURCE_WHERE_MAX];
};

/*
 * The graph may fail where the config is fine (a family whose reader is not
 * written yet): the checkpoint side is still worth reporting, so that failure
 * is kept, not returned.
 */
static void build_graph(const struct fg_config *doc, const char *id, struct target *t)
{
    if (fg_model_from_config(doc, id, &t->m, &t->graph_err))
        t->m = NULL;
}

static int open_path(const char *arg, const struct fg_source_opts *o, struct target *t,
                     struct fg_err *err)
{
    char dir[FG_SOURCE_PATH_MAX];
    struct stat st;
    snprintf(dir, sizeof dir, "%s", arg);
    if (stat(arg, &st) == 0 && !S_ISDIR(st.st_mode)) {
        char copy[FG_SOURCE_PATH_MAX];
        snprintf(copy, sizeof copy, "%s", arg);
        snprintf(dir, sizeof dir, "%s", dirname(copy)); /* a config.json: its checkout */
    }
    struct fg_config *doc;
    int rc = fg_config_load(arg, &doc, err);
    if (!rc) {
        build_graph(doc, arg, t);
        fg_config_free(doc);
        rc = fg_source_repo_open(o, dir, NULL, &t->repo, err);
    }
    snprintf(t->source, sizeof t->source, "%s", fg_source_kind_name(FG_SRC_PATH));
    snprintf(t->where, sizeof t->where, "%s", dir);
    return rc;
}

static int open_id(const char *arg, const struct fg_source_opts *o, struct target *t,
                   struct fg_err *err)
{
    struct fg_model_id id;
    int rc = fg_source_parse_id(arg, &id, err);
    if (rc) {
        fg_err_prefix(err, "MODEL is no file here and no model id");
        return rc;
    }
    struct fg_source_result *r;
    if ((rc = fg_source_resolve(o, &id, &r, err)))
        return rc;
    struct fg_config *doc;
    rc = fg_config_parse(r->text, r->len, r->where, &doc, err);
    if (!rc) {
        build_graph(doc, arg, t);
        fg_config_free(doc);
    }
    /* the shards must come from the commit the config came from */
    if (r->commit[0])
        snprintf(id.rev, sizeof id.rev, "%s", r->commit);
    if (!rc)
        rc = fg_source_repo_open(o, r->dir[0] ? r->dir : NULL, &id, &t->repo, err);
    snprintf(t->source, sizeof t->source, "%s", fg_source_kind_name(r->kind));
    snprintf(t->where, sizeof t->where, "%s", r->where);
    fg_source_result_free(r);
    return rc;
}

static void print_text(const struct target *t, const struct fg_st_summary *s,
                       const struct fg_st_compare *c)
{
    const struct fg_model *m = t->m;
    char cnt[32];
    if (m)
        printf("%s (%s, %s)\n", m->id, m->model_type, m->reader);
    else
        printf("%s (graph unavailable: %s)\n", t->arg, t->graph_err.detail);
    printf("source:     %s %s\n", t->source, t->where);
    printf("checkpoint: %s, %zu file%s", s->has_index ? "model.safetensors.index.json" :
           "model.safetensors", s->files, s->files == 1 ? "" : "s");
    if (s->headers)
        printf(", %llu tensors, headers read: %zu (%zu by HTTP range)\n",
               (unsigned long long)s->tensors, s->headers_read, s->headers_remote);
    else
        printf("; headers not available: %s\n", s->no_headers[0] ? s->no_headers : "?");
    if (s->headers) {
        printf("by dtype:  ");
        for (int d = 0; d < FG_ST_DTYPE_COUNT; d++) {
            if (!s->by_dtype[d])
                continue;
            printf(" %s %s", fg_safetensors_dtype_name((enum fg_st_dtype)d),
                   fg_cli_count(s->by_dtype[d], cnt, sizeof cnt));
        }
        putchar('\n');
        printf("\n%-28s %18s %18s %16s\n", "group", "checkpoint", "graph", "difference");
        for (int g = 0; g < FG_ST_GROUP_COUNT; g++) {
            if (!s->by_group[g] && !c->graph_group[g])
                continue;
            printf("%-28s %18llu ", fg_safetensors_group_name((enum fg_st_group)g),
                   (unsigned long long)s->by_group[g]);
            if (m)
                printf("%18llu %+16lld\n", (unsigned long long)c->graph_group[g],
                       (long long)(s->by_group[g] - c->graph_group[g]));
            else
                printf("%18s\n", "-");
        }
        if (c->graph_rules)
            printf("%-28s %18s %18lld\n", "graph rules", "", (long long)c->graph_rules);
        putchar('\n');
    }
    printf("compared:   %s\n", c->basis);
    if (!c->ckpt_known) {
        printf("result:     nothing to compare\n");
        return;
    }
    printf("checkpoint: %s parameters%s\n", fg_cli_count(c->ckpt_total, cnt, sizeof cnt),
           c->exact ? "" : " (derived from bytes)");
    if (!m) {
        printf("graph:      unavailable\nresult:     nothing to compare against\n");
        return;
    }
    printf("graph:      %s parameters\n", fg_cli_count(c->graph_total, cnt, sizeof cnt));
    if (c->agree)
        printf("result:     agree\n");
    else
        printf("result:     differ by %+lld (%.4f%%)\n",
               (long long)(c->ckpt_total - c->graph_total),
               c->graph_total ? 100.0 * ((double)c->ckpt_total - (double)c->graph_total) /
                                (double)c->graph_total : 0.0);
    for (size_t i = 0; i < c->n_findings; i++)
        printf("  - %s\n", c->findings[i]);
}

static void print_json(const struct target *t, const struct fg_st_summary *s,
                       const struct fg_st_compare *c)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *mo = cJSON_AddObjectToObject(root, "model");
    cJSON_AddStringToObject(mo, "id", t->m ? t->m->id : t->arg);
    if (t->m)
        cJSON_AddStringToObject(mo, "model_type", t->m->model_type);
    cJSON *so = cJSON_AddObjectToObject(root, "source");
    cJSON_AddStringToObject(so, "kind", t->source);
    cJSON_AddStringToObject(so, "where", t->where);
    cJSON *ck = cJSON_AddObjectToObject(root, "checkpoint");
    cJSON_AddBoolToObject(ck, "known", c->ckpt_known);
    cJSON_AddNumberToObject(ck, "total", (double)c->ckpt_total);
    cJSON_AddBoolToObject(ck, "exact", c->exact);
    cJSON_AddStringToObject(ck, "basis", c->basis);
    cJSON_AddBoolToObject(ck, "index", s->has_index);
    cJSON_AddBoolToObject(ck, "headers", s->headers);
    if (!s->headers)
        cJSON_AddStringToObject(ck, "no_headers", s->no_headers);
    cJSON_AddNumberToObject(ck, "files", (double)s->files);
    cJSON_AddNumberToObject(ck, "headers_read", (double)s->headers_read);
    cJSON_AddNumberToObject(ck, "headers_remote", (double)s->headers_remote);
    cJSON_AddNumberToObject(ck, "tensors", (double)s->tensors);
    cJSON *dt = cJSON_AddObjectToObject(ck, "by_dtype");
    for (int d = 0; d < FG_ST_DTYPE_COUNT; d++)
        if (s->by_dtype[d])
            cJSON_AddNumberToObject(dt, fg_safetensors_dtype_name((enum fg_st_dtype)d),
                                    (double)s->by_dtype[d]);
    cJSON *cg = cJSON_AddObjectToObject(ck, "groups");
    cJSON *gr = cJSON_AddObjectToObject(root, "graph");
    cJSON_AddBoolToObject(gr, "available", t->m != NULL);
    if (!t->m)
        cJSON_AddStringToObject(gr, "error", t->graph_err.detail);
    cJSON_AddNumberToObject(gr, "total", (double)c->graph_total);
    cJSON_AddNumberToObject(gr, "rules", (double)c->graph_rules);
    cJSON *gg = cJSON_AddObjectToObject(gr, "groups");
    for (int g = 0; g < FG_ST_GROUP_COUNT; g++) {
        const char *name = fg_safetensors_group_name((enum fg_st_group)g);
        if (s->headers && s->by_group[g])
            cJSON_AddNumberToObject(cg, name, (double)s->by_group[g]);
        if (c->graph_group[g])
            cJSON_AddNumberToObject(gg, name, (double)c->graph_group[g]);
    }
    cJSON_AddBoolToObject(root, "agree", c->agree);
    cJSON_AddNumberToObject(root, "difference", (double)(int64_t)(c->ckpt_total - c->graph_total));
    cJSON *f = cJSON_AddArrayToObject(root, "findings");
    for (size_t i = 0; i < c->n_findings; i++)
        cJSON_AddItemToArray(f, cJSON_CreateString(c->findings[i]));
    char *text = fg_cli_json_print(root);
    if (text)
        puts(text);
    free(text);
    cJSON_Delete(root);
}

int fg_cli_verify(int argc, char **argv)
{
    const char *arg = NULL;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (argv[i][0] != '-' && !arg)
            arg = argv[i];
        else {
            fprintf(stderr, "fitgate verify: unknown option '%s'\nusage: fitgate verify MODEL "
                    "[--json]\n", argv[i]);
            return 2;
        }
    }
    if (!arg) {
        fprintf(stderr, "fitgate verify: MODEL missing\nusage: fitgate verify MODEL [--json]\n");
        return 2;
    }
    struct fg_err err = {0};
    struct fg_source_opts o;
    fg_source_opts_init(&o);
    struct target t = {.arg = arg};
    int rc = fg_source_opts_from_env(&o, &err);
    if (!rc)
        rc = fg_source_arg_is_path(arg) ? open_path(arg, &o, &t, &err)
                                        : open_id(arg, &o, &t, &err);
    struct fg_st_summary *s = calloc(1, sizeof *s);
    struct fg_st_compare *c = calloc(1, sizeof *c);
    if (!rc && (!s || !c))
        rc = fg_err_set(&err, FG_E_NOMEM, "out of memory");
    if (!rc)
        rc = fg_safetensors_scan(t.repo, o.max_header_bytes, s, &err);
    if (!rc)
        rc = fg_safetensors_compare(s, t.m, c, &err);
    int status = 2;
    if (rc) {
        fprintf(stderr, "fitgate: error: %s\n", err.detail);
    } else {
        if (json)
            print_json(&t, s, c);
        else
            print_text(&t, s, c);
        status = !c->ckpt_known || !t.m ? 2 : c->agree ? 0 : 1;
    }
    free(s);
    free(c);
    fg_source_repo_free(t.repo);
    fg_model_free(t.m);
    return status;
}
