/*
 * source.c - model id -> config.json text through site dirs, the
 * huggingface_hub cache, fitgate's cache and the hub (see source.h); the
 * cache itself is engine/source/cache.c, the options and the environment
 * engine/source/source_opts.c.
 */
#include "source/source.h"
#include "util/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "source/cache.h"
#include "source/config.h"
#include "source/hub.h"
#include "util/log.h"

/* cache.h's sizes are these (it does not include source.h) */
_Static_assert(FG__CACHE_DIR_MAX == FG_SOURCE_PATH_MAX, "cache.h FG__CACHE_DIR_MAX");
_Static_assert(FG__CACHE_REV_MAX == FG_SOURCE_REV_MAX, "cache.h FG__CACHE_REV_MAX");
_Static_assert(FG__CACHE_PATH_MAX == FG_SOURCE_WHERE_MAX, "cache.h FG__CACHE_PATH_MAX");

uint64_t fg__source_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- ids ------------------------------------------------------------------- */

static bool name_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '_' || c == '-';
}

/* One org or name part; what names it in messages. */
static int check_part(const char *s, size_t len, size_t max, const char *what, const char *text,
                      struct fg_err *err)
{
    if (len == 0)
        return fg_err_set(err, FG_E_INVAL, "'%.200s': empty %s; a model id is org/name[@revision]",
                          text, what);
    if (len > max)
        return fg_err_set(err, FG_E_INVAL, "'%.200s': %s longer than %zu characters", text, what,
                          max);
    if (s[0] == '-' || s[0] == '.')
        return fg_err_set(err, FG_E_INVAL, "'%.200s': %s may not start with '-' or '.'", text,
                          what);
    for (size_t i = 0; i < len; i++) {
        if (!name_char(s[i]))
            return fg_err_set(err, FG_E_INVAL, "'%.200s': %s may hold only A-Z a-z 0-9 . _ - "
                              "(found '%c')", text, what, s[i]);
        if (i + 1 < len && ((s[i] == '.' && s[i + 1] == '.') || (s[i] == '-' && s[i + 1] == '-')))
            return fg_err_set(err, FG_E_INVAL, "'%.200s': %s may not contain '..' or '--'", text,
                              what);
    }
    return 0;
}

static int check_rev(const char *s, const char *text, struct fg_err *err)
{
    size_t len = strlen(s);
    if (len == 0 || len > FG_SOURCE_REV_MAX)
        return fg_err_set(err, FG_E_INVAL, "'%.200s': revision must have 1 to %d characters",
                          text, FG_SOURCE_REV_MAX);
    if (s[0] == '-' || s[0] == '.' || s[0] == '/' || s[len - 1] == '/')
        return fg_err_set(err, FG_E_INVAL, "'%.200s': revision may not start with '-', '.' or "
                          "'/', nor end with '/'", text);
    for (size_t i = 0; i < len; i++) {
        if (!name_char(s[i]) && s[i] != '/')
            return fg_err_set(err, FG_E_INVAL, "'%.200s': revision may hold only A-Z a-z 0-9 . _ "
                              "- / (found '%c')", text, s[i]);
        if (i + 1 < len && ((s[i] == '.' && s[i + 1] == '.') || (s[i] == '/' && s[i + 1] == '/')))
            return fg_err_set(err, FG_E_INVAL, "'%.200s': revision may not contain '..' or '//'",
                              text);
        if (s[i] == '/' && s[i + 1] == '.')
            return fg_err_set(err, FG_E_INVAL, "'%.200s': revision parts may not start with '.'",
                              text);
    }
    return 0;
}

