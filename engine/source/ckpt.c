/*
 * ckpt.c - a hub model's checkpoint inventory, cached like its config (ckpt.h).
 */
#include "source/ckpt.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source/cache.h"
#include "source/st_layout.h"
#include "util/log.h"

/* What an entry says it is: another format is not read (written by another version). */
#define FORMAT "fitgate-checkpoint/1"

/* The summary's counts as stored: one row per JSON key. */
enum count_kind { C_U64, C_SIZE };
static const struct {
    const char *key;
    size_t off;
    enum count_kind kind;
} counts[] = {
    {"tensors", offsetof(struct fg_st_summary, tensors), C_U64},
    {"total", offsetof(struct fg_st_summary, total), C_U64},
    {"index_total_size", offsetof(struct fg_st_summary, index_total_size), C_U64},
    {"index_total_parameters", offsetof(struct fg_st_summary, index_total_params), C_U64},
    {"files", offsetof(struct fg_st_summary, files), C_SIZE},
    {"headers_read", offsetof(struct fg_st_summary, headers_read), C_SIZE},
    {"headers_remote", offsetof(struct fg_st_summary, headers_remote), C_SIZE},
};

/* ---- the entry's JSON ------------------------------------------------------------- */

/* Counts are written as exact integers: cJSON prints a double with 15 significant digits
 * when that reads back within its epsilon, which drops the last digit of a 16-digit count
 * (cJSON.c print_number's compare_double); get_count takes at most 2^53. */
static bool add_num(cJSON *o, const char *key, uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    return cJSON_AddRawToObject(o, key, buf) != NULL;
}

/* An object of the non-zero entries of v[0..n), keyed by name(i). */
static bool add_map(cJSON *o, const char *key, const uint64_t *v, int n,
                    const char *(*name)(int))
{
    cJSON *m = cJSON_AddObjectToObject(o, key);
    bool ok = m != NULL;
    for (int i = 0; ok && i < n; i++)
        if (v[i])
            ok = add_num(m, name(i), v[i]);
    return ok;
}

static const char *dtype_name(int i)
{
    return fg_safetensors_dtype_name((enum fg_st_dtype)i);
}

static const char *group_name(int i)
{
    return fg_safetensors_group_name((enum fg_st_group)i);
}

int fg_ckpt_to_json(const struct fg_ckpt *c, char **text, size_t *len, struct fg_err *err)
{
    *text = NULL;
    *len = 0;
    const struct fg_st_summary *s = &c->sum;
    cJSON *o = cJSON_CreateObject();
    bool ok = o && cJSON_AddStringToObject(o, "format", FORMAT) &&
              cJSON_AddStringToObject(o, "commit", c->commit) &&
              cJSON_AddBoolToObject(o, "safetensors", c->safetensors);
    if (ok && c->safetensors) {
        ok = cJSON_AddBoolToObject(o, "index", s->has_index) &&
             cJSON_AddBoolToObject(o, "headers", s->headers);
        for (size_t i = 0; ok && i < sizeof counts / sizeof counts[0]; i++) {
            const char *p = (const char *)s + counts[i].off;
            ok = add_num(o, counts[i].key, counts[i].kind == C_U64 ? *(const uint64_t *)p
                                                                   : *(const size_t *)p);
        }
        ok = ok && add_map(o, "by_dtype", s->by_dtype, FG_ST_DTYPE_COUNT, dtype_name) &&
             add_map(o, "by_group", s->by_group, FG_ST_GROUP_COUNT, group_name) &&
             add_map(o, "names", s->names, FG_ST_GROUP_COUNT, group_name);
        cJSON *ex = ok ? cJSON_AddObjectToObject(o, "examples") : NULL;
        ok = ex != NULL;
        for (int g = 0; ok && g < FG_ST_GROUP_COUNT; g++)
            if (s->example[g][0])
                ok = cJSON_AddStringToObject(ex, group_name(g), s->example[g]) != NULL;
        if (ok && !s->headers)
            ok = cJSON_AddStringToObject(o, "no_headers", s->no_headers) &&
                 cJSON_AddNumberToObject(o, "no_headers_code", s->no_headers_code);
        if (ok && s->headers && s->layout && s->layout->n) {
            cJSON *l = fg_st_layout_to_cjson(s->layout);
            ok = l && cJSON_AddItemToObject(o, "layout", l);
            if (!ok)
                cJSON_Delete(l);
        }
    }
    char *t = ok ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!t)
        return fg_err_set(err, FG_E_NOMEM, "out of memory for a checkpoint inventory");
    *text = t;
    *len = strlen(t);
    return 0;
}

