/*
 * source.c - model id -> config.json text through site dirs, the
 * huggingface_hub cache, fitgate's cache and the hub (see source.h).
 */
#include "source.h"
#include "fileio.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "hub.h"
#include "log.h"

/* ---- options --------------------------------------------------------------- */

static const char *const step_names[FG_SOURCE_STEP_COUNT] = {
    [FG_SOURCE_SITE] = "site",
    [FG_SOURCE_HF_CACHE] = "hf-cache",
    [FG_SOURCE_CACHE] = "cache",
    [FG_SOURCE_HUB] = "hub",
};

void fg_source_opts_init(struct fg_source_opts *o)
{
    memset(o, 0, sizeof *o);
    snprintf(o->endpoint, sizeof o->endpoint, "%s", FG_SOURCE_DEFAULT_ENDPOINT);
    o->ttl_s = FG_SOURCE_DEFAULT_TTL_S;
    o->timeout_ms = FG_SOURCE_DEFAULT_TIMEOUT_MS;
    o->max_bytes = FG_CONFIG_MAX_BYTES;
    o->max_header_bytes = FG_SOURCE_DEFAULT_MAX_HEADER;
    /* local first, the network last: a gate should not wait on what it already has */
    o->order[0] = FG_SOURCE_SITE;
    o->order[1] = FG_SOURCE_HF_CACHE;
    o->order[2] = FG_SOURCE_CACHE;
    o->order[3] = FG_SOURCE_HUB;
    o->n_order = 4;
}

int fg_source_set_order(struct fg_source_opts *o, const char *list, struct fg_err *err)
{
    enum fg_source_step order[FG_SOURCE_STEP_COUNT];
    size_t n = 0;
    bool seen[FG_SOURCE_STEP_COUNT] = {false};
    const char *p = list ? list : "";
    while (*p) {
        size_t len = strcspn(p, ", ");
        if (len) {
            int found = -1;
            for (int s = 0; s < FG_SOURCE_STEP_COUNT; s++)
                if (strlen(step_names[s]) == len && strncmp(p, step_names[s], len) == 0)
                    found = s;
            if (found < 0)
                return fg_err_set(err, FG_E_INVAL, "source order: unknown step '%.*s'; use a "
                                  "list of site, hf-cache, cache, hub", (int)(len > 40 ? 40 : len),
                                  p);
            if (seen[found])
                return fg_err_set(err, FG_E_INVAL, "source order: '%s' given twice",
                                  step_names[found]);
            seen[found] = true;
            order[n++] = (enum fg_source_step)found;
        }
        p += len;
        if (*p)
            p++;
    }
    if (n == 0)
        return fg_err_set(err, FG_E_INVAL, "source order is empty; use a list of site, "
                          "hf-cache, cache, hub");
    memcpy(o->order, order, n * sizeof order[0]);
    o->n_order = n;
    return 0;
}

int fg_source_add_site_dirs(struct fg_source_opts *o, const char *list, struct fg_err *err)
{
    const char *p = list ? list : "";
    while (*p) {
        size_t len = strcspn(p, ":");
        if (len) {
            if (o->n_site_dirs >= FG_SOURCE_MAX_DIRS)
                return fg_err_set(err, FG_E_RANGE, "more than %d site model directories",
                                  FG_SOURCE_MAX_DIRS);
            if (len >= FG_SOURCE_PATH_MAX || p[0] != '/')
                return fg_err_set(err, FG_E_INVAL, "site model directory '%.*s' must be an "
                                  "absolute path under %d bytes", (int)(len > 200 ? 200 : len), p,
                                  FG_SOURCE_PATH_MAX);
            memcpy(o->site_dirs[o->n_site_dirs], p, len);
            o->site_dirs[o->n_site_dirs][len] = '\0';
            o->n_site_dirs++;
        }
        p += len;
        if (*p)
            p++;
    }
    return 0;
}

