#include "source/config.h"
#include "source/config_classes.h"
#include "util/fileio.h"
#include "util/fmt.h"
#include "util/jsonscan.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct fg_config {
    cJSON *root;
    struct fg_cfg_index *index; /* the root's, or NULL (no memory: lookups walk) */
    char origin[4096];
};

/*
 * The members of one object by name, the last of duplicate names kept (as lookup's walk
 * keeps it): a graph build looks up some thirty keys, each under up to four aliases, in a
 * config of forty or more, and the walks were a twentieth of a full plan (callgrind).
 * Open addressing, at most half full.  Each member holding an object has its own index
 * (sub), to INDEX_DEPTH levels, so the reads of a text_config or vision_config are recorded
 * as the root's are: what a family reader did not read of a sub-config it entered makes
 * its count unsure as a root key does (keys.c).
 */
enum { INDEX_DEPTH = 4 };

struct fg_cfg_index {
    const cJSON *obj;
    size_t mask;
    bool asked; /* a reader looked a key but model_type up here, present or not */
    struct slot {
        uint64_t hash;
        const cJSON *item;
        struct fg_cfg_index *sub; /* item's own index when item is an object, or NULL */
        bool read;   /* a reader looked the key up (fg__cfg_was_read) */
    } slot[];
};

static uint64_t key_hash(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

static void index_free(struct fg_cfg_index *x)
{
    if (!x)
        return;
    for (size_t i = 0; i <= x->mask; i++)
        index_free(x->slot[i].sub);
    free(x);
}

/* NULL when out of memory: lookups then walk (and no reads are recorded below that). */
static struct fg_cfg_index *index_build(const cJSON *obj, unsigned depth)
{
    size_t n = 0, cap = 16;
    const cJSON *e;
    cJSON_ArrayForEach(e, obj)
        n++;
    while (cap < 2 * n)
        cap *= 2;
    struct fg_cfg_index *x = calloc(1, sizeof *x + cap * sizeof x->slot[0]);
    if (!x)
        return NULL;
    x->obj = obj;
    x->mask = cap - 1;
    cJSON_ArrayForEach(e, obj) {
        if (!e->string)
            continue;
        uint64_t h = key_hash(e->string, strlen(e->string));
        size_t i = h & x->mask;
        while (x->slot[i].item && !(x->slot[i].hash == h && !strcmp(x->slot[i].item->string,
                                                                     e->string)))
            i = (i + 1) & x->mask;
        x->slot[i].hash = h;
        x->slot[i].item = e; /* a later duplicate replaces the earlier */
    }
    for (size_t i = 0; depth > 1 && i < cap; i++)
        if (x->slot[i].item && cJSON_IsObject(x->slot[i].item))
            x->slot[i].sub = index_build(x->slot[i].item, depth - 1);
    return x;
}

/* The slot of the last member named exactly the n bytes at key (h its key_hash), or NULL. */
static struct slot *index_slot_h(const struct fg_cfg_index *x, const char *key, size_t n,
                                 uint64_t h)
{
    for (size_t i = h & x->mask; x->slot[i].item; i = (i + 1) & x->mask) {
        const char *s = x->slot[i].item->string;
        if (x->slot[i].hash == h && !strncmp(s, key, n) && s[n] == '\0')
            /* the index belongs to the document, which a view only borrows: marking a key
             * read is the one write through a view, and changes no answer */
            return (struct slot *)&x->slot[i];
    }
    return NULL;
}

/* Record that a reader looked the n-byte key up in x, present or not (any_read).  The index
 * is the document's record of reads, written through const views as index_slot's slots are. */
static void mark_asked(const struct fg_cfg_index *x, const char *key, size_t n)
{
    if (n != 10 || strncmp(key, "model_type", 10))
        ((struct fg_cfg_index *)x)->asked = true;
}

static struct slot *index_slot(const struct fg_cfg_index *x, const char *key, size_t n)
{
    return index_slot_h(x, key, n, key_hash(key, n));
}

/* Does c answer from its index (c->obj is the object the index was built over)? */
static bool indexed(const struct fg_cfg *c)
{
    return c->obj && c->index && c->index->obj == c->obj;
}

/* c's over row of kind for the n-byte key, or NULL. */
static const struct fg_cfg_over *over_row(const struct fg_cfg *c, enum fg_cfg_over_kind kind,
                                          const char *key, size_t n)
{
    for (const struct fg_cfg_over *o = c->over; o && o->key; o++)
        if (o->kind == kind && !strncmp(o->key, key, n) && !o->key[n])
            return o;
    return NULL;
}

const cJSON *fg__cfg_raw(const struct fg_cfg *c, const char *key)
{
    size_t n = strlen(key);
    const struct fg_cfg_over *set = over_row(c, FG_CFG_SET, key, n);
    const cJSON *it = NULL;
    if (c->obj && indexed(c)) {
        struct slot *sl = index_slot(c->index, key, n);
        mark_asked(c->index, key, n);
        if (sl)
            sl->read = true;
        it = sl ? sl->item : NULL;
    } else if (c->obj) {
        it = cJSON_GetObjectItemCaseSensitive(c->obj, key);
    }
    if (set)
        return set->value;
    if (over_row(c, FG_CFG_HIDE, key, n))
        it = NULL;
    const struct fg_cfg_over *def = it ? NULL : over_row(c, FG_CFG_DEFAULT, key, n);
    return def ? def->value : it;
}

bool fg__cfg_was_read(const struct fg_cfg *c, const char *key)
{
    if (!indexed(c))
        return true; /* not tracked: an object built aside, or nested past INDEX_DEPTH */
    const struct slot *sl = index_slot(c->index, key, strlen(key));
    return !sl || sl->read;
}

uint64_t fg__cfg_key_code(const char *key)
{
    return key_hash(key, strlen(key));
}

const cJSON *fg__cfg_unread(const struct fg_cfg *c, const char *key, uint64_t code)
{
    if (!indexed(c))
        return NULL;
    const struct slot *sl = index_slot_h(c->index, key, strlen(key), code);
    return sl && !sl->read ? sl->item : NULL;
}

/* Was any member of x but model_type (read to pick a reader, then often read no more from
 * this view) looked up through a view of the document?  A lookup of a key x does not hold
 * counts: a sub-config that gives only keys its reader takes the defaults of (Idefics2's
 * perceiver_config of model_type alone) was read all the same. */
static bool any_read(const struct fg_cfg_index *x)
{
    if (x->asked)
        return true;
    for (size_t i = 0; i <= x->mask; i++)
        if (x->slot[i].item && x->slot[i].read && strcmp(x->slot[i].item->string, "model_type"))
            return true;
    return false;
}

bool fg__cfg_next_read_child(const struct fg_cfg *c, size_t *pos, struct fg_cfg *child)
{
    if (!indexed(c))
        return false;
    for (; *pos <= c->index->mask; (*pos)++) {
        const struct slot *sl = &c->index->slot[*pos];
        /* an object none of whose keys was looked up here was read through a copy (a reader
         * that renames keys first) or not at all: its reads are not known, so it is left out
         * rather than every key of it taken as unread */
        if (!sl->item || !sl->read || !sl->sub || !any_read(sl->sub))
            continue;
        (*pos)++;
        *child = (struct fg_cfg){.obj = sl->item, .origin = c->origin, .index = sl->sub};
        if (*c->scope)
            snprintf(child->scope, sizeof child->scope, "%.30s.%.30s", c->scope,
                     sl->item->string);
        else
            snprintf(child->scope, sizeof child->scope, "%.62s", sl->item->string);
        return true;
    }
    return false;
}

static int read_file(const char *path, char **text, size_t *len, struct fg_err *err)
{
    if (fg__read_file(path, FG_CONFIG_MAX_BYTES, text, len) == 0)
        return 0;
    int e = errno;
    if (e == ENOENT || e == ENOTDIR)
        return fg_err_set(err, FG_E_NOTFOUND, "%s: no such file", path);
    if (e == EINVAL)
        return fg_err_set(err, FG_E_IO, "%s: not a regular file; give a config.json file or "
                          "its directory", path);
    if (e == EFBIG)
        return fg_err_set(err, FG_E_LIMIT, "%s: larger than %u bytes; not a config.json", path,
                          FG_CONFIG_MAX_BYTES);
    if (e == ENOMEM)
        return fg_err_set(err, FG_E_NOMEM, "%s: out of memory", path);
    if (e == EIO)
        return fg_err_set(err, FG_E_IO, "%s: read error", path);
    return fg_err_set(err, FG_E_IO, "%s: cannot open: %s", path, strerror(e));
}

int fg_config_load(const char *path, struct fg_config **out, struct fg_err *err)
{
    char file[4096];
    struct stat st;
    *out = NULL;
    if (!path || !*path)
        return fg_err_set(err, FG_E_INVAL, "empty model path");
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        int w = snprintf(file, sizeof file, "%s/config.json", path);
        if (w < 0 || (size_t)w >= sizeof file)
            return fg_err_set(err, FG_E_RANGE, "path too long: %.200s", path);
        if (stat(file, &st) != 0)
            return fg_err_set(err, FG_E_NOTFOUND,
                              "%s: directory has no config.json; point at the model's "
                              "directory or its config.json", path);
    } else {
        int w = snprintf(file, sizeof file, "%s", path);
        if (w < 0 || (size_t)w >= sizeof file)
            return fg_err_set(err, FG_E_RANGE, "path too long: %.200s", path);
    }
    char *text = NULL;
    size_t len = 0;
    int rc = read_file(file, &text, &len, err);
    if (rc)
        return rc;
    rc = fg_config_parse(text, len, file, out, err);
    free(text);
    return rc;
}

