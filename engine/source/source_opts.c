/*
 * source_opts.c - where source.c looks, and how: the options' defaults, the source order,
 * site dirs, and what the environment says (huggingface_hub's variables and fitgate's own);
 * see source.h.
 */
#include "source/source.h"

#include <ctype.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "source/config.h"
#include "util/fileio.h"

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

const char *fg__source_step_name(enum fg_source_step s)
{
    return (unsigned)s < FG_SOURCE_STEP_COUNT ? step_names[s] : "?";
}