/* A whole count in [0, 2^53] (exact in a double), or absent (0). */
static bool get_count(const cJSON *o, const char *key, uint64_t *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    *out = 0;
    if (!v)
        return true;
    double d = cJSON_IsNumber(v) ? v->valuedouble : -1;
    if (!(d >= 0) || d > 9007199254740992.0 || floor(d) != d)
        return false;
    *out = (uint64_t)d;
    return true;
}

/* An object of counts keyed by name(0..n-1); false on an unknown key or a bad count. */
static bool get_map(const cJSON *o, const char *key, uint64_t *v, int n,
                    const char *(*name)(int))
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, key), *e;
    if (!m)
        return true;
    if (!cJSON_IsObject(m))
        return false;
    cJSON_ArrayForEach(e, m) {
        int i = 0;
        while (i < n && strcmp(name(i), e->string) != 0)
            i++;
        if (i == n || !get_count(m, e->string, &v[i]))
            return false;
    }
    return true;
}

static uint64_t sum_of(const uint64_t *v, int n)
{
    uint64_t t = 0;
    for (int i = 0; i < n; i++)
        t += v[i];
    return t;
}

/* The summary's part of an entry; false when something does not parse or add up. */
static bool get_summary(const cJSON *o, struct fg_st_summary *s)
{
    s->has_index = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "index"));
    s->headers = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "headers"));
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        uint64_t v;
        if (!get_count(o, counts[i].key, &v))
            return false;
        char *p = (char *)s + counts[i].off;
        if (counts[i].kind == C_U64)
            *(uint64_t *)p = v;
        else
            *(size_t *)p = (size_t)v;
    }
    if (!get_map(o, "by_dtype", s->by_dtype, FG_ST_DTYPE_COUNT, dtype_name) ||
        !get_map(o, "by_group", s->by_group, FG_ST_GROUP_COUNT, group_name) ||
        !get_map(o, "names", s->names, FG_ST_GROUP_COUNT, group_name))
        return false;
    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(o, "examples"), *e;
    if (ex && !cJSON_IsObject(ex))
        return false; /* an object of group name -> example, or nothing */
    cJSON_ArrayForEach(e, ex) {
        int g = 0;
        while (g < FG_ST_GROUP_COUNT && e->string && strcmp(group_name(g), e->string) != 0)
            g++;
        if (g == FG_ST_GROUP_COUNT || !cJSON_IsString(e))
            return false;
        snprintf(s->example[g], sizeof s->example[g], "%s", e->valuestring);
    }
    const cJSON *why = cJSON_GetObjectItemCaseSensitive(o, "no_headers");
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(o, "no_headers_code");
    if (code && !(cJSON_IsNumber(code) && code->valuedouble <= 0 &&
                  code->valuedouble >= -100 && floor(code->valuedouble) == code->valuedouble))
        return false; /* an FG_E_* code */
    s->no_headers_code = code ? (int)code->valuedouble : 0;
    if (cJSON_IsString(why))
        snprintf(s->no_headers, sizeof s->no_headers, "%s", why->valuestring);
    /* the headers' sums are what the comparison trusts: they must agree with each other */
    return !s->headers || (s->headers_read == s->files &&
                           sum_of(s->by_dtype, FG_ST_DTYPE_COUNT) == s->total &&
                           sum_of(s->by_group, FG_ST_GROUP_COUNT) == s->total);
}

int fg_ckpt_from_json(const char *text, size_t len, const char *origin, struct fg_ckpt *c,
                      struct fg_err *err)
{
    return fg_ckpt_from_json_rows(text, len, origin, c, NULL, err);
}

int fg_ckpt_from_json_rows(const char *text, size_t len, const char *origin, struct fg_ckpt *c,
                           struct fg_st_layout *layout, struct fg_err *err)
{
    memset(c, 0, sizeof *c);
    cJSON *o = cJSON_ParseWithLength(text, len);
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(o, "format");
    const cJSON *commit = cJSON_GetObjectItemCaseSensitive(o, "commit");
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "safetensors");
    int rc = 0;
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, FORMAT) != 0 || !cJSON_IsBool(st) ||
        (commit && !(cJSON_IsString(commit) && (!commit->valuestring[0] ||
                                                fg_source_rev_is_commit(commit->valuestring)))))
        rc = fg_err_set(err, FG_E_PARSE, "%.300s: not a checkpoint inventory of this fitgate "
                        "(format %s); delete it", origin, FORMAT);
    else if ((c->safetensors = cJSON_IsTrue(st)) && !get_summary(o, &c->sum))
        rc = fg_err_set(err, FG_E_PARSE, "%.300s: checkpoint inventory with a count that is "
                        "not a whole number, an unknown name, or sums that do not add up; "
                        "delete it", origin);
    if (!rc && commit)
        snprintf(c->commit, sizeof c->commit, "%s", commit->valuestring);
    const cJSON *rows = o ? cJSON_GetObjectItemCaseSensitive(o, "layout") : NULL;
    if (layout)
        fg_st_layout_free(layout);
    if (!rc && rows && !c->sum.headers)
        rc = fg_err_set(err, FG_E_PARSE, "%.300s: checkpoint inventory with tensor rows but "
                        "no headers read: not one fitgate wrote; delete it", origin);
    if (!rc && layout && rows) {
        /* the rows must add up to the headers' sums, as the counts above do */
        rc = fg_st_layout_from_cjson(rows, origin, layout, err);
        if (!rc && (layout->tensors != c->sum.tensors ||
                    fg_st_layout_elements(layout) != c->sum.total))
            rc = fg_err_set(err, FG_E_PARSE, "%.300s: checkpoint inventory whose tensor rows "
                            "do not add up to its counts; delete it", origin);
    }
    cJSON_Delete(o);
    if (rc) {
        memset(c, 0, sizeof *c);
        fg_st_layout_free(layout);
    }
    c->sum.layout = layout;
    return rc;
}