static bool env_truthy(const char *v)
{
    return v && (!strcmp(v, "1") || !strcasecmp(v, "on") || !strcasecmp(v, "yes") ||
                 !strcasecmp(v, "true"));
}

static int env_u64(const char *name, uint64_t min, uint64_t max, uint64_t *out, struct fg_err *err)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return 0;
    char *end = NULL;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    /* digits only: strtoull would also take leading blanks, '+' and '-' */
    if (errno || *end || !isdigit((unsigned char)v[0]) || x < min || x > max)
        return fg_err_set(err, FG_E_RANGE, "%s='%.40s': want a whole number in [%llu, %llu]",
                          name, v, (unsigned long long)min, (unsigned long long)max);
    *out = x;
    return 0;
}

static int set_path(char *dst, const char *name, const char *a, const char *b, struct fg_err *err)
{
    int w = snprintf(dst, FG_SOURCE_PATH_MAX, "%s%s", a, b ? b : "");
    if (w < 0 || w >= FG_SOURCE_PATH_MAX)
        return fg_err_set(err, FG_E_RANGE, "%s: path longer than %d bytes", name,
                          FG_SOURCE_PATH_MAX);
    return 0;
}

/* A token goes into an HTTP header: printable ASCII without spaces only. */
static int check_token(const char *t, const char *from, struct fg_err *err)
{
    for (const char *p = t; *p; p++)
        if (*p <= ' ' || *p > '~')
            return fg_err_set(err, FG_E_INVAL, "%s: the token holds a space or control "
                              "character; it cannot be sent", from);
    return 0;
}

static int read_token_file(const char *path, char *out, size_t cap, struct fg_err *err)
{
    int fd = fg__open_regular(path);
    if (fd < 0 && errno == EINVAL)
        return fg_err_set(err, FG_E_IO, "%.200s: the token file is not a regular file", path);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return 0; /* no token file: anonymous, as huggingface_hub */
    }
    size_t n = fread(out, 1, cap - 1, f);
    bool more = fgetc(f) != EOF;
    fclose(f);
    out[n] = '\0';
    if (more)
        return fg_err_set(err, FG_E_RANGE, "%.200s: token file larger than %zu bytes", path,
                          cap - 1);
    while (n && (out[n - 1] == '\n' || out[n - 1] == '\r' || out[n - 1] == ' '))
        out[--n] = '\0';
    return check_token(out, path, err);
}