/* cJSON's parse of text, or of its copy with Python's Infinity as a number when text alone
 * does not parse; *end_off gets the offset where the parse stopped (as cJSON's end). */
static cJSON *parse_json(const char *text, size_t len, size_t *end_off)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    const char *base = text;
    char *copy = root ? NULL : fg__json_python_infinity(text, len);
    if (copy) {
        root = cJSON_ParseWithLengthOpts(copy, len, &end, 0);
        base = copy;
    }
    *end_off = end && end >= base ? (size_t)(end - base) : 0;
    free(copy);
    return root;
}

int fg_config_parse(const char *text, size_t len, const char *origin, struct fg_config **out,
                    struct fg_err *err)
{
    *out = NULL;
    if (len > FG_CONFIG_MAX_BYTES)
        return fg_err_set(err, FG_E_LIMIT, "%s: larger than %u bytes; not a config.json", origin,
                          FG_CONFIG_MAX_BYTES);
    size_t off = 0;
    cJSON *root = parse_json(text, len, &off);
    const char *end = text + off;
    if (!root) {
        size_t line = 1;
        for (size_t i = 0; i < off && i < len; i++)
            line += text[i] == '\n';
        return fg_err_set(err, FG_E_PARSE,
                          "%s: malformed JSON near line %zu (byte %zu); fix the file or "
                          "fetch it again", origin, line, off);
    }
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return fg_err_set(err, FG_E_PARSE, "%s: top level is not a JSON object", origin);
    }
    /* Text after the object means a broken or concatenated file: refuse it
     * rather than read half of it. */
    for (const char *p = end; p && p < text + len; p++)
        if (!(*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\0')) {
            cJSON_Delete(root);
            return fg_err_set(err, FG_E_PARSE, "%s: text after the JSON object (byte %zu); fix "
                              "the file or fetch it again", origin, (size_t)(p - text));
        }
    struct fg_config *doc = fg__json_escape_tree(root) ? NULL : calloc(1, sizeof *doc);
    if (!doc || fg__cfg_normalise(root, NULL, INDEX_DEPTH)) {
        free(doc);
        cJSON_Delete(root);
        return fg_err_set(err, FG_E_NOMEM, "out of memory");
    }
    doc->root = root;
    doc->index = index_build(root, INDEX_DEPTH);
    snprintf(doc->origin, sizeof doc->origin, "%s", origin ? origin : "config.json");
    *out = doc;
    return 0;
}

