/*
 * source.h - a Hugging Face model id (org/name[@revision]) -> its
 * config.json text, and read access to the repository's files for verify.
 *
 * Where a config comes from, in the order the admin sets (opts.order):
 *   site      site model directories: DIR/org/name/config.json or
 *             DIR/org--name/config.json (one version each: used when no
 *             revision or @main is asked for)
 *   hf-cache  the huggingface_hub cache: HF_HUB_CACHE/models--org--name/
 *             refs/<rev> -> snapshots/<sha>/config.json
 *   cache     fitgate's own cache of what it fetched: the user's
 *             (cache_dir), then the site's (site_cache_dir, read-only
 *             unless owned by us); entries keyed by revision, a commit
 *             sha never expires, a moving ref (main) lives ttl_s seconds
 *   hub       GET endpoint/org/name/resolve/<rev>/config.json over HTTPS
 *             (hub.h: deadline, size cap, TLS, redirects), then written to
 *             cache_dir atomically; skipped when offline
 * An expired cache entry is still used, and said to be stale, when the hub
 * is offline or unreachable (FG_E_NET / FG_E_TIMEDOUT); never after an
 * authoritative 401/403/404.
 *
 * The engine reads no environment: everything comes in struct
 * fg_source_opts.  fg_source_opts_from_env() is a separate helper for the
 * CLI (the plugin fills the same struct from its policy file).
 *
 * Error contract: see error.h.  Model ids and revisions are validated
 * before they touch a path or a URL (FG_E_INVAL).  Not found anywhere is
 * FG_E_NOTFOUND; the hub's own errors (hub.h) pass through with the model
 * named in the detail.
 *
 * Ownership: fg_source_resolve returns a result the caller frees with
 * fg_source_result_free(); fg_source_repo_open* return a repository the
 * caller frees with fg_source_repo_free().  Both are NULL-safe.  Options
 * are copied where kept.
 */
#ifndef FG_SOURCE_H
#define FG_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

#define FG_SOURCE_PATH_MAX 1024
#define FG_SOURCE_MAX_DIRS 8
#define FG_SOURCE_ORG_MAX 96   /* huggingface_hub: repo names up to 96 characters */
#define FG_SOURCE_NAME_MAX 96
#define FG_SOURCE_REV_MAX 128
#define FG_SOURCE_TOKEN_MAX 512
#define FG_SOURCE_WHERE_MAX 2048 /* a path under a dir above, or a hub URL */

enum fg_source_step {
    FG_SOURCE_SITE,
    FG_SOURCE_HF_CACHE,
    FG_SOURCE_CACHE,
    FG_SOURCE_HUB,
    FG_SOURCE_STEP_COUNT
};

/* Where a config came from (what the CLI prints). */
enum fg_source_kind {
    FG_SRC_PATH,         /* a local path the user gave */
    FG_SRC_SITE_DIR,     /* a site model directory */
    FG_SRC_HF_CACHE,     /* the huggingface_hub cache */
    FG_SRC_HUB,          /* fetched from the hub now */
    FG_SRC_CACHE,        /* fitgate's cache, fresh */
    FG_SRC_CACHE_STALE,  /* fitgate's cache, expired, used because offline or unreachable */
};

struct fg_source_opts {
    char site_dirs[FG_SOURCE_MAX_DIRS][FG_SOURCE_PATH_MAX];
    size_t n_site_dirs;
    char hf_cache[FG_SOURCE_PATH_MAX];       /* "" = none */
    char endpoint[512];                      /* "https://huggingface.co", no trailing slash */
    char token[FG_SOURCE_TOKEN_MAX];         /* "" = anonymous */
    bool offline;                            /* never touch the network */
    bool allow_http;                         /* plain http to non-loopback hosts */
    char cache_dir[FG_SOURCE_PATH_MAX];      /* per-user cache; "" = no cache */
    char site_cache_dir[FG_SOURCE_PATH_MAX]; /* optional shared cache; "" = none */
    uint32_t ttl_s;                          /* lifetime of entries for moving refs */
    uint32_t timeout_ms;                     /* one hub request, redirects included */
    uint64_t max_bytes;                      /* largest config.json / index accepted */
    uint64_t max_header_bytes;               /* largest safetensors header (verify) */
    enum fg_source_step order[FG_SOURCE_STEP_COUNT];
    size_t n_order;
};

#define FG_SOURCE_DEFAULT_ENDPOINT "https://huggingface.co"
#define FG_SOURCE_DEFAULT_TTL_S 3600u
#define FG_SOURCE_DEFAULT_TIMEOUT_MS 10000u
#define FG_SOURCE_DEFAULT_MAX_HEADER (100u << 20)

/* A validated model id. */
struct fg_model_id {
    char org[FG_SOURCE_ORG_MAX + 1];
    char name[FG_SOURCE_NAME_MAX + 1];
    char rev[FG_SOURCE_REV_MAX + 1];   /* "main" when none was given */
    bool rev_given;
};

/* Defaults: order site,hf-cache,cache,hub; the hub endpoint; ttl, timeout, caps; no dirs. */
void fg_source_opts_init(struct fg_source_opts *o);

/*
 * Fill o (after fg_source_opts_init) from the environment the way
 * huggingface_hub reads it: HF_ENDPOINT, HF_TOKEN, HF_TOKEN_PATH or
 * $HF_HOME/token, HF_HUB_OFFLINE, HF_HOME, HF_HUB_CACHE, XDG_CACHE_HOME
 * (fitgate's cache: $XDG_CACHE_HOME/fitgate, else ~/.cache/fitgate), and
 * fitgate's own FITGATE_MODEL_DIRS (colon list), FITGATE_SITE_CACHE,
 * FITGATE_SOURCE_ORDER, FITGATE_CACHE_TTL (s), FITGATE_HUB_TIMEOUT_MS,
 * FITGATE_ALLOW_HTTP.  The only function of the engine that reads the
 * environment; resolution itself never does.  A bad value is FG_E_INVAL /
 * FG_E_RANGE naming the variable.
 */