int fg_source_opts_from_env(struct fg_source_opts *o, struct fg_err *err)
{
    int rc;
    const char *home = getenv("HOME");
    if (!home || !*home) {
        struct passwd *pw = getpwuid(geteuid());
        home = pw ? pw->pw_dir : NULL;
    }
    const char *xdg = getenv("XDG_CACHE_HOME");
    char cache_base[FG_SOURCE_PATH_MAX] = "";
    if (xdg && *xdg)
        snprintf(cache_base, sizeof cache_base, "%s", xdg);
    else if (home)
        snprintf(cache_base, sizeof cache_base, "%s/.cache", home);

    const char *v = getenv("HF_ENDPOINT");
    if (v && *v) {
        if (strlen(v) >= sizeof o->endpoint)
            return fg_err_set(err, FG_E_RANGE, "HF_ENDPOINT longer than %zu bytes",
                              sizeof o->endpoint - 1);
        snprintf(o->endpoint, sizeof o->endpoint, "%s", v);
        size_t n = strlen(o->endpoint);
        while (n && o->endpoint[n - 1] == '/')
            o->endpoint[--n] = '\0';
    }

    char hf_home[FG_SOURCE_PATH_MAX] = "";
    if ((v = getenv("HF_HOME")) && *v)
        rc = set_path(hf_home, "HF_HOME", v, NULL, err);
    else if (*cache_base)
        rc = set_path(hf_home, "HF_HOME", cache_base, "/huggingface", err);
    else
        rc = 0;
    if (rc)
        return rc;

    if ((v = getenv("HF_HUB_CACHE")) && *v)
        rc = set_path(o->hf_cache, "HF_HUB_CACHE", v, NULL, err);
    else if ((v = getenv("HUGGINGFACE_HUB_CACHE")) && *v)
        rc = set_path(o->hf_cache, "HUGGINGFACE_HUB_CACHE", v, NULL, err);
    else if (*hf_home)
        rc = set_path(o->hf_cache, "HF_HOME", hf_home, "/hub", err);
    if (rc)
        return rc;

    if (((v = getenv("HF_TOKEN")) && *v) || ((v = getenv("HUGGING_FACE_HUB_TOKEN")) && *v)) {
        if (strlen(v) >= sizeof o->token)
            return fg_err_set(err, FG_E_RANGE, "HF_TOKEN longer than %zu bytes",
                              sizeof o->token - 1);
        if ((rc = check_token(v, "HF_TOKEN", err)))
            return rc;
        snprintf(o->token, sizeof o->token, "%s", v);
    } else {
        char path[FG_SOURCE_PATH_MAX] = "";
        if ((v = getenv("HF_TOKEN_PATH")) && *v)
            rc = set_path(path, "HF_TOKEN_PATH", v, NULL, err);
        else if (*hf_home)
            rc = set_path(path, "HF_HOME", hf_home, "/token", err);
        if (rc)
            return rc;
        if (*path && (rc = read_token_file(path, o->token, sizeof o->token, err)))
            return rc;
    }

    o->offline = env_truthy(getenv("HF_HUB_OFFLINE"));
    if (*cache_base && (rc = set_path(o->cache_dir, "XDG_CACHE_HOME", cache_base, "/fitgate", err)))
        return rc;

    if ((v = getenv("FITGATE_MODEL_DIRS")) && (rc = fg_source_add_site_dirs(o, v, err))) {
        fg_err_prefix(err, "FITGATE_MODEL_DIRS");
        return rc;
    }
    if ((v = getenv("FITGATE_SITE_CACHE")) && *v &&
        (rc = set_path(o->site_cache_dir, "FITGATE_SITE_CACHE", v, NULL, err)))
        return rc;
    if ((v = getenv("FITGATE_SOURCE_ORDER")) && *v && (rc = fg_source_set_order(o, v, err))) {
        fg_err_prefix(err, "FITGATE_SOURCE_ORDER");
        return rc;
    }
    if ((v = getenv("FITGATE_ALLOW_HTTP")))
        o->allow_http = env_truthy(v);
    uint64_t x = o->ttl_s;
    if ((rc = env_u64("FITGATE_CACHE_TTL", 0, 365u * 86400u, &x, err)))
        return rc;
    o->ttl_s = (uint32_t)x;
    x = o->timeout_ms;
    if ((rc = env_u64("FITGATE_HUB_TIMEOUT_MS", 100, 600000, &x, err)))
        return rc;
    o->timeout_ms = (uint32_t)x;
    return 0;
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

/* Read all of fd (at most max bytes) into a NUL-terminated buffer. */
static int read_fd(int fd, const struct stat *st, const char *what, uint64_t max, char **text,
                   size_t *len, struct fg_err *err)
{
    if ((uint64_t)st->st_size > max)
        return fg_err_set(err, FG_E_RANGE, "%.300s: %lld bytes, more than the %llu accepted", what,
                          (long long)st->st_size, (unsigned long long)max);
    char *buf = malloc((size_t)st->st_size + 1);
    if (!buf)
        return fg_err_set(err, FG_E_NOMEM, "out of memory");
    size_t got = 0;
    while (got < (size_t)st->st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st->st_size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            free(buf);
            return fg_err_set(err, FG_E_IO, "%.300s: %s", what, r < 0 ? strerror(errno) :
                              "shorter than its size");
        }
        got += (size_t)r;
    }
    buf[got] = '\0';
    *text = buf;
    *len = got;
    return 0;
}

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
    int rc = read_fd(fd, &st, path, max, text, len, err);
    close(fd);
    return rc;
}