void fg_config_free(struct fg_config *doc)
{
    if (!doc)
        return;
    cJSON_Delete(doc->root);
    index_free(doc->index);
    free(doc);
}

struct fg_cfg fg_config_root(const struct fg_config *doc)
{
    struct fg_cfg c = {.obj = doc->root, .origin = doc->origin, .scope = "", .index = doc->index};
    fg__cfg_class_rules(fg__cfg_own_type(doc->root), &c.rules, &c.nrules);
    return c;
}

const char *fg_config_origin(const struct fg_config *doc)
{
    return doc->origin;
}

/* Is the n-byte alias one of the names in list ("a|b|c")? */
static bool alias_listed(const char *list, const char *alias, size_t n)
{
    for (const char *p = list; p && *p;) {
        const char *bar = strchr(p, '|');
        size_t k = bar ? (size_t)(bar - p) : strlen(p);
        if (k == n && !strncmp(p, alias, n))
            return true;
        p = bar ? bar + 1 : NULL;
    }
    return false;
}

/*
 * Find the first alias present and not null; *name gets the alias used and *sub (when not
 * NULL) the found object's own index, or NULL.  A key given twice counts by its last
 * occurrence (cJSON keeps both; Python's json keeps the last).  An indexed view answers from
 * its index (struct fg_cfg_index), one probe per alias, and records the read; another object
 * by one walk for all the aliases.  An alias absent here and named in c->inherit is looked
 * up in c->outer.
 */