/* ---- the cache -------------------------------------------------------------------- */

static struct fg__cache_key key_at(const struct fg_model_id *id, const char *rev)
{
    struct fg__cache_key k = {id->org, id->name, rev, fg_source_rev_is_commit(rev), FG_CKPT_FILE};
    return k;
}

/*
 * The best cached inventory into out: a fresh one (a commit's never expires; the commit
 * the config came from first, then id's revision; the user's cache, then the site's), else
 * the first expired one.  Returns whether one was found.  An entry we must not trust or
 * cannot read is skipped and said in out->note.
 */
static bool cache_find(const struct fg_source_opts *o, const struct fg_model_id *id,
                       const char *commit, struct fg_st_layout *want, bool need,
                       struct fg_ckpt *out)
{
    const char *revs[2] = {commit && fg_source_rev_is_commit(commit) ? commit : NULL, id->rev};
    struct fg_ckpt *c = calloc(1, sizeof *c);
    struct fg_st_layout rows;
    char note[sizeof out->note] = "";
    bool found = false, fresh = false;
    fg_st_layout_init(&rows);
    for (int r = 0; c && r < 2 && !fresh; r++) {
        if (!revs[r] || (r == 1 && revs[0] && !strcmp(revs[0], revs[1])))
            continue;
        struct fg__cache_key k = key_at(id, revs[r]);
        for (int site = 0; site < 2 && !fresh; site++) {
            const char *root = site ? o->site_cache_dir : o->cache_dir;
            struct fg__cache_entry e = {0};
            struct fg_err err = {0};
            if (!root[0])
                continue;
            int rc = fg__cache_read(&k, root, site, o->max_bytes, o->ttl_s, &e, &err);
            if (!rc)
                rc = fg_ckpt_from_json_rows(e.text, e.len, e.path, c, want ? &rows : NULL, &err);
            free(e.text);
            if (rc == FG_E_NOTFOUND)
                continue;
            if (rc) {
                fg__log(FG_LOG_WARN, "%s", err.detail);
                snprintf(note, sizeof note, "%.290s", err.detail);
                continue;
            }
            if (found && !e.fresh)
                continue; /* the first expired one is kept */
            /* an entry without the tensor rows a caller needs does not end the search
             * (fg_ckpt_get then asks the hub: entries written before the rows were kept) */
            fresh = e.fresh && (!need || !c->safetensors || !c->sum.headers || rows.n);
            found = true;
            *out = *c;
            out->from = e.fresh ? FG_CKPT_CACHE : FG_CKPT_CACHE_STALE;
            out->age_s = e.age_s;
            snprintf(out->where, sizeof out->where, "%s", e.path);
            if (want)
                fg_st_layout_move(want, &rows);
        }
    }
    free(c);
    fg_st_layout_free(&rows);
    out->sum.layout = want;
    if (note[0])
        snprintf(out->note, sizeof out->note, "%s", note);
    return found;
}

/* An answer the deadline or the network cut short is not what the repository holds. */
static bool cut_short(const struct fg_ckpt *c)
{
    return c->safetensors && !c->sum.headers &&
           (c->sum.no_headers_code == FG_E_TIMEDOUT || c->sum.no_headers_code == FG_E_NET);
}

/* Store c under id's revision and the commit it describes; a failure is said in c->note. */
static void cache_store(const struct fg_source_opts *o, const struct fg_model_id *id,
                        struct fg_ckpt *c)
{
    char *text = NULL;
    size_t len = 0;
    struct fg_err err = {0};
    if (cut_short(c)) {
        snprintf(c->note, sizeof c->note, "not cached: the hub's answer was cut short");
        return;
    }
    int rc = fg_ckpt_to_json(c, &text, &len, &err);
    if (!rc && len > o->max_bytes && c->sum.layout) {
        /* the tensor rows would make an entry no read accepts: kept without them */
        struct fg_st_layout *rows = c->sum.layout;
        free(text);
        c->sum.layout = NULL;
        rc = fg_ckpt_to_json(c, &text, &len, &err);
        c->sum.layout = rows;
    }
    if (rc) {
        snprintf(c->note, sizeof c->note, "not cached: %.280s", err.detail);
        return;
    }
    struct fg__cache_key k = key_at(id, id->rev);
    bool other = c->commit[0] && strcmp(c->commit, id->rev) != 0;
    fg__cache_store(&k, o->cache_dir, o->site_cache_dir, other ? c->commit : NULL, text, len,
                    c->note, sizeof c->note);
    free(text);
}