static bool is_json_object(const char *text, size_t len)
{
    cJSON *j = cJSON_ParseWithLength(text, len);
    bool ok = j && cJSON_IsObject(j);
    cJSON_Delete(j);
    return ok;
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
    if (!is_json_object(text, len)) {
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

/* ---- fitgate's cache ----------------------------------------------------------- */

/*
 * Trust rule for a cache directory or file: ours (the site cache may also
 * be root's) and writable by nobody else, so no other user can plant a
 * config that gates our job.
 */
static int check_owner(const struct stat *st, bool site, const char *what, struct fg_err *err)
{
    uid_t me = geteuid();
    if (st->st_uid != me && !(site && st->st_uid == 0))
        return fg_err_set(err, FG_E_DENIED, "%.300s is owned by uid %u, not by you (uid %u); "
                          "refusing to use it as a cache: fix the owner or use another cache "
                          "directory", what, (unsigned)st->st_uid, (unsigned)me);
    if (st->st_mode & (S_IWGRP | S_IWOTH))
        return fg_err_set(err, FG_E_DENIED, "%.300s is group- or world-writable (mode %03o); "
                          "refusing to use it as a cache: chmod go-w it", what,
                          (unsigned)(st->st_mode & 0777));
    return 0;
}

/* mkdir -p with 0700 for components that do not exist yet. */
static int mkdirs(const char *dir, struct fg_err *err)
{
    char buf[FG_SOURCE_PATH_MAX];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(buf, 0700) != 0 && errno != EEXIST)
                return fg_err_set(err, FG_E_IO, "cannot create cache directory %.300s: %s", buf,
                                  strerror(errno));
            *p = c;
            if (!c)
                break;
        }
    }
    return 0;
}

/* Open the cache root (following a symlink the user set up), checked. */
static int open_root(const char *dir, bool site, bool create, int *fd, struct fg_err *err)
{
    *fd = -1;
    if (create && !site) {
        int rc = mkdirs(dir, err);
        if (rc)
            return rc;
    }
    int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d < 0) {
        if (errno == ENOENT)
            return FG_E_NOTFOUND;
        return fg_err_set(err, FG_E_IO, "cache directory %.300s: %s", dir, strerror(errno));
    }
    struct stat st;
    int rc = fstat(d, &st) ? fg_err_set(err, FG_E_IO, "%.300s: %s", dir, strerror(errno))
                           : check_owner(&st, site, dir, err);
    if (rc) {
        close(d);
        return rc;
    }
    *fd = d;
    return 0;
}

/* One directory level below an open one: no symlinks, same trust rule. */
static int open_sub(int parent, const char *name, bool site, bool create, const char *what,
                    int *fd, struct fg_err *err)
{
    *fd = -1;
    if (create && mkdirat(parent, name, 0700) != 0 && errno != EEXIST)
        return fg_err_set(err, FG_E_IO, "cannot create %.300s/%.100s: %s", what, name,
                          strerror(errno));
    int d = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (d < 0) {
        if (errno == ENOENT)
            return FG_E_NOTFOUND;
        return fg_err_set(err, FG_E_IO, "%.300s/%.100s: %s", what, name, strerror(errno));
    }
    struct stat st;
    char full[FG_SOURCE_PATH_MAX + 300];
    snprintf(full, sizeof full, "%s/%s", what, name);
    int rc = fstat(d, &st) ? fg_err_set(err, FG_E_IO, "%.300s: %s", full, strerror(errno))
                           : check_owner(&st, site, full, err);
    if (rc) {
        close(d);
        return rc;
    }
    *fd = d;
    return 0;
}