int fg_source_parse_id(const char *text, struct fg_model_id *out, struct fg_err *err)
{
    memset(out, 0, sizeof *out);
    if (!text || !*text)
        return fg_err_set(err, FG_E_INVAL, "empty model id; use org/name[@revision]");
    if (strlen(text) > FG_SOURCE_ORG_MAX + FG_SOURCE_NAME_MAX + FG_SOURCE_REV_MAX + 2)
        return fg_err_set(err, FG_E_INVAL, "model id longer than %d characters",
                          FG_SOURCE_ORG_MAX + FG_SOURCE_NAME_MAX + FG_SOURCE_REV_MAX + 2);
    if (text[0] == '/')
        return fg_err_set(err, FG_E_INVAL, "'%.200s' is an absolute path, not a model id", text);
    const char *at = strchr(text, '@');
    size_t idlen = at ? (size_t)(at - text) : strlen(text);
    const char *slash = memchr(text, '/', idlen);
    if (!slash)
        return fg_err_set(err, FG_E_INVAL, "'%.200s': a model id is org/name[@revision] (no '/' "
                          "found)", text);
    size_t olen = (size_t)(slash - text), nlen = idlen - olen - 1;
    if (memchr(slash + 1, '/', nlen))
        return fg_err_set(err, FG_E_INVAL, "'%.200s': a model id has exactly one '/' (org/name)",
                          text);
    int rc;
    if ((rc = check_part(text, olen, FG_SOURCE_ORG_MAX, "organisation", text, err)) ||
        (rc = check_part(slash + 1, nlen, FG_SOURCE_NAME_MAX, "model name", text, err)))
        return rc;
    memcpy(out->org, text, olen);
    memcpy(out->name, slash + 1, nlen);
    if (at) {
        if ((rc = check_rev(at + 1, text, err)))
            return rc;
        snprintf(out->rev, sizeof out->rev, "%s", at + 1);
        out->rev_given = true;
    } else {
        snprintf(out->rev, sizeof out->rev, "main");
    }
    return 0;
}

bool fg_source_arg_is_path(const char *arg)
{
    struct stat st;
    if (!arg || !*arg)
        return false;
    if (stat(arg, &st) == 0)
        return true;
    size_t n = strlen(arg);
    return arg[0] == '/' || arg[0] == '.' || arg[0] == '~' ||
           (n >= 5 && strcmp(arg + n - 5, ".json") == 0);
}

bool fg_source_rev_is_commit(const char *rev)
{
    size_t n = 0;
    for (; rev[n]; n++)
        if (!((rev[n] >= '0' && rev[n] <= '9') || (rev[n] >= 'a' && rev[n] <= 'f')))
            return false;
    return n == 40;
}

int fg_source_check_file(const char *file, struct fg_err *err)
{
    size_t len = file ? strlen(file) : 0;
    if (len == 0 || len > 255)
        return fg_err_set(err, FG_E_INVAL, "file name must have 1 to 255 characters");
    if (file[0] == '.' || file[0] == '-')
        return fg_err_set(err, FG_E_INVAL, "file name '%.200s' may not start with '.' or '-'",
                          file);
    for (size_t i = 0; i < len; i++)
        if (!name_char(file[i]) || (file[i] == '.' && file[i + 1] == '.'))
            return fg_err_set(err, FG_E_INVAL, "file name '%.200s' may hold only A-Z a-z 0-9 . _ "
                              "- and no '..'", file);
    return 0;
}

/* ---- small file helpers ------------------------------------------------------ */

/* FG_E_NOTFOUND without a detail when the file is absent. */
static int read_path(const char *path, uint64_t max, char **text, size_t *len, struct fg_err *err)
{
    struct stat st;
    int fd = fg__openat_regular(AT_FDCWD, path, 0, &st);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return FG_E_NOTFOUND;
        if (errno == EINVAL)
            return fg_err_set(err, FG_E_IO, "%.300s: not a regular file", path);
        return fg_err_set(err, FG_E_IO, "%.300s: %s", path, strerror(errno));
    }
    int rc = fg__read_fd(fd, &st, path, max, text, len, err);
    close(fd);
    return rc;
}

static void show_start(const char *text, size_t len, char *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < len && n + 1 < cap && i < 40; i++)
        out[n++] = (text[i] >= ' ' && text[i] <= '~') ? text[i] : '?';
    out[n] = '\0';
}

/* ---- site dirs and the huggingface_hub cache -------------------------------- */

static int take_local(struct fg_source_result *r, enum fg_source_kind kind, const char *dir,
                      const char *file, const struct fg_source_opts *o, struct fg_err *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = read_path(file, o->max_bytes, &text, &len, err);
    if (rc)
        return rc;
    if (!fg__config_is_object(text, len)) {
        free(text);
        return fg_err_set(err, FG_E_PARSE, "%.300s: not a JSON object", file);
    }
    r->kind = kind;
    r->text = text;
    r->len = len;
    snprintf(r->where, sizeof r->where, "%s", file);
    snprintf(r->dir, sizeof r->dir, "%s", dir);
    return 0;
}