static const cJSON *lookup_sub(const struct fg_cfg *c, const char *keys, char *name, size_t cap,
                               const struct fg_cfg_index **sub);

/*
 * The attribute_map of c's class: for each alias of keys (n_alias of them), the key the
 * class maps it to, and each key the class maps to it, looked up in turn (one level: the
 * map's names are not mapped again).  NULL when none is present.
 */
static const cJSON *lookup_mapped(const struct fg_cfg *c, const char **alias,
                                  const size_t *len, size_t n_alias, char *name, size_t cap,
                                  const struct fg_cfg_index **sub)
{
    struct fg_cfg plain = *c;
    plain.nrules = 0;
    for (size_t i = 0; i < n_alias; i++)
        for (size_t r = 0; r < c->nrules; r++) {
            const struct fg__cfg_rule *ru = &c->rules[r];
            if (ru->kind != FG__CFG_ALIAS)
                continue;
            const char *other = NULL;
            if (!strncmp(ru->key, alias[i], len[i]) && !ru->key[len[i]])
                other = ru->value;
            else if (!strncmp(ru->value, alias[i], len[i]) && !ru->value[len[i]])
                other = ru->key;
            const cJSON *it = other ? lookup_sub(&plain, other, name, cap, sub) : NULL;
            if (it)
                return it;
        }
    return NULL;
}