/* Cache key: models--org--name/<rev with '/' as %2F> (revisions hold no '%'). */
static void cache_names(const struct fg_model_id *id, const char *rev, char *repo, size_t rcap,
                        char *revdir, size_t vcap)
{
    snprintf(repo, rcap, "models--%s--%s", id->org, id->name);
    size_t o = 0;
    for (const char *p = rev; *p && o + 4 < vcap; p++) {
        if (*p == '/') {
            memcpy(revdir + o, "%2F", 3);
            o += 3;
        } else {
            revdir[o++] = *p;
        }
    }
    revdir[o] = '\0';
}

/* Open root/models--org--name/<rev>; create when asked. */
static int open_entry_dir(const char *root, bool site, bool create, const struct fg_model_id *id,
                          const char *rev, int *fd, struct fg_err *err)
{
    char repo[256], revdir[FG_SOURCE_REV_MAX * 3 + 1], what[FG_SOURCE_PATH_MAX + 300];
    cache_names(id, rev, repo, sizeof repo, revdir, sizeof revdir);
    int rootfd, repofd;
    int rc = open_root(root, site, create, &rootfd, err);
    if (rc)
        return rc;
    rc = open_sub(rootfd, repo, site, create, root, &repofd, err);
    close(rootfd);
    if (rc)
        return rc;
    snprintf(what, sizeof what, "%s/%s", root, repo);
    rc = open_sub(repofd, revdir, site, create, what, fd, err);
    close(repofd);
    return rc;
}

struct cache_entry {
    char *text;
    size_t len;
    int64_t age_s;
    bool fresh;
    char path[FG_SOURCE_WHERE_MAX];
};

static int cache_read(const struct fg_source_opts *o, const char *root, bool site,
                      const struct fg_model_id *id, struct cache_entry *e, struct fg_err *err)
{
    int dfd;
    int rc = open_entry_dir(root, site, false, id, id->rev, &dfd, err);
    if (rc)
        return rc;
    char repo[256], revdir[FG_SOURCE_REV_MAX * 3 + 1];
    cache_names(id, id->rev, repo, sizeof repo, revdir, sizeof revdir);
    snprintf(e->path, sizeof e->path, "%s/%s/%s/config.json", root, repo, revdir);
    struct stat st;
    int fd = fg__openat_regular(dfd, "config.json", O_NOFOLLOW, &st);
    close(dfd);
    if (fd < 0)
        return errno == ENOENT ? FG_E_NOTFOUND
               : errno == EINVAL ? fg_err_set(err, FG_E_IO, "%.300s: not a regular file", e->path)
                                 : fg_err_set(err, FG_E_IO, "%.300s: %s", e->path, strerror(errno));
    if ((rc = check_owner(&st, site, e->path, err))) {
        close(fd);
        return rc;
    }
    rc = read_fd(fd, &st, e->path, o->max_bytes, &e->text, &e->len, err);
    close(fd);
    if (rc)
        return rc;
    if (!is_json_object(e->text, e->len)) {
        free(e->text);
        e->text = NULL;
        return fg_err_set(err, FG_E_PARSE, "%.300s: cache entry is not a JSON object; delete it",
                          e->path);
    }
    int64_t age = (int64_t)time(NULL) - (int64_t)st.st_mtime;
    e->age_s = age < 0 ? 0 : age;
    /* a commit never changes; a branch or tag may move under us */
    e->fresh = fg_source_rev_is_commit(id->rev) || e->age_s < (int64_t)o->ttl_s;
    return 0;
}