static int try_site(const struct fg_source_opts *o, const struct fg_model_id *id,
                    struct fg_source_result *r, struct fg_err *err)
{
    /* A site dir holds one version: an explicit other revision must not get it silently. */
    if (id->rev_given && strcmp(id->rev, "main") != 0)
        return FG_E_NOTFOUND;
    for (size_t i = 0; i < o->n_site_dirs; i++) {
        char dir[FG_SOURCE_PATH_MAX + 256], file[FG_SOURCE_PATH_MAX + 300];
        for (int layout = 0; layout < 2; layout++) {
            snprintf(dir, sizeof dir, layout ? "%s/%s--%s" : "%s/%s/%s", o->site_dirs[i], id->org,
                     id->name);
            snprintf(file, sizeof file, "%s/config.json", dir);
            int rc = take_local(r, FG_SRC_SITE_DIR, dir, file, o, err);
            if (rc != FG_E_NOTFOUND)
                return rc;
        }
    }
    return FG_E_NOTFOUND;
}

static int try_hf_cache(const struct fg_source_opts *o, const struct fg_model_id *id,
                        struct fg_source_result *r, struct fg_err *err)
{
    if (!o->hf_cache[0])
        return FG_E_NOTFOUND;
    char repo[FG_SOURCE_PATH_MAX + 256], path[FG_SOURCE_PATH_MAX + 512];
    char sha[FG_SOURCE_REV_MAX + 1];
    snprintf(repo, sizeof repo, "%s/models--%s--%s", o->hf_cache, id->org, id->name);
    if (fg_source_rev_is_commit(id->rev)) {
        snprintf(sha, sizeof sha, "%s", id->rev);
    } else {
        /* refs/<rev> holds the commit the snapshot directory is named after */
        char *text = NULL;
        size_t len = 0;
        snprintf(path, sizeof path, "%s/refs/%s", repo, id->rev);
        int rc = read_path(path, 256, &text, &len, err);
        if (rc)
            return rc;
        while (len && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == ' '))
            text[--len] = '\0';
        bool ok = fg_source_rev_is_commit(text);
        snprintf(sha, sizeof sha, "%s", text);
        free(text);
        if (!ok) {
            fg__log(FG_LOG_WARN, "%.300s: not a commit sha; HF cache entry ignored", path);
            return FG_E_NOTFOUND;
        }
    }
    char dir[FG_SOURCE_PATH_MAX + 400];
    snprintf(dir, sizeof dir, "%s/snapshots/%s", repo, sha);
    snprintf(path, sizeof path, "%s/config.json", dir);
    int rc = take_local(r, FG_SRC_HF_CACHE, dir, path, o, err);
    if (rc == 0)
        snprintf(r->commit, sizeof r->commit, "%s", sha);
    return rc;
}

/* ---- the hub ------------------------------------------------------------------- */

/* fitgate's cache (cache.h) keys an entry by org, name and revision; a commit never moves. */
static struct fg__cache_key cache_key(const struct fg_model_id *id)
{
    struct fg__cache_key k = {id->org, id->name, id->rev, fg_source_rev_is_commit(id->rev),
                              "config.json"};
    return k;
}

static int hub_url(const struct fg_source_opts *o, const struct fg_model_id *id, const char *rev,
                   const char *file, char *url, size_t cap, struct fg_err *err)
{
    char qrev[FG_SOURCE_REV_MAX * 3 + 1];
    if (fg__hub_quote(rev, qrev, sizeof qrev))
        return fg_err_set(err, FG_E_RANGE, "revision too long");
    int w = snprintf(url, cap, "%s/%s/%s/resolve/%s/%s", o->endpoint, id->org, id->name, qrev,
                     file);
    if (w < 0 || (size_t)w >= cap)
        return fg_err_set(err, FG_E_RANGE, "hub URL too long (HF_ENDPOINT '%.100s')",
                          o->endpoint);
    return 0;
}