static const cJSON *lookup_sub(const struct fg_cfg *c, const char *keys, char *name, size_t cap,
                               const struct fg_cfg_index **sub)
{
    enum { MAX_ALIASES = 8, KEY_MAX = 127 };
    const char *alias[MAX_ALIASES];
    size_t len[MAX_ALIASES], n_alias = 0;
    for (const char *p = keys; *p && n_alias < MAX_ALIASES;) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        alias[n_alias] = p;
        len[n_alias++] = n > KEY_MAX ? KEY_MAX : n;
        p += n + (bar ? 1 : 0);
    }
    const cJSON *last[MAX_ALIASES] = {0}, *e;
    const struct fg_cfg_index *subs[MAX_ALIASES] = {0};
    if (indexed(c))
        for (size_t i = 0; i < n_alias; i++) {
            struct slot *sl = index_slot(c->index, alias[i], len[i]);
            mark_asked(c->index, alias[i], len[i]);
            if (sl) {
                sl->read = true;
                last[i] = sl->item;
                subs[i] = sl->sub;
            }
        }
    else if (c->obj)
        cJSON_ArrayForEach(e, c->obj)
            for (size_t i = 0; e->string && i < n_alias; i++)
                if ((!len[i] || e->string[0] == alias[i][0]) &&
                    !strncmp(e->string, alias[i], len[i]) && e->string[len[i]] == '\0')
                    last[i] = e;
    size_t pick = 0; /* the first alias names a key that is absent */
    const cJSON *found = NULL;
    const struct fg_cfg_over *over = NULL;
    for (size_t i = 0; c->over && i < n_alias && !found; i++)
        if ((over = over_row(c, FG_CFG_SET, alias[i], len[i]))) {
            found = over->value;
            pick = i;
            subs[i] = NULL;
        } else if (over_row(c, FG_CFG_HIDE, alias[i], len[i])) {
            last[i] = NULL;
        }
    for (size_t i = 0; i < n_alias && !found; i++)
        if (last[i] && !cJSON_IsNull(last[i])) {
            found = last[i];
            pick = i;
        }
    if (sub)
        *sub = found ? subs[pick] : NULL;
    if (!found && c->nrules) {
        const cJSON *it = lookup_mapped(c, alias, len, n_alias, name, cap, sub);
        if (it)
            return it;
    }
    for (size_t i = 0; i < n_alias && !found && c->outer && c->inherit; i++)
        if (alias_listed(c->inherit, alias[i], len[i])) {
            const cJSON *it = lookup_sub(c->outer, keys, name, cap, sub);
            if (it)
                return it;
            break;
        }
    for (size_t i = 0; i < n_alias && !found && c->over; i++)
        if ((over = over_row(c, FG_CFG_DEFAULT, alias[i], len[i]))) {
            found = over->value;
            pick = i;
        }
    size_t n = n_alias ? len[pick] : 0;
    if (n >= cap)
        n = cap - 1;
    memcpy(name, n_alias ? alias[pick] : "", n);
    name[n] = '\0';
    return found;
}

static const cJSON *lookup(const struct fg_cfg *c, const char *keys, char *name, size_t cap)
{
    return lookup_sub(c, keys, name, cap, NULL);
}

bool fg_cfg_class_refusal(const struct fg_cfg *c, const char *keys, const char *by, char *buf,
                          size_t len)
{
    const struct fg__cfg_rule *ru = NULL;
    for (size_t r = 0; r < c->nrules && !ru; r++)
        if (c->rules[r].kind == FG__CFG_DIVIDES && c->rules[r].message &&
            fg__cfg_names_attribute(c, keys, c->rules[r].key) &&
            fg__cfg_names_attribute(c, by, c->rules[r].value))
            ru = &c->rules[r];
    if (!ru || !len)
        return false;
    size_t o = (size_t)snprintf(buf, len, "%s: ", ru->cls);
    for (const char *m = ru->message; *m && o + 1 < len; m++) {
        const char *close = *m == '{' ? strchr(m, '}') : NULL;
        char name[64], name2[128];
        if (!close || (size_t)(close - m - 1) >= sizeof name) {
            buf[o++] = *m;
            continue;
        }
        snprintf(name, sizeof name, "%.*s", (int)(close - m - 1), m + 1);
        const cJSON *it = lookup(c, name, name2, sizeof name2);
        double v;
        if (cJSON_IsNumber(it))
            o += (size_t)snprintf(buf + o, len - o, "%.15g", it->valuedouble);
        else if (!it && fg__cfg_class_number(c, name, -1e300, 1e300, false, &v))
            o += (size_t)snprintf(buf + o, len - o, "%.15g", v);
        else
            o += (size_t)snprintf(buf + o, len - o, "%s", it ? "?" : "None");
        m = close;
    }
    buf[o < len ? o : len - 1] = '\0';
    return true;
}


static int key_err(const struct fg_cfg *c, struct fg_err *err, int code, const char *key,
                   const char *what)
{
    return fg_err_set(err, code, "%s: key '%s%s%s' %s", c->origin, c->scope, *c->scope ? "." : "",
                      key, what);
}

bool fg_cfg_has(const struct fg_cfg *c, const char *keys)
{
    char name[128];
    return lookup(c, keys, name, sizeof name) != NULL;
}