/* Write text as root/models--org--name/<rev>/config.json: temp file, fsync, rename. */
static int cache_write(const char *root, bool site, const struct fg_model_id *id, const char *rev,
                       const char *text, size_t len, struct fg_err *err)
{
    int dfd;
    int rc = open_entry_dir(root, site, true, id, rev, &dfd, err);
    if (rc)
        return rc;
    char tmp[64];
    int fd = -1;
    static unsigned counter;
    for (int tries = 0; tries < 16 && fd < 0; tries++) {
        snprintf(tmp, sizeof tmp, ".config.json.%ld.%u.%ld", (long)getpid(), counter++,
                 (long)time(NULL));
        fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        rc = fg_err_set(err, FG_E_IO, "cache %.300s: cannot create a temporary file: %s", root,
                        strerror(errno));
        close(dfd);
        return rc;
    }
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            rc = fg_err_set(err, FG_E_IO, "cache %.300s: write: %s", root, strerror(errno));
            break;
        }
        off += (size_t)w;
    }
    if (!rc && fsync(fd) != 0)
        rc = fg_err_set(err, FG_E_IO, "cache %.300s: fsync: %s", root, strerror(errno));
    if (close(fd) != 0 && !rc)
        rc = fg_err_set(err, FG_E_IO, "cache %.300s: close: %s", root, strerror(errno));
    if (!rc && renameat(dfd, tmp, dfd, "config.json") != 0)
        rc = fg_err_set(err, FG_E_IO, "cache %.300s: rename: %s", root, strerror(errno));
    if (rc)
        unlinkat(dfd, tmp, 0);
    close(dfd);
    return rc;
}

/* Write where we may: the user cache, else a site cache we own. */
static void cache_store(const struct fg_source_opts *o, const struct fg_model_id *id,
                        const char *commit, const char *text, size_t len, char *note,
                        size_t note_cap)
{
    const char *root = o->cache_dir[0] ? o->cache_dir : o->site_cache_dir;
    bool site = !o->cache_dir[0];
    if (!root[0])
        return;
    if (site) {
        struct stat st;
        if (stat(root, &st) != 0 || st.st_uid != geteuid())
            return; /* a site cache someone else owns is read-only to us */
    }
    struct fg_err e = {0};
    int rc = cache_write(root, site, id, id->rev, text, len, &e);
    /* the answer for a moving ref is also the answer for the commit it pointed to */
    if (!rc && fg_source_rev_is_commit(commit) && strcmp(commit, id->rev) != 0)
        rc = cache_write(root, site, id, commit, text, len, &e);
    if (rc) {
        fg__log(FG_LOG_WARN, "not cached: %s", e.detail);
        snprintf(note, note_cap, "not cached: %.280s", e.detail);
    }
}