static int try_hub(const struct fg_source_opts *o, const struct fg_model_id *id,
                   struct fg_source_result *r, struct fg_err *err)
{
    char url[FG_SOURCE_WHERE_MAX];
    int rc = hub_url(o, id, id->rev, "config.json", url, sizeof url, err);
    if (rc)
        return rc;
    struct fg__hub_req req = {.url = url, .token = o->token, .allow_http = o->allow_http,
                              .timeout_ms = o->timeout_ms, .max_bytes = o->max_bytes};
    struct fg__hub_resp resp;
    fg__log(FG_LOG_DEBUG, "hub: GET %s", url);
    if ((rc = fg__hub_get(&req, &resp, err)))
        return rc;
    if (!fg__config_is_object(resp.body, resp.len)) {
        char start[48];
        show_start(resp.body, resp.len, start, sizeof start);
        rc = fg_err_set(err, FG_E_PARSE, "%.300s: the answer (%zu bytes, starting '%s') is not a "
                        "JSON object; the endpoint is not a Hugging Face hub or a proxy rewrote "
                        "it: check HF_ENDPOINT", url, resp.len, start);
        fg__hub_resp_clear(&resp);
        return rc;
    }
    r->kind = FG_SRC_HUB;
    r->text = resp.body;
    r->len = resp.len;
    resp.body = NULL;
    snprintf(r->where, sizeof r->where, "%s", url);
    snprintf(r->commit, sizeof r->commit, "%s", fg_source_rev_is_commit(resp.commit) ? resp.commit
                                                 : "");
    fg__hub_resp_clear(&resp);
    struct fg__cache_key k = cache_key(id);
    bool other = fg_source_rev_is_commit(r->commit) && strcmp(r->commit, id->rev) != 0;
    fg__cache_store(&k, o->cache_dir, o->site_cache_dir, other ? r->commit : NULL, r->text,
                    r->len, r->note, sizeof r->note);
    return 0;
}

/* ---- resolution -------------------------------------------------------------- */

const char *fg_source_kind_name(enum fg_source_kind kind)
{
    switch (kind) {
    case FG_SRC_PATH: return "path";
    case FG_SRC_SITE_DIR: return "site dir";
    case FG_SRC_HF_CACHE: return "hf cache";
    case FG_SRC_HUB: return "hub";
    case FG_SRC_CACHE: return "cache hit";
    case FG_SRC_CACHE_STALE: return "stale cache (offline)";
    }
    return "?";
}

void fg_source_result_free(struct fg_source_result *r)
{
    if (!r)
        return;
    free(r->text);
    free(r);
}

static void take_entry(struct fg_source_result *r, struct fg__cache_entry *e,
                       enum fg_source_kind k)
{
    r->kind = k;
    r->text = e->text;
    r->len = e->len;
    r->age_s = e->age_s;
    snprintf(r->where, sizeof r->where, "%s", e->path);
    e->text = NULL;
}

/* The hub did not answer at all (as opposed to answering no). */
static bool unreachable(int rc)
{
    return rc == FG_E_NET || rc == FG_E_TIMEDOUT;
}

/*
 * fitgate's caches, the user's then the site's: a fresh entry, or an expired one where the
 * hub cannot answer (use_stale: offline, or the hub was tried and unreachable); the first
 * expired one is otherwise kept in *stale (the caller frees its text) for the hub step to
 * fall back on.  A cache that breaks the trust rule is skipped with a warning in r->note.
 */
static int try_cache(const struct fg_source_opts *o, const struct fg_model_id *id,
                     struct fg_source_result *r, struct fg__cache_entry *stale, bool use_stale,
                     struct fg_err *e)
{
    struct fg__cache_key k = cache_key(id);
    for (int site = 0; site < 2; site++) {
        const char *root = site ? o->site_cache_dir : o->cache_dir;
        struct fg__cache_entry ce = {0};
        if (!root[0])
            continue;
        int crc = fg__cache_read(&k, root, site, o->max_bytes, o->ttl_s, &ce, e);
        if (crc == FG_E_NOTFOUND)
            continue;
        if (crc) {
            /* a cache we must not trust is skipped, not fatal: the hub may still answer */
            fg__log(FG_LOG_WARN, "%s", e->detail);
            snprintf(r->note, sizeof r->note, "%.290s", e->detail);
            fg_err_clear(e);
            continue;
        }
        if (ce.fresh) {
            take_entry(r, &ce, FG_SRC_CACHE);
            return 0;
        }
        if (use_stale) {
            take_entry(r, &ce, FG_SRC_CACHE_STALE);
            snprintf(r->note, sizeof r->note, "%s", o->offline ? "offline (HF_HUB_OFFLINE)"
                     : "hub unreachable");
            return 0;
        }
        if (!stale->text)
            *stale = ce;
        else
            free(ce.text);
    }
    return FG_E_NOTFOUND;
}