bool fg_cfg_class_filled(const struct fg_cfg *c, const char *keys, const char **value)
{
    char name[128];
    const struct fg__cfg_rule *d =
        lookup(c, keys, name, sizeof name) ? NULL : fg__cfg_class_default(c, keys);
    if (d)
        *value = d->value;
    return d != NULL;
}

bool fg_cfg_key(const struct fg_cfg *c, const char *keys, char *name, size_t cap)
{
    char found[128];
    if (!cap || !lookup(c, keys, found, sizeof found))
        return false;
    snprintf(name, cap, "%s", found);
    return true;
}

bool fg_cfg_child(const struct fg_cfg *c, const char *key, struct fg_cfg *child, struct fg_err *err)
{
    char name[128];
    const struct fg_cfg_index *sub = NULL;
    const cJSON *it = lookup_sub(c, key, name, sizeof name, &sub);
    if (!it)
        return false;
    if (!cJSON_IsObject(it)) {
        key_err(c, err, FG_E_TYPE, name, "must be an object");
        return false;
    }
    child->obj = it;
    child->origin = c->origin;
    child->index = sub;
    child->outer = NULL;
    child->inherit = NULL;
    child->over = NULL;
    const struct fg__cfg_rule *sub_class = fg__cfg_rule_find(c->rules, c->nrules, FG__CFG_SUB,
                                                             name, strlen(name));
    const char *type = fg__cfg_own_type(it) ? fg__cfg_own_type(it)
                       : sub_class          ? sub_class->value
                                            : NULL;
    fg__cfg_class_rules(type, &child->rules, &child->nrules);
    if (*c->scope)
        snprintf(child->scope, sizeof child->scope, "%.30s.%.30s", c->scope, name);
    else
        snprintf(child->scope, sizeof child->scope, "%.62s", name);
    return true;
}

static int number_u64(const struct fg_cfg *c, const cJSON *it, const char *name, uint64_t min,
                      uint64_t max, uint64_t *out, struct fg_err *err)
{
    char what[160];
    if (!cJSON_IsNumber(it)) {
        return key_err(c, err, FG_E_TYPE, name,
                       cJSON_IsString(it) ? "must be a number, got a string"
                                          : "must be a number");
    }
    double v = it->valuedouble;
    if (!isfinite(v) || v != floor(v)) {
        return key_err(c, err, FG_E_TYPE, name, "must be a whole number");
    }
    if (v < (double)min || v > (double)max) {
        snprintf(what, sizeof what, "is %.17g, outside [%llu, %llu]", v, (unsigned long long)min,
                 (unsigned long long)max);
        return key_err(c, err, FG_E_RANGE, name, what);
    }
    *out = (uint64_t)v;
    return 0;
}

int fg_cfg_u64(const struct fg_cfg *c, const char *keys, uint64_t def, uint64_t min, uint64_t max,
               uint64_t *out, struct fg_err *err)
{
    char name[128];
    const cJSON *it = lookup(c, keys, name, sizeof name);
    if (!it) {
        double v;
        *out = fg__cfg_class_number(c, keys, (double)min, (double)max, true, &v) ? (uint64_t)v
                                                                                 : def;
        return 0;
    }
    return number_u64(c, it, name, min, max, out, err);
}

int fg_cfg_u64_req(const struct fg_cfg *c, const char *keys, uint64_t min, uint64_t max,
                   uint64_t *out, struct fg_err *err)
{
    char name[128];
    const cJSON *it = lookup(c, keys, name, sizeof name);
    if (!it)
        return key_err(c, err, FG_E_MISSING, name, "is required and missing");
    return number_u64(c, it, name, min, max, out, err);
}

int fg_cfg_f64(const struct fg_cfg *c, const char *keys, double def, double min, double max,
               double *out, struct fg_err *err)
{
    char name[128], what[160];
    const cJSON *it = lookup(c, keys, name, sizeof name);
    if (!it) {
        double v;
        *out = fg__cfg_class_number(c, keys, min, max, false, &v) ? v : def;
        return 0;
    }
    if (!cJSON_IsNumber(it))
        return key_err(c, err, FG_E_TYPE, name, "must be a number");
    double v = it->valuedouble;
    if (!isfinite(v) || v < min || v > max) {
        snprintf(what, sizeof what, "is %.17g, outside [%g, %g]", v, min, max);
        return key_err(c, err, FG_E_RANGE, name, what);
    }
    *out = v;
    return 0;
}

