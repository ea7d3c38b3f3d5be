/*
 * jobfile.c - a framework's config file read into flat keys (jobfile.h).
 *
 * Both syntaxes become one small tree (struct tree: nodes in one array, children
 * linked by index, a YAML alias a node pointing at its anchor's, never a copy), which
 * one walk flattens to dotted paths.  Every bound of jobfile.h is checked while the
 * tree is built or walked, so a hostile file costs at most the bounds: a 100 MB file is
 * refused by its size before a byte is read, a 10,000-deep nesting at level 65, an alias
 * bomb at FG_JOBFILE_MAX_VISITS nodes walked.
 *
 * libyaml is loaded on the first YAML file (dlopen), not linked: a job without a config
 * never maps it, like libcurl (hub.c).  <yaml.h> gives the types; every call goes
 * through the table `ly`.
 */
#include "job/jobfile.h"

#include <cjson/cJSON.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <yaml.h>

#include "util/fileio.h"

#define YAML_SONAME "libyaml-0.so.2"
#define YAML_PACKAGE "libyaml-0-2"

#define YAML_FNS(X)                                                                            \
    X(parser_initialize) X(parser_delete) X(parser_set_input_string) X(parser_parse)          \
    X(event_delete)

static struct {
#define YAML_FIELD(n) __typeof__(yaml_##n) *n;
    YAML_FNS(YAML_FIELD)
#undef YAML_FIELD
} ly;

static pthread_once_t yaml_once = PTHREAD_ONCE_INIT;
static char yaml_load_error[256];