/* A bad endpoint is a configuration error now, not only on the day the cache misses. */
static int check_endpoint(const struct fg_source_opts *o, struct fg_err *err)
{
    for (size_t i = 0; i < o->n_order && !o->offline; i++) {
        if (o->order[i] != FG_SOURCE_HUB)
            continue;
        int rc = fg__hub_check_url(o->endpoint, o->allow_http, err);
        if (rc) {
            fg_err_prefix(err, "hub endpoint (HF_ENDPOINT)");
            return rc;
        }
    }
    return 0;
}

int fg_source_resolve(const struct fg_source_opts *o, const struct fg_model_id *id,
                      struct fg_source_result **out, struct fg_err *err)
{
    *out = NULL;
    uint64_t t0 = fg__source_now_ms();
    struct fg_source_result *r = calloc(1, sizeof *r);
    if (!r)
        return fg_err_set(err, FG_E_NOMEM, "out of memory");
    struct fg__cache_entry stale = {0};
    struct fg_err hub_err = {0};
    int hub_rc = 0, rc;
    bool hub_tried = false;
    char tried[200] = "";
    char label[FG_SOURCE_ORG_MAX + FG_SOURCE_NAME_MAX + FG_SOURCE_REV_MAX + 3];
    snprintf(label, sizeof label, "%s/%s@%s", id->org, id->name, id->rev);
    if ((rc = check_endpoint(o, err)))
        goto out;

    for (size_t i = 0; i < o->n_order; i++) {
        struct fg_err e = {0};
        enum fg_source_step step = o->order[i];
        size_t tl = strlen(tried);
        snprintf(tried + tl, sizeof tried - tl, "%s%s", tl ? ", " : "", fg__source_step_name(step));
        switch (step) {
        case FG_SOURCE_SITE:
            rc = try_site(o, id, r, &e);
            break;
        case FG_SOURCE_HF_CACHE:
            rc = try_hf_cache(o, id, r, &e);
            break;
        case FG_SOURCE_CACHE:
            rc = try_cache(o, id, r, &stale, o->offline || (hub_tried && unreachable(hub_rc)),
                           &e);
            break;
        case FG_SOURCE_HUB:
            if (o->offline) {
                rc = FG_E_NOTFOUND;
                break;
            }
            hub_tried = true;
            rc = try_hub(o, id, r, &e);
            if (rc) {
                /* the stale copy stands in only when the hub did not answer at all */
                hub_rc = rc;
                hub_err = e;
                if (stale.text && unreachable(rc)) {
                    take_entry(r, &stale, FG_SRC_CACHE_STALE);
                    snprintf(r->note, sizeof r->note, "hub unreachable: %.270s", e.detail);
                    fg__log(FG_LOG_WARN, "%s: using a stale cached config (%lld s old): %s", label,
                            (long long)r->age_s, e.detail);
                    rc = 0;
                }
            }
            break;
        default:
            rc = FG_E_NOTFOUND;
        }
        if (rc == 0) {
            fg__log(FG_LOG_DEBUG, "%s: config from %s (%s)", label, fg_source_kind_name(r->kind),
                    r->where);
            goto out;
        }
        if (rc != FG_E_NOTFOUND && step != FG_SOURCE_HUB) {
            /* a broken local copy is an error to report, not to skip silently */
            if (err)
                *err = e;
            fg_err_prefix(err, "%s", label);
            goto out;
        }
    }
    /* The order ran out.  A stale copy beats nothing unless the hub said no. */
    if (stale.text && !hub_tried) {
        take_entry(r, &stale, FG_SRC_CACHE_STALE);
        snprintf(r->note, sizeof r->note, "%s", o->offline ? "offline (HF_HUB_OFFLINE)"
                 : "the source order has no hub");
        rc = 0;
    } else if (hub_tried && hub_rc) {
        if (err)
            *err = hub_err;
        fg_err_prefix(err, "%s", label);
        rc = hub_rc;
    } else {
        rc = fg_err_set(err, FG_E_NOTFOUND, "%s: no config.json in %s%s", label, tried,
                        o->offline ? " (HF_HUB_OFFLINE=1 keeps the hub out: unset it, or put the "
                        "model in a site dir or the HF cache)" : "");
    }
out:
    free(stale.text);
    r->elapsed_ms = (uint32_t)(fg__source_now_ms() - t0);
    if (rc)
        fg_source_result_free(r);
    else
        *out = r;
    return rc;
}