int fg_source_opts_from_env(struct fg_source_opts *o, struct fg_err *err);

/* "site,hf-cache,cache,hub" (any subset, any order, no repeats) into o->order. */
int fg_source_set_order(struct fg_source_opts *o, const char *list, struct fg_err *err);

/* Append the directories of a colon-separated list to o->site_dirs. */
int fg_source_add_site_dirs(struct fg_source_opts *o, const char *list, struct fg_err *err);

/*
 * Parse and validate "org/name[@revision]": org and name of [A-Za-z0-9._-],
 * not starting with '-' or '.', no "..", no "--", at most 96 characters;
 * revision of [A-Za-z0-9._-/], not starting with '-', '.' or '/', no "..",
 * no "//", not ending in '/', at most 128.  FG_E_INVAL says which rule.
 */
int fg_source_parse_id(const char *text, struct fg_model_id *out, struct fg_err *err);

/*
 * True when a MODEL argument is to be read from disk rather than resolved
 * as an id: it exists, or it is spelled as a path (starts with '/', '.',
 * '~', or ends in ".json").  An id-shaped name that also exists as a
 * relative directory is the directory, as in transformers' from_pretrained.
 */
bool fg_source_arg_is_path(const char *arg);

/* True when rev is a full commit sha (40 hex digits): such entries never expire. */
bool fg_source_rev_is_commit(const char *rev);

struct fg_source_result {
    enum fg_source_kind kind;
    char *text;                            /* config.json, NUL-terminated; owned */
    size_t len;
    char where[FG_SOURCE_WHERE_MAX];       /* the file or URL it was read from */
    char dir[FG_SOURCE_WHERE_MAX];         /* local repository directory (site dir, HF
                                              snapshot), "" when there is none */
    char commit[FG_SOURCE_REV_MAX + 1];    /* commit sha when known, else "" */
    char note[300];                        /* why a fallback was taken, "" otherwise */
    int64_t age_s;                         /* age of a cache entry; 0 otherwise */
    uint32_t elapsed_ms;                   /* how long the lookup took, the hub's answer
                                              included (for callers sharing its deadline) */
};

/*
 * Resolve id to its config.json text following o->order.  The text is
 * checked to be a JSON object before it is returned or cached (FG_E_PARSE).
 */
int fg_source_resolve(const struct fg_source_opts *o, const struct fg_model_id *id,
                      struct fg_source_result **out, struct fg_err *err);

void fg_source_result_free(struct fg_source_result *r);

/* "site dir", "hf cache", "hub", "cache hit", "stale cache (offline)", "path". */
const char *fg_source_kind_name(enum fg_source_kind kind);

/* ---- repository files (for verify) --------------------------------------- */

struct fg_source_repo;

/*
 * A repository: a local directory (dir, may be NULL), a hub id (id, may be
 * NULL), or both (files missing from the directory are read from the hub,
 * as for an HF cache snapshot holding only config.json).  o is copied.
 */
int fg_source_repo_open(const struct fg_source_opts *o, const char *dir,
                        const struct fg_model_id *id, struct fg_source_repo **out,
                        struct fg_err *err);

void fg_source_repo_free(struct fg_source_repo *r);

/*
 * Read up to len bytes of file at off into buf (*got bytes); *file_size
 * (may be NULL) gets the file's size when known, else 0.  Local files are
 * read with pread, hub files with one HTTP range request.  file is a name
 * inside the repository, validated like a model name (no '/', no "..").
 * FG_E_NOTFOUND when neither the directory nor the hub has it (or offline);
 * *remote tells where it was read from when non-NULL.
 */
int fg_source_repo_read(struct fg_source_repo *r, const char *file, uint64_t off, size_t len,
                        void *buf, size_t *got, uint64_t *file_size, bool *remote,
                        struct fg_err *err);

/* Whole small file (capped at max bytes, FG_E_RANGE over): caller frees *text. */
int fg_source_repo_read_all(struct fg_source_repo *r, const char *file, uint64_t max, char **text,
                            size_t *len, bool *remote, struct fg_err *err);

/*
 * Bound every later hub request of r by one budget of ms from now (0: none; each request
 * still has o->timeout_ms): a request gets what is left of it, and none is made once it
 * is spent (FG_E_TIMEDOUT), so a scan of many shards ends by its deadline.
 */
void fg_source_repo_set_budget(struct fg_source_repo *r, uint32_t ms);

/* Hub requests r has made (redirects inside one not counted). */
unsigned fg_source_repo_requests(const struct fg_source_repo *r);

/* The revision r's hub files come from: the commit once the hub named one, else the id's;
 * "" without an id.  Borrowed, valid while r lives. */
const char *fg_source_repo_rev(const struct fg_source_repo *r);

/* True when the repository can reach the hub (it has an id and is not offline). */
bool fg_source_repo_online(const struct fg_source_repo *r);

/* Validate a file name from an index (shard names): FG_E_INVAL when unsafe. */
int fg_source_check_file(const char *file, struct fg_err *err);

/* Internal: the step's name in a source order ("site", "hf-cache", "cache", "hub"). */
const char *fg__source_step_name(enum fg_source_step s);

/* Internal: milliseconds on the monotonic clock the lookup's deadlines are counted on. */
uint64_t fg__source_now_ms(void);

#endif