/* Loaded once per process and never closed: the pointers stay valid for its life. */
static void yaml_load_once(void)
{
    void *h = dlopen(YAML_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(yaml_load_error, sizeof yaml_load_error, "%s", dlerror());
        return;
    }
    const char *missing = NULL;
#define YAML_LOAD(n)                                                        \
    if (!missing && !(ly.n = (__typeof__(ly.n))dlsym(h, "yaml_" #n)))       \
        missing = "yaml_" #n;
    YAML_FNS(YAML_LOAD)
#undef YAML_LOAD
    if (missing) {
        snprintf(yaml_load_error, sizeof yaml_load_error, "%s has no %s", YAML_SONAME, missing);
        memset(&ly, 0, sizeof ly);
        dlclose(h);
    }
}

/* ---- the tree ---------------------------------------------------------------------- */

enum kind { N_SCALAR, N_MAP, N_SEQ, N_ALIAS };

struct node {
    enum kind kind;
    unsigned line;
    bool null;
    int first, last, next; /* children (a mapping's alternate key, value), sibling; -1 none */
    int target;            /* N_ALIAS: the anchored node */
    char *text;            /* N_SCALAR */
};

struct anchor {
    char *name;
    int node;
};

struct tree {
    struct node *n;
    size_t len, cap;
    struct anchor anchors[256];
    size_t n_anchors;
    const char *name;
};

static void tree_free(struct tree *t)
{
    for (size_t i = 0; i < t->len; i++)
        free(t->n[i].text);
    for (size_t i = 0; i < t->n_anchors; i++)
        free(t->anchors[i].name);
    free(t->n);
}

/* A new node attached under parent (-1: the root); its index, or -1 (err set). */
static int add_node(struct tree *t, int parent, enum kind k, unsigned line, struct fg_err *err)
{
    if (t->len >= FG_JOBFILE_MAX_VISITS)
        return fg_err_set(err, FG_E_RANGE, "%s: more than %u nodes: not a framework config",
                          t->name, FG_JOBFILE_MAX_VISITS), -1;
    if (t->len == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        struct node *p = realloc(t->n, cap * sizeof *p);
        if (!p)
            return fg_err_set(err, FG_E_NOMEM, "%s: out of memory", t->name), -1;
        t->n = p;
        t->cap = cap;
    }
    int i = (int)t->len++;
    t->n[i] = (struct node){.kind = k, .line = line, .first = -1, .last = -1, .next = -1,
                            .target = -1};
    if (parent >= 0) {
        struct node *p = &t->n[parent];
        if (p->last >= 0)
            t->n[p->last].next = i;
        else
            p->first = i;
        p->last = i;
    }
    return i;
}

static bool plain_null(const char *s)
{
    return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
           !strcmp(s, "NULL");
}

/* A YAML 1.1 integer written with '_' between digits (500_000), as PyYAML's safe_load reads
 * it for axolotl, LLaMA-Factory and TRL (resolver.py int: [-+]?(0|[1-9][0-9_]*)): the
 * digits alone.  Anything else is left as written. */
static void yaml11_int(char *s)
{
    const char *d = s + (*s == '-' || *s == '+');
    if (*d < '1' || *d > '9' || !strchr(d, '_') || d[strspn(d, "0123456789_")])
        return;
    char *o = s;
    for (const char *p = s; *p; p++)
        if (*p != '_')
            *o++ = *p;
    *o = '\0';
}

static int set_scalar(struct tree *t, int i, const char *s, size_t n, bool plain,
                      struct fg_err *err)
{
    if (n > FG_JOBFILE_MAX_SCALAR)
        return fg_err_set(err, FG_E_RANGE, "%s:%u: a value of %zu bytes (at most %u)", t->name,
                          t->n[i].line, n, FG_JOBFILE_MAX_SCALAR);
    if (!(t->n[i].text = strndup(s, n)))
        return fg_err_set(err, FG_E_NOMEM, "%s: out of memory", t->name);
    t->n[i].null = plain && plain_null(t->n[i].text);
    if (plain)
        yaml11_int(t->n[i].text);
    return 0;
}

static int anchor_add(struct tree *t, const yaml_char_t *name, int node, struct fg_err *err)
{
    if (!name)
        return 0;
    if (t->n_anchors >= sizeof t->anchors / sizeof t->anchors[0])
        return fg_err_set(err, FG_E_RANGE, "%s: more than %zu YAML anchors", t->name,
                          sizeof t->anchors / sizeof t->anchors[0]);
    if (!(t->anchors[t->n_anchors].name = strdup((const char *)name)))
        return fg_err_set(err, FG_E_NOMEM, "%s: out of memory", t->name);
    t->anchors[t->n_anchors++].node = node;
    return 0;
}

static int anchor_find(const struct tree *t, const yaml_char_t *name)
{
    for (size_t i = t->n_anchors; name && i-- > 0;)
        if (!strcmp(t->anchors[i].name, (const char *)name))
            return t->anchors[i].node;
    return -1;
}

/* One YAML event into the tree; *depth and stack track the open collections, *done whether a
 * document has ended (a second is an error). */
static int yaml_event(struct tree *t, const yaml_event_t *ev, int *stack, int *depth,
                      bool *done, struct fg_err *err)
{
    int parent = *depth ? stack[*depth - 1] : -1;
    unsigned line = (unsigned)ev->start_mark.line + 1;
    int i;
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        /* one document: PyYAML's safe_load, which the frameworks call, refuses a second
         * ("expected a single document in the stream"), and which one a job means is not
         * fitgate's to pick */
        if (*done)
            return fg_err_set(err, FG_E_PARSE, "%s:%u: a second YAML document (after a --- "
                              "line): a framework config is one document", t->name, line);
        return 0;
    case YAML_DOCUMENT_END_EVENT:
        *done = true;
        return 0;
    case YAML_SCALAR_EVENT:
        if ((i = add_node(t, parent, N_SCALAR, line, err)) < 0)
            return err->code;
        if (set_scalar(t, i, (const char *)ev->data.scalar.value, ev->data.scalar.length,
                       ev->data.scalar.plain_implicit, err))
            return err->code;
        return anchor_add(t, ev->data.scalar.anchor, i, err);
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
        if (*depth >= FG_JOBFILE_MAX_DEPTH)
            return fg_err_set(err, FG_E_RANGE, "%s:%u: nested deeper than %d levels: not a "
                              "framework config", t->name, line, FG_JOBFILE_MAX_DEPTH);
        if ((i = add_node(t, parent, ev->type == YAML_MAPPING_START_EVENT ? N_MAP : N_SEQ, line,
                          err)) < 0)
            return err->code;
        stack[(*depth)++] = i;
        return anchor_add(t, ev->type == YAML_MAPPING_START_EVENT ? ev->data.mapping_start.anchor
                                                                  : ev->data.sequence_start.anchor,
                          i, err);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        if (*depth)
            (*depth)--;
        return 0;
    case YAML_ALIAS_EVENT: {
        int target = anchor_find(t, ev->data.alias.anchor);
        if (target < 0)
            return fg_err_set(err, FG_E_INVAL, "%s:%u: alias *%.40s names no anchor", t->name,
                              line, (const char *)ev->data.alias.anchor);
        if ((i = add_node(t, parent, N_ALIAS, line, err)) < 0)
            return err->code;
        t->n[i].target = target;
        return 0;
    }
    default:
        return 0;
    }
}

static int yaml_tree(const char *text, size_t len, struct tree *t, struct fg_err *err)
{
    pthread_once(&yaml_once, yaml_load_once);
    if (yaml_load_error[0])
        return fg_err_set(err, FG_E_UNSUPPORTED, "%s: cannot load libyaml (%s), which fitgate "
                          "needs to read a YAML config; install the %s package (RPM: libyaml)",
                          t->name, yaml_load_error, YAML_PACKAGE);
    yaml_parser_t p;
    if (!ly.parser_initialize(&p))
        return fg_err_set(err, FG_E_NOMEM, "%s: out of memory", t->name);
    ly.parser_set_input_string(&p, (const unsigned char *)text, len);
    int stack[FG_JOBFILE_MAX_DEPTH], depth = 0, rc = 0;
    bool one = false, end = false; /* one: a document ended; end: the stream did */
    while (!end && !rc) {
        yaml_event_t ev;
        if (!ly.parser_parse(&p, &ev)) {
            rc = fg_err_set(err, FG_E_PARSE, "%s:%zu: not YAML: %.120s", t->name,
                            p.problem_mark.line + 1, p.problem ? p.problem : "syntax error");
            break;
        }
        end = ev.type == YAML_STREAM_END_EVENT;
        rc = yaml_event(t, &ev, stack, &depth, &one, err);
        ly.event_delete(&ev);
    }
    ly.parser_delete(&p);
    return rc;
}

/* ---- JSON --------------------------------------------------------------------------- */

/* The line of the first "key" at or after *pos in text; *pos moves past it. */
static unsigned json_line(const char *text, size_t len, size_t *pos, const char *key)
{
    char q[160];
    int n = snprintf(q, sizeof q, "\"%s\"", key);
    const char *hit = n > 0 && (size_t)n < sizeof q ? memmem(text + *pos, len - *pos, q, (size_t)n)
                                                    : NULL;
    if (!hit)
        hit = text + *pos;
    unsigned line = 1;
    for (const char *c = text; c < hit; c++)
        line += *c == '\n';
    *pos = (size_t)(hit - text);
    return line;
}

static int json_node(struct tree *t, const cJSON *j, int parent, unsigned line, int depth,
                     const char *text, size_t len, size_t *pos, struct fg_err *err)
{
    if (depth > FG_JOBFILE_MAX_DEPTH)
        return fg_err_set(err, FG_E_RANGE, "%s:%u: nested deeper than %d levels: not a "
                          "framework config", t->name, line, FG_JOBFILE_MAX_DEPTH);
    char num[48];
    int i;
    if (cJSON_IsObject(j) || cJSON_IsArray(j)) {
        if ((i = add_node(t, parent, cJSON_IsObject(j) ? N_MAP : N_SEQ, line, err)) < 0)
            return err->code;
        for (const cJSON *c = j->child; c; c = c->next) {
            unsigned cl = line;
            if (cJSON_IsObject(j)) {
                cl = json_line(text, len, pos, c->string ? c->string : "");
                int k = add_node(t, i, N_SCALAR, cl, err);
                if (k < 0 || set_scalar(t, k, c->string ? c->string : "",
                                        strlen(c->string ? c->string : ""), false, err))
                    return err->code;
            }
            if (json_node(t, c, i, cl, depth + 1, text, len, pos, err))
                return err->code;
        }
        return 0;
    }
    if ((i = add_node(t, parent, N_SCALAR, line, err)) < 0)
        return err->code;
    const char *s = num;
    if (cJSON_IsString(j))
        s = j->valuestring;
    else if (cJSON_IsBool(j))
        s = cJSON_IsTrue(j) ? "true" : "false";
    else if (cJSON_IsNumber(j) && fabs(j->valuedouble) < 9.2e18 && /* fits a long long */
             j->valuedouble == (double)(long long)j->valuedouble)
        snprintf(num, sizeof num, "%lld", (long long)j->valuedouble);
    else if (cJSON_IsNumber(j))
        snprintf(num, sizeof num, "%.17g", j->valuedouble);
    else
        s = "";
    if (set_scalar(t, i, s, strlen(s), false, err))
        return err->code;
    t->n[i].null = cJSON_IsNull(j);
    return 0;
}

static int json_tree(const char *text, size_t len, struct tree *t, struct fg_err *err)
{
    cJSON *j = cJSON_ParseWithLength(text, len);
    if (!j) {
        const char *at = cJSON_GetErrorPtr();
        unsigned line = 1;
        for (const char *c = text; at && c < at && c < text + len; c++)
            line += *c == '\n';
        return fg_err_set(err, FG_E_PARSE, "%s:%u: not JSON (or nested deeper than cJSON's "
                          "%d levels)", t->name, line, CJSON_NESTING_LIMIT);
    }
    size_t pos = 0;
    int rc = json_node(t, j, -1, 1, 0, text, len, &pos, err);
    cJSON_Delete(j);
    return rc;
}

/* ---- the walk --------------------------------------------------------------------------- */

struct walk {
    const struct tree *t;
    struct fg_jobfile *f;
    size_t cap, visits;
    struct fg_err *err;
};

static int resolve(struct walk *w, int i)
{
    for (int hops = 0; i >= 0 && w->t->n[i].kind == N_ALIAS && hops < 64; hops++)
        i = w->t->n[i].target;
    return i;
}

static int visit(struct walk *w)
{
    if (++w->visits > FG_JOBFILE_MAX_VISITS)
        return fg_err_set(w->err, FG_E_RANGE, "%s: expands past %u nodes (YAML aliases of "
                          "aliases?): not a framework config", w->f->name,
                          FG_JOBFILE_MAX_VISITS);
    return 0;
}

static int add_key(struct walk *w, const char *path, const char *value, unsigned line,
                   bool null, bool list, bool merged)
{
    struct fg_jobfile *f = w->f;
    if (f->n >= FG_JOBFILE_MAX_KEYS)
        return fg_err_set(w->err, FG_E_RANGE, "%s: more than %u keys: not a framework config",
                          f->name, FG_JOBFILE_MAX_KEYS);
    if (f->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 32;
        struct fg_jobfile_key *k = realloc(f->keys, cap * sizeof *k);
        if (!k)
            return fg_err_set(w->err, FG_E_NOMEM, "%s: out of memory", f->name);
        f->keys = k;
        w->cap = cap;
    }
    struct fg_jobfile_key *k = &f->keys[f->n];
    memset(k, 0, sizeof *k);
    if (!(k->value = strdup(value)))
        return fg_err_set(w->err, FG_E_NOMEM, "%s: out of memory", f->name);
    f->n++;
    snprintf(k->path, sizeof k->path, "%s", path);
    k->line = line;
    k->null = null;
    k->list = list;
    k->merged = merged;
    return 0;
}

/* A sequence of scalars joined with ','; other sequences (datasets: lists of mappings) are
 * nothing fitgate reads. */
static int walk_seq(struct walk *w, const char *path, int seq, unsigned line, bool merged)
{
    char joined[4096];
    size_t off = 0;
    for (int c = w->t->n[seq].first; c >= 0; c = w->t->n[c].next) {
        int v = resolve(w, c);
        if (visit(w))
            return w->err->code;
        if (v < 0 || w->t->n[v].kind != N_SCALAR)
            return 0;
        int n = snprintf(joined + off, sizeof joined - off, "%s%s", off ? "," : "",
                         w->t->n[v].text);
        if (n < 0 || (size_t)n >= sizeof joined - off)
            return 0; /* too long to be a list fitgate reads */
        off += (size_t)n;
    }
    joined[off] = '\0';
    return add_key(w, path, joined, line, false, true, merged);
}

static int walk_map(struct walk *w, const char *prefix, int map, int depth, bool merged)
{
    if (depth > FG_JOBFILE_MAX_DEPTH)
        return fg_err_set(w->err, FG_E_RANGE, "%s: nested deeper than %d levels", w->f->name,
                          FG_JOBFILE_MAX_DEPTH);
    for (int k = w->t->n[map].first; k >= 0; k = w->t->n[k].next) {
        int vi = w->t->n[k].next;
        if (vi < 0)
            break;
        int key = resolve(w, k), v = resolve(w, vi);
        if (visit(w))
            return w->err->code;
        if (key < 0 || v < 0 || w->t->n[key].kind != N_SCALAR)
            goto next; /* a complex key: nothing a framework names */
        const struct node *kn = &w->t->n[key], *vn = &w->t->n[v];
        char path[160];
        bool merge = !strcmp(kn->text, "<<");
        int n = merge ? snprintf(path, sizeof path, "%s", prefix)
                      : snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "", kn->text);
        if (n < 0 || (size_t)n >= sizeof ((struct fg_jobfile_key *)0)->path)
            goto next; /* longer than any key a row names */
        int rc = 0;
        if (vn->kind == N_MAP)
            rc = walk_map(w, path, v, depth + 1, merged || merge);
        else if (vn->kind == N_SEQ && !merge)
            rc = walk_seq(w, path, v, kn->line, merged);
        else if (vn->kind == N_SCALAR && !merge)
            rc = add_key(w, path, vn->text, kn->line, vn->null, false, merged);
        if (rc)
            return rc;
    next:
        k = vi;
    }
    return 0;
}

static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

int fg_jobfile_parse(const char *text, size_t len, const char *name, struct fg_jobfile **out,
                     struct fg_err *err)
{
    struct tree t = {.name = name ? name : "config"};
    struct fg_jobfile *f = calloc(1, sizeof *f);
    int rc = 0;
    *out = NULL;
    if (!f)
        return fg_err_set(err, FG_E_NOMEM, "%s: out of memory", t.name);
    snprintf(f->name, sizeof f->name, "%s", t.name);
    f->digest = fnv1a(text, len);
    if (len > FG_JOBFILE_MAX_BYTES) {
        rc = fg_err_set(err, FG_E_RANGE, "%s: %zu bytes, more than a framework config (at most "
                        "%u)", t.name, len, FG_JOBFILE_MAX_BYTES);
        goto out;
    }
    if (memchr(text, '\0', len)) {
        rc = fg_err_set(err, FG_E_PARSE, "%s: holds a NUL byte: not a YAML or JSON text", t.name);
        goto out;
    }
    size_t lead = 0; /* text need not end in a NUL: its length bounds every look */
    while (lead < len && strchr(" \t\r\n", text[lead]))
        lead++;
    rc = lead < len && text[lead] == '{' ? json_tree(text, len, &t, err)
                                          : yaml_tree(text, len, &t, err);
    if (rc)
        goto out;
    if (!t.len || t.n[0].kind != N_MAP) {
        rc = fg_err_set(err, FG_E_PARSE, "%s: not a mapping of keys (a framework config is "
                        "key: value lines or a JSON object)", t.name);
        goto out;
    }
    struct walk w = {.t = &t, .f = f, .err = err};
    rc = walk_map(&w, "", 0, 0, false);
out:
    tree_free(&t);
    if (rc)
        fg_jobfile_free(f);
    else
        *out = f;
    return rc;
}

int fg_jobfile_read(const char *path, const char *base_dir, struct fg_jobfile **out,
                    struct fg_err *err)
{
    char full[1024];
    struct stat st;
    char *text = NULL;
    size_t len = 0;
    *out = NULL;
    if (!path || !*path)
        return fg_err_set(err, FG_E_INVAL, "an empty config file name");
    int n = path[0] != '/' && base_dir && *base_dir
                ? snprintf(full, sizeof full, "%s/%s", base_dir, path)
                : snprintf(full, sizeof full, "%s", path);
    if (n < 0 || (size_t)n >= sizeof full)
        return fg_err_set(err, FG_E_RANGE, "config file name longer than %zu bytes",
                          sizeof full - 1);
    int fd = fg__openat_regular(AT_FDCWD, full, 0, &st);
    /* not a regular file (a FIFO, a directory, a device) is the job's own error as a missing
     * one is: only a read that fails is not (FG_E_IO, the site's to decide) */
    if (fd < 0)
        return fg_err_set(err, errno == ENOENT || errno == ENOTDIR ? FG_E_NOTFOUND
                               : errno == EINVAL                   ? FG_E_INVAL
                                                                   : FG_E_IO,
                          "config %s: %s", full, errno == EINVAL ? "not a regular file"
                                                                  : strerror(errno));
    int rc = 0;
    if ((uint64_t)st.st_size > FG_JOBFILE_MAX_BYTES)
        rc = fg_err_set(err, FG_E_RANGE, "config %s: %lld bytes, more than a framework config "
                        "(at most %u)", full, (long long)st.st_size, FG_JOBFILE_MAX_BYTES);
    else
        rc = fg__read_fd(fd, &st, full, FG_JOBFILE_MAX_BYTES, &text, &len, err);
    close(fd);
    if (!rc)
        rc = fg_jobfile_parse(text, len, path, out, err);
    free(text);
    return rc;
}

void fg_jobfile_free(struct fg_jobfile *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n; i++)
        free(f->keys[i].value);
    free(f->keys);
    free(f);
}

bool fg_jobfile_key_is(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if ((*a == '-' ? '_' : *a) != (*b == '-' ? '_' : *b))
            return false;
    return *a == *b;
}

const struct fg_jobfile_key *fg_jobfile_get(const struct fg_jobfile *f, const char *path)
{
    const struct fg_jobfile_key *own = NULL, *merged = NULL;
    for (size_t i = 0; f && i < f->n; i++)
        if (fg_jobfile_key_is(f->keys[i].path, path)) {
            if (f->keys[i].merged)
                merged = &f->keys[i];
            else
                own = &f->keys[i];
        }
    return own ? own : merged;
}