/* ---- repositories -------------------------------------------------------------- */

struct fg_source_repo {
    struct fg_source_opts o;
    char dir[FG_SOURCE_PATH_MAX];
    bool has_id;
    struct fg_model_id id;
    char rev[FG_SOURCE_REV_MAX + 1]; /* the commit once the hub told us, so all shards
                                        come from one commit */
    uint32_t budget_ms;              /* fg_source_repo_set_budget; 0 none */
    uint64_t deadline_ms;            /* fg__source_now_ms() when the budget is spent */
    unsigned requests;               /* hub requests made */
};

void fg_source_repo_set_budget(struct fg_source_repo *r, uint32_t ms)
{
    r->budget_ms = ms;
    r->deadline_ms = ms ? fg__source_now_ms() + ms : 0;
}

unsigned fg_source_repo_requests(const struct fg_source_repo *r)
{
    return r ? r->requests : 0;
}

const char *fg_source_repo_rev(const struct fg_source_repo *r)
{
    return r && r->has_id ? r->rev : "";
}

int fg_source_repo_open(const struct fg_source_opts *o, const char *dir,
                        const struct fg_model_id *id, struct fg_source_repo **out,
                        struct fg_err *err)
{
    *out = NULL;
    if ((!dir || !*dir) && !id)
        return fg_err_set(err, FG_E_INVAL, "a repository needs a directory or a model id");
    if (dir && strlen(dir) >= FG_SOURCE_PATH_MAX)
        return fg_err_set(err, FG_E_RANGE, "path too long: %.200s", dir);
    struct fg_source_repo *r = calloc(1, sizeof *r);
    if (!r)
        return fg_err_set(err, FG_E_NOMEM, "out of memory");
    r->o = *o;
    if (dir)
        snprintf(r->dir, sizeof r->dir, "%s", dir);
    if (id) {
        r->has_id = true;
        r->id = *id;
        snprintf(r->rev, sizeof r->rev, "%s", id->rev);
    }
    *out = r;
    return 0;
}

void fg_source_repo_free(struct fg_source_repo *r)
{
    free(r);
}

bool fg_source_repo_online(const struct fg_source_repo *r)
{
    return r && r->has_id && !r->o.offline;
}

/* Open dir/file; -1 with errno ENOENT when absent. */
static int open_local(const struct fg_source_repo *r, const char *file, char *path, size_t cap,
                      struct stat *st)
{
    if (!r->dir[0]) {
        errno = ENOENT;
        return -1;
    }
    snprintf(path, cap, "%s/%s", r->dir, file);
    return fg__openat_regular(AT_FDCWD, path, 0, st);
}

static int remote_missing(const struct fg_source_repo *r, const char *file, struct fg_err *err)
{
    if (r->has_id && r->o.offline)
        return fg_err_set(err, FG_E_NOTFOUND, "%s is not in %.300s and HF_HUB_OFFLINE=1 keeps the "
                          "hub out", file, r->dir[0] ? r->dir : "any local directory");
    return fg_err_set(err, FG_E_NOTFOUND, "%s is not in %.300s", file, r->dir);
}

static void pin_commit(struct fg_source_repo *r, const char *commit)
{
    if (fg_source_rev_is_commit(commit) && !fg_source_rev_is_commit(r->rev))
        snprintf(r->rev, sizeof r->rev, "%s", commit);
}

/*
 * The hub half of a read, after open_local failed with open_errno on path: any
 * error but ENOENT is the local file's; offline, the file is missing.  want
 * carries only the body fields (range or max_bytes); the URL, token and
 * timeouts come from r.  On 0 resp holds the body (the caller clears it with
 * fg__hub_resp_clear) and r's revision is pinned to the commit the hub sent.
 */