/* ---- the hub ---------------------------------------------------------------------- */

/* Read id's checkpoint headers from the hub (at commit when known) within co's limits. */
static int scan_hub(const struct fg_source_opts *o, const struct fg_model_id *id,
                    const char *commit, const struct fg_ckpt_opts *co, struct fg_ckpt *c,
                    struct fg_err *err)
{
    struct fg_model_id at = *id;
    struct fg_source_repo *repo = NULL;
    struct fg_st_layout *rows = c->sum.layout; /* the caller's, kept */
    if (commit && fg_source_rev_is_commit(commit))
        snprintf(at.rev, sizeof at.rev, "%s", commit);
    memset(c, 0, sizeof *c);
    c->sum.layout = rows;
    c->from = FG_CKPT_HUB;
    snprintf(c->where, sizeof c->where, "%s/%s/%s", o->endpoint, id->org, id->name);
    int rc = fg_source_repo_open(o, NULL, &at, &repo, err);
    if (rc)
        goto out;
    fg_source_repo_set_budget(repo, co->budget_ms ? co->budget_ms : o->timeout_ms);
    struct fg_st_scan_opts so = {.header_cap = o->max_header_bytes,
                                 .max_shards = co->max_shards, .keep_index = true,
                                 .layout = rows};
    uint64_t t0 = fg__source_now_ms();
    rc = fg_safetensors_scan_with(repo, &so, &c->sum, err);
    c->elapsed_ms = (uint32_t)(fg__source_now_ms() - t0);
    c->requests = fg_source_repo_requests(repo);
    if (rc == FG_E_NOTFOUND) {
        /* neither an index nor model.safetensors: a fact about the repository, kept */
        memset(&c->sum, 0, sizeof c->sum);
        c->sum.layout = rows;
        fg_err_clear(err);
        rc = 0;
    } else if (!rc) {
        c->safetensors = true;
    }
    if (fg_source_rev_is_commit(fg_source_repo_rev(repo)))
        snprintf(c->commit, sizeof c->commit, "%s", fg_source_repo_rev(repo));
out:
    fg_source_repo_free(repo);
    return rc;
}

int fg_ckpt_get(const struct fg_source_opts *o, const struct fg_model_id *id, const char *commit,
                const struct fg_ckpt_opts *co, struct fg_ckpt *out, struct fg_err *err)
{
    memset(out, 0, sizeof *out);
    struct fg_ckpt *now = NULL;
    struct fg_st_layout rows;
    fg_st_layout_init(&rows);
    bool cached = cache_find(o, id, commit, co->layout, co->need_layout, out);
    bool rowless = co->need_layout && out->safetensors && out->sum.headers &&
                   (!co->layout || !co->layout->n);
    int rc = 0;
    if (cached && out->from == FG_CKPT_CACHE && !rowless)
        goto out;
    if (!co->scan || o->offline || !o->endpoint[0]) {
        if (!cached)
            rc = fg_err_set(err, FG_E_NOTFOUND, "no checkpoint inventory of %s/%s@%s in the "
                            "cache, and %s", id->org, id->name, id->rev,
                            o->offline ? "offline" : "the hub is not to be asked");
        goto out;
    }
    if (!(now = calloc(1, sizeof *now))) {
        rc = fg_err_set(err, FG_E_NOMEM, "out of memory");
        goto out;
    }
    struct fg_err e = {0};
    now->sum.layout = co->layout ? &rows : NULL;
    rc = scan_hub(o, id, commit, co, now, &e);
    if (!rc) {
        cache_store(o, id, now);
        *out = *now;
        if (co->layout)
            fg_st_layout_move(co->layout, &rows);
        out->sum.layout = co->layout;
    } else if (cached && (rc == FG_E_TIMEDOUT || rc == FG_E_NET)) {
        /* the hub did not answer: the expired inventory stands in (from says so) */
        fg__log(FG_LOG_WARN, "%s/%s@%s: using an expired checkpoint inventory (%lld s old): %s",
                id->org, id->name, id->rev, (long long)out->age_s, e.detail);
        rc = 0;
    } else if (err) {
        *err = e;
    }
out:
    free(now);
    fg_st_layout_free(&rows);
    return rc;
}