/* ---- the hub ------------------------------------------------------------------- */

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
    if (!is_json_object(resp.body, resp.len)) {
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
    cache_store(o, id, r->commit, r->text, r->len, r->note, sizeof r->note);
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

static void take_entry(struct fg_source_result *r, struct cache_entry *e, enum fg_source_kind k)
{
    r->kind = k;
    r->text = e->text;
    r->len = e->len;
    r->age_s = e->age_s;
    snprintf(r->where, sizeof r->where, "%s", e->path);
    e->text = NULL;
}

int fg_source_resolve(const struct fg_source_opts *o, const struct fg_model_id *id,
                      struct fg_source_result **out, struct fg_err *err)
{
    *out = NULL;
    struct fg_source_result *r = calloc(1, sizeof *r);
    if (!r)
        return fg_err_set(err, FG_E_NOMEM, "out of memory");
    struct cache_entry stale = {0};
    struct fg_err hub_err = {0};
    int hub_rc = 0, rc = FG_E_NOTFOUND;
    bool hub_tried = false;
    char tried[200] = "";
    char label[FG_SOURCE_ORG_MAX + FG_SOURCE_NAME_MAX + FG_SOURCE_REV_MAX + 3];
    snprintf(label, sizeof label, "%s/%s@%s", id->org, id->name, id->rev);
    /* A bad endpoint is a configuration error now, not only on the day the cache misses. */
    for (size_t i = 0; i < o->n_order && !o->offline; i++) {
        if (o->order[i] == FG_SOURCE_HUB) {
            int urc = fg__hub_check_url(o->endpoint, o->allow_http, err);
            if (urc) {
                free(r);
                fg_err_prefix(err, "hub endpoint (HF_ENDPOINT)");
                return urc;
            }
        }
    }

    for (size_t i = 0; i < o->n_order; i++) {
        struct fg_err e = {0};
        enum fg_source_step step = o->order[i];
        size_t tl = strlen(tried);
        snprintf(tried + tl, sizeof tried - tl, "%s%s", tl ? ", " : "", step_names[step]);
        switch (step) {
        case FG_SOURCE_SITE:
            rc = try_site(o, id, r, &e);
            break;
        case FG_SOURCE_HF_CACHE:
            rc = try_hf_cache(o, id, r, &e);
            break;
        case FG_SOURCE_CACHE:
            rc = FG_E_NOTFOUND;
            for (int site = 0; site < 2 && rc; site++) {
                const char *root = site ? o->site_cache_dir : o->cache_dir;
                struct cache_entry ce = {0};
                if (!root[0])
                    continue;
                int crc = cache_read(o, root, site, id, &ce, &e);
                if (crc == FG_E_NOTFOUND)
                    continue;
                if (crc) {
                    /* a cache we must not trust is skipped, not fatal: the hub may still answer */
                    fg__log(FG_LOG_WARN, "%s", e.detail);
                    snprintf(r->note, sizeof r->note, "%.290s", e.detail);
                    fg_err_clear(&e);
                    continue;
                }
                if (ce.fresh) {
                    take_entry(r, &ce, FG_SRC_CACHE);
                    rc = 0;
                } else if (o->offline || (hub_tried && (hub_rc == FG_E_NET ||
                                                        hub_rc == FG_E_TIMEDOUT))) {
                    take_entry(r, &ce, FG_SRC_CACHE_STALE);
                    snprintf(r->note, sizeof r->note, "%s", o->offline ? "offline (HF_HUB_OFFLINE)"
                             : "hub unreachable");
                    rc = 0;
                } else if (!stale.text) {
                    stale = ce;
                } else {
                    free(ce.text);
                }
            }
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
                if (stale.text && (rc == FG_E_NET || rc == FG_E_TIMEDOUT)) {
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
            free(stale.text);
            *out = r;
            fg__log(FG_LOG_DEBUG, "%s: config from %s (%s)", label, fg_source_kind_name(r->kind),
                    r->where);
            return 0;
        }
        if (rc != FG_E_NOTFOUND && step != FG_SOURCE_HUB) {
            /* a broken local copy is an error to report, not to skip silently */
            free(stale.text);
            fg_source_result_free(r);
            if (err)
                *err = e;
            fg_err_prefix(err, "%s", label);
            return rc;
        }
    }
    /* The order ran out.  A stale copy beats nothing unless the hub said no. */
    if (stale.text && !hub_tried) {
        take_entry(r, &stale, FG_SRC_CACHE_STALE);
        snprintf(r->note, sizeof r->note, "%s", o->offline ? "offline (HF_HUB_OFFLINE)"
                 : "the source order has no hub");
        *out = r;
        return 0;
    }
    free(stale.text);
    fg_source_result_free(r);
    if (hub_tried && hub_rc) {
        if (err)
            *err = hub_err;
        fg_err_prefix(err, "%s", label);
        return hub_rc;
    }
    return fg_err_set(err, FG_E_NOTFOUND, "%s: no config.json in %s%s", label, tried,
                      o->offline ? " (HF_HUB_OFFLINE=1 keeps the hub out: unset it, or put the "
                      "model in a site dir or the HF cache)" : "");
}

/* ---- repositories -------------------------------------------------------------- */

struct fg_source_repo {
    struct fg_source_opts o;
    char dir[FG_SOURCE_PATH_MAX];
    bool has_id;
    struct fg_model_id id;
    char rev[FG_SOURCE_REV_MAX + 1]; /* the commit once the hub told us, so all shards
                                        come from one commit */
};

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
    want.timeout_ms = r->o.timeout_ms;
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
        rc = read_fd(fd, &st, path, max, text, len, err);
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