static int read_remote(struct fg_source_repo *r, const char *file, const char *path,
                       int open_errno, struct fg__hub_req want, struct fg__hub_resp *resp,
                       struct fg_err *err)
{
    if (open_errno == EINVAL)
        return fg_err_set(err, FG_E_IO, "%.300s: not a regular file", path);
    if (open_errno != ENOENT)
        return fg_err_set(err, FG_E_IO, "%.300s: %s", path, strerror(open_errno));
    if (!fg_source_repo_online(r))
        return remote_missing(r, file, err);
    char url[FG_SOURCE_WHERE_MAX];
    int rc = hub_url(&r->o, &r->id, r->rev, file, url, sizeof url, err);
    if (rc)
        return rc;
    want.url = url;
    want.token = r->o.token;
    want.allow_http = r->o.allow_http;
    want.timeout_ms = r->o.timeout_ms ? r->o.timeout_ms : FG_SOURCE_DEFAULT_TIMEOUT_MS;
    if (r->budget_ms) {
        /* one budget for every request of a scan: each gets what is left of it */
        int64_t left = (int64_t)(r->deadline_ms - fg__source_now_ms());
        if (left <= 0)
            return fg_err_set(err, FG_E_TIMEDOUT, "%s: not asked: the scan's %u ms deadline "
                              "has passed", file, (unsigned)r->budget_ms);
        if (left < (int64_t)want.timeout_ms)
            want.timeout_ms = (uint32_t)left;
    }
    r->requests++;
    if ((rc = fg__hub_get(&want, resp, err)))
        return rc;
    pin_commit(r, resp->commit);
    return 0;
}

int fg_source_repo_read(struct fg_source_repo *r, const char *file, uint64_t off, size_t len,
                        void *buf, size_t *got, uint64_t *file_size, bool *remote,
                        struct fg_err *err)
{
    *got = 0;
    if (file_size)
        *file_size = 0;
    int rc = fg_source_check_file(file, err);
    if (rc)
        return rc;
    if (len == 0)
        return 0;
    char path[FG_SOURCE_PATH_MAX + 300];
    struct stat st;
    int fd = open_local(r, file, path, sizeof path, &st);
    if (fd >= 0) {
        size_t n = 0;
        while (n < len) {
            ssize_t k = pread(fd, (char *)buf + n, len - n, (off_t)(off + n));
            if (k < 0 && errno == EINTR)
                continue;
            if (k < 0) {
                rc = fg_err_set(err, FG_E_IO, "%.300s: %s", path, strerror(errno));
                break;
            }
            if (k == 0)
                break;
            n += (size_t)k;
        }
        close(fd);
        *got = n;
        if (file_size)
            *file_size = (uint64_t)st.st_size;
        if (remote)
            *remote = false;
        return rc;
    }
    struct fg__hub_req want = {.range = true, .range_off = off, .range_len = len};
    struct fg__hub_resp resp;
    if ((rc = read_remote(r, file, path, errno, want, &resp, err)))
        return rc;
    memcpy(buf, resp.body, resp.len);
    *got = resp.len;
    if (file_size)
        *file_size = resp.file_size;
    if (remote)
        *remote = true;
    fg__hub_resp_clear(&resp);
    return 0;
}

int fg_source_repo_read_all(struct fg_source_repo *r, const char *file, uint64_t max, char **text,
                            size_t *len, bool *remote, struct fg_err *err)
{
    *text = NULL;
    *len = 0;
    int rc = fg_source_check_file(file, err);
    if (rc)
        return rc;
    char path[FG_SOURCE_PATH_MAX + 300];
    struct stat st;
    int fd = open_local(r, file, path, sizeof path, &st);
    if (fd >= 0) {
        rc = fg__read_fd(fd, &st, path, max, text, len, err);
        close(fd);
        if (remote)
            *remote = false;
        return rc;
    }
    struct fg__hub_req want = {.max_bytes = max};
    struct fg__hub_resp resp;
    if ((rc = read_remote(r, file, path, errno, want, &resp, err)))
        return rc;
    *text = resp.body;
    *len = resp.len;
    resp.body = NULL;
    if (remote)
        *remote = true;
    fg__hub_resp_clear(&resp);
    return 0;
}