int fg_cfg_bool(const struct fg_cfg *c, const char *keys, bool def, bool *out, struct fg_err *err)
{
    char name[128];
    const cJSON *it = lookup(c, keys, name, sizeof name);
    if (!it) {
        const struct fg__cfg_rule *d = fg__cfg_class_default(c, keys);
        *out = d && !strcmp(d->value, "true") ? true : d && !strcmp(d->value, "false") ? false
                                                                                    : def;
        return 0;
    }
    if (!cJSON_IsBool(it))
        return key_err(c, err, FG_E_TYPE, name, "must be true or false");
    *out = cJSON_IsTrue(it);
    return 0;
}

int fg_cfg_str(const struct fg_cfg *c, const char *keys, const char *def, const char **out,
               struct fg_err *err)
{
    char name[128];
    const cJSON *it = lookup(c, keys, name, sizeof name);
    if (!it) {
        const struct fg__cfg_rule *d = fg__cfg_class_default(c, keys);
        *out = d && (d->flags & FG__CFG_TEXT) ? d->value : def;
        return 0;
    }
    if (!cJSON_IsString(it))
        return key_err(c, err, FG_E_TYPE, name, "must be a string");
    *out = it->valuestring;
    return 0;
}

int fg_cfg_u64_array(const struct fg_cfg *c, const char *keys, uint64_t min, uint64_t max,
                     uint64_t *out, size_t cap, size_t *n, struct fg_err *err)
{
    char name[128], item[160];
    const cJSON *it = lookup(c, keys, name, sizeof name);
    *n = 0;
    if (!it)
        return 0;
    if (!cJSON_IsArray(it))
        return key_err(c, err, FG_E_TYPE, name, "must be an array of numbers");
    size_t i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, it) {
        uint64_t v;
        snprintf(item, sizeof item, "%s[%zu]", name, i);
        int rc = number_u64(c, e, item, min, max, &v, err);
        if (rc)
            return rc;
        if (i < cap)
            out[i] = v;
        i++;
    }
    *n = i;
    return 0;
}

int fg_cfg_str_array(const struct fg_cfg *c, const char *keys, const char **out, size_t cap,
                     size_t *n, struct fg_err *err)
{
    char name[128];
    const cJSON *it = lookup(c, keys, name, sizeof name);
    *n = 0;
    if (!it)
        return 0;
    if (!cJSON_IsArray(it))
        return key_err(c, err, FG_E_TYPE, name, "must be an array of strings");
    size_t i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, it) {
        if (!cJSON_IsString(e))
            return key_err(c, err, FG_E_TYPE, name, "must hold only strings");
        if (i < cap)
            out[i] = e->valuestring;
        i++;
    }
    *n = i;
    return 0;
}

static int escape_string(char **s)
{
    if (!*s || !fg__esc_needed(*s, 0))
        return 0;
    size_t n = strlen(*s), cap = 4 * n + 1;
    char *e = cJSON_malloc(cap);
    if (!e)
        return -1;
    fg__esc(e, cap, *s, n, 0);
    cJSON_free(*s);
    *s = e;
    return 0;
}

int fg__json_escape_tree(struct cJSON *j)
{
    for (; j; j = j->next) {
        if (!(j->type & cJSON_StringIsConst) && escape_string(&j->string))
            return -1;
        if (cJSON_IsString(j) && escape_string(&j->valuestring))
            return -1;
        if (j->child && fg__json_escape_tree(j->child))
            return -1;
    }
    return 0;
}

bool fg__config_is_object(const char *text, size_t len)
{
    size_t end = 0;
    cJSON *j = parse_json(text, len, &end);
    bool ok = j && cJSON_IsObject(j);
    cJSON_Delete(j);
    return ok;
}
